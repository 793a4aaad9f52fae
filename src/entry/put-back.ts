/**
 * The order of a put-back of a queue file deleted under `serve` (delivery-thread.ts): its failure
 * handled, then the thread ended once if it closed its queue. `end` runs after the handling, not
 * inside it: an `end` that rejects (closing the egress) was taken for the put-back's failure,
 * told as a copy not moved, and run a second time.
 */
export async function putBack(steps: {
  /** Copies the queue, closes it and renames the copy into place. */
  readonly restore: () => Promise<void>;
  /** Whether the put-back closed the queue before it failed: the thread ends then. */
  readonly closed: () => boolean;
  /** A failure after the queue closed: the copy waits for the next thread. */
  readonly notMoved: (e: unknown) => void;
  /** A failure before it: the thread goes on, to try again. */
  readonly failed: (e: unknown) => void;
  readonly end: () => Promise<void>;
}): Promise<void> {
  try {
    await steps.restore();
  } catch (e) {
    if (!steps.closed()) {
      steps.failed(e);
      return;
    }
    steps.notMoved(e);
  }
  await steps.end();
}

/**
 * Message ids a long-running consumer remembers, each with what was done to it, at most
 * `MAX_REMEMBERED_IDS`: one more forgets the one remembered first. For messages settled whose
 * delete then failed (SQS), so that one coming back is not delivered again; bounded, so that a
 * consumer running for months does not grow with them.
 */
export const MAX_REMEMBERED_IDS = 1_000;

export class RememberedIds<V> {
  readonly #done = new Map<string, V>();

  get(id: string): V | undefined {
    return this.#done.get(id);
  }

  remember(id: string, done: V): void {
    this.#done.set(id, done);
    if (this.#done.size > MAX_REMEMBERED_IDS) this.#done.delete(this.#done.keys().next().value as string);
  }

  forget(id: string): void {
    this.#done.delete(id);
  }
}

/**
 * Receives that sent nothing and that the queue could not settle as such, by message id: a dead
 * letter made before any send (its sink gone, a refusal before connecting) whose send to the DLQ
 * failed, a hold whose copy was not sent. The message comes back with that receive counted in
 * its attempts (SQS's receive count, a SQLite lease, Cloudflare's `attempts`), though nothing was
 * sent; `sends` takes such receives off again. Kept in memory, at most MAX_REMEMBERED_IDS: a
 * message that comes back to another process or container still counts them.
 *
 * Why the consumers hold it, not the queue adapters (which define `attempts`): two of its three
 * users, the Lambda SQS handler and the Worker's queue consumer, get their messages from the
 * runtime (an SQS event's records, a Cloudflare batch), not from `Queue.receive`, so an adapter
 * could not take the receives off their attempts; the pull consumer (app/consumer.ts) uses it
 * the same way, rather than a second mechanism for one of the three.
 */
export class UnsentReceives {
  readonly #counts = new RememberedIds<number>();

  /** The sends of a message received with `attempts`: less its receives noted here, at least 1 (this one). */
  sends(id: string, attempts: number): number {
    return Math.max(1, attempts - (this.#counts.get(id) ?? 0));
  }

  /** One more receive of this message that sent nothing, though it will count when it comes back. */
  add(id: string): void {
    this.#counts.remember(id, (this.#counts.get(id) ?? 0) + 1);
  }

  /** The message is gone (acked, dead-lettered): a later one with this id starts from its own count. */
  forget(id: string): void {
    this.#counts.forget(id);
  }
}

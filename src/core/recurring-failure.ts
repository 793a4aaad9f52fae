/**
 * A failure that recurs on a timer (a queue receive every poll, a journal read every second, a
 * gauge every 5 s) told when it starts, when its text changes, and then once every `everyMs`
 * with how many times it recurred unlogged meanwhile; and its end once. A damaged queue file
 * was logged five times a second, for as long as `serve` ran, the cause lost among the lines.
 */
export class RecurringFailure {
  private error: string | undefined;
  private loggedAt = 0;
  private unlogged = 0;
  private failures = 0;

  constructor(
    private readonly everyMs: number,
    /** A monotonic clock in milliseconds. */
    private readonly now: () => number,
  ) {}

  /** This failure happened: whether to log it now, and how many like it went unlogged before it. */
  failed(error: string): { readonly log: boolean; readonly repeated: number } {
    this.failures++;
    const at = this.now();
    if (error !== this.error || at - this.loggedAt >= this.everyMs) {
      const repeated = error === this.error ? this.unlogged : 0;
      this.error = error;
      this.loggedAt = at;
      this.unlogged = 0;
      return { log: true, repeated };
    }
    this.unlogged++;
    return { log: false, repeated: this.unlogged };
  }

  /** It worked: how many times it had failed in a row, once after a failure, else undefined. */
  worked(): number | undefined {
    if (this.failures === 0) return undefined;
    const failures = this.failures;
    this.error = undefined;
    this.unlogged = 0;
    this.failures = 0;
    return failures;
  }
}

/** How often a failure that goes on is logged again (`RecurringFailure`). */
export const RECURRING_FAILURE_LOG_MS = 60_000;

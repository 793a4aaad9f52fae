import type { Logger, LogLevel } from "./ports.js";

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

/** A RecurringFailure told to a logger: how the failure and its end are said. */
export interface ToldFailure {
  /** It failed with `error`: `message` logged with the error and `fields` when it is time to. */
  failed(error: string, fields?: Record<string, unknown>): void;
  /** It worked: `recovered` logged once after failures, with how many there were. */
  worked(fields?: Record<string, unknown>): void;
}

/** A RecurringFailure logged at `level` as `message`, and its end at info as `recovered`. */
export function toldFailure(
  logger: Logger,
  level: LogLevel,
  message: string,
  recovered: string,
  now: () => number,
): ToldFailure {
  const failures = new RecurringFailure(RECURRING_FAILURE_LOG_MS, now);
  return {
    failed(error, fields) {
      const { log, repeated } = failures.failed(error);
      if (log) logger.log(level, message, { ...fields, error, ...(repeated > 0 && { repeated }) });
    },
    worked(fields) {
      const count = failures.worked();
      if (count !== undefined) logger.log("info", recovered, { ...fields, failures: count });
    },
  };
}

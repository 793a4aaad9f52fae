/**
 * How a dead letter is told, wherever it is made: the consumer's (a sink that refused a job for
 * good, a message that is no job) and the SQLite queue's own (a stored body that is not JSON,
 * buried when leased). No job is dropped without this log line and this counter.
 */
import type { Logger, Metrics } from "../core/ports.js";

export function reportDeadLetter(
  deps: { readonly logger: Logger; readonly metrics?: Metrics | undefined },
  fields: { readonly sink: string } & Record<string, unknown>,
  reason: string,
): void {
  deps.metrics?.increment("hookgate_dead_lettered_total", { sink: fields.sink });
  deps.logger.log("error", "delivery dead-lettered", { ...fields, reason });
}

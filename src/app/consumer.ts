/**
 * The consumer for pull queues (SQLite on Node, SQS from a long-running process): receive a
 * batch, deliver each job, and ack, retry or dead-letter it. `stop()` drains: it stops taking
 * new batches and waits for the jobs in hand.
 */
import type { DeliveryJob } from "../core/delivery.js";
import type { Logger, Metrics } from "../core/ports.js";
import type { Queue, ReceivedMessage } from "../core/queue.js";
import type { Deliverer } from "./deliver.js";

export interface ConsumerOptions {
  readonly batchSize?: number;
  /** How long a received job stays hidden; longer than the slowest delivery (egress timeout + pacing). */
  readonly visibilityMs?: number;
  /** Pause between polls when the queue is empty. */
  readonly idleMs?: number;
}

export interface Consumer {
  stop(): Promise<void>;
}

export function startConsumer(
  deps: { queue: Queue<DeliveryJob>; deliverer: Deliverer; logger: Logger; metrics?: Metrics | undefined },
  options: ConsumerOptions = {},
): Consumer {
  const batchSize = options.batchSize ?? 10;
  const visibilityMs = options.visibilityMs ?? 60_000;
  const idleMs = options.idleMs ?? 200;
  let running = true;
  let wake: (() => void) | undefined;

  async function handle(message: ReceivedMessage<DeliveryJob>): Promise<void> {
    const job = message.body;
    let outcome: Awaited<ReturnType<Deliverer["deliver"]>>;
    try {
      outcome = await deps.deliverer.deliver(job, message.attempts);
    } catch (e) {
      outcome = {
        kind: "retry",
        delayMs: 5000,
        reason: `internal error: ${e instanceof Error ? e.message : String(e)}`,
      };
    }
    const fields = {
      job: job.id,
      sink: job.sink,
      event: job.notification.eventName,
      attempts: message.attempts,
    };
    try {
      await settle(message, outcome, fields);
    } catch (e) {
      // The queue could not record the outcome (a network blip to SQS, a busy SQLite file): the
      // lease expires and the job comes back, so log it and keep consuming.
      deps.logger.log("error", "could not settle a delivery job; it will be redelivered", {
        ...fields,
        outcome: outcome.kind,
        error: e instanceof Error ? e.message : String(e),
      });
    }
  }

  async function settle(
    message: ReceivedMessage<DeliveryJob>,
    outcome: Awaited<ReturnType<Deliverer["deliver"]>>,
    fields: Record<string, unknown>,
  ): Promise<void> {
    const sink = message.body.sink;
    if (outcome.kind === "ack") {
      await deps.queue.ack(message);
      deps.metrics?.increment("hookgate_delivered_total", { sink });
      deps.logger.log("info", "delivered", fields);
    } else if (outcome.kind === "retry") {
      await deps.queue.retry(message, outcome.delayMs, outcome.reason);
      deps.metrics?.increment("hookgate_retried_total", { sink });
      deps.logger.log("warn", "delivery failed; will retry", {
        ...fields,
        retryInMs: outcome.delayMs,
        reason: outcome.reason,
      });
    } else {
      await deps.queue.deadLetter(message, outcome.reason);
      deps.metrics?.increment("hookgate_dead_lettered_total", { sink });
      deps.logger.log("error", "delivery dead-lettered", { ...fields, reason: outcome.reason });
    }
  }

  const loop = (async () => {
    while (running) {
      let batch: ReceivedMessage<DeliveryJob>[] = [];
      try {
        batch = await deps.queue.receive(batchSize, visibilityMs);
      } catch (e) {
        deps.logger.log("error", "queue receive failed", {
          error: e instanceof Error ? e.message : String(e),
        });
      }
      if (batch.length > 0) {
        await Promise.all(batch.map(handle));
        continue;
      }
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, idleMs);
        wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    }
  })();

  return {
    async stop() {
      running = false;
      wake?.();
      await loop;
    },
  };
}

/**
 * The consumer for pull queues (SQLite on Node, SQS from a long-running process): keep up to
 * `batchSize` jobs in flight, deliver each, and ack, retry or dead-letter it on its own.
 * `stop()` drains: it stops taking new jobs and waits for the jobs in hand. A dead-lettered or held
 * job whose message stayed on the queue (`CopySentError`, SQS) is not delivered again when it
 * comes back.
 */
import { type DeliveryJob, deadLetterAttempts, isDeliveryJob, thrownOutcome } from "../core/delivery.js";
import { errorMessage } from "../core/errors.js";
import type { Logger, Metrics } from "../core/ports.js";
import { isCopySent, type Queue, type ReceivedMessage } from "../core/queue.js";
import { type ToldFailure, toldFailure } from "../core/recurring-failure.js";
import { RememberedIds, UnsentReceives } from "../core/remembered-ids.js";
import { reportDeadLetter } from "./dead-letter.js";
import type { Deliverer } from "./deliver.js";

const NOT_A_JOB =
  "the stored message is not a delivery job (an id, a sink and a notification); dead-lettered as stored";

export interface ConsumerOptions {
  /** Jobs in flight at once. */
  readonly batchSize?: number;
  /**
   * Jobs of one sink in flight at once (half of batchSize by default): a sink that hangs holds
   * at most this many slots, and the others keep the rest. Needs a queue that can skip a
   * group when it leases (SQLite, memory); on SQS it is not enforced.
   */
  readonly perSink?: number;
  /** How long a received job stays hidden; longer than the slowest delivery (egress timeout + pacing). */
  readonly visibilityMs?: number;
  /** Pause between polls when the queue is empty. */
  readonly idleMs?: number;
}

/** A failing receive logged as "queue receive failed", and its end, as `toldFailure` tells them. */
export function receiveFailureLog(logger: Logger, monotonic: () => number): ToldFailure {
  return toldFailure(logger, "error", "queue receive failed", "queue receive works again", monotonic);
}

export interface Consumer {
  /** New jobs are queued: look now rather than at the next poll. */
  poke(): void;
  stop(): Promise<void>;
}

export function startConsumer(
  deps: {
    queue: Queue<DeliveryJob>;
    deliverer: Deliverer;
    logger: Logger;
    metrics?: Metrics | undefined;
    /** A monotonic clock in ms, for how often a failing receive is logged; performance.now() by default. */
    monotonic?: () => number;
    /**
     * How a failing receive, and its end, are told: by default `receiveFailureLog`. `serve`'s
     * delivery thread adds what to do, and tells /healthz.
     */
    receiveFailures?: ToldFailure;
  },
  options: ConsumerOptions = {},
): Consumer {
  const batchSize = options.batchSize ?? 10;
  const visibilityMs = options.visibilityMs ?? 60_000;
  const idleMs = options.idleMs ?? 200;
  let running = true;
  let wake: (() => void) | undefined;
  /** Something may be due that the last receive did not see: jobs queued since, or a freed slot. */
  let look = false;
  /** The last receive came back short: nothing else was due outside the sinks it skipped. */
  let dry = false;
  let skipped: ReadonlySet<string> = new Set();
  const lookAgain = () => {
    look = true;
    wake?.();
  };
  /**
   * Messages dead-lettered or held that stayed on the queue (SQS: the send of the dead letter or
   * of the held copy went through, the delete did not), by message id (SQS's MessageId; else the
   * job's), to what was done. When one comes back it is deleted unsent, the delete's second try,
   * as Lambda's own delete is the Lambda handler's. A replay of its dead letter, or the held copy,
   * is another message and is delivered: keyed by job id, it was removed unsent whenever the
   * failed delete had in fact gone through (its answer lost).
   */
  const copied = new RememberedIds<"dead-lettered" | "held">();
  const messageKey = (message: ReceivedMessage<DeliveryJob>) => message.messageId ?? message.id;
  /** Receives that sent nothing and that the queue could not record as such (`UnsentReceives`). */
  const unsent = new UnsentReceives();

  /**
   * Never rejects (a rejected job would be an unhandled rejection, which ends Node): a queue call
   * outside a delivery's settle that fails is logged, and the lease brings the message back. Two
   * reach it: the dead letter of a message that is no job, and the delete of a message already
   * dead-lettered or held, back (SQS failing past a visibility timeout).
   */
  async function handle(message: ReceivedMessage<DeliveryJob>): Promise<void> {
    try {
      await handleJob(message);
    } catch (e) {
      deps.logger.log("error", "could not handle a delivery job; it will be redelivered", {
        job: message.id,
        attempts: message.attempts,
        error: errorMessage(e),
      });
    }
  }

  async function handleJob(received: ReceivedMessage<DeliveryJob>): Promise<void> {
    const key = messageKey(received);
    const done = copied.get(key);
    if (done) {
      await deps.queue.ack(received);
      copied.forget(key);
      unsent.forget(key);
      deps.logger.log("warn", `job already ${done}; removed from the queue, not delivered again`, {
        job: received.id,
        attempts: received.attempts,
      });
      return;
    }
    const message = { ...received, attempts: unsent.sends(key, received.attempts) };
    const job: unknown = message.body;
    if (!isDeliveryJob(job)) {
      // A stored body that parses but is no job (a journal line from elsewhere) can never be
      // delivered, and would come back with every lease: dead-lettered as it is, with no attempt,
      // as it was never sent (on this lease or an earlier one left unsettled).
      const outcome = { kind: "dead", reason: NOT_A_JOB } as const;
      await settle({ ...message, attempts: 0 }, outcome, { job: message.id, sink: "unknown", attempts: 0 });
      return;
    }
    let outcome: Awaited<ReturnType<Deliverer["deliver"]>>;
    try {
      outcome = await deps.deliverer.deliver(job, message.attempts, {
        holds: message.holds,
        interrupted: message.interrupted,
      });
    } catch (e) {
      outcome = thrownOutcome(message.attempts, e);
    }
    const fields = {
      job: job.id,
      sink: job.sink,
      event: job.notification.eventName,
      attempts: message.attempts,
    };
    try {
      await settle(message, outcome, fields);
      // Gone from the queue: a replay of its dead letter is another message.
      if (outcome.kind !== "retry") unsent.forget(key);
    } catch (e) {
      // The queue could not record the outcome (a network blip to SQS, a SQLite file locked, or on a
      // full disk, until the lease ended: sqlite.ts tries again until then): the lease expires and
      // the job comes back, so log it and keep consuming. Back, it counts this
      // receive as an attempt: one that sent nothing is taken off again then.
      if (outcome.kind !== "ack" && outcome.unsent) unsent.add(key);
      deps.logger.log("error", "could not settle a delivery job; it will be redelivered", {
        ...fields,
        outcome: outcome.kind,
        error: errorMessage(e),
      });
    }
  }

  async function settle(
    message: ReceivedMessage<DeliveryJob>,
    outcome: Awaited<ReturnType<Deliverer["deliver"]>>,
    fields: { readonly sink: string } & Record<string, unknown>,
  ): Promise<void> {
    const sink = fields.sink;
    if (outcome.kind === "ack") {
      if (!(await deps.queue.ack(message))) return stale(fields, outcome);
      deps.metrics?.increment("hookgate_delivered_total", { sink });
      deps.logger.log("info", "delivered", fields);
    } else if (outcome.kind === "retry" && outcome.unsent) {
      // Nothing was sent: held, not counted as an attempt.
      let deleteFailed: string | undefined;
      try {
        if (!(await deps.queue.hold(message, outcome.delayMs, outcome.reason))) return stale(fields, outcome);
      } catch (e) {
        if (!isCopySent(e, "held copy")) throw e;
        // The copy is on the queue but the message comes back: held now, as made.
        copied.remember(messageKey(message), "held");
        deleteFailed = `${errorMessage(e)}; removed when it comes back`;
      }
      deps.metrics?.increment("hookgate_held_total", { sink });
      deps.logger.log("info", "delivery held; not sent", {
        ...fields,
        // The sends: the queue gave this receive back.
        attempts: Math.max(0, message.attempts - 1),
        ...(deleteFailed !== undefined && { deleteFailed }),
        holds: (message.holds ?? 0) + 1,
        retryInMs: outcome.delayMs,
        reason: outcome.reason,
      });
    } else if (outcome.kind === "retry") {
      if (!(await deps.queue.retry(message, outcome.delayMs, outcome.reason))) return stale(fields, outcome);
      deps.metrics?.increment("hookgate_retried_total", { sink });
      deps.logger.log("warn", "delivery failed; will retry", {
        ...fields,
        retryInMs: outcome.delayMs,
        reason: outcome.reason,
      });
    } else {
      // The sends: a job dead-lettered past MAX_HOLDS was not sent this time either.
      const attempts = deadLetterAttempts(outcome, message.attempts);
      const dead = { ...fields, attempts };
      try {
        if (!(await deps.queue.deadLetter({ ...message, attempts }, outcome.reason)))
          return stale(dead, outcome);
      } catch (e) {
        if (!isCopySent(e, "dead letter")) throw e;
        // The dead letter is in but the message comes back: logged and counted now, as made.
        copied.remember(messageKey(message), "dead-lettered");
        const deleteFailed = `${errorMessage(e)}; removed when it comes back`;
        return reportDeadLetter(deps, { ...dead, deleteFailed }, outcome.reason);
      }
      reportDeadLetter(deps, dead, outcome.reason);
    }
  }

  /**
   * The queue recorded nothing: the job's lease ran out during the delivery and it was received
   * again, so the newer delivery's outcome stands and counts, not this one's. Logged once, with
   * what this delivery came to, and counted in no delivered, retried or dead-lettered total.
   */
  function stale(fields: Record<string, unknown>, outcome: Awaited<ReturnType<Deliverer["deliver"]>>): void {
    deps.logger.log(
      "warn",
      "the job's lease ran out before its outcome was recorded; the newer delivery's stands",
      {
        ...fields,
        outcome: outcome.kind,
        ...(outcome.kind !== "ack" && { reason: outcome.reason }),
      },
    );
  }

  // Up to batchSize jobs in flight, each settled on its own: a sink that hangs holds one slot
  // for its timeout, not the whole batch, and a freed slot is filled at once.
  const inFlight = new Set<Promise<void>>();
  const receiveFailures =
    deps.receiveFailures ?? receiveFailureLog(deps.logger, deps.monotonic ?? (() => performance.now()));
  const perSink = Math.max(1, options.perSink ?? Math.ceil(batchSize / 2));
  const bySink = new Map<string, number>();
  const saturated = () => [...bySink].filter(([, n]) => n >= perSink).map(([sink]) => sink);

  const loop = (async () => {
    while (running) {
      // Never more jobs than could all be for the busiest sink still under its cap, so that no
      // receive takes a sink past perSink.
      const busiest = Math.max(0, ...[...bySink.values()].filter((n) => n < perSink));
      const free = batchSize - inFlight.size;
      // A queue that cannot skip groups (SQS) cannot enforce the cap: there limiting a receive to
      // one sink's room would only halve each receive, so it is asked for every free slot.
      const room = deps.queue.skipsGroups ? Math.min(free, perSink - busiest) : free;
      let batch: ReceivedMessage<DeliveryJob>[] = [];
      look = false;
      const skip = saturated();
      skipped = new Set(skip);
      if (room > 0) {
        try {
          batch = await deps.queue.receive(room, visibilityMs, skip);
          receiveFailures.worked();
        } catch (e) {
          // A queue that fails every receive (a damaged file, a network down) is told when it
          // starts and then once a minute, not at every poll.
          receiveFailures.failed(errorMessage(e));
        }
      }
      // On a queue that can skip groups (SQLite, memory) a receive is exact: a short one found
      // nothing more that is due outside the sinks it skipped. SQS may answer short with more
      // waiting, so there every freed slot asks again.
      dry = deps.queue.skipsGroups && room > 0 && batch.length < room;
      for (const message of batch) {
        const sink = typeof message.body?.sink === "string" ? message.body.sink : "";
        bySink.set(sink, (bySink.get(sink) ?? 0) + 1);
        const job: Promise<void> = handle(message).finally(() => {
          inFlight.delete(job);
          const count = bySink.get(sink) ?? 1;
          if (count > 1) bySink.set(sink, count - 1);
          else bySink.delete(sink);
          // A freed slot is worth a receive when the last one came back full, or skipped this
          // sink (its due jobs were left). After a short one, new jobs come with a poke and
          // retries that fall due with the idle poll: a receive per settled job, each a commit
          // on SQLite, found nothing.
          if (!dry || skipped.has(sink)) lookAgain();
        });
        inFlight.add(job);
      }
      // A full batch means more may be waiting; otherwise wait for a poll or a freed slot.
      if (room > 0 && batch.length === room) continue;
      // Jobs queued or slots freed while this receive ran: look again at once.
      if (look) continue;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, idleMs);
        wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      wake = undefined;
    }
    await Promise.all(inFlight);
  })();

  return {
    poke: lookAgain,
    async stop() {
      running = false;
      wake?.();
      await loop;
    },
  };
}

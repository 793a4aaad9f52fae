/**
 * The consumer half of Cloudflare Queues (cloudflare.ts has the producer and the envelope): the
 * Worker's `queue()` handler settles each pushed message with the deliverer's outcome. A module
 * of its own, loaded by that handler only: a `fetch` never needs it (the 64 KiB main module).
 */
import type { Deliverer, DeliveryOutcome } from "../../app/deliver.js";
import {
  type DeliveryJob,
  deadLetterAttempts,
  type JobEnvelope,
  readJobEnvelope,
  SCHEDULE_SHORTENED,
  thrownOutcome,
} from "../../core/delivery.js";
import { isRecord } from "../../core/json-object.js";
import type { Logger, Metrics } from "../../core/ports.js";
import { UnsentReceives } from "../../core/remembered-ids.js";
import {
  CLOUDFLARE_LIMITS,
  type DeadLetterEnvelope,
  delaySecondsFor,
  type Envelope,
  fitDeliveryJob,
  jsonBytes,
  type PushedBatch,
  type PushedMessage,
  type QueueProducerBinding,
} from "./cloudflare.js";

export interface ConsumerDeps {
  readonly deliverer: Deliverer;
  /**
   * The jobs queue's producer binding (HOOKGATE_QUEUE): a held job goes back on it as a copy
   * carrying its counts. Without it a held job is retried, which Cloudflare counts as an attempt
   * (taken off again should it come back to this isolate: `unsent`).
   */
  readonly jobs?: QueueProducerBinding<Envelope<DeliveryJob>> | undefined;
  /** The dead-letter queue's producer binding (HOOKGATE_DLQ). */
  readonly deadLetters: QueueProducerBinding<DeadLetterEnvelope<unknown>>;
  readonly logger: Logger;
  readonly metrics?: Metrics | undefined;
  readonly now: () => number;
}

/** Keeps a dead letter well inside the message limit whatever the error text. */
const MAX_ERROR_CHARS = 2000;
/** When the DLQ itself refuses, try the whole job again later; max_retries then moves it. */
const DLQ_FAILED_RETRY_SECONDS = 60;

/**
 * Why a message is back past its sink's last attempt (`Deliverer.deliver`'s `interrupted`, which
 * dead-letters it unsent, as `serve` does a job its delivery thread died with, and the Lambda
 * consumer a record back past it): the delivery of that attempt recorded no outcome. Sent again,
 * a job that ends the Worker every time failed its batch at each delivery (the batch's unsettled
 * messages back too, each an attempt spent) until Cloudflare moved it after `max_retries`,
 * without a reason. A dead letter the DLQ refused at the last attempt comes back so too: its
 * sink's error is in the `dead-letter send failed` line. So does a job whose sink's schedule was
 * shortened while it waited for a retry, which nothing on the message tells apart
 * (SCHEDULE_SHORTENED).
 */
const LAST_ATTEMPT_UNSETTLED = `its last attempt recorded no outcome (the Worker ended while delivering it: out of memory, a crash, its CPU time limit; or the queue call that settles it failed), ${SCHEDULE_SHORTENED}`;

/**
 * Jobs delivered at once. An invocation holds at most 6 connections open (Cloudflare's limit), and
 * a fetch past them waits for one with its time limit running: with all of a batch's 10 started
 * together, 6 sinks that hang took every connection, and the jobs behind them timed out unsent,
 * an attempt spent on a sink that was never called. A job may hold two more for its host's A and
 * AAAA look-ups (workers-fetch.ts), so 4 at once leave room for them.
 */
export const DELIVERIES_AT_ONCE = 4;

/**
 * Messages this isolate retried after a delivery that sent nothing (a dead letter made before any
 * send that the DLQ refused, a held job whose copy was not sent): Cloudflare counts that delivery
 * in `attempts`, which is taken off again when the message comes back here (`UnsentReceives`).
 * Per isolate, as the consumer is made per batch; one that comes back to another counts it.
 */
const unsent = new UnsentReceives();

/**
 * Settles every message of a pushed batch on its own (`ack` / `retry` per message, never a
 * thrown error, which would retry the whole batch): delivered → ack; retry → retry with the
 * outcome's delay; dead → sent to the DLQ with its error, then ack.
 */
export function createCloudflareConsumer(deps: ConsumerDeps): {
  consume(batch: PushedBatch): Promise<void>;
} {
  async function settle(message: PushedMessage): Promise<void> {
    const envelope = readJobEnvelope(message.body);
    if (typeof envelope === "string") return deadLetterNoJob(message, envelope, deps);
    const job = envelope.body;
    // Cloudflare counts this message's deliveries; a held job's copy carries its earlier sends.
    const attempts = unsent.sends(message.id, envelope.sent + message.attempts);
    const holds = envelope.holds;
    const fields = {
      job: job.id,
      sink: job.sink,
      event: job.notification.eventName,
      attempts,
    };
    let outcome: DeliveryOutcome;
    try {
      outcome = await deps.deliverer.deliver(job, attempts, { holds, interrupted: LAST_ATTEMPT_UNSETTLED });
    } catch (e) {
      outcome = thrownOutcome(attempts, e);
    }
    if (
      outcome.kind === "retry" &&
      outcome.unsent &&
      (await holdCopy(envelope, attempts, holds, outcome.delayMs))
    ) {
      message.ack();
      deps.metrics?.increment("hookgate_held_total", { sink: job.sink });
      deps.logger.log("info", "delivery held; not sent", {
        ...fields,
        // The sends: the copy does not count this delivery.
        attempts: attempts - 1,
        holds: holds + 1,
        retryInSeconds: delaySecondsFor(outcome.delayMs),
        reason: outcome.reason,
      });
    } else if (outcome.kind === "ack") {
      message.ack();
      unsent.forget(message.id);
      deps.metrics?.increment("hookgate_delivered_total", { sink: job.sink });
      deps.logger.log("info", "delivered", fields);
    } else if (outcome.kind === "retry") {
      const delaySeconds = delaySecondsFor(outcome.delayMs);
      message.retry({ delaySeconds });
      // A hold whose copy was not sent: this delivery sent nothing.
      if (outcome.unsent) unsent.add(message.id);
      deps.metrics?.increment("hookgate_retried_total", { sink: job.sink });
      deps.logger.log("warn", "delivery failed; will retry", {
        ...fields,
        retryInSeconds: delaySeconds,
        reason: outcome.reason,
      });
    } else {
      // The sends: a job dead-lettered past MAX_HOLDS was not sent this time either.
      const dead = { ...fields, attempts: deadLetterAttempts(outcome, attempts) };
      await moveToDeadLetters(
        deps,
        message,
        envelope,
        outcome.reason,
        dead,
        job.sink,
        outcome.unsent === true,
      );
    }
  }

  /**
   * Sends a held job back as a new message carrying its sends and holds, so the hold spends no
   * attempt (Cloudflare's `attempts` only grows, and `max_retries` would move the message).
   * Whether it was sent: if not, the caller retries the message, which Cloudflare counts as an
   * attempt (`unsent` takes it off again in this isolate). The message is acked only after the
   * send: a Worker that dies between the two leaves both, a copy delivered twice at worst (the
   * stable job id absorbs it), never neither.
   */
  async function holdCopy(
    envelope: JobEnvelope,
    attempts: number,
    holds: number,
    delayMs: number,
  ): Promise<boolean> {
    if (!deps.jobs) return false;
    const copy: JobEnvelope = { id: envelope.id, body: envelope.body, sent: attempts - 1, holds: holds + 1 };
    const delaySeconds = delaySecondsFor(delayMs);
    try {
      await deps.jobs.send(copy, { contentType: "json", ...(delaySeconds > 0 ? { delaySeconds } : {}) });
      return true;
    } catch (e) {
      deps.logger.log("error", "could not hold a delivery job on the queue; retrying it instead", {
        job: envelope.id,
        error: describe(e),
      });
      return false;
    }
  }

  return {
    async consume(batch) {
      await inLanes(leaveDeadLetters(batch, deps.logger), DELIVERIES_AT_ONCE, settle);
    },
  };
}

/** Runs `run` on each of `items`, at most `width` at once, each lane taking the next when done. */
async function inLanes<T>(
  items: readonly T[],
  width: number,
  run: (item: T) => Promise<void>,
): Promise<void> {
  let next = 0;
  const lane = async () => {
    while (next < items.length) await run(items[next++] as T);
  };
  await Promise.all(Array.from({ length: Math.min(width, items.length) }, lane));
}

/**
 * Whether a message is a dead letter this consumer wrote (`deadLetter`: its `error` and
 * `failedAt` beside the envelope). A job's envelope carries neither.
 */
function isDeadLetter(body: unknown): boolean {
  return isRecord(body) && typeof body.error === "string" && typeof body.failedAt === "number";
}

/**
 * Dead letters pushed back to the Worker, from a queue it writes them to and also consumes (the
 * DLQ listed under `[[queues.consumers]]`, or HOOKGATE_DLQ bound to the jobs queue), are neither
 * delivered nor dead-lettered again: a job's letter read as the job, went to its sink with a new
 * schedule and, failing, to the DLQ again, for ever; one that is no job went back at once, wrapped
 * in one more letter each turn. Acked, a letter would be lost, so each is retried with the longest
 * delay (12 h), left on its queue for that consumer's `max_retries` turns, and the batch logs the
 * setting to fix. Returns the batch's other messages.
 */
function leaveDeadLetters(batch: PushedBatch, logger: Logger): readonly PushedMessage[] {
  const letters = batch.messages.filter((m) => isDeadLetter(m.body));
  if (letters.length === 0) return batch.messages;
  const delaySeconds = CLOUDFLARE_LIMITS.maxDelaySeconds;
  for (const message of letters) message.retry({ delaySeconds });
  logger.log("error", "dead letters came back to the Worker; left on their queue, not delivered again", {
    queue: batch.queue,
    letters: letters.length,
    retryInSeconds: delaySeconds,
    fix: `remove the [[queues.consumers]] entry of "${batch.queue}" from wrangler.toml (read dead letters with an HTTP pull consumer), or bind HOOKGATE_DLQ to a queue this Worker does not consume`,
  });
  return batch.messages.filter((m) => !letters.includes(m));
}

/** What dead-lettering needs of the consumer's deps. */
type DeadLetterDeps = Pick<ConsumerDeps, "deadLetters" | "logger" | "metrics" | "now">;

/** `attempts` counts the sends, a held job's earlier copies' too. */
async function deadLetter(
  deps: DeadLetterDeps,
  envelope: Envelope<unknown>,
  attempts: number,
  error: string,
) {
  const letter = {
    id: envelope.id,
    attempts,
    error: error.slice(0, MAX_ERROR_CHARS),
    failedAt: deps.now(),
  };
  const fits = (body: unknown) => jsonBytes({ ...letter, body }) <= CLOUDFLARE_LIMITS.messageBytes;
  // A job has its longest strings cut; a body that is no job, its text (core/delivery.ts).
  const body = fits(envelope.body) ? envelope.body : fitDeliveryJob(envelope.body as DeliveryJob, fits);
  await deps.deadLetters.send({ ...letter, body }, { contentType: "json" });
}

/**
 * A message that is not a job's envelope: no delivery, and no policy, can make it one, so it is
 * dead-lettered at once, as it came (`storable`), with why (`readJobEnvelope`'s `problem`, worded
 * as the Lambda consumer words it).
 */
function deadLetterNoJob(message: PushedMessage, problem: string, deps: DeadLetterDeps): Promise<void> {
  const { body, note } = storable(message.body);
  const reason = `not a delivery job: ${problem}${note ? ` (${note})` : ""}`;
  // Never sent, on this delivery or an earlier one (the DLQ refused it): no attempt.
  return moveToDeadLetters(deps, message, { id: message.id, body }, reason, {
    message: message.id,
    attempts: 0,
  });
}

/** `fields` are the log line's, its `attempts` the sends the dead letter records. */
async function moveToDeadLetters(
  deps: DeadLetterDeps,
  message: PushedMessage,
  envelope: Envelope<unknown>,
  reason: string,
  fields: { readonly attempts: number; readonly [field: string]: unknown },
  sink = "unknown",
  sentNothing = false,
): Promise<void> {
  try {
    await deadLetter(deps, envelope, fields.attempts, reason);
  } catch (e) {
    message.retry({ delaySeconds: DLQ_FAILED_RETRY_SECONDS });
    if (sentNothing) unsent.add(message.id);
    deps.metrics?.increment("hookgate_dead_letter_failed_total", { sink });
    deps.logger.log("error", "dead-letter send failed; the job will be tried again", {
      ...fields,
      reason,
      error: describe(e),
    });
    return;
  }
  message.ack();
  unsent.forget(message.id);
  deps.metrics?.increment("hookgate_dead_lettered_total", { sink });
  deps.logger.log("error", "delivery dead-lettered", { ...fields, reason });
}

/**
 * While the policy is broken, jobs wait for a valid one: sent to the queue again with a delay, as a
 * copy carrying the sends and holds, and acked, rather than retried. Cloudflare counts every
 * redelivery in `attempts`, which the sink's retry schedule reads, and moves a message to the
 * DLQ after `max_retries` (25: about two hours of 300 s retries), so retries would spend a job's
 * schedule without one delivery attempt. A job whose send fails is retried as before (its
 * delivery then noted in `unsent`, as it sent nothing). A message that is not a job's envelope
 * needs no policy: dead-lettered at once with why, as with a valid one (retried, it came back
 * every 5 minutes until Cloudflare moved it after `max_retries`, without a reason).
 */
export async function holdForPolicy(
  batch: PushedBatch,
  deps: DeadLetterDeps & { readonly jobs: QueueProducerBinding<Envelope<DeliveryJob>> | undefined },
  delaySeconds: number,
): Promise<void> {
  const { jobs: jobsQueue, logger } = deps;
  const jobs: { readonly message: PushedMessage; readonly envelope: JobEnvelope }[] = [];
  const others: { readonly message: PushedMessage; readonly problem: string }[] = [];
  for (const message of leaveDeadLetters(batch, logger)) {
    const envelope = readJobEnvelope(message.body);
    if (typeof envelope === "string") others.push({ message, problem: envelope });
    else jobs.push({ message, envelope });
  }
  await Promise.all(others.map(({ message, problem }) => deadLetterNoJob(message, problem, deps)));
  // One send per job: a send split into several batches could fail part way, and a job sent
  // again and also retried would be delivered twice. The copy carries the job's sends (none
  // this time) and its holds, as a held job's does: a wait for the policy is neither.
  const resent = new Set<PushedMessage>();
  for (const { message, envelope } of jobs) {
    if (!jobsQueue) break;
    // Less the deliveries of earlier holds whose copy was not sent (`unsent`).
    const sent = unsent.sends(message.id, envelope.sent + message.attempts) - 1;
    const copy: JobEnvelope = { ...envelope, sent };
    try {
      await jobsQueue.send(copy, { contentType: "json", delaySeconds });
      resent.add(message);
    } catch (e) {
      logger.log("error", "could not hold a delivery job on the queue; retrying it instead", {
        queue: batch.queue,
        job: envelope.id,
        error: describe(e),
      });
    }
  }
  for (const { message } of jobs) {
    if (resent.has(message)) {
      message.ack();
      unsent.forget(message.id);
    } else {
      message.retry({ delaySeconds });
      // This delivery sent nothing, though Cloudflare counts it when the job comes back.
      unsent.add(message.id);
    }
  }
  logger.log("error", "configuration invalid; delivery jobs wait for a valid policy", {
    queue: batch.queue,
    jobs: jobs.length,
    retryInSeconds: delaySeconds,
  });
}

/**
 * A body that is no job as JSON text can carry in its dead letter (the DLQ is sent JSON), and
 * what had to change for that. Another producer's message may be bytes (`contentType: "bytes"`,
 * an ArrayBuffer) or a structured clone (`"v8"`: a BigInt, a Map, a cycle): as they came, the
 * bytes and a Map became `{}` in the dead letter, their content lost, and a BigInt or a cycle
 * made the send throw, so the message was retried every minute as if the DLQ had refused it,
 * until Cloudflare moved it after `max_retries` without a reason.
 */
function storable(body: unknown): { body: unknown; note?: string } {
  if (isBinary(body)) return { body: base64(body), note: "its bytes in base64" };
  let changed = false;
  const seen = new WeakSet<object>();
  const text = (cycles: boolean) =>
    JSON.stringify(body, (_key, value: unknown) => {
      if (typeof value === "bigint") {
        changed = true;
        return value.toString();
      }
      if (isBinary(value)) {
        changed = true;
        return base64(value);
      }
      // Before a Map or a Set becomes a new array: one holding itself made a new array at each
      // turn, a cycle no check met, and the stack overflowed.
      if (cycles && typeof value === "object" && value !== null) {
        if (seen.has(value)) {
          changed = true;
          return "[seen above]";
        }
        seen.add(value);
      }
      if (value instanceof Map || value instanceof Set) {
        changed = true;
        return [...value];
      }
      return value;
    }) as string | undefined;
  let json: string | undefined;
  try {
    json = text(false);
  } catch {
    // A cycle: every object met a second time is written as "[seen above]".
    try {
      json = text(true);
    } catch {
      // Nested too deep for the stack: this throwing failed the whole batch, its delivered
      // jobs sent again, so only what the body is stays.
      return {
        body: Object.prototype.toString.call(body),
        note: "nested too deep to write; only its type kept",
      };
    }
  }
  if (json === undefined) return { body: String(body), note: "written as text" };
  return changed
    ? { body: JSON.parse(json), note: "values JSON cannot hold written as text, bytes as base64" }
    : { body };
}

function isBinary(value: unknown): value is ArrayBuffer | ArrayBufferView {
  return value instanceof ArrayBuffer || ArrayBuffer.isView(value);
}

function base64(value: ArrayBuffer | ArrayBufferView): string {
  const bytes =
    value instanceof ArrayBuffer
      ? new Uint8Array(value)
      : new Uint8Array(value.buffer, value.byteOffset, value.byteLength);
  let text = "";
  for (let i = 0; i < bytes.length; i += 0x8000)
    text += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(text);
}

function describe(e: unknown): string {
  return e instanceof Error ? `${e.name}: ${e.message}` : String(e);
}

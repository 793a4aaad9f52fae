/**
 * Delivery jobs on Cloudflare Queues (fanout.md B2). Each message body is the JSON envelope
 * `{id, body}` (as on SQS); a dead letter adds `attempts`, `error` and `failedAt`.
 *
 * Cloudflare pushes batches to the Worker's `queue()` handler, so only two halves of the Queue
 * port apply here: a producer (`send`, what the notifier calls) and a consumer that turns each
 * deliver outcome into `msg.ack()`, `msg.retry({delaySeconds})` or a send to the dead-letter
 * queue (cloudflare-consumer.ts, loaded by the `queue()` handler only). `receive`, `listDead` and `replayDead` have no meaning for a push consumer: dead letters
 * stay on the DLQ queue, read with an HTTP pull consumer (infra/README.md (Cloudflare Workers)).
 *
 * Limits: a message ≤ 128 KB (KB = 1000 bytes, ~100 bytes of metadata count toward it),
 * `sendBatch` ≤ 100 messages and ≤ 256 KB, each message's metadata counted too, delays ≤ 24 h (12 h in Cloudflare's older limits, and
 * the schedule's cap: hookgate sends ≤ 12 h). A job over the message limit has the
 * longest strings of its free text (the event, the reason, a tool call's other half) cut with
 * TRUNCATION_MARKER (core/delivery.ts `fitDeliveryJob`); a job is never dropped.
 */
import { errorMessage } from "../../core/errors.js";
import { type OutgoingMessage, type Queue, SendFailedError } from "../../core/queue.js";
import { utf8Length } from "../../core/truncate.js";

/** A queue producer binding (a subset of workers-types' `Queue<Body>`). */
export interface QueueProducerBinding<Body> {
  send(body: Body, options?: { contentType?: "json"; delaySeconds?: number }): Promise<unknown>;
  sendBatch(
    messages: Iterable<{ body: Body; contentType?: "json"; delaySeconds?: number }>,
  ): Promise<unknown>;
}

/** One pushed message (a subset of workers-types' `Message<Body>`). */
export interface PushedMessage<Body = unknown> {
  readonly id: string;
  readonly body: Body;
  /** 1 on the first delivery, 2 on the first retry, ... */
  readonly attempts: number;
  ack(): void;
  retry(options?: { delaySeconds?: number }): void;
}

export interface PushedBatch<Body = unknown> {
  readonly queue: string;
  readonly messages: readonly PushedMessage<Body>[];
}

export interface Envelope<T> {
  readonly id: string;
  readonly body: T;
}

export interface DeadLetterEnvelope<T> extends Envelope<T> {
  readonly attempts: number;
  readonly error: string;
  /** Epoch ms. */
  readonly failedAt: number;
}

/**
 * Cloudflare's limits, with a margin. "Messages can include up to ~100 bytes of internal metadata
 * that counts towards total message limits" (developers.cloudflare.com/queues/platform/limits/,
 * KB = 1000 bytes; a `sendBatch` takes 100 messages "or 256KB in total"): a batch counts each
 * message's `messageMetadataBytes` beside its body, or 100 bodies that fit 250,000 bytes could
 * pass the 256,000 with theirs.
 */
export const CLOUDFLARE_LIMITS = {
  messageBytes: 127_000,
  messageMetadataBytes: 100,
  batchMessages: 100,
  batchBytes: 250_000,
  maxDelaySeconds: 12 * 3600,
} as const;

/** Retry and send delays are whole seconds on Cloudflare: rounded up, at most 12 h. */
export function delaySecondsFor(ms: number): number {
  if (!Number.isFinite(ms) || ms <= 0) return 0;
  return Math.min(CLOUDFLARE_LIMITS.maxDelaySeconds, Math.ceil(ms / 1000));
}

export interface ProducerOptions<T> {
  /**
   * Makes a body whose envelope is over the message limit fit (`fits` tells whether a candidate
   * does). Without it an oversized message goes to `sendBatch` as is, which rejects it.
   */
  readonly fit?: (body: T, fits: (candidate: T) => boolean) => T;
  /** The waits before each `sendBatch` tried again after it failed (default SEND_RETRY_DELAYS_MS). */
  readonly retryDelaysMs?: readonly number[];
}

/**
 * A refused `sendBatch` is tried twice more, after 250 ms and 1 s: the binding has no retry of
 * its own (the AWS SDK's SQS client tries 3 times), and Cloudflare refuses sends now and then
 * ("Queue is overloaded. Please back off.", "Too Many Requests") that go through when sent again.
 * A job is an event's only copy: refused once, it was lost (workerd issue 6053). A batch refused
 * after Cloudflare took it after all goes twice, with the same job ids (one `webhook-id` for a
 * receiver that drops repeats): a duplicate rather than a loss.
 */
export const SEND_RETRY_DELAYS_MS: readonly number[] = [250, 1000];

/**
 * `send` on Cloudflare Queues: `sendBatch` in chunks within the count and size limits, each
 * tried up to three times (SEND_RETRY_DELAYS_MS). A
 * `sendBatch` takes all its messages or none; when one of several fails, the others are still
 * sent, and the error (a SendFailedError) names the messages not sent. When none went out, it
 * is the first `sendBatch`'s error as it came.
 */
export function createCloudflareProducer<T>(
  binding: QueueProducerBinding<Envelope<T>>,
  options: ProducerOptions<T> = {},
): Pick<Queue<T>, "send"> {
  const limits = CLOUDFLARE_LIMITS;
  return {
    async send(messages: readonly OutgoingMessage<T>[]) {
      let chunk: { body: Envelope<T>; contentType: "json"; delaySeconds?: number }[] = [];
      let chunkBytes = 0;
      const failed: { readonly ids: string[]; readonly error: unknown }[] = [];
      const flush = async () => {
        if (chunk.length === 0) return;
        const sending = chunk;
        chunk = [];
        chunkBytes = 0;
        const delays = options.retryDelaysMs ?? SEND_RETRY_DELAYS_MS;
        for (let tries = 0; ; tries++) {
          try {
            await binding.sendBatch(sending);
            return;
          } catch (error) {
            const delay = delays[tries];
            if (delay === undefined) {
              failed.push({ ids: sending.map((m) => m.body.id), error });
              return;
            }
            await new Promise((resolve) => setTimeout(resolve, delay));
          }
        }
      };
      for (const message of messages) {
        const fits = (body: T) => jsonBytes({ id: message.id, body }) <= limits.messageBytes;
        const body = options.fit && !fits(message.body) ? options.fit(message.body, fits) : message.body;
        const envelope: Envelope<T> = { id: message.id, body };
        const bytes = jsonBytes(envelope) + limits.messageMetadataBytes;
        if (chunk.length >= limits.batchMessages || chunkBytes + bytes > limits.batchBytes) await flush();
        const delay = delaySecondsFor(message.delayMs ?? 0);
        chunk.push({ body: envelope, contentType: "json", ...(delay > 0 ? { delaySeconds: delay } : {}) });
        chunkBytes += bytes;
      }
      await flush();
      const notSent = failed.flatMap((f) => f.ids);
      if (notSent.length === messages.length && failed[0]) throw failed[0].error;
      if (failed.length > 0)
        throw new SendFailedError(
          `Cloudflare Queues refused ${notSent.length} of ${messages.length} messages: ${failed
            .map((f) => `${f.ids.join(", ")} (${errorMessage(f.error)})`)
            .join(", ")}`,
          notSent,
        );
    },
  };
}

/**
 * `replayDead` on Cloudflare: re-sends dead letters read from the DLQ (with an HTTP pull consumer
 * or a DLQ consumer) to the main queue as `{id, body}`. Both shapes the DLQ holds are accepted:
 * the consumer's `{id, body, attempts, error, failedAt}` and the bare `{id, body}` Cloudflare
 * moves itself after `max_retries`. Cloudflare counts attempts per message, so a replayed job
 * starts again at attempts 1. Anything else on the DLQ is skipped; returns how many were sent.
 */
export async function replayDeadLetters<T>(
  messages: Iterable<unknown>,
  producer: Pick<Queue<T>, "send">,
): Promise<number> {
  const replayed: OutgoingMessage<T>[] = [];
  for (const message of messages) {
    if (message === null || typeof message !== "object" || !("body" in message)) continue;
    const { id, body } = message as Envelope<T>;
    if (typeof id === "string") replayed.push({ id, body });
  }
  await producer.send(replayed);
  return replayed.length;
}

/** The job cut to fit one message (core/delivery.ts), loaded with this module by the Worker's notify path. */
export { fitDeliveryJob } from "../../core/delivery.js";

export function jsonBytes(value: unknown): number {
  return utf8Length(JSON.stringify(value));
}

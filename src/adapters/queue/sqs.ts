/**
 * The queue port on AWS SQS (standard queues), with a second queue as dead-letter queue.
 * Each message body is the JSON envelope `{id, body}`; a dead letter adds `attempts`, `error` and
 * `failedAt`. Limits (fanout.md B1): ≤ 10 entries and ≤ 1 MiB of bodies per batch, DelaySeconds
 * ≤ 900, visibility ≤ 43 200 s. Standard queues neither dedup ids nor tie a delete to the latest
 * receipt: a job may arrive twice, which the stable job id absorbs downstream.
 */
import {
  ChangeMessageVisibilityBatchCommand,
  ChangeMessageVisibilityCommand,
  DeleteMessageBatchCommand,
  DeleteMessageCommand,
  type Message,
  ReceiveMessageCommand,
  SendMessageBatchCommand,
  SendMessageCommand,
  SQSClient,
} from "@aws-sdk/client-sqs";
import type { DeadLetter, Queue, ReceivedMessage } from "../../core/queue.js";

export interface SqsQueueOptions<T> {
  readonly client: SQSClient;
  readonly queueUrl: string;
  readonly deadLetterQueueUrl: string;
  /** The JSON value stored for a body (identity by default). */
  readonly encode?: (body: T) => unknown;
  /** Reads a stored JSON value back into a body; throwing marks the message unreadable. */
  readonly decode?: (value: unknown) => T;
  /** Told about a message that is not an envelope or fails `decode`; it is left where it is. */
  readonly onUnreadable?: (problem: { readonly messageId: string; readonly reason: string }) => void;
  readonly now?: () => number;
}

const MAX_BATCH_ENTRIES = 10;
const MAX_BATCH_BYTES = 1_048_576;
const MAX_DELAY_SECONDS = 900;
const MAX_VISIBILITY_SECONDS = 43_200;
/** How long listDead and replayDead hide the dead letters they page through. */
const DLQ_PAGE_VISIBILITY_SECONDS = 30;
/** Keeps a dead letter well inside 1 MiB whatever the error text. */
const MAX_ERROR_CHARS = 4000;
const REDRIVEN_ERROR = "moved by the SQS redrive policy after maxReceiveCount receives";

const seconds = (ms: number, max: number): number => Math.min(max, Math.max(0, Math.ceil(ms / 1000)));

/**
 * JSON text SQS accepts: JSON.stringify already escapes control characters and lone surrogates,
 * but leaves U+FFFE and U+FFFF raw, which SQS refuses (InvalidMessageContents). They can only
 * occur inside strings, where the escape means the same.
 */
function toSqsJson(value: unknown): string {
  return JSON.stringify(value).replace(
    /[\uFFFE\uFFFF]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).toUpperCase()}`,
  );
}

interface Envelope {
  readonly id: string;
  readonly body: unknown;
  readonly attempts?: unknown;
  readonly error?: unknown;
  readonly failedAt?: unknown;
}

function readEnvelope(text: string | undefined): Envelope | string {
  if (text === undefined) return "no body";
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return "body is not JSON";
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) return "body is not an object";
  const record = value as Record<string, unknown>;
  if (typeof record.id !== "string" || !("body" in record)) return "body has no string id and body";
  return record as unknown as Envelope;
}

interface Outgoing {
  readonly id: string;
  readonly text: string;
  readonly delaySeconds: number;
}

export function createSqsQueue<T>(options: SqsQueueOptions<T>): Queue<T> {
  const { client, queueUrl, deadLetterQueueUrl } = options;
  const encode = options.encode ?? ((body: T): unknown => body);
  const decode = options.decode ?? ((value: unknown): T => value as T);
  const now = options.now ?? Date.now;

  function unreadable(message: Message, reason: string): void {
    options.onUnreadable?.({ messageId: message.MessageId ?? "", reason });
  }

  /** Sends every message, in batches within SQS's limits; throws listing what SQS refused. */
  async function sendAll(url: string, outgoing: readonly Outgoing[]): Promise<void> {
    const sizes = outgoing.map((o) => Buffer.byteLength(o.text, "utf8"));
    outgoing.forEach((o, i) => {
      const size = sizes[i] ?? 0;
      if (size > MAX_BATCH_BYTES)
        throw new Error(`SQS message ${o.id} is ${size} bytes; SQS takes at most ${MAX_BATCH_BYTES}`);
    });
    const batches: number[][] = [];
    let batch: number[] = [];
    let bytes = 0;
    outgoing.forEach((_, i) => {
      const size = sizes[i] ?? 0;
      if (batch.length === MAX_BATCH_ENTRIES || bytes + size > MAX_BATCH_BYTES) {
        batches.push(batch);
        batch = [];
        bytes = 0;
      }
      batch.push(i);
      bytes += size;
    });
    if (batch.length > 0) batches.push(batch);

    const refused: string[] = [];
    for (const indexes of batches) {
      const result = await client.send(
        new SendMessageBatchCommand({
          QueueUrl: url,
          Entries: indexes.map((i) => ({
            Id: String(i),
            MessageBody: outgoing[i]?.text,
            DelaySeconds: outgoing[i]?.delaySeconds,
          })),
        }),
      );
      // SendMessageBatch answers 200 even when entries fail: each failure is in `Failed`.
      for (const failed of result.Failed ?? []) {
        const id = outgoing[Number(failed.Id)]?.id ?? `entry ${failed.Id}`;
        refused.push(`${id} (${failed.Code ?? "unknown"}${failed.Message ? `: ${failed.Message}` : ""})`);
      }
    }
    if (refused.length > 0)
      throw new Error(`SQS refused ${refused.length} of ${outgoing.length} messages: ${refused.join(", ")}`);
  }

  async function receiveFrom(url: string, max: number, visibilitySeconds: number): Promise<Message[]> {
    const result = await client.send(
      new ReceiveMessageCommand({
        QueueUrl: url,
        MaxNumberOfMessages: max,
        VisibilityTimeout: visibilitySeconds,
        WaitTimeSeconds: 0,
        // Both spellings: some SQS servers (local-aws-sqs) read only the older AttributeNames.
        AttributeNames: ["All"],
        MessageSystemAttributeNames: ["ApproximateReceiveCount", "SentTimestamp"],
      }),
    );
    return result.Messages ?? [];
  }

  /** Deletes in batches of 10; throws listing the receipts SQS refused. */
  async function deleteAll(url: string, receipts: readonly string[]): Promise<void> {
    const refused: string[] = [];
    for (let start = 0; start < receipts.length; start += MAX_BATCH_ENTRIES) {
      const chunk = receipts.slice(start, start + MAX_BATCH_ENTRIES);
      const result = await client.send(
        new DeleteMessageBatchCommand({
          QueueUrl: url,
          Entries: chunk.map((ReceiptHandle, i) => ({ Id: String(i), ReceiptHandle })),
        }),
      );
      for (const failed of result.Failed ?? []) refused.push(failed.Code ?? "unknown");
    }
    if (refused.length > 0) throw new Error(`SQS refused to delete ${refused.length} messages: ${refused}`);
  }

  /**
   * Makes paged-through messages visible again at once. Best effort: one it misses reappears when
   * its page visibility runs out, so a failure here is not worth failing the call for.
   */
  async function releaseAll(url: string, receipts: readonly string[]): Promise<void> {
    for (let start = 0; start < receipts.length; start += MAX_BATCH_ENTRIES) {
      const chunk = receipts.slice(start, start + MAX_BATCH_ENTRIES);
      await client
        .send(
          new ChangeMessageVisibilityBatchCommand({
            QueueUrl: url,
            Entries: chunk.map((ReceiptHandle, i) => ({
              Id: String(i),
              ReceiptHandle,
              VisibilityTimeout: 0,
            })),
          }),
        )
        .catch(() => undefined);
    }
  }

  function decodeBody(message: Message, envelope: Envelope): { body: T } | undefined {
    try {
      return { body: decode(envelope.body) };
    } catch (error) {
      unreadable(message, `decode failed: ${error instanceof Error ? error.message : String(error)}`);
      return undefined;
    }
  }

  function toReceived(message: Message): ReceivedMessage<T> | undefined {
    const envelope = readEnvelope(message.Body);
    if (typeof envelope === "string") {
      unreadable(message, envelope);
      return undefined;
    }
    if (message.ReceiptHandle === undefined) return undefined;
    const decoded = decodeBody(message, envelope);
    if (!decoded) return undefined;
    const attempts = Number(message.Attributes?.ApproximateReceiveCount);
    return {
      id: envelope.id,
      body: decoded.body,
      attempts: Number.isInteger(attempts) && attempts > 0 ? attempts : 1,
      receipt: message.ReceiptHandle,
    };
  }

  /** A dead letter, also one the redrive policy moved (a bare `{id, body}` envelope). */
  function toDead(message: Message): DeadLetter<T> | undefined {
    const envelope = readEnvelope(message.Body);
    if (typeof envelope === "string") {
      unreadable(message, envelope);
      return undefined;
    }
    const decoded = decodeBody(message, envelope);
    if (!decoded) return undefined;
    const sent = Number(message.Attributes?.SentTimestamp);
    return {
      id: envelope.id,
      body: decoded.body,
      attempts: typeof envelope.attempts === "number" ? envelope.attempts : 0,
      error: typeof envelope.error === "string" ? envelope.error : REDRIVEN_ERROR,
      failedAt:
        typeof envelope.failedAt === "number" ? envelope.failedAt : Number.isFinite(sent) ? sent : now(),
    };
  }

  return {
    async send(messages) {
      await sendAll(
        queueUrl,
        messages.map((m) => ({
          id: m.id,
          text: toSqsJson({ id: m.id, body: encode(m.body) }),
          delaySeconds: seconds(m.delayMs ?? 0, MAX_DELAY_SECONDS),
        })),
      );
    },

    async receive(max, visibilityMs) {
      const wanted = Math.floor(max);
      const visibility = seconds(visibilityMs, MAX_VISIBILITY_SECONDS);
      const received: ReceivedMessage<T>[] = [];
      while (received.length < wanted) {
        const messages = await receiveFrom(
          queueUrl,
          Math.min(MAX_BATCH_ENTRIES, wanted - received.length),
          visibility,
        );
        if (messages.length === 0) break;
        for (const message of messages) {
          const one = toReceived(message);
          if (one) received.push(one);
        }
      }
      return received;
    },

    async ack(message) {
      await client.send(new DeleteMessageCommand({ QueueUrl: queueUrl, ReceiptHandle: message.receipt }));
    },

    // SQS keeps no error text on a message, and a visibility change ends at most 12 h after the
    // receive: longer delays are clamped to 43 200 s.
    async retry(message, delayMs) {
      await client.send(
        new ChangeMessageVisibilityCommand({
          QueueUrl: queueUrl,
          ReceiptHandle: message.receipt,
          VisibilityTimeout: seconds(delayMs, MAX_VISIBILITY_SECONDS),
        }),
      );
    },

    // Two calls, not atomic: a crash between them leaves the job on the source queue, where the
    // queue's redrive policy (maxReceiveCount) remains the safety net that moves it to the DLQ.
    async deadLetter(message, error) {
      const letter = {
        id: message.id,
        body: encode(message.body),
        attempts: message.attempts,
        error: error.slice(0, MAX_ERROR_CHARS),
        failedAt: now(),
      };
      await client.send(
        new SendMessageCommand({ QueueUrl: deadLetterQueueUrl, MessageBody: toSqsJson(letter) }),
      );
      await client.send(new DeleteMessageCommand({ QueueUrl: queueUrl, ReceiptHandle: message.receipt }));
    },

    // SQS has no browse call. With visibility 0 every receive samples the same first messages
    // again, so the listing hides each page while it reads on, then releases them all at once.
    async listDead(limit = 100) {
      const letters = new Map<string, DeadLetter<T>>();
      const receipts: string[] = [];
      try {
        while (letters.size < limit) {
          const messages = await receiveFrom(
            deadLetterQueueUrl,
            Math.min(MAX_BATCH_ENTRIES, limit - letters.size),
            DLQ_PAGE_VISIBILITY_SECONDS,
          );
          if (messages.length === 0) break;
          for (const message of messages) {
            if (message.ReceiptHandle !== undefined) receipts.push(message.ReceiptHandle);
            const letter = toDead(message);
            if (letter && message.MessageId !== undefined) letters.set(message.MessageId, letter);
          }
        }
      } finally {
        await releaseAll(deadLetterQueueUrl, receipts);
      }
      return [...letters.values()].sort((a, b) => a.failedAt - b.failedAt);
    },

    // Sends `{id, body}` back as a new message (so SQS counts receives from 1 again), then deletes
    // the dead letter: a crash in between duplicates a job, never loses one.
    async replayDead(ids) {
      const wanted = ids === undefined ? undefined : new Set(ids);
      if (wanted?.size === 0) return 0;
      const found = new Set<string>();
      const others: string[] = [];
      let replayed = 0;
      try {
        for (;;) {
          const messages = await receiveFrom(
            deadLetterQueueUrl,
            MAX_BATCH_ENTRIES,
            DLQ_PAGE_VISIBILITY_SECONDS,
          );
          if (messages.length === 0) break;
          const chosen: { envelope: Envelope; receipt: string }[] = [];
          for (const message of messages) {
            if (message.ReceiptHandle === undefined) continue;
            const envelope = readEnvelope(message.Body);
            if (typeof envelope === "string" || (wanted !== undefined && !wanted.has(envelope.id))) {
              others.push(message.ReceiptHandle);
            } else {
              chosen.push({ envelope, receipt: message.ReceiptHandle });
            }
          }
          if (chosen.length > 0) {
            await sendAll(
              queueUrl,
              chosen.map(({ envelope }) => ({
                id: envelope.id,
                text: toSqsJson({ id: envelope.id, body: envelope.body }),
                delaySeconds: 0,
              })),
            );
            await deleteAll(
              deadLetterQueueUrl,
              chosen.map((c) => c.receipt),
            );
            replayed += chosen.length;
            for (const { envelope } of chosen) found.add(envelope.id);
          }
          if (wanted !== undefined && [...wanted].every((id) => found.has(id))) break;
        }
      } finally {
        await releaseAll(deadLetterQueueUrl, others);
      }
      return replayed;
    },

    // The client belongs to the caller, who may share it between queues.
    async close() {},
  };
}

/** A client for a local SQS server (local-aws-sqs in tests, or one a developer runs). */
export function createSqsClientForLocal(endpoint: string): SQSClient {
  return new SQSClient({
    region: "us-east-1",
    endpoint,
    credentials: { accessKeyId: "local", secretAccessKey: "local" },
  });
}

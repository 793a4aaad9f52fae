/**
 * The queue port on AWS SQS (standard queues), with a second queue as dead-letter queue.
 * Each message body is the JSON envelope `{id, body}`; a dead letter adds `attempts`, `error` and
 * `failedAt`, and a held job's copy (`hold`) `sent` and `holds`: SQS cannot lower a message's
 * receive count, so a job's attempts are the sends its earlier copies made plus this copy's
 * receives. Limits (fanout.md B1): ≤ 10 entries and ≤ 1 MiB of bodies per batch, DelaySeconds
 * ≤ 900, visibility ≤ 43 200 s. Standard queues neither dedup ids nor tie a delete to the latest
 * receipt: a job may arrive twice, which the stable job id absorbs downstream.
 *
 * Calls are batched: sends go out with SendMessageBatch; acks, retries and the delete that ends a
 * dead-lettering, which the consumers make one message at a time as each delivery ends, wait up
 * to `batchWindowMs` for others to share a DeleteMessageBatch / ChangeMessageVisibilityBatch of up
 * to 10 entries (the rare send to the DLQ stays a single SendMessage). Each call still settles
 * with its own entry's result: an entry SQS failed on its side (SenderFault false) gets one more
 * try, and one that fails for good rejects its call, so the consumer logs it and the message
 * comes back after its visibility timeout; no failure is dropped silently.
 */
import { format } from "node:util";
import {
  type BatchResultErrorEntry,
  ChangeMessageVisibilityBatchCommand,
  DeleteMessageBatchCommand,
  GetQueueAttributesCommand,
  type Message,
  ReceiveMessageCommand,
  SendMessageBatchCommand,
  SendMessageCommand,
  SQSClient,
  type SQSClientConfig,
} from "@aws-sdk/client-sqs";
import { carriedCount } from "../../core/delivery.js";
import { errorMessage } from "../../core/errors.js";
import {
  CopySentError,
  type DeadLetter,
  type DeadSwept,
  DeleteFailedError,
  maybeDeletedBy,
  maybeSentBy,
  notDeletedBy,
  notSentBy,
  type Queue,
  type ReceivedMessage,
  SendFailedError,
  SweepStoppedError,
  UNREADABLE_PREFIX,
} from "../../core/queue.js";
import { withoutUserinfo, withoutUserinfoIn } from "../../core/url-userinfo.js";

export interface SqsQueueOptions<T> {
  readonly client: SQSClient;
  readonly queueUrl: string;
  readonly deadLetterQueueUrl: string;
  /**
   * The client of the calls to `deadLetterQueueUrl` (`client` by default): one signed for the
   * DLQ's region, where that is another than the queue's.
   */
  readonly deadLetterClient?: SQSClient;
  /** The JSON value stored for a body (identity by default). */
  readonly encode?: (body: T) => unknown;
  /** Reads a stored JSON value back into a body; throwing marks the message unreadable. */
  readonly decode?: (value: unknown) => T;
  /** Told about a message that is not an envelope or fails `decode`; it is left where it is. */
  readonly onUnreadable?: (problem: { readonly messageId: string; readonly reason: string }) => void;
  readonly now?: () => number;
  /** How long an ack, retry or dead letter waits for others to share its batch (default 20 ms). */
  readonly batchWindowMs?: number;
  /**
   * Makes a body whose message is over SQS's 1 MiB fit (`fits` tells whether a candidate does),
   * on send and on dead-lettering (core/delivery.ts `fitDeliveryJob` for delivery jobs), or over
   * a queue's own smaller MaximumMessageSize once SQS has refused a message as longer. Without
   * it an oversized message is refused before it is sent.
   */
  readonly fit?: (body: T, fits: (candidate: T) => boolean) => T;
  /**
   * Read as each SQS request is sent: a signal that ends it, the SDK's retries and their waits
   * too (the Lambda delivery function's: the invocation's time left, less the return).
   */
  readonly signal?: () => AbortSignal | undefined;
}

const MAX_BATCH_ENTRIES = 10;
/**
 * The most a message (and a batch's bodies together) may hold: SQS's 1 MiB, which a queue takes
 * only when its MaximumMessageSize says so (infra/aws/template.yaml sets it on both queues).
 */
export const SQS_MAX_MESSAGE_BYTES = 1_048_576;
const MAX_BATCH_BYTES = SQS_MAX_MESSAGE_BYTES;
const MAX_DELAY_SECONDS = 900;
const MAX_VISIBILITY_SECONDS = 43_200;
/**
 * A retry's visibility change counts from the receive, and SQS refuses one that would end more
 * than 12 h after it: a retry waits at most 12 h less 15 minutes, room for the delivery attempt
 * itself (a Lambda batch's visibility is 6 minutes) so that a 12 h Retry-After is not refused.
 */
const MAX_RETRY_VISIBILITY_SECONDS = MAX_VISIBILITY_SECONDS - 900;
/** How long listDead, replayDead and dropDead hide the dead letters they page through. */
const DLQ_PAGE_VISIBILITY_SECONDS = 30;
/**
 * They page until a receive comes back empty, so they long-poll: a short poll asks only some of
 * SQS's servers and can come back empty while messages remain ("false empty responses", the SQS
 * Developer Guide's long-polling best practices); 1 s, the shortest long poll, asks them all.
 */
const DLQ_WAIT_SECONDS = 1;
/** Keeps a dead letter well inside 1 MiB whatever the error text. */
const MAX_ERROR_CHARS = 4000;
const REDRIVEN_ERROR = "moved by the SQS redrive policy after maxReceiveCount receives";
const NOT_A_DEAD_LETTER =
  "moved by the SQS redrive policy as it came, or sent by something else; it cannot be replayed (hookgate dlq drop --id ID deletes it)";
/**
 * Whether a dead letter was made at or after `since` (epoch ms), by the time its consumer wrote in
 * it (`failedAt`): a replay leaves the new dead letter of a job it sent, which failed again at once.
 * One the redrive policy moved has no `failedAt`, and is read by SQS's `SentTimestamp`, which a
 * redrive keeps: for a job the replay sent, when it sent it (as `list` dates it).
 * A clock behind this host's may take one for an older copy, deleted as before; one
 * ahead may leave an older copy, listed again (replayed, it is sent twice, with one webhook-id).
 */
function deadLetteredSince(envelope: Envelope, message: Message, since: number): boolean {
  const at =
    typeof envelope.failedAt === "number" ? envelope.failedAt : Number(message.Attributes?.SentTimestamp);
  return Number.isFinite(at) && at >= since;
}

/** The id a DLQ message that is no envelope is listed and dropped by. */
const unreadableId = (messageId: string) => `${UNREADABLE_PREFIX}${messageId}`;
/** Short beside any visibility timeout, long enough to gather the deliveries of one batch. */
const DEFAULT_BATCH_WINDOW_MS = 20;
/** Tries per batch entry that SQS failed on its side (InternalError, throttling). */
const ENTRY_TRIES = 2;

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
  /** On a held job's copy: the attempts (sends) before it, and the holds. */
  readonly sent?: unknown;
  readonly holds?: unknown;
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
  /** The message fitted within `maxBytes` (options.fit), for a queue that takes less than 1 MiB. */
  readonly refit?: ((maxBytes: number) => string) | undefined;
}

/**
 * The most a queue takes, from SQS's refusal of a message over its MaximumMessageSize ("Message
 * must be shorter than 262144 bytes."): a queue made before 2025, or by a tool that still sets
 * the old default (Terraform's and Pulumi's `max_message_size`), keeps 256 KiB.
 */
function queueLimitIn(message: string | undefined): number | undefined {
  const said = /Message must be shorter than (\d+) bytes/.exec(message ?? "")?.[1];
  return said === undefined ? undefined : Number(said);
}

/** One entry of a DeleteMessageBatch or (with its new visibility) ChangeMessageVisibilityBatch. */
interface ReceiptEntry {
  readonly receipt: string;
  readonly visibilitySeconds?: number;
}
type BatchAction = "delete" | "change visibility";

/**
 * Why SQS refused an entry; `unanswered` when the last request that carried it got no answer (SQS
 * may have done it all the same).
 */
type EntryFailure = Pick<BatchResultErrorEntry, "Code" | "Message" | "SenderFault"> & {
  readonly unanswered?: boolean;
};

/** The AWS SDK's errors for credentials, a token or a setting it could not find (@smithy's ProviderError). */
const PROVIDER_ERRORS = new Set(["ProviderError", "CredentialsProviderError", "TokenProviderError"]);

/**
 * Whether SQS answered a request that failed by refusing it (a 4xx status, which the AWS SDK puts
 * in the error's `$metadata`): none of it was done. With no answer (the connection failed, a
 * timeout, an abort) or a 5xx one, SQS may have done it all the same; and so after a 4xx that
 * answered a try the SDK made again (after no answer, a 5xx or a throttle: `attempts` over 1),
 * since an earlier try may have been done. Nor was any of it done when the SDK had nothing to
 * sign it with: a credentials (or token) provider's error before any try (the SDK resolves the
 * credentials before its retry step, and signs each try inside it: the error then has `$metadata`
 * but no status), unless it came on a try after the first, one of which may have been done.
 */
function refusedWhole(e: unknown): boolean {
  const metadata = (e as { $metadata?: { httpStatusCode?: unknown; attempts?: unknown } } | null | undefined)
    ?.$metadata;
  // Credentials are read again for each try (a refresh of ones about to expire): one that failed
  // for a try after the first says nothing of the tries before it.
  if (e instanceof Error && PROVIDER_ERRORS.has(e.name))
    return metadata?.attempts === undefined || metadata.attempts === 1;
  const status = metadata?.httpStatusCode;
  return typeof status === "number" && status >= 400 && status < 500 && metadata?.attempts === 1;
}

/**
 * A batch request (SendMessageBatch, DeleteMessageBatch, ChangeMessageVisibilityBatch) for the
 * entries `ids`. SQS answers 200 even when entries fail, each failure in `Failed`; those it failed
 * on its own side (SenderFault false) are sent again, ENTRY_TRIES in all. Resolves to each
 * entry's last failure, by id; an entry SQS took is not in the map. Only a first request that
 * fails as a whole rejects: a later one that does fails just the entries it carried, and those
 * SQS took before stay taken (a job sent is not reported lost, a message deleted not as coming back).
 */
async function retryingEntries(
  ids: readonly number[],
  send: (ids: readonly number[]) => Promise<{ Failed?: BatchResultErrorEntry[] | undefined }>,
): Promise<Map<number, EntryFailure>> {
  const failures = new Map<number, EntryFailure>();
  let pending = ids;
  for (let tries = 0; pending.length > 0 && tries < ENTRY_TRIES; tries++) {
    let result: { Failed?: BatchResultErrorEntry[] | undefined };
    try {
      result = await send(pending);
    } catch (e) {
      if (tries === 0) throw e;
      for (const i of pending) {
        const first = failures.get(i);
        const again = `the request that tried it again failed: ${errorMessage(e)}`;
        failures.set(i, {
          Code: first?.Code,
          Message: first?.Message ? `${first.Message}; ${again}` : again,
          SenderFault: first?.SenderFault,
          unanswered: !refusedWhole(e),
        });
      }
      break;
    }
    for (const i of pending) failures.delete(i);
    const again: number[] = [];
    for (const failed of result.Failed ?? []) {
      const i = Number(failed.Id);
      failures.set(i, { Code: failed.Code, Message: failed.Message, SenderFault: failed.SenderFault });
      if (failed.SenderFault === false) again.push(i);
    }
    pending = again;
  }
  return failures;
}

const describeFailure = (f: EntryFailure) => `${f.Code ?? "unknown"}${f.Message ? `: ${f.Message}` : ""}`;

/**
 * Gathers calls into batches of at most `max` entries: a call joins the open batch, which `flush`
 * sends when it is full or `windowMs` after it opened. Each call settles with its own entry's
 * result, or with the error of the whole request.
 */
function createBatcher<E>(
  max: number,
  windowMs: number,
  flush: (entries: readonly E[]) => Promise<readonly (EntryFailure | undefined)[]>,
  refused: (failure: EntryFailure) => Error,
) {
  interface Waiting {
    readonly entry: E;
    readonly resolve: () => void;
    readonly reject: (error: unknown) => void;
  }
  let open: { readonly waiting: Waiting[]; readonly timer: ReturnType<typeof setTimeout> } | undefined;
  const inFlight = new Set<Promise<void>>();

  function dispatch(): void {
    if (!open) return;
    const { waiting, timer } = open;
    open = undefined;
    clearTimeout(timer);
    const sent = flush(waiting.map((w) => w.entry)).then(
      (failures) =>
        waiting.forEach((w, i) => {
          const failure = failures[i];
          if (failure) w.reject(refused(failure));
          else w.resolve();
        }),
      (error: unknown) => {
        for (const w of waiting) w.reject(error);
      },
    );
    inFlight.add(sent);
    void sent.finally(() => inFlight.delete(sent));
  }

  return {
    add(entry: E): Promise<void> {
      return new Promise<void>((resolve, reject) => {
        open ??= { waiting: [], timer: setTimeout(dispatch, windowMs) };
        open.waiting.push({ entry, resolve, reject });
        if (open.waiting.length >= max) dispatch();
      });
    },
    /** Sends the open batch now and waits for every batch still in flight. */
    async drain(): Promise<void> {
      dispatch();
      await Promise.all(inFlight);
    },
  };
}

export function createSqsQueue<T>(options: SqsQueueOptions<T>): Queue<T> {
  const { queueUrl, deadLetterQueueUrl } = options;
  const clientOf = (url: string) =>
    url === deadLetterQueueUrl ? (options.deadLetterClient ?? options.client) : options.client;
  refuseFifo(queueUrl, "queue");
  refuseFifo(deadLetterQueueUrl, "dead-letter queue");
  const encode = options.encode ?? ((body: T): unknown => body);
  const decode = options.decode ?? ((value: unknown): T => value as T);
  const now = options.now ?? Date.now;
  const windowMs = options.batchWindowMs ?? DEFAULT_BATCH_WINDOW_MS;
  const abortable = () => {
    const abortSignal = options.signal?.();
    return abortSignal ? { abortSignal } : {};
  };

  function unreadable(message: Message, reason: string): void {
    options.onUnreadable?.({ messageId: message.MessageId ?? "", reason });
  }

  /**
   * Per queue URL, the most it takes, when it refused a message as over a MaximumMessageSize
   * below SQS's 1 MiB; 1 MiB otherwise.
   */
  const queueLimits = new Map<string, number>();
  const limitOf = (url: string) => queueLimits.get(url) ?? MAX_BATCH_BYTES;

  /**
   * Whether SQS refused a message to `url` as over the queue's own limit, one that fitting
   * (options.fit) to that limit can send: the limit is then kept for the messages after it.
   */
  function refusedAsTooLong(url: string, text: string, said: string | undefined): boolean {
    const limit = queueLimitIn(said);
    if (!options.fit || limit === undefined || Buffer.byteLength(text, "utf8") <= limit) return false;
    queueLimits.set(url, Math.min(limit, limitOf(url)));
    return true;
  }

  /** The message text for `body`, its body fitted (options.fit) when the message is over `maxBytes`. */
  function fitted(body: T, message: (body: T) => unknown, maxBytes = MAX_BATCH_BYTES): string {
    const text = toSqsJson(message(body));
    const fits = (candidate: T) => Buffer.byteLength(toSqsJson(message(candidate)), "utf8") <= maxBytes;
    if (!options.fit || Buffer.byteLength(text, "utf8") <= maxBytes) return text;
    return toSqsJson(message(options.fit(body, fits)));
  }

  /**
   * One message to `url`, fitted to what the queue takes: refused as over the queue's own limit
   * (a queue of 256 KiB), it is fitted to that and sent once more, rather than lost.
   */
  async function sendOne(url: string, text: (maxBytes: number) => string, delaySeconds?: number) {
    const send = (body: string) =>
      clientOf(url).send(
        new SendMessageCommand({
          QueueUrl: url,
          MessageBody: body,
          ...(delaySeconds !== undefined ? { DelaySeconds: delaySeconds } : {}),
        }),
        abortable(),
      );
    const first = text(limitOf(url));
    try {
      await send(first);
    } catch (e) {
      if (!refusedWhole(e) || !refusedAsTooLong(url, first, errorMessage(e))) throw e;
      await send(text(limitOf(url)));
    }
  }

  /**
   * Sends every message, in batches within SQS's limits; throws listing what SQS refused, the
   * ids in a SendFailedError, those of a request that got no answer (which SQS may have taken)
   * as `unsure` too.
   */
  async function sendAll(url: string, outgoing: readonly Outgoing[]): Promise<void> {
    const texts = outgoing.map((o) => o.text);
    const sizes = texts.map((text) => Buffer.byteLength(text, "utf8"));
    outgoing.forEach((o, i) => {
      const size = sizes[i] ?? 0;
      // Refused before any request: none of them was sent, which the caller must know (a
      // replay makes its page visible again at once).
      if (size > MAX_BATCH_BYTES)
        throw new SendFailedError(
          `SQS message ${o.id} is ${size} bytes, over the ${MAX_BATCH_BYTES} SQS takes; nothing was sent`,
          outgoing.map((m) => m.id),
        );
    });
    const batchesOf = (indexes: readonly number[]): number[][] => {
      const batches: number[][] = [];
      let batch: number[] = [];
      let bytes = 0;
      for (const i of indexes) {
        const size = sizes[i] ?? 0;
        if (batch.length === MAX_BATCH_ENTRIES || bytes + size > MAX_BATCH_BYTES) {
          batches.push(batch);
          batch = [];
          bytes = 0;
        }
        batch.push(i);
        bytes += size;
      }
      if (batch.length > 0) batches.push(batch);
      return batches;
    };

    // A batch whose request fails as a whole does not stop the later ones: each is sent, and the
    // error names the jobs not sent, so what went out is not reported lost.
    const refused: string[] = [];
    const notSent: string[] = [];
    const unsure: string[] = [];
    const fail = (i: number, why: string, unanswered: boolean) => {
      const id = outgoing[i]?.id ?? `entry ${i}`;
      notSent.push(id);
      if (unanswered) unsure.push(id);
      refused.push(`${id} (${why})`);
    };
    // Those refused as over the queue's own limit go once more, fitted to it (`refusedAsTooLong`).
    let round: readonly number[] = outgoing.map((_, i) => i);
    for (let pass = 0; round.length > 0; pass++) {
      const tooLong: number[] = [];
      for (const indexes of batchesOf(round)) {
        let failures: Map<number, EntryFailure>;
        try {
          failures = await retryingEntries(indexes, (ids) =>
            clientOf(url).send(
              new SendMessageBatchCommand({
                QueueUrl: url,
                Entries: ids.map((i) => ({
                  Id: String(i),
                  MessageBody: texts[i],
                  DelaySeconds: outgoing[i]?.delaySeconds,
                })),
              }),
              abortable(),
            ),
          );
        } catch (e) {
          for (const i of indexes) fail(i, errorMessage(e), !refusedWhole(e));
          continue;
        }
        for (const [i, failure] of failures) {
          const refit = outgoing[i]?.refit;
          if (
            pass === 0 &&
            refit &&
            !failure.unanswered &&
            refusedAsTooLong(url, texts[i] ?? "", failure.Message)
          )
            tooLong.push(i);
          else fail(i, describeFailure(failure), failure.unanswered === true);
        }
      }
      for (const i of tooLong) {
        const text = outgoing[i]?.refit?.(limitOf(url)) ?? texts[i] ?? "";
        texts[i] = text;
        sizes[i] = Buffer.byteLength(text, "utf8");
      }
      round = tooLong;
    }
    if (refused.length > 0)
      throw new SendFailedError(
        `SQS refused ${refused.length} of ${outgoing.length} messages: ${refused.join(", ")}`,
        notSent,
        unsure,
      );
  }

  async function receiveFrom(
    url: string,
    max: number,
    visibilitySeconds: number,
    waitSeconds = 0,
  ): Promise<Message[]> {
    const result = await clientOf(url).send(
      new ReceiveMessageCommand({
        QueueUrl: url,
        MaxNumberOfMessages: max,
        VisibilityTimeout: visibilitySeconds,
        WaitTimeSeconds: waitSeconds,
        // Both spellings: some SQS servers (local-aws-sqs) read only the older AttributeNames.
        AttributeNames: ["All"],
        MessageSystemAttributeNames: ["ApproximateReceiveCount", "SentTimestamp"],
      }),
      abortable(),
    );
    return result.Messages ?? [];
  }

  /**
   * One DeleteMessageBatch or ChangeMessageVisibilityBatch of at most 10 entries. Resolves to
   * each entry's failure, undefined for those SQS took.
   */
  async function changeBatch(
    url: string,
    action: BatchAction,
    entries: readonly ReceiptEntry[],
  ): Promise<(EntryFailure | undefined)[]> {
    const failures = await retryingEntries(
      entries.map((_, i) => i),
      (ids) =>
        action === "change visibility"
          ? clientOf(url).send(
              new ChangeMessageVisibilityBatchCommand({
                QueueUrl: url,
                Entries: ids.map((i) => ({
                  Id: String(i),
                  ReceiptHandle: entries[i]?.receipt,
                  VisibilityTimeout: entries[i]?.visibilitySeconds,
                })),
              }),
              abortable(),
            )
          : clientOf(url).send(
              new DeleteMessageBatchCommand({
                QueueUrl: url,
                Entries: ids.map((i) => ({ Id: String(i), ReceiptHandle: entries[i]?.receipt })),
              }),
              abortable(),
            ),
    );
    return entries.map((_, i) => failures.get(i));
  }

  /**
   * Deletes in batches of 10; throws listing the codes of the entries SQS refused, the receipts
   * in a DeleteFailedError (every other one is deleted), those of a request that got no answer
   * (which SQS may have done) as `unsure` too.
   */
  async function deleteAll(url: string, receipts: readonly string[]): Promise<void> {
    const codes: string[] = [];
    const refused: string[] = [];
    const unsure: string[] = [];
    for (let start = 0; start < receipts.length; start += MAX_BATCH_ENTRIES) {
      const chunk = receipts.slice(start, start + MAX_BATCH_ENTRIES).map((receipt) => ({ receipt }));
      (await changeBatch(url, "delete", chunk)).forEach((failure, i) => {
        if (!failure) return;
        codes.push(failure.Code ?? "unknown");
        refused.push(chunk[i]?.receipt as string);
        if (failure.unanswered) unsure.push(chunk[i]?.receipt as string);
      });
    }
    if (codes.length > 0)
      throw new DeleteFailedError(
        `SQS refused to delete ${codes.length} messages: ${codes}`,
        refused,
        unsure,
      );
  }

  /**
   * Makes paged-through messages visible again at once. Best effort: one it misses reappears when
   * its page visibility runs out, so a failure here is not worth failing the call for.
   */
  async function releaseAll(url: string, receipts: readonly string[]): Promise<void> {
    for (let start = 0; start < receipts.length; start += MAX_BATCH_ENTRIES) {
      const chunk = receipts.slice(start, start + MAX_BATCH_ENTRIES);
      await changeBatch(
        url,
        "change visibility",
        chunk.map((receipt) => ({ receipt, visibilitySeconds: 0 })),
      ).catch(() => undefined);
    }
  }

  /** Acks and dead letters delete through one, retries change visibility through the other. */
  const batcherFor = (action: BatchAction) =>
    createBatcher<ReceiptEntry>(
      MAX_BATCH_ENTRIES,
      windowMs,
      (entries) => changeBatch(queueUrl, action, entries),
      (failure) => new Error(`SQS refused to ${action} a message (${describeFailure(failure)})`),
    );
  const deletes = batcherFor("delete");
  const visibilityChanges = batcherFor("change visibility");

  function decodeBody(message: Message, envelope: Envelope): { body: T } | undefined {
    try {
      return { body: decode(envelope.body) };
    } catch (error) {
      unreadable(message, `decode failed: ${errorMessage(error)}`);
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
    const received = Number(message.Attributes?.ApproximateReceiveCount);
    return {
      id: envelope.id,
      body: decoded.body,
      attempts: carriedCount(envelope.sent) + (Number.isInteger(received) && received > 0 ? received : 1),
      holds: carriedCount(envelope.holds),
      receipt: message.ReceiptHandle,
      ...(message.MessageId !== undefined && { messageId: message.MessageId }),
    };
  }

  /**
   * A dead letter, also one the redrive policy moved (a bare `{id, body}` envelope). A message
   * that is no envelope at all (a record the redrive policy moved as it came, which the consumer
   * could not dead-letter itself) is one too, under `unreadableId`, its body its text: skipped,
   * a listing said "empty" while the DLQ depth alarm fired. It is never replayed (no job to
   * send), and dropped by that id.
   */
  function toDead(message: Message): DeadLetter<T> | undefined {
    const envelope = readEnvelope(message.Body);
    const sent = Number(message.Attributes?.SentTimestamp);
    if (typeof envelope === "string") {
      if (message.MessageId === undefined) {
        unreadable(message, envelope);
        return undefined;
      }
      return {
        id: unreadableId(message.MessageId),
        body: message.Body ?? "",
        attempts: 0,
        error: `not a dead letter (${envelope}): ${NOT_A_DEAD_LETTER}`,
        failedAt: Number.isFinite(sent) ? sent : now(),
      };
    }
    const decoded = decodeBody(message, envelope);
    if (!decoded) return undefined;
    return {
      id: envelope.id,
      body: decoded.body,
      attempts: typeof envelope.attempts === "number" ? envelope.attempts : 0,
      error: typeof envelope.error === "string" ? envelope.error : REDRIVEN_ERROR,
      failedAt:
        typeof envelope.failedAt === "number" ? envelope.failedAt : Number.isFinite(sent) ? sent : now(),
    };
  }

  /**
   * The DLQ page by page, each page hidden while the caller reads on (SQS has no browse call: with
   * visibility 0 every receive samples the same first messages again). Ends at an empty receive,
   * or after a page that brings a message again: the first pages came back (a long read, past the
   * visibility it hid them for), and reading on would read them all again. The caller releases or
   * deletes what it was handed.
   */
  async function* deadLetterPages(pageSize: () => number): AsyncGenerator<Message[]> {
    const seen = new Set<string>();
    for (let again = false; !again; ) {
      const messages = await receiveFrom(
        deadLetterQueueUrl,
        pageSize(),
        DLQ_PAGE_VISIBILITY_SECONDS,
        DLQ_WAIT_SECONDS,
      );
      if (messages.length === 0) return;
      for (const message of messages) {
        if (message.MessageId === undefined) continue;
        again ||= seen.has(message.MessageId);
        seen.add(message.MessageId);
      }
      yield messages;
    }
  }

  /**
   * Pages through the whole DLQ and deletes each dead letter in `ids` (all when undefined; for a
   * drop, with no `replay`, each message that is not a dead letter too, by its `unreadableId`); a
   * replay first hands the first copy of each whose body it keeps to `replay.send`. Further copies
   * of a taken id (a job dead-lettered twice) are only deleted, but for a replay's those
   * dead-lettered since it began (`deadLetteredSince`): a job sent back that failed again at once,
   * whose new dead letter is left, or the job was gone from both queues; and the rest are made
   * visible again at the end. Returns how many distinct dead letters were taken, and the ids missing.
   * A `replay.send` that fails stops the sweep: the dead letters it sent are deleted and the others
   * made visible again, those it may have sent too (a request that got no answer; all of its page
   * when its error is no SendFailedError, which names what it did not send). A sweep that stops
   * rejects with a SweepStoppedError: how many it had sent (a replay) or deleted (a drop: with
   * those SQS deleted of a page whose delete it refused in part, a job dead-lettered twice only
   * when no copy of it the sweep saw is left), how many more of the page it stopped on may be
   * (`unsure`: a replay's it may have sent, a drop's whose delete got no answer), and why.
   * The ids in `ids` it read no message of are missing: read from the sweep itself, since a
   * listing first would hide the very messages the sweep then pages through.
   */
  async function sweepDead(
    ids: readonly string[] | undefined,
    replay?: {
      readonly send: (chosen: readonly Envelope[]) => Promise<void>;
      readonly keep: ((body: unknown) => boolean) | undefined;
    },
  ): Promise<DeadSwept> {
    const before = replay?.send;
    const keep = replay?.keep;
    const wanted = ids === undefined ? undefined : new Set(ids);
    if (wanted?.size === 0) return { count: 0, missing: [] };
    const began = now();
    const found = new Set<string>();
    /** Every id the sweep read a message of: a dead letter `keep` left, or a replay's message that is no job, is not missing. */
    const read = new Set<string>();
    const others: string[] = [];
    /** Dead letters `replay.send` sent, by id: on a page that fails, those it did send. */
    const handed = new Set<string>();
    /**
     * Dead letters deleted (a drop's count when it stops), by id: each copy of it the sweep saw
     * (a job dead-lettered twice may have one on the page it stops on).
     */
    const deleted = new Set<string>();
    /**
     * Dead letters of the page it stopped on that may be sent (a replay's send got no answer) or
     * deleted (a drop's delete got none), or not.
     */
    let unsure = 0;
    try {
      for await (const messages of deadLetterPages(() => MAX_BATCH_ENTRIES)) {
        const chosen: Envelope[] = [];
        const taken: { readonly id: string; readonly receipt: string }[] = [];
        for (const message of messages) {
          if (message.ReceiptHandle === undefined) continue;
          const text = readEnvelope(message.Body);
          const id =
            typeof text !== "string" ? text.id : unreadableId(message.MessageId ?? message.ReceiptHandle);
          read.add(id);
          const envelope =
            typeof text !== "string" ? text : replay === undefined ? { id, body: undefined } : undefined;
          if (
            envelope === undefined ||
            (wanted !== undefined && !wanted.has(envelope.id)) ||
            (keep !== undefined && !found.has(envelope.id) && !keep(envelope.body))
          ) {
            others.push(message.ReceiptHandle);
          } else if (before && found.has(envelope.id) && deadLetteredSince(envelope, message, began)) {
            // Dead-lettered again after this replay sent it: a new failure, not a copy.
            others.push(message.ReceiptHandle);
          } else {
            if (!found.has(envelope.id)) chosen.push(envelope);
            found.add(envelope.id);
            taken.push({ id: envelope.id, receipt: message.ReceiptHandle });
          }
        }
        if (chosen.length > 0 && before) {
          try {
            await before(chosen);
          } catch (e) {
            // Sent in part (SQS refused some entries): the dead letters that went out are deleted,
            // or the next replay would send them again; the others are made visible again, and
            // the sweep stops with the error. Those it may have sent stay dead letters, visible
            // again too, and are counted: a second replay may send them twice.
            const named = notSentBy(e);
            const notSent = named ?? new Set(chosen.map((c) => c.id));
            const maybeSent = named ? maybeSentBy(e) : notSent;
            for (const c of chosen)
              if (!notSent.has(c.id)) handed.add(c.id);
              else if (maybeSent.has(c.id)) unsure++;
            const went = taken.filter((t) => !notSent.has(t.id));
            others.push(...taken.filter((t) => notSent.has(t.id)).map((t) => t.receipt));
            if (went.length > 0)
              await deleteAll(
                deadLetterQueueUrl,
                went.map((t) => t.receipt),
              ).catch((d: unknown) => {
                const { left, surely } = leftBy(went, d);
                const stay = surely.size === left.size ? "stay" : "may stay";
                throw new Error(
                  `${errorMessage(e)}; the dead letters that went out ${stay} on the DLQ too (a replay sends them again): ${errorMessage(d)}`,
                  { cause: e },
                );
              });
            throw e;
          }
          for (const c of chosen) handed.add(c.id);
        }
        if (taken.length > 0)
          await deleteAll(
            deadLetterQueueUrl,
            taken.map((t) => t.receipt),
          ).catch((d: unknown) => {
            const { left, surely } = leftBy(taken, d);
            const maybe = [...left].filter((id) => !surely.has(id)).length;
            if (!before) {
              // A job with a copy left, or that may be, is not dropped, whatever became of its others;
              // it may be, unless a copy is surely left (refused in an answer).
              for (const t of taken) deleted.add(t.id);
              for (const id of left) deleted.delete(id);
              unsure = maybe;
              throw d;
            }
            // A replay's page went out (a copy of a job sent on an earlier page did too): its dead
            // letters are not "the others" still to replay.
            const n = left.size;
            const letters = `${n} dead letter${n === 1 ? "" : "s"} went out`;
            const where =
              maybe === 0
                ? `but stay${n === 1 ? "s" : ""} on the DLQ too`
                : "and may stay on the DLQ too, a delete unanswered";
            throw new Error(`${letters} ${where} (a replay sends them again): ${errorMessage(d)}`, {
              cause: d,
            });
          });
        for (const t of taken) deleted.add(t.id);
      }
    } catch (e) {
      throw new SweepStoppedError(before ? handed.size : deleted.size, e, unsure);
    } finally {
      await releaseAll(deadLetterQueueUrl, others);
    }
    return {
      count: found.size,
      missing: wanted === undefined ? [] : [...wanted].filter((id) => !read.has(id)),
    };
  }

  return {
    // A receive takes what SQS hands out; it has no way to leave a group's messages for later.
    skipsGroups: false,
    async send(messages) {
      await sendAll(
        queueUrl,
        messages.map((m) => {
          const text = (maxBytes: number) =>
            fitted(m.body, (body) => ({ id: m.id, body: encode(body) }), maxBytes);
          return {
            id: m.id,
            text: text(limitOf(queueUrl)),
            delaySeconds: seconds(m.delayMs ?? 0, MAX_DELAY_SECONDS),
            refit: text,
          };
        }),
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

    // SQS cannot tell a stale receipt: a delete with an older one may be accepted (true).
    async ack(message) {
      await deletes.add({ receipt: message.receipt });
      return true;
    },

    // SQS keeps no error text on a message, and a visibility change ends at most 12 h after the
    // receive: longer delays are clamped to 42 300 s (MAX_RETRY_VISIBILITY_SECONDS).
    async retry(message, delayMs) {
      await visibilityChanges.add({
        receipt: message.receipt,
        visibilitySeconds: seconds(delayMs, MAX_RETRY_VISIBILITY_SECONDS),
      });
      return true;
    },

    // A copy with the counts goes back, delayed by up to 900 s (the longest delay SQS gives a sent
    // message: a longer hold is held again when it comes back), then the message is deleted. In
    // that order: a failure between the two leaves both (a copy delivered twice at worst, which
    // the stable job id absorbs), never neither. A delete that fails after the send rejects with
    // CopySentError, so the caller can keep the message from a second delivery.
    async hold(message, delayMs, _reason, options) {
      const copy = (maxBytes: number) =>
        fitted(
          message.body,
          (body) => ({
            id: message.id,
            body: encode(body),
            sent: Math.max(0, message.attempts - 1),
            holds: (message.holds ?? 0) + (options?.addsHold === false ? 0 : 1),
          }),
          maxBytes,
        );
      await sendOne(queueUrl, copy, seconds(delayMs, MAX_DELAY_SECONDS));
      await deletes.add({ receipt: message.receipt }).catch((e: unknown) => {
        throw new CopySentError("held copy", e);
      });
      return true;
    },

    // Two calls, not atomic: a crash between them leaves the job on the source queue, where the
    // queue's redrive policy (maxReceiveCount) remains the safety net that moves it to the DLQ.
    // A delete that fails after the send rejects with CopySentError, so the caller can keep
    // the message from a second delivery and a second dead letter (lambda-sqs.ts).
    async deadLetter(message, error) {
      const failedAt = now();
      const letter = (maxBytes: number) =>
        fitted(
          message.body,
          (body) => ({
            id: message.id,
            body: encode(body),
            attempts: message.attempts,
            error: error.slice(0, MAX_ERROR_CHARS),
            failedAt,
          }),
          maxBytes,
        );
      await sendOne(deadLetterQueueUrl, letter);
      await deletes.add({ receipt: message.receipt }).catch((e: unknown) => {
        throw new CopySentError("dead letter", e);
      });
      return true;
    },

    // The listing hides each page while it reads on, then releases them all at once. Copies of
    // one job are listed once.
    async listDead(limit = 100) {
      if (limit <= 0) return [];
      const letters = new Map<string, DeadLetter<T>>();
      const receipts: string[] = [];
      try {
        const pageSize = () => Math.min(MAX_BATCH_ENTRIES, limit - letters.size);
        for await (const messages of deadLetterPages(pageSize)) {
          for (const message of messages) {
            if (message.ReceiptHandle !== undefined) receipts.push(message.ReceiptHandle);
            if (message.MessageId === undefined) continue;
            const letter = toDead(message);
            // A job dead-lettered twice (its delete failed, it came back elsewhere; or the
            // redrive policy moved it too) is one dead letter, as replay and drop take it: the
            // latest, with the last error.
            const known = letter && letters.get(letter.id);
            if (letter && (!known || known.failedAt <= letter.failedAt)) letters.set(letter.id, letter);
          }
          if (letters.size >= limit) break;
        }
      } finally {
        await releaseAll(deadLetterQueueUrl, receipts);
      }
      return [...letters.values()].sort((a, b) => a.failedAt - b.failedAt);
    },

    // Sends `{id, body}` back as a new message (so SQS counts receives from 1 again), then deletes
    // the dead letter: a crash in between duplicates a job, never loses one.
    replayDead(ids, keep) {
      return sweepDead(ids, {
        send: (chosen) =>
          sendAll(
            queueUrl,
            chosen.map((envelope) => ({
              id: envelope.id,
              text: toSqsJson({ id: envelope.id, body: envelope.body }),
              delaySeconds: 0,
            })),
          ),
        keep,
      });
    },

    // Also the DLQ messages that are not dead letters at all: all of them without ids, else those
    // named by the id listDead gives them.
    dropDead(ids) {
      return sweepDead(ids);
    },

    // Sends what waits for a batch. The client belongs to the caller, who may share it.
    async close() {
      await Promise.all([deletes.drain(), visibilityChanges.drain()]);
    },
  };
}

/**
 * Refuses a FIFO queue (SQS requires its name to end in `.fifo`), saying so: it takes no message
 * without a MessageGroupId, nor a DelaySeconds of a message's own, and this adapter sends every
 * job, held copy and dead letter with neither. SQS's own refusal on each send named only the
 * missing parameter, and on Lambda no notification reached the queue, and no dead letter the DLQ.
 */
function refuseFifo(url: string, which: string): void {
  if (/\.fifo\/?$/.test(url))
    throw new Error(
      `the SQS ${which} ${url} is a FIFO queue: hookgate needs standard queues (it sends jobs with no message group, and delays a held job on its own, which a FIFO queue refuses); use a standard queue and DLQ, as infra/aws/template.yaml makes them`,
    );
}

/** What the consumer reads of a queue's redrive policy. */
export interface RedrivePolicy {
  /** The receives after which SQS itself moves a message to the DLQ. */
  readonly maxReceiveCount: number;
  /** The ARN of the queue SQS moves it to, as the policy names it. */
  readonly deadLetterTargetArn: string | undefined;
}

/**
 * The queue's redrive policy, or undefined when it has none. Throws when SQS refuses the call (a
 * role without `sqs:GetQueueAttributes`) or the policy names no count.
 */
export async function readRedrivePolicy(
  client: SQSClient,
  queueUrl: string,
  signal?: AbortSignal,
): Promise<RedrivePolicy | undefined> {
  const result = await client.send(
    new GetQueueAttributesCommand({ QueueUrl: queueUrl, AttributeNames: ["RedrivePolicy"] }),
    signal ? { abortSignal: signal } : {},
  );
  const text = result.Attributes?.RedrivePolicy;
  if (!text) return undefined;
  let policy: unknown;
  try {
    policy = JSON.parse(text);
  } catch {
    throw new Error(`the queue's RedrivePolicy is not JSON: ${text}`);
  }
  const fields = (policy ?? {}) as { maxReceiveCount?: unknown; deadLetterTargetArn?: unknown };
  // SQS writes the count as a number; one set by hand may be a string of one.
  const count = Number(fields.maxReceiveCount);
  if (!Number.isInteger(count) || count < 1)
    throw new Error(`the queue's RedrivePolicy has no maxReceiveCount: ${text}`);
  const target = fields.deadLetterTargetArn;
  return { maxReceiveCount: count, deadLetterTargetArn: typeof target === "string" ? target : undefined };
}

/**
 * The domains of AWS's partitions, as the SDK's partitions give them: the commercial one's, China's,
 * the European Sovereign Cloud's and the ISO ones (`c2s.ic.gov`…).
 */
const PARTITION_DOMAINS = [
  "amazonaws.com",
  "amazonaws.com.cn",
  "amazonaws.eu",
  "c2s.ic.gov",
  "sc2s.sgov.gov",
  "cloud.adc-e.uk",
  "csp.hci.ic.gov",
];
/** The same partitions' dual-stack (IPv6) domains, in the same order. */
const DUAL_STACK_DOMAINS = [
  "api.aws",
  "api.amazonwebservices.com.cn",
  "api.amazonwebservices.eu",
  "api.aws.ic.gov",
  "api.aws.scloud",
  "api.cloud-aws.adc-e.uk",
  "api.aws.hci.ic.gov",
];

/** Any one of `domains`, its dots meant as dots. */
function oneOf(domains: readonly string[]): string {
  return `(?:${domains.map((domain) => domain.replaceAll(".", "\\.")).join("|")})`;
}
/** The region a host names, the one group of each form. */
const REGION = "([a-z0-9-]+)";
/** SQS's own name in a host, or its FIPS endpoint's. */
const SQS = "sqs(?:-fips)?";

/**
 * The hosts that name an SQS queue's region, each read whole: the regional endpoint
 * (`sqs.REGION.amazonaws.com`, `sqs-fips.…`), with a VPC endpoint's name before it and `vpce`
 * after the region (`vpce-….sqs.REGION.vpce.amazonaws.com`, regional or zonal); the legacy
 * `REGION.queue.amazonaws.com`; the dual-stack `sqs.REGION.api.aws`.
 */
const QUEUE_HOSTS = [
  new RegExp(`^(?:vpce-[a-z0-9-]+\\.)?${SQS}\\.${REGION}(?:\\.vpce)?\\.${oneOf(PARTITION_DOMAINS)}$`),
  new RegExp(`^${REGION}\\.queue\\.${oneOf(PARTITION_DOMAINS)}$`),
  new RegExp(`^${SQS}\\.${REGION}\\.${oneOf(DUAL_STACK_DOMAINS)}$`),
];

/**
 * The region of an AWS queue URL (one of QUEUE_HOSTS: `https://sqs.eu-west-1.amazonaws.com/…`,
 * its FIPS, dual-stack, legacy and VPC endpoint hosts, in each partition), or undefined for
 * another host. A VPC endpoint's host names the region of the SQS it reaches too, and the legacy
 * global `queue.amazonaws.com` is us-east-1's: read as none, a call to either was signed for
 * AWS_REGION (a Lambda function's own, a shell's profile), which SQS refuses for a queue of
 * another region. A port written out (`:443`) is no part of the host, nor is a trailing dot
 * (`amazonaws.com.`): read as naming none, such a URL's calls too were signed for AWS_REGION.
 */
export function queueUrlRegion(url: string): string | undefined {
  // A fully qualified name's trailing dot names the same host.
  const host = /^https?:\/\/([^/:]+)(?::\d*)?(?:\/|$)/i.exec(url)?.[1]?.toLowerCase().replace(/\.$/, "");
  if (host === undefined) return undefined;
  if (host === "queue.amazonaws.com") return "us-east-1";
  for (const form of QUEUE_HOSTS) {
    const region = form.exec(host)?.[1];
    if (region !== undefined) return region;
  }
  return undefined;
}

/**
 * The AWS SDK's logger for hookgate's SQS clients. Without one the SDK warns on the console by
 * itself when a queue URL's host is not its region's endpoint (`QueueUrl=… differs from SQSClient
 * resolved endpoint`: a legacy or VPC endpoint URL, a local server), naming the URL as given, user
 * name and password included: they are left out here. What it says of each call (its input, and
 * its error, which hookgate reports itself) stays unprinted, as it was.
 */
export const SQS_SDK_LOGGER: NonNullable<SQSClientConfig["logger"]> = {
  debug: () => undefined,
  info: () => undefined,
  warn: (...content: unknown[]) => console.warn(withoutUserinfoIn(format(...content))),
  error: () => undefined,
};

/** What to do about the AWS credentials a shell's command could not find. */
const CREDENTIALS_FIX =
  "set AWS_PROFILE to a profile of ~/.aws/config (run `aws sso login --profile NAME` first for an SSO one), or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (and AWS_SESSION_TOKEN with temporary ones)";

/**
 * A client for the AWS queue at `queueUrl`, from a shell (`hookgate dlq`): its calls are signed
 * for the URL's region, which the SDK otherwise took from AWS_REGION or the profile (missing:
 * "Region is missing"; another: every call refused), and credentials it could not find (none
 * set, an SSO session run out) say what to set. The error keeps its name and `$metadata`, which
 * `refusedWhole` reads.
 */
export function createSqsClientForShell(queueUrl: string): SQSClient {
  const region = queueUrlRegion(queueUrl);
  const client = new SQSClient({ logger: SQS_SDK_LOGGER, ...(region && { region }) });
  // Without an endpoint the SDK sends each call to its queue URL's host.
  namingUnreachedEndpoint(
    client,
    "check the host of the queue URL, and this machine's network (a proxy, a VPN)",
  );
  client.middlewareStack.add(
    (next) => async (args) => {
      try {
        return await next(args);
      } catch (e) {
        if (e instanceof Error && PROVIDER_ERRORS.has(e.name)) e.message = `${e.message}: ${CREDENTIALS_FIX}`;
        else if (!region && e instanceof Error && e.message === "Region is missing")
          e.message = `${e.message}: ${withoutUserinfo(queueUrl)} names none; set AWS_REGION to the queue's`;
        throw e;
      }
    },
    { step: "initialize", name: "hookgateCredentialsFix" },
  );
  return client;
}

/** A client for a local SQS server (local-aws-sqs in tests, or one a developer runs). */
export function createSqsClientForLocal(endpoint: string): SQSClient {
  const client = new SQSClient({
    logger: SQS_SDK_LOGGER,
    region: "us-east-1",
    endpoint,
    credentials: { accessKeyId: "local", secretAccessKey: "local" },
  });
  namingUnreachedEndpoint(client, "check that this is the SQS server's address, and that it is running");
  return client;
}

/** Node's codes for a connection that was never made, and what each says of the endpoint. */
const UNREACHED = new Map([
  ["ECONNREFUSED", "refused the connection"],
  ["ENOTFOUND", "does not resolve"],
  ["EAI_AGAIN", "could not be looked up just now"],
  ["EHOSTUNREACH", "cannot be reached"],
  ["ENETUNREACH", "cannot be reached"],
]);

/**
 * Says which endpoint a connection that was never made was for, and what to `check`: Node's error
 * alone ("connect ECONNREFUSED 127.0.0.1:9") named neither SQS nor a URL to fix. The endpoint is
 * the request's own, by protocol, host and port: never the user and password a URL may carry.
 * Before the retry step, so that the message is added once, to the error of the last try.
 */
function namingUnreachedEndpoint(client: SQSClient, check: string): void {
  client.middlewareStack.add(
    (next) => async (args) => {
      try {
        return await next(args);
      } catch (e) {
        const how = UNREACHED.get(String((e as NodeJS.ErrnoException | undefined)?.code));
        const request = args.request as { protocol?: unknown; hostname?: unknown; port?: unknown };
        if (how && e instanceof Error && typeof request.hostname === "string") {
          const host = request.hostname.includes(":")
            ? `[${request.hostname.replace(/^\[|\]$/g, "")}]`
            : request.hostname;
          const port = typeof request.port === "number" ? `:${request.port}` : "";
          e.message = `the SQS endpoint ${String(request.protocol)}//${host}${port} ${how} (${e.message}): ${check}`;
        }
        throw e;
      }
    },
    { step: "build", name: "hookgateUnreachedEndpoint" },
  );
}

/**
 * Of `taken` (a page's dead letters, by job id and receipt), after their delete failed with `d`:
 * the jobs with a copy on the page that is left or may be (`left`), and those with one surely
 * left (`surely`: refused in an answer). SQS deleted every receipt it did not name as refused
 * (deleteAll); a delete that failed whole (no answer) named none, and may have deleted any.
 */
function leftBy(
  taken: readonly { readonly id: string; readonly receipt: string }[],
  d: unknown,
): { left: Set<string>; surely: Set<string> } {
  const refused = notDeletedBy(d);
  const maybe = maybeDeletedBy(d);
  return {
    left: new Set(taken.filter((t) => !refused || refused.has(t.receipt)).map((t) => t.id)),
    surely: new Set(taken.filter((t) => refused?.has(t.receipt) && !maybe.has(t.receipt)).map((t) => t.id)),
  };
}

/**
 * The queue port: at-least-once delivery of delivery jobs, with per-message delay, visibility
 * timeouts, attempt counts and a dead-letter queue. One file per backend in
 * src/adapters/queue/ (sqlite, sqs, memory; Cloudflare Queues on Workers), and one contract
 * suite (test/contract/) that every backend must pass.
 */
import { errorMessage } from "./errors.js";

export interface OutgoingMessage<T> {
  /** Stable id of the job; the same on every attempt and every replay. */
  readonly id: string;
  readonly body: T;
  /** Delay before the first delivery, in ms (0 by default). */
  readonly delayMs?: number | undefined;
  /**
   * What the job is for (its sink): a consumer can ask `receive` to skip a group whose jobs it
   * already holds enough of. Backends that cannot filter (SQS) ignore it.
   */
  readonly group?: string | undefined;
}

export interface ReceivedMessage<T> {
  readonly id: string;
  readonly body: T;
  /**
   * 1 on the first delivery, 2 on the first retry, ...: the sends, not the receives. A receive
   * that ended in a `hold` (nothing was sent) is not counted.
   */
  readonly attempts: number;
  /** How many receives ended in a `hold` before this one (0 when absent). */
  readonly holds?: number | undefined;
  /** Backend handle for ack / retry / dead-letter (an SQS receipt handle, a lease token). */
  readonly receipt: string;
  /**
   * The backend's id of this message where a job can be on the queue more than once (SQS's
   * MessageId, the same on every receive): a job sent again, a replayed dead letter, is another.
   */
  readonly messageId?: string;
  /**
   * Why this job's previous receive recorded no outcome, where the backend knows it (SQLite: the
   * delivery thread or the process stopped while delivering it, and the next start took its lease
   * back). That receive counted as an attempt, and a job received again past its sink's last
   * attempt is dead-lettered with this reason, not sent: one that ends the delivery thread every
   * time it is sent would otherwise take it down for ever.
   */
  readonly interrupted?: string | undefined;
}

export interface HoldOptions {
  /**
   * False for a wait that is no hold either (the policy does not load): the message keeps the
   * holds it had, so that MAX_HOLDS counts only the sink's holds. True by default.
   */
  readonly addsHold?: boolean;
}

/**
 * How `listDead` names a message on an SQS DLQ that is no dead letter (a record the redrive policy
 * moved as it came): `unreadable-<MessageId>`. It has no job to replay; `dropDead` deletes it.
 */
export const UNREADABLE_PREFIX = "unreadable-";

export interface DeadLetter<T> {
  readonly id: string;
  /**
   * The job, or the text of a message that is none: on SQLite a stored job that does not parse,
   * on SQS a DLQ message that is no dead letter (`UNREADABLE_PREFIX`).
   */
  readonly body: T | string;
  readonly attempts: number;
  readonly error: string;
  /** Epoch ms when it was dead-lettered. */
  readonly failedAt: number;
}

/** What `replayDead` or `dropDead` did. */
export interface DeadSwept {
  /** How many dead letters it replayed or dropped. */
  readonly count: number;
  /**
   * The ids given that name no dead letter (a typo, or one replayed or dropped already), each
   * once, in the order given; none when it was given no ids. On SQS, also one whose every copy
   * another reader (a listing, a replay) holds hidden while this one reads the DLQ.
   */
  readonly missing: readonly string[];
}

export interface Queue<T> {
  /**
   * True when `receive` leaves out the groups in `skipGroups` (SQLite, memory); SQS and
   * Cloudflare Queues cannot, so a consumer there cannot cap one sink's share of a receive.
   */
  readonly skipsGroups: boolean;
  send(messages: readonly OutgoingMessage<T>[]): Promise<void>;
  /**
   * Up to `max` visible messages, each hidden for `visibilityMs` unless acked or retried first.
   * Messages of a group in `skipGroups` are left for a later receive where the backend can
   * filter (`skipsGroups`); SQS and Cloudflare Queues ignore it.
   */
  receive(max: number, visibilityMs: number, skipGroups?: readonly string[]): Promise<ReceivedMessage<T>[]>;
  /**
   * Ack, retry and dead-letter answer whether they did it: false when the receipt is stale (the
   * lease ran out and the job was received again, or it was settled already), which changes
   * nothing. SQS cannot tell (a delete with an older receipt may be accepted) and answers true.
   */
  ack(message: ReceivedMessage<T>): Promise<boolean>;
  /** Visible again after `delayMs`; the attempt count keeps growing. */
  retry(message: ReceivedMessage<T>, delayMs: number, error: string): Promise<boolean>;
  /**
   * Visible again after `delayMs`, this receive not counted as an attempt but as a hold (nothing
   * was sent: a sink's rate limit, or too little time). Where the backend cannot lower its own
   * receive count (SQS, Cloudflare Queues) the job goes back as a new message carrying its counts,
   * and the old one is removed; when only that removal fails it rejects with a `CopySentError`
   * ("held copy"): the copy is in, and the message must not be delivered again.
   */
  hold(message: ReceivedMessage<T>, delayMs: number, reason: string, options?: HoldOptions): Promise<boolean>;
  /**
   * Moves the message to the dead-letter queue with its last error and its `attempts` (a caller
   * whose last receive sent nothing passes one fewer: the dead letter counts the sends). Where that takes two calls
   * (SQS: a send to the DLQ, then a delete) and only the second fails, it rejects with a
   * `CopySentError` ("dead letter"): the dead letter is in, and the message must not be delivered
   * again.
   */
  deadLetter(message: ReceivedMessage<T>, error: string): Promise<boolean>;
  listDead(limit?: number): Promise<DeadLetter<T>[]>;
  /**
   * Sends dead letters back to the queue (all when `ids` is undefined), attempts reset; says how
   * many, and which ids given name no dead letter. One that can stop part way (SQS, a page at a
   * time) rejects with a SweepStoppedError saying how many it sent first, and how many more it may
   * have sent (a send with no answer). With `keep`, only the dead letters whose stored body it
   * keeps (a body that does not parse is kept); the others stay dead letters, uncounted, and are
   * not missing.
   */
  replayDead(ids?: readonly string[], keep?: (body: unknown) => boolean): Promise<DeadSwept>;
  /**
   * Deletes dead letters for good (all when `ids` is undefined); says how many, and which ids
   * given name no dead letter. One that can stop part way (SQS) rejects with a SweepStoppedError
   * saying how many it deleted first.
   */
  dropDead(ids?: readonly string[]): Promise<DeadSwept>;
  close(): Promise<void>;
}

/**
 * A copy of the message was sent (its dead letter to the DLQ, or a held job's copy back to the
 * queue) but the original could not be removed (SQS's delete failed): it will come back. Whoever
 * settles it must not deliver it again, nor send a second copy. Its `cause` is the delete's error.
 */
export class CopySentError extends Error {
  constructor(
    readonly copy: "dead letter" | "held copy",
    cause: unknown,
  ) {
    super(`${copy} sent, but the message was not removed from the queue: ${errorMessage(cause)}`, { cause });
    this.name = "CopySentError";
  }
}

/** By name, not class: a bundle that splits chunks may hold the class twice. */
export function isCopySent(e: unknown, copy: CopySentError["copy"]): e is CopySentError {
  return e instanceof Error && e.name === "CopySentError" && (e as CopySentError).copy === copy;
}

/**
 * A send that put some of its messages on the queue and failed the others (SQS: a batch whose
 * request failed as a whole, entries SQS refused; Cloudflare: one `sendBatch` of several; Node's
 * intake journal: a send too long for one line, written as several, one of which failed).
 * `notSent` holds the ids of the messages not sent; the send's other messages are on the queue.
 * Of `notSent`, `unsure` holds those whose request may have been carried out all the same: no
 * answer said it was refused (SQS: a connection that failed, a timeout, a 5xx, or a 4xx to a
 * request the SDK had sent before), so they may be on the queue.
 */
export class SendFailedError extends Error {
  readonly notSent: readonly string[];
  readonly unsure: readonly string[];
  constructor(message: string, notSent: readonly string[], unsure: readonly string[] = []) {
    super(message);
    this.name = "SendFailedError";
    this.notSent = notSent;
    this.unsure = unsure;
  }
}

/**
 * The ids of the messages a failed send did not send, when its error says (`SendFailedError`);
 * undefined when any of them may be missing, as after a send that failed as a whole. By name,
 * not class (isCopySent).
 */
export function notSentBy(e: unknown): ReadonlySet<string> | undefined {
  return idsOf(e, "SendFailedError", "notSent");
}

/**
 * Of the messages a failed send did not send (notSentBy), those that may be on the queue all the
 * same: their request got no answer (`SendFailedError`'s `unsure`). By name (isCopySent).
 */
export function maybeSentBy(e: unknown): ReadonlySet<string> {
  return idsOf(e, "SendFailedError", "unsure") ?? new Set();
}

/**
 * The ids or receipts an error of class `name` (by name, not class: isCopySent) holds in its
 * array `field`; undefined for another error, or one without that array.
 */
function idsOf(e: unknown, name: string, field: string): ReadonlySet<string> | undefined {
  if (!(e instanceof Error) || e.name !== name) return undefined;
  const ids = (e as unknown as Record<string, unknown>)[field];
  return Array.isArray(ids) ? new Set(ids as string[]) : undefined;
}

/**
 * A delete of several messages that the backend answered, refusing some (SQS: the entries a
 * DeleteMessageBatch names as failed). `refused` holds the receipts it refused; the delete's
 * other messages are gone. Of `refused`, `unsure` holds those whose last request got no answer
 * (SQS: the request that tried again an entry SQS had failed on its side): they may be gone too.
 */
export class DeleteFailedError extends Error {
  readonly refused: readonly string[];
  readonly unsure: readonly string[];
  constructor(message: string, refused: readonly string[], unsure: readonly string[] = []) {
    super(message);
    this.name = "DeleteFailedError";
    this.refused = refused;
    this.unsure = unsure;
  }
}

/**
 * The receipts a failed delete did not delete, when its error says (`DeleteFailedError`);
 * undefined when any of them may be deleted or not, as after a delete that got no answer. By
 * name, not class (isCopySent).
 */
export function notDeletedBy(e: unknown): ReadonlySet<string> | undefined {
  return idsOf(e, "DeleteFailedError", "refused");
}

/** Of the receipts a failed delete did not delete (notDeletedBy), those it may have: `DeleteFailedError`'s `unsure`. */
export function maybeDeletedBy(e: unknown): ReadonlySet<string> {
  return idsOf(e, "DeleteFailedError", "unsure") ?? new Set();
}

/**
 * A replay or a drop of dead letters that stopped part way (SQS pages through the DLQ, and a
 * page's send or delete can fail after earlier pages went through): `done` dead letters were
 * sent back to the queue (a replay) or deleted (a drop) before it stopped, so the operator knows
 * what is done already. Its message is its cause's.
 */
export class SweepStoppedError extends Error {
  readonly done: number;
  /**
   * Dead letters besides `done` that may be done too: of the page it stopped on, a drop's whose
   * delete got no answer, a replay's whose send got none.
   */
  readonly unsure: number;
  constructor(done: number, cause: unknown, unsure = 0) {
    super(errorMessage(cause), { cause });
    this.name = "SweepStoppedError";
    this.done = done;
    this.unsure = unsure;
  }
}

/** What a replay or drop that stopped did first, when its error says; by name (isCopySent). */
export function sweptBefore(e: unknown): { done: number; unsure: number } | undefined {
  if (!(e instanceof Error) || e.name !== "SweepStoppedError") return undefined;
  const { done, unsure } = e as Partial<SweepStoppedError>;
  if (typeof done !== "number") return undefined;
  return { done, unsure: typeof unsure === "number" ? unsure : 0 };
}

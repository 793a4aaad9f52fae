/**
 * Notify jobs the intake journal could not take (a full disk: ENOSPC; EIO; a read-only data dir),
 * held in memory and appended again, oldest first, once it takes them. A full disk is often brief
 * (logs rotated, space freed): without the hold, every event answered meanwhile was logged as
 * `enqueue failed` and never delivered.
 *
 * While anything is held, a new send is held behind it, never appended before it: the journal
 * keeps the order the events were answered in. `retry` appends what is held; `serve` calls it
 * after the answer of each send it held and every second (node.ts), never on an answer's path.
 *
 * The hold is bounded in bytes (the jobs' JSON, about what the journal would have written): past
 * the bound the newest send is refused, not held (its error names the bound), so the held events
 * stay the oldest run of the outage, each delivered or lost whole, and one event is never
 * delivered without the ones answered just before it. What is held is lost with the process.
 */
import { errorMessage } from "../../core/errors.js";
import { notSentBy, type OutgoingMessage, SendFailedError } from "../../core/queue.js";

/**
 * The most bytes held, 64 MiB: as many as serve's bodies still arriving (README, "Node") and the
 * longest journal line, so the hold at most doubles what a busy gateway holds in memory anyway,
 * well within Node's default heap. An ordinary event's jobs are a few KiB: thousands of events,
 * minutes of a busy gateway's notify traffic, enough to ride out a disk freed by a log rotation.
 */
export const HOLD_BYTES = 64 * 1024 * 1024;

export interface JournalHold<T> {
  /**
   * Appends a send's jobs, or, while the journal fails or anything is held, holds them behind what
   * is held: undefined when appended, else `{ error }`, the append's error (none when the send
   * was held behind others without a try). Throws, holding nothing, when they would take the
   * held bytes past the bound: that send is lost.
   */
  send(messages: readonly OutgoingMessage<T>[]): undefined | { readonly error: unknown };
  /** Appends what is held, oldest first, until an append fails; returns how many sends it wrote. */
  retry(): number;
  /** What is held: sends, jobs, bytes. */
  size(): { readonly sends: number; readonly jobs: number; readonly bytes: number };
  /** The sends held, oldest first. */
  held(): readonly (readonly OutgoingMessage<T>[])[];
  /**
   * Holds nothing more (serve stops, and has told what is held as lost): a send that fails
   * throws, as before the hold.
   */
  close(): void;
}

interface Held<T> {
  messages: readonly OutgoingMessage<T>[];
  bytes: number;
}

export function createJournalHold<T>(
  append: (messages: readonly OutgoingMessage<T>[]) => void,
  limitBytes = HOLD_BYTES,
): JournalHold<T> {
  const queue: Held<T>[] = [];
  let bytes = 0;
  let jobs = 0;
  let closed = false;

  const hold = (messages: readonly OutgoingMessage<T>[], error: unknown) => {
    const size = bytesOf(messages);
    if (bytes + size > limitBytes) {
      const why = `${error === undefined ? "the intake journal cannot be written" : `the intake journal could not be written (${errorMessage(error)})`}, and ${
        queue.length > 0
          ? `the ${bytes} bytes of notify jobs held in memory until it can, with this event's ${size}, would pass`
          : `this event's ${size} bytes of notify jobs pass`
      } the ${limitBytes} bytes serve holds at most: the event is dropped; free space on the data dir's disk or make it writable`;
      // Of a send written in part, only the jobs not written are lost.
      throw error instanceof SendFailedError
        ? new SendFailedError(
            why,
            messages.map((m) => m.id),
          )
        : new Error(why);
    }
    queue.push({ messages, bytes: size });
    bytes += size;
    jobs += messages.length;
  };

  /** Of a send that failed in part (journal.ts "A send's lines"), the jobs not written. */
  const notWritten = (messages: readonly OutgoingMessage<T>[], error: unknown) => {
    const notSent = notSentBy(error);
    return notSent === undefined ? messages : messages.filter((m) => notSent.has(m.id));
  };

  return {
    send(messages) {
      // Once closed, held sends are told lost: a later one is refused as the journal refuses it,
      // or written, never also held.
      if (queue.length === 0 || closed) {
        try {
          append(messages);
          return undefined;
        } catch (e) {
          if (closed) throw e;
          hold(notWritten(messages, e), e);
          return { error: e };
        }
      }
      hold(messages, undefined);
      return { error: undefined };
    },
    retry() {
      let written = 0;
      for (const first of queue) {
        try {
          append(first.messages);
        } catch (e) {
          const left = notWritten(first.messages, e);
          if (left !== first.messages) {
            const size = bytesOf(left);
            bytes += size - first.bytes;
            jobs -= first.messages.length - left.length;
            first.messages = left;
            first.bytes = size;
          }
          break;
        }
        bytes -= first.bytes;
        jobs -= first.messages.length;
        written++;
      }
      queue.splice(0, written);
      return written;
    },
    size: () => ({ sends: queue.length, jobs, bytes }),
    held: () => queue.map((h) => h.messages),
    close() {
      closed = true;
    },
  };
}

/** The bytes of the jobs' JSON; one too long for a string never fits. */
function bytesOf(messages: readonly OutgoingMessage<unknown>[]): number {
  let size = 0;
  try {
    for (const m of messages) size += Buffer.byteLength(JSON.stringify(m));
  } catch {
    return Number.POSITIVE_INFINITY;
  }
  return size;
}

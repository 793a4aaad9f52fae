/**
 * Reads a request body as UTF-8 text, up to a byte limit, without trusting Content-Length.
 *
 * An oversized body is still read to its end (discarded, up to DRAIN_LIMIT_BYTES) before the
 * answer goes out: a server that answers and closes while the client is still sending makes
 * the kernel reset the connection, and the client (Claude Code's axios, deepcode's undici) then
 * sees ECONNRESET or EPIPE instead of the fail-mode decision, which Claude Code treats as "let
 * it through". Only its first bytes are kept, so the event can still be named in the answer.
 *
 * Runtime-free: the Hono route feeds it a web ReadableStream (`readBody`); Node's listener feeds
 * it an IncomingMessage's chunks (`readBodyChunks` with src/entry/node-listener.ts `streamChunks`).
 */
import { errorMessage, type RequestError } from "../core/errors.js";
import { sniffEventName } from "../core/events.js";
import { MAX_BODY_BYTES_LIMIT } from "../core/policy-schema.js";
import { strictUtf8 } from "../core/strict-utf8.js";

const SNIFF_BYTES = 64 * 1024;
/** Past this many bytes an oversized body is no longer drained and its connection is closed. */
export const DRAIN_LIMIT_BYTES = 64 * 1024 * 1024;
/**
 * Deepest JSON nesting accepted (RFC 8259 §9 lets a parser limit it). V8 parses any depth, but
 * JSON.stringify and every recursive walk after it overflow the stack a few thousand levels
 * down; no hook client nests a body anywhere near this.
 */
export const MAX_JSON_DEPTH = 1000;

/** A runtime's own limit on a body under the policy's (WORKERS_MAX_BODY_BYTES), and what sets it. */
export interface BodyCeiling {
  readonly bytes: number;
  readonly setBy: string;
}

/**
 * A body's limit and what sets it, as a refusal names it: the policy's `defaults.maxBodyBytes`
 * (a plain number), or a runtime's own ceiling under it.
 */
export type BodyLimit = number | BodyCeiling;

/**
 * The largest body a Worker reads, whatever `defaults.maxBodyBytes` allows: an isolate has 128 MB
 * of memory, and a body is held as bytes, text and parsed JSON at once. In workerd a 48 MiB body
 * grew the process by 130 to 160 MB (two-byte or ASCII text), about three times its size; past
 * the limit the isolate is ended, and the client gets a 5xx, which Claude Code lets through.
 */
export const WORKERS_MAX_BODY_BYTES = 16 * 1024 * 1024;

export type BodyResult =
  | { readonly ok: true; readonly text: string }
  | {
      readonly ok: false;
      readonly error: RequestError;
      /** Bytes of the body were left unread: the connection cannot carry another request. */
      readonly unread?: boolean;
    };

/**
 * The chunks of a body, one at a time: a web stream's reader, or a Node IncomingMessage's events
 * (node-listener.ts `streamChunks`). Reading simply stops when the body is given up; nothing is cancelled or destroyed,
 * since destroying a Node request destroys its socket, and the answer with it.
 */
export interface ChunkSource {
  next(): Promise<IteratorResult<Uint8Array, unknown>>;
}

export async function readBody(
  request: Request,
  maxBytes: BodyLimit,
  startDeadline?: () => BodyDeadline,
  budget?: BodyBudget,
): Promise<BodyResult> {
  const stream = request.body;
  if (!stream) return { ok: true, text: "" };
  const reader = stream.getReader();
  const source: ChunkSource = {
    next: async () => {
      const chunk = await reader.read();
      return chunk.done ? { done: true, value: undefined } : { done: false, value: chunk.value };
    },
  };
  return readBodyChunks(source, request.headers.get("content-length"), maxBytes, startDeadline, budget);
}

/**
 * A body already in hand (an event file `simulate` or `test` reads, a Lambda event's), checked as
 * a request's body is: the size limit, UTF-8, the nesting depth. So they judge what `serve` would.
 */
export function bodyFromBytes(bytes: Uint8Array, maxBytes: number): Promise<BodyResult> {
  let given = false;
  const source: ChunkSource = {
    next: async () => {
      if (given) return { done: true, value: undefined };
      given = true;
      return { done: false, value: bytes };
    },
  };
  return readBodyChunks(source, String(bytes.byteLength), maxBytes);
}

/**
 * A limit on how long a body may take to arrive (`bodyDeadline`, on Node and Workers):
 * `late` rejects, with the reason, once it has passed; `clear` ends it when the reading does.
 */
export interface BodyDeadline {
  readonly late: Promise<never>;
  clear(): void;
}

/**
 * How long a hook body may take to arrive, from the request's headers, on every hook route of
 * Node's `serve` (node.ts gives it to its listener and to the app) and of the Worker. A client
 * that sends its body slower (a stalled connection, a trickle) gets the fail mode's decision with
 * BODY_UNREADABLE: on Node, its connection then closed, well before Node's own `requestTimeout`
 * (300 s) would answer a bare 408; on Workers at all, where the runtime would wait for as long as
 * the client stays connected. No hook client takes anywhere near this: Claude Code and deepcode
 * send the whole body at once.
 */
export const BODY_DEADLINE_MS = 60_000;

/** A body deadline of `ms` from now, on a timer that keeps no Node process alive. */
export function bodyDeadline(ms = BODY_DEADLINE_MS): BodyDeadline {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () =>
        reject(
          new Error(`it did not all arrive within ${ms / 1000} s; the client sent it too slowly or stalled`),
        ),
      ms,
    );
  });
  // workerd's timers are numbers, with nothing to unref.
  (timer as { unref?: () => void } | undefined)?.unref?.();
  // Seen by the reading's race; should a reading end without clearing it, its rejection is no
  // process-ending unhandled one.
  late.catch(() => {});
  return { late, clear: () => clearTimeout(timer) };
}

/**
 * The same reading over any chunk source, with the request's Content-Length as sent (or null).
 * With `startDeadline`, a body not ended by its deadline is not read (BODY_UNREADABLE): a stalled or
 * trickling client gets the fail mode's decision, where Node's own `requestTimeout` would answer
 * a bare 408 at 300 s.
 */
export async function readBodyChunks(
  source: ChunkSource,
  contentLength: string | null | undefined,
  limit: BodyLimit,
  startDeadline?: () => BodyDeadline,
  budget?: BodyBudget,
): Promise<BodyResult> {
  const { bytes: maxBytes, setBy } =
    typeof limit === "number" ? { bytes: limit, setBy: "defaults.maxBodyBytes" } : limit;
  const declared = declaredLength(contentLength);
  const chunks: Uint8Array[] = [];
  let kept = 0;
  let size = 0;
  // A declared length over the limit is refused at once: nothing past the sniffed head is kept.
  let over = declared > maxBytes;
  // Started with the reading, so that a body never read never leaves one running.
  const deadline = startDeadline?.();
  const hold = budget?.hold();
  try {
    for (;;) {
      const { done, value } = await (deadline ? Promise.race([source.next(), deadline.late]) : source.next());
      if (done) break;
      const chunk = value as Uint8Array;
      size += chunk.byteLength;
      over ||= size > maxBytes;
      if (!over || kept < SNIFF_BYTES) {
        // Refused, the chunk that came still names the event, for the answer's shape.
        if (hold && !hold.take(chunk.byteLength)) return busy([...chunks, chunk], kept + chunk.byteLength);
        chunks.push(chunk);
        kept += chunk.byteLength;
      }
      // Past the drain limit (or declared past it) the rest is not worth reading: the first
      // chunk has the event name, and the connection is closed after the answer.
      if (over && Math.max(size, declared) > DRAIN_LIMIT_BYTES) {
        return tooLarge(chunks, kept, Math.max(size, declared), maxBytes, setBy, true);
      }
    }
  } catch (e) {
    // The client went away, or (Node's listener) sent too slowly: what came is named, the rest
    // was never read, so the connection cannot carry another request.
    return {
      ok: false,
      unread: true,
      error: {
        code: "BODY_UNREADABLE",
        message: `the request body could not be read (${errorMessage(e)})`,
        eventName: sniffHead(chunks, kept),
      },
    };
  } finally {
    deadline?.clear();
    hold?.end();
  }
  if (over) return tooLarge(chunks, kept, Math.max(size, declared), maxBytes, setBy, false);
  return decodeBody(concat(chunks, size));
}

/**
 * The bytes of request bodies one gateway holds while they arrive (Node's `serve`, a Worker's
 * isolate): without a bound, clients that each send most of a maximal body and stall hold it all
 * until the body deadline, and a few hundred of them run the process out of memory. A body that
 * would take the budget past its limit is given up (its connection closed after the answer); one
 * body alone is always read, however large the policy lets it be.
 */
export interface BodyBudget {
  /** A share for one body (or one hook waiting on remote rules), holding nothing yet. */
  hold(): BodyHold;
}

/** What one body holds of a budget (`BodyBudget.hold`). */
interface BodyHold {
  /**
   * Takes `bytes` more, or answers false and takes nothing when that would pass the limit while
   * other holds have some of it.
   */
  take(bytes: number): boolean;
  /** Gives back all it took; nothing the second time, or once the budget dropped it as stale. */
  end(): void;
}

/**
 * When a budget's holds go stale (`createBodyBudget`): `holdMs` after each is made, by
 * `monotonic`, its request is over at the latest, and STALE_HOLD_GRACE_MS after that the budget
 * drops what it still holds.
 */
export interface HoldExpiry {
  readonly holdMs: number;
  readonly monotonic: () => number;
}

/**
 * How long past its expiry a hold stays counted when it is never ended: a Worker's request the
 * runtime stopped (past its CPU limit, or 30 s after its client hung up) runs none of its code
 * again, its `finally` included, as remote-actions.ts STALE_SLOT_GRACE_MS says of model slots.
 */
export const STALE_HOLD_GRACE_MS = 1000;

/**
 * Node's default: 64 MiB, 64 bodies at the default 1 MiB limit, thousands of usual hook bodies.
 * It is the largest `defaults.maxBodyBytes` too, so one body of any allowed size always fits.
 */
export const BODY_BUDGET_BYTES = MAX_BODY_BYTES_LIMIT;

/**
 * Node's budget for the bodies of requests whose token names no team (a mistyped token, or a
 * caller that has none), apart from BODY_BUDGET_BYTES: eight bodies at the default limit. Held in
 * the one budget, 64 such bodies of 1 MiB, stalled, had every team's hook answered
 * BODY_UNREADABLE in its fail mode; now they fill only this one.
 */
export const UNAUTHENTICATED_BODY_BUDGET_BYTES = 8 * 1024 * 1024;

/**
 * Node's budget for what requests running prompt and forward rules hold of their bodies
 * (remote-actions.ts `waitingBudget`), apart from BODY_BUDGET_BYTES: arriving, a body is bounded
 * by that; arrived, it is held (parsed, and as text for a forward rule) until the model or hook
 * server answers, and hooks waiting on a slow one held without bound. 64 MiB, the largest
 * `defaults.maxBodyBytes` too, so one request of any allowed size always runs its rules.
 */
export const WAITING_BODY_BUDGET_BYTES = MAX_BODY_BYTES_LIMIT;

/**
 * The budget of requests whose prompt and forward rules are all shadow rules (remote-actions.ts
 * `shadowWaitingBudget`), on Node and for a Worker's isolate, apart from the enforcing rules'
 * (WAITING_BODY_BUDGET_BYTES, a Worker's WORKERS_BODY_BUDGET_BYTES): a shadow rule must never
 * change what the enforcing rules answer, and hooks waiting on a slow shadow model in the one
 * budget had other hooks' enforcing rules answered with their onError. Past it a shadow rule is
 * only skipped, so it is smaller: eight bodies at the default limit, as UNAUTHENTICATED_BODY_BUDGET_BYTES.
 */
export const SHADOW_WAITING_BODY_BUDGET_BYTES = 8 * 1024 * 1024;

/**
 * A Worker's budget, for its whole isolate, of the bodies its hooks hold while they arrive and
 * while they wait on prompt and forward rules (counted as WAITING_BODY_BUDGET_BYTES counts them),
 * in one: an isolate has 128 MB of memory for every request it serves at once, and one that runs
 * out answers a 5xx, which Claude Code lets through. In workerd a body still arriving grew the
 * process by about 1.5 times its size (four of 16 MiB, stalled, by 88 MB; twelve of 4 MiB by
 * 71 MB), and one read whole by up to 4.6 times at its peak (74 MB for 16 MiB). 32 MiB, two
 * bodies at WORKERS_MAX_BODY_BYTES, is about 50 MB held, leaving the rest to the body being
 * decoded, parsed and logged (infra/README.md has the figures); one body alone is always read.
 */
export const WORKERS_BODY_BUDGET_BYTES = 2 * WORKERS_MAX_BODY_BYTES;

/**
 * What a budget holds, its limit, and how many takes it refused (each a body or a hook refused
 * for it): read by `serve`'s `/metrics` at each scrape, never on a request's path.
 */
interface BodyBudgetReadings {
  readonly limitBytes: number;
  heldBytes(): number;
  refused(): number;
}

/**
 * A budget of `limitBytes`. With `expiry` (a Worker's), a hold never ended stops counting
 * STALE_HOLD_GRACE_MS past its expiry, looked at only when a take would be refused and when the
 * readings are read: a stopped request's bytes would otherwise stay taken for the isolate's life,
 * and two 16 MiB bodies had every later hook refused. Without it (Node's, where every `finally`
 * runs) a hold counts until it ends.
 */
export function createBodyBudget(
  limitBytes = BODY_BUDGET_BYTES,
  expiry?: HoldExpiry,
): BodyBudget & BodyBudgetReadings {
  let held = 0;
  let refused = 0;
  /** The holds, oldest first: one `holdMs` for them all, so their expiries come in this order too. */
  const holds = new Set<{ bytes: number; readonly until: number }>();
  const dropStale = () => {
    if (!expiry) return;
    const now = expiry.monotonic();
    for (const hold of holds) {
      if (hold.until + STALE_HOLD_GRACE_MS > now) break;
      holds.delete(hold);
      held -= hold.bytes;
    }
  };
  return {
    hold() {
      const hold = { bytes: 0, until: expiry ? expiry.monotonic() + expiry.holdMs : 0 };
      holds.add(hold);
      const fits = (bytes: number) => held <= hold.bytes || held + bytes <= limitBytes;
      return {
        take(bytes) {
          if (!fits(bytes)) dropStale();
          // A hold dropped as stale takes nothing more: its request is over its time.
          if (!fits(bytes) || !holds.has(hold)) {
            refused++;
            return false;
          }
          held += bytes;
          hold.bytes += bytes;
          return true;
        },
        end() {
          if (holds.delete(hold)) held -= hold.bytes;
        },
      };
    },
    limitBytes,
    heldBytes: () => {
      dropStale();
      return held;
    },
    refused: () => refused,
  };
}

function busy(chunks: Uint8Array[], kept: number): BodyResult {
  return {
    ok: false,
    unread: true,
    error: {
      code: "BODY_UNREADABLE",
      message:
        "the gateway holds as many bytes of other requests' bodies as it may, so this one was not read; it may be sent again",
      eventName: sniffHead(chunks, kept),
    },
  };
}

/** Whether bytes start with gzip's magic number (RFC 1952): compressed, they are no text. */
export function isGzip(bytes: Uint8Array): boolean {
  return bytes[0] === 0x1f && bytes[1] === 0x8b;
}

/** UTF-8 text of a complete body, refused when it is not UTF-8 or nests JSON too deep. */
export function decodeBody(bytes: Uint8Array): BodyResult {
  let text: string | undefined;
  try {
    text = strictUtf8(bytes);
  } catch (e) {
    return {
      ok: false,
      error: {
        code: "BODY_TOO_LARGE",
        message: `the request body is ${bytes.byteLength} bytes, too long to hold as text (${errorMessage(e)}); lower defaults.maxBodyBytes`,
        eventName: sniffEventName(new TextDecoder().decode(bytes.subarray(0, SNIFF_BYTES))),
      },
    };
  }
  if (text === undefined) {
    return {
      ok: false,
      error: {
        code: "BODY_NOT_UTF8",
        // A client that compresses its request (Content-Encoding is not read).
        message: `the request body is not valid UTF-8${isGzip(bytes) ? " (it is gzip-compressed: send it uncompressed)" : ""}`,
        eventName: sniffEventName(new TextDecoder().decode(bytes.subarray(0, SNIFF_BYTES))),
      },
    };
  }
  if (jsonNestingExceeds(text, MAX_JSON_DEPTH)) {
    return {
      ok: false,
      error: {
        code: "MALFORMED_JSON",
        message: `the hook's body nests JSON deeper than ${MAX_JSON_DEPTH} levels; hookgate reads no deeper`,
        eventName: sniffEventName(text),
      },
    };
  }
  return { ok: true, text };
}

/**
 * Whether brackets outside strings nest deeper than `max`. One pass, no allocation; exact for
 * valid JSON, and for anything else JSON.parse refuses the body anyway.
 */
export function jsonNestingExceeds(text: string, max: number): boolean {
  if (text.length <= max) return false;
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++;
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x7b || c === 0x5b) {
      if (++depth > max) return true;
    } else if (c === 0x7d || c === 0x5d) depth--;
  }
  return false;
}

/**
 * The length a Content-Length states, 0 for none. Any count of digits (RFC 9110 §8.6: 1*DIGIT,
 * leading zeros allowed, as Node's parser takes them up to 2^64 - 1): one past 2^53 reads a
 * little off, and is past every limit all the same. Cut at 15 digits, a padded 70 MiB read as no
 * length, and a client that stalled after its first bytes waited out the body deadline.
 */
function declaredLength(header: string | null | undefined): number {
  const digits = header?.trim();
  return digits !== undefined && /^\d+$/.test(digits) ? Number(digits) : 0;
}

function tooLarge(
  chunks: Uint8Array[],
  kept: number,
  size: number,
  maxBytes: number,
  setBy: string,
  unread: boolean,
): BodyResult {
  return {
    ok: false,
    unread,
    error: {
      code: "BODY_TOO_LARGE",
      message: `the request body is ${unread ? "at least " : ""}${size} bytes; this gateway reads at most ${maxBytes} (${setBy})`,
      eventName: sniffHead(chunks, kept),
    },
  };
}

/** The event name in the first bytes kept of a body not read whole. */
function sniffHead(chunks: Uint8Array[], kept: number): string | undefined {
  return sniffEventName(new TextDecoder().decode(concat(chunks, Math.min(kept, SNIFF_BYTES))));
}

function concat(chunks: Uint8Array[], limit: number): Uint8Array {
  const out = new Uint8Array(limit);
  let offset = 0;
  for (const chunk of chunks) {
    if (offset >= limit) break;
    const part = chunk.subarray(0, limit - offset);
    out.set(part, offset);
    offset += part.byteLength;
  }
  return out;
}

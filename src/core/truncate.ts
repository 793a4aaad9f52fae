/**
 * Cutting JSON-shaped values down to a byte budget without dropping anything: the longest strings
 * are cut first, each ending in a visible marker, and a surrogate pair is never split. Shared by
 * the sinks (webhook and GitHub payload limits), the queues (a delivery job within Cloudflare's
 * 128 KB and SQS's 1 MiB), the answers (900,000 bytes, deepagents' 100,000), the event a `prompt`
 * rule's model reads (100,000 characters) and the audit line's reason and tool input.
 */

import { setOwnKey } from "./json-object.js";

export const TRUNCATION_MARKER = "…[truncated by hookgate]";

const MAX_DEPTH = 64;

/** The text cut to `length` plus the marker, only where that shortens it. */
export function capString(text: string, length: number): string {
  return text.length > length + TRUNCATION_MARKER.length ? cut(text, length) : text;
}

/** Every string longer than `length` cut to `length` plus the marker (only where that shortens it). */
export function capStrings(value: unknown, length: number, depth = 0): unknown {
  if (typeof value === "string") return capString(value, length);
  if (value === null || typeof value !== "object" || depth > MAX_DEPTH) return value;
  if (Array.isArray(value)) return value.map((item) => capStrings(item, length, depth + 1));
  // Copied key by key: the list of entries, a pair per key and the list of those pairs that
  // `Object.fromEntries` takes cost an event of 20,000 small objects more than the copy itself.
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value))
    setOwnKey(out, key, capStrings((value as Record<string, unknown>)[key], length, depth + 1));
  return out;
}

export function longestString(value: unknown, depth = 0): number {
  if (typeof value === "string") return value.length;
  if (value === null || typeof value !== "object" || depth > MAX_DEPTH) return 0;
  let longest = 0;
  for (const item of Array.isArray(value) ? value : Object.values(value)) {
    longest = Math.max(longest, longestString(item, depth + 1));
  }
  return longest;
}

export function cut(text: string, length: number): string {
  return `${sliceCodePoints(text, length)}${TRUNCATION_MARKER}`;
}

/** At most `max` UTF-16 units of the text and `…` where it was longer, never half a character. */
export function shorten(text: string, max: number): string {
  return text.length > max ? `${sliceCodePoints(text, max)}…` : text;
}

/** The text with each lone surrogate as U+FFFD, as a UTF-8 writer that takes none writes it. */
export function wellFormed(text: string): string {
  return text.toWellFormed();
}

/** The first `length` UTF-16 units, one fewer when that would split a surrogate pair. */
export function sliceCodePoints(text: string, length: number): string {
  if (text.length <= length) return text;
  const last = text.charCodeAt(length - 1);
  return text.slice(0, last >= 0xd800 && last <= 0xdbff ? length - 1 : length);
}

/**
 * `value` with every string longer than some length L cut to L plus the marker, L the largest
 * (below `high`, if given) for which `fits` holds: the longest strings are cut first and no field
 * is dropped. Undefined when even strings cut to nothing do not fit (thousands of short fields).
 * Strings nested past MAX_DEPTH are left as they are, by this and by `capStrings`.
 */
export function capStringsToFit(
  value: unknown,
  fits: (candidate: unknown) => boolean,
  high = Infinity,
): unknown {
  const capped = (length: number) => capStrings(value, length);
  if (!fits(capped(0))) return undefined;
  return capped(largestFitting(Math.min(longestString(value), high), (length) => fits(capped(length))));
}

/**
 * A value that does not fit, cut until `fits` holds: its longest strings first (`capStringsToFit`);
 * else, when even strings cut to nothing do not fit (thousands of numbers or keys),
 * `flatten(value)` (its big structures as their JSON text under the key `truncated`) cut the same
 * way; else that with every string cut to the marker alone. Nothing is dropped: a payload over its
 * limit would be refused whole.
 */
export function capToFit(
  value: unknown,
  fits: (candidate: unknown) => boolean,
  flatten: (value: unknown) => unknown,
): unknown {
  const fitted = capStringsToFit(value, fits);
  if (fitted !== undefined) return fitted;
  const flat = flatten(value);
  return capStringsToFit(flat, fits) ?? capStrings(flat, 0);
}

/** A structure as its JSON text under the key `truncated`, what `capToFit`'s callers flatten to. */
export function asJsonText(value: unknown): { truncated: string } {
  return { truncated: JSON.stringify(value) ?? "" };
}

/**
 * A notification's free text as `capToFit` flattens it: its two structures, the event and a
 * correlated call's arguments, as their JSON text (`asJsonText`), the rest as it is. For the
 * webhook body (sinks.ts) and a queued job (delivery.ts `fitDeliveryJob`) alike.
 */
export function flattenFreeText(value: unknown): unknown {
  const { event, args, ...rest } = value as { readonly event: unknown; readonly args?: unknown };
  return { ...rest, event: asJsonText(event), args: args === undefined ? undefined : asJsonText(args) };
}

/** The largest length in [0, high) for which `fits` holds, given that it holds for 0. */
export function largestFitting(high: number, fits: (length: number) => boolean): number {
  let low = 0;
  while (high - low > 1) {
    const middle = Math.floor((low + high) / 2);
    if (fits(middle)) low = middle;
    else high = middle;
  }
  return low;
}

/**
 * Whether `text` is at most `max` bytes as UTF-8, read no further than it must: no UTF-16 unit
 * takes less than one byte nor more than three (a pair's two take four), so a text of more units
 * than `max` is over it and one of a third as many within it, uncounted. The test of a candidate
 * cut to a budget: the copy of a 20,000-object event with its strings cut was 1.6 M characters,
 * counted one by one against 32 KiB.
 */
export function withinUtf8Bytes(text: string, max: number): boolean {
  if (text.length > max) return false;
  return text.length * 3 <= max || utf8Length(text) <= max;
}

export function utf8Length(text: string): number {
  let bytes = 0;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code < 0x80) bytes += 1;
    else if (code < 0x800) bytes += 2;
    else if (code >= 0xd800 && code <= 0xdbff && i + 1 < text.length) {
      const next = text.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) {
        bytes += 4;
        i++;
      } else bytes += 3;
    } else bytes += 3;
  }
  return bytes;
}

/**
 * Masking for anything that leaves the process as text (audit lines, logs, recorded events).
 * Values under secret-looking keys are replaced whole; inside strings, well-known credential
 * shapes (mask-shapes.ts) are replaced.
 */
import {
  CONTROLS,
  CONTROLS_AND_INTRODUCERS,
  escapeControls,
  stringOfUnits,
  withoutControlsButLines,
} from "./escape-controls.js";
import { setOwnKey } from "./json-object.js";
import { SECRET_SHAPES as BUNDLED_SHAPES, type SecretShape } from "./mask-shapes.js";
import { capString, sliceCodePoints } from "./truncate.js";

export { SECRET_SHAPES } from "./mask-shapes.js";

export const MASK = "[masked]";

const SECRET_KEY =
  /passw(?:or)?d|passphrase|(?:^|_)(?:pass|pwd|pin)$|secret|token|(?:api|private|access|app|signing|master|encryption|client|account|auth)[_-]?key|^auth$|authorization|credential|cookie/i;
/**
 * A snake_case name ending in `_key` (`OPENAI_KEY`, `stripe_key`, `session_key`): a credential by
 * convention, unless what qualifies it names a key that is data (`sort_key`, `PUBLIC_KEY`, an S3
 * object's `s3_key`), which stays readable.
 */
const SECRET_ENV_KEY = /^[a-z][a-z0-9]*(?:_[a-z0-9]+)*_key$/i;
const DATA_KEY =
  /(?:^|_)(?:public|publishable|sort|partition|range|hash|primary|foreign|routing|cache|s3|object|idempotency|dedupe?|lookup|group|row|index|unique|search)_key$/i;
/** Keys that name a secret rather than hold one (`secret_name`, `token_type`). */
const NOT_SECRET_KEY = /(?:name|id|arn|type)$/i;
/**
 * Keys under which a number is a secret: those ending in a secret's name (a PIN, `api_key:
 * 123456789012`, `secret: 42`). Under the others that only mention one it counts or measures
 * (`max_tokens: 4096`, `token_usage`, `password_min_length`).
 */
const NUMERIC_SECRET_KEY =
  /(?:passw(?:or)?d|passphrase|(?:^|_)(?:pass|pwd|pin)|secret|token|key|credentials?|authorization|cookie|^auth)$/i;

/** The shapes, or undefined in a bundle that loads them with the first policy (`loadMaskShapes`). */
let shapes: readonly SecretShape[] | undefined = BUNDLED_SHAPES;

/** Loads the shapes where the bundle left them out; a no-op elsewhere. `loadPolicy` calls it. */
export async function loadMaskShapes(): Promise<void> {
  shapes ??= (await import("./mask-shapes.js")).SECRET_SHAPES;
}

/**
 * A substring every shape of mask-shapes.ts needs (case-insensitive, so a superset): text without any of
 * them is returned as it is after one scan instead of one per shape. Most audited strings, a Bash
 * command or a file path, have none. test/unit/mask.test.ts checks the superset property.
 */
export const MAY_HOLD_SECRET =
  /PRIVATE KEY|AKIA|ASIA|gh[pousr]_|github_pat_|xox[abposr]-|xoxe[.-]|hf_|pypi-|\bsg\.|xapp-|sk-|[sr]k_|npm_|AIza|xai-|gsk_|ya29\.|dapi[0-9a-f]|do[opr]_v1_|lin_api_|sntry[su]_|dp\.(?:ct|pt|st|sa|said|scim|audit)\.|cf(?:ut|at|k)_|atatt3|sk[0-9a-f]{32}|key-[0-9a-f]{32}|ntn_|gl(?:pat|dt|rt|ptt|cbt|oas|soat|ft|imt|agent|ffct)-|whsec_|hv[sbr]\.|eyJ|hooks\.slack\.com|webhooks\/|api\.telegram\.org|bearer|basic|token|@|passw|passphrase|secret|_pass|_pwd|api[_-]?key|access_?key|private_?key|(?:app|signing|encryption|master)_?key|_key(?:_[a-z0-9]{1,32}){0,2}(?:=|:[ \t]|["'][ \t]{0,8}[,\]])|credential|cookie|auth|-key|identified|mongo|sqlcmd|\bbcp\b|storepass|keypass|vercel|curl|mysql|mariadb|openssl|login|put-parameter|pass:|(?<![\w.-])(?:un)?zip\b|(?<![\w.-])7z|sshpass|redis-cli|key-data|from-literal|pwd[ \t]{0,4}=|accountkey|sig=|signature=|(?:[?#&;]|\\u0026)(?:pass|key|code|session(?:[_-]?id)?|(?:php)?sessid|jsessionid)=/i;

export function maskString(text: string): string {
  return MAY_HOLD_SECRET.test(text) ? maskShapes(text) : text;
}

/** Text that passed MAY_HOLD_SECRET with every shape replaced. */
function maskShapes(text: string): string {
  // Before the shapes are loaded (no policy yet), text that may hold a secret is masked whole.
  if (shapes === undefined) return MASK;
  let out = text;
  for (const [pattern, replacement, gate] of shapes)
    if (gate === undefined || gate.test(out))
      out =
        typeof replacement === "string"
          ? out.replace(pattern, replacement)
          : out.replace(pattern, replacement);
  return out;
}

/**
 * Where to cut `text` at `length` UTF-16 units or before, so that the cut splits no credential
 * shape found in it: the start of one left before a cut is too short for its shape, so masking by
 * shape after the cut (an audit line, a notification) would show it. Cut there, the credential is
 * gone whole. `length` itself where no shape runs across it.
 */
export function cutOutsideShapes(text: string, length: number): number {
  if (text.length <= length || shapes === undefined) return length;
  // Every shape's match is shorter than MASK_WINDOW, so one that runs across the cut lies in it.
  const around = text.slice(0, length + MASK_WINDOW);
  if (!MAY_HOLD_SECRET.test(around)) return length;
  const spans: (readonly [start: number, end: number])[] = [];
  for (const [pattern, , gate] of shapes) {
    if (gate !== undefined && !gate.test(around)) continue;
    for (const match of around.matchAll(pattern)) spans.push([match.index, match.index + match[0].length]);
  }
  let end = length;
  // Cut before one shape's match, the new end may fall inside another's (a key in a URL).
  for (let moved = true; moved; ) {
    moved = false;
    for (const [start, stop] of spans) {
      if (start < end && stop > end) {
        end = start;
        moved = true;
      }
    }
  }
  return end;
}

/**
 * A masked deep copy; strings longer than `maxString` are cut with a visible marker. `secrets`
 * (the policy's own secret values) are scrubbed before the cut, so a cut never leaves the start
 * of one showing.
 */
export function maskValue(value: unknown, secrets: readonly string[] = [], maxString = 2000): unknown {
  const run: MaskRun = {
    maxString,
    secrets,
    shaped: 0,
    shape: (text) => (++run.shaped > MAX_SHAPED_STRINGS ? MASK : maskShapes(text)),
  };
  return maskDeep(value, run, 0);
}

/**
 * What of `text` can show once it is cut at `max` UTF-16 units, scrubbed of the policy's secrets
 * (one split by control characters too) and masked by shape (`shape`, given text that may hold
 * one), and how many units past that head were not read. Only the head is masked: every shape is
 * shorter than MASK_WINDOW, so one that starts before the cut ends inside it, and a 1 MiB string
 * costs what 18 KiB does. Scrubbed before the cut, so that a cut never leaves the start of a secret
 * showing.
 */
export function maskedHead(
  text: string,
  secrets: readonly string[],
  max: number,
  shape: (text: string) => string = maskShapes,
): { masked: string; dropped: number } {
  // The head's last MASK_WINDOW units may end inside a secret that goes on past them: only what
  // comes before them is known masked whole, and a cut at `max` must not reach them. A long secret
  // is a short mask, so masks may leave fewer units than that before them: a text of one over and
  // over fit the cut whole, with the start of the one the head's end split. Read further then: by
  // what the masks took, and by twice as much past the first head each time, so that a text all of
  // secrets is read a few times over, not once per mask.
  const wanted = max + MASK_WINDOW;
  for (let length = wanted; ; ) {
    const head = text.length > length ? text.slice(0, length) : text;
    const scrubbed = scrubSecretsAcrossControls(head, secrets);
    const masked = MAY_HOLD_SECRET.test(scrubbed) ? shape(scrubbed) : scrubbed;
    if (head === text || masked.length >= wanted) return { masked, dropped: text.length - head.length };
    length = Math.max(length + wanted - masked.length, 2 * length - wanted);
  }
}

/**
 * A name the agent sent (an unknown event's, a tool's, a session id) as maskValue masks a string
 * (`maskedHead`: an MCP server or a session may be named with a token), cut to `max` with the
 * marker a cut name ends in: it is a Slack message's title, a webhook's `type`, an audit line's
 * field.
 */
export function maskedName(name: string, secrets: readonly string[], max: number): string {
  return capString(maskedHead(name, secrets, max).masked, max);
}

/**
 * How many strings one maskValue call runs the shapes on; past it, a string that may hold a
 * secret is masked whole. Each costs every shape's search however short it is: a body of 262,144
 * strings of one `@` took 1.4 s. An event an agent sends holds a few dozen.
 */
export const MAX_SHAPED_STRINGS = 4096;

interface MaskRun {
  readonly maxString: number;
  readonly secrets: readonly string[];
  /** Strings the shapes ran on so far. */
  shaped: number;
  /** maskShapes, counting its strings: past MAX_SHAPED_STRINGS, MASK. */
  readonly shape: (text: string) => string;
}

function maskDeep(value: unknown, run: MaskRun, depth: number): unknown {
  if (typeof value === "string") {
    const { masked, dropped } = maskedHead(value, run.secrets, run.maxString, run.shape);
    return truncate(masked, run.maxString, dropped);
  }
  if (value === null || typeof value !== "object") return value;
  if (depth > 16) return "[too deep]";
  if (Array.isArray(value)) return value.map((item) => maskDeep(item, run, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) {
    setOwnKey(
      out,
      key,
      (SECRET_KEY.test(key) || (SECRET_ENV_KEY.test(key) && !DATA_KEY.test(key))) && !NOT_SECRET_KEY.test(key)
        ? maskedWhole(item, NUMERIC_SECRET_KEY.test(key), depth + 1)
        : maskDeep(item, run, depth + 1),
    );
  }
  return out;
}

/**
 * Under a secret-looking key: every string, at any depth, is MASK, and every number under a key
 * of NUMERIC_SECRET_KEY (that one or one inside it: `credential_store: {pin: 1234}`). A boolean or
 * null, one bit, stays.
 */
function maskedWhole(value: unknown, numbers: boolean, depth: number): unknown {
  if (typeof value === "string" || (numbers && typeof value === "number")) return MASK;
  if (value === null || typeof value !== "object") return value;
  if (depth > 16) return "[too deep]";
  if (Array.isArray(value)) return value.map((item) => maskedWhole(item, numbers, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value))
    setOwnKey(out, key, maskedWhole(item, numbers || NUMERIC_SECRET_KEY.test(key), depth + 1));
  return out;
}

/** What maskValue leaves where it took something out: a masked value, a cut string, a deep part. */
const MASKED_MARK = /\[masked\]|…\[\d+ more characters\]$|^\[too deep\]$/;

/**
 * Whether a value maskValue made (a recorded event) had something taken out of it: a value or a
 * key masked, a string cut, a part too deep. What was there is gone, so a rule reading it may
 * judge the copy otherwise than the original. Text that only reads like a mark counts too.
 */
export function holdsMasked(value: unknown, depth = 0): boolean {
  if (typeof value === "string") return MASKED_MARK.test(value);
  if (value === null || typeof value !== "object" || depth > 32) return false;
  if (Array.isArray(value)) return value.some((item) => holdsMasked(item, depth + 1));
  return Object.entries(value).some(([key, item]) => key.includes(MASK) || holdsMasked(item, depth + 1));
}

/** Longer than any shape's match (a JWT's three parts of up to 4,096 characters) and any policy secret worth scrubbing. */
export const MASK_WINDOW = 16_384;

/** At most `max` UTF-16 units, never half a character, and how many were left out. */
function truncate(text: string, max: number, dropped = 0): string {
  if (text.length <= max) return text;
  const kept = sliceCodePoints(text, max);
  return `${kept}…[${text.length - kept.length + dropped} more characters]`;
}

/** The strings to look for, per secrets list: each value and its JSON-escaped forms, longest first. */
const NEEDLES = new WeakMap<readonly string[], readonly string[]>();

function needlesOf(secrets: readonly string[]): readonly string[] {
  let needles = NEEDLES.get(secrets);
  if (needles === undefined) {
    const all = new Set<string>();
    for (const secret of secrets) {
      // As written in a JSON string (a log line), and in a JSON string quoted into another one
      // (a downstream excerpt in an audit line); for most secrets all three are the same. Each
      // also as a log line or record writes it, with what JSON.stringify leaves as it is (a
      // zero-width space, a BOM, a direction mark) escaped (escape-controls.ts): else a secret
      // holding one was not found there, and was written out whole.
      const once = JSON.stringify(secret).slice(1, -1);
      const twice = JSON.stringify(once).slice(1, -1);
      all.add(secret).add(once).add(twice).add(escapeControls(once)).add(escapeControls(twice));
    }
    needles = [...all].sort((a, b) => b.length - a.length);
    NEEDLES.set(secrets, needles);
  }
  return needles;
}

/**
 * Every occurrence of a known secret value (`Policy.secrets`), raw or JSON-escaped, replaced by
 * MASK: what masking by shape cannot catch, such as a random token a peer echoes back. With no
 * secrets it returns the text as is.
 */
export function scrubSecrets(text: string, secrets: readonly string[]): string {
  return scrub(text, secrets, maskEvery);
}

/**
 * `scrubSecrets` for the agent's own text (an event's strings), read across the control
 * characters too: a tab or a line end that a terminal's wrapping or a paste put inside a secret
 * hides it from a plain search, and a person reading the message joins it again. Across nothing
 * else: masking is for a secret some text split by accident, not for one an agent spells apart
 * (a space, quotes, `$'\x..'`), which no search of the text can catch.
 */
export function scrubSecretsAcrossControls(text: string, secrets: readonly string[]): string {
  return secrets.length === 0 ? text : scrubAcross(text, secrets, CONTROLS);
}

/**
 * Text handed to the agent (a model's or a team server's reason, a provider's message), without
 * the characters `strip` drops (those that act in a terminal), scrubbed of the policy's secrets
 * before and after they go. Before, a secret is read across every control character and each
 * sequence's introducer: one inside a secret (a zero-width space pasted with it, a tab, a line end
 * that a server's wrapping put there) hides it from a plain search, and `ESC [` before its `9r`
 * made them a sequence that the strip took, leaving the rest of the secret. It is read across the
 * control characters alone too, for a secret whose own `[` (or `]`, `P`…) an ESC put before made
 * an introducer: skipped with the ESC, that character was missing from the text only. After, it is read
 * across what the strip leaves of those (tab, newline, the joiners), for a secret that a whole
 * sequence split (a colour), which the strip joins. Each piece between masks is stripped apart, so
 * that an introducer before a mask does not take its `[` as a final byte.
 */
export function scrubbedWithout(
  text: string,
  secrets: readonly string[],
  strip: (text: string) => string = withoutControlsButLines,
): string {
  if (secrets.length === 0) return strip(text);
  const masked = scrubbedAcrossControls(text, secrets);
  return scrubAcross(masked.split(MASK).map(strip).join(MASK), secrets, LEFT_BY_STRIP);
}

/**
 * A reason handed to the agent as `scrubbedWithout` leaves it, or undefined for one that says
 * nothing once shown: empty, or nothing but what the strip drops and spaces and line ends, which
 * it hands on as newlines. A model's verdict and a team server's answer then give their own
 * default in its place.
 */
export function shownReason(text: string, secrets: readonly string[]): string | undefined {
  const shown = scrubbedWithout(text, secrets);
  return shown.trim() === "" ? undefined : shown;
}

/**
 * `text` scrubbed of the policy's secrets as `scrubbedWithout` reads them before the strip: across
 * every control character and each sequence's introducer, and across the controls alone. For text
 * quoted with its controls written as escapes (a downstream answer a failure message quotes),
 * where a tab a server's wrapping put inside a secret shows as `\t` between its two halves.
 */
export function scrubbedAcrossControls(text: string, secrets: readonly string[]): string {
  if (secrets.length === 0) return text;
  return scrubAcross(scrubAcross(text, secrets, CONTROLS_AND_INTRODUCERS), secrets, CONTROLS);
}

/** The controls `withoutControlsButLines` keeps: tab, newline, the zero-width non-joiner and joiner. */
const LEFT_BY_STRIP = /[\t\n\u200c\u200d]/g;

/**
 * `text` with each known secret masked that it holds when the characters `skipped` matches are
 * left out of both, with those inside it: the line ends around a secret stay, the ones inside go.
 * Linear in the text's length, once per needle.
 */
function scrubAcross(text: string, secrets: readonly string[], skipped: RegExp): string {
  if (text.search(skipped) < 0) return scrubSecrets(text, secrets);
  // A replace, but for a text of many matches, read by where each kept unit stands (`keptAt`).
  // Each match is a unit or more, so a text of fewer units is not counted. Counted apart: one
  // pass that noted where each match stands, to choose after it, took four to eight times as long
  // on a megabyte of line ends.
  const many =
    text.length > MATCHES_REPLACED && matchesUpTo(text, skipped, MATCHES_REPLACED + 1) > MATCHES_REPLACED;
  const kept = many ? keptAt(text, skipped) : undefined;
  const read = kept === undefined ? text.replace(skipped, "") : unitsAt(text, kept);
  const needles = needlesWithout(secrets, skipped).filter((needle) => read.includes(needle));
  // Where each read character stands is mapped only for a text that holds a secret.
  if (needles.length === 0) return text;
  const at = kept ?? keptAt(text, skipped);
  const spans: [start: number, end: number][] = [];
  for (const needle of needles)
    for (const found of occurrences(read, needle))
      spans.push([at[found] as number, (at[found + needle.length - 1] as number) + 1]);
  spans.sort((a, b) => a[0] - b[0]);
  let out = "";
  let end = 0;
  for (const [start, stop] of spans) {
    if (stop <= end) continue;
    out += start >= end ? `${text.slice(end, start)}${MASK}` : "";
    end = stop;
  }
  return out + text.slice(end);
}

/** The needles per secrets list and skipped characters, made once: maskValue reads every string of an event so. */
const NEEDLES_WITHOUT = new WeakMap<readonly string[], Map<RegExp, readonly string[]>>();

/** The secrets' needles with the characters `skipped` matches left out, none empty. */
function needlesWithout(secrets: readonly string[], skipped: RegExp): readonly string[] {
  let bySkipped = NEEDLES_WITHOUT.get(secrets);
  if (bySkipped === undefined) {
    bySkipped = new Map();
    NEEDLES_WITHOUT.set(secrets, bySkipped);
  }
  let needles = bySkipped.get(skipped);
  if (needles === undefined) {
    needles = [...new Set(needlesOf(secrets).map((needle) => needle.replace(skipped, "")))].filter(
      (needle) => needle !== "",
    );
    bySkipped.set(skipped, needles);
  }
  return needles;
}

/**
 * Matches past which a replace of them costs V8 more per match than a copy of the text's units:
 * its replace grew dearer per match past some 100,000 (1 MiB of bare CRs, each a newline by then,
 * took 180 ms a pass), where the copy costs the same per unit whatever the text, and several
 * times the replace for a text of lines.
 */
const MATCHES_REPLACED = 50_000;

/** How many times `pattern` (global) matches `text`, counted up to `most`, read no further. */
function matchesUpTo(text: string, pattern: RegExp, most: number): number {
  let matches = 0;
  for (const _ of text.matchAll(pattern)) if (++matches === most) break;
  return matches;
}

/** The string of `text`'s units at the places `at` gives, in order. */
function unitsAt(text: string, at: Int32Array): string {
  const units = new Uint16Array(at.length);
  for (let i = 0; i < at.length; i++) units[i] = text.charCodeAt(at[i] as number);
  return stringOfUnits(units);
}

/** Where each character of `text` that `skipped` leaves stands in it, in order. */
function keptAt(text: string, skipped: RegExp): Int32Array {
  const at = new Int32Array(text.length);
  let kept = 0;
  let from = 0;
  for (const found of text.matchAll(skipped)) {
    for (let i = from; i < found.index; i++) at[kept++] = i;
    from = found.index + found[0].length;
  }
  for (let i = from; i < text.length; i++) at[kept++] = i;
  return at.subarray(0, kept);
}

/** Where each occurrence of `needle` in `text` starts, none overlapping. */
function* occurrences(text: string, needle: string): Generator<number> {
  for (let at = text.indexOf(needle); at >= 0; at = text.indexOf(needle, at + needle.length)) yield at;
}

/** `text` with each of the secrets' needles that it holds masked by `mask`, longest first. */
function scrub(
  text: string,
  secrets: readonly string[],
  mask: (text: string, needle: string) => string,
): string {
  if (secrets.length === 0) return text;
  let out = text;
  for (const needle of needlesOf(secrets)) if (out.includes(needle)) out = mask(out, needle);
  return out;
}

const maskEvery = (text: string, needle: string) => text.replaceAll(needle, MASK);

/**
 * `scrubSecrets` for a log sink, with the secrets of the policy in force (`Policy.secrets`).
 * `secrets` is read at each call, so a reloaded policy's secrets apply from the next batch; the
 * previous policy's are scrubbed too, for lines written before the reload and flushed after it.
 * With no secrets the text is returned as is. The text is JSON lines (scrubJsonText).
 */
export function scrubbingWith(secrets: () => readonly string[]): (text: string) => string {
  let current: readonly string[] = [];
  let previous: readonly string[] = [];
  return (text) => {
    const now = secrets();
    if (now !== current) {
      previous = current;
      current = now;
    }
    return scrubJsonText(scrubJsonText(text, current), previous);
  };
}

/**
 * `scrubSecrets` for JSON text (log lines, records, the event a model reads): a value found
 * starting or ending inside one of the text's escapes is masked with the whole escape, so that the
 * text stays JSON. An agent knows its own token: written after a tab (`\tok-…` in the line, where
 * the token is `tok-…`), it was masked as `\[masked]`, and its decision's audit line was no JSON a
 * log pipeline reads.
 */
export function scrubJsonText(text: string, secrets: readonly string[]): string {
  return scrub(text, secrets, maskEveryWithItsEscapes);
}

/** Every occurrence of `needle` in JSON text masked, with any escape it starts or ends inside of. */
function maskEveryWithItsEscapes(text: string, needle: string): string {
  let scrubbed = "";
  let from = 0;
  for (let at = text.indexOf(needle); at >= 0; at = text.indexOf(needle, from)) {
    scrubbed += `${text.slice(from, Math.max(from, escapeStart(text, at)))}${MASK}`;
    from = escapeEnd(text, at + needle.length);
  }
  return scrubbed + text.slice(from);
}

/** Where the escape that `at` falls inside of (after its backslash) starts; else `at`. */
function escapeStart(text: string, at: number): number {
  // `\x` has one character after its backslash, `\uXXXX` five.
  for (let back = 1; back <= 5 && back <= at; back++) {
    const start = at - back;
    if (startsEscape(text, start) && (back === 1 || text[start + 1] === "u")) return start;
  }
  return at;
}

/** Where the escape that `end` falls inside of (after its backslash) ends; else `end`. */
function escapeEnd(text: string, end: number): number {
  const start = escapeStart(text, end);
  if (start === end) return end;
  return start + (text[start + 1] === "u" ? 6 : 2);
}

/** Whether the character at `i` is the backslash of an escape: one not itself escaped. */
function startsEscape(text: string, i: number): boolean {
  if (text.charCodeAt(i) !== 0x5c) return false;
  let before = 0;
  while (i - before - 1 >= 0 && text.charCodeAt(i - before - 1) === 0x5c) before++;
  return before % 2 === 0;
}

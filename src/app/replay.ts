/**
 * Judging recorded or hand-written events against a policy with no side effects, and the
 * impact of a candidate policy on recorded traffic (`hookgate test`, `hookgate replay`).
 *
 * Every event goes through handleHook exactly as simulate does: no audit line, no notify, no
 * recorder, and prompt / forward rules are not run (they show as NOT_RUN). The caller's team is
 * given, not authenticated: the event is judged with a copy of the policy whose `auth` holds one
 * token for that team, and the request carries that token. handleHook itself is unchanged, so
 * what is judged here is what the gateway would answer that team.
 */
import { DEFAULT_TEAM, teamsOf } from "../core/auth.js";
import { byCodeUnit } from "../core/code-unit-order.js";
import { escapeControls } from "../core/escape-controls.js";
import { honouredDecision } from "../core/event-capabilities.js";
import { DIALECTS, type Dialect } from "../core/hook-event.js";
import { isRecord } from "../core/json-object.js";
import { jsonValueEnd } from "../core/json-value-end.js";
import { holdsMasked } from "../core/mask.js";
import type { Policy } from "../core/policy.js";
import type { Clock, IdGenerator, Logger, Sha256 } from "../core/ports.js";
import { utf8Length } from "../core/truncate.js";
import {
  type HookOutcome,
  type HookRequest,
  handleHook,
  type Recorder,
  type ReplayRecord,
} from "./handle-hook.js";
import type { RemoteActions } from "./remote-actions.js";

export interface JudgeDeps {
  readonly clock: Clock;
  readonly newId: IdGenerator;
  readonly sha256: Sha256;
  /** `--with-judge`: runs prompt rules (model calls only; forwards are never replayed). */
  readonly remote?: RemoteActions | undefined;
}

/**
 * The remote actions replay may run: prompt rules call their model; forward rules are left out
 * (NOT_RUN), since relaying recorded traffic to a team's hook server is a side effect.
 */
export function promptsOnly(remote: RemoteActions): RemoteActions {
  return {
    async run(input) {
      const prompts = input.rules.filter((r) => r.action.kind === "prompt");
      const forwards = input.rules.filter((r) => r.action.kind !== "prompt");
      const ran =
        prompts.length > 0 ? await remote.run({ ...input, rules: prompts }) : { effects: [], audit: [] };
      const skipped = forwards.map((r) => ({
        rule: r.id,
        action: "forward" as const,
        outcome: "NOT_RUN",
        ms: 0,
        detail: "replay never forwards",
      }));
      return { effects: ran.effects, audit: [...ran.audit, ...skipped] };
    },
  };
}

export interface JudgeInput {
  /** The body as read, checked as `serve` checks it (http/read-body.ts `bodyFromBytes`). */
  readonly body: HookRequest["body"];
  /** The route's dialect; undefined lets the body decide, as on `/v1/hooks`. */
  readonly client: Dialect | undefined;
  readonly team: string;
}

/** Never sent anywhere: it exists only inside the policy copy that fixes the caller's team. */
const FIXED_TEAM_TOKEN = "hookgate-fixed-team";

/** Judges events as given teams; the policy copy for each team is built once. */
export function createJudge(deps: JudgeDeps, policy: Policy) {
  const copies = new Map<string, Promise<Policy>>();
  const asTeam = (team: string) => {
    let copy = copies.get(team);
    if (!copy) {
      copy = deps.sha256(FIXED_TEAM_TOKEN).then((sha256) => ({
        ...policy,
        auth: { tokens: [{ team, sha256, source: "fixed team" }], onFailure: "deny" as const },
      }));
      copies.set(team, copy);
    }
    return copy;
  };
  return async (input: JudgeInput): Promise<HookOutcome> => {
    const copy = await asTeam(input.team);
    return handleHook(
      {
        policy: () => copy,
        clock: deps.clock,
        newId: deps.newId,
        sha256: deps.sha256,
        logger: { log: () => undefined },
        remote: deps.remote,
      },
      {
        body: input.body,
        contentType: "application/json",
        authorization: `Bearer ${FIXED_TEAM_TOKEN}`,
        dialect: input.client,
      },
      { explain: true, audit: false, runRemote: deps.remote !== undefined },
    );
  };
}

// ---------------------------------------------------------------------------------------------
// Recording on Workers and Lambda: a log line, exported from the log stream and replayed
// ---------------------------------------------------------------------------------------------

export const RECORD_LOG_MESSAGE = "hook record";

/**
 * The most UTF-8 bytes of JSON a `hook record` log line gives its record. Masking cuts each of
 * the event's strings at 2,000 characters, but not their count: a Glob's `tool_response` of a few
 * thousand paths, in a body of up to 64 MiB (`defaults.maxBodyBytes`), made a line that
 * CloudWatch cuts at 256 KB (the rest a log event of its own, and neither part JSON) and that a
 * Worker's logs, 256 KB an invocation with the audit line (up to about 50 KB) in it, drop.
 */
export const RECORD_LOG_BYTES = 128 * 1024;

/**
 * Whether HOOKGATE_RECORD asks for hook records: `1`, as text or as the number a wrangler [vars]
 * entry `HOOKGATE_RECORD = 1` binds, does; unset, empty or `0` does not. Undefined for any other
 * value (`true`, `yes`): no records either, which the runtime warns of once, as read
 * as off alone it wrote no record line without a word, and `hookgate replay` found nothing.
 */
export function recordsAsked(value: unknown): boolean | undefined {
  if (value === "1" || value === 1) return true;
  if (value === undefined || value === "" || value === "0" || value === 0) return false;
  return undefined;
}

/**
 * The recorder for runtimes whose only durable output is the log stream (Workers, Lambda). A
 * record past RECORD_LOG_BYTES is written without its event, marked `eventOmitted`: replay
 * counts it as not compared instead of judging an event cut down to fit, which is another event.
 * The JSON measured is the JSON logged, where the logger takes it (`logJson`).
 */
export function createLogRecorder(logger: Logger): Recorder {
  return (record) => {
    // Escaped as the log line escapes it (json-lines.ts), so that what is measured is what is
    // written: `logJson` writes it as it is.
    const json = escapeControls(JSON.stringify(record));
    if (utf8Length(json) > RECORD_LOG_BYTES) {
      const eventOmitted = { bytes: utf8Length(JSON.stringify(record.event)) };
      logger.log("info", RECORD_LOG_MESSAGE, { record: { ...record, event: undefined, eventOmitted } });
    } else if (logger.logJson) logger.logJson("info", RECORD_LOG_MESSAGE, `{"record":${json}}`);
    else logger.log("info", RECORD_LOG_MESSAGE, { record });
  };
}

export interface ReadRecords {
  readonly records: readonly ReplayRecord[];
  /** Records that were found but are malformed, with where and why. */
  readonly invalid: readonly { readonly at: string; readonly problem: string }[];
  /** JSON values and text lines that hold no hook record (other log lines). */
  readonly skipped: number;
  /**
   * Lines that start as a JSON object does (`{`) or name a hook record, yet do not parse: most
   * likely a record cut short (a file copied while written). The first one's line number.
   */
  readonly unparsed: { readonly count: number; readonly firstLine: number | undefined };
}

/**
 * Hook records from any of: plain JSONL records (`serve --record`); log lines
 * `{"msg":"hook record","record":{...}}`, alone or behind a text prefix (Lambda's
 * `time\trequestId\tINFO\t{...}`); pretty-printed JSON values one after another
 * (`wrangler tail --format json`, whose `logs[].message[]` hold the log lines as strings), or on
 * one line (Firehose's CloudWatch Logs files); and
 * JSON documents that hold such lines as strings (CloudWatch exports). Everything else is skipped.
 */
export function readRecords(text: string): ReadRecords {
  const records: ReplayRecord[] = [];
  const tally = createTally(Number.POSITIVE_INFINITY);
  const reader = createValueReader(Number.POSITIVE_INFINITY, HOLD);
  const take = (values: readonly JsonValue[]) => {
    for (const value of values) tallyValue(value, tally, (r) => records.push(r));
  };
  for (const line of text.split("\n")) take(reader.push(line));
  take(reader.end());
  const { invalid, skipped, unparsed } = tally;
  return { records, invalid, skipped, unparsed };
}

/** What a record file held besides its records, counted while they stream past. */
export interface RecordTally {
  records: number;
  /** The first `keep` malformed records, with where and why; `invalidCount` counts them all. */
  readonly invalid: { readonly at: string; readonly problem: string }[];
  invalidCount: number;
  skipped: number;
  readonly unparsed: { count: number; firstLine: number | undefined };
  readonly keep: number;
  /** Whether the members of a value read a member at a time (see HOLD) held a record so far. */
  partFound: boolean;
}

export const createTally = (keep: number): RecordTally => ({
  records: 0,
  invalid: [],
  invalidCount: 0,
  skipped: 0,
  unparsed: { count: 0, firstLine: undefined },
  keep,
  partFound: false,
});

/**
 * A line, or a JSON value spanning lines, longer than replay holds as one string (V8's longest,
 * about 512 MiB): records are read one line (or one pretty-printed value) at a time, never more.
 */
export class RecordTooLarge extends Error {
  constructor(
    readonly line: number,
    /** The value opened on `line` and went on over the lines after it. */
    readonly spansLines: boolean,
  ) {
    super(`line ${line} is too large`);
  }
}

/**
 * The records of a text that arrives in chunks (a file or stdin read as a stream), as
 * readRecords finds them, holding one line (or one JSON value spanning lines) at a time: a file
 * of any size is read in the memory its longest record takes. What is not a record is counted
 * in `tally`. Throws RecordTooLarge past `limit` characters in one piece.
 */
export async function* streamRecords(
  chunks: AsyncIterable<string>,
  tally: RecordTally,
  limit: number,
  hold = HOLD,
): AsyncGenerator<ReplayRecord> {
  const reader = createValueReader(limit, hold);
  const found: ReplayRecord[] = [];
  const take = function* (values: readonly JsonValue[]) {
    for (const value of values) tallyValue(value, tally, (r) => found.push(r));
    for (const record of found) yield record;
    found.length = 0;
  };
  for await (const line of linesOf(chunks, limit)) yield* take(reader.push(line));
  yield* take(reader.end());
}

/** The lines of a text that arrives in chunks, split at `\n` only (a `\r` before it is kept). */
async function* linesOf(chunks: AsyncIterable<string>, limit: number): AsyncGenerator<string> {
  let rest = "";
  let line = 1;
  for await (const chunk of chunks) {
    let start = 0;
    for (let nl = chunk.indexOf("\n"); nl !== -1; nl = chunk.indexOf("\n", start)) {
      if (rest.length + nl - start > limit) throw new RecordTooLarge(line, false);
      yield rest + chunk.slice(start, nl);
      rest = "";
      line += 1;
      start = nl + 1;
    }
    if (rest.length + chunk.length - start > limit) throw new RecordTooLarge(line, false);
    rest += chunk.slice(start);
  }
  if (rest !== "") yield rest;
}

function tallyValue(value: JsonValue, tally: RecordTally, record: (r: ReplayRecord) => void): void {
  if (value.ok === "end") {
    if (!tally.partFound) tally.skipped += 1;
    tally.partFound = false;
    return;
  }
  if (!value.ok) {
    tally.partFound = false;
    tally.skipped += 1;
    if (value.looksLikeJson) {
      tally.unparsed.count += 1;
      tally.unparsed.firstLine ??= value.line;
    }
    return;
  }
  const at = `line ${value.line}`;
  let any = false;
  collectRecords(value.value, value.depth ?? 0, (checked) => {
    // Counted as a line cut short is (its value skipped, unless it holds records too).
    if (checked === CUT_SHORT) {
      tally.unparsed.count += 1;
      tally.unparsed.firstLine ??= value.line;
      return;
    }
    any = true;
    if (typeof checked !== "string") {
      tally.records += 1;
      record(checked);
      return;
    }
    tally.invalidCount += 1;
    if (tally.invalid.length < tally.keep) tally.invalid.push({ at, problem: checked });
  });
  if (value.depth === undefined) {
    if (!any) tally.skipped += 1;
  } else tally.partFound ||= any;
}

/**
 * A value; or a member of one read a member at a time (`depth`, its depth in the value), whose
 * members end with `end`; or a line or value that does not parse.
 */
type JsonValue =
  | { ok: true; value: unknown; line: number; depth?: number }
  | { ok: "end" }
  | { ok: false; line: number; looksLikeJson: boolean };

/** Where a scan for the end of an object or array that spans lines stands. */
interface Balance {
  depth: number;
  inString: boolean;
}

/** A value opened on one line and not closed on it: the lines after it, kept until it closes. */
interface Open {
  readonly line: number;
  /** The opening line from the value's first character. */
  readonly first: string;
  readonly later: { readonly text: string; readonly line: number }[];
  chars: number;
  /** Whether a line after the first is indented (pretty-printed). */
  indented: boolean;
  readonly balance: Balance;
  /** Past `hold` characters: the value read a member at a time, no longer held (`later` empty). */
  members?: MemberReader;
  /** Past `hold` characters, held whole all the same: it may be a hook record (`mayBeRecord`). */
  whole?: boolean;
}

/**
 * The JSON values of a text given line by line: one per line, or spread over several lines, or
 * after a text prefix. A value that spans lines is held until it closes (past `hold` characters,
 * read a member at a time instead: `createMemberReader`); one that does not
 * (a record cut short, whose `{` never closes) is given up at the end, at `limit` characters,
 * or at the next line that starts a value of its own in its first column (see `more`), and the
 * lines after its first are read again one by one.
 */
function createValueReader(limit: number, hold: number) {
  let lineCount = 0;
  let open: Open | undefined;
  let out: JsonValue[] = [];
  /** Lines still to read, the next one last (a stack: lines given back go on top). */
  const pending: { text: string; line: number; from: number }[] = [];

  const giveUp = (o: Open) => {
    open = undefined;
    out.push({ ok: false, line: o.line, looksLikeJson: looksLikeRecord(o.first) });
    // Read a member at a time, its lines are not held: its whole members' records stay read.
    for (let k = o.later.length - 1; k >= 0; k -= 1) {
      const later = o.later[k] as { text: string; line: number };
      pending.push({ text: later.text, line: later.line, from: 0 });
    }
  };

  /** A line while a value spanning lines is open. */
  const more = (o: Open, text: string, line: number) => {
    o.later.push({ text, line });
    // A value of its own begins: the open value was a record cut short. A line that starts with
    // `{` or `[` and is a whole value (a JSONL line), or that starts one after indented lines (the
    // next pretty-printed value: the lines inside one are indented, all but its last; with no
    // indent, as Python's `indent=0` prints, `{` starts lines inside one too). Given up here, it
    // holds no more than the lines up to the next value, however many records were cut short.
    const c = text.charAt(0);
    if ((c === "{" || c === "[") && (o.indented || tryParse(text))) return giveUp(o);
    o.indented ||= c === " " || c === "\t";
    // Too large to hold (a Logs Insights export is one document): read a member at a time, unless
    // it may be a record (held whole), or its first key is still to come (held up to it).
    const record =
      o.members || o.whole || o.chars + text.length + 1 <= hold
        ? undefined
        : o.first.charAt(0) === "{" && mayBeRecord([o.first.slice(1), ...o.later.map((l) => l.text)]);
    if (record === true) o.whole = true;
    if (record === false) {
      o.members = createMemberReader(o.first.charAt(0) === "{", o.line, limit, hold, (value, depth) =>
        out.push({ ok: true, value, line: o.line, depth }),
      );
      // The lines held so far, up to this one: the value is open at their end.
      const held = [o.first.slice(1), ...o.later.slice(0, -1).map((l) => l.text)].join("\n");
      if (o.members.feed(held) === "broken") {
        o.later.length = 0;
        return giveUp(o);
      }
    }
    if (o.members) {
      o.later.length = 0;
      return readMembers(o, o.members, text, line);
    }
    o.chars += text.length + 1;
    if (o.chars > limit) throw new RecordTooLarge(o.line, true);
    const end = balancedEnd(o.balance, text, 0);
    if (end === undefined) return;
    const parts = [o.first, ...o.later.slice(0, -1).map((l) => l.text), text.slice(0, end)];
    const parsed = tryParse(parts.join("\n"));
    if (!parsed) return giveUp(o);
    open = undefined;
    out.push({ ok: true, value: parsed.value, line: o.line });
    pending.push({ text, line, from: end });
  };

  /**
   * A line of a value read a member at a time: closed on it, the value ends and the rest of the
   * line is read on; a member that does not parse gives the value up.
   */
  const readMembers = (o: Open, members: MemberReader, text: string, line: number) => {
    const end = members.feed(`\n${text}`);
    if (end === "broken") return giveUp(o);
    if (end === undefined) return;
    open = undefined;
    out.push({ ok: "end" });
    pending.push({ text, line, from: end - 1 });
  };

  /** A line (from `from` on) with no value open. */
  const fresh = (text: string, line: number, from: number) => {
    let i = from;
    for (;;) {
      while (
        i < text.length &&
        (text.charAt(i) === " " || text.charAt(i) === "\t" || text.charAt(i) === "\r")
      )
        i += 1;
      if (i >= text.length) return;
      const c = text.charAt(i);
      const opens = c === "{" || c === "[";
      const whole = opens ? tryParse(text.slice(i)) : undefined;
      if (whole) return void out.push({ ok: true, value: whole.value, line });
      // A value that starts the line and ends before its end, values after it (`{…}{…}`, as
      // Firehose writes CloudWatch Logs to S3, or the rest of a pretty-printed value's last
      // line): read in turn. Looked for from a later `{` first, only the last of them was read,
      // and the others counted as one record cut short.
      const balance = { depth: 0, inString: false };
      const end = opens ? balancedEnd(balance, text, i) : undefined;
      const first = end === undefined ? undefined : tryParse(text.slice(i, end));
      if (end !== undefined && first) {
        out.push({ ok: true, value: first.value, line });
        i = end;
        continue;
      }
      // The line from one of its `{` on (a text prefix such as Lambda's `time\trequestId\tINFO\t`).
      const after = valuesAfterPrefix(text, opens ? i + 1 : i);
      if (after) {
        // A line that opens as a JSON object yet parses only from a later `{`: a record cut short
        // (a write a crash or a full disk ended), the next one appended to it. Counted, not lost;
        // so is a last value cut short at the line's end.
        if (c === "{" || after.cutShort) out.push({ ok: false, line, looksLikeJson: true });
        for (const value of after.values) out.push({ ok: true, value, line });
        return;
      }
      // `[` is left out: text logs start lines with `[INFO]` and the like.
      const rest = text.slice(i);
      if (!opens) return void out.push({ ok: false, line, looksLikeJson: looksLikeRecord(rest) });
      // A value that spans several lines (pretty-printed, as `wrangler tail --format json` prints).
      if (end === undefined) {
        open = { line, first: rest, later: [], chars: rest.length, indented: false, balance };
        return;
      }
      return void out.push({ ok: false, line, looksLikeJson: looksLikeRecord(rest) });
    }
  };

  const drain = () => {
    for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
      if (open) more(open, next.text, next.line);
      else fresh(next.text, next.line, next.from);
    }
    const values = out;
    out = [];
    return values;
  };

  return {
    push(text: string): JsonValue[] {
      lineCount += 1;
      // A UTF-8 byte order mark (an editor's, PowerShell's) is no part of the first value.
      const line = lineCount === 1 && text.charAt(0) === "\uFEFF" ? text.slice(1) : text;
      pending.push({ text: line, line: lineCount, from: 0 });
      return drain();
    },
    /** The values the end of the text settles: an open value that never closed is given up. */
    end(): JsonValue[] {
      const values: JsonValue[] = [];
      while (open) {
        giveUp(open);
        values.push(...drain());
      }
      return values;
    },
  };
}

/**
 * The JSON values that end a line behind a text prefix (Lambda's `time\trequestId\tINFO\t`, a
 * log line's timestamp): from the first `{` at or after `from` from which the rest of the line
 * is one value or more, apart or not (`{…} {…}{…}`), every one of them; undefined if there is none.
 * The last may be cut short at the line's end (a full disk, a log service's size cap): the
 * values before it are kept, and `cutShort` says so. A `{` that a scan read inside a value, or
 * open where the value broke, is not scanned again: a line of unclosed `{"a":{"a":…` is read in
 * one pass, not one per `{`.
 */
function valuesAfterPrefix(text: string, from: number): { values: unknown[]; cutShort: boolean } | undefined {
  /** Each `{` from which the rest of the line is known to be no such values. */
  const ruledOut = new Set<number>();
  for (let start = text.indexOf("{", from); start !== -1; start = text.indexOf("{", start + 1)) {
    if (ruledOut.has(start)) continue;
    const values: unknown[] = [];
    for (let at = start; ; ) {
      const scan = jsonValueEnd(text, at);
      if ("error" in scan) {
        if (values.length > 0 && scan.error === text.length) return { values, cutShort: true };
        for (const k of scan.open) ruledOut.add(k);
        break;
      }
      const parsed = tryParse(text.slice(at, scan.end));
      if (!parsed) break;
      values.push(parsed.value);
      // An object inside a value is followed by a `,`, `}` or `]`: no values to the line's end.
      for (const k of scan.objects) ruledOut.add(k);
      at = scan.end;
      while (at < text.length && " \t\r".includes(text.charAt(at))) at += 1;
      if (at === text.length) return { values, cutShort: false };
      if (text.charAt(at) !== "{" && text.charAt(at) !== "[") break;
    }
  }
  return undefined;
}

/** A value spanning lines past HOLD characters, fed its text (the lines with their `\n`). */
interface MemberReader {
  /** The index just past the value's end in `text`, "broken" if a member does not parse, or undefined. */
  feed(text: string): number | "broken" | undefined;
}

/**
 * Characters of a value spanning lines held whole, to be parsed as one (a pretty-printed
 * `wrangler tail` value, a hook record printed by `jq .`); past them, it is read a member at a
 * time (a Logs Insights export is one document, one row per record): each member is parsed
 * alone and its records found as in the whole value, and a member past them (the export's
 * `results`) is read a member at a time in turn. Such a value is never a hook record itself,
 * so one that may be (`mayBeRecord`) is held whole past them too.
 */
export const HOLD = 2 ** 20;

/**
 * Reads the members of an object (`object`) or array whose opening bracket is behind it, one at
 * a time, handing each to `found` with its depth in the value, as collectRecords walks it (the
 * value is at 0). Holds one member (up to `hold` characters; past them, a member that is an
 * object or array is read a member at a time too). Throws RecordTooLarge, naming the value's
 * `line`, past `limit` characters in one member.
 */
function createMemberReader(
  object: boolean,
  line: number,
  limit: number,
  hold: number,
  found: (value: unknown, depth: number) => void,
): MemberReader {
  /** The containers read a member at a time, innermost last: whether an object, and its depth. */
  const frames: { object: boolean; depth: number }[] = [{ object, depth: 0 }];
  /** The innermost one's current member: its text so far, and where a scan of it stands. */
  let pieces: string[] = [];
  let size = 0;
  let balance: Balance = { depth: 0, inString: false };
  let escaped = false;
  /** Whether the current member, past `hold`, is held whole all the same (`mayBeRecord`). */
  let whole = false;

  /** The member ended: parsed alone and handed on, or false if it does not parse. */
  const close = (text: string): boolean => {
    pieces = [];
    size = 0;
    whole = false;
    if (text.trim() === "") return true;
    const frame = frames[frames.length - 1] as { object: boolean; depth: number };
    const parsed = tryParse(frame.object ? `{${text}}` : text);
    if (!parsed) return false;
    const value = frame.object ? Object.values(parsed.value as object)[0] : parsed.value;
    found(value, frame.depth + 1);
    return true;
  };

  const feed = (text: string): number | "broken" | undefined => {
    let from = 0;
    for (let k = 0; k < text.length; k += 1) {
      const c = text.charAt(k);
      if (escaped) escaped = false;
      else if (balance.inString) {
        if (c === "\\") escaped = true;
        else if (c === '"') balance.inString = false;
      } else if (c === '"') balance.inString = true;
      else if (c === "{" || c === "[") balance.depth += 1;
      else if ((c === "}" || c === "]") && balance.depth > 0) balance.depth -= 1;
      else if (balance.depth === 0 && (c === "," || c === "}" || c === "]")) {
        if (!close(pieces.join("") + text.slice(from, k))) return "broken";
        from = k + 1;
        if (c !== ",") {
          frames.pop();
          if (frames.length === 0) return k + 1;
        }
      }
    }
    pieces.push(text.slice(from));
    size += text.length - from;
    if (size <= hold || whole || balance.depth === 0 || balance.inString) {
      if (size > limit) throw new RecordTooLarge(line, true);
      return undefined;
    }
    // A member too large to hold that is an object or array: read a member at a time in turn,
    // from just past its opening bracket (an object's member has its key before it).
    const member = pieces.join("");
    let opening = 0;
    for (let inString = false; opening < member.length; opening += 1) {
      const c = member.charAt(opening);
      if (inString) {
        if (c === "\\") opening += 1;
        else if (c === '"') inString = false;
      } else if (c === '"') inString = true;
      else if (c === "{" || c === "[") break;
    }
    const record = member.charAt(opening) === "{" && mayBeRecord([member.slice(opening + 1)]);
    if (record !== false) {
      whole = record === true;
      if (size > limit) throw new RecordTooLarge(line, true);
      return undefined;
    }
    const frame = frames[frames.length - 1] as { object: boolean; depth: number };
    frames.push({ object: member.charAt(opening) === "{", depth: frame.depth + 1 });
    pieces = [];
    size = 0;
    balance = { depth: 0, inString: false };
    return feed(member.slice(opening + 1));
  };
  return { feed };
}

/** The keys of a hook record and of its log line (`{"time","level","msg":"hook record","record"}`). */
const RECORD_KEYS: ReadonlySet<string> = new Set([
  "time",
  "decisionId",
  "policy",
  "client",
  "team",
  "event",
  "decision",
  "reason",
  "rules",
  "shadow",
  "level",
  "msg",
  "record",
]);

/**
 * Whether an object past HOLD, given its lines from just past its opening brace, may be a hook
 * record or its log line (undefined: its first key is still to come), and so is held whole: one
 * whose first key is one of
 * theirs (`jq .` keeps a record's order, `jq -S .` sorts it). A record's body may be up to 64 MiB
 * (`defaults.maxBodyBytes`); read a member at a time, it would be no record. A Logs Insights
 * export starts with `results`, `filter-log-events` output with `events`, a `wrangler tail` value
 * with none of theirs: read a member at a time.
 */
function mayBeRecord(lines: readonly string[]): boolean | undefined {
  for (const text of lines) {
    const start = text.search(/\S/);
    if (start === -1) continue;
    if (text.charAt(start) !== '"') return false;
    let end = start + 1;
    while (end < text.length && text.charAt(end) !== '"') end += text.charAt(end) === "\\" ? 2 : 1;
    const key = tryParse(text.slice(start, end + 1));
    return typeof key?.value === "string" && RECORD_KEYS.has(key.value);
  }
  return undefined;
}

/** Whether a line that does not parse is likely a record cut short. */
const looksLikeRecord = (text: string) => text.charAt(0) === "{" || text.includes('"hook record"');

/**
 * The index just past the object or array a scan started, carried from line to line, or
 * undefined if it does not close on this one. A `\` at the end of a line escapes the newline.
 */
function balancedEnd(balance: Balance, text: string, from: number): number | undefined {
  for (let k = from; k < text.length; k += 1) {
    const c = text.charAt(k);
    if (balance.inString) {
      if (c === "\\") k += 1;
      else if (c === '"') balance.inString = false;
    } else if (c === '"') balance.inString = true;
    else if (c === "{" || c === "[") balance.depth += 1;
    else if (c === "}" || c === "]") {
      balance.depth -= 1;
      if (balance.depth === 0) return k + 1;
    }
  }
  return undefined;
}

function tryParse(text: string): { value: unknown } | undefined {
  try {
    return { value: JSON.parse(text) };
  } catch {
    return undefined;
  }
}

/** A log line held as a string (an export's `@message`) that starts a record and does not parse. */
const CUT_SHORT = Symbol("cut short");

/**
 * A record's log line or record, as a string holds it: its `msg`, or its first key (a record as
 * `serve --record` writes it), not only a mention of either in another line's text.
 */
const RECORD_START = /^\{"(?:time|level)":[^{]*?"msg":"hook record"|^\{"time":"[^"]*","decisionId":/;

/**
 * Each record in a value, checked: the record, or what is wrong with it; CUT_SHORT for a log
 * line, held as a string, that starts as one and does not parse (CloudWatch keeps 256 KB of one).
 */
function collectRecords(
  value: unknown,
  depth: number,
  found: (checked: ReplayRecord | string | typeof CUT_SHORT) => void,
): void {
  if (depth > 8) return;
  if (typeof value === "string") {
    if (!value.includes(RECORD_LOG_MESSAGE) && !value.includes('"decisionId"')) return;
    const start = value.indexOf("{");
    const parsed = start === -1 ? undefined : tryParse(value.slice(start));
    if (parsed) collectRecords(parsed.value, depth + 1, found);
    else if (start !== -1 && RECORD_START.test(value.slice(start))) found(CUT_SHORT);
    return;
  }
  if (value === null || typeof value !== "object") return;
  if (Array.isArray(value)) {
    for (const item of value) collectRecords(item, depth + 1, found);
    return;
  }
  const object = value as Record<string, unknown>;
  const candidate =
    object.msg === RECORD_LOG_MESSAGE ? object.record : isBareRecord(object) ? object : undefined;
  if (candidate !== undefined) {
    found(checkRecord(candidate));
    return;
  }
  for (const item of Object.values(object)) collectRecords(item, depth + 1, found);
}

/** A record as `serve --record` writes it: the fields only a hook record has together. */
function isBareRecord(object: Record<string, unknown>): boolean {
  // An audit line also has decisionId and decision, but its `event` is the event's name.
  return (
    object.msg === undefined &&
    "decisionId" in object &&
    "decision" in object &&
    (typeof object.event === "object" || "eventOmitted" in object)
  );
}

const DECISIONS: ReadonlySet<string> = new Set(["allow", "deny", "ask", "defer", "block", "none"]);

/** The record, or what is wrong with it. */
function checkRecord(r: unknown): ReplayRecord | string {
  if (!isRecord(r)) return "the record is not an object";
  const problems: string[] = [];
  const omitted = eventOmitted(r);
  if (omitted === "malformed")
    problems.push("eventOmitted must be an object with bytes, and no event beside it");
  else if (omitted === undefined && !isRecord(r.event)) problems.push("event must be an object");
  if (typeof r.decision !== "string" || !DECISIONS.has(r.decision))
    problems.push("decision must be one of allow, deny, ask, defer, block, none");
  if (typeof r.client !== "string" || !(DIALECTS as readonly string[]).includes(r.client))
    problems.push(`client must be one of ${DIALECTS.join(", ")}`);
  if (r.team !== undefined && typeof r.team !== "string") problems.push("team must be a string");
  if (r.reason !== undefined && r.reason !== null && typeof r.reason !== "string")
    problems.push("reason must be a string");
  const rules = r.rules ?? [];
  if (!Array.isArray(rules) || rules.some((x) => typeof x !== "string"))
    problems.push("rules must be a list of rule ids");
  if (problems.length > 0) return problems.join("; ");
  const shadow = Array.isArray(r.shadow) ? (r.shadow as ReplayRecord["shadow"]) : [];
  return {
    time: typeof r.time === "string" ? r.time : "",
    decisionId: typeof r.decisionId === "string" ? r.decisionId : "",
    policy: typeof r.policy === "string" ? r.policy : "",
    client: r.client as Dialect,
    team: typeof r.team === "string" ? r.team : DEFAULT_TEAM,
    event: r.event,
    decision: r.decision as string,
    ...(typeof r.reason === "string" ? { reason: r.reason } : {}),
    rules: rules as string[],
    shadow,
    ...(typeof omitted === "object" ? { eventOmitted: omitted } : {}),
  };
}

/** A record's `eventOmitted` (createLogRecorder), undefined when it has none. */
function eventOmitted(r: Record<string, unknown>): { bytes: number } | "malformed" | undefined {
  const o = r.eventOmitted;
  if (o === undefined) return undefined;
  if (!isRecord(o) || r.event !== undefined) return "malformed";
  return typeof o.bytes === "number" ? { bytes: o.bytes } : "malformed";
}

// ---------------------------------------------------------------------------------------------
// Impact: what a candidate policy would have answered to recorded traffic
// ---------------------------------------------------------------------------------------------

/** `before->after`, e.g. `none->deny`. */
export type Change = string;
export type Counts = Record<string, number>;

export interface ImpactExample {
  readonly time: string;
  readonly team: string;
  readonly client: string;
  readonly event: string;
  readonly tool: string | undefined;
  /** The masked tool input or prompt, as recorded. */
  readonly input: unknown;
  /** Set when the recorded event had something masked or cut (`ImpactReport.masked`). */
  readonly masked?: true;
  readonly before: { readonly decision: string; readonly reason?: string; readonly rules: readonly string[] };
  readonly after: { readonly decision: string; readonly reason?: string; readonly rules: readonly string[] };
}

export interface ImpactReport {
  /** The candidate policy's hash. */
  readonly policy: string;
  readonly records: number;
  readonly unchanged: number;
  readonly changed: number;
  /** Hashes of the policies that answered live, with their record counts. */
  readonly recordedPolicies: Counts;
  readonly byChange: Counts;
  /** Per rule, the changes it explains: the rules that decide the new answer, or, when the new answer is none, the recorded rules that no longer apply. */
  readonly byRule: Record<string, Counts>;
  readonly byTeam: Record<string, Counts>;
  /** Per tool (`(Stop)` and the like for events without one). */
  readonly byTool: Record<string, Counts>;
  /** Records reaching prompt or forward rules, which replay does not run: their answer is not compared. */
  readonly notRun: { readonly records: number; readonly byRule: Counts };
  /**
   * `--with-judge`: records whose prompt rule's model call failed (no key, unreachable, too slow),
   * so the answer is the rule's `onError`, not the model's: not compared either. Per rule and
   * failure code (`judge-writes (JUDGE_NO_API_KEY)`).
   */
  readonly judgeFailed: { readonly records: number; readonly byRule: Counts };
  /**
   * Records written without their event, too large for a log line (createLogRecorder): not
   * judged, not compared. Per decision recorded.
   */
  readonly eventOmitted: { readonly records: number; readonly byDecision: Counts };
  /**
   * Records of a team no token of the candidate authenticates as (a team removed or renamed, or
   * recorded with no auth against a candidate with some): live, their callers' tokens are refused
   * unless the candidate gives them to another team, which a record cannot tell. Not judged, not
   * compared. Per team recorded.
   */
  readonly teamUnknown: { readonly records: number; readonly byTeam: Counts };
  /**
   * Records whose event the candidate cannot judge (an event no longer valid: a field masking cut
   * or replaced, a record edited by hand or from a version that took what this one refuses): the
   * answer is a fail mode's, which says nothing of the candidate. Not compared; per error code.
   */
  readonly unjudged: { readonly records: number; readonly byError: Counts };
  /**
   * Records whose event was recorded masked (a value or key masked, a string cut at 2,000
   * characters): the live event held what the record does not, so the candidate may answer it
   * otherwise than its record, a change the masking's and not the candidate's, or one hidden.
   * `compared`: those compared; `records`: those changed, per change.
   */
  readonly masked: { readonly compared: number; readonly records: number; readonly byChange: Counts };
  /** What the candidate's shadow rules would have decided, per rule. */
  readonly shadow: Record<string, Counts>;
  readonly examples: Record<Change, readonly ImpactExample[]>;
}

export interface ReplayOptions {
  /** Examples kept per change (default 3). */
  readonly examples?: number;
}

/** A remote rule's outcomes that leave its answer the model's (or a static deny's): comparable. */
const CALLED: ReadonlySet<string> = new Set(["OK", "CACHE_HIT", "SKIPPED", "NOT_RUN"]);

/** Judges every record against the candidate, with no side effects, and sums up the differences. */
export async function replayImpact(
  deps: JudgeDeps,
  candidate: Policy,
  records: Iterable<ReplayRecord> | AsyncIterable<ReplayRecord>,
  options: ReplayOptions = {},
): Promise<ImpactReport> {
  const keep = options.examples ?? 3;
  const judge = createJudge(deps, candidate);
  // Keyed by the records' names (a team, a tool, a rule, a policy hash): objects with no
  // prototype, so "__proto__" or "constructor" is a name like any other (`tally`).
  const byChange: Counts = tally();
  const byRule: Record<string, Counts> = tally();
  const byTeam: Record<string, Counts> = tally();
  const byTool: Record<string, Counts> = tally();
  const recordedPolicies: Counts = tally();
  const notRunByRule: Counts = tally();
  const judgeFailedByRule: Counts = tally();
  let judgeFailed = 0;
  const omittedByDecision: Counts = tally();
  let omitted = 0;
  const unknownByTeam: Counts = tally();
  let unknownTeam = 0;
  const unjudgedByError: Counts = tally();
  let unjudged = 0;
  // Without auth every caller is the default team, whatever team its record names.
  const teams = candidate.auth === undefined ? undefined : teamsOf(candidate.document);
  const maskedByChange: Counts = tally();
  let masked = 0;
  let maskedCompared = 0;
  const shadow: Record<string, Counts> = tally();
  const examples: Record<Change, ImpactExample[]> = tally();
  let unchanged = 0;
  let notRun = 0;
  let count = 0;

  // One at a time as they come: a record file is streamed, never held whole.
  for await (const record of records) {
    count += 1;
    bump(recordedPolicies, record.policy || "unknown");
    if (record.eventOmitted) {
      omitted += 1;
      bump(omittedByDecision, record.decision);
      continue;
    }
    if (teams !== undefined && !teams.has(record.team)) {
      unknownTeam += 1;
      bump(unknownByTeam, record.team);
      continue;
    }
    const outcome = await judge({
      body: { ok: true, text: JSON.stringify(record.event) },
      client: record.client,
      team: teams === undefined ? DEFAULT_TEAM : record.team,
    });
    if (outcome.error) {
      unjudged += 1;
      bump(unjudgedByError, outcome.error.code);
      continue;
    }
    const audit = outcome.audit;
    // A shadow prompt or forward rule that was not called has no verdict: not "none".
    for (const s of audit.shadow)
      bumpIn(shadow, s.rule, s.outcome === "NOT_RUN" || s.outcome === "SKIPPED" ? "not run" : s.decision);
    const unrun = audit.pending.filter((p) => p.outcome === "NOT_RUN");
    if (unrun.length > 0) {
      notRun += 1;
      for (const p of unrun) bump(notRunByRule, p.rule);
      continue;
    }
    const failed = audit.pending.filter((p) => p.outcome !== undefined && !CALLED.has(p.outcome));
    if (failed.length > 0) {
      judgeFailed += 1;
      for (const p of failed) bump(judgeFailedByRule, `${p.rule} (${p.outcome})`);
      continue;
    }
    const wasMasked = holdsMasked(record.event);
    if (wasMasked) maskedCompared += 1;
    if (audit.decision === record.decision) {
      unchanged += 1;
      continue;
    }
    const change = `${record.decision}->${audit.decision}`;
    bump(byChange, change);
    if (wasMasked) {
      masked += 1;
      bump(maskedByChange, change);
    }
    for (const rule of explainingRules(candidate, audit.event, audit.decision, audit.rules, record.rules))
      bumpIn(byRule, rule, change);
    bumpIn(byTeam, record.team, change);
    bumpIn(byTool, audit.tool ?? `(${audit.event ?? "unknown"})`, change);
    const kept = examples[change] ?? [];
    if (kept.length < keep) examples[change] = [...kept, example(record, outcome, wasMasked)];
  }

  return {
    policy: candidate.hash,
    records: count,
    unchanged,
    changed: count - unchanged - notRun - judgeFailed - omitted - unknownTeam - unjudged,
    recordedPolicies: sorted(recordedPolicies),
    byChange: sorted(byChange),
    byRule: sortedNested(byRule),
    byTeam: sortedNested(byTeam),
    byTool: sortedNested(byTool),
    notRun: { records: notRun, byRule: sorted(notRunByRule) },
    judgeFailed: { records: judgeFailed, byRule: sorted(judgeFailedByRule) },
    eventOmitted: { records: omitted, byDecision: sorted(omittedByDecision) },
    teamUnknown: { records: unknownTeam, byTeam: sorted(unknownByTeam) },
    unjudged: { records: unjudged, byError: sorted(unjudgedByError) },
    masked: { compared: maskedCompared, records: masked, byChange: sorted(maskedByChange) },
    shadow: sortedNested(shadow),
    examples: Object.fromEntries(Object.keys(sorted(byChange)).map((c) => [c, examples[c] ?? []])),
  };
}

/**
 * The rules a change is put down to: the candidate's rules whose own decision is the new
 * answer, else its prompt and forward rules that applied (their answer is a model's or a
 * server's); when the new answer is none, the recorded rules that no longer apply (removed or
 * narrowed), else every recorded rule.
 */
function explainingRules(
  candidate: Policy,
  eventName: string | undefined,
  decision: string,
  appliedNow: readonly string[],
  appliedBefore: readonly string[],
): string[] {
  if (decision !== "none" && eventName !== undefined) {
    const deciders = appliedNow.filter((id) => {
      const action = candidate.rules.find((r) => r.id === id)?.action;
      return action?.kind === "decide" && honouredDecision(eventName, action.decision) === decision;
    });
    if (deciders.length > 0) return deciders;
    // A prompt or forward rule's decision is its model's or server's: no decide rule gave the
    // answer, so one of them did.
    const remote = appliedNow.filter((id) => {
      const kind = candidate.rules.find((r) => r.id === id)?.action?.kind;
      return kind === "prompt" || kind === "forward";
    });
    if (remote.length > 0) return remote;
  }
  const gone = appliedBefore.filter((id) => !appliedNow.includes(id));
  if (gone.length > 0) return gone;
  return appliedBefore.length > 0 ? [...appliedBefore] : ["(no rule)"];
}

function example(record: ReplayRecord, outcome: HookOutcome, masked: boolean): ImpactExample {
  const event = record.event as Record<string, unknown>;
  const audit = outcome.audit;
  return {
    time: record.time,
    team: record.team,
    client: record.client,
    event: audit.event ?? String(event.hook_event_name ?? event.event ?? "unknown"),
    tool: audit.tool,
    input: event.tool_input ?? event.tool_args ?? event.prompt,
    ...(masked ? { masked: true as const } : {}),
    before: {
      decision: record.decision,
      ...(record.reason !== undefined ? { reason: record.reason } : {}),
      rules: record.rules,
    },
    after: {
      decision: audit.decision,
      ...(audit.reason !== undefined ? { reason: audit.reason } : {}),
      rules: audit.rules,
    },
  };
}

/**
 * An object with no prototype, for counts by a name from the records: on a plain one a tool
 * named "__proto__" read Object.prototype and counted into it, so every count after it started
 * from 1, and "constructor" counted into the Object function.
 */
function tally<T>(): Record<string, T> {
  return Object.create(null) as Record<string, T>;
}

function bump(counts: Counts, key: string): void {
  counts[key] = (counts[key] ?? 0) + 1;
}

function bumpIn(nested: Record<string, Counts>, key: string, count: string): void {
  const counts = nested[key] ?? tally<number>();
  bump(counts, count);
  nested[key] = counts;
}

/** Largest count first, then by name, so reports read top-down and diff stably. */
function sorted(counts: Counts): Counts {
  return Object.fromEntries(Object.entries(counts).sort(([a, x], [b, y]) => y - x || byCodeUnit(a, b)));
}

function sortedNested(nested: Record<string, Counts>): Record<string, Counts> {
  const total = (c: Counts) => Object.values(c).reduce((s, n) => s + n, 0);
  return Object.fromEntries(
    Object.entries(nested)
      .sort(([a, x], [b, y]) => total(y) - total(x) || byCodeUnit(a, b))
      .map(([k, v]) => [k, sorted(v)]),
  );
}

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
import { DEFAULT_TEAM } from "../core/auth.js";
import { honouredDecision } from "../core/event-capabilities.js";
import { DIALECTS, type Dialect } from "../core/hook-event.js";
import type { Policy } from "../core/policy.js";
import type { Clock, IdGenerator, Logger, Sha256 } from "../core/ports.js";
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

/** The recorder for runtimes whose only durable output is the log stream (Workers, Lambda). */
export function createLogRecorder(logger: Logger): Recorder {
  return (record) => logger.log("info", RECORD_LOG_MESSAGE, { record });
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
 * (`wrangler tail --format json`, whose `logs[].message[]` hold the log lines as strings); and
 * JSON documents that hold such lines as strings (CloudWatch exports). Everything else is skipped.
 */
export function readRecords(text: string): ReadRecords {
  const records: ReplayRecord[] = [];
  const invalid: { at: string; problem: string }[] = [];
  let skipped = 0;
  const unparsed: { count: number; firstLine: number | undefined } = { count: 0, firstLine: undefined };
  for (const value of jsonValues(text)) {
    if (!value.ok) {
      skipped += 1;
      if (value.looksLikeJson) {
        unparsed.count += 1;
        unparsed.firstLine ??= value.line;
      }
      continue;
    }
    const before = records.length + invalid.length;
    collectRecords(value.value, `line ${value.line}`, records, invalid, 0);
    if (records.length + invalid.length === before) skipped += 1;
  }
  return { records, invalid, skipped, unparsed };
}

type JsonValue =
  | { ok: true; value: unknown; line: number }
  | { ok: false; line: number; looksLikeJson: boolean };

/** The JSON values in a text: one per line, or spread over several lines, or after a text prefix. */
function* jsonValues(text: string): Generator<JsonValue> {
  let i = 0;
  let line = 1;
  while (i < text.length) {
    const c = text.charAt(i);
    if (c === "\n") {
      line += 1;
      i += 1;
      continue;
    }
    if (c === " " || c === "\t" || c === "\r") {
      i += 1;
      continue;
    }
    const next = text.indexOf("\n", i);
    const lineEnd = next === -1 ? text.length : next;
    const found = valueOnLine(text, i, lineEnd);
    if (!found) {
      // `[` is left out: text logs start lines with `[INFO]` and the like.
      const looksLikeJson = c === "{" || text.slice(i, lineEnd).includes('"hook record"');
      yield { ok: false, line, looksLikeJson };
      i = lineEnd;
      continue;
    }
    const { parsed, end, start } = found;
    // A line that opens as a JSON object yet parses only from a later `{`: a record cut short
    // (a write a crash or a full disk ended), the next one appended to it. Counted, not lost.
    if (c === "{" && start > i) yield { ok: false, line, looksLikeJson: true };
    yield { ok: true, value: parsed.value, line };
    for (let k = i; k < end; k += 1) if (text.charAt(k) === "\n") line += 1;
    i = end;
  }
}

/**
 * The JSON value on this line: the whole line (JSONL), or the line from one of its `{` on (a
 * text prefix such as Lambda's `time\trequestId\tINFO\t`), or a value that starts the line
 * and spans several (pretty-printed, as `wrangler tail --format json` prints).
 */
function valueOnLine(
  text: string,
  from: number,
  lineEnd: number,
): { parsed: { value: unknown }; start: number; end: number } | undefined {
  const first = text.charAt(from);
  const opens = first === "{" || first === "[";
  for (
    let start = opens ? from : text.indexOf("{", from);
    start !== -1 && start < lineEnd;
    start = text.indexOf("{", start + 1)
  ) {
    const parsed = tryParse(text.slice(start, lineEnd));
    if (parsed) return { parsed, start, end: lineEnd };
  }
  if (!opens) return undefined;
  const end = balancedEnd(text, from);
  const parsed = end === undefined ? undefined : tryParse(text.slice(from, end));
  return parsed && end !== undefined ? { parsed, start: from, end } : undefined;
}

/** The index just past the object or array starting at `start`, or undefined if it never closes. */
function balancedEnd(text: string, start: number): number | undefined {
  let depth = 0;
  let inString = false;
  for (let k = start; k < text.length; k += 1) {
    const c = text.charAt(k);
    if (inString) {
      if (c === "\\") k += 1;
      else if (c === '"') inString = false;
    } else if (c === '"') inString = true;
    else if (c === "{" || c === "[") depth += 1;
    else if (c === "}" || c === "]") {
      depth -= 1;
      if (depth === 0) return k + 1;
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

function collectRecords(
  value: unknown,
  at: string,
  records: ReplayRecord[],
  invalid: { at: string; problem: string }[],
  depth: number,
): void {
  if (depth > 8) return;
  if (typeof value === "string") {
    if (!value.includes(RECORD_LOG_MESSAGE) && !value.includes('"decisionId"')) return;
    const start = value.indexOf("{");
    const parsed = start === -1 ? undefined : tryParse(value.slice(start));
    if (parsed) collectRecords(parsed.value, at, records, invalid, depth + 1);
    return;
  }
  if (value === null || typeof value !== "object") return;
  if (Array.isArray(value)) {
    for (const item of value) collectRecords(item, at, records, invalid, depth + 1);
    return;
  }
  const object = value as Record<string, unknown>;
  const candidate =
    object.msg === RECORD_LOG_MESSAGE ? object.record : isBareRecord(object) ? object : undefined;
  if (candidate !== undefined) {
    const checked = checkRecord(candidate);
    if (typeof checked === "string") invalid.push({ at, problem: checked });
    else records.push(checked);
    return;
  }
  for (const item of Object.values(object)) collectRecords(item, at, records, invalid, depth + 1);
}

/** A record as `serve --record` writes it: the fields only a hook record has together. */
function isBareRecord(object: Record<string, unknown>): boolean {
  // An audit line also has decisionId and decision, but its `event` is the event's name.
  return (
    object.msg === undefined &&
    "decisionId" in object &&
    "decision" in object &&
    typeof object.event === "object"
  );
}

const DECISIONS: ReadonlySet<string> = new Set(["allow", "deny", "ask", "defer", "block", "none"]);

/** The record, or what is wrong with it. */
function checkRecord(value: unknown): ReplayRecord | string {
  if (value === null || typeof value !== "object" || Array.isArray(value))
    return "the record is not an object";
  const r = value as Record<string, unknown>;
  const problems: string[] = [];
  if (r.event === null || typeof r.event !== "object" || Array.isArray(r.event))
    problems.push("event must be an object");
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
  };
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
  records: readonly ReplayRecord[],
  options: ReplayOptions = {},
): Promise<ImpactReport> {
  const keep = options.examples ?? 3;
  const judge = createJudge(deps, candidate);
  const byChange: Counts = {};
  const byRule: Record<string, Counts> = {};
  const byTeam: Record<string, Counts> = {};
  const byTool: Record<string, Counts> = {};
  const recordedPolicies: Counts = {};
  const notRunByRule: Counts = {};
  const judgeFailedByRule: Counts = {};
  let judgeFailed = 0;
  const shadow: Record<string, Counts> = {};
  const examples: Record<Change, ImpactExample[]> = {};
  let unchanged = 0;
  let notRun = 0;

  for (const record of records) {
    bump(recordedPolicies, record.policy || "unknown");
    const outcome = await judge({
      body: { ok: true, text: JSON.stringify(record.event) },
      client: record.client,
      team: record.team,
    });
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
    if (audit.decision === record.decision) {
      unchanged += 1;
      continue;
    }
    const change = `${record.decision}->${audit.decision}`;
    bump(byChange, change);
    for (const rule of explainingRules(candidate, audit.event, audit.decision, audit.rules, record.rules))
      bumpIn(byRule, rule, change);
    bumpIn(byTeam, record.team, change);
    bumpIn(byTool, audit.tool ?? `(${audit.event ?? "unknown"})`, change);
    const kept = examples[change] ?? [];
    if (kept.length < keep) examples[change] = [...kept, example(record, outcome)];
  }

  return {
    policy: candidate.hash,
    records: records.length,
    unchanged,
    changed: records.length - unchanged - notRun - judgeFailed,
    recordedPolicies: sorted(recordedPolicies),
    byChange: sorted(byChange),
    byRule: sortedNested(byRule),
    byTeam: sortedNested(byTeam),
    byTool: sortedNested(byTool),
    notRun: { records: notRun, byRule: sorted(notRunByRule) },
    judgeFailed: { records: judgeFailed, byRule: sorted(judgeFailedByRule) },
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

function example(record: ReplayRecord, outcome: HookOutcome): ImpactExample {
  const event = record.event as Record<string, unknown>;
  const audit = outcome.audit;
  return {
    time: record.time,
    team: record.team,
    client: record.client,
    event: audit.event ?? String(event.hook_event_name ?? event.event ?? "unknown"),
    tool: audit.tool,
    input: event.tool_input ?? event.tool_args ?? event.prompt,
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

function bump(counts: Counts, key: string): void {
  counts[key] = (counts[key] ?? 0) + 1;
}

function bumpIn(nested: Record<string, Counts>, key: string, count: string): void {
  const counts = nested[key] ?? {};
  bump(counts, count);
  nested[key] = counts;
}

/** Largest count first, then by name, so reports read top-down and diff stably. */
function sorted(counts: Counts): Counts {
  return Object.fromEntries(
    Object.entries(counts).sort(([a, x], [b, y]) => y - x || (a < b ? -1 : a > b ? 1 : 0)),
  );
}

function sortedNested(nested: Record<string, Counts>): Record<string, Counts> {
  const total = (c: Counts) => Object.values(c).reduce((s, n) => s + n, 0);
  return Object.fromEntries(
    Object.entries(nested)
      .sort(([a, x], [b, y]) => total(y) - total(x) || (a < b ? -1 : a > b ? 1 : 0))
      .map(([k, v]) => [k, sorted(v)]),
  );
}

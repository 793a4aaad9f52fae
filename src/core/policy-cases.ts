/**
 * Policy tests (`hookgate test`): the cases file's schema and the checker that compares what a
 * policy answered with what a case expects. Pure: reading files and running the policy happen
 * in src/entry and src/app. Objects are strict, like the policy's: a misspelt expectation
 * (`"decison"`) that was silently ignored would make a test pass that checks nothing.
 */
import * as z from "zod/mini";
import { closestName } from "./closest-name.js";
import { honouredDecision } from "./event-capabilities.js";
import { closestEvent, isKnownEvent } from "./events.js";
import type { Dialect } from "./hook-event.js";
import { type JsonScanFinding, scanJson } from "./json-scan.js";
import {
  jsonPath,
  jsonScanIssues,
  MAX_JSON_DEPTH,
  type PolicyIssue,
  parseJsonFile,
  valueAt,
  wrongType,
} from "./policy.js";
import { DECISION_KINDS } from "./policy-schema.js";
import { err, ok, type Result } from "./result.js";

/** The decision kinds an audit line records: the policy's five, and `none` (no opinion). */
export const EXPECTED_DECISIONS = [...DECISION_KINDS, "none"] as const;
export type ExpectedDecision = (typeof EXPECTED_DECISIONS)[number];

const CLIENTS = [
  "claude-code",
  "deepcode",
  "deepagents",
  "deepagents-legacy",
] as const satisfies readonly Dialect[];

const nonEmpty = () => z.string().check(z.minLength(1, "must not be empty"));
const ruleIds = () => z.array(nonEmpty());

export const ExpectationSchema = z.strictObject({
  /** The final decision as the audit line records it. */
  decision: z.enum(EXPECTED_DECISIONS),
  /** A substring of the answer's reason. */
  reason: z.optional(z.string()),
  /** `true`: some added context is sent; `false`: none; a string: a substring of it. */
  context: z.optional(z.union([z.boolean(), z.string()])),
  /** Exactly these enforcing rules applied (order ignored; `[]`: none). */
  rules: z.optional(ruleIds()),
  /** Exactly these shadow rules applied and recorded what they would have decided. */
  shadowed: z.optional(ruleIds()),
});

export const CaseSchema = z.strictObject({
  name: z.optional(nonEmpty()),
  /** The hook body inline, or the path of a JSON file holding it, relative to the cases file. */
  event: z.union([nonEmpty(), z.record(z.string(), z.unknown())]),
  /** Top-level fields laid over the event (to vary one field of a recorded body). */
  with: z.optional(z.record(z.string(), z.unknown())),
  client: z.optional(z.enum(CLIENTS)),
  team: z.optional(nonEmpty()),
  expect: ExpectationSchema,
});

export const CasesSchema = z.strictObject({
  $schema: z.optional(z.string()),
  description: z.optional(z.string()),
  /** Defaults for every case. */
  client: z.optional(z.enum(CLIENTS)),
  team: z.optional(nonEmpty()),
  cases: z.array(CaseSchema).check(z.minLength(1, "must list at least one case")),
});

export type Expectation = z.infer<typeof ExpectationSchema>;
export type PolicyCase = z.infer<typeof CaseSchema>;
export type CasesDocument = z.infer<typeof CasesSchema>;

/** A cases file's text, validated; every problem comes back with its JSON path. */
export function parseCases(text: string): Result<CasesDocument, PolicyIssue[]> {
  const parsed = parseJsonFile(text);
  if (!parsed.ok) return parsed;
  // Two "expect"s in a case would test only the last. A "__proto__" key inside an event's field
  // is the agent's, kept in the body sent (only a map the schema copies drops one).
  const repeated = jsonScanIssues(scanJson(text, MAX_JSON_DEPTH).filter((f) => !inEventField(f)));
  if (repeated.length > 0) return err(repeated);
  const json = parsed.value;
  const result = CasesSchema.safeParse(json);
  if (!result.success) {
    return err(
      result.error.issues.map((issue) => ({
        severity: "error",
        path: jsonPath(issue.path),
        message: isMissing(json, issue.path)
          ? "is required"
          : issue.code === "invalid_type" && issue.message === "Invalid input"
            ? wrongType(issue.expected, valueAt(json, issue.path).at)
            : issueMessage(issue),
      })),
    );
  }
  return ok(result.data);
}

/** A `"__proto__"` within a field of a case's `event` or `with` (`tool_input`'s, say). */
function inEventField({ kind, path }: JsonScanFinding): boolean {
  return (
    kind === "prototype" &&
    path[0] === "cases" &&
    (path[2] === "event" || path[2] === "with") &&
    path.length > 4
  );
}

/** zod/mini does not say whether a value was missing or wrong; the document does. */
function isMissing(json: unknown, path: readonly PropertyKey[]): boolean {
  return !valueAt(json, path).present;
}

function issueMessage(issue: z.core.$ZodIssue): string {
  switch (issue.code) {
    case "unrecognized_keys":
      return `unknown key${issue.keys.length > 1 ? "s" : ""} ${issue.keys.map((k) => `"${k}"`).join(", ")}`;
    case "invalid_union":
      return issue.path.at(-1) === "event"
        ? "must be an event object or the path of a JSON file holding one"
        : "does not match any of the accepted forms";
    case "invalid_value":
      return `must be ${issue.values.length > 1 ? "one of " : ""}${issue.values.map((v) => JSON.stringify(v)).join(", ")}`;
    case "invalid_type":
      return issue.message === "Invalid input" ? `expected ${issue.expected}` : issue.message;
    default:
      return issue.message;
  }
}

/** The body a case sends: the event with `with` laid over its top-level fields. */
export function caseBody(
  event: Readonly<Record<string, unknown>>,
  overlay?: Readonly<Record<string, unknown>>,
) {
  return JSON.stringify(overlay ? { ...event, ...overlay } : event);
}

/** What the policy answered to one case, as the audit line and the answer show it. */
export interface Observed {
  readonly decision: string;
  readonly reason: string | undefined;
  /** The added context the client receives, if any. */
  readonly context: string | undefined;
  readonly rules: readonly string[];
  readonly shadowed: readonly string[];
  /** A request error (an invalid event, ...): shown with a failed decision to explain it. */
  readonly error?: { readonly code: string; readonly message: string } | undefined;
  /** The event's name, for a decision it is never answered with, and for a name no client sends. */
  readonly event?: string | undefined;
}

/**
 * The policy's rules, for an expectation naming one it does not have or in the wrong list, and
 * for an event no client sends that no rule names.
 */
export type CaseRules = readonly {
  readonly id: string;
  readonly mode: "enforce" | "shadow" | "off";
  readonly events: readonly string[] | "*";
}[];

/** Every way the observed answer differs from the expectation; empty when the case passes. */
export function checkExpectation(expect: Expectation, observed: Observed, rules: CaseRules = []): string[] {
  const failures: string[] = [];
  // An event the gateway cannot judge answers with a fail mode, which may look like the
  // expected decision; a test of an invalid event is never a pass.
  if (observed.error) failures.push(`event: not judged (${observed.error.code}: ${observed.error.message})`);
  const unknown = unknownEvent(observed.event, rules);
  if (unknown !== undefined) failures.push(`event: ${unknown}`);
  if (observed.decision !== expect.decision) {
    failures.push(
      `decision: expected ${expect.decision}, got ${observed.decision}${neverAnswered(expect.decision, observed.event)}`,
    );
  }
  if (expect.reason !== undefined && !(observed.reason ?? "").includes(expect.reason)) {
    failures.push(
      `reason: expected it to contain ${JSON.stringify(expect.reason)}, got ${quoted(observed.reason)}`,
    );
  }
  const context = expect.context;
  if (context === true && observed.context === undefined) {
    failures.push("context: expected added context, got none");
  } else if (context === false && observed.context !== undefined) {
    failures.push(`context: expected none, got ${quoted(observed.context)}`);
  } else if (typeof context === "string" && !(observed.context ?? "").includes(context)) {
    failures.push(
      `context: expected it to contain ${JSON.stringify(context)}, got ${quoted(observed.context)}`,
    );
  }
  if (expect.rules !== undefined && !sameSet(expect.rules, observed.rules)) {
    failures.push(
      `rules: expected ${list(expect.rules)}, applied ${list(observed.rules)}${misplaced(expect.rules, rules, "rules")}`,
    );
  }
  if (expect.shadowed !== undefined && !sameSet(expect.shadowed, observed.shadowed)) {
    failures.push(
      `shadowed: expected ${list(expect.shadowed)}, got ${list(observed.shadowed)}${misplaced(expect.shadowed, rules, "shadowed")}`,
    );
  }
  // Which rules answered, so a failure says where its decision, reason or context came from
  // even when the case does not list them.
  if (failures.length > 0 && expect.rules === undefined && observed.error === undefined) {
    failures.push(`rules: applied ${list(observed.rules)}`);
  }
  return failures;
}

/**
 * Why an expected decision can never be an answer to a client's event (a `deny` on Stop, which
 * is answered `block`; an `ask` on a Notification, which takes no decision): what its rules
 * decide is honoured as event-capabilities.ts `honouredDecision` says, or not sent.
 */
function neverAnswered(decision: string, event: string | undefined): string {
  if (decision === "none" || event === undefined || !isKnownEvent(event)) return "";
  const answers = new Set(
    EXPECTED_DECISIONS.map((kind) => (kind === "none" ? kind : honouredDecision(event, kind))),
  );
  if (answers.has(decision as ExpectedDecision)) return "";
  const others = [...answers].filter((d) => d !== undefined && d !== "none");
  return ` (${event} is never answered ${decision}: ${others.length > 0 ? `only ${others.join(", ")} or none` : "it takes no decision, so only none"})`;
}

/**
 * A case's event named as no client names one and as no rule of the policy does: a typo, which
 * the gateway takes for a client's newer event and answers with no rule, so `none` would pass.
 */
function unknownEvent(name: string | undefined, rules: CaseRules): string | undefined {
  if (name === undefined || isKnownEvent(name)) return undefined;
  if (rules.some((rule) => rule.events !== "*" && rule.events.includes(name))) return undefined;
  const meant = closestEvent(name);
  return `"${name}" is not an event any supported client sends, and no rule names it${meant ? `: did you mean ${meant}?` : ""}`;
}

/**
 * Why rules an expectation lists can never be among those applied: no rule of the policy has the
 * id (a typo), or the rule is `off`, or it goes in the other list (a shadow rule in `rules`).
 */
function misplaced(ids: readonly string[], rules: CaseRules, where: "rules" | "shadowed"): string {
  if (rules.length === 0) return "";
  const why = ids.flatMap((id) => {
    const rule = rules.find((r) => r.id === id);
    if (rule === undefined) {
      const meant = closestName(
        id,
        rules.map((r) => r.id),
      );
      return [`"${id}" is no rule of the policy${meant ? `: did you mean ${meant}?` : ""}`];
    }
    if (rule.mode === "off") return [`"${id}" is off, so it never applies`];
    if (where === "rules" && rule.mode === "shadow") return [`"${id}" is a shadow rule: list it in shadowed`];
    if (where === "shadowed" && rule.mode !== "shadow")
      return [`"${id}" is no shadow rule: list it in rules`];
    return [];
  });
  return why.length > 0 ? ` (${why.join("; ")})` : "";
}

/**
 * The added context in an answer: `hookSpecificOutput.additionalContext`, or on PreCompact the
 * instructions a `context` rule answers with (`{"reason":"…"}` without a decision: render.ts).
 */
export function answerContext(answer: { readonly body: string }, event: string | undefined) {
  if (answer.body === "") return undefined;
  try {
    const parsed = JSON.parse(answer.body) as {
      decision?: unknown;
      reason?: unknown;
      hookSpecificOutput?: { additionalContext?: unknown };
    };
    const context =
      event === "PreCompact" && parsed.decision === undefined
        ? parsed.reason
        : parsed.hookSpecificOutput?.additionalContext;
    return typeof context === "string" ? context : undefined;
  } catch {
    return undefined;
  }
}

export interface RuleCoverage {
  /** Rules no case applied (enforcing, pending or shadow), in file order. */
  readonly uncovered: readonly string[];
  /** Rules with `mode: "off"`: never evaluated, so no case can exercise them. */
  readonly off: readonly string[];
}

/** Which rules of the policy no case exercised. */
export function ruleCoverage(
  rules: readonly { readonly id: string; readonly mode: string }[],
  exercised: ReadonlySet<string>,
): RuleCoverage {
  return {
    uncovered: rules.filter((r) => r.mode !== "off" && !exercised.has(r.id)).map((r) => r.id),
    off: rules.filter((r) => r.mode === "off").map((r) => r.id),
  };
}

function sameSet(a: readonly string[], b: readonly string[]): boolean {
  const left = new Set(a);
  const right = new Set(b);
  return left.size === right.size && [...left].every((x) => right.has(x));
}

const list = (ids: readonly string[]) => (ids.length === 0 ? "none" : `[${ids.join(", ")}]`);
const quoted = (text: string | undefined) => (text === undefined ? "none" : JSON.stringify(text));

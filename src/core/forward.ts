/**
 * The pure half of `forward` rules (POLICY.md): the headers sent to a team's own hook server,
 * and its answer read the way the client that sent the event reads a hook's answer: Claude
 * Code's http hook (reference/clients.md §3.3, §4.1, §4.2, §6.1, §6.2), with deepcode's and
 * deepagents' differences (§6.3, §6.4), turned into one rule's effect. The request itself goes
 * through the egress port (app/remote-actions.ts).
 */
import type { RuleEffect } from "./decision.js";
import { escapeControls } from "./escape-controls.js";
import {
  carriesContext,
  DEEPAGENTS_OUTPUT_EVENTS,
  DEEPCODE_PERMISSION_BLOCKS,
  honouredDecision,
  PERMISSION_EVENTS,
} from "./event-capabilities.js";
import type { Dialect } from "./hook-event.js";
import { deepEqual } from "./json-equal.js";
import { writeJson } from "./json-write.js";
import { maskString, scrubbedAcrossControls, scrubbedWithout, shownReason } from "./mask.js";
import type { DecisionKind } from "./policy-schema.js";
import type { EnvReader } from "./ports.js";
import { err, ok, type Result } from "./result.js";
import { HEADER_VAR_NAME } from "./secret-ref.js";
import { shorten } from "./truncate.js";

const NAME = HEADER_VAR_NAME.source.slice(1, -1);
/** `$NAME` or `${NAME}` in a header's value, greedy, as Claude Code reads it. */
const ENV_VAR = new RegExp(`\\$\\{(${NAME})\\}|\\$(${NAME})`, "g");
/** Claude Code's CRLF-injection guard, applied after interpolation. */
const UNSAFE_HEADER_CHARS = /[\r\n\0]/g;

/**
 * Interpolates `$VAR` / `${VAR}` in header values as Claude Code does (§3.3), for names in both
 * the rule's `allowedEnvVars` and `egress.httpHookAllowedEnvVars`. Stricter than Claude Code on
 * purpose: there an absent settings-level list leaves the hook's own list in force, here an
 * absent `httpHookAllowedEnvVars` interpolates nothing, so a policy file alone can never read
 * an operator's environment into an outbound request. `dropped` lists the recognised names
 * that were refused (not allowed), in order of first use; an allowed but unset name also
 * becomes "" but is not listed, as Claude Code only warns about refusals.
 */
export function interpolateHeaders(
  headers: Readonly<Record<string, string>> | undefined,
  allowedEnvVars: readonly string[] | undefined,
  globalAllowed: readonly string[] | undefined,
  env: EnvReader,
): { headers: Record<string, string>; dropped: string[] } {
  const global = new Set(globalAllowed ?? []);
  const allowed = new Set((allowedEnvVars ?? []).filter((name) => global.has(name)));
  const dropped: string[] = [];
  const entries = Object.entries(headers ?? {}).map(([name, template]): [string, string] => {
    const value = template.replace(
      ENV_VAR,
      (_match, braced: string | undefined, bare: string | undefined) => {
        const variable = braced ?? bare ?? "";
        if (allowed.has(variable)) return env(variable) ?? "";
        if (!dropped.includes(variable)) dropped.push(variable);
        return "";
      },
    );
    return [name, value.replace(UNSAFE_HEADER_CHARS, "")];
  });
  // fromEntries defines own properties, so even a header named `__proto__` survives.
  return { headers: Object.fromEntries(entries), dropped };
}

/** The variable names a header template reads (`$VAR`, `${VAR}`), in order, each once. */
export function headerVariables(template: string): string[] {
  const names: string[] = [];
  for (const m of template.matchAll(ENV_VAR)) {
    const name = m[1] ?? m[2] ?? "";
    if (!names.includes(name)) names.push(name);
  }
  return names;
}

/**
 * What an HTTP field value may hold (RFC 9110 §5.5: VCHAR, obs-text, space and tab), as one
 * code unit each: a JS string's characters past U+00FF and the controls are refused here, by
 * name, rather than by the HTTP client as a failed connection.
 */
const HEADER_VALUE = /^[\t\x20-\x7e\x80-\xff]*$/;

/** An HTTP field name (RFC 9110 §5.1: a token). */
const HEADER_NAME = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

/** The header names that are no HTTP field name (`X Trace`, `X-Trace:`), in order. */
export function invalidHeaderNames(headers: Readonly<Record<string, string>>): string[] {
  return Object.keys(headers).filter((name) => !HEADER_NAME.test(name));
}

/**
 * Header names the HTTP client sets from the request itself, or refuses: undici throws on
 * Transfer-Encoding, Keep-Alive, Upgrade and Expect, and on a Content-Length or Connection that
 * does not fit the request, so one of them in a forward's headers failed every call as a
 * connection error; a Host would ask a shared server for another site than the URL the egress
 * allowlist admitted.
 */
const CLIENT_HEADERS: ReadonlySet<string> = new Set([
  "host",
  "content-length",
  "transfer-encoding",
  "connection",
  "keep-alive",
  "upgrade",
  "expect",
]);

/** The header names the HTTP client sets itself or refuses (CLIENT_HEADERS), as written, in order. */
export function clientHeaderNames(headers: Readonly<Record<string, string>>): string[] {
  return Object.keys(headers).filter((name) => CLIENT_HEADERS.has(name.toLowerCase()));
}

/**
 * The headers a forward is sent with: `content-type: application/json` and `user-agent:
 * hookgate`, then the rule's own, which replace them whatever case they are written in, as the
 * rule's headers replace Claude Code's own `Content-Type` and axios's `User-Agent` (clients.md
 * §2.1). Merged as object keys, a rule's `Content-Type` was sent beside hookgate's as a second
 * value (on Workers one header `application/cloudevents+json, application/json`), and a
 * lower-case `user-agent` was dropped for hookgate's.
 */
export function forwardHeaders(headers: Readonly<Record<string, string>>): Record<string, string> {
  const own = new Set(Object.keys(headers).map((name) => name.toLowerCase()));
  const defaults = Object.entries({ "content-type": "application/json", "user-agent": "hookgate" }).filter(
    ([name]) => !own.has(name),
  );
  return Object.fromEntries([...defaults, ...Object.entries(headers)]);
}

/** The names of the headers whose value is not a valid HTTP field value, in order. */
export function invalidHeaderValues(headers: Readonly<Record<string, string>>): string[] {
  return Object.entries(headers)
    .filter(([, value]) => !HEADER_VALUE.test(value))
    .map(([name]) => name);
}

/**
 * Whether the answer's body is read at this status, as parseForwardResponse reads it: a 2xx's,
 * and a 4xx's from deepcode, which takes it as a refusal with a reason (§9); any other non-2xx is
 * a failure whatever its body says (§4.2).
 */
export function readsForwardBody(status: number, dialect: Dialect): boolean {
  if (status >= 200 && status <= 299) return true;
  return dialect === "deepcode" && status >= 400 && status <= 499;
}

export type ForwardFailureCode =
  | "FORWARD_HTTP_STATUS"
  | "FORWARD_NOT_JSON"
  | "FORWARD_INVALID_JSON"
  | "FORWARD_OFF_SCHEMA"
  | "FORWARD_WRONG_EVENT";

export interface ForwardFailure {
  readonly code: ForwardFailureCode;
  readonly message: string;
}

type Json = Readonly<Record<string, unknown>>;

/** deny and block outrank defer, which outranks ask, which outranks allow (decision.ts). */
const RANK: Readonly<Record<DecisionKind, number>> = { allow: 1, ask: 2, defer: 3, deny: 4, block: 4 };
const PERMISSION_DECISIONS = ["allow", "deny", "ask", "defer"] as const;
const TOP_LEVEL_DECISIONS = ["approve", "block"] as const;
/** deepagents' `decision` is `Literal["block"]`: an "approve" invalidates its whole answer (§6.4). */
const DEEPAGENTS_TOP_LEVEL_DECISIONS = ["block"] as const;
const BEHAVIORS = ["allow", "deny"] as const;
/** The strings pydantic's lax mode reads as a boolean, lower-cased (readBoolean). */
const PYDANTIC_TRUE: readonly unknown[] = ["1", "on", "t", "true", "y", "yes"];
const PYDANTIC_FALSE: readonly unknown[] = ["0", "off", "f", "false", "n", "no"];
/** How much of an unreadable body or value a failure message quotes (Claude Code quotes 200). */
const EXCERPT_CHARS = 100;
/** How much of it is masked by shape before the cut, so a credential cut in half is still recognised. */
const MASKED_CHARS = 8192;

/** One answer being read: the issues found so far, and the secrets its excerpts must not show. */
interface Reading {
  readonly issues: string[];
  readonly secrets: readonly string[];
  readonly dialect: Dialect;
}

/**
 * Reads a downstream answer as Claude Code reads an http hook (clients.md §4.1/§4.2/§6), then as
 * the client the event came from reads it where that differs (`dialect`; the downstream server
 * answers for it). An answer that client would drop whole is off-schema, as one Claude Code
 * refuses is: deepagents refuses `decision: "approve"` and a `hookSpecificOutput` for an event it
 * has no output for (§6.4). Fields the client does not read are not read: deepcode checks no
 * `hookEventName` and reads `permissionDecision` on a PermissionRequest, never the `decision`
 * object (§6.3); deepagents ignores a `hookSpecificOutput` for another of its events.
 * `secrets` (`Policy.secrets`) are scrubbed from what a failure message quotes of the answer, and
 * from the texts it hands the agent: a server that quotes the credential it was called with
 * (`caller Bearer … may not run this`) must not pass it on. `toolInput` is the call as it came:
 * an `updatedInput` equal to it rewrites nothing.
 */
export function parseForwardResponse(
  ruleId: string,
  status: number,
  body: string,
  eventName: string,
  dialect: Dialect,
  secrets: readonly string[] = [],
  toolInput?: unknown,
): Result<RuleEffect, ForwardFailure> {
  // §4.2: 3xx is not followed, and on any non-2xx the body is ignored, whatever it says. deepcode
  // blocks on a 4xx instead, and reads the body (§9): a team's server refusing so is an answer.
  // It blocks on a 5xx too, but that is the server failing, which the policy's onError decides
  // (POLICY.md: onError is the decision when the call fails), so a team can choose there.
  if (!(status >= 200 && status <= 299)) {
    if (readsForwardBody(status, dialect))
      return parseForwardResponse(ruleId, 200, deepcodeRefusal(status, body), eventName, dialect, secrets);
    return failure("FORWARD_HTTP_STATUS", `HTTP ${status} from the downstream hook`);
  }
  // Each text as the agent is handed it. Claude Code prints a reason, a stopReason and a
  // systemMessage in the user's terminal, and no client reads an escape sequence in them as wanted
  // (Claude Code 2.1.332 has a field of its own for one, `terminalSequence`, never passed on). A
  // server may quote what the agent sent, so each loses what a model's reason loses (judge.ts): an
  // escape sequence whole (a colour; OSC 52 writes the clipboard), the bidirectional controls and
  // marks; each line end (a carriage return, a line separator) becomes a newline; tabs, newlines and
  // the joiners stay. Scrubbed of the policy's secrets before and after they go (scrubbedWithout).
  const scrub = (text: string) => scrubbedWithout(text, secrets);
  const text = body.trim();
  if (text === "") return ok({ ruleId });

  const parsed = parseObject(text, secrets);
  if (!parsed.ok) {
    // A PreCompact body that is not a JSON object fails the hook in Claude Code (§4.1), though
    // clients.md's TV-23 says it becomes the compaction instructions: a server written to it
    // means them, and hookgate passes them on in the JSON form Claude Code appends (render.ts).
    // A JSON object is read as hook output below (so `{}` means no opinion) rather than appended
    // literally as Claude Code would.
    if (eventName === "PreCompact") return ok({ ruleId, context: scrub(text) });
    // From every client, though deepcode ignores such a body and deepagents reads plain text on
    // SessionStart and UserPromptSubmit as context: a body that is no JSON object is more often a
    // proxy's error page than an answer, and onError is the policy's word on a broken server.
    return parsed;
  }
  const output = parsed.value;
  // §4.2: `{"async": true}` matches the async variant of the schema; http hooks have no async
  // semantics, so Claude Code reports success and reads nothing else. deepcode reads the answer's
  // fields whatever else it holds (§6.3), and deepagents allows any extra top-level key (§6.4):
  // there the rest is read.
  if (dialect !== "deepcode" && dialect !== "deepagents" && field(output, "async") === true)
    return ok({ ruleId });

  const reading: Reading = { issues: [], secrets, dialect };
  const check = <T>(value: unknown, path: string, expected: string, is: (v: unknown) => v is T) =>
    expect(value, path, expected, is, reading);
  const stop = readBoolean(field(output, "continue"), "continue", reading);
  const stopReason = check(field(output, "stopReason"), "stopReason", "a string", isString);
  const decisions = dialect === "deepagents" ? DEEPAGENTS_TOP_LEVEL_DECISIONS : TOP_LEVEL_DECISIONS;
  const topDecision: (typeof TOP_LEVEL_DECISIONS)[number] | undefined = check(
    field(output, "decision"),
    "decision",
    dialect === "deepagents" ? `the only value deepagents accepts, ${quote("block")}` : oneOf(decisions),
    isIn<(typeof TOP_LEVEL_DECISIONS)[number]>(decisions),
  );
  const topReason = check(field(output, "reason"), "reason", "a string", isString);
  const systemMessage = check(field(output, "systemMessage"), "systemMessage", "a string", isString);
  // Not read, but typed: Claude Code fails the whole answer when one of them has another type,
  // and so does deepagents' pydantic model for a string field (its booleans take "true" and 1 as
  // well, so suppressOutput is left to it). deepcode reads neither.
  if (dialect === "claude-code")
    check(field(output, "suppressOutput"), "suppressOutput", "a boolean", isBoolean);
  if (dialect === "claude-code" || dialect === "deepagents")
    check(field(output, "terminalSequence"), "terminalSequence", "a string", isString);
  const specific = readSpecific(field(output, "hookSpecificOutput"), eventName, reading);
  if (reading.issues.length > 0) return offSchema(reading.issues);

  let own: Partial<SpecificOutput> = {};
  if (specific && specific.eventName !== eventName) {
    // CC-332 drops a mismatched hookSpecificOutput when the answer also blocks (§4.2).
    if (topDecision !== "block") {
      return failure(
        "FORWARD_WRONG_EVENT",
        `the downstream hook answered for ${excerpt(specific.eventName, secrets)}, not ${quote(eventName)}`,
      );
    }
  } else if (specific) {
    own = specific;
  }

  // An answer that states two decisions keeps the stronger: Claude Code keeps the blocking
  // error of `decision: "block"` whatever permissionDecision says (§6.2). "approve" is the
  // deprecated spelling of allow, accepted from downstream but never sent (§10 rule 7), and only
  // on PreToolUse, the one event where it ever meant allow: on PermissionRequest only the
  // decision object grants (§6.2), so an "approve" there must not approve the dialog.
  const stated: (DecisionKind | undefined)[] = [
    own.decision,
    topDecision === "block"
      ? "block"
      : topDecision === "approve" && eventName === "PreToolUse"
        ? "allow"
        : undefined,
  ];
  let decision: DecisionKind | undefined;
  // A stated decision the event cannot carry (an `ask` on PermissionRequest) is withheld, as a
  // `decide` rule's is: never sent, it still outranks an allow from another rule.
  let withheld: DecisionKind | undefined;
  for (const kind of stated) {
    if (kind === undefined) continue;
    const honoured = honouredDecision(eventName, kind);
    if (honoured && (!decision || RANK[honoured] > RANK[decision])) decision = honoured;
    if (!honoured && (!withheld || RANK[kind] > RANK[withheld])) withheld = kind;
  }

  // An allow that asks for a rewrite hookgate cannot read would run the call as it was: deny
  // instead, and say so (deepcode re-validates a rewrite, so it would not run it as it was either).
  const unappliable = decision === "allow" && own.unreadableInput === true;
  if (unappliable) decision = "deny";
  // The reason of the decision that won: a `decision: "block"` that outranks the answer's own ask
  // or allow is given with its `reason`, as Claude Code gives its blocking error, never with the
  // reason the ask or allow gave ("please confirm" on a deny).
  // An empty reason says nothing: Claude Code tells the agent `permissionDecisionReason || reason
  // || "Blocked by hook"` (§6.2), so `"permissionDecisionReason": ""` gives way to the `reason`;
  // so does one of nothing but the characters the agent is not handed, or but spaces and line
  // ends (`shownReason`): a blank reason in place of the other's. Shown there once, as the other
  // texts are below; the rest of `reason` is hookgate's own words.
  const ownWon = own.decision !== undefined && honouredDecision(eventName, own.decision) === decision;
  const visible = (text: string | undefined) => (text === undefined ? undefined : shownReason(text, secrets));
  const said = ownWon ? (visible(own.reason) ?? visible(topReason)) : visible(topReason);
  // Claude Code shows an ask's updatedInput in its dialog (its hooks docs), but hookgate sends a
  // rewrite only with an allow (POLICY.md): the dialog is for the call as it came, and approving
  // it runs that call. The reason the server gave may speak of the rewrite, so the user is told.
  const unsentRewrite =
    (decision === "ask" || decision === "defer") &&
    own.updatedInput !== undefined &&
    !deepEqual(own.updatedInput, toolInput)
      ? `hookgate did not apply the downstream hook's updatedInput: it sends a rewrite only with an allow, so this ${decision === "ask" ? "asks about" : "defers"} the call as it came`
      : undefined;
  const told = unappliable
    ? `the downstream hook (rule ${quote(ruleId)}) allowed the call with an updatedInput that is not an object: a rewrite that cannot be applied`
    : decision
      ? (said ?? (decision === "deny" || decision === "block" ? defaultReason(ruleId, decision) : undefined))
      : undefined;
  const reason =
    unsentRewrite === undefined ? told : told === undefined ? unsentRewrite : `${told} (${unsentRewrite})`;
  // A PreCompact object that does not block is compaction instructions to Claude Code (§4.4);
  // `{"reason":"…"}` is how hookgate itself words them (render.ts), so a gateway behind this one
  // has its instructions passed on.
  const context =
    own.context ?? (eventName === "PreCompact" && decision === undefined ? topReason : undefined);
  const stopsTurn = stop === false || own.interrupt === true;
  return ok({
    ruleId,
    ...(decision !== undefined && { decision }),
    ...(reason !== undefined && { reason }),
    ...(context !== undefined && { context: scrub(context) }),
    ...(systemMessage !== undefined && { systemMessage: scrub(systemMessage) }),
    ...(decision === "allow" && own.updatedInput !== undefined && { updatedInput: own.updatedInput }),
    ...(withheld !== undefined && (!decision || RANK[withheld] > RANK[decision]) && { withheld }),
    ...(stopsTurn && { stop: true }),
    ...(stop === false && stopReason !== undefined && { stopReason: scrub(stopReason) }),
  });
}

/**
 * `hookSpecificOutput` fields a client reads (clients.md §6.1, §6.3, §6.4) that hookgate never
 * passes on: an output rewrite (`updatedMCPToolOutput`, …), a session title, a retry, watched
 * paths, an elicitation's answer. The rule's other fields apply without them.
 */
const NOT_PASSED_ON: readonly string[] = [
  "updatedMCPToolOutput",
  "updatedToolOutput",
  "updatedOutput",
  "suppressOriginalPrompt",
  "sessionTitle",
  "initialUserMessage",
  "watchPaths",
  "reloadSkills",
  "retry",
  "action",
  "content",
  "displayContent",
  "classifierContext",
];

/**
 * The fields of a downstream answer (read as `parseForwardResponse` read it) that hookgate does
 * not pass on, as `hookSpecificOutput.<name>`, for the audit line: dropped unsaid, a team
 * server's redaction of a tool's output looked applied. An `additionalContext` is among them
 * where the event carries none to the client (carriesContext): a Stop's, which Claude Code
 * 2.1.332 reads as a reason to go on, was dropped with the call audited as OK. So is an
 * `updatedInput` that `effect`, the answer as read, does not carry (one beside an ask), unless it
 * is `toolInput`, the call as it came: that rewrites nothing.
 */
export function fieldsNotPassedOn(
  body: string,
  eventName: string,
  dialect: Dialect,
  effect?: RuleEffect,
  toolInput?: unknown,
): string[] {
  const text = body.trim();
  if (!text.startsWith("{")) return [];
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return [];
  }
  const specific = isObject(value) ? field(value, "hookSpecificOutput") : undefined;
  if (!isObject(specific)) return [];
  const notPassedOn = carriesContext(eventName, dialect)
    ? NOT_PASSED_ON
    : [...NOT_PASSED_ON, "additionalContext"];
  const names = notPassedOn
    .filter((name) => field(specific, name) !== undefined)
    .map((name) => `hookSpecificOutput.${name}`);
  // A rewrite beside anything but an allow, or on an event whose answer has none: the call runs,
  // if it does, as it came.
  if (
    effect !== undefined &&
    effect.updatedInput === undefined &&
    field(specific, "updatedInput") !== undefined &&
    !deepEqual(field(specific, "updatedInput"), toolInput)
  )
    names.push("hookSpecificOutput.updatedInput");
  // A PermissionRequest allow's rules to persist (TV-19): the allow is passed on, the rules never
  // are, so nothing is added to the user's settings; unnamed, the audit line read as if they were.
  const decision = field(specific, "decision");
  if (isObject(decision) && field(decision, "updatedPermissions") !== undefined)
    names.push("hookSpecificOutput.decision.updatedPermissions");
  return names;
}

/**
 * What the audit line says of a downstream answer that asks to end the agent's turn
 * (`continue: false`, a PermissionRequest deny's `interrupt`): undefined when it does not. The
 * answer's decision may be `none` beside it, which alone read as an answer with nothing in it.
 * Its stopReason is quoted as a failure's excerpt is: scrubbed, masked and cut.
 */
export function turnEndNote(effect: RuleEffect, secrets: readonly string[]): string | undefined {
  if (!effect.stop) return undefined;
  const said = effect.stopReason === undefined ? "" : `, stopReason ${excerpt(effect.stopReason, secrets)}`;
  return `asked to end the agent's turn${said}`;
}

/** The fields hookgate reads from a `hookSpecificOutput` whose shape is valid. */
interface SpecificOutput {
  readonly eventName: string;
  readonly decision?: DecisionKind | undefined;
  readonly reason?: string | undefined;
  readonly context?: string | undefined;
  readonly updatedInput?: Json | undefined;
  /** PermissionRequest `decision.interrupt`: a deny that also stops Claude (§6.2). */
  readonly interrupt?: boolean | undefined;
  /** deepcode only: an `updatedInput` that is no object, a rewrite that cannot be applied. */
  readonly unreadableInput?: boolean | undefined;
}

/**
 * Validates `hookSpecificOutput` as Claude Code's zod schema does: unknown keys are ignored,
 * the fields read must have their type. Fields of the variant of another event are only
 * checked when it names this event; a mismatched one is judged by the caller, except where the
 * client judges it otherwise (deepcode reads it as this event's, deepagents ignores it). From
 * deepcode, which validates nothing, a field of another type is skipped instead.
 */
function readSpecific(value: unknown, eventName: string, reading: Reading): SpecificOutput | undefined {
  const { issues, secrets } = reading;
  if (value === undefined) return undefined;
  if (!isObject(value)) {
    if (reading.dialect !== "deepcode")
      issues.push(`hookSpecificOutput: expected an object, got ${describe(value, secrets)}`);
    return undefined;
  }
  // deepcode checks no name (§6.3): its hookSpecificOutput is read as this event's, named or not.
  const named = reading.dialect === "deepcode" ? eventName : field(value, "hookEventName");
  if (typeof named !== "string") {
    issues.push(
      named === undefined
        ? "hookSpecificOutput.hookEventName: required field is missing"
        : `hookSpecificOutput.hookEventName: expected a string, got ${describe(named, secrets)}`,
    );
    return undefined;
  }
  const name: string = named;
  if (reading.dialect === "deepagents") {
    // deepagents' union of outputs has no variant for other events: the whole answer is invalid.
    if (!DEEPAGENTS_OUTPUT_EVENTS.has(name)) {
      issues.push(`hookSpecificOutput.hookEventName: deepagents has no output for ${excerpt(name, secrets)}`);
      return undefined;
    }
    // One for another of its events is ignored, the rest of the answer applied.
    if (name !== eventName) return undefined;
  }
  if (name !== eventName) return { eventName: name };

  const at = (key: string) => `hookSpecificOutput.${key}`;
  const check = <T>(key: string, expected: string, is: (v: unknown) => v is T) =>
    expect(field(value, key), at(key), expected, is, reading);
  const context = check("additionalContext", "a string", isString);
  // permissionDecision, its reason and updatedInput belong to the PreToolUse variant; on other
  // events Claude Code strips them as unknown keys. deepcode answers PermissionRequest with
  // them too (§6.3), so there they are what it reads; from the other clients, whose
  // PermissionRequest answer is the `decision` object, a deny or ask in them is kept when the
  // object is absent.
  if (!PERMISSION_EVENTS.has(eventName)) {
    // deepcode counts a `permissionDecision: "deny"` as a block on any event, with
    // `permissionReason ?? permissionDecisionReason` as its reason (its src/hooks.ts
    // mergeResults), and acts on that block on these events: the prompt is dropped, the task
    // undone or left open.
    if (
      reading.dialect !== "deepcode" ||
      !DEEPCODE_PERMISSION_BLOCKS.has(eventName) ||
      field(value, "permissionDecision") !== "deny"
    )
      return { eventName: name, context };
    const said = [field(value, "permissionReason"), field(value, "permissionDecisionReason")].find(isString);
    return { eventName: name, context, decision: "deny", reason: said };
  }
  const permission = check("permissionDecision", oneOf(PERMISSION_DECISIONS), isIn(PERMISSION_DECISIONS));
  // deepcode reads `permissionReason ?? permissionDecisionReason` (§6.3).
  const deepcodeReason =
    reading.dialect === "deepcode" ? check("permissionReason", "a string", isString) : undefined;
  const permissionReason = deepcodeReason ?? check("permissionDecisionReason", "a string", isString);
  const updatedInput = check("updatedInput", "an object", isObject);
  // deepcode skips nothing here: it re-validates a rewrite against the tool's schema (§6.3).
  const unreadableInput = field(value, "updatedInput") !== undefined && updatedInput === undefined;
  const base = {
    eventName: name,
    context,
    decision: permission,
    reason: permissionReason,
    updatedInput,
    unreadableInput,
  };
  if (eventName !== "PermissionRequest") return base;

  const answer = field(value, "decision");
  if (reading.dialect === "deepcode") {
    // deepcode reads permissionDecision here, never the `decision` object (§6.3, its
    // src/permissions.ts): the object grants nothing, but a deny it states is kept, fail-safe.
    if (!isObject(answer) || field(answer, "behavior") !== "deny") return base;
    const message = field(answer, "message");
    return {
      ...base,
      decision: "deny",
      reason: permissionReason ?? (isString(message) ? message : undefined),
    };
  }
  if (answer === undefined) {
    // Required in Claude Code's and deepagents' PermissionRequest variant (§6.1, §6.4): without it
    // the answer is a hook error there, never a grant; a deny or ask it states in
    // permissionDecision is kept, fail-safe (the client would show its dialog).
    if (permission !== "allow") return base;
    issues.push(`${at("decision")}: required field is missing`);
    return undefined;
  }
  if (!isObject(answer)) {
    issues.push(`${at("decision")}: expected an object, got ${describe(answer, secrets)}`);
    return undefined;
  }
  const behavior = expect(
    field(answer, "behavior"),
    at("decision.behavior"),
    oneOf(BEHAVIORS),
    isIn(BEHAVIORS),
    reading,
  );
  if (behavior === undefined) {
    if (field(answer, "behavior") === undefined)
      issues.push(`${at("decision.behavior")}: required field is missing`);
    return undefined;
  }
  if (behavior === "allow") {
    const allowedInput = expect(
      field(answer, "updatedInput"),
      at("decision.updatedInput"),
      "an object",
      isObject,
      reading,
    );
    // Never passed on (a team server adds no permission rules), but typed as Claude Code and
    // deepagents type it (deepcode, which reads no `decision` object, returned above).
    expect(
      field(answer, "updatedPermissions"),
      at("decision.updatedPermissions"),
      "an array of objects",
      isObjectArray,
      reading,
    );
    return {
      eventName: name,
      context,
      decision: "allow",
      reason: permissionReason,
      updatedInput: allowedInput,
    };
  }
  const message = expect(field(answer, "message"), at("decision.message"), "a string", isString, reading);
  const interrupt = readBoolean(field(answer, "interrupt"), at("decision.interrupt"), reading);
  // The object's `message` is what Claude Code and deepagents tell the agent; they strip
  // permissionDecisionReason from this variant, so it only stands in when there is no message
  // (or an empty one, which says nothing).
  return {
    eventName: name,
    context,
    decision: "deny",
    reason: message || (permissionReason ?? message),
    interrupt,
  };
}

/** §4.1: only a body starting with `{` is JSON to Claude Code; arrays, null and strings are not. */
function parseObject(text: string, secrets: readonly string[]): Result<Json, ForwardFailure> {
  if (!text.startsWith("{")) {
    return failure(
      "FORWARD_NOT_JSON",
      `the downstream hook must return JSON, but got ${excerpt(text, secrets)}`,
    );
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    // Not the engine's message: V8 quotes the text around the error, unmasked.
    return failure(
      "FORWARD_INVALID_JSON",
      `the downstream hook returned invalid JSON: ${excerpt(text, secrets)}`,
    );
  }
  // A text starting with `{` that parses is always an object; kept for the type.
  if (!isObject(value)) return failure("FORWARD_NOT_JSON", "the downstream hook must return a JSON object");
  return ok(value);
}

function expect<T>(
  value: unknown,
  path: string,
  expected: string,
  is: (v: unknown) => v is T,
  reading: Reading,
): T | undefined {
  if (value === undefined) return undefined;
  if (is(value)) return value;
  // deepcode validates nothing (§6.3): a field of another type or value is skipped, the rest read.
  if (reading.dialect !== "deepcode")
    reading.issues.push(`${path}: expected ${expected}, got ${describe(value, reading.secrets)}`);
  return undefined;
}

/**
 * A boolean field, read as the client reads it: deepagents' pydantic models take, besides true
 * and false, 0 and 1 and the strings "0", "off", "f", "false", "n", "no", "1", "on", "t",
 * "true", "y", "yes" in any case (lax mode), so `"interrupt": "true"` beside a deny is an
 * interrupting deny there, not an answer it drops.
 */
function readBoolean(value: unknown, path: string, reading: Reading): boolean | undefined {
  if (reading.dialect === "deepagents" && !isBoolean(value)) {
    const text = typeof value === "string" ? value.toLowerCase() : value;
    if (text === 1 || PYDANTIC_TRUE.includes(text as string)) return true;
    if (text === 0 || PYDANTIC_FALSE.includes(text as string)) return false;
  }
  return expect(value, path, "a boolean", isBoolean, reading);
}

/**
 * A 4xx answer as deepcode reads it (clients.md §9): its JSON body applied, and a block whose
 * reason is the body's `reason`, or `HTTP <status>`. A body nested deeper than JSON.stringify
 * writes out (json-write.ts) is left out but for that reason: the block still stands.
 */
function deepcodeRefusal(status: number, body: string): string {
  let output: Json = {};
  try {
    const value: unknown = JSON.parse(body.trim());
    if (isObject(value)) output = value;
  } catch {
    // Not JSON: deepcode blocks all the same.
  }
  const reason = field(output, "reason");
  const block = { decision: "block", reason: isString(reason) ? reason : `HTTP ${status}` };
  return writeJson({ ...output, ...block }) ?? JSON.stringify(block);
}

function offSchema(issues: readonly string[]): { ok: false; error: ForwardFailure } {
  return failure("FORWARD_OFF_SCHEMA", `the downstream hook's answer is off-schema: ${issues.join("; ")}`);
}

function failure(code: ForwardFailureCode, message: string): { ok: false; error: ForwardFailure } {
  return err({ code, message });
}

function defaultReason(ruleId: string, decision: DecisionKind): string {
  return `the downstream hook (rule ${quote(ruleId)}) decided ${decision}`;
}

/** Own properties only, so no name the answer leaves out is ever read from Object.prototype. */
function field(object: Json, key: string): unknown {
  return Object.hasOwn(object, key) ? object[key] : undefined;
}

const isString = (v: unknown): v is string => typeof v === "string";
const isBoolean = (v: unknown): v is boolean => typeof v === "boolean";
const isObject = (v: unknown): v is Json => typeof v === "object" && v !== null && !Array.isArray(v);
const isObjectArray = (v: unknown): v is Json[] => Array.isArray(v) && v.every(isObject);
const isIn =
  <T extends string>(values: readonly T[]) =>
  (v: unknown): v is T =>
    typeof v === "string" && (values as readonly string[]).includes(v);
const oneOf = (values: readonly string[]): string => `one of ${values.map(quote).join(" | ")}`;
const quote = (text: string): string => JSON.stringify(text);

function describe(value: unknown, secrets: readonly string[]): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  if (typeof value === "object") return "an object";
  return typeof value === "string" ? excerpt(value, secrets) : String(value);
}

/**
 * A quoted start of a downstream text, masked first: these messages reach the answer and the
 * audit line, and a downstream hook may echo the credential it was sent. The policy's secrets
 * are scrubbed from the whole text before any cut, so a cut never leaves the start of one, and
 * read across its control characters: a tab inside one is quoted as `\t`, between its halves.
 * Quoted as JSON with what JSON leaves raw escaped too (escape-controls.ts): the message is the
 * onError reason the agent's terminal shows, and the answer may echo what the agent sent.
 */
function excerpt(text: string, secrets: readonly string[]): string {
  const scrubbed = scrubbedAcrossControls(text, secrets);
  const masked = maskString(scrubbed.length > MASKED_CHARS ? scrubbed.slice(0, MASKED_CHARS) : scrubbed);
  return escapeControls(quote(shorten(masked, EXCERPT_CHARS)));
}

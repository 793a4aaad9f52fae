/**
 * A decision as the bytes a client understands (reference/clients.md §6 and §10). Always a 2xx:
 * a status code never carries a decision, because Claude Code ignores the body of a non-2xx and
 * lets the action through while deepcode blocks on it.
 */
import type { Decision } from "./decision.js";
import {
  carriesContext,
  DEEPCODE_BLOCK_AS_CONTEXT,
  honouredDecision,
  STOP_EVENTS,
} from "./event-capabilities.js";
import type { Dialect } from "./hook-event.js";
import { writeJson } from "./json-write.js";
import type { DecisionKind, FailMode } from "./policy-schema.js";
import { capString, largestFitting, longestString, utf8Length, withinUtf8Bytes } from "./truncate.js";

export interface Answer {
  readonly status: 200;
  /** Undefined for an empty body. */
  readonly contentType: "application/json" | undefined;
  readonly body: string;
  /** Its texts were cut to fit (ANSWER_BYTES, DEEPAGENTS_OUTPUT_BYTES); the audit line says so. */
  readonly truncated?: true | undefined;
}

const EMPTY: Answer = { status: 200, contentType: undefined, body: "" };

const json = (value: Record<string, unknown>): Answer => ({
  status: 200,
  contentType: "application/json",
  body: JSON.stringify(value),
});

/**
 * deepagents keeps the first 100,000 bytes of a command hook's stdout: JSON cut there does not
 * parse, and the decision goes with it (its hooks runner's MAX_HOOK_OUTPUT_BYTES). A longer answer
 * (a long context, a forwarded hook's reason) has its texts cut to fit, the decision kept.
 */
export const DEEPAGENTS_OUTPUT_BYTES = 100_000;

/**
 * The most any answer takes, counted as a Lambda function returns it: its body as a JSON string
 * (its quotes and backslashes escaped once more) in the invocation's result. An Application Load
 * Balancer answers 502 for a Lambda result over 1 MB (API Gateway's limit is 6 MB), and Claude
 * Code lets the call run on a 502. One limit on every runtime, so that an answer does not change
 * with where hookgate runs: a forwarded hook's texts (its answer read within 1 MiB) and several
 * rules' contexts joined reach past it, and have their texts cut to fit as deepagents' answers do.
 * Claude Code keeps a text over 10,000 characters in a file and shows a preview anyway.
 */
export const ANSWER_BYTES = 900_000;

/** The body within what every runtime can carry and `dialect` reads. */
function fits(body: string, dialect: Dialect): boolean {
  // A UTF-16 unit of the body is at most 6 bytes of JSON string (a control character as \u001f).
  if (body.length * 6 + 2 > ANSWER_BYTES && utf8Length(JSON.stringify(body)) > ANSWER_BYTES) return false;
  if (dialect !== "deepagents") return true;
  return withinUtf8Bytes(body, DEEPAGENTS_OUTPUT_BYTES);
}

/** The most a `dialect`'s answer may take, as `fits` counts it, for a deny that says so. */
function limitFor(dialect: Dialect): string {
  return dialect === "deepagents"
    ? `the ${DEEPAGENTS_OUTPUT_BYTES} deepagents reads`
    : `the ${ANSWER_BYTES} bytes an answer may take (an AWS load balancer refuses a Lambda's answer over 1 MB)`;
}

/**
 * The decision the client can be given. An allow whose rewritten input cannot be given (the input
 * alone over what an answer may take, ANSWER_BYTES, or what deepagents reads: cut, its JSON would
 * not parse; one nested too deep to write out at all) or deepcode does not apply (on
 * PermissionRequest) would run the tool as the agent wrote it, not as rewritten. It becomes a
 * deny that says so, which the caller audits. On
 * deepagents too, though the version we read drops a rewrite that fits with its allow, leaving
 * the call to its own permission flow: no decision would do the same there, but would run
 * unrewritten, on a deepagents that applies `updatedInput`, a call allowed only rewritten.
 */
export function deliverable(decision: Decision, event: string, dialect: Dialect): Decision {
  if (decision.updatedInput === undefined) return decision;
  // An allow there runs the call as the agent wrote it, never as rewritten.
  if (rewriteUnapplied(decision, event, dialect)) {
    return {
      ...decision,
      kind: "deny",
      updatedInput: undefined,
      reason:
        "hookgate: deepcode does not apply a PermissionRequest's rewritten input (it reads only permissionDecision); denied rather than run unrewritten. Rewrite the call on PreToolUse instead",
    };
  }
  if (unwritable(decision)) {
    return {
      ...decision,
      kind: "deny",
      updatedInput: undefined,
      reason:
        "hookgate: the rewritten input nests deeper than JSON can be written out; denied rather than run unrewritten",
    };
  }
  // As short as renderDecision can make it: each text cut to nothing but its marker.
  const body = renderWhole(textsCutTo(decision, 0), event, dialect).body;
  if (fits(body, dialect)) return decision;
  const bytes = dialect === "deepagents" ? utf8Length(body) : utf8Length(JSON.stringify(body));
  return {
    ...decision,
    kind: "deny",
    updatedInput: undefined,
    reason: `hookgate: the rewritten input (${bytes} bytes of answer) is over ${limitFor(dialect)}; denied rather than run unrewritten`,
  };
}

/**
 * `deliverable`'s decision and its answer. An answer that fits whole, its rewritten input with it,
 * is rendered once: the input alone then fits too, and `deliverable` would keep the decision.
 */
export function renderDeliverable(
  decision: Decision,
  event: string,
  dialect: Dialect,
): { readonly decision: Decision; readonly answer: Answer } {
  if (!rewriteUnapplied(decision, event, dialect) && !unwritable(decision)) {
    const whole = renderWhole(decision, event, dialect);
    if (fits(whole.body, dialect)) return { decision, answer: whole };
  }
  const given = deliverable(decision, event, dialect);
  return { decision: given, answer: renderDecision(given, event, dialect) };
}

/**
 * A rewritten input nested deeper than JSON.stringify writes out (json-write.ts): a team server's
 * answer, which JSON.parse read, that no answer can carry.
 */
function unwritable(decision: Decision): boolean {
  return decision.updatedInput !== undefined && writeJson(decision.updatedInput) === undefined;
}

/** deepcode reads only `permissionDecision` from a PermissionRequest answer (clients.md §6.3). */
function rewriteUnapplied(decision: Decision, event: string, dialect: Dialect): boolean {
  return (
    decision.updatedInput !== undefined &&
    dialect === "deepcode" &&
    event === "PermissionRequest" &&
    decision.kind === "allow"
  );
}

export function renderDecision(decision: Decision, event: string, dialect: Dialect): Answer {
  const answer = renderWhole(decision, event, dialect);
  if (fits(answer.body, dialect)) return answer;
  const longest = longestString([
    decision.reason,
    decision.context,
    decision.systemMessage,
    decision.stopReason,
  ]);
  const cutTo = (length: number) => renderWhole(textsCutTo(decision, length), event, dialect);
  const cut = cutTo(largestFitting(longest + 1, (length) => fits(cutTo(length).body, dialect)));
  return { ...cut, truncated: true };
}

/** The decision with each of its texts cut to `length` characters and the marker. */
function textsCutTo(decision: Decision, length: number): Decision {
  return {
    ...decision,
    reason: decision.reason && capString(decision.reason, length),
    context: decision.context && capString(decision.context, length),
    systemMessage: decision.systemMessage && capString(decision.systemMessage, length),
    stopReason: decision.stopReason && capString(decision.stopReason, length),
  };
}

function renderWhole(decision: Decision, event: string, dialect: Dialect): Answer {
  // deepagents legacy hooks read nothing back (stdout goes to /dev/null).
  if (dialect === "deepagents-legacy") return EMPTY;
  // The event's own word for the decision: a deny on a blockable event is a block and a block
  // on PreToolUse a deny, so no decision is dropped for being said the other way. Evaluation
  // already narrows each rule's decision; this keeps the renderer total for any Decision.
  const kind = decision.kind === "none" ? undefined : honouredDecision(event, decision.kind);
  if (event === "PreCompact") return renderPreCompact(decision, kind, dialect);

  const out: Record<string, unknown> = {};
  if (decision.stop) {
    out.continue = false;
    out.stopReason = decision.stopReason ?? decision.reason;
  }
  if (kind === "block") {
    out.decision = "block";
    out.reason = decision.reason;
  }
  if (decision.systemMessage) out.systemMessage = decision.systemMessage;
  const specific = hookSpecificOutput(decision, kind, event, dialect);
  if (specific) out.hookSpecificOutput = specific;
  return Object.keys(out).length > 0 ? json(out) : EMPTY;
}

function hookSpecificOutput(
  decision: Decision,
  kind: DecisionKind | undefined,
  event: string,
  dialect: Dialect,
): Record<string, unknown> | undefined {
  // Never on Stop/SubagentStop to Claude Code and deepcode: Claude Code 2.1.112 rejects the whole
  // answer (TV-16). deepagents takes SubagentStop's context (carriesContext).
  if (STOP_EVENTS.has(event) && dialect !== "deepagents") return undefined;
  const specific: Record<string, unknown> = { hookEventName: event };
  if (event === "PreToolUse" && kind !== undefined) {
    specific.permissionDecision = kind;
    if (decision.reason) specific.permissionDecisionReason = decision.reason;
    if (kind === "allow" && decision.updatedInput) specific.updatedInput = decision.updatedInput;
  }
  if (event === "PermissionRequest" && (kind === "allow" || kind === "deny")) {
    // Both shapes: Claude Code reads `decision.behavior`, deepcode reads `permissionDecision` (TV-20).
    specific.decision =
      kind === "allow"
        ? { behavior: "allow", ...(decision.updatedInput ? { updatedInput: decision.updatedInput } : {}) }
        : { behavior: "deny", ...(decision.reason ? { message: decision.reason } : {}) };
    // deepagents reads only `decision`, and its hooks/models/wire.py once forbade any other key in a
    // hookSpecificOutput (`extra="forbid"`; later versions ignore them): there the whole answer
    // failed validation and was dropped, the deny with it. So deepagents gets `decision` alone.
    if (dialect !== "deepagents") {
      specific.permissionDecision = kind;
      if (decision.reason) specific.permissionDecisionReason = decision.reason;
    }
  }
  const context =
    kind === "block" && dialect === "deepcode" && DEEPCODE_BLOCK_AS_CONTEXT.has(event) && decision.reason
      ? [decision.context, decision.reason].filter(Boolean).join("\n\n")
      : decision.context;
  if (context && carriesContext(event, dialect)) specific.additionalContext = context;
  return Object.keys(specific).length > 1 ? specific : undefined;
}

/**
 * Claude Code reads a PreCompact answer as it reads any http hook's body (clients.md §4.1): a
 * body that is not a JSON object fails the hook ("HTTP hook must return JSON", its text lost),
 * and a JSON object that does not block is appended, raw, to the compaction instructions (§4.4;
 * even `{}` would be). So the body is empty, a block, or the instructions as
 * `{"reason":"…"}`: `reason` is a field of Claude Code's hook output schema that does nothing
 * without a `decision`, so the object passes validation and its text carries the instructions.
 * (clients.md's TV-23, a plain-text body, is wrong: Claude Code 2.1.112 and 2.1.332 both fail it.)
 */
function renderPreCompact(decision: Decision, kind: DecisionKind | undefined, dialect: Dialect): Answer {
  if (kind === "block") return json({ decision: "block", reason: decision.reason });
  // Blank instructions would be appended as `{"reason":" "}`: nothing to say, so nothing is sent.
  if (decision.context?.trim() && carriesContext("PreCompact", dialect)) {
    return json({ reason: decision.context });
  }
  return EMPTY;
}

/**
 * The answer to a request hookgate could not judge (bad token, malformed body, internal error),
 * under a request-level fail mode (POLICY.md "Fail modes"): `deny` denies PreToolUse and
 * PermissionRequest only, every other event gets no decision and a systemMessage saying what is
 * wrong, and an event that cannot be identified gets the top-level block every client accepts.
 * `allow` is no opinion, never an explicit allow; the systemMessage still tells the user,
 * except for an event that cannot be identified, which gets an empty body (it may be a PreCompact).
 * `ask` asks on PreToolUse; elsewhere it answers as `allow` does.
 */
export function renderRequestFailure(
  mode: FailMode,
  event: string | undefined,
  dialect: Dialect,
  message: string,
): { readonly answer: Answer; readonly kind: DecisionKind | "none" } {
  // deepagents' legacy hooks read nothing back: nothing is blocked there.
  if (dialect === "deepagents-legacy") return { answer: EMPTY, kind: "none" };
  if (event === undefined) {
    // Only a deny blocks what cannot be identified (POLICY.md, "Fail modes"): `ask` has no
    // permission decision to ask with here, and a block would end a turn or drop a prompt.
    const kind: DecisionKind | "none" = mode === "deny" ? "block" : "none";
    if (kind === "none") return { answer: EMPTY, kind };
    return { answer: json({ decision: "block", reason: message }), kind };
  }
  const guarded = event === "PreToolUse" || (event === "PermissionRequest" && mode === "deny");
  const kind: DecisionKind | "none" = mode === "allow" || !guarded ? "none" : mode;
  const decision: Decision = {
    kind,
    reason: kind === "none" ? undefined : message,
    systemMessage: message,
    decidedBy: [],
  };
  return { answer: renderDecision(decision, event, dialect), kind };
}

/**
 * What each client accepts back, written from reference/clients.md (§4.1, §4.4, §6.1–§6.5, §8)
 * independently of src/core's own tables, so a renderer bug cannot hide behind the table it
 * reads. `answerProblems` lists why an answer would be rejected, ignored or misread by the
 * client of that dialect; an empty list means the client takes it as intended.
 *
 * Where a client is lenient (Claude Code strips unknown keys, deepcode validates nothing), these
 * checks are stricter: a key the client silently drops is a decision the policy meant and lost.
 */
import type { Dialect } from "../../src/core/hook-event.js";

type Json = Record<string, unknown>;
type FieldCheck = (value: unknown) => boolean;

const isString: FieldCheck = (v) => typeof v === "string";
const isBoolean: FieldCheck = (v) => typeof v === "boolean";
const isObject = (v: unknown): v is Json => typeof v === "object" && v !== null && !Array.isArray(v);
const oneOf =
  (...values: string[]): FieldCheck =>
  (v) =>
    typeof v === "string" && values.includes(v);

/** The top-level output fields of Claude Code (§6.1), as both 2.1.112 and 2.1.332 type them. */
const TOP_LEVEL: Readonly<Record<string, FieldCheck>> = {
  continue: isBoolean,
  suppressOutput: isBoolean,
  stopReason: isString,
  // "approve" is deprecated in Claude Code and invalidates the whole output in deepagents v2 (§6.4).
  decision: oneOf("block"),
  reason: isString,
  systemMessage: isString,
  hookSpecificOutput: isObject,
};

const permissionDecision = oneOf("allow", "deny", "ask", "defer");

/**
 * `hookSpecificOutput` variants that Claude Code 2.1.112 accepts (§6.1, column CC-112): the
 * oldest supported version, whose discriminated union rejects every other `hookEventName`,
 * Stop and SubagentStop included.
 */
const CLAUDE_CODE_VARIANTS: Readonly<Record<string, Readonly<Record<string, FieldCheck>>>> = {
  PreToolUse: {
    permissionDecision,
    permissionDecisionReason: isString,
    updatedInput: isObject,
    additionalContext: isString,
  },
  PermissionRequest: {
    decision: isObject,
    // Not read by Claude Code (stripped), read by deepcode (TV-20).
    permissionDecision: oneOf("allow", "deny"),
    permissionDecisionReason: isString,
  },
  UserPromptSubmit: { additionalContext: isString, sessionTitle: isString },
  PostToolUse: { additionalContext: isString, updatedMCPToolOutput: () => true },
  PostToolUseFailure: { additionalContext: isString },
  Notification: { additionalContext: isString },
  Setup: { additionalContext: isString },
  SubagentStart: { additionalContext: isString },
  SessionStart: { additionalContext: isString, initialUserMessage: isString, watchPaths: Array.isArray },
  PermissionDenied: { retry: isBoolean },
  Elicitation: { action: oneOf("accept", "decline", "cancel"), content: isObject },
  ElicitationResult: { action: oneOf("accept", "decline", "cancel"), content: isObject },
  CwdChanged: { watchPaths: Array.isArray },
  FileChanged: { watchPaths: Array.isArray },
  WorktreeCreate: { worktreePath: isString },
};

/** deepagents v2's union has nine variants; any other `hookEventName` invalidates the whole output (§6.4). */
const DEEPAGENTS_VARIANTS: ReadonlySet<string> = new Set([
  "SessionStart",
  "UserPromptSubmit",
  "PreToolUse",
  "PermissionRequest",
  "PostToolUse",
  "PostToolUseFailure",
  "Stop",
  "SubagentStart",
  "SubagentStop",
]);

/**
 * Events Claude Code runs outside the REPL, where a non-blocking JSON body is used as raw text
 * (§4.4). Only PreCompact turns that text into something (compaction instructions).
 */
const RAW_TEXT_EVENT = "PreCompact";

/** An answer as a client receives it: any status and content type. */
interface WireAnswer {
  readonly status: number;
  readonly contentType: string | undefined;
  readonly body: string;
}

export function answerProblems(answer: WireAnswer, event: string, dialect: Dialect): string[] {
  const problems: string[] = [];
  if (answer.status !== 200) problems.push(`status ${answer.status}: a status code never carries a decision`);
  if (answer.body === "") {
    if (answer.contentType !== undefined) problems.push("an empty body with a content type");
    return problems;
  }
  // deepagents legacy sends stdout to /dev/null (§8): anything but an empty body is wasted work.
  if (dialect === "deepagents-legacy") return [...problems, "a body for deepagents legacy, which reads none"];
  if (answer.contentType === "text/plain; charset=utf-8") {
    return [...problems, ...textProblems(event, dialect)];
  }
  if (answer.contentType !== "application/json") problems.push(`content type ${answer.contentType}`);
  // Claude Code's parser (§4.1): the trimmed body must start with "{" and parse to an object.
  if (!answer.body.trim().startsWith("{")) return [...problems, "a JSON body that does not start with {"];
  let parsed: unknown;
  try {
    parsed = JSON.parse(answer.body);
  } catch {
    return [...problems, "a body that is not valid JSON"];
  }
  if (!isObject(parsed)) return [...problems, "a JSON body that is not an object"];
  return [...problems, ...jsonProblems(parsed, event, dialect)];
}

function textProblems(event: string, dialect: Dialect): string[] {
  // Claude Code rejects a body that is not JSON on every event, PreCompact too (its hook fails:
  // §4.1, the out-of-REPL path throws the parser's error); deepcode ignores it. deepagents v2
  // reads non-JSON stdout as context on two events only (§6.4).
  if (dialect === "deepagents") return ["a plain-text body for deepagents v2"];
  return [`a plain-text body on ${event}, which Claude Code rejects`];
}

function jsonProblems(out: Json, event: string, dialect: Dialect): string[] {
  const problems: string[] = [];
  for (const [key, value] of Object.entries(out)) {
    const check = TOP_LEVEL[key];
    if (check === undefined) problems.push(`unknown top-level key "${key}"`);
    else if (!check(value)) problems.push(`top-level ${key} is ${JSON.stringify(value)}`);
  }
  // Claude Code appends any non-blocking PreCompact body to its compaction instructions (§4.4,
  // TV-22): only one that is the instructions, `{"reason":"…"}`, means to be.
  const instructions =
    Object.keys(out).length === 1 && typeof out.reason === "string" && out.reason.trim() !== "";
  if (event === RAW_TEXT_EVENT && out.decision !== "block" && !instructions) {
    problems.push(
      "a JSON PreCompact body that neither blocks nor is the instructions: Claude Code would append it to them",
    );
  }
  const specific = out.hookSpecificOutput;
  if (isObject(specific)) problems.push(...specificProblems(specific, event, dialect));
  return problems;
}

function specificProblems(specific: Json, event: string, dialect: Dialect): string[] {
  const problems: string[] = [];
  // Claude Code throws on a mismatched echo (§4.2); deepagents v2 ignores the block (§6.4).
  if (specific.hookEventName !== event) {
    problems.push(`hookEventName ${JSON.stringify(specific.hookEventName)} does not echo ${event}`);
  }
  if (dialect === "deepagents" && !DEEPAGENTS_VARIANTS.has(event)) {
    problems.push(`hookSpecificOutput on ${event}, which deepagents v2 has no variant for`);
  }
  // deepcode speaks Claude Code's wire format and is routed to the same URL shapes; the gateway
  // answers it with what Claude Code 2.1.112 also accepts (DESIGN.md), so one table serves both.
  const variant = Object.hasOwn(CLAUDE_CODE_VARIANTS, event)
    ? CLAUDE_CODE_VARIANTS[event]
    : dialect === "deepcode" && Object.hasOwn(DEEPCODE_ONLY_VARIANTS, event)
      ? DEEPCODE_ONLY_VARIANTS[event]
      : undefined;
  if (variant === undefined) {
    if (dialect !== "deepagents")
      problems.push(`hookSpecificOutput on ${event}, which Claude Code 2.1.112 rejects`);
    return problems;
  }
  const fields = Object.entries(specific).filter(([key]) => key !== "hookEventName");
  if (fields.length === 0) problems.push("a hookSpecificOutput that says nothing");
  for (const [key, value] of fields) {
    const check = Object.hasOwn(variant, key) ? variant[key] : undefined;
    if (check === undefined) problems.push(`${event} hookSpecificOutput has no field "${key}"`);
    else if (!check(value)) problems.push(`${event} hookSpecificOutput.${key} is ${JSON.stringify(value)}`);
  }
  if (event === "PermissionRequest") problems.push(...permissionRequestProblems(specific, dialect));
  return problems;
}

/**
 * Events Claude Code 2.1.112 never sends (2.1.332 added them, with variants of their own) whose
 * `additionalContext` deepcode reads back: PostToolBatch's onto the batch's last tool result
 * (deepcode src/loop.ts), UserPromptExpansion's onto the expanded prompt (src/tui/useChat.ts).
 */
const DEEPCODE_ONLY_VARIANTS: Readonly<Record<string, Readonly<Record<string, FieldCheck>>>> = {
  PostToolBatch: { additionalContext: isString },
  UserPromptExpansion: { additionalContext: isString },
};

/**
 * PermissionRequest: Claude Code requires `decision` and reads only it; deepcode ignores it and
 * reads only `permissionDecision` (§6.3). Both must be there and agree (TV-19, TV-20). deepagents
 * reads only `decision`, and some versions reject any other key (hooks/models/wire.py).
 */
function permissionRequestProblems(specific: Json, dialect: Dialect): string[] {
  const decision = specific.decision;
  if (!isObject(decision)) return ["PermissionRequest hookSpecificOutput without its required decision"];
  const problems: string[] = [];
  const allowed: Readonly<Record<string, Readonly<Record<string, FieldCheck>>>> = {
    allow: { behavior: isString, updatedInput: isObject, updatedPermissions: Array.isArray },
    deny: { behavior: isString, message: isString, interrupt: isBoolean },
  };
  const behavior = decision.behavior;
  const shape =
    typeof behavior === "string" && Object.hasOwn(allowed, behavior) ? allowed[behavior] : undefined;
  if (shape === undefined) return [`PermissionRequest decision.behavior is ${JSON.stringify(behavior)}`];
  for (const [key, value] of Object.entries(decision)) {
    const check = Object.hasOwn(shape, key) ? shape[key] : undefined;
    if (check === undefined || !check(value)) problems.push(`PermissionRequest decision.${key} is invalid`);
  }
  if (dialect === "deepagents") {
    // deepagents versions whose wire models forbid unknown keys drop the whole answer over them.
    for (const key of Object.keys(specific)) {
      if (key !== "hookEventName" && key !== "decision")
        problems.push(`PermissionRequest hookSpecificOutput.${key}, which deepagents forbids`);
    }
  } else if (specific.permissionDecision !== behavior) {
    problems.push(
      "PermissionRequest permissionDecision (deepcode) disagrees with decision.behavior (Claude Code)",
    );
  }
  return problems;
}

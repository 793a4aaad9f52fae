/**
 * What each event can carry back to its client, from reference/clients.md §4–§6. The renderer
 * and `hookgate check` both read these tables, so a decision a client cannot honour is never
 * sent and is always warned about.
 */
import type { Dialect } from "./hook-event.js";
import type { DecisionKind } from "./policy-schema.js";

/** The field a rule's `matcher` is checked against, per event (POLICY.md). Others ignore it. */
export const MATCHER_FIELD: Readonly<Record<string, string>> = {
  PreToolUse: "tool_name",
  PostToolUse: "tool_name",
  PostToolUseFailure: "tool_name",
  PermissionRequest: "tool_name",
  PermissionDenied: "tool_name",
  SessionStart: "source",
  ConfigChange: "source",
  Setup: "trigger",
  PreCompact: "trigger",
  PostCompact: "trigger",
  SubagentStart: "agent_type",
  SubagentStop: "agent_type",
  Notification: "notification_type",
  SessionEnd: "reason",
  StopFailure: "error",
  UserPromptExpansion: "command_name",
  InstructionsLoaded: "load_reason",
  FileChanged: "file_basename",
};

/** Events answered with `permissionDecision` (allow / deny / ask / defer). */
export const PERMISSION_EVENTS: ReadonlySet<string> = new Set(["PreToolUse", "PermissionRequest"]);

/**
 * Events where top-level `decision: "block"` has an effect (Claude Code's "Decision control"
 * table, clients.md §6.2 and §7.4). PreModelSwitch and PreSkillShellCommand are guarded events
 * in 2.1.332 (§4.3) whose block goes through the same generic path.
 */
export const BLOCKABLE_EVENTS: ReadonlySet<string> = new Set([
  "UserPromptSubmit",
  "UserPromptExpansion",
  "PostToolUse",
  "PostToolUseFailure",
  "PostToolBatch",
  "Stop",
  "SubagentStop",
  "PreCompact",
  "ConfigChange",
  "TaskCreated",
  "TaskCompleted",
  "TeammateIdle",
  "PreModelSwitch",
  "PreSkillShellCommand",
]);

/**
 * Events with a `hookSpecificOutput.additionalContext` variant on every Claude Code version we
 * support (§6.1). Stop and SubagentStop gained one only in 2.1.3xx; 2.1.112 rejects it, so it
 * is never sent there.
 */
const CLAUDE_CODE_CONTEXT_EVENTS: ReadonlySet<string> = new Set([
  "PreToolUse",
  "UserPromptSubmit",
  "PostToolUse",
  "PostToolUseFailure",
  "Notification",
  "Setup",
  "SubagentStart",
  "SessionStart",
]);

/**
 * The nine events deepagents v2 has a `hookSpecificOutput` variant for (clients.md §6.4; its
 * hooks/models/wire.py): one naming any other event invalidates its whole answer.
 */
export const DEEPAGENTS_OUTPUT_EVENTS: ReadonlySet<string> = new Set([
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
 * Of deepagents v2's variants (DEEPAGENTS_OUTPUT_EVENTS), those whose context it adds.
 * SubagentStop's `additionalContext` is added to the parent's context (deepagents_code
 * hooks/reducer.py); Stop's is not context there but a continuation, as a block is, so it is
 * never sent.
 */
const DEEPAGENTS_CONTEXT_EVENTS: ReadonlySet<string> = new Set([
  "PreToolUse",
  "UserPromptSubmit",
  "PostToolUse",
  "PostToolUseFailure",
  "SubagentStart",
  "SubagentStop",
  "SessionStart",
]);

/**
 * deepcode checks no schema and reads `additionalContext` back from PostToolBatch (appended to the
 * batch's last tool result, src/loop.ts) and UserPromptExpansion (appended to the expanded
 * prompt, src/tui/useChat.ts) too, where Claude Code 2.1.112 has no variant. clients.md §6.3 lists
 * the fields deepcode reads, not the events; deepcode's own source wins.
 */
const DEEPCODE_ONLY_CONTEXT_EVENTS: ReadonlySet<string> = new Set(["PostToolBatch", "UserPromptExpansion"]);

/**
 * PreCompact's context is a JSON body that Claude Code appends, raw, to its compaction
 * instructions (render.ts renderPreCompact); deepcode reads nothing back from its PreCompact hooks
 * at all: its compaction awaits them and reads no result (deepcode's `runPreCompactHook`, in its
 * compactionManager.ts, returns nothing), which clients.md §9 does not say.
 */
export function carriesContext(event: string, dialect: Dialect): boolean {
  if (dialect === "deepagents-legacy") return false;
  if (dialect === "deepagents") return DEEPAGENTS_CONTEXT_EVENTS.has(event);
  if (event === "PreCompact") return dialect === "claude-code";
  if (dialect === "deepcode" && DEEPCODE_ONLY_CONTEXT_EVENTS.has(event)) return true;
  if (dialect === "deepcode" && DEEPCODE_NO_CONTEXT_EVENTS.has(event)) return false;
  return CLAUDE_CODE_CONTEXT_EVENTS.has(event);
}

/**
 * Events with Claude Code's `additionalContext` variant whose context deepcode never reads, each
 * with why: its loop takes the block, `updatedInput` and the permission from a PreToolUse hook,
 * nothing else (src/loop.ts execCall), and it runs its Notification and Setup hooks without
 * waiting for them (`void runHooks(...)`: src/tui/useChat.ts, src/config.ts). `hookgate check`
 * says so of a rule that adds context there.
 */
export const DEEPCODE_NO_CONTEXT_EVENTS: ReadonlyMap<string, string> = new Map([
  ["PreToolUse", "it reads the decision and its reason there"],
  ["Notification", "it reads nothing back from its Notification hooks"],
  ["Setup", "it reads nothing back from its Setup hooks"],
]);

/**
 * deepcode reads only `additionalContext` (and `updatedOutput`) back from these events' hooks, not
 * a block: a block's reason is said to its model as context there, as Claude Code tells Claude.
 * On PostToolBatch, Claude Code also ends the turn; deepcode cannot be made to, so its model is
 * told why instead of nothing.
 */
export const DEEPCODE_BLOCK_AS_CONTEXT: ReadonlySet<string> = new Set([
  "PostToolUse",
  "PostToolUseFailure",
  "PostToolBatch",
]);

/**
 * Blockable events whose block deepcode never reads back (its src/tui/useChat.ts and
 * compactionManager.ts): the compaction, the expanded prompt and the settings change go ahead.
 * `hookgate check` says so; a rule blocking there still blocks the clients that read it.
 */
export const DEEPCODE_IGNORES_BLOCK: ReadonlySet<string> = new Set([
  "PreCompact",
  "UserPromptExpansion",
  "ConfigChange",
]);

/**
 * Events besides PreToolUse and PermissionRequest where deepcode acts on the block a
 * `permissionDecision: "deny"` is to it (`outcome.block`: src/tui/useChat.ts, src/headless.ts,
 * src/tools/taskListTools.ts). On Stop and SubagentStop it reads only a `decision: "block"`.
 * forward.ts reads a forward target's answer to a deepcode event as deepcode would.
 */
export const DEEPCODE_PERMISSION_BLOCKS: ReadonlySet<string> = new Set([
  "UserPromptSubmit",
  "TaskCreated",
  "TaskCompleted",
]);

/**
 * What the client does with the decision it is sent on an event: that decision, or `none` where
 * it acts on none: deepagents ignores `defer`, and an allow sent with a rewritten input
 * (`rewritten`); deepcode acts on no block on DEEPCODE_IGNORES_BLOCK's events, ignores `defer`,
 * and on `ask` goes through its own permission checks, as with no decision (clients.md §6.3,
 * §6.5); and it goes on from a Stop or SubagentStop block once per run at most, so a block on one
 * whose `stop_hook_active` says it already has ends the run all the same (its src/loop.ts and
 * src/subagentRunner.ts). Claude Code blocks no ConfigChange of `policy_settings`. The audit
 * line says it beside the decision sent.
 */
export function clientDecision(
  decision: string,
  event: string | undefined,
  dialect: Dialect | undefined,
  payload?: Readonly<Record<string, unknown>>,
  rewritten = false,
): string {
  if (event === undefined) return decision;
  // Claude Code makes a change to the managed policy settings whatever a ConfigChange hook
  // answers (clients.md §4.4); it honours the block on every other source.
  if (decision === "block" && event === "ConfigChange" && payload?.source === "policy_settings")
    return "none";
  if (dialect === "deepagents") {
    // deepagents diagnoses a `defer` as unsupported and drops it, and an `updatedInput` too, with
    // the allow it comes with on PreToolUse and PermissionRequest: its own permission flow then
    // judges the call as the agent wrote it (its hooks/reducer.py).
    if (decision === "defer") return "none";
    return decision === "allow" && rewritten && PERMISSION_EVENTS.has(event) ? "none" : decision;
  }
  if (dialect !== "deepcode") return decision;
  if (decision === "ask" || decision === "defer") return "none";
  if (decision === "block" && DEEPCODE_IGNORES_BLOCK.has(event)) return "none";
  if (decision === "block" && STOP_EVENTS.has(event) && payload?.stop_hook_active === true) return "none";
  return decision;
}

/** The events that end a turn, whose body carries `stop_hook_active`. */
export const STOP_EVENTS: ReadonlySet<string> = new Set(["Stop", "SubagentStop"]);

/**
 * The decision an event can honour for a rule's `decide`, or undefined when the client has no
 * way to act on it (then it is not sent, and `check` warns). Block and deny are one thing said
 * two ways: PreToolUse and PermissionRequest say deny, the blockable events say block.
 */
export function honouredDecision(event: string, kind: DecisionKind): DecisionKind | undefined {
  if (event === "PreToolUse") return kind === "block" ? "deny" : kind;
  if (event === "PermissionRequest") {
    if (kind === "allow") return "allow";
    return kind === "deny" || kind === "block" ? "deny" : undefined;
  }
  if (BLOCKABLE_EVENTS.has(event)) return kind === "deny" || kind === "block" ? "block" : undefined;
  return undefined;
}

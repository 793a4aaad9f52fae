/**
 * Which rules apply to one event, and what each says. Pure and synchronous: rules that need a
 * remote call (prompt, forward) come back as pending, for the use case to run under its deadline.
 */
import type { RuleEffect } from "./decision.js";
import { honouredDecision } from "./event-capabilities.js";
import { TOOL_EVENTS } from "./events.js";
import type { HookEvent } from "./hook-event.js";
import { eventReadsMatcher, matcherValue } from "./matcher.js";
import {
  allowListMatches,
  commandWords,
  isUnreadableCommand,
  matchesPermissionRule,
  matchesReadCommand,
  type PermissionRule,
  type ToolCall,
} from "./permission-rule.js";
import type { CompiledRule, Policy } from "./policy.js";
import { MAX_COMMAND_LENGTH } from "./shell-limits.js";

export interface RuleMatch {
  readonly rule: CompiledRule;
  readonly effect: RuleEffect;
}

/** Why a rule did or did not apply; collected only when asked (simulate), off the hot path. */
export interface RuleExplanation {
  readonly ruleId: string;
  readonly applied: boolean;
  readonly mode: CompiledRule["mode"];
  readonly why: string;
}

export interface Evaluation {
  /** Enforcing rules that applied, with their static effect (pending rules have none yet). */
  readonly enforced: readonly RuleMatch[];
  /** Shadow rules that applied: what they would have said, never sent. */
  readonly shadowed: readonly RuleMatch[];
  /** Enforcing prompt and forward rules that applied and still need their remote call. */
  readonly pending: readonly CompiledRule[];
  /** Shadow prompt and forward rules that applied: their calls are made and recorded, never answered. */
  readonly shadowPending: readonly CompiledRule[];
  /** Sinks to notify, per applied enforcing rule. */
  readonly notify: readonly { readonly ruleId: string; readonly sinks: readonly string[] }[];
  readonly explanations?: readonly RuleExplanation[];
}

export interface Caller {
  readonly team: string;
}

const NO_RULES: readonly CompiledRule[] = Object.freeze([]);

export function evaluatePolicy(
  policy: Policy,
  event: HookEvent,
  caller: Caller,
  explain = false,
): Evaluation {
  const enforced: RuleMatch[] = [];
  const shadowed: RuleMatch[] = [];
  const pending: CompiledRule[] = [];
  // Rare: created only for a shadow prompt or forward rule that applies.
  let shadowPending: CompiledRule[] | undefined;
  const notify: { ruleId: string; sinks: readonly string[] }[] = [];
  const explanations: RuleExplanation[] | undefined = explain ? [] : undefined;

  const facts = factsOf(event);
  // simulate explains every rule of the event; the hot path visits only the index's candidates.
  const rules = explain
    ? policy.rulesFor(event.name)
    : policy.candidates(event.name, facts.matcherValue, facts.bashWords);
  // The index has tested the candidates' matchers and `if` first words; simulate's list is
  // every rule of the event, so there they are tested here, the command split once for all and
  // only if a rule names first words.
  let words: { value: ReadonlySet<string> | undefined } | undefined;
  const bashWords = () => {
    words ??= { value: facts.bashWords?.() };
    return words.value;
  };
  const unindexed = explain ? { bashWords } : undefined;
  for (const rule of rules) {
    // Another team's rule never applies, and simulate does not list it either: a caller sees the
    // rules that could apply to its own events, nothing of what other teams' rules are or say.
    if (rule.teams && !rule.teams.has(caller.team)) continue;
    const miss = firstMiss(rule, event, facts, unindexed);
    explanations?.push({
      ruleId: rule.id,
      applied: miss === undefined,
      mode: rule.mode,
      why: miss === undefined ? whyApplied(rule, event, facts) : describeMiss(miss, rule, facts),
    });
    if (miss !== undefined) continue;
    const pendingRemote = rule.action.kind === "prompt" || rule.action.kind === "forward";
    const match = { rule, effect: staticEffect(rule, event, facts) };
    if (rule.mode === "shadow") {
      shadowed.push(match);
      if (pendingRemote) {
        shadowPending ??= [];
        shadowPending.push(rule);
      }
      continue;
    }
    if (pendingRemote) pending.push(rule);
    else enforced.push(match);
    if (rule.notify.length > 0) notify.push({ ruleId: rule.id, sinks: rule.notify });
  }
  return explanations
    ? { enforced, shadowed, pending, shadowPending: shadowPending ?? NO_RULES, notify, explanations }
    : { enforced, shadowed, pending, shadowPending: shadowPending ?? NO_RULES, notify };
}

/** What every rule reads of one event, worked out once per event rather than once per rule. */
interface EventFacts {
  readonly readsMatcher: boolean;
  /** The matcher's value; undefined when the event reads no matcher or lacks the field. */
  readonly matcherValue: string | undefined;
  /** The tool call `if` rules judge; undefined on events that are not tool calls. */
  readonly call: ToolCall | undefined;
  /** The length of a Bash command over MAX_COMMAND_LENGTH, which `if` patterns do not read. */
  readonly unreadCommandLength: number | undefined;
  /**
   * A Bash call's command words (permission-rule.ts `commandWords`, undefined when not known),
   * worked out when asked; undefined on other events.
   */
  readonly bashWords: (() => ReadonlySet<string> | undefined) | undefined;
  /**
   * The body with the input its description names as `tool_input` (describedInput), which the
   * `where` conditions of rules that cannot allow read, as their `if` does; undefined otherwise.
   */
  readonly describedPayload: Readonly<Record<string, unknown>> | undefined;
}

function factsOf(event: HookEvent): EventFacts {
  const readsMatcher = eventReadsMatcher(event.name);
  const described = describedInput(event);
  const toolInput = event.toolInput ?? described;
  const command = event.toolName === "Bash" ? toolInput?.command : undefined;
  return {
    readsMatcher,
    matcherValue: readsMatcher ? matcherValue(event) : undefined,
    call:
      TOOL_EVENTS.has(event.name) && event.toolName !== undefined
        ? {
            toolName: event.toolName,
            toolInput,
            cwd: event.cwd,
            transcriptPath: event.transcriptPath,
            ...(described && { described: true }),
            ...(inputMissing(event) && { inputMissing: true }),
          }
        : undefined,
    unreadCommandLength:
      typeof command === "string" && command.length > MAX_COMMAND_LENGTH ? command.length : undefined,
    bashWords:
      TOOL_EVENTS.has(event.name) && event.toolName === "Bash" ? () => commandWords(command) : undefined,
    describedPayload: described && { ...event.payload, tool_input: described },
  };
}

/**
 * A PreToolUse without the input every client sends with it (deepcode's PermissionRequest may
 * lack it), or whose Bash command or WebFetch URL is not a string: what the call runs or reaches
 * is not known, so deny-style rules that read it apply (permission-rule.ts `inputMissing`, and
 * `where` conditions on `tool_input`, in firstMiss) and allow rules do not.
 */
function inputMissing(event: HookEvent): boolean {
  if (event.name !== "PreToolUse") return false;
  const input = event.toolInput;
  if (input === undefined) return true;
  const field = event.toolName === "Bash" ? "command" : event.toolName === "WebFetch" ? "url" : undefined;
  return field !== undefined && typeof input[field] !== "string";
}

/** A `where` key that reads the tool call's input. */
const INPUT_KEY = /^tool_input(?:\.|$)/;

/**
 * deepcode's PermissionRequest sends no `tool_input`, only `tool_desc` (clients.md §5.3): its
 * tool's words for the call (its `needsPermission`), read back as the input they name. For Bash
 * the command as deepcode shows it (TV-31's `"tool_desc":"ls"`); for Write `写入 <file_path>`, for
 * Edit `编辑 <file_path>`, for NotebookEdit `编辑 <notebook_path>`, for WebFetch `WebFetch <host>`.
 * `if` rules read it as the call's input, so a PermissionRequest deny for a path or a domain
 * applies to deepcode as to Claude Code; an allow rule never matches it (evaluateRule): a
 * description may not be all the call does, and deepcode's PreToolUse, which carries the whole
 * input, comes first. A description in no such form describes nothing.
 */
function describedInput(event: HookEvent): Readonly<Record<string, unknown>> | undefined {
  if (event.toolInput !== undefined || event.dialect !== "deepcode" || event.name !== "PermissionRequest")
    return undefined;
  const description = event.payload.tool_desc;
  if (typeof description !== "string") return undefined;
  const after = (prefix: string): string | undefined =>
    description.startsWith(prefix) && description.length > prefix.length
      ? description.slice(prefix.length)
      : undefined;
  switch (event.toolName) {
    case "Bash":
      return { command: description };
    case "Write":
      return named("file_path", after("写入 "));
    case "Edit":
      return named("file_path", after("编辑 "));
    case "NotebookEdit":
      return named("notebook_path", after("编辑 "));
    case "WebFetch": {
      // `new URL(url).host`, or the URL as written when it did not parse (then not a host).
      const host = after("WebFetch ");
      return host !== undefined && /^[^\s/?#@\\]+$/.test(host) ? { url: `https://${host}/` } : undefined;
    }
    default:
      return undefined;
  }
}

const named = (field: string, value: string | undefined): Readonly<Record<string, unknown>> | undefined =>
  value === undefined ? undefined : { [field]: value };

/** Which condition of a rule failed: a constant, so that the hot path builds no message. */
type Miss = "matcher" | "if-not-tool" | "if" | WhereIndex;
/** The position of the `where` condition that failed. */
type WhereIndex = number;

/** The first condition of the rule that does not hold for this event, or undefined if all hold. */
function firstMiss(
  rule: CompiledRule,
  event: HookEvent,
  facts: EventFacts,
  /** Given for a rule the index did not choose (simulate), with the Bash call's words when asked. */
  unindexed: { readonly bashWords: () => ReadonlySet<string> | undefined } | undefined,
): Miss | undefined {
  if (unindexed && rule.matcher && facts.readsMatcher && !rule.matcher(facts.matcherValue)) return "matcher";
  if (rule.ifRules) {
    const call = facts.call;
    if (call === undefined) return "if-not-tool";
    // A quick no (rule-index.ts does it for candidates): every `if` entry names a first word the
    // Bash command does not start with.
    const words = rule.ifWords;
    const bashWords = words === undefined ? undefined : unindexed?.bashWords();
    if (words !== undefined && bashWords !== undefined && !words.some((w) => bashWords.has(w))) return "if";
    if (
      isAllow(rule)
        ? call.described === true || !allowListMatches(rule.ifRules, call)
        : call.inputMissing && mayAllow(rule)
          ? !matchesByNameAlone(rule.ifRules, call)
          : !rule.ifRules.some((r) => matchesPermissionRule(r, call, "any"))
    )
      return "if";
  }
  let i = 0;
  // A described call (deepcode's PermissionRequest) is read by its description, as `if` reads it,
  // by every rule but an allow.
  const payload = (!isAllow(rule) && facts.describedPayload) || event.payload;
  // What an allow (or a verdict that may be one) does not read: an input that did not come, or
  // one a description stands for, or none (a description that names no input). A condition on it
  // never holds there, a `not` or an `exists: false` included, so nothing approves a call
  // hookgate cannot see.
  const unseen = facts.call !== undefined && unseenBy(rule, facts.call);
  for (const predicate of rule.where) {
    if (unseen && readsInput(rule, i)) return i;
    // On a call without its input, a condition on it holds for a rule that cannot allow: fail safe.
    if (!predicate(payload) && !(facts.call?.inputMissing && !mayAllow(rule) && readsInput(rule, i)))
      return i;
    i++;
  }
  return undefined;
}

/** Whether the rule reads nothing of this call's input (firstMiss). */
const unseenBy = (rule: CompiledRule, call: ToolCall): boolean =>
  call.inputMissing === true
    ? mayAllow(rule)
    : isAllow(rule) && (call.described === true || call.toolInput === undefined);

const isAllow = (rule: CompiledRule): boolean =>
  rule.action.kind === "decide" && rule.action.decision === "allow";

/**
 * An allow, or a model's or a downstream hook's verdict, which may be one: on a call without its
 * input, such a rule applies only by what it can read (an `if` entry naming the tool alone), so
 * nothing approves a call hookgate cannot see.
 */
const mayAllow = (rule: CompiledRule): boolean =>
  isAllow(rule) || rule.action.kind === "prompt" || rule.action.kind === "forward";

/** Whether an `if` entry that names a tool and reads nothing of its input (`Bash`, `mcp__github__*`) matches the call. */
const matchesByNameAlone = (entries: readonly PermissionRule[], call: ToolCall): boolean =>
  entries.some(
    (entry) =>
      (entry.target.kind === "tool" || entry.target.kind === "mcp") &&
      matchesPermissionRule(entry, call, "any"),
  );

/** Whether the rule's `where` condition at `index` reads the tool call's input. */
const readsInput = (rule: CompiledRule, index: number): boolean =>
  INPUT_KEY.test(Object.keys(rule.document.where ?? {})[index] ?? "");

/** Why an allow rule did not apply to a call the client only described (deepcode's tool_desc). */
const describedOnly = (toolName: string): string =>
  `the ${toolName} call is known only by the client's description (tool_desc), which no allow rule reads`;

/** What simulate says of a rule that did not apply (never another team's: it is not listed). */
function describeMiss(miss: Miss, rule: CompiledRule, facts: EventFacts): string {
  switch (miss) {
    case "matcher":
      return `matcher "${rule.document.matcher}" does not match ${JSON.stringify(facts.matcherValue ?? null)}`;
    case "if-not-tool":
      return `"if" applies only to tool events`;
    case "if":
      return facts.call?.described && isAllow(rule)
        ? describedOnly(facts.call.toolName)
        : `no "if" permission rule matches the ${facts.call?.toolName} call`;
    default: {
      const call = facts.call;
      if (call === undefined || !unseenBy(rule, call) || !readsInput(rule, miss))
        return `where "${Object.keys(rule.document.where ?? {})[miss]}" does not hold`;
      if (call.described) return describedOnly(call.toolName);
      return call.inputMissing
        ? `the ${call.toolName} call came without its tool_input (or its command or URL), and a rule that may allow holds no condition on it`
        : `the ${call.toolName} call came without its tool_input, and no allow rule holds a condition on it`;
    }
  }
}

function whyApplied(rule: CompiledRule, event: HookEvent, facts: EventFacts): string {
  const parts = [`on ${event.name}`];
  if (rule.teams) parts.push("team listed");
  if (rule.document.matcher && eventReadsMatcher(event.name))
    parts.push(`matcher "${rule.document.matcher}" matched`);
  const missing = missingInput(rule, event, facts);
  if (rule.ifRules)
    parts.push(`"if" matched${missing.byIf ? MISSING_INPUT_NOTE : unreadCommandNote(rule, facts)}`);
  if (rule.where.length > 0)
    parts.push(`every where condition held${missing.byWhere ? MISSING_INPUT_NOTE : ""}`);
  return parts.join(", ");
}

function staticEffect(rule: CompiledRule, event: HookEvent, facts: EventFacts): RuleEffect {
  const action = rule.action;
  switch (action.kind) {
    case "decide": {
      const decision = honouredDecision(event.name, action.decision);
      const reason = decision ? (action.reason ?? defaultReason(rule.id, decision)) : undefined;
      return {
        ruleId: rule.id,
        decision,
        reason: reason === undefined ? undefined : `${reason}${appliedNote(rule, event, facts)}`,
        context: action.context,
        systemMessage: action.systemMessage,
        updatedInput: decision === "allow" ? action.updatedInput : undefined,
        withheld: decision === undefined ? action.decision : undefined,
      };
    }
    case "context":
      return { ruleId: rule.id, context: action.text, systemMessage: action.systemMessage };
    default:
      return { ruleId: rule.id };
  }
}

/**
 * Said after the reason when the rule's `if` matched only because the Bash command was too long
 * to read: its patterns then fail safe and match (permission-rule.ts), so the rule's own reason
 * ("no rm -rf") would name something the command may not do. An `if` that matches the call
 * without reading the command (`Bash` alone, another tool's rule) needs no such note.
 */
function unreadCommandNote(rule: CompiledRule, facts: EventFacts): string {
  const length = facts.unreadCommandLength;
  const call = facts.call;
  if (call?.inputMissing) return "";
  if (call === undefined || !rule.ifRules || call.toolName !== "Bash") return "";
  const command = call.toolInput?.command;
  // First: with no Bash pattern among the rules that matched, the command was never split.
  if (rule.ifRules.some((r) => r.target.kind !== "bash" && matchesPermissionRule(r, call, "any"))) return "";
  if (length === undefined && !isUnreadableCommand(command)) return "";
  if (length !== undefined)
    return ` (the command is ${count(length)} characters; hookgate does not read commands over ${count(MAX_COMMAND_LENGTH)} characters and treats them as matching)`;
  if (rule.ifRules.some((r) => matchesReadCommand(r, command))) return "";
  return ` (hookgate cannot tell every program this command runs: a variable or pattern in command position, an unquoted expansion that may split among a wrapper's or find's words (quote it: sudo -u "$U", xargs -P "$(nproc)"), a shell reading its script from stdin, an unclosed quote or deep nesting; it treats such a command as matching)`;
}

const count = (n: number): string => n.toLocaleString("en-US");

const MISSING_INPUT_NOTE =
  " (the call came without its tool_input, or its command or URL, so hookgate treats it as matching)";

/**
 * Whether a rule that applied to a call without its input did so for want of it: its `if` by an
 * entry that reads the input (no entry naming the tool alone matched), or a `where` condition on
 * the input that does not hold as written (firstMiss holds it, to fail safe).
 */
function missingInput(
  rule: CompiledRule,
  event: HookEvent,
  facts: EventFacts,
): { readonly byIf: boolean; readonly byWhere: boolean } {
  const call = facts.call;
  if (!call?.inputMissing || mayAllow(rule)) return { byIf: false, byWhere: false };
  return {
    byIf: rule.ifRules !== undefined && !matchesByNameAlone(rule.ifRules, call),
    byWhere: rule.where.some((predicate, i) => readsInput(rule, i) && !predicate(event.payload)),
  };
}

/** Said after the reason of a rule that applied on what it could not read. */
function appliedNote(rule: CompiledRule, event: HookEvent, facts: EventFacts): string {
  const missing = missingInput(rule, event, facts);
  return missing.byIf || missing.byWhere ? MISSING_INPUT_NOTE : unreadCommandNote(rule, facts);
}

/** A deny, block or ask without a reason still tells the agent which rule spoke; an allow needs none. */
function defaultReason(ruleId: string, decision: string): string | undefined {
  return decision === "allow" ? undefined : `hookgate policy rule "${ruleId}" decided ${decision}`;
}

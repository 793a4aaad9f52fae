/**
 * Warnings for a policy that loads but may not do what its author thinks: rules no event can
 * reach, decisions a client cannot honour, inline secrets, no auth. `hookgate check` prints them;
 * no runtime logs them: `serve`, Lambda and Workers log only the load's own warnings (policy.ts).
 */

import { listTeams, teamsOf } from "./auth.js";
import { closestName } from "./closest-name.js";
import { DEADLINE_MARGIN_MS, MAX_DEADLINE_MS, MIN_DEADLINE_MS } from "./deadline.js";
import { classifyAddress, isIpLiteral, metadataOpened } from "./egress/address.js";
import { howToOpen } from "./egress/open.js";
import { DEFAULT_EGRESS_POLICY } from "./egress/policy.js";
import { checkUrl } from "./egress/url.js";
import { CLIENT_HEADER_RULE, HEADER_NAME_RULE, HEADER_VALUE_RULE } from "./errors.js";
import {
  BLOCKABLE_EVENTS,
  carriesContext,
  DEEPCODE_IGNORES_BLOCK,
  DEEPCODE_NO_CONTEXT_EVENTS,
  honouredDecision,
  PERMISSION_EVENTS,
  STOP_EVENTS,
} from "./event-capabilities.js";
import {
  CLAUDE_CODE_EVENTS,
  closestEvent,
  eventShape,
  type FieldShape,
  isKnownEvent,
  type JsonType,
  legacyEventKeys,
  TOOL_EVENTS,
} from "./events.js";
import { clientHeaderNames, headerVariables, invalidHeaderNames, invalidHeaderValues } from "./forward.js";
import { deepEqual } from "./json-equal.js";
import { DEFAULT_MODEL_URLS, promptPlaceholders } from "./judge.js";
import { maskString } from "./mask.js";
import { eventReadsMatcher, exactMatcherNames, matcherKeepsEdgeSpaces } from "./matcher.js";
import { type PermissionRule, SYSTEM_FOLDER } from "./permission-rule.js";
import {
  type CompiledRule,
  DEFAULT_DEADLINE_MS,
  inlineHeaderSecret,
  jsonPath,
  type Policy,
  type PolicyIssue,
  secretUrlParts,
  sendsNotifications,
} from "./policy.js";
import type { WhereOperator } from "./policy-schema.js";
import type { EnvReader } from "./ports.js";
import { compileRegex, MAX_REGEX_PROGRAM_SIZE, REGEX_ENGINE_MISSING, withFlagsInside } from "./regex.js";
import { ownOnError, ruleOnError } from "./rule-failure.js";
import { ENV_NAME, HEADER_VAR_NAME, resolveSecret, SINK_ENV_FIELDS, shellVariable } from "./secret-ref.js";
import { deliveryUrl } from "./sinks.js";
import { compileWhere, compileWhereGlob } from "./where.js";

/**
 * `env`, where given, reads the variables the policy's `env:` values name, so that a sink URL
 * kept in one (as `check` advises for Slack and Discord) is judged too when it is set.
 */
export function lintPolicy(policy: Policy, env?: EnvReader): PolicyIssue[] {
  const warnings: PolicyIssue[] = [];
  const warn = (path: string, message: string) => warnings.push({ severity: "warning", path, message });
  if (!policy.document.auth) {
    warn(
      "$",
      'has no "auth": every caller is accepted as team "default"; fine on one machine, not for a team',
    );
  }
  // A request-level "ask" (render.ts renderRequestFailure) asks only on PreToolUse.
  const askOnly =
    '"ask" is honoured on PreToolUse only: a failure on any other event gets no decision there, as with "allow"';
  if (policy.document.defaults?.onError === "ask")
    warn(
      "$.defaults.onError",
      `${askOnly}, a body whose event cannot be identified too${inheritedAskOnPermissionRequest(policy)}`,
    );
  if (policy.document.auth?.onFailure === "ask") warn("$.auth.onFailure", askOnly);
  if (policy.document.auth?.tokens.length === 0) {
    warn(
      "$.auth.tokens",
      `is empty: no caller can authenticate, so every request is answered with auth.onFailure; add a token per team (hookgate token hash), or remove "auth" for a gateway on one machine`,
    );
  }
  const deadline = policy.document.defaults?.deadlineMs;
  if (deadline !== undefined && deadline > MAX_DEADLINE_MS)
    warn(
      "$.defaults.deadlineMs",
      `is above ${MAX_DEADLINE_MS} ms and is capped there unless a request's x-hookgate-timeout says its hook waits longer: Claude Code lets an action through when an http hook takes longer than its timeout, 600 s by default, less the ${DEADLINE_MARGIN_MS} ms hookgate keeps for the answer`,
    );
  if (deadline !== undefined && deadline < FEWEST_PLAUSIBLE_MS)
    warn(
      "$.defaults.deadlineMs",
      inSeconds(
        deadline,
        `no model or team server answers a prompt or forward rule that fast (a deadline under ${MIN_DEADLINE_MS} ms is raised to ${MIN_DEADLINE_MS}), so each would answer its onError`,
      ),
    );
  const denyAll = unconditionalDenies(policy);
  const teams = teamsOf(policy.document);
  for (const rule of policy.rules) {
    lintRule(rule, warn);
    lintTeams(rule, teams, warn);
    lintMatcherCase(rule, warn);
    lintMatcherNamesNoTool(rule, warn);
    lintMatcherNamesNothing(rule, warn);
    lintMatcherSlashes(rule, warn);
    lintMatcherClientValues(rule, warn);
    lintWhereTypes(rule, warn);
    lintWhereToolNameCase(rule, warn);
    lintWhereStringOps(rule, warn);
    lintWhereGlobSeparators(rule, warn);
    lintWhereGlobFolders(rule, warn);
    lintWhereGlobRelative(rule, warn);
    lintWhereDescent(rule, warn);
    lintWhereFields(rule, warn);
    lintWhereFieldsNotCarried(rule, warn);
    lintToolInputFields(rule, warn);
    lintIfTargets(rule, warn);
    lintShadowedByDenyAll(rule, denyAll, warn);
    lintWhereContradictions(rule, warn);
    lintWhereAlwaysOrNever(rule, warn);
    lintStopLoopOnError(rule, policy, warn);
    lintTimeoutPastDeadline(rule, policy, warn);
    lintTimeoutInSeconds(rule, warn);
    lintDeniesEveryTool(rule, warn);
    lintWhereSlashRegex(rule, warn);
    lintWhereCommandGlob(rule, warn);
    lintWhereContainsList(rule, warn);
    lintWhereRegexGlobStar(rule, warn);
  }
  lintInlineSecrets(policy, warn);
  lintForwardHeaderVariables(policy, warn, env);
  lintEnvTakenAsWritten(policy, warn);
  lintShellVariables(policy, warn);
  lintEgressTargets(policy, warn, env);
  lintMetadataOpened(policy, warn);
  lintUnnotifiedSinks(policy, warn);
  return warnings;
}

/**
 * A sink no enforcing rule notifies: an `off` or shadow rule puts nothing on the queue
 * (evaluate.ts), as `notifies` counts, so naming the sink there sends it nothing either.
 */
function lintUnnotifiedSinks(policy: Policy, warn: (path: string, message: string) => void): void {
  const notified = new Set(policy.rules.filter(sendsNotifications).flatMap((rule) => rule.notify));
  for (const name of Object.keys(policy.document.sinks ?? {})) {
    if (notified.has(name)) continue;
    const idle = policy.rules
      .filter((rule) => rule.notify.includes(name))
      .map((rule) => `"${rule.id}", ${rule.mode === "off" ? "off" : "in shadow"}`);
    warn(
      jsonPath(["sinks", name]),
      idle.length === 0
        ? "no rule notifies it, so nothing is ever sent to it"
        : `is notified only by rules that send nothing (${idle.join("; ")}), so nothing is ever sent to it; notify it from an enforcing rule`,
    );
  }
}

function lintRule(rule: CompiledRule, warn: (path: string, message: string) => void): void {
  const p = rule.path;
  if (rule.mode === "off") warn(`${p}.mode`, `rule "${rule.id}" is off and never evaluated`);
  // evaluate.ts queues the notifications of enforcing rules only: a shadow rule changes nothing
  // outside the audit line, where what it would have decided is recorded.
  if (rule.mode === "shadow" && rule.notify.length > 0)
    warn(
      `${p}.notify`,
      `is never sent: a shadow rule changes nothing but the audit line's "shadow" field, where what it would have decided is recorded; notify from an enforcing rule`,
    );
  const events = rule.events === "*" ? [] : rule.events;
  for (const [i, name] of events.entries()) {
    const at = typeof rule.document.on === "string" ? `${p}.on` : `${p}.on[${i}]`;
    const several = eventsInOneName(name);
    if (several !== undefined) {
      warn(
        at,
        `"${name}" names ${several.length} events in one string, which no client sends as an event's name; "on" takes a list: write ${JSON.stringify(several).replaceAll(",", ", ")}`,
      );
    } else if (!isKnownEvent(name)) {
      const meant = closestEvent(name);
      // The gateway refuses an event named so (events.ts): no client adds a miscased one of ours.
      warn(
        at,
        meant?.toLowerCase() === name.toLowerCase()
          ? `"${name}" is ${meant} in another case; event names are case-sensitive and the gateway refuses an event named "${name}", so this rule can never apply`
          : `"${name}" is not an event any supported client sends (accepted in case a client adds it)${meant ? `: did you mean ${meant}?` : ""}`,
      );
    }
    if (CLAUDE_CODE_NO_HTTP.has(name)) {
      warn(
        at,
        `Claude Code never sends http hooks on ${name}; only deepcode or a command hook running \`hookgate send\` reach this rule`,
      );
    }
    if (rule.ifRules && !TOOL_EVENTS.has(name) && isKnownEvent(name)) {
      warn(
        at,
        `"if" applies only to tool events, so this rule never applies to ${name}; a condition on ${name} is written with "where"`,
      );
      // What the rule would do there is moot: advice on it (the stop_hook_active a block of Stop
      // should check, the matcher Stop ignores) only hid that it never gets there.
      continue;
    }
    // Not of an unknown name, as with "if": that of a misspelt one is right once the name is.
    if (
      rule.document.matcher &&
      !["", "*"].includes(rule.document.matcher) &&
      !eventReadsMatcher(name) &&
      isKnownEvent(name)
    ) {
      warn(`${p}.matcher`, `${name} has no field a matcher is checked against; the matcher is ignored there`);
    }
    lintAction(rule, name, warn);
  }
  if (rule.events === "*" && rule.document.matcher && !["", "*"].includes(rule.document.matcher)) {
    warn(
      `${p}.matcher`,
      `"on": "*" includes events with no field a matcher is checked against (Stop, UserPromptSubmit, ...); the matcher is ignored there, so this rule applies to every one of them`,
    );
  }
  if (rule.events === "*") lintEveryEvent(rule, warn);
  const onError = ownOnError(rule);
  if (rule.events === "*" && (onError === "ask" || onError === "deny")) {
    warn(
      `${p}.${rule.action.kind}.onError`,
      `"on": "*" includes events where no client can honour "${onError}" (${onError === "ask" ? "every event but PreToolUse" : "Notification, SessionStart, ..."}); when the rule fails there it has no opinion, as with "allow"${onError === "ask" ? `, but on PermissionRequest ${HELD_BACK}` : ""}`,
    );
  }
  lintMatcherAgainstIf(rule, warn);
  lintPromptPlaceholders(rule, warn);
  lintRewriteOnPermissionRequest(rule, warn);
  lintRewriteFields(rule, warn);
}

/**
 * The events an `on` name lists as a matcher or a sentence would (`"PreToolUse, PostToolUse"`,
 * `"Stop|SubagentStop"`), when each is one a client sends: no client sends an event so named.
 */
function eventsInOneName(name: string): string[] | undefined {
  const parts = name.split(/[\s,|;]+/).filter((part) => part !== "");
  return parts.length > 1 && parts.every(isKnownEvent) ? parts : undefined;
}

/**
 * A decide rule's rewrite on PermissionRequest reaches Claude Code alone: deepcode reads only
 * `permissionDecision` there, so render.ts `deliverable` answers the allow deny rather than run
 * the call unrewritten, and deepagents drops `updatedInput` with its allow (event-capabilities.ts
 * `clientDecision`). Said once, for `"on": "*"` too, which reaches PermissionRequest.
 */
function lintRewriteOnPermissionRequest(
  rule: CompiledRule,
  warn: (path: string, message: string) => void,
): void {
  const action = rule.action;
  if (action.kind !== "decide" || action.decision !== "allow" || action.updatedInput === undefined) return;
  if (rule.events !== "*" && !rule.events.includes("PermissionRequest")) return;
  warn(
    `${rule.path}.updatedInput`,
    "on PermissionRequest only Claude Code applies a rewritten input: deepcode reads only permissionDecision there, so this allow is answered deny to it, and deepagents drops the rewrite with the allow, leaving the call as it came to its own permission flow; rewrite the call on PreToolUse instead, where deepcode applies it too (deepagents applies a rewrite on neither)",
  );
}

/**
 * What a rule's failure under an `ask` does on PermissionRequest, which cannot carry it: the ask is
 * withheld and still outranks another rule's allow (rule-failure.ts failureEffect), so it is not
 * "as with allow" there.
 */
const HELD_BACK = `no decision is sent, and another rule's allow is held back as beside a "decide": "ask" rule`;

/**
 * The enforcing prompt and forward rules that fail with `defaults.onError` on PermissionRequest,
 * having no onError of their own: with "ask" they hold back another rule's allow there, which the
 * request-level "as with allow" does not say.
 */
function inheritedAskOnPermissionRequest(policy: Policy): string {
  const ids = policy.rules
    .filter(
      (rule) =>
        rule.mode === "enforce" &&
        (rule.action.kind === "prompt" || rule.action.kind === "forward") &&
        ownOnError(rule) === undefined &&
        (rule.events === "*" || rule.events.includes("PermissionRequest")),
    )
    .map((rule) => JSON.stringify(rule.id));
  if (ids.length === 0) return "";
  const rules = ids.length === 1 ? `rule ${ids[0]} fails` : `rules ${ids.join(", ")} fail`;
  return `; but ${rules} with it on PermissionRequest, where ${HELD_BACK}`;
}

/**
 * `"on": "*"` reaches every event, most of which can carry no decision and many no context: the
 * rule still applies there (its `notify` is sent), but what it answers is not sent.
 */
function lintEveryEvent(rule: CompiledRule, warn: (path: string, message: string) => void): void {
  const action = rule.action;
  const context =
    action.kind === "context" ? action.text : action.kind === "decide" ? action.context : undefined;
  // An `if` limits the rule to tool events: the others are no events it applies to.
  const reach = rule.ifRules ? CLAUDE_CODE_EVENTS.filter((e) => TOOL_EVENTS.has(e)) : CLAUDE_CODE_EVENTS;
  const some = (events: string[]) =>
    `${events.length} of ${rule.ifRules ? `the ${reach.length} tool events its "if" limits it to` : `Claude Code's ${reach.length} events`}, e.g. ${events.slice(0, 3).join(", ")}`;
  const dropped = action.kind === "decide" ? reach.filter((e) => !honouredDecision(e, action.decision)) : [];
  if (action.kind === "decide" && dropped.length > 0) {
    warn(
      `${rule.path}.decide`,
      `"on": "*" includes events where no client can honour "${action.decision}" (${some(dropped)}); it is not sent there`,
    );
  }
  const unjudged = action.kind === "prompt" ? reach.filter((e) => !honouredDecision(e, "deny")) : [];
  if (unjudged.length > 0) {
    warn(
      `${rule.path}.prompt`,
      `"on": "*" includes events where no client can honour a model's verdict (${some(unjudged)}); the model is not called there`,
    );
  }
  const uncarried =
    context === undefined
      ? []
      : reach.filter((e) => !AGENT_DIALECTS.some((dialect) => carriesContext(e, dialect)));
  if (uncarried.length > 0) {
    warn(
      `${rule.path}.context`,
      `"on": "*" includes events with no way to carry added context (${some(uncarried)}); it is not sent there`,
    );
  }
}

/**
 * A prompt's `$n` is Claude Code's placeholder for the body's n-th word (judge.ts `renderPrompt`),
 * and any placeholder keeps the body from being appended: "more than $5 an hour" reaches the
 * model as "more than  an hour", with no event to judge.
 */
function lintPromptPlaceholders(rule: CompiledRule, warn: (path: string, message: string) => void): void {
  const text = rule.document.prompt?.text;
  if (text === undefined) return;
  const { positional, wholeBody } = promptPlaceholders(text);
  if (positional === undefined) return;
  warn(
    `${rule.path}.prompt.text`,
    `"${positional}" is replaced by word ${positional.slice(1)} (counting from 0) of the event's JSON, as in Claude Code's prompt hooks${wholeBody ? "" : ", and the event itself is then not added to the prompt"}; write "\\${positional}" for a literal dollar sign`,
  );
}

/** The clients a rule's answer can reach (deepagents legacy reads nothing back), as messages name them. */
const AGENT_DIALECTS = ["claude-code", "deepcode", "deepagents"] as const;
const CLIENT_NAME: Readonly<Record<(typeof AGENT_DIALECTS)[number], string>> = {
  "claude-code": "Claude Code",
  deepcode: "deepcode",
  deepagents: "deepagents",
};
/** The events Claude Code sends no http hooks on: only a command hook running `hookgate send` brings them. */
const CLAUDE_CODE_NO_HTTP: ReadonlySet<string> = new Set(["SessionStart", "Setup"]);

/** A client as a message names it for `event`: Claude Code on SessionStart and Setup only through `hookgate send`. */
function clientOn(dialect: (typeof AGENT_DIALECTS)[number], event: string): string {
  return dialect === "claude-code" && CLAUDE_CODE_NO_HTTP.has(event)
    ? "Claude Code (through a command hook running `hookgate send`)"
    : CLIENT_NAME[dialect];
}

/** Claude Code's own tool names, which are case-sensitive. */
const KNOWN_TOOLS = [
  "Bash",
  "BashOutput",
  "KillShell",
  "Read",
  "Edit",
  "Write",
  "MultiEdit",
  "NotebookEdit",
  "NotebookRead",
  "Glob",
  "Grep",
  "LS",
  "WebFetch",
  "WebSearch",
  "Agent",
  "Task",
  "Skill",
  "TodoWrite",
  "ExitPlanMode",
  "SlashCommand",
];
const KNOWN_BY_LOWER = new Map(KNOWN_TOOLS.map((name) => [name.toLowerCase(), name]));
/**
 * Names a client sends on tool events as written though a known tool's differ only in case:
 * deepagents v2 renames just the seven tools clients.md §5.4 lists and sends every other under
 * its own name (`to_wire_tool_name` in its hooks/tools.py returns an unlisted name unchanged), its
 * subagent tool `task` among them, where Claude Code's is Task. clients.md lists the renames only,
 * not what becomes of the rest; on a name it leaves open, no warning is better than a false one.
 */
const SENT_AS_WRITTEN: ReadonlySet<string> = new Set(["task"]);

/** The known tool `name` is in another case, unless a client sends `name` itself. */
function miscasedTool(name: string): string | undefined {
  if (SENT_AS_WRITTEN.has(name)) return undefined;
  const known = KNOWN_BY_LOWER.get(name.toLowerCase());
  return known !== name ? known : undefined;
}
/**
 * Known tools whose input has no `command`: a specifier on them (`Agent(Explore)`) never matches.
 * deepagents' subagent tool `task`, sent under that name (SENT_AS_WRITTEN), is one: its
 * `tool_args` are the call's parsed arguments, a `description` and a `subagent_type`.
 */
const NO_COMMAND_TOOLS = new Set([
  "Agent",
  "Task",
  "task",
  "Skill",
  "TodoWrite",
  "ExitPlanMode",
  "KillShell",
]);

/** `if` entries that can never match: a tool name in the wrong case, or a specifier nothing reads. */
function lintIfTargets(rule: CompiledRule, warn: (path: string, message: string) => void): void {
  const list = Array.isArray(rule.document.if);
  for (const [i, ifRule] of (rule.ifRules ?? []).entries()) {
    const at = list ? `${rule.path}.if[${i}]` : `${rule.path}.if`;
    const target = ifRule.target;
    const posix = target.kind === "path" ? posixFormOfDrivePath(ifRule.source) : undefined;
    if (posix !== undefined) {
      warn(
        at,
        `"${ifRule.source}" names a Windows drive as ${posix.drive}; a Windows client's C:\\x is read as /c/x, as Claude Code reads it, so it matches no Windows path: write "${posix.rule}"`,
      );
    }
    const system = target.kind === "path" ? systemFolderFromProjectRoot(ifRule.source) : undefined;
    if (system !== undefined) {
      warn(
        at,
        `"${ifRule.source}" starts with one "/", which is the project root (the event's cwd), as in Claude Code's rules, so it names ${system.path} inside the project, not the system's; for the absolute path write "${system.rule}"`,
      );
    }
    const spacedPrefix = target.kind === "bash" ? legacyPrefixAfterSpace(ifRule.source) : undefined;
    if (spacedPrefix !== undefined) {
      warn(
        at,
        `"${ifRule.source}" ends in ":*" after a space, which is read as the legacy prefix form, "${spacedPrefix} *": every ${spacedPrefix}, whatever follows, not a word that starts with ":"; write "Bash(${spacedPrefix} *)" for that, or "Bash(${spacedPrefix} :* *)" for a word that starts with ":" (git push origin :branch)`,
      );
    }
    const tool = target.kind === "tool" ? target.name : target.kind === "text" ? target.tool : undefined;
    if (tool === undefined) continue;
    const known = miscasedTool(tool);
    const sent = DEEPAGENTS_NATIVE_TOOLS.get(tool);
    if (sent !== undefined) {
      warn(at, nativeToolMessage(tool, sent));
    } else if (known !== undefined) {
      warn(
        at,
        `"${ifRule.source}" names the tool "${tool}"; tool names are case-sensitive: did you mean ${known}?`,
      );
    } else if (target.kind === "text" && target.field === "command" && NO_COMMAND_TOOLS.has(tool)) {
      warn(
        at,
        `"${ifRule.source}" is matched against tool_input.command, which ${tool} calls do not carry, so it matches none that carries its input; write "${tool}" alone, with ${subagentCondition(tool, ifRule.source) ?? "a where condition on the field you mean"}`,
      );
    }
  }
}

/**
 * A path rule written as an absolute system path with one `/` (`Read(/etc/passwd)`), with the path
 * and the rule written with `//`. One `/` anchors at the project root (permission-rule.ts, as
 * Claude Code reads it), so such a deny covers `<project>/etc/passwd` and lets the file through.
 */
function systemFolderFromProjectRoot(source: string): { path: string; rule: string } | undefined {
  const open = source.indexOf("(");
  const specifier = source.slice(open + 1, source.lastIndexOf(")")).trim();
  if (!SYSTEM_FOLDER.test(specifier)) return undefined;
  return { path: specifier, rule: `${source.slice(0, open).trim()}(/${specifier})` };
}

/**
 * The command before a Bash pattern's `:*` written after a space (`Bash(git push :*)`), or
 * undefined. Claude Code's legacy `prefix:*` is read as `prefix *` wherever it ends a pattern
 * (permission-rule.ts), so a `:*` meant as a word of its own (a refspec that deletes a branch)
 * silently widens the rule to every such command.
 */
function legacyPrefixAfterSpace(source: string): string | undefined {
  const specifier = source.slice(source.indexOf("(") + 1, source.lastIndexOf(")"));
  const prefix = /^([\s\S]*\S)\s+:\*\s*$/.exec(specifier)?.[1];
  return prefix?.trimStart();
}

/** The subagent tools, whose input names the agent it starts in `subagent_type`. */
const SUBAGENT_TOOLS: ReadonlySet<string> = new Set(["Agent", "Task", "task"]);

/**
 * The `where` a subagent tool's specifier (`Task(Explore)`, Claude Code's way to name a subagent in
 * its permission rules) is written as here: a condition on the call's `subagent_type`.
 */
function subagentCondition(tool: string, source: string): string | undefined {
  if (!SUBAGENT_TOOLS.has(tool)) return undefined;
  const specifier = source.slice(source.indexOf("(") + 1, source.lastIndexOf(")")).trim();
  const value = specifier.includes("*") ? { glob: specifier } : specifier;
  return `"where": ${JSON.stringify({ "tool_input.subagent_type": value })} for the subagent it starts`;
}

/**
 * A path rule written as a Windows drive path (`Read(//C:/Users/dev/**)`, `Edit(C:\proj\**)`), with
 * its drive and the rule written as it matches: a Windows client's `C:\x` is read as `/c/x`
 * (permission-rule.ts posixPath), whose segments never hold a `:` or a `\`, so the pattern as
 * written names no path, where `//c/x` does. A `\(` or `\)` stays an escaped parenthesis.
 */
function posixFormOfDrivePath(source: string): { drive: string; rule: string } | undefined {
  const parts = /^\s*([^(]+)\(\s*\/*([A-Za-z]):((?:[\\/][\s\S]*)?)\)\s*$/.exec(source);
  if (parts === null) return undefined;
  const letter = parts[2] as string;
  const path = (parts[3] as string).replace(/(?:\/|\\(?![()]))+/g, "/");
  return { drive: `${letter}:`, rule: `${parts[1]}(//${letter.toLowerCase()}${path})` };
}

/** A team no token authenticates as: the rule can never apply (a typo, or a team left out of auth). */
function lintTeams(
  rule: CompiledRule,
  teams: ReadonlySet<string>,
  warn: (path: string, message: string) => void,
): void {
  for (const [i, team] of (rule.document.teams ?? []).entries()) {
    if (teams.has(team)) continue;
    warn(
      `${rule.path}.teams[${i}]`,
      `no caller is team "${team}" (${teams.size === 0 ? "auth lists no tokens, so there are no teams" : `the teams are ${listTeams(teams)}`}), so it never applies for one`,
    );
  }
}

/**
 * deepagents' own names for the tools its v2 hooks send under Claude Code's (clients.md §5.4:
 * `hooks/tools.py`); `glob`, `grep` and `ls` differ from theirs in case only, which
 * lintMatcherCase names. No client sends these on a tool event, only on the legacy route.
 */
const DEEPAGENTS_NATIVE_TOOLS: ReadonlyMap<string, string> = new Map([
  ["execute", "Bash"],
  ["write_file", "Write"],
  ["edit_file", "Edit"],
  ["read_file", "Read"],
]);

const nativeToolMessage = (name: string, sent: string) =>
  `"${name}" is deepagents' own name for ${sent}, which its hooks send as "${sent}" on tool events (only its legacy tool.use carries "${name}"), so no client sends it here: write ${sent}`;

/**
 * A matcher of only `|` and spaces (`"|"`, a list whose names were all deleted): split at its
 * `|`, it has no part, so it matches no value, where `""` and `"*"` match every one.
 */
function lintMatcherNamesNothing(rule: CompiledRule, warn: (path: string, message: string) => void): void {
  const source = rule.document.matcher;
  if (source === undefined || exactMatcherNames(source)?.size !== 0) return;
  warn(
    `${rule.path}.matcher`,
    `${JSON.stringify(source)} names nothing between its "|", so it matches no value and this rule never applies where a matcher is read; leave the matcher out to match every value, or name what it is for`,
  );
}

/**
 * A matcher's exact name in the wrong case (`bash`), as lintIfTargets says of an `if`'s tool; or
 * a matcher read whole with spaces at a part's edge (`mcp__(a|b)__.* | Bash`), which no tool has.
 */
function lintMatcherCase(rule: CompiledRule, warn: (path: string, message: string) => void): void {
  const source = rule.document.matcher;
  // Only where the matcher reads a tool name: on UserPromptExpansion "task" is a command's name.
  if (source === undefined || !rule.matcher || rule.events === "*") return;
  if (!rule.events.every((event) => TOOL_EVENTS.has(event))) return;
  if (matcherKeepsEdgeSpaces(source)) {
    warn(
      `${rule.path}.matcher`,
      `"${source}" is read as one regular expression, spaces included (only a matcher split at its "|" has its parts trimmed), and no tool name has a space: remove the spaces around "|" and at its ends, or it matches no tool there`,
    );
    return;
  }
  for (const spaced of source.split("|")) {
    const part = spaced.trim();
    const known = miscasedTool(part);
    const sent = DEEPAGENTS_NATIVE_TOOLS.get(part);
    if (known !== undefined && !rule.matcher(known))
      warn(`${rule.path}.matcher`, `"${part}" matches no tool "${known}": tool names are case-sensitive`);
    else if (sent !== undefined && !rule.matcher(sent))
      warn(`${rule.path}.matcher`, nativeToolMessage(part, sent));
  }
}

/**
 * A tool event's matcher written as another syntax a first policy borrows: a permission rule
 * (`Bash(rm *)`, which is the `if`'s), or tool names separated by commas or spaces (`Write,Edit`).
 * Each is read as one regular expression, which matches no tool it names, so the rule never
 * applies there; said with what to write.
 */
function lintMatcherNamesNoTool(rule: CompiledRule, warn: (path: string, message: string) => void): void {
  const source = rule.document.matcher;
  const matcher = rule.matcher;
  if (source === undefined || !matcher || rule.events === "*") return;
  if (!rule.events.every((event) => TOOL_EVENTS.has(event))) return;
  const permission = /^\s*([A-Za-z][A-Za-z0-9_-]*)\(.*\)\s*$/s.exec(source);
  const tool = permission?.[1];
  // Only a tool's own name before the parenthesis: `Web(Fetch|Search)` and
  // `mcp__github__(create_issue|delete_repo)` are regular expressions that match tools.
  if (tool !== undefined && KNOWN_BY_LOWER.get(tool.toLowerCase()) === tool && !matcher(tool)) {
    warn(
      `${rule.path}.matcher`,
      `"${source}" is a permission rule, which a matcher does not read: a matcher is a tool name or a regular expression of them, and this one matches no tool "${tool}"; write "matcher": "${tool}" and "if": ${JSON.stringify(source.trim())}`,
    );
    return;
  }
  const names = source.split(/[\s,]+/).filter((name) => name !== "");
  const toolName = (name: string) => KNOWN_BY_LOWER.has(name.toLowerCase()) || name.startsWith("mcp__");
  if (source.includes("|") || names.length < 2 || !names.every(toolName) || names.some(matcher)) return;
  warn(
    `${rule.path}.matcher`,
    `"${source}" is read as one regular expression, commas and spaces included, so it matches none of the tools it names; separate them with "|": write "${names.join("|")}"`,
  );
}

/**
 * Matcher values deepcode spells its own way for what Claude Code names (clients.md §5.3): the
 * event, its field, Claude Code's value and deepcode's. deepcode sends InstructionsLoaded for the
 * memory files it reads as a session starts with `load_reason: "startup"` (its src/headless.ts and
 * src/tui/useChat.ts), where Claude Code says `session_start`.
 */
const DEEPCODE_VALUES: readonly (readonly [string, string, string, string])[] = [
  ["Notification", "notification_type", "permission_prompt", "permission"],
  ["SessionEnd", "reason", "prompt_input_exit", "exit"],
  ["InstructionsLoaded", "load_reason", "session_start", "startup"],
];

/** A matcher that takes Claude Code's value and not deepcode's, which never matches deepcode's event. */
function lintMatcherClientValues(rule: CompiledRule, warn: (path: string, message: string) => void): void {
  const matcher = rule.matcher;
  if (matcher === undefined || rule.events === "*") return;
  for (const [event, field, claudeCode, deepcode] of DEEPCODE_VALUES) {
    if (!rule.events.includes(event) || !matcher(claudeCode) || matcher(deepcode)) continue;
    warn(
      `${rule.path}.matcher`,
      `matches Claude Code's "${claudeCode}" but not deepcode's "${deepcode}", its ${field} for the same thing: write "${rule.document.matcher}|${deepcode}"`,
    );
  }
}

/**
 * What a `where` path reads on an event, from the fields events.ts checks every body against
 * before any rule runs: a declared field's shape, `unknown` where the event does not declare it
 * (an unknown event, an undeclared key), or `never` where the path goes into a field that cannot
 * hold it (`parent`'s shape): a string, a number or a boolean has no fields, and an array has only
 * its indices and `length`. A tool's input (`tool_input`, legacy `tool_args`) is left `unknown`,
 * its fields depending on the tool, unless the rule reaches one tool whose input TOOL_INPUT_FIELDS
 * knows: then its declared fields have their types (a field it does not declare is left to
 * lintToolInputFields). The input itself is an object wherever it comes: a string written for it
 * (`"tool_input": "rm -rf /"`) never holds on a call that carries it, which messages say so, since
 * on a PreToolUse without it a deny-style rule's condition on it holds (evaluate.ts `inputMissing`).
 */
type PathShape =
  | { readonly kind: "known"; readonly shape: FieldShape }
  | { readonly kind: "unknown" }
  | { readonly kind: "never"; readonly parent: string; readonly shape: FieldShape };

const TOOL_INPUT_KEYS: ReadonlySet<string> = new Set(["tool_input", "tool_args"]);

const STRING_SHAPE: FieldShape = { types: ["string"] };
const NUMBER_SHAPE: FieldShape = { types: ["number"] };
const ARRAY_INDEX = /^(?:0|[1-9][0-9]*)$/;
const BOOLEAN_SHAPE: FieldShape = { types: ["boolean"] };

/**
 * The fields of a tool's input where a source lists them all: Claude Code's PreToolUse input for
 * Bash, Write and Edit (clients.md §5.2, from Claude Code's hooks reference, which types them).
 * deepcode and deepagents v2 send these tools under the same names (clients.md §5.3, §5.4);
 * deepcode's PermissionRequest describes a call by a part of this input (evaluate.ts
 * `describedInput`). deepagents' own names (`execute`, `write_file`) come only on its legacy
 * events, where a matcher is not read, so no rule names one tool there. Other tools' inputs are
 * not listed by any source here, so they are not typed.
 */
const TOOL_INPUT_FIELDS: ReadonlyMap<string, Readonly<Record<string, FieldShape>>> = new Map([
  [
    "Bash",
    {
      command: STRING_SHAPE,
      description: STRING_SHAPE,
      timeout: NUMBER_SHAPE,
      run_in_background: BOOLEAN_SHAPE,
    },
  ],
  ["Write", { file_path: STRING_SHAPE, content: STRING_SHAPE }],
  [
    "Edit",
    {
      file_path: STRING_SHAPE,
      old_string: STRING_SHAPE,
      new_string: STRING_SHAPE,
      replace_all: BOOLEAN_SHAPE,
    },
  ],
]);

/** The fields of TOOL_INPUT_FIELDS a tool's input cannot do without (Claude Code's tool schemas). */
const REQUIRED_INPUT_FIELDS: ReadonlyMap<string, readonly string[]> = new Map([
  ["Bash", ["command"]],
  ["Write", ["file_path", "content"]],
  ["Edit", ["file_path", "old_string", "new_string"]],
]);

/**
 * A decide rule's `updatedInput` without a field the one tool it reaches needs: the client
 * replaces the whole input with it (clients.md §6.1), so a rewrite written as a change to the
 * call (the path alone, read as a merge) runs each call without the rest.
 */
function lintRewriteFields(rule: CompiledRule, warn: (path: string, message: string) => void): void {
  const action = rule.action;
  if (action.kind !== "decide" || action.decision !== "allow" || action.updatedInput === undefined) return;
  // Where no answer carries it, the rule's other warning says so. `"on": "*"` reaches PreToolUse.
  if (rule.events !== "*" && !rule.events.some((event) => PERMISSION_EVENTS.has(event))) return;
  const tool = inputTool(rule);
  const required = tool === undefined ? undefined : REQUIRED_INPUT_FIELDS.get(tool);
  if (tool === undefined || required === undefined) return;
  const given = Object.keys(action.updatedInput);
  for (const field of required) {
    if (given.includes(field)) continue;
    const meant = given.find((key) => !required.includes(key) && abbreviated(key, [field]) === field);
    warn(
      `${rule.path}.updatedInput`,
      `has no "${field}"${meant ? ` (is "${meant}" meant?)` : ""}, which ${tool}'s input needs: the rewrite replaces the whole input (nothing of the call as it came is kept), so every call it applies to reaches the tool without it; give the whole input`,
    );
  }
}

/**
 * The one tool a rule reaches, by its `if` or its matcher's exact names, when TOOL_INPUT_FIELDS
 * knows its input; undefined for several tools, a regular expression or an MCP tool.
 */
function inputTool(rule: CompiledRule): string | undefined {
  const tools = toolsReached(rule);
  const tool = tools?.length === 1 ? tools[0] : undefined;
  return tool !== undefined && TOOL_INPUT_FIELDS.has(tool) ? tool : undefined;
}

/** A `where` path as messages name it: a tool's input field with its tool (`Bash's tool_input.timeout`). */
function fieldName(rule: CompiledRule, path: string): string {
  const tool = path.startsWith("tool_input.") ? inputTool(rule) : undefined;
  return tool === undefined ? path : `${tool}'s ${path}`;
}

/** The one name `short` abbreviates: its letters in order, from the first (`cmd`, `desc`). */
function abbreviated(short: string, names: readonly string[]): string | undefined {
  const letters = [...short.toLowerCase()];
  const found = names.filter((name) => {
    if (name[0] !== letters[0]) return false;
    let at = 0;
    for (const letter of letters) {
      at = name.indexOf(letter, at) + 1;
      if (at === 0) return false;
    }
    return true;
  });
  return found.length === 1 ? found[0] : undefined;
}

/**
 * A `where` on a field of a tool's input that the one tool the rule reaches never sends
 * (`tool_input.cmd` on a Bash rule), with the field it likely means.
 */
function lintToolInputFields(rule: CompiledRule, warn: (path: string, message: string) => void): void {
  if (rule.events === "*" || !rule.events.some((event) => TOOL_EVENTS.has(event))) return;
  const tool = inputTool(rule);
  const fields = tool === undefined ? undefined : TOOL_INPUT_FIELDS.get(tool);
  if (fields === undefined) return;
  const where = rule.document.where ?? {};
  for (const [key, condition] of Object.entries(where)) {
    const [first, field, ...rest] = key.split(".");
    if (first !== "tool_input" || field === undefined || Object.hasOwn(fields, field)) continue;
    const holds = holdsOnAbsent(key, condition);
    if (holds === undefined) continue;
    const names = Object.keys(fields);
    // Not a field the where tests already: renamed to it, the where would hold that key twice.
    const untested = names.filter((name) => !Object.hasOwn(where, ["tool_input", name, ...rest].join(".")));
    const meant = closestName(field, untested) ?? abbreviated(field, untested);
    const write =
      meant === undefined
        ? ""
        : `: did you mean ${JSON.stringify(["tool_input", meant, ...rest].join("."))}?`;
    warn(
      wherePath(rule, key),
      `${tool}'s tool_input carries no "${field}" (its fields are ${names.join(", ")}), so this condition ${holds ? "holds on every call that carries its input: it tests nothing" : "never holds on a call that carries its input"}${write}`,
    );
  }
}

function shapeAt(event: string, segments: readonly string[], tool?: string): PathShape {
  let shape = eventShape(event);
  const input = tool === undefined || !TOOL_EVENTS.has(event) ? undefined : TOOL_INPUT_FIELDS.get(tool);
  const [first, field] = segments;
  if (input !== undefined && first === "tool_input" && field !== undefined && Object.hasOwn(input, field))
    shape = { types: ["object"], fields: { tool_input: { types: ["object"], fields: input } } };
  else if (shape === undefined || (TOOL_INPUT_KEYS.has(first ?? "") && field !== undefined))
    return { kind: "unknown" };
  for (const [i, segment] of segments.entries()) {
    const next: FieldShape[] = [];
    let open = false;
    if (shape.types.includes("object")) {
      if (shape.fields !== undefined && Object.hasOwn(shape.fields, segment)) {
        const field = shape.fields[segment];
        if (field) next.push(field);
      } else open = true;
    }
    if (shape.types.includes("array")) {
      if (segment === "length") next.push(NUMBER_SHAPE);
      else if (ARRAY_INDEX.test(segment)) {
        if (shape.item) next.push(shape.item);
        else open = true;
      }
    }
    if (open) return { kind: "unknown" };
    const only = next[0];
    if (only === undefined) return { kind: "never", parent: segments.slice(0, i).join("."), shape };
    if (next.length > 1) return { kind: "unknown" };
    shape = only;
  }
  return { kind: "known", shape };
}

function jsonType(value: unknown): JsonType | undefined {
  if (value === null) return undefined;
  if (Array.isArray(value)) return "array";
  const type = typeof value;
  return type === "string" || type === "number" || type === "boolean" || type === "object" ? type : undefined;
}

const aType = (type: string) => (/^[aeiou]/.test(type) ? `an ${type}` : `a ${type}`);
const typesText = (types: readonly JsonType[]) => types.map(aType).join(" or ");

/**
 * The types a `where` path has on the rule's events where every one of them declares it, with
 * the events, or undefined: on `"on": "*"`, or where one event does not say.
 */
function declaredTypes(rule: CompiledRule, segments: readonly string[]): readonly JsonType[] | undefined {
  if (rule.events === "*" || rule.events.length === 0) return undefined;
  const types = new Set<JsonType>();
  const tool = inputTool(rule);
  for (const event of rule.events) {
    const at = shapeAt(event, segments, tool);
    if (at.kind !== "known") return undefined;
    for (const type of at.shape.types) types.add(type);
  }
  return [...types];
}

/** The value a string literal of another type was likely meant as (`"false"`, `"5"`). */
function meantValue(value: unknown, types: readonly JsonType[]): string {
  if (typeof value !== "string") return "";
  try {
    const parsed: unknown = JSON.parse(value);
    const type = jsonType(parsed);
    return type !== undefined && type !== "object" && type !== "array" && types.includes(type)
      ? `: write ${JSON.stringify(parsed)}`
      : "";
  } catch {
    return "";
  }
}

/**
 * The field of a tool's input a string compared with the whole input was meant for, where the
 * rule reaches one tool whose input has one such field (Bash's command, Write's and Edit's
 * file_path): `"tool_input": "rm -rf /"` compares an object with a string.
 */
const INPUT_STRING_FIELD: ReadonlyMap<string, string> = new Map([
  ["Bash", "command"],
  ["Write", "file_path"],
  ["Edit", "file_path"],
]);

/** What to write for a string compared with a whole tool input (`"tool_input": "ls"`), or "". */
function meantInputField(rule: CompiledRule, key: string, within: readonly string[], value: unknown): string {
  if (!TOOL_INPUT_KEYS.has(key) || within.length > 0 || typeof value !== "string") return "";
  const tool = inputTool(rule);
  const field = tool === undefined ? undefined : INPUT_STRING_FIELD.get(tool);
  return field === undefined
    ? `: compare a field of the input with it (${key}.command, ${key}.file_path)`
    : `: write ${JSON.stringify(`${key}.${field}`)} as its key`;
}

/** A `where` condition under its `not`s, and how many there are. */
function underNots(condition: unknown): { readonly inner: unknown; readonly nots: number } {
  let inner = condition;
  let nots = 0;
  while (inner !== null && typeof inner === "object" && (inner as WhereOperator).not !== undefined) {
    inner = (inner as WhereOperator).not;
    nots += 1;
  }
  return { inner, nots };
}

/** The path a warning names for the condition on `key` in a rule's `where`, `nots` levels of `not` down. */
function wherePath(rule: CompiledRule, key: string, nots = 0): string {
  return `${rule.path}.where${jsonPath([key]).slice(1)}${".not".repeat(nots)}`;
}

/**
 * What a condition that never holds makes of the whole under `nots` negations: an odd number holds
 * always. On a tool's input (`onInput`), only on a call that carries it: where a PreToolUse comes
 * without it, a deny-style rule's condition on it holds and an allow's never does (evaluate.ts).
 */
const neverUnder = (nots: number, subject: string, onInput = false) =>
  nots % 2 === 0
    ? `so this never holds${onInput ? " on a call that carries its input" : ""}`
    : `so ${subject} never holds and its "not" holds on every ${onInput ? "call that carries its input" : "event"}: this condition tests nothing`;

/** The parts of an `equals` value (itself, and the fields and items it holds) of a type their path never has. */
function mistyped(
  rule: CompiledRule,
  segments: readonly string[],
  value: unknown,
  within: readonly string[] = [],
): { readonly within: readonly string[]; readonly value: unknown; readonly types: readonly JsonType[] }[] {
  const types = declaredTypes(rule, [...segments, ...within]);
  const type = jsonType(value);
  if (types !== undefined && type !== undefined && !types.includes(type)) return [{ within, value, types }];
  // A field named with a dot is no path: its types are not looked up.
  if (value === null || typeof value !== "object") return [];
  return Object.entries(value)
    .filter(([field]) => !field.includes("."))
    .flatMap(([field, item]) => mistyped(rule, segments, item, [...within, field]));
}

/**
 * An equality (a literal, `equals`, a field of an `equals` object, or a member of `in`), also
 * under a `not`, with a value of a type the field never has on the rule's events: clients'
 * bodies are checked against these types before rules run.
 */
function lintWhereTypes(rule: CompiledRule, warn: (path: string, message: string) => void): void {
  for (const [key, condition] of Object.entries(rule.document.where ?? {})) {
    const { inner: written, nots } = underNots(condition);
    const segments = key.split(".");
    const at = wherePath(rule, key, nots);
    const op = (written !== null && typeof written === "object" ? written : {}) as WhereOperator;
    if (written === null || typeof written !== "object" || "equals" in op) {
      const value = "equals" in op ? op.equals : written;
      for (const found of mistyped(rule, segments, value)) {
        const path = found.within.length === 0 ? at : `${at}.equals${jsonPath(found.within).slice(1)}`;
        warn(
          path,
          `${JSON.stringify(found.value)} is ${aType(jsonType(found.value) ?? "")}; clients send ${fieldName(rule, [...segments, ...found.within].join("."))} as ${typesText(found.types)}, ${neverUnder(nots, JSON.stringify(written), segments[0] === "tool_input")}${meantValue(found.value, found.types) || meantInputField(rule, key, found.within, found.value)}`,
        );
      }
    } else if (Array.isArray(op.in)) {
      const types = declaredTypes(rule, segments);
      if (types === undefined) continue;
      const wrong = (value: unknown) => {
        const type = jsonType(value);
        return type !== undefined && !types.includes(type);
      };
      for (const value of op.in.filter(wrong))
        warn(
          `${at}.in`,
          `${JSON.stringify(value)} is ${aType(jsonType(value) ?? "")}; clients send ${fieldName(rule, key)} as ${typesText(types)}, so it is never the value${meantValue(value, types)}`,
        );
    }
  }
}

/**
 * A `tool_name` compared with a known tool's name in the wrong case (`"bash"`), as lintMatcherCase
 * says of a matcher's: tool names are case-sensitive, and the where's equality is exact. A literal
 * or `equals`, also under a `not`, and each member of an `in`. Only on Claude Code's tool events,
 * as there: deepagents' legacy ones (which `"on": "*"` reaches) send its own names (`ls`, `grep`).
 */
function lintWhereToolNameCase(rule: CompiledRule, warn: (path: string, message: string) => void): void {
  const condition = rule.document.where?.tool_name;
  if (condition === undefined || rule.events === "*") return;
  if (!rule.events.every((event) => TOOL_EVENTS.has(event))) return;
  const { inner: written, nots } = underNots(condition);
  const at = wherePath(rule, "tool_name", nots);
  const miscased = (value: unknown) => (typeof value === "string" ? miscasedTool(value) : undefined);
  const said = (value: string, known: string) =>
    `"${value}" matches no tool "${known}": tool names are case-sensitive`;
  const op = (written !== null && typeof written === "object" ? written : {}) as WhereOperator;
  if (written === null || typeof written !== "object" || "equals" in op) {
    const value = "equals" in op ? op.equals : written;
    const known = miscased(value);
    if (known !== undefined)
      warn(
        "equals" in op ? `${at}.equals` : at,
        `${said(value as string, known)}, ${neverUnder(nots, JSON.stringify(written))}`,
      );
  } else if (Array.isArray(op.in)) {
    for (const value of op.in) {
      const known = miscased(value);
      if (known !== undefined) warn(`${at}.in`, `${said(value as string, known)}, so it is never the value`);
    }
  }
}

/** A string operator (`regex`, `glob`, `startsWith`; `contains`, which reads arrays too) on a field that is never one. */
function lintWhereStringOps(rule: CompiledRule, warn: (path: string, message: string) => void): void {
  for (const [key, condition] of Object.entries(rule.document.where ?? {})) {
    const { inner: written, nots } = underNots(condition);
    if (written === null || typeof written !== "object") continue;
    const op = written as WhereOperator;
    const name =
      op.regex !== undefined
        ? "regex"
        : op.glob !== undefined
          ? "glob"
          : op.startsWith !== undefined
            ? "startsWith"
            : "contains" in op
              ? "contains"
              : undefined;
    if (name === undefined) continue;
    const types = declaredTypes(rule, key.split("."));
    const reads: readonly JsonType[] = name === "contains" ? ["string", "array"] : ["string"];
    if (types === undefined || types.some((type) => reads.includes(type))) continue;
    warn(
      `${wherePath(rule, key, nots)}.${name}`,
      `"${name}" holds on ${typesText(reads)} only, and clients send ${fieldName(rule, key)} as ${typesText(types)}, ${neverUnder(nots, `"${name}"`, key.startsWith("tool_input"))}: ${TOOL_INPUT_KEYS.has(key) ? `write it on a field of the input (${key}.command, ${key}.file_path)` : "compare it with a value"}`,
    );
  }
}

/**
 * A `where` glob with a `\` before a character that needs no escape (`C:\Users\**`): a where glob
 * is read as on Linux (where.ts), where `\` escapes and separates nothing, so that pattern is
 * `C:Users*` and a Windows client's `C:\Users\dev\x` never matches it: a deny so written let
 * such paths through. A `\\` (a backslash itself) and the escapes a glob needs are left alone.
 */
function lintWhereGlobSeparators(rule: CompiledRule, warn: (path: string, message: string) => void): void {
  for (const [key, condition] of Object.entries(rule.document.where ?? {})) {
    const { inner, nots } = underNots(condition);
    const glob = operatorOf(inner)?.glob;
    const plain = glob === undefined ? undefined : needlessEscape(glob);
    if (plain === undefined) continue;
    warn(
      `${wherePath(rule, key, nots)}.glob`,
      // Said for each thing it may have meant: a Windows path, a backslash (in a command too, which
      // no "if" path rule reads), or a "." (a regex's escape, which a glob needs not).
      `${JSON.stringify(glob)} has "\\${plain}", which a glob reads as "${plain}": "\\" escapes the next character in a glob and is no separator (a where glob reads paths as on Linux), so a Windows client's path as sent (C:\\x) is not split at its "\\": for such a path, write an "if" path rule, which reads that path as /c/x (Read(//c/Users/**)), or a "regex"; for a "\\" itself, write two ("\\\\\\\\" in JSON)${
        plain === "." ? `; for a "." itself, drop the "\\" (a glob's "." is one)` : ""
      }`,
    );
  }
}

/**
 * A `where` key of a path clients send absolute: a file's (clients.md §5.2), a folder, a transcript.
 * Not deepagents' legacy `tool_args`, which hold a path as the agent wrote it (`src/foo.py`, §5.5).
 */
const ABSOLUTE_PATH_KEY = /^(?!tool_args\.).*(?:^|\.|_)(?:file_path|notebook_path|cwd|transcript_path)$/;
/** A tool call's path, which an `if` path rule reads too (as its client's path, a Windows one included). */
const TOOL_PATH_KEY = /^tool_input\.(?:file_path|notebook_path)$/;

/**
 * A `where` glob with no `/` (`*.env`) on a path clients send absolute: a glob's `*` stops at a
 * `/` (where.ts), so it matches a bare name only and no macOS or Linux path; `**\/` before it is
 * meant. A Windows path has no `/`, so the glob may match one: said, with the `if` rule for it. One
 * with a `**` or a `\` is left alone (lintWhereGlobSeparators says what a `\` does), and so is a
 * `not` of one.
 */
function lintWhereGlobFolders(rule: CompiledRule, warn: (path: string, message: string) => void): void {
  for (const [key, condition] of Object.entries(rule.document.where ?? {})) {
    const glob =
      condition !== null && typeof condition === "object" ? (condition as WhereOperator).glob : undefined;
    if (glob === undefined || glob === "" || /[/\\]|\*\*/.test(glob) || !ABSOLUTE_PATH_KEY.test(key))
      continue;
    warn(
      `${wherePath(rule, key)}.glob`,
      `${JSON.stringify(glob)} has no "/", so it matches a bare name only (a glob's "*" stops at a "/"), and clients send ${key} as an absolute path: it matches none on macOS or Linux; write ${JSON.stringify(`**/${glob}`)} to match it in any folder${windowsPathRule(key)}`,
    );
  }
}

/**
 * The rule that matches a Windows client's path, which has no "/", where a glob suggested under
 * any folder does not. An `if` applies to tool events alone, and reads no folder or transcript:
 * only a tool call's path has one to write.
 */
function windowsPathRule(key: string): string {
  return TOOL_PATH_KEY.test(key)
    ? ' (a Windows path, which has no "/", is matched by an "if" path rule, such as Read(**/x))'
    : "";
}

/**
 * A `where` glob with a `/` written from the project's folder (`src/*.ts`, `./src/*.ts`) or the
 * home's (`~/.ssh/*`, `$HOME/.ssh/*`: a glob expands no `~` nor variable) on a path clients send
 * absolute: a glob matches the whole path (where.ts), so it matches none; `**\/` before it is
 * meant. On an allow that lets through the same names under every folder, a dependency's too:
 * said, with how to name the project's alone. One that may match an absolute path is left alone
 * (`relativeGlob`), and so is a `not` of one, as lintWhereGlobFolders leaves it.
 */
function lintWhereGlobRelative(rule: CompiledRule, warn: (path: string, message: string) => void): void {
  for (const [key, condition] of Object.entries(rule.document.where ?? {})) {
    const glob = operatorOf(condition)?.glob;
    if (glob === undefined || !ABSOLUTE_PATH_KEY.test(key) || !relativeGlob(glob)) continue;
    // A path is matched without its trailing "/" (where.ts), so a glob with one matches none.
    const homeName = HOME_FOLDER.exec(glob)?.[1];
    const named = glob
      .replace(HOME_FOLDER, "")
      .replace(/^(?:\.\/)+/, "")
      .replace(/(?<=.)\/+$/, "");
    const home =
      homeName === undefined
        ? ""
        : ` (a glob reads ${JSON.stringify(homeName)} as itself, not as the home folder)`;
    const allows = widensRule(rule, 0)
      ? `; on an allow, that lets through ${JSON.stringify(named)} under every folder (a dependency's too): for the project's own alone, write its absolute folder before it`
      : "";
    // A ".." names a folder outside the project, which no folder under any other is, and "~/"
    // the home alone.
    const write =
      named === "" || DOT_SEGMENT.test(named)
        ? "write the absolute path it names"
        : `write ${JSON.stringify(`**/${named}`)} to match it under any folder${windowsPathRule(key)}${allows}`;
    warn(
      `${wherePath(rule, key)}.glob`,
      `${JSON.stringify(glob)} starts with neither "/" nor "**/"${home}, and clients send ${key} as an absolute path, which a glob matches whole: it matches no path a client sends; ${write}`,
    );
  }
}

/**
 * The home folder as a shell names it before a `/`, which a glob reads as the text written: its
 * `{}` hold no `,`, so no brace list is made of them.
 */
const HOME_FOLDER = /^(~|\$HOME|\$\{HOME\})\//;

/**
 * Whether a glob with a `/` matches no absolute path: one from the home's folder by its name
 * (`HOME_FOLDER`), or one that starts with neither a `/` nor a `**`, nor with a name that may hold
 * one (a brace list or an extended glob: `{/etc,/srv}/**`), and is not a Windows drive's (`C:/x`).
 * One with a `\` is lintWhereGlobSeparators'.
 */
function relativeGlob(glob: string): boolean {
  if (glob.includes("\\")) return false;
  if (HOME_FOLDER.test(glob)) return true;
  const slash = glob.indexOf("/");
  if (slash < 1 || glob.startsWith("**")) return false;
  return !/[{(]|^[A-Za-z]:$/.test(glob.slice(0, slash));
}

/** Each escape of a glob, in order; group 1 holds the character of one that needs no escape. */
const GLOB_ESCAPE = /\\(?:([A-Za-z0-9.])|[\s\S])/g;

/** The first character of `glob` escaped for nothing (`\U`, `\.`), read past `\\` and `\*`. */
function needlessEscape(glob: string): string | undefined {
  for (const found of glob.matchAll(GLOB_ESCAPE)) if (found[1] !== undefined) return found[1];
  return undefined;
}

/**
 * A path into a field that cannot hold it on any of the rule's events: a string, number or
 * boolean has no fields (where.ts reads no string's length), a list only its indices and `length`.
 */
function lintWhereDescent(rule: CompiledRule, warn: (path: string, message: string) => void): void {
  if (rule.events === "*" || rule.events.length === 0) return;
  for (const [key, condition] of Object.entries(rule.document.where ?? {})) {
    if (!key.includes(".")) continue;
    // The field is never there, so the condition reads an absent value: one that holds on it
    // (exists: false) is left alone, unless a `not` makes it so (`not: {equals: 0}`).
    const nots = underNots(condition).nots;
    const holds = holdsOnAbsent(key, condition);
    if (holds === undefined || (holds && nots === 0)) continue;
    const segments = key.split(".");
    const tool = inputTool(rule);
    const found = rule.events.map((event) => shapeAt(event, segments, tool));
    const first = found[0];
    if (first?.kind !== "never" || !found.every((f) => f.kind === "never" && f.parent === first.parent))
      continue;
    const types = [...new Set(found.flatMap((f) => (f.kind === "never" ? f.shape.types : [])))];
    const onInput = segments[0] === "tool_input";
    const has = types.includes("array")
      ? "which has only its indices and length"
      : "which has no fields (where reads the length of a list, not of a string)";
    warn(
      wherePath(rule, key),
      `clients send ${fieldName(rule, first.parent)} as ${typesText(types)}, ${has}, so "${key}" is never there and this condition ${holds ? `holds on every ${onInput ? "call that carries its input" : "event"}: it tests nothing` : `never holds${onInput ? " on a call that carries its input" : ""}`}`,
    );
  }
}

/** Whether a `where` condition holds where its path is absent, as where.ts reads it. */
function holdsOnAbsent(key: string, condition: unknown): boolean | undefined {
  const compiled = compileWhere({ [key]: condition });
  return compiled.ok ? compiled.value[0]?.({}) : undefined;
}

/** Claude Code's event names, whose fields EVENT_ONLY_FIELDS knows. */
const CLAUDE_CODE_EVENT_SET: ReadonlySet<string> = new Set(CLAUDE_CODE_EVENTS);

/**
 * Fields only some events carry (events.ts), each with those events: a `where` that needs one
 * never holds on another event, so the rule never applies there. Claude Code's names (which
 * deepcode and deepagents v2 share) are judged by this table, deepagents' legacy events by the
 * few keys their bodies carry (events.ts `legacyEventKeys`); an unknown event's fields are not known.
 */
const EVENT_ONLY_FIELDS: Readonly<Record<string, ReadonlySet<string>>> = {
  tool_name: TOOL_EVENTS,
  tool_input: TOOL_EVENTS,
  tool_use_id: TOOL_EVENTS,
  stop_hook_active: STOP_EVENTS,
};

function lintWhereFields(rule: CompiledRule, warn: (path: string, message: string) => void): void {
  if (rule.events === "*") return;
  const events = rule.events;
  for (const [key, condition] of Object.entries(rule.document.where ?? {})) {
    const reach = reachWithout(condition);
    // One that holds where the field is absent but not where it is null (`null`, an `in` holding
    // null), or the other way, may hold there; `exists: false` without a `not` is left alone, as
    // a deliberate test.
    if (reach === undefined || (reach === "always" && underNots(condition).nots === 0)) continue;
    const field = key.split(".")[0] ?? key;
    const carriers = Object.hasOwn(EVENT_ONLY_FIELDS, field) ? EVENT_ONLY_FIELDS[field] : undefined;
    const lacks = (e: string) =>
      CLAUDE_CODE_EVENT_SET.has(e)
        ? carriers !== undefined && !carriers.has(e)
        : legacyEventKeys(e)?.includes(field) === false;
    const all = events.every(lacks);
    const at = wherePath(rule, key);
    if (reach === "always") {
      // A `not` of a condition that needs the field: it holds on every event without it, so only
      // where the rule has no other event does it test nothing.
      if (all)
        warn(
          at,
          `${events.join(" and ")} ${events.length > 1 ? "carry" : "carries"} no "${field}", so this condition (a "not" of one that needs it) holds on every event this rule applies to: it tests nothing`,
        );
      continue;
    }
    const outcome = (lacking: readonly string[]) =>
      all
        ? "; this rule can never apply"
        : ` and the rule never applies to ${lacking.length > 1 ? "them" : "it"}`;
    const without = events.filter((e) => CLAUDE_CODE_EVENT_SET.has(e) && lacks(e));
    if (carriers !== undefined && without.length > 0) {
      warn(
        at,
        `${without.join(" and ")} ${without.length > 1 ? "events carry" : "carries"} no "${field}" (${[...carriers].join(", ")} do), so this condition never holds there${outcome(without)}`,
      );
    }
    // deepagents' legacy events carry their own few keys (clients.md §5.5), none of Claude Code's
    // but the tool's name: its input is `tool_args`, its session `thread_id`.
    const legacy = new Map<string, string[]>();
    for (const e of events) {
      const keys = legacyEventKeys(e);
      if (keys === undefined || keys.includes(field)) continue;
      const same = keys.join(", ");
      legacy.set(same, [...(legacy.get(same) ?? []), e]);
    }
    for (const [keys, lacking] of legacy) {
      const meant = LEGACY_KEY_FOR[field];
      const write =
        meant !== undefined && keys.split(", ").includes(meant)
          ? `: write ${JSON.stringify(meant + key.slice(field.length))}`
          : "";
      warn(
        at,
        `${lacking.join(" and ")} ${lacking.length > 1 ? "carry" : "carries"} no "${field}" (a deepagents legacy body carries ${keys} at most${write}), so this condition never holds there${outcome(lacking)}`,
      );
    }
  }
}

/**
 * Fields clients send that events.ts leaves untyped (clients.md §5.2, §5.3: no source states their
 * type), by event: real fields, never a typo of a declared one.
 */
const UNTYPED_FIELDS: Readonly<Record<string, readonly string[]>> = {
  PostToolUse: ["tool_response", "tool_output"],
  UserPromptExpansion: ["command_args"],
  StopFailure: ["error_details"],
  InstructionsLoaded: ["globs"],
  ElicitationResult: ["content"],
};

/**
 * Claude Code's events whose own fields no source states (clients.md §5.2: CC-332's, "see docs"):
 * events.ts declares their common fields alone, so a field they lack there may be theirs, not
 * another event's (PreModelSwitch's `model`).
 */
const FIELDS_UNSTATED: ReadonlySet<string> = new Set([
  "DirectoryAdded",
  "PreModelSwitch",
  "PostModelSwitch",
  "PreSkillShellCommand",
]);

/**
 * The fields of a tool call's input that TOOL_INPUT_FIELDS lists or an `if` reads (permission-rule.ts:
 * the path fields, a Glob's `pattern`, WebFetch's `url`, WebSearch's `query`): a `where` on one at
 * an event's top level (`command`) is a path into `tool_input` written short.
 */
const INPUT_FIELD_NAMES: ReadonlySet<string> = new Set([
  ...[...TOOL_INPUT_FIELDS.values()].flatMap((fields) => Object.keys(fields)),
  ...["file_path", "notebook_path", "path", "pattern", "url", "query"],
]);

/** The top-level fields a Claude Code event carries: those events.ts declares and the untyped ones. */
function eventFields(event: string): ReadonlySet<string> {
  return new Set([
    "hook_event_name",
    ...Object.keys(eventShape(event)?.fields ?? {}),
    ...(UNTYPED_FIELDS[event] ?? []),
  ]);
}

/**
 * A `where` field none of the rule's events carries: a condition that needs it never holds, so the
 * rule never applies, with no other word from `check`. Said with the events that carry it when
 * another does (`model` is SessionStart's), never called a typo of a near name then (`mode`, on
 * Elicitation); else with the name meant when it is two edits from one they carry (`cwdd`,
 * `stop_hook_actve`). A field of no event and near none is left alone: a client may send fields
 * newer than events.ts knows, and an unknown event's fields are not known. A rule on a deepagents
 * legacy event, and a field EVENT_ONLY_FIELDS names, are left to `lintWhereFields`.
 */
function lintWhereFieldsNotCarried(rule: CompiledRule, warn: (path: string, message: string) => void): void {
  if (rule.events === "*" || !rule.events.every((e) => CLAUDE_CODE_EVENT_SET.has(e))) return;
  if (rule.events.some((e) => eventShape(e) === undefined)) return;
  const declared = new Set(rule.events.flatMap((e) => [...eventFields(e)]));
  const eventsCarry = `${rule.events.join(" and ")} ${rule.events.length > 1 ? "carry" : "carries"}`;
  for (const [key, condition] of Object.entries(rule.document.where ?? {})) {
    const field = key.split(".")[0] ?? key;
    if (declared.has(field) || Object.hasOwn(EVENT_ONLY_FIELDS, field)) continue;
    if (reachWithout(condition) !== "never") continue;
    // Before another event's field: on PreToolUse, `file_path` is the call's, not ConfigChange's.
    if (INPUT_FIELD_NAMES.has(field) && rule.events.every((e) => TOOL_EVENTS.has(e))) {
      warn(
        wherePath(rule, key),
        `${eventsCarry} no "${field}" at the top level, so this condition never holds and the rule never applies: a tool call's input is under tool_input; write ${JSON.stringify(`tool_input.${key}`)}`,
      );
      continue;
    }
    const carriers = rule.events.some((e) => FIELDS_UNSTATED.has(e))
      ? []
      : CLAUDE_CODE_EVENTS.filter((e) => eventFields(e).has(field));
    if (carriers.length > 0) {
      warn(
        wherePath(rule, key),
        `${eventsCarry} no "${field}" (${carriers.join(", ")} ${carriers.length > 1 ? "do" : "does"}), so this condition never holds and the rule never applies`,
      );
      continue;
    }
    // Two edits make a name of one or two letters into most short ones (`id` into `cwd`).
    const meant = field.length <= 2 ? undefined : closestName(field, declared);
    if (meant === undefined) continue;
    warn(
      wherePath(rule, key),
      `${eventsCarry} no "${field}", so this condition never holds and the rule never applies: did you mean ${JSON.stringify(meant + key.slice(field.length))}?`,
    );
  }
}

/** The key a deepagents legacy body carries for a Claude Code field. */
const LEGACY_KEY_FOR: Readonly<Record<string, string>> = { tool_input: "tool_args", session_id: "thread_id" };

/**
 * What a `where` condition makes of a field an event does not send, as where.ts reads it: it holds
 * there (`exists: false`, the `not` of a condition that needs the field), it never does (a value,
 * a pattern, the `not` of `exists: false`), or undefined when that depends on whether the field
 * is left out or sent as null (`null`, an `in` holding null) or the condition does not compile.
 */
function reachWithout(condition: unknown): "always" | "never" | undefined {
  const compiled = compileWhere({ field: condition });
  const test = compiled.ok ? compiled.value[0] : undefined;
  if (test === undefined) return undefined;
  const absent = test({});
  if (absent !== test({ field: null })) return undefined;
  return absent ? "always" : "never";
}

/** A matcher that lets through no tool the rule's `if` names (`matcher: "Bash"`, `if: "Read(./.env)"`). */
function lintMatcherAgainstIf(rule: CompiledRule, warn: (path: string, message: string) => void): void {
  const matcher = rule.matcher;
  if (!matcher || !rule.ifRules) return;
  const events = rule.events === "*" ? [...TOOL_EVENTS] : rule.events.filter((e) => TOOL_EVENTS.has(e));
  if (events.length === 0 || !events.every(eventReadsMatcher)) return;
  const tools = ifTools(rule.ifRules);
  if (tools === undefined || [...tools].some((tool) => matcher(tool))) return;
  warn(
    `${rule.path}.if`,
    `names only ${[...tools].join(", ")}, and the matcher "${rule.document.matcher}" lets none of them through; this rule can never apply`,
  );
}

/** The tools a permission rule can match, or undefined when they cannot be listed (MCP globs). */
function toolsOf(rule: PermissionRule): readonly string[] | undefined {
  const target = rule.target;
  switch (target.kind) {
    case "tool":
      return [target.name];
    case "bash":
      return ["Bash"];
    case "path":
      return [...target.tools];
    case "domain":
      return ["WebFetch"];
    case "text":
      return [target.tool];
    default:
      return undefined;
  }
}

/**
 * A rule after an enforcing `decide: deny` (or block) that has no condition but its `on` and
 * perhaps a matcher: that rule denies every event this one matches (with a matcher, every call
 * of the tools this one names, by its `if` or its matcher), and a deny outranks every other
 * decision, so this rule's decision never reaches the client (and its prompt or forward is never
 * run).
 */
function lintShadowedByDenyAll(
  rule: CompiledRule,
  denyAll: readonly CompiledRule[],
  warn: (path: string, message: string) => void,
): void {
  const kind = rule.action.kind;
  if (rule.mode !== "enforce" || rule.events === "*") return;
  if (kind !== "decide" && kind !== "prompt" && kind !== "forward") return;
  // A deny (or block) of its own is not outranked: its reason is joined to the other's and sent.
  if (rule.action.kind === "decide" && (rule.action.decision === "deny" || rule.action.decision === "block"))
    return;
  const events = rule.events;
  const tools = toolsReached(rule);
  const shadow = denyAll.find(
    (d) =>
      d.index < rule.index &&
      events.every((e) => {
        const denies = d.action.kind === "decide" ? honouredDecision(e, d.action.decision) : undefined;
        return (d.events === "*" || d.events.includes(e)) && (denies === "deny" || denies === "block");
      }) &&
      (d.matcher === undefined ||
        (events.every((e) => TOOL_EVENTS.has(e) && eventReadsMatcher(e)) &&
          tools !== undefined &&
          tools.length > 0 &&
          tools.every((tool) => d.matcher?.(tool) === true))),
  );
  if (!shadow) return;
  const what = kind === "decide" ? "decision can never apply" : `${kind} is never run`;
  const scope =
    shadow.matcher === undefined
      ? `every ${events.join(" and ")} event`
      : `every ${events.join(" and ")} call of ${tools?.join(", ")} (its matcher "${shadow.document.matcher}")`;
  warn(
    rule.path,
    `is shadowed by rule "${shadow.id}" (${shadow.path}), which denies ${scope} with no other condition; this rule's ${what}`,
  );
}

/**
 * The tools a rule can apply to, when they can be listed: those its `if` names that its matcher
 * lets through, or its matcher's exact names (`Bash`, `Write|Edit`); undefined for a rule that
 * applies to any tool or to ones no list names (a regular expression, an MCP glob).
 */
function toolsReached(rule: CompiledRule): readonly string[] | undefined {
  if (rule.ifRules) {
    const named = ifTools(rule.ifRules);
    return named && [...named].filter((tool) => rule.matcher === undefined || rule.matcher(tool));
  }
  const names = rule.matcher === undefined ? undefined : exactMatcherNames(rule.document.matcher);
  return names && [...names];
}

/** Every tool a rule's `if` patterns name, or undefined when one names none in particular. */
function ifTools(ifRules: readonly PermissionRule[]): ReadonlySet<string> | undefined {
  const tools = new Set<string>();
  for (const ifRule of ifRules) {
    const named = toolsOf(ifRule);
    if (named === undefined) return undefined;
    for (const tool of named) tools.add(tool);
  }
  return tools;
}

/** Enforcing `decide: deny` (or block) rules with no condition but their `on` and matcher. */
function unconditionalDenies(policy: Policy): CompiledRule[] {
  return policy.rules.filter(deniesUnconditionally);
}

/** An enforcing `decide: deny` (or block) with no condition but its `on` and perhaps a matcher. */
function deniesUnconditionally(rule: CompiledRule): boolean {
  const action = rule.action;
  return (
    rule.mode === "enforce" &&
    action.kind === "decide" &&
    (action.decision === "deny" || action.decision === "block") &&
    rule.ifRules === undefined &&
    rule.where.length === 0 &&
    rule.teams === undefined
  );
}

// ---------------------------------------------------------------------------------------------
// `where` conditions no event can satisfy together
// ---------------------------------------------------------------------------------------------

type Constraint = { readonly key: string } & (
  | { readonly kind: "equals"; readonly value: unknown }
  | { readonly kind: "exists"; readonly value: boolean }
  | { readonly kind: "in"; readonly values: readonly unknown[] }
  | {
      readonly kind: "string";
      readonly op: "regex" | "glob" | "startsWith";
      readonly arg: string;
      readonly test: (value: string) => boolean;
    }
);

/** The conditions a rule's `where` puts on each path, `equals` objects spread over their fields. */
function whereConstraints(where: Readonly<Record<string, unknown>>): Map<string, Constraint[]> {
  const byPath = new Map<string, Constraint[]>();
  const add = (path: string, c: Constraint) => {
    if (!byPath.has(path)) byPath.set(path, []);
    byPath.get(path)?.push(c);
  };
  const addEquals = (path: string, key: string, value: unknown) => {
    add(path, { kind: "equals", key, value });
    if (value !== null && typeof value === "object") {
      for (const [field, item] of Object.entries(value)) addEquals(`${path}.${field}`, key, item);
    }
  };
  for (const [key, condition] of Object.entries(where)) {
    if (condition === null || typeof condition !== "object") {
      addEquals(key, key, condition);
      continue;
    }
    const op = condition as WhereOperator;
    if ("equals" in op) addEquals(key, key, op.equals);
    else if (op.exists !== undefined) add(key, { kind: "exists", key, value: op.exists });
    else if (op.in !== undefined) add(key, { kind: "in", key, values: op.in });
    else if (op.startsWith !== undefined) {
      const prefix = op.startsWith;
      add(key, { kind: "string", key, op: "startsWith", arg: prefix, test: (v) => v.startsWith(prefix) });
    } else if (op.regex !== undefined) {
      const compiled = compileRegex(op.regex);
      if (compiled.ok) add(key, { kind: "string", key, op: "regex", arg: op.regex, test: compiled.value });
    } else if (op.glob !== undefined) {
      const compiled = compileWhereGlob(op.glob);
      if (compiled.ok) add(key, { kind: "string", key, op: "glob", arg: op.glob, test: compiled.value });
    }
  }
  return byPath;
}

/** Whether the condition needs a present, non-null value (`exists` treats null as absent). */
function needsValue(c: Constraint): boolean {
  switch (c.kind) {
    case "equals":
      return c.value !== null;
    case "exists":
      return c.value;
    case "in":
      return !c.values.includes(null);
    case "string":
      return true;
  }
}

function describeConstraint(c: Constraint): string {
  switch (c.kind) {
    case "equals":
      return `equal ${JSON.stringify(c.value)}`;
    case "exists":
      return c.value ? "exist" : "be absent (exists: false)";
    case "in":
      return `be one of ${JSON.stringify(c.values)}`;
    case "string":
      return c.op === "startsWith"
        ? `start with ${JSON.stringify(c.arg)}`
        : `match ${c.op} ${JSON.stringify(c.arg)}`;
  }
}

/** Whether two conditions on the same path cannot both hold. */
function contradiction(a: Constraint, b: Constraint): boolean {
  if (a.kind === "equals") {
    if (b.kind === "equals") return !deepEqual(a.value, b.value);
    if (b.kind === "in") return !b.values.some((v) => deepEqual(v, a.value));
    if (b.kind === "string") return typeof a.value !== "string" || !b.test(a.value);
    if (b.kind === "exists") return (a.value !== null) !== b.value;
  }
  if (a.kind === "exists" && b.kind === "exists") return a.value !== b.value;
  if (a.kind === "exists" && !a.value) return needsValue(b);
  if (a.kind === "string" && b.kind === "string" && a.op === "startsWith" && b.op === "startsWith") {
    return !a.arg.startsWith(b.arg) && !b.arg.startsWith(a.arg);
  }
  return false;
}

function lintWhereContradictions(rule: CompiledRule, warn: (path: string, message: string) => void): void {
  const where = rule.document.where;
  if (!where) return;
  const byPath = whereConstraints(where);
  const at = (key: string) => `${rule.path}${jsonPath(["where", key]).slice(1)}`;
  const reported = new Set<string>();
  const report = (key: string, message: string) => {
    if (reported.has(key)) return;
    reported.add(key);
    warn(at(key), `${message}; this rule can never apply`);
  };
  for (const [path, constraints] of byPath) {
    for (const [i, a] of constraints.entries()) {
      for (const b of constraints.slice(i + 1)) {
        if (a.key === b.key && a.kind === "equals" && b.kind === "equals") continue;
        if (contradiction(a, b) || contradiction(b, a)) {
          report(b.key, `"${path}" would have to ${describeConstraint(a)} and ${describeConstraint(b)}`);
        }
      }
    }
    // A field inside a value that cannot have fields: absent, a string, or a literal without it.
    if (!constraints.some(needsValue)) continue;
    const segments = path.split(".");
    for (let n = 1; n < segments.length; n += 1) {
      const parent = segments.slice(0, n).join(".");
      const field = segments.slice(n).join(".");
      for (const p of byPath.get(parent) ?? []) {
        const child = constraints.find((c) => needsValue(c) && c.key !== p.key);
        if (!child) continue;
        const noField =
          (p.kind === "exists" && !p.value) ||
          p.kind === "string" ||
          (p.kind === "equals" && !hasPath(p.value, segments.slice(n)));
        if (noField) {
          report(
            child.key,
            `"${path}" would have to ${describeConstraint(child)}, but "${parent}" would have to ${describeConstraint(p)}, which has no field "${field}"`,
          );
        }
      }
    }
  }
}

/**
 * What a `where` condition holds on, where that is plain from the condition alone: every value
 * (present or not), none, every string only (a regex or prefix any string matches), every string
 * and every list holding "" (`contains: ""`), or the rest (the `not` of one of these).
 */
type Reach = "always" | "never" | "string" | "not-string" | "string-or-list" | "not-string-or-list";

const NEGATED: Readonly<Record<Reach, Reach>> = {
  always: "never",
  never: "always",
  string: "not-string",
  "not-string": "string",
  "string-or-list": "not-string-or-list",
  "not-string-or-list": "string-or-list",
};

function conditionReach(condition: unknown): Reach | undefined {
  if (condition === null || typeof condition !== "object" || Array.isArray(condition)) return undefined;
  const op = condition as WhereOperator;
  if ("equals" in op) return undefined;
  if (op.startsWith === "") return "string";
  if ("contains" in op) return op.contains === "" ? "string-or-list" : undefined;
  if (op.regex !== undefined) return matchesEveryString(op.regex) ? "string" : undefined;
  if (op.in !== undefined) return op.in.length === 0 ? "never" : undefined;
  if (op.not !== undefined) {
    const inner = conditionReach(op.not);
    return inner && NEGATED[inner];
  }
  return undefined;
}

/**
 * Whether a regex's search holds on every string: it matches the empty string, and it has no
 * assertion but `^` (or `\A`), which holds at the start of any string, so the same empty match is
 * found there. Any `$`, `\b`, `\B` or `\z` in it, escaped or not, leaves it alone.
 */
function matchesEveryString(pattern: string): boolean {
  if (/\$|\\[bBz]/.test(pattern)) return false;
  const compiled = compileRegex(pattern);
  return compiled.ok && compiled.value("");
}

/** A `where` condition that holds on every string (and list holding ""), every value, or none. */
function lintWhereAlwaysOrNever(rule: CompiledRule, warn: (path: string, message: string) => void): void {
  for (const [key, condition] of Object.entries(rule.document.where ?? {})) {
    const reach = conditionReach(condition);
    if (reach === undefined) continue;
    const at = wherePath(rule, key);
    const written = JSON.stringify(condition);
    const field = JSON.stringify(key);
    switch (reach) {
      case "string":
        warn(
          at,
          `${written} holds on every string, so it only asks that ${field} be a string: write {"exists": true} to ask that it be there, or a pattern that says what it must hold`,
        );
        break;
      case "not-string":
        warn(
          at,
          `${written} refuses every string, so it only asks that ${field} be no string (absent, null or another type): write {"exists": false} to ask that it be absent`,
        );
        break;
      case "string-or-list":
        warn(
          at,
          `${written} holds on every string, and on a list holding "", so it only asks that ${field} be a string or such a list: write {"exists": true} to ask that it be there, or a substring it must hold`,
        );
        break;
      case "not-string-or-list":
        warn(
          at,
          `${written} refuses every string, and a list holding "", so it only asks that ${field} be neither (absent, null, another type or a list without ""): write {"exists": false} to ask that it be absent, or a substring it must not hold`,
        );
        break;
      case "never":
        warn(
          at,
          `${written} holds on no value, since "in": [] lists none; this rule can never apply: list in "in" the values ${field} may have`,
        );
        break;
      case "always":
        warn(
          at,
          `${written} holds on every value, since "in": [] lists none, so it tests nothing: remove it, or list in "in" the values ${field} must not have`,
        );
        break;
    }
  }
}

/**
 * A prompt or forward rule that blocks Stop when its model or server fails (`onError: deny`, its
 * own or the default) and does not check stop_hook_active: while the model is down, every stop
 * is blocked with the failure as the instruction, and the agent goes on for nothing until its
 * client's cap (Claude Code's 8 continuations). A `decide` rule gets the same warning in lintAction.
 */
function lintStopLoopOnError(
  rule: CompiledRule,
  policy: Policy,
  warn: (path: string, message: string) => void,
): void {
  const action = rule.action;
  if ((action.kind !== "prompt" && action.kind !== "forward") || rule.mode !== "enforce") return;
  if (ruleOnError(rule, policy) !== "deny") return;
  if (Object.hasOwn(rule.document.where ?? {}, "stop_hook_active")) return;
  // An `if` never matches on Stop (lintRule says so), so the rule never blocks it.
  if (rule.ifRules) return;
  const events = rule.events === "*" ? ["Stop"] : rule.events;
  const stop = events.find((e) => e === "Stop" || e === "SubagentStop");
  if (stop === undefined) return;
  const what = action.kind === "prompt" ? "model" : "server";
  warn(
    `${rule.path}.${ownOnError(rule) === undefined ? "where" : `${action.kind}.onError`}`,
    `blocks ${stop} whenever its ${what} fails (onError "deny") without checking stop_hook_active: while the ${what} is down every stop is blocked and the agent is kept in a loop; add "where": {"stop_hook_active": false}`,
  );
}

/**
 * A prompt or forward rule's `timeoutMs` past the request's deadline, which ends its call first
 * (remote-actions.ts gives a call the least of the two): a `timeoutMs` raised for a slow model
 * changes nothing while `defaults.deadlineMs` is left at its 5000 ms default.
 */
function lintTimeoutPastDeadline(
  rule: CompiledRule,
  policy: Policy,
  warn: (path: string, message: string) => void,
): void {
  const action = rule.action;
  if ((action.kind !== "prompt" && action.kind !== "forward") || rule.mode === "off") return;
  const own = action.kind === "prompt" ? rule.document.prompt?.timeoutMs : rule.document.forward?.timeoutMs;
  const written = policy.document.defaults?.deadlineMs;
  const deadline = Math.min(written ?? DEFAULT_DEADLINE_MS, MAX_DEADLINE_MS);
  if (own === undefined || own <= deadline) return;
  const which =
    written === undefined
      ? `defaults.deadlineMs (${deadline} ms, its default)`
      : written > MAX_DEADLINE_MS
        ? `the ${deadline} ms defaults.deadlineMs is capped at`
        : `defaults.deadlineMs (${deadline} ms)`;
  warn(
    `${rule.path}.${action.kind}.timeoutMs`,
    `is ${own} ms, longer than ${which}: the call is given up at the request's deadline, before its timeoutMs, and the rule answers its onError; raise defaults.deadlineMs (below the hook's timeout) or lower timeoutMs`,
  );
}

/**
 * Below this, a time in milliseconds was written in seconds (`"deadlineMs": 5`, as a hook's
 * `timeout` in the client's settings is written): no model or team server answers so fast.
 */
const FEWEST_PLAUSIBLE_MS = 100;

/** What check says of a time under FEWEST_PLAUSIBLE_MS, and what to write for that many seconds. */
const inSeconds = (ms: number, consequence: string) =>
  `is ${ms} ms, and ${consequence}: it counts milliseconds, where a hook's "timeout" in the client's settings counts seconds; write ${ms * 1000} for ${ms} s`;

/** A prompt or forward rule's `timeoutMs` written in seconds: its call always times out. */
function lintTimeoutInSeconds(rule: CompiledRule, warn: (path: string, message: string) => void): void {
  const action = rule.action;
  if ((action.kind !== "prompt" && action.kind !== "forward") || rule.mode === "off") return;
  const own = action.kind === "prompt" ? rule.document.prompt?.timeoutMs : rule.document.forward?.timeoutMs;
  if (own === undefined || own >= FEWEST_PLAUSIBLE_MS) return;
  warn(
    `${rule.path}.${action.kind}.timeoutMs`,
    inSeconds(
      own,
      `no ${action.kind === "prompt" ? "model" : "team server"} answers that fast, so the rule would answer its onError every time`,
    ),
  );
}

/**
 * An enforcing deny on PreToolUse with no condition but its `on`: no matcher, `if`, `where` or
 * `teams`, nor a `"matcher": "*"` that says every tool is meant. Every tool call of every
 * session is denied, reads and searches too, so the agent can do nothing but write its answer: a
 * first policy's deny written without the condition it meant.
 */
function lintDeniesEveryTool(rule: CompiledRule, warn: (path: string, message: string) => void): void {
  if (!deniesUnconditionally(rule) || rule.matcher !== undefined) return;
  if (rule.events !== "*" && !rule.events.includes("PreToolUse")) return;
  // `"matcher": "*"` names every tool on purpose (a release freeze): it was told all the same,
  // with no way to say so.
  if (rule.document.matcher === "*") return;
  warn(
    rule.path,
    `has no condition but its "on", so it denies every tool call of every session (Read, Grep and Edit as well as Bash), and the agent can do nothing but write; to deny some calls, name them with a "matcher" ("Bash"), an "if" ("Bash(rm -rf *)") or a "where"; to deny every tool on purpose (a freeze), write "matcher": "*"`,
  );
}

/**
 * A regex's escapes and classes, which read a "*", a "." or a "/" as themselves: read past when a
 * body between slashes is looked in for a "/" and a regex for a glob's "*".
 */
const REGEX_ESCAPES_AND_CLASSES = /\\[\s\S]|\[(?:[^\\\]]|\\[\s\S])*\]/g;
/** A regex between slashes as JavaScript writes one: its pattern and the flags after it. */
const SLASH_DELIMITED = /^\/([\s\S]+)\/([dgimsuyv]*)$/;
/** A field that holds a path (`tool_input.file_path`, `tool_input.path`, `cwd`). */
const PATH_KEY = /(?:^|[._])(?:path|cwd)$/;
/** What only a regex means: an anchor just inside the slashes, or a space or a class escape. */
const REGEX_ONLY = /^\^|(?<!\\)\$$|\s|\\[sSdDwWbB]/;
/**
 * Names a path is made of, with no regex syntax but an escaped mark: a folder's or a file's (`src`,
 * `Application Support`, `\.ssh`).
 */
const PLAIN_NAME = /^(?:[\w. -]|\\[^\w\s])+$/;
/**
 * The flags a JavaScript regex of a plain name is written with (`/sudo/i`, `/sudo/ig`), or a `g`
 * first with an `i` or an `m` after it (`/sudo/gi`, `/sudo/gm`): a `g` finds every match, a
 * JavaScript habit a test never needs. Other letters after one change nothing there (`m`, `s`,
 * `d`, `u`, `v`, `y`), so they are a path's last name, as one with a `g` elsewhere is (`gvim`,
 * `img`, `gui`, `msg`): `/bin/vim` on a command was told to become "(?im)bin", which matches
 * every bin, and `/assets/img` "(?im)assets".
 */
const PLAIN_NAME_FLAGS = /^(?:i?g?|g[im]+)$/;

/**
 * A `where` regex written between slashes, as JavaScript writes one (`/rm -rf/`, `/^rm/i`): the
 * whole string is the pattern (RE2), so its slashes are characters the value must hold and its
 * flags letters after the last, and it matches none of the commands it was written for. A path
 * between slashes (`/node_modules/`, `/\.git/`) is a pattern that means what it says, so only one
 * with flags, an anchor just inside its slashes, a space or `\s`, `\d`, `\w`, `\b` is told, with
 * the pattern to write (its `i`, `m` and `s` as a leading flag group, which RE2 reads); on a path
 * field, less is (`meansRegex`).
 */
function lintWhereSlashRegex(rule: CompiledRule, warn: (path: string, message: string) => void): void {
  for (const [key, condition] of Object.entries(rule.document.where ?? {})) {
    const { inner, nots } = underNots(condition);
    const regex = operatorOf(inner)?.regex;
    const slashed = regex === undefined ? undefined : slashDelimited(regex);
    if (slashed === undefined || !meansRegex(slashed, PATH_KEY.test(key))) continue;
    warn(
      `${wherePath(rule, key, nots)}.regex`,
      `${JSON.stringify(regex)} ${betweenSlashes(slashed)}, so it matches only where ${fieldName(rule, key)} holds them too: write ${JSON.stringify(slashed.meant)}`,
    );
  }
}

/**
 * Whether what is written between slashes is a regex and its flags, not a path: one with flags, or
 * with an anchor just inside its slashes, a space or a class escape (`REGEX_ONLY`). On a path
 * field a space is a path's as well ("/Application Support/"), and the letters after a plain name
 * its last name ("/src/ui"): told as flags, it became "(?i)src". On any field, a plain name with
 * letters after it other than JavaScript's usual flags is a path too (`PLAIN_NAME_FLAGS`:
 * "/bin/vim", "/assets/img"), but on a command not one with a space, which a path there does not hold unquoted
 * ("/rm -rf/m").
 */
function meansRegex({ body, flags }: SlashDelimited, onPath: boolean): boolean {
  const mayBePath = onPath || !/\s/.test(body);
  if (PLAIN_NAME.test(body) && !PLAIN_NAME_FLAGS.test(flags) && mayBePath) return false;
  if (!onPath) return flags !== "" || REGEX_ONLY.test(body);
  return REGEX_ONLY.test(body.replace(/ /g, "")) || (flags !== "" && !PLAIN_NAME.test(body));
}

/**
 * A matcher written between slashes (`/Bash/`, `/bash/i`): no tool name, nor any other value a
 * matcher is checked against, holds a "/", so it never matches.
 */
function lintMatcherSlashes(rule: CompiledRule, warn: (path: string, message: string) => void): void {
  const source = rule.document.matcher;
  const slashed = source === undefined ? undefined : slashDelimited(source);
  if (slashed === undefined || rule.matcher === undefined || rule.matcher(slashed.body)) return;
  warn(
    `${rule.path}.matcher`,
    `${JSON.stringify(source)} ${betweenSlashes(slashed)}, which no value a matcher reads holds (a tool name, an event's source or type): write ${JSON.stringify(slashed.meant)}`,
  );
}

interface SlashDelimited {
  readonly body: string;
  readonly flags: string;
  /** The pattern meant: the body, with its `i`, `m` and `s` as a leading flag group, which RE2 reads. */
  readonly meant: string;
}

function slashDelimited(regex: string): SlashDelimited | undefined {
  const [, body = "", flags = ""] = SLASH_DELIMITED.exec(regex) ?? [];
  if (body === "" || !javaScriptLiteral(body, flags)) return undefined;
  return { body, flags, meant: withFlagsInside(body, flags) };
}

/**
 * Whether a body and flags between slashes could be a JavaScript regex literal at all: no flag
 * twice, and no "/" in the body unless escaped or in a class. A path is none (`/proc/sys`,
 * `/var/log/sys`), though its last name is made of flag letters: it was told to become `(?ss)proc`.
 */
function javaScriptLiteral(body: string, flags: string): boolean {
  if (new Set(flags).size !== flags.length) return false;
  return !body.replace(REGEX_ESCAPES_AND_CLASSES, "").includes("/");
}

const betweenSlashes = ({ flags }: SlashDelimited) =>
  `is written between slashes, as JavaScript writes a regex; here the whole string is the pattern, its "/"s${flags === "" ? "" : ` and the "${flags}" after the last`} included`;

/** A Bash call's command, as a `where` key names it (deepagents' legacy `tool_args` too). */
const COMMAND_KEY = /^(?:tool_input|tool_args)\.command$/;

/**
 * A `where` glob with a wildcard on a Bash command: a glob reads its value as a path (where.ts),
 * so its `*` stops at a `/`, and `rm -rf *` matches `rm -rf build` but not `rm -rf /tmp/x`, a
 * deny so written letting through the very commands it names. An `if` Bash pattern's `*` spans
 * anything, and reads each subcommand through wrappers.
 */
function lintWhereCommandGlob(rule: CompiledRule, warn: (path: string, message: string) => void): void {
  for (const [key, condition] of Object.entries(rule.document.where ?? {})) {
    if (!COMMAND_KEY.test(key)) continue;
    const { inner, nots } = underNots(condition);
    const glob = operatorOf(inner)?.glob;
    if (glob === undefined || !/[*?[]/.test(glob)) continue;
    // An `if` has no "not", and its pattern reads no "?" or "[...]": told in place of a negated
    // glob, "if": "Bash(rm *)" made a rule that skipped rm commands one that applies to them.
    const asIf = nots % 2 === 0 && !/[?[]/.test(glob);
    warn(
      `${wherePath(rule, key, nots)}.glob`,
      `${JSON.stringify(glob)} reads the command as a path: its "*" and "?" stop at a "/", so it matches no command with a "/" where they stand (a path such as /tmp/x); write ${asIf ? `"if": ${JSON.stringify(`Bash(${glob})`)}, whose "*" spans anything, or a "regex"` : `a "regex" in its place, whose ".*" spans anything`}`,
    );
  }
}

/**
 * A `contains` of a list on a field clients send as a string (`{"contains": ["rm", "-rf"]}`): on a
 * string it looks for one text (where.ts), so a list never holds there. It was meant as "any of
 * these", which a regex of them joined with `|` says; but where a condition that holds on more
 * lets more through (widensRule: an allow's, a deny's `not`), the regex of all of them in the
 * order written, which holds on less than either reading: a suggestion never makes an allow
 * broader than its author may have meant. One text is its own `contains`. A regex past RE2's
 * program size is not told, as a policy written with it would not load: for "any of them" a rule
 * for each text is; where all of them in order are told, fewer texts are, as a rule for each
 * would let through any one of them.
 */
function lintWhereContainsList(rule: CompiledRule, warn: (path: string, message: string) => void): void {
  for (const [key, condition] of Object.entries(rule.document.where ?? {})) {
    const { inner, nots } = underNots(condition);
    if (inner === null || typeof inner !== "object" || !("contains" in inner)) continue;
    const needle = (inner as WhereOperator).contains;
    if (!Array.isArray(needle) || needle.length === 0 || !needle.every((item) => typeof item === "string"))
      continue;
    const types = declaredTypes(rule, key.split("."));
    if (types === undefined || !types.every((type) => type === "string")) continue;
    const texts = needle.map((text) => text.replace(/[\\^$.*+?()[\]{}|]/g, "\\$&"));
    const allInOrder = widensRule(rule, nots);
    const regex = texts.join(allInOrder ? ".*" : "|");
    const first = JSON.stringify(needle[0]);
    const tooLong = `past RE2's ${MAX_REGEX_PROGRAM_SIZE} program instructions`;
    const write =
      needle.length === 1
        ? `for this text write {"contains": ${first}}`
        : !loads(regex)
          ? allInOrder
            ? `a regex of all of these texts in order is ${tooLong}: write fewer`
            : `for any of these texts write a rule for each, with its own {"contains": ${first}}: a regex of them all is ${tooLong}`
          : allInOrder
            ? `for all of these texts, in this order, write {"regex": ${JSON.stringify(regex)}}`
            : `for any of these texts write {"regex": ${JSON.stringify(regex)}}`;
    warn(
      `${wherePath(rule, key, nots)}.contains`,
      `is a list, and clients send ${fieldName(rule, key)} as a string, in which "contains" looks for one text, ${neverUnder(nots, '"contains"', key.startsWith("tool_input."))}: ${write}`,
    );
  }
}

/**
 * Whether a regex check tells its author to write loads: RE2 compiles it within its program size.
 * Where this build has not loaded the engine, it is not known, and taken to.
 */
function loads(pattern: string): boolean {
  const compiled = compileRegex(pattern);
  return compiled.ok || compiled.error === REGEX_ENGINE_MISSING;
}

/**
 * A "*" written as a glob's, in a regex read without its escapes and classes, with the character
 * it repeats: after a "/" with more after it (a "/*" that ends the regex leaves it holding on every
 * path that has what comes before, as the glob's folder would), or after a name's character before
 * a "." and a name. Not a "/*" after a leading "^" or before an ending "$": any number of "/" at a
 * path's start or end is a regex's meaning, which no glob writes ("^/*etc/passwd").
 */
const GLOB_STAR = /(?<!^\^)(\/)\*(?=.)(?!\$$)|([\w-])\*\.\w/;
/**
 * A regex with no syntax a glob does not share: it reads as the glob it was written as. Not a
 * `~`, which neither expands: clients send a path absolute.
 */
const GLOB_SHAPED = /^[\w./* -]+$/;
/**
 * A "." or ".." segment, which a path sent absolute never holds: it is matched as the file it
 * names (where.ts), so a glob told with one ("../secrets/*.env" under any folder) would pass check
 * and match no such path. Only deepagents' legacy tool_args hold a relative one, as written.
 */
const DOT_SEGMENT = /(?:^|\/)\.\.?(?:\/|$)/;

/**
 * A `where` regex on a path written as a glob (`secrets/*.env`, `id_*.pem`): a regex's "*"
 * repeats the character before it (`/*` is any number of "/") and its "." is any character, so it
 * matches none of the files the glob would (`secrets/a.env`). A leading "*" does not compile, and
 * the policy's load says so (where.ts); this one loaded without a word. Told the glob it reads as,
 * under any folder, where that does not let more through (widensRule).
 */
function lintWhereRegexGlobStar(rule: CompiledRule, warn: (path: string, message: string) => void): void {
  for (const [key, condition] of Object.entries(rule.document.where ?? {})) {
    if (!PATH_KEY.test(key) && !ABSOLUTE_PATH_KEY.test(key)) continue;
    const { inner, nots } = underNots(condition);
    const regex = operatorOf(inner)?.regex;
    const bare = regex?.replace(REGEX_ESCAPES_AND_CLASSES, "\0");
    const star = bare === undefined ? null : GLOB_STAR.exec(bare);
    if (regex === undefined || bare === undefined || star === null) continue;
    const repeated = star[1] ?? star[2] ?? "";
    // "./secrets/*.env" names what "secrets/*.env" does, under any folder; "/home/*/.ssh/" names the
    // folder "/home/*/.ssh" does, as a path is matched without its trailing "/" and a glob with one
    // matches none.
    const named = regex.replace(/^(?:\.\/)+/, "").replace(/(?<=.)\/+$/, "");
    const glob = named.startsWith("/") ? named : `**/${named}`;
    // A glob matches a whole path, where a regex matched inside one: a last name with no "*" is a
    // folder's as often as a file's ("/home/*/.ssh"), whose files its glob alone leaves out.
    const under = glob.slice(glob.lastIndexOf("/") + 1).includes("*")
      ? ""
      : `, and {"glob": ${JSON.stringify(`${glob}/**`)}} for what is under it`;
    const write =
      GLOB_SHAPED.test(regex) && !DOT_SEGMENT.test(named) && !widensRule(rule, nots)
        ? `write {"glob": ${JSON.stringify(glob)}} to match it as a glob${under}`
        : `write it as a "glob", whose "*" is any name, or as a regex, where ".*" is any text and "\\." a dot`;
    warn(
      `${wherePath(rule, key, nots)}.regex`,
      `${JSON.stringify(regex)} is a regular expression, not a glob: its "*" repeats the character before it ("${repeated}*" is any number of "${repeated}")${bare.includes(".") ? ` and its "." is any character` : ""}, so it does not match the paths a glob of it names; ${write}`,
    );
  }
}

/** A `where` condition as its operators (`regex`, `glob`, …), undefined for a value compared as written. */
function operatorOf(condition: unknown): WhereOperator | undefined {
  return condition !== null && typeof condition === "object" ? (condition as WhereOperator) : undefined;
}

/**
 * Whether a condition `nots` levels under `not` that holds on more values lets more through: an
 * allow's, unless negated; any other rule's (a deny, an ask, a judge) when negated, which then
 * applies to fewer calls.
 */
function widensRule(rule: CompiledRule, nots: number): boolean {
  const allows = rule.action.kind === "decide" && rule.action.decision === "allow";
  return allows === (nots % 2 === 0);
}

function hasPath(value: unknown, segments: readonly string[]): boolean {
  let current = value;
  for (const segment of segments) {
    if (current === null || typeof current !== "object" || !Object.hasOwn(current, segment)) return false;
    current = (current as Record<string, unknown>)[segment];
  }
  return true;
}

function lintAction(rule: CompiledRule, event: string, warn: (path: string, message: string) => void): void {
  const p = rule.path;
  const action = rule.action;
  if (action.kind === "decide") {
    if (isKnownEvent(event) && !honouredDecision(event, action.decision)) {
      warn(`${p}.decide`, `no client can honour "${action.decision}" on ${event}; it is not sent there`);
    } else if (DEEPCODE_IGNORES_BLOCK.has(event) && honouredDecision(event, action.decision) === "block") {
      warn(`${p}.decide`, deepcodeIgnoresBlock(event, ""));
    }
    if (action.updatedInput && (!PERMISSION_EVENTS.has(event) || action.decision !== "allow")) {
      warn(`${p}.updatedInput`, `is used only with decide "allow" on PreToolUse or PermissionRequest`);
    }
    const blocksStop =
      (event === "Stop" || event === "SubagentStop") && honouredDecision(event, action.decision);
    if (blocksStop && !Object.hasOwn(rule.document.where ?? {}, "stop_hook_active")) {
      warn(
        `${p}.where`,
        `blocks ${event} without checking stop_hook_active; add "where": {"stop_hook_active": false} so the agent is not kept in a loop`,
      );
    }
  }
  // judge.ts verdictEffect: ending the turn on Stop would let the agent stop, undoing the block.
  if (
    action.kind === "prompt" &&
    action.prompt.stop === true &&
    (event === "Stop" || event === "SubagentStop")
  ) {
    warn(
      `${p}.prompt.stop`,
      `does nothing on ${event}: a "no" there blocks the stop so the agent goes on, and ending the turn would undo that (as in Claude Code's own prompt hooks)`,
    );
  }
  // A model's "no" is sent as a deny or a block (judge.ts verdictEffect): where neither is, the
  // model is not called (handle-hook.ts verdictReachesClient).
  if (action.kind === "prompt" && isKnownEvent(event) && !honouredDecision(event, "deny")) {
    warn(
      `${p}.prompt`,
      `no client can honour a model's verdict on ${event} (a "no" is sent as a deny or a block); the model is not called there`,
    );
  } else if (action.kind === "prompt" && DEEPCODE_IGNORES_BLOCK.has(event)) {
    warn(`${p}.prompt`, deepcodeIgnoresBlock(event, `, which is how a model's "no" is sent there`));
  }
  const onError = ownOnError(rule);
  if (
    onError !== undefined &&
    onError !== "allow" &&
    isKnownEvent(event) &&
    !honouredDecision(event, onError)
  ) {
    warn(
      `${p}.${action.kind}.onError`,
      event === "PermissionRequest"
        ? `no client can honour "${onError}" on ${event}; when the rule fails there ${HELD_BACK}`
        : `no client can honour "${onError}" on ${event}; when the rule fails there it has no opinion, as with "allow"`,
    );
  }
  const context =
    action.kind === "context" ? action.text : action.kind === "decide" ? action.context : undefined;
  const carriers = AGENT_DIALECTS.filter((dialect) => carriesContext(event, dialect));
  // One client or none carries it: Claude Code alone PreCompact's instructions, deepcode or
  // deepagents alone where Claude Code has no variant. On Notification and Setup, where Claude
  // Code alone does too, deepcode's own reason is said below instead.
  if (
    context !== undefined &&
    isKnownEvent(event) &&
    carriers.length <= 1 &&
    !DEEPCODE_NO_CONTEXT_EVENTS.has(event)
  ) {
    const [carrier] = carriers;
    warn(
      `${p}.context`,
      carrier === undefined
        ? `${event} has no way to carry added context to the agent; it is not sent there`
        : `${event} carries added context to ${CLIENT_NAME[carrier]} only; ${AGENT_DIALECTS.filter(
            (d) => d !== carrier,
          )
            .map((d) => CLIENT_NAME[d])
            .join(" and ")} cannot receive it there`,
    );
  } else if (context !== undefined && BLOCKABLE_EVENTS.has(event) && !carriesContext(event, "deepagents")) {
    warn(
      `${p}.context`,
      `deepagents cannot receive context on ${event}; it is sent to ${clientOn("claude-code", event)} and deepcode only`,
    );
  } else if (context !== undefined && DEEPCODE_NO_CONTEXT_EVENTS.has(event)) {
    const receivers = carriers.map((d) => clientOn(d, event));
    warn(
      `${p}.context`,
      `deepcode cannot receive context on ${event} (${DEEPCODE_NO_CONTEXT_EVENTS.get(event)}); it is sent to ${receivers.join(" and ")} only`,
    );
  }
}

/** What `check` says of a block deepcode does not act on (DEEPCODE_IGNORES_BLOCK). */
function deepcodeIgnoresBlock(event: string, how: string): string {
  return event === "UserPromptExpansion"
    ? `deepcode does not act on a block on ${event}${how}; its expanded prompt runs anyway. Block it on UserPromptSubmit too, which deepcode sends next with the expanded text`
    : `deepcode does not act on a block on ${event}${how}; there the ${event === "PreCompact" ? "compaction" : "change"} goes ahead`;
}

/** A value that should come from the environment, written into the file instead. */
function lintInlineSecrets(policy: Policy, warn: (path: string, message: string) => void): void {
  // A "$NAME" is a variable meant, which lintShellVariables says how to read.
  const inline = (value: string | undefined) =>
    value !== undefined && !value.startsWith("env:") && shellVariable(value) === undefined;
  // A URL whose query or path carries its credential (`?token=`, `?sig=`, a random segment) is
  // a secret as a Slack URL is: the same parts the gateway scrubs (policy.ts `secretUrlParts`),
  // and a query parameter masking reads as a credential.
  const credentialUrl = (at: string, url: string | undefined) => {
    if (url !== undefined && inline(url) && (maskString(url) !== url || secretUrlParts(url).length > 0))
      warn(
        at,
        'carries a credential (a token in its query or path), which makes the URL a secret; use "env:NAME"',
      );
  };
  for (const [name, model] of Object.entries(policy.document.models ?? {})) {
    if (inline(model.apiKey))
      warn(jsonPath(["models", name, "apiKey"]), 'is an inline secret; use "env:NAME"');
    credentialUrl(jsonPath(["models", name, "url"]), model.url);
  }
  for (const [name, sink] of Object.entries(policy.document.sinks ?? {})) {
    if (sink.type === "webhook" && inline(sink.secret))
      warn(jsonPath(["sinks", name, "secret"]), 'is an inline secret; use "env:NAME"');
    if (sink.type === "github-dispatch" && inline(sink.token))
      warn(jsonPath(["sinks", name, "token"]), 'is an inline secret; use "env:NAME"');
    if ((sink.type === "slack" || sink.type === "discord") && inline(sink.url)) {
      warn(jsonPath(["sinks", name, "url"]), 'is a webhook URL, which is itself a secret; use "env:NAME"');
    } else credentialUrl(jsonPath(["sinks", name, "url"]), sink.url);
  }
  for (const rule of policy.rules) {
    credentialUrl(`${rule.path}.forward.url`, rule.document.forward?.url);
    for (const [header, value] of Object.entries(rule.document.forward?.headers ?? {})) {
      // An "env:NAME" is no secret written out; lintForwardHeaderVariables says how to read one.
      const secret = inlineHeaderSecret(header, value);
      if (secret !== undefined && !secret.startsWith("env:")) {
        warn(
          `${rule.path}${jsonPath(["forward", "headers", header]).slice(1)}`,
          "holds an inline secret; use $VAR with allowedEnvVars",
        );
      }
    }
  }
}

/**
 * A value `"env:NAME"` where hookgate reads none: POLICY.md's Secrets reads "a value env:NAME" at
 * load, and hookgate reads one only where a secret or a URL stands (secret-ref.ts
 * SINK_ENV_FIELDS, a model's apiKey and url, a forward's url). Elsewhere it is the text itself: a
 * `where` compared with it never holds, a reason or an event type is sent so. A forward header's
 * is named by lintForwardHeaderVariables, one in an allowlist of names by the policy's load, one
 * in the rest of `egress` refused there, and a description is never read at all.
 */
function lintEnvTakenAsWritten(policy: Policy, warn: (path: string, message: string) => void): void {
  const { document } = policy;
  // Read from the environment, or said of elsewhere.
  const readOrTold = (path: readonly PropertyKey[]): boolean => {
    const [section, name, field] = path;
    if (section === "models") return field === "apiKey" || field === "url";
    if (section === "sinks") {
      const sink = document.sinks?.[String(name)];
      return sink !== undefined && SINK_ENV_FIELDS[sink.type].includes(String(field));
    }
    if (section === "egress") return true;
    return section === "rules" && field === "forward";
  };
  const walk = (value: unknown, path: PropertyKey[]): void => {
    if (typeof value === "string") {
      if (value.startsWith("env:") && ENV_NAME.test(value.slice(4)) && !readOrTold(path))
        warn(
          jsonPath(path),
          `is taken as written, not read from the environment: hookgate reads an "env:NAME" value only in a sink's url, secret and token, a model's apiKey and url, and a forward's url`,
        );
    } else if (Array.isArray(value)) {
      for (const [i, item] of value.entries()) walk(item, [...path, i]);
    } else if (typeof value === "object" && value !== null)
      for (const [key, item] of Object.entries(value))
        if (!(path.length === 2 && path[0] === "rules" && key === "description")) walk(item, [...path, key]);
  };
  walk(document, []);
}

/**
 * A field that reads `"env:NAME"` written `"$NAME"` or `"${NAME}"`, as a shell, a .env file or a
 * forward header reads a variable: hookgate takes it as written (a URL with no scheme, a secret
 * that is that text), so every call with it fails. Said with what to write instead.
 */
function lintShellVariables(policy: Policy, warn: (path: string, message: string) => void): void {
  const say = (path: string, value: string | undefined) => {
    const name = shellVariable(value);
    if (name !== undefined)
      warn(
        path,
        `"${value}" is taken as written, not read from the environment: hookgate reads a variable here as "env:NAME"; write "env:${name}"`,
      );
  };
  for (const rule of policy.rules) say(`${rule.path}.forward.url`, rule.document.forward?.url);
  for (const [name, sink] of Object.entries(policy.document.sinks ?? {}))
    for (const field of SINK_ENV_FIELDS[sink.type])
      say(jsonPath(["sinks", name, field]), (sink as Record<string, unknown>)[field] as string | undefined);
  for (const [name, model] of Object.entries(policy.document.models ?? {})) {
    say(jsonPath(["models", name, "apiKey"]), model.apiKey);
    say(jsonPath(["models", name, "url"]), model.url);
  }
}

/**
 * A forward header's `$VAR` that is always sent empty: not in the rule's `allowedEnvVars`, not
 * in `egress.httpHookAllowedEnvVars`, or (when `check` can read the environment) unset.
 */
function lintForwardHeaderVariables(
  policy: Policy,
  warn: (path: string, message: string) => void,
  env: EnvReader | undefined,
): void {
  const global = new Set(policy.document.egress?.httpHookAllowedEnvVars ?? []);
  for (const rule of policy.rules) {
    const forward = rule.document.forward;
    if (!forward) continue;
    const own = new Set(forward.allowedEnvVars ?? []);
    for (const [header, value] of Object.entries(forward.headers ?? {})) {
      const at = `${rule.path}${jsonPath(["forward", "headers", header]).slice(1)}`;
      for (const name of headerVariables(value)) {
        const why = !own.has(name)
          ? "is not in the rule's forward.allowedEnvVars"
          : !global.has(name)
            ? "is not in egress.httpHookAllowedEnvVars"
            : env !== undefined && (env(name) ?? "") === ""
              ? "is not set"
              : undefined;
        if (why !== undefined)
          warn(at, `header "${header}" reads $${name}, which ${why}, so it is always sent empty there`);
      }
      for (const problem of unreadVariables(value)) warn(at, `header "${header}" has ${problem}`);
      for (const problem of envReferences(value)) warn(at, `header "${header}" has ${problem}`);
      // Refused when the rule runs (remote-actions.ts), so every call answers with its onError.
      if (invalidHeaderNames({ [header]: value }).length > 0)
        warn(
          at,
          `"${header}" is no HTTP header name ${HEADER_NAME_RULE}, so nothing is ever sent and the rule always answers with its onError`,
        );
      else if (clientHeaderNames({ [header]: value }).length > 0)
        warn(
          at,
          `header "${header}" is ${CLIENT_HEADER_RULE}, so nothing is ever sent and the rule always answers with its onError; remove it`,
        );
      else if (headerVariables(value).length === 0 && invalidHeaderValues({ [header]: value }).length > 0)
        warn(
          at,
          `header "${header}" has a character no HTTP header can carry ${HEADER_VALUE_RULE}, so nothing is ever sent and the rule always answers with its onError`,
        );
    }
  }
}

/**
 * The `"env:NAME"` a header's value holds (`env:TOKEN`, `Bearer env:TOKEN`), each with what to
 * write: POLICY.md's Secrets reads such a value at load, as a forward's url and a sink's are read,
 * but a header reads only its $VAR, which both allowlists must name, and sends this as written.
 */
function envReferences(value: string): string[] {
  return [...value.matchAll(/(?:^|\s)env:([A-Za-z_][A-Za-z0-9_]*)/g)].map(([, name = ""]) => {
    const variable = HEADER_VAR_NAME.test(name) ? `$${name}` : "$NAME (upper-case letters, digits and _)";
    return `env:${name}, which is sent as written, not read from the environment: a header reads a variable as ${variable}, named in the rule's forward.allowedEnvVars and egress.httpHookAllowedEnvVars`;
  });
}

/**
 * `$name` / `${name}` spellings of a header's value that are not read as the variable they look
 * like, each with why. Braces that hold a `$` are not one spelling: Claude Code reads the `$VAR`
 * inside them (`${x $TOKEN}` sends TOKEN's value between `${x ` and `}`). A `${` never closed is
 * sent as written, up to the next `$` (which may start a variable that is read).
 */
function unreadVariables(value: string): string[] {
  const rule = "a header's $VAR names upper-case letters, digits and _ only, as Claude Code's does";
  return [...value.matchAll(/\$\{([^${}]*)\}|\$\{(?![^}]*\})[^$]*|\$([A-Za-z_][A-Za-z0-9_]*)/g)].flatMap(
    (m) => {
      const [spelt, braced, bare] = m;
      if (braced === undefined && bare === undefined)
        return [
          `${spelt.trimEnd()}, which has no closing brace, so it is sent as written, not read from the environment`,
        ];
      if (HEADER_VAR_NAME.test(braced ?? bare ?? "")) return [];
      // Read greedily: `$Token` reads $T and sends "oken" as written.
      const read = bare === undefined ? undefined : /^[A-Z_][A-Z0-9_]*/.exec(bare)?.[0];
      return [
        read === undefined
          ? `${spelt}, which is sent as written, not read from the environment: ${rule}`
          : `${spelt}, which reads $${read} and sends the rest as written: ${rule}`,
      ];
    },
  );
}

/**
 * A forward, sink or model URL the egress guard will refuse: a warning, since it fails at call
 * time (into onError, or into the dead-letter queue for a sink).
 */
function lintEgressTargets(
  policy: Policy,
  warn: (path: string, message: string) => void,
  env: EnvReader | undefined,
): void {
  const egress = policy.egress ?? DEFAULT_EGRESS_POLICY;
  const judge = (path: string, url: string, then: string) => {
    const verdict = checkUrl(url, egress.allowlist);
    // A name is judged by its addresses when it is resolved, at call time; an address now.
    const address =
      verdict.ok && isIpLiteral(verdict.host) ? classifyAddress(verdict.host, egress.addresses) : undefined;
    const refusal = !verdict.ok
      ? `${verdict.refusal.code}: ${verdict.refusal.reason}`
      : address !== undefined && !address.allowed
        ? `EGRESS_BLOCKED_ADDRESS: ${address.reason}${howToOpen(address.address, address.range, policy.document.egress)}`
        : undefined;
    if (refusal !== undefined) warn(path, `the egress guard will refuse it (${refusal}); ${then}`);
  };
  for (const rule of policy.rules) {
    const action = rule.action;
    // An unset variable is warned about when the policy loads; a set one is judged as it reads.
    if (action.kind !== "forward" || action.unsetUrlVariable !== undefined) continue;
    const written = rule.document.forward?.url;
    // A "$NAME" is said once, by lintShellVariables, not as a URL with no scheme.
    if (shellVariable(written) !== undefined) continue;
    judge(
      `${rule.path}.forward.url`,
      action.forward.url,
      `the rule will answer with its onError${written !== undefined && written !== action.forward.url ? ` (the URL in ${written.slice(4)} here)` : ""}`,
    );
  }
  for (const [name, sink] of Object.entries(policy.document.sinks ?? {})) {
    // An unset variable is warned about when the policy loads; a set one is judged as written here.
    const fromEnv = sink.url?.startsWith("env:") === true;
    if (shellVariable(sink.url) !== undefined) continue;
    if (fromEnv && !(SINK_ENV_FIELDS[sink.type] as readonly string[]).includes("url")) continue;
    const raw = fromEnv && sink.url !== undefined ? env && resolveSecret(sink.url, env) : sink.url;
    if (fromEnv && raw === undefined) continue;
    judge(
      jsonPath(["sinks", name, "url"]),
      deliveryUrl({ ...sink, url: raw }),
      `every delivery to it will fail into the dead-letter queue${fromEnv ? ` (the URL in ${sink.url?.slice(4)} here)` : ""}`,
    );
  }
  for (const model of policy.models.values()) {
    // An unset variable is warned about when the policy loads; a set one is judged as it reads.
    if (model.unsetUrlVariable !== undefined) continue;
    const written = policy.document.models?.[model.name]?.url;
    if (shellVariable(written) !== undefined) continue;
    const fromEnv = written?.startsWith("env:") === true;
    judge(
      jsonPath(model.url ? ["models", model.name, "url"] : ["models", model.name]),
      model.url ?? DEFAULT_MODEL_URLS[model.provider],
      `prompt rules that use it will answer with their onError${fromEnv ? ` (the URL in ${written?.slice(4)} here)` : ""}`,
    );
  }
}

/**
 * An allowCidrs entry that covers a cloud metadata address opens it to hooks (the built-in
 * tables no longer judge it): a warning, since a wide private range may be meant, the metadata
 * service seldom is.
 */
function lintMetadataOpened(policy: Policy, warn: (path: string, message: string) => void): void {
  if (policy.egress === undefined) return;
  const byEntry = new Map<number, ReturnType<typeof metadataOpened>>();
  for (const o of metadataOpened(policy.egress.addresses))
    byEntry.set(o.index, [...(byEntry.get(o.index) ?? []), o]);
  const and = (items: string[]) =>
    items.length <= 1 ? (items[0] ?? "") : `${items.slice(0, -1).join(", ")} and ${items.at(-1)}`;
  for (const [index, opened] of byEntry) {
    const entry = policy.document.egress?.allowCidrs?.[index] ?? opened[0]?.address;
    const one = opened.length === 1;
    warn(
      jsonPath(["egress", "allowCidrs", index]),
      `${JSON.stringify(entry)} covers ${and(opened.map((o) => `${o.address} (${o.service})`))}, so hooks can reach ${one ? "it" : "them"}; to keep ${one ? "it" : "them"} closed add ${and(opened.map((o) => JSON.stringify(o.deny)))} to egress.denyCidrs`,
    );
  }
}

/**
 * Warnings for a policy that loads but may not do what its author thinks: rules no event can
 * reach, decisions a client cannot honour, inline secrets, no auth. `hookgate check` prints them;
 * `serve` logs them at start.
 */

import { checkUrl } from "./egress/url.js";
import {
  BLOCKABLE_EVENTS,
  carriesContext,
  honouredDecision,
  PERMISSION_EVENTS,
} from "./event-capabilities.js";
import { isKnownEvent, TOOL_EVENTS } from "./events.js";
import { DEFAULT_MODEL_URLS } from "./judge.js";
import { eventReadsMatcher } from "./matcher.js";
import type { CompiledRule, Policy, PolicyIssue } from "./policy.js";

export function lintPolicy(policy: Policy): PolicyIssue[] {
  const warnings: PolicyIssue[] = [];
  const warn = (path: string, message: string) => warnings.push({ severity: "warning", path, message });
  if (!policy.document.auth) {
    warn(
      "$",
      'has no "auth": every caller is accepted as team "default"; fine on one machine, not for a team',
    );
  }
  for (const rule of policy.rules) lintRule(rule, warn);
  lintInlineSecrets(policy, warn);
  lintEgressTargets(policy, warn);
  return warnings;
}

function lintRule(rule: CompiledRule, warn: (path: string, message: string) => void): void {
  const p = rule.path;
  if (rule.mode === "off") warn(`${p}.mode`, `rule "${rule.id}" is off and never evaluated`);
  const events = rule.events === "*" ? [] : rule.events;
  for (const [i, name] of events.entries()) {
    const at = typeof rule.document.on === "string" ? `${p}.on` : `${p}.on[${i}]`;
    if (!isKnownEvent(name))
      warn(at, `"${name}" is not an event any supported client sends (accepted in case a client adds it)`);
    if (name === "SessionStart" || name === "Setup") {
      warn(
        at,
        `Claude Code never sends http hooks on ${name}; only deepcode or a command hook running \`hookgate send\` reach this rule`,
      );
    }
    if (rule.ifRules && !TOOL_EVENTS.has(name) && isKnownEvent(name)) {
      warn(at, `"if" applies only to tool events, so this rule never applies to ${name}`);
    }
    if (rule.document.matcher && !["", "*"].includes(rule.document.matcher) && !eventReadsMatcher(name)) {
      warn(`${p}.matcher`, `${name} has no field a matcher is checked against; the matcher is ignored there`);
    }
    lintAction(rule, name, warn);
  }
}

function lintAction(rule: CompiledRule, event: string, warn: (path: string, message: string) => void): void {
  const p = rule.path;
  const action = rule.action;
  if (action.kind === "decide") {
    if (isKnownEvent(event) && !honouredDecision(event, action.decision)) {
      warn(`${p}.decide`, `no client can honour "${action.decision}" on ${event}; it is not sent there`);
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
  const context =
    action.kind === "context" ? action.text : action.kind === "decide" ? action.context : undefined;
  if (context !== undefined && isKnownEvent(event) && !carriesContext(event, "claude-code")) {
    warn(`${p}.context`, `${event} has no way to carry added context to the agent; it is not sent there`);
  } else if (
    context !== undefined &&
    event !== "PreCompact" &&
    BLOCKABLE_EVENTS.has(event) &&
    !carriesContext(event, "deepagents")
  ) {
    warn(
      `${p}.context`,
      `deepagents cannot receive context on ${event}; it is sent to Claude Code and deepcode only`,
    );
  }
}

/** A value that should come from the environment, written into the file instead. */
function lintInlineSecrets(policy: Policy, warn: (path: string, message: string) => void): void {
  const inline = (value: string | undefined) => value !== undefined && !value.startsWith("env:");
  for (const [name, model] of Object.entries(policy.document.models ?? {})) {
    if (inline(model.apiKey)) warn(`$.models.${name}.apiKey`, 'is an inline secret; use "env:NAME"');
  }
  for (const [name, sink] of Object.entries(policy.document.sinks ?? {})) {
    if (sink.type === "webhook" && inline(sink.secret))
      warn(`$.sinks.${name}.secret`, 'is an inline secret; use "env:NAME"');
    if (sink.type === "github-dispatch" && inline(sink.token))
      warn(`$.sinks.${name}.token`, 'is an inline secret; use "env:NAME"');
    if ((sink.type === "slack" || sink.type === "discord") && inline(sink.url)) {
      warn(`$.sinks.${name}.url`, 'is a webhook URL, which is itself a secret; use "env:NAME"');
    }
  }
  for (const rule of policy.rules) {
    for (const [header, value] of Object.entries(rule.document.forward?.headers ?? {})) {
      if (
        /^(?:bearer|basic|token)\s+[^$\s]/i.test(value) ||
        (/key|token|secret/i.test(header) && !value.includes("$"))
      ) {
        warn(
          `${rule.path}.forward.headers.${header}`,
          "holds an inline secret; use $VAR with allowedEnvVars",
        );
      }
    }
  }
}

/**
 * A forward, sink or model URL the egress guard will refuse: a warning, since it fails at call
 * time (into onError, or into the dead-letter queue for a sink).
 */
function lintEgressTargets(policy: Policy, warn: (path: string, message: string) => void): void {
  const judge = (path: string, url: string) => {
    const verdict = checkUrl(url, policy.egress.allowlist);
    if (!verdict.ok)
      warn(
        path,
        `the egress guard will refuse it (${verdict.refusal.code}: ${verdict.refusal.reason}); the rule will answer with onError`,
      );
  };
  for (const rule of policy.rules) {
    if (rule.document.forward) judge(`${rule.path}.forward.url`, rule.document.forward.url);
  }
  for (const [name, sink] of Object.entries(policy.document.sinks ?? {})) {
    const url =
      sink.type === "github-dispatch"
        ? `${sink.url ?? "https://api.github.com"}/repos/${sink.repo}/dispatches`
        : sink.url;
    if (!url.startsWith("env:")) judge(`$.sinks.${name}.url`, url);
  }
  for (const model of policy.models.values()) {
    judge(
      `$.models.${model.name}${model.url ? ".url" : ""}`,
      model.url ?? DEFAULT_MODEL_URLS[model.provider],
    );
  }
}

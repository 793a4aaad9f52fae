/**
 * What a rule says when its remote action (prompt, forward) fails or is not available: the fail
 * mode that applies and the effect it has. Its own module, without the policy compiler and the
 * evaluator, so that the remote actions the Worker loads on first use import neither: else esbuild
 * moves all they reach (the compiler, zod) out of worker.js into a chunk the two
 * share, about 0.5 KiB gzip more in the main module (scripts/build-worker.mjs).
 */
import type { RuleEffect } from "./decision.js";
import { honouredDecision } from "./event-capabilities.js";
import type { HookEvent } from "./hook-event.js";
import type { CompiledRule, Policy } from "./policy.js";
import type { FailMode } from "./policy-schema.js";

/** A prompt or forward rule's own `onError`, if it sets one. */
export function ownOnError(rule: CompiledRule): FailMode | undefined {
  const action = rule.action;
  return action.kind === "prompt"
    ? action.prompt.onError
    : action.kind === "forward"
      ? action.forward.onError
      : undefined;
}

/** The fail mode that applies when a rule's remote action fails: its own, else the policy's. */
export function ruleOnError(rule: CompiledRule, policy: Policy): FailMode {
  return ownOnError(rule) ?? policy.defaults.onError;
}

/**
 * The effect of a rule whose remote action failed (or is not available): `allow` means no
 * opinion; `deny` answers as if the rule had decided deny; `ask` as if it had decided ask.
 */
export function failureEffect(
  rule: CompiledRule,
  event: HookEvent,
  mode: FailMode,
  reason: string,
): RuleEffect {
  if (mode === "allow") return { ruleId: rule.id };
  const decision = honouredDecision(event.name, mode);
  // An `ask` the event cannot carry (PermissionRequest) is withheld, as a `decide: "ask"` rule's
  // is: it still outranks an allow, which must not win for want of the failed rule's answer.
  if (decision === undefined) return { ruleId: rule.id, withheld: mode };
  return { ruleId: rule.id, decision, reason };
}

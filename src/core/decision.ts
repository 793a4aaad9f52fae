/**
 * What the rules that applied to one event say, and how their voices combine into the one
 * answer a client gets (POLICY.md "Combining", Claude Code's own precedence for parallel hooks).
 */
import type { DecisionKind } from "./policy-schema.js";

/** One rule's contribution, already narrowed to what the event can honour. */
export interface RuleEffect {
  readonly ruleId: string;
  readonly decision?: DecisionKind | undefined;
  readonly reason?: string | undefined;
  readonly context?: string | undefined;
  readonly systemMessage?: string | undefined;
  readonly updatedInput?: Readonly<Record<string, unknown>> | undefined;
  /** Also end the agent's turn (`continue: false`), as Claude Code's own prompt hooks do. */
  readonly stop?: boolean | undefined;
  /** What the user is shown when the turn ends (`stopReason`); defaults to `reason`. */
  readonly stopReason?: string | undefined;
  /**
   * The rule's decision when the event cannot carry it (an `ask` on PermissionRequest): it is
   * never sent, but it still outranks lower decisions, so an `allow` below it does not win.
   */
  readonly withheld?: DecisionKind | undefined;
}

export interface Decision {
  /** `none`: no rule has an opinion; the client's own permission flow decides. */
  readonly kind: DecisionKind | "none";
  readonly reason?: string | undefined;
  readonly context?: string | undefined;
  readonly systemMessage?: string | undefined;
  readonly updatedInput?: Readonly<Record<string, unknown>> | undefined;
  readonly stop?: boolean | undefined;
  readonly stopReason?: string | undefined;
  /** Ids of the rules whose decision won (all of the winning kind). */
  readonly decidedBy: readonly string[];
}

export const NO_DECISION: Decision = { kind: "none", decidedBy: [] };

/** deny and block outrank defer, which outranks ask, which outranks allow. */
const RANK: Readonly<Record<DecisionKind, number>> = { allow: 1, ask: 2, defer: 3, deny: 4, block: 4 };

export function combineEffects(effects: readonly RuleEffect[]): Decision {
  let winner: DecisionKind | undefined;
  let withheld = 0;
  for (const effect of effects) {
    if (effect.decision && (!winner || RANK[effect.decision] > RANK[winner])) winner = effect.decision;
    if (effect.withheld) withheld = Math.max(withheld, RANK[effect.withheld]);
  }
  // A decision the event cannot carry outranks the ones below it: none is sent. An ask and an
  // allow on PermissionRequest leave the dialog to the user, as the ask meant.
  if (winner && withheld > RANK[winner]) winner = undefined;
  const winning = winner ? effects.filter((e) => e.decision && RANK[e.decision] === RANK[winner]) : [];
  const reasons = winning.map((e) => e.reason).filter((r): r is string => !!r);
  const contexts = effects.map((e) => e.context).filter((c): c is string => !!c);
  const messages = effects.map((e) => e.systemMessage).filter((m): m is string => !!m);
  const updatedInput = winner === "allow" ? winning.find((e) => e.updatedInput)?.updatedInput : undefined;
  return {
    kind: winner ?? "none",
    reason: reasons.length > 0 ? reasons.join("; ") : undefined,
    context: contexts.length > 0 ? contexts.join("\n\n") : undefined,
    systemMessage: messages.length > 0 ? messages.join("\n") : undefined,
    updatedInput,
    // `continue: false` outranks every decision in Claude Code, so any rule may end the turn; the
    // user is told why by the first of them that says, not left without a word when an earlier
    // one said nothing.
    stop: effects.some((e) => e.stop) || undefined,
    stopReason: effects.find((e) => e.stop && e.stopReason)?.stopReason,
    decidedBy: winning.map((e) => e.ruleId),
  };
}

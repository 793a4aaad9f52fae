import { describe, expect, it } from "vitest";
import { combineEffects } from "../../src/core/decision.js";

describe("combineEffects", () => {
  it("is no decision when nothing has an opinion", () => {
    expect(combineEffects([])).toEqual({ kind: "none", decidedBy: [] });
    expect(combineEffects([{ ruleId: "a" }]).kind).toBe("none");
  });

  it.each([
    [["allow", "deny"], "deny"],
    [["ask", "allow"], "ask"],
    [["ask", "defer"], "defer"],
    [["defer", "deny"], "deny"],
    [["block", "allow"], "block"],
    [["allow", "allow"], "allow"],
  ] as const)("%j combine to %s", (kinds, expected) => {
    const effects = kinds.map((decision, i) => ({ ruleId: `r${i}`, decision }));
    expect(combineEffects(effects).kind).toBe(expected);
  });

  it("joins the reasons of the winning kind only, in rule order", () => {
    const decision = combineEffects([
      { ruleId: "a", decision: "deny", reason: "first" },
      { ruleId: "b", decision: "ask", reason: "loser" },
      { ruleId: "c", decision: "deny", reason: "second" },
    ]);
    expect(decision.reason).toBe("first; second");
    expect(decision.decidedBy).toEqual(["a", "c"]);
  });

  it("ranks deny and block alike: the first of them names the kind, and both give their reasons", () => {
    const decision = combineEffects([
      { ruleId: "a", decision: "deny", reason: "denied" },
      { ruleId: "b", decision: "block", reason: "blocked" },
    ]);
    expect(decision).toMatchObject({ kind: "deny", reason: "denied; blocked", decidedBy: ["a", "b"] });
    expect(
      combineEffects([
        { ruleId: "a", decision: "block" },
        { ruleId: "b", decision: "deny" },
      ]).kind,
    ).toBe("block");
  });

  it("lets a withheld decision silence only the decisions below it", () => {
    // An ask the event cannot carry (PermissionRequest) leaves the user's dialog, not an allow.
    expect(
      combineEffects([
        { ruleId: "a", withheld: "ask" },
        { ruleId: "b", decision: "allow" },
      ]),
    ).toMatchObject({ kind: "none", decidedBy: [] });
    expect(
      combineEffects([
        { ruleId: "a", withheld: "ask" },
        { ruleId: "b", decision: "ask", reason: "asked" },
      ]),
    ).toMatchObject({ kind: "ask", reason: "asked", decidedBy: ["b"] });
  });

  it("keeps every systemMessage in rule order, whatever the decision", () => {
    const decision = combineEffects([
      { ruleId: "a", decision: "allow", systemMessage: "one" },
      { ruleId: "b", decision: "deny", systemMessage: "two" },
    ]);
    expect(decision.systemMessage).toBe("one\ntwo");
  });

  it("concatenates every context in rule order, whatever the decision", () => {
    const decision = combineEffects([
      { ruleId: "a", context: "one" },
      { ruleId: "b", decision: "deny", context: "two" },
    ]);
    expect(decision.context).toBe("one\n\ntwo");
  });

  it("uses updatedInput only when the final decision is allow", () => {
    const input = { file_path: "/p/.env.example" };
    expect(combineEffects([{ ruleId: "a", decision: "allow", updatedInput: input }]).updatedInput).toEqual(
      input,
    );
    expect(
      combineEffects([
        { ruleId: "a", decision: "allow", updatedInput: input },
        { ruleId: "b", decision: "ask" },
      ]).updatedInput,
    ).toBeUndefined();
    // Not even from the winning rule itself: only an allow runs the call rewritten.
    expect(
      combineEffects([{ ruleId: "a", decision: "ask", updatedInput: input }]).updatedInput,
    ).toBeUndefined();
  });

  it("sends the updatedInput of the first allow in rule order that has one, as the README says", () => {
    const first = { command: "npm test -- --ci" };
    const decision = combineEffects([
      { ruleId: "a", decision: "allow" },
      { ruleId: "b", decision: "allow", updatedInput: first },
      { ruleId: "c", decision: "allow", updatedInput: { command: "npm test" } },
    ]);
    expect(decision.updatedInput).toBe(first);
    expect(decision.decidedBy).toEqual(["a", "b", "c"]);
  });
});

describe("ending the turn", () => {
  it("keeps a stop from any rule, even one without a decision, as Claude Code ranks continue false first", () => {
    const decision = combineEffects([
      { ruleId: "a", decision: "allow" },
      { ruleId: "b", stop: true, stopReason: "the team server ended the turn" },
    ]);
    expect(decision).toMatchObject({
      kind: "allow",
      stop: true,
      stopReason: "the team server ended the turn",
    });
  });

  it("tells why from the first rule that says, when an earlier one ends the turn without a word", () => {
    // Two team servers: one answers `continue: false` alone, the next with its stopReason. The
    // answer was `{"continue": false}`, the user told nothing of why the turn ended.
    const decision = combineEffects([
      { ruleId: "a", stop: true },
      { ruleId: "b", stop: true, stopReason: "the release freeze is on" },
    ]);
    expect(decision).toMatchObject({ stop: true, stopReason: "the release freeze is on" });
  });

  it("takes the stopReason from a rule that ends the turn, never from one that does not", () => {
    const decision = combineEffects([
      { ruleId: "a", stopReason: "a reason with no stop" },
      { ruleId: "b", stop: true, stopReason: "the turn ends" },
    ]);
    expect(decision).toMatchObject({ stop: true, stopReason: "the turn ends" });
  });
});

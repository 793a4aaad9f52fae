/**
 * A Bash call's command words are worked out at most once per event: simulate asks for them per
 * rule, and building them from a long command for each of many rules blocked the event loop.
 */
import { beforeEach, describe, expect, it, vi } from "vitest";

const splits = vi.hoisted(() => ({ count: 0 }));
vi.mock("../../src/core/permission-rule.js", async (importOriginal) => {
  const actual = await importOriginal<typeof import("../../src/core/permission-rule.js")>();
  return {
    ...actual,
    commandWords: (command: unknown) => {
      splits.count++;
      return actual.commandWords(command);
    },
  };
});

const { evaluatePolicy } = await import("../../src/core/evaluate.js");
const { parseHookEvent } = await import("../../src/core/events.js");
const { policyFrom } = await import("../support/policy.js");

const bash = (command: string) => {
  const parsed = parseHookEvent({
    session_id: "s",
    transcript_path: "/t.jsonl",
    cwd: "/p",
    hook_event_name: "PreToolUse",
    tool_name: "Bash",
    tool_input: { command },
  });
  if (!parsed.ok) throw new Error(parsed.error.message);
  return parsed.value;
};

describe("a Bash call's command words", () => {
  beforeEach(() => {
    splits.count = 0;
  });

  it("are worked out once per event by simulate, whatever the number of rules with if words", async () => {
    const rules = Array.from({ length: 50 }, (_, i) => ({
      id: `tool-${i}`,
      on: "PreToolUse",
      matcher: "Bash",
      if: `Bash(tool${i} *)`,
      decide: "deny",
      reason: "r",
    }));
    const policy = await policyFrom({ version: 1, rules });
    const explained = evaluatePolicy(policy, bash("tool7 --all && ls"), { team: "default" }, true);
    expect(explained.enforced.map((m) => m.rule.id)).toEqual(["tool-7"]);
    expect(explained.explanations).toHaveLength(50);
    expect(splits.count).toBe(1);
    splits.count = 0;
    const decided = evaluatePolicy(policy, bash("tool7 --all && ls"), { team: "default" });
    expect(decided.enforced.map((m) => m.rule.id)).toEqual(["tool-7"]);
    expect(splits.count).toBe(1);
  });

  it("are not worked out when no rule's if patterns start with a word", async () => {
    const policy = await policyFrom({
      version: 1,
      rules: [{ id: "w", on: "PreToolUse", matcher: "Bash", where: { cwd: "/p" }, context: "c" }],
    });
    const decided = evaluatePolicy(policy, bash("rm -rf /"), { team: "default" });
    expect(decided.enforced.map((m) => m.rule.id)).toEqual(["w"]);
    expect(splits.count).toBe(0);
    // Nor by simulate, which explains every rule of the event.
    const explained = evaluatePolicy(policy, bash("rm -rf /"), { team: "default" }, true);
    expect(explained.explanations?.map((e) => [e.ruleId, e.applied])).toEqual([["w", true]]);
    expect(splits.count).toBe(0);
  });
});

describe("a deny rule that names a wrapper", () => {
  it("applies to a command run through it, whose words the wrapper starts", async () => {
    const policy = await policyFrom({
      version: 1,
      rules: [
        {
          id: "no-nohup",
          on: "PreToolUse",
          matcher: "Bash",
          if: "Bash(nohup *)",
          decide: "deny",
          reason: "r",
        },
      ],
    });
    const decided = evaluatePolicy(policy, bash("cd app && nohup ./server > out.log &"), { team: "default" });
    expect(decided.enforced.map((m) => m.rule.id)).toEqual(["no-nohup"]);
  });
});

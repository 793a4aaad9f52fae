import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { evaluatePolicy } from "../../src/core/evaluate.js";
import { parseHookEvent } from "../../src/core/events.js";
import type { HookEvent } from "../../src/core/hook-event.js";
import { policyFrom } from "../support/policy.js";

const TOOLS = ["Bash", "Edit", "Write", "Read", "mcp__github__create_issue"] as const;

const toolEvent = (name: string, tool: string | undefined): HookEvent => {
  const parsed = parseHookEvent({
    session_id: "s",
    transcript_path: "/home/dev/.claude/projects/p/s.jsonl",
    cwd: "/home/dev/proj",
    hook_event_name: name,
    ...(tool === undefined ? {} : { tool_name: tool, tool_input: { command: "ls", file_path: "/tmp/a" } }),
    prompt: "hi",
  });
  if (!parsed.ok) throw new Error(parsed.error.message);
  return parsed.value;
};

describe("the rule index", () => {
  it("keeps only rules whose exact-name matcher can match, in file order", async () => {
    const policy = await policyFrom({
      version: 1,
      rules: [
        { id: "edit", on: "PreToolUse", matcher: "Edit|Write", context: "e" },
        { id: "regex", on: "PreToolUse", matcher: "mcp__.*", context: "r" },
        { id: "bash", on: "PreToolUse", matcher: "Bash", context: "b" },
        { id: "any", on: "PreToolUse", context: "a" },
        { id: "all-events", on: "*", matcher: "Bash", context: "w" },
        { id: "prompt", on: "UserPromptSubmit", matcher: "Bash", context: "p" },
      ],
    });
    const ids = (event: string, value: string | undefined) =>
      policy.candidates(event, value).map((r) => r.id);
    expect(ids("PreToolUse", "Bash")).toEqual(["regex", "bash", "any", "all-events"]);
    expect(ids("PreToolUse", "Write")).toEqual(["edit", "regex", "any"]);
    expect(ids("PreToolUse", "Unknown")).toEqual(["regex", "any"]);
    expect(ids("PreToolUse", undefined)).toEqual(["regex", "any"]);
    // UserPromptSubmit has no matcher field: its matchers are ignored, every rule is a candidate.
    expect(ids("UserPromptSubmit", undefined)).toEqual(["all-events", "prompt"]);
    // An event no rule names still gets the rules for every event, matcher included.
    expect(ids("PostToolUse", "Bash")).toEqual(["all-events"]);
    expect(ids("PostToolUse", "Edit")).toEqual([]);
    expect(policy.rulesFor("PreToolUse").map((r) => r.id)).toEqual([
      "edit",
      "regex",
      "bash",
      "any",
      "all-events",
    ]);
  });

  it("decides exactly what a scan of every rule decides, on any policy and event", async () => {
    const matcher = fc.oneof(
      fc.constant(undefined),
      fc.constantFrom("*", "", "Bash", "Edit|Write", "Write|Bash|Read", "mcp__.*", "B.sh", "Nope"),
    );
    const ruleArb = fc.record({
      on: fc.constantFrom("*", "PreToolUse", "PostToolUse", "UserPromptSubmit", ["PreToolUse", "Stop"]),
      matcher,
      team: fc.boolean(),
      decide: fc.constantFrom("allow", "deny", "ask"),
      shadow: fc.boolean(),
    });
    const eventArb = fc.record({
      name: fc.constantFrom("PreToolUse", "PostToolUse", "UserPromptSubmit", "Stop"),
      tool: fc.option(fc.constantFrom(...TOOLS, "Other"), { nil: undefined }),
      team: fc.constantFrom("a", "b"),
    });
    await fc.assert(
      fc.asyncProperty(fc.array(ruleArb, { maxLength: 12 }), eventArb, async (rules, e) => {
        const policy = await policyFrom({
          version: 1,
          rules: rules.map((r, i) => ({
            id: `r${i}`,
            on: r.on,
            ...(r.matcher === undefined ? {} : { matcher: r.matcher }),
            ...(r.team ? { teams: ["a"] } : {}),
            ...(r.shadow ? { mode: "shadow" } : {}),
            decide: r.decide,
          })),
        });
        const tool = e.name === "PreToolUse" || e.name === "PostToolUse" ? (e.tool ?? "Bash") : undefined;
        const event = toolEvent(e.name, tool);
        const indexed = evaluatePolicy(policy, event, { team: e.team });
        const scanned = evaluatePolicy(policy, event, { team: e.team }, true);
        const applied = (scanned.explanations ?? []).filter((x) => x.applied).map((x) => x.ruleId);
        expect([...indexed.enforced, ...indexed.shadowed].map((m) => m.rule.id).sort()).toEqual(
          applied.sort(),
        );
        expect(indexed.enforced.map((m) => m.effect)).toEqual(scanned.enforced.map((m) => m.effect));
      }),
      { numRuns: 300 },
    );
  });
});

/**
 * replay's report counts by names from the records (a team, a tool, a rule, a policy hash): a
 * name like one of an object's built-in members ("__proto__", "constructor") is counted as any
 * other name, and changes no other count.
 */
import { describe, expect, it } from "vitest";
import type { ReplayRecord } from "../../src/app/handle-hook.js";
import { replayImpact } from "../../src/app/replay.js";
import { policyFrom, sha256 } from "../support/policy.js";

const record = (team: string, tool: string, policy = "p"): ReplayRecord => ({
  time: "2026-11-29T23:21:01.569Z",
  decisionId: `${team}-${tool}`,
  policy,
  client: "claude-code",
  team,
  event: {
    session_id: "s",
    transcript_path: "/t",
    cwd: "/c",
    hook_event_name: "PreToolUse",
    tool_name: tool,
    tool_input: { x: 1 },
  },
  decision: "none",
  rules: [],
  shadow: [],
});

describe("replay counts names like an object's built-in members as names", () => {
  it("counts a tool __proto__, a team constructor and a rule toString apart, leaving other counts alone", async () => {
    const candidate = await policyFrom({
      version: 1,
      rules: [{ id: "toString", on: "PreToolUse", decide: "deny", reason: "no" }],
    });
    const records = [
      record("constructor", "__proto__", "__proto__"),
      record("default", "toString", "constructor"),
      record("__proto__", "Bash"),
    ];
    const report = await replayImpact(
      { clock: { now: () => 0, monotonic: () => 0 }, newId: () => "id", sha256 },
      candidate,
      records,
    );
    expect(Object.getPrototypeOf({})).toBe(Object.prototype);
    expect(Object.keys(Object.prototype)).toEqual([]);
    expect(JSON.parse(JSON.stringify(report))).toMatchObject({
      changed: 3,
      byChange: { "none->deny": 3 },
      byTeam: {
        constructor: { "none->deny": 1 },
        default: { "none->deny": 1 },
        ["__proto__"]: { "none->deny": 1 },
      },
      byTool: {
        ["__proto__"]: { "none->deny": 1 },
        toString: { "none->deny": 1 },
        Bash: { "none->deny": 1 },
      },
      byRule: { toString: { "none->deny": 3 } },
      recordedPolicies: { ["__proto__"]: 1, constructor: 1, p: 1 },
    });
    expect(Object.keys(report.byTeam).sort()).toEqual(["__proto__", "constructor", "default"]);
    expect(Object.keys(report.byTool).sort()).toEqual(["Bash", "__proto__", "toString"]);
    expect(Object.keys(report.recordedPolicies).sort()).toEqual(["__proto__", "constructor", "p"]);
  });
});

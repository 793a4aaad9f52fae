/**
 * The Worker's audit line inside workerd: the fields README.md's "Audit log" documents, as Node
 * writes them (test/e2e/audit-schema.test.ts), `time` included.
 */
import { env } from "cloudflare:test";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { WorkerEnv } from "../../src/entry/workers.js";
import { AUDIT_LINE } from "../support/audit-line.js";
import { answerHook } from "./answer-hook.js";

const policy = {
  version: 1,
  rules: [{ id: "no-rm", on: "PreToolUse", if: "Bash(rm *)", decide: "deny", reason: "no rm" }],
};

afterEach(() => {
  vi.restoreAllMocks();
});

describe("the Worker's audit line", () => {
  it("has the documented fields, and those a Node gateway writes for the same deny", async () => {
    const lines: string[] = [];
    vi.spyOn(console, "log").mockImplementation((line: string) => lines.push(line));
    const res = await answerHook(
      {
        session_id: "s",
        transcript_path: "/t",
        cwd: "/p",
        hook_event_name: "PreToolUse",
        tool_name: "Bash",
        tool_input: { command: "rm -rf build" },
      },
      { ...env, HOOKGATE_POLICY: JSON.stringify(policy) } as WorkerEnv,
    );
    expect(res.status).toBe(200);
    const line = JSON.parse(lines.find((l) => l.includes('"msg":"decision"')) ?? "{}");
    expect(AUDIT_LINE.safeParse(line).error?.issues ?? []).toEqual([]);
    expect(Object.keys(line)).toEqual([
      "time",
      "level",
      "msg",
      "decisionId",
      "policy",
      "team",
      "client",
      "event",
      "tool",
      "sessionId",
      "rules",
      "shadow",
      "pending",
      "notify",
      "decision",
      "reason",
      "latencyMs",
      "toolInput",
    ]);
    expect(line).toMatchObject({ team: "default", decision: "deny", rules: ["no-rm"] });
  });
});

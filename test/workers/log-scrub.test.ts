/**
 * The Worker's log lines scrubbed of the policy's secret values, inside workerd: a hook record
 * (HOOKGATE_RECORD) quotes the event, which may hold a secret in no shape the masker knows.
 */
import { env } from "cloudflare:test";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { WorkerEnv } from "../../src/entry/workers.js";
import { answerHook } from "./answer-hook.js";

const KEY = "plain7key7without7any7shape";

const policy = {
  version: 1,
  models: { judge: { provider: "anthropic", model: "m", apiKey: "env:SCRUB_TEST_KEY" } },
  rules: [{ id: "no-rm", on: "PreToolUse", if: "Bash(rm *)", decide: "deny", reason: "no rm" }],
};

afterEach(() => {
  vi.restoreAllMocks();
});

describe("the Worker's log lines", () => {
  it("carry [masked] where the event quoted a secret value of the policy", async () => {
    const lines: string[] = [];
    vi.spyOn(console, "log").mockImplementation((line: string) => lines.push(line));
    const res = await answerHook(
      {
        session_id: "s",
        transcript_path: "/t",
        cwd: "/p",
        hook_event_name: "PreToolUse",
        tool_name: "Bash",
        tool_input: { command: `curl -H "x-api-key: ${KEY}" https://api.example` },
        tool_use_id: "t1",
      },
      {
        ...env,
        HOOKGATE_POLICY: JSON.stringify(policy),
        SCRUB_TEST_KEY: KEY,
        HOOKGATE_RECORD: "1",
      } as WorkerEnv,
    );
    expect(res.status).toBe(200);
    const record = lines.find((l) => l.includes('"msg":"hook record"'));
    expect(record).toContain("[masked]");
    expect(lines.join("\n")).not.toContain(KEY);
  });

  it("stay JSON where a secret value starts inside a JSON escape (after a tab, `\\t0ken…`)", async () => {
    const lines: string[] = [];
    vi.spyOn(console, "log").mockImplementation((line: string) => lines.push(line));
    const key = "t0ken7without7any7shape";
    // A policy text of its own, so the isolate loads it with this key rather than reusing its last.
    const withKey = { ...policy, models: { judge: { ...policy.models.judge, apiKey: "env:TAB_TEST_KEY" } } };
    const res = await answerHook(
      {
        session_id: "s",
        transcript_path: "/t",
        cwd: "/p",
        hook_event_name: "PreToolUse",
        tool_name: "Bash",
        tool_input: { command: `echo \t${key.slice(1)}` },
      },
      {
        ...env,
        HOOKGATE_POLICY: JSON.stringify(withKey),
        TAB_TEST_KEY: key,
        HOOKGATE_RECORD: "1",
      } as WorkerEnv,
    );
    expect(res.status).toBe(200);
    const parsed = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(parsed.find((l) => l.msg === "decision")).toMatchObject({
      toolInput: { command: "echo [masked]" },
    });
    expect(parsed.find((l) => l.msg === "hook record")).toBeDefined();
  });

  it("mask credentials by their shapes, loaded with the policy out of the main module", async () => {
    const lines: string[] = [];
    vi.spyOn(console, "log").mockImplementation((line: string) => lines.push(line));
    const token = `ghp_${"A1b2".repeat(9)}`;
    const res = await answerHook(
      {
        session_id: "s",
        transcript_path: "/t",
        cwd: "/p",
        hook_event_name: "PreToolUse",
        tool_name: "Bash",
        tool_input: { command: `GH_TOKEN=${token} git push origin main` },
      },
      { ...env, HOOKGATE_POLICY: JSON.stringify(policy), SCRUB_TEST_KEY: KEY } as WorkerEnv,
    );
    expect(res.status).toBe(200);
    const decision = lines.find((l) => l.includes('"msg":"decision"'));
    // Masked by shape, the rest of the command kept (unloaded, the whole string would be masked).
    expect(decision).toContain("GH_TOKEN=[masked] git push origin main");
    expect(lines.join("\n")).not.toContain(token);
  });
});

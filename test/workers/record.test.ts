/**
 * The Worker's HOOKGATE_RECORD inside workerd: `1` writes a "hook record" line per decision,
 * whether it came as text (a secret, `--var`, the dashboard) or as the number a [vars] entry
 * `HOOKGATE_RECORD = 1` in wrangler.toml binds (wrangler binds a [vars] value that is no string
 * as JSON).
 */
import { env } from "cloudflare:test";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { WorkerEnv } from "../../src/entry/workers.js";
import { answerHook } from "./answer-hook.js";

const policy = {
  version: 1,
  rules: [{ id: "no-rm", on: "PreToolUse", if: "Bash(rm *)", decide: "deny", reason: "no rm" }],
};

afterEach(() => {
  vi.restoreAllMocks();
});

/** The "hook record" lines of one hook answered with this HOOKGATE_RECORD. */
async function recordsWith(record: unknown): Promise<string[]> {
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
    { ...env, HOOKGATE_POLICY: JSON.stringify(policy), HOOKGATE_RECORD: record } as WorkerEnv,
  );
  expect(res.status).toBe(200);
  return lines.filter((l) => l.includes('"msg":"hook record"'));
}

describe("the Worker's HOOKGATE_RECORD", () => {
  it.each([
    ["the text 1", "1"],
    ["the number 1 of a [vars] entry", 1],
  ])("as %s writes a hook record per decision", async (_, value) => {
    expect(await recordsWith(value)).toHaveLength(1);
  });

  it.each([
    ["unset", undefined],
    ["0", "0"],
    ["the number 0", 0],
  ])("%s writes none", async (_, value) => {
    expect(await recordsWith(value)).toEqual([]);
  });
});

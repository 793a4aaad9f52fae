/**
 * The Worker's HOOKGATE_LOG_LEVEL inside workerd: a level name sets the lowest level written; a
 * value that is no level (an Object.prototype name among them) counts as `info` and says so.
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

/** The console lines of one hook answered with this HOOKGATE_LOG_LEVEL. */
async function linesWith(level: string): Promise<{ info: string[]; warn: string[] }> {
  const info: string[] = [];
  const warn: string[] = [];
  vi.spyOn(console, "log").mockImplementation((line: string) => info.push(line));
  vi.spyOn(console, "warn").mockImplementation((line: string) => warn.push(line));
  const res = await answerHook(
    {
      session_id: "s",
      transcript_path: "/t",
      cwd: "/p",
      hook_event_name: "PreToolUse",
      tool_name: "Bash",
      tool_input: { command: "rm -rf build" },
    },
    { ...env, HOOKGATE_POLICY: JSON.stringify(policy), HOOKGATE_LOG_LEVEL: level } as WorkerEnv,
  );
  expect(res.status).toBe(200);
  return { info, warn };
}

describe("the Worker's HOOKGATE_LOG_LEVEL", () => {
  it("drops info lines at warn, and says nothing of the level", async () => {
    const { info, warn } = await linesWith("warn");
    expect(info.filter((l) => l.includes('"msg":"decision"'))).toEqual([]);
    expect(warn.join("\n")).not.toContain("HOOKGATE_LOG_LEVEL");
  });

  // `toString` and `constructor` were looked up on Object.prototype: no warning, every level written.
  it.each(["toString", "constructor", "verbose"])(
    "counts %s as info and says once that it is no level",
    async (level) => {
      const first = await linesWith(level);
      expect(first.info.some((l) => l.includes('"msg":"decision"'))).toBe(true);
      const told = first.warn.filter((l) => l.includes("HOOKGATE_LOG_LEVEL is no level"));
      expect(told.map((l) => JSON.parse(l) as Record<string, unknown>)).toEqual([
        expect.objectContaining({ level: "warn", value: level, levels: "debug, info, warn, error" }),
      ]);
      vi.restoreAllMocks();
      const second = await linesWith(level);
      expect(second.warn.join("\n")).not.toContain("HOOKGATE_LOG_LEVEL");
    },
  );
});

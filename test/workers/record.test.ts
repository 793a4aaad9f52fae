/**
 * The Worker's HOOKGATE_RECORD inside workerd: `1` writes a "hook record" line per decision,
 * whether it came as text (a secret, `--var`, the dashboard) or as the number a [vars] entry
 * `HOOKGATE_RECORD = 1` in wrangler.toml binds (wrangler binds a [vars] value that is no string
 * as JSON); a value that is neither 1 nor 0 (`true`) writes none and says so once.
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
  return (await linesWith(record)).records;
}

/** The "hook record" lines and the warnings of one hook answered with this HOOKGATE_RECORD. */
async function linesWith(record: unknown): Promise<{ records: string[]; warn: string[] }> {
  const lines: string[] = [];
  const warn: string[] = [];
  vi.spyOn(console, "log").mockImplementation((line: string) => lines.push(line));
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
    { ...env, HOOKGATE_POLICY: JSON.stringify(policy), HOOKGATE_RECORD: record } as WorkerEnv,
  );
  expect(res.status).toBe(200);
  return { records: lines.filter((l) => l.includes('"msg":"hook record"')), warn };
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
  ])("%s writes none, and says nothing of it", async (_, value) => {
    const { records, warn } = await linesWith(value);
    expect(records).toEqual([]);
    expect(warn.join("\n")).not.toContain("HOOKGATE_RECORD");
  });

  // `HOOKGATE_RECORD = true` in [vars] binds the boolean: it wrote no record, without a word.
  it.each([
    ["the boolean true of a [vars] entry", true, "(a boolean)"],
    ["the text yes", "yes", "yes"],
  ])("as %s writes none and says once that it is neither 1 nor 0", async (_, value, shown) => {
    const first = await linesWith(value);
    expect(first.records).toEqual([]);
    const told = first.warn.filter((l) => l.includes("HOOKGATE_RECORD is neither 1 nor 0"));
    expect(told.map((l) => JSON.parse(l) as Record<string, unknown>)).toEqual([
      expect.objectContaining({ level: "warn", value: shown, fix: expect.stringContaining("set it to 1") }),
    ]);
    vi.restoreAllMocks();
    const second = await linesWith(value);
    expect(second.warn.join("\n")).not.toContain("HOOKGATE_RECORD");
  });
});

/**
 * What `check` tells a policy's author to write must pass `check` itself: each case's mistake is
 * mended as its message says, and the rule is checked again.
 */
import { describe, expect, it } from "vitest";
import { loadPolicy, type PolicyIssue } from "../../src/core/policy.js";
import { lintPolicy } from "../../src/core/policy-lint.js";
import { sha256 } from "../support/policy.js";

type Rule = Record<string, unknown>;

/** What check prints of a policy of this one rule: its errors, else its warnings, of the rule alone. */
async function problemsOf(rule: Rule): Promise<PolicyIssue[]> {
  const text = JSON.stringify({ version: 1, auth: { tokens: [{ team: "t", env: "T" }] }, rules: [rule] });
  const loaded = await loadPolicy(text, { env: () => "token", sha256 });
  const issues = loaded.ok ? [...loaded.value.warnings, ...lintPolicy(loaded.value.policy)] : loaded.error;
  return issues.filter((issue) => issue.path.startsWith("$.rules[0]"));
}

/** The value after the message's "write": a JSON string or object, or a `"key": value` pair. */
function suggestion(message: string): { key?: string; value: unknown } {
  const json = /"(?:[^"\\]|\\.)*"|\{[^{}]*\}/y;
  const at = message.indexOf(" write ");
  expect(at, message).toBeGreaterThan(-1);
  json.lastIndex = at + " write ".length;
  const first = json.exec(message)?.[0];
  expect(first, message).toBeDefined();
  const value: unknown = JSON.parse(first as string);
  if (!message.startsWith(": ", json.lastIndex)) return { value };
  json.lastIndex += 2;
  return { key: value as string, value: JSON.parse(json.exec(message)?.[0] ?? "null") };
}

const onBash = (where: Rule, decide = "deny"): Rule => ({
  id: "r",
  on: "PreToolUse",
  matcher: "Bash",
  where,
  decide,
});
const onRead = (where: Rule): Rule => ({ id: "r", on: "PreToolUse", matcher: "Read", where, decide: "deny" });

/** Each case: a rule with a mistake, and how the suggestion mends it. */
const CASES: readonly (readonly [string, Rule, (rule: Rule, s: { key?: string; value: unknown }) => Rule])[] =
  [
    [
      "an if written with a colon before a system path",
      { id: "r", on: "PreToolUse", if: "Read:/etc/passwd", decide: "deny" },
      (rule, s) => ({ ...rule, if: s.value }),
    ],
    [
      "an if written as a lower-case tool and a path",
      { id: "r", on: "PreToolUse", if: "read ~/.ssh", decide: "deny" },
      (rule, s) => ({ ...rule, if: s.value }),
    ],
    [
      "an if written as a bare command",
      { id: "r", on: "PreToolUse", if: "rm -rf *", decide: "deny" },
      (rule, s) => ({ ...rule, if: s.value }),
    ],
    [
      "an if with one / before a system folder",
      { id: "r", on: "PreToolUse", if: "Read(/etc/passwd)", decide: "deny" },
      (rule, s) => ({ ...rule, if: s.value }),
    ],
    [
      "a where regex between slashes",
      onBash({ "tool_input.command": { regex: "/^rm\\s+-rf/i" } }),
      (rule, s) => ({ ...rule, where: { "tool_input.command": { regex: s.value } } }),
    ],
    [
      "a where regex between slashes with JavaScript's g and m flags",
      onBash({ "tool_input.command": { regex: "/sudo/gm" } }),
      (rule, s) => ({ ...rule, where: { "tool_input.command": { regex: s.value } } }),
    ],
    [
      "a where glob on a command",
      onBash({ "tool_input.command": { glob: "rm -rf *" } }),
      (rule, s) => {
        const { where: _, ...rest } = rule;
        return { ...rest, [s.key as string]: s.value };
      },
    ],
    [
      "a where glob with no folder on a path",
      onRead({ "tool_input.file_path": { glob: "*.env" } }),
      (rule, s) => ({ ...rule, where: { "tool_input.file_path": { glob: s.value } } }),
    ],
    [
      "a where glob relative to the project on a path",
      onRead({ "tool_input.file_path": { glob: "./src/*.ts" } }),
      (rule, s) => ({ ...rule, where: { "tool_input.file_path": { glob: s.value } } }),
    ],
    [
      "a where glob relative to the project on an allow's path",
      { ...onRead({ "tool_input.file_path": { glob: "src/*.ts" } }), decide: "allow" },
      (rule, s) => ({ ...rule, where: { "tool_input.file_path": { glob: s.value } } }),
    ],
    [
      "a where glob relative to the project on the folder",
      { id: "r", on: "UserPromptSubmit", where: { cwd: { glob: "proj/" } }, context: "c" },
      (rule, s) => ({ ...rule, where: { cwd: { glob: s.value } } }),
    ],
    [
      "a where glob from the home folder on a path",
      onRead({ "tool_input.file_path": { glob: "~/.ssh/*" } }),
      (rule, s) => ({ ...rule, where: { "tool_input.file_path": { glob: s.value } } }),
    ],
    [
      "a where contains of a list on a command",
      onBash({ "tool_input.command": { contains: ["rm", "-rf"] } }),
      (rule, s) => ({ ...rule, where: { "tool_input.command": s.value } }),
    ],
    [
      "a where contains of a list on an allow's command",
      onBash({ "tool_input.command": { contains: ["npm", "test"] } }, "allow"),
      (rule, s) => ({ ...rule, where: { "tool_input.command": s.value } }),
    ],
    [
      "a where on a tool's whole input compared with a string",
      onBash({ tool_input: "rm -rf /" }),
      (rule, s) => ({ ...rule, where: { [s.value as string]: "rm -rf /" } }),
    ],
    [
      "a where regex on a path written as a glob",
      onRead({ "tool_input.file_path": { regex: "secrets/*.env" } }),
      (rule, s) => ({ ...rule, where: { "tool_input.file_path": s.value } }),
    ],
    [
      "a matcher of tools separated by commas",
      { id: "r", on: "PreToolUse", matcher: "Write,Edit", decide: "ask" },
      (rule, s) => ({ ...rule, matcher: s.value }),
    ],
  ];

describe("check's suggestions pass check", () => {
  it.each(CASES)("for %s", async (_what, rule, mend) => {
    const before = await problemsOf(rule);
    expect(before.length, "the case has a mistake").toBeGreaterThan(0);
    const told = before.find((issue) => / write /.test(issue.message));
    expect(told, JSON.stringify(before)).toBeDefined();
    const mended = mend(rule, suggestion(told?.message ?? ""));
    expect(await problemsOf(mended)).toEqual([]);
  });
});

import { describe, expect, it } from "vitest";
import type { HookEvent } from "../../src/core/hook-event.js";
import { compileMatcher, eventReadsMatcher, matcherValue } from "../../src/core/matcher.js";

function matches(matcher: string | undefined, value: string | undefined): boolean {
  const compiled = compileMatcher(matcher);
  if (!compiled.ok) throw new Error(compiled.error);
  return compiled.value === undefined || compiled.value(value);
}

describe("compileMatcher", () => {
  it.each([
    [undefined, "Bash", true],
    ["", "Bash", true],
    ["*", "anything", true],
    ["*", undefined, true],
    ["Bash", "Bash", true],
    ["Bash", "BashOutput", false],
    ["Bash", "bash", false],
    ["Write|Edit", "Edit", true],
    ["Write|Edit", "Write", true],
    ["Write|Edit", "MultiEdit", false],
    ["mcp__.*", "mcp__github__create_issue", true],
    ["mcp__.*", "Bash", false],
    ["mcp__(github|gitlab)__.*", "mcp__gitlab__merge", true],
    ["mcp__(github|gitlab)__.*", "mcp__jira__x", false],
    // POLICY.md: a value with | is split, each part an exact name or a regex.
    ["Bash|mcp__.*", "Bash", true],
    ["Bash|mcp__.*", "mcp__github__create_issue", true],
    ["Bash|mcp__.*", "BashOutput", false],
    ["Read|mcp__.*", "ReadMcpResourceTool", false],
    ["Edit.*|Write", "NotebookEdit", true],
    ["Edit.*|Write", "WriteFile", false],
    // A part that does not compile alone: the | is inside a group or class, one regex.
    ["[|]x|y", "|x", true],
    ["^(Bash|Read)$", "Read", true],
    ["^(Bash|Read)$", "BashOutput", false],
    ["mcp__.*|", "Read", false],
    ["mcp__.*|", "mcp__x", true],
    ["(?i)bash|read", "READ", true],
    // A hunt: only a flag group is meant for the whole value; a group with content is a part.
    ["(?:mcp__.*)|Bash", "BashOutput", false],
    ["(?:mcp__.*)|Bash", "Bash", true],
    ["(?:mcp__.*)|Bash", "mcp__x", true],
    ["(?i:bash)|Read", "BASH", true],
    ["(?i:bash)|Read", "ReadMore", false],
    ["Notebook.*", "NotebookEdit", true],
    ["^Read$", "Read", true],
    ["^Read$", "ReadMore", false],
    ["Bash", undefined, false],
    ["mcp__.*", undefined, false],
  ])("matcher %j against %j is %s", (matcher, value, expected) => {
    expect(matches(matcher, value)).toBe(expected);
  });

  it("runs regexes unanchored, as Claude Code does", () => {
    expect(matches("Edit", "MultiEdit")).toBe(false);
    expect(matches("Ed.t", "MultiEdit")).toBe(true);
  });

  it("rejects a matcher over 200 characters", () => {
    const result = compileMatcher(`${"a|".repeat(100)}b`);
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.error).toMatch(/201 characters long; a matcher may have at most 200/);
  });

  it.each(["(", "a)", "(?=Bash)", "(a)\\1"])("rejects %j, which does not compile under RE2", (pattern) => {
    const result = compileMatcher(pattern);
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.error).toMatch(/not a valid RE2 regular expression/);
  });

  it.each([
    ["*|Write", '"*" matches everything only as the whole matcher: write "*" alone to match every value'],
    ["*Edit", 'a matcher is a regular expression, not a glob: write ".*Edit" for any characters then "Edit"'],
    [
      "Bash|*Edit",
      'a matcher is a regular expression, not a glob: write ".*Edit" for any characters then "Edit"',
    ],
  ])("says what to write for %j, a * written as a glob's, which does not compile", (pattern, hint) => {
    const result = compileMatcher(pattern);
    expect(!result.ok && result.error).toMatch(/^is not a valid RE2 regular expression \(.*\); /);
    expect(!result.ok && result.error.endsWith(`; ${hint}`)).toBe(true);
  });

  it("rejects a matcher under 200 characters whose regex program is too big", () => {
    const result = compileMatcher("mcp__(.*a){30}");
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.error).toMatch(/^is too complex \(program size \d+ > 100\); simplify it/);
  });

  it("stays linear on an evil pattern and a long input", () => {
    const result = compileMatcher("^(a|aa)+$");
    const matches = result.ok ? result.value : undefined;
    expect(matches).toBeTypeOf("function");
    expect(matches?.(`${"a".repeat(50_000)}b`)).toBe(false);
  });
});

describe("matcherValue", () => {
  const event = (name: string, payload: Record<string, unknown>): HookEvent => ({
    name,
    dialect: "claude-code",
    known: true,
    payload: { hook_event_name: name, ...payload },
  });

  it.each([
    ["PreToolUse", { tool_name: "Bash" }, "Bash"],
    ["PermissionDenied", { tool_name: "Write" }, "Write"],
    ["SessionStart", { source: "resume" }, "resume"],
    ["ConfigChange", { source: "user_settings" }, "user_settings"],
    ["PreCompact", { trigger: "auto" }, "auto"],
    ["SubagentStop", { agent_type: "Explore" }, "Explore"],
    ["Notification", { notification_type: "idle_prompt" }, "idle_prompt"],
    ["SessionEnd", { reason: "logout" }, "logout"],
    ["StopFailure", { error: "rate_limit" }, "rate_limit"],
    ["UserPromptExpansion", { command_name: "review" }, "review"],
    ["InstructionsLoaded", { load_reason: "session_start" }, "session_start"],
    ["FileChanged", { file_path: "/p/src/app.ts" }, "app.ts"],
    // Claude Code on Windows sends its own paths, and matches the name after the last `\`.
    ["FileChanged", { file_path: "C:\\Users\\dev\\app\\Makefile" }, "Makefile"],
    ["FileChanged", { file_path: "c:/Users/dev/app/.env" }, ".env"],
    ["FileChanged", { file_path: "\\\\server\\share\\app\\.envrc" }, ".envrc"],
    // On Linux and macOS a backslash is a character of the name.
    ["FileChanged", { file_path: "/p/odd\\name" }, "odd\\name"],
    ["Stop", { reason: "x" }, undefined],
    ["UserPromptSubmit", { prompt: "hi" }, undefined],
    ["PreToolUse", { tool_name: 7 }, undefined],
  ])("%s reads %j as %j", (name, payload, expected) => {
    expect(matcherValue(event(name, payload))).toBe(expected);
  });
  // An agent names the event: one named after an object's own properties reads no matcher.
  it.each([
    ["PreToolUse", true],
    ["FileChanged", true],
    ["Stop", false],
    ["constructor", false],
    ["__proto__", false],
    ["toString", false],
  ])("%s reads a matcher: %s", (name, reads) => {
    expect(eventReadsMatcher(name)).toBe(reads);
  });
});

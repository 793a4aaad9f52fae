import { describe, expect, it } from "vitest";
import { MIN_DEADLINE_MS, requestDeadlineMs } from "../../src/core/deadline.js";
import { evaluatePolicy } from "../../src/core/evaluate.js";
import { parseHookEvent } from "../../src/core/events.js";
import { lintPolicy } from "../../src/core/policy-lint.js";
import { compileWhereGlob } from "../../src/core/where.js";
import { policyFrom } from "../support/policy.js";

/** The warnings `check` prints for these rules, as `path: message`, minus the auth ones. */
async function warningsFor(rules: unknown[], models?: Record<string, unknown>): Promise<string[]> {
  const policy = await policyFrom({ version: 1, auth: { tokens: [] }, rules, ...(models && { models }) });
  return lintPolicy(policy)
    .filter((w) => w.path !== "$.auth.tokens")
    .map((w) => `${w.path}: ${w.message}`);
}

describe("lintPolicy: an event no client sends", () => {
  it("names the event a misspelt one most likely means", async () => {
    const warnings = await warningsFor([
      { id: "a", on: "PreToolUsee", matcher: "Bash", decide: "deny" },
      { id: "b", on: "sessionend", decide: "allow" },
      { id: "c", on: "BrandNewEvent", decide: "allow" },
    ]);
    expect(warnings).toContain(
      '$.rules[0].on: "PreToolUsee" is not an event any supported client sends (accepted in case a client adds it): did you mean PreToolUse?',
    );
    expect(warnings.find((w) => w.startsWith("$.rules[1].on"))).toBe(
      '$.rules[1].on: "sessionend" is SessionEnd in another case; event names are case-sensitive and the gateway refuses an event named "sessionend", so this rule can never apply',
    );
    expect(warnings.find((w) => w.startsWith("$.rules[2].on"))).toMatch(/adds it\)$/);
  });

  it("says to write a list for several events named in one string", async () => {
    // It was told only that no client sends such an event, with no word of what to write.
    const warnings = await warningsFor([
      { id: "a", on: "PreToolUse, PostToolUse", decide: "deny" },
      { id: "b", on: ["Stop|SubagentStop"], context: "c" },
      { id: "c", on: "Stop, Brand New", context: "c" },
    ]);
    expect(warnings.filter((w) => w.includes(".on"))).toEqual([
      '$.rules[0].on: "PreToolUse, PostToolUse" names 2 events in one string, which no client sends as an event\'s name; "on" takes a list: write ["PreToolUse", "PostToolUse"]',
      '$.rules[1].on[0]: "Stop|SubagentStop" names 2 events in one string, which no client sends as an event\'s name; "on" takes a list: write ["Stop", "SubagentStop"]',
      '$.rules[2].on: "Stop, Brand New" is not an event any supported client sends (accepted in case a client adds it)',
    ]);
  });

  it("says nothing of the matcher of a misspelt event: the matcher is right once the name is", async () => {
    // Before, "PreTooluse has no field a matcher is checked against; the matcher is ignored
    // there" beside the name's own warning: deleting the matcher, then mending the name, made a
    // deny of Bash a deny of every tool.
    const warnings = await warningsFor([
      { id: "a", on: "PreTooluse", matcher: "Bash", decide: "deny" },
      { id: "b", on: ["PreToolUsee"], matcher: "Bash", decide: "deny" },
    ]);
    expect(warnings.filter((w) => w.includes(".matcher"))).toEqual([]);
    expect(warnings.filter((w) => w.includes(".on"))).toHaveLength(2);
  });
});

describe("lintPolicy: paths of names that are not identifiers", () => {
  it("quotes a model, sink or header name with a dot or a dash, as errors do", async () => {
    const policy = await policyFrom({
      version: 1,
      auth: { tokens: [] },
      egress: { allowedHttpHookUrls: ["https://policy.example/*"] },
      models: { "m.1": { provider: "anthropic", model: "claude-haiku-4-5", apiKey: "sk-ant-inline" } },
      sinks: { "s.2": { type: "webhook", url: "https://siem.example/in", secret: "whsec_inline" } },
      rules: [
        {
          id: "relay",
          on: "PreToolUse",
          forward: { url: "https://policy.example/hook", headers: { "x-api.key": "sk-inline-secret-value" } },
        },
      ],
    });
    const paths = lintPolicy(policy).map((w) => w.path);
    expect(paths).toEqual(
      expect.arrayContaining(['$.models["m.1"].apiKey', '$.sinks["s.2"].secret', '$.sinks["s.2"]']),
    );
    expect(paths.filter((p) => p.includes("headers"))).toEqual(['$.rules[0].forward.headers["x-api.key"]']);
    expect(paths.some((p) => /\.m\.1|\.s\.2|\.x-api/.test(p))).toBe(false);
  });
});

describe("lintPolicy: a prompt's $n", () => {
  it("says $5 is a word of the event, and that without $ARGUMENTS the event is left out", async () => {
    const models = { m: { provider: "anthropic", model: "claude-haiku-4-5", apiKey: "sk-ant-test" } };
    const prompt = (text: string) => ({ id: "judge", on: "PreToolUse", prompt: { text, model: "m" } });
    const lint = async (text: string) => {
      const policy = await policyFrom({ version: 1, auth: { tokens: [] }, models, rules: [prompt(text)] });
      return lintPolicy(policy)
        .filter((w) => w.path === "$.rules[0].prompt.text")
        .map((w) => w.message);
    };
    expect(await lint("Answer ok false if this may cost more than $5 per hour.")).toEqual([
      '"$5" is replaced by word 5 (counting from 0) of the event\'s JSON, as in Claude Code\'s prompt hooks, and the event itself is then not added to the prompt; write "\\$5" for a literal dollar sign',
    ]);
    expect(await lint("More than $5? $ARGUMENTS")).toEqual([
      '"$5" is replaced by word 5 (counting from 0) of the event\'s JSON, as in Claude Code\'s prompt hooks; write "\\$5" for a literal dollar sign',
    ]);
    expect(await lint("More than \\$5? $ARGUMENTS")).toEqual([]);
    expect(await lint("Is the first word $ARGUMENTS[0] a shell? $5x")).toEqual([]);
  });
});

describe("lintPolicy: rules shadowed by an unconditional deny", () => {
  it("warns about a decide rule after an enforcing deny on every event it matches", async () => {
    const warnings = await warningsFor([
      { id: "deny-bash-tools", on: ["PreToolUse", "PermissionRequest"], decide: "deny", reason: "frozen" },
      { id: "allow-tests", on: "PreToolUse", if: "Bash(npm test)", decide: "allow" },
    ]);
    expect(warnings).toContain(
      '$.rules[1]: is shadowed by rule "deny-bash-tools" ($.rules[0]), which denies every PreToolUse event with no other condition; this rule\'s decision can never apply',
    );
  });

  it("says a prompt or forward rule behind it is never run", async () => {
    const policy = await policyFrom({
      version: 1,
      auth: { tokens: [] },
      rules: [
        { id: "deny-all", on: "*", decide: "block" },
        { id: "judge", on: "Stop", prompt: { text: "done? $ARGUMENTS", model: "m" } },
      ],
      models: { m: { provider: "anthropic", model: "claude-haiku-4-5", apiKey: "env:K" } },
    });
    expect(lintPolicy(policy).map((w) => `${w.path}: ${w.message}`)).toContain(
      '$.rules[1]: is shadowed by rule "deny-all" ($.rules[0]), which denies every Stop event with no other condition; this rule\'s prompt is never run',
    );
  });

  it.each([
    ["a matcher", { matcher: "Bash" }],
    ["an if", { if: "Bash(rm *)" }],
    ["a where", { where: { cwd: "/srv" } }],
    ["teams", { teams: ["a"] }],
    ["shadow mode", { mode: "shadow" }],
  ])("does not count a deny with %s as unconditional", async (_what, condition) => {
    const warnings = await warningsFor([
      { id: "deny", on: "PreToolUse", decide: "deny", ...condition },
      { id: "ask", on: "PreToolUse", decide: "ask" },
    ]);
    expect(warnings.filter((w) => w.includes("is shadowed by"))).toEqual([]);
  });

  it("warns about a rule for calls a deny with only a matcher already denies", async () => {
    // A team policy: "no Bash at all" first, then an ask on git push that can never be asked.
    const warnings = await warningsFor([
      { id: "no-bash", on: "PreToolUse", matcher: "Bash", decide: "deny", reason: "no shell" },
      { id: "ask-push", on: "PreToolUse", if: "Bash(git push *)", decide: "ask" },
      {
        id: "ask-push-where",
        on: "PreToolUse",
        matcher: "Bash",
        where: { "tool_input.command": { startsWith: "git push" } },
        decide: "ask",
      },
    ]);
    const shadowed = warnings.filter((w) => w.includes("is shadowed by"));
    expect(shadowed).toEqual([
      '$.rules[1]: is shadowed by rule "no-bash" ($.rules[0]), which denies every PreToolUse call of Bash (its matcher "Bash") with no other condition; this rule\'s decision can never apply',
      '$.rules[2]: is shadowed by rule "no-bash" ($.rules[0]), which denies every PreToolUse call of Bash (its matcher "Bash") with no other condition; this rule\'s decision can never apply',
    ]);
  });

  it("reads a matcher spaced around its | as matching reads it, on either rule", async () => {
    const warnings = await warningsFor([
      { id: "no-shell", on: "PreToolUse", matcher: "Bash | Write", decide: "deny", reason: "frozen" },
      { id: "ask-writes", on: "PreToolUse", matcher: "Write | Bash", decide: "ask" },
      { id: "ask-bash", on: "PreToolUse", matcher: "Bash", decide: "ask" },
      { id: "ask-edits", on: "PreToolUse", matcher: "Bash | Edit", decide: "ask" },
    ]);
    const shadowed = warnings.filter((w) => w.includes("is shadowed by"));
    const by = `is shadowed by rule "no-shell" ($.rules[0]), which denies every PreToolUse call of`;
    const after = `(its matcher "Bash | Write") with no other condition; this rule's decision can never apply`;
    expect(shadowed).toEqual([`$.rules[1]: ${by} Write, Bash ${after}`, `$.rules[2]: ${by} Bash ${after}`]);
  });

  it.each([
    ["a rule for any tool", { on: "PreToolUse", decide: "ask" }],
    [
      "a tool the matcher lets through and one it does not",
      { on: "PreToolUse", matcher: "Bash|Read", decide: "ask" },
    ],
    ["an if naming another tool too", { on: "PreToolUse", if: ["Bash(ls)", "Read(./x)"], decide: "ask" }],
    ["a regular-expression matcher", { on: "PreToolUse", matcher: "Ba.*", decide: "ask" }],
    ["an event the deny does not cover", { on: "PermissionRequest", matcher: "Bash", decide: "ask" }],
    // Its reason is joined to the first deny's and sent (a team's "no rm -rf" under "no Bash").
    ["a deny of its own", { on: "PreToolUse", if: "Bash(rm -rf *)", decide: "deny", reason: "no rm" }],
  ])("does not call %s shadowed by a deny with a matcher", async (_what, rule) => {
    const warnings = await warningsFor([
      { id: "no-bash", on: "PreToolUse", matcher: "Bash", decide: "deny" },
      { id: "later", ...rule },
    ]);
    expect(warnings.filter((w) => w.includes("is shadowed by"))).toEqual([]);
  });

  it("needs the deny to cover every event of the later rule, and to come first", async () => {
    const warnings = await warningsFor([
      { id: "ask", on: "PreToolUse", decide: "ask" },
      { id: "deny-pre", on: "PreToolUse", decide: "deny" },
      { id: "ask-both", on: ["PreToolUse", "UserPromptSubmit"], decide: "ask" },
      { id: "context", on: "PreToolUse", context: "still sent with a deny" },
    ]);
    expect(warnings.filter((w) => w.includes("is shadowed by"))).toEqual([]);
  });

  it("does not count a deny the event cannot honour (Notification)", async () => {
    const warnings = await warningsFor([
      { id: "deny-note", on: "Notification", decide: "deny" },
      { id: "allow-note", on: "Notification", decide: "allow" },
    ]);
    expect(warnings.filter((w) => w.includes("is shadowed by"))).toEqual([]);
  });

  it("does not call a later deny or block shadowed: its reason is joined and sent", async () => {
    const warnings = await warningsFor([
      { id: "freeze", on: ["PreToolUse", "Stop"], decide: "block", reason: "frozen" },
      { id: "no-rm", on: "PreToolUse", if: "Bash(rm -rf *)", decide: "deny", reason: "no rm" },
      { id: "tests", on: "Stop", where: { stop_hook_active: false }, decide: "block", reason: "run tests" },
    ]);
    expect(warnings.filter((w) => w.includes("is shadowed by"))).toEqual([]);
  });
});

describe("lintPolicy: where conditions on a field the event never carries", () => {
  it("warns about a tool field on Stop, and stop_hook_active on a tool event", async () => {
    const warnings = await warningsFor([
      {
        id: "stop-on-command",
        on: "Stop",
        where: { "tool_input.command": { regex: "test" }, stop_hook_active: false },
        decide: "block",
      },
      {
        id: "prompt-tool",
        on: ["PreToolUse", "UserPromptSubmit"],
        where: { tool_name: "Bash" },
        context: "x",
      },
      { id: "loop", on: "PreToolUse", where: { stop_hook_active: false }, decide: "ask" },
    ]);
    expect(warnings.filter((w) => w.includes("carries no") || w.includes("carry no"))).toEqual([
      '$.rules[0].where["tool_input.command"]: Stop carries no "tool_input" (PreToolUse, PostToolUse, PostToolUseFailure, PermissionRequest, PermissionDenied do), so this condition never holds there; this rule can never apply',
      '$.rules[1].where.tool_name: UserPromptSubmit carries no "tool_name" (PreToolUse, PostToolUse, PostToolUseFailure, PermissionRequest, PermissionDenied do), so this condition never holds there and the rule never applies to it',
      '$.rules[2].where.stop_hook_active: PreToolUse carries no "stop_hook_active" (Stop, SubagentStop do), so this condition never holds there; this rule can never apply',
    ]);
  });

  it("warns about a field a deepagents legacy event never carries, naming the key it carries instead", async () => {
    // Legacy bodies are `{"event": …, "thread_id"?, …payload}` (clients.md §5.5): a tool's input
    // is `tool_args`, and `user.prompt` carries no prompt at all.
    const warnings = await warningsFor([
      { id: "rm", on: "tool.use", where: { "tool_input.command": { regex: "^rm" } }, context: "x" },
      { id: "both", on: ["PreToolUse", "tool.result"], where: { "tool_input.command": "ls" }, context: "x" },
      {
        id: "prompt",
        on: ["user.prompt", "session.start"],
        where: { prompt: { contains: "x" } },
        context: "x",
      },
      { id: "cwd", on: "tool.error", where: { cwd: { startsWith: "/srv" } }, context: "x" },
    ]);
    expect(warnings.filter((w) => w.includes("carries no") || w.includes("carry no"))).toEqual([
      '$.rules[0].where["tool_input.command"]: tool.use carries no "tool_input" (a deepagents legacy body carries event, thread_id, tool_name, tool_id, tool_args at most: write "tool_args.command"), so this condition never holds there; this rule can never apply',
      '$.rules[1].where["tool_input.command"]: tool.result carries no "tool_input" (a deepagents legacy body carries event, thread_id, tool_name, tool_id, tool_args, tool_status, tool_output at most: write "tool_args.command"), so this condition never holds there and the rule never applies to it',
      '$.rules[2].where.prompt: user.prompt and session.start carry no "prompt" (a deepagents legacy body carries event, thread_id at most), so this condition never holds there; this rule can never apply',
      '$.rules[3].where.cwd: tool.error carries no "cwd" (a deepagents legacy body carries event, thread_id, tool_names at most), so this condition never holds there; this rule can never apply',
    ]);
  });

  it.each([
    ["a tool field on a tool event", "PostToolUse", { "tool_input.file_path": { glob: "**/*.ts" } }],
    ["a legacy event's own input", "tool.use", { "tool_args.command": { regex: "^rm" } }],
    ["a legacy field that may be absent", "session.end", { prompt: { exists: false } }],
    ["exists: false", "Stop", { tool_input: { exists: false } }],
    ["an event hookgate does not know", "BeforeToolRun", { tool_name: "Bash" }],
    ["a legacy deepagents event", "tool.use", { tool_name: "execute" }],
    ["a field every event may carry", "Stop", { cwd: { startsWith: "/srv" } }],
  ])("does not warn about %s", async (_what, on, where) => {
    const warnings = await warningsFor([{ id: "r", on, where, context: "x" }]);
    expect(warnings.filter((w) => w.includes("carries no") || w.includes("carry no"))).toEqual([]);
  });
});

describe("lintPolicy: a not on a field the event never carries", () => {
  it("warns about a not that needs the field, and a not that tests nothing on every event of its rule", async () => {
    const warnings = await warningsFor([
      { id: "a", on: "Stop", where: { "tool_input.command": { not: { exists: false } } }, decide: "block" },
      { id: "b", on: "Stop", where: { tool_name: { not: { equals: "Bash" } } }, context: "x" },
      {
        id: "c",
        on: ["session.end", "SessionEnd"],
        where: { tool_use_id: { not: { regex: "x" } } },
        context: "x",
      },
    ]);
    expect(warnings.filter((w) => w.includes("carries no") || w.includes("carry no"))).toEqual([
      '$.rules[0].where["tool_input.command"]: Stop carries no "tool_input" (PreToolUse, PostToolUse, PostToolUseFailure, PermissionRequest, PermissionDenied do), so this condition never holds there; this rule can never apply',
      '$.rules[1].where.tool_name: Stop carries no "tool_name", so this condition (a "not" of one that needs it) holds on every event this rule applies to: it tests nothing',
      '$.rules[2].where.tool_use_id: session.end and SessionEnd carry no "tool_use_id", so this condition (a "not" of one that needs it) holds on every event this rule applies to: it tests nothing',
    ]);
  });

  it.each([
    [
      "on an event that carries the field too",
      ["PreToolUse", "Stop"],
      { tool_name: { not: { equals: "Bash" } } },
    ],
    ["that holds where the field is sent as null", "Stop", { tool_name: { not: { not: { equals: null } } } }],
    ["of a null", "Stop", { tool_name: { not: { equals: null } } }],
  ])("does not warn about a not %s", async (_what, on, where) => {
    const warnings = await warningsFor([{ id: "r", on, where, context: "x" }]);
    expect(warnings.filter((w) => w.includes("carries no") || w.includes("carry no"))).toEqual([]);
  });
});

describe("lintPolicy: where conditions on the input of the one tool a rule names", () => {
  it("names a field the tool's input never has, and the one it likely means", async () => {
    const warnings = await warningsFor([
      {
        id: "a",
        on: "PreToolUse",
        matcher: "Bash",
        where: { "tool_input.cmd": { regex: "^rm" } },
        decide: "deny",
      },
      {
        id: "b",
        on: "PostToolUse",
        matcher: "Write",
        where: { "tool_input.filepath": { glob: "**/.env" } },
        context: "x",
      },
      {
        id: "c",
        on: "PreToolUse",
        matcher: "Edit",
        where: { "tool_input.replaceAll": { exists: false } },
        decide: "ask",
      },
      {
        id: "d",
        on: "PreToolUse",
        matcher: "Bash",
        where: { "tool_input.url": { not: { exists: true } } },
        decide: "deny",
      },
    ]);
    expect(warnings.filter((w) => w.includes("carries no"))).toEqual([
      '$.rules[0].where["tool_input.cmd"]: Bash\'s tool_input carries no "cmd" (its fields are command, description, timeout, run_in_background), so this condition never holds on a call that carries its input: did you mean "tool_input.command"?',
      '$.rules[1].where["tool_input.filepath"]: Write\'s tool_input carries no "filepath" (its fields are file_path, content), so this condition never holds on a call that carries its input: did you mean "tool_input.file_path"?',
      '$.rules[2].where["tool_input.replaceAll"]: Edit\'s tool_input carries no "replaceAll" (its fields are file_path, old_string, new_string, replace_all), so this condition holds on every call that carries its input: it tests nothing: did you mean "tool_input.replace_all"?',
      '$.rules[3].where["tool_input.url"]: Bash\'s tool_input carries no "url" (its fields are command, description, timeout, run_in_background), so this condition holds on every call that carries its input: it tests nothing',
    ]);
  });

  it("names no field the rule's where already tests as the one a mistyped field means", async () => {
    // Beside "tool_input.command", "tool_input.cmd" was told to be "tool_input.command": renamed
    // so, the where would hold that key twice and JSON keep the last condition.
    const warnings = await warningsFor([
      {
        id: "a",
        on: "PreToolUse",
        matcher: "Bash",
        where: { "tool_input.command": { startsWith: "rm" }, "tool_input.cmd": { contains: "-rf" } },
        decide: "deny",
      },
    ]);
    expect(warnings.filter((w) => w.includes("carries no"))).toEqual([
      '$.rules[0].where["tool_input.cmd"]: Bash\'s tool_input carries no "cmd" (its fields are command, description, timeout, run_in_background), so this condition never holds on a call that carries its input',
    ]);
  });

  it("types the tool's input fields, on a call that carries its input", async () => {
    const warnings = await warningsFor([
      { id: "a", on: "PreToolUse", matcher: "Bash", where: { "tool_input.timeout": "5" }, decide: "deny" },
      {
        id: "b",
        on: "PreToolUse",
        matcher: "Edit",
        where: { "tool_input.replace_all": { not: { equals: "true" } } },
        decide: "ask",
      },
      {
        id: "c",
        on: "PermissionRequest",
        if: "Bash(git push *)",
        where: { "tool_input.run_in_background": { regex: "t" } },
        decide: "deny",
      },
      {
        id: "d",
        on: "PreToolUse",
        matcher: "Bash",
        where: { "tool_input.command.length": { equals: 0 } },
        decide: "deny",
      },
      {
        id: "e",
        on: "PreToolUse",
        matcher: "Write",
        where: { tool_input: { equals: { file_path: 1 } } },
        decide: "deny",
      },
    ]);
    expect(warnings.filter((w) => w.includes("clients send"))).toEqual([
      '$.rules[0].where["tool_input.timeout"]: "5" is a string; clients send Bash\'s tool_input.timeout as a number, so this never holds on a call that carries its input: write 5',
      '$.rules[1].where["tool_input.replace_all"].not: "true" is a string; clients send Edit\'s tool_input.replace_all as a boolean, so {"equals":"true"} never holds and its "not" holds on every call that carries its input: this condition tests nothing: write true',
      '$.rules[2].where["tool_input.run_in_background"].regex: "regex" holds on a string only, and clients send Bash\'s tool_input.run_in_background as a boolean, so this never holds on a call that carries its input: compare it with a value',
      '$.rules[3].where["tool_input.command.length"]: clients send Bash\'s tool_input.command as a string, which has no fields (where reads the length of a list, not of a string), so "tool_input.command.length" is never there and this condition never holds on a call that carries its input',
      "$.rules[4].where.tool_input.equals.file_path: 1 is a number; clients send Write's tool_input.file_path as a string, so this never holds on a call that carries its input",
    ]);
  });

  it.each([
    ["several tools", "Bash|Write", { "tool_input.cmd": 5 }],
    ["a regular expression", "Ba.*", { "tool_input.cmd": 5 }],
    ["MCP tools", "mcp__github__.*", { "tool_input.cmd": 5 }],
    ["a tool whose input no source lists", "Read", { "tool_input.cmd": 5 }],
    ["a tool named in another case", "bash", { "tool_input.cmd": 5 }],
    [
      "fields the tool's input has",
      "Bash",
      { "tool_input.command": { regex: "^rm" }, "tool_input.timeout": 5 },
    ],
  ])("does not warn about a rule for %s", async (_what, matcher, where) => {
    const warnings = await warningsFor([{ id: "r", on: "PreToolUse", matcher, where, decide: "deny" }]);
    expect(warnings.filter((w) => w.includes("carries no") || w.includes("clients send"))).toEqual([]);
  });
});

describe("lintPolicy: where conditions that contradict each other", () => {
  it.each([
    [
      "a field and the object holding it equal different literals",
      { tool_input: { equals: { command: "ls" } }, "tool_input.command": "pwd" },
      '$.rules[0].where["tool_input.command"]: "tool_input.command" would have to equal "ls" and equal "pwd"; this rule can never apply',
    ],
    [
      "exists: false with a condition on a field inside",
      { tool_input: { exists: false }, "tool_input.command": { startsWith: "git" } },
      '$.rules[0].where["tool_input.command"]: "tool_input.command" would have to start with "git", but "tool_input" would have to be absent (exists: false), which has no field "command"; this rule can never apply',
    ],
    [
      "a literal parent with no such field",
      { tool_input: { equals: { command: "ls" } }, "tool_input.file_path": { exists: true } },
      '$.rules[0].where["tool_input.file_path"]: "tool_input.file_path" would have to exist, but "tool_input" would have to equal {"command":"ls"}, which has no field "file_path"; this rule can never apply',
    ],
    [
      "a string parent",
      { tool_input: { regex: "^x" }, "tool_input.command": "ls" },
      '$.rules[0].where["tool_input.command"]: "tool_input.command" would have to equal "ls", but "tool_input" would have to match regex "^x", which has no field "command"; this rule can never apply',
    ],
    [
      "an equals outside an in list",
      { tool_input: { equals: { command: "ls" } }, "tool_input.command": { in: ["pwd", "id"] } },
      '$.rules[0].where["tool_input.command"]: "tool_input.command" would have to equal "ls" and be one of ["pwd","id"]; this rule can never apply',
    ],
    [
      "an equals a regex refuses",
      { tool_input: { equals: { command: "ls" } }, "tool_input.command": { regex: "^git " } },
      '$.rules[0].where["tool_input.command"]: "tool_input.command" would have to equal "ls" and match regex "^git "; this rule can never apply',
    ],
  ])("warns when %s", async (_what, where, warning) => {
    const warnings = await warningsFor([{ id: "r", on: "PreToolUse", where, decide: "deny" }]);
    expect(warnings).toContain(warning);
  });

  it.each([
    ["equal literals", { tool_input: { equals: { command: "ls" } }, "tool_input.command": "ls" }],
    [
      "an equals a regex accepts",
      { tool_input: { equals: { command: "git st" } }, "tool_input.command": { regex: "^git " } },
    ],
    [
      "exists: false on a field and on a field inside it",
      { custom_instructions: { exists: false }, "custom_instructions.x": { exists: false } },
    ],
    [
      "equals null and exists: false",
      { tool_input: { equals: { x: null } }, "tool_input.x": { exists: false } },
    ],
    ["independent paths", { cwd: "/srv", "tool_input.command": "ls", permission_mode: "default" }],
    ["a not", { tool_input: { not: { exists: false } }, "tool_input.command": "ls" }],
    // The glob read as the rule reads it at run time: # and ! literal, a path normalised.
    [
      "an equals a glob with a leading # accepts",
      { tool_input: { equals: { file_path: "#notes.md" } }, "tool_input.file_path": { glob: "#*" } },
    ],
    [
      "an equals a glob accepts once the path is normalised",
      {
        tool_input: { equals: { file_path: "/tmp/../etc/passwd" } },
        "tool_input.file_path": { glob: "/etc/**" },
      },
    ],
  ])("stays quiet for %s", async (_what, where) => {
    const warnings = await warningsFor([{ id: "r", on: "PreToolUse", where, decide: "deny" }]);
    expect(warnings.filter((w) => w.includes("can never apply"))).toEqual([]);
  });
});

describe("lintPolicy: matchers that cannot hold", () => {
  it("warns when the matcher lets through no tool the if names", async () => {
    const warnings = await warningsFor([
      {
        id: "r",
        on: "PreToolUse",
        matcher: "Bash",
        if: ["Read(./.env)", "WebFetch(domain:x.com)"],
        decide: "deny",
      },
    ]);
    expect(warnings).toContain(
      '$.rules[0].if: names only Read, Glob, Grep, LS, NotebookRead, WebFetch, and the matcher "Bash" lets none of them through; this rule can never apply',
    );
  });

  it.each([
    ["a Read rule under a Grep matcher", "Grep", "Read(**/.env)"],
    ["a Bash rule under a regex matcher", "Ba.*", "Bash(rm *)"],
    ["an MCP rule, whose tools cannot be listed", "Bash", "mcp__github__*"],
  ])("stays quiet for %s", async (_what, matcher, ifRule) => {
    const warnings = await warningsFor([{ id: "r", on: "PreToolUse", matcher, if: ifRule, decide: "deny" }]);
    expect(warnings.filter((w) => w.includes("lets none of them through"))).toEqual([]);
  });

  it("warns about a matcher of only | and spaces, which matches nothing, unlike an empty one", async () => {
    // Before, `"matcher": "|"` loaded with no word, and its deny rule never applied.
    const warnings = await warningsFor([
      { id: "a", on: "PreToolUse", matcher: "|", decide: "deny" },
      { id: "b", on: "SessionEnd", matcher: " | | ", context: "x" },
      { id: "c", on: "PreToolUse", matcher: "", decide: "deny" },
      { id: "d", on: "PreToolUse", matcher: "Bash|", decide: "deny" },
    ]);
    expect(warnings.filter((w) => w.includes("names nothing"))).toEqual([
      '$.rules[0].matcher: "|" names nothing between its "|", so it matches no value and this rule never applies where a matcher is read; leave the matcher out to match every value, or name what it is for',
      '$.rules[1].matcher: " | | " names nothing between its "|", so it matches no value and this rule never applies where a matcher is read; leave the matcher out to match every value, or name what it is for',
    ]);
  });

  it('warns that "on": "*" ignores the matcher on events without a matcher field', async () => {
    const warnings = await warningsFor([{ id: "r", on: "*", matcher: "Bash", context: "x" }]);
    expect(warnings).toContain(
      '$.rules[0].matcher: "on": "*" includes events with no field a matcher is checked against (Stop, UserPromptSubmit, ...); the matcher is ignored there, so this rule applies to every one of them',
    );
  });

  it('warns that "on": "*" reaches events that cannot carry the rule\'s decision or context', async () => {
    const warnings = await warningsFor([
      { id: "deny-all", on: "*", decide: "deny", where: { cwd: "/srv/prod" } },
      { id: "allow-all", on: "*", decide: "allow", context: "x" },
      { id: "note-all", on: "*", context: "x" },
      // An "if" limits it to tool events: only those are counted.
      { id: "rm-anywhere", on: "*", if: "Bash(rm -rf *)", decide: "deny" },
      { id: "tests-allowed", on: "*", if: "Bash(npm test)", decide: "block" },
    ]);
    expect(warnings.filter((w) => w.includes('"on": "*"'))).toEqual([
      '$.rules[0].decide: "on": "*" includes events where no client can honour "deny" (18 of Claude Code\'s 34 events, e.g. Notification, SessionStart, SessionEnd); it is not sent there',
      '$.rules[1].decide: "on": "*" includes events where no client can honour "allow" (32 of Claude Code\'s 34 events, e.g. PostToolUse, PostToolUseFailure, PostToolBatch); it is not sent there',
      '$.rules[1].context: "on": "*" includes events with no way to carry added context (22 of Claude Code\'s 34 events, e.g. SessionEnd, Stop, StopFailure); it is not sent there',
      '$.rules[2].context: "on": "*" includes events with no way to carry added context (22 of Claude Code\'s 34 events, e.g. SessionEnd, Stop, StopFailure); it is not sent there',
      '$.rules[3].decide: "on": "*" includes events where no client can honour "deny" (1 of the 5 tool events its "if" limits it to, e.g. PermissionDenied); it is not sent there',
      '$.rules[4].decide: "on": "*" includes events where no client can honour "block" (1 of the 5 tool events its "if" limits it to, e.g. PermissionDenied); it is not sent there',
    ]);
  });

  it("says where a Stop or SubagentStop rule's context goes: deepagents takes SubagentStop's only", async () => {
    const warnings = await warningsFor([
      { id: "stop-note", on: "Stop", context: "x" },
      { id: "subagent-note", on: "SubagentStop", context: "x" },
      // deepcode reads these two back (its loop and its prompt expansion); Claude Code 2.1.112 has no variant.
      { id: "batch-note", on: "PostToolBatch", context: "x" },
      { id: "expansion-note", on: "UserPromptExpansion", context: "x" },
    ]);
    expect(warnings.filter((w) => w.includes(".context:"))).toEqual([
      "$.rules[0].context: Stop has no way to carry added context to the agent; it is not sent there",
      "$.rules[1].context: SubagentStop carries added context to deepagents only; Claude Code and deepcode cannot receive it there",
      "$.rules[2].context: PostToolBatch carries added context to deepcode only; Claude Code and deepagents cannot receive it there",
      "$.rules[3].context: UserPromptExpansion carries added context to deepcode only; Claude Code and deepagents cannot receive it there",
    ]);
  });

  it("keeps the existing warnings: if on a non-tool event, and a matcher an event ignores", async () => {
    const warnings = await warningsFor([
      { id: "if-stop", on: "Stop", if: "Bash(ls)", decide: "block", where: { stop_hook_active: false } },
      { id: "prompt-matcher", on: "UserPromptSubmit", matcher: "Bash", context: "x" },
    ]);
    expect(warnings).toContain(
      '$.rules[0].on: "if" applies only to tool events, so this rule never applies to Stop; a condition on Stop is written with "where"',
    );
    expect(warnings).toContain(
      "$.rules[1].matcher: UserPromptSubmit has no field a matcher is checked against; the matcher is ignored there",
    );
  });
});

describe("lintPolicy: if on Stop", () => {
  it("says only that the rule never applies there, not how what it would do there loops", async () => {
    // "if" never matches on Stop, so the rule never blocks it: adding stop_hook_active fixes nothing.
    const warnings = await warningsFor(
      [
        { id: "decide", on: "Stop", if: "Bash(rm *)", decide: "block" },
        {
          id: "prompt",
          on: ["PreToolUse", "SubagentStop"],
          if: "Bash(rm *)",
          prompt: { model: "m", text: "t", onError: "deny" },
        },
        {
          id: "star",
          on: "*",
          if: "Bash(rm *)",
          forward: { url: "https://hooks.example.com/h", onError: "deny" },
        },
      ],
      { m: { provider: "anthropic", model: "claude-haiku-4-5", apiKey: "env:ANTHROPIC_API_KEY" } },
    );
    expect(warnings.filter((w) => w.includes("stop_hook_active"))).toEqual([]);
    expect(warnings).toContain(
      '$.rules[0].on: "if" applies only to tool events, so this rule never applies to Stop; a condition on Stop is written with "where"',
    );
    expect(warnings).toContain(
      '$.rules[1].on[1]: "if" applies only to tool events, so this rule never applies to SubagentStop; a condition on SubagentStop is written with "where"',
    );
  });
});

describe("lintPolicy: a block deepcode does not act on", () => {
  it("says deepcode lets the compaction, the expanded prompt and the settings change go ahead", async () => {
    // deepcode reads nothing back from PreCompact (compactionManager.ts), only additionalContext
    // from UserPromptExpansion (useChat.ts), and fires ConfigChange and forgets it.
    const warnings = await warningsFor([
      { id: "no-compact", on: "PreCompact", decide: "block", reason: "keep it" },
      { id: "no-deploy", on: "UserPromptExpansion", where: { command_name: "deploy" }, decide: "deny" },
      { id: "no-config", on: "ConfigChange", decide: "block" },
      { id: "no-prompt", on: "UserPromptSubmit", decide: "block" },
    ]);
    expect(warnings.filter((w) => w.includes("deepcode"))).toEqual([
      "$.rules[0].decide: deepcode does not act on a block on PreCompact; there the compaction goes ahead",
      "$.rules[1].decide: deepcode does not act on a block on UserPromptExpansion; its expanded prompt runs anyway. Block it on UserPromptSubmit too, which deepcode sends next with the expanded text",
      "$.rules[2].decide: deepcode does not act on a block on ConfigChange; there the change goes ahead",
    ]);
  });

  it("says so of a prompt rule there, whose model's no is sent as a block", async () => {
    const warnings = await warningsFor(
      [
        { id: "judge-expansion", on: "UserPromptExpansion", prompt: { text: "ok?", model: "m" } },
        { id: "judge-compact", on: "PreCompact", prompt: { text: "ok?", model: "m" } },
        { id: "judge-prompt", on: "UserPromptSubmit", prompt: { text: "ok?", model: "m" } },
      ],
      { m: { provider: "anthropic", model: "claude-haiku-4-5", apiKey: "env:K" } },
    );
    expect(warnings.filter((w) => w.includes("deepcode"))).toEqual([
      '$.rules[0].prompt: deepcode does not act on a block on UserPromptExpansion, which is how a model\'s "no" is sent there; its expanded prompt runs anyway. Block it on UserPromptSubmit too, which deepcode sends next with the expanded text',
      '$.rules[1].prompt: deepcode does not act on a block on PreCompact, which is how a model\'s "no" is sent there; there the compaction goes ahead',
    ]);
  });
});

describe("lintPolicy: a matcher value deepcode spells its own way", () => {
  it("says deepcode's permission prompt is notification_type permission, and its exit reason exit", async () => {
    // clients.md §5.3: Notification `notification_type:"permission"`, SessionEnd `reason:"exit"`.
    const warnings = await warningsFor([
      { id: "perm", on: "Notification", matcher: "permission_prompt", context: "x" },
      { id: "both", on: "Notification", matcher: "permission_prompt|permission", context: "x" },
      { id: "quit", on: "SessionEnd", matcher: "prompt_input_exit", decide: "deny" },
      { id: "idle", on: "Notification", matcher: "idle_prompt", context: "x" },
    ]);
    expect(warnings.filter((w) => w.includes("deepcode") && w.includes(".matcher:"))).toEqual([
      '$.rules[0].matcher: matches Claude Code\'s "permission_prompt" but not deepcode\'s "permission", its notification_type for the same thing: write "permission_prompt|permission"',
      '$.rules[2].matcher: matches Claude Code\'s "prompt_input_exit" but not deepcode\'s "exit", its reason for the same thing: write "prompt_input_exit|exit"',
    ]);
  });

  it("says deepcode loads its memory files at startup with load_reason startup", async () => {
    // deepcode's InstructionsLoaded for DEEPCODE.md and the like: `load_reason: "startup"` (its
    // src/headless.ts and src/tui/useChat.ts), Claude Code's `session_start`.
    const warnings = await warningsFor([
      { id: "loaded", on: "InstructionsLoaded", matcher: "session_start", context: "x" },
      { id: "both", on: "InstructionsLoaded", matcher: "session_start|startup", context: "x" },
      { id: "nested", on: "InstructionsLoaded", matcher: "nested_traversal", context: "x" },
    ]);
    expect(warnings.filter((w) => w.includes("deepcode") && w.includes(".matcher:"))).toEqual([
      '$.rules[0].matcher: matches Claude Code\'s "session_start" but not deepcode\'s "startup", its load_reason for the same thing: write "session_start|startup"',
    ]);
  });
});

describe("lintPolicy: a rewrite on PermissionRequest", () => {
  const rewriting = (on: unknown) => ({
    id: "redact",
    on,
    matcher: "Write",
    decide: "allow",
    updatedInput: { file_path: "/p/.env.example", content: "" },
  });
  const onPermissionRequest =
    "$.rules[0].updatedInput: on PermissionRequest only Claude Code applies a rewritten input: deepcode reads only permissionDecision there, so this allow is answered deny to it, and deepagents drops the rewrite with the allow, leaving the call as it came to its own permission flow; rewrite the call on PreToolUse instead, where deepcode applies it too (deepagents applies a rewrite on neither)";

  it("says deepcode is answered deny and deepagents drops the rewrite", async () => {
    // render.ts denies deepcode an allow it would run unrewritten; deepagents' reducer.py drops
    // updatedInput with its allow (clients.md §6.3, README "deepagents v2").
    for (const on of ["PermissionRequest", ["PreToolUse", "PermissionRequest"], "*"])
      expect(await warningsFor([rewriting(on)])).toContain(onPermissionRequest);
  });

  it("names the fields a rewrite leaves out of the one tool's input it replaces whole", async () => {
    // Claude Code replaces the whole input with updatedInput and validates it against the tool's
    // schema (clients.md §6.1, TV-04): a rewrite of the path alone, read as a merge, is a Write
    // with no content, and `cmd` for `command` a Bash call with no command, on every call it applies to.
    const warnings = await warningsFor([
      { id: "w", on: "PreToolUse", matcher: "Write", decide: "allow", updatedInput: { file_path: "/p/a" } },
      {
        id: "b",
        on: "PreToolUse",
        if: "Bash(npm test*)",
        decide: "allow",
        updatedInput: { cmd: "npm test" },
      },
      { id: "ok", on: "PreToolUse", matcher: "Bash", decide: "allow", updatedInput: { command: "ls" } },
      {
        id: "any",
        on: "PreToolUse",
        matcher: "Write|Edit",
        decide: "allow",
        updatedInput: { file_path: "/p/a" },
      },
      // Not sent on PostToolUse, as another warning says: nothing is replaced there.
      {
        id: "post",
        on: "PostToolUse",
        matcher: "Write",
        decide: "allow",
        updatedInput: { file_path: "/p/a" },
      },
    ]);
    expect(warnings.filter((w) => w.includes("replaces the whole input"))).toEqual([
      '$.rules[0].updatedInput: has no "content", which Write\'s input needs: the rewrite replaces the whole input (nothing of the call as it came is kept), so every call it applies to reaches the tool without it; give the whole input',
      '$.rules[1].updatedInput: has no "command" (is "cmd" meant?), which Bash\'s input needs: the rewrite replaces the whole input (nothing of the call as it came is kept), so every call it applies to reaches the tool without it; give the whole input',
    ]);
  });

  it("names a field left out of a rewrite on every event too, which reaches PreToolUse", async () => {
    const warnings = await warningsFor([
      { id: "all", on: "*", matcher: "Write", decide: "allow", updatedInput: { file_path: "/p/a" } },
    ]);
    expect(warnings.filter((w) => w.includes("replaces the whole input"))).toEqual([
      '$.rules[0].updatedInput: has no "content", which Write\'s input needs: the rewrite replaces the whole input (nothing of the call as it came is kept), so every call it applies to reaches the tool without it; give the whole input',
    ]);
  });

  it("says nothing of a rewrite on PreToolUse alone", async () => {
    const warnings = await warningsFor([rewriting("PreToolUse")]);
    expect(warnings.filter((w) => w.includes("updatedInput"))).toEqual([]);
  });
});

describe("lintPolicy: context deepcode does not read", () => {
  it("says deepcode's PreToolUse reads the decision, not the context", async () => {
    // deepcode's loop reads block, updatedInput and the permission from its PreToolUse hooks,
    // never additionalContext (src/loop.ts execCall); its PostToolUse reads it.
    const warnings = await warningsFor([
      { id: "pre", on: "PreToolUse", matcher: "Bash", context: "use pnpm" },
      { id: "post", on: "PostToolUse", matcher: "Bash", context: "use pnpm" },
    ]);
    expect(warnings.filter((w) => w.includes("deepcode"))).toEqual([
      "$.rules[0].context: deepcode cannot receive context on PreToolUse (it reads the decision and its reason there); it is sent to Claude Code and deepagents only",
    ]);
  });

  it("says deepcode reads nothing back from Notification and Setup hooks", async () => {
    // deepcode runs both without waiting for them (`void runHooks(...)`: src/tui/useChat.ts,
    // src/config.ts); deepagents has no Notification or Setup output.
    const warnings = await warningsFor([{ id: "note", on: ["Notification", "Setup"], context: "x" }]);
    expect(warnings.filter((w) => w.includes("context:"))).toEqual([
      "$.rules[0].context: deepcode cannot receive context on Notification (it reads nothing back from its Notification hooks); it is sent to Claude Code only",
      "$.rules[0].context: deepcode cannot receive context on Setup (it reads nothing back from its Setup hooks); it is sent to Claude Code (through a command hook running `hookgate send`) only",
    ]);
  });

  it("says PreCompact's compaction instructions reach Claude Code alone", async () => {
    // deepcode reads nothing back from PreCompact (compactionManager.ts); deepagents has no
    // PreCompact output (its hooks/models/wire.py).
    const warnings = await warningsFor([{ id: "keep", on: "PreCompact", context: "keep decisions" }]);
    expect(warnings.filter((w) => w.includes("context:"))).toEqual([
      "$.rules[0].context: PreCompact carries added context to Claude Code only; deepcode and deepagents cannot receive it there",
    ]);
  });
});

describe("lintPolicy: an onError no client can honour", () => {
  it("warns for each event where a prompt or forward rule's ask or deny would be dropped", async () => {
    const policy = await policyFrom({
      version: 1,
      auth: { tokens: [] },
      egress: { allowedHttpHookUrls: ["https://policy.example/*"] },
      rules: [
        {
          id: "relay",
          on: ["PreToolUse", "Stop", "PermissionRequest"],
          forward: { url: "https://policy.example/hook", onError: "ask" },
        },
        { id: "judge", on: "Notification", prompt: { text: "ok?", model: "m", onError: "deny" } },
        { id: "open", on: "Stop", prompt: { text: "ok?", model: "m", onError: "allow" } },
        { id: "everywhere", on: "*", prompt: { text: "ok?", model: "m", onError: "ask" } },
      ],
      models: {
        m: { provider: "anthropic", model: "claude-haiku-4-5", apiKey: "k", url: "https://policy.example/m" },
      },
    });
    const warnings = lintPolicy(policy)
      .map((w) => `${w.path}: ${w.message}`)
      .filter((w) => w.includes("onError"));
    expect(warnings).toEqual([
      '$.rules[0].forward.onError: no client can honour "ask" on Stop; when the rule fails there it has no opinion, as with "allow"',
      '$.rules[0].forward.onError: no client can honour "ask" on PermissionRequest; when the rule fails there no decision is sent, and another rule\'s allow is held back as beside a "decide": "ask" rule',
      '$.rules[1].prompt.onError: no client can honour "deny" on Notification; when the rule fails there it has no opinion, as with "allow"',
      // PermissionRequest is among them, where the withheld ask still holds back an allow.
      '$.rules[3].prompt.onError: "on": "*" includes events where no client can honour "ask" (every event but PreToolUse); when the rule fails there it has no opinion, as with "allow", but on PermissionRequest no decision is sent, and another rule\'s allow is held back as beside a "decide": "ask" rule',
    ]);
  });
});

describe("lintPolicy: a prompt rule whose verdict no client can honour", () => {
  it('warns on each event where a model\'s no is neither a deny nor a block, and counts them under "on": "*"', async () => {
    const policy = await policyFrom({
      version: 1,
      auth: { tokens: [] },
      egress: { allowedHttpHookUrls: ["https://policy.example/*"] },
      rules: [
        { id: "judge", on: ["PreToolUse", "Notification", "Stop"], prompt: { text: "ok?", model: "m" } },
        { id: "end", on: "SessionEnd", mode: "shadow", prompt: { text: "ok?", model: "m" } },
        { id: "everywhere", on: "*", prompt: { text: "ok?", model: "m" } },
        { id: "tools", on: "*", if: "Bash(git push *)", prompt: { text: "ok?", model: "m" } },
      ],
      models: {
        m: { provider: "anthropic", model: "claude-haiku-4-5", apiKey: "k", url: "https://policy.example/m" },
      },
    });
    const warnings = lintPolicy(policy)
      .map((w) => `${w.path}: ${w.message}`)
      .filter((w) => /^\$\.rules\[\d\]\.prompt:/.test(w));
    expect(warnings).toEqual([
      '$.rules[0].prompt: no client can honour a model\'s verdict on Notification (a "no" is sent as a deny or a block); the model is not called there',
      '$.rules[1].prompt: no client can honour a model\'s verdict on SessionEnd (a "no" is sent as a deny or a block); the model is not called there',
      '$.rules[2].prompt: "on": "*" includes events where no client can honour a model\'s verdict (18 of Claude Code\'s 34 events, e.g. Notification, SessionStart, SessionEnd); the model is not called there',
      '$.rules[3].prompt: "on": "*" includes events where no client can honour a model\'s verdict (1 of the 5 tool events its "if" limits it to, e.g. PermissionDenied); the model is not called there',
    ]);
  });
});

describe("lintPolicy: a prompt's stop on Stop", () => {
  it("says it does nothing there, where a no blocks the stop, and nothing on the events where it ends the turn", async () => {
    const policy = await policyFrom({
      version: 1,
      auth: { tokens: [] },
      egress: { allowedHttpHookUrls: ["https://policy.example/*"] },
      rules: [
        {
          id: "judge",
          on: ["PreToolUse", "Stop", "SubagentStop"],
          where: { stop_hook_active: false },
          prompt: { text: "ok?", model: "m", stop: true },
        },
      ],
      models: {
        m: { provider: "anthropic", model: "claude-haiku-4-5", apiKey: "k", url: "https://policy.example/m" },
      },
    });
    expect(
      lintPolicy(policy)
        .map((w) => `${w.path}: ${w.message}`)
        .filter((w) => w.includes(".prompt.stop")),
    ).toEqual(
      ["Stop", "SubagentStop"].map(
        (event) =>
          `$.rules[0].prompt.stop: does nothing on ${event}: a "no" there blocks the stop so the agent goes on, and ending the turn would undo that (as in Claude Code's own prompt hooks)`,
      ),
    );
  });
});

describe("lintPolicy: a forward header no HTTP request can carry", () => {
  it("warns about a name that is no header name, a header the HTTP client sets itself, and a written value with a character no header carries", async () => {
    const policy = await policyFrom({
      version: 1,
      auth: { tokens: [] },
      egress: { allowedHttpHookUrls: ["https://policy.example/*"], httpHookAllowedEnvVars: ["TRACE"] },
      rules: [
        {
          id: "relay",
          on: "PreToolUse",
          forward: {
            url: "https://policy.example/hook",
            headers: {
              "X Trace": "1",
              "X-Team:": "a",
              "X-Cafe": "caf\u20ac",
              "X-Ok": "caf\u00e9 $TRACE",
              Host: "internal.example",
            },
            allowedEnvVars: ["TRACE"],
          },
        },
      ],
    });
    expect(
      lintPolicy(policy)
        .map((w) => `${w.path}: ${w.message}`)
        .filter((w) => w.includes("forward.headers")),
    ).toEqual([
      '$.rules[0].forward.headers["X Trace"]: "X Trace" is no HTTP header name (letters, digits and !#$%&\'*+-.^_`|~, no spaces or colons), so nothing is ever sent and the rule always answers with its onError',
      '$.rules[0].forward.headers["X-Team:"]: "X-Team:" is no HTTP header name (letters, digits and !#$%&\'*+-.^_`|~, no spaces or colons), so nothing is ever sent and the rule always answers with its onError',
      '$.rules[0].forward.headers["X-Cafe"]: header "X-Cafe" has a character no HTTP header can carry (a control character, DEL, or a character past U+00FF), so nothing is ever sent and the rule always answers with its onError',
      '$.rules[0].forward.headers.Host: header "Host" is set by the HTTP client from the request itself (Host from the url, the body\'s length and framing, the connection), so nothing is ever sent and the rule always answers with its onError; remove it',
    ]);
  });
});

describe("lintPolicy: a shadow rule's notify", () => {
  it("says it is never sent, as the gateway sends only enforcing rules' notifications", async () => {
    const policy = await policyFrom({
      version: 1,
      auth: { tokens: [] },
      rules: [
        { id: "try-deny", on: "PreToolUse", mode: "shadow", decide: "deny", notify: ["security"] },
        { id: "tell", on: "Stop", mode: "shadow", notify: ["security"] },
        { id: "enforced", on: "SessionEnd", notify: ["security"] },
      ],
      sinks: { security: { type: "webhook", url: "https://siem.example/in" } },
    });
    // What the lint says is what evaluation does: the shadow rule applies, its sinks are not queued.
    const event = parseHookEvent({
      session_id: "s",
      transcript_path: "/t",
      cwd: "/p",
      hook_event_name: "PreToolUse",
      tool_name: "Bash",
      tool_input: { command: "ls" },
    });
    if (!event.ok) throw new Error("the event should parse");
    const evaluation = evaluatePolicy(policy, event.value, { team: "default" });
    expect(evaluation.shadowed.map((m) => m.rule.id)).toEqual(["try-deny"]);
    expect(evaluation.notify).toEqual([]);
    expect(
      lintPolicy(policy)
        .map((w) => `${w.path}: ${w.message}`)
        .filter((w) => w.includes(".notify")),
    ).toEqual([
      '$.rules[0].notify: is never sent: a shadow rule changes nothing but the audit line\'s "shadow" field, where what it would have decided is recorded; notify from an enforcing rule',
      '$.rules[1].notify: is never sent: a shadow rule changes nothing but the audit line\'s "shadow" field, where what it would have decided is recorded; notify from an enforcing rule',
    ]);
  });
});

describe("lintPolicy: defaults.deadlineMs", () => {
  it("says a deadline above 600 s, less the margin, is capped", async () => {
    const warned = async (deadlineMs: number) =>
      lintPolicy(
        await policyFrom({ version: 1, auth: { tokens: [] }, defaults: { deadlineMs }, rules: [] }),
      ).filter((w) => w.path === "$.defaults.deadlineMs");
    expect(await warned(900_000)).toEqual([
      expect.objectContaining({
        severity: "warning",
        message: expect.stringMatching(/^is above 599750 ms and is capped there/),
      }),
    ]);
    expect(await warned(599_750)).toEqual([]);
  });
});

describe("lintPolicy: a request-level ask", () => {
  it("says that defaults.onError and auth.onFailure ask only on PreToolUse", async () => {
    const policy = await policyFrom({
      version: 1,
      auth: { tokens: [], onFailure: "ask" },
      defaults: { onError: "ask" },
      rules: [],
    });
    const paths = lintPolicy(policy)
      .filter((w) => w.message.startsWith('"ask" is honoured on PreToolUse only'))
      .map((w) => w.path);
    expect(paths).toEqual(["$.defaults.onError", "$.auth.onFailure"]);
    // eeea62a: only deny blocks a body whose event cannot be identified.
    expect(lintPolicy(policy).find((w) => w.path === "$.defaults.onError")?.message).toMatch(
      /as with "allow", a body whose event cannot be identified too$/,
    );
    const deny = await policyFrom({
      version: 1,
      auth: { tokens: [] },
      defaults: { onError: "deny" },
      rules: [],
    });
    expect(lintPolicy(deny).filter((w) => w.message.includes('"ask" is honoured'))).toEqual([]);
  });

  it("names the rules that inherit it on PermissionRequest, where their failure holds back another rule's allow", async () => {
    // A prompt or forward rule without an onError of its own fails with defaults.onError: there
    // its ask is withheld, as its own would be, and an allow rule beside it no longer allows.
    const policy = await policyFrom({
      version: 1,
      auth: { tokens: [] },
      defaults: { onError: "ask" },
      egress: { allowedHttpHookUrls: ["https://policy.example/*"] },
      rules: [
        { id: "allow-ls", on: "PermissionRequest", if: "Bash(ls)", decide: "allow" },
        { id: "relay", on: "PermissionRequest", forward: { url: "https://policy.example/hook" } },
        { id: "everywhere", on: "*", forward: { url: "https://policy.example/hook" } },
        {
          id: "own",
          on: "PermissionRequest",
          forward: { url: "https://policy.example/hook", onError: "deny" },
        },
        { id: "tools", on: "PreToolUse", forward: { url: "https://policy.example/hook" } },
        {
          id: "tried",
          on: "PermissionRequest",
          mode: "shadow",
          forward: { url: "https://policy.example/hook" },
        },
      ],
    });
    expect(lintPolicy(policy).find((w) => w.path === "$.defaults.onError")?.message).toBe(
      '"ask" is honoured on PreToolUse only: a failure on any other event gets no decision there, as with "allow", a body whose event cannot be identified too; but rules "relay", "everywhere" fail with it on PermissionRequest, where no decision is sent, and another rule\'s allow is held back as beside a "decide": "ask" rule',
    );
  });
});

describe("lintPolicy: targets the egress guard will refuse", () => {
  it("says what each refusal leads to: the rule's onError, the dead-letter queue, a model's rules' onError", async () => {
    const policy = await policyFrom({
      version: 1,
      auth: { tokens: [] },
      egress: { allowedHttpHookUrls: ["https://allowed.example/*"] },
      rules: [
        { id: "relay", on: "PreToolUse", forward: { url: "https://other.example/hook" } },
        { id: "tell", on: "Stop", notify: ["chat"] },
      ],
      sinks: { chat: { type: "slack", url: "https://hooks.slack.com/services/T/B/x" } },
      models: { m: { provider: "anthropic", model: "claude-haiku-4-5", apiKey: "k" } },
    });
    const warnings = lintPolicy(policy).map((w) => `${w.path}: ${w.message}`);
    expect(warnings).toEqual(
      expect.arrayContaining([
        expect.stringMatching(
          /^\$\.rules\[0\]\.forward\.url: the egress guard will refuse it \(EGRESS_NOT_ALLOWLISTED: .*\); the rule will answer with its onError$/,
        ),
        expect.stringMatching(
          /^\$\.sinks\.chat\.url: .*; every delivery to it will fail into the dead-letter queue$/,
        ),
        expect.stringMatching(/^\$\.models\.m: .*; prompt rules that use it will answer with their onError$/),
      ]),
    );
  });

  it("judges the URL a delivery is sent to, and an address written in a URL", async () => {
    const policy = await policyFrom({
      version: 1,
      auth: { tokens: [] },
      egress: {
        allowedHttpHookUrls: [
          "https://discord.com/api/webhooks/1/x",
          "https://ghe.example.com/api/v3/repos/*",
          "http://169.254.169.254/*",
        ],
      },
      rules: [
        { id: "meta", on: "PreToolUse", forward: { url: "http://169.254.169.254/latest" } },
        { id: "tell", on: "Stop", notify: ["chat", "ci"] },
      ],
      sinks: {
        // Delivered to …/x/slack?wait=true, which the exact pattern does not allow.
        chat: { type: "discord", url: "https://discord.com/api/webhooks/1/x" },
        // Delivered to …/v3/repos/o/r/dispatches: the trailing slash is not doubled.
        ci: {
          type: "github-dispatch",
          url: "https://ghe.example.com/api/v3/",
          repo: "o/r",
          eventType: "hook",
          token: "t",
        },
      },
    });
    const warnings = lintPolicy(policy).map((w) => `${w.path}: ${w.message}`);
    expect(warnings.filter((w) => w.startsWith("$.sinks.ci.url"))).toEqual([]);
    expect(warnings).toEqual(
      expect.arrayContaining([
        expect.stringMatching(
          /^\$\.sinks\.chat\.url: the egress guard will refuse it \(EGRESS_NOT_ALLOWLISTED: /,
        ),
        expect.stringMatching(
          /^\$\.rules\[0\]\.forward\.url: the egress guard will refuse it \(EGRESS_BLOCKED_ADDRESS: 169\.254\.169\.254 is in 169\.254\.0\.0\/16/,
        ),
      ]),
    );
  });

  it("says how to open an address written in a URL, or which deny range of the policy's own keeps it shut", async () => {
    const policy = await policyFrom({
      version: 1,
      auth: { tokens: [] },
      egress: { denyCidrs: ["10.0.0.0/8"] },
      rules: [
        { id: "local", on: "PreToolUse", forward: { url: "http://127.0.0.1:9000/hook" } },
        { id: "lan", on: "PreToolUse", forward: { url: "http://10.0.0.5:9000/hook" } },
        { id: "v6", on: "PreToolUse", forward: { url: "http://[fd00::5]:9000/hook" } },
      ],
    });
    const warnings = lintPolicy(policy).map((w) => `${w.path}: ${w.message}`);
    expect(warnings).toEqual(
      expect.arrayContaining([
        expect.stringMatching(
          /^\$\.rules\[0\]\.forward\.url: .*Loopback, RFC 1122\); to reach it on purpose, open it in the policy's egress\.allowCidrs \("127\.0\.0\.1\/32"\)\); the rule will answer/,
        ),
        expect.stringMatching(
          /^\$\.rules\[1\]\.forward\.url: .*Private-Use, RFC 1918\); allowCidrs "10\.0\.0\.5\/32" would not open it: the policy's own deny range denyCidrs\[0\] \(10\.0\.0\.0\/8\) covers it too/,
        ),
        expect.stringMatching(
          /^\$\.rules\[2\]\.forward\.url: .*; to reach it on purpose, open it in the policy's egress\.allowCidrs \("fd00::5\/128"\)\)/,
        ),
      ]),
    );
  });
});

describe("lintPolicy: allowCidrs that open a cloud metadata address", () => {
  it("names the entry, the address and whose service it is, and the denyCidrs entry that closes it", async () => {
    const policy = await policyFrom({
      version: 1,
      auth: { tokens: [] },
      egress: {
        allowCidrs: ["fd00::/8", "100.64.0.0/10", "169.254.0.0/16", "192.0.0.0/24", "10.0.0.0/8"],
        denyCidrs: ["169.254.169.254/32"],
      },
      rules: [],
    });
    const warnings = lintPolicy(policy)
      .map((w) => `${w.path}: ${w.message}`)
      .filter((w) => w.startsWith("$.egress"));
    expect(warnings).toEqual([
      '$.egress.allowCidrs[0]: "fd00::/8" covers fd00:ec2::254 (the AWS instance metadata service over IPv6) and fd00:ec2::23 (the AWS EKS Pod Identity credentials endpoint over IPv6), so hooks can reach them; to keep them closed add "fd00:ec2::254/128" and "fd00:ec2::23/128" to egress.denyCidrs',
      '$.egress.allowCidrs[1]: "100.64.0.0/10" covers 100.100.100.200 (the Alibaba Cloud metadata service), so hooks can reach it; to keep it closed add "100.100.100.200/32" to egress.denyCidrs',
      '$.egress.allowCidrs[2]: "169.254.0.0/16" covers 169.254.170.2 (the AWS ECS task credentials endpoint) and 169.254.170.23 (the AWS EKS Pod Identity credentials endpoint), so hooks can reach them; to keep them closed add "169.254.170.2/32" and "169.254.170.23/32" to egress.denyCidrs',
      '$.egress.allowCidrs[3]: "192.0.0.0/24" covers 192.0.0.192 (the Oracle Cloud metadata service), so hooks can reach it; to keep it closed add "192.0.0.192/32" to egress.denyCidrs',
    ]);
  });

  it("lists every address one entry opens, and says nothing once denyCidrs closes them", async () => {
    const open = await policyFrom({
      version: 1,
      auth: { tokens: [] },
      egress: { allowCidrs: ["169.254.0.0/16"] },
      rules: [],
    });
    expect(lintPolicy(open).filter((w) => w.path.startsWith("$.egress"))).toEqual([
      {
        severity: "warning",
        path: "$.egress.allowCidrs[0]",
        message:
          '"169.254.0.0/16" covers 169.254.169.254 (the instance metadata service of AWS, GCP, Azure and Oracle Cloud), 169.254.170.2 (the AWS ECS task credentials endpoint) and 169.254.170.23 (the AWS EKS Pod Identity credentials endpoint), so hooks can reach them; to keep them closed add "169.254.169.254/32", "169.254.170.2/32" and "169.254.170.23/32" to egress.denyCidrs',
      },
    ]);
    const closed = await policyFrom({
      version: 1,
      auth: { tokens: [] },
      egress: { allowCidrs: ["169.254.0.0/16"], denyCidrs: ["169.254.169.254/32", "169.254.170.0/24"] },
      rules: [],
    });
    expect(lintPolicy(closed).filter((w) => w.path.startsWith("$.egress"))).toEqual([]);
  });
});

describe("lintPolicy: a sink URL kept in a variable", () => {
  it("is judged when the variable is set where check runs, its secret path not shown", async () => {
    const url = "https://hooks.slack.com/services/T0/B0/abcdefabcdefabcdef";
    const document = {
      version: 1,
      auth: { tokens: [] },
      egress: { allowedHttpHookUrls: ["https://api.github.com/*"] },
      rules: [{ id: "tell", on: "Stop", notify: ["chat", "hook"] }],
      sinks: {
        chat: { type: "slack", url: "env:SLACK_URL" },
        hook: { type: "webhook", url: "env:HOOK_URL" },
      },
    };
    const env: Record<string, string> = { SLACK_URL: url };
    const policy = await policyFrom(document, env);
    const judged = lintPolicy(policy, (name) => env[name])
      .map((w) => `${w.path}: ${w.message}`)
      .filter((w) => w.includes("egress guard"));
    expect(judged).toEqual([
      expect.stringMatching(
        /^\$\.sinks\.chat\.url: the egress guard will refuse it \(EGRESS_NOT_ALLOWLISTED: .*\); every delivery to it will fail into the dead-letter queue \(the URL in SLACK_URL here\)$/,
      ),
    ]);
    expect(judged.join("")).not.toContain("abcdefabcdefabcdef");
    // Without the environment (or with HOOK_URL unset: the load warns about that) nothing is judged.
    expect(lintPolicy(policy).filter((w) => w.message.includes("egress guard"))).toEqual([]);
  });

  // The egress guard refuses a URL behind a byte order mark or a non-breaking space (a pasted
  // variable's) at every delivery, whatever the sink's type: check judged it with them trimmed.
  it.each(["slack", "webhook", "discord", "github-dispatch"])(
    "warns of a %s URL the egress guard refuses for the invisible character before it",
    async (type) => {
      const env: Record<string, string> = {
        SINK_URL: "\ufeffhttps://discord.com/api/webhooks/1/abcdefabcdefabcdef",
      };
      const policy = await policyFrom(
        {
          version: 1,
          rules: [{ id: "tell", on: "Stop", notify: ["chat"] }],
          sinks: {
            chat: {
              type,
              url: "env:SINK_URL",
              ...(type === "github-dispatch" && { repo: "o/r", token: "t", eventType: "hook" }),
            },
          },
        },
        env,
      );
      const judged = lintPolicy(policy, (name) => env[name]).filter((w) =>
        w.message.includes("egress guard"),
      );
      expect(judged.map((w) => `${w.path}: ${w.message}`)).toEqual([
        expect.stringMatching(
          /^\$\.sinks\.chat\.url: the egress guard will refuse it \(EGRESS_BAD_URL: .*delete it\);/,
        ),
      ]);
    },
  );
});

describe("lintPolicy: a model URL kept in a variable", () => {
  it("is judged as the variable reads, its path not shown, and not at all when it is unset", async () => {
    const url = "http://127.0.0.1:8080/v1/abcdefabcdefabcdef1/messages";
    const document = {
      version: 1,
      auth: { tokens: [] },
      rules: [],
      models: { m: { provider: "anthropic", model: "claude-haiku-4-5", apiKey: "k", url: "env:JUDGE_URL" } },
    };
    const env: Record<string, string> = { JUDGE_URL: url };
    const judged = (await Promise.all([policyFrom(document, env), policyFrom(document)])).map((policy) =>
      lintPolicy(policy, (name) => env[name])
        .map((w) => `${w.path}: ${w.message}`)
        .filter((w) => w.includes("egress guard")),
    );
    // It was judged as the URL "env:JUDGE_URL": EGRESS_BAD_SCHEME, set or not.
    expect(judged[0]).toEqual([
      expect.stringMatching(
        /^\$\.models\.m\.url: the egress guard will refuse it \(EGRESS_BLOCKED_ADDRESS: .*\); prompt rules that use it will answer with their onError \(the URL in JUDGE_URL here\)$/,
      ),
    ]);
    expect(judged[0]?.join("")).not.toContain("abcdefabcdefabcdef1");
    expect(judged[1]).toEqual([]);
  });
});

describe("lintPolicy: forward headers whose variables are always sent empty", () => {
  it("names the header and the variable: not in the rule's list, not in the global one, or unset", async () => {
    const forward = (headers: Record<string, string>, allowedEnvVars: string[]) => ({
      url: "https://policy.example/hook",
      headers,
      allowedEnvVars,
    });
    const policy = await policyFrom({
      version: 1,
      auth: { tokens: [] },
      egress: { allowedHttpHookUrls: ["https://policy.example/*"], httpHookAllowedEnvVars: ["SET", "UNSET"] },
      rules: [
        { id: "a", on: "PreToolUse", forward: forward({ Authorization: "Bearer $SET" }, ["SET"]) },
        {
          id: "b",
          on: "PreToolUse",
          // biome-ignore lint/suspicious/noTemplateCurlyInString: a header's ${VAR}, not a template
          forward: forward({ Authorization: "Bearer ${POLICY_TOKEN}" }, ["POLICY_TOKEN"]),
        },
        { id: "c", on: "PreToolUse", forward: forward({ "X-Team": "$SET-$UNSET" }, ["UNSET"]) },
      ],
    });
    const env: Record<string, string> = { SET: "value-of-set", POLICY_TOKEN: "secret-value-123456" };
    const warnings = lintPolicy(policy, (name) => env[name])
      .filter((w) => w.path.includes("forward"))
      .map((w) => `${w.path}: ${w.message}`);
    expect(warnings).toEqual([
      '$.rules[1].forward.headers.Authorization: header "Authorization" reads $POLICY_TOKEN, which is not in egress.httpHookAllowedEnvVars, so it is always sent empty there',
      '$.rules[2].forward.headers["X-Team"]: header "X-Team" reads $SET, which is not in the rule\'s forward.allowedEnvVars, so it is always sent empty there',
      '$.rules[2].forward.headers["X-Team"]: header "X-Team" reads $UNSET, which is not set, so it is always sent empty there',
    ]);
    // Without the environment, whether a variable is set is not judged.
    expect(lintPolicy(policy).filter((w) => w.message.includes("is not set"))).toEqual([]);
  });

  /** The forward warnings of a rule with these headers, TOKEN and T allowed and set. */
  async function headerWarnings(headers: Record<string, string>): Promise<string[]> {
    const policy = await policyFrom({
      version: 1,
      auth: { tokens: [] },
      egress: { allowedHttpHookUrls: ["https://policy.example/*"], httpHookAllowedEnvVars: ["TOKEN", "T"] },
      rules: [
        {
          id: "a",
          on: "PreToolUse",
          forward: { url: "https://policy.example/hook", headers, allowedEnvVars: ["TOKEN", "T"] },
        },
      ],
    });
    const env: Record<string, string> = { TOKEN: "value", T: "t" };
    return lintPolicy(policy, (name) => env[name])
      .filter((w) => w.path.includes("forward"))
      .map((w) => `${w.path}: ${w.message}`);
  }

  it("names a $VAR spelt in lower case, which is sent as written", async () => {
    const messages = await headerWarnings({
      Authorization: "Bearer $token",
      // biome-ignore lint/suspicious/noTemplateCurlyInString: a header's ${VAR}, not a template
      "X-A": "${token}",
      "X-B": "$Token",
      "X-C": "$TOKEN $$ $5",
      // Not "sent as written": Claude Code reads the $TOKEN inside.
      // biome-ignore lint/suspicious/noTemplateCurlyInString: a header's ${VAR}, not a template
      "X-D": "${x $TOKEN}",
      // biome-ignore lint/suspicious/noTemplateCurlyInString: a header's ${VAR}, not a template
      "X-E": "${$TOKEN}",
    });
    const rule = "a header's $VAR names upper-case letters, digits and _ only, as Claude Code's does";
    expect(messages).toEqual([
      `$.rules[0].forward.headers.Authorization: header "Authorization" has $token, which is sent as written, not read from the environment: ${rule}`,
      `$.rules[0].forward.headers["X-A"]: header "X-A" has \${token}, which is sent as written, not read from the environment: ${rule}`,
      `$.rules[0].forward.headers["X-B"]: header "X-B" has $Token, which reads $T and sends the rest as written: ${rule}`,
    ]);
  });

  it("names a ${ with no closing brace, which is sent as written", async () => {
    const messages = await headerWarnings({
      Authorization: "Bearer ${TOKEN",
      "X-A": "${token",
      // The $T after it is read; the `${TOKEN ` before it is not.
      "X-B": "${TOKEN $T",
      // Closed later: Claude Code reads the $TOKEN inside.
      // biome-ignore lint/suspicious/noTemplateCurlyInString: a header's ${VAR}, not a template
      "X-C": "${x $TOKEN}",
    });
    const why = "which has no closing brace, so it is sent as written, not read from the environment";
    expect(messages).toEqual([
      `$.rules[0].forward.headers.Authorization: header "Authorization" has \${TOKEN, ${why}`,
      `$.rules[0].forward.headers["X-A"]: header "X-A" has \${token, ${why}`,
      `$.rules[0].forward.headers["X-B"]: header "X-B" has \${TOKEN, ${why}`,
    ]);
  });
  it('names an "env:NAME" in a header, which is sent as written: a header reads $NAME', async () => {
    // POLICY.md's Secrets reads an "env:NAME" value at load, and a forward's url and a sink's are
    // so read; a header's is not (its variables are $VAR, allowed by name), and `Authorization:
    // env:TOKEN` was called an inline secret, `X-Team: env:T` not named at all.
    const messages = await headerWarnings({
      Authorization: "env:TOKEN",
      "X-Team": "env:T",
      "X-A": "Bearer env:TOKEN",
      "X-B": "env:token",
      "X-C": "Bearer $TOKEN",
    });
    const why = "which is sent as written, not read from the environment: a header reads a variable as";
    const listed = "named in the rule's forward.allowedEnvVars and egress.httpHookAllowedEnvVars";
    expect(messages).toEqual([
      `$.rules[0].forward.headers.Authorization: header "Authorization" has env:TOKEN, ${why} $TOKEN, ${listed}`,
      `$.rules[0].forward.headers["X-Team"]: header "X-Team" has env:T, ${why} $T, ${listed}`,
      `$.rules[0].forward.headers["X-A"]: header "X-A" has env:TOKEN, ${why} $TOKEN, ${listed}`,
      `$.rules[0].forward.headers["X-B"]: header "X-B" has env:token, ${why} $NAME (upper-case letters, digits and _), ${listed}`,
    ]);
  });
});

describe('lintPolicy: an "env:NAME" where none is read', () => {
  it("names each value taken as written, and none a sink, model or forward url reads", async () => {
    // POLICY.md's Secrets reads "a value env:NAME" at load; hookgate reads one in the fields that
    // hold secrets and URLs only. Elsewhere it is the text itself: `"cwd": "env:PROJECT_DIR"`
    // compared the event's cwd with that text, so the deny rule never applied, without a word.
    const policy = await policyFrom({
      version: 1,
      auth: { tokens: [] },
      rules: [
        {
          id: "a",
          on: "PreToolUse",
          matcher: "Bash",
          description: "env:NOT_READ",
          where: { cwd: "env:PROJECT_DIR", "tool_input.command": { startsWith: "env:PREFIX" } },
          decide: "deny",
          reason: "env:DENY_REASON",
          notify: ["gh", "chat"],
        },
        // Its allowlist of names is judged by the policy's load, which says what to write.
        { id: "b", on: "PreToolUse", forward: { url: "env:TEAM_SERVER", allowedEnvVars: ["env:TOKEN"] } },
        { id: "c", on: "PreToolUse", prompt: { text: "Is it safe? $ARGUMENTS", model: "m" } },
      ],
      sinks: {
        gh: { type: "github-dispatch", repo: "acme/app", eventType: "env:GH_EVENT", token: "env:GH_TOKEN" },
        chat: { type: "slack", url: "env:SLACK_URL", link: "env:SLACK_LINK" },
        hook: { type: "webhook", url: "env:HOOK_URL", secret: "env:HOOK_SECRET" },
      },
      models: {
        m: { provider: "anthropic", model: "env:JUDGE_MODEL", apiKey: "env:K", url: "env:JUDGE_URL" },
      },
      egress: { httpHookAllowedEnvVars: ["env:TOKEN"] },
    });
    const why =
      "is taken as written, not read from the environment: hookgate reads an \"env:NAME\" value only in a sink's url, secret and token, a model's apiKey and url, and a forward's url";
    expect(
      lintPolicy(policy)
        .filter((w) => w.message.includes("not read from the environment"))
        .map((w) => `${w.path}: ${w.message}`),
    ).toEqual([
      `$.rules[0].where.cwd: ${why}`,
      `$.rules[0].where["tool_input.command"].startsWith: ${why}`,
      `$.rules[0].reason: ${why}`,
      `$.sinks.gh.eventType: ${why}`,
      `$.sinks.chat.link: ${why}`,
      `$.models.m.model: ${why}`,
    ]);
  });

  it("says to write env:NAME for a shell-style $NAME or {NAME} in braces where hookgate reads env:NAME", async () => {
    // A shell's braced variable, written so that no string here reads as a template.
    const braced = (name: string) => `$\{${name}}`;
    const policy = await policyFrom({
      version: 1,
      auth: { tokens: [] },
      egress: { allowedHttpHookUrls: ["https://*.acme.example/*"] },
      rules: [
        { id: "f", on: "PreToolUse", forward: { url: braced("TEAM_SERVER") } },
        { id: "j", on: "PreToolUse", prompt: { text: "Is it safe? $ARGUMENTS", model: "m" } },
        { id: "n", on: "Stop", notify: ["hook", "gh", "chat"] },
      ],
      sinks: {
        hook: { type: "webhook", url: braced("SIEM_URL"), secret: "$SIEM_WHSEC" },
        gh: { type: "github-dispatch", repo: "acme/app", eventType: "end", token: braced("GITHUB_TOKEN") },
        chat: { type: "slack", url: "$SLACK_WEBHOOK_URL" },
      },
      models: {
        m: { provider: "anthropic", model: "claude-haiku-4-5", apiKey: braced("ANTHROPIC_API_KEY") },
      },
    });
    const write = (spelt: string, name: string) =>
      `"${spelt}" is taken as written, not read from the environment: hookgate reads a variable here as "env:NAME"; write "env:${name}"`;
    const at = (path: string) =>
      lintPolicy(policy)
        .filter((w) => w.path === path)
        .map((w) => w.message);
    // Only the fix: not "write the URL in full" (it has no scheme), nor "an inline secret".
    expect(at("$.rules[0].forward.url")).toEqual([write(braced("TEAM_SERVER"), "TEAM_SERVER")]);
    expect(at("$.sinks.hook.url")).toEqual([write(braced("SIEM_URL"), "SIEM_URL")]);
    expect(at("$.sinks.hook.secret")).toEqual([write("$SIEM_WHSEC", "SIEM_WHSEC")]);
    expect(at("$.sinks.gh.token")).toEqual([write(braced("GITHUB_TOKEN"), "GITHUB_TOKEN")]);
    expect(at("$.sinks.chat.url")).toEqual([write("$SLACK_WEBHOOK_URL", "SLACK_WEBHOOK_URL")]);
    expect(at("$.models.m.apiKey")).toEqual([write(braced("ANTHROPIC_API_KEY"), "ANTHROPIC_API_KEY")]);
  });

  it("keeps a $-led value that reads like a secret an inline secret, never quoted", async () => {
    const policy = await policyFrom({
      version: 1,
      auth: { tokens: [] },
      rules: [{ id: "j", on: "PreToolUse", prompt: { text: "Is it safe? $ARGUMENTS", model: "m" } }],
      models: { m: { provider: "anthropic", model: "claude-haiku-4-5", apiKey: "$q8ZrT2vKx9LmW3pN7sYb" } },
    });
    expect(
      lintPolicy(policy)
        .filter((w) => w.path === "$.models.m.apiKey")
        .map((w) => w.message),
    ).toEqual(['is an inline secret; use "env:NAME"']);
  });
});

describe("lintPolicy: sinks", () => {
  it("says which sink no rule notifies", async () => {
    const policy = await policyFrom({
      version: 1,
      auth: { tokens: [] },
      rules: [{ id: "tell", on: "Stop", notify: ["used"] }],
      sinks: {
        used: { type: "webhook", url: "https://hooks.example/a" },
        idle: { type: "webhook", url: "https://hooks.example/b" },
      },
    });
    expect(lintPolicy(policy).filter((w) => w.message.startsWith("no rule notifies"))).toEqual([
      {
        severity: "warning",
        path: "$.sinks.idle",
        message: "no rule notifies it, so nothing is ever sent to it",
      },
    ]);
  });

  it("says a sink only off or shadow rules notify is never sent to, as the queue check counts it", async () => {
    // Such a sink was counted as notified here while `notifies` (a runtime's queue check) did not.
    const policy = await policyFrom({
      version: 1,
      auth: { tokens: [] },
      rules: [
        { id: "old", on: "Stop", mode: "off", notify: ["quiet"] },
        { id: "trial", on: "Stop", mode: "shadow", notify: ["quiet", "tried"] },
        { id: "tell", on: "Stop", notify: ["used"] },
      ],
      sinks: {
        used: { type: "webhook", url: "https://hooks.example/a" },
        quiet: { type: "webhook", url: "https://hooks.example/b" },
        tried: { type: "webhook", url: "https://hooks.example/c" },
      },
    });
    expect(
      lintPolicy(policy)
        .filter((w) => w.path.startsWith("$.sinks."))
        .map((w) => `${w.path}: ${w.message}`),
    ).toEqual([
      '$.sinks.quiet: is notified only by rules that send nothing ("old", off; "trial", in shadow), so nothing is ever sent to it; notify it from an enforcing rule',
      '$.sinks.tried: is notified only by rules that send nothing ("trial", in shadow), so nothing is ever sent to it; notify it from an enforcing rule',
    ]);
  });
});

describe("a where field no event of the rule carries, a typo of one it does", () => {
  it.each([
    ["PreToolUse", "cwdd", "cwd"],
    ["Stop", "stop_hook_actve", "stop_hook_active"],
    ["PreToolUse", "tool_nme", "tool_name"],
  ])("on %s, %j is said to mean %j: the rule would never apply", async (on, field, meant) => {
    const warnings = await warningsFor([
      { id: "r", on, where: { [field]: { exists: true } }, decide: "deny", reason: "x" },
    ]);
    expect(warnings).toContain(
      `$.rules[0].where.${field}: ${on} carries no "${field}", so this condition never holds and the rule never applies: did you mean "${meant}"?`,
    );
  });

  // The warning of deepagents' legacy events already says which keys such a body carries: a
  // second warning of the same key said the same again.
  it.each([
    ["tool.error", "tool_name"],
    ["tool.use", "tool_names"],
  ])("on %s, %j gets one warning, the one naming the keys its body carries", async (on, field) => {
    const warnings = await warningsFor([
      { id: "r", on, where: { [field]: { exists: true } }, decide: "deny", reason: "x" },
    ]);
    const ofField = warnings.filter((w) => w.startsWith(`$.rules[0].where.${field}:`));
    expect(ofField).toHaveLength(1);
    expect(ofField[0]).toContain("a deepagents legacy body carries");
  });

  // Two edits turn a two-letter name into most short ones: `id` is no typo of `cwd`.
  it('suggests no field for "id", a name too short to be a near miss of one', async () => {
    const warnings = await warningsFor([
      { id: "r", on: "PreToolUse", where: { id: "x" }, decide: "deny", reason: "x" },
    ]);
    expect(warnings.filter((w) => w.includes("did you mean"))).toEqual([]);
  });

  // `model` is one edit from Elicitation's `mode`, and SessionStart's own field: it was called a
  // typo of `mode`, which a rule meant for the session's model is not.
  it.each([
    ["Elicitation", "model", "SessionStart does"],
    ["PreToolUse", "prompt", "UserPromptSubmit, UserPromptExpansion do"],
    ["PostToolUseFailure", "tool_response", "PostToolUse does"],
  ])(
    "on %s, %j, another event's field, is said to be carried by that event, not called a typo",
    async (on, field, carriers) => {
      const warnings = await warningsFor([{ id: "r", on, where: { [field]: "x" }, context: "c" }]);
      expect(warnings.filter((w) => w.startsWith(`$.rules[0].where.${field}:`))).toEqual([
        `$.rules[0].where.${field}: ${on} carries no "${field}" (${carriers}), so this condition never holds and the rule never applies`,
      ]);
    },
  );

  // Events whose fields no source states (clients.md §5.2: "CC-332 only, see docs"): events.ts
  // knows only their common fields, so a field of theirs is not another event's.
  it.each([
    ["PreModelSwitch", "model"],
    ["PostModelSwitch", "source"],
    ["PreSkillShellCommand", "reason"],
  ])("on %s, whose fields are not known, %j is not said to be another event's", async (on, field) => {
    const warnings = await warningsFor([{ id: "r", on, where: { [field]: "x" }, context: "c" }]);
    expect(warnings.filter((w) => w.startsWith(`$.rules[0].where.${field}:`))).toEqual([]);
  });

  // A first policy's `"where": {"command": ...}`: the rule never applied, with no word from check,
  // and `file_path` was said to be ConfigChange's.
  it.each([
    ["PreToolUse", "Bash", "command", { contains: "rm -rf" }],
    ["PostToolUse", "Write|Edit", "file_path", { glob: "**/.env" }],
  ])(
    "on %s, a where on %s's input field %j outside tool_input says to write it under tool_input",
    async (on, matcher, field, condition) => {
      const warnings = await warningsFor([
        { id: "r", on, matcher, where: { [field]: condition }, decide: "deny", reason: "x" },
      ]);
      expect(warnings.filter((w) => w.startsWith(`$.rules[0].where.${field}:`))).toEqual([
        `$.rules[0].where.${field}: ${on} carries no "${field}" at the top level, so this condition never holds and the rule never applies: a tool call's input is under tool_input; write "tool_input.${field}"`,
      ]);
    },
  );

  // Fields a client sends that events.ts leaves untyped (clients.md §5.2, §5.3) are real fields.
  it.each([
    ["Elicitation", ["mcp_server_name", "message", "mode", "url", "elicitation_id", "requested_schema"]],
    ["ElicitationResult", ["mcp_server_name", "elicitation_id", "mode", "action", "content"]],
    ["PostToolUse", ["tool_response", "tool_output", "duration_ms"]],
    ["UserPromptExpansion", ["command_args", "command_name"]],
    ["StopFailure", ["error", "error_details"]],
    ["InstructionsLoaded", ["globs", "load_reason"]],
  ])("on %s, no field a client sends there gets a warning", async (on, fields) => {
    const where = Object.fromEntries(fields.map((field) => [field, { exists: true }]));
    const warnings = await warningsFor([{ id: "r", on, where, context: "c" }]);
    expect(warnings.filter((w) => w.includes(".where"))).toEqual([]);
  });

  it("says nothing of a field no event declares and none is near (a client's newer field)", async () => {
    const warnings = await warningsFor([
      { id: "r", on: "PreToolUse", where: { model_name: "x" }, decide: "deny", reason: "x" },
    ]);
    expect(warnings.filter((w) => w.includes("model_name"))).toEqual([]);
  });
});

describe("lintPolicy on examples/policy.json", () => {
  it("finds no rule that can never apply", async () => {
    const { readFile } = await import("node:fs/promises");
    const document = JSON.parse(
      await readFile(new URL("../../examples/policy.json", import.meta.url), "utf8"),
    );
    const warnings = lintPolicy(await policyFrom(document, { HOOKGATE_TOKEN_MOBILE: "t" }));
    expect(
      warnings.map((w) => w.message).filter((m) => /never apply|never run|ignored there/.test(m)),
    ).toEqual([]);
  });
});

describe("lintPolicy on docs/POLICY.md's reference policy", () => {
  it("warns about nothing but the secrets this test does not set", async () => {
    const { readFile } = await import("node:fs/promises");
    const markdown = await readFile(new URL("../../docs/POLICY.md", import.meta.url), "utf8");
    const block = /```json\n([\s\S]*?)\n```/.exec(markdown)?.[1];
    const env = {
      HOOKGATE_TOKEN_MOBILE: "t",
      ANTHROPIC_API_KEY: "k",
      SLACK_WEBHOOK_URL: "https://hooks.slack.com/services/T/B/x",
    };
    const warnings = lintPolicy(
      await policyFrom(JSON.parse(block ?? "null"), {
        ...env,
        SIEM_WHSEC: "whsec_c2VjcmV0",
        GITHUB_TOKEN: "g",
      }),
    );
    expect(warnings.map((w) => `${w.path}: ${w.message}`)).toEqual([]);
  });
});

describe("lintPolicy: if entries that can never match", () => {
  it("names a tool in the wrong case and a specifier on a tool without a command", async () => {
    const warnings = await warningsFor([
      { id: "lower", on: "PreToolUse", if: "bash(rm *)", decide: "deny" },
      { id: "agent", on: "PreToolUse", if: ["Agent(Explore)", "Skill(deploy)", "Bash(rm *)"], decide: "ask" },
      { id: "fine", on: "PreToolUse", if: ["Agent", "Read(./.env)", "mcp__github__*"], decide: "deny" },
    ]);
    expect(warnings).toContain(
      '$.rules[0].if: "bash(rm *)" names the tool "bash"; tool names are case-sensitive: did you mean Bash?',
    );
    expect(warnings.filter((w) => w.startsWith("$.rules[1].if["))).toEqual([
      expect.stringMatching(
        /^\$\.rules\[1\]\.if\[0\]: "Agent\(Explore\)" is matched against tool_input\.command/,
      ),
      expect.stringMatching(
        /^\$\.rules\[1\]\.if\[1\]: "Skill\(deploy\)" is matched against tool_input\.command/,
      ),
    ]);
    expect(warnings.filter((w) => w.startsWith("$.rules[2]"))).toEqual([]);
  });

  it.each([
    ["task(research*)", "task", '{"tool_input.subagent_type":{"glob":"research*"}}'],
    ["Agent(Explore)", "Agent", '{"tool_input.subagent_type":"Explore"}'],
  ])("says %s never matches, and how to name the subagent it starts", async (ifRule, tool, where) => {
    // deepagents sends its subagent tool as "task", whose input is a description and a
    // subagent_type: that specifier matched nothing, with no word from check.
    const warnings = await warningsFor([{ id: "sub", on: "PreToolUse", if: ifRule, decide: "deny" }]);
    expect(warnings).toContain(
      `$.rules[0].if: "${ifRule}" is matched against tool_input.command, which ${tool} calls do not carry, so it matches none that carries its input; write "${tool}" alone, with "where": ${where} for the subagent it starts`,
    );
  });

  // Each of these matched no tool, so the rule never applied, and check said nothing.
  it("says what to write for a matcher written as a permission rule or as names split by commas or spaces", async () => {
    const warnings = await warningsFor([
      { id: "perm", on: "PreToolUse", matcher: "Bash(rm *)", decide: "deny" },
      { id: "comma", on: "PreToolUse", matcher: "Write, Edit", decide: "ask" },
      { id: "space", on: ["PostToolUse"], matcher: "Read Grep", context: "c" },
      { id: "regex", on: "PreToolUse", matcher: "Bash(.*)", decide: "deny" },
      { id: "fine", on: "PreToolUse", matcher: "Write|Edit", decide: "ask" },
      // Regular expressions ending in a group, each matching tools (WebFetch, an MCP server's):
      // no tool is named before the parenthesis, so there is no permission rule to read.
      { id: "group", on: "PreToolUse", matcher: "Web(Fetch|Search)", decide: "ask" },
      { id: "mcp", on: "PreToolUse", matcher: "mcp__github__(create_issue|delete_repo)", decide: "ask" },
    ]);
    expect(warnings.filter((w) => w.includes(".matcher"))).toEqual([
      '$.rules[0].matcher: "Bash(rm *)" is a permission rule, which a matcher does not read: a matcher is a tool name or a regular expression of them, and this one matches no tool "Bash"; write "matcher": "Bash" and "if": "Bash(rm *)"',
      '$.rules[1].matcher: "Write, Edit" is read as one regular expression, commas and spaces included, so it matches none of the tools it names; separate them with "|": write "Write|Edit"',
      '$.rules[2].matcher: "Read Grep" is read as one regular expression, commas and spaces included, so it matches none of the tools it names; separate them with "|": write "Read|Grep"',
    ]);
  });

  it("names a path rule written as a Windows drive path, which matches no Windows path", async () => {
    const warnings = await warningsFor([
      {
        id: "keys",
        on: "PreToolUse",
        if: ["Read(//C:/Users/dev/.ssh/**)", "Read(C:\\Users\\dev\\.ssh\\**)", "Read(//c/Users/dev/.ssh/**)"],
        decide: "deny",
      },
      { id: "proj", on: "PreToolUse", if: "Edit(C:/proj/**)", decide: "ask" },
      {
        id: "fine",
        on: "PreToolUse",
        if: ["Read(//c/**/.env)", "Read(./C/x)", "Edit(src/c:x)"],
        decide: "deny",
      },
    ]);
    const written =
      "a Windows client's C:\\x is read as /c/x, as Claude Code reads it, so it matches no Windows path";
    expect(warnings.filter((w) => w.startsWith("$.rules[0]"))).toEqual([
      `$.rules[0].if[0]: "Read(//C:/Users/dev/.ssh/**)" names a Windows drive as C:; ${written}: write "Read(//c/Users/dev/.ssh/**)"`,
      `$.rules[0].if[1]: "Read(C:\\Users\\dev\\.ssh\\**)" names a Windows drive as C:; ${written}: write "Read(//c/Users/dev/.ssh/**)"`,
    ]);
    expect(warnings).toContain(
      `$.rules[1].if: "Edit(C:/proj/**)" names a Windows drive as C:; ${written}: write "Edit(//c/proj/**)"`,
    );
    expect(warnings.filter((w) => w.startsWith("$.rules[2]"))).toEqual([]);
  });

  it("reads a Windows drive path as matching nothing, and the form it names as matching", async () => {
    const policy = await policyFrom({
      version: 1,
      auth: { tokens: [] },
      rules: [
        { id: "written", on: "PreToolUse", if: "Read(//C:/Users/dev/.ssh/**)", decide: "deny" },
        { id: "posix", on: "PreToolUse", if: "Read(//c/Users/dev/.ssh/**)", decide: "deny" },
      ],
    });
    const event = parseHookEvent({
      hook_event_name: "PreToolUse",
      session_id: "s",
      cwd: "C:\\Users\\dev\\proj",
      transcript_path: "C:\\Users\\dev\\.claude\\projects\\C--Users-dev-proj\\s.jsonl",
      tool_name: "Read",
      tool_input: { file_path: "C:\\Users\\dev\\.ssh\\id_rsa" },
    });
    if (!event.ok) throw new Error("the event should parse");
    const evaluation = evaluatePolicy(policy, event.value, { team: "default" });
    expect(evaluation.enforced.map((m) => m.rule.id)).toEqual(["posix"]);
  });
});

describe("lintPolicy: a where glob with no folder on an absolute path", () => {
  // A first policy's `{"glob": "*.env"}` on a file's path matched no call, with no word from check.
  const rules = [
    { id: "bare", on: "PreToolUse", where: { "tool_input.file_path": { glob: "*.env" } }, decide: "deny" },
    {
      id: "meant",
      on: "PreToolUse",
      where: { "tool_input.file_path": { glob: "**/*.env" } },
      decide: "deny",
    },
    { id: "name", on: "FileChanged", where: { event: { glob: "ch*" } }, context: "c" },
    // No tool call: an `if` path rule, which applies to tool events alone, is no way to write it.
    { id: "folder", on: "PreToolUse", where: { cwd: { glob: "*prod*" } }, decide: "ask" },
    { id: "memory", on: "InstructionsLoaded", where: { file_path: { glob: "*.md" } }, context: "c" },
    // deepagents' legacy tool_args hold the path as the agent wrote it, relative ("src/app.py").
    { id: "legacy", on: "tool.result", where: { "tool_args.file_path": { glob: "*.py" } }, context: "c" },
  ];

  it("says to write **/ before it, and nothing of a glob with a / or on a field that is no path", async () => {
    expect((await warningsFor(rules)).filter((w) => w.includes(".glob"))).toEqual([
      '$.rules[0].where["tool_input.file_path"].glob: "*.env" has no "/", so it matches a bare name only (a glob\'s "*" stops at a "/"), and clients send tool_input.file_path as an absolute path: it matches none on macOS or Linux; write "**/*.env" to match it in any folder (a Windows path, which has no "/", is matched by an "if" path rule, such as Read(**/x))',
      '$.rules[3].where.cwd.glob: "*prod*" has no "/", so it matches a bare name only (a glob\'s "*" stops at a "/"), and clients send cwd as an absolute path: it matches none on macOS or Linux; write "**/*prod*" to match it in any folder',
      '$.rules[4].where.file_path.glob: "*.md" has no "/", so it matches a bare name only (a glob\'s "*" stops at a "/"), and clients send file_path as an absolute path: it matches none on macOS or Linux; write "**/*.md" to match it in any folder',
    ]);
  });

  it("reads the glob as the warning says: the bare one matches no absolute path, the one it names does", async () => {
    const policy = await policyFrom({ version: 1, auth: { tokens: [] }, rules });
    const event = parseHookEvent({
      hook_event_name: "PreToolUse",
      session_id: "s",
      cwd: "/home/dev/proj",
      tool_name: "Read",
      tool_input: { file_path: "/home/dev/proj/.env" },
    });
    if (!event.ok) throw new Error("the event should parse");
    const evaluation = evaluatePolicy(policy, event.value, { team: "default" });
    expect(evaluation.enforced.map((m) => m.rule.id)).toEqual(["meant"]);
  });
});

describe("lintPolicy: a where glob relative to the project on an absolute path", () => {
  // biome-ignore lint/suspicious/noTemplateCurlyInString: a shell's ${HOME}, not a template
  const bracedHome = "${HOME}/.ssh/*";
  // A first policy's `{"glob": "src/*.ts"}` on a file's path matched no call, with no word from check.
  const onFile = (glob: unknown, decide = "deny") => ({
    id: `${decide} ${JSON.stringify(glob)}`,
    on: "PreToolUse",
    where: { "tool_input.file_path": glob },
    decide,
  });
  const rules = [
    onFile({ glob: "src/*.ts" }),
    onFile({ glob: "./src/*.ts" }),
    onFile({ glob: "~/.ssh/*" }),
    { id: "folder", on: "UserPromptSubmit", where: { cwd: { glob: "proj/" } }, context: "c" },
    onFile({ glob: "src/*.ts" }, "allow"),
    onFile({ glob: "../shared/*" }),
    // Each of these may match an absolute path, or is read on a field that holds no absolute one.
    onFile({ glob: "**/src/*.ts" }),
    onFile({ glob: "/etc/**" }),
    onFile({ glob: "{/etc,/srv}/**" }),
    onFile({ not: { glob: "src/*.ts" } }),
    { id: "pattern", on: "PreToolUse", where: { "tool_input.pattern": { glob: "src/**" } }, decide: "ask" },
    { id: "legacy", on: "tool.result", where: { "tool_args.file_path": { glob: "src/*.py" } }, context: "c" },
    // A glob expands no variable either: "$HOME/.ssh/*" was told to become "**/$HOME/.ssh/*", which
    // matches none, and "${HOME}/.ssh/*" passed in silence.
    onFile({ glob: "$HOME/.ssh/*" }),
    onFile({ glob: bracedHome }),
  ];
  const start = (glob: string) => `"${glob}" starts with neither "/" nor "**/"`;
  const matchesNone = (key: string) =>
    `clients send ${key} as an absolute path, which a glob matches whole: it matches no path a client sends`;
  const windows = ' (a Windows path, which has no "/", is matched by an "if" path rule, such as Read(**/x))';

  it("says to write **/ before it, and nothing of a glob that may match an absolute path", async () => {
    expect((await warningsFor(rules)).filter((w) => w.includes(".glob"))).toEqual([
      `$.rules[0].where["tool_input.file_path"].glob: ${start("src/*.ts")}, and ${matchesNone("tool_input.file_path")}; write "**/src/*.ts" to match it under any folder${windows}`,
      `$.rules[1].where["tool_input.file_path"].glob: ${start("./src/*.ts")}, and ${matchesNone("tool_input.file_path")}; write "**/src/*.ts" to match it under any folder${windows}`,
      `$.rules[2].where["tool_input.file_path"].glob: ${start("~/.ssh/*")} (a glob reads "~" as itself, not as the home folder), and ${matchesNone("tool_input.file_path")}; write "**/.ssh/*" to match it under any folder${windows}`,
      `$.rules[3].where.cwd.glob: ${start("proj/")}, and ${matchesNone("cwd")}; write "**/proj" to match it under any folder`,
      `$.rules[4].where["tool_input.file_path"].glob: ${start("src/*.ts")}, and ${matchesNone("tool_input.file_path")}; write "**/src/*.ts" to match it under any folder${windows}; on an allow, that lets through "src/*.ts" under every folder (a dependency's too): for the project's own alone, write its absolute folder before it`,
      `$.rules[5].where["tool_input.file_path"].glob: ${start("../shared/*")}, and ${matchesNone("tool_input.file_path")}; write the absolute path it names`,
      `$.rules[12].where["tool_input.file_path"].glob: ${start("$HOME/.ssh/*")} (a glob reads "$HOME" as itself, not as the home folder), and ${matchesNone("tool_input.file_path")}; write "**/.ssh/*" to match it under any folder${windows}`,
      `$.rules[13].where["tool_input.file_path"].glob: ${start(bracedHome)} (a glob reads "\${HOME}" as itself, not as the home folder), and ${matchesNone("tool_input.file_path")}; write "**/.ssh/*" to match it under any folder${windows}`,
    ]);
  });

  it("reads the glob as the warning says: the relative one matches no absolute path, the one it names does", async () => {
    const policy = await policyFrom({ version: 1, auth: { tokens: [] }, rules: rules.slice(0, 1) });
    const meant = await policyFrom({
      version: 1,
      auth: { tokens: [] },
      rules: [onFile({ glob: "**/src/*.ts" })],
    });
    const event = parseHookEvent({
      hook_event_name: "PreToolUse",
      session_id: "s",
      cwd: "/home/dev/proj",
      tool_name: "Read",
      tool_input: { file_path: "/home/dev/proj/src/app.ts" },
    });
    if (!event.ok) throw new Error("the event should parse");
    expect(evaluatePolicy(policy, event.value, { team: "default" }).enforced).toEqual([]);
    expect(evaluatePolicy(meant, event.value, { team: "default" }).enforced).toHaveLength(1);
  });
});

describe("lintPolicy: rules a typo keeps from ever applying", () => {
  it("names a team no token authenticates as, and one when the policy has no auth", async () => {
    const withAuth = await policyFrom({
      version: 1,
      auth: { tokens: [{ team: "platform", sha256: "0".repeat(64) }] },
      rules: [{ id: "r", on: "PreToolUse", teams: ["platform", "platfrom"], decide: "deny" }],
    });
    expect(lintPolicy(withAuth).map((w) => `${w.path}: ${w.message}`)).toEqual([
      '$.rules[0].teams[1]: no caller is team "platfrom" (the teams are "platform"), so it never applies for one',
    ]);
    const noAuth = await policyFrom({
      version: 1,
      rules: [{ id: "r", on: "PreToolUse", teams: ["default", "mobile"], decide: "deny" }],
    });
    expect(lintPolicy(noAuth).map((w) => w.path)).toEqual(["$", "$.rules[0].teams[1]"]);
  });

  it("says that auth without tokens lets no caller in, and names no teams as an empty list", async () => {
    const policy = await policyFrom({
      version: 1,
      auth: { tokens: [] },
      rules: [{ id: "r", on: "PreToolUse", teams: ["platform"], decide: "deny" }],
    });
    expect(lintPolicy(policy).map((w) => `${w.path}: ${w.message}`)).toEqual([
      '$.auth.tokens: is empty: no caller can authenticate, so every request is answered with auth.onFailure; add a token per team (hookgate token hash), or remove "auth" for a gateway on one machine',
      '$.rules[0].teams[0]: no caller is team "platform" (auth lists no tokens, so there are no teams), so it never applies for one',
    ]);
  });

  it("names a matcher's tool in the wrong case, as it does an if's", async () => {
    const warnings = await warningsFor([
      { id: "lower", on: "PreToolUse", matcher: "bash|Read", decide: "deny" },
      { id: "fine", on: "PreToolUse", matcher: "Bash|mcp__.*", decide: "deny" },
      { id: "both", on: "PreToolUse", matcher: "bash|Bash", decide: "deny" },
      // Not a tool's name there: a command's, a file's (the review of this lint).
      { id: "expansion", on: "UserPromptExpansion", matcher: "task|deploy", decide: "block", reason: "r" },
      { id: "agent", on: "SubagentStart", matcher: "task|write", context: "c" },
    ]);
    expect(warnings.filter((w) => w.includes(".matcher:"))).toEqual([
      '$.rules[0].matcher: "bash" matches no tool "Bash": tool names are case-sensitive',
    ]);
  });

  it("names a where's tool_name in the wrong case, as it does a matcher's", async () => {
    const warnings = await warningsFor([
      { id: "literal", on: "PreToolUse", where: { tool_name: "bash" }, decide: "deny" },
      { id: "equals", on: "PostToolUse", where: { tool_name: { equals: "WEBFETCH" } }, context: "c" },
      { id: "in", on: "PreToolUse", where: { tool_name: { in: ["Bash", "read"] } }, decide: "deny" },
      { id: "not", on: "PreToolUse", where: { tool_name: { not: { equals: "bash" } } }, decide: "deny" },
      { id: "fine", on: "PreToolUse", where: { tool_name: { in: ["Bash", "mcp__x__y"] } }, decide: "deny" },
    ]);
    expect(warnings.filter((w) => w.includes("case-sensitive"))).toEqual([
      '$.rules[0].where.tool_name: "bash" matches no tool "Bash": tool names are case-sensitive, so this never holds',
      '$.rules[1].where.tool_name.equals: "WEBFETCH" matches no tool "WebFetch": tool names are case-sensitive, so this never holds',
      '$.rules[2].where.tool_name.in: "read" matches no tool "Read": tool names are case-sensitive, so it is never the value',
      '$.rules[3].where.tool_name.not.equals: "bash" matches no tool "Bash": tool names are case-sensitive, so {"equals":"bash"} never holds and its "not" holds on every event: this condition tests nothing',
    ]);
  });

  it("says nothing of a where's lower-case tool_name on deepagents' legacy events, which send its own names", async () => {
    // tool.use carries deepagents' names as its tools call themselves (`ls`, `grep`, `task`), and
    // "on": "*" reaches it too, as lintMatcherCase leaves a matcher there alone.
    const warnings = await warningsFor([
      { id: "legacy", on: "tool.use", where: { tool_name: { in: ["ls", "grep"] } }, context: "c" },
      { id: "result", on: ["tool.result"], where: { tool_name: "task" }, context: "c" },
      { id: "any", on: "*", where: { tool_name: "glob" }, context: "c" },
    ]);
    expect(warnings.filter((w) => w.includes("case-sensitive"))).toEqual([]);
  });

  it("names a matcher read as one regular expression with spaces at a part's edge, which no tool name has", async () => {
    // A matcher split at its `|` has its parts trimmed (`Bash | Write`); one read whole (a `|`
    // inside a group, a leading flag group, no `|` at all) keeps its spaces, and matched no tool.
    const spaced = (matcher: string) =>
      `$.rules[0].matcher: "${matcher}" is read as one regular expression, spaces included (only a matcher split at its "|" has its parts trimmed), and no tool name has a space: remove the spaces around "|" and at its ends, or it matches no tool there`;
    for (const matcher of ["mcp__(github|gitlab)__.* | Bash", " Bash", "(?i)bash | read", " "]) {
      const warnings = await warningsFor([{ id: "r", on: "PreToolUse", matcher, decide: "deny" }]);
      expect(
        warnings.filter((w) => w.includes(".matcher:")),
        matcher,
      ).toEqual([spaced(matcher)]);
    }
    const fine = await warningsFor([
      { id: "split", on: "PreToolUse", matcher: "Bash | Write", decide: "deny" },
      { id: "regex", on: "PreToolUse", matcher: "mcp__.* | Bash", decide: "deny" },
      // Not a tool's name there: a file's may have spaces.
      { id: "file", on: "FileChanged", matcher: "my notes.md", context: "c" },
    ]);
    expect(fine.filter((w) => w.includes(".matcher:"))).toEqual([]);
  });

  it("names deepagents' own tool names, which its hooks send under Claude Code's", async () => {
    const native = (name: string, sent: string) =>
      `"${name}" is deepagents' own name for ${sent}, which its hooks send as "${sent}" on tool events (only its legacy tool.use carries "${name}"), so no client sends it here: write ${sent}`;
    const warnings = await warningsFor([
      { id: "exec", on: "PreToolUse", matcher: "execute", decide: "deny" },
      { id: "write", on: "PreToolUse", if: "write_file", decide: "deny" },
      { id: "either", on: "PreToolUse", matcher: "execute|Bash", decide: "deny" },
      // deepagents' web tools keep their own names, and a legacy event's matcher is no tool's.
      { id: "web", on: "PreToolUse", matcher: "web_search|fetch_url", decide: "deny" },
    ]);
    expect(warnings.filter((w) => w.includes("deepagents' own name"))).toEqual([
      `$.rules[0].matcher: ${native("execute", "Bash")}`,
      `$.rules[1].if: ${native("write_file", "Write")}`,
    ]);
  });

  it("says nothing of the case of a name deepagents sends as written, its subagent tool's task", async () => {
    // deepagents renames seven tools to Claude Code's names and sends the rest as they call
    // themselves: "task" is its subagent tool's name on PreToolUse, not Task miscased.
    const warnings = await warningsFor([
      { id: "matcher", on: "PreToolUse", matcher: "task", decide: "deny" },
      { id: "where", on: "PreToolUse", where: { tool_name: "task" }, decide: "deny" },
      { id: "in", on: "PostToolUse", where: { tool_name: { in: ["Task", "task"] } }, context: "c" },
      { id: "if", on: "PreToolUse", if: "task", decide: "deny" },
      // Renamed, so never sent in lower case on a tool event: still named.
      { id: "ls", on: "PreToolUse", matcher: "ls", decide: "deny" },
    ]);
    expect(warnings.filter((w) => w.includes("case-sensitive"))).toEqual([
      '$.rules[4].matcher: "ls" matches no tool "LS": tool names are case-sensitive',
    ]);
  });

  it("names a where literal of the wrong type for a field clients send as a boolean", async () => {
    const warnings = await warningsFor([
      { id: "s", on: "Stop", where: { stop_hook_active: "false" }, decide: "block", reason: "r" },
      { id: "t", on: "Stop", where: { stop_hook_active: false }, decide: "block", reason: "r" },
      { id: "u", on: "Stop", where: { stop_hook_active: { equals: "true" } }, decide: "block", reason: "r" },
    ]);
    expect(warnings).toEqual([
      '$.rules[0].where.stop_hook_active: "false" is a string; clients send stop_hook_active as a boolean, so this never holds: write false',
      '$.rules[2].where.stop_hook_active: "true" is a string; clients send stop_hook_active as a boolean, so this never holds: write true',
    ]);
  });
});

describe("lintPolicy: where values of a type the event's field never has", () => {
  it("reads every declared field's type from the event's schema, in and nested fields too", async () => {
    const warnings = await warningsFor([
      { id: "a", on: "PostToolUse", where: { duration_ms: "5" }, decide: "allow" },
      { id: "b", on: ["SessionEnd"], where: { reason: { in: ["exit", 1, null] } }, decide: "allow" },
      { id: "c", on: "PreToolUse", where: { "effort.level": { equals: 3 } }, decide: "deny" },
      { id: "d", on: ["Stop", "SubagentStop"], where: { stop_hook_active: 0 }, decide: "block", reason: "r" },
    ]);
    expect(warnings.filter((w) => w.includes("clients send"))).toEqual([
      '$.rules[0].where.duration_ms: "5" is a string; clients send duration_ms as a number, so this never holds: write 5',
      "$.rules[1].where.reason.in: 1 is a number; clients send reason as a string, so it is never the value",
      '$.rules[2].where["effort.level"]: 3 is a number; clients send effort.level as a string, so this never holds',
      "$.rules[3].where.stop_hook_active: 0 is a number; clients send stop_hook_active as a boolean, so this never holds",
    ]);
  });

  it("names a string operator on a field that is never a string", async () => {
    const warnings = await warningsFor([
      { id: "a", on: "Stop", where: { stop_hook_active: { regex: "true" } }, decide: "block", reason: "r" },
      { id: "b", on: "PostToolUse", where: { duration_ms: { startsWith: "1" } }, decide: "allow" },
      { id: "c", on: "PostCompact", where: { truncated: { glob: "t*" } }, decide: "allow" },
      { id: "d", on: "PostCompact", where: { messages_after: { contains: "1" } }, decide: "allow" },
      { id: "e", on: "Stop", where: { background_tasks: { contains: "x" } }, decide: "allow" },
      { id: "f", on: "MessageDisplay", where: { turn_id: { regex: "^1" } }, decide: "allow" },
      { id: "g", on: "PreToolUse", where: { "tool_input.timeout": { regex: "5" } }, decide: "deny" },
    ]);
    expect(warnings.filter((w) => w.includes("holds on"))).toEqual([
      '$.rules[0].where.stop_hook_active.regex: "regex" holds on a string only, and clients send stop_hook_active as a boolean, so this never holds: compare it with a value',
      '$.rules[1].where.duration_ms.startsWith: "startsWith" holds on a string only, and clients send duration_ms as a number, so this never holds: compare it with a value',
      '$.rules[2].where.truncated.glob: "glob" holds on a string only, and clients send truncated as a boolean, so this never holds: compare it with a value',
      '$.rules[3].where.messages_after.contains: "contains" holds on a string or an array only, and clients send messages_after as a number, so this never holds: compare it with a value',
    ]);
  });

  it("names a path into a field that has no such field", async () => {
    const warnings = await warningsFor([
      { id: "a", on: "UserPromptSubmit", where: { "prompt.length": 0 }, decide: "block", reason: "r" },
      { id: "b", on: "Stop", where: { "background_tasks.name": { exists: true } }, decide: "allow" },
      { id: "c", on: "PreToolUse", where: { "effort.level.x": "y" }, decide: "deny" },
      {
        id: "d",
        on: "Stop",
        where: { "background_tasks.length": 0, "background_tasks.0": "x" },
        decide: "allow",
      },
      { id: "e", on: "UserPromptSubmit", where: { "prompt.length": { exists: false } }, decide: "allow" },
      { id: "f", on: "PostToolBatch", where: { "tool_calls.0.tool_name": "Bash" }, decide: "allow" },
    ]);
    expect(warnings.filter((w) => w.includes("is never there"))).toEqual([
      '$.rules[0].where["prompt.length"]: clients send prompt as a string, which has no fields (where reads the length of a list, not of a string), so "prompt.length" is never there and this condition never holds',
      '$.rules[1].where["background_tasks.name"]: clients send background_tasks as an array, which has only its indices and length, so "background_tasks.name" is never there and this condition never holds',
      '$.rules[2].where["effort.level.x"]: clients send effort.level as a string, which has no fields (where reads the length of a list, not of a string), so "effort.level.x" is never there and this condition never holds',
    ]);
  });

  it("looks inside a not, where a condition that never holds makes one that always does, and into an equals object", async () => {
    const warnings = await warningsFor([
      { id: "a", on: "PostToolUse", where: { duration_ms: { not: { equals: "5" } } }, decide: "allow" },
      {
        id: "b",
        on: "PostToolUse",
        where: { duration_ms: { not: { not: { equals: "5" } } } },
        decide: "allow",
      },
      { id: "c", on: "SessionEnd", where: { reason: { not: { in: ["exit", 1] } } }, decide: "allow" },
      { id: "d", on: "PreToolUse", where: { effort: { equals: { level: 3 } } }, decide: "deny" },
      { id: "e", on: "PreToolUse", where: { effort: { not: { equals: { level: 3 } } } }, decide: "deny" },
      { id: "f", on: "Stop", where: { stop_hook_active: { not: { regex: "true" } } }, decide: "allow" },
      {
        id: "g",
        on: "UserPromptSubmit",
        where: { "prompt.length": { not: { equals: 0 } } },
        decide: "allow",
      },
      {
        id: "h",
        on: "UserPromptSubmit",
        where: { "prompt.length": { not: { exists: false } } },
        decide: "allow",
      },
      { id: "i", on: "PostToolUse", where: { duration_ms: { not: { equals: 5 } } }, decide: "allow" },
      { id: "j", on: "PreToolUse", where: { effort: { equals: { level: "high" } } }, decide: "deny" },
    ]);
    expect(warnings.filter((w) => w.includes("clients send"))).toEqual([
      '$.rules[0].where.duration_ms.not: "5" is a string; clients send duration_ms as a number, so {"equals":"5"} never holds and its "not" holds on every event: this condition tests nothing: write 5',
      '$.rules[1].where.duration_ms.not.not: "5" is a string; clients send duration_ms as a number, so this never holds: write 5',
      "$.rules[2].where.reason.not.in: 1 is a number; clients send reason as a string, so it is never the value",
      "$.rules[3].where.effort.equals.level: 3 is a number; clients send effort.level as a string, so this never holds",
      '$.rules[4].where.effort.not.equals.level: 3 is a number; clients send effort.level as a string, so {"equals":{"level":3}} never holds and its "not" holds on every event: this condition tests nothing',
      '$.rules[5].where.stop_hook_active.not.regex: "regex" holds on a string only, and clients send stop_hook_active as a boolean, so "regex" never holds and its "not" holds on every event: this condition tests nothing: compare it with a value',
      '$.rules[6].where["prompt.length"]: clients send prompt as a string, which has no fields (where reads the length of a list, not of a string), so "prompt.length" is never there and this condition holds on every event: it tests nothing',
      '$.rules[7].where["prompt.length"]: clients send prompt as a string, which has no fields (where reads the length of a list, not of a string), so "prompt.length" is never there and this condition never holds',
    ]);
  });

  it("says a tool's whole input compared with a string, and the field it was meant for", async () => {
    // Before, "tool_input": "rm -rf /" loaded silently and never held on a call with its input.
    const warnings = await warningsFor([
      { id: "h", on: "PreToolUse", matcher: "Bash", where: { tool_input: "rm -rf /" }, decide: "deny" },
      { id: "i", on: "tool.use", where: { tool_args: "x" }, decide: "allow" },
      {
        id: "j",
        on: "PreToolUse",
        matcher: "Write",
        where: { tool_input: { not: { equals: "a.env" } } },
        decide: "allow",
      },
      { id: "k", on: "PreToolUse", matcher: "Bash", where: { tool_input: { regex: "^rm" } }, decide: "deny" },
      // An object is the input's type, and its fields are typed as they are.
      {
        id: "l",
        on: "PreToolUse",
        matcher: "Bash",
        where: { tool_input: { equals: { command: "ls" } } },
        decide: "deny",
      },
    ]);
    expect(warnings.filter((w) => w.includes("clients send"))).toEqual([
      '$.rules[0].where.tool_input: "rm -rf /" is a string; clients send tool_input as an object, so this never holds on a call that carries its input: write "tool_input.command" as its key',
      '$.rules[1].where.tool_args: "x" is a string; clients send tool_args as an object, so this never holds: compare a field of the input with it (tool_args.command, tool_args.file_path)',
      '$.rules[2].where.tool_input.not: "a.env" is a string; clients send tool_input as an object, so {"equals":"a.env"} never holds and its "not" holds on every call that carries its input: this condition tests nothing: write "tool_input.file_path" as its key',
      '$.rules[3].where.tool_input.regex: "regex" holds on a string only, and clients send tool_input as an object, so this never holds on a call that carries its input: write it on a field of the input (tool_input.command, tool_input.file_path)',
    ]);
  });

  // A tool's fields depend on the tool: a field of its input is not typed where the rule may
  // reach several tools.
  it("leaves alone a field no schema types: an undeclared key, every event, an unknown one", async () => {
    const warnings = await warningsFor([
      {
        id: "a",
        on: "PreToolUse",
        matcher: "Bash|Read",
        where: { "tool_input.timeout": "5" },
        decide: "deny",
      },
      { id: "b", on: "Notification", where: { level: 5 }, decide: "allow" },
      { id: "c", on: "*", where: { stop_hook_active: "false" }, decide: "allow" },
      { id: "d", on: "BrandNewEvent", where: { reason: 1 }, decide: "allow" },
      { id: "e", on: "MessageDisplay", where: { turn_id: 3 }, decide: "allow" },
      { id: "f", on: "PostToolBatch", where: { "tool_calls.0.tool_input": "raw" }, decide: "allow" },
      { id: "g", on: ["Stop", "SubagentStop"], where: { "background_tasks.length": 0 }, decide: "allow" },
    ]);
    expect(warnings.filter((w) => w.includes("clients send"))).toEqual([]);
  });
});

describe("lintPolicy: where conditions that hold on every string", () => {
  it.each([
    [{ regex: "" }],
    [{ regex: ".*" }],
    [{ regex: "^" }],
    [{ regex: "(?:)" }],
    [{ regex: "(?i)^x*" }],
    [{ startsWith: "" }],
  ])("says %j only asks for a string, and what to write", async (condition) => {
    const warnings = await warningsFor([
      { id: "a", on: "PreToolUse", where: { cwd: condition }, decide: "ask" },
    ]);
    expect(warnings).toEqual([
      `$.rules[0].where.cwd: ${JSON.stringify(condition)} holds on every string, so it only asks that "cwd" be a string: write {"exists": true} to ask that it be there, or a pattern that says what it must hold`,
    ]);
  });

  it("says its not refuses every string", async () => {
    const warnings = await warningsFor([
      { id: "a", on: "PreToolUse", where: { "tool_input.command": { not: { regex: ".*" } } }, decide: "ask" },
    ]);
    expect(warnings).toEqual([
      '$.rules[0].where["tool_input.command"]: {"not":{"regex":".*"}} refuses every string, so it only asks that "tool_input.command" be no string (absent, null or another type): write {"exists": false} to ask that it be absent',
    ]);
  });

  it('says contains "" holds on every string and every list holding "", and its not refuses them', async () => {
    const warnings = await warningsFor([
      { id: "a", on: "PreToolUse", where: { "tool_input.command": { contains: "" } }, decide: "ask" },
      {
        id: "b",
        on: "PreToolUse",
        where: { "tool_input.command": { not: { contains: "" } } },
        decide: "ask",
      },
      { id: "c", on: "PreToolUse", where: { "tool_input.command": { contains: " " } }, decide: "ask" },
    ]);
    expect(warnings).toEqual([
      '$.rules[0].where["tool_input.command"]: {"contains":""} holds on every string, and on a list holding "", so it only asks that "tool_input.command" be a string or such a list: write {"exists": true} to ask that it be there, or a substring it must hold',
      '$.rules[1].where["tool_input.command"]: {"not":{"contains":""}} refuses every string, and a list holding "", so it only asks that "tool_input.command" be neither (absent, null, another type or a list without ""): write {"exists": false} to ask that it be absent, or a substring it must not hold',
    ]);
  });

  it.each([
    [{ regex: "^$" }],
    [{ regex: "x*$" }],
    [{ regex: "\\b" }],
    [{ regex: "a*b" }],
    [{ regex: "\\$?" }],
    [{ startsWith: " " }],
    [{ glob: "**" }],
  ])("leaves %j alone, which some string fails", async (condition) => {
    const warnings = await warningsFor([
      { id: "a", on: "PreToolUse", where: { cwd: condition }, decide: "ask" },
    ]);
    expect(warnings).toEqual([]);
  });
});

describe("lintPolicy: a where glob written with Windows separators", () => {
  it('says a "\\" before a character that needs no escape is no separator, which a Windows path is not split at', async () => {
    // A where glob is read as on Linux (README, "where"): `\` escapes the next character, so
    // `C:\Users\*\.ssh\**` is `C:Users*.ssh*`, and a deny written so let a Windows client's
    // `C:\Users\dev\.ssh\id_rsa` through without a word from check.
    const glob = "C:\\Users\\*\\.ssh\\**";
    const warnings = await warningsFor([
      { id: "keys", on: "PreToolUse", where: { "tool_input.file_path": { glob } }, decide: "deny" },
      {
        id: "not",
        on: "PreToolUse",
        where: { "tool_input.file_path": { not: { glob: "**\\.env" } } },
        decide: "deny",
      },
      // Escapes a glob needs, and a backslash matched as itself, are left alone.
      {
        id: "fine",
        on: "PreToolUse",
        where: { "tool_input.file_path": { glob: "**/\\*\\?\\[x\\]" }, cwd: { glob: "C:\\\\Users\\\\*" } },
        decide: "deny",
      },
    ]);
    const meaning =
      '"\\" escapes the next character in a glob and is no separator (a where glob reads paths as on Linux), so a Windows client\'s path as sent (C:\\x) is not split at its "\\": for such a path, write an "if" path rule, which reads that path as /c/x (Read(//c/Users/**)), or a "regex"; for a "\\" itself, write two ("\\\\\\\\" in JSON)';
    expect(warnings).toEqual([
      `$.rules[0].where["tool_input.file_path"].glob: ${JSON.stringify(glob)} has "\\U", which a glob reads as "U": ${meaning}`,
      `$.rules[1].where["tool_input.file_path"].not.glob: "**\\\\.env" has "\\.", which a glob reads as ".": ${meaning}; for a "." itself, drop the "\\" (a glob's "." is one)`,
    ]);
    // Not a path: a command's "\\n" meant as the two characters is written "\\\\n", which the
    // warning says, where the "if" rule it names reads no command. (That a glob's "*" stops at a
    // "/" in a command is a warning of its own.)
    expect(
      (
        await warningsFor([
          {
            id: "n",
            on: "PreToolUse",
            where: { "tool_input.command": { glob: "printf *\\n*" } },
            decide: "deny",
          },
        ])
      ).filter((w) => !w.includes("reads the command as a path")),
    ).toEqual([
      `$.rules[0].where["tool_input.command"].glob: "printf *\\\\n*" has "\\n", which a glob reads as "n": ${meaning}`,
    ]);
    const policy = await policyFrom({
      version: 1,
      rules: [{ id: "keys", on: "PreToolUse", where: { "tool_input.file_path": { glob } }, decide: "deny" }],
    });
    const event = parseHookEvent({
      hook_event_name: "PreToolUse",
      session_id: "s",
      cwd: "C:\\Users\\dev\\proj",
      tool_name: "Read",
      tool_input: { file_path: "C:\\Users\\dev\\.ssh\\id_rsa" },
    });
    if (!event.ok) throw new Error("the event should parse");
    expect(evaluatePolicy(policy, event.value, { team: "default" }).enforced).toEqual([]);
  });
});

describe("lintPolicy: where conditions that hold on no value or every value", () => {
  it("says an empty in never holds and its not always does", async () => {
    const warnings = await warningsFor([
      { id: "a", on: "PreToolUse", where: { tool_name: { in: [] } }, decide: "ask" },
      { id: "b", on: "PreToolUse", where: { tool_name: { not: { in: [] } } }, decide: "ask" },
      { id: "c", on: "PreToolUse", where: { tool_name: { not: { not: { in: [] } } } }, decide: "ask" },
      { id: "d", on: "PreToolUse", where: { tool_name: { in: ["Bash"] } }, decide: "ask" },
    ]);
    expect(warnings).toEqual([
      '$.rules[0].where.tool_name: {"in":[]} holds on no value, since "in": [] lists none; this rule can never apply: list in "in" the values "tool_name" may have',
      '$.rules[1].where.tool_name: {"not":{"in":[]}} holds on every value, since "in": [] lists none, so it tests nothing: remove it, or list in "in" the values "tool_name" must not have',
      '$.rules[2].where.tool_name: {"not":{"not":{"in":[]}}} holds on no value, since "in": [] lists none; this rule can never apply: list in "in" the values "tool_name" may have',
    ]);
  });
});

describe("lintPolicy: a where key named like an object's built-in member", () => {
  it("is a field of no known type, with no warning of a type", async () => {
    const warnings = await warningsFor([
      {
        id: "s",
        on: "Stop",
        where: { stop_hook_active: false, constructor: "x", toString: "y" },
        decide: "block",
        reason: "r",
      },
    ]);
    expect(warnings.filter((w) => w.includes("clients send"))).toEqual([]);
  });
});

describe("lintPolicy: a remote rule whose failure blocks every stop", () => {
  it("warns when a prompt or forward rule on Stop fails to deny without checking stop_hook_active", async () => {
    const prompt = (onError?: string) => ({
      text: "Are the tests run?",
      model: "m",
      ...(onError && { onError }),
    });
    const policy = await policyFrom({
      version: 1,
      auth: { tokens: [] },
      defaults: { onError: "deny" },
      models: { m: { provider: "anthropic", model: "x", apiKey: "k" } },
      rules: [
        { id: "own", on: "Stop", prompt: prompt("deny") },
        { id: "default", on: ["SubagentStop"], forward: { url: "https://policy.example/hook" } },
        { id: "guarded", on: "Stop", where: { stop_hook_active: false }, prompt: prompt("deny") },
        { id: "allows", on: "Stop", prompt: prompt("allow") },
        { id: "shadow", on: "Stop", mode: "shadow", prompt: prompt("deny") },
        { id: "tools", on: "PreToolUse", prompt: prompt("deny") },
      ],
    });
    const warnings = lintPolicy(policy)
      .filter((w) => w.message.includes("stop_hook_active"))
      .map((w) => `${w.path}: ${w.message}`);
    expect(warnings).toEqual([
      '$.rules[0].prompt.onError: blocks Stop whenever its model fails (onError "deny") without checking stop_hook_active: while the model is down every stop is blocked and the agent is kept in a loop; add "where": {"stop_hook_active": false}',
      '$.rules[1].where: blocks SubagentStop whenever its server fails (onError "deny") without checking stop_hook_active: while the server is down every stop is blocked and the agent is kept in a loop; add "where": {"stop_hook_active": false}',
    ]);
  });
});

describe("lintPolicy: a remote rule's timeoutMs past the request's deadline", () => {
  it("warns when a prompt or forward rule's timeoutMs is longer than defaults.deadlineMs, its default or the cap", async () => {
    const rules = [
      { id: "slow", on: "PreToolUse", prompt: { text: "Safe?", model: "m", timeoutMs: 8000 } },
      { id: "team", on: "PreToolUse", forward: { url: "https://policy.example/hook", timeoutMs: 6000 } },
      { id: "within", on: "PreToolUse", prompt: { text: "Safe?", model: "m", timeoutMs: 5000 } },
      { id: "unset", on: "PreToolUse", forward: { url: "https://policy.example/hook" } },
      { id: "off", on: "PreToolUse", mode: "off", prompt: { text: "Safe?", model: "m", timeoutMs: 9000 } },
    ];
    const timeouts = async (defaults: Record<string, unknown> | undefined, list: unknown[] = rules) =>
      lintPolicy(
        await policyFrom({
          version: 1,
          auth: { tokens: [] },
          ...(defaults && { defaults }),
          models: { m: { provider: "anthropic", model: "x", apiKey: "k" } },
          rules: list,
        }),
      )
        .filter((w) => w.path.endsWith(".timeoutMs"))
        .map((w) => `${w.path}: ${w.message}`);
    const tail =
      "the call is given up at the request's deadline, before its timeoutMs, and the rule answers its onError; raise defaults.deadlineMs (below the hook's timeout) or lower timeoutMs";
    expect(await timeouts(undefined)).toEqual([
      `$.rules[0].prompt.timeoutMs: is 8000 ms, longer than defaults.deadlineMs (5000 ms, its default): ${tail}`,
      `$.rules[1].forward.timeoutMs: is 6000 ms, longer than defaults.deadlineMs (5000 ms, its default): ${tail}`,
    ]);
    expect(await timeouts({ deadlineMs: 7000 })).toEqual([
      `$.rules[0].prompt.timeoutMs: is 8000 ms, longer than defaults.deadlineMs (7000 ms): ${tail}`,
    ]);
    expect(await timeouts({ deadlineMs: 10000 })).toEqual([]);
    const long = [
      { id: "long", on: "PreToolUse", prompt: { text: "Safe?", model: "m", timeoutMs: 650_000 } },
    ];
    expect(await timeouts({ deadlineMs: 700_000 }, long)).toEqual([
      `$.rules[0].prompt.timeoutMs: is 650000 ms, longer than the 599750 ms defaults.deadlineMs is capped at: ${tail}`,
    ]);
  });
});

describe("lintPolicy: an inline URL that carries its credential", () => {
  it("warns about a sink, forward or model URL with a token in its query or a random path segment, and not about a plain one or an env: one", async () => {
    const policy = await policyFrom({
      version: 1,
      auth: { tokens: [] },
      models: {
        judge: {
          provider: "openai",
          model: "gpt-4o",
          url: "https://llm.example/v1?code=Zx81",
          apiKey: "env:K",
        },
        plain: {
          provider: "openai",
          model: "gpt-4o",
          url: "https://llm.example/openai/deployments/gpt4/chat/completions?api-version=2024-02-01",
          apiKey: "env:K",
        },
      },
      sinks: {
        siem: { type: "webhook", url: "https://siem.example/in?api_key=abc12345", secret: "env:S" },
        flow: {
          type: "webhook",
          url: "https://n8n.example/webhook/3f2a9c1e-5b7d-4e8f-9a0b-1c2d3e4f5a6b",
          secret: "env:S",
        },
        kept: { type: "webhook", url: "env:SIEM_URL", secret: "env:S" },
        open: { type: "webhook", url: "https://siem.example/in", secret: "env:S" },
      },
      rules: [
        { id: "relay", on: "PreToolUse", forward: { url: "https://policy.example/hook?sig=c2lnbmF0dXJl" } },
        {
          id: "plain",
          on: "PreToolUse",
          forward: { url: "https://policy.example/hook?team=platform&country_code=de&status_code=200" },
        },
        { id: "n", on: "Stop", notify: ["siem", "flow", "kept", "open"] },
      ],
    });
    expect(
      lintPolicy(policy)
        .filter((w) => w.message.startsWith("carries a credential"))
        .map((w) => w.path),
    ).toEqual(["$.models.judge.url", "$.sinks.siem.url", "$.sinks.flow.url", "$.rules[0].forward.url"]);
  });
});

describe("lintPolicy: a first policy's mistakes that loaded without a word", () => {
  const onBash = (where: Record<string, unknown>, decide = "deny") => ({
    id: `${decide} ${JSON.stringify(where)}`,
    on: "PreToolUse",
    matcher: "Bash",
    where,
    decide,
  });

  it("says a where regex written between slashes, as JavaScript writes one, and what to write", async () => {
    // Before, "/rm -rf/" loaded silently and matched only a command holding its slashes.
    const warnings = await warningsFor([
      onBash({ "tool_input.command": { regex: "/rm -rf/" } }),
      onBash({ "tool_input.command": { not: { regex: "/^rm\\s+-rf/i" } } }),
      onBash({ "tool_input.command": { regex: "/sudo/" } }),
      // A "g" is JavaScript's alone, which a path's last name seldom holds: before, "/sudo/gm" was
      // read as a path, its "m" not one of the flags "g" and "i", and loaded without a word.
      onBash({ "tool_input.command": { regex: "/sudo/gm" } }),
      // A path between slashes means what it says.
      {
        id: "p",
        on: "PreToolUse",
        matcher: "Write",
        where: { "tool_input.file_path": { regex: "/\\.git/" } },
        decide: "deny",
      },
      {
        id: "q",
        on: "PreToolUse",
        matcher: "Write",
        where: { "tool_input.file_path": { regex: "/node_modules/" } },
        decide: "deny",
      },
    ]);
    expect(warnings.filter((w) => w.includes("between slashes"))).toEqual([
      `$.rules[0].where["tool_input.command"].regex: "/rm -rf/" is written between slashes, as JavaScript writes a regex; here the whole string is the pattern, its "/"s included, so it matches only where Bash's tool_input.command holds them too: write "rm -rf"`,
      `$.rules[1].where["tool_input.command"].not.regex: "/^rm\\\\s+-rf/i" is written between slashes, as JavaScript writes a regex; here the whole string is the pattern, its "/"s and the "i" after the last included, so it matches only where Bash's tool_input.command holds them too: write "(?i)^rm\\\\s+-rf"`,
      `$.rules[3].where["tool_input.command"].regex: "/sudo/gm" is written between slashes, as JavaScript writes a regex; here the whole string is the pattern, its "/"s and the "gm" after the last included, so it matches only where Bash's tool_input.command holds them too: write "(?m)sudo"`,
    ]);
  });

  it("says a regex between slashes with a space and flags on a command, which no path's last name makes", async () => {
    // A plain name with letters after it reads as a path ("/bin/vim"), but a command's path holds
    // no space: "/rm -rf/m" was left alone, where "/rm -rf/" is told.
    const warnings = await warningsFor([onBash({ "tool_input.command": { regex: "/rm -rf/m" } })]);
    expect(warnings.filter((w) => w.includes("between slashes"))).toEqual([
      `$.rules[0].where["tool_input.command"].regex: "/rm -rf/m" is written between slashes, as JavaScript writes a regex; here the whole string is the pattern, its "/"s and the "m" after the last included, so it matches only where Bash's tool_input.command holds them too: write "(?m)rm -rf"`,
    ]);
  });

  it("says nothing of a path between slashes: one no JavaScript regex is, or one with a space or a last name of flag letters on a path field", async () => {
    // Before, "/proc/sys" was told to become "(?ss)proc" and "/var/log/sys" "(?ss)var/log": a "/"
    // unescaped in the body and a flag twice are no JavaScript regex.
    const onPath = (regex: string) => ({
      id: regex,
      on: "PreToolUse",
      matcher: "Write",
      where: { "tool_input.file_path": { regex } },
      decide: "deny",
    });
    const warnings = await warningsFor([
      onPath("/proc/sys"),
      onPath("/var/log/sys"),
      onPath("/dev/sdi/"),
      onPath("/a[/]b/i"),
      onPath("/(?i)rm/i"),
      onPath("/(?s)rm/im"),
      // A space is a path's too: before, told to become "Application Support".
      onPath("/Application Support/"),
      onPath("/^Application Support/"),
      // A name after the last "/" made of flag letters is a path's too: before, "/src/ui" was told
      // to become "(?i)src", which matches every src.
      onPath("/src/ui"),
      onPath("/home/dims"),
      // An escaped mark is a path's too: before, "/\\.ssh/id" was told to become "(?i)\\.ssh".
      onPath("/\\.ssh/id"),
      // On a command, a name after a plain one is a path's unless it is JavaScript's usual flags:
      // before, "/bin/vim" was told to become "(?im)bin".
      onBash({ "tool_input.command": { regex: "/bin/vim" } }),
      onBash({ "tool_input.command": { regex: "/\\.ssh/id" } }),
      onBash({ "tool_input.command": { regex: "/sudo/gi" } }),
      // A last name with a "g" not first, or with letters a "g" is seldom written with, is a
      // path's: "/bin/gvim" was told to become "(?im)bin", "/assets/img" "(?im)assets".
      onBash({ "tool_input.command": { regex: "/bin/gvim" } }),
      onBash({ "tool_input.command": { regex: "/assets/img" } }),
      onBash({ "tool_input.command": { regex: "/src/gui" } }),
      onBash({ "tool_input.command": { regex: "/var/msg" } }),
    ]);
    expect(
      warnings
        .filter((w) => w.includes("between slashes"))
        .map((w) => w.replace(/ is written.*: write/, ": write")),
    ).toEqual([
      '$.rules[3].where["tool_input.file_path"].regex: "/a[/]b/i": write "(?i)a[/]b"',
      // A flag the pattern sets already is not set twice.
      '$.rules[4].where["tool_input.file_path"].regex: "/(?i)rm/i": write "(?i)rm"',
      '$.rules[5].where["tool_input.file_path"].regex: "/(?s)rm/im": write "(?sim)rm"',
      '$.rules[7].where["tool_input.file_path"].regex: "/^Application Support/": write "^Application Support"',
      '$.rules[13].where["tool_input.command"].regex: "/sudo/gi": write "(?i)sudo"',
    ]);
  });

  it("says a matcher written between slashes", async () => {
    const warnings = await warningsFor([
      { id: "a", on: "PreToolUse", matcher: "/Bash/", decide: "ask" },
      { id: "b", on: "PreToolUse", matcher: "/write|edit/i", decide: "ask" },
      { id: "c", on: "PreToolUse", matcher: "Bash", decide: "ask" },
    ]);
    expect(
      warnings
        .filter((w) => w.includes("between slashes"))
        .map((w) => w.replace(/ is written.*: write/, ": write")),
    ).toEqual([
      '$.rules[0].matcher: "/Bash/": write "Bash"',
      '$.rules[1].matcher: "/write|edit/i": write "(?i)write|edit"',
    ]);
  });

  it("says a deadline or a timeout written in seconds", async () => {
    // Before, "deadlineMs": 5 loaded silently, and every prompt rule answered its onError.
    const policy = async (deadlineMs: number, timeoutMs: number) =>
      lintPolicy(
        await policyFrom({
          version: 1,
          auth: { tokens: [] },
          defaults: { deadlineMs },
          models: { m: { provider: "anthropic", model: "claude-haiku-4-5", apiKey: "env:K" } },
          rules: [
            {
              id: "j",
              on: "PreToolUse",
              matcher: "Write",
              prompt: { text: "ok if safe", model: "m", timeoutMs },
            },
            {
              id: "f",
              on: "PreToolUse",
              matcher: "Bash",
              forward: { url: "https://policy.example/hook", timeoutMs },
            },
          ],
        }),
      )
        .filter((w) => w.message.includes("counts milliseconds"))
        .map((w) => `${w.path}: ${w.message}`);
    expect(await policy(5, 4)).toEqual([
      `$.defaults.deadlineMs: is 5 ms, and no model or team server answers a prompt or forward rule that fast (a deadline under 50 ms is raised to 50), so each would answer its onError: it counts milliseconds, where a hook's "timeout" in the client's settings counts seconds; write 5000 for 5 s`,
      `$.rules[0].prompt.timeoutMs: is 4 ms, and no model answers that fast, so the rule would answer its onError every time: it counts milliseconds, where a hook's "timeout" in the client's settings counts seconds; write 4000 for 4 s`,
      `$.rules[1].forward.timeoutMs: is 4 ms, and no team server answers that fast, so the rule would answer its onError every time: it counts milliseconds, where a hook's "timeout" in the client's settings counts seconds; write 4000 for 4 s`,
    ]);
    expect(await policy(100, 100)).toEqual([]);
  });

  it("names the shortest deadline as the gateway applies it", async () => {
    // Before, the warning wrote 50 of its own, where the deadline has its constant.
    const floor = requestDeadlineMs("PreToolUse", "claude-code", 1, undefined);
    expect(floor).toBe(MIN_DEADLINE_MS);
    const policy = await policyFrom({
      version: 1,
      auth: { tokens: [] },
      defaults: { deadlineMs: 5 },
      rules: [],
    });
    const said = lintPolicy(policy).find((w) => w.path === "$.defaults.deadlineMs")?.message;
    expect(said).toContain(`(a deadline under ${floor} ms is raised to ${floor})`);
  });

  it("says a deny of every tool call, with no condition but its on", async () => {
    const warnings = await warningsFor([
      { id: "all", on: "PreToolUse", decide: "deny", reason: "no" },
      { id: "star", on: "*", decide: "block" },
      { id: "bash", on: "PreToolUse", matcher: "Bash", decide: "deny" },
      { id: "rm", on: "PreToolUse", if: "Bash(rm *)", decide: "deny" },
      { id: "cwd", on: "PreToolUse", where: { cwd: { startsWith: "/srv" } }, decide: "deny" },
      { id: "ask", on: "PreToolUse", decide: "ask" },
      { id: "trial", on: "PreToolUse", mode: "shadow", decide: "deny" },
      { id: "stop", on: "Stop", where: { stop_hook_active: false }, decide: "block" },
      // A freeze written on purpose says so with its matcher; before, it was told all the same.
      { id: "freeze", on: "PreToolUse", matcher: "*", decide: "deny", reason: "release freeze" },
    ]);
    expect(warnings.filter((w) => w.includes("denies every tool call")).map((w) => w.split(":")[0])).toEqual([
      "$.rules[0]",
      "$.rules[1]",
    ]);
  });

  it("says a Bash pattern whose :* follows a space is the legacy prefix form", async () => {
    // Before, "Bash(git push origin :*)" loaded silently as "git push origin *": every push to origin.
    const warnings = await warningsFor([
      { id: "a", on: "PreToolUse", if: ["Bash(git push origin :*)", "Bash(npm run:*)"], decide: "ask" },
      { id: "b", on: "PreToolUse", if: "Bash(git push :* *)", decide: "ask" },
    ]);
    expect(warnings.filter((w) => w.includes(":*"))).toEqual([
      `$.rules[0].if[0]: "Bash(git push origin :*)" ends in ":*" after a space, which is read as the legacy prefix form, "git push origin *": every git push origin, whatever follows, not a word that starts with ":"; write "Bash(git push origin *)" for that, or "Bash(git push origin :* *)" for a word that starts with ":" (git push origin :branch)`,
    ]);
  });

  it("says a path rule with one / before a system folder names it inside the project", async () => {
    // Before, "Read(/etc/passwd)" loaded silently and denied <project>/etc/passwd alone.
    const warnings = await warningsFor([
      { id: "a", on: "PreToolUse", if: ["Read(/etc/passwd)", "Edit( /Users/dev/.ssh/** )"], decide: "deny" },
      {
        id: "b",
        on: "PreToolUse",
        // A project's own folders of these names: before, each was told to become //lib/**, say,
        // which no longer covers the project's folder.
        if: [
          "Read(//etc/passwd)",
          "Read(/config/**)",
          "Read(/etcetera)",
          "Edit(/lib/**)",
          "Edit(/bin/**)",
          "Edit(/tmp/**)",
          "Edit(/var/cache/**)",
          "Edit(/dev/**)",
          "Edit(/home/**)",
          "Edit(/root/**)",
          "Edit(/srv/**)",
          "Edit(/private/**)",
        ],
        decide: "deny",
      },
    ]);
    expect(warnings.filter((w) => w.includes("project root"))).toEqual([
      `$.rules[0].if[0]: "Read(/etc/passwd)" starts with one "/", which is the project root (the event's cwd), as in Claude Code's rules, so it names /etc/passwd inside the project, not the system's; for the absolute path write "Read(//etc/passwd)"`,
      `$.rules[0].if[1]: "Edit( /Users/dev/.ssh/** )" starts with one "/", which is the project root (the event's cwd), as in Claude Code's rules, so it names /Users/dev/.ssh/** inside the project, not the system's; for the absolute path write "Edit(//Users/dev/.ssh/**)"`,
    ]);
  });

  it("says a contains of a list on a string field, which looks for one text", async () => {
    // Before, {"contains": ["rm", "-rf"]} loaded silently and never held on a command.
    const warnings = await warningsFor([
      onBash({ "tool_input.command": { contains: ["rm", "-rf", "a.b"] } }),
      onBash({ "tool_input.command": { contains: "rm" } }),
      {
        id: "list",
        on: "UserPromptSubmit",
        where: { prompt: { not: { contains: ["secret"] } } },
        decide: "block",
      },
      // Where "any of" would let more through, all of them in order: before, an allow of
      // ["npm", "test"] was told {"regex": "npm|test"}, which allows every npm command.
      onBash({ "tool_input.command": { contains: ["npm", "test"] } }, "allow"),
      onBash({ "tool_input.command": { not: { contains: ["rm", "-rf"] } } }, "ask"),
      onBash({ "tool_input.command": { not: { contains: ["rm", "-rf"] } } }, "allow"),
    ]);
    expect(warnings.filter((w) => w.includes('"contains" looks for one text'))).toEqual([
      `$.rules[0].where["tool_input.command"].contains: is a list, and clients send Bash's tool_input.command as a string, in which "contains" looks for one text, so this never holds on a call that carries its input: for any of these texts write {"regex": "rm|-rf|a\\\\.b"}`,
      `$.rules[2].where.prompt.not.contains: is a list, and clients send prompt as a string, in which "contains" looks for one text, so "contains" never holds and its "not" holds on every event: this condition tests nothing: for this text write {"contains": "secret"}`,
      `$.rules[3].where["tool_input.command"].contains: is a list, and clients send Bash's tool_input.command as a string, in which "contains" looks for one text, so this never holds on a call that carries its input: for all of these texts, in this order, write {"regex": "npm.*test"}`,
      `$.rules[4].where["tool_input.command"].not.contains: is a list, and clients send Bash's tool_input.command as a string, in which "contains" looks for one text, so "contains" never holds and its "not" holds on every call that carries its input: this condition tests nothing: for all of these texts, in this order, write {"regex": "rm.*-rf"}`,
      `$.rules[5].where["tool_input.command"].not.contains: is a list, and clients send Bash's tool_input.command as a string, in which "contains" looks for one text, so "contains" never holds and its "not" holds on every call that carries its input: this condition tests nothing: for any of these texts write {"regex": "rm|-rf"}`,
    ]);
  });

  it("tells a contains list too long for one regex no regex, which would not load", async () => {
    // Before, an allow of seven commands was told {"regex": "npm run build.*npm run test.*…"}, 107
    // of RE2's 100 program instructions: written as told, the policy did not load.
    const commands = ["npm run build", "npm run test", "npm run lint", "npm run format"];
    const long = [...commands, "npm run typecheck", "git status", "git diff --stat"];
    const rules = [
      onBash({ "tool_input.command": { contains: long } }, "allow"),
      onBash({
        "tool_input.command": { contains: [...long, "make test", "cargo build", "docker compose up"] },
      }),
    ];
    const warnings = (await warningsFor(rules)).filter((w) => w.includes('"contains" looks for one text'));
    expect(warnings.map((w) => w.replace(/^.*"contains" looks for one text, [^:]*: /, ""))).toEqual([
      `a regex of all of these texts in order is past RE2's 100 program instructions: write fewer`,
      `for any of these texts write a rule for each, with its own {"contains": "npm run build"}: a regex of them all is past RE2's 100 program instructions`,
    ]);
    // A list that fits is still told its regex, which loads.
    const fits = await warningsFor([onBash({ "tool_input.command": { contains: commands } }, "allow")]);
    const regex = JSON.parse(/\{"regex": ("[^"]*")\}/.exec(fits.join("\n"))?.[1] ?? "null");
    expect(regex).toBe("npm run build.*npm run test.*npm run lint.*npm run format");
    await policyFrom({ version: 1, rules: [onBash({ "tool_input.command": { regex } }, "allow")] });
  });

  it("says a where regex on a path written as a glob, and the glob it reads as where that lets no more through", async () => {
    // Before, "secrets/*.env" loaded silently: "/*" is any number of "/", "." any character, so
    // it matched no file in secrets.
    const onRead = (regex: unknown, decide = "deny") => ({
      id: `${decide} ${JSON.stringify(regex)}`,
      on: "PreToolUse",
      matcher: "Read",
      where: { "tool_input.file_path": regex },
      decide,
    });
    const warnings = await warningsFor([
      onRead({ regex: "secrets/*.env" }),
      onRead({ regex: "id_*.pem" }, "allow"),
      onRead({ not: { regex: "id_*.pem" } }, "ask"),
      onRead({ regex: "(a|b)/*.pem" }),
      onRead({ regex: "~/.ssh/*.pem" }),
      // What a regex means: a "/*" at its end, escapes, classes, ".*".
      onRead({ regex: "/\\.ssh/*" }),
      onRead({ regex: "\\w*\\.pem$" }),
      onRead({ regex: "^/home/[^/]*/\\.ssh/.*" }),
      onRead({ regex: "\\/*x" }),
      // Any number of "/" at the start or the end, as only a regex says: before, "^/*etc/passwd",
      // which matches "//etc/passwd" as meant, was told it did not match the paths it names.
      onRead({ regex: "^/*etc/passwd" }),
      onRead({ regex: "/\\.ssh/*$" }),
      onBash({ "tool_input.command": { regex: "cat secrets/*.env" } }),
    ]);
    expect(
      warnings.filter((w) => w.includes("not a glob")).map((w) => w.replace(/ is a regular.*names; /, ": ")),
    ).toEqual([
      `$.rules[0].where["tool_input.file_path"].regex: "secrets/*.env": write {"glob": "**/secrets/*.env"} to match it as a glob`,
      `$.rules[1].where["tool_input.file_path"].regex: "id_*.pem": write it as a "glob", whose "*" is any name, or as a regex, where ".*" is any text and "\\." a dot`,
      `$.rules[2].where["tool_input.file_path"].not.regex: "id_*.pem": write it as a "glob", whose "*" is any name, or as a regex, where ".*" is any text and "\\." a dot`,
      `$.rules[3].where["tool_input.file_path"].regex: "(a|b)/*.pem": write it as a "glob", whose "*" is any name, or as a regex, where ".*" is any text and "\\." a dot`,
      `$.rules[4].where["tool_input.file_path"].regex: "~/.ssh/*.pem": write it as a "glob", whose "*" is any name, or as a regex, where ".*" is any text and "\\." a dot`,
    ]);
    expect(warnings.find((w) => w.includes("not a glob"))).toContain(
      'its "*" repeats the character before it ("/*" is any number of "/") and its "." is any character',
    );
  });

  it("tells a regex written as a glob from ./ the glob that matches the paths it names", async () => {
    // Before, "./secrets/*.env" was told {"glob": "**/./secrets/*.env"}, which passed check and
    // matched no path a client sends (an absolute one, with no "." segment), as "../" did.
    const onRead = (regex: string) => ({
      id: regex,
      on: "PreToolUse",
      matcher: "Read",
      where: { "tool_input.file_path": { regex } },
      decide: "deny",
    });
    const regexes = ["./secrets/*.env", "././secrets/*.env", "../secrets/*.env", "a/../secrets/*.env"];
    const warnings = await warningsFor(regexes.map(onRead));
    const told = warnings.map((w) => /write \{"glob": ("[^"]*")\}/.exec(w)?.[1]);
    expect(told).toEqual(['"**/secrets/*.env"', '"**/secrets/*.env"', undefined, undefined]);
    const glob = compileWhereGlob(JSON.parse(told[0] as string));
    expect(glob.ok && glob.value("/home/dev/proj/secrets/prod.env")).toBe(true);
    expect(warnings[2]).toContain('write it as a "glob", whose "*" is any name');
  });

  it("tells a regex written as a glob of a folder the glob of what is under it too", async () => {
    // Before, "/home/*/.ssh" was told {"glob": "/home/*/.ssh"} alone, which matches the folder and
    // none of its files, where the regex meant matched inside the path.
    const warnings = await warningsFor([
      {
        id: "ssh",
        on: "PreToolUse",
        matcher: "Read",
        where: { "tool_input.file_path": { regex: "/home/*/.ssh" } },
        decide: "deny",
      },
    ]);
    const told = [...(warnings[0] ?? "").matchAll(/\{"glob": ("[^"]*")\}/g)].map((m) =>
      JSON.parse(m[1] as string),
    );
    expect(told).toEqual(["/home/*/.ssh", "/home/*/.ssh/**"]);
    const under = compileWhereGlob(told[1]);
    expect(under.ok && under.value("/home/dev/.ssh/id_rsa")).toBe(true);
  });

  it("tells a regex written as a glob of a folder with a trailing slash the folder's glob without it", async () => {
    // Before, "/home/*/.ssh/" was told {"glob": "/home/*/.ssh/"}, which loads and matches no path
    // (a path is matched without its trailing slash), and "/home/*/.ssh//**".
    const warnings = await warningsFor([
      {
        id: "ssh",
        on: "PreToolUse",
        matcher: "Read",
        where: { "tool_input.file_path": { regex: "/home/*/.ssh/" } },
        decide: "deny",
      },
    ]);
    const told = [...(warnings[0] ?? "").matchAll(/\{"glob": ("[^"]*")\}/g)].map((m) =>
      JSON.parse(m[1] as string),
    );
    expect(told).toEqual(["/home/*/.ssh", "/home/*/.ssh/**"]);
    const folder = compileWhereGlob(told[0]);
    expect(folder.ok && folder.value("/home/dev/.ssh")).toBe(true);
  });

  it("says a where glob on a Bash command, whose * stops at a /", async () => {
    // Before, {"glob": "rm -rf *"} loaded silently, and let `rm -rf /tmp/x` through.
    const warnings = await warningsFor([
      onBash({ "tool_input.command": { glob: "rm -rf *" } }),
      onBash({ "tool_input.command": { glob: "npm test" } }),
      // Before, each was told the if to write: one without its "not", the other with a "?" an if
      // pattern reads as itself.
      { ...onBash({ "tool_input.command": { not: { glob: "git *" } } }), decide: "allow" },
      onBash({ "tool_input.command": { glob: "rm -rf ?*" } }),
      {
        id: "w",
        on: "PreToolUse",
        matcher: "Write",
        where: { "tool_input.file_path": { glob: "**/*.env" } },
        decide: "deny",
      },
    ]);
    expect(warnings.filter((w) => w.includes("reads the command as a path"))).toEqual([
      `$.rules[0].where["tool_input.command"].glob: "rm -rf *" reads the command as a path: its "*" and "?" stop at a "/", so it matches no command with a "/" where they stand (a path such as /tmp/x); write "if": "Bash(rm -rf *)", whose "*" spans anything, or a "regex"`,
      `$.rules[2].where["tool_input.command"].not.glob: "git *" reads the command as a path: its "*" and "?" stop at a "/", so it matches no command with a "/" where they stand (a path such as /tmp/x); write a "regex" in its place, whose ".*" spans anything`,
      `$.rules[3].where["tool_input.command"].glob: "rm -rf ?*" reads the command as a path: its "*" and "?" stop at a "/", so it matches no command with a "/" where they stand (a path such as /tmp/x); write a "regex" in its place, whose ".*" spans anything`,
    ]);
  });
});

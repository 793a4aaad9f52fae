import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { evaluatePolicy } from "../../src/core/evaluate.js";
import { parseHookEvent } from "../../src/core/events.js";
import type { HookEvent } from "../../src/core/hook-event.js";
import {
  commandWordOf,
  commandWords,
  matchesPermissionRule,
  parsePermissionRule,
} from "../../src/core/permission-rule.js";
import { policyFrom } from "../support/policy.js";

const TOOLS = ["Bash", "Edit", "Write", "Read", "mcp__github__create_issue"] as const;

const toolEvent = (name: string, tool: string | undefined, command = "ls"): HookEvent => {
  const parsed = parseHookEvent({
    session_id: "s",
    transcript_path: "/home/dev/.claude/projects/p/s.jsonl",
    cwd: "/home/dev/proj",
    hook_event_name: name,
    ...(tool === undefined ? {} : { tool_name: tool, tool_input: { command, file_path: "/tmp/a" } }),
    prompt: "hi",
  });
  if (!parsed.ok) throw new Error(parsed.error.message);
  return parsed.value;
};

describe("the rule index", () => {
  it("keeps only rules whose matcher matches, exact names or regex, in file order", async () => {
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
    expect(ids("PreToolUse", "Bash")).toEqual(["bash", "any", "all-events"]);
    expect(ids("PreToolUse", "Write")).toEqual(["edit", "any"]);
    expect(ids("PreToolUse", "mcp__github__create_issue")).toEqual(["regex", "any"]);
    expect(ids("PreToolUse", "Unknown")).toEqual(["any"]);
    expect(ids("PreToolUse", undefined)).toEqual(["any"]);
    // Asked again, the kept answers are the same.
    expect(ids("PreToolUse", "Bash")).toEqual(["bash", "any", "all-events"]);
    expect(ids("PreToolUse", "mcp__github__create_issue")).toEqual(["regex", "any"]);
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

  it("looks up Bash rules by the command's first words, splitting the command only when a rule has such words", async () => {
    const rules = [
      { id: "push", on: "PreToolUse", matcher: "Bash", if: "Bash(git push *)", decide: "ask" },
      { id: "rm", on: "PreToolUse", matcher: "Bash", if: ["Bash(rm *)", "Bash(git rm *)"], decide: "deny" },
      { id: "where", on: "PreToolUse", matcher: "Bash", where: { cwd: { glob: "/home/**" } }, context: "w" },
    ];
    let splits = 0;
    const words = (command: string) => () => {
      splits++;
      return commandWords(command);
    };
    const withIf = await policyFrom({ version: 1, rules });
    const ids = (command: string) => withIf.candidates("PreToolUse", "Bash", words(command)).map((r) => r.id);
    expect(ids("git push origin")).toEqual(["push", "rm", "where"]);
    expect(ids("rm -rf dist")).toEqual(["rm", "where"]);
    expect(ids("ls && make test")).toEqual(["where"]);
    expect(ids("x".repeat(20_000))).toEqual(["push", "rm", "where"]); // too long to split: every rule
    expect(splits).toBe(4);
    const withoutIf = await policyFrom({ version: 1, rules: rules.slice(2) });
    expect(withoutIf.candidates("PreToolUse", "Bash", words("rm -rf /")).map((r) => r.id)).toEqual(["where"]);
    expect(splits).toBe(4); // no rule starts with a word: the command is not split
  });

  it("answers the same past the bound on kept matcher values", async () => {
    const policy = await policyFrom({
      version: 1,
      rules: [
        { id: "sevens", on: "PreToolUse", matcher: "^tool_\\d*7$", context: "s" },
        { id: "bash", on: "PreToolUse", matcher: "Bash", context: "b" },
        { id: "any", on: "PreToolUse", context: "a" },
      ],
    });
    // 2,000 names: four times the values kept per event, so the memo starts again several times.
    for (let round = 0; round < 2; round++) {
      for (let i = 0; i < 2000; i++) {
        const ids = policy.candidates("PreToolUse", `tool_${i}`).map((r) => r.id);
        expect(ids).toEqual(i % 10 === 7 ? ["sevens", "any"] : ["any"]);
      }
      expect(policy.candidates("PreToolUse", "Bash").map((r) => r.id)).toEqual(["bash", "any"]);
    }
  });

  it("keeps no long matcher value, nor the longer string a value was cut from, so a client cannot fill memory with them", async () => {
    const policy = await policyFrom({
      version: 1,
      rules: [
        { id: "mcp", on: "PreToolUse", matcher: "^mcp__", context: "m" },
        { id: "ts", on: "FileChanged", matcher: "\\.ts$", context: "t" },
      ],
    });
    const parse = (body: object) => {
      const parsed = parseHookEvent({
        session_id: "s",
        transcript_path: "/t",
        cwd: "/p",
        ...body,
      });
      if (!parsed.ok) throw new Error(parsed.error.message);
      return parsed.value;
    };
    const filler = "x".repeat(1 << 20);
    setFlagsFromString("--expose-gc");
    const gc = runInNewContext("gc") as () => void;
    gc();
    const before = process.memoryUsage().heapUsed;
    // 64 tool names of 1 MiB and 64 file names cut from paths of 1 MiB, each a value of its own,
    // fewer than the values kept per event: before, the memo held all 128 MiB of them.
    for (let i = 0; i < 64; i++) {
      const tool = parse({
        hook_event_name: "PreToolUse",
        tool_name: `mcp__${i}_${filler}`,
        tool_input: {},
      });
      expect(evaluatePolicy(policy, tool, { team: "default" }).enforced.map((m) => m.rule.id)).toEqual([
        "mcp",
      ]);
      const file = parse({
        hook_event_name: "FileChanged",
        file_path: `/${filler}/${i}/component_number_${i}.ts`,
        event: "change",
      });
      expect(evaluatePolicy(policy, file, { team: "default" }).enforced.map((m) => m.rule.id)).toEqual([
        "ts",
      ]);
    }
    gc();
    expect(process.memoryUsage().heapUsed - before).toBeLessThan(32 * 1024 * 1024);
  });

  it("decides exactly what a scan of every rule decides, on any policy and event", async () => {
    const matcher = fc.oneof(
      fc.constant(undefined),
      fc.constantFrom("*", "", "Bash", "Edit|Write", "Write|Bash|Read", "mcp__.*", "B.sh", "Nope"),
    );
    const ifPattern = fc.constantFrom(
      "Bash(git push *)",
      "Bash(rm -rf *)",
      "Bash(ls)",
      "Bash(ls *)",
      "Bash(npm test)",
      "Bash(*)",
      "Bash",
      "Edit(/tmp/**)",
      "Bash(git*)",
    );
    const ruleArb = fc.record({
      on: fc.constantFrom("*", "PreToolUse", "PostToolUse", "UserPromptSubmit", ["PreToolUse", "Stop"]),
      matcher,
      team: fc.boolean(),
      decide: fc.constantFrom("allow", "deny", "ask"),
      shadow: fc.boolean(),
      // `if` patterns with and without a literal first word, so the first-word lookup is exercised.
      // A list of two names a rule under two words, which a command with both must visit once.
      if: fc.option(
        fc.oneof(
          ifPattern,
          fc.tuple(ifPattern, ifPattern).map(([a, b]) => [a, b]),
        ),
        { nil: undefined },
      ),
    });
    const eventArb = fc.record({
      name: fc.constantFrom("PreToolUse", "PostToolUse", "UserPromptSubmit", "Stop"),
      tool: fc.option(fc.constantFrom(...TOOLS, "Other"), { nil: undefined }),
      team: fc.constantFrom("a", "b"),
      command: fc.constantFrom(
        "ls",
        "ls -la",
        "rm -rf /",
        "git push origin main",
        "git status && rm -rf build",
        "sudo rm -rf /",
        "npm test",
        "echo $(git push)",
        "x".repeat(17_000),
      ),
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
            ...(r.if === undefined ? {} : { if: r.if }),
            decide: r.decide,
          })),
        });
        const tool = e.name === "PreToolUse" || e.name === "PostToolUse" ? (e.tool ?? "Bash") : undefined;
        const event = toolEvent(e.name, tool, e.command);
        const indexed = evaluatePolicy(policy, event, { team: e.team });
        const scanned = evaluatePolicy(policy, event, { team: e.team }, true);
        const applied = (scanned.explanations ?? []).filter((x) => x.applied).map((x) => x.ruleId);
        expect([...indexed.enforced, ...indexed.shadowed].map((m) => m.rule.id).sort()).toEqual(
          applied.sort(),
        );
        expect(indexed.enforced.map((m) => m.effect)).toEqual(scanned.enforced.map((m) => m.effect));
      }),
      { numRuns: 2500 },
    );
  });

  it("skips a Bash rule by its first word only when no spelling of the command could match it", () => {
    const patterns = fc.constantFrom(
      "Bash(git push *)",
      "Bash(git push:*)",
      "Bash(rm -rf *)",
      "Bash(rm -rf /*)",
      "Bash(npm test)",
      "Bash(ls *)",
      "Bash(ls)",
      "Bash(curl * | sh)",
      "Bash(kubectl apply -f *)",
      "Bash(python -c *)",
      "Bash(echo \\* *)",
      "Bash(git*)",
      "Bash(*)",
      "Bash",
    );
    const words = fc.constantFrom("git", "push", "rm", "-rf", "/", "npm", "test", "ls", "curl", "x", "sh");
    const glue = fc.constantFrom(" ", " && ", "; ", " | ", " || ", "\n", " ");
    const wrap = fc.constantFrom(
      (c: string) => c,
      (c: string) => `timeout 5 ${c}`,
      (c: string) => `sudo ${c}`,
      (c: string) => `env A=1 ${c}`,
      (c: string) => `bash -c '${c}'`,
      (c: string) => `echo $(${c})`,
      (c: string) => `/usr/bin/${c}`,
      (c: string) => `"${c}"`,
      (c: string) => `nohup ${c} > /dev/null`,
    );
    const command = fc
      .tuple(fc.array(fc.tuple(words, glue), { minLength: 1, maxLength: 8 }), wrap)
      .map(([parts, w]) =>
        w(
          parts
            .map(([word, g]) => word + g)
            .join("")
            .trim(),
        ),
      );
    fc.assert(
      fc.property(patterns, command, (text, cmd) => {
        const rule = parsePermissionRule(text);
        if (!rule.ok) throw new Error(rule.error);
        const word = commandWordOf(rule.value);
        const seen = commandWords(cmd);
        if (word === undefined || seen === undefined || seen.has(word)) return;
        const call = { toolName: "Bash", toolInput: { command: cmd } };
        expect(matchesPermissionRule(rule.value, call, "any"), `${text} on ${cmd}`).toBe(false);
        expect(matchesPermissionRule(rule.value, call, "all"), `${text} on ${cmd}`).toBe(false);
      }),
      { numRuns: 3000 },
    );
  });

  it("names a first word only for patterns that start with a literal word", () => {
    const word = (text: string) => {
      const rule = parsePermissionRule(text);
      if (!rule.ok) throw new Error(rule.error);
      return commandWordOf(rule.value);
    };
    expect(word("Bash(git push *)")).toBe("git");
    expect(word("Bash(git push:*)")).toBe("git");
    expect(word("Bash(ls)")).toBe("ls");
    expect(word("Bash(git*)")).toBeUndefined();
    expect(word("Bash(*)")).toBeUndefined();
    expect(word("Bash")).toBeUndefined();
    expect(word("Edit(*.env)")).toBeUndefined();
    expect(commandWords("x".repeat(20_000))).toBeUndefined();
    expect([...(commandWords("timeout 5 git push && ls -la") ?? [])].sort()).toEqual(
      expect.arrayContaining(["git", "ls"]),
    );
  });
});

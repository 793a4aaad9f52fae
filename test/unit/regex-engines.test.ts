/**
 * The pattern engines and the Bash splitter as ports (src/core/regex.ts, path-glob.ts, shell.ts,
 * pattern-engines.ts): re2js, minimatch and shell-command.ts by default, and, in a bundle built without them (scripts/lazy-engines.mjs, emulated
 * here by mocking the engine modules away), a compile that fails with the engine's MISSING
 * error and marks it wanted, the loader that imports exactly the wanted engines, and a policy
 * that loads once they are there.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { compilePathGlob } from "../../src/core/path-glob.js";
import {
  compileRegex,
  MAX_REGEX_PROGRAM_SIZE,
  type RegexEngine,
  registerRegexEngine,
} from "../../src/core/regex.js";
import { re2Engine } from "../../src/core/regex-re2.js";
import { sha256 } from "../support/policy.js";

const REGEX_MODULE = "../../src/core/regex-re2.js";
const GLOB_MODULE = "../../src/core/path-glob-minimatch.js";
const SHELL_MODULE = "../../src/core/shell-command.js";

afterEach(() => {
  vi.doUnmock(REGEX_MODULE);
  vi.doUnmock(GLOB_MODULE);
  vi.doUnmock(SHELL_MODULE);
  vi.resetModules();
});

describe("the default engines", () => {
  it.each([
    ["mcp__(github|gitlab)__.*", "mcp__gitlab__create_issue", true],
    ["rm\\s+-rf", "sudo rm  -rf /", true],
    ["^git pull", "git push", false],
  ])("regex %s against %s: %s (RE2, unanchored)", (pattern, value, expected) => {
    const compiled = compileRegex(pattern);
    expect(compiled.ok && compiled.value(value)).toBe(expected);
  });

  it("rejects what RE2 cannot run in linear time, with the reason", () => {
    const compiled = compileRegex("(a)\\1");
    expect(compiled.ok).toBe(false);
    expect(!compiled.ok && compiled.error).toMatch(/not a valid RE2 regular expression.*backreferences/);
  });

  it.each([
    ["(a)\\1", "`\\1`"],
    ["(?<n>a)\\k<n>", "`\\k`"],
    ["rm(?= -rf)", "`(?=`"],
    ["(?!x)y", "`(?!`"],
    ["(?<=a)b", "`(?<=a)b`"],
    ["(?<!a)b", "`(?<!a)b`"],
    // Python's and PCRE's spellings of a back-reference, which RE2 quotes only up to `(?P`, `\g`.
    ["(?P<n>a)(?P=n)", "`(?P`"],
    ["(a)\\g1", "`\\g`"],
    ["(a)\\g{1}", "`\\g`"],
    ["(a)\\g-1", "`\\g`"],
    ["(?P<n>a)\\g<n>", "`\\g`"],
  ])("refuses %s, naming backreferences and lookaround, which it uses", (pattern, fragment) => {
    const compiled = compileRegex(pattern);
    expect(!compiled.ok && compiled.error).toContain(fragment);
    expect(!compiled.ok && compiled.error).toMatch(/; backreferences and lookaround are not supported$/);
  });

  it.each([
    ["(a", "missing closing )"],
    ["[a-", "missing closing ]"],
    ["a**", "invalid nested repetition operator"],
    ["x{2,1}", "invalid repeat count"],
    ["\\Z", "invalid escape sequence: `\\Z`"],
    // The same quotes for what is no back-reference: a flag RE2 lacks, a recursion, a \g of nothing.
    ["(?Px)", "invalid or unsupported Perl syntax: `(?P`"],
    ["(?P<n>a)(?P>n)", "invalid or unsupported Perl syntax: `(?P`"],
    ["a\\gb", "invalid escape sequence: `\\g`"],
    ["\\\\g1(?Px)", "invalid or unsupported Perl syntax: `(?P`"],
  ])("refuses %s with RE2's reason alone: it uses no backreference or lookaround", (pattern, reason) => {
    const compiled = compileRegex(pattern);
    expect(!compiled.ok && compiled.error).toMatch(/^is not a valid RE2 regular expression \(/);
    expect(!compiled.ok && compiled.error).toContain(reason);
    expect(!compiled.ok && compiled.error).not.toMatch(/backreference|lookaround/);
  });

  it("quotes a pattern's newline or other control as an escape, so the refusal stays one line", () => {
    for (const pattern of ["[\n", "(a\r", "x{2,1}\u001b[31m("]) {
      const compiled = compileRegex(pattern);
      expect(compiled.ok).toBe(false);
      const error = compiled.ok ? "" : compiled.error;
      expect([...error].filter((c) => c.charCodeAt(0) < 0x20)).toEqual([]);
    }
    const newline = compileRegex("[\n");
    expect(!newline.ok && newline.error).toContain("`[\\u000a`");
  });

  it.each([
    ["[ab]*a[ab]{95}[^ab]", 101],
    ["(.*a){24}", 122],
    ["[A-Za-z0-9]{20,255}", 492],
    ["x{1000}", 1002],
  ])(
    "refuses %s, whose program of %i instructions is over the cap, saying how to simplify it",
    (pattern, size) => {
      expect(compileRegex(pattern)).toEqual({
        ok: false,
        error: `is too complex (program size ${size} > 100); simplify it (a counted repeat is compiled once per count: [a-z]{8,255} alone is 504, [a-z]{8,} is 11)`,
      });
    },
  );

  it.each([
    String.raw`^(rm|mv|cp|chmod|chown|dd|mkfs|shutdown|reboot|kill|pkill|sudo|su|curl|wget|nc|ssh|scp)\b`,
    String.raw`hooks\.slack\.com/services/T[A-Z0-9]{8,12}/B[A-Z0-9]{8,12}/[A-Za-z0-9]{24}`,
    String.raw`(?i)(password|passwd|secret|token|api_?key|private_?key|credential)s?\s*[=:]`,
    "[ab]*a[ab]{94}[^ab]",
    "[A-Za-z0-9]{20,}",
  ])("accepts %s, within the cap", (pattern) => {
    expect(compileRegex(pattern).ok).toBe(true);
  });

  it("applies the cap to whichever engine is registered", () => {
    const sized = (programSize: number): RegexEngine => ({
      compile: () => ({ test: () => true, programSize }),
    });
    try {
      registerRegexEngine(sized(MAX_REGEX_PROGRAM_SIZE));
      expect(compileRegex("x").ok).toBe(true);
      registerRegexEngine(sized(MAX_REGEX_PROGRAM_SIZE + 1));
      const over = compileRegex("x");
      expect(over.ok ? "" : over.error).toMatch(/^is too complex \(program size 101 > 100\)/);
    } finally {
      registerRegexEngine(re2Engine);
    }
  });

  it.each([
    ["/home/dev/proj/src/**", "/home/dev/proj/src/a/b.ts", true],
    ["**/.env", "app/.env", true],
    ["*.ts", "src/a.ts", false],
  ])("path glob %s against %s: %s (minimatch)", (pattern, path, expected) => {
    const compiled = compilePathGlob(pattern, { dot: true });
    expect(compiled.ok && compiled.value(path)).toBe(expected);
  });

  it("refuses a glob minimatch cannot read", () => {
    const compiled = compilePathGlob("a".repeat(70_000));
    expect(!compiled.ok && compiled.error).toMatch(
      /^is not a glob minimatch can read \(pattern is too long\)/,
    );
  });

  it("compiles with a registered engine instead", () => {
    const seen: string[] = [];
    const fake: RegexEngine = {
      compile: (pattern) => {
        seen.push(pattern);
        return { test: (value) => value === pattern, programSize: 1 };
      },
    };
    registerRegexEngine(fake);
    try {
      const compiled = compileRegex("x+");
      expect(compiled.ok && compiled.value("x+")).toBe(true);
      expect(seen).toEqual(["x+"]);
    } finally {
      registerRegexEngine(re2Engine);
    }
  });
});

describe("a bundle built without the engines", () => {
  /** Fresh core modules whose default engines are absent, as scripts/lazy-engines.mjs builds them. */
  async function withoutEngines() {
    vi.resetModules();
    vi.doMock(REGEX_MODULE, () => ({ re2Engine: undefined }));
    vi.doMock(GLOB_MODULE, () => ({ minimatchEngine: undefined }));
    vi.doMock(SHELL_MODULE, () => ({ shellEngine: undefined }));
    const regex = await import("../../src/core/regex.js");
    const glob = await import("../../src/core/path-glob.js");
    const shell = await import("../../src/core/shell.js");
    const rules = await import("../../src/core/permission-rule.js");
    const engines = await import("../../src/core/pattern-engines.js");
    const policy = await import("../../src/core/policy.js");
    // From here on import() finds the real engine modules, as it finds their chunks in a bundle.
    vi.doUnmock(REGEX_MODULE);
    vi.doUnmock(GLOB_MODULE);
    vi.doUnmock(SHELL_MODULE);
    return { regex, glob, shell, rules, engines, policy };
  }

  it("fails a compile with REGEX_ENGINE_MISSING until the loader registers re2js", async () => {
    const { regex, glob, engines } = await withoutEngines();
    expect(regex.isRegexEngineWanted()).toBe(false);
    expect(await engines.loadWantedPatternEngines()).toBe(false);
    expect(regex.compileRegex("a.c")).toEqual({ ok: false, error: regex.REGEX_ENGINE_MISSING });
    expect(regex.isRegexEngineWanted()).toBe(true);
    expect(glob.isPathGlobEngineWanted()).toBe(false);

    expect(await engines.loadWantedPatternEngines()).toBe(true);
    expect(regex.isRegexEngineWanted()).toBe(false);
    const compiled = regex.compileRegex("a.c");
    expect(compiled.ok && compiled.value("xabcx")).toBe(true);
    // Only the wanted engine was loaded: the glob engine is still absent.
    expect(glob.compilePathGlob("**")).toEqual({ ok: false, error: glob.PATH_GLOB_ENGINE_MISSING });
    expect(await engines.loadWantedPatternEngines()).toBe(true);
    expect(await engines.loadWantedPatternEngines()).toBe(false);
    expect(glob.compilePathGlob("**").ok).toBe(true);
  });

  it("loads a policy with regex and glob patterns on the second compile, as the entries do", async () => {
    const { engines, policy } = await withoutEngines();
    const text = JSON.stringify({
      version: 1,
      rules: [
        { id: "mcp", on: "PreToolUse", matcher: "mcp__.*", decide: "deny", reason: "r" },
        { id: "env", on: "PreToolUse", if: "Read(**/.env)", decide: "deny", reason: "r" },
        { id: "src", on: "PreToolUse", where: { "tool_input.file_path": { glob: "src/**" } }, decide: "ask" },
      ],
    });
    const deps = { env: () => undefined, sha256 };
    const first = await policy.loadPolicy(text, deps);
    expect(first.ok).toBe(false);
    const messages = first.ok ? [] : first.error.map((i) => i.message).join("\n");
    expect(messages).toMatch(/needs the regex engine/);
    expect(messages).toMatch(/needs the glob engine/);
    expect(await engines.loadWantedPatternEngines()).toBe(true);
    const second = await policy.loadPolicy(text, deps);
    expect(second.ok && second.value.policy.rules.map((r) => r.id)).toEqual(["mcp", "env", "src"]);
  });

  it("compiles twice through withPatternEngines, the entries' way, only when an engine was missing", async () => {
    const { engines, policy } = await withoutEngines();
    const text = JSON.stringify({
      version: 1,
      rules: [{ id: "mcp", on: "PreToolUse", matcher: "mcp__.*", decide: "deny", reason: "r" }],
    });
    let compiles = 0;
    const load = () => {
      compiles++;
      return policy.loadPolicy(text, { env: () => undefined, sha256 });
    };
    const loaded = await engines.withPatternEngines(load);
    expect(loaded.ok && loaded.value.policy.rules.map((r) => r.id)).toEqual(["mcp"]);
    expect(compiles).toBe(2);
    const invalid = await engines.withPatternEngines(async () => {
      compiles++;
      return { ok: false } as const;
    });
    expect(invalid.ok).toBe(false);
    expect(compiles).toBe(3); // a policy wrong for another reason is not compiled again
  });

  it("fails a Bash(…) rule with SHELL_ENGINE_MISSING until the loader registers the splitter", async () => {
    const { shell, rules, engines, policy } = await withoutEngines();
    const call = { toolName: "Bash", toolInput: { command: "cd x && rm -rf /" }, cwd: "/p" };
    // Asked to split all the same, it has no answer: permission-rule.ts fails safe.
    expect(shell.splitCommand("ls")).toBeUndefined();
    expect(rules.isUnreadableCommand("ls")).toBe(true);
    expect(rules.parsePermissionRule("Bash(rm -rf *)")).toEqual({
      ok: false,
      error: `"Bash(rm -rf *)": ${shell.SHELL_ENGINE_MISSING}`,
    });
    expect(shell.isShellEngineWanted()).toBe(true);
    const text = JSON.stringify({
      version: 1,
      rules: [{ id: "rm", on: "PreToolUse", matcher: "Bash", if: "Bash(rm -rf *)", decide: "deny" }],
    });
    const loaded = await engines.withPatternEngines(() =>
      policy.loadPolicy(text, { env: () => undefined, sha256 }),
    );
    expect(loaded.ok && loaded.value.policy.rules.map((r) => r.id)).toEqual(["rm"]);
    expect(shell.isShellEngineWanted()).toBe(false);
    const rule = rules.parsePermissionRule("Bash(rm -rf *)");
    if (!rule.ok) throw new Error(rule.error);
    expect(rules.matchesPermissionRule(rule.value, call, "any")).toBe(true);
    expect(
      rules.matchesPermissionRule(rule.value, { ...call, toolInput: { command: "ls -rf" } }, "any"),
    ).toBe(false);
  });

  it("never keeps a split made without the splitter: simulate, then a policy with Bash(…) rules", async () => {
    const { rules, engines, policy } = await withoutEngines();
    const { evaluatePolicy } = await import("../../src/core/evaluate.js");
    const { parseHookEvent } = await import("../../src/core/events.js");
    const event = parseHookEvent({
      session_id: "s",
      transcript_path: "/home/dev/.claude/projects/p/s.jsonl",
      cwd: "/p",
      hook_event_name: "PreToolUse",
      tool_name: "Bash",
      tool_input: { command: "ls -la" },
    });
    if (!event.ok) throw new Error("the event should parse");
    const load = async (ruleList: unknown[]) => {
      const text = JSON.stringify({ version: 1, rules: ruleList });
      const loaded = await engines.withPatternEngines(() =>
        policy.loadPolicy(text, { env: () => undefined, sha256 }),
      );
      if (!loaded.ok) throw new Error(JSON.stringify(loaded.error));
      return loaded.value.policy;
    };
    const where = { "tool_input.command": { contains: "curl" } };
    const plain = await load([{ id: "curl", on: "PreToolUse", matcher: "Bash", where, decide: "deny" }]);
    // simulate (explain) lists every rule; a policy with no Bash(…) rule has no splitter to ask.
    const simulated = evaluatePolicy(plain, event.value, { team: "default" }, true);
    expect(simulated.explanations?.map((e) => e.applied)).toEqual([false]);
    // Asked anyway, it fails safe (every deny-style rule would match) and keeps nothing.
    expect(rules.isUnreadableCommand("ls -la")).toBe(true);
    const bash = await load([
      { id: "ls", on: "PreToolUse", matcher: "Bash", if: "Bash(ls *)", decide: "allow" },
      { id: "rm", on: "PreToolUse", matcher: "Bash", if: "Bash(rm *)", decide: "deny", reason: "no rm" },
    ]);
    const decided = evaluatePolicy(bash, event.value, { team: "default" });
    expect(decided.enforced.map((m) => [m.rule.id, m.effect.decision])).toEqual([["ls", "allow"]]);
  });

  it("loads no engine for a policy without such patterns", async () => {
    const { engines, policy } = await withoutEngines();
    const text = JSON.stringify({
      version: 1,
      rules: [
        {
          id: "rm",
          on: "PreToolUse",
          matcher: "Bash",
          where: { "tool_input.command": { contains: "rm -rf" } },
          decide: "deny",
          reason: "r",
        },
        { id: "edit", on: "PreToolUse", matcher: "Write|Edit", decide: "ask" },
      ],
    });
    const loaded = await policy.loadPolicy(text, { env: () => undefined, sha256 });
    expect(loaded.ok).toBe(true);
    expect(await engines.loadWantedPatternEngines()).toBe(false);
  });
});

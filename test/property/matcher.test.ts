/**
 * Rule matching on any input: `matcher` (exact names or RE2 regexes) and the `if` permission-rule
 * grammar with its shell splitter. Nothing throws, every answer is a boolean, regexes agree with
 * JavaScript's where both engines define the same language, evil patterns finish on 50,000
 * characters, and a deny rule cannot be dodged by re-spelling the command it names.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { compileMatcher, MATCHER_MAX_LENGTH } from "../../src/core/matcher.js";
import {
  matchesPermissionRule,
  type PermissionRule,
  parsePermissionRule,
  type ToolCall,
} from "../../src/core/permission-rule.js";
import { compileRegex } from "../../src/core/regex.js";
import { re2Engine } from "../../src/core/regex-re2.js";
import { indexRules } from "../../src/core/rule-index.js";
import { MAX_COMMAND_LENGTH, splitCommand } from "../../src/core/shell-command.js";
import { compileWhere } from "../../src/core/where.js";

/** Strings with the characters that mean something to a regex, a glob, a path or a shell. */
const SYNTAX = [..."abcxyz019 _-./~*?|&;<>()[]{}$`'\"\\#!=:,+^\n\t", "\u00a0", "\uD800", "\uE000"];
const syntaxString = (maxLength = 40) => fc.string({ unit: fc.constantFrom(...SYNTAX), maxLength });
const anyString = fc.oneof(fc.string(), fc.string({ unit: "binary" }), syntaxString());

describe("matcher", () => {
  it("compiles any text to a matcher that answers a boolean, or to a reason", () => {
    fc.assert(
      fc.property(
        anyString,
        fc.array(fc.option(anyString, { nil: undefined }), { maxLength: 4 }),
        (text, values) => {
          const compiled = compileMatcher(text);
          if (!compiled.ok) {
            expect(compiled.error).toMatch(/\S/);
            return;
          }
          for (const value of values) {
            if (compiled.value !== undefined) expect(typeof compiled.value(value)).toBe("boolean");
          }
        },
      ),
      { numRuns: 1000 },
    );
  });

  it("matches a list of exact names by equality, never as a regex", () => {
    const name = fc.stringMatching(/^[A-Za-z0-9_]{1,12}$/);
    fc.assert(
      fc.property(
        fc.array(name, { minLength: 1, maxLength: 5 }),
        fc.oneof(name, anyString),
        (names, value) => {
          const compiled = compileMatcher(names.join("|"));
          if (!compiled.ok || compiled.value === undefined) throw new Error("a name list must compile");
          expect(compiled.value(value)).toBe(names.includes(value));
          expect(compiled.value(undefined)).toBe(false);
        },
      ),
      { numRuns: 500 },
    );
  });

  it("gives through the rule index's name lookup the answer the matcher gives, for any matcher and name", () => {
    // Names, spaces, pipes and regex syntax, so that lists of exact names, spaced lists, empty
    // parts, regexes and names with metacharacters (`mcp__x-y__z`, `Bash.`) all come up.
    const piece = fc.constantFrom(
      "Bash",
      "bash",
      "Write",
      "Edit",
      "mcp__github__x",
      "mcp__x-y__z",
      "mcp__.*",
      "Bash.",
      ".*",
      "^",
      "$",
      "(?i)",
      "(",
      ")",
      "[a|b]",
      "|",
      " ",
      "*",
      "_",
      "0",
    );
    const text = fc.array(piece, { maxLength: 6 }).map((pieces) => pieces.join(""));
    const name = fc.oneof(
      fc.constantFrom(
        "Bash",
        "bash",
        "BashOutput",
        "Write",
        "Edit",
        "mcp__github__x",
        "mcp__x-y__z",
        "a",
        "",
      ),
      fc.constantFrom("Bash ", " Bash", "Bash|Write", "constructor", "__proto__", "toString"),
      syntaxString(12),
    );
    fc.assert(
      fc.property(fc.array(text, { maxLength: 8 }), fc.array(name, { maxLength: 6 }), (texts, names) => {
        const rules = texts.flatMap((matcher, index) => {
          const compiled = compileMatcher(matcher);
          return compiled.ok
            ? [
                {
                  index,
                  events: ["PreToolUse"],
                  matcher: compiled.value,
                  ifWords: undefined,
                  document: { matcher },
                },
              ]
            : [];
        });
        const index = indexRules(rules);
        for (const value of [...names, undefined, ...names]) {
          const expected = rules
            .filter((r) => r.matcher === undefined || r.matcher(value))
            .map((r) => r.index);
          expect(index.candidates("PreToolUse", value).map((r) => r.index)).toEqual(expected);
        }
      }),
      { numRuns: 1000 },
    );
  });

  it("rejects every matcher longer than the limit", () => {
    fc.assert(
      fc.property(
        fc.string({ minLength: MATCHER_MAX_LENGTH + 1, maxLength: MATCHER_MAX_LENGTH + 50 }),
        (text) => {
          expect(compileMatcher(text).ok).toBe(false);
        },
      ),
      { numRuns: 50 },
    );
  });
});

// ---------------------------------------------------------------------------------------------
// RE2 against JavaScript: Claude Code runs matchers with `new RegExp`, hookgate with re2js.
// ---------------------------------------------------------------------------------------------

/**
 * Regexes over a, b, c built from constructs both engines read the same way on ASCII text
 * without line terminators: literals, `.`, classes, groups, alternation, bounded quantifiers,
 * anchors. Nesting stops at depth 2: the oracle is JavaScript's backtracking engine, which a
 * deeper `((a*)*)*` would stall.
 */
function regexOfDepth(depth: number): fc.Arbitrary<string> {
  const leaf = fc.constantFrom("a", "b", "c", ".", "[ab]", "[^a]");
  const atom =
    depth === 0
      ? leaf
      : fc.oneof(
          { arbitrary: leaf, weight: 3 },
          { arbitrary: regexOfDepth(depth - 1).map((r) => `(${r})`), weight: 1 },
          { arbitrary: regexOfDepth(depth - 1).map((r) => `(?:${r})`), weight: 1 },
        );
  // Anchors and \b take no quantifier: JavaScript rejects `^*` ("nothing to repeat").
  const piece = fc.oneof(
    {
      arbitrary: fc
        .tuple(atom, fc.constantFrom("", "", "", "*", "+", "?", "{1,2}", "*?", "+?"))
        .map(([a, q]) => a + q),
      weight: 4,
    },
    { arbitrary: fc.constantFrom("^", "$", "\\b", "\\B"), weight: 1 },
  );
  const sequence = fc.array(piece, { minLength: 1, maxLength: 3 }).map((pieces) => pieces.join(""));
  return fc.oneof(
    sequence,
    fc.tuple(sequence, sequence).map(([a, b]) => `${a}|${b}`),
  );
}
const simpleRegex = regexOfDepth(2);

describe("regex engine", () => {
  it("finds a match exactly where JavaScript's RegExp does, for patterns both engines share", () => {
    fc.assert(
      fc.property(
        simpleRegex,
        fc.string({ unit: fc.constantFrom("a", "b", "c", " "), maxLength: 10 }),
        (pattern, value) => {
          // The engine itself: a policy also caps a pattern's program size (regex.ts), which some
          // of these nested repeats exceed.
          const { test } = re2Engine.compile(pattern);
          expect(test(value)).toBe(new RegExp(pattern).test(value));
        },
      ),
      { numRuns: 500 },
    );
  });

  it("compiles any text or says why not", () => {
    fc.assert(
      fc.property(anyString, fc.string({ maxLength: 20 }), (pattern, value) => {
        const compiled = compileRegex(pattern);
        if (compiled.ok) expect(typeof compiled.value(value)).toBe("boolean");
        else expect(compiled.error).toMatch(/^is not a valid RE2 regular expression \(.+\)|^is too complex/);
      }),
      { numRuns: 1000 },
    );
  });

  // Catastrophic backtracking in a backtracking engine; linear in RE2. The assertion is the
  // answer: a stalled engine makes the test time out instead of passing.
  const A = "a".repeat(50_000);
  it.each([
    ["^(a|aa)+$", A, true],
    ["^(a|aa)+$", `${A}!`, false],
    ["(a+)+$", A, true],
    ["(a+)+$", `${A}!`, false],
    ["^(a+)+$", `${A}!`, false],
    ["(x+x+)+y", "x".repeat(50_000), false],
    ["(a|a)*b", A, false],
    ["^(\\w+\\s?)*$", `${"ab ".repeat(16_666)}!`, false],
    ["(.*a){12}", A, true],
    ["^(([a-z])+.)+[A-Z]([a-z])+$", A, false],
  ])("runs %j on a 50,000-character input to its answer", (pattern, value, expected) => {
    const matcher = compileMatcher(pattern);
    if (!matcher.ok || matcher.value === undefined) throw new Error(`${pattern} must compile`);
    expect(matcher.value(value)).toBe(expected);

    const where = compileWhere({ "tool_input.command": { regex: pattern } });
    if (!where.ok) throw new Error(`${pattern} must compile in where`);
    const payload = { tool_input: { command: value } };
    expect(where.value.every((p) => p(payload))).toBe(expected);
  });

  it.each([
    ["(a)\\1", "backreference"],
    ["(?<n>a)\\k<n>", "named backreference"],
    ["(?=a)", "lookahead"],
    ["(?!a)b", "negative lookahead"],
    ["(?<=a)b", "lookbehind"],
    ["(?<!a)b", "negative lookbehind"],
  ])("rejects %j (%s) in matcher and where, saying RE2 does not support it", (pattern) => {
    const matcher = compileMatcher(pattern);
    expect(matcher.ok).toBe(false);
    if (!matcher.ok) expect(matcher.error).toMatch(/backreferences and lookaround are not supported/);
    const where = compileWhere({ cwd: { regex: pattern } });
    expect(where.ok).toBe(false);
    if (!where.ok) expect(where.error[0]?.message).toMatch(/backreferences and lookaround are not supported/);
  });
});

// ---------------------------------------------------------------------------------------------
// The `if` grammar
// ---------------------------------------------------------------------------------------------

const TOOLS = ["Bash", "Read", "Edit", "Write", "Glob", "Grep", "LS", "WebFetch", "WebSearch", "Custom"];

/** Rule texts shaped like the grammar (Tool, Tool(spec), mcp__x__y), with arbitrary specifiers. */
const ruleText = fc.oneof(
  anyString,
  fc.tuple(fc.constantFrom(...TOOLS), syntaxString(30)).map(([t, s]) => `${t}(${s})`),
  fc
    .tuple(
      fc.constantFrom("Read", "Edit"),
      fc.constantFrom("", "/", "//", "~/", "./", "**/", "../"),
      syntaxString(20),
    )
    .map(([t, anchor, s]) => `${t}(${anchor}${s})`),
  fc.tuple(fc.constantFrom("domain:", "domain:*."), syntaxString(20)).map(([d, s]) => `WebFetch(${d}${s})`),
  syntaxString(20).map((s) => `mcp__${s}`),
);

const toolCall: fc.Arbitrary<ToolCall> = fc.record(
  {
    toolName: fc.oneof(fc.constantFrom(...TOOLS, "mcp__github__create_issue"), fc.string()),
    toolInput: fc.oneof(
      fc.record(
        {
          command: fc.oneof(syntaxString(60), fc.string(), fc.jsonValue({ maxDepth: 1 })),
          file_path: fc.oneof(syntaxString(40), fc.jsonValue({ maxDepth: 1 })),
          path: syntaxString(30),
          url: fc.oneof(fc.webUrl(), syntaxString(30)),
          query: fc.string(),
        },
        { requiredKeys: [] },
      ),
      fc.dictionary(fc.string(), fc.jsonValue({ maxDepth: 2 })),
    ),
    cwd: fc.oneof(syntaxString(20), fc.constant("/p")),
    transcriptPath: fc.oneof(syntaxString(30), fc.constant("/home/dev/.claude/projects/p/s.jsonl")),
  },
  { requiredKeys: ["toolName"] },
);

/** A call that is not a Bash command, or one of whose subcommands runs a program. */
function runsSomething(call: ToolCall): boolean {
  const command = (call.toolInput as { command?: unknown } | undefined)?.command;
  return typeof command !== "string" || splitCommand(command).subcommands.some((s) => s.bare !== "");
}

describe("permission rules", () => {
  it("parses any text to a rule or a reason, and matching never throws", () => {
    fc.assert(
      fc.property(ruleText, fc.array(toolCall, { maxLength: 4 }), (text, calls) => {
        const parsed = parsePermissionRule(text);
        if (!parsed.ok) {
          expect(parsed.error).toMatch(/\S/);
          return;
        }
        for (const call of calls) {
          const any = matchesPermissionRule(parsed.value, call, "any");
          const all = matchesPermissionRule(parsed.value, call, "all");
          expect(typeof any).toBe("boolean");
          // An allow rule is the stricter reading: what it matches, a deny rule matches too. Not
          // for a command that runs nothing (`< a`): an allow rule approves it, and no deny rule
          // names it.
          if (all && runsSomething(call)) expect(any).toBe(true);
        }
      }),
      { numRuns: 1000 },
    );
  });

  it("splits any command of the runners' words without throwing", () => {
    const words = fc.constantFrom(
      ...["ssh", "scp", "sftp", "rsync", "docker", "podman", "docker-compose", "compose", "container"],
      ...["kubectl", "helm", "terraform", "git", "npx", "npm", "uv", "pnpm", "bun", "fakeroot", "sudo"],
      ...["run", "exec", "x", "tool", "rebase", "bisect", "submodule", "foreach", "config", "clone"],
      ...["-c", "-o", "-x", "-e", "-S", "-D", "-u", "-n", "-it", "--", "--rm", "--entrypoint", "-v"],
      ...["--config", "core.sshCommand=x", "ProxyCommand=x", "GIT_CONFIG_KEY_0=alias.x", "$X", "img"],
      ...["host", "x", ";", "|", "hasOwnProperty", "constructor", "__proto__"],
      ...["nix", "nix-shell", "develop", "shell", "--command", "--run", "--exec-path=x", "direnv", "devbox"],
      ...["corepack", "pnpm@9", "yarn"],
    );
    fc.assert(
      fc.property(fc.array(words, { minLength: 1, maxLength: 12 }), (parts) => {
        const split = splitCommand(`${parts.join(" ")}; rm -rf /`);
        expect(split.unreadable || split.subcommands.some((s) => s.text === "rm -rf /")).toBe(true);
      }),
      { numRuns: 1000 },
    );
  });

  it("splits any command into collapsed subcommands", () => {
    fc.assert(
      fc.property(fc.oneof(syntaxString(80), fc.string({ unit: "binary" })), (command) => {
        const split = splitCommand(command);
        for (const sub of split.subcommands) {
          for (const text of [sub.text, ...sub.variants]) {
            expect(text).not.toBe("");
            expect(text).toBe(text.replace(/\s+/g, " ").trim());
          }
        }
      }),
      { numRuns: 1000 },
    );
  });
});

// ---------------------------------------------------------------------------------------------
// A deny rule holds however its command is spelled
// ---------------------------------------------------------------------------------------------

const RESERVED = new Set([
  "timeout",
  "nice",
  "nohup",
  "command",
  "exec",
  "time",
  "stdbuf",
  "env",
  "eval",
  "sh",
  "bash",
  "zsh",
  "dash",
  "ksh",
  "if",
  "then",
  "else",
  "elif",
  "fi",
  "do",
  "done",
  "while",
  "until",
]);
/**
 * Plain words: no quoting, globbing, comments or redirections. The program name is a bare name
 * (no wrapper or keyword, no directory: `/usr/bin/a/b` runs `b`, not `a/b`); arguments may be paths.
 */
const program = fc
  .stringMatching(/^[a-z][a-z0-9_-]{0,7}$/)
  .filter((w) => !RESERVED.has(w) && readsPlainly(w));

/**
 * Whether a name is a plain program to the splitter: alone and with arguments, it is one
 * readable command, as written. Others (another shell, a wrapper whose command is guessed or
 * whose script is read, `fc`, `su`, `trap`) are read specially, and these properties are about
 * plain ones.
 */
function readsPlainly(name: string): boolean {
  return [name, `${name} a`, `${name} a b`].every((command) => {
    const split = splitCommand(command);
    return !split.unreadable && split.subcommands.length === 1 && split.subcommands[0]?.text === command;
  });
}
const argument = fc.stringMatching(/^[a-z0-9._/-]{1,8}$/);
const simpleCommand = fc
  .tuple(program, fc.array(argument, { maxLength: 3 }))
  .map(([name, args]) => [name, ...args].join(" "));

function parsed(text: string): PermissionRule {
  const result = parsePermissionRule(text);
  if (!result.ok) throw new Error(`${text}: ${result.error}`);
  return result.value;
}

const bash = (command: string): ToolCall => ({ toolName: "Bash", toolInput: { command }, cwd: "/p" });

/** Ways to run `command` that Claude Code's permission checks see through (POLICY.md, `if`). */
const respellings: readonly ((command: string, other: string) => string)[] = [
  (c) => c,
  (c, o) => `${o} && ${c}`,
  (c, o) => `${c}; ${o}`,
  (c, o) => `${o} | ${c}`,
  (c, o) => `${o} || ${c}`,
  (c, o) => `${o}\n${c}`,
  (c) => `timeout 10 ${c}`,
  (c) => `nice -n 5 nohup ${c}`,
  (c) => `bash -c '${c}'`,
  (c) => `sh -c "${c}"`,
  (c) => `env -i ${c}`,
  (c) => `CI=1 ${c}`,
  (c) => `(${c})`,
  (c) => `{ ${c}; }`,
  (c, o) => `if ${o}; then ${c}; fi`,
  (c) => `echo "$(${c})"`,
  (c) => `echo \`${c}\``,
  (c) => `${c} 2>/dev/null`,
  (c) => `${c} > out.txt`,
  (c) => c.replace(/^(\S)(\S*)/, "'$1'$2"),
  (c) => c.replace(/^(\S)(\S*)/, '$1""$2'),
  (c) => c.replace(/^(\S)/, "\\$1"),
  (c) => `/usr/bin/${c}`,
  // A command git runs from its settings or the environment.
  (c) => `git -c core.sshCommand='${c}' fetch`,
  (c) => `git -C app -c core.fsmonitor="${c}" status`,
  (c) => `GIT_SSH_COMMAND='${c}' git push`,
  (c) => `env EDITOR='${c}' git commit`,
  // A command a remote host or a container runs.
  (c) => `ssh -p 2222 -i key deploy@host '${c}'`,
  (c) => `ssh host -l deploy ${c}`,
  (c) => `docker exec -it web ${c}`,
  (c) => `docker run --rm -v $PWD:/src -w /src node:20 ${c}`,
  (c) => `podman --log-level=debug run -e A=1 img ${c}`,
  (c) => `docker compose -f x.yml exec -T web ${c}`,
  (c) => `kubectl -n prod exec -it api-0 -c app -- ${c}`,
  // A package manager's or a tool's runner.
  (c) => `fakeroot -- ${c}`,
  (c) => `unbuffer ${c}`,
  (c) => `npx -c '${c}'`,
  (c) => `uv run ${c}`,
];

describe("a deny-style Bash rule", () => {
  it("matches its command however it is wrapped, quoted or chained", () => {
    const respelling = fc.integer({ min: 0, max: respellings.length - 1 });
    fc.assert(
      fc.property(simpleCommand, simpleCommand, respelling, (command, other, i) => {
        const spelled = (respellings[i] as (c: string, o: string) => string)(command, other);
        expect(matchesPermissionRule(parsed(`Bash(${command})`), bash(spelled), "any")).toBe(true);
        const first = command.split(" ")[0] as string;
        expect(matchesPermissionRule(parsed(`Bash(${first} *)`), bash(spelled), "any")).toBe(true);
      }),
      { numRuns: 1000 },
    );
  });

  it("an allow rule never approves a command that also runs something else", () => {
    fc.assert(
      fc.property(
        simpleCommand,
        simpleCommand,
        fc.constantFrom("&&", ";", "|", "||", "\n"),
        (command, other, op) => {
          fc.pre(command !== other);
          const allow = parsed(`Bash(${command})`);
          expect(matchesPermissionRule(allow, bash(command), "all")).toBe(true);
          expect(matchesPermissionRule(allow, bash(`${command} ${op} ${other}`), "all")).toBe(false);
          expect(matchesPermissionRule(allow, bash(`${command} $(${other})`), "all")).toBe(false);
        },
      ),
      { numRuns: 500 },
    );
  });

  it("fails safe on a command too long to read: every deny pattern matches, no allow does", () => {
    const padding = fc.integer({ min: MAX_COMMAND_LENGTH, max: MAX_COMMAND_LENGTH * 4 });
    fc.assert(
      fc.property(simpleCommand, simpleCommand, padding, (pattern, command, size) => {
        const long = `${command}; echo ${"x".repeat(size)}`;
        const rule = parsed(`Bash(${pattern})`);
        expect(matchesPermissionRule(rule, bash(long), "any")).toBe(true);
        expect(matchesPermissionRule(rule, bash(long), "all")).toBe(false);
        // The rule still names a tool: another tool's call is no match at any length.
        expect(matchesPermissionRule(rule, { toolName: "Read", toolInput: { command: long } }, "any")).toBe(
          false,
        );
      }),
      { numRuns: 50 },
    );
  });
});

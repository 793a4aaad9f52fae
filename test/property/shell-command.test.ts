/**
 * The Bash splitter (src/core/shell-command.ts) as `if` Bash rules use it (README "`if` Bash
 * rules"): on any text over the shell's own characters it answers without throwing, with a split
 * no larger than its input allows; and a deny rule on a command word sees that word however the
 * command is wrapped in constructs that still run it, or the split says some program cannot be
 * named (`unreadable`), which a deny rule counts as a match.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { matchesPermissionRule, parsePermissionRule, type ToolCall } from "../../src/core/permission-rule.js";
import { splitCommand } from "../../src/core/shell-command.js";

/** The characters that make Bash syntax, and some words and blanks between them. */
const SHELLISH = [
  "'",
  '"',
  "`",
  "$",
  "(",
  ")",
  ";",
  "|",
  "&",
  "<",
  ">",
  "\\",
  "\n",
  "#",
  " ",
  " ",
  "a",
  "b",
  "x",
  "=",
  "-",
  "rm",
  "echo",
  "sh -c ",
  "$(",
  "${",
  "}",
  "{",
  "<<",
  "EOF",
  "if ",
  "then ",
  "fi",
  "case ",
  " in ",
  "))",
  "((",
  "*",
  ",",
  "{a,b}",
];
const shellish = fc.array(fc.constantFrom(...SHELLISH), { maxLength: 60 }).map((parts) => parts.join(""));

describe("splitCommand on any shell-ish text", () => {
  it("answers without throwing, its split no larger than a multiple of the input", () => {
    fc.assert(
      fc.property(shellish, (command) => {
        const split = splitCommand(command);
        expect(typeof split.unreadable).toBe("boolean");
        const size = split.subcommands.reduce(
          (sum, s) => sum + s.text.length + s.variants.reduce((n, v) => n + v.length, 0),
          0,
        );
        // Braces may expand (`{a,b}{c,d}`), within the splitter's own 64 KiB budget.
        expect(size).toBeLessThanOrEqual(16 * (command.length + 1) + 4 * 65_536);
        expect(split.subcommands.length).toBeLessThanOrEqual(command.length + 1);
      }),
      { numRuns: 400 },
    );
  });
});

const DENY_RM = (() => {
  const parsed = parsePermissionRule("Bash(rm *)");
  if (!parsed.ok) throw new Error(parsed.error);
  return parsed.value;
})();

const bash = (command: string): ToolCall => ({
  toolName: "Bash",
  toolInput: { command },
  cwd: "/p",
  transcriptPath: "/home/dev/.claude/projects/-p/session.jsonl",
});

/** `rm` spelt as bash reads it back to `rm`: quoted in part or whole, escaped. */
const rmWord = fc.constantFrom("rm", 'r"m"', "'r'm", "r\\m", '"rm"', "\\rm", "'rm'", 'r""m', "r''m", "$'rm'");

const singleQuoted = (text: string) => `'${text.replaceAll("'", "'\\''")}'`;
const doubleQuoted = (text: string) => `"${text.replace(/["\\$`]/g, (c) => `\\${c}`)}"`;

/** A command as built so far, and whether it is one simple command (a word a prefix such as `env` can run). */
interface Built {
  readonly text: string;
  readonly simple: boolean;
}
const simple = (text: string): Built => ({ text, simple: true });
const compound = (text: string): Built => ({ text, simple: false });

/**
 * Constructs that run the command they wrap, as bash does. A prefix that runs a program (`env`,
 * `sudo`, `A=1`, `exec`, …) wraps only a simple command: `env A=1 case x in …` runs a program
 * named `case`, so such a wrapper leaves a compound command as it is. Spaced inside their
 * parentheses: `((` and `$((` open arithmetic, where `((rm x))` is an expression (bash: "syntax
 * error in expression"), not a subshell. A here-document ends on a line of its own, so its
 * wrapper closes a group after it.
 */
const WRAPPERS: readonly ((c: Built) => Built)[] = [
  (c) => compound(`a; ${c.text}`),
  (c) => compound(`${c.text}; a`),
  (c) => compound(`( ${c.text} )`),
  (c) => simple(`echo $( ${c.text} )`),
  (c) => simple(`echo "$( ${c.text} )"`),
  (c) => compound(`x && ${c.text}`),
  (c) => compound(`false || ${c.text}`),
  (c) => (c.simple ? compound(`echo | ${c.text}`) : c),
  (c) => compound(`${c.text} | cat`),
  (c) => compound(`{ ${c.text}; }`),
  (c) => compound(`${c.text} &`),
  (c) => compound(`true\n${c.text}`),
  (c) => compound(`! ${c.text}`),
  (c) => compound(`time ${c.text}`),
  (c) => compound(`if true; then ${c.text}; fi`),
  (c) => compound(`for i in 1; do ${c.text}; done`),
  (c) => compound(`while true; do ${c.text}; done`),
  (c) => compound(`case x in x) ${c.text};; esac`),
  (c) => compound(`f() { ${c.text}; }; f`),
  (c) => compound(`{ ${c.text} <<EOF\nhi\nEOF\n}`),
  (c) => compound(`${c.text} || true`),
  (c) => ({ ...c, text: `${c.text} 2>/dev/null` }),
  (c) => simple(`sh -c ${singleQuoted(c.text)}`),
  (c) => simple(`bash -c ${doubleQuoted(c.text)}`),
  (c) => simple(`eval ${singleQuoted(c.text)}`),
  (c) => simple(`cat <( ${c.text} )`),
  // Inside backquotes a backslash escapes `$`, a backquote and itself: only text without them.
  (c) => (/[`\\]/.test(c.text) ? c : simple(`echo \`${c.text}\``)),
  ...[
    "env A=1",
    "A=1",
    "timeout 5",
    "nice",
    "nohup",
    "command",
    "exec",
    "stdbuf -oL",
    "sudo",
    "xargs",
    "coproc",
  ].map((prefix) => (c: Built) => (c.simple ? simple(`${prefix} ${c.text}`) : c)),
];

const wrapped = fc
  .tuple(rmWord, fc.array(fc.nat({ max: WRAPPERS.length - 1 }), { maxLength: 5 }))
  .map(
    ([word, wrappers]) =>
      wrappers.reduce((c, i) => (WRAPPERS[i] as (c: Built) => Built)(c), simple(`${word} x`)).text,
  );

describe("a deny rule on a command word", () => {
  it("sees it however the command is wrapped, or finds the command unreadable", () => {
    fc.assert(
      fc.property(wrapped, (command) => {
        expect(matchesPermissionRule(DENY_RM, bash(command), "any")).toBe(true);
      }),
      { numRuns: 1000 },
    );
  });
});

/**
 * Splits a Bash command into the simple commands it runs, the way Claude Code's permission
 * checks see them: each subcommand of `&&`, `||`, `;`, `|`, `&` and newlines is checked on
 * its own, after quote removal and after stripping wrappers (`timeout`, `nice`, `nohup`...)
 * that run another command. Pure: shell-quote for the words, no runtime imports.
 */
import type { ParseEntry } from "shell-quote";
// parse alone: the package's index also loads its `quote`, which would only add to the Worker.
import parse from "shell-quote/parse.js";
import type { ShellEngine } from "./shell.js";
import { MAX_COMMAND_LENGTH } from "./shell-limits.js";

export { MAX_COMMAND_LENGTH };

export interface Subcommand {
  /** The subcommand as words joined by single spaces, redirections last (`rm -rf / 2>/dev/null`). */
  readonly text: string;
  /**
   * Other spellings a deny-style rule should also recognise: without the redirections, and
   * with an absolute command path reduced to its name (`/bin/rm` -> `rm`).
   */
  readonly variants: readonly string[];
  /**
   * A command another one runs that allow rules do not strip (`sudo rm x` runs `rm x`, as do
   * `xargs rm` and `env --block-signal rm x`): deny-style rules check it, allow rules read the outer one.
   */
  readonly denyOnly?: true;
  /** The subcommand without its redirections, when it has any (`npm test` for `npm test 2>&1`). */
  readonly bare?: string;
  /**
   * Its redirections that write a file (`>~/.bashrc`) or open a connection (`</dev/tcp/host/80`);
   * `/dev/null` and descriptor copies (`2>&1`) do not count. An allow rule approves them only by
   * naming each, word for word.
   */
  readonly writes?: readonly string[];
}

export interface CommandSplit {
  readonly subcommands: readonly Subcommand[];
  /**
   * A wrapper the subcommands were read past, as written from its name on, with the variants a
   * subcommand has (`nohup make`, `bash -c make`, `eval make`): deny-style rules check these too,
   * so that one naming the wrapper (`Bash(nohup *)`) applies. Allow rules read past them.
   */
  readonly wrappers: readonly string[];
  /** True when part of what runs cannot be seen: substitutions, heredocs, a changed PATH... */
  readonly opaque: boolean;
  /**
   * True when some program that runs cannot be named at all, so a deny-style rule must assume
   * it matches (permission-rule.ts): words that could not be read (an unclosed quote, nesting
   * past MAX_DEPTH), a variable or glob in command position (`$a -rf /`, `/bin/r? -rf /`), or a
   * shell that reads its script from stdin (`echo 'rm -rf /' | bash`, `bash <<EOF`).
   */
  readonly unreadable: boolean;
}

/** Nested `sh -c` / `$(...)` levels followed; deeper text is kept whole and marked opaque. */
const MAX_DEPTH = 8;
/** Marks a file-descriptor number written against its redirection (`2>`), which shell-quote separates. */
const FD_MARK = "\uE000";
/**
 * Stands for a `$` inside double quotes, where bash neither splits nor globs what it expands
 * (`"$VIRTUAL_ENV/bin/python"` is one word), and for the placeholder of a `$(…)` there; read
 * back as `$` in each word (Word `quoted`).
 */
const QUOTED_DOLLAR = "\uE003";
/**
 * Marks an unquoted `@`, `!` or `+` glued to a `(`: an extended glob's opener (`@(x)`, `!(x)`),
 * which shell-quote cuts at the `(` (extglobCut); not the `!` of `! (cmd)`.
 */
const EXTGLOB_MARK = "\uE00F";
/** Before a plain `${NAME}` inside double quotes, whose `$` shell-quote must still see: one word. */
const QUOTED_BRACE = "\uE00E";
/** Marks the `(` of a compound array assignment the scan read (Word `array`). */
const ARRAY_MARK = "\uE004";
/**
 * Marks the reserved word `case` where the scan found it: unquoted, at a command's start (not
 * `\case`, `"case"`, `echo case`), so that splitOnSeparators reads the arms of a real `case` only.
 */
const CASE_MARK = "\uE005";
/**
 * Marks an unquoted `case` word where the scan does not see a command start: a command start all
 * the same right after a pattern list's `)` (`x) case $y in …`), which only splitOnSeparators knows.
 */
const LOOSE_CASE_MARK = "\uE008";
/**
 * Stand for the characters that expand or make words where they stand unquoted, where they are
 * quoted or escaped (`'$x'`, `\$x`, `"\`"`, `"*.ts"`, `'{a,b}'`, `\[`): `$`, a backquote, a glob's
 * `*`, `?` and `[`, a brace list's `{`, and `~`. Read back as themselves in each word; a word with
 * one left unmarked expands before the command runs (Word `expands`).
 */
const LITERAL: Readonly<Record<string, string>> = {
  $: "\uE006",
  "`": "\uE007",
  "[": "\uE009",
  "{": "\uE00A",
  "*": "\uE00B",
  "?": "\uE00C",
  "~": "\uE00D",
};
const UNLITERAL: Readonly<Record<string, string>> = Object.fromEntries(
  Object.entries(LITERAL).map(([c, mark]) => [mark, c]),
);
/** Private-use characters this module and permission-rule.ts use as markers; never taken from input. */
const RESERVED_CHARS = /[\uE000-\uE00F]/g;

const SEPARATORS = new Set(["&&", "||", ";", "|", "&", "|&", ";;", ";&", ";;&", "(", ")", "<(", ">("]);

export function splitSubcommands(command: string): { subcommands: string[]; opaque: boolean } {
  const split = splitCommand(command);
  return { subcommands: split.subcommands.map((s) => s.text), opaque: split.opaque };
}

/**
 * What makes a text unreadable wherever it stands, read on the whole of it: code in data
 * (codeInData), a code-bearing variable set by `${…:=}` or by element (CODE_VARIABLE), the old
 * arithmetic `$[…]`, which ends elsewhere for bash than here inside a `((` (not `\$[`: a `$`), and
 * a braced escape, which bash 5.2 reads in `$'…'` (`$'\x{24}'` is `$`). Read again with its
 * line continuations joined, as bash joins them before it reads words (`${x@\⏎P}`).
 *
 * `openers`, where the scan found the text's own substitutions open (Scanned): bash runs those
 * in place, so what they leave in the data is their output, not a `$(` (`echo -e "\e[0m
 * $(date) [done]"` holds no subscript's code). Without them every `$(` counts, as in a script
 * read before it is split.
 */
function unreadableText(text: string, openers: readonly number[] = []): boolean {
  const check = (t: string, data: string) =>
    codeInData(t, data) ||
    CODE_VARIABLE.test(t) ||
    UNESCAPED_ARITHMETIC.test(t) ||
    (t.includes("$'") && /\\[xuU]\{/.test(t));
  const data = openers.length === 0 ? text : withoutOpeners(text, openers);
  const joined = (t: string) => t.replaceAll("\\\n", "");
  return check(text, data) || (text.includes("\\\n") && check(joined(text), joined(data)));
}

/** `$[` after an even number of backslashes (none, or escaped ones). */
const UNESCAPED_ARITHMETIC = /(?:^|[^\\])(?:\\\\)*\$\[/;

/** This module as shell.ts's port takes it: what a Bash rule needs of it. */
export const shellEngine: ShellEngine = { splitCommand, canonicalCommandPattern };

export function splitCommand(command: string): CommandSplit {
  if (command.length > MAX_COMMAND_LENGTH)
    return { subcommands: [], wrappers: [], opaque: true, unreadable: true };
  const out: Output = {
    subcommands: [],
    seen: new Set(),
    opaque: false,
    unreadable: false,
    denyOnly: 0,
    guessed: 0,
    guessing: 0,
    aliases: false,
    braceBudget: MAX_BRACE_OUTPUT,
    commandValues: [],
    wrappers: [],
    valueNames: new Set(),
    arithmetic: [],
    allexport: false,
  };
  const text = sanitize(command);
  const scanned = splitInto(text, 0, [], out);
  if (unreadableText(text, scanned?.openers)) markUnreadable(out);
  // A subscript's code spelt across quotes (`let 'a[$''(rm -rf /)]'`) shows in the words.
  if (!out.unreadable && out.subcommands.some((s) => codeInWord(s.text))) markUnreadable(out);
  // An alias is in effect for text read after the line that defines it: a later line, or a string
  // read again at run time (`eval $'b\nmark'`, a trap's action, a callback, a `$(…)`, which bash
  // 5.2 parses again when it runs it).
  if (out.aliases && /\n\s*\S|\b(?:eval|trap|mapfile|readarray|complete|compgen)\b|\$\(|`|[<>]\(/.test(text))
    markUnreadable(out);
  if (out.valueNames.size > 0 && out.arithmetic.length > 0 && evaluatesValue(out)) out.opaque = true;
  // Read in any order: a loop may run a `set -a` before its `read` (`while read …; do set -a; done`).
  if (out.allexport && (out.valueNames.size > 0 || out.arithmetic.length > 0)) out.opaque = true;
  return {
    subcommands: out.subcommands,
    wrappers: out.wrappers,
    opaque: out.opaque,
    unreadable: out.unreadable,
  };
}

/**
 * A permission-rule specifier in the same canonical form as `Subcommand.text` (quotes removed,
 * whitespace collapsed, redirections last), so `Bash(git commit -m "x")` compares like a command.
 * Operators stay as literal text and no wrapper is stripped: the specifier is a pattern, not a script.
 * U+E001 and U+E002 pass through unchanged, for the caller's own markers (permission-rule.ts).
 */
export function canonicalCommandPattern(text: string): string {
  const scanned = scan(text.replace(/\uE000/g, "\uFFFD"), true);
  const entries = tokenize(scanned.text);
  if (entries === undefined) return collapse(stripMark(scanned.text));
  const parts: string[] = [];
  let words: Word[] = [];
  for (const entry of entries) {
    if (entry.kind === "separator") {
      parts.push(render(toCommand(words)), entry.text);
      words = [];
    } else words.push(entry);
  }
  parts.push(render(toCommand(words)));
  return collapse(parts.join(" "));
}

/**
 * Escapes that become `$`, a backquote or `(`: `\x24`, `\u0028`, `\$`, and octal with or
 * without a leading `0` (`echo -e '\0044'`), past 255 too (`$'\450'` keeps the low 8 bits).
 */
const ESCAPED_DOLLAR = String.raw`x24|0?[04]?44|[uU]0*24|\$`;
const ESCAPED_CODE = `${ESCAPED_DOLLAR}|x60|0?[15]40|[uU]0*60`;
const ESCAPED_PAREN = "x28|0?[04]?50|[uU]0*28";
const BACKQUOTE = "`";
/** A `$` that starts no substitution, expansion or escape inside a quoted or nested piece. */
const PLAIN_DOLLAR = String.raw`\$(?![({\\])`;
/** The rest of a nested subscript without code or quotes, after its `[`. */
const NESTED_REST = String.raw`(?:[^\][\n$\\"'${BACKQUOTE}]|${PLAIN_DOLLAR}){0,64}\]`;
/** What runs code in a subscript: `$(` (not `$((`), a backquote, either spelt with escapes. */
const SUBSCRIPT_CODE = String.raw`\$\\?\((?!\()|\$\\(?:${ESCAPED_PAREN})|${BACKQUOTE}|\\(?:${ESCAPED_CODE})`;
/**
 * The rest of a quoted piece without code, after its opening quote (`"$k"`, `"]"`,
 * `'tls\.crt'`): an escape is a pair, but inside single quotes never with the closing quote
 * (`'\'` closes there; `"\""` does not).
 */
const QUOTED_REST = (quote: string) =>
  String.raw`(?:[^${quote}\n\\$${BACKQUOTE}]|${PLAIN_DOLLAR}|\\(?!${ESCAPED_CODE})[^${quote === "'" ? "'" : ""}\n]){0,64}${quote}`;
/** A quote that closes somewhere later, on any line. */
const CLOSES = (quote: string) => `(?=[^${quote}]*${quote})`;
/** After `${`: `NAME}`, `#NAME}`, `NAME[@]}`, a parameter with nothing in its braces to end elsewhere. */
const BRACED_REST = String.raw`#?[A-Za-z_][A-Za-z0-9_]*(?:\[[@*]\])?\}`;
/**
 * After `$((`: names, numbers, operators, plain parameters and one level of parentheses, then
 * `))` (`$(( (i+1)*2 ))`, `$(( ${#a[@]} - 1 ))`). A `#` only in a base (`16#ff`): elsewhere bash,
 * reading the `$((` as a possible `$(`, may take it for a comment running past the `))`.
 */
const ARITHMETIC_REST = String.raw`(?:[^()\n$\\"'#${BACKQUOTE}\][{}]|(?<=[A-Za-z0-9_])#|\$[A-Za-z_][A-Za-z0-9_]*|\$\{${BRACED_REST}|\([^()\n$\\"'#${BACKQUOTE}\][{}]{0,64}\)){0,64}\)\)`;
/**
 * One piece of a subscript as bash finds its end: a character other than `]`, `[`, a quote or a
 * backslash; a `$` that starts no code or expansion; a plain `${NAME}` or `$((…))`; an
 * escape with the character after it; a quoted piece or nested `[…]` without code, passed over
 * whole (`a["]"…]`, `a[[]…]`); a quote that never closes. Each piece is bounded, and at
 * most one reading fits each character.
 */
const SUBSCRIPT_PIECE = [
  String.raw`[^\]$[\\"'${BACKQUOTE}]`,
  String.raw`\$(?![({]|\\(?:${ESCAPED_PAREN}))`,
  String.raw`\$\{${BRACED_REST}`,
  String.raw`\$\(\(${ARITHMETIC_REST}`,
  String.raw`\\(?!${ESCAPED_CODE})[^]`,
  `"${QUOTED_REST('"')}`,
  `'${QUOTED_REST("'")}`,
  `"(?!${CLOSES('"')})`,
  `'(?!${CLOSES("'")})`,
  String.raw`\[${NESTED_REST}`,
].join("|");
/**
 * What in a subscript leaves where it ends unsure: a `[` that opens no nested subscript, a quote
 * that closes later but holds code or more than 64 characters, a `${…}` or `$((…))` other than a
 * plain one (bash passes over either whole, `]` included).
 */
const UNSURE_PIECE = [
  String.raw`\[(?!${NESTED_REST})`,
  `"(?!${QUOTED_REST('"')})${CLOSES('"')}`,
  `'(?!${QUOTED_REST("'")})${CLOSES("'")}`,
  String.raw`\$\{(?!${BRACED_REST})`,
  String.raw`\$\(\((?!${ARITHMETIC_REST})`,
].join("|");
/**
 * The end of a name, any quotes or `$` between it and the `[`, and the subscript's opening `[`. A
 * name's last character: a letter or `_`; a digit or special parameter's character only where a
 * name or a parameter (`$1`, `$-`, `$@`) leads to it, so not the `3` of `\033[` (a number, which
 * starts no subscript); or the `}` of an expansion or brace list that makes one (`a${x}'[…]'`).
 */
const SUBSCRIPT_START = String.raw`(?:[A-Za-z_}]|[0-9\-@*#?!](?=[$'"\\]*\[)(?<=(?:[A-Za-z_}]|\$[\-@*#?!0-9])[A-Za-z0-9_]*))[$'"\\]*\[`;

/**
 * Text bash runs as code even from single quotes: a `$(…)` or backquote in an array subscript
 * (`let 'x=a[$(rm -rf /)]'`: subscripts are evaluated as arithmetic, by `let`, `declare -i`,
 * `printf -v`, `read`, `test -v` and `$((x))` alike), also spelt with escapes (`$'\x24(…)'`,
 * `\$\(`, `$'\x60…'`).
 */
const CODE_IN_DATA = new RegExp(`${SUBSCRIPT_START}(?:${SUBSCRIPT_PIECE}){0,256}(?:${SUBSCRIPT_CODE})`);
/**
 * A subscript whose end is unsure: a `[` or quote in it that opens no piece (`a[[[]]…]`, a quote
 * closing past 64 characters or holding code), or more pieces than CODE_IN_DATA reads. Any code
 * after it may be in it.
 */
const UNSURE_SUBSCRIPT = new RegExp(
  `${SUBSCRIPT_START}(?:(?:${SUBSCRIPT_PIECE}){0,256}(?:${UNSURE_PIECE})|(?:${SUBSCRIPT_PIECE}){256})`,
);
/** Code after an unsure subscript: a `$((` too, which bash may read as `$( (…) )`. */
const ANY_SUBSCRIPT_CODE = new RegExp(String.raw`${SUBSCRIPT_CODE}|\$\(\(`);

/**
 * codeInData for a word as the split reads it: a substitution there is its placeholder (`$(...)`),
 * which the raw text's check has judged already.
 */
function codeInWord(word: string): boolean {
  return codeInData(word.replace(PLACEHOLDERS, "_"));
}

/** The placeholders `substitute` leaves for a `$(…)` (marked or not) and a backquoted command. */
const PLACEHOLDERS = /\$\(\.\.\.\)|`\.\.\.`|\uE003\(\.\.\.\)/g;

/**
 * Whether the text holds code that bash may run from data: prompt expansion (`${x@P}`), or code in
 * a subscript (CODE_IN_DATA, UNSURE_SUBSCRIPT). bash expands a subscript only once it has found
 * its `]` (`let 'a[$(rm -rf /)'` runs nothing), so only the text before the last thing that may
 * be or make one is read (lastCloser): an ANSI colour (`echo -e "\e[1mBuild\e[0m $(date)"`) or a
 * regex's `\[` before a last `$(…)` is no subscript holding it. `data` is the text with the
 * substitutions that run in place neutralised (withoutOpeners): the code is looked for there, the
 * closers in the text, since such a substitution may print a `]`.
 */
function codeInData(text: string, data = text): boolean {
  if (text.includes("@P}")) return true;
  // Most words have no `[`, and the split checks every word it reads.
  if (!text.includes("[")) return false;
  // A substitution that runs in place may still print a `]`: it counts as a closer.
  const close = lastCloser(text);
  if (close < 0) return false;
  const head = data.slice(0, close);
  if (CODE_IN_DATA.test(head)) return true;
  const unsure = UNSURE_SUBSCRIPT.exec(head);
  return unsure !== null && ANY_SUBSCRIPT_CODE.test(head.slice(unsure.index));
}

/**
 * Where the last `]` is, or what may make one at run time: an escape (`printf '\x5d'`, `\135`,
 * `\u005d`), an expansion (`$r`, `$(printf …)`, a backquote), a `~`, a glob (a file named
 * `a[$(…)]` matches `'a[$(…)'*`) or a brace list (`{Z..a}` holds `]`); -1 if none.
 */
function lastCloser(text: string): number {
  let last = -1;
  for (const closer of CLOSERS) last = Math.max(last, text.lastIndexOf(closer));
  if (text.includes("\\")) for (const m of text.matchAll(ESCAPED_CLOSE)) last = Math.max(last, m.index);
  return last;
}

const CLOSERS = ["]", "$", "`", "~", "*", "?", "{"];
const ESCAPED_CLOSE = /\\(?:x5[dD]|0?[15]?35|[uU]0*5[dD])/g;

/**
 * A variable whose value bash runs or expands as code, set other than by `NAME=value` (which
 * noteAssignment reads) or by a builtin (`setsCodeVariable`): by `${PS4:=…}` (also `${PS4[0]=…}`,
 * and `${!name=…}`, which sets the variable `name` names), or by element (`BASH_ALIASES[ls]=…` is
 * an alias, `BASH_CMDS[ls]=…` what `ls` runs), read on the whole text. (zsh's arrays of the same,
 * `functions[ls]='rm -rf /'`, are CODE_VARIABLE_NAMES: read where they are assigned, as a mention in
 * data is common, `curl "…?a=1&commands=2"`.)
 */
const CODE_VARIABLE =
  /\$\{(?:(?:PS[0-4]|PROMPT_COMMAND|BASH_ENV|BASH_COMPAT|SHELL|ENV)(?:\[[^\]]*\])?|![A-Za-z_][A-Za-z0-9_]*):?=|(?:BASH_ALIASES|BASH_CMDS)\[/;

/**
 * The variables bash runs or expands as code (prompts, PROMPT_COMMAND, BASH_ENV) or as aliases and
 * commands, and BASH_COMPAT, which at 5.1 or lower makes arithmetic expand a subscript's value
 * again (`(( a[$x] ))` runs a `$(…)` in `$x`). And GNU parallel's: PARALLEL_SHELL runs its jobs,
 * PARALLEL and PARALLEL_CSH add options (`--rpl` runs Perl) and words before the command,
 * PARALLEL_HOME's config may add a command, PARALLEL_ENV code before each job, PARALLEL_TMUX is the
 * program `--tmux` runs. And zsh's tables of functions, aliases and command paths (Claude Code runs its
 * Bash tool in zsh on macOS): `functions[ls]='rm -rf /'` makes `ls` run rm, whole or by element.
 */
const CODE_VARIABLE_NAMES =
  "PS[0-4]|PROMPT_COMMAND|BASH_ALIASES|BASH_CMDS|BASH_ENV|BASH_COMPAT|PARALLEL|PARALLEL_SHELL|PARALLEL_HOME|PARALLEL_CSH|PARALLEL_ENV|PARALLEL_TMUX|(?:dis_)?(?:functions|aliases|galiases|saliases|commands)";
const CODE_VARIABLES = new RegExp(`^(?:${CODE_VARIABLE_NAMES})$`);
/**
 * Variables that name the program or start-up code a later command runs (SHELL, ENV): their value
 * decides (noteAssignment), so one set by a builtin, whose value is not seen, is unreadable.
 */
const PROGRAM_VARIABLES = /^(?:SHELL|ENV)$/;
/** The variables whose value noteAssignment judges when a declaration gives it. */
const JUDGED_VARIABLES = /^(?:PS[0-4]|SHELL|ENV)$/;
/** One of the code variables anywhere in a name that expands (`${x}PS4`). */
const CODE_VARIABLE_IN = new RegExp(CODE_VARIABLE_NAMES);

/**
 * A variable's name, and a subscript without brackets of its own (bash counts nested ones: `a[[]= ]=`)
 * but an array's `[@]` or `[*]`, as `${#a[@]}` leaves it (`a[${#a[@]}]=x` appends).
 */
const NAME_AND_SUBSCRIPT = String.raw`([A-Za-z_][A-Za-z0-9_]*)(?:\[(?:[^\][]|\[[@*]\])*\])?`;

/**
 * For a builtin that sets the variables its arguments name, the options whose value is a name
 * (`read -a NAME`, `printf -v NAME`) and those whose value is something else; its other
 * operands are names too, except printf's.
 */
const NAMING_OPTIONS: Readonly<Record<string, { readonly names: string; readonly values: string }>> = {
  // zsh's `read -A NAME` (and `set -A NAME`, setsCodeVariable) fills an array, as bash's `-a` does.
  read: { names: "aA", values: "dinNptu" },
  printf: { names: "v", values: "" },
  mapfile: { names: "", values: "dnOsuCc" },
  readarray: { names: "", values: "dnOsuCc" },
};
/** The declaration builtins' options take no value. */
const NO_NAMING_OPTIONS = { names: "", values: "" };
/** Builtins that assign variables for the rest of the shell: `export PATH=…`, `declare -x …`. */
const DECLARATIONS = new Set(["export", "declare", "typeset", "readonly", "local"]);

/**
 * The words naming the variables a builtin or `for` sets (`read PS4`, `printf -vPS4`, `for PS4
 * in`, `declare P{S4,}=…`, `getopts ab opt`), or "any" where an option is worked out at run time
 * or makes a nameref (`declare -$x r`, `declare -n r`: a later `r=…` sets the variable it names).
 * Read on the words, so that a mention in quoted text is none (`git commit -m "read PS1 …"`).
 */
function namesSet(command: string, args: readonly Word[], at: number): Word[] | "any" {
  const names: Word[] = [];
  if (command === "for" || command === "select") {
    const next = args[at + 1];
    if (next !== undefined && !next.text.startsWith("(")) names.push(next); // not `for ((…))`
  } else if (command === "set") {
    const option = args.findIndex((a, k) => k > at && /^[-+][A-Za-z]*A$/.test(a.text));
    const name = option < 0 ? undefined : args[option + 1];
    if (name !== undefined) names.push(name);
  } else if (command === "getopts") {
    // `getopts OPTSTRING NAME`: NAME gets an option's letter (`getopts ab PATH` sets PATH=a),
    // after a `--` bash skips as it does for its other builtins (`getopts -- ab PATH`).
    const operands = operandsOf(args, at);
    const name = operands[operands[0]?.text === "--" ? 2 : 1];
    if (name !== undefined) names.push(name);
  } else {
    const spec = own(NAMING_OPTIONS, command) ?? (DECLARATIONS.has(command) ? NO_NAMING_OPTIONS : undefined);
    if (spec === undefined) return names;
    let operands = false;
    for (let i = at + 1; i < args.length; i += 1) {
      const word = args[i] as Word;
      if (operands || !/^[-+]./.test(word.text)) {
        // A word that expands, with no `=` of its own, may be an option (`declare $x r` with
        // x=-n, `mapfile ~ …` with HOME=-C, `printf $x PS4 …` with x=-v).
        const option = !operands && RUN_TIME_WORD.test(word.text) && !word.text.includes("=");
        if (command === "printf") {
          const next = args[i + 1];
          if (option && next !== undefined) names.push(next);
          break; // the format, then its arguments
        }
        // (export's and readonly's options set no other variable: `export $(cat .env)` sets names.)
        if (option && command !== "export" && command !== "readonly") return "any";
        names.push(word);
        continue;
      }
      if (word.text === "--") {
        operands = true;
        continue;
      }
      for (let j = 1; j < word.text.length; j += 1) {
        const letter = word.text.charAt(j);
        // Option letters worked out at run time (`-$x`), or a nameref (not `export -n`, which
        // un-exports): a later `r=…` sets the variable it names.
        if (!/[A-Za-z]/.test(letter) || (letter === "n" && NAMEREF_BUILTINS.has(command))) return "any";
        if (!spec.names.includes(letter) && !spec.values.includes(letter)) continue;
        const value = j + 1 < word.text.length ? word.text.slice(j + 1) : args[++i];
        if (spec.names.includes(letter) && value !== undefined)
          names.push(typeof value === "string" ? { kind: "word", text: value } : value);
        break;
      }
    }
  }
  return names;
}

/**
 * Whether a builtin sets a code-bearing variable (CODE_VARIABLES), or one whose name is worked
 * out at run time and so may be one: `read PS4`, `printf -vPS4`, `for PS4 in`, `declare
 * P{S4,}=…`, `read PS?`, `read ${x}PS4`, `declare -$x r`.
 */
function setsCodeVariable(command: string, args: readonly Word[], at: number): boolean {
  const names = namesSet(command, args, at);
  if (names === "any") return true;
  return names.some((word) => {
    const { name, variable } = nameIn(word);
    // A prompt or SHELL declared with its value (`export PS1='(venv) $PS1'`): noteAssignment judges
    // the value. SHELL set otherwise (`read SHELL`) may name any program (noteAssignment).
    const judged = DECLARATIONS.has(command) && word.text.includes("=") && JUDGED_VARIABLES.test(name);
    if (variable !== undefined)
      return (CODE_VARIABLES.test(variable) || PROGRAM_VARIABLES.test(variable)) && !judged;
    // A pattern or brace list may make any name; an expansion is read only where it is glued to
    // one of those names (`export $(cat .env)` sets names from a file, as `source .env` does).
    return /[{*?[]/.test(name) || (/[$`]/.test(name) && CODE_VARIABLE_IN.test(name.replace(/[$`"']/g, "")));
  });
}

/**
 * A name the environment may hold, or bash reads for what runs (PATH, IFS, HOME, LD_PRELOAD):
 * in capitals, as POSIX names environment variables, and not one of SAFE_VARIABLES. A script's
 * own variables (`read -r line`, `for f in`) are lower case. Its first capital is the one
 * before which no letter stands: `[A-Z0-9_]*[A-Z]` could take any of a run's capitals, and tried
 * each, quadratic on a long one (`read AAA…Ax`, 16 KiB in 0.3 s).
 */
const ENVIRONMENT_NAME = /^[0-9_]*[A-Z][A-Z0-9_]*$/;

/**
 * Whether a builtin or `for` changes, for the commands after it, a variable whose name may be in
 * the environment or is worked out at run time: `read PATH`, `printf -v LD_PRELOAD`, `for PATH
 * in`, `getopts ab PATH` (PATH=a, a directory here), `mapfile -t HOME` (an array's first element
 * is its value), `let PATH=1`, `((PATH=1))`, `[[ PATH=1 -eq 1 ]]`, and an `unset` or un-export
 * (`export -n`, `declare +x`) of one, which may have kept a program safe (`unset
 * NPM_CONFIG_IGNORE_SCRIPTS`), as `export PATH=…` does (noteAssignment, which reads the
 * declarations' `NAME=value`). And an export of a lower-case name alone, below.
 */
function setsEnvironmentVariable(command: string, args: readonly Word[], at: number): boolean {
  if (!ASSIGNING_COMMANDS.has(command)) return false;
  const operands = operandsOf(args, at);
  // Options lead, up to the first other word or a `--`, as bash reads them: `unset PATH -f`
  // unsets PATH (and fails on `-f`), `export PATH -n` un-exports nothing.
  const end = operands.findIndex((a) => a.text === "--" || !/^[-+]./.test(a.text));
  const options = end < 0 ? operands : operands.slice(0, end);
  const rest = operands.slice(options.length + (operands[options.length]?.text === "--" ? 1 : 0));
  const arithmetic = arithmeticOf(command, args, at);
  let names: readonly Word[];
  if (command === "unset") {
    // `unset -f NAME` removes a function.
    if (options.some((a) => /^-[A-Za-z]*f/.test(a.text))) return false;
    names = rest;
  } else if (arithmetic !== undefined) {
    return arithmetic.some((text) => ARITHMETIC_ASSIGNS_ENVIRONMENT.test(text));
  } else if (DECLARATIONS.has(command)) {
    // A word that expands may be a `NAME=value` (`export $x` with x=PATH=/tmp/x, `declare
    // "$n=$v"`); a `NAME=value` as written is noteAssignment's.
    const expands = (a: Word) => a.kind === "glob" || (a.kind === "word" && a.expands === true);
    if (operands.some((a) => expands(a) && !ASSIGNMENT.test(a.text))) return true;
    // A name alone changes no value unless un-exported.
    const unexports = options.some((a) =>
      command === "export" ? /^-[A-Za-z]*n/.test(a.text) : /^\+[A-Za-z]*x/.test(a.text),
    );
    // A name alone exports the value it holds, which a builtin here may have set unseen (`read -r
    // npm_config_script_shell; export npm_config_script_shell`): npm, curl and git read such
    // lower-case names too. One in capitals set here is already opaque, one set before is
    // exported already.
    const exports =
      command === "export"
        ? !options.some((a) => /^-[A-Za-z]*[fnp]/.test(a.text))
        : command !== "readonly" &&
          options.some((a) => /^-[A-Za-z]*x/.test(a.text) && !/^-[A-Za-z]*f/.test(a.text));
    if (exports) {
      const bare = rest.filter((a) => PLAIN_NAME.test(a.text));
      if (bare.some((a) => !ENVIRONMENT_NAME.test(a.text) && !SAFE_VARIABLES.has(a.text))) return true;
    }
    if (!unexports) return false;
    names = rest;
  } else {
    const set = namesSet(command, args, at);
    if (set === "any") return true;
    names = set;
  }
  return names.some((word) => {
    if (word.kind === "redirect") return false;
    const { name, variable } = nameIn(word);
    if (variable === undefined) return /[$`{*?[]/.test(name);
    return (ENVIRONMENT_NAME.test(variable) && !SAFE_VARIABLES.has(variable)) || ZSH_TIED.has(variable);
  });
}

/**
 * zsh's arrays tied to PATH, FPATH, CDPATH and MODULE_PATH (Claude Code runs its Bash tool in zsh
 * on macOS): `read path`, `set -A path /tmp/x` or `read -A path` there set PATH, so the `npm test`
 * after them may run another program.
 */
const ZSH_TIED: ReadonlySet<string> = new Set(["path", "fpath", "cdpath", "module_path"]);

/**
 * Arithmetic evaluates a name's value as arithmetic in turn: where `read -r y` made it `PATH=1`,
 * `(( y ))` or `[[ $y -gt 0 ]]` sets PATH, as `let PATH=1` does. So the names that `read`,
 * `mapfile`, `printf -v`, `getopts`, `for` and `select` set (any one of which may name another:
 * `for y in a`) and the arithmetic are kept, for evaluatesValue to read once the split is done.
 */
function noteArithmetic(command: string, args: readonly Word[], at: number, out: Output): void {
  const arithmetic = arithmeticOf(command, args, at);
  if (arithmetic !== undefined) out.arithmetic.push(...arithmetic);
  if (!VALUE_SETTING_COMMANDS.has(command)) return;
  const names = namesSet(command, args, at);
  if (names === "any") return; // opaque already
  for (const word of names) {
    const { variable } = nameIn(word);
    if (variable !== undefined) out.valueNames.add(variable);
  }
}

/**
 * What a word a builtin sets names: the text before its `=` (`PATH` of `PATH=/x`), and the
 * variable, where that is one written out (`a` of `a[i]`, none of `${x}PS4`).
 */
function nameIn(word: Word): { readonly name: string; readonly variable: string | undefined } {
  const name = word.text.split("=", 1)[0] as string;
  return { name, variable: PLAIN_NAME.exec(name)?.[1] };
}

/** The words after a command, without its redirections' operators. */
function operandsOf(args: readonly Word[], at: number): Word[] {
  return args.slice(at + 1).filter((a) => a.kind !== "redirect");
}

/** The commands that set a variable to a value the split does not judge (noteArithmetic). */
const VALUE_SETTING_COMMANDS: ReadonlySet<string> = new Set([
  ...Object.keys(NAMING_OPTIONS),
  "getopts",
  "for",
  "select",
]);

/** Whether the arithmetic names a variable noteArithmetic saw set (`n`, `$n`, `${n}`, `a[n]`). */
function evaluatesValue(out: Output): boolean {
  return out.arithmetic.some((text) =>
    (text.match(/[A-Za-z_][A-Za-z0-9_]*/g) ?? []).some((name) => out.valueNames.has(name)),
  );
}

/**
 * The words bash evaluates as arithmetic: `let`'s, a `((…))`'s and a `for ((…))`'s, and the
 * operands of a test's `-eq`, `-lt`… (`[[ PATH=1 -eq 1 ]]` assigns), and the subscript of a test's
 * `-v` operand. Undefined for another command.
 */
function arithmeticOf(command: string, args: readonly Word[], at: number): string[] | undefined {
  if (!ARITHMETIC_COMMANDS.has(command)) return undefined;
  const rest = operandsOf(args, at);
  if (command === "let" || command === "((") return rest.map((a) => a.text);
  if ((command === "for" || command === "select") && rest[0]?.text === "((") return rest.map((a) => a.text);
  if (command !== "[[" && command !== "test" && command !== "[") return undefined;
  // `-v`'s operand is a variable's name, and an element's subscript is arithmetic, in `test` and
  // `[` too (`[[ -v a[PATH=1] ]]`, `test -v 'a[PATH=1]'` assign PATH). One that expands is read
  // once expanded, as `(( $n ))` is: `[[ -v $x ]]` assigns PATH where `read -r x` made it `a[PATH=1]`.
  const subscripts = rest
    .filter((a, k) => rest[k - 1]?.text === "-v" && /[[$`]/.test(a.text))
    .map((a) => a.text.slice(a.text.search(/[[$`]/)));
  if (command !== "[[") return subscripts;
  return rest
    .filter(
      (_, k) =>
        ARITHMETIC_TEST.test(rest[k - 1]?.text ?? "") || ARITHMETIC_TEST.test(rest[k + 1]?.text ?? ""),
    )
    .map((a) => a.text)
    .concat(subscripts);
}

/** The commands arithmeticOf reads. */
const ARITHMETIC_COMMANDS: ReadonlySet<string> = new Set(["let", "((", "for", "select", "[[", "test", "["]);
/** The commands setsEnvironmentVariable reads. */
const ASSIGNING_COMMANDS: ReadonlySet<string> = new Set([
  ...VALUE_SETTING_COMMANDS,
  ...DECLARATIONS,
  ...ARITHMETIC_COMMANDS,
  "unset",
  // zsh's `set -A NAME …` (namesSet).
  "set",
]);
/** A test's arithmetic comparisons, whose operands bash evaluates as arithmetic inside `[[ … ]]`. */
const ARITHMETIC_TEST = /^-(?:eq|ne|lt|le|gt|ge)$/;

/** After a name in arithmetic, what assigns it: a subscript (one nesting deep), then `=`, `op=`, `++` or `--`. */
const ASSIGNED_IN_ARITHMETIC = String.raw`\s*(?:\[(?:[^[\]]|\[[^[\]]*\])*\]\s*)?(?:(?:[-+*/%&^|]|<<|>>)?=(?!=)|\+\+|--)`;

/** One of zsh's ZSH_TIED arrays, as a whole name. */
const ZSH_TIED_NAME = String.raw`(?:${[...ZSH_TIED].join("|")})(?![A-Za-z0-9_])`;

/**
 * An assignment in arithmetic (`let`'s, a `((…))`'s, a test's `-eq` operands, a `${…}`'s
 * subscript, offset and length) to a name in capitals (`let PATH=1`, `let 'X = 2'`, `let X++`,
 * `let '--PATH'`, `let 'PATH[i[0]]=1'`) or to one of zsh's ZSH_TIED arrays, which is PATH by
 * another name there (`let path=1`, `((++path))`, `${a[path=1]}` set PATH to 1). A name's first
 * capital is read as ENVIRONMENT_NAME's, in one way only (`let AAA…Ax`), and a subscript holds
 * no `[` but a nested one's (`let ,A[,A[…` looked from each `[` to the end).
 */
const ARITHMETIC_ASSIGNS_ENVIRONMENT = new RegExp(
  String.raw`(?:^|[^A-Za-z0-9_])(?:[0-9_]*[A-Z][A-Z0-9_]*|${ZSH_TIED_NAME})${ASSIGNED_IN_ARITHMETIC}|(?:\+\+|--)\s*(?:[0-9_]*[A-Z]|${ZSH_TIED_NAME})`,
);

/**
 * A word bash expands into what may be an option: an expansion, a `~`, or a pattern. An extended
 * glob reaches here cut at its `(` (the split reads `@(-n)` as `@`, then a separator), so a word
 * ending in `@`, `+` or `!` is one (`declare !(x) r` names a file `-n`).
 */
const RUN_TIME_WORD = /^[$`~]|[*?[@+!]\(|^[*?[]|[@+!]$/;

const PLAIN_NAME = new RegExp(`^${NAME_AND_SUBSCRIPT}$`);

/** The builtins whose `-n` makes a nameref. */
const NAMEREF_BUILTINS: ReadonlySet<string> = new Set(["declare", "typeset", "local"]);

/**
 * Whether the backslash-newline at `i` is inside a token (`$\<newline>(`, `<\<newline><`,
 * `ca\<newline>se`): bash joins the lines before it reads tokens, this scan only after, so what
 * it read may differ (unsure). Between blanks (the usual `docker run \` continuation) it splits
 * nothing. Asked only where bash joins lines: not in single quotes (`sed '/x/a\<newline>y'`),
 * a comment or a quoted heredoc's body. In double quotes, an expanding heredoc's body or
 * arithmetic (`quoted`), where words are not split, only a `$` before it counts (`"$\<newline>(`).
 */
function splitsToken(text: string, i: number, quoted: boolean): boolean {
  const before = text.charAt(i - 1);
  if (i === 0 || (quoted ? before !== "$" : /[ \t\n\\]/.test(before))) return false;
  let next = i;
  while (text.startsWith("\\\n", next)) next += 2;
  return next < text.length && !/[ \t\n]/.test(text.charAt(next));
}

/**
 * A table's own entry for a name the command gives: not Object.prototype's (`hasOwnProperty -n x`,
 * `constructor`, `__proto__` are program names like any other).
 */
function own<T>(table: Readonly<Record<string, T>>, key: string): T | undefined {
  return Object.hasOwn(table, key) ? table[key] : undefined;
}

/** Some program that runs cannot be named: opaque to allow rules, a match for deny rules. */
function markUnreadable(out: Output): void {
  out.opaque = true;
  out.unreadable = true;
}

interface Output {
  readonly subcommands: Subcommand[];
  readonly seen: Set<string>;
  opaque: boolean;
  unreadable: boolean;
  /** Above 0 while the commands a deny-only wrapper runs are expanded. */
  denyOnly: number;
  /** Commands expanded so far from a guess at where a wrapper's command starts. */
  guessed: number;
  /** Above 0 while such a guess is expanded. */
  guessing: number;
  /** An alias is defined in it (`alias a=…`). */
  aliases: boolean;
  /** Characters its brace lists may still expand to (MAX_BRACE_OUTPUT). */
  braceBudget: number;
  /** Commands assigned to a variable a program runs (COMMAND_VARIABLE), still to be read. */
  readonly commandValues: Script[];
  /** CommandSplit `wrappers`, each with its variants. */
  readonly wrappers: string[];
  /** Names a builtin or `for` sets to a value not read here (`read -r n`): noteArithmetic. */
  readonly valueNames: Set<string>;
  /** What bash evaluates as arithmetic (arithmeticOf), for the names in it. */
  readonly arithmetic: string[];
  /** A `set -a` is in it (exportsAll). */
  allexport: boolean;
}

function sanitize(text: string): string {
  return text.replace(RESERVED_CHARS, "\uFFFD");
}

function collapse(text: string): string {
  return text.replace(/\s+/g, " ").trim();
}

/** Splits `text` into `out`; gives what its scan found, unless it was too deep or long to scan. */
function splitInto(text: string, depth: number, suffix: readonly string[], out: Output): Scanned | undefined {
  if (depth > MAX_DEPTH || text.length > MAX_COMMAND_LENGTH) {
    markUnreadable(out);
    crudeSplit(text, suffix, out);
    return undefined;
  }
  // A test is read as one command only in the command itself, not in a script it runs (`eval`
  // runs its text after earlier lines may have defined aliases: `testStep`).
  const scanned = scan(text, false, depth === 0);
  if (scanned.opaque) out.opaque = true;
  out.arithmetic.push(...scanned.arithmetic);
  // An unclosed quote, or a construct whose end bash may find elsewhere (a `#` in a test's
  // pattern): where the words end is a guess, and a command may hide behind it, from allow rules
  // as from deny rules (`[[ x =~ (#) ]]; rm -rf /` runs rm, read here as one test).
  if (scanned.unclosed) markUnreadable(out);
  const entries = tokenize(scanned.text);
  if (entries === undefined) {
    markUnreadable(out);
    crudeSplit(scanned.text, suffix, out);
  } else {
    for (const words of splitOnSeparators(entries)) expand(toCommand(words), depth, suffix, out);
  }
  // Each substitution on its own: bash reads each by itself, so a heredoc or a quote left open
  // in one (`$(cat <<EOF) $(rm -rf /) $(EOF)`) reaches no other.
  for (const substitution of scanned.substitutions) splitInto(substitution, depth + 1, [], out);
  return scanned;
}

/**
 * The text with the `$` of each `$(`, and each backquote, that the scan found opening (or
 * closing) a substitution as `%`, a character no subscript reading takes for code, a name or a
 * quote. The text inside stays, so a quoted `$(` there still counts (`declare "a[$(echo
 * '$(…)')]=1"`).
 */
function withoutOpeners(text: string, openers: readonly number[]): string {
  const chars = text.split(""); // UTF-16 code units, as the scan counts
  for (const at of openers) chars[at] = "%";
  return chars.join("");
}

/** Best effort when the words cannot be read: split on operator characters, no quote removal. */
function crudeSplit(text: string, suffix: readonly string[], out: Output): void {
  for (const piece of text.split(/[;&|()\n`]+/)) {
    const args = piece
      .split(/\s+/)
      .filter((w) => w !== "")
      .map((w): Word => ({ kind: "word", text: stripMark(w) }));
    expand({ args, redirects: [] }, MAX_DEPTH, suffix, out);
  }
}

// ---------------------------------------------------------------------------------------------
// Scanning: the few things shell-quote does not model, found in one quote-aware pass.
// ---------------------------------------------------------------------------------------------

interface Scanned {
  /** The text with unquoted newlines as `;`, comments dropped and substitutions as a placeholder. */
  readonly text: string;
  /**
   * The inner text of each `$(...)`, backtick, `<(...)` and `>(...)`, and `: ` and the text of
   * each `${...}` that is not plain (`parameter`): each is split as a script of its own.
   */
  readonly substitutions: ReadonlySet<string>;
  /** Where in the text each `$(` (its `$`) and backquote that opens or closes a substitution is. */
  readonly openers: readonly number[];
  readonly opaque: boolean;
  /** The subscripts and offsets of its parameters (ScanState `arithmetic`). */
  readonly arithmetic: readonly string[];
  /**
   * The text ended inside a quote, a heredoc body that never closed or arithmetic, or holds a
   * construct whose end this scan did not work out (ScanState `unsure`).
   */
  readonly unclosed: boolean;
}

/**
 * shell-quote treats newlines as spaces, drops everything after a `#` even mid-word
 * (`a#b; rm -rf /` would lose `rm`), reads `$(...)` inside double quotes as plain text and
 * loses the adjacency of `2>`. This pass fixes those before it runs. In pattern mode every
 * `#` is literal, newlines are spaces and substitutions stay as written.
 */
function scan(text: string, patternMode: boolean, tests = false): Scanned {
  const s: ScanState = {
    text,
    i: 0,
    out: "",
    prev: "",
    substitutions: new Set(),
    openers: [],
    opaque: false,
    quote: "",
    heredocs: [],
    unsure: false,
    arith: [],
    arithmetic: [],
    test: false,
    testParens: 0,
    testsOff: !tests || ALIAS_WORD.test(text),
    caseWords: text.includes("case")
      ? [...text.matchAll(CASE_WORDS)].map((m) => m.index + m[0].indexOf("c"))
      : [],
    casesMarked: 0,
    casesOpen: 0,
    inPattern: createPatternWatch(),
    array: false,
    element: -1,
  };
  while (s.i < text.length) step(s, patternMode);
  if (s.quote !== "") s.opaque = true;
  return {
    text: s.out,
    substitutions: s.substitutions,
    openers: s.openers,
    opaque: s.opaque,
    arithmetic: s.arithmetic,
    // Arithmetic never closed (`(( x << 1`): where `<<` was a shift here, bash may read a heredoc.
    unclosed: s.quote !== "" || s.unsure || s.arith.length > 0 || s.test || s.array,
  };
}

interface ScanState {
  readonly text: string;
  i: number;
  out: string;
  /** The last character appended to `out`; reading `out` itself would flatten it on every call. */
  prev: string;
  readonly substitutions: Set<string>;
  readonly openers: number[];
  opaque: boolean;
  quote: "" | "'" | '"' | "$'";
  /** Heredocs opened on the current line, whose bodies start after its newline. */
  heredocs: Heredoc[];
  /**
   * Where a construct ends could not be worked out here (Doubt), or a heredoc body ran to the
   * end of the text: what bash reads may differ.
   */
  unsure: boolean;
  /**
   * What closes each open `((…))`, `$[…]` and subscript inside them (`))` or `]`): inside them
   * `<<` is a shift, not a heredoc.
   */
  arith: string[];
  /**
   * The subscripts and offsets of `${…}` and zsh's `$NAME[…]`, which are evaluated as arithmetic:
   * kept for evaluatesValue, as arithmeticOf's words are (`read -r n < f; echo ${a[n]}`).
   */
  readonly arithmetic: string[];
  /** Inside a `[[ … ]]` that starts a command (`testStep`): its operators are words, not separators. */
  test: boolean;
  /** The test's parentheses still open. */
  testParens: number;
  /**
   * No `[[` from here on is read as a test (`testStep`): a script another command runs, a text
   * with an `alias`, or past arithmetic this scan does not follow. (An alias defined on one line
   * applies from the next: a command that defines one, by `alias` or through BASH_ALIASES, and
   * has a later line is unreadable.) Nor while a `case` may be open (testsOffAt).
   */
  testsOff: boolean;
  /** Where each `case` word of the text starts, quoted or not: the scan marks only some. */
  readonly caseWords: readonly number[];
  /** The unquoted `case` words the scan has read so far (CASE_MARK, LOOSE_CASE_MARK). */
  casesMarked: number;
  /** Those not yet closed by an `esac` the scan read as the reserved word (unquotedEsac). */
  casesOpen: number;
  /** Whether `out` ends inside a test's or an extended glob's pattern (PatternWatch). */
  readonly inPattern: PatternWatch;
  /** Inside a compound array assignment's parentheses (`arrayStep`). */
  array: boolean;
  /** Where the `[` that starts the array element being read is, until its `]`; else -1. */
  element: number;
  /** The parenthesised groups zshGlobQualifier has read, by where each opens. */
  groups?: Map<number, ParenGroup>;
  /** The characters parenGroups has read for this scan. */
  groupsRead?: number;
}

function step(s: ScanState, patternMode: boolean): void {
  const c = s.text.charAt(s.i);
  if (c === "$" && !patternMode && s.quote !== "'" && s.quote !== "$'" && zshSubscriptAssigns(s))
    s.opaque = true;
  if (s.quote === "'" || s.quote === "$'") stepInSingleQuotes(s, c, patternMode);
  else if (c === "\\") stepBackslash(s, patternMode);
  else if (!patternMode && (s.text.startsWith("$(", s.i) || c === "`")) substitute(s);
  else if (!patternMode && s.text.startsWith("${", s.i)) parameter(s);
  else if (s.quote === '"') stepInDoubleQuotes(s, c, patternMode);
  else stepUnquoted(s, c, patternMode);
}

/** zsh's `$NAME[`, which opens a subscript. */
const ZSH_SUBSCRIPT_START = /\$[A-Za-z_][A-Za-z0-9_]*\[/y;
/** After `$NAME[`: its subscript, a nested `[…]` in it passed over whole, and its `]`. */
const ZSH_SUBSCRIPT = new RegExp(
  String.raw`${ZSH_SUBSCRIPT_START.source}((?:[^[\]]|\[[^[\]]{0,256}\]){0,256})\]`,
  "y",
);

/**
 * Whether the `$` at `s.i` starts zsh's `$NAME[…]` and its subscript (kept in `s.arithmetic`)
 * assigns PATH or a name in capitals (ARITHMETIC_ASSIGNS_ENVIRONMENT): zsh evaluates it as
 * arithmetic, unquoted or in double quotes, as bash does a `${NAME[…]}`'s (`echo $a[path=1]`
 * sets PATH to 1 there; Claude Code runs its Bash tool in zsh on macOS). To bash it is `$NAME`
 * and a pattern. One whose `]` is not found within ZSH_SUBSCRIPT's bounds is read from the next
 * 1,024 characters, and assigns wherever the text runs past them.
 */
function zshSubscriptAssigns(s: ScanState): boolean {
  const { text, i } = s;
  ZSH_SUBSCRIPT.lastIndex = i;
  const subscript = ZSH_SUBSCRIPT.exec(text)?.[1];
  if (subscript !== undefined) {
    s.arithmetic.push(subscript);
    return ARITHMETIC_ASSIGNS_ENVIRONMENT.test(subscript);
  }
  ZSH_SUBSCRIPT_START.lastIndex = i;
  if (!ZSH_SUBSCRIPT_START.test(text)) return false;
  return text.length > i + 1024 || ARITHMETIC_ASSIGNS_ENVIRONMENT.test(text.slice(i, i + 1024));
}

function stepInSingleQuotes(s: ScanState, c: string, patternMode: boolean): void {
  if (c === "\\" && s.quote === "$'") {
    emit(s, s.text.slice(s.i, s.i + 2));
  } else {
    if (c === "'") s.quote = "";
    emit(s, patternMode ? c : literal(c), 1);
  }
}

/** A quoted or escaped character that would expand unquoted as its LITERAL mark; any other as itself. */
function literal(c: string): string {
  return LITERAL[c] ?? c;
}

function stepInDoubleQuotes(s: ScanState, c: string, patternMode: boolean): void {
  if (c === '"') s.quote = "";
  // A `$` there still expands (its word is not split); a glob's or brace list's character does not.
  // (A backquote never reaches here outside pattern mode: `substitute` takes it.)
  emit(s, patternMode ? c : c === "$" ? QUOTED_DOLLAR : literal(c), 1);
}

/** A `${NAME:=…}` or `${NAME=…}` (an element's too), which assigns NAME where it is unset. */
const ASSIGNING_PARAMETER = /^\$\{([A-Za-z_][A-Za-z0-9_]*)(?:\[[^\]]*\])?:?=/;

/** A `${…}`'s subscript, and its offset and length (`${x:i:n}`), which bash evaluates as arithmetic. */
const PARAMETER_ARITHMETIC = /^\$\{[#!]?[A-Za-z_][A-Za-z0-9_]*(?:\[([^\]]*)\])?(?::(?![-=+?])([^}]*))?/;

/** A `${…}` with nothing in it that this scan or shell-quote would read differently from bash. */
const PLAIN_PARAMETER = /^\$\{[^'"`\\\s;&|<>()]*\}$/;

/**
 * `${…}`, as bash reads it: one piece of a word, quotes, `#`, `<<` and operators inside it its
 * own (`${x:-'}' #}`, `"${x#'"'}"`). They must reach neither the comment, heredoc and quote
 * handling here nor shell-quote, which ends a `${` at the first `}`. A plain one (`${HOME}`,
 * `${x%.*}`) stays as written; any other becomes `${...}`, and its text is split as a script
 * of its own (deny-only noise at worst, as a substitution's is).
 */
function parameter(s: ScanState): void {
  const end = closingBrace(s.text, s.i + 2, 0, s);
  if (end >= s.text.length) {
    // Never closed here (or nested past MAX_NESTING): where bash ends it is not known. Unsure
    // whether or not shell-quote then refuses the text (a quoted `{` is a mark it takes).
    s.unsure = true;
    emit(s, "$");
    return;
  }
  const unit = s.text.slice(s.i, end + 1);
  // `${NAME:=value}` and `${NAME=value}` assign NAME for what follows, as `NAME=value` does.
  const assigned = ASSIGNING_PARAMETER.exec(unit)?.[1];
  if (assigned !== undefined && !SAFE_VARIABLES.has(assigned)) s.opaque = true;
  // A subscript and a substring's offset and length are arithmetic: `${a[PATH=1]}` assigns PATH,
  // as zsh's `${a[path=1]}` does.
  if (unit.includes("[") || unit.includes(":")) {
    const [, subscript, offset] = PARAMETER_ARITHMETIC.exec(unit) ?? [];
    for (const text of [subscript, offset]) if (text !== undefined) s.arithmetic.push(text);
    if ([subscript, offset].some((text) => text !== undefined && ARITHMETIC_ASSIGNS_ENVIRONMENT.test(text)))
      s.opaque = true;
  }
  // Unquoted, a value it may take with a blank in it, or IFS's, splits the word as an unquoted
  // `$IFS` does (`rm -rf${X:- }/`, `${IFS:+ }`, `${X:-$IFS}` run `rm -rf /`): where is not read here.
  if (s.quote !== '"' && /^\$\{[!#]?(?:\w+|[@*])(?:\[[^\]]*\])?:?[-+=]/.test(unit) && /\s|IFS/.test(unit))
    s.unsure = true;
  if (PLAIN_PARAMETER.test(unit)) {
    // In double quotes what it expands is one word, as a `$NAME`'s is (Word `quoted`); not `"${@}"`,
    // nor an indirect `"${!r}"`, which is as many words as `"$@"` when r is `@` or `a[@]`.
    const one = s.quote === '"' && !/[@*]/.test(unit) && !unit.startsWith("${!");
    emit(s, one ? QUOTED_BRACE + unit : unit, unit.length);
    return;
  }
  const inner = unit.slice(2, -1);
  s.opaque = true;
  emit(s, s.quote === '"' ? "\\${...}" : '"\\${...}"', unit.length);
  // bash 5.3's command substitution run in this shell, `${ cmd; }` (a blank or newline after the
  // `{`) or `${| cmd; }`, in double quotes too: its body is a script, read as `$(…)`'s is. To bash
  // 5.2 and earlier it is a bad substitution, and runs nothing.
  if (/^[\s|]/.test(inner)) {
    addBraceCommand(inner, s.substitutions, s);
    return;
  }
  // Inside double quotes its quotes are plain characters to bash (`"${x:-'$(rm -rf /)'}"` runs
  // it): only its `$(…)` and backquotes run, found as in an expanding heredoc body. Where it ends
  // depends on the shell's mode if a `}` follows a `'` in it: bash's own mode reads the `'` as a
  // quote, POSIX mode (`sh`, `set -o posix`) as a plain character (`"${x:-'}"; rm -rf / #'}"`).
  if (s.quote === '"') {
    const quote = inner.indexOf("'");
    if (quote >= 0 && inner.includes("}", quote)) s.unsure = true;
    bodySubstitutions(inner, s.substitutions, s);
    return;
  }
  // Unquoted, a `#` after a blank or a `<<` in it is a comment or a heredoc only to the script
  // reading below.
  if (SCRIPT_DOUBT.test(inner)) s.unsure = true;
  // Its text, read as a script of its own, yields the `$(…)`, backquotes and `<(…)` it runs,
  // with its quotes read as quotes (`${x:-'$(' $(rm -rf /) ')'}`).
  // After `:`, so that its first word is no command (`${arr[$((i+1))]}`).
  s.substitutions.add(`: ${inner}`);
}

function stepBackslash(s: ScanState, patternMode: boolean): void {
  // A backslash-newline is a line continuation in bash, outside single quotes.
  if (s.text.charAt(s.i + 1) === "\n") {
    if (splitsToken(s.text, s.i, s.quote === '"')) s.unsure = s.opaque = true;
    s.i += 2;
  } else if (patternMode && s.quote === '"' && s.text.charAt(s.i + 1) === "`") {
    // In double quotes bash takes `\`` for a backquote, which shell-quote would keep escaped:
    // the word then holds one (`bash -c "x \`rm -rf /\`"` runs `rm`). Outside pattern mode the
    // next branch writes it marked literal, as it does `\$`.
    emit(s, "`", 2);
  } else if (!patternMode && LITERAL[s.text.charAt(s.i + 1)] !== undefined) {
    // `\$x` or `\*`: a plain character in the word. Unquoted, and before `$` or a backquote in
    // double quotes, bash drops the backslash; before `[ { * ? ~` in double quotes it keeps it, and
    // so does shell-quote, a mark too (`bash -c "grep '\[ERROR\]' f"`).
    const next = s.text.charAt(s.i + 1);
    const kept = s.quote === '"' && next !== "$" && next !== "`";
    emit(s, `${kept ? "\\" : ""}${literal(next)}`, 2);
    s.prev = "\\";
  } else {
    emit(s, s.text.slice(s.i, s.i + 2));
    // An escaped blank or operator is part of the word: a `#` after it starts no comment.
    s.prev = "\\";
  }
}

function stepUnquoted(s: ScanState, c: string, patternMode: boolean): void {
  if (s.text.startsWith("$$", s.i)) {
    emit(s, "$$"); // the shell's PID: a `'` or `[` after it opens nothing of its own
  } else if (c === "$" && s.text.charAt(s.i + 1) === "'") {
    if (s.arith.length > 0) s.unsure = true; // a quote in arithmetic, as below
    s.quote = "$'";
    emit(s, "$'");
  } else if (c === "$" && s.text.charAt(s.i + 1) === '"' && !patternMode) {
    // `$"…"`: bash looks the string up in the locale's message catalog (TEXTDOMAIN and
    // TEXTDOMAINDIR, which the command may set) and, in bash 5.2, expands the translation again,
    // so a catalog's `$(…)` runs wherever the string stands. What runs is not known here: no
    // allow rule approves it (opaque), as none approves the `$(…)` the catalog may hold.
    s.unsure = s.opaque = true;
    emit(s, "$");
  } else if ((c === "@" || c === "!" || c === "+") && s.text.charAt(s.i + 1) === "(" && !patternMode) {
    emit(s, EXTGLOB_MARK + c, 1);
  } else if (s.array && arrayStep(s, c)) {
    // done: a blank or the `)` of a compound array assignment
  } else if (!patternMode && testStep(s, c)) {
    // done: a `[[`, its `]]`, or an operator of the test between them
  } else if (c === "\n") {
    // A newline ends a command like `;` (an empty command after `&&\n` is dropped later). A blank
    // before it: a `;` at a line's end, or a blank line, must not make a `;;` (splitOnSeparators).
    emit(s, patternMode ? " " : " ;", 1);
    if (s.heredocs.length > 0) heredocBodies(s);
  } else if (c === "#") {
    hash(s, patternMode);
  } else if (!patternMode && (s.text.startsWith("<(", s.i) || s.text.startsWith(">(", s.i))) {
    // In an extended glob's pattern, bash counts its parentheses as the pattern's own.
    if (s.inPattern(s.out, s.out.length)) s.unsure = true;
    substitute(s);
  } else if (!patternMode && c === "(" && s.arith.length === 0 && arithmeticCommand(s)) {
    // done: `((…))` as one command
  } else if (
    (c === "$" && s.text.charAt(s.i + 1) === "[") ||
    (c === "(" && s.text.charAt(s.i + 1) === "(" && arithmeticAt(s.text, s.i, s))
  ) {
    // Arithmetic, where `<<` is a shift: tracked across lines, as bash reads it. Where it ends is
    // found by the first `))`, not as bash finds it: no test is read after it.
    s.arith.push(c === "(" ? "))" : "]");
    s.testsOff = true;
    emit(s, s.text.slice(s.i, s.i + 2));
  } else if (s.arith.length > 0 && c === "[") {
    s.arith.push("]"); // a subscript: its `]` closes no `$[`
    emit(s, c);
  } else if (closesArithmetic(s.arith, s.text, s.i)) {
    emit(s, s.arith.pop() as string);
  } else if (s.text.startsWith("<<", s.i)) {
    heredocOrHereString(s, patternMode);
  } else if (c >= "0" && c <= "9" && atWordStart(s)) {
    digits(s);
  } else if (c === "{" && atWordStart(s) && namedDescriptor(s)) {
    // done: `{fd}>file`, a redirection that puts the descriptor's number in `fd`
  } else if (c === "c" && !patternMode && unquotedWord(s, "case")) {
    // Counted open either way (testsOffAt): one that opens nothing only keeps tests off longer.
    s.casesMarked += 1;
    s.casesOpen += 1;
    emit(s, `${atCommandStart(s.out) ? CASE_MARK : LOOSE_CASE_MARK}case`, 4);
  } else if (c === "e" && !patternMode && s.casesOpen > 0 && unquotedEsac(s)) {
    s.casesOpen -= 1;
    emit(s, "esac", 4);
  } else {
    if (c === "(" && s.prev === "=" && !patternMode && arrayAssignment(s)) {
      // Not in arithmetic, nor in a test's or an extended glob's pattern (`[[ $v =~ MODE=(dev|prod) ]]`
      // where no test is read).
      if (s.arith.length === 0 && !s.inPattern(s.out, s.out.length)) {
        s.array = true;
        emit(s, `${ARRAY_MARK}\\(`, 1);
        return;
      }
      // Where it is not read as one, text glued after its `)` (`x=(a)z rm -rf /` runs `rm`) is
      // looked for as the parentheses are written.
      if (gluedAfter(s.text, s.i)) s.unsure = true;
    }
    // Arithmetic this scan follows as written (arithmeticBody could not read it) is expanded by
    // bash as double-quoted text: a `'` there quotes nothing (`(( x = '$(rm -rf /)' + $'1' ))`
    // runs `rm`; inside `$((…))` bash even decodes a `$'\x24(…)'` first). Never valid arithmetic.
    if (c === "'" && s.arith.length > 0) s.unsure = true;
    if (c === "(" && !patternMode && s.arith.length === 0 && zshGlobQualifier(s)) s.unsure = true;
    if (c === "'" || c === '"') s.quote = c;
    emit(s, c);
  }
}

/**
 * Whether the `(` at `s.i` may be zsh's glob qualifiers that run code: glued to a word (also to a
 * `$(…)`'s or a backquote's end, `$(echo /)(e:'…':)`) and ending it (empty quotes may follow), with
 * an `e` (`*(e:'rm -rf /':)` runs its string as code for each file) or a `+` (`*(+cmd)` runs cmd)
 * anywhere in it, and no `|` outside quotes, which makes it a group of a pattern instead, unless
 * it starts `#q` (extendedglob's explicit qualifiers). Its `)` is found as zsh finds it, past
 * quotes, escapes and nested parentheses (`*(e:'rm -rf /;(x)':)`). Claude Code runs its Bash tool
 * in zsh on macOS; bash reads such a word as a syntax error, or with extglob as a pattern
 * (`!(node_modules)`, read so here too: a false denial).
 */
function zshGlobQualifier(s: ScanState): boolean {
  const { text, i } = s;
  const before = text.charAt(i - 1);
  // Not `$(`, `<(`, `((`, zsh's `=(…)` (scriptFile), nor a function's `f()(…)` body; an array's
  // `x=(…)` is read before (arrayStep), and `ls a=(e:'…':)` runs.
  if (i === 0 || /[\s;&|<>($]/.test(before) || text.startsWith("()", i - 2)) return false;
  if (before === "=" && (i === 1 || /[\s;&|<>()]/.test(text.charAt(i - 2)))) return false;
  s.groups ??= new Map();
  if (!s.groups.has(i)) s.groupsRead = (s.groupsRead ?? 0) + parenGroups(text, i, s.groups);
  // Read on from many a `(` the pass before saw quoted (a `'` in a comment): fail safe.
  if ((s.groupsRead ?? 0) > 4 * text.length + 64) return true;
  const group = s.groups.get(i);
  if (group === undefined || group.close < 0) return group === undefined;
  QUALIFIER_END.lastIndex = group.close + 1;
  return group.runs && (!group.bar || group.explicit) && QUALIFIER_END.test(text);
}

/** What may follow glob qualifiers: empty quotes (any number), then the word's end. */
const QUALIFIER_END = /(?:\$?(?:''|""))*(?:\\\n)*(?:[\s;&|<>)]|$)/y;

/** A `(…)` zshGlobQualifier read: where its `)` is (-1: none), and what it holds. */
interface ParenGroup {
  readonly close: number;
  /** An `e` or a `+` in it, quoted or not. */
  readonly runs: boolean;
  /** A `|` in it outside quotes and nested parentheses. */
  readonly bar: boolean;
  /** It starts `#q`. */
  readonly explicit: boolean;
}

/**
 * Reads the group opening at `open` and every group nested in it into `groups`, in one pass, and
 * says how many characters it read: each `(` it sees is read once, so a text of many is read in
 * linear time. One it saw quoted where the scan does not (a `'` in a comment) is read again when
 * the scan reaches it; zshGlobQualifier bounds what that may cost.
 */
function parenGroups(text: string, open: number, groups: Map<number, ParenGroup>): number {
  const stack: { open: number; runs: boolean; bar: boolean }[] = [];
  let quote = "";
  let j = open;
  for (; j < text.length; j += 1) {
    const c = text.charAt(j);
    const top = stack[stack.length - 1];
    if (top !== undefined && (c === "e" || c === "+")) top.runs = true;
    if (quote === "'") {
      if (c === "'") quote = "";
    } else if (c === "\\") {
      j += 1;
    } else if (quote === '"' || quote === "$'") {
      if (c === (quote === '"' ? '"' : "'")) quote = "";
    } else if (c === "'" || c === '"') {
      quote = text.charAt(j - 1) === "$" && c === "'" ? "$'" : c;
    } else if (c === "(") {
      stack.push({ open: j, runs: false, bar: false });
    } else if (c === "|" && top !== undefined) {
      top.bar = true;
    } else if (c === ")" && top !== undefined) {
      stack.pop();
      const explicit = text.startsWith("#q", top.open + 1);
      groups.set(top.open, { close: j, runs: top.runs, bar: top.bar, explicit });
      const outer = stack[stack.length - 1];
      if (outer !== undefined && top.runs) outer.runs = true;
      if (outer === undefined) return j - open;
    }
  }
  for (const group of stack) groups.set(group.open, { close: -1, runs: false, bar: false, explicit: false });
  return j - open;
}

/** `NAME=`, `NAME+=` or `NAME[…]=` where a word starts, at the end. */
const ARRAY_ASSIGNMENT = new RegExp(String.raw`(?:^|[ \t\n;&|(])${NAME_AND_SUBSCRIPT}\+?=$`);

/**
 * Whether the `(` at `s.i` opens a compound array assignment. Asked of the input text before it,
 * which is flat: the output is built by appending, and reading its end would copy all of it at
 * every `(` (`x=(` repeated took quadratic time).
 */
function arrayAssignment(s: ScanState): boolean {
  // Only bash's blanks end a word (not a no-break space or CR), and a name cut by the look-back
  // window may be longer, or no name (`a.xxx…x=()` defines a function): not an array.
  const from = Math.max(0, s.i - 128);
  const match = ARRAY_ASSIGNMENT.exec(s.text.slice(from, s.i));
  return match !== null && (from === 0 || match.index > 0 || /^[ \t\n;&|(]/.test(match[0]));
}

/** Whether a word character follows the `)` closing the `(` at `i` (or none is found nearby). */
function gluedAfter(text: string, i: number): boolean {
  const end = parensAsWritten(text, i + 1);
  if (end === undefined) return true;
  const next = text.charAt(end + 1);
  return next !== "" && !/[\s;&|()<>]/.test(next);
}

/**
 * One character inside a compound array assignment (`files=(src/*.ts "a b")`, `declare -A
 * m=([web]=3000)`), whose elements are words, data like any command's arguments: a glob in one
 * is not a command, nor is its first word. Its blanks, newlines and closing `)` are passed on
 * escaped, so that shell-quote reads the whole assignment as one word; its substitutions are
 * split as everywhere (`x=($(ls))` runs `ls`), and a comment in it is one. bash takes no
 * operator there but a `<(…)` (any other is a syntax error, not followed here). An element
 * `[SUBSCRIPT]=value` of an indexed array evaluates its subscript as arithmetic, which runs a
 * `$(…)` even from quotes (`x=(['$(rm -rf /)']=1)`): a subscript with both a quote or backslash
 * and a `$` or backquote is unsure (its value is not: `[web]="$PORT"`), and so is text glued
 * after the `)`. Returns whether it consumed the character.
 */
function arrayStep(s: ScanState, c: string): boolean {
  if (c === " " || c === "\t" || c === "\n" || c === ")") {
    // bash reads an element's leading `[…]`, and a `$[…]`, as one piece, blanks, `#` and `)` and
    // all (`x=([ #]=1)`): not followed here.
    if (s.element >= 0 || s.arith.length > 0) s.unsure = true;
    s.element = -1;
    emit(s, c === ")" ? "\\)" : "\\ ", 1);
    if (c === ")") {
      s.array = false;
      // Text glued after it (`x=(a)z rm -rf /` runs `rm`) is read by bash in a way not followed here.
      if (!/^$|[\s;&|()<>]/.test(s.text.charAt(s.i))) s.unsure = true;
    }
    if (c === "\n" && s.heredocs.length > 0) heredocBodies(s);
    return true;
  }
  if (c === "[" && atWordStart(s)) s.element = s.i;
  else if (s.element >= 0 && (c === "[" || (c === "$" && s.text.charAt(s.i + 1) === "["))) {
    s.unsure = true; // bash counts nested brackets in a subscript (`[a[b] #]=`); not followed here
  } else if (c === "]" && s.element >= 0) {
    // The subscript, quotes and all, when an assignment follows (`[k]=v`, not a pattern `[ab]*`).
    if (/^\+?=/.test(s.text.slice(s.i + 1, s.i + 3))) {
      const subscript = s.text.slice(s.element, s.i + 1);
      if (/['"\\]/.test(subscript) && /[$`]/.test(subscript)) s.unsure = true;
    }
    s.element = -1;
  } else if (/[;&|<>(]/.test(c) && !PROCESS_SUBSTITUTION.test(s.text.slice(s.i, s.i + 2))) s.unsure = true;
  return false;
}

/**
 * `[[ … ]]` at the start of a command, read as bash reads it: one command, whose `&&`, `||`,
 * `(`, `)`, `|`, `<` and `>` are operators of the test (`[[ -n $a && $b == x ]]`,
 * `[[ $v =~ ^a(b|c)$ ]]`), which shell-quote would take for separators and redirections, leaving
 * `$b` or `$` in command position. They are passed on quoted, one word each. Only an unquoted
 * `[[` where a command starts (atCommandStart) opens a test: `"[[" x || rm -rf /` and
 * `echo >& [[ x || rm -rf /` run `rm`. And only where nothing may have changed how bash reads
 * the words before it (`testsOff`): in the command itself, not a script it runs (`eval` reads
 * its text after an alias defined on the same line applies, and one may end in a backslash that
 * makes the next `;` plain text), not
 * with a `case` (whose patterns follow `in (`, `|` and `;;`) or an `alias` anywhere in it,
 * not inside an extended glob's parentheses (inPattern), and not after arithmetic whose end
 * this scan only guessed. Elsewhere shell-quote reads the test as before. It closes at the first unquoted `]]` that is a word of its
 * own, as bash's does; an extended regex's parenthesis may hold one in bash (`=~ (a ]] b)`), so
 * this closes early there, and what follows is read as commands. Anything bash would refuse
 * inside a test (`;`, `&`, a redirection other than `<` or `>`) ends it, and so does a newline,
 * which bash takes after `&&` or `||` but which is also where bash starts again after a syntax
 * error (`a=(;[[ &&⏎rm -rf / ]]` runs `rm`): the command is unreadable. Returns whether it
 * consumed anything.
 */
function testStep(s: ScanState, c: string): boolean {
  if (!s.test) {
    if (c !== "[" || !s.text.startsWith("[[", s.i) || !atWordStart(s) || testsOffAt(s)) return false;
    if (s.arith.length > 0 || !/[ \t\n]/.test(s.text.charAt(s.i + 2))) return false;
    if (!atCommandStart(s.out) || s.inPattern(s.out, s.out.length)) return false;
    s.test = true;
    s.testParens = 0;
    emit(s, "[[");
    return true;
  }
  if (c === "]" && s.text.startsWith("]]", s.i) && atWordStart(s)) {
    // bash joins a backslash-newline's lines before it reads words: `]]\⏎ ||` closes the test.
    let next = s.i + 2;
    while (s.text.startsWith("\\\n", next)) next += 2;
    const after = s.text.charAt(next);
    if (after === "" || BREAK.test(after)) {
      // Inside a regex's parentheses bash does not close the test at `]]` (`=~ (x ]]| #) ]]`).
      if (s.testParens > 0) s.unsure = true;
      s.test = false;
      emit(s, "]]");
      return true;
    }
  }
  const two = s.text.slice(s.i, s.i + 2);
  if (two === "<(" || two === ">(") return false; // a process substitution, read as one
  if (two === "&&" || two === "||") {
    emit(s, ` '${two}' `, 2);
    return true;
  }
  if ("()|<>".includes(c) && !/^(?:<[<>&]|>[>&|]|\|&)$/.test(two)) {
    if (c === "(") s.testParens += 1;
    else if (c === ")") s.testParens -= 1;
    emit(s, ` '${c}' `, 1);
    return true;
  }
  if (c === ";" || c === "&" || c === "|" || c === "<" || c === ">" || c === "\n") {
    s.test = false; // a syntax error in bash; the rest is read as commands, and unsure
    s.unsure = true;
  }
  return false;
}

/**
 * Whether the scanned text so far ends where a command starts: at the start, or after a
 * separator (a newline is `;` in it), and then only reserved words that a command may follow,
 * themselves unquoted (`if ! `). Not after a redirection's `>&` or `>|`.
 */
function atCommandStart(out: string): boolean {
  if (out.length <= COMMAND_START_TAIL) return TEST_START_AT_BEGINNING.test(out);
  // One character more than the tail, which the operator's look-behinds read (`\;`, `>&`).
  return TEST_START_IN_TAIL.test(out.slice(-COMMAND_START_TAIL - 1));
}

const COMMAND_START_TAIL = 256;
const ALIAS_WORD = /(?:^|[^A-Za-z0-9_])alias(?![A-Za-z0-9_])/;
/** Every word `case` in a text, quoted or not. */
const CASE_WORDS = /(?:^|[^A-Za-z0-9_])case(?![A-Za-z0-9_])/g;

/**
 * Whether no test is read here: tests are off (`testsOff`), or a `case` may be open. A `case`'s
 * pattern lists follow `in`, `(`, `|` and `;;`, where a `[[` looks like a test's start
 * (`case b in a) :;; [[ | b) rm -rf / ]];; esac` runs `rm`), so tests are read only where every
 * `case` word before is one the scan read unquoted and each has met its `esac`. Any other `case`
 * word (quoted, escaped, in a comment or a `$(…)`) turns them off from there, as a `case`
 * anywhere once did.
 */
function testsOffAt(s: ScanState): boolean {
  if (s.testsOff || s.casesOpen > 0) return true;
  let before = 0;
  for (const at of s.caseWords) if (at < s.i) before += 1;
  return before !== s.casesMarked;
}
/**
 * An operator that ends a command, not escaped (`find … \; [[` is an argument): `;`, `&` (not
 * `>&`), `|` (not `>|`), `(` after a blank or another operator (not an extended glob's `@(` or an
 * array's `=(`), and the `()` of a function definition after its name (`f() { case …`; not `@()`
 * or `x=()`).
 */
const SEPARATOR_BEFORE = String.raw`(?<!\\)(?:;|(?<![<>])&|(?<!>)\|)|(?<=^|[ \t;&|(])\(|(?<=(?:^|[ \t;&|(])[A-Za-z_][\w.:-]*[ \t]*\([ \t]*)\)`;
const RESERVED_AFTER = String.raw`[ \t]*(?:(?:!|\{|if|then|else|elif|do|while|until)[ \t]+)*$`;
const TEST_START_IN_TAIL = new RegExp(`[^](?:${SEPARATOR_BEFORE})${RESERVED_AFTER}`);
const TEST_START_AT_BEGINNING = new RegExp(`(?:^|${SEPARATOR_BEFORE})${RESERVED_AFTER}`);

/** Appends `chunk` to the output and moves past the `consumed` characters of input it stands for. */
function emit(s: ScanState, chunk: string, consumed = chunk.length): void {
  s.out += chunk;
  if (chunk !== "") s.prev = chunk.charAt(chunk.length - 1);
  s.i += consumed;
}

function atWordStart(s: ScanState): boolean {
  return s.prev === "" || BREAK.test(s.prev);
}

/**
 * Whether the text at the scan is `word` (`case`, `esac`) as a word of its own, unquoted, outside
 * arithmetic, tests, arrays and patterns.
 */
function unquotedWord(s: ScanState, word: string): boolean {
  if (!s.text.startsWith(word, s.i) || !atWordStart(s)) return false;
  const after = s.text.charAt(s.i + word.length);
  if (after !== "" && !BREAK.test(after)) return false;
  return s.arith.length === 0 && !s.test && !s.array && !s.inPattern(s.out, s.out.length);
}

/**
 * An `esac` that closes a `case` the scan marked: unquoted, a word of its own where a command
 * starts (after `;;`, `;`, a newline), and not after `(` or `|`, where it is a pattern (`(esac)`,
 * `a|esac)`). Where bash would not close the case there, it refuses the text (`true && esac`).
 * Right after `in` it is not counted (`case x in esac`): the case stays open here, and tests off.
 */
function unquotedEsac(s: ScanState): boolean {
  if (!unquotedWord(s, "esac")) return false;
  let k = s.out.length - 1;
  while (k >= 0 && (s.out[k] === " " || s.out[k] === "\t")) k -= 1;
  if (k >= 0 && (s.out[k] === "(" || s.out[k] === "|")) return false;
  return atCommandStart(s.out);
}

/** Whether the text at `i` closes the innermost open arithmetic (`))` or `]`). */
function closesArithmetic(arith: readonly string[], text: string, i: number): boolean {
  const closer = arith.at(-1);
  return closer !== undefined && text.startsWith(closer, i);
}

/**
 * Whether the text before `end` may be inside a pattern bash reads as one piece: a `[[` not yet
 * closed by `]]` (`[[ x =~ (a| #) ]]`), or an extended glob whose parenthesis is still open
 * (`@(;#)`, `@(a|@(b)|#)`), or just closed (`@(a)#` is one word). A `#` or `<<` there is neither a
 * comment nor a heredoc, and this scan does not tell them apart.
 *
 * Read on the scan's output, whose quotes are shell quotes: a quoted or escaped `)` or `]]`
 * closes nothing (`@(')'|#)`), an unquoted `[[` opens a test (not `sed 's/[[:space:]]//'`), and a
 * `]]` closes it only as a word of its own followed by a blank or an operator (not `x]]`, nor a
 * `]]` the text ends with). (closingParen asks a cruder question of a `$(…)`'s raw text.)
 *
 * Asked at every `#` and `<<`, with the text read so far: each call reads only the characters
 * added since the last, so that a command of `#` or `<` repeated costs linear time, not
 * quadratic. The text must only grow between calls.
 */
type PatternWatch = (text: string, end: number) => boolean;

function createPatternWatch(): PatternWatch {
  let read = 0;
  /** The character before `read` was an unquoted, unescaped one. */
  let plainBefore = false;
  let quote: Quote = "";
  /** The character at `read - 1` was a backslash that escapes the one at `read`. */
  let escaped = false;
  /** Unquoted parentheses open (`(` less `)`) in the text before `read`. */
  let depth = 0;
  /** `depth` just before the `(` of each extended glob still open, innermost last. */
  const globs: number[] = [];
  let test = false;
  /** `depth` at the open test's `[[`: a `]]` inside a regex's or glob's parentheses closes nothing. */
  let testDepth = 0;
  /** Whether the characters one and two before `read` were an unquoted, unescaped blank or operator. */
  let breakBefore = false;
  let breakTwoBefore = false;
  /** Where an unquoted `]]` after a blank ends, until the next character says whether it closes. */
  let closing = -1;
  /** Where the last extended glob closed: its word goes on after it (`@(a)#` is one word). */
  let globEnd = Number.NaN;
  /** The character before was an unquoted `$`: a `'` after it opens `$'…'`. */
  let dollar = false;
  /**
   * After a test's `=~`: 1 until its regex word starts, 2 inside it. bash reads that word whole,
   * a `]]` glued to it included (`=~ x|]]`, `=~ ]](x)`), up to a blank outside its parentheses.
   */
  let regex: 0 | 1 | 2 = 0;
  return (text, end) => {
    for (; read < end; read += 1) {
      const c = text.charAt(read);
      const afterDollar = dollar;
      dollar = false;
      const before = read > 0 ? text.charAt(read - 1) : "";
      const opener = c === "(" && before !== "" && GLOB_OPENERS.includes(before);
      const unquoted = quote === "" && !escaped;
      if (c === "[" && before === "[" && unquoted && plainBefore && !test) {
        test = true;
        testDepth = depth;
      }
      plainBefore = unquoted && c !== "\\";
      const twoBefore = breakTwoBefore;
      breakTwoBefore = breakBefore;
      breakBefore = unquoted && /[ \t\n;&|()]/.test(c);
      if (closing === read - 1 && unquoted && /[ \t\n;&|()<>]/.test(c)) test = false;
      closing = -1;
      if (regex !== 0) {
        const blank = unquoted && /[ \t\n]/.test(c);
        if (regex === 1 && !blank) regex = 2;
        else if (regex === 2 && blank && depth === testDepth) regex = 0;
      }
      if (escaped) escaped = false;
      else if (c === "\\" && quote !== "'") escaped = true;
      else if (quote !== "") {
        if ((c === "'" && quote !== '"') || (c === '"' && quote === '"')) quote = "";
      } else if (c === "'") quote = afterDollar ? "$'" : "'";
      else if (c === '"') quote = '"';
      else if (c === "$") dollar = true;
      else if (c === "~" && before === "=" && test) regex = 1;
      else if (c === "(") {
        if (opener) globs.push(depth);
        depth += 1;
      } else if (c === ")") {
        depth -= 1;
        if (globs.at(-1) === depth) {
          globs.pop();
          globEnd = read;
        }
      } else if (
        c === "]" &&
        before === "]" &&
        (read < 2 || twoBefore) &&
        depth === testDepth &&
        regex === 0
      ) {
        closing = read; // `a\ ]]` is a word of the test, and `=~ ( ]] )` part of its regex
      }
    }
    return test || globs.length > 0 || globEnd === end - 1;
  };
}

/** The characters before `(` that open an extended glob: `@(`, `!(`, `+(`, `*(`, `?(`. */
const GLOB_OPENERS = "@!+*?";
/** A `[[` or an extended glob's opener. */
const PATTERN_OPEN = /\[\[|[@!+*?]\(/;

/** bash starts a comment only at the start of a word; elsewhere `#` is a plain character. */
function hash(s: ScanState, patternMode: boolean): void {
  if (patternMode || !atWordStart(s)) {
    emit(s, "\\#", 1);
  } else {
    if (s.inPattern(s.out, s.out.length)) s.unsure = true;
    const end = s.text.indexOf("\n", s.i);
    s.i = end < 0 ? s.text.length : end;
  }
}

/**
 * `<<<` is a here-string (data on one line). `<<WORD` and `<<-WORD` start a heredoc: its body
 * is the lines after this one, up to a line that is WORD, and it is data, not commands. It is
 * skipped when this line ends (`heredocBodies`), so that an apostrophe in it (`Don't`) opens no
 * quote that would hide the commands after it.
 */
function heredocOrHereString(s: ScanState, patternMode: boolean): void {
  const here = s.text.startsWith("<<<", s.i);
  if (!patternMode && s.inPattern(s.out, s.out.length)) s.unsure = true;
  if (!here && !patternMode && s.arith.length === 0) {
    s.opaque = true;
    const heredoc = heredocAt(s.text, s.i);
    // A delimiter not read here: where its body ends is a guess.
    if (heredoc === UNREAD_DELIMITER) s.unsure = true;
    else if (heredoc !== undefined) s.heredocs.push(heredoc);
  }
  emit(s, here ? "<<<" : "<<");
}

interface Heredoc {
  readonly delimiter: string;
  /** `<<-`: leading tabs are stripped from the body's lines, the closing one included. */
  readonly tabs: boolean;
  /** The delimiter was not quoted: the body expands `$(...)` and backticks. */
  readonly expands: boolean;
}

/**
 * The heredoc whose `<<` is at `i` (not a `<<<`, not a shift: callers track arithmetic), or
 * undefined when none starts there: no delimiter follows, or its quote is not closed. The
 * delimiter is read as bash reads the word, up to a blank or an operator character (a `\r` is
 * part of it, as in CRLF text): quotes removed (`'X Y'`, `"E\"F"`, `$"EOF"`, `E\ F`), and any
 * quoting at all means the body is not expanded. A delimiter with an expansion in it, or a
 * `$'…'` with an escape, is UNREAD_DELIMITER: bash's word is not worked out here.
 */
function heredocAt(text: string, i: number): Heredoc | typeof UNREAD_DELIMITER | undefined {
  const tabs = text.charAt(i + 2) === "-";
  let j = i + (tabs ? 3 : 2);
  while (text.charAt(j) === " " || text.charAt(j) === "\t") j += 1;
  let delimiter = "";
  let quoted = false;
  while (j < text.length) {
    const c = text.charAt(j);
    const next = text.charAt(j + 1);
    if (c === "`" || (c === "$" && (next === "(" || next === "{" || next === "["))) return UNREAD_DELIMITER;
    if (c === "'" || (c === "$" && next === "'")) {
      const open = c === "$" ? j + 2 : j + 1;
      const close = text.indexOf("'", open);
      if (close < 0) return undefined;
      const quotedText = text.slice(open, close);
      if (c === "$" && quotedText.includes("\\")) return UNREAD_DELIMITER;
      delimiter += quotedText;
      quoted = true;
      j = close + 1;
    } else if (c === '"' || (c === "$" && next === '"')) {
      // In double quotes a backslash escapes `"`, `\`, `$` and a backquote.
      let k = c === "$" ? j + 2 : j + 1;
      for (; k < text.length && text.charAt(k) !== '"'; k += 1) {
        if (text.charAt(k) === "\\" && '"\\$`'.includes(text.charAt(k + 1))) k += 1;
        delimiter += text.charAt(k);
      }
      if (k >= text.length) return undefined;
      quoted = true;
      j = k + 1;
    } else if (c === "\\") {
      delimiter += next;
      quoted = true;
      j += 2;
    } else if (DELIMITER_END.has(c)) {
      break;
    } else {
      delimiter += c;
      j += 1;
    }
  }
  if (delimiter === "" && !quoted) return undefined;
  return { delimiter, tabs, expands: !quoted };
}

const UNREAD_DELIMITER = Symbol("unread delimiter");

const DELIMITER_END: ReadonlySet<string> = new Set([" ", "\t", "\n", ";", "&", "|", "<", ">", "(", ")"]);

/**
 * Where the bodies of `heredocs` end, the first starting at `i` (just after the newline of the
 * line that opened them), each up to a line that is its delimiter; the text's end if one never
 * closes, as in bash. `onBody` gets each body.
 */
function afterBodies(
  text: string,
  i: number,
  heredocs: readonly Heredoc[],
  onBody?: (body: string, heredoc: Heredoc, closed: boolean) => void,
  /** Inside `$(…)`, bash also ends a body at a line that is the delimiter and then `)`. */
  inSubstitution = false,
  doubt?: Doubt,
): number {
  let at = i;
  for (const heredoc of heredocs) {
    const start = at;
    let bodyEnd = text.length;
    while (at < text.length) {
      let end = text.indexOf("\n", at);
      let line = "";
      // In an expanding body a backslash-newline joins two lines before the delimiter is looked
      // for (`EO\` then `F` closes `<<EOF`).
      let from = at;
      while (heredoc.expands && end >= 0 && oddBackslashesBefore(text, end, from)) {
        line += text.slice(from, end - 1);
        from = end + 1;
        end = text.indexOf("\n", from);
      }
      line += text.slice(from, end < 0 ? text.length : end);
      const next = end < 0 ? text.length : end + 1;
      const read = heredoc.tabs ? line.replace(/^\t+/, "") : line;
      if (read === heredoc.delimiter) {
        bodyEnd = at;
        at = next;
        break;
      }
      // The `)` closes the substitution: the caller (closingParen, which wants no bodies) reads
      // on from it.
      // bash 5.2 also ends it at a line that starts with the delimiter, blanks and `)`, and reads
      // the rest of that line as commands.
      if (inSubstitution && read.startsWith(heredoc.delimiter)) {
        const after = read.slice(heredoc.delimiter.length).replace(/^[ \t]*/, "");
        if (after.startsWith(")")) return (end < 0 ? text.length : end) - after.length;
        // bash reads the rest of such a line (`EOFx); rm -rf /`) as commands, and its `)` may
        // close the substitution anywhere in it: where is not worked out here.
        if (after.includes(")") && doubt !== undefined) doubt.unsure = true;
      }
      at = next;
    }
    onBody?.(text.slice(start, bodyEnd), heredoc, bodyEnd < text.length);
  }
  return at;
}

/** Whether the text just before `end` (and from `from` on) is an odd run of backslashes. */
function oddBackslashesBefore(text: string, end: number, from: number): boolean {
  let k = end - 1;
  while (k >= from && text.charAt(k) === "\\") k -= 1;
  return (end - 1 - k) % 2 === 1;
}

/**
 * Skips the bodies of the heredocs opened on the line just ended, in order. A body whose
 * delimiter was not quoted still expands `$(...)` and backticks: those run, and are recorded as
 * substitutions. A body with no closing line runs to the end of the text, as in bash.
 */
function heredocBodies(s: ScanState): void {
  s.i = afterBodies(s.text, s.i, s.heredocs, (body, heredoc, closed) => {
    if (heredoc.expands) bodySubstitutions(body, s.substitutions, s);
    // A body with no closing line took the rest of the text: what bash reads there may differ
    // from what was skipped (agents' heredocs always close).
    if (!closed) s.unsure = true;
  });
  s.heredocs = [];
}

/** A `#` after a blank (a comment) or a `<<` (a heredoc) in a script read out of its context. */
const SCRIPT_DOUBT = /(?:^|[\s;&|()<>])#|<</;

/**
 * bash 5.3's `${ cmd; }` or `${| cmd; }`, `inner` its text after the `{`: its body is a script,
 * added to `into` to be read as `$(…)`'s is, where a comment or heredoc in it is unsure.
 */
function addBraceCommand(inner: string, into: Set<string>, doubt: Doubt): void {
  if (SCRIPT_DOUBT.test(inner)) doubt.unsure = true;
  into.add(inner.startsWith("|") ? inner.slice(1) : inner);
}

/**
 * The `$(...)` and backtick commands in an expanding heredoc body, where quotes are plain text,
 * and bash 5.3's `${ cmd; }` and `${| cmd; }`, which run there too (and in a quoted `${…}`'s word:
 * `"${x:-${ rm -rf /; }}"`).
 */
function bodySubstitutions(body: string, into: Set<string>, doubt: Doubt & { opaque: boolean }): void {
  for (let i = 0; i < body.length; i += 1) {
    const c = body.charAt(i);
    if (c === "$" && body.charAt(i + 1) === "{" && /[\s|]/.test(body.charAt(i + 2))) {
      const end = closingBrace(body, i + 2, 0, doubt);
      const inner = body.slice(i + 2, end);
      if (end >= body.length) doubt.unsure = true;
      addBraceCommand(inner, into, doubt);
      i = end;
    } else if (c === "\\") {
      if (body.charAt(i + 1) === "\n" && splitsToken(body, i, true)) doubt.unsure = doubt.opaque = true;
      i += 1;
    } else if (c === "`") {
      const end = closingUnescaped(body, i + 1, "`");
      into.add(unescapeBackquoted(body.slice(i + 1, end)));
      i = end;
    } else if (body.startsWith("$(", i)) {
      const end = closingParen(body, i + 2, 0, doubt);
      const inner = body.slice(i + 2, end);
      // `$((…))` is arithmetic, as in substitute.
      into.add(inner.startsWith("(") ? `(${inner})` : inner);
      i = end;
    }
  }
}

/** `2>` and `2>&1` name a file descriptor only when the digits touch the operator. */
function digits(s: ScanState): void {
  let end = s.i;
  while (end < s.text.length && s.text.charCodeAt(end) >= 48 && s.text.charCodeAt(end) <= 57) end += 1;
  const run = s.text.slice(s.i, end);
  const next = s.text.charAt(end);
  emit(s, next === ">" || next === "<" ? FD_MARK + run : run, run.length);
}

/**
 * `{NAME}` touching a redirection (`exec {lock}>/tmp/build.lock`): bash opens a descriptor and
 * stores its number in NAME, so it is the redirection's, as `2` is in `2>`; apart from it, or as
 * anything but a name, it is a word.
 */
function namedDescriptor(s: ScanState): boolean {
  NAMED_DESCRIPTOR.lastIndex = s.i;
  const name = NAMED_DESCRIPTOR.exec(s.text)?.[0];
  if (name === undefined) return false;
  emit(s, FD_MARK + name, name.length);
  return true;
}

const NAMED_DESCRIPTOR = /\{[A-Za-z_][A-Za-z0-9_]*\}(?=[<>])/y;

/**
 * `$(...)`, backticks and `<(...)` run commands we cannot see in place: record their text
 * (split later as extra subcommands) and leave a literal placeholder in the line.
 */
function substitute(s: ScanState): void {
  s.opaque = true;
  const isBacktick = s.text.charAt(s.i) === "`";
  const open = isBacktick ? "`" : s.text.slice(s.i, s.i + 2);
  const start = s.i + open.length;
  const end = isBacktick ? closingUnescaped(s.text, start, "`") : closingParen(s.text, start, 0, s);
  if (open === "$(") s.openers.push(s.i);
  else if (isBacktick) s.openers.push(s.i, ...(end < s.text.length ? [end] : []));
  // In backquotes bash reads `\\`, `\`` and `\$` as `\`, `` ` `` and `$` before the command, and
  // inside double quotes `\"` as `"` too.
  const inner = isBacktick
    ? unescapeBackquoted(s.text.slice(start, end), s.quote === '"')
    : s.text.slice(start, end);
  // `$((…))` is arithmetic: kept as `((…))`, so that its `<<` stays a shift when it is split.
  s.substitutions.add(open === "$(" && inner.startsWith("(") ? `(${inner})` : inner);
  const placeholder = isBacktick ? "`...`" : `${open}...)`;
  const quoted = open === "$(" ? `${QUOTED_DOLLAR}(...)` : placeholder;
  emit(s, s.quote === '"' ? quoted : `"${placeholder}"`, Math.min(end + 1, s.text.length) - s.i);
}

/** `text` as one single-quoted shell word. */
function singleQuoted(text: string): string {
  return `'${text.replaceAll("'", "'\\''")}'`;
}

/**
 * A backquoted command as bash reads it: `\\`, `\`` and `\$` stand for `\`, `` ` `` and `$`; in
 * double quotes `\"` for `"` as well (`"\`echo \"'\"; rm -rf /; \"'\"\`"` runs `rm`).
 */
function unescapeBackquoted(text: string, inDoubleQuotes = false): string {
  return text.replace(inDoubleQuotes ? /\\([\\`$"])/g : /\\([\\`$])/g, "$1");
}

/** The index of the first `close` (a backquote or `"`) from `from` on that no backslash escapes; the end if none. */
function closingUnescaped(text: string, from: number, close: string): number {
  for (let i = from; i < text.length; i += 1) {
    if (text.charAt(i) === "\\") i += 1;
    else if (text.charAt(i) === close) return i;
  }
  return text.length;
}

/** Substitutions nested deeper than this inside one are not followed: it is taken to run to the end. */
const MAX_NESTING = 64;
/** Reserved words after which a command starts, so that a `case` or `esac` there is one too. */
const COMMAND_KEYWORDS: ReadonlySet<string> = new Set([
  "then",
  "do",
  "else",
  "elif",
  "if",
  "while",
  "until",
  "!",
  "{",
]);
/** Words after which this scan cannot tell whether a `case` is a reserved word (bash 5.2 in `$(…)`). */
const UNSURE_AFTER: ReadonlySet<string> = new Set(["function", "coproc", "time"]);

/** Whether the word after `word` (undefined: not a whole word) is in command position. */
function nextPosition(command: boolean | "unsure", word: string | undefined): boolean | "unsure" {
  if (command === "unsure") return "unsure"; // until the next operator
  if (!command || word === undefined) return false;
  if (UNSURE_AFTER.has(word)) return "unsure";
  return COMMAND_KEYWORDS.has(word);
}
/** A word run: up to a blank, an operator, a quote, a backslash or an expansion. */
const WORD_RUN = /[^ \t\n;&|()<>'"`\\$]+/y;
/** What ends a word in bash: a blank (a space or a tab, not any Unicode space), a newline or an operator. */
const BREAK = /[ \t\n;&|()<>]/;

/**
 * The index of the `)` closing a `$(` (or `<(`, `>(`) just before `from`, read as bash reads the
 * command inside: quotes (`$'…'` too), backticks, `${…}`, nested substitutions, comments, heredoc
 * bodies (`$(cat <<'EOF'` … `Don't` … `EOF` `)`, Claude Code's own way to pass a commit message),
 * arithmetic, and the patterns of a `case`, whose `)` closes nothing. The text's end if none.
 * Where this and bash disagree, text bash runs could be read as data by the caller: every
 * construct that can hold a `)` bash does not count is modelled here, or, where this cannot
 * tell (a `case` after `f()`, a `((` it cannot decide), `doubt` is set and the command is
 * unreadable.
 */
function closingParen(text: string, from: number, nesting: number, doubt: Doubt): number {
  if (nesting > MAX_NESTING) return text.length;
  let depth = 1;
  let quote: Quote = "";
  let heredocs: Heredoc[] = [];
  const arith: string[] = [];
  /** The paren depth of each open `case`: a `)` at that depth ends one of its patterns. */
  const cases: number[] = [];
  /**
   * Whether the next word is in command position, where `case` and `esac` are reserved words;
   * "unsure" after `f()`, `function`, `coproc` or `time`, where this does not work it out.
   */
  let command: boolean | "unsure" = true;
  let lastWord = "";
  /** Whether a word may start here: after a blank or an operator, unescaped. */
  let boundary = true;
  // The `(` just before `from` may open `$((…))`: arithmetic from the start. Where it does not,
  // bash ends the `$( (…) )` it reads instead by counting parentheses as written, a `#` no
  // comment (`x=$(( 1 + 2 )#); rm -rf /` runs `rm`), then reads that text as commands, where
  // the same `#` may be one: a comment in it leaves this unsure.
  const dollarParenParen = text.charAt(from) === "(" && text.charAt(from - 1) === "(";
  if (dollarParenParen && arithmeticAt(text, from - 1, doubt)) arith.push("))");
  const commentsUnsure = dollarParenParen && arith.length === 0;
  // There a heredoc or a `case` pattern may hold a `)` that bash counts (`$((a) <<F⏎)⏎rm -rf /⏎F`
  // runs `rm`): where this reading ends elsewhere, it is unsure.
  const asWritten = commentsUnsure ? parensAsWritten(text, from) : -1;
  /**
   * Where this `$(…)`'s first `[[` or extended glob opener ends, looked for at its first comment:
   * a comment after one may be inside its pattern. On this raw text a quote may be inside a
   * `$(…)` inside double quotes, so none is followed; only what the `$(…)` itself holds counts, as
   * bash reads it by itself.
   */
  let patternEnd: number | undefined;
  const ended = (end: number): number => {
    if (asWritten !== -1 && end !== asWritten) doubt.unsure = true;
    return end;
  };
  for (let i = from; i < text.length; i += 1) {
    const c = text.charAt(i);
    const atBoundary: boolean = boundary;
    boundary = false;
    if (c === "\\" && text.charAt(i + 1) === "\n" && quote !== "'" && quote !== "$'") {
      i += 1; // a line continuation is no character: `true \<newline># )` is a comment
      boundary = atBoundary;
      continue;
    }
    const skipped = skipQuotedOrExpansion(text, i, quote, nesting, doubt);
    if (skipped !== undefined) {
      [i, quote] = skipped;
    } else if (c === "#" && atBoundary) {
      // A comment, to the end of its line (`$(true # it's)` is still open).
      if (patternEnd === undefined) {
        const at = text.slice(from).search(PATTERN_OPEN);
        patternEnd = at < 0 ? text.length : from + at + 1;
      }
      if (commentsUnsure || patternEnd < i) doubt.unsure = true;
      const end = text.indexOf("\n", i);
      i = (end < 0 ? text.length : end) - 1;
      boundary = true;
    } else if (c === "\n" && heredocs.length > 0) {
      i = afterBodies(text, i + 1, heredocs, undefined, true, doubt) - 1;
      heredocs = [];
      command = true;
      boundary = true;
    } else if (text.startsWith("<<<", i)) {
      i += 2;
      boundary = true;
    } else if (text.startsWith("<<", i)) {
      if (arith.length === 0) {
        const heredoc = heredocAt(text, i);
        if (heredoc !== undefined && heredoc !== UNREAD_DELIMITER) heredocs.push(heredoc);
      }
      i += 1;
      boundary = true;
    } else if (text.startsWith("$[", i)) {
      arith.push("]");
      i += 1;
    } else if (arith.length > 0 && c === "[") {
      arith.push("["); // a subscript, closed by `]`
    } else if ((arith.at(-1) === "]" || arith.at(-1) === "[") && c === "]") {
      arith.pop();
    } else if (arith.at(-1) === "]" && (c === "(" || c === ")")) {
      // Inside `$[…]` parentheses are arithmetic's own: they close nothing.
    } else if (arith.at(-1) === "[" && (c === "(" || c === ")")) {
      // Inside a subscript arithmetic reads them as its own, but bash counts them to end a `((`
      // (`$( (( x$b[(] ) )) …)` stays open): where that ends is not worked out here.
      doubt.unsure = true;
    } else if (c === "(") {
      if (text.charAt(i + 1) === "(" && arithmeticAt(text, i, doubt)) arith.push("))");
      depth += 1;
      command = true;
      boundary = true;
    } else if (c === ")") {
      if (arith.at(-1) === "))" && text.charAt(i + 1) === ")") arith.pop();
      else if (cases.at(-1) === depth) {
        command = true; // a pattern ends: its commands follow
        boundary = true;
        continue;
      }
      depth -= 1;
      if (depth === 0) return ended(i);
      command = "unsure"; // `f() case …` defines a function whose body is the case
      boundary = true;
    } else if (BREAK.test(c)) {
      if (c === ";" || c === "&" || c === "|" || c === "\n") command = true;
      boundary = true;
    } else if (atBoundary) {
      WORD_RUN.lastIndex = i;
      const end = WORD_RUN.test(text) ? WORD_RUN.lastIndex : i + 1; // `$x`: no run
      const word = text.slice(i, end);
      const whole = end >= text.length || BREAK.test(text.charAt(end));
      const reserved = whole && (word === "case" || word === "esac");
      if (reserved && command === "unsure") doubt.unsure = true;
      if (reserved && word === "case" && command === true) cases.push(depth);
      else if (
        reserved &&
        word === "esac" &&
        cases.at(-1) === depth &&
        (command === true || lastWord === "in")
      )
        cases.pop();
      command = nextPosition(command, whole ? word : undefined);
      lastWord = whole ? word : "";
      i = end - 1;
    }
  }
  return ended(text.length);
}

/**
 * The index of the `)` closing the `(` just before `from`, counting parentheses as written, with
 * only quotes and escapes skipped: where bash ends a `$((` or `<((` that is not arithmetic. The
 * text's end if none; undefined if none within ARITH_LOOKAHEAD characters (so that `$((a)`
 * repeated, nested, costs linear time).
 */
function parensAsWritten(text: string, from: number): number | undefined {
  let depth = 1;
  const end = Math.min(text.length, from + ARITH_LOOKAHEAD);
  for (let j = from; j < end; j += 1) {
    const c = text.charAt(j);
    if (c === "\\") j += 1;
    else if (c === "$" && text.charAt(j + 1) === "$")
      j += 1; // `$$`, the PID
    else if (c === "$" && text.charAt(j + 1) === "'")
      j = closingUnescaped(text, j + 2, "'"); // `$'\''`
    else if (c === "'") {
      const close = text.indexOf("'", j + 1);
      j = close < 0 ? text.length : close;
    } else if (c === '"') j = closingUnescaped(text, j + 1, '"');
    else if (c === "(") depth += 1;
    else if (c === ")" && --depth === 0) return j;
  }
  return end < text.length ? undefined : text.length;
}

/** The index of the `}` closing a `${` just before `from` (quotes and substitutions inside skipped). */
function closingBrace(text: string, from: number, nesting: number, doubt: Doubt): number {
  if (nesting > MAX_NESTING) return text.length;
  let quote: Quote = "";
  for (let i = from; i < text.length; i += 1) {
    const skipped = skipQuotedOrExpansion(text, i, quote, nesting, doubt);
    if (skipped !== undefined) [i, quote] = skipped;
    else if (text.charAt(i) === "}") return i;
  }
  return text.length;
}

type Quote = "" | "'" | '"' | "$'";

/** Set when where a construct ends could not be worked out: the command is then unreadable. */
interface Doubt {
  unsure: boolean;
}

/**
 * `((…))` read as bash reads it, when `arithmeticBody` can: one command `(( BODY ))`, whose
 * operators (`$n > 3`, `a && b`, `x << 2`) are arithmetic, not separators, redirections or a
 * `$n` in command position. What runs in it is its `$(…)`, found as in a heredoc body, and the
 * array subscripts it evaluates (CODE_IN_DATA). Where the body is not followed here, the `((` is
 * tracked as before (`arithmeticAt`, `s.arith`). Returns whether it consumed anything.
 */
function arithmeticCommand(s: ScanState): boolean {
  // Glued to a word (`@((…))`, an extended glob) it is no command.
  if (s.text.charAt(s.i + 1) !== "(" || !atWordStart(s)) return false;
  const body = arithmeticBody(s.text, s.i);
  if (body === undefined) return false;
  const found = new Set<string>();
  bodySubstitutions(body, found, s);
  for (const substitution of found) s.substitutions.add(substitution);
  if (found.size > 0) s.opaque = true;
  // A blank after `))`: bash ends a word there, so a reserved word glued to it is one of its own
  // (`for ((;;))do …`, `if ((x))then …`).
  emit(s, `'((' ${singleQuoted(body)} '))' `, body.length + 4);
  s.prev = ")"; // `))` is an operator: a word starts after it, and a `#` there is a comment
  return true;
}

/**
 * The text between the `((` at `i` and its `))` where bash reads arithmetic there (the `)` that
 * balances the second `(` is followed by another: arithmeticAt). Parentheses are counted as
 * written, a `$(…)`'s too, with only quotes and escapes skipped: that is how bash decides that a
 * `$((` is arithmetic and not `$( (…) )` (`$(($(case a in a)esac);rm -rf /))` runs `rm`). A `((`
 * command differs only where a `$(…)` in it holds a `)` that closes nothing (bash reads that
 * `$(…)` whole): a `case` pattern's. Undefined where this does not follow the body, for the
 * caller's older reading: nested subshells (`((a) ; (b))`), a `case`, a backquote, a `${…}` with
 * anything but plain characters, a `$'…'`, a double-quoted `$(`, `${` or backquote, a `#` (but
 * `$#`) or a newline, or no end within ARITH_LOOKAHEAD characters.
 */
function arithmeticBody(text: string, i: number): string | undefined {
  let depth = 0;
  const end = Math.min(text.length, i + 2 + ARITH_LOOKAHEAD);
  for (let j = i + 2; j < end; j += 1) {
    const c = text.charAt(j);
    if (c === "\\") {
      j += 1;
    } else if (c === "'") {
      const close = text.indexOf("'", j + 1);
      if (close < 0 || close >= end) return undefined;
      j = close;
    } else if (c === '"') {
      const close = closingUnescaped(text, j + 1, '"');
      if (close >= end || /`|\$[({]/.test(text.slice(j + 1, close))) return undefined;
      j = close;
    } else if (c === "$" && text.charAt(j + 1) === "#") {
      j += 1; // `$#`, the number of arguments: no comment
    } else if (c === "#" && /\w/.test(text.charAt(j - 1))) {
      // inside a word, as `16#ff` (base 16): no comment, whichever way bash reads the `((`
    } else if (c === "$" && text.charAt(j + 1) === "{") {
      PLAIN_BRACE.lastIndex = j;
      if (!PLAIN_BRACE.test(text)) return undefined;
      j = PLAIN_BRACE.lastIndex - 1;
    } else if (c === "`" || c === "#" || c === "\n" || (c === "$" && text.charAt(j + 1) === "'")) {
      return undefined;
    } else if (c === "(") {
      depth += 1;
    } else if (c === ")") {
      if (depth > 0) depth -= 1;
      else if (text.charAt(j + 1) !== ")" || CASE_WORD.test(text.slice(i + 2, j))) return undefined;
      else return text.slice(i + 2, j);
    }
  }
  return undefined;
}

/** The word `case`, whose patterns' `)` a count of parentheses as written takes for closing ones. */
const CASE_WORD = new RegExp(CASE_WORDS.source);

/** A `${…}` of plain characters, as PLAIN_PARAMETER, or plain `$NAME`s (`${a[$i]}`), at a given index. */
const PLAIN_BRACE = /\$\{(?:[^'"`\\\s;&|<>(){}$]|\$\w)*\}/y;

/** How far ahead arithmeticAt looks for the `)` that decides what a `((` is. */
const ARITH_LOOKAHEAD = 1024;

/**
 * Whether the `((` at `i` is arithmetic. bash decides by the `)` that closes its second `(`:
 * arithmetic when another `)` follows at once, nested subshells otherwise (`((echo) ; (echo))`).
 * Quoted text is skipped with a light skip of its own, and a nested `$(…)` counts as the
 * parentheses it is: following nested expansions with skipQuotedOrExpansion, whose closingParen
 * decides its own `((` here, made the lookahead recurse without bound on `$((` repeated. Past a
 * newline, a comment or ARITH_LOOKAHEAD characters this does not decide: arithmetic, with the
 * doubt set. Once a doubt is set the command is unreadable whatever this answers, so it answers
 * at once. Unclosed: arithmetic (never closed, so the command is unreadable).
 */
function arithmeticAt(text: string, i: number, doubt: Doubt): boolean {
  if (doubt.unsure) return true;
  let depth = 0;
  const end = Math.min(text.length, i + 2 + ARITH_LOOKAHEAD);
  for (let j = i + 2; j < end; j += 1) {
    const c = text.charAt(j);
    if (c === "\\") {
      j += 1;
    } else if (c === "'") {
      const close = text.indexOf("'", j + 1);
      j = close < 0 ? end : close;
    } else if (c === '"') {
      j = closingUnescaped(text, j + 1, '"');
    } else if (c === "\n" || (c === "#" && BREAK.test(text.charAt(j - 1)))) {
      doubt.unsure = true;
      return true;
    } else if (c === "(") {
      depth += 1;
    } else if (c === ")") {
      if (depth === 0) {
        // A `case` pattern's `)` in a `$(…)` in it: bash's `((` reads that `$(…)` as commands,
        // and so closes elsewhere (`((rm -rf / ; $(case a in a) esac)) )` runs `rm`).
        if (CASE_WORD.test(text.slice(i + 2, j))) doubt.unsure = true;
        return text.charAt(j + 1) === ")";
      }
      depth -= 1;
    }
  }
  if (end < text.length) doubt.unsure = true;
  return true;
}

/**
 * What a `)` or `}` at `i` cannot close, for closingParen and closingBrace: a character inside
 * quotes, a quote's start or end, an escape, `$$`, or a nested `$(…)`, `${…}` or backquote.
 * Returns the index of the last character it takes and the quote after it; undefined when the
 * character at `i` is none of these.
 */
function skipQuotedOrExpansion(
  text: string,
  i: number,
  quote: Quote,
  nesting: number,
  doubt: Doubt,
): [number, Quote] | undefined {
  const c = text.charAt(i);
  if (quote === "'" || quote === "$'") {
    if (c === "\\" && quote === "$'") return [i + 1, quote];
    return [i, c === "'" ? "" : quote];
  }
  if (c === "\\") return [i + 1, quote];
  if (c === "`") return [closingUnescaped(text, i + 1, "`"), quote];
  if (text.startsWith("$$", i)) return [i + 1, quote];
  if (text.startsWith("$(", i)) return [closingParen(text, i + 2, nesting + 1, doubt), quote];
  if (text.startsWith("${", i)) return [closingBrace(text, i + 2, nesting + 1, doubt), quote];
  if (quote === '"') return [i, c === '"' ? "" : quote];
  if (c === "'" || c === '"') return [i, c];
  if (c === "$" && text.charAt(i + 1) === "'") return [i + 1, "$'"];
  return undefined;
}

// ---------------------------------------------------------------------------------------------
// Words: shell-quote's tokens, grouped into simple commands.
// ---------------------------------------------------------------------------------------------

type Word =
  | {
      readonly kind: "word";
      readonly text: string;
      /** Every `$` in it was inside double quotes: what it expands is not split into words. */
      readonly quoted?: boolean;
      /** It holds a compound array assignment the scan read (`x=(a b)`). */
      readonly array?: boolean;
      /** A `$` or backquote in it expands before the command runs (not in single quotes or escaped). */
      readonly expands?: boolean;
      /** Made whole at run time (xargs' input line where its replace string stands): any word, an option too. */
      readonly runTime?: boolean;
      /** It keeps a `$` or backquote as text (from single quotes or an escape): `'$(x)'`, `\$x`. */
      readonly keeps?: boolean;
    }
  | {
      readonly kind: "glob";
      readonly text: string;
      readonly array?: boolean;
      readonly expands?: boolean;
      readonly runTime?: boolean;
      readonly keeps?: boolean;
    }
  | { readonly kind: "redirect"; readonly text: string };

type Entry = Word | { readonly kind: "separator"; readonly text: string };

interface Command {
  readonly args: readonly Word[];
  /** Each redirection with its descriptor and target, as one word (`2>&1`, `>out.txt`). */
  readonly redirects: readonly string[];
}

/**
 * Variables stay literal (`$HOME`): expanding them would guess at an environment we do not have.
 * An object, not a function: given a function, shell-quote splits every word it returns again with
 * a new RegExp, looking for objects the function could have returned (about a fifth of a split).
 */
const literalVariables: Record<string, string> = new Proxy(
  {},
  {
    // `${IFS…}` with an operator keeps its braces, so that where its value ends is seen (ifsWords).
    get: (_target, name) =>
      /^IFS[^A-Za-z0-9_]/.test(String(name)) ? `\${${String(name)}}` : `$${String(name)}`,
  },
);

/**
 * What expands in a word: a backquote the scan did not mark literal, or a `$` (also one in double
 * quotes) that starts an expansion; `'^foo$'` inside double quotes, or `5$`, is a plain `$`. A `~`
 * at a word's start or after `=` or `:` (`eval echo ~`, `eval x=~` run HOME's value), and an
 * unquoted glob or brace list (`eval : *`, `eval echo {';',}x`: file names and the list's words
 * are read as code). A brace list needs a `,` or `..` after its `{` (`HEAD@{0}` is a word as it
 * is); one counts even when quoted, as shell-quote has taken the quotes off by now.
 */
const EXPANDS = /[$\uE003](?=[A-Za-z_{(0-9@*#?!$\uE00B-])|`|(?:^|[=:])~|[*?[]/;

function expands(token: string): boolean {
  return EXPANDS.test(token) || braceList(token);
}

/** A `{` with a `,` or `..` after it: bash's brace expansion needs one (`HEAD@{0}`, `{}` are words). */
function braceList(token: string): boolean {
  const brace = token.indexOf("{");
  return brace >= 0 && (token.includes(",", brace) || token.includes("..", brace));
}

/**
 * A word shell-quote cut at an extended glob's `(` (`{@(x),\;rm}` reaches here as `{@`, `(`, …):
 * with extglob on, bash reads the whole as one glob (file names, a brace list's words), so a
 * script made of it is not its text, and a program so named cannot be named (`@(r)m -rf /`).
 * Where extglob is off the `(` is a syntax error.
 */
function extglobCut(word: string, next: ParseEntry | undefined): boolean {
  return /\uE00F[@!+]$/.test(word) && typeof next === "object" && "op" in next && next.op === "(";
}

function tokenize(line: string): Entry[] | undefined {
  let parsed: ParseEntry[];
  try {
    parsed = parse(line, literalVariables);
  } catch {
    return undefined; // shell-quote throws on `${}` and unclosed `${`
  }
  const entries: Entry[] = [];
  for (const [i, token] of parsed.entries()) {
    if (typeof token === "string")
      entries.push(
        extglobCut(token, parsed[i + 1])
          ? { kind: "glob", text: token, expands: true }
          : expands(token)
            ? { kind: "word", text: token, expands: true }
            : { kind: "word", text: token },
      );
    else if ("comment" in token) continue;
    else if (token.op === "glob")
      entries.push({
        kind: "glob",
        text: token.pattern,
        ...(expands(token.pattern) && { expands: true }),
      });
    else if (SEPARATORS.has(token.op)) entries.push({ kind: "separator", text: token.op });
    else entries.push({ kind: "redirect", text: token.op });
  }
  return entries;
}

/**
 * The entries as commands, split at separators, without the patterns of a `case`'s arms: a `|`
 * list of single words ending in `)` (`*.test.ts|*.spec.ts)`, after an optional `(`) where bash
 * reads one: after `case WORD in` (on its line or the next), and, while a `case` is open, after
 * `;;`, `;&` or `;;&`. Those words run nothing; read as commands they would be lone globs
 * (unreadable) or names a deny rule matches (`rm)`). Only a `case` the scan marked opens one
 * (CASE_MARK: not `"case"` or `echo case`), and only the arms' own `;;`: the scan writes a newline
 * as ` ;`, so that blank lines make none. Anything else where a list may start (`esac`, a word
 * list, a redirection) is read as commands, as elsewhere.
 */
function splitOnSeparators(entries: readonly Entry[]): Word[][] {
  const commands: Word[][] = [];
  let words: Word[] = [];
  let patterns: Word[][] | undefined; // a pattern list that may be starting
  let open = 0; // the `case`s opened and not yet closed by `esac`
  let armStart = false; // right after a pattern list's `)`, where an arm's commands start
  for (const entry of entries) {
    if (entry.kind !== "separator") {
      words.push(entry);
      continue;
    }
    const op = entry.text;
    if (patterns !== undefined) {
      if (words.length === 0 && (op === ";" || (op === "(" && patterns.length === 0))) continue;
      const word = words.length === 1 ? (words[0] as Word) : undefined;
      if (
        word !== undefined &&
        word.kind !== "redirect" &&
        word.text !== "esac" &&
        (op === "|" || op === ")")
      ) {
        patterns.push(words);
        words = [];
        if (op === ")") {
          patterns = undefined; // the list is whole: its words are patterns
          armStart = true;
        }
        continue;
      }
      commands.push(...patterns); // not a pattern list after all
      patterns = undefined;
    }
    words = afterCompoundEnds(words, commands);
    // `case x in esac` is whole: a `|` after it is a pipe.
    const start = caseArms(words, armStart);
    const arms = words[start]?.text === "esac" ? -1 : start;
    armStart = false;
    if (arms > 0) open += 1;
    else if (words[0]?.text === "esac" && open > 0) open -= 1;
    if (arms > 0 && arms === words.length - 1 && (op === "|" || op === ")")) {
      // The first arm's pattern on the `case` line: `case $1 in start)`, `case $m in arm*|x86*)`.
      commands.push(words.slice(0, arms));
      if (op === "|") patterns = [];
      else armStart = true;
    } else {
      commands.push(words);
      if ((open > 0 && ARM_ENDS.has(op)) || (arms > 0 && arms === words.length && (op === ";" || op === "(")))
        patterns = [];
    }
    words = [];
  }
  if (patterns !== undefined) commands.push(...patterns);
  commands.push(afterCompoundEnds(words, commands));
  return commands;
}

/**
 * Where bash ends a command with no separator: after a compound command's end a reserved word may
 * follow at once, and what comes after it is a command of its own. `if ((n)) then rm …`, `while [[
 * -f x ]] do …`, `case … esac else …`, `for ((;;)) do …`, `for ((;;)) { …; }` and `for x do …`
 * (over the arguments) each run the command after the reserved word; read as one command, its
 * words would be the test's or the loop's. Pushes each command that ends so onto `commands` and
 * returns the last, which the separator ends; one pass over the words, each sliced once. A `]]`
 * ends a test in a piece that starts with `[[`, or in the command's first piece (a script's test
 * arrives split at its `&&`), which is also kept whole where no test is open before it (`echo ]]
 * then x`, `rm -rf ]] then /`); a quoted `))` or `esac` read as an end splits what bash reads
 * whole: more commands to check, none that runs missed.
 */
function afterCompoundEnds(words: Word[], commands: Word[][]): Word[] {
  let start = 0;
  while (start < words.length && (KEYWORDS.has((words[start] as Word).text) || words[start]?.text === "time"))
    start += 1;
  // Most commands: nothing to split.
  if (!COMPOUND_HEADS.has(words[start]?.text ?? "") && !words.some((w) => w.text === "]]")) return words;
  let from = 0;
  let at = 0;
  const isText = (i: number, texts: ReadonlySet<string>) => {
    const word = words[i];
    return word !== undefined && word.kind === "word" && texts.has(word.text);
  };
  /** The command from `from` ends before `next`, a reserved word. */
  const split = (next: number) => {
    commands.push(words.slice(from, next));
    from = next;
    at = next;
  };
  /** After the first `close` followed by one of `followers`, from `i` (a quoted `]]` ends no test). */
  const closing = (close: string, i: number, followers: ReadonlySet<string>) => {
    for (; i < words.length - 1; i += 1)
      if (words[i]?.text === close && isText(i + 1, followers)) return i + 1;
    return -1;
  };
  while (at < words.length) {
    while (at < words.length && (isText(at, KEYWORDS) || words[at]?.text === "time")) at += 1;
    const first = words[at]?.text;
    let end = -1;
    if ((first === "for" || first === "select") && words[at + 1]?.text === "((")
      end = closing("))", at + 2, LOOP_BODY_STARTS);
    else if (first === "for" || first === "select") end = isText(at + 2, LOOP_BODY_DO) ? at + 2 : -1;
    else if (first === "((") end = closing("))", at + 1, KEYWORDS_AFTER_COMPOUND);
    else if (first === "esac") end = isText(at + 1, KEYWORDS_AFTER_COMPOUND) ? at + 1 : -1;
    // A test, or the last piece of one whose `&&`, `||` or parentheses split it (in a script a
    // shell or `eval` reads, `[[ a && b ]] then …` is `[[ a`, then `b ]] then …`): only the
    // command's first piece may be that; after a reserved word a `]]` ends a test its piece starts.
    else if (first === "[[" || from === 0) {
      end = closing("]]", at, KEYWORDS_AFTER_COMPOUND);
      // Where no test is open before it, its words may be a program's (`rm -rf ]] then /` is one
      // rm): the command is read whole as well.
      if (end >= 0 && first !== "[[" && first !== "]]" && !opensTest(commands[commands.length - 1]))
        commands.push(words);
    }
    if (end < 0) break;
    split(end);
  }
  return from === 0 ? words : words.slice(from);
}

/** Whether `command` has a `[[` with no `]]` after it: a test its separator split (`[[ a && b ]]`). */
function opensTest(command: readonly Word[] | undefined): boolean {
  for (let i = (command?.length ?? 0) - 1; i >= 0; i -= 1) {
    const text = (command as readonly Word[])[i]?.text;
    if (text === "]]") return false;
    if (text === "[[") return true;
  }
  return false;
}

/** The words that start a compound command (or end one) a reserved word may follow with no separator; and `]]`. */
const COMPOUND_HEADS: ReadonlySet<string> = new Set(["for", "select", "((", "[[", "esac"]);
/** What may follow a `((…))`, a `[[ … ]]` or an `esac` in the same command: a list's reserved words. */
const KEYWORDS_AFTER_COMPOUND: ReadonlySet<string> = new Set([
  "then",
  "do",
  "else",
  "elif",
  "fi",
  "done",
  "esac",
  "}",
]);
/** What starts the body of `for ((…))` with no separator before it. */
const LOOP_BODY_STARTS: ReadonlySet<string> = new Set(["do", "{"]);
/** What starts the body of `for NAME` or `select NAME` with no separator (no `in`) before it. */
const LOOP_BODY_DO: ReadonlySet<string> = new Set(["do"]);

/** The separators that end a `case` arm: a pattern list or `esac` comes next. */
const ARM_ENDS: ReadonlySet<string> = new Set([";;", ";&", ";;&"]);

/**
 * Where a `case`'s arms start in a command that opens one (a marked `case WORD in`, after
 * keywords: `do case $f in`, `time case …`): the index after `in`, or -1. Right after a pattern
 * list (`armStart`), a `case` the scan saw unquoted but not at a command start opens one too.
 */
function caseArms(words: readonly Word[], armStart: boolean): number {
  let at = 0;
  while (at < words.length && (KEYWORDS.has((words[at] as Word).text) || words[at]?.text === "time")) at += 1;
  const word = words[at]?.text;
  const marked = word === MARKED_CASE || (armStart && word === LOOSE_CASE);
  return marked && words[at + 2]?.text === "in" ? at + 3 : -1;
}

const MARKED_CASE = `${CASE_MARK}case`;
const LOOSE_CASE = `${LOOSE_CASE_MARK}case`;

function toCommand(words: readonly Word[]): Command {
  const args: Word[] = [];
  const redirects: string[] = [];
  /** The redirection `op` to `target`; after `<&` or `>&` bash reads a `-` as a word of its own. */
  const redirect = (op: string, target: Word | undefined) => {
    const text = target === undefined ? "" : stripMark(target.text);
    if ((op.endsWith("<&") || op.endsWith(">&")) && text.startsWith("-") && text.length > 1) {
      redirects.push(`${op}-`); // `<&-rm -rf /` closes stdin and runs `rm`
      args.push({ kind: (target as Word).kind, text: text.slice(1) });
    } else redirects.push(op + text);
  };
  for (let i = 0; i < words.length; i += 1) {
    const word = words[i] as Word;
    const next = words[i + 1];
    if (word.kind === "redirect") {
      // An empty word is a target too (`bash -c <<< '' 'rm -rf /'`).
      const hasTarget = next !== undefined && next.kind !== "redirect";
      if (hasTarget) i += 1;
      redirect(word.text, hasTarget ? next : undefined);
    } else if (word.text.startsWith(FD_MARK) && next?.kind === "redirect") {
      const target = words[i + 2];
      const hasTarget = target !== undefined && target.kind !== "redirect";
      redirect(word.text.slice(1) + next.text, hasTarget ? target : undefined);
      i += hasTarget ? 2 : 1;
    } else if (MARKS.test(word.text)) {
      const text = stripMark(word.text);
      const array = word.text.includes(ARRAY_MARK);
      // `"$@"` is as many words as there are arguments, quoted or not.
      const marked = word.text.replaceAll(`${QUOTED_BRACE}$`, QUOTED_DOLLAR);
      const quoted =
        marked.includes(QUOTED_DOLLAR) && !/[$`]/.test(marked) && !marked.includes(`${QUOTED_DOLLAR}@`);
      const expands = word.expands === true;
      const keeps = /[\uE006\uE007]/.test(word.text);
      args.push(
        word.kind === "glob"
          ? { kind: "glob", text, array, expands, ...(keeps && { keeps }) }
          : { kind: "word", text, quoted, array, expands, ...(keeps && { keeps }) },
      );
    } else {
      args.push(word);
    }
  }
  return { args, redirects };
}

function stripMark(text: string): string {
  if (!MARKS.test(text)) return text;
  return text
    .replace(/[\uE000\uE004\uE005\uE008\uE00E\uE00F]/g, "")
    .replaceAll(QUOTED_DOLLAR, "$")
    .replace(/[\uE006\uE007\uE009-\uE00D]/g, (mark) => UNLITERAL[mark] as string);
}

const MARKS = /[\uE000\uE003-\uE00F]/;

function render(command: Command): string {
  return collapse([...command.args.map((a) => a.text), ...command.redirects].join(" "));
}

// ---------------------------------------------------------------------------------------------
// Wrappers: commands that run the rest of their arguments as another command.
// ---------------------------------------------------------------------------------------------

interface WrapperSpec {
  /** Options taking a value, as `-k 5`, `-k5`, `--kill-after 5` or `--kill-after=5`. */
  readonly valued: readonly string[];
  readonly flags: readonly string[];
  /** Positional words before the wrapped command (timeout's duration). */
  readonly operands: number;
  /** nice accepts the adjustment as `-N`. */
  readonly numericFlag?: boolean;
  /** sudo takes `VAR=value` among its options. */
  readonly assignments?: boolean;
  /** Options and operands not modelled: each later word that is not an option is tried. */
  readonly guessOnly?: boolean;
  /** Words that never name its command's program, so no guess starts there (tmux's formats). */
  readonly notProgram?: RegExp;
  /** Options whose value is attached or absent (`xargs -i`, `-i{}`, `--replace`, `--replace=%`). */
  readonly optional?: readonly string[];
  /**
   * Options (also listed above) after which no command runs: the tool acts on a running process
   * (`taskset -p MASK PID`, `chrt -p`, `prlimit --pid`) or only prints (`chrt -m`).
   */
  readonly noCommand?: readonly string[];
  /**
   * What the operand looks like when it is there: chrt's priority, a number, which util-linux 2.42
   * lets the policies without one leave out. Another word may be the command (or a number in a
   * form not foreseen here): each word from it on is tried as the command's start.
   */
  readonly operand?: RegExp;
  /** With no command, it starts a shell, which reads its commands from stdin (`… | chroot /srv`). */
  readonly shell?: boolean;
}

/**
 * A wrapper's options as its getopt call declares them: `short` as getopt's string (`w:` takes a
 * value, `m::` an attached one only), `long` as names separated by blanks, with `=` after one
 * that takes a value and `[=]` after one whose value is optional (`--mount[=FILE]`).
 */
function getopt(short: string, ...long: string[]): Pick<WrapperSpec, "valued" | "flags" | "optional"> {
  const valued: string[] = [];
  const flags: string[] = [];
  const optional: string[] = [];
  for (const [, letter, colons] of short.matchAll(/([^:])(:{0,2})/g))
    [flags, valued, optional][(colons as string).length]?.push(`-${letter}`);
  for (const [, name, value] of long.join(" ").matchAll(/(\S+?)(\[=\]|=)?(?=\s|$)/g)) {
    (value === "[=]" ? optional : value === "=" ? valued : flags).push(`--${name}`);
  }
  return { valued, flags, optional };
}

const WRAPPERS: Readonly<Record<string, WrapperSpec>> = {
  timeout: {
    valued: ["-s", "--signal", "-k", "--kill-after"],
    flags: ["--preserve-status", "--foreground", "-v", "--verbose"],
    operands: 1,
  },
  nice: { valued: ["-n", "--adjustment"], flags: [], operands: 0, numericFlag: true },
  nohup: { valued: [], flags: [], operands: 0 },
  // `command -v`/`-V` only print what a name resolves to, so those are not wrappers.
  command: { valued: [], flags: ["-p"], operands: 0 },
  exec: { valued: ["-a"], flags: ["-c", "-l"], operands: 0 },
  time: { valued: [], flags: ["-p"], operands: 0 },
  stdbuf: { valued: ["-i", "--input", "-o", "--output", "-e", "--error"], flags: [], operands: 0 },
};

/**
 * Commands that run another command but are not stripped for allow rules: an allow rule for
 * `rm *` must not allow `sudo rm -rf /`. Deny-style rules check the command they run as well.
 */
/** A wrapper whose own options and operands are not modelled: every later word that is no option is tried as its command. */
const GUESS_ONLY: WrapperSpec = { valued: [], flags: [], operands: 0, guessOnly: true };

const DENY_ONLY_WRAPPERS: Readonly<Record<string, WrapperSpec>> = {
  builtin: { valued: [], flags: [], operands: 0 },
  coproc: { valued: [], flags: [], operands: 0 },
  // zsh's precommand modifiers and `repeat N CMD` (Claude Code runs its Bash tool in zsh on macOS).
  "-": { valued: [], flags: [], operands: 0 },
  noglob: { valued: [], flags: [], operands: 0 },
  nocorrect: { valued: [], flags: [], operands: 0 },
  repeat: { valued: [], flags: [], operands: 1, operand: /^\s*\d+$/ },
  busybox: { valued: [], flags: [], operands: 0 },
  // Android's and some containers' multi-call binary, as busybox is (`toybox rm -rf /`).
  toybox: { valued: [], flags: [], operands: 0 },
  sudo: {
    valued: ["-u", "--user", "-g", "--group", "-C", "--close-from", "-D", "--chdir", "-h", "--host"].concat([
      "--preserve-env", // as `--preserve-env=LIST`; alone it is a flag (flags are looked up first)
      "-p",
      "--prompt",
      "-r",
      "--role",
      "-t",
      "--type",
      "-T",
      "--command-timeout",
      "-U",
    ]),
    flags: ["-A", "--askpass", "-b", "--background", "-E", "--preserve-env", "-H", "--set-home"]
      .concat(["-i", "--login", "-k", "--reset-timestamp", "-n", "--non-interactive", "-P", "-S"])
      .concat(["--stdin", "-s", "--shell"]),
    operands: 0,
    assignments: true,
  },
  doas: { valued: ["-u", "-C"], flags: ["-n", "-s", "-L"], operands: 0 },
  // util-linux 2.38's and coreutils 9.1's options, from the getopt strings (each stops at its first
  // word that is no option) and long options' tables the binaries hold. An option not listed here
  // (`--help`, one a later version adds) is read by guesses (wrappedCommands).
  flock: {
    // FILE; then its command, or `-c SCRIPT` (wrappedScript); a descriptor alone runs nothing.
    ...getopt(
      "sexnoFuw:E:",
      "shared exclusive unlock nonblocking nb timeout= wait= conflict-exit-code= close",
      "no-fork verbose",
    ),
    operands: 1,
  },
  taskset: { ...getopt("apc", "all-tasks pid cpu-list"), operands: 1, noCommand: ["-p", "--pid"] },
  chrt: {
    ...getopt(
      "abdD:fimopP:rRT:v",
      "all-tasks batch deadline fifo idle max other pid rr reset-on-fork verbose",
      "sched-runtime= sched-period= sched-deadline=",
    ),
    // The priority, which util-linux 2.42 lets the policies without one leave out.
    operands: 1,
    operand: /^\s*[+-]?\d+$/, // as strtoimax reads it, after blanks
    noCommand: ["-p", "--pid", "-m", "--max"],
  },
  chroot: { ...getopt("", "groups= userspec= skip-chdir"), operands: 1, shell: true },
  nsenter: {
    // `--wdns` takes a value after `=` only, though `-W` takes the next word and the manual says so.
    ...getopt(
      "at:m::u::i::n::p::C::U::T::S:G:r::w::W:FZ",
      "all target= setuid= setgid= preserve-credentials",
      "mount[=] uts[=] ipc[=] net[=] pid[=] cgroup[=] user[=] time[=] root[=] wd[=] wdns[=]",
      "no-fork follow-context",
    ),
    operands: 0,
    shell: true,
  },
  unshare: {
    ...getopt(
      "fmuinpCTUrR:w:S:G:c",
      "fork mount[=] uts[=] ipc[=] net[=] pid[=] user[=] cgroup[=] time[=]",
      "mount-proc[=] kill-child[=] map-root-user map-current-user map-auto map-user= map-group=",
      "map-users= map-groups= propagation= setgroups= keep-caps root= wd= setuid= setgid=",
      "monotonic= boottime=",
    ),
    operands: 0,
    shell: true,
  },
  setpriv: {
    ...getopt(
      "d",
      "dump list-caps nnp no-new-privs inh-caps= ambient-caps= bounding-set= ruid= euid=",
      "rgid= egid= reuid= regid= clear-groups keep-groups init-groups groups= securebits=",
      "pdeathsig= selinux-label= apparmor-profile= reset-env",
    ),
    operands: 0,
    noCommand: ["-d", "--dump", "--list-caps"],
  },
  prlimit: {
    // Each limit, as `-n`, `-n1024`, `--nofile` or `--nofile=1024:2048`.
    ...getopt(
      "c::d::e::f::i::l::m::n::q::r::s::t::u::v::x::y::p:o:",
      "pid= output= noheadings raw verbose",
      "core[=] data[=] nice[=] fsize[=] sigpending[=] memlock[=] rss[=] nofile[=] msgqueue[=]",
      "rtprio[=] stack[=] cpu[=] nproc[=] as[=] locks[=] rttime[=]",
    ),
    operands: 0,
    noCommand: ["-p", "--pid"],
  },
  // strace 6.1's: its command is optional with `-p PID` (optionRunsProgram reads its `-o |CMD`).
  strace: {
    ...getopt(
      "a:Ab:cCdDe:E:fFiI:kno:O:p:P:qrs:S:tTu:U:vwxX:yYzZ",
      "columns= output-append-mode detach-on= summary-only summary debug daemonize[=] daemonised[=]",
      "daemonized[=] env= follow-forks output-separately instruction-pointer interruptible= stack-traces",
      "syscall-number output= summary-syscall-overhead= attach= trace-path= relative-timestamps[=]",
      "string-limit= summary-sort-by= absolute-timestamps[=] timestamps[=] syscall-times[=] user=",
      "summary-columns= no-abbrev summary-wall-clock strings-in-hex[=] const-print-style= pidns-translation",
      "successful-only failed-only failing-only seccomp-bpf tips[=] trace= abbrev= verbose= raw= signals=",
      "status= read= write= fault= inject= kvm= quiet[=] silent[=] silence[=] decode-fds[=] decode-pids=",
      "secontext[=]",
    ),
    operands: 0,
  },
  // systemd 252's (optionRunsProgram reads its `-S` and Exec properties).
  "systemd-run": {
    ...getopt(
      "rH:M:E:p:tPqGdSu:",
      "user system scope unit= description= slice= slice-inherit remain-after-exit send-sighup host=",
      "machine= service-type= wait uid= gid= nice= setenv= property= tty pty pipe quiet on-active= on-boot=",
      "on-startup= on-unit-active= on-unit-inactive= on-calendar= on-timezone-change on-clock-change",
      "timer-property= path-property= socket-property= no-block no-ask-password collect working-directory=",
      "same-dir shell",
    ),
    operands: 0,
  },
  // polkit's: read word by word, no option after the first other word.
  pkexec: { ...getopt("u:", "user= disable-internal-agent keep-cwd"), operands: 0, shell: true },
  // It runs a command after options and operands of its own that are not modelled: every later
  // word that is no option is tried as it.
  jobs: GUESS_ONLY,
  // tmux 3's new-session, new-window, split-window and respawn-* run a command of several words
  // directly, as screen runs its command words; their options and tmux's commands are not
  // modelled, so every later word that is no option is tried (tmuxRuns and screenRuns read the rest).
  // A format (`ls -F '#{session_name}'`, `display -p '#S'`) is no program: tmux expands none in
  // a command it runs directly (new-window's words); those it expands before a shell reads them
  // (run-shell's, if-shell's) or stores to expand again make the command unreadable (tmuxRuns).
  tmux: { ...GUESS_ONLY, notProgram: /^#/ },
  screen: GUESS_ONLY,
  // Programs that run their command words after options or operands of their own, not modelled
  // here: every later word that is no option is tried. macOS's caffeinate, arch and sandbox-exec;
  // container inits and user switchers; library-preloading, proxying and tracing wrappers.
  ...Object.fromEntries(
    ["caffeinate", "arch", "sandbox-exec", "gosu", "su-exec", "tini", "dumb-init", "eatmydata"]
      .concat(["nocache", "faketime", "firejail", "proxychains", "proxychains4", "torsocks"])
      .concat(["valgrind", "ltrace", "catchsegv", "xvfb-run", "dbus-run-session", "ssh-agent"])
      .map((name) => [name, GUESS_ONLY]),
  ),
  setsid: { valued: [], flags: ["-c", "--ctty", "-f", "--fork", "-w", "--wait"], operands: 0 },
  ionice: { valued: ["-c", "--class", "-n", "--classdata"], flags: ["-t", "--ignore"], operands: 0 },
  // fakeroot 1.31's options (its getopt loop); with no command it starts $SHELL, which reads stdin.
  // `-l LIB` preloads a library and `--faked` names its daemon: programs of their own (optionRunsProgram).
  fakeroot: {
    valued: ["-l", "--lib", "--faked", "-s", "-i", "-b", "--fd-base"],
    flags: ["-u", "--unknown-is-real"],
    operands: 0,
    shell: true,
  },
  // expect's unbuffer: `unbuffer [-p] PROGRAM [ARGS]`.
  unbuffer: { valued: [], flags: ["-p"], operands: 0 },
  xargs: {
    valued: ["-I", "-L", "-n", "--max-args", "-P", "--max-procs", "-s", "--max-chars", "-d"].concat([
      "--delimiter",
      "-E",
      "-a",
      "--arg-file",
      "--process-slot-var",
    ]),
    flags: ["-0", "--null", "-r", "--no-run-if-empty", "-t", "--verbose", "-p", "--interactive", "-x"].concat(
      ["--exit", "--open-tty", "-o", "--show-limits"],
    ),
    optional: ["-i", "--replace", "-l", "--max-lines", "-e", "--eof"],
    operands: 0,
  },
};

/** Shell keywords that can precede a command in a compound statement (`if x; then rm -rf /; fi`). */
const KEYWORDS = new Set(["!", "{", "}", "if", "then", "else", "elif", "fi", "do", "done", "while", "until"]);

const SHELLS = new Set(
  ["sh", "bash", "rbash", "zsh", "dash", "ksh", "mksh", "fish"].concat([
    "ash",
    "hush",
    "yash",
    "posh",
    "ksh93",
    "oksh",
    "lksh",
    "pdksh",
    "csh",
    "tcsh",
  ]),
);

/**
 * Leading assignments that cannot change which program runs or what it loads. Any other
 * (`PATH=/tmp/x npm test`, `LD_PRELOAD=...`) makes the command opaque, as Claude Code only
 * strips a fixed list of safe variables before matching.
 */
const SAFE_VARIABLES = new Set([
  "CI",
  "DEBUG",
  "NODE_ENV",
  "NO_COLOR",
  "FORCE_COLOR",
  "TERM",
  "COLORTERM",
  "TZ",
  "LANG",
  "LANGUAGE",
  "LC_ALL",
  "LC_CTYPE",
  "LC_MESSAGES",
  "LC_TIME",
  "RUST_BACKTRACE",
  "RUST_LOG",
  "GOOS",
  "GOARCH",
  "CGO_ENABLED",
  "GO111MODULE",
  "PYTHONUNBUFFERED",
  "PYTHONDONTWRITEBYTECODE",
]);

/** `NAME=`, `NAME+=`, `NAME[…]=`. */
const ASSIGNMENT = new RegExp(String.raw`^${NAME_AND_SUBSCRIPT}\+?=`);

/** An environment entry bash imports as a function (`BASH_FUNC_name%%=() { …; }`). */
const EXPORTED_FUNCTION = /^(?:BASH_FUNC_[^=]*|[A-Za-z_][\w.-]*%%)=/;

/** What peeling one wrapper off leaves: the index of the wrapped command, or a script to split. */
/**
 * Where the command starts after a wrapper, or the script it runs. `expands`: the script's word
 * has a `$` or backquote the shell expands before it runs (`bash -c "cd $d && make"`,
 * `eval echo $x`, `trap "rm $f" EXIT`): the value becomes code, which cannot be read here.
 */
type Peeled = { readonly at: number } | Script | undefined;

interface Script {
  readonly script: string;
  readonly expands: boolean;
}

/** The script in `words`, joined by spaces as eval and watch join them. */
function scriptOf(words: readonly Word[]): Script {
  return { script: words.map((w) => w.text).join(" "), expands: expandsAny(words) };
}

/**
 * Whether a script's words expand before it runs (Word `expands`). A glob always does: to file
 * names, which are read as code too (`eval : *` with a file `x;rm -rf /`).
 */
function expandsAny(words: readonly Word[]): boolean {
  return words.some((w) => w.kind === "glob" || (w.kind === "word" && w.expands === true));
}

/**
 * Whether a script makes the command unreadable before it is split: it expands (its values
 * become code), or its own text fails the whole-text checks (`eval 'echo ${x@'P'}'`).
 */
function unreadableScript(script: Script): boolean {
  return script.expands || unreadableText(script.script);
}

/**
 * An unquoted `~` with no `/` after it as a program: a directory's value runs (`HOME=rm; ~`, also
 * `~+`, `~-`, `~user`). `~/bin/x` names `x`.
 */
const HOME_ALONE = /^~[^/]*$/;

/**
 * Wrappers peeled off one command past which it is unreadable: each is recorded with the words
 * after it (recordWrappers), and a chain of thousands (`nohup nohup …`) would be quadratic.
 */
const MAX_WRAPPERS = 16;

/**
 * Each wrapper peeled off a command, as written from its name on (`nice nohup make`, `nohup make`,
 * `bash -c make`, `eval make`), in CommandSplit `wrappers`: deny-style rules check it, so that a
 * rule naming the wrapper (`Bash(nohup *)`, `Bash(eval *)`) applies; allow rules read past it.
 */
function recordWrappers(
  args: readonly Word[],
  wrappers: readonly number[],
  redirects: readonly string[],
  out: Output,
): void {
  // Unreadable, every deny-style rule matches: none of them need be recorded.
  if (wrappers.length > MAX_WRAPPERS) markUnreadable(out);
  else for (const at of wrappers) record({ args: args.slice(at), redirects }, out, true);
}

/** Strips wrappers, follows `sh -c`/`eval`, and records what is left as a subcommand. */
/**
 * `appended`: xargs adds its input lines to the end of this command (no `-I`), so a wrapper here
 * with no command of its own runs one from the input (`… | xargs env`), and find's expression
 * gets more of them (`-exec …`).
 */
function expand(
  command: Command,
  depth: number,
  suffix: readonly string[],
  out: Output,
  appended = false,
): void {
  const redirects = [...command.redirects, ...suffix];
  const { args } = command;
  // A function handed to a child bash through its environment (`env 'BASH_FUNC_ls%%=() { rm …; }'
  // bash -c ls`, also by sudo): its body is not read here.
  if (args.some((a) => EXPORTED_FUNCTION.test(a.text))) markUnreadable(out);
  // An index, not slices: a command of thousands of `nohup`s must stay linear.
  let at = 0;
  let assignments = 0; // the words before the command that bash reads as assignments
  while (assignments < args.length && ASSIGNMENT.test((args[assignments] as Word).text)) assignments += 1;
  const wrappers: number[] = []; // where each program peeled off here starts (`nohup`, `bash -c`)
  for (;;) {
    const peeled = peel(args, at, out, at < assignments);
    // `GIT_SSH_COMMAND='…' git push`, `env EDITOR='…' crontab -e`: their commands, read where set.
    if (out.commandValues.length > 0) readCommandValues(out.commandValues.splice(0), depth, out);
    if (peeled === undefined) break;
    if (at >= assignments && !KEYWORDS.has((args[at] as Word).text) && (args[at] as Word).text !== "function")
      wrappers.push(at);
    if ("script" in peeled) {
      if (unreadableScript(peeled)) markUnreadable(out);
      if (depth < MAX_DEPTH) {
        splitInto(peeled.script, depth + 1, redirects, out);
        recordWrappers(args, wrappers, redirects, out);
        return;
      }
      markUnreadable(out); // too deep to follow: keep the shell's own words as the subcommand
      break;
    }
    at = peeled.at;
  }
  recordWrappers(args, wrappers, redirects, out);
  const first = args[at];
  if (first === undefined) {
    if (appended && at > 0) markUnreadable(out); // `xargs nice`: the input is the command
    // Redirections with no command (`{ echo x; } > f`, `(…) > f`, `true; > f`) still write.
    if (redirects.length > 0) record({ args: [], redirects }, out);
    return;
  }
  // zsh's short forms run the words after a test's `]]` or an arithmetic `))` (`if [[ -d / ]]
  // rm -rf /`, `while (( 1 )) { …; }`), and those after `} always` (`{ …; } always { rm …; }`):
  // deny-style rules read them as a command (to bash they are a syntax error, or data), and no
  // allow rule approves them (`Bash([[ *)` names a test, not what zsh runs after it).
  const rest = zshRest(args, at);
  if (rest !== undefined) out.opaque = true;
  if (rest !== undefined && depth >= MAX_DEPTH) markUnreadable(out);
  else if (rest !== undefined) {
    out.denyOnly += 1;
    expand({ args: args.slice(rest), redirects: [] }, depth + 1, redirects, out);
    out.denyOnly -= 1;
  }
  // A glob, a bracket or brace pattern or a variable in command position runs a program we
  // cannot name; `[` and `[[` are the test command itself. A guess at where a wrapper's command
  // starts may land on an argument (`xargs -i{} cp {} /tmp`), so it proves nothing there.
  // So does a process substitution: an empty one (`<() rm -rf /`) is no word, and the next runs.
  // A path whose directory is expanded inside double quotes names its program all the same
  // (`"$VIRTUAL_ENV/bin/python"`): deny rules read it by that name, allow rules not at all.
  const quotedPath = first.kind === "word" && first.quoted === true && QUOTED_PATH.test(first.text);
  if (quotedPath) out.opaque = true;
  const unnamed =
    first.kind === "glob" ||
    (first.kind === "word" && first.runTime === true) ||
    (/[$[{`]/.test(first.text) && !TEST_WORDS.has(first.text) && !quotedPath) ||
    PROCESS_SUBSTITUTION.test(first.text) ||
    HOME_ALONE.test(first.text);
  // A guess proves nothing by a bracket or the `{}` of xargs, but a variable, glob or
  // brace there runs.
  const unnamedGuess =
    first.kind === "glob" ||
    (first.kind === "word" && first.runTime === true) ||
    /[$`]/.test(first.text) ||
    // Not find's `{}` (marked `expands`), which is a file's name at run time.
    (first.text.includes("{") &&
      (first.text !== "{}" || (first.kind === "word" && first.expands === true))) ||
    PROCESS_SUBSTITUTION.test(first.text) ||
    HOME_ALONE.test(first.text);
  if (out.guessing === 0 ? unnamed : unnamedGuess) markUnreadable(out);
  const name = programName(first.text);
  // sudo -s, sudo -i and doas -s with no command start a shell that reads stdin.
  if (STDIN_SHELL_WRAPPERS.has(name) && stdinShellWrapper(args, at)) markUnreadable(out);
  // strace's `-E NAME=value` and systemd-run's `-E`/`--setenv` set it for the command, as env does.
  if (name === "strace" || name === "systemd-run") {
    someOption(args, at, name, (option, value, word) => {
      if (!["-E", "--env", "--setenv"].includes(option)) return false;
      // A name made at run time may be any (`-E "$N=…"`, xargs' `-E @`); a `$` in the value may be kept.
      if (word === undefined || (mayBeOption(word) && !ASSIGNMENT.test(value))) markUnreadable(out);
      const expands = expandsAny(word === undefined ? [] : [word]);
      noteAssignment({ kind: "word", text: value, expands, ...(/[$`]/.test(value) && { keeps: true }) }, out);
      return false;
    });
    readCommandValues(out.commandValues.splice(0), depth, out);
  }
  // `su -c 'rm -rf /'`, `script -c …`, `flock FILE -c …` and `watch` run a script: checked by
  // deny-style rules, the wrapper kept as written for allow rules, as sudo is. su, sg, script and
  // runuser without `-u` run a shell when given none: it reads its script from stdin (`… | su`,
  // `… | script -q /dev/null`), or from the arguments after the user.
  // git past its own options and the aliases its `-c` defines (`git -C app push`, `git -c
  // alias.p='!rm -rf /' p`): what it runs is checked by deny-style rules, as a wrapper's is.
  const program = windowsName(first.text);
  const git = GIT_PROGRAM.test(program) ? gitRuns(args, at, appended) : dashedGitRuns(program, args, at);
  if (git?.unreadable) markUnreadable(out);
  const script = git?.script ?? wrappedScript(name, args, at);
  if (script === undefined && SCRIPT_SHELLS.has(name) && !(name === "runuser" && runuserWithUser(args, at)))
    markUnreadable(out);
  // xargs' input lines, added to its words, may be their options (`… | xargs su -c make`).
  if (appended && SCRIPT_SHELLS.has(name)) markUnreadable(out);
  if (script !== undefined && unreadableScript(script)) markUnreadable(out);
  record({ args: args.slice(at), redirects }, out);
  if (git !== undefined && git.runs.length > 0) {
    out.denyOnly += 1;
    for (const run of git.runs) record({ args: run, redirects }, out);
    out.denyOnly -= 1;
  }
  if (git !== undefined) readCommandValues(git.commands, depth, out);
  // ssh's remote command, a CLI past its global options (`kubectl -n prod delete …`). tmux or
  // screen where a wrapper's command is guessed is unreadable, not read again for each guess.
  const guessedRunner = out.guessing > 0 && (name === "tmux" || name === "screen");
  if (guessedRunner) markUnreadable(out);
  const cli = guessedRunner ? undefined : cliRuns(name, args, at);
  if (cli !== undefined) {
    if (cli.unreadable) markUnreadable(out);
    out.denyOnly += 1;
    for (const run of cli.subcommands) record({ args: run, redirects }, out);
    out.denyOnly -= 1;
    readCommandValues(cli.scripts, depth, out);
  }
  // What a deny-only wrapper runs (sudo, xargs, or a stripped wrapper with an option not known
  // here) is checked by deny-style rules as a command of its own, wrappers and all.
  if (script !== undefined && depth < MAX_DEPTH) {
    out.denyOnly += 1;
    splitInto(script.script, depth + 1, redirects, out);
    out.denyOnly -= 1;
  }
  // A shell or wrapper run by a path not known as its own (`/opt/homebrew/bin/bash -c …`,
  // `./env rm …`, a Nix store's), by its name in another case (macOS and Windows file systems
  // run bash for `BASH`) or by its Windows file's (`bash.exe`): what it runs is checked by
  // deny-style rules as well, read as the bare, lower-case name's would be. Allow rules read the
  // name as written.
  const bare = windowsName(withoutEquals(first.text.slice(first.text.lastIndexOf("/") + 1)));
  const other = bare !== name && (runsOtherCommands(bare) || readsWhatItRuns(bare));
  if (other && depth >= MAX_DEPTH) markUnreadable(out);
  else if (other) {
    out.denyOnly += 1;
    expand(
      { args: [{ kind: "word", text: bare }, ...args.slice(at + 1)], redirects: [] },
      depth + 1,
      redirects,
      out,
    );
    out.denyOnly -= 1;
  }
  const wrapped = wrappedCommands(args, at);
  // sudo's `NAME=value` before its command, set for it as env sets it (`sudo EDITOR=… visudo`).
  if (own(DENY_ONLY_WRAPPERS, name)?.assignments) {
    const end = args.length - (wrapped.commands[0]?.length ?? 0);
    for (const word of args.slice(at + 1, end)) if (NAME_VALUE.test(word.text)) noteCommandValue(word, out);
    readCommandValues(out.commandValues.splice(0), depth, out);
  }
  const runsInput =
    appended &&
    runsOtherCommands(name) &&
    // A guess proves no command is there (`xargs flock /tmp/l`: the input may be it).
    (FINDS.has(name) || wrapped.commands.length === 0);
  if (wrapped.unsure || runsInput) markUnreadable(out);
  // xargs' input lines added to ssh's words are the remote script's (`… | xargs ssh host`), and
  // to a container runner's with no command, its command (`… | xargs docker exec web`).
  if (appended && (name === "ssh" || (wrapped.commands.length === 0 && containerCommands(name, args, at))))
    markUnreadable(out);
  const runs = [
    ...wrapped.commands.map((run) => ({ run, guess: false })),
    ...wrapped.guesses.map((run) => ({ run, guess: true })),
  ];
  for (const { run, guess } of runs) {
    // Guesses nest (`env -Z env -Z … rm`): past a bound the command is unreadable instead of
    // taking time exponential in its length.
    if (depth >= MAX_DEPTH || (guess && ++out.guessed > MAX_GUESSED_COMMANDS)) {
      out.unreadable = true;
      break;
    }
    out.denyOnly += 1;
    if (guess) out.guessing += 1;
    expand({ args: run, redirects: [] }, depth + 1, redirects, out, appended || wrapped.appended);
    if (guess) out.guessing -= 1;
    out.denyOnly -= 1;
  }
}

/**
 * Commands a setting makes a program run through the shell (a git setting's, an editor's or a
 * pager's in a variable): checked by deny-style rules as scripts, unreadable where their text is
 * made at run time (`-c core.pager="less $X"`: the shell that runs it expands it again).
 */
function readCommandValues(scripts: readonly Script[], depth: number, out: Output): void {
  for (const script of scripts) {
    if (unreadableScript(script) || depth >= MAX_DEPTH) {
      markUnreadable(out);
      continue;
    }
    out.denyOnly += 1;
    splitInto(script.script, depth + 1, [], out);
    out.denyOnly -= 1;
  }
}

/**
 * git's options before its subcommand, as git.c's handle_options reads them (git 2.43): each as
 * written, with no bundling or prefixes. These take the next word...
 */
const GIT_VALUED: ReadonlySet<string> = new Set(
  ["-C", "-c", "--git-dir", "--work-tree", "--namespace", "--config-env", "--super-prefix"].concat([
    "--shallow-file",
    "--attr-source",
  ]),
);
/** ...these a value after `=`... */
const GIT_ATTACHED = /^--(?:git-dir|work-tree|namespace|config-env|super-prefix|attr-source|exec-path)=/;
/**
 * ...and these none. Any other option makes git stop with a usage error, or print and exit
 * (`--version`, `--help`, `--exec-path`, `--html-path`): no subcommand runs.
 */
const GIT_FLAGS: ReadonlySet<string> = new Set(
  ["-p", "--paginate", "-P", "--no-pager", "--bare", "--no-replace-objects", "--no-lazy-fetch"].concat([
    "--no-optional-locks",
    "--no-advice",
    "--literal-pathspecs",
    "--no-literal-pathspecs",
    "--glob-pathspecs",
    "--noglob-pathspecs",
    "--icase-pathspecs",
  ]),
);
/** Aliases followed in a chain (`-c alias.a=b -c alias.b=push a`); git stops at a loop. A longer chain is unreadable. */
const MAX_GIT_ALIASES = 8;

interface GitRuns {
  /** The subcommand past git's options, and as each alias the command's `-c` defines expands it. */
  readonly runs: readonly Word[][];
  /** What a `!` alias runs: its shell command, with the arguments git adds after it. */
  readonly script?: Script;
  /** The commands its `-c` settings make git run (`-c core.pager=…`, gitConfigCommand). */
  readonly commands: readonly Script[];
  /** An alias whose text is not seen may run: one from the environment (`--config-env`), or a `-c` whose name or value expands. */
  readonly unreadable: boolean;
}

/**
 * What `git` (`args[at]`) runs: its subcommand past its own options (`git -C app -c
 * user.name=x --no-pager push` runs `git push`), and what an alias defined by `-c` (or
 * `--config-env`) makes of it: `-c alias.p=push p` runs `git push`, and `-c alias.p='!rm -rf /'
 * p` runs `rm -rf /` in a shell, with the words after `p` added. Unreadable where a word among
 * the options may split (`git $GIT_OPTS push`), where the alias that runs is one whose text is
 * not seen (`--config-env`, `-c alias.p="$CMD"`), or where the command that names one is made at
 * run time (`"$SUB"`, appended: xargs adds it). Aliases in git's config files are not seen.
 */
function gitRuns(args: readonly Word[], at: number, appended: boolean): GitRuns {
  const runs: Word[][] = [];
  const aliases = new Map<string, Word | undefined>(); // undefined: its text is not seen
  const commands: Script[] = [];
  let unreadable = false;
  const alias = (definition: string, word: Word | undefined) => {
    const eq = definition.indexOf("=");
    const key = eq < 0 ? definition : definition.slice(0, eq);
    // A name made at run time may be any alias (`-c "$KV"`).
    if (word === undefined ? /[$`]/.test(key) : mayExpand(key, word)) unreadable = true;
    if (eq >= 0 && /^alias\./i.test(key)) {
      // A value made at run time may be any command (`-c alias.p="$CMD"`): not seen either.
      const text = definition.slice(eq + 1);
      aliases.set(key.slice(6).toLowerCase(), word && !mayExpand(text, word) ? { ...word, text } : undefined);
    }
    // A setting whose value is a command git runs (`-c core.sshCommand='…'`): read as a script; from
    // the environment (`--config-env=core.pager=VAR`) it is not seen.
    const command = eq >= 0 ? gitConfigCommand(key, definition.slice(eq + 1)) : undefined;
    if (command !== undefined && word === undefined) unreadable = true;
    else if (command !== undefined && word !== undefined)
      commands.push({ script: command, expands: mayExpand(command, word) });
    // The ext:: transport runs its URL's command (`ext::sh -c …`) once allowed.
    if (eq >= 0 && GIT_EXT_ALLOW.test(key) && !/^never$/i.test(definition.slice(eq + 1))) unreadable = true;
  };
  const program = args[at] as Word;
  let words: readonly Word[] = args;
  let i = at + 1;
  for (let round = 0; ; round += 1) {
    const start = gitSubcommand(words, i, alias);
    if (start === GIT_UNSURE) return { runs, commands, unreadable: true };
    // With an alias defined, a command named at run time may be it: `"$SUB"`, find's `{}`, xargs'
    // input (`… | xargs git -c alias.x=…`).
    if (aliases.size > 0 && (start < 0 ? appended : mayBeOption(words[start] as Word)))
      return { runs, commands, unreadable: true };
    if (start < 0) break;
    if (start > i || round > 0) runs.push([program, ...words.slice(start)]);
    const name = (words[start] as Word).text.toLowerCase();
    if (!aliases.has(name)) {
      // Its own options that run a command (`rebase -x CMD`, `bisect run CMD`, `config core.pager CMD`).
      const own = gitSubcommandScripts(words, start);
      commands.push(...own.scripts);
      if (own.unreadable) unreadable = true;
      break;
    }
    const value = aliases.get(name);
    // Past MAX_GIT_ALIASES git follows the chain all the same: what it ends in is not read.
    if (value === undefined || round >= MAX_GIT_ALIASES) return { runs, commands, unreadable: true };
    aliases.delete(name);
    const rest = words.slice(start + 1);
    if (value.text.startsWith("!")) {
      // git runs `sh -c 'COMMAND "$@"'` with the words after the alias: read as words of the script,
      // each quoted, as the shell takes them whole (`x '#' /` is no comment); one that expands as
      // written, so that the script's reading sees what it may become.
      const script = [
        value.text.slice(1),
        ...rest.map((w) => (expandsAny([w]) ? w.text : singleQuoted(w.text))),
      ].join(" ");
      return { runs, commands, script: { script, expands: expandsAny([value]) }, unreadable };
    }
    words = [program, ...gitWords(value.text), ...rest];
    i = 1;
  }
  return { runs, commands, unreadable };
}

/** Whether `text`, a part of `word`, may expand: it holds a `$`, backquote or glob, and the word expands. */
function mayExpand(text: string, word: Word): boolean {
  return word.kind !== "redirect" && (word.kind === "glob" || word.expands === true) && /[$`*?[]/.test(text);
}

/**
 * git settings whose value is a command git runs, by their names in lower case (a section's and
 * a key's case does not count; a subsection's is any): through the shell, `sh -c 'VALUE "$@"'`,
 * for most (git-config(1): core.pager "is meant to be interpreted by the shell"; core.sshCommand,
 * core.fsmonitor, core.editor, diff.external, the drivers' commands, a credential helper), as a
 * program for the rest (core.askPass, gpg.program), read as a script all the same.
 */
const GIT_COMMAND_SETTING = new RegExp(
  "^(?:" +
    [
      String.raw`core\.(?:sshcommand|fsmonitor|pager|editor|askpass|gitproxy|alternaterefscommand)`,
      String.raw`sequence\.editor|diff\.external|uploadpack\.packobjectshook|pager\..+|imap\.tunnel|instaweb\.httpd`,
      String.raw`(?:diff|filter|merge|difftool|mergetool|trailer|browser|man)\..+\.(?:command|textconv|clean|smudge|process|driver|cmd|path)`,
      String.raw`remote\..+\.(?:uploadpack|receivepack)|credential\.(?:.+\.)?helper`,
      String.raw`gpg\.(?:.+\.)?program|gpg\.ssh\.defaultkeycommand|sendemail\.(?:.+\.)?(?:tocmd|cccmd|headercmd|sendmailcmd|smtpserver)`,
    ].join("|") +
    ")$",
);

/** `protocol.ext.allow` and `protocol.allow`: set to anything but `never`, the ext:: transport may run a command. */
const GIT_EXT_ALLOW = /^protocol\.(?:ext\.)?allow$/i;

/**
 * The command a git setting makes git run, or undefined for one that runs none. A credential
 * helper is a shell command after a `!`, a program by an absolute path, otherwise `git
 * credential-NAME` (gitcredentials(7)).
 */
function gitConfigCommand(key: string, value: string): string | undefined {
  const name = key.toLowerCase();
  if (!GIT_COMMAND_SETTING.test(name) || value === "") return undefined;
  if (!/^credential\./.test(name)) return value;
  if (value.startsWith("!")) return value.slice(1);
  return value.startsWith("/") ? value : `git credential-${value}`;
}

/**
 * git subcommands' options whose value is a command git runs through the shell (git-rebase(1)
 * `--exec`, git-difftool(1) `--extcmd`, git-filter-branch(1)'s filters, the transport's
 * `--upload-pack` and `--receive-pack`, which a local or ssh remote runs, git-send-email(1)'s
 * `--*-cmd`), long ones also by a unique prefix as parse-options takes them (`--exe`), short ones
 * alone, attached or last in a bundle of the subcommand's flags (`short`: `-ix CMD`, `-qu CMD`).
 * `optional`: the value is only ever attached (`-OCMD`, `--open-files-in-pager=CMD`, daemon's
 * `--access-hook=CMD`), as for parse-options' optional arguments; alone, the option takes no
 * word (git grep's `-O` then runs the configured pager, and its next word is the pattern). git grep runs its pager through the
 * shell with the matching files' names after it; instaweb runs its `--httpd` command line as
 * words, and daemon its `--access-hook` on every connection.
 * `config`: clone's `-c`/`--config NAME=VALUE`, set in the new repository before it fetches
 * (git-clone(1)), so a `core.sshCommand` there runs as git's own `-c` does.
 */
const GIT_COMMAND_OPTIONS: Readonly<
  Record<
    string,
    {
      readonly long: readonly string[];
      readonly short?: RegExp;
      readonly optional?: true;
      readonly config?: { readonly long: string; readonly short: RegExp };
    }
  >
> = {
  // rebase's flags -q -v -n -f -m -i -k -r; difftool's -g -d -y; clone's -v -q -n -l -s.
  rebase: { long: ["--exec"], short: /^-[qvnfmikr]*x/ },
  difftool: { long: ["--extcmd"], short: /^-[gdy]*x/ },
  "filter-branch": {
    long: [
      "--setup",
      "--tree-filter",
      "--index-filter",
      "--msg-filter",
      "--commit-filter",
      "--env-filter",
    ].concat(["--parent-filter", "--tag-name-filter"]),
  },
  clone: {
    long: ["--upload-pack"],
    short: /^-[vqnls]*u/,
    config: { long: "--config", short: /^-[vqnls]*c/ },
  },
  fetch: { long: ["--upload-pack"] },
  pull: { long: ["--upload-pack"] },
  "ls-remote": { long: ["--upload-pack"] },
  "fetch-pack": { long: ["--upload-pack", "--exec"] },
  archive: { long: ["--exec"] },
  push: { long: ["--receive-pack", "--exec"] },
  "send-pack": { long: ["--receive-pack", "--exec"] },
  "send-email": { long: ["--to-cmd", "--cc-cmd", "--header-cmd", "--sendmail-cmd", "--smtp-server"] },
  // grep's flags that take no value (`-NUM` too: a count of context lines) before its `-O`.
  grep: {
    long: ["--open-files-in-pager"],
    short: /^-[0-9acEFGhHiIlLnopPqrsvwWz]*O/,
    optional: true,
  },
  // instaweb's one flag, `-l` (--local).
  instaweb: { long: ["--httpd"], short: /^-l*d/ },
  // daemon reads its options by hand: `--access-hook CMD` is a usage error.
  daemon: { long: ["--access-hook"], optional: true },
};

/**
 * The commands a git subcommand at `start` runs through the shell by its own options and words:
 * GIT_COMMAND_OPTIONS, `bisect run CMD…` and `submodule foreach CMD…` (their words joined, as
 * git hands them to `sh -c`), and what `git config NAME VALUE` (or `config set`) writes: a
 * setting whose value is a command (gitConfigCommand), or a `!` alias, which later commands run.
 */
function gitSubcommandScripts(
  words: readonly Word[],
  start: number,
): { scripts: Script[]; unreadable: boolean } {
  const sub = (words[start] as Word).text.toLowerCase();
  const scripts: Script[] = [];
  let unreadable = false;
  const take = (word: Word | undefined, text: string) => {
    if (word === undefined) return;
    if (mayVanish(word)) unreadable = true;
    scripts.push({ script: text, expands: expandsAny([word]) });
  };
  const rest = words.slice(start + 1);
  if (sub === "bisect" || sub === "submodule") {
    const verb = sub === "bisect" ? "run" : "foreach";
    const at = rest.findIndex((w) => w.text === verb);
    // `submodule foreach [--recursive] CMD…`: its options first.
    let from = at + 1;
    while (sub === "submodule" && at >= 0 && /^(?:--recursive|-q|--quiet)$/.test(rest[from]?.text ?? ""))
      from += 1;
    if (at >= 0 && from < rest.length) {
      const command = rest.slice(from);
      if (command.some(mayVanish)) unreadable = true;
      scripts.push(scriptOf(command));
    }
    return { scripts, unreadable };
  }
  if (sub === "remote-ext") {
    // `git remote-ext REMOTE COMMAND`, the ext:: transport's helper, runs COMMAND's words (as
    // git-remote-ext(1) splits them) once asked to connect, whatever protocol.allow says. A `%`
    // escape may join words or drop one (`%G…`), and a word that vanishes moves COMMAND: unread.
    const command = rest[1];
    if (command !== undefined) take(command, command.text);
    if (rest.some(mayVanish) || command?.text.includes("%")) unreadable = true;
    return { scripts, unreadable };
  }
  if (sub === "config") {
    // `git config [options] NAME VALUE` and git 2.46's `git config set [options] NAME VALUE`.
    const operands = rest.filter(
      (w, k) =>
        !w.text.startsWith("-") &&
        !/^-(?:f|-file|-blob|-type|-default|-comment|-value)$/.test(rest[k - 1]?.text ?? ""),
    );
    // A third operand is the legacy form's value-pattern: the value is set all the same. An action
    // that writes no value reads its operands as names and patterns (`--get NAME PATTERN`).
    const [first, second] = operands[0]?.text === "set" ? operands.slice(1) : operands;
    const reads =
      rest.some((w) => GIT_CONFIG_READS.test(w.text)) ||
      /^(?:get|list|unset|remove-section|rename-section|edit)$/.test(operands[0]?.text ?? "");
    if (first !== undefined && second !== undefined && !reads) {
      const command =
        /^alias\./i.test(first.text) && second.text.startsWith("!")
          ? second.text.slice(1)
          : gitConfigCommand(first.text, second.text);
      if (command !== undefined) take(second, command);
      if (mayVanish(first) || /[$`]/.test(first.text)) unreadable = true;
    }
    return { scripts, unreadable };
  }
  const spec = Object.hasOwn(GIT_COMMAND_OPTIONS, sub) ? GIT_COMMAND_OPTIONS[sub] : undefined;
  if (spec === undefined) return { scripts, unreadable };
  // A setting's command (clone's `-c core.sshCommand=…`); one whose name may change is not read.
  const setting = (word: Word | undefined, text: string) => {
    if (word === undefined) return;
    const eq = text.indexOf("=");
    const command = eq < 0 ? undefined : gitConfigCommand(text.slice(0, eq), text.slice(eq + 1));
    if (command !== undefined) take(word, command);
    if (mayVanish(word) || /[$`]/.test(text.slice(0, Math.max(eq, 0)))) unreadable = true;
  };
  // An option's value word is read as an option too (not skipped): a value git takes for
  // another option may be one of these (`--onto -x -x CMD` runs CMD), and reading more only adds
  // deny-style readings.
  for (let k = 0; k < rest.length; k += 1) {
    const word = rest[k] as Word;
    const text = word.text;
    const next = rest[k + 1];
    if (text === "--") break;
    if (text.startsWith("--")) {
      const eq = text.indexOf("=");
      const name = eq < 0 ? text : text.slice(0, eq);
      if (name.length < 4) continue;
      const into = spec.long.some((option) => option.startsWith(name))
        ? take
        : spec.config?.long.startsWith(name)
          ? setting
          : undefined;
      if (into === undefined) continue;
      if (eq >= 0) into(word, text.slice(eq + 1));
      else if (spec.optional === undefined) into(next, next?.text ?? "");
      continue;
    }
    for (const [pattern, into] of [
      [spec.short, take],
      [spec.config?.short, setting],
    ] as const) {
      const bundle = pattern?.exec(text);
      if (bundle === null || bundle === undefined) continue;
      const attached = text.slice(bundle[0].length);
      if (attached !== "") into(word, attached);
      else if (spec.optional === undefined) into(next, next?.text ?? "");
    }
  }
  return { scripts, unreadable };
}

/** git config's actions before git 2.46 that set no value from their operands. */
const GIT_CONFIG_READS =
  /^(?:--(?:get|get-all|get-regexp|get-urlmatch|get-color|get-colorbool|unset|unset-all|list|remove-section|rename-section|edit)|-[le])$/;

/** git by any path, in any case, folded (`/usr/bin/git`, `GIT` and `gıt` on macOS). */
const GIT_PROGRAM = /(?:^|\/)git$/i;
/** A git command by its dashed name, as git's exec path holds it (`/usr/lib/git-core/git-rebase`). */
const GIT_DASHED = /(?:^|\/)git-([a-z0-9][a-z0-9-]*)$/i;

/**
 * What a git command run by its dashed name (`program`, `args[at]`: `git-rebase -x CMD`) runs,
 * undefined for any other program: git runs it as `git rebase -x CMD`, with no options of git's
 * own and no alias, so it is read as that subcommand is (gitSubcommandScripts), and checked as
 * `git rebase …` by deny-style rules.
 */
function dashedGitRuns(program: string, args: readonly Word[], at: number): GitRuns | undefined {
  const sub = GIT_DASHED.exec(program)?.[1];
  if (sub === undefined) return undefined;
  const words: Word[] = [
    { kind: "word", text: "git" },
    { kind: "word", text: sub.toLowerCase() },
    ...args.slice(at + 1),
  ];
  const own = gitSubcommandScripts(words, 1);
  return { runs: [words], commands: own.scripts, unreadable: own.unreadable };
}
/** gitSubcommand: a word among git's options may become several, or none. */
const GIT_UNSURE = -2;

/**
 * The index of git's subcommand in `words` from `i`, past its options; -1 where none runs,
 * GIT_UNSURE where a word among them, an option's value too, may split.
 */
function gitSubcommand(
  words: readonly Word[],
  i: number,
  alias: (definition: string, word: Word | undefined) => void,
): number {
  for (; i < words.length; i += 1) {
    const word = words[i] as Word;
    const text = word.text;
    // A word bash may split or drop (`git $OPTS x`, `-C$IFS/`) may be options, an alias's
    // definition or the subcommand.
    if (mayVanish(word)) return GIT_UNSURE;
    if (!text.startsWith("-")) return i;
    if (GIT_FLAGS.has(text)) continue;
    // `--exec-path=DIR`: git runs its programs from DIR (a push's remote helper, any subcommand
    // not built in), which may be any program: unreadable, as other settings that run one unseen.
    if (text.startsWith("--exec-path=")) return GIT_UNSURE;
    if (GIT_ATTACHED.test(text)) {
      // `--config-env=NAME=ENVVAR`: the value is the environment's.
      if (text.startsWith("--config-env=")) alias(text.slice(13), undefined);
      continue;
    }
    if (!GIT_VALUED.has(text)) return -1;
    i += 1;
    const value = words[i];
    if (value === undefined) return -1;
    // In its own word as in the option's (`--git-dir=$D`): `-C $D` may be `-C x push`. A quoted
    // brace is data (`-c alias.x='!f() { echo a, b; }; f'`).
    if (
      value.kind !== "redirect" &&
      (value.kind === "glob" || maySplit(value) || (value.expands === true && braceList(value.text)))
    )
      return GIT_UNSURE;
    if (text === "-c") alias(value.text, value);
    else if (text === "--config-env") alias(value.text, undefined);
  }
  return -1;
}

/** An alias's text as git splits it into words (split_cmdline): blanks apart, quotes and backslashes removed. */
function gitWords(text: string): Word[] {
  const words: Word[] = [];
  let word: string | undefined;
  let quote = "";
  for (let i = 0; i < text.length; i += 1) {
    const c = text.charAt(i);
    if (quote === "" && /\s/.test(c)) {
      if (word !== undefined) words.push({ kind: "word", text: word });
      word = undefined;
    } else if (c === "\\" && quote !== "'") {
      i += 1;
      word = (word ?? "") + text.charAt(i);
    } else if (c === quote) quote = "";
    else if (quote === "" && (c === "'" || c === '"')) {
      quote = c;
      word ??= "";
    } else word = (word ?? "") + c;
  }
  if (word !== undefined) words.push({ kind: "word", text: word });
  return words;
}

// ---------------------------------------------------------------------------------------------
// Remote and container runners, and CLIs past their global options.
// ---------------------------------------------------------------------------------------------

/**
 * The global options of CLIs whose subcommand a deny rule names (`Bash(kubectl delete:*)`),
 * from each tool's own table, as git's are (GIT_VALUED): pflag's for kubectl 1.31, helm 3.16,
 * docker 27 and podman 5 (cobra: a long option with its value after `=` or in the next word, a
 * short one's attached or next, no prefixes), terraform 1.9's `-chdir=DIR`. A table, not a rule
 * for every program: whether an option takes the next word is each tool's own, and a guess at it
 * would take a value for the subcommand (`kubectl -n delete get pods` is `get`). docker and podman
 * (cobra's TraverseChildren) refuse an option not in their table; kubectl and helm (cobra's Find)
 * take it for the subcommand to read (cliSubcommand).
 */
interface CliGlobals extends Pick<WrapperSpec, "valued" | "flags"> {
  /** Read as cobra's Find reads the words before a subcommand: any option, known or not (cliSubcommand). */
  readonly cobra?: true;
}

function cobraFind(short: string, ...long: string[]): CliGlobals {
  return { ...getopt(short, ...long), cobra: true };
}

const CLI_GLOBALS: Readonly<Record<string, CliGlobals>> = {
  kubectl: cobraFind(
    "n:s:v:",
    "as= as-group= as-uid= cache-dir= certificate-authority= client-certificate= client-key= cluster=",
    "context= kubeconfig= namespace= password= profile= profile-output= request-timeout= server=",
    "tls-server-name= token= user= username= v= vmodule= log-backtrace-at= log-dir= log-file=",
    "log-file-max-size= log-flush-frequency= stderrthreshold= insecure-skip-tls-verify",
    "match-server-version warnings-as-errors disable-compression alsologtostderr logtostderr",
    "one-output skip-headers skip-log-headers add-dir-header",
  ),
  helm: cobraFind(
    "n:",
    "burst-limit= kube-apiserver= kube-as-group= kube-as-user= kube-ca-file= kube-context= kube-token=",
    "kube-tls-server-name= kubeconfig= namespace= qps= registry-config= repository-cache=",
    "repository-config= content-cache= debug kube-insecure-skip-tls-verify",
  ),
  docker: getopt(
    "c:H:l:D",
    "config= context= host= log-level= tlscacert= tlscert= tlskey= tls tlsverify debug",
  ),
  podman: getopt(
    "c:r",
    "cgroup-manager= config= conmon= connection= context= db-backend= events-backend= hooks-dir= identity=",
    "imagestore= log-level= module= network-cmd-path= network-config-dir= out= root= runroot= runtime=",
    "runtime-flag= ssh= storage-driver= storage-opt= tmpdir= url= volumepath= cdi-spec-dir=",
    "remote syslog transient-store debug noout",
  ),
  terraform: { valued: ["-chdir"], flags: [] },
};

/** Global options of podman whose value is a program it runs (its OCI runtime, conmon, the network tool). */
const PODMAN_PROGRAMS = /^--(?:runtime|conmon|network-cmd-path)$/;

/**
 * The index of a CLI's subcommand past its global options (CLI_GLOBALS), -1 where none runs (an
 * option not in the table, which docker and podman refuse, or none left), GIT_UNSURE where a word among
 * them, an option's value too, may split or vanish (`kubectl -n $NS delete …`). `option` is told
 * each option with its value.
 */
function cliSubcommand(
  args: readonly Word[],
  at: number,
  globals: CliGlobals,
  option: (name: string, value: Word | undefined) => void = () => {},
): number {
  for (let i = at + 1; i < args.length; i += 1) {
    const word = args[i] as Word;
    const text = word.text;
    if (mayVanish(word)) return GIT_UNSURE;
    if (text === "--") return -1;
    if (!text.startsWith("-") || text === "-") return i;
    const eq = text.indexOf("=");
    const name = eq < 0 ? text : text.slice(0, eq);
    if (globals.flags.includes(name)) continue;
    if (globals.valued.includes(name)) {
      if (eq < 0) {
        i += 1;
        const value = args[i];
        if (value === undefined) return -1;
        if (mayVanish(value)) return GIT_UNSURE;
        option(name, value);
      } else option(name, { kind: "word", text: text.slice(eq + 1) });
      continue;
    }
    // A short option with its value attached (`-nprod`).
    if (!text.startsWith("--") && globals.valued.includes(text.slice(0, 2))) continue;
    if (!globals.cobra) return -1;
    // cobra's Find (stripFlags) takes any other option too, for the subcommand's flag set to read
    // (`kubectl -o json delete …`, `kubectl -f x.yaml delete`): one with no `=` that is not a
    // known flag (`--name`, `-x`) takes the next word as its value, a bundle (`-abc`) none; and
    // kubectl reads `_` in an option's name as `-` (`--insecure_skip_tls_verify`).
    if (eq >= 0 || (!text.startsWith("--") && text.length > 2)) continue;
    if (globals.flags.includes(name.replaceAll("_", "-"))) continue;
    i += 1;
    const value = args[i];
    if (value === undefined) return -1;
    if (mayVanish(value)) return GIT_UNSURE;
  }
  return -1;
}

/** What a CLI, ssh or a container runner runs besides itself, for deny-style rules. */
interface CliRuns {
  /** The CLI's command with its global options left out (`kubectl delete ns x`), and moved after its subcommand. */
  readonly subcommands: readonly Word[][];
  /** Scripts a shell runs: ssh's remote command and ProxyCommand, docker's `--health-cmd`. */
  readonly scripts: readonly Script[];
  readonly unreadable: boolean;
}

const NO_RUNS: CliRuns = { subcommands: [], scripts: [], unreadable: false };

/**
 * What tmux (3.3) runs through the shell: a command given in one word (`new -d 'npm run dev'`,
 * `split-window CMD`, `run-shell CMD`, the global `-c CMD`), read as a script, and the tmux
 * commands if-shell and confirm-before run (`if true 'run-shell …'`), read as tmux's words again.
 * Its grammar is not modelled: every word that is no option is read so, deny-style, but the value
 * of an option that takes a name, a size, a format or a directory (`-t dev`, `-s "$S"`, `-c
 * "$PWD"` after the command; before it `-c` is the script); a `;` word starts the next command.
 * What tmux types into a pane is a script its shell reads: send-keys (keys by their names, `rm
 * Space -rf`), paste-buffer, pipe-pane (its `-I`) and source-file (a file of tmux commands), by
 * name, alias or unique prefix (`pa`, `so`), make the command unreadable, as does a `;` inside a
 * word of tmux commands, control mode (`-C`), which reads tmux commands from stdin, `-f`, a
 * format's `#(…)` in any word (it runs a shell command), a format that can make one (E: and T:
 * expand a value again; set-option's -F stores what a format spells), and any format in the words
 * of run-shell and if-shell, which expand them before their shell reads the command.
 */
function tmuxRuns(args: readonly Word[], at: number): CliRuns {
  const scripts: Script[] = [];
  // A format's `#(…)` runs a shell command (an option's: `set -g status-right '#(…)'` runs with
  // every redraw of an attached client's status line), in an option's value too (`new -c '#(…)'`),
  // which the loop below steps over.
  // So does one a format makes: a format expanded twice (`#{E:@x}`, `#{T:pane_title}`) runs any
  // `#(…)` the value holds, however it was set (a pane's title is any program's to set).
  let unreadable = args
    .slice(at + 1)
    .some((w) => w.kind !== "redirect" && (w.text.includes("#(") || EXPANDED_AGAIN.test(w.text)));
  let command: string | undefined;
  let operands = 0; // the words after the command that are no option
  let flags = ""; // the command's option letters so far (run-shell's -C)
  for (let i = at + 1; i < args.length; i += 1) {
    const word = args[i] as Word;
    if (word.kind === "redirect") continue;
    if (word.text.split(/[\s;{}'"]+/).some(typesIntoPane)) unreadable = true;
    if (/^\\?;$/.test(word.text)) {
      command = undefined;
      continue;
    }
    const option = /^-[A-Za-z0-9]+$/.exec(word.text)?.[0];
    // Control mode (`-C`, `-CC`) reads tmux commands from stdin, as a shell reads a script, and
    // `-f` from a file, as source-file does.
    if (command === undefined && /^-[^-cLST]*[Cf]/.test(word.text)) unreadable = true;
    if (option !== undefined) {
      if (command !== undefined) flags += option;
      if (/[tsnxyFeLSflp]$/.test(option) || (command !== undefined && option.endsWith("c"))) i += 1;
      continue;
    }
    if (command === undefined) {
      command = word.text;
      operands = 0;
      flags = "";
    } else operands += 1;
    // run-shell and if-shell expand formats in their words before the shell reads them: `run
    // '#T'` runs the pane's title, which any program's output can set (`printf '\e]2;…\a'`), and
    // `#{@x}` an option's value; the shell would read each as a comment. set-option's and
    // set-window-option's -F store the value their format expands to, which a status line then
    // expands: `#{a:35}#{a:40}` spells `#(`.
    const is = (c: readonly [string, string, string]) => tmuxCommandIs(command as string, ...c);
    if (
      operands > 0 &&
      TMUX_FORMAT.test(word.text) &&
      (FORMAT_EXPANDERS.some(is) || (flags.includes("F") && FORMAT_SETTERS.some(is)))
    )
      unreadable = true;
    // if-shell's shell command, then the tmux commands it runs; the tmux commands of the others.
    const takes = TMUX_COMMANDS_TAKEN.find((c) =>
      tmuxCommandIs(command as string, c.name, c.alias, c.prefix),
    );
    const tmuxCommands =
      takes !== undefined &&
      operands >= takes.after &&
      (takes.flag === undefined || flags.includes(takes.flag));
    if (tmuxCommands && word.text.includes(";")) unreadable = true;
    // A plain word read as a script is the program its guess names (DENY_ONLY_WRAPPERS): not read
    // again, which would make a command of many words cost a split each.
    if (!tmuxCommands && !TMUX_SCRIPT.test(word.text) && !expandsAny([word])) continue;
    // As many as a wrapper's guesses (a command names a few): past them the guesses make the
    // command unreadable all the same, and the rest are not split.
    if (scripts.length === MAX_GUESSES) return { subcommands: [], scripts: [], unreadable: true };
    const script = scriptOf([word]);
    scripts.push(tmuxCommands ? { ...script, script: `tmux ${script.script}` } : script);
  }
  return { subcommands: [], scripts, unreadable };
}

/**
 * tmux 3.3a's commands whose words are tmux commands, as tmux finds them (its name, its alias or
 * a prefix of its name no shorter than its shortest unique one): from the operand numbered
 * `after` on, with the option `flag` if given. if-shell's first operand is a shell command;
 * set-hook's (its -R runs the hook at once) and set-option's hooks; run-shell's with -C; a key's
 * binding; the templates and items of the prompts, menus and choosers a client runs.
 */
const TMUX_COMMANDS_TAKEN: readonly {
  name: string;
  alias: string;
  prefix: string;
  after: number;
  flag?: string;
}[] = [
  { name: "if-shell", alias: "if", prefix: "i", after: 2 },
  { name: "confirm-before", alias: "confirm", prefix: "con", after: 1 },
  { name: "set-hook", alias: "", prefix: "set-h", after: 1 },
  { name: "set-option", alias: "set", prefix: "set-o", after: 2 },
  { name: "set-window-option", alias: "setw", prefix: "set-w", after: 2 },
  { name: "run-shell", alias: "run", prefix: "ru", after: 1, flag: "C" },
  { name: "bind-key", alias: "bind", prefix: "bi", after: 1 },
  { name: "command-prompt", alias: "", prefix: "com", after: 1 },
  { name: "display-menu", alias: "menu", prefix: "display-men", after: 1 },
  { name: "choose-tree", alias: "", prefix: "choose-t", after: 1 },
  { name: "choose-client", alias: "", prefix: "choose-c", after: 1 },
  { name: "choose-buffer", alias: "", prefix: "choose-b", after: 1 },
  { name: "display-panes", alias: "displayp", prefix: "display-pa", after: 1 },
];

/** tmux 3.3a's commands that expand formats in the shell command they run, as tmuxCommandIs reads them. */
const FORMAT_EXPANDERS: readonly (readonly [name: string, alias: string, prefix: string])[] = [
  ["run-shell", "run", "ru"],
  ["if-shell", "if", "i"],
];

/** tmux 3.3a's commands whose -F stores a format's value (an option's), as tmuxCommandIs reads them. */
const FORMAT_SETTERS: readonly (readonly [name: string, alias: string, prefix: string])[] = [
  ["set-option", "set", "set-o"],
  ["set-window-option", "setw", "set-w"],
];

/** A format's E: or T: modifier (`#{E:@x}`, `#{=40;T:status-left}`): tmux expands its value as a format again. */
const EXPANDED_AGAIN = /#\{(?:[^:}]*;)?[ET][:;]/;

/** A `#` that tmux expands in a format (`#T`, `#{…}`, `#(…)`); not `##` or a `#` before a blank (errs towards one). */
const TMUX_FORMAT = /#[^#\s]/;

/** Whether tmux finds the command `name` (its alias `alias`, shortest unique prefix `prefix`) for `word`. */
function tmuxCommandIs(word: string, name: string, alias: string, prefix: string): boolean {
  return word === alias || (word.startsWith(prefix) && name.startsWith(word));
}

/** What makes a word more than a program's name when a shell reads it: a blank, an operator, a quote… */
const TMUX_SCRIPT = /[\s;&|<>()$`'"*?[{~\\#]/;

/** tmux's commands that type into a pane or read tmux commands from a file, as tmux finds them. */
function typesIntoPane(token: string): boolean {
  if (["send", "pasteb", "pipep", "source"].includes(token)) return true;
  if (token.length >= 6 && "send-keys".startsWith(token)) return true;
  return token.length >= 2 && ["paste-buffer", "pipe-pane", "source-file"].some((c) => c.startsWith(token));
}

/**
 * GNU screen's `-X` and `-Q` (also bundled, `-S dev -X …`) send the words after them to a running
 * session as a command of screen's own, which may type into a window (`stuff`) or run a program
 * (`exec`, `screen`): unreadable, but for `quit`, `kill` and `detach`.
 */
function screenRuns(args: readonly Word[], at: number): CliRuns {
  const words = operandsOf(args, at);
  if (screenReadsRc(words.map((w) => w.text))) return { subcommands: [], scripts: [], unreadable: true };
  const sends = words.findIndex((w) => /^-[A-Za-z]*[XQ]/.test(w.text));
  if (sends < 0) return NO_RUNS;
  const rest = words.slice(sends + 1).map((w) => w.text);
  const harmless = rest.length === 1 && ["quit", "kill", "detach"].includes(rest[0] as string);
  return { subcommands: [], scripts: [], unreadable: !harmless };
}

/**
 * Whether screen's options, up to the command it runs, hold `-c FILE`: screen's commands read
 * from a file (its .screenrc, whose `screen` and `exec` lines run programs), as tmux's -f does.
 * Read letter by letter as screen 4.9's main() reads them: `-c`, `-p` and `-e` take the rest of
 * their word as their value, or the next word (`-cFILE`, `-dmc FILE`, `-pconsole`); `-h`, `-t`,
 * `-T` and `-s` take the next word wherever they stand in a bundle (`-St dev web`), `-S` too
 * while no session is named yet, and `-r`, `-R` and `-x` the next word when it starts with no
 * `-` (`-R dev`); `-f` and `-l` the letter after them; `-ls`, `-list` and `-wipe` a session's
 * name; `-Logfile` a file. The options go on after those words.
 */
function screenReadsRc(words: readonly string[]): boolean {
  let named = false;
  const takesName = (i: number): number => {
    named = true;
    return i + 1;
  };
  for (let i = 0; i < words.length; i += 1) {
    const text = words[i] as string;
    if (!text.startsWith("-") || text.startsWith("--")) return false;
    if (text === "-Logfile") {
      i += 1;
      continue;
    }
    for (let j = 1; j < text.length; j += 1) {
      const letter = text[j] as string;
      if (letter === "c") return true;
      if (letter === "p" || letter === "e") {
        if (j === text.length - 1) i += 1;
        break;
      }
      if ("htTs".includes(letter)) i += 1;
      else if (letter === "S" && !named) i = takesName(i);
      else if ("rRx".includes(letter) && !named && i + 1 < words.length && !words[i + 1]?.startsWith("-"))
        i = takesName(i);
      else if (letter === "f") j += 1;
      else if (letter === "l" && /[si]/.test(text[j + 1] ?? "")) {
        if (!named && i + 1 < words.length) i = takesName(i);
        break;
      } else if (letter === "l") j += 1;
      else if (letter === "w") {
        if (!named && i + 1 < words.length) i = takesName(i);
        break;
      }
    }
  }
  return false;
}

/** ssh, the CLIs of CLI_GLOBALS, and kubectl's command after `--`; undefined for other programs. */
function cliRuns(name: string, args: readonly Word[], at: number): CliRuns | undefined {
  if (name === "ssh") return sshRuns(args, at);
  if (name === "scp" || name === "sftp" || name === "rsync") return copierRuns(name, args, at);
  if (name === "tar") return tarRuns(args, at);
  if (name === "man") return manRuns(args, at);
  if (name === "zip") return zipRuns(args, at);
  if (name === "make" || name === "gmake") return makeRuns(args, at);
  if (name === "npx") return npxScript(args, at);
  if (name === "tmux") return tmuxRuns(args, at);
  if (name === "screen") return screenRuns(args, at);
  if (name === "nix-shell") return nixShellScripts(args, at);
  if (name === "npm") {
    const runner = packageRunner(name, args, at);
    return runner === undefined ? undefined : npxScript(args, runner.at);
  }
  const globals = own(CLI_GLOBALS, name);
  if (globals === undefined) return undefined;
  const scripts: Script[] = [];
  let unreadable = false;
  const sub = cliSubcommand(args, at, globals, (option, value) => {
    if (name === "podman" && PODMAN_PROGRAMS.test(option) && value !== undefined)
      scripts.push(scriptOf([value]));
  });
  if (sub === GIT_UNSURE) return { subcommands: [], scripts, unreadable: true };
  const subcommands: Word[][] = [];
  const program = args[at] as Word;
  if (sub > at + 1) {
    subcommands.push([program, ...args.slice(sub)]);
    subcommands.push([program, args[sub] as Word, ...args.slice(at + 1, sub), ...args.slice(sub + 1)]);
  }
  // `kubectl exec POD -- CMD`, `kubectl run NAME --image=… -- CMD`, `kubectl debug … -- CMD`: the
  // words after `--` are the command the container runs (wrappedCommands). A word before it that
  // may split may be a `--` of its own (`kubectl exec $POD -- ls`).
  if (name === "kubectl") {
    const dashes = args.findIndex((a, i) => i > at && a.text === "--");
    if (dashes > 0 && args.slice(at + 1, dashes).some(mayVanish)) unreadable = true;
  }
  if ((name === "docker" || name === "podman") && sub > 0) {
    const run = containerRun(args, sub);
    if (run !== undefined) {
      // `--health-cmd` runs in the container's shell (Docker's CMD-SHELL).
      for (let i = run.from; i < run.to; i += 1) {
        const text = (args[i] as Word).text;
        if (text === "--health-cmd" && args[i + 1] !== undefined)
          scripts.push(scriptOf([args[i + 1] as Word]));
        else if (text.startsWith("--health-cmd="))
          scripts.push({ script: text.slice(13), expands: expandsAny([args[i] as Word]) });
      }
    }
  }
  return { subcommands, scripts, unreadable };
}

/**
 * The script of `npx -c '…'` / `npm exec --call '…'`, which npm runs in a shell (`sh -c`): the
 * last one given, read with NPX_SPEC up to the package's name (`at`: npx, or npm's `exec`).
 */
function npxScript(args: readonly Word[], at: number): CliRuns {
  const scripts: Script[] = [];
  let script: Script | undefined;
  for (let i = at + 1; i < args.length; i += 1) {
    const word = args[i] as Word;
    const text = word.text;
    if (text === "--" || !text.startsWith("-")) break;
    if ((text === "-c" || text === "--call") && args[i + 1] !== undefined) {
      script = scriptOf([args[i + 1] as Word]);
      i += 1;
    } else if (text.startsWith("--call=")) script = { script: text.slice(7), expands: expandsAny([word]) };
    else if (NPX_SPEC.valued.includes(text)) i += 1;
  }
  if (script !== undefined) scripts.push(script);
  return { subcommands: [], scripts, unreadable: false };
}

/**
 * The scripts of `nix-shell --run '…'` and `--command '…'`, which it runs in its shell (bash):
 * each given read, wherever it stands (`nix-shell -p a b --run …`), as nix-shell takes options
 * among its operands. With neither it starts an interactive shell, which reads stdin (`… |
 * nix-shell -p jq`): unreadable, as fakeroot's, and so is a word bash may split or drop (`-p
 * $PKGS`: it may be `--run CMD`).
 */
function nixShellScripts(args: readonly Word[], at: number): CliRuns {
  const scripts: Script[] = [];
  let given = false;
  let vanishes = false;
  for (let i = at + 1; i < args.length; i += 1) {
    const text = (args[i] as Word).text;
    if (mayVanish(args[i] as Word)) vanishes = true;
    if (text === "--run" || text === "--command") given = true;
    // The word after is read as a script and then as a word of its own: it may be another
    // `--run`, the first one being an option's value (`-I --run --run '…'`).
    if ((text === "--run" || text === "--command") && args[i + 1] !== undefined)
      scripts.push(scriptOf([args[i + 1] as Word]));
  }
  return { subcommands: [], scripts, unreadable: !given || vanishes };
}

/**
 * What `nix develop` and `nix shell` run: the words after `-c`/`--command`, a command as a
 * wrapper's (nix takes all the rest as its words), past nix's own options before the subcommand
 * (a word that is no option passed over when it may be the option's value, as packageRunner's;
 * `--option NAME VALUE` takes two).
 * Unreadable where a word before it may split or vanish (`$FLAGS` may be `-c`), and with no
 * `-c`: nix starts a shell, which reads stdin (`… | nix develop`). Undefined for
 * another subcommand: `nix run PKG -- ARGS` runs the package's own program, the words after `--`
 * its arguments, no command.
 */
function nixCommand(args: readonly Word[], at: number): Wrapped | undefined {
  let sub = -1;
  for (let j = at + 1; j < args.length; j += 1) {
    const text = (args[j] as Word).text;
    // A word that expands before the subcommand may be it (`nix $SUB -c …`, `nix "$SUB" -c …`)
    // or vanish (`nix $FLAGS develop -c …`): unreadable.
    if (mayBeOption(args[j] as Word)) return UNSURE;
    // `nix env shell`: nix shell's name since nix 2.24.
    if (text === "develop" || text === "shell" || (text === "env" && args[j + 1]?.text === "shell")) {
      sub = text === "env" ? j + 1 : j;
      break;
    }
    const before = args[j - 1]?.text ?? "";
    const value = j > at + 1 && before.startsWith("-") && !before.includes("=");
    if (!text.startsWith("-") && !value && !(j > at + 2 && args[j - 2]?.text === "--option"))
      return undefined;
  }
  if (sub < 0) return undefined;
  for (let j = sub + 1; j < args.length; j += 1) {
    const word = args[j] as Word;
    if (word.text === "-c" || word.text === "--command")
      return {
        commands: j + 1 < args.length ? [args.slice(j + 1)] : [],
        guesses: nixLaterCommands(args, j),
        unsure: false,
      };
    if (mayVanish(word)) return UNSURE;
  }
  return UNSURE;
}

/**
 * Where the `-c` at `at` may be an option's value (`--keep -c`, `--argstr NAME -c`: nix's
 * options take one or two words, whatever they look like), the words after the next `-c` or
 * `--command`, which nix then reads as its command (`nix develop --argstr a -c -c rm -rf /`),
 * and so on while that one may be a value too. A `-c` right after another is no value: the
 * first takes all the words after it.
 */
function nixLaterCommands(args: readonly Word[], at: number): (readonly Word[])[] {
  const isC = (j: number) => args[j]?.text === "-c" || args[j]?.text === "--command";
  const mayBeValue = (j: number) => {
    const before = args[j - 1]?.text ?? "";
    return (
      (before.startsWith("-") && !before.includes("=") && !isC(j - 1)) ||
      /^--(?:arg|argstr|override-input|option)$/.test(args[j - 2]?.text ?? "")
    );
  };
  const guesses: (readonly Word[])[] = [];
  let from = at;
  while (mayBeValue(from) && guesses.length < MAX_GUESSES) {
    let next = from + 1;
    while (next < args.length && !isC(next)) next += 1;
    if (next + 1 >= args.length) break;
    guesses.push(args.slice(next + 1));
    from = next;
  }
  return guesses;
}

/**
 * `corepack MANAGER…` runs the package manager it names (`corepack pnpm exec …`, also at a
 * version or a URL, packageManager's forms: `pnpm@9`, `pnpm@9.0.0+sha512.…`,
 * `yarn@https://…`): its words read as that manager's. Undefined for corepack's own commands
 * (`corepack enable`); unreadable where the manager's word expands (`corepack "$PM"`).
 */
function corepackCommand(args: readonly Word[], at: number): Wrapped | undefined {
  const next = args[at + 1];
  if (next !== undefined && mayBeOption(next)) return UNSURE;
  const manager = next === undefined ? null : /^(npm|npx|pnpm|pnpx|yarn|yarnpkg)(?:@.*)?$/s.exec(next.text);
  if (next === undefined || manager === null || next.kind !== "word") return undefined;
  return {
    commands: [[{ ...next, text: manager[1] as string }, ...args.slice(at + 2)]],
    guesses: [],
    unsure: false,
  };
}

/**
 * docker's and podman's `run` and `exec` (also as `container run`, `compose run`, `compose exec`)
 * at `sub`: the index of the word after that subcommand, the end of the options before the image
 * or container, and the spec to read them with; undefined for another subcommand.
 */
function containerRun(
  args: readonly Word[],
  sub: number,
  composed = false,
):
  | { readonly at: number; readonly from: number; readonly to: number; readonly spec: WrapperSpec }
  | undefined {
  let at = sub;
  let text = (args[at] as Word).text;
  let compose = composed;
  if (!composed && (text === "container" || text === "compose")) {
    compose = text === "compose";
    // compose's own options before its subcommand (`docker compose -f x.yml run …`).
    const next = compose ? cliSubcommand(args, at, COMPOSE_GLOBALS) : at + 1;
    if (next < 0 || args[next] === undefined) return undefined;
    at = next;
    text = (args[at] as Word).text;
  }
  const spec =
    text === "run"
      ? compose
        ? COMPOSE_RUN
        : CONTAINER_RUN
      : text === "exec"
        ? compose
          ? COMPOSE_EXEC
          : CONTAINER_EXEC
        : undefined;
  if (spec === undefined) return undefined;
  const start = skipOptions(args, at, spec);
  // Past the last word where the image or container is missing (`docker run --rm`).
  return { at, from: at + 1, to: Math.min(args.length, start?.command ?? args.length), spec };
}

/** docker compose's own options (v2.29). */
const COMPOSE_GLOBALS = getopt(
  "f:p:",
  "file= project-name= profile= env-file= project-directory= ansi= parallel= progress= compatibility dry-run",
  "all-resources",
);

/**
 * `docker run`'s options (docker 27's, pflag's grammar: bundled short ones, `-it`, `-p8080:80`),
 * before its image; the command follows the image. An option not here (podman's many more) makes
 * each later word a guess at the command (wrappedCommands).
 */
const CONTAINER_RUN: WrapperSpec = {
  ...getopt(
    "a:c:de:h:il:m:Pp:qtu:v:w:",
    "add-host= annotation= attach= blkio-weight= blkio-weight-device= cap-add= cap-drop= cgroup-parent=",
    "cgroupns= cidfile= cpu-count= cpu-percent= cpu-period= cpu-quota= cpu-rt-period= cpu-rt-runtime=",
    "cpu-shares= cpus= cpuset-cpus= cpuset-mems= device= device-cgroup-rule= device-read-bps=",
    "device-read-iops= device-write-bps= device-write-iops= detach-keys= dns= dns-opt= dns-option=",
    "dns-search= domainname= entrypoint= env= env-file= expose= gpus= group-add= health-cmd=",
    "health-interval= health-retries= health-start-interval= health-start-period= health-timeout=",
    "hostname= io-maxbandwidth= io-maxiops= ip= ip6= ipc= isolation= kernel-memory= label= label-file=",
    "link= link-local-ip= log-driver= log-opt= mac-address= memory= memory-reservation= memory-swap=",
    "memory-swappiness= mount= name= network= net= network-alias= net-alias= oom-score-adj= pid=",
    "pids-limit= platform= publish= pull= restart= runtime= security-opt= shm-size= stop-signal=",
    "stop-timeout= storage-opt= sysctl= tmpfs= ulimit= user= userns= uts= volume= volume-driver=",
    "volumes-from= workdir= detach init interactive no-healthcheck oom-kill-disable privileged",
    "publish-all quiet read-only rm sig-proxy tty disable-content-trust use-api-socket",
  ),
  operands: 1,
};

/** `docker exec`'s options (docker 27), before its container. */
const CONTAINER_EXEC: WrapperSpec = {
  ...getopt("de:itu:w:", "detach-keys= env= env-file= user= workdir= detach interactive privileged tty"),
  operands: 1,
};

/** `docker compose run`'s options (v2.29), before its service. */
const COMPOSE_RUN: WrapperSpec = {
  ...getopt(
    "de:il:p:Pqtu:v:w:T",
    "build cap-add= cap-drop= detach entrypoint= env= env-from-file= interactive label= name= no-TTY",
    "no-deps publish= pull= quiet quiet-build quiet-pull remove-orphans rm service-ports tty",
    "use-aliases user= volume= workdir=",
  ),
  operands: 1,
};

/** `docker compose exec`'s options (v2.29), before its service. */
const COMPOSE_EXEC: WrapperSpec = {
  ...getopt("de:itu:w:T", "detach env= index= interactive no-TTY privileged tty user= workdir= dry-run"),
  operands: 1,
};

/**
 * What docker or podman runs in a container (`docker run IMAGE CMD…`, `docker exec CONTAINER
 * CMD…`, with `--entrypoint` before it), and kubectl after its `--`: the command as a wrapper's,
 * undefined for any other program or subcommand. The image's own command is not seen.
 */
function containerCommands(name: string, args: readonly Word[], at: number): Wrapped | undefined {
  const runner = packageRunner(name, args, at);
  if (runner !== undefined) return containerCommand(args, runner.at, runner.spec);
  if (name === "nix") return nixCommand(args, at);
  if (name === "corepack") return corepackCommand(args, at);
  // `devbox shell` (also `devbox global shell`) starts a shell, which reads stdin (`… | devbox
  // shell`): unreadable, as `nix develop` with no command; `--print-env` only prints.
  if (name === "devbox") {
    const sub = args.findIndex((w, j) => j > at && !w.text.startsWith("-") && w.text !== "global");
    return args[sub]?.text === "shell" && !args.some((w) => w.text === "--print-env") ? UNSURE : undefined;
  }
  if (name === "kubectl") {
    const dashes = args.findIndex((a, i) => i > at && a.text === "--");
    if (dashes > 0)
      return dashes + 1 < args.length
        ? { commands: [args.slice(dashes + 1)], guesses: [], unsure: false }
        : undefined;
    // `kubectl exec POD CMD…`, the form before `--` (deprecated, still run by kubectl 1.30): its
    // flags may stand anywhere, so each later word that is no option is tried as the command.
    const sub = cliSubcommand(args, at, CLI_GLOBALS.kubectl as CliGlobals);
    if (sub < 0 || args[sub]?.text !== "exec") return undefined;
    // Up to MAX_GUESSES of them, each a slice: one for every word would be quadratic.
    const guesses: (readonly Word[])[] = [];
    let unsure = args.slice(sub + 1).some(mayVanish);
    for (let j = sub + 2; j < args.length && !unsure; j += 1) {
      if ((args[j] as Word).text.startsWith("-")) continue;
      if (guesses.length === MAX_GUESSES) unsure = true;
      else guesses.push(args.slice(j));
    }
    return { commands: [], guesses, unsure };
  }
  // docker-compose, compose's first version, is `docker compose`.
  const composed = name === "docker-compose" || name === "podman-compose";
  if (name !== "docker" && name !== "podman" && !composed) return undefined;
  const globals = composed ? COMPOSE_GLOBALS : (own(CLI_GLOBALS, name) as CliGlobals);
  const sub = cliSubcommand(args, at, globals);
  if (sub < 0) return sub === GIT_UNSURE ? UNSURE : undefined;
  const run = containerRun(args, sub, composed);
  if (run === undefined) return undefined;
  const found = containerCommand(args, run.at, run.spec);
  // `--entrypoint PROGRAM` runs in place of the image's, the words after the image its arguments.
  let entrypoint: Word | undefined;
  for (let i = run.from; i < run.to; i += 1) {
    const text = (args[i] as Word).text;
    if (text === "--entrypoint") entrypoint = args[i + 1];
    else if (text.startsWith("--entrypoint="))
      entrypoint = { ...(args[i] as Word), text: text.slice(13) } as Word;
  }
  if (entrypoint === undefined || entrypoint.text === "") return found;
  const program = entrypoint;
  const start = (run: readonly Word[]) => [program, ...run];
  return {
    commands: found.commands.length > 0 ? found.commands.map(start) : [[program]],
    guesses: found.guesses.map(start),
    unsure: found.unsure,
  };
}

/**
 * The command after a container runner's options and its image or container, as wrappedCommands
 * reads a wrapper's. Where that start is not sure, each later word that is no option is tried as
 * the command, up to MAX_GUESSES: after an option not known here (podman's many more), an image
 * that may be an option at run time (`"$IMAGE"`), or a value bash may split or drop (`-v
 * $PWD:/src`, common enough that failing safe on it would deny what agents run every day), from
 * the word before the image on. An expansion there is passed over; with no word tried after it,
 * it may be the command: unreadable (`docker run --rm $X`).
 */
function containerCommand(args: readonly Word[], at: number, spec: WrapperSpec): Wrapped {
  const start = skipOptions(args, at, spec);
  if (start !== undefined && !start.shifts && !start.moves)
    return {
      commands: start.command < args.length ? [args.slice(start.command)] : [],
      guesses: [],
      unsure: false,
    };
  const guesses: (readonly Word[])[] = [];
  let passed = false;
  const from = start === undefined ? at + 1 : Math.max(at + 1, start.command - spec.operands - 1);
  for (let j = from; j < args.length; j += 1) {
    const word = args[j] as Word;
    if (word.text.startsWith("-")) continue;
    if (mayVanish(word) || word.kind === "glob" || /[$`]/.test(word.text)) {
      passed ||= guesses.length === 0;
      continue;
    }
    if (guesses.length === MAX_GUESSES) return { commands: [], guesses, unsure: true };
    guesses.push(args.slice(j));
  }
  return { commands: [], guesses, unsure: passed && guesses.length === 0 };
}

/**
 * Package managers' runners: what `uv run CMD`, `uvx TOOL`, `npx PKG`, `npm exec`, `pnpm exec`,
 * `yarn exec`, `bunx`, `poetry run`, `pipenv run`, `bundle exec` and `conda run` run, by the
 * word (`at`) after which it starts. Their options are many and change between versions, so only
 * the few that take a value and are common are known: with any other, each later word is tried
 * (containerCommand). A package's name is read as its program's (`npx rimraf /` runs `rimraf /`).
 */
function packageRunner(
  name: string,
  args: readonly Word[],
  at: number,
): { readonly at: number; readonly spec: WrapperSpec } | undefined {
  const direct = own(PACKAGE_RUNNERS, name);
  if (direct === undefined) return undefined;
  if (!direct.subcommand) return { at, spec: direct.spec };
  // Past the manager's own options (`pnpm -r exec`, `pnpm --filter web exec`, `uv --directory x
  // run`, `poetry -C x run`), not known here: a word that is no option may be the value of the
  // one before it, so the search goes on past it, and stops at one that cannot be.
  for (let j = at + 1; j < args.length; j += 1) {
    const text = (args[j] as Word).text;
    if (text === "--") return undefined;
    if (direct.subcommand.includes(text)) return { at: j, spec: direct.spec };
    // `devbox global run CMD…`: run in devbox's global environment.
    if (name === "devbox" && text === "global" && args[j + 1]?.text === "run")
      return { at: j + 1, spec: direct.spec };
    // `uv tool run TOOL` is uvx.
    if (name === "uv" && text === "tool" && args[j + 1]?.text === "run")
      return { at: j + 1, spec: (PACKAGE_RUNNERS.uvx as PackageRunner).spec };
    const before = args[j - 1]?.text ?? "";
    if (!text.startsWith("-") && !(j > at + 1 && before.startsWith("-") && !before.includes("=")))
      return undefined;
  }
  return undefined;
}

interface PackageRunner {
  /** The subcommand that runs a command (`run`, `exec`); none for a runner of its own (`npx`). */
  readonly subcommand?: readonly string[];
  readonly spec: WrapperSpec;
}

const NPX_SPEC: WrapperSpec = {
  valued: ["-p", "--package", "-c", "--call", "-w", "--workspace", "--registry", "--cache", "--prefix"],
  flags: ["-y", "--yes", "--no", "-q", "--quiet", "--ws", "--workspaces", "--include-workspace-root"],
  operands: 0,
};

const PACKAGE_RUNNERS: Readonly<Record<string, PackageRunner>> = {
  uv: {
    subcommand: ["run"],
    spec: {
      valued: ["--with", "-p", "--python", "--package", "--project", "--directory", "--env-file", "--extra"],
      flags: ["--no-project", "--frozen", "--locked", "--no-sync", "--isolated", "-q", "--quiet", "-v"],
      operands: 0,
    },
  },
  uvx: {
    spec: {
      valued: ["--from", "--with", "-p", "--python"],
      flags: ["-q", "--quiet", "--isolated"],
      operands: 0,
    },
  },
  npx: { spec: NPX_SPEC },
  npm: { subcommand: ["exec", "x"], spec: NPX_SPEC },
  pnpm: {
    subcommand: ["exec", "dlx"],
    spec: { valued: ["--filter", "-C", "--dir"], flags: ["-r", "--recursive"], operands: 0 },
  },
  yarn: {
    subcommand: ["exec", "dlx"],
    spec: { valued: ["-p", "--package"], flags: ["-q", "--quiet"], operands: 0 },
  },
  bunx: { spec: { valued: [], flags: ["--bun"], operands: 0 } },
  poetry: {
    subcommand: ["run"],
    spec: { valued: ["-C", "--directory", "-P", "--project"], flags: ["-q", "-v"], operands: 0 },
  },
  pipenv: { subcommand: ["run"], spec: { valued: [], flags: [], operands: 0 } },
  // Runners of the same shape, their options not known here (each later word tried): `bun x`,
  // mamba's and micromamba's `run` (conda's), `pdm run`, `hatch run`, `pixi run`/`exec`, the
  // version managers' `exec`.
  bun: { subcommand: ["x"], spec: { valued: [], flags: [], operands: 0 } },
  mamba: { subcommand: ["run"], spec: { valued: [], flags: [], operands: 0 } },
  micromamba: { subcommand: ["run"], spec: { valued: [], flags: [], operands: 0 } },
  pdm: { subcommand: ["run"], spec: { valued: [], flags: [], operands: 0 } },
  hatch: { subcommand: ["run"], spec: { valued: [], flags: [], operands: 0 } },
  pixi: { subcommand: ["run", "exec"], spec: { valued: [], flags: [], operands: 0 } },
  mise: { subcommand: ["exec", "x"], spec: { valued: [], flags: [], operands: 0 } },
  asdf: { subcommand: ["exec"], spec: { valued: [], flags: [], operands: 0 } },
  // `direnv exec DIR CMD…`: the directory first. `devbox run`'s word may name a script of
  // devbox.json: read as a command all the same.
  direnv: { subcommand: ["exec"], spec: { valued: [], flags: [], operands: 1 } },
  devbox: {
    subcommand: ["run"],
    spec: {
      valued: ["-c", "--config", "-e", "--env", "--env-file"],
      flags: ["-q", "--quiet", "--pure"],
      operands: 0,
    },
  },
  rbenv: { subcommand: ["exec"], spec: { valued: [], flags: [], operands: 0 } },
  pyenv: { subcommand: ["exec"], spec: { valued: [], flags: [], operands: 0 } },
  bundle: {
    subcommand: ["exec"],
    spec: { valued: ["--gemfile"], flags: ["--keep-file-descriptors"], operands: 0 },
  },
  conda: {
    subcommand: ["run"],
    spec: {
      valued: ["-n", "--name", "-p", "--prefix", "--cwd"],
      flags: ["--no-capture-output", "--live-stream"],
      operands: 0,
    },
  },
};

/**
 * The scripts a program's options run (copierRuns, tarRuns, manRuns, zipRuns): `take` reads an
 * option's value `text`, given by `word`, as one, and nothing when there is no word or no text;
 * a word that may vanish (an unquoted expansion) makes the command unreadable.
 */
function optionScripts(): { take: (word: Word | undefined, text: string) => void; runs: () => CliRuns } {
  const scripts: Script[] = [];
  let unreadable = false;
  return {
    take(word, text) {
      if (word === undefined || text === "") return;
      if (mayVanish(word)) unreadable = true;
      scripts.push({ script: text, expands: expandsAny([word]) });
    },
    runs: () => ({ subcommands: [], scripts, unreadable }),
  };
}

/**
 * The programs scp, sftp and rsync run to reach a host: scp's and sftp's `-S PROGRAM` and `-D
 * SERVER`, sftp's `-s SERVER` and the
 * commands of their `-o` settings (as ssh's), rsync's remote shell (`-e`/`--rsh`, split into
 * words as rsync splits it, with the host and its own command added) and `--rsync-path`, which
 * the remote shell runs. Read as scripts, up to their first operand's `--` (rsync's options may
 * follow operands: all its words are read).
 */
function copierRuns(name: string, args: readonly Word[], at: number): CliRuns {
  const { take, runs } = optionScripts();
  for (let i = at + 1; i < args.length; i += 1) {
    const word = args[i] as Word;
    const text = word.text;
    if (text === "--") break;
    if (name === "rsync") {
      const long = /^--(rsh|rsync-path)(=?)(.*)$/s.exec(text);
      if (long !== null) {
        if (long[2] === "=") take(word, long[3] as string);
        else take(args[i + 1], args[i + 1]?.text ?? "");
        continue;
      }
      // `-e CMD`, bundled (`-avze CMD`) or attached (`-essh`).
      const short = /^-([A-Za-z0-9]*?)e(.*)$/s.exec(text);
      if (short !== null && !text.startsWith("--")) {
        if (short[2] !== "") take(word, short[2] as string);
        else take(args[i + 1], args[i + 1]?.text ?? "");
      }
      continue;
    }
    // `-D PATH` runs a local sftp server in place of ssh, its words split as argv (scp's too);
    // sftp's `-s PATH` is the server the remote shell runs.
    const short = (
      name === "sftp" ? /^-([A-Za-z0-9]*?)([oSDs])(.*)$/s : /^-([A-Za-z0-9]*?)([oSD])(.*)$/s
    ).exec(text);
    if (short === null || text.startsWith("--")) continue;
    const valueWord = short[3] !== "" ? word : args[i + 1];
    const value = short[3] !== "" ? (short[3] as string) : (args[i + 1]?.text ?? "");
    if (short[3] === "") i += 1;
    if (short[2] !== "o") take(valueWord, value);
    else {
      const setting = SSH_COMMAND_SETTING.exec(value);
      const command = setting?.[2]?.trim() ?? "";
      if (valueWord !== undefined && command !== "" && !/^none$/i.test(command)) take(valueWord, command);
    }
  }
  return runs();
}

/**
 * GNU tar 1.34's options whose value is a command it runs through `/bin/sh -c` (`-I`,
 * `--use-compress-program`, `--to-command`, `-F`, `--info-script`, `--new-volume-script`, a
 * `--checkpoint-action` of `exec=`) or as a program (`--rsh-command`; `--rmt-command`, which the
 * remote shell runs), by their long names; argp takes any unique prefix of one.
 */
const TAR_COMMAND_OPTIONS = [
  "use-compress-program",
  "to-command",
  "info-script",
  "new-volume-script",
  "rsh-command",
  "rmt-command",
  "checkpoint-action",
];
/** tar's short options that take a value (its argp table): the next word, or the rest of the word. */
const TAR_SHORT_VALUED = "bCfFgHIKLNTVX";

/**
 * What tar runs by its options (TAR_COMMAND_OPTIONS), read as scripts wherever they stand (argp
 * permutes them) up to `--`: long ones by any unique prefix, `=VALUE` or the next word; short
 * ones bundled (`-xI CMD`, `-ICMD`) and in the old style's first word, whose letters take the
 * next words in turn (`tar cIf CMD a.tar`). TAR_OPTIONS (tar reads it first) is noteAssignment's.
 */
function tarRuns(args: readonly Word[], at: number): CliRuns {
  const { take, runs } = optionScripts();
  const short = (letter: string, value: Word | undefined, text: string) => {
    if (letter === "I" || letter === "F") take(value, text);
  };
  let i = at + 1;
  // The old style: `tar cIf CMD a.tar`, letters with no dash, each valued one taking the next word.
  const first = args[i];
  if (first !== undefined && !first.text.startsWith("-")) {
    let next = i + 1;
    for (const letter of first.text) {
      if (!TAR_SHORT_VALUED.includes(letter)) continue;
      short(letter, args[next], args[next]?.text ?? "");
      next += 1;
    }
    i = next;
  }
  for (; i < args.length; i += 1) {
    const word = args[i] as Word;
    const text = word.text;
    if (text === "--") break;
    const long = /^--([a-z-]+)(=?)(.*)$/s.exec(text);
    if (long !== null) {
      const given = long[1] as string;
      // An ambiguous prefix (`--to`: --totals, --to-stdout) makes tar refuse to run: read as the
      // command option all the same. `--checkpoint` is an option of its own.
      const named = TAR_COMMAND_OPTIONS.find((n) => n.startsWith(given));
      if (named === undefined || given === "checkpoint") continue;
      const valueWord = long[2] === "=" ? word : args[i + 1];
      let value = long[2] === "=" ? (long[3] as string) : (args[i + 1]?.text ?? "");
      if (long[2] !== "=") i += 1;
      if (named === "checkpoint-action") {
        if (!value.startsWith("exec=")) continue;
        value = value.slice("exec=".length);
      }
      take(valueWord, value);
      continue;
    }
    if (!/^-[^-]/.test(text)) continue;
    for (let j = 1; j < text.length; j += 1) {
      const letter = text[j] as string;
      if (!TAR_SHORT_VALUED.includes(letter)) continue;
      if (j + 1 < text.length) short(letter, word, text.slice(j + 1));
      else {
        short(letter, args[i + 1], args[i + 1]?.text ?? "");
        i += 1;
      }
      break;
    }
  }
  return runs();
}

/**
 * What man (man-db 2.11) runs by its options: its pager (`-P`/`--pager`, run through the shell
 * as MANPAGER is) and the browser of `-H`/`--html` (an optional value, attached only), read as
 * scripts; short options bundled (`-aP CMD`), long ones by any unique prefix (`--pag=`, `--ht=`).
 */
function manRuns(args: readonly Word[], at: number): CliRuns {
  const { take, runs } = optionScripts();
  for (let i = at + 1; i < args.length; i += 1) {
    const word = args[i] as Word;
    const text = word.text;
    if (text === "--") break;
    const long = /^--(pag(?:e|er)?|ht(?:m|ml)?)(?:(=)(.*))?$/s.exec(text);
    if (long !== null) {
      if (long[1]?.startsWith("ht")) take(word, long[3] ?? "");
      else if (long[2] === "=") take(word, long[3] as string);
      else {
        take(args[i + 1], args[i + 1]?.text ?? "");
        i += 1;
      }
      continue;
    }
    if (!/^-[^-]/.test(text)) continue;
    for (let j = 1; j < text.length; j += 1) {
      const letter = text[j] as string;
      if (letter === "H") take(word, text.slice(j + 1));
      if ("HTX".includes(letter)) break;
      if (!MAN_SHORT_VALUED.includes(letter)) continue;
      if (j + 1 < text.length) {
        if (letter === "P") take(word, text.slice(j + 1));
      } else {
        if (letter === "P") take(args[i + 1], args[i + 1]?.text ?? "");
        i += 1;
      }
      break;
    }
  }
  return runs();
}

/** man-db's short options that take a value (its argp table; `-T`, `-H` and `-X` take one attached only). */
const MAN_SHORT_VALUED = "CRLmMSseprEP";

/**
 * zip 3.0's `-TT CMD`/`--unzip-command CMD`, the command it tests an archive with (through
 * system(), the shell), read as a script.
 */
function zipRuns(args: readonly Word[], at: number): CliRuns {
  const { take, runs } = optionScripts();
  for (let i = at + 1; i < args.length; i += 1) {
    const word = args[i] as Word;
    const option = /^(?:-TT|--unzip-command)(?:(=)(.*))?$/s.exec(word.text);
    if (option === null) continue;
    if (option[1] === "=") take(word, option[2] as string);
    else {
      take(args[i + 1], args[i + 1]?.text ?? "");
      i += 1;
    }
  }
  return runs();
}

/**
 * What GNU make runs from its own words rather than a makefile: a `NAME != CMD` definition runs
 * CMD through the shell (read as a script), and a `SHELL` that is no shell by its absolute path
 * (it runs every recipe), `.SHELLFLAGS`, a `$(shell …)` (or `eval`, `file`, `guile`) in a
 * definition, which `:=` expands at once, makefile text given by `-E`/`--eval`, and a makefile
 * read from stdin (`-f -`) make the command unreadable.
 */
function makeRuns(args: readonly Word[], at: number): CliRuns {
  const scripts: Script[] = [];
  let unreadable = false;
  for (let i = at + 1; i < args.length; i += 1) {
    const word = args[i] as Word;
    const text = word.text;
    if (/^--ev(?:a|al)?(?:=|$)/.test(text) || /^-[^-CfIoWjlO]*E/.test(text)) unreadable = true;
    const file = /^(?:-[^-CIoWjlO]*f|--(?:file|makefile)=?)(.*)$/s.exec(text);
    if (
      file !== null &&
      ((file[1] === "" ? args[i + 1]?.text : file[1]) ?? "").match(/^(?:-|\/dev\/(?:stdin|fd\/\d+))$/)
    )
      unreadable = true;
    const definition = /^\s*([^\s=:!?+]+)\s*([:!?+]*)=(.*)$/s.exec(text);
    if (definition === null || text.startsWith("-")) continue;
    const name = definition[1] as string;
    const value = definition[3] as string;
    if (/\$[({]\s*(?:shell|eval|file|guile)\b/.test(value)) unreadable = true;
    if (name === ".SHELLFLAGS" || (name === "SHELL" && (expandsAny([word]) || !shellByPath(value.trim()))))
      unreadable = true;
    if (definition[2] === "!") {
      if (value.includes("$")) unreadable = true;
      else scripts.push({ script: value, expands: expandsAny([word]) });
    }
  }
  return { subcommands: [], scripts, unreadable };
}

/** The variables make reads options and definitions from, as from its own words. */
const MAKE_FLAGS_VARIABLES = /^(?:GNUMAKEFLAGS|MAKEFLAGS|MFLAGS)$/;

/**
 * Whether make given these MAKEFLAGS runs what makeRuns refuses or reads as a script. make splits
 * the value at blanks, a backslash keeping the character after it, and puts a dash before a first
 * word that is neither an option nor a definition (`ks` is `-ks`; GNU make's decode_env_switches).
 */
function makeFlagsRun(value: string): boolean {
  const words = (value.match(/(?:\\[\s\S]|[^ \t])+/g) ?? []).map((word) => word.replace(/\\([\s\S])/g, "$1"));
  const first = words[0];
  if (first !== undefined && !first.startsWith("-") && !first.includes("=")) words[0] = `-${first}`;
  const args = ["make", ...words].map((text): Word => ({ kind: "word", text }));
  const { scripts, unreadable } = makeRuns(args, 0);
  return unreadable || scripts.length > 0;
}

/**
 * OpenSSH's options (ssh.c's getopt string, 9.8), which it reads again after the host: `ssh host
 * -p 22 cmd` (ssh.c `goto again`). The words after them are joined with blanks and run by the
 * remote user's shell.
 */
const SSH_SPEC: WrapperSpec = {
  ...getopt("1246ab:c:e:fgi:kl:m:no:p:qstvxAB:CD:E:F:GI:J:KL:MNO:P:Q:R:S:TVw:W:XYy"),
  operands: 0,
};

/** ssh's options after which it runs no remote command: `-N`, `-W` (a forward), `-O` (a master's control), `-Q`, `-G`, `-V`. */
const SSH_NO_COMMAND = new Set(["-N", "-W", "-O", "-Q", "-G", "-V"]);

/** `-o` settings whose value is a command: ProxyCommand and LocalCommand run locally in a shell, RemoteCommand on the host. */
const SSH_COMMAND_SETTING =
  /^\s*(proxycommand|localcommand|remotecommand|knownhostscommand)\s*(?:=\s*|\s)(.*)$/is;

/**
 * What `ssh` runs: its remote command (the words after the host and its options, joined as ssh
 * joins them, run by the remote shell), and the commands its `-o` settings name. Unreadable with
 * no command at all (a login shell reads stdin: `… | ssh host`, `ssh host <<EOF`), or where a
 * word among its options or the host may split or vanish (`ssh $HOST rm -rf /`).
 */
function sshRuns(args: readonly Word[], at: number): CliRuns {
  const scripts: Script[] = [];
  const unsure: CliRuns = { subcommands: [], scripts, unreadable: true };
  let host = false;
  let none = false;
  let remote = false; // a RemoteCommand
  let i = at + 1;
  while (i < args.length) {
    const word = args[i] as Word;
    const text = word.text;
    if (mayVanish(word)) return unsure;
    if (text === "--") {
      i += host ? 1 : 2;
      host = host || i <= args.length;
      break;
    }
    if (!text.startsWith("-") || text === "-") {
      if (host) break;
      // An input line xargs puts there may be an option (`-oProxyCommand=…`).
      if (word.kind === "word" && word.runTime === true) return unsure;
      host = true;
      i += 1;
      continue;
    }
    const option = readOption(text, SSH_SPEC);
    if (option === undefined) return NO_RUNS; // ssh refuses it: nothing runs
    const valueWord = option.width === 2 ? args[i + 1] : undefined;
    if (valueWord !== undefined && mayVanish(valueWord)) return unsure;
    if (option.names.some((name) => SSH_NO_COMMAND.has(name))) none = true;
    if (option.names.at(-1) === "-o") {
      const value = valueWord?.text ?? option.attached;
      const setting = SSH_COMMAND_SETTING.exec(value);
      const command = setting?.[2]?.trim() ?? "";
      if (setting !== null && command !== "" && !/^none$/i.test(command)) {
        const expands = expandsAny([valueWord ?? word]);
        scripts.push({ script: command, expands });
        if ((setting[1] as string).toLowerCase() === "remotecommand") remote = true;
      }
    }
    i += option.width;
  }
  if (!host) return { subcommands: [], scripts, unreadable: false };
  const rest = args.slice(i);
  if (rest.length > 0) scripts.push(scriptOf(rest));
  return { subcommands: [], scripts, unreadable: rest.length === 0 && !none && !remote };
}

/**
 * The programs besides the shells and the wrapper tables that run a command or script they are
 * given, each read by name in `peel`, `wrappedScript` or `findCommands`. (The wrappers with a
 * `-c` script, su, runuser, sg, script and flock, are all in DENY_ONLY_WRAPPERS as well.)
 */
const OTHER_RUNNERS: ReadonlySet<string> = new Set([
  "env",
  "watch",
  "at",
  "batch",
  "crontab",
  "find",
  "fd",
  "fdfind",
  "parallel",
  "sem",
]);

/** The runners whose commands `findCommands` reads. */
const FINDS: ReadonlySet<string> = new Set(["find", "fd", "fdfind"]);

/**
 * The programs whose commands cliRuns and containerCommands read (ssh, docker, kubectl, the
 * package runners…): by another path or case (`SSH`, `/opt/homebrew/bin/kubectl`) read as these
 * are. Not runsOtherCommands: with no command of their own they run none of xargs' input
 * (`… | xargs docker rm`).
 */
function readsWhatItRuns(name: string): boolean {
  return (
    Object.hasOwn(CLI_GLOBALS, name) ||
    Object.hasOwn(PACKAGE_RUNNERS, name) ||
    /^(?:ssh|scp|sftp|rsync|tar|man|zip|g?make|(?:docker|podman)-compose|nix|nix-shell|corepack)$/.test(name)
  );
}

/** Whether a program of this name runs a command or script it is given: a shell or a wrapper. */
function runsOtherCommands(name: string): boolean {
  return (
    SHELLS.has(name) ||
    Object.hasOwn(WRAPPERS, name) ||
    Object.hasOwn(DENY_ONLY_WRAPPERS, name) ||
    OTHER_RUNNERS.has(name)
  );
}

/**
 * A path whose last part is a plain name (not `!` before an extended glob's `(`), with no bracket,
 * brace or backquote anywhere (Word `quoted`).
 */
const QUOTED_PATH = /^[^[{`]*\/[\w.-]+$/;

/** The placeholder `substitute` leaves for a `<(…)` or `>(…)`. */
const PROCESS_SUBSTITUTION = /^[<>]\(/;

/**
 * A file that is the process's stdin, however the path is spelled (`//dev/./stdin`,
 * `/proc/$$/fd/0`): a script read from one is read from the pipe.
 */
function readsStdin(file: string): boolean {
  if (file === "-") return true;
  // Relative or not (`../../dev/stdin` may well reach it), through any `/proc/PID/root/`; any
  // descriptor, not only 0 (`. /dev/fd/3 3<<< '…'`).
  const path = pathSegments(file)
    .join("/")
    .replace(/^(?:proc\/[^/]+\/root\/)+/, "");
  return /^(?:dev\/(?:stdin|fd\/\d+)|proc\/[^/]+\/(?:task\/[^/]+\/)?fd\/\d+)$/.test(path);
}

/**
 * A shell by its absolute path (`/bin/bash`, `/opt/homebrew/bin/zsh`): su and script do not search
 * PATH for `-s SHELL` or SHELL (`SHELL=bash` runs ./bash), and flock searches a PATH that may change.
 */
function shellByPath(value: string): boolean {
  // No `..`: the kernel follows a link before it (`/proc/self/cwd/../bin/bash`).
  const path = `/${pathSegments(value).join("/")}`;
  return value.startsWith("/") && !value.split("/").includes("..") && SHELL_PATH.test(path);
}

/**
 * A shell where shells are installed: the system's directories, Homebrew's, Nix's, pkgsrc's and
 * MacPorts'. Not any directory: a link named `bash` elsewhere may be any program (`ln -s rm x/bash`).
 */
const SHELL_PATH = new RegExp(
  String.raw`^/(?:(?:usr/)?(?:local/)?s?bin|opt/homebrew/bin|home/linuxbrew/\.linuxbrew/bin|run/current-system/sw/bin|nix/store/[^/]+/bin|usr/pkg/bin|opt/local/bin)/(?:${[...SHELLS].join("|")})$`,
);

/**
 * The wrappers that run only a script (wrappedScript), and a shell when given none (`-c`, sg's
 * command); parallel and sem run their inputs as commands when given none.
 */
const SCRIPT_SHELLS: ReadonlySet<string> = new Set(["su", "sg", "script", "runuser", "parallel", "sem"]);

/** su's and runuser's options (util-linux 2.38's getopt string), which they read in any order. */
const SU_SPEC: WrapperSpec = {
  ...getopt(
    "c:fg:G:lmpPs:u:w:",
    "command= session-command= fast group= supp-group= login pty shell= user= preserve-environment",
    "whitelist-environment=",
  ),
  operands: 0,
};

/** script's (util-linux 2.38's), which it reads in any order as well. */
const SCRIPT_SPEC: WrapperSpec = {
  ...getopt(
    "aB:c:eE:fI:O:o:qm:T:t::",
    "append command= echo= flush force log-in= log-io= log-out= log-timing= logging-format= output-limit=",
    "quiet return timing[=]",
  ),
  operands: 0,
};

/**
 * The options of a wrapper that reads them in any order (su, runuser, script), each with its value
 * (or "") and the word that holds it, and its other words (after `--` all of them), read as getopt
 * reads them, which moves the options first (`su root -c make`, `runuser make -u app`). `moves`: an
 * option or its value may be no word or several (`runuser -u $U make`). Undefined on an option
 * not known: the tool fails on it.
 */
function permutedOptions(args: readonly Word[], at: number, spec: WrapperSpec): Permuted | undefined {
  const options: Permuted["options"][number][] = [];
  const words: Word[] = [];
  let moves = false;
  for (let i = at + 1; i < args.length; ) {
    const word = args[i] as Word;
    const arg = word.text;
    if (arg === "--") {
      words.push(...args.slice(i + 1));
      break;
    }
    if (!arg.startsWith("-") || arg === "-") {
      // One that may become an option at run time may be any (`su - "$U" -c make`, U='-s ./x').
      moves ||= mayBeOption(word);
      words.push(word);
      i += 1;
      continue;
    }
    const option = readOption(arg, spec);
    if (option === undefined) return undefined;
    const next = option.width === 2 ? args[i + 1] : undefined;
    moves ||= mayVanish(word) || (next !== undefined && mayVanish(next));
    const holder = option.width === 2 ? next : word;
    const value = option.width === 2 ? (next?.text ?? "") : option.attached;
    for (const name of option.names)
      options.push(
        name === option.names.at(-1) ? { name, value, ...(holder && { word: holder }) } : { name, value: "" },
      );
    i += option.width;
  }
  return { options, words, moves };
}

/**
 * A word that may become an option at run time: one that expands (Word `expands`: a `$`, quoted
 * too, a pattern, a brace list, a `~` prefix, `~/x` with HOME='-s/…'), or a placeholder.
 */
function mayBeOption(word: Word): boolean {
  if (word.kind === "redirect") return false;
  return word.kind === "glob" || word.runTime === true || word.expands === true || braceList(word.text);
}

interface Permuted {
  readonly options: readonly { readonly name: string; readonly value: string; readonly word?: Word }[];
  readonly words: readonly Word[];
  readonly moves: boolean;
}

/**
 * runuser's options and words when it is given `-u USER`: then it runs its words that are no
 * options, and without one it fails. Undefined otherwise: without `-u` it is su.
 */
function runuserWithUser(args: readonly Word[], at: number): Permuted | undefined {
  const read = permutedOptions(args, at, SU_SPEC);
  return read?.options.some((o) => o.name === "-u" || o.name === "--user") ? read : undefined;
}

/** The test command's names: programs, though they are brackets. */
const TEST_WORDS: ReadonlySet<string> = new Set(["[", "[["]);
const STDIN_SHELL_WRAPPERS: ReadonlySet<string> = new Set(["sudo", "doas"]);

/** `sudo -s`, `sudo -i`, `doas -s` (flags alone or bundled) with no command after them. */
function stdinShellWrapper(args: readonly Word[], at: number): boolean {
  let shell = false;
  for (let i = at + 1; i < args.length; i += 1) {
    const arg = (args[i] as Word).text;
    if (arg === "--") return shell && i + 1 >= args.length;
    if (!arg.startsWith("-")) return false;
    if (/^-[A-Za-z]*[si][A-Za-z]*$/.test(arg) || arg === "--shell" || arg === "--login") shell = true;
  }
  return shell;
}

/** Guesses at where a command starts when a wrapper's options are not understood. */
const MAX_GUESSES = 16;
/** Commands expanded from such guesses in one command, nested ones included. */
const MAX_GUESSED_COMMANDS = 32;

/**
 * The commands a command left in place runs besides itself: a deny-only wrapper's, after its
 * options, or, when they are not understood (`env --block-signal rm -rf /`, `sudo
 * --preserve-env=PATH rm -rf /`), guesses starting at each of the next words that is not an
 * option; and what find and fd run (`findCommands`). None for any other command. `unsure`: a
 * command may start where none is read (the command is unreadable).
 */
function wrappedCommands(args: readonly Word[], at: number): Wrapped {
  const name = programName((args[at] as Word).text);
  if (name === "command") return NONE; // `command -v rm` only prints where rm is
  if (FINDS.has(name)) return findCommands(name === "find", args, at);
  const contained = containerCommands(name, args, at);
  if (contained !== undefined) return contained;
  // `coproc NAME { rm …; }` names the coprocess first; `coproc rm …` does not.
  if (name === "coproc") {
    // A quoted `'{'` reads the same here: both readings are checked.
    const named = COMPOUND_STARTS.has(args[at + 2]?.text ?? "");
    const starts = at + 1 < args.length ? (named ? [at + 1, at + 2] : [at + 1]) : [];
    return { commands: starts.map((start) => args.slice(start)), guesses: [], unsure: false };
  }
  if (optionRunsProgram(name, args, at)) return UNSURE;
  // su, sg and script run their script (wrappedScript) and no command: the words after su's user
  // are its shell's arguments, sg drops those after its command, script's operand is its log.
  // runuser is su, unless given `-u USER`: then it runs its words that are no options.
  if (SCRIPT_SHELLS.has(name)) {
    const read = name === "runuser" ? runuserWithUser(args, at) : undefined;
    if (read === undefined) return NONE;
    if (read.moves) return UNSURE;
    return { commands: read.words.length > 0 ? [read.words] : [], guesses: [], unsure: false };
  }
  const denyOnly = own(DENY_ONLY_WRAPPERS, name);
  const spec = denyOnly ?? own(WRAPPERS, name) ?? (name === "env" ? ENV_SPEC : undefined);
  if (spec === undefined) return NONE;
  const start = spec.guessOnly ? undefined : skipOptions(args, at, spec);
  if (start?.none) return NONE;
  if (start?.moves) return UNSURE;
  if (start !== undefined && denyOnly === undefined) return NONE; // `timeout 10`: all understood
  if (spec.shell && start !== undefined && start.command >= args.length) return UNSURE;
  // xargs puts each input line where its replace string stands (withPlaceholder).
  const found = name === "xargs" ? xargsReplace(args, at) : undefined;
  if (found === UNKNOWN) return UNSURE;
  const words =
    found === undefined ? args : withPlaceholder(args, (text) => (text.includes(found) ? "any" : undefined));
  const appended = name === "xargs" && found === undefined;
  if (start !== undefined && !start.shifts) {
    const from = start.command;
    // `flock FILE -c SCRIPT` runs its script (wrappedScript) and no command.
    if (name === "flock" && /^(?:-c|--command)$/.test(args[from]?.text ?? "")) return NONE;
    return { commands: from < args.length ? [words.slice(from)] : [], guesses: [], unsure: false, appended };
  }
  // Options not known here (or an operand that may be one): each later word that is no option
  // may be where the command starts.
  const guesses: (readonly Word[])[] = [];
  let passed = 0;
  for (let j = start?.command ?? at + 1; j < args.length; j += 1) {
    const word = args[j] as Word;
    // Before the first guess, a word that may be no word or several may make the command's
    // program (`xargs -P$(…) -rf /`, `strace -e $E make`): as skipOptions' `moves`.
    if (guesses.length === 0 && mayVanish(word)) return UNSURE;
    if (word.text.startsWith("-") || spec.notProgram?.test(word.text)) continue;
    const expands = word.kind === "glob" || /[$`]/.test(word.text);
    // An operand of a wrapper whose operands are not modelled (`strace -p "$PID"`). These take
    // one before their command at most: of two before the first guess, one is the program
    // (`strace -e "$E" "$CMD" …`). An expansion that is the program after an operand or an
    // option's value is not seen (`strace -s 200 "$CMD"`): that needs the tool's grammar.
    if (spec.guessOnly && expands) {
      if (guesses.length === 0 && ++passed > 1) return UNSURE;
      continue;
    }
    // Elsewhere a guess there names no program (`expand`): the command is unreadable at once,
    // whatever the later guesses hold (`flock "$L" flock "$L" …` stays linear).
    if (expands) return UNSURE;
    // A word past the guesses may be the command.
    if (guesses.length === MAX_GUESSES) return { commands: [], guesses, unsure: true };
    guesses.push(words.slice(j));
  }
  return { commands: [], guesses, unsure: spec.shell === true && guesses.length === 0, appended };
}

/**
 * An option of a guess-only wrapper that runs a program besides its command: strace's `-o |CMD`
 * or `-o !CMD` pipes the trace to a shell command (so a file name made at run time may); su's and
 * runuser's `-s SHELL` is the program that runs their `-c` command (unless it is a shell);
 * systemd-run's `-p ExecStartPre=…` and the other Exec properties run commands, and its `-S`
 * starts `$SHELL`, which reads stdin.
 */
function optionRunsProgram(name: string, args: readonly Word[], at: number): boolean {
  if (name === "strace") {
    // The traced command's own `-o` is not strace's (`strace -f gcc -o out main.c`). A value that
    // may start with `|` or `!` at run time pipes too: an expansion, a pattern (`[|]x`), a `~`,
    // a placeholder (`xargs -I{} strace -o {}`).
    const pipes = (value: string, word: Word | undefined) =>
      /^[|!$`[*?{~]/.test(value) || (word !== undefined && word.kind === "word" && word.runTime === true);
    return someOption(args, at, name, (o, value, word) =>
      o === "--output" || o === "-o" ? pipes(value, word) : false,
    );
  }
  if (name === "su" || name === "runuser") {
    const read = permutedOptions(args, at, SU_SPEC);
    return (
      read?.moves === true ||
      (read?.options ?? []).some((o) => ["-s", "--shell"].includes(o.name) && !shellByPath(o.value))
    );
  }
  if (name === "fakeroot") return someOption(args, at, name, (o) => ["-l", "--lib", "--faked"].includes(o));
  if (name !== "systemd-run") return false;
  return (
    args.slice(at + 1).some((w) => /(?:Exec[A-Za-z]*|Environment(?:File)?)=/.test(w.text)) ||
    someOption(args, at, name, (o) => o === "-S" || o === "--shell")
  );
}

/**
 * Whether one of a wrapper's options passes `test`, read up to its first word that is no option
 * by its table (DENY_ONLY_WRAPPERS), a long one by its name or a unique prefix; `word` holds the
 * value. A long option without `=` that is not in the table (one a later version adds) is read
 * both ways: the next word is its value, unless it is an option (`strace --new-flag -o '|cmd'`),
 * then read as one.
 */
function someOption(
  args: readonly Word[],
  at: number,
  name: string,
  test: (option: string, value: string, word: Word | undefined) => boolean,
): boolean {
  const spec = own(DENY_ONLY_WRAPPERS, name) as WrapperSpec;
  const takes = (option: string) => spec.valued.includes(option);
  for (let k = at + 1; k < args.length; k += 1) {
    const word = args[k] as Word;
    const text = word.text;
    if (text === "--" || !text.startsWith("-") || text === "-") return false;
    if (text.startsWith("--")) {
      const eq = text.indexOf("=");
      const known = longOption(eq < 0 ? text : text.slice(0, eq), spec);
      const option = known ?? (eq < 0 ? text : text.slice(0, eq));
      if (eq >= 0) {
        if (test(option, text.slice(eq + 1), word)) return true;
        continue;
      }
      const next = known === undefined || takes(known) ? args[k + 1] : undefined;
      if (test(option, next?.text ?? "", next)) return true;
      if (next !== undefined && (known !== undefined || !next.text.startsWith("-"))) k += 1;
      continue;
    }
    for (let c = 1; c < text.length; c += 1) {
      const option = `-${text.charAt(c)}`;
      const attached = c + 1 < text.length;
      const holder = !takes(option) ? undefined : attached ? word : args[++k];
      const value = holder === undefined ? "" : attached ? text.slice(c + 1) : holder.text;
      if (test(option, value, holder)) return true;
      if (takes(option)) break;
    }
  }
  return false;
}

interface Wrapped {
  readonly commands: readonly (readonly Word[])[];
  readonly guesses: readonly (readonly Word[])[];
  readonly unsure: boolean;
  /** xargs adds its input lines to the end of them (it has no replace string). */
  readonly appended?: boolean;
}

const NONE: Wrapped = { commands: [], guesses: [], unsure: false };
/** No command can be named: one may start where none is read. */
const UNSURE: Wrapped = { commands: [], guesses: [], unsure: true };

/**
 * A command whose words holding a placeholder (find's `{}`, xargs' replace string) become a
 * file's name or an input line at run time: such a word expands (Word `expands`), so a script
 * holding one (`-exec sh -c 'echo {}' \;`, `xargs -I{} sh -c 'echo {}'`) is unreadable, as `eval
 * echo *` is: a name becomes code. `holds` says "any" where the word may become any word (an
 * input line, fd's `{/}`: an option too, Word `runTime`), "path" where it is a path that starts
 * with a directory (find's `{}`). As the program, neither can be named.
 */
function withPlaceholder(
  words: readonly Word[],
  holds: (text: string) => "any" | "path" | undefined,
): Word[] {
  return words.map((word) => {
    const held = word.kind === "redirect" ? undefined : holds(word.text);
    if (held === undefined) return word;
    return held === "any" ? { ...word, expands: true, runTime: true } : { ...word, expands: true };
  });
}

/**
 * The string xargs replaces with each input line: `-I STR`, `-iSTR` (`{}` alone), `--replace[=STR]`
 * (any unique prefix, as getopt takes it), also after bundled flags (`-0I%`).
 */
function xargsReplace(args: readonly Word[], at: number): string | undefined | typeof UNKNOWN {
  const spec = DENY_ONLY_WRAPPERS.xargs as WrapperSpec;
  let replace: string | undefined;
  for (let i = at + 1; i < args.length; i += 1) {
    const arg = (args[i] as Word).text;
    if (arg === "--" || !arg.startsWith("-") || arg === "-") break;
    if (arg.startsWith("--")) {
      const eq = arg.indexOf("=");
      // An option's name made at run time may be `--replace` (`--$R=%`).
      if (RUN_TIME_OPTION.test(eq < 0 ? arg : arg.slice(0, eq))) return UNKNOWN;
      const name = longOption(eq < 0 ? arg : arg.slice(0, eq), spec);
      if (name === "--replace") replace = eq < 0 ? "{}" : arg.slice(eq + 1);
      else if (eq < 0 && name !== undefined && spec.valued.includes(name)) i += 1;
      continue;
    }
    for (let k = 1; k < arg.length; k += 1) {
      const option = `-${arg.charAt(k)}`;
      const rest = arg.slice(k + 1);
      // An option letter made at run time may be `-I` (`xargs -$F env %`, `-?%` beside a file `-I%`);
      // a value made so is only a value (`-P$(nproc)`).
      if (RUN_TIME_OPTION.test(arg.charAt(k))) return UNKNOWN;
      if (spec.flags.includes(option)) continue;
      if (option === "-I") replace = rest || args[++i]?.text;
      else if (option === "-i") replace = rest || "{}";
      else if (spec.valued.includes(option) && rest === "") i += 1;
      break;
    }
  }
  // One made at run time is not known; one like an option hides itself from the wrapper's own
  // reading of its options (`xargs -I -- env --`).
  if (replace !== undefined && (/[$`*?[~]/.test(replace) || braceList(replace) || replace.startsWith("-")))
    return UNKNOWN;
  return replace === "" ? undefined : replace;
}

const UNKNOWN = Symbol("unknown");

/** The options of find (`-exec`, `-execdir`, `-ok`, `-okdir`) and fd that run a command per file found. */
const FIND_EXEC = new Set(["-exec", "-execdir", "-ok", "-okdir"]);
const FD_EXEC = new Set(["-x", "--exec", "-X", "--exec-batch"]);
/** fd's short flags that take no value, which may come before its `-x` in one word (`-Hx`). */
const FD_FLAGS = /^-[HIusigFalLp01qhV]*[xX]/;

/** find's tests and actions that take a value (two: -fprintf; also -newerXY), which may be `-exec` itself. */
const FIND_VALUED: ReadonlySet<string> = new Set(
  ["-name", "-iname", "-path", "-ipath", "-wholename", "-iwholename", "-regex", "-iregex", "-lname"]
    .concat(["-ilname", "-type", "-xtype", "-user", "-group", "-uid", "-gid", "-perm", "-size", "-links"])
    .concat(["-inum", "-samefile", "-newer", "-anewer", "-cnewer", "-used", "-mtime", "-atime", "-ctime"])
    .concat(["-mmin", "-amin", "-cmin", "-maxdepth", "-mindepth", "-fstype", "-context", "-printf"])
    .concat(["-fprint", "-fprint0", "-fls", "-fprintf", "-regextype", "-files0-from", "-D"]),
);

/** The names find (`{}`) and fd (`{}`, `{/}`, `{//}`, `{.}`, `{/.}`) replace with a file's. */
const FILE_PLACEHOLDER = /\{(?:\/{1,2}|\.|\/\.)?\}/;

/**
 * The commands `find … -exec CMD ARGS… ;` (or `{} +`; also -execdir, -ok, -okdir) and `fd … -x
 * CMD ARGS… [;]` (also --exec, -X, --exec-batch, `--exec=CMD`, `-xCMD`, `-Hx`) run, each up to its
 * `;` (find also ends one at `+` right after `{}`), or to the end. find's `{}` is a path that
 * starts with the starting point; fd's other placeholders are bare names (`-c`), any word.
 *
 * What may become one of those words at run time (`$E`, `-exe[c]` beside a file `-exec`, a brace
 * list) is read both ways: a guess starts after a word that may open a command, and a command
 * holding a word that may end it, then an opener, is unsure. A test's value is never an opener
 * (`-name -exec`).
 */
function findCommands(find: boolean, args: readonly Word[], at: number): Wrapped {
  const commands: (readonly Word[])[] = [];
  const guesses: (readonly Word[])[] = [];
  // find's `{}` is a path that starts with a starting point, never `-` (find takes that for a
  // test), unless the starting points come from a file (`-files0-from`) or the word has more
  // before it (`-{}`); fd's are bare names (fd 8 adds no `./`).
  const fromFile = find && args.some((w, k) => k > at && w.text === "-files0-from");
  const holds = (text: string) =>
    !FILE_PLACEHOLDER.test(text) ? undefined : find && !fromFile && text.startsWith("{}") ? "path" : "any";
  const placeholders = (run: readonly Word[]) => withPlaceholder(run, holds);
  // The first word at or after an index that is or may become an opener, found once per
  // command (a long run of tests whose values may vanish stays linear).
  const openers = find ? FIND_EXEC : FD_EXEC;
  let after: number[] | undefined;
  const nextOpener = (from: number): number => {
    if (after === undefined) {
      after = new Array<number>(args.length + 1).fill(-1);
      for (let k = args.length - 1; k > at; k -= 1) {
        const w = args[k] as Word;
        after[k] = openers.has(w.text) || mayBecome(w, OPENER_TEXT) ? k : (after[k + 1] as number);
      }
    }
    return from < args.length ? (after[from] as number) : -1;
  };
  let unsure = false;
  // Once unsure, the command is unreadable: what else it runs need not be read.
  for (let j = at + 1; j < args.length && !unsure; j += 1) {
    const word = args[j] as Word;
    if (find && (FIND_VALUED.has(word.text) || /^-newer[aBcmt][aBcmt]$/.test(word.text))) {
      const values = word.text === "-fprintf" ? 2 : 1;
      // A value that may vanish (`-name {,}`, an empty `$x`) makes the next word the value: an
      // opener there is read as one, and the command after the next opener too.
      const valueWords = args.slice(j + 1, j + 1 + values);
      // A value that may be several words may hold a whole `-exec … ;` (`-name $X`).
      if (valueWords.some(maySplit)) unsure = true;
      else if (valueWords.some(mayVanish)) {
        // Later words may be the values then: each later opener may be the real one.
        for (let next = nextOpener(j + 2); next >= 0 && !unsure; next = nextOpener(next + 1)) {
          if (guesses.length === MAX_GUESSES) unsure = true;
          else guesses.push(placeholders(args.slice(next + 1, commandEnd(find, args, next + 1))));
        }
      }
      j += values;
      continue;
    }
    const first = find ? undefined : fdAttached(word.text);
    if (first === undefined && !openers.has(word.text)) {
      // A word of find's own that may be several words may hold a whole `-exec … ;` (`find . $X`).
      if (maySplit(word)) unsure = true;
      if (!mayBecome(word, OPENER_TEXT)) continue;
      // A brace list may make the opener and its command at once (`{-exec,rm,\;}`).
      if (braceList(word.text) || guesses.length === MAX_GUESSES) unsure = true;
      else guesses.push(placeholders(args.slice(j + 1, commandEnd(find, args, j + 1))));
      continue;
    }
    const end = commandEnd(find, args, j + 1);
    const run = args.slice(j + 1, end);
    if (first !== undefined && first !== "") run.unshift({ kind: "word", text: first });
    // A word that may end the command early, then an opener: the rest may be find's own words.
    // (An opener made at run time too, with a word after it: `$S $E rm`; not `cp "$f" "$d" \;`.)
    const early = run.findIndex((w) => mayBecome(w, CLOSER_TEXT));
    const opener = (w: Word, k: number) =>
      openers.has(w.text) || (mayBecome(w, OPENER_TEXT) && k + 1 < run.length);
    if (early >= 0 && run.some((w, k) => k > early && opener(w, k))) unsure = true;
    // So does a word that may be several, which may hold both (`b='; -exec rm'; find . -exec echo $b \;`).
    if (run.some(maySplit)) unsure = true;
    if (run.length > 0) commands.push(placeholders(run));
    j = end;
  }
  return { commands, guesses, unsure };
}

/** fd's `-x` in a word of its own with more after it (`--exec=CMD`, `-xCMD`, `-x=CMD`, `-Hx`): what follows, or "". */
function fdAttached(text: string): string | undefined {
  for (const long of ["--exec=", "--exec-batch="]) if (text.startsWith(long)) return text.slice(long.length);
  const short = FD_FLAGS.exec(text);
  if (short === null || text === "-x" || text === "-X") return undefined;
  return text.slice(short[0].length).replace(/^=/, "");
}

/**
 * Where a find or fd command from `from` ends: its `;` (find: or `+` right after `{}`, words that
 * may vanish between, as `{,}` or an empty `$x` do), or the end.
 */
function commandEnd(find: boolean, args: readonly Word[], from: number): number {
  for (let k = from; k < args.length; k += 1) {
    const text = (args[k] as Word).text;
    if (text === ";") return k;
    if (!find || text !== "+") continue;
    let before = k - 1;
    while (before > from && mayVanish(args[before] as Word)) before -= 1;
    if (before >= from && args[before]?.text === "{}") return k;
  }
  return args.length;
}

/**
 * A word bash may make several words of: an expansion outside double quotes (`$X`, `$(…)`), or
 * `"$@"` and `"${a[@]}"` (Word `quoted` is false for them).
 */
function maySplit(word: Word): boolean {
  // (`expands`: a `$` in single quotes or escaped expands nothing, `-name '$x'`.)
  if (word.kind !== "word" || word.quoted === true || word.expands !== true) return false;
  return /\$(?=[A-Za-z_{(0-9@*#?!$-])|`/.test(word.text);
}

/**
 * A word bash may drop or make several of: an unquoted expansion (`$x` empty, `"$@"`), a brace
 * list (`{,}`), a glob (nullglob).
 */
function mayVanish(word: Word): boolean {
  if (word.kind === "redirect") return false;
  return word.kind === "glob" || braceList(word.text) || maySplit(word);
}

const OPENER_TEXT = [...FIND_EXEC, ...FD_EXEC];
const CLOSER_TEXT = [";", "+"];

/**
 * Whether a word may become one of `texts` at run time: an expansion (`$E`, a backquote, a brace
 * list), or a pattern that could match one of them as a file's name (`-exe[c]`, `*`).
 */
function mayBecome(word: Word, texts: readonly string[]): boolean {
  if (word.kind === "redirect") return false;
  // A `~` alone, `~-` or `~+`: a directory variable's value (`HOME=-exec; find . ~ …`).
  if (word.runTime === true || /[$`]/.test(word.text) || HOME_ALONE.test(word.text)) return true;
  // A brace list as the split sees it has lost its quotes (`{'}',-exec}`): any with a character
  // of the words looked for may make one.
  if (braceList(word.text)) return /[-;+]/.test(word.text);
  if (word.kind !== "glob" && !word.text.includes("[")) return false;
  const pattern = patternRegExp(word.text);
  return texts.some((text) => pattern.test(text));
}

/**
 * A shell pattern or brace list as a RegExp over a whole word, for `mayBecome`: `*`, `?`,
 * bracket classes (`!` or `^` negates, a `]` first is literal, a POSIX class is any character),
 * brace lists as alternatives (a sequence `{a..z}` as anything), any case (`nocaseglob`).
 * It may match more than bash would, never less. (minimatch, which path rules load on first use,
 * would move into the Worker's main module, and reads some classes otherwise than bash.)
 */
function patternRegExp(text: string): RegExp {
  try {
    return new RegExp(`^${patternSource(text)}$`, "is");
  } catch {
    return /^/; // a piece the conversion gets wrong: anything, to be safe
  }
}

function patternSource(text: string): string {
  let source = "";
  for (let i = 0; i < text.length; i += 1) {
    const c = text.charAt(i);
    const end = c === "[" ? classEnd(text, i) : c === "{" ? braceEnd(text, i) : -1;
    if (c === "*") source += ".*";
    else if (c === "?") source += ".";
    else if (c === "[" && end > 0) {
      const body = text.slice(i + 1, end);
      source += /\[[:.=]/.test(body)
        ? "."
        : `[${body.replace(/^[!^]/, "^").replace(/(?!^)\^|[\\\]]/g, "\\$&")}]`;
      i = end;
    } else if (c === "{" && end > 0) {
      const parts = topLevelCommas(text.slice(i + 1, end));
      if (parts.length > 1) source += `(?:${parts.map(patternSource).join("|")})`;
      else if (text.slice(i + 1, end).includes("..")) source += ".*";
      else source += `\\{${patternSource(text.slice(i + 1, end))}\\}`;
      i = end;
    } else source += c.replace(/[.*+?^${}()|[\]\\/-]/g, "\\$&");
  }
  return source;
}

/** The `]` that closes the class opened at `at` (a `]` right after `[`, `[!` or `[^` is in it), or -1. */
function classEnd(text: string, at: number): number {
  let j = at + 1;
  if (text.charAt(j) === "!" || text.charAt(j) === "^") j += 1;
  if (text.charAt(j) === "]") j += 1;
  for (; j < text.length; j += 1) {
    const kind = text.startsWith("[", j) ? text.charAt(j + 1) : "";
    if (kind === ":" || kind === "." || kind === "=") {
      // `[:alpha:]`, `[.c.]`, `[=c=]`
      const close = text.indexOf(`${kind}]`, j + 2);
      if (close > 0) j = close + 1;
    } else if (text.charAt(j) === "]") return j;
  }
  return -1;
}

/** The `}` that closes the brace opened at `at`, nested ones counted, or -1. */
function braceEnd(text: string, at: number): number {
  let depth = 0;
  for (let j = at; j < text.length; j += 1) {
    if (text.charAt(j) === "{") depth += 1;
    else if (text.charAt(j) === "}" && --depth === 0) return j;
  }
  return -1;
}

/** A brace list's alternatives: its text cut at the commas outside nested braces. */
function topLevelCommas(text: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let from = 0;
  for (let j = 0; j < text.length; j += 1) {
    const c = text.charAt(j);
    if (c === "{") depth += 1;
    else if (c === "}") depth -= 1;
    else if (c === "," && depth === 0) {
      parts.push(text.slice(from, j));
      from = j + 1;
    }
  }
  parts.push(text.slice(from));
  return parts;
}

/** Words that start a compound command, as `coproc NAME` may be followed by. */
const COMPOUND_STARTS: ReadonlySet<string> = new Set([
  "{",
  "while",
  "until",
  "if",
  "for",
  "case",
  "select",
  "[[",
]);

/**
 * `wrapper`: a wrapper's own words (recordWrappers), kept in `wrappers` rather than as a
 * subcommand, without brace-expanded or IFS-split variants: its command is recorded with them
 * already, and they would spend the brace budget twice.
 */
function record(command: Command, out: Output, wrapper = false): void {
  const text = render(command);
  const denyOnly = out.denyOnly > 0;
  const key = wrapper ? `\uE002${text}` : denyOnly ? `\uE001${text}` : text;
  if (text === "" || out.seen.has(key)) return;
  out.seen.add(key);
  const named = commandName(command.args);
  const variants = [render({ args: command.args, redirects: [] })];
  if (named) {
    variants.push(
      render({ args: named, redirects: command.redirects }),
      render({ args: named, redirects: [] }),
    );
  }
  // Its arguments as bash's brace expansion makes them: `rm -{rf,} /` runs `rm -rf - /`.
  const braced = wrapper ? undefined : braceWords(named ?? command.args, out);
  if (braced !== undefined) variants.push(render({ args: braced, redirects: [] }));
  // And split where an unquoted `$IFS` stands: `rm -rf$IFS/` runs `rm -rf /`.
  const split = wrapper ? undefined : ifsWords(braced ?? named ?? command.args, out);
  if (split !== undefined) variants.push(render({ args: split, redirects: [] }));
  // A case-insensitive file system (macOS, Windows) runs rm for `RM`, and Git Bash has rm as
  // `rm.exe`: deny-style rules read the command with its name in lower case and without `.exe`
  // too, its arguments as written, brace-expanded and split (`RM -{rf,} /` runs `rm -rf - /`).
  const [program] = named ?? command.args;
  const lower = program === undefined ? undefined : windowsName(program.text);
  if (program !== undefined && lower !== program.text)
    for (const args of [named ?? command.args, braced, split])
      if (args !== undefined)
        variants.push(
          render({ args: [{ ...program, text: lower as string }, ...args.slice(1)], redirects: [] }),
        );
  // Redirections alone (`> out`, or `\<tab> >`, whose one word collapses away) leave no variant.
  const distinct = [...new Set(variants)].filter((v) => v !== text && v !== "");
  if (wrapper) {
    out.wrappers.push(text, ...distinct);
    return;
  }
  const subcommand: { -readonly [K in keyof Subcommand]: Subcommand[K] } = { text, variants: distinct };
  if (denyOnly) subcommand.denyOnly = true;
  if (command.redirects.length > 0) {
    subcommand.bare = variants[0] as string;
    const writes = command.redirects.filter(writesFile);
    if (writes.length > 0) subcommand.writes = writes;
  }
  out.subcommands.push(subcommand);
}

/**
 * A program's name as a case-insensitive file system may find it: upper case, then lower, so that
 * letters whose upper case is an ASCII one read as that (`ſh` is `sh` to APFS and NTFS, whose
 * folding maps U+017F to `s`; `ı` to `i`). A deny-style variant more, never one fewer.
 */
function foldCase(text: string): string {
  return text.toUpperCase().toLowerCase();
}

/**
 * A program's name as Windows finds it, for deny-style rules: folded (foldCase), without the
 * `.exe` its file has there. Git Bash, which Claude Code runs on Windows, has its programs as
 * `.exe` files (`/usr/bin/rm.exe`, `bash.exe`), as is Windows' own `curl.exe`; a name that is
 * only `.exe` keeps it.
 */
function windowsName(text: string): string {
  const folded = foldCase(text);
  return folded.endsWith(".exe") && !folded.endsWith("/.exe") && folded !== ".exe"
    ? folded.slice(0, -4)
    : folded;
}

/**
 * Characters of words a command's brace lists may expand to, for all its subcommands together
 * (braceWords): past it the command is unreadable, as one over MAX_COMMAND_LENGTH is.
 */
const MAX_BRACE_OUTPUT = 4 * MAX_COMMAND_LENGTH;
/** Brace lists nested deeper than this in one word are not followed: the command is unreadable. */
const MAX_BRACE_NESTING = 32;
/** Programs whose words are not a program's arguments: a loop's list, a test's, a `case`'s word. */
const NOT_PROGRAMS: ReadonlySet<string> = new Set(["for", "select", "case", "[[", "(("]);

/**
 * The command's words after its program as bash's brace expansion makes them (`rm -{rf,} /` runs
 * `rm -rf - /`), or undefined where it has no brace list. Only a word with a list bash expands, one
 * whose `{` is unquoted (Word `expands`): a quoted one (`'{"a":1,"b":2}'`, `'*.{js,ts}'`) is data,
 * and a JSON array of objects read as lists would multiply past MAX_BRACE_OUTPUT. Read on the word
 * with its quotes removed, so a list with a quoted item or comma counts too (`{a,'b'}`, `{a','b}`:
 * a deny-style variant more, never one fewer).
 */
function braceWords(args: readonly Word[], out: Output): Word[] | undefined {
  const expandsList = (w: Word) => (w.kind === "redirect" || w.expands === true) && braceList(w.text);
  if (!args.some((w, i) => i > 0 && expandsList(w))) return undefined;
  const [program, ...rest] = args;
  if (program === undefined || NOT_PROGRAMS.has(program.text)) return undefined;
  const words: Word[] = [program];
  for (const word of rest) {
    if (!expandsList(word)) {
      words.push(word);
      continue;
    }
    const expanded = braceExpand(word.text, out.braceBudget);
    if (expanded === undefined) {
      out.braceBudget = 0;
      markUnreadable(out);
      return undefined;
    }
    for (const text of expanded) {
      out.braceBudget -= text.length + 1;
      words.push(word.kind === "redirect" ? { kind: "word", text } : { ...word, text });
    }
  }
  return words;
}

/**
 * An unquoted `$IFS` or `${IFS}` (both read `$IFS` here; so is `${IFS}x`, split the same way): with
 * IFS's default value, blanks, bash splits the word there. One with an operator keeps its braces
 * (`${IFS:0:1}`, literalVariables) and is not followed.
 */
const IFS_EXPANSION = /\$IFS|\$\{IFS[^}]*\}/;
const IFS_WITH_OPERATOR = /\$\{IFS/;

/**
 * The command's words after its program split where an unquoted `$IFS` stands, as bash splits
 * them with IFS's default value (`rm -rf$IFS/` runs `rm -rf /`, `git push${IFS}--force` runs `git
 * push --force`), or undefined where none does. One followed by an operator makes the command
 * unreadable: where its value ends is not read. A word with no expansion (`'$IFS'`) is not split;
 * one that also keeps a `$IFS` as text is split there too (a deny-style variant more, never one
 * fewer).
 */
function ifsWords(args: readonly Word[], out: Output): Word[] | undefined {
  if (!args.some((w, i) => i > 0 && w.text.includes("IFS"))) return undefined;
  const [program, ...rest] = args;
  if (program === undefined || NOT_PROGRAMS.has(program.text)) return undefined;
  const splits = (w: Word) =>
    w.kind !== "redirect" &&
    w.expands === true &&
    !(w.kind === "word" && w.quoted === true) &&
    IFS_EXPANSION.test(w.text);
  if (!rest.some(splits)) return undefined;
  const words: Word[] = [program];
  for (const word of rest) {
    if (!splits(word)) {
      words.push(word);
      continue;
    }
    if (IFS_WITH_OPERATOR.test(word.text)) {
      markUnreadable(out);
      return undefined;
    }
    for (const text of word.text.split(IFS_EXPANSION)) if (text !== "") words.push({ kind: "word", text });
  }
  return words;
}

/**
 * A word's brace expansion as bash makes it (braces.c): the first `{…}` with a comma at its top
 * level or holding a sequence (`{1..3}`, `{a..e}`, `{01..10..2}`) makes one word per item, between
 * the text before and after it, each expanded in turn; a `{` with neither (`{}`, `{a}`) or after
 * a `$` (`${x}`) stays. Undefined past `budget` characters or MAX_BRACE_NESTING. Linear in the
 * word's length and the words made: each `{`'s `}` is found once, on a stack.
 */
function braceExpand(text: string, budget: number): string[] | undefined {
  const close: number[] = new Array(text.length).fill(-1);
  const comma: boolean[] = new Array(text.length).fill(false);
  const open: number[] = [];
  for (let i = 0; i < text.length; i += 1) {
    const c = text.charAt(i);
    if (c === "{") open.push(i);
    else if (c === "}" && open.length > 0) close[open.pop() as number] = i;
    else if (c === "," && open.length > 0) comma[open[open.length - 1] as number] = true;
  }
  let left = budget;
  /** The words `text.slice(from, to)` expands to, each at most `left` characters all together. */
  const expand = (from: number, to: number, depth: number): string[] | undefined => {
    if (depth > MAX_BRACE_NESTING) return undefined;
    for (let i = from; i < to; i += 1) {
      const end = close[i] ?? -1;
      if (text.charAt(i) !== "{" || end < 0 || end >= to) continue;
      if (text.charAt(i - 1) === "$") {
        i = end; // `${…}`: a parameter, not a list
        continue;
      }
      let items: string[][] | undefined;
      if (comma[i] === true) {
        items = [];
        let start = i + 1;
        for (let j = i + 1; j <= end; j += 1) {
          const nested = text.charAt(j) === "{" ? (close[j] ?? -1) : -1;
          if (nested >= 0 && nested < end) j = nested;
          else if (text.charAt(j) === "," || j === end) {
            const item = expand(start, j, depth + 1);
            if (item === undefined) return undefined;
            items.push(item);
            start = j + 1;
          }
        }
      } else {
        const sequence = braceSequence(text.slice(i + 1, end), left);
        if (sequence === null) return undefined;
        if (sequence !== undefined) items = [sequence];
      }
      if (items === undefined) continue; // `{a}`: bash looks for a list after its `{`
      const after = expand(end + 1, to, depth + 1);
      if (after === undefined) return undefined;
      const before = text.slice(from, i);
      const words: string[] = [];
      for (const item of items)
        for (const middle of item)
          for (const tail of after) {
            const word = before + middle + tail;
            left -= word.length + 1;
            if (left < 0) return undefined;
            words.push(word);
          }
      return words;
    }
    const word = text.slice(from, to);
    left -= word.length + 1;
    return left < 0 ? undefined : [word];
  };
  return expand(0, text.length, 0);
}

/**
 * A sequence's items (`1..3`, `a..e`, `01..10..2`, `5..1`), undefined for what is no sequence,
 * null past `budget` characters.
 */
function braceSequence(text: string, budget: number): string[] | undefined | null {
  const numbers = /^([-+]?\d+)\.\.([-+]?\d+)(?:\.\.([-+]?\d+))?$/.exec(text);
  const letters = /^([A-Za-z])\.\.([A-Za-z])(?:\.\.([-+]?\d+))?$/.exec(text);
  const match = numbers ?? letters;
  if (match === null) return undefined;
  const [, first, last, step] = match as unknown as [string, string, string, string | undefined];
  const from = numbers ? Number(first) : first.charCodeAt(0);
  const to = numbers ? Number(last) : last.charCodeAt(0);
  const by = Math.abs(Number(step ?? 1)) || 1;
  // Zero-padded to the wider end where either is written with a leading zero (`{01..10}`).
  const padded = numbers !== null && (/^[-+]?0\d/.test(first) || /^[-+]?0\d/.test(last));
  const width = padded ? Math.max(first.length, last.length) : 0;
  const items: string[] = [];
  let left = budget;
  for (let n = from; from <= to ? n <= to : n >= to; n += from <= to ? by : -by) {
    const item = numbers
      ? n < 0
        ? `-${String(-n).padStart(width - 1, "0")}`
        : String(n).padStart(width, "0")
      : String.fromCharCode(n);
    left -= item.length + 1;
    if (left < 0) return null;
    items.push(item);
  }
  return items;
}

/**
 * A redirection that writes to a file: an output one (`>`, `>>`, `>|`, `&>`, `2>`) to anything
 * but `/dev/null`, or a descriptor copy to a name (`>&out`). Input (`<`, `<<`, `<<<`) and copies
 * between descriptors (`2>&1`, `>&-`) write nothing, except an input from bash's `/dev/tcp/…` or
 * `/dev/udp/…`, which opens a network connection: counted with the writes, so that an allow rule
 * approves it only by naming it.
 */
function writesFile(redirect: string): boolean {
  // The descriptor: a number, none, or a name bash stores the number in (`{fd}>`).
  const rest = redirect.replace(/^(?:\d+|\{\w+\})/, "");
  if (rest.startsWith("<>")) return true; // read and write
  if (rest.startsWith("<<")) return false; // a heredoc or a here-string: text, not a file
  if (rest.startsWith("<&")) return false;
  if (rest.startsWith("<")) return /^\/dev\/(?:tcp|udp)\//.test(rest.slice(1).replace(/["'\\]/g, ""));
  if (/^>&(?:\d+|-)?$/.test(rest)) return false;
  return !/^&?>>?\|?\/dev\/null$/.test(rest);
}

/**
 * Where zsh starts a command in these words: after the `]]` or `))` that closes a test or
 * arithmetic starting them (also `for ((…))`'s), and after a `}` word followed by `always`;
 * undefined where it does not. The `}` of `{ make; } always { … }` ends the command before it
 * here, so `always {` also starts these words.
 */
function zshRest(args: readonly Word[], at: number): number | undefined {
  const first = args[at] as Word;
  if (first.text === "always" && args[at + 1]?.text === "{" && at + 2 < args.length) return at + 2;
  const arithmeticFor = first.text === "for" && args[at + 1]?.text === "((";
  const close = first.text === "[[" ? "]]" : first.text === "((" || arithmeticFor ? "))" : undefined;
  for (let k = at + 1; k < args.length - 1; k += 1) {
    const word = args[k] as Word;
    if (word.kind !== "word") continue;
    // A quoted `"]]"` reads the same here: the closer is one not followed by another.
    if (close !== undefined && word.text === close && (args[k + 1] as Word).text !== close) return k + 1;
    if (word.text === "}" && (args[k + 1] as Word).text === "always" && k + 2 < args.length) return k + 2;
  }
  return undefined;
}

/** A zsh `=NAME` word (`=rm`), which zsh expands to the program's path. */
const EQUALS_PROGRAM = /^=[^=/\s]+$/;
/** Such a word without its `=`: zsh's `=bash -c …` and `=sudo rm …` run what bash's and sudo's do. */
const withoutEquals = (word: string): string => (EQUALS_PROGRAM.test(word) ? word.slice(1) : word);

/**
 * `/usr/bin/rm -rf /` (or `../bin/rm`, `~/bin/rm`) with its command reduced to `rm`, or
 * undefined when it names no directory.
 */
function commandName(args: readonly Word[]): Word[] | undefined {
  const first = args[0];
  // zsh's `=rm` is the path of the rm found in PATH (its `=` expansion): the program is rm.
  if (first !== undefined && EQUALS_PROGRAM.test(first.text))
    return [{ kind: "word", text: first.text.slice(1) }, ...args.slice(1)];
  if (first === undefined || !first.text.includes("/") || first.text.endsWith("/")) return undefined;
  return [{ kind: "word", text: first.text.slice(first.text.lastIndexOf("/") + 1) }, ...args.slice(1)];
}

function peel(args: readonly Word[], at: number, out: Output, prefix: boolean): Peeled {
  const first = args[at];
  if (first === undefined) return undefined;
  // bash expands no pattern in an assignment's value (`logs=*.log`, `files=(src/*.ts)`), where
  // it reads one: before the command, not after a wrapper (`nohup x=* …` runs what `x=*` matches).
  if (ASSIGNMENT.test(first.text) && (first.kind === "word" || prefix)) {
    noteAssignment(first, out);
    return { at: at + 1 };
  }
  if (first.kind !== "word") return undefined;
  if (KEYWORDS.has(first.text)) return { at: at + 1 };
  // `function f { rm …; }`: the body is what runs.
  if (first.text === "function") return args.length > at + 2 ? { at: at + 2 } : undefined;
  // `trap 'rm -f x' EXIT` runs its first argument later, as a script.
  if (first.text === "trap") {
    // After `--` the action is the next word, even one that starts with `-`.
    const dashes = args[at + 1]?.text === "--";
    const trapped = dashes ? args[at + 2] : args[at + 1];
    return trapped === undefined || (!dashes && trapped.text.startsWith("-"))
      ? undefined
      : scriptOf([trapped]);
  }
  // `fc` runs commands from the history, or an editor named by an option or a variable.
  if (first.text === "fc" && !args.slice(at + 1).some((a) => /^-[A-Za-z]*l/.test(a.text)))
    markUnreadable(out);
  if (setsCodeVariable(first.text, args, at) || changesReading(first.text, args, at)) markUnreadable(out);
  if (setsEnvironmentVariable(first.text, args, at)) out.opaque = true;
  if (exportsAll(first.text, args, at)) out.allexport = true;
  noteArithmetic(first.text, args, at, out);
  // `mapfile -C 'rm -rf /' -c 1` runs its callback; `alias ls='rm -rf /'` defines one that
  // runs where `ls` is written later (with `shopt -s expand_aliases`): both read as scripts.
  if (first.text === "mapfile" || first.text === "readarray") return callbackScript(args, at);
  // zsh's `emulate sh -c 'rm -rf /'` runs its `-c` string as code, as eval does: read by
  // deny-style rules, approved by no allow rule.
  if (first.text === "emulate") {
    const c = args.findIndex((a, k) => k > at && /^-[A-Za-z]*c$/.test(a.text));
    if (c < 0) return undefined;
    out.opaque = true;
    const script = args[c + 1];
    if (script === undefined) markUnreadable(out);
    return script === undefined ? undefined : scriptOf([script]);
  }
  // `compgen -C CMD`, `-F FUNC` and `-W '$(…)'` run code; `hash -p FILE NAME` makes NAME run FILE,
  // as zsh's `hash NAME=FILE` does. Only for those names: read for every word peeled, the rest
  // made thousands of `env`s quadratic.
  const restHas = (option: RegExp) => args.slice(at + 1).some((a) => option.test(a.text));
  if (
    ((first.text === "compgen" || first.text === "complete") && restHas(/^-[A-Za-z]*[CFW]/)) ||
    (first.text === "hash" && restHas(/^-[A-Za-z]*p|^[^-=][^=]*=/))
  ) {
    markUnreadable(out);
  }
  // `enable -f FILE NAME` loads a builtin from a shared object: a later `NAME` runs its code.
  if (first.text === "enable" && restHas(/^-[A-Za-z]*f/)) out.opaque = true;
  if (first.text === "alias") {
    const definitions = args.slice(at + 1).filter((a) => /^[^=]+=/.test(a.text));
    const bodies = definitions.map((a) => a.text.slice(a.text.indexOf("=") + 1));
    // From the next line on, bash splices the alias before the words after it (`alias a='true;'`,
    // then `a rm -rf /`), which this reading does not follow.
    // An argument that expands may define one too (`alias $x`).
    if (bodies.length > 0 || args.slice(at + 1).some((a) => /[$`]/.test(a.text))) out.aliases = true;
    return bodies.length > 0 ? { script: bodies.join("\n"), expands: expandsAny(definitions) } : undefined;
  }
  // `source <(curl …)` and `. /dev/stdin` run a script from a pipe, as `bash <(curl …)` does.
  if (first.text === "source" || first.text === ".") {
    // bash 5.3's `source -p PATH FILE` looks FILE up in PATH's directories (`-p /dev stdin` is
    // /dev/stdin, and so is `-p/dev stdin`, as bash's builtins take an option's value glued); a
    // PATH that expands may be any.
    const option = args[at + 1];
    const glued = option !== undefined && /^-p./.test(option.text);
    const p =
      option?.text === "-p" ? args[at + 2] : glued ? { ...option, text: option.text.slice(2) } : undefined;
    if (p !== undefined) {
      const fileAt = glued ? at + 2 : at + 3;
      const file = args[fileAt]?.text === "--" ? args[fileAt + 1] : args[fileAt];
      if (p.kind !== "word" || mayExpand(p.text, p)) markUnreadable(out);
      else if (file !== undefined)
        for (const dir of p.text.split(":")) scriptFile({ ...file, text: `${dir || "."}/${file.text}` }, out);
      return undefined;
    }
    const file = args[at + 1]?.text === "--" ? args[at + 2] : args[at + 1];
    return file === undefined ? undefined : scriptFile(file, out);
  }
  const name = programName(first.text);
  // `export PATH=/tmp/x; npm test` sets for the subcommands after it what `PATH=/tmp/x npm test`
  // sets for one: the same assignments are opaque here. It is recorded as a command of its own.
  if (DECLARATIONS.has(name)) {
    for (const arg of args.slice(at + 1)) {
      if (ASSIGNMENT.test(arg.text)) noteAssignment(arg, out);
      // `declare -a 'x=($(rm -rf /))'`: a quoted compound value is read again, its expansions and
      // what they print (`"x=($(echo '$(rm -rf /)'))"`) expanded. An unquoted one the scan read.
      if (arg.kind !== "redirect" && !arg.array && /=\(.*(?:\$\(|`)/.test(arg.text)) markUnreadable(out);
    }
    return undefined;
  }
  if (name === "env") return peelEnv(args, at, out);
  // `at` and `batch` read the commands they run from stdin.
  if (name === "at" || name === "batch") {
    markUnreadable(out);
  }
  // cron runs the commands of a table crontab installs, from a file or stdin, as at runs its own.
  if (name === "crontab" && crontabInstalls(args, at)) markUnreadable(out);
  if (name === "eval") return peelEval(args, at, out);
  if (SHELLS.has(name)) return peelShell(args, at, out);
  const spec = own(WRAPPERS, name);
  if (spec === undefined) return undefined;
  const start = skipOptions(args, at, spec);
  if (start === undefined) return undefined;
  if (start.moves || start.shifts) markUnreadable(out);

  return start.command < args.length ? { at: start.command } : undefined;
}

/**
 * Whether crontab may install a table (`crontab FILE`, `crontab -`, `crontab` reading stdin):
 * unless an option lists, removes or edits the user's table instead (`-l`, `-r`, `-e`; cronie's
 * `-V` and `-T` too), read as getopt reads cronie's and Debian's `u:lerisncx:VT` (`-u` and `-x`
 * take a value, also the rest of their word). An option word that expands may be any.
 */
function crontabInstalls(args: readonly Word[], at: number): boolean {
  for (let i = at + 1; i < args.length; i += 1) {
    const word = args[i] as Word;
    if (word.kind === "redirect") continue;
    if (word.kind !== "word" || mayExpand(word.text, word)) return true;
    if (word.text === "--" || !/^-./.test(word.text)) return true;
    for (let j = 1; j < word.text.length; j += 1) {
      const letter = word.text[j] as string;
      if ("lerVT".includes(letter)) return false;
      if (letter === "u" || letter === "x") {
        if (j === word.text.length - 1) i += 1;
        break;
      }
    }
  }
  return true;
}

/**
 * A prompt value with no substitution, escape or arithmetic: `$NAME`, `${NAME}`, `$?` and a `$`
 * before a blank only. Not `$$`: the word keeps the `$` of a `$"…"` (`PS4=$"\$(…)"` reads
 * `$$(…)`), which bash drops.
 */
const SAFE_PROMPT =
  /^(?:[^$`\\]|\$(?:[A-Za-z_][A-Za-z0-9_]*|\{[A-Za-z_][A-Za-z0-9_]*\}|[?#!*@0-9-]|(?=[ \t]|$)))*$/;

/**
 * Whether a word keeps a `$` or backquote as text: from single quotes or an escape (Word `keeps`),
 * or from `$'\x24…'` in a word that expands nothing else. Not in a `${…}`'s operand, which the
 * scan reads apart (`ENV=${x:-'$(…)'}`).
 */
function keepsCode(word: Word): boolean {
  if (word.kind === "redirect") return false;
  return word.keeps === true || (word.kind === "word" && word.expands !== true && /[$`]/.test(word.text));
}

/**
 * `NAME=value`: opaque unless NAME is safe and the value holds no expansion. A quoted value is
 * not expanded at the assignment, but `${!TERM}` or `$[CI]` later would evaluate a `$(…)` in it.
 */
function noteAssignment(assignment: Word, out: Output): void {
  const word = assignment.text;
  const name = ASSIGNMENT.exec(word)?.[1];
  // A value that is a subscript with code, spelt across quotes (`x='a[$''(…)]'`), for `$((x))`.
  if (codeInWord(word)) markUnreadable(out);
  // An element (`a[i]=1`) evaluates its subscript, which may name a variable holding code.
  if (name === undefined || !SAFE_VARIABLES.has(name) || /^[^=]*\[|[$`]/.test(word)) out.opaque = true;
  // A prompt is expanded when shown (`PS4='$(rm -rf /)'; set -x`): its substitutions run. A
  // PROMPT_COMMAND is a command, and BASH_ENV names a script bash runs first.
  // Its escapes first (`\044(…)` is `$(…)`, `\140` a backquote).
  // A value whose only expansions are plain parameters (`PS4='+ ${BASH_SOURCE}:${LINENO}: '`,
  // `PS1='(venv) $PS1'`) runs nothing: an expansion's result is not expanded again. Expanded at
  // the assignment (`PS4=$x`, `PS4="+ $x"`), the value's text is the prompt, and is expanded.
  const expands = assignment.kind !== "redirect" && assignment.expands === true;
  if (
    name !== undefined &&
    /^(?:PS[0-4])$/.test(name) &&
    (expands || !SAFE_PROMPT.test(word.slice(word.indexOf("=") + 1)))
  )
    markUnreadable(out);
  // A shell started with SHELLOPTS in its environment sets those options first.
  if (name === "SHELLOPTS" && (expands || /keyword|histexpand|interactive-comments/.test(word)))
    markUnreadable(out);
  // The alias and command tables: `BASH_ALIASES=([b]='rm')`, then `b -rf /` on a later line.
  if (name !== undefined && !name.startsWith("PS") && CODE_VARIABLES.test(name)) markUnreadable(out);
  // ENV is the start-up script of an interactive sh: unreadable when it is stdin, or when its value
  // keeps a `$` or backquote, which sh expands at start-up (`ENV='$(…)' sh -i`, `ENV='${a[X]}'`: a
  // subscript is arithmetic, which runs a `$(…)` in X's value). One expanded at the assignment
  // (`ENV="$STAGE" ./deploy.sh`, `ENV=${ENV:-dev}`, common for apps) is read: what it holds is not
  // seen.
  if (name === "ENV" && (readsStdin(word.slice(4)) || keepsCode(assignment))) markUnreadable(out);
  // SHELL is the program flock's and script's `-c` and su's `-m` run: a shell, or none can be named.
  const value = word.slice(word.indexOf("=") + 1);
  if (name === "SHELL" && (expands || (value !== "" && !shellByPath(value)))) markUnreadable(out);
  // tar reads TAR_OPTIONS' words before its own: one of its command options there (tarRuns, by a
  // short one in a bundle or a long one's shortest unique prefix) is not read.
  if (name === "TAR_OPTIONS" && (expands || TAR_COMMAND_OPTION_TEXT.test(value))) markUnreadable(out);
  // GNU make reads GNUMAKEFLAGS' and MAKEFLAGS' words before its own (older makes MFLAGS'): what
  // makeRuns refuses there, a `NAME != CMD`, or a `$`, which make expands first (`$(shell …)`, or
  // another variable whose value is not seen here).
  if (
    name !== undefined &&
    MAKE_FLAGS_VARIABLES.test(name) &&
    (expands || value.includes("$") || makeFlagsRun(value))
  )
    markUnreadable(out);
  noteCommandValue(assignment, out);
}

/**
 * A command a variable's user runs (`GIT_SSH_COMMAND='…' git push`: COMMAND_VARIABLE), kept for
 * expand to read as a script; git's settings in GIT_CONFIG_PARAMETERS, whose format is not read
 * here, make the command unreadable.
 */
function noteCommandValue(assignment: Word, out: Output): void {
  const eq = assignment.text.indexOf("=");
  // `EDITOR+=…` adds to a value not seen here: read as one made at run time.
  const appends = assignment.text.charAt(eq - 1) === "+";
  const name = assignment.text.slice(0, appends ? eq - 1 : eq);
  const value = assignment.text.slice(eq + 1);
  const made =
    appends || assignment.kind === "glob" || (assignment.kind === "word" && assignment.expands === true);
  if (COMMAND_VARIABLE.test(name) && (value !== "" || appends)) {
    // less runs LESSOPEN's command after a `|` or `||` (its input preprocessor); a
    // GIT_CONFIG_VALUE_n may be a `!` alias's shell command.
    // man's BROWSER is a list of commands split at colons, each tried in turn.
    const script =
      name === "BROWSER"
        ? value.replaceAll(":", "\n")
        : name.startsWith("LESS")
          ? value.replace(/^\|\|?/, "")
          : name.startsWith("GIT_CONFIG_VALUE_")
            ? value.replace(/^!/, "")
            : value;
    out.commandValues.push({ script, expands: made });
  }
  // git's settings in GIT_CONFIG_PARAMETERS, whose format is not read here, and GIT_EXEC_PATH,
  // the directory git runs its programs from (`--exec-path=DIR`): any program may be there.
  if (name === "GIT_CONFIG_PARAMETERS" || name === "GIT_EXEC_PATH") markUnreadable(out);
  // A GIT_CONFIG_KEY_n that names an alias (its value a git command line: `git x` runs `git
  // push`) or lets the ext:: transport run its URL's command, and GIT_ALLOW_PROTOCOL allowing
  // ext, as git's `-c protocol.ext.allow` does; or one whose value is made at run time.
  if (/^GIT_CONFIG_KEY_\d+$/.test(name) && (made || /^alias\./i.test(value) || GIT_EXT_ALLOW.test(value)))
    markUnreadable(out);
  if (name === "GIT_ALLOW_PROTOCOL" && (made || /(?:^|:)ext(?::|$)/.test(value))) markUnreadable(out);
}

/**
 * Variables whose value is a command a program runs, through the shell for most (git(1):
 * GIT_SSH_COMMAND, GIT_EXTERNAL_DIFF, GIT_PAGER, GIT_EDITOR; PAGER, EDITOR and VISUAL for git,
 * man, crontab, less…), as a program for the rest (GIT_SSH, the askpass ones), read as a script
 * all the same. A GIT_CONFIG_VALUE_n may be any setting's (git-config(1) GIT_CONFIG_COUNT), a
 * command's too: read as one. kubectl edit runs KUBE_EDITOR, rsync RSYNC_RSH as its `-e` and
 * RSYNC_CONNECT_PROG through the shell for an rsync:// daemon, man's `--html` BROWSER.
 */
const COMMAND_VARIABLE =
  /^(?:GIT_(?:SSH|SSH_COMMAND|EXTERNAL_DIFF|PAGER|EDITOR|SEQUENCE_EDITOR|ASKPASS|PROXY_COMMAND|CONFIG_VALUE_\d+)|SSH_ASKPASS|PAGER|MANPAGER|EDITOR|VISUAL|SUDO_EDITOR|SUDO_ASKPASS|LESSOPEN|LESSCLOSE|KUBE_EDITOR|RSYNC_RSH|RSYNC_CONNECT_PROG|BROWSER)$/;

/** A tar command option's word in TAR_OPTIONS: `-I`/`-F` in a bundle, or a long one's unique prefix. */
const TAR_COMMAND_OPTION_TEXT = /(?:^|\s)(?:-[^-\s]*[IF]|--(?:use|to-c|inf|new-|rs|rm|checkpoint-))/;

/**
 * `set -k` (`-o keyword`: an assignment-shaped word anywhere in a command is taken out of its
 * arguments, so `trap x=1 'rm -rf /' EXIT` runs the second) and `set -H` (`-o histexpand`: `!…`
 * brings back words of earlier lines) change how bash reads what follows. So does a `shopt -o`
 * of those names, and a shopt option of READING_OPTIONS (`shopt -u interactive_comments`,
 * `shopt -s compat44`) or worked out at run time.
 */
function changesReading(command: string, args: readonly Word[], at: number): boolean {
  if (command !== "set" && command !== "shopt") return false;
  const words = args.slice(at + 1).map((a) => a.text);
  // A word worked out at run time (`set -o $o`, `set $k`, `shopt -so $o`) may be either.
  const runTime = (word: string) => RUN_TIME_OPTION.test(word);
  if (command === "shopt") {
    return words.some((w) => READING_OPTIONS.test(w) || runTime(w));
  }
  // The first operand too: it did not expand into an option (runTime).
  for (const { word } of setWords(words))
    if (READING_OPTIONS.test(word) || /^-[A-Za-z]*[kH]/.test(word) || runTime(word)) return true;
  return false;
}

/**
 * `set`'s words as bash reads them, up to a `--` or its first operand (given too): each option
 * word, and each option name an `o` takes, in order (`set -oo pipefail keyword`), with whether
 * it is turned on (`-o`) or off (`+o`).
 */
function* setWords(words: readonly string[]): Generator<{ readonly word: string; readonly on?: boolean }> {
  // For each word with an `o`: whether it turns its names on, and how many it is still owed.
  const owed: { readonly on: boolean; names: number }[] = [];
  let next = 0; // the first of those still owed a name
  for (const word of words) {
    if (word === "--") return;
    const owner = owed[next];
    if (owner !== undefined) {
      owner.names -= 1;
      if (owner.names === 0) next += 1;
      yield { word, on: owner.on };
      continue;
    }
    yield { word };
    if (!/^[-+]/.test(word)) return;
    const names = word.replace(/[^o]/g, "").length;
    if (names > 0) owed.push({ on: word.startsWith("-"), names });
  }
}

/**
 * `set -a` (`-o allexport`, zsh's `setopt allexport`) exports every variable set after it: a
 * script's lower-case ones too, which programs read (`set -a; read -r http_proxy < f; npm
 * install`), and which are read as data elsewhere (setsEnvironmentVariable). With a builtin or
 * arithmetic that sets one (noteArithmetic) it makes the command opaque; `set -a; source .env;
 * set +a` is read as `source .env` is.
 */
function exportsAll(command: string, args: readonly Word[], at: number): boolean {
  if (command !== "set" && command !== "setopt") return false;
  const words = args.slice(at + 1).map((a) => a.text);
  // zsh reads option names without case or underscores (`ALL_EXPORT`).
  const allexport = (word: string) => word.replaceAll("_", "").toLowerCase() === "allexport";
  if (command === "setopt") return words.some(allexport);
  // `set -eo allexport`; an operand starts with no `-`.
  for (const { word, on } of setWords(words))
    if (on === undefined ? /^-[A-Za-z]*a/.test(word) : on && allexport(word)) return true;
  return false;
}

/** An option word that expands, or a pattern or brace list: what it names is worked out at run time. */
const RUN_TIME_OPTION = /[$`{*?[]/;

/**
 * The long names of the shell options that change how bash reads a command (changesReading):
 * keyword mode, history expansion, comments in an interactive shell (off, `#` is a word), and the
 * compatibility levels (at 5.1 or lower arithmetic expands a subscript's value again).
 */
const READING_OPTIONS = /^(?:keyword|histexpand|interactive[-_]comments|compat\d+)$/;

/** A wrapper named bare or by its usual absolute path; `./timeout` could be anything. */
function programName(word: string): string {
  const path = word.startsWith("/") ? `/${pathSegments(word).join("/")}` : word; // `/bin//bash`
  const match = /^(?:\/usr)?(?:\/local)?\/s?bin\/([^/]+)$/.exec(path);
  return match ? (match[1] as string) : word;
}

/** A path's segments with `.`, empty ones and `..` resolved, as the kernel reads them. */
function pathSegments(path: string): string[] {
  const segments: string[] = [];
  for (const segment of path.split("/")) {
    if (segment === "..") segments.pop();
    else if (segment !== "" && segment !== ".") segments.push(segment);
  }
  return segments;
}

/**
 * Where a wrapper's command starts: after its options, their values and its operands (timeout's
 * duration). `moves`: a word before it may move that start, so that the command cannot be named:
 * a value that may be no word or several (`sudo -u $U make`, `nice -n$N make`, `sudo X=$v make`,
 * `xargs -n {1,2} rm`: a program may come from the value) or an operand that expands at all
 * (`timeout "$T" make`: it may be an option, which takes the next word).
 */
interface CommandStart {
  readonly command: number;
  readonly moves: boolean;
  /**
   * An operand is an expansion that is one word (`flock "$LOCK" make`): it may be an option at
   * run time, which takes the next words, so `command` is only the first word the command may
   * start at. So is a word that may or may not be chrt's priority (WrapperSpec `operand`).
   */
  readonly shifts: boolean;
  /** An option after which no command runs (WrapperSpec `noCommand`), whatever follows it. */
  readonly none: boolean;
}

/**
 * Whether a `NAME=value` argument (env's, sudo's: no assignment to bash, which splits and expands
 * it as any word) may make words that are not `NAME=value`: an expansion in it that may split
 * (`env X=$v make`, with `v='1 rm'`), or any in its name. What a pattern or brace list in the
 * value makes keeps the name (`env DEBUG=* node app.js`).
 */
function argumentMayMove(word: Word): boolean {
  const name = word.text.slice(0, word.text.indexOf("="));
  if (/[*?[{$`~]/.test(name)) return true;
  // A pattern's word does not say whether its `$` came from quotes: any counts.
  return word.kind === "glob" ? /[$`]/.test(word.text) : maySplit(word);
}

/** A `NAME=value` argument as env and sudo take it: any name (`a.b=1`), not an option. */
const NAME_VALUE = /^[^=-][^=]*=/;

/** Where the wrapper's command starts (CommandStart), or undefined on an option not known here. */
function skipOptions(args: readonly Word[], at: number, spec: WrapperSpec): CommandStart | undefined {
  let i = at + 1;
  let moves = false;
  let none = false;
  while (i < args.length) {
    const word = args[i] as Word;
    const arg = word.text;
    if (arg === "--") {
      i += 1;
      // sudo, as env, still takes VAR=value words after `--`.
      while (spec.assignments && i < args.length && NAME_VALUE.test((args[i] as Word).text)) {
        moves ||= argumentMayMove(args[i] as Word);
        i += 1;
      }
      break;
    }
    if (spec.assignments && NAME_VALUE.test(arg)) {
      moves ||= argumentMayMove(word);
      i += 1;
      continue;
    }
    if (!arg.startsWith("-") || arg === "-") break;
    const option = readOption(arg, spec);
    if (option === undefined) return undefined;
    // Read as such only when no word before it may have moved (`prlimit -o $C --pid 1 make`).
    none ||= !moves && option.names.some((name) => spec.noCommand?.includes(name) === true);
    // A value in the option's own word (`-n$N`) or the next; a quoted one is one word, whatever it holds.
    const value = option.width === 2 ? args[i + 1] : undefined;
    moves ||= mayVanish(word) || (value !== undefined && mayVanish(value));
    i += option.width;
  }
  const operands = args.slice(i, i + spec.operands);
  moves ||= operands.some(mayVanish);
  const shifts = operands.some((w) => w.kind === "glob" || /[$`{]/.test(w.text));
  // A word that may not be the operand may be the command: each word from it on is tried.
  const first = operands[0];
  if (spec.operand !== undefined && first !== undefined && !spec.operand.test(first.text))
    return { command: i, moves, shifts: true, none };
  return { command: i + spec.operands, moves, shifts, none };
}

/**
 * The options in a word and how many words they take, as getopt reads them: a long one by any
 * unique prefix, with its value after `=` or in the next word; short ones bundled (`-0I%`, `sudo
 * -Eu root`), the first that takes a value taking the rest of the word or the next one.
 * Undefined for an option not known.
 */
function readOption(arg: string, spec: WrapperSpec): ReadOption | undefined {
  if (spec.flags.includes(arg)) return { width: 1, names: [arg], attached: "" };
  if (spec.numericFlag && /^-(?:-|\+)?\d+$/.test(arg)) return { width: 1, names: [], attached: "" };
  const optional = spec.optional ?? [];
  if (arg.startsWith("--")) {
    const eq = arg.indexOf("=");
    const name = longOption(eq < 0 ? arg : arg.slice(0, eq), spec);
    if (name === undefined) return undefined;
    const names = [name];
    // `sudo --preserve-env` is a flag, `--preserve-env=LIST` a value: a flag is looked up first.
    if (eq >= 0)
      return spec.valued.includes(name) || optional.includes(name)
        ? { width: 1, names, attached: arg.slice(eq + 1) }
        : undefined;
    return { width: spec.flags.includes(name) || optional.includes(name) ? 1 : 2, names, attached: "" };
  }
  const names: string[] = [];
  for (let k = 1; k < arg.length; k += 1) {
    const option = `-${arg.charAt(k)}`;
    names.push(option);
    if (spec.flags.includes(option)) continue;
    if (optional.includes(option)) return { width: 1, names, attached: arg.slice(k + 1) };
    if (spec.valued.includes(option))
      return { width: k + 1 < arg.length ? 1 : 2, names, attached: arg.slice(k + 1) };
    return undefined;
  }
  return { width: 1, names, attached: "" };
}

/** The options in one word, how many words they take, and the last one's value in the word itself. */
interface ReadOption {
  readonly width: number;
  readonly names: readonly string[];
  readonly attached: string;
}

/** A long option as written or by a unique prefix of one (`--repl` is `--replace`). */
function longOption(given: string, spec: WrapperSpec): string | undefined {
  const names = [...spec.flags, ...spec.valued, ...(spec.optional ?? [])].filter((o) => o.startsWith("--"));
  if (names.includes(given)) return given;
  const matches = [...new Set(names.filter((o) => o.startsWith(given)))];
  return matches.length === 1 ? matches[0] : undefined;
}

const ENV_SPEC: WrapperSpec = {
  valued: ["-u", "--unset", "-C", "--chdir"],
  flags: ["-i", "--ignore-environment", "-0", "--null", "-v", "--debug", "-"],
  operands: 0,
};

/**
 * `env [options] [VAR=value...] command`; `-S STRING` splits STRING into the command's words. As
 * for the other wrappers (skipOptions), a word before the command that may be no word or several
 * makes it unreadable: env's `NAME=value` words are arguments, split as any other (`env X=$v make`).
 */
function peelEnv(args: readonly Word[], at: number, out: Output): Peeled {
  let i = at + 1;
  // After `--` or the first NAME=value, no more options (`env X=1 -i cmd` runs `-i`), but still
  // NAME=value words; a lone `-` is `-i` only before the first of those.
  let operands = false;
  let assigned = false;
  while (i < args.length) {
    const word = args[i] as Word;
    const arg = word.text;
    // env takes any word with a `=` that is no option for NAME=value (`=x` too; after `--`, `-x=1`).
    const named = arg.includes("=") && (operands || !arg.startsWith("-"));
    // zsh expands `=rm` to rm's path first, which env then runs (`env =rm -rf /`): unreadable.
    if (named && EQUALS_PROGRAM.test(arg)) markUnreadable(out);
    if (named) {
      operands = true;
      assigned = true;
    } else if (operands && !(arg === "-" && !assigned)) break;
    const split = operands ? undefined : splitStringOption(args, i, out);
    if (split !== undefined) return split;
    if (named && argumentMayMove(word)) markUnreadable(out);
    if (ASSIGNMENT.test(arg)) {
      noteAssignment(word, out);
      // To env a word like any other, so a pattern matches file names (`env ENV=x*` a file
      // `ENV=x$(…)`), which an interactive sh expands again.
      if (word.kind === "glob" && arg.startsWith("ENV=")) markUnreadable(out);
      i += 1;
    } else if (arg === "--") {
      operands = true;
      i += 1;
    } else if (arg === "-") {
      operands = true; // `-` is `-i`, once, and ends the options
      assigned = true;
      i += 1;
    } else if (named) {
      out.opaque = true; // env sets any NAME=VALUE, whatever the name (`a.b=1`)
      i += 1;
    } else if (!arg.startsWith("-")) {
      break;
    } else {
      // `env -C DIR npm test` runs it somewhere else, as `cd DIR && npm test` would.
      if (/^(?:-C|--chdir)/.test(arg)) out.opaque = true;
      const width = readOption(arg, ENV_SPEC)?.width;
      if (width === undefined) return undefined;
      // A value in the option's own word or the next (`env -u {,} X rm`, `env -u$X rm`).
      const value = width === 2 ? args[i + 1] : undefined;
      if (mayVanish(word) || (value !== undefined && mayVanish(value))) markUnreadable(out);
      i += width;
    }
  }
  return i < args.length ? { at: i } : undefined;
}

/** `env -S 'rm -rf' /` runs `rm -rf /`: the string's words followed by the remaining arguments. */
function splitStringOption(args: readonly Word[], i: number, out: Output): Peeled {
  const arg = (args[i] as Word).text;
  let value: string | undefined;
  let restAt = i + 1; // the value is then the option's own word
  // GNU env takes any long option's unambiguous prefix: `--s` to `--split-string`.
  const long = /^--(s[a-z-]*)(=[\s\S]*)?$/.exec(arg);
  if (long && "split-string".startsWith(long[1] as string)) {
    if (long[2] === undefined) {
      value = args[i + 1]?.text ?? "";
      restAt = i + 2;
    } else value = long[2].slice(1);
  } else if (/^-[A-Za-z]*S/.test(arg)) {
    // `-S…`, or bundled after other flags (`-vS'rm -rf /'`); `-vS STRING` takes the next word.
    value = arg.slice(arg.indexOf("S") + 1);
    if (value === "") {
      value = args[i + 1]?.text ?? "";
      restAt = i + 2;
    }
  }
  if (value === undefined) return undefined;
  // env's own escapes (`\_` is a blank) are not read here, nor its comments, which end only the
  // string (`-S '#' rm -rf /` runs `rm`).
  if (value.includes("\\") || value.includes("#")) markUnreadable(out);
  // env reads the split words as its own arguments again (`-S '-i rm -rf /'`).
  const words = `${value} ${args
    .slice(restAt)
    .map((w) => singleQuoted(w.text))
    .join(" ")}`;
  // A pattern among them is expanded by the shell before env sees it: not followed here.
  if (args.slice(restAt).some((w) => w.kind === "glob")) markUnreadable(out);
  // env reads the split words as its own arguments again: `-i`, `NAME=VALUE`, then the command.
  // The string's own expansions are the shell's: their values are split by env as its words.
  return { script: `env ${words}`, expands: expandsAny(args.slice(i, restAt)) };
}

/** `eval WORDS` runs its words joined by spaces, re-read after expansion we do not perform. */
function peelEval(args: readonly Word[], at: number, out: Output): Peeled {
  const from = args[at + 1]?.text === "--" ? at + 2 : at + 1;
  if (from >= args.length) return undefined;
  out.opaque = true;
  return scriptOf(args.slice(from));
}

// ---------------------------------------------------------------------------------------------
// GNU parallel: its command words are one script, run by a shell with each input put in it.
// ---------------------------------------------------------------------------------------------

/**
 * GNU parallel's options (20221122) as its GetOptions call declares them (`options_completion_hash`
 * without the help texts, the internal `--_…` ones and the aliases that are a name without its
 * dashes, which parallelOptionTable adds): a name and its aliases joined by `|`, then
 * `=s`, `=i` or `=f` for a value, `:s` for an optional value, `:f` for an optional number.
 */
const PARALLEL_OPTIONS = [
  "B=s E=s H=i I=s L=s T U=s W=s X Y arg-file-sep=s arg-file|a=s arg-sep=s bar basefile|bf=s",
  "basenameextensionreplace|bner=s basenamereplace|bnr=s bg bin=s block-size|block=s",
  "block-timeout|bt=s bug cat cleanup col-sep|C=s",
  "color-failed|colour-failed|color-fail|colour-fail|cf color|colour compress controlmaster|M csv",
  "ctag-string=s ctag ctrl-c debug|D=s delay=s delimiter|d=s dirnamereplace|dnr=s dry-run|dr",
  "embed env=s eof|e:s eta exit|x extensionreplace|er=s fg fifo filter-hosts|filter-host filter=s",
  "g gnu group-by=s group halt-on-error|halt=s header=s help|h hgrp|hostgrp|hostgroup|hostgroups",
  "interactive|p joblog|jl=s jobs|j=s keep-order|k latest-line|ll limit=s",
  "line-buffer|line-buffered|lb linkinputsource|xapplyinputsource=i link|xapply load=s m",
  "max-args|n=s max-chars|s=s max-line-length-allowed max-lines|l:f max-procs|P=s",
  "max-replace-args|N=s memfree=s memsuspend=s min-version=i nice=i no-ctrl-c|no-ctrlc",
  "no-keep-order|no-k no-run-if-empty|r nonall noswap null|0 number-of-cores number-of-cpus",
  "number-of-sockets number-of-threads onall open-tty|o output-as-files|files parens=s pipe-part",
  "pipe|spreadstdin plain plus process-slot-var=s profile|J=s progress quote|q recend=s",
  "recordenv|record-env recstart=s regexp|regex remove-rec-sep|rrs replace|i:s",
  "results|result|res=s resume-failed resume retries=s retry-failed return=s round-robin|round",
  "rpl=s rsync-opts=s semaphore-name|id=s semaphore-timeout|st=s semaphore seqreplace=s session",
  "shard=s shebang|hashbang shell-completion=s shell-quote|shell_quote show-limits shuf silent",
  "skip-first-line slotreplace=s sql-and-worker=s sql-master=s sql-worker=s sql=s ssh-delay=f",
  "ssh=s sshloginfile|slf=s sshlogin|S=s tag-string=s tag tee template|tmpl=s term-seq=s",
  "timeout=s tmpdir|tempdir=s tmux-pane tmux tollef total-jobs|total=s",
  "transfer-file|transfer-files|tf=s transfer trc=s trim=s tty ungroup|u",
  "use-compress-program|compress-program=s use-cores-instead-of-threads use-cpus-instead-of-cores",
  "use-decompress-program|decompress-program=s use-sockets-instead-of-threads v verbose|t",
  "version|V wait will-cite|nn|no-notice work-dir|wd=s xargs",
].join(" ");

/** `=`: takes a value; `:s`: the next word unless it starts with `-`; `:f`: the next word if a number. */
interface PerlOption {
  readonly name: string;
  readonly value: "" | "=" | ":s" | ":f";
}

let parallelTable: ReadonlyMap<string, PerlOption> | undefined;

/** Each name (lowercase but single letters, as Getopt::Long's "bundling" compares them) to its option. */
function parallelOptionTable(): ReadonlyMap<string, PerlOption> {
  if (parallelTable !== undefined) return parallelTable;
  const table = new Map<string, PerlOption>();
  for (const entry of PARALLEL_OPTIONS.split(" ")) {
    const [, names = "", type] = /^([^=:]+)([=:][sif])?$/.exec(entry) ?? [];
    const aliases = names.split("|");
    const value = type === undefined ? "" : type.startsWith("=") ? "=" : type === ":s" ? ":s" : ":f";
    const option: PerlOption = { name: aliases[0] as string, value };
    for (const alias of aliases) {
      table.set(alias.length === 1 ? alias : alias.toLowerCase(), option);
      // Nearly every dashed name is declared without its dashes too (`--pipepart`); the table
      // leaves those out. `--opentty` is added though parallel lacks it: read as `--open-tty`
      // where parallel fails, so no less is read than runs (`--filterhost` is a prefix it takes).
      if (alias.includes("-")) table.set(alias.replaceAll("-", "").toLowerCase(), option);
    }
  }
  parallelTable = table;
  return table;
}

const NUMBER = /^[-+]?(?:\d+\.?\d*|\.\d+)(?:e[-+]?\d+)?$/i;

/**
 * parallel's options, each by its first name, and where its command starts, read as Getopt::Long
 * reads them with "bundling" and "require_order": up to the first word that is no option, `-x`
 * bundles single letters, `--name` is any unique prefix in any case, and an optional value is the
 * next word when it does not start with `-`. Undefined on an option parallel does not know or finds
 * ambiguous (it fails), or a word that may become an option or vanish at run time.
 */
function parallelOptions(args: readonly Word[], at: number): Permuted | undefined {
  const table = parallelOptionTable();
  const options: { name: string; value: string }[] = [];
  /** Whether `next` is the option's value: undefined when that is known only at run time. */
  const takes = (option: PerlOption, next: Word | undefined): boolean | undefined => {
    if (option.value === "" || next === undefined) return option.value === "=" ? undefined : false;
    if (option.value === "=") return mayVanish(next) ? undefined : true;
    if (mayBeOption(next)) return undefined;
    // A lone `-` is a value; Perl's numbers also take `_` and more (`1_0`): a word that starts as
    // one and is not plainly one may be either.
    if (option.value === ":s") return next.text === "-" || !next.text.startsWith("-");
    if (NUMBER.test(next.text)) return true;
    return /^[-+]?[\d.]/.test(next.text) ? undefined : false;
  };
  let i = at + 1;
  while (i < args.length) {
    const word = args[i] as Word;
    const arg = word.text;
    if (mayBeOption(word)) return undefined;
    if (arg === "--") {
      i += 1;
      break;
    }
    if (!arg.startsWith("-") || arg === "-") break;
    const next = args[i + 1];
    let width = 1;
    if (arg.startsWith("--")) {
      const eq = arg.indexOf("=");
      const given = (eq < 0 ? arg.slice(2) : arg.slice(2, eq)).toLowerCase();
      const option = table.get(given) ?? uniquePrefix(table, given);
      if (option === undefined || (eq >= 0 && option.value === "")) return undefined;
      const taken = eq >= 0 ? false : takes(option, next);
      if (taken === undefined) return undefined;
      options.push({
        name: option.name,
        value: eq >= 0 ? arg.slice(eq + 1) : taken ? (next as Word).text : "",
      });
      if (taken) width = 2;
    } else {
      for (let k = 1; k < arg.length; k += 1) {
        const option = table.get(arg[k] as string);
        if (option === undefined) return undefined;
        const rest = arg.slice(k + 1);
        if (option.value !== "" && rest !== "" && (option.value !== ":f" || NUMBER.test(rest))) {
          options.push({ name: option.name, value: rest });
          break;
        }
        const taken = rest === "" ? takes(option, next) : false;
        if (taken === undefined) return undefined;
        options.push({ name: option.name, value: taken ? (next as Word).text : "" });
        if (taken) width = 2;
      }
    }
    i += width;
  }
  return { options, words: args.slice(i), moves: false };
}

/** The option whose names alone start with `given` (Getopt::Long's auto_abbrev), if one. */
function uniquePrefix(table: ReadonlyMap<string, PerlOption>, given: string): PerlOption | undefined {
  const found = new Set<PerlOption>();
  for (const [name, option] of table) if (name.length > 1 && name.startsWith(given)) found.add(option);
  return found.size === 1 ? [...found][0] : undefined;
}

/** Options after which parallel prints and runs nothing. */
const PARALLEL_PRINTS = new Set([
  "version",
  "help",
  "number-of-cores",
  "number-of-cpus",
  "number-of-sockets",
  "number-of-threads",
  "max-line-length-allowed",
  "min-version",
  "embed",
  "recordenv",
  "shell-completion",
]);

/**
 * Options that run what this reading does not see: commands from a database or a job log, a
 * profile's options, Perl code (`--rpl`, `--filter`), a program of the option's own (`--ssh`, the
 * compress programs, an `--sshlogin`'s ssh command), a script file (`--shebang`).
 */
const PARALLEL_UNSEEN = new Set([
  "sql",
  "sql-master",
  "sql-worker",
  "sql-and-worker",
  "retry-failed",
  "resume-failed",
  "profile",
  "rpl",
  "filter",
  "ssh",
  "sshlogin",
  "sshloginfile",
  "use-compress-program",
  "use-decompress-program",
  "shebang",
  // Perl code: `--limit` runs its value through the shell, the others are Perl expressions, or
  // change where Perl code in a replacement string starts (`--parens`), or hold some (`--template`).
  "limit",
  "group-by",
  "shard",
  "bin",
  "parens",
  "template",
]);

/** Options after which parallel or sem runs nothing when given no command (`sem --wait`). */
const PARALLEL_WITHOUT_COMMAND = new Set(["wait", "shell-quote"]);

/** Options that name a replacement string of their own (`-I @@`; `-i` alone is `{}`). */
const PARALLEL_REPLACES = new Set([
  "I",
  "replace",
  "extensionreplace",
  "basenamereplace",
  "dirnamereplace",
  "basenameextensionreplace",
  "seqreplace",
  "slotreplace",
]);

/** parallel's own replacement strings: `{}`, `{.}`, `{/}`, `{//}`, `{/.}`, `{#}`, `{%}`, and `{3}`, `{-1/.}`. */
const PARALLEL_STRINGS = String.raw`\{(?:-?\d+)?(?:\.|\/|\/\/|\/\.|#|%)?\}`;
/** With `--plus` or `--header`, any `{…}` without blanks may be one (`{%.x}`, a column's `{name}`). */
const PARALLEL_ANY_STRING = String.raw`\{[^{}\s]*\}`;
/** What an input stands for in the script: words not known here, one or several (`-X`, `-N 2`). */
const PARALLEL_INPUT = "$PARALLEL_INPUT";

/**
 * The script parallel (or `sem`) runs: its command words joined by spaces, which its shell reads as
 * code (`… | parallel 'make; rm -rf {}'`), quoted word by word under `-q`. Each replacement string
 * stands for an input, which parallel quotes; with none, the input is added at the end (not with
 * `--pipe`, which writes it to the command's stdin). With no command its inputs are the commands,
 * and Perl code in a replacement string (`{= … =}`) runs in parallel itself: unreadable, as are
 * the options of PARALLEL_UNSEEN.
 */
function parallelScript(args: readonly Word[], at: number): Script {
  const unreadable = { script: "", expands: true };
  const read = parallelOptions(args, at);
  if (read === undefined) return unreadable;
  const given = new Set(read.options.map((o) => o.name));
  if ([...given].some((name) => PARALLEL_PRINTS.has(name))) return { script: "", expands: false };
  if (
    [...given].some((name) => PARALLEL_UNSEEN.has(name)) ||
    args.slice(at + 1).some((w) => w.text.includes("{="))
  )
    return unreadable;
  // Inputs given after `:::` or `::::` (also `:::+`, and those `--arg-sep` and `--arg-file-sep`
  // name) are inputs as stdin's lines are, each quoted into the command; with no command they are
  // the commands. One written as an option (`parallel -X rm ::: -rf /` runs `rm -rf /`), or that
  // may be one at run time (`$X`, a brace list), would give the command an option no rule sees:
  // unreadable. A pattern's file names are read as `rm *`'s are.
  const separators = [":::", "::::"];
  for (const o of read.options)
    if (o.name === "arg-sep" || o.name === "arg-file-sep") separators.push(o.value);
  const end = read.words.findIndex((w) => separators.some((s) => w.text === s || w.text === `${s}+`));
  const optionLike = (w: Word) =>
    w.kind !== "redirect" &&
    (w.text.startsWith("-") ||
      braceList(w.text) ||
      (w.kind === "word" && (w.expands === true || w.runTime === true)));
  if (end >= 0 && read.words.slice(end).some(optionLike)) return unreadable;
  const words = end < 0 ? read.words : read.words.slice(0, end);
  if (words.length === 0)
    return [...given].some((name) => PARALLEL_WITHOUT_COMMAND.has(name))
      ? { script: "", expands: false }
      : unreadable;
  // `--process-slot-var` sets a variable for each job: one that bash runs or sources (BASH_ENV=1).
  if (
    read.options.some(
      (o) =>
        o.name === "process-slot-var" && (CODE_VARIABLES.test(o.value) || PROGRAM_VARIABLES.test(o.value)),
    )
  )
    return unreadable;
  // `-I`'s string is a pattern when it holds a group (`-I '(q)'` replaces `q`).
  if (read.options.some((o) => PARALLEL_REPLACES.has(o.name) && o.value.includes("("))) return unreadable;
  const quote = given.has("quote");
  const own = read.options
    .filter((o) => PARALLEL_REPLACES.has(o.name))
    .map((o) => (o.name === "replace" && o.value === "" ? "{}" : o.value))
    .filter((text) => text !== "");
  const strings = new RegExp(
    [given.has("plus") || given.has("header") ? PARALLEL_ANY_STRING : PARALLEL_STRINGS]
      .concat(own.map((text) => text.replace(/[\\^$.*+?()[\]{}|]/g, "\\$&")))
      .join("|"),
    "g",
  );
  let script = words.map((w) => (quote ? singleQuoted(w.text) : w.text)).join(" ");
  let found = false;
  script = script.replace(strings, () => {
    found = true;
    return quote ? `'${PARALLEL_INPUT}'` : PARALLEL_INPUT;
  });
  // Added at the end unless a replacement string stands in the command, and where one this reading
  // takes for it may not be one (`-I XX` renames `{}`, `--plus` and `--header` add some): an input
  // too many is a word more, one too few a command missed (`-I XX 'echo {};'` runs the input).
  const sure = !given.has("plus") && !given.has("header") && own.length === 0;
  if ((!found || !sure) && !given.has("pipe") && !given.has("pipe-part")) script += ` ${PARALLEL_INPUT}`;
  return { script, expands: expandsAny(words) };
}

/** The script a wrapper runs: its `-c` value, or `watch`'s words after its options, as `sh -c` gets them. */
function wrappedScript(name: string, args: readonly Word[], at: number): Script | undefined {
  if (name === "parallel" || name === "sem") return parallelScript(args, at);
  if (name === "su" || name === "runuser" || name === "script") {
    // The last `-c` given (su's and runuser's `--session-command` too), read with the tool's
    // options: not one after `--` (the shell's argument) or an option's value (`su -w -c`).
    const read = permutedOptions(args, at, name === "script" ? SCRIPT_SPEC : SU_SPEC);
    if (read?.moves) return { script: "", expands: true }; // which `-c` is the last is not known
    const option = read?.options.findLast((o) => /^-(?:c|-command|-session-command)$/.test(o.name));
    if (option === undefined) return undefined;
    return { script: option.value, expands: option.word !== undefined && expandsAny([option.word]) };
  }
  if (name === "sg") {
    // By position (shadow's sg): `sg [-] GROUP [-c] COMMAND`; words after the command are dropped.
    // A word before the command that may vanish or become `-` or `-c` moves it (`sg $a root cmd`).
    const group = args[at + 1]?.text.startsWith("-") ? at + 2 : at + 1;
    const position = args[group + 1]?.text === "-c" ? group + 2 : group + 1;
    if (args.slice(at + 1, position).some(mayBeOption)) return { script: "", expands: true };
    const command = args[position];
    return command && scriptOf([command]);
  }
  if (name === "flock") {
    // `flock FILE -c SCRIPT`: `-c` right after the file. Where flock's options or file are not
    // all read here, any `-c` may be it.
    const start = skipOptions(args, at, DENY_ONLY_WRAPPERS.flock as WrapperSpec);
    if (start === undefined || start.moves || start.shifts) return anyCommandOption(args, at);
    const value = /^(?:-c|--command)$/.test(args[start.command]?.text ?? "")
      ? args[start.command + 1]
      : undefined;
    return value && scriptOf([value]);
  }
  if (name !== "watch") return undefined;
  let i = at + 1;
  for (; i < args.length && (args[i] as Word).text.startsWith("-"); i += 1) {
    if (/^(?:-n|--interval|-q|--equexit)$/.test((args[i] as Word).text)) i += 1;
  }
  return i < args.length ? scriptOf(args.slice(i)) : undefined;
}

/** The value of the last `-c` or `--command` option (any unique prefix, `--co=…`), wherever it stands, also bundled (`-nc CMD`). */
function anyCommandOption(args: readonly Word[], at: number): Script | undefined {
  let script: Script | undefined;
  for (let i = at + 1; i < args.length; i += 1) {
    const word = args[i] as Word;
    const arg = word.text;
    const long = /^--([a-z-]+)(=?)/.exec(arg);
    const named = long !== null && "command".startsWith(long[1] as string);
    // The option's own text: `--co=`, `-nc`; what follows in the word is the script.
    const option = named ? long[0] : /^-[A-Za-z]*c/.exec(arg)?.[0];
    if (option !== undefined && option.length === arg.length && !option.endsWith("=")) {
      const value = args[i + 1];
      script = value === undefined ? { script: "", expands: false } : scriptOf([value]);
      i += 1;
    } else if (option !== undefined) {
      script = { script: arg.slice(option.length), expands: expandsAny([word]) };
    }
  }
  return script;
}

/** `mapfile -C CALLBACK` (or `-CCALLBACK`): the callback, run as a command. */
function callbackScript(args: readonly Word[], at: number): Peeled {
  // Wherever it stands: other options' values (`-c 1`) come between. The last `-C` is the one
  // that runs.
  let callback: Peeled;
  for (let i = at + 1; i < args.length; i += 1) {
    const arg = (args[i] as Word).text;
    if (arg === "--") break;
    const c = arg.indexOf("C");
    if (c > 0 && /^-[A-Za-z]*C/.test(arg)) {
      const word = c < arg.length - 1 ? (args[i] as Word) : args[i + 1];
      callback = word && {
        script: word === args[i] ? arg.slice(c + 1) : word.text,
        expands: expandsAny([word]),
      };
    }
  }
  return callback;
}

/**
 * The script a shell is told to run: `bash -c STRING`, `sh -lc STRING`, `bash -o pipefail -c STRING`.
 * Claude Code matches the commands inside, so `bash -c 'rm -rf /'` is `rm -rf /`. A shell given
 * no script and no script file (or `-s`) reads its commands from stdin, which cannot be seen
 * (`echo 'rm -rf /' | bash`, `bash <<EOF`): unreadable. A script file is left as the command.
 */
function peelShell(args: readonly Word[], at: number, out: Output): Peeled {
  // fish runs `-C`/`--init-command` first, and each `-c` of several.
  if (
    programName((args[at] as Word).text) === "fish" &&
    (args.some((a) => /^(?:-C|--init-command)/.test(a.text)) ||
      args.filter((a) => a.text === "-c").length > 1)
  ) {
    markUnreadable(out);
  }
  let hasC = false;
  let stdin = false;
  let shortSeen = false;
  for (let i = at + 1; i < args.length; i += 1) {
    const arg = (args[i] as Word).text;
    if (hasC && !/^[-+]/.test(arg)) return scriptOf([args[i] as Word]);
    if (arg === "--version" || arg === "--help") return undefined; // prints, runs nothing
    // A brace list may expand into options and the script (`bash {-c,'rm -rf /'}`), and
    // `keyword` or `histexpand` (`-o`) changes how the script is read (changesReading); so may
    // an input line xargs puts there (`xargs -I{} bash {} …`), or an option that is a pattern
    // (`bash -[c] …` beside a file named `-c`).
    const word = args[i] as Word;
    if (braceList(arg) || READING_OPTIONS.test(arg) || (word.kind !== "redirect" && word.runTime === true))
      markUnreadable(out);
    // An option made at run time (`bash -$X …`, `bash ~` with HOME=-c) may be `-c`.
    if ((/^[-+]/.test(arg) && (word.kind === "glob" || /[[$`]/.test(arg))) || HOME_ALONE.test(arg))
      markUnreadable(out);
    if (arg === "--") {
      if (hasC && args[i + 1]) return scriptOf([args[i + 1] as Word]);
      if (!hasC && !stdin && args[i + 1] !== undefined) return scriptFile(args[i + 1] as Word, out);
      break;
    }
    if (/^--?(?:rcfile|init-file)$/.test(arg)) {
      markUnreadable(out); // a script of its own, run first (bash takes long options after one dash too)
      i += 1;
    } else if (BASH_LONG_OPTIONS.test(arg) && (arg.startsWith("--") || !shortSeen)) {
      // `-norc`, `--login`: no `c` to bundle. After a short option, bash reads `-norc` as one.
    } else if (/^[-+][A-Za-z]+$/.test(arg)) {
      shortSeen = true;
      // Short options, alone or bundled (`-euo pipefail -c …`, `-co pipefail …`): `c` takes the
      // script from the first word after the options, each `o` or `O` takes the next word as its
      // value, and `s` reads the script from stdin.
      if (arg.startsWith("-") && arg.includes("c")) hasC = true;
      if (arg.startsWith("-") && arg.includes("s")) stdin = true;
      if (arg.startsWith("-") && /[kH]/.test(arg)) markUnreadable(out); // changesReading's options
      // Each `o`'s value: one of changesReading's, or one worked out at run time, may be either.
      const values = arg.replace(/[^oO]/g, "").length;
      for (const value of args.slice(i + 1, i + 1 + values))
        if (READING_OPTIONS.test(value.text) || RUN_TIME_OPTION.test(value.text)) markUnreadable(out);
      i += values;
    } else if (!/^[-+]/.test(arg)) {
      if (mayExpandToOptions(args[i] as Word)) markUnreadable(out);
      // An expansion there may be no word (`${x:+}`, `"${@:2}"`), and a later one the options.
      if (maySplit(word) && i + 1 < args.length && !QUOTED_PATH.test(arg)) markUnreadable(out);
      if (!stdin) return scriptFile(args[i] as Word, out);
      break;
    }
  }
  // No script at all: read from stdin, or, for a `-c` with none, passed in by what runs the
  // shell (`… | xargs sh -c`). Either way it cannot be seen.
  markUnreadable(out);
  return undefined;
}

/**
 * A shell's script word that is a pattern whose first character may match a `-`: it may expand
 * into options and a script (`bash [-]c 'rm -rf /'` or `bash *` beside a file named `-c`), as a
 * lone expansion may (scriptFile); after `--` it names files only. A `[` counts quoted too, as it
 * does for a program's name.
 */
function mayExpandToOptions(word: Word): boolean {
  return (word.kind === "glob" && /^[*?@!+]/.test(word.text)) || word.text.startsWith("[");
}

/** bash's long options without a value, which it takes after one dash as after two. */
const BASH_LONG_OPTIONS =
  /^--?(?:norc|noprofile|noediting|login|posix|restricted|verbose|debugger|dump-strings|dump-po-strings|wordexp|pretty-print|protected)$/;

/**
 * A script file stays as the command, as written. A process substitution in its place
 * (`bash <(curl …)`, `source <(curl …)`) is a script downloaded and run, as `curl … | sh` is:
 * unreadable.
 */
/** A word that is one expansion and nothing else: `$f`, `${f}`, `"$@"`, `${a[@]}`, `$(…)`, a backquote. */
const LONE_EXPANSION = /^(?:\$\{?[A-Za-z_][A-Za-z0-9_]*(?:\[[@*]\])?\}?|\$\{?[@*]\}?|\$\(.*\)|`.*`)$/s;

function scriptFile(word: Word, out: Output): Peeled {
  // A file named by a lone expansion may be stdin (`source $f`, or `bash $f` with `$f` empty,
  // which reads the script from stdin), and so may a pattern or an expansion under /dev or /proc
  // (`source /dev/stdi?`). `source "$HOME/.nvm/nvm.sh"` is a file like any other.
  const text = word.text;
  if (
    text.startsWith("<(") ||
    // zsh's `=(…)`, a file holding what `…` prints (`source =(curl …)`), reaches here as `=`.
    (text === "=" && word.kind === "word") ||
    readsStdin(text) ||
    LONE_EXPANSION.test(text) ||
    ((word.kind === "glob" || /[$`{[*?]/.test(text)) && /^\/+(?:dev|proc)\//.test(text))
  ) {
    markUnreadable(out);
  }
  return undefined;
}

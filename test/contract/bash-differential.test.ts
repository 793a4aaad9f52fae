/**
 * splitCommand against bash itself. Each command in test/fixtures/bash/hidden-commands.json once
 * hid a program from deny rules: bash runs `zzmark`, and splitCommand neither named it nor called
 * the command unreadable. This test runs every one through the real bash, to prove bash does run
 * `zzmark` there (so the case is not vacuous), and checks that splitCommand now names it or fails
 * safe (`unreadable`, so every deny-style Bash rule matches).
 *
 * The sandbox: no PATH (every program is missing, and bash's command_not_found_handle records
 * the name instead), an empty working directory for each command and a home directory of its own,
 * no rc files, a 2 s limit.
 * The commands use only builtins that act inside it.
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { splitCommand } from "../../src/core/shell-command.js";
import { tempDir } from "../support/temp.js";

const BASH = "/bin/bash";
const MARK = "zzmark";
const cases: { command: string; why: string }[] = JSON.parse(
  readFileSync(new URL("../fixtures/bash/hidden-commands.json", import.meta.url), "utf8"),
);

function sandbox() {
  const root = tempDir("bash");
  const home = join(root, "home");
  mkdirSync(home);
  const ran = join(root, "ran.log");
  // To the log (a command may send its stderr elsewhere) and to stderr (rbash may not write files).
  const handler = `command_not_found_handle() { echo "RAN:$*" >&2; printf 'RAN:%s\\n' "$*" >> ${JSON.stringify(ran)}; return 127; }\n`;
  writeFileSync(join(root, "env.sh"), handler);
  // A nested `bash -c` reads ~/.bashrc in some setups instead of BASH_ENV: the same handler.
  writeFileSync(join(home, ".bashrc"), handler);
  return {
    /** The programs bash tried to run. */
    run(command: string): string[] {
      writeFileSync(ran, "");
      // A working directory of its own: files a command makes (`: > -n`) meet no other command.
      const cwd = mkdtempSync(join(root, "cwd-"));
      const result = spawnSync(
        "/usr/bin/env",
        [
          "-i",
          "PATH=/nonexistent",
          `HOME=${home}`,
          `BASH_ENV=${join(root, "env.sh")}`,
          BASH,
          "--norc",
          "--noprofile",
          "-c",
          command,
        ],
        { cwd, timeout: 2_000, input: "", encoding: "utf8" },
      );
      // Also what bash reports itself: `exec` on a missing program, a child shell that loaded no
      // handler, a name `hash -p` bound to a missing file.
      return `${readFileSync(ran, "utf8")}\n${result.stderr ?? ""}`.split("\n").flatMap((line) => {
        if (line.startsWith("RAN:")) return [line.slice(4)];
        const reported =
          /exec: ([^:]+): not found$/.exec(line) ??
          /: ([^:\s]+): command not found$/.exec(line) ??
          /: \/nonexistent\/([^:]+): No such file or directory$/.exec(line);
        return reported ? [reported[1] as string] : [];
      });
    },
  };
}

describe.skipIf(!existsSync(BASH))("splitCommand against bash 5", () => {
  const bash = sandbox();
  const ranMark = (command: string) =>
    bash.run(command).some((ran) => ran === MARK || ran.startsWith(`${MARK} `));
  /** bash runs the marked program, and the split names it or is unreadable. */
  const namesOrFailsSafe = (command: string) => {
    expect(ranMark(command)).toBe(true);
    const split = splitCommand(command);
    const named = split.subcommands.some((s) => [s.text, ...s.variants].some((t) => t.startsWith(MARK)));
    expect(named || split.unreadable).toBe(true);
  };
  /** bash runs the marked program, and the split is unreadable: every deny-style rule matches it. */
  const failsSafe = (command: string) => {
    expect(ranMark(command)).toBe(true);
    expect(splitCommand(command).unreadable).toBe(true);
  };

  it("runs in a sandbox where a missing program is recorded, not run", () => {
    expect(new Set(bash.run(`true; ${MARK} -rf /; echo hi`))).toEqual(new Set([`${MARK} -rf /`]));
  });

  it.each(cases)("$why: $command", ({ command }) => namesOrFailsSafe(command));

  // `[[ … ]]` is read as one command only where bash reads a test; where it does not, or once
  // bash has closed it, its `||` and `&&` separate commands again.
  it.each([
    `"[[" x || ${MARK} -rf / ]]`,
    `\\[[ x || ${MARK} -rf / ]]`,
    `x=1 [[ a || ${MARK} -rf / ]]`,
    `command [[ a || ${MARK} -rf / ]]`,
    `false >& [[ x || ${MARK} -rf / ]]`,
    `false >| [[ x || ${MARK} -rf / ]]`,
    `"if" [[ x || ${MARK} -rf / ]]`,
    `[[ (a)]] && ${MARK} -rf /`,
    `[[ a ]]&& ${MARK} -rf / ]]`,
    `((echo) ; (${MARK} -rf /))`,
    `(( a[1 )) || ${MARK} -rf /`,
    `(( $(${MARK} -rf /) ))`,
    `echo \\; [[ && ${MARK} -rf / ]]`,
    `case b in([[ |b)${MARK} -rf / ]];;esac`,
    `shopt -s expand_aliases;alias [[=false\n[[ ||${MARK} -rf / ]]`,
    `shopt -s extglob\n: @([[ )&&${MARK} -rf / ]]`,
    `a=(;[[ &&\n${MARK} -rf / ]]`,
    `(([[ ))||${MARK} -rf / ]]\n( (:))`,
    `[[ a &&\n  b ]] && ${MARK} -rf /`,
    `shopt -s extglob\nfalse @(|[[ x)||${MARK} -rf / ]]`,
    `shopt -s expand_aliases;ali\\as b='false \\'\nb;[[ x||${MARK} -rf / ]]`,
    `shopt -s expand_aliases;printf -v BASH_ALIASES[b] %s 'false \\'\nb;[[ x||${MARK} -rf / ]]`,
    `shopt -s expand_aliases;alias b='false \\'\neval 'b;[[ x||${MARK} -rf / ]]'`,
    `(( (a+(b)) ;[[ $#))||${MARK} -rf / ]]`,
    `[[ -z a ]]\\\n || ${MARK} -rf / && [[ b ]]`,
    `: $(($(case a in a)esac);${MARK} -rf /))`,
  ])("where bash reads no test, or has closed it: %j", namesOrFailsSafe);

  it.each([
    `[[ -n a && $x == "" ]] && ${MARK} -rf /`,
    `[[ abc =~ ^a(b|x)c$ ]] && ${MARK} -rf /`,
    `if [[ a < b || -z "" ]]; then ${MARK} -rf /; fi`,
    `! [[ ( a == b ) ]] && ${MARK} -rf /`,
    `(( 5 > 3 && 2 << 1 )) && ${MARK} -rf /`,
    `for (( i=0; i<1; i++ )); do ${MARK} -rf /; done`,
    // On a later line too: an alias that could change how bash reads it makes the command unreadable.
    `# a comment first\n[[ -n a && $x == "" ]] && ${MARK} -rf /`,
    `#!/bin/bash\nif [[ -z "" || a == -h ]]; then ${MARK} -rf /; fi`,
  ])("reads a test or arithmetic as bash does, and what runs after it: %j", (command) => {
    expect(new Set(bash.run(command))).toEqual(new Set([`${MARK} -rf /`]));
    const split = splitCommand(command);
    expect(split.unreadable).toBe(false);
    // The test or arithmetic, whole, and the one program bash ran: nothing of it read as a command.
    expect(split.subcommands.map((s) => s.text)).toEqual([
      expect.stringMatching(/^(?:\[\[ .* \]\]|(?:for )?\(\( .* \)\))$/),
      `${MARK} -rf /`,
    ]);
  });
  // A compound array assignment's elements are data: its globs and first word run nothing. Its
  // substitutions run, and an indexed array's subscript runs a `$(…)` even from quotes.
  it.each([
    [`files=(*.ts "a b" [k]=v); ${MARK} -rf /`, [`${MARK} -rf /`]],
    [`pkgs=(rm -rf /) && ${MARK} -rf /`, [`${MARK} -rf /`]],
    [
      `declare -A m=([web]=3000 [api]=4000); ${MARK} -rf /`,
      ["declare -A m=([web]=3000 [api]=4000)", `${MARK} -rf /`],
    ],
    [`x=(a # a comment\n  b\n) ${MARK} -rf /`, [`${MARK} -rf /`]],
    [
      `local_f() { local -a xs=($(${MARK} -a) <(${MARK} -b)); }; local_f`,
      ["local_f", "local -a xs=($(...) <(...))", `${MARK} -a`, `${MARK} -b`],
    ],
  ])("reads a compound array assignment as data, as bash does: %j", (command, expected) => {
    const programs = expected.filter((text) => text.startsWith(MARK));
    expect(new Set(bash.run(command))).toEqual(new Set(programs));
    const split = splitCommand(command);
    expect(split.unreadable).toBe(false);
    expect(split.subcommands.map((s) => s.text)).toEqual(expected);
  });

  // What a review of the first such readings found hidden: each was unreadable before them.
  it.each([
    `a[[]= ]= ${MARK} -rf /`,
    `declare -A x=([a[b] #]=)\n${MARK} -rf /\n)`,
    `declare -A x=([$[1] #]=)\n${MARK} -rf /\n)`,
    `declare -n r; r=BASH_CMDS; r[ll]=/nonexistent/${MARK}; ll`,
    `read $"PS4" <<< '$(${MARK} -rf /)'; set -x; :`,
    `read \${x}PS4 <<< '$(${MARK} -rf /)'; set -x; :`,
    `set -- ${MARK} -rf; "$@/x"`,
    `declare -a "x=($(echo '$(${MARK} -rf /)'))"`,
    `>${MARK}; case x in x) ;; esac; zzm*|cat`,
    `>${MARK}; case x in x) ;; esac; (zzm*|cat)`,
    `: [[; x=(a)z ${MARK} -rf /`,
    `x=n; declare -$x r; r=BASH_CMDS; r[ll]=/nonexistent/${MARK}; ll`,
    `x=-n; declare $x r=PS4; r='$(${MARK} -rf /)'; set -x; :`,
    `>${MARK}; : case in\n( zzm* )`,
    `>${MARK}; : case in\n(zzm*|cat)`,
    `: [[; x=($'\\'')z ${MARK} -rf /`,
    `: [[; x=(a \\$'\\')z ${MARK} -rf /`,
    `: [[; x=(a $$'\\')z ${MARK} -rf /`,
    `HOME=-n; declare ~ r=PS4; r='$(${MARK} -rf /)'; set -x; :`,
    `x=-v; printf $x PS4 '$(${MARK} -rf /)'; set -x; :`,
    `x=-C; mapfile $x ${MARK} -c1 a <<< l`,
  ])("fails safe where bash reads more than the split did: %j", failsSafe);

  // What a sixth review found hidden, each also hidden before those readings but the arrays.
  it.each([
    `jobs -x ${MARK} -rf /`,
    `builtin jobs -x ${MARK} -rf /`,
    // An escaped `;` or a `>&` just past the 256 characters read back for a command's start.
    `echo \\;${" ".repeat(255)}[[ x && ${MARK} -rf / ]]`,
    `echo >&${" ".repeat(255)}[[ x && ${MARK} -rf / ]]`,
    // An alias read again by eval, its line joined by a newline from `$'…'`.
    `shopt -s expand_aliases; alias b='zz\\'; eval $'b\\nmark -rf /'`,
    // set -k takes assignment-shaped words out of a command's arguments; set -H replays words.
    `set -k; trap x=1 '${MARK} -rf /' EXIT`,
    `set -k; /bin/bash x=1 -c '${MARK} -rf /'`,
    `set -k; . x=1 /dev/stdin <<< '${MARK} -rf /'`,
    `set -o keyword; trap x=1 '${MARK} -rf /' EXIT`,
    `set -o history -H\n: ${MARK}\n!:1`,
    `o $( (($[))<<E\nE)\n${MARK}\nE`,
    // A name bash does not take for an array's (a no-break space, a CR, one cut by the look-back).
    `a\u00a0x=() { ${MARK} -rf /; }; a\u00a0x=`,
    `a\rx=() { ${MARK} -rf /; }; a\rx=`,
    `a.${"x".repeat(130)}=() { ${MARK} -rf /; }; a.${"x".repeat(130)}=`,
    // A subscript's end past a nested bracket, a quoted `]` or an escaped one.
    `let 'a[[]$(${MARK} -rf /)]'`,
    `[[ -v 'a[[]$(${MARK} -rf /)]' ]]`,
    `let 'a["]"$(${MARK} -rf /)]'`,
    `let 'a[\\]$(${MARK} -rf /)]'`,
    `x='a[[]$(${MARK} -rf /)]'; let x`,
    `let 'a[[[]]$(${MARK} -rf /)]'`,
    // A shell's options by brace expansion, and bash's long options after one dash.
    `/bin/bash {-c,'${MARK} -rf /'}`,
    `/bin/bash -{c,} '${MARK} -rf /'`,
    `/bin/bash -rcfile x <<< '${MARK} -rf /'`,
    `/bin/bash -init-file x <<< '${MARK} -rf /'`,
    `/bin/bash -rcfile /dev/null -c '${MARK} -rf /'`,
  ])("names what bash runs in %j or fails safe (sixth review)", namesOrFailsSafe);

  // What a review of the sixth review's fixes found: the loosenings' holes first, then older ones.
  it.each([
    // A `$"…"` string keeps its `$` in the word, which bash drops: `$$(…)` is `$(…)`.
    `PS4=$"\\$(${MARK} -rf /)"; set -x; :`,
    `PS4=$"$"'(${MARK} -rf /)'; set -x; :`,
    `export PS4=$"\\$(${MARK} -rf /)"; set -x; :`,
    // After a short option, bash reads `-verbose` or `-norc` as bundled short options.
    `/bin/bash -e -verbose pipefail -c ${MARK}`,
    `/bin/bash -e -posix pipefail -c ${MARK}`,
    `/bin/bash -e -norc pipefail +n ${MARK}`,
    `/bin/bash -e -posix pipefail <<< ${MARK}`,
    // A subscript longer than the pieces read, or with a quote closing past 64 characters.
    `let 'a[${" ".repeat(257)}$(${MARK} -rf /)]'`,
    `x='a[${"1+".repeat(300)}$(${MARK} -rf /)]'; echo $((x))`,
    `let 'a["${"x".repeat(64)}]"$(${MARK} -rf /)]'`,
    `let 'a[[${" ".repeat(71)} $(${MARK} -rf /) ]]'`,
    // A backquote or `(` spelt with escapes, and a `$"` between the name and its `[`.
    `let $'a[\\x60${MARK}\\x60]'`,
    `let $'a[\\140${MARK}\\140]'`,
    `let $'a[$\\x28${MARK} -rf /)]'`,
    `let $'a[$\\050${MARK} -rf /)]'`,
    `a=1; x=a$"[\\$(${MARK} -rf /)]"; echo $((x))`,
    // Options worked out at run time.
    `o=keyword; set -o $o; trap x=1 '${MARK} -rf /' EXIT`,
    `k=-k; set $k; trap x=1 '${MARK} -rf /' EXIT`,
    `o=keyword; shopt -so $o; trap x=1 '${MARK} -rf /' EXIT`,
    `set -o key{word,}; trap x=1 '${MARK} -rf /' EXIT`,
    `o=keyword; /bin/bash -o $o -c "trap x=1 '${MARK} -rf /' EXIT"`,
    `/bin/bash -o keyword -c "trap x=1 '${MARK} -rf /' EXIT"`,
  ])("names what bash runs in %j or fails safe (seventh review)", namesOrFailsSafe);

  // What a review of those fixes found (an eighth round): three it had opened, the rest older.
  it.each([
    // A `${…}` or `$((…))` in a subscript, which bash passes over whole, `]` and quotes included.
    `let 'a[[\${x:-]}]$(${MARK} -rf /)]'`,
    `let 'a["\${x:-"]"}$(${MARK} -rf /)"]'`,
    `let 'a[\${x:-]}$(${MARK} -rf /)]'`,
    `let 'a[$((0]$(${MARK} -rf /)))]'`,
    `let 'a[$((${MARK}) )]'`,
    `let 'a[["]""]$(${MARK} -rf /)"]]'`,
    // Each `o` of a `set` word takes a name: `keyword` is the second.
    `set -oo pipefail keyword; trap x=1 '${MARK} -rf /' EXIT`,
    // Octal past 255 keeps its low 8 bits; echo -e and printf %b take `\0nnn`.
    `let $'a[$\\450${MARK} -rf /)]'`,
    `let $'a[\\540${MARK}\\540]'`,
    `printf -v x %b 'a[\\0044(${MARK} -rf /)]'; echo $((x))`,
    // A `$(` spelt across quotes, seen in the words the split reads.
    `let 'a[$''(${MARK} -rf /)]'`,
    `let "a[$"'(${MARK} -rf /)]'`,
    `[[ -v 'a[$''(${MARK} -rf /)]' ]]`,
    `declare -i n; n='a[$''(${MARK} -rf /)]'`,
    `x='a[$''(${MARK} -rf /)]'; echo $((x))`,
  ])("names what bash runs in %j or fails safe (eighth review)", namesOrFailsSafe);

  // What a review of the eighth round's fixes found (a ninth round).
  it.each([
    // A quote that closes far away or on a later line: bash's subscript runs to it.
    `let 'a["]${"x".repeat(256)}"$(${MARK} -rf /)]'`,
    `n='a["\n]"$(${MARK} -rf /)]'; let n`,
    // Inside single quotes a backslash escapes nothing: `'\'` closes.
    `x="a['\\'']'\\$(${MARK} -rf /)]"; echo $((x))`,
    // A `$((` holding quotes, and `\x{…}` escapes (bash 5.2 reads `$'\x{24}'` as `$`).
    `let 'a[$((" ))]$(${MARK} -rf /)"))]'`,
    `let $'a["\\x{22}"]"$(${MARK} -rf /)]'`,
    `let $'a[\\x{24}(${MARK} -rf /)]'`,
    // A tenth round: a `#` after a blank in a `$((`, which bash may read as a comment past the `))`.
    `let 'a[$((( #)))]\n)))$(${MARK} -rf /)]'`,
    `let 'a[$(( #))]\n))$(${MARK} -rf /)]'`,
    `test -v 'a[$(( #))]\n))$(${MARK} -rf /)]'`,
    // A name made by an expansion or a brace list before the subscript's `[`.
    `let a\${x}'[$(${MARK} -rf /)]'`,
    `let \${x:-a}'[$(${MARK} -rf /)]'`,
    `let {a,b}'[$(${MARK} -rf /)]'`,
  ])("names what bash runs in %j or fails safe (ninth review)", namesOrFailsSafe);

  // An eleventh round. A subscript's code runs once bash finds its `]`, also spelt as an escape;
  // a name made by a special or positional parameter (`$-`, `$1`) before the `[`.
  it.each([
    `let 'a[[$(${MARK} -rf /)]]'`,
    `printf -v x 'a[$(${MARK} -rf /)\\x5d'; let x`,
    `printf -v x 'a[$(${MARK} -rf /)\\135'; let x`,
    `x=$(echo -e 'a[$(${MARK} -rf /)\\0135'); let x`,
    `let $-'[$(${MARK} -rf /)]'`,
    `set -- a; let $11'[$(${MARK} -rf /)]'`,
    `set -- a; let "$@"'[$(${MARK} -rf /)]'`,
  ])("names what bash runs in %j or fails safe (eleventh review)", namesOrFailsSafe);

  // The eleventh round's other findings: a compatibility level (arithmetic expands a subscript's
  // value again), a prompt set by element, by name or from a value expanded at the assignment,
  // the whole-text checks on text eval or a shell reads again and across a line continuation, an
  // alias used in a `$(…)` of the same line, POSIX mode's `'` inside `"${…}"`, comments off.
  it.each([
    `BASH_COMPAT=51; x='$(${MARK} -rf /)'; (( a[$x] ))`,
    `shopt -s compat44; x='$(${MARK} -rf /)'; echo $(( a[$x] ))`,
    `unset PS4; : \${PS4[0]=\\$\\(${MARK}\\)}; set -x; :`,
    `unset PS4; r=PS4; : \${!r=\\$\\(${MARK}\\)}; set -x; :`,
    `x='$(${MARK} -rf /)'; PS4=$x; set -x; :`,
    `x='$(${MARK} -rf /)'; PS4="+ $x "; set -x; :`,
    `x='$(${MARK} -rf /)'; echo "\${x@\\\nP}"`,
    `x='$(${MARK} -rf /)'; eval 'echo \${x@'P'}'`,
    `shopt -s expand_aliases; alias a='true;'; echo $(a ${MARK})`,
    `set -o posix\necho "\${x:-'}"; ${MARK} #'}"`,
  ])("fails safe on %j (eleventh review)", failsSafe);

  // A third review of this round's changes: `time` after a pipe is a program, not the keyword;
  // an empty extended glob's or array's `()` defines no function; a `]` made at run time closes a
  // subscript as a written one does; a glob in eval's words expands to file names read as code.
  it.each([
    `: | time [[ -n x || ${MARK} ]]`,
    `( : | time case x in a|${MARK} )`,
    `shopt -s extglob\necho @() [[ x && ${MARK} ]]`,
    `( ${"a".repeat(140)}=() case x in a|${MARK} )`,
    `r=]; let 'a[$(${MARK})'$r`,
    `printf -v r '%b' '\\13''5'; let 'a[$(${MARK})'$r`,
    `: > 'x;${MARK}'; eval : *`,
  ])("names what bash runs in %j or fails safe (eleventh review, third pass)", namesOrFailsSafe);

  // A fourth pass: a brace sequence makes a subscript's `]`; a `~` after `=` or `:`, a brace list
  // and a `~` it makes expand in eval's or a shell's words, and their values are read as code.
  it.each([
    `a=(1); unset 'a[$(${MARK})'{Z..a}`,
    `HOME='/h;${MARK}'; eval x=~`,
    `HOME=';${MARK} -rf /'; eval : a=b:~`,
    `HOME=';${MARK}'; eval : {~,}`,
    `eval echo {';',}${MARK}`,
    `/bin/bash -c 'echo '{';',}${MARK}`,
  ])("names what bash runs in %j or fails safe (eleventh review, fourth pass)", namesOrFailsSafe);

  // A fifth pass: a `${` this reading never closes (POSIX mode's `'`, or nested past 64) is unsure
  // whether or not shell-quote then refuses the text.
  it.each([
    `set -o posix\necho "\${x:-'" '"}"; ${MARK}; : "'" #"`,
    `echo "\${x:-" '"${"${x:-".repeat(65)}${"}".repeat(65)}}"; ${MARK}; : "'" #"`,
    `: \${x:-'}' #${"${x:-".repeat(65)}${"}".repeat(65)}}; ${MARK}`,
  ])("fails safe on %j (eleventh review, fifth pass)", failsSafe);

  // A script whose text the shell expands before it runs: the value becomes code.
  it.each([
    `x='; ${MARK} -rf /'; /bin/bash -c "echo $x"`,
    `x='; ${MARK} -rf /'; eval echo $x`,
    `x='; ${MARK} -rf /'; trap "echo $x" EXIT`,
    `set -- '; ${MARK} -rf /'; /bin/bash -c "echo $1"`,
    `cb='${MARK} -rf / #'; mapfile -C "$cb" -c 1 a <<< x`,
  ])("fails safe where a script holds an expansion of the shell that runs it: %j", failsSafe);

  // An extended glob where a declaration reads its options: it may expand to `-n` (a file of that
  // name), and the nameref then sets PS4. The split reads the glob cut at its `(`.
  it.each([
    `shopt -s extglob\n: > -n; declare @(-n) r=PS4; r='$(${MARK} -rf /)'; set -x; :`,
    `shopt -s extglob\n: > -n; declare !(zz) r=PS4; r='$(${MARK} -rf /)'; set -x; :`,
    `shopt -s extglob\n: > -n; f() { local +(-n) r=PS4; r='$(${MARK} -rf /)'; set -x; :; }; f`,
  ])("where an extended glob may be a declaration's option: %j", failsSafe);

  // A lone glob after a `case` whose arm has the same text as a pattern: the glob runs what it
  // matches (here the file `${MARK}`), the pattern runs nothing.
  it.each([
    `: > ${MARK}; case x in ${MARK.slice(0, 2)}*) ;; esac; ${MARK.slice(0, 2)}*`,
    `: > ${MARK}\ncase x in\n  ${MARK.slice(0, 2)}*) ;;\nesac\n${MARK.slice(0, 2)}*`,
  ])("where a lone glob outside a case's arms has a pattern's text: %j", failsSafe);

  // The patterns of a case's arms run nothing; `esac` ends them, and what comes after runs.
  it.each([
    `(case x in a) ;; esac | ${MARK} -rf /)`,
    `case x in a) ;; esac && (${MARK} -rf /)`,
    `case x in x) ;; ${MARK}) ;; esac; (${MARK} -rf /)`,
    // Only a real `;;` ends an arm: not a `;` before a newline, a blank line or a comment line.
    `(cd /tmp\n\n${MARK} -rf /)`,
    `(echo a;\n${MARK} -rf /)`,
    `(echo a\n# comment\n${MARK})`,
    `(cat <<E\nx\nE\n\n${MARK})`,
    `(echo a &&\n\n${MARK})`,
    `case x in\n  x) (\n    cd /\n\n    ${MARK}) ;;\nesac`,
    `x=$( (\n  cd /tmp\n\n  ${MARK}) )`,
    `eval "(:\n\n${MARK})"`,
    // Only an unquoted `case` where a command starts opens one: a quoted one is a program.
    `\\case x in; (${MARK})`,
    `"case" x in\n(${MARK})`,
    `(\\case x in a | ${MARK})`,
    `\\{ case x in; (${MARK})`,
    `echo $(\\case x in; (${MARK}))`,
    // An extended glob's `)` ends no command: `case` after it is an argument.
    `shopt -s extglob\necho @(a) case x in\n(${MARK})`,
    `shopt -s extglob\nls x@(a) case x in; (${MARK})`,
    // A second review: `case x in esac` is whole, so the `|` after it is a pipe; a `case` inside a
    // test the pattern watch had closed too early (an escaped blank, a regex's or glob's
    // parentheses); a quoted `case` in an arm.
    `case x in esac|(${MARK})`,
    `( case x in esac|${MARK})`,
    `c='${MARK} -rf /'; case x in esac|($c)`,
    `[[ a\\ ]] || case == in ]]|(${MARK})`,
    `( [[ x =~ ( ]] ) || case == in ]]|${MARK})`,
    `( [[ x == @( ]] ) || case == in ]]|${MARK})`,
    `case a in a) "case" y in\n(${MARK});; esac`,
  ])("names what runs after a case's arms in %j", namesOrFailsSafe);

  // Tests are read once every `case` before them has met its `esac`: until then a
  // `[[` after `;;`, `(` or `in` may be a pattern, and reading it as a test would swallow what runs.
  it.each([
    `case b in a) :;; [[ | b) ${MARK} -rf / ]];; esac`,
    `case x in (esac) :;; [[ | x) ${MARK} -rf / ]];; esac`,
    `case x in a) echo esac;; [[ | x) ${MARK} -rf / ]];; esac`,
    `case x in a) case y in b) :;; esac;; [[ | x) ${MARK} -rf / ]];; esac`,
    `case x in a) :;; "esac") :;; [[ | x) ${MARK} -rf / ]];; esac`,
    `case x in a) :;; \\esac) :;; [[ | x) ${MARK} -rf / ]];; esac`,
    `case x in a) :;; b|esac) :;; [[ | x) ${MARK} -rf / ]];; esac`,
    `time case x in a) :;; [[ | x) ${MARK} -rf / ]];; esac; [[ a || b ]]`,
    `# a case\ncase x in a) :;; [[ | x) ${MARK} -rf / ]];; esac`,
    // A review of the first version: a test's regex word holds a `]]` glued to it, so the `esac`
    // after it is inside the test, not the one that closes the case.
    `case $1 in a) [[ $x =~ x|]] && esac ]];; [[ | *) ${MARK} -rf / ]];; esac`,
    `case $1 in\n  -r) [[ $x =~ ^(a|b)|]] && esac ]] ;;\n  [[ | *) ${MARK} -rf / && : ]] ;;\nesac`,
    `case $1 in a) [[ $x =~ (x)]] && ! esac ]];; [[ | *) ${MARK} -rf / ]];; esac`,
    `case b in a) [[ a =~ ]]( ) && esac ]];; [[ | b) ${MARK} -rf / ]];; esac`,
    `case b in a) [[ a =~ ]]|x && esac ]];;& [[ | b) ${MARK} -rf / ]];; esac`,
  ])("names what runs in %j, where a [[ may be a case's pattern", namesOrFailsSafe);
  it.each([
    `case "$1" in\n  -v) V=1 ;;\nesac\nif [[ -z "$A" || "$B" == x ]]; then ${MARK} -rf /; fi`,
    `while [[ $# -gt 0 ]]; do\n  case $1 in\n    -f) F=1; shift ;;\n    *) break ;;\n  esac\ndone\n[[ -z "$F" && ! -d out ]] && ${MARK} -rf /`,
    `f() { case $1 in a) :;; esac; }; f a; [[ -n "$HOME" || "$x" == y ]] && ${MARK} -rf /`,
    `case x in a) case y in b) :;; esac;; esac\n[[ a && "$u" == "" ]] && ${MARK} -rf /`,
    `case $1 in -v) [[ $2 =~ ^[0-9]+$ ]] && V=$2;; esac; [[ -n "$V" || -z "$W" ]] && ${MARK} -rf /`,
  ])("reads a test after a closed case as bash does: %j", (command) => {
    expect(new Set(bash.run(command))).toEqual(new Set([`${MARK} -rf /`]));
    const split = splitCommand(command);
    expect(split.unreadable).toBe(false);
    expect(split.subcommands.map((s) => s.text)).toContain(`${MARK} -rf /`);
    expect(split.subcommands.some((s) => /^\[\[ .* (?:&&|\|\|) .* \]\]$/.test(s.text))).toBe(true);
  });

  // A program named by a path whose directory is expanded in double quotes: one word, read by
  // its last part. Unquoted, the expansion is split into words, and the first may be any program.
  it.each([`d=/nonexistent; "$d/${MARK}" -rf /`, `"$(echo /nonexistent)"/${MARK} -rf /`])(
    "names a program by its path's last part when the directory is quoted: %j",
    (command) => {
      expect(bash.run(command)).toContain(MARK);
      const split = splitCommand(command);
      expect(split.unreadable).toBe(false);
      expect(split.opaque).toBe(true);
      expect(split.subcommands.some((s) => s.variants.includes(`${MARK} -rf /`))).toBe(true);
    },
  );

  it.each([`d='${MARK} -rf'; $d/ /`, `$(echo ${MARK} -rf)/ /`])(
    "where an unquoted directory may be split into another program: %j",
    failsSafe,
  );

  it.each([
    `x=(['$(${MARK} -rf /)']=1)`,
    `declare -a x=(["\\$(${MARK} -rf /)"]=1)`,
    `x=([$'\\x24(${MARK} -rf /)']=1)`,
    `x+=([\\$\\(${MARK}\\ -rf\\ /\\)]=1)`,
    // An element's `[…]` and a `$[…]` are one piece to bash, blanks, `#` and `)` included; text
    // glued after the `)`.
    `declare -A x=([ #]=)\n${MARK} -rf /\n)`,
    `x=($[ #])\n${MARK} -rf /\n])`,
    `declare -A x=([) ]= y=(\n${MARK} -rf /\n)`,
    `x=(#)\n)#;${MARK} -rf /`,
    // The alias and command tables set as arrays: read on a later line, as bash reads aliases.
    `shopt -s expand_aliases; BASH_ALIASES=([b]='${MARK}')\nb -rf /`,
    `shopt -s expand_aliases; declare -A BASH_ALIASES=([b]='false \\')\nb;[[ x||${MARK} -rf / ]]`,
    `shopt -s expand_aliases; BASH_ALIASES+=([b]='false \\')\nb;[[ x||${MARK} -rf / ]]`,
  ])("where an array's subscript runs code from quotes or escapes, or an array sets aliases: %j", failsSafe);

  // In double quotes bash keeps a backslash before `[ { * ? ~` (only `$`, a backquote, `"`, `\`
  // and a newline lose it), and none of them expands there: a script written so reads as itself.
  // Each was once unreadable (a false denial a fifth review found).
  it.each([
    `/bin/bash -c "grep -c '\\[ERROR\\]' app.log; ${MARK} -rf /"`,
    `/bin/bash -c "find . -name \\*.ts -newer \\{x\\}; ${MARK} -rf /"`,
    `/bin/bash -c "ls what\\? \\~; ${MARK} -rf /"`,
    `eval "echo \\*; ${MARK} -rf /"`,
  ])("reads a double-quoted script's escaped glob characters as bash does: %j", (command) => {
    expect(bash.run(command)).toContain(`${MARK} -rf /`);
    const split = splitCommand(command);
    expect(split.unreadable).toBe(false);
    expect(split.subcommands.map((s) => s.text)).toContain(`${MARK} -rf /`);
  });
  // A `{` with no `,` or `..` after it is no brace list: bash passes it on as written.
  it.each([`eval echo HEAD@{0} \\; ${MARK} -rf /`, `eval git log -1 stash@{0} \\|\\| ${MARK} -rf /`])(
    "reads a word with a brace but no brace list as bash does: %j",
    (command) => {
      expect(bash.run(command)).toContain(`${MARK} -rf /`);
      const split = splitCommand(command);
      expect(split.unreadable).toBe(false);
      expect(split.subcommands.map((s) => s.text)).toContain(`${MARK} -rf /`);
    },
  );
  // Where the outer shell does expand the script's text, it is still unreadable.
  it.each([
    `x='; ${MARK} -rf /'; /bin/bash -c "grep '\\[E\\]' f $x"`,
    `x='; ${MARK} -rf /'; eval "echo \\* $x"`,
  ])("fails safe on %j, a double-quoted script with an expansion besides its escapes", failsSafe);
  // A review of the brace reading: a word shell-quote cuts at an extended glob's `(` is
  // one word to bash, and a script made of it expands (also a brace list whose `,` is after it);
  // `\"` in backquotes inside double quotes is `"`; `"$*"` expands; `$"…"` is a double-quoted string.
  it.each([
    `shopt -s extglob\neval echo {@(x),\\;${MARK} -rf /}`,
    `shopt -s extglob\neval echo {+(x),\\;${MARK} -rf /}`,
    `shopt -s extglob\neval git log HEAD@{0}x@(y)\\|\\|${MARK} -rf /`,
    `shopt -s extglob\neval echo @(x)\\;${MARK} -rf /`,
    `shopt -s extglob\neval echo !(x)\\|${MARK} -rf /`,
    `shopt -s extglob\ntrap x@(x)\\;${MARK} EXIT`,
    `shopt -s extglob\n/bin/bash -O extglob -c @(x)\\;${MARK}`,
    `set -- ";${MARK} -rf /"; eval "echo $*"`,
    `set -- ";${MARK} -rf /"; /bin/bash -c "echo $*"`,
  ])("fails safe on %j", failsSafe);
  // `~` alone as a program runs what HOME (`~+` PWD, `~-` OLDPWD) holds.
  it.each([`HOME=/nonexistent/${MARK}; ~ -rf /`, `OLDPWD=/nonexistent/${MARK}; ~- -rf /`])(
    "fails safe on %j, a ~ with no / as the program",
    failsSafe,
  );
  it.each([
    `echo "\`echo \\"'\\"; ${MARK} -rf /; \\"'\\"\`"`,
    `x="\`echo \\"'\\"; ${MARK} -rf /; \\"'\\"\`"`,
    `eval $"'\\\\' ; ${MARK} -rf / ; '\\\\'"`,
  ])("names what bash runs in %j or fails safe", namesOrFailsSafe);
  it.each([`eval echo {x,\\;} ${MARK} -rf /`, `eval echo {x,'|'} ${MARK} -rf /`])(
    "fails safe on %j, a brace list in eval's words",
    failsSafe,
  );
});

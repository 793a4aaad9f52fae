/**
 * Policy regexes (`matcher`, `where.regex`) run on RE2 semantics (re2js, pure JavaScript, also on
 * Workers): linear time in the input, so no event can stall a request however evil the pattern.
 * Backreferences and lookaround do not compile there, and are rejected at load with that reason
 * (a pattern refused for anything else gets RE2's reason alone).
 * Linear in the input times the size of the compiled program, so that size is capped too.
 *
 * The engine is a port with re2js (regex-re2.ts) as its default. The Worker and Lambda bundles
 * leave that default out (scripts/lazy-engines.mjs) because re2js is most of their size and most
 * policies hold no regex: there, compileRegex fails with REGEX_ENGINE_MISSING until an entry
 * loads the engine (pattern-engines.ts) and compiles the policy again.
 */

import { enginePort } from "./engine-port.js";
import { errorMessage } from "./errors.js";
import { escapeControls } from "./escape-controls.js";
import { requiredLiteral } from "./regex-literal.js";
import { re2Engine } from "./regex-re2.js";
import { err, ok, type Result } from "./result.js";

/** An unanchored search, as Claude Code runs its matchers (`new RegExp(m).test(value)`). */
export type RegexTest = (value: string) => boolean;

/** A compiled pattern: its search, and how many instructions its program has (RE2's cost measure). */
export interface CompiledRegex {
  readonly test: RegexTest;
  readonly programSize: number;
}

export interface RegexEngine {
  /** Compiles `pattern` for an unanchored search; throws with the reason when it cannot. */
  compile(pattern: string): CompiledRegex;
}

/**
 * The largest program a policy regex may compile to. A search costs up to about 23 ms per
 * instruction per MiB of input on re2js 2.10 (its NFA): `(.*a){19}[^ab]` and `[ab]*a[ab]{94}[^ab]`,
 * 98 and 100 instructions, take 1.4 s and 2.3 s on 1 MiB, the body limit; `(.*a){200}[^ab]`
 * (1,003) took 14 s before this cap. Realistic patterns fit: an 18-command alternation such as
 * `^(rm|mv|cp|…)\b` compiles to 85, a Slack webhook URL with its counted parts to 87.
 */
export const MAX_REGEX_PROGRAM_SIZE = 100;

export const REGEX_ENGINE_MISSING =
  "needs the regex engine, which this build loads on demand and has not loaded";

const port = enginePort<RegexEngine>(re2Engine);
export const registerRegexEngine = port.register;
/** True once a compile failed with REGEX_ENGINE_MISSING, until an engine is registered. */
export const isRegexEngineWanted = port.isWanted;

/**
 * Whether RE2 stopped at a backreference (`\1`, `\k<n>`) or a lookaround (`(?=`, `(?!`, `(?<=`,
 * `(?<!`), read from the fragment its error quotes last ("invalid escape sequence: `\1`"), so
 * that only a pattern written with one is told RE2 lacks them: an unclosed group is not.
 * RE2 quotes Python's `(?P=n)` and PCRE's `\g1`, `\g{1}`, `\g<n>` only as far as `(?P` and `\g`,
 * as it does a flag it lacks (`(?Px)`), a recursion (`(?P>n)`) or a stray `\g`: for those two
 * fragments the pattern itself is read for an unescaped back-reference.
 */
function usesBackreferenceOrLookaround(why: string, pattern: string): boolean {
  const fragment = /`([^`]*)`$/.exec(why)?.[1] ?? "";
  if (fragment === "(?P") return UNESCAPED_PYTHON_BACKREFERENCE.test(pattern);
  if (fragment === "\\g") return UNESCAPED_G_BACKREFERENCE.test(pattern);
  return /^(?:\\[1-9k]|\(\?[=!]|\(\?<[=!])/.test(fragment);
}

/** `(?P=`, not after a backslash of its own (an even run of them is escaped backslashes). */
const UNESCAPED_PYTHON_BACKREFERENCE = /(?:^|[^\\])(?:\\\\)*\(\?P=/;
/** `\g` before a group's number or name (`\g1`, `\g-1`, `\g{1}`, `\g<n>`, `\g'n'`), unescaped. */
const UNESCAPED_G_BACKREFERENCE = /(?:^|[^\\])(?:\\\\)*\\g(?:-?\d|[{<'])/;

/**
 * A JavaScript regex's pattern and flags (`/rm/i`, `{"regex": "rm", "flags": "i"}`) as one RE2
 * pattern: the flags RE2 reads (`i`, `m`, `s`) as a leading group, `(?i)rm`; the others (`g`,
 * `u`, `y`, `d`, `v`) mean nothing to a test of one value and are left out.
 */
export function withFlagsInside(pattern: string, flags: string): string {
  // A pattern that starts with a flag group already (`(?i)rm`) gets the others in that group:
  // `(?i)(?i)rm` said the flag twice.
  const lead = /^\(\?([imsU]*)\)/.exec(pattern);
  const set = lead?.[1] ?? "";
  const kept = [...new Set(flags)].filter((flag) => "ims".includes(flag) && !set.includes(flag)).join("");
  if (kept === "") return pattern;
  return `(?${set}${kept})${pattern.slice(lead?.[0].length ?? 0)}`;
}

export function compileRegex(pattern: string): Result<RegexTest, string> {
  const engine = port.want();
  if (engine === undefined) return err(REGEX_ENGINE_MISSING);
  let compiled: CompiledRegex;
  try {
    compiled = engine.compile(pattern);
  } catch (e) {
    const why = errorMessage(e);
    const note = usesBackreferenceOrLookaround(why, pattern)
      ? "; backreferences and lookaround are not supported"
      : "";
    // RE2 quotes the pattern as written: a newline in it split `check`'s line in two.
    return err(`is not a valid RE2 regular expression (${escapeControls(why)})${note}`);
  }
  if (compiled.programSize > MAX_REGEX_PROGRAM_SIZE) {
    return err(
      `is too complex (program size ${compiled.programSize} > ${MAX_REGEX_PROGRAM_SIZE}); simplify it (a counted repeat is compiled once per count: [a-z]{8,255} alone is 504, [a-z]{8,} is 11)`,
    );
  }
  // Most inputs lack a literal every match needs: an includes() answers for them (regex-literal.ts).
  const literal = requiredLiteral(pattern);
  const test = compiled.test;
  return ok(literal === undefined ? test : (value) => value.includes(literal) && test(value));
}

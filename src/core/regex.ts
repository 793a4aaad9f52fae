/**
 * Policy regexes (`matcher`, `where.regex`) run on RE2 semantics (re2js, pure JavaScript, also on
 * Workers): linear time in the input, so no event can stall a request however evil the pattern.
 * Backreferences and lookaround do not compile there, and are rejected at load with that reason.
 */
import { RE2JS } from "re2js";
import { err, ok, type Result } from "./result.js";

/** An unanchored search, as Claude Code runs its matchers (`new RegExp(m).test(value)`). */
export type RegexTest = (value: string) => boolean;

export function compileRegex(pattern: string): Result<RegexTest, string> {
  try {
    const re = RE2JS.compile(pattern);
    return ok((value) => re.matcher(value).find());
  } catch (e) {
    const why = e instanceof Error ? e.message : String(e);
    return err(
      `is not a valid RE2 regular expression (${why}); backreferences and lookaround are not supported`,
    );
  }
}

/**
 * Policy regexes (`matcher`, `where.regex`) run on RE2 semantics (re2js, pure JavaScript, also on
 * Workers): linear time in the input, so no event can stall a request however evil the pattern.
 * Backreferences and lookaround do not compile there, and are rejected at load with that reason.
 *
 * The engine is a port with re2js (regex-re2.ts) as its default. The Worker and Lambda bundles
 * leave that default out (scripts/lazy-engines.mjs) because re2js is most of their size and most
 * policies hold no regex: there, compileRegex fails with REGEX_ENGINE_MISSING until an entry
 * loads the engine (pattern-engines.ts) and compiles the policy again.
 */
import { re2Engine } from "./regex-re2.js";
import { err, ok, type Result } from "./result.js";

/** An unanchored search, as Claude Code runs its matchers (`new RegExp(m).test(value)`). */
export type RegexTest = (value: string) => boolean;

export interface RegexEngine {
  /** Compiles `pattern` for an unanchored search; throws with the reason when it cannot. */
  compile(pattern: string): RegexTest;
}

export const REGEX_ENGINE_MISSING =
  "needs the regex engine, which this build loads on demand and has not loaded";

/** Undefined only in bundles built without the default (see above). */
let engine: RegexEngine | undefined = re2Engine;
/** Whether a pattern went uncompiled for want of an engine: the loader's cue. */
let wanted = false;

export function registerRegexEngine(registered: RegexEngine): void {
  engine = registered;
}

/** True once a compile failed with REGEX_ENGINE_MISSING, until an engine is registered. */
export function isRegexEngineWanted(): boolean {
  return wanted && engine === undefined;
}

export function compileRegex(pattern: string): Result<RegexTest, string> {
  if (engine === undefined) {
    wanted = true;
    return err(REGEX_ENGINE_MISSING);
  }
  try {
    return ok(engine.compile(pattern));
  } catch (e) {
    const why = e instanceof Error ? e.message : String(e);
    return err(
      `is not a valid RE2 regular expression (${why}); backreferences and lookaround are not supported`,
    );
  }
}

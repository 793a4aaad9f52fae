/**
 * The regex engine: re2js, a pure-JavaScript port of RE2 (linear time, no backtracking). Its own
 * module so that size-bound bundles can load it with import() only when a policy needs it
 * (regex.ts, pattern-engines.ts); it imports nothing of hookgate's but types.
 */
import { RE2JS } from "re2js";
import type { RegexEngine } from "./regex.js";

export const re2Engine: RegexEngine = {
  compile(pattern) {
    const re = RE2JS.compile(pattern);
    return { test: (value) => re.matcher(value).find(), programSize: re.programSize() };
  },
};

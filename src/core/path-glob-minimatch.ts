/**
 * The path-glob engine: minimatch. Its own module so that size-bound bundles can load it with
 * import() only when a policy needs it (path-glob.ts, pattern-engines.ts); it imports nothing of
 * hookgate's but types.
 */
import { Minimatch } from "minimatch";
import type { PathGlobEngine, PathGlobOptions } from "./path-glob.js";

export const minimatchEngine: PathGlobEngine = {
  compile(pattern, options) {
    const glob = new Minimatch(pattern, options);
    const literals = requiredLiterals(pattern, options);
    if (literals.length === 0) return (path) => glob.match(path);
    return (path) => literals.every((literal) => path.includes(literal)) && glob.match(path);
  },
};

/**
 * Text every path the pattern matches holds: each run of characters between its `/`, `*` and `?`.
 * minimatch compares a segment without wildcards to a path's segment as it is, and one with only
 * `*` and `?` keeps its other characters in order, so each run is in the path (whose repeated `/`
 * minimatch reads as one, which the runs do not hold). A path without one of them is answered by
 * `includes`, before minimatch splits it and walks a `**` across all its segments (a 1 MB path
 * took about 0.1 s per `where.glob` rule). None for a pattern whose other syntax could make a run
 * optional or change how it reads (classes, braces, extglobs, escapes, negation, comments, `.` and
 * `..` segments, ignoring case), nor off `platform: "linux"` (on Windows minimatch reads a drive
 * letter in either case, and `//?/C:` as `C:`).
 */
export function requiredLiterals(pattern: string, options: PathGlobOptions): string[] {
  if (options.platform !== "linux" || options.nocase || /[[\]{}()\\]|^[!#]/.test(pattern)) return [];
  const runs = pattern.split(/[/*?]+/).filter((run) => run !== "");
  return runs.some((run) => run === "." || run === "..") ? [] : runs;
}

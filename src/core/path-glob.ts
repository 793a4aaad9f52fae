/**
 * Path globs (`where.glob`, the path patterns of `if` permission rules) with minimatch's
 * semantics. minimatch matches segment by segment without regular expressions or backtracking
 * (@isaacs/nonrecursive-glob-match), so no path an agent sends can stall a request; matchers that
 * compile globs to a RegExp (picomatch and the like) lack that property.
 *
 * The engine is a port with minimatch (path-glob-minimatch.ts) as its default, left out of the
 * Worker and Lambda bundles like the regex engine (regex.ts): there, compilePathGlob fails with
 * PATH_GLOB_ENGINE_MISSING until an entry loads the engine (pattern-engines.ts).
 */

import { enginePort } from "./engine-port.js";
import { errorMessage } from "./errors.js";
import { minimatchEngine } from "./path-glob-minimatch.js";
import { err, ok, type Result } from "./result.js";

/** Whether the whole path matches. */
export type PathGlobTest = (path: string) => boolean;

/** minimatch's options of the same names. */
export interface PathGlobOptions {
  readonly dot?: boolean;
  readonly nonegate?: boolean;
  readonly nocomment?: boolean;
  readonly nocase?: boolean;
  readonly platform?: "linux";
}

export interface PathGlobEngine {
  /** Compiles `pattern`; throws with the reason when it cannot. */
  compile(pattern: string, options: PathGlobOptions): PathGlobTest;
}

export const PATH_GLOB_ENGINE_MISSING =
  "needs the glob engine, which this build loads on demand and has not loaded";

const port = enginePort<PathGlobEngine>(minimatchEngine);
export const registerPathGlobEngine = port.register;
/** True once a compile failed with PATH_GLOB_ENGINE_MISSING, until an engine is registered. */
export const isPathGlobEngineWanted = port.isWanted;

/** The error reads after the pattern: `"x" is not a glob minimatch can read (...)`. */
export function compilePathGlob(
  pattern: string,
  options: PathGlobOptions = {},
): Result<PathGlobTest, string> {
  const engine = port.want();
  if (engine === undefined) return err(PATH_GLOB_ENGINE_MISSING);
  try {
    return ok(engine.compile(pattern, options));
  } catch (e) {
    return err(`is not a glob minimatch can read (${errorMessage(e)})`);
  }
}

/**
 * Whether a path, or a directory above it, matches `pattern` (gitignore's reading: a matched
 * directory covers what it holds): minimatch's `pattern`, then `pattern/**`, each tried once, so
 * the cost grows with the path's length (trying each directory above it in turn grew with its
 * square: 0.3 s a rule for a 32 KB path). A path this is asked about holds no `.` or `..`
 * segment, which minimatch's `**` never matches.
 */
export function compileCoveringGlob(
  pattern: string,
  options: PathGlobOptions = {},
): Result<PathGlobTest, string> {
  const itself = compilePathGlob(pattern, options);
  if (!itself.ok) return itself;
  const inside = compilePathGlob(`${pattern}/**`, options);
  if (!inside.ok) return inside;
  const [matches, holds] = [itself.value, inside.value];
  return ok((path) => path !== "" && (matches(path) || holds(path)));
}

/** POSIX normalization without a filesystem: drops `.` and empty segments, resolves `..`. */
export function normalizePath(path: string): string {
  const absolute = path.startsWith("/");
  const out: string[] = [];
  for (const segment of path.split("/")) {
    if (segment === "" || segment === ".") continue;
    if (segment !== "..") out.push(segment);
    else if (out.length > 0 && out[out.length - 1] !== "..") out.pop();
    else if (!absolute) out.push("..");
  }
  const joined = out.join("/");
  if (absolute) return `/${joined}`;
  return joined === "" ? "." : joined;
}

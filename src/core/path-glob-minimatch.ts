/**
 * The path-glob engine: minimatch. Its own module so that size-bound bundles can load it with
 * import() only when a policy needs it (path-glob.ts, pattern-engines.ts); it imports nothing of
 * hookgate's but types.
 */
import { Minimatch } from "minimatch";
import type { PathGlobEngine } from "./path-glob.js";

export const minimatchEngine: PathGlobEngine = {
  compile(pattern, options) {
    const glob = new Minimatch(pattern, options);
    return (path) => glob.match(path);
  },
};

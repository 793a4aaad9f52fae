/**
 * An esbuild plugin for the bundles whose cold start counts (build-worker.mjs, build-lambda.mjs):
 * it leaves the pattern engines and the Bash splitter out of the code every cold start evaluates.
 * A static import of an engine module (the defaults of src/core/regex.ts, path-glob.ts and
 * shell.ts) gets a stand-in whose export is undefined; import() of the same module is untouched,
 * so code splitting ships the engine as a module of its own, which src/core/pattern-engines.ts
 * loads when a policy needs it. Both builds refuse a bundle whose cold start still reaches re2js,
 * minimatch or shell-quote.
 */
import { join, relative } from "node:path";

/**
 * Engine module (from the repository root) → the one name it exports. The masking shapes are
 * loaded the same way, with the first policy (src/core/mask.ts `loadMaskShapes`), and the Bash
 * splitter (src/core/shell.ts) with the first policy that has a `Bash(…)` rule.
 */
const ENGINES = {
  "src/core/regex-re2.ts": "re2Engine",
  "src/core/path-glob-minimatch.ts": "minimatchEngine",
  "src/core/mask-shapes.ts": "SECRET_SHAPES",
  "src/core/shell-command.ts": "shellEngine",
};
const NAMESPACE = "hookgate-lazy-engine";

/** @param {string} root the repository root */
export function lazyEngines(root) {
  const engineOf = (resolveDir, specifier) =>
    relative(root, join(resolveDir, specifier.replace(/\.js$/, ".ts"))).replaceAll("\\", "/");
  const basenames = Object.keys(ENGINES).map((path) => path.slice(path.lastIndexOf("/") + 1, -3));
  const filter = new RegExp(`(^|/)(${basenames.join("|")})\\.js$`);
  return {
    name: "hookgate-lazy-engines",
    setup(build) {
      build.onResolve({ filter }, (args) => {
        if (args.kind !== "import-statement") return undefined;
        const engine = engineOf(args.resolveDir, args.path);
        return engine in ENGINES ? { path: engine, namespace: NAMESPACE } : undefined;
      });
      build.onLoad({ filter: /.*/, namespace: NAMESPACE }, (args) => ({
        contents: `export const ${ENGINES[args.path]} = undefined;`,
        loader: "js",
      }));
    },
  };
}

/**
 * For bundles that leave the pattern engines and the Bash splitter (shell.ts) out of the code
 * every cold start evaluates (the Worker, the Lambda handlers: scripts/lazy-engines.mjs): after a
 * policy failed to compile for want of an engine, loads that engine with import() and compiles
 * the policy again
 * (`withPatternEngines`).
 * A policy without such a pattern never loads it. Elsewhere the engines are there from the start
 * and this finds nothing to load.
 */
import { isPathGlobEngineWanted, registerPathGlobEngine } from "./path-glob.js";
import { isRegexEngineWanted, registerRegexEngine } from "./regex.js";
import { isShellEngineWanted, registerShellEngine } from "./shell.js";

/** Loads every engine a compile has asked for; resolves to whether there was any. */
export async function loadWantedPatternEngines(): Promise<boolean> {
  const regex = isRegexEngineWanted();
  const glob = isPathGlobEngineWanted();
  const shell = isShellEngineWanted();
  await Promise.all([
    regex && import("./regex-re2.js").then(({ re2Engine }) => registerRegexEngine(re2Engine)),
    glob &&
      import("./path-glob-minimatch.js").then(({ minimatchEngine }) =>
        registerPathGlobEngine(minimatchEngine),
      ),
    shell && import("./shell-command.js").then(({ shellEngine }) => registerShellEngine(shellEngine)),
  ]);
  return regex || glob || shell;
}

/**
 * Runs `load` (a policy's compile), and once more if it failed for want of an engine this
 * bundle loads on demand, after loading that engine.
 */
export async function withPatternEngines<T extends { readonly ok: boolean }>(
  load: () => Promise<T>,
): Promise<T> {
  const first = await load();
  return !first.ok && (await loadWantedPatternEngines()) ? load() : first;
}

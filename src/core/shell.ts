/**
 * The Bash splitter (shell-command.ts) behind a port, as the pattern engines are (regex.ts). The
 * Worker and Lambda bundles leave it out of the code every cold start evaluates
 * (scripts/lazy-engines.mjs): it and shell-quote were a third of the Worker's main module, and only
 * a policy with a `Bash(…)` rule uses them. There a Bash rule fails to compile with
 * SHELL_ENGINE_MISSING until an entry loads the splitter (pattern-engines.ts) and compiles the
 * policy again. A command is split only for such a rule, so the splitter is there whenever one is
 * asked for; were it not, `splitCommand` says so and permission-rule.ts fails safe.
 */
import { enginePort } from "./engine-port.js";
import { type CommandSplit, shellEngine } from "./shell-command.js";

export interface ShellEngine {
  splitCommand(command: string): CommandSplit;
  canonicalCommandPattern(text: string): string;
}

export const SHELL_ENGINE_MISSING =
  "needs the Bash command splitter, which this build loads on demand and has not loaded";

const port = enginePort<ShellEngine>(shellEngine);
export const registerShellEngine = port.register;
/** True once a compile failed with SHELL_ENGINE_MISSING, until the splitter is registered. */
export const isShellEngineWanted = port.isWanted;

/** shell-command.ts `canonicalCommandPattern`; undefined while the splitter is not loaded. */
export function canonicalCommandPattern(text: string): string | undefined {
  return port.want()?.canonicalCommandPattern(text);
}

/** shell-command.ts `splitCommand`; undefined while the splitter is not loaded (see above). */
export function splitCommand(command: string): CommandSplit | undefined {
  return port.current()?.splitCommand(command);
}

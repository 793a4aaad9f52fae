/**
 * The Bash splitter (shell-command.ts) behind a port, as the pattern engines are (regex.ts). The
 * Worker and Lambda bundles leave it out of the code every cold start evaluates
 * (scripts/lazy-engines.mjs): it and shell-quote were a third of the Worker's main module, and only
 * a policy with a `Bash(…)` rule uses them. There a Bash rule fails to compile with
 * SHELL_ENGINE_MISSING until an entry loads the splitter (pattern-engines.ts) and compiles the
 * policy again. A command is split only for such a rule, so the splitter is there whenever one is
 * asked for; were it not, `splitCommand` says so and permission-rule.ts fails safe.
 */
import { type CommandSplit, shellEngine } from "./shell-command.js";

export interface ShellEngine {
  splitCommand(command: string): CommandSplit;
  canonicalCommandPattern(text: string): string;
}

export const SHELL_ENGINE_MISSING =
  "needs the Bash command splitter, which this build loads on demand and has not loaded";

/** Undefined only in bundles built without the default (see above). */
let engine: ShellEngine | undefined = shellEngine;
/** Whether a Bash rule went uncompiled for want of the splitter: the loader's cue. */
let wanted = false;

export function registerShellEngine(registered: ShellEngine): void {
  engine = registered;
}

/** True once a compile failed with SHELL_ENGINE_MISSING, until the splitter is registered. */
export function isShellEngineWanted(): boolean {
  return wanted && engine === undefined;
}

/** shell-command.ts `canonicalCommandPattern`; undefined while the splitter is not loaded. */
export function canonicalCommandPattern(text: string): string | undefined {
  if (engine === undefined) wanted = true;
  return engine?.canonicalCommandPattern(text);
}

/** shell-command.ts `splitCommand`; undefined while the splitter is not loaded (see above). */
export function splitCommand(command: string): CommandSplit | undefined {
  return engine?.splitCommand(command);
}

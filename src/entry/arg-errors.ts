/**
 * What a command says when node:util's parseArgs refuses its command line. Node's own words name
 * the word it refused and, for a command that takes arguments, suggest `-- "--policy"` (passing
 * the option as a file name), which is never what was meant. Said instead: the option meant when
 * the word is a near miss of one (`--expct`), and where the policy or URL goes when the command
 * takes it the other way (`check --policy FILE`, `serve FILE`).
 */
import { namesStartedBy, nearestName } from "../core/closest-name.js";
import { isKnownEvent } from "../core/events.js";
import { DIALECTS } from "../core/hook-event.js";
import { COMMAND_HELP, type CommandName } from "./help.js";
import { UsageError } from "./usage-error.js";

/** Commands whose policy file is their first argument: `--policy` there is the other commands' habit. */
const POLICY_ARGUMENT: Partial<Record<CommandName, string>> = {
  check: "hookgate check FILE",
  test: "hookgate test POLICY CASES.json...",
};

/**
 * The option a word given by itself belongs to, if one plainly does: `serve FILE` is `serve
 * --policy FILE`; for the client commands a URL is `--url`'s and a client's name `--client`'s.
 */
function optionFor(command: CommandName, word: string): string | undefined {
  if (command === "serve") return "--policy";
  if (command !== "init" && command !== "send" && command !== "doctor") return undefined;
  if (word.includes("://")) return "--url";
  return (DIALECTS as readonly string[]).includes(word) ? "--client" : undefined;
}

/**
 * Each option a command takes, as its help lists them: in its usage and on the lines of its
 * option table (`--policy`, `--sqs-queue-url`, …); not one its prose names in passing (replay's
 * "serve --record") nor the stem of an abbreviation (`--sqs-...`).
 */
function optionsOf(command: CommandName): string[] {
  const { usage, details } = COMMAND_HELP[command];
  const table = details.split("\n").filter((line) => /^\s+--/.test(line));
  const named = [usage, ...table].join("\n").match(/--[a-z][a-z-]*[a-z](?![a-z-])/g) ?? [];
  return [...new Set(named)];
}

/**
 * The command line with a negative number after an option joined to it: `--timeout -1` as
 * `--timeout=-1`. parseArgs reads a word that starts with "-" as an option, and refuses the
 * option before it as "ambiguous", asking for a value it then gets; no option of hookgate is a
 * number, so the number is the value given, and the command says what the option takes.
 */
export function negativeValuesJoined(args: readonly string[]): string[] {
  const joined: string[] = [];
  for (let i = 0; i < args.length; i += 1) {
    const word = args[i] as string;
    const next = args[i + 1];
    if (word === "--") return [...joined, ...args.slice(i)];
    if (/^--[^=]+$/.test(word) && next !== undefined && /^-\d/.test(next)) {
      joined.push(`${word}=${next}`);
      i += 1;
    } else joined.push(word);
  }
  return joined;
}

/** What an option's value is called in the command's help (`--policy FILE`, `--port N`). */
function valueNameOf(command: CommandName, option: string): string | undefined {
  const { usage, details } = COMMAND_HELP[command];
  const named = new RegExp(`(?:^|[\\s\\[,])${option} ([A-Z][A-Z_:]*)\\b`, "m");
  return named.exec(details)?.[1] ?? named.exec(usage)?.[1];
}

/** The first command whose help lists `option` (`--port`: serve), to put before it. */
export function commandTaking(option: string): CommandName | undefined {
  return (Object.keys(COMMAND_HELP) as CommandName[]).find((command) => optionsOf(command).includes(option));
}

/**
 * ` (did you mean claude-code?)` after a word outside a fixed set (`claud`, `deepagent`, an option,
 * a command, an event): the word of `among` it most likely means, two edits away or the one it
 * starts as; nothing when none is near.
 */
export function didYouMean(word: string, among: readonly string[]): string {
  const meant = nearestName(word, among);
  return meant === undefined || meant === word ? "" : ` (did you mean ${meant}?)`;
}

/**
 * ` (did you mean --policy or --port?)` after an unknown option: every option of the command it is
 * the start of (`--pol`, `--p`), else the one it is a near miss of (`--expct`). An option cut short
 * is still refused: the next option added to a command would make it mean another.
 */
function optionMeant(option: string, options: readonly string[]): string {
  const started = namesStartedBy(option, options);
  if (started.length === 0) return didYouMean(option, options);
  const last = started.at(-1);
  const named = started.length === 1 ? last : `${started.slice(0, -1).join(", ")} or ${last}`;
  return ` (did you mean ${named}?)`;
}

/** The refusal of an option's value outside its fixed set (`--client claud`), with the one it most likely meant. */
export function notOneOf(option: string, value: string, among: readonly string[]): string {
  return `${option} ${value} is not one of ${among.join(", ")}${didYouMean(value, among)}`;
}

/**
 * Refuses an option given an empty value, as an unset variable gives it (`--data-dir "$DIR"`):
 * read as the option left out it does what was not asked (egress-check with no allowlist), and
 * as a file named "" it fails with a message naming neither the file nor the option. `fix` says
 * what to give instead.
 */
export function refuseEmpty(option: string, value: string | undefined, fix: string): void {
  if (value?.trim() === "") throw new UsageError(`${option} is empty (an unset variable?): ${fix}`);
}

/** An error of node:util's parseArgs: a command line the command's options do not take. */
export function isArgumentError(e: unknown): e is TypeError & { code: string } {
  return e instanceof TypeError && "code" in e && String(e.code).startsWith("ERR_PARSE_ARGS");
}

/** The message for a parseArgs error (`ERR_PARSE_ARGS_*`) of `command`; others keep theirs. */
export function argumentProblem(command: CommandName, e: Error & { code?: unknown }): string {
  if (e.code === "ERR_PARSE_ARGS_UNKNOWN_OPTION") {
    const option = /^Unknown option '([^']*)'/.exec(e.message)?.[1];
    if (option === undefined) return e.message;
    const usage = POLICY_ARGUMENT[command];
    if (option === "--policy" && usage !== undefined)
      return `${command} takes the policy file as its first argument, not --policy: ${usage}`;
    return `unknown option ${option}${option.startsWith("--") ? optionMeant(option, optionsOf(command)) : ""}`;
  }
  if (e.code === "ERR_PARSE_ARGS_INVALID_OPTION_VALUE") {
    // Node's words: "Option '--policy <value>' argument missing", "… argument is ambiguous" (the
    // next word starts with "-") and "Option '--json' does not take an argument".
    const needs = /^Option '(--[^' ]+)(?: <value>)?' argument (missing|is ambiguous)/.exec(e.message);
    if (needs?.[1] !== undefined) {
      const option = needs[1];
      const value = valueNameOf(command, option) ?? "VALUE";
      return needs[2] === "missing"
        ? `${option} needs a value: ${option} ${value}`
        : `${option} needs a value before the next option: ${option} ${value} (or ${option}=${value} for one that starts with "-")`;
    }
    const flag = /^Option '(--[^']+)' does not take an argument/.exec(e.message)?.[1];
    if (flag !== undefined) return `${flag} takes no value`;
    return e.message;
  }
  if (e.code === "ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL") {
    const word = /^Unexpected argument '(.*)'\. This command does not take positional arguments$/s.exec(
      e.message,
    )?.[1];
    if (word === undefined) return e.message;
    // `--events PreToolUse Stop`: the shell's spaces end --events' value at its first event, and
    // the rest arrive as stray words, which alone do not say that the list is one comma-separated word.
    if (command === "init" && isKnownEvent(word))
      return `init takes no argument "${word}": --events takes every event in one comma-separated list, as in --events EVENT,${word}`;
    const option = optionFor(command, word);
    return option === undefined
      ? `${command} takes no argument "${word}"`
      : `"${word}" needs its option: did you mean ${option} ${word}?`;
  }
  return e.message;
}

/**
 * A rule's `matcher` (POLICY.md): unset, "" or "*" match everything; a value containing `|` is
 * split and matches if any part does, each part without the spaces around it (as deepcode
 * trims them); a bare `[A-Za-z0-9_]+` (a part or the whole) matches by equality; anything else
 * is an unanchored regular expression, as Claude Code runs it. So
 * `Bash|mcp__.*` is the name Bash or an MCP tool, never `BashOutput`. When a part does not
 * compile by itself, the `|` was inside a group or a class (`mcp__(github|gitlab)__.*`,
 * `[a|b]`), and the whole value is one regular expression, where POLICY.md's reading would
 * leave only a matcher to reject; so is a value that starts with a flag group (`(?i)a|b`).
 */
import { MATCHER_FIELD } from "./event-capabilities.js";
import type { HookEvent } from "./hook-event.js";
import { compileRegex } from "./regex.js";
import { err, ok, type Result } from "./result.js";

export const MATCHER_MAX_LENGTH = 200;

/** `undefined` means the matcher matches every value (and events without the field). */
export type Matcher = ((value: string | undefined) => boolean) | undefined;

/** A flag group alone (`(?i)`, `(?is)`, `(?-s)`), not a group with content (`(?:…)`, `(?i:…)`). */
const LEADING_FLAGS = /^\(\?[A-Za-z-]+\)/;

export function compileMatcher(text: string | undefined): Result<Matcher, string> {
  if (text === undefined || text === "" || text === "*") return ok(undefined);
  if (text.length > MATCHER_MAX_LENGTH) {
    return err(`is ${text.length} characters long; a matcher may have at most ${MATCHER_MAX_LENGTH}`);
  }
  const names = exactMatcherNames(text);
  if (names) return ok((value) => value !== undefined && names.has(value));
  // A leading flag group (`(?i)bash|read`) is meant for the whole value: not split. Any other
  // group (`(?:mcp__.*)|Bash`) is a part like the rest, so Bash stays an exact name.
  const parts = text.includes("|") && !LEADING_FLAGS.test(text) ? splitParts(text) : undefined;
  if (parts) return ok((value) => value !== undefined && someMatches(parts, value));
  const compiled = compileRegex(text);
  if (!compiled.ok) {
    const hint = globStarHint(text);
    return hint === undefined ? compiled : err(`${compiled.error}; ${hint}`);
  }
  const test = compiled.value;
  return ok((value) => value !== undefined && test(value));
}

/**
 * What to write for a matcher with a part that starts with `*`, as a glob or a settings file's
 * `"*"` would (`*|Write`, `*Edit`): in a regular expression `*` repeats what comes before it, and
 * there is nothing there, so it does not compile.
 */
function globStarHint(text: string): string | undefined {
  const starred = text
    .split("|")
    .map((part) => part.trim())
    .find((part) => part.startsWith("*"));
  if (starred === undefined) return undefined;
  const rest = starred.replace(/^\*+/, "");
  if (rest === "")
    return '"*" matches everything only as the whole matcher: write "*" alone to match every value';
  return `a matcher is a regular expression, not a glob: write ${JSON.stringify(`.*${rest}`)} for any characters then ${JSON.stringify(rest)}`;
}

const EXACT_NAME = /^[A-Za-z0-9_]+$/;

/** A Windows client's absolute path: a drive (`C:\`, `C:/`) or a UNC share (`\\server\share`). */
const WINDOWS_PATH = /^(?:[A-Za-z]:[\\/]|\\\\)/;

function someMatches(parts: readonly ((value: string) => boolean)[], value: string): boolean {
  for (const part of parts) if (part(value)) return true;
  return false;
}

/** Each part an exact name or a regex; undefined when some part does not compile by itself. */
function splitParts(text: string): ((value: string) => boolean)[] | undefined {
  const parts: ((value: string) => boolean)[] = [];
  for (const part of text.split("|")) {
    // A part spaced around its pipes (`Bash | Write`, `mcp__.* | Bash`) is the part without the
    // spaces, as deepcode trims each candidate (its src/hooks.ts): no tool name starts or ends
    // with a space. An empty part (`mcp__.*|`, a stray `|`) names nothing, as in a list of names.
    const name = part.trim();
    if (name === "") continue;
    if (EXACT_NAME.test(name)) {
      parts.push((value) => value === name);
      continue;
    }
    const compiled = compileRegex(name);
    if (!compiled.ok) return undefined;
    parts.push(compiled.value);
  }
  return parts;
}

/**
 * Whether a matcher is read as one regular expression with a space at a part's edge (around a
 * `|`, or at its ends): no `|`, a leading flag group, or a `|` inside a group keeps it whole, and
 * only a value split at its `|` has its parts trimmed. Its spaces are then matched as written.
 */
export function matcherKeepsEdgeSpaces(text: string | undefined): boolean {
  if (text === undefined || !/^\s|\s$|\s\||\|\s/.test(text)) return false;
  return !(text.includes("|") && !LEADING_FLAGS.test(text) && splitParts(text) !== undefined);
}

/**
 * The names a matcher made only of `[A-Za-z0-9_|]` stands for (`Write|Edit`), or of names spaced
 * around its `|` (`Write | Edit`, its parts trimmed as splitParts trims them), or undefined when it
 * matches everything or is a regular expression. The rule index keys rules by these names, and
 * `check` reads them as the tools a rule applies to.
 */
export function exactMatcherNames(text: string | undefined): ReadonlySet<string> | undefined {
  if (text === undefined || text === "" || text === "*") return undefined;
  // Without a `|` the value is one regular expression, its spaces matched as written.
  const names = text.includes("|") ? text.split("|").map((part) => part.trim()) : [text];
  return names.every((n) => n === "" || EXACT_NAME.test(n))
    ? new Set(names.filter((n) => n !== ""))
    : undefined;
}

/** The value of the event that `matcher` is checked against, or undefined when it has none. */
export function matcherValue(event: HookEvent): string | undefined {
  const field = matcherField(event.name);
  if (field === undefined) return undefined;
  if (field === "file_basename") {
    const path = event.payload.file_path;
    if (typeof path !== "string") return undefined;
    // Claude Code on Windows sends a drive or UNC path (`C:\app\Makefile`) and takes the name
    // after its last `\` or `/`; elsewhere a backslash is a character of the name.
    const cut = WINDOWS_PATH.test(path)
      ? Math.max(path.lastIndexOf("/"), path.lastIndexOf("\\"))
      : path.lastIndexOf("/");
    return path.slice(cut + 1);
  }
  const value = event.payload[field];
  return typeof value === "string" ? value : undefined;
}

/** Whether this event reads a matcher at all; on other events a matcher is ignored. */
export function eventReadsMatcher(eventName: string): boolean {
  return matcherField(eventName) !== undefined;
}

/**
 * The field an event's matcher reads, by the event's own name: an unknown event named like an
 * object's built-in member ("constructor", "toString") has none, as any unknown event.
 */
function matcherField(eventName: string): string | undefined {
  return Object.hasOwn(MATCHER_FIELD, eventName) ? MATCHER_FIELD[eventName] : undefined;
}

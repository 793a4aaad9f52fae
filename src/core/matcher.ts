/**
 * A rule's `matcher`, with Claude Code's semantics (POLICY.md): unset, "" or "*" match
 * everything; a value made only of `[A-Za-z0-9_|]` is a list of exact names (`Write|Edit`);
 * anything else is an unanchored regular expression, where `|` is alternation, so
 * `mcp__(github|gitlab)__.*` keeps its meaning instead of being split apart.
 */
import { MATCHER_FIELD } from "./event-capabilities.js";
import type { HookEvent } from "./hook-event.js";
import { compileRegex } from "./regex.js";
import { err, ok, type Result } from "./result.js";

export const MATCHER_MAX_LENGTH = 200;

/** `undefined` means the matcher matches every value (and events without the field). */
export type Matcher = ((value: string | undefined) => boolean) | undefined;

const EXACT_NAMES = /^[A-Za-z0-9_|]+$/;

export function compileMatcher(text: string | undefined): Result<Matcher, string> {
  if (text === undefined || text === "" || text === "*") return ok(undefined);
  if (text.length > MATCHER_MAX_LENGTH) {
    return err(`is ${text.length} characters long; a matcher may have at most ${MATCHER_MAX_LENGTH}`);
  }
  const names = exactMatcherNames(text);
  if (names) return ok((value) => value !== undefined && names.has(value));
  const compiled = compileRegex(text);
  if (!compiled.ok) return compiled;
  const test = compiled.value;
  return ok((value) => value !== undefined && test(value));
}

/**
 * The names a matcher made only of `[A-Za-z0-9_|]` stands for (`Write|Edit`), or undefined when
 * it matches everything or is a regular expression. The rule index keys rules by these names.
 */
export function exactMatcherNames(text: string | undefined): ReadonlySet<string> | undefined {
  if (text === undefined || text === "" || text === "*" || !EXACT_NAMES.test(text)) return undefined;
  return new Set(text.split("|").filter((n) => n !== ""));
}

/** The value of the event that `matcher` is checked against, or undefined when it has none. */
export function matcherValue(event: HookEvent): string | undefined {
  const field = MATCHER_FIELD[event.name];
  if (field === undefined) return undefined;
  if (field === "file_basename") {
    const path = event.payload.file_path;
    return typeof path === "string" ? path.slice(path.lastIndexOf("/") + 1) : undefined;
  }
  const value = event.payload[field];
  return typeof value === "string" ? value : undefined;
}

/** Whether this event reads a matcher at all; on other events a matcher is ignored. */
export function eventReadsMatcher(eventName: string): boolean {
  return MATCHER_FIELD[eventName] !== undefined;
}

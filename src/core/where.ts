/**
 * A rule's `where`: dotted paths into the event body, each with a literal (equality) or one
 * operator. Compiled once at load; evaluation never throws.
 */
import { deepEqual } from "./json-equal.js";
import { keepLast } from "./keep-last.js";
import { compilePathGlob, normalizePath } from "./path-glob.js";
import type { WhereOperator } from "./policy-schema.js";
import { compileRegex } from "./regex.js";
import { err, ok, type Result } from "./result.js";

export type Predicate = (payload: Readonly<Record<string, unknown>>) => boolean;
type ValueTest = (value: unknown, present: boolean) => boolean;

export interface WhereIssue {
  path: string[];
  message: string;
}

export function compileWhere(where: Readonly<Record<string, unknown>>): Result<Predicate[], WhereIssue[]> {
  const predicates: Predicate[] = [];
  const issues: WhereIssue[] = [];
  for (const [path, condition] of Object.entries(where)) {
    const segments = path.split(".");
    if (segments.some((s) => s === "")) {
      issues.push({ path: [path], message: `"${path}" is not a dotted path (empty segment)` });
      continue;
    }
    const test = compileCondition(condition, [path], issues);
    if (test) predicates.push((payload) => evaluatePath(payload, segments, test));
  }
  return issues.length > 0 ? err(issues) : ok(predicates);
}

function evaluatePath(
  payload: Readonly<Record<string, unknown>>,
  segments: string[],
  test: ValueTest,
): boolean {
  let value: unknown = payload;
  for (const segment of segments) {
    if (value === null || typeof value !== "object" || !Object.hasOwn(value, segment))
      return test(undefined, false);
    value = (value as Record<string, unknown>)[segment];
  }
  return test(value, true);
}

/**
 * What to write for a `regex` that starts with `*`, as a glob does (`*.env`): in a regular
 * expression `*` repeats what comes before it, and there is nothing there, so it does not
 * compile; the `glob` operator reads it as it was meant. One with no `/` is suggested under any
 * folder (`**` and a `/` before it): a glob's `*` stops at a `/`, and a client sends a file's
 * path absolute, which `*.env` alone never matches; so prefixed, it matches that path and a bare
 * `prod.env` too.
 */
function globRegexHint(regex: string): string {
  const glob = regex.includes("/") ? regex : `**/${regex}`;
  return `a "regex" is a regular expression, not a glob: write ${JSON.stringify({ glob }).replace(":", ": ")} to match as a glob`;
}

function compileCondition(condition: unknown, path: string[], issues: WhereIssue[]): ValueTest | undefined {
  if (condition === null || typeof condition !== "object") {
    return (value) => deepEqual(value, condition);
  }
  const op = condition as WhereOperator;
  if ("equals" in op) return (value) => deepEqual(value, op.equals);
  if (op.regex !== undefined) {
    const compiled = compileRegex(op.regex);
    if (!compiled.ok) {
      const hint = op.regex.startsWith("*") ? `; ${globRegexHint(op.regex)}` : "";
      issues.push({ path: [...path, "regex"], message: `"${op.regex}" ${compiled.error}${hint}` });
      return undefined;
    }
    const test = compiled.value;
    return (value) => typeof value === "string" && test(value);
  }
  if (op.glob !== undefined) {
    const compiled = compileWhereGlob(op.glob);
    if (!compiled.ok) {
      issues.push({ path: [...path, "glob"], message: `"${op.glob}" ${compiled.error}` });
      return undefined;
    }
    const glob = compiled.value;
    return (value) => typeof value === "string" && glob(value);
  }
  if ("contains" in op) {
    const needle = op.contains;
    return (value) =>
      typeof value === "string"
        ? typeof needle === "string" && value.includes(needle)
        : Array.isArray(value) && value.some((item) => deepEqual(item, needle));
  }
  if (op.startsWith !== undefined) {
    const prefix = op.startsWith;
    return (value) => typeof value === "string" && value.startsWith(prefix);
  }
  if (op.in !== undefined) {
    const options: unknown = op.in;
    // The schema asks for an array; compiled without it (a caller of its own), say so.
    if (!Array.isArray(options)) {
      issues.push({ path: [...path, "in"], message: "`in` needs an array of values" });
      return undefined;
    }
    return (value) => options.some((option) => deepEqual(value, option));
  }
  if (op.exists !== undefined) {
    const wanted = op.exists;
    return (value, present) => (present && value !== null) === wanted;
  }
  if (op.not !== undefined) {
    const inner = compileCondition(op.not, [...path, "not"], issues);
    return inner && ((value, present) => !inner(value, present));
  }
  issues.push({ path, message: "an operator object needs one operator" });
  return undefined;
}

/**
 * A `where` glob over a string: `!x` and `#x` are literal text, not minimatch's negation and
 * comment, and an absolute path is matched as the file it names (`/etc/**` holds for
 * `/tmp/../etc/passwd`), a relative one as written and as the file it names (a command's or a
 * URL's `..` excepted). Read as on Linux wherever hookgate runs (minimatch would otherwise
 * follow the host: on Windows `\` separates and a drive letter ignores case), as the path rules
 * are. `check` reads globs with it too.
 */
export function compileWhereGlob(glob: string): Result<(value: string) => boolean, string> {
  const compiled = compilePathGlob(glob, { dot: true, nonegate: true, nocomment: true, platform: "linux" });
  if (!compiled.ok) return compiled;
  const test = compiled.value;
  return ok((value) => {
    if (value.startsWith("/")) return test(normalizedOnce(value));
    // Any other text as written (a URL or a command is no path to normalize), and as the file a
    // relative path names: `./.env` and `src/../.env` are `.env`, which `**` alone never reads so.
    if (test(value)) return true;
    if (!UNNORMALIZED.test(value) || (CLIMBS.test(value) && NOT_A_PATH.test(value))) return false;
    return test(normalizedOnce(value));
  });
}

/** A `.` or `..` segment, or an empty one: text normalizePath would change, besides a trailing `/`. */
const UNNORMALIZED = /(?:^|\/)\.{1,2}(?:\/|$)|\/\//;
/**
 * A `..` segment, which drops the one before it however it reads. The `..` part of UNNORMALIZED,
 * kept apart because the two ask different things: whether normalizing changes the text at all
 * (a `.` or an empty segment too), and whether it removes any of what was written. Only a `..`
 * does: a `.` or a `//` goes alone, so a command or a URL holding one is still read normalized.
 */
const CLIMBS = /(?:^|\/)\.\.(?:\/|$)/;
/**
 * A command or a URL, where a `..` drops what may hold anything: an allow rule's `npm run *` read
 * `npm run test/$(curl … | sh)/..` as `npm run test`, and bash ran the substitution.
 */
const NOT_A_PATH = /[\s$`;|&<>(){}]|:\/\//;

/**
 * normalizePath's answer, kept for the last path asked: a policy's `where` globs read the same
 * field of one event one after another (a 1 MB path took about 30 ms to normalize, per rule).
 */
const normalizedOnce = keepLast(normalizePath);

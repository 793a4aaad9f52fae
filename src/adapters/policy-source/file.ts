/** Reads a policy file from disk and loads it; the Node and CLI way to get a Policy. */
import { constants, existsSync, type Stats } from "node:fs";
import { type FileHandle, open, readlink } from "node:fs/promises";
import { dirname, isAbsolute, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { systemReason } from "../../core/errors.js";
import { type LoadedPolicy, loadPolicy, type PolicyDeps, type PolicyIssue } from "../../core/policy.js";
import { err, ok, type Result } from "../../core/result.js";
import { strictUtf8 } from "../../core/strict-utf8.js";
import { largestFitting } from "../../core/truncate.js";
import { withNearMisses } from "./near-miss.js";

export async function loadPolicyFile(
  path: string,
  deps: PolicyDeps,
  options?: ReadOptions,
): Promise<Result<LoadedPolicy, PolicyIssue[]>> {
  const text = await readPolicyText(path, options);
  if (!text.ok) return err([text.error]);
  return loadPolicyFileText(path, text.value, deps);
}

/**
 * A policy file's text, or the one problem at its root that says why there is none. Where no file
 * is, it says how to make one: a newcomer's first command names a policy not yet written.
 */
export async function readPolicyText(
  path: string,
  options?: ReadOptions,
): Promise<Result<string, PolicyIssue>> {
  const text = await readJsonText(path, options);
  if (text.ok) return text;
  const { message, missing } = text.error;
  return err({ severity: "error", path: "$", message, ...(missing && { missingFile: true }) });
}

/**
 * How to write a policy where none is, said by a command (and serve's start) to the one who ran
 * it: not in the issue, which a refused reload logs, where the policy was written long ago and the
 * example's place is this machine's install path.
 */
const howToWriteOne = () =>
  `a policy is a JSON file you write: copy the example that comes with hookgate (${examplePolicy()}), make its rules your team's, and run hookgate check on it`;

/**
 * Where the example policy is, as a path from the working directory where that is the shorter (a
 * clone's examples/policy.json, an install's node_modules/hookgate/examples/policy.json, and
 * ../examples/policy.json from a folder of the clone), else as the absolute path (a global
 * install's, from a project).
 */
function examplePolicy(): string {
  const file = fileURLToPath(new URL("../../../examples/policy.json", import.meta.url));
  if (!existsSync(file)) return "examples/policy.json in its package";
  const fromHere = relative(process.cwd(), file);
  return isAbsolute(fromHere) || fromHere.length >= file.length ? file : fromHere;
}

/** A policy file's text, read with readJsonText, loaded: its problems said as loadPolicyFile says them. */
export async function loadPolicyFileText(
  path: string,
  text: string,
  deps: PolicyDeps,
): Promise<Result<LoadedPolicy, PolicyIssue[]>> {
  const loaded = await loadPolicy(text, deps);
  if (loaded.ok) return loaded;
  const issues = await withNearMisses(loaded.error, parsedOrUndefined(text));
  return err(withYamlHint(path, text, issues, "a policy"));
}

/**
 * The problems of a JSON file (a policy, a cases file) that does not parse, its "not valid JSON"
 * saying so when the file reads as YAML, which hookgate does not read.
 */
export function withYamlHint(
  path: string,
  text: string,
  issues: PolicyIssue[],
  what: "a policy" | "test cases",
): PolicyIssue[] {
  if (!looksLikeYaml(text)) return issues;
  return issues.map((issue) =>
    issue.path === "$" && issue.message.startsWith("is not valid JSON")
      ? {
          ...issue,
          message: `${issue.message}; ${path} looks like YAML: hookgate reads ${what} as JSON only, so convert it to JSON`,
        }
      : issue,
  );
}

/** The policy's JSON, for the near misses of its unknown keys; undefined where it is no JSON. */
function parsedOrUndefined(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/**
 * A text that is no JSON but reads as YAML (a policy written in the habit of other tools' config
 * files): it starts with a document marker, a comment or a `key:` line rather than `{`. A JSON
 * object's members without its braces (`"version": 1,` pasted from inside a policy) are JSON
 * cut short, not YAML: a double-quoted first key with a comma ending a line, or members that are
 * JSON once braced.
 */
function looksLikeYaml(text: string): boolean {
  const start = text.replace(/^\uFEFF/, "").trimStart();
  if (start.startsWith("{") || start.startsWith("[")) return false;
  if (!/^(?:---|#|["']?[A-Za-z_$][\w$-]*["']?[ \t]*:(?:\s|$))/.test(start)) return false;
  return !(
    start.startsWith('"') &&
    (/,[ \t]*\r?$/m.test(start) || parsedOrUndefined(`{${start}}`) !== undefined)
  );
}

/**
 * The largest policy or cases file read: far beyond any policy (a 40 MB one of 200,000 rules
 * takes seconds to load), and a file past it is refused by its size rather than decoded (one of
 * 600 MB, too long for a string, took minutes and gigabytes to be called not UTF-8).
 */
const MAX_JSON_FILE_BYTES = 16 * 1024 * 1024;

export interface ReadOptions {
  /**
   * Refuse what is no regular file at once, for serve: a FIFO would make its reload wait for a
   * writer forever (and every reload after it), a device (/dev/zero) never ends. Without it, a
   * command reads a pipe (`check <(…)`, a policy piped to `/dev/stdin`) to its end, as `cat` would.
   */
  readonly filesOnly?: boolean;
}

/**
 * A JSON file's text (a policy, a cases file). It must be UTF-8, as JSON is: read as UTF-8, a
 * Latin-1 `ü` in a pattern would become U+FFFD and the pattern would silently match nothing. A
 * byte-order mark, which some editors write and JSON.parse refuses, is dropped.
 */
export async function readJsonText(
  path: string,
  { filesOnly = false }: ReadOptions = {},
): Promise<Result<string, ReadFailure>> {
  const failed = (message: string, missing = false) => err({ message, missing });
  let bytes: Uint8Array;
  try {
    // For serve, opened without waiting (O_NONBLOCK): opening a FIFO waits for a writer. On a
    // regular file the flag changes nothing.
    const handle = await open(path, constants.O_RDONLY | (filesOnly ? (constants.O_NONBLOCK ?? 0) : 0));
    try {
      const stat = await handle.stat();
      const kind = notAFile(stat);
      if (kind !== undefined && (filesOnly || stat.isDirectory()))
        return failed(`cannot read ${path}: it is ${kind}, not a regular file`);
      if (stat.size > MAX_JSON_FILE_BYTES) return failed(tooLong(path, `${stat.size} bytes`));
      bytes = kind === undefined ? await handle.readFile() : await readUpTo(handle, MAX_JSON_FILE_BYTES + 1);
      if (bytes.length > MAX_JSON_FILE_BYTES)
        return failed(tooLong(path, `more than ${MAX_JSON_FILE_BYTES} bytes`));
    } finally {
      await handle.close();
    }
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== "ENOENT")
      return failed(`cannot read ${path}: ${systemReason(e)}`);
    // A link whose file is gone (a deploy's policy link left pointing at a release removed) is
    // there: told it "does not exist" and to copy the example, its author looked for a typo.
    const targets = await linkChain(path);
    if (targets.length > 0)
      return failed(
        `${path} is a broken link: it points to ${targets.join(", a link to ")}, which does not exist`,
      );
    return failed(`${path} does not exist`, true);
  }
  const text = strictUtf8(bytes);
  if (text !== undefined) return ok(text);
  // The longest prefix that decodes, an unfinished character at its end allowed (`stream`, which
  // keeps a cut character between calls: a decoder of its own each time).
  const good = largestFitting(bytes.length, (length) => {
    try {
      new TextDecoder("utf-8", { fatal: true }).decode(bytes.subarray(0, length), { stream: true });
      return true;
    } catch {
      return false;
    }
  });
  // The fault starts where the characters that decode whole end (an unfinished one's lead byte).
  const whole = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }).decode(bytes.subarray(0, good), {
    stream: true,
  });
  const before = whole.split("\n");
  const byte = bytes[Buffer.byteLength(whole)] ?? 0;
  return failed(
    `${path} is not UTF-8: byte 0x${byte.toString(16).padStart(2, "0")} at line ${before.length}, column ${(before.at(-1)?.length ?? 0) + 1}; save it as UTF-8`,
  );
}

/**
 * What a link that leads nowhere points to, as each link in turn writes it: one target, or a
 * chain of them (a deploy's policy.json to current/policy.json, itself a link to a release that
 * is gone), of which only the last does not exist. Empty where the path is no link. The open
 * that failed followed the chain to its end (a loop would have been ELOOP), but a link may change
 * since: no more than Linux follows (MAXSYMLINKS) are read.
 */
async function linkChain(path: string): Promise<string[]> {
  const targets: string[] = [];
  let at = path;
  while (targets.length < 40) {
    const target = await readlink(at).catch(() => undefined);
    if (target === undefined) break;
    targets.push(target);
    at = resolve(dirname(at), target);
  }
  return targets;
}

/** Why a JSON file was not read; `missing` where no file is at the path (ENOENT). */
export interface ReadFailure {
  readonly message: string;
  readonly missing: boolean;
}

const tooLong = (path: string, size: string) =>
  `cannot read ${path}: it is ${size}; a JSON file here may be at most ${MAX_JSON_FILE_BYTES} (16 MiB)`;

/** A pipe's or a device's bytes up to its end, or the first `limit` of them. */
async function readUpTo(handle: FileHandle, limit: number): Promise<Uint8Array> {
  const chunks: Uint8Array[] = [];
  let total = 0;
  while (total < limit) {
    const { bytesRead, buffer } = await handle.read(new Uint8Array(Math.min(65_536, limit - total)), 0);
    if (bytesRead === 0) break;
    chunks.push(buffer.subarray(0, bytesRead));
    total += bytesRead;
  }
  return Buffer.concat(chunks);
}

/** What a path that is no regular file is, as a message names it; undefined for a file. */
function notAFile(stat: Stats): string | undefined {
  if (stat.isFile()) return undefined;
  if (stat.isDirectory()) return "a directory";
  if (stat.isFIFO()) return "a FIFO";
  if (stat.isSocket()) return "a socket";
  return "a device";
}

/** A policy file that does not load at serve's start: its issues in its message. */
export class PolicyLoadError extends Error {
  constructor(
    readonly path: string,
    readonly issues: readonly PolicyIssue[],
  ) {
    super(`policy ${path} is invalid:\n${formatIssues(issues)}`);
  }
}

export function formatIssues(issues: readonly PolicyIssue[]): string {
  return issues.map((i) => `${i.severity}: ${i.path}: ${i.message}`).join("\n");
}

/**
 * What every command says of a policy file that does not load (`check` on stdout, as its report;
 * the others on stderr): each problem, then the file's name and how many there are. A file it
 * cannot read is one problem, at `$`.
 */
export function invalidPolicyReport(path: string, issues: readonly PolicyIssue[]): string {
  // No file is not an invalid one: its one problem says so, and how to write one.
  if (issues.length === 1 && issues[0]?.missingFile === true)
    return `${formatIssues(issues)}; ${howToWriteOne()}\n${path}: no such file\n`;
  return `${formatIssues(issues)}\n${path}: invalid (${issues.length} problem${issues.length > 1 ? "s" : ""})\n`;
}

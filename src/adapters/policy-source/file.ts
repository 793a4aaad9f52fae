/** Reads a policy file from disk and loads it; the Node and CLI way to get a Policy. */
import { constants, type Stats } from "node:fs";
import { open } from "node:fs/promises";
import { errorMessage } from "../../core/errors.js";
import { type LoadedPolicy, loadPolicy, type PolicyDeps, type PolicyIssue } from "../../core/policy.js";
import { err, ok, type Result } from "../../core/result.js";
import { largestFitting } from "../../core/truncate.js";

export async function loadPolicyFile(
  path: string,
  deps: PolicyDeps,
): Promise<Result<LoadedPolicy, PolicyIssue[]>> {
  const text = await readJsonText(path);
  if (!text.ok) return err([{ severity: "error", path: "$", message: text.error }]);
  return loadPolicy(text.value, deps);
}

/**
 * The largest policy or cases file read: far beyond any policy (a 40 MB one of 200,000 rules
 * takes seconds to load), and a file past it is refused by its size rather than decoded (one of
 * 600 MB, too long for a string, took minutes and gigabytes to be called not UTF-8).
 */
const MAX_JSON_FILE_BYTES = 16 * 1024 * 1024;

/**
 * A JSON file's text (a policy, a cases file). It must be UTF-8, as JSON is: read as UTF-8, a
 * Latin-1 `ü` in a pattern would become U+FFFD and the pattern would silently match nothing. A
 * byte-order mark, which some editors write and JSON.parse refuses, is dropped.
 */
export async function readJsonText(path: string): Promise<Result<string, string>> {
  let bytes: Uint8Array;
  try {
    // Opened without waiting (O_NONBLOCK), then refused unless a regular file: a FIFO would wait
    // for a writer, and a SIGHUP's reload with it, and every reload after, forever; a device
    // (/dev/zero) would never end. A regular file reads as ever.
    const handle = await open(path, constants.O_RDONLY | (constants.O_NONBLOCK ?? 0));
    try {
      const stat = await handle.stat();
      const kind = notAFile(stat);
      if (kind !== undefined) return err(`cannot read ${path}: it is ${kind}, not a regular file`);
      const { size } = stat;
      if (size > MAX_JSON_FILE_BYTES)
        return err(
          `cannot read ${path}: it is ${size} bytes; a JSON file here may be at most ${MAX_JSON_FILE_BYTES} (16 MiB)`,
        );
      bytes = await handle.readFile();
    } finally {
      await handle.close();
    }
  } catch (e) {
    return err(`cannot read ${path}: ${errorMessage(e)}`);
  }
  try {
    return ok(new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(bytes));
  } catch {
    // The longest prefix that decodes, an unfinished character at its end allowed (`stream`).
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
    return err(
      `${path} is not UTF-8: byte 0x${byte.toString(16).padStart(2, "0")} at line ${before.length}, column ${(before.at(-1)?.length ?? 0) + 1}; save it as UTF-8`,
    );
  }
}

/** What a path that is no regular file is, as a message names it; undefined for a file. */
function notAFile(stat: Stats): string | undefined {
  if (stat.isFile()) return undefined;
  if (stat.isDirectory()) return "a directory";
  if (stat.isFIFO()) return "a FIFO";
  if (stat.isSocket()) return "a socket";
  return "a device";
}

export function formatIssues(issues: readonly PolicyIssue[]): string {
  return issues.map((i) => `${i.severity}: ${i.path}: ${i.message}`).join("\n");
}

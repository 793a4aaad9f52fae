/**
 * `mkdir -p`, one level at a time. Node's own recursive `mkdir` (sync and async, Node 20) never
 * returns where a file system refuses a directory with ENOENT although its parent exists, as
 * /proc does (`serve --data-dir /proc/x` hung at start): it makes the parent again and retries,
 * for ever. Here that ENOENT is the answer, and the caller names the directory.
 */
import { existsSync, mkdirSync, statSync } from "node:fs";
import { dirname } from "node:path";

export function makeDirectory(dir: string): void {
  try {
    mkdirSync(dir);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === "EEXIST" && statSync(dir).isDirectory()) return;
    const parent = dirname(dir);
    if (code !== "ENOENT" || parent === dir || existsSync(parent)) throw e;
    makeDirectory(parent);
    mkdirSync(dir);
  }
}

/**
 * `mkdir -p`, one level at a time. Node's own recursive `mkdir` (sync and async, Node 20) never
 * returns where a file system refuses a directory with ENOENT although its parent exists, as
 * /proc does (`serve --data-dir /proc/x` hung at start): it makes the parent again and retries,
 * for ever. Here that ENOENT is the answer, and the caller names the directory. A directory
 * that exists, or that another process makes meanwhile, is no error.
 */
import { existsSync, mkdirSync, statSync } from "node:fs";
import { dirname, resolve } from "node:path";

export function makeDirectory(dir: string, mode?: number): void {
  const path = resolve(dir);
  const parent = dirname(path);
  if (parent !== path && !existsSync(parent)) makeDirectory(parent);
  try {
    // `mode` is the made directory's own (a parent made on the way keeps the default), and only
    // when it is made here: one that exists keeps the mode it has.
    mkdirSync(path, mode === undefined ? undefined : { mode });
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "EEXIST" && statSync(path).isDirectory()) return;
    throw e;
  }
}

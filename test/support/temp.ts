/**
 * Temporary directories that leave with the test that made them. `tempDir` made inside a test
 * (or its beforeEach) is removed when that test ends, passed or failed; made outside one (a
 * file's top level, a beforeAll) it is removed when its file's tests end (test/support/cleanup.ts,
 * a setup file). `whenDone` puts any other cleanup, such as stopping a process, on the same
 * stack: cleanups run last in, first out, so a server started in a directory is stopped before
 * the directory goes. Each `npm test` made a few hundred directories it never removed.
 */
import { mkdtempSync } from "node:fs";
import { rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { onTestFinished } from "vitest";

const FILE_CLEANUPS = Symbol.for("hookgate.test.fileCleanups");
// On globalThis: the runner (test/support/runner.ts) may hold another copy of this module than
// the test file's.
const shared = globalThis as { [FILE_CLEANUPS]?: (() => unknown)[] };
shared[FILE_CLEANUPS] ??= [];
const fileCleanups = shared[FILE_CLEANUPS];

/** Runs `cleanup` when the current test ends or, outside a test, when the file's tests end. */
export function whenDone(cleanup: () => unknown): void {
  try {
    onTestFinished(async () => {
      await cleanup();
    });
  } catch {
    // Not inside a test: vitest refuses onTestFinished there.
    fileCleanups.push(cleanup);
  }
}

/** A new directory `hookgate-<kind>-XXXXXX` in the temporary directory, removed when done. */
export function tempDir(kind: string): string {
  const dir = mkdtempSync(join(tmpdir(), `hookgate-${kind}-`));
  whenDone(() => rm(dir, { recursive: true, force: true, maxRetries: 5 }));
  return dir;
}

/** Runs the cleanups registered outside a test, last first; every one runs, the first error is thrown. */
export async function runFileCleanups(): Promise<void> {
  let failure: unknown;
  for (let cleanup = fileCleanups.pop(); cleanup; cleanup = fileCleanups.pop()) {
    try {
      await cleanup();
    } catch (e) {
      failure ??= e;
    }
  }
  if (failure !== undefined) throw failure;
}

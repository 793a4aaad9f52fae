/**
 * A setup file of the node test project. The test file gets a TMPDIR of its own in the run's
 * (test/support/run-tmpdir.ts), named after it; after its last test (and its own afterAll hooks,
 * which vitest runs before this one, registered first), the directories and processes it made
 * outside any test are cleaned up (test/support/temp.ts), and a `hookgate-*` entry still in its
 * TMPDIR fails the file, named: a directory made without tempDir, or by a process still running.
 */
import { mkdtempSync, readdirSync } from "node:fs";
import { join, relative } from "node:path";
import { afterAll, expect, inject } from "vitest";
import { fileDirPrefix } from "./run-tmpdir.js";
import { runFileCleanups } from "./temp.js";

const own = mkdtempSync(
  join(inject("runTmpdir"), fileDirPrefix(relative(process.cwd(), expect.getState().testPath ?? "unknown"))),
);
process.env.TMPDIR = own;

afterAll(async () => {
  await runFileCleanups();
  const left = readdirSync(own).filter((name) => name.startsWith("hookgate-"));
  if (left.length > 0) {
    throw new Error(
      `this file left ${left.join(", ")} in the temporary directory: make it with tempDir (test/support/temp.ts), and stop what writes there before the test ends`,
    );
  }
});

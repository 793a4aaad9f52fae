/**
 * Global setup of the node test project: the run gets a temporary directory of its own, which
 * TMPDIR names for the tests and the processes they start (os.tmpdir() reads it), each test file
 * a directory in it named after the file (test/support/cleanup.ts). At the end of the run every
 * `hookgate-*` entry still in them fails the run, named with its test file. A directory of its
 * own, so runs in parallel (other checkouts, CI jobs on one runner) never see each other's. It is
 * removed either way, with whatever else the tools made in it.
 */
import { mkdtempSync, readdirSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { TestProject } from "vitest/node";

declare module "vitest" {
  export interface ProvidedContext {
    /** The run's temporary directory, in which each test file makes its own. */
    runTmpdir: string;
  }
}

/** The name of a test file's own directory in the run's: its path, `/` as `~`, then `~`. */
export const fileDirPrefix = (file: string) => `${file.replaceAll("/", "~")}~`;

/** The `hookgate-*` entries left in `run`, as "where: entry" (where: a test file, or the run). */
export function leftovers(run: string): string[] {
  const left: string[] = [];
  for (const name of readdirSync(run).sort()) {
    if (name.startsWith("hookgate-")) left.push(`(no test file): ${name}`);
    else if (name.includes("~") && statSync(join(run, name)).isDirectory()) {
      const file = name.slice(0, name.lastIndexOf("~")).replaceAll("~", "/");
      for (const entry of readdirSync(join(run, name)).sort()) {
        if (entry.startsWith("hookgate-")) left.push(`${file}: ${entry}`);
      }
    }
  }
  return left;
}

export default function setup(project: TestProject): () => void {
  const outer = process.env.TMPDIR;
  const run = mkdtempSync(join(tmpdir(), "vitest-hookgate-run-"));
  process.env.TMPDIR = run;
  project.provide("runTmpdir", run);
  return () => {
    if (outer === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = outer;
    const left = leftovers(run);
    rmSync(run, { recursive: true, force: true, maxRetries: 5 });
    if (left.length > 0) {
      // Thrown from a teardown, an error is printed but leaves the exit code at 0.
      process.exitCode = 1;
      throw new Error(
        `the tests left ${left.length} temporary entries behind (make them with tempDir, test/support/temp.ts, and stop what writes there before the test ends):\n  ${left.join("\n  ")}`,
      );
    }
  };
}

/**
 * Global setup of the node test project: the run gets a temporary directory of its own, which
 * TMPDIR names for the tests and the processes they start (os.tmpdir() reads it), and at the end
 * of the run every `hookgate-*` entry still in it fails the run, named. A directory of its own,
 * so runs in parallel (other checkouts, CI jobs on one runner) never see each other's. It is
 * removed either way, with whatever else the tools made in it.
 */
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export default function setup(): () => void {
  const outer = process.env.TMPDIR;
  const run = mkdtempSync(join(tmpdir(), "vitest-hookgate-run-"));
  process.env.TMPDIR = run;
  return () => {
    if (outer === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = outer;
    const left = readdirSync(run).filter((name) => name.startsWith("hookgate-"));
    rmSync(run, { recursive: true, force: true, maxRetries: 5 });
    if (left.length > 0) {
      // Thrown from a teardown, an error is printed but leaves the exit code at 0.
      process.exitCode = 1;
      throw new Error(`the tests left ${left.length} temporary entries behind: ${left.sort().join(", ")}`);
    }
  };
}

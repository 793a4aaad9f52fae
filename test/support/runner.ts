/**
 * The node test project's runner: vitest's own, which after each test file also runs what the
 * file's cleanups left (test/support/temp.ts). A file none of whose tests run (`vitest run -t`
 * matching none of them, a `describe.skipIf` around them all) runs no hooks, so the setup file's
 * afterAll (test/support/cleanup.ts) never removes the directories its top level made; left
 * there, the run's leftover check (test/support/run-tmpdir.ts) failed a run whose tests passed.
 */
import { TestRunner } from "vitest";
import { runFileCleanups } from "./temp.js";

export default class CleanupRunner extends TestRunner {
  override async onAfterRunFiles(): Promise<void> {
    super.onAfterRunFiles();
    await runFileCleanups();
  }
}

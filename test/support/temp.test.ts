/**
 * The test run's temporary directories (test/support/temp.ts, cleanup.ts, runner.ts,
 * run-tmpdir.ts), checked by running vitest on the fixture files of test/fixtures/temp-cleanup.
 */
import { spawn } from "node:child_process";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { childEnv, ROOT } from "./process.js";

const CONFIG = "test/fixtures/temp-cleanup/vitest.config.ts";

function vitest(...files: string[]): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn(
      process.execPath,
      [join(ROOT, "node_modules/vitest/vitest.mjs"), "run", "--config", CONFIG, ...files],
      { cwd: ROOT, env: childEnv({ NO_COLOR: "1" }) },
    );
    let output = "";
    child.stdout.on("data", (chunk) => {
      output += chunk;
    });
    child.stderr.on("data", (chunk) => {
      output += chunk;
    });
    child.on("exit", (code) => resolve({ code, output }));
  });
}

describe("a test run's temporary directories", () => {
  it("are all removed, those of a file none of whose tests ran included, and the run passes", async () => {
    const { code, output } = await vitest("skipped.fixture.ts", "kept.fixture.ts");
    expect(output).not.toMatch(/left/);
    expect(code, output).toBe(0);
  });

  it("fail the file and the run when one is left, each naming the directory and the run its file", async () => {
    const { code, output } = await vitest("leaky.fixture.ts");
    expect(output).toMatch(/this file left hookgate-fixture-leak-\w{6} in the temporary directory/);
    expect(output).toMatch(/test\/fixtures\/temp-cleanup\/leaky\.fixture\.ts: hookgate-fixture-leak-\w{6}\n/);
    expect(output).toMatch(/Test Files +1 failed/);
    expect(code).toBe(1);
  });
});

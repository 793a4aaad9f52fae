/**
 * The load proof's short run in CI: scripts/load.mjs exactly as `npm run load` runs it, at a
 * small rate for a few seconds. Only its correctness figures are asserted (every answer 2xx and
 * right, every notify event delivered or dead-lettered, none twice); timing and memory are
 * printed by the script, never checked here.
 */
import { execFile, spawn } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { setTimeout } from "node:timers/promises";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { childEnv, endProcess, ROOT } from "../support/process.js";
import { tempDir, whenDone } from "../support/temp.js";

const run = promisify(execFile);

interface SinkFigures {
  expectedEnqueued: number;
  enqueued: number;
  delivered: number;
  retried: number;
  deadLettered: number;
  lost: number;
}
interface LoadResult {
  date: string;
  load: {
    planned: number;
    answered: number;
    sent: number;
    non2xx: number;
    errors: number;
    wrongBodies: number;
  };
  decisions: number;
  sinks: { audit: SinkFigures; siem: SinkFigures };
  lost: number;
  drain: { complete: boolean };
  receiver: {
    audit: { unique: number; duplicates: number; badSignatures: number };
    siem: { posts: number; ids: number; attempts: Record<string, number> };
  };
  queueFile: { jobsLeft: number; deadLetters: number };
  gateway: { exitCode: number | null; unexpectedLog: string[] };
  memory: { heapUsedFloorPer10sMiB: number[] };
  failures: string[];
}

async function load(...args: string[]): Promise<{ code: number; result: LoadResult; stdout: string }> {
  const out = join(tempDir("load-test"), "load.json");
  let code = 0;
  let stdout = "";
  try {
    ({ stdout } = await run(process.execPath, ["scripts/load.mjs", ...args, "--out", out], {
      cwd: ROOT,
      timeout: 55_000,
    }));
  } catch (e) {
    const failure = e as { code: number; stdout: string; stderr: string };
    code = failure.code;
    stdout = failure.stdout;
  }
  return { code, result: JSON.parse(readFileSync(out, "utf8")) as LoadResult, stdout };
}

describe("scripts/load.mjs at 50 requests/s for 5 s", () => {
  it("answers every request 2xx with its decision and accounts for every notify event", async () => {
    const { code, result, stdout } = await load("--rate", "50", "--duration", "5", "--warmup", "1");

    expect(result.failures).toEqual([]);
    expect(code).toBe(0);
    expect(stdout).toContain("All checks passed.");
    // 4 s of load after the warm-up hold no 10 s window: said so, not an empty figure. A machine
    // busy enough to stretch the 5 s past 11 s has a window, and its floor said: either way a
    // figure, as the run's own floors have it (the load's length is no part of this test).
    const floors = result.memory.heapUsedFloorPer10sMiB;
    const heapLine = /^\| V8 heap used, lowest in each 10 s after warm-up \| (.*) \|$/m.exec(stdout)?.[1];
    expect(heapLine).toBe(
      floors.length > 0 ? `${floors.join(", ")} MiB` : "none: less than 10 s of load after the warm-up",
    );
    // The run's end to the millisecond, which names its file without --out (bench/common.js
    // writeResult): named by day alone, a second run that day replaced the first's file.
    expect(result.date).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);

    expect(result.load).toMatchObject({ planned: 250, answered: 250, non2xx: 0, errors: 0, wrongBodies: 0 });
    expect(result.decisions).toBe(result.load.sent);

    // The good sink: every job delivered, each id once, every signature valid.
    const { audit, siem } = result.sinks;
    expect(audit.enqueued).toBeGreaterThan(0);
    expect(audit.enqueued).toBe(audit.expectedEnqueued);
    expect(audit.delivered).toBe(audit.enqueued);
    expect(result.receiver.audit).toMatchObject({ unique: audit.delivered, duplicates: 0, badSignatures: 0 });

    // The failing sink: every job tried 3 times (2 retries), then dead-lettered.
    expect(siem.enqueued).toBeGreaterThan(0);
    expect(siem.enqueued).toBe(siem.expectedEnqueued);
    expect(siem.deadLettered).toBe(siem.enqueued);
    expect(siem.retried).toBe(2 * siem.enqueued);
    expect(result.receiver.siem.attempts).toEqual({ 3: siem.enqueued });

    expect(result.lost).toBe(0);
    expect(result.drain.complete).toBe(true);
    expect(result.queueFile).toEqual(
      expect.objectContaining({ jobsLeft: 0, deadLetters: siem.deadLettered }),
    );
    expect(result.gateway).toMatchObject({ exitCode: 0, unexpectedLog: [] });
  });

  it("rejects a rate out of bounds as a usage error, before starting anything", async () => {
    await expect(
      run(process.execPath, ["scripts/load.mjs", "--rate", "0"], { cwd: ROOT, timeout: 10_000 }),
    ).rejects.toMatchObject({ code: 2, stderr: expect.stringContaining("--rate must be an integer") });
  });

  it("leaves no working directory behind when stopped by a signal (Ctrl-C, a CI timeout)", async () => {
    // It ended in process.exit, and only the finally of a run that returned removed the directory
    // (the policy and the gateway's queue): each interrupted run left one in the temp directory.
    const temp = tempDir("load-tmp");
    const child = spawn(process.execPath, ["scripts/load.mjs", "--duration", "30"], {
      cwd: ROOT,
      env: childEnv({ TMPDIR: temp }),
      stdio: "ignore",
    });
    whenDone(() => endProcess(child));
    const exited = new Promise((resolve) => child.once("exit", resolve));
    while (readdirSync(temp).length === 0 && child.exitCode === null) await setTimeout(10);
    expect(readdirSync(temp)).toEqual([expect.stringMatching(/^hookgate-load-/)]);
    child.kill("SIGINT");
    expect(await exited).toBe(130);
    expect(readdirSync(temp)).toEqual([]);
  });
});

/**
 * bench/common.js's gcSummary, read from what a real `node --trace-gc-nvp` prints: decision.js's
 * GC profile says how often the gateway's main thread collects its young generation, how long each
 * stops it and what each promotes. A process that keeps what it allocates promotes; one that keeps
 * nothing does not; a worker thread's collections (the gateway's delivery thread) are not the
 * main thread's.
 */
import { spawnSync } from "node:child_process";
import { describe, expect, it } from "vitest";
// @ts-expect-error: bench/ is plain JavaScript with no declarations.
import { gcSummary } from "../../bench/common.js";

interface GcSummary {
  requests: number;
  youngCollections: number;
  youngPerThousandRequests: number;
  youngPauseMs: { p50: number | null; p90: number | null; max: number | null };
  survivedBytesMedian: number | null;
  promotedBytesMedian: number | null;
  fullCollections: number;
}

/** The GC lines `node --trace-gc-nvp --expose-gc -e script` prints. */
function traced(script: string): string[] {
  const run = spawnSync(process.execPath, ["--trace-gc-nvp", "--expose-gc", "-e", script], {
    encoding: "utf8",
    timeout: 60_000,
  });
  expect(run.status, run.stderr).toBe(0);
  return run.stdout.split("\n").filter((line) => line.startsWith("[") && line.includes(" pause="));
}

/** Allocates `n` small objects, keeping every one when `keep`; `sink` stops V8 dropping them. */
const ALLOCATE = `
function allocate(n, keep) {
  const kept = [];
  let sink;
  for (let i = 0; i < n; i++) {
    sink = { i, text: "x" + i };
    if (keep) kept.push(sink);
  }
  return kept.length + (sink ? 1 : 0);
}`;

describe("gcSummary over real --trace-gc-nvp lines", () => {
  it("counts young collections and finds what survives them promoted when it is kept", () => {
    const kept = gcSummary(traced(`${ALLOCATE}\nallocate(3e6, true);`), 3000) as GcSummary;
    const dropped = gcSummary(traced(`${ALLOCATE}\nallocate(3e6, false);`), 3000) as GcSummary;
    expect(kept.youngCollections).toBeGreaterThan(3);
    expect(dropped.youngCollections).toBeGreaterThan(3);
    expect(kept.youngPerThousandRequests).toBe(Math.round((10_000 * kept.youngCollections) / 3000) / 10);
    expect(kept.promotedBytesMedian).toBeGreaterThan(100_000);
    expect(dropped.promotedBytesMedian).toBe(0);
    expect(kept.survivedBytesMedian).toBeGreaterThan(dropped.survivedBytesMedian ?? Number.POSITIVE_INFINITY);
    for (const s of [kept, dropped]) {
      expect(s.youngPauseMs.p50).toBeGreaterThanOrEqual(0);
      expect(s.youngPauseMs.max).toBeGreaterThanOrEqual(s.youngPauseMs.p90 ?? Number.NaN);
      expect(s.youngPauseMs.p90).toBeGreaterThanOrEqual(s.youngPauseMs.p50 ?? Number.NaN);
    }
  });

  it("counts full collections, and only the main thread's: a worker's are its own", () => {
    const main = gcSummary(traced(`${ALLOCATE}\nallocate(2e6, false); for (let i = 0; i < 4; i++) gc();`), 1);
    expect(main.fullCollections).toBeGreaterThanOrEqual(4);
    // The worker collects in full six times and the main thread never; the main thread allocates
    // the most, so that its lines are the most.
    const script = `${ALLOCATE}
const { Worker } = require("node:worker_threads");
const worker = new Worker("for (let i = 0; i < 6; i++) gc();", { eval: true });
worker.on("exit", () => allocate(3e6, false));`;
    const lines = traced(script);
    const isolates = new Set(lines.map((line) => /^\[\d+:(0x[0-9a-f]+)\]/.exec(line)?.[1]));
    expect(isolates.size).toBe(2);
    const summary = gcSummary(lines, 1) as GcSummary;
    expect(summary.youngCollections).toBeGreaterThan(3);
    expect(summary.fullCollections).toBe(0);
  });

  it("says null, not NaN, of a process that never collected", () => {
    const none = gcSummary([], 100) as GcSummary;
    expect(none).toEqual({
      requests: 100,
      youngCollections: 0,
      youngPerThousandRequests: 0,
      youngPauseMs: { p50: null, p90: null, max: null },
      survivedBytesMedian: null,
      promotedBytesMedian: null,
      fullCollections: 0,
    });
  });
});

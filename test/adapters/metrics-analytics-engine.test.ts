/**
 * The Workers counters as Analytics Engine data points, written to a recording dataset (the
 * binding's data cannot be read back locally): the labels' blob reads as infra/README.md shows
 * it, and no two label sets share one.
 */
import { describe, expect, it } from "vitest";
import { createAnalyticsEngineMetrics } from "../../src/adapters/metrics/analytics-engine.js";
import type { Logger } from "../../src/core/ports.js";

type Point = { indexes?: string[]; blobs?: string[]; doubles?: number[] };

function recording(): { points: Point[]; lines: unknown[][]; metrics: ReturnType<typeof create> } {
  const points: Point[] = [];
  const lines: unknown[][] = [];
  const logger: Logger = { log: (...line) => lines.push(line) };
  return { points, lines, metrics: create({ writeDataPoint: (p) => points.push(p) }, logger) };
}

function create(dataset: { writeDataPoint(p: Point): void } | undefined, logger: Logger) {
  return createAnalyticsEngineMetrics(() => dataset, logger);
}

describe("Analytics Engine counters", () => {
  it("writes the counter's name as index1 and blob1, its labels sorted by name as blob2, and 1", () => {
    const { points, metrics } = recording();
    metrics.increment("hookgate_judge_calls_total", { outcome: "OK", model: "fast" });
    metrics.increment("hookgate_intake_failed_total");
    expect(points).toEqual([
      {
        indexes: ["hookgate_judge_calls_total"],
        blobs: ["hookgate_judge_calls_total", "model=fast,outcome=OK"],
        doubles: [1],
      },
      {
        indexes: ["hookgate_intake_failed_total"],
        blobs: ["hookgate_intake_failed_total", ""],
        doubles: [1],
      },
    ]);
  });

  it("sorts the labels by code unit, whatever the isolate's locale", () => {
    const { points, metrics } = recording();
    metrics.increment("x_total", { b: "1", a_c: "2", ab: "3", B: "4" });
    expect(points[0]?.blobs).toEqual(["x_total", "B=4,a_c=2,ab=3,b=1"]);
  });

  it("escapes \\, , and = in a label, so that no two label sets share a blob", () => {
    const { points, metrics } = recording();
    const sets = [
      { model: "a,outcome=OK", outcome: "JUDGE_TIMEOUT" },
      { model: "a", outcome: "OK,outcome=JUDGE_TIMEOUT" },
      { model: "a", "outcome=OK,outcome": "JUDGE_TIMEOUT" },
      { sink: "a\\", x: "b" },
      { sink: "a\\,x=b" },
      { sink: "a", x: "b" },
    ];
    for (const labels of sets) metrics.increment("hookgate_judge_calls_total", labels);
    const blobs = points.map((p) => p.blobs?.[1]);
    expect(new Set(blobs).size).toBe(sets.length);
    expect(blobs[0]).toBe("model=a\\,outcome\\=OK,outcome=JUDGE_TIMEOUT");
  });

  it("writes nothing when unbound, and logs a write that fails instead of throwing it", () => {
    const lines: unknown[][] = [];
    const logger: Logger = { log: (...line) => lines.push(line) };
    create(undefined, logger).increment("hookgate_delivered_total", { sink: "audit" });
    expect(lines).toEqual([]);
    const failing = {
      writeDataPoint: () => {
        throw new Error("dataset gone");
      },
    };
    create(failing, logger).increment("hookgate_delivered_total", { sink: "audit" });
    expect(lines).toEqual([
      ["warn", "metrics write failed", { metric: "hookgate_delivered_total", error: "Error: dataset gone" }],
    ]);
  });
});

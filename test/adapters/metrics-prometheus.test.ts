/**
 * The Prometheus registry behind `GET /metrics` on Node: counters by label set, and gauges; and
 * that every metric named in the code and in the example alerting rules has its help text.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { createPrometheusRegistry, METRIC_HELP } from "../../src/adapters/metrics/prometheus.js";

describe("prometheus registry", () => {
  it("renders counters by label set and gauges with the last value set, each with its type", () => {
    const registry = createPrometheusRegistry();
    registry.increment("hookgate_delivered_total", { sink: "audit" });
    registry.increment("hookgate_delivered_total", { sink: "audit" });
    registry.increment("hookgate_delivered_total", { sink: 'a"b' });
    registry.set("hookgate_queue_jobs", 7);
    registry.set("hookgate_queue_jobs", 3);
    registry.set("hookgate_queue_oldest_due_seconds", 1.5);
    expect(registry.render().split("\n")).toEqual([
      "# HELP hookgate_delivered_total Delivery jobs a sink accepted, by sink.",
      "# TYPE hookgate_delivered_total counter",
      'hookgate_delivered_total{sink="audit"} 2',
      'hookgate_delivered_total{sink="a\\"b"} 1',
      "# HELP hookgate_queue_jobs Delivery jobs in the SQLite queue: waiting, waiting for a retry, or being delivered.",
      "# TYPE hookgate_queue_jobs gauge",
      "hookgate_queue_jobs 3",
      "# HELP hookgate_queue_oldest_due_seconds How long the job waiting longest for a delivery attempt has been due (0 when none is); a rising value means deliveries fall behind or have stopped.",
      "# TYPE hookgate_queue_oldest_due_seconds gauge",
      "hookgate_queue_oldest_due_seconds 1.5",
      "",
    ]);
  });
});

describe("metric names", () => {
  const ROOT = fileURLToPath(new URL("../../", import.meta.url));
  const namesIn = (text: string) =>
    new Set(text.match(/\bhookgate_[a-z_]+_(?:total|seconds|bytes|jobs|letters|up)\b/g));
  const sources = (dir: string): string[] =>
    readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
      e.isDirectory() ? sources(join(dir, e.name)) : e.name.endsWith(".ts") ? [join(dir, e.name)] : [],
    );

  it("has help for every metric the code counts or sets", () => {
    const used = new Set(sources(join(ROOT, "src")).flatMap((f) => [...namesIn(readFileSync(f, "utf8"))]));
    // The walk finds names, so the check below can fail.
    expect(used).toContain("hookgate_decisions_total");
    expect(used).toContain("hookgate_queue_oldest_due_seconds");
    expect([...used].filter((name) => !(name in METRIC_HELP))).toEqual([]);
  });

  it("alerts, in infra/node/prometheus-alerts.yml, only on metrics hookgate exposes", () => {
    const used = namesIn(readFileSync(join(ROOT, "infra/node/prometheus-alerts.yml"), "utf8"));
    expect(used.size).toBeGreaterThanOrEqual(5);
    expect([...used].filter((name) => !(name in METRIC_HELP))).toEqual([]);
  });
});

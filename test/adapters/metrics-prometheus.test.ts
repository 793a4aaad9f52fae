/** The Prometheus registry behind `GET /metrics` on Node: counters by label set, and gauges. */
import { describe, expect, it } from "vitest";
import { createPrometheusRegistry } from "../../src/adapters/metrics/prometheus.js";

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

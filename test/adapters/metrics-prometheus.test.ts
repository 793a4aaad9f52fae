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

  it("orders families and label names by code unit, whatever the host's locale", () => {
    // localeCompare put `a` before `B` here, and `ab` before `a_c` under th_TH: the text of one
    // registry differed from host to host.
    const registry = createPrometheusRegistry();
    registry.increment("x_total", { b: "1", a_c: "2", ab: "3", B: "4" });
    registry.set("X_jobs", 1);
    registry.set("W_jobs", 2);
    registry.set("a_jobs", 3);
    expect(registry.render().split("\n")).toEqual([
      "# TYPE x_total counter",
      'x_total{B="4",a_c="2",ab="3",b="1"} 1',
      "# TYPE W_jobs gauge",
      "W_jobs 2",
      "# TYPE X_jobs gauge",
      "X_jobs 1",
      "# TYPE a_jobs gauge",
      "a_jobs 3",
      "",
    ]);
  });

  it("renders a gauge and a counter set whole by label set, one family each", () => {
    const registry = createPrometheusRegistry();
    for (const [budget, bytes] of [
      ["arriving", 5],
      ["waiting", 7],
      ["arriving", 3],
    ] as const) {
      registry.set("hookgate_body_budget_bytes", bytes, { budget });
      registry.setCounter("hookgate_body_budget_refused_total", bytes * 2, { budget });
    }
    const lines = registry.render().split("\n");
    expect(lines.filter((l) => !l.startsWith("# HELP"))).toEqual([
      "# TYPE hookgate_body_budget_refused_total counter",
      'hookgate_body_budget_refused_total{budget="arriving"} 6',
      'hookgate_body_budget_refused_total{budget="waiting"} 14',
      "# TYPE hookgate_body_budget_bytes gauge",
      'hookgate_body_budget_bytes{budget="arriving"} 3',
      'hookgate_body_budget_bytes{budget="waiting"} 7',
      "",
    ]);
  });
});

/**
 * Reads Prometheus text format 0.0.4 strictly (prometheus.io, Exposition formats: lines end in
 * `\n`, the last one too; one HELP and one TYPE per family, before its samples, whose lines are
 * together; a label value quoted with only `\\`, `\"` and `\n` escaped; a Go float value; a
 * counter named `_total`), giving each sample's labels as read back. Throws on anything else.
 */
function parseExposition(text: string): { name: string; labels: Record<string, string>; value: number }[] {
  if (!text.endsWith("\n")) throw new Error("the last line does not end in a line feed");
  const samples: { name: string; labels: Record<string, string>; value: number }[] = [];
  const seen = new Map<string, { help: boolean; type?: string; sampled: boolean }>();
  const finished = new Set<string>();
  let current: string | undefined;
  const family = (name: string) => {
    const known = seen.get(name) ?? { help: false, sampled: false };
    seen.set(name, known);
    return known;
  };
  for (const line of text.slice(0, -1).split("\n")) {
    const meta = /^# (HELP|TYPE) ([a-zA-Z_:][a-zA-Z0-9_:]*) (.*)$/.exec(line);
    if (meta) {
      const [, kind, name = "", rest = ""] = meta;
      const f = family(name);
      if (f.sampled) throw new Error(`${kind} of ${name} after its samples`);
      if (kind === "HELP") {
        if (f.help) throw new Error(`a second HELP for ${name}`);
        if (/\\(?![\\n])/.test(rest)) throw new Error(`HELP of ${name} has a bad escape`);
        f.help = true;
      } else {
        if (f.type !== undefined) throw new Error(`a second TYPE for ${name}`);
        if (!/^(counter|gauge|histogram|summary|untyped)$/.test(rest)) throw new Error(`TYPE ${rest}`);
        if (rest === "counter" && !name.endsWith("_total")) throw new Error(`counter ${name} is not *_total`);
        f.type = rest;
      }
      continue;
    }
    const sample = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!sample) throw new Error(`not a line of the format: ${JSON.stringify(line)}`);
    const [, name = "", labelText = "", valueText = ""] = sample;
    if (current !== name) {
      if (current !== undefined) finished.add(current);
      if (finished.has(name)) throw new Error(`the samples of ${name} are not together`);
      current = name;
    }
    const f = family(name);
    if (f.type === undefined) throw new Error(`a sample of ${name} before its TYPE`);
    f.sampled = true;
    if (!/^(?:[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?|NaN|[+-]Inf)$/.test(valueText))
      throw new Error(`value ${valueText} of ${name}`);
    const labels: Record<string, string> = {};
    const label = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\\n]|\\[\\"n])*)"(,|$)/y;
    while (label.lastIndex < labelText.length) {
      const start = label.lastIndex;
      const m = label.exec(labelText);
      if (!m) throw new Error(`labels of ${name} unreadable at ${labelText.slice(start)}`);
      const [, key = "", raw = ""] = m;
      if (key in labels) throw new Error(`label ${key} twice`);
      labels[key] = raw.replace(/\\([\\"n])/g, (_, c: string) => (c === "n" ? "\n" : c));
    }
    samples.push({ name, labels, value: Number(valueText) });
  }
  return samples;
}

describe("the exposition", () => {
  it("is valid text format 0.0.4 and reads back the label values a policy names", () => {
    const registry = createPrometheusRegistry();
    // Sink and model names are the policy's: any non-empty text.
    const sinks = ["audit", 'C:\\hooks\\"ci"', "line\nbreak", "back\\nslash", "\\", "ünï €"];
    registry.declare("hookgate_policy_reloads_total", { outcome: "loaded" });
    registry.declare("hookgate_intake_failed_total", {});
    for (const sink of sinks) {
      registry.declare("hookgate_enqueue_failed_total", { sink });
      registry.increment("hookgate_delivered_total", { sink });
    }
    registry.increment("hookgate_judge_calls_total", { outcome: "OK", model: 'm\\"1' });
    registry.increment("hookgate_judge_calls_total", { model: 'm\\"1', outcome: "OK" });
    registry.increment("hookgate_intake_failed_total");
    registry.setCounter("hookgate_log_lines_dropped_total", 0);
    registry.set("hookgate_queue_jobs", Number.NaN);
    registry.set("hookgate_delivery_thread_up", 1);
    registry.set("hookgate_body_budget_bytes", 0, { budget: "waiting" });
    registry.set("hookgate_body_budget_bytes", 64, { budget: 'a"b' });
    const samples = parseExposition(registry.render());
    const of = (name: string) => samples.filter((s) => s.name === name);
    expect(of("hookgate_delivered_total").map((s) => s.labels.sink)).toEqual(sinks);
    expect(of("hookgate_enqueue_failed_total").map((s) => [s.labels.sink, s.value])).toEqual(
      sinks.map((sink) => [sink, 0]),
    );
    // One series, whichever order its labels were given in.
    expect(of("hookgate_judge_calls_total")).toEqual([
      { name: "hookgate_judge_calls_total", labels: { model: 'm\\"1', outcome: "OK" }, value: 2 },
    ]);
    expect(of("hookgate_intake_failed_total")).toEqual([
      { name: "hookgate_intake_failed_total", labels: {}, value: 1 },
    ]);
    expect(of("hookgate_body_budget_bytes").map((s) => [s.labels.budget, s.value])).toEqual([
      ["waiting", 0],
      ['a"b', 64],
    ]);
    expect(of("hookgate_queue_jobs")[0]?.value).toBeNaN();
    expect(of("hookgate_log_lines_dropped_total")).toHaveLength(1);
  });
});

describe("metric names", () => {
  const ROOT = fileURLToPath(new URL("../../", import.meta.url));
  // Every `hookgate_…` name, whatever its ending; not a variable's (`$hookgate_token`).
  const namesIn = (text: string) => new Set(text.match(/(?<![\w$])hookgate_[A-Za-z0-9_]*[A-Za-z0-9]/g));
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

  it("are each named in README.md, which names no other", () => {
    // A query needs the name: "request errors (by code)" alone left the user to guess it.
    // A name with an ending no metric has is read too, so the check below can fail.
    expect(namesIn("`hookgate_nonexistent_gauge` and hookgate_queue_jobs.")).toEqual(
      new Set(["hookgate_nonexistent_gauge", "hookgate_queue_jobs"]),
    );
    const readme = readFileSync(join(ROOT, "README.md"), "utf8");
    const named = namesIn(readme);
    expect(Object.keys(METRIC_HELP).filter((name) => !named.has(name))).toEqual([]);
    expect([...named].filter((name) => !(name in METRIC_HELP))).toEqual([]);
    // And in its list of them, where a reader looks first: not only in another section's notes.
    const listed = namesIn(readme.match(/^- \*\*Metrics\.\*\*[\s\S]*?(?=\n(?:- |#))/m)?.[0] ?? "");
    expect(listed).toContain("hookgate_decisions_total");
    expect(Object.keys(METRIC_HELP).filter((name) => !listed.has(name))).toEqual([]);
  });

  it("alerts, in infra/node/prometheus-alerts.yml, only on metrics hookgate exposes", () => {
    const used = namesIn(readFileSync(join(ROOT, "infra/node/prometheus-alerts.yml"), "utf8"));
    expect(used.size).toBeGreaterThanOrEqual(5);
    expect([...used].filter((name) => !(name in METRIC_HELP))).toEqual([]);
  });

  it("alert, in infra/node/prometheus-alerts.yml, on each rise of a counter of what was lost", () => {
    // Notifications that were never queued (a full disk under the data dir), and log lines,
    // audit lines among them, that were never written: neither is retried, so any rise is one.
    const exprs = readFileSync(join(ROOT, "infra/node/prometheus-alerts.yml"), "utf8")
      .split("\n")
      .flatMap((line) => /^\s*expr:\s*(.*)$/.exec(line)?.[1] ?? []);
    for (const lost of ["hookgate_enqueue_failed_total", "hookgate_log_lines_dropped_total"])
      expect(exprs, lost).toContain(`increase(${lost}[10m]) > 0`);
  });
});

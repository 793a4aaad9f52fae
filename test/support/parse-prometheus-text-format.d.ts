/** The Prometheus text parser test/e2e/metrics-exposition.test.ts reads `/metrics` with (no types of its own). */
declare module "parse-prometheus-text-format" {
  export interface ParsedSample {
    labels?: Record<string, string>;
    value?: string;
    buckets?: Record<string, string>;
    count?: string;
    sum?: string;
  }
  export interface ParsedFamily {
    name: string;
    help: string;
    type: "COUNTER" | "GAUGE" | "HISTOGRAM" | "SUMMARY" | "UNTYPED";
    metrics: ParsedSample[];
  }
  /** Throws on a line it cannot read. */
  export default function parsePrometheusTextFormat(text: string): ParsedFamily[];
}

/**
 * The Metrics port on Workers: each increment one Analytics Engine data point, `index1` and
 * `blob1` the counter's name, `blob2` its labels sorted by name (`model=fast,outcome=OK`),
 * `double1` 1. A `\`, `,` or `=` in a label is escaped with a `\`, as the Prometheus adapter
 * escapes its quotes, so that two label sets never share a `blob2` (a sink or model named
 * `a,outcome=OK` is not `a` with another label): labels without them read as they are written.
 */
import { byCodeUnit } from "../../core/code-unit-order.js";
import type { Logger, Metrics } from "../../core/ports.js";

/** The binding's one method hookgate uses (`AnalyticsEngineDataset`). */
export interface AnalyticsEngineLike {
  writeDataPoint(point: { indexes?: string[]; blobs?: string[]; doubles?: number[] }): void;
}

/** `dataset` is read at each increment (the bindings of the latest invocation); unbound, nothing is written. */
export function createAnalyticsEngineMetrics(
  dataset: () => AnalyticsEngineLike | undefined,
  logger: Logger,
): Metrics {
  return {
    increment(name, labels = {}) {
      const labelText = Object.entries(labels)
        // In code-unit order, not the locale's: one label set is one blob on every isolate.
        .sort(([a], [b]) => byCodeUnit(a, b))
        .map(([k, v]) => `${escapeLabel(k)}=${escapeLabel(v)}`)
        .join(",");
      try {
        dataset()?.writeDataPoint({ indexes: [name], blobs: [name, labelText], doubles: [1] });
      } catch (e) {
        logger.log("warn", "metrics write failed", { metric: name, error: String(e) });
      }
    },
  };
}

function escapeLabel(text: string): string {
  return text.replace(/[\\,=]/g, "\\$&");
}

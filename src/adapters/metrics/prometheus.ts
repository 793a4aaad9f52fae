/**
 * The Metrics port as an in-process registry of counters, rendered in Prometheus text format,
 * with the gauges `serve` sets itself (the delivery thread's queue and journal).
 */
import { byCodeUnit } from "../../core/code-unit-order.js";
import type { Metrics } from "../../core/ports.js";

/**
 * Values that go up and down, set whole: the last value set for a label set is the one rendered.
 */
export interface Gauges {
  set(name: string, value: number, labels?: Readonly<Record<string, string>>): void;
  /**
   * A counter whose total is kept elsewhere (the log guard's dropped lines, a body budget's
   * refusals), set whole.
   */
  setCounter(name: string, total: number, labels?: Readonly<Record<string, string>>): void;
}

export interface PrometheusRegistry extends Metrics, Gauges {
  /**
   * A counter's series rendered at 0 until it is first incremented: an alert on its increase then
   * sees the first one (a series that appears at 1 shows no increase).
   */
  declare(name: string, labels: Readonly<Record<string, string>>): void;
  render(): string;
}

/** Every metric hookgate exposes, with its help text (infra/node/prometheus-alerts.yml uses them). */
export const METRIC_HELP: Readonly<Record<string, string>> = {
  hookgate_decisions_total: "Hook requests answered, by event, client and final decision.",
  hookgate_request_errors_total: "Hook requests answered with a fail mode, by error code.",
  hookgate_egress_refused_total: "Outbound requests refused by the egress guard, by code.",
  hookgate_judge_calls_total: "Prompt-rule judgments, by model and outcome (OK or the failure code).",
  hookgate_judge_cache_hits_total: "Prompt-rule judgments answered from the verdict cache, by model.",
  hookgate_forward_calls_total: "Forward-rule relays, by outcome (OK or the failure code).",
  hookgate_shadow_calls_total:
    "Calls of shadow-mode prompt and forward rules, by action and outcome (OK, CACHE_HIT, SKIPPED or the failure code); not in the enforcing rules' counters.",
  hookgate_enqueued_total: "Delivery jobs put on the queue, by sink.",
  hookgate_enqueue_failed_total:
    "Delivery jobs that could not be put on the queue, by sink (logged; the decision was answered anyway).",
  hookgate_session_store_failed_total:
    "Reads and writes of the session store that failed, by operation (rememberTool, lastTool, correlate; logged; the notification went out without what it would have added).",
  hookgate_intake_failed_total:
    "Reads of the intake journal that the queue could not take in (Node; retried, the jobs wait in the journal).",
  hookgate_delivered_total: "Delivery jobs a sink accepted, by sink.",
  hookgate_retried_total: "Delivery attempts that failed and were scheduled again, by sink.",
  hookgate_held_total:
    "Delivery jobs not sent because their sink's rate limit held them, scheduled again without spending an attempt, by sink.",
  hookgate_dead_lettered_total: "Delivery jobs moved to the dead-letter queue, by sink.",
  hookgate_dead_letter_failed_total:
    "Moves to the dead-letter queue that failed (Workers; the job is tried again), by sink.",
  hookgate_delivery_thread_up:
    "1 once serve's delivery thread delivers, 0 while it starts or is down and waiting to be started again.",
  hookgate_delivery_thread_restarts_total:
    "Times serve started its delivery thread again, by reason: exited (it died), or unresponsive (it sent nothing for 30 s and was ended).",
  hookgate_queue_jobs: "Delivery jobs in the SQLite queue: waiting, waiting for a retry, or being delivered.",
  hookgate_queue_oldest_due_seconds:
    "How long the job waiting longest for a delivery attempt has been due (0 when none is); a rising value means deliveries fall behind or have stopped.",
  hookgate_queue_dead_letters: "Jobs in the dead-letter queue (hookgate dlq list).",
  hookgate_intake_backlog_bytes: "Bytes of the intake journal not yet taken into the SQLite queue.",
  hookgate_notify_memory_jobs:
    "Delivery jobs of notify events answered while the intake journal could not be written (a full or read-only disk), held in memory until it takes them (Node; lost if serve stops first).",
  hookgate_notify_memory_bytes: "Bytes of the notify jobs held in memory (hookgate_notify_memory_jobs).",
  hookgate_body_budget_bytes:
    "Bytes of hook bodies a budget of serve holds, by budget: arriving (bodies still arriving), unauthenticated (those whose token names no team), waiting (hooks waiting on prompt and forward rules) and shadow (hooks waiting on shadow rules alone).",
  hookgate_body_budget_limit_bytes:
    "The most bytes a budget of serve holds (hookgate_body_budget_bytes), by budget; past it a hook gets its fail mode (arriving, unauthenticated), its rules' cached verdicts or onError (waiting), or its shadow rules SKIPPED (shadow).",
  hookgate_body_budget_refused_total:
    "Hooks refused for a full body budget, by budget: answered BODY_UNREADABLE in their fail mode (arriving, unauthenticated), their prompt and forward rules not called, each answered from the verdict cache, else with its onError (waiting; a hook the cache answers whole waits on nothing and is not counted), or their shadow rules SKIPPED, their answers unchanged (shadow).",
  hookgate_log_lines_dropped_total:
    "Log lines (audit lines included) dropped because stdout was not being read (past 16 MiB waiting) or had failed.",
  hookgate_log_backlog_bytes: "Bytes of log lines written to stdout and not yet read from it.",
  hookgate_policy_reloads_total:
    "Policy reloads (SIGHUP), by outcome: loaded, or failed (the running policy is kept; the log says why).",
};

export function createPrometheusRegistry(): PrometheusRegistry {
  const counters = new Map<string, Map<string, number>>();
  /** Label sets as given, to their rendered key: built once per distinct set, not per increment. */
  const keys = new Map<string, string>();
  const gauges = new Map<string, Map<string, number>>();
  const totals = new Map<string, Map<string, number>>();
  /** The series of `name` in `family`, made on first use. */
  function seriesOf(family: Map<string, Map<string, number>>, name: string): Map<string, number> {
    let named = family.get(name);
    if (!named) {
      named = new Map<string, number>();
      family.set(name, named);
    }
    return named;
  }
  /** The rendered key of `labels`, built once per distinct set (`keys`). */
  function keyOf(labels: Readonly<Record<string, string>>): string {
    let raw = "";
    for (const k in labels) raw += `${k}\u0000${labels[k]}\u0001`;
    let key = keys.get(raw);
    if (key === undefined) {
      key = renderLabels(labels);
      keys.set(raw, key);
    }
    return key;
  }
  function add(name: string, labels: Readonly<Record<string, string>>, by: number): void {
    const named = seriesOf(counters, name);
    const key = keyOf(labels);
    named.set(key, (named.get(key) ?? 0) + by);
  }
  return {
    set(name, value, labels = {}) {
      seriesOf(gauges, name).set(keyOf(labels), value);
    },
    setCounter(name, total, labels = {}) {
      seriesOf(totals, name).set(keyOf(labels), total);
    },
    increment(name, labels = {}) {
      add(name, labels, 1);
    },
    declare(name, labels) {
      add(name, labels, 0);
    },
    render() {
      const lines: string[] = [];
      const families = (family: Map<string, Map<string, number>>, type: string) => {
        for (const [name, named] of [...family].sort(byName)) {
          if (METRIC_HELP[name]) lines.push(`# HELP ${name} ${METRIC_HELP[name]}`);
          lines.push(`# TYPE ${name} ${type}`);
          for (const [key, value] of named) lines.push(`${name}${key ? `{${key}}` : ""} ${value}`);
        }
      };
      families(counters, "counter");
      families(totals, "counter");
      families(gauges, "gauge");
      return `${lines.join("\n")}\n`;
    },
  };
}

/** Names in code-unit order, the same on every host (not the host's locale's). */
const byName = ([a]: readonly [string, unknown], [b]: readonly [string, unknown]) => byCodeUnit(a, b);

function renderLabels(labels: Readonly<Record<string, string>>): string {
  return Object.entries(labels)
    .sort(byName)
    .map(([k, v]) => `${k}="${v.replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/\n/g, "\\n")}"`)
    .join(",");
}

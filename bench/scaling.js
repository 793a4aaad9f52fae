/**
 * Issue 10's scaling target: an event that applies 3 rules costs about the same with 10,000 rules
 * as with 100, because rules are indexed by event and exact matcher; and what loading and
 * compiling a 10,000-rule policy costs. Policies of 100, 1,000 and 10,000 rules from
 * bench/make-policy.js, in two shapes (`indexed`: the added rules are for other events and other
 * exact matchers; `mixed`: the same mix as bench/policy-200.json, a third of it Bash rules), all
 * measured in this run (medians and ratios, no thresholds).
 *
 *   node bench/scaling.js [--sizes 100,1000,10000] [--shapes indexed,mixed] [--loads 3]
 *                         [--rounds 9] [--batch-ms 60] [--warmup-ms 500]
 *                         [--http 0] [--connections 10] [--quiet-wait 5]
 *
 * In process, against dist/ (needs `npm run build`): `loadPolicy` on the file's text (load and
 * compile), then `handleHook` on the measured request (CPU and wall µs per decision: the CPU
 * figure, from process.cpuUsage(), is the one other load on a shared machine moves least). With `--http S` it also
 * runs `dist/entry/bin.js serve` with each policy and loads it with autocannon for S seconds, as
 * decision.js does. Loopback only; stops by itself. Writes bench/results/scaling-<date>T<time>.json and
 * prints a Markdown table.
 */
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import autocannon from "autocannon";
import {
  cpuDelta,
  cpuTicks,
  createRun,
  log,
  machine,
  median,
  percentile,
  ROOT,
  round1,
  round3,
  TICK_MS,
  waitForQuiet,
  writeResult,
} from "./common.js";
import {
  formatPolicy,
  MEASURED_ANSWER,
  MEASURED_RULES,
  makePolicy,
  measuredRequest,
  SHAPES,
} from "./make-policy.js";

const { fail, boundedInt, parseFlags, tempDir, removeDir, startGateway, stop } = createRun("scaling.js");

const { values: flags } = parseFlags({
  options: {
    sizes: { type: "string", default: "100,1000,10000" },
    shapes: { type: "string", default: "indexed,mixed" },
    loads: { type: "string", default: "3" },
    rounds: { type: "string", default: "9" },
    "batch-ms": { type: "string", default: "60" },
    "warmup-ms": { type: "string", default: "500" },
    http: { type: "string", default: "0" },
    connections: { type: "string", default: "10" },
    "quiet-wait": { type: "string", default: "5" },
  },
});

const sizes = flags.sizes.split(",").map((s) => boundedInt("sizes", s.trim(), 23, 50_000));
const shapes = flags.shapes.split(",").map((s) => s.trim());
for (const shape of shapes) {
  if (!SHAPES.includes(shape)) {
    process.stderr.write(`scaling.js: --shapes takes ${SHAPES.join(", ")}, got ${shape}\n`);
    process.exit(2);
  }
}
const options = {
  sizes,
  shapes,
  /** Load-and-compile samples per policy (the median is reported). */
  loads: boundedInt("loads", flags.loads, 1, 20),
  /** Timed batches per policy, one per round; each round visits every policy once. */
  rounds: boundedInt("rounds", flags.rounds, 1, 50),
  /** The length of one batch: enough calls to last this long (at least 3). */
  batchMs: boundedInt("batch-ms", flags["batch-ms"], 10, 5000),
  /** Calls before the first batch, per policy, for the JIT. */
  warmupMs: boundedInt("warmup-ms", flags["warmup-ms"], 0, 10_000),
  /** Seconds of autocannon per policy against `serve`; 0 skips the HTTP measurement. */
  httpSeconds: boundedInt("http", flags.http, 0, 60),
  connections: boundedInt("connections", flags.connections, 1, 100),
  quietWaitSeconds: boundedInt("quiet-wait", flags["quiet-wait"], 0, 120),
};

const dist = (path) => import(join(ROOT, "dist", path));
const { loadPolicy } = await dist("core/policy.js").catch(() =>
  fail("dist/ is missing or stale: run npm run build first"),
);
const { handleHook } = await dist("app/handle-hook.js");
const { commandWords } = await dist("core/permission-rule.js");
const { nodeSha256 } = await dist("adapters/hash/node-crypto.js");
const { createJsonLogger } = await dist("adapters/log/json-lines.js");

const REQUEST = measuredRequest();
const HOOK_REQUEST = {
  body: { ok: true, text: REQUEST.body },
  contentType: REQUEST.headers["content-type"],
  authorization: REQUEST.headers.authorization,
  dialect: undefined,
};
const policyDeps = { env: () => undefined, sha256: nodeSha256 };

await main();

async function main() {
  const cases = [];
  for (const shape of options.shapes)
    for (const rules of options.sizes) {
      const text = formatPolicy(makePolicy({ rules, shape }));
      cases.push({ name: `${shape} ${rules}`, shape, rules, text, bytes: Buffer.byteLength(text) });
    }

  // (a) Load and compile: one throwaway load first (module code and the JIT), then each policy
  // `loads` times, one sample of every policy after another.
  await load(cases[0].text);
  log(`scaling: load and compile, ${options.loads} samples per policy`);
  const loadMs = new Map(cases.map((c) => [c, []]));
  const loadCpuMs = new Map(cases.map((c) => [c, []]));
  for (let i = 0; i < options.loads; i++) {
    for (const c of cases) {
      const cpu0 = process.cpuUsage();
      const t0 = performance.now();
      c.policy = await load(c.text);
      loadMs.get(c).push(performance.now() - t0);
      const cpu = process.cpuUsage(cpu0);
      loadCpuMs.get(c).push((cpu.user + cpu.system) / 1000);
    }
  }
  for (const c of cases) {
    c.loadMs = round1(median(loadMs.get(c)));
    c.loadMsSamples = loadMs.get(c).map(round1);
    c.loadCpuMs = round1(median(loadCpuMs.get(c)));
    // What evaluation visits for the measured call: its matcher value and its command's words.
    const candidates = c.policy.candidates("PreToolUse", "Bash", () =>
      commandWords(JSON.parse(REQUEST.body).tool_input.command),
    );
    c.candidates = candidates.length;
    c.ifPatterns = candidates.reduce((n, r) => n + (r.ifRules?.length ?? 0), 0);
    log(`${c.name.padEnd(14)} load ${c.loadMs} ms, ${c.candidates} candidates, ${c.ifPatterns} if patterns`);
  }

  // (b) One decision in process: the answer and the rules that applied are checked first.
  let auditBytes = 0;
  const logger = createJsonLogger({
    write(line) {
      auditBytes += line.length;
    },
  });
  for (const c of cases) {
    c.calls = 0;
    c.deps = {
      policy: () => c.policy,
      clock: { now: Date.now, monotonic: () => performance.now() },
      newId: () => `bench-${c.calls++}`,
      sha256: nodeSha256,
      logger,
    };
    checkOutcome(c, await handleHook(c.deps, HOOK_REQUEST));
  }
  log(`scaling: per decision in process, ${options.rounds} rounds of ${options.batchMs} ms batches`);
  const pids = [process.pid];
  let quietBudget = options.quietWaitSeconds;
  const waited = await waitForQuiet(pids, quietBudget);
  quietBudget = Math.max(0, quietBudget - waited);
  for (const c of cases) {
    // Warm up, and size the batch from the warm-up's pace.
    const t0 = performance.now();
    let calls = 0;
    while (calls < 3 || performance.now() - t0 < options.warmupMs) {
      checkOutcome(c, await handleHook(c.deps, HOOK_REQUEST));
      calls++;
    }
    const perCallMs = (performance.now() - t0) / calls;
    c.batch = Math.max(3, Math.min(100_000, Math.round(options.batchMs / perCallMs)));
    c.batchUs = [];
    c.batchCpuUs = [];
    c.otherTicks = 0;
    c.timedMs = 0;
  }
  for (let round = 0; round < options.rounds; round++) {
    for (const c of rotate(cases, round)) {
      const before = cpuTicks(pids);
      const cpu0 = process.cpuUsage();
      const t0 = performance.now();
      let outcome;
      for (let i = 0; i < c.batch; i++) outcome = await handleHook(c.deps, HOOK_REQUEST);
      const ms = performance.now() - t0;
      const cpu = process.cpuUsage(cpu0);
      checkOutcome(c, outcome);
      c.batchUs.push((ms * 1000) / c.batch);
      c.batchCpuUs.push((cpu.user + cpu.system) / c.batch);
      const ticks = cpuDelta(before, cpuTicks(pids));
      c.otherTicks = ticks && c.otherTicks !== null ? c.otherTicks + ticks.otherTicks : null;
      c.timedMs += ms;
    }
  }
  for (const c of cases) {
    c.usPerDecision = round1(median(c.batchUs));
    c.usRange = [round1(Math.min(...c.batchUs)), round1(Math.max(...c.batchUs))];
    c.cpuUsPerDecision = round1(median(c.batchCpuUs));
    c.cpuUsRange = [round1(Math.min(...c.batchCpuUs)), round1(Math.max(...c.batchCpuUs))];
    log(
      `${c.name.padEnd(14)} ${c.cpuUsPerDecision} µs of CPU per decision (${c.cpuUsRange.join("–")}), ` +
        `${c.usPerDecision} µs wall (${c.usRange.join("–")}), batches of ${c.batch}`,
    );
  }

  // (c) Optional: each policy behind `serve`, loaded as decision.js loads it.
  const http = options.httpSeconds > 0 ? await measureHttp(cases, quietBudget) : null;

  const summary = summarize(cases, http);
  const result = {
    benchmark: "scaling",
    date: new Date().toISOString(),
    machine: machine("the benchmark (and with --http the gateway and autocannon) share these cores"),
    options,
    request: { bytes: Buffer.byteLength(REQUEST.body), command: "rm -rf /", applies: MEASURED_RULES },
    answer: MEASURED_ANSWER,
    auditBytesPerDecision: null,
    cases: cases.map((c) => ({
      shape: c.shape,
      rules: c.rules,
      policyBytes: c.bytes,
      candidates: c.candidates,
      ifPatternsInCandidates: c.ifPatterns,
      loadMs: c.loadMs,
      loadMsSamples: c.loadMsSamples,
      loadCpuMs: c.loadCpuMs,
      /** process.cpuUsage() (user + system, every thread of this process) per decision. */
      cpuUsPerDecision: c.cpuUsPerDecision,
      cpuUsPerDecisionRange: c.cpuUsRange,
      cpuUsPerDecisionBatches: c.batchCpuUs.map(round1),
      /** Wall time per decision: other load on the machine moves it more than the CPU figure. */
      usPerDecision: c.usPerDecision,
      usPerDecisionRange: c.usRange,
      usPerDecisionBatches: c.batchUs.map(round1),
      callsPerBatch: c.batch,
      /** CPU other processes took while this policy's batches ran, in % of a core (10 ms ticks). */
      otherProcessesCpuPercent:
        c.otherTicks === null ? null : Math.max(0, Math.round((100 * c.otherTicks * TICK_MS) / c.timedMs)),
      http: http?.get(c) ?? null,
    })),
    summary,
  };
  const decisions = cases.reduce((n, c) => n + c.calls, 0);
  result.auditBytesPerDecision = Math.round(auditBytes / Math.max(1, decisions));
  const file = writeResult("scaling", result);
  process.stdout.write(`\n${markdown(result)}\n\nwritten to ${file}\n`);
}

async function load(text) {
  const loaded = await loadPolicy(text, policyDeps);
  if (!loaded.ok) fail(`a generated policy does not load: ${JSON.stringify(loaded.error.slice(0, 3))}`);
  return loaded.value.policy;
}

/** The benchmark is void unless the measured request gets no-rm-root's deny through the 3 rules. */
function checkOutcome(c, outcome) {
  const applied = outcome.audit.rules.join(",");
  const shadow = outcome.audit.shadow.map((s) => s.rule).join(",");
  if (
    outcome.error !== undefined ||
    outcome.answer.body !== MEASURED_ANSWER ||
    applied !== MEASURED_RULES.enforced.join(",") ||
    shadow !== MEASURED_RULES.shadow.join(",")
  ) {
    fail(
      `${c.name}: the measured request got ${outcome.answer.body} (error ${outcome.error?.code}), ` +
        `rules [${applied}], shadow [${shadow}]; expected ${MEASURED_ANSWER} from ` +
        `[${MEASURED_RULES.enforced}] and shadow [${MEASURED_RULES.shadow}]`,
    );
  }
}

/** `items` turned left by `by` places, so each round starts with another policy. */
function rotate(items, by) {
  const k = by % items.length;
  return [...items.slice(k), ...items.slice(0, k)];
}

async function measureHttp(cases, quietBudgetStart) {
  const dir = tempDir("scaling");
  const out = new Map();
  let quietBudget = quietBudgetStart;
  try {
    for (const c of cases) {
      const policyPath = join(dir, `policy-${c.shape}-${c.rules}.json`);
      await writeFile(policyPath, c.text);
      const t0 = performance.now();
      const gateway = await startGateway(
        policyPath,
        {},
        [],
        ["--data-dir", join(dir, `data-${c.shape}-${c.rules}`)],
      );
      const startMs = performance.now() - t0;
      await checkHttpAnswer(c, gateway.url);
      const waited = await waitForQuiet([process.pid, gateway.child.pid], quietBudget);
      quietBudget = Math.max(0, quietBudget - waited);
      await autocannonRun(gateway.url, 1, [process.pid, gateway.child.pid]);
      const m = await autocannonRun(gateway.url, options.httpSeconds, [process.pid, gateway.child.pid]);
      await checkHttpAnswer(c, gateway.url);
      if (gateway.warnings() > 0)
        fail(`${c.name}: the gateway logged ${gateway.warnings()} warnings (above)`);
      await stop(gateway.child);
      if (m.non2xx + m.errors + m.timeouts + m.mismatches > 0)
        fail(
          `${c.name}: ${m.non2xx} non-2xx, ${m.errors} errors, ${m.timeouts} timeouts, ${m.mismatches} mismatches`,
        );
      out.set(c, { serveStartToListeningMs: Math.round(startMs), ...m });
      log(
        `${c.name.padEnd(14)} serve listening after ${Math.round(startMs)} ms; ${m.requestsPerSecond} req/s, ` +
          `p50 ${m.p50Ms} ms, p99 ${m.p99Ms} ms, server CPU ${m.serverCpuUsPerRequest ?? "?"} µs/req, ` +
          `other processes ${m.otherProcessesCpuPercent ?? "?"}% of a core`,
      );
    }
  } finally {
    removeDir(dir);
  }
  return out;
}

async function checkHttpAnswer(c, url) {
  const response = await fetch(`${url}/v1/hooks`, {
    method: "POST",
    headers: REQUEST.headers,
    body: REQUEST.body,
  });
  const body = await response.text();
  if (response.status !== 200 || body !== MEASURED_ANSWER || response.headers.get("x-hookgate-error"))
    fail(
      `${c.name}: the gateway answered ${response.status} (x-hookgate-error ${response.headers.get("x-hookgate-error")}): ${body}`,
    );
}

/** decision.js's load shape: autocannon, pipelining 1, latencies from every response. */
async function autocannonRun(url, seconds, pids) {
  let latencies = new Float64Array(1 << 15);
  let count = 0;
  const instance = autocannon({
    url: `${url}/v1/hooks`,
    method: "POST",
    headers: REQUEST.headers,
    body: REQUEST.body,
    expectBody: MEASURED_ANSWER,
    connections: options.connections,
    pipelining: 1,
    duration: seconds,
  });
  instance.on("response", (_client, _status, _bytes, responseTimeMs) => {
    if (count === latencies.length) {
      const grown = new Float64Array(latencies.length * 2);
      grown.set(latencies);
      latencies = grown;
    }
    latencies[count++] = responseTimeMs;
  });
  const before = cpuTicks(pids);
  const result = await instance;
  const ticks = cpuDelta(before, cpuTicks(pids));
  const sorted = latencies.subarray(0, count).sort();
  const [, server] = pids;
  return {
    requestsPerSecond: Math.round(result.requests.mean),
    p50Ms: round3(percentile(sorted, 0.5)),
    p99Ms: round3(percentile(sorted, 0.99)),
    requests: result.requests.total,
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
    mismatches: result.mismatches,
    serverCpuUsPerRequest: ticks
      ? Math.round((ticks.perPid(server) * TICK_MS * 1000) / Math.max(1, result.requests.total))
      : null,
    otherProcessesCpuPercent: ticks
      ? Math.max(0, Math.round((100 * ticks.otherTicks * TICK_MS) / 1000 / result.duration))
      : null,
  };
}

function summarize(cases, http) {
  const out = {};
  const smallest = Math.min(...options.sizes);
  const largest = Math.max(...options.sizes);
  for (const shape of options.shapes) {
    const small = cases.find((c) => c.shape === shape && c.rules === smallest);
    const large = cases.find((c) => c.shape === shape && c.rules === largest);
    // Paired per round: each large batch against the small batch of the same round.
    const paired = large.batchCpuUs.map((us, i) => us / small.batchCpuUs[i]);
    out[shape] = {
      compared: `${largest} vs ${smallest} rules`,
      /** CPU per decision, large over small (medians); `decisionWallRatio` the same in wall time. */
      decisionRatio: round3(large.cpuUsPerDecision / small.cpuUsPerDecision),
      decisionWallRatio: round3(large.usPerDecision / small.usPerDecision),
      decisionRatioPaired: {
        median: round3(median(paired)),
        range: [round3(Math.min(...paired)), round3(Math.max(...paired))],
      },
      loadRatio: round3(large.loadMs / small.loadMs),
      candidates: [small.candidates, large.candidates],
      http: http
        ? {
            throughputRatio: round3(http.get(large).requestsPerSecond / http.get(small).requestsPerSecond),
            serverCpuRatio:
              http.get(large).serverCpuUsPerRequest && http.get(small).serverCpuUsPerRequest
                ? round3(http.get(large).serverCpuUsPerRequest / http.get(small).serverCpuUsPerRequest)
                : null,
          }
        : null,
    };
  }
  return out;
}

function markdown(result) {
  const lines = [
    `In process (\`loadPolicy\`, then \`handleHook\` on the ${result.request.bytes}-byte PreToolUse \`rm -rf /\`); ` +
      `load: median of ${options.loads} (wall ms); decision: median of ${options.rounds} batches of ~${options.batchMs} ms, ` +
      "CPU of this process (process.cpuUsage) and wall time per decision, range in brackets. Candidates: the " +
      "rules the index returns for the measured call (by its matcher value and its command's first words); " +
      "every policy applies exactly 3 of them.",
    "",
    "| shape | rules | policy KiB | candidates (if patterns) | load + compile ms | CPU µs per decision (range) | wall µs per decision | other load |",
    "|---|---:|---:|---:|---:|---:|---:|---:|",
  ];
  for (const c of result.cases) {
    lines.push(
      `| ${c.shape} | ${c.rules} | ${Math.round(c.policyBytes / 1024)} | ${c.candidates} (${c.ifPatternsInCandidates}) | ` +
        `${c.loadMs} | ${c.cpuUsPerDecision} (${c.cpuUsPerDecisionRange.join("–")}) | ${c.usPerDecision} | ` +
        `${c.otherProcessesCpuPercent ?? "?"}% |`,
    );
  }
  lines.push("");
  for (const [shape, s] of Object.entries(result.summary)) {
    lines.push(
      `**${shape}, ${s.compared}:** CPU per decision **${s.decisionRatio.toFixed(2)}×** (paired per round ` +
        `${s.decisionRatioPaired.median.toFixed(2)}×, ${s.decisionRatioPaired.range.map((n) => n.toFixed(2)).join("–")}; ` +
        `wall ${s.decisionWallRatio.toFixed(2)}×), ` +
        `load + compile ${s.loadRatio.toFixed(1)}×, candidates ${s.candidates.join(" → ")}` +
        (s.http
          ? `; over HTTP req/s ${s.http.throughputRatio.toFixed(2)}×, server CPU per request ${s.http.serverCpuRatio?.toFixed(2) ?? "?"}×.`
          : "."),
    );
  }
  if (result.cases.some((c) => c.http)) {
    lines.push(
      "",
      `Over HTTP: \`serve\` with each policy, autocannon ${options.connections} connections for ${options.httpSeconds} s ` +
        "after 1 s of warm-up (pipelining 1, decision.js's request):",
      "",
      "| shape | rules | serve start → listening ms | req/s | p50 ms | p99 ms | server CPU µs/req | other load |",
      "|---|---:|---:|---:|---:|---:|---:|---:|",
    );
    for (const c of result.cases) {
      const h = c.http;
      lines.push(
        `| ${c.shape} | ${c.rules} | ${h.serveStartToListeningMs} | ${h.requestsPerSecond} | ${h.p50Ms.toFixed(3)} | ` +
          `${h.p99Ms.toFixed(3)} | ${h.serverCpuUsPerRequest ?? "?"} | ${h.otherProcessesCpuPercent ?? "?"}% |`,
      );
    }
  }
  return lines.join("\n");
}

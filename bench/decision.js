/**
 * Decision latency and throughput of `POST /v1/hooks` on loopback, beside a bare node:http
 * server answering the same bytes, both measured in this run (STYLE.md: speed is measured, not
 * asserted; no thresholds here, only medians and ratios).
 *
 *   node bench/decision.js [--rounds 3] [--duration 5] [--connections 10] [--warmup 2]
 *                          [--quiet-wait 20] [--cpu-prof] [--policy bench/policy-200.json]
 *                          [--ladder 5,20,80] [--ladder-duration 2] [--gc-seconds 3]
 *
 * The work ladder: the same bare server made to spin 5, 20 and 80 µs per request
 * (BENCH_WORK_US), measured in the same rounds. It says what any synchronous work per request
 * costs a node:http server here, hence how much work the 0.85x target leaves a gateway (the
 * budget) and how much work the gateway's throughput corresponds to (its equivalent).
 *
 * Needs `npm run build` first (it runs dist/entry/bin.js). Loopback only; stops by itself.
 * Writes bench/results/decision-<date>T<time>.json and prints a Markdown table.
 */
import { existsSync } from "node:fs";
import { mkdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import autocannon from "autocannon";
import {
  cpuDelta,
  cpuTicks,
  createRun,
  gcSummary,
  HERE,
  hostLoopNs,
  log,
  machine,
  median,
  percentile,
  procCounters,
  RESULTS,
  ROOT,
  round1,
  round3,
  TICK_MS,
  waitForQuiet,
  writeResult,
} from "./common.js";

const GATEWAY_BIN = join(ROOT, "dist", "entry", "bin.js");
const BARE_SERVER = join(HERE, "bare-server.js");
const FIXTURE = join(ROOT, "test", "fixtures", "claude-code", "2.1.332", "PreToolUse.json");

const { fail, boundedInt, parseFlags, startChild, startGateway, stop } = createRun("decision.js");

/** The platform team's token in bench/policy.json (its sha256 is stored there). */
const TOKEN = "hookgate-dev-token";

/** What Claude Code 2.1.332 sends (test/fixtures/.../PreToolUse.headers.json); autocannon adds Host, Content-Length, Connection. */
const HEADERS = {
  accept: "application/json, text/plain, */*",
  "content-type": "application/json",
  authorization: `Bearer ${TOKEN}`,
  "user-agent": "axios/1.15.2",
  "accept-encoding": "gzip, compress, deflate, br",
};

const { values: flags } = parseFlags({
  options: {
    rounds: { type: "string", default: "3" },
    duration: { type: "string", default: "5" },
    connections: { type: "string", default: "10" },
    warmup: { type: "string", default: "2" },
    "quiet-wait": { type: "string", default: "20" },
    "cpu-prof": { type: "boolean", default: false },
    policy: { type: "string", default: join(HERE, "policy-200.json") },
    ladder: { type: "string", default: "5,20,80" },
    "ladder-duration": { type: "string", default: "2" },
    "gc-seconds": { type: "string", default: "3" },
  },
});

const options = {
  rounds: boundedInt("rounds", flags.rounds, 1, 50),
  durationSeconds: boundedInt("duration", flags.duration, 1, 120),
  connections: boundedInt("connections", flags.connections, 1, 1000),
  warmupSeconds: boundedInt("warmup", flags.warmup, 0, 60),
  /** Total time the run may spend waiting for other processes to go quiet before a round. */
  quietWaitSeconds: boundedInt("quiet-wait", flags["quiet-wait"], 0, 120),
  pipelining: 1,
  cpuProfile: flags["cpu-prof"] === true,
  ladderUs: ladderSteps(flags.ladder),
  ladderDurationSeconds: boundedInt("ladder-duration", flags["ladder-duration"], 1, 60),
  /** The GC profile's load on each server (0: none); see gcProfile. */
  gcSeconds: boundedInt("gc-seconds", flags["gc-seconds"], 0, 60),
};

/** `--ladder 5,20,80`: increasing whole microseconds, or "" for none. */
function ladderSteps(text) {
  const steps = text.trim() === "" ? [] : text.split(",").map((t) => Number(t.trim()));
  if (steps.some((n, i) => !Number.isInteger(n) || n < 1 || n > 10_000 || (i > 0 && n <= steps[i - 1]))) {
    process.stderr.write(
      `decision.js: --ladder must be increasing whole microseconds (1-10000), got ${text}\n`,
    );
    process.exit(2);
  }
  return steps;
}

await main();

async function main() {
  if (!existsSync(GATEWAY_BIN)) fail(`${GATEWAY_BIN} is missing: run npm run build first`);
  const requestBody = await benchmarkRequestBody();

  const profileDir = join(RESULTS, "profiles");
  if (options.cpuProfile) await mkdir(profileDir, { recursive: true });
  const nodeFlags = options.cpuProfile ? ["--cpu-prof", "--cpu-prof-dir", profileDir] : [];
  const gateway = await startGateway(flags.policy, {}, nodeFlags);
  const expected = await checkGatewayAnswer(gateway.url, requestBody);
  const bare = await startBare(expected.body);
  await checkBareAnswer(bare.url, requestBody, expected.body);
  const ladder = [];
  for (const workUs of options.ladderUs) {
    const server = await startBare(expected.body, workUs);
    await checkBareAnswer(server.url, requestBody, expected.body);
    ladder.push({ workUs, ...server });
  }

  const targets = [
    { name: "gateway", url: `${gateway.url}/v1/hooks`, pid: gateway.child.pid },
    { name: "bare", url: `${bare.url}/`, pid: bare.child.pid },
    ...ladder.map((l) => ({
      name: `work ${l.workUs}`,
      workUs: l.workUs,
      url: `${l.url}/`,
      pid: l.child.pid,
      durationSeconds: options.ladderDurationSeconds,
    })),
  ];
  const load = {
    requestBody,
    expectBody: expected.body,
    pids: [process.pid, gateway.child.pid, bare.child.pid, ...ladder.map((l) => l.child.pid)],
  };

  log(
    `decision: ${options.rounds} rounds x ${options.durationSeconds}s per target, ${options.connections} connections`,
  );
  if (options.warmupSeconds > 0) {
    for (const target of targets) await measure(target, options.warmupSeconds, load);
  }
  const rounds = [];
  let quietBudget = options.quietWaitSeconds;
  for (let round = 1; round <= options.rounds; round++) {
    // Every other round in reverse (ladder, bare, gateway), so that neither side always runs
    // first, or always right after the other (whose audit lines this process may still be draining).
    for (const target of round % 2 === 1 ? targets : [...targets].reverse()) {
      const waitedSeconds = await waitForQuiet(load.pids, quietBudget);
      quietBudget = Math.max(0, quietBudget - waitedSeconds);
      const m = await measure(target, target.durationSeconds ?? options.durationSeconds, load);
      const hostNs = hostLoopNs();
      rounds.push({
        round,
        target: target.name,
        ...m,
        hostLoopNsAfter: hostNs,
        waitedForQuietSeconds: waitedSeconds,
      });
      log(
        `round ${round}/${options.rounds} ${target.name.padEnd(7)} ${m.requestsPerSecond.toFixed(0)} req/s, ` +
          `p50 ${m.p50Ms.toFixed(3)} ms, p99 ${m.p99Ms.toFixed(3)} ms, server CPU ${m.serverCpuUsPerRequest ?? "?"} us/req, ` +
          `non-2xx ${m.non2xx}, errors ${m.errors}, mismatches ${m.mismatches}, ` +
          `other processes ${m.otherProcessesCpuPercent ?? "?"}% of a core` +
          (m.serverKernelPerRequest
            ? `; a request: system CPU ${m.serverKernelPerRequest.systemCpuUs} us, ` +
              `minor faults ${m.serverKernelPerRequest.minorFaults}, context switches ${m.serverKernelPerRequest.contextSwitches}`
            : "") +
          `; host loop after it ${hostNs} ns`,
      );
    }
  }

  // The answer must still be the rule's deny after the load, not a fail-mode answer.
  await checkGatewayAnswer(gateway.url, requestBody);
  const requestsServed = rounds.filter((r) => r.target === "gateway").reduce((n, r) => n + r.requests, 0);
  await stop(bare.child);
  for (const l of ladder) await stop(l.child);
  await stop(gateway.child);
  const gc = options.gcSeconds > 0 ? await gcProfile(requestBody, expected.body) : null;

  const summary = summarize(rounds);
  const result = {
    benchmark: "decision",
    date: new Date().toISOString(),
    machine: machine("load generator (this process) and every server share these cores"),
    options: { ...options, headers: Object.keys(HEADERS) },
    request: {
      route: "POST /v1/hooks",
      bytes: Buffer.byteLength(requestBody),
      command: "rm -rf /",
      expectedRule: "no-rm-root",
    },
    answer: { status: expected.status, bytes: Buffer.byteLength(expected.body), body: expected.body },
    gatewayLog: {
      note: "gateway stdout is piped to the benchmark and discarded, as a log shipper would read it",
      bytes: gateway.logBytes(),
      bytesPerMeasuredDecision: Math.round(gateway.logBytes() / Math.max(1, requestsServed)),
    },
    rounds,
    summary,
    gc,
  };
  const file = writeResult("decision", result);
  process.stdout.write(`\n${markdown(summary)}\n${gc ? `\n${gcMarkdown(gc)}\n` : ""}\nwritten to ${file}\n`);
  if (options.cpuProfile) process.stdout.write(`gateway CPU profile in ${profileDir}\n`);
}

/**
 * Garbage collection under the same load: a fresh gateway and bare server each, started with
 * `--trace-gc-nvp` (not the measured ones, so that the tracing costs their figures nothing), warmed
 * up, then `--gc-seconds` of autocannon each. What a young-generation collection costs and how
 * much it promotes is where the gateway's p99 goes beyond its CPU (bench/README.md, "Row 1").
 */
async function gcProfile(requestBody, expectedBody) {
  const nodeFlags = ["--trace-gc-nvp"];
  const gateway = await startGateway(flags.policy, {}, nodeFlags);
  await checkGatewayAnswer(gateway.url, requestBody);
  const bare = await startChild(
    BARE_SERVER,
    { BENCH_BODY: expectedBody, BENCH_WORK_US: "0" },
    "the bare server",
    nodeFlags,
  );
  const servers = [
    { name: "gateway", url: `${gateway.url}/v1/hooks`, pid: gateway.child.pid, lines: gateway.gcLines },
    { name: "bare", url: `${bare.url}/`, pid: bare.child.pid, lines: bare.gcLines },
  ];
  const out = {};
  try {
    for (const server of servers) {
      const load = { requestBody, expectBody: expectedBody, pids: [process.pid, server.pid] };
      if (options.warmupSeconds > 0) await measure(server, options.warmupSeconds, load);
      server.lines.length = 0;
      const m = await measure(server, options.gcSeconds, load);
      out[server.name] = gcSummary(server.lines, m.requests);
      log(`gc ${server.name.padEnd(7)} ${JSON.stringify(out[server.name])}`);
    }
  } finally {
    await stop(bare.child);
    await stop(gateway.child);
  }
  return out;
}

function gcMarkdown(gc) {
  const kb = (n) => (n === null ? "?" : `${round1(n / 1024)} KB`);
  const ms = (n) => (n === null ? "?" : n.toFixed(2));
  const row = (name, g) =>
    `| ${name} | ${g.youngPerThousandRequests} | ${ms(g.youngPauseMs.p50)} | ${ms(g.youngPauseMs.p90)} | ` +
    `${ms(g.youngPauseMs.max)} | ${kb(g.survivedBytesMedian)} | ${kb(g.promotedBytesMedian)} | ${g.fullCollections} |`;
  return [
    `Garbage collection, a fresh server of each with \`--trace-gc-nvp\` under the same load for ${options.gcSeconds} s (main thread):`,
    "",
    "| target | young collections per 1000 req | pause p50 ms | p90 ms | max ms | survived (median) | promoted (median) | full collections |",
    "|---|---:|---:|---:|---:|---:|---:|---:|",
    row("hookgate `POST /v1/hooks`", gc.gateway),
    row("bare node:http", gc.bare),
  ].join("\n");
}

/** The real Claude Code PreToolUse body with its command swapped for `rm -rf /`. */
async function benchmarkRequestBody() {
  const fixture = JSON.parse(await readFile(FIXTURE, "utf8"));
  fixture.tool_input.command = "rm -rf /";
  fixture.tool_input.description = "Delete everything";
  return JSON.stringify(fixture);
}

/** The baseline server (bench/bare-server.js), answering `body` after `workUs` of busy work. */
function startBare(body, workUs = 0) {
  return startChild(BARE_SERVER, { BENCH_BODY: body, BENCH_WORK_US: String(workUs) }, "the bare server");
}

/** The benchmark is void unless the gateway denies through the rule: abort otherwise. */
async function checkGatewayAnswer(url, requestBody) {
  const response = await fetch(`${url}/v1/hooks`, { method: "POST", headers: HEADERS, body: requestBody });
  const body = await response.text();
  let decision;
  try {
    decision = JSON.parse(body).hookSpecificOutput?.permissionDecision;
  } catch {
    decision = undefined;
  }
  if (response.status !== 200 || decision !== "deny" || response.headers.get("x-hookgate-error")) {
    fail(
      `the gateway's answer is not the expected deny (status ${response.status}, ` +
        `x-hookgate-error ${response.headers.get("x-hookgate-error")}): ${body}`,
    );
  }
  return { status: response.status, body };
}

async function checkBareAnswer(url, requestBody, expectedBody) {
  const response = await fetch(url, { method: "POST", headers: HEADERS, body: requestBody });
  const body = await response.text();
  if (response.status !== 200 || body !== expectedBody)
    fail(`the bare server answered ${response.status}: ${body}`);
}

/**
 * One autocannon run. autocannon's own histogram keeps whole milliseconds, too coarse on
 * loopback, so latencies are also taken from its `response` events at full resolution.
 */
async function measure(target, durationSeconds, load) {
  let latencies = new Float64Array(1 << 16);
  let count = 0;
  const instance = autocannon({
    url: target.url,
    method: "POST",
    headers: HEADERS,
    body: load.requestBody,
    expectBody: load.expectBody,
    connections: options.connections,
    pipelining: options.pipelining,
    duration: durationSeconds,
  });
  instance.on("response", (_client, _status, _bytes, responseTimeMs) => {
    if (count === latencies.length) {
      const grown = new Float64Array(latencies.length * 2);
      grown.set(latencies);
      latencies = grown;
    }
    latencies[count++] = responseTimeMs;
  });
  // autocannon counts a non-2xx answer, or one whose body is not the deny, as a request served
  // (its latency among the others): a round with any is void, not a figure.
  let firstWrong;
  instance.on("reqMismatch", (body) => {
    firstWrong ??= `a body other than the expected deny: ${String(body).slice(0, 300)}`;
  });
  instance.on("reqError", (error) => {
    firstWrong ??= `an error: ${error instanceof Error ? error.message : error}`;
  });
  const cpuBefore = cpuTicks(load.pids);
  const kernelBefore = procCounters(target.pid);
  const result = await instance;
  const cpu = cpuDelta(cpuBefore, cpuTicks(load.pids));
  const kernel = kernelPerRequest(kernelBefore, procCounters(target.pid), result.requests.total);
  if (result.non2xx + result.errors + result.mismatches > 0) {
    fail(
      `${target.name}: ${result.non2xx} non-2xx, ${result.errors} errors (${result.timeouts} timeouts) and ` +
        `${result.mismatches} body mismatches among ${result.requests.total} answers under load ` +
        `(statuses ${JSON.stringify(result.statusCodeStats)})` +
        `${firstWrong === undefined ? "" : `; the first, ${firstWrong}`}`,
    );
  }
  const sorted = latencies.subarray(0, count).sort();
  return {
    requestsPerSecond: result.requests.mean,
    p50Ms: round3(percentile(sorted, 0.5)),
    p99Ms: round3(percentile(sorted, 0.99)),
    requests: result.requests.total,
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
    mismatches: result.mismatches,
    durationSeconds: result.duration,
    autocannonLatencyMs: { p50: result.latency.p50, p99: result.latency.p99, resolution: "whole ms" },
    serverCpuUsPerRequest: cpu
      ? Math.round((cpu.perPid(target.pid) * TICK_MS * 1000) / Math.max(1, result.requests.total))
      : null,
    otherProcessesCpuPercent: cpu
      ? Math.max(0, Math.round((100 * cpu.otherTicks * TICK_MS) / 1000 / result.duration))
      : null,
    serverKernelPerRequest: kernel,
  };
}

/** The server's system CPU (µs), minor faults and context switches a request over one round. */
function kernelPerRequest(before, after, requests) {
  if (!before || !after || requests === 0) return null;
  const per = (a, b, scale = 1) => Math.round(((a - b) * scale * 1000) / requests) / 1000;
  return {
    systemCpuUs: per(after.systemTicks, before.systemTicks, TICK_MS * 1000),
    minorFaults: per(after.minorFaults, before.minorFaults),
    contextSwitches: per(after.switches, before.switches),
  };
}

function summarize(rounds) {
  const perTarget = (name) => {
    const rs = rounds.filter((r) => r.target === name);
    return {
      rounds: rs.length,
      requestsPerSecond: Math.round(median(rs.map((r) => r.requestsPerSecond))),
      p50Ms: round3(median(rs.map((r) => r.p50Ms))),
      p99Ms: round3(median(rs.map((r) => r.p99Ms))),
      serverCpuUsPerRequest: rs.every((r) => r.serverCpuUsPerRequest !== null)
        ? median(rs.map((r) => r.serverCpuUsPerRequest))
        : null,
      non2xx: rs.reduce((n, r) => n + r.non2xx, 0),
      errors: rs.reduce((n, r) => n + r.errors, 0),
      timeouts: rs.reduce((n, r) => n + r.timeouts, 0),
      mismatches: rs.reduce((n, r) => n + r.mismatches, 0),
      otherProcessesCpuPercentMax: Math.max(...rs.map((r) => r.otherProcessesCpuPercent ?? 0)),
    };
  };
  const gateway = perTarget("gateway");
  const bare = perTarget("bare");
  const pairedWithBare = (name) =>
    round3(
      median(
        rounds
          .filter((r) => r.target === name)
          .map((r) => [r, rounds.find((b) => b.target === "bare" && b.round === r.round)])
          .filter(([, b]) => b !== undefined)
          .map(([r, b]) => r.requestsPerSecond / b.requestsPerSecond),
      ),
    );
  const ladder = options.ladderUs.map((workUs) => ({
    workUs,
    ...perTarget(`work ${workUs}`),
    pairedThroughputVsBare: pairedWithBare(`work ${workUs}`),
  }));
  // Each gateway round is paired with the bare round beside it (after it in odd rounds, before it in
  // even ones), so slow drift cancels.
  const paired = rounds
    .filter((r) => r.target === "gateway")
    .map((g) => [g, rounds.find((b) => b.target === "bare" && b.round === g.round)])
    .filter(([, b]) => b !== undefined);
  return {
    gateway,
    bare,
    ratio: {
      throughput: round3(gateway.requestsPerSecond / bare.requestsPerSecond),
      p50DiffMs: round3(gateway.p50Ms - bare.p50Ms),
      p99DiffMs: round3(gateway.p99Ms - bare.p99Ms),
      serverCpuPerRequest:
        gateway.serverCpuUsPerRequest && bare.serverCpuUsPerRequest
          ? round3(gateway.serverCpuUsPerRequest / bare.serverCpuUsPerRequest)
          : null,
      pairedThroughputMedian: round3(
        median(paired.map(([g, b]) => g.requestsPerSecond / b.requestsPerSecond)),
      ),
      pairedThroughputRange: [
        round3(Math.min(...paired.map(([g, b]) => g.requestsPerSecond / b.requestsPerSecond))),
        round3(Math.max(...paired.map(([g, b]) => g.requestsPerSecond / b.requestsPerSecond))),
      ],
    },
    ladder,
    workBudget: {
      note: "µs of synchronous work per request at which the bare server keeps this share of its req/s (interpolated on the ladder; null past its ends)",
      at085Us: workFor(ladder, 0.85),
      gatewayEquivalentUs: workFor(
        ladder,
        median(paired.map(([g, b]) => g.requestsPerSecond / b.requestsPerSecond)),
      ),
    },
  };
}

/**
 * The work per request at which the ladder's throughput share falls to `share`: linear between
 * neighbouring steps, (0 µs, 1.0) being the bare server itself; null outside the ladder.
 */
function workFor(ladder, share) {
  let previous = { workUs: 0, share: 1 };
  for (const step of ladder) {
    const current = { workUs: step.workUs, share: step.pairedThroughputVsBare };
    if (share <= previous.share && share >= current.share && previous.share > current.share) {
      const t = (previous.share - share) / (previous.share - current.share);
      return Math.round(10 * (previous.workUs + t * (current.workUs - previous.workUs))) / 10;
    }
    previous = current;
  }
  return null;
}

function markdown(summary) {
  const { gateway: g, bare: b, ratio } = summary;
  const cpu = (t) => (t.serverCpuUsPerRequest === null ? "?" : String(t.serverCpuUsPerRequest));
  const row = (name, t) =>
    `| ${name} | ${t.requestsPerSecond} | ${t.p50Ms.toFixed(3)} | ${t.p99Ms.toFixed(3)} | ${cpu(t)} | ` +
    `${t.non2xx} | ${t.errors + t.timeouts} | ${t.mismatches} | ${t.otherProcessesCpuPercentMax}% |`;
  const signed = (n) => `${n >= 0 ? "+" : ""}${n.toFixed(3)}`;
  const cpuRatio = ratio.serverCpuPerRequest === null ? "?" : `${ratio.serverCpuPerRequest.toFixed(1)}x`;
  const ladderRows = summary.ladder.map(
    (l) =>
      `| bare node:http + ${l.workUs} µs of work per request | ${l.requestsPerSecond} | ${l.p50Ms.toFixed(3)} | ` +
      `${l.p99Ms.toFixed(3)} | ${cpu(l)} | ${l.non2xx} | ${l.errors + l.timeouts} | ${l.mismatches} | ` +
      `${l.otherProcessesCpuPercentMax}% |`,
  );
  const budget = summary.workBudget;
  const us = (n) => (n === null ? "outside the ladder" : `${n} µs`);
  return [
    `Medians of ${g.rounds} rounds, ${options.durationSeconds}s each (ladder steps ${options.ladderDurationSeconds}s), ${options.connections} connections, pipelining 1:`,
    "",
    "| target | req/s | p50 ms | p99 ms | server CPU us/req | non-2xx | errors | body mismatches | other load (max) |",
    "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    row("hookgate `POST /v1/hooks`", g),
    row("bare node:http, same answer bytes", b),
    `| **gateway vs bare** | **${ratio.throughput.toFixed(2)}x** | **${signed(ratio.p50DiffMs)}** | ` +
      `**${signed(ratio.p99DiffMs)}** | **${cpuRatio}** | | | | |`,
    ...ladderRows,
    "",
    summary.ladder.length === 0
      ? 'No work ladder (--ladder "").'
      : `Work ladder, paired with bare: ${summary.ladder.map((l) => `${l.workUs} µs ${l.pairedThroughputVsBare.toFixed(2)}x`).join(", ")}. ` +
        `0.85x of bare leaves ${us(budget.at085Us)} of work per request on this machine; ` +
        `the gateway's throughput is that of ${us(budget.gatewayEquivalentUs)} of work.`,
    "",
    `Paired per-round throughput ratio: median ${ratio.pairedThroughputMedian.toFixed(2)}, ` +
      `range ${ratio.pairedThroughputRange.map((n) => n.toFixed(2)).join("-")}. ` +
      "Other load: CPU taken by processes outside the benchmark, in % of one core, worst round.",
  ].join("\n");
}

#!/usr/bin/env node
/**
 * Issue 9's load proof: `hookgate serve` at a fixed rate for a fixed time on loopback, with a
 * realistic policy and notify rules, then stop, let the queue drain, and account for every
 * answer and every notify event.
 *
 *   node scripts/load.mjs [--rate 200] [--duration 60] [--connections 10] [--warmup 10]
 *                         [--drain-timeout 60] [--down 500|hang] [--out FILE]
 *
 * Needs `npm run build` first (it runs dist/). Loopback only; bounded in requests
 * (rate × duration) and in time; every child process is stopped by its pid.
 *
 * What runs:
 * - scripts/load-receiver.mjs: two webhook sinks in one child process. `audit` verifies each
 *   Standard Webhooks signature and drops repeated `webhook-id`s; `siem` is down (500 to
 *   everything) with a short retry schedule, so its jobs go to the dead-letter queue in the run.
 *   `--down hang` makes it accept each POST and never answer instead (each attempt then lasts
 *   the gateway's delivery timeout).
 * - `dist/entry/bin.js serve` with a fresh data dir and bench/policy.json (21 rules, two teams)
 *   plus notify rules: denies go to `audit` and `siem`, PostToolUse Bash, Notification and Stop
 *   to `audit`. scripts/load-probe.mjs is preloaded to report the V8 heap once a second.
 * - autocannon at `overallRate` = --rate over --connections keep-alive connections, for
 *   rate × duration requests, cycling through a mix of the captured Claude Code 2.1.332 requests
 *   (test/fixtures/claude-code) with their headers and a real bearer token. autocannon paces per
 *   second: each connection sends its share of a second back to back, then waits.
 *
 * Checks (any failure exits 1; timing and memory figures are reported, never checked): every
 * request answered 2xx with the body its kind got before the load, no connection error or
 * timeout, as many decisions counted as requests sent, as many jobs enqueued per sink as the mix
 * implies, and after the drain, per sink, enqueued = delivered + dead-lettered; the receiver saw
 * each delivered id once with a valid signature; the failing sink saw each dead job exactly
 * 1 + retries times; the queue file holds no job and as many dead letters as counted; the
 * gateway logged no unexpected warning or error and exited 0 on SIGTERM.
 *
 * Prints a Markdown summary on stdout and writes the figures as JSON to
 * bench/results/load-<date>T<time>.json, the run's end in UTC (or --out), a file per run.
 */
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath, pathToFileURL } from "node:url";
import { parseArgs } from "node:util";
import autocannon from "autocannon";
import { cpuDelta, cpuTicks, machine, percentile, writeResult } from "../bench/common.js";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const BIN = join(ROOT, "dist", "entry", "bin.js");
const RECEIVER = join(ROOT, "scripts", "load-receiver.mjs");
const PROBE = join(ROOT, "scripts", "load-probe.mjs");
const FIXTURES = join(ROOT, "test", "fixtures", "claude-code", "2.1.332");
const BENCH_POLICY = join(ROOT, "bench", "policy.json");
/** The platform team's token in bench/policy.json (its sha256 is stored there). */
const TOKEN = "hookgate-dev-token";
/** The failing sink's retries (seconds): three attempts, dead-lettered within about 2 s. */
const SIEM_RETRIES = [0.5, 1];
const START_TIMEOUT_MS = 15_000;
const STOP_TIMEOUT_MS = 15_000;
/** Linux reports /proc times in USER_HZ, 100 per second on every architecture Node runs on. */
const TICK_MS = 10;
const PROBE_PREFIX = "hookgate-load-probe ";
/**
 * Gateway log lines the run expects: startup warnings, and the failing sink's retries and dead
 * letters (with `--down hang`, also the egress timeouts of its attempts).
 */
const EXPECTED_LOG = new Set([
  "warn policy warning",
  "warn delivery failed; will retry",
  "error delivery dead-lettered",
]);
const EXPECTED_WHEN_HANGING = "warn egress refused";

/**
 * The request mix, per 20 requests: what an agent session sends most (tool calls and their
 * results), a few prompts, permission prompts and stops. `notify` is the sinks each one's event
 * is sent to under the load policy.
 */
const MIX = [
  { kind: "PreToolUse Bash, no rule", fixture: "PreToolUse", weight: 3, expect: "empty", notify: [] },
  {
    kind: "PreToolUse Bash npm test (allow)",
    fixture: "PreToolUse",
    input: { command: "npm test -- --run", description: "run the tests" },
    weight: 2,
    expect: "allow",
    notify: [],
  },
  {
    kind: "PreToolUse Bash git status (allow)",
    fixture: "PreToolUse",
    input: { command: "git status --short", description: "what changed" },
    weight: 2,
    expect: "allow",
    notify: [],
  },
  {
    kind: "PreToolUse Bash rm -rf / (deny)",
    fixture: "PreToolUse",
    input: { command: "rm -rf /var/tmp/build", description: "clean" },
    weight: 1,
    expect: "deny",
    notify: ["audit", "siem"],
  },
  {
    kind: "PreToolUse Read .env (deny)",
    fixture: "PreToolUse",
    tool: "Read",
    input: { file_path: "/home/dev/proj/.env" },
    weight: 1,
    expect: "deny",
    notify: ["audit", "siem"],
  },
  { kind: "PostToolUse Bash", fixture: "PostToolUse", weight: 6, expect: "empty", notify: ["audit"] },
  {
    kind: "UserPromptSubmit (context)",
    fixture: "UserPromptSubmit",
    weight: 2,
    expect: "context",
    notify: [],
  },
  {
    kind: "Notification permission_prompt",
    fixture: "Notification",
    weight: 1,
    expect: "empty",
    notify: ["audit"],
  },
  { kind: "Stop", fixture: "Stop", weight: 2, expect: "empty", notify: ["audit"] },
];

/** Options, checked; `argv` as process.argv.slice(2). */
export function parseOptions(argv) {
  const { values } = parseArgs({
    args: argv,
    options: {
      rate: { type: "string", default: "200" },
      duration: { type: "string", default: "60" },
      connections: { type: "string", default: "10" },
      warmup: { type: "string", default: "10" },
      "drain-timeout": { type: "string", default: "60" },
      down: { type: "string", default: "500" },
      out: { type: "string" },
    },
  });
  const int = (flag, min, max) => {
    const n = Number(values[flag]);
    if (!Number.isInteger(n) || n < min || n > max)
      throw new Error(`--${flag} must be an integer from ${min} to ${max}, got ${values[flag]}`);
    return n;
  };
  const durationSeconds = int("duration", 1, 600);
  if (values.down !== "500" && values.down !== "hang")
    throw new Error(`--down must be 500 or hang, got ${values.down}`);
  return {
    rate: int("rate", 1, 5000),
    durationSeconds,
    connections: int("connections", 1, 100),
    warmupSeconds: Math.min(int("warmup", 0, 600), durationSeconds),
    drainTimeoutSeconds: int("drain-timeout", 1, 600),
    down: values.down,
    out: values.out === undefined ? undefined : resolve(values.out),
  };
}

/** Runs the whole proof; returns the figures and the list of failed checks. */
export async function runLoad(options) {
  const children = new Set();
  const running = () =>
    [...children].filter((c) => c.pid !== undefined && c.exitCode === null && c.signalCode === null);
  const work = mkdtempSync(join(tmpdir(), "hookgate-load-"));
  const remove = () => rmSync(work, { recursive: true, force: true, maxRetries: 5 });
  // Ended by a signal (Ctrl-C, a CI timeout), main's process.exit skips the finally below: the
  // processes and the directory go here. The directory held the policy and the gateway's queue.
  const atExit = () => {
    for (const child of running()) child.kill("SIGKILL");
    remove();
  };
  process.once("exit", atExit);
  try {
    return await run(options, work, children);
  } finally {
    // Gone before their directory is removed, which they may still be writing.
    await Promise.all(
      running().map((child) => {
        const exited = new Promise((resolve) => child.once("exit", resolve));
        child.kill("SIGKILL");
        return exited;
      }),
    );
    process.removeListener("exit", atExit);
    remove();
  }
}

async function run(options, work, children) {
  const secrets = { audit: whsec(), siem: whsec() };
  const sinkEnv = { LOAD_AUDIT_WHSEC: secrets.audit, LOAD_SIEM_WHSEC: secrets.siem };

  const receiver = spawn(process.execPath, [RECEIVER], {
    stdio: ["ignore", "pipe", "pipe"],
    env: { PATH: process.env.PATH ?? "", ...sinkEnv, LOAD_SIEM_MODE: options.down },
  });
  children.add(receiver);
  const receiverStderr = collect(receiver.stderr);
  const receiverUrl = JSON.parse(await firstLine(receiver, "the receiver")).url;

  const policyPath = join(work, "policy.json");
  writeFileSync(policyPath, JSON.stringify(loadPolicy(receiverUrl), null, 2));
  const dataDir = join(work, "data");
  const expectedLog = new Set(EXPECTED_LOG);
  if (options.down === "hang") expectedLog.add(EXPECTED_WHEN_HANGING);
  const gateway = await startGateway(policyPath, dataDir, sinkEnv, expectedLog, children);

  const requests = buildRequests();
  const probes = await probeEachKind(gateway.url, requests);
  const memory = startSampler(gateway.child.pid, gateway);
  await sleep(1100);
  const idle = memory.latest();

  log(`load: ${options.rate} req/s for ${options.durationSeconds} s over ${options.connections} connections`);
  const pids = [process.pid, gateway.child.pid, receiver.pid];
  const cpuBefore = cpuTicks(pids);
  memory.mark("loadStart");
  const load = await fire(gateway.url, requests, options);
  memory.mark("loadEnd");
  const cpu = describeCpu(cpuBefore, cpuTicks(pids), load.seconds, {
    loader: process.pid,
    gateway: gateway.child.pid,
    receiver: receiver.pid,
  });
  log(`load: ${load.responses} answers in ${load.seconds} s; draining`);

  const drainStarted = performance.now();
  const drained = await drain(gateway.url, receiverUrl, options.drainTimeoutSeconds);
  const drainSeconds = round((performance.now() - drainStarted) / 1000, 1);
  memory.mark("drained");
  await sleep(1100);
  memory.stop();
  const metrics = await readMetrics(gateway.url);
  const received = await getJson(`${receiverUrl}/count`);

  const shutdownStarted = performance.now();
  const exit = await stopChild(gateway.child, children);
  const shutdownMs = Math.round(performance.now() - shutdownStarted);
  const queueFile = await inspectQueue(dataDir);
  await stopChild(receiver, children);

  const sent = load.responses + probes.length;
  const expectedEnqueued = { audit: 0, siem: 0 };
  for (const r of requests) {
    const answered = r.answered + 1; // the probe
    for (const sink of r.notify) expectedEnqueued[sink] += answered;
  }
  const sinks = {};
  for (const sink of ["audit", "siem"]) {
    const enqueued = counter(metrics, "hookgate_enqueued_total", sink);
    const delivered = counter(metrics, "hookgate_delivered_total", sink);
    const deadLettered = counter(metrics, "hookgate_dead_lettered_total", sink);
    sinks[sink] = {
      expectedEnqueued: expectedEnqueued[sink],
      enqueued,
      delivered,
      retried: counter(metrics, "hookgate_retried_total", sink),
      deadLettered,
      lost: enqueued - delivered - deadLettered,
    };
  }
  const memoryFigures = memory.figures(options.warmupSeconds);
  const result = {
    date: new Date().toISOString(),
    command: `node scripts/load.mjs --rate ${options.rate} --duration ${options.durationSeconds} --connections ${options.connections}${options.down === "500" ? "" : ` --down ${options.down}`}`,
    options: { ...options, out: undefined },
    machine: machine(
      "2 vCPUs shared with other engineers' work; see cpu.otherProcessesPercent for the load beside this run",
    ),
    load: {
      planned: options.rate * options.durationSeconds,
      answered: load.responses,
      probes: probes.length,
      sent,
      seconds: load.seconds,
      achievedRate: Math.round(load.responses / load.seconds),
      status2xx: load.status2xx,
      non2xx: load.non2xx,
      errors: load.errors,
      timeouts: load.timeouts,
      wrongBodies: load.wrongBodies,
      latencyMs: load.latencyMs,
      byKind: Object.fromEntries(requests.map((r) => [r.kind, r.answered])),
    },
    decisions: sumOf(metrics, "hookgate_decisions_total"),
    decisionsByEvent: byLabel(metrics, "hookgate_decisions_total", "event"),
    requestErrors: sumOf(metrics, "hookgate_request_errors_total"),
    enqueueFailed: sumOf(metrics, "hookgate_enqueue_failed_total"),
    sinks,
    enqueued: sinks.audit.enqueued + sinks.siem.enqueued,
    delivered: sinks.audit.delivered + sinks.siem.delivered,
    deadLettered: sinks.audit.deadLettered + sinks.siem.deadLettered,
    lost: sinks.audit.lost + sinks.siem.lost,
    drain: { complete: drained, seconds: drainSeconds },
    receiver: received,
    queueFile,
    gateway: {
      exitCode: exit.code,
      signal: exit.signal,
      killed: exit.killed,
      shutdownMs,
      logLines: gateway.logCounts(),
      unexpectedLog: gateway.unexpected(),
      otherStderr: gateway.otherStderr(),
    },
    receiverStderr: receiverStderr().trim(),
    cpu,
    memory: { idle, ...memoryFigures },
  };
  result.failures = checks(result);
  return result;
}

// ---------------------------------------------------------------------------------------------
// Setup

function whsec() {
  return `whsec_${randomBytes(24).toString("base64")}`;
}

/** bench/policy.json with notify rules and the two sinks on the receiver. */
function loadPolicy(receiverUrl) {
  const base = JSON.parse(readFileSync(BENCH_POLICY, "utf8"));
  const securityRules = new Set(["no-rm-root", "env-files"]);
  return {
    ...base,
    egress: { allowCidrs: ["127.0.0.1/32"] },
    rules: [
      ...base.rules.map((r) => (securityRules.has(r.id) ? { ...r, notify: ["audit", "siem"] } : r)),
      { id: "audit-bash-runs", on: "PostToolUse", matcher: "Bash", notify: ["audit"] },
      { id: "tell-humans", on: ["Notification", "Stop"], notify: ["audit"] },
    ],
    sinks: {
      audit: { type: "webhook", url: `${receiverUrl}/audit`, secret: "env:LOAD_AUDIT_WHSEC" },
      siem: {
        type: "webhook",
        url: `${receiverUrl}/siem`,
        secret: "env:LOAD_SIEM_WHSEC",
        retryScheduleSeconds: SIEM_RETRIES,
      },
    },
  };
}

/** The mix as autocannon requests, interleaved by weight (smooth weighted round robin). */
function buildRequests() {
  const kinds = MIX.map((m) => {
    const body = JSON.parse(readFileSync(join(FIXTURES, `${m.fixture}.json`), "utf8"));
    if (m.tool) body.tool_name = m.tool;
    if (m.input) body.tool_input = m.input;
    const captured = JSON.parse(readFileSync(join(FIXTURES, `${m.fixture}.headers.json`), "utf8")).headers;
    const headers = {};
    for (const [name, value] of captured) {
      // autocannon writes Host, Content-Length and Connection itself.
      if (["host", "content-length", "connection"].includes(name.toLowerCase())) continue;
      headers[name] = name.toLowerCase() === "authorization" ? `Bearer ${TOKEN}` : value;
    }
    return { ...m, body: JSON.stringify(body), headers, answered: 0, expectedBody: undefined };
  });
  const total = kinds.reduce((n, k) => n + k.weight, 0);
  const current = kinds.map(() => 0);
  const order = [];
  for (let i = 0; i < total; i++) {
    for (let k = 0; k < kinds.length; k++) current[k] += kinds[k].weight;
    let best = 0;
    for (let k = 1; k < kinds.length; k++) if (current[k] > current[best]) best = k;
    current[best] -= total;
    order.push(kinds[best]);
  }
  kinds.order = order;
  return kinds;
}

/**
 * One request of each kind before the load: its answer must be the decision the policy gives
 * (so the mix exercises what it says), and becomes the exact body expected under load.
 */
async function probeEachKind(url, kinds) {
  const probes = [];
  for (const k of kinds) {
    const res = await fetch(`${url}/v1/hooks`, { method: "POST", headers: k.headers, body: k.body });
    const text = await res.text();
    const problem = wrongDecision(k.expect, res.status, text);
    if (problem) throw new Error(`${k.kind}: ${problem} (answer ${res.status} ${text})`);
    k.expectedBody = text;
    probes.push({ kind: k.kind, status: res.status, body: text });
  }
  return probes;
}

function wrongDecision(expect, status, text) {
  if (status !== 200) return `status ${status}`;
  if (expect === "empty") return text === "" ? undefined : "expected an empty answer";
  const out = JSON.parse(text).hookSpecificOutput ?? {};
  if (expect === "context")
    return String(out.additionalContext).includes("pnpm") ? undefined : "expected the pnpm context";
  return out.permissionDecision === expect ? undefined : `expected permissionDecision ${expect}`;
}

async function startGateway(policyPath, dataDir, env, expectedLog, children) {
  const child = spawn(
    process.execPath,
    [
      "--import",
      pathToFileURL(PROBE).href,
      BIN,
      "serve",
      "--policy",
      policyPath,
      "--host",
      "127.0.0.1",
      "--port",
      "0",
      "--data-dir",
      dataDir,
    ],
    { cwd: ROOT, stdio: ["ignore", "pipe", "pipe"], env: { PATH: process.env.PATH ?? "", ...env } },
  );
  children.add(child);
  const counts = new Map();
  const unexpected = [];
  const otherStderr = [];
  let heap;
  createInterface({ input: child.stderr }).on("line", (line) => {
    if (line.startsWith(PROBE_PREFIX)) heap = JSON.parse(line.slice(PROBE_PREFIX.length));
    else if (otherStderr.length < 20) otherStderr.push(line);
  });
  const url = await new Promise((resolvePromise, reject) => {
    const timer = setTimeout(() => reject(new Error("the gateway did not listen in time")), START_TIMEOUT_MS);
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`the gateway exited with ${code} before listening: ${otherStderr.join("\n")}`));
    });
    createInterface({ input: child.stdout }).on("line", (line) => {
      // Audit lines are info; only the other levels are parsed, and the listening line.
      const listening = line.includes('"msg":"hookgate listening"');
      if (!listening && !line.includes('"level":"warn"') && !line.includes('"level":"error"')) return;
      const entry = JSON.parse(line);
      if (listening) {
        clearTimeout(timer);
        resolvePromise(entry.url);
        return;
      }
      const key = `${entry.level} ${entry.msg}`;
      counts.set(key, (counts.get(key) ?? 0) + 1);
      if (!expectedLog.has(key) && unexpected.length < 20) unexpected.push(line);
      if (key === "error delivery dead-lettered" && entry.sink !== "siem" && unexpected.length < 20)
        unexpected.push(line);
    });
  });
  return {
    child,
    url,
    heap: () => heap,
    logCounts: () => Object.fromEntries(counts),
    unexpected: () => unexpected,
    otherStderr: () => otherStderr,
  };
}

// ---------------------------------------------------------------------------------------------
// The load

function fire(url, kinds, options) {
  const amount = options.rate * options.durationSeconds;
  const latencies = new Float64Array(amount);
  let responses = 0;
  let wrongBodies = 0;
  const wrongSamples = [];
  const requests = kinds.order.map((k) => ({
    method: "POST",
    path: "/v1/hooks",
    headers: k.headers,
    body: k.body,
    onResponse: (status, body) => {
      k.answered++;
      if (status >= 200 && status < 300 && body !== k.expectedBody) {
        wrongBodies++;
        if (wrongSamples.length < 5) wrongSamples.push({ kind: k.kind, body });
      }
    },
  }));
  return new Promise((resolvePromise, reject) => {
    const started = performance.now();
    const instance = autocannon(
      {
        url,
        connections: Math.min(options.connections, options.rate),
        overallRate: options.rate,
        amount,
        requests,
        timeout: 10,
      },
      (error, result) => {
        clearTimeout(guard);
        if (error) return reject(error);
        const seconds = round((performance.now() - started) / 1000, 2);
        const sorted = latencies.subarray(0, Math.min(responses, amount)).sort();
        resolvePromise({
          responses,
          seconds,
          status2xx: result["2xx"],
          non2xx: result.non2xx,
          errors: result.errors,
          timeouts: result.timeouts,
          wrongBodies,
          wrongSamples,
          latencyMs: {
            p50: round(percentile(sorted, 0.5), 2),
            p99: round(percentile(sorted, 0.99), 2),
            max: round(sorted[sorted.length - 1] ?? Number.NaN, 2),
          },
        });
      },
    );
    instance.on("response", (_client, _status, _bytes, responseTime) => {
      if (responses < amount) latencies[responses] = responseTime;
      responses++;
    });
    // Bounded: a run that has not finished at twice its planned time (plus a margin) is stopped.
    const guard = setTimeout(() => instance.stop(), options.durationSeconds * 2000 + 30_000);
  });
}

/** Polls /metrics and the receiver until every sink's jobs are delivered or dead-lettered. */
async function drain(gatewayUrl, receiverUrl, timeoutSeconds) {
  const end = performance.now() + timeoutSeconds * 1000;
  while (performance.now() < end) {
    const metrics = await readMetrics(gatewayUrl);
    const received = await getJson(`${receiverUrl}/count`);
    const settled = ["audit", "siem"].every(
      (sink) =>
        counter(metrics, "hookgate_enqueued_total", sink) ===
        counter(metrics, "hookgate_delivered_total", sink) +
          counter(metrics, "hookgate_dead_lettered_total", sink),
    );
    if (settled && received.audit.unique === counter(metrics, "hookgate_delivered_total", "audit"))
      return true;
    await sleep(250);
  }
  return false;
}

/** The queue file after the gateway stopped, through the queue's own adapter: what is left in it. */
async function inspectQueue(dataDir) {
  const { createSqliteQueue } = await import(pathToFileURL(join(ROOT, "dist/adapters/queue/sqlite.js")).href);
  const queue = createSqliteQueue({ path: join(dataDir, "queue.sqlite") });
  try {
    queue.recoverLeases();
    const left = await queue.receive(1_000_000, 60_000);
    const dead = await queue.listDead(1_000_000);
    const deadBySink = {};
    const deadAttempts = {};
    for (const d of dead) {
      deadBySink[d.body.sink] = (deadBySink[d.body.sink] ?? 0) + 1;
      deadAttempts[d.attempts] = (deadAttempts[d.attempts] ?? 0) + 1;
    }
    return { jobsLeft: left.length, deadLetters: dead.length, deadBySink, deadAttempts };
  } finally {
    await queue.close();
  }
}

// ---------------------------------------------------------------------------------------------
// Checks and figures

function checks(r) {
  const failures = [];
  const fail = (what) => failures.push(what);
  const attempts = 1 + SIEM_RETRIES.length;
  if (r.load.answered !== r.load.planned) fail(`${r.load.answered} answers, ${r.load.planned} planned`);
  if (r.load.non2xx !== 0) fail(`${r.load.non2xx} non-2xx answers`);
  if (r.load.errors !== 0) fail(`${r.load.errors} connection errors or timeouts`);
  if (r.load.wrongBodies !== 0) fail(`${r.load.wrongBodies} answers differ from their kind's decision`);
  if (r.decisions !== r.load.sent) fail(`${r.decisions} decisions counted for ${r.load.sent} requests`);
  if (r.requestErrors !== 0) fail(`${r.requestErrors} requests answered with a fail mode`);
  if (r.enqueueFailed !== 0) fail(`${r.enqueueFailed} failed enqueues`);
  for (const [sink, s] of Object.entries(r.sinks)) {
    if (s.enqueued !== s.expectedEnqueued)
      fail(`${sink}: ${s.enqueued} enqueued, ${s.expectedEnqueued} expected`);
    if (s.lost !== 0) fail(`${sink}: ${s.lost} jobs neither delivered nor dead-lettered`);
  }
  if (!r.drain.complete) fail("the queue did not drain in time");
  if (r.sinks.audit.deadLettered !== 0)
    fail(`audit (answers 204): ${r.sinks.audit.deadLettered} dead letters`);
  if (r.sinks.siem.delivered !== 0) fail(`siem (answers 500): ${r.sinks.siem.delivered} delivered`);
  if (r.receiver.audit.duplicates !== 0) fail(`audit: ${r.receiver.audit.duplicates} duplicate webhook-ids`);
  if (r.receiver.audit.badSignatures + r.receiver.siem.badSignatures !== 0)
    fail("bad signatures at the receiver");
  if (r.receiver.audit.unique !== r.sinks.audit.delivered)
    fail(`audit: ${r.receiver.audit.unique} ids received, ${r.sinks.audit.delivered} delivered`);
  if (r.receiver.siem.ids !== r.sinks.siem.deadLettered)
    fail(`siem: ${r.receiver.siem.ids} ids attempted, ${r.sinks.siem.deadLettered} dead-lettered`);
  if (r.receiver.siem.posts !== r.sinks.siem.deadLettered * attempts)
    fail(
      `siem: ${r.receiver.siem.posts} attempts for ${r.sinks.siem.deadLettered} jobs of ${attempts} attempts`,
    );
  if (r.queueFile.jobsLeft !== 0) fail(`${r.queueFile.jobsLeft} jobs left in the queue`);
  if (r.queueFile.deadLetters !== r.deadLettered)
    fail(`${r.queueFile.deadLetters} dead letters in the queue, ${r.deadLettered} counted`);
  if (r.gateway.unexpectedLog.length > 0) fail(`unexpected gateway log lines: ${r.gateway.unexpectedLog[0]}`);
  if (r.gateway.exitCode !== 0)
    fail(`the gateway exited with ${r.gateway.exitCode ?? r.gateway.signal} on SIGTERM`);
  if (r.receiverStderr !== "") fail(`the receiver wrote to stderr: ${r.receiverStderr}`);
  return failures;
}

function startSampler(pid, gateway) {
  const samples = [];
  const marks = {};
  const t0 = performance.now();
  const take = () => {
    const rssKiB = readRssKiB(pid);
    if (rssKiB === undefined) return;
    const heap = gateway.heap();
    samples.push({
      t: round((performance.now() - t0) / 1000, 2),
      rssMiB: round(rssKiB / 1024, 1),
      heapUsedMiB: heap ? round(heap.heapUsed / 2 ** 20, 1) : null,
      heapTotalMiB: heap ? round(heap.heapTotal / 2 ** 20, 1) : null,
    });
  };
  take();
  const timer = setInterval(take, 1000);
  return {
    latest: () => samples.at(-1),
    mark(name) {
      take();
      marks[name] = samples.at(-1).t;
    },
    stop: () => clearInterval(timer),
    /** Memory after warm-up against the end of the load, the least-squares slope between them, and the peak. */
    figures(warmupSeconds) {
      const start = marks.loadStart;
      const end = marks.loadEnd;
      const during = samples.filter((s) => s.t >= start + warmupSeconds && s.t <= end);
      const at = (t) => samples.find((s) => s.t >= t) ?? samples.at(-1);
      const slope = (key) => {
        const points = during.filter((s) => s[key] !== null);
        if (points.length < 2) return null;
        const mt = points.reduce((n, s) => n + s.t, 0) / points.length;
        const mv = points.reduce((n, s) => n + s[key], 0) / points.length;
        const num = points.reduce((n, s) => n + (s.t - mt) * (s[key] - mv), 0);
        const den = points.reduce((n, s) => n + (s.t - mt) ** 2, 0);
        return den === 0 ? null : round((num / den) * 60, 2);
      };
      // V8 grows its heap in steps and gives memory back after a major GC, so besides the slope:
      // RSS over the last half of the measured window, and the heap left after each full 10 s
      // window's collections (its lowest reading), which only a leak makes climb.
      const lastHalf = during.filter((s) => s.t >= (start + warmupSeconds + end) / 2);
      const rss = lastHalf.map((s) => s.rssMiB);
      const floors = [];
      for (let from = start + warmupSeconds; from + 10 <= end; from += 10) {
        const heaps = during.filter((s) => s.t >= from && s.t < from + 10 && s.heapUsedMiB !== null);
        if (heaps.length > 0) floors.push(Math.min(...heaps.map((s) => s.heapUsedMiB)));
      }
      return {
        afterWarmup: at(start + warmupSeconds),
        loadEnd: at(end),
        afterDrain: samples.at(-1),
        peakRssMiB: Math.max(...samples.map((s) => s.rssMiB)),
        rssSlopeMiBPerMinute: slope("rssMiB"),
        heapUsedSlopeMiBPerMinute: slope("heapUsedMiB"),
        rssLastHalfMiB: rss.length > 0 ? { min: Math.min(...rss), max: Math.max(...rss) } : null,
        heapUsedFloorPer10sMiB: floors,
        marks,
        samples,
      };
    },
  };
}

/** A load shorter than 10 s after its warm-up has no whole window to read a floor in. */
function heapFloors(floors) {
  return floors.length > 0 ? `${floors.join(", ")} MiB` : "none: less than 10 s of load after the warm-up";
}

function readRssKiB(pid) {
  try {
    const match = /^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
    return match ? Number(match[1]) : undefined;
  } catch {
    return undefined;
  }
}

function describeCpu(before, after, seconds, pids) {
  const delta = cpuDelta(before, after);
  if (!delta) return null;
  const percent = (ticks) => Math.round((100 * ticks * TICK_MS) / 1000 / seconds);
  return {
    ...Object.fromEntries(
      Object.entries(pids).map(([name, pid]) => [`${name}Percent`, percent(delta.perPid(pid))]),
    ),
    otherProcessesPercent: Math.max(0, percent(delta.otherTicks)),
  };
}

async function readMetrics(url) {
  const res = await fetch(`${url}/metrics`);
  const text = await res.text();
  const series = [];
  for (const line of text.split("\n")) {
    const match = /^(\w+)(?:\{(.*)\})? (\d+(?:\.\d+)?)$/.exec(line);
    if (!match) continue;
    const labels = Object.fromEntries(
      [...(match[2] ?? "").matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((m) => [m[1], m[2]]),
    );
    series.push({ name: match[1], labels, value: Number(match[3]) });
  }
  return series;
}

function counter(series, name, sink) {
  return sumOf(
    series.filter((s) => s.labels.sink === sink),
    name,
  );
}

function sumOf(series, name) {
  return series.filter((s) => s.name === name).reduce((n, s) => n + s.value, 0);
}

function byLabel(series, name, label) {
  const out = {};
  for (const s of series.filter((x) => x.name === name)) {
    const key = s.labels[label] ?? "";
    out[key] = (out[key] ?? 0) + s.value;
  }
  return out;
}

export function markdown(r) {
  const m = r.memory;
  const lines = [
    `## Load: ${r.options.rate} req/s for ${r.options.durationSeconds} s, ${r.date}`,
    "",
    `\`${r.command}\``,
    "",
    "| figure | value |",
    "| --- | ---: |",
    `| requests sent (load + ${r.load.probes} probes) | ${r.load.sent} |`,
    `| achieved rate | ${r.load.achievedRate} req/s over ${r.load.seconds} s |`,
    `| non-2xx answers | ${r.load.non2xx} |`,
    `| connection errors / timeouts | ${r.load.errors} / ${r.load.timeouts} |`,
    `| answers differing from their kind's decision | ${r.load.wrongBodies} |`,
    `| latency p50 / p99 / max | ${r.load.latencyMs.p50} / ${r.load.latencyMs.p99} / ${r.load.latencyMs.max} ms |`,
    `| decisions counted (/metrics) | ${r.decisions} |`,
    `| notify jobs enqueued (audit + siem) | ${r.enqueued} (${r.sinks.audit.enqueued} + ${r.sinks.siem.enqueued}) |`,
    `| delivered (audit) | ${r.sinks.audit.delivered} |`,
    `| dead-lettered (siem, answering ${r.options.down}, ${1 + SIEM_RETRIES.length} attempts each) | ${r.sinks.siem.deadLettered} |`,
    `| retries (siem) | ${r.sinks.siem.retried} |`,
    `| **lost**: not accounted for after the drain (enqueued − delivered − dead-lettered) | **${r.lost}** |`,
    `| receiver: unique ids / duplicates / bad signatures | ${r.receiver.audit.unique} / ${r.receiver.audit.duplicates} / ${r.receiver.audit.badSignatures + r.receiver.siem.badSignatures} |`,
    `| failing sink: attempts / ids | ${r.receiver.siem.posts} / ${r.receiver.siem.ids} |`,
    `| queue file after stop: jobs left / dead letters | ${r.queueFile.jobsLeft} / ${r.queueFile.deadLetters} |`,
    `| drain after the load | ${r.drain.complete ? `${r.drain.seconds} s` : "**did not finish**"} |`,
    `| RSS idle / after ${r.options.warmupSeconds} s warm-up / end of load / after drain | ${m.idle?.rssMiB} / ${m.afterWarmup?.rssMiB} / ${m.loadEnd?.rssMiB} / ${m.afterDrain?.rssMiB} MiB |`,
    `| RSS slope after warm-up (least squares) | ${m.rssSlopeMiBPerMinute} MiB/min |`,
    `| RSS peak; min–max over the last half of the load | ${m.peakRssMiB}; ${m.rssLastHalfMiB?.min}–${m.rssLastHalfMiB?.max} MiB |`,
    `| V8 heap used after warm-up / end of load | ${m.afterWarmup?.heapUsedMiB} / ${m.loadEnd?.heapUsedMiB} MiB (slope ${m.heapUsedSlopeMiBPerMinute} MiB/min) |`,
    `| V8 heap used, lowest in each 10 s after warm-up | ${heapFloors(m.heapUsedFloorPer10sMiB)} |`,
    `| CPU: gateway / receiver / load generator / other processes | ${r.cpu ? `${r.cpu.gatewayPercent} / ${r.cpu.receiverPercent} / ${r.cpu.loaderPercent} / ${r.cpu.otherProcessesPercent} % of a core` : "n/a"} |`,
    `| gateway shutdown on SIGTERM | exit ${r.gateway.exitCode ?? r.gateway.signal} after ${r.gateway.shutdownMs} ms |`,
    "",
    r.failures.length === 0
      ? "All checks passed."
      : `**${r.failures.length} check(s) failed:**\n\n${r.failures.map((f) => `- ${f}`).join("\n")}`,
    "",
  ];
  return lines.join("\n");
}

// ---------------------------------------------------------------------------------------------
// Processes

function firstLine(child, label) {
  return new Promise((resolvePromise, reject) => {
    const timer = setTimeout(() => reject(new Error(`${label} did not start in time`)), START_TIMEOUT_MS);
    createInterface({ input: child.stdout }).once("line", (line) => {
      clearTimeout(timer);
      resolvePromise(line);
    });
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`${label} exited with ${code}`));
    });
  });
}

function collect(stream) {
  let text = "";
  stream.setEncoding("utf8");
  stream.on("data", (chunk) => {
    if (text.length < 10_000) text += chunk;
  });
  return () => text;
}

/** SIGTERM, then SIGKILL after STOP_TIMEOUT_MS; resolves with how the child ended. */
async function stopChild(child, children) {
  if (child.exitCode !== null || child.signalCode !== null) {
    children.delete(child);
    return { code: child.exitCode, signal: child.signalCode, killed: false };
  }
  const exited = new Promise((resolvePromise) =>
    child.once("exit", (code, signal) => resolvePromise({ code, signal })),
  );
  child.kill("SIGTERM");
  let killed = false;
  const timer = setTimeout(() => {
    killed = true;
    child.kill("SIGKILL");
  }, STOP_TIMEOUT_MS);
  const { code, signal } = await exited;
  clearTimeout(timer);
  children.delete(child);
  return { code, signal, killed };
}

async function getJson(url) {
  const res = await fetch(url);
  return res.json();
}

function sleep(ms) {
  return new Promise((resolvePromise) => setTimeout(resolvePromise, ms));
}

function round(n, digits) {
  const f = 10 ** digits;
  return Math.round(n * f) / f;
}

function log(line) {
  process.stderr.write(`${line}\n`);
}

async function main() {
  let options;
  try {
    options = parseOptions(process.argv.slice(2));
  } catch (e) {
    process.stderr.write(`load: ${e.message}\n`);
    return 2;
  }
  for (const signal of ["SIGINT", "SIGTERM"]) process.once(signal, () => process.exit(130));
  const result = await runLoad(options);
  let out = options.out;
  if (out === undefined) out = writeResult("load", result);
  else {
    mkdirSync(dirname(out), { recursive: true });
    writeFileSync(out, `${JSON.stringify(result, null, 2)}\n`);
  }
  process.stdout.write(markdown(result));
  log(`load: figures written to ${out}`);
  return result.failures.length === 0 ? 0 : 1;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main().then(
    (code) => {
      process.exitCode = code;
    },
    (e) => {
      process.stderr.write(`load: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
      process.exitCode = 1;
    },
  );
}

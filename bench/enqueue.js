/**
 * Issue 10's fan-out target: enqueuing to SQLite adds at most 10% to the decision's latency.
 * Two policies identical but for notify rules: bench/policy-200.json with two loopback Standard
 * Webhooks sinks, and the same with two notify rules on the measured event. Both are measured in
 * this run, in alternating order (medians and ratios, no thresholds):
 *
 * (a) in process, against dist/: `handleHook` with the gateway's notifier over the intake
 *     journal (`createNotifier`, `openJournalWriter`) as `serve` wires it, and no delivery
 *     thread, the enqueue awaited after each call, so each call is one decision plus its enqueue
 *     and nothing else;
 * (b) over HTTP: two gateways (`dist/entry/bin.js serve`, each with its own data dir), which
 *     journal the jobs before answering, and whose delivery thread takes them into the SQLite
 *     queue and delivers them, in the same process, to the receivers (bench/webhook-receiver.js).
 *
 *   node bench/enqueue.js [--rounds 5] [--seconds 50] [--warm-in 200] [--requests 300] [--paced 150]
 *                         [--pace-ms 5] [--duration 0.5] [--connections 10] [--batches 15]
 *                         [--batch-ms 50] [--warmup-rounds 1] [--timeout 60] [--quiet-wait 5]
 *
 * Needs `npm run build` first. Loopback only; stops by itself. Writes
 * bench/results/enqueue-<date>T<time>.json and prints a Markdown table.
 */
import { closeSync, openSync, writeSync } from "node:fs";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import http from "node:http";
import { join } from "node:path";
import autocannon from "autocannon";
import {
  cpuDelta,
  cpuTicks,
  createRun,
  getJson,
  HERE,
  log,
  machine,
  median,
  percentile,
  postHook,
  ROOT,
  round1,
  round3,
  roundBudget,
  TICK_MS,
  waitForQuiet,
  writeResult,
} from "./common.js";
import { formatPolicy, MEASURED_ANSWER, measuredRequest } from "./make-policy.js";

const { fail, boundedInt, parseFlags, boundedNumber, spawnChild, tempDir, removeDir, startGateway, stop } =
  createRun("enqueue.js");
const START_TIMEOUT_MS = 15_000;
/** Unmeasured paced requests before each paced measurement. */
const PACED_WARM_IN = 20;

/** What the summary says when the time budget ended the rounds early. */
let roundsCut = "";

const { values: flags } = parseFlags({
  options: {
    rounds: { type: "string", default: "5" },
    seconds: { type: "string", default: "50" },
    requests: { type: "string", default: "300" },
    paced: { type: "string", default: "150" },
    "pace-ms": { type: "string", default: "5" },
    duration: { type: "string", default: "0.5" },
    connections: { type: "string", default: "10" },
    batches: { type: "string", default: "15" },
    "batch-ms": { type: "string", default: "50" },
    "warmup-rounds": { type: "string", default: "1" },
    "warm-in": { type: "string", default: "200" },
    timeout: { type: "string", default: "60" },
    "quiet-wait": { type: "string", default: "5" },
  },
});

const options = {
  rounds: boundedInt("rounds", flags.rounds, 1, 20),
  /** The rounds' time budget, warm-ups included (common.js's roundBudget); 0 is none. */
  seconds: boundedNumber("seconds", flags.seconds, 0, 3600),
  /**
   * Sequential requests per round and gateway (p50, p99 of one decision at a time), after
   * `warmIn` unmeasured ones: a sequential run measured from its first request after the quiet
   * wait was mostly the idle host waking up (the gateway without notify rules measured ~420 µs
   * over 150 requests, ~160–220 µs over 1,000 or after a warm-in), and the notify gateway's
   * delivery thread was not yet busy, which flattered the ratio (1.3× against 2.2× steady).
   */
  requests: boundedInt("requests", flags.requests, 10, 100_000),
  /**
   * Paced requests per round and gateway: one at a time, `paceMs` apart, the rate at which a
   * busy team's agents call (each agent's own events are far further apart). Back to back, the
   * notify gateway's deliveries (about 1 ms of CPU per event) cannot keep up on two cores and
   * share them with the decisions; paced, each event's deliveries are done before the next.
   */
  paced: boundedInt("paced", flags.paced, 10, 100_000),
  paceMs: boundedInt("pace-ms", flags["pace-ms"], 1, 1000),
  /** Seconds of autocannon per round and gateway (throughput under `connections`). */
  durationSeconds: boundedNumber("duration", flags.duration, 0.5, 60),
  connections: boundedInt("connections", flags.connections, 1, 100),
  /** (a): timed batches per policy, alternating, each about `batchMs` long. */
  batches: boundedInt("batches", flags.batches, 1, 50),
  batchMs: boundedInt("batch-ms", flags["batch-ms"], 10, 5000),
  warmupRounds: boundedInt("warmup-rounds", flags["warmup-rounds"], 0, 10),
  /** Unmeasured sequential requests before each sequential measurement (see `requests`). */
  warmIn: boundedInt("warm-in", flags["warm-in"], 0, 100_000),
  /** Longest wait, after a measurement, for the receiver to have every notification. */
  timeoutSeconds: boundedInt("timeout", flags.timeout, 5, 600),
  quietWaitSeconds: boundedInt("quiet-wait", flags["quiet-wait"], 0, 120),
};

const REQUEST = measuredRequest();
/** The Standard Webhooks secret of both sinks, given to the gateways as env:BENCH_WHSEC. */
const WEBHOOK_SECRET = `whsec_${Buffer.from("hookgate-bench-enqueue-secret-32").toString("base64")}`;
/** Sinks per measured event with notify: one job for each goes on the queue. */
const SINKS_PER_EVENT = 2;

/**
 * The two policies: bench/policy-200.json plus the egress rule and sinks both need (the
 * receivers are on loopback); `notify` adds `security` to no-rm-root and a rule that sends every
 * `rm` to `audit`, so the measured event enqueues two jobs. Each sink has a receiver of its own:
 * both jobs carry the event's id as their webhook-id, and a receiver counts distinct ids.
 */
function policies(base, receivers) {
  const shared = {
    ...base,
    egress: { allowCidrs: ["127.0.0.1/32"] },
    sinks: {
      security: { type: "webhook", url: `${receivers.security.url}/in`, secret: "env:BENCH_WHSEC" },
      audit: { type: "webhook", url: `${receivers.audit.url}/in`, secret: "env:BENCH_WHSEC" },
    },
  };
  const rules = [];
  for (const rule of base.rules) {
    if (rule.id !== "no-rm-root") {
      rules.push(rule);
      continue;
    }
    rules.push({ ...rule, notify: ["security"] });
    rules.push({ id: "audit-rm", on: "PreToolUse", matcher: "Bash", if: "Bash(rm *)", notify: ["audit"] });
  }
  return { without: shared, with: { ...shared, rules } };
}

await main();

async function main() {
  const base = JSON.parse(await readFile(join(HERE, "policy-200.json"), "utf8"));
  const receivers = { security: await startReceiver(), audit: await startReceiver() };
  const dir = tempDir("enqueue");
  let error;
  try {
    const docs = policies(base, receivers);
    const env = { BENCH_WHSEC: WEBHOOK_SECRET };
    const inProcess = await measureInProcess(docs, env, dir);
    const gateways = {};
    for (const name of ["without", "with"]) {
      const path = join(dir, `policy-${name}.json`);
      await writeFile(path, formatPolicy(docs[name]));
      gateways[name] = await startGateway(path, env, [], ["--data-dir", join(dir, `data-${name}`)]);
    }
    const targets = [
      { name: "without", title: "policy-200, no notify rule", jobsPerRequest: 0, gateway: gateways.without },
      {
        name: "with",
        title: `same + notify to ${SINKS_PER_EVENT} webhook sinks`,
        jobsPerRequest: SINKS_PER_EVENT,
        gateway: gateways.with,
      },
    ];
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    for (const t of targets) {
      t.pid = t.gateway.child.pid;
      checkAnswer(t, await postHook(t.gateway.url, REQUEST, agent));
    }
    await settle(targets, receivers);

    const pids = [
      process.pid,
      gateways.without.child.pid,
      gateways.with.child.pid,
      receivers.security.child.pid,
      receivers.audit.child.pid,
    ];
    const rounds = [];
    let quietBudget = options.quietWaitSeconds;
    log(
      `enqueue: ${options.warmupRounds} warm-up + up to ${options.rounds} rounds within ${options.seconds} s; per round and gateway ` +
        `${PACED_WARM_IN} + ${options.paced} paced ${options.paceMs} ms apart, ` +
        `${options.warmIn} + ${options.requests} back to back, then ${options.connections} connections for ${options.durationSeconds} s`,
    );
    const budget = roundBudget(options.seconds, 3);
    for (let round = 1 - options.warmupRounds; round <= options.rounds && budget.start(round); round++) {
      const warmup = round < 1;
      for (const t of round % 2 === 0 ? targets : [...targets].reverse()) {
        const waitedForQuietSeconds = warmup ? 0 : await waitForQuiet(pids, quietBudget);
        quietBudget = Math.max(0, quietBudget - waitedForQuietSeconds);
        // Paced first: after the back-to-back requests the deliveries have a backlog to work off.
        const paced = await sequential(t, agent, pids, PACED_WARM_IN, options.paced, options.paceMs);
        const seq = await sequential(t, agent, pids, options.warmIn, options.requests, 0);
        const conc = await concurrent(t, pids);
        // Every job of the measurement is delivered before the next one starts: a backlog would
        // give the other gateway's measurement this one's delivery work.
        const drain = await settle(targets, receivers);
        if (warmup) continue;
        rounds.push({
          round,
          target: t.name,
          sequential: seq,
          paced,
          concurrent: conc,
          drain,
          waitedForQuietSeconds,
        });
        log(
          `round ${round}/${options.rounds} ${t.title.padEnd(34)} seq p50 ${seq.p50Us} µs, p99 ${seq.p99Us} µs, ` +
            `${seq.cpuUsPerRequest ?? "?"} µs CPU/req; paced p50 ${paced.p50Us} µs, p99 ${paced.p99Us} µs; ${options.connections} conn ${conc.requestsPerSecond} req/s, ` +
            `p50 ${conc.p50Ms} ms, p99 ${conc.p99Ms} ms, ${conc.cpuUsPerRequest ?? "?"} µs CPU/req; ` +
            `drained in ${drain.seconds} s; other processes ${seq.otherProcessesCpuPercent ?? "?"}%/` +
            `${conc.otherProcessesCpuPercent ?? "?"}% of a core`,
        );
      }
    }

    roundsCut = budget.settle(options);

    // The comparison is honest only if the notify gateway enqueued (and delivered) a job per sink
    // for every decision and the other none: their own counters, and the receivers' distinct ids.
    const counters = {};
    for (const t of targets) {
      const m = await metrics(t.gateway.url);
      counters[t.name] = m;
      if (m.enqueued !== m.decisions * t.jobsPerRequest || m.enqueueFailed !== 0)
        throw new Error(
          `${t.title}: hookgate_enqueued_total ${m.enqueued} (failed ${m.enqueueFailed}) for ` +
            `${m.decisions} decisions, expected ${m.decisions * t.jobsPerRequest}`,
        );
    }
    if (counters.with.decisions < options.rounds * options.requests)
      throw new Error(`the notify gateway made only ${counters.with.decisions} decisions`);
    const received = { posts: 0, unique: 0 };
    const expectedPerSink = counters.with.decisions;
    for (const [sink, r] of Object.entries(receivers)) {
      const c = await getJson(`${r.url}/count`);
      if (c.unique !== expectedPerSink || c.withoutId !== 0)
        throw new Error(`the ${sink} receiver has ${c.unique} webhook-ids, expected ${expectedPerSink}`);
      received.posts += c.posts;
      received.unique += c.unique;
    }
    for (const t of targets)
      if (t.gateway.warnings() > 0)
        throw new Error(`${t.title}: the gateway logged warnings or errors (above)`);

    agent.destroy();
    await stop(gateways.without.child);
    await stop(gateways.with.child);
    await stop(receivers.security.child);
    await stop(receivers.audit.child);

    const summary = summarize(targets, rounds);
    const result = {
      benchmark: "enqueue",
      date: new Date().toISOString(),
      machine: machine("this client, both gateways and both receivers share these cores"),
      options,
      request: { bytes: Buffer.byteLength(REQUEST.body), command: "rm -rf /", answer: MEASURED_ANSWER },
      policyDifference: {
        "no-rm-root": { notify: ["security"] },
        added: { id: "audit-rm", on: "PreToolUse", matcher: "Bash", if: "Bash(rm *)", notify: ["audit"] },
      },
      inProcess,
      counters,
      receiver: { ...received, duplicates: received.posts - received.unique },
      rounds,
      summary,
    };
    const file = writeResult("enqueue", result);
    process.stdout.write(
      `\n${markdownInProcess(inProcess)}\n\n${markdown(targets, summary, result)}\n\nwritten to ${file}\n`,
    );
  } catch (e) {
    error = e;
  } finally {
    removeDir(dir);
  }
  if (error !== undefined) fail(error instanceof Error ? error.message : String(error));
}

/**
 * (a): the decision with and without its enqueue, in this process. The notifier is the gateway's
 * own over the intake journal in the temporary dir, with no delivery thread; its deferred task (the enqueue)
 * is awaited right after each call, so a call's time is the decision and its enqueue.
 */
async function measureInProcess(docs, env, dir) {
  const dist = (path) => import(join(ROOT, "dist", path));
  const { loadPolicy } = await dist("core/policy.js");
  const { handleHook } = await dist("app/handle-hook.js");
  const { nodeSha256 } = await dist("adapters/hash/node-crypto.js");
  const { createJsonLogger } = await dist("adapters/log/json-lines.js");
  const { createPrometheusRegistry } = await dist("adapters/metrics/prometheus.js");
  const { openJournalWriter } = await dist("adapters/queue/journal.js");
  const { createJournalHold } = await dist("adapters/queue/journal-hold.js");
  const { createSqliteSessionStore } = await dist("adapters/session/sqlite.js");
  const { createNotifier } = await dist("app/notify.js");
  const request = {
    body: { ok: true, text: REQUEST.body },
    contentType: REQUEST.headers["content-type"],
    authorization: REQUEST.headers.authorization,
    dialect: undefined,
  };
  const clock = { now: Date.now, monotonic: () => performance.now() };
  const logger = createJsonLogger({ write() {} });
  const cases = [];
  // "syscall" is the policy without notify rules plus one 1-byte write to /dev/null after each
  // decision: what a system call alone costs here, beside what the journal's `write` costs.
  const devNull = openSync("/dev/null", "w");
  const oneByte = Buffer.alloc(1);
  for (const [name, jobsPerRequest, doc] of [
    ["without", 0, docs.without],
    ["with", SINKS_PER_EVENT, docs.with],
    ["syscall", 0, docs.without],
  ]) {
    const loaded = await loadPolicy(formatPolicy(doc), { env: (k) => env[k], sha256: nodeSha256 });
    if (!loaded.ok) throw new Error(`the ${name} policy does not load: ${JSON.stringify(loaded.error)}`);
    const policy = loaded.value.policy;
    const data = join(dir, `in-process-${name}`);
    await mkdir(data, { recursive: true });
    // As `serve` does: the jobs appended to the intake journal; here no delivery thread takes them.
    // The hold (journal-hold.ts) as `serve` wraps the journal: it appends at once while it holds nothing.
    const journal = openJournalWriter(join(data, "intake"));
    const hold = createJournalHold((messages) => journal.append(messages));
    const queue = {
      async send(messages) {
        if (hold.send(messages) !== undefined) throw new Error("the intake journal could not be written");
      },
      close: () => journal.close(),
    };
    const sessions = createSqliteSessionStore(join(data, "sessions.sqlite"));
    const metrics = createPrometheusRegistry();
    let pending;
    const notifier = createNotifier({
      queue,
      clock,
      logger,
      metrics,
      sessions,
      // As `serve` does: the promise goes back to handleHook, which (since the gateway enqueues
      // before answering on Node) awaits it; awaited again below for a notifier that does not.
      defer: (task) => {
        pending = task();
        return pending;
      },
    });
    let n = 0;
    const deps = {
      policy: () => policy,
      clock,
      newId: () => `bench-${n++}`,
      sha256: nodeSha256,
      logger,
      notifier,
    };
    deps.metrics = metrics;
    const call = async () => {
      pending = undefined;
      const outcome = await handleHook(deps, request);
      if (pending) await pending;
      if (name === "syscall") writeSync(devNull, oneByte);
      return outcome;
    };
    cases.push({
      name,
      jobsPerRequest,
      call,
      metrics,
      queue,
      sessions,
      batchUs: [],
      batchCpuUs: [],
      calls: 0,
    });
  }
  const check = (c, outcome) => {
    if (outcome.answer.body !== MEASURED_ANSWER || outcome.error !== undefined)
      throw new Error(`in process, ${c.name}: the answer is ${outcome.answer.body} (${outcome.error?.code})`);
  };
  // Warm up and size the batches from the warm-up's pace.
  for (const c of cases) {
    const t0 = performance.now();
    let k = 0;
    while (k < 3 || performance.now() - t0 < 300) {
      check(c, await c.call());
      k++;
    }
    c.calls += k;
    c.batch = Math.max(3, Math.round(options.batchMs / ((performance.now() - t0) / k)));
  }
  for (let b = 0; b < options.batches; b++) {
    for (const c of b % 2 === 0 ? cases : [...cases].reverse()) {
      const cpu0 = process.cpuUsage();
      const t0 = performance.now();
      let outcome;
      for (let i = 0; i < c.batch; i++) outcome = await c.call();
      c.batchUs.push(((performance.now() - t0) * 1000) / c.batch);
      const cpu = process.cpuUsage(cpu0);
      c.batchCpuUs.push((cpu.user + cpu.system) / c.batch);
      c.calls += c.batch;
      check(c, outcome);
    }
  }
  const out = {};
  for (const c of cases) {
    const text = c.metrics.render();
    const enqueued = text
      .split("\n")
      .filter((line) => line.startsWith("hookgate_enqueued_total{"))
      .reduce((k, line) => k + Number(line.slice(line.lastIndexOf(" ") + 1)), 0);
    if (enqueued !== c.calls * c.jobsPerRequest)
      throw new Error(`in process, ${c.name}: ${enqueued} jobs enqueued for ${c.calls} decisions`);
    c.queue.close();
    c.sessions.close();
    out[c.name] = {
      jobsPerRequest: c.jobsPerRequest,
      /** process.cpuUsage() (user + system, every thread of this process) per call. */
      cpuUsPerCall: round1(median(c.batchCpuUs)),
      cpuUsPerCallRange: [round1(Math.min(...c.batchCpuUs)), round1(Math.max(...c.batchCpuUs))],
      cpuUsPerCallBatches: c.batchCpuUs.map(round1),
      /** Wall time per call: other load on the machine moves it more than the CPU figure. */
      usPerCall: round1(median(c.batchUs)),
      usPerCallRange: [round1(Math.min(...c.batchUs)), round1(Math.max(...c.batchUs))],
      usPerCallBatches: c.batchUs.map(round1),
      callsPerBatch: c.batch,
      enqueued,
    };
  }
  closeSync(devNull);
  const paired = out.with.cpuUsPerCallBatches.map((us, i) => us / out.without.cpuUsPerCallBatches[i]);
  const pairedSyscall = out.syscall.cpuUsPerCallBatches.map(
    (us, i) => us / out.without.cpuUsPerCallBatches[i],
  );
  out.ratio = {
    /** CPU per call, with over without (medians); `wall` the same in wall time. */
    withOverWithout: round3(out.with.cpuUsPerCall / out.without.cpuUsPerCall),
    wall: round3(out.with.usPerCall / out.without.usPerCall),
    paired: {
      median: round3(median(paired)),
      range: [round3(Math.min(...paired)), round3(Math.max(...paired))],
    },
    enqueueCpuUs: round1(out.with.cpuUsPerCall - out.without.cpuUsPerCall),
    enqueueWallUs: round1(out.with.usPerCall - out.without.usPerCall),
    /** The decision plus one 1-byte write to /dev/null, over the decision alone. */
    syscall: {
      overWithout: round3(out.syscall.cpuUsPerCall / out.without.cpuUsPerCall),
      paired: round3(median(pairedSyscall)),
      cpuUs: round1(out.syscall.cpuUsPerCall - out.without.cpuUsPerCall),
    },
  };
  log(
    `in process: ${out.without.cpuUsPerCall} µs of CPU per decision without notify, ${out.with.cpuUsPerCall} µs ` +
      `with its enqueue (${out.ratio.withOverWithout}×), ${out.syscall.cpuUsPerCall} µs with a 1-byte write to /dev/null ` +
      `(${out.ratio.syscall.overWithout}×)`,
  );
  return out;
}

function markdownInProcess(r) {
  const row = (name, x) =>
    `| ${name} | ${x.jobsPerRequest} | ${x.cpuUsPerCall} (${x.cpuUsPerCallRange.join("–")}) | ${x.usPerCall} | ` +
    `${x.enqueued} |`;
  return [
    `(a) In process: median of ${options.batches} batches of ~${options.batchMs} ms per policy (alternating), ` +
      "each call a decision and, with notify, its enqueue (awaited); CPU of this process (process.cpuUsage) " +
      "and wall time per call:",
    "",
    "| policy | jobs/decision | CPU µs per call (range) | wall µs per call | jobs enqueued |",
    "|---|---:|---:|---:|---:|",
    row("policy-200, no notify rule", r.without),
    row(`same + notify to ${SINKS_PER_EVENT} webhook sinks`, r.with),
    `| **with ÷ without** | | **${r.ratio.withOverWithout.toFixed(2)}×** (paired ${r.ratio.paired.median.toFixed(2)}×, ` +
      `${r.ratio.paired.range.map((n) => n.toFixed(2)).join("–")}); enqueue ≈ ${r.ratio.enqueueCpuUs} µs | ` +
      `${r.ratio.wall.toFixed(2)}× | |`,
    row("policy-200, no notify rule, + a 1-byte write to /dev/null", r.syscall),
    `| **that ÷ without** | | **${r.ratio.syscall.overWithout.toFixed(2)}×** (paired ${r.ratio.syscall.paired.toFixed(2)}×); ` +
      `the system call ≈ ${r.ratio.syscall.cpuUs} µs | | |`,
    "",
    "(b) Over HTTP:",
  ].join("\n");
}

function startReceiver() {
  const child = spawnChild(process.execPath, [join(HERE, "webhook-receiver.js")], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  return new Promise((resolve, reject) => {
    let text = "";
    const timer = setTimeout(() => reject(new Error("the receiver did not start in time")), START_TIMEOUT_MS);
    child.stdout.setEncoding("utf8");
    child.stdout.on("data", (chunk) => {
      text += chunk;
      const newline = text.indexOf("\n");
      if (newline === -1) return;
      clearTimeout(timer);
      resolve({ child, url: JSON.parse(text.slice(0, newline)).url });
    });
    child.once("exit", (code) => reject(new Error(`the receiver exited with ${code}`)));
  }).catch((e) => fail(e.message));
}

/** The gateway's counters that say what it did: decisions, jobs enqueued and failed, delivered. */
async function metrics(url) {
  const text = await new Promise((resolve, reject) => {
    http
      .get(`${url}/metrics`, { agent: false }, (res) => {
        let body = "";
        res.setEncoding("utf8");
        res.on("data", (chunk) => {
          body += chunk;
        });
        res.on("end", () => resolve(body));
      })
      .on("error", reject);
  });
  const sum = (name) =>
    text
      .split("\n")
      .filter((line) => line.startsWith(`${name}{`) || line.startsWith(`${name} `))
      .reduce((n, line) => n + Number(line.slice(line.lastIndexOf(" ") + 1)), 0);
  return {
    decisions: sum("hookgate_decisions_total"),
    enqueued: sum("hookgate_enqueued_total"),
    enqueueFailed: sum("hookgate_enqueue_failed_total"),
    delivered: sum("hookgate_delivered_total"),
  };
}

/**
 * Waits until the receivers have a notification for every decision the notify gateway has made
 * so far (its counter, read until it stops moving: autocannon leaves requests in flight when it
 * stops); returns how long that took.
 */
async function settle(targets, receivers) {
  const started = performance.now();
  const notifying = targets.find((t) => t.jobsPerRequest > 0);
  let expected = (await metrics(notifying.gateway.url)).decisions;
  for (;;) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    const now = (await metrics(notifying.gateway.url)).decisions;
    if (now === expected) break;
    expected = now;
  }
  for (const [sink, r] of Object.entries(receivers)) {
    const counts = await getJson(
      `${r.url}/wait?unique=${expected}&timeoutMs=${options.timeoutSeconds * 1000}`,
    );
    if (counts.unique < expected)
      throw new Error(
        `the ${sink} receiver had ${counts.unique} of ${expected} notifications after ${options.timeoutSeconds} s`,
      );
  }
  return { seconds: round3((performance.now() - started) / 1000), jobs: expected * SINKS_PER_EVENT };
}

function checkAnswer(t, answer) {
  if (answer.status !== 200 || answer.body !== MEASURED_ANSWER || answer.error !== undefined)
    throw new Error(
      `${t.title} answered ${answer.status} (x-hookgate-error ${answer.error}): ${answer.body}`,
    );
}

/**
 * `warmIn` POSTs, then `n` measured ones, one after another on one keep-alive connection, each
 * answer checked, with `pauseMs` after each (none when 0). The CPU is read over the measured ones.
 */
async function sequential(t, agent, pids, warmIn, n, pauseMs) {
  const latencies = new Float64Array(n);
  const pause = () => (pauseMs > 0 ? new Promise((resolve) => setTimeout(resolve, pauseMs)) : undefined);
  for (let i = 0; i < warmIn; i++) {
    checkAnswer(t, await postHook(t.gateway.url, REQUEST, agent));
    await pause();
  }
  const before = cpuTicks(pids);
  const started = performance.now();
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    const answer = await postHook(t.gateway.url, REQUEST, agent);
    latencies[i] = (performance.now() - t0) * 1000;
    checkAnswer(t, answer);
    await pause();
  }
  const seconds = (performance.now() - started) / 1000;
  const ticks = cpuDelta(before, cpuTicks(pids));
  const sorted = latencies.sort();
  return {
    requests: n,
    p50Us: round1(percentile(sorted, 0.5)),
    p99Us: round1(percentile(sorted, 0.99)),
    requestsPerSecond: Math.round(n / seconds),
    cpuUsPerRequest: ticks ? Math.round((ticks.perPid(t.pid) * TICK_MS * 1000) / n) : null,
    otherProcessesCpuPercent: ticks
      ? Math.max(0, Math.round((100 * ticks.otherTicks * TICK_MS) / 1000 / seconds))
      : null,
  };
}

/** decision.js's load shape: autocannon, `connections`, pipelining 1, every body compared. */
async function concurrent(t, pids) {
  let latencies = new Float64Array(1 << 15);
  let count = 0;
  const instance = autocannon({
    url: `${t.gateway.url}/v1/hooks`,
    method: "POST",
    headers: REQUEST.headers,
    body: REQUEST.body,
    expectBody: MEASURED_ANSWER,
    connections: options.connections,
    pipelining: 1,
    duration: options.durationSeconds,
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
  const problems = result.non2xx + result.errors + result.timeouts + result.mismatches;
  if (problems > 0)
    throw new Error(
      `${t.title}: ${result.non2xx} non-2xx, ${result.errors} errors, ${result.timeouts} timeouts, ` +
        `${result.mismatches} body mismatches under load`,
    );
  const sorted = latencies.subarray(0, count).sort();
  return {
    requests: result.requests.total,
    requestsPerSecond: Math.round(result.requests.total / result.duration),
    p50Ms: round3(percentile(sorted, 0.5)),
    p99Ms: round3(percentile(sorted, 0.99)),
    cpuUsPerRequest: ticks
      ? Math.round((ticks.perPid(t.pid) * TICK_MS * 1000) / Math.max(1, result.requests.total))
      : null,
    otherProcessesCpuPercent: ticks
      ? Math.max(0, Math.round((100 * ticks.otherTicks * TICK_MS) / 1000 / result.duration))
      : null,
  };
}

function summarize(targets, rounds) {
  const per = {};
  for (const t of targets) {
    const rs = rounds.filter((r) => r.target === t.name);
    const med = (f) => median(rs.map(f));
    per[t.name] = {
      title: t.title,
      jobsPerRequest: t.jobsPerRequest,
      seqP50Us: round1(med((r) => r.sequential.p50Us)),
      seqP99Us: round1(med((r) => r.sequential.p99Us)),
      seqCpuUsPerRequest: med((r) => r.sequential.cpuUsPerRequest ?? Number.NaN),
      pacedP50Us: round1(med((r) => r.paced.p50Us)),
      pacedP99Us: round1(med((r) => r.paced.p99Us)),
      concRequestsPerSecond: Math.round(med((r) => r.concurrent.requestsPerSecond)),
      concP50Ms: round3(med((r) => r.concurrent.p50Ms)),
      concP99Ms: round3(med((r) => r.concurrent.p99Ms)),
      concCpuUsPerRequest: med((r) => r.concurrent.cpuUsPerRequest ?? Number.NaN),
      drainSeconds: round3(med((r) => r.drain.seconds)),
      otherProcessesCpuPercentMax: Math.max(
        ...rs.flatMap((r) => [
          r.sequential.otherProcessesCpuPercent ?? 0,
          r.concurrent.otherProcessesCpuPercent ?? 0,
        ]),
      ),
    };
  }
  const w = per.with;
  const o = per.without;
  // Paired: each with-notify measurement against the without one of the same round.
  const paired = (f) => {
    const ratios = rounds
      .filter((r) => r.target === "with")
      .map((r) => f(r) / f(rounds.find((x) => x.target === "without" && x.round === r.round)));
    return {
      median: round3(median(ratios)),
      range: [round3(Math.min(...ratios)), round3(Math.max(...ratios))],
    };
  };
  return {
    targets: per,
    withOverWithout: {
      seqP50: round3(w.seqP50Us / o.seqP50Us),
      seqP99: round3(w.seqP99Us / o.seqP99Us),
      seqCpu: round3(w.seqCpuUsPerRequest / o.seqCpuUsPerRequest),
      pacedP50: round3(w.pacedP50Us / o.pacedP50Us),
      pacedP99: round3(w.pacedP99Us / o.pacedP99Us),
      concRequestsPerSecond: round3(w.concRequestsPerSecond / o.concRequestsPerSecond),
      concP50: round3(w.concP50Ms / o.concP50Ms),
      concP99: round3(w.concP99Ms / o.concP99Ms),
      concCpu: round3(w.concCpuUsPerRequest / o.concCpuUsPerRequest),
      pairedSeqP50: paired((r) => r.sequential.p50Us),
      pairedPacedP50: paired((r) => r.paced.p50Us),
      pairedConcRequestsPerSecond: paired((r) => r.concurrent.requestsPerSecond),
    },
  };
}

function markdown(targets, summary, result) {
  const s = summary.withOverWithout;
  const x = (n) => `${n.toFixed(2)}×`;
  const lines = [
    `Medians of ${options.rounds} rounds${roundsCut} (order alternating). Paced: ${options.paced} requests one after another ` +
      `on one keep-alive connection, ${options.paceMs} ms apart, after ${PACED_WARM_IN} unmeasured ones. Sequential: ` +
      `${options.requests} requests the same way back to back, after ${options.warmIn} unmeasured ones. Concurrent: autocannon, ${options.connections} connections, ` +
      `${options.durationSeconds} s. CPU: the gateway's, µs per request (10 ms ticks); with notify it includes the ` +
      "enqueue and the consumer delivering the jobs. Drain: after each measurement, the wait until the receiver " +
      "had every job.",
    "",
    "| gateway | jobs/req | seq p50 µs | seq p99 µs | seq CPU µs/req | paced p50 µs | paced p99 µs | conc req/s | conc p50 ms | conc p99 ms | conc CPU µs/req | drain s | other load (max) |",
    "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
  ];
  for (const t of targets) {
    const p = summary.targets[t.name];
    lines.push(
      `| ${p.title} | ${p.jobsPerRequest} | ${p.seqP50Us} | ${p.seqP99Us} | ${p.seqCpuUsPerRequest} | ` +
        `${p.pacedP50Us} | ${p.pacedP99Us} | ` +
        `${p.concRequestsPerSecond} | ${p.concP50Ms.toFixed(3)} | ${p.concP99Ms.toFixed(3)} | ${p.concCpuUsPerRequest} | ` +
        `${p.drainSeconds} | ${p.otherProcessesCpuPercentMax}% |`,
    );
  }
  lines.push(
    `| **with ÷ without** | | **${x(s.seqP50)}** | **${x(s.seqP99)}** | **${x(s.seqCpu)}** | ` +
      `**${x(s.pacedP50)}** | **${x(s.pacedP99)}** | ` +
      `**${x(s.concRequestsPerSecond)}** | **${x(s.concP50)}** | **${x(s.concP99)}** | **${x(s.concCpu)}** | | |`,
    "",
    `Paired per round: sequential p50 ${x(s.pairedSeqP50.median)} (${s.pairedSeqP50.range.map(x).join("–")}), ` +
      `paced p50 ${x(s.pairedPacedP50.median)} (${s.pairedPacedP50.range.map(x).join("–")}), ` +
      `concurrent req/s ${x(s.pairedConcRequestsPerSecond.median)} ` +
      `(${s.pairedConcRequestsPerSecond.range.map(x).join("–")}). Counters: ` +
      Object.entries(result.counters)
        .map(
          ([name, c]) => `${name} ${c.decisions} decisions, ${c.enqueued} enqueued, ${c.delivered} delivered`,
        )
        .join("; ") +
      `; receivers ${result.receiver.unique} distinct webhook-ids (both sinks), ${result.receiver.duplicates} duplicates.`,
  );
  return lines.join("\n");
}

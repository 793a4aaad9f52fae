/**
 * Issue 5's figure: notify events per second enqueued and delivered end to end, (b) through the
 * gateway's embedded SQLite queue and (c) through the SQS adapter against local-aws-sqs, beside
 * (a) a loop doing only the webhook POSTs to the same receiver, all in this run (medians and
 * ratios, no thresholds).
 *
 *   node bench/fanout.js [--rounds 3] [--seconds 20] [--events 2000] [--sqs-events 1000] [--connections 10]
 *                        [--warmup-rounds 1] [--timeout 120] [--quiet-wait 5]
 *
 * Needs `npm run build` first (it runs dist/entry/bin.js and imports dist/). Loopback only; stops
 * by itself. Writes bench/results/fanout-<date>T<time>.json and prints a Markdown table.
 */
import { randomUUID } from "node:crypto";
import { existsSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import http from "node:http";
import { join } from "node:path";
import { CreateQueueCommand, GetQueueAttributesCommand } from "@aws-sdk/client-sqs";
import { Agent, request } from "undici";
import {
  cpuDelta,
  cpuTicks,
  createRun,
  HERE,
  log,
  machine,
  median,
  ROOT,
  rotate,
  round3,
  roundBudget,
  TICK_MS,
  waitForQuiet,
  writeResult,
} from "./common.js";

const { fail, boundedInt, boundedNumber, parseFlags, spawnChild, tempDir, removeDir, startGateway, stop } =
  createRun("fanout.js");
const START_TIMEOUT_MS = 15_000;

/** What the summary says when the time budget ended the rounds early. */
let roundsCut = "";

const { values: flags } = parseFlags({
  options: {
    rounds: { type: "string", default: "3" },
    seconds: { type: "string", default: "20" },
    events: { type: "string", default: "2000" },
    "sqs-events": { type: "string", default: "1000" },
    connections: { type: "string", default: "10" },
    "warmup-rounds": { type: "string", default: "1" },
    timeout: { type: "string", default: "120" },
    "quiet-wait": { type: "string", default: "5" },
  },
});

const options = {
  rounds: boundedInt("rounds", flags.rounds, 1, 20),
  /** The rounds' time budget, warm-ups included (common.js's roundBudget); 0 is none. */
  seconds: boundedNumber("seconds", flags.seconds, 0, 3600),
  /** Events per round for the baseline and the SQLite gateway. */
  events: boundedInt("events", flags.events, 10, 100_000),
  /** Events per round through SQS (local-aws-sqs is slower; fewer keep the run short). */
  sqsEvents: boundedInt("sqs-events", flags["sqs-events"], 10, 100_000),
  /** Concurrent posting (or sending) loops. */
  connections: boundedInt("connections", flags.connections, 1, 100),
  /** Whole rounds run first and thrown away (JIT, connection pools, SQLite and SQS warm). */
  warmupRounds: boundedInt("warmup-rounds", flags["warmup-rounds"], 0, 10),
  /** Longest wait, per measurement, for the receiver to have every id; past it the run aborts. */
  timeoutSeconds: boundedInt("timeout", flags.timeout, 5, 600),
  quietWaitSeconds: boundedInt("quiet-wait", flags["quiet-wait"], 0, 120),
};

const dist = (path) => import(join(ROOT, "dist", path));
const { parseHookEvent } = await dist("core/events.js");
const { createNotification } = await dist("core/delivery.js");
const { buildSinkRequest } = await dist("core/sinks.js");
const { loadPolicy } = await dist("core/policy.js");
const { compileEgressPolicy } = await dist("core/egress/policy.js");
const { createUndiciEgress } = await dist("adapters/egress/undici.js");
const { createSqsQueue, createSqsClientForLocal } = await dist("adapters/queue/sqs.js");
const { createDeliverer } = await dist("app/deliver.js");
const { startConsumer } = await dist("app/consumer.js");
const { nodeHmacSha256, nodeSha256 } = await dist("adapters/hash/node-crypto.js");

/** The hook event every case notifies about: a Claude Code SessionEnd. */
const EVENT_BODY = JSON.stringify({
  session_id: "s",
  transcript_path: "/t",
  cwd: "/p",
  hook_event_name: "SessionEnd",
  reason: "other",
});
const HOOK_HEADERS = { "content-type": "application/json" };

function policyDocument(receiverUrl) {
  return {
    version: 1,
    egress: { allowCidrs: ["127.0.0.1/32"] },
    rules: [{ id: "n", on: "SessionEnd", notify: ["hook"] }],
    sinks: { hook: { type: "webhook", url: `${receiverUrl}/in` } },
  };
}

/** A child process that prints one JSON line with its url once it listens. */
function startChild(label, args, cwd) {
  const child = spawnChild(process.execPath, args, { stdio: ["ignore", "pipe", "inherit"], cwd });
  return new Promise((resolve, reject) => {
    let text = "";
    const timer = setTimeout(() => reject(new Error(`${label} did not start in time`)), START_TIMEOUT_MS);
    child.stdout.setEncoding("utf8");
    child.stdout.on("data", (chunk) => {
      text += chunk;
      const newline = text.indexOf("\n");
      if (newline === -1) return;
      clearTimeout(timer);
      child.stdout.resume();
      resolve({ child, url: JSON.parse(text.slice(0, newline)).url });
    });
    child.once("exit", (code) => reject(new Error(`${label} exited with ${code}`)));
  }).catch((e) => fail(e.message));
}

function getJson(url) {
  return new Promise((resolve, reject) => {
    http
      .get(url, { agent: false }, (res) => {
        let text = "";
        res.setEncoding("utf8");
        res.on("data", (chunk) => {
          text += chunk;
        });
        res.on("end", () => resolve(JSON.parse(text)));
      })
      .on("error", reject);
  });
}

/**
 * Resolves with the receiver's counts and performance.now() as soon as it has `unique` distinct
 * ids (a long-poll its server answers the moment the last one arrives), or rejects after the timeout.
 */
function whenReceived(receiverUrl, unique) {
  const timeoutMs = options.timeoutSeconds * 1000;
  return getJson(`${receiverUrl}/wait?unique=${unique}&timeoutMs=${timeoutMs}`).then((counts) => {
    const at = performance.now();
    if (counts.unique < unique) {
      throw new Error(
        `the receiver had ${counts.unique} distinct webhook-ids after ${options.timeoutSeconds} s, not ${unique}`,
      );
    }
    return { counts, at };
  });
}

/** `n` calls of `send(i)` spread over C loops, each taking the next index; resolves when all answered. */
async function spread(n, send) {
  let next = 0;
  const loop = async () => {
    while (next < n) await send(next++);
  };
  await Promise.all(Array.from({ length: Math.min(options.connections, n) }, loop));
}

await main();

async function main() {
  if (!existsSync(join(ROOT, "dist", "entry", "bin.js")))
    fail("dist/entry/bin.js is missing: run npm run build first");
  const receiver = await startChild("the webhook receiver", [join(HERE, "webhook-receiver.js")]);
  const sqsServer = await startChild(
    "local-aws-sqs",
    [
      "--input-type=module",
      "-e",
      'import { createSqsServer } from "local-aws-sqs";' +
        'const s = await createSqsServer({ port: 0, hostname: "127.0.0.1" });' +
        'process.stdout.write(JSON.stringify({ url: "http://127.0.0.1:" + s.address().port }) + "\\n");',
    ],
    ROOT,
  );
  const dir = tempDir("fanout");
  const policyText = JSON.stringify(policyDocument(receiver.url), null, 2);
  const policyPath = join(dir, "policy.json");
  await writeFile(policyPath, policyText);
  const gateway = await startGateway(policyPath, {}, [], ["--data-dir", join(dir, "data")]);

  // (c)'s pieces, in this process: the SQS queue, the deliverer behind the egress guard, the consumer.
  const loaded = await loadPolicy(policyText, { env: () => undefined, sha256: nodeSha256 });
  if (!loaded.ok) fail(`the policy does not load: ${JSON.stringify(loaded.error)}`);
  const policy = loaded.value.policy;
  const egressPolicy = compileEgressPolicy({ allowCidrs: ["127.0.0.1/32"] });
  if (egressPolicy.errors.length > 0) fail(`egress policy: ${JSON.stringify(egressPolicy.errors)}`);
  const egress = createUndiciEgress({ policy: () => egressPolicy.policy });
  const sqsClient = createSqsClientForLocal(sqsServer.url);
  const dlq = await sqsClient.send(new CreateQueueCommand({ QueueName: "hookgate-bench-dlq" }));
  const dlqArn = (
    await sqsClient.send(
      new GetQueueAttributesCommand({ QueueUrl: dlq.QueueUrl, AttributeNames: ["QueueArn"] }),
    )
  ).Attributes?.QueueArn;
  const source = await sqsClient.send(
    new CreateQueueCommand({
      QueueName: "hookgate-bench-jobs",
      Attributes: { RedrivePolicy: JSON.stringify({ deadLetterTargetArn: dlqArn, maxReceiveCount: 10 }) },
    }),
  );
  const unreadable = [];
  const queue = createSqsQueue({
    client: sqsClient,
    queueUrl: source.QueueUrl,
    deadLetterQueueUrl: dlq.QueueUrl,
    onUnreadable: (problem) => unreadable.push(problem),
  });
  const consumerLog = { delivered: 0, problems: [] };
  const consumer = startConsumer({
    queue,
    deliverer: createDeliverer({
      policy: () => policy,
      egress: egress.send,
      env: () => undefined,
      clock: { now: Date.now, monotonic: () => performance.now() },
      random: Math.random,
      hmac: nodeHmacSha256,
    }),
    logger: {
      log(level, msg, fields) {
        if (level === "info" && msg === "delivered") consumerLog.delivered++;
        else if (level === "warn" || level === "error") consumerLog.problems.push({ level, msg, fields });
      },
    },
  });

  const parsed = parseHookEvent(JSON.parse(EVENT_BODY));
  if (!parsed.ok) fail(`the SessionEnd event does not parse: ${JSON.stringify(parsed.error)}`);
  const event = parsed.value;
  /** One delivery job, as the gateway's notifier builds it (app/notify.ts). */
  const job = () => {
    const id = `evt_${randomUUID()}`;
    const notification = createNotification(id, Date.now(), event, {
      team: "default",
      decision: "none",
      reason: undefined,
      ruleId: "n",
    });
    return { id: `${id}.hook`, sink: "hook", notification };
  };
  // (a)'s request: what the deliverer sends for one such job, byte for byte but the webhook-id.
  const sample = await buildSinkRequest(
    { type: "webhook", url: `${receiver.url}/in` },
    job().notification,
    Date.now(),
  );
  const WEBHOOK_BODY = sample.body;
  const webhookHeaders = (id) => ({ ...sample.headers, "webhook-id": id });

  const pids = [process.pid, gateway.child.pid, receiver.child.pid, sqsServer.child.pid];
  const label = {
    [process.pid]: "bench",
    [gateway.child.pid]: "gateway",
    [receiver.child.pid]: "receiver",
    [sqsServer.child.pid]: "sqs",
  };

  const directAgent = new Agent({ connections: options.connections });
  const hookAgent = new Agent({ connections: options.connections });
  let expected = 0;
  let hookAnswer;
  const sent = { direct: 0, sqlite: 0, sqs: 0 };

  /** One measurement: `enqueue` puts n events on their way; done once the receiver has them all. */
  async function measure(n, enqueue) {
    const before = (await getJson(`${receiver.url}/count`)).unique;
    if (before !== expected) throw new Error(`the receiver has ${before} ids, expected ${expected}`);
    expected += n;
    const received = whenReceived(receiver.url, expected);
    // The long-poll reaches the receiver before the first event does.
    await new Promise((resolve) => setTimeout(resolve, 20));
    const cpuBefore = cpuTicks(pids);
    const started = performance.now();
    await enqueue(n);
    const enqueued = performance.now();
    const { counts, at } = await received;
    const ticks = cpuDelta(cpuBefore, cpuTicks(pids));
    const enqueueSeconds = (enqueued - started) / 1000;
    const deliverSeconds = (at - started) / 1000;
    return {
      events: n,
      enqueueSeconds: round3(enqueueSeconds),
      deliverSeconds: round3(deliverSeconds),
      enqueuedPerSecond: Math.round(n / enqueueSeconds),
      deliveredPerSecond: Math.round(n / deliverSeconds),
      receiverPosts: counts.posts,
      cpuUsPerEventByProcess: ticks
        ? Object.fromEntries(
            pids.map((pid) => [label[pid], Math.round((ticks.perPid(pid) * TICK_MS * 1000) / n)]),
          )
        : null,
      otherProcessesCpuPercent: ticks
        ? Math.max(0, Math.round((100 * ticks.otherTicks * TICK_MS) / 1000 / deliverSeconds))
        : null,
    };
  }

  const targets = [
    {
      name: "direct",
      title: "(a) POST to the receiver only",
      events: options.events,
      run: (n) =>
        measure(n, (k) =>
          spread(k, async () => {
            sent.direct++;
            const res = await request(`${receiver.url}/in`, {
              method: "POST",
              headers: webhookHeaders(`evt_${randomUUID()}`),
              body: WEBHOOK_BODY,
              dispatcher: directAgent,
            });
            await res.body.text();
            if (res.statusCode !== 204) throw new Error(`the receiver answered ${res.statusCode}`);
          }),
        ),
    },
    {
      name: "sqlite",
      title: "(b) gateway, SQLite queue",
      events: options.events,
      run: (n) =>
        measure(n, (k) =>
          spread(k, async () => {
            sent.sqlite++;
            const res = await request(`${gateway.url}/v1/hooks`, {
              method: "POST",
              headers: HOOK_HEADERS,
              body: EVENT_BODY,
              dispatcher: hookAgent,
            });
            const text = await res.body.text();
            hookAnswer ??= text;
            if (
              res.statusCode !== 200 ||
              res.headers["x-hookgate-error"] !== undefined ||
              text !== hookAnswer
            ) {
              throw new Error(
                `the gateway answered ${res.statusCode} (x-hookgate-error ${res.headers["x-hookgate-error"]}): ${text}`,
              );
            }
          }),
        ),
    },
    {
      name: "sqs",
      title: "(c) SQS adapter + consumer, local-aws-sqs",
      events: options.sqsEvents,
      run: (n) => {
        // Jobs are built before the clock starts: the gateway builds them after answering.
        const jobs = Array.from({ length: n }, job);
        const batches = [];
        for (let i = 0; i < jobs.length; i += 10) batches.push(jobs.slice(i, i + 10));
        return measure(n, () =>
          spread(batches.length, async (i) => {
            sent.sqs += batches[i].length;
            await queue.send(batches[i].map((j) => ({ id: j.id, body: j })));
          }),
        );
      },
    },
  ];

  let error;
  try {
    log(
      `fanout: ${options.warmupRounds} warm-up + up to ${options.rounds} rounds within ${options.seconds} s; per round ` +
        `${options.events} events direct and through SQLite, ${options.sqsEvents} through SQS, ` +
        `${options.connections} concurrent loops`,
    );
    const rounds = [];
    let quietBudget = options.quietWaitSeconds;
    const budget = roundBudget(options.seconds, 2);
    for (let round = 1 - options.warmupRounds; round <= options.rounds && budget.start(round); round++) {
      const warmup = round < 1;
      const waitedForQuietSeconds = warmup ? 0 : await waitForQuiet(pids, quietBudget);
      quietBudget = Math.max(0, quietBudget - waitedForQuietSeconds);
      for (const t of rotate(targets, round - 1)) {
        const m = await t.run(t.events);
        if (consumerLog.problems.length > 0)
          throw new Error(`the SQS consumer logged: ${JSON.stringify(consumerLog.problems.slice(0, 3))}`);
        if (gateway.warnings() > 0)
          throw new Error(`the gateway logged ${gateway.warnings()} warnings or errors (above)`);
        if (warmup) continue;
        rounds.push({ round, target: t.name, ...m, waitedForQuietSeconds });
        log(
          `round ${round}/${options.rounds} ${t.title.padEnd(42)} ${m.events} events: enqueued ${m.enqueuedPerSecond}/s ` +
            `(${m.enqueueSeconds} s), delivered ${m.deliveredPerSecond}/s (${m.deliverSeconds} s), ` +
            `other processes ${m.otherProcessesCpuPercent ?? "?"}% of a core`,
        );
      }
    }

    roundsCut = budget.settle(options);

    // Every event reached the receiver exactly once (webhook-ids distinct; duplicates counted).
    const counts = await getJson(`${receiver.url}/count`);
    if (counts.unique !== expected || counts.withoutId !== 0)
      throw new Error(
        `the receiver has ${counts.unique} ids (${counts.withoutId} without one), expected ${expected}`,
      );
    if (unreadable.length > 0)
      throw new Error(`SQS had unreadable messages: ${JSON.stringify(unreadable[0])}`);
    const deadSqs = await queue.listDead(10);
    await consumer.stop();
    if (consumerLog.delivered !== sent.sqs)
      throw new Error(`the SQS consumer delivered ${consumerLog.delivered} jobs of ${sent.sqs} sent`);

    await directAgent.close();
    await hookAgent.close();
    await egress.close();
    sqsClient.destroy();
    await stop(gateway.child);
    await stop(receiver.child);
    await stop(sqsServer.child);

    const summary = summarize(targets, rounds);
    const result = {
      benchmark: "fanout",
      date: new Date().toISOString(),
      machine: machine(
        "the client loops, the SQS consumer (this process), the gateway, the receiver and local-aws-sqs share these cores",
      ),
      options,
      policy: policyDocument("http://127.0.0.1:RECEIVERPORT"),
      hookRequest: { bytes: Buffer.byteLength(EVENT_BODY), answer: hookAnswer },
      webhookRequest: { bytes: Buffer.byteLength(WEBHOOK_BODY), headers: Object.keys(sample.headers) },
      sent,
      receiver: { ...counts, duplicates: counts.posts - counts.unique },
      sqsDeadLetters: Array.isArray(deadSqs) ? deadSqs.length : null,
      gatewayLogBytes: gateway.logBytes(),
      rounds,
      summary,
    };
    const file = writeResult("fanout", result);
    process.stdout.write(`\n${markdown(targets, summary, result)}\n\nwritten to ${file}\n`);
  } catch (e) {
    error = e;
  } finally {
    removeDir(dir);
  }
  if (error !== undefined) fail(error instanceof Error ? error.message : String(error));
}

function summarize(targets, rounds) {
  const perTarget = {};
  for (const t of targets) {
    const rs = rounds.filter((r) => r.target === t.name);
    const cpu = {};
    for (const p of ["bench", "gateway", "receiver", "sqs"]) {
      cpu[p] = rs.every((r) => r.cpuUsPerEventByProcess)
        ? Math.round(median(rs.map((r) => r.cpuUsPerEventByProcess[p])))
        : null;
    }
    perTarget[t.name] = {
      events: t.events,
      enqueuedPerSecond: Math.round(median(rs.map((r) => r.enqueuedPerSecond))),
      deliveredPerSecond: Math.round(median(rs.map((r) => r.deliveredPerSecond))),
      deliveredPerSecondRange: [
        Math.min(...rs.map((r) => r.deliveredPerSecond)),
        Math.max(...rs.map((r) => r.deliveredPerSecond)),
      ],
      cpuUsPerEventByProcess: cpu,
      otherProcessesCpuPercentMax: Math.max(...rs.map((r) => r.otherProcessesCpuPercent ?? 0)),
    };
  }
  const ratio = (a, b) => Math.round((1000 * a) / b) / 1000;
  const paired = (name) => {
    const ratios = rounds
      .filter((r) => r.target === name)
      .map((r) => {
        const base = rounds.find((x) => x.target === "direct" && x.round === r.round);
        return r.deliveredPerSecond / base.deliveredPerSecond;
      });
    return {
      median: ratio(median(ratios), 1),
      range: [ratio(Math.min(...ratios), 1), ratio(Math.max(...ratios), 1)],
    };
  };
  const base = perTarget.direct.deliveredPerSecond;
  return {
    targets: perTarget,
    deliveredOverBaseline: {
      sqlite: ratio(perTarget.sqlite.deliveredPerSecond, base),
      sqs: ratio(perTarget.sqs.deliveredPerSecond, base),
    },
    enqueuedOverBaseline: {
      sqlite: ratio(perTarget.sqlite.enqueuedPerSecond, base),
      sqs: ratio(perTarget.sqs.enqueuedPerSecond, base),
    },
    pairedDeliveredOverBaseline: { sqlite: paired("sqlite"), sqs: paired("sqs") },
  };
}

function markdown(targets, summary, result) {
  const s = summary;
  const cpu = (c) =>
    ["bench", "gateway", "receiver", "sqs"]
      .filter((p) => c[p] !== null && c[p] > 0)
      .map((p) => `${p} ${c[p]}`)
      .join(", ") || "?";
  const lines = [
    `Medians of ${options.rounds} rounds${roundsCut}, ${options.connections} concurrent loops. Events per round: ` +
      `${options.events} for (a) and (b), ${options.sqsEvents} for (c). Hook event ${result.hookRequest.bytes} bytes; ` +
      `webhook ${result.webhookRequest.bytes} bytes. Delivered/s: events over the time from the first send to ` +
      "the receiver's last new webhook-id. CPU: µs per event by process (/proc, 10 ms ticks).",
    "",
    "| target | events | enqueued/s | delivered/s (range) | delivered vs (a) | CPU µs/event | other load (max) |",
    "|---|---:|---:|---:|---:|---|---:|",
  ];
  for (const t of targets) {
    const x = s.targets[t.name];
    const vs =
      t.name === "direct"
        ? "1.00×"
        : `**${s.deliveredOverBaseline[t.name].toFixed(2)}×** (paired ${s.pairedDeliveredOverBaseline[t.name].median.toFixed(2)}×, ` +
          `${s.pairedDeliveredOverBaseline[t.name].range.map((n) => n.toFixed(2)).join("–")})`;
    lines.push(
      `| ${t.title} | ${x.events} | ${x.enqueuedPerSecond} | ${x.deliveredPerSecond} (${x.deliveredPerSecondRange.join("–")}) | ` +
        `${vs} | ${cpu(x.cpuUsPerEventByProcess)} | ${x.otherProcessesCpuPercentMax}% |`,
    );
  }
  lines.push(
    "",
    `Receiver: ${result.receiver.posts} POSTs, ${result.receiver.unique} distinct webhook-ids, ` +
      `${result.receiver.duplicates} duplicates. For (a) enqueued/s is the POST rate itself.`,
  );
  return lines.join("\n");
}

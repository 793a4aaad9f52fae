/**
 * The Lambda HTTP handler's warm invocation in process: the CPU one decision takes once the
 * container is warm (handler, hono's adapter, the app, the decision, the audit line), beside the
 * minimal Hono Lambda handler coldstart.js measures the cold start against, and optionally beside
 * the same handler built from another checkout (`--against DIR`, built with `npm run build`
 * there), to measure a change to the path alternately with the code before it.
 *
 *   node bench/lambda-warm.js [--rounds 7] [--invocations 5000] [--warmup 3000] [--against DIR]
 *
 * Needs `npm run build` (it imports dist/entry/lambda-http.js). No network: each round runs every
 * target in a fresh `node` child of its own, in a rotating order, which imports the handler,
 * calls it `--warmup` times, then `--invocations` times one after another with the API Gateway
 * HTTP API v2 `rm -rf /` event coldstart.js uses, and reports the CPU (user + system) and the wall
 * time per invocation. The handler's log lines go to /dev/null. Prints medians, their ratios and
 * the paired ratios (each round's own) with their range; writes
 * bench/results/lambda-warm-<date>T<time>.json. Not part of `npm run bench`: no target of issue 10
 * reads it.
 */
import { existsSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import {
  createRun,
  HERE,
  log,
  machine,
  median,
  ROOT,
  rotate,
  round1,
  waitForQuiet,
  writeResult,
} from "./common.js";
import { benchmarkEvent, checkHookgate, checkMinimal, DENY_POLICY } from "./lambda-event.js";

const { fail, boundedInt, parseFlags, spawnChild, tempDir, removeDir } = createRun("lambda-warm.js");

const { values: flags } = parseFlags({
  options: {
    rounds: { type: "string", default: "7" },
    invocations: { type: "string", default: "5000" },
    warmup: { type: "string", default: "3000" },
    against: { type: "string" },
    "quiet-wait": { type: "string", default: "5" },
  },
});
const options = {
  rounds: boundedInt("rounds", flags.rounds, 1, 100),
  invocations: boundedInt("invocations", flags.invocations, 1, 1_000_000),
  warmup: boundedInt("warmup", flags.warmup, 0, 1_000_000),
  against: flags.against === undefined ? undefined : resolve(flags.against),
  quietWaitSeconds: boundedInt("quiet-wait", flags["quiet-wait"], 0, 120),
};

const SAMPLE_TIMEOUT_MS = 120_000;

/**
 * The child: the first call's answer is checked by the parent; the warm-up calls fill the JIT;
 * then the measured calls, awaited one after another as Lambda hands a container its invocations.
 * Each call gets an event of its own, parsed from the JSON text as the runtime parses each
 * invocation's (its parse is counted, for every target alike): one object handed over again and
 * again would be a key the handler's per-event WeakMaps already hold.
 */
const CHILD = `import { readFileSync, writeSync } from "node:fs";
const text = readFileSync(process.env.BENCH_EVENT_FILE, "utf8");
const invocations = Number(process.env.BENCH_INVOCATIONS);
const warmup = Number(process.env.BENCH_WARMUP);
const context = {
  callbackWaitsForEmptyEventLoop: true,
  functionName: "hookgate-bench",
  functionVersion: "$LATEST",
  invokedFunctionArn: "arn:aws:lambda:us-east-1:123456789012:function:hookgate-bench",
  memoryLimitInMB: "1024",
  awsRequestId: "5f0f2d6a-8a57-4c35-9b7e-0c2d5b1c7e11",
  logGroupName: "/aws/lambda/hookgate-bench",
  logStreamName: "2026/11/29/[$LATEST]0123456789abcdef",
  getRemainingTimeInMillis: () => 29000,
};
const { handler } = await import(process.env.BENCH_MODULE_URL);
const first = await handler(JSON.parse(text), context);
for (let i = 0; i < warmup; i++) await handler(JSON.parse(text), context);
const cpu0 = process.cpuUsage();
const t0 = performance.now();
for (let i = 0; i < invocations; i++) await handler(JSON.parse(text), context);
const wallMs = performance.now() - t0;
const cpu = process.cpuUsage(cpu0);
writeSync(3, JSON.stringify({
  first,
  cpuUs: (cpu.user + cpu.system) / invocations,
  wallUs: (1000 * wallMs) / invocations,
}));
process.exit(0);
`;

await main();

async function main() {
  const targets = { hookgate: { module: handlerFile(ROOT), check: checkHookgate } };
  if (options.against) targets.against = { module: handlerFile(options.against), check: checkHookgate };
  targets.minimal = { module: join(HERE, "minimal-hono-lambda.mjs"), check: checkMinimal };
  const tmp = tempDir("lambda-warm");
  try {
    await run(tmp, targets);
  } finally {
    removeDir(tmp);
  }
}

function handlerFile(root) {
  const file = join(root, "dist", "entry", "lambda-http.js");
  if (!existsSync(file)) fail(`${file} is missing: run \`npm run build\` in ${root}`);
  return file;
}

async function run(tmp, targets) {
  const eventFile = join(tmp, "event.json");
  await writeFile(eventFile, JSON.stringify(benchmarkEvent()));
  const childFile = join(tmp, "child.mjs");
  await writeFile(childFile, CHILD);
  const names = Object.keys(targets);
  const quietSeconds = await waitForQuiet([process.pid], options.quietWaitSeconds);
  log(
    `lambda-warm: ${options.rounds} round(s) of ${names.join(", ")}, ${options.invocations} warm invocations each after ${options.warmup}`,
  );
  const rounds = [];
  for (let i = 0; i < options.rounds; i++) {
    const order = rotate(names, i);
    const round = { index: i, order };
    for (const name of order) round[name] = await sample(childFile, eventFile, name, targets[name]);
    rounds.push(round);
    log(`lambda-warm: round ${i + 1}: ${names.map((n) => `${n} ${round[n].cpuUs} µs`).join(", ")}`);
  }
  const summary = summarize(rounds, names);
  const result = {
    benchmark: "lambda-warm",
    date: new Date().toISOString(),
    machine: machine(),
    options: { ...options, quietWaitTookSeconds: quietSeconds },
    targets: Object.fromEntries(names.map((n) => [n, targets[n].module])),
    event: { fixture: "test/fixtures/lambda/http-api-v2-pre-tool-use.json", command: "rm -rf /" },
    policy: DENY_POLICY,
    rounds,
    summary,
  };
  const file = writeResult("lambda-warm", result);
  process.stdout.write(`\n${markdown(summary, names)}\n\nwritten to ${file}\n`);
}

/** One target's round: a fresh node child, its warm invocations measured inside it. */
function sample(childFile, eventFile, name, target) {
  const env = {
    ...process.env,
    BENCH_EVENT_FILE: eventFile,
    BENCH_MODULE_URL: pathToFileURL(target.module).href,
    BENCH_INVOCATIONS: String(options.invocations),
    BENCH_WARMUP: String(options.warmup),
    HOOKGATE_POLICY: JSON.stringify(DENY_POLICY),
  };
  for (const k of ["HOOKGATE_QUEUE_URL", "HOOKGATE_DLQ_URL", "HOOKGATE_RECORD", "NODE_OPTIONS"])
    delete env[k];
  return new Promise((resolvePromise) => {
    const child = spawnChild(process.execPath, [childFile], {
      env,
      stdio: ["ignore", "ignore", "pipe", "pipe"],
    });
    let stderr = "";
    let report = "";
    child.stderr.setEncoding("utf8").on("data", (t) => {
      stderr += t;
    });
    child.stdio[3].setEncoding("utf8").on("data", (t) => {
      report += t;
    });
    const timer = setTimeout(() => child.kill("SIGKILL"), SAMPLE_TIMEOUT_MS);
    child.once("close", (code, signal) => {
      clearTimeout(timer);
      if (code !== 0) fail(`${name} exited with ${code ?? signal}:\n${stderr}`);
      const measured = JSON.parse(report);
      const wrong = target.check(measured.first);
      if (wrong) fail(`${name}: ${wrong}`);
      resolvePromise({ cpuUs: round1(measured.cpuUs), wallUs: round1(measured.wallUs) });
    });
  });
}

/** Medians per target and key; each target's ratio to the next one listed, by medians and paired. */
function summarize(rounds, names) {
  const out = {};
  for (const key of ["cpuUs", "wallUs"]) {
    const medians = Object.fromEntries(names.map((n) => [n, round1(median(rounds.map((r) => r[n][key])))]));
    const ratios = {};
    for (const [a, b] of names.flatMap((a, i) => names.slice(i + 1).map((b) => [a, b]))) {
      const paired = rounds.map((r) => r[a][key] / r[b][key]);
      ratios[`${a}/${b}`] = {
        ratio: ratio(medians[a] / medians[b]),
        paired: {
          median: ratio(median(paired)),
          min: ratio(Math.min(...paired)),
          max: ratio(Math.max(...paired)),
        },
      };
    }
    out[key] = { medians, ratios };
  }
  return out;
}

function ratio(n) {
  return Math.round(1000 * n) / 1000;
}

function markdown(summary, names) {
  const lines = [
    `| per warm invocation | ${names.join(" | ")} |`,
    `| --- | ${names.map(() => "---").join(" | ")} |`,
    `| CPU (median µs) | ${names.map((n) => summary.cpuUs.medians[n]).join(" | ")} |`,
    `| wall (median µs) | ${names.map((n) => summary.wallUs.medians[n]).join(" | ")} |`,
    "",
    "| ratio | CPU, medians | CPU, paired (range) | wall, medians | wall, paired (range) |",
    "| --- | --- | --- | --- | --- |",
  ];
  for (const [pair, cpu] of Object.entries(summary.cpuUs.ratios)) {
    const wall = summary.wallUs.ratios[pair];
    const show = (r) => `${r.paired.median}× (${r.paired.min}–${r.paired.max})`;
    lines.push(`| ${pair} | ${cpu.ratio}× | ${show(cpu)} | ${wall.ratio}× | ${show(wall)} |`);
  }
  return lines.join("\n");
}

/**
 * Issue 6 and 10's figures: the Worker bundle size (raw and gzip, main module and total upload), the Lambda bundle size, and the
 * Lambda HTTP handler's cold start on this machine (module import plus a first decision that
 * needs no outbound call) beside a minimal Hono Lambda handler bundled the same way, in one run
 * (medians and ratios, no thresholds).
 *
 *   node bench/coldstart.js [--samples 15] [--warmup 1] [--quiet-wait 5]
 *
 * Builds both bundles itself into a temporary directory (scripts/build-worker.mjs,
 * scripts/build-lambda.mjs; the repository's dist-worker/ and dist-lambda/ are not touched) and
 * needs no `npm run build`. No network: every sample is a fresh `node` child process that
 * imports a bundle and calls its handler once with an API Gateway HTTP API v2 event. Writes
 * bench/results/coldstart-<date>T<time>.json and prints Markdown tables.
 */
import { readFileSync } from "node:fs";
import { readdir, readFile, writeFile } from "node:fs/promises";
import { dirname, join, relative, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { gzipSync } from "node:zlib";
import { createRun, HERE, log, machine, median, ROOT, round3, waitForQuiet, writeResult } from "./common.js";
import { benchmarkEvent, checkHookgate, checkMinimal, DENY_POLICY, LAMBDA_FIXTURE } from "./lambda-event.js";

const { fail, boundedInt, parseFlags, spawnChild, tempDir, removeDir } = createRun("coldstart.js");

const { values: flags } = parseFlags({
  options: {
    samples: { type: "string", default: "15" },
    warmup: { type: "string", default: "1" },
    "quiet-wait": { type: "string", default: "5" },
  },
});
const options = {
  /** Cold starts per target, alternated hookgate / minimal / minimal / hookgate ... */
  samples: boundedInt("samples", flags.samples, 1, 200),
  /** Pairs of cold starts thrown away first (they fill the page cache with node and the bundles). */
  warmup: boundedInt("warmup", flags.warmup, 0, 20),
  quietWaitSeconds: boundedInt("quiet-wait", flags["quiet-wait"], 0, 120),
};

/** Issue 10's Worker target for the main module (build-worker.mjs fails the build above it). */
const WORKER_GZIP_TARGET = 64 * 1024;
const SAMPLE_TIMEOUT_MS = 15_000;
const BUILD_TIMEOUT_MS = 120_000;
/** Set for every build child: nothing here runs wrangler, but nothing may phone home if it did. */
const QUIET_ENV = {
  WRANGLER_SEND_METRICS: "false",
  WRANGLER_SEND_ERROR_REPORTS: "false",
  CLOUDFLARE_CF_FETCH_ENABLED: "false",
};
const MINIMAL_ENTRY = join(HERE, "minimal-hono-lambda.mjs");

/**
 * The child: everything before `t0` (node start, this script, the event read from disk) is left
 * out; `import()` of the bundle and the handler's first call are timed with performance.now().
 * Every TCP or IPC client socket the process creates is counted through the `net.client.socket`
 * diagnostics channel (net/http/tls are loaded anyway, by the global Request both handlers
 * build, so their loading proves nothing). The handler's stdout (its JSON log lines) is piped to
 * the parent and dropped; the measurement goes out on fd 3.
 */
const CHILD = `import dc from "node:diagnostics_channel";
import { readFileSync, writeSync } from "node:fs";
let sockets = 0;
dc.subscribe("net.client.socket", () => {
  sockets++;
});
const event = JSON.parse(readFileSync(process.env.BENCH_EVENT_FILE, "utf8"));
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
const t0 = performance.now();
const mod = await import(process.env.BENCH_MODULE_URL);
const t1 = performance.now();
const result = await mod.handler(event, context);
const t2 = performance.now();
writeSync(3, JSON.stringify({ importMs: t1 - t0, firstCallMs: t2 - t1, result, sockets }));
process.exit(0);
`;

await main();

async function main() {
  const tmp = tempDir("coldstart");
  try {
    await run(tmp);
  } finally {
    removeDir(tmp);
  }
}

async function run(tmp) {
  log("coldstart: building the Worker and Lambda bundles and the minimal Hono handler");
  const worker = await workerSize(join(tmp, "worker"));
  const lambda = await lambdaSize(join(tmp, "lambda"));
  const minimal = await buildMinimal(join(tmp, "minimal"));

  const event = benchmarkEvent();
  const eventFile = join(tmp, "event.json");
  await writeFile(eventFile, JSON.stringify(event));
  const childFile = join(tmp, "child.mjs");
  await writeFile(childFile, CHILD);
  const targets = {
    hookgate: { module: lambda.handlerFile, check: checkHookgate },
    minimal: { module: minimal.file, check: checkMinimal },
  };

  const quietSeconds = await waitForQuiet([process.pid], options.quietWaitSeconds);
  log(
    `coldstart: ${options.warmup} warm-up pair(s), then ${options.samples} cold starts per target, alternated`,
  );
  const sample = (name) => coldStart(childFile, eventFile, name, targets[name]);
  for (let i = 0; i < options.warmup; i++) {
    await sample("hookgate");
    await sample("minimal");
  }
  const samples = [];
  for (let i = 0; i < options.samples; i++) {
    const order = i % 2 === 0 ? ["hookgate", "minimal"] : ["minimal", "hookgate"];
    const pair = {};
    for (const name of order) pair[name] = await sample(name);
    samples.push({ index: i, first: order[0], hookgate: pair.hookgate, minimal: pair.minimal });
  }

  const summary = summarize(samples);
  const result = {
    benchmark: "coldstart",
    date: new Date().toISOString(),
    machine: machine(),
    options: { ...options, quietWaitTookSeconds: quietSeconds },
    sizes: {
      worker: { ...worker, gzipTarget: WORKER_GZIP_TARGET },
      lambda: lambda.sizes,
      minimal: minimal.size,
    },
    coldStart: {
      includes:
        "import() of the bundle (resolve, read, parse, evaluate its static imports) and the handler's first call with an HTTP API v2 event: hookgate loads and compiles the policy from HOOKGATE_POLICY, decides, writes its log lines to a pipe",
      excludes:
        "node process start and the child script's own start (timed inside the child), the Lambda runtime's init (runtime interface client, fetching the event), the network",
      event: {
        fixture: relative(ROOT, LAMBDA_FIXTURE),
        command: "rm -rf /",
        bodyBytes: Buffer.byteLength(event.body),
      },
      policy: DENY_POLICY,
      expected: { hookgate: "200, permissionDecision deny by no-rm-root", minimal: '200, {"ok":true}' },
    },
    samples,
    summary,
  };
  const file = writeResult("coldstart", result);
  process.stdout.write(`\n${markdown(result)}\n\nwritten to ${file}\n`);
}

/** `node <script> [args]` with the quiet env, its stdout collected; a non-zero exit aborts the run. */
function runScript(script, args) {
  return runNode(script, [join(ROOT, script), ...args]);
}

/** `node <argv>` (`label` in a failure) with the quiet env, its stdout collected; a non-zero exit aborts the run. */
function runNode(label, argv) {
  const env = { ...process.env, ...QUIET_ENV };
  delete env.HOOKGATE_POLICY_FILE; // a baked-in policy would change the bundle measured
  return new Promise((resolvePromise) => {
    const child = spawnChild(process.execPath, argv, {
      cwd: ROOT,
      env,
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (t) => {
      stdout += t;
    });
    child.stderr.setEncoding("utf8").on("data", (t) => {
      stderr += t;
    });
    const timer = setTimeout(() => child.kill("SIGKILL"), BUILD_TIMEOUT_MS);
    child.once("exit", (code, signal) => {
      clearTimeout(timer);
      if (code !== 0) fail(`${label} exited with ${code ?? signal}:\n${stderr}${stdout}`);
      resolvePromise(stdout);
    });
  });
}

/**
 * The Worker as wrangler uploads it: `main` is worker.js with the chunks it imports statically
 * (what every cold start evaluates), `total` every module, the chunks loaded with import() on
 * first use included (build-worker.mjs).
 */
async function workerSize(outdir) {
  const out = await runScript("scripts/build-worker.mjs", ["--outdir", outdir, "--json"]);
  const summary = JSON.parse(out.trim().split("\n").at(-1));
  if (summary.problems.length > 0) fail(`build-worker refused the bundle: ${summary.problems.join("; ")}`);
  const meta = JSON.parse(await readFile(join(outdir, "meta.json"), "utf8"));
  const mainFiles = new Set(summary.main.files.map((f) => relative(ROOT, join(outdir, f))));
  const inputs = {};
  for (const [file, output] of Object.entries(meta.outputs))
    if (mainFiles.has(file))
      for (const [input, { bytesInOutput }] of Object.entries(output.inputs))
        inputs[input] = (inputs[input] ?? 0) + bytesInOutput;
  const largestInputs = Object.entries(inputs)
    .sort(([, a], [, b]) => b - a)
    .slice(0, 5)
    .map(([input, bytes]) => ({ input, bytes }));
  return {
    main: { raw: summary.main.raw, gzip: summary.main.gzip, files: summary.main.files.length },
    total: { raw: summary.total.raw, gzip: summary.total.gzip, files: summary.total.files.length },
    gzipLevel: 9,
    note: "main: worker.js and the chunks it imports statically (every cold start evaluates them); total: every module uploaded, the chunks loaded on first use included (regex and glob engines, egress, remote actions, deliverer); gzip summed per module",
    largestInputsOfMain: largestInputs,
  };
}

/**
 * build-lambda.mjs prints KiB with one decimal and writes no metafile, so the exact bytes are
 * counted here from the output files (the same gzip, zlib's default level) and checked against
 * what the script printed: a disagreement means this count is wrong, and aborts.
 */
async function lambdaSize(outdir) {
  const out = await runScript("scripts/build-lambda.mjs", ["--outdir", outdir]);
  const kibPair = (re) => {
    const m = out.match(re);
    if (!m) fail(`unexpected build-lambda output:\n${out}`);
    return { raw: Number(m[1]), gzip: Number(m[2]) };
  };
  const printed = {
    httpColdStart: kibPair(/lambda-http\.mjs: cold start ([\d.]+) KiB \(([\d.]+) KiB gzip\)/),
    allFiles: kibPair(/all files, lazy chunks included: ([\d.]+) KiB \(([\d.]+) KiB gzip\)/),
  };
  const files = (await readdir(outdir, { recursive: true })).filter((f) => f.endsWith(".mjs"));
  const handlerFile = join(outdir, "lambda-http.mjs");
  const staticClosure = closure(handlerFile, false);
  const reachable = closure(handlerFile, true);
  const sizes = {
    httpColdStart: { ...sumSizes([...staticClosure]), files: staticClosure.size },
    httpWithLazyChunks: { ...sumSizes([...reachable]), files: reachable.size },
    allFiles: { ...sumSizes(files.map((f) => join(outdir, f))), files: files.length },
    gzipLevel: 6,
    printedKiB: printed,
    note: "httpColdStart: lambda-http.mjs and the chunks it imports statically; httpWithLazyChunks: plus every chunk it can import() on first use (undici, the AWS SDK); allFiles: as build-lambda prints it, lambda-sqs.mjs included",
  };
  for (const [key, kib] of Object.entries(printed)) {
    for (const unit of ["raw", "gzip"])
      if (Math.abs(sizes[key][unit] / 1024 - kib[unit]) > 0.051)
        fail(
          `lambda ${key} ${unit}: counted ${sizes[key][unit]} bytes, build-lambda printed ${kib[unit]} KiB`,
        );
  }
  return { handlerFile, sizes };
}

/** Output files reached from `file` by static imports (and `import()` when `lazy`). */
function closure(file, lazy) {
  const seen = new Set();
  const visit = (f) => {
    if (seen.has(f)) return;
    seen.add(f);
    const text = readFileSync(f, "utf8");
    const patterns = [/(?:\bfrom|\bimport)\s*"(\.{1,2}\/[^"]+)"/g];
    if (lazy) patterns.push(/\bimport\(\s*"(\.{1,2}\/[^"]+)"\s*\)/g);
    for (const re of patterns) for (const m of text.matchAll(re)) visit(resolve(dirname(f), m[1]));
  };
  visit(file);
  return seen;
}

function sumSizes(paths) {
  let raw = 0;
  let gzip = 0;
  for (const p of paths) {
    const bytes = readFileSync(p);
    raw += bytes.length;
    gzip += gzipSync(bytes).length;
  }
  return { raw, gzip };
}

/**
 * bench/minimal-hono-lambda.mjs, bundled with build-lambda.mjs's esbuild options (one entry, so no
 * splitting). esbuild runs in a child of its own, as the two build scripts do: called here, its
 * service process would share this process's group, die of a Ctrl-C to it, and fail the build
 * (exit 1) before this process's SIGINT handler ran (exit 130).
 */
async function buildMinimal(outdir) {
  const file = join(outdir, "minimal-hono-lambda.mjs");
  const options = {
    absWorkingDir: ROOT,
    entryPoints: [MINIMAL_ENTRY],
    outfile: file,
    bundle: true,
    format: "esm",
    platform: "node",
    target: "node22",
    mainFields: ["module", "main"],
    banner: {
      js: 'import { createRequire as __hookgateCreateRequire } from "node:module"; const require = __hookgateCreateRequire(import.meta.url);',
    },
    minify: true,
    keepNames: true,
    legalComments: "none",
    logLevel: "warning",
  };
  await runNode(`esbuild on ${relative(ROOT, MINIMAL_ENTRY)}`, [
    "--input-type=module",
    "--eval",
    'import { build } from "esbuild"; await build(JSON.parse(process.argv[1]));',
    JSON.stringify(options),
  ]);
  return { file, size: { file: "minimal-hono-lambda.mjs", ...sumSizes([file]), gzipLevel: 6 } };
}

/** One cold start: a fresh node child that imports the bundle and calls its handler once. */
function coldStart(childFile, eventFile, name, target) {
  const env = {
    ...process.env,
    BENCH_EVENT_FILE: eventFile,
    BENCH_MODULE_URL: pathToFileURL(target.module).href,
  };
  for (const k of ["HOOKGATE_QUEUE_URL", "HOOKGATE_DLQ_URL", "HOOKGATE_RECORD", "NODE_OPTIONS"])
    delete env[k];
  env.HOOKGATE_POLICY = JSON.stringify(DENY_POLICY);
  return new Promise((resolvePromise) => {
    const child = spawnChild(process.execPath, [childFile], {
      env,
      stdio: ["ignore", "pipe", "pipe", "pipe"],
    });
    let logBytes = 0;
    let stderr = "";
    let report = "";
    child.stdout.on("data", (chunk) => {
      logBytes += chunk.length;
    });
    child.stderr.setEncoding("utf8").on("data", (t) => {
      stderr += t;
    });
    child.stdio[3].setEncoding("utf8").on("data", (t) => {
      report += t;
    });
    const timer = setTimeout(() => child.kill("SIGKILL"), SAMPLE_TIMEOUT_MS);
    child.once("close", (code, signal) => {
      clearTimeout(timer);
      if (code !== 0) fail(`${name} cold start exited with ${code ?? signal}:\n${stderr}`);
      const measured = JSON.parse(report);
      const wrong = target.check(measured.result);
      if (wrong) fail(`${name}: ${wrong}`);
      if (measured.sockets !== 0)
        fail(`${name} opened ${measured.sockets} client socket(s): an outbound call ran`);
      resolvePromise({
        importMs: round3(measured.importMs),
        firstCallMs: round3(measured.firstCallMs),
        totalMs: round3(measured.importMs + measured.firstCallMs),
        logBytes,
      });
    });
  });
}

function summarize(samples) {
  const med = (name, key) => round3(median(samples.map((s) => s[name][key])));
  const out = {};
  for (const key of ["importMs", "firstCallMs", "totalMs"]) {
    const hookgate = med("hookgate", key);
    const minimal = med("minimal", key);
    const paired = samples.map((s) => s.hookgate[key] / s.minimal[key]);
    out[key] = {
      hookgate,
      minimal,
      ratio: Math.round((100 * hookgate) / minimal) / 100,
      differenceMs: round3(hookgate - minimal),
      pairedRatio: {
        median: Math.round(100 * median(paired)) / 100,
        min: Math.round(100 * Math.min(...paired)) / 100,
        max: Math.round(100 * Math.max(...paired)) / 100,
      },
    };
  }
  return out;
}

function markdown(result) {
  const kib = (n) => `${(n / 1024).toFixed(1)} KiB`;
  const { worker, lambda, minimal } = result.sizes;
  const sizeRows = [
    [`Worker main module, ${worker.main.files} file(s) (gzip level 9)`, worker.main.raw, worker.main.gzip],
    [
      `Worker total upload, ${worker.total.files} modules (gzip level 9)`,
      worker.total.raw,
      worker.total.gzip,
    ],
    ["Lambda `lambda-http`, loaded at cold start", lambda.httpColdStart.raw, lambda.httpColdStart.gzip],
    [
      "Lambda `lambda-http`, lazy chunks included",
      lambda.httpWithLazyChunks.raw,
      lambda.httpWithLazyChunks.gzip,
    ],
    ["Lambda, all files (`lambda-sqs` too)", lambda.allFiles.raw, lambda.allFiles.gzip],
    ["minimal Hono Lambda handler", minimal.raw, minimal.gzip],
  ];
  const lines = [
    "| bundle | raw | gzip |",
    "| --- | ---: | ---: |",
    ...sizeRows.map(
      ([label, raw, gzip]) => `| ${label} | ${kib(raw)} (${raw} B) | ${kib(gzip)} (${gzip} B) |`,
    ),
    `| _issue 10's Worker target (main module; build-worker.mjs enforces it)_ |  | _${kib(worker.gzipTarget)}_ |`,
    "",
    `Cold start, medians of ${result.options.samples} fresh \`node\` processes per target (ms):`,
    "",
    "| target | import ms | first call ms | total ms |",
    "| --- | ---: | ---: | ---: |",
  ];
  const s = result.summary;
  const row = (label, name) =>
    `| ${label} | ${s.importMs[name].toFixed(2)} | ${s.firstCallMs[name].toFixed(2)} | ${s.totalMs[name].toFixed(2)} |`;
  lines.push(row("hookgate `lambda-http` (deny)", "hookgate"));
  lines.push(row("minimal Hono handler", "minimal"));
  const ratio = (k) => `**${s[k].ratio.toFixed(2)}×**`;
  lines.push(
    `| **hookgate / minimal** | ${ratio("importMs")} | ${ratio("firstCallMs")} | ${ratio("totalMs")} |`,
  );
  const paired = (k) =>
    `${s[k].pairedRatio.median.toFixed(2)}× (${s[k].pairedRatio.min}–${s[k].pairedRatio.max})`;
  lines.push(
    `| paired ratio, median (range) | ${paired("importMs")} | ${paired("firstCallMs")} | ${paired("totalMs")} |`,
  );
  return lines.join("\n");
}

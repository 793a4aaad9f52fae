/**
 * Issue 4's figure: what the gateway adds to a hook call when a rule needs a remote answer, (a) a
 * prompt verdict served from the cache and (b) a forward to the team's hook server, beside
 * calling that hook server directly and beside the gateway's own floor (a PreToolUse that
 * matches no rule), all in this run (medians and differences, no thresholds).
 *
 *   node bench/remote.js [--rounds 4] [--seconds 20] [--requests 400] [--connections 10] [--duration 0.5]
 *                        [--warmup-rounds 1] [--quiet-wait 5] [--cpu-prof]
 *
 * Needs `npm run build` first (it runs dist/entry/bin.js). Loopback only; stops by itself.
 * Writes bench/results/remote-<date>T<time>.json and prints a Markdown table.
 */
import { existsSync } from "node:fs";
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { Agent, request } from "undici";
import {
  concurrent,
  createRun,
  log,
  machine,
  median,
  RESULTS,
  ROOT,
  rotate,
  round1,
  roundBudget,
  sequential,
  signed,
  stubCount,
  waitForQuiet,
  writeResult,
} from "./common.js";

const { fail, boundedInt, parseFlags, boundedNumber, tempDir, removeDir, startStub, startGateway, stop } =
  createRun("remote.js");

/** What the summary says when the time budget ended the rounds early. */
let roundsCut = "";

const { values: flags } = parseFlags({
  options: {
    rounds: { type: "string", default: "4" },
    seconds: { type: "string", default: "20" },
    requests: { type: "string", default: "400" },
    connections: { type: "string", default: "10" },
    duration: { type: "string", default: "0.5" },
    "warmup-rounds": { type: "string", default: "1" },
    "quiet-wait": { type: "string", default: "5" },
    "cpu-prof": { type: "boolean", default: false },
  },
});

const options = {
  rounds: boundedInt("rounds", flags.rounds, 1, 50),
  /** The rounds' time budget, warm-ups included (common.js's roundBudget); 0 is none. */
  seconds: boundedNumber("seconds", flags.seconds, 0, 3600),
  /** Sequential requests per case and round, on one keep-alive connection. */
  requests: boundedInt("requests", flags.requests, 10, 100_000),
  /** Concurrent loops (one keep-alive connection each) for the throughput run. */
  connections: boundedInt("connections", flags.connections, 1, 100),
  durationSeconds: boundedNumber("duration", flags.duration, 0.1, 60),
  /** Whole rounds run first and thrown away (JIT, connection pools). */
  warmupRounds: boundedInt("warmup-rounds", flags["warmup-rounds"], 0, 10),
  /** Total time the run may spend waiting for other processes to go quiet before a round. */
  quietWaitSeconds: boundedInt("quiet-wait", flags["quiet-wait"], 0, 120),
  cpuProfile: flags["cpu-prof"] === true,
};

/** What Claude Code 2.1.332 sends (test/fixtures/.../PreToolUse.headers.json), without a token: the policy has no auth. */
const HEADERS = {
  accept: "application/json, text/plain, */*",
  "content-type": "application/json",
  "user-agent": "axios/1.15.2",
  "accept-encoding": "gzip, compress, deflate, br",
};

/** Claude Code 2.1.332's PreToolUse body (test/fixtures/claude-code/2.1.332/) for another tool. */
function preToolUse(toolName, toolInput) {
  return JSON.stringify({
    session_id: "1911b193-68cb-487c-97dc-b165bef0f45d",
    transcript_path: "/home/dev/.claude/projects/-home-dev-proj/1911b193-68cb-487c-97dc-b165bef0f45d.jsonl",
    cwd: "/home/dev/proj",
    prompt_id: "ba9ad2d0-c720-429f-8e30-dbae7d7042e1",
    permission_mode: "default",
    effort: { level: "medium" },
    hook_event_name: "PreToolUse",
    tool_name: toolName,
    tool_input: toolInput,
    tool_use_id: "toolu_01ABCDEF",
  });
}

const MCP_BODY = preToolUse("mcp__github__create_issue", {
  owner: "acme",
  repo: "api",
  title: "Flaky test",
  body: "The retry test fails one run in ten.",
});
const WRITE_BODY = preToolUse("Write", { file_path: "/home/dev/proj/notes.md", content: "# Notes\n" });
const READ_BODY = preToolUse("Read", { file_path: "/home/dev/proj/README.md" });

const HOOK_REASON = "team says no";
const HOOK_ANSWER = JSON.stringify({
  hookSpecificOutput: {
    hookEventName: "PreToolUse",
    permissionDecision: "deny",
    permissionDecisionReason: HOOK_REASON,
  },
});
const MODEL_REASON = "no";
const MODEL_ANSWER = JSON.stringify({
  content: [{ type: "tool_use", id: "t", name: "verdict", input: { ok: false, reason: MODEL_REASON } }],
  stop_reason: "tool_use",
});

function policyDocument(hookUrl, modelUrl) {
  return {
    version: 1,
    egress: { allowedHttpHookUrls: ["http://127.0.0.1:*/*"], allowCidrs: ["127.0.0.1/32"] },
    rules: [
      {
        id: "judge",
        on: "PreToolUse",
        matcher: "Write",
        prompt: { text: "ok? $ARGUMENTS", model: "m", onError: "deny" },
      },
      {
        id: "relay",
        on: "PreToolUse",
        matcher: "mcp__.*",
        forward: { url: `${hookUrl}/hook`, onError: "deny" },
      },
    ],
    models: {
      m: {
        provider: "anthropic",
        model: "claude-haiku-4-5",
        apiKey: "env:BENCH_KEY",
        url: `${modelUrl}/v1/messages`,
        // Longer than any run, so a long run's later calls are still cache hits (the default is 600 s).
        cacheTtlSeconds: 86_400,
      },
    },
  };
}

await main();

async function main() {
  if (!existsSync(join(ROOT, "dist", "entry", "bin.js")))
    fail("dist/entry/bin.js is missing: run npm run build first");
  const model = await startStub("model", MODEL_ANSWER);
  const hook = await startStub("hook", HOOK_ANSWER);
  const dir = tempDir("remote");
  const policyPath = join(dir, "policy.json");
  await writeFile(policyPath, JSON.stringify(policyDocument(hook.url, model.url), null, 2));
  const profileDir = join(RESULTS, "profiles");
  if (options.cpuProfile) await mkdir(profileDir, { recursive: true });
  const gateway = await startGateway(
    policyPath,
    { BENCH_KEY: "bench-key-not-a-secret" },
    options.cpuProfile ? ["--cpu-prof", "--cpu-prof-dir", profileDir] : [],
  );
  const pids = [process.pid, gateway.child.pid, hook.child.pid, model.child.pid];
  const label = { [gateway.child.pid]: "gateway", [hook.child.pid]: "hook", [model.child.pid]: "model" };

  const agents = [];
  const sent = { direct: 0, forward: 0, cached: 0, floor: 0 };
  const caseOf = (name, title, url, body, check) => {
    const agent = new Agent();
    agents.push(agent);
    return {
      name,
      title,
      url,
      body,
      send: async () => {
        sent[name]++;
        const res = await request(url, { method: "POST", headers: HEADERS, body, dispatcher: agent });
        const text = await res.body.text();
        check(res.statusCode, res.headers, text);
      },
    };
  };
  const gatewayAnswer = (what, expectBody) => (status, headers, text) => {
    if (status !== 200 || headers["x-hookgate-error"] !== undefined || text !== expectBody()) {
      throw new Error(
        `${what}: the gateway answered ${status} (x-hookgate-error ${headers["x-hookgate-error"]}): ${text}`,
      );
    }
  };
  // The first gateway answer of each kind is read and checked field by field; every later one
  // must then be byte for byte the same.
  const expected = { forward: undefined, cached: undefined };
  const cases = [
    caseOf("direct", "(i) hook server, direct", `${hook.url}/hook`, MCP_BODY, (status, _headers, text) => {
      if (status !== 200 || text !== HOOK_ANSWER)
        throw new Error(`the hook server answered ${status}: ${text}`);
    }),
    caseOf(
      "forward",
      "(ii) gateway, forward rule",
      `${gateway.url}/v1/hooks`,
      MCP_BODY,
      gatewayAnswer("forward", () => expected.forward),
    ),
    caseOf(
      "cached",
      "(iii) gateway, cached prompt verdict",
      `${gateway.url}/v1/hooks`,
      WRITE_BODY,
      gatewayAnswer("cached prompt", () => expected.cached),
    ),
    caseOf(
      "floor",
      "(iv) gateway, no rule matches",
      `${gateway.url}/v1/hooks`,
      READ_BODY,
      gatewayAnswer("floor", () => ""),
    ),
  ];
  const byName = Object.fromEntries(cases.map((c) => [c.name, c]));

  let error;
  try {
    expected.forward = await firstDeny(
      byName.forward,
      (reason) => reason === HOOK_REASON,
      "the hook server's reason",
      sent,
    );
    const modelCallsBefore = (await stubCount(model.url)).posts;
    expected.cached = await firstDeny(
      byName.cached,
      // `[<prompt>]: <the model's reason>`; an onError deny would name the failure instead.
      (reason) => reason.endsWith(`: ${MODEL_REASON}`) && !reason.includes("could not be evaluated"),
      `the model's reason "${MODEL_REASON}"`,
      sent,
    );
    const modelCalls = (await stubCount(model.url)).posts - modelCallsBefore;
    if (modelCalls !== 1) throw new Error(`the first Write call made ${modelCalls} model calls, not 1`);
    for (const c of cases) await c.send();

    log(
      `remote: ${options.warmupRounds} warm-up + up to ${options.rounds} rounds within ${options.seconds} s; per case ${options.requests} ` +
        `sequential requests, then ${options.connections} connections for ${options.durationSeconds}s`,
    );

    const rounds = [];
    let quietBudget = options.quietWaitSeconds;
    const budget = roundBudget(options.seconds, 2);
    for (let round = 1 - options.warmupRounds; round <= options.rounds && budget.start(round); round++) {
      const warmup = round < 1;
      const waitedForQuietSeconds = warmup ? 0 : await waitForQuiet(pids, quietBudget);
      quietBudget = Math.max(0, quietBudget - waitedForQuietSeconds);
      // Each round starts with another case, so none always runs first, right after a pause, or last.
      for (const mode of ["sequential", "concurrent"]) {
        for (const c of rotate(cases, round - 1)) {
          const m =
            mode === "sequential"
              ? await sequential(c.send, options.requests, pids)
              : await concurrent(c.send, options.connections, options.durationSeconds, pids);
          if (warmup) continue;
          const byProcess = m.serverCpuUsPerRequestByPid
            ? Object.fromEntries(
                Object.entries(m.serverCpuUsPerRequestByPid).map(([pid, us]) => [label[pid], us]),
              )
            : null;
          delete m.serverCpuUsPerRequestByPid;
          rounds.push({
            round,
            case: c.name,
            mode,
            ...m,
            serverCpuUsPerRequestByProcess: byProcess,
            waitedForQuietSeconds,
          });
          log(
            `round ${round}/${options.rounds} ${mode.padEnd(10)} ${c.title.padEnd(36)} ${m.requestsPerSecond} req/s, ` +
              `p50 ${m.p50Us} us, p99 ${m.p99Us} us, servers CPU ${m.serverCpuUsPerRequest ?? "?"} us/req, ` +
              `other processes ${m.otherProcessesCpuPercent ?? "?"}% of a core`,
          );
        }
      }
    }

    roundsCut = budget.settle(options);

    // Every forward reached the hook server once, and no cached call reached the model.
    const counts = { hook: await stubCount(hook.url), model: await stubCount(model.url) };
    if (counts.model.posts !== 1)
      throw new Error(`the model server was called ${counts.model.posts} times, not once`);
    if (counts.hook.posts !== sent.direct + sent.forward) {
      throw new Error(
        `the hook server answered ${counts.hook.posts} POSTs for ${sent.direct} direct calls and ${sent.forward} forwards`,
      );
    }
    if (gateway.warnings() > 0)
      throw new Error(`the gateway logged ${gateway.warnings()} warnings or errors (above)`);

    for (const agent of agents) await agent.close();
    await stop(gateway.child);
    await stop(hook.child);
    await stop(model.child);

    const summary = summarize(cases, rounds);
    const result = {
      benchmark: "remote",
      date: new Date().toISOString(),
      machine: machine("the client (this process), the gateway and both stub servers share these cores"),
      options: { ...options, headers: Object.keys(HEADERS) },
      policy: policyDocument("http://127.0.0.1:HOOKPORT", "http://127.0.0.1:MODELPORT"),
      requests: Object.fromEntries(
        cases.map((c) => [c.name, { url: c.url.replace(/:\d+/, ":PORT"), bytes: Buffer.byteLength(c.body) }]),
      ),
      answers: { forward: expected.forward, cached: expected.cached, floor: "", direct: HOOK_ANSWER },
      sent,
      stubCounts: counts,
      gatewayLogBytes: gateway.logBytes(),
      rounds,
      summary,
    };
    const file = writeResult("remote", result);
    process.stdout.write(`\n${markdown(cases, summary)}\n\nwritten to ${file}\n`);
    if (options.cpuProfile) process.stdout.write(`gateway CPU profile in ${profileDir}\n`);
  } catch (e) {
    error = e;
  } finally {
    removeDir(dir);
  }
  // After the temporary policy is removed: fail() exits at once.
  if (error !== undefined) fail(error instanceof Error ? error.message : String(error));
}

/** One call, read field by field: a deny whose reason passes `reasonOk`. Returns the answer's bytes. */
async function firstDeny(c, reasonOk, what, sent) {
  sent[c.name]++;
  const res = await request(c.url, { method: "POST", headers: HEADERS, body: c.body });
  const text = await res.body.text();
  let output;
  try {
    output = JSON.parse(text).hookSpecificOutput;
  } catch {
    output = undefined;
  }
  const reason = output?.permissionDecisionReason;
  if (
    res.statusCode !== 200 ||
    res.headers["x-hookgate-error"] !== undefined ||
    output?.permissionDecision !== "deny" ||
    typeof reason !== "string" ||
    !reasonOk(reason)
  ) {
    throw new Error(`${c.title}: expected a deny with ${what}, got ${res.statusCode}: ${text}`);
  }
  return text;
}

function summarize(cases, rounds) {
  const medianOf = (rs, key) =>
    rs.every((r) => r[key] !== null) ? round1(median(rs.map((r) => r[key]))) : null;
  const perCase = {};
  for (const c of cases) {
    const out = {};
    for (const mode of ["sequential", "concurrent"]) {
      const rs = rounds.filter((r) => r.case === c.name && r.mode === mode);
      out[mode] = {
        requestsPerSecond: Math.round(median(rs.map((r) => r.requestsPerSecond))),
        p50Us: medianOf(rs, "p50Us"),
        p99Us: medianOf(rs, "p99Us"),
        serverCpuUsPerRequest: medianOf(rs, "serverCpuUsPerRequest"),
        gatewayCpuUsPerRequest: rs.every((r) => r.serverCpuUsPerRequestByProcess)
          ? round1(median(rs.map((r) => r.serverCpuUsPerRequestByProcess.gateway)))
          : null,
        otherProcessesCpuPercentMax: Math.max(...rs.map((r) => r.otherProcessesCpuPercent ?? 0)),
      };
    }
    perCase[c.name] = out;
  }
  // Added latency from the medians, and paired: each round's case against the same round's baseline.
  const added = (name, base) => {
    const out = {};
    for (const mode of ["sequential", "concurrent"]) {
      const a = perCase[name][mode];
      const b = perCase[base][mode];
      const pairs = rounds
        .filter((r) => r.case === name && r.mode === mode)
        .map((r) => [r, rounds.find((x) => x.case === base && x.mode === mode && x.round === r.round)]);
      const p50Diffs = pairs.map(([r, x]) => r.p50Us - x.p50Us);
      out[mode] = {
        p50Us: round1(a.p50Us - b.p50Us),
        p99Us: round1(a.p99Us - b.p99Us),
        throughputRatio: Math.round((1000 * a.requestsPerSecond) / b.requestsPerSecond) / 1000,
        serverCpuUsPerRequest:
          a.serverCpuUsPerRequest !== null && b.serverCpuUsPerRequest !== null
            ? round1(a.serverCpuUsPerRequest - b.serverCpuUsPerRequest)
            : null,
        pairedP50Us: {
          median: round1(median(p50Diffs)),
          range: [round1(Math.min(...p50Diffs)), round1(Math.max(...p50Diffs))],
        },
      };
    }
    return out;
  };
  return {
    cases: perCase,
    added: {
      forwardOverDirect: added("forward", "direct"),
      cachedOverDirect: added("cached", "direct"),
      forwardOverFloor: added("forward", "floor"),
      cachedOverFloor: added("cached", "floor"),
      floorOverDirect: added("floor", "direct"),
    },
  };
}

function markdown(cases, summary) {
  const lines = [
    `Medians of ${options.rounds} rounds${roundsCut}. Sequential: ${options.requests} requests one after another on one keep-alive ` +
      `connection. Concurrent: ${options.connections} keep-alive connections for ${options.durationSeconds} s. ` +
      "µs per request; servers CPU is every server process's CPU per request (/proc), the gateway's share in brackets.",
    "",
    "| case | seq p50 µs | seq p99 µs | seq servers CPU µs/req | conc req/s | conc p50 µs | conc p99 µs | conc servers CPU µs/req | other load (max) |",
    "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
  ];
  const cpu = (c, m) =>
    m.serverCpuUsPerRequest === null
      ? "?"
      : c.name === "direct"
        ? String(m.serverCpuUsPerRequest)
        : `${m.serverCpuUsPerRequest} (${m.gatewayCpuUsPerRequest})`;
  for (const c of cases) {
    const s = summary.cases[c.name].sequential;
    const k = summary.cases[c.name].concurrent;
    lines.push(
      `| ${c.title} | ${s.p50Us} | ${s.p99Us} | ${cpu(c, s)} | ${k.requestsPerSecond} | ${k.p50Us} | ${k.p99Us} | ${cpu(c, k)} | ` +
        `${Math.max(s.otherProcessesCpuPercentMax, k.otherProcessesCpuPercentMax)}% |`,
    );
  }
  const row = (title, a) =>
    `| **${title}** | **${signed(a.sequential.p50Us)}** | **${signed(a.sequential.p99Us)}** | ` +
    `${a.sequential.serverCpuUsPerRequest === null ? "?" : signed(a.sequential.serverCpuUsPerRequest)} | ` +
    `**${a.concurrent.throughputRatio.toFixed(2)}×** | **${signed(a.concurrent.p50Us)}** | **${signed(a.concurrent.p99Us)}** | ` +
    `${a.concurrent.serverCpuUsPerRequest === null ? "?" : signed(a.concurrent.serverCpuUsPerRequest)} | |`;
  const a = summary.added;
  lines.push(
    row("(ii) forward over (i) direct", a.forwardOverDirect),
    row("(iii) cached prompt over (i) direct", a.cachedOverDirect),
    row("(ii) forward over (iv) floor", a.forwardOverFloor),
    row("(iii) cached prompt over (iv) floor", a.cachedOverFloor),
    row("(iv) floor over (i) direct", a.floorOverDirect),
    "",
    "Paired per-round sequential p50 differences, median (range): " +
      [
        ["forward − direct", a.forwardOverDirect],
        ["cached − direct", a.cachedOverDirect],
        ["forward − floor", a.forwardOverFloor],
        ["cached − floor", a.cachedOverFloor],
      ]
        .map(
          ([t, x]) =>
            `${t} ${signed(x.sequential.pairedP50Us.median)} µs (${x.sequential.pairedP50Us.range.map((n) => signed(n)).join(" to ")})`,
        )
        .join("; ") +
      ". Other load: CPU taken by processes outside the benchmark, in % of one core, worst measurement.",
  );
  return lines.join("\n");
}

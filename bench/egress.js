/**
 * The cost of the SSRF guard per outbound request (issue 3): `createUndiciEgress(...).send`
 * beside a plain undici `request` to the same loopback server, which the policy allows, both
 * measured in this run (medians and ratios, no thresholds).
 *
 *   node bench/egress.js [--rounds 5] [--seconds 25] [--requests 300] [--connections 10] [--duration 0.3]
 *                        [--warmup-rounds 1] [--quiet-wait 5] [--cpu-prof]
 *
 * Needs `npm run build` first (it imports dist/). Loopback only; stops by itself.
 * Writes bench/results/egress-<date>T<time>.json and prints a Markdown table.
 */
import { mkdir, writeFile } from "node:fs/promises";
import { Session } from "node:inspector/promises";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
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
  round3,
  roundBudget,
  sequential,
  signed,
  stubCount,
  waitForQuiet,
  writeResult,
} from "./common.js";

const { fail, boundedInt, parseFlags, boundedNumber, startStub, stop } = createRun("egress.js");

/** What the summary says when the time budget ended the rounds early. */
let roundsCut = "";

const { values: flags } = parseFlags({
  options: {
    rounds: { type: "string", default: "5" },
    seconds: { type: "string", default: "25" },
    requests: { type: "string", default: "300" },
    connections: { type: "string", default: "10" },
    duration: { type: "string", default: "0.3" },
    "warmup-rounds": { type: "string", default: "1" },
    "quiet-wait": { type: "string", default: "5" },
    "cpu-prof": { type: "boolean", default: false },
  },
});

const options = {
  rounds: boundedInt("rounds", flags.rounds, 1, 50),
  /** The rounds' time budget, warm-ups included (common.js's roundBudget); 0 is none. */
  seconds: boundedNumber("seconds", flags.seconds, 0, 3600),
  /** Sequential requests per client, case and round. */
  requests: boundedInt("requests", flags.requests, 10, 100_000),
  /** Concurrent loops (one connection each while keep-alive) for the throughput run. */
  connections: boundedInt("connections", flags.connections, 1, 100),
  durationSeconds: boundedNumber("duration", flags.duration, 0.1, 60),
  /** Whole rounds run first and thrown away (JIT, connection pools). */
  warmupRounds: boundedInt("warmup-rounds", flags["warmup-rounds"], 0, 10),
  /** Total time the run may spend waiting for other processes to go quiet before a round. */
  quietWaitSeconds: boundedInt("quiet-wait", flags["quiet-wait"], 0, 120),
  cpuProfile: flags["cpu-prof"] === true,
};

/** What the gateway forwards: Claude Code 2.1.332's PreToolUse body shape, ~450 bytes. */
const REQUEST_BODY = JSON.stringify({
  session_id: "1911b193-68cb-487c-97dc-b165bef0f45d",
  transcript_path: "/home/dev/.claude/projects/-home-dev-proj/1911b193-68cb-487c-97dc-b165bef0f45d.jsonl",
  cwd: "/home/dev/proj",
  permission_mode: "default",
  hook_event_name: "PreToolUse",
  tool_name: "mcp__github__create_issue",
  tool_input: {
    owner: "acme",
    repo: "api",
    title: "Flaky test",
    body: "The retry test fails one run in ten.",
  },
  tool_use_id: "toolu_01ABCDEF",
});
/** A team hook server's answer, 123 bytes. */
const ANSWER = JSON.stringify({
  hookSpecificOutput: {
    hookEventName: "PreToolUse",
    permissionDecision: "deny",
    permissionDecisionReason: "team says no",
  },
});
/** The headers hookgate's forward sends. */
const HEADERS = { "content-type": "application/json", "user-agent": "hookgate" };
const NAME = "hooks.bench";
const TIMEOUT_MS = 5000;

await main();

async function main() {
  const { createUndiciEgress } = await importDist("adapters/egress/undici.js");
  const { compileEgressPolicy } = await importDist("core/egress/policy.js");

  const server = await startStub("loopback hook", ANSWER);
  const port = new URL(server.url).port;
  const pids = [process.pid, server.child.pid];

  // The benchmark's policy, plus the name the second case resolves: the allowlist matches hosts
  // exactly, so without it hooks.bench would be refused (EGRESS_NOT_ALLOWLISTED) before DNS.
  const egressSection = {
    allowedHttpHookUrls: ["http://127.0.0.1:*/*", `http://${NAME}:*/*`],
    allowCidrs: ["127.0.0.1/32"],
  };
  const compiled = compileEgressPolicy(egressSection);
  if (compiled.errors.length > 0)
    fail(`the egress policy does not compile: ${JSON.stringify(compiled.errors)}`);

  // One fixed answer for the name, through the same function on both sides, so both pay the
  // same "DNS"; the counter proves each side looked it up when (and only when) it connected.
  const lookups = { guarded: 0, unguarded: 0 };
  const fixedAnswer = [{ address: "127.0.0.1", family: 4 }];
  const resolver = (side) => async (hostname) => {
    if (hostname !== NAME)
      throw Object.assign(new Error(`unexpected name ${hostname}`), { code: "ENOTFOUND" });
    lookups[side]++;
    return fixedAnswer;
  };
  const refusals = [];
  const unguardedResolve = resolver("unguarded");
  const lookup = (hostname, lookupOptions, callback) => {
    unguardedResolve(hostname).then(
      (answers) =>
        lookupOptions.all ? callback(null, answers) : callback(null, answers[0].address, answers[0].family),
      (e) => callback(e, "", 4),
    );
  };

  // Each case has its own guarded egress and its own Agent: a connection pooled by one case
  // (the concurrent runs leave ten idle) must never carry another case's requests.
  const cases = [];
  const closers = [];
  for (const connection of ["keep-alive", "new"]) {
    for (const address of ["literal", "name"]) {
      const url = `http://${address === "literal" ? "127.0.0.1" : NAME}:${port}/hook`;
      // A new connection per request: the stub server closes each one it answers (the guard
      // drops a client's own hop-by-hop `connection: close`).
      const headers = connection === "new" ? { ...HEADERS, "x-bench-close": "1" } : HEADERS;
      const egress = createUndiciEgress({
        policy: () => compiled.policy,
        resolve: resolver("guarded"),
        onRefusal: (refusal) => refusals.push(refusal),
      });
      const agent = address === "literal" ? new Agent() : new Agent({ connect: { lookup } });
      closers.push(
        () => egress.close(),
        () => agent.close(),
      );
      cases.push({
        name: `${address} ${connection === "new" ? "new connection" : "keep-alive"}`,
        address,
        connection,
        url,
        clients: {
          guarded: async () => {
            const r = await egress.send({
              url,
              method: "POST",
              headers,
              body: REQUEST_BODY,
              timeoutMs: TIMEOUT_MS,
            });
            if (!r.ok) throw new Error(`the guard refused ${url}: ${r.error.code}: ${r.error.reason}`);
            if (r.value.status !== 200 || r.value.body !== ANSWER)
              throw new Error(`guarded ${url} answered ${r.value.status}: ${r.value.body}`);
          },
          unguarded: async () => {
            const res = await request(url, {
              method: "POST",
              headers,
              body: REQUEST_BODY,
              dispatcher: agent,
            });
            const text = await res.body.text();
            if (res.statusCode !== 200 || text !== ANSWER)
              throw new Error(`unguarded ${url} answered ${res.statusCode}: ${text}`);
          },
        },
      });
    }
  }

  log(
    `egress: ${options.warmupRounds} warm-up + up to ${options.rounds} rounds within ${options.seconds} s; per client and case ` +
      `${options.requests} sequential requests, then ${options.connections} loops for ${options.durationSeconds}s`,
  );
  try {
    // Every case once through each client: a wrong answer aborts before anything is measured.
    for (const c of cases) for (const send of Object.values(c.clients)) await send();

    const rounds = [];
    let quietBudget = options.quietWaitSeconds;
    const budget = roundBudget(options.seconds, 3);
    for (let round = 1 - options.warmupRounds; round <= options.rounds && budget.start(round); round++) {
      const warmup = round < 1;
      const waitedForQuietSeconds = warmup ? 0 : await waitForQuiet(pids, quietBudget);
      quietBudget = Math.max(0, quietBudget - waitedForQuietSeconds);
      // Each round starts with another case; guarded goes first in odd rounds, unguarded in
      // even ones: no case and no client always runs first, right after a pause, or last.
      const order = round % 2 === 1 ? ["guarded", "unguarded"] : ["unguarded", "guarded"];
      for (const c of rotate(cases, round - 1)) {
        for (const mode of ["sequential", "concurrent"]) {
          for (const client of order) {
            const m = await measureChecked(c, client, mode, server, lookups, pids);
            if (warmup) continue;
            rounds.push({ round, case: c.name, client, mode, ...m, waitedForQuietSeconds });
            log(
              `round ${round}/${options.rounds} ${c.name.padEnd(22)} ${mode.padEnd(10)} ${client.padEnd(9)} ` +
                `${m.requestsPerSecond} req/s, p50 ${m.p50Us} us, p99 ${m.p99Us} us, ` +
                `client CPU ${m.clientCpuUsPerRequest} us/req, other processes ${m.otherProcessesCpuPercent ?? "?"}% of a core`,
            );
          }
        }
      }
    }
    roundsCut = budget.settle(options);

    if (refusals.length > 0)
      fail(`the guard refused ${refusals.length} requests: ${JSON.stringify(refusals[0])}`);

    const profiles = options.cpuProfile ? await profile(cases, pids) : [];
    for (const close of closers) await close();
    await stop(server.child);

    const summary = summarize(cases, rounds);
    const result = {
      benchmark: "egress",
      date: new Date().toISOString(),
      machine: machine(
        "the client (this process, where the guard runs) and the server child share these cores",
      ),
      options,
      request: {
        method: "POST",
        bytes: Buffer.byteLength(REQUEST_BODY),
        headers: HEADERS,
        timeoutMs: TIMEOUT_MS,
      },
      answer: { status: 200, bytes: Buffer.byteLength(ANSWER) },
      egressPolicy: egressSection,
      lookups,
      rounds,
      summary,
      profiles,
    };
    const file = writeResult("egress", result);
    process.stdout.write(`\n${markdown(summary)}\n\nwritten to ${file}\n`);
    for (const p of profiles) process.stdout.write(`CPU profile: ${p}\n`);
  } catch (e) {
    fail(e instanceof Error ? e.message : String(e));
  }
}

/**
 * One measurement, and the proof it measured what it says: every request reached the server,
 * a new-connection case opened one connection per request, and a name was looked up once per
 * connection by the side being measured (never by the other).
 */
async function measureChecked(c, client, mode, server, lookups, pids) {
  const before = await stubCount(server.url);
  const lookupsBefore = { ...lookups };
  const m =
    mode === "sequential"
      ? await sequential(c.clients[client], options.requests, pids)
      : await concurrent(c.clients[client], options.connections, options.durationSeconds, pids);
  const after = await stubCount(server.url);
  const posts = after.posts - before.posts;
  const connections = after.connections - before.connections - 1;
  const other = client === "guarded" ? "unguarded" : "guarded";
  const looked = lookups[client] - lookupsBefore[client];
  const problems = [];
  if (posts !== m.requests) problems.push(`the server answered ${posts} POSTs for ${m.requests} requests`);
  if (c.connection === "new" && connections !== m.requests)
    problems.push(`${connections} connections were opened for ${m.requests} requests`);
  if (c.address === "name" && looked !== connections)
    problems.push(`${looked} lookups for ${connections} connections`);
  if (c.address === "literal" && looked !== 0)
    problems.push(`a literal address was looked up ${looked} times`);
  if (lookups[other] !== lookupsBefore[other]) problems.push(`the ${other} side looked names up meanwhile`);
  if (problems.length > 0) throw new Error(`${c.name} ${mode} ${client}: ${problems.join("; ")}`);
  return { ...m, connections, lookups: looked };
}

/** Profiles each client on two cases in-process (bench/results/profiles/), after the measured rounds. */
async function profile(cases, pids) {
  const dir = join(RESULTS, "profiles");
  await mkdir(dir, { recursive: true });
  const session = new Session();
  session.connect();
  await session.post("Profiler.enable");
  await session.post("Profiler.setSamplingInterval", { interval: 100 });
  const written = [];
  const stamp = new Date().toISOString().replace(/[:.]/g, "-");
  for (const c of cases.filter((x) => x.name === "literal keep-alive" || x.name === "name new connection")) {
    for (const client of ["guarded", "unguarded"]) {
      await session.post("Profiler.start");
      await sequential(c.clients[client], Math.max(options.requests, 5000), pids);
      const { profile: data } = await session.post("Profiler.stop");
      const file = join(dir, `egress-${client}-${c.name.replace(/ /g, "-")}-${stamp}.cpuprofile`);
      await writeFile(file, JSON.stringify(data));
      written.push(file);
    }
  }
  session.disconnect();
  return written;
}

function summarize(cases, rounds) {
  const pick = (caseName, client, mode) =>
    rounds.filter((r) => r.case === caseName && r.client === client && r.mode === mode);
  const medianOf = (rs, key) =>
    rs.every((r) => r[key] !== null) ? round1(median(rs.map((r) => r[key]))) : null;
  const perClient = (caseName, client) => {
    const seq = pick(caseName, client, "sequential");
    const conc = pick(caseName, client, "concurrent");
    return {
      sequential: {
        p50Us: medianOf(seq, "p50Us"),
        p99Us: medianOf(seq, "p99Us"),
        clientCpuUsPerRequest: medianOf(seq, "clientCpuUsPerRequest"),
        serverCpuUsPerRequest: medianOf(seq, "serverCpuUsPerRequest"),
      },
      concurrent: {
        requestsPerSecond: Math.round(median(conc.map((r) => r.requestsPerSecond))),
        p50Us: medianOf(conc, "p50Us"),
        p99Us: medianOf(conc, "p99Us"),
        clientCpuUsPerRequest: medianOf(conc, "clientCpuUsPerRequest"),
        serverCpuUsPerRequest: medianOf(conc, "serverCpuUsPerRequest"),
      },
      otherProcessesCpuPercentMax: Math.max(...[...seq, ...conc].map((r) => r.otherProcessesCpuPercent ?? 0)),
    };
  };
  // Each guarded measurement against the unguarded one of the same round, case and mode.
  const paired = (caseName, mode, key, compare) => {
    const values = pick(caseName, "guarded", mode).map((g) => {
      const u = rounds.find(
        (r) => r.case === caseName && r.client === "unguarded" && r.mode === mode && r.round === g.round,
      );
      return compare(g[key], u[key]);
    });
    return {
      median: round3(median(values)),
      range: [round3(Math.min(...values)), round3(Math.max(...values))],
    };
  };
  const ratio = (g, u) => g / u;
  const diff = (g, u) => g - u;
  return cases.map((c) => {
    const guarded = perClient(c.name, "guarded");
    const unguarded = perClient(c.name, "unguarded");
    const gs = guarded.sequential;
    const us = unguarded.sequential;
    const gc = guarded.concurrent;
    const uc = unguarded.concurrent;
    return {
      case: c.name,
      url: c.url,
      guarded,
      unguarded,
      guardedVsUnguarded: {
        sequentialP50Ratio: round3(gs.p50Us / us.p50Us),
        sequentialP50AddedUs: round1(gs.p50Us - us.p50Us),
        sequentialP99AddedUs: round1(gs.p99Us - us.p99Us),
        sequentialClientCpuAddedUs: round1(gs.clientCpuUsPerRequest - us.clientCpuUsPerRequest),
        throughputRatio: round3(gc.requestsPerSecond / uc.requestsPerSecond),
        concurrentClientCpuAddedUs: round1(gc.clientCpuUsPerRequest - uc.clientCpuUsPerRequest),
        // Each guarded measurement against the plain one of the same round: what the table's
        // medians hide when other load comes and goes between rounds.
        paired: {
          sequentialP50AddedUs: paired(c.name, "sequential", "p50Us", diff),
          sequentialClientCpuAddedUs: paired(c.name, "sequential", "clientCpuUsPerRequest", diff),
          throughputRatio: paired(c.name, "concurrent", "requestsPerSecond", ratio),
          concurrentClientCpuAddedUs: paired(c.name, "concurrent", "clientCpuUsPerRequest", diff),
        },
      },
    };
  });
}

function markdown(summary) {
  const lines = [
    `Medians of ${options.rounds} rounds${roundsCut}. Sequential: ${options.requests} requests one after another per client, ` +
      `case and round. Concurrent: ${options.connections} loops for ${options.durationSeconds} s. ` +
      "Latency per request in µs; client CPU is this process's (where the guard runs) per request.",
    "",
    "| case | client | seq p50 µs | seq p99 µs | seq client CPU µs/req | conc req/s | conc p50 µs | conc client CPU µs/req | other load (max) |",
    "|---|---|---:|---:|---:|---:|---:|---:|---:|",
  ];
  for (const s of summary) {
    const row = (name, t) =>
      `| ${s.case} | ${name} | ${t.sequential.p50Us} | ${t.sequential.p99Us} | ${t.sequential.clientCpuUsPerRequest} | ` +
      `${t.concurrent.requestsPerSecond} | ${t.concurrent.p50Us} | ${t.concurrent.clientCpuUsPerRequest} | ` +
      `${t.otherProcessesCpuPercentMax}% |`;
    const r = s.guardedVsUnguarded;
    lines.push(
      row("guarded `send`", s.guarded),
      row("plain undici", s.unguarded),
      `| ${s.case} | **guarded vs plain** | **${r.sequentialP50Ratio.toFixed(2)}× (${signed(r.sequentialP50AddedUs)})** | ` +
        `**${signed(r.sequentialP99AddedUs)}** | **${signed(r.sequentialClientCpuAddedUs)}** | ` +
        `**${r.throughputRatio.toFixed(2)}×** | | **${signed(r.concurrentClientCpuAddedUs)}** | |`,
    );
  }
  lines.push(
    "",
    "Paired, each guarded measurement against the plain one of the same round; median (range):",
    "",
    "| case | seq p50 added µs | seq client CPU added µs/req | conc req/s ratio | conc client CPU added µs/req |",
    "|---|---:|---:|---:|---:|",
    ...summary.map((s) => {
      const p = s.guardedVsUnguarded.paired;
      const added = (x) => `${signed(x.median)} (${signed(x.range[0])} to ${signed(x.range[1])})`;
      const times = (x) => `${x.median.toFixed(2)}× (${x.range[0].toFixed(2)}–${x.range[1].toFixed(2)})`;
      return (
        `| ${s.case} | ${added(p.sequentialP50AddedUs)} | ${added(p.sequentialClientCpuAddedUs)} | ` +
        `${times(p.throughputRatio)} | ${added(p.concurrentClientCpuAddedUs)} |`
      );
    }),
    "",
    "Other load: CPU taken by processes outside the benchmark, in % of one core, worst measurement.",
  );
  return lines.join("\n");
}

async function importDist(path) {
  try {
    return await import(pathToFileURL(join(ROOT, "dist", path)).href);
  } catch (e) {
    fail(`cannot load dist/${path} (run npm run build first): ${e instanceof Error ? e.message : e}`);
  }
}

/**
 * Issue 10's "against what users do today": the same deny rule as a Claude Code command hook
 * (bench/command-hook.sh: sh, bash and jq per event) and as one round trip to hookgate on
 * loopback, per event, the same events, in this run (medians and ratios, no thresholds).
 *
 *   node bench/command-hook.js [--rounds 3] [--events 40] [--warmup-events 10] [--quiet-wait 5]
 *
 * Needs `npm run build` first (it runs dist/entry/bin.js serve). Loopback only; stops by itself.
 * Writes bench/results/command-hook-<date>T<time>.json and prints a Markdown table.
 */
import { writeFile } from "node:fs/promises";
import http from "node:http";
import { join } from "node:path";
import {
  childrenCpuTicks,
  cpuDelta,
  cpuTicks,
  createRun,
  log,
  machine,
  median,
  percentile,
  postHook,
  ROOT,
  round1,
  round3,
  TICK_MS,
  waitForQuiet,
  writeResult,
} from "./common.js";
import { formatPolicy, MEASURED_ANSWER, makePolicy, measuredRequest } from "./make-policy.js";

const { fail, boundedInt, parseFlags, spawnChild, tempDir, removeDir, startGateway, stop } =
  createRun("command-hook.js");

const { values: flags } = parseFlags({
  options: {
    rounds: { type: "string", default: "3" },
    events: { type: "string", default: "40" },
    "warmup-events": { type: "string", default: "10" },
    "quiet-wait": { type: "string", default: "5" },
  },
});

const options = {
  rounds: boundedInt("rounds", flags.rounds, 1, 50),
  /** Events per round and target, half `rm -rf /` (deny), half `ls -la` (no opinion), alternating. */
  events: boundedInt("events", flags.events, 2, 10_000),
  /** Events per target in the warm-up round, thrown away (page cache, JIT, connections). */
  warmupEvents: boundedInt("warmup-events", flags["warmup-events"], 0, 10_000),
  quietWaitSeconds: boundedInt("quiet-wait", flags["quiet-wait"], 0, 120),
};

/**
 * The hook as a Claude Code settings file would name it; Claude Code runs a command hook as
 * `sh -c COMMAND` in the project directory, with CLAUDE_PROJECT_DIR set and the event on stdin.
 */
const HOOK_COMMAND = 'bash "$CLAUDE_PROJECT_DIR"/bench/command-hook.sh';

const REQUEST = measuredRequest();
const DENY_EVENT = REQUEST.body;
const PASS_EVENT = (() => {
  const event = JSON.parse(DENY_EVENT);
  event.tool_input.command = "ls -la";
  event.tool_input.description = "List files";
  return JSON.stringify(event);
})();
const EVENTS = [
  { name: "deny", body: DENY_EVENT, answer: MEASURED_ANSWER },
  { name: "pass", body: PASS_EVENT, answer: "" },
];

/** The rule the hook applies, alone, behind the platform team's token as in bench/policy-200.json. */
function oneRulePolicy() {
  const full = makePolicy();
  const rule = full.rules.find((r) => r.id === "no-rm-root");
  return formatPolicy({
    version: 1,
    auth: { tokens: full.auth.tokens.filter((t) => t.team === "platform"), onFailure: "deny" },
    rules: [rule],
  });
}

await main();

async function main() {
  const dir = tempDir("command-hook");
  let error;
  try {
    const onePath = join(dir, "one-rule.json");
    await writeFile(onePath, oneRulePolicy());
    const one = await startGateway(onePath, {}, [], ["--data-dir", join(dir, "data-one")]);
    const full = await startGateway(
      join(ROOT, "bench", "policy-200.json"),
      {},
      [],
      ["--data-dir", join(dir, "data-200")],
    );
    const keepAlive = new http.Agent({ keepAlive: true, maxSockets: 1 });

    const targets = [
      {
        name: "hook",
        title: "command hook: sh + bash + jq, per event",
        pid: null,
        send: (event) => runHook(event),
      },
      {
        name: "one-keepalive",
        title: "hookgate, same rule, keep-alive",
        pid: one.child.pid,
        send: (event) => postHook(one.url, { headers: REQUEST.headers, body: event.body }, keepAlive),
      },
      {
        name: "one-new",
        title: "hookgate, same rule, new connection",
        pid: one.child.pid,
        send: (event) => postHook(one.url, { headers: REQUEST.headers, body: event.body }, false),
      },
      {
        name: "p200-keepalive",
        title: "hookgate, bench/policy-200.json, keep-alive",
        pid: full.child.pid,
        send: (event) => postHook(full.url, { headers: REQUEST.headers, body: event.body }, keepAlive),
      },
    ];
    for (const t of targets) for (const event of EVENTS) check(t, event, await t.send(event));

    const pids = [process.pid, one.child.pid, full.child.pid];
    const rounds = [];
    let quietBudget = options.quietWaitSeconds;
    log(
      `command-hook: a warm-up of ${options.warmupEvents} events per target, then ${options.rounds} rounds of ` +
        `${options.events} events per target, one after another`,
    );
    if (options.warmupEvents >= 2) for (const t of targets) await measure(t, pids, options.warmupEvents);
    const latencies = new Map(targets.map((t) => [t.name, []]));
    for (let round = 1; round <= options.rounds; round++) {
      const waitedForQuietSeconds = await waitForQuiet(pids, quietBudget);
      quietBudget = Math.max(0, quietBudget - waitedForQuietSeconds);
      for (const t of rotate(targets, round - 1)) {
        const { latencies: us, ...m } = await measure(t, pids, options.events);
        latencies.get(t.name).push(...us);
        rounds.push({ round, target: t.name, ...m, waitedForQuietSeconds });
        log(
          `round ${round}/${options.rounds} ${t.title.padEnd(44)} p50 ${m.p50Us} µs, p99 ${m.p99Us} µs, ` +
            `CPU ${m.cpuUsPerEvent ?? "?"} µs/event, other processes ${m.otherProcessesCpuPercent ?? "?"}% of a core`,
        );
      }
    }
    if (one.warnings() + full.warnings() > 0) fail("a gateway logged warnings or errors (above)");
    keepAlive.destroy();
    await stop(one.child);
    await stop(full.child);

    const summary = summarize(targets, rounds, latencies);
    const result = {
      benchmark: "command-hook",
      date: new Date().toISOString(),
      machine: machine("the hook processes, both gateways and this client share these cores"),
      options,
      hook: {
        command: HOOK_COMMAND,
        runAs: "/bin/sh -c COMMAND, event on stdin, stdout read to the end, exit code checked",
        shell: "/bin/sh",
      },
      events: EVENTS.map((e) => ({ name: e.name, bytes: Buffer.byteLength(e.body), answer: e.answer })),
      rounds,
      summary,
    };
    const file = writeResult("command-hook", result);
    process.stdout.write(`\n${markdown(targets, summary)}\n\nwritten to ${file}\n`);
  } catch (e) {
    error = e;
  } finally {
    removeDir(dir);
  }
  if (error !== undefined) fail(error instanceof Error ? error.message : String(error));
}

/** The hook, run as Claude Code runs it; resolves with its stdout once it has exited. */
function runHook(event) {
  return new Promise((resolve, reject) => {
    const child = spawnChild("/bin/sh", ["-c", HOOK_COMMAND], {
      cwd: ROOT,
      env: { ...process.env, CLAUDE_PROJECT_DIR: ROOT },
      stdio: ["pipe", "pipe", "pipe"],
      timed: true,
    });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8");
    child.stderr.setEncoding("utf8");
    child.stdout.on("data", (text) => {
      stdout += text;
    });
    child.stderr.on("data", (text) => {
      stderr += text;
    });
    child.once("error", reject);
    child.once("close", (code) => {
      if (code !== 0) reject(new Error(`the command hook exited with ${code}: ${stderr}`));
      else resolve({ status: 0, body: stdout.trim() });
    });
    child.stdin.end(event.body);
  });
}

function check(target, event, answer) {
  if (answer.status !== 200 && !(target.name === "hook" && answer.status === 0))
    throw new Error(`${target.title} answered ${answer.status} to the ${event.name} event: ${answer.body}`);
  if (answer.body !== event.answer || answer.error !== undefined)
    throw new Error(
      `${target.title} answered the ${event.name} event with ${JSON.stringify(answer.body)} ` +
        `(x-hookgate-error ${answer.error}), expected ${JSON.stringify(event.answer)}`,
    );
}

/** `n` events one after another, deny and pass alternating; each checked. */
async function measure(target, pids, n) {
  const latencies = new Float64Array(n);
  const before = cpuTicks(pids);
  const childrenBefore = childrenCpuTicks();
  const started = performance.now();
  for (let i = 0; i < n; i++) {
    const event = EVENTS[i % 2];
    const t0 = performance.now();
    const answer = await target.send(event);
    latencies[i] = (performance.now() - t0) * 1000;
    check(target, event, answer);
  }
  const seconds = (performance.now() - started) / 1000;
  const ticks = cpuDelta(before, cpuTicks(pids));
  // The hook's processes are this process's reaped children: /proc/self/stat's cutime + cstime.
  const hookTicks = childrenCpuTicks() - childrenBefore;
  const sorted = Float64Array.from(latencies).sort();
  const serverTicks = target.pid === null ? hookTicks : ticks?.perPid(target.pid);
  return {
    latencies,
    events: n,
    seconds: round3(seconds),
    eventsPerSecond: Math.round(n / seconds),
    p50Us: round1(percentile(sorted, 0.5)),
    p99Us: round1(percentile(sorted, 0.99)),
    /** The hook's processes (sh, bash, jq), or the gateway's, per event; 10 ms ticks. */
    cpuUsPerEvent: Number.isFinite(serverTicks) ? Math.round((serverTicks * TICK_MS * 1000) / n) : null,
    /** CPU of processes outside the benchmark; the hook's own children are counted as ours. */
    otherProcessesCpuPercent: ticks
      ? Math.max(0, Math.round((100 * (ticks.otherTicks - hookTicks) * TICK_MS) / 1000 / seconds))
      : null,
  };
}

/** `items` turned left by `by` places, so each round starts with another target. */
function rotate(items, by) {
  const k = ((by % items.length) + items.length) % items.length;
  return [...items.slice(k), ...items.slice(0, k)];
}

/** p50 and p99 over every measured event of a target (all rounds pooled); the rest per round. */
function summarize(targets, rounds, latencies) {
  const perTarget = {};
  for (const t of targets) {
    const rs = rounds.filter((r) => r.target === t.name);
    const pooled = Float64Array.from(latencies.get(t.name)).sort();
    perTarget[t.name] = {
      title: t.title,
      events: pooled.length,
      p50Us: round1(percentile(pooled, 0.5)),
      p99Us: round1(percentile(pooled, 0.99)),
      eventsPerSecond: Math.round(median(rs.map((r) => r.eventsPerSecond))),
      cpuUsPerEvent: rs.every((r) => r.cpuUsPerEvent !== null)
        ? median(rs.map((r) => r.cpuUsPerEvent))
        : null,
      otherProcessesCpuPercentMax: Math.max(...rs.map((r) => r.otherProcessesCpuPercent ?? 0)),
    };
  }
  const hook = perTarget.hook;
  const ratios = {};
  for (const t of targets.filter((x) => x.name !== "hook")) {
    const paired = rounds
      .filter((r) => r.target === t.name)
      .map((g) => rounds.find((h) => h.target === "hook" && h.round === g.round).p50Us / g.p50Us);
    ratios[t.name] = {
      p50: round1(hook.p50Us / perTarget[t.name].p50Us),
      p99: round1(hook.p99Us / perTarget[t.name].p99Us),
      p50Paired: {
        median: round1(median(paired)),
        range: [round1(Math.min(...paired)), round1(Math.max(...paired))],
      },
    };
  }
  return { targets: perTarget, hookOverGateway: ratios };
}

function markdown(targets, summary) {
  const lines = [
    `${options.rounds} rounds × ${options.events} events per target, one after another (\`rm -rf /\` denied and ` +
      "`ls -la` passed, alternating); p50 and p99 over all of a target's events, events/s and CPU the median of " +
      "the rounds. Latency: event out to answer read (the hook: spawn to exit, stdout read). CPU: the hook's " +
      "processes or the gateway, µs per event (10 ms ticks). Ratios: the hook's latency over the target's; " +
      "paired: each round's p50 against the hook's in the same round.",
    "",
    "| target | p50 µs | p99 µs | events/s | CPU µs/event | hook ÷ this, p50 (paired range) | hook ÷ this, p99 | other load (max) |",
    "|---|---:|---:|---:|---:|---:|---:|---:|",
  ];
  for (const t of targets) {
    const x = summary.targets[t.name];
    const r = summary.hookOverGateway[t.name];
    lines.push(
      `| ${t.title} | ${x.p50Us} | ${x.p99Us} | ${x.eventsPerSecond} | ${x.cpuUsPerEvent ?? "?"} | ` +
        (r ? `**${r.p50}×** (${r.p50Paired.range.join("–")}) | ${r.p99}× |` : "1.0× | 1.0× |") +
        ` ${x.otherProcessesCpuPercentMax}% |`,
    );
  }
  return lines.join("\n");
}

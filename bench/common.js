/**
 * What the benchmarks share: child processes on loopback, CPU readings from /proc, the wait for
 * a quiet machine, the two load shapes (N requests one after another; C loops for D seconds)
 * and the statistics, so that every benchmark reads the machine the same way.
 */
import { spawn, spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import http from "node:http";
import os from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";

export const HERE = dirname(fileURLToPath(import.meta.url));
export const ROOT = dirname(HERE);
export const RESULTS = join(HERE, "results");
export const STUB_SERVER = join(HERE, "stub-server.js");
const START_TIMEOUT_MS = 15_000;
/** The signals that stop a run, which then cleans up (createRun) and exits 128 + the signal's number. */
export const STOP_SIGNALS = ["SIGINT", "SIGTERM", "SIGHUP", "SIGQUIT"];
/** Linux reports /proc times in USER_HZ, 100 per second on every architecture Node runs on. */
export const TICK_MS = 10;

/**
 * A run that died with no exit handler (SIGKILL, the OOM killer, an abort) left its directories:
 * each names its run's pid (tempDir), and the next run removes those whose process is gone. One
 * whose pid is running, or not this user's to signal, stays, as do directories named otherwise.
 */
function removeOrphanDirs() {
  let names;
  try {
    names = readdirSync(os.tmpdir());
  } catch {
    return;
  }
  for (const entry of names) {
    const pid = Number(/^hookgate-bench-.+-(\d+)-[A-Za-z0-9]{6}$/.exec(entry)?.[1]);
    if (!Number.isSafeInteger(pid) || pid <= 0 || pid === process.pid || processExists(pid)) continue;
    rmSync(join(os.tmpdir(), entry), { recursive: true, force: true, maxRetries: 5 });
  }
}

function processExists(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return e.code === "EPERM";
  }
}

/**
 * A benchmark's run: its options' checks, its child processes and its temporary directories.
 * However it ends (Ctrl-C, SIGTERM as a CI job's timeout sends, `fail`, or its end), it leaves
 * nothing: on exit every child still running is killed and waited for, then every directory it
 * made is removed. A signal ended it in process.exit, past the `finally` blocks and the children's
 * exit events that removed them, and each interrupted run left its hookgate-bench-* directories.
 *
 * Its children run in process groups of their own (`spawnChild`), so a Ctrl-C, which a shell sends
 * to the whole foreground group, reaches the run alone, and the run stops its children as it exits.
 * Sharing the run's group, the servers died of the same Ctrl-C, and a request refused by a server
 * already gone could reach the run before its own SIGINT handler did: the run then ended as
 * failed (exit 1, "connect ECONNREFUSED"), not as interrupted (130).
 */
export function createRun(name) {
  const children = new Set();
  const dirs = new Set();
  removeOrphanDirs();
  process.on("exit", () => {
    const running = [...children].filter((c) => c.exitCode === null && c.signalCode === null);
    // Each leads a process group of its own (spawnChild): killed as a group, so what it started
    // goes too (command-hook.js's bash and jq, a build's esbuild).
    for (const child of running) {
      try {
        process.kill(-child.pid, "SIGKILL");
      } catch {
        child.kill("SIGKILL");
      }
    }
    // Gone before their directories go, which they may still be writing.
    waitGone(running.map((c) => c.pid));
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true, maxRetries: 5 });
  });
  // On, not once: a second signal (Ctrl-C pressed again, or run.js passing on one the run got
  // too) must not end the process by its default action while the exit handler cleans up.
  // SIGHUP (the terminal closed) and SIGQUIT (Ctrl-\) too: the children, in sessions of their
  // own, get neither, and the run's default death by them skipped this cleanup and left them.
  for (const signal of STOP_SIGNALS)
    process.on(signal, () => process.exit(128 + os.constants.signals[signal]));

  /**
   * `spawn(command, args, options)` in a process group of its own, killed if still running when the
   * run exits. On Linux it dies with the run too, however the run dies (a SIGKILL, the OOM killer
   * or an abort runs no exit handler): started as `setpriv --pdeathsig SIGKILL -- command args`, it
   * gets SIGKILL from the kernel once the thread that started it, the run's main thread, is gone
   * (PR_SET_PDEATHSIG, prctl(2)). setpriv execs the command, so the child's pid, whose CPU /proc
   * reports, is the command's own. Without setpriv (macOS) it is the command alone. What the child
   * starts gets no such signal: a build's esbuild ends at EOF on its stdin, the killed node child's
   * pipe. `timed`: a child measured from spawn to exit (cli-start.js's samples, command-hook.js's
   * hook) starts without setpriv, whose exec would be counted in it; it lives for one sample or one
   * event, and ends by itself.
   */
  function spawnChild(command, args, { timed = false, ...options } = {}) {
    const [file, argv] = timed ? [command, args] : withParentDeathSignal("SIGKILL", command, args);
    const child = spawn(file, argv, { ...options, detached: true });
    if (child.pid === undefined) return child; // not started: its "error" event says why
    children.add(child);
    child.once("exit", () => children.delete(child));
    return child;
  }

  /**
   * A new directory `hookgate-bench-<kind>-<pid>-XXXXXX` in the temporary directory, removed on
   * exit, or by the next run once this process is gone (removeOrphanDirs).
   */
  function tempDir(kind) {
    const dir = mkdtempSync(join(os.tmpdir(), `hookgate-bench-${kind}-${process.pid}-`));
    dirs.add(dir);
    return dir;
  }

  /** Removes a directory of tempDir's now, once what wrote there has stopped. */
  function removeDir(dir) {
    rmSync(dir, { recursive: true, force: true, maxRetries: 5 });
    dirs.delete(dir);
  }

  function fail(message) {
    process.stderr.write(`${name}: ${message}\nbenchmark aborted\n`);
    process.exit(1);
  }

  /** `parseArgs(config)`, or a line naming the flag it refused, exit 2 (not Node's stack trace). */
  function parseFlags(config) {
    try {
      return parseArgs(config);
    } catch (e) {
      const flags = Object.keys(config.options ?? {}).map((f) => `--${f}`);
      process.stderr.write(
        `${name}: ${e instanceof Error ? e.message : e}; its flags: ${flags.join(", ")}\n`,
      );
      process.exit(2);
    }
  }

  function boundedInt(flag, text, min, max) {
    const n = Number(text);
    if (!Number.isInteger(n) || n < min || n > max) {
      process.stderr.write(`${name}: --${flag} must be an integer from ${min} to ${max}, got ${text}\n`);
      process.exit(2);
    }
    return n;
  }

  function boundedNumber(flag, text, min, max) {
    const n = Number(text);
    if (!Number.isFinite(n) || n < min || n > max) {
      process.stderr.write(`${name}: --${flag} must be a number from ${min} to ${max}, got ${text}\n`);
      process.exit(2);
    }
    return n;
  }

  /**
   * A server script of bench/ that prints `{"url": ...}` as its first line once it listens
   * (stub-server.js, bare-server.js), started with `env` added to this process's and `nodeFlags`
   * given to node. V8's own lines (`--trace-gc-nvp`) are kept in `gcLines`, which the caller may
   * empty.
   */
  async function startChild(script, env, label, nodeFlags = []) {
    const child = spawnChild(process.execPath, [...nodeFlags, script], {
      stdio: ["ignore", "pipe", "inherit"],
      env: { ...process.env, ...env },
    });
    const gcLines = [];
    const url = await firstLine(child, label, gcLines).then((line) => JSON.parse(line).url);
    return { child, url, gcLines };
  }

  /** A stub server (bench/stub-server.js) answering `body` to every POST; resolves once it listens. */
  async function startStub(label, body) {
    const { child, url } = await startChild(STUB_SERVER, { BENCH_BODY: body }, `the ${label} server`);
    return { child, url, label };
  }

  /**
   * `dist/entry/bin.js serve`, stdout piped and drained (the audit lines are written as in
   * production, then dropped; warnings and errors are echoed to stderr). `serveArgs` are added
   * to `serve`'s own (fanout.js: `--data-dir`); without a `--data-dir` there, the gateway gets a
   * fresh one of its own, removed when it exits, so that a `serve` running in the repository
   * (on its default `.hookgate`) does not stop the benchmark.
   */
  async function startGateway(policyPath, env, nodeFlags = [], serveArgs = []) {
    const ownDir = serveArgs.includes("--data-dir") ? undefined : tempDir("serve");
    if (ownDir !== undefined) serveArgs = [...serveArgs, "--data-dir", ownDir];
    const child = spawnChild(
      process.execPath,
      [
        ...nodeFlags,
        join(ROOT, "dist", "entry", "bin.js"),
        "serve",
        "--policy",
        policyPath,
        "--host",
        "127.0.0.1",
        "--port",
        "0",
        ...serveArgs,
      ],
      { stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, ...env } },
    );
    if (ownDir !== undefined) child.once("exit", () => removeDir(ownDir));
    let stderr = "";
    child.stderr.setEncoding("utf8");
    child.stderr.on("data", (text) => {
      stderr += text;
    });
    let logBytes = 0;
    let warnings = 0;
    let pending = "";
    const gcLines = [];
    const url = await new Promise((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error("the gateway did not start listening in time")),
        START_TIMEOUT_MS,
      );
      child.stdout.on("data", (chunk) => {
        logBytes += chunk.length;
        pending += chunk.toString("utf8");
        let newline = pending.indexOf("\n");
        while (newline !== -1) {
          const line = pending.slice(0, newline);
          pending = pending.slice(newline + 1);
          newline = pending.indexOf("\n");
          // Only warn and error lines are parsed; the audit lines are counted and dropped. V8's
          // own lines (`--trace-gc-nvp` among nodeFlags) are kept for gcSummary.
          const own = !keptIfV8(line, gcLines);
          if (own && (line.includes('"level":"warn"') || line.includes('"level":"error"'))) {
            warnings++;
            log(`gateway: ${line}`);
          }
          if (line.includes('"msg":"hookgate listening"')) {
            clearTimeout(timer);
            resolve(JSON.parse(line).url);
          }
        }
        if (pending.length > 1 << 20) pending = "";
      });
      child.once("exit", (code) => {
        clearTimeout(timer);
        reject(new Error(`the gateway exited with ${code} before listening:\n${stderr}`));
      });
    }).catch((e) => fail(e.message));
    return {
      child,
      url,
      logBytes: () => logBytes,
      warnings: () => warnings,
      /** V8's `--trace-gc-nvp` lines so far, which the caller may empty (after a warm-up). */
      gcLines,
    };
  }

  /**
   * The child's first line of its own (V8's, which start with `[`, are not), then every V8 line
   * with a GC pause pushed to `gcLines` (at most 100,000); every other line after the first is dropped.
   */
  function firstLine(child, label, gcLines) {
    return new Promise((resolve, reject) => {
      let text = "";
      let first;
      const timer = setTimeout(() => reject(new Error(`${label} did not start in time`)), START_TIMEOUT_MS);
      child.stdout.setEncoding("utf8");
      child.stdout.on("data", (chunk) => {
        text += chunk;
        let newline = text.indexOf("\n");
        while (newline !== -1) {
          const line = text.slice(0, newline);
          text = text.slice(newline + 1);
          newline = text.indexOf("\n");
          if (!keptIfV8(line, gcLines) && first === undefined) {
            first = line;
            clearTimeout(timer);
            resolve(line);
          }
        }
      });
      child.once("exit", (code) => reject(new Error(`${label} exited with ${code}`)));
    }).catch((e) => fail(e.message));
  }

  async function stop(child) {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((resolve) => child.once("exit", resolve));
    child.kill("SIGTERM");
    const timer = setTimeout(() => child.kill("SIGKILL"), 10_000);
    await exited;
    clearTimeout(timer);
  }

  return {
    fail,
    parseFlags,
    boundedInt,
    boundedNumber,
    spawnChild,
    tempDir,
    removeDir,
    startChild,
    startStub,
    startGateway,
    stop,
  };
}

/**
 * Whether `setpriv --pdeathsig` runs here (util-linux: Linux only, and not in its older releases),
 * looked at once, on first use. In a session of its own, as every child of a run is: a Ctrl-C to
 * the run's group reaches the run alone.
 */
let parentDeathSignal;

/**
 * `[file, args]` that run `command args` so that it gets `signal` from the kernel once the thread
 * that started it (this process's main thread) is gone, however this process died
 * (PR_SET_PDEATHSIG, prctl(2), through setpriv, which execs the command: the pid stays the
 * command's own); `[command, args]` where setpriv cannot (macOS).
 */
export function withParentDeathSignal(signal, command, args) {
  parentDeathSignal ??=
    spawnSync("setpriv", ["--pdeathsig", "SIGKILL", "--", "true"], { stdio: "ignore", detached: true })
      .status === 0;
  return parentDeathSignal ? ["setpriv", ["--pdeathsig", signal, "--", command, ...args]] : [command, args];
}

/**
 * `{posts, connections}` a stub server has answered and accepted so far (its `GET /count`). The
 * GET goes over a connection of its own, already counted in the answer: between two readings,
 * connections grew by what was measured plus one.
 */
export function stubCount(url) {
  return getJson(`${url}/count`);
}

/** GET a loopback URL on a connection of its own and parse its JSON answer. */
export function getJson(url) {
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
 * One `POST /v1/hooks` with the given headers and body, as Claude Code sends it; `agent: false`
 * opens (and closes) a connection for it. Resolves with the status, the body and x-hookgate-error.
 */
export function postHook(url, request, agent) {
  return new Promise((resolve, reject) => {
    const req = http.request(
      `${url}/v1/hooks`,
      {
        method: "POST",
        agent,
        headers: {
          ...request.headers,
          "content-length": Buffer.byteLength(request.body),
          ...(agent === false ? { connection: "close" } : {}),
        },
      },
      (res) => {
        let body = "";
        res.setEncoding("utf8");
        res.on("data", (text) => {
          body += text;
        });
        res.on("end", () =>
          resolve({ status: res.statusCode, body, error: res.headers["x-hookgate-error"] }),
        );
      },
    );
    req.once("error", reject);
    req.end(request.body);
  });
}

/**
 * N calls of `send`, one after another. Each latency is taken around one `send` (request out,
 * whole answer read and checked) at performance.now() resolution. `send` throws on a wrong
 * answer, which aborts the benchmark.
 */
export async function sequential(send, n, pids) {
  const latencies = new Float64Array(n);
  const before = readCpu(pids);
  const started = performance.now();
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    await send();
    latencies[i] = (performance.now() - t0) * 1000;
  }
  const seconds = (performance.now() - started) / 1000;
  return describeLoad(latencies, n, seconds, before, readCpu(pids), pids);
}

/** C loops calling `send` back to back for `seconds`; requests/s over the whole run. */
export async function concurrent(send, loops, seconds, pids) {
  let latencies = new Float64Array(1 << 14);
  let count = 0;
  const before = readCpu(pids);
  const started = performance.now();
  const end = started + seconds * 1000;
  const loop = async () => {
    while (performance.now() < end) {
      const t0 = performance.now();
      await send();
      if (count === latencies.length) {
        const grown = new Float64Array(latencies.length * 2);
        grown.set(latencies);
        latencies = grown;
      }
      latencies[count++] = (performance.now() - t0) * 1000;
    }
  };
  await Promise.all(Array.from({ length: loops }, loop));
  const elapsed = (performance.now() - started) / 1000;
  return describeLoad(latencies.subarray(0, count), count, elapsed, before, readCpu(pids), pids);
}

function describeLoad(latencies, requests, seconds, before, after, pids) {
  const sorted = Float64Array.from(latencies).sort();
  const clientCpuUs = after.client.user + after.client.system - before.client.user - before.client.system;
  const ticks = cpuDelta(before.proc, after.proc);
  const [, ...servers] = pids;
  const serverTicks = ticks ? servers.reduce((n, pid) => n + ticks.perPid(pid), 0) : undefined;
  return {
    requests,
    seconds: round3(seconds),
    requestsPerSecond: Math.round(requests / seconds),
    p50Us: round1(percentile(sorted, 0.5)),
    p99Us: round1(percentile(sorted, 0.99)),
    /** The benchmark process (the client) from process.cpuUsage(), µs resolution. */
    clientCpuUsPerRequest: round1(clientCpuUs / requests),
    /** Every server child of this measurement, from /proc (10 ms ticks). */
    serverCpuUsPerRequest:
      serverTicks === undefined ? null : Math.round((serverTicks * TICK_MS * 1000) / requests),
    /** The same, per server child (keyed by pid). */
    serverCpuUsPerRequestByPid: ticks
      ? Object.fromEntries(
          servers.map((pid) => [pid, Math.round((ticks.perPid(pid) * TICK_MS * 1000) / requests)]),
        )
      : null,
    otherProcessesCpuPercent: ticks
      ? Math.max(0, Math.round((100 * ticks.otherTicks * TICK_MS) / 1000 / seconds))
      : null,
  };
}

function readCpu(pids) {
  return { client: process.cpuUsage(), proc: cpuTicks(pids) };
}

/**
 * The fields of `/proc/<pid>/stat` after the command's name, "(...)", which may hold spaces and
 * parentheses: [0] the state, [11] utime, [12] stime, [13] cutime, [14] cstime (proc(5)'s
 * fields 3, 14–17). Throws once the process is gone, or where there is no /proc.
 */
function procStat(pid) {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  return stat.slice(stat.lastIndexOf(")") + 2).split(" ");
}

/** Ticks of CPU this process's waited-for children have used (cutime + cstime); NaN without /proc. */
export function childrenCpuTicks() {
  try {
    const after = procStat("self");
    return Number(after[13]) + Number(after[14]);
  } catch {
    return Number.NaN;
  }
}

/**
 * CPU ticks from /proc (Linux; undefined elsewhere): the whole machine's busy time and each
 * benchmark process's own, as decision.js reads them.
 */
export function cpuTicks(pids) {
  try {
    const fields = readFileSync("/proc/stat", "utf8")
      .split("\n")[0]
      .trim()
      .split(/\s+/)
      .slice(1, 9)
      .map(Number);
    const busy = fields.reduce((a, b) => a + b, 0) - (fields[3] ?? 0) - (fields[4] ?? 0);
    const perPid = new Map();
    for (const pid of pids) {
      const after = procStat(pid);
      perPid.set(pid, Number(after[11]) + Number(after[12]));
    }
    return { busy, perPid };
  } catch {
    return undefined;
  }
}

/**
 * This process's time for a fixed integer loop, ns an iteration, the fastest of five passes: the
 * host's speed at that moment, with no server in it. decision.js takes it after every round, so
 * that a round-to-round slowdown shared by every server (the host's) can be told from one of the
 * gateway's own (HISTORY.md, "decision.js's later rounds after run 57").
 */
export function hostLoopNs() {
  const iterations = 1_000_000;
  let x = 1;
  let fastest = Number.POSITIVE_INFINITY;
  for (let pass = 0; pass < 5; pass++) {
    const start = process.hrtime.bigint();
    for (let i = 0; i < iterations; i++) {
      x ^= x << 13;
      x ^= x >>> 17;
      x ^= x << 5;
    }
    fastest = Math.min(fastest, Number(process.hrtime.bigint() - start) / iterations);
  }
  // The state is read, so the loop cannot be dropped as dead code.
  if (x === 0) throw new Error("hostLoopNs: the xorshift state reached 0, which it cannot");
  return Math.round(fastest * 1000) / 1000;
}

/**
 * A process's kernel counters (/proc): system CPU ticks, minor page faults and context switches.
 * decision.js prints them a request, per round, for the gateway's round-to-round slowdown that
 * HISTORY.md ("decision.js's later rounds after run 57") could not yet explain. Undefined
 * without /proc.
 */
export function procCounters(pid) {
  try {
    const stat = procStat(pid);
    const status = readFileSync(`/proc/${pid}/status`, "utf8");
    const field = (name) => Number(new RegExp(`^${name}:\\s+(\\d+)`, "m").exec(status)?.[1] ?? Number.NaN);
    return {
      systemTicks: Number(stat[12]),
      minorFaults: Number(stat[7]),
      switches: field("voluntary_ctxt_switches") + field("nonvoluntary_ctxt_switches"),
    };
  } catch {
    return undefined;
  }
}

export function cpuDelta(before, after) {
  if (!before || !after) return undefined;
  let own = 0;
  for (const [p, ticks] of after.perPid) own += ticks - (before.perPid.get(p) ?? ticks);
  return {
    otherTicks: after.busy - before.busy - own,
    perPid: (pid) => (after.perPid.get(pid) ?? 0) - (before.perPid.get(pid) ?? 0),
  };
}

/** `items` turned left by `by` places: each round starts with a different case. */
export function rotate(items, by) {
  const k = ((by % items.length) + items.length) % items.length;
  return [...items.slice(k), ...items.slice(0, k)];
}

/**
 * Waits, synchronously (in an exit handler), at most `ms` in all, until each pid has ended: gone
 * from /proc, or a zombie not yet reaped, whose files are closed already.
 */
function waitGone(pids, ms = 5000) {
  const nap = new Int32Array(new SharedArrayBuffer(4));
  const until = Date.now() + ms;
  for (const pid of pids) {
    while (Date.now() < until && isRunning(pid)) Atomics.wait(nap, 0, 0, 5);
  }
}

function isRunning(pid) {
  try {
    return procStat(pid)[0] !== "Z";
  } catch {
    return false;
  }
}

/**
 * Waits, up to `budgetSeconds`, for half a second in which other processes use under a quarter
 * of a core (50 ticks read; a whole second's look, taken before each measurement, was 15 s of
 * decision.js's run and about 40 s of `npm run bench` on a quiet host).
 */
export async function waitForQuiet(pids, budgetSeconds) {
  const started = performance.now();
  while ((performance.now() - started) / 1000 < budgetSeconds) {
    const before = cpuTicks(pids);
    await new Promise((resolve) => setTimeout(resolve, 500));
    const delta = cpuDelta(before, cpuTicks(pids));
    if (!delta || delta.otherTicks * TICK_MS < 125) break;
  }
  return Math.round((10 * (performance.now() - started)) / 1000) / 10;
}

/**
 * The time budget of a benchmark's rounds, so that a slower host gets fewer rounds rather than a
 * longer `npm run bench` (issue 10: all of them under five minutes; a host 2.7 and 7 times slower
 * than a quiet one took 311 and 369 s). Made right before the first round, warm-ups included.
 * `start(round)` says whether a round may start: a warm-up (`round` 0 or less) and the first
 * `min` measured rounds always do; a later one only if the longest round so far still fits in
 * what is left of `seconds`. `seconds` 0 is no budget. `cut(asked)` is the note for a run's
 * summary when the budget ran out before `asked` rounds; `settle(options)` ends the rounds.
 */
export function roundBudget(seconds, min) {
  const started = performance.now();
  let last = started;
  let longest = 0;
  let measured = 0;
  return {
    start(round) {
      const now = performance.now();
      longest = Math.max(longest, now - last);
      last = now;
      if (round < 1) return true;
      if (round > min && seconds > 0 && now - started + longest > seconds * 1000) return false;
      measured = round;
      return true;
    },
    /** Measured rounds started so far. */
    get measured() {
      return measured;
    },
    cut(asked) {
      return measured < asked ? ` (of ${asked}: the ${seconds} s budget, \`--seconds\`, ran out)` : "";
    },
    /**
     * Once the rounds are over: `options.rounds` becomes the rounds measured, `roundsAsked` what
     * was asked (both go into the results file); returns `cut`'s note for the summary.
     */
    settle(options) {
      const note = this.cut(options.rounds);
      options.roundsAsked = options.rounds;
      options.rounds = measured;
      return note;
    },
  };
}

/** Nearest-rank percentile of a sorted array. */
export function percentile(sorted, p) {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(p * sorted.length) - 1))];
}

export function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

/**
 * Whether `line` is one of V8's own (they start with `[`), and if it is a GC pause's, pushed to
 * `gcLines` (at most 100,000 of them) for gcSummary.
 */
function keptIfV8(line, gcLines) {
  if (!line.startsWith("[")) return false;
  if (line.includes(" pause=") && gcLines.length < 100_000) gcLines.push(line);
  return true;
}

/**
 * What V8's `--trace-gc-nvp` lines say of one process's main thread over `requests` requests:
 * its young-generation collections (scavenges: how many a thousand requests, their pauses, what
 * each copied and promoted to the old generation) and its full ones. The main thread is the
 * isolate with the most lines (a gateway's delivery thread prints its own).
 */
export function gcSummary(lines, requests) {
  const isolate = (line) => /^\[\d+:(0x[0-9a-f]+)\]/.exec(line)?.[1];
  const counts = new Map();
  for (const line of lines) counts.set(isolate(line), (counts.get(isolate(line)) ?? 0) + 1);
  const main = [...counts].sort((a, b) => b[1] - a[1])[0]?.[0];
  const mine = lines.filter((line) => isolate(line) === main);
  const field = (line, name) => Number(new RegExp(` ${name}=([0-9.]+)`).exec(line)?.[1] ?? Number.NaN);
  const young = mine.filter((line) => / gc=s /.test(line));
  const pauses = young.map((line) => field(line, "pause")).sort((a, b) => a - b);
  return {
    requests,
    youngCollections: young.length,
    youngPerThousandRequests: round1((1000 * young.length) / Math.max(1, requests)),
    youngPauseMs: {
      p50: pauses.length ? median(pauses) : null,
      p90: pauses.length ? percentile(pauses, 0.9) : null,
      max: pauses.length ? pauses[pauses.length - 1] : null,
    },
    survivedBytesMedian: young.length ? median(young.map((line) => field(line, "new_space_survived"))) : null,
    promotedBytesMedian: young.length ? median(young.map((line) => field(line, "promoted"))) : null,
    fullCollections: mine.length - young.length,
  };
}

export function round1(n) {
  return Math.round(n * 10) / 10;
}

export function round3(n) {
  return Math.round(n * 1000) / 1000;
}

export function signed(n, digits = 0) {
  return `${n >= 0 ? "+" : "−"}${Math.abs(n).toFixed(digits)}`;
}

export function machine(note) {
  const cpus = os.cpus();
  return {
    cpus: cpus.length,
    cpuModel: cpus[0]?.model ?? "unknown",
    memoryGiB: Math.round(os.totalmem() / 2 ** 30),
    os: `${os.type()} ${os.release()} ${os.arch()}`,
    node: process.version,
    loadAverageAtEnd: os.loadavg().map((n) => Math.round(n * 100) / 100),
    note,
  };
}

/**
 * Writes a benchmark's result, as JSON, to bench/results/<benchmark>-<result.date>.json, the
 * date's colons made dashes (decision-2026-12-05T19-35-12.345Z.json), and returns the file's path.
 * Each run has a file of its own: named by day alone, a second run that day replaced the first's.
 * A file of that name already there is an error, never overwritten.
 */
export function writeResult(benchmark, result) {
  mkdirSync(RESULTS, { recursive: true });
  const file = join(RESULTS, `${benchmark}-${result.date.replace(/:/g, "-")}.json`);
  writeFileSync(file, `${JSON.stringify(result, null, 2)}\n`, { flag: "wx" });
  return file;
}

export function log(line) {
  process.stderr.write(`${line}\n`);
}

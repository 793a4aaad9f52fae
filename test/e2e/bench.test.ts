/**
 * The benchmarks (bench/*.js) stopped by Ctrl-C or SIGTERM leave no `hookgate-bench-*` directory
 * and no process behind, and killed by SIGKILL no process. A run is stopped as soon as its servers
 * are up, long before it measures anything; no benchmark runs here otherwise, but for one second
 * of bench/decision.js's load at a time to show that it refuses answers other than the deny it
 * checked and that it turns its order round, and bench/cli-start.js at one sample, twice, in a copy
 * of bench/, to show that each run's results file is its own.
 */
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import {
  cpSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { constants } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { childEnv, endProcess, ROOT } from "../support/process.js";
import { tempDir, whenDone } from "../support/temp.js";

interface Proc {
  pid: number;
  ppid: number;
  /** Its process group: the one a Ctrl-C to the shell's foreground job signals. */
  pgrp: number;
  /** Its command's name, as the kernel keeps it. */
  name: string;
  /** When it started, in clock ticks since boot: tells a pid used again apart. */
  start: string;
  state: string;
}

/** A process as /proc/PID/stat shows it, or undefined once it is gone. */
function proc(pid: number): Proc | undefined {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  } catch {
    return undefined;
  }
  // The fields after the command's name, "(...)", which may hold spaces and parentheses.
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return {
    pid,
    state: fields[0] ?? "",
    ppid: Number(fields[1]),
    pgrp: Number(fields[2]),
    name: stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")")),
    start: fields[19] ?? "",
  };
}

/** A process's command line, as /proc/PID/cmdline holds it ("" once it is gone). */
function commandLine(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "utf8");
  } catch {
    return "";
  }
}

/** Every process under `pid`: its children, theirs, and so on. */
function descendants(pid: number): Proc[] {
  const all = readdirSync("/proc")
    .filter((name) => /^\d+$/.test(name))
    .map((name) => proc(Number(name)))
    .filter((p) => p !== undefined);
  const found: Proc[] = [];
  for (let parents = [pid]; parents.length > 0; ) {
    const children = all.filter((p) => parents.includes(p.ppid));
    found.push(...children);
    parents = children.map((p) => p.pid);
  }
  return found;
}

/** Still running: the same process (not its pid used again), and no zombie. */
const running = (p: Proc) => {
  const now = proc(p.pid);
  return now !== undefined && now.start === p.start && now.state !== "Z";
};

/** Rounds bench/remote.js would take minutes to run; it is stopped before the first. */
const REMOTE = [
  "bench/remote.js",
  "--rounds",
  "50",
  "--requests",
  "100000",
  "--warmup-rounds",
  "0",
  "--quiet-wait",
  "0",
];

interface Case {
  run: string;
  by: string;
  /** The program run (node by default) and its arguments. */
  command?: string;
  argv: readonly string[];
  signal: "SIGINT" | "SIGTERM" | "SIGHUP";
  /** Signalled as its process group (Ctrl-C in a shell), or it alone. */
  group: boolean;
  /** Its line on stderr once its servers are up. */
  up: RegExp;
  /** The processes under it, and the directories it made in the temporary directory, by then. */
  processes: number;
  dirs: number;
}

const CASES: Case[] = [
  {
    run: "bench/remote.js",
    by: "Ctrl-C (SIGINT to its process group)",
    argv: REMOTE,
    signal: "SIGINT",
    group: true,
    // Its first line once its servers answer, before any round.
    up: /^remote: /m,
    // The model and hook stub servers and the gateway; the run's directory and the gateway's data dir.
    processes: 3,
    dirs: 2,
  },
  {
    run: "bench/remote.js",
    by: "SIGTERM to it alone (a CI job's timeout)",
    argv: REMOTE,
    signal: "SIGTERM",
    group: false,
    up: /^remote: /m,
    processes: 3,
    dirs: 2,
  },
  {
    // Its servers, in sessions of their own, get no SIGHUP when the terminal closes: the run's
    // default death by it left them running.
    run: "bench/remote.js",
    by: "SIGHUP to it alone (its terminal closed)",
    argv: REMOTE,
    signal: "SIGHUP",
    group: false,
    up: /^remote: /m,
    processes: 3,
    dirs: 2,
  },
  {
    // npm runs the script with `sh -c`, and passes a signal on to that shell only: the script
    // execs bench/run.js, or the shell died of the SIGTERM and run.js, orphaned, ran on.
    run: "npm run bench (bench/run.js)",
    by: "SIGTERM to npm alone",
    command: "npm",
    argv: ["run", "bench"],
    signal: "SIGTERM",
    group: false,
    // bench/decision.js, the first, once its gateway and bare servers answer.
    up: /^decision: /m,
    // run.js, decision.js, its gateway, the bare server and the three of its work ladder; the
    // gateway's data dir.
    processes: 7,
    dirs: 1,
  },
];

interface Up {
  bench: ChildProcess;
  /** Its exit code, once it has exited. */
  exited: Promise<number | null>;
  /** The processes under it once `up` showed. */
  started: Proc[];
  /** Its stderr so far. */
  stderr: () => string;
}

/**
 * `command argv` in the repository, with `temp` as its TMPDIR, once `up` shows on its stderr
 * (in a process group of its own if `group`). It, and what was under it then, end with the test.
 */
async function startUntilUp(
  command: string,
  argv: readonly string[],
  up: RegExp,
  temp: string,
  group: boolean,
): Promise<Up> {
  const bench = spawn(command, argv, {
    cwd: ROOT,
    // npm: no update check (a request to its registry) and no log file in the home directory.
    env: childEnv({ TMPDIR: temp, npm_config_update_notifier: "false", npm_config_logs_max: "0" }),
    stdio: ["ignore", "ignore", "pipe"],
    // Its own process group, as a shell gives a job: Ctrl-C signals the whole group.
    detached: group,
  });
  let started: Proc[] = [];
  whenDone(async () => {
    await endProcess(bench);
    for (const p of started.filter(running)) process.kill(p.pid, "SIGKILL");
  });
  let stderr = "";
  bench.stderr.setEncoding("utf8");
  const exited = new Promise<number | null>((resolve) => bench.once("exit", resolve));
  await new Promise<void>((resolve, reject) => {
    bench.stderr.on("data", (chunk: string) => {
      stderr += chunk;
      if (up.test(stderr)) resolve();
    });
    void exited.then((code) => reject(new Error(`${argv[0]} exited with ${code}: ${stderr}`)));
  });
  started = descendants(bench.pid ?? 0);
  return { bench, exited, started, stderr: () => stderr };
}

describe("a benchmark stopped once its servers are up", () => {
  for (const { run, by, command, argv, signal, group, up, processes, dirs } of CASES) {
    it(`${run}, by ${by}, leaves no directory and no process`, async () => {
      const temp = tempDir("bench-tmp");
      const { bench, exited, started, stderr } = await startUntilUp(
        command ?? process.execPath,
        argv,
        up,
        temp,
        group,
      );
      expect(started).toHaveLength(processes);
      const made = readdirSync(temp);
      expect(made).toHaveLength(dirs);
      for (const name of made) expect(name).toMatch(/^hookgate-bench-/);
      // Half a second into its requests: a signal before the first one never met the race a
      // Ctrl-C to the whole group did (its servers gone, a request refused before its own
      // handler ran: exit 1, not 130), four runs in ten once its requests were in flight.
      await new Promise((resolve) => setTimeout(resolve, 500));
      if (group) process.kill(-(bench.pid ?? 0), signal);
      else bench.kill(signal);
      const code = await exited;
      expect(readdirSync(temp)).toEqual([]);
      expect(started.filter(running)).toEqual([]);
      expect(code, stderr()).toBe(128 + constants.signals[signal]);
    });
  }
});

/** Whether this machine has `setpriv --pdeathsig`, through which bench/common.js starts each child. */
const PARENT_DEATH_SIGNAL =
  spawnSync("setpriv", ["--pdeathsig", "SIGKILL", "--", "true"], { stdio: "ignore" }).status === 0;

describe("a benchmark killed by SIGKILL once its servers are up", () => {
  // It runs no exit handler (nor after the OOM killer or an abort), and its servers, in sessions
  // of their own, ran on for ever.
  it.skipIf(!PARENT_DEATH_SIGNAL)(
    "bench/remote.js's servers die with it (the kernel's parent-death signal; skipped without setpriv --pdeathsig)",
    async () => {
      const { bench, exited, started } = await startUntilUp(
        process.execPath,
        REMOTE,
        /^remote: /m,
        tempDir("bench-tmp"),
        false,
      );
      // The model and hook stub servers and the gateway.
      expect(started).toHaveLength(3);
      bench.kill("SIGKILL");
      await exited;
      for (const end = Date.now() + 10_000; started.some(running) && Date.now() < end; )
        await new Promise((resolve) => setTimeout(resolve, 50));
      expect(started.filter(running)).toEqual([]);
    },
  );

  // Before, the benchmark it was running ran on to its end.
  it.skipIf(!PARENT_DEATH_SIGNAL)(
    "bench/run.js's benchmark stops as on SIGTERM, its servers and directories removed (skipped without setpriv --pdeathsig)",
    async () => {
      const temp = tempDir("bench-tmp");
      const { bench, exited, started } = await startUntilUp(
        process.execPath,
        ["bench/run.js"],
        /^decision: /m,
        temp,
        false,
      );
      // decision.js, its gateway, the bare server and the three of its work ladder.
      expect(started).toHaveLength(6);
      expect(readdirSync(temp)).toHaveLength(1);
      bench.kill("SIGKILL");
      await exited;
      for (const end = Date.now() + 10_000; started.some(running) && Date.now() < end; )
        await new Promise((resolve) => setTimeout(resolve, 50));
      expect(started.filter(running)).toEqual([]);
      expect(readdirSync(temp)).toEqual([]);
    },
  );
});

describe("the directories of a benchmark that died with no exit handler", () => {
  it("are removed by the next run, by the pid they name; a running one's and others stay", () => {
    const temp = tempDir("bench-tmp");
    const gone = spawnSync(process.execPath, ["-e", "0"]).pid as number;
    const names = {
      orphan: `hookgate-bench-serve-${gone}-Ab12Cd`,
      running: `hookgate-bench-serve-${process.pid}-Ef34Gh`,
      unnamed: "hookgate-bench-serve-Ij56Kl",
    };
    for (const name of Object.values(names)) mkdirSync(join(temp, name, "data"), { recursive: true });
    const run = spawnSync(process.execPath, ["bench/worst-case.js", "--help"], {
      cwd: ROOT,
      env: childEnv({ TMPDIR: temp }),
    });
    expect(run.status).toBe(2);
    expect(readdirSync(temp).sort()).toEqual([names.running, names.unnamed].sort());
  });
});

describe("a benchmark given a flag it does not take", () => {
  it("names the flag and its own flags, exit 2, instead of Node's stack trace", () => {
    const run = spawnSync(process.execPath, ["bench/worst-case.js", "--help"], {
      cwd: ROOT,
      encoding: "utf8",
    });
    expect(run.status).toBe(2);
    expect(run.stderr).toBe(
      "worst-case.js: Unknown option '--help'; its flags: --rounds, --calls, --seconds, --policy\n",
    );
  });
});

describe("a benchmark stopped by Ctrl-C while it builds", () => {
  // coldstart.js builds its bundles before its first cold start: esbuild's service process, had the
  // benchmark started it itself (esbuild's JS API), would share its group and die of the same
  // Ctrl-C, and the build it was running would fail the benchmark (exit 1) before its SIGINT ran.
  it("bench/coldstart.js starts nothing in its own process group, and ends as interrupted", async () => {
    const temp = tempDir("bench-tmp");
    const bench = spawn(
      process.execPath,
      // More cold starts than it gets to: it is stopped at the first.
      ["bench/coldstart.js", "--samples", "200", "--warmup", "0", "--quiet-wait", "0"],
      { cwd: ROOT, env: childEnv({ TMPDIR: temp }), stdio: ["ignore", "ignore", "pipe"], detached: true },
    );
    const pid = bench.pid ?? 0;
    const seen = new Map<string, Proc>();
    whenDone(async () => {
      await endProcess(bench);
      for (const p of [...seen.values()].filter(running)) process.kill(p.pid, "SIGKILL");
    });
    let stderr = "";
    bench.stderr.setEncoding("utf8");
    bench.stderr.on("data", (chunk: string) => {
      stderr += chunk;
    });
    let code: number | null | undefined;
    const exited = new Promise<number | null>((resolve) => bench.once("exit", resolve)).then((c) => {
      code = c;
      return c;
    });
    // Its cold starts' child script is written once every bundle is built.
    const building = () =>
      !readdirSync(temp).some((dir) => existsSync(join(temp, dir, "child.mjs"))) && code === undefined;
    // Watched until one of its processes shares its group (then signalled at once, as a Ctrl-C
    // would be at that moment) or until its builds are done.
    let sharing: Proc[] = [];
    let before = new Set<string>();
    while (building()) {
      const now = descendants(pid);
      for (const p of now) seen.set(`${p.pid} ${p.start}`, p);
      // Seen in its group on two looks, running a program of its own: a child between its fork
      // and its setsid() is in it for a moment, still a copy of the benchmark, as every child of a
      // benchmark is.
      const own = commandLine(pid);
      const inGroup = now.filter((p) => p.pgrp === pid && ![own, ""].includes(commandLine(p.pid)));
      sharing = inGroup.filter((p) => before.has(`${p.pid} ${p.start}`));
      if (sharing.length > 0) break;
      before = new Set(inGroup.map((p) => `${p.pid} ${p.start}`));
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    expect(code, stderr).toBeUndefined();
    process.kill(-pid, "SIGINT");
    const exitCode = await exited;
    expect(readdirSync(temp)).toEqual([]);
    expect([...seen.values()].filter(running)).toEqual([]);
    expect(exitCode, stderr).toBe(130);
    expect(sharing.map((p) => p.name)).toEqual([]);
  });
});

describe("bench/decision.js given answers under load other than the deny it checked", () => {
  // autocannon counts an answer whose body is not the expected one (or a non-2xx) as a request
  // served, its latency among the others: the run reported their figures and ended 0.
  it("aborts, exit 1, naming the body mismatches, rather than count them", async () => {
    const temp = tempDir("bench-tmp");
    const policyPath = join(temp, "policy.json");
    const policy = readFileSync(join(ROOT, "bench", "policy.json"), "utf8");
    writeFileSync(policyPath, policy);
    const { exited, started, stderr } = await startUntilUp(
      process.execPath,
      [
        "bench/decision.js",
        "--policy",
        policyPath,
        "--rounds",
        "1",
        "--duration",
        "1",
        "--warmup",
        "1",
        "--ladder",
        "",
        "--quiet-wait",
        "0",
      ],
      /^decision: /m,
      temp,
      false,
    );
    // `serve` as a word: the bare server's bench/bare-server.js holds "serve" too, and whichever
    // started first was the one sent SIGHUP, which ended it.
    const gateway = started.find((p) => commandLine(p.pid).split("\0").includes("serve"));
    expect(gateway).toBeDefined();
    // Still no-rm-root's deny, with another reason: the checks before and after the load pass.
    const reason = "Deleting from / is never allowed";
    expect(policy).toContain(reason);
    writeFileSync(policyPath, policy.replace(reason, "Deleting from / is not allowed here"));
    process.kill(gateway?.pid ?? 0, "SIGHUP");
    const code = await exited;
    expect(stderr()).toMatch(/ [1-9]\d* body mismatches among \d+ answers under load/);
    expect(stderr()).toContain("not allowed here");
    expect(code, stderr()).toBe(1);
  });
});

describe("bench/decision.js's rounds", () => {
  // The gateway always ran first, and the bare server always right after it. Stopped in its
  // second round of three, it writes no results file over a real run's. A slowdown every server
  // shares is the host's: each round's line ends with the time of a fixed loop in the
  // benchmark's own process, taken after the round.
  it("run the gateway first in odd rounds and the bare server first in even ones, each line ending with the host's speed after it", async () => {
    const { bench, exited, stderr } = await startUntilUp(
      process.execPath,
      [
        "bench/decision.js",
        "--policy",
        "bench/policy.json",
        "--rounds",
        "3",
        "--duration",
        "1",
        "--warmup",
        "0",
        "--ladder",
        "",
        "--quiet-wait",
        "0",
      ],
      /^round 2\/3 /m,
      tempDir("bench-tmp"),
      false,
    );
    bench.kill("SIGTERM");
    expect(await exited, stderr()).toBe(143);
    const order = [...stderr().matchAll(/^round (\d)\/3 (\w+)/gm)].map((m) => `${m[1]} ${m[2]}`);
    expect(order).toEqual(["1 gateway", "1 bare", "2 bare"]);
    const speeds = [...stderr().matchAll(/^round 1\/3 \w+ .*; host loop after it (\d+(?:\.\d+)?) ns$/gm)];
    expect(speeds.map((m) => Number(m[1]) > 0)).toEqual([true, true]);
  });
});

/**
 * A copy of the repository's bench/ (its results left out) in a directory of its own, beside
 * links to what the benchmarks read (dist/, test/fixtures, node_modules, package.json): a run
 * there writes its results into that copy's bench/results/, never over a real run's.
 */
function benchCopy(): string {
  const root = tempDir("bench-copy");
  cpSync(join(ROOT, "bench"), join(root, "bench"), {
    recursive: true,
    filter: (source) => source !== join(ROOT, "bench", "results"),
  });
  for (const name of ["dist", "test", "node_modules", "package.json"])
    symlinkSync(join(ROOT, name), join(root, name));
  return root;
}

describe("a benchmark's results", () => {
  // Named by day alone, a second run's file replaced the first's, and figures quoted from the
  // first could no longer be checked against its file.
  it("go to a file of each run's own: two runs on one day leave two files", () => {
    const root = benchCopy();
    const written: string[] = [];
    for (let i = 0; i < 2; i++) {
      const run = spawnSync(process.execPath, ["bench/cli-start.js", "--samples", "1"], {
        cwd: root,
        encoding: "utf8",
        env: childEnv({ TMPDIR: tempDir("bench-tmp") }),
      });
      expect(run.status, run.stderr).toBe(0);
      written.push(/^written to (.+)$/m.exec(run.stdout)?.[1] ?? "");
    }
    const files = readdirSync(join(root, "bench", "results")).sort();
    expect(files).toHaveLength(2);
    expect(written.map((file) => file.slice(join(root, "bench", "results", "/").length)).sort()).toEqual(
      files,
    );
    for (const file of files) {
      const date = /^cli-start-(\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d\.\d{3}Z)\.json$/.exec(file)?.[1];
      expect(date, file).toBeDefined();
      // The name is the date the file holds, its colons made dashes.
      const result = JSON.parse(readFileSync(join(root, "bench", "results", file), "utf8")) as {
        date: string;
      };
      expect(result.date.replace(/:/g, "-")).toBe(date);
    }
  });
});

describe("npm run bench (bench/run.js) with benchmarks that fail", () => {
  // It ran on after a failure and ended 1, but its closing line named none: the failure was a
  // line on stderr minutes of output earlier.
  it("names each one that failed, and how, in its closing line, and ends 1", () => {
    const root = tempDir("bench-copy");
    mkdirSync(join(root, "bench"));
    symlinkSync(join(ROOT, "package.json"), join(root, "package.json"));
    for (const name of ["run.js", "common.js"]) cpSync(join(ROOT, "bench", name), join(root, "bench", name));
    // Every other script in bench/ (the benchmarks run.js runs among them) replaced by a stand-in
    // that ends at once: two fail, one with an exit code, one killed by a signal.
    const standIns: Record<string, string> = {
      "decision.js": "process.exit(3);\n",
      "fanout.js": 'process.kill(process.pid, "SIGKILL");\n',
    };
    for (const name of readdirSync(join(ROOT, "bench")).filter((n) => n.endsWith(".js"))) {
      if (name === "run.js" || name === "common.js") continue;
      writeFileSync(join(root, "bench", name), standIns[name] ?? "process.exit(0);\n");
    }
    const run = spawnSync(process.execPath, ["bench/run.js"], {
      cwd: root,
      encoding: "utf8",
      env: childEnv({ TMPDIR: tempDir("bench-tmp") }),
    });
    expect(run.status, run.stderr).toBe(1);
    const last = run.stdout.trimEnd().split("\n").at(-1) ?? "";
    expect(last).toMatch(/^npm run bench: \d+ s in all \(.*decision\.js \d+ s, .*\)/);
    expect(last).toMatch(/; 2 of \d+ failed: decision\.js \(exit 3\), fanout\.js \(killed by SIGKILL\)$/);
  });
});

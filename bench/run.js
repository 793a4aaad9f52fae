/**
 * `npm run bench`: every benchmark in bench/, one after the other (never in parallel: they
 * would share the cores they measure), each at its defaults. Under 5 minutes in total.
 * Runs on after one fails, names each that failed in its closing line, and exits 1; a benchmark
 * never fails on a timing, only on a wrong answer.
 */
import { spawn } from "node:child_process";
import os from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { STOP_SIGNALS, withParentDeathSignal } from "./common.js";

const HERE = dirname(fileURLToPath(import.meta.url));

/** Each one measures its own baseline in the same run (bench/README.md). */
const BENCHMARKS = [
  "decision.js",
  "scaling.js",
  "worst-case.js",
  "command-hook.js",
  "egress.js",
  "remote.js",
  "fanout.js",
  "enqueue.js",
  "coldstart.js",
  "cli-start.js",
];

/** The benchmark running now, which a signal to this process is passed on to. */
let current;
/** The signal that stopped the run, if one did: no benchmark starts after it. */
let stoppedBy;
// A signal is passed on: SIGTERM (a CI job's timeout) reaches this process only, and the benchmark
// it left running went on, its servers and directories with it; SIGHUP (the terminal closed) and
// SIGQUIT too. Each benchmark runs in a session and process group of its own, so a Ctrl-C (to
// the shell's foreground group) reaches it only through here:
// sharing this group, a benchmark could end of it before this handler ran, and the run, seeing
// an exit code and no signal yet, counted a failure and started the next one. Stopped, each
// benchmark cleans up after itself (bench/common.js), then this process exits.
for (const signal of STOP_SIGNALS) {
  process.on(signal, () => {
    stoppedBy = signal;
    if (current === undefined) process.exit(128 + os.constants.signals[signal]);
    current.kill(signal);
  });
}

const started = performance.now();
/** Each benchmark that failed and how ("decision.js (exit 1)"), for the closing line. */
const failed = [];
/** Seconds each benchmark took: the 5-minute budget is theirs to share. */
const seconds = [];
for (const name of BENCHMARKS) {
  process.stdout.write(`\n## bench/${name}\n\n`);
  const began = performance.now();
  const ended = await new Promise((resolve) => {
    // SIGTERM should this process die without passing a signal on (a SIGKILL): the benchmark stops
    // as on any other, its servers and directories removed.
    const [file, args] = withParentDeathSignal("SIGTERM", process.execPath, [join(HERE, name)]);
    current = spawn(file, args, { stdio: "inherit", detached: true });
    current.once("exit", (exitCode, signal) =>
      resolve(signal ? `killed by ${signal}` : exitCode !== 0 ? `exit ${exitCode}` : undefined),
    );
  });
  current = undefined;
  if (stoppedBy !== undefined) process.exit(128 + os.constants.signals[stoppedBy]);
  seconds.push(`${name} ${((performance.now() - began) / 1000).toFixed(0)} s`);
  if (ended !== undefined) {
    failed.push(`${name} (${ended})`);
    process.stderr.write(`bench/${name} failed (${ended})\n`);
  }
}
// The closing line names every benchmark that failed: a failure's own line on stderr is minutes of
// output above it.
const failures =
  failed.length > 0 ? `; ${failed.length} of ${BENCHMARKS.length} failed: ${failed.join(", ")}` : "";
process.stdout.write(
  `\nnpm run bench: ${((performance.now() - started) / 1000).toFixed(0)} s in all (${seconds.join(", ")})${failures}\n`,
);
process.exitCode = failed.length > 0 ? 1 : 0;

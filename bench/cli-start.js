/**
 * The CLI's start: what one `hookgate` command costs before it does anything, against a `node`
 * that does nothing, in one run. `hookgate send` is a command hook's whole run (Claude Code's
 * SessionStart and Setup, any agent that runs a command per event), so its start is the hook's
 * latency. Each target is a fresh `node` process, alternated round by round:
 *
 * - `node -e 0`: the floor, Node's own start.
 * - `hookgate --version`: the CLI's dispatch alone (bin.ts, cli.ts, help.ts).
 * - `hookgate send`: one Claude Code SessionEnd event (test/fixtures/claude-code) posted to a
 *   loopback server in this process that answers `{}`, and the answer printed.
 * - every command's modules imported: what each command's start loaded until run 32, when
 *   cli.ts imported every command's module up front (policy compiler, Hono, SQLite, undici).
 *
 *   node bench/cli-start.js [--samples 5] [--quiet-wait 0]
 *
 * Needs `npm run build` (it runs dist/entry/bin.js). Wall time from spawn to exit, and the
 * child's CPU (this process's waited-for children's time in /proc/self/stat, 10 ms ticks).
 * Checks that `send` printed the server's answer and the server got the event. Writes
 * bench/results/cli-start-<date>T<time>.json and prints a Markdown table; medians and ratios to
 * `node -e 0`, no thresholds.
 */
import { existsSync, readFileSync } from "node:fs";
import { createServer } from "node:http";
import { join } from "node:path";
import {
  childrenCpuTicks,
  createRun,
  log,
  machine,
  median,
  ROOT,
  round1,
  waitForQuiet,
  writeResult,
} from "./common.js";

const { fail, boundedInt, parseFlags, spawnChild } = createRun("cli-start.js");

const { values: flags } = parseFlags({
  options: {
    samples: { type: "string", default: "5" },
    "quiet-wait": { type: "string", default: "0" },
  },
});
const options = {
  samples: boundedInt("samples", flags.samples, 1, 200),
  quietWaitSeconds: boundedInt("quiet-wait", flags["quiet-wait"], 0, 120),
};

const BIN = join(ROOT, "dist", "entry", "bin.js");
if (!existsSync(BIN)) fail("dist/ is missing: run npm run build first");
const EVENT = readFileSync(join(ROOT, "test", "fixtures", "claude-code", "2.1.332", "SessionEnd.json"));
const EVERY_COMMAND = [
  "policy-commands",
  "dlq",
  "doctor",
  "egress-check",
  "init",
  "policy-test",
  "replay",
  "send",
].map((name) => JSON.stringify(join(ROOT, "dist", "entry", `${name}.js`)));

let received = 0;
const server = createServer((req, res) => {
  req.resume();
  req.on("end", () => {
    received++;
    res.writeHead(200, { "content-type": "application/json" }).end("{}");
  });
});
await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
const url = `http://127.0.0.1:${server.address().port}/v1/hooks`;

const TARGETS = [
  { name: "`node -e 0`", args: ["-e", "0"] },
  { name: "`hookgate --version`", args: [BIN, "--version"] },
  {
    name: "`hookgate send`, one event to loopback",
    args: [BIN, "send", "--url", url],
    stdin: EVENT,
    out: "{}",
  },
  {
    name: "every command's modules imported (each start until run 32)",
    args: ["--input-type=module", "-e", EVERY_COMMAND.map((m) => `await import(${m});`).join("")],
  },
];

function sample(target) {
  return new Promise((resolve) => {
    const ticks = childrenCpuTicks();
    const began = performance.now();
    const child = spawnChild(process.execPath, target.args, {
      cwd: ROOT,
      stdio: ["pipe", "pipe", "pipe"],
      timed: true,
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => {
      stdout += d;
    });
    child.stderr.on("data", (d) => {
      stderr += d;
    });
    child.stdin.end(target.stdin ?? "");
    child.once("exit", (code) => {
      const ms = performance.now() - began;
      if (code !== 0) fail(`${target.name} exited with ${code}: ${stderr}`);
      if (target.out !== undefined && stdout !== target.out)
        fail(`${target.name} printed ${JSON.stringify(stdout)}, not ${target.out} (stderr: ${stderr})`);
      resolve({ ms, cpuMs: (childrenCpuTicks() - ticks) * 10 });
    });
  });
}

const quietSeconds = await waitForQuiet([process.pid], options.quietWaitSeconds);
log(`cli-start: 1 warm-up round, then ${options.samples} rounds of ${TARGETS.length} fresh processes`);
const samples = TARGETS.map(() => []);
for (let round = -1; round < options.samples; round++) {
  // Each round in another order, so no target always follows the same one.
  const order = TARGETS.map((_, i) => (i + Math.max(round, 0)) % TARGETS.length);
  for (const i of order) {
    const s = await sample(TARGETS[i]);
    if (round >= 0) samples[i].push(s);
  }
}
server.close();
const sends = options.samples + 1;
if (received !== sends) fail(`the loopback server got ${received} events, not ${sends}`);

const floor = median(samples[0].map((s) => s.ms));
const rows = TARGETS.map((target, i) => {
  const ms = median(samples[i].map((s) => s.ms));
  const paired = median(samples[i].map((s, r) => s.ms / samples[0][r].ms));
  return {
    target: target.name,
    wallMs: round1(ms),
    cpuMs: round1(median(samples[i].map((s) => s.cpuMs))),
    vsNode: round1(ms / floor),
    pairedVsNode: round1(paired),
  };
});
const lines = [
  "| target | wall ms | CPU ms | ÷ `node -e 0` (paired) |",
  "| --- | ---: | ---: | ---: |",
  ...rows.map((r) => `| ${r.target} | ${r.wallMs} | ${r.cpuMs} | ${r.vsNode}× (${r.pairedVsNode}×) |`),
];
process.stdout.write(
  `\nMedians of ${options.samples} fresh processes per target (CPU in 10 ms ticks):\n\n${lines.join("\n")}\n\n`,
);
const file = writeResult("cli-start", {
  date: new Date().toISOString(),
  options,
  quietSeconds,
  rows,
  machine: machine("cli-start.js"),
});
process.stdout.write(`written to ${file}\n`);

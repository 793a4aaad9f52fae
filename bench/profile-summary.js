/**
 * Top self-time functions of a V8 .cpuprofile (from `node --cpu-prof`, or
 * `node bench/decision.js --cpu-prof`), and self time per file, so a slow benchmark says
 * where its time goes without opening a profiler.
 *
 *   node bench/profile-summary.js FILE.cpuprofile [--top 25]
 */
import { readFile } from "node:fs/promises";
import { relative } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { top: { type: "string", default: "25" } },
});
const [file] = positionals;
if (!file) {
  process.stderr.write("usage: node bench/profile-summary.js FILE.cpuprofile [--top 25]\n");
  process.exit(2);
}
const top = Number(values.top);

const profile = JSON.parse(await readFile(file, "utf8"));
const nodes = new Map(profile.nodes.map((n) => [n.id, n]));
const parents = new Map();
for (const n of profile.nodes) for (const child of n.children ?? []) parents.set(child, n.id);

// Self time: each sample is charged to the node on top of the stack, for the delta that follows it.
const selfMicros = new Map();
let totalMicros = 0;
for (let i = 0; i < profile.samples.length; i++) {
  const delta = profile.timeDeltas[i + 1] ?? 0;
  selfMicros.set(profile.samples[i], (selfMicros.get(profile.samples[i]) ?? 0) + delta);
  totalMicros += delta;
}

// Percentages are of busy time: "(idle)" is the event loop waiting for work, not a cost.
let idleMicros = 0;
const byFunction = new Map();
const byFile = new Map();
const byCaller = new Map();
for (const [id, micros] of selfMicros) {
  const frame = nodes.get(id).callFrame;
  if (frame.functionName === "(idle)") {
    idleMicros += micros;
    continue;
  }
  const fn = describe(frame);
  const where = shortUrl(frame.url) || frame.functionName;
  byFunction.set(fn, (byFunction.get(fn) ?? 0) + micros);
  byFile.set(where, (byFile.get(where) ?? 0) + micros);
  // Native frames (writev, ...) say little alone: name the JavaScript that called them.
  if (!frame.url) {
    const caller = callerChain(id, 3);
    const key = `${fn}  <-  ${caller}`;
    byCaller.set(key, (byCaller.get(key) ?? 0) + micros);
  }
}
const busyMicros = totalMicros - idleMicros;

const print = (title, map, n) => {
  process.stdout.write(`\n${title}\n`);
  for (const [name, micros] of [...map].sort((a, b) => b[1] - a[1]).slice(0, n)) {
    process.stdout.write(
      `${((100 * micros) / busyMicros).toFixed(1).padStart(5)}%  ${(micros / 1000).toFixed(0).padStart(7)} ms  ${name}\n`,
    );
  }
};
process.stdout.write(
  `${file}: ${(totalMicros / 1e6).toFixed(1)} s sampled, ${(idleMicros / 1e6).toFixed(1)} s idle; ` +
    "percentages are of the busy time\n",
);
print("self time by function", byFunction, top);
print("self time by file", byFile, top);
print("native frames by calling JavaScript", byCaller, Math.min(top, 12));

function describe(frame) {
  return `${frame.functionName || "(anonymous)"}  ${shortUrl(frame.url)}${frame.url ? `:${frame.lineNumber + 1}` : ""}`;
}

/** The nearest JavaScript callers, then the nearest frame outside Node's own internals. */
function callerChain(id, depth) {
  const names = [];
  let current = parents.get(id);
  while (current !== undefined) {
    const frame = nodes.get(current).callFrame;
    if (frame.url && names.length < depth) names.push(describe(frame));
    else if (frame.url && !frame.url.startsWith("node:")) {
      names.push("...", describe(frame));
      break;
    }
    current = parents.get(current);
  }
  return names.join(" <- ") || "(no JavaScript caller)";
}

function shortUrl(url) {
  if (!url) return "";
  const path = url.startsWith("file://") ? fileURLToPath(url) : url;
  const nm = path.lastIndexOf("node_modules/");
  if (nm !== -1) return path.slice(nm);
  return path.startsWith("/") ? relative(process.cwd(), path) : path;
}

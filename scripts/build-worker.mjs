#!/usr/bin/env node
/**
 * Builds the Cloudflare Worker that wrangler uploads (wrangler.toml runs this as its custom build
 * and uploads the output unbundled): src/entry/workers.ts as ESM for workerd (browser platform,
 * the `workerd` / `worker` export conditions, minified), code-split. The main module `worker.js`
 * is what every cold start evaluates; what the Worker loads with import() on first use (the regex
 * engine, the egress guard, remote actions, the deliverer: src/entry/workers.ts) lands in
 * `chunks/`, which wrangler uploads beside it as further ES modules.
 *
 * Writes the modules and esbuild's metafile (meta.json) to the out dir and prints raw and gzip
 * sizes of the main module (with any chunk it imports statically) and of the whole upload. Fails
 * when the main module is over issue 10's budget (64 KiB gzip), and when any module holds a
 * Node-only module: an input under node_modules/undici or node_modules/@aws-sdk, or an import of
 * a Node built-in (`node:*` or a bare `fs`, `crypto`...), which the Workers runtime only has
 * behind `nodejs_compat` (not enabled: wrangler.toml).
 *
 *   node scripts/build-worker.mjs [--outdir DIR] [--entry FILE] [--json]
 *
 * `--json` prints one JSON summary line instead of the text report (for tests and bench/).
 */
import { readFileSync, writeFileSync } from "node:fs";
import { builtinModules } from "node:module";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { gzipSync } from "node:zlib";
import { build } from "esbuild";
import { lazyEngines } from "./lazy-engines.mjs";
import { emptyOutDir } from "./out-dir.mjs";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const { values } = parseArgs({
  options: { outdir: { type: "string" }, entry: { type: "string" }, json: { type: "boolean" } },
});
const defaultOutdir = resolve(root, "dist-worker/esbuild");
const outdir = resolve(root, values.outdir ?? defaultOutdir);
const entry = resolve(root, values.entry ?? "src/entry/workers.ts");
const outfile = join(outdir, "worker.js");

/** Issue 10: the Worker's main module (what a cold start evaluates) stays at most 64 KiB gzip. */
const GZIP_BUDGET = 64 * 1024;
const FORBIDDEN_INPUT = /(^|\/)node_modules\/(undici|@aws-sdk)\//;
/**
 * The pattern engines and the Bash splitter's shell-quote, which only chunks loaded on demand may
 * hold (scripts/lazy-engines.mjs).
 */
const LAZY_INPUT = /(^|\/)node_modules\/(re2js|minimatch|shell-quote)\//;
const builtins = new Set(builtinModules.flatMap((m) => [m, `node:${m}`]));
const isBuiltin = (path) =>
  path.startsWith("node:") || builtins.has(path) || builtins.has(path.split("/")[0]);

const refused = emptyOutDir(outdir, root, defaultOutdir, "worker.js");
if (refused) {
  console.error(`build-worker: ${refused}`);
  process.exit(1);
}
let result;
try {
  result = await build({
    absWorkingDir: root,
    entryPoints: { worker: entry },
    outdir,
    bundle: true,
    splitting: true,
    chunkNames: "chunks/[name]-[hash]",
    format: "esm",
    platform: "browser",
    conditions: ["workerd", "worker", "browser"],
    target: "es2022",
    minify: true,
    legalComments: "none",
    // Kept out of the bundle so that the check below sees and names them instead of esbuild
    // failing to resolve them.
    external: ["node:*", ...builtinModules],
    metafile: true,
    logLevel: "silent",
    plugins: [lazyEngines(root)],
  });
} catch (e) {
  console.error(`build-worker: esbuild failed:\n${e.message}`);
  process.exit(1);
}
writeFileSync(join(outdir, "meta.json"), JSON.stringify(result.metafile));

const problems = [];
for (const [input, info] of Object.entries(result.metafile.inputs)) {
  if (FORBIDDEN_INPUT.test(input)) problems.push(`bundles ${input}`);
  for (const imported of info.imports)
    if (isBuiltin(imported.path)) problems.push(`${input} imports ${imported.path}`);
}

const outputs = result.metafile.outputs;
const mainOutput = relative(root, outfile);
/** The output files a module loads before its code runs: its static import closure. */
function staticClosure(file, seen = new Set()) {
  if (seen.has(file)) return seen;
  seen.add(file);
  for (const i of outputs[file]?.imports ?? [])
    if (i.kind === "import-statement" && !i.external) staticClosure(i.path, seen);
  return seen;
}
function sizes(files) {
  let raw = 0;
  let gzip = 0;
  for (const file of files) {
    const bytes = readFileSync(join(root, file));
    raw += bytes.length;
    gzip += gzipSync(bytes, { level: 9 }).length;
  }
  return { raw, gzip, files: files.map((f) => relative(outdir, join(root, f))) };
}
const cold = [...staticClosure(mainOutput)];
for (const file of cold)
  for (const input of Object.keys(outputs[file]?.inputs ?? {}))
    if (LAZY_INPUT.test(input)) problems.push(`the main module holds ${input}, a module to load on demand`);
const main = sizes(cold);
const total = sizes(Object.keys(outputs).filter((f) => f.endsWith(".js")));
const overBudget = main.gzip > GZIP_BUDGET;
if (overBudget)
  problems.push(`the main module is ${main.gzip} bytes gzip, over the budget of ${GZIP_BUDGET}`);

const kib = (n) => `${(n / 1024).toFixed(1)} KiB`;
if (values.json) {
  console.log(
    JSON.stringify({
      outfile,
      metafile: join(outdir, "meta.json"),
      raw: main.raw,
      gzip: main.gzip,
      main,
      total,
      gzipBudget: GZIP_BUDGET,
      overBudget,
      problems,
    }),
  );
} else {
  const budget = overBudget
    ? `OVER the 64 KiB gzip budget by ${kib(main.gzip - GZIP_BUDGET)}`
    : "within the 64 KiB gzip budget";
  console.log(
    `build-worker: ${relative(root, outdir)}/\n` +
      `  main module (what a cold start evaluates): ${kib(main.raw)} raw, ${kib(main.gzip)} gzip (${budget})\n` +
      `  total upload, ${total.files.length} modules: ${kib(total.raw)} raw, ${kib(total.gzip)} gzip`,
  );
  const files = Object.keys(outputs).filter((f) => f.endsWith(".js"));
  for (const [title, group] of [
    ["main module", files.filter((f) => cold.includes(f))],
    ["loaded on first use", files.filter((f) => !cold.includes(f))],
  ]) {
    console.log(`  ${title}; each file with its largest inputs (minified bytes):`);
    for (const file of group) {
      const { raw, gzip } = sizes([file]);
      console.log(`    ${relative(outdir, join(root, file))}: ${kib(raw)} raw, ${kib(gzip)} gzip`);
      const heaviest = Object.entries(outputs[file].inputs)
        .sort(([, a], [, b]) => b.bytesInOutput - a.bytesInOutput)
        .slice(0, 3);
      for (const [input, { bytesInOutput }] of heaviest)
        console.log(`    ${kib(bytesInOutput).padStart(11)}  ${input}`);
    }
  }
}
if (problems.length > 0) {
  console.error(`build-worker: refusing the bundle:\n  ${problems.join("\n  ")}`);
  process.exit(1);
}

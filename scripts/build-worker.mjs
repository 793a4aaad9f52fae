#!/usr/bin/env node
/**
 * Bundles the Cloudflare Worker (src/entry/workers.ts) the way workerd loads it: one ESM file,
 * browser platform with the `workerd` / `worker` export conditions, minified. Writes the bundle
 * and its esbuild metafile (meta.json) to the out dir, prints raw and gzip sizes, and fails when
 * the bundle holds a Node-only module: any input under node_modules/undici or
 * node_modules/@aws-sdk, or any import of a Node built-in (`node:*` or a bare `fs`, `crypto`...),
 * which the Workers runtime only has behind `nodejs_compat` (not enabled: wrangler.toml).
 * Issue 10's budget (64 KiB gzip) is reported, not enforced: re2js alone is about 64 KiB gzip.
 *
 *   node scripts/build-worker.mjs [--outdir DIR] [--entry FILE] [--json]
 *
 * `--json` prints one JSON summary line instead of the text report (for tests).
 */
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { builtinModules } from "node:module";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { gzipSync } from "node:zlib";
import { build } from "esbuild";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const { values } = parseArgs({
  options: { outdir: { type: "string" }, entry: { type: "string" }, json: { type: "boolean" } },
});
const outdir = resolve(root, values.outdir ?? "dist-worker/esbuild");
const entry = resolve(root, values.entry ?? "src/entry/workers.ts");
const outfile = join(outdir, "worker.js");

/** Issue 10: the Worker bundle stays at most 64 KiB gzip. */
const GZIP_BUDGET = 64 * 1024;
const FORBIDDEN_INPUT = /(^|\/)node_modules\/(undici|@aws-sdk)\//;
const builtins = new Set(builtinModules.flatMap((m) => [m, `node:${m}`]));
const isBuiltin = (path) => path.startsWith("node:") || builtins.has(path) || builtins.has(path.split("/")[0]);

rmSync(outdir, { recursive: true, force: true });
mkdirSync(outdir, { recursive: true });
let result;
try {
  result = await build({
    absWorkingDir: root,
    entryPoints: [entry],
    outfile,
    bundle: true,
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

const bytes = readFileSync(outfile);
const raw = bytes.length;
const gzip = gzipSync(bytes, { level: 9 }).length;
const overBudget = gzip > GZIP_BUDGET;

const kib = (n) => `${(n / 1024).toFixed(1)} KiB`;
if (values.json) {
  console.log(JSON.stringify({ outfile, metafile: join(outdir, "meta.json"), raw, gzip, overBudget, problems }));
} else {
  const budget = overBudget ? `OVER the 64 KiB gzip budget by ${kib(gzip - GZIP_BUDGET)}` : "within the 64 KiB gzip budget";
  console.log(`build-worker: ${relative(root, outfile)} ${kib(raw)} raw, ${kib(gzip)} gzip (${budget})`);
  const heaviest = Object.entries(result.metafile.outputs[relative(root, outfile)]?.inputs ?? {})
    .sort(([, a], [, b]) => b.bytesInOutput - a.bytesInOutput)
    .slice(0, 8);
  console.log("  largest inputs (minified bytes in the bundle):");
  for (const [input, { bytesInOutput }] of heaviest) console.log(`  ${kib(bytesInOutput).padStart(9)}  ${input}`);
}
if (problems.length > 0) {
  console.error(`build-worker: refusing the bundle:\n  ${problems.join("\n  ")}`);
  process.exit(1);
}

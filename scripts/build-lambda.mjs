#!/usr/bin/env node
/**
 * Bundles the two Lambda handlers (src/entry/lambda-http.ts, src/entry/lambda-sqs.ts) into
 * dist-lambda/ for nodejs22.x: ESM, everything bundled (the AWS SDK too: no layer or runtime
 * copy is assumed), with code splitting so undici and the AWS SDK sit in chunks that the handlers
 * `import()` on first use and cold start never parses, and so do the pattern engines (re2js,
 * minimatch: scripts/lazy-engines.mjs) and the Bash splitter (shell-command.ts, shell-quote),
 * loaded only for a policy that has a regex, a path glob or a `Bash(…)` rule.
 * Prints raw and gzip sizes, and fails if better-sqlite3 is reachable or a lazy module got pulled
 * into a handler's static imports.
 *
 *   node scripts/build-lambda.mjs [--outdir DIR]
 *   HOOKGATE_POLICY_FILE=policy.json node scripts/build-lambda.mjs   # bakes the policy in
 */
import { readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { gzipSync } from "node:zlib";
import { build } from "esbuild";
import { lazyEngines } from "./lazy-engines.mjs";
import { emptyOutDir } from "./out-dir.mjs";

/**
 * What is wrong with what the build was given, said alone and exit 1: a stack trace around it
 * pointed into this script, where the fix is in the environment or the command line.
 */
function fail(message) {
  console.error(`build-lambda: ${message}`);
  process.exit(1);
}

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
let values;
try {
  ({ values } = parseArgs({ options: { outdir: { type: "string" } } }));
} catch (e) {
  fail(e.message);
}
const defaultOutdir = resolve(root, "dist-lambda");
const outdir = resolve(root, values.outdir ?? defaultOutdir);

/** Modules a handler may only reach through `import()`; better-sqlite3 it may not reach at all. */
const LAZY = /node_modules\/(@aws-sdk|@smithy|@aws-crypto|undici|re2js|minimatch|shell-quote)\//;
const FORBIDDEN = /node_modules\/better-sqlite3\//;

function bakedPolicy() {
  const path = process.env.HOOKGATE_POLICY_FILE;
  if (!path) return undefined;
  // As `check` reads a policy (readJsonText): UTF-8 only, a byte-order mark dropped. Read
  // leniently, a Latin-1 `ü` would be baked in as U+FFFD and its pattern match nothing.
  let bytes;
  try {
    bytes = readFileSync(resolve(path));
  } catch (e) {
    fail(`HOOKGATE_POLICY_FILE ${path} cannot be read (${e.message})`);
  }
  let text;
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch (e) {
    fail(
      `HOOKGATE_POLICY_FILE ${path} is not UTF-8 (${e.message}): save it as UTF-8; hookgate check says where`,
    );
  }
  try {
    JSON.parse(text);
  } catch (e) {
    // V8 gives a character offset (or none), which a person editing the file cannot count to.
    fail(`HOOKGATE_POLICY_FILE ${path} is not JSON: ${e.message}; hookgate check says where`);
  }
  return text;
}

const policy = bakedPolicy();
const refused = emptyOutDir(outdir, root, defaultOutdir, "lambda-http.mjs");
if (refused) fail(refused);
const ENTRIES = { "lambda-http": "src/entry/lambda-http.ts", "lambda-sqs": "src/entry/lambda-sqs.ts" };
const result = await build({
  absWorkingDir: root,
  entryPoints: ENTRIES,
  outdir,
  bundle: true,
  splitting: true,
  format: "esm",
  platform: "node",
  target: "node22",
  // Lambda picks `.mjs` as ESM without a package.json; the handler stays `lambda-http.handler`.
  outExtension: { ".js": ".mjs" },
  chunkNames: "chunks/[name]-[hash]",
  // ESM builds where a package has one (the AWS SDK does); CJS ones (undici) still need `require`
  // for Node built-ins, which an ESM bundle lacks.
  mainFields: ["module", "main"],
  banner: {
    js: 'import { createRequire as __hookgateCreateRequire } from "node:module"; const require = __hookgateCreateRequire(import.meta.url);',
  },
  define: { __HOOKGATE_BUNDLED_POLICY__: policy === undefined ? "undefined" : JSON.stringify(policy) },
  minify: true,
  keepNames: true,
  legalComments: "none",
  metafile: true,
  logLevel: "warning",
  plugins: [lazyEngines(root)],
});

const outputs = result.metafile.outputs;
const problems = new Set();
/** `@aws-sdk/client-sqs`, `undici`: the package an input path belongs to. */
const packageOf = (input) => input.match(/node_modules\/((?:@[^/]+\/)?[^/]+)/)?.[1] ?? input;
for (const [file, output] of Object.entries(outputs)) {
  for (const input of Object.keys(output.inputs))
    if (FORBIDDEN.test(input)) problems.add(`${file} bundles ${packageOf(input)}`);
}

/** The output files a handler loads before its first line runs: its static import closure. */
function staticClosure(file) {
  const seen = new Set();
  const visit = (f) => {
    if (seen.has(f)) return;
    seen.add(f);
    for (const i of outputs[f]?.imports ?? [])
      if (i.kind === "import-statement" && !i.external) visit(i.path);
  };
  visit(file);
  return seen;
}

const size = (file) => {
  const bytes = readFileSync(join(root, file));
  return { raw: statSync(join(root, file)).size, gzip: gzipSync(bytes).length };
};
const kib = (n) => `${(n / 1024).toFixed(1)} KiB`;
const rows = [];
const handlers = new Set(Object.values(ENTRIES));
for (const [file, output] of Object.entries(outputs)) {
  // Modules reached by `import()` are entry points too; only the handlers' closures count here.
  if (!handlers.has(output.entryPoint)) continue;
  const closure = staticClosure(file);
  for (const f of closure)
    for (const input of Object.keys(outputs[f]?.inputs ?? {}))
      if (LAZY.test(input)) problems.add(`${file} loads ${packageOf(input)} at cold start`);
  const cold = [...closure].map(size).reduce((a, b) => ({ raw: a.raw + b.raw, gzip: a.gzip + b.gzip }));
  rows.push(`${relative(outdir, join(root, file))}: cold start ${kib(cold.raw)} (${kib(cold.gzip)} gzip)`);
}
const all = Object.keys(outputs)
  .map(size)
  .reduce((a, b) => ({ raw: a.raw + b.raw, gzip: a.gzip + b.gzip }));

if (problems.size > 0) {
  console.error(`build-lambda: refusing the bundle:\n  ${[...problems].join("\n  ")}`);
  process.exit(1);
}
console.log(`build-lambda: ${relative(root, outdir)}/${policy === undefined ? "" : " (policy baked in)"}`);
for (const row of rows) console.log(`  ${row}`);
console.log(`  all files, lazy chunks included: ${kib(all.raw)} (${kib(all.gzip)} gzip)`);

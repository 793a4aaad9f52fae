/**
 * What a decision leaves behind for the garbage collector (run `npm run build` first: the built
 * runHookRoute runs in a child `node --trace-gc-nvp`). On Node 20's V8 an object spread followed
 * by a property of the literal's own (`{ ...outcome, bodyUnread }`, which runHookRoute returned)
 * made every decision's objects outlive young-generation collections: 30,000 decisions one after
 * another promoted 130–190 KB to the old generation at each, against about 15 KB without it
 * (bench/HISTORY.md, "A spread then a property"). A memory figure, not a time: the decisions run
 * one at a time, so what survives a collection does not depend on how fast they ran.
 */
import { spawnSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";
// @ts-expect-error: bench/ is plain JavaScript with no declarations.
import { gcSummary } from "../../bench/common.js";
import { ROOT } from "../support/process.js";
import { tempDir } from "../support/temp.js";

const DECISIONS = 30_000;

/** 30,000 `rm -rf /` decisions on bench/policy-200.json through the built runHookRoute, awaited one by one. */
const SCRIPT = `
import { readFileSync } from "node:fs";
const root = process.argv[2];
const dist = (path) => import(new URL("dist/" + path, root));
const { loadPolicy } = await dist("core/policy.js");
const { runHookRoute } = await dist("http/hook-route.js");
const { nodeSha256 } = await dist("adapters/hash/node-crypto.js");
const { createJsonLogger } = await dist("adapters/log/json-lines.js");
const loaded = await loadPolicy(readFileSync(new URL("bench/policy-200.json", root), "utf8"), {
  env: () => undefined,
  sha256: nodeSha256,
});
if (!loaded.ok) throw new Error(JSON.stringify(loaded.error));
const policy = loaded.value.policy;
const event = JSON.parse(readFileSync(new URL("test/fixtures/claude-code/2.1.332/PreToolUse.json", root), "utf8"));
event.tool_input.command = "rm -rf /";
const text = JSON.stringify(event);
let n = 0;
const deps = {
  policy: () => policy,
  clock: { now: Date.now, monotonic: () => performance.now() },
  newId: () => "decision-" + n++,
  sha256: nodeSha256,
  logger: createJsonLogger({ write() {} }),
};
const request = {
  authorization: "Bearer hookgate-dev-token",
  contentType: "application/json",
  readBody: async () => ({ ok: true, text }),
};
let denied = 0;
for (let i = 0; i < ${DECISIONS}; i++) {
  const outcome = await runHookRoute(deps, undefined, request);
  if (outcome.answer.body.includes('"permissionDecision":"deny"')) denied++;
}
process.stderr.write(JSON.stringify({ denied }) + "\\n");
`;

describe("a decision's objects and the young generation", () => {
  it("are not promoted at every young collection, decision after decision", () => {
    const dir = tempDir("hook-route-gc");
    const script = join(dir, "decide.mjs");
    writeFileSync(script, SCRIPT);
    const run = spawnSync(process.execPath, ["--trace-gc-nvp", script, pathToFileURL(ROOT).href], {
      encoding: "utf8",
      timeout: 120_000,
      maxBuffer: 64 * 1024 * 1024,
    });
    expect(run.status, run.stderr).toBe(0);
    // Every decision was the rule's deny: the loop ran the whole path, not a refusal.
    expect(JSON.parse(run.stderr.trim().split("\n").at(-1) ?? "{}")).toEqual({ denied: DECISIONS });
    const lines = run.stdout.split("\n").filter((line) => line.startsWith("[") && line.includes(" pause="));
    const gc = gcSummary(lines, DECISIONS);
    expect(gc.youngCollections).toBeGreaterThan(10);
    expect(gc.promotedBytesMedian).toBeLessThan(64 * 1024);
  });
});

/**
 * infra/cloudflare/create-resources.sh as an operator runs it, with an `npx` of this test's first
 * on PATH that records each call's arguments and the wrangler settings it was given, instead of
 * reaching Cloudflare: the script must not leave wrangler's telemetry on.
 */
import { execFileSync } from "node:child_process";
import { chmodSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { childEnv, ROOT } from "../support/process.js";
import { tempDir } from "../support/temp.js";

/** The lines the recording `npx` wrote, one per call: the three settings, then its arguments. */
function runScript(env: Record<string, string> = {}): string[] {
  const dir = tempDir("cf-resources");
  const log = join(dir, "calls.log");
  const npx = join(dir, "npx");
  writeFileSync(
    npx,
    [
      "#!/bin/sh",
      'printf "%s %s %s | %s\\n" "${WRANGLER_SEND_METRICS-unset}" "${WRANGLER_SEND_ERROR_REPORTS-unset}" "${CLOUDFLARE_CF_FETCH_ENABLED-unset}" "$*" >> "$CALLS_LOG"',
      "",
    ].join("\n"),
  );
  chmodSync(npx, 0o755);
  execFileSync("bash", [join(ROOT, "infra/cloudflare/create-resources.sh")], {
    cwd: dir,
    env: childEnv({ ...env, PATH: `${dir}:${process.env.PATH ?? ""}`, CALLS_LOG: log }),
  });
  return readFileSync(log, "utf8").trimEnd().split("\n");
}

describe("infra/cloudflare/create-resources.sh", () => {
  it("runs every wrangler command with metrics, error reports and the cf fetch off", () => {
    const calls = runScript();
    expect(calls).toHaveLength(3);
    for (const call of calls) expect(call).toMatch(/^false false false \| wrangler /);
  });

  it("leaves a setting the operator gave as it is", () => {
    const calls = runScript({ WRANGLER_SEND_METRICS: "true" });
    for (const call of calls) expect(call).toMatch(/^true false false \| wrangler /);
  });
});

/**
 * The shared decision table (test/fixtures/decisions.json) against the Node app: each request,
 * under its policy, gets exactly the recorded status, content type and body. The Worker is held
 * to the same table inside workerd (test/workers/hooks.test.ts), and the Lambda handler with each
 * event shape (test/runtime/lambda-http.test.ts), so every runtime answers a hook, bad input
 * included, byte for byte alike. `UPDATE_DECISIONS=1` rewrites the expected answers from this app.
 */
import { randomUUID } from "node:crypto";
import { readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { isDialect } from "../../src/core/hook-event.js";
import { loadPolicy } from "../../src/core/policy.js";
import { createApp } from "../../src/http/app.js";
import type { DecisionCase } from "../support/decision-case.js";
import { sha256 } from "../support/policy.js";

const TABLE = fileURLToPath(new URL("../fixtures/decisions.json", import.meta.url));
const table = JSON.parse(readFileSync(TABLE, "utf8")) as { about: string; cases: DecisionCase[] };
const update = process.env.UPDATE_DECISIONS === "1";

async function answer(c: DecisionCase) {
  const loaded = await loadPolicy(JSON.stringify(c.policy), { env: () => undefined, sha256 });
  if (!loaded.ok) throw new Error(`${c.name}: policy invalid: ${JSON.stringify(loaded.error)}`);
  const policy = loaded.value.policy;
  const app = createApp({
    policy: () => policy,
    clock: { now: Date.now, monotonic: () => performance.now() },
    newId: randomUUID,
    sha256,
    logger: { log: () => {} },
  });
  const res = await app.request(`http://gateway.test${c.request.path}`, {
    method: c.request.method,
    headers: c.request.headers,
    body: c.request.bodyBase64 === undefined ? c.request.body : Buffer.from(c.request.bodyBase64, "base64"),
  });
  return {
    status: res.status,
    contentType: res.headers.get("content-type"),
    body: await res.text(),
    policy: res.headers.get("x-hookgate-policy") ?? "",
    error: res.headers.get("x-hookgate-error"),
  };
}

describe("the shared decision table on Node", () => {
  it("has cases, each with an expected answer", () => {
    expect(table.cases.length).toBeGreaterThanOrEqual(8);
    if (!update) for (const c of table.cases) expect(c.expected, c.name).not.toBeNull();
  });

  it.each(table.cases)("$name", async (c) => {
    const actual = await answer(c);
    if (update) c.expected = actual;
    else expect(actual).toEqual(c.expected);
    // Agent routes answer 2xx whatever happened (DESIGN.md).
    expect(actual.status).toBeGreaterThanOrEqual(200);
    expect(actual.status).toBeLessThan(300);
  });

  // simulate answers as the hook route would: the same answer, and the error code it says.
  const simulated = table.cases.filter((c) => /^\/v1\/hooks(?:\/[a-z-]+)?$/.test(c.request.path));
  it.each(simulated)("simulate: $name", async (c) => {
    const client = c.request.path.split("/")[3];
    const result = await answer({
      ...c,
      request: { ...c.request, path: `/v1/simulate${client === undefined ? "" : `?client=${client}`}` },
    });
    if (client !== undefined && !isDialect(client)) {
      // The hook route answers an unknown client with its fail mode; simulate refuses it.
      expect(result.status).toBe(400);
      return;
    }
    const explained = JSON.parse(result.body) as {
      answer: { status: number; contentType: string | null; body: string };
      error: { code: string } | null;
      pending: { outcome: string }[];
    };
    expect(explained.pending.filter((p) => p.outcome === "NOT_RUN")).toEqual([]);
    expect(explained.answer).toEqual({
      status: c.expected.status,
      contentType: c.expected.contentType,
      body: c.expected.body,
    });
    expect(explained.error?.code ?? null).toBe(c.expected.error);
    expect(result.error).toBe(c.expected.error);
    expect(result.policy).toBe(c.expected.policy);
  });

  if (update) {
    it("writes the table back", () => {
      writeFileSync(TABLE, `${JSON.stringify(table, null, 2)}\n`);
    });
  }
});

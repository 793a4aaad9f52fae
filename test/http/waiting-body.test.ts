/**
 * What a hook request holds while it waits on its prompt and forward rules: the hook route in
 * process, the real remote actions and egress, and loopback model and hook servers that hold their
 * answers until the test has looked.
 */
import { randomUUID } from "node:crypto";
import type { ServerResponse } from "node:http";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { createUndiciEgress } from "../../src/adapters/egress/undici.js";
import { createRemoteActions } from "../../src/app/remote-actions.js";
import type { Policy } from "../../src/core/policy.js";
import { runHookRoute } from "../../src/http/hook-route.js";
import type { BodyResult } from "../../src/http/read-body.js";
import { type LoopbackServer, loopbackServer } from "../support/loopback.js";
import { policyFrom, sha256 } from "../support/policy.js";

/** Answers held until `release`; `arrived` settles with each request's arrival. */
function holding() {
  const held: ServerResponse[] = [];
  let arrived: () => void = () => {};
  const next = () => new Promise<void>((resolve) => (arrived = resolve));
  return {
    held,
    next,
    answer: (res: ServerResponse) => {
      held.push(res);
      arrived();
    },
  };
}

const modelHold = holding();
const hookHold = holding();
let model: LoopbackServer;
let hook: LoopbackServer;

beforeAll(async () => {
  model = await loopbackServer((_req, res) => modelHold.answer(res));
  hook = await loopbackServer((_req, res) => hookHold.answer(res));
});
// A test that failed with an answer still held leaves none to the next.
afterEach(() => {
  for (const res of [...modelHold.held.splice(0), ...hookHold.held.splice(0)]) res.destroy();
});
afterAll(async () => {
  await model.close();
  await hook.close();
});

const allow = (res: ServerResponse) => {
  res.writeHead(200, { "content-type": "application/json" });
  res.end(
    JSON.stringify({
      content: [{ type: "tool_use", id: "t", name: "verdict", input: { ok: true, reason: "fine" } }],
      stop_reason: "tool_use",
    }),
  );
};

async function gateway(rules: unknown[]) {
  const env: Record<string, string> = { MODEL_KEY: "sk-test" };
  const policy: Policy = await policyFrom(
    {
      version: 1,
      egress: { allowedHttpHookUrls: ["http://127.0.0.1:*/*"], allowCidrs: ["127.0.0.1/32"] },
      models: {
        fast: { provider: "anthropic", model: "m", apiKey: "env:MODEL_KEY", url: `${model.url}/v1/messages` },
      },
      rules,
    },
    env,
  );
  const clock = { now: Date.now, monotonic: () => performance.now() };
  const egress = createUndiciEgress({ policy: () => policy.egress });
  const logs: Record<string, unknown>[] = [];
  return {
    logs,
    deps: {
      policy: () => policy,
      remote: createRemoteActions({ egress: egress.send, env: (name) => env[name], clock, sha256 }),
      clock,
      newId: randomUUID,
      sha256,
      logger: { log: (level: string, msg: string, fields?: object) => logs.push({ level, msg, ...fields }) },
    },
  };
}

const text = JSON.stringify({
  session_id: "s",
  transcript_path: "/t",
  cwd: "/p",
  hook_event_name: "PreToolUse",
  tool_name: "Write",
  tool_input: { file_path: "/p/a", content: "x".repeat(10_000) },
});

/** The hook route with `body` as what reading the request gave. */
const route = (deps: Awaited<ReturnType<typeof gateway>>["deps"], body: BodyResult) =>
  runHookRoute(deps, "claude-code", {
    readBody: async () => body,
    contentType: "application/json",
    authorization: undefined,
    timeoutHeader: undefined,
  });

const judge = { id: "judge", on: ["PreToolUse"], prompt: { text: "Fine? $ARGUMENTS", model: "fast" } };

describe("a request waiting on remote rules", () => {
  it("lets go of its body's text while its prompt rule's model call is out", async () => {
    const { deps, logs } = await gateway([judge]);
    const body = { ok: true as const, text };
    const called = modelHold.next();
    const outcome = route(deps, body);
    await called;
    // Before, the route and the decision held the body as received for the whole call, beside
    // the event parsed from it: twice the body for each request waiting on a slow model.
    expect(body.text).toBe("");
    allow(modelHold.held.shift() as ServerResponse);
    expect((await outcome).answer.status).toBe(200);
    const audit = logs.find((l) => l.msg === "decision") as Record<string, unknown>;
    expect(audit.pending).toEqual([expect.objectContaining({ rule: "judge", outcome: "OK" })]);
    // The audit line still sizes the tool input by the body as it came.
    expect(audit.toolInput).toEqual({ file_path: "/p/a", content: expect.stringContaining("xxx") });
  });

  it("keeps it while a forward rule is to send it on, and sends it as received", async () => {
    const { deps } = await gateway([
      judge,
      { id: "team", on: ["PreToolUse"], forward: { url: `${hook.url}/hook` } },
    ]);
    const body = { ok: true as const, text };
    const called = Promise.all([modelHold.next(), hookHold.next()]);
    const outcome = route(deps, body);
    await called;
    expect(body.text).toBe(text);
    expect(hook.received.at(-1)?.body).toBe(text);
    allow(modelHold.held.shift() as ServerResponse);
    const res = hookHold.held.shift() as ServerResponse;
    res.writeHead(200, { "content-type": "application/json" });
    res.end("{}");
    expect((await outcome).answer.status).toBe(200);
  });
});

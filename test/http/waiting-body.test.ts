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
import { type BodyResult, createBodyBudget } from "../../src/http/read-body.js";
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

type Budget = ReturnType<typeof createBodyBudget>;

/** A client's connection that `left` closes, as Node's listener gives it. */
const connectionOf = (left: AbortController) => ({
  left: () => left.signal.aborted,
  leaving: () => left.signal,
});

async function gateway(rules: unknown[], waitingBudget?: Budget, shadowWaitingBudget?: Budget) {
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
      remote: createRemoteActions({
        egress: egress.send,
        env: (name) => env[name],
        clock,
        sha256,
        waitingBudget,
        shadowWaitingBudget,
      }),
      clock,
      newId: randomUUID,
      sha256,
      logger: { log: (level: string, msg: string, fields?: object) => logs.push({ level, msg, ...fields }) },
    },
  };
}

const write = (path: string, tool = "Write") =>
  JSON.stringify({
    session_id: "s",
    transcript_path: "/t",
    cwd: "/p",
    hook_event_name: "PreToolUse",
    tool_name: tool,
    tool_input: { file_path: path, content: "x".repeat(10_000) },
  });
const text = write("/p/a");

/** The hook route with `body` as what reading the request gave. */
const route = (deps: Awaited<ReturnType<typeof gateway>>["deps"], body: BodyResult) =>
  runHookRoute(deps, "claude-code", {
    readBody: async () => body,
    contentType: "application/json",
    authorization: undefined,
    timeoutHeader: undefined,
  });

const judge = {
  id: "judge",
  on: ["PreToolUse"],
  prompt: { text: "Fine? $ARGUMENTS", model: "fast", onError: "deny" },
};

/** An enforcing prompt rule on writes, and a shadow one trying a prompt of its own. */
const guard = { ...judge, id: "guard", matcher: "Write" };
const trial = {
  id: "trial",
  mode: "shadow",
  on: ["PreToolUse"],
  prompt: { text: "Would you allow it? $ARGUMENTS", model: "fast", onError: "deny" },
};

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

  it("is not called past the bytes waiting requests may hold: its onError at once, as without a slot", async () => {
    // Room for one body waiting on a model, not two.
    const { deps, logs } = await gateway([judge], createBodyBudget(text.length * 1.5));
    const called = modelHold.next();
    const first = route(deps, { ok: true, text: write("/p/1") });
    await called;
    const calls = model.received.length;
    // Before, it was called too, and waited holding its body as long as the first.
    const second = route(deps, { ok: true, text: write("/p/2") });
    const next = modelHold.next();
    expect(await Promise.race([second.then(() => "answered"), next.then(() => "called")])).toBe("answered");
    expect(model.received.length).toBe(calls);
    const refused = await second;
    expect(JSON.parse(refused.answer.body).hookSpecificOutput.permissionDecision).toBe("deny");
    const audit = logs.filter((l) => l.msg === "decision").at(-1) as Record<string, unknown>;
    expect(audit.pending).toEqual([
      expect.objectContaining({
        rule: "judge",
        outcome: "JUDGE_TIMEOUT",
        onError: "deny",
        model: "fast",
        detail: expect.stringMatching(/^not called: the gateway holds as many bytes of other hooks waiting/),
      }),
    ]);
    allow(modelHold.held.shift() as ServerResponse);
    await first;
    // Its bytes given back with its answer, the next one is called.
    const third = route(deps, { ok: true, text: write("/p/3") });
    await next;
    allow(modelHold.held.shift() as ServerResponse);
    const audits = (await third).audit.pending;
    expect(audits).toEqual([expect.objectContaining({ rule: "judge", outcome: "OK" })]);
  });

  it("past the bytes waiting requests may hold is answered from the verdict cache, which takes no room", async () => {
    const waiting = createBodyBudget(text.length * 1.5);
    const { deps } = await gateway([judge], waiting);
    let called = modelHold.next();
    const judged = route(deps, { ok: true, text: write("/p/1") });
    await called;
    allow(modelHold.held.shift() as ServerResponse);
    await judged;
    called = modelHold.next();
    const holding = route(deps, { ok: true, text: write("/p/2") });
    await called;
    // No room to wait, and no need: the verdict on the same event answers it, as with room, and
    // it waits on nothing, so it is not counted refused (it was, though it held no byte).
    const again = await route(deps, { ok: true, text: write("/p/1") });
    expect(again.audit.pending).toEqual([expect.objectContaining({ rule: "judge", outcome: "CACHE_HIT" })]);
    expect(waiting.refused()).toBe(0);
    // Another event, which its model must judge, finds no room: its onError, counted.
    const refused = await route(deps, { ok: true, text: write("/p/3") });
    expect(refused.audit.pending).toEqual([
      expect.objectContaining({
        rule: "judge",
        outcome: "JUDGE_TIMEOUT",
        detail: expect.stringMatching(/^not called: the gateway holds as many bytes of other hooks waiting/),
      }),
    ]);
    expect(waiting.refused()).toBe(1);
    allow(modelHold.held.shift() as ServerResponse);
    await holding;
  });

  it("on shadow rules alone holds a budget of its own, never the enforcing rules'", async () => {
    // Each budget has room for one body waiting, not two.
    const waiting = createBodyBudget(text.length * 1.5);
    const shadow = createBodyBudget(text.length * 1.5);
    const { deps } = await gateway([guard, { ...trial, matcher: "Edit" }], waiting, shadow);
    let called = modelHold.next();
    const edit = write("/p/1", "Edit");
    const tried = route(deps, { ok: true, text: edit });
    await called;
    expect([waiting.heldBytes(), shadow.heldBytes()]).toEqual([0, edit.length]);
    // Before, the shadow rule's wait held the enforcing rules' budget: this hook's rule was not
    // called and answered with its onError, a slow shadow model changing an enforcing answer.
    called = modelHold.next();
    const guarded = route(deps, { ok: true, text: write("/p/2") });
    expect(await Promise.race([guarded.then(() => "answered"), called.then(() => "called")])).toBe("called");
    // Another on the shadow rule alone finds its own budget full: skipped, nothing waited for.
    const skipped = await route(deps, { ok: true, text: write("/p/3", "Edit") });
    expect(skipped.audit.shadow).toEqual([
      expect.objectContaining({
        rule: "trial",
        outcome: "SKIPPED",
        detail: expect.stringMatching(
          /^not called: the gateway holds as many bytes of other hooks waiting on shadow rules alone/,
        ),
      }),
    ]);
    expect([waiting.refused(), shadow.refused()]).toEqual([0, 1]);
    for (const res of modelHold.held.splice(0)) allow(res);
    expect((await guarded).audit.pending).toEqual([
      expect.objectContaining({ rule: "guard", outcome: "OK" }),
    ]);
    expect((await tried).audit.shadow).toEqual([expect.objectContaining({ rule: "trial", outcome: "OK" })]);
    expect([waiting.heldBytes(), shadow.heldBytes()]).toEqual([0, 0]);
  });

  it("on enforcing and shadow rules together counts in the enforcing rules' budget", async () => {
    const waiting = createBodyBudget(text.length * 1.5);
    const shadow = createBodyBudget(text.length * 1.5);
    const { deps } = await gateway([guard, trial], waiting, shadow);
    const called = modelHold.next();
    const both = route(deps, { ok: true, text });
    await called;
    // The enforcing rule waits on the same hook: its body is held there, once for the two.
    expect([waiting.heldBytes(), shadow.heldBytes()]).toEqual([text.length, 0]);
    while (modelHold.held.length < 2) await modelHold.next();
    for (const res of modelHold.held.splice(0)) allow(res);
    const { audit } = await both;
    expect([audit.pending, audit.shadow]).toEqual([
      [expect.objectContaining({ rule: "guard", outcome: "OK" })],
      [expect.objectContaining({ rule: "trial", outcome: "OK" })],
    ]);
  });

  it("whose client leaves gives its bytes back at once, gives up its forward, and calls its model no more", async () => {
    const waiting = createBodyBudget(text.length * 4);
    const { deps, logs } = await gateway(
      [judge, { id: "team", on: ["PreToolUse"], forward: { url: `${hook.url}/hook` } }],
      waiting,
    );
    const left = new AbortController();
    const called = Promise.all([modelHold.next(), hookHold.next()]);
    const calls = model.received.length;
    const outcome = runHookRoute(deps, "claude-code", {
      readBody: async () => ({ ok: true, text }),
      contentType: "application/json",
      authorization: undefined,
      timeoutHeader: undefined,
      connection: connectionOf(left),
    });
    await called;
    // Counted twice: the forward rule keeps the text beside the parsed event.
    expect(waiting.heldBytes()).toBe(2 * text.length);
    left.abort();
    expect(waiting.heldBytes()).toBe(0);
    // The model's call runs on; a transient error gets no second call, there being nobody to answer.
    const res = modelHold.held.shift() as ServerResponse;
    res.writeHead(529, { "content-type": "application/json" });
    res.end('{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}');
    const { audit } = await outcome;
    expect(model.received.length).toBe(calls + 1);
    expect(audit.clientLeft).toBe(true);
    expect(audit.pending).toEqual([
      expect.objectContaining({
        rule: "judge",
        outcome: "JUDGE_HTTP_ERROR",
        detail: expect.stringMatching(
          /; not called again: the client closed its connection before the answer$/,
        ),
      }),
      expect.objectContaining({
        rule: "team",
        outcome: "CLIENT_LEFT",
        detail: "given up: the client closed its connection before the answer",
      }),
    ]);
    expect(logs.filter((l) => l.msg === "decision").at(-1)).toMatchObject({ clientLeft: true });
    // Nothing is given back twice: the budget takes a body of the whole limit again.
    expect(waiting.hold().take(text.length * 4)).toBe(true);
  });

  it("whose client left before its rules ran calls none of them", async () => {
    const waiting = createBodyBudget(text.length * 4);
    const { deps } = await gateway([judge], waiting);
    const left = new AbortController();
    left.abort();
    const calls = model.received.length;
    const { audit } = await runHookRoute(deps, "claude-code", {
      readBody: async () => ({ ok: true, text }),
      contentType: "application/json",
      authorization: undefined,
      timeoutHeader: undefined,
      connection: connectionOf(left),
    });
    expect(model.received.length).toBe(calls);
    expect(audit).toMatchObject({ decision: "deny", clientLeft: true });
    expect(audit.pending).toEqual([
      expect.objectContaining({
        rule: "judge",
        outcome: "CLIENT_LEFT",
        detail: "not called: the client closed its connection before the answer",
      }),
    ]);
    expect([waiting.heldBytes(), waiting.refused()]).toEqual([0, 0]);
  });
});

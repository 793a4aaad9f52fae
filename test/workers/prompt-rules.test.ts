/**
 * A prompt rule inside workerd: its model's `env:` url read from the Worker's bindings, as a
 * sink's is, and an unset one failing into the rule's onError without a call. The stand-in
 * network (test/workers/network.js) answers /v1/messages as an Anthropic model.
 */
import { createExecutionContext, env, SELF, waitOnExecutionContext } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import worker, { type WorkerEnv } from "../../src/entry/workers.js";
import { MODEL_ORIGIN, SINK_ORIGIN } from "./fanout-policy.js";

/**
 * Its own text per test: the Worker keeps a policy per isolate and text, as a secret's change
 * comes with a new deployment.
 */
const policyOf = (marker: string) => ({
  version: 1,
  rules: [
    {
      id: "judge",
      description: marker,
      on: "PreToolUse",
      prompt: { text: "ok? $ARGUMENTS", model: "m", onError: "ask" },
    },
  ],
  models: {
    m: { provider: "anthropic", model: "claude-haiku-4-5", apiKey: "env:JUDGE_KEY", url: "env:JUDGE_URL" },
  },
});

interface SeenRequest {
  url: string;
  headers: Record<string, string>;
  body: string;
}
/** Every request that carried this test's event, to any host: the provider's public one too. */
const seen = async (marker: string) =>
  ((await (await env.NETWORK.fetch("https://control.test/requests")).json()) as SeenRequest[]).filter((r) =>
    r.body.includes(marker),
  );
/** The calls to a model, anywhere, that carried this test's event. */
const modelCalls = async (marker: string) =>
  (await seen(marker)).filter((r) => new URL(r.url).pathname === "/v1/messages");
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A Claude Code PreToolUse of `tool` as a POST's init. */
const preToolUse = (tool: string, input: Record<string, unknown>) => ({
  method: "POST",
  headers: { "content-type": "application/json" },
  body: JSON.stringify({
    session_id: "s",
    transcript_path: "/t",
    cwd: "/p",
    hook_event_name: "PreToolUse",
    tool_name: tool,
    tool_input: input,
  }),
});

async function hook(marker: string, bindings: Record<string, string>, policy: object = policyOf(marker)) {
  const ctx = createExecutionContext();
  const res = await worker.fetch(
    new Request(
      "https://hookgate.test/v1/hooks",
      preToolUse("Write", { file_path: `/p/${marker}`, content: "x" }),
    ),
    {
      ...env,
      HOOKGATE_POLICY: JSON.stringify(policy),
      JUDGE_KEY: "sk-workerd",
      ...bindings,
    } as WorkerEnv,
    ctx,
  );
  await waitOnExecutionContext(ctx);
  expect(res.status).toBe(200);
  return (await res.json()) as { hookSpecificOutput: Record<string, unknown> };
}

describe("a deadline longer than a Worker's request may run after its client hangs up", () => {
  it("is cut to 28 s from the request's arrival, so the decision, its audit line and its notify work end inside the runtime's 30 s", async () => {
    // A model that holds the call for 60 s and a policy that would wait for it: once a client
    // hangs up, workerd gives the request 30 s more, then cancels it, audit line and all.
    const marker = `stuck-model-${crypto.randomUUID()}`;
    const policy = { ...policyOf(marker), defaults: { deadlineMs: 60_000 } };
    const answer = await hook(marker, { JUDGE_URL: `${MODEL_ORIGIN}/v1/messages` }, policy);
    expect(answer.hookSpecificOutput).toMatchObject({
      permissionDecision: "ask",
      permissionDecisionReason: expect.stringMatching(
        /no answer within 2\d{4} ms, what was left of the request's deadline/,
      ),
    });
    const ms = Number(
      /no answer within (\d+) ms/.exec(String(answer.hookSpecificOutput.permissionDecisionReason))?.[1],
    );
    expect(ms).toBeLessThanOrEqual(28_000);
  }, 45_000);
});

describe("a prompt rule's model url from the Worker's bindings", () => {
  it("calls the model at the URL its binding holds", async () => {
    const marker = `read-${crypto.randomUUID()}`;
    const answer = await hook(marker, { JUDGE_URL: `${MODEL_ORIGIN}/v1/messages` });
    expect(answer.hookSpecificOutput).toMatchObject({
      permissionDecision: "deny",
      permissionDecisionReason: "[ok? $ARGUMENTS]: judged in workerd",
    });
    const calls = await modelCalls(marker);
    expect(calls.map((c) => [c.url, c.headers["x-api-key"]])).toEqual([
      [`${MODEL_ORIGIN}/v1/messages`, "sk-workerd"],
    ]);
  });

  it("answers with onError, once, when the model's answer does not decode from its content coding", async () => {
    // fetch decodes it in workerd and fails the read: before, EGRESS_CONNECT_FAILED, and the
    // model was called again at once for the same broken answer.
    const marker = `bad-gzip-model-${crypto.randomUUID()}`;
    const answer = await hook(marker, { JUDGE_URL: `${MODEL_ORIGIN}/v1/messages` });
    expect(answer.hookSpecificOutput).toMatchObject({
      permissionDecision: "ask",
      permissionDecisionReason: expect.stringContaining(
        `(EGRESS_BAD_ENCODING: ${MODEL_ORIGIN}/… answered HTTP 200, but its body does not decode as its Content-Encoding gzip says (Gzip decompression failed); check the server, or a proxy in front of it, that compresses its answers`,
      ),
    });
    expect(await modelCalls(marker)).toHaveLength(1);
  });

  it("answers with onError when the binding is unset, calling no model (the public endpoint neither)", async () => {
    const marker = `unset-${crypto.randomUUID()}`;
    const answer = await hook(marker, {});
    expect(answer.hookSpecificOutput).toMatchObject({
      permissionDecision: "ask",
      permissionDecisionReason: expect.stringMatching(/JUDGE_NO_URL/),
    });
    expect(await seen(marker)).toEqual([]);
  });
});

/**
 * Through SELF, each event its own request to the deployed Worker, as two agents' hooks are: the
 * policy's judge-fetches rule (test/workers/fanout-policy.ts), its model answering in 1 s.
 */
describe("identical events judged at once, each its own request", () => {
  const fetchEvent = (marker: string, signal?: AbortSignal) =>
    SELF.fetch("https://hookgate.test/v1/hooks", {
      ...preToolUse("WebFetch", { url: `https://docs.example/${marker}`, prompt: "summarise" }),
      ...(signal ? { signal } : {}),
    });
  const denied = {
    permissionDecision: "deny",
    permissionDecisionReason: "[Is this fetch safe? $ARGUMENTS]: judged in workerd",
  };

  it("share one model call, and every request is answered its verdict", async () => {
    const marker = `slow-model-${crypto.randomUUID()}`;
    const answers = await Promise.all(
      [1, 2, 3].map(async () => {
        const res = await fetchEvent(marker);
        expect(res.status).toBe(200);
        return (await res.json()) as { hookSpecificOutput: Record<string, unknown> };
      }),
    );
    expect(answers.map((a) => a.hookSpecificOutput)).toEqual(Array(3).fill(expect.objectContaining(denied)));
    expect(await modelCalls(marker)).toHaveLength(1);
  });

  it("a request waiting for the model's one slot makes its call once the request holding it ends", async () => {
    // Two different events: the second waits for the slot (maxConcurrent 1), not for the first's verdict.
    const holder = `slow-model-${crypto.randomUUID()}`;
    const waiter = `slow-model-${crypto.randomUUID()}`;
    expect((await fetchEvent(`warm-${crypto.randomUUID()}`)).status).toBe(200);
    const first = fetchEvent(holder);
    // The holder's call made (the model holds it 1 s) before the waiter comes, or it tests nothing.
    for (let i = 0; i < 1000 && (await modelCalls(holder)).length === 0; i++) await pause(10);
    expect(await modelCalls(holder)).toHaveLength(1);
    const res = await fetchEvent(waiter);
    expect(res.status).toBe(200);
    expect(((await res.json()) as { hookSpecificOutput: unknown }).hookSpecificOutput).toMatchObject(denied);
    expect(await modelCalls(waiter)).toHaveLength(1);
    expect((await first).status).toBe(200);
  });

  it("an identical event waiting on a call that failed makes its own call", async () => {
    const marker = `slow-model-refused-model-${crypto.randomUUID()}`;
    expect((await fetchEvent(`warm-${crypto.randomUUID()}`)).status).toBe(200);
    const first = fetchEvent(marker);
    // The first call made before the identical event comes, so that one waits on it.
    for (let i = 0; i < 1000 && (await modelCalls(marker)).length === 0; i++) await pause(10);
    expect(await modelCalls(marker)).toHaveLength(1);
    const answers = await Promise.all(
      [fetchEvent(marker), first].map(async (pending) => {
        const res = await pending;
        expect(res.status).toBe(200);
        return ((await res.json()) as { hookSpecificOutput: unknown }).hookSpecificOutput;
      }),
    );
    // Each answered with the rule's onError for the model's refusal, after a call of its own.
    expect(answers).toEqual(
      Array(2).fill(
        expect.objectContaining({
          permissionDecision: "ask",
          permissionDecisionReason: expect.stringMatching(/\(JUDGE_HTTP_ERROR: /),
        }),
      ),
    );
    expect(await modelCalls(marker)).toHaveLength(2);
  });

  it("a request whose client hung up mid-call still ends: the identical one after it has its verdict, both are notified, the call's slot is given back", async () => {
    const marker = `slow-model-${crypto.randomUUID()}`;
    // The Worker's lazily loaded modules in first (through the test runner's module loader, which
    // can take longer than the wait for the first call below).
    expect((await fetchEvent(`warm-${crypto.randomUUID()}`)).status).toBe(200);
    const hangUp = new AbortController();
    const first = fetchEvent(marker, hangUp.signal).catch((e: unknown) => e);
    // Its call made (the model holds it 1 s), the identical event, then the hang-up.
    for (let i = 0; i < 500 && (await modelCalls(marker)).length === 0; i++) await pause(10);
    expect(await modelCalls(marker)).toHaveLength(1);
    const second = fetchEvent(marker);
    await pause(20);
    hangUp.abort();
    expect(await first).toMatchObject({ name: "AbortError" });
    const res = await second;
    expect(res.status).toBe(200);
    expect(((await res.json()) as { hookSpecificOutput: unknown }).hookSpecificOutput).toMatchObject(denied);
    expect(await modelCalls(marker)).toHaveLength(1);
    // Each request's notification reaches the sink, the hung-up one's too.
    let notified: SeenRequest[] = [];
    for (let i = 0; i < 200 && notified.length < 2; i++) {
      await pause(50);
      notified = (await seen(marker)).filter((r) => r.url.startsWith(SINK_ORIGIN));
    }
    expect(new Set(notified.map((r) => r.headers["webhook-id"])).size).toBe(2);
    // The hung-up request gave its call's slot back (the model takes one call at a time).
    const other = `slow-model-${crypto.randomUUID()}`;
    const after = await fetchEvent(other);
    expect(((await after.json()) as { hookSpecificOutput: unknown }).hookSpecificOutput).toMatchObject(
      denied,
    );
    expect(await modelCalls(other)).toHaveLength(1);
  });
});

/**
 * The policy's judge-searches rule (test/workers/fanout-policy.ts): its model takes one call at a
 * time, and a call may take 1 s; the stand-in model holds a "late-model" prompt 5 s.
 */
describe("a call abandoned at its rule's timeout, each event its own request", () => {
  const searchEvent = (marker: string) =>
    SELF.fetch("https://hookgate.test/v1/hooks", preToolUse("WebSearch", { query: marker }));
  const answerOf = async (res: Response) => {
    expect(res.status).toBe(200);
    return ((await res.json()) as { hookSpecificOutput: unknown }).hookSpecificOutput;
  };

  it("gives its slot back when it is answered, not when the model answers: the next call is made at once", async () => {
    // The Worker's lazily loaded modules in first, so that the calls below spend their second on the model.
    await answerOf(await searchEvent(`warm-${crypto.randomUUID()}`));
    const late = `late-model-${crypto.randomUUID()}`;
    expect(await answerOf(await searchEvent(late))).toMatchObject({
      permissionDecision: "ask",
      // The deadline's timer or the call's own time limit, whichever fires first.
      permissionDecisionReason: expect.stringMatching(/\((?:JUDGE|EGRESS)_TIMEOUT: /),
    });
    // Answered, its request over; the model still holds the call. Had the call kept its slot, this
    // one would wait its whole second for it and answer with onError.
    const next = `next-${crypto.randomUUID()}`;
    expect(await answerOf(await searchEvent(next))).toMatchObject({
      permissionDecision: "deny",
      permissionDecisionReason: "[Is this search safe? $ARGUMENTS]: judged in workerd",
    });
    expect(await modelCalls(next)).toHaveLength(1);
  });
});

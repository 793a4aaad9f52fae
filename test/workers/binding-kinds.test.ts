/**
 * The Worker's bindings of another kind than hookgate reads (a [vars] entry, a KV namespace under
 * a queue's name), inside workerd: each is said once, naming the binding and the kind it must be,
 * left unused, and the hook is answered as always.
 */
import {
  createExecutionContext,
  createMessageBatch,
  env,
  getQueueResult,
  waitOnExecutionContext,
} from "cloudflare:test";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { PushedBatch } from "../../src/adapters/queue/cloudflare.js";
import worker, { type WorkerEnv } from "../../src/entry/workers.js";

afterEach(() => {
  vi.restoreAllMocks();
});

/** The console lines of a SessionEnd the test policy notifies on, its waitUntil work done. */
async function notifyWith(changes: Record<string, unknown>): Promise<Record<string, unknown>[]> {
  const lines: string[] = [];
  for (const method of ["log", "warn", "error"] as const)
    vi.spyOn(console, method).mockImplementation((line: string) => lines.push(line));
  const ctx = createExecutionContext();
  const res = await worker.fetch(
    new Request("https://hookgate.test/v1/hooks", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        session_id: crypto.randomUUID(),
        transcript_path: "/home/dev/.claude/projects/p/s.jsonl",
        cwd: "/home/dev/proj",
        hook_event_name: "SessionEnd",
        reason: "flaky",
      }),
    }),
    { ...env, ...changes } as unknown as WorkerEnv,
    ctx,
  );
  expect(res.status).toBe(200);
  await waitOnExecutionContext(ctx);
  vi.restoreAllMocks();
  return lines.map((line) => JSON.parse(line) as Record<string, unknown>);
}

describe("a binding of another kind", () => {
  it("as HOOKGATE_QUEUE is named in the enqueue failure, which is not sent three times", async () => {
    // It was "binding.sendBatch is not a function", after 1.25 s of sends tried again.
    const lines = await notifyWith({ HOOKGATE_QUEUE: "hookgate-jobs" });
    expect(lines).toContainEqual(
      expect.objectContaining({
        msg: "HOOKGATE_QUEUE is bound as something other than a queue producer ([[queues.producers]]): left unused",
      }),
    );
    expect(lines).toContainEqual(
      expect.objectContaining({
        msg: "enqueue failed; the decision was answered anyway",
        // The same fix /healthz gives: it said what was wrong, not to remove the [vars] entry.
        error:
          "the HOOKGATE_QUEUE binding is not a queue producer ([[queues.producers]]): bind HOOKGATE_QUEUE in wrangler.toml as a queue producer ([[queues.producers]]), and remove the [vars] entry or other binding of that name",
      }),
    );
  });

  it("missing, as HOOKGATE_QUEUE, is named in the enqueue failure with where to bind it", async () => {
    // "the HOOKGATE_QUEUE binding is missing" said neither where nor as what to bind it.
    const lines = await notifyWith({ HOOKGATE_QUEUE: undefined });
    expect(lines).toContainEqual(
      expect.objectContaining({
        msg: "enqueue failed; the decision was answered anyway",
        error:
          "the HOOKGATE_QUEUE binding is missing: bind HOOKGATE_QUEUE in wrangler.toml as a queue producer ([[queues.producers]])",
      }),
    );
  });

  it.each([
    [
      "missing",
      undefined,
      "the HOOKGATE_QUEUE binding is missing",
      "bind HOOKGATE_QUEUE in wrangler.toml as a queue producer ([[queues.producers]])",
    ],
    [
      "of another kind",
      "hookgate-jobs",
      "the HOOKGATE_QUEUE binding is not a queue producer ([[queues.producers]])",
      "bind HOOKGATE_QUEUE in wrangler.toml as a queue producer ([[queues.producers]]), and remove the [vars] entry or other binding of that name",
    ],
  ])(
    "%s, as HOOKGATE_QUEUE under a policy that notifies, fails /healthz's delivery, as doctor reads it",
    async (_what, queue, error, fix) => {
      // /healthz said ok while every notify event's send failed. The error is the cause alone:
      // doctor's line says "so no notify event is delivered: <error>", and said it twice.
      const health = async (changes: Record<string, unknown>) => {
        const res = await worker.fetch(
          new Request("https://hookgate.test/healthz"),
          { ...env, ...changes } as unknown as WorkerEnv,
          createExecutionContext(),
        );
        expect(res.status).toBe(200);
        return (await res.json()) as Record<string, unknown>;
      };
      vi.spyOn(console, "error").mockImplementation(() => {});
      expect(await health({ HOOKGATE_QUEUE: queue })).toMatchObject({
        status: "ok",
        delivery: "failing",
        deliveryError: error,
        deliveryFix: fix,
      });
      expect(await health({})).not.toHaveProperty("delivery");
    },
  );

  it.each([
    [
      "missing",
      undefined,
      "the HOOKGATE_DLQ binding is missing",
      "bind HOOKGATE_DLQ in wrangler.toml as a queue producer ([[queues.producers]])",
    ],
    [
      "of another kind",
      "hookgate-jobs-dlq",
      "the HOOKGATE_DLQ binding is not a queue producer ([[queues.producers]])",
      "bind HOOKGATE_DLQ in wrangler.toml as a queue producer ([[queues.producers]]), and remove the [vars] entry or other binding of that name",
    ],
  ])(
    "%s, as HOOKGATE_DLQ under a policy that notifies, fails /healthz's dead letters, as doctor reads it",
    async (_what, dlq, error, fix) => {
      // /healthz said ok; only a notify event that failed for good said so, its dead letter
      // failing in turn, sent again and again until the queue dropped it.
      const health = async (changes: Record<string, unknown>) => {
        const res = await worker.fetch(
          new Request("https://hookgate.test/healthz"),
          { ...env, ...changes } as unknown as WorkerEnv,
          createExecutionContext(),
        );
        expect(res.status).toBe(200);
        return (await res.json()) as Record<string, unknown>;
      };
      vi.spyOn(console, "error").mockImplementation(() => {});
      const unbound = await health({ HOOKGATE_DLQ: dlq });
      expect(unbound).toMatchObject({
        status: "ok",
        deadLetters: "failing",
        deadLetterError: error,
        deadLetterFix: fix,
      });
      expect(unbound).not.toHaveProperty("delivery");
      expect(await health({})).not.toHaveProperty("deadLetters");
      // A policy that notifies nothing sends no dead letter.
      const quiet = {
        version: 1,
        rules: [{ id: `r-${crypto.randomUUID()}`, on: "PreToolUse", decide: "allow" }],
      };
      expect(await health({ HOOKGATE_DLQ: dlq, HOOKGATE_POLICY: JSON.stringify(quiet) })).not.toHaveProperty(
        "deadLetters",
      );
    },
  );

  it("as HOOKGATE_DLQ is named in the failed dead letter with the fix, and the message kept", async () => {
    // The failed send said only that the binding is not a queue producer, not to remove the
    // [vars] entry that holds its name.
    const lines: string[] = [];
    for (const method of ["log", "warn", "error"] as const)
      vi.spyOn(console, method).mockImplementation((line: string) => lines.push(line));
    const batch = createMessageBatch("hookgate-jobs", [
      { id: `m-${crypto.randomUUID()}`, timestamp: new Date(), attempts: 1, body: { hello: "world" } },
    ]);
    const ctx = createExecutionContext();
    await worker.queue(
      batch as unknown as PushedBatch,
      { ...env, HOOKGATE_DLQ: "hookgate-jobs-dlq" } as unknown as WorkerEnv,
      ctx,
    );
    const result = await getQueueResult(batch, ctx);
    vi.restoreAllMocks();
    expect(result.explicitAcks).toEqual([]);
    expect(result.retryMessages).toEqual([expect.objectContaining({ msgId: batch.messages[0]?.id })]);
    expect(lines.map((line) => JSON.parse(line) as Record<string, unknown>)).toContainEqual(
      expect.objectContaining({
        msg: "dead-letter send failed; the job will be tried again",
        error:
          "Error: the HOOKGATE_DLQ binding is not a queue producer ([[queues.producers]]): bind HOOKGATE_DLQ in wrangler.toml as a queue producer ([[queues.producers]]), and remove the [vars] entry or other binding of that name",
      }),
    );
  });

  it("as HOOKGATE_METRICS is said once, not at every counter", async () => {
    // Each counter warned "dataset(...)?.writeDataPoint is not a function", several per event.
    const dataset = { writeDataPoints: () => {} };
    const said = (lines: Record<string, unknown>[]) =>
      lines.filter((l) => String(l.msg).startsWith("HOOKGATE_METRICS") || l.msg === "metrics write failed");
    expect(said(await notifyWith({ HOOKGATE_METRICS: dataset }))).toEqual([
      expect.objectContaining({
        level: "error",
        msg: "HOOKGATE_METRICS is bound as something other than an Analytics Engine dataset ([[analytics_engine_datasets]]): left unused",
      }),
    ]);
    expect(said(await notifyWith({ HOOKGATE_METRICS: dataset }))).toEqual([]);
  });
});

describe("an env: reference read from a binding that is no text", () => {
  /**
   * The warnings and errors of a policy whose models read these variables (and `more`), loaded
   * anew. The bindings are the Worker's own (vitest.workers.config.ts, wrangler.toml): one given
   * to this invocation alone could be swapped for the queue consumer's while the policy loads.
   */
  async function loadWith(names: readonly string[], more: Record<string, unknown> = {}) {
    const policy = {
      version: 1,
      models: Object.fromEntries(
        names.map((name) => [
          name.toLowerCase(),
          { provider: "anthropic", model: "m", apiKey: `env:${name}` },
        ]),
      ),
      // Its own text each time: the Worker loads a policy once per isolate and text.
      rules: [{ id: `r-${crypto.randomUUID()}`, on: "PreToolUse", decide: "allow" }],
      ...more,
    };
    const lines = await notifyWith({ HOOKGATE_POLICY: JSON.stringify(policy) });
    return lines.filter((l) => l.level === "warn" || l.level === "error");
  }

  it.each([
    ["VARS_NUMBER", "a number from [vars]"],
    ["VARS_TABLE", "a table from [vars]"],
    ["STORE_KEY", "a binding of another kind (a Secrets Store secret, a KV namespace, a service?)"],
  ])("%s is said to be bound as %s, not that it is not set", async (name, kind) => {
    const lines = await loadWith([name]);
    expect(JSON.stringify(lines)).not.toContain(`${name} is not set`);
    expect(lines).toContainEqual(
      expect.objectContaining({
        msg: "policy warning",
        problem: expect.stringContaining(
          `${name} is bound as ${kind}, which is no text, so every call to model`,
        ),
      }),
    );
  });

  it("whose name reads like a secret is said to be bound as no text, without the name", async () => {
    // The rewording matched the name, which a withheld name's warning does not hold: it said
    // "is not set" of a variable that is bound, and its fix repeated the name the message withheld.
    const lines = await loadWith(["VarsNumber2"]);
    expect(JSON.stringify(lines)).not.toContain("VarsNumber2");
    expect(lines).toContainEqual(
      expect.objectContaining({
        msg: "policy warning",
        problem: expect.stringMatching(
          /^the variable named here \(not repeated: .*\) is bound as a number from \[vars\], which is no text, so every call to model/,
        ),
        fix: 'quote it in [vars] (NAME = "…"), or set it with `wrangler secret put NAME`',
      }),
    );
  });

  it("is told apart from text, read as ever, and from no binding, still not set", async () => {
    const lines = await loadWith(["JUDGE_KEY", "NOWHERE_KEY"]);
    expect(lines).toEqual([
      expect.objectContaining({
        msg: "policy warning",
        problem:
          'NOWHERE_KEY is not set, so every call to model "nowhere_key" fails and its rules answer with onError',
      }),
    ]);
  });

  it("as a KV namespace under its name is said so", async () => {
    // wrangler.toml's KV namespace, as a policy that reads the name would find it.
    const lines = await loadWith(["HOOKGATE_SESSIONS"]);
    expect(lines).toContainEqual(
      expect.objectContaining({
        problem: expect.stringContaining("HOOKGATE_SESSIONS is bound as a binding of another kind"),
        fix: expect.stringContaining(
          "set HOOKGATE_SESSIONS with `wrangler secret put HOOKGATE_SESSIONS` or as a [vars] text",
        ),
      }),
    );
  });

  it("in a forward header is said too, though its header goes out empty without a warning", async () => {
    const forward = {
      id: `f-${crypto.randomUUID()}`,
      on: "PreToolUse",
      matcher: "mcp__.*",
      forward: {
        url: "https://policy.hookgate.test/hook",
        headers: { Authorization: "Bearer $VARS_FLAG" },
        allowedEnvVars: ["VARS_FLAG"],
      },
    };
    const lines = await loadWith([], {
      egress: { httpHookAllowedEnvVars: ["VARS_FLAG"] },
      rules: [forward],
    });
    expect(lines).toContainEqual(
      expect.objectContaining({
        level: "error",
        msg: "VARS_FLAG is bound as a boolean from [vars], which is no text: read as not set",
        fix: 'quote it in [vars] (VARS_FLAG = "…"), or set it with `wrangler secret put VARS_FLAG`',
      }),
    );
  });
});

describe("a reason given at call time for an env: reference bound as no text", () => {
  it("says the model's API key is bound as a Secrets Store secret, not that it is not set", async () => {
    const policy = {
      version: 1,
      models: { store: { provider: "anthropic", model: "m", apiKey: "env:STORE_KEY" } },
      rules: [
        {
          id: `judge-${crypto.randomUUID()}`,
          on: "PreToolUse",
          matcher: "Bash",
          prompt: { text: "Safe? $ARGUMENTS", model: "store", onError: "deny" },
        },
      ],
    };
    const ctx = createExecutionContext();
    const res = await worker.fetch(
      new Request("https://hookgate.test/v1/hooks/claude-code", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({
          session_id: crypto.randomUUID(),
          transcript_path: "/home/dev/.claude/projects/p/s.jsonl",
          cwd: "/home/dev/proj",
          hook_event_name: "PreToolUse",
          tool_name: "Bash",
          tool_input: { command: "ls" },
        }),
      }),
      { ...env, HOOKGATE_POLICY: JSON.stringify(policy) } as unknown as WorkerEnv,
      ctx,
    );
    await waitOnExecutionContext(ctx);
    const reason = String(
      ((await res.json()) as { hookSpecificOutput?: { permissionDecisionReason?: string } })
        .hookSpecificOutput?.permissionDecisionReason,
    );
    expect(reason).toContain(
      "its apiKey reads STORE_KEY, which is bound as a binding of another kind (a Secrets Store secret, a KV namespace, a service?), not as text",
    );
    expect(reason).not.toContain("not set");
  });

  it("says a sink's URL is bound as a [vars] table in the dead letter, not that it is not set", async () => {
    const policy = {
      version: 1,
      rules: [{ id: `r-${crypto.randomUUID()}`, on: "SessionEnd", notify: ["tabled"] }],
      sinks: { tabled: { type: "webhook", url: "env:VARS_TABLE", retryScheduleSeconds: [0] } },
    };
    const id = `evt_${crypto.randomUUID()}.tabled`;
    const job = {
      id,
      sink: "tabled",
      notification: {
        id: id.split(".")[0],
        createdAt: Date.now(),
        team: "default",
        client: "claude-code",
        eventName: "SessionEnd",
        decision: "none",
        ruleId: "test",
        event: { hook_event_name: "SessionEnd", session_id: crypto.randomUUID() },
      },
    };
    const batch = createMessageBatch("hookgate-jobs", [
      { id: "m-tabled", timestamp: new Date(), attempts: 1, body: { id, body: job } },
    ]);
    const ctx = createExecutionContext();
    await worker.queue(
      batch as unknown as PushedBatch,
      { ...env, HOOKGATE_POLICY: JSON.stringify(policy) } as unknown as WorkerEnv,
      ctx,
    );
    expect((await getQueueResult(batch, ctx)).explicitAcks).toEqual(["m-tabled"]);
    type Letter = { body: { id: string; error: string } };
    let letter: Letter | undefined;
    for (let tries = 0; letter === undefined && tries < 200; tries++) {
      const letters = (await (
        await env.NETWORK.fetch("https://control.test/dead-letters")
      ).json()) as Letter[];
      letter = letters.find((d) => d.body.id === id);
      if (letter === undefined) await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(letter?.body.error).toBe(
      'sink "tabled": url reads VARS_TABLE, which is bound as a table from [vars], not as text',
    );
  });
});

/**
 * Notifications on Workers, inside workerd: a hook answered by the Worker puts a job on the real
 * Cloudflare Queue (Miniflare's queue broker), the Worker's own `queue` handler consumes it and
 * delivers it through the egress guard (real DoH resolver and address check) to the stand-in
 * sink of test/workers/network.js; a 500 is retried, a 410 or a spent schedule lands on the
 * real dead-letter queue with its error. Only the network is a stand-in.
 */
import {
  createExecutionContext,
  createMessageBatch,
  env,
  getQueueResult,
  SELF,
  waitOnExecutionContext,
} from "cloudflare:test";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { PushedBatch, PushedMessage } from "../../src/adapters/queue/cloudflare.js";
import {
  createCloudflareConsumer,
  DELIVERIES_AT_ONCE,
} from "../../src/adapters/queue/cloudflare-consumer.js";
import { createDeliverer } from "../../src/app/deliver.js";
import { DEFAULT_RETRY_SCHEDULE_SECONDS, type DeliveryJob, MAX_HOLDS } from "../../src/core/delivery.js";
import { verifyStandardWebhook } from "../../src/core/sinks.js";
import worker, { type WorkerEnv } from "../../src/entry/workers.js";
import { FANOUT_POLICY, SINK_ORIGIN, WEBHOOK_SECRET } from "./fanout-policy.js";

interface SinkRequest {
  url: string;
  headers: Record<string, string>;
  body: string;
  status: number;
  attempt: number;
}
interface DeadLetter {
  queue: string;
  id: string;
  body: { id: string; body: DeliveryJob; attempts: number; error: string; failedAt: number };
}

const control = async <T>(path: string): Promise<T> =>
  (await env.NETWORK.fetch(`https://control.test${path}`)).json() as Promise<T>;

async function until<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 10_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

const sinkRequestsFor = async (sessionId: string) =>
  (await control<SinkRequest[]>("/requests")).filter((r) => r.body.includes(sessionId));
const deadLettersFor = async (sessionId: string) =>
  (await control<DeadLetter[]>("/dead-letters")).filter(
    (d) => d.body.body.notification.event.session_id === sessionId,
  );

const claudeEvent = (sessionId: string, fields: Record<string, unknown>) => ({
  session_id: sessionId,
  transcript_path: `/home/dev/.claude/projects/p/${sessionId}.jsonl`,
  cwd: "/home/dev/proj",
  ...fields,
});

async function postHook(body: unknown) {
  const res = await SELF.fetch("https://hookgate.test/v1/hooks", {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  return { status: res.status, text: await res.text() };
}

/** Where KV holds a session's last tool: the notifier's key, team and id (FANOUT_POLICY has no auth: team "default"). */
const rememberedKey = (sessionId: string) => `tool:${JSON.stringify(["default", sessionId])}`;

const sessionEnd = (sessionId: string, reason: string) =>
  postHook(claudeEvent(sessionId, { hook_event_name: "SessionEnd", reason }));

afterEach(() => {
  vi.restoreAllMocks();
});

/** An envelope as the producer writes it, for one sink. */
const job = (sink: string, sessionId: string): { id: string; body: DeliveryJob } => {
  const id = `evt_${crypto.randomUUID()}.${sink}`;
  return {
    id,
    body: {
      id,
      sink,
      notification: {
        id: id.split(".")[0] ?? id,
        createdAt: Date.now(),
        team: "default",
        client: "claude-code",
        eventName: "SessionEnd",
        decision: "none",
        ruleId: "test",
        event: { hook_event_name: "SessionEnd", session_id: sessionId },
      },
    },
  };
};

describe("a notify event through the real queue", () => {
  it("is answered at once, consumed by the Worker's queue handler and delivered signed", async () => {
    const sessionId = crypto.randomUUID();
    const answer = await postHook(
      claudeEvent(sessionId, {
        hook_event_name: "PreToolUse",
        tool_name: "Bash",
        tool_input: { command: "echo hi" },
        tool_use_id: "toolu_1",
      }),
    );
    expect(answer.status).toBe(200);
    expect(JSON.parse(answer.text).hookSpecificOutput.permissionDecision).toBe("deny");

    const [delivery, ...more] = await until("the delivery", async () => {
      const seen = await sinkRequestsFor(sessionId);
      return seen.length > 0 ? seen : undefined;
    });
    expect(more).toEqual([]);
    expect(delivery?.url).toBe("https://sink.hookgate.test/ok");
    const header = (name: string) => delivery?.headers[name] ?? "";
    const signed = await verifyStandardWebhook(
      WEBHOOK_SECRET,
      {
        id: header("webhook-id"),
        timestamp: header("webhook-timestamp"),
        signature: header("webhook-signature"),
      },
      delivery?.body ?? "",
      Date.now(),
    );
    expect(signed).toBe(true);
    expect(JSON.parse(delivery?.body ?? "{}")).toMatchObject({
      type: "hook.PreToolUse",
      data: { decision: "deny", rule: "no-echo", event: { tool_input: { command: "echo hi" } } },
    });
  });

  it("retries a sink that answered 500, with the same webhook-id, until it accepts", async () => {
    const sessionId = crypto.randomUUID();
    expect((await sessionEnd(sessionId, "flaky")).status).toBe(200);
    const attempts = await until("the retry", async () => {
      const seen = await sinkRequestsFor(sessionId);
      return seen.length >= 2 ? seen : undefined;
    });
    expect(attempts.map((r) => [r.status, r.attempt])).toEqual([
      [500, 1],
      [200, 2],
    ]);
    expect(new Set(attempts.map((r) => r.headers["webhook-id"])).size).toBe(1);
    expect(await deadLettersFor(sessionId)).toEqual([]);
  });

  it("dead-letters a 410 at once, with the sink's answer as the error", async () => {
    const sessionId = crypto.randomUUID();
    await sessionEnd(sessionId, "gone");
    const [letter] = await until("the dead letter", async () => {
      const dead = await deadLettersFor(sessionId);
      return dead.length > 0 ? dead : undefined;
    });
    expect(letter?.queue).toBe("hookgate-jobs-dlq");
    expect(letter?.body).toMatchObject({ attempts: 1, body: { sink: "gone" } });
    expect(letter?.body.error).toMatch(/410/);
    expect(letter?.body.id).toBe(letter?.body.body.id);
    expect(await sinkRequestsFor(sessionId)).toHaveLength(1);
  });

  it("dead-letters after the sink's retry schedule is spent", async () => {
    const sessionId = crypto.randomUUID();
    await sessionEnd(sessionId, "down");
    const [letter] = await until("the dead letter", async () => {
      const dead = await deadLettersFor(sessionId);
      return dead.length > 0 ? dead : undefined;
    });
    expect(letter?.body.attempts).toBe(2);
    expect(letter?.body.error).toMatch(/^gave up after 2 attempts: .*500/);
    expect((await sinkRequestsFor(sessionId)).map((r) => r.status)).toEqual([500, 500]);
  });

  it("dead-letters unsent, with why, a job back past its last attempt, which ended the Worker instead of settling", async () => {
    // A job whose delivery ends the Worker (out of memory, its CPU time limit) failed its batch at
    // every delivery, and was sent again each time past its schedule until Cloudflare moved it
    // after max_retries, without a reason. Here the queue handler throws for the job's batch at
    // its two attempts ("down" retries once), as an invocation that ended does: Cloudflare
    // delivers it again, each delivery counted in its attempts.
    const sessionId = crypto.randomUUID();
    const ours = (message: PushedMessage) =>
      (message.body as { body?: DeliveryJob }).body?.notification.event.session_id === sessionId;
    let ended = 0;
    const original = worker.queue;
    worker.queue = async (batch, workerEnv, ctx) => {
      if (batch.queue !== "hookgate-jobs" || ended === 2 || !batch.messages.some(ours))
        return original(batch, workerEnv, ctx);
      ended++;
      const others = batch.messages.filter((m) => !ours(m));
      if (others.length === 0) throw new Error("the invocation ended");
      // Another test's message in the batch: settled as usual, and the job retried as a throw
      // would (Miniflare retries acked messages too when a handler throws; Cloudflare does not).
      await original({ ...batch, messages: others }, workerEnv, ctx);
      for (const message of batch.messages.filter(ours)) message.retry();
    };
    try {
      await sessionEnd(sessionId, "down");
      const [letter] = await until("the dead letter", async () => {
        const dead = await deadLettersFor(sessionId);
        return dead.length > 0 ? dead : undefined;
      });
      expect(ended).toBe(2);
      expect(letter?.body.attempts).toBe(2);
      expect(letter?.body.error).toMatch(
        /^gave up after 2 attempts: its last attempt recorded no outcome \(the Worker ended while delivering it/,
      );
      // Nor can the count tell it from a job whose sink's schedule was shortened while it waited.
      expect(letter?.body.error).toContain("retryScheduleSeconds was shortened while it waited for a retry");
      expect(await sinkRequestsFor(sessionId)).toEqual([]);
    } finally {
      worker.queue = original;
    }
  });

  it.each([
    ["metadata", "EGRESS_BLOCKED_ADDRESS", []],
    ["private", "EGRESS_BLOCKED_ADDRESS", []],
    ["redirect", "EGRESS_REDIRECT", ["https://sink.hookgate.test/redirect"]],
  ])(
    "refuses the %s sink (%s): dead-lettered at once, nothing sent past the guard",
    async (reason, code, reached) => {
      const sessionId = crypto.randomUUID();
      await sessionEnd(sessionId, reason);
      const [letter] = await until("the dead letter", async () => {
        const dead = await deadLettersFor(sessionId);
        return dead.length > 0 ? dead : undefined;
      });
      // Its attempts are its sends: none for a sink refused before it was reached.
      expect(letter?.body).toMatchObject({ attempts: reached.length, body: { sink: reason } });
      expect(letter?.body.error).toContain(code);
      // Every outbound fetch lands in the stand-in network, whatever its host: a literal
      // 169.254.169.254, a name DoH answers 10.0.0.1 for, or a followed redirect would show.
      expect((await sinkRequestsFor(sessionId)).map((r) => r.url)).toEqual(reached);
    },
  );

  it("carries an event larger than a queue message, cut with a visible marker instead of dropped", async () => {
    const sessionId = crypto.randomUUID();
    // 40 strings of 3 900 characters: past Cloudflare's 128 KB per message once on the queue.
    const big = Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`field${i}`, "x".repeat(3900)]));
    await postHook(
      claudeEvent(sessionId, {
        hook_event_name: "PreToolUse",
        tool_name: "Bash",
        tool_input: { command: "echo big", ...big },
        tool_use_id: "toolu_big",
      }),
    );
    const [delivery] = await until("the delivery", async () => {
      const seen = await sinkRequestsFor(sessionId);
      return seen.length > 0 ? seen : undefined;
    });
    expect(delivery?.body).toContain("…[truncated by hookgate]");
    expect(JSON.parse(delivery?.body ?? "{}").data.event.tool_input.command).toBe("echo big");
  });

  it("delivers a permission prompt after a tool call with a 150 KB name, the name cut", async () => {
    // Before, the remembered name went into the job whole, past the 128 KB a
    // Cloudflare queue message holds, so the send failed and the notification was lost.
    const sessionId = crypto.randomUUID();
    const toolName = `mcp__srv__${"t".repeat(150_000)}`;
    await postHook(
      claudeEvent(sessionId, { hook_event_name: "PreToolUse", tool_name: toolName, tool_input: {} }),
    );
    const stored = await until(
      "the KV entry",
      async () =>
        ((await env.HOOKGATE_SESSIONS.get(rememberedKey(sessionId), "json")) as {
          toolName: string;
        } | null) ?? undefined,
    );
    expect(stored.toolName).toMatch(/^mcp__srv__t+…\[truncated by hookgate\]$/);
    await postHook(
      claudeEvent(sessionId, {
        hook_event_name: "Notification",
        message: "Claude needs your permission to use a tool",
        notification_type: "permission_prompt",
      }),
    );
    const [delivery] = await until("the delivery", async () => {
      const seen = await sinkRequestsFor(sessionId);
      return seen.length > 0 ? seen : undefined;
    });
    const event = JSON.parse(delivery?.body ?? "{}");
    expect(event.type).toBe("hook.Notification");
    expect(event.data.event.notification_type).toBe("permission_prompt");
  });

  it("remembers the tool call in KV for permission-prompt notifications", async () => {
    const sessionId = crypto.randomUUID();
    await postHook(
      claudeEvent(sessionId, {
        hook_event_name: "PreToolUse",
        tool_name: "Bash",
        // Not an echo: no-echo denies it, and a call the client is told to deny is not remembered.
        tool_input: { command: "ls remembered" },
        tool_use_id: "toolu_kv",
      }),
    );
    const stored = await until("the KV entry", async () => {
      const value = await env.HOOKGATE_SESSIONS.get(rememberedKey(sessionId), "json");
      return value ?? undefined;
    });
    expect(stored).toEqual({ toolName: "Bash", summary: "ls remembered", at: expect.any(Number) });
  });
});

describe("the queue handler with cloudflare:test batches", () => {
  it("acks what was delivered and retries what failed, message by message", async () => {
    const sessionId = crypto.randomUUID();
    const ok = job("audit", sessionId);
    const flaky = job("flaky", sessionId);
    const batch = createMessageBatch("hookgate-jobs", [
      { id: "m-ok", timestamp: new Date(), attempts: 1, body: ok },
      { id: "m-flaky", timestamp: new Date(), attempts: 1, body: flaky },
    ]);
    const ctx = createExecutionContext();
    await worker.queue(batch as unknown as PushedBatch, env as unknown as WorkerEnv, ctx);
    const result = await getQueueResult(batch, ctx);
    expect(result.outcome).toBe("ok");
    expect(result.explicitAcks).toEqual(["m-ok"]);
    expect(result.retryMessages).toEqual([{ msgId: "m-flaky" }]);
    expect(result.retryBatch.retry).toBe(false);
  });

  it("dead-letters a message that is not a delivery job instead of retrying it forever", async () => {
    const batch = createMessageBatch("hookgate-jobs", [
      { id: "m-junk", timestamp: new Date(), attempts: 1, body: { hello: "world" } },
    ]);
    const ctx = createExecutionContext();
    await worker.queue(batch as unknown as PushedBatch, env as unknown as WorkerEnv, ctx);
    expect((await getQueueResult(batch, ctx)).explicitAcks).toEqual(["m-junk"]);
    const letter = await until("the dead letter", async () =>
      (await control<DeadLetter[]>("/dead-letters")).find((d) => d.body.id === "m-junk"),
    );
    // Why, as the Lambda consumer says it.
    expect(letter.body.error).toBe("not a delivery job: body is not an {id, body} envelope");
    // Never sent: no attempt (it once said 1).
    expect(letter.body.attempts).toBe(0);
  });

  it("dead-letters, undelivered, a message whose envelope id is not its job's, as Lambda does", async () => {
    const sessionId = crypto.randomUUID();
    const envelope = { ...job("audit", sessionId), id: "evt_other.audit" };
    const batch = createMessageBatch("hookgate-jobs", [
      { id: "m-other-id", timestamp: new Date(), attempts: 1, body: envelope },
    ]);
    const ctx = createExecutionContext();
    await worker.queue(batch as unknown as PushedBatch, env as unknown as WorkerEnv, ctx);
    expect((await getQueueResult(batch, ctx)).explicitAcks).toEqual(["m-other-id"]);
    const letter = await until("the dead letter", async () =>
      (await control<DeadLetter[]>("/dead-letters")).find((d) => d.body.id === "m-other-id"),
    );
    expect(letter.body.error).toBe("not a delivery job: envelope id is not its job's id");
    expect(letter.body.body).toEqual(envelope);
    expect(letter.body.attempts).toBe(0);
    // The queue handler settled it: a delivery would have been made by now.
    expect(await sinkRequestsFor(sessionId)).toEqual([]);
  });

  it("dead-letters a message that is no job with no attempt also when Cloudflare delivers it again", async () => {
    // Its third delivery (the DLQ refused its dead letter twice): never sent, no attempt; it once
    // said 2 (Cloudflare's attempts less this one).
    const batch = createMessageBatch("hookgate-jobs", [
      { id: "m-junk-again", timestamp: new Date(), attempts: 3, body: { hello: "again" } },
    ]);
    const ctx = createExecutionContext();
    await worker.queue(batch as unknown as PushedBatch, env as unknown as WorkerEnv, ctx);
    expect((await getQueueResult(batch, ctx)).explicitAcks).toEqual(["m-junk-again"]);
    const letter = await until("the dead letter", async () =>
      (await control<DeadLetter[]>("/dead-letters")).find((d) => d.body.id === "m-junk-again"),
    );
    expect(letter.body.attempts).toBe(0);
  });

  it("dead-letters a message that is no job and too big to quote whole, its body cut to fit", async () => {
    // Quoted in the dead letter, 100 000 double quotes became 200 KB, past the 128 KB a message
    // holds: the DLQ refused it on every attempt, and Cloudflare moved it after max_retries
    // without saying why.
    vi.spyOn(console, "error").mockImplementation(() => {});
    const text = '"'.repeat(100_000);
    const batch = createMessageBatch("hookgate-jobs", [
      { id: "m-quotes", timestamp: new Date(), attempts: 1, body: text },
    ]);
    const ctx = createExecutionContext();
    await worker.queue(batch as unknown as PushedBatch, env as unknown as WorkerEnv, ctx);
    const result = await getQueueResult(batch, ctx);
    expect(result.explicitAcks).toEqual(["m-quotes"]);
    expect(result.retryMessages).toEqual([]);
    const letter = await until("the dead letter", async () =>
      (await control<DeadLetter[]>("/dead-letters")).find((d) => d.body.id === "m-quotes"),
    );
    expect(letter.body.error).toBe("not a delivery job: body is not an {id, body} envelope");
    const kept = letter.body.body as unknown as string;
    expect(kept.endsWith("…[truncated by hookgate]")).toBe(true);
    expect(text.startsWith(kept.slice(0, -"…[truncated by hookgate]".length))).toBe(true);
  });

  it("leaves dead letters pushed back from its own DLQ on that queue, neither delivered nor dead-lettered again", async () => {
    // wrangler.toml with the DLQ listed under [[queues.consumers]] too: the Worker is pushed the
    // letters it wrote. A job's letter was delivered again (and, failing, dead-lettered again, for
    // ever); one that is no job went back to the DLQ at once, in one more letter each turn.
    const lines: string[] = [];
    vi.spyOn(console, "error").mockImplementation((line: string) => lines.push(line));
    const sessionId = crypto.randomUUID();
    const { id, body } = job("audit", sessionId);
    const letter = (body: unknown, letterId: string) => ({
      id: letterId,
      body,
      attempts: 1,
      error: "webhook answered 410",
      failedAt: Date.now(),
    });
    const batch = createMessageBatch("hookgate-jobs-dlq", [
      { id: "m-letter-job", timestamp: new Date(), attempts: 1, body: letter(body, id) },
      { id: "m-letter-junk", timestamp: new Date(), attempts: 1, body: letter({ hello: "dlq" }, "m-junk") },
    ]);
    const ctx = createExecutionContext();
    await worker.queue(batch as unknown as PushedBatch, env as unknown as WorkerEnv, ctx);
    const result = await getQueueResult(batch, ctx);
    // Retried, so they stay on the DLQ: acked, they were gone.
    expect(result.explicitAcks).toEqual([]);
    expect(result.retryMessages).toEqual([{ msgId: "m-letter-job" }, { msgId: "m-letter-junk" }]);
    // The queue handler settled them: a delivery would have been made by now.
    expect(await sinkRequestsFor(sessionId)).toEqual([]);
    const told = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(told).toEqual([
      expect.objectContaining({
        msg: "dead letters came back to the Worker; left on their queue, not delivered again",
        queue: "hookgate-jobs-dlq",
        letters: 2,
        retryInSeconds: 43_200,
        fix: expect.stringContaining('remove the [[queues.consumers]] entry of "hookgate-jobs-dlq"'),
      }),
    ]);
  });
});

describe("a message from another producer", () => {
  /** The jobs queue's producer binding, as another Worker bound to the queue would use it. */
  const producer = env.HOOKGATE_QUEUE as {
    send(body: unknown, options: { contentType: "bytes" | "v8" }): Promise<void>;
  };
  // What the DLQ consumer of test/workers/network.js received, by a text the body holds.
  const deadLetterHolding = (marker: string) =>
    until("the dead letter", async () =>
      (await control<DeadLetter[]>("/dead-letters")).find((d) =>
        JSON.stringify(d.body.body).includes(marker),
      ),
    );

  it("dead-letters a bytes body with its bytes, in base64, not as {}", async () => {
    vi.spyOn(console, "error").mockImplementation(() => {});
    const marker = `bytes-${crypto.randomUUID()}`;
    const bytes = new TextEncoder().encode(`not json: ${marker}`);
    const inBase64 = btoa(String.fromCharCode(...bytes));
    await producer.send(bytes, { contentType: "bytes" });
    const letter = await deadLetterHolding(inBase64);
    expect(letter.body.error).toBe(
      "not a delivery job: body is not an {id, body} envelope (its bytes in base64)",
    );
    expect(atob(letter.body.body as unknown as string)).toBe(`not json: ${marker}`);
    expect(letter.body.attempts).toBe(0);
  });

  it("dead-letters a structured clone JSON cannot hold at once, its values as text, not retried every minute", async () => {
    const errors: string[] = [];
    vi.spyOn(console, "error").mockImplementation((line: string) => {
      errors.push(line);
    });
    const marker = `v8-${crypto.randomUUID()}`;
    const cyclic: Record<string, unknown> = { marker };
    cyclic.self = cyclic;
    await producer.send(
      { marker, count: 10n ** 20n, tags: new Map([["k", "v"]]), cyclic },
      { contentType: "v8" },
    );
    const letter = await deadLetterHolding(marker);
    expect(letter.body.error).toBe(
      "not a delivery job: body is not an {id, body} envelope (values JSON cannot hold written as text, bytes as base64)",
    );
    expect(letter.body.body).toEqual({
      marker,
      count: "100000000000000000000",
      tags: [["k", "v"]],
      cyclic: { marker, self: "[seen above]" },
    });
    expect(errors.filter((line) => line.includes("dead-letter send failed"))).toEqual([]);
  });
});

describe("outcome translation", () => {
  /** A pushed message that records what the handler did with it. */
  function recorded(body: unknown, attempts: number) {
    const calls: { ack: number; retry: { delaySeconds?: number }[] } = { ack: 0, retry: [] };
    const message: PushedMessage = {
      id: crypto.randomUUID(),
      body,
      attempts,
      ack: () => {
        calls.ack++;
      },
      retry: (options = {}) => {
        calls.retry.push(options);
      },
    };
    return { message, calls };
  }

  async function consume(messages: PushedMessage[], changes: Partial<Record<string, unknown>> = {}) {
    const ctx = createExecutionContext();
    await worker.queue({ queue: "hookgate-jobs", messages }, { ...env, ...changes } as WorkerEnv, ctx);
    await waitOnExecutionContext(ctx);
  }

  const slowPolicy = JSON.stringify({
    ...FANOUT_POLICY,
    sinks: { ...FANOUT_POLICY.sinks, down: { ...FANOUT_POLICY.sinks.down, retryScheduleSeconds: [30] } },
  });

  it("retries a deliverer that throws on the default schedule, then dead-letters the job with the error", async () => {
    const sent: { error: string; attempts: number }[] = [];
    const consumer = createCloudflareConsumer({
      deliverer: {
        deliver: async () => {
          throw new Error("a defect");
        },
      },
      deadLetters: {
        send: async (body: unknown) => {
          sent.push(body as { error: string; attempts: number });
        },
      } as unknown as Parameters<typeof createCloudflareConsumer>[0]["deadLetters"],
      logger: { log: () => undefined },
      now: Date.now,
    });
    const sessionId = crypto.randomUUID();
    const first = recorded(job("audit", sessionId), 1);
    const spent = recorded(job("audit", sessionId), DEFAULT_RETRY_SCHEDULE_SECONDS.length + 1);
    await consumer.consume({ queue: "hookgate-jobs", messages: [first.message, spent.message] });
    expect(first.calls.retry).toEqual([{ delaySeconds: DEFAULT_RETRY_SCHEDULE_SECONDS[0] }]);
    expect(spent.calls).toEqual({ ack: 1, retry: [] });
    expect(sent).toEqual([
      expect.objectContaining({ error: `gave up after 8 attempts: internal error: a defect`, attempts: 8 }),
    ]);
  });

  it("delivers at most DELIVERIES_AT_ONCE jobs of a batch at once, each settled, so hung sinks leave connections for the rest", async () => {
    // Cloudflare holds an invocation to 6 open connections, and a fetch past them waits with its
    // time limit running: 10 started together behind 6 hung sinks timed out unsent.
    let inFlight = 0;
    let most = 0;
    const started: string[] = [];
    const consumer = createCloudflareConsumer({
      deliverer: {
        deliver: async (delivered) => {
          started.push(delivered.id);
          most = Math.max(most, ++inFlight);
          await new Promise((resolve) => setTimeout(resolve, 20));
          inFlight--;
          return { kind: "ack" } as const;
        },
      },
      deadLetters: { send: async () => undefined } as unknown as Parameters<
        typeof createCloudflareConsumer
      >[0]["deadLetters"],
      logger: { log: () => undefined },
      now: Date.now,
    });
    const sessionId = crypto.randomUUID();
    const messages = Array.from({ length: 10 }, () => recorded(job("audit", sessionId), 1));
    await consumer.consume({ queue: "hookgate-jobs", messages: messages.map((m) => m.message) });
    expect(most).toBe(DELIVERIES_AT_ONCE);
    expect(DELIVERIES_AT_ONCE).toBeLessThan(6);
    expect(started).toHaveLength(10);
    for (const { calls } of messages) expect(calls).toEqual({ ack: 1, retry: [] });
  });

  it("dead-letters a structured clone that holds itself through a Map, or nests past the stack, without failing the batch", async () => {
    // Before, a Map holding itself became a new array at each turn, the stack
    // overflowed, and the batch failed: its delivered job was sent again with the rest.
    const sent: { error: string; body: unknown }[] = [];
    const delivered: string[] = [];
    const consumer = createCloudflareConsumer({
      deliverer: {
        deliver: async (job) => {
          delivered.push(job.id);
          return { kind: "ack" };
        },
      },
      deadLetters: {
        send: async (body: unknown) => {
          sent.push((body as { error: string; body: unknown }) ?? { error: "", body: undefined });
        },
      } as unknown as Parameters<typeof createCloudflareConsumer>[0]["deadLetters"],
      logger: { log: () => undefined },
      now: Date.now,
    });
    const envelope = job("audit", crypto.randomUUID());
    const selfish = new Map<string, unknown>([["marker", "selfish"]]);
    selfish.set("self", selfish);
    let deep: unknown[] = [];
    for (let i = 0; i < 100_000; i++) deep = [deep];
    const ok = recorded(envelope, 1);
    const cyclic = recorded(selfish, 1);
    const nested = recorded(deep, 1);
    await consumer.consume({
      queue: "hookgate-jobs",
      messages: [ok.message, cyclic.message, nested.message],
    });
    expect(delivered).toEqual([envelope.id]);
    expect([ok.calls, cyclic.calls, nested.calls]).toEqual([
      { ack: 1, retry: [] },
      { ack: 1, retry: [] },
      { ack: 1, retry: [] },
    ]);
    expect(sent.map((letter) => letter.body)).toEqual([
      [
        ["marker", "selfish"],
        ["self", "[seen above]"],
      ],
      "[object Array]",
    ]);
    expect(sent[1]?.error).toBe(
      "not a delivery job: body is not an {id, body} envelope (nested too deep to write; only its type kept)",
    );
  });

  it("retries with the schedule's delay in whole seconds, and passes msg.attempts to the schedule", async () => {
    const sessionId = crypto.randomUUID();
    const first = recorded(job("down", sessionId), 1);
    const last = recorded(job("down", sessionId), 2);
    await consume([first.message, last.message], { HOOKGATE_POLICY: slowPolicy });
    expect(first.calls.ack).toBe(0);
    expect(first.calls.retry).toHaveLength(1);
    const delay = first.calls.retry[0]?.delaySeconds ?? -1;
    // 30 s ± 20 % jitter, rounded up to whole seconds.
    expect(delay).toBeGreaterThanOrEqual(24);
    expect(delay).toBeLessThanOrEqual(36);
    expect(Number.isInteger(delay)).toBe(true);
    // attempts 2 is past a one-entry schedule: dead-lettered, then acked.
    expect(last.calls).toEqual({ ack: 1, retry: [] });
  });

  it("holds a job its sink's rate limit holds as a copy carrying its counts, and dead-letters it past MAX_HOLDS", async () => {
    // RELIABILITY.md problem 9: a held job was retried, which Cloudflare counts in msg.attempts:
    // its next failure read the schedule one step on, and max_retries could move it unexplained.
    const deliverer = createDeliverer({
      policy: () => ({
        document: { sinks: { hook: { type: "webhook", url: "https://sink.hookgate.test/in" } } },
        secrets: [],
      }),
      egress: async () => ({
        ok: true,
        value: { status: 429, headers: { "retry-after": "1" }, body: "slow" },
      }),
      env: () => undefined,
      clock: { now: Date.now, monotonic: () => performance.now() },
      random: () => 0.5,
    });
    const sent: { body: unknown; options?: { delaySeconds?: number } }[] = [];
    const letters: { error: string; attempts: number }[] = [];
    const lines: { msg: string; fields: Record<string, unknown> | undefined }[] = [];
    const consumer = createCloudflareConsumer({
      deliverer,
      deadLetters: {
        send: async (body: unknown) => {
          letters.push(body as { error: string; attempts: number });
        },
      } as unknown as Parameters<typeof createCloudflareConsumer>[0]["deadLetters"],
      jobs: {
        send: async (body, options) => {
          if (body.id.startsWith("refused.")) throw new Error("queue unavailable");
          sent.push({ body, ...(options && { options }) });
        },
        sendBatch: () => Promise.reject(new Error("one copy per send")),
      },
      logger: { log: (_level, msg, fields) => lines.push({ msg, fields }) },
      now: Date.now,
    });
    const sessionId = crypto.randomUUID();
    const hook = (name: string) => {
      const envelope = job("hook", sessionId);
      return { ...envelope, id: `${name}.hook`, body: { ...envelope.body, id: `${name}.hook` } };
    };
    // A first send meets the rate limit (an attempt, retried); the sink's other jobs are held.
    const limited = recorded(hook("limited"), 1);
    await consumer.consume({ queue: "hookgate-jobs", messages: [limited.message] });
    expect(limited.calls.retry).toHaveLength(1);
    const held = hook("held");
    const once = recorded({ ...held, sent: 1, holds: 3 }, 1);
    const spent = recorded({ ...hook("spent"), sent: 2, holds: MAX_HOLDS }, 1);
    await consumer.consume({ queue: "hookgate-jobs", messages: [once.message, spent.message] });
    expect(once.calls).toEqual({ ack: 1, retry: [] });
    expect(sent).toEqual([
      {
        body: { id: held.id, body: held.body, sent: 1, holds: 4 },
        options: { contentType: "json", delaySeconds: 2 },
      },
    ]);
    // The line gives its attempts after the hold, its one send (it once said 2,
    // counting the delivery the copy does not).
    expect(lines.filter((l) => l.msg === "delivery held; not sent").map((l) => l.fields)).toEqual([
      expect.objectContaining({ job: held.id, attempts: 1, holds: 4 }),
    ]);
    expect(spent.calls).toEqual({ ack: 1, retry: [] });
    // Its 2 sends; it once said 3, its last receive, which sent nothing, counted.
    expect(letters).toEqual([
      expect.objectContaining({
        attempts: 2,
        error: `gave up after ${MAX_HOLDS} holds without a send: not sent: the sink asked to wait 1 s more after a rate limit`,
      }),
    ]);
    // A copy the queue refuses: the message is retried (one attempt), never acked, so never lost.
    const refused = recorded(hook("refused"), 1);
    await consumer.consume({ queue: "hookgate-jobs", messages: [refused.message] });
    expect(refused.calls.ack).toBe(0);
    expect(refused.calls.retry).toEqual([{ delaySeconds: expect.any(Number) }]);
    expect(sent).toHaveLength(1);
  });

  it("passes a held job's holds to the Worker's deliverer, which dead-letters it past MAX_HOLDS", async () => {
    // The Worker's lazy deliverer passed on the job and its attempts only: holds read as 0, so a
    // job its sink kept holding went back on the queue as a copy for ever, never dead-lettered.
    vi.spyOn(console, "log").mockImplementation(() => {});
    vi.spyOn(console, "warn").mockImplementation(() => {});
    vi.spyOn(console, "error").mockImplementation(() => {});
    const policy = JSON.stringify({
      ...FANOUT_POLICY,
      sinks: {
        ...FANOUT_POLICY.sinks,
        limited: { ...FANOUT_POLICY.sinks.audit, url: `${SINK_ORIGIN}/limited` },
      },
    });
    const copies: unknown[] = [];
    const jobs = {
      send: async (body: unknown) => {
        copies.push(body);
      },
      sendBatch: () => Promise.reject(new Error("one copy per send")),
    };
    const sessionId = crypto.randomUUID();
    // The first send meets the sink's 429 (Retry-After: 60): the sink is held in this isolate.
    const limited = recorded(job("limited", sessionId), 1);
    await consume([limited.message], { HOOKGATE_POLICY: policy, HOOKGATE_QUEUE: jobs });
    expect(limited.calls.retry).toHaveLength(1);
    const held = job("limited", sessionId);
    const spent = recorded({ ...held, sent: 1, holds: MAX_HOLDS }, 1);
    await consume([spent.message], { HOOKGATE_POLICY: policy, HOOKGATE_QUEUE: jobs });
    expect(copies).toEqual([]);
    expect(spent.calls).toEqual({ ack: 1, retry: [] });
    const letter = await until("the dead letter", async () =>
      (await control<DeadLetter[]>("/dead-letters")).find((d) => d.body.id === held.id),
    );
    expect(letter?.body).toMatchObject({
      attempts: 1,
      error: expect.stringContaining(`gave up after ${MAX_HOLDS} holds without a send`),
    });
  });

  it("retries later, never acks, when the dead-letter queue refuses the job", async () => {
    const errors = vi.spyOn(console, "error").mockImplementation(() => {});
    const { message, calls } = recorded(job("gone", crypto.randomUUID()), 1);
    const failing = {
      send: () => Promise.reject(new Error("DLQ unavailable")),
      sendBatch: () => Promise.reject(new Error("DLQ unavailable")),
    };
    await consume([message], { HOOKGATE_DLQ: failing });
    expect(calls).toEqual({ ack: 0, retry: [{ delaySeconds: 60 }] });
    expect(errors.mock.calls.some(([line]) => String(line).includes("dead-letter send failed"))).toBe(true);
  });

  it("dead-letters a job whose sink left the policy with no attempt when the DLQ refused it before", async () => {
    // Before, the DLQ's refusal retried the message, Cloudflare counted that
    // delivery in msg.attempts, and the dead letter made when it came back said 1 attempt for a
    // job never sent.
    vi.spyOn(console, "error").mockImplementation(() => {});
    const envelope = job("removed", crypto.randomUUID());
    const first = recorded(envelope, 1);
    const failing = {
      send: () => Promise.reject(new Error("DLQ unavailable")),
      sendBatch: () => Promise.reject(new Error("DLQ unavailable")),
    };
    await consume([first.message], { HOOKGATE_DLQ: failing });
    expect(first.calls).toEqual({ ack: 0, retry: [{ delaySeconds: 60 }] });
    // The same message delivered again, as Cloudflare does after a retry.
    const again = recorded(envelope, 2);
    await consume([{ ...again.message, id: first.message.id }]);
    expect(again.calls).toEqual({ ack: 1, retry: [] });
    const letter = await until("the dead letter", async () =>
      (await control<DeadLetter[]>("/dead-letters")).find((d) => d.body.id === envelope.id),
    );
    expect(letter.body).toMatchObject({ attempts: 0, error: 'sink "removed" is no longer in the policy' });
  });

  it("holds jobs while the policy is broken by sending them again with a delay, so no retry is spent", async () => {
    // Retried instead, each redelivery would count in `attempts`, which the sink's schedule reads,
    // and after max_retries Cloudflare would move the job to the DLQ without one delivery.
    vi.spyOn(console, "error").mockImplementation(() => {});
    const held = job("audit", crypto.randomUUID());
    const { message, calls } = recorded(held, 4);
    const other = recorded({ not: "a job" }, 1);
    const copy = recorded({ ...job("audit", crypto.randomUUID()), sent: 2, holds: 5 }, 3);
    const sent: { body: unknown; delaySeconds?: number }[] = [];
    const jobs = {
      send: async (body: unknown, options: { delaySeconds?: number }) => {
        sent.push({ body, ...options });
      },
      sendBatch: () => Promise.reject(new Error("one copy per send")),
    };
    await consume([message, other.message, copy.message], {
      HOOKGATE_POLICY: "{ broken",
      HOOKGATE_QUEUE: jobs,
    });
    expect(calls).toEqual({ ack: 1, retry: [] });
    expect(copy.calls).toEqual({ ack: 1, retry: [] });
    // The copy carries the job's sends and holds, as a held job's does: a job that had failed
    // twice started its schedule again after a wait for the policy. The wait is neither.
    const { sent: _, holds: __, ...bare } = copy.message.body as { sent: number; holds: number };
    expect(sent).toEqual([
      expect.objectContaining({ body: { ...held, sent: 3, holds: 0 }, delaySeconds: 300 }),
      expect.objectContaining({ body: { ...bare, sent: 4, holds: 5 }, delaySeconds: 300 }),
    ]);
    // What is not a job's envelope needs no policy: dead-lettered at once, with why. Before, it was
    // retried: it came back every 5 minutes until Cloudflare moved it after max_retries without a
    // reason.
    expect(other.calls).toEqual({ ack: 1, retry: [] });
    const letter = await until("the dead letter", async () =>
      (await control<DeadLetter[]>("/dead-letters")).find((d) => d.body.id === other.message.id),
    );
    expect(letter.body).toMatchObject({
      body: { not: "a job" },
      attempts: 0,
      error: "not a delivery job: body is not an {id, body} envelope",
    });
  });

  it("acks exactly the jobs it sent again while the policy is broken, and retries the rest", async () => {
    // A job both sent again and retried would be delivered twice.
    vi.spyOn(console, "error").mockImplementation(() => {});
    const batch = [1, 2, 3].map(() => recorded(job("audit", crypto.randomUUID()), 1));
    let calls = 0;
    const sent: unknown[] = [];
    const flaky = {
      send: async (body: { id: string; body: unknown }) => {
        if (++calls === 2) throw new Error("Too Many Requests");
        sent.push({ id: body.id, body: body.body });
      },
      sendBatch: () => Promise.reject(new Error("one copy per send")),
    };
    await consume(
      batch.map((b) => b.message),
      { HOOKGATE_POLICY: "{ broken", HOOKGATE_QUEUE: flaky },
    );
    expect(batch.map((b) => b.calls)).toEqual([
      { ack: 1, retry: [] },
      { ack: 0, retry: [{ delaySeconds: 300 }] },
      { ack: 1, retry: [] },
    ]);
    expect(sent).toEqual([batch[0]?.message.body, batch[2]?.message.body]);
  });

  it("holds a job while the policy is broken with no attempt for an earlier hold whose copy was not sent", async () => {
    // Before, the copy's refused send retried the message, Cloudflare counted that
    // delivery in msg.attempts, and the copy sent when it came back carried it as a send.
    vi.spyOn(console, "error").mockImplementation(() => {});
    const envelope = job("audit", crypto.randomUUID());
    const first = recorded(envelope, 1);
    const refusing = {
      send: () => Promise.reject(new Error("Too Many Requests")),
      sendBatch: () => Promise.reject(new Error("Too Many Requests")),
    };
    await consume([first.message], { HOOKGATE_POLICY: "{ broken", HOOKGATE_QUEUE: refusing });
    expect(first.calls).toEqual({ ack: 0, retry: [{ delaySeconds: 300 }] });
    // The same message delivered again, as Cloudflare does after a retry.
    const again = recorded(envelope, 2);
    const sent: unknown[] = [];
    const jobs = {
      send: async (body: unknown) => {
        sent.push(body);
      },
      sendBatch: () => Promise.reject(new Error("one copy per send")),
    };
    await consume([{ ...again.message, id: first.message.id }], {
      HOOKGATE_POLICY: "{ broken",
      HOOKGATE_QUEUE: jobs,
    });
    expect(again.calls).toEqual({ ack: 1, retry: [] });
    expect(sent).toEqual([{ ...envelope, sent: 0, holds: 0 }]);
  });

  it("retries jobs while the policy is broken when they cannot be sent again", async () => {
    vi.spyOn(console, "error").mockImplementation(() => {});
    const { message, calls } = recorded(job("audit", crypto.randomUUID()), 1);
    const refusing = {
      send: () => Promise.reject(new Error("Too Many Requests")),
      sendBatch: () => Promise.reject(new Error("Too Many Requests")),
    };
    await consume([message], { HOOKGATE_POLICY: "{ broken", HOOKGATE_QUEUE: refusing });
    expect(calls).toEqual({ ack: 0, retry: [{ delaySeconds: 300 }] });
  });
});

describe("a failed enqueue", () => {
  /**
   * A SessionEnd that notifies, answered by the Worker with `queue` as its queue binding; the
   * metric names it wrote, once its waitUntil work is done.
   */
  async function notifyThrough(queue: unknown): Promise<(string | undefined)[]> {
    const points: { indexes?: string[] }[] = [];
    const ctx = createExecutionContext();
    const res = await worker.fetch(
      new Request("https://hookgate.test/v1/hooks", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(
          claudeEvent(crypto.randomUUID(), { hook_event_name: "SessionEnd", reason: "flaky" }),
        ),
      }),
      {
        ...env,
        HOOKGATE_QUEUE: queue,
        HOOKGATE_METRICS: { writeDataPoint: (p: { indexes?: string[] }) => points.push(p) },
      } as unknown as WorkerEnv,
      ctx,
    );
    expect(res.status).toBe(200);
    await waitOnExecutionContext(ctx);
    return points.map((p) => p.indexes?.[0]);
  }

  it("is sent again when Cloudflare refuses a send once, and not lost", async () => {
    // Cloudflare refuses a send now and then ("Queue is overloaded. Please back off."); sent
    // once, the event's only copy was lost with an "enqueue failed" line.
    const errors = vi.spyOn(console, "error").mockImplementation(() => {});
    const sent: { body: { id: string; body: DeliveryJob } }[][] = [];
    let calls = 0;
    const metrics = await notifyThrough({
      send: () => Promise.reject(new Error("the producer sends in batches")),
      sendBatch: async (messages: Iterable<{ body: { id: string; body: DeliveryJob } }>) => {
        if (calls++ === 0) throw new Error("Queue sendBatch failed: Queue is overloaded. Please back off.");
        sent.push([...messages]);
      },
    });
    expect(calls).toBe(2);
    expect(sent.flat().map((m) => m.body.body.notification.eventName)).toEqual(["SessionEnd"]);
    expect(errors.mock.calls.filter(([line]) => String(line).includes("enqueue failed"))).toEqual([]);
    expect(metrics).toContain("hookgate_enqueued_total");
    expect(metrics).not.toContain("hookgate_enqueue_failed_total");
  });

  it("is logged and counted, and the decision is answered anyway", async () => {
    const errors = vi.spyOn(console, "error").mockImplementation(() => {});
    const metrics = await notifyThrough({
      send: () => Promise.reject(new Error("Too Many Requests")),
      sendBatch: () => Promise.reject(new Error("Too Many Requests")),
    });
    const logged = errors.mock.calls.map(([line]) => JSON.parse(String(line)));
    expect(logged).toContainEqual(
      expect.objectContaining({
        msg: "enqueue failed; the decision was answered anyway",
        error: "Too Many Requests",
      }),
    );
    expect(metrics).toContain("hookgate_enqueue_failed_total");
  });
});

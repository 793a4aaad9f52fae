/**
 * A session store (KV) that fails, inside workerd: told when it starts and when it ends, once for
 * the isolate, not once per failed call of each request. The failing namespace is a stand-in
 * passed as the binding (Miniflare's KV cannot be made to fail); the working one is the real KV.
 */
import { env } from "cloudflare:test";
import { afterEach, describe, expect, it, vi } from "vitest";
import { createKvSessionStore, type KvNamespaceLike } from "../../src/adapters/session/kv.js";
import type { DeliveryJob } from "../../src/core/delivery.js";
import type { WorkerEnv } from "../../src/entry/workers.js";
import { answerHook } from "./answer-hook.js";

afterEach(() => {
  vi.restoreAllMocks();
});

const failingKv: KvNamespaceLike = {
  get: () => Promise.reject(new Error("KV GET failed: 503 Service Unavailable")),
  put: () => Promise.reject(new Error("KV PUT failed: 503 Service Unavailable")),
};

/**
 * A permission prompt (the policy's `prompts` rule notifies it, enriched from KV) with this KV,
 * and `bindings` beside it (a queue that records its jobs).
 */
async function prompt(
  sessions: KvNamespaceLike,
  sessionId: string = crypto.randomUUID(),
  headers: Record<string, string> = {},
  bindings: Record<string, unknown> = {},
): Promise<void> {
  const res = await answerHook(
    {
      session_id: sessionId,
      transcript_path: "/t",
      cwd: "/p",
      hook_event_name: "Notification",
      message: "Claude needs your permission to use Bash",
      notification_type: "permission_prompt",
    },
    { ...env, HOOKGATE_SESSIONS: sessions, ...bindings } as WorkerEnv,
    headers,
  );
  expect(res.status).toBe(200);
}

/** A KV namespace whose every call never answers. */
const hungKv: KvNamespaceLike = {
  get: () => new Promise(() => {}),
  put: () => new Promise(() => {}),
};

/** The stand-in sink's requests (test/workers/network.js) that carry `text`. */
async function sinkRequestsHolding(text: string): Promise<{ body: string }[]> {
  const res = await env.NETWORK.fetch("https://control.test/requests");
  return ((await res.json()) as { body: string }[]).filter((r) => r.body.includes(text));
}

describe("the Worker's session store failures", () => {
  it("are told once when KV starts failing, not per request, and once when it works again", async () => {
    const lines: string[] = [];
    vi.spyOn(console, "log").mockImplementation((line: string) => lines.push(line));
    vi.spyOn(console, "warn").mockImplementation((line: string) => lines.push(line));
    await prompt(failingKv);
    await prompt(failingKv);
    await prompt(failingKv);
    await prompt(env.HOOKGATE_SESSIONS);
    await prompt(env.HOOKGATE_SESSIONS);
    const told = lines
      .map((l) => JSON.parse(l) as { msg: string; error?: string; failures?: number })
      .filter((l) => l.msg.startsWith("session store"));
    expect(told).toEqual([
      expect.objectContaining({
        msg: "session store failed; the notification goes out without it",
        error: "KV GET failed: 503 Service Unavailable",
      }),
      expect.objectContaining({ msg: "session store works again", failures: 3 }),
    ]);
  });

  it("let a tool call be remembered after a decision that spent the request's deadline", async () => {
    // The notify work runs after the answer, in waitUntil: a prompt rule whose model did not
    // answer in time had spent the decision's deadline, and the KV write of the tool was given up
    // at once, told as a session store failure, its permission prompt at risk of going without it.
    const lines: string[] = [];
    vi.spyOn(console, "log").mockImplementation((line: string) => lines.push(line));
    vi.spyOn(console, "warn").mockImplementation((line: string) => lines.push(line));
    const sessionId = crypto.randomUUID();
    // The real KV, answering in 200 ms, as a write to a distant location may.
    const kv = env.HOOKGATE_SESSIONS as KvNamespaceLike;
    const later = () => new Promise((resolve) => setTimeout(resolve, 200));
    const distantKv: KvNamespaceLike = {
      get: (key, type) => later().then(() => kv.get(key, type)),
      put: (key, value, options) => later().then(() => kv.put(key, value, options)),
    };
    // judge-searches (fanout-policy.ts): its model holds a "stuck-model" prompt for 60 s.
    const res = await answerHook(
      {
        session_id: sessionId,
        transcript_path: "/t",
        cwd: "/p",
        hook_event_name: "PreToolUse",
        tool_name: "WebSearch",
        tool_input: { query: `stuck-model ${crypto.randomUUID()}` },
      },
      { ...env, HOOKGATE_SESSIONS: distantKv } as WorkerEnv,
      // A 1 s hook: the request's deadline is 750 ms after it arrived, spent waiting on the model.
      { "x-hookgate-timeout": "1" },
    );
    expect(res.status).toBe(200);
    const told = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(told).toContainEqual(expect.objectContaining({ msg: "decision", event: "PreToolUse" }));
    expect(told.filter((l) => String(l.msg).startsWith("session store failed"))).toEqual([]);
    // Written for the permission prompt that may follow (notify.ts keys a session by team and id).
    const store = createKvSessionStore(kv);
    expect(await store.lastTool(JSON.stringify(["default", sessionId]), Date.now())).toMatchObject({
      toolName: "WebSearch",
    });
  });

  it("written in another isolate, a refused call of the tool a prompt names leaves the prompt without a tool, not with another's call", async () => {
    const sessionId = crypto.randomUUID();
    // Another isolate's notifier, over the same KV: the keys notify.ts makes, team and id.
    const session = JSON.stringify(["default", sessionId]);
    const tool = (name: string) => JSON.stringify(["default", sessionId, name]);
    const kv = env.HOOKGATE_SESSIONS as KvNamespaceLike;
    let refuse = true;
    const refusing: KvNamespaceLike = {
      get: (key, type) => kv.get(key, type),
      put: (key, value, options) =>
        refuse && key.startsWith("tool:")
          ? Promise.reject(new Error("KV PUT failed: 429 Too Many Requests"))
          : kv.put(key, value, options),
    };
    const other = createKvSessionStore(refusing);
    const now = Date.now();
    refuse = false;
    await other.rememberTool([session, tool("Bash")], { toolName: "Bash", summary: "ls" }, now - 3000);
    refuse = true;
    await expect(
      other.rememberTool([session, tool("Bash")], { toolName: "Bash", summary: "rm -rf build" }, now - 2000),
    ).rejects.toThrow("429");
    refuse = false;
    await other.rememberTool([session, tool("Read")], { toolName: "Read", summary: "a.txt" }, now - 1000);
    // This isolate saw none of it: the prompt is for the Bash call whose write was refused. Its
    // job is read as the queue is sent it (a webhook's body carries no tool; Slack's does).
    const sent: { body: { body: DeliveryJob } }[] = [];
    const queue = {
      sendBatch: async (messages: { body: { body: DeliveryJob } }[]) => {
        sent.push(...messages);
      },
      send: async (message: { body: DeliveryJob }) => {
        sent.push({ body: message });
      },
    };
    await prompt(kv, sessionId, {}, { HOOKGATE_QUEUE: queue });
    expect(sent).toHaveLength(1);
    // Neither the Bash call before the refused one, nor the Read call after it.
    expect(sent[0]?.body.body.notification.relatedTool).toBeUndefined();
  });

  it("in the isolate that saw a call's session key refused, a prompt naming its tool is told the call its tool's key took", async () => {
    const sessionId = crypto.randomUUID();
    const kv = env.HOOKGATE_SESSIONS as KvNamespaceLike;
    const sessionKey = `tool:${JSON.stringify(["default", sessionId])}`;
    // KV's one write a second: the session's key took the Bash call a moment before and refuses
    // the Read call's write (429); the key of the session and Read, written once, takes it.
    const refusingSessionKey: KvNamespaceLike = {
      get: (key, type) => kv.get(key, type),
      put: (key, value, options) =>
        key === sessionKey
          ? Promise.reject(new Error("KV PUT failed: 429 Too Many Requests"))
          : kv.put(key, value, options),
    };
    const call = (tool_name: string, tool_input: Record<string, unknown>, sessions: KvNamespaceLike) =>
      answerHook(
        {
          session_id: sessionId,
          transcript_path: "/t",
          cwd: "/p",
          hook_event_name: "PreToolUse",
          tool_name,
          tool_input,
        },
        { ...env, HOOKGATE_SESSIONS: sessions } as WorkerEnv,
      );
    expect((await call("Bash", { command: "ls" }, kv)).status).toBe(200);
    expect((await call("Read", { file_path: "/p/a.txt" }, refusingSessionKey)).status).toBe(200);
    const sent: { body: { body: DeliveryJob } }[] = [];
    const queue = {
      sendBatch: async (messages: { body: { body: DeliveryJob } }[]) => {
        sent.push(...messages);
      },
      send: async (message: { body: DeliveryJob }) => {
        sent.push({ body: message });
      },
    };
    const res = await answerHook(
      {
        session_id: sessionId,
        transcript_path: "/t",
        cwd: "/p",
        hook_event_name: "Notification",
        message: "Claude needs your permission to use Read",
        notification_type: "permission_prompt",
      },
      { ...env, HOOKGATE_SESSIONS: kv, HOOKGATE_QUEUE: queue } as WorkerEnv,
    );
    expect(res.status).toBe(200);
    expect(sent).toHaveLength(1);
    // As another isolate names it: the session key's refusal left the Read key's write standing,
    // where this isolate took both for failed and named none.
    expect(sent[0]?.body.body.notification.relatedTool).toEqual({ toolName: "Read", summary: "/p/a.txt" });
  });

  it("give up a KV read that never answers at the request's deadline, and the notification goes out without it", async () => {
    // KV has no timeout of its own: the notify work waited on the read, after the answer, until
    // the runtime ended the request's waitUntil, and the job was never enqueued.
    const lines: string[] = [];
    vi.spyOn(console, "log").mockImplementation((line: string) => lines.push(line));
    vi.spyOn(console, "warn").mockImplementation((line: string) => lines.push(line));
    const sessionId = crypto.randomUUID();
    // A 1 s hook: the request's deadline is 750 ms after it arrived.
    await prompt(hungKv, sessionId, { "x-hookgate-timeout": "1" });
    const told = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(told).toContainEqual(
      expect.objectContaining({
        msg: "session store failed; the notification goes out without it",
        error: "no answer within the request's deadline",
        what: "lastTool",
      }),
    );
    // Enqueued, then delivered by the Worker's queue handler: before, it never went out. (A
    // webhook carries no tool of a permission prompt, with or without the read.)
    for (;;) {
      const [delivered] = await sinkRequestsHolding(sessionId);
      if (delivered) {
        expect(JSON.parse(delivered.body).data).toMatchObject({
          rule: "prompts",
          event: { session_id: sessionId },
        });
        break;
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  });
});

/**
 * The Workers adapters on their own, inside workerd: the Cloudflare Queues producer keeps every
 * sendBatch within 100 messages and 256 KB and every message within 128 KB (cutting, never
 * dropping), delays map to whole seconds within 12 h; the KV session store over the real KV
 * binding; the WebCrypto Sha256.
 */
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { webCryptoSha256 } from "../../src/adapters/hash/web-crypto.js";
import {
  CLOUDFLARE_LIMITS,
  createCloudflareProducer,
  delaySecondsFor,
  type Envelope,
  fitDeliveryJob,
  SEND_RETRY_DELAYS_MS,
} from "../../src/adapters/queue/cloudflare.js";
import { createKvSessionStore, type KvNamespaceLike } from "../../src/adapters/session/kv.js";
import type { DeliveryJob } from "../../src/core/delivery.js";
import { TRUNCATION_MARKER } from "../../src/core/sinks.js";

type Sent = { body: Envelope<DeliveryJob>; contentType?: string; delaySeconds?: number };

function recordingBinding() {
  const batches: Sent[][] = [];
  return {
    batches,
    binding: {
      send: async () => {
        throw new Error("the producer sends in batches");
      },
      sendBatch: async (messages: Iterable<Sent>) => {
        batches.push([...messages]);
      },
    },
  };
}

const bytes = (value: unknown) => new TextEncoder().encode(JSON.stringify(value)).byteLength;

function job(id: string, event: Record<string, unknown>): DeliveryJob {
  return {
    id,
    sink: "audit",
    notification: {
      id,
      createdAt: 0,
      team: "default",
      client: "claude-code",
      eventName: "PreToolUse",
      decision: "deny",
      ruleId: "r",
      event,
    },
  };
}

describe("the Cloudflare Queues producer", () => {
  it("sends at most 100 messages per sendBatch", async () => {
    const { batches, binding } = recordingBinding();
    const producer = createCloudflareProducer(binding, { fit: fitDeliveryJob });
    await producer.send(Array.from({ length: 250 }, (_, i) => ({ id: `j${i}`, body: job(`j${i}`, { i }) })));
    expect(batches.map((b) => b.length)).toEqual([100, 100, 50]);
    expect(batches.flat().map((m) => m.body.id)).toEqual(Array.from({ length: 250 }, (_, i) => `j${i}`));
    expect(batches.flat().every((m) => m.contentType === "json")).toBe(true);
  });

  it("keeps each sendBatch under 256 KB", async () => {
    const { batches, binding } = recordingBinding();
    const producer = createCloudflareProducer(binding, { fit: fitDeliveryJob });
    const event = { tool_input: { content: "y".repeat(90_000) } };
    await producer.send(Array.from({ length: 5 }, (_, i) => ({ id: `b${i}`, body: job(`b${i}`, event) })));
    expect(batches.map((b) => b.length)).toEqual([2, 2, 1]);
    for (const batch of batches)
      expect(batch.reduce((n, m) => n + bytes(m.body), 0)).toBeLessThanOrEqual(256_000);
  });

  it("counts each message's ~100 bytes of metadata toward a sendBatch's 256 KB", async () => {
    // developers.cloudflare.com/queues/platform/limits/: "up to ~100 bytes of internal metadata
    // that counts towards total message limits". Miniflare's broker allows 288,000 bytes a batch,
    // so the recording binding checks Cloudflare's own rule.
    const { batches, binding } = recordingBinding();
    const producer = createCloudflareProducer(binding, { fit: fitDeliveryJob });
    const base = bytes({ id: "m00", body: job("m00", { pad: "" }) });
    const pad = "y".repeat(2_480 - base);
    const ids = Array.from({ length: 100 }, (_, i) => `m${String(i).padStart(2, "0")}`);
    const messages = ids.map((id) => ({ id, body: job(id, { pad }) }));
    const bodies = messages.reduce((n, m) => n + bytes(m), 0);
    // The bodies fit the 250,000 bytes the producer allows a batch; with their metadata they pass 256,000.
    expect(bodies).toBe(248_000);
    expect(bodies + 100 * messages.length).toBeGreaterThan(256_000);
    await producer.send(messages);
    expect(batches.length).toBe(2);
    for (const batch of batches)
      expect(batch.reduce((n, m) => n + bytes(m.body) + 100, 0)).toBeLessThanOrEqual(256_000);
    expect(batches.flat().map((m) => m.body.id)).toEqual(ids);
  });

  it("cuts the longest event strings of an oversized job, visibly, and drops nothing", async () => {
    const { batches, binding } = recordingBinding();
    const producer = createCloudflareProducer(binding, { fit: fitDeliveryJob });
    const event = {
      hook_event_name: "PreToolUse",
      session_id: "s-1",
      tool_input: Object.fromEntries(Array.from({ length: 60 }, (_, i) => [`k${i}`, "z".repeat(4000)])),
    };
    await producer.send([{ id: "big", body: job("big", event) }]);
    const sent = batches.flat();
    expect(sent).toHaveLength(1);
    const body = sent[0]?.body as Envelope<DeliveryJob>;
    expect(bytes(body)).toBeLessThanOrEqual(CLOUDFLARE_LIMITS.messageBytes);
    expect(bytes(body)).toBeGreaterThan(CLOUDFLARE_LIMITS.messageBytes - 5_000);
    const cutEvent = body.body.notification.event as typeof event;
    expect(cutEvent.session_id).toBe("s-1");
    expect(Object.keys(cutEvent.tool_input)).toHaveLength(60);
    expect(Object.values(cutEvent.tool_input).every((v) => v.endsWith(TRUNCATION_MARKER))).toBe(true);
  });

  it("cuts a long reason and a legacy tool call's other half too, not only the event", () => {
    // A forwarded hook's 156 KB reason; a deepagents tool.use of 160 KB of edits saved for its
    // tool.result: cutting only the event left each job over the limit, refused and lost.
    const fits = (candidate: DeliveryJob) =>
      bytes({ id: "x", body: candidate }) <= CLOUDFLARE_LIMITS.messageBytes;
    const base = job("long", { hook_event_name: "PreToolUse", session_id: "s-1" });
    const reasoned: DeliveryJob = {
      ...base,
      notification: { ...base.notification, reason: "r".repeat(156_000) },
    };
    const edits = Array.from({ length: 80 }, (_, i) => ({
      old_string: `${i}`,
      new_string: "e".repeat(1900),
    }));
    const halved: DeliveryJob = {
      ...base,
      notification: {
        ...base.notification,
        correlation: {
          toolId: "call_7",
          toolUse: { toolName: "edit_file", toolArgs: { file_path: "a.py", edits } },
          toolResult: { status: "success", output: "o".repeat(2000) },
        },
      },
    };
    for (const oversized of [reasoned, halved]) {
      expect(fits(oversized)).toBe(false);
      const fitted = fitDeliveryJob(oversized, fits);
      expect(fits(fitted)).toBe(true);
      expect(fitted.id).toBe(oversized.id);
      expect(fitted.notification.event).toEqual(oversized.notification.event);
    }
    expect(fitDeliveryJob(reasoned, fits).notification.reason).toMatch(/^r+…\[truncated by hookgate\]$/);
    const correlation = fitDeliveryJob(halved, fits).notification.correlation;
    expect(correlation?.toolId).toBe("call_7");
    const fittedEdits = (correlation?.toolUse?.toolArgs as { edits?: { new_string: string }[] } | undefined)
      ?.edits;
    expect(fittedEdits).toHaveLength(80);
    expect(fittedEdits?.[0]?.new_string.endsWith(TRUNCATION_MARKER)).toBe(true);
  });

  it("keeps even a huge structure of short values, as cut JSON text", () => {
    const event = { items: Array.from({ length: 40_000 }, (_, i) => i) };
    const fits = (candidate: DeliveryJob) => bytes(candidate) <= 100_000;
    const fitted = fitDeliveryJob(job("many", event), fits);
    expect(fits(fitted)).toBe(true);
    const truncated = (fitted.notification.event as { truncated: string }).truncated;
    expect(truncated.startsWith('{"items":[0,1,2')).toBe(true);
    expect(truncated.endsWith(TRUNCATION_MARKER)).toBe(true);
  });

  it("turns a job's delay into whole seconds", async () => {
    const { batches, binding } = recordingBinding();
    await createCloudflareProducer(binding).send([
      { id: "now", body: job("now", {}) },
      { id: "later", body: job("later", {}), delayMs: 1500 },
    ]);
    expect(batches.flat().map((m) => m.delaySeconds)).toEqual([undefined, 2]);
  });

  it("rejects when Cloudflare refuses three times, so the notifier can log and count it", async () => {
    let calls = 0;
    const producer = createCloudflareProducer(
      {
        send: () => Promise.reject(new Error("unused")),
        sendBatch: () => Promise.reject(new Error(`Too Many Requests (${++calls})`)),
      },
      { retryDelaysMs: [0, 0] },
    );
    await expect(producer.send([{ id: "x", body: job("x", {}) }])).rejects.toThrow("Too Many Requests (3)");
    expect(calls).toBe(3);
  });

  it("sends a batch again after Cloudflare refused it, by default after 250 ms and 1 s", async () => {
    // The binding has no retry of its own: a batch refused once was the event's only copy, lost.
    const { batches, binding } = recordingBinding();
    let calls = 0;
    const producer = createCloudflareProducer({
      ...binding,
      sendBatch: (messages: Iterable<Sent>) =>
        ++calls < 3
          ? Promise.reject(new Error("Queue sendBatch failed: Queue is overloaded. Please back off."))
          : binding.sendBatch(messages),
    });
    await producer.send([{ id: "x", body: job("x", {}) }]);
    expect(calls).toBe(3);
    expect(batches.flat().map((m) => m.body.id)).toEqual(["x"]);
    expect(SEND_RETRY_DELAYS_MS).toEqual([250, 1000]);
  });

  it("sends the batches after one Cloudflare refuses, and names only that one's messages as not sent", async () => {
    // Each sendBatch takes all its messages or none, but a send of several stopped at the first
    // refused: the batches after it were never tried, and the error did not say which went out.
    const { batches, binding } = recordingBinding();
    let calls = 0;
    const producer = createCloudflareProducer(
      {
        ...binding,
        sendBatch: (messages: Iterable<Sent>) => {
          const sending = [...messages];
          calls++;
          return sending[0]?.body.id === "j100"
            ? Promise.reject(new Error("Too Many Requests"))
            : binding.sendBatch(sending);
        },
      },
      { retryDelaysMs: [0, 0] },
    );
    const ids = Array.from({ length: 250 }, (_, i) => `j${i}`);
    const sending = producer.send(ids.map((id) => ({ id, body: job(id, {}) })));
    await expect(sending).rejects.toThrow(
      /^Cloudflare Queues refused 100 of 250 messages: j100, .*j199 \(Too Many Requests\)$/,
    );
    await expect(sending).rejects.toMatchObject({ name: "SendFailedError", notSent: ids.slice(100, 200) });
    expect(batches.flat().map((m) => m.body.id)).toEqual([...ids.slice(0, 100), ...ids.slice(200)]);
    expect(calls).toBe(5); // the refused batch three times
  });
});

describe("delays on Cloudflare", () => {
  it.each([
    [0, 0],
    [-5, 0],
    [1, 1],
    [4_100, 5],
    [5 * 60_000, 300],
    [12 * 3600_000, 43_200],
    [30 * 3600_000, 43_200],
    [Number.NaN, 0],
  ])("%d ms → %d s", (ms, seconds) => {
    expect(delaySecondsFor(ms)).toBe(seconds);
  });
});

describe("the KV session store", () => {
  const store = () => createKvSessionStore(env.HOOKGATE_SESSIONS);

  it("remembers the last tool call of a session", async () => {
    const s = store();
    const id = crypto.randomUUID();
    expect(await s.lastTool(id)).toBeUndefined();
    await s.rememberTool([id], { toolName: "Bash", summary: "ls" }, 0);
    await s.rememberTool([id], { toolName: "Read", summary: "a.txt" }, 1);
    expect(await s.lastTool(id)).toEqual({ toolName: "Read", summary: "a.txt" });
  });

  it("keeps both halves of a deepagents tool call, in either order", async () => {
    const s = store();
    const toolId = crypto.randomUUID();
    await s.rememberToolHalf(toolId, { kind: "result", status: "ok", output: "done" }, 0);
    await s.rememberToolHalf(toolId, { kind: "use", toolName: "shell", toolArgs: { cmd: "ls" } }, 1);
    expect(await s.toolHalves(toolId)).toEqual({
      use: { kind: "use", toolName: "shell", toolArgs: { cmd: "ls" } },
      result: { kind: "result", status: "ok", output: "done" },
    });
  });

  it("gives a tool call an earlier hookgate wrote, with no time, only when no write has failed since", async () => {
    const id = crypto.randomUUID();
    await env.HOOKGATE_SESSIONS.put(`tool:${id}`, JSON.stringify({ toolName: "Bash", summary: "ls" }));
    const s = store();
    expect(await s.lastTool(id, 5)).toEqual({ toolName: "Bash", summary: "ls" });
    expect(await s.lastTool(id, 5, 1)).toBeUndefined();
  });

  it("names no older call in another isolate after a key's write was refused, until the key's next call", async () => {
    const id = crypto.randomUUID();
    await store().rememberTool([id], { toolName: "Bash", summary: "ls" }, 1_000);
    // KV takes one write a second per key: an agent's next call, a moment later, is refused (429).
    const refusing: KvNamespaceLike = {
      get: (key, type) => env.HOOKGATE_SESSIONS.get(key, type),
      put: (key, value, options) =>
        key === `tool:${id}`
          ? Promise.reject(new Error("KV PUT failed: 429 Too Many Requests"))
          : env.HOOKGATE_SESSIONS.put(key, value, options),
    };
    await expect(
      createKvSessionStore(refusing).rememberTool([id], { toolName: "Bash", summary: "rm -rf build" }, 1_500),
    ).rejects.toThrow("429 Too Many Requests");
    // Another isolate's store, which saw no write fail: the key still holds `ls`, not the call asked
    // about, and says its latest call was refused (for a prompt naming its tool, none of another's).
    expect(await store().lastTool(id, 1_600)).toBe("refused");
    // The key's next call, once the mark no longer covers it (`MARK_COVERS_MS`).
    await store().rememberTool([id], { toolName: "Read", summary: "a.txt" }, 4_000);
    expect(await store().lastTool(id, 4_100)).toEqual({ toolName: "Read", summary: "a.txt" });
  });

  it("names no call written just after a mark, as KV refuses the next mark for a second too", async () => {
    // KV's one write a second per key, by the time each call is made: the mark's key takes it too.
    // A refused call marked, the next call written, and the one after refused with its mark: the
    // key held the call before the one a prompt asks about, and the mark said older than it.
    const id = crypto.randomUUID();
    let now = 0;
    const lastPut = new Map<string, number>();
    const oneWriteASecond: KvNamespaceLike = {
      get: (key, type) => env.HOOKGATE_SESSIONS.get(key, type),
      put(key, value, options) {
        const last = lastPut.get(key);
        if (last !== undefined && now - last < 1000)
          return Promise.reject(new Error("KV PUT failed: 429 Too Many Requests"));
        lastPut.set(key, now);
        return env.HOOKGATE_SESSIONS.put(key, value, options);
      },
    };
    const call = (summary: string, at: number) => {
      now = at;
      return createKvSessionStore(oneWriteASecond).rememberTool([id], { toolName: "Bash", summary }, at);
    };
    await call("ls", 0);
    await expect(call("rm -rf build", 900)).rejects.toThrow("429");
    await call("cat a.txt", 1_050);
    await expect(call("rm -rf dist", 1_500)).rejects.toThrow("429");
    expect(lastPut.get(`toolfail:${id}`)).toBe(900);
    // Another isolate's prompt for the last call: not `cat a.txt`, which it is not.
    expect(await store().lastTool(id, 1_600)).toBe("refused");
    await call("echo done", 3_000);
    expect(await store().lastTool(id, 3_100)).toEqual({ toolName: "Bash", summary: "echo done" });
  });

  it("writes with a one-day TTL and rejects when the write fails, for the notifier to tell", async () => {
    const puts: { key: string; ttl: number | undefined }[] = [];
    const s = createKvSessionStore({
      get: async () => null,
      put: async (key, _value, options) => {
        puts.push({ key, ttl: options?.expirationTtl });
        throw new Error("KV PUT failed: 429 Too Many Requests");
      },
    });
    await expect(s.rememberTool(["s"], { toolName: "Bash", summary: "ls" }, 0)).rejects.toThrow(
      "KV PUT failed: 429 Too Many Requests",
    );
    // And the mark that tells other isolates the key's call was not written, refused here too.
    expect(puts).toEqual([
      { key: "tool:s", ttl: 86_400 },
      { key: "toolfail:s", ttl: 86_400 },
    ]);
  });

  it("rejects a key KV refuses (over 512 bytes)", async () => {
    // The notifier passes no id over 400 bytes (notify.ts MAX_ID_BYTES); a longer one is refused
    // by KV itself.
    const s = store();
    const id = "x".repeat(600);
    await expect(s.rememberTool([id], { toolName: "Bash", summary: "ls" }, 0)).rejects.toThrow(
      /605 exceeds key length limit of 512/,
    );
    await expect(s.lastTool(id)).rejects.toThrow(/605 exceeds key length limit of 512/);
  });
});

describe("WebCrypto Sha256", () => {
  // Expected digests from Node's createHash, the Sha256 of the Node entry.
  it.each([
    ["", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"],
    ["abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"],
    ["hookgate ✓", "f78074df0b67597c7b9cd7ff9b6cc83c3d13cfe75b98efa1d21b9292aecd8de6"],
  ])("hashes %j as UTF-8, in lowercase hex", async (text, hex) => {
    expect(await webCryptoSha256(text)).toBe(hex);
  });
});

/**
 * deliver(job) against loopback sinks that misbehave: 500, 429 with Retry-After, a hang, a reset
 * connection, a permanent 410, and a sink the egress guard refuses. Each outcome is ack, a retry
 * on schedule, or a dead letter with its reason; never a silent drop.
 */
import { createHmac, timingSafeEqual } from "node:crypto";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createUndiciEgress } from "../../src/adapters/egress/undici.js";
import { nodeHmacSha256 } from "../../src/adapters/hash/node-crypto.js";
import { createDeliverer, type DeliveryOutcome } from "../../src/app/deliver.js";
import { createNotification, type DeliveryJob, MAX_HOLDS, retryDelayMs } from "../../src/core/delivery.js";
import { parseHookEvent } from "../../src/core/events.js";
import { TRUNCATION_MARKER, webCryptoHmacSha256 } from "../../src/core/sinks.js";
import { type LoopbackServer, loopbackServer } from "../support/loopback.js";
import { policyFrom } from "../support/policy.js";

type Behaviour =
  | "ok"
  | "500"
  | "429"
  | "429-later"
  | "hang"
  | "reset"
  | "410"
  | "slack-ok"
  | "slack-410"
  | "slack-ratelimited"
  | "slack-ratelimited-bare"
  | "slack-channel-not-found"
  | "big-200"
  | "big-503"
  | "200-endless"
  | "slack-endless"
  | "503-endless"
  | "200-dropped"
  | "github-403-dropped"
  | "200-bad-gzip"
  | "503-bad-gzip";
let sink: LoopbackServer;

beforeAll(async () => {
  sink = await loopbackServer((req, res) => {
    const behaviour = req.url.split("/")[1] as Behaviour;
    switch (behaviour) {
      case "ok":
        return res.writeHead(204).end();
      case "500":
        return res.writeHead(500).end("boom");
      case "429":
        return res.writeHead(429, { "retry-after": "7" }).end();
      case "429-later":
        return res.writeHead(429, { "retry-after": "2400" }).end();
      case "hang":
        return;
      case "reset":
        return req.headers && res.socket?.destroy();
      case "410":
        return res.writeHead(410).end("gone");
      case "slack-ok":
        return res.writeHead(200).end("ok");
      case "slack-410":
        return res.writeHead(410).end("channel_is_archived");
      // The Web API (chat.postMessage) answers errors, a rate limit among them, with HTTP 200.
      case "slack-ratelimited":
        return res
          .writeHead(200, { "content-type": "application/json", "retry-after": "20" })
          .end('{"ok":false,"error":"ratelimited"}');
      case "slack-ratelimited-bare":
        return res
          .writeHead(200, { "content-type": "application/json" })
          .end('{"ok":false,"error":"ratelimited"}');
      case "slack-channel-not-found":
        return res
          .writeHead(200, { "content-type": "application/json" })
          .end('{"ok":false,"error":"channel_not_found"}');
      // An answer past the egress guard's 1 MiB cap on what it reads.
      case "big-200":
        return res.writeHead(200).end("x".repeat(2 * 1024 * 1024));
      case "big-503":
        return res.writeHead(503).end("y".repeat(2 * 1024 * 1024));
      // A status, then a body that never ends.
      case "200-endless":
        res.writeHead(200, { "content-type": "application/json" });
        return res.write('{"received":');
      case "slack-endless":
        res.writeHead(200);
        return res.write("o");
      // A status, then the connection dropped before the body it announced.
      case "200-dropped":
        res.writeHead(200, { "content-length": "100" });
        res.write("x");
        return setTimeout(() => res.socket?.destroy(), 20);
      case "503-endless":
        res.writeHead(503, { "retry-after": "9" });
        return res.write("busy");
      // GitHub's secondary rate limit says so only in its message, here dropped before it did.
      case "github-403-dropped":
        res.writeHead(403, { "content-type": "application/json", "content-length": "100" });
        res.write('{"message":"You have exc');
        return setTimeout(() => res.socket?.destroy(), 20);
      // A body its content coding does not decode (a proxy that names gzip and sends it plain).
      case "200-bad-gzip":
      case "503-bad-gzip":
        return res
          .writeHead(behaviour === "200-bad-gzip" ? 200 : 503, { "content-encoding": "gzip" })
          .end("not gzip");
    }
  });
});
afterAll(() => sink.close());

const event = parseHookEvent({
  session_id: "s",
  transcript_path: "/t",
  cwd: "/p",
  hook_event_name: "SessionEnd",
  reason: "other",
});
if (!event.ok) throw new Error(event.error.message);
const job = (sinkName: string): DeliveryJob => ({
  id: `evt_1.${sinkName}`,
  sink: sinkName,
  notification: createNotification("evt_1", 0, event.value, { team: "t", decision: "none", ruleId: "r" }),
});

async function deliverTo(
  path: Behaviour,
  attempts: number,
  extra: Record<string, unknown> = {},
): Promise<DeliveryOutcome> {
  const policy = await policyFrom({
    version: 1,
    rules: [],
    egress: { allowCidrs: ["127.0.0.1/32"], ...(extra.egress as object) },
    sinks: {
      hook: { type: "webhook", url: `${sink.url}/${path}`, retryScheduleSeconds: [5, 60] },
      chat: { type: "slack", url: `${sink.url}/${path}` },
      ci: {
        type: "github-dispatch",
        repo: "org/app",
        eventType: "hook",
        token: "env:GH_TOKEN",
        url: `${sink.url}/${path}`,
        retryScheduleSeconds: [5, 60],
      },
    },
  });
  const egress = createUndiciEgress({ policy: () => policy.egress });
  const deliverer = createDeliverer({
    policy: () => policy,
    egress: egress.send,
    env: (name) => (name === "GH_TOKEN" ? "ghp_token_value" : undefined),
    clock: { now: Date.now, monotonic: () => performance.now() },
    random: () => 0.5,
    sleep: async () => undefined,
    // Short only for the sink that hangs: 300 ms for every sink failed acks and 2 MiB reads
    // on a loaded host (a retry where an ack was expected).
    timeoutMs: path === "hang" || path.endsWith("-endless") ? 300 : 10_000,
  });
  try {
    return await deliverer.deliver(job((extra.sink as string) ?? "hook"), attempts);
  } finally {
    await egress.close();
  }
}

describe("deliver", () => {
  it("acks a 2xx", async () => {
    expect(await deliverTo("ok", 1)).toEqual({ kind: "ack" });
    expect(await deliverTo("slack-ok", 1, { sink: "chat" })).toEqual({ kind: "ack" });
  });

  it.each([
    ["500", 5000],
    ["hang", 5000],
    ["reset", 5000],
  ] as const)("retries %s on the schedule (5 s, jitter at its midpoint)", async (behaviour, delayMs) => {
    const outcome = await deliverTo(behaviour, 1);
    expect(outcome).toMatchObject({ kind: "retry", delayMs });
  });

  it("reads a sink's answer past the size cap by its status: a 200 delivered, a 503 retried", async () => {
    expect(await deliverTo("big-200", 1)).toEqual({ kind: "ack" });
    expect(await deliverTo("big-503", 1)).toMatchObject({
      kind: "retry",
      delayMs: 5000,
      reason: /^HTTP 503/,
    });
  });

  it("reads a sink's answer whose body never ends by its status: a 200 delivered, a 503 retried", async () => {
    const before = sink.received.length;
    // The receiver has the event: sent again, it would get it once per attempt.
    expect(await deliverTo("200-endless", 1)).toEqual({ kind: "ack" });
    expect(await deliverTo("200-dropped", 1)).toEqual({ kind: "ack" });
    expect(sink.received.length).toBe(before + 2);
    expect(await deliverTo("503-endless", 1)).toMatchObject({
      kind: "retry",
      delayMs: 9000,
      reason: "HTTP 503: busy; its body did not end within 300 ms",
    });
  });

  it("reads a sink's answer whose body does not decode by its status, saying which coding failed", async () => {
    const before = sink.received.length;
    expect(await deliverTo("200-bad-gzip", 1)).toEqual({ kind: "ack" });
    expect(sink.received.length).toBe(before + 1);
    expect(await deliverTo("503-bad-gzip", 1)).toMatchObject({
      kind: "retry",
      delayMs: 5000,
      reason:
        "HTTP 503; its body does not decode as its Content-Encoding gzip says (Z_DATA_ERROR: incorrect header check); check the server, or a proxy in front of it, that compresses its answers",
    });
    expect(sink.received.length).toBe(before + 2);
  });

  it("retries a GitHub 403 whose body broke off before it said whether it is a secondary rate limit, rather than dead-letter it", async () => {
    const outcome = await deliverTo("github-403-dropped", 1, { sink: "ci" });
    expect(outcome).toMatchObject({ kind: "retry", delayMs: 5000 });
    expect(outcome.kind === "retry" && outcome.reason).toMatch(
      /^HTTP 403, but the answer broke off before GitHub said whether it is a secondary rate limit: its body broke off: /,
    );
  });

  it("retries a Slack 200 whose body broke off before it said ok, saying so, rather than dead-letter it", async () => {
    expect(await deliverTo("slack-endless", 1, { sink: "chat" })).toEqual({
      kind: "retry",
      delayMs: 5000,
      reason: 'HTTP 200, but the answer broke off before Slack said "ok": its body did not end within 300 ms',
    });
  });

  it("honours Retry-After, never coming back before the schedule's own delay", async () => {
    expect(await deliverTo("429", 1)).toMatchObject({ kind: "retry", delayMs: 7000 });
    expect(await deliverTo("429", 2)).toMatchObject({ kind: "retry", delayMs: 60_000 });
    // 40 minutes, far past the schedule's 5 s: asking sooner would spend an attempt for nothing.
    expect(await deliverTo("429-later", 1)).toMatchObject({ kind: "retry", delayMs: 2_400_000 });
  });

  it("dead-letters after the last attempt, with the last error", async () => {
    const outcome = await deliverTo("500", 3);
    expect(outcome).toMatchObject({
      kind: "dead",
      reason: expect.stringMatching(/^gave up after 3 attempts: .*500/),
    });
  });

  it("scrubs the token of the policy a call was made under from its reason, though a reload rotated it meanwhile", async () => {
    // A GitHub token rotated (a SIGHUP with the new one) while a call made with the old one was at
    // the sink: scrubbed with the new policy's secrets alone, the old token a sink's error echoes
    // stayed in the retry's reason, and so in the dead letter `dlq list` shows.
    const document = (tokenVariable: string) => ({
      version: 1,
      rules: [],
      egress: { allowCidrs: ["127.0.0.1/32"] },
      sinks: {
        ci: {
          type: "github-dispatch",
          repo: "org/app",
          eventType: "hook",
          token: `env:${tokenVariable}`,
          url: `${echo.url}/`,
        },
      },
    });
    // Of no shape masking knows, so that only the policy's secrets can scrub it.
    const env = { OLD_TOKEN: "zq7Kp2Vx9mWr4Tn8Lb3Hc6Yd", NEW_TOKEN: "hR5sJ1gF8uE2oA6iN4wQ9kZc" };
    let reload = () => {};
    const echo = await loopbackServer((req, res) => {
      reload(); // the reload lands while the call is at the sink
      res.writeHead(500).end(`credentials ${req.headers.authorization?.split(" ").pop()} are not valid`);
    });
    let policy = await policyFrom(document("OLD_TOKEN"), env);
    const reloaded = await policyFrom(document("NEW_TOKEN"), env);
    reload = () => {
      policy = reloaded;
    };
    const egress = createUndiciEgress({ policy: () => policy.egress });
    try {
      const outcome = await createDeliverer({
        policy: () => policy,
        egress: egress.send,
        env: (name) => env[name as keyof typeof env],
        clock: { now: Date.now, monotonic: () => performance.now() },
        random: () => 0.5,
        sleep: async () => undefined,
      }).deliver(job("ci"), 1);
      expect(echo.received).toHaveLength(1);
      expect(outcome).toMatchObject({ kind: "retry", reason: /^HTTP 500/ });
      expect(outcome.kind === "ack" ? "" : outcome.reason).not.toContain(env.OLD_TOKEN);
    } finally {
      await egress.close();
      await echo.close();
    }
  });

  it("dead-letters a permanent failure at once", async () => {
    // The sink answered: an attempt.
    expect(await deliverTo("410", 1)).toEqual({ kind: "dead", reason: expect.stringMatching(/410/) });
    expect(await deliverTo("slack-410", 1, { sink: "chat" })).toMatchObject({
      kind: "dead",
      reason: expect.stringMatching(/channel_is_archived/),
    });
  });

  it("dead-letters a sink the egress guard refuses, naming the rule", async () => {
    const outcome = await deliverTo("ok", 1, { egress: { allowCidrs: [] } });
    expect(outcome).toMatchObject({
      kind: "dead",
      reason: expect.stringMatching(/^EGRESS_BLOCKED_ADDRESS: .*127\.0\.0\.0\/8/),
      // Refused before it connected: nothing was sent, so its dead letter counts no attempt.
      unsent: true,
    });
  });

  it("paces a chat webhook's sends a second apart on the monotonic clock, whatever the wall clock does", async () => {
    // A wall clock stepped back an hour (NTP after a VM resumes) held the next send an hour,
    // past the job's 60 s lease, so the job was leased and sent again.
    const policy = await policyFrom({
      version: 1,
      rules: [],
      sinks: { chat: { type: "slack", url: "https://hooks.slack.com/services/T0/B0/secretsecretsecret" } },
    });
    let wall = 1_000_000_000;
    let monotonic = 5_000;
    const waits: number[] = [];
    const deliverer = createDeliverer({
      policy: () => policy,
      egress: async () => ({ ok: true, value: { status: 200, headers: {}, body: "ok" } }),
      env: () => undefined,
      clock: { now: () => wall, monotonic: () => monotonic },
      random: () => 0.5,
      sleep: async (ms) => {
        waits.push(ms);
        monotonic += ms;
      },
    });
    expect(await deliverer.deliver(job("chat"), 1)).toEqual({ kind: "ack" });
    wall -= 3_600_000;
    monotonic += 200;
    expect(await deliverer.deliver(job("chat"), 1)).toEqual({ kind: "ack" });
    expect(waits).toEqual([800]);
  });

  it("dead-letters a sink whose variable is unset, naming it unless the name reads like a pasted secret", async () => {
    const pasted = "hooksslackcomservicesT000B000XXXX";
    const policy = await policyFrom({
      version: 1,
      rules: [],
      sinks: {
        named: { type: "slack", url: "env:CHAT_URL" },
        pasted: { type: "slack", url: `env:${pasted}` },
      },
    });
    const deliverer = createDeliverer({
      policy: () => policy,
      egress: async () => ({ ok: true, value: { status: 200, headers: {}, body: "ok" } }),
      env: () => undefined,
      clock: { now: () => 1_000_000_000, monotonic: () => 5_000 },
      random: () => 0.5,
    });
    expect(await deliverer.deliver(job("named"), 1)).toMatchObject({
      kind: "dead",
      reason: expect.stringContaining("url reads CHAT_URL, which is not set"),
    });
    const dead = await deliverer.deliver(job("pasted"), 1);
    expect(dead).toMatchObject({
      kind: "dead",
      reason: expect.stringContaining(
        "url reads a variable whose name reads like a secret (not repeated; see hookgate check), which is not set",
      ),
    });
    expect(JSON.stringify(dead)).not.toContain(pasted);
  });

  it("asks mayStart after the pacing wait, with its timeout, and sends nothing when it answers no", async () => {
    // A Lambda invocation near its timeout must not start a sink call it cannot wait
    // for; the second chat job to a webhook waits its send slot first, so the time is read then.
    const policy = await policyFrom({
      version: 1,
      rules: [],
      sinks: { chat: { type: "slack", url: "https://hooks.slack.com/services/T0/B0/secretsecretsecret" } },
    });
    let monotonic = 5_000;
    const sent: string[] = [];
    const deliverer = createDeliverer({
      policy: () => policy,
      egress: async (request) => {
        sent.push(request.url);
        return { ok: true, value: { status: 200, headers: {}, body: "ok" } };
      },
      env: () => undefined,
      clock: { now: () => 1_000_000_000, monotonic: () => monotonic },
      random: () => 0.5,
      sleep: async (ms) => {
        monotonic += ms;
      },
      timeoutMs: 15_000,
    });
    const ends = 5_000 + 15_500;
    const asked: number[] = [];
    const mayStart = (timeoutMs: number) => {
      asked.push(timeoutMs);
      return ends - monotonic >= timeoutMs;
    };
    expect(await deliverer.deliver(job("chat"), 1, { mayStart })).toEqual({ kind: "ack" });
    expect(await deliverer.deliver(job("chat"), 1, { mayStart })).toEqual({
      kind: "retry",
      delayMs: 0,
      reason: expect.stringMatching(/^not sent: too little time/),
      unsent: true,
    });
    expect(asked).toEqual([15_000, 15_000]);
    expect(sent).toHaveLength(1);
  });

  it("holds every job to a webhook that answered 429 until its Retry-After passes, sending none of them", async () => {
    // A hunt of the sinks: after a 429 with Retry-After: 60 the next jobs went out at +1 s, +2 s,
    // +3 s into the same rate limit, each getting 429 again and spending a retry.
    const policy = await policyFrom({
      version: 1,
      rules: [],
      sinks: {
        chat: { type: "slack", url: "https://hooks.slack.com/services/T0/B0/secretsecretsecret" },
        other: { type: "slack", url: "https://hooks.slack.com/services/T0/B1/othersecretother" },
        hook: { type: "webhook", url: "https://sink.hookgate.test/in" },
      },
    });
    let monotonic = 5_000;
    let limited = true;
    const sent: string[] = [];
    const deliverer = createDeliverer({
      policy: () => policy,
      egress: async (request) => {
        sent.push(request.url);
        if (limited) {
          limited = false;
          return { ok: true, value: { status: 429, headers: { "retry-after": "60" }, body: "rate_limited" } };
        }
        return { ok: true, value: { status: 200, headers: {}, body: "ok" } };
      },
      env: () => undefined,
      clock: { now: () => 1_000_000_000, monotonic: () => monotonic },
      random: () => 0.5,
      sleep: async (ms) => {
        monotonic += ms;
      },
    });
    expect(await deliverer.deliver(job("chat"), 1)).toMatchObject({ kind: "retry", delayMs: 60_000 });
    const outcomes: DeliveryOutcome[] = [];
    for (let i = 0; i < 3; i++) {
      monotonic += 1_000;
      outcomes.push(await deliverer.deliver(job("chat"), 1));
    }
    expect(outcomes.map((o) => o.kind === "retry" && o.delayMs)).toEqual([59_100, 58_100, 57_100]);
    expect(sent).toHaveLength(1);
    // Another webhook is not held.
    expect(await deliverer.deliver(job("other"), 1)).toEqual({ kind: "ack" });
    expect(sent).toHaveLength(2);
    // Once the Retry-After has passed, the webhook is sent to again.
    monotonic += 57_000;
    expect(await deliverer.deliver(job("chat"), 1)).toEqual({ kind: "ack" });
    expect(sent).toHaveLength(3);
    // A generic webhook is held the same way.
    limited = true;
    expect(await deliverer.deliver(job("hook"), 1)).toMatchObject({ kind: "retry", delayMs: 60_000 });
    expect(await deliverer.deliver(job("hook"), 1)).toMatchObject({ kind: "retry", delayMs: 60_100 });
    expect(sent).toHaveLength(4);
  });

  it("retries a 429 that names no wait on the schedule, and holds no other job to its URL", async () => {
    const policy = await policyFrom({
      version: 1,
      rules: [],
      sinks: { hook: { type: "webhook", url: "https://sink.hookgate.test/in" } },
    });
    let limited = true;
    const sent: string[] = [];
    const deliverer = createDeliverer({
      policy: () => policy,
      egress: async (request) => {
        sent.push(request.url);
        if (limited) {
          limited = false;
          return { ok: true, value: { status: 429, headers: {}, body: "slow down" } };
        }
        return { ok: true, value: { status: 200, headers: {}, body: "ok" } };
      },
      env: () => undefined,
      clock: { now: () => 1_000_000_000, monotonic: () => 5_000 },
      random: () => 0.5,
      sleep: async () => {},
    });
    expect(await deliverer.deliver(job("hook"), 1)).toMatchObject({ kind: "retry", delayMs: 5_000 });
    expect(await deliverer.deliver(job("hook"), 1)).toEqual({ kind: "ack" });
    expect(sent).toHaveLength(2);
  });

  it.each([
    ["slack-ratelimited", 20_000],
    ["slack-ratelimited-bare", 30_000],
  ] as const)(
    "holds a Slack URL that answered HTTP 200 `ratelimited` (%s) as a 429 holds it, for its Retry-After or 30 s",
    async (path, waitMs) => {
      // A hunt of the sinks: the Web API's rate limit comes as HTTP 200 with `ok: false`, which was
      // retried but held nothing, so the jobs behind it went out into the same limit.
      const policy = await policyFrom({
        version: 1,
        rules: [],
        egress: { allowCidrs: ["127.0.0.1/32"] },
        sinks: { chat: { type: "slack", url: `${sink.url}/${path}` } },
      });
      const egress = createUndiciEgress({ policy: () => policy.egress });
      let monotonic = 5_000;
      const deliverer = createDeliverer({
        policy: () => policy,
        egress: egress.send,
        env: () => undefined,
        clock: { now: Date.now, monotonic: () => monotonic },
        random: () => 0.5,
        sleep: async (ms) => {
          monotonic += ms;
        },
      });
      const before = sink.received.length;
      try {
        expect(await deliverer.deliver(job("chat"), 1)).toMatchObject({
          kind: "retry",
          delayMs: waitMs,
          reason: "Slack rate limited (HTTP 200)",
        });
        monotonic += 1_000;
        expect(await deliverer.deliver(job("chat"), 1)).toMatchObject({
          kind: "retry",
          delayMs: waitMs - 1_000 + 100,
          reason: /^not sent: /,
        });
        expect(sink.received.length - before).toBe(1);
        monotonic += waitMs;
        await deliverer.deliver(job("chat"), 1);
        expect(sink.received.length - before).toBe(2);
      } finally {
        await egress.close();
      }
    },
  );

  it("dead-letters Slack's other HTTP 200 `ok: false` answers at once and holds nothing", async () => {
    const policy = await policyFrom({
      version: 1,
      rules: [],
      egress: { allowCidrs: ["127.0.0.1/32"] },
      sinks: { chat: { type: "slack", url: `${sink.url}/slack-channel-not-found` } },
    });
    const egress = createUndiciEgress({ policy: () => policy.egress });
    const deliverer = createDeliverer({
      policy: () => policy,
      egress: egress.send,
      env: () => undefined,
      clock: { now: Date.now, monotonic: () => performance.now() },
      random: () => 0.5,
      sleep: async () => undefined,
    });
    const before = sink.received.length;
    try {
      for (let i = 0; i < 2; i++) {
        expect(await deliverer.deliver(job("chat"), 1)).toMatchObject({
          kind: "dead",
          reason: expect.stringMatching(/^HTTP 200 but Slack did not answer "ok": channel_not_found/),
        });
      }
      expect(sink.received.length - before).toBe(2);
    } finally {
      await egress.close();
    }
  });

  it("holds the jobs that were waiting for their send slot when the 429 came, and retries a held job when the hold ends, whatever its attempts", async () => {
    // Before, the hold was checked before a Slack job's slot wait only, so the jobs
    // already in flight went out a second apart into the limit; and a held job came back through
    // the retry schedule (5 min for 1 ms early; dead-lettered unsent with no retries left).
    const policy = await policyFrom({
      version: 1,
      rules: [],
      sinks: {
        chat: { type: "slack", url: "https://hooks.slack.com/services/T0/B0/secretsecretsecret" },
        hook: { type: "webhook", url: "https://sink.hookgate.test/in", retryScheduleSeconds: [] },
      },
    });
    let monotonic = 5_000;
    let limited = true;
    const sent: number[] = [];
    const deliverer = createDeliverer({
      policy: () => policy,
      egress: async () => {
        sent.push(monotonic);
        // The answer takes a moment: the other jobs are waiting for their slots meanwhile.
        await new Promise((resolve) => setTimeout(resolve, 5));
        if (limited) {
          limited = false;
          return { ok: true, value: { status: 429, headers: { "retry-after": "60" }, body: "rate_limited" } };
        }
        return { ok: true, value: { status: 200, headers: {}, body: "ok" } };
      },
      env: () => undefined,
      clock: { now: () => 1_000_000_000, monotonic: () => monotonic },
      random: () => 0.5,
      sleep: async (ms) => {
        const until = monotonic + ms;
        await new Promise((resolve) => setTimeout(resolve, 20));
        monotonic = Math.max(monotonic, until);
      },
    });
    const outcomes = await Promise.all([1, 2, 3, 4].map(() => deliverer.deliver(job("chat"), 1)));
    expect(sent).toHaveLength(1);
    expect(outcomes.map((o) => o.kind)).toEqual(["retry", "retry", "retry", "retry"]);
    // A webhook with no retries left: held, it is retried, not dead-lettered.
    limited = true;
    expect(await deliverer.deliver(job("hook"), 1)).toMatchObject({ kind: "dead" });
    monotonic += 59_999;
    expect(await deliverer.deliver(job("hook"), 7)).toEqual({
      kind: "retry",
      delayMs: 101,
      reason: "not sent: the sink asked to wait 1 s more after a rate limit",
      unsent: true,
    });
    // Held MAX_HOLDS times already: dead-lettered with why, not held for ever.
    expect(await deliverer.deliver(job("hook"), 1, { holds: MAX_HOLDS - 1 })).toMatchObject({ unsent: true });
    expect(await deliverer.deliver(job("hook"), 1, { holds: MAX_HOLDS })).toEqual({
      kind: "dead",
      reason: `gave up after ${MAX_HOLDS} holds without a send: not sent: the sink asked to wait 1 s more after a rate limit`,
      unsent: true,
    });
  });

  it("dead-letters unsent a job whose last attempt stopped the delivery thread, and only past the sink's last attempt", async () => {
    const policy = await policyFrom({
      version: 1,
      rules: [],
      sinks: { hook: { type: "webhook", url: "https://sink.hookgate.test/in", retryScheduleSeconds: [5] } },
    });
    let sends = 0;
    const deliverer = createDeliverer({
      policy: () => policy,
      egress: async () => {
        sends++;
        return { ok: true, value: { status: 503, headers: {}, body: "" } };
      },
      env: () => undefined,
      clock: { now: () => 1_000_000_000, monotonic: () => 0 },
      random: () => 0.5,
    });
    const stopped = "the delivery thread stopped while delivering it";
    // The second attempt is the sink's last: sent, as any other.
    expect(await deliverer.deliver(job("hook"), 2, { interrupted: stopped })).toEqual({
      kind: "dead",
      reason: "gave up after 2 attempts: HTTP 503",
    });
    expect(sends).toBe(1);
    // Received a third time, the second having ended the thread: not sent again.
    expect(await deliverer.deliver(job("hook"), 3, { interrupted: stopped })).toEqual({
      kind: "dead",
      reason: `gave up after 2 attempts: ${stopped}`,
      unsent: true,
    });
    expect(sends).toBe(1);
    // A queue that tells no such stop (SQS counts receives a throttled Lambda never handled) sends.
    expect(await deliverer.deliver(job("hook"), 3)).toEqual({
      kind: "dead",
      reason: "gave up after 3 attempts: HTTP 503",
    });
    expect(sends).toBe(2);
  });

  it("retries a name that resolves to nothing (no address record over DoH on Workers), as Node retries ENOTFOUND", async () => {
    const policy = await policyFrom({
      version: 1,
      rules: [],
      sinks: { hook: { type: "webhook", url: "https://nx-sink.hookgate.test/in" } },
    });
    const outcomes: DeliveryOutcome[] = [];
    for (const code of ["EGRESS_NO_ADDRESS", "EGRESS_DNS_FAILED"] as const) {
      const deliverer = createDeliverer({
        policy: () => policy,
        egress: async () => ({
          ok: false,
          error: { code, stage: "dns", reason: "nx-sink.hookgate.test: no address" },
        }),
        env: () => undefined,
        clock: { now: Date.now, monotonic: () => performance.now() },
        random: () => 0.5,
        sleep: async () => undefined,
      });
      outcomes.push(await deliverer.deliver(job("hook"), 1));
    }
    expect(outcomes).toEqual([
      expect.objectContaining({ kind: "retry", delayMs: 5000 }),
      expect.objectContaining({ kind: "retry", delayMs: 5000 }),
    ]);
  });

  it("dead-letters at once a job whose webhook secret cannot sign, as every attempt would fail", async () => {
    const policy = await policyFrom({
      version: 1,
      rules: [],
      egress: { allowCidrs: ["127.0.0.1/32"] },
      sinks: { hook: { type: "webhook", url: `${sink.url}/ok`, secret: "env:HOOK_SECRET" } },
    });
    const deliverer = createDeliverer({
      policy: () => policy,
      egress: async () => {
        throw new Error("nothing is sent");
      },
      env: (name) => (name === "HOOK_SECRET" ? "my-webhook-secret" : undefined),
      clock: { now: Date.now, monotonic: () => performance.now() },
      random: () => 0.5,
    });
    expect(await deliverer.deliver(job("hook"), 1)).toEqual({
      kind: "dead",
      reason: 'sink "hook": webhook secret must be "whsec_" followed by standard base64',
      unsent: true,
    });
  });

  it("dead-letters at once a token no header can carry, sending nothing, instead of retrying it as a failed connection", async () => {
    // Before, undici refused the header (UND_ERR_INVALID_ARG) before connecting,
    // which read as EGRESS_CONNECT_FAILED and was retried on the whole schedule (about 28 hours).
    const policy = await policyFrom({
      version: 1,
      rules: [],
      egress: { allowCidrs: ["127.0.0.1/32"] },
      sinks: {
        ci: {
          type: "github-dispatch",
          repo: "org/app",
          eventType: "hook",
          token: "env:GH_TOKEN",
          url: sink.url,
        },
      },
    });
    const egress = createUndiciEgress({ policy: () => policy.egress });
    const sent: string[] = [];
    const deliverer = createDeliverer({
      policy: () => policy,
      egress: (request) => {
        sent.push(request.url);
        return egress.send(request);
      },
      env: (name) => (name === "GH_TOKEN" ? "ghp_abc\u2019def" : undefined),
      clock: { now: Date.now, monotonic: () => performance.now() },
      random: () => 0.5,
    });
    try {
      const outcome = await deliverer.deliver(job("ci"), 1);
      expect(outcome).toMatchObject({ kind: "dead", unsent: true });
      expect(outcome.kind === "dead" && outcome.reason).toMatch(
        /^sink "ci": the authorization header would carry a character no HTTP header can/,
      );
      expect(outcome.kind === "dead" && outcome.reason).not.toContain("ghp_abc");
      expect(sent).toEqual([]);
    } finally {
      await egress.close();
    }
  });

  it("reads a github-dispatch sink's url from env: as it reads its token (every delivery dead-lettered as a bad scheme)", async () => {
    const policy = await policyFrom({
      version: 1,
      rules: [],
      egress: { allowCidrs: ["127.0.0.1/32"] },
      sinks: {
        ci: {
          type: "github-dispatch",
          repo: "org/app",
          eventType: "hook",
          token: "env:GH_TOKEN",
          url: "env:GHE_URL",
        },
      },
    });
    const egress = createUndiciEgress({ policy: () => policy.egress });
    const sent: string[] = [];
    const vars: Record<string, string> = { GH_TOKEN: "ghp_token_value", GHE_URL: `${sink.url}/ok` };
    const deliverer = createDeliverer({
      policy: () => policy,
      egress: (request) => {
        sent.push(request.url);
        return egress.send(request);
      },
      env: (name) => vars[name],
      clock: { now: Date.now, monotonic: () => performance.now() },
      random: () => 0.5,
    });
    try {
      expect(await deliverer.deliver(job("ci"), 1)).toEqual(expect.objectContaining({ kind: "ack" }));
      expect(sent).toEqual([`${sink.url}/ok/repos/org/app/dispatches`]);
    } finally {
      await egress.close();
    }
  });

  it("dead-letters a job whose sink left the policy", async () => {
    expect(await deliverTo("ok", 1, { sink: "gone" })).toEqual({
      kind: "dead",
      reason: 'sink "gone" is no longer in the policy',
      unsent: true,
    });
  });

  it("dead-letters at once a job whose sink is named like an object's built-in member, absent from the policy", async () => {
    // The lookup read inherited members: "constructor" found Object, whose missing type threw,
    // and the job was retried for a day as an internal error before it was dead-lettered.
    for (const name of ["constructor", "toString", "__proto__", "hasOwnProperty"]) {
      expect(await deliverTo("ok", 1, { sink: name })).toEqual({
        kind: "dead",
        reason: `sink "${name}" is no longer in the policy`,
        unsent: true,
      });
    }
  });
});

describe("a delivery that throws", () => {
  /** A deliverer whose sink call throws (a defect: the egress port never should). */
  async function throwingDeliverer(retryScheduleSeconds: readonly number[]) {
    const policy = await policyFrom({
      version: 1,
      rules: [],
      sinks: { hook: { type: "webhook", url: "https://hooks.example.com/in", retryScheduleSeconds } },
    });
    return createDeliverer({
      policy: () => policy,
      egress: async () => {
        throw new Error("a defect");
      },
      env: () => undefined,
      clock: { now: Date.now, monotonic: () => performance.now() },
      random: () => 0.5,
    });
  }

  it("is retried on its sink's schedule and dead-lettered with its error at the sink's last attempt", async () => {
    // It followed the default schedule (8 attempts) whatever its sink's. On Lambda and Workers,
    // whose every receive says `interrupted`, the receive after the sink's last attempt then
    // dead-lettered it unsent as one whose delivery ended the function.
    const deliverer = await throwingDeliverer([60]);
    const interrupted = "its last attempt recorded no outcome";
    expect(await deliverer.deliver(job("hook"), 1, { interrupted: interrupted })).toEqual({
      kind: "retry",
      delayMs: 60_000,
      reason: "internal error: a defect",
    });
    expect(await deliverer.deliver(job("hook"), 2, { interrupted: interrupted })).toEqual({
      kind: "dead",
      reason: "gave up after 2 attempts: internal error: a defect",
    });
    const longer = await throwingDeliverer(Array.from({ length: 10 }, () => 5));
    expect(await longer.deliver(job("hook"), 10)).toEqual(expect.objectContaining({ kind: "retry" }));
  });
});

describe("retryDelayMs", () => {
  it("spreads each delay 20% either side of the schedule's, so failed jobs do not retry together", () => {
    const schedule = [5, 300];
    expect(retryDelayMs(1, schedule, 0)).toBe(4_000);
    expect(retryDelayMs(1, schedule, 0.5)).toBe(5_000);
    expect(retryDelayMs(1, schedule, 0.999_999)).toBe(6_000);
    expect(retryDelayMs(2, schedule, 0)).toBe(240_000);
    expect(retryDelayMs(3, schedule, 0.5)).toBeUndefined();
  });
});

/**
 * A loopback server that reads a dispatch as GitHub's `POST /repos/{owner}/{repo}/dispatches`
 * does: a User-Agent is required (403 without one), `event_type` is 1 to 100 characters and
 * `client_payload` an object of at most 10 top-level keys whose JSON is under 64 KB (422
 * otherwise); 204 with no body when it is taken.
 */
describe("deliver to a GitHub repository_dispatch endpoint", () => {
  let github: LoopbackServer;
  beforeAll(async () => {
    github = await loopbackServer((req, res) => {
      const refuse = (status: number, message: string) =>
        res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify({ message }));
      if (req.method !== "POST" || !/^\/repos\/[\w.-]+\/[\w.-]+\/dispatches$/.test(req.url))
        return refuse(404, "Not Found");
      if (!req.headers["user-agent"]) return refuse(403, "Request forbidden by administrative rules.");
      let body: { event_type?: unknown; client_payload?: unknown };
      try {
        body = JSON.parse(req.body);
      } catch {
        return refuse(400, "Problems parsing JSON");
      }
      const { event_type: eventType, client_payload: payload } = body;
      if (typeof eventType !== "string" || eventType.length < 1 || [...eventType].length > 100)
        return refuse(422, "Invalid request.\n\nevent_type is too long (maximum is 100 characters).");
      if (payload === null || typeof payload !== "object" || Array.isArray(payload))
        return refuse(422, "Invalid request.\n\nclient_payload is not an object.");
      if (Object.keys(payload).length > 10)
        return refuse(
          422,
          "Invalid request.\n\nNo more than 10 properties are allowed; client_payload has more.",
        );
      if (Buffer.byteLength(JSON.stringify(payload)) >= 64 * 1024)
        return refuse(422, "Invalid request.\n\nclient_payload is too large.");
      return res.writeHead(204).end();
    });
  });
  afterAll(() => github.close());

  const sessionId = "1911b193-68cb-487c-97dc-b165bef0f45d";
  async function dispatch(toolInput: Record<string, unknown>): Promise<{
    outcome: DeliveryOutcome;
    payload: Record<string, unknown> | undefined;
  }> {
    const parsed = parseHookEvent({
      session_id: sessionId,
      transcript_path: "/t",
      cwd: "/home/dev/proj",
      hook_event_name: "PreToolUse",
      tool_name: "mcp__db__insert_rows",
      tool_input: toolInput,
    });
    if (!parsed.ok) throw new Error(parsed.error.message);
    const eventId = "evt_021b1224-2a12-415e-8bab-df46f3926345";
    const policy = await policyFrom({
      version: 1,
      rules: [],
      egress: { allowCidrs: ["127.0.0.1/32"] },
      sinks: {
        ci: {
          type: "github-dispatch",
          repo: "org/app",
          eventType: "agent-tool",
          token: "t0ken-value",
          url: github.url,
        },
      },
    });
    const egress = createUndiciEgress({ policy: () => policy.egress });
    const deliverer = createDeliverer({
      policy: () => policy,
      egress: egress.send,
      env: () => undefined,
      clock: { now: Date.now, monotonic: () => performance.now() },
      random: () => 0.5,
    });
    const before = github.received.length;
    try {
      const outcome = await deliverer.deliver(
        {
          id: `${eventId}.ci`,
          sink: "ci",
          notification: createNotification(eventId, 0, parsed.value, {
            team: "platform",
            decision: "deny",
            reason: "Writing to the production database is never allowed",
            ruleId: "no-prod-writes",
          }),
        },
        1,
      );
      const sent = github.received.slice(before).at(-1);
      return { outcome, payload: sent && JSON.parse(sent.body).client_payload };
    } finally {
      await egress.close();
    }
  }

  it("delivers a tool input of thousands of numbers within GitHub's 64 KB, as cut JSON text, rather than a 422 and a dead letter", async () => {
    // Cutting strings alone could not bring it under the limit: the body went out at 100 KB and
    // GitHub refused it, so the whole notification was dead-lettered.
    const rows = Array.from({ length: 20_000 }, (_, i) => i);
    const { outcome, payload } = await dispatch({ table: "orders", rows });
    expect(outcome).toEqual({ kind: "ack" });
    const tool = payload?.tool as { name: string; input: { truncated: string } };
    expect(tool.name).toBe("mcp__db__insert_rows");
    expect(tool.input.truncated.startsWith('{"table":"orders","rows":[0,1,2,')).toBe(true);
    expect(tool.input.truncated.endsWith(TRUNCATION_MARKER)).toBe(true);
    expect(payload?.session_id).toBe(sessionId);
  });

  it("keeps the event id and the session id whole when it cuts the payload's strings to fit", async () => {
    // Every string was cut to the same length, ids included: a workflow got `evt…[truncated by
    // hookgate]` and could neither drop a repeated dispatch nor find the session.
    const input = Object.fromEntries(Array.from({ length: 1500 }, (_, i) => [`column_${i}`, "v".repeat(60)]));
    const { outcome, payload } = await dispatch(input);
    expect(outcome).toEqual({ kind: "ack" });
    expect(payload?.id).toBe("evt_021b1224-2a12-415e-8bab-df46f3926345");
    expect(payload?.session_id).toBe(sessionId);
    expect(payload?.rule).toBe("no-prod-writes");
    expect(JSON.stringify(payload)).toContain(TRUNCATION_MARKER);
  });
});

describe("deliver to a Discord webhook's own Execute Webhook endpoint", () => {
  let discord: LoopbackServer;
  /**
   * Discord as it answers a webhook (discord-api-docs: Execute Webhook, Embed Limits, Rate Limits,
   * JSON Error Codes): the webhook's token in the path, a 200 and the message object with
   * `wait=true`, a 400 `Invalid Form Body` naming each field past its limit, 404 Unknown Webhook,
   * 401 Invalid Webhook Token, and a 429 with Retry-After, X-RateLimit-* and `retry_after`: in
   * seconds (a float) under `/api/v10/`, in milliseconds under `/api/webhooks/` (no version: the
   * default, API v6, as Discord's Copy Webhook URL gives it; discord-api-docs#1454, #2360, #4722).
   * API v6 states a refused field in its older form, the field and its messages or the indexes of
   * the items refused (`{"embeds": ["0"]}`), without `message` or `code`. The Slack-compatible
   * endpoint (`…/slack`) answers "ok", and its 429 as the webhook's own does.
   */
  beforeAll(async () => {
    discord = await loopbackServer((req, res) => {
      const json = (status: number, body: unknown, headers: Record<string, string> = {}) =>
        res.writeHead(status, { "content-type": "application/json", ...headers }).end(JSON.stringify(body));
      const match = /^\/api\/(v\d+\/)?webhooks\/(\d+)\/([\w-]+)(\/slack)?(?:\?(.*))?$/.exec(req.url);
      if (req.method !== "POST" || !match) return json(404, { message: "404: Not Found", code: 0 });
      const [, version, , token, slack, query = ""] = match;
      if (token === "deleted") return json(404, { message: "Unknown Webhook", code: 10015 });
      if (token === "wrong") return json(401, { message: "Invalid Webhook Token", code: 50027 });
      // Cloudflare in front of Discord blocking the sender (discord-api-docs#6473).
      if (token === "blocked") return json(403, { message: "internal network error", code: 40333 });
      if (token === "blocked-dropped") {
        res.writeHead(403, { "content-type": "application/json", "content-length": "100" });
        res.write('{"message": "internal net');
        return setTimeout(() => res.socket?.destroy(), 20);
      }
      if (token === "busy") {
        const seconds = version !== undefined;
        return json(
          429,
          { message: "You are being rate limited.", retry_after: seconds ? 64.57 : 64570, global: false },
          {
            "retry-after": seconds ? "65" : "64570",
            "x-ratelimit-limit": "5",
            "x-ratelimit-remaining": "0",
            "x-ratelimit-reset-after": "64.57",
            "x-ratelimit-bucket": "abcd1234",
            "x-ratelimit-scope": "shared",
          },
        );
      }
      if (slack !== undefined) return res.writeHead(200, { "content-type": "text/html" }).end("ok");
      const body = JSON.parse(req.body) as { embeds?: { footer?: { text?: string } }[] };
      const errors: Record<string, unknown> = {};
      // A Discord whose footer takes fewer characters than the documented 2,048: a limit we missed.
      const footerMax = token === "tight" ? 10 : 2048;
      if ((body.embeds?.[0]?.footer?.text?.length ?? 0) > footerMax) {
        if (version === undefined) return json(400, { embeds: ["0"] });
        errors.embeds = {
          "0": {
            footer: {
              text: {
                _errors: [
                  { code: "BASE_TYPE_MAX_LENGTH", message: `Must be ${footerMax} or fewer in length.` },
                ],
              },
            },
          },
        };
      }
      if (Object.keys(errors).length > 0)
        return json(400, { code: 50035, errors, message: "Invalid Form Body" });
      if (!new URLSearchParams(query).has("wait")) return res.writeHead(204).end();
      return json(
        200,
        {
          id: "1300000000000000000",
          type: 0,
          content: "",
          embeds: body.embeds,
          mentions: [],
          mention_everyone: false,
        },
        { "x-ratelimit-limit": "5", "x-ratelimit-remaining": "4", "x-ratelimit-reset-after": "2.0" },
      );
    });
  });
  afterAll(() => discord.close());

  async function post(
    token: string,
    suffix = "",
    api = "/api",
    type: "discord" | "slack" = "discord",
  ): Promise<{ outcome: DeliveryOutcome; sent: unknown }> {
    const parsed = parseHookEvent({
      session_id: "s",
      transcript_path: "/t",
      cwd: "/p",
      hook_event_name: "PreToolUse",
      tool_name: "Bash",
      tool_input: { command: "echo @everyone <@123> <@&456>" },
    });
    if (!parsed.ok) throw new Error(parsed.error.message);
    const policy = await policyFrom(
      {
        version: 1,
        rules: [],
        egress: { allowCidrs: ["127.0.0.1/32"] },
        sinks: { talk: { type, url: "env:DISCORD_WEBHOOK_URL" } },
      },
      { DISCORD_WEBHOOK_URL: `${discord.url}${api}/webhooks/123/${token}${suffix}` },
    );
    const egress = createUndiciEgress({ policy: () => policy.egress });
    const deliverer = createDeliverer({
      policy: () => policy,
      egress: egress.send,
      env: (name) =>
        name === "DISCORD_WEBHOOK_URL" ? `${discord.url}${api}/webhooks/123/${token}${suffix}` : undefined,
      clock: { now: Date.now, monotonic: () => performance.now() },
      random: () => 0.5,
    });
    const before = discord.received.length;
    try {
      const notification = createNotification("evt_d", 0, parsed.value, {
        team: "platform",
        decision: "deny",
        reason: "ping @everyone and <@123>",
        ruleId: "r",
      });
      const outcome = await deliverer.deliver({ id: "evt_d.talk", sink: "talk", notification }, 1);
      const request = discord.received.slice(before).at(-1);
      return { outcome, sent: request && { url: request.url, body: JSON.parse(request.body) } };
    } finally {
      await egress.close();
    }
  }

  it("delivers an embed whose allowed_mentions parse nothing, to the webhook itself, a URL given with /slack too", async () => {
    for (const suffix of ["", "/slack"]) {
      const { outcome, sent } = await post("good", suffix);
      expect(outcome).toEqual({ kind: "ack" });
      expect(sent).toMatchObject({
        url: "/api/webhooks/123/good?wait=true",
        body: { allowed_mentions: { parse: [] }, embeds: [{ title: "⛔ Denied: Bash" }] },
      });
    }
  });

  it.each([
    ["/api/v10", 65_000],
    // The URL as Discord gives it, unversioned: its Retry-After of 64570 is 64.57 s, not 18 hours.
    ["/api", 64_570],
  ])("retries a 429 under %s after Discord's Retry-After, naming the limit's scope", async (api, delayMs) => {
    const { outcome } = await post("busy", "", api);
    expect(outcome).toMatchObject({
      kind: "retry",
      delayMs,
      reason: "HTTP 429 rate limited by Discord (scope shared): You are being rate limited.",
    });
  });

  it.each([
    // A sink of type slack at Discord's Slack-compatible endpoint: the same rate limiter, whose
    // waits an unversioned URL counts in milliseconds; read as seconds, 64570 held the URL 12 hours.
    ["/api/v10", 65_000],
    ["/api", 64_570],
  ])(
    "retries a 429 of Discord's Slack-compatible endpoint under %s after Discord's wait, in its units",
    async (api, delayMs) => {
      const { outcome } = await post("busy", "/slack", api, "slack");
      expect(outcome).toMatchObject({
        kind: "retry",
        delayMs,
        reason: "HTTP 429 rate limited by Discord (scope shared): You are being rate limited.",
      });
      expect((await post("good", "/slack", api, "slack")).outcome).toEqual({ kind: "ack" });
    },
  );

  it.each([
    ["discord", ""],
    ["slack", "/slack"],
  ] as const)(
    "retries a %s sink's 403 code 40333 on the schedule, naming Cloudflare's block, not the webhook",
    async (type, suffix) => {
      const { outcome } = await post("blocked", suffix, "/api", type);
      expect(outcome).toEqual({
        kind: "retry",
        delayMs: 5000,
        reason: expect.stringMatching(
          /^HTTP 403 blocked by Cloudflare in front of Discord .*: internal network error/,
        ),
      });
    },
  );

  it.each([
    ["discord", ""],
    ["slack", "/slack"],
  ] as const)(
    "retries a %s sink's 403 whose body broke off before it said whether it is Cloudflare's block",
    async (type, suffix) => {
      // Its code alone tells a block that lifts (40333) from the webhook's own refusal: cut before
      // it, the 403 is not known to be permanent, as a GitHub 403 cut before its message is not.
      const { outcome } = await post("blocked-dropped", suffix, "/api", type);
      expect(outcome).toMatchObject({ kind: "retry", delayMs: 5000 });
      expect(outcome.kind === "retry" && outcome.reason).toMatch(
        /^HTTP 403, but the answer broke off before Discord said whether Cloudflare blocks this host: its body broke off: /,
      );
    },
  );

  it.each([
    [
      "tight",
      "/api/v10",
      "HTTP 400 Discord refused the message: Invalid Form Body (code 50035): embeds.0.footer.text: Must be 10 or fewer in length. (BASE_TYPE_MAX_LENGTH)",
    ],
    // API v6 names the embed it refused, by its index, and no more.
    ["tight", "/api", "HTTP 400 Discord refused the message: embeds.0: refused"],
    [
      "deleted",
      "/api",
      /^HTTP 404 unknown webhook \(it was deleted in Discord.*Unknown Webhook \(code 10015\)$/,
    ],
    ["wrong", "/api", /^HTTP 401 unauthorized \(the webhook token .*Invalid Webhook Token \(code 50027\)$/],
  ])(
    "dead-letters the %s webhook's answer under %s at once, saying what Discord refused",
    async (token, api, reason) => {
      const { outcome } = await post(token, "", api);
      expect(outcome).toEqual({
        kind: "dead",
        reason: typeof reason === "string" ? reason : expect.stringMatching(reason),
      });
    },
  );
});

describe("a signed webhook, as its receiver verifies it from the docs' words", () => {
  const SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
  const raw: { headers: Record<string, string | string[] | undefined>; body: Buffer }[] = [];
  let receiver: Server;
  let url = "";
  beforeAll(async () => {
    // The raw bytes as they arrived, never decoded and re-encoded.
    receiver = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (chunk: Buffer) => chunks.push(chunk));
      req.on("end", () => {
        raw.push({ headers: req.headers, body: Buffer.concat(chunks) });
        res.writeHead(204).end();
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve));
    url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/in`;
  });
  afterAll(() => new Promise<void>((resolve) => receiver.close(() => resolve())));

  /**
   * docs/slack-message.md, "To verify a request": the three headers present; the timestamp within
   * 5 minutes of now; the secret without `whsec_`, base64-decoded, as the HMAC-SHA256 key over
   * "<id>.<timestamp>.<raw body>"; any space-separated `v1,<signature>` entry matching.
   */
  function verifiedByTheDocs(
    headers: Record<string, string | string[] | undefined>,
    body: Buffer,
    now: number,
  ) {
    const [id, timestamp, signatures] = ["webhook-id", "webhook-timestamp", "webhook-signature"].map((name) =>
      String(headers[name] ?? ""),
    );
    if (!id || !timestamp || !signatures || Math.abs(now / 1000 - Number(timestamp)) > 300) return false;
    const key = Buffer.from(SECRET.slice("whsec_".length), "base64");
    const expected = createHmac("sha256", key)
      .update(Buffer.concat([Buffer.from(`${id}.${timestamp}.`), body]))
      .digest();
    return signatures.split(" ").some((entry) => {
      const [version, signature] = entry.split(",");
      const given = Buffer.from(signature ?? "", "base64");
      return version === "v1" && given.length === expected.length && timingSafeEqual(given, expected);
    });
  }

  it("verifies, and is the same bytes signed through node:crypto (Node, Lambda) and WebCrypto (Workers)", async () => {
    // The agent's text at its worst: mentions, markup, zero-width characters, lone surrogates and
    // non-ASCII, which the receiver must hash as the bytes it got.
    const text = `<!channel> @everyone <@U123> [x](https://e.example) \u200b\u200d \uD800 \uDFFF 🚀 ${"é".repeat(3000)}`;
    const parsed = parseHookEvent({
      session_id: "s",
      transcript_path: "/t",
      cwd: "/p",
      hook_event_name: "Notification",
      message: text,
      notification_type: "idle_prompt",
    });
    if (!parsed.ok) throw new Error(parsed.error.message);
    const notification = createNotification("evt_sig", 0, parsed.value, {
      team: "t",
      decision: "none",
      ruleId: "r",
    });
    const policy = await policyFrom({
      version: 1,
      rules: [],
      egress: { allowCidrs: ["127.0.0.1/32"] },
      sinks: { hook: { type: "webhook", url, secret: SECRET } },
    });
    const now = Date.now();
    for (const hmac of [nodeHmacSha256, webCryptoHmacSha256]) {
      const egress = createUndiciEgress({ policy: () => policy.egress });
      const deliverer = createDeliverer({
        policy: () => policy,
        egress: egress.send,
        env: () => undefined,
        clock: { now: () => now, monotonic: () => performance.now() },
        random: () => 0.5,
        hmac,
      });
      try {
        expect(await deliverer.deliver({ id: "evt_sig.hook", sink: "hook", notification }, 1)).toEqual({
          kind: "ack",
        });
      } finally {
        await egress.close();
      }
    }
    expect(raw).toHaveLength(2);
    const [node, workers] = raw as [(typeof raw)[0], (typeof raw)[0]];
    expect(workers.body.equals(node.body)).toBe(true);
    expect(workers.headers["webhook-signature"]).toBe(node.headers["webhook-signature"]);
    expect(node.body.length).toBeLessThanOrEqual(64 * 1024);
    expect(node.body.toString("utf8")).toContain("\uFFFD \uFFFD 🚀");
    expect(verifiedByTheDocs(node.headers, node.body, now)).toBe(true);
    // A byte changed, or a timestamp 301 s off, does not verify.
    const tampered = Buffer.from(node.body);
    tampered[10] = (tampered[10] ?? 0) ^ 1;
    expect(verifiedByTheDocs(node.headers, tampered, now)).toBe(false);
    expect(verifiedByTheDocs(node.headers, node.body, now + 301_000)).toBe(false);
  });
});

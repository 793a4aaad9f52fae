/**
 * The queue contract (test/contract/queue.contract.ts) on Cloudflare Queues, inside workerd.
 * Cloudflare pushes batches instead of being pulled, so each behaviour of the pull contract is
 * expressed for the push model, under the same name: the real producer (createCloudflareProducer)
 * sends on a real Miniflare queue (hookgate-contract, its own queue and DLQ set up in
 * vitest.workers.config.ts), Miniflare's broker pushes batches to the Worker's `queue` handler,
 * and the real consumer (createCloudflareConsumer) settles each message from a scripted deliver
 * outcome (ack / retry with a delay / dead) into `msg.ack()`, `msg.retry({delaySeconds})` or a
 * send to the real DLQ. The DLQ is consumed the same way, so replay re-sends what was actually
 * dead-lettered. Nothing goes through createMessageBatch / getQueueResult here: every step runs
 * on the real queues.
 *
 * The routing: the pool calls the `queue` export of the Worker's main module looked up at each
 * event, the module this file imports, so for the two contract queues the test swaps in its own
 * handler (hookgate-jobs still goes to the Worker's).
 */
import { env } from "cloudflare:test";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  createCloudflareProducer,
  type DeadLetterEnvelope,
  type Envelope,
  type QueueProducerBinding,
  replayDeadLetters,
} from "../../src/adapters/queue/cloudflare.js";
import { createCloudflareConsumer } from "../../src/adapters/queue/cloudflare-consumer.js";
import type { DeliveryOutcome } from "../../src/app/deliver.js";
import type { DeliveryJob } from "../../src/core/delivery.js";
import worker from "../../src/entry/workers.js";

const QUEUE = "hookgate-contract";
const DLQ = "hookgate-contract-dlq";
/** Cloudflare works in whole seconds: every delay in the suite is one second. */
const SECOND = 1000;

interface Delivery {
  readonly id: string;
  readonly body: DeliveryJob;
  readonly attempts: number;
  readonly holds: number;
  /** Which push (consumer invocation) carried it. */
  readonly push: number;
  readonly at: number;
}

const deliveries: Delivery[] = [];
const deadLetters: unknown[] = [];
/** Per job id, the outcome of each delivery in turn; ack once the plan is spent. */
const plans = new Map<string, DeliveryOutcome[]>();
let pushes = 0;

const quiet = { log: () => {} };
const consumer = createCloudflareConsumer({
  deliverer: {
    async deliver(job, attempts, { holds = 0 } = {}) {
      const push = pushes;
      deliveries.push({ id: job.id, body: job, attempts, holds, push, at: Date.now() });
      return plans.get(job.id)?.shift() ?? { kind: "ack" };
    },
  },
  deadLetters: env.CONTRACT_DLQ as QueueProducerBinding<DeadLetterEnvelope<unknown>>,
  jobs: env.CONTRACT_QUEUE as QueueProducerBinding<Envelope<DeliveryJob>>,
  logger: quiet,
  now: Date.now,
});
const producer = createCloudflareProducer(env.CONTRACT_QUEUE as QueueProducerBinding<Envelope<DeliveryJob>>);

const original = worker.queue;
beforeAll(() => {
  worker.queue = async (batch, workerEnv, ctx) => {
    if (batch.queue === QUEUE) {
      pushes++;
      return consumer.consume(batch);
    }
    if (batch.queue === DLQ) {
      for (const message of batch.messages) {
        deadLetters.push(message.body);
        message.ack();
      }
      return;
    }
    return original(batch, workerEnv, ctx);
  };
});
afterAll(() => {
  worker.queue = original;
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function until<T>(what: string, probe: () => T | undefined, timeoutMs = 5_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const value = probe();
    if (value !== undefined) return value;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(20);
  }
}

/** A delivery job whose id is unique to this run (the queues outlive a test). */
function job(name: string, n: number, sink = "slack"): { id: string; body: DeliveryJob } {
  const id = `${name}-${crypto.randomUUID()}`;
  return {
    id,
    body: {
      id,
      sink,
      notification: {
        id,
        createdAt: 0,
        team: "default",
        client: "claude-code",
        eventName: "SessionEnd",
        decision: "none",
        ruleId: "contract",
        event: { n },
      },
    },
  };
}

const of = (id: string) => deliveries.filter((d) => d.id === id);
const attemptsOf = (id: string) => of(id).map((d) => d.attempts);
const deadOf = (id: string) => deadLetters.filter((d) => (d as { id?: unknown }).id === id);
const retry = (delayMs: number): DeliveryOutcome => ({
  kind: "retry",
  delayMs,
  reason: "HTTP 503 from sink",
});
/** Long enough for a redelivery that should not happen to show up. */
const QUIET_MS = 600;

describe("Cloudflare Queues (push) in workerd", () => {
  it("delivers a sent message with its body and attempts 1", async () => {
    const one = job("evt-1", 1);
    await producer.send([one]);
    const [got] = await until("the delivery", () => (of(one.id).length > 0 ? of(one.id) : undefined));
    expect(got).toMatchObject({ id: one.id, body: one.body, attempts: 1 });
    await sleep(QUIET_MS);
    expect(attemptsOf(one.id)).toEqual([1]);
  });

  it("delivers every message of a batch of 25 once, across several receives", async () => {
    const sent = Array.from({ length: 25 }, (_, n) => job(`batch-${String(n).padStart(2, "0")}`, n));
    const ids = new Set(sent.map((m) => m.id));
    const mine = () => deliveries.filter((d) => ids.has(d.id));
    await producer.send(sent);
    await until("the 25 deliveries", () => (mine().length >= 25 ? true : undefined));
    await sleep(QUIET_MS);
    const got = mine();
    expect(got.map((d) => d.id).sort()).toEqual([...ids].sort());
    for (const d of got) {
      expect(d.attempts).toBe(1);
      expect(d.body).toEqual(sent.find((m) => m.id === d.id)?.body);
    }
    // maxBatchSize 10: the 25 came in several pushes, none over 10.
    const perPush = new Map<number, number>();
    for (const d of got) perPush.set(d.push, (perPush.get(d.push) ?? 0) + 1);
    expect(perPush.size).toBeGreaterThanOrEqual(3);
    expect(Math.max(...perPush.values())).toBeLessThanOrEqual(10);
  });

  it("keeps a delayed message invisible until its delay has passed", async () => {
    const later = job("later", 1);
    const now = job("now", 2);
    const sentAt = Date.now();
    await producer.send([{ ...later, delayMs: SECOND }, now]);
    await until("the undelayed message", () => (of(now.id).length > 0 ? true : undefined));
    expect(of(later.id)).toEqual([]);
    // A lower bound only (it came no sooner than its delay): a busy host may deliver it later.
    const [got] = await until("the delayed message", () =>
      of(later.id).length > 0 ? of(later.id) : undefined,
    );
    expect(got).toMatchObject({ id: later.id, body: later.body, attempts: 1 });
    expect((got?.at ?? 0) - sentAt).toBeGreaterThanOrEqual(SECOND - 50);
  });

  it("brings a retried message back after the delay, with attempts counted on", async () => {
    const flaky = job("flaky", 1);
    // Retry in 1 s, then at once, then ack.
    plans.set(flaky.id, [retry(SECOND), retry(0)]);
    await producer.send([flaky]);
    const all = await until("the third delivery", () =>
      of(flaky.id).length >= 3 ? of(flaky.id) : undefined,
    );
    expect(all.map((d) => [d.id, d.attempts])).toEqual([
      [flaky.id, 1],
      [flaky.id, 2],
      [flaky.id, 3],
    ]);
    expect(all.every((d) => JSON.stringify(d.body) === JSON.stringify(flaky.body))).toBe(true);
    const [first, second] = all;
    expect((second?.at ?? 0) - (first?.at ?? 0)).toBeGreaterThanOrEqual(SECOND - 50);
    // Acked on the third attempt: never a fourth, nothing dead.
    await sleep(QUIET_MS);
    expect(attemptsOf(flaky.id)).toEqual([1, 2, 3]);
    expect(deadOf(flaky.id)).toEqual([]);
  });

  it("forgets an acked message for good", async () => {
    const done = job("done", 1);
    const kept = job("kept", 2);
    plans.set(kept.id, [retry(0)]);
    await producer.send([done, kept]);
    await until("the redelivery of kept", () => (of(kept.id).length >= 2 ? true : undefined));
    await sleep(QUIET_MS);
    // The retried one came back; the acked one did not.
    expect(attemptsOf(kept.id)).toEqual([1, 2]);
    expect(attemptsOf(done.id)).toEqual([1]);
    expect(deadOf(done.id)).toEqual([]);
  });

  it("brings a held message back after the delay with no attempt spent, its holds counted, and once", async () => {
    // RELIABILITY.md problem 9: a held job was retried, and Cloudflare counted the retry in
    // msg.attempts, which the schedule read: its next failure read the schedule one step on.
    const held = job("held", 9);
    const hold = (delayMs: number): DeliveryOutcome => ({
      kind: "retry",
      delayMs,
      reason: "not sent: the sink asked to wait 1 s more after a rate limit",
      unsent: true,
    });
    plans.set(held.id, [
      hold(SECOND),
      hold(0),
      retry(0),
      { kind: "dead", reason: "gave up after 2 attempts" },
    ]);
    await producer.send([held]);
    const [letter] = await until("the dead letter", () =>
      deadOf(held.id).length > 0 ? deadOf(held.id) : undefined,
    );
    expect(of(held.id).map((d) => [d.attempts, d.holds])).toEqual([
      [1, 0],
      [1, 1],
      [1, 2],
      [2, 2],
    ]);
    expect(letter).toMatchObject({
      id: held.id,
      body: held.body,
      attempts: 2,
      error: "gave up after 2 attempts",
    });
    const [first, second] = of(held.id);
    expect((second?.at ?? 0) - (first?.at ?? 0)).toBeGreaterThanOrEqual(SECOND - 50);
    // One message all along: never delivered again, one dead letter.
    await sleep(QUIET_MS);
    expect(of(held.id)).toHaveLength(4);
    expect(deadOf(held.id)).toHaveLength(1);
  });

  it("moves a dead-lettered message to the DLQ with its error and attempts", async () => {
    const poison = job("poison", 7, "github");
    const fine = job("fine", 8);
    plans.set(poison.id, [retry(0), { kind: "dead", reason: "HTTP 410 Gone: sink disabled" }]);
    const before = Date.now();
    await producer.send([poison, fine]);
    const [letter] = await until("the dead letter", () =>
      deadOf(poison.id).length > 0 ? deadOf(poison.id) : undefined,
    );
    expect(letter).toEqual({
      id: poison.id,
      body: poison.body,
      attempts: 2,
      error: "HTTP 410 Gone: sink disabled",
      failedAt: expect.any(Number),
    });
    expect((letter as { failedAt: number }).failedAt).toBeGreaterThanOrEqual(before);
    // Gone from the queue: acked once dead-lettered, never delivered again.
    await sleep(QUIET_MS);
    expect(attemptsOf(poison.id)).toEqual([1, 2]);
    expect(deadOf(poison.id)).toHaveLength(1);
    expect(attemptsOf(fine.id)).toEqual([1]);
    expect(deadOf(fine.id)).toEqual([]);
  });

  it("replays dead letters of both shapes, with a fresh delivery count", async () => {
    const dead = job("dead", 1);
    const stuck = job("stuck", 2);
    plans.set(dead.id, [{ kind: "dead", reason: "HTTP 410 Gone" }]);
    // Retried past the queue's max_retries (3): Cloudflare moves the bare envelope itself.
    plans.set(stuck.id, [retry(0), retry(0), retry(0), retry(0)]);
    await producer.send([dead, stuck]);
    const [deadLetter] = await until("the consumer's dead letter", () =>
      deadOf(dead.id).length > 0 ? deadOf(dead.id) : undefined,
    );
    const [moved] = await until("the dead letter Cloudflare moved", () =>
      deadOf(stuck.id).length > 0 ? deadOf(stuck.id) : undefined,
    );
    expect(deadLetter).toMatchObject({ id: dead.id, attempts: 1, error: "HTTP 410 Gone" });
    expect(moved).toEqual({ id: stuck.id, body: stuck.body });
    expect(attemptsOf(stuck.id)).toEqual([1, 2, 3, 4]);

    expect(await replayDeadLetters([deadLetter, moved, { junk: true }], producer)).toBe(2);
    await until("the replays", () =>
      of(dead.id).length >= 2 && of(stuck.id).length >= 5 ? true : undefined,
    );
    await sleep(QUIET_MS);
    // Delivered again with their bodies and attempts 1, then acked: no more redeliveries.
    expect(of(dead.id).map((d) => [d.attempts, d.body])).toEqual([
      [1, dead.body],
      [1, dead.body],
    ]);
    expect(attemptsOf(stuck.id)).toEqual([1, 2, 3, 4, 1]);
    expect(of(stuck.id).at(-1)?.body).toEqual(stuck.body);
    expect(deadOf(dead.id)).toHaveLength(1);
    expect(deadOf(stuck.id)).toHaveLength(1);
  });
});

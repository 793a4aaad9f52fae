/**
 * The queue contract every backend must pass (STYLE.md: one suite, every backend). Each backend's
 * *.test.ts calls queueContract with a factory; where backends legitimately differ (standard SQS
 * queues neither dedup ids nor tie a delete to the latest receipt) the factory says so by a flag.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Queue, ReceivedMessage } from "../../src/core/queue.js";

export interface Job {
  readonly sink: string;
  readonly n: number;
}

export interface QueueUnderTest {
  readonly queue: Queue<Job>;
  /** Moves the backend's injected clock; absent when it runs on real time (SQS). */
  readonly advance?: (ms: number) => void;
  /** A second send of an id still queued is ignored (SQLite, memory); standard SQS keeps both. */
  readonly dedupsIds: boolean;
  /** ack/retry/deadLetter with a receipt from an earlier delivery change nothing (SQLite, memory). */
  readonly staleReceiptsIgnored: boolean;
  /** local-aws-sqs counts ChangeMessageVisibility as a receive, so a retry adds one more attempt. */
  readonly retryCountsAsReceive?: boolean;
  cleanup(): Promise<void>;
}

/** SQS works in whole seconds, so every delay and visibility in the suite is one second. */
const SECOND = 1000;
const LONG = 30_000;
/** On real time, how long past a deadline to wait before expecting its effect. */
const SLACK_MS = 300;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const job = (n: number, sink = "slack"): Job => ({ sink, n });

export function queueContract(name: string, make: () => Promise<QueueUnderTest>): void {
  describe(name, () => {
    let t: QueueUnderTest;
    let queue: Queue<Job>;

    beforeEach(async () => {
      t = await make();
      queue = t.queue;
    });
    afterEach(async () => {
      await t.queue.close();
      await t.cleanup();
    });

    /**
     * Lets `ms` pass. On an injected clock, first checks `stillHidden` one millisecond before the
     * deadline, so an off-by-one or a deadline ignored altogether fails.
     */
    async function pass(ms: number, stillHidden: () => Promise<void>): Promise<void> {
      if (t.advance) {
        t.advance(ms - 1);
        await stillHidden();
        t.advance(1);
      } else {
        await sleep(ms + SLACK_MS);
      }
    }

    async function nothingVisible(): Promise<void> {
      expect(await queue.receive(10, LONG)).toEqual([]);
    }

    /** Receives until a receive comes back empty; every call within its `max`. */
    async function drain(visibilityMs = LONG): Promise<ReceivedMessage<Job>[]> {
      const all: ReceivedMessage<Job>[] = [];
      for (let round = 0; round < 20; round++) {
        const got = await queue.receive(10, visibilityMs);
        expect(got.length).toBeLessThanOrEqual(10);
        if (got.length === 0) return all;
        all.push(...got);
      }
      throw new Error("the queue never ran dry");
    }

    const ids = (messages: readonly { id: string }[]) => messages.map((m) => m.id).sort();

    it("delivers a sent message with its body and attempts 1", async () => {
      await queue.send([{ id: "evt-1.slack", body: job(1) }]);
      const got = await queue.receive(10, LONG);
      expect(got).toHaveLength(1);
      expect(got[0]).toMatchObject({ id: "evt-1.slack", body: job(1), attempts: 1 });
      expect(got[0]?.receipt).toEqual(expect.any(String));
      expect(got[0]?.receipt.length).toBeGreaterThan(0);
    });

    it("delivers every message of a batch of 25 once, across several receives", async () => {
      const sent = Array.from({ length: 25 }, (_, n) => ({
        id: `job-${String(n).padStart(2, "0")}`,
        body: job(n),
      }));
      await queue.send(sent);
      const few = await queue.receive(3, LONG);
      expect(few.length).toBeGreaterThan(0);
      expect(few.length).toBeLessThanOrEqual(3);
      const rest = await drain();
      const all = [...few, ...rest];
      expect(ids(all)).toEqual(sent.map((m) => m.id));
      for (const m of all) expect(m.body).toEqual(job(Number(m.id.slice(4))));
    });

    it("receives more than 10 in one call when asked to", async () => {
      await queue.send(Array.from({ length: 14 }, (_, n) => ({ id: `big-${n}`, body: job(n) })));
      const got = await queue.receive(14, LONG);
      expect(got).toHaveLength(14);
      expect(new Set(ids(got)).size).toBe(14);
    });

    it("queues an id twice only where the backend does not dedup ids", async () => {
      await queue.send([{ id: "dup", body: job(1) }]);
      await queue.send([
        { id: "dup", body: job(2) },
        { id: "other", body: job(3) },
      ]);
      const got = await drain();
      if (t.dedupsIds) {
        expect(ids(got)).toEqual(["dup", "other"]);
        expect(got.find((m) => m.id === "dup")?.body).toEqual(job(1));
      } else {
        expect(ids(got)).toEqual(["dup", "dup", "other"]);
      }
    });

    it("keeps a delayed message invisible until its delay has passed", async () => {
      await queue.send([
        { id: "later", body: job(1), delayMs: SECOND },
        { id: "now", body: job(2) },
      ]);
      const first = await queue.receive(10, LONG);
      expect(ids(first)).toEqual(["now"]);
      await pass(SECOND, nothingVisible);
      const second = await queue.receive(10, LONG);
      expect(second).toHaveLength(1);
      expect(second[0]).toMatchObject({ id: "later", body: job(1), attempts: 1 });
    });

    it("hides a received message for its visibility timeout, then delivers it again with attempts 2", async () => {
      await queue.send([{ id: "lease", body: job(1) }]);
      const [first] = await queue.receive(10, SECOND);
      expect(first?.attempts).toBe(1);
      await nothingVisible();
      await pass(SECOND, nothingVisible);
      const again = await queue.receive(10, LONG);
      expect(again).toHaveLength(1);
      expect(again[0]).toMatchObject({ id: "lease", body: job(1), attempts: 2 });
      expect(again[0]?.receipt).not.toBe(first?.receipt);
    });

    it("brings a retried message back after the delay, with attempts counted on", async () => {
      await queue.send([{ id: "flaky", body: job(1) }]);
      const [first] = await queue.receive(10, LONG);
      if (!first) throw new Error("nothing received");
      await queue.retry(first, SECOND, "HTTP 503 from sink");
      await nothingVisible();
      await pass(SECOND, nothingVisible);
      const [second] = await queue.receive(10, LONG);
      const perRetry = t.retryCountsAsReceive ? 2 : 1;
      expect(second).toMatchObject({ id: "flaky", body: job(1), attempts: 1 + perRetry });
      if (!second) throw new Error("nothing received");
      // A retry without delay is visible at once.
      await queue.retry(second, 0, "HTTP 503 from sink");
      const [third] = await queue.receive(10, LONG);
      expect(third).toMatchObject({ id: "flaky", attempts: 1 + 2 * perRetry });
    });

    it("brings a held message back after the delay with no attempt spent, its holds counted, and once", async () => {
      // RELIABILITY.md problem 9: a receive that ended in a hold (nothing sent) counted as an
      // attempt, so the job's next failure read its retry schedule one step further on.
      await queue.send([{ id: "held", body: job(1) }]);
      const [first] = await queue.receive(10, LONG);
      if (!first) throw new Error("nothing received");
      expect(first).toMatchObject({ attempts: 1 });
      expect(first.holds ?? 0).toBe(0);
      expect(await queue.hold(first, SECOND, "not sent: the sink asked to wait 1 s more")).toBe(true);
      await nothingVisible();
      await pass(SECOND, nothingVisible);
      const [second] = await queue.receive(10, LONG);
      if (!second) throw new Error("nothing received");
      expect(second).toMatchObject({ id: "held", body: job(1), attempts: 1, holds: 1 });
      // Held again at once, then a real attempt fails and is retried: the count goes on from 1.
      await queue.hold(second, 0, "not sent");
      const [third] = await queue.receive(10, LONG);
      if (!third) throw new Error("nothing received");
      expect(third).toMatchObject({ attempts: 1, holds: 2 });
      await queue.retry(third, 0, "HTTP 500 from sink");
      const [fourth] = await queue.receive(10, LONG);
      const perRetry = t.retryCountsAsReceive ? 2 : 1;
      expect(fourth).toMatchObject({ id: "held", attempts: 1 + perRetry, holds: 2 });
      if (!fourth) throw new Error("nothing received");
      await queue.deadLetter(fourth, "gave up");
      // One message all along: nothing else is left, and the dead letter counts the sends.
      expect(await drain()).toEqual([]);
      expect((await queue.listDead()).map((d) => [d.id, d.attempts])).toEqual([["held", 1 + perRetry]]);
    });

    it("holds a message for a wait that adds no hold with neither an attempt nor a hold spent", async () => {
      // Before, Lambda's wait for a policy that does not load passed `holds - 1` so
      // that the hold's one more came out even; the wait is now said as such.
      await queue.send([{ id: "waits", body: job(1) }]);
      const [first] = await queue.receive(10, LONG);
      if (!first) throw new Error("nothing received");
      expect(await queue.hold(first, 0, "not sent: the sink asked to wait")).toBe(true);
      const [second] = await queue.receive(10, LONG);
      if (!second) throw new Error("nothing received");
      expect(second).toMatchObject({ id: "waits", attempts: 1, holds: 1 });
      expect(await queue.hold(second, 0, "the configuration is invalid", { addsHold: false })).toBe(true);
      const [third] = await queue.receive(10, LONG);
      expect(third).toMatchObject({ id: "waits", body: job(1), attempts: 1, holds: 1 });
      if (!third) throw new Error("nothing received");
      await queue.ack(third);
      expect(await drain()).toEqual([]);
    });

    it("forgets an acked message for good", async () => {
      await queue.send([
        { id: "done", body: job(1) },
        { id: "kept", body: job(2) },
      ]);
      const got = await queue.receive(10, SECOND);
      expect(ids(got)).toEqual(["done", "kept"]);
      const done = got.find((m) => m.id === "done");
      if (!done) throw new Error("done not received");
      await queue.ack(done);
      await pass(SECOND, nothingVisible);
      const again = await drain();
      expect(again.map((m) => [m.id, m.attempts])).toEqual([["kept", 2]]);
      expect(await queue.listDead()).toEqual([]);
    });

    it("moves a dead-lettered message to listDead with its error and attempts", async () => {
      await queue.send([
        { id: "poison", body: job(7, "github") },
        { id: "fine", body: job(8) },
      ]);
      const [poison] = (await queue.receive(10, SECOND)).filter((m) => m.id === "poison");
      expect(poison?.attempts).toBe(1);
      await pass(SECOND, nothingVisible);
      const [again] = (await queue.receive(10, SECOND)).filter((m) => m.id === "poison");
      expect(again?.attempts).toBe(2);
      if (!again) throw new Error("poison not redelivered");
      await queue.deadLetter(again, "HTTP 410 Gone: sink disabled");
      const dead = await queue.listDead();
      expect(dead).toHaveLength(1);
      expect(dead[0]).toMatchObject({
        id: "poison",
        body: job(7, "github"),
        attempts: 2,
        error: "HTTP 410 Gone: sink disabled",
      });
      expect(dead[0]?.failedAt).toBeGreaterThan(0);
      // Gone from the queue: once the leases run out, only the other message comes back.
      await pass(SECOND, nothingVisible);
      expect(ids(await drain())).toEqual(["fine"]);
    });

    it("replays one dead letter by id, then all, with a fresh delivery count", async () => {
      await queue.send(["a", "b", "c"].map((id, n) => ({ id, body: job(n) })));
      for (const m of await drain()) await queue.deadLetter(m, `failed ${m.id}`);
      expect(ids(await queue.listDead())).toEqual(["a", "b", "c"]);
      expect(await queue.listDead(0)).toEqual([]);

      expect(await queue.replayDead(["missing"])).toEqual({ count: 0, missing: ["missing"] });
      expect(ids(await queue.listDead())).toEqual(["a", "b", "c"]);

      expect(await queue.replayDead(["b"])).toEqual({ count: 1, missing: [] });
      expect(ids(await queue.listDead())).toEqual(["a", "c"]);
      const b = await drain();
      expect(b.map((m) => [m.id, m.body, m.attempts])).toEqual([["b", job(1), 1]]);

      expect(await queue.replayDead()).toEqual({ count: 2, missing: [] });
      expect(await queue.listDead()).toEqual([]);
      const rest = await drain();
      expect(rest.map((m) => [m.id, m.attempts]).sort()).toEqual([
        ["a", 1],
        ["c", 1],
      ]);
    });

    it("replays only the dead letters `keep` keeps, by id or all, and leaves the others as they were", async () => {
      await queue.send([
        { id: "a", body: job(1, "audit") },
        { id: "c", body: job(2, "chat") },
        { id: "b", body: job(3, "audit") },
      ]);
      for (const m of await drain()) await queue.deadLetter(m, `failed ${m.id}`);
      const keep = (body: unknown) => (body as Job).sink === "audit";
      expect(await queue.replayDead(["c"], keep)).toEqual({ count: 0, missing: [] });
      expect(await queue.replayDead(undefined, keep)).toEqual({ count: 2, missing: [] });
      expect(ids(await drain()).sort()).toEqual(["a", "b"]);
      const left = await queue.listDead();
      expect(left.map((d) => [d.id, d.body, d.error])).toEqual([["c", job(2, "chat"), "failed c"]]);
    });

    it("asks `keep` of a dead letter whose job is a JSON string, as of any other job", async () => {
      await queue.send([
        { id: "s", body: "audit" as unknown as Job },
        { id: "a", body: job(1, "audit") },
      ]);
      for (const m of await drain()) await queue.deadLetter(m, `failed ${m.id}`);
      const asked: unknown[] = [];
      const keep = (body: unknown) => {
        asked.push(body);
        return typeof body !== "string";
      };
      expect(await queue.replayDead(undefined, keep)).toEqual({ count: 1, missing: [] });
      expect(asked).toContainEqual("audit");
      expect(ids(await drain())).toEqual(["a"]);
      expect((await queue.listDead()).map((d) => [d.id, d.body])).toEqual([["s", "audit"]]);
    });

    it("gives a replayed dead letter back its group, so a sink's cap holds for it too where the backend skips groups", async () => {
      await queue.send([{ id: "g1", body: job(1), group: "siem" }]);
      const [leased] = await queue.receive(10, SECOND);
      if (!leased) throw new Error("nothing received");
      await queue.deadLetter(leased, "failed");
      expect(await queue.replayDead()).toEqual({ count: 1, missing: [] });
      if (queue.skipsGroups) {
        expect(await queue.receive(10, SECOND, ["siem"])).toEqual([]);
        expect(ids(await queue.receive(10, SECOND))).toEqual(["g1"]);
      } else {
        // SQS has no groups to keep: the replayed job comes back to a receive whatever it skips.
        expect(ids(await queue.receive(10, SECOND, ["siem"]))).toEqual(["g1"]);
      }
    });

    it("drops one dead letter by id, then all, for good", async () => {
      await queue.send(["a", "b", "c"].map((id, n) => ({ id, body: job(n) })));
      for (const m of await drain()) await queue.deadLetter(m, `failed ${m.id}`);
      expect(await queue.dropDead(["missing"])).toEqual({ count: 0, missing: ["missing"] });
      expect(await queue.dropDead(["b"])).toEqual({ count: 1, missing: [] });
      expect(ids(await queue.listDead())).toEqual(["a", "c"]);
      expect(await queue.dropDead()).toEqual({ count: 2, missing: [] });
      expect(await queue.listDead()).toEqual([]);
      // Nothing went back to the queue, and nothing is left to replay.
      expect(await drain()).toEqual([]);
      expect(await queue.replayDead()).toEqual({ count: 0, missing: [] });
    });

    it("names the ids given that are no dead letter, once each in the order given, and not one `keep` left", async () => {
      await queue.send(["a", "b", "c"].map((id, n) => ({ id, body: job(n, id === "c" ? "chat" : "audit") })));
      for (const m of await drain()) await queue.deadLetter(m, `failed ${m.id}`);
      const keep = (body: unknown) => (body as Job).sink === "audit";
      expect(await queue.replayDead(["zz", "a", "c", "yy", "zz"], keep)).toEqual({
        count: 1,
        missing: ["zz", "yy"],
      });
      // "a" was replayed: now it is no dead letter either.
      expect(await queue.dropDead(["a", "b", "xx", "b"])).toEqual({ count: 1, missing: ["a", "xx"] });
      expect(ids(await queue.listDead())).toEqual(["c"]);
      // Without ids nothing is missing.
      expect(await queue.dropDead()).toEqual({ count: 1, missing: [] });
    });

    it("never lets a receipt from an earlier delivery undo the newer one", async () => {
      await queue.send([{ id: "slow", body: job(1) }]);
      const [stale] = await queue.receive(10, SECOND);
      if (!stale) throw new Error("nothing received");
      await pass(SECOND, nothingVisible);
      const [fresh] = await queue.receive(10, SECOND);
      expect(fresh).toMatchObject({ id: "slow", attempts: 2 });
      if (!fresh) throw new Error("nothing redelivered");

      if (t.staleReceiptsIgnored) {
        // Each says it did nothing, so the consumer counts no delivery, retry or dead letter.
        expect(await queue.ack(stale)).toBe(false);
        expect(await queue.retry(stale, 0, "late")).toBe(false);
        expect(await queue.deadLetter(stale, "late")).toBe(false);
        // Nor does a hold give back the newer lease's attempt or count a hold.
        expect(await queue.hold(stale, 0, "late")).toBe(false);
        // The fresh lease still holds, and nothing was dead-lettered.
        await nothingVisible();
        expect(await queue.listDead()).toEqual([]);
        await pass(SECOND, nothingVisible);
        const [third] = await queue.receive(10, LONG);
        expect(third).toMatchObject({ id: "slow", attempts: 3 });
        expect(third?.holds ?? 0).toBe(0);
        if (!third) throw new Error("nothing redelivered");
        expect(await queue.retry(third, 0, "again")).toBe(true);
        // Retried, the receipt is spent: a second settle with it is stale too.
        expect(await queue.ack(third)).toBe(false);
        const [fourth] = await queue.receive(10, LONG);
        if (!fourth) throw new Error("nothing redelivered");
        expect(await queue.ack(fourth)).toBe(true);
        await nothingVisible();
      } else {
        // Standard SQS: a delete with an older receipt handle is accepted (it may or may not
        // delete); the latest receipt always deletes.
        await queue.ack(stale);
        await queue.ack(fresh);
        await pass(SECOND, async () => {});
        await nothingVisible();
      }
    });
  });
}

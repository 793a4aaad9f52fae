import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { CreateQueueCommand } from "@aws-sdk/client-sqs";
import { createSqsServer } from "local-aws-sqs";
import { describe, expect, it } from "vitest";
import { createMemoryQueue } from "../../src/adapters/queue/memory.js";
import { createSqliteQueue } from "../../src/adapters/queue/sqlite.js";
import { createSqsClientForLocal, createSqsQueue } from "../../src/adapters/queue/sqs.js";
import { startConsumer } from "../../src/app/consumer.js";
import { createDeliverer, type Deliverer } from "../../src/app/deliver.js";
import {
  createNotification,
  DEFAULT_RETRY_SCHEDULE_SECONDS,
  type DeliveryJob,
  MAX_HOLDS,
} from "../../src/core/delivery.js";
import { parseHookEvent } from "../../src/core/events.js";
import { CopySentError } from "../../src/core/queue.js";
import { policyFrom } from "../support/policy.js";
import { tempDir } from "../support/temp.js";

const sessionEnd = (id: string) =>
  ({ id, sink: "s", notification: { eventName: "SessionEnd", event: {} } }) as unknown as DeliveryJob;
const stopJob = (id: string, sink = "s") =>
  ({ id, sink, notification: { eventName: "Stop", event: {} } }) as unknown as DeliveryJob;

const ended = parseHookEvent({
  session_id: "s",
  transcript_path: "/t",
  cwd: "/p",
  hook_event_name: "SessionEnd",
  reason: "other",
});
if (!ended.ok) throw new Error(ended.error.message);
/** Job `id` of `sink`, whose notification is of a real SessionEnd event, its id `eventId`. */
const endedJob = (id: string, eventId: string, sink: string): DeliveryJob => ({
  id,
  sink,
  notification: createNotification(eventId, 0, ended.value, { team: "t", decision: "none", ruleId: "r" }),
});

/** A deliverer that notes each job's id in `delivered`, then answers `outcome()`. */
const noting = (
  delivered: string[],
  outcome: () => Awaited<ReturnType<Deliverer["deliver"]>>,
): Deliverer => ({
  deliver: async (j: DeliveryJob) => {
    delivered.push(j.id);
    return outcome();
  },
});

/** A deliverer that accepts every job and notes its id. */
const accepting = (delivered: string[]) => noting(delivered, () => ({ kind: "ack" }));

/**
 * Waits for `check` to hold, looking every 5 ms, and fails the test if it never does: a wait that
 * ran out is a failure, not a pass on what happened to be there.
 */
async function until(check: () => boolean | Promise<boolean>): Promise<void> {
  for (let i = 0; i < 1000 && !(await check()); i++) await new Promise((r) => setTimeout(r, 5));
  expect(await check()).toBe(true);
}

/**
 * One turn of the event loop: every continuation of a promise already settled has run. The memory
 * queue answers through promises alone, so a consumer that was to receive again has done so.
 */
const settled = () => new Promise<void>((r) => setImmediate(r));

/** Jobs "a" and "b" of sink "s", and a deliverer that holds "a" until `release` is called. */
async function twoJobsFirstHeld() {
  const queue = createMemoryQueue<DeliveryJob>({ now: () => 0 });
  await queue.send([
    { id: "a", body: sessionEnd("a"), group: "s" },
    { id: "b", body: sessionEnd("b"), group: "s" },
  ]);
  let release: () => void = () => undefined;
  const held = new Promise<void>((r) => {
    release = r;
  });
  const delivered: string[] = [];
  const started: string[] = [];
  const deliverer = {
    deliver: async (j: DeliveryJob) => {
      started.push(j.id);
      if (j.id === "a") await held;
      delivered.push(j.id);
      return { kind: "ack" as const };
    },
  };
  return { queue, started, delivered, deliverer, release: () => release() };
}

describe("startConsumer", () => {
  it("keeps consuming when the queue cannot record an outcome, and logs it", async () => {
    let now = 0;
    const queue = createMemoryQueue<DeliveryJob>({ now: () => now });
    await queue.send([
      { id: "a", body: sessionEnd("a") },
      { id: "b", body: sessionEnd("b") },
    ]);
    const realAck = queue.ack.bind(queue);
    let failed = false;
    queue.ack = async (message) => {
      if (!failed) {
        failed = true;
        throw new Error("SQLITE_BUSY");
      }
      return realAck(message);
    };
    const logs: { msg: string }[] = [];
    const delivered: string[] = [];
    const consumer = startConsumer(
      { queue, deliverer: accepting(delivered), logger: { log: (_l, msg) => logs.push({ msg }) } },
      { batchSize: 1, idleMs: 5, visibilityMs: 1000 },
    );
    // "a" is delivered and its ack fails; "b" goes on. The lease of "a" expires: it comes back.
    await until(() => delivered.length === 2);
    expect(delivered).toEqual(["a", "b"]);
    now = 2000;
    await until(() => delivered.length === 3);
    await consumer.stop();
    expect(logs.some((l) => l.msg === "could not settle a delivery job; it will be redelivered")).toBe(true);
    expect(delivered).toEqual(["a", "b", "a"]);
    expect(await queue.receive(10, 1000)).toEqual([]);
  });

  it("looks at once when poked instead of waiting out its idle poll, also when poked mid-receive", async () => {
    const queue = createMemoryQueue<DeliveryJob>({ now: () => 0 });
    const delivered: string[] = [];
    let receives = 0;
    const realReceive = queue.receive.bind(queue);
    let duringReceive: (() => void) | undefined;
    queue.receive = async (...args) => {
      receives += 1;
      const got = await realReceive(...args);
      duringReceive?.();
      duringReceive = undefined;
      return got;
    };
    const consumer = startConsumer(
      { queue, deliverer: accepting(delivered), logger: { log: () => undefined } },
      // An idle poll far longer than the test: only a poke can make it look again.
      { batchSize: 4, idleMs: 60_000, visibilityMs: 1000 },
    );
    await until(() => receives >= 1);
    await queue.send([{ id: "a", body: sessionEnd("a") }]);
    consumer.poke();
    await until(() => delivered.length === 1);
    expect(delivered).toEqual(["a"]);

    // A job queued (and poked) while a receive runs is not left for the next idle poll either.
    // The consumer is idle now: the receive that brought "a" came back short.
    await settled();
    expect(receives).toBe(2);
    duringReceive = () => {
      void queue.send([{ id: "b", body: sessionEnd("b") }]).then(() => consumer.poke());
    };
    consumer.poke();
    await until(() => delivered.length === 2);
    await consumer.stop();
    expect(delivered).toEqual(["a", "b"]);
  });

  it("does not receive again for each settled job after a receive that came back short", async () => {
    const queue = createMemoryQueue<DeliveryJob>({ now: () => 0 });
    await queue.send([
      { id: "a", body: sessionEnd("a") },
      { id: "b", body: sessionEnd("b") },
    ]);
    let receives = 0;
    const realReceive = queue.receive.bind(queue);
    queue.receive = (...args) => {
      receives += 1;
      return realReceive(...args);
    };
    const acked: string[] = [];
    const realAck = queue.ack.bind(queue);
    queue.ack = async (message) => {
      const done = await realAck(message);
      acked.push(message.id);
      return done;
    };
    const delivered: string[] = [];
    const consumer = startConsumer(
      { queue, deliverer: accepting(delivered), logger: { log: () => undefined } },
      { batchSize: 10, perSink: 10, idleMs: 60_000, visibilityMs: 1000 },
    );
    // Both settled, and a turn for a receive each freed slot would have started.
    await until(() => acked.length === 2);
    await settled();
    // One receive took both jobs (2 of 10 asked): nothing else was due, so the two freed slots
    // waited for a poke or the idle poll instead of asking the queue twice more for nothing.
    expect(delivered).toEqual(["a", "b"]);
    expect(acked).toEqual(["a", "b"]);
    expect(receives).toBe(1);
    consumer.poke();
    await until(() => receives === 2);
    await settled();
    expect(receives).toBe(2);
    await consumer.stop();
  });

  it("receives again when a slot of a sink at its cap is freed, even after a short receive", async () => {
    const { queue, started, delivered, deliverer, release } = await twoJobsFirstHeld();
    const consumer = startConsumer(
      { queue, deliverer, logger: { log: () => undefined } },
      // Sink "s" may hold one slot: "b" is skipped while "a" is in flight, so that receive is
      // short. Only the freed slot of the sink at its cap can bring "b" before the idle poll.
      { batchSize: 4, perSink: 1, idleMs: 60_000, visibilityMs: 1000 },
    );
    await until(() => started.length === 1);
    await settled();
    expect(started).toEqual(["a"]);
    expect(delivered).toEqual([]);
    release();
    await until(() => delivered.length === 2);
    expect(started).toEqual(["a", "b"]);
    expect(delivered).toEqual(["a", "b"]);
    await consumer.stop();
  });

  it("does not lose a slot freed while a receive that skipped its sink was running", async () => {
    const { queue, delivered, deliverer, release } = await twoJobsFirstHeld();
    const realReceive = queue.receive.bind(queue);
    let receives = 0;
    queue.receive = async (...args) => {
      receives += 1;
      // The second receive skips "s" (at its cap with "a"); "a" settles while it runs.
      if (receives === 2) {
        release();
        await until(() => delivered.includes("a"));
        await settled();
      }
      return realReceive(...args);
    };
    const consumer = startConsumer(
      { queue, deliverer, logger: { log: () => undefined } },
      { batchSize: 2, perSink: 1, idleMs: 60_000, visibilityMs: 1000 },
    );
    await until(() => delivered.length === 2);
    expect(delivered).toEqual(["a", "b"]);
    await consumer.stop();
  });

  it("dead-letters a message that is not a job, as stored, and goes on with the next, never crashing", async () => {
    const queue = createMemoryQueue<DeliveryJob>({ now: () => 0 });
    // An envelope from another producer: no notification in it.
    await queue.send([
      { id: "broken", body: { id: "broken", sink: "s" } as unknown as DeliveryJob },
      { id: "ok", body: stopJob("ok") },
    ]);
    const logs: { msg: string }[] = [];
    const delivered: string[] = [];
    const consumer = startConsumer(
      { queue, deliverer: accepting(delivered), logger: { log: (_l, msg) => logs.push({ msg }) } },
      { batchSize: 2, idleMs: 5, visibilityMs: 60_000 },
    );
    await until(() => delivered.includes("ok"));
    await consumer.stop();
    // The message that is no job never reached the deliverer.
    expect(delivered).toEqual(["ok"]);
    // Redelivered, it would come back with every lease, its attempts growing without end.
    expect(logs.map((l) => l.msg)).toContain("delivery dead-lettered");
    const dead = await queue.listDead(10);
    // Never sent: no attempt (it once said 1).
    expect(dead).toEqual([
      expect.objectContaining({
        id: "broken",
        attempts: 0,
        error: expect.stringMatching(/is not a delivery job/),
      }),
    ]);
    expect(await queue.receive(10, 60_000)).toEqual([]);
  });

  it("keeps consuming when the dead letter of a message that is no job fails, and dead-letters it when it is back", async () => {
    // Outside a delivery's settle, so only handle's catch keeps this rejection from going unhandled.
    let now = 0;
    const queue = createMemoryQueue<DeliveryJob>({ now: () => now });
    await queue.send([
      { id: "broken", body: { id: "broken", sink: "s" } as unknown as DeliveryJob },
      { id: "ok", body: stopJob("ok") },
    ]);
    const realDeadLetter = queue.deadLetter.bind(queue);
    let failed = false;
    queue.deadLetter = async (message, error) => {
      if (!failed) {
        failed = true;
        throw new Error("SQLITE_BUSY");
      }
      return realDeadLetter(message, error);
    };
    const logs: { msg: string; fields: Record<string, unknown> | undefined }[] = [];
    const delivered: string[] = [];
    const consumer = startConsumer(
      {
        queue,
        deliverer: accepting(delivered),
        logger: { log: (_l, msg, fields) => logs.push({ msg, fields }) },
      },
      { batchSize: 1, idleMs: 5, visibilityMs: 1000 },
    );
    await until(() => delivered.includes("ok"));
    expect(logs).toContainEqual({
      msg: "could not handle a delivery job; it will be redelivered",
      fields: { job: "broken", attempts: 1, error: "SQLITE_BUSY" },
    });
    // Its lease runs out: back, it is dead-lettered as stored.
    now = 2000;
    await until(async () => (await queue.listDead(10)).length === 1);
    await consumer.stop();
    expect(delivered).toEqual(["ok"]);
    expect(await queue.listDead(10)).toEqual([
      expect.objectContaining({
        id: "broken",
        attempts: 0,
        error: expect.stringMatching(/not a delivery job/),
      }),
    ]);
    expect(await queue.receive(10, 1000)).toEqual([]);
  });

  it("keeps consuming when a message already dead-lettered cannot be removed when it is back, and removes it the next time", async () => {
    // SQS down past a visibility timeout: the dead letter went in, its delete failed, and the
    // delete fails again when the message is back; outside a settle, only handle's catch holds it.
    let now = 0;
    const queue = createMemoryQueue<DeliveryJob>({ now: () => now });
    await queue.send([
      { id: "a", body: stopJob("a") },
      { id: "b", body: stopJob("b") },
    ]);
    queue.deadLetter = async () => {
      throw new CopySentError("dead letter", new Error("socket hang up"));
    };
    const realAck = queue.ack.bind(queue);
    let deletes = 0;
    queue.ack = async (message) => {
      if (message.id === "a" && deletes++ === 0) throw new Error("socket hang up");
      return realAck(message);
    };
    const logs: { msg: string; fields: Record<string, unknown> | undefined }[] = [];
    const sent: string[] = [];
    const deliverer = noting(sent, () =>
      sent.length === 1 ? { kind: "dead", reason: "HTTP 410" } : { kind: "ack" },
    );
    const consumer = startConsumer(
      { queue, deliverer, logger: { log: (_l, msg, fields) => logs.push({ msg, fields }) } },
      { batchSize: 1, idleMs: 5, visibilityMs: 1000 },
    );
    await until(() => sent.includes("b"));
    now = 2000;
    await until(() => logs.some((l) => l.msg === "could not handle a delivery job; it will be redelivered"));
    expect(logs).toContainEqual({
      msg: "could not handle a delivery job; it will be redelivered",
      fields: { job: "a", attempts: 2, error: "socket hang up" },
    });
    now = 4000;
    await until(() => logs.some((l) => l.msg.startsWith("job already dead-lettered")));
    await consumer.stop();
    // Sent once; the dead letter is not made or counted again.
    expect(sent).toEqual(["a", "b"]);
    expect(logs.filter((l) => l.msg === "delivery dead-lettered")).toHaveLength(1);
    expect(await queue.receive(10, 1000)).toEqual([]);
  });

  it("dead-letters a message that is no job with no attempt on SQLite, also on a later lease", async () => {
    // Its first lease ended unsettled (the process killed, or the dead letter's write failed):
    // leased again, the stored attempts say 2. It was never sent, so its dead letter says 0; it
    // once said 1 (its attempts less this lease).
    const dir = tempDir("consumer-not-a-job");
    let clock = 1_700_000_000_000;
    const queue = createSqliteQueue<DeliveryJob>({ path: join(dir, "queue.sqlite"), now: () => clock });
    try {
      await queue.send([{ id: "broken", body: { id: "broken", sink: "s" } as unknown as DeliveryJob }]);
      expect((await queue.receive(1, 1000)).map((m) => m.attempts)).toEqual([1]);
      clock += 2000;
      const logs: { msg: string; fields: Record<string, unknown> | undefined }[] = [];
      const consumer = startConsumer(
        {
          queue,
          deliverer: accepting([]),
          logger: { log: (_l, msg, fields) => logs.push({ msg, fields }) },
        },
        { batchSize: 1, idleMs: 5, visibilityMs: 60_000 },
      );
      await until(async () => (await queue.listDead(10)).length === 1);
      await consumer.stop();
      expect(await queue.listDead(10)).toEqual([
        expect.objectContaining({
          id: "broken",
          attempts: 0,
          error: expect.stringMatching(/not a delivery job/),
        }),
      ]);
      expect(logs.find((l) => l.msg === "delivery dead-lettered")?.fields).toMatchObject({ attempts: 0 });
    } finally {
      await queue.close();
    }
  });

  it("retries a deliverer that throws on the default schedule, then dead-letters the job with the error", async () => {
    let now = 0;
    const queue = createMemoryQueue<DeliveryJob>({ now: () => now });
    await queue.send([{ id: "a", body: sessionEnd("a"), group: "s" }]);
    const delays: number[] = [];
    const realRetry = queue.retry.bind(queue);
    queue.retry = async (message, delayMs, error) => {
      delays.push(delayMs);
      const done = await realRetry(message, delayMs, error);
      // The clock moves to when the retry falls due, and no further.
      now += delayMs;
      return done;
    };
    const tries: [string, number][] = [];
    const consumer = startConsumer(
      {
        queue,
        deliverer: {
          deliver: async (j, attempts) => {
            tries.push([j.id, attempts]);
            throw new Error("a defect");
          },
        },
        logger: { log: () => undefined },
      },
      { batchSize: 1, idleMs: 1, visibilityMs: 60_000 },
    );
    await until(async () => (await queue.listDead()).length === 1);
    await consumer.stop();
    // Tried once, then once more at each retry of the schedule: attempts 1 to 8.
    expect(tries).toEqual(
      Array.from({ length: DEFAULT_RETRY_SCHEDULE_SECONDS.length + 1 }, (_, i): [string, number] => [
        "a",
        i + 1,
      ]),
    );
    expect(delays).toEqual(DEFAULT_RETRY_SCHEDULE_SECONDS.map((s) => s * 1000));
    expect(await queue.listDead()).toEqual([
      expect.objectContaining({
        id: "a",
        error: `gave up after ${DEFAULT_RETRY_SCHEDULE_SECONDS.length + 1} attempts: internal error: a defect`,
      }),
    ]);
  });

  it("masks a thrown error's secrets in the dead letter it stores and in the log: the policy's own and a URL's token", async () => {
    // A sink call that throws (a defect: the egress port never should) with a message quoting the
    // sink's token, which the policy reads from the environment, and a URL with a token in it.
    const token = "Zq8vT3mK9pLx2RwN7cYd";
    const policy = await policyFrom(
      {
        version: 1,
        rules: [],
        sinks: { ci: { type: "github-dispatch", repo: "org/app", eventType: "hook", token: "env:GH_TOKEN" } },
      },
      { GH_TOKEN: token },
    );
    let clock = 1_000_000;
    const queue = createSqliteQueue<DeliveryJob>({
      path: join(tempDir("consumer-thrown"), "queue.sqlite"),
      now: () => clock,
    });
    await queue.send([{ id: "evt_1.ci", body: endedJob("evt_1.ci", "evt_1", "ci"), group: "ci" }]);
    const realRetry = queue.retry.bind(queue);
    queue.retry = async (message, delayMs, error) => {
      const done = await realRetry(message, delayMs, error);
      // The clock moves to when the retry falls due, and no further.
      clock += delayMs;
      return done;
    };
    const calls: string[] = [];
    const deliverer = createDeliverer({
      policy: () => policy,
      egress: async (request) => {
        calls.push(request.url);
        throw new Error(
          `POST https://hooks.example.com/in?token=a1b2c3d4e5f6g7h8 with Bearer-less ${token} failed`,
        );
      },
      env: (name) => (name === "GH_TOKEN" ? token : undefined),
      clock: { now: () => clock, monotonic: () => performance.now() },
      random: () => 0.5,
    });
    const logged: string[] = [];
    const consumer = startConsumer(
      {
        queue,
        deliverer,
        logger: { log: (_level, msg, fields) => logged.push(JSON.stringify({ msg, ...fields })) },
      },
      { batchSize: 1, idleMs: 1, visibilityMs: 60_000 },
    );
    try {
      await until(async () => (await queue.listDead()).length === 1);
    } finally {
      await consumer.stop();
    }
    const [dead] = await queue.listDead();
    await queue.close();
    // The sink was called at the first try and at each retry of the schedule.
    expect(calls).toEqual(
      Array(DEFAULT_RETRY_SCHEDULE_SECONDS.length + 1).fill(
        "https://api.github.com/repos/org/app/dispatches",
      ),
    );
    expect(dead?.error).toBe(
      `gave up after ${DEFAULT_RETRY_SCHEDULE_SECONDS.length + 1} attempts: internal error: POST https://hooks.example.com/in?token=[masked] with Bearer-less [masked] failed`,
    );
    expect(logged.some((line) => line.includes("delivery dead-lettered"))).toBe(true);
    for (const line of logged) {
      expect(line).not.toContain(token);
      expect(line).not.toContain("a1b2c3d4e5f6g7h8");
    }
  });

  it("keeps at most batchSize jobs in flight, and fills a freed slot without waiting for the rest", async () => {
    const queue = createMemoryQueue<DeliveryJob>({ now: () => 0 });
    await queue.send(
      ["hang-1", "hang-2", "quick-1", "quick-2", "quick-3"].map((id) => ({ id, body: stopJob(id) })),
    );
    let inFlight = 0;
    let most = 0;
    const delivered: string[] = [];
    const release: (() => void)[] = [];
    const consumer = startConsumer(
      {
        queue,
        deliverer: {
          deliver: async (j) => {
            inFlight++;
            most = Math.max(most, inFlight);
            if (j.id.startsWith("hang")) await new Promise<void>((r) => release.push(r));
            inFlight--;
            delivered.push(j.id);
            return { kind: "ack" };
          },
        },
        logger: { log: () => undefined },
      },
      { batchSize: 3, idleMs: 5, visibilityMs: 60_000 },
    );
    await until(() => delivered.length === 3);
    // Two hanging jobs hold two slots; the three quick ones went through the third.
    expect([...delivered].sort()).toEqual(["quick-1", "quick-2", "quick-3"]);
    expect(most).toBeLessThanOrEqual(3);
    for (const r of release) r();
    await consumer.stop();
    expect([...delivered].sort()).toEqual(["hang-1", "hang-2", "quick-1", "quick-2", "quick-3"]);
  });

  it("lets one sink hold at most perSink slots, so a hanging sink never stops the others", async () => {
    const queue = createMemoryQueue<DeliveryJob>({ now: () => 0 });
    // The hanging sink's jobs come first, more of them than there are slots.
    const slow = Array.from({ length: 6 }, (_, i) => `slow-${i}`);
    const fast = ["fast-0", "fast-1", "fast-2"];
    await queue.send([
      ...slow.map((id) => ({ id, body: stopJob(id, "slow"), group: "slow" })),
      ...fast.map((id) => ({ id, body: stopJob(id, "fast"), group: "fast" })),
    ]);
    const hanging = new Map<string, number>();
    let mostSlow = 0;
    const delivered: string[] = [];
    const release: (() => void)[] = [];
    const consumer = startConsumer(
      {
        queue,
        deliverer: {
          deliver: async (j) => {
            if (j.sink === "slow") {
              hanging.set("slow", (hanging.get("slow") ?? 0) + 1);
              mostSlow = Math.max(mostSlow, hanging.get("slow") ?? 0);
              await new Promise<void>((r) => release.push(r));
              hanging.set("slow", (hanging.get("slow") ?? 1) - 1);
            }
            delivered.push(j.id);
            return { kind: "ack" };
          },
        },
        logger: { log: () => undefined },
      },
      { batchSize: 4, perSink: 2, idleMs: 5, visibilityMs: 60_000 },
    );
    await until(() => delivered.length === fast.length);
    expect([...delivered].sort()).toEqual(fast);
    expect(mostSlow).toBe(2);
    // Released one at a time, the hanging sink's jobs all go through, never more than 2 at once.
    for (const id of slow) {
      await until(() => release.length > 0);
      release.shift()?.();
      await until(() => delivered.includes(id));
    }
    await consumer.stop();
    expect(delivered).toEqual([...fast.sort(), ...slow]);
    expect(mostSlow).toBe(2);
  });

  it("asks a queue that cannot skip groups for every free slot, and a queue that can for one sink's room", async () => {
    const run = async (filters: boolean) => {
      const inner = createMemoryQueue<DeliveryJob>({ now: () => 0 });
      await inner.send(
        Array.from({ length: 12 }, (_, n) => ({ id: `j-${n}`, body: stopJob(`j-${n}`), group: "s" })),
      );
      const asked: number[] = [];
      const queue = {
        ...inner,
        // As SQS does when it cannot filter: skipGroups ignored, and the queue says so.
        skipsGroups: filters,
        receive: (max: number, visibilityMs: number, skipGroups?: readonly string[]) => {
          asked.push(max);
          return inner.receive(max, visibilityMs, filters ? skipGroups : []);
        },
      };
      const release: (() => void)[] = [];
      const delivered: string[] = [];
      const consumer = startConsumer(
        {
          queue,
          deliverer: {
            deliver: async (j) => {
              await new Promise<void>((r) => release.push(r));
              delivered.push(j.id);
              return { kind: "ack" };
            },
          },
          logger: { log: () => undefined },
        },
        { batchSize: 4, perSink: 2, idleMs: 5, visibilityMs: 60_000 },
      );
      // Whatever is in flight is let go, until all twelve went through.
      await until(() => {
        for (const r of release.splice(0)) r();
        return delivered.length === 12;
      });
      await consumer.stop();
      expect(delivered).toEqual(Array.from({ length: 12 }, (_, n) => `j-${n}`));
      return asked;
    };
    // A queue that can skip a sink at its cap is asked for that sink's room; one that cannot, for all 4 slots.
    expect(await run(false)).toContain(4);
    expect(Math.max(...(await run(true)))).toBe(2);
  });

  it("keeps one sink's cap on SQLite for a replayed dead letter of a saturated sink", async () => {
    const dir = tempDir("consumer-cap");
    const queue = createSqliteQueue<DeliveryJob>({ path: join(dir, "queue.sqlite") });
    let consumer: ReturnType<typeof startConsumer> | undefined;
    const held: (() => void)[] = [];
    // Set when the test ends, pass or fail: X's deliveries stop holding, so stop() can drain.
    let finished = false;
    try {
      // A dead letter of sink X: replayed, it is queued again in its group.
      await queue.send([{ id: "dead-x", body: stopJob("dead-x", "X"), group: "X" }]);
      const [dead] = await queue.receive(1, 60_000);
      if (!dead) throw new Error("no job to dead-letter");
      await queue.deadLetter(dead, "boom");
      await queue.send([0, 1].map((n) => ({ id: `x-${n}`, body: stopJob(`x-${n}`, "X"), group: "X" })));
      const started: string[] = [];
      let yInFlight = 0;
      let yMost = 0;
      let yDone = 0;
      consumer = startConsumer(
        {
          queue,
          deliverer: {
            deliver: async (j) => {
              started.push(j.id);
              if (j.sink === "X") {
                if (!finished) await new Promise<void>((r) => held.push(r));
                return { kind: "ack" };
              }
              yMost = Math.max(yMost, ++yInFlight);
              await new Promise((r) => setTimeout(r, 10));
              yInFlight--;
              yDone++;
              return { kind: "ack" };
            },
          },
          logger: { log: () => undefined },
        },
        { batchSize: 8, perSink: 2, idleMs: 5, visibilityMs: 60_000 },
      );
      const until = async (done: () => boolean) => {
        for (let i = 0; i < 1000 && !done(); i++) await new Promise((r) => setTimeout(r, 5));
        expect(done()).toBe(true);
      };
      await until(() => started.filter((id) => id.startsWith("x-")).length === 2);
      // X is at its cap: the replayed job waits for one of X's slots, and Y gets the rest.
      expect(await queue.replayDead()).toEqual({ count: 1, missing: [] });
      await queue.send(
        [0, 1, 2, 3, 4, 5].map((n) => ({ id: `y-${n}`, body: stopJob(`y-${n}`, "Y"), group: "Y" })),
      );
      await until(() => yDone === 6);
      expect(started).not.toContain("dead-x");
      for (const release of held.splice(0)) release();
      await until(() => started.includes("dead-x"));
      expect(yMost).toBe(2);
    } finally {
      finished = true;
      for (const release of held.splice(0)) release();
      await consumer?.stop();
      await queue.close();
    }
  });
});

describe("startConsumer on a lease that ran out", () => {
  it.each([
    ["ack", { kind: "ack" }],
    ["retry", { kind: "retry", delayMs: 5000, reason: "HTTP 500" }],
    ["dead", { kind: "dead", reason: "HTTP 410" }],
  ] as const)(
    "counts nothing for an outcome (%s) the SQLite queue did not record, and logs the stale receipt once",
    async (_kind, outcome) => {
      // A hunt of the queue: a delivery that outlived its lease was acked (or retried) with the old
      // receipt, which changed nothing in SQLite, yet counted as delivered (or retried).
      const dir = tempDir("consumer-stale");
      let clock = 1_700_000_000_000;
      const queue = createSqliteQueue<DeliveryJob>({ path: join(dir, "queue.sqlite"), now: () => clock });
      const counted: string[] = [];
      const logs: { msg: string; fields: Record<string, unknown> | undefined }[] = [];
      let release: () => void = () => undefined;
      const held = new Promise<void>((r) => {
        release = r;
      });
      let started = 0;
      let consumer: ReturnType<typeof startConsumer> | undefined;
      const until = async (done: () => boolean) => {
        for (let i = 0; i < 1000 && !done(); i++) await new Promise((r) => setTimeout(r, 5));
        expect(done()).toBe(true);
      };
      try {
        await queue.send([{ id: "a", body: sessionEnd("a"), group: "s" }]);
        consumer = startConsumer(
          {
            queue,
            deliverer: {
              deliver: async () => {
                started++;
                await held;
                return outcome;
              },
            },
            logger: { log: (_level, msg, fields) => logs.push({ msg, fields }) },
            metrics: { increment: (name) => counted.push(name) },
          },
          // One slot: the consumer does not lease the job again itself while it delivers it.
          { batchSize: 1, idleMs: 5, visibilityMs: 1000 },
        );
        await until(() => started === 1);
        // The lease runs out mid-delivery and the job is leased again under a new receipt.
        clock += 1000;
        const [again] = await queue.receive(1, 60_000);
        expect(again).toMatchObject({ id: "a", attempts: 2 });
        release();
        await until(() => logs.length > 0);
        await consumer.stop();
        consumer = undefined;
        expect(counted).toEqual([]);
        expect(logs).toEqual([
          {
            msg: "the job's lease ran out before its outcome was recorded; the newer delivery's stands",
            fields: expect.objectContaining({ job: "a", sink: "s", attempts: 1, outcome: outcome.kind }),
          },
        ]);
        // The newer lease still holds, and nothing was dead-lettered.
        expect(await queue.listDead()).toEqual([]);
        if (!again) throw new Error("nothing leased again");
        expect(await queue.ack(again)).toBe(true);
      } finally {
        release();
        await consumer?.stop();
        await queue.close();
      }
    },
  );

  describe("on a SQLite queue file, a job held for its sink's rate limit", () => {
    const jobFor = (id: string) => endedJob(`${id}.hook`, id, "hook");

    /**
     * A real SQLite file, the real deliverer and consumer; the sink answers 429 (Retry-After 1 s)
     * to the jobs of event "trigger", which the test sends past the queue to start a rate limit,
     * and 500 to the rest. The queue and the deliverer share one clock the test moves.
     */
    async function setUp(schedule: readonly number[]) {
      const dir = tempDir("consumer-hold");
      let clock = 1_700_000_000_000;
      const queue = createSqliteQueue<DeliveryJob>({ path: join(dir, "queue.sqlite"), now: () => clock });
      const policy = await policyFrom({
        version: 1,
        rules: [],
        sinks: {
          hook: {
            type: "webhook",
            url: "https://sink.hookgate.test/in",
            retryScheduleSeconds: [...schedule],
          },
        },
      });
      const sends: string[] = [];
      const deliverer = createDeliverer({
        policy: () => policy,
        egress: async (request) => {
          // The event's id is the webhook-id.
          const trigger = request.headers?.["webhook-id"] === "trigger";
          if (!trigger) sends.push("job");
          return trigger
            ? { ok: true, value: { status: 429, headers: { "retry-after": "1" }, body: "slow down" } }
            : { ok: true, value: { status: 500, headers: {}, body: "broken" } };
        },
        env: () => undefined,
        clock: { now: () => clock, monotonic: () => clock },
        random: () => 0.5,
      });
      const logs: { msg: string; fields: Record<string, unknown> | undefined }[] = [];
      let consumer: ReturnType<typeof startConsumer> | undefined;
      const start = () => {
        consumer = startConsumer(
          { queue, deliverer, logger: { log: (_level, msg, fields) => logs.push({ msg, fields }) } },
          { batchSize: 1, idleMs: 5 },
        );
      };
      const until = async (done: () => boolean) => {
        for (let i = 0; i < 2000 && !done(); i++) await new Promise((r) => setTimeout(r, 5));
        expect(done()).toBe(true);
      };
      /** Lines about the job, and a rate limit the test starts (a send of "trigger"'s job). */
      const about = () => logs.filter((l) => l.fields?.job === "evt.hook");
      const rateLimit = () => deliverer.deliver(jobFor("trigger"), 1);
      return {
        queue,
        sends,
        about,
        until,
        rateLimit,
        advance: (ms: number) => {
          clock += ms;
        },
        start,
        logs,
        async close() {
          await consumer?.stop();
          await queue.close();
        },
      };
    }

    it("spends no attempt: held twice, then failing, it is dead-lettered after the schedule's sends", async () => {
      // RELIABILITY.md problem 9: each hold counted as an attempt, so a sink with one retry held
      // twice was dead-lettered "gave up after 3 attempts" after one send.
      const t = await setUp([0]);
      try {
        await t.rateLimit();
        await t.queue.send([{ id: "evt.hook", body: jobFor("evt"), group: "hook" }]);
        t.start();
        await t.until(() => t.about().length === 1);
        // The rate limit starts again just before the hold ends: held a second time.
        t.advance(1_050);
        await t.rateLimit();
        t.advance(50);
        await t.until(() => t.about().length === 2);
        expect(t.sends).toEqual([]);
        t.advance(1_100);
        await t.until(
          () => (t.about().at(-1)?.fields?.reason as string | undefined)?.startsWith("gave up") ?? false,
        );
        expect(t.sends).toEqual(["job", "job"]);
        expect((await t.queue.listDead()).map((d) => [d.id, d.attempts, d.error])).toEqual([
          ["evt.hook", 2, "gave up after 2 attempts: HTTP 500: broken"],
        ]);
      } finally {
        await t.close();
      }
    });

    it("logs each hold with the attempts the job has after it: its sends, not this receive", async () => {
      // Before, the line gave the attempts from before the hold, this receive
      // counted (1 for a job never sent), where the queue had given that attempt back.
      // Its one retry 1 s after a failure (no jitter: random is 0.5).
      const t = await setUp([1, 1]);
      try {
        await t.rateLimit();
        await t.queue.send([{ id: "evt.hook", body: jobFor("evt"), group: "hook" }]);
        t.start();
        await t.until(() => t.about().length === 1);
        expect(t.about()[0]).toMatchObject({
          msg: "delivery held; not sent",
          fields: expect.objectContaining({ attempts: 0, holds: 1 }),
        });
        // Sent once and failed (a retry due 1 s later); a rate limit starts before it is due,
        // and holds it again: one send.
        t.advance(1_100);
        await t.until(() => t.about().length === 2);
        expect(t.about()[1]?.msg).toBe("delivery failed; will retry");
        t.advance(500);
        await t.rateLimit();
        t.advance(600);
        await t.until(() => t.about().length === 3);
        expect(t.sends).toEqual(["job"]);
        expect(t.about()[2]).toMatchObject({
          msg: "delivery held; not sent",
          fields: expect.objectContaining({ attempts: 1, holds: 2 }),
        });
      } finally {
        await t.close();
      }
    });

    it(`is dead-lettered with why once it has been held ${MAX_HOLDS} times`, async () => {
      const t = await setUp([0]);
      try {
        await t.queue.send([{ id: "evt.hook", body: jobFor("evt"), group: "hook" }]);
        // Held MAX_HOLDS times through the queue itself (each a lease given back as a hold).
        for (let i = 0; i < MAX_HOLDS; i++) {
          const [leased] = await t.queue.receive(1, 60_000);
          if (!leased) throw new Error("nothing leased");
          await t.queue.hold(leased, 0, "not sent");
        }
        await t.rateLimit();
        t.start();
        await t.until(() => t.about().length === 1);
        expect(t.sends).toEqual([]);
        // Before, the dead letter said 1 attempt, its last receive, with no send at all.
        expect((await t.queue.listDead()).map((d) => [d.id, d.attempts, d.error])).toEqual([
          [
            "evt.hook",
            0,
            `gave up after ${MAX_HOLDS} holds without a send: not sent: the sink asked to wait 1 s more after a rate limit`,
          ],
        ]);
      } finally {
        await t.close();
      }
    });

    it("dead-letters a job whose sink left the policy with its sends as attempts: none", async () => {
      // Before, a job dead-lettered before anything was sent (its sink gone, a token
      // no header can carry) counted that receive as an attempt: 1 for a job never sent.
      const t = await setUp([0]);
      try {
        await t.queue.send([{ id: "evt.gone", body: { ...jobFor("evt"), id: "evt.gone", sink: "gone" } }]);
        t.start();
        await t.until(() => t.logs.some((l) => l.msg === "delivery dead-lettered"));
        expect(t.sends).toEqual([]);
        expect(t.logs.find((l) => l.msg === "delivery dead-lettered")?.fields).toMatchObject({ attempts: 0 });
        expect((await t.queue.listDead()).map((d) => [d.id, d.attempts, d.error])).toEqual([
          ["evt.gone", 0, 'sink "gone" is no longer in the policy'],
        ]);
      } finally {
        await t.close();
      }
    });
  });
});

/**
 * Queue "jobs" and its DLQ on local-aws-sqs on loopback, and a client of it; `close` ends the queue
 * made of them, the client and the server.
 */
async function loopbackSqs() {
  const server = await createSqsServer({ port: 0, hostname: "127.0.0.1" });
  const client = createSqsClientForLocal(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
  const url = async (name: string) =>
    (await client.send(new CreateQueueCommand({ QueueName: name }))).QueueUrl ?? "";
  return {
    client,
    queueUrl: await url("jobs"),
    deadLetterQueueUrl: await url("dlq"),
    async close(queue: { close(): Promise<void> }) {
      await queue.close();
      client.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/**
 * A jobs queue and its DLQ on a loopback SQS server whose first DeleteMessageBatch fails, through
 * the SDK's middleware: refused before SQS sees it, or carried out by SQS with its answer lost.
 */
async function sqsWhoseFirstDeleteFails(how: "refused" | "answerLost") {
  const { client, queueUrl, deadLetterQueueUrl, close } = await loopbackSqs();
  let deletes = 0;
  client.middlewareStack.add(
    (next, context) => async (args) => {
      const first = context.commandName === "DeleteMessageBatchCommand" && ++deletes === 1;
      const hangUp = () => Object.assign(new Error("socket hang up"), { code: "ECONNRESET" });
      if (first && how === "refused") throw hangUp();
      const result = await next(args);
      if (first) throw hangUp();
      return result;
    },
    { step: "initialize", name: "failFirstDelete" },
  );
  const queue = createSqsQueue<DeliveryJob>({ client, queueUrl, deadLetterQueueUrl });
  return { queue, close: () => close(queue) };
}

type Line = { level: string; msg: string; fields: Record<string, unknown> };

/**
 * A consumer (one slot, a 1 s visibility) of job "a" of sink "s" on `sqsWhoseFirstDeleteFails(how)`,
 * for `check` to watch, with what it logged and counted; stopped, and SQS closed, after `check`.
 */
async function consumeOnSqs(
  how: "refused" | "answerLost",
  deliverer: Deliverer,
  check: (run: {
    queue: Awaited<ReturnType<typeof sqsWhoseFirstDeleteFails>>["queue"];
    consumer: ReturnType<typeof startConsumer>;
    lines: Line[];
    counted: string[];
    until: (done: () => boolean) => Promise<void>;
  }) => Promise<void>,
) {
  const { queue, close } = await sqsWhoseFirstDeleteFails(how);
  const lines: Line[] = [];
  const counted: string[] = [];
  let consumer: ReturnType<typeof startConsumer> | undefined;
  const until = async (done: () => boolean) => {
    for (let i = 0; i < 1000 && !done(); i++) await new Promise((r) => setTimeout(r, 10));
  };
  try {
    await queue.send([{ id: "a", body: sessionEnd("a"), group: "s" }]);
    consumer = startConsumer(
      {
        queue,
        deliverer,
        logger: { log: (level, msg, fields = {}) => lines.push({ level, msg, fields }) },
        metrics: { increment: (name) => counted.push(name) },
      },
      { batchSize: 1, idleMs: 20, visibilityMs: 1000 },
    );
    await check({ queue, consumer, lines, counted, until });
  } finally {
    await consumer?.stop();
    await close();
  }
}

describe("startConsumer on SQS", () => {
  it("removes a job whose dead letter went in but whose delete failed when it comes back, unsent and not dead-lettered twice", {
    timeout: 20_000,
  }, async () => {
    // Before, the consumer logged the delete's error as a failed settle, so the message came
    // back after its visibility timeout, was sent to its sink again and got a second dead letter.
    // Real SQS on loopback; only the delete fails, through the SDK's middleware.
    const sent: string[] = [];
    const deliverer = noting(sent, () => ({ kind: "dead", reason: "HTTP 410" }));
    await consumeOnSqs("refused", deliverer, async ({ queue, consumer, lines, counted, until }) => {
      // Back after its 1 s visibility: removed, or (before the fix) delivered again.
      await until(() => sent.length > 1 || lines.some((l) => l.msg.startsWith("job already dead-lettered")));
      await consumer.stop();
      expect(sent).toEqual(["a"]);
      expect(lines).toContainEqual({
        level: "warn",
        msg: "job already dead-lettered; removed from the queue, not delivered again",
        fields: expect.objectContaining({ job: "a", attempts: 2 }),
      });
      expect((await queue.listDead()).map((d) => d.id)).toEqual(["a"]);
      expect(await queue.receive(10, 1000)).toEqual([]);
      expect(lines.filter((l) => l.level === "error")).toEqual([
        {
          level: "error",
          msg: "delivery dead-lettered",
          fields: expect.objectContaining({
            job: "a",
            reason: "HTTP 410",
            deleteFailed: expect.stringMatching(/socket hang up/),
          }),
        },
      ]);
      expect(counted.filter((n) => n === "hookgate_dead_lettered_total")).toHaveLength(1);
    });
  });
});

describe("startConsumer on SQS, a held job", () => {
  it("removes a held job whose copy went in but whose delete failed when it comes back, and sends it once", {
    timeout: 20_000,
  }, async () => {
    // Before (RELIABILITY.md problem 9), the consumer logged the delete's error as a failed
    // settle, so the message came back after its visibility timeout beside its held copy, and the
    // job was sent twice. Real SQS on loopback; only the delete fails, through the SDK's middleware.
    const tries: number[] = [];
    const sent: string[] = [];
    const deliverer: Deliverer = {
      // Held unsent the first time (its copy due at once), sent on every later try.
      deliver: async (j, _attempts, { holds = 0 } = {}) => {
        tries.push(holds);
        if (tries.length === 1)
          return {
            kind: "retry" as const,
            delayMs: 0,
            reason: "not sent: rate limit",
            unsent: true as const,
          };
        sent.push(j.id);
        return { kind: "ack" as const };
      },
    };
    await consumeOnSqs("refused", deliverer, async ({ queue, consumer, lines, until }) => {
      // The old message is back after its 1 s visibility: removed, or (before the fix) sent again.
      await until(() => sent.length > 1 || lines.some((l) => l.msg.startsWith("job already held")));
      await consumer.stop();
      // The copy carried its hold; the old message was never delivered again.
      expect(tries).toEqual([0, 1]);
      expect(sent).toEqual(["a"]);
      expect(lines).toContainEqual({
        level: "warn",
        msg: "job already held; removed from the queue, not delivered again",
        fields: expect.objectContaining({ job: "a" }),
      });
      expect(lines).toContainEqual({
        level: "info",
        msg: "delivery held; not sent",
        fields: expect.objectContaining({ job: "a", deleteFailed: expect.stringMatching(/socket hang up/) }),
      });
      expect(lines.filter((l) => l.level === "error")).toEqual([]);
      expect(await queue.receive(10, 1000)).toEqual([]);
    });
  });
});

describe("startConsumer on SQS, a replay", () => {
  it("delivers a replayed dead letter whose first delete SQS carried out though its answer was lost", {
    timeout: 20_000,
  }, async () => {
    // Before, the consumer remembered a dead letter whose delete failed by job id,
    // so when SQS had in fact deleted the message (the answer lost on the way back) it never came
    // back, and a `dlq replay` of the job, a new message with the same id, was removed unsent.
    const sent: string[] = [];
    const deliverer = noting(sent, () =>
      sent.length === 1 ? { kind: "dead", reason: "HTTP 410" } : { kind: "ack" },
    );
    await consumeOnSqs("answerLost", deliverer, async ({ queue, consumer, lines, until }) => {
      await until(() => lines.some((l) => l.msg === "delivery dead-lettered"));
      expect(await queue.replayDead(["a"])).toEqual({ count: 1, missing: [] });
      await until(() => sent.length > 1 || lines.some((l) => l.msg.startsWith("job already dead-lettered")));
      await consumer.stop();
      expect(sent).toEqual(["a", "a"]);
      expect(lines.filter((l) => l.msg.startsWith("job already dead-lettered"))).toEqual([]);
    });
  });
});

/**
 * A pull consumer's backend whose next dead letter, or next hold, fails before anything is
 * stored: SQLite (a real file, its clock the test's, the failure a wrapper's SQLITE_BUSY) and SQS
 * (local-aws-sqs on loopback, the failure the SDK's: the request never leaves). `comeBack` ends
 * the lease of a job whose settle failed, so it is received again.
 */
async function settleFailsOnce(kind: "sqlite" | "sqs", what: "dead letter" | "hold") {
  if (kind === "sqlite") {
    let clock = 1_700_000_000_000;
    const queue = createSqliteQueue<DeliveryJob>({
      path: join(tempDir("consumer-unsent"), "queue.sqlite"),
      now: () => clock,
    });
    let failed = false;
    const failOnce = () => {
      if (failed) return;
      failed = true;
      throw new Error("SQLITE_BUSY: database is locked");
    };
    const { deadLetter, hold } = queue;
    if (what === "dead letter")
      queue.deadLetter = async (...args) => {
        failOnce();
        return deadLetter.apply(queue, args);
      };
    else
      queue.hold = async (...args) => {
        failOnce();
        return hold.apply(queue, args);
      };
    return {
      queue,
      comeBack: () => {
        clock += 60_000;
      },
      close: () => queue.close(),
    };
  }
  const { client, queueUrl, deadLetterQueueUrl, close } = await loopbackSqs();
  let failed = false;
  client.middlewareStack.add(
    (next, context) => async (args) => {
      const input = args.input as { QueueUrl?: string };
      const target = what === "dead letter" ? deadLetterQueueUrl : queueUrl;
      if (!failed && context.commandName === "SendMessageCommand" && input.QueueUrl === target) {
        failed = true;
        throw Object.assign(new Error("socket hang up"), { code: "ECONNRESET" });
      }
      return next(args);
    },
    { step: "initialize", name: "failOneSend" },
  );
  const queue = createSqsQueue<DeliveryJob>({ client, queueUrl, deadLetterQueueUrl });
  return {
    queue,
    // Back by itself after the consumer's 1 s visibility.
    comeBack: () => undefined,
    close: () => close(queue),
  };
}

describe.each(["sqlite", "sqs"] as const)(
  "startConsumer on %s, a receive that sent nothing and could not be settled",
  (kind) => {
    const jobFor = (sink: string) => endedJob(`evt.${sink}`, "evt", sink);

    async function run(
      t: Awaited<ReturnType<typeof settleFailsOnce>>,
      deliverer: Deliverer,
      done: (lines: { msg: string; fields: Record<string, unknown> }[]) => boolean,
    ) {
      const lines: { msg: string; fields: Record<string, unknown> }[] = [];
      const consumer = startConsumer(
        {
          queue: t.queue,
          deliverer,
          logger: { log: (_level, msg, fields = {}) => lines.push({ msg, fields }) },
        },
        { batchSize: 1, idleMs: 10, visibilityMs: 1000 },
      );
      const until = async (check: () => boolean) => {
        for (let i = 0; i < 1000 && !check(); i++) await new Promise((r) => setTimeout(r, 10));
        expect(check()).toBe(true);
      };
      try {
        await until(() =>
          lines.some((l) => l.msg === "could not settle a delivery job; it will be redelivered"),
        );
        t.comeBack();
        await until(() => done(lines));
      } finally {
        await consumer.stop();
      }
      return lines;
    }

    it("dead-letters a job whose sink left the policy with no attempt when its first dead letter failed", {
      timeout: 20_000,
    }, async () => {
      // Before, the dead letter's failed send left the message on the queue, and
      // when it came back that receive was counted: the dead letter said 1 attempt, nothing sent.
      const t = await settleFailsOnce(kind, "dead letter");
      try {
        const policy = await policyFrom({
          version: 1,
          rules: [],
          sinks: { other: { type: "webhook", url: "https://sink.hookgate.test/in" } },
        });
        const sends: string[] = [];
        const deliverer = createDeliverer({
          policy: () => policy,
          egress: async (request) => {
            sends.push(request.url);
            return { ok: true, value: { status: 204, headers: {}, body: "" } };
          },
          env: () => undefined,
          clock: { now: () => 0, monotonic: () => 0 },
          random: () => 0.5,
        });
        await t.queue.send([{ id: "evt.gone", body: jobFor("gone"), group: "gone" }]);
        const lines = await run(t, deliverer, (ls) => ls.some((l) => l.msg === "delivery dead-lettered"));
        expect(sends).toEqual([]);
        expect(lines.find((l) => l.msg === "delivery dead-lettered")?.fields).toMatchObject({
          job: "evt.gone",
          attempts: 0,
        });
        expect((await t.queue.listDead()).map((d) => [d.id, d.attempts, d.error])).toEqual([
          ["evt.gone", 0, 'sink "gone" is no longer in the policy'],
        ]);
      } finally {
        await t.close();
      }
    });

    it("counts a hold whose copy failed as no attempt when the job comes back and is sent", {
      timeout: 20_000,
    }, async () => {
      const t = await settleFailsOnce(kind, "hold");
      try {
        const attempts: number[] = [];
        const deliverer = {
          // Held unsent the first time (a rate limit); sent the next, and refused for good.
          deliver: async (_job: DeliveryJob, n: number) => {
            attempts.push(n);
            return attempts.length === 1
              ? { kind: "retry" as const, delayMs: 0, reason: "not sent: rate limit", unsent: true as const }
              : { kind: "dead" as const, reason: "HTTP 410" };
          },
        };
        await t.queue.send([{ id: "evt.hook", body: jobFor("hook"), group: "hook" }]);
        await run(t, deliverer, (ls) => ls.some((l) => l.msg === "delivery dead-lettered"));
        expect(attempts).toEqual([1, 1]);
        expect((await t.queue.listDead()).map((d) => [d.id, d.attempts])).toEqual([["evt.hook", 1]]);
      } finally {
        await t.close();
      }
    });
  },
);

import { describe, expect, it } from "vitest";
import { createMemoryQueue } from "../../src/adapters/queue/memory.js";
import { startConsumer } from "../../src/app/consumer.js";
import type { DeliveryJob } from "../../src/core/delivery.js";

describe("startConsumer", () => {
  it("keeps consuming when the queue cannot record an outcome, and logs it", async () => {
    let now = 0;
    const queue = createMemoryQueue<DeliveryJob>({ now: () => now });
    const job = (id: string) =>
      ({ id, sink: "s", notification: { eventName: "SessionEnd" } }) as unknown as DeliveryJob;
    await queue.send([
      { id: "a", body: job("a") },
      { id: "b", body: job("b") },
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
      {
        queue,
        deliverer: { deliver: async (j) => (delivered.push(j.id), { kind: "ack" }) },
        logger: { log: (_l, msg) => logs.push({ msg }) },
      },
      { batchSize: 1, idleMs: 5, visibilityMs: 1000 },
    );
    const until = async (check: () => boolean) => {
      for (let i = 0; i < 200 && !check(); i++) await new Promise((r) => setTimeout(r, 5));
    };
    await until(() => delivered.length >= 2);
    now = 2000; // the lease of the job whose ack failed expires: it comes back
    await until(() => delivered.length >= 3);
    await consumer.stop();
    expect(logs.some((l) => l.msg === "could not settle a delivery job; it will be redelivered")).toBe(true);
    expect(delivered.length).toBe(3);
    expect(await queue.receive(10, 1000)).toEqual([]);
  });
});

/** The queue contract against the in-memory queue (unit tests' backend), on an injected clock. */
import { createMemoryQueue } from "../../src/adapters/queue/memory.js";
import { type Job, queueContract } from "./queue.contract.js";

queueContract("memory queue", async () => {
  let clock = 1_700_000_000_000;
  return {
    queue: createMemoryQueue<Job>({ now: () => clock }),
    advance: (ms) => {
      clock += ms;
    },
    dedupsIds: true,
    staleReceiptsIgnored: true,
    cleanup: async () => {},
  };
});

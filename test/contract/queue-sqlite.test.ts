/** The queue contract against the embedded SQLite queue, a real file in a temp dir, on an injected clock. */
import { rm } from "node:fs/promises";
import { join } from "node:path";
import { createSqliteQueue } from "../../src/adapters/queue/sqlite.js";
import { tempDir } from "../support/temp.js";
import { type Job, queueContract } from "./queue.contract.js";

queueContract("sqlite queue", async () => {
  const dir = tempDir("queue");
  let clock = 1_700_000_000_000;
  return {
    queue: createSqliteQueue<Job>({ path: join(dir, "queue.db"), now: () => clock }),
    advance: (ms) => {
      clock += ms;
    },
    dedupsIds: true,
    staleReceiptsIgnored: true,
    cleanup: () => rm(dir, { recursive: true, force: true }),
  };
});

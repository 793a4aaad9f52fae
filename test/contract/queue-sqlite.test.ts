/** The queue contract against the embedded SQLite queue, a real file in a temp dir, on an injected clock. */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createSqliteQueue } from "../../src/adapters/queue/sqlite.js";
import { type Job, queueContract } from "./queue.contract.js";

queueContract("sqlite queue", async () => {
  const dir = await mkdtemp(join(tmpdir(), "hookgate-queue-"));
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

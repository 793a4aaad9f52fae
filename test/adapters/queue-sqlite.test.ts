/**
 * What only the embedded SQLite queue promises, beyond the queue contract: the file outlives the
 * process (a new process is a new instance with another lease owner), `recoverLeases` takes back
 * what a dead process held, a file made before its columns opened by two processes at once opens
 * in both, and a path it cannot open fails with an error that names it.
 */
import { spawn, spawnSync } from "node:child_process";
import { chmodSync, copyFileSync, statSync, writeFileSync } from "node:fs";
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { createInterface } from "node:readline";
import Database from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, expectTypeOf, it } from "vitest";
import {
  createSqliteQueue,
  partialCopy,
  type QueueClockStep,
  type QueueDeadLettered,
  SHORT_BUSY_MS,
  type SqliteQueue,
  STOPPED_DELIVERING,
  WAL_LIMIT_BYTES,
} from "../../src/adapters/queue/sqlite.js";
import type { ReceivedMessage } from "../../src/core/queue.js";
import { ROOT } from "../support/process.js";
import { tempDir, whenDone } from "../support/temp.js";

interface Job {
  readonly n: number;
}

const HOUR = 3_600_000;
/**
 * Whether a test may mount a disk of its own, a tmpfs of a few MiB, to fill: in a user and mount
 * namespace (`unshare -rm`), which a host may forbid its unprivileged users.
 */
const TMPFS_IN_NAMESPACE =
  process.platform === "linux" &&
  spawnSync("unshare", ["-rm", "sh", "-c", 'mount -t tmpfs -o size=1m tmpfs "$1"', "sh", ROOT]).status === 0;
let dir: string;
let path: string;
let clock: number;
const opened: SqliteQueue<Job>[] = [];

function open(owner: string): SqliteQueue<Job> {
  const queue = createSqliteQueue<Job>({ path, owner, now: () => clock });
  opened.push(queue);
  return queue;
}

beforeEach(async () => {
  dir = tempDir("sqlite-queue");
  path = join(dir, "queue.db");
  clock = 1_700_000_000_000;
});
afterEach(async () => {
  await Promise.all(opened.splice(0).map((q) => q.close()));
});

describe("sqlite queue on disk", () => {
  it("dead-letters a stored job that does not parse, as stored, and delivers the ones leased beside it", async () => {
    const queue = open("reader");
    await queue.send([0, 1, 2].map((n) => ({ id: `job-${n}`, body: { n } })));
    // The file damaged from outside: the middle job's body is no longer JSON.
    const other = new Database(path);
    other.prepare("UPDATE queue_jobs SET body = ? WHERE id = ?").run('{"n": 1', "job-1");
    other.close();
    const received = await queue.receive(10, HOUR);
    expect(received.map((m) => [m.id, m.body])).toEqual([
      ["job-0", { n: 0 }],
      ["job-2", { n: 2 }],
    ]);
    const dead = await queue.listDead();
    expect(dead).toHaveLength(1);
    expect(dead[0]).toMatchObject({ id: "job-1", body: '{"n": 1', attempts: 0 });
    // Typed as what is there: a caller reads a dead letter's body as a job or as this text.
    expectTypeOf(dead[0]?.body).toEqualTypeOf<Job | string | undefined>();
    expect(dead[0]?.error).toMatch(/^the stored job is not valid JSON \(.+\); dead-lettered as stored$/);
    // Gone from the live queue: later receives see only what the first left.
    for (const m of received) await queue.ack(m);
    clock += 2 * HOUR;
    expect(await queue.receive(10, HOUR)).toEqual([]);
  });

  it("tells onDeadLettered of each job it dead-letters itself, once committed, without its body, and again after a replay", async () => {
    const told: QueueDeadLettered[] = [];
    const queue = createSqliteQueue<Job>({
      path,
      owner: "reader",
      now: () => clock,
      onDeadLettered: (l) => told.push(l),
    });
    opened.push(queue);
    await queue.intake(
      [
        { id: "good", body: '{"n":0}', delayMs: 0, group: "audit" },
        {
          id: "intake-7-0",
          body: "unreadable intake journal line: token=s3cret",
          delayMs: 0,
          group: undefined,
        },
        { id: "cut", body: '{"n":', delayMs: 0, group: "chat" },
      ],
      { segment: 7, offset: 100 },
    );
    expect(told).toEqual([]);
    expect((await queue.receive(10, HOUR)).map((m) => m.id)).toEqual(["good"]);
    const reason = "the stored job is not valid JSON; dead-lettered as stored";
    expect(told).toEqual([
      { id: "intake-7-0", group: undefined, attempts: 0, reason },
      { id: "cut", group: "chat", attempts: 0, reason },
    ]);
    expect(JSON.stringify(told)).not.toMatch(/s3cret|unreadable intake/);
    // `dlq replay`: leased again, dead-lettered again, told again.
    expect(await queue.replayDead(["cut"])).toEqual({ count: 1, missing: [] });
    expect(await queue.receive(10, HOUR)).toEqual([]);
    expect(told.map((l) => l.id)).toEqual(["intake-7-0", "cut", "cut"]);
    expect((await queue.listDead()).map((d) => d.id).sort()).toEqual(["cut", "intake-7-0"]);
  });

  it("replays a dead letter whose text does not parse whatever `keep` says, without asking it", async () => {
    const queue = open("reader");
    await queue.intake([{ id: "cut", body: '{"n":', delayMs: 0, group: undefined }], {
      segment: 1,
      offset: 10,
    });
    expect(await queue.receive(10, HOUR)).toEqual([]);
    const asked: unknown[] = [];
    const keep = (body: unknown) => {
      asked.push(body);
      return false;
    };
    expect(await queue.replayDead(undefined, keep)).toEqual({ count: 1, missing: [] });
    expect(asked).toEqual([]);
  });

  it("tells onDeadLettered nothing of a lease whose commit failed", async () => {
    const told: string[] = [];
    const queue = createSqliteQueue<Job>({
      path,
      owner: "reader",
      now: () => clock,
      busyTimeoutMs: 0,
      onDeadLettered: (l) => told.push(l.id),
    });
    opened.push(queue);
    await queue.intake([{ id: "cut", body: '{"n":', delayMs: 0, group: "chat" }], { segment: 1, offset: 6 });
    // Another process holds the write lock through the lease and its one retry.
    const other = new Database(path);
    other.exec("BEGIN IMMEDIATE");
    await expect(queue.receive(10, HOUR)).rejects.toThrow(/locked|busy/i);
    expect(told).toEqual([]);
    other.exec("ROLLBACK");
    other.close();
    expect(await queue.receive(10, HOUR)).toEqual([]);
    expect(told).toEqual(["cut"]);
  });

  it("commits the sends of one turn together, each settling only once its rows are on disk", async () => {
    const queue = open("writer");
    const reader = new Database(path, { readonly: true });
    const count = () => (reader.prepare("SELECT count(*) AS n FROM queue_jobs").get() as { n: number }).n;
    const sends = Array.from({ length: 50 }, (_, n) => queue.send([{ id: `job-${n}`, body: { n } }]));
    // Nothing is written while the turn that sends is still running...
    expect(count()).toBe(0);
    await Promise.all(sends);
    // ...and every awaited send is visible to another connection, as after a commit.
    expect(count()).toBe(50);
    const each = await queue.send([{ id: "job-50", body: { n: 50 } }]);
    expect(each).toBeUndefined();
    expect(count()).toBe(51);
    reader.close();
    const received = await open("reader").receive(100, HOUR);
    expect(received.map((m) => m.body.n).sort((a, b) => a - b)).toEqual(
      Array.from({ length: 51 }, (_, n) => n),
    );
  });

  it("fails only the send whose body cannot be serialised, not the others of its turn", async () => {
    const queue = open("writer");
    const good = queue.send([{ id: "good", body: { n: 1 } }]);
    const bad = queue.send([{ id: "bad", body: { n: 10n as unknown as number } }]);
    await expect(bad).rejects.toThrow(/BigInt/);
    await good;
    expect((await open("reader").receive(10, HOUR)).map((m) => m.id)).toEqual(["good"]);
  });

  it("tries a batch once more on the next turn when another process held the lock", async () => {
    const queue = createSqliteQueue<Job>({ path, owner: "writer", now: () => clock, busyTimeoutMs: 1 });
    opened.push(queue);
    const other = new Database(path);
    other.exec("BEGIN IMMEDIATE");
    const sent = queue.send([{ id: "late", body: { n: 1 } }]);
    // The first commit, at the end of this turn, finds the lock taken; release it before the next.
    await new Promise((resolve) => setImmediate(resolve));
    other.exec("COMMIT");
    other.close();
    await sent;
    expect((await open("reader").receive(10, HOUR)).map((m) => m.id)).toEqual(["late"]);
  });

  it("leaves the jobs of a skipped group for a later receive", async () => {
    const queue = open("writer");
    await queue.send([
      { id: "a1", body: { n: 1 }, group: "a" },
      { id: "b1", body: { n: 2 }, group: "b" },
      { id: "none", body: { n: 3 } },
      { id: "a2", body: { n: 4 }, group: "a" },
    ]);
    expect((await queue.receive(10, HOUR, ["a"])).map((m) => m.id)).toEqual(["b1", "none"]);
    expect((await queue.receive(10, HOUR, [])).map((m) => m.id)).toEqual(["a1", "a2"]);
  });

  it("reads past a skipped group's backlog, in the order one scan of every due job would give", async () => {
    const queue = open("writer");
    // The skipped group's jobs come first and outnumber the rest; the others interleave by time.
    await queue.send(Array.from({ length: 300 }, (_, n) => ({ id: `a${n}`, body: { n }, group: "a" })));
    await queue.send([
      { id: "b-late", body: { n: 1 }, group: "b", delayMs: 20 },
      { id: "c-soon", body: { n: 2 }, group: "c", delayMs: 10 },
      { id: "none-late", body: { n: 3 }, delayMs: 30 },
      { id: "b-now", body: { n: 4 }, group: "b" },
    ]);
    clock += 30;
    expect((await queue.receive(3, HOUR, ["a"])).map((m) => m.id)).toEqual(["b-now", "c-soon", "b-late"]);
    expect((await queue.receive(10, HOUR, ["a", "b"])).map((m) => m.id)).toEqual(["none-late"]);
    expect(await queue.receive(10, HOUR, ["a", "b", "c"])).toEqual([]);
    expect((await queue.receive(2, HOUR, [])).map((m) => m.id)).toEqual(["a0", "a1"]);
  });

  it("commits the acks and receives of one turn together, each settling only once it is on disk", async () => {
    const queue = open("writer");
    await queue.send(Array.from({ length: 6 }, (_, n) => ({ id: `job-${n}`, body: { n } })));
    const reader = new Database(path, { readonly: true });
    const rows = () =>
      reader.prepare("SELECT id, state FROM queue_jobs ORDER BY id").all() as { id: string; state: string }[];
    const got = await queue.receive(3, HOUR);
    expect(got.map((m) => m.id)).toEqual(["job-0", "job-1", "job-2"]);
    const acks = got.map((m) => queue.ack(m));
    // Receives of the same turn take distinct jobs.
    const [first, second] = [queue.receive(2, HOUR), queue.receive(2, HOUR)];
    // Nothing is written while the turn that acks and receives is still running...
    expect(rows().filter((r) => r.state === "leased")).toHaveLength(3);
    await Promise.all(acks);
    // ...and once they settle, another connection sees the acked jobs gone and the new leases.
    expect((await first).map((m) => m.id)).toEqual(["job-3", "job-4"]);
    expect((await second).map((m) => m.id)).toEqual(["job-5"]);
    expect(rows()).toEqual(["job-3", "job-4", "job-5"].map((id) => ({ id, state: "leased" })));
    reader.close();
  });

  it("leases the jobs sent in its turn in the same commit (a journal read and the receive it pokes)", async () => {
    const queue = open("writer");
    const row = (id: string, n: number, delayMs: number) => ({
      id,
      body: JSON.stringify({ n }),
      delayMs,
      group: undefined,
    });
    // serve's delivery thread hands a journal read to the queue and pokes the consumer at once.
    const taken = queue.intake([row("now", 1, 0), row("later", 2, 60_000)], { segment: 3, offset: 42 });
    const got = queue.receive(10, HOUR);
    await taken;
    expect((await got).map((m) => [m.id, m.body, m.attempts])).toEqual([["now", { n: 1 }, 1]]);
    expect(queue.intakePosition()).toEqual({ segment: 3, offset: 42 });
  });

  it("counts its jobs and dead letters, and knows since when the longest-waiting due job is due", async () => {
    const queue = open("writer");
    expect(queue.stats()).toEqual({ jobs: 0, deadLetters: 0, oldestDueAt: undefined });
    const first = clock;
    await queue.send([{ id: "a", body: { n: 1 }, group: "audit" }]);
    clock += 5000;
    await queue.send([
      { id: "b", body: { n: 2 } },
      { id: "c", body: { n: 3 }, delayMs: HOUR },
    ]);
    // c waits for its time: counted, but not due.
    expect(queue.stats()).toEqual({ jobs: 3, deadLetters: 0, oldestDueAt: first });
    const [a] = await queue.receive(1, HOUR);
    if (!a) throw new Error("nothing received");
    expect(a.id).toBe("a");
    await queue.deadLetter(a, "gone");
    expect(queue.stats()).toEqual({ jobs: 2, deadLetters: 1, oldestDueAt: first + 5000 });
    // Leased, b is not due; once its lease has run out it is, since the lease's end.
    const [b] = await queue.receive(1, 60_000);
    expect(b?.id).toBe("b");
    expect(queue.stats()).toEqual({ jobs: 2, deadLetters: 1, oldestDueAt: undefined });
    clock += 60_000;
    expect(queue.stats()).toEqual({ jobs: 2, deadLetters: 1, oldestDueAt: first + 5000 + 60_000 });
  });

  it("rejects the acks of a turn whose commit fails and its receives once it fails twice, and leaves the jobs as they were", async () => {
    const queue = createSqliteQueue<Job>({ path, owner: "writer", now: () => clock, busyTimeoutMs: 1 });
    opened.push(queue);
    await queue.send([
      { id: "leased", body: { n: 1 } },
      { id: "ready", body: { n: 2 } },
    ]);
    const [leased] = await queue.receive(1, HOUR);
    if (!leased) throw new Error("nothing received");
    // Its lease has run out: the ack is not tried again once its commit failed.
    clock += HOUR;
    const other = new Database(path);
    other.exec("BEGIN IMMEDIATE");
    const acked = queue.ack(leased);
    const received = queue.receive(1, HOUR);
    await expect(acked).rejects.toThrow(/locked|busy/i);
    await expect(received).rejects.toThrow(/locked|busy/i);
    other.exec("COMMIT");
    other.close();
    // The failed receive leased nothing, and the ack never happened: the job is back.
    expect((await queue.receive(10, HOUR)).map((m) => [m.id, m.attempts])).toEqual([
      ["ready", 1],
      ["leased", 2],
    ]);
  });

  it("adds the group and holds columns and the index to a queue file made before them, and drops the old due index", async () => {
    const old = new Database(path);
    old.exec(`CREATE TABLE queue_jobs (seq INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE, body TEXT NOT NULL,
      state TEXT NOT NULL CHECK (state IN ('ready', 'leased')), visible_at INTEGER NOT NULL,
      attempts INTEGER NOT NULL DEFAULT 0, lease_owner TEXT, leased_until INTEGER, receipt TEXT,
      last_error TEXT, enqueued_at INTEGER NOT NULL);
      CREATE INDEX queue_jobs_due ON queue_jobs (visible_at, seq);
      CREATE TABLE queue_dead (id TEXT PRIMARY KEY, body TEXT NOT NULL, attempts INTEGER NOT NULL,
      error TEXT NOT NULL, failed_at INTEGER NOT NULL);
      INSERT INTO queue_dead VALUES ('dead-before', '{"n":2}', 3, 'boom', 0);`);
    old
      .prepare(
        "INSERT INTO queue_jobs (id, body, state, visible_at, enqueued_at) VALUES (?, ?, 'ready', 0, 0)",
      )
      .run("before", JSON.stringify({ n: 0 }));
    old.close();
    const queue = open("after");
    await queue.send([{ id: "after", body: { n: 1 }, group: "g" }]);
    const [before] = await queue.receive(10, HOUR, ["g"]);
    expect(before).toMatchObject({ id: "before", attempts: 1, holds: 0 });
    // And the holds column: a job from before it is held with no attempt spent.
    if (!before) throw new Error("nothing received");
    expect(await queue.hold(before, HOUR, "not sent")).toBe(true);
    clock += HOUR;
    expect(await queue.receive(10, HOUR, ["g"])).toEqual([
      expect.objectContaining({ id: "before", attempts: 1, holds: 1 }),
    ]);
    const reader = new Database(path, { readonly: true });
    const indexes = reader
      .prepare(
        "SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'queue_jobs' AND sql IS NOT NULL",
      )
      .pluck()
      .all();
    reader.close();
    expect(indexes).toEqual(["queue_jobs_group_due"]);
    // The dead letters gained their group column too: one from before it replays ungrouped.
    expect(await queue.replayDead()).toEqual({ count: 1, missing: [] });
    expect((await queue.receive(10, HOUR, ["g"])).map((m) => m.id)).toEqual(["dead-before"]);
  });

  it("makes its file, and the WAL files beside it, readable by its own user alone, in a data dir others may read", async () => {
    // A data dir that exists keeps its mode (systemd's StateDirectory makes it 0755): the events
    // its jobs hold were readable by every user of the host.
    chmodSync(dir, 0o755);
    const previous = process.umask(0o022);
    try {
      const queue = open("writer");
      await queue.send([{ id: "job", body: { n: 1 } }]);
      const modes = ["", "-wal", "-shm"].map((end) => (statSync(`${path}${end}`).mode & 0o777).toString(8));
      expect(modes).toEqual(["600", "600", "600"]);
    } finally {
      process.umask(previous);
    }
  });

  it("puts its copy at the path only once it is whole, readable by its own user alone", async () => {
    // The copy was written at its path page by page: serve killed mid-way left part of a file
    // there, which the next start moved into place as the queue put back.
    const queue = createSqliteQueue<{ readonly text: string }>({ path, owner: "copier" });
    try {
      await queue.send(
        Array.from({ length: 400 }, (_, n) => ({ id: `job-${n}`, body: { text: "x".repeat(4000) } })),
      );
      const copy = join(dir, "copy.db");
      // The backup copies 100 pages a turn: each turn in between, what is at the copy's path.
      const seen: (number | undefined)[] = [];
      let copying = true;
      const watch = () => {
        if (!copying) return;
        seen.push(statSync(copy, { throwIfNoEntry: false })?.size);
        setImmediate(watch);
      };
      setImmediate(watch);
      await queue.copyTo(copy);
      copying = false;
      expect(seen.length).toBeGreaterThan(5);
      expect(seen.filter((size) => size !== undefined)).toEqual([]);
      expect(statSync(copy).mode & 0o777).toBe(0o600);
      expect(statSync(partialCopy(copy), { throwIfNoEntry: false })).toBeUndefined();
      const copied = createSqliteQueue({ path: copy, owner: "reader" });
      try {
        expect(copied.stats().jobs).toBe(400);
      } finally {
        await copied.close();
      }
    } finally {
      await queue.close();
    }
  });

  it("keeps the mode of a queue file it finds", async () => {
    writeFileSync(path, "", { mode: 0o640 });
    const queue = open("writer");
    await queue.send([{ id: "job", body: { n: 1 } }]);
    expect((statSync(path).mode & 0o777).toString(8)).toBe("640");
  });

  it("sends what is waiting when it closes", async () => {
    const queue = open("closer");
    const pending = queue.send([{ id: "last", body: { n: 1 } }]);
    await queue.close();
    await pending;
    const again = open("again");
    expect((await again.receive(10, HOUR)).map((m) => m.id)).toEqual(["last"]);
  });

  it("keeps queued jobs, delays, attempts and dead letters across close and reopen", async () => {
    const before = open("process-1");
    await before.send([
      { id: "ready", body: { n: 1 } },
      { id: "delayed", body: { n: 2 }, delayMs: 5000 },
      { id: "doomed", body: { n: 3 } },
      { id: "retried", body: { n: 4 } },
    ]);
    const got = await before.receive(10, HOUR);
    const doomed = got.find((m) => m.id === "doomed");
    const retried = got.find((m) => m.id === "retried");
    const ready = got.find((m) => m.id === "ready");
    if (!doomed || !retried || !ready) throw new Error("jobs missing");
    await before.deadLetter(doomed, "HTTP 410");
    await before.retry(retried, 0, "HTTP 503");
    await before.close();

    const after = open("process-2");
    expect(await after.listDead()).toEqual([
      { id: "doomed", body: { n: 3 }, attempts: 1, error: "HTTP 410", failedAt: clock },
    ]);
    // "ready" is still leased by process 1 until recovered; "delayed" waits for its delay.
    const again = await after.receive(10, HOUR);
    expect(again.map((m) => [m.id, m.attempts])).toEqual([["retried", 2]]);
    clock += 5000;
    const late = await after.receive(10, HOUR);
    expect(late.map((m) => [m.id, m.body])).toEqual([["delayed", { n: 2 }]]);
    for (const m of [...again, ...late]) await after.ack(m);
    clock += HOUR;
    expect((await after.receive(10, HOUR)).map((m) => [m.id, m.attempts])).toEqual([["ready", 2]]);
  });

  it("moves its delays and leases back with a wall clock stepped back, in this process and the next", async () => {
    const steps: QueueClockStep[] = [];
    const queue = createSqliteQueue<Job>({
      path,
      owner: "p1",
      now: () => clock,
      onClockStep: (s) => steps.push(s),
    });
    opened.push(queue);
    await queue.send([
      { id: "retried", body: { n: 1 } },
      { id: "leased", body: { n: 2 } },
      { id: "later", body: { n: 3 }, delayMs: 10 * 60_000 },
    ]);
    const got = await queue.receive(2, 30_000);
    const retried = got.find((m) => m.id === "retried");
    if (!retried) throw new Error("job missing");
    await queue.retry(retried, 5000, "HTTP 503");
    // NTP steps the clock six hours back: the retry is still due in 5 s, the lease ends in 30 s,
    // the delayed job in 10 minutes, as they were before the step.
    clock -= 6 * HOUR;
    expect(await queue.receive(10, HOUR)).toEqual([]);
    expect(steps).toEqual([{ byMs: 6 * HOUR, jobs: 3 }]);
    clock += 5000;
    expect((await queue.receive(10, HOUR)).map((m) => m.id)).toEqual(["retried"]);
    clock += 25_000;
    expect((await queue.receive(10, HOUR)).map((m) => m.id)).toEqual(["leased"]);
    clock += 10 * 60_000 - 30_000;
    expect((await queue.receive(10, HOUR)).map((m) => m.id)).toEqual(["later"]);
    // Jitter is not a step.
    clock -= 1000;
    await queue.receive(10, HOUR);
    expect(steps).toHaveLength(1);
    await queue.close();

    // Stepped back while no process had the file open: the next one moves the times back.
    const before = open("p2");
    await before.send([{ id: "waiting", body: { n: 4 }, delayMs: 60_000 }]);
    await before.close();
    clock -= 3 * HOUR;
    const after = open("p3");
    expect(await after.receive(10, HOUR)).toEqual([]);
    expect((await after.stats()).oldestDueAt).toBe(undefined);
    clock += 60_000;
    expect((await after.receive(10, HOUR)).map((m) => m.id)).toEqual(["waiting"]);
  });

  it("keeps the leases of its deliveries in flight when the wall clock steps forward, and lets them run out after", async () => {
    let monotonic = 0;
    const queue = createSqliteQueue<Job>({ path, owner: "p1", now: () => clock, monotonic: () => monotonic });
    opened.push(queue);
    await queue.send([{ id: "sent", body: { n: 1 } }]);
    const [first] = await queue.receive(1, 60_000);
    if (!first) throw new Error("job missing");
    // NTP steps the clock an hour forward (or the host resumes from a suspend) a second into the
    // delivery: the lease has 59 s left, not none, and the job is not sent a second time.
    clock += HOUR + 1000;
    monotonic += 1000;
    expect(await queue.receive(10, 60_000)).toEqual([]);
    clock += 58_000;
    monotonic += 58_000;
    expect(await queue.receive(10, 60_000)).toEqual([]);
    expect(await queue.ack(first)).toBe(true);

    // A lease runs out as it did: on the time that passed, the step left out.
    await queue.send([{ id: "hung", body: { n: 2 } }]);
    await queue.receive(1, 60_000);
    clock += 30_000;
    monotonic += 30_000;
    await queue.receive(10, 60_000);
    clock += 3 * HOUR;
    monotonic += 29_000;
    expect(await queue.receive(10, 60_000)).toEqual([]);
    clock += 1000;
    monotonic += 1000;
    expect((await queue.receive(10, 60_000)).map((m) => m.id)).toEqual(["hung"]);
  });

  it("moves the times back once when two processes on the file see the same step", async () => {
    const a = open("a");
    const b = open("b");
    await a.send([{ id: "waiting", body: { n: 1 }, delayMs: 60_000 }]);
    clock -= 2 * HOUR;
    await a.receive(10, HOUR);
    // b saw the same file before the step; its own commit finds the times already moved.
    await b.receive(10, HOUR);
    clock += 59_000;
    expect(await b.receive(10, HOUR)).toEqual([]);
    clock += 1000;
    expect((await b.receive(10, HOUR)).map((m) => m.id)).toEqual(["waiting"]);
  });

  it("replays every dead letter in slices that a running serve commits between, and none made meanwhile", async () => {
    const cli = open("cli");
    // The serve beside it waits for no lock: it commits only when the replay holds none.
    const serve = createSqliteQueue<Job>({ path, owner: "serve", now: () => clock, busyTimeoutMs: 0 });
    opened.push(serve);
    const count = 6000;
    const file = new Database(path);
    const bury = file.prepare(
      "INSERT INTO queue_dead (id, body, attempts, error, failed_at, grp) VALUES (?, ?, 8, 'HTTP 500', ?, 'audit')",
    );
    file.transaction(() => {
      for (let n = 0; n < count; n++) bury.run(`dead-${n}`, JSON.stringify({ n }), clock - count + n);
    })();
    file.close();

    const replaying = cli.replayDead();
    await serve.send([{ id: "answered", body: { n: -1 } }]);
    const midway = serve.stats().deadLetters;
    expect(midway).toBeGreaterThan(0);
    expect(midway).toBeLessThan(count);
    // Delivered and dead-lettered again at once (its sink gone): a dead letter the replay leaves.
    const [first] = await serve.receive(1, 60_000);
    if (!first) throw new Error("no job");
    expect(first.id).toBe("dead-0");
    expect(await serve.deadLetter(first, 'sink "audit" is no longer in the policy')).toBe(true);

    expect(await replaying).toEqual({ count, missing: [] });
    expect(serve.stats()).toMatchObject({ jobs: count, deadLetters: 1 });
    expect((await serve.listDead()).map((d) => d.id)).toEqual(["dead-0"]);
  });

  it("recoverLeases makes every job an earlier process leased visible at once, and only those", async () => {
    const dead = open("process-1");
    await dead.send([
      { id: "a", body: { n: 1 } },
      { id: "b", body: { n: 2 } },
      { id: "c", body: { n: 3 } },
    ]);
    expect(await dead.receive(2, HOUR)).toHaveLength(2);
    await dead.close();

    const raw = new Database(path, { readonly: true });
    const owners = raw.prepare("SELECT id, state, lease_owner AS owner FROM queue_jobs ORDER BY id").all();
    raw.close();
    expect(owners).toEqual([
      { id: "a", state: "leased", owner: "process-1" },
      { id: "b", state: "leased", owner: "process-1" },
      { id: "c", state: "ready", owner: null },
    ]);

    const serve = open("process-2");
    expect((await serve.receive(10, HOUR)).map((m) => [m.id, m.interrupted])).toEqual([["c", undefined]]);
    expect(serve.recoverLeases()).toBe(2);
    const back = await serve.receive(10, HOUR);
    // Each keeps the attempt its lease counted, and says why that attempt recorded no outcome.
    expect(back.map((m) => [m.id, m.attempts, m.interrupted])).toEqual([
      ["a", 2, STOPPED_DELIVERING],
      ["b", 2, STOPPED_DELIVERING],
    ]);
    // Its own leases stay where they are.
    expect(serve.recoverLeases()).toBe(0);
    expect(await serve.receive(10, HOUR)).toEqual([]);
  });

  it("lets an earlier process's late ack touch nothing once the job is recovered and redelivered", async () => {
    const dead = open("process-1");
    await dead.send([{ id: "a", body: { n: 1 } }]);
    const [stale] = await dead.receive(1, HOUR);
    if (!stale) throw new Error("nothing received");

    const serve = open("process-2");
    expect(serve.recoverLeases()).toBe(1);
    const [fresh] = await serve.receive(1, HOUR);
    await dead.ack(stale);
    if (!fresh) throw new Error("nothing redelivered");
    await serve.retry(fresh, 0, "HTTP 503");
    // The retry recorded an outcome: the next receive is no longer told of the stopped one.
    expect((await serve.receive(1, HOUR)).map((m) => [m.id, m.attempts, m.interrupted])).toEqual([
      ["a", 3, undefined],
    ]);
  });

  it("tells a job as interrupted by its mark, never by its last error's text", async () => {
    const queue = open("process-1");
    await queue.send([{ id: "a", body: { n: 1 } }]);
    const [first] = await queue.receive(1, HOUR);
    if (!first) throw new Error("nothing received");
    // A sink's error worded as the interruption is: the attempt recorded an outcome all the same.
    await queue.retry(first, 0, STOPPED_DELIVERING);
    expect((await queue.receive(1, HOUR)).map((m) => [m.id, m.attempts, m.interrupted])).toEqual([
      ["a", 2, undefined],
    ]);
  });

  it("keeps the interruption a queue file made before the interrupted column recorded in last_error", async () => {
    const old = new Database(path);
    old.exec(`CREATE TABLE queue_jobs (seq INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE, body TEXT NOT NULL,
      state TEXT NOT NULL CHECK (state IN ('ready', 'leased')), visible_at INTEGER NOT NULL,
      attempts INTEGER NOT NULL DEFAULT 0, lease_owner TEXT, leased_until INTEGER, receipt TEXT,
      last_error TEXT, enqueued_at INTEGER NOT NULL, grp TEXT, holds INTEGER NOT NULL DEFAULT 0)`);
    const insert = old.prepare(
      "INSERT INTO queue_jobs (id, body, state, visible_at, attempts, last_error, enqueued_at) VALUES (?, ?, 'ready', 0, 1, ?, 0)",
    );
    // Taken back by that version's recoverLeases, and retried after a sink's error.
    insert.run("stopped", JSON.stringify({ n: 1 }), STOPPED_DELIVERING);
    insert.run("failed", JSON.stringify({ n: 2 }), "HTTP 503");
    old.close();
    const queue = open("after");
    const received = await queue.receive(10, HOUR);
    expect(received.map((m) => [m.id, m.attempts, m.interrupted])).toEqual([
      ["stopped", 2, STOPPED_DELIVERING],
      ["failed", 2, undefined],
    ]);
    // Recorded an outcome, it is told no more.
    const [stopped] = received;
    if (!stopped) throw new Error("nothing received");
    await queue.retry(stopped, 0, "HTTP 503");
    expect((await queue.receive(1, HOUR)).map((m) => [m.id, m.interrupted])).toEqual([
      ["stopped", undefined],
    ]);
  });

  it("gives back the disk its WAL grew to while another process read the file, once it is done", async () => {
    // A reader that holds a snapshot (a sqlite3 shell's open transaction, a backup tool) keeps
    // every commit meanwhile in the WAL: it grew by each job's body, and stayed that size until
    // serve stopped, however short the queue was again.
    const queue = open("serve");
    const reader = new Database(path, { readonly: true });
    reader.exec("BEGIN");
    reader.prepare("SELECT count(*) FROM queue_jobs").get();
    const pad = "x".repeat(256 * 1024);
    for (let n = 0; n < 200; n++) await queue.send([{ id: `job-${n}`, body: { n, pad } as Job }]);
    const grown = statSync(`${path}-wal`).size;
    expect(grown).toBeGreaterThan(2 * WAL_LIMIT_BYTES);
    reader.exec("COMMIT");
    reader.close();
    for (const message of await queue.receive(200, HOUR)) await queue.ack(message);
    for (let n = 0; n < 10; n++) await queue.send([{ id: `after-${n}`, body: { n } }]);
    expect(statSync(`${path}-wal`).size).toBeLessThanOrEqual(WAL_LIMIT_BYTES);
  });

  it("writes through a WAL journal", async () => {
    open("process-1");
    const raw = new Database(path, { readonly: true });
    expect(raw.pragma("journal_mode", { simple: true })).toBe("wal");
    raw.close();
  });

  it("makes the SQLite calls of its open, recoverLeases and intakePosition between beforeCall and afterCall", async () => {
    // serve's delivery thread makes these before it is ready: one on a disk that hung was taken
    // for a thread between calls, and the host ended it inside the call, aborting the process.
    const outside: string[] = [];
    let inCall = false;
    const queue = watchingCalls(
      (name) => {
        if (!inCall) outside.push(name);
      },
      () =>
        createSqliteQueue<Job>({
          path,
          owner: "serve",
          now: () => clock,
          beforeCall: () => {
            inCall = true;
          },
          afterCall: () => {
            inCall = false;
          },
        }),
    );
    opened.push(queue);
    watchingCalls(
      (name) => {
        if (!inCall) outside.push(name);
      },
      () => [queue.recoverLeases(), queue.intakePosition()],
    );
    expect(outside).toEqual([]);
  });
});

/** Runs `run`, telling `called` the name of each SQLite call made on any connection meanwhile. */
function watchingCalls<R>(called: (name: string) => void, run: () => R): R {
  const scratch = new Database(":memory:");
  const statement = Object.getPrototypeOf(scratch.prepare("SELECT 1")) as Record<string, unknown>;
  scratch.close();
  const methods: [Record<string, unknown>, string][] = [
    [Database.prototype as unknown as Record<string, unknown>, "exec"],
    [Database.prototype as unknown as Record<string, unknown>, "pragma"],
    [statement, "run"],
    [statement, "get"],
    [statement, "all"],
  ];
  const originals = methods.map(([target, name]) => target[name] as (...args: unknown[]) => unknown);
  for (const [i, [target, name]] of methods.entries()) {
    const original = originals[i] as (...args: unknown[]) => unknown;
    target[name] = function (this: unknown, ...args: unknown[]) {
      called(name);
      return original.apply(this, args);
    };
  }
  try {
    return run();
  } finally {
    for (const [i, [target, name]] of methods.entries()) target[name] = originals[i];
  }
}

/**
 * Runs `open`, and `between` once after the `step`-th statement run on any connection meanwhile
 * (`between`'s own not counted); whether `open` ran that many. better-sqlite3 waits for a lock
 * synchronously, so one thread cannot have one connection wait while another writes: this puts
 * the other's work between two statements of the first instead.
 */
function interleaved(open: () => void, step: number, between: () => void): boolean {
  const scratch = new Database(":memory:");
  const statement = Object.getPrototypeOf(scratch.prepare("SELECT 1")) as Record<string, unknown>;
  scratch.close();
  const methods: [Record<string, unknown>, string][] = [
    [Database.prototype as unknown as Record<string, unknown>, "exec"],
    [statement, "run"],
    [statement, "get"],
    [statement, "all"],
  ];
  const originals = methods.map(([target, name]) => target[name] as (...args: unknown[]) => unknown);
  let count = 0;
  let inside = false;
  let reached = false;
  for (const [i, [target, name]] of methods.entries()) {
    const original = originals[i] as (...args: unknown[]) => unknown;
    target[name] = function (this: unknown, ...args: unknown[]) {
      const result = original.apply(this, args);
      if (!inside && ++count === step) {
        inside = reached = true;
        try {
          between();
        } finally {
          inside = false;
        }
      }
      return result;
    };
  }
  try {
    open();
  } finally {
    for (const [i, [target, name]] of methods.entries()) target[name] = originals[i];
  }
  return reached;
}

describe("sqlite queue, a delivery settled while another process holds the file locked", () => {
  type Settle = (queue: SqliteQueue<Job>, message: ReceivedMessage<Job>) => Promise<boolean>;
  const settles: [string, Settle, { jobs: number; deadLetters: number; due: boolean }][] = [
    ["ack", (q, m) => q.ack(m), { jobs: 0, deadLetters: 0, due: false }],
    ["retry", (q, m) => q.retry(m, 0, "HTTP 500"), { jobs: 1, deadLetters: 0, due: true }],
    ["hold", (q, m) => q.hold(m, 0, "rate limited"), { jobs: 1, deadLetters: 0, due: true }],
    ["deadLetter", (q, m) => q.deadLetter(m, "HTTP 410"), { jobs: 0, deadLetters: 1, due: false }],
  ];

  /** A queue whose calls fail at once on a lock, a job it leased for a minute, and its calls so far. */
  async function leasedJob() {
    let calls = 0;
    const waits: string[] = [];
    const queue = createSqliteQueue<Job>({
      path,
      owner: "serve",
      now: () => clock,
      busyTimeoutMs: 0,
      afterCall: () => {
        calls += 1;
      },
      onSettleWait: (error) => waits.push(error === undefined ? "settled" : String(error)),
    });
    opened.push(queue);
    await queue.send([{ id: "a", body: { n: 1 } }]);
    const [message] = await queue.receive(1, 60_000);
    if (!message) throw new Error("nothing received");
    return { queue, message, calls: () => calls, waits };
  }

  /** Waits until `check` holds, looking every 5 ms; fails the test if it never does. */
  async function until(check: () => boolean): Promise<void> {
    for (let i = 0; i < 2000 && !check(); i++) await new Promise((r) => setTimeout(r, 5));
    expect(check()).toBe(true);
  }

  it.each(settles)(
    "%s: goes in once the lock is let go, before the lease ends, so the job is not sent again",
    async (_kind, settle, after) => {
      // A settle that failed on the lock was given up: the job stayed leased, came back when its
      // lease ran out and was sent again with the same webhook-id.
      const { queue, message, calls, waits } = await leasedJob();
      const other = new Database(path);
      other.exec("BEGIN EXCLUSIVE");
      const before = calls();
      const settled = settle(queue, message);
      // Failed on the lock, and tried again.
      await until(() => calls() >= before + 2);
      other.exec("COMMIT");
      other.close();
      expect(await settled).toBe(true);
      // Told while it waits (serve's /healthz says failing), and once it went in.
      expect(waits.at(0)).toMatch(/locked|busy/i);
      expect(waits.at(-1)).toBe("settled");
      const stats = queue.stats();
      expect({
        jobs: stats.jobs,
        deadLetters: stats.deadLetters,
        due: stats.oldestDueAt !== undefined,
      }).toEqual(after);
    },
  );

  it("commits a turn with an ack waiting for a lock a moment, as the other settles, and one without the whole busy timeout", async () => {
    // An ack's commit waited out the whole busy timeout (5 s in serve), and again on the next
    // turn, where a retry, hold or dead letter waits SHORT_BUSY_MS and tries again each second: a
    // locked file held the delivery thread 10 s at a time. Read back as each statement runs.
    const { queue, connection } = openWithConnection({
      owner: "serve",
      now: () => clock,
      busyTimeoutMs: 60_000,
    });
    await queue.send([{ id: "a", body: { n: 1 } }]);
    const [message] = await queue.receive(1, 60_000);
    if (!message) throw new Error("nothing received");
    const acked = await busyTimeoutsAsStatementsRun(connection, async () => {
      expect(await queue.ack(message)).toBe(true);
    });
    const sent = await busyTimeoutsAsStatementsRun(connection, () =>
      queue.send([{ id: "b", body: { n: 2 } }]),
    );
    expect(new Set(acked)).toEqual(new Set([SHORT_BUSY_MS]));
    expect(new Set(sent)).toEqual(new Set([60_000]));
    expect(connection.pragma("busy_timeout", { simple: true })).toBe(60_000);
  });

  it("gives a send on its second try the whole busy timeout, though another delivery's ack is in its turn too", async () => {
    // A turn's commit with an ack waits for a lock a moment; the sends and leases beside it, once
    // it failed, were tried on the next turn with the whole busy timeout only if no delivery
    // ended in that turn too: a lock held past two such turns rejected the journal's intake.
    let afterCall = () => {};
    const { queue, connection } = openWithConnection({
      owner: "serve",
      now: () => clock,
      busyTimeoutMs: 60_000,
      afterCall: () => afterCall(),
    });
    await queue.send([
      { id: "a", body: { n: 1 } },
      { id: "b", body: { n: 2 } },
    ]);
    const [first, second] = await queue.receive(2, 60_000);
    if (!first || !second) throw new Error("nothing received");
    const other = new Database(path);
    whenDone(() => other.close());
    other.exec("BEGIN IMMEDIATE");
    let secondAcked: Promise<boolean> | undefined;
    // The first ack's commit fails on the lock (the send beside it is tried on the next turn): as
    // that call ends, the lock is let go and the other delivery ends, its ack in that next turn by
    // the queue's own order, not by when the first ack's failure is told.
    afterCall = () => {
      afterCall = () => {};
      other.exec("COMMIT");
      secondAcked = queue.ack(second);
    };
    const statements = await statementsRunWithBusyTimeouts(connection, async () => {
      const firstAcked = queue.ack(first);
      await queue.send([{ id: "c", body: { n: 3 } }]);
      expect(await secondAcked).toBe(true);
      expect(await firstAcked).toBe(true);
    });
    const waits = (pattern: RegExp) =>
      new Set(statements.filter((s) => pattern.test(s.sql)).map((s) => s.busyMs));
    expect(waits(/^INSERT OR IGNORE INTO queue_jobs/)).toEqual(new Set([60_000]));
    expect(waits(/^DELETE FROM queue_jobs WHERE id = \? AND receipt/)).toEqual(new Set([SHORT_BUSY_MS]));
    expect(queue.stats().jobs).toBe(1);
  });

  it("waits the whole busy timeout once in a turn at most: new sends beside a send's second try wait a moment", async () => {
    // A send's second try waits the whole busy timeout; the new sends of its turn waited it again,
    // and a turn of both on a locked file held the delivery thread twice over (10 s in serve).
    // Real waits, told apart by the busy timeout in force as each commit begins.
    const busyMs = SHORT_BUSY_MS + 50;
    let afterCall = () => {};
    const { queue, connection } = openWithConnection({
      owner: "serve",
      now: () => clock,
      busyTimeoutMs: busyMs,
      afterCall: () => afterCall(),
    });
    const other = new Database(path);
    whenDone(() => other.close());
    other.exec("BEGIN IMMEDIATE");
    let calls = 0;
    let later: Promise<void> | undefined;
    afterCall = () => {
      calls += 1;
      // The first send's commit failed on the lock: a new send comes in before its second try.
      if (calls === 1) later = queue.send([{ id: "b", body: { n: 2 } }]);
      // The new send's commit, after the second try failed: the lock is let go before its own.
      if (calls === 3) other.exec("COMMIT");
    };
    const statements = await statementsRunWithBusyTimeouts(connection, async () => {
      await expect(queue.send([{ id: "a", body: { n: 1 } }])).rejects.toThrow(/locked|busy/i);
      await later;
    });
    const begins = statements.filter((s) => s.sql === "BEGIN IMMEDIATE").map((s) => s.busyMs);
    expect(begins).toEqual([busyMs, busyMs, SHORT_BUSY_MS, busyMs]);
    expect(queue.stats().jobs).toBe(1);
  });

  it.each(settles)(
    "%s: is given up once stopWaiting is called, its job left leased for the next process",
    async (_kind, settle) => {
      // serve stops: a settle waiting until its lease ended held the stop past its 30 s.
      const { queue, message, waits } = await leasedJob();
      const other = new Database(path);
      whenDone(() => other.close());
      other.exec("BEGIN EXCLUSIVE");
      const settled = settle(queue, message);
      settled.catch(() => undefined);
      await until(() => waits.length > 0);
      queue.stopWaiting();
      await expect(settled).rejects.toThrow(/locked|busy/i);
      // One that fails after the stop is not waited for either.
      await expect(settle(queue, message)).rejects.toThrow(/locked|busy/i);
      other.exec("ROLLBACK");
      // Nothing lost: the next process takes the job back and delivers it.
      const next = open("next");
      expect(next.recoverLeases()).toBe(1);
      expect((await next.receive(1, 60_000)).map((m) => m.id)).toEqual(["a"]);
    },
  );

  it.each(settles)(
    "%s: after stopWaiting, waits for the lock a moment, not the whole busy timeout",
    async (_kind, settle) => {
      // serve stops: each outcome recorded meanwhile on a locked file waited out the busy timeout
      // (5 s), so ten deliveries ending at once held the stop past its 30 s. Here a busy timeout
      // far past this test's own: waited out, the test fails on its timeout.
      const queue = createSqliteQueue<Job>({ path, owner: "serve", now: () => clock, busyTimeoutMs: 60_000 });
      opened.push(queue);
      await queue.send([{ id: "a", body: { n: 1 } }]);
      const [message] = await queue.receive(1, 60_000);
      if (!message) throw new Error("nothing received");
      const other = new Database(path);
      whenDone(() => other.close());
      other.exec("BEGIN EXCLUSIVE");
      queue.stopWaiting();
      await expect(settle(queue, message)).rejects.toThrow(/locked|busy/i);
      other.exec("ROLLBACK");
      // Nothing lost: the next process takes the job back and delivers it.
      const next = open("next");
      expect(next.recoverLeases()).toBe(1);
    },
    20_000,
  );

  it.each(settles)(
    "%s: with under a second of its lease left, is tried again at the lease's end, not given up",
    async (_kind, settle) => {
      // Given up once less than a second was left: its first try waited for the lock a moment
      // (SHORT_BUSY_MS), where the whole busy timeout had got it in, and the job was sent again.
      const { queue, message, waits } = await leasedJob();
      const other = new Database(path);
      other.exec("BEGIN EXCLUSIVE");
      clock += 59_500;
      let outcome: unknown;
      const settled = settle(queue, message).then(
        (changed) => (outcome = changed),
        (e: unknown) => (outcome = e),
      );
      await until(() => waits.length > 0 || outcome !== undefined);
      other.exec("COMMIT");
      other.close();
      await settled;
      expect(outcome).toBe(true);
      expect(waits.at(0)).toMatch(/locked|busy/i);
    },
  );

  it.each(settles)("%s: is given up once the lease it settles has ended", async (_kind, settle) => {
    const { queue, message, calls } = await leasedJob();
    const other = new Database(path);
    whenDone(() => other.close());
    other.exec("BEGIN EXCLUSIVE");
    const before = calls();
    const settled = settle(queue, message);
    settled.catch(() => undefined);
    await until(() => calls() >= before + 1);
    clock += 60_000;
    await expect(settled).rejects.toThrow(/locked|busy/i);
    other.exec("ROLLBACK");
  });
});

/**
 * A queue whose own connection is given back too, to fill its disk: SQLite's max_page_count, set
 * on that connection, fails a write that would grow the file with SQLITE_FULL, as a full disk does.
 */
function openWithConnection(options: Omit<Parameters<typeof createSqliteQueue>[0], "path">) {
  const pragma = Database.prototype.pragma;
  let connection: Database.Database | undefined;
  Database.prototype.pragma = function (this: Database.Database, ...args: Parameters<typeof pragma>) {
    connection ??= this;
    return pragma.apply(this, args);
  };
  let queue: SqliteQueue<Job>;
  try {
    queue = createSqliteQueue<Job>({ path, ...options });
  } finally {
    Database.prototype.pragma = pragma;
  }
  opened.push(queue);
  if (!connection) throw new Error("the queue's connection was not seen");
  const db = connection;
  return {
    queue,
    connection: db,
    /** No page more than the file has now: a write that needs one fails, SQLITE_FULL. */
    fillDisk: () => db.pragma(`max_page_count = ${db.pragma("page_count", { simple: true })}`),
    makeRoom: () => db.pragma("max_page_count = 1073741823"),
  };
}

/**
 * The busy timeout `connection` has in force as each of its statements runs while `body` does,
 * read back from SQLite: how long each would wait for another process's lock.
 */
async function busyTimeoutsAsStatementsRun(
  connection: Database.Database,
  body: () => Promise<void>,
): Promise<number[]> {
  return (await statementsRunWithBusyTimeouts(connection, body)).map((s) => s.busyMs);
}

/** `busyTimeoutsAsStatementsRun`, each with its statement's SQL. */
async function statementsRunWithBusyTimeouts(
  connection: Database.Database,
  body: () => Promise<void>,
): Promise<{ sql: string; busyMs: number }[]> {
  const statement = Object.getPrototypeOf(connection.prepare("SELECT 1")) as Database.Statement;
  const run = statement.run;
  const seen: { sql: string; busyMs: number }[] = [];
  statement.run = function (this: Database.Statement, ...args: Parameters<typeof run>) {
    if (this.database === connection)
      seen.push({ sql: this.source, busyMs: connection.pragma("busy_timeout", { simple: true }) as number });
    return run.apply(this, args);
  };
  try {
    await body();
  } finally {
    statement.run = run;
  }
  return seen;
}

describe("sqlite queue, a delivery settled on a full disk", () => {
  /** Waits until `check` holds, looking every 5 ms; fails the test if it never does. */
  async function until(check: () => boolean): Promise<void> {
    for (let i = 0; i < 2000 && !check(); i++) await new Promise((r) => setTimeout(r, 5));
    expect(check()).toBe(true);
  }

  // Each settle writes a text of 200 KB (the sink's error, or why it is held), which needs pages.
  const big = "x".repeat(200_000);
  const settles: [string, (q: SqliteQueue<Job>, m: ReceivedMessage<Job>) => Promise<boolean>][] = [
    ["retry", (q, m) => q.retry(m, 0, big)],
    ["hold", (q, m) => q.hold(m, 0, big)],
    ["deadLetter", (q, m) => q.deadLetter(m, big)],
  ];

  it.each(settles)(
    "%s: goes in once room is made, before the lease ends, so the job is not sent again",
    async (_kind, settle) => {
      // A settle that failed on a full disk was given up at once: the job stayed leased, came back
      // when its lease ran out and was sent again with the same webhook-id.
      let calls = 0;
      const waits: string[] = [];
      const { queue, fillDisk, makeRoom } = openWithConnection({
        owner: "serve",
        now: () => clock,
        afterCall: () => {
          calls += 1;
        },
        onSettleWait: (error) => waits.push(error === undefined ? "settled" : String(error)),
      });
      await queue.send([{ id: "a", body: { n: 1, text: big } as Job }]);
      const [message] = await queue.receive(1, 60_000);
      if (!message) throw new Error("nothing received");
      fillDisk();
      const before = calls;
      const settled = settle(queue, message);
      settled.catch(() => undefined);
      await until(() => calls >= before + 1 && waits.length > 0);
      expect(waits.at(0)).toMatch(/disk is full/);
      makeRoom();
      expect(await settled).toBe(true);
      expect(waits.at(-1)).toBe("settled");
    },
  );

  it.each(["retry", "hold", "deadLetter"] as const)(
    "%s: tried again, waits for a lock a moment, not the whole busy timeout",
    async (kind) => {
      // Ten deliveries' outcomes tried again each second, each waiting out the busy timeout (5 s
      // in serve) one after another, held the delivery thread 50 s at a time: its stop went
      // unread. A busy timeout far past this test's own here: waited out, the test fails on it.
      const waits: string[] = [];
      const { queue, fillDisk, makeRoom } = openWithConnection({
        owner: "serve",
        now: () => clock,
        busyTimeoutMs: 60_000,
        onSettleWait: (error) => waits.push(error === undefined ? "settled" : String(error)),
      });
      await queue.send([{ id: "a", body: { n: 1 } }]);
      const [message] = await queue.receive(1, 60_000);
      if (!message) throw new Error("nothing received");
      // The first try fails at once on a full disk; the next on the lock taken meanwhile.
      fillDisk();
      const settled =
        kind === "retry"
          ? queue.retry(message, 0, big)
          : kind === "hold"
            ? queue.hold(message, 0, big)
            : queue.deadLetter(message, big);
      await until(() => waits.length > 0);
      const other = new Database(path);
      whenDone(() => other.close());
      other.exec("BEGIN IMMEDIATE");
      makeRoom();
      await until(() => waits.some((w) => /locked|busy/i.test(w)));
      other.exec("COMMIT");
      expect(await settled).toBe(true);
    },
    20_000,
  );

  it("waits for a lock a moment, not the whole busy timeout, while another settle waits", async () => {
    // Ten deliveries ending at once on a locked file: each first try waited out the busy timeout.
    const waits: string[] = [];
    const { queue, fillDisk, makeRoom } = openWithConnection({
      owner: "serve",
      now: () => clock,
      busyTimeoutMs: 60_000,
      onSettleWait: (error) => waits.push(error === undefined ? "settled" : String(error)),
    });
    await queue.send([
      { id: "a", body: { n: 1 } },
      { id: "b", body: { n: 2 } },
    ]);
    const [a, b] = await queue.receive(2, 60_000);
    if (!a || !b) throw new Error("nothing received");
    fillDisk();
    const retried = queue.retry(a, 0, big);
    await until(() => waits.length > 0);
    const other = new Database(path);
    whenDone(() => other.close());
    other.exec("BEGIN IMMEDIATE");
    const second = queue.retry(b, 0, "HTTP 500");
    await until(() => waits.some((w) => /locked|busy/i.test(w)));
    other.exec("COMMIT");
    makeRoom();
    expect(await second).toBe(true);
    expect(await retried).toBe(true);
  }, 20_000);

  it.each(settles)(
    "%s: waits for a lock a moment on its first try too, and puts the busy timeout back, also when it fails",
    async (_kind, settle) => {
      // Only a settle tried again, or made while another waited, waited SHORT_BUSY_MS: the first
      // on a freshly locked file waited out the whole busy timeout (5 s in serve), and so did
      // each one made in the same turn before the first had failed. Read back as each statement
      // runs: the busy timeout in force then.
      const waits: unknown[] = [];
      const { queue, connection, fillDisk, makeRoom } = openWithConnection({
        owner: "serve",
        now: () => clock,
        busyTimeoutMs: 60_000,
        onSettleWait: (error) => waits.push(error),
      });
      await queue.send([{ id: "a", body: { n: 1 } }]);
      const [message] = await queue.receive(1, 60_000);
      if (!message) throw new Error("nothing received");
      const busyTimeout = () => connection.pragma("busy_timeout", { simple: true });
      const seen = busyTimeoutsAsStatementsRun(connection, async () => {
        fillDisk();
        const settled = settle(queue, message);
        // Failed on the full disk, inside the short wait: the full one is back.
        await until(() => waits.length > 0);
        expect(busyTimeout()).toBe(60_000);
        makeRoom();
        expect(await settled).toBe(true);
      });
      expect(new Set(await seen)).toEqual(new Set([SHORT_BUSY_MS]));
      expect(busyTimeout()).toBe(60_000);
    },
  );

  it("tells the wait over only once no settle waits, not when the first of two goes in", async () => {
    // One flag for every settle: the ack that went in told the wait over (serve's /healthz said
    // the outcomes were recorded again) while the retry still waited for room.
    const waits: string[] = [];
    const { queue, fillDisk, makeRoom } = openWithConnection({
      owner: "serve",
      now: () => clock,
      busyTimeoutMs: 0,
      onSettleWait: (error) => waits.push(error === undefined ? "settled" : String(error)),
    });
    await queue.send([
      { id: "a", body: { n: 1 } },
      { id: "b", body: { n: 2 } },
    ]);
    const [a, b] = await queue.receive(2, 60_000);
    if (!a || !b) throw new Error("nothing received");
    const other = new Database(path);
    whenDone(() => other.close());
    other.exec("BEGIN EXCLUSIVE");
    fillDisk();
    const acked = queue.ack(a);
    const retried = queue.retry(b, 0, big);
    retried.catch(() => undefined);
    await until(() => waits.filter((w) => /locked|busy/i.test(w)).length >= 2);
    other.exec("COMMIT");
    expect(await acked).toBe(true);
    // The retry waits on for room: the wait is not over.
    await until(() => waits.some((w) => /disk is full/.test(w)));
    expect(waits).not.toContain("settled");
    makeRoom();
    expect(await retried).toBe(true);
    expect(waits.filter((w) => w === "settled")).toEqual(["settled"]);
    expect(waits.at(-1)).toBe("settled");
  });

  it("waits out the process's file size limit too, which SQLite tells as a write error, not a full disk (built dist/)", async () => {
    // A child whose files may not pass 1 MiB (RLIMIT_FSIZE, as ulimit -f, systemd's LimitFSIZE=
    // or a user's disk quota): the write fails with EFBIG, which SQLite says is
    // SQLITE_IOERR_WRITE, not SQLITE_FULL. The settle was given up at once, and the job sent
    // again when its lease ran out. Its lease is a minute (the monotonic clock), past the test.
    const child = `
      const [queueModule, path] = process.argv.slice(1);
      const { createSqliteQueue } = await import(queueModule);
      const queue = createSqliteQueue({
        path,
        owner: "serve",
        now: () => 1_700_000_000_000,
        onSettleWait: (e) => console.log(e === undefined ? "settled" : "waits " + e.message.split(": ").at(-1)),
      });
      await queue.send([{ id: "a", body: { n: 1 } }]);
      const [message] = await queue.receive(1, 60_000);
      const outcome = await queue.retry(message, 0, "x".repeat(2_000_000)).then(
        (changed) => "retried " + changed,
        (e) => "given up " + e.code,
      );
      console.log(outcome);
      console.log("jobs " + queue.stats().jobs);
      await queue.close();`;
    const module = new URL("../../dist/adapters/queue/sqlite.js", import.meta.url).href;
    const run = spawn(
      "prlimit",
      ["--fsize=1048576:unlimited", process.execPath, "--input-type=module", "-e", child, module, path],
      { cwd: ROOT, stdio: ["ignore", "pipe", "inherit"] },
    );
    // Ended however the test ends: left waiting, it tries each second until its lease's minute is up.
    whenDone(() => run.kill("SIGKILL"));
    const lines: string[] = [];
    for await (const line of createInterface({ input: run.stdout })) {
      // Each failed try says so: a host too loaded to raise the limit within the second between
      // tries sees the wait told again, the product right.
      if (line !== lines.at(-1)) lines.push(line);
      // Room is made: the limit raised on the running process.
      if (line.startsWith("waits "))
        expect(spawnSync("prlimit", ["--pid", String(run.pid), "--fsize=unlimited"]).status).toBe(0);
    }
    expect(lines).toEqual(["waits disk I/O error (SQLITE_IOERR_WRITE)", "settled", "retried true", "jobs 1"]);
  });

  it.skipIf(!TMPFS_IN_NAMESPACE)(
    "waits out a -shm file that cannot grow on a full disk too, which SQLite tells apart from a full WAL (built dist/)",
    async () => {
      // The WAL's index, the -shm file beside the queue file, grows by 32 KiB each 4,062 frames
      // of a WAL a reader's snapshot keeps from being checkpointed: on a disk that filled since
      // the WAL grew, a commit fails there, SQLITE_IOERR_SHMSIZE, not SQLITE_FULL. The settle was
      // given up at once, and the job sent again when its lease ran out. A disk of its own (a
      // tmpfs in a mount namespace), filled to its last page once the WAL is 4,061 frames long
      // and has room for more; the wait empties it. Its lease is a minute, past the test.
      const child = `
        const { appendFileSync, closeSync, openSync, rmSync, statSync, writeSync } = await import("node:fs");
        const { createRequire } = await import("node:module");
        const [queueModule, dir] = process.argv.slice(1);
        const Database = createRequire(queueModule)("better-sqlite3");
        const { createSqliteQueue } = await import(queueModule);
        const path = dir + "/queue.sqlite";
        const filler = dir + "/filler";
        const queue = createSqliteQueue({
          path,
          owner: "serve",
          now: () => 1_700_000_000_000,
          onSettleWait: (e) => {
            console.log(e === undefined ? "settled" : "waits " + e.message.split(": ").at(-1));
            if (e !== undefined) rmSync(filler, { force: true });
          },
        });
        await queue.send([{ id: "a", body: { n: 1 } }]);
        const [message] = await queue.receive(1, 60_000);
        const reader = new Database(path);
        reader.exec("BEGIN");
        reader.prepare("SELECT count(*) FROM queue_jobs").get();
        const writer = new Database(path);
        writer.pragma("wal_autocheckpoint = 0");
        writer.exec("CREATE TABLE pad (x)");
        writer.exec("INSERT INTO pad VALUES (0)");
        const frames = () => (statSync(path + "-wal").size - 32) / 4120;
        while (frames() < 4061) writer.exec("UPDATE pad SET x = x + 1");
        appendFileSync(path + "-wal", Buffer.alloc(4120 * 16));
        const fd = openSync(filler, "w");
        for (const size of [1 << 20, 4096]) {
          try {
            for (;;) writeSync(fd, Buffer.alloc(size, 1));
          } catch {}
        }
        closeSync(fd);
        const outcome = await queue.retry(message, 0, "HTTP 500").then(
          (changed) => "retried " + changed,
          (e) => "given up " + e.code,
        );
        console.log(outcome);
        reader.exec("ROLLBACK");
        reader.close();
        writer.close();
        console.log("jobs " + queue.stats().jobs);
        await queue.close();`;
      const module = new URL("../../dist/adapters/queue/sqlite.js", import.meta.url).href;
      const disk = join(dir, "disk");
      await mkdir(disk);
      const run = spawn(
        "unshare",
        [
          "-rm",
          "sh",
          "-c",
          'mount -t tmpfs -o size=40m tmpfs "$1" && shift && exec "$@"',
          "sh",
          disk,
          process.execPath,
          "--input-type=module",
          "-e",
          child,
          module,
          disk,
        ],
        { cwd: ROOT, stdio: ["ignore", "pipe", "inherit"] },
      );
      whenDone(() => run.kill("SIGKILL"));
      const lines: string[] = [];
      for await (const line of createInterface({ input: run.stdout }))
        if (line !== lines.at(-1)) lines.push(line);
      expect(lines).toEqual([
        "waits disk I/O error (SQLITE_IOERR_SHMSIZE)",
        "settled",
        "retried true",
        "jobs 1",
      ]);
    },
  );
});

describe("sqlite queue, two processes opening a queue file made before its columns at once", () => {
  it("opens, and adds the columns once, wherever in its open the other process opens the file", async () => {
    const outcomes: { step: number; self: string; other: string }[] = [];
    for (let step = 1; ; step++) {
      const file = join(dir, `queue-${step}.sqlite`);
      copyFileSync(join(ROOT, "test/fixtures/upgrade/first-journal/queue.sqlite"), file);
      let self = "opened";
      let other = "not reached";
      let queue: SqliteQueue<Job> | undefined;
      // The other process: a lock it finds held ends its open here (it cannot wait in this
      // thread), and it opens the file again once this one is open.
      const otherOpens = (busyTimeoutMs: number) => {
        try {
          void createSqliteQueue<Job>({ path: file, owner: "other", busyTimeoutMs }).close();
          other = "opened";
        } catch (e) {
          other = e instanceof Error ? e.message : String(e);
        }
      };
      const reached = interleaved(
        () => {
          try {
            queue = createSqliteQueue<Job>({ path: file, owner: "self", now: () => clock });
          } catch (e) {
            self = e instanceof Error ? e.message : String(e);
          }
        },
        step,
        () => otherOpens(0),
      );
      const lockedOut = /database is locked/.test(other);
      if (lockedOut) otherOpens(5000);
      if (!reached) {
        await queue?.close();
        break;
      }
      outcomes.push({ step, self, other: lockedOut ? `locked out, then ${other}` : other });
      if (queue) {
        expect(queue.stats()).toMatchObject({ jobs: 1, deadLetters: 1 });
        await queue.close();
      }
      const raw = new Database(file, { readonly: true });
      const columns = raw
        .prepare("SELECT t.name || '.' || c.name FROM sqlite_schema t, pragma_table_info(t.name) c")
        .pluck()
        .all();
      raw.close();
      expect(columns).toEqual(
        expect.arrayContaining(["queue_jobs.holds", "queue_jobs.interrupted", "queue_dead.grp"]),
      );
    }
    // Every step: this open and the other's succeeded, the other's before this one's upgrade or,
    // locked out by it, after.
    expect(outcomes.filter((o) => o.self !== "opened" || !/opened$/.test(o.other))).toEqual([]);
    expect(outcomes.some((o) => o.other === "opened")).toBe(true);
    expect(outcomes.some((o) => o.other === "locked out, then opened")).toBe(true);
  });
});

describe("sqlite queue, a path it cannot open", () => {
  it.each([
    ["a directory that does not exist", () => join(dir, "missing", "queue.db")],
    ["a path that is a directory", () => dir],
  ])("fails on %s with an error naming the path", async (_case, pathOf) => {
    const bad = pathOf();
    expect(() => createSqliteQueue({ path: bad })).toThrow(`cannot open the SQLite queue at ${bad}`);
  });

  it("fails on a file that is not a database, naming the path", async () => {
    const bad = join(dir, "not-a-db");
    await writeFile(bad, "x".repeat(4096));
    expect(() => createSqliteQueue({ path: bad })).toThrow(
      new RegExp(`cannot open the SQLite queue at ${bad}: .*not a database`),
    );
  });

  it("fails under a parent that is a file, naming the path", async () => {
    await mkdir(join(dir, "sub"));
    await writeFile(join(dir, "sub", "file"), "");
    const bad = join(dir, "sub", "file", "queue.db");
    expect(() => createSqliteQueue({ path: bad })).toThrow(`cannot open the SQLite queue at ${bad}`);
  });
});

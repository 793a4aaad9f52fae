/**
 * The intake journal against a real SQLite queue file: what the answering thread appends, the
 * delivery thread's reader takes into the queue exactly once, across segments, restarts, torn
 * ends and lines that are not jobs.
 */
import { execFileSync, spawn, spawnSync } from "node:child_process";
import { once } from "node:events";
import {
  appendFileSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { basename, join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import {
  journalHeld,
  openJournalReader,
  openJournalWriter,
  SEGMENT_BYTES,
} from "../../src/adapters/queue/journal.js";
import { createSqliteQueue, type SqliteQueue } from "../../src/adapters/queue/sqlite.js";
import { createNotifier } from "../../src/app/notify.js";
import { parseHookEvent } from "../../src/core/events.js";
import { endProcess, ROOT } from "../support/process.js";
import { tempDir, whenDone } from "../support/temp.js";

interface Job {
  readonly n: number;
}

let dir: string;
let journalDir: string;
let opened: SqliteQueue<Job>[];

beforeEach(() => {
  dir = tempDir("journal");
  journalDir = join(dir, "intake");
  opened = [];
});
afterEach(async () => {
  await Promise.all(opened.map((q) => q.close()));
});

/** A queue and a reader on it, as a (re)started delivery thread opens them. */
function deliveryThread(onTorn?: (segment: number, bytes: number) => void) {
  const queue = createSqliteQueue<Job>({ path: join(dir, "queue.sqlite") });
  opened.push(queue);
  const reader = openJournalReader(journalDir, {
    intake: queue.intake,
    position: queue.intakePosition(),
    ...(onTorn ? { onTorn } : {}),
  });
  return { queue, reader };
}

const jobs = (...ns: number[]) => ns.map((n) => ({ id: `job-${n}`, body: { n }, group: "audit" }));

async function receivedNumbers(queue: SqliteQueue<Job>): Promise<number[]> {
  const got = await queue.receive(1000, 60_000);
  return got.map((m) => m.body.n).sort((a, b) => a - b);
}

const segmentFiles = () =>
  readdirSync(journalDir)
    .filter((name) => name.endsWith(".jsonl"))
    .sort();
/** The number of the segment file `name` (intake-<n>.jsonl). */
const numberOf = (name: string | undefined) => Number(/^intake-(\d+)\.jsonl$/.exec(name ?? "")?.[1]);

describe("intake journal", () => {
  it("takes what was appended into the queue once, and a restarted reader resumes where it stopped", async () => {
    const writer = openJournalWriter(journalDir);
    writer.append(jobs(1, 2));
    writer.append(jobs(3));
    const first = deliveryThread();
    expect(await first.reader.drain()).toBe(3);
    expect(await first.reader.drain()).toBe(0);
    expect(first.queue.intakePosition()).toEqual({
      segment: numberOf(segmentFiles()[0]),
      offset: expect.any(Number),
    });
    // Delivered and acked: gone from the queue, so only the recorded position keeps them out.
    for (const m of await first.queue.receive(10, 60_000)) await first.queue.ack(m);
    first.reader.close();
    await first.queue.close();

    writer.append(jobs(4));
    const second = deliveryThread();
    expect(await second.reader.drain()).toBe(1);
    expect(await receivedNumbers(second.queue)).toEqual([4]);
    writer.close();
  });

  it("keeps the job's id, group, delay and body", async () => {
    const writer = openJournalWriter(journalDir);
    writer.append([{ id: "evt_1.audit", body: { n: 7 }, group: "audit", delayMs: 60_000 }]);
    writer.append([{ id: "evt_2.audit", body: { n: 8 } }]);
    const { queue, reader } = deliveryThread();
    await reader.drain();
    // The delayed job is not due yet; the other one is.
    const got = await queue.receive(10, 60_000);
    expect(got.map((m) => [m.id, m.body])).toEqual([["evt_2.audit", { n: 8 }]]);
    writer.close();
  });

  it("moves across segments, deleting each one it has taken in, and a new writer never appends to an old one", async () => {
    const writer = openJournalWriter(journalDir, 100);
    for (let n = 0; n < 10; n++) writer.append(jobs(n));
    expect(segmentFiles().length).toBeGreaterThan(3);
    const { queue, reader } = deliveryThread();
    expect(await reader.drain()).toBe(10);
    // Only the segment being written is left.
    expect(segmentFiles()).toHaveLength(1);
    writer.close();

    const next = openJournalWriter(journalDir, 100);
    next.append(jobs(10));
    expect(segmentFiles()).toHaveLength(2);
    expect(await reader.drain()).toBe(1);
    expect(await receivedNumbers(queue)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    next.close();
  });

  it("makes every segment readable by its own user alone, in a journal folder others may read", () => {
    // A data dir that exists keeps its mode (systemd's StateDirectory makes it 0755), and so does
    // an intake/ folder an earlier release made under the umask: the events journaled there were
    // readable by every user of the host until the delivery thread took them in.
    const previous = process.umask(0o022);
    try {
      mkdirSync(journalDir, { mode: 0o755 });
      const writer = openJournalWriter(journalDir, 100);
      expect(statSync(journalDir).mode & 0o777).toBe(0o755);
      for (let n = 0; n < 4; n++) writer.append(jobs(n));
      writer.close();
      expect(segmentFiles().length).toBeGreaterThan(1);
      const modes = segmentFiles().map((name) => (statSync(join(journalDir, name)).mode & 0o777).toString(8));
      expect(new Set(modes)).toEqual(new Set(["600"]));
    } finally {
      process.umask(previous);
    }
  });

  it("counts the bytes not yet taken in, across segments, down to 0 once they are", async () => {
    const writer = openJournalWriter(journalDir, 100);
    const { reader } = deliveryThread();
    expect(reader.backlogBytes()).toBe(0);
    for (let n = 0; n < 6; n++) writer.append(jobs(n));
    const written = () =>
      segmentFiles().reduce((sum, name) => sum + statSync(join(journalDir, name)).size, 0);
    expect(segmentFiles().length).toBeGreaterThan(1);
    expect(reader.backlogBytes()).toBe(written());
    await reader.drain();
    expect(reader.backlogBytes()).toBe(0);
    // Appended to the segment the reader is part way into: only the new bytes count.
    const before = written();
    writer.append(jobs(6));
    expect(reader.backlogBytes()).toBe(written() - before);
    await reader.drain();
    expect(reader.backlogBytes()).toBe(0);
    writer.close();
  });

  it("skips the torn end of a segment a killed writer left, and takes the next writer's jobs", async () => {
    const writer = openJournalWriter(journalDir);
    writer.append(jobs(1));
    writer.close();
    // The process died in the middle of a write: half a line, whose send never returned.
    const [segment] = segmentFiles();
    // Half of a send of two jobs: neither is taken in.
    const half = '[{"id":"job-2","group":"audit","delayMs":0,"body":{"n":2}},{"id":"job-2b","gr';
    appendFileSync(join(journalDir, segment as string), half);
    const next = openJournalWriter(journalDir);
    next.append(jobs(3));
    const torn: [number, number][] = [];
    const { queue, reader } = deliveryThread((s, bytes) => torn.push([s, bytes]));
    expect(await reader.drain()).toBe(2);
    expect(torn).toEqual([[numberOf(segment), half.length]]);
    expect(await receivedNumbers(queue)).toEqual([1, 3]);
    next.close();
  });

  it("waits for the rest of a line that is still being written", async () => {
    const writer = openJournalWriter(journalDir);
    writer.close();
    const [segment] = segmentFiles();
    const path = join(journalDir, segment as string);
    const line = `${JSON.stringify([{ id: "job-5", group: "audit", delayMs: 0, body: { n: 5 } }])}\n`;
    appendFileSync(path, line.slice(0, 20));
    const { queue, reader } = deliveryThread();
    expect(await reader.drain()).toBe(0);
    appendFileSync(path, line.slice(20));
    expect(await reader.drain()).toBe(1);
    expect(await receivedNumbers(queue)).toEqual([5]);
  });

  it("joins a line longer than many reads once, not once per read", async () => {
    const writer = openJournalWriter(journalDir);
    // 8 MiB of one line: 32 reads of 256 KiB. Joined at every read, it was copied 32 times over
    // (about 130 MiB), as a 64 MiB event was 256 times over.
    const pad = "x".repeat(8 * 1024 * 1024);
    writer.append([{ id: "job-1", body: { n: 1, pad }, group: "audit" }]);
    writer.close();
    const { queue, reader } = deliveryThread();
    const concat = vi.spyOn(Buffer, "concat");
    try {
      expect(await reader.drain()).toBe(1);
      const joined = concat.mock.results.reduce((sum, r) => sum + (r.value as Buffer).length, 0);
      expect(joined).toBeLessThan(2 * pad.length);
    } finally {
      concat.mockRestore();
    }
    const [got] = await queue.receive(1, 60_000);
    expect(got?.body).toEqual({ n: 1, pad });
  });

  it("dead-letters a line that is not a job, as its text, instead of dropping it", async () => {
    const writer = openJournalWriter(journalDir);
    writer.append(jobs(1));
    writer.close();
    const [segment] = segmentFiles();
    appendFileSync(
      join(journalDir, segment as string),
      'garbage from a bad disk\n[{"id":"job-9","body":{"n":9}},{"no":"id"}]\n',
    );
    const { queue, reader } = deliveryThread();
    expect(await reader.drain()).toBe(3);
    expect(await receivedNumbers(queue)).toEqual([1]);
    const dead = await queue.listDead();
    expect(dead.map((d) => d.body)).toEqual([
      "unreadable intake journal line: garbage from a bad disk",
      'unreadable intake journal line: [{"id":"job-9","body":{"n":9}},{"no":"id"}]',
    ]);
    expect(dead[0]?.error).toMatch(/not valid JSON/);
  });

  it("takes in the lines of the journal's first release, one job to a line, as jobs", async () => {
    // A segment that release's serve wrote (test/fixtures/upgrade), read from its start as a
    // journal whose position is gone is.
    const segment = "intake-000000000001.jsonl";
    mkdirSync(journalDir);
    copyFileSync(
      join(ROOT, "test/fixtures/upgrade/first-journal/intake", segment),
      join(journalDir, segment),
    );
    const unreadable: unknown[] = [];
    const queue = createSqliteQueue<{ sink: string }>({ path: join(dir, "queue.sqlite") });
    const reader = openJournalReader(journalDir, {
      intake: queue.intake,
      position: queue.intakePosition(),
      onUnreadable: (line) => unreadable.push(line),
    });
    expect(await reader.drain()).toBe(3);
    expect(unreadable).toEqual([]);
    const got = await queue.receive(10, 60_000);
    expect(got.map((m) => [m.id, m.body.sink])).toEqual([
      ["evt_11a340cd-a299-44aa-a6cc-fd9843d7a266.audit", "audit"],
      ["evt_250c81cf-ae22-458a-a66a-04a0f1032f07.audit", "audit"],
      ["evt_3f706c84-bbb5-4ad6-a036-eae796ee3770.audit", "audit"],
    ]);
    expect(await queue.listDead()).toEqual([]);
    reader.close();
    await queue.close();
  });

  it("tells onUnreadable of each line that is not jobs, where and how long, never its text, once taken in", async () => {
    const writer = openJournalWriter(journalDir);
    writer.append(jobs(1));
    writer.close();
    const [segment] = segmentFiles();
    const path = join(journalDir, segment as string);
    const start = statSync(path).size;
    appendFileSync(path, "token=s3cret garbage\n[1]\n");
    const queue = createSqliteQueue<Job>({ path: join(dir, "queue.sqlite") });
    opened.push(queue);
    const told: unknown[] = [];
    let fail = true;
    const reader = openJournalReader(journalDir, {
      position: queue.intakePosition(),
      // The first commit fails: nothing is told until a read is taken in.
      intake: (rows, position) => {
        if (!fail) return queue.intake(rows, position);
        fail = false;
        return Promise.reject(new Error("SQLITE_BUSY"));
      },
      onUnreadable: (line) => told.push(line),
    });
    await expect(reader.drain()).rejects.toThrow("SQLITE_BUSY");
    expect(told).toEqual([]);
    expect(await reader.drain()).toBe(3);
    const n = numberOf(segment);
    expect(told).toEqual([
      { segment: n, offset: start, bytes: 20, id: `intake-${n}-${start}` },
      { segment: n, offset: start + 21, bytes: 3, id: `intake-${n}-${start + 21}` },
    ]);
    expect(JSON.stringify(told)).not.toContain("s3cret");
    expect(await reader.drain()).toBe(0);
    expect(told).toHaveLength(2);
  });

  it("loses nothing when the queue cannot take a read in, with lines cut at the read's chunk boundary", async () => {
    const writer = openJournalWriter(journalDir);
    // ~600 KB: more than one 256 KiB read, so reads end in the middle of a line.
    const count = 2000;
    for (let n = 0; n < count; n++)
      writer.append([{ id: `job-${n}`, body: { n, pad: "x".repeat(250) }, group: "audit" }]);
    const queue = createSqliteQueue<Job>({ path: join(dir, "queue.sqlite") });
    opened.push(queue);
    let failures = 1;
    const reader = openJournalReader(journalDir, {
      position: queue.intakePosition(),
      // The first commit fails (another process held the lock past the busy timeout).
      intake: (rows, position) =>
        failures-- > 0 ? Promise.reject(new Error("SQLITE_BUSY")) : queue.intake(rows, position),
    });
    await expect(reader.drain()).rejects.toThrow("SQLITE_BUSY");
    expect(await reader.drain()).toBe(count);
    const got = await queue.receive(count + 10, 60_000);
    expect(got).toHaveLength(count);
    for (const m of got) expect(m.id).toBe(`job-${m.body.n}`);
    writer.close();
  });

  it("gives each unreadable line its own id, even after bytes that are not UTF-8", async () => {
    const writer = openJournalWriter(journalDir);
    writer.close();
    const [segment] = segmentFiles();
    const path = join(journalDir, segment as string);
    appendFileSync(path, Buffer.from([0xff, 0xff, 0xff, 0x0a]));
    appendFileSync(path, "x\ny\n");
    const { queue, reader } = deliveryThread();
    expect(await reader.drain()).toBe(3);
    appendFileSync(path, "a later bad line\n");
    expect(await reader.drain()).toBe(1);
    await queue.receive(10, 60_000);
    const dead = await queue.listDead();
    const n = numberOf(segment);
    expect(dead.map((d) => d.id).sort()).toEqual([0, 4, 6, 8].map((offset) => `intake-${n}-${offset}`));
  });

  it("reports a torn end once, when moving past its segment needed a second try", async () => {
    const writer = openJournalWriter(journalDir);
    writer.append(jobs(1));
    writer.close();
    const [segment] = segmentFiles();
    appendFileSync(join(journalDir, segment as string), '[{"id":"cut');
    const next = openJournalWriter(journalDir);
    next.append(jobs(2));
    const queue = createSqliteQueue<Job>({ path: join(dir, "queue.sqlite") });
    opened.push(queue);
    let failMove = true;
    const torn: number[] = [];
    const reader = openJournalReader(journalDir, {
      position: queue.intakePosition(),
      // The commit that moves the position to the next segment fails once.
      intake: (rows, position) => {
        if (rows.length === 0 && failMove) {
          failMove = false;
          return Promise.reject(new Error("SQLITE_BUSY"));
        }
        return queue.intake(rows, position);
      },
      onTorn: (s) => torn.push(s),
    });
    await expect(reader.drain()).rejects.toThrow("SQLITE_BUSY");
    expect(await reader.drain()).toBe(1);
    expect(torn).toEqual([numberOf(segment)]);
    expect(await receivedNumbers(queue)).toEqual([1, 2]);
    next.close();
  });

  it("starts at the first segment left when the recorded one is gone (deleted before the position moved)", async () => {
    const writer = openJournalWriter(journalDir, 100);
    writer.append(jobs(1));
    writer.append(jobs(2));
    writer.append(jobs(3));
    const first = deliveryThread();
    // Take segment 1 in, then stop as if killed between deleting it and recording the move.
    expect(await first.reader.drain()).toBe(3);
    first.reader.close();
    await first.queue.close();
    writer.close();
    const [done] = segmentFiles();
    expect(existsSync(join(journalDir, done as string))).toBe(true);
    rmSync(join(journalDir, done as string));
    // A later start: the first segment of a journal that has none is numbered from the clock.
    const next = openJournalWriter(journalDir, 100, () => Date.now() + 60_000);
    next.append(jobs(4));
    const second = deliveryThread();
    expect(await second.reader.drain()).toBe(1);
    expect(await receivedNumbers(second.queue)).toEqual([1, 2, 3, 4]);
    next.close();
  });

  it("shares one more drain among the calls made during a drain", async () => {
    const writer = openJournalWriter(journalDir);
    writer.append(jobs(1));
    const { queue, reader } = deliveryThread();
    const a = reader.drain();
    writer.append(jobs(2));
    const b = reader.drain();
    const c = reader.drain();
    expect(b).toBe(c);
    expect((await a) + (await b)).toBe(2);
    expect(await receivedNumbers(queue)).toEqual([1, 2]);
    writer.close();
  });

  it("writes a send too long for one line as several lines under the bound, and takes every job in", async () => {
    // The bound made small, as a 60 MiB event sent to nine sinks passes the real one (LINE_CHARS):
    // joined into one line it was longer than V8's longest string, and every job was lost.
    const bound = 1000;
    const writer = openJournalWriter(journalDir, SEGMENT_BYTES, Date.now, bound);
    const pad = "x".repeat(400);
    const send = [1, 2, 3, 4, 5, 6, 7, 8, 9].map((n) => ({
      id: `evt_1.sink-${n}`,
      // One job past the bound by itself: a line of its own.
      body: { n, pad: n === 5 ? pad.repeat(3) : pad },
      group: `sink-${n}`,
    }));
    writer.append(send);
    // The common case is still one line: a few small jobs.
    writer.append(jobs(10, 11));
    writer.close();
    const [segment] = segmentFiles();
    const lines = readFileSync(join(journalDir, segment as string), "utf8").split("\n");
    expect(lines.pop()).toBe("");
    // Lines of 2, 2, the long one alone, 2, 2, then the small send's one line.
    expect(lines.map((line) => (JSON.parse(line) as { id: string }[]).map((job) => job.id))).toEqual([
      ["evt_1.sink-1", "evt_1.sink-2"],
      ["evt_1.sink-3", "evt_1.sink-4"],
      ["evt_1.sink-5"],
      ["evt_1.sink-6", "evt_1.sink-7"],
      ["evt_1.sink-8", "evt_1.sink-9"],
      ["job-10", "job-11"],
    ]);
    for (const line of lines) if (!line.includes("sink-5")) expect(line.length).toBeLessThanOrEqual(bound);

    const { queue, reader } = deliveryThread();
    expect(await reader.drain()).toBe(11);
    const got = await queue.receive(100, 60_000);
    expect(got.map((m) => [m.id, m.body])).toEqual([
      ...send.map((job) => [job.id, job.body]),
      ["job-10", { n: 10 }],
      ["job-11", { n: 11 }],
    ]);
    expect(await queue.listDead()).toEqual([]);
  });

  it("reads a segment an older build wrote, a long send as one line, and the split lines after it", async () => {
    const pad = "y".repeat(400);
    const send = (event: number) =>
      [1, 2, 3].map((n) => ({
        id: `evt_${event}.sink-${n}`,
        group: `sink-${n}`,
        delayMs: 0,
        body: { n, pad },
      }));
    // The older build's form: the send's jobs in one array on one line, however long.
    mkdirSync(journalDir);
    writeFileSync(join(journalDir, "intake-000000000001.jsonl"), `${JSON.stringify(send(1))}\n`);
    // This build, taking over that journal, splits the same send under a small bound.
    const writer = openJournalWriter(journalDir, SEGMENT_BYTES, Date.now, 1000);
    writer.append(send(2));
    writer.close();
    expect(segmentFiles()).toHaveLength(2);
    const { queue, reader } = deliveryThread();
    expect(await reader.drain()).toBe(6);
    const got = await queue.receive(100, 60_000);
    expect(got.map((m) => m.id)).toEqual([...send(1), ...send(2)].map((job) => job.id));
    expect(await queue.listDead()).toEqual([]);
  });

  it("fails a job too long for a string with its size and the setting to lower, writing nothing", async () => {
    const writer = openJournalWriter(journalDir);
    writer.append(jobs(1));
    // 2 x 2^28 characters: longer, as JSON, than V8's longest string (2^29 - 24), as a job of a
    // huge event can be. Thrown as V8's "Invalid string length" alone, it named nothing to change.
    const half = "z".repeat(2 ** 28);
    expect(() => writer.append([{ id: "evt_big.audit", body: { a: half, b: half } }])).toThrow(
      /^job evt_big\.audit is too large to journal: .*longer than 536870888 characters.*lower defaults\.maxBodyBytes/,
    );
    writer.append(jobs(2));
    writer.close();
    const { queue, reader } = deliveryThread();
    expect(await reader.drain()).toBe(2);
    expect(await receivedNumbers(queue)).toEqual([1, 2]);
  });

  it("fails an append whose jobs cannot be serialised, writing nothing, and takes the next one", async () => {
    const writer = openJournalWriter(journalDir);
    writer.append(jobs(1));
    // A body JSON cannot hold fails before anything is written.
    const cyclic: { self?: unknown } = {};
    cyclic.self = cyclic;
    expect(() => writer.append([{ id: "x", body: cyclic }])).toThrow(/circular/);
    writer.append(jobs(2));
    expect(segmentFiles()).toHaveLength(1);
    const { queue, reader } = deliveryThread();
    expect(await reader.drain()).toBe(2);
    expect(await receivedNumbers(queue)).toEqual([1, 2]);
    writer.close();
  });

  it("refuses an append after close, starting no segment, so a late one cannot end the next process's live segment", async () => {
    const old = openJournalWriter(journalDir);
    old.append(jobs(1));
    old.close();
    // The next `serve` claims the data dir: its writer starts the live segment.
    const fresh = openJournalWriter(journalDir);
    const { queue, reader } = deliveryThread();
    fresh.append(jobs(2));
    expect(await reader.drain()).toBe(2);
    const before = segmentFiles();
    // A handler of the old process finishing late.
    expect(() => old.append(jobs(3))).toThrow(/intake journal is closed/);
    expect(segmentFiles()).toEqual(before);
    old.close(); // closing again is safe
    fresh.append(jobs(4));
    fresh.append(jobs(5));
    expect(await reader.drain()).toBe(2);
    expect(await receivedNumbers(queue)).toEqual([1, 2, 4, 5]);
    fresh.close();
  });

  it("on serve's path, an append after close is a failed enqueue: logged and counted, the decision answered", async () => {
    const writer = openJournalWriter(journalDir);
    writer.close();
    const logs: [string, string, unknown][] = [];
    const counted: string[] = [];
    const notifier = createNotifier({
      // As node.ts's queue: one append to the journal.
      queue: {
        async send(messages) {
          writer.append(messages);
        },
      },
      clock: { now: () => 1_700_000_000_000, monotonic: () => 0 },
      logger: { log: (level, msg, fields) => logs.push([level, msg, fields]) },
      metrics: { increment: (name) => counted.push(name) },
      defer: (task) => task(),
    });
    const event = parseHookEvent({
      session_id: "s",
      transcript_path: "/t",
      cwd: "/p",
      hook_event_name: "SessionEnd",
      reason: "other",
    });
    if (!event.ok) throw new Error(event.error.message);
    await expect(
      notifier.notify({
        decisionId: "d1",
        event: event.value,
        team: "t",
        decision: "none",
        reason: undefined,
        notify: [{ ruleId: "r", sinks: ["audit"] }],
        remember: false,
      }),
    ).resolves.toBeUndefined();
    expect(logs).toEqual([
      [
        "error",
        "enqueue failed; the decision was answered anyway",
        expect.objectContaining({
          decisionId: "d1",
          error: expect.stringMatching(/intake journal is closed/),
        }),
      ],
    ]);
    expect(counted).toEqual(["hookgate_enqueue_failed_total"]);
    expect(segmentFiles()).toHaveLength(1);
  });

  describe("a journal directory removed while queue.sqlite keeps its position", () => {
    /** Takes in what is journaled, as a delivery thread does, and stops; reports repositions. */
    async function takeIn(moved: string[] = []) {
      const queue = createSqliteQueue<Job>({ path: join(dir, "queue.sqlite") });
      const reader = openJournalReader(journalDir, {
        intake: queue.intake,
        position: queue.intakePosition(),
        onReposition: (_recorded, start, why) => {
          expect(start).toEqual({ segment: numberOf(segmentFiles()[0]), offset: 0 });
          moved.push(why);
        },
      });
      await reader.drain();
      const got = (await queue.receive(1000, 60_000)).map((m) => m.id);
      for (const m of await queue.receive(1000, 60_000)) await queue.ack(m);
      reader.close();
      await queue.close();
      return got;
    }
    const padded = (prefix: string, count: number, pad = 200) =>
      Array.from({ length: count }, (_, n) => [
        { id: `${prefix}-${n}`, body: { n, pad: "x".repeat(pad) }, group: "audit" },
      ]);

    it("takes every job answered after each removal in, exactly once", async () => {
      const taken: string[] = [];
      const answered: string[] = [];
      const t0 = Date.now();
      for (let run = 0; run < 4; run++) {
        // Each run a later `serve`; its journal is removed after it stopped.
        const writer = openJournalWriter(journalDir, SEGMENT_BYTES, () => t0 + run * 60_000);
        for (const send of padded(`run${run}`, 10 + run)) {
          writer.append(send);
          answered.push(send[0]?.id ?? "");
        }
        taken.push(...(await takeIn()));
        writer.close();
        rmSync(journalDir, { recursive: true, force: true });
      }
      expect(taken.sort()).toEqual(answered.sort());
    });

    it("numbers a new journal's first segment from the clock, and an existing one's from its last", async () => {
      const at = Date.UTC(2026, 0, 1);
      openJournalWriter(journalDir, SEGMENT_BYTES, () => at).close();
      expect(segmentFiles()).toEqual([`intake-${String(at / 10).padStart(12, "0")}.jsonl`]);
      rmSync(journalDir, { recursive: true });
      // A data dir of an earlier release, numbered from 1: it goes on from there.
      mkdirSync(journalDir);
      const legacy = join(journalDir, "intake-000000000001.jsonl");
      writeFileSync(legacy, `${JSON.stringify(jobs(1).map((j) => ({ ...j, delayMs: 0 })))}\n`);
      expect(await takeIn()).toEqual(["job-1"]);
      appendFileSync(legacy, `${JSON.stringify(jobs(2).map((j) => ({ ...j, delayMs: 0 })))}\n`);
      const writer = openJournalWriter(journalDir, SEGMENT_BYTES, () => at);
      writer.append(jobs(3));
      expect(segmentFiles()).toEqual(["intake-000000000001.jsonl", "intake-000000000002.jsonl"]);
      // Its recorded position in segment 1 still applies.
      const moved: string[] = [];
      expect(await takeIn(moved)).toEqual(["job-2", "job-3"]);
      expect(moved).toEqual([]);
      writer.close();
    });

    // The clock does not always tell a new journal from the old one (it was stepped back): the
    // reader then refuses a position that cannot be the new journal's.
    it.each([
      ["past the end of its segment", 3, 200, /past the end/],
      ["not at the start of a line", 20, 150, /not at the start of a line/],
    ])(
      "reads the new journal from its start when the recorded position is %s",
      async (_, count, pad, why) => {
        const clock = () => Date.UTC(2026, 0, 1);
        const old = openJournalWriter(journalDir, SEGMENT_BYTES, clock);
        for (const send of padded("old", 10)) old.append(send);
        expect(await takeIn()).toHaveLength(10);
        old.close();
        rmSync(journalDir, { recursive: true });
        const fresh = openJournalWriter(journalDir, SEGMENT_BYTES, clock);
        for (const send of padded("new", count, pad)) fresh.append(send);
        const moved: string[] = [];
        const taken = await takeIn(moved);
        expect(taken.sort()).toEqual(
          padded("new", count, pad)
            .map((s) => s[0]?.id)
            .sort(),
        );
        expect(moved).toEqual([expect.stringMatching(why)]);
        fresh.close();
      },
    );

    it("reads the new journal from its start when a segment below the recorded one is left", async () => {
      const at = Date.UTC(2026, 0, 1);
      const old = openJournalWriter(journalDir, 300, () => at);
      for (const send of padded("old", 3)) old.append(send);
      expect(await takeIn()).toHaveLength(3);
      old.close();
      // The segment the position is in, the only one left.
      const recorded = numberOf(segmentFiles()[0]);
      rmSync(journalDir, { recursive: true });
      // A clock stepped back by 10 ms: the new journal's segments reach the old position's.
      const fresh = openJournalWriter(journalDir, 300, () => at - 10);
      for (const send of padded("new", 5)) fresh.append(send);
      expect(segmentFiles().map(numberOf)).toEqual([recorded - 2, recorded - 1, recorded]);
      const moved: string[] = [];
      const taken = await takeIn(moved);
      expect(taken.sort()).toEqual(
        padded("new", 5)
          .map((s) => s[0]?.id)
          .sort(),
      );
      expect(moved).toEqual([expect.stringMatching(/earlier segment/)]);
      fresh.close();
    });

    it("starts at the first segment written when none is left, and says why", async () => {
      const old = openJournalWriter(journalDir);
      old.append(jobs(1));
      expect(await takeIn()).toEqual(["job-1"]);
      old.close();
      rmSync(journalDir, { recursive: true });
      const moved: string[] = [];
      const queue = createSqliteQueue<Job>({ path: join(dir, "queue.sqlite") });
      opened.push(queue);
      const reader = openJournalReader(journalDir, {
        intake: queue.intake,
        position: queue.intakePosition(),
        onReposition: (_recorded, start, why) => moved.push(`${start.segment}:${start.offset} ${why}`),
      });
      expect(moved).toEqual(["0:0 its segment is gone"]);
      // Written after the reader opened, numbered below or above the old one: taken in all the same.
      const fresh = openJournalWriter(journalDir, SEGMENT_BYTES, () => 10_000);
      fresh.append(jobs(2));
      expect(await reader.drain()).toBe(1);
      expect(await receivedNumbers(queue)).toEqual([2]);
      fresh.close();
      reader.close();
    });
  });

  it("never deletes a segment another writer still appends to, and takes in all of both writers' lines", async () => {
    // Two serve processes on one journal (serve.lock deleted): the first one's segment is not
    // complete because the second one's is later.
    const first = openJournalWriter(journalDir);
    first.append(jobs(1));
    const second = openJournalWriter(journalDir);
    second.append(jobs(2));
    const [live] = segmentFiles();
    const { queue, reader } = deliveryThread();
    expect(await reader.drain()).toBe(1);
    expect(segmentFiles()).toContain(live);
    // Appended after the reader saw a later segment: before, it went to a deleted file.
    first.append(jobs(3));
    expect(await reader.drain()).toBe(1);
    first.close();
    // Done with it: the reader takes it to its end, deletes it with its lock, and moves on.
    expect(await reader.drain()).toBe(1);
    expect(
      readdirSync(journalDir).filter((name) => name.startsWith(live?.replace(".jsonl", "") ?? "-")),
    ).toEqual([]);
    second.append(jobs(4));
    expect(await reader.drain()).toBe(1);
    expect(await receivedNumbers(queue)).toEqual([1, 2, 3, 4]);
    second.close();
  });

  it("makes a writer's next segment above every segment left, so one running behind the reader is still taken in", async () => {
    // Every lock file deleted by hand and a second serve started: it numbers its segments after
    // the first one's, and the reader moves past them while the first still writes its own.
    const first = openJournalWriter(journalDir, 100);
    first.append(jobs(1));
    for (const name of readdirSync(journalDir)) if (name.endsWith(".lock")) rmSync(join(journalDir, name));
    const second = openJournalWriter(journalDir, 100);
    for (const n of [2, 3, 4, 5, 6, 7]) second.append(jobs(n));
    const { queue, reader } = deliveryThread();
    await reader.drain();
    // The first one's segment was deleted under it (its lock file gone): it copies it out, and
    // the copy must land where the reader has yet to go, not on a number it has moved past.
    first.append(jobs(8));
    first.check();
    // It waits behind the second one's live segment, and is taken in once that one is done.
    second.close();
    await reader.drain();
    expect(await receivedNumbers(queue)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    first.close();
  });

  it("leaves a live segment's lock held for other processes after the reader, in the writer's process, looked at it", async () => {
    // POSIX locks are per process: a descriptor of the writer's process closed on the lock file
    // drops the writer's lock, and a second serve would then find the journal free.
    const first = openJournalWriter(journalDir);
    first.append(jobs(1));
    const [lock] = readdirSync(journalDir).filter((name) => name.endsWith(".lock"));
    const second = openJournalWriter(journalDir);
    second.append(jobs(2));
    const { reader } = deliveryThread();
    await reader.drain();
    expect(journalHeld(journalDir)).toBe(true);
    const probe = `const D = require("better-sqlite3"); const db = new D(process.argv[1], { timeout: 0 });
      try { db.exec("BEGIN EXCLUSIVE"); console.log("free"); } catch (e) { console.log(e.code); }`;
    const seen = execFileSync(process.execPath, ["-e", probe, join(journalDir, lock as string)], {
      cwd: ROOT,
    });
    expect(seen.toString().trim()).toBe("SQLITE_BUSY");
    first.close();
    second.close();
  });

  it("copies a segment deleted under its writer to a new one on check, losing none of its lines", async () => {
    // A second reader whose lock check found no lock file (deleted by hand) deleted the live
    // segment after taking in its first line; the second went to the deleted file.
    const writer = openJournalWriter(journalDir);
    writer.append(jobs(1));
    const { queue, reader } = deliveryThread();
    expect(await reader.drain()).toBe(1);
    writer.append(jobs(2));
    const [live] = segmentFiles();
    rmSync(join(journalDir, live as string));
    rmSync(join(journalDir, (live as string).replace(".jsonl", ".lock")));
    // Appended to the deleted file, and copied out with the rest on the next check.
    writer.append(jobs(3));
    expect(segmentFiles()).toHaveLength(0);
    writer.check();
    expect(segmentFiles()).toHaveLength(1);
    await reader.drain();
    // Job 1 is taken in again; the queue still holds it, so it is there once.
    expect(await receivedNumbers(queue)).toEqual([1, 2, 3]);
    expect(journalHeld(journalDir)).toBe(true);
    writer.close();
  });

  it("copies a segment deleted under its writer when it fills before the next check, losing none of its lines", async () => {
    const writer = openJournalWriter(journalDir, 100);
    writer.append(jobs(1));
    for (const name of readdirSync(journalDir)) rmSync(join(journalDir, name));
    // The second fills it (past 100 bytes) and the third moves to a new segment: no check between.
    writer.append(jobs(2));
    writer.append(jobs(3));
    writer.close();
    const { queue, reader } = deliveryThread();
    await reader.drain();
    expect(await receivedNumbers(queue)).toEqual([1, 2, 3]);
  });

  it.each([
    ["the next append", "append"],
    ["the next check", "check"],
  ])("copies a deleted segment a write cut short tore, on %s (built dist/)", async (_, then) => {
    // A child whose files may not pass 4 KiB (RLIMIT_FSIZE): a real write cut short, part of
    // the line written and then EFBIG. Its segment was deleted first (every lock file deleted,
    // a second serve's reader took it in); killed before any close.
    const child = `
      const { readdirSync, rmSync } = await import("node:fs");
      const { join } = await import("node:path");
      const [journal, dir, then] = process.argv.slice(1);
      const { openJournalWriter } = await import(journal);
      const jobs = (n, pad = "") => [{ id: "job-" + n, body: { n, pad }, group: "audit" }];
      const writer = openJournalWriter(dir);
      writer.append(jobs(1));
      writer.append(jobs(2));
      for (const name of readdirSync(dir)) rmSync(join(dir, name));
      try { writer.append(jobs(3, "x".repeat(8000))); } catch (e) { console.log(e.code); }
      if (then === "append") writer.append(jobs(4));
      else writer.check();
      process.kill(process.pid, "SIGKILL");`;
    const journal = new URL("../../dist/adapters/queue/journal.js", import.meta.url).href;
    const run = spawnSync(
      "prlimit",
      ["--fsize=4096", process.execPath, "--input-type=module", "-e", child, journal, journalDir, then],
      { cwd: ROOT },
    );
    expect(run.signal).toBe("SIGKILL");
    expect(run.stdout.toString().trim()).toBe("EFBIG");
    const torn: number[] = [];
    const { queue, reader } = deliveryThread((_segment, bytes) => torn.push(bytes));
    await reader.drain();
    // Lines 1 and 2 were only in the deleted segment; 3 was never appended.
    expect(await receivedNumbers(queue)).toEqual(then === "append" ? [1, 2, 4] : [1, 2]);
    // The cut line is the copy's torn end: skipped, never glued to line 4.
    if (then === "append") expect(torn).toHaveLength(1);
  });

  it("copies a deleted segment on check, with no append after the delete", async () => {
    const writer = openJournalWriter(journalDir);
    writer.append(jobs(1));
    const [live] = segmentFiles();
    rmSync(join(journalDir, live as string));
    writer.check();
    const { queue, reader } = deliveryThread();
    await reader.drain();
    expect(await receivedNumbers(queue)).toEqual([1]);
    writer.close();
  });

  it("copies its segment out when the journal directory was removed under it, making the directory again", async () => {
    const writer = openJournalWriter(journalDir);
    writer.append(jobs(1));
    const { queue, reader } = deliveryThread();
    expect(await reader.drain()).toBe(1);
    // `rm -rf` of the journal while serve runs: the writer's segment is deleted with its directory.
    rmSync(journalDir, { recursive: true });
    writer.append(jobs(2));
    writer.check();
    expect(segmentFiles()).toHaveLength(1);
    await reader.drain();
    expect(await receivedNumbers(queue)).toEqual([1, 2]);
    writer.close();
  });

  it("names the complete segments removed with the journal directory before the reader opened them, whose lines are lost", async () => {
    const queue = createSqliteQueue<Job>({ path: join(dir, "queue.sqlite") });
    opened.push(queue);
    let locked = false;
    const gone: number[] = [];
    const reader = openJournalReader(journalDir, {
      // The queue file locked by another process: every intake fails.
      intake: (rows, position) =>
        locked ? Promise.reject(new Error("database is locked")) : queue.intake(rows, position),
      position: queue.intakePosition(),
      onGone: (segment) => gone.push(segment),
    });
    // Segments two jobs long: the writer moves on every other append.
    const writer = openJournalWriter(journalDir, 100);
    for (let n = 1; n <= 4; n++) writer.append(jobs(n));
    // Read across segments as they come, and every segment read deleted: none is told as gone.
    expect(await reader.drain()).toBe(4);
    reader.backlogBytes();
    expect(gone).toEqual([]);

    locked = true;
    for (let n = 5; n <= 10; n++) writer.append(jobs(n));
    await expect(reader.drain()).rejects.toThrow(/locked/);
    // The gauges read the backlog every 5 s, drains failing or not.
    reader.backlogBytes();
    const waiting = segmentFiles().map(numberOf);
    expect(waiting).toHaveLength(3);
    // `rm -rf` of the journal: the writer copies out the segment it writes, not the two before it.
    rmSync(journalDir, { recursive: true });
    writer.check();
    locked = false;
    await reader.drain();
    expect(await receivedNumbers(queue)).toEqual([1, 2, 3, 4, 9, 10]);
    expect(gone).toEqual(waiting.slice(0, 2));
    writer.close();
  });

  it("makes the data dir it copies its segment into again readable by its user alone, as serve makes it", () => {
    const dataDir = join(dir, "data");
    const inData = join(dataDir, "intake");
    const writer = openJournalWriter(inData);
    writer.append(jobs(1));
    // The whole data dir removed while serve runs: made again with its journal's copy, it was
    // made with the umask's mode (0755), and the copy of the queue put back in it could be read
    // by every user.
    rmSync(dataDir, { recursive: true });
    writer.check();
    expect(statSync(dataDir).mode & 0o777).toBe(0o700);
    expect(statSync(inData).mode & 0o777).toBe(0o700);
    writer.close();
  });

  it("tells whether a writer holds the journal, and frees it on close", () => {
    expect(journalHeld(journalDir)).toBe(false);
    const writer = openJournalWriter(journalDir, 100);
    expect(journalHeld(journalDir)).toBe(true);
    // Past its first segment, it holds the one it writes.
    for (let n = 0; n < 5; n++) writer.append(jobs(n));
    expect(journalHeld(journalDir)).toBe(true);
    writer.close();
    expect(journalHeld(journalDir)).toBe(false);
  });

  it("removes at start the free locks of segments that are gone, and still finds a writer whose own segment is gone", () => {
    // Locks left with no segment (segments deleted by hand): no reader removes them, so they piled
    // up and every start opened each one again.
    // Numbered from 1 (a clock that gives no number), below the live writer's segments, numbered
    // from the clock: a free lock above every segment left is kept (the next test), and numbered
    // from the clock too, these could be above the live writer's copy.
    for (const n of [1, 2, 3]) {
      const writer = openJournalWriter(journalDir, SEGMENT_BYTES, () => 0);
      writer.append(jobs(n));
      writer.close();
    }
    for (const name of segmentFiles()) rmSync(join(journalDir, name));
    // A live writer whose segment was deleted alone holds a lock whose segment is gone.
    const live = openJournalWriter(journalDir);
    live.append(jobs(4));
    for (const name of segmentFiles()) rmSync(join(journalDir, name));
    expect(journalHeld(journalDir)).toBe(true);
    // Copied out at close to a new segment with its own lock: the old one is left with no segment.
    live.close();
    expect(journalHeld(journalDir)).toBe(false);
    const locks = readdirSync(journalDir).filter((name) => name.endsWith(".lock"));
    expect(locks).toEqual(segmentFiles().map((name) => name.replace(".jsonl", ".lock")));
    expect(locks).toHaveLength(1);
  });

  it("leaves at start a free lock numbered above every segment left: a writer may have opened it to take it", () => {
    const writer = openJournalWriter(journalDir);
    writer.append(jobs(1));
    writer.close();
    // Another serve's writer (serve.lock deleted) making its next segment, as findLock does: the
    // lock file opened, not locked yet; the segment is made once it is.
    const name = `intake-${String(numberOf(segmentFiles().at(-1)) + 1).padStart(12, "0")}`;
    const opening = new Database(join(journalDir, `${name}.lock`), { timeout: 0 });
    try {
      expect(journalHeld(journalDir)).toBe(false);
      opening.pragma("journal_mode = MEMORY");
      opening.exec("BEGIN EXCLUSIVE");
      writeFileSync(join(journalDir, `${name}.jsonl`), "");
      // Removed at that start, the lock taken was of no file: this start was let in, and a reader
      // would take the live segment for one with no lock.
      expect(journalHeld(journalDir)).toBe(true);
    } finally {
      opening.close();
    }
  });

  it("still finds a writer running in another process after its lock file was deleted by hand (built dist/)", async () => {
    // A serve's writer, as node.ts runs it: its check called on a timer (oftener than serve's,
    // so that what is seen is the start's look, not how late the timer fires).
    const child = `
      const [journal, dir] = process.argv.slice(1);
      const { openJournalWriter } = await import(journal);
      const writer = openJournalWriter(dir);
      writer.append([{ id: "job-1", body: { n: 1 }, group: "audit" }]);
      setInterval(() => writer.check(), 50);
      console.log("writing");`;
    const journal = new URL("../../dist/adapters/queue/journal.js", import.meta.url).href;
    const writer = spawn(process.execPath, ["--input-type=module", "-e", child, journal, journalDir], {
      cwd: ROOT,
      stdio: ["ignore", "pipe", "inherit"],
    });
    whenDone(() => endProcess(writer));
    await once(writer.stdout, "data");
    expect(journalHeld(journalDir)).toBe(true);
    // An operator takes the lock files for stale ones: the start looked at none, so a second
    // serve started beside the first on its journal.
    for (const name of readdirSync(journalDir)) if (name.endsWith(".lock")) rmSync(join(journalDir, name));
    expect(journalHeld(journalDir)).toBe(true);
    // Killed, the lock it took again is free, and its segment is taken in whole.
    writer.kill("SIGKILL");
    await once(writer, "exit");
    expect(journalHeld(journalDir)).toBe(false);
    const { queue, reader } = deliveryThread();
    await reader.drain();
    expect(await receivedNumbers(queue)).toEqual([1]);
  });

  it("waits for no writer at a start on a new journal, after a clean stop or after a kill (built dist/)", async () => {
    // The start's wait (two checks) is for a segment whose lock file was deleted: an ordinary
    // start must not pay it. Atomics.wait is that wait.
    const wait = vi.spyOn(Atomics, "wait");
    whenDone(() => wait.mockRestore());
    expect(journalHeld(journalDir)).toBe(false);
    mkdirSync(journalDir, { recursive: true });
    expect(journalHeld(journalDir)).toBe(false);
    // Stopped cleanly after moving across segments, some taken in and deleted.
    const writer = openJournalWriter(journalDir, 200);
    for (let n = 1; n <= 10; n++) writer.append(jobs(n));
    const { queue, reader } = deliveryThread();
    await reader.drain();
    writer.close();
    expect(journalHeld(journalDir)).toBe(false);
    // Killed (kill -9) after moving across segments, nothing taken in.
    const child = `
      const [journal, dir] = process.argv.slice(1);
      const { openJournalWriter } = await import(journal);
      const writer = openJournalWriter(dir, 200);
      for (let n = 11; n <= 20; n++) writer.append([{ id: "job-" + n, body: { n }, group: "audit" }]);
      process.kill(process.pid, "SIGKILL");`;
    const journal = new URL("../../dist/adapters/queue/journal.js", import.meta.url).href;
    const run = spawnSync(process.execPath, ["--input-type=module", "-e", child, journal, journalDir], {
      cwd: ROOT,
    });
    expect(run.signal).toBe("SIGKILL");
    expect(journalHeld(journalDir)).toBe(false);
    // Killed between taking its next lock and making that segment.
    const above = numberOf(segmentFiles().at(-1)) + 1;
    const killed = new Database(join(journalDir, `intake-${String(above).padStart(12, "0")}.lock`));
    killed.exec("BEGIN EXCLUSIVE");
    killed.close();
    expect(journalHeld(journalDir)).toBe(false);
    expect(wait).not.toHaveBeenCalled();
    // What it waits for: a segment whose lock file is gone.
    for (const name of readdirSync(journalDir)) if (name.endsWith(".lock")) rmSync(join(journalDir, name));
    expect(journalHeld(journalDir, 1)).toBe(false);
    expect(wait).toHaveBeenCalledTimes(1);
    await reader.drain();
    expect(await receivedNumbers(queue)).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
  });

  it("throws nothing from check when its lock path cannot even be looked at, and takes its lock again once it can", () => {
    const writer = openJournalWriter(journalDir);
    writer.append(jobs(1));
    const [lock] = readdirSync(journalDir).filter((name) => name.endsWith(".lock"));
    const path = join(journalDir, lock as string);
    // Its lock file replaced by a link to itself: every look at the path fails (ELOOP). serve
    // logged that each second as a deleted segment it could not copy, though none was deleted.
    rmSync(path);
    symlinkSync(basename(path), path);
    expect(() => writer.check()).not.toThrow();
    writer.append(jobs(2));
    rmSync(path);
    writer.check();
    expect(journalHeld(journalDir)).toBe(true);
    writer.close();
    expect(journalHeld(journalDir)).toBe(false);
  });

  it("takes a free lock a killed writer left above every segment as its next segment's own: held, never removed from under it", async () => {
    const first = openJournalWriter(journalDir);
    first.append(jobs(1));
    first.close();
    const n = numberOf(segmentFiles().at(-1)) + 1;
    const path = join(journalDir, `intake-${String(n).padStart(12, "0")}.lock`);
    // Killed between taking its next lock and making that segment.
    const killed = new Database(path, { timeout: 0 });
    killed.pragma("journal_mode = MEMORY");
    killed.exec("BEGIN EXCLUSIVE");
    killed.close();
    const file = statSync(path).ino;
    // The start leaves it (a writer may have opened it to take it), and the next writer takes it.
    expect(journalHeld(journalDir)).toBe(false);
    const writer = openJournalWriter(journalDir);
    writer.append(jobs(2));
    expect(segmentFiles().map(numberOf)).toEqual([n - 1, n]);
    expect(statSync(path).ino).toBe(file);
    expect(journalHeld(journalDir)).toBe(true);
    const { queue, reader } = deliveryThread();
    await reader.drain();
    writer.append(jobs(3));
    await reader.drain();
    expect(await receivedNumbers(queue)).toEqual([1, 2, 3]);
    writer.close();
    expect(readdirSync(journalDir).sort()).toEqual(
      [`intake-${String(n).padStart(12, "0")}.jsonl`, basename(path)].sort(),
    );
  });

  it("skips a next segment number whose lock path cannot be a lock, rather than failing every append", async () => {
    const first = openJournalWriter(journalDir);
    first.append(jobs(1));
    first.close();
    const n = numberOf(segmentFiles().at(-1));
    const lockPath = (k: number) => join(journalDir, `intake-${String(k).padStart(12, "0")}.lock`);
    // Above every segment, where the next writer takes its lock: a directory, a file not SQLite's.
    mkdirSync(join(lockPath(n + 1), "kept"), { recursive: true });
    writeFileSync(lockPath(n + 2), "not a SQLite file, whatever it is".repeat(4));
    expect(journalHeld(journalDir)).toBe(false);
    // Opening threw (a serve that could not start), and so did every append of a writer open.
    const writer = openJournalWriter(journalDir);
    writer.append(jobs(2));
    expect(segmentFiles().map(numberOf)).toEqual([n, n + 3]);
    expect(journalHeld(journalDir)).toBe(true);
    const { queue, reader } = deliveryThread();
    await reader.drain();
    expect(await receivedNumbers(queue)).toEqual([1, 2]);
    writer.close();
  });

  it("reads a lock path that cannot be a lock (a directory, a file not SQLite's) as free: no refusal, no wait", async () => {
    // No writer can hold such a path (its own lock would fail the same way), so serve is not
    // refused for it and the reader does not wait behind its segment for ever.
    for (const [n, spoil] of [
      [1, (path: string) => mkdirSync(path)],
      [2, (path: string) => writeFileSync(path, "not a SQLite file, whatever it is".repeat(4))],
    ] as const) {
      const writer = openJournalWriter(journalDir);
      writer.append(jobs(n));
      writer.close();
      const lock = join(journalDir, (segmentFiles().at(-1) as string).replace(".jsonl", ".lock"));
      rmSync(lock);
      spoil(lock);
    }
    expect(journalHeld(journalDir)).toBe(false);
    const writer = openJournalWriter(journalDir);
    writer.append(jobs(3));
    const { queue, reader } = deliveryThread();
    expect(await reader.drain()).toBe(3);
    expect(await receivedNumbers(queue)).toEqual([1, 2, 3]);
    expect(segmentFiles()).toHaveLength(1);
    writer.close();
  });

  it("never reads a file that is not a segment", async () => {
    const writer = openJournalWriter(journalDir);
    writer.append(jobs(1));
    writeFileSync(join(journalDir, "notes.txt"), "not a segment\n");
    const { queue, reader } = deliveryThread();
    expect(await reader.drain()).toBe(1);
    expect(await receivedNumbers(queue)).toEqual([1]);
    writer.close();
  });
});

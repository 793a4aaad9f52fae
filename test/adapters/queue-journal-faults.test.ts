/**
 * The intake journal's writer when the system refuses it room: the real journal and queue files,
 * with the copy's writes refused (ENOSPC) or a segment's creation (EMFILE) for as long as the test
 * says, since a full disk or an fd table at its limit cannot be made for one test. A deleted
 * segment's copy is not given up: the lines stay in the deleted file, still open, and the next
 * check copies them; a segment not made leaves no lock file. A removal can also be refused
 * (EPERM), or stand for a kill between a finished segment's two removals, and the look at a lock
 * file just taken can fail (EACCES).
 */
import { mkdirSync, readdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { beforeEach, expect, it, vi } from "vitest";
import { journalHeld, openJournalReader, openJournalWriter } from "../../src/adapters/queue/journal.js";
import { createSqliteQueue } from "../../src/adapters/queue/sqlite.js";
import { createNotifier } from "../../src/app/notify.js";
import { parseHookEvent } from "../../src/core/events.js";
import { notSentBy } from "../../src/core/queue.js";
import { tempDir } from "../support/temp.js";

const disk = vi.hoisted(() => ({
  full: false,
  noSegment: false,
  refused: false,
  cut: false,
  /** Writes that go through before the next one is cut short (`cut`). */
  writesLeft: Number.POSITIVE_INFINITY,
  removals: Number.POSITIVE_INFINITY,
  /** Runs once, right after the next listing of a directory returns. */
  afterList: undefined as (() => void) | undefined,
  /** Runs once, when the next write or segment is refused. */
  onRefusal: undefined as (() => void) | undefined,
  /** The next look at a lock file's identity fails (EACCES). */
  lockStat: false,
}));
const refuse = (message: string, code: string) => {
  const then = disk.onRefusal;
  disk.onRefusal = undefined;
  then?.();
  return Object.assign(new Error(message), { code });
};
vi.mock("node:fs", async (importOriginal) => {
  const fs = await importOriginal<typeof import("node:fs")>();
  return {
    ...fs,
    openSync: (...args: Parameters<typeof fs.openSync>) => {
      // Out of descriptors once SQLite opened the segment's lock, so the segment cannot be made.
      if (disk.noSegment && args[1] === "wx+") throw refuse("EMFILE: too many open files, open", "EMFILE");
      return fs.openSync(...args);
    },
    rmSync: (...args: Parameters<typeof fs.rmSync>) => {
      // The process "dies" at its next removal once the count runs out: nothing after it runs.
      if (disk.removals-- <= 0) throw Object.assign(new Error("killed"), { code: "EKILLED" });
      if (disk.refused)
        throw Object.assign(new Error("EPERM: operation not permitted, unlink"), { code: "EPERM" });
      return fs.rmSync(...args);
    },
    statSync: (...args: Parameters<typeof fs.statSync>) => {
      if (disk.lockStat && String(args[0]).endsWith(".lock")) {
        disk.lockStat = false;
        throw Object.assign(new Error("EACCES: permission denied, stat"), { code: "EACCES" });
      }
      return fs.statSync(...args);
    },
    readdirSync: (...args: Parameters<typeof fs.readdirSync>) => {
      const names = fs.readdirSync(...args);
      const after = disk.afterList;
      disk.afterList = undefined;
      after?.();
      return names;
    },
    writeSync: (...args: Parameters<typeof fs.writeSync>) => {
      if (disk.writesLeft-- <= 0) {
        disk.writesLeft = Number.POSITIVE_INFINITY;
        disk.cut = true;
      }
      // A write cut short: half of what is left is written, then the disk is full.
      if (disk.cut) {
        // The journal's form: (fd, buffer, offset).
        const [fd, buffer, offset] = args as unknown as [number, NodeJS.ArrayBufferView, number];
        disk.cut = false;
        disk.full = true;
        return fs.writeSync(fd, buffer, offset, Math.ceil((buffer.byteLength - offset) / 2));
      }
      if (disk.full) throw refuse("ENOSPC: no space left on device, write", "ENOSPC");
      return fs.writeSync(...args);
    },
  };
});

let dir: string;
beforeEach(() => {
  dir = tempDir("journal-faults");
  disk.full = false;
  disk.noSegment = false;
  disk.refused = false;
  disk.cut = false;
  disk.writesLeft = Number.POSITIVE_INFINITY;
  disk.removals = Number.POSITIVE_INFINITY;
  disk.afterList = undefined;
  disk.onRefusal = undefined;
  disk.lockStat = false;
});

const jobs = (n: number) => [{ id: `job-${n}`, body: { n }, group: "audit" }];

it("keeps a deleted segment's lines when copying them out fails, and copies them on a later check", async () => {
  const journalDir = join(dir, "intake");
  const writer = openJournalWriter(journalDir);
  writer.append(jobs(1));
  writer.append(jobs(2));
  // A second reader deleted the live segment and its lock (every lock file deleted by hand).
  for (const name of readdirSync(journalDir)) rmSync(join(journalDir, name));
  disk.full = true;
  expect(() => writer.check()).toThrow("ENOSPC");
  disk.full = false;
  writer.append(jobs(3));
  writer.check();
  writer.close();

  const queue = createSqliteQueue<{ n: number }>({ path: join(dir, "queue.sqlite") });
  const reader = openJournalReader(journalDir, { intake: queue.intake, position: queue.intakePosition() });
  await reader.drain();
  const got = await queue.receive(100, 60_000);
  expect(got.map((m) => m.body.n).sort()).toEqual([1, 2, 3]);
  // The failed copy left no segment or lock behind.
  expect(readdirSync(journalDir)).toHaveLength(2);
  reader.close();
  await queue.close();
});

it("says so when a deleted segment cannot be copied out at close, and still frees its lock", () => {
  const journalDir = join(dir, "intake");
  const writer = openJournalWriter(journalDir);
  writer.append(jobs(1));
  for (const name of readdirSync(journalDir)) rmSync(join(journalDir, name));
  disk.full = true;
  // Its lines are lost: serve logs that (node.ts) rather than stopping as if nothing was.
  expect(() => writer.close()).toThrow("ENOSPC");
  disk.full = false;
  expect(journalHeld(journalDir)).toBe(false);
  expect(readdirSync(journalDir)).toEqual([]);
  writer.close();
  expect(() => writer.append(jobs(2))).toThrow("closed");
});

it("frees the lock of a failed copy it could not remove, so the reader does not wait behind it", async () => {
  const journalDir = join(dir, "intake");
  const writer = openJournalWriter(journalDir);
  writer.append(jobs(1));
  writer.append(jobs(2));
  for (const name of readdirSync(journalDir)) rmSync(join(journalDir, name));
  // The copy's write fails, and so does the removal of what it made.
  disk.full = true;
  disk.refused = true;
  // The disk's fault first: the removal's alone told of a permission, not of a full disk.
  expect(() => writer.check()).toThrow(/^ENOSPC: .*EPERM: /);
  disk.full = false;
  disk.refused = false;
  // Copied out at close to a later segment. The failed copy's lock, taken until the process
  // ended, held the reader behind that segment, the later one unread.
  writer.close();
  expect(journalHeld(journalDir)).toBe(false);
  const queue = createSqliteQueue<{ n: number }>({ path: join(dir, "queue.sqlite") });
  const reader = openJournalReader(journalDir, { intake: queue.intake, position: queue.intakePosition() });
  await reader.drain();
  const got = await queue.receive(100, 60_000);
  expect(got.map((m) => m.body.n).sort()).toEqual([1, 2]);
  reader.close();
  await queue.close();
});

it("skips a line a write cut short, and never glues the next one to it", async () => {
  const journalDir = join(dir, "intake");
  const writer = openJournalWriter(journalDir);
  writer.append(jobs(1));
  disk.cut = true;
  expect(() => writer.append(jobs(2))).toThrow("ENOSPC");
  disk.full = false;
  writer.check();
  writer.append(jobs(3));
  writer.append(jobs(4));
  writer.close();
  // The cut one and the next, which 3 and 4 share: the move is made once.
  expect(readdirSync(journalDir).filter((name) => name.endsWith(".jsonl"))).toHaveLength(2);
  const torn: number[] = [];
  const queue = createSqliteQueue<{ n: number }>({ path: join(dir, "queue.sqlite") });
  const reader = openJournalReader(journalDir, {
    intake: queue.intake,
    position: queue.intakePosition(),
    onTorn: (_segment, bytes) => torn.push(bytes),
  });
  await reader.drain();
  const got = await queue.receive(100, 60_000);
  // 2's append threw: not delivered. Glued to it, 3 was read as a line that is not jobs.
  expect(got.map((m) => m.body.n).sort()).toEqual([1, 3, 4]);
  expect(torn).toHaveLength(1);
  reader.close();
  await queue.close();
});

it("names the jobs not written when a send split into several lines fails after its first", async () => {
  const journalDir = join(dir, "intake");
  // A bound every job passes by itself: one line per job.
  const writer = openJournalWriter(journalDir, undefined, undefined, 10);
  const send = [1, 2, 3, 4].map((n) => ({ id: `evt_1.sink-${n}`, body: { n }, group: `sink-${n}` }));
  // The third line is cut short, then the disk is full.
  disk.writesLeft = 2;
  const error = thrown(() => writer.append(send));
  expect(error.message).toMatch(/^ENOSPC: .*its first 2 of 4 jobs were written/);
  expect(notSentBy(error)).toEqual(new Set(["evt_1.sink-3", "evt_1.sink-4"]));
  disk.full = false;
  writer.append(jobs(5));
  writer.close();
  const torn: number[] = [];
  const queue = createSqliteQueue<{ n: number }>({ path: join(dir, "queue.sqlite") });
  const reader = openJournalReader(journalDir, {
    intake: queue.intake,
    position: queue.intakePosition(),
    onTorn: (_segment, bytes) => torn.push(bytes),
  });
  await reader.drain();
  const got = await queue.receive(100, 60_000);
  // The lines before the cut one, whole, and the next send's.
  expect(got.map((m) => m.body.n).sort()).toEqual([1, 2, 5]);
  expect(torn).toHaveLength(1);
  expect(await queue.listDead()).toEqual([]);
  reader.close();
  await queue.close();
});

it("on serve's path, a split send that fails part way counts its written jobs as enqueued and logs the others' sinks", async () => {
  const journalDir = join(dir, "intake");
  const writer = openJournalWriter(journalDir, undefined, undefined, 10);
  const logs: [string, string, unknown][] = [];
  const counted: [string, unknown][] = [];
  const notifier = createNotifier({
    // As node.ts's queue: one append to the journal.
    queue: {
      async send(messages) {
        writer.append(messages);
      },
    },
    clock: { now: () => 1_700_000_000_000, monotonic: () => 0 },
    logger: { log: (level, msg, fields) => logs.push([level, msg, fields]) },
    metrics: { increment: (name, labels) => counted.push([name, labels]) },
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
  disk.writesLeft = 1;
  await notifier.notify({
    decisionId: "d1",
    event: event.value,
    team: "t",
    decision: "none",
    reason: undefined,
    notify: [{ ruleId: "r", sinks: ["a", "b", "c"] }],
    remember: false,
  });
  disk.full = false;
  writer.close();
  expect(logs).toEqual([
    [
      "error",
      "enqueue failed; the decision was answered anyway",
      expect.objectContaining({ decisionId: "d1", sinks: ["b", "c"], sent: ["a"] }),
    ],
  ]);
  expect(counted).toEqual([
    ["hookgate_enqueued_total", { sink: "a" }],
    ["hookgate_enqueue_failed_total", { sink: "b" }],
    ["hookgate_enqueue_failed_total", { sink: "c" }],
  ]);
  const queue = createSqliteQueue<{ sink: string }>({ path: join(dir, "queue.sqlite") });
  const reader = openJournalReader(journalDir, { intake: queue.intake, position: queue.intakePosition() });
  await reader.drain();
  expect((await queue.receive(100, 60_000)).map((m) => m.body.sink)).toEqual(["a"]);
  reader.close();
  await queue.close();
});

it("leaves no lock file behind for a segment it could not make, however many appends fail", () => {
  const journalDir = join(dir, "intake");
  const writer = openJournalWriter(journalDir, 10);
  writer.append(jobs(1));
  disk.noSegment = true;
  for (let n = 2; n < 12; n++) expect(() => writer.append(jobs(n))).toThrow("EMFILE");
  disk.noSegment = false;
  writer.append(jobs(12));
  writer.close();
  const names = readdirSync(journalDir);
  // Two segments, each with its lock: no lock of the ten segments never made.
  expect(names.filter((name) => name.endsWith(".lock"))).toHaveLength(2);
  expect(names).toHaveLength(4);
});

it("leaves no lock file for ever when killed between a segment's two removals", async () => {
  const journalDir = join(dir, "intake");
  const writer = openJournalWriter(journalDir, 10);
  writer.append(jobs(1));
  writer.append(jobs(2));
  const queue = createSqliteQueue<{ n: number }>({ path: join(dir, "queue.sqlite") });
  const first = openJournalReader(journalDir, { intake: queue.intake, position: queue.intakePosition() });
  disk.removals = 1;
  await first.drain().catch(() => 0);
  disk.removals = Number.POSITIVE_INFINITY;
  first.close();
  // Restarted: what the first reader left of the segment goes too.
  const second = openJournalReader(journalDir, { intake: queue.intake, position: queue.intakePosition() });
  await second.drain();
  writer.close();
  expect(readdirSync(journalDir)).toHaveLength(2);
  const got = await queue.receive(100, 60_000);
  expect(got.map((m) => m.body.n).sort()).toEqual([1, 2]);
  second.close();
  await queue.close();
});

it("finds a running writer that moved to its next segment between the start's listing and its look at the locks", () => {
  const journalDir = join(dir, "intake");
  // Another serve (serve.lock deleted) whose segment is full: its next append moves it on.
  const writer = openJournalWriter(journalDir, 10);
  writer.append(jobs(1));
  // Its lock of the next segment is taken before the old one is freed, but after this listing:
  // the one lock listed was free when looked at, and the start was let in beside a live writer.
  disk.afterList = () => writer.append(jobs(2));
  expect(journalHeld(journalDir)).toBe(true);
  writer.close();
  expect(journalHeld(journalDir)).toBe(false);
});

/** A file the writer made, replaced by a non-empty directory: `rmSync` cannot remove it. */
const inTheWay = (path: string) => {
  rmSync(path);
  mkdirSync(join(path, "kept"), { recursive: true });
};
const thrown = (run: () => void) => {
  try {
    run();
  } catch (e) {
    return e as Error & { code?: string };
  }
  throw new Error("nothing thrown");
};

it("names the copy's own failure first when what it made cannot be removed, and still frees the lock", () => {
  const journalDir = join(dir, "intake");
  const writer = openJournalWriter(journalDir);
  writer.append(jobs(1));
  for (const name of readdirSync(journalDir)) rmSync(join(journalDir, name));
  // The copy's write finds the disk full, and its segment, to be removed, is a directory by then.
  disk.full = true;
  disk.onRefusal = () => {
    const [made] = readdirSync(journalDir).filter((name) => name.endsWith(".jsonl"));
    inTheWay(join(journalDir, made as string));
  };
  const error = thrown(() => writer.check());
  expect(error.code).toBe("ENOSPC");
  // The operator's log line (node.ts) showed "Path is a directory" alone.
  expect(error.message).toMatch(/^ENOSPC: no space left on device, write \(.*directory/);
  expect((error as AggregateError).errors).toHaveLength(2);
  disk.full = false;
  expect(journalHeld(journalDir)).toBe(false);
});

it("names the segment's own failure first when its lock file cannot be removed", () => {
  const journalDir = join(dir, "intake");
  const writer = openJournalWriter(journalDir, 10);
  writer.append(jobs(1));
  disk.noSegment = true;
  disk.onRefusal = () => {
    const locks = readdirSync(journalDir)
      .filter((name) => name.endsWith(".lock"))
      .sort();
    inTheWay(join(journalDir, locks.at(-1) as string));
  };
  const error = thrown(() => writer.append(jobs(2)));
  expect(error.code).toBe("EMFILE");
  expect(error.message).toMatch(/^EMFILE: too many open files, open \(.*directory/);
  disk.noSegment = false;
  writer.close();
});

it("frees a lock it took when the look at its file fails, rather than holding it until the process ends", () => {
  const journalDir = join(dir, "intake");
  const writer = openJournalWriter(journalDir, 10);
  writer.append(jobs(1));
  // Its next segment's lock is taken, then the look at which file it is fails: that append fails.
  disk.lockStat = true;
  expect(() => writer.append(jobs(2))).toThrow("EACCES");
  writer.append(jobs(3));
  writer.close();
  // Held by a connection nothing closed, a start was refused until the process ended.
  expect(journalHeld(journalDir)).toBe(false);
});

/**
 * The intake journal of `serve`: how a notify job gets from the thread that answers hooks to the
 * SQLite queue that the delivery thread owns, without a commit on the answer's path.
 *
 * The writer (the answering thread) appends each send's jobs as one JSON line (an array; several
 * for a send too long for one, see "A send's lines" below) with one synchronous `write` before the
 * answer goes out: once it returns, the jobs are in the OS page cache and
 * survive a SIGKILL, the same guarantee as a SQLite commit in WAL mode with `synchronous =
 * NORMAL`. The reader (the delivery thread) takes complete lines into the queue and records how
 * far it read in the same commit (sqlite.ts `intake`), so a restart resumes exactly there.
 *
 * The journal is a directory of segments, `intake-<n>.jsonl`. A writer never appends to a segment
 * it did not create: it starts a new one when it opens (a segment left by a killed process may
 * end in a torn line), when its segment passes SEGMENT_BYTES and after a write into it was cut
 * short (part of a line may end it). While it may append to a segment it holds that segment's
 * lock, `intake-<n>.lock` (below). A segment is complete once a
 * later one exists and its lock is free: the reader takes it to its end, skips a torn last line
 * (a write cut short: it never returned, so its send failed and nothing of it is delivered),
 * deletes it and moves on.
 *
 * Why a lock per segment, and not "a later segment exists" alone: that rule holds for one writer.
 * Two `serve` processes on one data dir (its `serve.lock` deleted, so the second one's claim
 * succeeded) are two writers, and a reader that took the first one's live segment for complete
 * deleted it while that writer went on appending to the deleted file: every event it answered
 * after that was lost. The lock is an exclusive transaction on a SQLite file, the same kind as
 * `serve.lock`: the operating system drops it when the process ends, however it ends, so a killed
 * writer's segment is never held for ever, and a writer in another process, thread or connection
 * is seen alike. It sits beside the data it guards, where an operator clearing "stale" lock files
 * from the data dir is less likely to reach, and `serve` refuses to start while any segment's lock
 * is held (`journalHeld`), so deleting `serve.lock` alone no longer lets a second one in.
 *
 * A lock file deleted by hand (an operator clearing "stale" locks) is taken again by its writer:
 * on `check()` (serve calls it every CHECK_MS, a second) a writer whose lock file is gone, or is
 * another file than the one it locked, takes a lock on a new file at that path and frees the old
 * one, which no one else can see any more. And `journalHeld`, finding a segment with no lock file,
 * waits two CHECK_MS for its writer to do that and looks again: a second `serve` started right
 * after the delete is still refused. Why not another design: a lock on the segment file itself
 * is dropped whenever any descriptor of the writer's process on that file closes (POSIX locks are
 * per process), which the delivery thread's reads do; the segments other processes have open
 * (`/proc`) are Linux's alone. This adds nothing to an append, a `stat` of the lock file to each
 * check, and to a start only where a segment has no lock file (a delete by hand, a journal of an
 * older build, a kill between a reader's two removals): one wait, then one listing more.
 *
 * Between the delete and the writer's next check, its lock file is missing and read as free (a
 * writer of an older build made none), so a second reader already running can still delete the
 * live segment. The writer sees that instead: on `check()`
 * (serve calls it every second; `close` and a move to a new segment, full or ended by a write cut
 * short, do too: closing the deleted file would lose its lines) a writer whose segment was deleted under it
 * (`nlink` 0) copies all the segment held, still readable through its descriptor, into a new
 * segment with a lock of its own, and goes on there. Not before each append: an `fstat` there
 * would add a system call to every notify event's answer (bench/README.md row 5a) for a data dir
 * whose every lock was deleted by hand, and what is appended to the deleted file meanwhile is in
 * the copy all the same. Lines written between the reader's last read and its delete are in that copy; so are
 * the lines it took in, which are taken in again: a notify event is delivered twice rather than
 * lost (a receiver keeping each `webhook-id` once drops the second). Only a kill before the
 * writer's next check loses the lines the reader had not taken in. With two live writers, one's
 * later segments wait behind the other's live one: late (until that writer rotates or stops),
 * never lost.
 *
 * A free lock above every segment (a writer killed between taking its next lock and making that
 * segment, or segments deleted by hand and their locks left) is taken by the next writer that
 * reaches its number as its segment's own, not removed; that is sound because nothing removes a
 * lock above every segment (`journalHeld` and the reader remove one only below a later segment),
 * so the file a writer opens is still the one it locks and the one others look at, and it holds
 * it as any lock it made: a start is refused, a reader waits. Removed instead, a writer that had
 * opened it and not yet locked it would lock the removed file, its segment then seen with no
 * lock. Such locks never pile up: a writer tries the lowest number above every segment first, so
 * it takes one before it makes a new one. A path there that cannot be a lock (a directory, a file
 * not SQLite's), read as no lock by everyone, is skipped: the writer takes the next number
 * (taking it threw, and every append, or serve's start, failed with it).
 *
 * A send's lines: a send's jobs are one line while that line is at most LINE_CHARS (64 Mi)
 * characters, as every ordinary event's are: one `write`, taken in entirely or not at all. A
 * longer one (an event of tens of MiB, once per sink: nine sinks of a 60 MiB event passed V8's
 * longest string, and `JSON.stringify` of the line threw, every sink's job lost) is written as
 * several lines, each an array of the jobs that fit under the bound, in order (one job alone when
 * it passes the bound by itself), each job serialised once as before. The reader reads them as it
 * reads any line, and a segment of one long line (an older build's) as before. The trade: such a
 * send is no longer taken in entirely or not at all. The lines before a write that fails are
 * whole and delivered; that line (torn, skipped by the reader) and the ones after it are not, and
 * the append throws a `SendFailedError` (core/queue.ts) naming those jobs, as a send that failed
 * in part on SQS does, so notify.ts counts the others as enqueued and logs the sinks whose jobs
 * are lost. A first line that fails fails the send whole, as ever; so does a job too long for a
 * string by itself, before anything is written (`serialise`).
 *
 * A writer that finds no segment (a new journal, or one removed while queue.sqlite kept its
 * position) numbers its first from the clock, not from 1, so that a position the queue kept from
 * an earlier journal names no segment of the new one; and the reader applies a recorded position
 * only where it can be this journal's (`misplaced`), else it reads from the first segment's start.
 */

import { constants } from "node:buffer";
import {
  type BigIntStats,
  closeSync,
  fstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  readSync,
  rmSync,
  statSync,
  writeSync,
} from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { errorMessage } from "../../core/errors.js";
import { type OutgoingMessage, SendFailedError } from "../../core/queue.js";
import type { IntakePosition, IntakeRow } from "./sqlite.js";

/** A writer moves to a new segment once its segment is this big. */
export const SEGMENT_BYTES = 4 * 1024 * 1024;

/**
 * The mode of the journal's directory, and of the data dir above it, when the journal makes them:
 * its user's alone, as `serve` makes its data dir, for they hold the notify events.
 */
const JOURNAL_DIR_MODE = 0o700;

/**
 * The longest line a send's jobs are joined into, in characters of its JSON; a send past it is
 * written as several lines (see "A send's lines" above). 64 Mi, one eighth of the longest string
 * V8 holds (MAX_STRING_LENGTH, 2^29 - 24 on 64-bit): a line is built as one string, then its
 * bytes (up to 3 per character, 192 MiB, within a Buffer's limit), and read back as one string
 * that is parsed (`parseLines`), so each stays far from the limit whatever the line holds. And it
 * is the largest `defaults.maxBodyBytes`: the jobs of an ordinary event are one line, and each
 * job of the largest events about a line by itself, so the reader holds about one job's line at
 * a time rather than every sink's at once.
 */
export const LINE_CHARS = 64 * 1024 * 1024;

/**
 * How often `serve` calls a writer's `check`; `journalHeld` waits twice as long for a writer to
 * take its deleted lock again.
 */
export const CHECK_MS = 1000;

const NAME = /^intake-(\d{12})\.jsonl$/;
const segmentName = (n: number) => `intake-${String(n).padStart(12, "0")}.jsonl`;
const LOCK_NAME = /^intake-(\d{12})\.lock$/;
const lockName = (n: number) => `intake-${String(n).padStart(12, "0")}.lock`;

/**
 * Takes segment `n`'s lock (an exclusive transaction on `intake-<n>.lock`, made if missing): the
 * lock's connection, or undefined when another writer holds it. Closing the connection frees it.
 */
function takeLock(dir: string, n: number): HeldLock | undefined {
  const lock = findLock(dir, n, true);
  if (lock === "held" || lock === "none") return undefined;
  // Which file it is, so that `check` sees it deleted or replaced; gone already, it is taken
  // again at the next check. A look that fails frees the lock before it throws: nothing else
  // would close it, and it was held until the process ended.
  // As bigints: inode numbers past 2^53 (overlayfs with xino) lose their low bits as numbers.
  let file: BigIntStats | undefined;
  try {
    file = statSync(join(dir, lockName(n)), { bigint: true, throwIfNoEntry: false });
  } catch (e) {
    lock.close();
    throw e;
  }
  return { db: lock, n, dev: file?.dev, ino: file?.ino };
}

/** A lock a writer holds: its connection (closing it frees the lock) and the file it was taken on. */
interface HeldLock {
  readonly db: Database.Database;
  readonly n: number;
  readonly dev: bigint | undefined;
  readonly ino: bigint | undefined;
}

/**
 * Segment `n`'s lock as a reader finds it: taken (its connection: closing it frees the lock),
 * "held" by a writer, or "none". None when there is no lock file (a segment of an older build, or
 * its lock deleted), nor when the path cannot be a lock (a directory, a file that is not
 * SQLite's): no writer can hold one, and read as held it would refuse every `serve` and stop the
 * reader behind its segment for ever. A file that could not be opened (out of descriptors) is
 * taken for held: late, never deleted under its writer. Only SQLite opens a lock file: any other
 * descriptor of this process closed on it would drop the locks this process holds on it, its
 * writer's among them (POSIX locks are per process; SQLite keeps a table of its own to avoid
 * that). `create` (a writer's take): the file is made if missing, and every failure but "held"
 * throws.
 */
function findLock(dir: string, n: number, create = false): Database.Database | "held" | "none" {
  const path = join(dir, lockName(n));
  let lock: Database.Database;
  try {
    lock = new Database(path, { timeout: 0, fileMustExist: !create });
  } catch (e) {
    if ((e as { code?: string }).code !== "SQLITE_CANTOPEN") throw e;
    const found = statSync(path, { throwIfNoEntry: false });
    // A writer's take: what is there is no file (a directory), or it cannot be opened at all
    // (out of descriptors), which throws.
    if (create) {
      if (found && !found.isFile()) return "none";
      throw e;
    }
    return found?.isFile() ? "held" : "none";
  }
  try {
    // No `-journal` file beside it: the transaction never writes, and a killed holder would
    // leave one behind.
    lock.pragma("journal_mode = MEMORY");
    lock.exec("BEGIN EXCLUSIVE");
    return lock;
  } catch (e) {
    lock.close();
    const code = (e as { code?: string }).code;
    if (code === "SQLITE_BUSY") return "held";
    if (code === "SQLITE_NOTADB") return "none";
    throw e;
  }
}

/**
 * Whether a writer, in this process or another, holds the lock of one of the journal's segments:
 * a `serve` is running on it. `serve` refuses to start then (node.ts `claim`).
 *
 * Every lock is looked at before it answers no, but a running writer almost always holds its own
 * segment's, the newest: locks whose segment is left go first, newest first, and the first held
 * one ends the look. A lock whose segment is gone is looked at too (a writer whose segment was
 * deleted by hand holds it until its copy, within a second, or longer on a full disk) and, found
 * free and below a segment left, removed while taken: no reader removes it (it moves from
 * segment to segment), so such locks (segments deleted by hand, a kill between a lock and its
 * segment) piled up and every start opened each one, 0.1 to 0.4 ms apiece. Not one above every
 * segment left: that is the number a writer makes next, and one that has opened the lock file
 * and not yet locked it would lock the removed file, its segment then with no lock (the reader
 * removes a lock only below a later segment for the same reason). Those few are taken by the
 * next writer as its own (see the file's header). The directory is listed again while a lock not
 * looked at appears: a writer that moved on after a listing left only a free lock in it. A segment
 * with no lock file makes it wait `settleMs` once and look at every lock again: a writer whose
 * lock file was deleted by hand takes it again at its next check.
 */
export function journalHeld(dir: string, settleMs = 2 * CHECK_MS): boolean {
  // A writer moving on takes its next lock before it frees the one it had: one that moved after
  // the listing left a free lock in it and a held one not in it. The directory is listed again
  // until no lock appears that was not looked at (one more listing at a start let in).
  const seen = new Set<number>();
  let waited = false;
  for (;;) {
    let names: string[];
    try {
      names = readdirSync(dir);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === "ENOENT") return false;
      throw e;
    }
    const left = new Set<number>();
    const locks: number[] = [];
    for (const name of names) {
      const segment = NAME.exec(name);
      if (segment) left.add(Number(segment[1]));
      const lock = LOCK_NAME.exec(name);
      if (lock) locks.push(Number(lock[1]));
    }
    const fresh = locks.filter((n) => !seen.has(n));
    if (fresh.length > 0) {
      for (const n of fresh) seen.add(n);
      if (lookAtLocks(dir, left, locks)) return true;
      continue;
    }
    // A segment with no lock file: its writer, if it runs, takes a lock there again at its next
    // check (its lock file deleted by hand). Waited for once, then every lock looked at again.
    const named = new Set(locks);
    const unlocked = [...left].some((n) => !named.has(n));
    if (waited || !unlocked) return false;
    waited = true;
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, settleMs);
    seen.clear();
  }
}

/** One look of `journalHeld` at the locks listed: whether one is held. */
function lookAtLocks(dir: string, left: ReadonlySet<number>, locks: number[]): boolean {
  // A loop, not Math.max(...left): spread as arguments, about 130,000 segments overflow the stack.
  let newest = Number.NEGATIVE_INFINITY;
  for (const n of left) if (n > newest) newest = n;
  locks.sort((a, b) => Number(left.has(b)) - Number(left.has(a)) || b - a);
  for (const n of locks) {
    const lock = findLock(dir, n);
    if (lock === "held") return true;
    // "none": no lock file any more (taken in and deleted meanwhile), or none that can be one.
    if (lock === "none") continue;
    try {
      if (!left.has(n) && n < newest) rmSync(join(dir, lockName(n)), { force: true });
    } catch {
      // Left for the next start (a directory that cannot be written): a free lock refuses nothing.
    } finally {
      lock.close();
    }
  }
  return false;
}

/**
 * The error to throw when undoing what a failed step made failed too: `cause` first, with its
 * `code` (what the caller and the operator act on), and the removal's error after it.
 */
function bothFailed(cause: unknown, removal: unknown): AggregateError {
  const both = new AggregateError(
    [cause, removal],
    `${errorMessage(cause)} (and removing what was made for it failed: ${errorMessage(removal)})`,
    { cause },
  );
  const code = (cause as { code?: unknown } | null)?.code;
  if (code !== undefined) Object.assign(both, { code });
  return both;
}

function segments(dir: string): number[] {
  return readdirSync(dir)
    .flatMap((name) => {
      const m = NAME.exec(name);
      return m ? [Number(m[1])] : [];
    })
    .sort((a, b) => a - b);
}

/**
 * The number of the first segment of a journal that has none: hundredths of a second since the
 * epoch (12 digits, with room to grow, until the year 2255). A journal made again later starts
 * above the segments an earlier one reached unless that one made over 100 segments (400 MiB) a
 * second, so a position the queue kept from it names none of the new journal's segments (a
 * clock stepped back is left to the reader's checks, `misplaced`). Existing journals, numbered
 * from 1, go on from their last segment. A clock that gives no such number starts at 1.
 */
function firstSegment(now: number): number {
  const n = Math.floor(now / 10);
  return Number.isSafeInteger(n) && n >= 1 && n < 9 * 10 ** 11 ? n : 1;
}

/**
 * A job as the journal holds it, as JSON. One too long for a string (V8's `Invalid string
 * length`: an event of tens of MiB, masked characters escaped as JSON, with a tool's earlier half
 * beside it) fails with what to change rather than V8's words alone.
 */
function serialise<T>(m: OutgoingMessage<T>): string {
  try {
    return JSON.stringify({ id: m.id, group: m.group, delayMs: m.delayMs ?? 0, body: m.body });
  } catch (e) {
    if (!(e instanceof RangeError) || !/string length/i.test(e.message)) throw e;
    throw new Error(
      `job ${m.id} is too large to journal: its event, as JSON, is longer than ${constants.MAX_STRING_LENGTH} characters, the longest string Node holds (${e.message}); lower defaults.maxBodyBytes so that the events it lets in fit`,
      { cause: e },
    );
  }
}

export interface JournalWriter {
  /**
   * Appends the jobs; they are in the journal when it returns. Throws when the write fails, and
   * after `close()`: a `SendFailedError` naming the jobs not written when a send written as
   * several lines (past LINE_CHARS) fails after its first line, whose jobs are in.
   */
  append<T>(messages: readonly OutgoingMessage<T>[]): void;
  /**
   * Moves what was written to a new segment if its segment was deleted under it, and takes its
   * lock again if its lock file was (see above). `serve` calls it every CHECK_MS; `close` and a
   * move past a full or torn segment copy a deleted segment out too.
   */
  check(): void;
  /**
   * Final: an append after it throws. A closed writer that went on would start a new segment,
   * locked by no one, after the delivery thread's last drain (and, before segments had locks, the
   * next process's reader took it as the end of its own writer's live segment, and deleted that).
   * Frees the segment's lock, after copying it out if it was deleted (`check`). Throws, all freed
   * all the same, when that copy fails: the lines in the deleted segment are lost. Closing again
   * does nothing.
   */
  close(): void;
}

export function openJournalWriter(
  dir: string,
  segmentBytes = SEGMENT_BYTES,
  now: () => number = Date.now,
  lineChars = LINE_CHARS,
): JournalWriter {
  mkdirSync(dir, { recursive: true, mode: JOURNAL_DIR_MODE });
  // `create` adds 1.
  let segment = segments(dir).at(-1) ?? firstSegment(now()) - 1;
  let fd = -1;
  let size = 0;
  /**
   * A write was cut short in the segment: part of a line may end it, so the next line goes to a
   * new segment, as when it is full, and the reader sees the cut one as a torn end and never
   * glues it to a later line.
   */
  let torn = false;
  let closed = false;
  /** The lock of the segment being written, held until the writer moves past it or closes. */
  let held: HeldLock | undefined;
  /**
   * Makes the next segment with its lock taken, the writer's state untouched. The lock is taken
   * before the segment is made: a reader never finds a segment of a live writer unlocked. `wx`: a
   * segment is only ever written by the writer that created it; a lock held by another writer is
   * its segment. A free lock file already there (left by a writer killed before it made its
   * segment) is taken as it is: see "A free lock above every segment" above.
   */
  const create = (): { fd: number; lock: HeldLock; n: number } => {
    // Above every segment left, not just above its own: another writer's later segments (every
    // lock deleted, two serves) may be behind the reader's position by now, and a segment made
    // there would not be read until a restart. A listing per segment made, not per append.
    segment = Math.max(segment, segments(dir).at(-1) ?? 0);
    for (;;) {
      segment += 1;
      // Undefined also for a path that cannot be a lock (a directory, a file not SQLite's): that
      // number is skipped, as everyone reads it as no lock; thrown, every append failed.
      const lock = takeLock(dir, segment);
      if (!lock) continue;
      try {
        // Readable too: a segment deleted under the writer is copied out through it (`rescue`).
        // Its user's alone, whatever the data dir's mode: its lines are the events that notify.
        return { fd: openSync(join(dir, segmentName(segment)), "wx+", 0o600), lock, n: segment };
      } catch (e) {
        // Someone else's segment, its lock free: left as it is, and the next number tried.
        if ((e as NodeJS.ErrnoException).code === "EEXIST") {
          lock.db.close();
          continue;
        }
        // No segment made (out of descriptors, a full disk): its lock goes too, or every append
        // that fails so would leave one, for `journalHeld` to open at each start.
        throw discard({ lock, n: segment }, e);
      }
    }
  };
  /**
   * Undoes a `create` whose segment is not used, after `cause` (the error that made it unused):
   * the segment, when it was made (`fd`), then its lock file, removed while the lock is still
   * taken, then the lock freed, even when a removal throws: taken until the process ended, the
   * reader waited behind the segment left, every later one undelivered (taken in now, what the
   * segment holds is delivered twice, never lost). Returns what to throw: `cause`, or, when a
   * removal failed too, an error that names `cause` first and the removal's error after it (the
   * removal's alone told the operator of a directory in the way, not of the full disk).
   */
  const discard = (made: { fd?: number; lock: HeldLock; n: number }, cause: unknown): unknown => {
    try {
      if (made.fd !== undefined) {
        closeSync(made.fd);
        rmSync(join(dir, segmentName(made.n)), { force: true });
      }
      rmSync(join(dir, lockName(made.n)), { force: true });
      return cause;
    } catch (removal) {
      return bothFailed(cause, removal);
    } finally {
      made.lock.db.close();
    }
  };
  /** Moves to a new segment; the old one's lock is freed only after the new one is made. */
  const next = () => {
    if (fd >= 0) closeSync(fd);
    fd = -1;
    torn = false;
    const made = create();
    fd = made.fd;
    held?.db.close();
    held = made.lock;
    size = 0;
  };
  /**
   * The segment was deleted (a reader took it for complete: its lock file was deleted too, or the
   * journal directory was removed): copy it whole to a new one. Lines a reader took in are taken in again, never lost. A copy that
   * fails (a full disk) leaves nothing behind and the writer where it was, on the deleted file,
   * which it still holds open: the next check copies all of it, lines appended meanwhile too.
   */
  const rescue = () => {
    if (fd < 0 || fstatSync(fd).nlink > 0) return;
    let kept = Buffer.alloc(fstatSync(fd).size);
    let read = 0;
    while (read < kept.length) {
      const n = readSync(fd, kept, read, kept.length - read, read);
      if (n === 0) break;
      read += n;
    }
    kept = kept.subarray(0, read);
    // The directory may have gone with it (`rm -rf` of the journal): made again, or the copy
    // could never be made and the lines would be lost at close. With the data dir too, that is
    // made again as `serve` makes it, its user's alone (JOURNAL_DIR_MODE).
    mkdirSync(dir, { recursive: true, mode: JOURNAL_DIR_MODE });
    const made = create();
    try {
      let written = 0;
      while (written < kept.length) written += writeSync(made.fd, kept, written);
    } catch (e) {
      throw discard(made, e);
    }
    closeSync(fd);
    fd = made.fd;
    held?.db.close();
    held = made.lock;
    size = kept.length;
  };
  /**
   * The held lock's file was deleted (or another put in its place) by hand: a lock is taken on a
   * new file at its path, and the old one, which no one else can see, freed (see "A lock file
   * deleted by hand" above). Nothing is thrown, the look at the path included (a link loop put
   * there, a directory no longer searchable): a path that cannot be a lock stays unlocked, and
   * the next check tries again. Thrown, serve logged it each second as a deleted segment it could
   * not copy.
   */
  const relock = () => {
    if (!held) return;
    let lock: HeldLock | undefined;
    try {
      const file = statSync(join(dir, lockName(held.n)), { bigint: true, throwIfNoEntry: false });
      if (file && file.ino === held.ino && file.dev === held.dev) return;
      lock = takeLock(dir, held.n);
    } catch {
      return;
    }
    if (!lock) return;
    held.db.close();
    held = lock;
  };
  /**
   * `check`: a deleted segment copied out, then the lock of the one written seen to; not after a
   * copy that failed: the segment is gone, and a lock taken again for it would outlive the copy.
   */
  const look = () => {
    rescue();
    relock();
  };
  /** Writes one line to the segment, whole or throwing. */
  const writeLine = (line: string) => {
    const bytes = Buffer.from(line);
    let written = 0;
    try {
      while (written < bytes.length) written += writeSync(fd, bytes, written);
    } catch (e) {
      // Part of the line is in the file. The segment stays open until the next append moves
      // on: deleted under the writer, it is copied out first (closed here, its lines were lost).
      if (written > 0) torn = true;
      throw e;
    }
    size += bytes.length;
  };
  next();
  return {
    append(messages) {
      if (closed) throw new Error("the intake journal is closed: serve is stopping");
      // Rotating here, before the write, means an append that throws wrote nothing that counts.
      // A full or torn segment deleted under the writer is copied out first (`check`): closed,
      // its lines would be gone. One `fstat` per segment, not per append.
      const done = torn || size >= segmentBytes;
      if (done) rescue();
      if (fd < 0 || done) next();
      // Every job is serialised before anything is written: one that cannot be fails the send
      // whole, nothing of it in the journal.
      const parts = messages.map(serialise);
      // One line for all of a send's jobs while it stays under the bound: a write cut short tears
      // that line alone, and the reader skips it whole, so a send is taken in entirely or not at
      // all. Past it, a line per run of jobs that fits, in order, a job alone on a line when it
      // passes the bound by itself (see "A send's lines" above). Joined as it goes: a send's
      // jobs joined whole first could be longer than a string can be.
      for (let first = 0; first < parts.length; ) {
        let line = `[${parts[first]}`;
        let end = first + 1;
        // The comma and the closing bracket count too.
        while (end < parts.length && line.length + (parts[end] as string).length + 2 <= lineChars)
          line += `,${parts[end++]}`;
        try {
          writeLine(`${line}]\n`);
        } catch (e) {
          // Nothing of the send is in: the error as it is, every job failed.
          if (first === 0) throw e;
          // The lines before this one are whole, and their jobs are delivered.
          throw new SendFailedError(
            `${errorMessage(e)} (a send too long for one journal line, written as several: its first ${first} of ${parts.length} jobs were written and will be delivered, the other ${parts.length - first} were not)`,
            messages.slice(first).map((m) => m.id),
          );
        }
        first = end;
      }
    },
    check() {
      if (!closed) look();
    },
    close() {
      if (closed) return;
      closed = true;
      try {
        rescue();
      } finally {
        // Closing goes on when the copy fails (it throws then: what could not be copied is lost).
        if (fd >= 0) closeSync(fd);
        fd = -1;
        // Its segment is complete: the reader may take it to its end and delete it.
        held?.db.close();
        held = undefined;
      }
    },
  };
}

export interface JournalReaderDeps {
  /** Commits the rows and the position read up to, together (sqlite.ts `intake`). */
  readonly intake: (rows: readonly IntakeRow[], position: IntakePosition) => Promise<void>;
  /** Where the last intake stopped; undefined for a new queue. */
  readonly position: IntakePosition | undefined;
  /** Called when a torn last line is skipped. */
  readonly onTorn?: (segment: number, bytes: number) => void;
  /**
   * Called when the recorded position is not applied (`why`, see `misplaced`) and the reader
   * starts at `start`, the first segment's start, instead.
   */
  readonly onReposition?: (recorded: IntakePosition, start: IntakePosition, why: string) => void;
  /**
   * Called for each line that is not a send's jobs (`parseLines`) once the commit that took it in
   * is in: where it is, its length in bytes and the id of the job it went in as. Never its text.
   */
  readonly onUnreadable?: (line: UnreadableLine) => void;
  /**
   * Called for a segment the reader listed and had not opened yet that is gone (deleted by hand,
   * the journal directory removed while the reader was behind): the lines in it are lost.
   */
  readonly onGone?: (segment: number) => void;
}

/** A journal line that is not a send's jobs, taken in as one job (`id`) that is dead-lettered. */
export interface UnreadableLine {
  readonly segment: number;
  /** The line's byte offset in its segment. */
  readonly offset: number;
  readonly bytes: number;
  readonly id: string;
}

export interface JournalReader {
  /** Takes every complete line written so far into the queue; returns how many. */
  drain(): Promise<number>;
  /**
   * Bytes written to the journal and not yet taken into the queue. A torn end (a write cut short)
   * counts until the reader moves past its segment, when the next writer starts one.
   */
  backlogBytes(): number;
  close(): void;
}

/** Bytes read per `read` call. */
const CHUNK = 256 * 1024;

export function openJournalReader(dir: string, deps: JournalReaderDeps): JournalReader {
  mkdirSync(dir, { recursive: true, mode: JOURNAL_DIR_MODE });
  // Segment 0 is none: with no segment yet, the reader moves to the first one written.
  const firstLeft = () => ({ segment: segments(dir)[0] ?? 0, offset: 0 });
  let position = deps.position ?? firstLeft();
  const why = deps.position && misplaced(dir, deps.position);
  if (deps.position && why) {
    position = firstLeft();
    deps.onReposition?.(deps.position, position, why);
  }
  let fd = -1;
  const buffer = Buffer.alloc(CHUNK);
  // The bytes after the last newline read so far, as read: a line longer than many reads (a large
  // event, once per sink) is joined once, when its newline comes. Joined again at every read, it
  // was copied once per read: a 64 MiB line held the delivery thread for about 25 s, not 1 s.
  let tail: Buffer[] = [];
  let tailBytes = 0;
  const dropTail = () => {
    tail = [];
    tailBytes = 0;
  };

  /**
   * Segments listed after the one being read and not opened yet, each with whether a later one
   * was listed too (it is complete: its writer moved on). Once open, a segment deleted is still
   * read to its end through its descriptor; a complete one deleted before that took its lines
   * with it, and nothing else would say so (the writer copies out only the segment it writes, so
   * the newest one listed is not told: its writer may have copied it).
   */
  const unopened = new Map<number, boolean>();
  /** Lists the segments, telling the complete ones listed before, not opened, and gone since. */
  const list = (): number[] => {
    const now = segments(dir);
    const left = new Set(now);
    for (const [n, complete] of unopened) {
      if (left.has(n)) continue;
      unopened.delete(n);
      if (complete) deps.onGone?.(n);
    }
    const newest = now.at(-1);
    for (const n of now)
      if (n > position.segment || (n === position.segment && fd < 0))
        unopened.set(n, unopened.get(n) === true || n !== newest);
    return now;
  };

  const openCurrent = (): boolean => {
    if (fd >= 0) return true;
    try {
      fd = openSync(join(dir, segmentName(position.segment)), "r");
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === "ENOENT") return false;
      throw e;
    }
    unopened.delete(position.segment);
    dropTail();
    return true;
  };

  /** Reads the current segment from the position on; commits its complete lines. */
  const readCurrent = async (): Promise<number> => {
    if (!openCurrent()) return 0;
    let taken = 0;
    for (;;) {
      const n = readSync(fd, buffer, 0, CHUNK, position.offset + tailBytes);
      if (n === 0) return taken;
      const newline = buffer.subarray(0, n).lastIndexOf(0x0a);
      if (newline < 0) {
        tail.push(Buffer.from(buffer.subarray(0, n)));
        tailBytes += n;
        continue;
      }
      const data = Buffer.concat([...tail, buffer.subarray(0, n)], tailBytes + n);
      const end = tailBytes + newline + 1;
      const unreadable: UnreadableLine[] = [];
      const rows = parseLines(data, end, position, unreadable);
      const next = { segment: position.segment, offset: position.offset + end };
      try {
        await deps.intake(rows, next);
      } catch (e) {
        // Nothing moved: the next drain reads again from the position.
        dropTail();
        throw e;
      }
      position = next;
      tail = [Buffer.from(data.subarray(end))];
      tailBytes = data.length - end;
      taken += rows.length;
      for (const line of unreadable) deps.onUnreadable?.(line);
    }
  };

  const drainOnce = async (): Promise<number> => {
    let taken = 0;
    for (;;) {
      taken += await readCurrent();
      const later = list().find((n) => n > position.segment);
      if (later === undefined) return taken;
      // A later segment exists: this one is complete unless its writer still holds it (another
      // serve on the data dir, or this one's writer when the later segment is another's). Then
      // it is read again next time, and the later ones wait for it: late, never lost.
      const found = findLock(dir, position.segment);
      if (found === "held") return taken;
      const lock = found === "none" ? undefined : found;
      try {
        // Read it to its very end once more (the writer may have added lines since the read
        // above), then move on to the next.
        taken += await readCurrent();
        if (tailBytes > 0) deps.onTorn?.(position.segment, tailBytes);
        if (fd >= 0) closeSync(fd);
        fd = -1;
        dropTail();
        // The lock first: a kill between the two leaves a segment with no lock, which the next
        // reader takes in and deletes, not a lock with no segment, which no one would.
        try {
          rmSync(join(dir, lockName(position.segment)), { force: true });
        } catch (e) {
          // Not a file (a directory made there): left, and read as no lock (`findLock`).
          if ((e as NodeJS.ErrnoException).code !== "ERR_FS_EISDIR") throw e;
        }
        rmSync(join(dir, segmentName(position.segment)), { force: true });
      } finally {
        lock?.close();
      }
      const next = { segment: later, offset: 0 };
      await deps.intake([], next);
      position = next;
    }
  };

  // One drain at a time; calls during a drain share one more drain after it.
  let running: Promise<number> | undefined;
  let again: Promise<number> | undefined;
  const start = (): Promise<number> => {
    running = drainOnce().finally(() => {
      running = undefined;
    });
    return running;
  };
  return {
    backlogBytes() {
      let bytes = 0;
      // Read every 5 s (the gauges), also while the queue file fails every drain: the segments
      // waiting behind are listed, so those deleted meanwhile are told.
      for (const n of list()) {
        if (n < position.segment) continue;
        try {
          const size = statSync(join(dir, segmentName(n))).size;
          bytes += Math.max(0, size - (n === position.segment ? position.offset : 0));
        } catch {
          // Taken in and deleted since the listing.
        }
      }
      return bytes;
    },
    drain() {
      if (again) return again;
      if (!running) return start();
      again ??= running
        .catch(() => 0)
        .then(() => {
          again = undefined;
          return start();
        });
      return again;
    },
    close() {
      if (fd >= 0) closeSync(fd);
      fd = -1;
    },
  };
}

/**
 * Why the recorded position `at` cannot be where this journal was read up to, or undefined when it
 * can be. A segment is deleted before the position moves past it, so its own segment is the first
 * one left; a segment only grows; and a position stops at a segment's start or just after a
 * newline. A position whose segment is gone was cut short between the delete and the move, or
 * the journal was removed; one that breaks another rule is from a journal removed and made again.
 */
function misplaced(dir: string, at: IntakePosition): string | undefined {
  const first = segments(dir)[0];
  if (first === undefined || first > at.segment) return "its segment is gone";
  if (first < at.segment) return "an earlier segment is left, so the journal was made again";
  let fd: number;
  try {
    fd = openSync(join(dir, segmentName(at.segment)), "r");
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOENT") return "its segment is gone";
    throw e;
  }
  try {
    if (at.offset > fstatSync(fd).size) return "it is past the end of its segment";
    const before = Buffer.alloc(1);
    if (at.offset > 0 && (readSync(fd, before, 0, 1, at.offset - 1) !== 1 || before[0] !== 0x0a))
      return "it is not at the start of a line of its segment";
    return undefined;
  } finally {
    closeSync(fd);
  }
}

/**
 * Each line is one send's jobs as the writer wrote them. A line that is not that (a disk that
 * returned garbage) is not dropped: it goes in as one job whose body is the line, which the queue
 * dead-letters as stored when it is leased (`hookgate dlq list` shows it), and is added to
 * `unreadable` (the reader's `onUnreadable`).
 */
function parseLines(
  data: Buffer,
  end: number,
  at: IntakePosition,
  unreadable: UnreadableLine[],
): IntakeRow[] {
  const rows: IntakeRow[] = [];
  // Split on the newline byte and decode each line alone: the fallback id is the line's byte
  // offset in the segment, which decoding first (invalid UTF-8 grows into U+FFFD) would shift.
  for (let start = 0; start < end; ) {
    const stop = data.indexOf(0x0a, start);
    if (stop > start) {
      const offset = at.offset + start;
      const line = data.toString("utf8", start, stop);
      const jobs = parseLine(line);
      if (jobs) rows.push(...jobs);
      else {
        // Not jobs: one job whose body is the line, which is not JSON, so the queue dead-letters
        // it as stored on its first lease.
        const id = `intake-${at.segment}-${offset}`;
        rows.push({
          id,
          body: `unreadable intake journal line: ${line}`,
          delayMs: 0,
          group: undefined,
        });
        unreadable.push({ segment: at.segment, offset, bytes: stop - start, id });
      }
    }
    start = stop + 1;
  }
  return rows;
}

/**
 * The line's jobs, or undefined when it is not a send's jobs. The journal's first release wrote
 * each job on a line of its own, not in an array: a serve upgraded from it takes in the lines that
 * one left unread as the jobs they are, rather than dead-lettering them as text no replay can send.
 */
function parseLine(line: string): IntakeRow[] | undefined {
  try {
    const parsed = JSON.parse(line) as unknown;
    const jobs = Array.isArray(parsed) ? parsed : [parsed];
    if (jobs.every(isJob)) {
      return jobs.map((job) => ({
        id: job.id,
        body: JSON.stringify(job.body),
        delayMs: typeof job.delayMs === "number" ? job.delayMs : 0,
        group: typeof job.group === "string" ? job.group : undefined,
      }));
    }
  } catch {
    // falls through: kept as its text
  }
  return undefined;
}

function isJob(value: unknown): value is { id: string; group?: unknown; delayMs?: unknown; body: unknown } {
  if (typeof value !== "object" || value === null) return false;
  const job = value as { id?: unknown; body?: unknown };
  return typeof job.id === "string" && job.body !== undefined;
}

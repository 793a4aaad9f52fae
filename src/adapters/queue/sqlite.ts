/**
 * The embedded queue on Node: one SQLite file under the data dir, with SQS-like leases.
 * A receive leases visible jobs for `visibilityMs` under a fresh receipt; ack, retry and
 * dead-letter act only while that receipt is the job's current one, so a consumer whose lease ran
 * out cannot undo the newer delivery. A lease that runs out makes the job visible again.
 */
import { randomUUID } from "node:crypto";
import { closeSync, fchmodSync, openSync, renameSync, rmSync } from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";
import Database from "better-sqlite3";
import { errorMessage } from "../../core/errors.js";
import type { DeadLetter, DeadSwept, Queue, ReceivedMessage } from "../../core/queue.js";

export interface SqliteQueueOptions {
  /** The database file. Its directory must exist: the caller creates the data dir. */
  readonly path: string;
  readonly now?: () => number;
  /**
   * A clock that never steps, in ms (performance.now() by default; `now` itself when only `now` is
   * given, so that a queue on a test's wall clock sees no step forward): what it says passed
   * between two commits, against the wall clock, tells a step forward, which would end the leases
   * of the deliveries in flight early.
   */
  readonly monotonic?: () => number;
  /** The lease owner written on each receive; one random id per process by default. */
  readonly owner?: string;
  /**
   * How long a call waits for another process's write lock before it fails (better-sqlite3 waits
   * synchronously, holding the event loop). 5 s by default: the CLI, and `serve`'s delivery
   * thread, whose waits hold up deliveries, never decisions (those only append to the journal).
   */
  readonly busyTimeoutMs?: number;
  /**
   * Called before each call that may wait out the busy timeout (a transaction, a statement):
   * `serve`'s delivery thread posts its heartbeat there, since calls made one after another in
   * one turn, each waiting on another process's lock, left its timers no turn for many seconds.
   */
  readonly beforeCall?: () => void;
  /**
   * Called once each call `beforeCall` announced has returned or thrown: `serve`'s delivery thread
   * marks itself between calls there, where the host may end it (ended inside one, better-sqlite3
   * aborts the whole process).
   */
  readonly afterCall?: () => void;
  /**
   * Told of each job the queue dead-letters itself, once the commit that did is in: a stored body
   * that is not JSON (an unreadable intake journal line), buried as stored when a receive would
   * lease it, again after each replay. Never given the body, which may hold anything.
   */
  readonly onDeadLettered?: (letter: QueueDeadLettered) => void;
  /**
   * Told, with the error, of each settle (ack, retry, hold, dead letter) that another process's
   * lock or a write with no room (a full disk, a quota, a file size limit: `passes`) failed and
   * that is tried again; then, with none, once a settle goes in and none waits: while every
   * delivery slot waits to settle, no receive runs to find the lock (`serve`'s /healthz).
   */
  readonly onSettleWait?: (error?: unknown) => void;
  /** Told when the wall clock went back and the queue's times were moved back with it (keepClock). */
  readonly onClockStep?: (step: QueueClockStep) => void;
}

/** The wall clock read `byMs` earlier than this queue had seen; `jobs` had their times moved back. */
export interface QueueClockStep {
  readonly byMs: number;
  readonly jobs: number;
}

/**
 * The size the WAL file is cut back to once a checkpoint has emptied it: past a reader that held
 * a snapshot (a sqlite3 shell's open transaction, a backup tool), it kept the size every commit
 * meanwhile gave it, jobs' bodies included, until serve stopped. Well above what a checkpoint
 * every 1,000 pages (SQLite's default) lets it reach otherwise.
 */
export const WAL_LIMIT_BYTES = 16 * 1024 * 1024;

/** A clock that goes back by more than this is a step, not jitter (NTP slews smaller errors). */
export const CLOCK_STEP_MS = 2000;
/** How often the latest time seen is written down (one small row), at most. */
const SEEN_EVERY_MS = 60_000;

/** A job the queue dead-lettered itself (`onDeadLettered`). */
export interface QueueDeadLettered {
  readonly id: string;
  readonly group: string | undefined;
  readonly attempts: number;
  readonly reason: string;
}

/**
 * What each receive of a job whose lease `recoverLeases` took back tells (`interrupted`) until an
 * outcome is recorded. The job is marked so by its `interrupted` column, never by this text: its
 * `last_error` holds it too, as a sink's own error text could.
 */
export const STOPPED_DELIVERING =
  "the delivery thread stopped while delivering it (it crashed or exited, or serve was killed)";

/** Why the queue dead-letters a stored job that does not parse, as it is told: no text of it. */
const NOT_JSON = "the stored job is not valid JSON; dead-lettered as stored";

export interface SqliteQueue<T> extends Queue<T> {
  /**
   * Makes every job leased by another owner visible at once and returns how many. The queue has a
   * single consumer process, so on start (`serve`) those leases belong to a process that died.
   * Each keeps the attempt its lease counted, and is received as `interrupted`.
   */
  recoverLeases(): number;
  /**
   * Inserts jobs read from an intake journal (journal.ts), already serialised, and records how
   * far the journal has been read in the same commit: a restart resumes from there, so no job is
   * lost or taken in twice. A body that is not JSON is dead-lettered as stored when leased
   * (`onDeadLettered`).
   */
  intake(rows: readonly IntakeRow[], position: IntakePosition): Promise<void>;
  /** Where the last `intake` left the journal, or undefined before the first. */
  intakePosition(): IntakePosition | undefined;
  /**
   * From here on a settle that fails on a lock or a write with no room is given up at once, and
   * those waiting to be tried again give up now (`serve` stops: waiting until their leases ended, a
   * stop took its whole 30 s and ended the thread); each call waits for a lock SHORT_BUSY_MS at
   * most, not the whole busy timeout. Nothing is lost: each job stays leased, and the next
   * `serve` takes it back (`recoverLeases`) and delivers it again.
   */
  stopWaiting(): void;
  /** What the file holds now, read without a write lock (`serve`'s gauges on /metrics). */
  stats(): QueueStats;
  /**
   * Writes a copy of the open queue to `path` (SQLite's online backup), its WAL's commits
   * included, readable by its own user alone as the queue file is: how `serve` puts back a
   * queue file deleted under it. The copy is written beside it, at `partialCopy(path)`, and
   * renamed to `path` once whole: a process killed mid-way leaves only that file, never a part
   * of a copy at `path`, and a copy that fails leaves `path` as it was.
   */
  copyTo(path: string): Promise<void>;
}

export interface QueueStats {
  /** Jobs waiting, waiting for a retry, or leased. */
  readonly jobs: number;
  readonly deadLetters: number;
  /**
   * Since when the job that has waited longest for an attempt has been due (epoch ms): its ready
   * time, its retry time, or the end of a lease that ran out. Undefined when none is due; jobs
   * waiting for a scheduled retry, or being delivered, are not.
   */
  readonly oldestDueAt: number | undefined;
}

export interface IntakeRow {
  readonly id: string;
  /** The job as JSON text. */
  readonly body: string;
  readonly delayMs: number;
  readonly group: string | undefined;
}

/** A journal segment's number and the byte offset read up to in it. */
export interface IntakePosition {
  readonly segment: number;
  readonly offset: number;
}

const PROCESS_OWNER = `${process.pid}-${randomUUID()}`;

/** A replay of every dead letter moves this many at most in one transaction, */
const REPLAY_SLICE_ROWS = 5000;
/** for about this long at most (bodies of a MiB take longer than small ones), */
const REPLAY_SLICE_MS = 200;
/**
 * then leaves the write lock free this long: longer than the longest sleep of SQLite's busy
 * handler (100 ms), so a serve waiting for the lock takes it in every pause.
 */
const REPLAY_PAUSE_MS = 150;
/** Dead letters read at a time within a slice (a body may be a MiB). */
const REPLAY_READ_ROWS = 50;
/** How long a settle that failed on a lock or a write with no room (`passes`) waits to be tried again. */
const SETTLE_RETRY_MS = 1000;
/**
 * How long a retry, hold or dead letter (and a turn's commit with an ack) waits for another
 * process's lock, at most, and every call once `stopWaiting` was called: each waiting out the
 * whole busy timeout (5 s in `serve`), ten deliveries settled one after another on a locked file
 * held the thread 50 s at a time, its messages (a stop) unread, and a stop took past its 30 s. A
 * replay's slice and pause together: a `dlq replay` running meanwhile lets each call in at its
 * next pause.
 */
export const SHORT_BUSY_MS = REPLAY_SLICE_MS + REPLAY_PAUSE_MS;

/**
 * A failure that passes without anything done here, so a settle waits it out: another connection
 * held the file locked past the busy timeout, or a write found no room and room is made. SQLite
 * says SQLITE_FULL for a full disk (ENOSPC) alone; a user's quota (EDQUOT) or the process's file
 * size limit (EFBIG: ulimit -f, systemd's LimitFSIZE=) fails the write with SQLITE_IOERR_WRITE,
 * as a failing disk's EIO does, which SQLite does not tell apart. Waited out too: given up at
 * once, the job was sent again when its lease ran out, which is also all a failing disk's wait
 * costs. SQLITE_IOERR_SHMSIZE is the -shm file beside the queue file (the WAL's index, on the
 * same disk) not grown for want of room: it grows by 32 KiB each 4,062 frames of a WAL that a
 * reader's snapshot (a sqlite3 shell, a backup) keeps from being checkpointed, so a commit
 * that found room for its WAL frames fails there on a disk that filled meanwhile.
 */
const passes = (e: unknown): boolean => {
  const code = (e as { code?: unknown } | null)?.code;
  return typeof code === "string" && /^SQLITE_(BUSY|LOCKED|FULL|IOERR_(WRITE|SHMSIZE)$)/.test(code);
};

// `visible_at` is when a job may next be received: its ready time, or while leased the end of
// the lease (= leased_until). One index, (grp, visible_at, seq) made in openDatabase, then finds
// both due and expired-lease jobs, group by group.
const SCHEMA = `
CREATE TABLE IF NOT EXISTS queue_jobs (
  seq INTEGER PRIMARY KEY,
  id TEXT NOT NULL UNIQUE,
  body TEXT NOT NULL,
  state TEXT NOT NULL CHECK (state IN ('ready', 'leased')),
  visible_at INTEGER NOT NULL,
  attempts INTEGER NOT NULL DEFAULT 0,
  lease_owner TEXT,
  leased_until INTEGER,
  receipt TEXT,
  last_error TEXT,
  enqueued_at INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS queue_dead (
  id TEXT PRIMARY KEY,
  body TEXT NOT NULL,
  attempts INTEGER NOT NULL,
  error TEXT NOT NULL,
  failed_at INTEGER NOT NULL,
  grp TEXT
);
CREATE INDEX IF NOT EXISTS queue_dead_failed ON queue_dead (failed_at);
CREATE TABLE IF NOT EXISTS queue_intake (
  only INTEGER PRIMARY KEY CHECK (only = 1),
  segment INTEGER NOT NULL,
  offset INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS queue_clock (
  only INTEGER PRIMARY KEY CHECK (only = 1),
  seen INTEGER NOT NULL
);
`;

interface DueRow {
  seq: number;
  id: string;
  body: string;
  attempts: number;
  holds: number;
  visibleAt: number;
  grp: string | null;
  interrupted: 0 | 1;
}

interface DeadRow {
  id: string;
  body: string;
  attempts: number;
  error: string;
  failedAt: number;
}

/**
 * The columns added since the first release, each with how a queue file made before it gets it
 * (`openDatabase`), in the order they were added.
 */
const ADDED_COLUMNS: Readonly<Record<string, (db: Database.Database) => void>> = {
  "queue_jobs.grp": (db) => db.exec("ALTER TABLE queue_jobs ADD COLUMN grp TEXT"),
  // The receives that ended in a hold, which `attempts` no longer counts.
  "queue_jobs.holds": (db) => db.exec("ALTER TABLE queue_jobs ADD COLUMN holds INTEGER NOT NULL DEFAULT 0"),
  // A job taken back from a stopped delivery is marked by a column of its own. A file from before
  // it marked one by `last_error` alone, which is read once, here.
  "queue_jobs.interrupted": (db) => {
    db.exec("ALTER TABLE queue_jobs ADD COLUMN interrupted INTEGER NOT NULL DEFAULT 0");
    db.prepare("UPDATE queue_jobs SET interrupted = 1 WHERE last_error = ?").run(STOPPED_DELIVERING);
  },
  // A dead letter keeps its job's group, so a replay keeps the per-sink cap.
  "queue_dead.grp": (db) => db.exec("ALTER TABLE queue_dead ADD COLUMN grp TEXT"),
};

/** How `db` gets each added column it lacks, in the order they were added. */
function missingColumns(db: Database.Database): ((db: Database.Database) => void)[] {
  const present = new Set(
    db
      .prepare<[], string>(
        `SELECT t.name || '.' || c.name FROM sqlite_schema AS t, pragma_table_info(t.name) AS c
         WHERE t.type = 'table' AND t.name IN ('queue_jobs', 'queue_dead')`,
      )
      .pluck()
      .all(),
  );
  return Object.entries(ADDED_COLUMNS).flatMap(([column, add]) => (present.has(column) ? [] : [add]));
}

/**
 * Makes the queue file readable by its own user alone whatever the data dir's mode (one that
 * exists keeps its own, 0755 for systemd's StateDirectory): its jobs hold the events that notify,
 * tool inputs and prompts among them. SQLite gives its WAL files the database file's mode. A file
 * that exists keeps its mode, and a path that cannot be made is left for SQLite to refuse, naming
 * why.
 */
function makePrivate(path: string): void {
  try {
    closeSync(openSync(path, "wx", 0o600));
  } catch {
    // EEXIST: a queue file already, or something SQLite's open below refuses with its reason.
  }
}

/** Where `copyTo(path)` writes its copy until it is whole (removed if it fails). */
export const partialCopy = (path: string): string => `${path}.partial`;

/**
 * Makes the file a copy of the queue is written to (`copyTo`) readable by its own user alone, as
 * `makePrivate` makes the queue file, also where it is left from an earlier copy: the backup
 * writes into a file that exists, and makes a new one 0644. Emptied, as the backup replaces it.
 */
function copyPrivate(path: string): void {
  let fd: number;
  try {
    fd = openSync(path, "w", 0o600);
  } catch {
    return; // left for the backup to refuse, naming why
  }
  try {
    fchmodSync(fd, 0o600);
  } finally {
    closeSync(fd);
  }
}

function openDatabase(path: string, busyTimeoutMs: number): Database.Database {
  let db: Database.Database | undefined;
  try {
    makePrivate(path);
    db = new Database(path, { timeout: busyTimeoutMs });
    // WAL with synchronous = NORMAL: a commit is in the WAL file (the OS page cache) before the
    // call returns, so killing the process, even with SIGKILL, loses nothing; only a power loss
    // or OS crash can drop the last commits, which is out of scope for this queue.
    db.pragma("journal_mode = WAL");
    db.pragma("synchronous = NORMAL");
    db.pragma(`journal_size_limit = ${WAL_LIMIT_BYTES}`);
    db.exec(SCHEMA);
    // A queue file made before a column gets it here, under the write lock and read again there:
    // two processes opening an old file at once (`serve` starting while `dlq list` runs) both
    // find the column missing, and the second, waiting for the first's lock, then finds it added.
    const file = db;
    if (missingColumns(file).length > 0) {
      file
        .transaction(() => {
          for (const add of missingColumns(file)) add(file);
        })
        .immediate();
    }
    // A receive reads each group's due jobs from here, one seek per group, and merges them; a
    // group it skips costs nothing (a backlog for a sink at its cap made each receive a scan).
    // The (visible_at, seq) index of the first release is dropped: every insert, lease and ack
    // paid for it (one index page more per commit, ~15% of a send's commit).
    db.exec("CREATE INDEX IF NOT EXISTS queue_jobs_group_due ON queue_jobs (grp, visible_at, seq)");
    db.exec("DROP INDEX IF EXISTS queue_jobs_due");
    return db;
  } catch (cause) {
    db?.close();
    const reason = errorMessage(cause);
    throw new Error(`cannot open the SQLite queue at ${path}: ${reason}`, { cause });
  }
}

const ms = (value: number): number => Math.max(0, Math.ceil(value));

/** One call's share of a turn's commit: a send's rows, an ack or a receive's lease. */
interface Waiting {
  readonly rows: readonly IntakeRow[];
  readonly ack?: { readonly id: string; readonly receipt: string };
  readonly lease?: {
    readonly max: number;
    readonly visibilityMs: number;
    readonly skipGroups: readonly string[];
  };
  /** The journal position the rows were read up to (intake). */
  readonly position?: IntakePosition;
  readonly tries: number;
  /** With the rows leased for a `lease`, or whether an `ack`'s receipt was current, once committed. */
  readonly settle: (error?: unknown, leased?: readonly LeasedRow[], acked?: boolean) => void;
}

interface LeasedRow {
  readonly id: string;
  /** The stored job, parsed. */
  readonly body: unknown;
  readonly attempts: number;
  readonly holds: number;
  readonly receipt: string;
  readonly interrupted?: string;
}

export function createSqliteQueue<T>(options: SqliteQueueOptions): SqliteQueue<T> {
  const now = (): number => Math.floor((options.now ?? Date.now)());
  const monotonic = options.monotonic ?? options.now ?? (() => performance.now());
  const owner = options.owner ?? PROCESS_OWNER;
  /** `run`, a call into SQLite, between `beforeCall` and `afterCall`. */
  const calling = <R>(run: () => R): R => {
    options.beforeCall?.();
    try {
      return run();
    } finally {
      options.afterCall?.();
    }
  };
  const busyTimeoutMs = options.busyTimeoutMs ?? 5000;
  // Announced as a call too, as `recoverLeases` and `intakePosition` are: `serve`'s delivery
  // thread makes them before it is ready, and one on a disk that hangs was taken for a thread
  // between calls, which the host then ended inside it (aborting the whole process).
  const db = calling(() => openDatabase(options.path, busyTimeoutMs));
  /**
   * A failure once the file is open, naming it: SQLite's own message names none ("file is not a
   * database", "database is locked"), and `serve` logged it without saying which file to look at.
   * Its "disk I/O error" is the same for a write that failed (a quota, a file size limit, a
   * failing disk) and for a -shm file a full disk kept from growing: the code said after it tells
   * them apart, to the operator and to `sqliteFix`.
   */
  const named = (e: unknown): Error => {
    const code = (e as { code?: unknown } | null)?.code;
    const io = typeof code === "string" && code.startsWith("SQLITE_IOERR_") ? ` (${code})` : "";
    return Object.assign(
      new Error(`the SQLite queue at ${options.path}: ${errorMessage(e)}${io}`, { cause: e }),
      { code },
    );
  };
  const naming = <R>(run: () => R): R => {
    try {
      return calling(run);
    } catch (e) {
      throw named(e);
    }
  };

  const insert = db.prepare<{ id: string; body: string; visibleAt: number; now: number; grp: string | null }>(
    `INSERT OR IGNORE INTO queue_jobs (id, body, state, visible_at, attempts, enqueued_at, grp)
     VALUES (@id, @body, 'ready', @visibleAt, 0, @now, @grp)`,
  );
  const dueUngrouped = db.prepare<[number, number], DueRow>(
    `SELECT seq, id, body, attempts, holds, visible_at AS visibleAt, grp, interrupted FROM queue_jobs
     WHERE grp IS NULL AND visible_at <= ? ORDER BY visible_at, seq LIMIT ?`,
  );
  const dueInGroup = db.prepare<[string, number, number], DueRow>(
    `SELECT seq, id, body, attempts, holds, visible_at AS visibleAt, grp, interrupted FROM queue_jobs
     WHERE grp = ? AND visible_at <= ? ORDER BY visible_at, seq LIMIT ?`,
  );
  // The groups that have jobs, one index seek each (few: one per sink).
  const groups = db
    .prepare<[], string>(
      `WITH RECURSIVE g(grp) AS (
         SELECT (SELECT grp FROM queue_jobs WHERE grp IS NOT NULL ORDER BY grp LIMIT 1)
         UNION ALL
         SELECT (SELECT grp FROM queue_jobs WHERE grp > g.grp ORDER BY grp LIMIT 1) FROM g WHERE g.grp IS NOT NULL
       ) SELECT grp FROM g WHERE grp IS NOT NULL`,
    )
    .pluck();
  const lease = db.prepare<{ seq: number; until: number; owner: string; receipt: string }>(
    `UPDATE queue_jobs SET state = 'leased', visible_at = @until, leased_until = @until,
       attempts = attempts + 1, lease_owner = @owner, receipt = @receipt
     WHERE seq = @seq`,
  );
  const ackLeased = db.prepare<[string, string]>("DELETE FROM queue_jobs WHERE id = ? AND receipt = ?");
  const dropReady = db.prepare<[number]>("DELETE FROM queue_jobs WHERE seq = ?");
  const release = db.prepare<{ id: string; receipt: string; visibleAt: number; error: string }>(
    `UPDATE queue_jobs SET state = 'ready', visible_at = @visibleAt, leased_until = NULL,
       lease_owner = NULL, receipt = NULL, last_error = @error, interrupted = 0
     WHERE id = @id AND receipt = @receipt`,
  );
  // A lease counts an attempt when it is taken; a hold gives it back and counts a hold instead.
  const holdLeased = db.prepare<{
    id: string;
    receipt: string;
    visibleAt: number;
    error: string;
    added: number;
  }>(
    `UPDATE queue_jobs SET state = 'ready', visible_at = @visibleAt, leased_until = NULL,
       lease_owner = NULL, receipt = NULL, last_error = @error, interrupted = 0,
       attempts = MAX(0, attempts - 1), holds = holds + @added
     WHERE id = @id AND receipt = @receipt`,
  );
  const leasedRow = db.prepare<[string, string], { body: string; attempts: number; grp: string | null }>(
    "SELECT body, attempts, grp FROM queue_jobs WHERE id = ? AND receipt = ?",
  );
  const bury = db.prepare<DeadRow & { grp: string | null }>(
    `INSERT OR REPLACE INTO queue_dead (id, body, attempts, error, failed_at, grp)
     VALUES (@id, @body, @attempts, @error, @failedAt, @grp)`,
  );
  const listDeadRows = db.prepare<[number], DeadRow>(
    "SELECT id, body, attempts, error, failed_at AS failedAt FROM queue_dead ORDER BY failed_at, id LIMIT ?",
  );
  const deadById = db.prepare<[string], { id: string; body: string; grp: string | null }>(
    "SELECT id, body, grp FROM queue_dead WHERE id = ?",
  );
  // Up to `limit` of the dead letters there were when a replay began (one made since has a rowid
  // above the last one then), in the order they were made. By rowid: the last one then is taken
  // last, so until the replay ends no rowid below it can be given again to a new one.
  const deadBetween = db.prepare<
    [number, number, number],
    { rowid: number; id: string; body: string; grp: string | null }
  >("SELECT rowid, id, body, grp FROM queue_dead WHERE rowid > ? AND rowid <= ? ORDER BY rowid LIMIT ?");
  const lastDead = db.prepare<[], number | null>("SELECT MAX(rowid) FROM queue_dead").pluck();
  const unbury = db.prepare<[string]>("DELETE FROM queue_dead WHERE id = ?");
  const setPosition = db.prepare<IntakePosition>(
    `INSERT INTO queue_intake (only, segment, offset) VALUES (1, @segment, @offset)
     ON CONFLICT (only) DO UPDATE SET segment = excluded.segment, offset = excluded.offset`,
  );
  const getPosition = db.prepare<[], IntakePosition>("SELECT segment, offset FROM queue_intake");
  // The counts walk an index (about 15 ms per million jobs, every 5 s on the delivery thread; the
  // queue is near empty when deliveries keep up).
  const countJobs = db.prepare<[], number>("SELECT COUNT(*) FROM queue_jobs").pluck();
  const countDead = db.prepare<[], number>("SELECT COUNT(*) FROM queue_dead").pluck();
  // The attempt the lease counted stays counted: a job that ends the delivery thread every time
  // is sent no more often than its sink's schedule allows (`interrupted`, app/deliver.ts).
  const recover = db.prepare<{ owner: string; now: number; error: string }>(
    `UPDATE queue_jobs SET state = 'ready', visible_at = @now, leased_until = NULL,
       lease_owner = NULL, receipt = NULL, last_error = @error, interrupted = 1
     WHERE state = 'leased' AND lease_owner IS NOT @owner`,
  );

  // The queue's times (when a job is due, when a lease ends) are wall-clock times, since they
  // outlive the process. A clock stepped back (NTP correcting a host that resumed ahead) would
  // hold every delay and lease by the step, with nothing due meanwhile to show it. So each commit
  // compares the clock with the latest time this file has seen (written down at most once a
  // minute, and read back, since another queue on the file may have moved the times already)
  // and, on a step back, moves every future time back by it, none before now. A step forward
  // makes jobs due early, which costs a retry sooner, never a job (so does a boot with the clock
  // behind, once NTP steps it forward: the delays were moved back by the gap).
  const getSeen = db.prepare<[], number>("SELECT seen FROM queue_clock").pluck();
  const setSeen = db.prepare<[number]>(
    `INSERT INTO queue_clock (only, seen) VALUES (1, ?)
     ON CONFLICT (only) DO UPDATE SET seen = excluded.seen`,
  );
  // A queue file from before the clock was kept: its jobs' enqueue times are the latest it saw.
  const lastEnqueued = db.prepare<[], number | null>("SELECT MAX(enqueued_at) FROM queue_jobs").pluck();
  const moveBack = db.prepare<{ by: number; at: number }>(
    `UPDATE queue_jobs SET visible_at = MAX(@at, visible_at - @by),
       leased_until = CASE WHEN leased_until IS NULL THEN NULL ELSE MAX(@at, leased_until - @by) END
     WHERE visible_at > @at`,
  );
  // A step forward (NTP correcting a clock that was behind, a host resumed from a suspend) would
  // end the leases of the jobs this queue's consumer is delivering: received again while their
  // first delivery runs, each was sent twice. So each commit compares the time the wall clock says
  // passed since this queue's last commit with the time that did, and moves this owner's leases
  // still running then forward by the difference. Other jobs' delays are left: due early, they cost
  // a retry sooner, never a second send of one in flight.
  const keepLeases = db.prepare<{ by: number; owner: string; last: number }>(
    `UPDATE queue_jobs SET visible_at = visible_at + @by, leased_until = leased_until + @by
     WHERE state = 'leased' AND lease_owner = @owner AND leased_until > @last`,
  );
  /** The wall and monotonic times of this queue's last commit that went in. */
  let lastCommit: { readonly wall: number; readonly mono: number } | undefined;
  /** Within a commit: moves this owner's running leases forward on a clock step forward. */
  const keepLeasesRunning = (at: number, mono: number): void => {
    if (!lastCommit) return;
    const ahead = at - lastCommit.wall - (mono - lastCommit.mono);
    if (ahead > CLOCK_STEP_MS) keepLeases.run({ by: Math.round(ahead), owner, last: lastCommit.wall });
  };
  /** Within a commit: moves the times back on a clock step; returns the step, if any. */
  const keepClock = (at: number): QueueClockStep | undefined => {
    const recorded = getSeen.get();
    const seen = recorded ?? lastEnqueued.get() ?? at;
    if (at < seen - CLOCK_STEP_MS) {
      const by = seen - at;
      const jobs = moveBack.run({ by, at }).changes;
      setSeen.run(at);
      return { byMs: by, jobs };
    }
    if (recorded === undefined || at >= recorded + SEEN_EVERY_MS) setSeen.run(Math.max(at, seen));
    return undefined;
  };

  // IMMEDIATE takes the write lock up front, so a second process on the same file (the CLI
  // replaying dead letters while `serve` runs) waits instead of failing mid-transaction.
  // Acks, then sends, then leases: a receive asked for in the turn that queued jobs leases them in
  // the same commit. `serve`'s delivery thread relies on it: it pokes the consumer as it hands the
  // journal's rows over, so a lone event costs an intake-and-lease commit and an ack commit, not
  // three. Returns each lease's rows, and the jobs the leases dead-lettered.
  const commitAll = db.transaction(
    (
      batch: readonly Waiting[],
    ): {
      leased: (LeasedRow[] | undefined)[];
      acked: boolean[];
      buried: QueueDeadLettered[];
      step: QueueClockStep | undefined;
      times: { wall: number; mono: number };
    } => {
      const at = now();
      const mono = monotonic();
      const step = keepClock(at);
      keepLeasesRunning(at, mono);
      // An ack whose receipt is no longer the job's (its lease ran out and it was leased again)
      // deletes nothing, and says so.
      const acked = batch.map((b) => (b.ack ? ackLeased.run(b.ack.id, b.ack.receipt).changes > 0 : false));
      for (const b of batch)
        for (const r of b.rows)
          insert.run({
            id: r.id,
            body: r.body,
            visibleAt: at + ms(r.delayMs),
            now: at,
            grp: r.group ?? null,
          });
      for (const b of batch) if (b.position) setPosition.run(b.position);
      const buried: QueueDeadLettered[] = [];
      const leased = batch.map((b) =>
        b.lease ? leaseDue(at, b.lease.max, b.lease.visibilityMs, b.lease.skipGroups, buried) : undefined,
      );
      return { leased, acked, buried, step, times: { wall: at, mono } };
    },
  );

  /**
   * The first `max` due jobs by (visible_at, seq) outside `skipGroups`: the same jobs in the same
   * order as one filtered scan, read as the first `max` of each other group, merged.
   */
  const dueRows = (at: number, max: number, skipGroups: readonly string[]): DueRow[] => {
    const skipped = new Set(skipGroups);
    const rows = dueUngrouped.all(at, max);
    for (const group of groups.all()) if (!skipped.has(group)) rows.push(...dueInGroup.all(group, at, max));
    return rows.sort((a, b) => a.visibleAt - b.visibleAt || a.seq - b.seq).slice(0, max);
  };

  /**
   * Leases as of `at`, the time the same commit's sends were stamped with; adds the jobs it
   * dead-letters instead to `buried`.
   */
  const leaseDue = (
    at: number,
    max: number,
    visibilityMs: number,
    skipGroups: readonly string[],
    buried: QueueDeadLettered[],
  ): LeasedRow[] => {
    const until = at + ms(visibilityMs);
    const leased: LeasedRow[] = [];
    for (const row of dueRows(at, max, skipGroups)) {
      let body: unknown;
      try {
        body = JSON.parse(row.body);
      } catch (e) {
        // A stored job that does not parse can never be delivered, and leased it would come back
        // with every receive: it goes to the dead letters as stored (`hookgate dlq list`). The
        // parser's message, which quotes the text, is stored but not told (onDeadLettered).
        const why = errorMessage(e);
        bury.run({
          id: row.id,
          body: row.body,
          attempts: row.attempts,
          error: `the stored job is not valid JSON (${why}); dead-lettered as stored`,
          failedAt: at,
          grp: row.grp,
        });
        dropReady.run(row.seq);
        buried.push({ id: row.id, group: row.grp ?? undefined, attempts: row.attempts, reason: NOT_JSON });
        continue;
      }
      const receipt = randomUUID();
      lease.run({ seq: row.seq, until, owner, receipt });
      leased.push({
        id: row.id,
        body,
        attempts: row.attempts + 1,
        holds: row.holds,
        receipt,
        // Until a retry or a hold records another error: taken back again, it is told again.
        ...(row.interrupted === 1 && { interrupted: STOPPED_DELIVERING }),
      });
    }
    return leased;
  };

  const moveToDead = db.transaction((message: ReceivedMessage<T>, error: string): boolean => {
    const row = leasedRow.get(message.id, message.receipt);
    if (!row) return false;
    bury.run({
      id: message.id,
      body: row.body,
      attempts: message.attempts,
      error,
      failedAt: now(),
      grp: row.grp,
    });
    ackLeased.run(message.id, message.receipt);
    return true;
  });

  const requeue = (rows: readonly { id: string; body: string; grp: string | null }[]): number => {
    const at = now();
    for (const row of rows) {
      // Attempts start again from 0. If the same id is queued meanwhile, that job stands for it.
      insert.run({ id: row.id, body: row.body, visibleAt: at, now: at, grp: row.grp });
      unbury.run(row.id);
    }
    return rows.length;
  };
  /**
   * The rows whose job `keep` keeps (all without it); one whose text does not parse is kept, and
   * `keep` is asked of every job that does, a JSON string too, as the other queues ask it.
   */
  const kept = <R extends { body: string }>(
    rows: readonly R[],
    keep: ((body: unknown) => boolean) | undefined,
  ) =>
    keep === undefined
      ? rows
      : rows.filter((row) => {
          const parsed = parsedJob(row.body);
          return parsed === undefined || keep(parsed.job);
        });
  const replayIds = db.transaction((ids: readonly string[], keep?: (body: unknown) => boolean): DeadSwept => {
    const rows: { id: string; body: string; grp: string | null }[] = [];
    const missing: string[] = [];
    for (const id of new Set(ids)) {
      const row = deadById.get(id);
      if (row) rows.push(row);
      else missing.push(id);
    }
    return { count: requeue(kept(rows, keep)), missing };
  });
  /**
   * One slice of a replay of every dead letter after rowid `after` up to rowid `last`:
   * REPLAY_SLICE_ROWS read at most, for about REPLAY_SLICE_MS at most. How many it moved, the
   * last rowid it read (those `keep` leaves stay) and whether any is left.
   */
  const replaySlice = db.transaction(
    (
      after: number,
      last: number,
      keep: ((body: unknown) => boolean) | undefined,
    ): { moved: number; next: number; more: boolean } => {
      const began = performance.now();
      let moved = 0;
      let read = 0;
      let next = after;
      while (read < REPLAY_SLICE_ROWS) {
        const rows = deadBetween.all(next, last, Math.min(REPLAY_READ_ROWS, REPLAY_SLICE_ROWS - read));
        if (rows.length === 0) return { moved, next, more: false };
        moved += requeue(kept(rows, keep));
        read += rows.length;
        next = rows.at(-1)?.rowid ?? next;
        if (performance.now() - began >= REPLAY_SLICE_MS) break;
      }
      return { moved, next, more: true };
    },
  );

  // Without ids, one DELETE: dropping every dead letter never reads their bodies.
  const dropAllDead = db.prepare("DELETE FROM queue_dead");
  const drop = db.transaction((ids: readonly string[] | undefined): DeadSwept => {
    if (ids === undefined) return { count: dropAllDead.run().changes, missing: [] };
    const missing = [...new Set(ids)].filter((id) => unbury.run(id).changes === 0);
    return { count: new Set(ids).size - missing.length, missing };
  });

  // Group commit: the sends, acks and receives of one event-loop turn (every request answered in
  // it, every delivery that ended in it) go into one transaction at the end of the turn. A commit
  // is most of an enqueue's, ack's or lease's cost, and each call's promise settles only once its
  // change is committed, so an awaited send or ack is as durable as before and a received job is
  // leased on disk. A batch whose commit fails (another process held the lock past the busy
  // timeout) is tried once more on the next turn before its calls are rejected; an ack in it is
  // rejected at once, to be tried again each second as the other settles are (`settling`).
  let waiting: Waiting[] = [];
  /** When each lease this queue took ends, by the monotonic clock, by its receipt (`settling`). */
  const leaseEnds = new Map<string, number>();
  const commitWaiting = () => {
    const batch = waiting;
    waiting = [];
    // The sends and leases on their second try go in on their own, first, with the whole busy
    // timeout: in one commit with the turn's acks they waited a moment again, and a lock held past
    // two turns in a row in which deliveries ended rejected them (the journal's intake).
    const again = batch.filter((b) => b.tries > 0);
    commitBatch(again, false);
    // The rest wait a moment then, as a commit with an ack does: a turn waits the whole busy
    // timeout once at most. Waiting it again, a turn of second tries and new sends on a locked
    // file held the delivery thread 10 s; those that fail have their second try next turn.
    commitBatch(
      batch.filter((b) => b.tries === 0),
      again.length > 0,
    );
  };
  const commitBatch = (batch: readonly Waiting[], brief: boolean) => {
    if (batch.length === 0) return;
    let committed: ReturnType<typeof commitAll>;
    // A commit with an ack waits for a lock SHORT_BUSY_MS at most, as a retry, hold or dead letter
    // does (`briefly`): waiting the whole busy timeout (5 s in serve), and again on the next turn,
    // it held the delivery thread 10 s at a time on a locked file, its messages (a stop) unread,
    // where the second between a settle's tries is its wait. The sends and leases beside it have
    // their next turn's try with the whole busy timeout (`commitWaiting`); an ack has none.
    const commit = () => commitAll.immediate(batch);
    try {
      committed = calling(() => (brief || batch.some((b) => b.ack) ? briefly(commit) : commit()));
    } catch (e) {
      for (const b of batch) {
        if (b.tries === 0 && !b.ack && db.open) enqueueWork({ ...b, tries: 1 });
        else b.settle(named(e));
      }
      return;
    }
    lastCommit = committed.times;
    if (batch.some((b) => b.lease)) {
      for (const [receipt, end] of leaseEnds) if (end <= committed.times.mono) leaseEnds.delete(receipt);
    }
    for (const [i, b] of batch.entries()) {
      if (!b.lease) continue;
      for (const row of committed.leased[i] ?? [])
        leaseEnds.set(row.receipt, committed.times.mono + ms(b.lease.visibilityMs));
    }
    for (const [i, b] of batch.entries()) b.settle(undefined, committed.leased[i], committed.acked[i]);
    if (committed.step) options.onClockStep?.(committed.step);
    for (const letter of committed.buried) options.onDeadLettered?.(letter);
  };
  const enqueueWork = (entry: Waiting) => {
    if (waiting.length === 0) setImmediate(commitWaiting);
    waiting.push(entry);
  };
  /**
   * The settles waiting to be tried again, by receipt. The wait is told over (`onSettleWait`) once
   * a settle goes in and none is left waiting: with one flag for all, the first of two to go in
   * told it over while the other still waited.
   */
  const settlesWaiting = new Set<string>();
  /** A wait was told and not yet told over. */
  let toldWaiting = false;
  /** Aborted by `stopWaiting`: no settle waits from then on. */
  const stopped = new AbortController();
  /**
   * Settles a leased job (ack, retry, hold, dead letter), tried again while another process holds
   * the file locked or a write finds no room (`passes`), until the lease it settles ends (`waited`):
   * given up at the first failure, the job stayed leased, came back once its lease ran out and
   * was sent again (the same webhook-id), a duplicate at each lock that outlasted the busy timeout
   * and at each full disk that room was made on within the lease. Other failures (a damaged file)
   * do not pass by waiting, and are given up at once. Only this queue leases its jobs again, and
   * only once their leases end, so a settle that goes in before then settles that delivery.
   */
  const settling = async <R>(receipt: string, run: () => Promise<R>): Promise<R> => {
    for (;;) {
      try {
        const settled = await run();
        leaseEnds.delete(receipt);
        settlesWaiting.delete(receipt);
        if (toldWaiting && settlesWaiting.size === 0) {
          toldWaiting = false;
          options.onSettleWait?.();
        }
        return settled;
      } catch (e) {
        const end = leaseEnds.get(receipt);
        const waits = passes(e) && end !== undefined && db.open && monotonic() < end;
        if (!waits || !(await waited(receipt, e, end))) {
          leaseEnds.delete(receipt);
          settlesWaiting.delete(receipt);
          throw e;
        }
      }
    }
  };
  const shortBusyMs = Math.min(busyTimeoutMs, SHORT_BUSY_MS);
  /** The busy timeout in force: the short one once `stopWaiting` was called. */
  const busyMs = () => (stopped.signal.aborted ? shortBusyMs : busyTimeoutMs);
  /**
   * `run`, the statements of a retry, a hold or a dead letter, waiting for a lock SHORT_BUSY_MS at
   * most: tried again each second until its lease ends, a settle has that second for its
   * wait. Ten waiting the whole busy timeout one after another held the thread for ten of them at
   * a time; and made brief only once one waited, the first on a freshly locked file still waited
   * it out, as did each made in the same turn before that one had failed. An ack goes in the
   * turn's commit, which waits so too (`commitWaiting`). Sets numbers, taking no lock.
   */
  const briefly = <R>(run: () => R): R => {
    if (busyMs() === shortBusyMs) return run();
    db.pragma(`busy_timeout = ${shortBusyMs}`);
    try {
      return run();
    } finally {
      if (db.open) db.pragma(`busy_timeout = ${busyMs()}`);
    }
  };
  /**
   * Waits before a settle that failed on `error` is tried again, a second or until its lease ends
   * (`end`), whichever comes first: the last try is at the lease's end. Given up once less than a
   * second was left, one with under a second of its lease left had only its first try's short
   * wait, where the whole busy timeout had got it in. Tried at the end, it is safe: a job leased
   * again meanwhile has another receipt, and the settle changes nothing. False if `stopWaiting`
   * ended the wait.
   */
  const waited = async (receipt: string, error: unknown, end: number): Promise<boolean> => {
    if (stopped.signal.aborted) return false;
    settlesWaiting.add(receipt);
    toldWaiting = true;
    options.onSettleWait?.(error);
    const untilEnd = Math.max(0, end - monotonic());
    return sleep(Math.min(SETTLE_RETRY_MS, untilEnd), true, { signal: stopped.signal }).catch(() => false);
  };

  return {
    skipsGroups: true,
    send(messages) {
      return new Promise<void>((resolve, reject) => {
        // Serialised here, so a body that cannot be fails its own send, not the turn's batch.
        const rows = messages.map((m) => ({
          id: m.id,
          body: JSON.stringify(m.body),
          delayMs: m.delayMs ?? 0,
          group: m.group,
        }));
        enqueueWork({ rows, tries: 0, settle: (error) => (error === undefined ? resolve() : reject(error)) });
      });
    },

    intake(rows, position) {
      return new Promise<void>((resolve, reject) => {
        enqueueWork({
          rows,
          position,
          tries: 0,
          settle: (error) => (error === undefined ? resolve() : reject(error)),
        });
      });
    },

    intakePosition() {
      return calling(() => getPosition.get());
    },

    stopWaiting() {
      stopped.abort();
      // Sets a number, taking no lock: no call to announce (`beforeCall`).
      if (db.open) db.pragma(`busy_timeout = ${busyMs()}`);
    },

    stats() {
      return naming(() => ({
        jobs: countJobs.get() ?? 0,
        deadLetters: countDead.get() ?? 0,
        // The first due job of all: one seek per group.
        oldestDueAt: dueRows(now(), 1, [])[0]?.visibleAt,
      }));
    },

    receive(max, visibilityMs, skipGroups = []) {
      if (max <= 0) return Promise.resolve([]);
      return new Promise<ReceivedMessage<T>[]>((resolve, reject) => {
        enqueueWork({
          rows: [],
          lease: { max: Math.floor(max), visibilityMs, skipGroups },
          tries: 0,
          settle: (error, leased = []) => {
            if (error !== undefined) return reject(error);
            resolve(leased.map((row) => ({ ...row, body: row.body as T })));
          },
        });
      });
    },

    ack(message) {
      return settling(
        message.receipt,
        () =>
          new Promise<boolean>((resolve, reject) => {
            enqueueWork({
              rows: [],
              ack: { id: message.id, receipt: message.receipt },
              tries: 0,
              settle: (error, _leased, acked = false) =>
                error === undefined ? resolve(acked) : reject(error),
            });
          }),
      );
    },

    retry(message, delayMs, error) {
      return settling(message.receipt, async () => {
        const visibleAt = now() + ms(delayMs);
        return naming(() =>
          briefly(
            () => release.run({ id: message.id, receipt: message.receipt, visibleAt, error }).changes > 0,
          ),
        );
      });
    },

    hold(message, delayMs, reason, options) {
      const added = options?.addsHold === false ? 0 : 1;
      return settling(message.receipt, async () => {
        const visibleAt = now() + ms(delayMs);
        return naming(() =>
          briefly(
            () =>
              holdLeased.run({ id: message.id, receipt: message.receipt, visibleAt, error: reason, added })
                .changes > 0,
          ),
        );
      });
    },

    deadLetter(message, error) {
      return settling(message.receipt, async () =>
        naming(() => briefly(() => moveToDead.immediate(message, error))),
      );
    },

    async listDead(limit = 100): Promise<DeadLetter<T>[]> {
      // A job dead-lettered because it did not parse is listed as its stored text.
      return naming(() => listDeadRows.all(Math.max(0, limit))).map((row) => ({
        ...row,
        body: parsedOrText(row.body) as T | string,
      }));
    },

    async replayDead(ids, keep) {
      if (ids !== undefined) return naming(() => replayIds.immediate(ids, keep));
      // Every dead letter, in slices with a pause between them: in one transaction, 100,000 of them
      // held the write lock for 4 to 7 s, a running serve's delivery thread standing still waiting
      // for it, and 400,000 for 40 s, past its busy timeout twice (its acks failed, and the jobs it
      // had delivered were sent again); all their bodies were read into memory at once. Only
      // the dead letters there were when it began: one that serve makes meanwhile (a replayed job
      // whose sink is gone is dead-lettered again at once) is left, or the replay never ended.
      const last = naming(() => lastDead.get()) ?? 0;
      let replayed = 0;
      let after = 0;
      for (;;) {
        const slice = naming(() => replaySlice.immediate(after, last, keep));
        replayed += slice.moved;
        after = slice.next;
        if (!slice.more) return { count: replayed, missing: [] };
        await sleep(REPLAY_PAUSE_MS);
      }
    },

    async dropDead(ids) {
      return naming(() => drop.immediate(ids));
    },

    async copyTo(path) {
      commitWaiting();
      const partial = partialCopy(path);
      copyPrivate(partial);
      try {
        await db.backup(partial);
        renameSync(partial, path);
      } catch (e) {
        try {
          rmSync(partial, { force: true });
        } catch {
          // Not a file (a directory in its way): nothing to mistake for a copy.
        }
        throw named(e);
      }
    },

    recoverLeases() {
      return calling(() => recover.run({ owner, now: now(), error: STOPPED_DELIVERING }).changes);
    },

    async close() {
      if (db.open) {
        commitWaiting();
        calling(() => db.close());
      }
    },
  };
}

function parsedOrText(text: string): unknown {
  const parsed = parsedJob(text);
  return parsed === undefined ? text : parsed.job;
}

/** A stored body's job, or undefined for text that does not parse, told apart from a JSON string. */
function parsedJob(text: string): { readonly job: unknown } | undefined {
  try {
    return { job: JSON.parse(text) };
  } catch {
    return undefined;
  }
}

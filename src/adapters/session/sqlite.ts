/** The session store on Node: the last tool call per session, in the gateway's SQLite file. */
import { closeSync, openSync } from "node:fs";
import Database from "better-sqlite3";
import type { SessionStore, ToolHalf } from "../../app/notify.js";
import { errorMessage } from "../../core/errors.js";
import { sqliteFix } from "../sqlite-fix.js";

/** Sessions idle longer than this are forgotten (checked on write). */
const RETENTION_MS = 24 * 3600 * 1000;
/** Writes to a table between two sweeps of it, and the rows one sweep reads. */
const SWEEP_EVERY = 1000;
const SWEEP_ROWS = 2000;

/**
 * Forgets a table's rows older than the retention a window at a time: each sweep reads the next
 * `rows` rows by rowid after where the last one stopped, and starts over at the end. A `DELETE
 * ... WHERE at < ?` would read the whole table on every sweep, unindexed (0.06–0.17 s at 700,000
 * deepagents tool halves, holding every decision behind it), and an index on `at` would cost each
 * write about 13 µs more on the answer's path. Swept at two rows read per write, a table of a
 * day's writes is read through about every twelve hours, so a row outlives the retention by at
 * most that.
 */
export function createSweeper(db: Database.Database, table: string, rows = SWEEP_ROWS) {
  const windowEnd = db
    .prepare<[number, number]>(`SELECT rowid FROM ${table} WHERE rowid > ? ORDER BY rowid LIMIT 1 OFFSET ?`)
    .pluck();
  const forget = db.prepare<[number, number, number]>(
    `DELETE FROM ${table} WHERE rowid > ? AND rowid <= ? AND at < ?`,
  );
  let after = 0;
  return (before: number): void => {
    const end = windowEnd.get(after, rows - 1) as number | undefined;
    forget.run(after, end ?? Number.MAX_SAFE_INTEGER, before);
    after = end ?? 0;
  };
}

/**
 * `busyTimeoutMs`: as for the SQLite queue, the longest a call waits for another process's lock.
 * `openedAt`: the time it opens at, on the clock of the `at` its callers give.
 */
export function createSqliteSessionStore(
  path: string,
  busyTimeoutMs = 5000,
  openedAt = Date.now(),
): SessionStore & { close(): void } {
  // Made readable by its own user alone whatever the data dir's mode (one that exists keeps its
  // own, 0755 for systemd's StateDirectory): it holds what agents ran. SQLite gives its WAL files
  // the database file's mode. A file that exists keeps its mode.
  closeSync(openSync(path, "a", 0o600));
  const db = new Database(path, { timeout: busyTimeoutMs });
  // Held from the first statement until close: the file is its serve's own (one serve per data
  // dir), and a write that took and gave back SQLite's file locks made six fcntl calls, 22–25 µs
  // of CPU on the answer's path against 4.3–4.7 µs so (a tool call remembered before its
  // PreToolUse is answered). Set before WAL, the WAL's index is kept in memory (no `-shm` file).
  // No other process opens the file while serve runs (a sqlite3 shell is told "database is
  // locked"), so none can hold a decision behind its lock either.
  db.pragma("locking_mode = EXCLUSIVE");
  db.pragma("journal_mode = WAL");
  db.exec(`CREATE TABLE IF NOT EXISTS session_tools (
    session_id TEXT PRIMARY KEY, tool_name TEXT NOT NULL, summary TEXT NOT NULL, at INTEGER NOT NULL)`);
  const upsert = db.prepare(
    `INSERT INTO session_tools (session_id, tool_name, summary, at) VALUES (?, ?, ?, ?)
     ON CONFLICT(session_id) DO UPDATE SET tool_name = excluded.tool_name, summary = excluded.summary, at = excluded.at`,
  );
  // What a sweep has not reached yet is past the retention all the same: not read, as KV's is not.
  const select = db.prepare(
    "SELECT tool_name AS toolName, summary FROM session_tools WHERE session_id = ? AND at > ?",
  );
  const sweepTools = createSweeper(db, "session_tools");
  let toolWrites = 0;
  // A call's keys in one transaction: one commit (and its WAL sync) for both, not one each.
  const upsertAll = db.transaction(
    (ids: readonly string[], tool: { toolName: string; summary: string }, at: number) => {
      for (const id of ids) {
        upsert.run(id, tool.toolName, tool.summary, at);
        if (++toolWrites % SWEEP_EVERY === 0) sweepTools(at - RETENTION_MS);
      }
    },
  );
  db.exec(`CREATE TABLE IF NOT EXISTS tool_halves (
    tool_id TEXT NOT NULL, kind TEXT NOT NULL, half TEXT NOT NULL, at INTEGER NOT NULL, PRIMARY KEY (tool_id, kind))`);
  const upsertHalf = db.prepare(
    `INSERT INTO tool_halves (tool_id, kind, half, at) VALUES (?, ?, ?, ?)
     ON CONFLICT(tool_id, kind) DO UPDATE SET half = excluded.half, at = excluded.at`,
  );
  const selectHalves = db.prepare("SELECT half FROM tool_halves WHERE tool_id = ? AND at > ?");
  const sweepHalves = createSweeper(db, "tool_halves");
  // A sweep of each table as the store opens, before serve answers anything: the sweeps count one
  // process's writes, and a serve restarted before its 1,000th (a laptop's, daily) never swept,
  // what it remembered staying in the file for good. One window, not the whole table: deleting
  // 700,000 rows a day old held a start for 3.3 s.
  sweepTools(openedAt - RETENTION_MS);
  sweepHalves(openedAt - RETENTION_MS);
  let halfWrites = 0;
  /**
   * A failure naming the file, and what to do about it: SQLite's message names none
   * ("file is not a database"), and `serve` logged that for every tool call with no word of which
   * file or what to do.
   */
  const naming = <R>(run: () => R): R => {
    try {
      return run();
    } catch (e) {
      const why = errorMessage(e);
      const fix = sqliteFix(why, {
        running: true,
        movedAside:
          " (the tool calls it remembered are forgotten: a permission prompt goes out without its tool until the session's next one)",
      });
      throw new Error(`the session store at ${path}: ${why}${fix === undefined ? "" : `; ${fix}`}`, {
        cause: e,
      });
    }
  };
  return {
    async rememberTool(sessionIds, tool, at) {
      naming(() => upsertAll(sessionIds, tool, at));
    },
    async lastTool(sessionId, at = Number.NEGATIVE_INFINITY, writtenAfter = Number.NEGATIVE_INFINITY) {
      return naming(
        () =>
          select.get(sessionId, Math.max(at - RETENTION_MS, writtenAfter)) as
            | { toolName: string; summary: string }
            | undefined,
      );
    },
    async rememberToolHalf(toolId, half, at) {
      naming(() => {
        upsertHalf.run(toolId, half.kind, JSON.stringify(half), at);
        if (++halfWrites % SWEEP_EVERY === 0) sweepHalves(at - RETENTION_MS);
      });
    },
    async toolHalves(toolId, at = Number.NEGATIVE_INFINITY) {
      const out: { use?: ToolHalf; result?: ToolHalf } = {};
      for (const row of naming(() => selectHalves.all(toolId, at - RETENTION_MS) as { half: string }[])) {
        const half = JSON.parse(row.half) as ToolHalf;
        if (half.kind === "use") out.use = half;
        else out.result = half;
      }
      return out;
    },
    close: () => db.close(),
  };
}

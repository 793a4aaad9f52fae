/** The session store on Node: the last tool call per session, in the gateway's SQLite file. */
import Database from "better-sqlite3";
import type { SessionStore, ToolHalf } from "../../app/notify.js";

/** Sessions idle longer than this are forgotten (checked on write). */
const RETENTION_MS = 24 * 3600 * 1000;

/** `busyTimeoutMs`: as for the SQLite queue, the longest a call waits for another process's lock. */
export function createSqliteSessionStore(
  path: string,
  busyTimeoutMs = 5000,
): SessionStore & { close(): void } {
  const db = new Database(path, { timeout: busyTimeoutMs });
  db.pragma("journal_mode = WAL");
  db.exec(`CREATE TABLE IF NOT EXISTS session_tools (
    session_id TEXT PRIMARY KEY, tool_name TEXT NOT NULL, summary TEXT NOT NULL, at INTEGER NOT NULL)`);
  const upsert = db.prepare(
    `INSERT INTO session_tools (session_id, tool_name, summary, at) VALUES (?, ?, ?, ?)
     ON CONFLICT(session_id) DO UPDATE SET tool_name = excluded.tool_name, summary = excluded.summary, at = excluded.at`,
  );
  const select = db.prepare("SELECT tool_name AS toolName, summary FROM session_tools WHERE session_id = ?");
  const prune = db.prepare("DELETE FROM session_tools WHERE at < ?");
  db.exec(`CREATE TABLE IF NOT EXISTS tool_halves (
    tool_id TEXT NOT NULL, kind TEXT NOT NULL, half TEXT NOT NULL, at INTEGER NOT NULL, PRIMARY KEY (tool_id, kind))`);
  const upsertHalf = db.prepare(
    `INSERT INTO tool_halves (tool_id, kind, half, at) VALUES (?, ?, ?, ?)
     ON CONFLICT(tool_id, kind) DO UPDATE SET half = excluded.half, at = excluded.at`,
  );
  const selectHalves = db.prepare("SELECT half FROM tool_halves WHERE tool_id = ?");
  const pruneHalves = db.prepare("DELETE FROM tool_halves WHERE at < ?");
  let writes = 0;
  return {
    async rememberTool(sessionId, tool, at) {
      upsert.run(sessionId, tool.toolName, tool.summary, at);
      if (++writes % 1000 === 0) prune.run(at - RETENTION_MS);
    },
    async lastTool(sessionId) {
      return select.get(sessionId) as { toolName: string; summary: string } | undefined;
    },
    async rememberToolHalf(toolId, half, at) {
      upsertHalf.run(toolId, half.kind, JSON.stringify(half), at);
      if (++writes % 1000 === 0) pruneHalves.run(at - RETENTION_MS);
    },
    async toolHalves(toolId) {
      const out: { use?: ToolHalf; result?: ToolHalf } = {};
      for (const row of selectHalves.all(toolId) as { half: string }[]) {
        const half = JSON.parse(row.half) as ToolHalf;
        if (half.kind === "use") out.use = half;
        else out.result = half;
      }
      return out;
    },
    close: () => db.close(),
  };
}

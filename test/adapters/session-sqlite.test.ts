/**
 * The session store on Node, on a real SQLite file: what it remembers outlives the process, and
 * what is older than a day is forgotten a window of rows at a time, never by reading the whole
 * table in one call on the answer's path.
 */
import { chmodSync, existsSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { beforeEach, describe, expect, it } from "vitest";
import { createSqliteSessionStore, createSweeper } from "../../src/adapters/session/sqlite.js";
import { tempDir } from "../support/temp.js";

const DAY = 24 * 3_600_000;
const T0 = 1_700_000_000_000;
let dir: string;
let path: string;

beforeEach(async () => {
  dir = tempDir("sessions");
  path = join(dir, "sessions.sqlite");
});

const count = (table: string, where = "1") => {
  const db = new Database(path, { readonly: true });
  try {
    return db.prepare(`SELECT count(*) FROM ${table} WHERE ${where}`).pluck().get() as number;
  } finally {
    db.close();
  }
};

describe("createSqliteSessionStore", () => {
  it("remembers each session's last tool and each tool call's halves across a reopen", async () => {
    const first = createSqliteSessionStore(path);
    await first.rememberTool(["s1"], { toolName: "Bash", summary: "npm test" }, T0);
    await first.rememberTool(["s1"], { toolName: "Edit", summary: "src/a.ts" }, T0 + 1);
    await first.rememberToolHalf(
      "call_1",
      { kind: "use", toolName: "execute", toolArgs: { command: "ls" } },
      T0,
    );
    first.close();

    // Opened again within the day: nothing it remembered is a day old yet.
    const second = createSqliteSessionStore(path, 5000, T0 + DAY - 1);
    try {
      expect(await second.lastTool("s1")).toEqual({ toolName: "Edit", summary: "src/a.ts" });
      expect(await second.lastTool("s2")).toBeUndefined();
      await second.rememberToolHalf("call_1", { kind: "result", status: "success", output: "a b" }, T0 + 2);
      expect(await second.toolHalves("call_1")).toEqual({
        use: { kind: "use", toolName: "execute", toolArgs: { command: "ls" } },
        result: { kind: "result", status: "success", output: "a b" },
      });
    } finally {
      second.close();
    }
  });

  it("forgets sessions idle for a day, also behind one that stays busy at the head of the table", async () => {
    const store = createSqliteSessionStore(path);
    try {
      // The busy session is written first, so it holds the lowest rowid for as long as it lives.
      await store.rememberTool(["busy"], { toolName: "Bash", summary: "first" }, T0);
      for (let i = 0; i < 1500; i++)
        await store.rememberTool([`old-${i}`], { toolName: "Bash", summary: "x" }, T0);
      for (let i = 0; i < 2500; i++) {
        const at = T0 + DAY + 1 + i;
        await store.rememberTool(
          [i % 2 === 0 ? "busy" : `new-${i}`],
          { toolName: "Read", summary: `${i}` },
          at,
        );
      }
      expect(await store.lastTool("busy")).toEqual({ toolName: "Read", summary: "2498" });
    } finally {
      store.close();
    }
    expect(count("session_tools", "session_id LIKE 'old-%'")).toBe(0);
    expect(count("session_tools", "session_id LIKE 'new-%'")).toBe(1250);
  });

  it("makes its file, and the WAL file beside it, readable by its own user alone, in a data dir others may read", async () => {
    // A data dir that exists keeps its mode (systemd's StateDirectory makes it 0755): the tool
    // calls remembered there were readable by every user of the host.
    chmodSync(dir, 0o755);
    const previous = process.umask(0o022);
    let store: ReturnType<typeof createSqliteSessionStore> | undefined;
    try {
      store = createSqliteSessionStore(path);
      await store.rememberTool(["s1"], { toolName: "Bash", summary: "deploy prod" }, T0);
      const modes = ["", "-wal"].map((end) => (statSync(`${path}${end}`).mode & 0o777).toString(8));
      expect(modes).toEqual(["600", "600"]);
      // Its WAL index is kept in memory (the file is locked exclusively): there is no -shm file.
      expect(existsSync(`${path}-shm`)).toBe(false);
    } finally {
      store?.close();
      process.umask(previous);
    }
  });

  it("keeps the mode of a file it finds", async () => {
    writeFileSync(path, "", { mode: 0o640 });
    const store = createSqliteSessionStore(path);
    try {
      await store.rememberTool(["s1"], { toolName: "Bash", summary: "ls" }, T0);
      expect((statSync(path).mode & 0o777).toString(8)).toBe("640");
    } finally {
      store.close();
    }
  });

  it("holds its file locked while open, so that no other process can hold a decision behind the file's lock", async () => {
    const store = createSqliteSessionStore(path, 0);
    try {
      await store.rememberTool(["s1"], { toolName: "Bash", summary: "ls" }, T0);
      // A sqlite3 shell or a backup cannot start a transaction on it, not even to read.
      const other = new Database(path, { timeout: 0 });
      try {
        expect(() => other.exec("BEGIN IMMEDIATE")).toThrow(/database is locked/);
        expect(() => other.prepare("SELECT count(*) FROM session_tools").get()).toThrow(/database is locked/);
      } finally {
        other.close();
      }
      // While the store writes and reads on, each call taking no lock of the file's.
      await store.rememberTool(["s1"], { toolName: "Edit", summary: "a.ts" }, T0 + 1);
      expect(await store.lastTool("s1")).toEqual({ toolName: "Edit", summary: "a.ts" });
    } finally {
      store.close();
    }
    // Closed, it gives the file up.
    expect(count("session_tools")).toBe(1);
  });

  it("refuses to open a file another process holds locked", () => {
    // A sqlite3 shell left in a write transaction on the file before serve starts.
    const holder = new Database(path);
    try {
      holder.exec("CREATE TABLE x (y)");
      holder.exec("BEGIN IMMEDIATE");
      expect(() => createSqliteSessionStore(path, 0)).toThrow(/database is locked/);
    } finally {
      holder.close();
    }
  });

  it("gives nothing written a day or more before it is read, though no sweep has deleted it yet", async () => {
    // KV forgets at the day; rows a sweep had not reached were read for up to half a day more, so
    // a prompt after a day idle named a tool on Node and none on Workers.
    const store = createSqliteSessionStore(path);
    try {
      await store.rememberTool(["s1"], { toolName: "Bash", summary: "ls" }, T0);
      await store.rememberToolHalf("call_1", { kind: "use", toolName: "execute", toolArgs: {} }, T0);
      await store.rememberToolHalf("call_1", { kind: "result", status: "success", output: "" }, T0 + 1);
      expect(await store.lastTool("s1", T0 + DAY - 1)).toEqual({ toolName: "Bash", summary: "ls" });
      expect(await store.lastTool("s1", T0 + DAY)).toBeUndefined();
      expect(await store.toolHalves("call_1", T0 + DAY)).toEqual({
        result: { kind: "result", status: "success", output: "" },
      });
    } finally {
      store.close();
    }
    expect(count("session_tools")).toBe(1);
  });

  it("forgets what is a day old when it opens, for a serve restarted before its sweeps came round", async () => {
    // A sweep runs each 1,000 writes of one process: a serve restarted more often than that (a
    // laptop's, daily) never swept, and each day's tool calls stayed in the file for good.
    for (let day = 0; day < 4; day++) {
      const store = createSqliteSessionStore(path, 5000, T0 + day * DAY);
      try {
        for (let i = 0; i < 100; i++) {
          await store.rememberTool([`s${day}-${i}`], { toolName: "Bash", summary: "ls" }, T0 + day * DAY + i);
          await store.rememberToolHalf(
            `c${day}-${i}`,
            { kind: "result", status: "success", output: "" },
            T0 + day * DAY + i,
          );
        }
      } finally {
        store.close();
      }
    }
    createSqliteSessionStore(path, 5000, T0 + 3 * DAY + 200).close();
    // The last day's alone: the day before's are all a day old at the last open.
    expect(count("session_tools")).toBe(100);
    expect(count("tool_halves")).toBe(100);
  });

  it("forgets a deepagents tool call's halves a day after they were written", async () => {
    const store = createSqliteSessionStore(path);
    try {
      for (let i = 0; i < 1200; i++)
        await store.rememberToolHalf(`old_${i}`, { kind: "result", status: "success", output: "" }, T0);
      for (let i = 0; i < 2000; i++)
        await store.rememberToolHalf(
          `new_${i}`,
          { kind: "result", status: "success", output: "" },
          T0 + DAY + 1,
        );
    } finally {
      store.close();
    }
    expect(count("tool_halves", "tool_id LIKE 'old_%'")).toBe(0);
    expect(count("tool_halves", "tool_id LIKE 'new_%'")).toBe(2000);
  });
});

describe("createSweeper", () => {
  it("reads one window of rows per sweep, moves on, and starts over at the end", () => {
    const db = new Database(path);
    try {
      db.exec("CREATE TABLE t (k TEXT PRIMARY KEY, at INTEGER NOT NULL)");
      const insert = db.prepare("INSERT INTO t (k, at) VALUES (?, ?)");
      for (let i = 1; i <= 7; i++) insert.run(`k${i}`, i === 2 ? 100 : 1); // k2 is the only recent row
      const left = () => (db.prepare("SELECT k FROM t ORDER BY rowid").pluck().all() as string[]).join(" ");
      const sweep = createSweeper(db, "t", 3);

      sweep(50);
      expect(left()).toBe("k2 k4 k5 k6 k7"); // rows 1 to 3 only
      sweep(50);
      expect(left()).toBe("k2 k7"); // rows 4 to 6
      insert.run("k8", 1);
      sweep(50);
      expect(left()).toBe("k2"); // the rest, then from the start again
      insert.run("k9", 1);
      sweep(50);
      expect(left()).toBe("k2");
    } finally {
      db.close();
    }
  });
});

/**
 * The fix told for a failing SQLite file of `serve`'s data dir, by SQLite's (or the file
 * system's) message: the same trouble said the same way at the start and while `serve` runs, each
 * with what fits there (start again, or stop and start it again; what waits meanwhile).
 */
import { describe, expect, it } from "vitest";
import { sqliteFix } from "../../src/adapters/sqlite-fix.js";

const atStart = (message: string) => sqliteFix(message, { movedAside: "; LOST" });
const running = (message: string) =>
  sqliteFix(message, { running: true, file: "/d/queue.sqlite", movedAside: " LOST", meanwhile: "WAITS" });

describe("sqliteFix", () => {
  it.each([
    [
      "file is not a database",
      "that file is not a SQLite database (damaged, or another file in its place): move it aside (with its -wal and -shm files, if any) and hookgate makes a new one, or pass another --data-dir; LOST",
      "/d/queue.sqlite is damaged: stop serve, move it aside (with its -wal and -shm files, if any) and start serve again, which makes a new one LOST",
    ],
    [
      "database disk image is malformed",
      "that SQLite file is damaged: move it aside (with its -wal and -shm files, if any) and hookgate makes a new one, or pass another --data-dir; LOST",
      "/d/queue.sqlite is damaged: stop serve, move it aside (with its -wal and -shm files, if any) and start serve again, which makes a new one LOST",
    ],
    [
      "ENOSPC: no space left on device, write",
      "the disk under the data dir is full (or its user's quota): free some space and start again, or pass a --data-dir on another disk",
      "the disk under the data dir is full (or its user's quota): free some space; WAITS",
    ],
    [
      "database is locked",
      "let it finish or end it, and start again; on a network or VM-shared file system",
      "let it finish or end it; WAITS",
    ],
    [
      "disk I/O error",
      "raise the limit or quota, free some space or use a --data-dir on a local disk, and start again",
      "free some space or raise the quota or limit, and serve goes on; WAITS",
    ],
    [
      // The queue's "disk I/O error" with its code: the -shm file could not grow on a full disk.
      "the SQLite queue at /d/queue.sqlite: disk I/O error (SQLITE_IOERR_SHMSIZE)",
      "the disk under the data dir is full (or its user's quota): free some space and start again",
      "the disk under the data dir is full (or its user's quota): free some space; WAITS",
    ],
  ])("tells %j at the start and while serve runs", (message, start, run) => {
    expect(atStart(message)).toContain(start);
    expect(running(message)).toContain(run);
  });

  it("tells a running serve's write error, a quota's or a file size limit's, without a restart first", () => {
    // SQLite says "disk I/O error" (SQLITE_IOERR_WRITE) for a user's quota (EDQUOT) or the file
    // size limit (EFBIG), which serve waits out: a delivery's outcome is recorded once room is
    // made. "Start serve again" gave up the outcomes waiting (stopWaiting), their jobs sent again.
    const run = running("disk I/O error");
    expect(run).toContain("the user's disk quota or this process's file size limit");
    expect(run?.indexOf("serve goes on")).toBeLessThan(run?.indexOf("stop serve") ?? -1);
  });

  it("says where a failing disk shows, which SQLite tells as the same write error", () => {
    // A disk's EIO is SQLITE_IOERR_WRITE too, waited out as a quota's is: the line listed it
    // among the causes with nothing to tell it by.
    for (const fix of [atStart("disk I/O error"), running("disk I/O error (SQLITE_IOERR_WRITE)")])
      expect(fix).toMatch(/failing disk.*dmesg|dmesg.*failing disk/);
  });

  it("knows no fix for a failure it does not name", () => {
    expect(atStart("EACCES: permission denied, open")).toBeUndefined();
    expect(running("SQLITE_CONSTRAINT")).toBeUndefined();
  });
});

/**
 * What to do about a failure of one of `serve`'s SQLite files (the queue, the session store, the
 * data dir's lock), by what its message says: SQLite's own ("file is not a database", "database
 * is locked") name neither the file nor a fix. One table for the failure that stops `serve` at
 * its start and for one while it runs, so each says the same of the same trouble.
 */

/** Where the failure happened, and what the file's loss means, as `sqliteFix` words it. */
export interface SqliteFileFailure {
  /**
   * `serve` runs on past it (a fix that moves the file aside stops `serve` first and starts it
   * again, which makes a new one); without it, the failure stopped `serve` at its start.
   */
  readonly running?: boolean;
  /** How a running `serve`'s fix names the file: its path, or "that file" (the default). */
  readonly file?: string;
  /** Said right after the file is made anew: what the new one does, and what the old one held. */
  readonly movedAside: string;
  /** Said after a running `serve`'s fix that needs no restart: what waits for it meanwhile. */
  readonly meanwhile?: string;
}

const MOVE_ASIDE = "move it aside (with its -wal and -shm files, if any)";

/**
 * The fix for `message`, the first that matches, or undefined when nothing known helps: a damaged
 * file, or another in its place, is no matter of room or locks, and a write that fails needs room
 * or a higher limit, not another directory. A full disk's or a size limit's errors of the data
 * dir's other files (`ENOSPC`, `EDQUOT`, `EFBIG`: the intake journal's) are told as the SQLite
 * files' are.
 */
export function sqliteFix(message: string, failure: SqliteFileFailure): string | undefined {
  const { running = false, file = "that file", movedAside, meanwhile } = failure;
  const then = meanwhile === undefined ? "" : `; ${meanwhile}`;
  if (/not a database|malformed/.test(message)) {
    // Mid-run the file was a database when it opened; at the start it may be another file.
    if (running)
      return `${file} is damaged: stop serve, ${MOVE_ASIDE} and start serve again, which makes a new one${movedAside}`;
    const what = /not a database/.test(message)
      ? "that file is not a SQLite database (damaged, or another file in its place)"
      : "that SQLite file is damaged";
    return `${what}: ${MOVE_ASIDE} and hookgate makes a new one, or pass another --data-dir${movedAside}`;
  }
  // SQLITE_IOERR_SHMSIZE, said by the queue after SQLite's "disk I/O error": its -shm file, the
  // WAL's index, could not grow, for want of room.
  if (/database or disk is full|ENOSPC|EDQUOT|SQLITE_IOERR_SHMSIZE/.test(message))
    return `the disk under the data dir is full (or its user's quota): free some space${running ? then : " and start again, or pass a --data-dir on another disk"}`;
  if (/database is locked/.test(message))
    return `another process holds that file locked (a sqlite3 shell or a backup left in a transaction, or on queue.sqlite a hookgate dlq command still running): let it finish or end it${running ? then : ", and start again; on a network or VM-shared file system (NFS, WSL's /mnt/c, a Docker Desktop bind mount) SQLite's locks may not work: use a --data-dir on a local disk"}`;
  if (/disk I\/O error|EFBIG/.test(message)) {
    // SQLite tells a user's quota (EDQUOT) and the file size limit (EFBIG) as a write error, which
    // a running serve waits out, a delivery's outcome recorded once room is made: told to start
    // serve again first, its operator gave up the outcomes waiting, their jobs sent again.
    const why =
      "a write in it failed: the user's disk quota or this process's file size limit (ulimit -f, systemd's LimitFSIZE=) may be reached, or its disk is full or failing, or it is a network or VM-shared file system SQLite cannot write to safely";
    return running
      ? `${why}; free some space or raise the quota or limit, and serve goes on${then}; on a failing disk (the kernel's log, dmesg, shows its I/O errors) or a shared one, stop serve and start it again with a --data-dir on a local disk`
      : `${why} (the kernel's log, dmesg, shows a failing disk's I/O errors); raise the limit or quota, free some space or use a --data-dir on a local disk, and start again`;
  }
  return undefined;
}

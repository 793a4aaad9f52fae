/**
 * `serve`'s log lines on a stream (its stdout), written so that the stream can never stop the
 * gateway answering:
 * - a write that fails (a closed pipe: `serve | head`) drops log lines from then on, said once:
 *   an unhandled EPIPE would end the process, and the request being logged would get no answer;
 *   the lines waiting in the stream when it failed are lost with it, and counted with the rest;
 * - a stream not read (a stalled log shipper, a full pipe) would otherwise hold every line
 *   written since in memory until the process runs out of it (measured: 10 MB per 2,000 audit
 *   lines of 2.5 KB). Past `limitBytes` waiting, lines are dropped and counted until the stream
 *   drains, which is said when it starts and when it ends;
 * - a write that finds no room (ENOSPC, EDQUOT: a full disk under a log file, written with
 *   `fileLines`) drops log lines until a write succeeds again, which is said when it starts and
 *   when it ends: the disk freed, the audit lines come back without a restart.
 */
import { writeSync } from "node:fs";

/** The part of a Node writable stream (process.stdout) used here. */
export interface LineStream {
  /** `done`, where the stream calls it, says whether the write failed after it was taken. */
  write(text: string, done?: (error?: Error | null) => void): unknown;
  readonly writableLength: number;
  on(event: "error", listener: (error: Error) => void): unknown;
  on(event: "drain", listener: () => void): unknown;
}

export interface GuardedStream {
  write(text: string): void;
  /** Log lines dropped so far, whole lines (each ends with a newline). */
  dropped(): number;
  /** Bytes written and not yet taken by the stream's reader. */
  backlogBytes(): number;
}

/** Past this many bytes waiting in the stream, lines are dropped until it drains. */
export const LOG_BACKLOG_LIMIT_BYTES = 16 * 1024 * 1024;

const NEWLINE = 0x0a;

/**
 * Errors of a write that may succeed later: the file system had no room, or the file none under
 * the process's size limit (EFBIG: `ulimit -f`, systemd's LimitFSIZE=). A copytruncate makes room
 * under that limit only for a file opened to append (`>>`, systemd's `append:`); with `>` the
 * writes go on at the old offset, past the limit.
 */
const NO_ROOM = new Set(["ENOSPC", "EDQUOT", "EFBIG"]);

/**
 * A file descriptor as a LineStream, each write one synchronous `write(2)` (as Node's own stdout
 * on a file is), a failed one thrown to the caller. Node's stdout stream on a file is destroyed by
 * its first failed write, so nothing could be written to it again once a full disk had room.
 * A disk that fills takes the part of a write it has room for: the line cut there is ended before
 * the next write, which would otherwise run on from it, one line no parser reads and that no
 * count says was lost. (The cut line is counted as dropped with its batch.)
 */
export function fileLines(
  fd: number,
  write: (fd: number, bytes: Buffer, offset: number) => number = writeSync,
): LineStream {
  /** A line in the file cut short by a write that failed part way. */
  let cut = false;
  return {
    write(text) {
      const bytes = Buffer.from(cut ? `\n${text}` : text);
      let written = 0;
      try {
        while (written < bytes.length) written += write(fd, bytes, written);
      } catch (e) {
        if (written > 0) cut = bytes[written - 1] !== NEWLINE;
        throw e;
      }
      cut = false;
    },
    writableLength: 0,
    on: () => undefined,
  };
}

export function guardStream(
  stream: LineStream,
  say: (message: string) => void,
  limitBytes = LOG_BACKLOG_LIMIT_BYTES,
): GuardedStream {
  let failed = false;
  let dropped = 0;
  /** Lines dropped since the stream stopped being read; undefined while it is read. */
  let stalled: number | undefined;
  /** Lines dropped since a write found no room; undefined while writes succeed. */
  let full: number | undefined;
  const onError = (e: Error) => {
    if (failed) return;
    failed = true;
    say(`writing to stdout failed (${e.message}); log lines are dropped from now on`);
  };
  stream.on("error", onError);
  stream.on("drain", () => {
    if (stalled === undefined || failed) return;
    say(`stdout is read again; ${stalled} log line${stalled === 1 ? " was" : "s were"} dropped meanwhile`);
    stalled = undefined;
  });
  const drop = (text: string) => {
    let lines = 0;
    for (let i = text.indexOf("\n"); i >= 0; i = text.indexOf("\n", i + 1)) lines += 1;
    dropped += lines;
    return lines;
  };
  return {
    write(text) {
      if (failed) {
        drop(text);
        return;
      }
      if (stream.writableLength >= limitBytes) {
        if (stalled === undefined) {
          stalled = 0;
          say(
            `stdout is not being read (${Math.round(stream.writableLength / 1024)} KiB of log lines wait to be written); log lines are dropped until it is, and counted in hookgate_log_lines_dropped_total`,
          );
        }
        stalled += drop(text);
        return;
      }
      // A write the stream took may still fail: a pipe's, waiting in it (up to limitBytes of
      // lines) when its reader goes away, fails with it. Those lines are lost too, and counted.
      try {
        stream.write(text, (e) => {
          if (e) drop(text);
        });
      } catch (e) {
        if (NO_ROOM.has(String((e as NodeJS.ErrnoException).code))) {
          if (full === undefined) {
            full = 0;
            say(
              `writing to stdout failed (${(e as Error).message}); log lines are dropped until it has room, and counted in hookgate_log_lines_dropped_total`,
            );
          }
          full += drop(text);
          return;
        }
        onError(e as Error);
        drop(text);
        return;
      }
      if (full !== undefined) {
        say(`stdout has room again; ${full} log line${full === 1 ? " was" : "s were"} dropped meanwhile`);
        full = undefined;
      }
    },
    dropped: () => dropped,
    backlogBytes: () => stream.writableLength,
  };
}

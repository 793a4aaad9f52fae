/**
 * The Recorder port as an append-only JSONL file (`hookgate serve --record FILE`): one replayable
 * record per line, the format `hookgate replay` reads. Opened at start, so a path that cannot be
 * written fails the start instead of every request; writes never block an answer. `reopen` (on
 * SIGHUP) opens the path again: after a log rotation that renamed the file, records go to a new
 * file at the path rather than on into the renamed one, and a recording stopped by a failed write
 * (a full disk) starts again. A file that stops taking records (a hung network mount, a FIFO
 * nobody reads) holds at most RECORD_BACKLOG_LIMIT_BYTES of them in memory: past that, records are
 * dropped until it takes them again, which is logged when it starts and when it ends.
 */
import { constants, createWriteStream, existsSync, fstatSync, openSync } from "node:fs";
import { Socket } from "node:net";
import { dirname } from "node:path";
import type { Writable } from "node:stream";
import type { Recorder } from "../../app/handle-hook.js";
import { errorMessage } from "../../core/errors.js";
import { escapeControls } from "../../core/escape-controls.js";
import type { Logger } from "../../core/ports.js";

/** Past this many bytes of records waiting to be written, records are dropped until they are. */
const RECORD_BACKLOG_LIMIT_BYTES = 16 * 1024 * 1024;

/** On close, records the file has not taken after this long are given up. */
const RECORD_CLOSE_MS = 2000;

export interface JsonlRecorder {
  readonly record: Recorder;
  /**
   * Opens the path again and writes there from now on; what was written before is flushed to the
   * file it went to. A path that cannot be opened throws, and recording goes on as it was.
   */
  reopen(): void;
  /**
   * Flushes what is buffered and closes the file; what the file has not taken after
   * RECORD_CLOSE_MS is given up (logged), so a file that takes none never holds a stop.
   */
  close(): Promise<void>;
}

export interface JsonlRecorderOptions {
  /**
   * Each line scrubbed as the log's are (core/mask.ts `scrubbingWith`): the event's values are
   * scrubbed of the policy's secrets as it is masked, but not its keys, which the audit line's
   * tool input has scrubbed with the rest of its line.
   */
  readonly scrub?: (line: string) => string;
  readonly limitBytes?: number;
}

export function createJsonlRecorder(
  path: string,
  logger: Logger,
  { scrub = (line) => line, limitBytes = RECORD_BACKLOG_LIMIT_BYTES }: JsonlRecorderOptions = {},
): JsonlRecorder {
  /**
   * The file at `path`, opened for appending; made readable by its owner alone when it is made
   * here (records hold prompts and commands, masked by shape only). One that exists keeps its mode.
   */
  const open = (running: boolean): Writable => {
    let fd: number;
    try {
      fd = running ? openRunning() : openSync(path, "a", 0o600);
    } catch (e) {
      const why = errorMessage(e);
      // The file is made, its folder never: "pass a writable file" left the folder to be guessed.
      const fix =
        (e as NodeJS.ErrnoException).code === "ENOENT" && !existsSync(dirname(path))
          ? `its folder ${dirname(path)} does not exist: make it first, or pass --record with a file in a folder that does`
          : "pass --record with a writable file";
      throw new Error(`cannot record to ${path} (${why}); ${fix}`);
    }
    const opened = fifo(fd)
      ? new Socket({ fd, readable: false, writable: true })
      : createWriteStream(path, { fd, flags: "a" });
    opened.on("error", (e: Error) => {
      // Report once per file: a full disk would otherwise log on every request.
      if (opened !== stream || failed) return;
      failed = true;
      logger.log("error", "recording failed; no records are written until SIGHUP opens the file again", {
        path,
        error: e.message,
      });
    });
    return opened;
  };
  /**
   * A FIFO is written as Node writes a pipe, without blocking: a file stream's write to one that is
   * not read waits in the kernel on a thread of libuv's pool, which holds the process after a stop
   * (process.exit too waits for that thread), and a restart waits for it with no gateway answering.
   */
  const fifo = (fd: number): boolean => {
    try {
      return fstatSync(fd).isFIFO();
    } catch {
      return false;
    }
  };
  /**
   * The path opened again while the gateway answers hooks, which a blocking open would hold: a
   * FIFO whose reader has gone waits in open(2) for the next one, and no hook was answered, nor a
   * SIGTERM heard, meanwhile. Opened without blocking, that FIFO fails at once (ENXIO) and
   * recording goes on as it was; a FIFO is written without blocking anyway (`fifo`), and a
   * regular file takes O_NONBLOCK as nothing.
   */
  const openRunning = (): number =>
    openSync(path, constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT | constants.O_NONBLOCK, 0o600);
  let failed = false;
  /** Records dropped since the file stopped taking them; undefined while it takes them. */
  let dropped: number | undefined;
  let stream: Writable;
  /** Files opened before the last SIGHUP, still flushing what was written to them. */
  const retiring = new Map<Writable, Promise<void>>();
  stream = open(false);
  const end = (old: Writable) => new Promise<void>((resolve) => old.end(() => resolve()));
  return {
    record: (record) => {
      if (failed) return;
      if (stream.writableLength > limitBytes) {
        if (dropped === undefined)
          logger.log("warn", "the record file is not taking records; they are dropped until it does", {
            path,
            waitingBytes: stream.writableLength,
          });
        dropped = (dropped ?? 0) + 1;
        return;
      }
      if (dropped !== undefined) {
        logger.log("info", "the record file takes records again", { path, dropped });
        dropped = undefined;
      }
      // Escaped as a log line is (json-lines.ts): a person may tail the file.
      stream.write(`${scrub(escapeControls(JSON.stringify(record)))}\n`);
    },
    reopen() {
      const next = open(true);
      const old = stream;
      stream = next;
      failed = false;
      // Kept until it has ended: one that takes no records is given up with the last at close,
      // or its pending write would keep the process from exiting after the stop.
      const ending = end(old).finally(() => retiring.delete(old));
      retiring.set(old, ending);
    },
    close() {
      // A file that takes no records (a FIFO nobody reads, a hung mount) would hold the stop
      // for ever, past the bound a process manager is given: what it has not taken by then is
      // given up, and said.
      const last = stream;
      let timer: NodeJS.Timeout | undefined;
      let gaveUp = false;
      const givenUp = new Promise<void>((resolve) => {
        timer = setTimeout(() => {
          gaveUp = true;
          logger.log(
            "warn",
            "the record file took no records while serve stopped; those waiting are not written",
            {
              path,
              waitingBytes: [last, ...retiring.keys()].reduce((n, s) => n + s.writableLength, 0),
              ...(dropped === undefined ? {} : { dropped }),
            },
          );
          resolve();
        }, RECORD_CLOSE_MS);
        timer.unref();
      });
      const ended = Promise.all([end(last), ...retiring.values()]).then(() => {
        // Dropping when the stop came: no record after it says the count, so the close does.
        if (dropped !== undefined && !gaveUp)
          logger.log("info", "the record file took the records waiting; some were dropped before", {
            path,
            dropped,
          });
      });
      return Promise.race([ended, givenUp]).finally(() => {
        clearTimeout(timer);
        for (const file of [last, ...retiring.keys()]) file.destroy();
      });
    },
  };
}

/**
 * The Recorder port as an append-only JSONL file (`hookgate serve --record FILE`): one replayable
 * record per line, the format `hookgate replay` reads. Opened at start, so a path that cannot be
 * written fails the start instead of every request; writes never block an answer. `reopen` (on
 * SIGHUP) opens the path again: after a log rotation that renamed the file, records go to a new
 * file at the path rather than on into the renamed one, and a recording stopped by a failed write
 * (a full disk) starts again.
 */
import { createWriteStream, openSync, type WriteStream } from "node:fs";
import type { Recorder } from "../../app/handle-hook.js";
import { errorMessage } from "../../core/errors.js";

export interface JsonlRecorder {
  readonly record: Recorder;
  /**
   * Opens the path again and writes there from now on; what was written before is flushed to the
   * file it went to. A path that cannot be opened throws, and recording goes on as it was.
   */
  reopen(): void;
  /** Flushes what is buffered and closes the file. */
  close(): Promise<void>;
}

export function createJsonlRecorder(path: string, onError: (error: Error) => void): JsonlRecorder {
  /**
   * The file at `path`, opened for appending; made readable by its owner alone when it is made
   * here (records hold prompts and commands, masked by shape only). One that exists keeps its mode.
   */
  const open = (): WriteStream => {
    let fd: number;
    try {
      fd = openSync(path, "a", 0o600);
    } catch (e) {
      const why = errorMessage(e);
      throw new Error(`cannot record to ${path} (${why}); pass --record with a writable file`);
    }
    const opened = createWriteStream(path, { fd, flags: "a" });
    opened.on("error", (e) => {
      // Report once per file: a full disk would otherwise log on every request.
      if (opened !== stream || failed) return;
      failed = true;
      onError(e);
    });
    return opened;
  };
  let failed = false;
  let stream: WriteStream;
  stream = open();
  const end = (old: WriteStream) => new Promise<void>((resolve) => old.end(() => resolve()));
  return {
    record: (record) => {
      if (!failed) stream.write(`${JSON.stringify(record)}\n`);
    },
    reopen() {
      const next = open();
      const old = stream;
      stream = next;
      failed = false;
      void end(old);
    },
    close: () => end(stream),
  };
}

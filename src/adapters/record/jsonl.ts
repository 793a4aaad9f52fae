/**
 * The Recorder port as an append-only JSONL file (`hookgate serve --record FILE`): one replayable
 * record per line, the format `hookgate replay` reads. Opened once at start, so a path that
 * cannot be written fails the start instead of every request; writes never block an answer.
 */
import { createWriteStream, openSync } from "node:fs";
import type { Recorder } from "../../app/handle-hook.js";
import { errorMessage } from "../../core/errors.js";

export interface JsonlRecorder {
  readonly record: Recorder;
  /** Flushes what is buffered and closes the file. */
  close(): Promise<void>;
}

export function createJsonlRecorder(path: string, onError: (error: Error) => void): JsonlRecorder {
  let fd: number;
  try {
    fd = openSync(path, "a");
  } catch (e) {
    const why = errorMessage(e);
    throw new Error(`cannot record to ${path} (${why}); pass --record with a writable file`);
  }
  const stream = createWriteStream(path, { fd, flags: "a" });
  let failed = false;
  stream.on("error", (e) => {
    // Report once: a full disk would otherwise log on every request.
    if (!failed) onError(e);
    failed = true;
  });
  return {
    record: (record) => {
      if (!failed) stream.write(`${JSON.stringify(record)}\n`);
    },
    close: () => new Promise<void>((resolve) => stream.end(() => resolve())),
  };
}

/** The Logger port as one JSON object per line, the shape every log pipeline ingests. */
import { escapeControls } from "../../core/escape-controls.js";
import type { Logger, LogLevel } from "../../core/ports.js";

/** Each level's rank: a logger writes the levels from its lowest up. */
export const LOG_LEVELS: Readonly<Record<LogLevel, number>> = { debug: 10, info: 20, warn: 30, error: 40 };

export interface LineSink {
  write(line: string): unknown;
}

/** The log line of a call, `time`, `level` and `msg` first, ended by the format's `end`. */
export interface LineFormat {
  line(level: LogLevel, message: string, fields?: Record<string, unknown>): string;
  /**
   * The same from the fields' JSON, an object's text made already and escaped (escape-controls.ts),
   * that holds none of the leading keys: written as it is.
   */
  lineOfJson(level: LogLevel, message: string, fieldsJson: string): string;
}

/**
 * The lines Node, Lambda and Workers write: one JSON object a line, which every log pipeline
 * ingests and Workers Logs indexes field by field. `end` is "\n" on a stream, "" for a console
 * that ends the line itself. What JSON leaves raw and acts where a person reads the line (DEL and
 * the C1 controls, the line separators, the bidirectional and zero-width characters:
 * escape-controls.ts) is written as a JSON escape: a session id, tool name or command is the
 * agent's to choose, and raw, one reordered the line in a terminal, or broke it in two in a
 * viewer that ends a line at U+2028. A parser reads each escape back as the character.
 */
export function createLineFormat(now: () => number = Date.now, end = "\n"): LineFormat {
  let lastMs = Number.NaN;
  let lastTime = "";
  const time = () => {
    const ms = now();
    if (ms !== lastMs) {
      lastMs = ms;
      lastTime = new Date(ms).toISOString();
    }
    return lastTime;
  };
  /** The three leading keys, then the fields' own JSON: neither escaped here. */
  const joined = (level: LogLevel, messageJson: string, fieldsJson: string) => {
    const head = `{"time":"${time()}","level":"${level}","msg":${messageJson}`;
    return fieldsJson === "{}" ? `${head}}` : `${head},${fieldsJson.slice(1)}`;
  };
  return {
    // The fields come escaped (Logger.logJson): the recorder escapes them to measure them.
    lineOfJson: (level, message, fieldsJson) =>
      `${joined(level, escapeControls(JSON.stringify(message)), fieldsJson)}${end}`,
    line(level, message, fields) {
      // The fields' own JSON after the three leading keys, rather than a spread copy of them. A
      // field named like a leading key replaces it, and an array or an object with a toJSON is
      // spread, as before. (Integer-like keys, which no caller uses, come after the leading keys
      // here where a spread put them first.)
      if (fields === undefined || isPlainFields(fields)) {
        const fieldsJson = fields === undefined ? "{}" : JSON.stringify(fields);
        return `${escapeControls(joined(level, JSON.stringify(message), fieldsJson))}${end}`;
      }
      return `${escapeControls(JSON.stringify({ time: time(), level, msg: message, ...fields }))}${end}`;
    },
  };
}

export function createJsonLogger(
  sink: LineSink,
  minLevel: LogLevel = "info",
  now: () => number = Date.now,
): Logger {
  const lowest = LOG_LEVELS[minLevel];
  return createLineLogger(
    createLineFormat(now),
    () => lowest,
    (_level, line) => sink.write(line),
  );
}

/**
 * The Logger of `format`'s lines, each handed to `write` with its level when the level ranks at
 * least `lowest()`: a stream's (`createJsonLogger`), or the Worker's console, whose lowest level
 * is read from its binding on each call.
 */
export function createLineLogger(
  format: LineFormat,
  lowest: () => number,
  write: (level: LogLevel, line: string) => void,
): Logger {
  return {
    log(level, message, fields) {
      if (LOG_LEVELS[level] >= lowest()) write(level, format.line(level, message, fields));
    },
    logJson(level, message, fieldsJson) {
      if (LOG_LEVELS[level] >= lowest()) write(level, format.lineOfJson(level, message, fieldsJson));
    },
  };
}

function isPlainFields(fields: Record<string, unknown>): boolean {
  return !(
    Array.isArray(fields) ||
    "toJSON" in fields ||
    Object.hasOwn(fields, "time") ||
    Object.hasOwn(fields, "level") ||
    Object.hasOwn(fields, "msg")
  );
}

export interface BatchedSink extends LineSink {
  /** Writes what is buffered now; also run on process exit. */
  flush(): void;
}

/** A batch is written at once when it grows past this, so a burst never holds much in memory. */
const MAX_BATCH_CHARS = 64 * 1024;

export interface BatchOptions {
  /** Runs a task at the end of the current turn (default `setImmediate`). */
  readonly defer?: (task: () => void) => void;
}

/**
 * Lines written during one turn of the event loop, handed to the stream in one write at the end
 * of the turn. Under load a gateway answers many requests per turn, and one write (a syscall when
 * stdout is a pipe or file) per turn instead of per audit line is most of what logging costs.
 * What a SIGKILL can lose is the current turn's lines; `flush` runs on a normal exit.
 */
export function batchLines(stream: LineSink, options: BatchOptions = {}): BatchedSink {
  const defer = options.defer ?? ((task: () => void) => setImmediate(task));
  let pending: string[] = [];
  let size = 0;
  let scheduled = false;
  const flush = () => {
    scheduled = false;
    if (pending.length === 0) return;
    const text = pending.join("");
    pending = [];
    size = 0;
    stream.write(text);
  };
  return {
    write(line) {
      pending.push(line);
      size += line.length;
      if (size >= MAX_BATCH_CHARS) flush();
      else if (!scheduled) {
        scheduled = true;
        defer(flush);
      }
    },
    flush,
  };
}

/**
 * Each write scrubbed (core/mask.ts `scrubbingWith`) before it reaches the sink: per line on an
 * unbatched sink (Lambda, Workers), once per batch under `batchLines` (Node).
 */
export function scrubLines(sink: LineSink, scrub: (text: string) => string): LineSink {
  return { write: (line) => sink.write(scrub(line)) };
}

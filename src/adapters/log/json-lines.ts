/** The Logger port as one JSON object per line, the shape every log pipeline ingests. */
import type { Logger, LogLevel } from "../../core/ports.js";

const ORDER: Readonly<Record<LogLevel, number>> = { debug: 10, info: 20, warn: 30, error: 40 };

export interface LineSink {
  write(line: string): unknown;
}

export function createJsonLogger(
  sink: LineSink,
  minLevel: LogLevel = "info",
  now: () => number = Date.now,
): Logger {
  return {
    log(level, message, fields) {
      if (ORDER[level] < ORDER[minLevel]) return;
      sink.write(
        `${JSON.stringify({ time: new Date(now()).toISOString(), level, msg: message, ...fields })}\n`,
      );
    },
  };
}

/**
 * `serve`'s log lines on a stream (its stdout), written so that the stream can never stop the
 * gateway answering:
 * - a write that fails (a closed pipe: `serve | head`) drops log lines from then on, said once:
 *   an unhandled EPIPE would end the process, and the request being logged would get no answer;
 * - a stream not read (a stalled log shipper, a full pipe) would otherwise hold every line
 *   written since in memory until the process runs out of it (measured: 10 MB per 2,000 audit
 *   lines of 2.5 KB). Past `limitBytes` waiting, lines are dropped and counted until the stream
 *   drains, which is said when it starts and when it ends.
 */

/** The part of a Node writable stream (process.stdout) used here. */
export interface LineStream {
  write(text: string): unknown;
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

export function guardStream(
  stream: LineStream,
  say: (message: string) => void,
  limitBytes = LOG_BACKLOG_LIMIT_BYTES,
): GuardedStream {
  let failed = false;
  let dropped = 0;
  /** Lines dropped since the stream stopped being read; undefined while it is read. */
  let stalled: number | undefined;
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
      try {
        stream.write(text);
      } catch (e) {
        onError(e as Error);
        drop(text);
      }
    },
    dropped: () => dropped,
    backlogBytes: () => stream.writableLength,
  };
}

#!/usr/bin/env node
/** The `hookgate` executable: runs the CLI and exits with its code. */
import { catchEarlyHangup, catchEarlyStop } from "./early-hangup.js";

// `serve` reloads on SIGHUP, whose default is to end the process: caught before the CLI's modules
// load (early-hangup.ts), so a SIGHUP sent to a gateway still starting is a reload once it runs;
// a SIGTERM or SIGINT then still ends it, saying so.
if (process.argv[2] === "serve") {
  catchEarlyHangup();
  catchEarlyStop();
}
const { main } = await import("./cli.js");

// A reader that stopped early (`hookgate test … | head -1`) is no failure of the command: what it
// would still print is dropped, and it exits with its own code, so `set -o pipefail` holds.
process.stdout.on("error", (e: NodeJS.ErrnoException) => {
  // `serve` guards stdout itself (src/adapters/log/guarded-stream.ts): a failed write (a full
  // disk under a log file) drops log lines and the gateway goes on answering. Thrown here, it
  // ended the gateway, and every hook then went unjudged.
  if (process.stdout.listenerCount("error") > 1) return;
  if (e.code !== "EPIPE" && e.code !== "ERR_STREAM_DESTROYED") throw e;
});

main(process.argv.slice(2)).then((code) => {
  process.exitCode = code;
});

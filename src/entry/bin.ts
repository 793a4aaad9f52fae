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

// Nor is a stderr no one reads (`hookgate init … 2>&1 >settings.json | head -1`, a closed
// descriptor): a diagnostic that cannot be written is lost, and the command still exits with its
// own code. Thrown, it ended the command with exit 1: a usage error's 2, and send's 0 that a
// hook relies on, became 1. There is nowhere left to say why.
process.stderr.on("error", () => undefined);

main(process.argv.slice(2)).then((code) => {
  process.exitCode = code;
});

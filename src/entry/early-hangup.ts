/**
 * SIGHUPs that reach `hookgate serve` before its command runs. SIGHUP's default ends the process,
 * and the CLI's modules take a while to load (seconds on a loaded host), so a deploy tool or a
 * logrotate `postrotate` that signals a gateway just started would end it without a log line.
 * bin.ts catches SIGHUP here before it loads the CLI; `serve` takes over with its own handler and
 * asks here whether one came before, which it then treats as a reload once it runs.
 */
let seen = false;
const remember = (): void => {
  seen = true;
};

/** Catches SIGHUP until `takeEarlyHangup`: for `serve` only, where SIGHUP means reload. */
export function catchEarlyHangup(): void {
  process.on("SIGHUP", remember);
}

/** Stops catching SIGHUP here and says whether one came (call after installing the real handler). */
export function takeEarlyHangup(): boolean {
  process.off("SIGHUP", remember);
  const came = seen;
  seen = false;
  return came;
}

const STOPS = ["SIGTERM", "SIGINT"] as const;

/**
 * A SIGTERM or SIGINT before `serve` listens (its modules loading, the policy compiling, a queue
 * file locked for the delivery thread's busy timeout) ends the process as it would have, by the
 * signal, but says so on stderr first: the log ended without a word, as if it had hung or crashed.
 * Nothing was answered yet, and every file of the data dir is safe to kill at any point (its
 * locks are the operating system's, its queue and journal survive a SIGKILL).
 */
function stoppedEarly(signal: NodeJS.Signals): void {
  try {
    process.stderr.write(`hookgate: ${signal} while serve was starting, before it listened: stopped\n`);
  } catch {
    // stderr is gone: nothing left to tell.
  }
  releaseEarlyStop();
  // No listener left: the signal's default, which ends the process with it (exit status 128 + n).
  process.kill(process.pid, signal);
}

/** Catches SIGTERM and SIGINT until `releaseEarlyStop`, for `serve` only (`stoppedEarly`). */
export function catchEarlyStop(): void {
  for (const signal of STOPS)
    if (!process.listeners(signal).includes(stoppedEarly)) process.on(signal, stoppedEarly);
}

/** Stops catching them here (call right before `serve` installs its own stop). */
export function releaseEarlyStop(): void {
  for (const signal of STOPS) process.off(signal, stoppedEarly);
}

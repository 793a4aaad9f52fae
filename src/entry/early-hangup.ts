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

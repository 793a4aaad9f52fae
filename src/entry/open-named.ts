/**
 * Opening a file whose failure should name it: SQLite's own messages do not ("database disk image
 * is malformed"), and `serve` said to move "that file" aside without saying which one.
 */
import { errorMessage } from "../core/errors.js";

/** `open(path)`, a failure that does not name the file said as `cannot open WHAT at PATH: …`. */
export function openNamed<T>(path: string, open: (path: string) => T, what?: string): T {
  try {
    return open(path);
  } catch (e) {
    const reason = errorMessage(e);
    if (reason.includes(path)) throw e;
    throw new Error(`cannot open ${what ? `${what} at ` : ""}${path}: ${reason}`, { cause: e });
  }
}

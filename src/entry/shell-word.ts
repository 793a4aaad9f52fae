/**
 * A file name or URL as one POSIX shell word, for a command hookgate writes (init's `send` and
 * curl lines) or tells its user to run (a fix's `hookgate check FILE`): pasted, a space or a
 * shell character (`&`, `$`, `'`) in it would split the command or run something else.
 */
export function shellQuote(text: string): string {
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(text) ? text : `'${text.replaceAll("'", `'\\''`)}'`;
}

/** A URL shown in a message or a report, without what it carries before its host. Pure. */

/**
 * A URL to show in a message or a report: its user name and password, which may be a secret, left
 * out. Also of a URL written without its scheme, `u:pw@host:8787`, which parses with the scheme
 * `u:` and the password in its path, of one whose password holds an unencoded `/`, `\`, `?` or
 * `#`, and of text that is no URL at all.
 */
export function withoutUserinfo(text: string): string {
  let url: URL | undefined;
  try {
    url = new URL(text);
  } catch {
    // Read below.
  }
  if (url && (url.username || url.password)) {
    url.username = "";
    url.password = "";
    return url.href;
  }
  // What the URL parser would read as a user name and password goes, up to the last "@" before
  // the path, also with no "//" or with backslashes (`http:u:pw@h`, `http:\\u@h`), or no scheme.
  // A "?" or "#" does not end it: a password holding one unencoded is why the URL did not parse.
  // A URL that parsed with a host has none, unless what it read as the port is a password's start.
  const start = /^(?:https?|wss?|ftp):[\\/]*|^[^:/?#@]*:\/\//i.exec(text)?.[0] ?? "";
  const rest = text.slice(start.length);
  const at = url?.host ? (portIsNoNumber(rest) ? rest.lastIndexOf("@") : -1) : userinfoEnd(rest);
  return at < 0 ? text : start + rest.slice(at + 1);
}

/**
 * Text that may hold URLs (a library's log line, `QueueUrl=http://user:pw@host/…`) with each one's
 * user name and password left out: from its scheme to the last "@" before its path, as
 * `withoutUserinfo` reads one URL. A space does not end it (a password may hold one); a line
 * break does. Nor does a "?" or "#": a password that holds one unencoded makes a URL the parser
 * refuses, and the AWS SDK then warns its error, which quotes the URL whole; a query's "@" before
 * any "/" goes with it. Nor a "/" or "\" after what reads as a port that is no number
 * (`http://u:pa/ss@host`): then it goes to the line's last "@".
 */
export function withoutUserinfoIn(text: string): string {
  let shown = "";
  let from = 0;
  for (const scheme of text.matchAll(
    /(?<![a-z])(?:https?|wss?|ftp):[\\/]*|(?<![a-z\d+.-])[a-z][a-z\d+.-]*:\/\//gi,
  )) {
    if (scheme.index < from) continue;
    const start = scheme.index + scheme[0].length;
    const lineEnd = text.indexOf("\n", start);
    const at = userinfoEnd(text.slice(start, lineEnd < 0 ? text.length : lineEnd));
    if (at < 0) continue;
    shown += text.slice(from, start);
    from = start + at + 1;
  }
  return shown + text.slice(from);
}

/**
 * Where the user name and password of `rest`, a URL after its scheme, end (their "@"), if it has
 * any: the last "@" before its path, or the last "@" of all where what reads as its port is no number.
 */
function userinfoEnd(rest: string): number {
  const path = rest.search(/[\\/]/);
  const at = (path < 0 ? rest : rest.slice(0, path)).lastIndexOf("@");
  if (at >= 0) return at;
  return portIsNoNumber(rest) ? rest.lastIndexOf("@") : -1;
}

/**
 * Whether what the URL parser reads as `rest`'s host and port (up to a "/", "\", "?" or "#") has a
 * port that is no number, an empty one included: `u:pa` of `u:pa/ss@host`, `u:` of `u:#pw@host`,
 * the user name and the start of a password that holds one of those four unencoded.
 */
function portIsNoNumber(rest: string): boolean {
  const end = rest.search(/[\\/?#]/);
  const authority = end < 0 ? rest : rest.slice(0, end);
  const bracket = authority.startsWith("[") ? authority.indexOf("]") : -1;
  const colon = bracket >= 0 ? bracket + 1 : authority.indexOf(":");
  const port = colon < 0 ? "" : authority.slice(colon);
  return port !== "" && !/^:\d+$/.test(port);
}

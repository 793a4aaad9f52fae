/** A URL shown in a message or a report, without what it carries before its host. Pure. */

/**
 * A URL to show in a message or a report: its user name and password, which may be a secret, left
 * out. Also of a URL written without its scheme, `u:pw@host:8787`, which parses with the scheme
 * `u:` and the password in its path, and of text that is no URL at all.
 */
export function withoutUserinfo(text: string): string {
  try {
    const url = new URL(text);
    if (url.username || url.password) {
      url.username = "";
      url.password = "";
      return url.href;
    }
    if (url.host !== "" || !text.includes("@")) return text;
  } catch {
    // Read below.
  }
  // What the URL parser would read as a user name and password goes, up to the last "@" before
  // the path, also with no "//" or with backslashes (`http:u:pw@h`, `http:\\u@h`), or no scheme.
  // A "?" or "#" does not end it: a password holding one unencoded is why the URL did not parse.
  const start = /^https?:[\\/]*|^[^:/?#@]*:\/\//i.exec(text)?.[0] ?? "";
  const rest = text.slice(start.length);
  const end = rest.search(/[\\/]/);
  const at = (end < 0 ? rest : rest.slice(0, end)).lastIndexOf("@");
  return at < 0 ? text : start + rest.slice(at + 1);
}

/**
 * Text that may hold URLs (a library's log line, `QueueUrl=http://user:pw@host/…`) with each one's
 * user name and password left out: from its scheme to the last "@" before its path, as
 * `withoutUserinfo` reads one URL. A space does not end it (a password may hold one); a line
 * break does. Nor does a "?" or "#": a password that holds one unencoded makes a URL the parser
 * refuses, and the AWS SDK then warns its error, which quotes the URL whole; a query's "@" before
 * any "/" goes with it.
 */
export function withoutUserinfoIn(text: string): string {
  return text.replace(/(\bhttps?:[\\/]*|\b[a-z][a-z\d+.-]*:\/\/)[^\n\\/]*@/gi, "$1");
}

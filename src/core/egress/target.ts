/**
 * How refusal reasons, delivery errors and logs show a URL. Apart from the URL stage (url.ts) so
 * that code which only describes a target (a sink's redirect answer) does not load the guard.
 */

/**
 * A URL as refusal reasons and logs may show it: the origin only, with `/…` for a path other
 * than `/` (a Slack or Discord webhook path is itself the secret, and an `env:` URL's path may
 * be one too, whatever its shape); no query string, no fragment.
 */
export function describeTarget(url: URL): string {
  // Only http(s) has an origin to show; any other scheme (a refused `file:` URL) shows as such.
  const origin = url.protocol === "http:" || url.protocol === "https:" ? url.origin : url.protocol;
  return `${origin}${url.pathname === "/" ? "/" : "/…"}`;
}

/** `describeTarget` for a URL not parsed yet (a refused one, for the log): never the raw text. */
export function describeRawTarget(raw: string): string {
  try {
    return describeTarget(new URL(raw));
  } catch {
    return "(unparsable URL)";
  }
}

/**
 * A URL's text without the C0 controls and spaces around it, which the URL parser drops (not the
 * other white space trim() drops, a no-break space or a byte order mark, which it keeps and fails on).
 */
export function withoutUrlBlanks(raw: string): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: the C0 controls are what the parser drops.
  return raw.replace(/^[\x00-\x20]+|[\x00-\x20]+$/g, "");
}

/**
 * The one reading of a request's path, shared by every runtime: Node's listener
 * (src/entry/node-listener.ts) reads the request line's target with it, the Hono app (Node's
 * other routes, Lambda, the Worker) reads the URL its runtime's parser made. The two inputs
 * differ (the WHATWG URL parser has already removed dot segments, turned `\` into `/` and
 * percent-encoded a few characters), so the reading does what that parser does first and is the
 * same for both: a path is a hook route, and names a client, for all runtimes or for none.
 *
 * The path, up to `?` or `#`, is normalised as RFC 3986 §6.2.2 says, plus two readings of its own:
 *
 * 1. `\` is `/`, and `.` and `..` segments (also spelled `%2e`) are removed, as the WHATWG URL
 *    parser does before any route sees the path.
 * 2. Each escape is read once (§6.2.2.2): one of an unreserved character (`A-Z a-z 0-9 - . _ ~`)
 *    is that character (`/%761/hooks` is `/v1/hooks`), and `%2F` is a slash, as API Gateway's
 *    HTTP API hands it to Lambda. Any other escape stays one, its hex digits upper-case
 *    (§6.2.2.1), so `%252F` is not a slash.
 * 3. A character no URI holds raw (`{`, `"`, `|`, …) is percent-encoded, as an escape of its
 *    UTF-8 bytes, and so is a `%` not followed by two hex digits (`%zz` is `%25zz`, §2.4): left
 *    as sent, it and an escape decoded after it would make a new one (`%%32%46` would read
 *    `%2F`, a slash once read again), and a name holding it is no client's anyway.
 * 4. Doubled slashes are one, and dot segments a decoded `%2F` made are removed.
 */

/**
 * A hook route: `client` is the name after `/v1/hooks/` (deeper paths included, no trailing
 * slash), or undefined where there is none and the body decides the dialect.
 */
export interface HookRoute {
  readonly client: string | undefined;
}

/**
 * The paths most hooks use, already in normal form: `/v1/hooks` or `/v1/hooks/<name>`, with a
 * trailing slash or a query. A name starts with no dot, so it is no dot segment.
 */
const PLAIN_HOOK = /^\/v1\/hooks(?:\/([A-Za-z0-9_~-][A-Za-z0-9_.~-]*))?\/?(?:\?|$)/;

/**
 * A normal path under `/v1/hooks`, at the root or under any prefix; the first one names the route
 * (the prefix is the shortest there is, none at the root), as the app tries its root routes first.
 */
const HOOK_PATH = /^(?:\/.*?)??\/v1\/hooks(?:\/(.*?))?\/?$/s;

/**
 * The hook route a request's target (origin form, `/v1/hooks/claude-code?x=1`, or a whole URL)
 * names, if any: a POST to one is answered as a hook on every runtime.
 */
export function hookRoute(target: string): HookRoute | undefined {
  const plain = PLAIN_HOOK.exec(target);
  if (plain) return { client: plain[1] };
  const route = HOOK_PATH.exec(routePath(target));
  return route ? { client: route[1] || undefined } : undefined;
}

/** The normal form of a request target's path (no query), as every route is matched against. */
export function routePath(target: string): string {
  let start = 0;
  if (target.charCodeAt(0) !== 47) {
    // An absolute-form target's path starts where its authority ends, at a `/` or `\`; one
    // ended by `?` or `#` (`http://name?/v1/hooks`) has none, the root.
    start = authorityEnd(target);
    const c = target.charCodeAt(start);
    if (c !== 47 && c !== 92) return "/";
  }
  let end = target.length;
  for (let i = start; i < end; i++) {
    const c = target.charCodeAt(i);
    if (c === 63 || c === 35) end = i; // ? or #
  }
  const raw = target.slice(start, end);
  // Most paths are already normal: no escape, no character to encode, no `//` and no `/.`.
  if (!NOT_NORMAL.test(raw)) return raw;
  const read = withoutDotSegments(raw.replace(/\\/g, "/"), URL_DOT)
    .replace(ESCAPE_OR_RAW, readChar)
    .replace(/\/{2,}/g, "/");
  return read.includes("/.") ? withoutDotSegments(read, PLAIN_DOT) : read;
}

/**
 * The host (and port) an absolute-form target names (`http://name:8787/v1/hooks`), its userinfo
 * left out, or undefined for a target in origin form (`/v1/hooks`). Its authority ends where the
 * WHATWG URL parser ends an http or https one, at the first `/`, `\`, `?` or `#`, so
 * `http://a.example\@127.0.0.1/` names a.example, as its path (route-path.ts) is read.
 */
export function targetHost(target: string): string | undefined {
  const end = authorityEnd(target);
  if (end < 0) return undefined;
  const authority = target.slice(target.indexOf("://") + 3, end);
  return authority.slice(authority.lastIndexOf("@") + 1);
}

/** Where an absolute-form target's authority ends (its length if nothing follows), or -1. */
function authorityEnd(target: string): number {
  if (target.charCodeAt(0) === 47) return -1;
  const scheme = target.indexOf("://");
  if (scheme < 0) return -1;
  for (let i = scheme + 3; i < target.length; i++) {
    const c = target.charCodeAt(i);
    if (c === 47 || c === 92 || c === 63 || c === 35) return i; // / \ ? #
  }
  return target.length;
}

/** A `%`, a character no URI path holds raw (RFC 3986 §3.3: pchar and `/`), `//` or `/.`. */
const NOT_NORMAL = /[^A-Za-z0-9\-._~!$&'()*+,;=:@/]|\/[/.]/;
/** An escape, or a character no URI path holds raw (a `%` not starting an escape among them). */
const ESCAPE_OR_RAW = /%([0-9A-Fa-f]{2})|[^A-Za-z0-9\-._~!$&'()*+,;=:@/]/gu;
/** Unreserved characters and the slash: what an escape is read as (§6.2.2.2, and `%2F`). */
const DECODED = /[A-Za-z0-9\-._~/]/;

function readChar(match: string, hex: string | undefined): string {
  if (hex !== undefined) {
    const char = String.fromCharCode(Number.parseInt(hex, 16));
    return DECODED.test(char) ? char : `%${hex.toUpperCase()}`;
  }
  try {
    return encodeURIComponent(match);
  } catch {
    return "%EF%BF%BD"; // a lone surrogate, as the WHATWG URL parser encodes it: U+FFFD
  }
}

/** `.` and `..` as the WHATWG URL parser reads a segment (`%2e` too), and after decoding. */
const URL_DOT = { single: /^(?:\.|%2e)$/i, double: /^(?:\.|%2e){2}$/i };
const PLAIN_DOT = { single: /^\.$/, double: /^\.\.$/ };

/**
 * `path` (starting with `/`) without its dot segments, as the WHATWG URL parser removes them: a
 * `..` takes the segment before it away, an empty one too, and a dot segment that ends the path
 * leaves a trailing slash (`/v1/hooks/x/..` is `/v1/hooks/`).
 */
function withoutDotSegments(path: string, dot: { single: RegExp; double: RegExp }): string {
  const segments = path.split("/");
  const out: string[] = [];
  for (let i = 1; i < segments.length; i++) {
    const segment = segments[i] as string;
    const last = i === segments.length - 1;
    if (dot.double.test(segment)) {
      out.pop();
      if (last) out.push("");
    } else if (dot.single.test(segment)) {
      if (last) out.push("");
    } else {
      out.push(segment);
    }
  }
  return `/${out.join("/")}`;
}

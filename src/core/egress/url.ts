/**
 * The URL half of the egress guard (ssrf.md §0, §3.3, §3.4, §6.2). The hook URL is parsed once by
 * the WHATWG parser, and every rule runs on that parse, never on the raw string: the parser is what
 * fetch uses, so a second reading can only disagree with it (ssrf.md §1.3). Pure: it runs unchanged
 * on Workers. Which addresses the host resolves to is the address stage's business, not this one's.
 */
import type { EgressRefusal } from "./refusal.js";
import { describeTarget, withoutUrlBlanks } from "./target.js";

/** The Fetch standard's bad-port list ("port blocking"), as undici's `lib/web/fetch/constants.js`. */
export const BAD_PORTS: ReadonlySet<number> = new Set([
  1, 7, 9, 11, 13, 15, 17, 19, 20, 21, 22, 23, 25, 37, 42, 43, 53, 69, 77, 79, 87, 95, 101, 102, 103, 104,
  109, 110, 111, 113, 115, 117, 119, 123, 135, 137, 139, 143, 161, 179, 389, 427, 465, 512, 513, 514, 515,
  526, 530, 531, 532, 540, 548, 554, 556, 563, 587, 601, 636, 989, 990, 993, 995, 1719, 1720, 1723, 2049,
  3659, 4045, 4190, 5060, 5061, 6000, 6566, 6665, 6666, 6667, 6668, 6669, 6679, 6697, 10080,
]);

type Scheme = "http" | "https";
const DEFAULT_PORT: Readonly<Record<Scheme, number>> = { http: 80, https: 443 };

type HostRule =
  | { readonly kind: "any" }
  | { readonly kind: "exact"; readonly host: string }
  /** One or more labels before `domain`; never the apex itself (smokescreen, URLPattern). */
  | { readonly kind: "subdomain"; readonly domain: string };

/** `default`: the URL scheme's default port only. */
type PortRule = "default" | "any" | number;

export interface UrlPattern {
  /** The pattern as configured. */
  readonly source: string;
  /** The pattern as it is matched (host and path normalized), for logs. */
  readonly normalized: string;
  readonly schemes: readonly Scheme[];
  readonly host: HostRule;
  readonly port: PortRule;
  /** The normalized path split on `*`: one piece means an exact path. */
  readonly path: readonly string[];
}

export interface Allowlist {
  /** `undefined`: unrestricted. `[]`: nothing is allowed. Invalid patterns are never in here. */
  readonly patterns: readonly UrlPattern[] | undefined;
  /** How many configured patterns were invalid and left out, for the refusal's reason. */
  readonly invalid: number;
}

export interface PatternError {
  readonly index: number;
  readonly pattern: string;
  readonly message: string;
}

export type UrlVerdict =
  | {
      readonly ok: true;
      /** Exactly what is to be sent. */
      readonly url: URL;
      /** hostname without brackets or its trailing root dot */
      readonly host: string;
      /** The effective port: explicit, or the scheme's default. */
      readonly port: number;
    }
  | { readonly ok: false; readonly refusal: EgressRefusal };

// ---------------------------------------------------------------------------------------------
// checkUrl

export function checkUrl(raw: string, allowlist: Allowlist): UrlVerdict {
  try {
    return check(raw, allowlist);
  } catch {
    // Nothing below is expected to throw; if something does, fail closed.
    return refuse("EGRESS_BAD_URL", "url", "the URL could not be checked, so it is refused");
  }
}

function check(raw: string, allowlist: Allowlist): UrlVerdict {
  if (typeof raw !== "string") {
    return refuse("EGRESS_BAD_URL", "url", `the URL is a ${typeof raw}, not a string`);
  }
  const url = parseUrl(raw);
  // The raw string is not echoed: it may carry credentials.
  if (url === undefined) return refuse("EGRESS_BAD_URL", "url", unparsable(raw));

  const scheme = url.protocol.slice(0, -1);
  if (scheme !== "http" && scheme !== "https") {
    return refuse(
      "EGRESS_BAD_SCHEME",
      "url",
      `the scheme ${url.protocol} is not allowed; outbound URLs must use http: or https:`,
    );
  }
  const host = bareHost(url.hostname);
  if (host === "") return refuse("EGRESS_BAD_URL", "url", `the URL ${describe(url)} has an empty host`);
  // `8.8.8.8..` is a name to the URL parser and to fetch, not the address it would read as here;
  // `.example.com` would match `*.example.com`. No resolver reads either.
  if (hasEmptyLabel(host)) {
    return refuse(
      "EGRESS_BAD_URL",
      "url",
      `the host ${url.hostname} of ${describe(url)} has an empty label (".." or a leading "."), which no resolver reads; write the host with single dots between labels`,
    );
  }

  const overlong = overlongName(host);
  if (overlong !== undefined) {
    return refuse(
      "EGRESS_BAD_URL",
      "url",
      `the host ${shortened(host)} of the URL ${overlong}, so no resolver looks it up; write the name the server is reached by`,
    );
  }

  // `http://@host/` leaves username and password empty, yet the parser consumed an `@`: a URL
  // that another parser may read differently is refused too (ssrf.md §3.4).
  if (url.username !== "" || url.password !== "" || authorityHasAt(raw)) {
    return refuse(
      "EGRESS_USERINFO",
      "url",
      `the URL ${describe(url)} has userinfo (user:password@) before the host; credentials in URLs are refused${CREDENTIALS_GO}`,
    );
  }

  const port = url.port === "" ? DEFAULT_PORT[scheme] : Number(url.port);
  if (port === 0 || BAD_PORTS.has(port)) {
    const why = port === 0 ? "port 0 is not a real port" : "it is on the Fetch standard's bad-port list";
    return refuse("EGRESS_BAD_PORT", "url", `the URL ${describe(url)} uses port ${port}; ${why}`);
  }

  const patterns = allowlist.patterns;
  const blocked = blockedName(host);
  if (blocked !== undefined && !(blocked.privateUse && namedExactly(host, patterns))) {
    const how = blocked.privateUse
      ? `; a pattern in allowedHttpHookUrls naming ${host} exactly opens it (its address is still judged)${patterns === undefined ? UNSET_ALLOWLIST : ""}`
      : "";
    return refuse("EGRESS_BLOCKED_NAME", "name", `the host ${host} of ${describe(url)} ${blocked.why}${how}`);
  }

  if (patterns !== undefined && !patterns.some((p) => matchesPattern(url, scheme, host, port, p))) {
    return refuse(
      "EGRESS_NOT_ALLOWLISTED",
      "allowlist",
      notAllowlisted(url, allowlist.invalid, patterns, scheme, host, port),
    );
  }
  return { ok: true, url, host, port };
}

/** Where what a URL's userinfo held goes instead, for each kind of target. */
const CREDENTIALS_GO =
  ": a forward rule sends them in its headers, a model in its apiKey, a github-dispatch sink in its token; a webhook sink's receiver checks the signature its secret makes instead";

/** Opening one host by name turns an unset allowlist into one that allows nothing else. */
const UNSET_ALLOWLIST =
  "; allowedHttpHookUrls is unset now, and once set it allows only the URLs its patterns match, so list the policy's other targets (models, forwards, sinks) there too";

function refuse(code: EgressRefusal["code"], stage: EgressRefusal["stage"], reason: string): UrlVerdict {
  return { ok: false, refusal: { code, stage, reason } };
}

function parseUrl(raw: string): URL | undefined {
  try {
    return new URL(raw);
  } catch {
    return undefined;
  }
}

/**
 * Why the URL parser refused a hook URL, as far as it can be told, and so what to write instead.
 * No part of the URL is shown: the text before an `@` may be a password, and the path a webhook's
 * secret.
 */
function unparsable(raw: string): string {
  const base = "the URL is not a valid absolute URL";
  // As the parser reads it: tabs and newlines removed, C0 controls and spaces around it dropped.
  const text = withoutUrlBlanks(raw.replace(/[\t\n\r]/g, ""));
  if (text === "") return `${base}: it is empty`;
  const scheme = /^[A-Za-z][A-Za-z0-9+.-]*:/.exec(text)?.[0];
  if (scheme === undefined) {
    if (/^[^A-Za-z]{1,8}https?:/i.test(text))
      return `${base}: a character comes before its scheme (an invisible one when pasted: a non-breaking space, a byte order mark); delete it`;
    return `${base}: it has no scheme; write it in full, starting with https:// (or http://)`;
  }
  if (!/^https?:$/i.test(scheme)) return base;
  // The authority as the parser reads it for http(s): after any run of / and \, up to the next.
  const authority = /^[/\\]*([^/\\?#]*)/.exec(text.slice(scheme.length))?.[1] ?? "";
  const hostPort = authority.slice(authority.lastIndexOf("@") + 1);
  let host = hostPort;
  let port = "";
  if (hostPort.startsWith("[")) {
    const close = hostPort.indexOf("]");
    if (hostPort.slice(1, close < 0 ? undefined : close).includes("%")) {
      return `${base}: an IPv6 zone id (%25 and an interface name) is not allowed in a URL; the link-local addresses that need one are refused anyway`;
    }
    if (close < 0) return `${base}: the [ that starts its IPv6 host is never closed`;
    const after = hostPort.slice(close + 1);
    if (after !== "" && !after.startsWith(":"))
      return `${base}: only :port may follow the ] of its IPv6 host`;
    host = hostPort.slice(0, close + 1);
    port = after.slice(1);
  } else if (hostPort.includes(":")) {
    host = hostPort.slice(0, hostPort.indexOf(":"));
    port = hostPort.slice(hostPort.indexOf(":") + 1);
  }
  if (host === "") return `${base}: it has no host`;
  // Neither is shown: with a / in a password, the parser reads a piece of it as the host and port.
  if (port !== "" && !(/^\d+$/.test(port) && Number(port) <= 65535)) {
    // `user:pa/ss@host`: the / ends the authority, and `user:pa` reads as a host and a port.
    if (!authority.includes("@") && text.slice(scheme.length).includes("@"))
      return `${base}: its port is not a number from 1 to 65535, or it has user:password@ and a /, ? or # in a password ends the host early; credentials in URLs are refused anyway${CREDENTIALS_GO}`;
    return `${base}: its port is not a number from 1 to 65535`;
  }
  if (host.startsWith("[")) return `${base}: its host in brackets is not an IPv6 address`;
  // WHATWG reads a host whose last label is a number (decimal, 0x hex) as an IPv4 address.
  if (/(^|\.)(0x[0-9a-f]*|\d+)\.?$/i.test(host)) {
    return `${base}: its host ends in a number, so it is read as an IPv4 address, and it is not a valid one (a part over 255, more than four parts, an 8 or 9 in a part with a leading 0, or a last label of digits after a name)`;
  }
  return `${base}: its host has a character or escape no host name may have (a space, <, >, |, %00, %2F, %40, or a % not followed by two hex digits), or an xn-- label that is no valid punycode`;
}

/**
 * `[::1]` → `::1`; `example.com.` → `example.com` (RFC 6761 §6.3 reads names without the root
 * dot). One dot only: `example.com..` keeps its last, an empty label (hasEmptyLabel).
 */
function bareHost(hostname: string): string {
  if (hostname.startsWith("[") && hostname.endsWith("]")) return hostname.slice(1, -1);
  return hostname.endsWith(".") ? hostname.slice(0, -1) : hostname;
}

/** A name with a `..` or a leading or (after bareHost) trailing dot; never an IPv6 address. */
function hasEmptyLabel(host: string): boolean {
  return !host.includes(":") && (host.startsWith(".") || host.endsWith(".") || host.includes(".."));
}

/** RFC 1035 §2.3.4, the name as text without its root dot. */
const MAX_NAME = 253;
const MAX_LABEL = 63;

/**
 * Why a host name is longer than DNS carries, or undefined (an IP literal never is): Node's
 * getaddrinfo fails such a name with a bare EINVAL and a DoH endpoint each its own way, so it is
 * refused here, in the same words on every runtime.
 */
function overlongName(host: string): string | undefined {
  if (host.includes(":")) return undefined;
  if (host.length > MAX_NAME) {
    return `is ${host.length} characters long, and a DNS name is at most ${MAX_NAME} (RFC 1035 §2.3.4)`;
  }
  const label = host.split(".").find((l) => l.length > MAX_LABEL);
  return label === undefined
    ? undefined
    : `has a label of ${label.length} characters, and a DNS label is at most ${MAX_LABEL} (RFC 1035 §2.3.4)`;
}

/** A host for a reason, its first 64 characters when it is longer. */
function shortened(host: string): string {
  return host.length > 64 ? `${host.slice(0, 64)}…` : host;
}

/**
 * Whether the authority of an http(s) URL contains an `@`, read as the WHATWG parser reads it:
 * tabs and newlines removed, C0-or-space trimmed, any run of `/` and `\` after the scheme skipped,
 * and the authority ending at `/`, `\`, `?` or `#`. Only called once the scheme is known to be http(s).
 */
function authorityHasAt(raw: string): boolean {
  let start = 0;
  let end = raw.length;
  while (start < end && raw.charCodeAt(start) <= 0x20) start++;
  while (end > start && raw.charCodeAt(end - 1) <= 0x20) end--;
  let i = raw.indexOf(":", start) + 1;
  if (i === 0) return false;
  const skipped = (c: string | undefined) => c === "\t" || c === "\n" || c === "\r";
  while (i < end && (raw[i] === "/" || raw[i] === "\\" || skipped(raw[i]))) i++;
  for (; i < end; i++) {
    const c = raw[i];
    if (c === "@") return true;
    if (c === "/" || c === "\\" || c === "?" || c === "#") return false;
  }
  return false;
}

const METADATA_NAMES: ReadonlySet<string> = new Set([
  "metadata.google.internal",
  "metadata",
  "instance-data",
  "instance-data.ec2.internal",
  "metadata.azure.internal",
]);

/**
 * Why a host name is refused before DNS (ssrf.md §3.3), or undefined. A private-use name is a
 * team's own server as often as a cloud's (AWS and GCP private DNS zones live under .internal):
 * an allowlist pattern naming the host exactly opens it, never a wildcard.
 */
function blockedName(host: string): { why: string; privateUse: boolean } | undefined {
  if (host === "localhost" || host.endsWith(".localhost")) {
    return {
      why: "is a loopback name (RFC 6761 §6.3); use 127.0.0.1 and open it in allowCidrs",
      privateUse: false,
    };
  }
  if (METADATA_NAMES.has(host)) return { why: "is a cloud metadata service name", privateUse: false };
  // ICANN reserved .internal for private use (2024); GCP and AWS put their metadata names there.
  if (host === "internal" || host.endsWith(".internal")) {
    return { why: "is under the private-use .internal domain", privateUse: true };
  }
  return undefined;
}

function namedExactly(host: string, patterns: readonly UrlPattern[] | undefined): boolean {
  return patterns?.some((p) => p.host.kind === "exact" && p.host.host === host) ?? false;
}

/**
 * The URL for a reason: its origin, the path and query elided. A Slack or Discord webhook path
 * is itself the secret, and so is many a generic webhook's; a query may carry a token.
 */
function describe(url: URL): string {
  return url.pathname === "/" && url.search !== "" ? `${describeTarget(url)}?…` : describeTarget(url);
}

function notAllowlisted(
  url: URL,
  invalid: number,
  patterns: readonly UrlPattern[],
  scheme: Scheme,
  host: string,
  port: number,
): string {
  const checked = patterns.length;
  const ignored =
    invalid === 0 ? "" : ` (${invalid} invalid pattern${invalid === 1 ? " was" : "s were"} ignored)`;
  if (checked === 0) {
    return `${describe(url)} is not allowed: allowedHttpHookUrls has no valid pattern${ignored}, so no hook URL is allowed`;
  }
  const noun = checked === 1 ? "the 1 pattern" : `any of the ${checked} patterns`;
  return `${describe(url)} does not match ${noun} in allowedHttpHookUrls${ignored}${nearMiss(url, patterns, scheme, host, port)}`;
}

/**
 * What a pattern naming the URL's host does not match (its scheme, port or path), since the
 * reason shows neither the URL's path nor the patterns (either may be a webhook's secret).
 */
function nearMiss(
  url: URL,
  patterns: readonly UrlPattern[],
  scheme: Scheme,
  host: string,
  port: number,
): string {
  const named = patterns.filter((p) => hostMatches(p.host, host));
  if (named.length === 0) {
    // `*.acme.example` for `acme.example`: the pattern holds the name, yet never matches it.
    const apex = patterns.some((p) => p.host.kind === "subdomain" && p.host.domain === host);
    return apex
      ? `; none names its host: *.${host} names the subdomains of ${host}, never ${host} itself, so add a pattern for it`
      : "; none names its host";
  }
  const some = named.length === 1 ? "the 1 pattern" : `the ${named.length} patterns`;
  if (!named.some((p) => p.schemes.includes(scheme)))
    return `; ${some} naming its host ${named.length === 1 ? "is" : "are"} for another scheme than ${scheme}`;
  const ports = named.filter((p) => p.schemes.includes(scheme));
  if (!ports.some((p) => portMatches(p, scheme, port))) {
    const these = ports.length === 1 ? "the 1 pattern" : `the ${ports.length} patterns`;
    return `; ${these} naming its host and scheme name${ports.length === 1 ? "s" : ""} another port than ${port} (no port in a pattern means ${DEFAULT_PORT[scheme]} only; :* means any)`;
  }
  if (mayReroute(url.pathname)) {
    return "; its path has a dot segment a server may read into it (..%2F, ..%5C, ..;, ..%3F), which only a pattern for any path (/*) matches";
  }
  return "; a pattern names its host, scheme and port but not its path (a pattern's path is matched whole, * standing for any run of characters; one with no path matches / only)";
}

// ---------------------------------------------------------------------------------------------
// Matching (ssrf.md §6.2): structural, on the parsed URL only.

function matchesPattern(url: URL, scheme: Scheme, host: string, port: number, pattern: UrlPattern): boolean {
  if (url.username !== "" || url.password !== "") return false;
  if (!pattern.schemes.includes(scheme)) return false;
  if (!hostMatches(pattern.host, host)) return false;
  if (!portMatches(pattern, scheme, port)) return false;
  // A path a server may route as another one matches no pattern narrower than any path.
  if (!anyPath(pattern.path) && mayReroute(url.pathname)) return false;
  // The fragment is never sent, so it never decides.
  return globMatches(pattern.path, upperEscapes(url.pathname + url.search));
}

/** A pattern with no port names the scheme's default one; `:*`, any. */
function portMatches(pattern: UrlPattern, scheme: Scheme, port: number): boolean {
  return pattern.port === "default"
    ? port === DEFAULT_PORT[scheme]
    : pattern.port === "any" || pattern.port === port;
}

/**
 * Whether a server could read a dot segment into this path, and so serve a path under none of
 * the pattern's: one that decodes the path before routing, once or more (leniently, as Python's
 * `unquote` does: a `%` not followed by two hex digits kept, so `%%32%66` is `%2f` and then `/`;
 * ASP.NET's `%uXXXX` read too), reads `\` as `/`, or drops a segment's `;…` as Tomcat and Spring
 * do (`..;` is `..`), or parses the decoded path again: there the path ends at `?` or `#`, tabs
 * and newlines are removed (`.%09.` is `..`) and trailing controls and spaces trimmed, so `..`
 * (or `..;…`) before a `?`, `#`, control character or space is taken as a dot segment (`..%3F`,
 * `..%23`, a final `..%00`); anywhere in the path, since a C string ends at NUL and a request
 * line's path at a space. The URL parser has resolved the dot segments written plainly. Real
 * hook URLs have none of this; an escape that decodes to no dot segment (`a%2Fb`) names a path the
 * pattern's `*` spans anyway. Not seen: decoders of overlong UTF-8 (`%c0%af`) or of look-alikes
 * normalised to `.` or `/` (fullwidth `．`).
 */
function mayReroute(path: string): boolean {
  let text = path;
  for (let decodes = 0; decodes <= MAX_DECODES; decodes++) {
    if (DOT_SEGMENT.test(text.replace(/\\/g, "/").replace(/[\t\n\r]/g, ""))) return true;
    const next = text.replace(ESCAPE, (_, unicode: string | undefined, byte: string | undefined) =>
      String.fromCharCode(Number.parseInt(unicode ?? byte ?? "", 16)),
    );
    if (next === text) return false;
    text = next;
  }
  return true; // still decoding after that many: no server is followed that far
}

/** How many times a server is taken to decode a path, at most (`..%25252F` is three). */
const MAX_DECODES = 4;
const ESCAPE = /%u([0-9a-f]{4})|%([0-9a-f]{2})/gi;
/**
 * `.` or `..` as a whole segment, or before a `;` that ends it to Tomcat, or before a `?`, `#`,
 * control character or space (`[^!-\uffff]`: U+0000 to U+0020) that ends it to a parser reading
 * the decoded path again.
 */
const DOT_SEGMENT = /(?:^|\/)\.\.?(?:;[^/]*)?(?:[/?#]|[^!-\uffff]|$)/;

/** A pattern path of `/*` (or `/**`: a run of `*` is one wildcard): every path. */
function anyPath(pieces: readonly string[]): boolean {
  return pieces.length >= 2 && pieces[0] === "/" && pieces.every((piece, i) => i === 0 || piece === "");
}

function hostMatches(rule: HostRule, host: string): boolean {
  switch (rule.kind) {
    case "any":
      return true;
    case "exact":
      return host === rule.host;
    case "subdomain":
      return host.endsWith(`.${rule.domain}`);
  }
}

/**
 * `pieces` is a glob split on `*`; each `*` spans any run of characters, `/` and `?` included.
 * Placing each middle piece at its leftmost occurrence is optimal when there is one wildcard
 * class, so this is linear scans only: no regex, no backtracking.
 */
function globMatches(pieces: readonly string[], text: string): boolean {
  const first = pieces[0] ?? "";
  if (pieces.length === 1) return text === first;
  const last = pieces[pieces.length - 1] ?? "";
  if (text.length < first.length + last.length || !text.startsWith(first) || !text.endsWith(last)) {
    return false;
  }
  const end = text.length - last.length;
  let at = first.length;
  for (let i = 1; i < pieces.length - 1; i++) {
    const piece = pieces[i] ?? "";
    const found = text.indexOf(piece, at);
    if (found < 0 || found + piece.length > end) return false;
    at = found + piece.length;
  }
  return true;
}

/** `%2f` and `%2F` are the same octet (RFC 3986 §6.2.2.1); the parser keeps whichever was written. */
function upperEscapes(s: string): string {
  return s.replace(/%[0-9a-f]{2}/gi, (e) => e.toUpperCase());
}

// ---------------------------------------------------------------------------------------------
// compileAllowlist

type Compiled =
  | { readonly ok: true; readonly pattern: UrlPattern; readonly warning?: string }
  | { readonly ok: false; readonly message: string };

export function compileAllowlist(patterns: readonly string[] | undefined): {
  allowlist: Allowlist;
  errors: PatternError[];
  warnings: PatternError[];
} {
  const errors: PatternError[] = [];
  const warnings: PatternError[] = [];
  if (patterns === undefined) {
    return { allowlist: Object.freeze({ patterns: undefined, invalid: 0 }), errors, warnings };
  }
  if (!Array.isArray(patterns)) {
    // Fail closed: a malformed list allows nothing rather than everything.
    errors.push({ index: -1, pattern: "", message: "allowedHttpHookUrls must be an array of strings" });
    return { allowlist: Object.freeze({ patterns: Object.freeze([]), invalid: 0 }), errors, warnings };
  }
  const compiled: UrlPattern[] = [];
  patterns.forEach((source: unknown, index) => {
    if (typeof source !== "string") {
      errors.push({ index, pattern: "", message: `is a ${typeof source}, not a string` });
      return;
    }
    let result: Compiled;
    try {
      result = compilePattern(source);
    } catch {
      result = { ok: false, message: "could not be read as a URL pattern" };
    }
    if (!result.ok) {
      errors.push({ index, pattern: source, message: result.message });
      return;
    }
    compiled.push(result.pattern);
    if (result.warning !== undefined) warnings.push({ index, pattern: source, message: result.warning });
  });
  return {
    allowlist: Object.freeze({ patterns: Object.freeze(compiled), invalid: errors.length }),
    errors,
    warnings,
  };
}

const GRAMMAR = "a pattern is scheme://host[:port]/path, e.g. https://hooks.example.com/*";

function fail(message: string): Compiled {
  return { ok: false, message };
}

/** `scheme://host[:port]path`, ssrf.md §6.2. */
function compilePattern(raw: string): Compiled {
  if (hasControl(raw)) return fail("contains a control character (tab, newline, …)");
  // Leading and trailing spaces are trimmed, as the URL parser trims them.
  const source = raw.replace(/^ +| +$/g, "");
  const sep = source.indexOf("://");
  if (sep < 0) {
    if (source === "*") {
      return fail(`has no "://"; to allow every URL leave allowedHttpHookUrls unset, or use *://*:*/*`);
    }
    return fail(`has no "://"; ${GRAMMAR}`);
  }

  const schemeText = source.slice(0, sep).toLowerCase();
  let schemes: readonly Scheme[];
  if (schemeText === "http" || schemeText === "https") schemes = [schemeText];
  else if (schemeText === "*") schemes = ["http", "https"];
  else return fail(`has the scheme "${source.slice(0, sep)}"; only http, https and * (either) are allowed`);

  const rest = source.slice(sep + 3);
  const slash = rest.indexOf("/");
  const authority = slash < 0 ? rest : rest.slice(0, slash);
  const pathText = slash < 0 ? undefined : rest.slice(slash);

  if (authority.includes("@"))
    return fail("has userinfo (an @ before the path); credentials are not allowed");
  const stray = /[\\?#]/.exec(authority);
  if (stray !== null) return fail(`has "${stray[0]}" before the path; the path must start with /`);

  const split = splitHostPort(authority);
  if (!split.ok) return fail(split.message);
  const host = compileHost(split.host);
  if (!host.ok) return fail(host.message);
  const port = compilePort(split.port);
  if (!port.ok) return fail(port.message);

  const path = compilePath(pathText ?? "/");
  if (!path.ok) return fail(path.message);

  const portText = port.rule === "default" ? "" : port.rule === "any" ? ":*" : `:${port.rule}`;
  const pattern: UrlPattern = Object.freeze({
    source: raw,
    normalized: `${schemeText}://${host.display}${portText}${path.pieces.join("*")}`,
    schemes,
    host: host.rule,
    port: port.rule,
    path: Object.freeze(path.pieces),
  });

  const warnings: string[] = [];
  if (host.rule.kind === "any") warnings.push("matches any host (host *); the address checks still apply");
  const refused = neverMatches(host.rule);
  if (refused !== undefined) warnings.push(refused);
  if (pathText === undefined) {
    warnings.push(
      `has no path, so it matches the path / only; write ${source}/* for any path (Claude Code reads a pattern without a path as any path)`,
    );
  }
  return warnings.length === 0 ? { ok: true, pattern } : { ok: true, pattern, warning: warnings.join("; ") };
}

/** Why a pattern's host can never be reached: one the guard refuses by name whatever is listed. */
function neverMatches(rule: HostRule): string | undefined {
  if (rule.kind === "any") return undefined;
  const host = rule.kind === "exact" ? rule.host : `x.${rule.domain}`;
  const blocked = blockedName(host);
  if (blocked === undefined || (blocked.privateUse && rule.kind === "exact")) return undefined;
  const named = rule.kind === "exact" ? rule.host : `*.${rule.domain}`;
  return blocked.privateUse
    ? `names ${named}, under the private-use .internal domain, which only a pattern naming one host exactly opens; list each host`
    : `can never match: ${named} ${blocked.why}`;
}

function hasControl(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x20 || c === 0x7f) return true;
  }
  return false;
}

type Step<T> = ({ readonly ok: true } & T) | { readonly ok: false; readonly message: string };

function splitHostPort(authority: string): Step<{ host: string; port: string | undefined }> {
  // `[::1]` and `*.[::1]` (refused later, with a reason) keep their colons inside the brackets.
  if (authority.startsWith("[") || authority.startsWith("*.[")) {
    const close = authority.indexOf("]");
    if (close < 0) return { ok: false, message: `has an unclosed [ in the host "${authority}"` };
    const after = authority.slice(close + 1);
    if (after !== "" && !after.startsWith(":")) {
      return { ok: false, message: `has "${after}" after the IPv6 address; only :port may follow it` };
    }
    return { ok: true, host: authority.slice(0, close + 1), port: after === "" ? undefined : after.slice(1) };
  }
  const colon = authority.indexOf(":");
  if (colon < 0) return { ok: true, host: authority, port: undefined };
  return { ok: true, host: authority.slice(0, colon), port: authority.slice(colon + 1) };
}

function compileHost(text: string): Step<{ rule: HostRule; display: string }> {
  if (text === "") return { ok: false, message: "has no host" };
  if (text === "*") return { ok: true, rule: { kind: "any" }, display: "*" };
  const wildcard = text.startsWith("*.");
  const literal = wildcard ? text.slice(2) : text;
  if (literal.includes("*")) {
    return {
      ok: false,
      message: `has a * in the host "${text}"; the only host wildcard is a whole leading "*." label (or a bare *)`,
    };
  }
  const host = normalizeHost(literal);
  if (host === undefined)
    return { ok: false, message: `has a host "${literal}" that is not a valid host name` };
  if (hasEmptyLabel(host)) {
    return {
      ok: false,
      message: `has a host "${text}" with an empty label (".." or a leading "."), which no resolver reads and no real URL has; write it with single dots between labels`,
    };
  }
  const overlong = overlongName(host);
  if (overlong !== undefined) {
    return { ok: false, message: `has a host "${shortened(host)}" that ${overlong}, so no URL can name it` };
  }
  const isIp = isIpv4(host) || host.includes(":");
  const display = host.includes(":") ? `[${host}]` : host;
  if (wildcard) {
    if (isIp)
      return { ok: false, message: `puts "*." before the IP address ${display}, which never matches` };
    return { ok: true, rule: { kind: "subdomain", domain: host }, display: `*.${display}` };
  }
  return { ok: true, rule: { kind: "exact", host }, display };
}

/** Lower-case, punycode, canonical IPv4 and IPv6, the root dot stripped: what `checkUrl` compares. */
function normalizeHost(text: string): string | undefined {
  const url = parseUrl(`http://${text}/`);
  if (url === undefined || url.username !== "" || url.password !== "" || url.port !== "") return undefined;
  if (url.pathname !== "/" || url.search !== "" || url.hash !== "") return undefined;
  const host = bareHost(url.hostname);
  return host === "" ? undefined : host;
}

/** A decimal part of an IPv4 address as inet_pton takes it: to 255, no leading zero. */
const IPV4_PART = "(?:25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)";
const IPV4 = new RegExp(`^(?:${IPV4_PART}\\.){3}${IPV4_PART}$`);

/**
 * An IPv4 address as inet_pton takes it: four decimal parts to 255, none with a leading zero. A
 * URL's canonical host is one where it is an address at all; curl reads a NO_PROXY entry so.
 */
export function isIpv4(text: string): boolean {
  return IPV4.test(text);
}

function compilePort(text: string | undefined): Step<{ rule: PortRule }> {
  if (text === undefined) return { ok: true, rule: "default" };
  if (text === "*") return { ok: true, rule: "any" };
  const port = /^\d{1,5}$/.test(text) ? Number(text) : Number.NaN;
  if (!(port >= 1 && port <= 65535)) {
    return { ok: false, message: `has the port "${text}"; a port is 1-65535 or *` };
  }
  return { ok: true, rule: port };
}

/**
 * The path goes through the same WHATWG path and query encoders as the URL it will be compared
 * with, so `/a b`, `/v1/%2e%2e/x` and `\` read the same on both sides. Each `*` is carried through
 * as a run of letters the encoders leave alone and that the path does not already contain:
 * `Q`, then `Z`s, then `K`. No proper prefix of it is also a suffix, so it can never be found
 * half in the text beside a `*` and half in the run (`/QZXJ*` used to split in the wrong place).
 */
function compilePath(text: string): Step<{ pieces: string[] }> {
  const stars = text.split("*").length - 1;
  let sentinel = "QZZZK";
  while (text.includes(sentinel)) sentinel = `Q${sentinel.slice(1, -1)}ZK`;
  const url = parseUrl(`http://h${text.replaceAll("*", sentinel)}`);
  if (url === undefined || url.host !== "h")
    return { ok: false, message: `has a path "${text}" that does not parse` };
  if (url.hash !== "")
    return { ok: false, message: "has a fragment (#); fragments are never sent, so it never matches" };
  const normalized = upperEscapes(url.pathname + url.search);
  const pieces = normalized.split(sentinel);
  if (pieces.length - 1 !== stars) {
    return { ok: false, message: `has a "." or ".." segment that removes a * from the path "${text}"` };
  }
  return { ok: true, pieces };
}

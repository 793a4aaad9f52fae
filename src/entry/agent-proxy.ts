/**
 * How an agent's http hook reads the proxy variables of its environment (clients.md §2.1, §9),
 * or deepagents' hook, init's curl command, as curl reads them:
 * `hookgate doctor` checks by that route and says why it is direct where a proxy is set, and
 * `hookgate send`, the command hook's adapter, posts the way the agent's http hooks to the same
 * gateway do.
 */
import { BlockList, SocketAddress } from "node:net";
import { isIpv4 } from "../core/egress/url.js";
import { asCurlReadsIt, proxyScheme, socksVersion } from "../core/proxy-scheme.js";
import type { Env } from "./send.js";

/**
 * Whether the agent's http hook to `hookUrl` goes through the proxy of its environment, and if a
 * proxy is set but NO_PROXY exempts the host, the variable that does: the agent then connects
 * directly, through its checking lookup (clients.md §2.1, §9). Each client reads the variables
 * its own way. Claude Code's current release (2.1.332) takes the first non-empty of https_proxy,
 * HTTPS_PROXY, http_proxy, HTTP_PROXY, and ignores it, with a warning, unless it parses as a URL
 * with a host (`proxy.corp:8080` does not); it reads no_proxy and NO_PROXY together when both are
 * set and differ, either one `*` exempting every host, split on commas and spaces, taking
 * `host:port`, `.domain` (the domain and below it) and the exact host; an IPv6 address is taken
 * with or without its brackets (`::1`, `[::1]`), as curl takes it, which the reference does not
 * say of Claude Code: a gateway at `http://[::1]` is one on this machine. Claude Code 2.1.112 read
 * no_proxy alone when set, and took any proxy: `older` says why it went through the proxy where
 * the current release does not. deepcode's splits NO_PROXY (before no_proxy) on commas, drops a
 * leading `*` or `.`, and takes the host or any name below it, compared with the URL's host
 * name brackets and all (`[::1]` exempts `http://[::1]`, `::1` does not); `*` alone, which curl
 * reads as "no proxy at all", is left empty by that and exempts nothing (`starIgnored`). It picks
 * its proxy by `??`, so an empty https_proxy means none. deepagents runs curl (`curlProxy`).
 * Each is read as its code does, not mended: `doctor` says what the agent does, and `send` goes
 * the agent's way.
 */
export function agentProxy(
  hookUrl: string,
  dialect: string,
  env: Env,
): {
  readonly used: boolean;
  readonly proxy?: string;
  /** The variable the proxy it goes through came from, as a fix to the proxy's URL names it. */
  readonly from?: string;
  readonly noProxy?: string;
  readonly exemptedBy?: string;
  /** The variable whose proxy, written without a scheme, Claude Code ignores. */
  readonly ignored?: string;
  /** Why Claude Code 2.1.112 and earlier go through the proxy where the current release does not. */
  readonly older?: string;
  /** The variable `noProxy` names holds a `*`, which deepcode reads as no host, not as every host. */
  readonly starIgnored?: true;
  /** A proxy variable set that curl does not read for this URL (deepagents), and the ones it reads. */
  readonly unread?: { readonly name: string; readonly read: string };
  /** Why the client's http hooks fail at the proxy they go through: one whose protocol it does not speak. */
  readonly unspoken?: string;
} {
  const url = new URL(hookUrl);
  const host = url.hostname.toLowerCase();
  if (dialect.startsWith("deepagents")) return curlProxy(url, hookUrl, env);
  if (dialect === "deepcode") {
    // `??`: the first variable defined is the proxy, an empty one none.
    const picked = firstSet(env, AGENT_PROXY_VARIABLES, (value) => value !== undefined);
    if (!picked?.value) return { used: false };
    const { name: from, value: proxy } = picked;
    const name = env.NO_PROXY === undefined && env.no_proxy !== undefined ? "no_proxy" : "NO_PROXY";
    const entries = (env[name] ?? "")
      .split(",")
      .map((entry) => entry.trim().toLowerCase())
      .filter((entry) => entry !== "");
    const exempts = entries.some((entry) => {
      const domain = entry.replace(/^\*?\.?/, "");
      return host === domain || host.endsWith(`.${domain}`) || host === entry;
    });
    if (exempts) return { used: false, exemptedBy: name };
    const unspoken = undiciUnspoken(proxy);
    return {
      used: true,
      proxy,
      from,
      noProxy: name,
      ...(entries.includes("*") ? { starIgnored: true as const } : {}),
      ...(unspoken === undefined ? {} : { unspoken }),
    };
  }
  const picked = firstSet(env, AGENT_PROXY_VARIABLES);
  if (picked === undefined) return { used: false };
  const { name: source, value: proxy } = picked;
  const port = url.port || (url.protocol === "https:" ? "443" : "80");
  // A URL writes an IPv6 host in brackets; a NO_PROXY entry may not (`::1`), as curl takes it.
  const bare = host.replace(/^\[|\]$/g, "");
  const exempts = (list: string | undefined) =>
    list === "*" ||
    (list ?? "")
      .split(/[,\s]+/)
      .filter((entry) => entry !== "")
      .some((raw) => {
        const entry = noProxyEntry(raw.toLowerCase());
        if (entry.port !== undefined) return bare === entry.host && port === entry.port;
        if (entry.host.startsWith(".")) return host === entry.host.slice(1) || host.endsWith(entry.host);
        return bare === entry.host;
      });
  // The variable a fix should name: no_proxy when set, which every release reads.
  const name = env.no_proxy ? "no_proxy" : "NO_PROXY";
  const exempting = (["no_proxy", "NO_PROXY"] as const).filter((variable) => exempts(env[variable]));
  const exemptedBy = exempting.length === 0 ? undefined : exempting.join(" and ");
  const olderUsed = !exempts(env[name]);
  if (exemptedBy !== undefined) {
    return olderUsed
      ? { used: false, proxy, exemptedBy, older: "Claude Code 2.1.112 and earlier read only no_proxy here" }
      : { used: false, proxy, exemptedBy };
  }
  if (!hasHost(proxy)) {
    return olderUsed
      ? { used: false, proxy, ignored: source, older: "Claude Code 2.1.112 and earlier take it as http://" }
      : { used: false, proxy, ignored: source };
  }
  // Any SOCKS version: Claude Code's client speaks none.
  return socksVersion(proxy) !== undefined
    ? { used: true, proxy, from: source, noProxy: name, unspoken: CLAUDE_CODE_SOCKS }
    : { used: true, proxy, from: source, noProxy: name };
}

/**
 * Claude Code's http hooks go through a proxy by https-proxy-agent (its utils/proxy.ts), which
 * opens every connection with an HTTP CONNECT, whatever the URL's scheme: a SOCKS proxy answers
 * none, and every hook fails.
 */
const CLAUDE_CODE_SOCKS =
  "its http client asks every proxy in HTTP (a CONNECT), which a SOCKS proxy does not answer";

/**
 * Why deepcode's ProxyAgent (undici) takes no such proxy URL, or undefined where it does: http,
 * https, and SOCKS5 as socks5:// or socks:// alone; a socks5h:// or SOCKS4 one fails every hook
 * with "Invalid URL protocol".
 */
function undiciUnspoken(proxy: string): string | undefined {
  const scheme = proxyScheme(proxy);
  if (scheme === undefined || ["http", "https", "socks5", "socks"].includes(scheme)) return undefined;
  return `its http client (undici's ProxyAgent) takes no ${scheme}:// proxy ("Invalid URL protocol")`;
}

/** The variables an agent's http hook takes its proxy from, in the order it reads them. */
const AGENT_PROXY_VARIABLES = ["https_proxy", "HTTPS_PROXY", "http_proxy", "HTTP_PROXY"];

/**
 * The first of `names` that is set in `env`, and its value. Set means not empty, as Claude Code
 * and curl read a proxy variable; deepcode's `??` counts an empty one too.
 */
function firstSet(
  env: Env,
  names: readonly string[],
  isSet: (value: string | undefined) => boolean = Boolean,
): { readonly name: string; readonly value: string } | undefined {
  const name = names.find((variable) => isSet(env[variable]));
  return name === undefined ? undefined : { name, value: env[name] ?? "" };
}

/**
 * The proxy of deepagents' hook, init's curl command, as curl reads it (curl(1), ENVIRONMENT;
 * checked against curl 7.88's `-v`, which names the variable it used): for an http URL
 * http_proxy, never HTTP_PROXY (a CGI request's Proxy header sets it), for an https one
 * https_proxy then HTTPS_PROXY, and then all_proxy, ALL_PROXY; an empty variable is unset, and a
 * proxy without a scheme is an http one. no_proxy, else NO_PROXY: `*` alone, untrimmed, exempts every
 * host; entries split on commas and blanks, a name's without a leading or trailing dot, each the
 * host or a domain above it; an IPv4 address matches one written the same or a CIDR range, and an
 * IPv6 one only an entry written as curl names the URL's host (`curlHostName`), bare (`::1`;
 * `[::1]`, `0:0::1` and `::1/128` match nothing); a port in an entry makes it match nothing. curl also reads
 * ~/.curlrc (or ~/.config/curlrc), which can set a proxy: not read here, but doctor names it
 * (`curlConfigNote`).
 */
function curlProxy(url: URL, written: string, env: Env): ReturnType<typeof agentProxy> {
  const names =
    url.protocol === "https:"
      ? ["https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY"]
      : ["http_proxy", "all_proxy", "ALL_PROXY"];
  const picked = firstSet(env, names);
  if (picked === undefined) {
    const read =
      url.protocol === "https:"
        ? "https_proxy or HTTPS_PROXY for an https URL"
        : "http_proxy for an http URL";
    const others =
      url.protocol === "https:" ? ["http_proxy", "HTTP_PROXY"] : ["HTTP_PROXY", "https_proxy", "HTTPS_PROXY"];
    const unread = firstSet(env, others);
    return unread === undefined ? { used: false } : { used: false, unread: { name: unread.name, read } };
  }
  const { name: source, value: proxy } = picked;
  const noProxy = env.no_proxy ? "no_proxy" : "NO_PROXY";
  const list = env[noProxy] ?? "";
  const host = curlHostName(url, written);
  // Only the whole list `*`: curl compares it untrimmed, and a `*` among others is a name.
  const exempts =
    list === "*" ||
    list.split(/[,\s]+/).some((entry) => entry !== "" && curlExempts(host, entry.toLowerCase()));
  return exempts ? { used: false, proxy, exemptedBy: noProxy } : { used: true, proxy, from: source, noProxy };
}

/**
 * The URL's host as curl 7.88 compares it with NO_PROXY: lower case, without a trailing dot or
 * an IPv6 address's brackets. An IPv6 address is as the URL writes it, or as inet_ntop writes it
 * where that is shorter (its urlapi.c `ipv6_parse`): `[0:0::1]` is `::1`, but `[::ffff:10.1.2.3]`
 * stays dotted, where a WHATWG URL writes `[::ffff:a01:203]`, and `[::ffff:a01:203]` stays hex.
 */
function curlHostName(url: URL, written: string): string {
  const name = url.hostname.toLowerCase();
  if (!name.startsWith("[")) return name.replace(/\.$/, "");
  const asWritten =
    /^\s*[a-z][\w+.-]*:\/\/(?:[^@/?#[]*@)?\[([\da-f:.]+)\]/i.exec(written)?.[1]?.toLowerCase() ??
    name.slice(1, -1);
  try {
    // SocketAddress writes an address as inet_ntop does (libuv's, which glibc's matches).
    const shortest = new SocketAddress({ address: asWritten, family: "ipv6" }).address;
    return shortest.length < asWritten.length ? shortest : asWritten;
  } catch {
    return name.slice(1, -1);
  }
}

/** Whether one of curl's NO_PROXY entries exempts `host` (lower case, no brackets, no trailing dot). */
function curlExempts(host: string, entry: string): boolean {
  if (isIpv4(host)) return ipv4Exempts(host, entry);
  // An IPv6 host is compared as a name, as curl 7.88 does: `::1` exempts [::1], `0:0::1` does not.
  // A name's entry loses one dot at its end and one at its start; an address's keeps them.
  const name = entry.replace(/\.$/, "").replace(/^\./, "");
  return host === name || host.endsWith(`.${name}`);
}

/**
 * Whether an entry exempts an IPv4 host as curl's CIDR match reads it (Curl_cidr4_match): an
 * address as inet_pton writes one (four decimal parts to 255, none with a leading zero), then
 * after a `/` its bits as C's atoi reads them, digits up to the first other character; 0 (none
 * given, `/`, `/abc`) and 32 compare the address alone, more than 32 match nothing.
 */
function ipv4Exempts(host: string, entry: string): boolean {
  const slash = entry.indexOf("/");
  const address = slash < 0 ? entry : entry.slice(0, slash);
  const digits = slash < 0 ? undefined : /^\s*([+-]?\d+)/.exec(entry.slice(slash + 1))?.[1];
  const bits = digits === undefined ? 0 : Number(digits);
  if (!isIpv4(address) || bits < 0 || bits > 32) return false;
  const range = new BlockList();
  range.addSubnet(address, bits === 0 ? 32 : bits, "ipv4");
  return range.check(host, "ipv4");
}

/**
 * A NO_PROXY entry's host and port: `host:port`, `host`, and an IPv6 address bracketed, with or
 * without a port (`[::1]:8787`, `[::1]`), or bare (`::1`), whose colons name no port.
 */
function noProxyEntry(entry: string): { readonly host: string; readonly port?: string } {
  const bracketed = /^\[([^\]]*)\](?::(\d+))?$/.exec(entry);
  if (bracketed !== null) {
    const [, host = "", port] = bracketed;
    return port === undefined ? { host } : { host, port };
  }
  const [host = "", port, ...more] = entry.split(":");
  return port === undefined || more.length > 0 ? { host: entry } : { host, port };
}

function hasHost(proxy: string): boolean {
  try {
    return new URL(proxy).host !== "";
  } catch {
    return false;
  }
}

/**
 * A proxy's URL as the clients that take one written without a scheme (`proxy.corp:8080`) read
 * it: an http one (deepcode's, Claude Code 2.1.112's).
 */
function withScheme(proxy: string): string {
  return proxy.includes("://") ? proxy : `http://${proxy}`;
}

/**
 * A URL's host name (`new URL(…).hostname`) that names this machine's loopback: `localhost` and
 * the names under it, 127.x, `[::1]`, an IPv4-mapped 127.x, which a URL writes in hex
 * (`[::ffff:7f00:1]`), and the unspecified `0.0.0.0` and `[::]`, which a server started on all
 * addresses prints and to which a connect reaches this machine (Linux, macOS). Without
 * ipaddr.js, which would add about 10 ms to every command hook's run.
 */
function loopbackUrlHost(hostname: string): boolean {
  const name = hostname.replace(/^\[|\]$/g, "").toLowerCase();
  return /^(?:(?:.+\.)?localhost\.?|127(?:\.\d{1,3}){3}|::1?|0\.0\.0\.0|::ffff:7f[\da-f]{2}:[\da-f]{1,4})$/.test(
    name,
  );
}

/**
 * The proxy a request to `url` cannot take: one on another machine, for a gateway on this
 * machine's loopback. That proxy connects to its own loopback, so the request fails, or reaches
 * another machine's service, for a route that works directly. A proxy on this machine (a local
 * cntlm) reaches the gateway. Undefined when `proxy` can be taken, or names no host.
 */
export function strandingProxy(url: string, proxy: string): URL | undefined {
  if (!loopbackUrlHost(new URL(url).hostname)) return undefined;
  let parsed: URL;
  try {
    parsed = new URL(withScheme(proxy));
  } catch {
    return undefined;
  }
  return parsed.hostname === "" || loopbackUrlHost(parsed.hostname) ? undefined : parsed;
}

/**
 * The route `send` posts by and `doctor` checks by: the proxy the agent's http hooks to this URL
 * go through, read from the variables as that client reads them (Claude Code's for a route that
 * names no client), so that what `doctor` finds reachable is what the hooks reach, and SessionStart
 * and Setup, which reach the gateway only through `send`, go the hooks' way. Direct, with
 * `stranded` naming the proxy, where that proxy cannot reach the gateway (`strandingProxy`): the
 * event would be lost for a route that works; the agent's http hooks fail there until NO_PROXY
 * names the gateway, which `doctor` says.
 */
export function proxyFor(
  url: string,
  dialect: string | undefined,
  env: Env,
): { readonly proxy?: string; readonly proxyVariable?: string; readonly stranded?: URL } {
  const via = agentProxy(url, dialect ?? "claude-code", env);
  if (!via.used || via.proxy === undefined) return {};
  const stranded = strandingProxy(url, via.proxy);
  if (stranded !== undefined) return { stranded };
  const proxy = dialect?.startsWith("deepagents")
    ? asCurlReadsIt(withScheme(via.proxy))
    : withScheme(via.proxy);
  return via.from === undefined ? { proxy } : { proxy, proxyVariable: via.from };
}

/**
 * A gateway request through a forward proxy (`hookgate send` and `hookgate doctor` with
 * HTTPS_PROXY or HTTP_PROXY set, as the agent's http hooks go): undici's ProxyAgent, sending the
 * proxy URL's user name and password as Proxy-Authorization (proxyCredentials). An http
 * gateway's request goes to the proxy in absolute form, as curl sends it, an https one's through
 * a CONNECT tunnel: a proxy set as Squid is by default refuses a CONNECT to any port but 443, and
 * an http gateway listens on another (8787). A SOCKS5 proxy is spoken to by undici's own SOCKS5
 * client, a SOCKS4 one as curl speaks it (socks4.ts). Loaded only when a proxy is used: undici costs a
 * command hook's run about 70 ms to load.
 */
import { isIP } from "node:net";
import type { Duplex } from "node:stream";
import { setFlagsFromString } from "node:v8";
import { buildConnector, type Dispatcher, Pool, ProxyAgent, Socks5ProxyAgent } from "undici";
import { flatHeaders } from "../../core/answer-headers.js";
import { errorMessage } from "../../core/errors.js";
import { proxyScheme, socksVersion } from "../../core/proxy-scheme.js";
import { describeTlsFailure, type TlsFixPlace } from "../../core/tls-failure.js";
import { withoutUserinfo } from "../../core/url-userinfo.js";
import { decodedAnswer, GATEWAY, type GatewayRequest, type GatewayResult } from "./node.js";
import { type Socks4Route, socks4Agent } from "./socks4.js";

// undici parses the answer with WebAssembly, compiled at its first request; V8 then compiles the
// parser's busiest function again, optimised, in the background, and the process cannot exit
// until that is done: 250 to 450 ms after `send` printed its answer, for a process that parses
// one answer. Its baseline compile alone parses one as well.
setFlagsFromString("--liftoff-only");

/**
 * undici warns, on the stderr the hook's user reads, that its SOCKS5 support is experimental as
 * a process makes its first SOCKS5 agent: every `send` through one. It warns once a process, so
 * an agent made and dropped here, its warning held back for that one synchronous call, spends the
 * once; Node's other warnings reach the process as ever, before and after.
 */
function spendSocksNotice(): void {
  const emitWarning = process.emitWarning;
  process.emitWarning = () => {};
  try {
    // Connects nowhere: an agent opens its connection at its first request.
    new Socks5ProxyAgent("socks5://127.0.0.1:1080").close().catch(() => {});
  } finally {
    process.emitWarning = emitWarning;
  }
}

export async function proxiedRequest(
  request: GatewayRequest,
  url: URL,
  proxy: string,
  maxBytes: number,
): Promise<GatewayResult> {
  const shownProxy = withoutUserinfo(proxy).replace(/\/$/, "");
  const via = `through the proxy ${shownProxy}`;
  // curl's socks:// (deepagents' hook) comes here as socks4:// (agent-proxy.ts, proxyFor).
  const socks = socksVersion(proxy);
  if (socks === 5) spendSocksNotice();
  let agent: Dispatcher;
  // The connection to the proxy itself, and how it failed, if it did: its TLS failures are told
  // from the gateway's through the tunnel, which undici reports alike.
  const toProxy = { failure: undefined as unknown };
  // The connections to a SOCKS5 proxy, closed as the request ends (socks5Agent).
  const toSocks = new Set<Duplex>();
  try {
    agent =
      socks === 4
        ? socks4Agent(socks4Route(proxy, request.timeoutMs))
        : socks === 5
          ? socks5Agent(proxy, toSocks)
          : new ProxyAgent({
              uri: proxy,
              proxyTunnel: false,
              clientFactory: proxyClient(toProxy),
              // An https gateway's TLS handshake in the tunnel is given the request's time, as
              // socks4.ts gives it: undici aborts no request while its connection is made, and its
              // connector's own 10 s held a command whose gateway never answered the handshake.
              requestTls: { timeout: request.timeoutMs },
              ...proxyCredentials(proxy),
            });
  } catch (e) {
    return {
      ok: false,
      error: `the proxy ${shownProxy} is not usable: ${errorMessage(e)}`,
      ...(e instanceof BadEscape ? { fix: badEscapeFix(proxyVariables(request)) } : {}),
    };
  }
  const signal = AbortSignal.timeout(request.timeoutMs);
  try {
    // Never follows a redirect: undici's request() does not. Raced with the signal: undici
    // aborts no request while its connection is made, and its SOCKS5 client gives an https
    // gateway's TLS handshake no time limit at all, so a gateway that never answered it held
    // the command for ever.
    const asked = agent.request({
      origin: url.origin,
      path: `${url.pathname}${url.search}`,
      method: request.method,
      headers: { ...request.headers },
      body: request.body ?? null,
      signal,
    });
    asked.catch(() => {});
    const res = await Promise.race([asked, abortedBy(signal)]);
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of res.body as AsyncIterable<Buffer>) {
      size += chunk.byteLength;
      if (size > maxBytes) {
        return { ok: false, error: `the answer from ${url.href} (${via}) is larger than the client accepts` };
      }
      chunks.push(chunk);
    }
    const answer = { status: res.statusCode, headers: flatHeaders(res.headers), body: Buffer.concat(chunks) };
    return await decodedAnswer(answer, url, maxBytes, request.reader ?? "axios", via);
  } catch (e) {
    if (signal.aborted) {
      return { ok: false, error: `${url.href} did not answer within ${request.timeoutMs / 1000} s (${via})` };
    }
    // undici fails a 407 from the proxy, to a request in absolute form or a CONNECT alike.
    if (/\(407\)/.test(errorMessage(e))) {
      return {
        ok: false,
        error: `the proxy ${shownProxy} refused the request (HTTP 407 Proxy Authentication Required)`,
        fix: proxyAuthFix(proxy),
      };
    }
    // An https proxy's own TLS failed (undici's UND_ERR_PRX_TLS wraps a name mismatch, other
    // failures come bare): said as the proxy's, with what to change of its URL or certificate.
    const atProxy = proxyTlsFailure(e, toProxy.failure, new URL(proxy), proxyVariables(request));
    if (atProxy !== undefined)
      return { ok: false, ...atProxy, error: `${atProxy.error} (the proxy ${shownProxy})` };
    // Else the tunnel's TLS is the gateway's own, said as a direct request says it: OpenSSL's raw
    // line, with no fix, had doctor send its user to a proxy that worked.
    const tls = describeTlsFailure(e, url, GATEWAY);
    if (tls !== undefined) return { ok: false, ...tls, error: `${tls.error} (${via})` };
    return { ok: false, error: `request to ${url.href} ${via} failed: ${failureText(e)}` };
  } finally {
    // Not waited for: what is left of the exchange (a body past the limit) is dropped.
    agent.destroy().catch(() => {});
    for (const socket of toSocks) socket.destroy();
  }
}

/**
 * undici's SOCKS5 agent, each of whose connections to the proxy is kept in `sockets`: it gives an
 * https gateway's TLS handshake no time limit and no way to end it, so a gateway that never
 * answered it held the process, its answer printed, until the request's end closes them. undici's
 * SOCKS5 sends the gateway's name for the proxy to resolve, as socks5h:// asks curl to, and takes
 * no socks5h:// ("Invalid URL protocol"). (curl resolves the name of a socks5:// one itself: the
 * same gateway, but for a name only the proxy can resolve.)
 */
function socks5Agent(proxy: string, sockets: Set<Duplex>): Dispatcher {
  const connect = buildConnector({});
  return new Socks5ProxyAgent(proxy.replace(/^socks5h:/i, "socks5:"), {
    connect: (options, callback) =>
      connect(options, (...settled) => {
        if (settled[1]) sockets.add(settled[1]);
        callback(...settled);
      }),
    ...socksCredentials(proxy),
  });
}

/** A promise that fails as `signal` aborts, and never settles before. */
function abortedBy(signal: AbortSignal): Promise<never> {
  return new Promise((_, reject) =>
    signal.addEventListener("abort", () => reject(signal.reason), { once: true }),
  );
}

/** How a SOCKS4 proxy's URL asks it (socks4.ts): socks4a:// has the proxy resolve the name. */
function socks4Route(proxy: string, timeoutMs: number): Socks4Route {
  const { hostname, port, username } = new URL(proxy);
  return {
    host: hostname.replace(/^\[|\]$/g, ""),
    port: Number(port) || 1080,
    sendsName: proxyScheme(proxy) === "socks4a",
    userId: decoded(username, "user name"),
    timeoutMs,
  };
}

/**
 * The connection pool to the proxy itself, naming no TLS server to a proxy at an IP address:
 * undici names the proxy's host to an https one, IP address or not (proxyTls's servername only
 * replaces it with another name), and Node warns of an IP address (DEP0123) on the stderr a
 * hook's user reads. Without a name, the certificate is still checked against the address. The
 * failure of its connection, if it failed, is kept in `toProxy`: the proxy's TLS, not the gateway's.
 */
function proxyClient(toProxy: { failure: unknown }) {
  return (origin: URL, options: object): Pool => {
    const { connect } = options as { connect: buildConnector.connector };
    return new Pool(origin, {
      ...options,
      connect: ({ servername, ...opts }, callback) =>
        connect(
          servername === undefined || isIP(servername) ? opts : { ...opts, servername },
          (...settled) => {
            if (settled[0] !== null) toProxy.failure = settled[0];
            callback(...settled);
          },
        ),
    });
  };
}

/**
 * The variable the proxy came from, as a fix names it: the one the agent's client read (curl's
 * http_proxy, which is not HTTP_PROXY to it), else either.
 */
function proxyVariables(request: GatewayRequest): string {
  return request.proxyVariable ?? "HTTPS_PROXY or HTTP_PROXY";
}

/** How an https proxy's own certificate is fixed: in the proxy variable, or by its maker. */
function proxyPlace(variables: string): TlsFixPlace {
  return {
    urlIn: `the proxy's URL (${variables})`,
    whose: "the proxy's",
    startedIn: "the shell that runs hookgate and the agent",
    plainHttpWhy: ": the proxy speaks plain http, and a CONNECT tunnel still carries the gateway's https",
  };
}

/**
 * The failure of a TLS handshake with the proxy itself: the one its connection failed with (an
 * untrusted certificate, plain http), or undici's UND_ERR_PRX_TLS around a name mismatch.
 */
function proxyTlsFailure(e: unknown, failure: unknown, proxy: URL, variables: string) {
  if (proxy.protocol !== "https:") return undefined;
  for (let cause: unknown = e; cause instanceof Error; cause = cause.cause) {
    const code = (cause as NodeJS.ErrnoException).code;
    if (cause === failure || code === "UND_ERR_PRX_TLS") {
      return describeTlsFailure(
        code === "UND_ERR_PRX_TLS" ? cause.cause : cause,
        proxy,
        proxyPlace(variables),
      );
    }
  }
  return undefined;
}

/**
 * The Proxy-Authorization for the user name and password of the proxy's URL, as Basic: for a user
 * name alone too, with an empty password, as curl and axios (Claude Code's http hooks) send it.
 * undici's own sends nothing unless both are given, and the proxy's 407 then sent its user to
 * add a user name that was there.
 */
function proxyCredentials(proxy: string): { token?: string } {
  const { username, password } = new URL(proxy);
  if (!username) return {};
  const pair = `${decoded(username, "user name")}:${decoded(password, "password")}`;
  return { token: `Basic ${Buffer.from(pair).toString("base64")}` };
}

/**
 * The user name and password of a SOCKS5 proxy's URL, decoded, as curl sends them: undici's
 * ProxyAgent hands its SOCKS5 client the URL's own, escapes and all, unless given them, and a
 * password with a %40 for its "@" was refused by a proxy that took curl's.
 */
function socksCredentials(proxy: string): { username?: string; password?: string } {
  const { username, password } = new URL(proxy);
  if (!username) return {};
  return { username: decoded(username, "user name"), password: decoded(password, "password") };
}

/** A user name or password whose % starts no escape (`p%ss`): said without the text itself. */
class BadEscape extends Error {}

function badEscapeFix(variables: string): string {
  return `write a % of the user name or password as %25 in the proxy's URL (${variables}): a URL reads % and the two characters after it as one escaped character`;
}

/**
 * A part of the proxy URL's userinfo, its escapes decoded. decodeURIComponent's own failure,
 * "URI malformed", named neither the proxy nor what to write instead.
 */
function decoded(part: string, name: string): string {
  try {
    return decodeURIComponent(part);
  } catch {
    throw new BadEscape(
      `the ${name} in its URL does not decode: each % in it must start an escape of UTF-8 text, such as %40 for @`,
    );
  }
}

/**
 * What to change of a proxy that answered 407: the credentials its URL gives, the password where
 * it gives a user name alone, else to give them.
 */
function proxyAuthFix(proxy: string): string {
  const { username, password } = new URL(proxy);
  if (!username) return "give the proxy's user name and password in its URL (http://user:password@host:port)";
  return password
    ? "check the user name and password in the proxy's URL, sent as Basic authentication (a proxy that asks for NTLM or Kerberos needs a local one, such as cntlm, in front of it)"
    : "give the password after the user name in the proxy's URL (http://user:password@host:port): the user name alone was sent, with an empty password";
}

/** undici's message and code, then its cause's (ECONNREFUSED from the proxy's own address), on one line. */
function failureText(e: unknown): string {
  const parts: string[] = [];
  for (let cause: unknown = e; cause instanceof Error && parts.length < 3; cause = cause.cause) {
    const code = (cause as NodeJS.ErrnoException).code;
    parts.push(`${errorMessage(cause)}${typeof code === "string" ? ` (${code})` : ""}`);
  }
  return parts.join(": ").replace(/\s+/g, " ").trim();
}

/**
 * Egress on Node and Lambda: every outbound request hookgate makes goes through here.
 *
 * The URL is checked first (scheme, userinfo, ports, names, allowlist); then an undici Agent
 * whose connector refuses blocked IP literals itself (Node never calls `lookup` for a literal)
 * and whose `lookup` checks every DNS answer and hands back only checked addresses. The socket
 * can dial nothing else, so a second, rebinding answer is never used (the pin). Each policy gets
 * its own pool of kept-alive sockets, so a reload's address rules apply to every later request.
 * Redirects are never followed, proxies from the environment are never used (the dispatcher is
 * always ours), and connect, header and body time and the response size are bounded; a request
 * ends at its time limit or its caller's abort even before it has a connection.
 */
import { lookup as dnsLookup } from "node:dns/promises";
import { EventEmitter } from "node:events";
import { isIP, type LookupFunction } from "node:net";
import { pipeline, type Readable } from "node:stream";
import { createBrotliDecompress, createGunzip, createInflate, constants as zlibConstants } from "node:zlib";
import { Agent, buildConnector, type Dispatcher } from "undici";
import { type CodingHeader, codingsOf, flatHeaders } from "../../core/answer-headers.js";
import { classifyAddress } from "../../core/egress/address.js";
import {
  addressRefusal,
  DEFAULT_EGRESS_POLICY,
  type EgressPolicy,
  judgeAnswers,
  outboundHeaders,
} from "../../core/egress/policy.js";
import {
  cutShortReason,
  EgressError,
  type EgressRefusal,
  leftBy,
  redirectRefusal,
  tooLargeRefusal,
  undecodedBody,
  undecodedRefusal,
} from "../../core/egress/refusal.js";
import { describeTarget } from "../../core/egress/target.js";
import { checkUrl } from "../../core/egress/url.js";
import { errorMessage } from "../../core/errors.js";
import type { Egress, EgressRequest, EgressResponse } from "../../core/ports.js";
import { err, ok, type Result } from "../../core/result.js";
import { describeTlsFailure, type TlsFixPlace } from "../../core/tls-failure.js";

export interface ResolvedAddress {
  readonly address: string;
  readonly family: 4 | 6;
}

/** DNS as a port, so tests and `egress-check --resolve` can answer for a name. */
export type Resolver = (hostname: string) => Promise<readonly ResolvedAddress[]>;

export const systemResolver: Resolver = async (hostname) =>
  (await dnsLookup(hostname, { all: true, verbatim: true })).map((a) => ({
    address: a.address,
    family: a.family === 6 ? 6 : 4,
  }));

export interface UndiciEgressOptions {
  /**
   * Read on every request and every connect, so a policy reload takes effect at once. Return the
   * same object until the policy changes: each new one starts a new connection pool. Undefined
   * (a policy without an `egress` section) means DEFAULT_EGRESS_POLICY.
   */
  readonly policy: () => EgressPolicy | undefined;
  readonly resolve?: Resolver;
  readonly connectTimeoutMs?: number;
  /** Largest response body read (default 1 MiB). */
  readonly maxResponseBytes?: number;
  /** Called once per refusal, to log and count it. */
  readonly onRefusal?: (refusal: EgressRefusal, url: string) => void;
}

export interface UndiciEgress {
  readonly send: Egress;
  /** Judges a URL the way `send` would, resolving but never connecting (`hookgate egress-check`). */
  judge(url: string): Promise<Result<{ url: URL; addresses: readonly string[] }, EgressRefusal>>;
  close(): Promise<void>;
}

const DEFAULT_MAX_RESPONSE_BYTES = 1024 * 1024;

export function createUndiciEgress(options: UndiciEgressOptions): UndiciEgress {
  const resolve = options.resolve ?? systemResolver;
  const policyNow = () => options.policy() ?? DEFAULT_EGRESS_POLICY;
  const connectTimeoutMs = options.connectTimeoutMs ?? 5000;
  // A kept-alive socket's address was judged when it connected, under the policy of then. So each
  // egress policy gets its own pool: after a reload that refuses an address, no socket to it is
  // reused. (Policies without an egress section share DEFAULT_EGRESS_POLICY, and so one pool.)
  // The old pool closes once its requests in flight have finished. A pool's connections judge
  // their addresses under the policy its URLs were checked against, and under the current one
  // too when a reload came in between (during a slow lookup, say): a request is never let through
  // by one policy's allowlist and another's allowCidrs.
  let pool:
    | { readonly policy: EgressPolicy; readonly agent: Agent; readonly dispatcher: Dispatcher }
    | undefined;
  /** Look-ups under way, by name: what a request given up before it was sent may have waited for. */
  const resolving = new Map<string, number>();
  /** The requests (their signals) handed to a connection to be written before they were given up. */
  const handedOver = new WeakSet<object>();
  const closing = new Set<Promise<void>>();
  let closed: Promise<void> | undefined;
  const dispatcherFor = (policy: EgressPolicy): Dispatcher => {
    if (pool?.policy === policy) return pool.dispatcher;
    if (pool) {
      const done: Promise<void> = pool.agent.close().finally(() => closing.delete(done));
      closing.add(done);
    }
    const judgedUnder = (): readonly EgressPolicy[] => {
      const now = policyNow();
      return now === policy ? [policy] : [policy, now];
    };
    const agent = new Agent({ connect: guardedConnector(judgedUnder, resolve, connectTimeoutMs, resolving) });
    pool = { policy, agent, dispatcher: agent.compose(noteHandedOver(handedOver)) };
    return pool.dispatcher;
  };
  const maxBytes = options.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES;
  const refuse = (refusal: EgressRefusal, url: string) => {
    options.onRefusal?.(refusal, url);
    return err(refusal);
  };

  async function send(req: EgressRequest): Promise<Result<EgressResponse, EgressRefusal>> {
    const policy = policyNow();
    const verdict = checkUrl(req.url, policy.allowlist);
    if (!verdict.ok) return refuse(verdict.refusal, req.url);
    const timeoutMs = Math.max(1, Math.ceil(req.timeoutMs));
    // One abort and one timer: AbortSignal.timeout plus AbortSignal.any cost more than the rest of
    // the guard together (bench/README.md, egress.js).
    const signal = new Abort();
    // undici heeds an abort only once the request has a connection (nodejs/undici#386): a slow
    // look-up or connect held the call, and a judge call's concurrency slot, until the connect
    // timeout, long after its deadline. The call is given up at the abort whatever undici does.
    let gaveUp: () => void = () => {};
    const givenUp = new Promise<undefined>((settle) => {
      gaveUp = () => settle(undefined);
    });
    signal.once("abort", () => gaveUp());
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      signal.abort();
    }, timeoutMs);
    const onAbort = () => signal.abort();
    // A signal aborted before the call (a budget that ran out while the request was built) never
    // fires its event: the request must not go out at all.
    if (req.signal?.aborted) signal.abort();
    else req.signal?.addEventListener("abort", onAbort, { once: true });
    try {
      // Already aborted, undici would still connect (and only then abort): no request at all.
      const pending = signal.aborted
        ? givenUp
        : // The dispatcher's own request(), given origin and path: undici's request(url, options)
          // spreads the options into a new object with three more properties, which on Node 20
          // outlives young-generation collections (bench/HISTORY.md).
          dispatcherFor(policy).request({
            origin: verdict.url.origin,
            path: `${verdict.url.pathname}${verdict.url.search}`,
            method: req.method,
            headers: outboundHeaders(req.headers),
            body: req.body ?? null,
            signal,
            headersTimeout: timeoutMs,
            bodyTimeout: timeoutMs,
          });
      const res = await Promise.race([pending, givenUp]);
      if (res === undefined) {
        // What undici settles later is dropped: a late answer's body is discarded unread, its
        // abort error heard as any dropped body's is.
        pending.then(
          (late) => late && drop(late.body),
          () => {},
        );
        const host = verdict.url.hostname;
        /** Marks a refusal its own time limit made (timedOut), or one its caller made as its client left. */
        const ranOut = timedOut ? ({ timedOut: true } as const) : leftBy(req.signal);
        // Whether it was sent is known per request (undici hands it to a connection, or not yet).
        // What it waited for is not: a look-up of its name under way says DNS, else the connect.
        const refusal: EgressRefusal = handedOver.has(signal)
          ? timedOut
            ? describeFailure(undefined, verdict.url, true, timeoutMs, true, connectTimeoutMs)
            : givenUpAfterSending(verdict.url, req.signal)
          : (resolving.get(host) ?? 0) > 0
            ? {
                // Nothing was sent: the name had no answer yet (a call refused at "dns" is not
                // counted against a team's model budget).
                code: "EGRESS_DNS_FAILED",
                stage: "dns",
                reason: timedOut
                  ? `${host} was not resolved within ${timeoutMs} ms`
                  : `${host} was not resolved yet when the call was given up`,
                ...ranOut,
              }
            : {
                // Nor was anything sent on a connection not yet made.
                code: "EGRESS_TIMEOUT",
                stage: "connect",
                reason: timedOut
                  ? `${describeTarget(verdict.url)} could not be connected to within ${timeoutMs} ms`
                  : `${describeTarget(verdict.url)} was not connected to yet when the call was given up`,
                ...ranOut,
              };
        return refuse(refusal, req.url);
      }
      if (res.statusCode >= 300 && res.statusCode < 400) {
        // Not read, so not waited for: a server that holds the body after its redirect was
        // answered as a timeout, after the whole wait.
        drop(res.body);
        const { location } = res.headers;
        const first = Array.isArray(location) ? location[0] : location;
        return refuse(redirectRefusal(verdict.url, res.statusCode, first), req.url);
      }
      if (req.readsBodyOf?.(res.statusCode) === false) {
        drop(res.body);
        return ok({ status: res.statusCode, headers: flatHeaders(res.headers), body: "" });
      }
      const coded = decoded(res.body, res.headers);
      let read: Awaited<ReturnType<typeof readCapped>>;
      try {
        read = await readCapped(coded?.body ?? res.body, maxBytes, req.truncateResponse === true);
      } catch (e) {
        const failed = coded?.failed();
        if (failed === undefined) throw e;
        // The answer came, whole or not, in a coding it does not decode from: asked again, the
        // same server answers the same way.
        res.body.destroy();
        return refuse(
          undecodedRefusal(verdict.url, res.statusCode, failed.coding, failed.error, failed.header),
          req.url,
        );
      }
      if (read === undefined) {
        return refuse(tooLargeRefusal(verdict.url, maxBytes), req.url);
      }
      const headers = flatHeaders(res.headers);
      if (coded) {
        delete headers["content-encoding"];
        delete headers["transfer-encoding"];
        delete headers["content-length"];
      }
      // The status came: a body that broke off after it is kept as far as it came (a sink that
      // answered 200 got the message, whatever its body then did).
      const failed = read.broke === undefined ? undefined : coded?.failed();
      const cutShort =
        failed === undefined
          ? cutShortReason(read.broke, timedOut, timeoutMs)
          : undecodedBody(failed.coding, failed.error, failed.header);
      if (cutShort !== undefined) res.body.destroy();
      return ok({
        status: res.statusCode,
        headers,
        body: read.text,
        ...(cutShort !== undefined && { cutShort }),
      });
    } catch (e) {
      // Given up by its caller while its answer was arriving (a model that trickles its body past
      // the judge call's deadline): said as before its headers, not as a failed connection.
      if (!timedOut && req.signal?.aborted === true && handedOver.has(signal))
        return refuse(givenUpAfterSending(verdict.url, req.signal), req.url);
      return refuse(
        describeFailure(e, verdict.url, timedOut, timeoutMs, handedOver.has(signal), connectTimeoutMs),
        req.url,
      );
    } finally {
      clearTimeout(timer);
      req.signal?.removeEventListener("abort", onAbort);
    }
  }

  async function judge(
    raw: string,
  ): Promise<Result<{ url: URL; addresses: readonly string[] }, EgressRefusal>> {
    const policy = policyNow();
    const verdict = checkUrl(raw, policy.allowlist);
    if (!verdict.ok) return err(verdict.refusal);
    let addresses: string[];
    // The name the connection looks up (guardedConnector): the URL's, trailing dots and all
    // (`vm.` is another name than `vm` to a resolver with search domains).
    const name = verdict.url.hostname;
    if (isIP(verdict.host)) {
      addresses = [verdict.host];
    } else {
      try {
        addresses = (await resolve(name)).map((a) => a.address);
      } catch (e) {
        return err(dnsFailure(name, e));
      }
    }
    const refusal = judgeAnswers(isIP(verdict.host) ? verdict.host : name, addresses, policy.addresses);
    return refusal ? err(refusal) : ok({ url: verdict.url, addresses });
  }

  return {
    send,
    judge,
    close() {
      closed ??= Promise.all([pool?.agent.close(), ...closing]).then(() => {});
      return closed;
    },
  };
}

/**
 * An answer's body dropped unread, its connection closed unless all of it had come. Destroyed
 * unread, the body emits an error (its request aborted) on the next turn: with no listener, an
 * uncaught exception that ended the process at a team server's 401.
 */
function drop(body: Dispatcher.ResponseData["body"]): void {
  body.on("error", () => {}).destroy();
}

/**
 * A request's abort as undici takes it (an EventEmitter with `aborted` and `reason`, as
 * undici's request() documents), in place of an AbortController: on Node 20 every AbortSignal
 * outlives young-generation collections, and with it everything its listeners hold (bench/HISTORY.md).
 * Aborted with the reason AbortController.abort() gives.
 */
class Abort extends EventEmitter {
  aborted = false;
  reason: unknown;
  abort(): void {
    if (this.aborted) return;
    this.aborted = true;
    this.reason = new DOMException("This operation was aborted", "AbortError");
    this.emit("abort");
  }
}

/** The first refusal of `addresses` under any of `policies`, or undefined when all allow them. */
function judgeUnder(
  policies: readonly EgressPolicy[],
  hostname: string,
  addresses: readonly string[],
): EgressRefusal | undefined {
  for (const policy of policies) {
    const refusal = judgeAnswers(hostname, addresses, policy.addresses);
    if (refusal) return refusal;
  }
  return undefined;
}

function guardedConnector(
  policies: () => readonly EgressPolicy[],
  resolve: Resolver,
  timeout: number,
  resolving: Map<string, number>,
): buildConnector.connector {
  const lookup: LookupFunction = (hostname, lookupOptions, callback) => {
    count(resolving, hostname, 1);
    const done = () => count(resolving, hostname, -1);
    resolve(hostname).then(
      (answers) => {
        done();
        const refusal = judgeUnder(
          policies(),
          hostname,
          answers.map((a) => a.address),
        );
        if (refusal) return callback(new EgressError(refusal), "", 4);
        // Only the addresses checked above are handed back: this is the pin.
        if (lookupOptions.all)
          return callback(
            null,
            answers.map((a) => ({ address: a.address, family: a.family })),
          );
        const first = answers[0] as ResolvedAddress;
        return callback(null, first.address, first.family);
      },
      (e) => {
        done();
        callback(new EgressError(dnsFailure(hostname, e)), "", 4);
      },
    );
  };
  const connect = buildConnector({ lookup, timeout });
  return (opts, callback) => {
    const host = opts.hostname.replace(/^\[|\]$/g, "");
    if (isIP(host)) {
      for (const policy of policies()) {
        const verdict = classifyAddress(host, policy.addresses);
        if (verdict.allowed) continue;
        return callback(new EgressError(addressRefusal(verdict, policy.addresses)), null);
      }
    }
    return connect(opts, callback);
  };
}

/**
 * Notes each request as it is handed to a connection to be written (undici's onConnect), unless
 * it was given up before: undici then aborts it unsent. A request given up before this was not
 * sent, whatever other requests to its host were doing.
 */
function noteHandedOver(handedOver: WeakSet<object>): Dispatcher.DispatcherComposeInterceptor {
  return (dispatch) => (opts, handler) => {
    // request() hands its options on as they were given, our signal among them.
    const signal = (opts as { readonly signal?: { readonly aborted: boolean } }).signal;
    if (!signal) return dispatch(opts, handler);
    // undici's own request handler, seen through its legacy interface (no header conversions).
    return dispatch(opts, {
      onConnect(abort) {
        if (!signal.aborted) handedOver.add(signal);
        handler.onConnect?.(abort);
      },
      onResponseStarted: () => handler.onResponseStarted?.(),
      onHeaders: (status, headers, resume, text) =>
        handler.onHeaders?.(status, headers, resume, text) ?? true,
      onUpgrade: (status, headers, socket) => handler.onUpgrade?.(status, headers, socket),
      onData: (chunk) => handler.onData?.(chunk) ?? true,
      onComplete: (trailers) => handler.onComplete?.(trailers),
      onError: (e) => handler.onError?.(e),
    });
  };
}

/** Counts the look-ups under way per name. */
function count(pending: Map<string, number>, name: string, by: 1 | -1): void {
  const left = (pending.get(name) ?? 0) + by;
  if (left > 0) pending.set(name, left);
  else pending.delete(name);
}

function dnsFailure(host: string, e: unknown): EgressRefusal {
  const code = (e as { code?: string })?.code ?? "";
  const why = errorMessage(e);
  return {
    code: "EGRESS_DNS_FAILED",
    stage: "dns",
    reason: `${host} could not be resolved (${code || why})`,
  };
}

/**
 * A request sent, then given up by its caller's own signal (a deadline it keeps, a gateway
 * stopping, its hook's client gone).
 */
function givenUpAfterSending(url: URL, signal: AbortSignal | undefined): EgressRefusal {
  return {
    code: "EGRESS_TIMEOUT",
    stage: "response",
    reason: `${describeTarget(url)} was given up before it answered`,
    ...leftBy(signal),
  };
}

function describeFailure(
  e: unknown,
  url: URL,
  timedOut: boolean,
  timeoutMs: number,
  handedOver: boolean,
  connectTimeoutMs: number,
): EgressRefusal {
  for (let cause: unknown = e; cause; cause = (cause as { cause?: unknown }).cause) {
    if (cause instanceof EgressError) return cause.refusal;
  }
  // A string code (`ECONNRESET`, `UND_ERR_SOCKET`), never a DOMException's legacy number.
  const code = (e as { code?: unknown })?.code;
  const name = typeof code === "string" ? code : ((e as { name?: string })?.name ?? "");
  // "connect": never handed to a connection (none was made, or undici refused the request
  // itself), so nothing was sent; "response": it was, or may have been.
  const stage = handedOver ? "response" : "connect";
  // undici's own connect time limit ran out before the call's (a host that drops packets, a TLS
  // handshake never answered): said as what it was, not as the call's limit, which had time left.
  if (!timedOut && name === "UND_ERR_CONNECT_TIMEOUT") {
    return {
      code: "EGRESS_TIMEOUT",
      stage: "connect",
      reason: `${describeTarget(url)} could not be connected to within ${connectTimeoutMs} ms (the connect time limit)`,
    };
  }
  // Its own limit, or undici's headers and body time limits, which are set to it.
  if (timedOut || /Timeout/i.test(name)) {
    return {
      code: "EGRESS_TIMEOUT",
      stage,
      reason: `${describeTarget(url)} did not answer within ${timeoutMs} ms`,
      timedOut: true,
    };
  }
  // undici ends the connection at an interim 100 Continue (its client-h1 onHeadersComplete; the
  // other "bad response" comes with no request in flight). hookgate sends no Expect, so the 100
  // was not asked for: RFC 9110 §15.2 lets a client ignore it, and node:http (Claude Code's
  // http hook) does, but undici has no setting for it. Said as what it was, for the team to fix.
  if (name === "UND_ERR_SOCKET" && errorMessage(e) === "bad response") {
    return {
      code: "EGRESS_CONNECT_FAILED",
      stage,
      reason: `${describeTarget(url)} answered 100 Continue, which was not asked for (no Expect header was sent), before its answer: the HTTP client on Node refuses it, so the server must send its answer alone`,
    };
  }
  // A failed handshake said with what to change (an untrusted certificate, one for other names).
  const tls = describeTlsFailure(e, url, POLICY_URL);
  if (tls !== undefined) {
    return {
      code: "EGRESS_CONNECT_FAILED",
      stage,
      reason: `${describeTarget(url)} failed: ${tls.error}${tls.fix === undefined ? "" : `: ${tls.fix}`}`,
    };
  }
  // Each address of a name that has several fails on its own: errorMessage joins them.
  const why = errorMessage(e);
  return {
    code: "EGRESS_CONNECT_FAILED",
    stage,
    reason: `${describeTarget(url)} failed: ${name ? `${name}: ` : ""}${why}`,
  };
}

/** How a TLS failure of a policy's URL (a forward, a sink, a model) is fixed. */
const POLICY_URL: TlsFixPlace = {
  urlIn: "the policy's URL",
  whose: "the server's",
  startedIn: "the environment hookgate starts in (a Lambda function's variables too)",
  plainHttpWhy: "",
};

/**
 * The content codings Workers' fetch decodes (RFC 9110 §8.4.1). hookgate sends no
 * Accept-Encoding, which RFC 9110 §12.5.3 reads as any coding being acceptable, so a server or a
 * proxy may compress its answer all the same. `deflate` is the zlib format. Flushed as Node's
 * fetch (undici) and curl flush: an empty body (a 204) reads as empty, not "unexpected end of
 * file", and a gzip stream cut short as far as it goes.
 */
const ZLIB_FLUSH = { flush: zlibConstants.Z_SYNC_FLUSH, finishFlush: zlibConstants.Z_SYNC_FLUSH };
const BROTLI_FLUSH = {
  flush: zlibConstants.BROTLI_OPERATION_FLUSH,
  finishFlush: zlibConstants.BROTLI_OPERATION_FLUSH,
};
const DECODERS: ReadonlyMap<string, () => NodeJS.ReadWriteStream> = new Map([
  ["gzip", () => createGunzip(ZLIB_FLUSH)],
  ["x-gzip", () => createGunzip(ZLIB_FLUSH)],
  ["deflate", () => createInflate(ZLIB_FLUSH)],
  ["br", () => createBrotliDecompress(BROTLI_FLUSH)],
]);

/**
 * The most codings an answer is decoded from; one that names more is read as it came. Each is
 * decoded whole, and a header of a thousand held a client for seconds. No server compresses an
 * answer four times.
 */
const MOST_CODINGS = 3;

/** A coding an answer names, and the header that names it. */
interface Coding {
  readonly coding: string;
  readonly header: CodingHeader;
}

/** A body that came in a content coding, and which of its decoders, if any, found it broken. */
interface Decoding {
  readonly body: Readable;
  /** The coding whose decoder failed first, and why; undefined while none has. */
  failed(): (Coding & { readonly error: unknown }) | undefined;
}

/**
 * The body decoded from its content and transfer codings, last applied first; undefined when it
 * has none, more than MOST_CODINGS, or one no decoder knows: it is then read as it came. A body
 * that does not decode fails its read, and `failed` names the coding; one that broke off on the
 * wire fails it too, with `failed` still undefined. The size cap applies to the decoded bytes.
 */
function decoded(body: Readable, headers: Dispatcher.ResponseData["headers"]): Decoding | undefined {
  // A transfer coding is applied after the content codings. hookgate sends no TE header, so a
  // server should send no other than `chunked` (RFC 9112 §7.4): one that sends `gzip` all the
  // same is decoded as a content coding is, where its answer reached a rule as gzip's bytes.
  const codings = (["Content-Encoding", "Transfer-Encoding"] as const)
    .flatMap((header) =>
      codingsOf(headers[header.toLowerCase()], header).map((coding): Coding => ({ coding, header })),
    )
    .reverse();
  // A Map, not an object: a coding the server names `constructor` is one no decoder knows.
  const makers = codings.map((c) => DECODERS.get(c.coding));
  if (makers.length === 0 || makers.length > MOST_CODINGS || makers.some((m) => m === undefined))
    return undefined;
  // The pipeline hands a stream's error on to the others: the first to see it is where it began.
  // The body's own listener comes before the pipeline's, so its errors are known as the wire's.
  const seen = new WeakSet<object>();
  let failure: (Coding & { readonly error: unknown }) | undefined;
  const note = (coding: Coding | undefined) => (e: unknown) => {
    const key = typeof e === "object" && e !== null ? e : {};
    if (!seen.has(key) && coding !== undefined) failure ??= { ...coding, error: e };
    seen.add(key);
  };
  body.on("error", note(undefined));
  const decoders = (makers as (() => NodeJS.ReadWriteStream)[]).map((make, i) => {
    const decoder = make();
    decoder.on("error", note(codings[i]));
    return decoder;
  });
  return {
    body: pipeline([body, ...decoders], () => {}) as unknown as Readable,
    failed: () => failure,
  };
}

/**
 * The body as text, or undefined past `maxBytes` (its first `maxBytes` when `truncate`). Decoded
 * as fetch's text() decodes, a leading UTF-8 BOM dropped (JSON.parse refuses one). When `truncate`,
 * a read that fails (the call's time limit, a dropped connection, a coding that does not decode)
 * gives what came before it, with the failure as `broke`; otherwise it throws.
 */
async function readCapped(
  body: AsyncIterable<Uint8Array> & { destroy(): unknown },
  maxBytes: number,
  truncate: boolean,
): Promise<{ readonly text: string; readonly broke?: unknown } | undefined> {
  const chunks: Uint8Array[] = [];
  let size = 0;
  let broke: unknown;
  try {
    for await (const chunk of body) {
      size += chunk.byteLength;
      if (size > maxBytes) {
        body.destroy();
        if (!truncate) return undefined;
        chunks.push(chunk.subarray(0, chunk.byteLength - (size - maxBytes)));
        break;
      }
      chunks.push(chunk);
    }
  } catch (e) {
    if (!truncate) throw e;
    body.destroy();
    broke = e ?? new Error("the body broke off");
  }
  const text = new TextDecoder().decode(Buffer.concat(chunks));
  return broke === undefined ? { text } : { text, broke };
}

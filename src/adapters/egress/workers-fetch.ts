/**
 * Egress on Cloudflare Workers, where no socket hook exists: the same URL and literal-address
 * rules as Node, then a DNS-over-HTTPS look-up of the name judged by the same address rules,
 * then `fetch` with `redirect: "manual"` (any 3xx is refused). This cannot pin the connection:
 * Cloudflare's own resolver answers the `fetch`, so a name that rebinds between the check and the
 * request (TTL 0) is not caught here. See README.md beside this file for the residual risk.
 */
import { classifyAddress, isIpLiteral } from "../../core/egress/address.js";
import {
  addressRefusal,
  DEFAULT_EGRESS_POLICY,
  type EgressPolicy,
  judgeAnswers,
  outboundHeaders,
} from "../../core/egress/policy.js";
import {
  cutShortReason,
  type EgressRefusal,
  redirectRefusal,
  tooLargeRefusal,
  undecodedBody,
  undecodedRefusal,
} from "../../core/egress/refusal.js";
import { describeRawTarget, describeTarget } from "../../core/egress/target.js";
import { checkUrl } from "../../core/egress/url.js";
import { errorMessage } from "../../core/errors.js";
import type { Egress, EgressRequest, EgressResponse } from "../../core/ports.js";
import { err, ok, type Result } from "../../core/result.js";

/**
 * Resolves a name to every A and AAAA answer, or throws with a reason; gives up when `signal`
 * aborts (the send's own time limit covers its look-up too).
 */
export type DohResolver = (hostname: string, signal?: AbortSignal) => Promise<readonly string[]>;

export interface DohOptions {
  /** A DoH JSON endpoint (default Cloudflare's). */
  readonly endpoint?: string;
  readonly fetch?: typeof fetch;
  readonly now?: () => number;
  /** Longest time an answer is reused, whatever its TTL (default 60 s). */
  readonly maxCacheSeconds?: number;
}

interface DohAnswer {
  readonly type: number;
  readonly data: string;
  readonly TTL?: number;
}

const A = 1;
const AAAA = 28;

/** DNS response codes a DoH JSON answer's `Status` may carry besides NOERROR and NXDOMAIN (RFC 1035). */
const RCODES: Readonly<Record<number, string>> = {
  1: "FORMERR, DNS status 1: the resolver could not read the query",
  2: "SERVFAIL, DNS status 2: the name's DNS servers failed to answer",
  4: "NOTIMP, DNS status 4",
  5: "REFUSED, DNS status 5: the resolver refused the query",
};

/**
 * NXDOMAIN is about the name, whatever the query's type (RFC 8020), so it is said without one:
 * a failed look-up, as Node's resolver fails it (ENOTFOUND), not a name with no address records.
 */
const NXDOMAIN = "NXDOMAIN, DNS status 3: the name does not exist";

/**
 * A DoH JSON answer as the JSON API gives one: a numeric `Status`, and `Answer`, when there is
 * one, a list of records each with a numeric `type`, an address record's `data` a string. Any
 * other JSON (`[]`, `{}`, a record that is `null`) is no answer at all, said as the endpoint's
 * fault, never read as a name with no address or thrown as a TypeError.
 */
function isDnsJson(body: unknown): body is { Status: number; Answer?: DohAnswer[] } {
  if (typeof body !== "object" || body === null) return false;
  const { Status, Answer } = body as { Status?: unknown; Answer?: unknown };
  if (typeof Status !== "number") return false;
  if (Answer === undefined) return true;
  return (
    Array.isArray(Answer) &&
    Answer.every((record: unknown) => {
      if (typeof record !== "object" || record === null) return false;
      const { type, data } = record as { type?: unknown; data?: unknown };
      return typeof type === "number" && ((type !== A && type !== AAAA) || typeof data === "string");
    })
  );
}

/** DNS-over-HTTPS with the JSON API (`application/dns-json`), answers cached for min(TTL, 60 s). */
export function createDohResolver(options: DohOptions = {}): DohResolver {
  const endpoint = options.endpoint ?? "https://cloudflare-dns.com/dns-query";
  const doFetch = options.fetch ?? fetch;
  const now = options.now ?? Date.now;
  const maxCache = (options.maxCacheSeconds ?? 60) * 1000;
  const cache = new Map<string, { addresses: string[]; until: number }>();

  const query = async (name: string, type: "A" | "AAAA", signal?: AbortSignal): Promise<DohAnswer[]> => {
    // The question is added to the endpoint's own query, if it has one (`?ct=application/dns-json`).
    const url = URL.canParse(endpoint) ? new URL(endpoint) : undefined;
    // Only the Worker's HOOKGATE_DOH_ENDPOINT sets another endpoint: the failure names it.
    if (url === undefined)
      throw new Error(
        `the DoH endpoint ${JSON.stringify(endpoint)} is not a URL (set HOOKGATE_DOH_ENDPOINT to one such as https://cloudflare-dns.com/dns-query)`,
      );
    url.searchParams.set("name", name);
    url.searchParams.set("type", type);
    const res = await doFetch(url.href, {
      headers: { accept: "application/dns-json" },
      redirect: "manual",
      ...(signal ? { signal } : {}),
    });
    const where = `the DoH endpoint ${describeRawTarget(endpoint)}`;
    if (res.status !== 200) {
      const jsonApi =
        res.status >= 400 && res.status < 500 ? "; it must serve the JSON API (application/dns-json)" : "";
      throw new Error(`${where} answered HTTP ${res.status} to its ${type} query${jsonApi}`);
    }
    let body: unknown;
    try {
      body = await res.json();
    } catch (e) {
      // Only a body that is not JSON is the endpoint's fault; a read cut short is said as it was.
      if (!(e instanceof SyntaxError)) throw e;
      body = null;
    }
    if (!isDnsJson(body))
      throw new Error(`${where} answered its ${type} query with no DNS JSON (application/dns-json)`);
    if (body.Status === 3) throw new Error(NXDOMAIN);
    if (body.Status !== 0) {
      const rcode = RCODES[body.Status] ?? `DNS status ${body.Status}`;
      throw new Error(`its ${type} query was answered ${rcode}`);
    }
    return body.Answer ?? [];
  };

  const lookUp = async (hostname: string, signal?: AbortSignal): Promise<string[]> => {
    const answers = (
      await Promise.all([query(hostname, "A", signal), query(hostname, "AAAA", signal)])
    ).flat();
    const records = answers.filter((a) => a.type === A || a.type === AAAA);
    const ttl = Math.min(maxCache, ...records.map((a) => (a.TTL ?? 0) * 1000));
    const addresses = records.map((a) => a.data);
    // An empty answer is not kept: a record added a moment later is used at once.
    if (ttl > 0 && addresses.length > 0) cache.set(hostname, { addresses, until: now() + ttl });
    return addresses;
  };

  /**
   * The look-ups under way, by name: the prompt and forward rules of one event run in parallel,
   * and each of them looking its host up again cost two subrequests of the Worker's 50 (Free).
   */
  const pending = new Map<string, { readonly addresses: Promise<string[]>; readonly signal?: AbortSignal }>();

  return async function resolve(hostname, signal) {
    const cached = cache.get(hostname);
    if (cached && cached.until > now()) return cached.addresses;
    const shared = pending.get(hostname);
    if (shared) {
      try {
        return await untilAborted(shared.addresses, signal);
      } catch (e) {
        // Its first caller gave up (its own time limit): look it up for this one.
        if (signal?.aborted || !shared.signal?.aborted) throw e;
        if (pending.get(hostname) === shared) pending.delete(hostname);
        return resolve(hostname, signal);
      }
    }
    const addresses = lookUp(hostname, signal);
    const entry = { addresses, ...(signal ? { signal } : {}) };
    pending.set(hostname, entry);
    try {
      return await addresses;
    } finally {
      if (pending.get(hostname) === entry) pending.delete(hostname);
    }
  };
}

/** `promise`, or a rejection with the signal's reason as soon as `signal` aborts. */
function untilAborted<T>(promise: Promise<T>, signal?: AbortSignal): Promise<T> {
  if (!signal) return promise;
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener("abort", onAbort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener("abort", onAbort));
  });
}

export interface WorkersEgressOptions {
  /** Read on every request. Undefined (a policy without an `egress` section): DEFAULT_EGRESS_POLICY. */
  readonly policy: () => EgressPolicy | undefined;
  readonly resolve: DohResolver;
  readonly fetch?: typeof fetch;
  readonly maxResponseBytes?: number;
  readonly onRefusal?: (refusal: EgressRefusal, url: string) => void;
}

export function createWorkersEgress(options: WorkersEgressOptions): { send: Egress } {
  const doFetch = options.fetch ?? fetch;
  const maxBytes = options.maxResponseBytes ?? 1024 * 1024;
  const refuse = (refusal: EgressRefusal, url: string) => {
    options.onRefusal?.(refusal, url);
    return err(refusal);
  };

  async function send(req: EgressRequest): Promise<Result<EgressResponse, EgressRefusal>> {
    const policy = options.policy() ?? DEFAULT_EGRESS_POLICY;
    const verdict = checkUrl(req.url, policy.allowlist);
    if (!verdict.ok) return refuse(verdict.refusal, req.url);
    // One time limit for the DoH look-up and the request together.
    const timeoutMs = Math.max(1, Math.ceil(req.timeoutMs));
    const timeout = AbortSignal.timeout(timeoutMs);
    const signal = req.signal ? AbortSignal.any([req.signal, timeout]) : timeout;
    // Given up by its caller (a judge call's deadline, `serve` stopping), not by its own limit: said
    // so, as the Node module says it, not as a failure of the name or the connection.
    const givenUp = () => !timeout.aborted && req.signal?.aborted === true;
    const precheck = await judgeHost(verdict.host, policy, options.resolve, signal);
    if (precheck) {
      const unresolved = precheck.code === "EGRESS_DNS_FAILED";
      return refuse(
        timeout.aborted && unresolved
          ? {
              code: "EGRESS_TIMEOUT",
              stage: "dns",
              reason: `${verdict.host} was not resolved over DoH within ${timeoutMs} ms`,
              timedOut: true,
            }
          : givenUp() && unresolved
            ? {
                code: "EGRESS_DNS_FAILED",
                stage: "dns",
                reason: `${verdict.host} was not resolved over DoH yet when the call was given up`,
              }
            : precheck,
        req.url,
      );
    }
    try {
      const res = await doFetch(verdict.url.href, {
        method: req.method,
        headers: outboundHeaders(req.headers),
        body: req.body ?? null,
        redirect: "manual",
        signal,
      });
      if (res.status >= 300 && res.status < 400) {
        await res.body?.cancel();
        const location = res.headers.get("location") ?? undefined;
        return refuse(redirectRefusal(verdict.url, res.status, location), req.url);
      }
      if (req.readsBodyOf?.(res.status) === false) {
        await res.body?.cancel();
        return ok({ status: res.status, headers: Object.fromEntries(res.headers), body: "" });
      }
      let read: Awaited<ReturnType<typeof readCapped>>;
      try {
        read = await readCapped(res, maxBytes, req.truncateResponse === true);
      } catch (e) {
        const coding = undecodedCoding(res, e);
        if (coding === undefined) throw e;
        // The answer came in a coding fetch could not decode: asked again, the same server
        // answers the same way.
        return refuse(undecodedRefusal(verdict.url, res.status, coding, e), req.url);
      }
      if (read === undefined) {
        return refuse(tooLargeRefusal(verdict.url, maxBytes), req.url);
      }
      // The status came: a body that broke off after it is kept as far as it came (a sink that
      // answered 200 got the message, whatever its body then did).
      const coding = read.broke === undefined ? undefined : undecodedCoding(res, read.broke);
      const cutShort =
        coding === undefined
          ? cutShortReason(read.broke, timeout.aborted, timeoutMs)
          : undecodedBody(coding, read.broke);
      return ok({
        status: res.status,
        headers: Object.fromEntries(res.headers),
        body: read.text,
        ...(cutShort !== undefined && { cutShort }),
      });
    } catch (e) {
      const why = errorMessage(e);
      return refuse(
        timeout.aborted
          ? {
              code: "EGRESS_TIMEOUT",
              stage: "response",
              reason: `${describeTarget(verdict.url)} did not answer within ${timeoutMs} ms`,
              timedOut: true,
            }
          : givenUp()
            ? {
                code: "EGRESS_TIMEOUT",
                stage: "response",
                reason: `${describeTarget(verdict.url)} was given up before it answered`,
              }
            : {
                // fetch does not say whether anything was sent: "response", never "connect".
                code: "EGRESS_CONNECT_FAILED",
                stage: "response",
                reason: `${describeTarget(verdict.url)} failed: ${why}`,
              },
        req.url,
      );
    }
  }

  return { send };
}

async function judgeHost(
  host: string,
  policy: EgressPolicy,
  resolve: DohResolver,
  signal: AbortSignal,
): Promise<EgressRefusal | undefined> {
  if (isIpLiteral(host)) {
    const verdict = classifyAddress(host, policy.addresses);
    return verdict.allowed ? undefined : addressRefusal(verdict, policy.addresses);
  }
  let answers: readonly string[];
  try {
    answers = await resolve(host, signal);
  } catch (e) {
    const why = errorMessage(e);
    return {
      code: "EGRESS_DNS_FAILED",
      stage: "dns",
      reason: `${host} could not be resolved over DoH (${why})`,
    };
  }
  return judgeAnswers(host, answers, policy.addresses);
}

/**
 * The content coding `fetch` failed to decode the body from, when `e` is that failure (workerd's
 * TypeError "Gzip decompression failed."), as its Content-Encoding names it; else undefined (the
 * connection dropped, the time limit ran out).
 */
function undecodedCoding(res: Response, e: unknown): string | undefined {
  const coding = res.headers.get("content-encoding")?.trim();
  if (!coding || !(e instanceof TypeError) || !/decompression failed/i.test(e.message)) return undefined;
  return coding;
}

/**
 * The body as text, or undefined past `maxBytes` (its first `maxBytes` when `truncate`). When
 * `truncate`, a read that fails (the call's time limit, a dropped connection) gives what came
 * before it, with the failure as `broke`; otherwise it throws.
 */
async function readCapped(
  res: Response,
  maxBytes: number,
  truncate: boolean,
): Promise<{ readonly text: string; readonly broke?: unknown } | undefined> {
  if (!res.body) return { text: "" };
  const reader = res.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  let broke: unknown;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      size += value.byteLength;
      if (size > maxBytes) {
        await reader.cancel();
        if (!truncate) return undefined;
        chunks.push(value.subarray(0, value.byteLength - (size - maxBytes)));
        size = maxBytes;
        break;
      }
      chunks.push(value);
    }
  } catch (e) {
    if (!truncate) throw e;
    reader.cancel().catch(() => {});
    broke = e ?? new Error("the body broke off");
  }
  const bytes = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.byteLength;
  }
  const text = new TextDecoder().decode(bytes);
  return broke === undefined ? { text } : { text, broke };
}

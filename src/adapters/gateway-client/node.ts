/**
 * The CLI's HTTP client for talking to a hookgate gateway (`hookgate send`, `hookgate doctor`).
 * This is the client side: it calls the gateway URL the user typed, as an agent's hook would,
 * so it is not an outbound call of the gateway and does not go through the egress guard.
 * Never follows a redirect (no client does, clients.md §2.1 and §9), bounds time and size, and
 * turns every failure into a value with a sentence a person can act on.
 */
import { type ClientRequest, request as httpRequest } from "node:http";
import { request as httpsRequest } from "node:https";
import { codingsOf, flatHeaders, undecodedAs } from "../../core/answer-headers.js";
import { errorMessage } from "../../core/errors.js";
import { describeTlsFailure, type TlsFixPlace } from "../../core/tls-failure.js";

export interface GatewayRequest {
  readonly method: "GET" | "POST";
  readonly url: string;
  readonly headers?: Readonly<Record<string, string>>;
  readonly body?: string | Uint8Array;
  /** The whole exchange, connect to last byte. */
  readonly timeoutMs: number;
  /** Bodies larger than this are a failure (default 4 MiB). */
  readonly maxBytes?: number;
  /** A forward proxy's URL to go through (proxied.ts), as the agent's http hooks to the gateway go. */
  readonly proxy?: string;
  /** The variable `proxy` came from (agent-proxy.ts), which a fix to the proxy's URL names. */
  readonly proxyVariable?: string;
  /** Whose reading of a compressed answer to take (default axios, Claude Code's). */
  readonly reader?: AnswerReader;
}

/**
 * The http client whose reading of an answer's content codings `send` and `doctor` take, as the
 * agent's hook would read it (that is what `send` shows): axios, Claude Code's (clients.md §2.1),
 * undici's fetch, deepcode's (§9), or curl without --compressed, deepagents' hook (init's command).
 */
export type AnswerReader = "axios" | "fetch" | "curl";

/** The reader of a route's client: Claude Code's for a route that names none. */
export function answerReader(dialect: string | undefined): AnswerReader {
  if (dialect === "deepcode") return "fetch";
  return dialect?.startsWith("deepagents") ? "curl" : "axios";
}

const READER_NAME: Record<AnswerReader, string> = {
  axios: "Claude Code's http client (axios)",
  fetch: "deepcode's http client (undici's fetch)",
  curl: "deepagents' hook (curl, run without --compressed)",
};

/** undici's fetch fails an answer that names more content codings than this. */
const FETCH_MAX_CODINGS = 5;

export const CODING_FIX = "check the server, or a proxy in front of the gateway, that compresses its answers";

/**
 * Why an answer that is no JSON object may be so: a coding the agent's client left on it, its
 * Content-Encoding as `decodedAnswer` kept it (one the reader does not decode), or a
 * Transfer-Encoding other than chunked, which Node's http client and undici read to the
 * connection's end and hand on as it came, as curl does without --tr-encoding.
 */
export function leftCoded(
  headers: Readonly<Record<string, string>>,
  reader: AnswerReader,
): string | undefined {
  const transfer = codingsOf(headers["transfer-encoding"], "Transfer-Encoding");
  if (transfer.length > 0)
    return `it comes in Transfer-Encoding ${transfer.join(", ")}, which no agent's http client decodes`;
  const content = headers["content-encoding"];
  return codingsOf(content, "Content-Encoding").length > 0
    ? `it comes in Content-Encoding ${content}, which ${READER_NAME[reader]} does not decode`
    : undefined;
}

export interface GatewayResponse {
  readonly status: number;
  /** Lower-case header names. */
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
}

export type GatewayResult =
  | { readonly ok: true; readonly response: GatewayResponse }
  | {
      readonly ok: false;
      readonly error: string;
      /** What to change, where the failure says more than "nothing answered" (an https URL to plain http). */
      readonly fix?: string;
    };

const DEFAULT_MAX_BYTES = 4 * 1024 * 1024;

/**
 * On `node:http`/`node:https`, not `fetch`: fetch parses answers with undici's WebAssembly
 * parser, which V8 also compiles with its optimising tier in the background, and a process that
 * had made one call waited about 250 ms for that compile before it could exit (every `hookgate
 * send`, Claude Code's command hook, paid it), besides the ~70 ms of loading undici.
 */
export function gatewayRequest(request: GatewayRequest): Promise<GatewayResult> {
  let url: URL;
  try {
    url = new URL(request.url);
  } catch {
    return Promise.resolve({ ok: false, error: `"${request.url}" is not a URL` });
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    return Promise.resolve({ ok: false, error: `${request.url}: only http and https URLs are supported` });
  }
  const body = typeof request.body === "string" ? Buffer.from(request.body) : request.body;
  const maxBytes = request.maxBytes ?? DEFAULT_MAX_BYTES;
  const { proxy } = request;
  if (proxy !== undefined)
    return import("./proxied.js").then((m) => m.proxiedRequest(request, url, proxy, maxBytes));
  return new Promise((resolve) => {
    let req: ClientRequest | undefined;
    const timer = setTimeout(() => {
      settle({ ok: false, error: `${url.href} did not answer within ${request.timeoutMs / 1000} s` });
    }, request.timeoutMs);
    function settle(result: GatewayResult): void {
      clearTimeout(timer);
      resolve(result);
      // A failure ends what is left of the exchange (the rest of a body over the limit, a wait).
      if (!result.ok) req?.destroy();
    }
    const fail = (e: unknown) => settle({ ok: false, ...describeFailure(e, url) });
    try {
      // No redirect is followed: node:http never does.
      req = (url.protocol === "https:" ? httpsRequest : httpRequest)(
        url,
        {
          method: request.method,
          headers: {
            ...request.headers,
            ...(body === undefined ? {} : { "content-length": String(body.byteLength) }),
          },
        },
        (response) => {
          const chunks: Buffer[] = [];
          let size = 0;
          response.on("data", (chunk: Buffer) => {
            size += chunk.byteLength;
            if (size > maxBytes) {
              settle({ ok: false, error: `the answer from ${url.href} is larger than the client accepts` });
            } else chunks.push(chunk);
          });
          response.on("error", fail);
          response.on("end", () => {
            // A rejection (node:zlib not loading) is a failure like any other, never unhandled.
            const answer = {
              status: response.statusCode ?? 0,
              headers: flatHeaders(response.headers),
              body: Buffer.concat(chunks),
            };
            decodedAnswer(answer, url, maxBytes, request.reader ?? "axios").then(settle, fail);
          });
        },
      );
    } catch (e) {
      // A header value node:http refuses (a line break in a token), before anything is sent.
      fail(e);
      return;
    }
    req.on("error", fail);
    req.end(body);
  });
}

/**
 * The answer, its body decoded from the content codings its headers name, as `reader` decodes
 * them (`codingsRead`), so that `send` prints, and `doctor` reads, what the agent's hook would
 * have read. `send` asks for no coding, but a server or a proxy in front of the gateway may
 * compress all the same. node:zlib is loaded only for such an answer. `via` names the proxy it
 * came through: the answer may be that proxy's own (its block page).
 */
export async function decodedAnswer(
  answer: { status: number; headers: Record<string, string>; body: Buffer },
  url: URL,
  maxBytes: number,
  reader: AnswerReader,
  via?: string,
): Promise<GatewayResult> {
  const { status, headers, body } = answer;
  const route = via === undefined ? "" : ` (${via})`;
  // A transfer coding other than chunked lies over the content codings, and no agent's client
  // takes it off (leftCoded): decoded here, the failure was said of the content coding beneath it.
  if (codingsOf(headers["transfer-encoding"], "Transfer-Encoding").length > 0)
    return { ok: true, response: { status, headers, body: body.toString("utf8") } };
  const codings = codingsRead(reader, status, headers["content-encoding"] ?? "");
  if (codings === "too many")
    return {
      ok: false,
      error: `the answer from ${url.href} (HTTP ${status})${route} names ${headers["content-encoding"]?.split(",").length} content codings, more than ${READER_NAME.fetch} decodes (${FETCH_MAX_CODINGS}), and the hook fails`,
      fix: CODING_FIX,
    };
  // None it decodes: the body as it came, its header kept to say so (leftCoded).
  if (codings.length === 0) return { ok: true, response: { status, headers, body: body.toString("utf8") } };
  const zlib = await import("node:zlib");
  // Both clients flush what they have at the end of the body, as curl does, so an empty or cut
  // short one is read as far as it goes, not failed.
  const flush = { finishFlush: zlib.constants.Z_SYNC_FLUSH, maxOutputLength: maxBytes };
  const brotli = { finishFlush: zlib.constants.BROTLI_OPERATION_FLUSH, maxOutputLength: maxBytes };
  const decoders: Record<string, (b: Buffer) => Buffer> = {
    // axios gives gzip (and compress) to zlib's unzip, which takes a zlib stream as well and
    // fails on LZW data, as the agent's hook does; undici's fetch to gunzip, a gzip stream alone.
    gzip: (b) => (reader === "axios" ? zlib.unzipSync(b, flush) : zlib.gunzipSync(b, flush)),
    compress: (b) => zlib.unzipSync(b, flush),
    // Raw deflate data (no zlib header) is read as axios and undici read it: some servers send
    // `deflate` so, and the agent's hook had its answer where send failed. They tell a zlib
    // header apart differently: axios by the first byte 0x78 (a 32 KiB window) alone, undici by
    // its low four bits, 8, of any window.
    deflate: (b) => (zlibHeaded(b, reader) ? zlib.inflateSync(b, flush) : zlib.inflateRawSync(b, flush)),
    br: (b) => zlib.brotliDecompressSync(b, brotli),
  };
  let decoded = body;
  for (const coding of codings) {
    try {
      decoded = (decoders[coding.replace(/^x-/, "")] as (b: Buffer) => Buffer)(decoded);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === "ERR_BUFFER_TOO_LARGE")
        return { ok: false, error: `the answer from ${url.href}${route} is larger than the client accepts` };
      return {
        ok: false,
        error: `the answer from ${url.href} (HTTP ${status})${route} ${undecodedAs(coding, e, "Content-Encoding")}`,
        fix: CODING_FIX,
      };
    }
  }
  const { "content-encoding": _, "content-length": __, ...rest } = headers;
  return { ok: true, response: { status, headers: rest, body: decoded.toString("utf8") } };
}

/** Whether `reader` reads a deflate body as a zlib stream, not raw deflate data. */
function zlibHeaded(body: Buffer, reader: AnswerReader): boolean {
  const first = body[0] ?? 0;
  return reader === "axios" ? first === 0x78 : (first & 0x0f) === 0x08;
}

/**
 * The codings `reader` decodes of an answer's Content-Encoding, in the order it decodes them;
 * none where it reads the body as it came. axios (its http adapter) decodes one, the header's
 * whole value (gzip, x-gzip, compress, x-compress, deflate, br), and none of a 204's. undici's
 * fetch decodes a list, last first (gzip, x-gzip, deflate, br), none where one is another (or
 * empty), none of a 101, 204, 205 or 304, and fails on more than 5. curl, without --compressed,
 * decodes none. zstd, which newer axios and undici decode where Node has it, is left coded.
 */
function codingsRead(reader: AnswerReader, status: number, header: string): string[] | "too many" {
  const value = header.trim().toLowerCase();
  if (value === "" || reader === "curl") return [];
  if (reader === "axios") {
    const one = ["gzip", "x-gzip", "compress", "x-compress", "deflate", "br"];
    return status !== 204 && one.includes(value) ? [value] : [];
  }
  if ([101, 204, 205, 304].includes(status)) return [];
  const codings = value.split(",").map((c) => c.trim());
  if (codings.length > FETCH_MAX_CODINGS) return "too many";
  return codings.every((c) => ["gzip", "x-gzip", "deflate", "br"].includes(c)) ? codings.reverse() : [];
}

function describeFailure(e: unknown, url: URL): { error: string; fix?: string } {
  const tls = describeTlsFailure(e, url, GATEWAY);
  if (tls !== undefined) return tls;
  const error = failureText(e, url);
  const code = e instanceof Error ? (e as NodeJS.ErrnoException).code : undefined;
  // EAI_AGAIN is a lookup that failed for now (no DNS server answered: offline, a VPN down), not
  // a name that does not exist: the name may be right.
  if (code === "EAI_AGAIN")
    return {
      error,
      fix: "check this machine's DNS or network (a VPN?) and run it again, or put the gateway's address in --url",
    };
  if (code === "ENOTFOUND")
    return {
      error,
      fix: `fix the host name in --url (${url.hostname}), or use 127.0.0.1 for a gateway on this machine`,
    };
  return { error };
}

function failureText(e: unknown, url: URL): string {
  const found = e instanceof Error ? (e as NodeJS.ErrnoException).code : undefined;
  const code = typeof found === "string" ? found : undefined;
  switch (code) {
    case "ECONNREFUSED":
      return `nothing is listening at ${url.host} (connection refused)`;
    case "ENOTFOUND":
      return `the host ${url.hostname} does not resolve (${code})`;
    case "EAI_AGAIN":
      return `the host ${url.hostname} could not be looked up just now (${code}, a DNS failure)`;
    case "ECONNRESET":
      return `${url.host} closed the connection (ECONNRESET)`;
    case "ETIMEDOUT":
      return `connecting to ${url.host} timed out`;
  }
  // On one line: a message may end in a line break (OpenSSL's do).
  const detail = errorMessage(e).replace(/\s+/g, " ").trim();
  return `request to ${url.href} failed: ${detail}${code ? ` (${code})` : ""}`;
}

/**
 * How a failed TLS handshake with the gateway is said (core/tls-failure.ts), also through a
 * proxy's tunnel (proxied.ts): without a fix, doctor sent the user to start a gateway, or a proxy,
 * that runs.
 */
export const GATEWAY: TlsFixPlace = {
  urlIn: "--url and in the hook URL",
  whose: "the gateway's",
  startedIn: "the shell that runs hookgate and the agent",
  plainHttpWhy: ": hookgate serve speaks plain http, and https is a TLS proxy's in front of it",
};

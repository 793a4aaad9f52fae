import { errorMessage } from "../../core/errors.js";
/**
 * The CLI's HTTP client for talking to a hookgate gateway (`hookgate send`, `hookgate doctor`).
 * This is the client side: it calls the gateway URL the user typed, as an agent's hook would,
 * so it is not an outbound call of the gateway and does not go through the egress guard.
 * Never follows a redirect (no client does, clients.md §2.1 and §9), bounds time and size, and
 * turns every failure into a value with a sentence a person can act on.
 */

export interface GatewayRequest {
  readonly method: "GET" | "POST";
  readonly url: string;
  readonly headers?: Readonly<Record<string, string>>;
  readonly body?: string | Uint8Array;
  /** The whole exchange, connect to last byte. */
  readonly timeoutMs: number;
  /** Bodies larger than this are a failure (default 4 MiB). */
  readonly maxBytes?: number;
}

export interface GatewayResponse {
  readonly status: number;
  /** Lower-case header names. */
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
}

export type GatewayResult =
  | { readonly ok: true; readonly response: GatewayResponse }
  | { readonly ok: false; readonly error: string };

const DEFAULT_MAX_BYTES = 4 * 1024 * 1024;

export async function gatewayRequest(request: GatewayRequest): Promise<GatewayResult> {
  let url: URL;
  try {
    url = new URL(request.url);
  } catch {
    return { ok: false, error: `"${request.url}" is not a URL` };
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    return { ok: false, error: `${request.url}: only http and https URLs are supported` };
  }
  const signal = AbortSignal.timeout(request.timeoutMs);
  try {
    const response = await fetch(url, {
      method: request.method,
      headers: { ...request.headers },
      ...(request.body === undefined ? {} : { body: request.body }),
      redirect: "manual",
      signal,
    });
    const body = await readLimited(response, request.maxBytes ?? DEFAULT_MAX_BYTES);
    if (body === undefined) {
      return { ok: false, error: `the answer from ${url.href} is larger than the client accepts` };
    }
    const headers: Record<string, string> = {};
    response.headers.forEach((value, name) => {
      headers[name.toLowerCase()] = value;
    });
    return { ok: true, response: { status: response.status, headers, body } };
  } catch (e) {
    return { ok: false, error: describeFailure(e, url, request.timeoutMs) };
  }
}

async function readLimited(response: Response, maxBytes: number): Promise<string | undefined> {
  if (!response.body) return "";
  const chunks: Uint8Array[] = [];
  let size = 0;
  const reader = response.body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > maxBytes) {
      await reader.cancel();
      return undefined;
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString("utf8");
}

function describeFailure(e: unknown, url: URL, timeoutMs: number): string {
  if (e instanceof Error && (e.name === "TimeoutError" || e.name === "AbortError")) {
    return `${url.href} did not answer within ${timeoutMs / 1000} s`;
  }
  const cause =
    e instanceof Error ? (e.cause as { code?: unknown; message?: unknown } | undefined) : undefined;
  const code = typeof cause?.code === "string" ? cause.code : undefined;
  switch (code) {
    case "ECONNREFUSED":
      return `nothing is listening at ${url.host} (connection refused)`;
    case "ENOTFOUND":
    case "EAI_AGAIN":
      return `the host ${url.hostname} does not resolve (${code})`;
    case "ECONNRESET":
      return `${url.host} closed the connection (ECONNRESET)`;
    case "ETIMEDOUT":
    case "UND_ERR_CONNECT_TIMEOUT":
      return `connecting to ${url.host} timed out`;
    default:
      if (code?.startsWith("ERR_TLS") || code?.includes("CERT")) {
        return `TLS to ${url.host} failed (${code}); for a private CA set NODE_EXTRA_CA_CERTS`;
      }
  }
  const detail = typeof cause?.message === "string" ? cause.message : errorMessage(e);
  return `request to ${url.href} failed: ${detail}${code ? ` (${code})` : ""}`;
}

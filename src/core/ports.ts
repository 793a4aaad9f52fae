/**
 * The capabilities the core and the use cases need from the outside world.
 * Each runtime's composition root (src/entry/) supplies them, so tests can drive
 * time, ids and output, and the core never touches a runtime API itself.
 */
import type { EgressRefusal } from "./egress/refusal.js";
import type { Result } from "./result.js";

/** Milliseconds since the epoch (wall clock) and a monotonic reading for durations. */
export interface Clock {
  now(): number;
  monotonic(): number;
}

/** A fresh, unique id for each decision. */
export type IdGenerator = () => string;

/** SHA-256 of a UTF-8 string, as lowercase hex. */
export type Sha256 = (text: string) => Promise<string>;

/**
 * HMAC-SHA256 of a UTF-8 message under a raw key, as padded standard base64 (Standard Webhooks
 * signatures). The core's default is WebCrypto (core/sinks.ts); Node passes node:crypto's, about
 * 18 times cheaper per signature (bench/HISTORY.md).
 */
export type HmacSha256 = (key: Uint8Array, message: string) => Promise<string>;

/** Reads a secret or setting by name: `process.env` on Node, bindings on Workers. */
export type EnvReader = (name: string) => string | undefined;

/**
 * Why a variable an EnvReader read as unset is so, as what follows its name in a reason ("is not
 * set"). A Worker's binding that is set but no text reads as unset, and a reason saying "not set"
 * sent the operator looking for a variable that is there.
 */
export type UnsetReason = (name: string) => string;

export type LogLevel = "debug" | "info" | "warn" | "error";

/** Structured log sink: one JSON object per line on Node. Never given a secret in clear. */
export interface Logger {
  log(level: LogLevel, message: string, fields?: Record<string, unknown>): void;
  /**
   * `log` with the fields' JSON made already (an object's text, none of whose keys is `time`,
   * `level` or `msg`, its controls escaped by core/escape-controls.ts as a log line's are), for a
   * caller that measured it: the JSON lines' loggers write it as it is.
   */
  logJson?(level: LogLevel, message: string, fieldsJson: string): void;
}

/** One outbound HTTP request; only the egress module (src/adapters/egress) performs it. */
export interface EgressRequest {
  readonly url: string;
  readonly method: "GET" | "POST";
  readonly headers: Readonly<Record<string, string>>;
  readonly body?: string | undefined;
  /** The whole exchange, connect to last byte. */
  readonly timeoutMs: number;
  readonly signal?: AbortSignal | undefined;
  /**
   * An answer over the adapter's size cap is cut there instead of refused (EGRESS_RESPONSE_TOO_LARGE),
   * and one whose body breaks off after its status came (the time limit ran out while it trickled,
   * the connection dropped, it does not decode) is kept as far as it came, with `cutShort`, instead
   * of failing the call. For sinks, which read only the status and the start of the answer: a
   * receiver that answers 200 with a large page, or with a body that never ends, has still received
   * the message.
   */
  readonly truncateResponse?: boolean | undefined;
  /**
   * Whether the caller reads the body of an answer with this status: when it does not, the body
   * is not waited for and comes back "" (a forward's non-2xx, whose body its client ignores: a
   * server that sent its 500 at once and then held or trickled the body was reported as a
   * timeout, after the whole wait, instead of as the 500 it answered).
   */
  readonly readsBodyOf?: ((status: number) => boolean) | undefined;
}

export interface EgressResponse {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
  /** With `truncateResponse`: why the body broke off; `body` is what came before. */
  readonly cutShort?: string | undefined;
}

/** Sends a request through the SSRF guard; a refusal or a failure is a value with a code. */
export type Egress = (request: EgressRequest) => Promise<Result<EgressResponse, EgressRefusal>>;

/** Counters for what the gateway did; exposed in Prometheus text on Node (`GET /metrics`). */
export interface Metrics {
  increment(name: string, labels?: Readonly<Record<string, string>>): void;
}

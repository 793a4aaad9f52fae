/**
 * Every egress refusal is a value with a stable code, the stage that refused it, and a reason a
 * person can act on (which rule, which range and its RFC). The egress adapters log and count them.
 */
import { type CodingHeader, undecodedAs } from "../answer-headers.js";
import { errorMessage } from "../errors.js";
import { describeRawTarget, describeTarget } from "./target.js";

export type EgressStage = "url" | "allowlist" | "name" | "address" | "dns" | "connect" | "response";

export type EgressCode =
  | "EGRESS_BAD_URL"
  | "EGRESS_BAD_SCHEME"
  | "EGRESS_USERINFO"
  | "EGRESS_BAD_PORT"
  | "EGRESS_NOT_ALLOWLISTED"
  | "EGRESS_BLOCKED_NAME"
  | "EGRESS_BLOCKED_ADDRESS"
  | "EGRESS_NO_ADDRESS"
  | "EGRESS_DNS_FAILED"
  | "EGRESS_REDIRECT"
  | "EGRESS_TIMEOUT"
  | "EGRESS_RESPONSE_TOO_LARGE"
  | "EGRESS_BAD_ENCODING"
  | "EGRESS_CONNECT_FAILED";

/** A special-purpose range that matched, e.g. `{ cidr: "169.254.0.0/16", name: "Link-Local", rfc: "RFC 3927" }`. */
export interface RangeMatch {
  readonly cidr: string;
  readonly name: string;
  readonly rfc: string;
}

export interface EgressRefusal {
  readonly code: EgressCode;
  readonly stage: EgressStage;
  /** One sentence: what was refused and why. */
  readonly reason: string;
  /** The address judged, for address-stage refusals. */
  readonly address?: string | undefined;
  readonly range?: RangeMatch | undefined;
  /**
   * The request's own time limit (`timeoutMs`) ran out: not the adapter's connect time limit, nor
   * its caller giving it up. A caller that gave it what was left of a longer wait knows it is over.
   */
  readonly timedOut?: true;
  /**
   * Its caller gave it up because the hook it was for has no client left to answer (its signal
   * aborted with ClientLeft): the target did nothing wrong, so it is no refusal to warn of or
   * count (report.ts).
   */
  readonly clientLeft?: true;
  /**
   * Its caller gave it up because `serve` is stopping and answers what is still running now (its
   * signal aborted with GatewayStopping): no refusal either, nor a timeout of the target.
   */
  readonly gatewayStopping?: true;
}

/**
 * The reason a caller aborts a request's signal with when the hook it is for has no client left
 * to read the answer (an agent that cancelled a tool call, a user's Esc: remote-actions.ts
 * CLIENT_LEFT). An abort still, by name, to whatever else listens on that signal.
 */
export class ClientLeft extends Error {
  constructor(message: string) {
    super(message);
    this.name = "AbortError";
  }
}

/**
 * The reason a caller aborts a request's signal with when `serve` stops and its hook is answered
 * now, with the rule's onError (remote-actions.ts `stopping`). An abort, by name, as ClientLeft is.
 */
export class GatewayStopping extends Error {
  constructor(message: string) {
    super(message);
    this.name = "AbortError";
  }
}

/**
 * What a refusal made by its caller giving it up carries when that was no fault of the target:
 * the caller's client left, or the gateway is stopping.
 */
export function leftBy(signal: AbortSignal | undefined): {
  readonly clientLeft?: true;
  readonly gatewayStopping?: true;
} {
  if (signal?.reason instanceof ClientLeft) return { clientLeft: true };
  return signal?.reason instanceof GatewayStopping ? { gatewayStopping: true } : {};
}

export class EgressError extends Error {
  constructor(readonly refusal: EgressRefusal) {
    super(refusal.reason);
    this.name = "EgressError";
  }
}

/**
 * Why an answer's body broke off after its status came (`EgressResponse.cutShort`), the same words
 * on both runtimes: the call's time limit ran out while it arrived, or its read failed (`broke`);
 * undefined when it ended whole.
 */
export function cutShortReason(broke: unknown, timedOut: boolean, timeoutMs: number): string | undefined {
  if (broke === undefined) return undefined;
  return timedOut
    ? `its body did not end within ${timeoutMs} ms`
    : `its body broke off: ${errorMessage(broke)}`;
}

/**
 * A redirect answered to `url`, refused in the same words on both runtimes: redirects are never
 * followed. Where it pointed is shown as refused targets are (origin and `/…`): its path or query
 * may hold a secret. A relative Location (RFC 9110 §10.2.2) is read against the request URL.
 */
export function redirectRefusal(url: URL, status: number, location: string | undefined): EgressRefusal {
  const to =
    location === undefined
      ? "(none)"
      : describeRawTarget(URL.canParse(location, url.href) ? new URL(location, url).href : location);
  return {
    code: "EGRESS_REDIRECT",
    stage: "response",
    reason: `${describeTarget(url)} answered ${status} to ${to}; redirects are never followed`,
  };
}

/** An answer from `url` past the adapter's size cap, refused in the same words on both runtimes. */
export function tooLargeRefusal(url: URL, maxBytes: number): EgressRefusal {
  return {
    code: "EGRESS_RESPONSE_TOO_LARGE",
    stage: "response",
    reason: `${describeTarget(url)} answered with more than ${maxBytes} bytes`,
  };
}

/**
 * Why a body in a content coding did not decode, with what to check: the answer came that way,
 * so the server, or a proxy in front of it, compresses it wrongly (or names a coding it did not
 * use), and the same call gets the same answer.
 */
export function undecodedBody(
  coding: string,
  error: unknown,
  header: CodingHeader = "Content-Encoding",
): string {
  return `its body ${undecodedAs(coding, error, header)}; check the server, or a proxy in front of it, that compresses its answers`;
}

/** An answer from `url` whose body does not decode from its content coding, said the same way on both runtimes. */
export function undecodedRefusal(
  url: URL,
  status: number,
  coding: string,
  error: unknown,
  header: CodingHeader = "Content-Encoding",
): EgressRefusal {
  return {
    code: "EGRESS_BAD_ENCODING",
    stage: "response",
    reason: `${describeTarget(url)} answered HTTP ${status}, but ${undecodedBody(coding, error, header)}`,
  };
}

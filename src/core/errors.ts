/**
 * Every expected failure on the request path has a stable code. On agent-facing routes each one
 * is answered by a fail-mode decision in a 2xx body (DESIGN.md), with the code in the
 * `x-hookgate-error` header and the log; this table says which fail mode governs it.
 */
import type { AuthFailureCode } from "./auth.js";

export type RequestErrorCode =
  | "BODY_TOO_LARGE"
  | "BODY_NOT_UTF8"
  | "BODY_UNREADABLE"
  | "UNSUPPORTED_CONTENT_TYPE"
  | "MALFORMED_JSON"
  | "EVENT_NOT_OBJECT"
  | "EVENT_NAME_MISSING"
  | "EVENT_INVALID"
  | "UNKNOWN_CLIENT_ROUTE"
  | "INTERNAL_ERROR"
  | AuthFailureCode;

/** Which policy setting chooses the answer: `auth.onFailure` or `defaults.onError`. */
export const FAIL_MODE_SOURCE: Readonly<Record<RequestErrorCode, "auth" | "defaults">> = {
  BODY_TOO_LARGE: "defaults",
  BODY_NOT_UTF8: "defaults",
  BODY_UNREADABLE: "defaults",
  UNSUPPORTED_CONTENT_TYPE: "defaults",
  MALFORMED_JSON: "defaults",
  EVENT_NOT_OBJECT: "defaults",
  EVENT_NAME_MISSING: "defaults",
  EVENT_INVALID: "defaults",
  UNKNOWN_CLIENT_ROUTE: "defaults",
  INTERNAL_ERROR: "defaults",
  AUTH_MISSING: "auth",
  AUTH_MALFORMED: "auth",
  AUTH_EMPTY_TOKEN: "auth",
  AUTH_UNKNOWN_TOKEN: "auth",
};

export interface RequestError {
  readonly code: RequestErrorCode;
  readonly message: string;
  /** The event, when it could still be identified (from the body, or sniffed from its start). */
  readonly eventName?: string | undefined;
}

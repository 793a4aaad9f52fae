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
  | "HOST_NOT_SERVED"
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
  // A request addressed to a name the gateway does not serve is not let in: the auth fail mode.
  HOST_NOT_SERVED: "auth",
  INTERNAL_ERROR: "defaults",
  AUTH_MISSING: "auth",
  AUTH_MALFORMED: "auth",
  AUTH_EMPTY_TOKEN: "auth",
  AUTH_UNKNOWN_TOKEN: "auth",
  // No token could be checked: not let in either.
  AUTH_UNAVAILABLE: "auth",
};

export interface RequestError {
  readonly code: RequestErrorCode;
  readonly message: string;
  /** The event, when it could still be identified (from the body, or sniffed from its start). */
  readonly eventName?: string | undefined;
}

/**
 * A rule's remote action refused by hookgate itself before anything is sent. Not a request
 * error: like every failure of a `prompt` or `forward` rule, that rule's `onError` answers, and
 * the code goes into the audit line's `pending` entry.
 */
export type RemoteActionErrorCode = "FORWARD_INVALID_HEADER";

export interface RemoteActionError {
  readonly code: RemoteActionErrorCode;
  readonly message: string;
}

/**
 * What each of forward.ts's header checks refuses, said the same way here, at the call, and by
 * `hookgate check` (policy-lint.ts).
 */
export const HEADER_VALUE_RULE = "(a control character, DEL, or a character past U+00FF)";
export const HEADER_NAME_RULE = "(letters, digits and !#$%&'*+-.^_`|~, no spaces or colons)";
export const CLIENT_HEADER_RULE =
  "set by the HTTP client from the request itself (Host from the url, the body's length and framing, the connection)";

/**
 * Forward headers whose interpolated value holds a character no header value may carry. The
 * value itself is never quoted: it may hold a secret.
 */
export function invalidHeaderError(names: readonly string[]): RemoteActionError {
  const list = names.join(", ");
  const which = names.length === 1 ? `the header ${list} has a value` : `the headers ${list} have values`;
  return {
    code: "FORWARD_INVALID_HEADER",
    message: `${which} that no HTTP header can carry ${HEADER_VALUE_RULE} once its variables are interpolated, so nothing was sent; fix the variables it reads or its text in the rule's forward.headers`,
  };
}

/**
 * Forward headers whose name is no HTTP field name, each quoted up to its first character no
 * name may have: a name is the policy's own text, but a header line written as the name
 * (`"Authorization: Bearer …"`) holds its secret after that character, and this message goes to
 * the agent and the log.
 */
export function invalidHeaderNameError(names: readonly string[]): RemoteActionError {
  const list = names.map(cutHeaderName).join(", ");
  const which = names.length === 1 ? `the header name ${list} is` : `the header names ${list} are`;
  return {
    code: "FORWARD_INVALID_HEADER",
    message: `${which} no HTTP header name ${HEADER_NAME_RULE}, so nothing was sent; fix it in the rule's forward.headers`,
  };
}

/**
 * Forward headers the HTTP client sets from the request itself or refuses (forward.ts
 * `clientHeaderNames`); their names are valid header names, quoted whole.
 */
export function clientHeaderError(names: readonly string[]): RemoteActionError {
  const list = names.map((name) => JSON.stringify(name)).join(", ");
  const which = names.length === 1 ? `the header ${list} is` : `the headers ${list} are`;
  return {
    code: "FORWARD_INVALID_HEADER",
    message: `${which} ${CLIENT_HEADER_RULE}, so nothing was sent; remove it from the rule's forward.headers`,
  };
}

/** `"Authorization…" (cut at its first colon)`, or the whole name when nothing in it is bad. */
function cutHeaderName(name: string): string {
  const good = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]*/.exec(name)?.[0] ?? "";
  if (good === name) return JSON.stringify(name);
  const bad = name.charAt(good.length);
  const what =
    bad === ":"
      ? "colon"
      : bad === " "
        ? "space"
        : `${JSON.stringify(bad)} (U+${bad.charCodeAt(0).toString(16).toUpperCase().padStart(4, "0")})`;
  return `${JSON.stringify(`${good}…`)} (cut at its first ${what})`;
}

/**
 * What a caught value says: an Error's message, anything else as a string. An AggregateError
 * with no message of its own (Node's, when every address of a name failed to connect) says its
 * errors', joined.
 */
export function errorMessage(e: unknown): string {
  if (!(e instanceof Error)) return String(e);
  const inner = (e as { errors?: unknown }).errors;
  return e.message === "" && Array.isArray(inner) ? inner.map(errorMessage).join("; ") : e.message;
}

/**
 * A system call's error without the call and the path Node ends it with (`ENOENT: no such file
 * or directory, open '/p/policy.json'`): the caller has named the file already.
 */
export function systemReason(e: unknown): string {
  return errorMessage(e).replace(/, \w+ '.*$/s, "");
}

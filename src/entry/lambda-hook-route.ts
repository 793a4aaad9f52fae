/**
 * A hook route's request read straight from a Lambda event, and its answer made in the shape
 * hono's adapter gives that event (lambda-http.ts answers the hook routes so, as Node's listener
 * does, without a web Request or Response: they were most of a warm invocation's CPU). What is
 * read is what the adapter's Request would carry: the path as its URL has it, the method, each
 * header as a `Headers` made from the event gives it (hono's readers for payload 2.0, for
 * payload 1.0 and REST APIs, and for ALB target groups differ), the body decoded. An event the
 * adapter might read otherwise, or refuse, is no hook here (`eventHook` answers undefined) and
 * goes to the adapter: test/runtime/lambda-direct-hook.test.ts holds the two to one answer.
 */
import { type APIGatewayProxyResult, defaultIsContentTypeBinary, type LambdaEvent } from "hono/aws-lambda";
import type { RequestError } from "../core/errors.js";
import type { HookRouteRequest } from "../http/hook-route.js";
import { type BodyResult, bodyFromBytes } from "../http/read-body.js";
import { hookRoute } from "../http/route-path.js";

/** A POST to a hook route, read from its event: the client its path names, and the request. */
export interface EventHook {
  readonly client: string | undefined;
  readonly request: HookRouteRequest;
  /** The path as the event has it, which the app's last resort logs in its normal form. */
  readonly path: string;
}

/** Which of hono's readers (its adapter's `getProcessor`) reads an event. */
type Reader = "payload 2.0" | "payload 1.0" | "alb";

type Fields = {
  readonly requestContext?: unknown;
  readonly rawPath?: unknown;
  readonly path?: unknown;
  readonly httpMethod?: unknown;
  readonly headers?: unknown;
  readonly multiValueHeaders?: unknown;
  readonly queryStringParameters?: unknown;
  readonly multiValueQueryStringParameters?: unknown;
  readonly body?: unknown;
  readonly isBase64Encoded?: unknown;
};
type Context = {
  readonly http?: { readonly method?: unknown };
  readonly domainName?: unknown;
};

/**
 * The event as a hook, if it is a POST to a hook route (route-path.ts `hookRoute`, the app's
 * reading: a stage or mapping key before the route included) that hono's adapter would make a
 * Request of as it is read here; else undefined, and the adapter answers it. `event` is the one
 * `readable` mended, and `unfitHeader` found every header fit for a Request; `refused` is what
 * `readable` noted of it (a body marked base64 that is not).
 */
export function eventHook(event: LambdaEvent, refused: RequestError | undefined): EventHook | undefined {
  const fields = event as Fields;
  const context = fields.requestContext;
  // A context that is no object: the adapter's `"domainName" in` throws, and it answers a 400.
  if (context !== undefined && context !== null && typeof context !== "object") return undefined;
  const reader = readerOf(fields);
  if (reader === undefined) return undefined;
  const method = reader === "payload 2.0" ? (context as Context).http?.method : fields.httpMethod;
  // A Request spells a method that is POST in any case as POST, and the app's route is the POST one.
  if (typeof method !== "string" || !/^post$/i.test(method)) return undefined;
  const path = reader === "payload 2.0" ? fields.rawPath : fields.path;
  if (typeof path !== "string" || !path.startsWith("/")) return undefined;
  // The adapter's URL is `https://<host><path>?<query>`: a host read as it is keeps the path the
  // path, and a query the adapter can make cannot end it (`readable` escaped a `?` or `#` in it).
  if (!plainHost(domainOf(fields, context as Context | null | undefined))) return undefined;
  if (reader !== "payload 2.0" && !plainQuery(fields)) return undefined;
  const header = headerReader(reader, fields);
  const body = fields.body;
  if (header === undefined || (body && typeof body !== "string")) return undefined;
  const route = hookRoute(path);
  if (route === undefined) return undefined;
  // As the adapter decodes it: `atob`, which `readable` has already found reads it.
  const bytes =
    typeof body === "string" && body !== ""
      ? fields.isBase64Encoded
        ? Buffer.from(atob(body), "latin1")
        : Buffer.from(body, "utf8")
      : undefined;
  return {
    client: route.client,
    path,
    request: {
      refused,
      // The app's reading of a Request's body, which the adapter makes of these bytes with their
      // length as its Content-Length. The Lambda app has no body deadline, budget or ceiling: the
      // event holds the whole body, no larger than Lambda's payload limit.
      readBody: (maxBytes) => (bytes ? bodyFromBytes(bytes, maxBytes) : EMPTY_BODY),
      contentType: header("content-type"),
      // An unknown route is quoted as its path was sent, as the app quotes it: a team's token in it
      // with a "//" is masked there, where the route's reading makes that one slash.
      target: path,
      authorization: header("authorization"),
      timeoutHeader: header("x-hookgate-timeout"),
      userAgent: header("user-agent"),
    },
  };
}

const EMPTY_BODY: Promise<BodyResult> = Promise.resolve({ ok: true, text: "" });

/**
 * hono's `getProcessor`: an ALB's event has `requestContext.elb`, a payload 2.0 one `rawPath` and
 * `requestContext.http`; VPC Lattice's (`serviceArn`) is left to the adapter, and any other is
 * read as payload 1.0.
 */
function readerOf(fields: Fields): Reader | undefined {
  const context = fields.requestContext;
  if (context && Object.hasOwn(context, "elb")) return "alb";
  if (Object.hasOwn(fields, "rawPath") && Object.hasOwn(context ?? {}, "http")) return "payload 2.0";
  if (context && Object.hasOwn(context, "serviceArn")) return undefined;
  return "payload 1.0";
}

/** The host of the adapter's URL: `requestContext.domainName` where it has one, else the `host` header. */
function domainOf(fields: Fields, context: Context | null | undefined): string {
  if (context && "domainName" in context) return String(context.domainName);
  const first = (map: unknown) => {
    const value = (map as Record<string, unknown> | null | undefined)?.host;
    return Array.isArray(value) ? value[0] : value;
  };
  return String(
    first(fields.headers) || first("multiValueHeaders" in fields ? fields.multiValueHeaders : {}),
  );
}

/**
 * A host the WHATWG URL parser takes as it is: DNS labels the last of which starts with a letter
 * (one of digits, or `0x`, is read as an IPv4 address, and refused if it is none), none an IDNA
 * `xn--` one (refused unless valid punycode), or a dotted quad; a port if any. The adapter's URL
 * with another host may be refused, or read with another path.
 */
function plainHost(host: string): boolean {
  const match = PLAIN_HOST.exec(host);
  return match !== null && !/(?:^|\.)xn--/i.test(host) && Number(match[1] ?? 0) <= 65535;
}
const OCTET = "(?:25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)";
const PLAIN_HOST = new RegExp(
  `^(?:(?:[A-Za-z0-9-]+\\.)*[A-Za-z][A-Za-z0-9-]*\\.?|(?:${OCTET}\\.){3}${OCTET})(?::(\\d{1,5}))?$`,
);

/**
 * Whether the adapter makes a payload 1.0 or ALB event's query string without throwing: a list
 * of strings for each multi-value parameter, a string for each single one, and no UTF-16
 * surrogate, which hono's payload 1.0 reader passes to `encodeURIComponent` (a lone one throws).
 */
function plainQuery(fields: Fields): boolean {
  const multi = fields.multiValueQueryStringParameters;
  const single = fields.queryStringParameters;
  const map = multi || single;
  if (map === undefined || map === null) return true;
  if (typeof map !== "object") return false;
  for (const [name, value] of Object.entries(map)) {
    if (SURROGATE.test(name)) return false;
    const values: unknown[] = multi ? (Array.isArray(value) ? value : [0]) : [value];
    if (!values.every((v) => (typeof v === "string" && !SURROGATE.test(v)) || (!multi && v == null)))
      return false;
  }
  return true;
}
const SURROGATE = /[\ud800-\udfff]/;

/**
 * A header's value as the adapter's Request would give it (`headers.get(name)`, `name` lower-case),
 * by its reader: payload 2.0's sets each non-empty `headers` entry, the last of a name winning;
 * payload 1.0's appends each `multiValueHeaders` value (joined with ", ", and the whole trimmed
 * again as the Request copies it), then sets a `headers` entry whose name it has not; an ALB's
 * sets each `multiValueHeaders` list joined with "; " (`readable` joined a repeated one's values
 * with ", " already), or without multi-value headers each non-empty `headers` entry. Undefined
 * where a map is not of strings (the adapter's reading of it is its own).
 */
function headerReader(reader: Reader, fields: Fields): ((name: string) => string | undefined) | undefined {
  const single = stringMap(fields.headers, false);
  const multi = stringMap(fields.multiValueHeaders, true);
  if (single === undefined || multi === undefined) return undefined;
  const singles = single as Readonly<Record<string, string | null | undefined>> | null;
  const lists = multi as Readonly<Record<string, readonly string[] | null | undefined>> | null;
  if (reader === "payload 2.0" || (reader === "alb" && !lists)) {
    return (name) => {
      const value = named(singles, name)
        .filter((v) => v)
        .at(-1);
      return value === undefined || value === null ? undefined : headerValue(value);
    };
  }
  if (reader === "alb") {
    return (name) => {
      const value = named(lists, name)
        .filter((vs) => vs)
        .at(-1);
      return value === undefined || value === null ? undefined : headerValue(value.join("; "));
    };
  }
  return (name) => {
    const values = named(lists, name)
      .filter((vs) => vs)
      .flatMap((vs) => (vs ?? []).map(headerValue));
    if (values.length > 0) return headerValue(values.join(", "));
    const single = named(singles, name).find((v) => v);
    return single === undefined || single === null ? undefined : headerValue(single);
  };
}

/** The values of `map`'s keys that are `name` (lower-case) in any case, in the map's order. */
function named<T>(map: Readonly<Record<string, T>> | null, name: string): T[] {
  const values: T[] = [];
  for (const key in map) {
    if (key.length === name.length && key.toLowerCase() === name) values.push(map[key] as T);
  }
  return values;
}

/**
 * `map` if it is null, absent, or a plain object of strings (`lists`: of lists of strings), null
 * or undefined values among them; else undefined.
 */
function stringMap(map: unknown, lists: boolean): object | null | undefined {
  if (map === undefined || map === null) return null;
  if (typeof map !== "object" || Array.isArray(map) || Object.getPrototypeOf(map) !== Object.prototype)
    return undefined;
  for (const key in map) {
    const value = (map as Record<string, unknown>)[key];
    if (value === undefined || value === null) continue;
    if (
      lists ? !Array.isArray(value) || !value.every((v) => typeof v === "string") : typeof value !== "string"
    )
      return undefined;
  }
  return map;
}

/**
 * A header value as `Headers` keeps it: without its leading and trailing HTTP whitespace (Fetch,
 * "normalize").
 */
function headerValue(value: string): string {
  return EDGE_WHITESPACE.test(value) ? value.replace(EDGE_WHITESPACE_ALL, "") : value;
}
const EDGE_WHITESPACE = /^[\t\n\r ]|[\t\n\r ]$/;
const EDGE_WHITESPACE_ALL = /^[\t\n\r ]+|[\t\n\r ]+$/g;

/**
 * An answer as hono's adapter returns the Response the app makes of it (app.ts `answerHook`):
 * the headers lower-case and in name order, as a `Headers` gives them; a body with no type of its
 * own typed `text/plain;charset=UTF-8`, and read back as UTF-8 (a lone surrogate replaced, a
 * leading BOM dropped); base64 where the adapter takes the type for binary; and in
 * `multiValueHeaders` for an event that has them, else in `headers`.
 */
export function eventAnswer(
  event: LambdaEvent,
  status: number,
  headers: Readonly<Record<string, string>>,
  body: string,
): APIGatewayProxyResult {
  const names = Object.keys(headers);
  if (body !== "" && !names.includes("content-type")) names.push("content-type");
  names.sort();
  const value = (name: string) => headerValue(headers[name] ?? "text/plain;charset=UTF-8");
  const contentType = headers["content-type"] ?? (body === "" ? undefined : "text/plain;charset=UTF-8");
  const encoding = headers["content-encoding"];
  const binary =
    (contentType !== undefined && defaultIsContentTypeBinary(contentType)) ||
    (encoding !== undefined && !/^identity$/i.test(encoding));
  const text = binary
    ? Buffer.from(body, "utf8").toString("base64")
    : UTF8_ROUND_TRIP.test(body)
      ? new TextDecoder().decode(new TextEncoder().encode(body))
      : body;
  const multi = "multiValueHeaders" in event && (event as Fields).multiValueHeaders;
  if (multi) {
    const multiValueHeaders: Record<string, string[]> = {};
    for (const name of names) multiValueHeaders[name] = [value(name)];
    return { body: text, statusCode: status, isBase64Encoded: binary, multiValueHeaders };
  }
  const single: Record<string, string> = {};
  for (const name of names) single[name] = value(name);
  return { body: text, statusCode: status, isBase64Encoded: binary, headers: single };
}
/** What a UTF-8 round trip changes: a leading BOM, a surrogate (paired ones come back as they were). */
const UTF8_ROUND_TRIP = /^\ufeff|[\ud800-\udfff]/;

/**
 * Composition root for the HTTP function on Lambda: API Gateway HTTP API (payload format 2.0)
 * and Lambda Function URLs, which share that event shape; bodies may arrive base64-encoded
 * (`isBase64Encoded`), which hono's adapter decodes. It reads a REST API's or payload 1.0 event
 * too (`multiValueHeaders`), and an Application Load Balancer target group's, with multi-value
 * headers on or off, answering each in its own shape (`albAnswer`). The same Hono app as on Node
 * answers, through hono's adapter, every route but the hook routes; it is imported with the first
 * event that goes there (`adapt`).
 *
 * A POST to a hook route is answered as Node's listener answers it, with no web Request or
 * Response: lambda-hook-route.ts reads the hook from the event as the adapter's Request would
 * carry it (the path as route-path.ts reads it, a stage or mapping key before the route
 * included; each header as that Request's `Headers` would give it; the body decoded), and
 * `answerHook` runs `runHookRoute` with the deps the app would hand that request, its answer made
 * in the shape the adapter gives the event. Through the adapter, the Request and Response it made,
 * with their streams, were most of a warm invocation's CPU (about 160 µs, now 55, against 60 µs
 * for a minimal Hono handler), and each young collection promoted some 210 KB of them, now none
 * (bench/README.md, "The Lambda handler's warm invocation"). An event the adapter might read
 * otherwise or refuse (a host its URL would not parse as it is, a header map not of strings, a
 * VPC Lattice event) still goes through the adapter; test/runtime/lambda-direct-hook.test.ts
 * holds the two paths to the same answer, field by field, for every kind of event.
 *
 * An invocation that times out reaches the client as a 5xx, which Claude Code treats as "let the
 * action through", so the request's deadline (core/deadline.ts) is also capped below the time the
 * invocation has left: a slow `prompt` or `forward` rule ends with its `onError` answer, not with
 * the function's timeout.
 *
 * Lambda freezes the container once the handler returns, so work the app defers (the SQS send of
 * notify jobs) is awaited after the answer is built and before the handler returns: it lengthens
 * the invocation, not the computation of the answer. The wait is bounded by the time the
 * invocation has left, by DEFERRED_WAIT_MS once the answer is ready, and by how long the client
 * is known to wait (the hook's timeout from `x-hookgate-timeout`, which `hookgate init` writes;
 * without it, the request's deadline), because a client that cancels a hook past its own timeout
 * lets the action through too: a deny must not wait on a slow SQS (with the SDK's retries, many
 * seconds). A send still running then is logged; Lambda resumes it if it thaws the same
 * container, and it is lost if it does not. Each invocation waits for its own deferred work alone
 * and reads its own time left, also where Lambda Managed Instances run many at once in one
 * environment (`Invocation`).
 *
 * Remote actions and the notifier are imported with the first event that needs them
 * (lazy-actions.ts): most hooks need neither, and the cold start parses neither.
 *
 * An event hono's adapter cannot make a web Request of gets its own plain-text 400 or 500 there,
 * which Claude Code reads as "let the action through": a body marked base64 that is not, a GET
 * with a body, a header value a Request refuses. `readable` mends what it can before the adapter
 * sees the event (as Node and workerd read such a request); a body that cannot be read is
 * answered on a hook route as BODY_UNREADABLE in the fail mode, and so is an event with a header
 * a Request cannot carry, or one the adapter still refuses, made again without its headers
 * (`asRefused`).
 */
import { type APIGatewayProxyResult, handle, type LambdaContext, type LambdaEvent } from "hono/aws-lambda";
import type { Hono } from "hono/tiny";
import { nodeSha256 } from "../adapters/hash/node-crypto.js";
import type { DeferredWork } from "../app/notify.js";
import { createLogRecorder, recordsAsked } from "../app/replay.js";
import { errorMessage, type RequestError } from "../core/errors.js";
import { notifies } from "../core/policy.js";
import { shorten, wellFormed } from "../core/truncate.js";
import type { AppDeps, RequestDeps } from "../http/app.js";
import { hookResponse, INTERNAL_ERROR_BODY, runHookRoute } from "../http/hook-route.js";
import { routePath } from "../http/route-path.js";
import {
  createLambdaRuntime,
  type LambdaOptions,
  type LambdaRuntime,
  QUEUE_URL_ENV,
  refuseEvent,
  setQueueUrl,
} from "./lambda-config.js";
import { type EventHook, eventAnswer, eventHook } from "./lambda-hook-route.js";
import { lazyNotifier, lazyRemoteActions } from "./lazy-actions.js";
import { once } from "./once.js";

export type HttpHandler = (event: LambdaEvent, context?: LambdaContext) => Promise<APIGatewayProxyResult>;

/** Kept back from the invocation's deadline for returning the answer. */
const RETURN_MARGIN_MS = 500;
/**
 * How long deferred work may hold an answer that is ready: ten times a healthy SQS send and the
 * SDK's first import, and short beside the hook timeouts clients are given.
 */
const DEFERRED_WAIT_MS = 1000;

export function createHttpHandler(options: LambdaOptions = {}): HttpHandler {
  return httpHandler(options, true);
}

/**
 * The handler with every event sent through hono's adapter, the hook routes' too: what
 * createHttpHandler answered before its direct path. For test/runtime/lambda-direct-hook.test.ts
 * alone, which holds the direct path's answers to it field by field: a function of its own, not
 * a LambdaOptions field, since those are what a deployment may set, and the function hands Lambda
 * `handler` alone.
 */
export function createAdapterHttpHandler(options: LambdaOptions = {}): HttpHandler {
  return httpHandler(options, false);
}

function httpHandler(options: LambdaOptions, direct: boolean): HttpHandler {
  const runtime = createLambdaRuntime(options);
  let adapter: Promise<Adapter> | undefined;

  return async (event, context) => {
    if (!isHttpEvent(event)) {
      // Answered as a request, it came out as "GET /" on a host named "undefined", a 404 that
      // Lambda counts as a success: an SQS batch wired here by mistake was deleted, undelivered.
      // Thrown, the invocation fails where it can be seen, and a batch goes back to its queue.
      refuseEvent(runtime.logger, event, NOT_HTTP);
    }
    if (isLatticeV1Event(event)) {
      // hono's adapter reads VPC Lattice's event structure V2 alone: V1's was read as a GET of
      // "undefined" with a body, refused, and every hook answered 404 "no route POST /", which
      // Lambda counts as a success and Claude Code lets through.
      refuseEvent(runtime.logger, event, LATTICE_V1);
    }
    const invocation: Invocation = {
      pending: new Map(),
      answerBy: Number.POSITIVE_INFINITY,
      ends: context
        ? runtime.clock.monotonic() + context.getRemainingTimeInMillis()
        : Number.POSITIVE_INFINITY,
    };
    adapter ??= build(runtime);
    // A named stage (`/prod/v1/hooks/claude-code`) or a custom domain's mapping key is a prefix,
    // which the app's routes answer under (src/http/app.ts).
    const handler = await adapter;
    const mended = readable(event);
    // A header a Request cannot carry is never handed to the adapter: its log line would quote
    // the value, a token perhaps, unmasked.
    const header = unfitHeader(mended);
    // A POST to a hook route is answered without the adapter, where it would have made a Request
    // of the event as it is read here (lambda-hook-route.ts): a web Request and Response per
    // invocation were most of a warm decision's CPU.
    const hook =
      direct && header === undefined && handler.hook
        ? eventHook(mended, eventRefusals.get(mended))
        : undefined;
    let result: APIGatewayProxyResult;
    if (hook && handler.hook) {
      result = await handler.hook(hook, mended, invocation);
    } else {
      const first = header === undefined ? await handler(mended, invocation) : undefined;
      // Or the adapter refused the event and answered it itself (logging why, as "Error processing
      // request"); made again without what it could refuse, a hook gets its fail mode's decision.
      result =
        first !== undefined && handler.reached.has(mended)
          ? first
          : await handler(asRefused(mended, header), invocation);
    }
    await settle(runtime, invocation.pending, context, invocation.answerBy - runtime.clock.monotonic());
    return isAlbEvent(event) ? albAnswer(event, result) : result;
  };
}

/**
 * One invocation's state: the tasks it deferred, its request deadline (monotonic) as the
 * decision handed it over, and when it times out (monotonic), from the context Lambda hands the
 * handler. A task an earlier invocation left running (logged then) is not waited for again: it
 * would hold this answer, whatever this request's deadline.
 *
 * Lambda Managed Instances run many invocations at once in one environment, sharing this handler
 * and the app it built once (AWS, "Node.js runtime for Lambda Managed Instances"), so this state
 * is not kept in variables the next invocation would overwrite: the adapter hands the app, with
 * each request, the time left and the notifier of the invocation it belongs to (`adapt`), and the
 * direct path hands them to `runHookRoute` so too (`answerHook`).
 */
interface Invocation {
  readonly pending: Map<Promise<void>, DeferredWork | undefined>;
  answerBy: number;
  readonly ends: number;
}

const NOT_HTTP =
  "the HTTP function was invoked with an event that is no HTTP request (no requestContext.http.method, httpMethod or method): invoke lambda-http.handler through an API Gateway HTTP or REST API, a Function URL or an ALB target group; an SQS queue's batches go to lambda-sqs.handler";

const LATTICE_V1 =
  "the HTTP function was invoked by a VPC Lattice target group whose Lambda event structure version is V1 (raw_path, is_base64_encoded), which it cannot read: give the function a target group with event structure version V2, or put an API Gateway HTTP API, a Function URL or an ALB target group in front of it";

/** VPC Lattice's event structure V1: `method` and `raw_path` at the top, no `requestContext`. */
function isLatticeV1Event(event: object): boolean {
  return "raw_path" in event && !("requestContext" in event);
}

/** VPC Lattice's event structure V2, which hono's adapter reads by its `requestContext.serviceArn`. */
function isLatticeV2Event(event: LambdaEvent): boolean {
  const context = (event as { requestContext?: unknown }).requestContext;
  return typeof context === "object" && context !== null && Object.hasOwn(context, "serviceArn");
}

/**
 * A VPC Lattice event's query parameters as a query string, each value escaped: a list of values
 * per name, or (as older descriptions of the event have it) a string.
 */
function latticeQuery(parameters: unknown): string {
  if (typeof parameters !== "object" || parameters === null) return "";
  const pairs: string[] = [];
  for (const [name, value] of Object.entries(parameters)) {
    const values: unknown[] = Array.isArray(value) ? value : [value];
    for (const one of values) if (typeof one === "string") pairs.push(`${queryPart(name)}=${queryPart(one)}`);
  }
  return pairs.join("&");
}

/** A query name or value escaped, a lone surrogate as U+FFFD (the URL parser's reading of one). */
const queryPart = (text: string) => encodeURIComponent(wellFormed(text));

/** Whether the event is a request of one of the sources hono's adapter reads: it has a method. */
function isHttpEvent(event: unknown): boolean {
  if (typeof event !== "object" || event === null) return false;
  const fields = event as EventFields & { readonly method?: unknown };
  const method = fields.requestContext?.http?.method ?? fields.httpMethod ?? fields.method;
  return typeof method === "string";
}

/** An event an Application Load Balancer sent its Lambda target (`requestContext.elb`). */
function isAlbEvent(event: LambdaEvent): boolean {
  const context = (event as { requestContext?: unknown }).requestContext;
  return typeof context === "object" && context !== null && "elb" in context;
}

/**
 * The answer as an ALB reads it: with `statusDescription`, the code and its reason phrase (the
 * ALB user guide, "Respond to the load balancer", requires it; hono's adapter leaves it out), and
 * in `multiValueHeaders` where the target group sends them (it then reads no `headers`), as an
 * answer `asRefused` made from a payload 2.0 event has not. The reason phrases are node:http's,
 * imported with the first ALB event: parsing it at every cold start would cost a few ms.
 */
async function albAnswer(event: LambdaEvent, result: APIGatewayProxyResult): Promise<APIGatewayProxyResult> {
  const { STATUS_CODES } = await import("node:http");
  const statusDescription = `${result.statusCode} ${STATUS_CODES[result.statusCode] ?? "Unknown"}`;
  const multi = (event as EventFields).multiValueHeaders;
  if (!multi || result.multiValueHeaders) return { ...result, statusDescription };
  const { headers = {}, ...rest } = result;
  return {
    ...rest,
    statusDescription,
    multiValueHeaders: Object.fromEntries(
      Object.entries(headers).map(([k, v]) => [k, Array.isArray(v) ? v : [v]]),
    ),
  };
}

/** Events and the refusal their hook is answered with; the Requests the adapter made of them. */
const eventRefusals = new WeakMap<object, RequestError>();
const requestRefusals = new WeakMap<Request, RequestError>();
const refusalOf = (request: Request) => requestRefusals.get(request);

/**
 * hono's adapter in front of the app, called with the invocation each event belongs to. `reached`
 * holds each event it made a Request of (so an event it refused is known).
 */
type Adapter = ((event: LambdaEvent, invocation: Invocation) => Promise<APIGatewayProxyResult>) & {
  readonly reached: WeakSet<object>;
  /** Answers a hook read from its event as the app would (`answerHook`); none for a broken configuration. */
  readonly hook?: (
    hook: EventHook,
    event: LambdaEvent,
    invocation: Invocation,
  ) => Promise<APIGatewayProxyResult>;
};

/**
 * hono's adapter in front of `app`: it records each event it made a Request of, and hands the app
 * the refusal `readable` or `asRefused` noted for the event, and the deps `invocationDeps` makes
 * of the invocation the event came with. hono hands the app, as `env.lambdaContext`, whatever its
 * adapter is called with second, and reads it for nothing else: there it carries those deps
 * (`depsOfEnv`), not Lambda's context, which the app never reads.
 *
 * The app (and Hono with it) is imported and made with the first event the adapter is handed:
 * the hook routes are answered without it (`answerHook`), so a cold start's first decision
 * parses none of it.
 */
function adapt(
  makeApp: () => Promise<{ fetch: Hono["fetch"] }>,
  invocationDeps?: (invocation: Invocation) => RequestDeps,
): Adapter {
  const reached = new WeakSet<object>();
  const app = once(makeApp);
  const front = {
    fetch: async (request: Request, env: { event: object }) => {
      reached.add(env.event);
      const refusal = eventRefusals.get(env.event);
      if (refusal) requestRefusals.set(request, refusal);
      return (await app()).fetch(request, env);
    },
  };
  // The adapter calls only `fetch`, with the event in the env it passes.
  const answer = handle(front as unknown as Hono);
  const adapter = (event: LambdaEvent, invocation: Invocation) =>
    answer(event, invocationDeps?.(invocation) as LambdaContext | undefined);
  return Object.assign(adapter, { reached });
}

/** The deps `adapt` handed hono's adapter for a request's invocation, from the env hono gives the app. */
const depsOfEnv = (env: unknown) => (env as { readonly lambdaContext?: RequestDeps }).lambdaContext;

type EventFields = {
  readonly body?: string | null | undefined;
  readonly isBase64Encoded?: boolean | undefined;
  /** VPC Lattice's event structure V2 gives each header as a list of its values. */
  readonly headers?: Readonly<Record<string, HeaderValue | undefined>> | null;
  readonly multiValueHeaders?: Readonly<Record<string, readonly string[] | undefined>> | null;
  /** Payload 2.0's Cookie header, split (the adapter joins them into one again). */
  readonly cookies?: readonly string[] | null;
  readonly httpMethod?: string;
  /** VPC Lattice's event structure V2 has its query parameters here, and hono's adapter reads none. */
  readonly queryStringParameters?: unknown;
  /** VPC Lattice's event structure V2 has its method here. */
  readonly method?: string;
  readonly rawPath?: string;
  readonly path?: string;
  readonly requestContext?: { readonly http?: { readonly method?: string } };
};

type HeaderValue = string | readonly string[];

const NON_ASCII = /[\u0080-\uffff]/;
/**
 * What a URL parser reads in a path as the query's or fragment's start, or drops: a tab or line
 * break anywhere, and a control character or space at the URL's end (WHATWG URL strips them from
 * the input), which elsewhere in a path it escapes as this does.
 */
// biome-ignore lint/suspicious/noControlCharactersInRegex: the C0 controls are what the parser drops.
const URL_SYNTAX_ALL = /[?#\x00-\x20]/g;
/** The same, and `%`, in a path whose escapes were decoded before the function saw it. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: the C0 controls are what the parser drops.
const DECODED_SYNTAX_ALL = /[?#\x00-\x20%]/g;
/** A Lambda Function URL's host, `<url-id>.lambda-url.<region>.on.aws`: no custom domain stands in for it. */
const FUNCTION_URL_HOST = /^[^.]+\.lambda-url\./i;

/**
 * Whether the event is API Gateway's HTTP API's, which decodes the path's escapes before the
 * function sees it, in `rawPath` and in payload 1.0's `path` alike: a payload 1.0 event
 * (`version` "1.0", which a REST API's and an ALB's have not), or a payload 2.0 one
 * (`requestContext.http`) whose `requestContext.domainName` is no Function URL's, which shares
 * the shape and keeps the escapes. AWS sets that name from the host the request was routed by,
 * so no client sets it.
 */
function decodedPath(event: LambdaEvent): boolean {
  if ((event as { version?: unknown }).version === "1.0" && !isAlbEvent(event)) return true;
  const context = (event as { requestContext?: { http?: unknown; domainName?: unknown } }).requestContext;
  if (typeof context?.http !== "object" || context.http === null) return false;
  return !(typeof context.domainName === "string" && FUNCTION_URL_HOST.test(context.domainName));
}

/**
 * The event as hono's adapter can make a Request of it, read as Node and workerd read the same
 * request: a GET's or HEAD's body dropped; a header's (and a payload 2.0 cookie's) non-ASCII
 * characters percent-encoded one by one (the adapter encodes the whole value, spaces included, so
 * `Bearer tök` would no longer be a bearer token, and leaves a cookie's as they are); a `#`,
 * `?`, control character or space in the path, which API Gateway's HTTP API decodes, escaped
 * again, and in an HTTP API's path a `%` too (`decodedPath`); a VPC Lattice event's query
 * parameters, which hono's reader of it drops, put after its path; a body
 * marked base64 that is not kept as the text it is, for its event's name only, and its hook
 * answered as BODY_UNREADABLE.
 */
function readable(event: LambdaEvent): LambdaEvent {
  const fields = event as EventFields;
  const mended: { -readonly [K in keyof EventFields]: EventFields[K] } = { ...fields };
  let changed = false;
  const method = (
    fields.requestContext?.http?.method ??
    fields.httpMethod ??
    fields.method ??
    ""
  ).toUpperCase();
  if ((method === "GET" || method === "HEAD") && fields.body) {
    mended.body = undefined;
    mended.isBase64Encoded = false;
    changed = true;
  }
  if (
    fields.headers &&
    Object.values(fields.headers).some((v) => valuesOf(v).some((s) => NON_ASCII.test(s)))
  ) {
    mended.headers = Object.fromEntries(
      Object.entries(fields.headers).map(([k, v]) => [
        k,
        Array.isArray(v) ? v.map(asciiValue) : v === undefined ? v : asciiValue(v as string),
      ]),
    );
    changed = true;
  }
  const multi = fields.multiValueHeaders;
  if (multi && Object.values(multi).some((vs) => vs?.some((v) => NON_ASCII.test(v)))) {
    mended.multiValueHeaders = Object.fromEntries(
      Object.entries(multi).map(([k, vs]) => [k, vs?.map(asciiValue)]),
    );
    changed = true;
  }
  // hono's ALB reader joins a repeated header's values with "; ", a cookie's separator: two
  // Authorization headers would read as one unknown token, not as two. Joined as Node and the
  // other readers join them (RFC 9110 §5.3), a Cookie's as its own (RFC 6265 §5.4).
  const repeated = isAlbEvent(event) ? mended.multiValueHeaders : undefined;
  if (
    repeated &&
    Object.entries(repeated).some(([k, vs]) => k.toLowerCase() !== "cookie" && (vs?.length ?? 0) > 1)
  ) {
    mended.multiValueHeaders = Object.fromEntries(
      Object.entries(repeated).map(([k, vs]) => [
        k,
        vs === undefined || k.toLowerCase() === "cookie" ? vs : [vs.join(", ")],
      ]),
    );
    changed = true;
  }
  // API Gateway's HTTP API hands the function its path decoded (`%23` as `#`). Pasted into the URL
  // the adapter makes, a `#` ended the path there and dropped the query, a tab or line break was
  // dropped, and so was a space or control character ending a path with no query
  // (`/v1/hooks/claude-code%20` read as the claude-code route, which Node and the direct path
  // read as no client's): escaped again, the path is read as Node reads the one the client sent. A `%` in
  // an HTTP API's path is a percent sign the client escaped, never an escape's start: read as
  // one, `%2D` from the client's `%25252D` was decoded yet again, to `-`. A Function URL's path
  // (payload 2.0 too), a REST API's and an ALB's keep the client's escapes, and their `%` is one.
  const syntax = decodedPath(event) ? DECODED_SYNTAX_ALL : URL_SYNTAX_ALL;
  for (const key of ["rawPath", "path"] as const) {
    const path = fields[key];
    if (typeof path === "string" && path.search(syntax) >= 0) {
      mended[key] = path.replace(syntax, encodeURIComponent);
      changed = true;
    }
  }
  // hono's VPC Lattice reader makes its URL with no query at all: `/v1/simulate?client=nope`
  // simulated as if no client were named, `/v1/whoami?client=deepagents` worded for another
  // client. Lattice hands the parameters decoded, each a list of its values (V2's user guide).
  const query = isLatticeV2Event(event) ? latticeQuery(fields.queryStringParameters) : "";
  if (query !== "") {
    mended.path = `${mended.path ?? "/"}?${query}`;
    changed = true;
  }
  if (fields.cookies?.some((v) => NON_ASCII.test(v))) {
    mended.cookies = fields.cookies.map(asciiValue);
    changed = true;
  }
  let refusal: RequestError | undefined;
  if (mended.isBase64Encoded && mended.body && !isBase64(mended.body)) {
    mended.isBase64Encoded = false;
    changed = true;
    refusal = {
      code: "BODY_UNREADABLE",
      message:
        "the request body could not be read: the Lambda event marks it base64-encoded (isBase64Encoded), but it is not base64",
    };
  }
  if (!changed) return event;
  const result = mended as LambdaEvent;
  if (refusal) eventRefusals.set(result, refusal);
  return result;
}

/**
 * An event with a header a Request cannot carry (`header`), or one the adapter refused, made
 * again from its method, path and body alone, its hook answered as BODY_UNREADABLE. The answer
 * has payload 2.0's shape, which a REST API (payload 1.0) also takes: `headers` without
 * `multiValueHeaders`.
 */
function asRefused(event: LambdaEvent, header: string | undefined): LambdaEvent {
  const fields = event as EventFields;
  const method = fields.requestContext?.http?.method ?? fields.httpMethod ?? fields.method ?? "POST";
  const path = fields.rawPath ?? fields.path;
  // The body as `readable` left it: none on a GET, base64 only where it is.
  const again = {
    version: "2.0",
    rawPath: typeof path === "string" && path.startsWith("/") ? path : "/",
    rawQueryString: "",
    headers: {},
    requestContext: { domainName: "lambda.invalid", http: { method } },
    body: fields.body ?? undefined,
    isBase64Encoded: fields.isBase64Encoded === true,
  } as unknown as LambdaEvent;
  eventRefusals.set(again, {
    code: "BODY_UNREADABLE",
    message:
      header === undefined
        ? `the request could not be read: hono's Lambda adapter refused the event (its "Error processing request" log line says why)`
        : `the request could not be read: the Lambda event's header ${JSON.stringify(shorten(header, 100))} is not one an HTTP request can carry`,
  });
  return again;
}

/** The name of a header of the event a web Request refuses (its value is never quoted: a token, perhaps). */
function unfitHeader(event: LambdaEvent): string | undefined {
  const fields = event as EventFields;
  const headers = [
    ...Object.entries(fields.headers ?? {}).flatMap(([name, value]) =>
      valuesOf(value).map((one) => [name, one] as const),
    ),
    ...Object.entries(fields.multiValueHeaders ?? {}).flatMap(([name, values]) =>
      (values ?? []).map((value) => [name, value] as const),
    ),
    // Payload 2.0 carries the Cookie header apart; the adapter sets it from these.
    ...(fields.cookies ?? []).map((value) => ["cookie", value] as const),
  ];
  // Nearly every event's headers are plainly fit; only another's are probed. The first `Headers`
  // a process makes loads Node's fetch (undici), some 20–45 ms of a cold start's first decision,
  // which the direct hook path otherwise never needs.
  if (headers.every(([name, value]) => value === undefined || plainlyFit(name, value))) return undefined;
  // One Headers for every check: `set` validates each name and value as a new object's would.
  const probe = new Headers();
  for (const [name, value] of headers) {
    if (value === undefined) continue;
    try {
      probe.set(name, value);
    } catch {
      return name;
    }
  }
  return undefined;
}

/**
 * A name of token characters and a value of tabs and characters from space to U+00FF but DEL:
 * a header every `Headers` takes (Fetch's header name and value, and a ByteString). What this
 * does not vouch for (a control character, an empty name, a value not a string) the probe decides.
 */
export const plainlyFit = (name: string, value: unknown) =>
  TOKEN.test(name) && typeof value === "string" && PLAIN_VALUE.test(value);
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
const PLAIN_VALUE = /^[\t\x20-\x7e\x80-\xff]*$/;

/** A header's values, one or (VPC Lattice's) a list. */
const valuesOf = (value: HeaderValue | undefined): readonly string[] =>
  Array.isArray(value) ? value : value === undefined ? [] : [value as string];

/** A header value with each non-ASCII character percent-encoded (a lone surrogate as U+FFFD). */
function asciiValue(value: string): string {
  if (!NON_ASCII.test(value)) return value;
  return value.replace(/[\u0080-\uffff]+/g, (run) => {
    try {
      return encodeURIComponent(run);
    } catch {
      return encodeURIComponent(run.replace(/[\ud800-\udfff]/g, "\ufffd"));
    }
  });
}

/** Whether `atob`, which the adapter decodes a body with, reads `text`. */
function isBase64(text: string): boolean {
  try {
    atob(text);
    return true;
  } catch {
    return false;
  }
}

async function build(runtime: LambdaRuntime): Promise<Adapter> {
  const config = await runtime.config();
  const { clock, logger, env } = runtime;
  if (!config.ok) {
    const { problem } = config;
    return adapt(async () => {
      const { createBrokenConfigApp } = await import("../http/broken-config.js");
      return createBrokenConfigApp(problem, logger, runtime.newId);
    });
  }
  const { policy } = config;
  // Said by this function alone, whose notify rules they are: the delivery function said it too,
  // of rules it never runs, beside its own warning that it cannot retry or hold without the URL.
  if (!env(QUEUE_URL_ENV) && notifies(policy))
    logger.log("error", `notify rules will fail: ${QUEUE_URL_ENV} is not set`, {
      fix: setQueueUrl(QUEUE_URL_ENV, "producer"),
    });
  // HOOKGATE_RECORD=1: a replayable "hook record" log line per decision (`hookgate replay`); any
  // other value than 1, 0 or empty records nothing, said once, here.
  const record = env("HOOKGATE_RECORD");
  const recording = recordsAsked(record);
  if (recording === undefined)
    logger.log("warn", "HOOKGATE_RECORD is neither 1 nor 0: writing no hook records", {
      value: record,
      fix: "set it to 1 in the function's environment to write them, or to 0 or unset for none",
    });
  // Imported with the first event that needs it, not at cold start (lazy-actions.ts). No session
  // store on Lambda: a permission_prompt Notification is sent without the tool call that caused
  // it (infra/README.md).
  const notifier = once(async () => {
    const { createNotifier } = await import("../app/notify.js");
    return createNotifier({ queue: runtime.queue("producer"), clock, logger, defer: (task) => task() });
  });
  const deps: AppDeps = {
    policy: () => policy,
    // Imported with the first event that needs them too.
    remote: lazyRemoteActions(
      once(async () => {
        const { createRemoteActions } = await import("../app/remote-actions.js");
        return createRemoteActions({ egress: runtime.egress, env, clock, sha256: nodeSha256 });
      }),
    ),
    recorder: recording ? createLogRecorder(logger) : undefined,
    clock,
    newId: runtime.newId,
    sha256: nodeSha256,
    logger,
    refusal: refusalOf,
    forRequest: depsOfEnv,
    // A policy that notifies, with no queue to send to: each event's send fails (logged), and
    // /healthz, which `hookgate doctor` reads, said ok while every notification was lost.
    deliveryTrouble: () =>
      !env(QUEUE_URL_ENV) && notifies(policy)
        ? {
            delivery: "failing",
            error: `${QUEUE_URL_ENV} is not set`,
            fix: setQueueUrl(QUEUE_URL_ENV, "producer"),
          }
        : undefined,
  };
  const invocationDeps = (invocation: Invocation): RequestDeps => ({
    // A decision ends before the invocation does: a timed-out invocation reaches the client as a
    // 5xx, which Claude Code reads as "let the action through", whatever the rule decided.
    runtimeLeftMs: () => invocation.ends - clock.monotonic() - RETURN_MARGIN_MS,
    notifier: lazyNotifier(notifier, (task, by, work) => deferTo(invocation, task, by, work), logger),
  });
  const app = async () => (await import("../http/app.js")).createApp(deps);
  return Object.assign(adapt(app, invocationDeps), {
    // The deps the app answers a request of the invocation with (app.ts `requestDeps`).
    hook: (hook: EventHook, event: LambdaEvent, invocation: Invocation) =>
      answerHook(Object.assign({}, deps, invocationDeps(invocation)), hook, event),
  });
}

/**
 * A hook read from its event, answered as app.ts's `answerHook` answers it, in the shape hono's
 * adapter gives the event (lambda-hook-route.ts `eventAnswer`); a failure as the app's `onError`.
 */
async function answerHook(
  deps: AppDeps,
  hook: EventHook,
  event: LambdaEvent,
): Promise<APIGatewayProxyResult> {
  try {
    const { status, headers, body } = hookResponse(await runHookRoute(deps, hook.client, hook.request));
    return eventAnswer(event, status, headers, body);
  } catch (e) {
    // runHookRoute answers every failure itself; this is the last resort, as the app's onError,
    // which logs the path its routes read without a trailing slash.
    const path = routePath(hook.path);
    deps.logger.log("error", "unhandled error", {
      error: errorMessage(e),
      path: path.length > 1 && path.endsWith("/") ? path.slice(0, -1) : path,
    });
    return eventAnswer(event, 500, { "content-type": "application/json" }, INTERNAL_ERROR_BODY);
  }
}

/**
 * Runs `task`, whose end the invocation's answer waits for (`settle`), no longer than `by`
 * (monotonic) once the answer is ready.
 */
function deferTo(invocation: Invocation, task: () => Promise<void>, by?: number, work?: DeferredWork): void {
  if (by !== undefined) invocation.answerBy = Math.min(invocation.answerBy, by);
  const tasks = invocation.pending;
  const running = task().finally(() => tasks.delete(running));
  tasks.set(running, work);
}

/** Waits for deferred work while the invocation can afford it; what is left may finish on a later thaw. */
async function settle(
  runtime: LambdaRuntime,
  pending: ReadonlyMap<Promise<void>, DeferredWork | undefined>,
  context: LambdaContext | undefined,
  untilDeadlineMs: number,
): Promise<void> {
  if (pending.size === 0) return;
  const budget = Math.min(
    DEFERRED_WAIT_MS,
    untilDeadlineMs,
    context ? context.getRemainingTimeInMillis() - RETURN_MARGIN_MS : DEFERRED_WAIT_MS,
  );
  let timer: NodeJS.Timeout | undefined;
  const outOfTime = new Promise<"late">((resolve) => {
    timer = setTimeout(() => resolve("late"), Math.max(0, budget));
  });
  const done = await Promise.race([Promise.all(pending.keys()).then(() => "done" as const), outOfTime]);
  clearTimeout(timer);
  if (done === "late") {
    // Named, so that an alarm on this line leads to the events whose notifications may be lost.
    const work = [...pending.values()].filter((w) => w !== undefined);
    runtime.logger.log("warn", "deferred work still running when the invocation had to answer", {
      tasks: pending.size,
      decisionIds: work.map((w) => w.decisionId),
      sinks: [...new Set(work.flatMap((w) => w.notify.flatMap((n) => n.sinks)))],
    });
  }
}

export const handler: HttpHandler = createHttpHandler();

/**
 * The Lambda HTTP handler's direct path for the hook routes (src/entry/lambda-hook-route.ts),
 * held to the path it replaced: for every event kind of test/fixtures/lambda/ (payload 2.0, a
 * Function URL, a REST API with its stage, payload 1.0, an ALB with multi-value headers off and
 * on) and the requests that go wrong in each, its answer is the one hono's adapter gives
 * (`createAdapterHttpHandler`), field by field, in the same key order and byte for byte in the
 * body, with the same log lines. Whether an event took the direct path is seen from outside: no
 * web Request or Response is made for it, as the adapter makes one of each.
 */
import { readFileSync } from "node:fs";
import { handle, type LambdaEvent } from "hono/aws-lambda";
import type { Hono } from "hono/tiny";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { eventHook } from "../../src/entry/lambda-hook-route.js";
import { createAdapterHttpHandler, createHttpHandler } from "../../src/entry/lambda-http.js";
import { readBody } from "../../src/http/read-body.js";
import { hookRoute, routePath } from "../../src/http/route-path.js";
import { harnessPolicy, lambdaContext } from "../support/lambda-context.js";

type Event = Record<string, unknown> & {
  headers?: Record<string, unknown> | null | undefined;
  multiValueHeaders?: Record<string, unknown> | null | undefined;
  requestContext?: Record<string, unknown>;
};
const asLambda = (event: Event) => structuredClone(event) as unknown as LambdaEvent;
const fixture = (name: string): Event =>
  JSON.parse(readFileSync(new URL(`../fixtures/lambda/${name}`, import.meta.url), "utf8"));

/** Bodies over 1,024 bytes are refused (BODY_TOO_LARGE); the captured request is 475. */
const POLICY = harnessPolicy({ onError: "deny", maxBodyBytes: 1024 });

/** Payload 1.0 from an HTTP API: both header maps, the client's casing, no stage. */
const PAYLOAD_1 = ((rest: Event): Event => ({
  ...rest,
  version: "1.0",
  resource: "$default",
  requestContext: { ...rest.requestContext, stage: "$default", path: "/v1/hooks/claude-code" },
}))(fixture("rest-api-v1-pre-tool-use.json"));

const KINDS: Record<string, Event> = {
  "payload 2.0": fixture("http-api-v2-pre-tool-use.json"),
  "Function URL": fixture("function-url-pre-tool-use.json"),
  "REST API, stage prod": fixture("rest-api-v1-pre-tool-use.json"),
  "payload 1.0": PAYLOAD_1,
  ALB: fixture("alb-pre-tool-use.json"),
  "ALB, multi-value headers": fixture("alb-multi-value-pre-tool-use.json"),
};

const isV2 = (e: Event) => typeof e.rawPath === "string";
/** An HTTP API's event, whose path AWS decodes: payload 1.0, or payload 2.0 not a Function URL's. */
const decodes = (e: Event) =>
  e.version === "1.0" || (isV2(e) && !String(e.requestContext?.domainName).includes(".lambda-url."));

/** The event with its header `name` (any case) in each map it has, as that map holds values. */
function withHeader(event: Event, name: string, value: string | undefined): Event {
  const set = (map: Record<string, unknown> | null | undefined, list: boolean) => {
    if (!map) return map;
    const kept = Object.entries(map).filter(([k]) => k.toLowerCase() !== name.toLowerCase());
    return Object.fromEntries(value === undefined ? kept : [...kept, [name, list ? [value] : value]]);
  };
  return {
    ...event,
    headers: set(event.headers, false),
    multiValueHeaders: set(event.multiValueHeaders, true),
  };
}

function withPath(event: Event, path: string): Event {
  if (!isV2(event)) return { ...event, path };
  const context = event.requestContext as { http: object };
  return { ...event, rawPath: path, requestContext: { ...context, http: { ...context.http, path } } };
}

const withBody = (event: Event, body: string | undefined, base64 = false): Event => ({
  ...event,
  body,
  isBase64Encoded: base64,
});

const CLAUDE_BODY = KINDS["payload 2.0"]?.body as string;
/** A PreToolUse body over the policy's 1,024 bytes, its event still named from its head. */
const OVERSIZED = JSON.stringify({ hook_event_name: "PreToolUse", tool_name: "Bash", pad: "x".repeat(2000) });

/** What goes wrong, or differs, in a request, applied to any kind of event. */
const VARIANTS: Record<string, (e: Event) => Event> = {
  "the captured request": (e) => e,
  "a base64 body": (e) => withBody(e, Buffer.from(CLAUDE_BODY).toString("base64"), true),
  "malformed JSON": (e) => withBody(e, '{"hook_event_name":"PreToolUse",'),
  "malformed JSON, base64": (e) => withBody(e, Buffer.from("{nope").toString("base64"), true),
  "an oversized body": (e) => withBody(e, OVERSIZED),
  "an oversized body, base64": (e) => withBody(e, Buffer.from(OVERSIZED).toString("base64"), true),
  "a bad token": (e) => withHeader(e, "Authorization", "Bearer not-the-token"),
  "no token, from hookgate send": (e) =>
    withHeader(withHeader(e, "authorization", undefined), "user-agent", "hookgate-send/0.1.0"),
  "an unknown dialect": (e) => withPath(e, "/v1/hooks/nope"),
  "a route naming no dialect": (e) => withPath(e, "/v1/hooks"),
  "a deeper path under the route": (e) => withPath(e, "/v1/hooks/claude-code/extra"),
  "a stage or mapping key before the route": (e) => withPath(e, "/prod/v1/hooks/claude-code/"),
  "dot segments and doubled slashes": (e) => withPath(e, "/x/./../v1//hooks/claude-code"),
  // API Gateway's HTTP API hands the function its path decoded.
  "an escaped slash": (e) => withPath(e, decodes(e) ? "/v1/hooks/claude-code" : "/v1/hooks%2Fclaude-code"),
  // Sent as `%20`: read as no client's on Node, where a URL made of the decoded path drops it.
  "an escaped space ending the path": (e) =>
    withPath(e, decodes(e) ? "/v1/hooks/claude-code " : "/v1/hooks/claude-code%20"),
  "a body marked base64 that is not": (e) => withBody(e, "!!! not base64 @@", true),
  "the hook's JSON marked base64": (e) => withBody(e, CLAUDE_BODY, true),
  "no body": (e) => withBody(e, undefined),
  "a plain-text Content-Type": (e) => withHeader(e, "Content-Type", "text/plain"),
  "no Content-Type": (e) => withHeader(e, "content-type", undefined),
  "a header's spaces around its value": (e) =>
    withHeader(withHeader(e, "content-type", " \tapplication/json "), "user-agent", "axios/1.15.2  "),
  // An ALB's URL has the Host's name: reached by its address.
  "a Host that is an address and port": (e) => withHeader(e, "host", "203.0.113.9:8080"),
  "a non-ASCII token": (e) => withHeader(e, "authorization", "Bearer tök"),
  "the hook's timeout header": (e) => withHeader(e, "x-hookgate-timeout", "5"),
  "a lower-case method": (e) =>
    isV2(e)
      ? {
          ...e,
          requestContext: {
            ...e.requestContext,
            http: { ...(e.requestContext?.http as object), method: "post" },
          },
        }
      : { ...e, httpMethod: "post" },
};

/**
 * Headers as each service sends a repeated or doubly named one: payload 1.0 and REST APIs with
 * two values in `multiValueHeaders` and the last in `headers`; an ALB with multi-value headers
 * with two values; payload 2.0 joined by a comma; and a name in two casings.
 */
const REPEATED: Record<string, (e: Event) => Event> = {
  "two Authorization values": (e) => {
    if (e.multiValueHeaders) {
      const multi = Object.fromEntries(
        Object.entries(e.multiValueHeaders).filter(([k]) => k.toLowerCase() !== "authorization"),
      );
      const headers = e.headers && { ...e.headers, authorization: "Bearer other" };
      return {
        ...e,
        ...(headers ? { headers } : {}),
        multiValueHeaders: { ...multi, authorization: ["Bearer harness-secret-123", "Bearer other"] },
      };
    }
    return withHeader(e, "authorization", "Bearer harness-secret-123,Bearer other");
  },
  "a name in two casings": (e) => ({
    ...e,
    ...(e.headers ? { headers: { ...e.headers, AUTHORIZATION: "Bearer other" } } : {}),
    ...(e.multiValueHeaders
      ? { multiValueHeaders: { ...e.multiValueHeaders, AUTHORIZATION: ["Bearer other"] } }
      : {}),
  }),
  "an empty value beside one": (e) => ({
    ...e,
    ...(e.headers ? { headers: { ...e.headers, "Content-Type": "" } } : {}),
    ...(e.multiValueHeaders
      ? { multiValueHeaders: { ...e.multiValueHeaders, "content-type": ["application/json", ""] } }
      : {}),
  }),
};

/**
 * Counts the web Requests and Responses made while `call` runs: hono's adapter and the app make
 * them with the globals. One call at a time: each puts the globals back as it found them.
 */
async function counting<T>(call: () => Promise<T>): Promise<{ value: T; made: number }> {
  const { Request: WebRequest, Response: WebResponse } = globalThis;
  let made = 0;
  globalThis.Request = class extends WebRequest {
    constructor(...args: ConstructorParameters<typeof Request>) {
      super(...args);
      made++;
    }
  };
  globalThis.Response = class extends WebResponse {
    constructor(...args: ConstructorParameters<typeof Response>) {
      super(...args);
      made++;
    }
  };
  try {
    return { value: await call(), made };
  } finally {
    globalThis.Request = WebRequest;
    globalThis.Response = WebResponse;
  }
}

/** The Request hono's adapter makes of the event, as the app is handed it. */
async function adapterRequest(event: Event): Promise<Request> {
  let seen: Request | undefined;
  const app = {
    fetch: (request: Request) => {
      seen = request;
      return new Response(null);
    },
  };
  await handle(app as unknown as Hono)(asLambda(event));
  if (!seen) throw new Error("the adapter made no Request of the event");
  return seen;
}

interface Line {
  level: string;
  msg: string;
  [field: string]: unknown;
}

/** Each handler, its ids counted from 1 (or made by `newId`), its clock still, its log lines kept. */
function handlers(newId?: () => string) {
  const made = (create: typeof createHttpHandler) => {
    const lines: Line[] = [];
    let n = 0;
    const handler = create({
      env: { HOOKGATE_POLICY: POLICY },
      newId: newId ?? (() => `decision-${++n}`),
      clock: { now: () => 1_795_993_915_000, monotonic: () => 0 },
      logger: { log: (level, msg, fields) => lines.push({ level, msg, ...fields }) },
    });
    return { handler, lines };
  };
  return { direct: made(createHttpHandler), adapter: made(createAdapterHttpHandler) };
}

/** The event answered by both handlers: each answer, the Requests and Responses made, the log lines. */
async function bothAnswer(event: Event, newId?: () => string) {
  const { direct, adapter } = handlers(newId);
  const viaDirect = await counting(() => direct.handler(asLambda(event), lambdaContext()));
  const viaAdapter = await counting(() => adapter.handler(asLambda(event), lambdaContext()));
  return { direct: viaDirect, adapter: viaAdapter, lines: { direct: direct.lines, adapter: adapter.lines } };
}

// hono's adapter logs an event it cannot make a Request of ("Error processing request") to the console.
beforeEach(() => {
  vi.spyOn(console, "error").mockImplementation(() => undefined);
});
afterEach(() => {
  vi.restoreAllMocks();
});

describe("the Lambda HTTP handler's direct path for the hook routes", () => {
  const cases = Object.entries(KINDS).flatMap(([kind, event]) => [
    ...Object.entries(VARIANTS).map(([variant, make]) => ({ kind, variant, event: make(event) })),
    ...Object.entries(REPEATED).map(([variant, make]) => ({ kind, variant, event: make(event) })),
  ]);

  it.each(cases)(
    "$kind, $variant: answers as hono's adapter does, making no web Request",
    async ({ event }) => {
      const { direct, adapter, lines } = await bothAnswer(event);
      expect(direct.value).toStrictEqual(adapter.value);
      // Key order too: Lambda serialises the answer as it is.
      expect(JSON.stringify(direct.value)).toBe(JSON.stringify(adapter.value));
      expect(lines.direct).toStrictEqual(lines.adapter);
      expect(lines.direct.filter((l) => l.msg === "decision")).toHaveLength(1);
      expect({ direct: direct.made, adapter: adapter.made > 0 }).toEqual({ direct: 0, adapter: true });
    },
  );

  // What `readable` mends before either path reads the event is left out: eventHook reads it mended.
  const MENDED = new Set([
    "a non-ASCII token",
    "an escaped space ending the path",
    "a body marked base64 that is not",
    "the hook's JSON marked base64",
  ]);
  const unmended = cases.filter(({ variant }) => !MENDED.has(variant));
  it.each(unmended)(
    "$kind, $variant: reads the hook as the app reads the adapter's Request",
    async ({ event }) => {
      const request = await adapterRequest(event);
      const hook = eventHook(asLambda(event), undefined);
      const header = (name: string) => request.headers.get(name) ?? undefined;
      expect({
        client: hook?.client,
        contentType: hook?.request.contentType,
        authorization: hook?.request.authorization,
        timeoutHeader: hook?.request.timeoutHeader,
        userAgent: hook?.request.userAgent,
        body: await hook?.request.readBody(1024, true),
      }).toStrictEqual({
        client: hookRoute(routePath(request.url))?.client,
        contentType: header("content-type"),
        authorization: header("authorization"),
        timeoutHeader: header("x-hookgate-timeout"),
        userAgent: header("user-agent"),
        body: await readBody(request, 1024),
      });
    },
  );

  it("answers each kind in its own shape: multiValueHeaders, an ALB's statusDescription", async () => {
    const answers: string[][] = [];
    for (const event of Object.values(KINDS))
      answers.push(Object.keys((await bothAnswer(event)).direct.value));
    expect(answers).toEqual([
      ["body", "statusCode", "isBase64Encoded", "headers"],
      ["body", "statusCode", "isBase64Encoded", "headers"],
      ["body", "statusCode", "isBase64Encoded", "multiValueHeaders"],
      ["body", "statusCode", "isBase64Encoded", "multiValueHeaders"],
      ["body", "statusCode", "isBase64Encoded", "headers", "statusDescription"],
      ["body", "statusCode", "isBase64Encoded", "multiValueHeaders", "statusDescription"],
    ]);
  });

  // A `%` in an HTTP API's path is a percent sign the client escaped, no escape's start: there
  // `%63laude-code` is the route Node reads `%2563laude-code` as, no client's, not `claude-code`.
  it.each(Object.entries(KINDS))(
    "%s, a percent sign the client escaped: no client's route, as on Node",
    async (_, event) => {
      const path = decodes(event) ? "/v1/hooks/%63laude-code" : "/v1/hooks/%2563laude-code";
      const { direct, adapter } = await bothAnswer(withPath(event, path));
      expect(direct.value).toStrictEqual(adapter.value);
      const headers = direct.value.headers ?? direct.value.multiValueHeaders;
      expect(String(headers?.["x-hookgate-error"])).toBe("UNKNOWN_CLIENT_ROUTE");
      expect(direct.value.body).toContain('no client route \\"/v1/hooks/%2563laude-code\\"');
    },
  );

  // What runHookRoute does not answer itself (here, no decision id to be had) is the app's onError's.
  it.each(Object.entries(KINDS))(
    "%s, a failure no hook answer covers: the same 500 and log line",
    async (_, event) => {
      const failing = () => {
        throw new Error("no id to be had");
      };
      const { direct, adapter, lines } = await bothAnswer(
        withPath(event, "/prod/v1/hooks/claude-code/"),
        failing,
      );
      expect(direct.value).toStrictEqual(adapter.value);
      expect(JSON.stringify(direct.value)).toBe(JSON.stringify(adapter.value));
      expect(direct.value.statusCode).toBe(500);
      expect(lines.direct).toStrictEqual(lines.adapter);
      expect(lines.direct.filter((l) => l.msg === "unhandled error")).toHaveLength(1);
      expect(direct.made).toBe(0);
    },
  );

  const V2 = KINDS["payload 2.0"] as Event;
  const REST = KINDS["REST API, stage prod"] as Event;
  const ALB = KINDS.ALB as Event;
  const LEFT: Record<string, Event> = {
    // VPC Lattice's payload 2.0 has hono's fourth reader; its headers are lists.
    "a VPC Lattice event": {
      version: "2.0",
      path: "/v1/hooks/claude-code",
      method: "POST",
      headers: Object.fromEntries(Object.entries(V2.headers ?? {}).map(([k, v]) => [k, [v]])),
      body: CLAUDE_BODY,
      isBase64Encoded: false,
      requestContext: { serviceArn: "arn:aws:vpc-lattice:us-east-1:123456789012:service/svc-1" },
    },
    // The adapter's URL would name another host, or none it can parse: its path is not the event's.
    "a Host that ends the URL's authority early": withHeader(ALB, "host", "hooks.example?x="),
    "a Host with a port out of range": withHeader(ALB, "host", "hooks.example:70000"),
    "a Host whose last label is a number": withHeader(ALB, "host", "hooks.999"),
    "a Host naming an IDNA label": withHeader(ALB, "host", "xn--zz.example"),
    "a header value that is no string": { ...V2, headers: { ...V2.headers, "x-count": 3 } },
    "a query value with a lone surrogate": { ...REST, queryStringParameters: { q: "\ud800" } },
    "a multi-value query that is no list": { ...REST, multiValueQueryStringParameters: { q: "a" } },
    "a path that does not start with a slash": withPath(V2, "v1/hooks/claude-code"),
    "a body that is no string": withBody(V2, 42 as unknown as string),
  };

  it.each(Object.entries(LEFT))("leaves %s to hono's adapter, answering as before", async (_, event) => {
    const { direct, adapter, lines } = await bothAnswer(event);
    expect(direct.value).toStrictEqual(adapter.value);
    expect(JSON.stringify(direct.value)).toBe(JSON.stringify(adapter.value));
    expect(lines.direct).toStrictEqual(lines.adapter);
    expect(direct.made).toBeGreaterThan(0);
  });

  it("sends every other route through hono's adapter: GET /healthz, a POST to /v1/simulate", async () => {
    const healthz = fixture("http-api-v2-healthz.json");
    const simulate = withPath(V2, "/v1/simulate");
    for (const event of [healthz, simulate]) {
      const { direct, adapter } = await bothAnswer(event);
      expect(direct.value).toStrictEqual(adapter.value);
      expect(direct.made).toBeGreaterThan(0);
    }
  });
});

/**
 * The HTTP handler on Lambda, fed the event shapes API Gateway HTTP API (payload 2.0) and Lambda
 * Function URLs send (test/fixtures/lambda/), with a real Claude Code PreToolUse body. It must
 * answer exactly what the Node server answers, fail closed on a bad policy, and have put its
 * notify jobs on SQS (local-aws-sqs) before it returns.
 */
import { readFileSync } from "node:fs";
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import {
  CreateQueueCommand,
  DeleteMessageCommand,
  DeleteQueueCommand,
  ReceiveMessageCommand,
  type SQSClient,
} from "@aws-sdk/client-sqs";
import type { LambdaEvent } from "hono/aws-lambda";
import { createSqsServer } from "local-aws-sqs";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { createSqsClientForLocal } from "../../src/adapters/queue/sqs.js";
import { createHttpHandler, type HttpHandler } from "../../src/entry/lambda-http.js";
import { createApp } from "../../src/http/app.js";
import decisions from "../fixtures/decisions.json" with { type: "json" };
import type { DecisionCase } from "../support/decision-case.js";
import { harnessPolicy, lambdaContext } from "../support/lambda-context.js";
import { type LoopbackServer, loopbackServer } from "../support/loopback.js";
import { policyFrom, sha256 } from "../support/policy.js";

type V2Event = LambdaEvent & {
  rawPath: string;
  headers: Record<string, string>;
  body?: string;
  isBase64Encoded: boolean;
  requestContext: { domainName: string; http: { method: string } };
};
const fixture = (name: string): V2Event =>
  JSON.parse(readFileSync(new URL(`../fixtures/lambda/${name}`, import.meta.url), "utf8"));
const CLAUDE_BODY = readFileSync(
  new URL("../fixtures/claude-code/2.1.332/PreToolUse.json", import.meta.url),
  "utf8",
);
/**
 * The VPC Lattice user guide's event structure V2: `method` and `path` at the top, each header a
 * list, each query parameter a list of its values.
 */
const lattice = (
  method: string,
  path: string,
  headers: Record<string, string[]>,
  body?: string,
  queryStringParameters: Record<string, string | string[]> = {},
) =>
  ({
    version: "2.0",
    path,
    method,
    headers: {
      host: ["hookgate-0123456789abcdef.7d67968.vpc-lattice-svcs.us-east-1.on.aws"],
      ...headers,
    },
    queryStringParameters,
    ...(body !== undefined && { body }),
    isBase64Encoded: false,
    requestContext: {
      serviceNetworkArn: "arn:aws:vpc-lattice:us-east-1:123456789012:servicenetwork/sn-1",
      serviceArn: "arn:aws:vpc-lattice:us-east-1:123456789012:service/svc-1",
      targetGroupArn: "arn:aws:vpc-lattice:us-east-1:123456789012:targetgroup/tg-1",
      identity: {},
      region: "us-east-1",
      timeEpoch: "1795993915000000",
    },
  }) as unknown as LambdaEvent;
const HTTP_API = fixture("http-api-v2-pre-tool-use.json");
const HTTP_API_BASE64 = fixture("http-api-v2-pre-tool-use-base64.json");
const FUNCTION_URL = fixture("function-url-pre-tool-use.json");
const HEALTHZ = fixture("http-api-v2-healthz.json");

/** The platform team's token is the one the captured Claude Code requests carry. */
const POLICY = harnessPolicy();

const context = lambdaContext;

/**
 * A clock on the test's fake time: with `onFakeTime` Date is faked, so both readings move only when
 * the test moves the timers.
 */
const fakeClock = { now: () => Date.now(), monotonic: () => Date.now() };

/**
 * Runs `call` on fake timers (setTimeout and Date, setImmediate left real): whenever a turn of the
 * event loop passes with the call unfinished (and `ready`, when what the call waits on besides its
 * timers has happened), time jumps to its next timer. Returns the call's value and how long it
 * took on that clock: the waits it scheduled, to the millisecond, none waited for in real time.
 */
async function onFakeTime<T>(
  call: () => Promise<T>,
  ready: () => boolean = () => true,
): Promise<{ value: T; ms: number }> {
  vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "Date"] });
  try {
    const start = Date.now();
    let outcome: { ok: true; value: T } | { ok: false; error: unknown } | undefined;
    void call().then(
      (value) => {
        outcome = { ok: true, value };
      },
      (error: unknown) => {
        outcome = { ok: false, error };
      },
    );
    while (outcome === undefined) {
      await new Promise((r) => setImmediate(r));
      if (outcome === undefined && ready() && vi.getTimerCount() > 0)
        await vi.advanceTimersToNextTimerAsync();
    }
    if (!outcome.ok) throw outcome.error;
    return { value: outcome.value, ms: Date.now() - start };
  } finally {
    vi.useRealTimers();
  }
}

const counter = () => {
  let n = 0;
  return () => `decision-${++n}`;
};

interface Captured {
  level: string;
  msg: string;
  [field: string]: unknown;
}
const captureLogs = () => {
  const lines: Captured[] = [];
  return {
    lines,
    logger: { log: (level: string, msg: string, f?: object) => lines.push({ level, msg, ...f }) },
  };
};

const ENQUEUE_FAILED = "enqueue failed; the decision was answered anyway";
/**
 * captureLogs, and `logged`, which resolves at the first line whose msg is `msg`: a test waits
 * on a send the handler may have stopped waiting for (its wait is 1 s), not on the clock.
 */
const captureLogsUntil = (msg: string) => {
  const { lines, logger } = captureLogs();
  let seen: () => void = () => undefined;
  const logged = new Promise<void>((resolve) => {
    seen = resolve;
  });
  return {
    lines,
    logged,
    /** Ends `logged` as that line would (a send that ended with no line to log). */
    end: () => seen(),
    logger: {
      log: (level: string, m: string, f?: object) => {
        logger.log(level, m, f);
        if (m === msg) seen();
      },
    },
  };
};

/** The same request as the Node server sees it, built from the event without hono's adapter. */
function nodeRequest(event: V2Event): Request {
  const body =
    event.body === undefined
      ? undefined
      : event.isBase64Encoded
        ? Buffer.from(event.body, "base64")
        : event.body;
  return new Request(`https://${event.requestContext.domainName}${event.rawPath}`, {
    method: event.requestContext.http.method,
    headers: event.headers,
    ...(body === undefined ? {} : { body }),
  });
}

describe("the Lambda HTTP handler", () => {
  it("reads the fixtures' bodies as the captured Claude Code request, base64 included", () => {
    expect(HTTP_API.body).toBe(CLAUDE_BODY);
    expect(FUNCTION_URL.body).toBe(CLAUDE_BODY);
    expect(HTTP_API_BASE64.isBase64Encoded).toBe(true);
    expect(Buffer.from(HTTP_API_BASE64.body ?? "", "base64").toString("utf8")).toBe(CLAUDE_BODY);
  });

  it.each([
    ["an HTTP API v2 event", HTTP_API],
    ["a base64-encoded HTTP API v2 event", HTTP_API_BASE64],
    ["a Function URL event", FUNCTION_URL],
    ["GET /healthz", HEALTHZ],
  ])("answers %s byte for byte as the Node server does", async (_, event) => {
    const policy = await policyFrom(JSON.parse(POLICY));
    const clock = { now: Date.now, monotonic: () => performance.now() };
    const quiet = { log: () => undefined };
    const node = createApp({ policy: () => policy, clock, newId: counter(), sha256, logger: quiet });
    const handler = createHttpHandler({ env: { HOOKGATE_POLICY: POLICY }, newId: counter(), logger: quiet });

    const lambda = await handler(event, context());
    const expected = await node.request(nodeRequest(event));
    const expectedBody = Buffer.from(await expected.arrayBuffer());

    expect(lambda.statusCode).toBe(expected.status);
    expect(lambda.isBase64Encoded).toBe(false);
    expect(Buffer.from(lambda.body, "utf8").equals(expectedBody)).toBe(true);
    expect(lambda.headers).toEqual(Object.fromEntries(expected.headers));
    expect(lambda.statusCode).toBe(200);
  });

  it("writes a replayable hook record per decision only when HOOKGATE_RECORD=1", async () => {
    const on = captureLogs();
    await createHttpHandler({ env: { HOOKGATE_POLICY: POLICY, HOOKGATE_RECORD: "1" }, logger: on.logger })(
      HTTP_API,
      context(),
    );
    const record = on.lines.find((l) => l.msg === "hook record") as
      | { record?: { event?: unknown; decision?: string } }
      | undefined;
    expect(record?.record?.decision).toBe("deny");
    const off = captureLogs();
    await createHttpHandler({ env: { HOOKGATE_POLICY: POLICY }, logger: off.logger })(HTTP_API, context());
    expect(off.lines.some((l) => l.msg === "hook record")).toBe(false);
    expect(off.lines.some((l) => l.msg.startsWith("HOOKGATE_RECORD"))).toBe(false);
  });

  it("says once, at cold start, that a HOOKGATE_RECORD other than 1 or 0 records nothing", async () => {
    // `true` read as off without a word: no record lines, and `hookgate replay` found nothing.
    const logs = captureLogs();
    const handler = createHttpHandler({
      env: { HOOKGATE_POLICY: POLICY, HOOKGATE_RECORD: "true" },
      logger: logs.logger,
    });
    await handler(HTTP_API, context());
    await handler(HTTP_API, context());
    expect(logs.lines.some((l) => l.msg === "hook record")).toBe(false);
    const told = logs.lines.filter(
      (l) => l.msg === "HOOKGATE_RECORD is neither 1 nor 0: writing no hook records",
    );
    expect(told).toEqual([
      expect.objectContaining({ level: "warn", value: "true", fix: expect.stringContaining("1") }),
    ]);
    const zero = captureLogs();
    await createHttpHandler({ env: { HOOKGATE_POLICY: POLICY, HOOKGATE_RECORD: "0" }, logger: zero.logger })(
      HTTP_API,
      context(),
    );
    expect(zero.lines.some((l) => l.msg.startsWith("HOOKGATE_RECORD"))).toBe(false);
  });

  it("applies the policy to the decoded body: the captured PreToolUse is denied with its reason", async () => {
    const handler = createHttpHandler({ env: { HOOKGATE_POLICY: POLICY }, logger: captureLogs().logger });
    for (const event of [HTTP_API, HTTP_API_BASE64, FUNCTION_URL]) {
      const res = await handler(event, context());
      expect(res.statusCode).toBe(200);
      expect(JSON.parse(res.body).hookSpecificOutput).toEqual({
        hookEventName: "PreToolUse",
        permissionDecision: "deny",
        permissionDecisionReason: "Writing files from a shell redirect is not allowed here",
      });
    }
  });

  it("answers a hook under a named stage or a custom domain's mapping key, never with a 404", async () => {
    const handler = createHttpHandler({ env: { HOOKGATE_POLICY: POLICY }, logger: captureLogs().logger });
    const staged = {
      ...HTTP_API,
      rawPath: `/prod${HTTP_API.rawPath}`,
      requestContext: { ...HTTP_API.requestContext, stage: "prod" },
    } as V2Event;
    // Through a custom domain the path has the mapping key, which is not in the event.
    const mapped = {
      ...HTTP_API,
      rawPath: `/hookgate${HTTP_API.rawPath}`,
      requestContext: { ...HTTP_API.requestContext, domainName: "hooks.acme.example" },
    } as V2Event;
    // A stage named like the routes' first segment.
    const v1 = {
      ...HTTP_API,
      rawPath: `/v1${HTTP_API.rawPath}`,
      requestContext: { ...HTTP_API.requestContext, stage: "v1" },
    } as V2Event;
    for (const event of [staged, mapped, v1, HTTP_API]) {
      const res = await handler(event, context());
      expect([event.rawPath, res.statusCode]).toEqual([event.rawPath, 200]);
      expect(JSON.parse(res.body).hookSpecificOutput.permissionDecision).toBe("deny");
      expect(res.headers?.["x-hookgate-error"]).toBeUndefined();
    }
  });

  /** The Hono app Node answers with, and the Lambda handler, on the one POLICY, logging nothing. */
  async function nodeAndLambda() {
    const policy = await policyFrom(JSON.parse(POLICY));
    const quiet = { log: () => undefined };
    const node = createApp({
      policy: () => policy,
      clock: fakeClock,
      newId: counter(),
      sha256,
      logger: quiet,
    });
    const handler = createHttpHandler({ env: { HOOKGATE_POLICY: POLICY }, newId: counter(), logger: quiet });
    return { node, handler };
  }

  it("reads a path API Gateway's HTTP API decoded as Node reads the one the client sent: a # or line break in it is no URL syntax", async () => {
    const { node, handler } = await nodeAndLambda();
    // The path the client sent, and rawPath as the HTTP API hands it over (every escape decoded).
    const cases = [
      ["/v1/hooks/claude%23code", "/v1/hooks/claude#code", ""],
      ["/v1/hooks/claude%0Acode", "/v1/hooks/claude\ncode", ""],
      // A # ended the path here: the query naming no client was dropped, and the simulation made.
      ["/v1/simulate%23", "/v1/simulate#", "client=nope"],
      // And here it ended the path before the route: a 404, which Claude Code lets through.
      ["/a%23b/v1/hooks/claude-code", "/a#b/v1/hooks/claude-code", ""],
    ] as const;
    for (const [sent, rawPath, rawQueryString] of cases) {
      const event = { ...HTTP_API, rawPath, rawQueryString } as V2Event;
      const lambda = await handler(event, context());
      const query = rawQueryString ? `?${rawQueryString}` : "";
      const expected = await node.request(
        nodeRequest({ ...HTTP_API, rawPath: `${sent}${query}` } as V2Event),
      );
      expect([sent, lambda.statusCode, lambda.body]).toEqual([sent, expected.status, await expected.text()]);
    }
  });

  it("reads a % in an HTTP API's decoded path as a percent sign, and a Function URL's as the escape it is", async () => {
    const { node, handler } = await nodeAndLambda();
    const answer = async (event: V2Event) => {
      const res = await handler(event, context());
      return [res.statusCode, res.headers?.["x-hookgate-error"] ?? null, res.body];
    };
    const onNode = async (path: string) => {
      const res = await node.request(nodeRequest({ ...HTTP_API, rawPath: path }));
      return [res.status, res.headers.get("x-hookgate-error"), await res.text()];
    };
    // A `%` reaches an HTTP API's rawPath only as a decoded `%25` (the client's `%2525`; AWS
    // decodes the path twice, and refuses one a `%` in it would leave undecodable): a percent
    // sign, as Node reads `%25`. Read as an escape's start, `%2D` was decoded again, to `-`,
    // and the hook judged as Claude Code's, where Node answers UNKNOWN_CLIENT_ROUTE.
    const httpApi = (rawPath: string) =>
      answer({
        ...HTTP_API,
        rawPath,
        requestContext: {
          ...HTTP_API.requestContext,
          http: { ...HTTP_API.requestContext.http, path: rawPath },
        },
      } as V2Event);
    const unknown = await httpApi("/v1/hooks/claude%2Dcode");
    expect(unknown[1]).toBe("UNKNOWN_CLIENT_ROUTE");
    expect(unknown).toEqual(await onNode("/v1/hooks/claude%252Dcode"));
    expect(await httpApi("/v1/p%2Dre/v1/hooks/claude-code")).toEqual(
      await onNode("/v1/p%252Dre/v1/hooks/claude-code"),
    );
    // A Function URL hands the path over as sent: its `%2D` is the escape of `-`, as on Node.
    const fnUrl = (rawPath: string) => answer({ ...FUNCTION_URL, rawPath } as V2Event);
    const judged = await fnUrl("/v1/hooks/claude%2Dcode");
    expect(JSON.parse(String(judged[2])).hookSpecificOutput.permissionDecision).toBe("deny");
    expect(judged).toEqual(await onNode("/v1/hooks/claude%2Dcode"));
    expect(await fnUrl("/v1/hooks/claude%252Dcode")).toEqual(await onNode("/v1/hooks/claude%252Dcode"));
  });

  it("answers an API Gateway REST API (payload 1.0) event, multiValueHeaders and a base64 body included", async () => {
    // Not what serverless.yml sets up, but the shape a REST API or an HTTP API integration with
    // payload 1.0 sends: headers as the client cased them, in both maps; under a binary media type
    // of */* every body base64; the stage left out of `path`. The answer keeps multiValueHeaders.
    const headers = {
      "Content-Type": "application/json",
      Authorization: "Bearer harness-secret-123",
      Host: "abc123.execute-api.us-east-1.amazonaws.com",
    };
    const rest = {
      resource: "/{proxy+}",
      path: "/v1/hooks/claude-code",
      httpMethod: "POST",
      headers,
      multiValueHeaders: Object.fromEntries(Object.entries(headers).map(([k, v]) => [k, [v]])),
      queryStringParameters: null,
      multiValueQueryStringParameters: null,
      pathParameters: { proxy: "v1/hooks/claude-code" },
      stageVariables: null,
      requestContext: {
        resourcePath: "/{proxy+}",
        httpMethod: "POST",
        path: "/prod/v1/hooks/claude-code",
        stage: "prod",
        domainName: "abc123.execute-api.us-east-1.amazonaws.com",
        requestId: "c6af9ac6-7b61-11e6-9a41-93e8deadbeef",
        accountId: "123456789012",
        apiId: "abc123",
        identity: { sourceIp: "203.0.113.7" },
      },
      body: Buffer.from(CLAUDE_BODY).toString("base64"),
      isBase64Encoded: true,
    } as unknown as LambdaEvent;
    const handler = createHttpHandler({ env: { HOOKGATE_POLICY: POLICY }, logger: captureLogs().logger });
    for (const event of [rest, { ...rest, version: "1.0", body: CLAUDE_BODY, isBase64Encoded: false }]) {
      const res = await handler(event as LambdaEvent, context());
      expect(res.statusCode).toBe(200);
      expect(res.isBase64Encoded).toBe(false);
      expect(res.multiValueHeaders?.["content-type"]).toEqual(["application/json"]);
      expect(JSON.parse(res.body).hookSpecificOutput.permissionDecisionReason).toBe(
        "Writing files from a shell redirect is not allowed here",
      );
    }
  });

  it("uses the policy bundled at build time when HOOKGATE_POLICY is unset, and prefers the variable", async () => {
    const bundled = createHttpHandler({ env: {}, bundledPolicy: POLICY, logger: captureLogs().logger });
    expect(JSON.parse((await bundled(HTTP_API, context())).body).hookSpecificOutput.permissionDecision).toBe(
      "deny",
    );

    const allowAll = JSON.stringify({ version: 1, rules: [] });
    const { lines, logger } = captureLogs();
    const both = createHttpHandler({ env: { HOOKGATE_POLICY: allowAll }, bundledPolicy: POLICY, logger });
    expect((await both(HTTP_API, context())).body).toBe("");
    expect(lines.find((l) => l.level === "warn")?.msg).toMatch(/bundled at build time is ignored/);
  });
});

describe("the shared decision table on Lambda", () => {
  // test/fixtures/decisions.json, which the Node app and the Worker are held to byte for byte:
  // each request as API Gateway's HTTP API, a Function URL and a REST API would hand it over.
  const cases = (decisions as { cases: DecisionCase[] }).cases;

  /** The body as the event carries it: text, or base64 where it is bytes; none when empty. */
  const bodyOf = (c: DecisionCase) =>
    c.request.bodyBase64 !== undefined
      ? { body: c.request.bodyBase64, isBase64Encoded: true }
      : c.request.body === ""
        ? { isBase64Encoded: false }
        : { body: c.request.body, isBase64Encoded: false };
  const split = (path: string) => {
    const at = path.indexOf("?");
    return at < 0 ? [path, ""] : [path.slice(0, at), path.slice(at + 1)];
  };
  const shapes: Record<string, (c: DecisionCase) => LambdaEvent> = {
    "HTTP API": (c) => {
      const [path = "", query = ""] = split(c.request.path);
      return {
        ...HTTP_API,
        rawPath: path,
        rawQueryString: query,
        headers: { ...c.request.headers, host: HTTP_API.requestContext.domainName },
        requestContext: {
          ...HTTP_API.requestContext,
          http: { ...HTTP_API.requestContext.http, method: c.request.method },
        },
        body: undefined,
        ...bodyOf(c),
      } as V2Event;
    },
    "Function URL": (c) => {
      const [path = "", query = ""] = split(c.request.path);
      return {
        ...FUNCTION_URL,
        rawPath: path,
        rawQueryString: query,
        headers: { ...c.request.headers, host: FUNCTION_URL.requestContext.domainName },
        requestContext: {
          ...FUNCTION_URL.requestContext,
          http: { ...FUNCTION_URL.requestContext.http, method: c.request.method },
        },
        body: undefined,
        ...bodyOf(c),
      } as V2Event;
    },
    // Headers as the client cased them, in both maps; the stage in requestContext.path only.
    "REST API": (c) => {
      const [path = "", query = ""] = split(c.request.path);
      const headers = Object.fromEntries(
        Object.entries(c.request.headers).map(([k, v]) => [
          k.replace(/(^|-)[a-z]/g, (m) => m.toUpperCase()),
          v,
        ]),
      );
      return {
        resource: "/{proxy+}",
        path,
        httpMethod: c.request.method,
        headers,
        multiValueHeaders: Object.fromEntries(Object.entries(headers).map(([k, v]) => [k, [v]])),
        queryStringParameters: query === "" ? null : Object.fromEntries(new URLSearchParams(query)),
        requestContext: {
          path: `/prod${path}`,
          stage: "prod",
          domainName: "abc123.execute-api.us-east-1.amazonaws.com",
        },
        body: null,
        ...bodyOf(c),
      } as unknown as LambdaEvent;
    },
  };

  it.each(cases.flatMap((c) => Object.keys(shapes).map((shape) => ({ shape, c, name: c.name }))))(
    "$shape: $name",
    async ({ shape, c }) => {
      const handler = createHttpHandler({
        env: { HOOKGATE_POLICY: JSON.stringify(c.policy) },
        logger: captureLogs().logger,
      });
      const res = await handler((shapes[shape] as (c: DecisionCase) => LambdaEvent)(c), context());
      const { headers = {}, multiValueHeaders = {} } = res as {
        headers?: Record<string, string> | undefined;
        multiValueHeaders?: Record<string, string[]> | undefined;
      };
      const header = (name: string) => headers[name] ?? multiValueHeaders[name]?.[0] ?? null;
      expect(res.isBase64Encoded).toBe(false);
      expect({
        status: res.statusCode,
        contentType: header("content-type"),
        body: res.body,
        policy: header("x-hookgate-policy"),
        error: header("x-hookgate-error"),
      }).toEqual(c.expected);
    },
  );
});

describe("events hono's adapter cannot make a request of", () => {
  /** The handler, under a policy that denies what it cannot judge, and the audit lines it wrote. */
  const handlerWithLog = () => {
    const { lines, logger } = captureLogs();
    const policy = JSON.stringify({ ...JSON.parse(POLICY), defaults: { onError: "deny" } });
    return { lines, handler: createHttpHandler({ env: { HOOKGATE_POLICY: policy }, logger }) };
  };
  const REST = {
    resource: "/{proxy+}",
    path: "/v1/hooks/claude-code",
    httpMethod: "POST",
    headers: { "Content-Type": "application/json", Authorization: "Bearer harness-secret-123" },
    multiValueHeaders: {
      "Content-Type": ["application/json"],
      Authorization: ["Bearer harness-secret-123"],
    },
    requestContext: { path: "/prod/v1/hooks/claude-code", stage: "prod", domainName: "abc.example" },
    body: CLAUDE_BODY,
    isBase64Encoded: false,
  } as unknown as LambdaEvent;
  const decided = (res: { body: string }) => JSON.parse(res.body) as Record<string, unknown>;
  /** `x-hookgate-error` in either answer shape (payload 2.0's headers, a REST API's multiValueHeaders). */
  const errorOf = (res: object) => {
    const { headers, multiValueHeaders } = res as {
      headers?: Record<string, unknown>;
      multiValueHeaders?: Record<string, unknown[]>;
    };
    return headers?.["x-hookgate-error"] ?? multiValueHeaders?.["x-hookgate-error"]?.[0];
  };

  it("answers a body marked base64 that is not base64 with the fail mode's decision, not a 500", async () => {
    const { lines, handler } = handlerWithLog();
    const events = [
      { ...HTTP_API, body: "!!! not base64 @@", isBase64Encoded: true },
      { ...FUNCTION_URL, body: "!!! not base64 @@", isBase64Encoded: true },
      { ...REST, body: "!!! not base64 @@", isBase64Encoded: true },
    ] as LambdaEvent[];
    for (const event of events) {
      const res = await handler(event, context());
      expect(res.statusCode).toBe(200);
      expect(errorOf(res)).toBe("BODY_UNREADABLE");
      // No event to name: the fail mode's answer any client reads as a block.
      expect(decided(res)).toEqual({
        decision: "block",
        reason:
          "hookgate: the request body could not be read: the Lambda event marks it base64-encoded (isBase64Encoded), but it is not base64 [BODY_UNREADABLE]",
      });
    }
    expect(lines.filter((l) => l.msg === "decision").map((l) => l.error)).toEqual(
      Array(3).fill("BODY_UNREADABLE"),
    );
    // The hook's own JSON wrongly marked base64: its event named, its deny in PreToolUse's shape.
    const res = await handler({ ...HTTP_API, isBase64Encoded: true } as V2Event, context());
    expect(res.statusCode).toBe(200);
    expect(decided(res).hookSpecificOutput).toMatchObject({
      hookEventName: "PreToolUse",
      permissionDecision: "deny",
    });
  });

  it("fails an invocation whose event is no HTTP request, saying which handler takes it, instead of answering a 404 Lambda counts as success", async () => {
    const { lines, handler } = handlerWithLog();
    const notHttp = [
      // An SQS batch wired to the HTTP function by mistake: a success would delete it, undelivered.
      fixture("sqs-event.json"),
      // An EventBridge schedule, and the Lambda console's default test event.
      { version: "0", id: "1", "detail-type": "Scheduled Event", source: "aws.events", detail: {} },
      { key1: "value1", key2: "value2", key3: "value3" },
      {},
      null,
    ];
    for (const event of notHttp)
      await expect(handler(event as unknown as LambdaEvent, context())).rejects.toThrow(
        /no HTTP request .*lambda-sqs\.handler$/,
      );
    expect(lines.filter((l) => l.level === "error").map((l) => l.eventKeys)).toEqual([
      ["Records"],
      ["version", "id", "detail-type", "source", "detail"],
      ["key1", "key2", "key3"],
      [],
      [],
    ]);
    // An HTTP event without a body is a request all the same: its hook gets a decision.
    for (const event of [
      { ...REST, body: null },
      { ...HTTP_API, body: undefined },
    ]) {
      const res = await handler(event as LambdaEvent, context());
      expect([res.statusCode, errorOf(res)]).toEqual([200, "MALFORMED_JSON"]);
    }
  });

  it("fails an invocation from a VPC Lattice target group of event structure V1, naming the version to set, instead of answering every hook 404", async () => {
    const { lines, handler } = handlerWithLog();
    // The VPC Lattice user guide's V1 event ("Receive events from the VPC Lattice service").
    const latticeV1 = {
      raw_path: "/v1/hooks/claude-code",
      method: "POST",
      headers: {
        "content-type": "application/json",
        authorization: "Bearer harness-secret-123",
        host: "hookgate-0123456789abcdef.7d67968.vpc-lattice-svcs.us-east-1.on.aws",
      },
      query_string_parameters: {},
      body: Buffer.from(CLAUDE_BODY).toString("base64"),
      is_base64_encoded: true,
    } as unknown as LambdaEvent;
    await expect(handler(latticeV1, context())).rejects.toThrow(/event structure version is V1.*V2/);
    expect(lines.filter((l) => l.level === "error").map((l) => l.eventKeys)).toEqual([
      ["raw_path", "method", "headers", "query_string_parameters", "body", "is_base64_encoded"],
    ]);
  });

  it("answers a GET with a body as the Node server does: 405 on a hook route, /healthz as usual", async () => {
    const { handler } = handlerWithLog();
    const get = (event: V2Event) =>
      ({
        ...event,
        requestContext: { ...event.requestContext, http: { ...event.requestContext.http, method: "GET" } },
      }) as V2Event;
    const hook = await handler(get(HTTP_API), context());
    expect(hook.statusCode).toBe(405);
    expect(hook.headers?.allow).toBe("POST");
    const rest = await handler({ ...REST, httpMethod: "GET" } as LambdaEvent, context());
    expect(rest.statusCode).toBe(405);
    const health = await handler({ ...HEALTHZ, body: "{}" } as V2Event, context());
    expect([health.statusCode, JSON.parse(health.body).status]).toEqual([200, "ok"]);
  });

  it("reads a header with a non-ASCII character as Node does: a Bearer token it does not know, not a malformed header", async () => {
    const { handler } = handlerWithLog();
    for (const value of ["Bearer t\u00e9k", "Bearer t\ud800k"]) {
      const event = { ...HTTP_API, headers: { ...HTTP_API.headers, authorization: value } } as V2Event;
      const res = await handler(event, context());
      expect([res.statusCode, errorOf(res)]).toEqual([200, "AUTH_UNKNOWN_TOKEN"]);
      const rest = await handler(
        {
          ...REST,
          multiValueHeaders: {
            ...(REST as { multiValueHeaders: object }).multiValueHeaders,
            Authorization: [value],
          },
        } as LambdaEvent,
        context(),
      );
      expect([rest.statusCode, errorOf(rest)]).toEqual([200, "AUTH_UNKNOWN_TOKEN"]);
    }
  });

  it("reads a VPC Lattice event's (structure V2) header lists as the other events' headers: a non-ASCII one, a GET's body", async () => {
    const { lines, handler } = handlerWithLog();
    const json = { "content-type": ["application/json"] };
    const known = await handler(
      lattice(
        "POST",
        "/v1/hooks/claude-code",
        {
          ...json,
          authorization: ["Bearer harness-secret-123"],
          "user-agent": ["h\u00e9-agent/1.0"],
        },
        CLAUDE_BODY,
      ),
      context(),
    );
    expect([
      known.statusCode,
      errorOf(known),
      JSON.parse(known.body).hookSpecificOutput?.permissionDecision,
    ]).toEqual([200, undefined, "deny"]);
    const unknown = await handler(
      lattice("POST", "/v1/hooks/claude-code", { ...json, authorization: ["Bearer t\u00e9k"] }, CLAUDE_BODY),
      context(),
    );
    expect([unknown.statusCode, errorOf(unknown)]).toEqual([200, "AUTH_UNKNOWN_TOKEN"]);
    expect(lines.filter((l) => l.msg === "decision").map((l) => l.error)).toEqual([
      undefined,
      "AUTH_UNKNOWN_TOKEN",
    ]);
    // A GET with a body is answered without it, as Node answers it.
    const health = await handler(lattice("GET", "/healthz", {}, "{}"), context());
    expect([health.statusCode, JSON.parse(health.body).status]).toEqual([200, "ok"]);
  });

  it("reads a VPC Lattice event's (structure V2) query parameters, which hono's adapter drops", async () => {
    const { handler } = handlerWithLog();
    const json = { "content-type": ["application/json"] };
    // Read without its query, `client=nope` was no client to refuse, and the simulation ran.
    const refused = await handler(
      lattice("POST", "/v1/simulate", json, CLAUDE_BODY, { client: ["nope"] }),
      context(),
    );
    expect([refused.statusCode, JSON.parse(refused.body).error.code]).toEqual([400, "UNKNOWN_CLIENT"]);
    // A value the user guide's older form gives as a string, and one that needs escaping.
    const deepagents = await handler(
      lattice("GET", "/v1/whoami", { authorization: ["Bearer nope"] }, undefined, {
        client: "deepagents",
        "x&y": ["a=b #c"],
      }),
      context(),
    );
    expect([deepagents.statusCode, JSON.parse(deepagents.body).error.message]).toEqual([
      401,
      expect.stringContaining("HOOKGATE_AUTH"),
    ]);
    // A value holding `&` and `=` is that value: put in unescaped, it would name another client.
    const claude = await handler(
      lattice("GET", "/v1/whoami", { authorization: ["Bearer nope"] }, undefined, {
        note: ["x&client=deepagents"],
        client: ["claude-code"],
      }),
      context(),
    );
    expect(JSON.parse(claude.body).error.message).not.toContain("HOOKGATE_AUTH");
  });

  it("answers a hook whose header a web Request refuses with a decision naming the header, never its value", async () => {
    const { lines, handler } = handlerWithLog();
    const errors = vi.spyOn(console, "error").mockImplementation(() => {});
    try {
      for (const headers of [
        { ...HTTP_API.headers, "x-odd": "a\nb" },
        { ...HTTP_API.headers, "x odd": "a" },
        { ...HTTP_API.headers, authorization: "Bearer sk-secret\r\nx" },
      ]) {
        const res = await handler({ ...HTTP_API, headers } as V2Event, context());
        expect([res.statusCode, errorOf(res)]).toEqual([200, "BODY_UNREADABLE"]);
        const body = decided(res);
        expect(body.hookSpecificOutput).toMatchObject({
          hookEventName: "PreToolUse",
          permissionDecision: "deny",
        });
        expect(body.systemMessage).toMatch(
          /the Lambda event's header "(x-odd|x odd|authorization)" is not one an HTTP request can carry/,
        );
        expect(res.body).not.toContain("sk-secret");
      }
      expect(lines.filter((l) => l.msg === "decision").map((l) => l.error)).toEqual(
        Array(3).fill("BODY_UNREADABLE"),
      );
      // Nothing logs the refused value: hono's adapter, handed such an event, would quote it.
      const logged = [...errors.mock.calls.flat().map(String), JSON.stringify(lines)].join("\n");
      expect(logged).not.toContain("sk-secret");
      // Any other route answers as it would: a GET /healthz with such a header is healthy.
      const health = await handler(
        { ...HEALTHZ, headers: { ...HEALTHZ.headers, "x odd": "a" } } as V2Event,
        context(),
      );
      expect(health.statusCode).toBe(200);
    } finally {
      errors.mockRestore();
    }
  });
  it("simulates such an event as the refusal its hook gets, not as the request hono's adapter was left with", async () => {
    const { lines, handler } = handlerWithLog();
    const errors = vi.spyOn(console, "error").mockImplementation(() => {});
    const simulate = { ...HTTP_API, rawPath: "/v1/simulate", rawQueryString: "client=claude-code" };
    try {
      const cases = [
        // Judged as its text, this was the captured PreToolUse, denied by the policy's rule.
        [
          { ...simulate, isBase64Encoded: true },
          /marks it base64-encoded \(isBase64Encoded\), but it is not base64$/,
        ],
        // Made again without its headers, this was judged as sent with no Content-Type or token.
        [
          { ...simulate, headers: { ...simulate.headers, "x odd": "a" } },
          /the Lambda event's header "x odd" is not one an HTTP request can carry$/,
        ],
      ] as const;
      for (const [event, message] of cases) {
        const res = await handler(event as V2Event, context());
        expect([res.statusCode, errorOf(res)]).toEqual([200, "BODY_UNREADABLE"]);
        const result = decided(res) as { event: string; error: { code: string; message: string } };
        expect([result.event, result.error.code]).toEqual(["PreToolUse", "BODY_UNREADABLE"]);
        expect(result.error.message).toMatch(message);
      }
      expect(
        lines.filter((l) => l.msg === "decision"),
        "a simulation writes no audit line",
      ).toEqual([]);
    } finally {
      errors.mockRestore();
    }
  });

  it("reads a payload 2.0 event's cookies as headers: a non-ASCII one mended, one a Request refuses never quoted", async () => {
    const { lines, handler } = handlerWithLog();
    const errors = vi.spyOn(console, "error").mockImplementation(() => {});
    try {
      // The app reads no cookie: a non-ASCII one leaves the hook judged as without it.
      for (const event of [HTTP_API, FUNCTION_URL]) {
        const res = await handler({ ...event, cookies: ["session=t\u20acx"] } as V2Event, context());
        expect([res.statusCode, errorOf(res)]).toEqual([200, undefined]);
        expect(decided(res).hookSpecificOutput).toMatchObject({ permissionDecision: "deny" });
      }
      const res = await handler({ ...HTTP_API, cookies: ["session=sk-secret\r\nx"] } as V2Event, context());
      expect([res.statusCode, errorOf(res)]).toEqual([200, "BODY_UNREADABLE"]);
      expect(decided(res).systemMessage).toMatch(/the Lambda event's header "cookie" is not one/);
      expect(errors).not.toHaveBeenCalled();
      expect(JSON.stringify(lines)).not.toContain("sk-secret");
    } finally {
      errors.mockRestore();
    }
  });
});

describe("the Lambda HTTP handler behind an Application Load Balancer", () => {
  type AlbEvent = LambdaEvent & {
    httpMethod: string;
    path: string;
    headers?: Record<string, string>;
    multiValueHeaders?: Record<string, string[]>;
  };
  const ALB = fixture("alb-pre-tool-use.json") as unknown as AlbEvent;
  const ALB_MULTI = fixture("alb-multi-value-pre-tool-use.json") as unknown as AlbEvent;
  /** The headers of an answer in either shape, as one map of single values. */
  const headersOf = (res: object): Record<string, unknown> => {
    const { headers, multiValueHeaders } = res as {
      headers?: Record<string, unknown>;
      multiValueHeaders?: Record<string, unknown[]>;
    };
    return headers ?? Object.fromEntries(Object.entries(multiValueHeaders ?? {}).map(([k, v]) => [k, v[0]]));
  };

  it("answers with the statusDescription an ALB requires, in the header shape its target group sends", async () => {
    const handler = createHttpHandler({ env: { HOOKGATE_POLICY: POLICY }, logger: captureLogs().logger });
    const base64 = (event: AlbEvent) =>
      ({ ...event, body: Buffer.from(CLAUDE_BODY).toString("base64"), isBase64Encoded: true }) as AlbEvent;
    for (const event of [ALB, ALB_MULTI, base64(ALB), base64(ALB_MULTI)]) {
      const res = await handler(event, context());
      expect([res.statusCode, res.statusDescription, res.isBase64Encoded]).toEqual([200, "200 OK", false]);
      // With multi-value headers on, the ALB reads multiValueHeaders only (and headers otherwise).
      if (event.multiValueHeaders)
        expect([res.headers, res.multiValueHeaders?.["content-type"]]).toEqual([
          undefined,
          ["application/json"],
        ]);
      else
        expect([res.headers?.["content-type"], res.multiValueHeaders]).toEqual([
          "application/json",
          undefined,
        ]);
      expect(JSON.parse(res.body).hookSpecificOutput.permissionDecisionReason).toBe(
        "Writing files from a shell redirect is not allowed here",
      );
    }
    // The target group's health check (ELB-HealthChecker/2.0), pointed at /healthz, and a path that is no route.
    const check = {
      ...ALB,
      httpMethod: "GET",
      path: "/healthz",
      headers: { "user-agent": "ELB-HealthChecker/2.0" },
      body: "",
    };
    const health = await handler(check as AlbEvent, context());
    expect([health.statusCode, health.statusDescription]).toEqual([200, "200 OK"]);
    const none = await handler({ ...check, path: "/" } as AlbEvent, context());
    expect([none.statusCode, none.statusDescription]).toEqual([404, "404 Not Found"]);
  });

  it("answers an event it must make again without its headers in the ALB's shape too", async () => {
    const handler = createHttpHandler({ env: { HOOKGATE_POLICY: POLICY }, logger: captureLogs().logger });
    const errors = vi.spyOn(console, "error").mockImplementation(() => {});
    try {
      const odd = [
        { ...ALB, headers: { ...ALB.headers, "x odd": "a" } },
        { ...ALB_MULTI, multiValueHeaders: { ...ALB_MULTI.multiValueHeaders, "x odd": ["a"] } },
      ] as AlbEvent[];
      for (const event of odd) {
        const res = await handler(event, context());
        expect([res.statusCode, res.statusDescription]).toEqual([200, "200 OK"]);
        expect(event.multiValueHeaders ? res.headers : res.multiValueHeaders).toBeUndefined();
        expect(headersOf(res)["x-hookgate-error"]).toBe("BODY_UNREADABLE");
        expect(headersOf(res)["content-type"]).toBe("application/json");
      }
    } finally {
      errors.mockRestore();
    }
  });

  it("answers within the ALB's 1 MB when two team servers' contexts, each within its 1 MiB, together are not", async () => {
    // Each answer is read whole (under the 1 MiB a downstream answer may be), and the contexts are
    // joined: 1.2 MB of answer, which the ALB replaces by a 502, and Claude Code lets the call run.
    const context600k = 'context line with "quotes" and a \\ backslash\n'.repeat(13_000);
    const team = await loopbackServer((_, res) => {
      res.setHeader("content-type", "application/json");
      res.end(
        JSON.stringify({
          hookSpecificOutput: {
            hookEventName: "PreToolUse",
            permissionDecision: "allow",
            additionalContext: context600k,
          },
        }),
      );
    });
    try {
      const forward = (id: string) => ({ id, on: "PreToolUse", forward: { url: `${team.url}/${id}` } });
      const policy = JSON.stringify({
        version: 1,
        egress: { allowedHttpHookUrls: [`${team.url}/*`], allowCidrs: ["127.0.0.1/32"] },
        rules: [forward("team-a"), forward("team-b")],
      });
      const { lines, logger } = captureLogs();
      const handler = createHttpHandler({ env: { HOOKGATE_POLICY: policy }, logger });
      const res = await handler(ALB, context());
      expect(team.received.map((r) => r.url)).toEqual(["/team-a", "/team-b"]);
      // What the ALB reads is the whole invocation result, the body a JSON string inside it.
      expect(Buffer.byteLength(JSON.stringify(res))).toBeLessThan(1_000_000);
      // Cut to fit the 900,000 bytes an answer may take, not further.
      expect(Buffer.byteLength(JSON.stringify(res.body))).toBeGreaterThan(899_000);
      expect([res.statusCode, res.statusDescription]).toEqual([200, "200 OK"]);
      const specific = JSON.parse(res.body).hookSpecificOutput;
      expect(specific.permissionDecision).toBe("allow");
      expect(specific.additionalContext).toMatch(/^context line with "quotes".*…\[truncated by hookgate\]$/s);
      const audit = lines.find((l) => l.msg === "decision");
      expect(audit).toMatchObject({ decision: "allow", answerTruncated: true });
    } finally {
      await team.close();
    }
  });
});

describe("a remote rule on the Lambda HTTP handler", () => {
  let hanging: LoopbackServer;
  beforeAll(async () => {
    hanging = await loopbackServer(() => undefined);
  });
  afterAll(async () => {
    await hanging?.close();
  });

  it("ends the decision before the invocation times out, answering the rule's onError", async () => {
    // A forward rule allowed 5 s under a 6 s deadline, to a server that never answers, in an
    // invocation with 1.5 s left: waiting 5 s would end in Lambda's timeout, a 5xx that Claude
    // Code reads as "let the action through". The deadline is the invocation's 1.5 s less the
    // 0.5 s kept for returning.
    const policy = JSON.stringify({
      version: 1,
      defaults: { deadlineMs: 6000 },
      egress: { allowedHttpHookUrls: [`${hanging.url}/*`], allowCidrs: ["127.0.0.1/32"] },
      rules: [
        {
          id: "team-server",
          on: "PreToolUse",
          forward: { url: `${hanging.url}/hook`, timeoutMs: 5000, onError: "deny" },
        },
      ],
    });
    const { lines, logger } = captureLogs();
    const handler = createHttpHandler({ env: { HOOKGATE_POLICY: policy }, logger, clock: fakeClock });
    // Time moves once the forward request is at the server, which never answers it.
    const { value: res, ms } = await onFakeTime(
      () => handler(HTTP_API, context(1500)),
      () => hanging.received.length > 0,
    );
    expect(res.statusCode).toBe(200);
    expect(JSON.parse(res.body).hookSpecificOutput.permissionDecision).toBe("deny");
    // Answered when that 1,000 ms ran out, less the 20 ms kept for rendering the answer: not at
    // the rule's 5 s, nor the policy's 6 s.
    expect(ms).toBe(980);
    expect(hanging.received.map((r) => r.url)).toEqual(["/hook"]);
    const audit = lines.find((l) => l.msg === "decision");
    const pending = (
      audit?.pending as { rule: string; outcome?: string; detail?: string }[] | undefined
    )?.[0];
    expect(pending).toMatchObject({ rule: "team-server", outcome: "FORWARD_TIMEOUT", onError: "deny" });
    expect(pending?.detail).toMatch(/^no answer within 980 ms, what was left of the request's deadline/);
  });

  it.each([
    ["the shorter invocation first", [1500, 29_000]],
    ["the longer invocation first", [29_000, 1500]],
  ])(
    "bounds each of two invocations that overlap in one environment by its own time left (%s)",
    async (_, remaining) => {
      // Lambda Managed Instances hand one environment many invocations at once, sharing the
      // handler. Each decision's deadline is its own invocation's time left: the one with 1.5 s
      // answers its rule's onError after 1,000 ms less the 20 ms kept for rendering, the one with
      // 29 s waits for the rule's own 5 s timeout. One invocation's time left read as the other's
      // ran the short one into its function timeout (a 5xx, "allow") or cut the long one short.
      const policy = JSON.stringify({
        version: 1,
        defaults: { deadlineMs: 6000 },
        egress: { allowedHttpHookUrls: [`${hanging.url}/*`], allowCidrs: ["127.0.0.1/32"] },
        rules: [
          {
            id: "team-server",
            on: "PreToolUse",
            forward: { url: `${hanging.url}/hook`, timeoutMs: 5000, onError: "deny" },
          },
        ],
      });
      const handler = createHttpHandler({
        env: { HOOKGATE_POLICY: policy },
        logger: captureLogs().logger,
        clock: fakeClock,
      });
      const before = hanging.received.length;
      const timed = async (remainingMs: number) => {
        const start = Date.now();
        const res = await handler(HTTP_API, context(remainingMs));
        return {
          decision: JSON.parse(res.body).hookSpecificOutput.permissionDecision,
          ms: Date.now() - start,
        };
      };
      // Time moves once both forward requests are at the server, which answers neither.
      const { value } = await onFakeTime(
        () => Promise.all(remaining.map(timed)),
        () => hanging.received.length - before >= 2,
      );
      expect(value).toEqual(remaining.map((ms) => ({ decision: "deny", ms: ms === 1500 ? 980 : 5000 })));
    },
  );
});

describe("the Lambda HTTP handler with a configuration that does not load", () => {
  const BROKEN = JSON.stringify({ version: 1, rules: [{ id: "x", on: "PreToolUse", decide: "maybe" }] });

  it("answers agent routes 2xx fail-closed naming the problem, /healthz 500, and logs it once", async () => {
    const { lines, logger } = captureLogs();
    const handler = createHttpHandler({ env: { HOOKGATE_POLICY: BROKEN }, logger });

    for (const event of [HTTP_API, HTTP_API_BASE64, FUNCTION_URL]) {
      const res = await handler(event, context());
      expect(res.statusCode).toBe(200);
      expect(res.headers?.["x-hookgate-error"]).toBe("CONFIG_INVALID");
      const body = JSON.parse(res.body);
      expect(body.hookSpecificOutput.permissionDecision).toBe("deny");
      expect(body.systemMessage).toMatch(/HOOKGATE_POLICY: \$\.rules\[0\]\.decide/);
    }
    const health = await handler(HEALTHZ, context());
    expect(health.statusCode).toBe(500);
    expect(JSON.parse(health.body).error.code).toBe("CONFIG_INVALID");
    expect(lines.filter((l) => l.level === "error")).toHaveLength(1);
  });

  it("quotes the first 20 problems to the agent and counts the rest", async () => {
    const rules = Array.from({ length: 500 }, (_, i) => ({ id: `r${i}`, on: "PreToolUse", decide: "maybe" }));
    const handler = createHttpHandler({
      env: { HOOKGATE_POLICY: JSON.stringify({ version: 1, rules }) },
      logger: captureLogs().logger,
    });
    const message: string = JSON.parse((await handler(HTTP_API, context())).body).systemMessage;
    expect(message).toContain("$.rules[19].decide");
    expect(message).not.toContain("$.rules[20].decide");
    expect(message).toContain("; and 480 more (hookgate check on the policy lists them all)");
  });

  it("fails closed when no policy is given at all", async () => {
    const handler = createHttpHandler({ env: {}, bundledPolicy: undefined, logger: captureLogs().logger });
    const body = JSON.parse((await handler(HTTP_API, context())).body);
    expect(body.hookSpecificOutput.permissionDecision).toBe("deny");
    expect(body.systemMessage).toMatch(/HOOKGATE_POLICY is not set/);
  });

  it("fails closed when HOOKGATE_POLICY is not JSON", async () => {
    const handler = createHttpHandler({ env: { HOOKGATE_POLICY: "{oops" }, logger: captureLogs().logger });
    const body = JSON.parse((await handler(FUNCTION_URL, context())).body);
    expect(body.systemMessage).toMatch(/HOOKGATE_POLICY: \$: is not valid JSON/);
  });

  // The variable takes the JSON itself; "Unexpected token '/'" did not say so.
  it.each(["/var/task/policy.json", "./policy.json", "policy.json", "C:\\hookgate\\policy.json"])(
    "says HOOKGATE_POLICY takes the policy's JSON, not a path, when it holds %s",
    async (path) => {
      const handler = createHttpHandler({ env: { HOOKGATE_POLICY: path }, logger: captureLogs().logger });
      const body = JSON.parse((await handler(FUNCTION_URL, context())).body);
      expect(body.hookSpecificOutput.permissionDecision).toBe("deny");
      expect(body.systemMessage).toContain(
        "HOOKGATE_POLICY holds what looks like a file's path, but takes the policy's JSON itself",
      );
      expect(body.systemMessage).toContain("HOOKGATE_POLICY_FILE");
    },
  );

  it("says where a policy stops being JSON without quoting it: every caller sees the message", async () => {
    const secret = "sk-ant-api03-unquoted0123456789";
    const broken = `{"version": 1,\n "models": {"m": {"apiKey": ${secret}}}}`;
    const { lines, logger } = captureLogs();
    const handler = createHttpHandler({ env: { HOOKGATE_POLICY: broken }, logger });
    const answer = (await handler(FUNCTION_URL, context())).body;
    expect(JSON.parse(answer).systemMessage).toMatch(
      /HOOKGATE_POLICY: \$: is not valid JSON: Unexpected token 's' at line 2, column 29/,
    );
    expect(answer + JSON.stringify(lines)).not.toMatch(/sk-ant|unquoted/);
  });
});

describe("notify jobs from the Lambda HTTP handler", () => {
  let server: Server;
  let client: SQSClient;
  let queueUrl: string;

  beforeAll(async () => {
    server = await createSqsServer({ port: 0, hostname: "127.0.0.1" });
    client = createSqsClientForLocal(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
    queueUrl =
      (await client.send(new CreateQueueCommand({ QueueName: "hookgate-lambda-http" }))).QueueUrl ?? "";
  });
  afterAll(async () => {
    await client?.send(new DeleteQueueCommand({ QueueUrl: queueUrl }));
    client?.destroy();
    await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  });

  const notifying = JSON.stringify({
    version: 1,
    rules: [{ id: "audit", on: "PreToolUse", decide: "deny", reason: "audited", notify: ["audit"] }],
    sinks: { audit: { type: "webhook", url: "https://hooks.example.com/audit" } },
  });

  it("has the job on the queue when the invocation returns, since Lambda freezes after that", async () => {
    const handler = createHttpHandler({
      env: { HOOKGATE_POLICY: notifying, HOOKGATE_QUEUE_URL: queueUrl },
      newId: () => "d-1",
      sqsClient: async () => client,
      logger: captureLogs().logger,
    });
    const res = await handler(HTTP_API, context());
    expect(JSON.parse(res.body).hookSpecificOutput.permissionDecision).toBe("deny");

    const got = await client.send(new ReceiveMessageCommand({ QueueUrl: queueUrl, WaitTimeSeconds: 0 }));
    expect(got.Messages).toHaveLength(1);
    const envelope = JSON.parse(got.Messages?.[0]?.Body ?? "null");
    expect(envelope).toMatchObject({
      id: "evt_d-1.audit",
      body: { sink: "audit", notification: { eventName: "PreToolUse", decision: "deny", ruleId: "audit" } },
    });
  });

  it("puts an event too big for one SQS message on the queue cut to fit, not lost", async () => {
    // A PostToolUse of 1.2 MB under a body limit raised towards Lambda's 6 MB: the job would be
    // over SQS's 1 MiB, refused before any call, and only logged.
    const policy = JSON.stringify({
      version: 1,
      defaults: { maxBodyBytes: 4 * 1024 * 1024 },
      rules: [{ id: "audit-output", on: "PostToolUse", notify: ["audit"] }],
      sinks: { audit: { type: "webhook", url: "https://hooks.example.com/audit" } },
    });
    // Cutting the job (about 14 tries of 1 MiB of JSON) and sending a 1 MiB request can outlast
    // the 1 s the handler waits for its send once the answer is ready (on a loaded machine the
    // test failed so, the job sent after the handler returned): the test waits for the send
    // itself, through a client of its own, not for the clock. A job refused before any call ends
    // as an enqueue failed line, which ends the wait too.
    const { lines, logged, end, logger } = captureLogsUntil(ENQUEUE_FAILED);
    const watched = createSqsClientForLocal(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
    watched.middlewareStack.add(
      (next, context) => async (args) => {
        try {
          return await next(args);
        } finally {
          // After the notifier has seen the answer and logged what it failed, if anything.
          if (context.commandName === "SendMessageBatchCommand") setImmediate(end);
        }
      },
      { step: "initialize", name: "noteSendEnded" },
    );
    const handler = createHttpHandler({
      env: { HOOKGATE_POLICY: policy, HOOKGATE_QUEUE_URL: queueUrl },
      newId: () => "d-big",
      sqsClient: async () => watched,
      logger,
    });
    const output = Array.from({ length: 300 }, (_, i) => `${i} ${"o".repeat(3990)}`);
    const body = JSON.stringify({
      session_id: "s1",
      transcript_path: "/tmp/s1.jsonl",
      cwd: "/home/dev/proj",
      hook_event_name: "PostToolUse",
      tool_name: "Bash",
      tool_input: { command: "cat build.log" },
      tool_response: { output },
    });
    expect(body.length).toBeGreaterThan(1024 * 1024);
    try {
      const res = await handler({ ...HTTP_API, body, isBase64Encoded: false } as V2Event, context());
      expect(res.statusCode).toBe(200);
      await logged;
      // Whether the send outlasted the answer's wait is the machine's speed, not this test's point.
      expect(lines.filter((l) => l.level !== "info" && !stillRunning([l]))).toEqual([]);
      const got = await client.send(new ReceiveMessageCommand({ QueueUrl: queueUrl, WaitTimeSeconds: 0 }));
      expect(got.Messages).toHaveLength(1);
      const envelope = JSON.parse(got.Messages?.[0]?.Body ?? "null");
      expect(envelope.id).toBe("evt_d-big.audit");
      expect(envelope.body.notification.event.tool_response.output.at(-1)).toMatch(
        /…\[truncated by hookgate\]$/,
      );
    } finally {
      watched.destroy();
    }
  });

  /** A handler whose SQS send never settles: an answer can only come from the wait it schedules. */
  const hangingHandler = () => {
    const { lines, logger } = captureLogs();
    const handler = createHttpHandler({
      env: { HOOKGATE_POLICY: notifying, HOOKGATE_QUEUE_URL: queueUrl },
      sqsClient: () => new Promise<never>(() => undefined),
      logger,
      clock: fakeClock,
    });
    return { handler, lines };
  };
  /**
   * The answer to `event` in an invocation with `remainingMs` left, and how long the handler held
   * it, on fake time: the decision takes none, so `heldMs` is the wait for the send, exactly.
   */
  async function heldFor(handler: HttpHandler, event: V2Event, remainingMs: number) {
    const { value: res, ms } = await onFakeTime(() => handler(event, context(remainingMs)));
    return { decision: JSON.parse(res.body).hookSpecificOutput?.permissionDecision, heldMs: ms };
  }
  const stillRunningLine = (l: Captured) =>
    l.msg === "deferred work still running when the invocation had to answer";
  const stillRunning = (lines: Captured[]) => lines.some(stillRunningLine);

  it("answers anyway when the send outlasts the invocation's time, and says so, naming the event and its sinks", async () => {
    const { handler, lines } = hangingHandler();
    // The invocation's remaining 600 ms less the 500 ms kept back for returning (less the time
    // the decision took, none on fake time: the request's deadline is capped by the same time left).
    const { decision, heldMs } = await heldFor(handler, HTTP_API, 600);
    expect(decision).toBe("deny");
    expect(heldMs).toBe(100);
    expect(stillRunning(lines)).toBe(true);
    // An alarm on the line leads to the decision whose notification may be lost.
    const line = lines.find((l) => l.msg === "deferred work still running when the invocation had to answer");
    expect(line).toMatchObject({ tasks: 1, decisionIds: [expect.any(String)], sinks: ["audit"] });
    const audited = lines.find((l) => l.msg === "decision");
    expect(line?.decisionIds).toEqual([audited?.decisionId]);
  });

  it("holds the answer for a slow send no longer than a client waits, whatever the invocation has left", async () => {
    const { handler, lines } = hangingHandler();
    // 29 s left in the invocation, but the answer waits at most 1,000 ms once it is ready.
    const { decision, heldMs } = await heldFor(handler, HTTP_API, 29_000);
    expect(decision).toBe("deny");
    expect(heldMs).toBe(1000);
    expect(stillRunning(lines)).toBe(true);
  });

  it("holds the answer for a slow send no later than the request's own deadline", async () => {
    // The hook's timeout is 1 s (x-hookgate-timeout, as `hookgate init` writes it): the deadline
    // is 750 ms after the request began, so the wait is shorter than the usual 1,000 ms.
    const event = { ...HTTP_API, headers: { ...HTTP_API.headers, "x-hookgate-timeout": "1" } } as V2Event;
    const { decision, heldMs } = await heldFor(hangingHandler().handler, event, 29_000);
    expect(decision).toBe("deny");
    expect(heldMs).toBe(750);
  });

  it("holds the answer for a slow send past the policy's deadline when the hook's timeout is known to be later", async () => {
    // A decision may use all of its 100 ms deadline (a slow forward or prompt rule); the client
    // still waits until its own timeout, 10 s here, so the send gets its usual 1,000 ms. Without
    // the header only the policy's deadline is known, and the send gets what is left of it.
    const shortDeadline = JSON.stringify({ ...JSON.parse(notifying), defaults: { deadlineMs: 100 } });
    const handler = createHttpHandler({
      env: { HOOKGATE_POLICY: shortDeadline, HOOKGATE_QUEUE_URL: queueUrl },
      sqsClient: () => new Promise<never>(() => undefined),
      logger: captureLogs().logger,
      clock: fakeClock,
    });
    const timed = { ...HTTP_API, headers: { ...HTTP_API.headers, "x-hookgate-timeout": "10" } } as V2Event;
    const known = await heldFor(handler, timed, 29_000);
    expect(known.decision).toBe("deny");
    expect(known.heldMs).toBe(1000);
    const unknown = await heldFor(handler, HTTP_API, 29_000);
    expect(unknown.decision).toBe("deny");
    expect(unknown.heldMs).toBe(100);
  });

  it("does not hold a later answer for a send an earlier invocation left running", async () => {
    const { handler } = hangingHandler();
    expect((await heldFor(handler, HTTP_API, 600)).heldMs).toBe(100);
    // The same warm container: a request that defers nothing is answered without any wait.
    expect((await heldFor(handler, HEALTHZ, 29_000)).heldMs).toBe(0);
  });

  it.each([
    ["the slow one first", true],
    ["the quick one first", false],
  ])(
    "holds each of two invocations that overlap in one environment for its own sends alone (%s)",
    async (_, slowFirst) => {
      // Lambda Managed Instances hand one environment many invocations at once, sharing the
      // handler. Here one invocation's send hangs and the other's is answered at once: the quick
      // one returns once its own job is on the queue (the environment may freeze after that), not
      // when the slow one's wait ends, and the slow one, 600 ms left, waits its own 100 ms and
      // names only its own decision as still running. Both orders: a send left to the first
      // invocation's wait, or to the latest's, had one of them return before its job was on the
      // queue or wait for the other's.
      const slowSession = "0c0ffee0-0000-4000-8000-000000000001";
      const withSession = (session: string) =>
        ({
          ...HTTP_API,
          body: JSON.stringify({ ...JSON.parse(CLAUDE_BODY), session_id: session }),
        }) as V2Event;
      const held = createSqsClientForLocal(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
      let quickSent = false;
      held.middlewareStack.add(
        (next, context) => async (args) => {
          if (context.commandName !== "SendMessageBatchCommand") return next(args);
          if (JSON.stringify(args.input).includes(slowSession)) return new Promise<never>(() => undefined);
          const out = await next(args);
          quickSent = true;
          return out;
        },
        { step: "initialize", name: "holdSlowSession" },
      );
      const { lines, logger } = captureLogs();
      const handler = createHttpHandler({
        env: { HOOKGATE_POLICY: notifying, HOOKGATE_QUEUE_URL: queueUrl },
        newId: counter(),
        sqsClient: async () => held,
        logger,
        clock: fakeClock,
      });
      const timed = async (event: V2Event, remainingMs: number) => {
        const start = Date.now();
        const res = await handler(event, context(remainingMs));
        return {
          decision: JSON.parse(res.body).hookSpecificOutput.permissionDecision,
          ms: Date.now() - start,
        };
      };
      const slow = () => timed(withSession(slowSession), 600);
      // Whether its own job was on the queue when it returned.
      const quick = async () => ({ ...(await timed(HTTP_API, 29_000)), sent: quickSent });
      try {
        // Time moves only once the quick send is on the queue.
        const { value } = await onFakeTime(
          () =>
            slowFirst
              ? Promise.all([slow(), quick()])
              : Promise.all([quick(), slow()]).then(([q, s]) => [s, q]),
          () => quickSent,
        );
        expect(value).toEqual([
          { decision: "deny", ms: 100 },
          { decision: "deny", ms: 0, sent: true },
        ]);
        const decided = lines.filter((l) => l.msg === "decision");
        const slowDecision = decided.find((l) => JSON.stringify(l).includes(slowSession))?.decisionId;
        expect(slowDecision).toEqual(expect.any(String));
        expect(lines.filter(stillRunningLine)).toEqual([
          expect.objectContaining({ tasks: 1, decisionIds: [slowDecision], sinks: ["audit"] }),
        ]);
        const got = await client.send(
          new ReceiveMessageCommand({ QueueUrl: queueUrl, WaitTimeSeconds: 0, MaxNumberOfMessages: 10 }),
        );
        expect(got.Messages).toHaveLength(1);
        for (const m of got.Messages ?? [])
          await client.send(new DeleteMessageCommand({ QueueUrl: queueUrl, ReceiptHandle: m.ReceiptHandle }));
      } finally {
        held.destroy();
      }
    },
  );

  it("names in its enqueue failed line only the sinks whose jobs an SQS send in part did not put on the queue", async () => {
    // Twelve sinks are two SendMessageBatch requests; the first fails as a whole. The line listed
    // all twelve sinks, though two jobs were on the queue.
    const partial = createSqsClientForLocal(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
    let requests = 0;
    partial.middlewareStack.add(
      (next, context) => async (args) => {
        if (context.commandName === "SendMessageBatchCommand" && ++requests === 1)
          throw Object.assign(new Error("socket hang up"), { code: "ECONNRESET" });
        return next(args);
      },
      { step: "initialize", name: "hangUpFirstSend" },
    );
    const url =
      (await partial.send(new CreateQueueCommand({ QueueName: "hookgate-lambda-http-partial" }))).QueueUrl ??
      "";
    try {
      const sinks = Array.from({ length: 12 }, (_, i) => `s${String(i).padStart(2, "0")}`);
      const policy = JSON.stringify({
        version: 1,
        rules: [{ id: "audit", on: "PreToolUse", decide: "deny", reason: "audited", notify: sinks }],
        sinks: Object.fromEntries(
          sinks.map((s) => [s, { type: "webhook", url: `https://hooks.example.com/${s}` }]),
        ),
      });
      const { lines, logged, logger } = captureLogsUntil(ENQUEUE_FAILED);
      const handler = createHttpHandler({
        env: { HOOKGATE_POLICY: policy, HOOKGATE_QUEUE_URL: url },
        sqsClient: async () => partial,
        logger,
      });
      const res = await handler(HTTP_API, context());
      expect(JSON.parse(res.body).hookSpecificOutput.permissionDecision).toBe("deny");
      // The send may outlast the handler's wait on a loaded machine: its line is waited for.
      await logged;
      expect(lines.filter((l) => l.msg === ENQUEUE_FAILED)).toEqual([
        expect.objectContaining({ sinks: sinks.slice(0, 10), sent: ["s10", "s11"] }),
      ]);
      const got = await client.send(
        new ReceiveMessageCommand({ QueueUrl: url, WaitTimeSeconds: 0, MaxNumberOfMessages: 10 }),
      );
      expect(got.Messages?.map((m) => JSON.parse(m.Body ?? "null").body.sink).sort()).toEqual(["s10", "s11"]);
    } finally {
      await client.send(new DeleteQueueCommand({ QueueUrl: url }));
      partial.destroy();
    }
  });

  it("answers a notifying hook without HOOKGATE_QUEUE_URL, and says the variable is what is missing", async () => {
    const notifying = JSON.stringify({
      ...JSON.parse(POLICY),
      rules: [{ id: "audit", on: "*", notify: ["audit"] }, ...JSON.parse(POLICY).rules],
      sinks: { audit: { type: "webhook", url: "https://hooks.example.com/audit" } },
    });
    const { lines, logger } = captureLogs();
    const handler = createHttpHandler({
      env: { HOOKGATE_POLICY: notifying },
      sqsClient: async () => client,
      logger,
    });
    const res = await handler(HTTP_API, context());
    expect(res.statusCode).toBe(200);
    expect(JSON.parse(res.body).hookSpecificOutput.permissionDecision).toBe("deny");
    // Once when the policy loads, and with each event whose jobs it could not enqueue.
    expect(lines.filter((l) => l.level === "error").map((l) => [l.msg, l.error ?? l.fix])).toEqual([
      // With what to set, as /healthz says it.
      [
        "notify rules will fail: HOOKGATE_QUEUE_URL is not set",
        "set HOOKGATE_QUEUE_URL in the HTTP function's environment to the delivery queue's URL (serverless.yml sets it to the DeliveryQueue of infra/aws/template.yaml)",
      ],
      // With what to set, as /healthz says it: it said only that the variable is not set.
      [
        ENQUEUE_FAILED,
        "HOOKGATE_QUEUE_URL is not set: set HOOKGATE_QUEUE_URL in the HTTP function's environment to the delivery queue's URL (serverless.yml sets it to the DeliveryQueue of infra/aws/template.yaml)",
      ],
    ]);
  });

  it("fails /healthz's delivery, as doctor reads it, under a notifying policy without HOOKGATE_QUEUE_URL", async () => {
    // /healthz said ok, and `hookgate doctor` passed, while every notify event's send failed.
    const notifying = JSON.stringify({
      ...JSON.parse(POLICY),
      rules: [{ id: "audit", on: "*", notify: ["audit"] }, ...JSON.parse(POLICY).rules],
      sinks: { audit: { type: "webhook", url: "https://hooks.example.com/audit" } },
    });
    const health = async (env: Record<string, string>) => {
      const handler = createHttpHandler({ env, sqsClient: async () => client, logger: captureLogs().logger });
      const res = await handler(HEALTHZ, context());
      expect(res.statusCode).toBe(200);
      return JSON.parse(res.body) as Record<string, unknown>;
    };
    expect(await health({ HOOKGATE_POLICY: notifying })).toMatchObject({
      status: "ok",
      delivery: "failing",
      deliveryError: "HOOKGATE_QUEUE_URL is not set",
      deliveryFix: expect.stringContaining("set HOOKGATE_QUEUE_URL in the HTTP function's environment"),
    });
    expect(await health({ HOOKGATE_POLICY: notifying, HOOKGATE_QUEUE_URL: queueUrl })).not.toHaveProperty(
      "delivery",
    );
    expect(await health({ HOOKGATE_POLICY: POLICY })).not.toHaveProperty("delivery");
  });

  it("never builds an SQS client for a decision that notifies nobody", async () => {
    let built = 0;
    const handler = createHttpHandler({
      env: { HOOKGATE_POLICY: POLICY, HOOKGATE_QUEUE_URL: queueUrl },
      sqsClient: async () => {
        built++;
        return client;
      },
      logger: captureLogs().logger,
    });
    await handler(HTTP_API, context());
    await handler(HEALTHZ, context());
    expect(built).toBe(0);
  });
});

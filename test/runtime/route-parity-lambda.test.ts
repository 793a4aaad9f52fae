/**
 * The route parity table (test/support/route-table.ts) against the Lambda HTTP handler, each
 * request as API Gateway's HTTP API, a Function URL, a REST API and an ALB target group (with
 * multi-value headers on and off) hand it over (test/fixtures/lambda/):
 * held to the answers and log lines `serve` gives (test/fixtures/route-parity.json), as the
 * Worker is in workerd (test/e2e/route-parity.test.ts). Lambda hands the handler the whole request
 * at once, so the connection the client keeps is API Gateway's, not the handler's.
 */
import { readFileSync } from "node:fs";
import type { LambdaEvent } from "hono/aws-lambda";
import { describe, expect, it } from "vitest";
import { createJsonLogger } from "../../src/adapters/log/json-lines.js";
import { createHttpHandler } from "../../src/entry/lambda-http.js";
import { lambdaContext } from "../support/lambda-context.js";
import {
  expectedOn,
  type Observed,
  observe,
  PARITY_POLICY,
  ROUTE_CASES,
  type RouteCase,
} from "../support/route-table.js";

const expected = JSON.parse(
  readFileSync(new URL("../fixtures/route-parity.json", import.meta.url), "utf8"),
) as Record<string, Observed>;
const fixture = (name: string) =>
  JSON.parse(readFileSync(new URL(`../fixtures/lambda/${name}`, import.meta.url), "utf8")) as {
    requestContext: { domainName: string; http: Record<string, unknown> };
  };

const context = lambdaContext();

/**
 * The path as API Gateway's HTTP API hands it over: percent-decoded (`/v1/hooks%2Fclaude-code`
 * arrives as `/v1/hooks/claude-code` in `rawPath` and `requestContext.http.path`), cut at a
 * decoded `?`. A Function URL, as a REST API, hands the path over as it was sent.
 */
function decodedPath(path: string): string {
  const decoded = path.replace(/(?:%[0-9A-Fa-f]{2})+/g, (run) => {
    try {
      return decodeURIComponent(run);
    } catch {
      return run;
    }
  });
  const cut = decoded.indexOf("?");
  return cut < 0 ? decoded : decoded.slice(0, cut);
}

/**
 * The case as a payload 2.0 event shaped like `base`: header names lower-cased, a repeated header's
 * values joined with commas (as both services join them), the body base64 where it is bytes, the
 * path decoded where the service decodes it.
 */
function eventOf(c: RouteCase, base: ReturnType<typeof fixture>, decodes = false): LambdaEvent {
  const at = c.path.indexOf("?");
  const path = at < 0 ? c.path : c.path.slice(0, at);
  const rawPath = decodes ? decodedPath(path) : path;
  const headers: Record<string, string> = { host: base.requestContext.domainName };
  for (const [name, value] of c.headers) {
    const key = name.toLowerCase();
    headers[key] = headers[key] === undefined || key === "host" ? value : `${headers[key]},${value}`;
  }
  const body =
    c.bodyBase64 !== undefined
      ? { body: c.bodyBase64, isBase64Encoded: true }
      : c.body
        ? { body: c.body, isBase64Encoded: false }
        : { isBase64Encoded: false };
  return {
    ...base,
    rawPath,
    rawQueryString: at < 0 ? "" : c.path.slice(at + 1),
    headers,
    requestContext: {
      ...base.requestContext,
      http: { ...base.requestContext.http, method: c.method, path: rawPath },
    },
    body: undefined,
    ...body,
  } as unknown as LambdaEvent;
}

/** The case's path and query as sent (REST APIs and ALBs keep escapes), and its body as `emptyBody` where it has none. */
function parts(c: RouteCase, emptyBody: string | null) {
  const at = c.path.indexOf("?");
  const body =
    c.bodyBase64 !== undefined
      ? { body: c.bodyBase64, isBase64Encoded: true }
      : { body: c.body || emptyBody, isBase64Encoded: false };
  const query: Record<string, string[]> = {};
  for (const [k, v] of new URLSearchParams(at < 0 ? "" : c.path.slice(at + 1)))
    query[k] = [...(query[k] ?? []), v];
  return { path: at < 0 ? c.path : c.path.slice(0, at), query, body };
}

/** Each header's values in wire order, its name as `name` writes it; `host` the service's. */
function valuesOf(c: RouteCase, host: string, name: (n: string) => string): Record<string, string[]> {
  const out: Record<string, string[]> = { [name("host")]: [host] };
  for (const [n, v] of c.headers) {
    const key = name(n);
    out[key] = key === name("host") ? [v] : [...(out[key] ?? []), v];
  }
  return out;
}
/** A multi-value map as its single-value twin: the last value of each, as the services keep it. */
const lastOf = (m: Record<string, string[]>) =>
  Object.fromEntries(Object.entries(m).map(([k, v]) => [k, v.at(-1) as string]));

/** A REST API (payload 1.0) event: headers as the client cased them in both maps, `null` for what is absent. */
function restEventOf(c: RouteCase): LambdaEvent {
  const { path, query, body } = parts(c, null);
  const multi = valuesOf(c, "r4n8v2k6cd.execute-api.us-east-1.amazonaws.com", (n) =>
    n.replace(/(^|-)[a-z]/g, (m) => m.toUpperCase()),
  );
  const queried = Object.keys(query).length > 0;
  return {
    ...fixture("rest-api-v1-pre-tool-use.json"),
    path,
    httpMethod: c.method,
    headers: lastOf(multi),
    multiValueHeaders: multi,
    queryStringParameters: queried ? lastOf(query) : null,
    multiValueQueryStringParameters: queried ? query : null,
    ...body,
  } as unknown as LambdaEvent;
}

/**
 * An ALB target group's event, with multi-value headers on or off: names lower-cased, and with
 * them off only the last of a repeated header or query parameter (the ELB user guide).
 */
function albEventOf(c: RouteCase, multiValue: boolean): LambdaEvent {
  const { path, query, body } = parts(c, "");
  const multi = valuesOf(c, "hookgate-alb-1234567890.us-east-1.elb.amazonaws.com", (n) => n.toLowerCase());
  const base = fixture(multiValue ? "alb-multi-value-pre-tool-use.json" : "alb-pre-tool-use.json");
  const maps = multiValue
    ? { multiValueHeaders: multi, multiValueQueryStringParameters: query }
    : { headers: lastOf(multi), queryStringParameters: lastOf(query) };
  return { ...base, path, httpMethod: c.method, ...maps, ...body } as unknown as LambdaEvent;
}

/** Whether the case sends a header twice, which an ALB without multi-value headers hands over once. */
const repeatsAHeader = (c: RouteCase) =>
  new Set(c.headers.map(([n]) => n.toLowerCase())).size < c.headers.length;

const SHAPES = {
  "HTTP API": { base: fixture("http-api-v2-pre-tool-use.json"), decodes: true },
  "Function URL": { base: fixture("function-url-pre-tool-use.json"), decodes: false },
};

describe("the route parity table on Lambda", () => {
  // The lines as the handler writes them on stdout (its logger, on another sink).
  const lines: Record<string, unknown>[] = [];
  const handler = createHttpHandler({
    env: { HOOKGATE_POLICY: JSON.stringify(PARITY_POLICY) },
    logger: createJsonLogger({ write: (line) => lines.push(JSON.parse(line) as Record<string, unknown>) }),
  });

  it.each(
    Object.entries(SHAPES).flatMap(([shape, { base, decodes }]) =>
      ROUTE_CASES.filter((c) => !(decodes && c.httpApiDecodes)).map((c) => ({
        shape,
        base,
        decodes,
        c,
        name: c.name,
      })),
    ),
  )("$shape: $name", async ({ base, decodes, c }) => {
    await handler(eventOf(ROUTE_CASES[0] as RouteCase, base), context); // the policy's own lines
    lines.length = 0;
    const res = await handler(eventOf(c, base, decodes), context);
    const headers = (res.headers ?? {}) as Record<string, string | undefined>;
    const actual = observe(c, res.statusCode, (name) => headers[name], res.body, lines);
    const onNode = expected[c.name] as Observed;
    expect(res.isBase64Encoded).toBe(false);
    expect(actual).toEqual(expectedOn("lambda", c, onNode));
    // The same fields in the same order (toEqual ignores their order).
    expect(actual.log.map((l) => Object.keys(l))).toEqual(onNode.log.map((l) => Object.keys(l)));
  });

  // The shapes whose answer and path differ from payload 2.0's: a REST API's and an ALB's.
  const OTHER_SHAPES = {
    "REST API": restEventOf,
    ALB: (c: RouteCase) => albEventOf(c, false),
    "ALB with multi-value headers": (c: RouteCase) => albEventOf(c, true),
  };
  it.each(
    Object.entries(OTHER_SHAPES).flatMap(([shape, make]) =>
      ROUTE_CASES.filter((c) => !(shape === "ALB" && repeatsAHeader(c))).map((c) => ({
        shape,
        make,
        c,
        name: c.name,
      })),
    ),
  )("$shape: $name", async ({ make, c }) => {
    await handler(make(ROUTE_CASES[0] as RouteCase), context); // the policy's own lines
    lines.length = 0;
    const res = await handler(make(c), context);
    const single = (res.headers ?? {}) as Record<string, string | undefined>;
    const multi = (res.multiValueHeaders ?? {}) as Record<string, string[] | undefined>;
    const actual = observe(c, res.statusCode, (name) => single[name] ?? multi[name]?.[0], res.body, lines);
    const onNode = expected[c.name] as Observed;
    expect(res.isBase64Encoded).toBe(false);
    expect(actual).toEqual(expectedOn("lambda", c, onNode));
    expect(actual.log.map((l) => Object.keys(l))).toEqual(onNode.log.map((l) => Object.keys(l)));
  });
});

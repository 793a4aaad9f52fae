/**
 * The route parity table (test/support/route-table.ts) against the Lambda HTTP handler, each
 * request as API Gateway's HTTP API and a Function URL hand it over (test/fixtures/lambda/):
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
});

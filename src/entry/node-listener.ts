/**
 * The Node request listener: `POST /v1/hooks` and `POST /v1/hooks/<client>` are answered straight
 * from node:http, every other request goes to the Hono app. The hook routes are the gateway's hot
 * path, and building a web `Request` (URL, Headers, AbortSignal, a ReadableStream for the body)
 * per decision cost more CPU than the decision itself (bench/README.md). Both paths run the same
 * code after the body is read (`runHookRoute` and `hookResponse` in src/http/hook-route.ts); the
 * end-to-end tests (test/e2e: the captured Claude Code requests, the client vectors, the bad-input
 * catalogue) run against `hookgate serve`, so against this listener. One difference is kept on
 * purpose: a malformed Host header is not refused here (it plays no part in a decision), where
 * @hono/node-server answers 400.
 */
import type { IncomingMessage, RequestListener, ServerResponse } from "node:http";
import type { HookDeps } from "../app/handle-hook.js";
import { hookResponse, runHookRoute } from "../http/hook-route.js";
import { readBodyChunks } from "../http/read-body.js";

/**
 * The paths taken here: `/v1/hooks` and `/v1/hooks/<name>`, a trailing slash and a query allowed
 * (as the Hono routes allow them). Anything else goes to Hono, which normalises it: an empty
 * name (`/v1/hooks//`), `.` and `..`, percent-encoded names, deeper paths.
 */
const HOOK_PATH = /^\/v1\/hooks(?:\/(?!\.\.?(?:\/|\?|$))([A-Za-z0-9_.-]+))?\/?(?:\?.*)?$/;

export function hookListener(deps: HookDeps, fallback: RequestListener): RequestListener {
  return (request, response) => {
    const route = request.method === "POST" ? HOOK_PATH.exec(request.url ?? "") : null;
    if (!route) {
      fallback(request, response);
      return;
    }
    answer(deps, request, response, route[1] || undefined).catch((e: unknown) => {
      // runHookRoute answers every failure itself; this is the last resort, as Hono's onError.
      deps.logger.log("error", "unhandled error", {
        error: e instanceof Error ? e.message : String(e),
        path: "/v1/hooks",
      });
      if (!response.headersSent) {
        response.writeHead(500, { "content-type": "application/json" });
        response.end('{"error":{"code":"INTERNAL_ERROR","message":"internal error; see the gateway log"}}');
      } else response.destroy();
    });
  };
}

async function answer(
  deps: HookDeps,
  request: IncomingMessage,
  response: ServerResponse,
  client: string | undefined,
): Promise<void> {
  const header = (name: string) => rawHeader(request.rawHeaders, name);
  const outcome = await runHookRoute(deps, client, {
    readBody: (maxBytes) =>
      readBodyChunks(
        request[Symbol.asyncIterator](),
        rawHeader(request.rawHeaders, "content-length"),
        maxBytes,
      ),
    contentType: header("content-type"),
    authorization: header("authorization"),
    timeoutHeader: header("x-hookgate-timeout"),
  });
  const { status, headers, body } = hookResponse(outcome);
  headers["content-length"] = String(Buffer.byteLength(body));
  response.writeHead(status, headers);
  response.end(body);
}

/**
 * A header's value as a web `Headers` object would give it: every occurrence, joined with ", ".
 * Node's `request.headers` keeps only the first Authorization or Content-Type; two Authorization
 * headers must not authenticate here when the Hono path would refuse them.
 */
function rawHeader(raw: readonly string[], name: string): string | undefined {
  let value: string | undefined;
  for (let i = 0; i < raw.length; i += 2) {
    const key = raw[i] as string;
    if (key.length === name.length && key.toLowerCase() === name) {
      const v = raw[i + 1] as string;
      value = value === undefined ? v : `${value}, ${v}`;
    }
  }
  return value;
}

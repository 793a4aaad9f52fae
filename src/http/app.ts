/**
 * The HTTP surface, one Hono app for every runtime. Agent-facing routes (`/v1/hooks*`) always
 * answer 2xx with a decision body; nothing here redirects or cares about a trailing slash.
 */
import { Hono } from "hono/tiny";
import type { HookDeps, HookOutcome } from "../app/handle-hook.js";
import { authenticate } from "../core/auth.js";
import { errorMessage, type RequestError } from "../core/errors.js";
import { DIALECTS, isDialect } from "../core/hook-event.js";
import { shorten } from "../core/truncate.js";
import {
  HOOK_PATHS,
  HOOK_ROUTES,
  type HookRouteRequest,
  hookResponse,
  INTERNAL_ERROR_BODY,
  outcomeHeaders,
  QUOTED_PATH_CHARS,
  runHookRoute,
  TOKEN_IN_URL,
  tokensMasked,
} from "./hook-route.js";
import { type BodyBudget, type BodyCeiling, type BodyDeadline, readBody } from "./read-body.js";
import { hookRoute, routePath } from "./route-path.js";

export interface AppDeps extends HookDeps {
  /** Prometheus text for `GET /metrics`; the route exists only where a registry is given. */
  readonly metricsText?: (() => string) | undefined;
  /** A deadline for each hook body to arrive by (read-body.ts `bodyDeadline`); none without. */
  readonly bodyDeadline?: (() => BodyDeadline) | undefined;
  /**
   * The largest hook body read whatever `defaults.maxBodyBytes` says, and what sets it (Workers:
   * read-body.ts WORKERS_MAX_BODY_BYTES); the policy's limit alone without.
   */
  readonly bodyCeiling?: BodyCeiling | undefined;
  /** The bytes of bodies still arriving the gateway may hold at once (Node, Workers); unbounded without. */
  readonly bodyBudget?: BodyBudget | undefined;
  /**
   * The budget of the bodies of requests whose Authorization header names no team (Node, Workers), apart
   * from `bodyBudget`, so that callers without a token cannot fill the one a team's hooks are read
   * in; `bodyBudget` without.
   */
  readonly unauthenticatedBodyBudget?: BodyBudget | undefined;
  /**
   * Why the runtime could not hand a request over as it was sent (Lambda: an event hono's adapter
   * cannot make a web Request of), if so: a hook route answers it as that request error, in its
   * code's fail mode, its event named from what body there is.
   */
  readonly refusal?: ((request: Request) => RequestError | undefined) | undefined;
  /**
   * The deps of one request where they differ between the requests one app answers at once
   * (Lambda Managed Instances run many invocations together in one environment, each with its own
   * time left and its own deferred sends to wait for), from the env the runtime called the app's
   * `fetch` with: over these, for that request.
   */
  readonly forRequest?: ((env: unknown) => RequestDeps | undefined) | undefined;
  /**
   * Whether the latest policy reload was refused (Node's SIGHUP): /healthz says so, still 200, as
   * the running policy answers; `hookgate doctor` fails its first check on it.
   */
  readonly reloadFailed?: (() => boolean) | undefined;
  /**
   * Whether the latest notify enqueue failed (Node's intake journal on a full or read-only disk):
   * /healthz says so, still 200, as decisions are answered; `hookgate doctor` fails on it.
   */
  readonly notifyFailing?: (() => boolean) | undefined;
  /** How many notify events are held in memory until the intake journal takes them (Node). */
  readonly notifyInMemory?: (() => number) | undefined;
  /**
   * What keeps notify events from being delivered, if anything (Node's delivery thread and its
   * queue file): /healthz says so, still 200, as decisions are answered and their notify events
   * journaled; `hookgate doctor` fails on it.
   */
  readonly deliveryTrouble?: (() => DeliveryTrouble | undefined) | undefined;
  /**
   * Why a notify event that fails for good cannot be set aside, if it cannot (a Worker's missing
   * HOOKGATE_DLQ binding): /healthz says so, still 200, as the others are delivered; `hookgate
   * doctor` fails on it.
   */
  readonly deadLetterTrouble?:
    | (() => { readonly error: string; readonly fix: string } | undefined)
    | undefined;
}

/** What a runtime may give each request of its own (`forRequest`). */
export type RequestDeps = Pick<HookDeps, "runtimeLeftMs" | "notifier">;

/**
 * Why notify events are not being delivered: the queue file fails (damaged, locked, on a full
 * disk), or the delivery thread is down and being started again; with the error and what to do
 * about it where that is known.
 */
export interface DeliveryTrouble {
  readonly delivery: "failing" | "restarting";
  readonly error: string;
  readonly fix?: string | undefined;
}

/**
 * `hono/tiny` (PatternRouter: one regex per route, tried in order) keeps the Worker's main module
 * 2.4 KiB gzip smaller than Hono's default pair of routers (issue 10's 64 KiB budget); a dozen
 * routes cost nothing to try in turn, and Node answers the hook routes without Hono
 * (src/entry/node-listener.ts). PatternRouter already accepts one trailing slash on every route,
 * so the app is `strict`: every path it matches is route-path.ts's reading (`getPath`), which has
 * already made doubled slashes one. `withoutTrailingSlash` is the path a route names in
 * its answer.
 */
export function createApp(deps: AppDeps): Hono {
  const routes = new Hono({ strict: true });

  routes.post("/v1/simulate", async (c) => {
    const client = c.req.query("client");
    if (client !== undefined && !isDialect(client)) {
      return c.json(
        { error: { code: "UNKNOWN_CLIENT", message: `client must be one of ${DIALECTS.join(", ")}` } },
        400,
      );
    }
    // Its body is read as a hook's: the same limit, deadline and budget, and a request the
    // runtime could not hand over whole (Lambda) is simulated as the refusal its hook gets.
    const outcome = await runHookRoute(requestDeps(deps, c.env), client, routeRequest(c.req.raw, deps), true);
    return c.json(simulation(outcome), 200, outcomeHeaders(outcome));
  });

  routes.get("/healthz", (c) => {
    const inMemory = deps.notifyInMemory?.() ?? 0;
    const trouble = deps.deliveryTrouble?.();
    const deadLetters = deps.deadLetterTrouble?.();
    return c.json({
      status: "ok",
      policy: deps.policy().hash,
      ...(deps.reloadFailed?.() === true && { reload: "failed" }),
      ...(deps.notifyFailing?.() === true && { notify: "failing" }),
      ...(inMemory > 0 && { notifyInMemory: inMemory }),
      ...(trouble && {
        delivery: trouble.delivery,
        deliveryError: trouble.error,
        ...(trouble.fix !== undefined && { deliveryFix: trouble.fix }),
      }),
      ...(deadLetters && {
        deadLetters: "failing",
        deadLetterError: deadLetters.error,
        deadLetterFix: deadLetters.fix,
      }),
    });
  });

  // Which team a token maps to, for `hookgate doctor`; never a hook route, so a plain 401 is right.
  // `client` words a failure's fix for that client's hook (deepagents' sends HOOKGATE_AUTH).
  routes.get("/v1/whoami", async (c) => {
    const policy = deps.policy();
    const client = c.req.query("client");
    const dialect = client !== undefined && isDialect(client) ? client : undefined;
    const auth = await authenticate(c.req.header("authorization"), policy, deps.sha256, dialect);
    if (!auth.ok) return c.json({ error: { code: auth.code, message: auth.message } }, 401);
    return c.json({ team: auth.team, policy: policy.hash, authRequired: policy.auth !== undefined });
  });
  const metricsText = deps.metricsText;
  if (metricsText) {
    routes.get("/metrics", (c) =>
      c.text(metricsText(), 200, { "content-type": "text/plain; version=0.0.4; charset=utf-8" }),
    );
  }

  // Agents only ever POST (clients.md §2.1, §9), so another method on a known path is a person
  // or a probe: 405 with Allow (RFC 9110 §15.5.6), or 204 with Allow for OPTIONS (§9.3.7).
  for (const [path, allow] of allowedMethods(metricsText !== undefined)) {
    routes.all(path, (c) => wrongMethod(c.req.method, withoutTrailingSlash(c.req.path), allow));
  }

  const app = underAnyPrefix(routes, (request, client, env) =>
    answerHook(requestDeps(deps, env), request, client),
  );
  app.notFound(async (c) => {
    const path = withoutTrailingSlash(c.req.path);
    const message = `no route ${c.req.method} ${path}`;
    // A path that is a route but for its case (`/V1/hooks/claude-code`): that route, named.
    const meant = caseMistyped(path, metricsText !== undefined);
    const hint = meant === undefined ? undefined : `${message}; paths are case-sensitive: use ${meant}`;
    if (c.req.method !== "POST")
      return c.json({ error: { code: "NOT_FOUND", message: hint ?? message } }, 404);
    // A POST may be an agent's hook with a mistyped URL. deepcode blocks on any non-2xx, and says
    // the body's `reason` only beside `decision: "block"` (else `HTTP 404`; its src/hooks.ts), so
    // the fix goes there, with the block it makes anyway; Claude Code ignores the body of a 404.
    // A team's token written into that URL's path is masked, as on a route no client has
    // (hook-route.ts): the answer and the log line quote the path, cut at 200 characters then.
    // Read in the path as sent, not the route's reading: that made a base64 token's "//" one
    // slash and dropped its leading or trailing one, and no run of its segments was the token.
    const own = requestDeps(deps, c.env);
    const quoted = await tokensMasked(
      new URL(c.req.url).pathname,
      QUOTED_PATH_CHARS,
      own.policy(),
      own.sha256,
    );
    const fix = quoted.masked
      ? `no route POST ${shorten(quoted.text, QUOTED_PATH_CHARS)}; hook URLs are ${HOOK_ROUTES}${TOKEN_IN_URL}`
      : (hint ?? `${message}; hook URLs are ${HOOK_ROUTES}`);
    // No decision, so no audit line: said here, or a team whose hooks all miss the routes (each
    // action let through by Claude Code, blocked by deepcode) shows in the log as no traffic.
    deps.logger.log("warn", "a POST to no route answered 404: a hook with a mistyped URL is not judged", {
      path: shorten(quoted.masked ? quoted.text : path, QUOTED_PATH_CHARS),
    });
    return c.json(
      { error: { code: "NOT_FOUND", message: fix }, decision: "block", reason: `hookgate: ${fix}` },
      404,
    );
  });
  app.onError((e, c) => {
    deps.logger.log("error", "unhandled error", {
      error: errorMessage(e),
      path: withoutTrailingSlash(c.req.path),
    });
    return c.body(INTERNAL_ERROR_BODY, 500, { "content-type": "application/json" });
  });
  return app;
}

/**
 * An app answering `routes` at the root and under any prefix (`/hookgate/v1/hooks/claude-code`):
 * a Worker on a path route (`example.com/hookgate/*`), an HTTP API stage or an API mapping key
 * puts one before the route, and a 404 there is an answer Claude Code lets through. The routes at
 * the root are tried first. `route` copies the routes registered so far: register them first.
 * A POST to a hook route goes to `hook`, with the client its path names: which paths are hook
 * routes, and the path every route is matched against, are route-path.ts's one reading, the one
 * Node's listener reads the request line with (doubled slashes, `%2F` as a slash, escapes of
 * unreserved characters decoded once). A deeper path under `/v1/hooks/` is a mistyped hook URL,
 * still an agent asking: it gets the unknown-client-route decision, not a 404.
 * A body no route reads (a POST to no route, a 405, simulate's 400) is not waited for here: each
 * runtime's entry sets it aside as it can (@hono/node-server after the answer, workers.ts before).
 * `hook` gets the env `fetch` was called with too.
 */
export function underAnyPrefix(
  routes: Hono,
  hook: (request: Request, client: string | undefined, env: unknown) => Response | Promise<Response>,
): Hono {
  const app = new Hono({ strict: true, getPath: (request) => routePath(request.url) });
  app.post("*", (c, next) => {
    const route = hookRoute(c.req.path);
    return route ? hook(c.req.raw, route.client, c.env) : next();
  });
  app.route("/", routes);
  app.route("/:prefix{.+}", routes);
  return app;
}

/**
 * The route `path` names but for the case of its letters, under the prefix it has, if it is none
 * as it is: a path is matched case-sensitively on every runtime (RFC 3986 §6.2.2.1 leaves only
 * the scheme and host to any case), and a hook sent to `/V1/hooks/claude-code` is judged by no
 * rule, so its 404 names the URL to use.
 */
function caseMistyped(path: string, withMetrics: boolean): string | undefined {
  const lower = path.toLowerCase();
  const routes = [
    ...HOOK_PATHS,
    ...allowedMethods(withMetrics)
      .map(([route]) => route)
      .filter((route) => !route.endsWith("*")),
  ];
  for (const route of routes) {
    if (lower.endsWith(route) && !path.endsWith(route))
      return `${path.slice(0, path.length - route.length)}${route}`;
  }
  return undefined;
}

/** A request's path without one trailing slash, which every route accepts. */
function withoutTrailingSlash(path: string): string {
  return path.length > 1 && path.endsWith("/") ? path.slice(0, -1) : path;
}

/**
 * The deps a request is answered with: the app's, with what the runtime gave it of its own.
 * Copied by Object.assign, not spread (`{ ...deps, ...own }`): on Node 20's V8 a spread followed
 * by more properties can make objects that outlive young-generation collections (hook-route.ts).
 */
function requestDeps(deps: AppDeps, env: unknown): AppDeps {
  const own = deps.forRequest?.(env);
  return own === undefined ? deps : Object.assign({}, deps, own);
}

async function answerHook(deps: AppDeps, request: Request, client: string | undefined) {
  const { status, headers, body } = hookResponse(
    await runHookRoute(deps, client, routeRequest(request, deps)),
  );
  // null, not "": a Response made from a string gets `content-type: text/plain`, and an empty
  // answer has none (render.ts), as Node's listener sends it.
  return new Response(body === "" ? null : body, { status, headers });
}

function routeRequest(
  request: Request,
  reading: Pick<
    AppDeps,
    "bodyDeadline" | "bodyBudget" | "unauthenticatedBodyBudget" | "bodyCeiling" | "refusal"
  >,
): HookRouteRequest {
  const ceiling = reading.bodyCeiling;
  return {
    refused: reading.refusal?.(request),
    target: request.url,
    readBody: (maxBytes, authenticated) =>
      readBody(
        request,
        ceiling && ceiling.bytes < maxBytes ? ceiling : maxBytes,
        reading.bodyDeadline,
        authenticated ? reading.bodyBudget : (reading.unauthenticatedBodyBudget ?? reading.bodyBudget),
      ),
    contentType: request.headers.get("content-type") ?? undefined,
    authorization: request.headers.get("authorization") ?? undefined,
    timeoutHeader: request.headers.get("x-hookgate-timeout") ?? undefined,
    userAgent: request.headers.get("user-agent") ?? undefined,
  };
}

/** Each known path and the methods it answers; HEAD comes with GET in Hono. */
function allowedMethods(withMetrics: boolean): readonly (readonly [string, string])[] {
  return [
    ["/v1/hooks", "POST"],
    ["/v1/hooks/*", "POST"],
    ["/v1/simulate", "POST"],
    ["/healthz", "GET, HEAD"],
    ["/v1/whoami", "GET, HEAD"],
    ...(withMetrics ? ([["/metrics", "GET, HEAD"]] as const) : []),
  ];
}

/** The answer to a method a known path does not serve. */
function wrongMethod(method: string, path: string, allow: string): Response {
  if (method === "OPTIONS") return new Response(null, { status: 204, headers: { allow } });
  return Response.json(
    { error: { code: "METHOD_NOT_ALLOWED", message: `${path} answers ${allow}, not ${method}` } },
    { status: 405, headers: { allow } },
  );
}

/** What `/v1/simulate` and `hookgate simulate` show: the exact answer, and why. */
export function simulation(outcome: HookOutcome) {
  return {
    answer: {
      status: outcome.answer.status,
      contentType: outcome.answer.contentType ?? null,
      body: outcome.answer.body,
    },
    decision: outcome.audit.decision,
    reason: outcome.audit.reason ?? null,
    team: outcome.audit.team ?? null,
    client: outcome.audit.client ?? null,
    event: outcome.audit.event ?? null,
    error: outcome.error ? { code: outcome.error.code, message: outcome.error.message } : null,
    rules: outcome.explanations ?? [],
    applied: outcome.audit.rules,
    shadowed: outcome.audit.shadow,
    pending: outcome.audit.pending,
    notify: outcome.audit.notify,
    policy: outcome.policyHash,
  };
}

/**
 * The HTTP surface, one Hono app for every runtime. Agent-facing routes (`/v1/hooks*`) always
 * answer 2xx with a decision body; nothing here redirects or cares about a trailing slash.
 */
import { Hono } from "hono";
import { type HookDeps, type HookOutcome, handleHook } from "../app/handle-hook.js";
import { authenticate } from "../core/auth.js";
import type { RequestError } from "../core/errors.js";
import { DIALECTS, type Dialect } from "../core/hook-event.js";
import { readBody } from "./read-body.js";

export interface AppDeps extends HookDeps {
  /** Prometheus text for `GET /metrics`; the route exists only where a registry is given. */
  readonly metricsText?: (() => string) | undefined;
}

const ROUTE_DIALECTS: ReadonlySet<string> = new Set(DIALECTS);

export function createApp(deps: AppDeps): Hono {
  const app = new Hono({ strict: false });

  app.post("/v1/hooks", (c) => answerHook(deps, c.req.raw, undefined));
  app.post("/v1/hooks/:client", (c) => {
    const client = c.req.param("client");
    if (ROUTE_DIALECTS.has(client)) return answerHook(deps, c.req.raw, client as Dialect);
    const error: RequestError = {
      code: "UNKNOWN_CLIENT_ROUTE",
      message: `no client route "/v1/hooks/${client}"; use /v1/hooks/claude-code, /v1/hooks/deepcode or /v1/hooks/deepagents`,
    };
    return answerHook(deps, c.req.raw, undefined, error);
  });

  app.post("/v1/simulate", async (c) => {
    const client = c.req.query("client");
    if (client !== undefined && !ROUTE_DIALECTS.has(client)) {
      return c.json(
        { error: { code: "UNKNOWN_CLIENT", message: `client must be one of ${DIALECTS.join(", ")}` } },
        400,
      );
    }
    const outcome = await runHook(deps, c.req.raw, client as Dialect | undefined, undefined, true);
    return c.json(simulation(outcome), 200, outcomeHeaders(outcome));
  });

  app.get("/healthz", (c) => c.json({ status: "ok", policy: deps.policy().hash }));

  // Which team a token maps to, for `hookgate doctor`; never a hook route, so a plain 401 is right.
  app.get("/v1/whoami", async (c) => {
    const policy = deps.policy();
    const auth = await authenticate(c.req.header("authorization"), policy, deps.sha256);
    if (!auth.ok) return c.json({ error: { code: auth.code, message: auth.message } }, 401);
    return c.json({ team: auth.team, policy: policy.hash, authRequired: policy.auth !== undefined });
  });
  const metricsText = deps.metricsText;
  if (metricsText) {
    app.get("/metrics", (c) =>
      c.text(metricsText(), 200, { "content-type": "text/plain; version=0.0.4; charset=utf-8" }),
    );
  }

  app.notFound((c) =>
    c.json({ error: { code: "NOT_FOUND", message: `no route ${c.req.method} ${c.req.path}` } }, 404),
  );
  app.onError((e, c) => {
    deps.logger.log("error", "unhandled error", {
      error: e instanceof Error ? e.message : String(e),
      path: c.req.path,
    });
    return c.json({ error: { code: "INTERNAL_ERROR", message: "internal error; see the gateway log" } }, 500);
  });
  return app;
}

async function answerHook(
  deps: AppDeps,
  request: Request,
  dialect: Dialect | undefined,
  routeError?: RequestError,
) {
  const outcome = await runHook(deps, request, dialect, routeError, false);
  const headers = outcomeHeaders(outcome);
  if (outcome.answer.contentType) headers["content-type"] = outcome.answer.contentType;
  // The rest of an oversized body was never read, so this connection cannot carry another
  // request; say so, or a keep-alive client (Claude Code shares one per session) would reuse it.
  if (outcome.error?.code === "BODY_TOO_LARGE") headers.connection = "close";
  return new Response(outcome.answer.body, { status: outcome.answer.status, headers });
}

async function runHook(
  deps: AppDeps,
  request: Request,
  dialect: Dialect | undefined,
  routeError: RequestError | undefined,
  explain: boolean,
): Promise<HookOutcome> {
  const body = routeError
    ? ({ ok: false, error: routeError } as const)
    : await readBody(request, deps.policy().defaults.maxBodyBytes);
  return handleHook(
    deps,
    {
      body,
      contentType: request.headers.get("content-type") ?? undefined,
      authorization: request.headers.get("authorization") ?? undefined,
      dialect,
      timeoutHeader: request.headers.get("x-hookgate-timeout") ?? undefined,
    },
    { explain, audit: !explain, runRemote: !explain },
  );
}

function outcomeHeaders(outcome: HookOutcome): Record<string, string> {
  const headers: Record<string, string> = {
    "x-hookgate-decision-id": outcome.decisionId,
    "x-hookgate-policy": outcome.policyHash,
    "cache-control": "no-store",
  };
  if (outcome.error) headers["x-hookgate-error"] = outcome.error.code;
  return headers;
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

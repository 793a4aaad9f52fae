/**
 * The app a runtime serves when its configuration does not load. On Lambda and Workers nobody
 * watches a start, and a non-2xx makes Claude Code let every action through, so a bad config
 * must not switch the guard off: agent routes answer a 2xx fail-closed decision whose
 * systemMessage names the problem, `/healthz` answers 500, and the problem is logged once.
 */
import { Hono } from "hono/tiny";
import { sniffEventName } from "../core/events.js";
import { type Dialect, isDialect, routedDialect } from "../core/hook-event.js";
import type { Logger } from "../core/ports.js";
import { renderRequestFailure } from "../core/render.js";
import { underAnyPrefix } from "./app.js";
import { outcomeHeaders } from "./hook-route.js";
import { type BodyDeadline, readBody } from "./read-body.js";

/** Only the event name is needed: what is past this is drained, never kept. */
const SNIFF_BYTES = 64 * 1024;

/** `bodyDeadline`: the deadline a body is read with, as the working app reads one (app.ts). */
export function createBrokenConfigApp(
  problem: string,
  logger: Logger,
  newId: () => string,
  bodyDeadline?: () => BodyDeadline,
): Hono {
  logger.log("error", "configuration invalid; answering every hook fail-closed", { problem });
  // Strict, as src/http/app.ts explains: the tiny preset already accepts one trailing slash.
  const routes = new Hono({ strict: true });
  const message = `hookgate: the gateway's configuration is invalid, so it denies what it guards until an operator fixes it: ${problem} [CONFIG_INVALID]`;

  const answer = async (request: Request, dialect: Dialect | undefined) => {
    const body = await readBody(request, SNIFF_BYTES, bodyDeadline);
    const eventName = body.ok ? sniffEventName(body.text) : body.error.eventName;
    // A v2 hook on the legacy route is answered as v2, as the working gateway answers it: in the
    // legacy dialect (an empty body) its PreToolUse would be let through.
    const { answer: rendered } = renderRequestFailure(
      "deny",
      eventName,
      routedDialect(dialect, undefined, eventName) ?? "claude-code",
      message,
    );
    const headers = outcomeHeaders({
      decisionId: newId(),
      policyHash: "invalid",
      error: { code: "CONFIG_INVALID" },
      bodyUnread: !body.ok && body.unread === true,
    });
    if (rendered.contentType) headers["content-type"] = rendered.contentType;
    return new Response(rendered.body === "" ? null : rendered.body, { status: 200, headers });
  };

  routes.get("/healthz", (c) =>
    c.json({ status: "error", error: { code: "CONFIG_INVALID", message: problem } }, 500),
  );
  // Every hook route, a mistyped deeper path included, is an agent's hook: a 2xx decision, as the
  // working app answers it.
  const app = underAnyPrefix(routes, (request, client) =>
    answer(request, client !== undefined && isDialect(client) ? client : undefined),
  );
  app.notFound((c) => c.json({ error: { code: "CONFIG_INVALID", message: problem } }, 500));
  return app;
}

/**
 * Composition root for the HTTP function on Lambda: API Gateway HTTP API (payload format 2.0)
 * and Lambda Function URLs, which share that event shape; bodies may arrive base64-encoded
 * (`isBase64Encoded`), which hono's adapter decodes. It reads a REST API's or payload 1.0 event
 * too (`multiValueHeaders`), answering in that shape. The same Hono app as on Node answers.
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
 * container, and it is lost if it does not.
 *
 * Remote actions and the notifier are imported with the first event that needs them
 * (lazy-actions.ts): most hooks need neither, and the cold start parses neither.
 */
import { type APIGatewayProxyResult, handle, type LambdaContext, type LambdaEvent } from "hono/aws-lambda";
import { nodeSha256 } from "../adapters/hash/node-crypto.js";
import type { DeferredWork } from "../app/notify.js";
import { createLogRecorder } from "../app/replay.js";
import { createApp } from "../http/app.js";
import { createBrokenConfigApp } from "../http/broken-config.js";
import { createLambdaRuntime, type LambdaOptions, type LambdaRuntime } from "./lambda-config.js";
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
  const runtime = createLambdaRuntime(options);
  let adapter: Promise<ReturnType<typeof handle>> | undefined;
  /**
   * The tasks this invocation deferred, and its request deadline (monotonic) as the decision
   * handed it over. A task an earlier invocation left running (logged then) is not waited for
   * again: it would hold this answer, whatever this request's deadline.
   */
  let pending = new Map<Promise<void>, DeferredWork | undefined>();
  let answerBy = Number.POSITIVE_INFINITY;
  /** When this invocation times out (monotonic), from the context Lambda hands the handler. */
  let invocationEnds = Number.POSITIVE_INFINITY;

  const defer = (task: () => Promise<void>, by?: number, work?: DeferredWork) => {
    if (by !== undefined) answerBy = Math.min(answerBy, by);
    const tasks = pending;
    const running = task().finally(() => tasks.delete(running));
    tasks.set(running, work);
  };

  return async (event, context) => {
    pending = new Map();
    answerBy = Number.POSITIVE_INFINITY;
    invocationEnds = context
      ? runtime.clock.monotonic() + context.getRemainingTimeInMillis()
      : Number.POSITIVE_INFINITY;
    adapter ??= build(runtime, defer, () => invocationEnds - runtime.clock.monotonic() - RETURN_MARGIN_MS);
    // A named stage (`/prod/v1/hooks/claude-code`) or a custom domain's mapping key is a prefix,
    // which the app's routes answer under (src/http/app.ts).
    const result = await (await adapter)(event, context);
    await settle(runtime, pending, context, answerBy - runtime.clock.monotonic());
    return result;
  };
}

async function build(
  runtime: LambdaRuntime,
  defer: (task: () => Promise<void>, answerBy?: number, work?: DeferredWork) => void,
  runtimeLeftMs: () => number,
) {
  const config = await runtime.config();
  if (!config.ok) return handle(createBrokenConfigApp(config.problem, runtime.logger, runtime.newId));
  const { policy } = config;
  const { clock, logger, env } = runtime;
  return handle(
    createApp({
      policy: () => policy,
      // Both imported with the first event that needs them, not at cold start (lazy-actions.ts).
      remote: lazyRemoteActions(
        once(async () => {
          const { createRemoteActions } = await import("../app/remote-actions.js");
          return createRemoteActions({ egress: runtime.egress, env, clock, sha256: nodeSha256 });
        }),
      ),
      // No session store on Lambda: a permission_prompt Notification is sent without the tool
      // call that caused it (infra/README.md).
      notifier: lazyNotifier(
        once(async () => {
          const { createNotifier } = await import("../app/notify.js");
          return createNotifier({ queue: runtime.queue("producer"), clock, logger, defer: (task) => task() });
        }),
        defer,
        logger,
      ),
      // HOOKGATE_RECORD=1: a replayable "hook record" log line per decision (`hookgate replay`).
      recorder: env("HOOKGATE_RECORD") === "1" ? createLogRecorder(logger) : undefined,
      clock,
      newId: runtime.newId,
      sha256: nodeSha256,
      logger,
      // A decision ends before the invocation does: a timed-out invocation reaches the client as a
      // 5xx, which Claude Code reads as "let the action through", whatever the rule decided.
      runtimeLeftMs,
    }),
  );
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

/**
 * The serverless entries' remote actions and notifier, whose modules (src/app/remote-actions.ts
 * with the judge and forward code, src/app/notify.ts) are imported with the first event that
 * needs them rather than at cold start: most hooks need neither (issue 10's Worker bundle and
 * Lambda cold start). Node's `serve` imports them up front.
 */
import type { Notifier, NotifyDeps } from "../app/notify.js";
import type { RemoteActions } from "../app/remote-actions.js";
import { errorMessage } from "../core/errors.js";
import type { Logger, Metrics } from "../core/ports.js";

/** Remote actions built by `load` (once per isolate or container: src/entry/once.ts) on first use. */
export function lazyRemoteActions(load: () => Promise<RemoteActions>): RemoteActions {
  return { run: async (input) => (await load()).run(input) };
}

/**
 * A notifier built by `load` with the first event that has notify work (handle-hook.ts
 * `notifyWork`). `load` builds one whose own `defer` runs the enqueue in place; `defer` is the
 * runtime's, which runs the load and the enqueue together after the answer (waitUntil on Workers,
 * the invocation's settle on Lambda), and would swallow a rejection: the notifier logs and counts
 * a failed send itself, and a notify path that cannot be loaded is logged and counted here, per
 * sink, as a failed enqueue is.
 */
export function lazyNotifier(
  load: () => Promise<Notifier>,
  defer: NotifyDeps["defer"],
  logger: Logger,
  metrics?: Metrics,
): Notifier {
  return {
    notify: (input) =>
      defer(
        () =>
          load()
            .then((notifier) => notifier.notify(input))
            .catch((e) => {
              const sinks = [...new Set(input.notify.flatMap((n) => n.sinks))];
              logger.log("error", "enqueue failed; the decision was answered anyway", {
                decisionId: input.decisionId,
                event: input.event.name,
                sinks,
                error: errorMessage(e),
              });
              // Each sink's job, as the notifier counts them; an event with only a call to remember
              // or a half to keep had nothing to enqueue.
              for (const sink of sinks) metrics?.increment("hookgate_enqueue_failed_total", { sink });
            }),
        input.answerBy,
        input,
      ),
  };
}

/**
 * One hook event POSTed to the Worker's `fetch` inside workerd, with these bindings, and its
 * `waitUntil` work (the notify path, the log lines written after the answer) waited for.
 */
import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import worker, { type WorkerEnv } from "../../src/entry/workers.js";

export async function answerHook(
  event: unknown,
  bindings: WorkerEnv,
  headers: Record<string, string> = {},
): Promise<Response> {
  const ctx = createExecutionContext();
  const res = await worker.fetch(
    new Request("https://hookgate.test/v1/hooks", {
      method: "POST",
      headers: { "content-type": "application/json", ...headers },
      body: JSON.stringify(event),
    }),
    bindings,
    ctx,
  );
  await waitOnExecutionContext(ctx);
  return res;
}

/**
 * The Worker's bindings of another kind than hookgate reads (a [vars] entry, a KV namespace under
 * a queue's name), inside workerd: each is said once, naming the binding and the kind it must be,
 * left unused, and the hook is answered as always.
 */
import { createExecutionContext, env, waitOnExecutionContext } from "cloudflare:test";
import { afterEach, describe, expect, it, vi } from "vitest";
import worker, { type WorkerEnv } from "../../src/entry/workers.js";

afterEach(() => {
  vi.restoreAllMocks();
});

/** The console lines of a SessionEnd the test policy notifies on, its waitUntil work done. */
async function notifyWith(changes: Record<string, unknown>): Promise<Record<string, unknown>[]> {
  const lines: string[] = [];
  for (const method of ["log", "warn", "error"] as const)
    vi.spyOn(console, method).mockImplementation((line: string) => lines.push(line));
  const ctx = createExecutionContext();
  const res = await worker.fetch(
    new Request("https://hookgate.test/v1/hooks", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        session_id: crypto.randomUUID(),
        transcript_path: "/home/dev/.claude/projects/p/s.jsonl",
        cwd: "/home/dev/proj",
        hook_event_name: "SessionEnd",
        reason: "flaky",
      }),
    }),
    { ...env, ...changes } as unknown as WorkerEnv,
    ctx,
  );
  expect(res.status).toBe(200);
  await waitOnExecutionContext(ctx);
  vi.restoreAllMocks();
  return lines.map((line) => JSON.parse(line) as Record<string, unknown>);
}

describe("a binding of another kind", () => {
  it("as HOOKGATE_QUEUE is named in the enqueue failure, which is not sent three times", async () => {
    // It was "binding.sendBatch is not a function", after 1.25 s of sends tried again.
    const lines = await notifyWith({ HOOKGATE_QUEUE: "hookgate-jobs" });
    expect(lines).toContainEqual(
      expect.objectContaining({
        msg: "HOOKGATE_QUEUE is bound as something other than a queue producer ([[queues.producers]]): left unused",
      }),
    );
    expect(lines).toContainEqual(
      expect.objectContaining({
        msg: "enqueue failed; the decision was answered anyway",
        error: "the HOOKGATE_QUEUE binding is not a queue producer ([[queues.producers]])",
      }),
    );
  });

  it("as HOOKGATE_METRICS is said once, not at every counter", async () => {
    // Each counter warned "dataset(...)?.writeDataPoint is not a function", several per event.
    const dataset = { writeDataPoints: () => {} };
    const said = (lines: Record<string, unknown>[]) =>
      lines.filter((l) => String(l.msg).startsWith("HOOKGATE_METRICS") || l.msg === "metrics write failed");
    expect(said(await notifyWith({ HOOKGATE_METRICS: dataset }))).toEqual([
      expect.objectContaining({
        level: "error",
        msg: "HOOKGATE_METRICS is bound as something other than an Analytics Engine dataset ([[analytics_engine_datasets]]): left unused",
      }),
    ]);
    expect(said(await notifyWith({ HOOKGATE_METRICS: dataset }))).toEqual([]);
  });
});

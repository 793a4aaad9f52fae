/**
 * deepagents' legacy tool.use and tool.result correlated over the real KV binding, inside
 * workerd, when the two arrive at once: deepagents sends them fire-and-forget, so on Workers two
 * requests handle them side by side, each reading KV while the other writes.
 */
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { createMemoryQueue } from "../../src/adapters/queue/memory.js";
import { createKvSessionStore } from "../../src/adapters/session/kv.js";
import { createNotifier } from "../../src/app/notify.js";
import type { DeliveryJob } from "../../src/core/delivery.js";
import { parseHookEvent } from "../../src/core/events.js";

describe("deepagents tool halves on Workers KV", () => {
  it("are paired when tool.use and tool.result are handled at once", async () => {
    const queue = createMemoryQueue<DeliveryJob>();
    const notifier = createNotifier({
      queue,
      clock: { now: () => 1_700_000_000_000, monotonic: () => 0 },
      logger: { log: () => {} },
      sessions: createKvSessionStore(env.HOOKGATE_SESSIONS),
      defer: (task) => task(),
    });
    const toolId = crypto.randomUUID();
    const bodies = [
      { event: "tool.use", tool_name: "execute", tool_id: toolId, tool_args: { command: "ls" } },
      {
        event: "tool.result",
        tool_name: "execute",
        tool_id: toolId,
        tool_status: "success",
        tool_output: "a b",
      },
    ];
    await Promise.all(
      bodies.map((body, i) => {
        const event = parseHookEvent(body);
        if (!event.ok) throw new Error(event.error.message);
        return notifier.notify({
          decisionId: `d${i}`,
          event: event.value,
          team: "t",
          decision: "none",
          reason: undefined,
          notify: [{ ruleId: "r", sinks: ["audit"] }],
          remember: true,
        });
      }),
    );
    const correlations = (await queue.receive(10, 60_000)).map((m) => m.body.notification.correlation);
    // Whichever is told second carries the first; told at once, either may, or both.
    expect(correlations.some((c) => c?.toolUse !== undefined || c?.toolResult !== undefined)).toBe(true);
  });
});

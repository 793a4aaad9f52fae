/**
 * events.ts builds an event's zod schemas when a body is first refused, not as it loads: a cold
 * start (the Lambda handler's import) builds none, and a body the plain tests accept never needs
 * one. zod's objects are counted on the heap (v8.queryObjects), so this file imports events.ts
 * itself, after counting, and nothing else here may load it first.
 */
import { queryObjects } from "node:v8";
import { describe, expect, it } from "vitest";
import * as z from "zod/mini";

/**
 * Live zod/mini objects and strings, two of the kinds events.ts builds (each class counted apart:
 * zod's are not subclasses of one another). Each count walks the heap, so two kinds, not all.
 */
function liveSchemas(): number {
  return (
    queryObjects(z.ZodMiniObject, { format: "count" }) + queryObjects(z.ZodMiniString, { format: "count" })
  );
}

describe("the hook events' schemas", () => {
  it("are built with the first refused body, not as events.ts loads, and word the refusal as before", async () => {
    const before = liveSchemas();
    const { parseHookEvent } = await import("../../src/core/events.js");
    expect(liveSchemas() - before).toBe(0);

    const accepted = parseHookEvent(
      { hook_event_name: "PreToolUse", session_id: "s", tool_name: "Bash", tool_input: { command: "ls" } },
      "claude-code",
    );
    expect(accepted.ok).toBe(true);
    expect(liveSchemas() - before).toBe(0);

    const refused = parseHookEvent(
      { hook_event_name: "PreToolUse", session_id: 7, tool_name: "Bash" },
      "claude-code",
    );
    expect(refused).toEqual({
      ok: false,
      error: {
        code: "EVENT_INVALID",
        message: "session_id must be a string",
        eventName: "PreToolUse",
        path: "session_id",
      },
    });
    const built = liveSchemas() - before;
    expect(built).toBeGreaterThan(0);

    // Built once: refusing the same event again builds nothing more.
    parseHookEvent({ hook_event_name: "PreToolUse", session_id: 8, tool_name: "Bash" }, "claude-code");
    expect(liveSchemas() - before).toBe(built);
  });
});

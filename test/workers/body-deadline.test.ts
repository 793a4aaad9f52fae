/**
 * A hook body that stalls, inside workerd: the runtime waits for a request's body for as long as
 * its client stays connected, so the Worker gives it the deadline Node's `serve` gives it
 * (read-body.ts BODY_DEADLINE_MS) and answers it in the fail mode, the event named from what
 * came; a `/v1/simulate` body, the same deadline, is simulated as that error. The deadline's
 * timer is a fake one, moved on by the test: the Worker's own 60 s.
 */
import { createExecutionContext, env, waitOnExecutionContext } from "cloudflare:test";
import { afterEach, describe, expect, it, vi } from "vitest";
import worker, { type WorkerEnv } from "../../src/entry/workers.js";
import { BODY_DEADLINE_MS } from "../../src/http/read-body.js";

const policy = {
  version: 1,
  defaults: { onError: "deny" },
  rules: [{ id: "no-rm", on: "PreToolUse", if: "Bash(rm *)", decide: "deny", reason: "no rm" }],
};

afterEach(() => {
  vi.useRealTimers();
  vi.restoreAllMocks();
});

/**
 * Posts part of a PreToolUse to `path`, then nothing, and moves the fake timers on by the body
 * deadline once the Worker has read that part and asks for more (the stream's pull), by when its
 * deadline has started: the answer, and the lines the Worker logged.
 */
async function stalled(
  path: string,
  policyText = JSON.stringify(policy),
): Promise<{ res: Response; lines: string[] }> {
  const lines: string[] = [];
  vi.spyOn(console, "log").mockImplementation((line: string) => lines.push(line));
  vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
  let asked: () => void = () => {};
  const waiting = new Promise<void>((resolve) => {
    asked = resolve;
  });
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      controller.enqueue(
        new TextEncoder().encode(
          '{"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"rm',
        ),
      );
    },
    pull() {
      asked();
      return new Promise<void>(() => {});
    },
  });
  const ctx = createExecutionContext();
  const answer = worker.fetch(
    new Request(`https://hookgate.test${path}`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body,
    }),
    { ...env, HOOKGATE_POLICY: policyText } as WorkerEnv,
    ctx,
  );
  await waiting;
  await vi.advanceTimersByTimeAsync(BODY_DEADLINE_MS);
  const res = await answer;
  await waitOnExecutionContext(ctx);
  return { res, lines };
}

const STALLED =
  "the request body could not be read (it did not all arrive within 60 s; the client sent it too slowly or stalled)";

describe("a hook body that stalls", () => {
  it("is answered in the fail mode once the body deadline passes, its event named from what came", async () => {
    const { res, lines } = await stalled("/v1/hooks/claude-code");
    const reason = `hookgate: ${STALLED} [BODY_UNREADABLE]`;
    expect(res.status).toBe(200);
    expect(res.headers.get("x-hookgate-error")).toBe("BODY_UNREADABLE");
    expect(await res.json()).toEqual({
      systemMessage: reason,
      hookSpecificOutput: {
        hookEventName: "PreToolUse",
        permissionDecision: "deny",
        permissionDecisionReason: reason,
      },
    });
    const decision = lines.map((l) => JSON.parse(l)).find((l) => l.msg === "decision");
    expect(decision).toMatchObject({ event: "PreToolUse", decision: "deny", error: "BODY_UNREADABLE" });
  });

  it("to /v1/simulate is simulated as that error once the body deadline passes", async () => {
    const { res } = await stalled("/v1/simulate?client=claude-code");
    expect(res.status).toBe(200);
    expect(res.headers.get("x-hookgate-error")).toBe("BODY_UNREADABLE");
    expect(await res.json()).toMatchObject({
      decision: "deny",
      event: "PreToolUse",
      error: { code: "BODY_UNREADABLE", message: STALLED },
    });
  });

  it("to a Worker whose policy does not load is answered fail-closed once the body deadline passes", async () => {
    const { res } = await stalled("/v1/hooks/claude-code", "{ not json");
    expect(res.status).toBe(200);
    expect(res.headers.get("x-hookgate-error")).toBe("CONFIG_INVALID");
    expect(res.headers.get("connection")).toBe("close");
    expect(await res.json()).toMatchObject({
      hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: "deny" },
    });
  });
});

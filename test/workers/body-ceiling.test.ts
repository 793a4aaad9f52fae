/**
 * A hook body over the Workers ceiling (read-body.ts WORKERS_MAX_BODY_BYTES), inside workerd: a
 * policy may allow 64 MiB, but an isolate has 128 MB of memory and holds a body several times
 * over, and an isolate run out of memory answers a 5xx, which Claude Code lets through. A body
 * past the ceiling gets the fail mode's 2xx decision naming it; one within it is judged; the
 * policy's load warns that its limit is above the ceiling.
 */
import { createExecutionContext, env, waitOnExecutionContext } from "cloudflare:test";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import worker, { type WorkerEnv } from "../../src/entry/workers.js";
import { WORKERS_MAX_BODY_BYTES } from "../../src/http/read-body.js";

const MAX_BODY_BYTES = 64 * 1024 * 1024;

const policy = {
  version: 1,
  defaults: { onError: "deny", maxBodyBytes: MAX_BODY_BYTES },
  rules: [{ id: "no-write", on: "PreToolUse", if: "Write", decide: "ask", reason: "writes are checked" }],
};

beforeEach(() => {
  // Each decision line holds the event's 16 MiB of input.
  vi.spyOn(console, "log").mockImplementation(() => {});
});

afterEach(() => {
  vi.restoreAllMocks();
});

/** A Claude Code PreToolUse for a Write of `size` bytes in all, as UTF-8. */
function writeEvent(size: number): Uint8Array {
  const head =
    '{"hook_event_name":"PreToolUse","session_id":"s","cwd":"/p","tool_name":"Write","tool_input":{"file_path":"/p/a.txt","content":"';
  const tail = '"}}';
  const bytes = new Uint8Array(size).fill(0x61);
  const encoder = new TextEncoder();
  bytes.set(encoder.encode(head), 0);
  bytes.set(encoder.encode(tail), size - tail.length);
  return bytes;
}

async function post(body: Uint8Array, policyText: string): Promise<Response> {
  const ctx = createExecutionContext();
  const res = await worker.fetch(
    new Request("https://hookgate.test/v1/hooks/claude-code", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body,
    }),
    { ...env, HOOKGATE_POLICY: policyText } as WorkerEnv,
    ctx,
  );
  await waitOnExecutionContext(ctx);
  return res;
}

interface Answer {
  systemMessage?: string;
  hookSpecificOutput: { permissionDecision: string; permissionDecisionReason?: string };
}

describe("a hook body on Workers, with defaults.maxBodyBytes at 64 MiB", () => {
  it("past the Workers ceiling gets the fail mode's decision, naming the ceiling", async () => {
    const res = await post(writeEvent(WORKERS_MAX_BODY_BYTES + 1), JSON.stringify(policy));
    expect(res.status).toBe(200);
    expect(res.headers.get("x-hookgate-error")).toBe("BODY_TOO_LARGE");
    const answer = (await res.json()) as Answer;
    expect(answer.hookSpecificOutput.permissionDecision).toBe("deny");
    expect(answer.systemMessage).toContain(
      `the request body is ${WORKERS_MAX_BODY_BYTES + 1} bytes; this gateway reads at most ${WORKERS_MAX_BODY_BYTES} (the Workers ceiling, within an isolate's 128 MB of memory, whatever defaults.maxBodyBytes says)`,
    );
  });

  it("within the ceiling is judged", async () => {
    const res = await post(writeEvent(WORKERS_MAX_BODY_BYTES), JSON.stringify(policy));
    expect(res.status).toBe(200);
    expect(res.headers.get("x-hookgate-error")).toBeNull();
    const answer = (await res.json()) as Answer;
    expect(answer.hookSpecificOutput.permissionDecision).toBe("ask");
    expect(answer.hookSpecificOutput.permissionDecisionReason).toContain("writes are checked");
  });

  it("is above the ceiling the policy's load warns of, once", async () => {
    const lines: string[] = [];
    vi.spyOn(console, "warn").mockImplementation((line: string) => lines.push(line));
    // A policy text of its own, so that this isolate loads it here.
    const text = JSON.stringify({ ...policy, rules: [] });
    await post(writeEvent(1024), text);
    await post(writeEvent(1024), text);
    const warnings = lines.filter((l) => l.includes('"path":"defaults.maxBodyBytes"'));
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain(
      `is ${MAX_BODY_BYTES}, above the ${WORKERS_MAX_BODY_BYTES} bytes (16 MiB) a Worker reads`,
    );
  });
});

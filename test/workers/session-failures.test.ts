/**
 * A session store (KV) that fails, inside workerd: told when it starts and when it ends, once for
 * the isolate, not once per failed call of each request. The failing namespace is a stand-in
 * passed as the binding (Miniflare's KV cannot be made to fail); the working one is the real KV.
 */
import { env } from "cloudflare:test";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { KvNamespaceLike } from "../../src/adapters/session/kv.js";
import type { WorkerEnv } from "../../src/entry/workers.js";
import { answerHook } from "./answer-hook.js";

afterEach(() => {
  vi.restoreAllMocks();
});

const failingKv: KvNamespaceLike = {
  get: () => Promise.reject(new Error("KV GET failed: 503 Service Unavailable")),
  put: () => Promise.reject(new Error("KV PUT failed: 503 Service Unavailable")),
};

/** A permission prompt (the policy's `prompts` rule notifies it, enriched from KV) with this KV. */
async function prompt(sessions: KvNamespaceLike): Promise<void> {
  const res = await answerHook(
    {
      session_id: crypto.randomUUID(),
      transcript_path: "/t",
      cwd: "/p",
      hook_event_name: "Notification",
      message: "Claude needs your permission to use Bash",
      notification_type: "permission_prompt",
    },
    { ...env, HOOKGATE_SESSIONS: sessions } as WorkerEnv,
  );
  expect(res.status).toBe(200);
}

describe("the Worker's session store failures", () => {
  it("are told once when KV starts failing, not per request, and once when it works again", async () => {
    const lines: string[] = [];
    vi.spyOn(console, "log").mockImplementation((line: string) => lines.push(line));
    vi.spyOn(console, "warn").mockImplementation((line: string) => lines.push(line));
    await prompt(failingKv);
    await prompt(failingKv);
    await prompt(failingKv);
    await prompt(env.HOOKGATE_SESSIONS);
    await prompt(env.HOOKGATE_SESSIONS);
    const told = lines
      .map((l) => JSON.parse(l) as { msg: string; error?: string; failures?: number })
      .filter((l) => l.msg.startsWith("session store"));
    expect(told).toEqual([
      expect.objectContaining({
        msg: "session store failed; the notification goes out without it",
        error: "KV GET failed: 503 Service Unavailable",
      }),
      expect.objectContaining({ msg: "session store works again", failures: 3 }),
    ]);
  });
});

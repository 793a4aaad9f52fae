/**
 * Subrequests inside workerd: Cloudflare counts every fetch a request makes, a DoH question of
 * the egress guard's included, against the Worker's limit (50 on Workers Free). The prompt rules
 * that apply to one event run in parallel; the stand-in network (test/workers/network.js) records
 * each DoH question it is asked.
 */
import { createExecutionContext, env, waitOnExecutionContext } from "cloudflare:test";
import { expect, it } from "vitest";
import worker, { type WorkerEnv } from "../../src/entry/workers.js";

const RULES = 5;

it("prompt rules judging one event through one model's host look that host up once, not once per rule", async () => {
  // A host of its own, so no earlier test's answer is in the resolver's cache.
  const host = `m-${crypto.randomUUID()}.hookgate.test`;
  const policy = {
    version: 1,
    rules: Array.from({ length: RULES }, (_, i) => ({
      id: `judge-${i}`,
      on: "PreToolUse",
      prompt: { text: `rule ${i}: ok? $ARGUMENTS`, model: "m", onError: "ask" },
    })),
    models: {
      m: {
        provider: "anthropic",
        model: "claude-haiku-4-5",
        apiKey: "env:JUDGE_KEY",
        url: `https://${host}/v1/messages`,
      },
    },
  };
  const ctx = createExecutionContext();
  const res = await worker.fetch(
    new Request("https://hookgate.test/v1/hooks", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        session_id: "s",
        transcript_path: "/t",
        cwd: "/p",
        hook_event_name: "PreToolUse",
        tool_name: "Write",
        tool_input: { file_path: `/p/${host}`, content: "x" },
      }),
    }),
    { ...env, HOOKGATE_POLICY: JSON.stringify(policy), JUDGE_KEY: "sk-workerd" } as WorkerEnv,
    ctx,
  );
  await waitOnExecutionContext(ctx);
  expect(res.status).toBe(200);
  const answer = (await res.json()) as { hookSpecificOutput: Record<string, unknown> };
  // Every rule was judged by the model: none failed into its onError.
  expect(answer.hookSpecificOutput.permissionDecision).toBe("deny");
  expect(String(answer.hookSpecificOutput.permissionDecisionReason).match(/judged in workerd/g)).toHaveLength(
    RULES,
  );
  const lookups = (await (await env.NETWORK.fetch("https://control.test/lookups")).json()) as string[];
  expect(lookups.filter((l) => l.startsWith(`${host} `)).sort()).toEqual([`${host} A`, `${host} AAAA`]);
});

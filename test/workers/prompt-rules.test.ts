/**
 * A prompt rule inside workerd: its model's `env:` url read from the Worker's bindings, as a
 * sink's is, and an unset one failing into the rule's onError without a call. The stand-in
 * network (test/workers/network.js) answers /v1/messages as an Anthropic model.
 */
import { createExecutionContext, env, waitOnExecutionContext } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import worker, { type WorkerEnv } from "../../src/entry/workers.js";

const MODEL_ORIGIN = "https://model.hookgate.test";

/**
 * Its own text per test: the Worker keeps a policy per isolate and text, as a secret's change
 * comes with a new deployment.
 */
const policyOf = (marker: string) => ({
  version: 1,
  rules: [
    {
      id: "judge",
      description: marker,
      on: "PreToolUse",
      prompt: { text: "ok? $ARGUMENTS", model: "m", onError: "ask" },
    },
  ],
  models: {
    m: { provider: "anthropic", model: "claude-haiku-4-5", apiKey: "env:JUDGE_KEY", url: "env:JUDGE_URL" },
  },
});

interface SeenRequest {
  url: string;
  headers: Record<string, string>;
  body: string;
}
/** Every request that carried this test's event, to any host: the provider's public one too. */
const modelCalls = async (marker: string) =>
  ((await (await env.NETWORK.fetch("https://control.test/requests")).json()) as SeenRequest[]).filter((r) =>
    r.body.includes(marker),
  );

async function hook(marker: string, bindings: Record<string, string>) {
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
        tool_input: { file_path: `/p/${marker}`, content: "x" },
      }),
    }),
    {
      ...env,
      HOOKGATE_POLICY: JSON.stringify(policyOf(marker)),
      JUDGE_KEY: "sk-workerd",
      ...bindings,
    } as WorkerEnv,
    ctx,
  );
  await waitOnExecutionContext(ctx);
  expect(res.status).toBe(200);
  return (await res.json()) as { hookSpecificOutput: Record<string, unknown> };
}

describe("a prompt rule's model url from the Worker's bindings", () => {
  it("calls the model at the URL its binding holds", async () => {
    const marker = `read-${crypto.randomUUID()}`;
    const answer = await hook(marker, { JUDGE_URL: `${MODEL_ORIGIN}/v1/messages` });
    expect(answer.hookSpecificOutput).toMatchObject({
      permissionDecision: "deny",
      permissionDecisionReason: "[ok? $ARGUMENTS]: judged in workerd",
    });
    const calls = await modelCalls(marker);
    expect(calls.map((c) => [c.url, c.headers["x-api-key"]])).toEqual([
      [`${MODEL_ORIGIN}/v1/messages`, "sk-workerd"],
    ]);
  });

  it("answers with onError when the binding is unset, calling no model (the public endpoint neither)", async () => {
    const marker = `unset-${crypto.randomUUID()}`;
    const answer = await hook(marker, {});
    expect(answer.hookSpecificOutput).toMatchObject({
      permissionDecision: "ask",
      permissionDecisionReason: expect.stringMatching(/JUDGE_NO_URL/),
    });
    expect(await modelCalls(marker)).toEqual([]);
  });
});

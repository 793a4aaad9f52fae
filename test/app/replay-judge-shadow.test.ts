/**
 * `hookgate replay --with-judge` and `hookgate test`'s judge run prompt rules only (replay.ts
 * `promptsOnly`): a shadow prompt rule beside an enforcing forward rule on one event keeps its
 * verdict in the audit's shadow list, never in the decision. The real remote actions and egress,
 * and a loopback model server.
 */
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createUndiciEgress } from "../../src/adapters/egress/undici.js";
import { createRemoteActions } from "../../src/app/remote-actions.js";
import { createJudge, promptsOnly } from "../../src/app/replay.js";
import { type LoopbackServer, loopbackServer } from "../support/loopback.js";
import { policyFrom, sha256 } from "../support/policy.js";

let model: LoopbackServer;
let hook: LoopbackServer;

beforeAll(async () => {
  model = await loopbackServer((_req, res) => {
    res.writeHead(200, { "content-type": "application/json" });
    res.end(
      JSON.stringify({
        content: [
          { type: "tool_use", id: "t", name: "verdict", input: { ok: false, reason: "writes a secret" } },
        ],
        stop_reason: "tool_use",
      }),
    );
  });
  hook = await loopbackServer((_req, res) => res.end(""));
});
afterAll(async () => {
  await model.close();
  await hook.close();
});

describe("replay's judge with a shadow prompt rule and an enforcing forward rule", () => {
  it("records the shadow rule's deny as shadow, and the forward as not run", async () => {
    const env: Record<string, string> = { MODEL_KEY: "sk-test" };
    const policy = await policyFrom(
      {
        version: 1,
        egress: { allowedHttpHookUrls: ["http://127.0.0.1:*/*"], allowCidrs: ["127.0.0.1/32"] },
        models: {
          m: { provider: "anthropic", model: "x", apiKey: "env:MODEL_KEY", url: `${model.url}/v1/messages` },
        },
        rules: [
          { id: "relay", on: "PreToolUse", matcher: "Write", forward: { url: `${hook.url}/hook` } },
          {
            id: "judge-shadow",
            on: "PreToolUse",
            matcher: "Write",
            mode: "shadow",
            prompt: { text: "Fine? $ARGUMENTS", model: "m" },
          },
        ],
      },
      env,
    );
    const clock = { now: Date.now, monotonic: () => performance.now() };
    const egress = createUndiciEgress({ policy: () => policy.egress });
    try {
      const remote = createRemoteActions({ egress: egress.send, env: (name) => env[name], clock, sha256 });
      const judge = createJudge({ clock, newId: randomUUID, sha256, remote: promptsOnly(remote) }, policy);
      const outcome = await judge({
        body: {
          ok: true,
          text: JSON.stringify({
            session_id: "s",
            transcript_path: "/t",
            cwd: "/p",
            hook_event_name: "PreToolUse",
            tool_name: "Write",
            tool_input: { file_path: "/p/a", content: "x" },
          }),
        },
        client: "claude-code",
        team: "default",
      });
      expect(model.received).toHaveLength(1);
      expect(hook.received).toHaveLength(0);
      expect(outcome.audit.decision).toBe("none");
      expect(outcome.audit.pending).toEqual([
        expect.objectContaining({ rule: "relay", action: "forward", outcome: "NOT_RUN" }),
      ]);
      expect(outcome.audit.shadow).toEqual([
        expect.objectContaining({ rule: "judge-shadow", decision: "deny", outcome: "OK" }),
      ]);
    } finally {
      await egress.close();
    }
  });
});

/**
 * A prompt rule whose model does not answer in time fails as the rule's timeout (JUDGE_TIMEOUT,
 * naming the limit that ran out), whichever of two timers set for the same moment fires first: the
 * rule's, or its call's, which was given what was left of the rule's time. The real remote actions
 * and egress, and a loopback model that never answers.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createUndiciEgress, type Resolver } from "../../src/adapters/egress/undici.js";
import { createRemoteActions, type RemoteInput } from "../../src/app/remote-actions.js";
import type { Policy } from "../../src/core/policy.js";
import { type ModelServer, startModelServer } from "../support/model-server.js";
import { policyFrom, sha256 } from "../support/policy.js";

let model: ModelServer;

beforeAll(async () => {
  model = await startModelServer();
  model.script({ hang: true });
});
afterAll(async () => {
  await model.close();
});

function judgePolicy(url: string, dailyCallsPerTeam: number): Promise<Policy> {
  return policyFrom(
    {
      version: 1,
      egress: { allowedHttpHookUrls: [url], allowCidrs: ["127.0.0.1/32"] },
      models: {
        m: {
          provider: "anthropic",
          model: "claude-haiku-4-5",
          apiKey: "env:K",
          url,
          cacheTtlSeconds: 0,
          dailyCallsPerTeam,
        },
      },
      rules: [
        {
          id: "judge",
          on: "PreToolUse",
          prompt: { text: "ok? $ARGUMENTS", model: "m", timeoutMs: 300, onError: "deny" },
        },
      ],
    },
    { K: "k" },
  );
}

/**
 * The remote actions on a host so busy that time moves on between each look at the clock: the
 * call, made after the rule's timer was set, is given what was left of the rule's time, and its
 * timer fires first.
 */
function busyRemote(policy: Policy, resolve?: Resolver) {
  let busy = 0;
  const monotonic = () => {
    busy += 20;
    return performance.now() + busy;
  };
  const clock = { now: Date.now, monotonic };
  const egress = createUndiciEgress({ policy: () => policy.egress, ...(resolve && { resolve }) });
  const remote = createRemoteActions({ egress: egress.send, env: () => "k", clock, sha256 });
  const input: RemoteInput = {
    rules: policy.rules,
    event: {
      name: "PreToolUse",
      dialect: "claude-code",
      known: true,
      payload: { hook_event_name: "PreToolUse", tool_name: "Write", tool_input: { file_path: "/p/a" } },
    },
    body: "{}",
    bodyChars: 2,
    team: "default",
    policy,
    deadlineMs: 5000,
  };
  return { run: () => remote.run(input), close: () => egress.close() };
}

describe("a prompt rule whose model hangs", () => {
  it("fails as the rule's timeout when its call's own time limit fires first", async () => {
    const policy = await judgePolicy(model.anthropicUrl, 5);
    const remote = busyRemote(policy);
    try {
      const from = model.requests.length;
      const run = await remote.run();
      // Before, it failed as EGRESS_TIMEOUT, "did not answer within" a time no limit of the
      // policy's says: the rule's timeoutMs, not the egress, is what to raise.
      expect(model.requests.length - from).toBe(1);
      expect(run.audit).toEqual([
        {
          rule: "judge",
          action: "prompt",
          ms: expect.any(Number),
          model: "m",
          outcome: "JUDGE_TIMEOUT",
          onError: "deny",
          detail: "no answer within 300 ms, the rule's timeoutMs",
          budget: { used: 1, limit: 5 },
        },
      ]);
    } finally {
      await remote.close();
    }
  });

  it("gives back the team's call when its call's own time limit fires before the model's name resolved", async () => {
    // A look-up that never answers until the test ends: nothing reaches the model.
    const pending: ((e: Error) => void)[] = [];
    const stalled: Resolver = () => new Promise((_answer, fail) => pending.push(fail));
    const policy = await judgePolicy("http://stalled.example/v1/messages", 1);
    const remote = busyRemote(policy, stalled);
    try {
      const first = await remote.run();
      expect(first.audit[0]).toMatchObject({ outcome: "JUDGE_TIMEOUT" });
      // The day's one call was not spent on a call never sent: the next is made, and times out as
      // well, rather than being refused as JUDGE_BUDGET_SPENT.
      const second = await remote.run();
      expect(second.audit[0]).toMatchObject({ outcome: "JUDGE_TIMEOUT", budget: { used: 1, limit: 1 } });
    } finally {
      for (const fail of pending) fail(Object.assign(new Error("ENOTFOUND"), { code: "ENOTFOUND" }));
      await remote.close();
    }
  });
});

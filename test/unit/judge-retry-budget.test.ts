/**
 * A prompt rule's second call after a rate limit, as the team's daily budget pays for it: on fake
 * timers with a monotonic clock that follows them, so that "answered at once" is a promise settled
 * before any time has passed, not a duration measured.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { createRemoteActions, type RemoteInput, type RemoteRun } from "../../src/app/remote-actions.js";
import type { Policy } from "../../src/core/policy.js";
import { policyFrom, sha256 } from "../support/policy.js";

const VERDICT = JSON.stringify({
  content: [{ type: "tool_use", id: "t", name: "verdict", input: { ok: false, reason: "rm" } }],
  stop_reason: "tool_use",
});
const RATE_LIMITED = JSON.stringify({
  type: "error",
  error: { type: "rate_limit_error", message: "Number of requests has exceeded your rate limit." },
});
/** The model's `retry-after`, in seconds, and as the wait it stands for. */
const RETRY_AFTER = "5";
const RETRY_MS = 5000;

const policyWith = (dailyCallsPerTeam: number) =>
  policyFrom(
    {
      version: 1,
      rules: [
        {
          id: "judge",
          on: "PreToolUse",
          prompt: { text: "Deny rm. $ARGUMENTS", model: "m", onError: "deny" },
        },
      ],
      models: {
        m: {
          provider: "anthropic",
          model: "claude-haiku-4-5",
          apiKey: "env:K",
          maxConcurrent: 4,
          cacheTtlSeconds: 0,
          dailyCallsPerTeam,
        },
      },
    },
    { K: "k" },
  );

/** An event of its own per name (`rm -rf /<name>`), so no call waits on an identical one. */
const event = (policy: Policy, name: string, deadlineMs = 60_000): RemoteInput => ({
  rules: policy.rules,
  event: {
    name: "PreToolUse",
    dialect: "claude-code",
    known: true,
    payload: { hook_event_name: "PreToolUse", tool_name: "Bash", tool_input: { command: `rm -rf /${name}` } },
  },
  body: "{}",
  bodyChars: 2,
  team: "default",
  policy,
  deadlineMs,
});

/**
 * A model that answers an event's first call with a 429 and its `retry-after` when the event's
 * name starts with "limited", and every other call with a no; `calls` are the names in the order
 * the calls were made.
 */
function rateLimitedJudge() {
  const calls: string[] = [];
  const remote = createRemoteActions({
    egress: async (request) => {
      const name = /rm -rf \/(\w+)/.exec(request.body ?? "")?.[1] ?? "?";
      const first = !calls.includes(name);
      calls.push(name);
      return first && name.startsWith("limited")
        ? { ok: true, value: { status: 429, headers: { "retry-after": RETRY_AFTER }, body: RATE_LIMITED } }
        : { ok: true, value: { status: 200, headers: {}, body: VERDICT } };
    },
    env: () => "k",
    clock: { now: () => Date.now(), monotonic: () => Date.now() },
    sha256,
  });
  return { remote, calls };
}

/** A run and whether it has answered yet. */
function started(run: Promise<RemoteRun>) {
  const state: { answer?: RemoteRun } = {};
  void run.then((answer) => {
    state.answer = answer;
  });
  return state;
}

/** Runs what is due in `ms` (0: only what is ready now), the promises it settles included. */
const tick = (ms = 0) => vi.advanceTimersByTimeAsync(ms);

const reasonOf = (run: RemoteRun | undefined) => JSON.stringify(run?.effects[0]);

describe("a prompt rule's second call and the team's daily budget", () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.restoreAllMocks();
    vi.useRealTimers();
  });

  it("is not waited for when the budget cannot pay for it: onError at once, naming the spent budget", async () => {
    const policy = await policyWith(1);
    const { remote, calls } = rateLimitedJudge();
    const run = started(remote.run(event(policy, "limited")));
    await tick();
    // Answered with no time passed: no wait for the retry-after, and no timer of it left running.
    expect(run.answer?.audit).toEqual([
      expect.objectContaining({
        outcome: "JUDGE_HTTP_ERROR",
        onError: "deny",
        budget: { used: 1, limit: 1 },
      }),
    ]);
    expect(reasonOf(run.answer)).toContain(
      'anthropic answered HTTP 429: Number of requests has exceeded your rate limit.; not called again: team \\"default\\" used its 1 daily calls to model \\"m\\"',
    );
    expect(vi.getTimerCount()).toBe(0);
    expect(calls).toEqual(["limited"]);
  });

  it("lets only one of two decisions racing for the day's last call wait for it", async () => {
    // Three a day: both first calls spent two; the first decision to be told to wait takes the
    // third, and the other is answered at once instead of waiting to find it gone.
    const policy = await policyWith(3);
    const { remote, calls } = rateLimitedJudge();
    const first = started(remote.run(event(policy, "limitedA")));
    const second = started(remote.run(event(policy, "limitedB")));
    await tick();
    expect(first.answer).toBeUndefined();
    expect(second.answer?.audit).toEqual([
      expect.objectContaining({ outcome: "JUDGE_HTTP_ERROR", budget: { used: 2, limit: 3 } }),
    ]);
    expect(reasonOf(second.answer)).toContain('not called again: team \\"default\\" used its 3 daily calls');
    await tick(RETRY_MS);
    expect(calls).toEqual(["limitedA", "limitedB", "limitedA"]);
    expect(first.answer?.audit).toEqual([
      expect.objectContaining({ outcome: "OK", attempts: 2, budget: { used: 3, limit: 3 } }),
    ]);
  });

  it("does not hold the day's last call while it waits: another decision's first call makes it", async () => {
    // Two a day: the rate-limited decision spent one; waiting out its retry-after, it must not keep
    // the other decision's first call from being made for those five seconds.
    const policy = await policyWith(2);
    const { remote, calls } = rateLimitedJudge();
    const waiting = started(remote.run(event(policy, "limited")));
    await tick();
    expect(waiting.answer).toBeUndefined();
    const other = started(remote.run(event(policy, "other")));
    await tick();
    expect(other.answer?.audit).toEqual([
      expect.objectContaining({ outcome: "OK", budget: { used: 2, limit: 2 } }),
    ]);
    // A third decision finds the day spent; the retry, once its wait ends, finds it spent too and
    // is not made: no call of the day's two is made twice.
    const third = await remote.run(event(policy, "third"));
    expect(third.audit).toEqual([expect.objectContaining({ outcome: "JUDGE_BUDGET_SPENT" })]);
    await tick(RETRY_MS);
    expect(waiting.answer?.audit).toEqual([
      expect.objectContaining({
        outcome: "JUDGE_HTTP_ERROR",
        onError: "deny",
        budget: { used: 1, limit: 2 },
      }),
    ]);
    expect(reasonOf(waiting.answer)).toContain(
      'not called again: team \\"default\\" used its 2 daily calls to model \\"m\\" while it waited 5000 ms to call again',
    );
    expect(calls).toEqual(["limited", "other"]);
  });

  it("gives the call back when the deadline comes before the wait ends", async () => {
    // The wait fits before the deadline, but a busy event loop runs its timer late: the deadline
    // answers first, the second call is never made, and the budget it took is the next event's.
    const late = globalThis.setTimeout;
    vi.spyOn(globalThis, "setTimeout").mockImplementation(((fn: () => void, ms?: number) =>
      late(fn, ms === RETRY_MS ? ms + 10_000 : ms)) as typeof setTimeout);
    const policy = await policyWith(2);
    const { remote, calls } = rateLimitedJudge();
    const cut = started(remote.run(event(policy, "limited", 8000)));
    await tick(8000);
    expect(cut.answer?.audit).toEqual([
      expect.objectContaining({ outcome: "JUDGE_TIMEOUT", budget: { used: 1, limit: 2 } }),
    ]);
    const next = await remote.run(event(policy, "next"));
    expect(next.audit).toEqual([expect.objectContaining({ outcome: "OK", budget: { used: 2, limit: 2 } })]);
    expect(calls).toEqual(["limited", "next"]);
  });
});

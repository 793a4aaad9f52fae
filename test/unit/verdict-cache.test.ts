/**
 * The prompt rules' verdict cache over a serve's life: a verdict is served for its TTL and no
 * longer, whatever the wall clock does, and what the cache holds is bounded in characters as well
 * as in verdicts, and keyed by a digest of each event, not its text.
 */
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { describe, expect, it } from "vitest";
import { createRemoteActions, type RemoteInput } from "../../src/app/remote-actions.js";
import type { Policy } from "../../src/core/policy.js";
import { policyFrom, sha256 } from "../support/policy.js";

const answer = (reason: string) =>
  JSON.stringify({
    content: [{ type: "tool_use", id: "t", name: "verdict", input: { ok: false, reason } }],
    stop_reason: "tool_use",
  });

const policyWith = (cacheTtlSeconds: number) =>
  policyFrom(
    {
      version: 1,
      rules: [{ id: "judge", on: "PreToolUse", prompt: { text: "Deny rm. $ARGUMENTS", model: "m" } }],
      models: {
        m: { provider: "anthropic", model: "claude-haiku-4-5", apiKey: "env:K", cacheTtlSeconds },
      },
    },
    { K: "k" },
  );

const event = (policy: Policy, command: string): RemoteInput => ({
  rules: policy.rules,
  event: {
    name: "PreToolUse",
    dialect: "claude-code",
    known: true,
    payload: { hook_event_name: "PreToolUse", tool_name: "Bash", tool_input: { command } },
  },
  body: "{}",
  bodyChars: 2,
  team: "default",
  policy,
  deadlineMs: 5000,
});

/** Remote actions over a model that answers at once with `reason`, on clocks the test sets. */
function judge(reason: (call: number) => string) {
  const clock = { wall: Date.UTC(2026, 11, 5), mono: 1000 };
  let calls = 0;
  const remote = createRemoteActions({
    egress: async () => {
      calls += 1;
      return { ok: true, value: { status: 200, headers: {}, body: answer(reason(calls)) } };
    },
    env: () => "k",
    clock: { now: () => clock.wall, monotonic: () => clock.mono },
    sha256,
  });
  return { remote, clock, calls: () => calls };
}

describe("the verdict cache of a long-running gateway", () => {
  it("answers a run it holds every verdict of without asking for its client's signal, nor setting a timer", async () => {
    const policy = await policyWith(600);
    const { remote, calls } = judge(() => "rm");
    let signals = 0;
    const connection = {
      leaving: () => {
        signals += 1;
        return new AbortController().signal;
      },
    };
    const first = await remote.run({ ...event(policy, "rm -rf /"), connection });
    expect([first.audit[0]?.outcome, signals]).toEqual(["OK", 1]);
    // A cached verdict waits on nothing: no signal (an AbortSignal costs a few µs) and no timer.
    const timers = globalThis.setTimeout;
    let set = 0;
    globalThis.setTimeout = ((...args: Parameters<typeof setTimeout>) => {
      set += 1;
      return timers(...args);
    }) as typeof setTimeout;
    try {
      const again = await remote.run({ ...event(policy, "rm -rf /"), connection });
      expect(again.audit).toEqual([
        { rule: "judge", action: "prompt", ms: 0, model: "m", outcome: "CACHE_HIT" },
      ]);
      expect(again.effects).toEqual(first.effects);
    } finally {
      globalThis.setTimeout = timers;
    }
    expect([signals, set, calls()]).toEqual([1, 0, 1]);
  });

  it("serves a verdict for its TTL and no longer when the wall clock is stepped back", async () => {
    const policy = await policyWith(600);
    const { remote, clock, calls } = judge(() => "rm");
    const outcome = async () => (await remote.run(event(policy, "rm -rf /"))).audit[0]?.outcome;
    expect(await outcome()).toBe("OK");
    clock.mono += 60_000;
    clock.wall += 60_000;
    expect(await outcome()).toBe("CACHE_HIT");
    // NTP steps the wall clock back an hour; ten minutes pass.
    clock.wall -= 3_600_000;
    clock.mono += 600_000;
    clock.wall += 600_000;
    expect(await outcome()).toBe("OK");
    expect(calls()).toBe(2);
  });

  it("serves a verdict no longer than the TTL of the policy a reload put in force", async () => {
    const { remote, clock, calls } = judge(() => "rm");
    const outcome = async (policy: Policy) => (await remote.run(event(policy, "rm -rf /"))).audit[0]?.outcome;
    expect(await outcome(await policyWith(3600))).toBe("OK");
    clock.mono += 120_000;
    clock.wall += 120_000;
    // The operator shortens the TTL to a minute (the model's verdicts were wrong): a verdict
    // cached two minutes ago is not served, though the TTL it was cached under has not passed.
    const reloaded = await policyWith(60);
    expect(await outcome(reloaded)).toBe("OK");
    expect(await outcome(reloaded)).toBe("CACHE_HIT");
    clock.mono += 60_000;
    clock.wall += 60_000;
    expect(await outcome(reloaded)).toBe("OK");
    expect(calls()).toBe(3);
  });

  it("drops the oldest verdicts once their reasons pass the cache's bound in characters", async () => {
    const policy = await policyWith(600);
    // A reason of 16 KiB per event (a model that ignores the output limit), cut to 4,000
    // characters: 2,400 events, over 9 Mi characters of cut reasons in 2,400 verdicts, far fewer
    // than the 10,000 verdicts the cache may hold. Held whole behind their cuts, 37.5 MiB.
    const { remote } = judge((call) => `${call} ${"x".repeat(16 * 1024)}`);
    setFlagsFromString("--expose-gc");
    const gc = runInNewContext("gc") as () => void;
    gc();
    const before = process.memoryUsage().heapUsed;
    for (let i = 0; i < 2400; i++) await remote.run(event(policy, `rm -rf /${i}`));
    gc();
    // UTF-16 in the heap, or one byte per character: under the bound's 8 Mi characters either way.
    expect(process.memoryUsage().heapUsed - before).toBeLessThan(24 * 1024 * 1024);
    // The newest verdicts are still served from the cache, the oldest were dropped.
    expect((await remote.run(event(policy, "rm -rf /2399"))).audit[0]?.outcome).toBe("CACHE_HIT");
    expect((await remote.run(event(policy, "rm -rf /0"))).audit[0]?.outcome).toBe("OK");
  });

  it("judges apart events that differ only in an own __proto__ key, which the model reads", async () => {
    // A body's `"__proto__"` is an own key of the parsed event (JSON.parse), sent to the model as
    // any other: copied into a plain object it would set the copy's prototype and drop out of the
    // key, and the second event would be answered with the first one's verdict.
    const policy = await policyWith(600);
    const { remote, calls } = judge((call) => `verdict ${call}`);
    const withProto = (value: string): RemoteInput => {
      const input = event(policy, "ls");
      const payload = JSON.parse(
        `{"hook_event_name":"PreToolUse","tool_name":"Bash","__proto__":"${value}"}`,
      );
      return { ...input, event: { ...input.event, payload } };
    };
    expect((await remote.run(withProto("a"))).audit[0]?.outcome).toBe("OK");
    expect((await remote.run(withProto("b"))).audit[0]?.outcome).toBe("OK");
    expect((await remote.run(withProto("a"))).audit[0]?.outcome).toBe("CACHE_HIT");
    expect(calls()).toBe(2);
  });

  it("holds a digest of each event it caches, not the event's text", async () => {
    const policy = await policyWith(600);
    const { remote } = judge(() => "rm");
    setFlagsFromString("--expose-gc");
    const gc = runInNewContext("gc") as () => void;
    // 32 commands of 1 Mi characters each, parsed from JSON as a request's body is. Each event is
    // let go with its run, and with it what the run keeps by its event (the cut text the model read).
    const commands: string[] = Array.from({ length: 32 }, (_, i) =>
      JSON.parse(JSON.stringify(`rm -rf /${i} ${"x".repeat(1024 * 1024)}`)),
    );
    gc();
    const before = process.memoryUsage().heapUsed;
    for (const command of commands)
      expect((await remote.run(event(policy, command))).audit[0]?.outcome).toBe("OK");
    gc();
    // Keyed by the text, the cache would hold 32 MiB.
    expect(process.memoryUsage().heapUsed - before).toBeLessThan(8 * 1024 * 1024);
    expect((await remote.run(event(policy, commands[0] as string))).audit[0]?.outcome).toBe("CACHE_HIT");
  });
});

/**
 * A model's concurrency slots (`maxConcurrent`) as prompt rules see them, on fake timers with a
 * monotonic clock that follows them: the order waiting calls are served in, a reload that changes
 * the size, calls given up while waiting, and the slot of a call that never ends.
 */
import { AsyncLocalStorage, AsyncResource } from "node:async_hooks";
import { getEventListeners } from "node:events";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { createRemoteActions, type RemoteInput } from "../../src/app/remote-actions.js";
import type { Policy } from "../../src/core/policy.js";
import { policyFrom, sha256 } from "../support/policy.js";

const VERDICT = JSON.stringify({
  content: [{ type: "tool_use", id: "t", name: "verdict", input: { ok: false, reason: "rm" } }],
  stop_reason: "tool_use",
});

const policyWith = (maxConcurrent: number) =>
  policyFrom(
    {
      version: 1,
      rules: [{ id: "judge", on: "PreToolUse", prompt: { text: "Deny rm. $ARGUMENTS", model: "m" } }],
      models: {
        m: {
          provider: "anthropic",
          model: "claude-haiku-4-5",
          apiKey: "env:K",
          maxConcurrent,
          cacheTtlSeconds: 0,
        },
      },
    },
    { K: "k" },
  );

/** An event of its own per name (`rm -rf /<name>`), so no call waits on an identical one. */
const event = (policy: Policy, name: string, deadlineMs: number): RemoteInput => ({
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

/** A model whose calls end only when the test ends them (`end(name)`); `calls` in the order made. */
function slowJudge(stopping?: AbortSignal) {
  const calls: string[] = [];
  const ends = new Map<string, () => void>();
  const remote = createRemoteActions({
    egress: (request) => {
      const name = /rm -rf \/(\w+)/.exec(request.body ?? "")?.[1] ?? "?";
      calls.push(name);
      return new Promise((resolve) =>
        ends.set(name, () => resolve({ ok: true, value: { status: 200, headers: {}, body: VERDICT } })),
      );
    },
    env: () => "k",
    // Monotonic time as the fake timers move it.
    clock: { now: () => Date.now(), monotonic: () => Date.now() },
    sha256,
    stopping,
  });
  return { remote, calls, end: (name: string) => ends.get(name)?.() };
}

/** Runs what is due in `ms` (0: only what is ready now), the promises it settles included. */
const tick = (ms = 0) => vi.advanceTimersByTimeAsync(ms);
/** A waiting call finds the slot it was handed at its next look (SLOT_POLL_MS, 20 ms). */
const LOOK_MS = 20;

describe("a model's concurrency slots", () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.restoreAllMocks();
    vi.useRealTimers();
  });

  it("serves the waiting calls in the order they came", async () => {
    const policy = await policyWith(1);
    const { remote, calls, end } = slowJudge();
    const runs = ["a", "b", "c"].map((name) => remote.run(event(policy, name, 60_000)));
    await tick();
    expect(calls).toEqual(["a"]);
    end("a");
    await tick(LOOK_MS);
    expect(calls).toEqual(["a", "b"]);
    end("b");
    await tick(LOOK_MS);
    expect(calls).toEqual(["a", "b", "c"]);
    end("c");
    for (const run of runs) expect((await run).audit).toEqual([expect.objectContaining({ outcome: "OK" })]);
  });

  it("gives a slot a reload adds to the call waiting longest, not to the next one to come", async () => {
    const [one, two] = [await policyWith(1), await policyWith(2)];
    const { remote, calls, end } = slowJudge();
    const runs = [remote.run(event(one, "a", 60_000)), remote.run(event(one, "b", 60_000))];
    await tick();
    runs.push(remote.run(event(two, "c", 60_000)));
    await tick(LOOK_MS);
    expect(calls).toEqual(["a", "b"]);
    end("a");
    await tick(LOOK_MS);
    expect(calls).toEqual(["a", "b", "c"]);
    end("b");
    end("c");
    for (const run of runs) expect((await run).audit).toEqual([expect.objectContaining({ outcome: "OK" })]);
  });

  it("gives the slot of a call that never ended to the call waiting for it, not to one that comes just then", async () => {
    const policy = await policyWith(1);
    const { remote, calls, end } = slowJudge();
    // Answered at its deadline; its call never ends, and its slot is taken back 1 s after it.
    const stopped = remote.run(event(policy, "a", 100));
    await tick(100);
    expect((await stopped).audit).toEqual([expect.objectContaining({ outcome: "JUDGE_TIMEOUT" })]);
    const waiting = remote.run(event(policy, "b", 60_000));
    await tick();
    // Past the time the slot went stale, before the timer that gives it out has run (a busy
    // event loop runs timers late).
    vi.setSystemTime(Date.now() + 2000);
    const next = remote.run(event(policy, "c", 60_000));
    await tick(LOOK_MS);
    expect(calls).toEqual(["a", "b"]);
    end("b");
    await tick(LOOK_MS);
    expect(calls).toEqual(["a", "b", "c"]);
    end("c");
    expect((await waiting).audit).toEqual([expect.objectContaining({ outcome: "OK" })]);
    expect((await next).audit).toEqual([expect.objectContaining({ outcome: "OK" })]);
  });

  it("makes no call, and leaves no timer, for a request answered before it asked for a slot", async () => {
    // A request that came after `serve` began to stop is answered at once; its call waited for
    // a slot regardless, with a timer to its deadline, and was made once given one.
    const policy = await policyWith(1);
    const stopping = new AbortController();
    const { remote, calls, end } = slowJudge(stopping.signal);
    const first = remote.run(event(policy, "a", 60_000));
    await tick();
    stopping.abort();
    expect((await first).audit).toEqual([expect.objectContaining({ outcome: "JUDGE_TIMEOUT" })]);
    const late = await remote.run(event(policy, "b", 60_000));
    expect(late.audit).toEqual([expect.objectContaining({ outcome: "JUDGE_TIMEOUT" })]);
    expect(vi.getTimerCount()).toBe(0);
    // The first call ends after all (its connection heeded the abort late).
    end("a");
    await tick();
    expect(calls).toEqual(["a"]);
  });

  it("answers every call in flight or waiting when serve stops, with one listener on its signal for them all", async () => {
    // One listener each: the 11th remote rule in flight made Node warn on stderr of a possible
    // memory leak ("MaxListenersExceededWarning"), at every burst of agents.
    const policy = await policyWith(2);
    const stopping = new AbortController();
    const { remote, calls } = slowJudge(stopping.signal);
    const names = Array.from({ length: 30 }, (_, i) => `c${i}`);
    const runs = names.map((name) => remote.run(event(policy, name, 60_000)));
    await tick(LOOK_MS);
    expect(calls).toEqual(["c0", "c1"]);
    expect(getEventListeners(stopping.signal, "abort")).toHaveLength(1);
    stopping.abort();
    for (const run of runs)
      expect((await run).audit).toEqual([expect.objectContaining({ outcome: "JUDGE_TIMEOUT" })]);
    expect(calls).toEqual(["c0", "c1"]);
    expect(vi.getTimerCount()).toBe(0);
  });

  it("leaves no timer behind when serve stops while calls wait for a slot", async () => {
    // The wake-up timer set for when the held slot goes stale would keep a stopped `serve` running.
    const policy = await policyWith(1);
    const stopping = new AbortController();
    const { remote, calls } = slowJudge(stopping.signal);
    const stopped = remote.run(event(policy, "a", 100));
    await tick(100);
    await stopped;
    const waiting = remote.run(event(policy, "b", 60_000));
    await tick(100);
    stopping.abort();
    expect((await waiting).audit).toEqual([expect.objectContaining({ outcome: "JUDGE_TIMEOUT" })]);
    expect(calls).toEqual(["a"]);
    expect(vi.getTimerCount()).toBe(0);
  });

  it("wakes a waiting call again for the next slot to go stale when another waiting call took the first", async () => {
    const policy = await policyWith(1);
    const { remote, calls, end } = slowJudge();
    const stopped = remote.run(event(policy, "a", 100));
    await tick(100);
    await stopped;
    // Both wait for a's slot, stale 1 s past its deadline: w gets it, and never ends either.
    const stuck = remote.run(event(policy, "w", 2000));
    const waiting = remote.run(event(policy, "b", 60_000));
    await tick(1000);
    expect(calls).toEqual(["a", "w"]);
    await tick(2500);
    expect((await stuck).audit).toEqual([expect.objectContaining({ outcome: "JUDGE_TIMEOUT" })]);
    expect(calls).toEqual(["a", "w", "b"]);
    end("b");
    expect((await waiting).audit).toEqual([expect.objectContaining({ outcome: "OK" })]);
  });

  it("wakes a waiting call for a stale slot even after a later waiting call gave up and its request ended", async () => {
    // As workerd does: a timer set while a request was handled never fires once that request
    // ended. The wake-up timer, set again by whichever request last came or gave up, was lost
    // with that request, and the call waiting longest waited out its deadline.
    const request = new AsyncLocalStorage<string>();
    const timers = new Map<string, ReturnType<typeof setTimeout>[]>();
    const set = globalThis.setTimeout;
    vi.spyOn(globalThis, "setTimeout").mockImplementation(((fn: () => void, ms?: number) => {
      const id = set(AsyncResource.bind(fn), ms);
      const name = request.getStore();
      if (name !== undefined) timers.set(name, [...(timers.get(name) ?? []), id]);
      return id;
    }) as typeof setTimeout);
    const ended = (name: string) => {
      for (const id of timers.get(name) ?? []) clearTimeout(id);
    };
    const policy = await policyWith(1);
    const { remote, calls, end } = slowJudge();
    const stopped = request.run("a", () => remote.run(event(policy, "a", 100)));
    await tick(100);
    await stopped;
    ended("a");
    const waiting = request.run("b", () => remote.run(event(policy, "b", 60_000)));
    await tick();
    const short = request.run("c", () => remote.run(event(policy, "c", 300)));
    await tick(300);
    expect((await short).audit).toEqual([expect.objectContaining({ outcome: "JUDGE_TIMEOUT" })]);
    ended("c");
    // Past the time the first call's slot went stale (1 s past its deadline).
    await tick(1000);
    expect(calls).toEqual(["a", "b"]);
    end("b");
    expect((await waiting).audit).toEqual([expect.objectContaining({ outcome: "OK" })]);
  });

  it("holds no text of a waiting call's event but the request's own", async () => {
    const policy = await policyWith(1);
    const { remote, calls, end } = slowJudge();
    const first = remote.run(event(policy, "a", 60_000));
    await tick();
    // A command of 16 Mi characters, one byte each in the heap, parsed from JSON as a request's
    // body is: the event as the model reads it, written out whole, would be as large again.
    const big = event(policy, "b", 60_000);
    const command = `rm -rf /b ${"x".repeat(16 * 1024 * 1024)}`;
    const payload = JSON.parse(JSON.stringify({ ...big.event.payload, tool_input: { command } }));
    const input = { ...big, event: { ...big.event, payload } };
    setFlagsFromString("--expose-gc");
    const gc = runInNewContext("gc") as () => void;
    gc();
    const before = process.memoryUsage().heapUsed;
    const waiting = remote.run(input);
    await tick(LOOK_MS);
    gc();
    expect(calls).toEqual(["a"]);
    expect(process.memoryUsage().heapUsed - before).toBeLessThan(4 * 1024 * 1024);
    end("a");
    await tick(LOOK_MS);
    expect(calls).toEqual(["a", "b"]);
    end("b");
    expect((await first).audit).toEqual([expect.objectContaining({ outcome: "OK" })]);
    expect((await waiting).audit).toEqual([expect.objectContaining({ outcome: "OK" })]);
  });
});

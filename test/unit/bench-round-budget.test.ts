/**
 * bench/common.js's roundBudget: a benchmark's rounds stop once the next would overrun its time
 * budget, so `npm run bench` stays under five minutes on a slow host (issue 10). Time is faked.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
// @ts-expect-error: bench/ is plain JavaScript with no declarations.
import { roundBudget } from "../../bench/common.js";

interface Budget {
  start(round: number): boolean;
  readonly measured: number;
  cut(asked: number): string;
  settle(options: { rounds: number; roundsAsked?: number }): string;
}

beforeEach(() => {
  vi.useFakeTimers({ toFake: ["performance"] });
});
afterEach(() => {
  vi.useRealTimers();
});

/** Starts rounds `first`..`last` of `ms` each while the budget lets them; the rounds started. */
function run(budget: Budget, first: number, last: number, ms: number): number[] {
  const started: number[] = [];
  for (let round = first; round <= last && budget.start(round); round++) {
    started.push(round);
    vi.advanceTimersByTime(ms);
  }
  return started;
}

describe("roundBudget", () => {
  it("starts a round only while the longest so far fits in what is left, warm-ups counted", () => {
    const budget: Budget = roundBudget(10, 2);
    // A warm-up and two measured rounds of 3 s: 9 s spent, and a fourth would end at 12 s.
    expect(run(budget, 0, 5, 3000)).toEqual([0, 1, 2]);
    expect(budget.measured).toBe(2);
    expect(budget.cut(5)).toBe(" (of 5: the 10 s budget, `--seconds`, ran out)");
    const options = { rounds: 5 };
    expect(budget.settle(options)).toBe(" (of 5: the 10 s budget, `--seconds`, ran out)");
    expect(options).toEqual({ rounds: 2, roundsAsked: 5 });
  });

  it("always runs the warm-ups and the first `min` measured rounds", () => {
    const budget: Budget = roundBudget(1, 3);
    expect(run(budget, -1, 5, 5000)).toEqual([-1, 0, 1, 2, 3]);
    expect(budget.measured).toBe(3);
  });

  it("runs every round asked for when they fit, and then says nothing was cut", () => {
    const budget: Budget = roundBudget(100, 1);
    expect(run(budget, 0, 4, 10_000)).toEqual([0, 1, 2, 3, 4]);
    expect(budget.cut(4)).toBe("");
  });

  it("measures by the longest round, not the last", () => {
    const budget: Budget = roundBudget(20, 1);
    expect(budget.start(1)).toBe(true);
    vi.advanceTimersByTime(9000);
    expect(budget.start(2)).toBe(true);
    vi.advanceTimersByTime(1000);
    // 10 s spent; the longest round (9 s) would end at 19 s: it fits. After it, 19 + 9 does not.
    expect(budget.start(3)).toBe(true);
    vi.advanceTimersByTime(9000);
    expect(budget.start(4)).toBe(false);
  });

  it("has no budget at 0 seconds", () => {
    const budget: Budget = roundBudget(0, 1);
    expect(run(budget, 1, 6, 3_600_000)).toEqual([1, 2, 3, 4, 5, 6]);
  });
});

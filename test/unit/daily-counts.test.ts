import { describe, expect, it } from "vitest";
import { DailyCounts } from "../../src/app/remote-actions.js";

describe("DailyCounts: the prompt rules' daily budgets", () => {
  it("counts per name and day, up to the limit, and gives a call back to its own day", () => {
    const counts = new DailyCounts();
    const first = counts.spend(["m", "a"], "2026-12-01", 1);
    expect(first).toMatchObject({ ok: true, used: 1, limit: 1 });
    expect(counts.spend(["m", "a"], "2026-12-01", 1)).toEqual({ ok: false, used: 1, limit: 1 });
    expect(counts.spend(["m", "b"], "2026-12-01", 1)).toMatchObject({ ok: true, used: 1 });
    const next = counts.spend(["m", "a"], "2026-12-02", 1);
    expect(next).toMatchObject({ ok: true, used: 1 });
    // The call spent before midnight and never sent comes off that day, not the new one.
    counts.refund(first.key as string);
    expect(counts.spend(["m", "a"], "2026-12-02", 1)).toMatchObject({ ok: false, used: 1 });
    expect(counts.spend(["m", "a"], "2026-12-01", 1)).toMatchObject({ ok: true, used: 1 });
    // A call given back twice (a retry of the refund) frees one call, never more.
    const once = counts.spend(["m", "c"], "2026-12-02", 1);
    counts.refund(once.key as string);
    counts.refund(once.key as string);
    expect(counts.spend(["m", "c"], "2026-12-02", 1)).toMatchObject({ ok: true, used: 1 });
    expect(counts.spend(["m", "c"], "2026-12-02", 1)).toEqual({ ok: false, used: 1, limit: 1 });
  });

  it("keeps the counts of today and the day before only, so a serve that runs for months holds two days", () => {
    const counts = new DailyCounts();
    for (const team of ["a", "b", "c"]) counts.spend(["m", team], "2026-12-01", 10);
    counts.spend(["m", "a"], "2026-12-02", 10);
    expect(counts.size).toBe(4); // The day before stays: a call spent on it may still be given back.
    const late = counts.spend(["m", "a"], "2026-12-02", 10);
    counts.spend(["m", "a"], "2026-12-03", 10);
    expect(counts.size).toBe(2);
    counts.refund(late.key as string);
    expect(counts.spend(["m", "a"], "2026-12-02", 10)).toMatchObject({ ok: true, used: 2 });
    for (let day = 4; day <= 28; day++)
      counts.spend(["m", "a"], `2026-12-${String(day).padStart(2, "0")}`, 10);
    expect(counts.size).toBe(2);
    // A refund for a day dropped since changes nothing.
    counts.refund(late.key as string);
    expect(counts.size).toBe(2);
  });

  it("keeps pruning after a clock that read a later day is stepped back, and keeps the day's count over a small step back at midnight", () => {
    const counts = new DailyCounts();
    // A host that resumed a year ahead, then NTP stepped it back: 60 days of calls after that.
    counts.spend(["m", "a"], "2027-12-05", 10);
    for (let day = 0; day < 60; day++) {
      const date = new Date(Date.UTC(2026, 11, 5) + day * 86_400_000).toISOString().slice(0, 10);
      for (const team of ["a", "b"]) counts.spend(["m", team], date, 10);
    }
    // Before, the year-ahead day stayed the latest and nothing was dropped: 121 counts.
    expect(counts.size).toBe(4);
    // Stepped back over midnight by a few seconds and on again: the new day's count is kept.
    const spent = counts.spend(["m", "a"], "2027-02-03", 10);
    expect(spent).toMatchObject({ ok: true, used: 1 });
    expect(counts.spend(["m", "a"], "2027-02-02", 10)).toMatchObject({ ok: true });
    expect(counts.spend(["m", "a"], "2027-02-03", 10)).toMatchObject({ ok: true, used: 2 });
    counts.refund(spent.key as string);
    expect(counts.spend(["m", "a"], "2027-02-03", 10)).toMatchObject({ ok: true, used: 2 });
  });

  it("lets claims keep out of each other but not out of a call made now, and drops a claim past its deadline", () => {
    const counts = new DailyCounts();
    counts.spend(["m", "a"], "2026-12-01", 2);
    const claim = counts.hold(["m", "a"], "2026-12-01", 2, 100, 0);
    expect(claim).toMatchObject({ ok: true, used: 1, limit: 2 });
    // A second wait cannot count on the same last call; a call made now takes it.
    expect(counts.hold(["m", "a"], "2026-12-01", 2, 100, 0)).toEqual({ ok: false, used: 1, limit: 2 });
    expect(counts.spend(["m", "a"], "2026-12-01", 2)).toMatchObject({ ok: true, used: 2 });
    counts.release(claim.hold as NonNullable<typeof claim.hold>);
    expect(counts.spend(["m", "a"], "2026-12-01", 2)).toMatchObject({ ok: false, used: 2 });
    // A claim never released (its request stopped) lapses at its deadline.
    counts.spend(["m", "b"], "2026-12-01", 2);
    counts.hold(["m", "b"], "2026-12-01", 2, 100, 0);
    expect(counts.hold(["m", "b"], "2026-12-01", 2, 200, 99)).toMatchObject({ ok: false });
    expect(counts.hold(["m", "b"], "2026-12-01", 2, 200, 100)).toMatchObject({ ok: true, used: 1 });
    // A claim released (its call made or given up) keeps no other out.
    counts.spend(["m", "c"], "2026-12-01", 2);
    const released = counts.hold(["m", "c"], "2026-12-01", 2, 100, 0);
    counts.release(released.hold as NonNullable<typeof released.hold>);
    expect(counts.hold(["m", "c"], "2026-12-01", 2, 100, 0)).toMatchObject({ ok: true, used: 1 });
  });
});

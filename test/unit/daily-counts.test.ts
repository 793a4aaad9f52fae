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
});

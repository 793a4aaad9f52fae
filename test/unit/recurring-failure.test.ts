import { describe, expect, it } from "vitest";
import { RecurringFailure } from "../../src/core/recurring-failure.js";

describe("RecurringFailure", () => {
  it("logs a failure when it starts, when its text changes and once per interval, with the repeats it left out", () => {
    let now = 0;
    const failures = new RecurringFailure(60_000, () => now);
    expect(failures.failed("file is not a database")).toEqual({ log: true, repeated: 0 });
    now += 200;
    expect(failures.failed("file is not a database")).toEqual({ log: false, repeated: 1 });
    now += 200;
    expect(failures.failed("file is not a database")).toEqual({ log: false, repeated: 2 });
    now = 60_000;
    expect(failures.failed("file is not a database")).toEqual({ log: true, repeated: 2 });
    now += 200;
    expect(failures.failed("database is locked")).toEqual({ log: true, repeated: 0 });
    expect(failures.failed("database is locked")).toEqual({ log: false, repeated: 1 });
    // Its end is told once, with the failures in a row; then it starts again as new.
    expect(failures.worked()).toBe(6);
    expect(failures.worked()).toBeUndefined();
    expect(failures.failed("database is locked")).toEqual({ log: true, repeated: 0 });
  });
});

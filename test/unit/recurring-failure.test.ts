import { describe, expect, it } from "vitest";
import { RecurringFailure, toldFailure } from "../../src/core/recurring-failure.js";

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

  it("is told by toldFailure: the failure with its fields and repeats, its end once at info", () => {
    let now = 0;
    const lines: [string, string, Record<string, unknown> | undefined][] = [];
    const told = toldFailure(
      { log: (level, message, fields) => lines.push([level, message, fields]) },
      "error",
      "queue receive failed",
      "queue receive works again",
      () => now,
    );
    told.worked();
    told.failed("file is not a database", { fix: "move it aside" });
    now += 200;
    told.failed("file is not a database", { fix: "move it aside" });
    now = 60_000;
    told.failed("file is not a database");
    told.worked({ what: "receive" });
    told.worked();
    expect(lines).toEqual([
      ["error", "queue receive failed", { fix: "move it aside", error: "file is not a database" }],
      ["error", "queue receive failed", { error: "file is not a database", repeated: 1 }],
      ["info", "queue receive works again", { what: "receive", failures: 3 }],
    ]);
  });
});

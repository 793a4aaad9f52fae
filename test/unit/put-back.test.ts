/**
 * The order of a put-back of a deleted queue file (the real thread's put-backs are covered in
 * test/unit/delivery-thread-host.test.ts): its end runs once, after its failure is handled, never
 * as part of it. An egress that fails to close is the one part stood in for: nothing real makes
 * undici's close reject.
 */
import { describe, expect, it } from "vitest";
import { putBack } from "../../src/entry/put-back.js";

function steps(restore: () => Promise<void>, end: () => Promise<void>, closed = true) {
  const calls: string[] = [];
  return {
    calls,
    run: () =>
      putBack({
        restore,
        closed: () => closed,
        notMoved: (e) => calls.push(`notMoved: ${(e as Error).message}`),
        failed: (e) => calls.push(`failed: ${(e as Error).message}`),
        end: async () => {
          calls.push("end");
          await end();
        },
      }),
  };
}

describe("putBack", () => {
  it("ends once after a put-back that worked, whose end fails, and tells that as no failure of the put-back", async () => {
    const { calls, run } = steps(
      async () => {},
      () => Promise.reject(new Error("the egress did not close")),
    );
    await expect(run()).rejects.toThrow("the egress did not close");
    expect(calls).toEqual(["end"]);
  });

  it("ends once after a put-back whose rename failed once its queue closed, saying the copy waits", async () => {
    const { calls, run } = steps(
      () => Promise.reject(new Error("EISDIR")),
      async () => {},
    );
    await run();
    expect(calls).toEqual(["notMoved: EISDIR", "end"]);
  });

  it("does not end after a put-back that failed before its queue closed, which is tried again", async () => {
    const { calls, run } = steps(
      () => Promise.reject(new Error("ENOSPC")),
      async () => {},
      false,
    );
    await run();
    expect(calls).toEqual(["failed: ENOSPC"]);
  });
});

import { connect, type LookupFunction } from "node:net";
import { describe, expect, it } from "vitest";
import { errorMessage } from "../../src/core/errors.js";
import { refusingPort } from "../support/loopback.js";

/** The error Node gives when every address of a name refuses the connection. */
async function everyAddressRefused(): Promise<unknown> {
  const port = await refusingPort();
  const lookup = ((_name, _options, callback) =>
    callback(null, [
      { address: "127.0.0.1", family: 4 },
      { address: "::1", family: 6 },
    ])) as LookupFunction;
  return new Promise((resolve) => {
    const socket = connect({ host: "dual.test", port, lookup, autoSelectFamily: true });
    socket.on("connect", () => resolve(new Error("connected")));
    socket.on("error", resolve);
  });
}

describe("errorMessage", () => {
  it("gives an Error's message, and anything else as a string", () => {
    expect([errorMessage(new Error("boom")), errorMessage("plain"), errorMessage(42)]).toEqual([
      "boom",
      "plain",
      "42",
    ]);
  });

  it("says each address's error when every address of a name failed (an AggregateError with no message)", async () => {
    const e = await everyAddressRefused();
    expect(e).toBeInstanceOf(AggregateError);
    expect((e as Error).message).toBe("");
    const message = errorMessage(e);
    expect(message).toMatch(/ECONNREFUSED 127\.0\.0\.1:\d+/);
    expect(message).toMatch(/ECONNREFUSED ::1:\d+/);
  });

  it("keeps an AggregateError's own message when it has one", () => {
    expect(errorMessage(new AggregateError([new Error("a")], "both failed"))).toBe("both failed");
  });
});

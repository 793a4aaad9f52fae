import { afterEach, describe, expect, it, vi } from "vitest";
import {
  bodyDeadline,
  type ChunkSource,
  createBodyBudget,
  decodeBody,
  readBody,
  readBodyChunks,
  STALE_HOLD_GRACE_MS,
} from "../../src/http/read-body.js";

afterEach(() => vi.restoreAllMocks());

describe("decodeBody", () => {
  it("calls a body too long to hold as a string too large, not invalid UTF-8 (a hunt: 700 MB of ASCII)", () => {
    // V8 cannot make a string of 700 MB: its TextDecoder throws an Error, where bad UTF-8 is a TypeError.
    vi.spyOn(TextDecoder.prototype, "decode").mockImplementationOnce(() => {
      throw new Error("Cannot create a string longer than 0x1fffffe8 characters");
    });
    const result = decodeBody(new TextEncoder().encode('{"hook_event_name":"Stop"}'));
    expect(result).toEqual({
      ok: false,
      error: {
        code: "BODY_TOO_LARGE",
        message:
          "the request body is 26 bytes, too long to hold as text (Cannot create a string longer than 0x1fffffe8 characters); lower defaults.maxBodyBytes",
        eventName: "Stop",
      },
    });
  });

  it("still calls bytes that are not UTF-8 so", () => {
    const result = decodeBody(new Uint8Array([0x7b, 0xff, 0x7d]));
    expect(result.ok === false && result.error.code).toBe("BODY_NOT_UTF8");
  });
});

describe("readBody", () => {
  /** A POST whose body comes in two chunks, with no Content-Length to go by. */
  const posted = (text: string) => {
    const bytes = new TextEncoder().encode(text);
    const half = Math.floor(bytes.byteLength / 2);
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(bytes.slice(0, half));
        controller.enqueue(bytes.slice(half));
        controller.close();
      },
    });
    return new Request("http://gateway.test/v1/hooks", {
      method: "POST",
      body,
      duplex: "half",
    } as RequestInit);
  };

  it("reads a body of exactly the limit, and refuses one byte more as too large", async () => {
    const event = '{"hook_event_name":"Stop","pad":""}';
    expect(await readBody(posted(event), event.length)).toEqual({ ok: true, text: event });
    const over = await readBody(posted(event), event.length - 1);
    expect(over).toMatchObject({ ok: false, error: { code: "BODY_TOO_LARGE", eventName: "Stop" } });
  });
});

describe("readBodyChunks and the Content-Length sent", () => {
  /** One chunk of a body whose rest never comes: a source that ends after it. */
  const firstChunkOnly = (): ChunkSource => {
    let given = false;
    return {
      next: async () => {
        if (given) return { done: true, value: undefined };
        given = true;
        return { done: false, value: new TextEncoder().encode('{"hook_event_name":"PreToolUse","pad":"') };
      },
    };
  };

  // RFC 9110 §8.6: Content-Length is 1*DIGIT, leading zeros allowed; Node's parser takes up to
  // 2^64 - 1. A length past the drain limit is refused at its first chunk, however it is written.
  it.each([
    ["73400320", 73_400_320],
    ["0000000073400320", 73_400_320],
    ["00000000000000000000073400320", 73_400_320],
    ["9007199254740993", 9_007_199_254_740_992],
  ])("refuses a body declared as %s bytes at its first chunk, the rest unread", async (sent, size) => {
    const result = await readBodyChunks(firstChunkOnly(), sent, 1024 * 1024);
    expect(result).toEqual({
      ok: false,
      unread: true,
      error: {
        code: "BODY_TOO_LARGE",
        message: `the request body is at least ${size} bytes; this gateway reads at most 1048576 (defaults.maxBodyBytes)`,
        eventName: "PreToolUse",
      },
    });
  });
});

describe("bodyDeadline", () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it("passes when its time is up and not a millisecond before, and never once cleared", async () => {
    vi.useFakeTimers();
    let passed: unknown;
    bodyDeadline(300).late.catch((e: unknown) => {
      passed = e;
    });
    await vi.advanceTimersByTimeAsync(299);
    expect(passed).toBeUndefined();
    await vi.advanceTimersByTimeAsync(1);
    expect(passed).toEqual(
      new Error("it did not all arrive within 0.3 s; the client sent it too slowly or stalled"),
    );
    const cleared = bodyDeadline(300);
    let clearedPassed = false;
    cleared.late.catch(() => {
      clearedPassed = true;
    });
    cleared.clear();
    await vi.advanceTimersByTimeAsync(1000);
    expect(clearedPassed).toBe(false);
  });
});

describe("createBodyBudget with an expiry (a Worker's)", () => {
  /** A monotonic clock the test moves, as the isolate's performance.now(). */
  const clockAt = () => {
    let now = 1_000;
    return {
      monotonic: () => now,
      advance: (ms: number) => {
        now += ms;
      },
    };
  };
  const bytes = (text: string) => new TextEncoder().encode(text);
  const body = (text: string): ChunkSource => {
    let given = false;
    return {
      next: async () => {
        if (given) return { done: true, value: undefined };
        given = true;
        return { done: false, value: bytes(text) };
      },
    };
  };

  it("drops a hold its request never ended once the hold's time and the grace are past, and no earlier", async () => {
    // A Worker's request the runtime stops (its CPU limit, 30 s after a hang-up) runs no `finally`:
    // its body's bytes stayed taken for the isolate's life, and every later hook was refused.
    const clock = clockAt();
    const budget = createBodyBudget(100, { holdMs: 60_000, monotonic: clock.monotonic });
    const stopped = `{"hook_event_name":"Stop","x":"${"a".repeat(60)}`;
    let asked: () => void = () => {};
    const askedMore = new Promise<void>((resolve) => {
      asked = resolve;
    });
    let reads = 0;
    // Its first chunk, then nothing ever again: the reading never ends, as in a stopped request.
    const never: ChunkSource = {
      next: () => {
        if (reads++ === 0) return Promise.resolve({ done: false, value: bytes(stopped) });
        asked();
        return new Promise(() => {});
      },
    };
    void readBodyChunks(never, null, 1024, undefined, budget);
    await askedMore;
    const next = `{"hook_event_name":"PreToolUse","x":"${"b".repeat(60)}"}`;
    clock.advance(60_000 + STALE_HOLD_GRACE_MS - 1);
    expect(await readBodyChunks(body(next), null, 1024, undefined, budget)).toMatchObject({
      ok: false,
      error: { code: "BODY_UNREADABLE" },
    });
    expect([budget.heldBytes(), budget.refused()]).toEqual([stopped.length, 1]);
    clock.advance(1);
    expect(await readBodyChunks(body(next), null, 1024, undefined, budget)).toEqual({ ok: true, text: next });
    // What /metrics reads: nothing held, and the one refusal before.
    expect([budget.heldBytes(), budget.refused()]).toEqual([0, 1]);
  });

  it("takes nothing more for a hold dropped as stale, and its late end gives nothing back twice", () => {
    const clock = clockAt();
    const budget = createBodyBudget(100, { holdMs: 60_000, monotonic: clock.monotonic });
    const late = budget.hold();
    expect(late.take(80)).toBe(true);
    clock.advance(60_000 + STALE_HOLD_GRACE_MS);
    const fresh = budget.hold();
    expect(fresh.take(50)).toBe(true);
    expect(late.take(10)).toBe(false);
    late.end();
    expect(budget.heldBytes()).toBe(50);
    fresh.end();
    fresh.end();
    expect(budget.heldBytes()).toBe(0);
  });

  it("keeps a hold without an expiry (Node's, where every reading ends) until it ends", () => {
    const budget = createBodyBudget(100);
    const held = budget.hold();
    expect(held.take(80)).toBe(true);
    expect(budget.hold().take(50)).toBe(false);
    held.end();
    expect(budget.hold().take(50)).toBe(true);
    expect([budget.heldBytes(), budget.refused()]).toEqual([50, 1]);
  });
});

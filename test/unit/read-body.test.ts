import { afterEach, describe, expect, it, vi } from "vitest";
import { bodyDeadline, decodeBody, readBody } from "../../src/http/read-body.js";

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

/**
 * The Lambda handler's header check skips `Headers` for a header it vouches for as plainly fit
 * (lambda-http.ts `plainlyFit`), so a cold start's first decision never loads Node's fetch. A
 * header it vouched for that `Headers` refuses would reach hono's adapter, which throws on it:
 * every vouched-for header must be one `Headers` takes. What it does not vouch for, `Headers`
 * itself decides, so the other direction needs no check.
 */
import { describe, expect, it } from "vitest";
import { plainlyFit } from "../../src/entry/lambda-http.js";

const takes = (name: string, value: string) => {
  try {
    new Headers().set(name, value);
    return true;
  } catch {
    return false;
  }
};

describe("the Lambda header check's shortcut", () => {
  it("vouches for no value Headers refuses, for every UTF-16 code unit alone, first, inside and last", () => {
    const wrong: string[] = [];
    for (let unit = 0; unit <= 0xffff; unit++) {
      const c = String.fromCharCode(unit);
      for (const value of [c, `${c}a`, `a${c}b`, `a${c}`]) {
        if (plainlyFit("x-h", value) && !takes("x-h", value)) wrong.push(JSON.stringify(value));
      }
    }
    expect(wrong).toEqual([]);
    // It does vouch for the headers events carry, so the probe stays off the common path.
    expect(plainlyFit("content-type", "application/json")).toBe(true);
    expect(plainlyFit("user-agent", "axios/1.15.2 (caf\u00e9)")).toBe(true);
  });

  it("vouches for no name Headers refuses, for every UTF-16 code unit alone, first, inside and last", () => {
    const wrong: string[] = [];
    for (let unit = 0; unit <= 0xffff; unit++) {
      const c = String.fromCharCode(unit);
      for (const name of [c, `${c}a`, `a${c}b`, `a${c}`]) {
        if (plainlyFit(name, "v") && !takes(name, "v")) wrong.push(JSON.stringify(name));
      }
    }
    expect(wrong).toEqual([]);
    expect(plainlyFit("", "v")).toBe(false);
  });
});

import { describe, expect, it } from "vitest";
import { keepLast } from "../../src/core/keep-last.js";

describe("keepLast", () => {
  it("computes again only for another key, and keeps no undefined answer", () => {
    const asked: string[] = [];
    const kept = keepLast((key: string) => {
      asked.push(key);
      return key === "none" ? undefined : key.length;
    });
    expect([kept("ab"), kept("ab"), kept("abc"), kept("ab")]).toEqual([2, 2, 3, 2]);
    expect([kept("none"), kept("none")]).toEqual([undefined, undefined]);
    expect(asked).toEqual(["ab", "abc", "ab", "none", "none"]);
  });
});

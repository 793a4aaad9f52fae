import { describe, expect, it } from "vitest";
import { MAX_REMEMBERED_IDS, RememberedIds, UnsentReceives } from "../../src/core/remembered-ids.js";

describe("RememberedIds", () => {
  it("keeps what was done to each id until forgotten", () => {
    const ids = new RememberedIds<"held" | "dead-lettered">();
    ids.remember("a", "held");
    ids.remember("b", "dead-lettered");
    expect([ids.get("a"), ids.get("b"), ids.get("c")]).toEqual(["held", "dead-lettered", undefined]);
    ids.forget("a");
    expect(ids.get("a")).toBeUndefined();
  });

  it(`forgets the id remembered first once it holds more than ${MAX_REMEMBERED_IDS}`, () => {
    const ids = new RememberedIds<true>();
    for (let i = 0; i <= MAX_REMEMBERED_IDS; i++) ids.remember(`m${i}`, true);
    expect(ids.get("m0")).toBeUndefined();
    expect(ids.get("m1")).toBe(true);
    expect(ids.get(`m${MAX_REMEMBERED_IDS}`)).toBe(true);
  });
});

describe("UnsentReceives", () => {
  it("takes each receive noted off a message's attempts until it is forgotten, never below 1", () => {
    const unsent = new UnsentReceives();
    expect(unsent.sends("m", 3)).toBe(3);
    unsent.add("m");
    unsent.add("m");
    expect([unsent.sends("m", 3), unsent.sends("other", 3), unsent.sends("m", 1)]).toEqual([1, 3, 1]);
    unsent.forget("m");
    expect(unsent.sends("m", 3)).toBe(3);
  });
});

/**
 * Cutting JSON values to a byte budget (src/core/truncate.ts), as the sinks, the queues, the audit
 * line and a `prompt` rule's event use it: for any JSON value and bound, the answer fits, keeps
 * every key and non-string as it was, cuts strings only the documented way (one length L for all,
 * a whole code point, the marker), cuts as little as fits, and leaves a value that fits alone.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  asJsonText,
  capString,
  capStrings,
  capStringsToFit,
  capToFit,
  longestString,
  shorten,
  sliceCodePoints,
  TRUNCATION_MARKER,
  utf8Length,
  withinUtf8Bytes,
} from "../../src/core/truncate.js";
import { objectOf } from "./own-object.js";

/** Strings as an agent may send them: any code units (lone surrogates), astral characters, long runs. */
const text = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc.string({ unit: "binary", maxLength: 40 }),
  fc.string({ unit: "grapheme", maxLength: 20 }),
  fc.constantFrom("", "\uD800", "\uDC00", "a\uD83D\uDE00b", "\uD83D\uDE00".repeat(40)),
  fc.nat({ max: 3000 }).map((n) => "x".repeat(n)),
);

const key = fc.oneof(
  fc.string({ maxLength: 8 }),
  fc.constantFrom("__proto__", "constructor", "toString", ""),
);

const json: fc.Arbitrary<unknown> = fc.letrec<{ value: unknown }>((tie) => ({
  value: fc.oneof(
    { depthSize: "small" },
    text,
    fc.oneof(
      fc.integer(),
      fc.double({ noNaN: true, noDefaultInfinity: true }).map((n) => (Object.is(n, -0) ? 0 : n)),
    ),
    fc.boolean(),
    fc.constant(null),
    fc.array(tie("value"), { maxLength: 6 }),
    fc.array(fc.tuple(key, tie("value")), { maxLength: 6 }).map(objectOf),
  ),
})).value;

/** Nested past the depth the cutters walk, with a string at the bottom. */
const deep = fc
  .tuple(fc.integer({ min: 60, max: 200 }), text, fc.boolean())
  .map(([depth, bottom, asArray]) => {
    let value: unknown = bottom;
    for (let i = 0; i < depth; i++) value = asArray ? [value] : objectOf([["k", value]]);
    return value;
  });

const anyValue = fc.oneof(
  { arbitrary: json, weight: 8 },
  { arbitrary: deep, weight: 1 },
  { arbitrary: fc.tuple(json, deep), weight: 1 },
);

const sizeOf = (value: unknown) => utf8Length(JSON.stringify(value));

/** Containers the cutters walk into: a string inside more is left as it is (the walk's stack stays bounded). */
const WALKED_DEPTH = 65;

/**
 * Strings paired in walk order, and everything else compared as it is; throws where the shapes
 * differ, or where a string nested past WALKED_DEPTH changed.
 */
function stringPairs(
  before: unknown,
  after: unknown,
  pairs: [string, string][] = [],
  depth = 0,
): [string, string][] {
  if (typeof before === "string") {
    expect(typeof after).toBe("string");
    if (depth > WALKED_DEPTH) expect(after).toBe(before);
    else pairs.push([before, after as string]);
  } else if (Array.isArray(before)) {
    expect(Array.isArray(after)).toBe(true);
    expect((after as unknown[]).length).toBe(before.length);
    for (const [i, item] of before.entries()) stringPairs(item, (after as unknown[])[i], pairs, depth + 1);
  } else if (before !== null && typeof before === "object") {
    expect(after !== null && typeof after === "object" && !Array.isArray(after)).toBe(true);
    const a = after as Record<string, unknown>;
    expect(Object.keys(a)).toEqual(Object.keys(before));
    for (const [k, v] of Object.entries(before)) {
      expect(Object.hasOwn(a, k)).toBe(true);
      stringPairs(v, a[k], pairs, depth + 1);
    }
  } else expect(after).toBe(before);
  return pairs;
}

/** Whether cutting `text` after `length` units leaves the high half of a surrogate pair alone. */
function splitsPair(text: string, length: number): boolean {
  const high = text.charCodeAt(length - 1);
  const low = text.charCodeAt(length);
  return high >= 0xd800 && high <= 0xdbff && low >= 0xdc00 && low <= 0xdfff;
}

describe("withinUtf8Bytes", () => {
  // The sinks' and the audit line's test of a candidate: it says what counting every byte says,
  // where it reads no further than the budget (a 20,000-object event's copy was 1.6 M characters).
  it("says whether a text's UTF-8 bytes are within the budget, as counting them all does", () => {
    fc.assert(
      fc.property(text, fc.nat({ max: 400 }), (t, max) => {
        expect(withinUtf8Bytes(t, max)).toBe(utf8Length(t) <= max);
      }),
      { numRuns: 5_000 },
    );
  });
});

describe("sliceCodePoints and shorten", () => {
  // Astral characters from the first and the last plane: U+10FFFF's high surrogate is U+DBFF.
  const astral = fc.string({
    unit: fc.constantFrom("a", "\u{1F600}", "\u{10FFFF}", "\u{10000}", "\uD800"),
    maxLength: 12,
  });

  it("keep the first `length` units, one fewer where the last of them is a high surrogate", () => {
    fc.assert(
      fc.property(astral, fc.nat({ max: 26 }), (text, length) => {
        const kept = sliceCodePoints(text, length);
        const last = text.charCodeAt(length - 1);
        const cutsHigh = text.length > length && last >= 0xd800 && last <= 0xdbff;
        const expected = Math.min(text.length, cutsHigh ? length - 1 : length);
        expect(kept).toBe(text.slice(0, expected));
        const shown = shorten(text, length);
        expect(shown).toBe(text.length > length ? `${kept}…` : text);
      }),
    );
    expect(sliceCodePoints("a\u{10FFFF}", 2)).toBe("a");
    expect(sliceCodePoints("a\uD800", 2)).toBe("a\uD800");
    expect(shorten("ab\u{10FFFF}", 3)).toBe("ab…");
  });
});

/**
 * The one length L every cut string was cut to, checking each string is as `capString(…, L)` leaves
 * it. A string's cut can name two lengths (L and L + 1 keep the same units where unit L + 1 starts
 * a surrogate pair), so the largest length that every string agrees with is the one returned.
 */
function cutLength(pairs: [string, string][]): number | undefined {
  const cuts = pairs.filter(([before, after]) => before !== after);
  for (const [before, after] of cuts) {
    expect(after.endsWith(TRUNCATION_MARKER)).toBe(true);
    const kept = after.slice(0, -TRUNCATION_MARKER.length);
    expect(before.startsWith(kept)).toBe(true);
    expect(after.length).toBeLessThan(before.length);
    // Never half a surrogate pair: the kept part is L units, or L - 1 where unit L was a high surrogate.
    expect(splitsPair(before, kept.length)).toBe(false);
  }
  if (cuts.length === 0) return undefined;
  const [before, after] = cuts[0] as [string, string];
  const kept = after.slice(0, -TRUNCATION_MARKER.length);
  const agreed = [kept.length + 1, kept.length].filter(
    (length) =>
      sliceCodePoints(before, length) === kept && pairs.every(([b, a]) => capString(b, length) === a),
  );
  expect(agreed, "no one length L leaves every string as it was cut").not.toEqual([]);
  return agreed[0];
}

describe("capStringsToFit", () => {
  it("fits the bound, keeps the shape and cuts strings the documented way (none nested past 65 levels), as little as fits, or says it cannot", () => {
    fc.assert(
      fc.property(anyValue, fc.integer({ min: 0, max: 6000 }), (value, bound) => {
        const fits = (candidate: unknown) => sizeOf(candidate) <= bound;
        const fitted = capStringsToFit(value, fits);
        if (fitted === undefined) {
          expect(fits(capStrings(value, 0))).toBe(false);
          return;
        }
        expect(fits(fitted)).toBe(true);
        expect(JSON.parse(JSON.stringify(fitted))).toEqual(fitted);
        const length = cutLength(stringPairs(value, fitted));
        if (length === undefined) expect(fitted).toEqual(value);
        else expect(fits(capStrings(value, length + 1))).toBe(false);
        if (fits(value)) expect(fitted).toEqual(value);
      }),
      { numRuns: 400 },
    );
  });

  it("cuts no string past `high`, whatever fits", () => {
    fc.assert(
      fc.property(json, fc.integer({ min: 0, max: 100 }), (value, high) => {
        const fitted = capStringsToFit(value, () => true, high);
        // The largest L below `high` (0 at least), where no string is longer than L plus the marker.
        const length = Math.max(0, Math.min(high, longestString(value)) - 1);
        for (const [before, after] of stringPairs(value, fitted))
          expect(after).toBe(capString(before, length));
        if (high > longestString(value)) expect(fitted).toEqual(value);
      }),
      { numRuns: 300 },
    );
  });

  it("does not throw on a huge array of short strings, and says it cannot fit it", () => {
    const huge = Array.from({ length: 200_000 }, (_, i) => `v${i % 10}`);
    expect(capStringsToFit(huge, (candidate) => sizeOf(candidate) <= 1000)).toBeUndefined();
    expect(capStringsToFit(huge, (candidate) => sizeOf(candidate) <= 2_000_000)).toEqual(huge);
  });
});

describe("capToFit", () => {
  it("cuts the value's own strings where that can fit, else its JSON text as little as fits, else to the marker", () => {
    fc.assert(
      fc.property(anyValue, fc.integer({ min: 0, max: 6000 }), (value, bound) => {
        const fits = (candidate: unknown) => sizeOf(candidate) <= bound;
        const fitted = capToFit(value, fits, asJsonText);
        if (fits(capStrings(value, 0))) {
          expect(fits(fitted)).toBe(true);
          cutLength(stringPairs(value, fitted));
          return;
        }
        const flat = asJsonText(value);
        const length = cutLength(stringPairs(flat, fitted));
        if (!fits(capStrings(flat, 0))) expect(fitted).toEqual(capStrings(flat, 0));
        else {
          expect(fits(fitted)).toBe(true);
          if (length !== undefined) expect(fits(capStrings(flat, length + 1))).toBe(false);
        }
      }),
      { numRuns: 300 },
    );
  });
});

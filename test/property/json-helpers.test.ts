/**
 * The small JSON helpers of src/core against their contracts: `scanJson` (what JSON.parse takes
 * without a word: every repeated key, `__proto__` key and value nested too deep, at its path and
 * line, on any valid text however spaced and escaped), `jsonValueEnd` (where a value ends, or
 * breaks, as JSON.parse would have it), `keepLast` (a one-entry memo, exact) and
 * `RememberedIds` (a map that forgets the oldest past its bound).
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { type JsonScanFinding, scanJson } from "../../src/core/json-scan.js";
import { jsonValueEnd } from "../../src/core/json-value-end.js";
import { keepLast } from "../../src/core/keep-last.js";
import { MAX_REMEMBERED_IDS, RememberedIds } from "../../src/core/remembered-ids.js";

const key = fc.oneof(
  fc.string({ maxLength: 6 }),
  fc.constantFrom("__proto__", "constructor", "a", "b", "_", '"', "\\", "\n", "\uD800", "é"),
);

/** A JSON document as written: an object is its entries in order, a key may repeat. */
type Doc = string | number | boolean | null | Doc[] | { entries: [string, Doc][] };

const doc: fc.Arbitrary<Doc> = fc.letrec<{ doc: Doc }>((tie) => ({
  doc: fc.oneof(
    { depthSize: "small", maxDepth: 8 },
    fc.oneof(fc.string({ maxLength: 6 }), fc.constantFrom('"', "\\", "{", "[", ",", ":", "\n")),
    fc.integer(),
    fc.boolean(),
    fc.constant(null),
    fc.array(tie("doc"), { maxLength: 4 }),
    fc.array(fc.tuple(key, tie("doc")), { maxLength: 4 }).map((entries) => ({ entries })),
  ),
})).doc;

/** Objects built as JSON.parse builds them: a `__proto__` key is the object's own, the last of a repeated key kept. */
function parsedOf(d: Doc): unknown {
  if (Array.isArray(d)) return d.map(parsedOf);
  if (d === null || typeof d !== "object") return d;
  const out: Record<string, unknown> = {};
  for (const [k, v] of d.entries) {
    delete out[k];
    Object.defineProperty(out, k, {
      value: parsedOf(v),
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  return out;
}

/** Whitespace JSON allows between tokens. */
const SPACES = ["", " ", "\n", "\t", "\r\n", "\n  "];

/**
 * The document's text, spaced and its keys escaped as `pick` says, and what scanJson must find in
 * it: each repeated key, each first `__proto__` of an object, each container opened past `maxDepth`.
 */
function written(
  d: Doc,
  maxDepth: number,
  pick: () => number,
): { text: string; expected: JsonScanFinding[] } {
  let text = "";
  const expected: JsonScanFinding[] = [];
  const line = () => text.split("\n").length;
  const space = () => {
    text += SPACES[pick() % SPACES.length];
  };
  const keyText = (k: string) => {
    const plain = JSON.stringify(k);
    // Some keys spelt with escapes: JSON.parse reads `\u005f` as `_`.
    return pick() % 3 === 0 ? plain.replaceAll("_", "\\u005f").replaceAll("a", "\\u0061") : plain;
  };
  const walk = (node: Doc, path: (string | number)[], depth: number) => {
    if (node === null || typeof node !== "object") {
      text += JSON.stringify(node);
      return;
    }
    if (depth === maxDepth + 1 && depth > 1) expected.push({ kind: "deep", path, line: line() });
    if (Array.isArray(node)) {
      text += "[";
      node.forEach((item, i) => {
        if (i > 0) text += ",";
        space();
        walk(item, [...path, i], depth + 1);
        space();
      });
      text += "]";
      return;
    }
    text += "{";
    const seen = new Set<string>();
    node.entries.forEach(([k, v], i) => {
      if (i > 0) text += ",";
      space();
      if (seen.has(k)) expected.push({ kind: "repeated", path: [...path, k], line: line() });
      else if (k === "__proto__") expected.push({ kind: "prototype", path: [...path, k], line: line() });
      seen.add(k);
      text += keyText(k);
      space();
      text += ":";
      space();
      walk(v, [...path, k], depth + 1);
      space();
    });
    text += "}";
  };
  space();
  walk(d, [], 1);
  space();
  return { text, expected };
}

describe("scanJson", () => {
  it("finds exactly each repeated key, __proto__ key and value nested past maxDepth, at its path and line", () => {
    fc.assert(
      fc.property(doc, fc.integer({ min: 1, max: 6 }), fc.infiniteStream(fc.nat()), (d, maxDepth, stream) => {
        const picks = stream[Symbol.iterator]();
        const { text, expected } = written(d, maxDepth, () => picks.next().value as number);
        // The text is valid JSON, which JSON.parse reads as the document says.
        expect(JSON.parse(text)).toEqual(parsedOf(d));
        expect(scanJson(text, maxDepth)).toEqual(expected);
      }),
      { numRuns: 500 },
    );
  });

  it("finds no repeated key in what JSON.stringify writes", () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.constantFrom(0, 2, "\t"), (value, indent) => {
        const found = scanJson(JSON.stringify(value, null, indent), 1000);
        expect(found.filter((f) => f.kind === "repeated")).toEqual([]);
      }),
      { numRuns: 300 },
    );
  });
});

describe("keepLast", () => {
  it("answers as the function does for any sequence of keys, computing again only for a new key or an undefined answer", () => {
    fc.assert(
      fc.property(fc.array(fc.constantFrom("a", "b", "c", "none"), { maxLength: 30 }), (keys) => {
        let calls = 0;
        const f = (k: string) => (k === "none" ? undefined : `${k}!`);
        const kept = keepLast((k: string) => {
          calls++;
          return f(k);
        });
        let expectedCalls = 0;
        keys.forEach((k, i) => {
          expect(kept(k)).toBe(f(k));
          if (i === 0 || keys[i - 1] !== k || f(k) === undefined) expectedCalls++;
          expect(calls).toBe(expectedCalls);
        });
      }),
      { numRuns: 300 },
    );
  });
});

describe("RememberedIds", () => {
  it("answers as a map that forgets the id remembered first once past MAX_REMEMBERED_IDS", () => {
    type Op =
      | { op: "remember"; id: string; v: number }
      | { op: "forget"; id: string }
      | { op: "get"; id: string };
    const id = fc.oneof(
      fc.constantFrom("m1", "m2", "m3"),
      fc.nat({ max: 1500 }).map((n) => `id-${n}`),
    );
    const op: fc.Arbitrary<Op> = fc.oneof(
      { arbitrary: fc.record({ op: fc.constant("remember" as const), id, v: fc.nat() }), weight: 6 },
      { arbitrary: fc.record({ op: fc.constant("forget" as const), id }), weight: 1 },
      { arbitrary: fc.record({ op: fc.constant("get" as const), id }), weight: 2 },
    );
    fc.assert(
      fc.property(fc.array(op, { minLength: 1200, maxLength: 2500 }), (ops) => {
        const ids = new RememberedIds<number>();
        // The model: ids in the order first remembered (a re-remembered id keeps its place, as a Map does).
        const model = new Map<string, number>();
        for (const o of ops) {
          if (o.op === "remember") {
            model.set(o.id, o.v);
            if (model.size > MAX_REMEMBERED_IDS) model.delete(model.keys().next().value as string);
            ids.remember(o.id, o.v);
          } else if (o.op === "forget") {
            model.delete(o.id);
            ids.forget(o.id);
          } else expect(ids.get(o.id)).toBe(model.get(o.id));
        }
        for (const k of model.keys()) expect(ids.get(k)).toBe(model.get(k));
      }),
      { numRuns: 10 },
    );
  });
});

describe("jsonValueEnd", () => {
  /** A container's JSON text, whole, cut short, with a character put in, or with text after it. */
  const text = fc
    .tuple(
      fc.oneof(fc.array(fc.jsonValue()), fc.dictionary(fc.string(), fc.jsonValue())),
      fc.nat(),
      fc.constantFrom("", " ", "x", "{", "}", "[", "]", '"', "\\", ",", ":", "1", "\n", "\u0001"),
      fc.constantFrom("whole", "cut", "insert", "after"),
    )
    .map(([value, at, char, how]) => {
      const json = JSON.stringify(value, null, at % 3 === 0 ? 1 : undefined);
      const k = at % (json.length + 1);
      if (how === "cut") return json.slice(0, k);
      if (how === "insert") return `${json.slice(0, k)}${char}${json.slice(k)}`;
      return how === "after" ? `${json}${char}{}` : json;
    });

  it("ends a value where JSON.parse takes it, and breaks it where JSON.parse refuses it", () => {
    fc.assert(
      fc.property(text, (t) => {
        const found = jsonValueEnd(t, 0);
        const parses = (s: string) => {
          try {
            JSON.parse(s);
            return true;
          } catch {
            return false;
          }
        };
        if ("end" in found) expect(parses(t.slice(0, found.end))).toBe(true);
        const whole = "end" in found && /^[ \t\r\n]*$/.test(t.slice(found.end));
        expect(whole).toBe(parses(t));
      }),
      { numRuns: 2000 },
    );
  });

  it.each([
    ['{"a":{"b":[1,{"c":2}]}}', { end: 23, objects: [0, 5, 13] }],
    ['{"a":{"b":1', { error: 11, open: [0, 5] }],
    ['{"x {"a":1}', { error: 6, open: [0] }],
    ["{{", { error: 1, open: [0] }],
  ])("reads %s", (t, found) => {
    expect(jsonValueEnd(t, 0)).toEqual(found);
  });
});

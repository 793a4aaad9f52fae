/**
 * The literal a regex search is pre-filtered on (src/core/regex-literal.ts) must be in every
 * input the regex matches: otherwise a policy regex would stop matching, and a deny rule written
 * with it would let the command through. Checked against re2js itself on generated patterns and
 * inputs built from the same characters, and on text too random for the patterns.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { compileRegex } from "../../src/core/regex.js";
import { requiredLiteral } from "../../src/core/regex-literal.js";
import { re2Engine } from "../../src/core/regex-re2.js";

/** Pattern pieces: literal text, escapes, classes, groups, anchors, quantifiers, odd syntax. */
const PIECES = [
  "a",
  "b",
  "c",
  "ab",
  "abc",
  "-",
  "--",
  " ",
  "/",
  "\\.",
  "\\-",
  "\\|",
  "\\(",
  "\\s",
  "\\S",
  "\\b",
  "\\d",
  "\\w",
  "\\pL",
  "\\p{Greek}",
  ".",
  "^",
  "$",
  "[ab]",
  "[^c]",
  "[]a]",
  "[a\\]]",
  "(a|b)",
  "(?:ab)",
  "(?P<n>c)",
  "(a(b)c)",
  "*",
  "+",
  "?",
  "*?",
  "{2}",
  "{0,2}",
  "{1,}",
  "|",
  "{",
  "}",
  "]",
  "(?i)",
  "(?i:a)",
  "\\Qa\\E",
  "ß",
  "😀",
];

const pattern = fc.array(fc.constantFrom(...PIECES), { minLength: 1, maxLength: 8 }).map((p) => p.join(""));
const text = fc.oneof(
  fc.string({ unit: fc.constantFrom(..."abc- /.|()1ßΣ", "😀", "\n"), maxLength: 24 }),
  fc.string({ maxLength: 24 }),
);

describe("requiredLiteral", () => {
  it("reads the literal every match must contain", () => {
    expect(requiredLiteral("\\bgit\\s+commit\\b.*--no-verify")).toBe("--no-verify");
    expect(requiredLiteral("^git push\\b.*(--force|-f\\b)")).toBe("git push");
    expect(requiredLiteral("-----BEGIN (RSA |EC )?PRIVATE KEY-----")).toBe("PRIVATE KEY-----");
    expect(requiredLiteral("mcp__github__(delete|merge)_.*")).toBe("mcp__github__");
    expect(requiredLiteral("x\\.y?z")).toBe("x.");
    expect(requiredLiteral("ab+cd")).toBe("ab");
    // Nothing sure: alternation at the top, flags, optional characters, odd escapes.
    for (const p of [
      "a|bc",
      "(?i)deploy",
      "(?i:ab)cd",
      "ab*c",
      "a?b?",
      "\\x41\\x42",
      "\\Qab\\E",
      "[[:alpha:]]ab",
    ])
      expect(requiredLiteral(p)).toBeUndefined();
  });

  it("is in every input the regex matches, on generated patterns", () => {
    let withLiteral = 0;
    fc.assert(
      fc.property(pattern, fc.array(text, { minLength: 1, maxLength: 6 }), (p, inputs) => {
        let compiled: ReturnType<typeof re2Engine.compile>;
        try {
          compiled = re2Engine.compile(p);
        } catch {
          return; // not a regex: compileRegex refuses it before any literal is read
        }
        const literal = requiredLiteral(p);
        if (literal === undefined) return;
        withLiteral++;
        // Inputs that surely contain the literal, so that matches happen, beside random ones.
        for (const input of [...inputs, ...inputs.map((t) => `${t}${literal}${t}`), p.replace(/\\/g, "")]) {
          if (compiled.test(input)) expect(input.includes(literal)).toBe(true);
        }
      }),
      { numRuns: 3000 },
    );
    // The property is not vacuous: a good share of the generated patterns have a literal.
    expect(withLiteral).toBeGreaterThan(300);
  });

  it("leaves compileRegex's answers unchanged", () => {
    fc.assert(
      fc.property(pattern, fc.array(text, { maxLength: 6 }), (p, inputs) => {
        const filtered = compileRegex(p);
        let plain: ReturnType<typeof re2Engine.compile> | undefined;
        try {
          plain = re2Engine.compile(p);
        } catch {
          plain = undefined;
        }
        if (!filtered.ok || plain === undefined) return;
        for (const input of inputs) expect(filtered.value(input)).toBe(plain.test(input));
      }),
      { numRuns: 2000 },
    );
  });
});

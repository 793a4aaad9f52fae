/**
 * The text a path glob is pre-filtered on (src/core/path-glob-minimatch.ts `requiredLiterals`)
 * must be in every path minimatch matches: otherwise a `where.glob` or a path rule would stop
 * matching, and a deny rule written with it would let the call through. Checked against minimatch
 * itself on generated patterns and paths built from the same pieces.
 */
import fc from "fast-check";
import { Minimatch } from "minimatch";
import { describe, expect, it } from "vitest";
import { minimatchEngine, requiredLiterals } from "../../src/core/path-glob-minimatch.js";

const PATTERN_PIECES = [
  "a",
  "b",
  "ab",
  ".a",
  ".",
  "..",
  "/",
  "//",
  "*",
  "**",
  "?",
  "{a,b}",
  "[ab]",
  "!",
  "\\*",
  "x",
];
const PATH_PIECES = ["a", "b", "ab", ".a", ".", "..", "/", "//", "x", "*"];
const OPTIONS = [
  { dot: true, nonegate: true, nocomment: true, platform: "linux" as const },
  { dot: true, nonegate: true, nocomment: true, platform: "linux" as const, nocase: true },
  { platform: "linux" as const },
  { dot: true, nonegate: true, nocomment: true },
];

const text = (pieces: readonly string[], max: number) =>
  fc.array(fc.constantFrom(...pieces), { maxLength: max }).map((parts) => parts.join(""));

describe("a path glob's required text", () => {
  it("is in every path minimatch matches, so the gated engine answers as minimatch does", () => {
    fc.assert(
      fc.property(
        text(PATTERN_PIECES, 8),
        fc.array(text(PATH_PIECES, 10), { minLength: 1, maxLength: 8 }),
        fc.constantFrom(...OPTIONS),
        (pattern, paths, options) => {
          let glob: Minimatch;
          try {
            glob = new Minimatch(pattern, options);
          } catch {
            return; // a pattern minimatch refuses compiles to no engine test either
          }
          const gated = minimatchEngine.compile(pattern, options);
          for (const path of paths) expect(gated(path), `${pattern} on ${path}`).toBe(glob.match(path));
        },
      ),
      { numRuns: 3000 },
    );
  });

  it("names the runs between wildcards and separators, and nothing for syntax that could skip one", () => {
    const linux = { platform: "linux" } as const;
    expect(requiredLiterals("**/.github/workflows/*.yml", linux)).toEqual([".github", "workflows", ".yml"]);
    expect(requiredLiterals("/etc/**", linux)).toEqual(["etc"]);
    for (const pattern of ["src/{a,b}/**", "[ab]/x", "!x/**", "a/../b", "@(a|b)/x", "a\\*b"])
      expect(requiredLiterals(pattern, linux), pattern).toEqual([]);
    expect(requiredLiterals("/etc/**", { ...linux, nocase: true })).toEqual([]);
    // Off Linux minimatch reads `c:/x` as `C:/x`: no text is required there.
    expect(requiredLiterals("C:/secret/**", {})).toEqual([]);
  });
});

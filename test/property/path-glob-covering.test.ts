/**
 * A path rule matches a path when the path or a directory above it matches its glob
 * (src/core/path-glob.ts `compileCoveringGlob`, one minimatch test of `G` and one of `G/**`).
 * Checked against the reading it stands for, the glob tried on the path and on each directory
 * above it in turn, on generated patterns and normalized paths built from the same pieces.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { compileCoveringGlob, compilePathGlob, type PathGlobTest } from "../../src/core/path-glob.js";

const PATTERN_SEGMENTS = [
  "a",
  "b",
  "ab",
  ".a",
  "*",
  "**",
  "?",
  "a*",
  "*.a",
  "{a,b}",
  "[ab]",
  "+(a|b)",
  "\\*",
  "!",
  "#",
];
const PATH_SEGMENTS = ["a", "b", "ab", ".a", "a.a", "*", "x", "#", "!"];
const OPTIONS = [
  { dot: true, nonegate: true, nocomment: true, platform: "linux" as const },
  { dot: true, nonegate: true, nocomment: true, platform: "linux" as const, nocase: true },
];

/** The path or a directory above it matches: each tried in turn, from the path up. */
function pathOrAbove(glob: PathGlobTest, path: string): boolean {
  const segments = path === "" ? [] : path.split("/");
  for (let n = segments.length; n > 0; n -= 1) if (glob(segments.slice(0, n).join("/"))) return true;
  return false;
}

const segments = (pieces: readonly string[], min: number, max: number) =>
  fc.array(fc.constantFrom(...pieces), { minLength: min, maxLength: max }).map((parts) => parts.join("/"));

describe("a path rule's glob", () => {
  it("matches a path when the path or a directory above it matches, as trying each in turn does", () => {
    fc.assert(
      fc.property(
        segments(PATTERN_SEGMENTS, 1, 5),
        fc.array(segments(PATH_SEGMENTS, 0, 7), { minLength: 1, maxLength: 8 }),
        fc.constantFrom(...OPTIONS),
        (pattern, paths, options) => {
          const glob = compilePathGlob(pattern, options);
          const covering = compileCoveringGlob(pattern, options);
          expect(covering.ok).toBe(glob.ok);
          if (!glob.ok || !covering.ok) return;
          for (const path of paths)
            expect(covering.value(path), `${pattern} on ${path}`).toBe(pathOrAbove(glob.value, path));
        },
      ),
      { numRuns: 4000 },
    );
  });

  it("matches a directory's contents at any depth, never a sibling whose name starts the same", () => {
    const covering = compileCoveringGlob("src/*.d", { dot: true, platform: "linux" });
    if (!covering.ok) throw new Error(covering.error);
    expect(covering.value("src/x.d")).toBe(true);
    expect(covering.value("src/x.d/.y/z")).toBe(true);
    expect(covering.value("src/x.dd/z")).toBe(false);
    expect(covering.value("src")).toBe(false);
    expect(covering.value("")).toBe(false);
  });
});

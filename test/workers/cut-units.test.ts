/**
 * What a Slack or Discord cut keeps whole, inside workerd: the cut reads characters as a reader
 * sees them with Intl.Segmenter, which must be there and segment as Node's does.
 */
import { describe, expect, it } from "vitest";
import { escapedUnits } from "../../src/core/escape-controls.js";

describe("escapedUnits in workerd", () => {
  it("keeps a flag, a subdivision's flag, a joined emoji and an escape each whole", () => {
    const england = `\u{1f3f4}${[..."gbeng"].map((c) => String.fromCodePoint(0xe0000 + c.charCodeAt(0))).join("")}\u{e007f}`;
    const text = `a\u{1f1fa}\u{1f1e6}${england}\u{1f468}\u200d\u{1f469}\\u202eb`;
    expect([...escapedUnits(text)]).toEqual([
      "a",
      "\u{1f1fa}\u{1f1e6}",
      england,
      "\u{1f468}\u200d\u{1f469}",
      "\\u202e",
      "b",
    ]);
  });
});

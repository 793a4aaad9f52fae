import { afterEach, describe, expect, it, vi } from "vitest";
import { escapedUnits, withoutControls, withoutControlsButLines } from "../../src/core/escape-controls.js";

describe("withoutControlsButLines: a terminal's escape sequences", () => {
  it.each([
    ["a colour", "\u001b[1;31mred\u001b[0m text", "red text"],
    ["a colour with no parameter, after tput's charset reset", "\u001b(B\u001b[mplain", "plain"],
    ["a 256-colour code", "\u001b[38;5;208morange\u001b[39m", "orange"],
    ["a C1 control sequence", "\u009b2Jclear\u009b0m", "clear"],
    ["a private mode and an erase", "\u001b[?25l\u001b[2Khidden", "hidden"],
    ["a title ended by BEL", "a\u001b]0;owned\u0007b", "ab"],
    ["a clipboard write ended by ST", "a\u001b]52;c;cm0gLXJmIC8=\u001b\\b", "ab"],
    ["a hyperlink", "see \u001b]8;;https://x.example/\u001b\\the docs\u001b]8;;\u001b\\", "see the docs"],
    ["a C1 OSC ended by a C1 ST", "a\u009d0;t\u009cb", "ab"],
    ["a device control string", "a\u001bP1$r0m\u001b\\b", "ab"],
  ])("drops %s whole", (_, text, shown) => {
    expect(withoutControlsButLines(text)).toBe(shown);
    expect(withoutControls(text)).toBe(shown);
  });

  // Cut short, the sequence is not one: only what introduces it goes, the text stays to be read.
  it.each([
    ["an unterminated title", "a\u001b]0;title", "a]0;title"],
    ["an ESC before a letter", "down\u001btoken", "downtoken"],
    ["an ESC before a digit", "save\u001b7d", "save7d"],
    ["a CSI with no final byte", "a\u001b[12;\u00e9", "a[12;\u00e9"],
  ])("drops only the introducer of %s", (_, text, shown) => {
    expect(withoutControlsButLines(text)).toBe(shown);
    expect(withoutControls(text)).toBe(shown);
  });

  it("reads a run of unterminated control strings as text, each losing its introducer", () => {
    const text = "\u009dx".repeat(10_000);
    expect(withoutControlsButLines(text)).toBe("x".repeat(10_000));
  });
});

describe("withoutControlsButLines: line ends", () => {
  // The text is copied a unit at a time and made a string some thousands of units at once: a
  // character made of two units (an emoji) across a seam comes out whole.
  it("writes each line end as one newline, in a long text, with an emoji across a seam", () => {
    const line = `${"x".repeat(8191)}\u{1F600}`;
    const text = [line, line, line, line, line, "tail"].join("\r\n").replace(/\r\n(?=tail)/, "\u2028");
    const lines = withoutControlsButLines(`${text}\ra\u0085b\u2029c\r\r\n`).split("\n");
    expect(lines).toEqual([line, line, line, line, line, "tail", "a", "b", "c", "", ""]);
  });

  it("keeps tabs and newlines, and drops the controls beside a line end", () => {
    expect(withoutControlsButLines("a\u0007\r\u200bb\tc\n\u202ed")).toBe("a\nb\tc\nd");
  });
});

describe("escapedUnits: a long text", () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  // V8's segment iterator costs per step as much as the text it was handed is long: a Slack cut of
  // a 1 MiB reason took 4 s of CPU, where one of 4,000 characters took 20 ms. The segmenter is
  // handed a window at a time, so a cut reads what it keeps and little more.
  it("hands the segmenter a window of the text, not the whole text", () => {
    const segment = vi.spyOn(Intl.Segmenter.prototype, "segment");
    const units = escapedUnits("Deleting from / is never allowed. ".repeat(3_000));
    for (let i = 0; i < 400; i++) units.next();
    const longest = Math.max(...segment.mock.calls.map(([text]) => text.length));
    expect(longest).toBeLessThan(10_000);
  });

  // Read a window at a time, a character across a window's edge is read again from its start.
  it("reads each character whole where a window ends inside it", () => {
    const england = `\u{1f3f4}${[..."gbeng"].map((c) => String.fromCodePoint(0xe0000 + c.charCodeAt(0))).join("")}\u{e007f}`;
    const characters = [
      "\u{1f1fa}\u{1f1e6}",
      england,
      "\u{1f468}\u200d\u{1f469}",
      "e\u0301",
      "\r\n",
      "\u{1f600}",
    ];
    for (const character of characters)
      for (let at = 1010; at < 1030; at++)
        for (const length of [1100, 2100]) {
          const text = `${"a".repeat(at)}${character}`.padEnd(length, "b");
          const whole = [...new Intl.Segmenter(undefined, { granularity: "grapheme" }).segment(text)].map(
            ({ segment }) => segment,
          );
          expect([...escapedUnits(text)]).toEqual(whole);
        }
  });
});

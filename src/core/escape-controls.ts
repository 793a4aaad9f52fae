/**
 * Text an agent, a model or a downstream server chose (a session id, a tool or event name, a
 * reason), written where a person reads it (a terminal, a log viewer), with the characters that
 * would act there written as JSON escapes: the C0 and C1 controls and DEL (an ESC or CSI sequence
 * retitles the terminal, writes its clipboard or moves the cursor over earlier lines; a line
 * break forges a line), the line and paragraph separators (a line break to many viewers and
 * editors), the bidirectional overrides and isolates (they reorder the rest of the line) and the
 * invisible marks: the direction marks (LRM, RLM, ALM), which reorder the characters around them
 * as well, and the zero-width characters (spaces, joiners, the word joiner, the BOM), which hide
 * that a name or a word is not the one it reads as.
 * In a JSON string each escape reads back as the character it stands for.
 */

const CLASS =
  // biome-ignore lint/suspicious/noControlCharactersInRegex: matching them is its purpose.
  /[\u0000-\u001f\u007f-\u009f\u061c\u200b-\u200f\u2028\u2029\u202a-\u202e\u2060\u2066-\u2069\ufeff]/.source;
/** Each of those characters: what a secret is read across (mask.ts `scrubbedWithout`). */
export const CONTROLS = new RegExp(CLASS, "g");
/** The same class, for the test that leaves text with none as it is (faster than a replace). */
const ANY_CONTROL = new RegExp(CLASS);

/**
 * Each of those characters, and an ESC with the character that makes it a sequence's introducer
 * (`ESC [`, `ESC ]`, `ESC P`, `ESC X`, `ESC ^`, `ESC _`): what a secret is still read across
 * (mask.ts `scrubbedWithout`). Whole, a sequence takes a secret's letters after its introducer as
 * its parameters and final byte; cut short, it loses its introducer only.
 */
export const CONTROLS_AND_INTRODUCERS = new RegExp(`\\u001b[[\\]PX^_]|${CLASS}`, "g");

/** `c` as `\uXXXX`, a character past U+FFFF (a tag) as the escapes of its surrogate pair. */
export const escaped = (c: string) => {
  let out = "";
  for (let i = 0; i < c.length; i++) out += `\\u${c.charCodeAt(i).toString(16).padStart(4, "0")}`;
  return out;
};

/** `text` with each of those characters written `\uXXXX`; the same string when it has none. */
export function escapeControls(text: string): string {
  return ANY_CONTROL.test(text) ? text.replace(CONTROLS, escaped) : text;
}

/**
 * The characters a text shows nothing of (Unicode's default-ignorable ones): the bidirectional
 * overrides, isolates and direction marks, the zero-width ones (space, joiners, word joiner, BOM),
 * and the others a chat shows as nothing just the same: the invisible operators (U+2061 to
 * U+2064), the soft hyphen, the combining grapheme joiner, the Hangul fillers, the Mongolian
 * vowel separator, the variation selectors and the tag characters. `r\u2063m` reads `rm` as
 * `r\u200bm` does. And the C0 and C1 controls and DEL but a tab and a line feed, which a chat
 * shows nothing of either but which act where its text is read on: a NUL ends a C string, an ESC
 * starts a terminal's sequence (a bridge to IRC, a log), a lone CR sends a line back to its start.
 */
const INVISIBLE_CONTROLS_AND_JOINERS =
  // biome-ignore lint/suspicious/noControlCharactersInRegex: matching them is its purpose.
  /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]|\p{Default_Ignorable_Code_Point}/gu;
/**
 * Those but the joiners and the variation selectors, which words need: Persian and the Indic
 * scripts write with the joiners, an emoji is joined by them and given its colours by U+FE0F, and
 * Mongolian picks a letter's form with its own selectors (U+180B to U+180D, U+180F).
 * A subdivision's flag (England's, Scotland's, Wales's) is a black flag, its code in tag letters
 * and digits and a cancel tag (UTS #51's emoji tag sequence): matched whole first, it is kept.
 */
const INVISIBLE_CONTROLS =
  // biome-ignore lint/suspicious/noControlCharactersInRegex: matching them is its purpose.
  /(\u{1f3f4}[\u{e0030}-\u{e0039}\u{e0061}-\u{e007a}]{3,6}\u{e007f})|(\r\n?)|[\u0000-\u0008\u000b-\u001f\u007f-\u009f]|(?![\u200c\u200d]|\p{Variation_Selector})\p{Default_Ignorable_Code_Point}/gu;

/**
 * `text` with only the invisible characters but the joiners and variation selectors written
 * `\uXXXX`: for the words of a chat message (Slack, Discord), where line breaks are the message's
 * own but one of these would make a command read as another (Trojan Source, CVE-2021-42574), or a
 * name as the one it is not (`r\u200bm` reads `rm`). A mark shows nothing, and turns the digits
 * and punctuation beside it right to left: a name's `10.20` may read `20.10`. The joiners stay, as
 * `withoutControlsButLines` keeps them: words need them, and so does a subdivision's flag. A CR,
 * alone or before a line feed, is a line end there, as `withoutControlsButLines` writes it (a
 * Windows agent's text); a command's, shown as code, is an escape: it is part of what runs.
 */
export function escapeInvisibleControls(text: string): string {
  return text.replace(INVISIBLE_CONTROLS, (c, flag: string | undefined, lineEnd: string | undefined) =>
    lineEnd === undefined ? (flag ?? escaped(c)) : "\n",
  );
}

/**
 * `escapeInvisibleControls` and the joiners and variation selectors written `\uXXXX` too: for what a chat message shows
 * as code (a command, a path, a session id), which must read as exactly what runs.
 */
export function escapeInvisibleCode(text: string): string {
  return text.replace(INVISIBLE_CONTROLS_AND_JOINERS, escaped);
}

/**
 * The pieces of an escaped text that a cut must keep whole: each `\uXXXX` escape (the two of a
 * character past U+FFFF, a tag, together), and each character a reader sees between them (a
 * grapheme cluster, UAX #29: a flag's two regional indicators, a subdivision flag's tags, the
 * emoji a joiner joins, a letter and its accents). Cut inside, `\u202e` read `\u2…`, a tag's
 * `\udb40\udc72` read `\udb40…`, and Ukraine's flag the letter U.
 */
export function* escapedUnits(text: string): Generator<string> {
  let from = 0;
  for (const found of text.matchAll(ESCAPE)) {
    yield* graphemesOf(text.slice(from, found.index));
    yield found[0];
    from = found.index + found[0].length;
  }
  yield* graphemesOf(text.slice(from));
}
const ESCAPE = /\\ud[89ab][0-9a-f]{2}\\ud[c-f][0-9a-f]{2}|\\u[0-9a-f]{4}/g;

/** Made with the first cut: most messages are cut nowhere. */
let graphemes: Intl.Segmenter | undefined;

/**
 * Longer than any character a reader sees as one: the longest emoji sequences (a kiss with two
 * skin tones, a subdivision's flag) are 15 and 16 units. UAX #29 sets clusters no bound (a letter
 * with 10,000 accents, a run of Hangul leading jamo), and one kept whole or not at all left a
 * text that starts with one as "…" alone.
 */
const LONGEST_CLUSTER = 32;

/**
 * Units handed to the segmenter at once. V8's segment iterator costs per step as much as the text
 * it was handed is long: a Slack cut of a 1 MiB reason, a few hundred steps, took 4 s of CPU.
 */
const SEGMENTED_AT_ONCE = 1024;

/**
 * `text`'s clusters, a window of it at a time; a cluster longer than LONGEST_CLUSTER as its code
 * points. A window's last cluster may go on past its edge, so it is read again at the next
 * window's start, which is a boundary; a window never ends between a surrogate pair's halves.
 */
function* graphemesOf(text: string): Generator<string> {
  graphemes ??= new Intl.Segmenter(undefined, { granularity: "grapheme" });
  for (let from = 0; from < text.length; ) {
    let end = Math.min(text.length, from + SEGMENTED_AT_ONCE);
    if (end < text.length && isHighSurrogate(text.charCodeAt(end - 1))) end--;
    let next = end;
    for (const { segment, index } of graphemes.segment(text.slice(from, end))) {
      if (end < text.length && index > 0 && from + index + segment.length === end) {
        next = from + index;
        break;
      }
      if (segment.length > LONGEST_CLUSTER) yield* segment;
      else yield segment;
    }
    from = next;
  }
}

const isHighSurrogate = (unit: number) => unit >= 0xd800 && unit <= 0xdbff;

/**
 * A terminal's escape sequences, whole (ECMA-48 §5): a control sequence (CSI, `ESC [` or U+009B,
 * its parameter and intermediate bytes and a final byte: a colour, a cursor move, an erase), a
 * control string (OSC, DCS, SOS, PM or APC, in either form, up to BEL or ST: a title, OSC 52's
 * clipboard write, OSC 8's link) and the escapes with intermediate bytes (tput's `ESC ( B`). A
 * terminal shows none of their characters, so a text written for one (a team server that colours
 * its verdict) reads clean without them, where dropping the ESC alone left `[31m` in the words.
 * An ESC before a letter or a digit (`ESC 7`) loses the ESC only: that character may be the
 * words' own, or a secret's that the scrub must still find (mask.ts `scrubbedWithout`). A control
 * string's text stops at any introducer, so that a run of unterminated ones is read in linear
 * time; one without its terminator loses its introducer only.
 */
const SEQUENCES =
  // biome-ignore lint/suspicious/noControlCharactersInRegex: matching them is its purpose.
  /(?:\u001b\[|\u009b)[\u0030-\u003f]*[\u0020-\u002f]*[\u0040-\u007e]|(?:\u001b[\]PX^_]|[\u0090\u0098\u009d-\u009f])[^\u0007\u001b\u0090\u0098\u009b-\u009f]*(?:\u0007|\u001b\\|\u009c)|\u001b[\u0020-\u002f]+[\u0030-\u007e]/g;

/** `text` without any of those characters: for a name a message quotes, where none belongs. */
export function withoutControls(text: string): string {
  return text.replace(SEQUENCES, "").replace(CONTROLS, "");
}

/**
 * Of those, all but tab and newline, which a text of lines keeps as its own, and the zero-width
 * joiner and non-joiner, which its words may need: Persian and the Indic scripts write with them,
 * and an emoji of several people is joined by them. Neither breaks or reorders a line.
 */
const CONTROLS_BUT_LINES = new RegExp(`(?![\\t\\n\\u200c\\u200d])${CLASS}`, "g");

/**
 * The other ways a text ends a line: CRLF, a lone CR (old Mac text, and a progress line's
 * overwrite), NEL, and the line and paragraph separators, which JSON and JavaScript read as line
 * ends and Python's `splitlines` splits on.
 */
const OTHER_LINE_END = /[\r\u0085\u2028\u2029]/;
const CR = 0x0d;
const LF = 0x0a;

/**
 * `text` with each of those line ends written as a newline, by a copy of its UTF-16 units: a
 * regex replace costs V8 more per match past some 100,000 matches, and 1 MiB of bare CRs (a
 * progress bar's output) took 180 ms of CPU, where the copy takes under 10.
 */
function withNewlines(text: string): string {
  if (!OTHER_LINE_END.test(text)) return text;
  const units = new Uint16Array(text.length);
  let length = 0;
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i);
    if (unit === CR && text.charCodeAt(i + 1) === LF) i++;
    units[length++] = unit === CR || unit === 0x85 || unit === 0x2028 || unit === 0x2029 ? LF : unit;
  }
  return stringOfUnits(units.subarray(0, length));
}

/** Units turned into a string at once: far under any engine's limit on a call's arguments. */
const UNITS_AT_ONCE = 8192;

/**
 * The string of `units`, each a UTF-16 code unit (a surrogate pair split between two calls is
 * whole again in the string). For texts built unit by unit, where a replace or a join of many
 * small pieces costs per piece.
 */
export function stringOfUnits(units: Uint16Array): string {
  let text = "";
  for (let at = 0; at < units.length; at += UNITS_AT_ONCE)
    text += String.fromCharCode.apply(null, units.subarray(at, at + UNITS_AT_ONCE) as unknown as number[]);
  return text;
}

/**
 * `text` without those characters but tab, newline and the joiners, each of its other line ends
 * written as a newline: for a text of lines shown in the user's terminal or read by the agent's
 * model (a reason, a `systemMessage`, a context), where a line break is the text's own and a
 * direction mark would reorder one. Dropped, a CR or a line separator ran two lines into one
 * word; kept, a CR makes a terminal write the next line over the last, hiding it.
 */
export function withoutControlsButLines(text: string): string {
  return withNewlines(text.replace(SEQUENCES, "")).replace(CONTROLS_BUT_LINES, "");
}

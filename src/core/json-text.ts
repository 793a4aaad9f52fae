/** Where a JSON text is broken, told so that a person editing it can find the place. */
import { errorMessage } from "./errors.js";

/**
 * V8 quotes the text around an unexpected token (`Unexpected token 'h', "{"url":https://ho"... is
 * not valid JSON`). A policy may hold a secret just there, and a broken gateway shows this message
 * to every caller and logs it: it says where instead, by line and column, as it does for the
 * messages V8 gives a character offset (`Expected double-quoted property name in JSON at position
 * 35`, a trailing comma), which a person editing the file cannot count to. V8 quotes 10 characters
 * each side of the fault (`..."…"...`), or from the start of the text (`"…"...`), or to its end
 * (`..."…"`), or a short text whole (no position then).
 */
export function jsonProblem(e: unknown, text: string): string {
  const message = errorMessage(e);
  if (text.trim() === "") return "it is empty";
  // Windows editors may save UTF-8 with a byte-order mark, which V8 names as an invisible token.
  if (text.startsWith("\uFEFF")) {
    return "it starts with a byte-order mark (U+FEFF), which JSON does not allow; save it as UTF-8 without BOM";
  }
  const positioned = /^(.*?)(?: in JSON)? at position (\d+)/s.exec(message);
  if (positioned) return placed(positioned[1] ?? message, text, Number(positioned[2]));
  const quoted = /^(.*?), (\.\.\.)?"(.*)"(\.\.\.)? is not valid JSON$/s.exec(message);
  if (!quoted) return message;
  const [, quotedWhat = message, cutBefore, excerpt = "", cutAfter] = quoted;
  // V8 quotes the token, which for a no-break or zero-width space reads as `' '` or `''`.
  const what = quotedWhat.replace(/^Unexpected token '(.)'$/su, (token, c: string) => {
    const hidden = unseen(c);
    return hidden === undefined ? token : `Unexpected character ${hidden}`;
  });
  if (!cutBefore && !cutAfter) return what;
  const at = excerptAt(text, excerpt);
  if (at < 0) return what;
  return placed(what, text, cutBefore ? at + 10 : at + excerpt.length - 10);
}

/**
 * V8's words, where, and what an editor's JSONC (comments, a trailing comma) allows there and
 * JSON does not: V8 names only the character it did not expect.
 */
function placed(what: string, text: string, offset: number): string {
  const at = `${what} ${lineAndColumn(text, offset)}`;
  const hidden = unseen(text[offset]);
  if (hidden !== undefined)
    return `${at}: ${hidden} is there, which looks like a space or like nothing but is no JSON whitespace; type a space or delete it`;
  if (text.startsWith("//", offset) || text.startsWith("/*", offset))
    return `${at}: JSON has no comments; delete it`;
  if ((text[offset] === "}" || text[offset] === "]") && text.slice(0, offset).trimEnd().endsWith(","))
    return `${at}: JSON takes no comma before } or ]; delete it`;
  // Text pasted from a document or a chat brings curly quotes, which read as the double quotes
  // V8 asks for; JavaScript and Python habits bring single ones.
  const quote = text[offset] ?? "";
  if (/^[\u201c\u201d\u2018\u2019']$/.test(quote))
    return `${at}: ${quote} is ${quote === "'" ? "a single" : "a typographic"} quote; JSON takes only the straight " around a string, so write " in its place`;
  return at;
}

/**
 * A character that looks like a space or like nothing and is no JSON whitespace (a no-break or a
 * zero-width space, pasted from a web page or a chat), as `U+00A0`; undefined for any other.
 */
function unseen(c: string | undefined): string | undefined {
  if (c === undefined || /[ \t\n\r]/.test(c) || !/[\p{Z}\p{Cf}\p{Cc}]/u.test(c)) return undefined;
  return `U+${(c.codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, "0")}`;
}

/** `at line L, column C` of a character offset, both counted from 1. */
function lineAndColumn(text: string, offset: number): string {
  const lines = text.slice(0, offset).split("\n");
  return `at line ${lines.length}, column ${(lines.at(-1)?.length ?? 0) + 1}`;
}

/**
 * Where V8's excerpt starts: the first occurrence with valid JSON before it, so the same text
 * earlier inside a string is passed over (its prefix ends in an unterminated string).
 */
function excerptAt(text: string, excerpt: string): number {
  const first = text.indexOf(excerpt);
  for (let at = first; at >= 0; at = text.indexOf(excerpt, at + 1)) {
    try {
      JSON.parse(text.slice(0, at));
      return at;
    } catch (e) {
      if (at === 0 || /Unexpected end of JSON input/.test(errorMessage(e))) return at;
    }
  }
  return first;
}

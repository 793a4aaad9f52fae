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
  const positioned = /^(.*?)(?: in JSON)? at position (\d+)/s.exec(message);
  if (positioned) return `${positioned[1]} ${lineAndColumn(text, Number(positioned[2]))}`;
  const quoted = /^(.*?), (\.\.\.)?"(.*)"(\.\.\.)? is not valid JSON$/s.exec(message);
  if (!quoted) return message;
  const [, what = message, cutBefore, excerpt = "", cutAfter] = quoted;
  if (!cutBefore && !cutAfter) return what;
  const at = excerptAt(text, excerpt);
  if (at < 0) return what;
  return `${what} ${lineAndColumn(text, cutBefore ? at + 10 : at + excerpt.length - 10)}`;
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

/**
 * Where a JSON value ends in a text, found in one pass with no JSON.parse: `replay` reads the
 * values of a line from each `{` on, and parsing the rest of the line from each of them took
 * time that grew with the square of a long line of unclosed `{"a":{"a":…`.
 */

/**
 * The value starting at `start` ends just before `end`, and `objects` are where each object in
 * it starts; or it is no JSON from `error` on, and `open` are where the objects still open
 * there start (read from any of them, the value breaks at `error` too).
 */
export type ValueEnd =
  | { readonly end: number; readonly objects: readonly number[] }
  | { readonly error: number; readonly open: readonly number[] };

const NUMBER = /-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?/y;
const LITERAL = /true|false|null/y;
const ESCAPED = new Set(['"', "\\", "/", "b", "f", "n", "r", "t"]);
const HEX4 = /[0-9a-fA-F]{4}/y;

/** Just past the string that starts at `at`, or, negated and less one, where it breaks. */
function stringEnd(text: string, at: number): number {
  for (let k = at + 1; k < text.length; k += 1) {
    const c = text.charCodeAt(k);
    if (c === 0x22) return k + 1;
    if (c < 0x20) return -k - 1;
    if (c !== 0x5c) continue;
    const next = text.charAt(k + 1);
    if (ESCAPED.has(next)) k += 1;
    else if (next === "u") {
      HEX4.lastIndex = k + 2;
      if (!HEX4.test(text)) return -k - 1;
      k += 5;
    } else return -k - 1;
  }
  return -text.length - 1;
}

/** Just past a number or literal at `at`, or undefined. */
function scalarEnd(text: string, at: number): number | undefined {
  for (const pattern of [NUMBER, LITERAL]) {
    pattern.lastIndex = at;
    if (pattern.test(text)) return pattern.lastIndex;
  }
  return undefined;
}

export function jsonValueEnd(text: string, start: number): ValueEnd {
  /** The containers open, innermost last: where each starts. */
  const stack: number[] = [];
  const objects: number[] = [];
  let expect: "value" | "valueOrClose" | "key" | "keyOrClose" | "colon" | "after" = "value";
  const broken = (error: number): ValueEnd => ({
    error,
    open: stack.filter((at) => text.charAt(at) === "{"),
  });
  let i = start;
  for (;;) {
    while (i < text.length && " \t\r\n".includes(text.charAt(i))) i += 1;
    if (i >= text.length) return broken(i);
    const c = text.charAt(i);
    const top = stack.length === 0 ? "" : text.charAt(stack[stack.length - 1] as number);
    if (
      expect === "after" ||
      (expect === "keyOrClose" && c === "}") ||
      (expect === "valueOrClose" && c === "]")
    ) {
      if (c === "," && expect === "after") {
        expect = top === "{" ? "key" : "value";
        i += 1;
        continue;
      }
      if (c !== (top === "{" ? "}" : "]")) return broken(i);
      stack.pop();
      i += 1;
      if (stack.length === 0) return { end: i, objects };
      expect = "after";
      continue;
    }
    if (expect === "colon") {
      if (c !== ":") return broken(i);
      expect = "value";
      i += 1;
      continue;
    }
    const key: boolean = expect === "key" || expect === "keyOrClose";
    if (c === "{" || c === "[") {
      if (key) return broken(i);
      if (c === "{") objects.push(i);
      stack.push(i);
      expect = c === "{" ? "keyOrClose" : "valueOrClose";
      i += 1;
      continue;
    }
    const end = c === '"' ? stringEnd(text, i) : key ? -i - 1 : scalarEnd(text, i);
    if (end === undefined || end < 0) return broken(end === undefined ? i : -end - 1);
    i = end;
    if (stack.length === 0) return { end: i, objects };
    expect = key ? "colon" : "after";
  }
}

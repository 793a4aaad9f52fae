/**
 * A literal every match of a regex must contain, read from the pattern's text: a cheap
 * `includes` test that lets a search skip the regex engine on the inputs (most of them) that
 * cannot match. `\bgit\s+commit\b.*--no-verify` gives `--no-verify`; a Bash command without it
 * never reaches re2js.
 *
 * Only a pattern that is a plain concatenation at its top level gives one: its runs of literal
 * characters, with nothing optional among them, appear in every match in that order. Anything
 * the reading is not sure of gives none (the regex then runs on every input): alternation at the
 * top level, flags (`(?i)` would make the literal case-insensitive), `\Q…\E`, numeric and
 * control escapes, POSIX classes, a brace that is not a repeat. Groups, classes, `.`, anchors
 * and escapes like `\s` or `\b` end a run; a quantifier that allows zero takes its character out
 * of the run. test/property/regex-literal.test.ts checks that a regex never matches an input
 * without the literal.
 */

/** Shorter literals filter too little to be worth a test. */
const MIN_LITERAL_LENGTH = 2;

/** The longest literal of `pattern` that every match contains, or undefined when none is sure. */
export function requiredLiteral(pattern: string): string | undefined {
  const runs = literalRuns(pattern);
  if (runs === undefined) return undefined;
  let longest = "";
  for (const run of runs) if (run.length > longest.length) longest = run;
  return longest.length >= MIN_LITERAL_LENGTH ? longest : undefined;
}

/** Escaped characters that stand for themselves (RE2 lets any punctuation be escaped). */
const PUNCTUATION = /^[!-/:-@[-`{-~]$/;
/** Escapes that match a class or an empty string: they end a run. */
const CLASS_ESCAPES = new Set(["d", "D", "s", "S", "w", "W", "b", "B", "A", "z"]);
const REPEAT = /^\{(\d+)(?:,(\d*))?\}/;

/** The runs of literal characters of a top-level concatenation, or undefined when unsure. */
function literalRuns(pattern: string): string[] | undefined {
  if (/\(\?[^:P<]/.test(pattern) || pattern.includes("\\Q")) return undefined;
  const runs: string[] = [];
  let run: string[] = [];
  const end = () => {
    if (run.length > 0) runs.push(run.join(""));
    run = [];
  };
  let i = 0;
  while (i < pattern.length) {
    const c = pattern[i] as string;
    if (c === "|") return undefined;
    if (c === "(" || c === "[") {
      const close = c === "(" ? skipGroup(pattern, i) : skipClass(pattern, i);
      if (close === undefined) return undefined;
      end();
      i = close;
      continue;
    }
    if (c === "*" || c === "?" || c === "+" || c === "{") {
      // A quantifier: of the run's last character when the run did not just end.
      let zeroAllowed = c !== "+";
      let length = 1;
      if (c === "{") {
        const repeat = REPEAT.exec(pattern.slice(i));
        if (!repeat) return undefined;
        zeroAllowed = Number(repeat[1]) === 0;
        length = repeat[0].length;
      }
      if (zeroAllowed) run.pop();
      end();
      i += length;
      if (pattern[i] === "?") i++; // lazy
      continue;
    }
    if (c === "." || c === "^" || c === "$") {
      end();
      i++;
      continue;
    }
    if (c === "\\") {
      const next = pattern[i + 1];
      if (next === undefined) return undefined;
      if (PUNCTUATION.test(next)) {
        run.push(next);
        i += 2;
        continue;
      }
      if (next === "p" || next === "P") {
        end();
        if (pattern[i + 2] === "{") {
          const close = pattern.indexOf("}", i + 3);
          if (close === -1) return undefined;
          i = close + 1;
        } else i += 3;
        continue;
      }
      if (CLASS_ESCAPES.has(next)) {
        end();
        i += 2;
        continue;
      }
      return undefined;
    }
    // A literal character; a surrogate pair is kept whole.
    const code = pattern.codePointAt(i) as number;
    const char = String.fromCodePoint(code);
    run.push(char);
    i += char.length;
  }
  end();
  return runs;
}

/** The index after the `)` closing the group opened at `open`, or undefined when unsure. */
function skipGroup(pattern: string, open: number): number | undefined {
  let depth = 0;
  let i = open;
  while (i < pattern.length) {
    const c = pattern[i];
    if (c === "\\") i += 2;
    else if (c === "[") {
      const close = skipClass(pattern, i);
      if (close === undefined) return undefined;
      i = close;
    } else {
      if (c === "(") depth++;
      else if (c === ")" && --depth === 0) return i + 1;
      i++;
    }
  }
  return undefined;
}

/** The index after the `]` closing the class opened at `open`, or undefined when unsure. */
function skipClass(pattern: string, open: number): number | undefined {
  let i = open + 1;
  if (pattern[i] === "^") i++;
  if (pattern[i] === "]") i++; // a leading ] is a member
  while (i < pattern.length) {
    const c = pattern[i];
    if (c === "\\") i += 2;
    else if (c === "[" && pattern[i + 1] === ":") return undefined;
    else if (c === "]") return i + 1;
    else i++;
  }
  return undefined;
}

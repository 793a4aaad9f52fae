/** Near misses of a known name: a mistyped event, option or key. Pure, and imports nothing. */

/** The name of `among` that `name` most likely means (at most two edits away, case aside), if any. */
export function closestName(name: string, among: Iterable<string>): string | undefined {
  let best: string | undefined;
  let bestDistance = 3;
  for (const known of among) {
    const distance = editDistance(name.toLowerCase(), known.toLowerCase());
    if (distance < bestDistance) [best, bestDistance] = [known, distance];
  }
  return best;
}

/**
 * The name of `among` that `name` most likely means: two edits away (`closestName`), else the one
 * it starts as (`sharedStart`). What "did you mean" suggests for a mistyped key, option or value.
 */
export function nearestName(name: string, among: readonly string[]): string | undefined {
  return closestName(name, among) ?? sharedStart(name, among);
}

/**
 * The names `name` is the start of, case aside (`--pol`: `--policy`), in `among`'s order: a word
 * cut short means one of these before a near miss of another (`--port`, one edit away). Empty when
 * it starts none, or is one of them itself.
 */
export function namesStartedBy(name: string, among: readonly string[]): string[] {
  const start = name.toLowerCase();
  if (among.some((known) => known.toLowerCase() === start)) return [];
  return among.filter((known) => known.toLowerCase().startsWith(start));
}

/**
 * The one name that starts as `name` does, four letters or more, where none is two edits away: a
 * word cut short or written as the noun or verb it was thought to be (`claud` for `claude-code`,
 * `"decison"` for `"decide"`).
 */
function sharedStart(name: string, among: readonly string[]): string | undefined {
  const common = (a: string, b: string) => {
    let n = 0;
    while (n < a.length && n < b.length && a[n]?.toLowerCase() === b[n]?.toLowerCase()) n += 1;
    return n;
  };
  const longest = Math.max(0, ...among.map((known) => common(name, known)));
  const sharing = among.filter((known) => common(name, known) === longest);
  return longest >= 4 && sharing.length === 1 ? sharing[0] : undefined;
}

/** Levenshtein distance, one row at a time. */
function editDistance(a: string, b: string): number {
  let row = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i += 1) {
    const next = [i];
    for (let j = 1; j <= b.length; j += 1) {
      const substitute = (row[j - 1] as number) + (a[i - 1] === b[j - 1] ? 0 : 1);
      next.push(Math.min(substitute, (row[j] as number) + 1, (next[j - 1] as number) + 1));
    }
    row = next;
  }
  return row[b.length] as number;
}

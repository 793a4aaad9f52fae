/**
 * What JSON.parse takes without a word and a policy must not hold. A module of its own, imported
 * by `loadPolicy` when it runs: the Worker's main module has no room for it under issue 10's 64 KiB.
 */

export interface JsonScanFinding {
  /**
   * `repeated`: a key an object repeats; JSON.parse keeps the last silently, so a merge that left
   * two `"rules"` arrays, or a rule with two `"mode"`s, would load part of a policy as if it were
   * all of it. `deep`: the first value nested past `maxDepth`, where checking the policy (a
   * `where` of nested `not`s) would run out of stack. `prototype`: a key `"__proto__"`, which
   * the schema's maps (a `where`, `sinks`, `models`, `headers`) drop without a word, as setting
   * the prototype; a `where` keyed so loaded as a rule with no condition.
   */
  readonly kind: "repeated" | "deep" | "prototype";
  readonly path: (string | number)[];
  readonly line: number;
}

/** The findings in a valid JSON text, each with its path's segments and line, in text order. */
export function scanJson(text: string, maxDepth: number): JsonScanFinding[] {
  const found: JsonScanFinding[] = [];
  // Per open container: where it is in its parent, and an object's keys so far or an array's index.
  interface Open {
    readonly parent: Open | undefined;
    readonly at: string | number | undefined;
    readonly keys?: Set<string>;
    key?: string;
    index: number;
  }
  const pathOf = (container: Open | undefined, last: string | number): (string | number)[] => {
    const path: (string | number)[] = [last];
    for (let c = container; c?.at !== undefined; c = c.parent) path.push(c.at);
    return path.reverse();
  };
  let top: Open | undefined;
  let depth = 0;
  let line = 1;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === "\n") line++;
    else if (c === "{" || c === "[") {
      const at = top === undefined ? undefined : top.keys ? (top.key ?? "") : top.index;
      if (++depth === maxDepth + 1 && top) found.push({ kind: "deep", path: pathOf(top, at ?? ""), line });
      top = c === "{" ? { parent: top, at, keys: new Set(), index: 0 } : { parent: top, at, index: 0 };
    } else if (c === "}" || c === "]") {
      depth--;
      top = top?.parent;
    } else if (c === "," && top && !top.keys) top.index++;
    else if (c === '"') {
      const end = closingQuote(text, i);
      let next = end + 1;
      while (text[next] === " " || text[next] === "\n" || text[next] === "\r" || text[next] === "\t") next++;
      if (top?.keys && text[next] === ":") {
        const raw = text.slice(i + 1, end);
        const key = raw.includes("\\") ? (JSON.parse(`"${raw}"`) as string) : raw;
        if (top.keys.has(key)) found.push({ kind: "repeated", path: pathOf(top, key), line });
        else if (key === "__proto__") found.push({ kind: "prototype", path: pathOf(top, key), line });
        top.keys.add(key);
        top.key = key;
      }
      i = end;
    }
  }
  return found;
}

/** The offset of the quote that closes the JSON string opening at `start`: one after an even run of backslashes. */
function closingQuote(text: string, start: number): number {
  for (let end = text.indexOf('"', start + 1); ; end = text.indexOf('"', end + 1)) {
    let before = end - 1;
    while (text[before] === "\\") before--;
    if ((end - before) % 2 === 1) return end;
  }
}

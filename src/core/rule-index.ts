/**
 * Which rules can apply to an event, found without looking at the others. Rules are indexed by
 * event name, and, on events that read a matcher, by the exact names of a `Write|Edit`-style
 * matcher: a Bash call never visits the rules for Edit, however many there are. Regex matchers
 * are tested once per event name and matcher value, and the answer kept (MEMO_* below bound it):
 * a matcher value is a tool name, a notification type or a session source, of which an agent
 * sends few, so the hot path neither merges lists nor runs a regex. Lists keep file order, which
 * is the order evaluation and precedence rely on.
 */
import { eventReadsMatcher, exactMatcherNames, type Matcher } from "./matcher.js";

interface IndexedRule {
  readonly index: number;
  readonly events: readonly string[] | "*";
  readonly matcher: Matcher;
  readonly document: { readonly matcher?: string | undefined };
}

/**
 * Bounds on the kept candidate lists, since any request may send any matcher value: at most this
 * many values per event, and this many rule references in all (8 MiB of pointers). Past either,
 * that memo starts again empty; a value not kept is worked out again, never answered differently.
 */
const MEMO_VALUES_PER_EVENT = 512;
const MEMO_MAX_REFERENCES = 1 << 20;

interface EventRules<R> {
  /** Whether the event reads a matcher; when not, a rule's matcher is ignored. */
  readonly readsMatcher: boolean;
  /** Every rule for the event, in file order. */
  readonly all: readonly R[];
  /** Rules without an exact-name matcher: candidates whatever the matcher value. */
  readonly anyValue: readonly R[];
  /** Rules whose matcher is a list of exact names, by name. */
  readonly byName: ReadonlyMap<string, readonly R[]>;
  /** The candidates per matcher value worked out so far (`candidates`); `null` for no value. */
  readonly memo: Map<string | null, readonly R[]>;
}

export interface RuleIndex<R> {
  /** The rules that may apply to an event of this name, in file order. */
  rulesFor(eventName: string): readonly R[];
  /**
   * The rules whose event and matcher match, in file order: `value` is the event's matcher value
   * (undefined when it has none). On an event that reads no matcher, every rule for it (a matcher
   * is ignored there). Evaluation need not test these rules' matchers again.
   */
  candidates(eventName: string, value: string | undefined): readonly R[];
}

export function indexRules<R extends IndexedRule>(active: readonly R[]): RuleIndex<R> {
  const wildcard = active.filter((r) => r.events === "*");
  const lists = new Map<string, R[]>();
  for (const rule of active) {
    if (rule.events === "*") continue;
    for (const name of rule.events) {
      const list = lists.get(name);
      if (list) list.push(rule);
      else lists.set(name, [...wildcard, rule]);
    }
  }
  const byEvent = new Map<string, EventRules<R>>();
  for (const [name, list] of lists) {
    list.sort((a, b) => a.index - b.index);
    byEvent.set(name, split(name, list));
  }
  const other = split(undefined, wildcard);
  const forEvent = (eventName: string) => {
    const rules = byEvent.get(eventName);
    if (rules) return rules;
    // An event no rule names: the rules for every event. Indexed by matcher once, on first use,
    // for the (known, finitely many) events that read one; any other name shares `other`.
    if (!eventReadsMatcher(eventName)) return other;
    const indexed = split(eventName, wildcard);
    byEvent.set(eventName, indexed);
    return indexed;
  };
  let memoReferences = 0;
  return {
    rulesFor: (eventName) => forEvent(eventName).all,
    candidates(eventName, value) {
      const rules = forEvent(eventName);
      if (!rules.readsMatcher) return rules.all;
      const key = value ?? null;
      const kept = rules.memo.get(key);
      if (kept) return kept;
      const named = value === undefined ? undefined : rules.byName.get(value);
      const merged = named ? mergeByIndex(rules.anyValue, named) : rules.anyValue;
      const found = merged.filter((r) => r.matcher === undefined || r.matcher(value));
      if (rules.memo.size >= MEMO_VALUES_PER_EVENT || memoReferences + found.length > MEMO_MAX_REFERENCES) {
        for (const list of byEvent.values()) list.memo.clear();
        memoReferences = 0;
      }
      rules.memo.set(key, found);
      memoReferences += found.length;
      return found;
    },
  };
}

function split<R extends IndexedRule>(eventName: string | undefined, all: readonly R[]): EventRules<R> {
  // On an event without a matcher field, a matcher is ignored: every rule is a candidate.
  if (eventName === undefined || !eventReadsMatcher(eventName))
    return { readsMatcher: false, all, anyValue: all, byName: new Map(), memo: new Map() };
  const anyValue: R[] = [];
  const byName = new Map<string, R[]>();
  for (const rule of all) {
    const names = exactMatcherNames(rule.document.matcher);
    if (names === undefined) {
      anyValue.push(rule);
      continue;
    }
    for (const name of names) {
      const list = byName.get(name);
      if (list) list.push(rule);
      else byName.set(name, [rule]);
    }
  }
  return { readsMatcher: true, all, anyValue, byName, memo: new Map() };
}

/** Two lists in file order, merged in file order (each rule is in at most one of them). */
function mergeByIndex<R extends IndexedRule>(a: readonly R[], b: readonly R[]): readonly R[] {
  if (a.length === 0) return b;
  const out: R[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length)
    out.push((a[i] as R).index < (b[j] as R).index ? (a[i++] as R) : (b[j++] as R));
  while (i < a.length) out.push(a[i++] as R);
  while (j < b.length) out.push(b[j++] as R);
  return out;
}

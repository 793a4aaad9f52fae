/**
 * Which rules can apply to an event, found without looking at the others. Rules are indexed by
 * event name, and, on events that read a matcher, by the exact names of a `Write|Edit`-style
 * matcher: a Bash call never visits the rules for Edit, however many there are. Rules with no
 * matcher or a regex matcher are candidates for every value. Lists keep file order, which is the
 * order evaluation and precedence rely on.
 */
import { eventReadsMatcher, exactMatcherNames } from "./matcher.js";

interface IndexedRule {
  readonly index: number;
  readonly events: readonly string[] | "*";
  readonly document: { readonly matcher?: string | undefined };
}

interface EventRules<R> {
  /** Every rule for the event, in file order. */
  readonly all: readonly R[];
  /** Rules without an exact-name matcher: candidates whatever the matcher value. */
  readonly anyValue: readonly R[];
  /** Rules whose matcher is a list of exact names, by name. */
  readonly byName: ReadonlyMap<string, readonly R[]>;
}

export interface RuleIndex<R> {
  /** The rules that may apply to an event of this name, in file order. */
  rulesFor(eventName: string): readonly R[];
  /**
   * The rules whose event and matcher can match: `value` is the event's matcher value
   * (undefined when it has none). Never leaves out a rule that could apply.
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
  return {
    rulesFor: (eventName) => forEvent(eventName).all,
    candidates(eventName, value) {
      const rules = forEvent(eventName);
      if (rules.byName.size === 0) return rules.all;
      const named = value === undefined ? undefined : rules.byName.get(value);
      return named ? mergeByIndex(rules.anyValue, named) : rules.anyValue;
    },
  };
}

function split<R extends IndexedRule>(eventName: string | undefined, all: readonly R[]): EventRules<R> {
  // On an event without a matcher field, a matcher is ignored: every rule is a candidate.
  if (eventName === undefined || !eventReadsMatcher(eventName))
    return { all, anyValue: all, byName: new Map() };
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
  return { all, anyValue, byName };
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

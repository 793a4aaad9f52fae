/**
 * Which rules can apply to an event, found without looking at the others. Rules are indexed by
 * event name, and, on events that read a matcher, by the exact names of a `Write|Edit`-style
 * matcher: a Bash call never visits the rules for Edit, however many there are. Regex matchers
 * are tested once per event name and matcher value, and the answer kept (MEMO_* below bound it,
 * in count and in length):
 * a matcher value is a tool name, a notification type or a session source, of which an agent
 * sends few, so the hot path neither merges lists nor runs a regex. On a Bash call, rules whose
 * `if` patterns all start with a literal word (`Bash(git push *)`) are looked up by the words the
 * command's subcommands start with (permission-rule.ts `commandWords`), so a call to `rm` never
 * visits the rules for `git`. Lists keep file order, which is the order evaluation and
 * precedence rely on.
 */
import { eventReadsMatcher, exactMatcherNames, type Matcher } from "./matcher.js";

interface IndexedRule {
  readonly index: number;
  readonly events: readonly string[] | "*";
  readonly matcher: Matcher;
  /** The first words every `if` pattern of the rule starts with; undefined when one does not. */
  readonly ifWords: readonly string[] | undefined;
  readonly document: { readonly matcher?: string | undefined };
}

/** The candidates for one matcher value, and the same split by `if` first word (made on first use). */
interface Kept<R> {
  readonly found: readonly R[];
  byWord?: { readonly always: readonly R[]; readonly words: ReadonlyMap<string, readonly R[]> };
}

/**
 * Bounds on the kept candidate lists, since any request may send any matcher value: at most this
 * many values per event, and this many rule references in all (8 MiB of pointers). Past either,
 * that memo starts again empty; a value not kept is worked out again, never answered differently.
 */
const MEMO_VALUES_PER_EVENT = 512;
const MEMO_MAX_REFERENCES = 1 << 20;
/**
 * The longest matcher value kept, in UTF-16 units: a value is as long as the body lets it be (a
 * tool name of 1 MiB), and 512 such values per event, for each of the events that read a matcher,
 * held gigabytes until the process ran out of memory. Tool names, sources and notification types
 * are far shorter; a longer value is worked out each time. A kept value is a copy of its own
 * characters: a value cut from a longer string (a FileChanged event's file name, from its path)
 * would otherwise hold the whole string it was cut from.
 */
const MEMO_MAX_VALUE_LENGTH = 256;

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
  readonly memo: Map<string | null, Kept<R>>;
}

export interface RuleIndex<R> {
  /** The rules that may apply to an event of this name, in file order. */
  rulesFor(eventName: string): readonly R[];
  /**
   * The rules whose event and matcher match, in file order: `value` is the event's matcher value
   * (undefined when it has none). On an event that reads no matcher, every rule for it (a matcher
   * is ignored there). Evaluation need not test these rules' matchers again. With `commandWords`
   * (a Bash call's, worked out only if a candidate's `if` patterns start with words, since
   * splitting the command costs more than the rest; undefined when not known), rules whose `if`
   * words include none of them are left out too.
   */
  candidates(
    eventName: string,
    value: string | undefined,
    commandWords?: () => ReadonlySet<string> | undefined,
  ): readonly R[];
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
    candidates(eventName, value, commandWords) {
      const rules = forEvent(eventName);
      if (!rules.readsMatcher) return rules.all;
      const key = value ?? null;
      let kept = rules.memo.get(key);
      if (!kept) {
        const named = value === undefined ? undefined : rules.byName.get(value);
        const merged = named ? mergeByIndex(rules.anyValue, named) : rules.anyValue;
        kept = { found: merged.filter((r) => r.matcher === undefined || r.matcher(value)) };
        if (value === undefined || value.length <= MEMO_MAX_VALUE_LENGTH) {
          // The split by word holds each rule once per word, about as many references again.
          const references = 2 * kept.found.length;
          if (rules.memo.size >= MEMO_VALUES_PER_EVENT || memoReferences + references > MEMO_MAX_REFERENCES) {
            for (const list of byEvent.values()) list.memo.clear();
            memoReferences = 0;
          }
          rules.memo.set(key === null ? null : ownCopy(key), kept);
          memoReferences += references;
        }
      }
      if (commandWords === undefined) return kept.found;
      kept.byWord ??= splitByWord(kept.found);
      if (kept.byWord.words.size === 0) return kept.found;
      const words = commandWords();
      return words === undefined ? kept.found : withWords(kept.byWord, words);
    },
  };
}

/** The same characters in a string of their own, which holds no longer string it was cut from. */
function ownCopy(text: string): string {
  return text.split("").join("");
}

/** Rules without `if` words (always candidates), and the others under each of their words. */
function splitByWord<R extends IndexedRule>(found: readonly R[]): NonNullable<Kept<R>["byWord"]> {
  const always: R[] = [];
  const words = new Map<string, R[]>();
  for (const rule of found) {
    if (rule.ifWords === undefined) {
      always.push(rule);
      continue;
    }
    for (const word of new Set(rule.ifWords)) {
      const list = words.get(word);
      if (list) list.push(rule);
      else words.set(word, [rule]);
    }
  }
  return { always, words };
}

/** The rules that can apply to a command starting with these words, in file order, each once. */
function withWords<R extends IndexedRule>(
  byWord: NonNullable<Kept<R>["byWord"]>,
  commandWords: ReadonlySet<string>,
): readonly R[] {
  const lists: (readonly R[])[] = [];
  for (const word of commandWords) {
    const list = byWord.words.get(word);
    if (list) lists.push(list);
  }
  if (lists.length === 0) return byWord.always;
  let out = byWord.always;
  for (const list of lists) out = mergeByIndex(out, list);
  // A rule listed under two of the words is in two lists; merged in order, its copies are adjacent.
  return lists.length === 1 ? out : out.filter((r, i) => i === 0 || out[i - 1] !== r);
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

/** Two lists in file order, merged in file order (a rule in both comes out twice, adjacent). */
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

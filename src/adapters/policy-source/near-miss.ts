/**
 * The key an unknown one most likely means (`"decison"`: `"decide"`), for the policies the CLI
 * and `serve` read from a file. The keys an object takes are read from the policy's JSON Schema
 * (`hookgate schema`), walked along the issue's path; the Worker and Lambda keep their messages as
 * they are, without the schema generator in their bundles.
 */
import { nearestName } from "../../core/closest-name.js";
import type { PolicyIssue } from "../../core/policy.js";
import { RULE_ACTIONS } from "../../core/policy-schema.js";

type Schema = Record<string, unknown>;

/**
 * The issues, each `unknown key "x"` with the key meant after it where one is near. `document` is
 * the policy as parsed: where the schema allows an object in several forms told apart by a
 * constant (a sink's `type`), only the keys of the forms its object's constants fit are offered.
 */
export async function withNearMisses(issues: PolicyIssue[], document?: unknown): Promise<PolicyIssue[]> {
  if (!issues.some((issue) => unknownKeys(issue.message) !== undefined)) return issues;
  const { policyJsonSchema } = await import("../../core/policy-schema.js");
  const root = policyJsonSchema();
  return issues.map((issue) => {
    const keys = unknownKeys(issue.message);
    const path = keys === undefined ? undefined : pathOf(issue.path);
    if (keys === undefined || path === undefined) return issue;
    const known = compatible(path, valueAt(document, path), keysAt(root, root, path, document));
    const meant = keys.flatMap((key) => {
      const near = nearestName(key, known) ?? otherToolsWord(key, known);
      if (near === undefined) return [];
      return [keys.length === 1 ? `"${near}"` : `"${near}" for "${key}"`];
    });
    if (meant.length === 0) return issue;
    return { ...issue, message: `${issue.message} (did you mean ${meant.join(", ")}?)` };
  });
}

/**
 * The keys the object at `path` may add to those it has: none it has already (a token with
 * `"team"` and `"tean"` is not told `"team"`, which it would then hold twice), and, for a rule
 * that has one action, no key of another (a prompt rule's `"decison"` is not `"decide"`, which it
 * cannot also take).
 */
function compatible(path: readonly (string | number)[], value: unknown, known: string[]): string[] {
  if (!isObject(value)) return known;
  const absent = known.filter((key) => !Object.hasOwn(value, key));
  if (path.length !== 2 || path[0] !== "rules" || typeof path[1] !== "number") return absent;
  const held = RULE_ACTIONS.find((group) => group.some((key) => Object.hasOwn(value, key)));
  if (held === undefined) return absent;
  const others = new Set<string>(RULE_ACTIONS.filter((group) => group !== held).flat());
  return absent.filter((key) => !others.has(key));
}

/**
 * A rule's keys as other hook and policy formats name them, which no edit distance reaches: a
 * first policy's `"message"` for the reason (as a Claude Code hook's own answer words it), its
 * `"action"` or `"effect"` for `decide`, its `"event"` for `on`, its `"when"` for `where`.
 */
const OTHER_TOOLS_WORDS: Readonly<Record<string, string>> = {
  message: "reason",
  action: "decide",
  effect: "decide",
  event: "on",
  events: "on",
  when: "where",
  condition: "where",
  conditions: "where",
  tool: "matcher",
  tools: "matcher",
};

/** The key of `known` that another format's word for it, `key`, means. */
function otherToolsWord(key: string, known: readonly string[]): string | undefined {
  const meant = Object.hasOwn(OTHER_TOOLS_WORDS, key) ? OTHER_TOOLS_WORDS[key] : undefined;
  return meant !== undefined && known.includes(meant) ? meant : undefined;
}

/** The document's value at `path`, if it has one. */
function valueAt(document: unknown, path: readonly (string | number)[]): unknown {
  let value = document;
  for (const step of path) {
    if (!(Array.isArray(value) || isObject(value))) return undefined;
    value = (value as Record<string | number, unknown>)[step];
  }
  return value;
}

/** The keys of a message that is only `unknown key "a"` or `unknown keys "a", "b"`. */
function unknownKeys(message: string): string[] | undefined {
  const match = /^unknown keys? ((?:"[^"]*"(?:, )?)+)$/.exec(message);
  if (!match?.[1]) return undefined;
  return [...match[1].matchAll(/"([^"]*)"/g)].map((m) => m[1] ?? "");
}

/** `$.rules[0].forward` as `["rules", 0, "forward"]`, `$.sinks["eng-slack"]` too; undefined otherwise. */
function pathOf(text: string): (string | number)[] | undefined {
  if (!text.startsWith("$")) return undefined;
  const path: (string | number)[] = [];
  const step = /\.([A-Za-z_$][\w$]*)|\[(\d+)\]|\[("(?:[^"\\]|\\.)*")\]/y;
  step.lastIndex = 1;
  while (step.lastIndex < text.length) {
    const at = step.lastIndex;
    const match = step.exec(text);
    if (!match || step.lastIndex === at) return undefined;
    if (match[1] !== undefined) path.push(match[1]);
    else if (match[2] !== undefined) path.push(Number(match[2]));
    else path.push(JSON.parse(match[3] ?? '""') as string);
  }
  return path;
}

/**
 * The property names the object at `path` may have, in any of the forms the schema allows there
 * that `value` (the document's own object there, if known) fits.
 */
function keysAt(root: Schema, node: unknown, path: readonly (string | number)[], value: unknown): string[] {
  const forms = fitting(formsOf(root, node), value);
  if (path.length === 0) return [...new Set(forms.flatMap((form) => Object.keys(asSchema(form.properties))))];
  const [step = "", ...rest] = path;
  const inner =
    Array.isArray(value) || isObject(value) ? (value as Record<string, unknown>)[step] : undefined;
  return [
    ...new Set(
      forms.flatMap((form) => {
        if (typeof step === "number")
          return form.items === undefined ? [] : keysAt(root, form.items, rest, inner);
        const property = asSchema(form.properties)[step];
        if (property !== undefined) return keysAt(root, property, rest, inner);
        return typeof form.additionalProperties === "object"
          ? keysAt(root, form.additionalProperties, rest, inner)
          : [];
      }),
    ),
  ];
}

/**
 * The forms whose constants (`"type": {"const": "slack"}`) `value` does not contradict; all of
 * them when it contradicts every one, or is no object: the keys are a guess then anyway.
 */
function fitting(forms: Schema[], value: unknown): Schema[] {
  if (!isObject(value)) return forms;
  const fit = forms.filter((form) =>
    Object.entries(asSchema(form.properties)).every(([name, property]) => {
      const schema = asSchema(property);
      return !("const" in schema) || !Object.hasOwn(value, name) || value[name] === schema.const;
    }),
  );
  return fit.length === 0 ? forms : fit;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

/** A schema's forms: itself, or each branch of its anyOf / oneOf / allOf, its $ref followed. */
function formsOf(root: Schema, node: unknown, depth = 0): Schema[] {
  const schema = asSchema(node);
  if (depth > 16) return [];
  if (typeof schema.$ref === "string") {
    const name = /^#\/\$defs\/(.+)$/.exec(schema.$ref)?.[1];
    return name === undefined ? [] : formsOf(root, asSchema(root.$defs)[name], depth + 1);
  }
  const branches = [schema.anyOf, schema.oneOf, schema.allOf].flatMap((list) =>
    Array.isArray(list) ? list : [],
  );
  return branches.length === 0 ? [schema] : branches.flatMap((branch) => formsOf(root, branch, depth + 1));
}

function asSchema(value: unknown): Schema {
  return value !== null && typeof value === "object" && !Array.isArray(value) ? (value as Schema) : {};
}

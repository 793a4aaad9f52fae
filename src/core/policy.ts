/**
 * Loading a policy: parse the JSON, validate it against the schema, compile every matcher,
 * `if` and `where` once, and index the rules by event. Every problem is reported with its
 * JSON path, all at once, so a user fixes a file in one pass.
 */
import type * as z from "zod/mini";
import { closestName, nearestName } from "./closest-name.js";
import { endsInSlackEndpoint } from "./discord-url.js";
import type { EgressPolicy } from "./egress/policy.js";
import { withoutControls } from "./escape-controls.js";
import { isRecord } from "./json-object.js";
import type { JsonScanFinding } from "./json-scan.js";
import { jsonProblem } from "./json-text.js";
import { loadMaskShapes } from "./mask.js";
import { compileMatcher, type Matcher } from "./matcher.js";
import { commandWordOf, type PermissionRule, parsePermissionRule } from "./permission-rule.js";
import {
  type DecisionKind,
  EgressSchema,
  type FailMode,
  type ForwardAction,
  ModelSchema,
  type PolicyDocument,
  PolicySchema,
  type PromptAction,
  RULE_ACTIONS,
  type RuleDocument,
  RuleSchema,
  SinkSchema,
  type TokenDocument,
  TokenSchema,
  WHERE_OPERATORS,
} from "./policy-schema.js";
import type { EnvReader, Sha256 } from "./ports.js";
import { withFlagsInside } from "./regex.js";
import { err, ok, type Result } from "./result.js";
import { indexRules } from "./rule-index.js";
import {
  ENV_NAME,
  ENV_NAME_RULE,
  HEADER_VAR_NAME,
  nameToShow,
  readWebhookKey,
  resolveSecret,
  SINK_ENV_FIELDS,
  shellVariable,
  variableNamedHere,
} from "./secret-ref.js";
import { compileWhere, type Predicate } from "./where.js";

export interface PolicyIssue {
  readonly severity: "error" | "warning";
  /** JSON path into the policy file, e.g. `$.rules[2].matcher`. */
  readonly path: string;
  readonly message: string;
  /**
   * The environment variable the policy reads that is unset (a warning): `serve` says, on a
   * reload, that its environment is read at start only.
   */
  readonly unsetVariable?: string;
  /** The policy file does not exist (its one issue): a command says so, not that it is invalid. */
  readonly missingFile?: true;
}

export type RuleAction =
  | {
      readonly kind: "decide";
      readonly decision: DecisionKind;
      readonly reason?: string | undefined;
      readonly context?: string | undefined;
      readonly systemMessage?: string | undefined;
      readonly updatedInput?: Readonly<Record<string, unknown>> | undefined;
    }
  | { readonly kind: "context"; readonly text: string; readonly systemMessage?: string | undefined }
  | { readonly kind: "prompt"; readonly prompt: PromptAction }
  | {
      readonly kind: "forward";
      /** As written, but its `url` read from the environment when it is `"env:NAME"`. */
      readonly forward: ForwardAction;
      /**
       * The variable an `env:` url names when it is unset: every call then fails and `onError`
       * applies (the url is left as written, and never called).
       */
      readonly unsetUrlVariable?: string | undefined;
    }
  | { readonly kind: "notify" };

export interface CompiledRule {
  readonly id: string;
  readonly index: number;
  /** `$.rules[i]`, for messages. */
  readonly path: string;
  /** Event names, or "*" for every event. */
  readonly events: readonly string[] | "*";
  readonly matcher: Matcher;
  readonly ifRules: readonly PermissionRule[] | undefined;
  /**
   * The first words of the `if` entries when each is a Bash pattern that names one
   * (permission-rule.ts `commandWordOf`): a Bash command starting with none of them is skipped.
   */
  readonly ifWords: readonly string[] | undefined;
  readonly where: readonly Predicate[];
  readonly teams: ReadonlySet<string> | undefined;
  readonly mode: "enforce" | "shadow" | "off";
  readonly action: RuleAction;
  readonly notify: readonly string[];
  readonly document: RuleDocument;
}

export interface TeamToken {
  readonly team: string;
  /** SHA-256 of the token, lowercase hex; undefined when its env variable is unset. */
  readonly sha256: string | undefined;
  /** Where the token came from, for messages: `sha256` or the env variable's name. */
  readonly source: string;
}

/** A `models` entry with its secret read and its defaults filled in. */
export interface CompiledModel {
  readonly name: string;
  readonly provider: "anthropic" | "openai";
  readonly model: string;
  /** Undefined when its `env:` variable is unset: calls then fail and `onError` applies. */
  readonly apiKey: string | undefined;
  /** The endpoint, its `env:` variable read; undefined for the provider's public one. */
  readonly url: string | undefined;
  /**
   * The variable an `env:` url names when it is unset: every call then fails and `onError`
   * applies. Never the provider's public endpoint instead, which would be sent the key (and the
   * events) meant for the server the variable names.
   */
  readonly unsetUrlVariable: string | undefined;
  readonly cacheTtlSeconds: number;
  readonly maxConcurrent: number;
  readonly dailyCallsPerTeam: number | undefined;
}

export interface Policy {
  readonly document: PolicyDocument;
  /** Short hash of the policy file's bytes, sent as `x-hookgate-policy`. */
  readonly hash: string;
  readonly rules: readonly CompiledRule[];
  readonly auth: { readonly tokens: readonly TeamToken[]; readonly onFailure: FailMode } | undefined;
  readonly defaults: {
    readonly onError: FailMode;
    readonly deadlineMs: number;
    readonly maxBodyBytes: number;
  };
  /**
   * The compiled `egress` section: URL allowlist and address rules for every outbound call.
   * Undefined when the file has none; the egress adapters then apply DEFAULT_EGRESS_POLICY. The
   * guard's code (the URL stage, ipaddr.js) is loaded only to compile a section, so a policy
   * without one keeps it out of the Worker's cold start (bench/README.md, row 4a).
   */
  readonly egress: EgressPolicy | undefined;
  readonly models: ReadonlyMap<string, CompiledModel>;
  /**
   * The secret values this policy reads (every `env:` value and the path of an `env:` URL,
   * team tokens, the variables its forward headers may interpolate, inline API keys and signing
   * secrets), longest first, for scrubbing by value what leaves the process (`scrubSecrets`): a
   * peer may echo a secret in no shape `maskString` knows. Values under MIN_SECRET_CHARS are
   * left out. Read once at load: a changed variable takes effect with the next load.
   */
  readonly secrets: readonly string[];
  /** The rules that may apply to an event of this name, in file order (mode `off` left out). */
  rulesFor(eventName: string): readonly CompiledRule[];
  /**
   * The rules that may apply to an event of this name with this matcher value (undefined when
   * the event has none), in file order: rules whose matcher does not match are left out, and,
   * given a Bash call's command words (asked for only when a rule's `if` patterns start with
   * words), rules whose `if` patterns start with none of them.
   */
  candidates(
    eventName: string,
    matcherValue: string | undefined,
    commandWords?: () => ReadonlySet<string> | undefined,
  ): readonly CompiledRule[];
}

export const DEFAULT_DEADLINE_MS = 5000;
export const DEFAULT_MAX_BODY_BYTES = 1024 * 1024;

export interface LoadedPolicy {
  readonly policy: Policy;
  /** Problems that do not stop the policy from loading (unset token variables, ...). */
  readonly warnings: readonly PolicyIssue[];
}

export interface PolicyDeps {
  readonly env: EnvReader;
  readonly sha256: Sha256;
}

/** Parse and compile a policy file's text. Errors list every problem; nothing is half-loaded. */
export async function loadPolicy(
  source: string,
  deps: PolicyDeps,
): Promise<Result<LoadedPolicy, PolicyIssue[]>> {
  // A byte-order mark, which some editors write, is dropped here as the file reader drops it, so
  // that a policy put in HOOKGATE_POLICY from such a file loads on Lambda and the Worker as the
  // file itself does for serve and check.
  const text = source.startsWith("\uFEFF") ? source.slice(1) : source;
  // The masking shapes, for bundles that load them with the first policy; until they are here,
  // text that may hold a secret is masked whole (mask.ts).
  await loadMaskShapes();
  const raw = parseJsonFile(text);
  if (!raw.ok) return raw;
  const scanned = jsonScanIssues((await import("./json-scan.js")).scanJson(text, MAX_JSON_DEPTH));
  if (scanned.length > 0) return err(scanned);
  const parsed = validatePolicyDocument(raw.value);
  if (!parsed.ok)
    return err([
      ...parsed.error,
      ...problemsOfSoundRules(raw.value, parsed.error),
      ...(await problemsOfSoundSections(raw.value, deps)),
    ]);
  const document = parsed.value;
  const issues: PolicyIssue[] = [];
  const rules = compileRules(document, issues);
  const egress =
    document.egress === undefined
      ? undefined
      : (await import("./egress/policy.js")).compileEgressPolicy(document.egress);
  issues.push(...(egress?.errors ?? []).map((e) => ({ severity: "error" as const, ...e })));
  const warnings: PolicyIssue[] = (egress?.warnings ?? []).map((w) => ({
    severity: "warning" as const,
    ...w,
  }));
  const resolved = await resolveTokens(document.auth?.tokens ?? [], deps, warnings);
  const tokens = resolved.filter((token) => token !== undefined);
  issues.push(...sharedTokens(resolved));
  for (const issue of badEnvNames(document)) (issue.severity === "error" ? issues : warnings).push(issue);
  warnings.push(...badAllowedEnvVars(document));
  const models = compileModels(document, deps.env, warnings);
  const withUrls = resolveForwardUrls(rules, deps.env, warnings);
  warnAboutSinkValues(document, deps.env, warnings);
  if (issues.length > 0) return err(issues);
  // Of the JSON, not of its spelling: a file reformatted, or minified for a secret (`jq -c`, as
  // the Lambda and Workers deploys advise), is the same policy with the same hash.
  const hash = (await deps.sha256(JSON.stringify(raw.value))).slice(0, 16);
  const secrets = collectSecrets(document, deps.env);
  return ok({
    policy: createPolicy(document, hash, withUrls, tokens, egress?.policy, models, secrets),
    warnings,
  });
}

/**
 * When the file fails its schema, the rules that pass it alone are still compiled, so `check`
 * lists a bad matcher, `if` or `where`, or an unknown sink or model, beside a typo elsewhere,
 * instead of one round of fixes at a time. They are judged against the sink and model names the
 * file gives, whatever else is wrong with those.
 */
function problemsOfSoundRules(value: unknown, schemaProblems: readonly PolicyIssue[]): PolicyIssue[] {
  if (typeof value !== "object" || value === null) return [];
  const { rules, sinks, models } = value as Record<string, unknown>;
  if (!Array.isArray(rules)) return [];
  // A section that is not an object has its own schema problem; its names are not judged then.
  const judged = (value: unknown) => value === undefined || isRecord(value);
  const context = {
    sinks: isRecord(sinks) ? sinks : {},
    models: isRecord(models) ? models : {},
  } as PolicyDocument;
  const problems: PolicyIssue[] = [];
  const seen = new Map<string, string>();
  rules.forEach((candidate, index) => {
    const path = `$.rules[${index}]`;
    const id = (candidate as { id?: unknown } | null)?.id;
    const repeated = typeof id === "string" && id !== "" ? repeatedId(seen, id, path) : undefined;
    if (repeated) problems.push(repeated);
    if (
      schemaProblems.some(
        (p) => p.path === path || p.path.startsWith(`${path}.`) || p.path.startsWith(`${path}[`),
      )
    )
      return;
    const rule = RuleSchema.safeParse(candidate);
    if (!rule.success) return;
    const compiled = compileRule(rule.data, index, path, context);
    if (compiled.ok) return;
    for (const problem of compiled.error) {
      if (!judged(sinks) && problem.path.startsWith(`${path}.notify[`)) continue;
      if (!judged(models) && problem.path === `${path}.prompt.model`) continue;
      problems.push(problem);
    }
  });
  return problems;
}

/**
 * When the file fails its schema, the checks that follow it still run on what passes it alone:
 * the egress section's CIDRs (when the section passes), the tokens that pass shared between
 * teams, and `"env:"` naming no variable in the sinks and models that pass. Each judges its own
 * entries only, so none is misread for a problem elsewhere, and the file is mended in one round.
 */
async function problemsOfSoundSections(value: unknown, deps: PolicyDeps): Promise<PolicyIssue[]> {
  if (!isRecord(value)) return [];
  const problems: PolicyIssue[] = [];
  const egress = EgressSchema.safeParse(value.egress);
  if (value.egress !== undefined && egress.success) {
    const compiled = (await import("./egress/policy.js")).compileEgressPolicy(egress.data);
    problems.push(...compiled.errors.map((e) => ({ severity: "error" as const, ...e })));
  }
  const tokens = isRecord(value.auth) && Array.isArray(value.auth.tokens) ? value.auth.tokens : [];
  const sound = tokens.map((token: unknown) => TokenSchema.safeParse(token).data);
  problems.push(...sharedTokens(await resolveTokens(sound, deps, [])));
  const passing = (section: unknown, schema: typeof SinkSchema | typeof ModelSchema) =>
    Object.fromEntries(
      Object.entries(isRecord(section) ? section : {}).filter(([, entry]) => schema.safeParse(entry).success),
    );
  const sections = { sinks: passing(value.sinks, SinkSchema), models: passing(value.models, ModelSchema) };
  problems.push(
    ...badEnvNames(sections as unknown as PolicyDocument).filter((issue) => issue.severity === "error"),
  );
  return problems;
}

/**
 * The most problems of a policy that does not load that a log line or an agent's answer lists
 * (`hookgate check` lists them all). A policy whose every rule has the same mistake (a key
 * renamed) has thousands: listed whole, a SIGHUP's refusal was one log line of hundreds of KB,
 * split by journald and Docker's log driver into pieces that are no JSON, and on Lambda and
 * Workers every hook's answer quoted them all to the agent.
 */
const LISTED_PROBLEMS = 20;

/**
 * Whether `rule` sends notifications when it applies: it names sinks and enforces. A rule that is
 * `off` or in `shadow` puts nothing on the queue (evaluate.ts).
 */
export function sendsNotifications(rule: CompiledRule): boolean {
  return rule.mode === "enforce" && rule.notify.length > 0;
}

/**
 * Whether a rule of `policy` sends notifications: a runtime with no queue to send to loses its
 * events. A policy whose notify rules are all `off` or in shadow loses nothing there.
 */
export function notifies(policy: Policy): boolean {
  return policy.rules.some(sendsNotifications);
}

/** The first problems of a policy that does not load, each `path: message`, then how many more. */
export function listedProblems(issues: readonly PolicyIssue[]): {
  readonly listed: string[];
  readonly more: number;
} {
  return {
    listed: issues.slice(0, LISTED_PROBLEMS).map((i) => `${i.path}: ${i.message}`),
    more: Math.max(0, issues.length - LISTED_PROBLEMS),
  };
}

/** The same on one line, as a hook's fail-closed answer on Lambda and Workers quotes them. */
export function describeProblems(issues: readonly PolicyIssue[]): string {
  const { listed, more } = listedProblems(issues);
  return `${listed.join("; ")}${more > 0 ? `; and ${more} more (hookgate check on the policy lists them all)` : ""}`;
}

/**
 * Whether a policy text that is no JSON is a file's path (`/var/task/policy.json`,
 * `./policy.json`, `policy.json`, `C:\hookgate\policy.json`): HOOKGATE_POLICY set so on Lambda
 * or the Worker, where it takes the policy's JSON itself and JSON.parse says only
 * "Unexpected token '/'".
 */
export function looksLikeFilePath(text: string): boolean {
  return /^(?:(?:~|\.{1,2})?\/|[A-Za-z]:\\)[^\n{]*$|^[^\s{}[\]"]+\.json$/i.test(text.trim());
}

/** A JSON file's text (a policy, a cases file), or the one problem at its root. */
export function parseJsonFile(text: string): Result<unknown, PolicyIssue[]> {
  try {
    return ok(JSON.parse(text));
  } catch (e) {
    return err([{ severity: "error", path: "$", message: `is not valid JSON: ${jsonProblem(e, text)}` }]);
  }
}

/** A text's JSON value, or undefined when it is no JSON. */
function parsedOrNot(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** Deeper than any policy or cases file needs; the checks that walk it recurse. */
export const MAX_JSON_DEPTH = 64;

/** What json-scan.ts found, as the problems they are. */
export function jsonScanIssues(found: readonly JsonScanFinding[]): PolicyIssue[] {
  return found.map(({ kind, path, line }) => ({
    severity: "error",
    path: jsonPath(path),
    message:
      kind === "repeated"
        ? `appears again at line ${line}; JSON keeps only the last, so merge the two or delete one`
        : kind === "prototype"
          ? `is a key at line ${line} that JavaScript reads as an object's prototype, not as a name, so it would be dropped; rename it`
          : `nests more than ${MAX_JSON_DEPTH} levels deep at line ${line}; no policy needs that many`,
  }));
}

/** JSON and schema only: the first half of `loadPolicy`, shared with `hookgate check`. */
export function parsePolicyDocument(text: string): Result<PolicyDocument, PolicyIssue[]> {
  const parsed = parseJsonFile(text);
  return parsed.ok ? validatePolicyDocument(parsed.value) : parsed;
}

function validatePolicyDocument(value: unknown): Result<PolicyDocument, PolicyIssue[]> {
  const result = PolicySchema.safeParse(value);
  if (!result.success) {
    // A `where` object with a key no operator has is said once, by its unknown key (which says
    // what to write); not again as an object without exactly one operator.
    const unknownAt = new Set(
      result.error.issues.filter((i) => i.code === "unrecognized_keys").map((i) => jsonPath(i.path)),
    );
    const issues = result.error.issues.filter(
      (i) => !(i.code === "custom" && whereOperatorAt(i.path) && unknownAt.has(jsonPath(i.path))),
    );
    return err(issues.map((issue) => schemaIssue(issue, value)));
  }
  return ok(result.data);
}

/** Whether `path` is that of a rule's `where` condition (`$.rules[0].where.cwd`, or a `not` in one). */
function whereOperatorAt(path: readonly PropertyKey[]): boolean {
  return (
    path[0] === "rules" && path[2] === "where" && path.length >= 4 && path.slice(4).every((k) => k === "not")
  );
}

/**
 * Words for a value that a hook's own output uses, far from the value's name: Claude Code's
 * deprecated top-level `"decision": "approve"` is an allow (clients.md §6.2).
 */
const OLDER_WORDS: readonly { readonly word: string; readonly meant: string; readonly why: string }[] = [
  { word: "approve", meant: "allow", why: "Claude Code's deprecated word for it" },
];

/**
 * ": did you mean …?" naming the value of `values` that a string `at` most likely means, or "":
 * one in another case first (`"Deny"`: values are case-sensitive, and the word read as right),
 * else a near miss. Only the known value is quoted, never what was written.
 */
function valueMeant(at: unknown, values: readonly unknown[]): string {
  if (typeof at !== "string") return "";
  const names = values.filter((v): v is string => typeof v === "string");
  const cased = names.find((name) => name.toLowerCase() === at.toLowerCase());
  if (cased !== undefined) return `: did you mean ${JSON.stringify(cased)}? values are case-sensitive`;
  const older = OLDER_WORDS.find(({ word, meant }) => word === at.toLowerCase() && names.includes(meant));
  if (older !== undefined)
    return `: did you mean ${JSON.stringify(older.meant)}? "${older.word}" is ${older.why}`;
  const meant = nearestName(at, names);
  return meant === undefined ? "" : `: did you mean ${JSON.stringify(meant)}?`;
}

/**
 * What to write for a field that takes one value (`"version": 1`) and has none, or has it quoted
 * (`"1"`): "must be 1" said neither that it was missing nor, of `"1"`, what differs.
 */
function oneLiteral(
  issue: z.core.$ZodIssue,
  path: readonly PropertyKey[],
  present: boolean,
  at: unknown,
): string | undefined {
  if (issue.code !== "invalid_value" || issue.values.length !== 1) return undefined;
  const written = JSON.stringify(issue.values[0]);
  if (!present) return `is required: write "${String(path.at(-1))}": ${written}`;
  if (typeof at === "string" && typeof issue.values[0] !== "string" && at.trim() === written)
    return `must be ${written}: write ${written}, without quotes`;
  return undefined;
}

/** zod/mini ships no message locale (it would grow the Worker bundle); say it in our own words. */
function schemaIssue(issue: z.core.$ZodIssue, document: unknown): PolicyIssue {
  const { path, message } = explained(issue, [], document);
  return { severity: "error", path: jsonPath(path), message };
}

/** The value at `path` in `value`, and whether its last key is there at all. */
/** The value at `path` inside `value`, and whether every key on the way is there. */
export function valueAt(value: unknown, path: readonly PropertyKey[]): { present: boolean; at: unknown } {
  let at = value;
  for (const key of path) {
    if (at === null || typeof at !== "object" || !Object.hasOwn(at, key))
      return { present: false, at: undefined };
    at = (at as Record<PropertyKey, unknown>)[key];
  }
  return { present: true, at };
}

/**
 * An issue's path and message, `base` being the path of the value it was found in: a field
 * missing altogether "is required" (zod says a wrong type, or no accepted form); a union says
 * which forms it takes, or, when the value has the shape of one form, what is wrong inside it.
 */
function explained(
  issue: z.core.$ZodIssue,
  base: readonly PropertyKey[],
  document: unknown,
): { path: PropertyKey[]; message: string } {
  const path = [...base, ...issue.path];
  const { present, at } = valueAt(document, path);
  if (!present && (issue.code === "invalid_union" || issue.code === "invalid_type"))
    return { path, message: "is required" };
  const literal = oneLiteral(issue, path, present, at);
  if (literal !== undefined) return { path, message: literal };
  // `on` and `if` take a list, so a matcher is written as one too: POLICY.md's matcher names
  // several tools joined with `|`. "*" matches everything only alone: in "*|Write" it is a part
  // read as a regular expression, which does not compile.
  if (
    issue.code === "invalid_type" &&
    path.length === 3 &&
    path[0] === "rules" &&
    path[2] === "matcher" &&
    Array.isArray(at) &&
    at.length > 0 &&
    at.every((name) => typeof name === "string" && name !== "")
  ) {
    const matcher = at.includes("*") ? "*" : at.join("|");
    return {
      path,
      message: `must be a string, not a list: write ${JSON.stringify(matcher)}${at.length > 1 ? ", which matches any of them" : ""}`,
    };
  }
  // A policy encoded twice (jq -R, a template's jsonencode of the file's text) is a string
  // holding its JSON; said so, never quoted, since the policy may hold a secret.
  if (
    issue.code === "invalid_type" &&
    path.length === 0 &&
    typeof at === "string" &&
    isRecord(parsedOrNot(at))
  )
    return {
      path,
      message:
        "must be an object, not a string: this is the policy's JSON encoded twice, as a string; give the JSON itself (jq -r . decodes it once)",
    };
  // `{"not": "Bash"}`: POLICY.md lists `not` right after "a literal (equality)", but it wraps an
  // operator; name the one that says "any value but this".
  if (issue.code === "invalid_type" && path.length > 4 && path.at(-1) === "not" && whereOperatorAt(path)) {
    const written = JSON.stringify(at) ?? "";
    const write = Array.isArray(at)
      ? `{"not": {"in": ${written}}} for a value not among them`
      : `{"not": {"equals": ${written}}} for any value but ${written}`;
    return { path, message: `must be an operator object, not ${valueKind(at)}: write ${write}` };
  }
  if (issue.code === "invalid_type" && issue.message === "Invalid input")
    return { path, message: wrongType(issue.expected, at, mayHoldSecret(path)) };
  if (issue.code === "unrecognized_keys" && whereOperatorAt(path)) {
    // `"tool_input": {"command": "ls"}`, written as the event nests it: a where key is a path.
    const [key] = issue.keys;
    const operators: readonly string[] = WHERE_OPERATORS;
    // `{"regx": "^/srv"}` is an operator mistyped: the dotted path alone would name a field no
    // event has, a condition that loads and never holds.
    const meant = issue.keys.flatMap((k) => {
      const negated = negatedOperator(k);
      const near = meantOperator(k, valueAt(at, [k]).at, at);
      const shown =
        negated !== undefined
          ? `{"not": {"${negated}": …}}`
          : k === "flags"
            ? flagsInside(at)
            : near && `"${near}"`;
      return shown === undefined ? [] : [issue.keys.length === 1 ? shown : `${shown} for "${k}"`];
    });
    const nested =
      path.length === 4 &&
      key !== undefined &&
      negatedOperator(key) === undefined &&
      isRecord(at) &&
      !Object.keys(at).some((k) => operators.includes(k))
        ? `; ${meant.length > 0 ? "or, " : ""}to test a field inside ${JSON.stringify(path[3])}, write its dotted path as the where key: ${JSON.stringify(`${String(path[3])}.${key}`)}`
        : "";
    return {
      path,
      message: `${issueMessage(issue)}${meant.length > 0 ? ` (did you mean ${meant.join(", ")}?)` : ""}: a where condition is a literal or an object with one of ${WHERE_OPERATORS.join(", ")}${nested}`,
    };
  }
  // A token's `env` written as every other field reads a variable (`"env:NAME"`). The name is
  // written out unless it reads like a secret (nameToShow): a token pasted there is not quoted.
  if (
    issue.code === "invalid_format" &&
    path[0] === "auth" &&
    path[3] === "env" &&
    typeof at === "string" &&
    at.startsWith("env:") &&
    ENV_NAME.test(at.slice(4))
  ) {
    const shown = nameToShow(at.slice(4));
    const write = shown === undefined ? "" : `: write "${shown}"`;
    return {
      path,
      message: `${issueMessage(issue)}; a token's env names the variable itself, without "env:"${write}`,
    };
  }
  // Or as a shell reads it (`$NAME`, `${NAME}`); said only of a name that does not read like a secret.
  const shownShellName =
    issue.code === "invalid_format" && path[0] === "auth" && path[3] === "env" && typeof at === "string"
      ? shellVariable(at)
      : undefined;
  if (shownShellName !== undefined)
    return {
      path,
      message: `${issueMessage(issue)}; a token's env names the variable itself, without "$" or braces: write "${shownShellName}"`,
    };
  if (issue.code === "invalid_value")
    return { path, message: `${issueMessage(issue)}${valueMeant(at, issue.values)}` };
  if (issue.code !== "invalid_union") return { path, message: issueMessage(issue) };
  // A discriminator no form has (a sink's `type`): the values it takes.
  const options = "options" in issue ? issue.options : undefined;
  if (options !== undefined && options.length > 0)
    return {
      path,
      message: `must be one of ${options.map((o) => JSON.stringify(o)).join(", ")}${valueMeant(at, options)}`,
    };
  if (issue.errors.length === 0) return { path, message: issueMessage(issue) };
  // A form whose own type the value lacks is not what was meant; of the others, say what is wrong.
  const typeOnly = (errors: readonly z.core.$ZodIssue[]) =>
    errors.length === 1 &&
    errors[0]?.path.length === 0 &&
    (errors[0].code === "invalid_type" ||
      (errors[0].code === "invalid_union" && errors[0].errors.every(typeOnly)));
  const meant = issue.errors.filter((errors) => !typeOnly(errors));
  if (meant.length === 0 && Array.isArray(at) && whereOperatorAt(path) && path.length === 4) {
    // A literal is compared by equality, and a list is no literal: say how a list is compared.
    const short = (value: unknown) => {
      const text = JSON.stringify(value) ?? "";
      return text.length <= 60 ? text : Array.isArray(value) ? "[…]" : '"…"';
    };
    const list = short(at);
    return {
      path,
      message: `is a list, which a where condition compares through an operator: {"equals": ${list}} for the whole list, {"contains": ${short(at[0] ?? "…")}} for one item, {"in": ${list}} for a value among them`,
    };
  }
  if (meant.length === 0) {
    const kinds = [...new Set(issue.errors.flatMap(expectedKinds))];
    // A number past a double's range (`"x": 1e400`) is a number as written, read as infinity: the
    // number form refused its size, not its kind, which the list of kinds would say it has.
    if (typeof at === "number" && !Number.isFinite(at) && kinds.some((kind) => kind.endsWith(" number")))
      return { path, message: wrongType("number", at) };
    return {
      path,
      message: `must be ${kinds.slice(0, -1).join(", ")}${kinds.length > 1 ? " or " : ""}${kinds.at(-1)}`,
    };
  }
  // The form whose keys the object has no other than (a token with "env" and no "team") is the
  // form meant: say what is wrong inside it.
  const unknownKeys = (errors: readonly z.core.$ZodIssue[]) =>
    errors.flatMap((e) => (e.code === "unrecognized_keys" && e.path.length === 0 ? e.keys : []));
  const fitting = meant.filter((errors) => unknownKeys(errors).length === 0);
  const [first] = fitting.length === 1 ? fitting : meant;
  if ((meant.length === 1 || fitting.length === 1) && first?.[0] !== undefined)
    return explained(first[0], path, document);
  // Each form refuses only keys another form takes (a token with both "sha256" and "env"): the
  // object mixes forms; keep the keys of one.
  const refused = meant.map(unknownKeys);
  const mixed = [...new Set(refused.flat())];
  if (
    fitting.length === 0 &&
    mixed.length > 1 &&
    !mixed.some((key) => refused.every((k) => k.includes(key)))
  ) {
    const named = Object.keys(at as object)
      .filter((key) => mixed.includes(key))
      .map((key) => `"${key}"`);
    const both = `${named.slice(0, -1).join(", ")} and ${named.at(-1)}`;
    const keep = named.length === 2 ? "delete the other" : "delete all but one";
    return { path, message: `has both ${both}, but takes only one of them: ${keep}` };
  }
  // Each form needs a key the object lacks (a token's `sha256` or `env`): name them.
  const needed = meant.map((errors) =>
    errors.length === 1 && errors[0]?.code === "invalid_type" && errors[0].path.length === 1
      ? String(errors[0].path[0])
      : undefined,
  );
  if (needed.every((key) => key !== undefined && !valueAt(at, [key]).present))
    return { path, message: `needs ${needed.map((key) => `"${key}"`).join(" or ")}` };
  // Each form refuses a key the object has ({"team": "a", "token": "…"}): name it, and the key it
  // was likely written for, else what the forms nearest the object need.
  const stray = strayKeys(meant, at);
  if (stray !== undefined) return { path, message: stray };
  return { path, message: "does not match any of the accepted forms" };
}

/**
 * What is wrong with an object no form of a union takes, when the forms nearest it (the fewest
 * keys missing or refused, with nothing else wrong) all refuse a key it has: that key, with the
 * key meant where one it lacks is near (`"envv"`: `"env"`), else with the one key each of those
 * forms needs (`unknown key "token", and needs "sha256" or "env"`).
 */
function strayKeys(forms: readonly (readonly z.core.$ZodIssue[])[], value: unknown): string | undefined {
  const shapes = forms.flatMap((errors) => {
    const missing: string[] = [];
    const refused: string[] = [];
    for (const e of errors) {
      if (e.code === "unrecognized_keys" && e.path.length === 0) refused.push(...e.keys);
      else if (
        e.code === "invalid_type" &&
        e.path.length === 1 &&
        typeof e.path[0] === "string" &&
        !valueAt(value, e.path).present
      )
        missing.push(e.path[0]);
      else return [];
    }
    return [{ missing, refused }];
  });
  const cost = (shape: { missing: string[]; refused: string[] }) =>
    shape.missing.length + shape.refused.length;
  const least = Math.min(...shapes.map(cost));
  const nearest = shapes.filter((shape) => cost(shape) === least);
  const stray = (nearest[0]?.refused ?? []).filter((key) =>
    nearest.every((shape) => shape.refused.includes(key)),
  );
  if (stray.length === 0) return undefined;
  const unknown = `unknown key${stray.length > 1 ? "s" : ""} ${stray.map((k) => `"${k}"`).join(", ")}`;
  const lacking = [...new Set(nearest.flatMap((shape) => shape.missing))];
  const meant = stray.map((key) => closestName(key, lacking));
  if (lacking.length > 0 && meant.every((key) => key !== undefined))
    return `${unknown} (did you mean ${meant.map((key) => `"${key}"`).join(", ")}?)`;
  if (nearest.every((shape) => shape.missing.length === 1))
    return `${unknown}, and needs ${lacking.map((key) => `"${key}"`).join(" or ")}`;
  return lacking.length === 0 ? unknown : undefined;
}

/**
 * ": did you mean …?" naming the key of `defined` (sinks, models) that `name` most likely means, or
 * "": two edits from one of four letters or more, or another of any length in another case (two
 * edits from `ci` would be any sink of two letters).
 */
function meantKey(name: string, defined: Readonly<Record<string, unknown>> | undefined): string {
  const keys = Object.keys(defined ?? {});
  const meant =
    closestName(
      name,
      keys.filter((key) => key.length >= 4),
    ) ?? keys.find((key) => key.toLowerCase() === name.toLowerCase());
  return meant === undefined ? "" : `: did you mean ${JSON.stringify(meant)}?`;
}

/**
 * The `where` operator a key not among them most likely means: two edits from one of four letters
 * or more (`regx`, `exist`, `startswith`), or `in` and `not` in another case. Two edits from `in`
 * would be any key of two letters. A key whose value is a condition is a field written nested
 * (MultiEdit's `"edits": {"contains": …}`, two edits from `exists`), unless `not` is meant, the
 * one operator that takes a condition. None the condition (`held`) has already: `"regx"` beside
 * `"regex"` renamed so would be `"regex"` twice.
 */
function meantOperator(key: string, value: unknown, held: unknown): string | undefined {
  const absent = WHERE_OPERATORS.filter((op) => !valueAt(held, [op]).present);
  const near =
    closestName(
      key,
      absent.filter((op) => op.length >= 4),
    ) ?? absent.find((op) => op.toLowerCase() === key.toLowerCase());
  const operators: readonly string[] = WHERE_OPERATORS;
  const condition = isRecord(value) && Object.keys(value).some((k) => operators.includes(k));
  return condition && near !== "not" ? undefined : near;
}

/**
 * A `regex` with its flags beside it (`"flags": "i"`, as JavaScript's RegExp takes them), written
 * with them inside, as a leading group RE2 reads (`(?i)`); undefined for any other condition.
 */
function flagsInside(held: unknown): string | undefined {
  if (!isRecord(held) || typeof held.regex !== "string" || typeof held.flags !== "string") return undefined;
  return `{"regex": ${JSON.stringify(withFlagsInside(held.regex, held.flags))}}`;
}

/**
 * The operator a key negates by its name (`notin`, `not_equals`, `notContains`), as other query
 * languages write a negation in one key; a where condition writes it as `not` around the
 * operator. Such a key is an operator meant, not a field nested in the condition: its dotted
 * path would name a field no event has.
 */
function negatedOperator(key: string): string | undefined {
  const negated = /^not[_-]?(.+)$/i.exec(key)?.[1]?.toLowerCase();
  return WHERE_OPERATORS.find((op) => op !== "not" && op.toLowerCase() === negated);
}

/** What a form that refused a value by its type expected, as a message names it. */
function expectedKinds(errors: readonly z.core.$ZodIssue[]): string[] {
  return errors.flatMap((e) =>
    e.code === "invalid_union"
      ? e.errors.flatMap(expectedKinds)
      : e.code === "invalid_type"
        ? [KIND_NAMES[e.expected] ?? e.expected]
        : [],
  );
}

const KIND_NAMES: Readonly<Record<string, string>> = {
  string: "a string",
  number: "a number",
  int: "a whole number",
  boolean: "true or false",
  null: "null",
  array: "a list",
  object: "an object",
  record: "an object",
};

/**
 * Whether a value at `path` of a policy may be a secret (a token, a header, a URL whose path or
 * query is a credential, a key): a message about it names its kind and never quotes it, since a
 * load error is logged (serve, a SIGHUP reload, Lambda, the Worker).
 */
function mayHoldSecret(path: readonly PropertyKey[]): boolean {
  return path.some((key) => typeof key === "string" && SECRET_KEYS.has(key));
}

/** The keys whose values, or values inside them, may be secrets. */
const SECRET_KEYS: ReadonlySet<string> = new Set([
  "tokens",
  "allowedHttpHookUrls",
  "url",
  "headers",
  "secret",
  "token",
  "apiKey",
]);

/**
 * A value of the wrong type: what it must be, and, when it is that value written another way
 * (`"5000"` for 5000, `"false"` for false, `"eng-slack"` for a list of one), what to write. A value
 * where a secret may be written (`secret`) is named by its kind, never quoted.
 */
export function wrongType(expected: string, value: unknown, secret = false): string {
  const kind = KIND_NAMES[expected] ?? expected;
  const number = typeof value === "string" && value.trim() !== "" ? Number(value) : Number.NaN;
  if ((expected === "number" || expected === "int") && Number.isFinite(number))
    return expected === "int" && !Number.isInteger(number)
      ? `must be ${kind}, not ${JSON.stringify(value)}`
      : `must be ${kind}: write ${number}, without quotes`;
  if ((expected === "number" || expected === "int") && typeof value === "number" && !Number.isFinite(value))
    return "is too large a number: past about 1.8e308 it reads as infinity; write a smaller one";
  if (expected === "boolean" && (value === "true" || value === "false"))
    return `must be ${kind}: write ${value}, without quotes`;
  // Of a string, not of a number: a list's items may be numbers (`retryScheduleSeconds`).
  if (expected === "array" && typeof value === "string" && !Number.isFinite(number))
    return secret
      ? `must be ${kind}: write the string inside [ ] for a list of one`
      : `must be ${kind}: write [${JSON.stringify(value)}] for a list of one`;
  const quoted = typeof value === "string" || typeof value === "number";
  return `must be ${kind}, not ${secret && quoted ? (KIND_NAMES[typeof value] ?? "a number") : valueKind(value)}`;
}

/** A value as a message names it: a short one as written, a long one by its kind. */
function valueKind(value: unknown): string {
  if (Array.isArray(value)) return "a list";
  if (value !== null && typeof value === "object") return "an object";
  // A number past a double's range (`1e400`) parses as infinity, which JSON.stringify writes `null`.
  if (typeof value === "number" && !Number.isFinite(value))
    return "a number too large to read (it reads as infinity)";
  const written = JSON.stringify(value) ?? String(value);
  if (written.length <= 40) return written;
  return typeof value === "string" ? "a string" : (KIND_NAMES[typeof value] ?? typeof value);
}

function issueMessage(issue: z.core.$ZodIssue): string {
  switch (issue.code) {
    case "unrecognized_keys":
      return `unknown key${issue.keys.length > 1 ? "s" : ""} ${issue.keys.map((k) => `"${k}"`).join(", ")}`;
    case "invalid_union":
      return "does not match any of the accepted forms";
    case "invalid_key": {
      // A map's key its schema refuses (an empty sink, model, where or header name).
      const inner = issue.issues[0];
      const key = JSON.stringify(String(issue.path.at(-1) ?? ""));
      return `the key ${key} ${inner === undefined ? "is not accepted" : issueMessage(inner)}`;
    }
    case "invalid_value":
      return `must be ${issue.values.length > 1 ? "one of " : ""}${issue.values.map((v) => JSON.stringify(v)).join(", ")}`;
    case "invalid_type":
      return issue.message === "Invalid input" ? `expected ${issue.expected}` : issue.message;
    case "too_small":
      if (issue.message !== "Invalid input") return issue.message;
      return `must be ${issue.inclusive ? "at least" : "greater than"} ${String(issue.minimum)}`;
    case "too_big":
      if (issue.message !== "Invalid input") return issue.message;
      return issue.origin === "array"
        ? `must list at most ${String(issue.maximum)}`
        : `must be ${issue.inclusive ? "at most" : "less than"} ${String(issue.maximum)}`;
    default:
      return issue.message;
  }
}

export function jsonPath(path: readonly PropertyKey[]): string {
  let out = "$";
  for (const key of path) {
    if (typeof key === "number") out += `[${key}]`;
    else if (typeof key === "string" && /^[A-Za-z_$][\w$]*$/.test(key)) out += `.${key}`;
    else out += `[${JSON.stringify(String(key))}]`;
  }
  return out;
}

function compileRules(document: PolicyDocument, issues: PolicyIssue[]): CompiledRule[] {
  const seen = new Map<string, string>();
  const compiled: CompiledRule[] = [];
  document.rules.forEach((rule, index) => {
    const path = `$.rules[${index}]`;
    const repeated = repeatedId(seen, rule.id, path);
    if (repeated) issues.push(repeated);
    const result = compileRule(rule, index, path, document);
    if (result.ok) compiled.push(result.value);
    else issues.push(...result.error);
  });
  return compiled;
}

/**
 * The problem of a rule whose id an earlier rule has, or undefined (and the id noted as seen).
 * The first rule with the id is the one named: the same message whatever else is wrong.
 */
function repeatedId(seen: Map<string, string>, id: string, path: string): PolicyIssue | undefined {
  const before = seen.get(id);
  if (before === undefined) {
    seen.set(id, path);
    return undefined;
  }
  return { severity: "error", path: `${path}.id`, message: `"${id}" is already the id of ${before}` };
}

function compileRule(
  rule: RuleDocument,
  index: number,
  path: string,
  document: PolicyDocument,
): Result<CompiledRule, PolicyIssue[]> {
  const issues: PolicyIssue[] = [];
  const error = (at: string, message: string) =>
    issues.push({ severity: "error", path: `${path}${at}`, message });

  const matcher = compileMatcher(rule.matcher);
  if (!matcher.ok) error(".matcher", matcher.error);

  let ifRules: PermissionRule[] | undefined;
  if (rule.if !== undefined) {
    const sources = typeof rule.if === "string" ? [rule.if] : rule.if;
    ifRules = [];
    sources.forEach((source, i) => {
      const parsed = parsePermissionRule(source);
      if (parsed.ok) ifRules?.push(parsed.value);
      else error(typeof rule.if === "string" ? ".if" : `.if[${i}]`, parsed.error);
    });
  }

  let where: Predicate[] = [];
  if (rule.where !== undefined) {
    const compiled = compileWhere(rule.where);
    if (compiled.ok) where = compiled.value;
    else
      for (const issue of compiled.error) error(jsonPath(["where", ...issue.path]).slice(1), issue.message);
  }

  const action = ruleAction(rule, error);
  for (const [i, sink] of (rule.notify ?? []).entries()) {
    if (!document.sinks || !Object.hasOwn(document.sinks, sink)) {
      error(
        `.notify[${i}]`,
        `names the sink "${sink}", which $.sinks does not define${meantKey(sink, document.sinks)}`,
      );
    }
  }
  if (rule.prompt && (!document.models || !Object.hasOwn(document.models, rule.prompt.model))) {
    const model = rule.prompt.model;
    error(
      ".prompt.model",
      `names the model "${model}", which $.models does not define${meantKey(model, document.models)}`,
    );
  }

  if (issues.length > 0 || !matcher.ok || !action) return err(issues);
  // An event named twice is one event: the rule applies once (its reason, notifications and
  // remote calls are not doubled).
  const events = typeof rule.on === "string" ? [rule.on] : [...new Set(rule.on)];
  return ok({
    id: rule.id,
    index,
    path,
    events: events.includes("*") ? "*" : events,
    matcher: matcher.value,
    ifRules,
    ifWords: ifWordsOf(ifRules),
    where,
    teams: rule.teams ? new Set(rule.teams) : undefined,
    mode: rule.mode ?? "enforce",
    action,
    notify: rule.notify ?? [],
    document: rule,
  });
}

function ifWordsOf(ifRules: readonly PermissionRule[] | undefined): readonly string[] | undefined {
  const words = (ifRules ?? []).map(commandWordOf);
  return words.length > 0 && words.every((w) => w !== undefined) ? (words as string[]) : undefined;
}

function ruleAction(
  rule: RuleDocument,
  error: (at: string, message: string) => void,
): RuleAction | undefined {
  const named = RULE_ACTIONS.flatMap((group) => group.find((key) => rule[key] !== undefined) ?? []);
  if (named.length > 1) {
    error(
      "",
      `has ${named.join(" and ")}; a rule takes at most one action (decide, context, prompt or forward)`,
    );
    return undefined;
  }
  if (rule.decide === undefined) {
    if (rule.reason !== undefined) error(".reason", "goes with decide; this rule has no decide");
    if (rule.updatedInput !== undefined) error(".updatedInput", "goes with decide; this rule has no decide");
    // A context rule sends it; a prompt, forward or notify rule never would.
    if (rule.context === undefined && rule.systemMessage !== undefined)
      error(".systemMessage", "goes with decide or context; this rule has neither");
  }
  if (rule.decide !== undefined) {
    return {
      kind: "decide",
      decision: rule.decide,
      reason: rule.reason,
      context: rule.context,
      systemMessage: rule.systemMessage,
      updatedInput: rule.updatedInput,
    };
  }
  if (rule.context !== undefined)
    return { kind: "context", text: rule.context, systemMessage: rule.systemMessage };
  if (rule.prompt) return { kind: "prompt", prompt: rule.prompt };
  if (rule.forward) return { kind: "forward", forward: rule.forward };
  if (rule.notify && rule.notify.length > 0) return { kind: "notify" };
  error("", "does nothing: give it decide, context, prompt, forward or notify");
  return undefined;
}

/**
 * The digests of "", "\n" and "\r\n": what `sha256sum` gives for an unset variable piped with
 * `printf %s` or `echo`. The gateway refuses an empty token before comparing, so none can match.
 */
const NO_TOKEN_DIGESTS: ReadonlySet<string> = new Set([
  "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
  "01ba4719c80b6fe911b091a7c05124b64eeece964e09c058ef8f9805daca546b",
  "7eb70257593da06f682a3ddda54a9d260d4fc514f645237f5ca74b08f8da61a6",
]);

/** Each token read, by its place in the file; a hole (one that failed its schema) stays one. */
async function resolveTokens(
  documents: readonly (TokenDocument | undefined)[],
  deps: PolicyDeps,
  warnings: PolicyIssue[],
): Promise<(TeamToken | undefined)[]> {
  const tokens: (TeamToken | undefined)[] = [];
  for (const [i, token] of documents.entries()) {
    if (token === undefined) {
      tokens.push(undefined);
      continue;
    }
    if ("sha256" in token) {
      if (NO_TOKEN_DIGESTS.has(token.sha256)) {
        warnings.push({
          severity: "warning",
          path: `$.auth.tokens[${i}].sha256`,
          message: `is the SHA-256 of no token (an empty or unset variable was hashed), so team "${token.team}" cannot authenticate with it: hash the token itself with printf %s "$TOKEN" | hookgate token hash`,
        });
      }
      tokens.push({ team: token.team, sha256: token.sha256, source: "sha256" });
      continue;
    }
    // Trimmed as the presented token is: a secret stored with `echo` ends in a newline.
    const raw = deps.env(token.env);
    const value = raw?.trim();
    if (value !== raw && value) {
      warnings.push({
        severity: "warning",
        path: `$.auth.tokens[${i}].env`,
        message: `the value of ${token.env} has spaces or a newline around it; they are not part of the token`,
      });
    }
    if (value === undefined || value === "") {
      warnings.push({
        severity: "warning",
        path: `$.auth.tokens[${i}].env`,
        message: `${variableNamedHere(token.env, "the variable ")} is not set, so team "${token.team}" cannot authenticate with it`,
        unsetVariable: token.env,
      });
    }
    tokens.push({
      team: token.team,
      sha256: value ? await deps.sha256(value) : undefined,
      source: token.env,
    });
  }
  return tokens;
}

/** A token listed for two teams would authenticate as whichever comes first: refused. */
function sharedTokens(tokens: readonly (TeamToken | undefined)[]): PolicyIssue[] {
  const first = new Map<string, number>();
  const problems: PolicyIssue[] = [];
  tokens.forEach((token, i) => {
    if (token?.sha256 === undefined) return;
    const before = first.get(token.sha256);
    if (before === undefined) first.set(token.sha256, i);
    else if (tokens[before]?.team !== token.team)
      problems.push({
        severity: "error",
        path: `$.auth.tokens[${i}]`,
        message: `is the same token as $.auth.tokens[${before}], of team "${tokens[before]?.team}": a token names one team`,
      });
  });
  return problems;
}

/**
 * Shorter values are not scrubbed: a value of a few characters ("prod", "1", "true") also
 * occurs in text that has nothing to do with it, and masking every occurrence would garble logs
 * and answers, while a secret that short is guessable whether or not it is masked.
 */
export const MIN_SECRET_CHARS = 8;
/** A URL path segment or query this long is a secret of its own (a webhook token, a signature). */
const SECRET_URL_PART_CHARS = 16;

/**
 * The credential a forward header's value holds written inline, not interpolated from `$VAR`:
 * the value after a `Bearer`, `Basic` or `Token` scheme, or the whole value of a header named
 * ending in key, token, secret, signature, auth, authorization, password, passphrase or
 * credentials, or `Cookie` (`X-Hook-Auth`, `X-Api-Pass`; not `X-Auth-Scheme`). `check` warns
 * about each; the gateway scrubs it from what a downstream server echoes back.
 */
export function inlineHeaderSecret(header: string, value: string): string | undefined {
  const scheme = /^(?:bearer|basic|token)\s+([^$\s]+)/i.exec(value);
  if (scheme) return scheme[1];
  return /^cookie$|(?:key|token|secret|signature|auth|authorization|password|passwd|pass|passphrase|credentials?)$/i.test(
    header,
  ) && !value.includes("$")
    ? value
    : undefined;
}

/** The values for `Policy.secrets`: distinct, long enough, longest first. */
function collectSecrets(document: PolicyDocument, env: EnvReader): readonly string[] {
  const found = new Set<string>();
  // Also as a header sends it: without CR, LF and NUL (egress `outboundHeaders`) and the
  // whitespace around it, which HTTP drops. A key file's last newline is never sent, and a
  // server that quotes the key it got quotes it without one. And without the characters a paste
  // from a web page brings along (a zero-width space, a direction mark, a BOM): the service the
  // value opens knows the token without them, and a server or model that quotes it so was not
  // masked, in the agent's texts or a log line.
  const add = (value: string | undefined) => {
    if (value === undefined) return;
    for (const form of [value, value.replace(/[\r\n\0]/g, "").trim(), withoutControls(value).trim()])
      if (form.length >= MIN_SECRET_CHARS) found.add(form);
  };
  // A webhook URL's secret is in its path, and a receiver that echoes what it was called on
  // quotes the path alone. The path's long segments and a long query are secret values of their
  // own; short segments (`v1`, `hooks`, `services`) are not, or every mention of them would be
  // masked too.
  const addUrl = (value: string | undefined) => {
    add(value);
    const url = value === undefined ? undefined : parseHttpUrl(value);
    if (url === undefined) return;
    for (const segment of url.pathname.split("/")) if (segment.length >= SECRET_URL_PART_CHARS) add(segment);
    if (url.search.length > SECRET_URL_PART_CHARS) add(url.search.slice(1));
  };
  // Of another inline URL (a webhook sink's, a forward's, a model's), the path segments and query
  // values that look random and the query values named for a credential; the URL itself is no
  // secret.
  const addSecretParts = (value: string | undefined) => {
    for (const part of secretUrlParts(value)) add(part);
  };
  // Every `env:` reference, wherever the schema lets one stand: new fields are covered as added.
  // A URL's random-looking parts too, as an inline URL's are: a query's token alone (a judge's
  // `?code=…`) is quoted back as often as the query, and moving the URL into a variable must
  // not leave it unscrubbed.
  const walk = (value: unknown, depth: number): void => {
    if (typeof value === "string") {
      if (value.startsWith("env:")) {
        const resolved = env(value.slice(4));
        addUrl(resolved);
        addSecretParts(resolved);
      }
    } else if (typeof value === "object" && value !== null && depth < 32) {
      for (const item of Object.values(value)) walk(item, depth + 1);
    }
  };
  walk(document, 0);
  for (const token of document.auth?.tokens ?? []) if ("env" in token) add(env(token.env));
  // What a forward header may interpolate: names in both its rule's and the global allowlist.
  const global = new Set(document.egress?.httpHookAllowedEnvVars ?? []);
  for (const rule of document.rules)
    for (const name of rule.forward?.allowedEnvVars ?? []) if (global.has(name)) add(env(name));
  // Inline secrets (`check` warns about them) are sent too, so a peer may echo them as well.
  const inline = (value: string | undefined) => (value?.startsWith("env:") ? undefined : value);
  for (const model of Object.values(document.models ?? {})) {
    add(inline(model.apiKey));
    addSecretParts(model.url);
  }
  for (const rule of document.rules) {
    for (const [header, value] of Object.entries(rule.forward?.headers ?? {}))
      add(inlineHeaderSecret(header, value));
    addSecretParts(rule.forward?.url);
  }
  for (const sink of Object.values(document.sinks ?? {})) {
    if (sink.type === "webhook") add(inline(sink.secret));
    if (sink.type === "github-dispatch") add(inline(sink.token));
    // A Slack or Discord webhook URL is itself a secret (`check` warns when it is inline).
    if (sink.type === "slack" || sink.type === "discord") addUrl(inline(sink.url));
    else addSecretParts(inline(sink.url));
  }
  // Longest first, so a secret that contains another is replaced whole.
  return Object.freeze([...found].sort((a, b) => b.length - a.length));
}

/**
 * The path segments and query values of a URL that look random (a webhook's token, a signature),
 * and the query values named for a credential: policy secrets, and what makes `check` call an
 * inline URL a secret.
 */
export function secretUrlParts(value: string | undefined): string[] {
  const url = value === undefined ? undefined : parseHttpUrl(value);
  if (url === undefined) return [];
  const parts = [...url.pathname.split("/"), ...url.searchParams.values()].filter(looksRandom);
  // A query parameter named for a credential holds one however plain it reads (`?api_key=`,
  // `?sig=`, `?code=`): a receiver that quotes the key it was sent quotes that value alone.
  for (const [name, part] of url.searchParams) if (CREDENTIAL_PARAM.test(name)) parts.push(part);
  return parts;
}

/**
 * A query parameter's name that says its value is a credential (`token`, `api_key`,
 * `X-Amz-Signature`, `sig`, `code`, `auth_code`). A `code` with another word before it is no
 * credential (`country_code`, `status_code`): its value, masked in every log line, would be too.
 */
const CREDENTIAL_PARAM =
  /(?:^|[-_.])(?:token|key|secret|sig|signature|pass|password|passwd|pwd|auth|credentials?)$|^(?:(?:access|api|auth|authorization|secret|session)[-_]?)?(?:token|key|secret|code)$|(?:apikey|accesstoken|authtoken)$/i;

/** A UUID, or 16 characters or more with a digit, a letter and hardly any punctuation (not `gpt-4o-2024-08-06`). */
function looksRandom(part: string): boolean {
  if (part.length < SECRET_URL_PART_CHARS) return false;
  if (/^[0-9a-f]{8}(?:-[0-9a-f]{4}){3}-[0-9a-f]{12}$/i.test(part)) return true;
  return /\d/.test(part) && /[a-z]/i.test(part) && part.replace(/[a-z0-9]/gi, "").length <= 2;
}

function parseHttpUrl(text: string): URL | undefined {
  if (!/^https?:\/\//i.test(text)) return undefined;
  try {
    return new URL(text);
  } catch {
    return undefined;
  }
}

/**
 * `"env:"` followed by no name (an error), or by what is no portable variable name
 * (`env:SLACK-URL`, `env:1KEY`: a warning). A shell cannot export such a name, nor Lambda set
 * it, but a process given it another way (`env`, a container's settings) holds it, and a policy
 * that loaded with it must go on loading: refused, every tool call would be denied after an
 * upgrade. A token's `env` is refused so, as it always was. The value is not repeated: what
 * follows `env:` may be the secret itself.
 */
function badEnvNames(document: PolicyDocument): PolicyIssue[] {
  const fields: PropertyKey[][] = [
    ...Object.keys(document.models ?? {}).flatMap((name) => [
      ["models", name, "apiKey"],
      ["models", name, "url"],
    ]),
    ...Object.entries(document.sinks ?? {}).flatMap(([name, sink]) =>
      SINK_ENV_FIELDS[sink.type].map((field) => ["sinks", name, field]),
    ),
    ...(Array.isArray(document.rules) ? document.rules : []).map((_, i) => ["rules", i, "forward", "url"]),
  ];
  return fields.flatMap((path) => {
    const value = valueAt(document, path).at;
    if (typeof value !== "string" || !value.startsWith("env:") || ENV_NAME.test(value.slice(4))) return [];
    const message =
      value === "env:"
        ? '"env:" names no variable: write "env:NAME" with the variable that holds the value'
        : `"env:" should be followed by ${ENV_NAME_RULE}; no shell can export this one`;
    return [
      {
        // A forward url read so is new: one written "env:" loaded before (and always failed).
        severity: value === "env:" && path[0] !== "rules" ? ("error" as const) : ("warning" as const),
        path: jsonPath(path),
        message,
      },
    ];
  });
}

const HEADER_VAR_NAME_RULE =
  "a name a header's $VAR reads: upper-case letters, digits and _, not starting with a digit";

/**
 * A name in `egress.httpHookAllowedEnvVars` or a forward's `allowedEnvVars` that no header's
 * `$VAR` names (`MY-TOKEN`, `$TOKEN`, `env:TOKEN`, `my_token`): no header ever reads it, so the
 * header goes out empty. A warning, as for a sink's `env:` name: a policy that loaded with it
 * must go on loading. These are names, not secrets, so the one meant is written out, when there
 * is one a header reads (not `my_token` for `$my_token`).
 */
function badAllowedEnvVars(document: PolicyDocument): PolicyIssue[] {
  const lists: [PropertyKey[], readonly string[] | undefined][] = [
    [["egress", "httpHookAllowedEnvVars"], document.egress?.httpHookAllowedEnvVars],
    ...document.rules.map((rule, i): [PropertyKey[], readonly string[] | undefined] => [
      ["rules", i, "forward", "allowedEnvVars"],
      rule.forward?.allowedEnvVars,
    ]),
  ];
  return lists.flatMap(([path, names]) =>
    (names ?? []).flatMap((name, i) => {
      if (HEADER_VAR_NAME.test(name)) return [];
      const meant = /^(?:env:|\$\{(.*)\}$|\$)(.*)$/s.exec(name);
      const bare = meant?.[1] ?? meant?.[2];
      const message = ENV_NAME.test(name)
        ? `has lower-case letters, and a header's $VAR names upper-case letters, digits and _ only (as Claude Code's does): no header reads this one; export the variable under an upper-case name`
        : bare !== undefined && HEADER_VAR_NAME.test(bare)
          ? `should be ${HEADER_VAR_NAME_RULE} (write "${bare}"); no header's $VAR reads this one`
          : `should be ${HEADER_VAR_NAME_RULE}; no shell can export this one, nor a header's $VAR read it`;
      return [{ severity: "warning" as const, path: jsonPath([...path, i]), message }];
    }),
  );
}

function compileModels(
  document: PolicyDocument,
  env: EnvReader,
  warnings: PolicyIssue[],
): Map<string, CompiledModel> {
  const models = new Map<string, CompiledModel>();
  for (const [name, m] of Object.entries(document.models ?? {})) {
    const apiKey = resolveSecret(m.apiKey, env);
    if (apiKey === undefined) {
      warnings.push({
        severity: "warning",
        path: jsonPath(["models", name, "apiKey"]),
        message: `${variableNamedHere(m.apiKey.slice(4))} is not set, so every call to model "${name}" fails and its rules answer with onError`,
        unsetVariable: m.apiKey.slice(4),
      });
    }
    // Read as a sink's `env:` URL is (POLICY.md, Secrets: every "env:NAME" value).
    const url = m.url === undefined ? undefined : resolveSecret(m.url, env);
    const unsetUrlVariable = m.url !== undefined && url === undefined ? m.url.slice(4) : undefined;
    if (unsetUrlVariable !== undefined) {
      warnings.push({
        severity: "warning",
        path: jsonPath(["models", name, "url"]),
        message: `${variableNamedHere(unsetUrlVariable)} is not set, so every call to model "${name}" fails and its rules answer with onError`,
        unsetVariable: unsetUrlVariable,
      });
    }
    models.set(name, {
      name,
      provider: m.provider,
      model: m.model,
      apiKey,
      url,
      unsetUrlVariable,
      cacheTtlSeconds: m.cacheTtlSeconds ?? 600,
      maxConcurrent: m.maxConcurrent ?? 8,
      dailyCallsPerTeam: m.dailyCallsPerTeam,
    });
  }
  return models;
}

/**
 * A forward rule's url read from the environment when it is `"env:NAME"` (POLICY.md, Secrets:
 * every "env:NAME" value), as a model's and a sink's are: a team server's address, or a token in
 * its query, kept out of the file. Unset, the rule's every call fails into its `onError`.
 */
function resolveForwardUrls(
  rules: readonly CompiledRule[],
  env: EnvReader,
  warnings: PolicyIssue[],
): CompiledRule[] {
  return rules.map((rule) => {
    const action = rule.action;
    // "env:" alone names nothing (badEnvNames warns): sent as written, as it always was.
    if (action.kind !== "forward" || !action.forward.url.startsWith("env:") || action.forward.url === "env:")
      return rule;
    const url = resolveSecret(action.forward.url, env);
    if (url !== undefined) return { ...rule, action: { ...action, forward: { ...action.forward, url } } };
    const variable = action.forward.url.slice(4);
    warnings.push({
      severity: "warning",
      path: `${rule.path}.forward.url`,
      message: `${variableNamedHere(variable)} is not set, so every call of rule "${rule.id}" fails and it answers with its onError`,
      unsetVariable: variable,
    });
    return { ...rule, action: { ...action, unsetUrlVariable: variable } };
  });
}

/**
 * A sink value that cannot work fails every delivery to the sink into the dead-letter queue: an
 * `env:` variable that is unset, or a webhook secret that is no Standard Webhooks secret. A
 * warning, not an error: a policy that fails to load denies every tool call, and one sink's
 * notifications are not worth that; `hookgate dlq replay` sends them once it is mended.
 */
function warnAboutSinkValues(document: PolicyDocument, env: EnvReader, warnings: PolicyIssue[]): void {
  for (const [name, sink] of Object.entries(document.sinks ?? {})) {
    const fails = `every delivery to sink "${name}" fails into the dead-letter queue`;
    for (const field of SINK_ENV_FIELDS[sink.type]) {
      const value: unknown = (sink as Record<string, unknown>)[field];
      if (typeof value !== "string") continue;
      const path = jsonPath(["sinks", name, field]);
      const resolved = resolveSecret(value, env);
      if (resolved === undefined) {
        const message = `${variableNamedHere(value.slice(4))} is not set, so ${fails} until it is`;
        warnings.push({ severity: "warning", path, message, unsetVariable: value.slice(4) });
        continue;
      }
      if (sink.type === "discord" && field === "url" && endsInSlackEndpoint(resolved)) {
        const what = value.startsWith("env:") ? `the URL in ${value.slice(4)}` : "the URL";
        const message = `${what} ends in /slack, Discord's Slack-compatible endpoint, which cannot keep a message from pinging; hookgate leaves /slack out and posts to the webhook itself: remove it`;
        warnings.push({ severity: "warning", path, message });
      }
      const problem = field === "secret" ? readWebhookKey(resolved) : undefined;
      if (typeof problem !== "string") continue;
      const what = value.startsWith("env:") ? `the value of ${value.slice(4)}` : "a webhook secret";
      warnings.push({ severity: "warning", path, message: `${what} ${problem}, so ${fails}` });
    }
  }
}

function createPolicy(
  document: PolicyDocument,
  hash: string,
  rules: CompiledRule[],
  tokens: TeamToken[],
  egress: EgressPolicy | undefined,
  models: ReadonlyMap<string, CompiledModel>,
  secrets: readonly string[],
): Policy {
  const index = indexRules(rules.filter((r) => r.mode !== "off"));
  return {
    document,
    hash,
    rules,
    auth: document.auth ? { tokens, onFailure: document.auth.onFailure ?? "deny" } : undefined,
    defaults: {
      onError: document.defaults?.onError ?? "allow",
      deadlineMs: document.defaults?.deadlineMs ?? DEFAULT_DEADLINE_MS,
      maxBodyBytes: document.defaults?.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES,
    },
    egress,
    models,
    secrets,
    rulesFor: index.rulesFor,
    candidates: index.candidates,
  };
}

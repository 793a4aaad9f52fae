/**
 * The policy file format (POLICY.md, version 1) as one zod schema. It is a public contract:
 * names here are never renamed. `hookgate schema` prints the JSON Schema generated from it.
 *
 * zod/mini keeps the Worker bundle small (DESIGN.md). Objects are strict: an unknown key in a
 * security policy is almost always a typo (`decison`), and ignoring it silently would let
 * traffic through that the author meant to stop.
 */
import * as z from "zod/mini";
import { ENV_NAME, ENV_NAME_RULE } from "./secret-ref.js";

export const DECISION_KINDS = ["allow", "deny", "ask", "defer", "block"] as const;
export type DecisionKind = (typeof DECISION_KINDS)[number];

export const FAIL_MODES = ["allow", "deny", "ask"] as const;
export type FailMode = (typeof FAIL_MODES)[number];

const nonEmpty = () => z.string().check(z.minLength(1, "must not be empty"));
const oneOrMany = () =>
  z.union([nonEmpty(), z.array(nonEmpty()).check(z.minLength(1, "must list at least one"))]);
const failMode = () => z.enum(FAIL_MODES);
const positiveInt = () => z.number().check(z.int(), z.positive());
const jsonLiteral = () => z.union([z.string(), z.number(), z.boolean(), z.null()]);

/** `where` operators: exactly one per object; `not` wraps any of them. */
export interface WhereOperator {
  equals?: unknown;
  regex?: string | undefined;
  glob?: string | undefined;
  contains?: unknown;
  startsWith?: string | undefined;
  in?: unknown[] | undefined;
  exists?: boolean | undefined;
  not?: WhereOperator | undefined;
}

export const WHERE_OPERATORS = [
  "equals",
  "regex",
  "glob",
  "contains",
  "startsWith",
  "in",
  "exists",
  "not",
] as const;

export const WhereOperatorSchema: z.ZodMiniType<WhereOperator> = z
  .strictObject({
    equals: z.optional(z.unknown()),
    regex: z.optional(z.string()),
    glob: z.optional(z.string()),
    contains: z.optional(z.unknown()),
    startsWith: z.optional(z.string()),
    in: z.optional(z.array(z.unknown())),
    exists: z.optional(z.boolean()),
    not: z.optional(z.lazy(() => WhereOperatorSchema)),
  })
  .check(
    z.refine((op) => Object.keys(op).length === 1, {
      message: `an operator object takes exactly one of: ${WHERE_OPERATORS.join(", ")}`,
    }),
  );

export const WhereSchema = z.record(nonEmpty(), z.union([jsonLiteral(), WhereOperatorSchema]));

export const PromptActionSchema = z.strictObject({
  text: nonEmpty(),
  model: nonEmpty(),
  timeoutMs: z.optional(positiveInt()),
  onError: z.optional(failMode()),
  stop: z.optional(z.boolean()),
});

export const ForwardActionSchema = z.strictObject({
  url: nonEmpty(),
  headers: z.optional(z.record(nonEmpty(), z.string())),
  allowedEnvVars: z.optional(z.array(nonEmpty())),
  timeoutMs: z.optional(positiveInt()),
  onError: z.optional(failMode()),
});

/**
 * A rule's actions, in groups: it takes at most one group, named by its first key it has (a
 * decide may carry a context). `hookgate check`'s "did you mean" offers no key of another group.
 */
export const RULE_ACTIONS = [["decide", "context"], ["prompt"], ["forward"]] as const;

export const RuleSchema = z.strictObject({
  id: nonEmpty(),
  description: z.optional(z.string()),
  on: oneOrMany(),
  matcher: z.optional(z.string()),
  if: z.optional(oneOrMany()),
  where: z.optional(WhereSchema),
  teams: z.optional(z.array(nonEmpty()).check(z.minLength(1, "must list at least one team"))),
  mode: z.optional(z.enum(["enforce", "shadow", "off"])),
  decide: z.optional(z.enum(DECISION_KINDS)),
  reason: z.optional(z.string()),
  context: z.optional(z.string()),
  systemMessage: z.optional(z.string()),
  updatedInput: z.optional(z.record(z.string(), z.unknown())),
  prompt: z.optional(PromptActionSchema),
  forward: z.optional(ForwardActionSchema),
  notify: z.optional(z.array(nonEmpty())),
});

export const TokenSchema = z.union([
  z.strictObject({
    team: nonEmpty(),
    sha256: z
      .string()
      .check(z.regex(/^[0-9a-f]{64}$/, "must be 64 lowercase hex characters (hookgate token hash)")),
  }),
  z.strictObject({
    team: nonEmpty(),
    env: z.string().check(z.regex(ENV_NAME, `must be ${ENV_NAME_RULE}`)),
  }),
]);

export const AuthSchema = z.strictObject({
  tokens: z.array(TokenSchema),
  onFailure: z.optional(failMode()),
});

/**
 * The largest `defaults.maxBodyBytes`: 64 MiB, Node's budget for the bodies one gateway holds
 * at once (src/http/read-body.ts BODY_BUDGET_BYTES). A body is read whole into memory, and one
 * of 700 MB no longer even fits in a string.
 */
export const MAX_BODY_BYTES_LIMIT = 64 * 1024 * 1024;

export const DefaultsSchema = z.strictObject({
  onError: z.optional(failMode()),
  deadlineMs: z.optional(positiveInt()),
  /** Largest request body read, in bytes (default 1 MiB). Larger ones answer with `onError`. */
  maxBodyBytes: z.optional(
    positiveInt().check(
      z.lte(
        MAX_BODY_BYTES_LIMIT,
        `must be at most ${MAX_BODY_BYTES_LIMIT} (64 MiB): a body is read whole into memory; hook bodies are far smaller`,
      ),
    ),
  ),
});

export const EgressSchema = z.strictObject({
  allowedHttpHookUrls: z.optional(z.array(z.string())),
  httpHookAllowedEnvVars: z.optional(z.array(nonEmpty())),
  allowCidrs: z.optional(z.array(nonEmpty())),
  denyCidrs: z.optional(z.array(nonEmpty())),
  allowNat64: z.optional(z.boolean()),
});

/**
 * The most retries a sink's `retryScheduleSeconds` may hold: a queue that counts every delivery
 * (SQS's `maxReceiveCount`, Cloudflare's `max_retries`) must allow this many retries.
 */
export const MAX_RETRY_SCHEDULE_LENGTH = 20;

/** Seconds to wait before each retry; its length is the number of retries (default: Svix's schedule). */
const retrySchedule = () =>
  z.optional(
    z.array(z.number().check(z.nonnegative(), z.lte(43_200))).check(z.maxLength(MAX_RETRY_SCHEDULE_LENGTH)),
  );

export const SinkSchema = z.discriminatedUnion("type", [
  z.strictObject({
    type: z.literal("slack"),
    url: nonEmpty(),
    link: z.optional(z.string()),
    retryScheduleSeconds: retrySchedule(),
  }),
  z.strictObject({
    type: z.literal("discord"),
    url: nonEmpty(),
    link: z.optional(z.string()),
    retryScheduleSeconds: retrySchedule(),
  }),
  z.strictObject({
    type: z.literal("webhook"),
    url: nonEmpty(),
    secret: z.optional(nonEmpty()),
    retryScheduleSeconds: retrySchedule(),
  }),
  z.strictObject({
    type: z.literal("github-dispatch"),
    // An owner or name of "." or "..": the URL parser would climb out of /repos/ with it.
    repo: z
      .string()
      .check(
        z.regex(/^(?!\.{1,2}\/)[\w.-]+\/(?!\.{1,2}$)[\w.-]+$/, "must be owner/name, neither of them . or .."),
      ),
    // GitHub refuses a longer event_type (422); one cut to fit would match no workflow's `types`.
    eventType: nonEmpty().check(
      z.maxLength(100, "must be at most 100 characters, GitHub's limit for a repository_dispatch event_type"),
    ),
    token: nonEmpty(),
    url: z.optional(nonEmpty()),
    retryScheduleSeconds: retrySchedule(),
  }),
]);

export const ModelSchema = z.strictObject({
  provider: z.enum(["anthropic", "openai"]),
  model: nonEmpty(),
  apiKey: nonEmpty(),
  url: z.optional(nonEmpty()),
  cacheTtlSeconds: z.optional(z.number().check(z.int(), z.nonnegative())),
  maxConcurrent: z.optional(positiveInt()),
  dailyCallsPerTeam: z.optional(positiveInt()),
});

export const PolicySchema = z.strictObject({
  $schema: z.optional(z.string()),
  version: z.literal(1),
  auth: z.optional(AuthSchema),
  defaults: z.optional(DefaultsSchema),
  egress: z.optional(EgressSchema),
  rules: z.array(RuleSchema),
  sinks: z.optional(z.record(nonEmpty(), SinkSchema)),
  models: z.optional(z.record(nonEmpty(), ModelSchema)),
});

export type PolicyDocument = z.infer<typeof PolicySchema>;
export type RuleDocument = z.infer<typeof RuleSchema>;
export type SinkDocument = z.infer<typeof SinkSchema>;
export type ModelDocument = z.infer<typeof ModelSchema>;
export type TokenDocument = z.infer<typeof TokenSchema>;
export type PromptAction = z.infer<typeof PromptActionSchema>;
export type ForwardAction = z.infer<typeof ForwardActionSchema>;

/** The JSON Schema of the policy file, generated (never hand-written). */
export function policyJsonSchema(): Record<string, unknown> {
  return z.toJSONSchema(PolicySchema, {
    io: "input",
    unrepresentable: "any",
    // WhereOperatorSchema's exactly-one refine has no JSON Schema form of its own.
    override: ({ zodSchema, jsonSchema }) => {
      if ((zodSchema as unknown) === WhereOperatorSchema)
        Object.assign(jsonSchema, { minProperties: 1, maxProperties: 1 });
      if ((zodSchema as unknown) === RuleSchema) Object.assign(jsonSchema, ruleActionKeywords());
    },
  }) as Record<string, unknown>;
}

/**
 * What the loader checks across a rule's keys (policy.ts, ruleAction), stated for an editor that
 * reads the JSON Schema: keys of at most one action group, and an action or a notify with a sink;
 * `reason` and `updatedInput` only beside `decide`, `systemMessage` beside `decide` or `context`.
 * No `anyOf` at the rule's own level: the "did you mean" of a mistyped key reads one as forms.
 */
function ruleActionKeywords(): Record<string, unknown> {
  const has = (...keys: string[]) => ({ required: keys });
  const twoGroups = RULE_ACTIONS.flatMap((group, i) =>
    RULE_ACTIONS.slice(i + 1).flatMap((other) => group.flatMap((a) => other.map((b) => has(a, b)))),
  );
  const acts = [
    ...RULE_ACTIONS.flat().map((key) => has(key)),
    { ...has("notify"), properties: { notify: { minItems: 1 } } },
  ];
  return {
    not: { anyOf: [...twoGroups, { not: { anyOf: acts } }] },
    dependentRequired: { reason: ["decide"], updatedInput: ["decide"] },
    dependentSchemas: { systemMessage: { anyOf: [has("decide"), has("context")] } },
  };
}

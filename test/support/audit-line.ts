/**
 * The audit line as README.md's "Audit log" documents it, field by field: what SIEM queries are
 * written against. Strict, so a field added or renamed without the README fails its parse; each
 * field the README names is a key here and the other way round (test/e2e/audit-schema.test.ts).
 */
import { z } from "zod";

/** An outcome or error code, as `EGRESS_TIMEOUT`. */
const CODE = z.string().regex(/^[A-Z][A-Z0-9_]*$/);

const pendingEntry = {
  rule: z.string(),
  action: z.enum(["prompt", "forward"]),
  outcome: CODE,
  ms: z.number().nonnegative(),
  model: z.string().optional(),
  onError: z.enum(["allow", "deny", "ask", "defer", "block"]).optional(),
  budget: z.strictObject({ used: z.number().int(), limit: z.number().int() }).optional(),
  attempts: z.number().int().optional(),
  detail: z.string().optional(),
};

const shadowEntry = {
  rule: z.string(),
  decision: z.enum(["allow", "deny", "ask", "defer", "block", "none"]),
  outcome: CODE.optional(),
  ms: z.number().nonnegative().optional(),
  model: z.string().optional(),
  detail: z.string().optional(),
};

const line = {
  time: z.iso.datetime(),
  level: z.literal("info"),
  msg: z.literal("decision"),
  decisionId: z.uuid(),
  policy: z.string().regex(/^[0-9a-f]{16}$/),
  team: z.string().optional(),
  client: z.enum(["claude-code", "deepcode", "deepagents", "deepagents-legacy"]).optional(),
  event: z.string().optional(),
  tool: z.string().optional(),
  sessionId: z.string().optional(),
  rules: z.array(z.string()),
  shadow: z.array(z.strictObject(shadowEntry)),
  pending: z.array(z.strictObject(pendingEntry)),
  notify: z.array(z.string()),
  decision: z.enum(["allow", "deny", "ask", "defer", "block", "none"]),
  clientDecision: z.literal("none").optional(),
  reason: z.string().optional(),
  answerTruncated: z.literal(true).optional(),
  error: CODE.optional(),
  clientLeft: z.literal(true).optional(),
  latencyMs: z.number().nonnegative(),
  toolInput: z.unknown().optional(),
  updatedInput: z.record(z.string(), z.unknown()).optional(),
  prompt: z.string().optional(),
};

export const AUDIT_LINE = z.strictObject(line);

/** Every name the schema knows, an entry's as `pending[].outcome`, as README.md's table names them. */
export const AUDIT_FIELD_NAMES: readonly string[] = [
  ...Object.keys(line),
  ...Object.keys(pendingEntry).map((k) => `pending[].${k}`),
  ...Object.keys(shadowEntry).map((k) => `shadow[].${k}`),
];

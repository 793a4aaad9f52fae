import { describe, expect, it } from "vitest";
import { loadPolicy } from "../../src/core/policy.js";
import { policyJsonSchema } from "../../src/core/policy-schema.js";
import { sha256 } from "../support/policy.js";

type Schema = Record<string, unknown>;

/**
 * Whether an object holds under the keywords a JSON Schema states across its keys (`required`,
 * `not`, `anyOf`, `dependentRequired`, `dependentSchemas`, and `minItems` of its properties), as
 * an editor reads them. The types of its values are the zod schema's, checked elsewhere.
 */
function holds(schema: Schema, value: Record<string, unknown>): boolean {
  const required = (schema.required as string[] | undefined) ?? [];
  if (!required.every((key) => Object.hasOwn(value, key))) return false;
  for (const [key, property] of Object.entries(
    (schema.properties as Record<string, Schema> | undefined) ?? {},
  )) {
    const items = value[key];
    const min = property.minItems as number | undefined;
    if (min !== undefined && Array.isArray(items) && items.length < min) return false;
  }
  if (schema.not !== undefined && holds(schema.not as Schema, value)) return false;
  if (schema.anyOf !== undefined && !(schema.anyOf as Schema[]).some((branch) => holds(branch, value)))
    return false;
  for (const [key, needs] of Object.entries((schema.dependentRequired as Record<string, string[]>) ?? {}))
    if (Object.hasOwn(value, key) && !needs.every((need) => Object.hasOwn(value, need))) return false;
  for (const [key, then] of Object.entries((schema.dependentSchemas as Record<string, Schema>) ?? {}))
    if (Object.hasOwn(value, key) && !holds(then, value)) return false;
  return true;
}

describe("the policy's JSON Schema", () => {
  it("states the loader's checks across a rule's keys, so an editor flags the rules the loader refuses", async () => {
    // A review: a rule with both decide and prompt, one with no action, or a reason without a
    // decide showed as valid in an editor reading the schema, and failed at load.
    const schema = policyJsonSchema();
    const ruleSchema = ((schema.properties as Record<string, Schema>).rules as Schema).items as Schema;
    const prompt = { text: "ok only if safe", model: "m" };
    const forward = { url: "https://policy.example/hook" };
    const rules: Record<string, unknown>[] = [
      { decide: "deny", reason: "no" },
      { decide: "allow", updatedInput: {}, systemMessage: "x", context: "c" },
      { context: "c", systemMessage: "x" },
      { prompt },
      { forward },
      { notify: ["s"] },
      { decide: "deny", notify: ["s"] },
      { decide: "deny", prompt },
      { context: "c", forward },
      { prompt, forward },
      {},
      { notify: [] },
      { reason: "no", notify: ["s"] },
      { updatedInput: {}, context: "c" },
      { systemMessage: "x", prompt },
    ];
    for (const fields of rules) {
      const rule = { id: "r", on: "PreToolUse", ...fields };
      const policy = JSON.stringify({
        version: 1,
        rules: [rule],
        sinks: { s: { type: "webhook", url: "https://hooks.example/in" } },
        models: { m: { provider: "anthropic", model: "claude-haiku-4-5", apiKey: "env:KEY" } },
      });
      const loaded = await loadPolicy(policy, { env: () => undefined, sha256 });
      expect(holds(ruleSchema, rule), JSON.stringify(fields)).toBe(loaded.ok);
    }
  });
});

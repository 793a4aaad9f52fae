import { createHash } from "node:crypto";
import { type LoadedPolicy, loadPolicy, type Policy, type PolicyIssue } from "../../src/core/policy.js";

export const sha256 = async (text: string) => createHash("sha256").update(text).digest("hex");

/** Loads a policy document for a test; throws with every problem when it is invalid. */
export async function policyFrom(document: unknown, env: Record<string, string> = {}): Promise<Policy> {
  return (await loaded(document, env)).policy;
}

export async function loaded(document: unknown, env: Record<string, string> = {}): Promise<LoadedPolicy> {
  const result = await loadPolicy(JSON.stringify(document), { env: (name) => env[name], sha256 });
  if (!result.ok) throw new Error(result.error.map((i) => `${i.path}: ${i.message}`).join("\n"));
  return result.value;
}

/** The problems of a policy expected to be invalid. */
export async function problemsOf(document: unknown): Promise<PolicyIssue[]> {
  const text = typeof document === "string" ? document : JSON.stringify(document);
  const result = await loadPolicy(text, { env: () => undefined, sha256 });
  if (result.ok) throw new Error("expected the policy to be invalid");
  return result.error;
}

/** Reads a policy file from disk and loads it; the Node and CLI way to get a Policy. */
import { readFile } from "node:fs/promises";
import { type LoadedPolicy, loadPolicy, type PolicyDeps, type PolicyIssue } from "../../core/policy.js";
import { err, ok, type Result } from "../../core/result.js";

/** The loaded policy with the text it came from (`serve` hands the same text to its delivery thread). */
export async function loadPolicyFile(
  path: string,
  deps: PolicyDeps,
): Promise<Result<LoadedPolicy & { readonly text: string }, PolicyIssue[]>> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (e) {
    const why = e instanceof Error ? e.message : String(e);
    return err([{ severity: "error", path: "$", message: `cannot read ${path}: ${why}` }]);
  }
  const loaded = await loadPolicy(text, deps);
  return loaded.ok ? ok({ ...loaded.value, text }) : loaded;
}

export function formatIssues(issues: readonly PolicyIssue[]): string {
  return issues.map((i) => `${i.severity}: ${i.path}: ${i.message}`).join("\n");
}

/** Reads a policy file from disk and loads it; the Node and CLI way to get a Policy. */
import { readFile } from "node:fs/promises";
import { errorMessage } from "../../core/errors.js";
import { type LoadedPolicy, loadPolicy, type PolicyDeps, type PolicyIssue } from "../../core/policy.js";
import { err, type Result } from "../../core/result.js";

export async function loadPolicyFile(
  path: string,
  deps: PolicyDeps,
): Promise<Result<LoadedPolicy, PolicyIssue[]>> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (e) {
    const why = errorMessage(e);
    return err([{ severity: "error", path: "$", message: `cannot read ${path}: ${why}` }]);
  }
  return loadPolicy(text, deps);
}

export function formatIssues(issues: readonly PolicyIssue[]): string {
  return issues.map((i) => `${i.severity}: ${i.path}: ${i.message}`).join("\n");
}

/** The policy file a command names, loaded as `serve` loads it, or said to be invalid. */
import { nodeSha256 } from "../adapters/hash/node-crypto.js";
import { invalidPolicyReport, loadPolicyFile } from "../adapters/policy-source/file.js";
import type { LoadedPolicy, PolicyIssue } from "../core/policy.js";
import { envReaderOf } from "../core/secret-ref.js";

/**
 * The policy at `path`; for a file that does not load, `exitCode`, once `say` was given what
 * every command says of it (invalidPolicyReport) with the problems it lists.
 */
export async function loadCommandPolicy(
  path: string,
  say: (report: string, issues: readonly PolicyIssue[]) => void,
  exitCode: number,
): Promise<LoadedPolicy | number> {
  const loaded = await loadPolicyFile(path, { env: envReaderOf(process.env), sha256: nodeSha256 });
  if (loaded.ok) return loaded.value;
  say(invalidPolicyReport(path, loaded.error), loaded.error);
  return exitCode;
}

/**
 * Whether a file that does not load as a policy is a `hookgate test` cases file (its problems
 * name a top-level "cases"): what a command given one in a policy's place says, after them.
 */
export function holdsCases(issues: readonly PolicyIssue[]): boolean {
  return issues.some(
    (issue) => issue.path === "$" && /^unknown keys? (?:"[^"]*", )*"cases"/.test(issue.message),
  );
}

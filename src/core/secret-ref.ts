/**
 * A policy's secret references. Its own module, without the policy compiler, so that `serve`'s
 * delivery thread can read its sinks' secrets without loading the compiler and zod.
 */
import type { EnvReader } from "./ports.js";
import type { ResolvedSink } from "./sinks.js";

/** `"env:NAME"` is read from the environment (secret bindings on Workers); anything else is the value. */
export function resolveSecret(value: string, env: EnvReader): string | undefined {
  if (!value.startsWith("env:")) return value;
  const resolved = env(value.slice(4));
  return resolved === "" ? undefined : resolved;
}

/**
 * The fields of each sink type whose value may be `"env:NAME"`: app/deliver.ts reads them before
 * each delivery, and a policy's load warns when one names an unset variable.
 */
export const SINK_ENV_FIELDS: { readonly [T in ResolvedSink["type"]]: readonly string[] } = {
  slack: ["url"],
  discord: ["url"],
  webhook: ["url", "secret"],
  "github-dispatch": ["token"],
};

/**
 * A policy's secret references. Its own module, without the policy compiler, so that `serve`'s
 * delivery thread can read its sinks' secrets without loading the compiler and zod.
 */
import type { EnvReader } from "./ports.js";

/** `"env:NAME"` is read from the environment (secret bindings on Workers); anything else is the value. */
export function resolveSecret(value: string, env: EnvReader): string | undefined {
  if (!value.startsWith("env:")) return value;
  const resolved = env(value.slice(4));
  return resolved === "" ? undefined : resolved;
}

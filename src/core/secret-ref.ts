/**
 * A policy's secret references. Its own module, without the policy compiler, so that `serve`'s
 * delivery thread can read its sinks' secrets without loading the compiler and zod.
 */
import type { EnvReader } from "./ports.js";
import type { ResolvedSink } from "./sinks.js";

/**
 * A reader over a map of variables (`process.env`, a test's): its own variables only. An
 * inherited name is no variable: `process.env["toString"]` is Object's function, and a token on
 * `env: "toString"` crashed the policy's load, or an `"env:constructor"` key was taken as set.
 */
export function envReaderOf(vars: Readonly<Record<string, string | undefined>>): EnvReader {
  return (name) => (Object.hasOwn(vars, name) ? vars[name] : undefined);
}

/**
 * A variable's name as environments hold them (POSIX's portable names, which Lambda's and
 * Workers' settings take too): what a token's `env` and every `"env:NAME"` of a policy must be.
 */
export const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
export const ENV_NAME_RULE =
  "an environment variable's name: letters, digits and _, not starting with a digit";

/**
 * A name a header's `$VAR` reads (forward.ts): Claude Code's own pattern, unchanged from 2.1.63
 * to 2.1.332 (clients.md §3.3). Upper case only, so a lower-case name is never read, however a
 * shell spells it.
 */
export const HEADER_VAR_NAME = /^[A-Z_][A-Z0-9_]*$/;

/**
 * How a message names the variable a token's `env` or an `"env:NAME"` value gives, or undefined
 * when it should not: a name no shell can export (`env:sk-ant-…`), or one that reads as a secret
 * rather than a name (letters of both cases with digits, or 20 characters or more in a row without
 * an `_`: a token's random part after its prefix, `hf_` and 34 letters, `shpat_` and 32 hex digits),
 * may be the secret itself, pasted where its variable's name belongs, and a policy's warnings reach
 * logs (variableNamedHere, variableShown).
 */
export function nameToShow(name: string): string | undefined {
  if (!ENV_NAME.test(name)) return undefined;
  const mixed = /[a-z]/.test(name) && /[A-Z]/.test(name) && /[0-9]/.test(name);
  return mixed || /[^_]{20}/.test(name) ? undefined : name;
}

/**
 * The variable a whole value `$NAME` or `${NAME}` names, as a shell or a .env file reads one,
 * where a message may show it (nameToShow); undefined for any other value.
 */
export function shellVariable(value: string | undefined): string | undefined {
  const match = value === undefined ? null : /^\$(?:\{([A-Za-z_]\w*)\}|([A-Za-z_]\w*))$/.exec(value);
  const name = match?.[1] ?? match?.[2];
  return name === undefined ? undefined : nameToShow(name);
}

/** A variable's name in a policy's warning, which has a path to say where it is: `prefix` and the name, or why not. */
export function variableNamedHere(name: string, prefix = ""): string {
  const shown = nameToShow(name);
  return shown === undefined
    ? "the variable named here (not repeated: it reads like a secret, pasted where a variable's name belongs)"
    : `${prefix}${shown}`;
}

/** A variable's name in a message said when a call or delivery fails, away from the policy's path. */
export function variableShown(name: string): string {
  return nameToShow(name) ?? "a variable whose name reads like a secret (not repeated; see hookgate check)";
}

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
  "github-dispatch": ["url", "token"],
};

/**
 * The raw key of a Standard Webhooks secret (`whsec_` and standard base64, or the base64 alone),
 * or what is wrong with it. A policy's load checks each secret with it, and signing uses it.
 */
export function readWebhookKey(secret: string): Uint8Array<ArrayBuffer> | string {
  const encoded = secret.startsWith("whsec_") ? secret.slice("whsec_".length) : secret;
  let binary: string;
  try {
    // `atob` is WHATWG forgiving-base64: missing padding is fine, URL-safe characters are not.
    binary = atob(encoded);
  } catch {
    return 'must be "whsec_" followed by standard base64';
  }
  if (binary.length === 0) return "is empty";
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return bytes;
}

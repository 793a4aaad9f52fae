/**
 * `hookgate egress-check URL [--policy FILE] [--allow GLOB]... [--resolve HOST:ADDR]...`:
 * judges one URL exactly as the egress module would, resolving but never connecting.
 * Prints one JSON line and exits 0 for allow, 1 for deny, 2 for a policy file that does not load
 * (what is wrong with it, as `check` says it) and for usage (from the caller).
 */
import { parseArgs } from "node:util";
import {
  createUndiciEgress,
  type ResolvedAddress,
  type Resolver,
  systemResolver,
} from "../adapters/egress/undici.js";
import { classifyAddress, compileAddressRules, isIpLiteral } from "../core/egress/address.js";
import { compileEgressPolicy } from "../core/egress/policy.js";
import { compileAllowlist } from "../core/egress/url.js";
import type { PolicyDocument } from "../core/policy-schema.js";
import { withoutUserinfo } from "../core/url-userinfo.js";
import { refuseEmpty } from "./arg-errors.js";
import type { Io } from "./cli.js";
import { loadCommandPolicy } from "./command-policy.js";
import { UsageError } from "./usage-error.js";

interface EgressCheckResult {
  readonly url: string;
  readonly decision: "allow" | "deny";
  readonly reason: string;
  readonly stage: string;
}

/** The command: the result's JSON line on stdout; a policy file that does not load on stderr. */
export async function egressCheckCommand(args: readonly string[], io: Io): Promise<number> {
  const { values, positionals } = parseArgs({
    args: [...args],
    allowPositionals: true,
    options: {
      policy: { type: "string" },
      allow: { type: "string", multiple: true },
      resolve: { type: "string", multiple: true },
    },
  });
  const [url] = positionals;
  if (!url || positionals.length > 1) throw new UsageError("egress-check takes one URL");

  // An empty --policy (an unset variable: `--policy "$POLICY"`) read as none judged the URL with
  // no allowlist, so a CI gate passed a URL the policy denies.
  refuseEmpty("--policy", values.policy, "give the policy file, or leave --policy out");
  let egress: PolicyDocument["egress"] = values.allow ? { allowedHttpHookUrls: [] } : undefined;
  if (values.policy !== undefined) {
    // Loaded as `serve` and `check` load it: a policy the gateway refuses (a repeated rule id,
    // a repeated key) must not pass here, its egress judged as if it would run.
    // Exit 2, not 1, which means "denied" and a CI gate must not confuse with it; and no usage,
    // which says nothing of a missing or invalid file.
    const loaded = await loadCommandPolicy(values.policy, io.err, 2);
    if (typeof loaded === "number") return loaded;
    egress = loaded.policy.document.egress;
  }
  if (values.allow) {
    refuseInvalidAllowGlobs(values.allow);
    egress = { ...egress, allowedHttpHookUrls: [...(egress?.allowedHttpHookUrls ?? []), ...values.allow] };
  }
  const result = await judgeUrl(url, egress, values.resolve ?? []);
  io.out(`${JSON.stringify(result)}\n`);
  return result.decision === "allow" ? 0 : 1;
}

/**
 * A usage error naming each `--allow` glob the gateway would refuse as a pattern, as given on the
 * command line: judged among the policy's patterns, it would be named by a policy path
 * (`$.egress.allowedHttpHookUrls[2]`) that is in no file.
 */
function refuseInvalidAllowGlobs(globs: readonly string[]): void {
  const errors = compileAllowlist(globs).errors.map(
    (e) => `--allow ${JSON.stringify(globs[e.index])}: ${e.message}`,
  );
  if (errors.length > 0) throw new UsageError(`an --allow glob is invalid:\n${errors.join("\n")}`);
}

/** The egress module's verdict on `url` under `egress`, with why; names in `resolve` answered so. */
async function judgeUrl(
  url: string,
  egress: PolicyDocument["egress"],
  resolve: readonly string[],
): Promise<EgressCheckResult> {
  const compiled = compileEgressPolicy(egress);
  // A pattern or range the gateway would refuse at load must not be dropped here: a deny range
  // left out would turn a CI gate's "deny" into "allow". Exit 2, like an invalid policy.
  const invalidEntries = compiled.errors.map((e) => `${e.path}: ${e.message}`);
  if (invalidEntries.length > 0)
    throw new UsageError(
      `the egress settings are invalid (the gateway refuses them at load):\n${invalidEntries.join("\n")}`,
    );
  const egressModule = createUndiciEgress({
    policy: () => compiled.policy,
    resolve: resolverWith(resolve),
  });
  try {
    const verdict = await egressModule.judge(url);
    if (verdict.ok) {
      return {
        url: verdict.value.url.href,
        decision: "allow",
        reason: `allowed: ${describeAddresses(verdict.value.addresses, egress?.allowCidrs)}`,
        stage: "address",
      };
    }
    // A URL no pattern matched: what check says of the patterns (a host-only one matches / only).
    // (A refused address's reason names the setting that opens it already.)
    const hint =
      verdict.error.code === "EGRESS_NOT_ALLOWLISTED"
        ? compiled.warnings.map((w) => `; ${w.path.replace(/^\$\.egress\./, "")} ${w.message}`).join("")
        : "";
    return {
      url: withoutUserinfo(url),
      decision: "deny",
      reason: `${verdict.error.code}: ${verdict.error.reason}${hint}`,
      stage: verdict.error.stage,
    };
  } finally {
    await egressModule.close();
  }
}

/**
 * Why each address passed: public, in a range the policy's `egress.allowCidrs` opens, or else a
 * NAT64 address whose IPv4 address is public (the policy's `egress.allowNat64`).
 */
function describeAddresses(addresses: readonly string[], allowCidrs: readonly string[] | undefined): string {
  const builtIn = compileAddressRules({}).rules;
  const opened = compileAddressRules({ allowCidrs }).rules;
  const why = (address: string) => {
    if (classifyAddress(address, builtIn).allowed) return "a public address";
    if (classifyAddress(address, opened).allowed) return "opened by egress.allowCidrs";
    return "a NAT64 address of a public one (egress.allowNat64)";
  };
  const [only] = addresses;
  if (addresses.length === 1 && only !== undefined) return `${only} is ${why(only)}`;
  return `every answer is allowed (${addresses.map((a) => `${a}: ${why(a)}`).join(", ")})`;
}

/**
 * Answers DNS for the names given with --resolve (curl style: split at the first colon, the
 * address with or without brackets, repeatable, names read as the URL's host is read, so case,
 * trailing dots and an IDN's spelling (`bücher.example`, `xn--bcher-kva.example`) do not
 * matter); other names go to the system resolver.
 */
function resolverWith(entries: readonly string[]): Resolver {
  const table = new Map<string, ResolvedAddress[]>();
  for (const entry of entries) {
    const colon = entry.indexOf(":");
    if (colon <= 0) throw new UsageError(`--resolve ${entry}: expected HOST:ADDR`);
    const host = normalizeHost(entry.slice(0, colon));
    if (host === undefined)
      throw new UsageError(`--resolve ${entry}: "${entry.slice(0, colon)}" is not a host name`);
    const address = entry.slice(colon + 1).replace(/^\[(.*)\]$/, "$1");
    if (!isIpLiteral(address)) throw new UsageError(`--resolve ${entry}: "${address}" is not an IP address`);
    table.set(host, [...(table.get(host) ?? []), { address, family: address.includes(":") ? 6 : 4 }]);
  }
  return async (hostname) => table.get(normalizeHost(hostname) ?? hostname) ?? systemResolver(hostname);
}

/**
 * A host name as the URL parser reads it (lower case, an IDN as punycode), without trailing
 * dots: the look-up asks for the URL's hostname, never for the name as it was typed.
 */
function normalizeHost(host: string): string | undefined {
  if (host === "" || /[/\\?#@\s]/.test(host)) return undefined;
  try {
    return new URL(`http://${host}/`).hostname.replace(/\.+$/, "");
  } catch {
    return undefined;
  }
}

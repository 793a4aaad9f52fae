/**
 * The egress section of a policy, compiled once: the URL allowlist and the address rules, plus
 * the one judgement both the Node connector and the Workers pre-check make on DNS answers.
 */
import type { PolicyDocument } from "../policy-schema.js";
import {
  type AddressRules,
  type AddressVerdict,
  addressRulesInput,
  classifyAddress,
  compileAddressRules,
} from "./address.js";
import { howToOpen } from "./open.js";
import type { EgressRefusal } from "./refusal.js";
import { type Allowlist, compileAllowlist } from "./url.js";

export interface EgressPolicy {
  readonly allowlist: Allowlist;
  readonly addresses: AddressRules;
}

export interface EgressIssue {
  readonly path: string;
  readonly message: string;
}

export function compileEgressPolicy(egress: PolicyDocument["egress"]): {
  policy: EgressPolicy;
  errors: EgressIssue[];
  warnings: EgressIssue[];
} {
  const urls = compileAllowlist(egress?.allowedHttpHookUrls);
  const addresses = compileAddressRules({
    allowCidrs: egress?.allowCidrs,
    denyCidrs: egress?.denyCidrs,
    allowNat64: egress?.allowNat64,
  });
  const at = (i: number) => `$.egress.allowedHttpHookUrls[${i}]`;
  return {
    policy: { allowlist: urls.allowlist, addresses: addresses.rules },
    errors: [
      ...urls.errors.map((e) => ({ path: at(e.index), message: e.message })),
      ...addresses.errors.map((e) => ({ path: `$.egress.${e.field}[${e.index}]`, message: e.message })),
    ],
    warnings: urls.warnings.map((w) => ({ path: at(w.index), message: w.message })),
  };
}

/**
 * What a policy without an `egress` section gets (Policy.egress undefined): no allowlist, the
 * default address rules. The egress adapters (and `check`'s lint) apply it, so such a policy's
 * load never loads the guard's code. Frozen: every such policy shares it.
 */
export const DEFAULT_EGRESS_POLICY: EgressPolicy = Object.freeze(compileEgressPolicy(undefined).policy);

/**
 * A name is refused whole when any of its answers is blocked (as Claude Code and
 * request-filtering-agent do): a mixed answer is how rebinding setups look, and only checked
 * addresses may ever be dialed. No answers is refused too.
 */
export function judgeAnswers(
  host: string,
  answers: readonly string[],
  rules: AddressRules,
): EgressRefusal | undefined {
  if (answers.length === 0) {
    return { code: "EGRESS_NO_ADDRESS", stage: "dns", reason: `${host} resolved to no address` };
  }
  for (const answer of answers) {
    const verdict = classifyAddress(answer, rules);
    if (!verdict.allowed) return addressRefusal(verdict, rules, host);
  }
  return undefined;
}

/**
 * An address the rules refused, as every runtime refuses it: the name it is an answer of (when it
 * is not an IP literal's own), why, and the setting that opens it (`allowCidrs`, `allowNat64`),
 * checked against the policy's own deny ranges, or why none should, as `egress-check` says it.
 */
export function addressRefusal(
  verdict: Extract<AddressVerdict, { allowed: false }>,
  rules: AddressRules,
  host?: string,
): EgressRefusal {
  const via =
    host === undefined || verdict.address === host ? "" : `${host} resolves to ${verdict.address}: `;
  const hint = howToOpen(verdict.address, verdict.range, addressRulesInput(rules));
  return {
    code: "EGRESS_BLOCKED_ADDRESS",
    stage: "address",
    reason: `${via}${verdict.reason}${hint}`,
    address: verdict.address,
    range: verdict.range,
  };
}

/**
 * Headers a policy may not set: `host` would choose another virtual host than the URL the
 * allowlist judged, the hop-by-hop ones belong to the connection the runtime manages, and
 * `content-length` is the body's own (one a policy sets makes undici refuse the request; Claude
 * Code drops it from an http hook's headers too).
 */
const CONNECTION_HEADERS: ReadonlySet<string> = new Set([
  "host",
  "content-length",
  "connection",
  "keep-alive",
  "proxy-connection",
  "transfer-encoding",
  "upgrade",
  "te",
  "trailer",
]);

/**
 * The headers an outbound request carries, on every runtime: none of CONNECTION_HEADERS, and
 * CR, LF and NUL removed from every value (header injection), whatever built it.
 */
export function outboundHeaders(headers: Readonly<Record<string, string>>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (!CONNECTION_HEADERS.has(name.toLowerCase())) out[name] = value.replace(/[\r\n\0]/g, "");
  }
  return out;
}

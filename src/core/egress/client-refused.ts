/**
 * The addresses Claude Code's and deepcode's http hooks refuse to connect to, found by the lookup
 * they give their connection (clients.md §2.3, deepcode's ssrfGuardedLookup): ipaddr.js's names
 * for 0/8, 10/8, 172.16/12, 192.168/16, 169.254/16, 100.64/10, ::, fc00::/7 and fe80::/10, also
 * IPv4-mapped or in NAT64's 64:ff9b::/96; and the cloud metadata addresses newer Claude Code adds.
 * Loopback is allowed. The agents' list, not the gateway's own (address.ts), which refuses more.
 */
import ipaddr from "ipaddr.js";

const CLIENT_REFUSED_RANGES: ReadonlySet<string> = new Set([
  "unspecified",
  "private",
  "linkLocal",
  "carrierGradeNat",
  "uniqueLocal",
]);
const CLIENT_REFUSED_ADDRESSES: ReadonlySet<string> = new Set(["168.63.129.16", "192.0.0.192"]);

/** The range `address` is in that the agents refuse (`cloud metadata` for those addresses), else undefined. */
export function clientRefusedRange(address: string): string | undefined {
  if (!ipaddr.isValid(address)) return undefined;
  let ip = ipaddr.process(address);
  if (ip.kind() === "ipv6" && ip.range() === "rfc6052") ip = new ipaddr.IPv4(ip.toByteArray().slice(-4));
  if (CLIENT_REFUSED_ADDRESSES.has(ip.toString())) return "cloud metadata";
  const range = ip.range();
  return CLIENT_REFUSED_RANGES.has(range) ? range : undefined;
}

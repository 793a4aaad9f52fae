/**
 * How a policy opens an address the egress guard refused, on purpose (a team's hook server on the
 * LAN, a local sink), for every address refusal (policy.ts `addressRefusal`) and `check`'s
 * warnings: the setting to add, checked against the policy's own rules, since a `denyCidrs`
 * entry wins over any `allowCidrs` one. No setting for a
 * cloud metadata address (what `check` warns an allowCidrs entry opens), none for an IPv6
 * address that carries an IPv4 one: it is opened through that IPv4 address or not at all, and
 * none for a link-local IPv6 one or a multicast or broadcast one, which no setting makes reachable,
 * and for 0.0.0.0 or :: the loopback address to write instead.
 */
import ipaddr from "ipaddr.js";
import { type AddressRulesInput, classifyAddress, compileAddressRules, metadataService } from "./address.js";
import type { RangeMatch } from "./refusal.js";

const NAT64_WELL_KNOWN = ipaddr.IPv6.parseCIDR("64:ff9b::/96");

/** `; to reach it on purpose, …` to append to a refusal's reason, or "". */
export function howToOpen(
  address: string | undefined,
  range: RangeMatch | undefined,
  egress: AddressRulesInput | undefined,
): string {
  if (address === undefined || !ipaddr.isValid(address)) return "";
  const unreachable = unreachableWhy(address);
  if (unreachable !== undefined) return `; ${unreachable}`;
  const unspecified = unspecifiedHint(address, egress);
  if (unspecified !== undefined) return unspecified;
  if (range?.rfc === "operator config") return ownDeny(range);
  const service = metadataService(address);
  if (service !== undefined) return `; it is ${service}, which no hook should reach`;
  const opening = settingFor(address);
  if (opening === undefined) return "";
  // What the policy would judge with the setting added: a deny range of its own may cover the
  // address too, behind the built-in range that refused it first.
  const rules = compileAddressRules({
    allowCidrs: [...(egress?.allowCidrs ?? []), ...(opening.cidr === undefined ? [] : [opening.cidr])],
    denyCidrs: egress?.denyCidrs,
    allowNat64: egress?.allowNat64 === true || opening.cidr === undefined,
  }).rules;
  const after = classifyAddress(address, rules);
  if (!after.allowed && after.range?.rfc === "operator config") {
    return `; ${opening.setting} would not open it: the policy's own deny range ${after.range.name} (${after.range.cidr}) covers it too, and no allowCidrs entry overrides a deny range, so narrow or remove that entry as well`;
  }
  return after.allowed ? `; ${opening.hint}` : "";
}

/**
 * fe80::/10 is reached only through the interface a zone id names (RFC 4007 §6; Linux refuses the
 * connect without one), and the pinned socket never has one: a URL cannot carry it (WHATWG URL
 * refuses `%25`) and Node's lookup gives a name's addresses without it. An allowCidrs entry, or a
 * narrower deny range, would only trade the refusal for a failed connect.
 */
const LINK_LOCAL_UNREACHABLE =
  "it is link-local: no connection reaches it without a zone id naming its interface (fe80::1%eth0), which neither a URL nor a name's address carries, so no egress setting opens it; use a routable address of the server, or a name that resolves to one";

/**
 * HTTP runs over TCP, which connects to one host: a multicast or broadcast destination is refused
 * by the kernel (ENETUNREACH, EACCES) whatever the policy allows.
 */
const NO_TCP =
  "HTTP runs over TCP, which reaches no multicast or broadcast address, so no egress setting opens it; use the server's own address";

/** Why no setting opens `address`, where none does. */
function unreachableWhy(address: string): string | undefined {
  const ip = ipaddr.parse(address);
  if (ip.kind() === "ipv6" && ip.range() === "linkLocal") return LINK_LOCAL_UNREACHABLE;
  // An IPv4-mapped address is dialed as the IPv4 address it carries (::ffff:224.0.0.251 is
  // 224.0.0.251 on the wire), so it is as unreachable as that one.
  const range = ipaddr.process(address).range();
  if (range === "multicast" || range === "broadcast") return `it is a ${range} address: ${NO_TCP}`;
  return undefined;
}

/**
 * 0.0.0.0 and :: are no server's address: a server listens on one to take connections on every
 * address of its machine (the URL a dev server prints), a DNS filter answers one for a name it
 * blocks, and a connection to one reaches the local host (Linux, macOS). Opening one opens this
 * machine under another name, and every name a filter blocks with it, so the loopback address is
 * the one to write and open.
 */
const LOOPBACK_FOR_UNSPECIFIED: ReadonlyMap<string, { readonly url: string; readonly address: string }> =
  new Map([
    ["0.0.0.0", { url: "127.0.0.1", address: "127.0.0.1" }],
    ["::", { url: "[::1]", address: "::1" }],
  ]);

/** The hint for 0.0.0.0 or :: (an IPv4-mapped 0.0.0.0 too), or undefined for any other address. */
function unspecifiedHint(address: string, egress: AddressRulesInput | undefined): string | undefined {
  const loopback = LOOPBACK_FOR_UNSPECIFIED.get(ipaddr.process(address).toString());
  if (loopback === undefined) return undefined;
  const why = `; it is the unspecified address, no server's own (a server listens on it to be reached at every address of its machine; a DNS filter answers it for a name it blocks), and opening it opens this machine under another name, so no egress setting should: write ${loopback.url} in the URL instead`;
  const opened = classifyAddress(loopback.address, compileAddressRules(egress ?? {}).rules).allowed;
  return opened
    ? `${why}, which the policy's egress.allowCidrs opens already`
    : `${why}${howToOpen(loopback.address, undefined, egress)}`;
}

function ownDeny(range: RangeMatch): string {
  return `; ${range.name} is the policy's own deny range, which no allowCidrs entry overrides: narrow or remove it to reach this address`;
}

interface Opening {
  /** What to do, as the hint says it. */
  readonly hint: string;
  /** The setting alone, for when the policy's own deny range would undo it. */
  readonly setting: string;
  /** The allowCidrs entry to add; none for allowNat64. */
  readonly cidr?: string;
}

/** The setting that opens one address: an allowCidrs entry, or allowNat64. */
function settingFor(address: string): Opening | undefined {
  const allow = (cidr: string, what = "it"): Opening => ({
    hint: `to reach it on purpose, open ${what} in the policy's egress.allowCidrs ("${cidr}")`,
    setting: `allowCidrs "${cidr}"`,
    cidr,
  });
  const ip = ipaddr.parse(address);
  if (ip.kind() === "ipv4") return allow(`${address}/32`);
  const v6 = ip as ipaddr.IPv6;
  if (v6.isIPv4MappedAddress()) return allow(`${v6.toIPv4Address().toString()}/32`, "its IPv4 address");
  if (v6.match(NAT64_WELL_KNOWN)) {
    // The NAT64 gateway reaches the IPv4 address inside: allowNat64 judges that one instead.
    const v4 = ipaddr.fromByteArray(v6.toByteArray().slice(12)).toString();
    return classifyAddress(v4, compileAddressRules({}).rules).allowed
      ? {
          hint: "to reach NAT64 addresses of public IPv4 ones, set the policy's egress.allowNat64",
          setting: "allowNat64",
        }
      : undefined;
  }
  const kind = v6.range();
  const compatible =
    v6.parts.slice(0, 6).every((p) => p === 0) && kind !== "loopback" && kind !== "unspecified";
  // NAT64 local-use, IPv4-translated, 6to4, Teredo, IPv4-compatible: an IPv4 address inside.
  if (compatible || ["rfc6052", "rfc6145", "6to4", "teredo"].includes(kind)) return undefined;
  return allow(`${address}/128`);
}

/**
 * The address half of the SSRF guard: judge one IP address against the special-purpose tables
 * (reference/ssrf.md §3) and the operator's CIDR lists. Pure, so the Node connector, the Lambda
 * client and the Workers pre-check all share it. Every refusal names the address, the range, its
 * name and its RFC or source (smokescreen's `classifyAddr` style).
 *
 * Input is what WHATWG URL (`hostname`, brackets stripped) or a resolver hands us. Anything else,
 * in particular a legacy IPv4 spelling like `127.1` or `0x7f.1`, is refused: WHATWG already
 * rewrites those to a dotted quad, so seeing one here means the URL parser was bypassed, and
 * classifying it ourselves is the parser-differential bug class (node `ip` CVE-2023-42282).
 */
import ipaddr from "ipaddr.js";
import type { RangeMatch } from "./refusal.js";

export interface AddressRulesInput {
  allowCidrs?: readonly string[] | undefined;
  denyCidrs?: readonly string[] | undefined;
  allowNat64?: boolean | undefined;
}

interface CompiledCidr {
  /** Its place in the operator's list. */
  readonly index: number;
  readonly kind: "ipv4" | "ipv6";
  readonly network: ipaddr.IPv4 | ipaddr.IPv6;
  readonly bits: number;
  readonly range: RangeMatch;
}

/** Compiled operator rules. Opaque to callers: build it with `compileAddressRules`. */
export interface AddressRules {
  readonly allow: readonly CompiledCidr[];
  readonly deny: readonly CompiledCidr[];
  readonly allowNat64: boolean;
}

export type AddressVerdict =
  | { readonly allowed: true; readonly address: string }
  | {
      readonly allowed: false;
      readonly address: string;
      readonly reason: string;
      readonly range?: RangeMatch;
    };

type CidrField = "allowCidrs" | "denyCidrs";

// ---------------------------------------------------------------------------------------------
// Tables, parsed once at module load.

/** How an IPv6 row is judged when it is the first row to match. */
type Ipv6Handling =
  | { readonly kind: "deny" }
  /** ::ffff:0:0/96: the low 32 bits are judged by the IPv4 table (RFC 4291 §2.5.5.2). */
  | { readonly kind: "mapped" }
  /** 64:ff9b::/96: denied, or with `allowNat64` the low 32 bits are judged by the IPv4 table. */
  | { readonly kind: "nat64" }
  /** Tunnelling prefixes: a relay or tunnel endpoint behind them reaches whatever IPv4 they embed. */
  | { readonly kind: "embeds"; readonly embedded: (ip: ipaddr.IPv6) => string };

interface Row<Ip> {
  readonly range: RangeMatch;
  readonly note: string | undefined;
  readonly network: Ip;
  readonly bits: number;
}

interface Ipv6Row extends Row<ipaddr.IPv6> {
  readonly handling: Ipv6Handling;
}

function ipv4Row(cidr: string, name: string, rfc: string, note?: string): Row<ipaddr.IPv4> {
  const [network, bits] = ipaddr.IPv4.parseCIDR(cidr);
  return { range: Object.freeze({ cidr, name, rfc }), note, network, bits };
}

function ipv6Row(
  cidr: string,
  name: string,
  rfc: string,
  note?: string,
  handling: Ipv6Handling = { kind: "deny" },
): Ipv6Row {
  const [network, bits] = ipaddr.IPv6.parseCIDR(cidr);
  return { range: Object.freeze({ cidr, name, rfc }), note, network, bits, handling };
}

/** The IPv4 address in the low 32 bits (mapped, NAT64, IPv4-compatible). */
function low32(ip: ipaddr.IPv6): ipaddr.IPv4 {
  const hi = ip.parts[6] ?? 0;
  const lo = ip.parts[7] ?? 0;
  return new ipaddr.IPv4([hi >> 8, hi & 0xff, lo >> 8, lo & 0xff]);
}

function ipv4FromParts(hi: number, lo: number): ipaddr.IPv4 {
  return new ipaddr.IPv4([hi >> 8, hi & 0xff, lo >> 8, lo & 0xff]);
}

const RELAY = "a relay behind it can reach any IPv4 address, so it is always denied";

/** ssrf.md §3.1. Rows do not overlap, so their order only matters for reading. */
const IPV4_ROWS: readonly Row<ipaddr.IPv4>[] = [
  ipv4Row("0.0.0.0/8", '"This network"', "RFC 791", "Linux connects 0.0.0.0 to the local host"),
  ipv4Row("10.0.0.0/8", "Private-Use", "RFC 1918"),
  ipv4Row(
    "100.64.0.0/10",
    "Shared Address Space",
    "RFC 6598",
    "Alibaba Cloud metadata 100.100.100.200 lives here",
  ),
  ipv4Row("127.0.0.0/8", "Loopback", "RFC 1122"),
  ipv4Row("169.254.0.0/16", "Link-Local", "RFC 3927", "cloud metadata services live here"),
  ipv4Row("172.16.0.0/12", "Private-Use", "RFC 1918"),
  ipv4Row(
    "192.0.0.0/24",
    "IETF Protocol Assignments",
    "RFC 6890",
    "Oracle Cloud metadata 192.0.0.192 lives here",
  ),
  ipv4Row("192.0.2.0/24", "Documentation (TEST-NET-1)", "RFC 5737"),
  ipv4Row("192.31.196.0/24", "AS112-v4", "RFC 7535"),
  ipv4Row("192.52.193.0/24", "AMT", "RFC 7450"),
  ipv4Row("192.88.99.0/24", "Deprecated 6to4 Relay Anycast", "RFC 7526"),
  ipv4Row("192.168.0.0/16", "Private-Use", "RFC 1918"),
  ipv4Row("192.175.48.0/24", "Direct Delegation AS112 Service", "RFC 7534"),
  ipv4Row("198.18.0.0/15", "Benchmarking", "RFC 2544"),
  ipv4Row("198.51.100.0/24", "Documentation (TEST-NET-2)", "RFC 5737"),
  ipv4Row("203.0.113.0/24", "Documentation (TEST-NET-3)", "RFC 5737"),
  ipv4Row("224.0.0.0/4", "Multicast", "RFC 5771"),
  ipv4Row("240.0.0.0/4", "Reserved", "RFC 1112", "includes the limited broadcast 255.255.255.255"),
  // A public address, but on Azure it reaches the host agent (microsoft/AntiSSRF `wireserver`).
  ipv4Row(
    "168.63.129.16/32",
    "Azure WireServer",
    "Microsoft Azure",
    "a public address that reaches the host agent from inside Azure",
  ),
];

/**
 * ssrf.md §3.2. The first match wins, so the more specific rows come first (::/128 and ::1/128
 * before ::/96, Teredo 2001::/32 before 2001::/23). Everything outside 2000::/3 that is not named
 * here is denied as well; the rows inside 2000::/3 are the special blocks it would otherwise allow.
 */
const IPV6_ROWS: readonly Ipv6Row[] = [
  ipv6Row("::/128", "Unspecified", "RFC 4291"),
  ipv6Row("::1/128", "Loopback", "RFC 4291"),
  ipv6Row("::ffff:0:0/96", "IPv4-mapped", "RFC 4291", undefined, { kind: "mapped" }),
  ipv6Row("::/96", "IPv4-compatible (deprecated)", "RFC 4291", undefined, {
    kind: "embeds",
    embedded: (ip) => low32(ip).toString(),
  }),
  ipv6Row("::ffff:0:0:0/96", "IPv4-translated", "RFC 6145"),
  ipv6Row("64:ff9b::/96", "NAT64 well-known prefix", "RFC 6052", undefined, { kind: "nat64" }),
  ipv6Row(
    "64:ff9b:1::/48",
    "NAT64 local-use",
    "RFC 8215",
    "the IPv4 embedding is operator-defined, so it is always denied",
  ),
  ipv6Row("100::/64", "Discard-Only", "RFC 6666"),
  ipv6Row("100:0:0:1::/64", "Dummy IPv6 prefix", "RFC 9780"),
  ipv6Row("5f00::/16", "SRv6 SIDs", "RFC 9602"),
  ipv6Row("fc00::/7", "Unique-Local", "RFC 4193", "AWS metadata fd00:ec2::254 lives here"),
  ipv6Row("fe80::/10", "Link-Local", "RFC 4291"),
  ipv6Row("fec0::/10", "Site-Local (deprecated)", "RFC 3879"),
  ipv6Row("ff00::/8", "Multicast", "RFC 4291"),
  // Inside 2000::/3.
  ipv6Row("2001::/32", "Teredo", "RFC 4380", undefined, {
    kind: "embeds",
    // RFC 4380 §4: server IPv4 in bits 32-63, client IPv4 in the low 32 bits, inverted.
    embedded: (ip) =>
      `server ${ipv4FromParts(ip.parts[2] ?? 0, ip.parts[3] ?? 0)} and client ${ipv4FromParts(
        ~(ip.parts[6] ?? 0) & 0xffff,
        ~(ip.parts[7] ?? 0) & 0xffff,
      )}`,
  }),
  // All of it, the blocks the IANA registry marks globally reachable too (PCP, TURN and DNS-SD
  // anycast, AMT, AS112-v6, ORCHIDv2, DETs): protocol endpoints, none of them a hook server.
  ipv6Row("2001::/23", "IETF Protocol Assignments", "RFC 2928"),
  ipv6Row("2001:db8::/32", "Documentation", "RFC 3849"),
  ipv6Row("2002::/16", "6to4", "RFC 3056", undefined, {
    kind: "embeds",
    // RFC 3056 §2: the IPv4 address sits in bits 16-47.
    embedded: (ip) => ipv4FromParts(ip.parts[1] ?? 0, ip.parts[2] ?? 0).toString(),
  }),
  ipv6Row("2620:4f:8000::/48", "Direct Delegation AS112 Service", "RFC 7534"),
  ipv6Row("3fff::/20", "Documentation", "RFC 9637"),
];

const GLOBAL_UNICAST = ipaddr.IPv6.parseCIDR("2000::/3");
const NAT64_WELL_KNOWN = ipaddr.IPv6.parseCIDR("64:ff9b::/96");

export const IPV4_DENY: readonly RangeMatch[] = Object.freeze(IPV4_ROWS.map((row) => row.range));
export const IPV6_DENY: readonly RangeMatch[] = Object.freeze(IPV6_ROWS.map((row) => row.range));

// ---------------------------------------------------------------------------------------------
// Canonical form.

type Parsed =
  | { readonly kind: "ipv4"; readonly ip: ipaddr.IPv4; readonly text: string }
  | { readonly kind: "ipv6"; readonly ip: ipaddr.IPv6; readonly text: string };

/** Longest IPv6 text with a dotted tail is 45 characters; anything far longer is not an address. */
const MAX_ADDRESS_LENGTH = 64;

/**
 * IPv6 through the WHATWG host parser, so we judge exactly what fetch would dial: it compresses,
 * lower-cases and rewrites dotted tails to hex (`::127.0.0.1` → `::7f00:1`, which ipaddr.js alone
 * would misread as mapped). The character check comes first because the text is spliced into a URL:
 * `::1]@evil.com/[` would otherwise parse as host `evil.com`.
 */
function canonicalIPv6(text: string): Parsed | undefined {
  if (!/^[0-9A-Fa-f:.]+$/.test(text)) return undefined;
  let hostname: string;
  try {
    hostname = new URL(`http://[${text}]/`).hostname;
  } catch {
    return undefined;
  }
  const bare = /^\[([0-9a-f:]+)\]$/.exec(hostname)?.[1];
  if (bare === undefined || !ipaddr.IPv6.isValid(bare)) return undefined;
  return { kind: "ipv6", ip: ipaddr.IPv6.parse(bare), text: bare };
}

function canonicalIPv4(text: string): Parsed | undefined {
  if (!ipaddr.IPv4.isValidFourPartDecimal(text)) return undefined;
  const ip = ipaddr.IPv4.parse(text);
  return { kind: "ipv4", ip, text: ip.toString() };
}

function quote(input: string): string {
  const shown = input.length > MAX_ADDRESS_LENGTH ? `${input.slice(0, MAX_ADDRESS_LENGTH)}…` : input;
  return JSON.stringify(shown);
}

/** Brackets only ever wrap IPv6; a zone id is dropped, since only resolver output carries one. */
function canonicalize(input: string): Parsed | { readonly problem: string } {
  if (input.length > MAX_ADDRESS_LENGTH) return { problem: `${quote(input)} is not an IP address` };
  const bracketed = input.startsWith("[") && input.endsWith("]");
  let text = bracketed ? input.slice(1, -1) : input;
  if (text.includes(":")) {
    const zone = text.indexOf("%");
    if (zone !== -1) text = text.slice(0, zone);
    return canonicalIPv6(text) ?? { problem: `${quote(input)} is not an IP address` };
  }
  const ipv4 = bracketed ? undefined : canonicalIPv4(text);
  if (ipv4 !== undefined) return ipv4;
  if (!bracketed && ipaddr.IPv4.isValid(text)) {
    return {
      problem: `${quote(input)} is not a canonical IP address (a legacy IPv4 spelling that WHATWG URL would have rewritten to a dotted quad; only dotted decimal is judged)`,
    };
  }
  return { problem: `${quote(input)} is not an IP address` };
}

/** True for a canonical dotted-quad IPv4 or an IPv6 address, with or without brackets. */
export function isIpLiteral(host: string): boolean {
  try {
    return typeof host === "string" && !("problem" in canonicalize(host));
  } catch {
    return false;
  }
}

// ---------------------------------------------------------------------------------------------
// Judging.

interface Refusal {
  readonly reason: string;
  readonly range?: RangeMatch;
}

function detail(
  row: { readonly range: RangeMatch; readonly note: string | undefined },
  extra?: string,
): string {
  const notes = [extra, row.note].filter((n) => n !== undefined).join("; ");
  return `${row.range.rfc}${notes === "" ? "" : `; ${notes}`}`;
}

function ipv4Match(ip: ipaddr.IPv4): Row<ipaddr.IPv4> | undefined {
  return IPV4_ROWS.find((row) => ip.match(row.network, row.bits));
}

/** "which is Loopback (127.0.0.0/8, RFC 1122)", for an IPv4 address found inside an IPv6 one. */
function viaIPv4(text: string, how: string, ip: ipaddr.IPv4): Refusal | undefined {
  const row = ipv4Match(ip);
  if (row === undefined) return undefined;
  return {
    reason: `${text} is ${how} ${ip.toString()}, which is ${row.range.name} (${row.range.cidr}, ${detail(row)})`,
    range: row.range,
  };
}

function judgeIPv4(ip: ipaddr.IPv4, text: string): Refusal | undefined {
  const row = ipv4Match(ip);
  if (row === undefined) return undefined;
  return { reason: `${text} is in ${row.range.cidr} (${row.range.name}, ${detail(row)})`, range: row.range };
}

function judgeIPv6(ip: ipaddr.IPv6, text: string, allowNat64: boolean): Refusal | undefined {
  const row = IPV6_ROWS.find((r) => ip.match(r.network, r.bits));
  if (row === undefined) {
    return ip.match(GLOBAL_UNICAST)
      ? undefined
      : {
          reason: `${text} is outside global unicast 2000::/3 (RFC 4291), the only IPv6 space hooks may reach`,
        };
  }
  const inRow = (extra?: string): Refusal => ({
    reason: `${text} is in ${row.range.cidr} (${row.range.name}, ${detail(row, extra)})`,
    range: row.range,
  });
  switch (row.handling.kind) {
    case "deny":
      return inRow();
    case "mapped":
      return viaIPv4(text, "IPv4-mapped", low32(ip));
    case "nat64":
      // DNS64 resolvers (IPv6-only subnets) hand these out for IPv4-only names; allowNat64 judges
      // the embedded IPv4 instead of trusting the whole prefix, unlike daenney/ssrf's opt-in.
      return allowNat64
        ? viaIPv4(text, "NAT64 (64:ff9b::/96) for", low32(ip))
        : inRow(`it embeds ${low32(ip).toString()} and is denied unless allowNat64 is set`);
    case "embeds":
      return inRow(`it embeds ${row.handling.embedded(ip)}, and ${RELAY}`);
  }
}

/** The IPv4 address an operator's IPv4 CIDRs see: the mapped one, or the NAT64 one when decoded. */
function embeddedIPv4(p: Parsed, nat64: boolean): ipaddr.IPv4 | undefined {
  if (p.kind === "ipv4") return p.ip;
  if (p.ip.isIPv4MappedAddress()) return low32(p.ip);
  if (nat64 && p.ip.match(NAT64_WELL_KNOWN)) return low32(p.ip);
  return undefined;
}

function findCidr(
  cidrs: readonly CompiledCidr[],
  p: Parsed,
  v4: ipaddr.IPv4 | undefined,
): CompiledCidr | undefined {
  return cidrs.find((c) => {
    if (c.kind === "ipv4") return v4?.match(c.network, c.bits) ?? false;
    // An IPv4-mapped address is its IPv4 to operator ranges, and only that: an IPv6 range around
    // ::ffff:0:0/96 (`::/0`, `::/80`) matching it would judge one host two ways by its spelling.
    return p.kind === "ipv6" && !p.ip.isIPv4MappedAddress() && p.ip.match(c.network, c.bits);
  });
}

function refuse(address: string, refusal: Refusal): AddressVerdict {
  return refusal.range === undefined
    ? { allowed: false, address, reason: refusal.reason }
    : { allowed: false, address, reason: refusal.reason, range: refusal.range };
}

function judge(p: Parsed, rules: AddressRules): AddressVerdict {
  // Operator CIDRs see IPv4-mapped addresses as IPv4, never as IPv6 (findCidr).
  const allowHit = findCidr(rules.allow, p, embeddedIPv4(p, false));
  const denyHit = findCidr(rules.deny, p, embeddedIPv4(p, rules.allowNat64));
  if (allowHit !== undefined) {
    // Deny wins over allow: an operator who allows 10.0.0.0/8 and denies 10.0.0.5/32 means it.
    if (denyHit !== undefined) {
      return refuse(p.text, {
        reason: `${p.text} is in ${denyHit.range.cidr} (${denyHit.range.name}, ${denyHit.range.rfc}), which wins over ${allowHit.range.cidr} (${allowHit.range.name})`,
        range: denyHit.range,
      });
    }
    return { allowed: true, address: p.text };
  }
  const builtin = p.kind === "ipv4" ? judgeIPv4(p.ip, p.text) : judgeIPv6(p.ip, p.text, rules.allowNat64);
  if (builtin !== undefined) return refuse(p.text, builtin);
  if (denyHit !== undefined) {
    return refuse(p.text, {
      reason: `${p.text} is in ${denyHit.range.cidr} (${denyHit.range.name}, ${denyHit.range.rfc})`,
      range: denyHit.range,
    });
  }
  return { allowed: true, address: p.text };
}

/**
 * Judge one IP address from WHATWG URL `hostname` (brackets stripped) or a resolver answer (a
 * `%zone` suffix is dropped). Never throws; anything that is not an IP address is refused. An
 * allowed verdict carries the canonical text, which is what the caller should dial.
 */
export function classifyAddress(address: string, rules: AddressRules): AddressVerdict {
  if (typeof address !== "string") {
    return { allowed: false, address: String(address), reason: `${String(address)} is not an IP address` };
  }
  try {
    const parsed = canonicalize(address);
    if ("problem" in parsed) return { allowed: false, address, reason: parsed.problem };
    return judge(parsed, rules);
  } catch {
    return { allowed: false, address, reason: `${quote(address)} could not be classified` };
  }
}

// ---------------------------------------------------------------------------------------------
// Operator rules.

function parseConfigCidr(value: unknown): { readonly parsed: Parsed; readonly bits: number } | string {
  if (typeof value !== "string") return `${JSON.stringify(value) ?? String(value)} is not a string`;
  const shown = quote(value);
  const slash = value.split("/");
  if (slash.length !== 2) return `${shown} is not a CIDR (expected address/prefix, e.g. 10.0.0.0/8)`;
  const [text = "", prefix = ""] = slash;
  if (text.startsWith("[") || text.endsWith("]")) return `${shown} is not a CIDR (remove the brackets)`;
  if (text.includes("%")) return `${shown} is not a CIDR (zone ids are not allowed)`;
  if (!/^(0|[1-9][0-9]{0,2})$/.test(prefix)) return `${shown} is not a CIDR (bad prefix length)`;
  const bits = Number(prefix);
  const parsed = text.includes(":") ? canonicalIPv6(text) : canonicalIPv4(text);
  if (parsed === undefined) {
    return !text.includes(":") && ipaddr.IPv4.isValid(text)
      ? `${shown} is not a CIDR (legacy IPv4 spelling; write the address as a dotted quad, e.g. 10.0.0.0/8)`
      : `${shown} is not a CIDR (bad address)`;
  }
  const max = parsed.kind === "ipv4" ? 32 : 128;
  if (bits > max) return `${shown} is not a CIDR (prefix length ${bits} is longer than ${max})`;
  const network =
    parsed.kind === "ipv4"
      ? ipaddr.IPv4.networkAddressFromCIDR(`${parsed.text}/${bits}`).toString()
      : ipaddr.IPv6.networkAddressFromCIDR(`${parsed.text}/${bits}`).toString();
  if (network !== parsed.text) return `${shown} has host bits set (did you mean ${network}/${bits}?)`;
  // Operator CIDRs see an IPv4-mapped address as its IPv4, never as IPv6 (findCidr): an IPv6 rule
  // inside ::ffff:0:0/96 would match no address, and a deny written that way would let the
  // address through.
  if (parsed.kind === "ipv6" && bits >= 96 && parsed.ip.isIPv4MappedAddress()) {
    return `${shown} is an IPv4-mapped range; write it as IPv4, ${low32(parsed.ip).toString()}/${bits - 96}, which covers both spellings`;
  }
  return { parsed, bits };
}

/** IPv6 ranges whose addresses carry an IPv4 address, judged by it (judgeIPv6). */
const EMBEDDING_RANGES: readonly { readonly text: string; readonly name: string }[] = [
  { text: "64:ff9b::/96", name: "NAT64" },
  { text: "64:ff9b:1::/48", name: "local-use NAT64" },
  { text: "2002::/16", name: "6to4" },
  { text: "2001::/32", name: "Teredo" },
  { text: "::/96", name: "IPv4-compatible" },
  { text: "::ffff:0:0:0/96", name: "IPv4-translated" },
  // A mapped range of 96 bits or more is refused already, with its IPv4 spelling to write instead.
  { text: "::ffff:0:0/96", name: "IPv4-mapped" },
];
/** ::/128 and ::1/128, inside ::/96 but judged as themselves: `::/127` opens no IPv4 address. */
const UNSPECIFIED_AND_LOOPBACK = ipaddr.IPv6.parseCIDR("::/127");

/** The embedding range an allowed CIDR overlaps (`64:ff9b::/96 (NAT64)`), if any. */
function embeddingRangeOpened(parsed: Parsed, bits: number): string | undefined {
  // One address is the operator's deliberate choice (`::127.0.0.1/128`); a range is what opens
  // every IPv4 address behind it.
  if (parsed.kind !== "ipv6" || bits === 128) return undefined;
  if (bits === 127 && parsed.ip.match(UNSPECIFIED_AND_LOOPBACK)) return undefined;
  for (const range of EMBEDDING_RANGES) {
    const [network, prefix] = ipaddr.IPv6.parseCIDR(range.text);
    if (parsed.ip.match(network, Math.min(bits, prefix))) return `${range.text} (${range.name})`;
  }
  return undefined;
}

function compileList(
  field: CidrField,
  list: unknown,
  errors: { field: CidrField; index: number; message: string }[],
): CompiledCidr[] {
  if (list === undefined) return [];
  if (!Array.isArray(list)) {
    errors.push({ field, index: -1, message: `${field}: must be an array of CIDR strings` });
    return [];
  }
  const compiled: CompiledCidr[] = [];
  list.forEach((value: unknown, index) => {
    const result = parseConfigCidr(value);
    if (typeof result === "string") {
      errors.push({ field, index, message: result });
      return;
    }
    const cidr = `${result.parsed.text}/${result.bits}`;
    const embeds = field === "allowCidrs" ? embeddingRangeOpened(result.parsed, result.bits) : undefined;
    if (embeds !== undefined) {
      errors.push({
        field,
        index,
        message: embeds.startsWith("::ffff:0:0/96")
          ? `${quote(String(value))} overlaps ${embeds}, whose addresses are judged as the IPv4 address they carry, never by an IPv6 range: open the IPv4 range instead`
          : `${quote(String(value))} opens part of ${embeds}, whose addresses carry an IPv4 address: it would reach every IPv4 address, private and cloud-metadata ones included${embeds.startsWith("64:ff9b::") ? "; set egress.allowNat64 instead, which judges the IPv4 address inside" : ""}`,
      });
      return;
    }
    compiled.push({
      index,
      kind: result.parsed.kind,
      network: result.parsed.ip,
      bits: result.bits,
      range: Object.freeze({ cidr, name: `${field}[${index}]`, rfc: "operator config" }),
    });
  });
  return compiled;
}

/** Cloud metadata addresses the built-in tables refuse and a wide allowCidrs entry may open. */
const METADATA_ADDRESSES: readonly { readonly address: string; readonly service: string }[] = [
  {
    address: "169.254.169.254",
    service: "the instance metadata service of AWS, GCP, Azure and Oracle Cloud",
  },
  { address: "169.254.170.2", service: "the AWS ECS task credentials endpoint" },
  { address: "169.254.170.23", service: "the AWS EKS Pod Identity credentials endpoint" },
  { address: "fd00:ec2::254", service: "the AWS instance metadata service over IPv6" },
  { address: "fd00:ec2::23", service: "the AWS EKS Pod Identity credentials endpoint over IPv6" },
  { address: "100.100.100.200", service: "the Alibaba Cloud metadata service" },
  { address: "192.0.0.192", service: "the Oracle Cloud metadata service" },
  { address: "168.63.129.16", service: "the Azure WireServer host agent" },
];

/**
 * Whose cloud metadata service this address is (169.254.169.254, fd00:ec2::254, …; an
 * IPv4-mapped spelling too), or undefined: no setting should open one for hooks.
 */
export function metadataService(address: string): string | undefined {
  const p = canonicalize(address);
  if ("problem" in p) return undefined;
  const text = p.kind === "ipv6" && p.ip.isIPv4MappedAddress() ? low32(p.ip).toString() : p.text;
  return METADATA_ADDRESSES.find((m) => m.address === text)?.service;
}

export interface MetadataOpened {
  /** The allowCidrs entry's index. */
  readonly index: number;
  readonly address: string;
  /** Whose service it is. */
  readonly service: string;
  /** The denyCidrs entry that closes it again (`169.254.169.254/32`). */
  readonly deny: string;
}

/**
 * The cloud metadata addresses an allowCidrs entry opens (no denyCidrs entry closes them), by
 * entry and then address: an operator opening `169.254.0.0/16` for a link-local device may not
 * mean the metadata service too (policy-lint warns).
 */
export function metadataOpened(rules: AddressRules): MetadataOpened[] {
  const opened: MetadataOpened[] = [];
  const targets = METADATA_ADDRESSES.flatMap((m) => {
    const p = canonicalize(m.address);
    if ("problem" in p) return [];
    const closed = findCidr(rules.deny, p, embeddedIPv4(p, rules.allowNat64)) !== undefined;
    return closed ? [] : [{ ...m, p }];
  });
  for (const cidr of rules.allow) {
    for (const { address, service, p } of targets) {
      if (findCidr([cidr], p, embeddedIPv4(p, false)) === undefined) continue;
      opened.push({
        index: cidr.index,
        address,
        service,
        deny: `${address}/${p.kind === "ipv4" ? 32 : 128}`,
      });
    }
  }
  return opened;
}

/**
 * The operator config `rules` was compiled from, canonical and in its order, so that what adding
 * a setting would do can be judged from the compiled rules alone (open.ts `howToOpen`).
 */
export function addressRulesInput(rules: AddressRules): AddressRulesInput {
  return {
    allowCidrs: rules.allow.map((c) => c.range.cidr),
    denyCidrs: rules.deny.map((c) => c.range.cidr),
    allowNat64: rules.allowNat64,
  };
}

/**
 * Compile the trusted operator config. Entries must be canonical CIDRs (dotted-quad IPv4 or
 * IPv6, no brackets or zone ids, no host bits). Bad entries are left out and reported; callers
 * must treat any error as fatal, since a dropped deny entry would widen what hooks can reach.
 */
export function compileAddressRules(input: AddressRulesInput): {
  rules: AddressRules;
  errors: { field: CidrField; index: number; message: string }[];
} {
  const errors: { field: CidrField; index: number; message: string }[] = [];
  const source: AddressRulesInput = typeof input === "object" && input !== null ? input : {};
  const allow = compileList("allowCidrs", source.allowCidrs, errors);
  const deny = compileList("denyCidrs", source.denyCidrs, errors);
  return {
    rules: Object.freeze({ allow, deny, allowNat64: source.allowNat64 === true }),
    errors,
  };
}

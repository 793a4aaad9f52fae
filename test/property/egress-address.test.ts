/**
 * The egress guard's URL and address stages together, over every address: each spelling the
 * WHATWG URL parser accepts for an IPv4 address (decimal, octal or hex parts, one to four of
 * them, a trailing dot, IPv4-mapped IPv6 dotted or in hex) is judged as its dotted quad; the
 * IPv6 forms that carry an IPv4 address for a relay (IPv4-compatible, NAT64, 6to4) are refused
 * whatever they carry; and no address ipaddr.js places outside unicast is ever allowed.
 */
import fc from "fast-check";
import ipaddr from "ipaddr.js";
import { describe, expect, it } from "vitest";
import { classifyAddress, compileAddressRules } from "../../src/core/egress/address.js";
import { checkUrl, compileAllowlist } from "../../src/core/egress/url.js";

const rules = compileAddressRules({}).rules;
const unrestricted = compileAllowlist(undefined).allowlist;

/** What the guard makes of a URL before DNS: its URL refusal's code, or whether its host is allowed. */
function judge(raw: string): string | boolean {
  const verdict = checkUrl(raw, unrestricted);
  return verdict.ok ? classifyAddress(verdict.host, rules).allowed : verdict.refusal.code;
}

const octet = fc.integer({ min: 0, max: 255 });
const radix = fc.constantFrom(8, 10, 16);

function spell(n: number, base: number): string {
  if (base === 16) return `0x${n.toString(16)}`;
  return base === 8 ? `0${n.toString(8)}` : String(n);
}

const hex = (hi: number, lo: number) => ((hi << 8) + lo).toString(16);

/**
 * An address inside one of ipaddr.js's special-purpose ranges, its own reading of the IANA
 * registries (a uniformly drawn address lands in a /15 once in 131,072 draws).
 */
type Cidr = [ipaddr.IPv4 | ipaddr.IPv6, number];
const SPECIAL: readonly Cidr[] = [ipaddr.IPv4, ipaddr.IPv6].flatMap((kind) =>
  Object.values(
    (kind.prototype as unknown as { SpecialRanges: Record<string, Cidr | Cidr[]> }).SpecialRanges,
  ).flatMap((ranges) => (Array.isArray(ranges[0]) ? (ranges as Cidr[]) : [ranges as Cidr])),
);
const special = fc
  .tuple(fc.constantFrom(...SPECIAL), fc.uint8Array({ minLength: 16, maxLength: 16 }))
  .map(([[network, bits], random]) => {
    const bytes = network.toByteArray();
    const out = bytes.map((byte, i) => {
      const fixed = Math.max(0, Math.min(8, bits - i * 8));
      const mask = (0xff << (8 - fixed)) & 0xff;
      return (byte & mask) | ((random[i] ?? 0) & ~mask & 0xff);
    });
    return ipaddr.fromByteArray(out).toString();
  });

describe("the egress guard over every address", () => {
  it("judges every spelling of an IPv4 address as its dotted quad", () => {
    fc.assert(
      fc.property(
        fc.tuple(octet, octet, octet, octet),
        fc.tuple(radix, radix, radix, radix),
        fc.integer({ min: 1, max: 4 }),
        ([a, b, c, d], [r0, r1, r2, r3], parts) => {
          const quad = `${a}.${b}.${c}.${d}`;
          const expected = classifyAddress(quad, rules).allowed;
          const host = [
            spell(a * 2 ** 24 + b * 2 ** 16 + c * 2 ** 8 + d, r0),
            `${spell(a, r0)}.${spell(b * 2 ** 16 + c * 2 ** 8 + d, r1)}`,
            `${spell(a, r0)}.${spell(b, r1)}.${spell(c * 2 ** 8 + d, r2)}`,
            `${spell(a, r0)}.${spell(b, r1)}.${spell(c, r2)}.${spell(d, r3)}`,
          ][parts - 1];
          for (const url of [
            `http://${host}/`,
            `http://${host}./`,
            `http://[::ffff:${quad}]/`,
            `http://[::ffff:${hex(a, b)}:${hex(c, d)}]/`,
          ]) {
            expect([url, judge(url)]).toEqual([url, expected]);
          }
        },
      ),
      { numRuns: 3000 },
    );
  });

  it("refuses every IPv4-compatible, NAT64 and 6to4 address, whatever IPv4 address it carries", () => {
    fc.assert(
      fc.property(fc.tuple(octet, octet, octet, octet), ([a, b, c, d]) => {
        const quad = `${a}.${b}.${c}.${d}`;
        for (const url of [
          `http://[::${quad}]/`,
          `http://[64:ff9b::${quad}]/`,
          `http://[2002:${hex(a, b)}:${hex(c, d)}::1]/`,
        ]) {
          expect([url, judge(url)]).toEqual([url, false]);
        }
      }),
      { numRuns: 3000 },
    );
  });

  it("allows no address that ipaddr.js places outside unicast", () => {
    fc.assert(
      fc.property(fc.oneof(fc.ipV4(), fc.ipV4Extended(), fc.ipV6(), special), (ip) => {
        if (!ipaddr.isValid(ip)) return;
        const range = ipaddr.process(ip).range();
        if (range !== "unicast")
          expect([ip, range, classifyAddress(ip, rules).allowed]).toEqual([ip, range, false]);
      }),
      { numRuns: 10000 },
    );
  });
});

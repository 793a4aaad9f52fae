/**
 * The egress guard's URL and address stages together, over every address: each spelling the
 * WHATWG URL parser accepts for an IPv4 address (decimal, octal or hex parts, one to four of
 * them, a trailing dot, IPv4-mapped IPv6 dotted or in hex) is judged as its dotted quad; the
 * IPv6 forms that carry an IPv4 address for a relay (IPv4-compatible, NAT64, 6to4, Teredo) are
 * refused whatever they carry, Teredo's naming what it carries however it is spelt; so is all of
 * 2001::/23; and no address ipaddr.js places outside unicast is ever allowed.
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

  it("refuses every Teredo address as Teredo, naming the server and the client IPv4 it carries, however it is spelt", () => {
    // RFC 4380 §4: 2001:0:server:flags:port:client, the client's port and address inverted.
    const invert = (hi: number, lo: number) => (~((hi << 8) + lo) & 0xffff).toString(16);
    fc.assert(
      fc.property(
        fc.tuple(octet, octet, octet, octet),
        fc.tuple(octet, octet, octet, octet),
        fc.integer({ min: 0, max: 0xffff }),
        fc.integer({ min: 0, max: 0xffff }),
        ([s0, s1, s2, s3], [c0, c1, c2, c3], flags, port) => {
          const client = `${invert(c0, c1)}:${invert(c2, c3)}`;
          const groups = `${hex(s0, s1)}:${hex(s2, s3)}:${flags.toString(16)}:${port.toString(16)}`;
          const tail = `${(~((c0 << 24) | (c1 << 16) | (c2 << 8) | c3) >>> 0).toString(16).padStart(8, "0")}`;
          const dotted = [0, 2, 4, 6].map((i) => Number.parseInt(tail.slice(i, i + 2), 16)).join(".");
          const embeds = `server ${s0}.${s1}.${s2}.${s3} and client ${c0}.${c1}.${c2}.${c3}`;
          for (const spelt of [
            `2001:0:${groups}:${client}`,
            `2001:0000:${groups}:${client}`.toUpperCase(),
            `2001:0:${groups}:${dotted}`,
          ]) {
            const url = `http://[${spelt}]/`;
            const verdict = checkUrl(url, unrestricted);
            expect(verdict.ok).toBe(true);
            const judged = classifyAddress(verdict.ok ? verdict.host : "", rules);
            expect([url, judged.allowed]).toEqual([url, false]);
            if (judged.allowed) continue;
            expect([url, judged.range?.cidr]).toEqual([url, "2001::/32"]);
            expect(judged.reason).toContain(`it embeds ${embeds}`);
          }
        },
      ),
      { numRuns: 3000 },
    );
  });

  it("refuses every address in 2001::/23, the IETF protocol assignments, globally reachable ones too", () => {
    // Teredo aside: PCP, TURN and DNS-SD anycast, benchmarking, AMT, AS112-v6, ORCHIDv2, DETs.
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 0x1ff }), fc.ipV6(), (second, rest) => {
        const low = ipaddr.IPv6.parse(rest).parts.slice(2);
        const address = new ipaddr.IPv6([0x2001, second, ...low]).toString();
        expect([address, classifyAddress(address, rules).allowed]).toEqual([address, false]);
      }),
      { numRuns: 3000 },
    );
    for (const edge of [
      "2001:1::1",
      "2001:3::1",
      "2001:4:112::1",
      "2001:20::1",
      "2001:30::1",
      "2001:1ff::",
    ]) {
      const verdict = classifyAddress(edge, rules);
      expect([edge, !verdict.allowed && verdict.range?.cidr]).toEqual([edge, "2001::/23"]);
    }
    expect(classifyAddress("2001:200::", rules).allowed).toBe(true);
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

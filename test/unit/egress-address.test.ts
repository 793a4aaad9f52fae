/**
 * The address classifier, table by table (smokescreen's TestClassifyAddr style): for every range,
 * its first and last address, and the addresses just outside it, with the verdict each must get.
 */
import ipaddr from "ipaddr.js";
import { describe, expect, it } from "vitest";
import {
  type AddressRules,
  type AddressVerdict,
  classifyAddress,
  compileAddressRules,
  IPV4_DENY,
  IPV6_DENY,
  isIpLiteral,
  metadataOpened,
} from "../../src/core/egress/address.js";

function rules(input: Parameters<typeof compileAddressRules>[0] = {}): AddressRules {
  const compiled = compileAddressRules(input);
  expect(compiled.errors).toEqual([]);
  return compiled.rules;
}

const STRICT = rules();
const NAT64 = rules({ allowNat64: true });

/** `ALLOW`, `OUTSIDE` (denied as outside 2000::/3, no named range) or the CIDR that must refuse it. */
const ALLOW = "allow";
const OUTSIDE = "outside 2000::/3";
type Expected = string;

function refused(verdict: AddressVerdict): Extract<AddressVerdict, { allowed: false }> {
  if (verdict.allowed) throw new Error(`expected a refusal, got ${JSON.stringify(verdict)}`);
  return verdict;
}

function expectVerdict(address: string, expected: Expected, with_: AddressRules = STRICT): void {
  const verdict = classifyAddress(address, with_);
  if (expected === ALLOW) {
    expect(verdict).toEqual({ allowed: true, address });
    return;
  }
  const refusal = refused(verdict);
  expect(refusal.address).toBe(address);
  expect(refusal.reason).toContain(address);
  if (expected === OUTSIDE) {
    expect(refusal.range).toBeUndefined();
    expect(refusal.reason).toContain("outside global unicast 2000::/3");
    return;
  }
  expect(refusal.range?.cidr).toBe(expected);
  expect(refusal.reason).toContain(expected);
  expect(refusal.reason).toContain(refusal.range?.name);
  expect(refusal.reason).toContain(refusal.range?.rfc);
}

const table = (rows: readonly (readonly [string, Expected])[]) => rows;

describe("IPv4: RFC 791 this network", () => {
  it.each(
    table([
      ["0.0.0.0", "0.0.0.0/8"],
      ["0.255.255.255", "0.0.0.0/8"],
      ["1.0.0.0", ALLOW],
    ]),
  )("%s → %s", (address, expected) => expectVerdict(address, expected));
});

describe("IPv4: RFC 1918 private-use", () => {
  it.each(
    table([
      ["9.255.255.255", ALLOW],
      ["10.0.0.0", "10.0.0.0/8"],
      ["10.255.255.255", "10.0.0.0/8"],
      ["11.0.0.0", ALLOW],
      ["172.15.255.255", ALLOW],
      ["172.16.0.0", "172.16.0.0/12"],
      ["172.31.255.255", "172.16.0.0/12"],
      ["172.32.0.0", ALLOW],
      ["192.167.255.255", ALLOW],
      ["192.168.0.0", "192.168.0.0/16"],
      ["192.168.255.255", "192.168.0.0/16"],
      ["192.169.0.0", ALLOW],
    ]),
  )("%s → %s", (address, expected) => expectVerdict(address, expected));
});

describe("IPv4: RFC 6598 shared address space (CGNAT)", () => {
  it.each(
    table([
      ["100.63.255.255", ALLOW],
      ["100.64.0.0", "100.64.0.0/10"],
      ["100.127.255.255", "100.64.0.0/10"],
      ["100.128.0.0", ALLOW],
    ]),
  )("%s → %s", (address, expected) => expectVerdict(address, expected));
});

describe("IPv4: RFC 1122 loopback", () => {
  it.each(
    table([
      ["126.255.255.255", ALLOW],
      ["127.0.0.0", "127.0.0.0/8"],
      ["127.255.255.255", "127.0.0.0/8"],
      ["128.0.0.0", ALLOW],
    ]),
  )("%s → %s", (address, expected) => expectVerdict(address, expected));
});

describe("IPv4: RFC 3927 link-local", () => {
  it.each(
    table([
      ["169.253.255.255", ALLOW],
      ["169.254.0.0", "169.254.0.0/16"],
      ["169.254.255.255", "169.254.0.0/16"],
      ["169.255.0.0", ALLOW],
    ]),
  )("%s → %s", (address, expected) => expectVerdict(address, expected));
});

describe("IPv4: RFC 6890 IETF protocol assignments", () => {
  it.each(
    table([
      ["191.255.255.255", ALLOW],
      ["192.0.0.0", "192.0.0.0/24"],
      ["192.0.0.255", "192.0.0.0/24"],
      ["192.0.1.0", ALLOW],
    ]),
  )("%s → %s", (address, expected) => expectVerdict(address, expected));
});

describe("IPv4: RFC 5737 documentation", () => {
  it.each(
    table([
      ["192.0.1.255", ALLOW],
      ["192.0.2.0", "192.0.2.0/24"],
      ["192.0.2.255", "192.0.2.0/24"],
      ["192.0.3.0", ALLOW],
      ["198.51.99.255", ALLOW],
      ["198.51.100.0", "198.51.100.0/24"],
      ["198.51.100.255", "198.51.100.0/24"],
      ["198.51.101.0", ALLOW],
      ["203.0.112.255", ALLOW],
      ["203.0.113.0", "203.0.113.0/24"],
      ["203.0.113.255", "203.0.113.0/24"],
      ["203.0.114.0", ALLOW],
    ]),
  )("%s → %s", (address, expected) => expectVerdict(address, expected));
});

describe("IPv4: AS112 (RFC 7535, RFC 7534)", () => {
  it.each(
    table([
      ["192.31.195.255", ALLOW],
      ["192.31.196.0", "192.31.196.0/24"],
      ["192.31.196.255", "192.31.196.0/24"],
      ["192.31.197.0", ALLOW],
      ["192.175.47.255", ALLOW],
      ["192.175.48.0", "192.175.48.0/24"],
      ["192.175.48.255", "192.175.48.0/24"],
      ["192.175.49.0", ALLOW],
    ]),
  )("%s → %s", (address, expected) => expectVerdict(address, expected));
});

describe("IPv4: RFC 7450 AMT", () => {
  it.each(
    table([
      ["192.52.192.255", ALLOW],
      ["192.52.193.0", "192.52.193.0/24"],
      ["192.52.193.255", "192.52.193.0/24"],
      ["192.52.194.0", ALLOW],
    ]),
  )("%s → %s", (address, expected) => expectVerdict(address, expected));
});

describe("IPv4: RFC 7526 deprecated 6to4 relay anycast", () => {
  it.each(
    table([
      ["192.88.98.255", ALLOW],
      ["192.88.99.0", "192.88.99.0/24"],
      ["192.88.99.255", "192.88.99.0/24"],
      ["192.88.100.0", ALLOW],
    ]),
  )("%s → %s", (address, expected) => expectVerdict(address, expected));
});

describe("IPv4: RFC 2544 benchmarking", () => {
  it.each(
    table([
      ["198.17.255.255", ALLOW],
      ["198.18.0.0", "198.18.0.0/15"],
      ["198.19.255.255", "198.18.0.0/15"],
      ["198.20.0.0", ALLOW],
    ]),
  )("%s → %s", (address, expected) => expectVerdict(address, expected));
});

describe("IPv4: RFC 5771 multicast and RFC 1112 reserved", () => {
  it.each(
    table([
      ["223.255.255.255", ALLOW],
      ["224.0.0.0", "224.0.0.0/4"],
      ["239.255.255.255", "224.0.0.0/4"],
      ["240.0.0.0", "240.0.0.0/4"],
      ["255.255.255.255", "240.0.0.0/4"],
    ]),
  )("%s → %s", (address, expected) => expectVerdict(address, expected));
});

describe("IPv4: Azure WireServer", () => {
  it.each(
    table([
      ["168.63.129.15", ALLOW],
      ["168.63.129.16", "168.63.129.16/32"],
      ["168.63.129.17", ALLOW],
    ]),
  )("%s → %s", (address, expected) => expectVerdict(address, expected));
});

describe("IPv6 outside 2000::/3: RFC 4291 special addresses", () => {
  it.each(
    table([
      ["::", "::/128"],
      ["::1", "::1/128"],
      ["::2", "::/96"],
      ["::ffff:ffff", "::/96"],
      ["::1:0:0", OUTSIDE],
      ["fbff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", OUTSIDE],
      ["fc00::", "fc00::/7"],
      ["fdff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "fc00::/7"],
      ["fe00::", OUTSIDE],
      ["fe7f:ffff:ffff:ffff:ffff:ffff:ffff:ffff", OUTSIDE],
      ["fe80::", "fe80::/10"],
      ["febf:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "fe80::/10"],
      ["fec0::", "fec0::/10"],
      ["feff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "fec0::/10"],
      ["ff00::", "ff00::/8"],
      ["ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "ff00::/8"],
      ["ff02::2", "ff00::/8"],
    ]),
  )("%s → %s", (address, expected) => expectVerdict(address, expected));
});

describe("IPv6 outside 2000::/3: RFC 6145, 6666, 9780, 9602", () => {
  it.each(
    table([
      ["::fffe:ffff:ffff", OUTSIDE],
      ["::ffff:0:0:0", "::ffff:0:0:0/96"],
      ["::ffff:0:ffff:ffff", "::ffff:0:0:0/96"],
      ["::ffff:1:0:0", OUTSIDE],
      ["ff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", OUTSIDE],
      ["100::", "100::/64"],
      ["100::ffff:ffff:ffff:ffff", "100::/64"],
      ["100:0:0:1::", "100:0:0:1::/64"],
      ["100::1:ffff:ffff:ffff:ffff", "100:0:0:1::/64"],
      ["100:0:0:2::", OUTSIDE],
      ["5eff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", OUTSIDE],
      ["5f00::", "5f00::/16"],
      ["5f00:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "5f00::/16"],
      ["5f01::", OUTSIDE],
      ["64:ff9c::1", OUTSIDE],
    ]),
  )("%s → %s", (address, expected) => expectVerdict(address, expected));
});

describe("IPv6: RFC 6052 / RFC 8215 NAT64", () => {
  it.each(
    table([
      ["64:ff9a:ffff:ffff:ffff:ffff:ffff:ffff", OUTSIDE],
      ["64:ff9b::", "64:ff9b::/96"],
      ["64:ff9b::ffff:ffff", "64:ff9b::/96"],
      ["64:ff9b::1:0:0", OUTSIDE],
      ["64:ff9b:0:ffff:ffff:ffff:ffff:ffff", OUTSIDE],
      ["64:ff9b:1::", "64:ff9b:1::/48"],
      ["64:ff9b:1:ffff:ffff:ffff:ffff:ffff", "64:ff9b:1::/48"],
      ["64:ff9b:2::", OUTSIDE],
    ]),
  )("%s → %s", (address, expected) => expectVerdict(address, expected));

  it("denies the well-known prefix by default, even for a public IPv4", () => {
    const refusal = refused(classifyAddress("64:ff9b::808:808", STRICT));
    expect(refusal.range?.cidr).toBe("64:ff9b::/96");
    expect(refusal.reason).toContain("8.8.8.8");
    expect(refusal.reason).toContain("allowNat64");
  });

  it("with allowNat64, allows a public embedded IPv4", () => {
    expect(classifyAddress("64:ff9b::808:808", NAT64)).toEqual({
      allowed: true,
      address: "64:ff9b::808:808",
    });
  });

  it("with allowNat64, judges the embedded IPv4 by the IPv4 table", () => {
    const refusal = refused(classifyAddress("64:ff9b::7f00:1", NAT64));
    expect(refusal.range?.cidr).toBe("127.0.0.0/8");
    expect(refusal.reason).toBe(
      "64:ff9b::7f00:1 is NAT64 (64:ff9b::/96) for 127.0.0.1, which is Loopback (127.0.0.0/8, RFC 1122)",
    );
    expect(refused(classifyAddress("64:ff9b::a9fe:a9fe", NAT64)).range?.cidr).toBe("169.254.0.0/16");
  });

  it("denies 64:ff9b::7f00:1 without allowNat64 too", () => {
    expect(refused(classifyAddress("64:ff9b::7f00:1", STRICT)).range?.cidr).toBe("64:ff9b::/96");
  });

  it("never opens the local-use prefix, even with allowNat64", () => {
    const refusal = refused(classifyAddress("64:ff9b:1::808:808", NAT64));
    expect(refusal.range?.cidr).toBe("64:ff9b:1::/48");
  });
});

describe("IPv6 inside 2000::/3: RFC 2928, 4380, 3849, 3056, 7534, 9637", () => {
  it.each(
    table([
      ["1fff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", OUTSIDE],
      ["2000::", ALLOW],
      ["2000:ffff:ffff:ffff:ffff:ffff:ffff:ffff", ALLOW],
      ["2001::", "2001::/32"],
      ["2001:0:ffff:ffff:ffff:ffff:ffff:ffff", "2001::/32"],
      ["2001:1::", "2001::/23"],
      ["2001:1ff:ffff:ffff:ffff:ffff:ffff:ffff", "2001::/23"],
      ["2001:200::", ALLOW],
      ["2001:db7:ffff:ffff:ffff:ffff:ffff:ffff", ALLOW],
      ["2001:db8::", "2001:db8::/32"],
      ["2001:db8:ffff:ffff:ffff:ffff:ffff:ffff", "2001:db8::/32"],
      ["2001:db9::", ALLOW],
      ["2001:ffff:ffff:ffff:ffff:ffff:ffff:ffff", ALLOW],
      ["2002::", "2002::/16"],
      ["2002:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "2002::/16"],
      ["2003::", ALLOW],
      ["2620:4f:7fff:ffff:ffff:ffff:ffff:ffff", ALLOW],
      ["2620:4f:8000::", "2620:4f:8000::/48"],
      ["2620:4f:8000:ffff:ffff:ffff:ffff:ffff", "2620:4f:8000::/48"],
      ["2620:4f:8001::", ALLOW],
      ["3ffe:ffff:ffff:ffff:ffff:ffff:ffff:ffff", ALLOW],
      ["3fff::", "3fff::/20"],
      ["3fff:fff:ffff:ffff:ffff:ffff:ffff:ffff", "3fff::/20"],
      ["3fff:1000::", ALLOW],
      ["3fff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", ALLOW],
      ["4000::", OUTSIDE],
    ]),
  )("%s → %s", (address, expected) => expectVerdict(address, expected));
});

describe("IPv4-mapped ::ffff:0:0/96 (RFC 4291): judged by the IPv4 table", () => {
  it.each([
    [
      "::ffff:127.0.0.1",
      "127.0.0.0/8",
      "::ffff:7f00:1 is IPv4-mapped 127.0.0.1, which is Loopback (127.0.0.0/8, RFC 1122)",
    ],
    [
      "::ffff:7f00:1",
      "127.0.0.0/8",
      "::ffff:7f00:1 is IPv4-mapped 127.0.0.1, which is Loopback (127.0.0.0/8, RFC 1122)",
    ],
    [
      "::ffff:169.254.169.254",
      "169.254.0.0/16",
      "::ffff:a9fe:a9fe is IPv4-mapped 169.254.169.254, which is Link-Local (169.254.0.0/16, RFC 3927; cloud metadata services live here)",
    ],
    [
      "0:0:0:0:0:ffff:a00:1",
      "10.0.0.0/8",
      "::ffff:a00:1 is IPv4-mapped 10.0.0.1, which is Private-Use (10.0.0.0/8, RFC 1918)",
    ],
  ])("%s is refused as %s", (address, cidr, reason) => {
    const refusal = refused(classifyAddress(address, STRICT));
    expect(refusal.range?.cidr).toBe(cidr);
    expect(refusal.reason).toBe(reason);
  });

  it.each([
    ["::ffff:8.8.8.8", "::ffff:808:808"],
    ["::ffff:808:808", "::ffff:808:808"],
  ])("%s (public) is allowed as %s", (address, canonical) => {
    expect(classifyAddress(address, STRICT)).toEqual({ allowed: true, address: canonical });
  });
});

describe("embedded IPv4 that a relay can reach: always denied", () => {
  it.each([
    ["::127.0.0.1", "::7f00:1", "::/96", "127.0.0.1"],
    ["::7f00:1", "::7f00:1", "::/96", "127.0.0.1"],
    ["::8.8.8.8", "::808:808", "::/96", "8.8.8.8"],
    ["2002:808:808::1", "2002:808:808::1", "2002::/16", "8.8.8.8"],
    ["2002:c000:201::1", "2002:c000:201::1", "2002::/16", "192.0.2.1"],
    // RFC 4380 §4 example shape: server 65.54.227.120, client 192.0.2.45 (obfuscated).
    [
      "2001:0:4136:e378:8000:63bf:3fff:fdd2",
      "2001:0:4136:e378:8000:63bf:3fff:fdd2",
      "2001::/32",
      "192.0.2.45",
    ],
  ])("%s (canonical %s) is refused by %s, naming %s", (address, canonical, cidr, embedded) => {
    for (const with_ of [STRICT, NAT64]) {
      const refusal = refused(classifyAddress(address, with_));
      expect(refusal.address).toBe(canonical);
      expect(refusal.range?.cidr).toBe(cidr);
      expect(refusal.reason).toContain(embedded);
      expect(refusal.reason).toContain("a relay behind it can reach any IPv4 address");
    }
  });
});

describe("cloud metadata addresses", () => {
  it.each([
    ["169.254.169.254", "169.254.0.0/16", "cloud metadata services live here"],
    ["169.254.170.2", "169.254.0.0/16", "Link-Local"],
    ["100.100.100.200", "100.64.0.0/10", "Alibaba"],
    ["168.63.129.16", "168.63.129.16/32", "Azure WireServer"],
    ["192.0.0.192", "192.0.0.0/24", "Oracle"],
    ["fd00:ec2::254", "fc00::/7", "fd00:ec2::254"],
  ])("%s is refused by %s", (address, cidr, mention) => {
    const refusal = refused(classifyAddress(address, STRICT));
    expect(refusal.range?.cidr).toBe(cidr);
    expect(refusal.reason).toContain(mention);
  });

  it("names the address, range, name and RFC in one reason", () => {
    expect(classifyAddress("169.254.169.254", STRICT)).toEqual({
      allowed: false,
      address: "169.254.169.254",
      reason:
        "169.254.169.254 is in 169.254.0.0/16 (Link-Local, RFC 3927; cloud metadata services live here)",
      range: { cidr: "169.254.0.0/16", name: "Link-Local", rfc: "RFC 3927" },
    });
  });
});

describe("public addresses", () => {
  it.each(["8.8.8.8", "1.1.1.1", "2606:4700:4700::1111", "2a00:1450:4001:80e::200e", "2001:4860:4860::8888"])(
    "%s is allowed",
    (address) => {
      expect(classifyAddress(address, STRICT)).toEqual({ allowed: true, address });
    },
  );

  it("returns the canonical IPv6 text, which is what the caller dials", () => {
    expect(classifyAddress("2606:4700:4700:0:0:0:0:1111", STRICT)).toEqual({
      allowed: true,
      address: "2606:4700:4700::1111",
    });
    expect(classifyAddress("2A00:1450:4001:80E::200E", STRICT)).toEqual({
      allowed: true,
      address: "2a00:1450:4001:80e::200e",
    });
  });
});

describe("input forms", () => {
  it.each([
    "127.1",
    "0x7f.1",
    "0x7f.0x0.0x0.0x1",
    "2130706433",
    "017700000001",
    "0177.0.0.1",
    "127.000.000.001",
    "010.0.0.1",
    "0",
  ])("non-canonical IPv4 %j is refused as not canonical", (address) => {
    const refusal = refused(classifyAddress(address, STRICT));
    expect(refusal.reason).toContain("is not a canonical IP address");
    expect(refusal.range).toBeUndefined();
    expect(isIpLiteral(address)).toBe(false);
  });

  it.each([
    ["[::1]", "::1/128", "::1"],
    ["[2606:4700:4700::1111]", ALLOW, "2606:4700:4700::1111"],
    ["fe80::1%eth0", "fe80::/10", "fe80::1"],
    ["[fe80::1%25en0]", "fe80::/10", "fe80::1"],
    ["::1%lo0", "::1/128", "::1"],
    ["2606:4700:4700::1111%eth0", ALLOW, "2606:4700:4700::1111"],
  ])("%s is judged as %s (address %s)", (address, expected, canonical) => {
    const verdict = classifyAddress(address, STRICT);
    expect(verdict.address).toBe(canonical);
    if (expected === ALLOW) expect(verdict.allowed).toBe(true);
    else expect(refused(verdict).range?.cidr).toBe(expected);
  });

  it.each([
    "",
    "localhost",
    "example.com",
    "127.0.0.1.",
    "1.2.3.4.5",
    "256.0.0.1",
    "08.0.0.1",
    "[127.0.0.1]",
    "[::1",
    "::1]",
    "1::2::3",
    "::1]@evil.com/x[",
    "2606:4700:4700::1111]/x[",
    "fe80::1 ",
    " 8.8.8.8",
    "8.8.8.8%eth0",
    "127.0.0.1\n",
    "::g",
    "x".repeat(10_000),
  ])("garbage %j is refused as not an IP address", (address) => {
    const refusal = refused(classifyAddress(address, STRICT));
    expect(refusal.reason).toContain("is not an IP address");
    expect(refusal.reason.length).toBeLessThan(200);
    expect(refusal.reason).not.toContain("\n");
    expect(isIpLiteral(address)).toBe(false);
  });

  it.each([null, undefined, 42, {}, ["127.0.0.1"]])("non-string %j is refused without throwing", (value) => {
    expect(classifyAddress(value as unknown as string, STRICT).allowed).toBe(false);
    expect(isIpLiteral(value as unknown as string)).toBe(false);
  });
});

describe("isIpLiteral", () => {
  it.each([
    ["127.0.0.1", true],
    ["8.8.8.8", true],
    ["::1", true],
    ["[::1]", true],
    ["[::ffff:7f00:1]", true],
    ["2606:4700:4700::1111", true],
    ["example.com", false],
    ["localhost", false],
    ["127.1", false],
    ["[127.0.0.1]", false],
    ["[::1", false],
  ])("%s → %s", (host, expected) => {
    expect(isIpLiteral(host)).toBe(expected);
  });
});

describe("operator allowCidrs and denyCidrs", () => {
  it("allowCidrs lets 127.0.0.1/32 through while 127.0.0.2 stays denied", () => {
    const local = rules({ allowCidrs: ["127.0.0.1/32"] });
    expect(classifyAddress("127.0.0.1", local)).toEqual({ allowed: true, address: "127.0.0.1" });
    expect(refused(classifyAddress("127.0.0.2", local)).range?.cidr).toBe("127.0.0.0/8");
    expect(refused(classifyAddress("127.0.0.1", STRICT)).range?.cidr).toBe("127.0.0.0/8");
  });

  it("an IPv4 allowCidrs entry matches the IPv4-mapped form", () => {
    const local = rules({ allowCidrs: ["127.0.0.1/32"] });
    expect(classifyAddress("::ffff:7f00:1", local)).toEqual({ allowed: true, address: "::ffff:7f00:1" });
  });

  it("an IPv4 allowCidrs entry does not open the NAT64 form of its addresses, allowNat64 or not", () => {
    // 64:ff9b::a01:203 is 10.1.2.3 through a NAT64 gateway: opening the private range for direct
    // connections must not open it through the gateway (README, Egress).
    for (const allowNat64 of [false, true]) {
      const lan = rules({ allowCidrs: ["10.1.0.0/16"], allowNat64 });
      expect(classifyAddress("10.1.2.3", lan).allowed).toBe(true);
      expect(classifyAddress("64:ff9b::a01:203", lan).allowed).toBe(false);
    }
  });

  it("an IPv6 allowCidrs entry lets its range through", () => {
    const vpc = rules({ allowCidrs: ["fd00:ec2::/32"] });
    expect(classifyAddress("fd00:ec2::10", vpc)).toEqual({ allowed: true, address: "fd00:ec2::10" });
    expect(refused(classifyAddress("fd01::10", vpc)).range?.cidr).toBe("fc00::/7");
  });

  it("denyCidrs refuses a public address, naming the entry", () => {
    const denied = rules({ denyCidrs: ["8.8.8.0/24"] });
    expect(classifyAddress("8.8.8.8", denied)).toEqual({
      allowed: false,
      address: "8.8.8.8",
      reason: "8.8.8.8 is in 8.8.8.0/24 (denyCidrs[0], operator config)",
      range: { cidr: "8.8.8.0/24", name: "denyCidrs[0]", rfc: "operator config" },
    });
    expect(classifyAddress("8.8.4.4", denied)).toEqual({ allowed: true, address: "8.8.4.4" });
  });

  it("an IPv4 denyCidrs entry also refuses the mapped and decoded NAT64 forms", () => {
    const denied = rules({ denyCidrs: ["8.8.8.0/24"], allowNat64: true });
    expect(refused(classifyAddress("::ffff:808:808", denied)).range?.cidr).toBe("8.8.8.0/24");
    expect(refused(classifyAddress("64:ff9b::808:808", denied)).range?.cidr).toBe("8.8.8.0/24");
  });

  it("denyCidrs wins over allowCidrs", () => {
    const both = rules({ allowCidrs: ["127.0.0.0/8"], denyCidrs: ["127.0.0.1/32"] });
    const refusal = refused(classifyAddress("127.0.0.1", both));
    expect(refusal.range).toEqual({ cidr: "127.0.0.1/32", name: "denyCidrs[0]", rfc: "operator config" });
    expect(refusal.reason).toContain("wins over 127.0.0.0/8 (allowCidrs[0])");
    expect(classifyAddress("127.0.0.2", both)).toEqual({ allowed: true, address: "127.0.0.2" });
  });

  it.each(["::/0", "::/64", "::/80", "::fffe:0:0/95"])(
    "an IPv6 denyCidrs range %s around ::ffff:0:0/96 judges a mapped address as its IPv4, as it does the IPv4",
    (cidr) => {
      const denied = rules({ denyCidrs: [cidr] });
      expect(classifyAddress("8.8.8.8", denied).allowed).toBe(true);
      expect(classifyAddress("::ffff:808:808", denied)).toEqual({ allowed: true, address: "::ffff:808:808" });
      expect(classifyAddress("::ffff:8.8.8.8", denied).allowed).toBe(true);
      // The built-in table still judges the IPv4 inside.
      expect(refused(classifyAddress("::ffff:7f00:1", denied)).range?.cidr).toBe("127.0.0.0/8");
      // An IPv4 entry beside it denies both spellings.
      const both = rules({ denyCidrs: [cidr, "8.8.8.0/24"] });
      expect(refused(classifyAddress("8.8.8.8", both)).range?.cidr).toBe("8.8.8.0/24");
      expect(refused(classifyAddress("::ffff:808:808", both)).range?.cidr).toBe("8.8.8.0/24");
    },
  );

  it("::/0 in denyCidrs still refuses every IPv6 address that is not IPv4-mapped", () => {
    const denied = rules({ denyCidrs: ["::/0"] });
    expect(refused(classifyAddress("2606:4700:4700::1111", denied)).range?.cidr).toBe("::/0");
    expect(
      refused(classifyAddress("64:ff9b::808:808", rules({ denyCidrs: ["::/0"], allowNat64: true }))).range
        ?.cidr,
    ).toBe("::/0");
  });

  it("an IPv6 denyCidrs entry refuses a public IPv6 address", () => {
    const denied = rules({ denyCidrs: ["2606:4700::/32"] });
    expect(refused(classifyAddress("2606:4700:4700::1111", denied)).range?.cidr).toBe("2606:4700::/32");
  });
});

describe("metadataOpened", () => {
  it("lists the cloud metadata addresses each allowCidrs entry opens and no denyCidrs entry closes", () => {
    const opened = metadataOpened(
      rules({ allowCidrs: ["10.0.0.0/8", "0.0.0.0/0", "fd00::/8"], denyCidrs: ["169.254.0.0/16"] }),
    );
    expect(opened.map((o) => [o.index, o.address, o.deny])).toEqual([
      [1, "100.100.100.200", "100.100.100.200/32"],
      [1, "192.0.0.192", "192.0.0.192/32"],
      [1, "168.63.129.16", "168.63.129.16/32"],
      [2, "fd00:ec2::254", "fd00:ec2::254/128"],
      [2, "fd00:ec2::23", "fd00:ec2::23/128"],
    ]);
    expect(opened[3]?.service).toBe("the AWS instance metadata service over IPv6");
    expect(metadataOpened(STRICT)).toEqual([]);
  });
});

describe("compileAddressRules", () => {
  it("compiles canonical IPv4 and IPv6 CIDRs without errors", () => {
    const { errors } = compileAddressRules({
      allowCidrs: ["10.0.0.0/8", "127.0.0.1/32", "fd00::/8", "0.0.0.0/0"],
      denyCidrs: ["2606:4700::/32", "::/0"],
      allowNat64: true,
    });
    expect(errors).toEqual([]);
  });

  it.each([
    ["10.0.0.0/33", '"10.0.0.0/33" is not a CIDR (prefix length 33 is longer than 32)'],
    ["fd00::/129", '"fd00::/129" is not a CIDR (prefix length 129 is longer than 128)'],
    ["10.1/8", "legacy IPv4 spelling"],
    ["0x0a.0.0.0/8", "legacy IPv4 spelling"],
    ["010.0.0.0/8", "legacy IPv4 spelling"],
    ["10.0.0.0", "expected address/prefix"],
    ["10.0.0.0/8/8", "expected address/prefix"],
    ["10.0.0.0/08", "bad prefix length"],
    ["10.0.0.0/", "bad prefix length"],
    ["10.0.0.0/-1", "bad prefix length"],
    ["example.com/8", "bad address"],
    ["[fd00::]/8", "remove the brackets"],
    ["fe80::%eth0/64", "zone ids are not allowed"],
    ["fd00::g/8", "bad address"],
    ["1::2::3/64", "bad address"],
    ["10.0.0.1/8", "has host bits set (did you mean 10.0.0.0/8?)"],
    ["fd00::1/8", "has host bits set (did you mean fd00::/8?)"],
    [
      "::ffff:10.0.0.5/128",
      "is an IPv4-mapped range; write it as IPv4, 10.0.0.5/32, which covers both spellings",
    ],
    ["::ffff:a00:0/104", "write it as IPv4, 10.0.0.0/8,"],
    ["::ffff:0:0/96", "write it as IPv4, 0.0.0.0/0,"],
  ])("rejects %j", (cidr, message) => {
    const { errors, rules: compiled } = compileAddressRules({ allowCidrs: [cidr] });
    expect(errors).toHaveLength(1);
    expect(errors[0]?.field).toBe("allowCidrs");
    expect(errors[0]?.index).toBe(0);
    expect(errors[0]?.message).toContain(message);
    // The path is the caller's to show ($.egress.allowCidrs[0]), not repeated in the message.
    expect(errors[0]?.message).not.toMatch(/^allowCidrs/);
    // A rejected entry allows nothing.
    expect(classifyAddress("10.0.0.1", compiled).allowed).toBe(false);
  });

  it("refuses a deny written in IPv4-mapped form, which would never match the plain IPv4 answer", () => {
    const { errors, rules: compiled } = compileAddressRules({
      allowCidrs: ["10.0.0.0/8"],
      denyCidrs: ["::ffff:10.0.0.5/128"],
    });
    expect(errors.map((e) => e.message)).toEqual([
      '"::ffff:10.0.0.5/128" is an IPv4-mapped range; write it as IPv4, 10.0.0.5/32, which covers both spellings',
    ]);
    // Written as IPv4 it denies both spellings.
    const fixed = rules({ allowCidrs: ["10.0.0.0/8"], denyCidrs: ["10.0.0.5/32"] });
    expect(classifyAddress("10.0.0.5", fixed).allowed).toBe(false);
    expect(classifyAddress("::ffff:a00:5", fixed).allowed).toBe(false);
    expect(classifyAddress("10.0.0.6", fixed).allowed).toBe(true);
    expect(compiled.deny).toEqual([]);
  });

  it("names the field and index of each bad entry", () => {
    const { errors } = compileAddressRules({
      allowCidrs: ["10.0.0.0/8", "10.0.0.0/33"],
      denyCidrs: ["fd00::/8", "[::1]/128", 7 as unknown as string],
    });
    expect(errors.map((e) => [e.field, e.index])).toEqual([
      ["allowCidrs", 1],
      ["denyCidrs", 1],
      ["denyCidrs", 2],
    ]);
    expect(errors[0]?.message).toBe('"10.0.0.0/33" is not a CIDR (prefix length 33 is longer than 32)');
  });

  it("reads an IPv6 CIDR with a dotted tail the way WHATWG URL does, not as mapped", () => {
    // ipaddr.js alone parses ::127.0.0.1 as ::ffff:7f00:1.
    const compat = rules({ allowCidrs: ["::127.0.0.1/128"] });
    expect(classifyAddress("::7f00:1", compat).allowed).toBe(true);
    expect(classifyAddress("::ffff:7f00:1", compat).allowed).toBe(false);
  });

  it("allowNat64 is off unless exactly true", () => {
    const loose = compileAddressRules({ allowNat64: "yes" as unknown as boolean }).rules;
    expect(classifyAddress("64:ff9b::808:808", loose).allowed).toBe(false);
  });
});

describe("the exported tables", () => {
  it("list every IPv4 row of ssrf.md §3.1 once", () => {
    expect(IPV4_DENY.map((r) => r.cidr).sort()).toEqual(
      [
        "0.0.0.0/8",
        "10.0.0.0/8",
        "100.64.0.0/10",
        "127.0.0.0/8",
        "168.63.129.16/32",
        "169.254.0.0/16",
        "172.16.0.0/12",
        "192.0.0.0/24",
        "192.0.2.0/24",
        "192.168.0.0/16",
        "192.175.48.0/24",
        "192.31.196.0/24",
        "192.52.193.0/24",
        "192.88.99.0/24",
        "198.18.0.0/15",
        "198.51.100.0/24",
        "203.0.113.0/24",
        "224.0.0.0/4",
        "240.0.0.0/4",
      ].sort(),
    );
  });

  it("list every IPv6 row of ssrf.md §3.2 once, plus Teredo", () => {
    expect(IPV6_DENY.map((r) => r.cidr).sort()).toEqual(
      [
        "::/128",
        "::1/128",
        "::ffff:0:0/96",
        "::/96",
        "::ffff:0:0:0/96",
        "64:ff9b::/96",
        "64:ff9b:1::/48",
        "100::/64",
        "100:0:0:1::/64",
        "5f00::/16",
        "fc00::/7",
        "fe80::/10",
        "fec0::/10",
        "ff00::/8",
        "2001::/32",
        "2001::/23",
        "2001:db8::/32",
        "2002::/16",
        "2620:4f:8000::/48",
        "3fff::/20",
      ].sort(),
    );
  });

  // The first addresses are in the tables above; nested rows (::/128 in ::/96, Teredo in
  // 2001::/23) mean only the last address is sure to land on its own row.
  it.each([...IPV4_DENY, ...IPV6_DENY.filter((r) => r.cidr !== "::ffff:0:0/96")].map((r) => [r.cidr, r]))(
    "row %s refuses its last address with its own name",
    (_, row) => {
      const last = row.cidr.includes(":")
        ? ipaddr.IPv6.broadcastAddressFromCIDR(row.cidr).toString()
        : ipaddr.IPv4.broadcastAddressFromCIDR(row.cidr).toString();
      const refusal = refused(classifyAddress(last, STRICT));
      expect(refusal.range).toEqual(row);
      expect(refusal.reason.startsWith(`${last} is in ${row.cidr} (${row.name}, ${row.rfc}`)).toBe(true);
    },
  );
});

describe("operator config: allowCidrs may not open an IPv6 range that carries IPv4 addresses", () => {
  it.each([
    ["64:ff9b::/96", /NAT64.*allowNat64/],
    ["64:ff9b::a9fe:a900/120", /NAT64/],
    ["64:ff9b:1::/48", /local-use NAT64/],
    ["2002::/16", /6to4/],
    ["2001::/32", /Teredo/],
    ["2001::/16", /Teredo/],
    ["::/96", /IPv4-compatible/],
    ["::/0", /./],
    ["::fffe:0:0/95", /IPv4-mapped\).*judged as the IPv4 address they carry.*open the IPv4 range instead/],
  ])("refuses %s", (cidr, message) => {
    const { errors } = compileAddressRules({ allowCidrs: [cidr] });
    expect(errors).toHaveLength(1);
    expect(errors[0]?.message).toMatch(message);
    // Not opened: the metadata address inside stays refused.
    expect(
      classifyAddress("64:ff9b::a9fe:a9fe", compileAddressRules({ allowCidrs: [cidr] }).rules).allowed,
    ).toBe(false);
  });

  it.each([
    ["::1/128"],
    ["::/127"],
    ["64:ff9b::808:808/128"],
    ["fd00::/8"],
    ["2001:db8::/32"],
    ["2600::/16"],
  ])("still allows %s", (cidr) => {
    expect(compileAddressRules({ allowCidrs: [cidr] }).errors).toEqual([]);
  });

  it("leaves denyCidrs free to name them", () => {
    expect(compileAddressRules({ denyCidrs: ["2002::/16"] }).errors).toEqual([]);
  });
});

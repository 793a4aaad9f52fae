/** `hookgate egress-check`: one JSON line, exit 0 allow, 1 deny, 2 usage; never connects. */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { runCli } from "../support/process.js";
import { tempDir } from "../support/temp.js";

const check = async (...args: string[]) => {
  const { code, stdout, stderr } = await runCli(["egress-check", ...args]);
  return { code, line: stdout.trim() ? JSON.parse(stdout) : undefined, stderr };
};

describe("hookgate egress-check", () => {
  it("allows a public address and says so", async () => {
    const { code, line } = await check("https://93.184.215.14/hook");
    expect(code).toBe(0);
    expect(line).toEqual({
      url: "https://93.184.215.14/hook",
      decision: "allow",
      reason: expect.stringMatching(/public/),
      stage: "address",
    });
  });

  it.each([
    ["http://169.254.169.254/latest/meta-data/", "address", /169\.254\.0\.0\/16.*RFC 3927/],
    ["http://0x7f.1/", "address", /127\.0\.0\.0\/8/],
    ["http://[::ffff:127.0.0.1]/", "address", /127\.0\.0\.1/],
    ["http://[64:ff9b::808:808]/", "address", /NAT64|64:ff9b/],
    ["http://localhost:8080/", "name", /localhost/],
    ["file:///etc/passwd", "url", /scheme|http/],
    ["https://a:b@example.com/", "url", /userinfo/],
  ])("denies %s at the %s stage", async (url, stage, reason) => {
    const { code, line } = await check(url);
    expect(code).toBe(1);
    expect(line).toMatchObject({ decision: "deny", stage });
    expect(line.reason).toMatch(reason);
  });

  it("answers DNS from --resolve, curl style, and refuses a name with any blocked answer", async () => {
    const ok = await check("https://hooks.example.com/x", "--resolve", "hooks.example.com:93.184.215.14");
    expect(ok.code).toBe(0);
    const mixed = await check(
      "https://HOOKS.example.com./x",
      "--resolve",
      "hooks.example.com:93.184.215.14",
      "--resolve",
      "hooks.example.com:[fd00:ec2::254]",
    );
    expect(mixed.code).toBe(1);
    expect(mixed.line.reason).toMatch(/fd00:ec2::254/);
  });

  it("answers from --resolve for an IDN host however either side spells it, never asking the system resolver", async () => {
    const unicode = await check("https://bücher.example/x", "--resolve", "bücher.example:127.0.0.1");
    expect(unicode.code).toBe(1);
    expect(unicode.line).toMatchObject({ decision: "deny", stage: "address" });
    expect(unicode.line.reason).toMatch(/xn--bcher-kva\.example resolves to 127\.0\.0\.1/);
    const punycode = await check(
      "https://xn--bcher-kva.example/x",
      "--resolve",
      "BÜCHER.example.:93.184.215.14",
    );
    expect(punycode.code).toBe(0);
    expect(punycode.line.reason).toMatch(/93\.184\.215\.14 is a public address/);
    const bad = await check("https://x.example/", "--resolve", "x.example/a:127.0.0.1");
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/"x\.example\/a" is not a host name/);
  });

  it("applies --allow globs and a policy's egress section", async () => {
    const allowed = await check(
      "https://hooks.slack.com/services/T/B/x",
      "--allow",
      "https://hooks.slack.com/services/*",
      "--resolve",
      "hooks.slack.com:93.184.215.14",
    );
    expect(allowed.code).toBe(0);
    const other = await check(
      "https://evil.example/x",
      "--allow",
      "https://hooks.slack.com/services/*",
      "--resolve",
      "evil.example:93.184.215.14",
    );
    expect(other.line).toMatchObject({ decision: "deny", stage: "allowlist" });

    const dir = tempDir("egress");
    const policy = join(dir, "policy.json");
    writeFileSync(
      policy,
      JSON.stringify({
        version: 1,
        rules: [],
        egress: { allowedHttpHookUrls: ["http://127.0.0.1:*/*"], allowCidrs: ["127.0.0.1/32"] },
      }),
    );
    const opened = await check("http://127.0.0.1:9000/hook", "--policy", policy);
    expect(opened.code).toBe(0);
    expect(opened.line.reason).toBe("allowed: 127.0.0.1 is opened by egress.allowCidrs");
    expect((await check("http://127.0.0.2:9000/hook", "--policy", policy)).code).toBe(1);
    const nat64Policy = join(dir, "nat64.json");
    writeFileSync(nat64Policy, JSON.stringify({ version: 1, rules: [], egress: { allowNat64: true } }));
    const one = join(dir, "nat64-one.json");
    writeFileSync(
      one,
      JSON.stringify({ version: 1, rules: [], egress: { allowCidrs: ["64:ff9b::808:808/128"] } }),
    );
    expect((await check("https://[64:ff9b::808:808]/hook", "--policy", one)).line.reason).toBe(
      "allowed: 64:ff9b::808:808 is opened by egress.allowCidrs",
    );
    const nat64 = await check("https://[64:ff9b::5db8:d70e]/hook", "--policy", nat64Policy);
    expect(nat64.line.reason).toBe(
      "allowed: 64:ff9b::5db8:d70e is a NAT64 address of a public one (egress.allowNat64)",
    );
    // A policy it cannot read is not a deny (exit 1), which a CI gate would take for one.
    const missing = await check("http://127.0.0.1:9000/hook", "--policy", join(dir, "missing.json"));
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/missing\.json does not exist/);
  });

  it("names a policy file it cannot load and what is wrong with it, as check does, without the usage", async () => {
    const dir = tempDir("egress-check");
    const missing = join(dir, "missing.json");
    const invalid = join(dir, "invalid.json");
    writeFileSync(
      invalid,
      JSON.stringify({ version: 1, egress: { denyCidrs: ["93.184.215.14"] }, rules: [] }),
    );
    const cases: [string, RegExp][] = [
      [missing, /^error: \$: .*missing\.json does not exist; [^\n]*\n.*missing\.json: no such file\n$/],
      [
        invalid,
        /^error: \$\.egress\.denyCidrs\[0\]: "93\.184\.215\.14" is not a CIDR[^\n]*\n.*invalid\.json: invalid \(1 problem\)\n$/,
      ],
    ];
    for (const [policy, said] of cases) {
      const result = await check("https://93.184.215.14/hook", "--policy", policy);
      expect(result.code).toBe(2);
      expect(result.line).toBeUndefined();
      expect(result.stderr).toMatch(said);
      // The same words as check's, which exits 1 for it: a policy it cannot load is no usage error.
      const checked = await runCli(["check", policy]);
      expect(checked.code).toBe(1);
      expect(result.stderr).toBe(checked.stdout);
    }
  });

  it("leaves a URL's user name and password out of its report", async () => {
    const { line } = await check("https://alice:S3cretPW@example.com/x");
    expect(line).toMatchObject({ decision: "deny", url: "https://example.com/x" });
    expect(JSON.stringify(line)).not.toMatch(/S3cretPW|alice/);
    // Not even a valid URL (a port out of range): still left out.
    const invalid = await check("http://alice:S3cretPW@example.com:99999/x");
    expect(invalid.line).toMatchObject({ decision: "deny", url: "http://example.com:99999/x" });
    // Nor with backslashes or no slashes, which the URL parser reads the same way.
    for (const text of [
      "http:\\\\alice:S3cretPW@example.com:99999/",
      "http:alice:S3cretPW@example.com:99999/",
    ]) {
      const odd = await check(text);
      expect(JSON.stringify(odd.line)).not.toMatch(/S3cretPW|alice/);
    }
  });

  it("says how to open an address the guard refuses", async () => {
    const { line } = await check("http://127.0.0.1:9911/in");
    expect(line.reason).toMatch(
      /Loopback.*; to reach it on purpose, open it in the policy's egress\.allowCidrs \("127\.0\.0\.1\/32"\)$/,
    );
  });

  it.each([
    // The loader refuses a mapped range: the IPv4 one is what opens it.
    [
      "http://[::ffff:127.0.0.1]/",
      /open its IPv4 address in the policy's egress\.allowCidrs \("127\.0\.0\.1\/32"\)$/,
    ],
    ["http://[::1]:8080/", /open it in the policy's egress\.allowCidrs \("::1\/128"\)$/],
    // allowNat64 judges the IPv4 address inside, for a public one only; the metadata address gets no way in.
    [
      "http://[64:ff9b::808:808]/",
      /; to reach NAT64 addresses of public IPv4 ones, set the policy's egress\.allowNat64$/,
    ],
    ["http://[64:ff9b::a9fe:a9fe]/", /denied unless allowNat64 is set\)$/],
    // A cloud metadata address gets none, in any spelling: check warns about an entry opening one.
    [
      "http://169.254.169.254/latest/meta-data/",
      /; it is the instance metadata service of AWS, GCP, Azure and Oracle Cloud, which no hook should reach$/,
    ],
    [
      "http://[::ffff:a9fe:a9fe]/",
      /; it is the instance metadata service of AWS.*, which no hook should reach$/,
    ],
    [
      "http://[fd00:ec2::254]/",
      /; it is the AWS instance metadata service over IPv6, which no hook should reach$/,
    ],
    ["http://[2002:7f00:1::]/", /so it is always denied\)$/],
    ["http://[::7f00:1]/", /so it is always denied\)$/],
  ])("says how to open %s only where a setting can", async (url, hint) => {
    const { line } = await check(url);
    expect(line.reason).toMatch(hint);
  });

  it("says why a URL matched no pattern when one of them has no path", async () => {
    const { code, line } = await check(
      "https://example.com/x",
      "--allow",
      "https://example.com",
      "--resolve",
      "example.com:93.184.215.14",
    );
    expect(code).toBe(1);
    expect(line.reason).toMatch(
      /; allowedHttpHookUrls\[0\] has no path, so it matches the path \/ only; write https:\/\/example\.com\/\* for any path/,
    );
  });

  it("points at the policy's own deny range rather than allowCidrs, which it wins over", async () => {
    const dir = tempDir("egress-check");
    const policy = join(dir, "policy.json");
    writeFileSync(
      policy,
      JSON.stringify({
        version: 1,
        egress: { denyCidrs: ["1.1.1.0/24"], allowCidrs: ["1.1.1.1/32"] },
        rules: [],
      }),
    );
    const { line } = await check("--policy", policy, "http://1.1.1.1/");
    expect(line.reason).toMatch(
      /which wins over 1\.1\.1\.1\/32 \(allowCidrs\[0\]\); denyCidrs\[0\] is the policy's own deny range, which no allowCidrs entry overrides: narrow or remove it to reach this address$/,
    );
  });

  it("does not send to allowCidrs an address that a deny range of the policy's own covers behind a built-in one", async () => {
    const dir = tempDir("egress-check");
    const policy = join(dir, "policy.json");
    writeFileSync(
      policy,
      JSON.stringify({ version: 1, egress: { denyCidrs: ["10.0.0.0/8"], allowNat64: true }, rules: [] }),
    );
    // The built-in Private-Use range refuses it first; the policy's deny range would refuse it
    // again with "10.1.2.3/32" opened.
    for (const url of ["http://10.1.2.3/", "http://[::ffff:10.1.2.3]/"]) {
      const { line } = await check("--policy", policy, url);
      expect(line.reason, url).toMatch(
        /Private-Use.*; allowCidrs "10\.1\.2\.3\/32" would not open it: the policy's own deny range denyCidrs\[0\] \(10\.0\.0\.0\/8\) covers it too/,
      );
      expect(line.reason, url).not.toMatch(/to reach it on purpose/);
    }
    // Nor to allowNat64 a NAT64 address whose IPv4 address a deny range covers.
    writeFileSync(policy, JSON.stringify({ version: 1, egress: { denyCidrs: ["8.8.8.0/24"] }, rules: [] }));
    const { line } = await check("--policy", policy, "http://[64:ff9b::808:808]/");
    expect(line.reason).toMatch(/; allowNat64 would not open it: the policy's own deny range denyCidrs\[0\]/);
  });

  it("is a usage error, naming the entry, when a pattern or range is invalid", async () => {
    const { code, line, stderr } = await check(
      "https://hooks.slack.com.evil.net/x",
      "--allow",
      "https://hooks.slack.com*",
      "--resolve",
      "hooks.slack.com.evil.net:93.184.215.14",
    );
    expect(code).toBe(2);
    expect(line).toBeUndefined();
    // Named as given on the command line, not by a policy path that is in no file.
    expect(stderr).toMatch(/^--allow "https:\/\/hooks\.slack\.com\*": has a \* in the host/m);
    expect(stderr).not.toMatch(/allowedHttpHookUrls/);
    // A deny range the gateway would refuse is not dropped (which used to make this an allow).
    const dir = tempDir("egress-check");
    const policy = join(dir, "policy.json");
    writeFileSync(
      policy,
      JSON.stringify({
        version: 1,
        egress: { denyCidrs: ["93.184.215.14"], allowCidrs: ["10.0.0.0/8"] },
        rules: [],
      }),
    );
    const denied = await check("--policy", policy, "http://93.184.215.14/");
    expect(denied.code).toBe(2);
    expect(denied.stderr).toMatch(/denyCidrs/);
  });

  it("exits 2 for a policy the gateway refuses at load (a repeated rule id, a repeated key), not only for bad JSON", async () => {
    const dir = tempDir("egress-check");
    const egress = { allowedHttpHookUrls: ["https://ok.example/*"] };
    const duplicateIds = join(dir, "dup-ids.json");
    writeFileSync(
      duplicateIds,
      JSON.stringify({
        version: 1,
        egress,
        rules: [
          { id: "a", on: "Stop", decide: "block" },
          { id: "a", on: "Stop", decide: "block" },
        ],
      }),
    );
    const duplicateKey = join(dir, "dup-key.json");
    writeFileSync(
      duplicateKey,
      `{"version": 1, "egress": ${JSON.stringify(egress)}, "rules": [], "rules": []}`,
    );
    for (const policy of [duplicateIds, duplicateKey]) {
      const result = await check(
        "https://ok.example/x",
        "--policy",
        policy,
        "--resolve",
        "ok.example:93.184.216.34",
      );
      expect(result.code).toBe(2);
      expect(result.line).toBeUndefined();
      expect(result.stderr).toMatch(/^error: \$\.rules/);
      expect(result.stderr).toContain(`${policy}: invalid`);
    }
  });

  it("is a usage error without a URL or with a bad --resolve", async () => {
    expect((await check()).code).toBe(2);
    expect((await check("https://x.example/", "--resolve", "x.example")).code).toBe(2);
    expect((await check("https://x.example/", "--resolve", "x.example:not-an-ip")).code).toBe(2);
  });

  it("is a usage error for an empty --policy (an unset variable), never a check without the policy", async () => {
    // Read as no policy, the URL was judged with no allowlist: allow, exit 0, where the policy denies.
    const result = await check("https://93.184.215.14/hook", "--policy", "");
    expect([result.code, result.line]).toEqual([2, undefined]);
    expect(result.stderr.split("\n")[0]).toBe(
      "hookgate: --policy is empty (an unset variable?): give the policy file, or leave --policy out",
    );
  });
});

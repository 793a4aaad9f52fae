/**
 * The policy format's own examples (test/fixtures/policy-format, README there), held to what the
 * format says: its example policy loads as written, and it and the examples of its prose decide
 * the events they describe as the format gives. docs/POLICY.md's example is held to differ from
 * the format's only where it says so.
 */
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { lintPolicy } from "../../src/core/policy-lint.js";
import { policyTestCommand } from "../../src/entry/policy-test.js";
import { loaded } from "../support/policy.js";

const fixture = (name: string) =>
  fileURLToPath(new URL(`../fixtures/policy-format/${name}`, import.meta.url));
const json = (path: string): unknown => JSON.parse(readFileSync(path, "utf8"));

/** Every variable the example reads, set, so that only what the file itself says is warned about. */
const ENV: Record<string, string> = {
  HOOKGATE_TOKEN_MOBILE: "mobile-team-token",
  ANTHROPIC_API_KEY: "anthropic-key",
  SLACK_WEBHOOK_URL: "https://hooks.slack.com/services/T0/B0/x",
  SIEM_WHSEC: "whsec_c2VjcmV0",
  GITHUB_TOKEN: "github-token",
  POLICY_TOKEN: "policy-token",
};

/** Runs `hookgate test POLICY CASES` in process and expects every case of the file to pass. */
async function expectEveryCasePasses(policy: string, cases: string) {
  let out = "";
  let err = "";
  const code = await policyTestCommand([fixture(policy), fixture(cases)], {
    out: (text) => {
      out += text;
    },
    err: (text) => {
      err += text;
    },
  });
  const names = (json(fixture(cases)) as { cases: { name: string }[] }).cases.map((c) => c.name);
  expect(err).toBe("");
  expect(out.split("\n").filter((line) => /^(PASS|FAIL) /.test(line))).toEqual(
    names.map((name) => `PASS  ${name}`),
  );
  expect(code).toBe(0);
}

describe("the policy format's example policy", () => {
  it("loads, warning only that the egress guard refuses the hosts it calls and does not allowlist", async () => {
    const { policy, warnings } = await loaded(json(fixture("policy.json")), ENV);
    expect(policy.rules.map((r) => r.id)).toEqual([
      "no-rm-root",
      "ask-force-push",
      "env-files",
      "judge-writes",
      "team-server",
      "run-tests-first",
      "repo-context",
      "tell-slack",
      "ci-on-end",
    ]);
    // The format's defaults and the example's own values, under the format's names.
    expect(policy.defaults).toMatchObject({ onError: "allow", deadlineMs: 5000 });
    expect(policy.auth?.onFailure).toBe("deny");
    expect(policy.models.get("fast")).toMatchObject({ cacheTtlSeconds: 600, maxConcurrent: 8 });
    expect(policy.models.get("fast")?.dailyCallsPerTeam).toBeUndefined();
    // docs/POLICY.md's example adds these three hosts to allowedHttpHookUrls (said under it).
    expect([...warnings, ...lintPolicy(policy)].map((w) => w.path)).toEqual([
      "$.rules[4].forward.url",
      "$.sinks.security.url",
      "$.models.fast",
    ]);
  });

  it("decides each event its rules describe as the format says", async () => {
    await expectEveryCasePasses("policy.json", "policy.test.json");
  });
});

describe("the policy format's prose examples", () => {
  it("decide as the prose says: matcher forms, if rules, where operators, matcher fields, combining", async () => {
    await expectEveryCasePasses("prose.json", "prose.test.json");
  });
});

describe("docs/POLICY.md's example", () => {
  it("is the format's, but for the two changes it states under it", () => {
    const markdown = readFileSync(new URL("../../docs/POLICY.md", import.meta.url), "utf8");
    const documented = JSON.parse(/```json\n([\s\S]*?)\n```/.exec(markdown)?.[1] ?? "null");
    const format = json(fixture("policy.json")) as typeof documented;
    format.egress.allowedHttpHookUrls.push(
      "https://policy.acme.example/*",
      "https://siem.acme.example/*",
      "https://api.anthropic.com/*",
    );
    format.rules[3].prompt.text =
      "ok only if this edit neither adds a secret nor disables a test. $ARGUMENTS";
    expect(documented).toEqual(format);
  });
});

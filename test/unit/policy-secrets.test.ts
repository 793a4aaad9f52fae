import { describe, expect, it } from "vitest";
import { parseForwardResponse } from "../../src/core/forward.js";
import { parseJudgeResponse } from "../../src/core/judge.js";
import { MASK, scrubbedWithout, scrubSecrets } from "../../src/core/mask.js";
import { MIN_SECRET_CHARS } from "../../src/core/policy.js";
import { policyFrom, sha256 } from "../support/policy.js";

const ENV = {
  SLACK_URL: "https://hooks.slack.com/services/T0/B0/plainpath0123456789",
  SIGNING: "signing-secret-value",
  GH: "github-token-value",
  KEY: "model-key-value",
  TEAM_TOKEN: "team-token-value",
  HEADER_TOKEN: "header-token-value",
  NOT_FORWARDED: "only-in-the-global-list",
  SHORT: "1234567",
  UNUSED: "never-referenced-value",
};

describe("Policy.secrets", () => {
  it("holds every env: value, team token and interpolable header variable, longest first", async () => {
    const policy = await policyFrom(
      {
        version: 1,
        auth: {
          tokens: [
            { team: "a", env: "TEAM_TOKEN" },
            { team: "b", sha256: await sha256("hashed") },
          ],
        },
        egress: { httpHookAllowedEnvVars: ["HEADER_TOKEN", "NOT_FORWARDED"] },
        models: { m: { provider: "anthropic", model: "x", apiKey: "env:KEY" } },
        sinks: {
          chat: { type: "slack", url: "env:SLACK_URL" },
          signed: { type: "webhook", url: "https://in.example/x", secret: "env:SIGNING" },
          ci: { type: "github-dispatch", repo: "a/b", eventType: "e", token: "env:GH" },
          short: { type: "webhook", url: "https://in.example/y", secret: "env:SHORT" },
          unset: { type: "webhook", url: "https://in.example/z", secret: "env:NOT_SET" },
        },
        rules: [
          {
            id: "fwd",
            on: "PreToolUse",
            forward: {
              url: "https://policy.example/hook",
              headers: { Authorization: "Bearer $HEADER_TOKEN" },
              allowedEnvVars: ["HEADER_TOKEN", "UNUSED"],
            },
          },
          { id: "n", on: "Stop", notify: ["chat", "signed", "ci", "short", "unset"] },
        ],
      },
      ENV,
    );
    const expected = [
      ENV.SLACK_URL,
      // A receiver that echoes what it was called on quotes the path alone: its long segment.
      "plainpath0123456789",
      ENV.SIGNING,
      ENV.GH,
      ENV.KEY,
      ENV.TEAM_TOKEN,
      ENV.HEADER_TOKEN,
    ].sort((a, b) => b.length - a.length);
    expect(policy.secrets).toEqual(expected);
  });

  it("holds an env: URL's long path segments and long query, never its short segments", async () => {
    const policy = await policyFrom(
      {
        version: 1,
        sinks: {
          a: { type: "webhook", url: "env:WITH_QUERY" },
          b: { type: "webhook", url: "env:ROOT" },
          c: { type: "webhook", url: "env:PLAIN" },
        },
        rules: [{ id: "n", on: "Stop", notify: ["a", "b", "c"] }],
      },
      {
        WITH_QUERY: "https://in.example/in/abcdefghijklmnop?sig=0123456789abcdef",
        ROOT: "https://root.example",
        PLAIN: "https://x.example/v1/hooks",
      },
    );
    expect(policy.secrets).toEqual([
      "https://in.example/in/abcdefghijklmnop?sig=0123456789abcdef",
      "https://x.example/v1/hooks",
      "sig=0123456789abcdef",
      "https://root.example",
      "abcdefghijklmnop",
      // The signature alone, random-looking, as an inline URL's would be.
      "0123456789abcdef",
    ]);
    // An ordinary path in a log line stays readable.
    expect(scrubSecrets("POST /v1/hooks answered", policy.secrets)).toBe("POST /v1/hooks answered");
  });

  it("holds an env: URL's random-looking query values, as an inline URL's: a model's, a sink's", async () => {
    // A judge behind a function key (`?code=…`) that quotes the key alone back in its 401, as
    // the audit detail then did: inline, the URL's value was scrubbed; moved into a variable, not.
    const code = "Zq8xW2pL9vR4tY7uAb3";
    const token = "AbCdEf0123456789GhIjKl";
    const document = (judgeUrl: string, sinkUrl: string) => ({
      version: 1,
      egress: { allowedHttpHookUrls: ["https://*.example/*"] },
      models: { m: { provider: "openai", model: "x", apiKey: "k", url: judgeUrl } },
      sinks: { chat: { type: "webhook", url: sinkUrl } },
      rules: [{ id: "n", on: "Stop", notify: ["chat"] }],
    });
    const env = {
      JUDGE_URL: `https://judge.example/api/judge?api-version=2024-02-15-preview&code=${code}`,
      CHAT_URL: `https://chat.example/v1/messages?key=short&token=${token}`,
    };
    const inline = await policyFrom(document(env.JUDGE_URL, env.CHAT_URL));
    const fromEnv = await policyFrom(document("env:JUDGE_URL", "env:CHAT_URL"), env);
    for (const policy of [inline, fromEnv]) {
      expect(policy.secrets).toEqual(expect.arrayContaining([code, token]));
      expect(scrubSecrets(`invalid code ${code}; bad token ${token}`, policy.secrets)).toBe(
        `invalid code ${MASK}; bad token ${MASK}`,
      );
    }
    // A version is no secret, in a variable's URL or not.
    expect(fromEnv.secrets).not.toContain("2024-02-15-preview");
  });

  it("holds inline API keys and signing secrets too, which are sent just the same", async () => {
    const policy = await policyFrom({
      version: 1,
      models: { m: { provider: "openai", model: "x", apiKey: "inline-api-key" } },
      sinks: { s: { type: "webhook", url: "https://in.example/x", secret: "whsec_aW5saW5lLXNpZ25pbmc=" } },
      rules: [{ id: "n", on: "Stop", notify: ["s"] }],
    });
    expect(policy.secrets).toEqual(["whsec_aW5saW5lLXNpZ25pbmc=", "inline-api-key"]);
  });

  it("holds an inline Slack or Discord webhook URL and its long path segments, as an env: one", async () => {
    // A receiver that echoes the path it was called on (`Cannot POST /services/…`) quotes the
    // secret in a dead letter's reason and the log line about it.
    const policy = await policyFrom({
      version: 1,
      sinks: {
        chat: { type: "slack", url: "https://hooks.slack.com/services/T0000/B0000/XXXXinlineSECRETabcdefgh" },
        ops: { type: "discord", url: "https://discord.com/api/webhooks/123/inlineDiscordTokenValue0123" },
      },
      rules: [{ id: "n", on: "Stop", notify: ["chat", "ops"] }],
    });
    expect(policy.secrets).toEqual(
      expect.arrayContaining(["XXXXinlineSECRETabcdefgh", "inlineDiscordTokenValue0123"]),
    );
    expect(
      scrubSecrets("Cannot POST /services/T0000/B0000/XXXXinlineSECRETabcdefgh", policy.secrets),
    ).not.toContain("inlineSECRET");
  });

  it("holds the random-looking path segments of other inline URLs, and credentials in forward headers", async () => {
    // Before, a webhook receiver's 404 page quoted its path; a downstream server
    // echoed the X-Hook-Auth value it was called with.
    const policy = await policyFrom({
      version: 1,
      egress: { allowedHttpHookUrls: ["https://*.example/*"] },
      sinks: {
        siem: { type: "webhook", url: "https://in.example/fail/9Xk2Lq7Zp4Rt8Vw3Ym6N" },
        n8n: { type: "webhook", url: "https://n8n.example/webhook/3f2c9a1e-5b7d-4c8e-9f10-2a3b4c5d6e7f" },
        chat: {
          type: "webhook",
          url: "https://chat.example/v1/spaces/AAA/messages?key=AIzaSyDdI0hCZtE6vySjMm&token=AbCdEf0123456789GhIjKl",
        },
      },
      models: {
        m: { provider: "openai", model: "x", apiKey: "k", url: "https://llm.example/k/abcd1234efgh5678/v1" },
      },
      rules: [
        { id: "n", on: "Stop", notify: ["siem", "n8n", "chat"] },
        {
          id: "f",
          on: "PreToolUse",
          forward: {
            url: "https://policy.example/hooks/permission-request",
            headers: {
              "X-Hook-Auth": "hgfwd-inline-0123456789abcdef",
              Authorization: "lin_api_0123456789",
              "X-Api-Pass": "rawvalue0123456789",
            },
          },
        },
      ],
    });
    expect(policy.secrets).toEqual(
      expect.arrayContaining([
        "9Xk2Lq7Zp4Rt8Vw3Ym6N",
        "abcd1234efgh5678",
        "hgfwd-inline-0123456789abcdef",
        "lin_api_0123456789",
        "rawvalue0123456789",
        "3f2c9a1e-5b7d-4c8e-9f10-2a3b4c5d6e7f",
        "AIzaSyDdI0hCZtE6vySjMm",
        "AbCdEf0123456789GhIjKl",
      ]),
    );
    // A long word of a path is no secret: scrubbing it would garble every mention.
    expect(policy.secrets).not.toContain("permission-request");
  });

  it("leaves out header values and URL parts that only look like secrets to a looser reading", async () => {
    const policy = await policyFrom({
      version: 1,
      egress: { allowedHttpHookUrls: ["https://*.example/*"] },
      models: {
        m: {
          provider: "openai",
          model: "x",
          apiKey: "k",
          url: "https://az.example/openai/deployments/gpt-4o-2024-08-06/chat/completions?api-version=2024-10-21",
        },
      },
      rules: [
        {
          id: "f",
          on: "PreToolUse",
          forward: {
            url: "https://policy.example/hook",
            headers: { "X-Auth-Scheme": "hmac-sha256", "X-Passthrough-Mode": "transparent" },
          },
        },
      ],
    });
    expect(policy.secrets).toEqual([]);
  });

  it("holds a value pasted with a direction mark and a zero-width space as set, and without them, as its service knows it", async () => {
    const pasted = "\u200epasted-key\u200b-value";
    const policy = await policyFrom(
      { version: 1, models: { m: { provider: "anthropic", model: "x", apiKey: "env:KEY" } }, rules: [] },
      { KEY: pasted },
    );
    expect(policy.secrets).toEqual([pasted, "pasted-key-value"]);
    // So a server or a model that quotes the token it knows is masked, in the agent's texts too.
    expect(scrubbedWithout("token pasted-key-value refused", policy.secrets)).toBe(`token ${MASK} refused`);
  });

  it.each([
    ["a tab", "Qm7vX2pL\t9rT4wZ8kN3"],
    ["a newline", "Qm7vX2pL\n9rT4wZ8kN3"],
    ["a zero-width space", "Qm7vX2pL\u200b9rT4wZ8kN3"],
    ["a zero-width joiner", "Qm7vX2pL\u200d9rT4wZ8kN3"],
    // The agent's texts keep a tab, a newline and the joiners and lose the rest
    // (withoutControlsButLines), and the policy keeps the value as set and without all of them
    // (withoutControls): neither form is what is left of one holding both kinds.
    ["a tab and a zero-width space", "Qm7vX2pL\t9rT4\u200bwZ8kN3"],
    ["a newline and a direction mark", "Qm7vX2pL\n9rT4\u200ewZ8kN3"],
    ["a zero-width joiner and a zero-width space", "Qm7vX2pL\u200d9rT4\u200bwZ8kN3"],
  ])(
    "masks a value holding %s, as the policy has it, in a forward's texts and a model's reason and keys",
    async (_, value) => {
      const policy = await policyFrom(
        { version: 1, models: { m: { provider: "anthropic", model: "x", apiKey: "env:KEY" } }, rules: [] },
        { KEY: value },
      );
      const forward = JSON.stringify({
        systemMessage: `seen ${value}`,
        hookSpecificOutput: {
          hookEventName: "PreToolUse",
          permissionDecision: "deny",
          permissionDecisionReason: `token ${value} refused`,
          additionalContext: `ctx ${value}`,
        },
      });
      expect(parseForwardResponse("r1", 200, forward, "PreToolUse", "claude-code", policy.secrets)).toEqual({
        ok: true,
        value: {
          ruleId: "r1",
          decision: "deny",
          reason: `token ${MASK} refused`,
          context: `ctx ${MASK}`,
          systemMessage: `seen ${MASK}`,
        },
      });
      // A model's verdict as its text answer.
      const judged = (verdict: unknown) =>
        parseJudgeResponse(
          "anthropic",
          200,
          JSON.stringify({
            type: "message",
            content: [{ type: "text", text: JSON.stringify(verdict) }],
            stop_reason: "end_turn",
          }),
          policy.secrets,
        );
      expect(judged({ ok: false, reason: `it sends ${value} out` })).toEqual({
        ok: true,
        value: { ok: false, reason: `it sends ${MASK} out` },
      });
      const named = judged({ ok: true, reason: "fine", [value]: 1 });
      expect(named.ok ? "" : named.error.message).toMatch(/has unexpected keys: \[masked\]$/);
    },
  );

  it.each([
    ["a carriage return", "\r"],
    ["a CRLF", "\r\n"],
    ["a NEL", "\u0085"],
    ["a line separator", "\u2028"],
    ["a paragraph separator", "\u2029"],
    ["a newline", "\n"],
  ])("masks a value that %s splits in a forward's texts and a model's reason", async (_, lineEnd) => {
    const value = "Qm7vX2pL9rT4wZ8kN3";
    const policy = await policyFrom(
      { version: 1, models: { m: { provider: "anthropic", model: "x", apiKey: "env:KEY" } }, rules: [] },
      { KEY: value },
    );
    // Each line end reaches the agent as a newline (withoutControlsButLines); dropped, as a
    // carriage return or a line separator was, it joined the value for the scrub after.
    const split = `${value.slice(0, 8)}${lineEnd}${value.slice(8)}`;
    expect(scrubbedWithout(`token ${split} refused`, policy.secrets)).toBe(`token ${MASK} refused`);
    const forward = JSON.stringify({
      hookSpecificOutput: {
        hookEventName: "PreToolUse",
        permissionDecision: "deny",
        permissionDecisionReason: `token ${split} refused`,
      },
    });
    expect(parseForwardResponse("r1", 200, forward, "PreToolUse", "claude-code", policy.secrets)).toEqual({
      ok: true,
      value: { ruleId: "r1", decision: "deny", reason: `token ${MASK} refused` },
    });
    const judged = parseJudgeResponse(
      "anthropic",
      200,
      JSON.stringify({
        type: "message",
        content: [{ type: "text", text: JSON.stringify({ ok: false, reason: `it sends ${split} out` }) }],
        stop_reason: "end_turn",
      }),
      policy.secrets,
    );
    expect(judged).toEqual({ ok: true, value: { ok: false, reason: `it sends ${MASK} out` } });
  });

  it("keeps the line ends around a masked value, and masks none that only lines joined would spell", () => {
    const secrets = ["Qm7vX2pL9rT4wZ8kN3"];
    expect(scrubbedWithout("one\r\nQm7vX2pL9rT4wZ8kN3\rtwo", secrets)).toBe(`one\n${MASK}\ntwo`);
    expect(scrubbedWithout("Qm7vX2pL\nanother line", secrets)).toBe("Qm7vX2pL\nanother line");
  });

  // A terminal sequence takes the characters after its introducer as its own: `ESC [` before a
  // value's `9r` made `9r` a CSI's parameter and final byte, and the rest of the value showed.
  it.each([
    ["a CSI's introducer", "\u001b["],
    ["a C1 CSI", "\u009b"],
    ["an OSC's introducer", "\u001b]"],
    ["a tab", "\t"],
    ["a zero-width space", "\u200b"],
  ])("masks a value that %s splits", (_, split) => {
    const secrets = ["Qm7vX2pL9rT4wZ8kN3"];
    expect(scrubbedWithout(`key Qm7vX2pL${split}9rT4wZ8kN3 end`, secrets)).toBe(`key ${MASK} end`);
  });

  // Read across the whole introducer only, a value holding `[` with an ESC put before it was not
  // found (its `[` was skipped in the text, not in the value), and the strip took `ESC [` and the
  // character after as a sequence: all of the value but that character showed. A control string
  // so made, ended after the value, took its rest.
  it.each([
    ["[", ""],
    ["]", "\u0007"],
    ["X", "\u0007"],
    ["_", "\u0007"],
  ])("masks a value holding %j, which an ESC put before it makes a sequence's introducer", (second, end) => {
    const value = `Qm7vX2pL${second}9rT4wZ8kN3`;
    const text = `key Qm7vX2pL\u001b${second}9rT4wZ8kN3${end} end`;
    expect(scrubbedWithout(text, [value])).toBe(`key ${MASK} end`);
  });

  // Masked first, the mask was the text after an introducer: `ESC [` took its `[` as a final
  // byte, and `masked]` showed. Cut short, each loses its introducer only.
  it.each([
    ["\u001b[", "["],
    ["\u009b", ""],
    ["\u001b(", "("],
    ["\u001b]", "]"],
  ])("keeps the whole mask after the introducer %j", (introducer, left) => {
    const secrets = ["Qm7vX2pL9rT4wZ8kN3"];
    expect(scrubbedWithout(`key ${introducer}Qm7vX2pL9rT4wZ8kN3 end`, secrets)).toBe(
      `key ${left}${MASK} end`,
    );
  });

  // Read across line ends, the text is copied a unit at a time and made a string some thousands of
  // units at once (escape-controls.ts `stringOfUnits`): one made of many short lines reads whole.
  // Up to 50,000 line ends the text is read by a replace, past them by the copy (mask.ts
  // `MATCHES_REPLACED`): both read a value across one. The text has two more than its short lines
  // (the value's and the last), so 49,998 lines make 50,000 (replaced) and 49,999 make 50,001.
  it.each([10_000, 49_998, 49_999, 60_000])(
    "masks a value split by a line end after %i short lines, and keeps each line",
    (count) => {
      const secrets = ["Qm7vX2pL9rT4wZ8kN3"];
      const lines = "a\r".repeat(count);
      expect(scrubbedWithout(`${lines}key Qm7vX2pL\r9rT4wZ8kN3 end\r`, secrets)).toBe(
        `${"a\n".repeat(count)}key ${MASK} end\n`,
      );
    },
  );

  it("masks a value that a whole colour sequence splits, and keeps the colours out of the text", () => {
    const secrets = ["Qm7vX2pL9rT4wZ8kN3"];
    expect(scrubbedWithout("\u001b[31mkey Qm7vX2pL\u001b[1m9rT4wZ8kN3\u001b[0m end", secrets)).toBe(
      `key ${MASK} end`,
    );
  });

  it(`leaves out values shorter than ${MIN_SECRET_CHARS} characters, and is empty for a policy without secrets`, async () => {
    const short = await policyFrom(
      {
        version: 1,
        models: { m: { provider: "anthropic", model: "x", apiKey: "env:SHORT" } },
        rules: [],
      },
      ENV,
    );
    expect(short.secrets).toEqual([]);
    expect((await policyFrom({ version: 1, rules: [] })).secrets).toEqual([]);
  });
});

describe("Policy.secrets of a URL whose query names its credential", () => {
  it("holds a plain value under a credential's name, from an env: URL and an inline one, and no other parameter", async () => {
    const policy = await policyFrom(
      {
        version: 1,
        models: {
          m: {
            provider: "openai",
            model: "x",
            url: "https://llm.example/v1?code=plaincode2024",
            apiKey: "env:K",
          },
        },
        sinks: { siem: { type: "webhook", url: "env:SIEM_URL", secret: "env:K" } },
        rules: [
          {
            id: "fwd",
            on: "PreToolUse",
            forward: { url: "https://policy.example/hook?sig=plain-sig-value" },
          },
          { id: "n", on: "Stop", notify: ["siem"] },
        ],
      },
      {
        SIEM_URL: "https://siem.example/in?api_key=plainkey2024&team=platform-eng&region_code=eu-central-1",
        K: "whsec_c2VjcmV0LXZhbHVl",
      },
    );
    // A receiver that quotes the key it was sent quotes the value alone, in no shape masking knows.
    const echoed =
      "401: unknown key plainkey2024; bad sig plain-sig-value; code plaincode2024; team platform-eng in eu-central-1";
    // A code with another word before it names no credential (`region_code`, `country_code`).
    expect(scrubSecrets(echoed, policy.secrets)).toBe(
      `401: unknown key ${MASK}; bad sig ${MASK}; code ${MASK}; team platform-eng in eu-central-1`,
    );
  });
});

describe("scrubSecrets", () => {
  it.each([
    ["a raw value", "echo: abcdefgh1234", ["abcdefgh1234"], `echo: ${MASK}`],
    ["every occurrence", "x1y2z3w4 and x1y2z3w4", ["x1y2z3w4"], `${MASK} and ${MASK}`],
    ["a value with a quote, JSON-escaped", '{"m":"pa\\"ssword1"}', ['pa"ssword1'], `{"m":"${MASK}"}`],
    [
      "a value JSON-escaped twice (a quoted excerpt in a log line)",
      '{"m":"\\"pa\\\\\\"ssword1\\""}',
      ['pa"ssword1'],
      `{"m":"\\"${MASK}\\""}`,
    ],
    [
      "the longer of two overlapping values whole",
      "key: abcdefgh-ijkl",
      ["abcdefgh", "abcdefgh-ijkl"],
      `key: ${MASK}`,
    ],
    ["nothing when no value occurs", "nothing here", ["abcdefgh1234"], "nothing here"],
  ])("replaces %s", (_what, text, secrets, expected) => {
    expect(scrubSecrets(text, secrets)).toBe(expected);
  });

  it("returns the very same text when there are no secrets", () => {
    const text = "a line";
    expect(scrubSecrets(text, [])).toBe(text);
  });
});

import { describe, expect, it } from "vitest";
import { authenticate, authUnavailable, constantTimeEqual } from "../../src/core/auth.js";
import { policyFrom, sha256 } from "../support/policy.js";

const tokens = {
  version: 1,
  rules: [],
  auth: {
    tokens: [
      { team: "platform", sha256: await sha256("platform-token") },
      { team: "mobile", env: "MOBILE_TOKEN" },
      { team: "unset", env: "NOT_SET" },
    ],
  },
};
const policy = await policyFrom(tokens, { MOBILE_TOKEN: "mobile-token" });

describe("authenticate", () => {
  it.each([
    ["Bearer platform-token", "platform"],
    ["bearer platform-token", "platform"],
    ["Bearer   mobile-token  ", "mobile"],
  ])("maps %j to team %s", async (header, team) => {
    expect(await authenticate(header, policy, sha256)).toEqual({ ok: true, team });
  });

  it.each([
    [undefined, "AUTH_MISSING", /no Authorization header/],
    ["", "AUTH_MISSING", /allowedEnvVars/],
    ["Bearer ", "AUTH_EMPTY_TOKEN", /allowedEnvVars/],
    ["Bearer", "AUTH_EMPTY_TOKEN", /empty Bearer token/],
    ["Basic dXNlcjpwYXNz", "AUTH_MALFORMED", /Bearer <token>/],
    // The scheme and the token are two words: a known token run into the scheme is no Bearer.
    ["Bearerplatform-token", "AUTH_MALFORMED", /Bearer <token>/],
    ["Bearer-platform-token", "AUTH_MALFORMED", /Bearer <token>/],
    ["Bearer wrong", "AUTH_UNKNOWN_TOKEN", /not one this gateway knows/],
    ["Bearer a, Bearer b", "AUTH_MALFORMED", /sent two Authorization headers/],
    ["Bearer ", "AUTH_EMPTY_TOKEN", /export it/],
  ])("refuses %j with %s", async (header, code, message) => {
    const outcome = await authenticate(header, policy, sha256);
    expect(outcome.ok).toBe(false);
    if (!outcome.ok) {
      expect(outcome.code).toBe(code);
      expect(outcome.message).toMatch(message);
    }
  });

  // The header as users mistype it: the variable alone, `Bearer:`, another scheme. "is not
  // Bearer <token>" named the shape but not where to write it, as each other failure does.
  it.each([
    [
      "platform-token",
      "claude-code",
      /: write the hook's header as "Authorization": "Bearer \$HOOKGATE_TOKEN"/,
    ],
    [
      "Bearer: platform-token",
      "deepcode",
      /: write the hook's header as "Authorization": "Bearer \$HOOKGATE_TOKEN"/,
    ],
    [
      "Token platform-token",
      "deepagents",
      /: the curl command's header must be -H "Authorization: Bearer \$HOOKGATE_AUTH" \(hookgate init --client deepagents writes it\)$/,
    ],
  ] as const)(
    "says where to write a header %j (%s) that is not Bearer <token>",
    async (header, client, fix) => {
      const outcome = await authenticate(header, policy, sha256, client);
      expect(outcome).toEqual({ ok: false, code: "AUTH_MALFORMED", message: expect.stringMatching(fix) });
      expect(outcome.ok || outcome.message).not.toContain("platform-token");
    },
  );

  it.each(["deepagents", "deepagents-legacy"] as const)(
    "names the init command that writes %s's curl header",
    async (client) => {
      const outcome = await authenticate(undefined, policy, sha256, client);
      expect(!outcome.ok && outcome.message).toMatch(
        new RegExp(`\\(hookgate init --client ${client} writes it\\)$`),
      );
    },
  );

  // Claude Code expands only upper-case names in a header (clients.md §3.3) and blanks an unlisted
  // one, so a name it leaves as written has a lower-case letter: listing it changes nothing. A
  // curl command's shell leaves one as written only inside single quotes.
  it.each([
    ["$hookgate_token", "claude-code", /expands only upper-case names.*HOOKGATE_TOKEN/],
    // biome-ignore lint/suspicious/noTemplateCurlyInString: the name as Claude Code leaves it
    ["${hook_tok}", undefined, /expands only upper-case names/],
    ["$HOOKGATE_TOKEN", "claude-code", /list the variable, spelt exactly so, in the hook's allowedEnvVars/],
    ["$hookgate_token", "deepcode", /list the variable, spelt exactly so, in the hook's allowedEnvVars/],
    ["$HOOKGATE_AUTH", "deepagents", /double quotes/],
    // Quotes a hand-edited header adds around a name it did not expand (-H 'Authorization: Bearer
    // "$HOOKGATE_AUTH"'): the variable was never read, so "set it to the token alone" misleads.
    ['"$HOOKGATE_AUTH"', "deepagents", /double quotes/],
    ["'$HOOKGATE_TOKEN'", "claude-code", /list the variable, spelt exactly so, in the hook's allowedEnvVars/],
  ] as const)("says how %j, a name %s did not expand, gets expanded", async (token, client, fix) => {
    const outcome = await authenticate(`Bearer ${token}`, policy, sha256, client);
    expect(outcome).toEqual({ ok: false, code: "AUTH_UNKNOWN_TOKEN", message: expect.stringMatching(fix) });
    if (!outcome.ok && fix.source !== "double quotes") expect(outcome.message).not.toMatch(/double quotes/);
    if (!outcome.ok && /[a-z]/.test(token) && client !== "deepcode")
      expect(outcome.message).not.toMatch(/spelt exactly so/);
  });

  // A variable that holds more than the token: its quotes (docker --env-file and other env files
  // read without a shell keep them) or the header's own "Bearer " (`HOOKGATE_TOKEN="Bearer …"`
  // under a header written "Bearer $HOOKGATE_TOKEN"). "check HOOKGATE_TOKEN" sent its user to a
  // value that looks right.
  it.each([
    ['"platform-token"', "claude-code", /inside quotes.*HOOKGATE_TOKEN/],
    ["'platform-token'", "deepagents", /inside quotes.*HOOKGATE_AUTH/],
    ['"wrong"', "claude-code", /inside quotes/],
    ["Bearer platform-token", "claude-code", /a second "Bearer".*HOOKGATE_TOKEN to the token alone/],
    ["bearer platform-token", "deepagents", /a second "Bearer".*HOOKGATE_AUTH to the token alone/],
  ] as const)("says the token %j (%s) holds more than the token", async (token, client, fix) => {
    const outcome = await authenticate(`Bearer ${token}`, policy, sha256, client);
    expect(outcome).toEqual({ ok: false, code: "AUTH_UNKNOWN_TOKEN", message: expect.stringMatching(fix) });
    expect(outcome.ok || outcome.message).not.toContain("platform-token");
  });

  it.each(['"platform-token', "plat\"form'token", "Bearerish"])(
    "words %j, no token in quotes nor a second Bearer, as an unknown token",
    async (token) => {
      const outcome = await authenticate(`Bearer ${token}`, policy, sha256, "claude-code");
      expect(outcome.ok || outcome.message).toBe(
        "the hook's token is not one this gateway knows: check HOOKGATE_TOKEN",
      );
    },
  );

  it.each([
    [
      "hookgate-send",
      /^the hook's token is not one this gateway knows: check HOOKGATE_TOKEN \(or HOOKGATE_AUTH/,
    ],
    [
      "hookgate-send/0.1.0 node/20",
      /^the hook's token is not one this gateway knows: check HOOKGATE_TOKEN \(or HOOKGATE_AUTH/,
    ],
    ["hookgate-sender/2.0", /^the hook's token is not one this gateway knows: check HOOKGATE_TOKEN$/],
    ["curl/8.5.0", /^the hook's token is not one this gateway knows: check HOOKGATE_TOKEN$/],
  ])("words the fix for the sender user-agent %j names", async (userAgent, message) => {
    const outcome = await authenticate("Bearer guess", policy, sha256, "claude-code", undefined, userAgent);
    expect(outcome).toEqual({
      ok: false,
      code: "AUTH_UNKNOWN_TOKEN",
      message: expect.stringMatching(message),
    });
  });

  it("says so when the token itself is listed as a sha256, a hex token pasted where its digest goes", async () => {
    // `openssl rand -hex 32`, as README advises, makes 64 lowercase hex digits: the schema takes
    // the token for a digest, and every hook of its team was refused as an unknown token.
    const hex = "6f1ed002ab5595859014ebf0951522d9a8e4e7b8c1b9f7c0b2e0f4a3c5d6e7f8";
    const pasted = await policyFrom({
      version: 1,
      rules: [],
      auth: { tokens: [{ team: "web", sha256: hex }] },
    });
    const outcome = await authenticate(`Bearer ${hex}`, pasted, sha256);
    expect(outcome).toEqual({
      ok: false,
      code: "AUTH_UNKNOWN_TOKEN",
      message:
        'the hook\'s token is written in the gateway policy\'s auth.tokens as a "sha256" itself: that field takes the token\'s SHA-256 (printf %s "$TOKEN" | hookgate token hash), never the token',
    });
    expect(outcome.ok || outcome.message).not.toContain(hex);
    const other = await authenticate(`Bearer ${hex.replace("6f", "70")}`, pasted, sha256);
    expect(other.ok || other.message).toMatch(/not one this gateway knows/);
  });

  it("says the gateway has no token when every token's variable was unset at load, not to check the hook's", async () => {
    const unset = await policyFrom({
      version: 1,
      rules: [],
      auth: {
        tokens: [
          { team: "web", env: "WEB_TOKEN" },
          { team: "ops", env: "OPS_TOKEN" },
        ],
      },
    });
    expect(await authenticate("Bearer a-right-token", unset, sha256)).toEqual({
      ok: false,
      code: "AUTH_UNKNOWN_TOKEN",
      message:
        'the gateway has no token to check it against: the variables its policy\'s auth.tokens read are not set where it runs, for its operator to set (its "policy warning" log lines name them)',
    });
    // One of them set: the hook's token may be wrong after all.
    const one = await policyFrom(
      {
        version: 1,
        rules: [],
        auth: {
          tokens: [
            { team: "web", env: "WEB_TOKEN" },
            { team: "ops", env: "OPS_TOKEN" },
          ],
        },
      },
      { OPS_TOKEN: "ops-token" },
    );
    const outcome = await authenticate("Bearer guess", one, sha256);
    expect(outcome.ok || outcome.message).toMatch(/not one this gateway knows: check HOOKGATE_TOKEN$/);
  });

  it("says the gateway has no token when auth.tokens is empty, not that variables are unset", async () => {
    const none = await policyFrom({ version: 1, rules: [], auth: { tokens: [] } });
    expect(await authenticate("Bearer a-token", none, sha256)).toEqual({
      ok: false,
      code: "AUTH_UNKNOWN_TOKEN",
      message:
        "the gateway has no token to check it against: its policy's auth.tokens lists none, for its operator to add one per team",
    });
  });

  it("never matches a token whose variable was unset at load, even an empty one", async () => {
    expect((await authenticate("Bearer undefined", policy, sha256)).ok).toBe(false);
  });

  it("maps a non-ASCII token to its team whether its bytes were read as UTF-8 or as Latin-1", async () => {
    // The policy's token is text (its variable, or `hookgate token hash` of it). curl sends the
    // token's UTF-8 bytes, which Node reads one character a byte (`päss` arrives as `pÃ¤ss`);
    // node:http clients send each character under U+0100 as one byte, which arrives as sent.
    const unicode = await policyFrom(
      { version: 1, rules: [], auth: { tokens: [{ team: "uni", env: "UNI_TOKEN" }] } },
      { UNI_TOKEN: "pässwörd-tök" },
    );
    const asUtf8Bytes = Buffer.from("pässwörd-tök", "utf8").toString("latin1");
    expect(await authenticate(`Bearer ${asUtf8Bytes}`, unicode, sha256)).toEqual({ ok: true, team: "uni" });
    expect(await authenticate("Bearer pässwörd-tök", unicode, sha256)).toEqual({ ok: true, team: "uni" });
    // Bytes that spell no UTF-8, and a UTF-8 reading of another token, are still no token.
    expect((await authenticate("Bearer p\u00e4ss", unicode, sha256)).ok).toBe(false);
    const other = Buffer.from("pässwörd-tok", "utf8").toString("latin1");
    expect(await authenticate(`Bearer ${other}`, unicode, sha256)).toMatchObject({
      ok: false,
      code: "AUTH_UNKNOWN_TOKEN",
    });
  });

  it("accepts everyone as team default when the policy has no auth", async () => {
    const open = await policyFrom({ version: 1, rules: [] });
    expect(await authenticate(undefined, open, sha256)).toEqual({ ok: true, team: "default" });
  });

  // That it takes as long wherever they differ is tested in test/e2e/security.test.ts.
  it("compares digests: equal, differing in the last character, of different lengths", () => {
    expect(constantTimeEqual("abcd", "abcd")).toBe(true);
    expect(constantTimeEqual("abcd", "abce")).toBe(false);
    expect(constantTimeEqual("abcd", "abc")).toBe(false);
    // A missing position reads as 0, so only the length tells these apart.
    expect(constantTimeEqual("abc", "abc\u0000")).toBe(false);
  });
});

describe("authUnavailable", () => {
  it("names a failed import of the token check by Node's code, never by its text of the gateway's own paths", () => {
    // Said before any token is checked, so to any caller: Node's text names the files' absolute paths.
    const missing = Object.assign(
      new Error(
        "Cannot find module '/srv/hookgate/dist/core/auth-token.js' imported from /srv/hookgate/dist/core/auth.js",
      ),
      { code: "ERR_MODULE_NOT_FOUND" },
    );
    const outcome = authUnavailable(missing);
    expect(outcome).toMatchObject({ ok: false, code: "AUTH_UNAVAILABLE" });
    expect(outcome.ok ? "" : outcome.message).toContain("(ERR_MODULE_NOT_FOUND)");
    expect(outcome.ok ? "" : outcome.message).not.toContain("/srv/");
    // workerd's carries no code, and names the bundle's module only.
    const workerd = authUnavailable(new Error('No such module "chunks/auth-token-X.js".'));
    expect(workerd.ok ? "" : workerd.message).toContain('No such module "chunks/auth-token-X.js"');
  });
});

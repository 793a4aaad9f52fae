import { describe, expect, it } from "vitest";
import { loadPolicy, notifies, parsePolicyDocument } from "../../src/core/policy.js";
import { loaded, policyFrom, problemsOf, sha256 } from "../support/policy.js";

const rule = (fields: Record<string, unknown>) => ({ id: "r", on: "PreToolUse", decide: "deny", ...fields });
const policyWith = (...rules: unknown[]) => ({ version: 1, rules });

describe("loadPolicy", () => {
  it("loads the POLICY.md shape with defaults filled in", async () => {
    const policy = await policyFrom(policyWith(rule({})));
    expect(policy.defaults).toEqual({ onError: "allow", deadlineMs: 5000, maxBodyBytes: 1048576 });
    expect(policy.auth).toBeUndefined();
    expect(policy.hash).toMatch(/^[0-9a-f]{16}$/);
  });

  it("bounds defaults.maxBodyBytes at 64 MiB, saying the limit (a body is read whole into memory)", async () => {
    const problems = await problemsOf({ version: 1, defaults: { maxBodyBytes: 1e12 }, rules: [] });
    expect(problems.map((p) => `${p.path}: ${p.message}`)).toEqual([
      "$.defaults.maxBodyBytes: must be at most 67108864 (64 MiB): a body is read whole into memory; hook bodies are far smaller",
    ]);
    const largest = await policyFrom({ version: 1, defaults: { maxBodyBytes: 64 * 1024 * 1024 }, rules: [] });
    expect(largest.defaults.maxBodyBytes).toBe(67108864);
  });

  it("reports invalid JSON at the root", async () => {
    const problems = await problemsOf("{ not json");
    expect(problems).toEqual([
      expect.objectContaining({ path: "$", message: expect.stringMatching(/not valid JSON/) }),
    ]);
  });

  const hint =
    "which looks like a space or like nothing but is no JSON whitespace; type a space or delete it";

  // What follows "is not valid JSON: " in the first problem a text JSON.parse refuses gives.
  it.each<[text: string, expected: string]>([
    // Where it breaks, by line and column: V8 gives a trailing comma, a missing colon or a raw
    // newline in a string as "at position N".
    [
      '{"version": 1,\n  "rules": [\n    {"id": "a",}]}',
      "Expected double-quoted property name at line 3, column 16: JSON takes no comma before } or ]; delete it",
    ],
    ['{\n"version" 1}', "Expected ':' after property name at line 2, column 11"],
    [
      '{"version": 1, "rules": []}\n{"version": 1}',
      "Unexpected non-whitespace character after JSON at line 2, column 1",
    ],
    [
      '{"version": 1, "rules": [{"id": "a\nb"}]}',
      "Bad control character in string literal at line 1, column 35",
    ],
    // What JSON refuses that an editor or JSONC allows: before, a comment or a comma before } was
    // "Expected double-quoted property name", and an empty file "Unexpected end of JSON input".
    [
      '{"version": 1,\n // no rm\n "rules": []}',
      "Expected double-quoted property name at line 2, column 2: JSON has no comments; delete it",
    ],
    [
      '{"version": 1, /* c */ "rules": []}',
      "Expected double-quoted property name at line 1, column 16: JSON has no comments; delete it",
    ],
    [
      '{"version": 1, "rules": [],\n}',
      "Expected double-quoted property name at line 2, column 1: JSON takes no comma before } or ]; delete it",
    ],
    [
      '{"version": 1, "rules": [{"id": "a", "on": "Stop", "decide": "block"},\n]}',
      "Unexpected token ']' at line 2, column 1: JSON takes no comma before } or ]; delete it",
    ],
    [" \n", "it is empty"],
    // A character that looks like a space or like nothing, which JSON does not take as whitespace:
    // JSON pasted from a web page or a chat brings no-break and zero-width spaces. Before, V8's
    // words alone: "Expected double-quoted property name at line 2, column 1" before what reads
    // as a space, or "Unexpected token ' '" quoting it.
    [
      '{"version": 1,\n\u00a0"rules": []}',
      `Expected double-quoted property name at line 2, column 1: U+00A0 is there, ${hint}`,
    ],
    [
      `{"version": 1,\n "rules": [${" ".repeat(20)}\u200b]}`,
      `Unexpected character U+200B at line 2, column 32: U+200B is there, ${hint}`,
    ],
    ['{"version":\u200b1}', "Unexpected character U+200B"],
    // A straight double quote to write for a typographic or a single one:
    // JSON pasted from a document or a chat brings “curly” quotes, which read as double quotes;
    // before, V8's words alone: "Expected double-quoted property name", or "Unexpected token '''".
    [
      '{"version": 1,\n \u201crules\u201d: []}',
      'Expected double-quoted property name at line 2, column 2: \u201c is a typographic quote; JSON takes only the straight " around a string, so write " in its place',
    ],
    [
      '{"version": 1, "rules": [],\n "$schema": \u2018x\u2019}',
      "Unexpected token '\u2018' at line 2, column 13: \u2018 is a typographic quote; JSON takes only the straight \" around a string, so write \" in its place",
    ],
    [
      `{"version": 1, "rules": [],\n "$schema": 'x'}`,
      `Unexpected token ''' at line 2, column 13: ' is a single quote; JSON takes only the straight " around a string, so write " in its place`,
    ],
  ])("says of invalid JSON %j: %s", async (text, expected) => {
    expect((await problemsOf(text))[0]?.message).toBe(`is not valid JSON: ${expected}`);
  });

  it("says when the policy is JSON encoded twice: a string that holds the policy's JSON", async () => {
    // A second encoding (jq -R, a template's jsonencode of the file's text) put in HOOKGATE_POLICY
    // was "must be an object, not a string", which did not say the JSON was inside.
    const text = JSON.stringify(JSON.stringify({ version: 1, rules: [] }));
    expect((await problemsOf(text)).map((p) => `${p.path}: ${p.message}`)).toEqual([
      "$: must be an object, not a string: this is the policy's JSON encoded twice, as a string; give the JSON itself (jq -r . decodes it once)",
    ]);
    expect((await problemsOf('"a policy"')).map((p) => `${p.path}: ${p.message}`)).toEqual([
      '$: must be an object, not "a policy"',
    ]);
  });

  it("drops a byte-order mark, as the file reader does, so HOOKGATE_POLICY loads as the same file does for serve", async () => {
    // Before, Lambda and the Worker refused a policy put from a file saved with a BOM, which
    // serve and check loaded.
    const text = '{"version": 1, "rules": [{"id": "a", "on": "Stop", "decide": "block"}]}';
    const marked = await loadPolicy(`\uFEFF${text}`, { env: () => undefined, sha256 });
    const plain = await loadPolicy(text, { env: () => undefined, sha256 });
    expect(marked.ok && plain.ok && marked.value.policy.hash).toBe(plain.ok && plain.value.policy.hash);
    // Only a leading one: a BOM elsewhere is no JSON whitespace.
    expect((await problemsOf(`{"version": 1,\uFEFF "rules": []}`))[0]?.path).toBe("$");
  });

  it("refuses a key an object repeats, naming its path and line: JSON.parse would keep the last", async () => {
    // Before, a merge that left two "rules" arrays loaded only the second, and
    // `check` called it valid.
    const twoLists =
      '{"version": 1,\n "rules": [{"id": "no-rm", "on": "PreToolUse", "decide": "deny"}],\n "rules": []}';
    expect(await problemsOf(twoLists)).toEqual([
      {
        severity: "error",
        path: "$.rules",
        message: "appears again at line 3; JSON keeps only the last, so merge the two or delete one",
      },
    ]);
    const twoModes =
      '{"version": 1, "rules": [{"id": "a", "on": "Stop", "decide": "block"},\n{"id": "b", "on": "Stop", "decide": "block", "mode": "enforce",\n  "mode": "off", "where": {"x\\"y": 1, "x\\u0022y": 2}}]}';
    expect((await problemsOf(twoModes)).map((p) => `${p.path} ${p.message.slice(0, 23)}`)).toEqual([
      "$.rules[1].mode appears again at line 3",
      '$.rules[1].where["x\\"y"] appears again at line 3',
    ]);
    // The same key in two objects, or a string value equal to a key, is no repeat.
    const twoObjects =
      '{"version": 1, "rules": [{"id": "a", "on": "Stop", "decide": "block"}, {"id": "on", "on": "Stop", "decide": "block"}]}';
    expect(parsePolicyDocument(twoObjects).ok).toBe(true);
  });

  it('says that an empty name in sinks, models, where or headers must not be empty, not "Invalid input"', async () => {
    // Before, zod's own words for a refused key were all it said.
    const problems = await problemsOf({
      version: 1,
      sinks: { "": { type: "slack", url: "https://hooks.slack.com/x" } },
      models: { "": { provider: "anthropic", model: "m", apiKey: "k" } },
      rules: [
        rule({ where: { "": 1 } }),
        { id: "f", on: "PreToolUse", forward: { url: "https://example.com", headers: { "": "v" } } },
      ],
    });
    expect(problems.map((p) => `${p.path}: ${p.message}`)).toEqual([
      '$.rules[0].where[""]: the key "" must not be empty',
      '$.rules[1].forward.headers[""]: the key "" must not be empty',
      '$.sinks[""]: the key "" must not be empty',
      '$.models[""]: the key "" must not be empty',
    ]);
  });

  it('refuses a key "__proto__" anywhere, naming its path and line: the schema would drop it without a word', async () => {
    // Before, a `where` keyed "__proto__" loaded as a rule with no
    // condition (an allow on every call), and a sink named "__proto__" was no sink at all.
    const where =
      '{"version": 1, "rules": [{"id": "a", "on": "PreToolUse", "decide": "allow",\n"where": {"__proto__": "x"}}]}';
    expect(await problemsOf(where)).toEqual([
      {
        severity: "error",
        path: "$.rules[0].where.__proto__",
        message:
          "is a key at line 2 that JavaScript reads as an object's prototype, not as a name, so it would be dropped; rename it",
      },
    ]);
    const sink =
      '{"version": 1, "sinks": {"__proto__": {"type": "slack", "url": "https://hooks.slack.com/x"}}, "rules": []}';
    expect((await problemsOf(sink)).map((p) => p.path)).toEqual(["$.sinks.__proto__"]);
    // A string value "__proto__", or a where path through such a field, is no such key.
    const named = await policyFrom({
      version: 1,
      rules: [{ id: "__proto__", on: "Stop", decide: "block", where: { "a.__proto__": "__proto__" } }],
    });
    expect(named.rules[0]?.where).toHaveLength(1);
  });

  it("refuses a policy nested past 64 levels at its first such value, instead of running out of stack", async () => {
    // Before, 2,000 nested "not"s ended `check` with "Maximum call stack size exceeded".
    const where = (levels: number) => `${'{"not":'.repeat(levels)}{"equals":1}${"}".repeat(levels)}`;
    const policy = (levels: number) =>
      `{"version": 1, "rules": [{"id": "a", "on": "Stop", "decide": "block",\n"where": {"x": ${where(levels)}}}]}`;
    const problems = await problemsOf(policy(2000));
    expect(problems).toHaveLength(1);
    expect(problems[0]?.path).toBe(`$.rules[0].where.x${".not".repeat(60)}`);
    expect(problems[0]?.message).toBe("nests more than 64 levels deep at line 2; no policy needs that many");
    expect(parsePolicyDocument(policy(50)).ok).toBe(true);
  });

  it("lists every problem at once, each with its JSON path", async () => {
    const problems = await problemsOf({
      version: 2,
      rules: [
        rule({ decide: "approve" }),
        rule({ id: "", matcher: "(" }),
        { id: "x", on: "Stop", decison: "block" },
      ],
      defaults: { deadlineMs: -1 },
    });
    const paths = problems.map((p) => p.path);
    expect(paths).toEqual(
      expect.arrayContaining([
        "$.version",
        "$.rules[0].decide",
        "$.rules[1].id",
        "$.rules[2]",
        "$.defaults.deadlineMs",
      ]),
    );
    expect(problems.find((p) => p.path === "$.rules[2]")?.message).toBe('unknown key "decison"');
    expect(problems.find((p) => p.path === "$.rules[0].decide")?.message).toMatch(/allow/);
  });

  it("still compiles the rules that pass the schema when something else fails it", async () => {
    const problems = await problemsOf({
      version: 1,
      rules: [
        rule({ decide: "denny" }),
        rule({ id: "b", matcher: "(", if: "Bash(", notify: ["nowhere"] }),
        rule({ id: "c", notify: ["audit"] }),
      ],
      sinks: { audit: { type: "webhook", url: "https://in.example/h" } },
    });
    expect(problems.map((p) => p.path)).toEqual([
      "$.rules[0].decide",
      "$.rules[1].matcher",
      "$.rules[1].if",
      "$.rules[1].notify[0]",
    ]);
    // A sinks section that is not an object is its own problem: its names are not judged too.
    const notRecord = await problemsOf({
      version: 1,
      rules: [rule({ notify: ["audit"] })],
      sinks: ["audit"],
    });
    expect(notRecord.map((p) => p.path)).toEqual(["$.sinks"]);
    // A repeated id is found beside a schema problem elsewhere.
    const repeated = await problemsOf({ version: 2, rules: [rule({}), rule({})] });
    expect(repeated.map((p) => `${p.path}: ${p.message}`)).toContain(
      '$.rules[1].id: "r" is already the id of $.rules[0]',
    );
  });

  it("lists the egress section's CIDRs, shared tokens and nameless env: beside a schema problem elsewhere", async () => {
    // A hunt of the loader: these were checked only once the whole file passed its schema, so a
    // user fixed the typo, reloaded, and met the next round.
    const sha256 = "0af148632bfc2bdf9076bdc41fa58336a206cd23532da915cc5d2f9e9c3f6a50";
    const problems = await problemsOf({
      version: 1,
      rules: [rule({ decison: "deny" })],
      egress: { allowCidrs: ["10.0.0.0/33"] },
      auth: {
        tokens: [
          { team: "platform", sha256 },
          { team: "mobile", sha256: "nothex" },
          { team: "mobile", sha256 },
        ],
      },
      sinks: { s: { type: "webhook", url: "https://x.example/", secret: "env:" } },
      models: { m: { provider: "anthropic", model: "x", apiKey: "env:" } },
    });
    expect(problems.map((p) => `${p.path}: ${p.message}`)).toEqual([
      "$.auth.tokens[1].sha256: must be 64 lowercase hex characters (hookgate token hash)",
      '$.rules[0]: unknown key "decison"',
      '$.egress.allowCidrs[0]: "10.0.0.0/33" is not a CIDR (prefix length 33 is longer than 32)',
      '$.auth.tokens[2]: is the same token as $.auth.tokens[0], of team "platform": a token names one team',
      '$.models.m.apiKey: "env:" names no variable: write "env:NAME" with the variable that holds the value',
      '$.sinks.s.secret: "env:" names no variable: write "env:NAME" with the variable that holds the value',
    ]);
    // A section that fails its own schema is not judged again: its problem is its schema's.
    const egressTypo = await problemsOf({
      version: 1,
      rules: [],
      egress: { allowCidrs: ["10.0.0.0/33"], denyCidr: [] },
      sinks: { s: { type: "webhook", url: "https://x.example/", secret: "env:", retries: 3 } },
    });
    expect(egressTypo.map((p) => `${p.path}: ${p.message}`)).toEqual([
      '$.egress: unknown key "denyCidr"',
      '$.sinks.s: unknown key "retries"',
    ]);
  });

  it("compiles matchers, if rules and where regexes, reporting each failure with its path", async () => {
    const problems = await problemsOf(
      policyWith(
        rule({ id: "a", matcher: "x".repeat(201) }),
        rule({ id: "b", matcher: "(?=Bash)" }),
        rule({ id: "c", if: ["Bash(npm test)", "Bash("] }),
        rule({ id: "d", where: { "tool_input.command": { regex: "(a)\\1" } } }),
      ),
    );
    expect(problems.map((p) => p.path)).toEqual([
      "$.rules[0].matcher",
      "$.rules[1].matcher",
      "$.rules[2].if[1]",
      '$.rules[3].where["tool_input.command"].regex',
    ]);
  });

  it("rejects duplicate ids, several actions, no action, and dangling sink or model names", async () => {
    const problems = await problemsOf(
      policyWith(
        rule({ id: "dup" }),
        rule({ id: "dup" }),
        rule({ id: "two", prompt: { text: "t", model: "fast" } }),
        rule({ id: "dup" }),
        { id: "idle", on: "Stop" },
        { id: "n", on: "SessionEnd", notify: ["nowhere"] },
        { id: "p", on: "PreToolUse", prompt: { text: "t", model: "missing" } },
        { id: "reason-alone", on: "Stop", context: "c", reason: "r" },
        // Loaded silently and never sent, while reason and updatedInput there were errors.
        { id: "n2", on: "SessionEnd", notify: ["nowhere"], systemMessage: "notified" },
        { id: "p2", on: "PreToolUse", prompt: { text: "t", model: "missing" }, systemMessage: "judged" },
        { id: "c2", on: "Stop", context: "c", systemMessage: "sent with the context" },
      ),
    );
    const messages = problems.map((p) => `${p.path} ${p.message}`);
    expect(messages).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^\$\.rules\[1\]\.id "dup" is already the id of \$\.rules\[0\]/),
        // A third copy names the first, not the second.
        expect.stringMatching(/^\$\.rules\[3\]\.id "dup" is already the id of \$\.rules\[0\]/),
        expect.stringMatching(/^\$\.rules\[2\] has decide and prompt/),
        expect.stringMatching(/^\$\.rules\[4\] does nothing/),
        expect.stringMatching(/^\$\.rules\[5\]\.notify\[0\] names the sink "nowhere"/),
        expect.stringMatching(/^\$\.rules\[6\]\.prompt\.model names the model "missing"/),
        expect.stringMatching(/^\$\.rules\[7\]\.reason goes with decide/),
        "$.rules[8].systemMessage goes with decide or context; this rule has neither",
        "$.rules[9].systemMessage goes with decide or context; this rule has neither",
      ]),
    );
    expect(messages.filter((m) => m.startsWith("$.rules[10]"))).toEqual([]);
  });

  it("requires exactly one operator per where object", async () => {
    const problems = await problemsOf(policyWith(rule({ where: { cwd: { regex: "a", glob: "b" } } })));
    expect(problems[0]?.message).toMatch(/exactly one of/);
  });

  it("rejects a token hash that is not 64 lowercase hex characters", async () => {
    const problems = await problemsOf({
      version: 1,
      rules: [],
      auth: { tokens: [{ team: "t", sha256: "ABC" }] },
    });
    expect(problems[0]).toMatchObject({
      path: "$.auth.tokens[0].sha256",
      message: expect.stringMatching(/64 lowercase hex/),
    });
  });

  it("says what to fix for a token env name, a retry schedule too long, and a delay too large", async () => {
    const problems = await problemsOf({
      version: 1,
      rules: [],
      auth: { tokens: [{ team: "t", env: "bad-name" }] },
      sinks: {
        long: { type: "webhook", url: "https://in.example/h", retryScheduleSeconds: Array(21).fill(1) },
        late: { type: "webhook", url: "https://in.example/h", retryScheduleSeconds: [50_000] },
      },
    });
    expect(problems.map((p) => `${p.path}: ${p.message}`)).toEqual(
      expect.arrayContaining([
        "$.auth.tokens[0].env: must be an environment variable's name: letters, digits and _, not starting with a digit",
        "$.sinks.long.retryScheduleSeconds: must list at most 20",
        "$.sinks.late.retryScheduleSeconds[0]: must be at most 43200",
      ]),
    );
  });

  it('says which name to write for a token env written "env:NAME", as every other env value is', async () => {
    // A token's `env` names the variable itself; the prefix the other fields take is no part of it.
    // What is no name in capitals may be a token pasted there, and is not quoted.
    const problems = await problemsOf({
      version: 1,
      rules: [],
      auth: {
        tokens: [
          { team: "t", env: "env:HOOKGATE_TOKEN_T" },
          { team: "u", env: "env:ghp_pasted0Token1Value" },
        ],
      },
    });
    const rule = "must be an environment variable's name: letters, digits and _, not starting with a digit";
    expect(problems.map((p) => `${p.path}: ${p.message}`)).toEqual([
      `$.auth.tokens[0].env: ${rule}; a token's env names the variable itself, without "env:": write "HOOKGATE_TOKEN_T"`,
      `$.auth.tokens[1].env: ${rule}; a token's env names the variable itself, without "env:"`,
    ]);
  });

  it("says which name to write for a token env written as a shell reads it, $NAME or {NAME} in braces", async () => {
    const braced = (name: string) => `$\{${name}}`;
    const problems = await problemsOf({
      version: 1,
      rules: [],
      auth: {
        tokens: [
          { team: "t", env: braced("HOOKGATE_TOKEN_T") },
          { team: "u", env: "$HOOKGATE_TOKEN_U" },
        ],
      },
    });
    const rule = "must be an environment variable's name: letters, digits and _, not starting with a digit";
    expect(problems.map((p) => `${p.path}: ${p.message}`)).toEqual([
      `$.auth.tokens[0].env: ${rule}; a token's env names the variable itself, without "$" or braces: write "HOOKGATE_TOKEN_T"`,
      `$.auth.tokens[1].env: ${rule}; a token's env names the variable itself, without "$" or braces: write "HOOKGATE_TOKEN_U"`,
    ]);
  });

  it("warns, without failing, about each sink value read from a variable that is unset", async () => {
    const document = {
      version: 1,
      rules: [],
      sinks: {
        chat: { type: "slack", url: "env:CHAT_URL" },
        siem: { type: "webhook", url: "https://siem.example/in", secret: "env:SIEM_SECRET" },
        ci: { type: "github-dispatch", repo: "acme/app", eventType: "end", token: "env:GH_TOKEN" },
        ghe: { type: "github-dispatch", repo: "acme/app", eventType: "end", token: "t", url: "env:GHE_URL" },
        // A link is shown as written, never read from the environment: no warning for it.
        linked: { type: "slack", url: "https://hooks.slack.com/x", link: "env:NOT_READ" },
      },
    };
    const none = await loaded(document);
    expect(none.warnings.map((w) => `${w.path}: ${w.message}`)).toEqual([
      '$.sinks.chat.url: CHAT_URL is not set, so every delivery to sink "chat" fails into the dead-letter queue until it is',
      '$.sinks.siem.secret: SIEM_SECRET is not set, so every delivery to sink "siem" fails into the dead-letter queue until it is',
      '$.sinks.ci.token: GH_TOKEN is not set, so every delivery to sink "ci" fails into the dead-letter queue until it is',
      '$.sinks.ghe.url: GHE_URL is not set, so every delivery to sink "ghe" fails into the dead-letter queue until it is',
    ]);
    const all = await loaded(document, {
      CHAT_URL: "https://hooks.slack.com/x",
      SIEM_SECRET: "whsec_c2VjcmV0",
      GH_TOKEN: "t",
      GHE_URL: "https://github.acme.example/api/v3",
    });
    expect(all.warnings).toEqual([]);
  });

  it("does not repeat, in an unset variable's warning, a name that reads like a pasted secret", async () => {
    // Policy warnings reach serve's log and `hookgate check`'s output: a token or key written where
    // its variable's name belongs must not be printed there.
    const pasted = ["hgAbC9xYz0123456789Qwerty", "sk-ant-api03-abcDEF123", "deadbeefdeadbeefdeadbeef00"];
    const { warnings } = await loaded({
      version: 1,
      rules: [],
      auth: {
        tokens: [
          { team: "t", env: pasted[0] },
          { team: "u", env: "HOOKGATE_TOKEN_U" },
        ],
      },
      models: {
        m: { provider: "anthropic", model: "x", apiKey: `env:${pasted[1]}`, url: `env:${pasted[2]}` },
      },
      sinks: { chat: { type: "slack", url: `env:${pasted[0]}` } },
    });
    const messages = warnings.map((w) => `${w.path}: ${w.message}`);
    for (const secret of pasted) expect(messages.join("\n")).not.toContain(secret);
    const unrepeated =
      "the variable named here (not repeated: it reads like a secret, pasted where a variable's name belongs) is not set";
    expect(messages).toEqual(
      expect.arrayContaining([
        `$.auth.tokens[0].env: ${unrepeated}, so team "t" cannot authenticate with it`,
        '$.auth.tokens[1].env: the variable HOOKGATE_TOKEN_U is not set, so team "u" cannot authenticate with it',
        `$.models.m.apiKey: ${unrepeated}, so every call to model "m" fails and its rules answer with onError`,
        `$.models.m.url: ${unrepeated}, so every call to model "m" fails and its rules answer with onError`,
        `$.sinks.chat.url: ${unrepeated}, so every delivery to sink "chat" fails into the dead-letter queue until it is`,
      ]),
    );
  });

  it("does not repeat a pasted token whose random part has no digit or no capital after its prefix's _", async () => {
    // Hugging Face's tokens are hf_ and 34 letters, Shopify's shpat_ and 32 lower-case hex digits:
    // neither has letters of both cases with digits, nor 20 characters with no _ in all.
    const pasted = ["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", "shpat_0123456789abcdef0123456789abcdef"];
    const { warnings } = await loaded({
      version: 1,
      rules: [],
      models: { m: { provider: "openai", model: "x", apiKey: `env:${pasted[0]}`, url: `env:${pasted[1]}` } },
    });
    expect(warnings.length).toBeGreaterThan(0);
    for (const secret of pasted) expect(JSON.stringify(warnings.map((w) => w.message))).not.toContain(secret);
  });

  it("warns that a Discord URL given with /slack, inline or from a variable, is posted to without it", async () => {
    const document = {
      version: 1,
      rules: [],
      sinks: {
        env: { type: "discord", url: "env:DISCORD_URL" },
        inline: { type: "discord", url: "https://discord.com/api/webhooks/1/tok/slack?thread_id=2" },
        plain: { type: "discord", url: "https://discord.com/api/webhooks/1/slacker" },
      },
    };
    const { warnings } = await loaded(document, {
      DISCORD_URL: "https://discord.com/api/webhooks/1/tok/slack",
    });
    const said =
      "ends in /slack, Discord's Slack-compatible endpoint, which cannot keep a message from pinging; hookgate leaves /slack out and posts to the webhook itself: remove it";
    expect(warnings.map((w) => `${w.path}: ${w.message}`)).toEqual([
      `$.sinks.env.url: the URL in DISCORD_URL ${said}`,
      `$.sinks.inline.url: the URL ${said}`,
    ]);
  });

  it("reads a model's env: url as a sink's, and warns, without failing, when its variable is unset", async () => {
    // It was read as a URL "env:JUDGE_URL", which the egress guard refused for its scheme.
    const document = {
      version: 1,
      rules: [],
      models: {
        m: { provider: "openai", model: "x", apiKey: "env:KEY", url: "env:JUDGE_URL" },
        public: { provider: "anthropic", model: "x", apiKey: "env:KEY" },
      },
    };
    const set = await loaded(document, {
      KEY: "k",
      JUDGE_URL: "https://llm.acme.example/v1/chat/completions",
    });
    expect(set.warnings).toEqual([]);
    expect(set.policy.models.get("m")).toMatchObject({
      url: "https://llm.acme.example/v1/chat/completions",
      unsetUrlVariable: undefined,
    });
    expect(set.policy.models.get("public")).toMatchObject({ url: undefined, unsetUrlVariable: undefined });
    // Unset (or set empty), never the provider's public endpoint: it would be sent the key.
    for (const env of [{ KEY: "k" }, { KEY: "k", JUDGE_URL: "" }]) {
      const unset = await loaded(document, env);
      expect(unset.warnings.map((w) => `${w.severity} ${w.path}: ${w.message}`)).toEqual([
        'warning $.models.m.url: JUDGE_URL is not set, so every call to model "m" fails and its rules answer with onError',
      ]);
      expect(unset.policy.models.get("m")).toMatchObject({ url: undefined, unsetUrlVariable: "JUDGE_URL" });
    }
  });

  it("warns, without failing, about a name in httpHookAllowedEnvVars or allowedEnvVars that no header reads", async () => {
    // They were accepted silently, and the header they were meant for went out empty.
    const rule = "a name a header's $VAR reads: upper-case letters, digits and _, not starting with a digit";
    const policy = await loaded({
      version: 1,
      egress: { httpHookAllowedEnvVars: ["TOKEN", "MY-TOKEN", "$TOKEN", "env:TOKEN", "_T2", "my_token"] },
      rules: [
        {
          id: "f",
          on: "PreToolUse",
          forward: {
            url: "https://policy.example/hook",
            headers: { Authorization: "Bearer $TOKEN" },
            // biome-ignore lint/suspicious/noTemplateCurlyInString: a header's ${VAR}, not a template
            allowedEnvVars: ["${TOKEN}", "TOKEN", "1TOKEN", "env:", "env:MY-TOKEN"],
          },
        },
      ],
    });
    expect(policy.warnings.map((w) => `${w.severity} ${w.path}: ${w.message}`)).toEqual([
      `warning $.egress.httpHookAllowedEnvVars[1]: should be ${rule}; no shell can export this one, nor a header's $VAR read it`,
      `warning $.egress.httpHookAllowedEnvVars[2]: should be ${rule} (write "TOKEN"); no header's $VAR reads this one`,
      `warning $.egress.httpHookAllowedEnvVars[3]: should be ${rule} (write "TOKEN"); no header's $VAR reads this one`,
      `warning $.egress.httpHookAllowedEnvVars[5]: has lower-case letters, and a header's $VAR names upper-case letters, digits and _ only (as Claude Code's does): no header reads this one; export the variable under an upper-case name`,
      `warning $.rules[0].forward.allowedEnvVars[0]: should be ${rule} (write "TOKEN"); no header's $VAR reads this one`,
      `warning $.rules[0].forward.allowedEnvVars[2]: should be ${rule}; no shell can export this one, nor a header's $VAR read it`,
      `warning $.rules[0].forward.allowedEnvVars[3]: should be ${rule}; no shell can export this one, nor a header's $VAR read it`,
      `warning $.rules[0].forward.allowedEnvVars[4]: should be ${rule}; no shell can export this one, nor a header's $VAR read it`,
    ]);
    // An empty name is the schema's error, as it was.
    expect(
      (await problemsOf({ version: 1, egress: { httpHookAllowedEnvVars: [""] }, rules: [] })).map(
        (p) => `${p.path}: ${p.message}`,
      ),
    ).toEqual(["$.egress.httpHookAllowedEnvVars[0]: must not be empty"]);
  });

  it("suggests no lower-case name for httpHookAllowedEnvVars or allowedEnvVars, which no header reads either", async () => {
    // "$my_token" was told to write "my_token", itself warned about, and "my-token" to use
    // letters, digits and _, which "my_token" is: a second round of fixes that fixed nothing.
    const rule = "a name a header's $VAR reads: upper-case letters, digits and _, not starting with a digit";
    const policy = await loaded({
      version: 1,
      egress: {
        // biome-ignore lint/suspicious/noTemplateCurlyInString: a header's ${VAR}, not a template
        httpHookAllowedEnvVars: ["$my_token", "env:My_Token", "${my_token}", "my-token", "$MY_TOKEN"],
      },
      rules: [],
    });
    expect(policy.warnings.map((w) => `${w.path}: ${w.message}`)).toEqual([
      `$.egress.httpHookAllowedEnvVars[0]: should be ${rule}; no shell can export this one, nor a header's $VAR read it`,
      `$.egress.httpHookAllowedEnvVars[1]: should be ${rule}; no shell can export this one, nor a header's $VAR read it`,
      `$.egress.httpHookAllowedEnvVars[2]: should be ${rule}; no shell can export this one, nor a header's $VAR read it`,
      `$.egress.httpHookAllowedEnvVars[3]: should be ${rule}; no shell can export this one, nor a header's $VAR read it`,
      `$.egress.httpHookAllowedEnvVars[4]: should be ${rule} (write "MY_TOKEN"); no header's $VAR reads this one`,
    ]);
  });

  it("warns, without failing, about a webhook secret that is no Standard Webhooks secret", async () => {
    const sinks = (secret: string) => ({
      version: 1,
      rules: [],
      sinks: { siem: { type: "webhook", url: "https://siem.example/in", secret } },
    });
    const warned = async (secret: string, env: Record<string, string> = {}) =>
      (await loaded(sinks(secret), env)).warnings.map((w) => `${w.path}: ${w.message}`);
    const fails = 'so every delivery to sink "siem" fails into the dead-letter queue';
    expect(await warned("my-webhook-secret")).toEqual([
      `$.sinks.siem.secret: a webhook secret must be "whsec_" followed by standard base64, ${fails}`,
    ]);
    expect(await warned("whsec_")).toEqual([`$.sinks.siem.secret: a webhook secret is empty, ${fails}`]);
    expect(await warned("env:SIEM_SECRET", { SIEM_SECRET: "whsec_not base64!" })).toEqual([
      `$.sinks.siem.secret: the value of SIEM_SECRET must be "whsec_" followed by standard base64, ${fails}`,
    ]);
    expect(await warned("whsec_c2VjcmV0")).toEqual([]);
  });

  it("reads env tokens at load and warns, without failing, when the variable is unset", async () => {
    const document = { version: 1, rules: [], auth: { tokens: [{ team: "mobile", env: "TOKEN_MOBILE" }] } };
    const withEnv = await loaded(document, { TOKEN_MOBILE: "s3cret" });
    expect(withEnv.warnings).toEqual([]);
    expect(withEnv.policy.auth?.tokens[0]?.sha256).toMatch(/^[0-9a-f]{64}$/);
    expect(withEnv.policy.auth?.onFailure).toBe("deny");
    const without = await loaded(document);
    expect(without.warnings[0]?.path).toBe("$.auth.tokens[0].env");
    expect(without.policy.auth?.tokens[0]?.sha256).toBeUndefined();
  });

  it("reads an env token without the newline a secret stored with echo ends in, and says so", async () => {
    const document = { version: 1, rules: [], auth: { tokens: [{ team: "mobile", env: "TOKEN_MOBILE" }] } };
    const padded = await loaded(document, { TOKEN_MOBILE: "s3cret\n" });
    const clean = await loaded(document, { TOKEN_MOBILE: "s3cret" });
    expect(padded.policy.auth?.tokens[0]?.sha256).toBe(clean.policy.auth?.tokens[0]?.sha256);
    expect(padded.warnings.map((w) => `${w.path}: ${w.message}`)).toEqual([
      "$.auth.tokens[0].env: the value of TOKEN_MOBILE has spaces or a newline around it; they are not part of the token",
    ]);
  });

  it("warns of a token hash taken of nothing, an unset variable's, which no token can match", async () => {
    // `printf %s "$UNSET" | sha256sum`, `echo "$UNSET" | sha256sum`, and the latter on Windows.
    const hashes = [await sha256(""), await sha256("\n"), await sha256("\r\n")];
    const { warnings } = await loaded({
      version: 1,
      rules: [],
      auth: {
        tokens: [
          ...hashes.map((h) => ({ team: "mobile", sha256: h })),
          { team: "web", sha256: await sha256("t") },
        ],
      },
    });
    const fix =
      'is the SHA-256 of no token (an empty or unset variable was hashed), so team "mobile" cannot authenticate with it: hash the token itself with printf %s "$TOKEN" | hookgate token hash';
    expect(warnings.map((w) => `${w.path}: ${w.message}`)).toEqual([
      `$.auth.tokens[0].sha256: ${fix}`,
      `$.auth.tokens[1].sha256: ${fix}`,
      `$.auth.tokens[2].sha256: ${fix}`,
    ]);
  });

  it("refuses one token listed for two teams, which would authenticate as whichever came first", async () => {
    const sha256 = "0af148632bfc2bdf9076bdc41fa58336a206cd23532da915cc5d2f9e9c3f6a50";
    const problems = await problemsOf({
      version: 1,
      rules: [],
      auth: {
        tokens: [
          { team: "platform", sha256 },
          { team: "platform", sha256 },
          { team: "mobile", sha256 },
        ],
      },
    });
    expect(problems.map((p) => `${p.path}: ${p.message}`)).toEqual([
      '$.auth.tokens[2]: is the same token as $.auth.tokens[0], of team "platform": a token names one team',
    ]);
  });

  it("indexes rules by event, keeping file order with wildcard rules, and leaves off rules out", async () => {
    const policy = await policyFrom(
      policyWith(
        rule({ id: "pre" }),
        { id: "all", on: "*", context: "c" },
        { id: "stop", on: ["Stop", "PreToolUse"], decide: "block", where: { stop_hook_active: false } },
        rule({ id: "off", mode: "off" }),
      ),
    );
    expect(policy.rulesFor("PreToolUse").map((r) => r.id)).toEqual(["pre", "all", "stop"]);
    expect(policy.rulesFor("Stop").map((r) => r.id)).toEqual(["all", "stop"]);
    expect(policy.rulesFor("SomeFutureEvent").map((r) => r.id)).toEqual(["all"]);
  });

  it("hashes the policy's JSON, so a change changes x-hookgate-policy and reformatting does not", async () => {
    const a = await policyFrom(policyWith(rule({})));
    const b = await policyFrom(policyWith(rule({ reason: "changed" })));
    expect(a.hash).not.toBe(b.hash);
    // The file as written and as `jq -c` minifies it for a Lambda variable or a Worker secret.
    const { loadPolicy } = await import("../../src/core/policy.js");
    const document = policyWith(rule({}));
    const hashOf = async (text: string) => {
      const loaded = await loadPolicy(text, { env: () => undefined, sha256 });
      if (!loaded.ok) throw new Error("invalid");
      return loaded.value.policy.hash;
    };
    const pretty = await hashOf(`${JSON.stringify(document, null, 2)}\n`);
    expect(await hashOf(JSON.stringify(document))).toBe(pretty);
    expect(pretty).toBe((await sha256(JSON.stringify(document))).slice(0, 16));
  });

  it("parses the document half alone for tools that need only the schema", () => {
    expect(parsePolicyDocument('{"version":1,"rules":[]}').ok).toBe(true);
  });
});

describe("notifies", () => {
  const sinks = { ops: { type: "webhook", url: "https://hooks.example.test/in" } };
  const policyNotifying = (mode: string) =>
    policyFrom({ version: 1, sinks, rules: [{ id: "tell", on: "Stop", mode, notify: ["ops"] }] });

  it("is true of a policy with an enforcing notify rule, which puts events on the queue", async () => {
    expect(notifies(await policyNotifying("enforce"))).toBe(true);
  });

  // The runtimes' check of a notifying policy with no queue: a rule that is off or in shadow
  // puts nothing on the queue (evaluate.ts), so it must not fail that check.
  it.each(["off", "shadow"])("is false when every notify rule is %s, since none sends", async (mode) => {
    expect(notifies(await policyNotifying(mode))).toBe(false);
  });
});

describe("a field missing altogether", () => {
  it("is said to be required, not to match no accepted form", async () => {
    const { loadPolicy } = await import("../../src/core/policy.js");
    const { nodeSha256 } = await import("../../src/adapters/hash/node-crypto.js");
    const load = (rule: Record<string, unknown>) =>
      loadPolicy(JSON.stringify({ version: 1, rules: [rule] }), { env: () => undefined, sha256: nodeSha256 });
    const missing = await load({ id: "a", decide: "deny" });
    expect(!missing.ok && missing.error).toEqual([
      { severity: "error", path: "$.rules[0].on", message: "is required" },
    ]);
    const wrong = await load({ id: "a", on: 42, decide: "deny" });
    expect(!wrong.ok && wrong.error[0]?.message).toBe("must be a string or a list");
  });
});

describe("schema messages that say what to fix (a hunt)", () => {
  const messagesOf = async (document: Record<string, unknown>) =>
    (await problemsOf({ version: 1, rules: [], ...document })).map((p) => `${p.path}: ${p.message}`);

  it("names the accepted forms of a union, or the field inside the form that was meant", async () => {
    expect(await messagesOf({ sinks: { s: { type: "teams", url: "https://x.example/" } } })).toEqual([
      '$.sinks.s.type: must be one of "slack", "discord", "webhook", "github-dispatch"',
    ]);
    expect(await messagesOf({ auth: { tokens: [{ team: "a" }] } })).toEqual([
      '$.auth.tokens[0]: needs "sha256" or "env"',
    ]);
    expect(await messagesOf({ rules: [{ id: "a", on: 5, decide: "deny" }] })).toEqual([
      "$.rules[0].on: must be a string or a list",
    ]);
    expect(
      await messagesOf({ rules: [{ id: "a", on: "Stop", where: { x: { regex: 5 } }, decide: "block" }] }),
    ).toEqual(["$.rules[0].where.x.regex: must be a string, not 5"]);
  });

  it("suggests the value meant of a field that takes a few, in its case or spelt right", async () => {
    // Values are case-sensitive: "Deny" read as any other unknown word left the reader to spot it.
    expect(
      await messagesOf({
        rules: [
          { id: "a", on: "PreToolUse", decide: "Deny" },
          { id: "b", on: "PreToolUse", decide: "dney" },
          { id: "c", on: "PreToolUse", decide: "maybe" },
          { id: "d", on: "PreToolUse", decide: "approve" },
        ],
        sinks: { s: { type: "Slack", url: "https://hooks.slack.com/services/x" } },
      }),
    ).toEqual([
      '$.rules[0].decide: must be one of "allow", "deny", "ask", "defer", "block": did you mean "deny"? values are case-sensitive',
      '$.rules[1].decide: must be one of "allow", "deny", "ask", "defer", "block": did you mean "deny"?',
      '$.rules[2].decide: must be one of "allow", "deny", "ask", "defer", "block"',
      // Claude Code's old word for an allow, far from any value's name: it got no suggestion.
      '$.rules[3].decide: must be one of "allow", "deny", "ask", "defer", "block": did you mean "allow"? "approve" is Claude Code\'s deprecated word for it',
      '$.sinks.s.type: must be one of "slack", "discord", "webhook", "github-dispatch": did you mean "slack"? values are case-sensitive',
    ]);
  });

  it("suggests the sink or model meant when a rule names one the policy does not define", async () => {
    expect(
      await messagesOf({
        rules: [
          { id: "a", on: "Stop", decide: "block", notify: ["eng-slak", "pager", "cd", "CI"] },
          { id: "b", on: "PreToolUse", prompt: { text: "x", model: "Fats" } },
        ],
        sinks: {
          "eng-slack": { type: "slack", url: "https://hooks.slack.com/services/x" },
          ci: { type: "webhook", url: "https://ci.example/in" },
        },
        models: { fast: { provider: "anthropic", model: "claude-haiku-4-5", apiKey: "env:K" } },
      }),
    ).toEqual([
      '$.rules[0].notify[0]: names the sink "eng-slak", which $.sinks does not define: did you mean "eng-slack"?',
      '$.rules[0].notify[1]: names the sink "pager", which $.sinks does not define',
      '$.rules[0].notify[2]: names the sink "cd", which $.sinks does not define',
      '$.rules[0].notify[3]: names the sink "CI", which $.sinks does not define: did you mean "ci"?',
      '$.rules[1].prompt.model: names the model "Fats", which $.models does not define: did you mean "fast"?',
    ]);
  });

  it("refuses a GitHub event type longer than GitHub takes, rather than cut it to one no workflow listens for", async () => {
    // It was cut to 100 characters when sent: GitHub answered 204, and the workflow whose
    // `types` named the whole event type never ran, with nothing in any log.
    const sink = { type: "github-dispatch", repo: "acme/app", token: "env:GITHUB_TOKEN" };
    expect(await messagesOf({ sinks: { ci: { ...sink, eventType: "e".repeat(101) } } })).toEqual([
      "$.sinks.ci.eventType: must be at most 100 characters, GitHub's limit for a repository_dispatch event_type",
    ]);
    const longest = await policyFrom({
      version: 1,
      rules: [],
      sinks: { ci: { ...sink, eventType: "e".repeat(100) } },
    });
    expect(longest.document.sinks?.ci).toMatchObject({ eventType: "e".repeat(100) });
  });

  it("refuses a GitHub repo whose owner or name is . or .., which the URL would climb out of", async () => {
    // "../.." passed as owner/name, and the URL parser made the dispatch's target
    // https://api.github.com/dispatches: a 404 at each delivery, named nowhere in the policy.
    const sink = { type: "github-dispatch", eventType: "end", token: "env:GITHUB_TOKEN" };
    for (const repo of ["../..", "acme/..", "./app", "acme/."])
      expect(await messagesOf({ sinks: { ci: { ...sink, repo } } })).toEqual([
        "$.sinks.ci.repo: must be owner/name, neither of them . or ..",
      ]);
    const dotted = await policyFrom({
      version: 1,
      rules: [],
      sinks: { ci: { ...sink, repo: "acme.io/.github" } },
    });
    expect(dotted.document.sinks?.ci).toMatchObject({ repo: "acme.io/.github" });
  });

  it("says what a value of the wrong type must be, and what to write when it is the right value quoted or unlisted", async () => {
    // A hunt of the messages: these read "expected number", "expected int", "expected array",
    // zod's words, naming neither the value nor what to write.
    expect(
      await messagesOf({
        defaults: { deadlineMs: "5000" },
        egress: { allowNat64: "false" },
        rules: [
          { id: "a", on: "PreToolUse", matcher: ["Bash"], teams: "platform", notify: "s", decide: "deny" },
          { id: "b", on: "PreToolUse", prompt: { text: "ok?", model: "m", timeoutMs: 1.5 } },
        ],
        sinks: { s: { type: "slack", url: "env:SLACK_URL", retryScheduleSeconds: "5" } },
        models: { m: { provider: "anthropic", model: "claude-haiku-4-5", apiKey: "k", maxConcurrent: "x" } },
      }),
    ).toEqual([
      "$.defaults.deadlineMs: must be a number: write 5000, without quotes",
      "$.egress.allowNat64: must be true or false: write false, without quotes",
      '$.rules[0].matcher: must be a string, not a list: write "Bash"',
      '$.rules[0].teams: must be a list: write ["platform"] for a list of one',
      '$.rules[0].notify: must be a list: write ["s"] for a list of one',
      "$.rules[1].prompt.timeoutMs: must be a whole number, not 1.5",
      '$.sinks.s.retryScheduleSeconds: must be a list, not "5"',
      '$.models.m.maxConcurrent: must be a number, not "x"',
    ]);
  });

  it("says a number past a double's range is too large, not null (JSON.parse reads it as infinity)", async () => {
    // Before, `"deadlineMs": 1e400` was refused as `must be a whole number, not null`.
    const text =
      '{"version": 1, "defaults": {"deadlineMs": 1e400}, "rules": [{"id": "a", "on": "Stop", "decide": "block", "reason": 1e999}], "models": {"m": {"provider": "openai", "model": "x", "apiKey": "env:K", "cacheTtlSeconds": -1e999}}}';
    expect((await problemsOf(text)).map((p) => `${p.path}: ${p.message}`)).toEqual([
      "$.defaults.deadlineMs: is too large a number: past about 1.8e308 it reads as infinity; write a smaller one",
      "$.rules[0].reason: must be a string, not a number too large to read (it reads as infinity)",
      "$.models.m.cacheTtlSeconds: is too large a number: past about 1.8e308 it reads as infinity; write a smaller one",
    ]);
    // A where literal takes a number among other kinds: `"x": 1e400` was told it "must be a
    // string, a number, true or false, null or an object", which it is, as written.
    const where =
      '{"version": 1, "rules": [{"id": "a", "on": "PreToolUse", "decide": "deny", "where": {"x": 1e400, "y": -1e999}}]}';
    expect((await problemsOf(where)).map((p) => `${p.path}: ${p.message}`)).toEqual([
      "$.rules[0].where.x: is too large a number: past about 1.8e308 it reads as infinity; write a smaller one",
      "$.rules[0].where.y: is too large a number: past about 1.8e308 it reads as infinity; write a smaller one",
    ]);
  });

  it("never quotes a value of the wrong type where a secret is written (a token, a URL, a header, a key)", async () => {
    // A review: `"headers": "Bearer <token>"` was refused as `must be an object, not "Bearer <token>"`,
    // and the load error is logged by serve, a SIGHUP reload, Lambda and the Worker.
    const messages = await messagesOf({
      auth: { tokens: "tok-SECRET-1" },
      egress: { allowedHttpHookUrls: "https://hooks.slack.com/services/T0/B0/SECRET-2" },
      rules: [
        { id: "f", on: "PreToolUse", forward: { url: "https://x.example/h", headers: "Bearer SECRET-3" } },
      ],
      sinks: { s: { type: "webhook", url: "https://x.example/in", secret: 123456789 } },
    });
    expect(messages).toEqual([
      "$.auth.tokens: must be a list: write the string inside [ ] for a list of one",
      "$.egress.allowedHttpHookUrls: must be a list: write the string inside [ ] for a list of one",
      "$.rules[0].forward.headers: must be an object, not a string",
      "$.sinks.s.secret: must be a string, not a number",
    ]);
    expect(messages.join("\n")).not.toMatch(/SECRET|123456789/);
  });

  const operators = "equals, regex, glob, contains, startsWith, in, exists, not";

  it.each<[says: string, where: Record<string, unknown>, messages: string[]]>([
    [
      // A hunt of the messages: `"tool_input": {"command": "ls"}` read `unknown key "command"` and
      // again "an operator object takes exactly one of ...", never what to write.
      "a where condition nested as the event nests it is written with a dotted path, once per condition",
      { tool_input: { command: "ls" }, cwd: { regex: "^/srv", glb: "x" }, x: { not: { is: 1 } } },
      [
        `$.rules[0].where.tool_input: unknown key "command": a where condition is a literal or an object with one of ${operators}; to test a field inside "tool_input", write its dotted path as the where key: "tool_input.command"`,
        `$.rules[0].where.cwd: unknown key "glb" (did you mean "glob"?): a where condition is a literal or an object with one of ${operators}`,
        `$.rules[0].where.x.not: unknown key "is": a where condition is a literal or an object with one of ${operators}`,
      ],
    ],
    [
      // `{"regx": "^/srv"}` was read as a field nested in the condition: the message said to write
      // `"cwd.regx"` as the where key, which loads as a condition on a field no event has.
      "the operator a mistyped one means, rather than only a dotted path that never holds",
      {
        cwd: { regx: "^/srv" },
        "tool_input.command": { startswith: "rm" },
        x: { not: { exist: true } },
        y: { IN: [1] },
        z: { regex: "^a", glb: "x" },
      },
      [
        `$.rules[0].where.cwd: unknown key "regx" (did you mean "regex"?): a where condition is a literal or an object with one of ${operators}; or, to test a field inside "cwd", write its dotted path as the where key: "cwd.regx"`,
        `$.rules[0].where["tool_input.command"]: unknown key "startswith" (did you mean "startsWith"?): a where condition is a literal or an object with one of ${operators}; or, to test a field inside "tool_input.command", write its dotted path as the where key: "tool_input.command.startswith"`,
        `$.rules[0].where.x.not: unknown key "exist" (did you mean "exists"?): a where condition is a literal or an object with one of ${operators}`,
        `$.rules[0].where.y: unknown key "IN" (did you mean "in"?): a where condition is a literal or an object with one of ${operators}; or, to test a field inside "y", write its dotted path as the where key: "y.IN"`,
        `$.rules[0].where.z: unknown key "glb" (did you mean "glob"?): a where condition is a literal or an object with one of ${operators}`,
      ],
    ],
    [
      // `{"notin": […]}` listed the operators, then said to write "tool_input.command.notin" as a
      // where key: a field no event has, a condition that loads and never holds.
      "a negation written as one key is not around the operator, with no dotted path",
      {
        "tool_input.command": { notin: ["ls", "pwd"] },
        cwd: { not_startsWith: "/srv" },
        tool_input: { notEquals: 1 },
      },
      [
        `$.rules[0].where["tool_input.command"]: unknown key "notin" (did you mean {"not": {"in": …}}?): a where condition is a literal or an object with one of ${operators}`,
        `$.rules[0].where.cwd: unknown key "not_startsWith" (did you mean {"not": {"startsWith": …}}?): a where condition is a literal or an object with one of ${operators}`,
        `$.rules[0].where.tool_input: unknown key "notEquals" (did you mean {"not": {"equals": …}}?): a where condition is a literal or an object with one of ${operators}`,
      ],
    ],
    [
      // Before, `unknown key "flags"` alone: JavaScript's RegExp takes its flags so.
      "a regex's flags given beside it are written inside it, as RE2 reads them",
      { "tool_input.command": { regex: "rm -rf", flags: "gi" }, cwd: { glob: "/srv/**", flags: "i" } },
      [
        `$.rules[0].where["tool_input.command"]: unknown key "flags" (did you mean {"regex": "(?i)rm -rf"}?): a where condition is a literal or an object with one of ${operators}`,
        `$.rules[0].where.cwd: unknown key "flags": a where condition is a literal or an object with one of ${operators}`,
      ],
    ],
    [
      // `{"regex": "^/srv", "regx": "b"}` was told `did you mean "regex"?`: renamed so, the
      // condition would hold "regex" twice.
      "no operator the condition already has is the one a mistyped key means",
      { cwd: { regex: "^/srv", regx: "b" }, y: { in: [1], IN: [2] } },
      [
        `$.rules[0].where.cwd: unknown key "regx": a where condition is a literal or an object with one of ${operators}`,
        `$.rules[0].where.y: unknown key "IN": a where condition is a literal or an object with one of ${operators}`,
      ],
    ],
    [
      // MultiEdit's `tool_input.edits` is two edits from `exists`: `{"edits": {"contains": "x"}}`
      // was answered "did you mean "exists"?", which takes true or false, not a condition.
      "no operator is named for a key whose own value is a condition: it is a field, written nested",
      { tool_input: { edits: { contains: "x" } }, y: { NOT: { exists: true } } },
      [
        `$.rules[0].where.tool_input: unknown key "edits": a where condition is a literal or an object with one of ${operators}; to test a field inside "tool_input", write its dotted path as the where key: "tool_input.edits"`,
        `$.rules[0].where.y: unknown key "NOT" (did you mean "not"?): a where condition is a literal or an object with one of ${operators}; or, to test a field inside "y", write its dotted path as the where key: "y.NOT"`,
      ],
    ],
  ])("says what a where condition's unknown key means: %s", async (_, where, messages) => {
    expect(await messagesOf({ rules: [{ id: "a", on: "PreToolUse", decide: "deny", where }] })).toEqual(
      messages,
    );
  });

  it("says a matcher written as a list is one string, its names joined with |", async () => {
    // `on` and `if` take a list, so a matcher is written as one too; it read "must be a string,
    // not a list", and the | that names several tools went unsaid.
    expect(
      await messagesOf({
        rules: [
          { id: "a", on: "PreToolUse", matcher: ["Write", "Edit"], decide: "deny" },
          { id: "b", on: "PreToolUse", matcher: [], decide: "deny" },
        ],
      }),
    ).toEqual([
      '$.rules[0].matcher: must be a string, not a list: write "Write|Edit", which matches any of them',
      "$.rules[1].matcher: must be a string, not a list",
    ]);
  });

  it('says a matcher written as a list holding "*" is "*", not a joined one that does not load', async () => {
    // "*" matches everything only alone: "*|Write" is split and its "*" read as a regular
    // expression, which does not compile, so the matcher the message named was refused in turn.
    expect(
      await messagesOf({ rules: [{ id: "a", on: "PreToolUse", matcher: ["*", "Write"], decide: "deny" }] }),
    ).toEqual(['$.rules[0].matcher: must be a string, not a list: write "*", which matches any of them']);
    const written = await policyFrom({
      version: 1,
      rules: [{ id: "a", on: "PreToolUse", matcher: "*", decide: "deny" }],
    });
    expect(written.rules.map((r) => r.id)).toEqual(["a"]);
  });

  it("says a where condition that is a list is compared through an operator, naming the three", async () => {
    // A hunt of the messages: it read "must be a string, a number, true or false, null or an
    // object", and an object of what, it did not say.
    expect(
      await messagesOf({
        rules: [{ id: "a", on: "PreToolUse", decide: "deny", where: { "tool_input.paths": ["a", "b"] } }],
      }),
    ).toEqual([
      '$.rules[0].where["tool_input.paths"]: is a list, which a where condition compares through an operator: {"equals": ["a","b"]} for the whole list, {"contains": "a"} for one item, {"in": ["a","b"]} for a value among them',
    ]);
  });

  it('says a "not" around a literal or a list takes an operator, naming the one to write', async () => {
    // POLICY.md puts `not` right after "a literal (equality)", so `{"not": "Bash"}` is a natural
    // thing to write; the message read `must be an object, not "Bash"`, naming no operator.
    expect(
      await messagesOf({
        rules: [
          { id: "a", on: "PreToolUse", decide: "deny", where: { tool_name: { not: "Bash" } } },
          { id: "b", on: "PreToolUse", decide: "deny", where: { "tool_input.n": { not: { not: 3 } } } },
          { id: "c", on: "PreToolUse", decide: "deny", where: { tool_name: { not: ["Bash", "Read"] } } },
          { id: "d", on: "PreToolUse", decide: "deny", where: { tool_input: { not: null } } },
        ],
      }),
    ).toEqual([
      '$.rules[0].where.tool_name.not: must be an operator object, not "Bash": write {"not": {"equals": "Bash"}} for any value but "Bash"',
      '$.rules[1].where["tool_input.n"].not.not: must be an operator object, not 3: write {"not": {"equals": 3}} for any value but 3',
      '$.rules[2].where.tool_name.not: must be an operator object, not a list: write {"not": {"in": ["Bash","Read"]}} for a value not among them',
      '$.rules[3].where.tool_input.not: must be an operator object, not null: write {"not": {"equals": null}} for any value but null',
    ]);
  });

  it("says a token with no team needs one, and a token with both sha256 and env to keep one", async () => {
    // A hunt of the messages: both read "does not match any of the accepted forms", naming
    // neither the missing team nor the key too many.
    const sha256 = "0af148632bfc2bdf9076bdc41fa58336a206cd23532da915cc5d2f9e9c3f6a50";
    expect(
      await messagesOf({
        auth: {
          tokens: [
            { env: "HOOKGATE_TOKEN_MOBILE" },
            { sha256 },
            { team: "a", sha256, env: "HOOKGATE_TOKEN_A" },
            { team: "b", env: "HOOKGATE_TOKEN_B", sha256: "nothex" },
          ],
        },
      }),
    ).toEqual([
      "$.auth.tokens[0].team: is required",
      "$.auth.tokens[1].team: is required",
      '$.auth.tokens[2]: has both "sha256" and "env", but takes only one of them: delete the other',
      '$.auth.tokens[3]: has both "env" and "sha256", but takes only one of them: delete the other',
    ]);
    // A key no form takes is not read as a mix of forms.
    expect(await messagesOf({ auth: { tokens: [{ team: "a", envv: "X" }] } })).toEqual([
      '$.auth.tokens[0]: unknown key "envv" (did you mean "env"?)',
    ]);
  });

  it("names the key no token form takes, and what the token needs, rather than no accepted form", async () => {
    // A token written with the token itself (`"token": "…"`), or a key misnamed, read "does not
    // match any of the accepted forms", naming neither the key nor what to write instead.
    const sha256 = "0af148632bfc2bdf9076bdc41fa58336a206cd23532da915cc5d2f9e9c3f6a50";
    expect(
      await messagesOf({
        auth: {
          tokens: [
            { team: "a", token: "tok-SECRET-1" },
            { team: "b", hash: sha256 },
            { name: "c", sha256 },
            { teams: "d", env: "HOOKGATE_TOKEN_D" },
            { team: "e", sha256, env: "HOOKGATE_TOKEN_E", note: "laptop" },
          ],
        },
      }),
    ).toEqual([
      '$.auth.tokens[0]: unknown key "token", and needs "sha256" or "env"',
      '$.auth.tokens[1]: unknown key "hash", and needs "sha256" or "env"',
      '$.auth.tokens[2]: unknown key "name", and needs "team"',
      '$.auth.tokens[3]: unknown key "teams" (did you mean "team"?)',
      '$.auth.tokens[4]: unknown key "note"',
    ]);
  });

  it("says a version left out or quoted, and what to write", async () => {
    // Before, "must be 1" of both: of "1", which reads as 1, and of a file with no version at all.
    expect(await messagesOf({ version: "1" })).toEqual(["$.version: must be 1: write 1, without quotes"]);
    const { version: _, ...unversioned } = { version: 1, rules: [] };
    expect(await problemsOf(unversioned)).toEqual([
      { severity: "error", path: "$.version", message: 'is required: write "version": 1' },
    ]);
  });

  it("says a missing id or sink url is required, not of the wrong type", async () => {
    expect(
      await messagesOf({
        rules: [{ on: "Stop", notify: ["s"] }],
        sinks: { s: { type: "slack" } },
      }),
    ).toEqual(["$.rules[0].id: is required", "$.sinks.s.url: is required"]);
  });

  it('refuses an env: reference with no name, which read an unset variable named ""', async () => {
    expect(
      await messagesOf({
        models: { m: { provider: "anthropic", model: "x", apiKey: "env:" } },
        sinks: { s: { type: "webhook", url: "https://x.example/", secret: "env:" } },
      }),
    ).toEqual([
      '$.models.m.apiKey: "env:" names no variable: write "env:NAME" with the variable that holds the value',
      '$.sinks.s.secret: "env:" names no variable: write "env:NAME" with the variable that holds the value',
    ]);
  });

  it("loads an env: reference that is no shell's variable name, warning with its path: a container may hold it", async () => {
    const shape =
      '"env:" should be followed by an environment variable\'s name: letters, digits and _, not starting with a digit; no shell can export this one';
    const names = [
      "ANTHROPIC-API-KEY",
      "_OPENAI_KEY2",
      "SLACK WEBHOOK",
      "1DISCORD",
      "HOOK_URL",
      "hook.secret",
      "$GITHUB_TOKEN",
    ];
    const env = Object.fromEntries(
      names.map((name) => [
        name,
        name.includes("KEY") ? "k" : name === "hook.secret" ? "whsec_dGVzdA==" : "https://hooks.example/x",
      ]),
    );
    const policy = await loaded(
      {
        version: 1,
        rules: [],
        models: {
          m: { provider: "anthropic", model: "x", apiKey: "env:ANTHROPIC-API-KEY" },
          ok: { provider: "openai", model: "x", apiKey: "env:_OPENAI_KEY2" },
        },
        sinks: {
          chat: { type: "slack", url: "env:SLACK WEBHOOK" },
          talk: { type: "discord", url: "env:1DISCORD" },
          hook: { type: "webhook", url: "env:HOOK_URL", secret: "env:hook.secret" },
          gh: { type: "github-dispatch", repo: "o/r", eventType: "e", token: "env:$GITHUB_TOKEN" },
        },
      },
      env,
    );
    expect(policy.warnings.map((w) => `${w.severity} ${w.path}: ${w.message}`)).toEqual([
      `warning $.models.m.apiKey: ${shape}`,
      `warning $.sinks.chat.url: ${shape}`,
      `warning $.sinks.talk.url: ${shape}`,
      `warning $.sinks.hook.secret: ${shape}`,
      `warning $.sinks.gh.token: ${shape}`,
    ]);
  });

  it("judges a model's env: url as its apiKey: no name is an error, no shell's name a warning", async () => {
    const model = (url: string) => ({ m: { provider: "anthropic", model: "x", apiKey: "k", url } });
    expect(await messagesOf({ models: model("env:") })).toEqual([
      '$.models.m.url: "env:" names no variable: write "env:NAME" with the variable that holds the value',
    ]);
    const odd = await loaded(
      { version: 1, rules: [], models: model("env:JUDGE-URL") },
      {
        "JUDGE-URL": "https://llm.acme.example/v1/messages",
      },
    );
    expect(odd.warnings.map((w) => `${w.path}: ${w.message}`)).toEqual([
      '$.models.m.url: "env:" should be followed by an environment variable\'s name: letters, digits and _, not starting with a digit; no shell can export this one',
    ]);
    expect(odd.policy.models.get("m")?.url).toBe("https://llm.acme.example/v1/messages");
  });

  it("gives a CIDR's path once, not again inside its message", async () => {
    expect(await messagesOf({ egress: { allowCidrs: ["10.0.0.0/33"] } })).toEqual([
      '$.egress.allowCidrs[0]: "10.0.0.0/33" is not a CIDR (prefix length 33 is longer than 32)',
    ]);
  });
});

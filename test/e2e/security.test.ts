/**
 * Security properties (issue 9, part 5), each at the level where it is honest: end to end
 * against a real `hookgate serve` where the property is about what leaves the process (team
 * isolation, secrets in output, header injection, the egress guard for what the policy
 * configures), in process where it is about a code path (constant-time token comparison).
 */
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import fc from "fast-check";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { authenticate, constantTimeEqual } from "../../src/core/auth.js";
import { verifyStandardWebhook } from "../../src/core/sinks.js";
import { type LoopbackServer, loopbackServer } from "../support/loopback.js";
import { type ModelServer, startModelServer } from "../support/model-server.js";
import { policyFrom, sha256 } from "../support/policy.js";
import { type ServerProcess, startServerProcess } from "../support/process.js";
import { type RawRequest, type RawResponse, sendRaw } from "../support/raw-http.js";
import { tempDir } from "../support/temp.js";

/**
 * The secrets are random, from a seed: HOOKGATE_TEST_SEED replays a run, and a failing test prints
 * the seed it ran with.
 */
const SEED = Number(process.env.HOOKGATE_TEST_SEED ?? Math.floor(Math.random() * 2 ** 31));
let drawn = 0;
/** `length` random bytes, the next of the seed's draws. */
const bytes = (length: number) => {
  drawn++;
  const [value] = fc.sample(fc.uint8Array({ minLength: length, maxLength: length }), {
    seed: SEED + drawn,
    numRuns: 1,
    unbiased: true,
  });
  return Buffer.from(value ?? []);
};
/** Random letters and digits: no shape the masker knows, so only never writing them hides them. */
const plain = (prefix: string) => `${prefix}${bytes(18).toString("hex")}`;

const SECRETS = {
  SEC_TOKEN_A: plain("teamA"),
  SEC_TOKEN_B: plain("teamB"),
  ANTHROPIC_KEY: plain("ak"),
  OPENAI_KEY: plain("ok"),
  WHSEC: `whsec_${bytes(24).toString("base64")}`,
  GH_TOKEN: plain("gh"),
  POLICY_TOKEN: plain("pt"),
  SIGNED_PATH: plain("hookpath"),
  SLACK_PATH: plain("slackpath"),
  INTERNAL_PATH: plain("internalpath"),
  // Shaped like a real Anthropic key, for the model that echoes the key it was sent.
  ANTHROPIC_KEY_SHAPED: `sk-ant-api03-${bytes(30).toString("base64url")}`,
};

beforeEach(({ onTestFailed }) => {
  onTestFailed(() => {
    console.error(`the secrets came from seed ${SEED}: HOOKGATE_TEST_SEED=${SEED} replays them`);
  });
});

type Json = Record<string, unknown>;
const common = { session_id: "s1", transcript_path: "/t.jsonl", cwd: "/p", permission_mode: "default" };
const pre = (tool: string, input: Json) =>
  JSON.stringify({
    ...common,
    hook_event_name: "PreToolUse",
    tool_name: tool,
    tool_input: input,
    tool_use_id: "toolu_1",
  });
const deploy = pre("Bash", { command: "deploy --prod" });

let model: ModelServer;
let downstream: LoopbackServer;
let signedSink: LoopbackServer;
let chatSink: LoopbackServer;
let ciSink: LoopbackServer;
let server: ServerProcess;
let policyDir: string;

/** How each loopback peer answers; changed phase by phase. */
const peers = {
  downstream: { status: 200, body: "", hang: false },
  signed: { status: 204, hang: false, echo: false },
  chat: { status: 200, body: "ok", echo: false },
  ci: { status: 204, body: "", echo: false },
};
let badSignatures = 0;
const responses: RawResponse[] = [];

async function hook(
  body: string | Uint8Array,
  token: string | null = SECRETS.SEC_TOKEN_A,
  extra: Partial<RawRequest> = {},
) {
  const headers: [string, string][] = [["Content-Type", "application/json"]];
  if (token !== null) headers.push(["Authorization", `Bearer ${token}`]);
  const res = await sendRaw(server.url, { path: "/v1/hooks", headers, body, ...extra });
  responses.push(res);
  return res;
}
const auditOf = (res: RawResponse) =>
  server.waitForLine((l) => l.msg === "decision" && l.decisionId === res.headers["x-hookgate-decision-id"]);
const json = (res: RawResponse) => JSON.parse(res.body) as Json & { hookSpecificOutput?: Json };

beforeAll(async () => {
  model = await startModelServer();
  downstream = await loopbackServer((_req, res) => {
    if (peers.downstream.hang) return;
    res.writeHead(peers.downstream.status, { "content-type": "application/json" }).end(peers.downstream.body);
  });
  signedSink = await loopbackServer((req, res) => {
    void verifyStandardWebhook(
      SECRETS.WHSEC,
      {
        id: String(req.headers["webhook-id"] ?? ""),
        timestamp: String(req.headers["webhook-timestamp"] ?? ""),
        signature: String(req.headers["webhook-signature"] ?? ""),
      },
      req.body,
      Date.now(),
    ).then((valid) => {
      if (!valid) badSignatures++;
      if (peers.signed.hang) return;
      // A receiver that quotes the URL it was called on: the path is the secret here.
      res.writeHead(peers.signed.status).end(peers.signed.echo ? `no route for ${req.url}` : "");
    });
  });
  chatSink = await loopbackServer((req, res) =>
    res.writeHead(peers.chat.status).end(peers.chat.echo ? `invalid_token ${req.url}` : peers.chat.body),
  );
  ciSink = await loopbackServer((req, res) => {
    // GitHub never quotes the token; a proxy in front of it might, in no shape the masker knows.
    const token = String(req.headers.authorization).replace(/^Bearer /, "");
    const body = peers.ci.echo ? JSON.stringify({ message: `Bad credentials: ${token}` }) : peers.ci.body;
    res.writeHead(peers.ci.status, { "content-type": "application/json" }).end(body);
  });

  const policy = {
    version: 1,
    auth: {
      tokens: [
        { team: "a", env: "SEC_TOKEN_A" },
        { team: "b", env: "SEC_TOKEN_B" },
      ],
      onFailure: "deny",
    },
    defaults: { onError: "deny" },
    egress: {
      allowedHttpHookUrls: ["http://127.0.0.1:*/*"],
      allowCidrs: ["127.0.0.1/32"],
      httpHookAllowedEnvVars: ["POLICY_TOKEN", "CTRL_VALUE", "WIDE_VALUE", "DEL_VALUE"],
    },
    models: {
      claude: {
        provider: "anthropic",
        model: "claude-haiku-4-5",
        url: model.anthropicUrl,
        apiKey: "env:ANTHROPIC_KEY",
        cacheTtlSeconds: 0,
      },
      gpt: {
        provider: "openai",
        model: "gpt-test",
        url: model.openaiUrl,
        apiKey: "env:OPENAI_KEY",
        cacheTtlSeconds: 0,
      },
      echo: {
        provider: "anthropic",
        model: "claude-haiku-4-5",
        url: model.anthropicUrl,
        apiKey: "env:ANTHROPIC_KEY_SHAPED",
        cacheTtlSeconds: 0,
      },
    },
    sinks: {
      signed: { type: "webhook", url: "env:SIGNED_URL", secret: "env:WHSEC", retryScheduleSeconds: [1] },
      chat: { type: "slack", url: "env:SLACK_URL", retryScheduleSeconds: [1] },
      // Misconfigured to a private address: every delivery is refused by the egress guard.
      internal: { type: "webhook", url: "env:INTERNAL_URL", retryScheduleSeconds: [1] },
      ci: {
        type: "github-dispatch",
        repo: "acme/app",
        eventType: "agent-event",
        url: ciSink.url,
        token: "env:GH_TOKEN",
        retryScheduleSeconds: [1],
      },
    },
    rules: [
      {
        id: "a-deploys",
        on: "PreToolUse",
        teams: ["a"],
        if: "Bash(deploy *)",
        decide: "deny",
        reason: "team a deploys through CI",
        notify: ["signed", "chat", "ci"],
      },
      {
        id: "b-deploys",
        on: "PreToolUse",
        teams: ["b"],
        if: "Bash(deploy *)",
        decide: "ask",
        reason: "team b asks first",
      },
      {
        id: "judge-writes",
        on: "PreToolUse",
        matcher: "Write",
        prompt: { text: "Is this write safe? $ARGUMENTS", model: "claude", timeoutMs: 1500, onError: "deny" },
      },
      {
        id: "judge-edits",
        on: "PreToolUse",
        matcher: "Edit",
        prompt: { text: "Is this edit safe? $ARGUMENTS", model: "echo", timeoutMs: 1500, onError: "deny" },
      },
      {
        id: "judge-prompts",
        on: "UserPromptSubmit",
        prompt: {
          text: "Does this prompt leak a secret? $ARGUMENTS",
          model: "gpt",
          timeoutMs: 1500,
          onError: "deny",
        },
      },
      ...(
        [
          ["team-server", "mcp__team__.*", { Authorization: "Bearer $POLICY_TOKEN" }, ["POLICY_TOKEN"]],
          ["ctrl-header", "mcp__ctrl__.*", { "X-Trace": "$CTRL_VALUE" }, ["CTRL_VALUE"]],
          // biome-ignore lint/suspicious/noTemplateCurlyInString: a Claude Code header template, not JS
          ["wide-header", "mcp__wide__.*", { "X-Trace": "${WIDE_VALUE}" }, ["WIDE_VALUE"]],
          ["del-header", "mcp__del__.*", { "X-Trace": "a$DEL_VALUE" }, ["DEL_VALUE"]],
        ] as const
      ).map(([id, matcher, headers, allowedEnvVars]) => ({
        id,
        on: "PreToolUse",
        matcher,
        forward: { url: `${downstream.url}/hook`, headers, allowedEnvVars, timeoutMs: 1500, onError: "deny" },
      })),
      { id: "session-end", on: "SessionEnd", notify: ["signed", "chat", "ci"] },
      { id: "stop-internal", on: "Stop", notify: ["internal"] },
    ],
  };
  policyDir = tempDir("security");
  writeFileSync(join(policyDir, "policy.json"), JSON.stringify(policy));
  server = await startServerProcess(join(policyDir, "policy.json"), {
    ...SECRETS,
    SIGNED_URL: `${signedSink.url}/in/${SECRETS.SIGNED_PATH}`,
    SLACK_URL: `${chatSink.url}/services/T000/B000/${SECRETS.SLACK_PATH}`,
    INTERNAL_URL: `http://10.0.0.1/in/${SECRETS.INTERNAL_PATH}`,
    // Invalid in a header value: a control character, a character past Latin-1, DEL.
    CTRL_VALUE: "a\u0001b",
    WIDE_VALUE: "caf\u20ac",
    DEL_VALUE: "\u007f",
  });
});
afterAll(async () => {
  await server?.stop();
  for (const peer of [model, downstream, signedSink, chatSink, ciSink]) await peer?.close();
});

async function until(check: () => boolean, what: string, timeoutMs = 20_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
const settled = () =>
  server.lines.filter((l) => l.msg === "delivered" || l.msg === "delivery dead-lettered").length;

describe("one team's token never reaches another team's rules", () => {
  it("judges team a's deploy by team a's rule, and team b's by team b's", async () => {
    const a = await hook(deploy, SECRETS.SEC_TOKEN_A);
    const b = await hook(deploy, SECRETS.SEC_TOKEN_B);
    expect(json(a).hookSpecificOutput).toEqual({
      hookEventName: "PreToolUse",
      permissionDecision: "deny",
      permissionDecisionReason: "team a deploys through CI",
    });
    expect(json(b).hookSpecificOutput).toEqual({
      hookEventName: "PreToolUse",
      permissionDecision: "ask",
      permissionDecisionReason: "team b asks first",
    });
    expect(await auditOf(a)).toMatchObject({
      team: "a",
      rules: ["a-deploys"],
      notify: ["signed", "chat", "ci"],
    });
    expect(await auditOf(b)).toMatchObject({ team: "b", rules: ["b-deploys"], notify: [] });
  });

  it("names the team in what the sinks receive, and only for the team whose rule notified", async () => {
    await until(() => settled() >= 3, "team a's three deliveries");
    const delivered = server.lines.filter((l) => l.msg === "delivered");
    expect(delivered.map((l) => l.sink).sort()).toEqual(["chat", "ci", "signed"]);
    const ci = ciSink.received.at(-1);
    expect(JSON.parse(ci?.body ?? "{}").client_payload).toMatchObject({ team: "a", rule: "a-deploys" });
    expect(ciSink.received).toHaveLength(1);
    expect(badSignatures).toBe(0);
  });

  it("says which team a token belongs to, and nothing for a token of no team", async () => {
    const who = async (token: string) =>
      sendRaw(server.url, {
        method: "GET",
        path: "/v1/whoami",
        headers: [["Authorization", `Bearer ${token}`]],
      });
    expect(JSON.parse((await who(SECRETS.SEC_TOKEN_A)).body)).toMatchObject({ team: "a" });
    expect(JSON.parse((await who(SECRETS.SEC_TOKEN_B)).body)).toMatchObject({ team: "b" });
    const none = await who(`${SECRETS.SEC_TOKEN_A}${SECRETS.SEC_TOKEN_B}`);
    responses.push(none);
    expect(none.status).toBe(401);
  });

  it("evaluates no rule at all for a request that fails authentication", async () => {
    for (const token of [
      "",
      "guess",
      SECRETS.SEC_TOKEN_A.slice(0, -1),
      `${SECRETS.SEC_TOKEN_B} `.repeat(2),
    ]) {
      const res = await hook(deploy, token);
      expect(json(res).hookSpecificOutput?.permissionDecision).toBe("deny");
      const audit = await auditOf(res);
      expect(audit.team).toBeUndefined();
      expect(audit.rules).toEqual([]);
      expect(String(audit.error)).toMatch(/^AUTH_/);
    }
  });
});

describe("header values interpolated into forward requests", () => {
  // CR, LF and NUL are removed (POLICY.md, tested in test/unit/forward.test.ts and the egress
  // adapter's tests). Any other character a header value cannot hold is refused by name, not sent.
  it.each([
    ["a control character", "mcp__ctrl__x"],
    ["a character past Latin-1", "mcp__wide__x"],
    ["DEL", "mcp__del__x"],
  ])("refuses %s: nothing is sent, and the rule's onError answers", async (_what, tool) => {
    const before = downstream.received.length;
    const res = await hook(pre(tool, { q: 1 }));
    expect(res.status).toBe(200);
    expect(json(res).hookSpecificOutput).toMatchObject({
      hookEventName: "PreToolUse",
      permissionDecision: "deny",
    });
    expect(downstream.received.length).toBe(before);
    const audit = await auditOf(res);
    expect((audit.pending as Json[])[0]).toMatchObject({
      action: "forward",
      outcome: "FORWARD_INVALID_HEADER",
      onError: "deny",
    });
  });

  it("sends an allowed variable to the downstream hook, and only there", async () => {
    peers.downstream = { status: 200, body: "", hang: false };
    const res = await hook(pre("mcp__team__issue", { title: "x" }));
    expect(res.body).toBe("");
    expect(downstream.received.at(-1)?.headers.authorization).toBe(`Bearer ${SECRETS.POLICY_TOKEN}`);
  });
});

describe("secrets never appear in logs, answers or the audit line", () => {
  it("survives a spread of good and bad requests and failing peers", async () => {
    // Good requests: a judged write, a judged prompt, a forwarded MCP call, a notification.
    model.script({ verdict: { ok: false, reason: "writes a key to disk" } });
    expect(
      json(await hook(pre("Write", { file_path: "/p/a", content: "x" }))).hookSpecificOutput,
    ).toMatchObject({
      permissionDecision: "deny",
    });
    expect(
      json(await hook(JSON.stringify({ ...common, hook_event_name: "UserPromptSubmit", prompt: "hi" }))),
    ).toMatchObject({
      decision: "block",
    });
    peers.downstream = {
      status: 200,
      body: JSON.stringify({ decision: "block", reason: "downstream says no" }),
      hang: false,
    };
    await hook(pre("mcp__team__issue", { title: "x" }));
    const beforeEnd = settled();
    await hook(JSON.stringify({ ...common, hook_event_name: "SessionEnd", reason: "other" }));
    await until(() => settled() >= beforeEnd + 3, "the SessionEnd deliveries");

    // Bad tokens and bad bodies.
    for (const token of [null, "", "nope", SECRETS.SEC_TOKEN_A.toUpperCase(), `${SECRETS.SEC_TOKEN_A}x`]) {
      await hook(deploy, token);
    }
    await hook(deploy, SECRETS.SEC_TOKEN_A, {
      headers: [
        ["Content-Type", "application/json"],
        ["Authorization", `Basic ${Buffer.from(`x:${SECRETS.SEC_TOKEN_A}`).toString("base64")}`],
      ],
    });
    await hook(deploy.slice(0, -5));
    await hook(Buffer.concat([Buffer.from(deploy.slice(0, -3)), Buffer.from([0xff, 0x22, 0x7d, 0x7d])]));
    await hook(pre("Bash", { command: "x".repeat(2 * 1024 * 1024) }));
    await hook(deploy, SECRETS.SEC_TOKEN_A, {
      headers: [["Authorization", `Bearer ${SECRETS.SEC_TOKEN_A}`]],
    });
    // A token written into the hook URL (Claude Code expands no variable there): a route no client
    // has, whose path the answer and the audit line quote, and a query, which nothing reads.
    const inPath = await hook(deploy, null, { path: `/v1/hooks/claude-code/${SECRETS.SEC_TOKEN_A}` });
    expect(json(inPath).systemMessage).toContain('"/v1/hooks/claude-code/[masked]"');
    expect(json(inPath).systemMessage).toContain("Authorization header");
    await hook(deploy, null, { path: `/v1/hooks/claude-code?token=${SECRETS.SEC_TOKEN_A}` });

    // Remote calls failing every way.
    for (const script of [
      { status: 500, body: '{"type":"error","error":{"type":"api_error","message":"overloaded"}}' },
      {
        status: 401,
        body: '{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}',
      },
      { text: "not a verdict" },
      { reset: true as const },
      { delayMs: 3000, next: { verdict: { ok: true, reason: "late" } } },
    ]) {
      model.script(script);
      const res = await hook(pre("Write", { file_path: "/p/b", content: "y" }));
      expect(json(res).hookSpecificOutput).toMatchObject({ permissionDecision: "deny" });
    }
    model.script({ status: 401, body: '{"error":{"message":"Incorrect API key provided"}}' });
    await hook(JSON.stringify({ ...common, hook_event_name: "UserPromptSubmit", prompt: "hi" }));
    for (const reply of [
      { status: 500, body: "boom", hang: false },
      { status: 200, body: "not json", hang: false },
      { status: 302, body: "", hang: false },
      { status: 200, body: "", hang: true },
    ]) {
      peers.downstream = reply;
      const res = await hook(pre("mcp__team__issue", { title: "x" }));
      expect(json(res).hookSpecificOutput).toMatchObject({ permissionDecision: "deny" });
    }
    // Peers that echo the credential they were sent into the text hookgate quotes back.
    model.script((req) => ({
      status: 401,
      body: JSON.stringify({
        type: "error",
        error: {
          type: "authentication_error",
          message: `invalid x-api-key ${String(req.headers["x-api-key"])}`,
        },
      }),
    }));
    expect(json(await hook(pre("Edit", { file_path: "/p/c" }))).hookSpecificOutput).toMatchObject({
      permissionDecision: "deny",
    });
    // The same with keys in no shape the masker knows: only scrubbing by value hides them.
    model.script((req) => ({
      status: 401,
      body: JSON.stringify({
        type: "error",
        error: { type: "authentication_error", message: `unknown key ${String(req.headers["x-api-key"])}` },
      }),
    }));
    expect(json(await hook(pre("Write", { file_path: "/p/d" }))).hookSpecificOutput).toMatchObject({
      permissionDecision: "deny",
    });
    model.script((req) => ({
      status: 401,
      body: JSON.stringify({ error: { message: `unknown key ${String(req.headers.authorization)}` } }),
    }));
    await hook(JSON.stringify({ ...common, hook_event_name: "UserPromptSubmit", prompt: "hi" }));
    const bearer = `Bearer ${SECRETS.POLICY_TOKEN}`;
    for (const body of [
      `refused: ${SECRETS.POLICY_TOKEN}`,
      JSON.stringify({ hookSpecificOutput: { hookEventName: SECRETS.POLICY_TOKEN } }),
      `refused: ${bearer}`,
      `{"reason": "refused: ${bearer}"`,
      JSON.stringify({ hookSpecificOutput: { hookEventName: `refused: ${bearer}` } }),
      JSON.stringify({ hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: bearer } }),
    ]) {
      peers.downstream = { status: 200, body, hang: false };
      const res = await hook(pre("mcp__team__issue", { title: "x" }));
      expect(json(res).hookSpecificOutput).toMatchObject({ permissionDecision: "deny" });
    }
    peers.downstream = { status: 200, body: "", hang: false };

    // Sinks failing: a 500 retried then dead-lettered, a 401 and a Slack error dead-lettered at once.
    const before = settled();
    peers.signed = { status: 500, hang: false, echo: false };
    peers.chat = { status: 200, body: "invalid_token", echo: false };
    peers.ci = { status: 401, body: '{"message":"Bad credentials"}', echo: false };
    await hook(deploy);
    await hook(JSON.stringify({ ...common, hook_event_name: "Stop", stop_hook_active: false }));
    await until(() => settled() >= before + 4, "the failing deliveries to settle", 30_000);

    // Sinks that echo what they were sent (their URL's secret path, the token) in their error.
    const echoed = settled();
    peers.signed = { status: 404, hang: false, echo: true };
    peers.chat = { status: 200, body: "", echo: true };
    peers.ci = { status: 401, body: "", echo: true };
    await hook(deploy);
    await until(() => settled() >= echoed + 3, "the echoing sinks' dead letters", 30_000);
    const echoes = server.lines.filter((l) => l.msg === "delivery dead-lettered").slice(-3);
    for (const line of echoes) expect(String(line.reason)).toContain("[masked]");

    await assertNoSecretAnywhere();
  });
});

/**
 * Every file under the data dir as text: the SQLite files and the intake journal's segments
 * (the current one keeps every job this process journaled), which must hold none either.
 */
function dataDirFiles(): string[] {
  const files = readdirSync(server.dataDir, { recursive: true, withFileTypes: true }).filter((e) =>
    e.isFile(),
  );
  expect(files.some((e) => e.name.startsWith("intake-"))).toBe(true);
  return files.map((e) => readFileSync(join(e.parentPath, e.name)).toString("latin1"));
}

async function assertNoSecretAnywhere(): Promise<void> {
  const metrics = await sendRaw(server.url, { method: "GET", path: "/metrics" });
  responses.push(metrics);
  const { stdout, stderr } = server.output();
  const dataFiles = dataDirFiles();
  const places: [string, string][] = [
    ["stdout (every log and audit line)", stdout],
    ["stderr", stderr],
    ...responses.map((r, i): [string, string] => [
      `response ${i}`,
      `${JSON.stringify(r.headers)}\n${r.body}`,
    ]),
    ...dataFiles.map((text, i): [string, string] => [`data dir file ${i}`, text]),
  ];
  const values = Object.entries(SECRETS).flatMap(([name, value]) => [
    [name, value],
    [`${name} (base64)`, Buffer.from(value).toString("base64")],
  ]);
  const found: string[] = [];
  for (const [where, text] of places) {
    for (const [name, value] of values)
      if (value && text.includes(value as string)) found.push(`${name} in ${where}`);
  }
  expect(found).toEqual([]);
  // The spread ran: audit lines, egress refusals and dead letters were written and searched.
  expect(stdout).toMatch(/"msg":"delivery dead-lettered"/);
  expect(stdout).toMatch(/"error":"AUTH_UNKNOWN_TOKEN"/);
  expect(stdout).toMatch(/"outcome":"JUDGE_TIMEOUT"/);
  expect(stdout).toMatch(/"msg":"egress refused","code":"EGRESS_NOT_ALLOWLISTED"/);
}

describe("token comparison in constant time", () => {
  const tokens = ["a", "x".repeat(63), "y".repeat(64), "z".repeat(65), "w".repeat(10_000)];

  it("compares digests of equal length, whatever the length of the token sent, against every team", async () => {
    const policy = await policyFrom(
      {
        version: 1,
        rules: [],
        auth: {
          tokens: [
            { team: "first", sha256: await sha256("short") },
            { team: "second", env: "SECOND" },
            { team: "third", sha256: await sha256("a-much-longer-token-for-the-third-team") },
          ],
        },
      },
      { SECOND: "second-token" },
    );
    for (const token of [...tokens, "short"]) {
      const calls: [string, string][] = [];
      const spy = (a: string, b: string) => {
        calls.push([a, b]);
        return constantTimeEqual(a, b);
      };
      const outcome = await authenticate(`Bearer ${token}`, policy, sha256, undefined, spy);
      expect(outcome.ok).toBe(token === "short");
      // Every configured token is compared, the first match included: no early exit.
      expect(calls).toHaveLength(3);
      for (const [presented, configured] of calls) {
        expect(presented).toBe(await sha256(token));
        expect(configured).toMatch(/^[0-9a-f]{64}$/);
      }
    }
  });

  it("reads every character of both digests, even when the first one differs", () => {
    const reads = (text: string) => {
      let count = 0;
      // Only what the comparison uses of a string: its length and its character codes.
      const probe = {
        length: text.length,
        charCodeAt: (i: number) => {
          count++;
          return text.charCodeAt(i);
        },
      } as unknown as string;
      return { probe, count: () => count };
    };
    const a = reads("0".repeat(64));
    const b = reads(`1${"0".repeat(63)}`);
    expect(constantTimeEqual(a.probe, b.probe)).toBe(false);
    expect([a.count(), b.count()]).toEqual([64, 64]);
    const c = reads("0".repeat(64));
    const d = reads("0".repeat(63));
    expect(constantTimeEqual(c.probe, d.probe)).toBe(false);
    expect([c.count(), d.count()]).toEqual([64, 64]);
  });
});

describe("the egress guard holds for the sinks, models and forward targets a policy configures", () => {
  let gateway: ServerProcess;
  let canary: LoopbackServer;
  let redirector: LoopbackServer;
  const metricValue = (text: string, name: string, labels: string) => {
    const line = text.split("\n").find((l) => l.startsWith(`${name}{${labels}} `));
    return line === undefined ? 0 : Number(line.split(" ").at(-1));
  };

  // Every target is refused; each prompt rule has its own onError, so the answer shows it applied.
  const TARGETS = [
    { id: "metadata", host: "169.254.169.254", code: "EGRESS_BLOCKED_ADDRESS", onError: "deny" },
    { id: "private", host: "10.0.0.1", code: "EGRESS_BLOCKED_ADDRESS", onError: "ask" },
    { id: "localname", host: "localhost:CANARY", code: "EGRESS_BLOCKED_NAME", onError: "allow" },
    { id: "mapped", host: "[::ffff:127.0.0.1]:CANARY", code: "EGRESS_BLOCKED_ADDRESS", onError: "deny" },
    { id: "metaname", host: "metadata.google.internal", code: "EGRESS_BLOCKED_NAME", onError: "deny" },
    { id: "redirect", host: "[::1]:REDIRECTOR", code: "EGRESS_REDIRECT", onError: "deny" },
  ] as const;

  beforeAll(async () => {
    canary = await loopbackServer((_req, res) => res.writeHead(200).end("{}"));
    // Allowed itself (::1 is in allowCidrs), it answers everything with a redirect to the canary.
    redirector = await loopbackServer(
      (_req, res) => res.writeHead(302, { location: `${canary.url}/followed` }).end(),
      "::1",
    );
    const origin = (host: string) =>
      `http://${host.replace("CANARY", String(canary.port)).replace("REDIRECTOR", String(redirector.port))}`;
    const policy = {
      version: 1,
      defaults: { onError: "deny" },
      // Only the redirector's address is allowed; no allowedHttpHookUrls, so the address and
      // name rules are what refuse.
      egress: { allowCidrs: ["::1/128"] },
      models: Object.fromEntries(
        TARGETS.map((t) => [
          t.id,
          {
            provider: "anthropic",
            model: "m",
            url: `${origin(t.host)}/v1/messages`,
            apiKey: "test-key",
            cacheTtlSeconds: 0,
          },
        ]),
      ),
      sinks: Object.fromEntries(
        TARGETS.map((t) => [
          t.id,
          { type: "webhook", url: `${origin(t.host)}/hook`, retryScheduleSeconds: [1] },
        ]),
      ),
      rules: TARGETS.flatMap((t) => [
        {
          id: `judge-${t.id}`,
          on: "PreToolUse",
          matcher: `Probe_${t.id}`,
          prompt: { text: "Safe? $ARGUMENTS", model: t.id, timeoutMs: 2000, onError: t.onError },
        },
        {
          id: `forward-${t.id}`,
          on: "PreToolUse",
          matcher: `Forward_${t.id}`,
          forward: { url: `${origin(t.host)}/hook`, timeoutMs: 2000, onError: t.onError },
        },
        { id: `notify-${t.id}`, on: "Notification", matcher: t.id, notify: [t.id] },
      ]),
    };
    const dir = tempDir("egress");
    writeFileSync(join(dir, "policy.json"), JSON.stringify(policy));
    gateway = await startServerProcess(join(dir, "policy.json"));
  });
  afterAll(async () => {
    await gateway?.stop();
    await canary?.close();
    await redirector?.close();
  });

  it.each(TARGETS)(
    "refuses the $id model ($host) and answers with its onError ($onError)",
    async (target) => {
      const res = await sendRaw(gateway.url, {
        path: "/v1/hooks",
        headers: [["Content-Type", "application/json"]],
        body: pre(`Probe_${target.id}`, { q: 1 }),
      });
      expect(res.status).toBe(200);
      if (target.onError === "allow") expect(res.body).toBe("");
      else {
        expect(JSON.parse(res.body).hookSpecificOutput).toMatchObject({
          permissionDecision: target.onError,
          permissionDecisionReason: expect.stringContaining(`(${target.code}: `),
        });
      }
      const audit = await gateway.waitForLine(
        (l) => l.msg === "decision" && l.decisionId === res.headers["x-hookgate-decision-id"],
      );
      expect(audit.pending).toEqual([
        expect.objectContaining({
          rule: `judge-${target.id}`,
          outcome: target.code,
          onError: target.onError,
        }),
      ]);
    },
  );

  it.each(TARGETS)(
    "refuses the $id forward target ($host) and answers with its onError ($onError)",
    async (target) => {
      const res = await sendRaw(gateway.url, {
        path: "/v1/hooks",
        headers: [["Content-Type", "application/json"]],
        body: pre(`Forward_${target.id}`, { q: 1 }),
      });
      expect(res.status).toBe(200);
      if (target.onError === "allow") expect(res.body).toBe("");
      else {
        expect(JSON.parse(res.body).hookSpecificOutput).toMatchObject({
          permissionDecision: target.onError,
          permissionDecisionReason: expect.stringContaining(`(${target.code}: `),
        });
      }
      const audit = await gateway.waitForLine(
        (l) => l.msg === "decision" && l.decisionId === res.headers["x-hookgate-decision-id"],
      );
      expect(audit.pending).toEqual([
        expect.objectContaining({
          rule: `forward-${target.id}`,
          outcome: target.code,
          onError: target.onError,
        }),
      ]);
    },
  );

  it.each(TARGETS)("refuses the $id sink ($host): dead-lettered, the answer unaffected", async (target) => {
    const res = await sendRaw(gateway.url, {
      path: "/v1/hooks",
      headers: [["Content-Type", "application/json"]],
      body: JSON.stringify({
        ...common,
        hook_event_name: "Notification",
        message: "m",
        notification_type: target.id,
      }),
    });
    expect(res.status).toBe(200);
    expect(res.body).toBe("");
    const dead = await gateway.waitForLine(
      (l) => l.msg === "delivery dead-lettered" && l.sink === target.id,
      20_000,
    );
    expect(String(dead.reason)).toContain(target.code);
  });

  it("never reached the addresses behind the refusals, and counts every refusal in /metrics", async () => {
    expect(canary.received).toEqual([]);
    // The redirector was asked (by the model call, the forward and the sink), and its redirect
    // never followed.
    expect(redirector.received.length).toBeGreaterThanOrEqual(3);
    const metrics = (await sendRaw(gateway.url, { method: "GET", path: "/metrics" })).body;
    const refusals = gateway.lines.filter((l) => l.msg === "egress refused");
    for (const code of new Set(TARGETS.map((t) => t.code))) {
      const logged = refusals.filter((l) => l.code === code).length;
      expect(logged, code).toBeGreaterThanOrEqual(3 * TARGETS.filter((t) => t.code === code).length);
      expect(metricValue(metrics, "hookgate_egress_refused_total", `code="${code}"`), code).toBe(logged);
    }
    for (const target of TARGETS) {
      const calls = metricValue(
        metrics,
        "hookgate_judge_calls_total",
        `model="${target.id}",outcome="${target.code}"`,
      );
      expect(calls, target.id).toBe(1);
    }
  });
});

describe("secrets in egress refusals of a sink whose env: URL carries its secret in the path", () => {
  // The egress guard's reasons and the "egress refused" log line show a URL's origin only
  // (src/core/egress/target.ts describeTarget), never the path a generic webhook keeps its secret in.
  it("keeps the path of a refused sink URL out of the log and the dead-letter queue", async () => {
    const { stdout } = server.output();
    const dataFiles = dataDirFiles();
    // That the refusal happened is asserted by the spread above; this only looks for the path.
    expect(stdout).not.toContain(SECRETS.INTERNAL_PATH);
    for (const text of dataFiles) expect(text).not.toContain(SECRETS.INTERNAL_PATH);
  });
});

describe("text the agent chose in the log", () => {
  // C1's CSI moves the cursor, an override reorders the line, U+2028 ends a line in many viewers;
  // JSON leaves each raw, where it escapes C0's ESC and line feed.
  const FORGED = '\u009b2A\u202e\u2066x\u2069\u2028{"msg":"forged"}\u007f';

  it("writes the session id, tool input, event name and cwd with their controls escaped, read back as sent", async () => {
    const known = await hook(
      JSON.stringify({
        ...common,
        session_id: `s${FORGED}`,
        cwd: `/p${FORGED}`,
        hook_event_name: "PreToolUse",
        tool_name: "Bash",
        tool_input: { command: `deploy ${FORGED}` },
      }),
      SECRETS.SEC_TOKEN_B,
    );
    const unknown = await hook(
      JSON.stringify({ ...common, hook_event_name: `Evt${FORGED}` }),
      SECRETS.SEC_TOKEN_B,
    );
    const lines = [await auditOf(known), await auditOf(unknown)];
    expect(lines[0]).toMatchObject({
      team: "b",
      rules: ["b-deploys"],
      sessionId: `s${FORGED}`,
      toolInput: { command: `deploy ${FORGED}` },
    });
    expect(lines[1]).toMatchObject({ event: `Evt${FORGED}` });
    const raw = server
      .output()
      .stdout.split("\n")
      .filter((l) => lines.some((line) => l.includes(String(line.decisionId))));
    expect(raw).toHaveLength(2);
    for (const line of raw) {
      expect(line).not.toMatch(/[\u007f-\u009f\u2028\u202e\u2066\u2069]/);
      expect(line).toContain('\\u009b2A\\u202e\\u2066x\\u2069\\u2028{\\"msg\\":\\"forged\\"}\\u007f');
    }
  });
});

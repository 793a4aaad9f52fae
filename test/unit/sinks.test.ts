import { createHmac } from "node:crypto";
import { describe, expect, expectTypeOf, it } from "vitest";
import { nodeHmacSha256 } from "../../src/adapters/hash/node-crypto.js";
import { discordWebhookUrl, endsInSlackEndpoint } from "../../src/core/discord-url.js";
import type { SinkDocument } from "../../src/core/policy-schema.js";
import type { HmacSha256 } from "../../src/core/ports.js";
import {
  buildSinkRequest,
  classifySinkResponse,
  DISCORD_LIMITS,
  GITHUB_MAX_BYTES,
  type Notification,
  type ResolvedSink,
  renderSlackMessage,
  SLACK_LIMITS,
  signStandardWebhook,
  TRUNCATION_MARKER,
  verifyStandardWebhook,
  WEBHOOK_MAX_BYTES,
  webCryptoHmacSha256,
} from "../../src/core/sinks.js";

// ---------------------------------------------------------------------------------------------
// Fixtures

const CREATED_AT = Date.UTC(2026, 7, 21, 9, 30, 0);
const SESSION = "1911b193-68cb-487c-97dc-b165bef0f45d";

function notification(fields: Partial<Notification> = {}): Notification {
  return {
    id: "evt_01J9ZK",
    createdAt: CREATED_AT,
    team: "platform",
    client: "claude-code",
    eventName: "PreToolUse",
    decision: "deny",
    reason: "Deleting from / is never allowed",
    ruleId: "no-rm-root",
    event: {
      session_id: SESSION,
      cwd: "/home/dev/proj",
      hook_event_name: "PreToolUse",
      tool_name: "Bash",
      tool_input: { command: "rm -rf /", description: "clean up" },
      tool_use_id: "toolu_01",
    },
    ...fields,
  };
}

const permissionPrompt = notification({
  eventName: "Notification",
  decision: "none",
  reason: undefined,
  ruleId: "tell-slack",
  event: {
    session_id: "e8c979a4-3a8f-42f6-ad27-2828227925c0",
    cwd: "/home/dev/proj",
    hook_event_name: "Notification",
    message: "Claude needs your permission to use Bash",
    notification_type: "permission_prompt",
  },
  relatedTool: { toolName: "Bash", summary: "git push --force origin main" },
});

const sessionEnd = notification({
  eventName: "SessionEnd",
  decision: "none",
  reason: undefined,
  ruleId: "tell-slack",
  event: { session_id: SESSION, cwd: "/home/dev/proj", hook_event_name: "SessionEnd", reason: "other" },
});

const legacyToolUse = notification({
  client: "deepagents-legacy",
  eventName: "tool.use",
  decision: "none",
  reason: undefined,
  ruleId: "audit-tools",
  event: {
    event: "tool.use",
    thread_id: "thread-4f2a9c",
    tool_name: "execute",
    tool_id: "toolu_abc123",
    tool_args: { command: "pytest -q" },
  },
});

interface Block {
  type: string;
  text?: { type: string; text: string; emoji?: boolean };
  fields?: { type: string; text: string }[];
  elements?: { type: string; text: string }[];
}

const blocksOf = (n: Notification, link?: string) => renderSlackMessage(n, link).blocks as Block[];
const headerOf = (blocks: Block[]) => blocks.find((b) => b.type === "header")?.text?.text ?? "";
const sectionTexts = (blocks: Block[]) =>
  blocks.filter((b) => b.type === "section" && b.text).map((b) => b.text?.text ?? "");
const fieldTexts = (blocks: Block[]) => blocks.flatMap((b) => b.fields ?? []).map((f) => f.text);
const contextTexts = (blocks: Block[]) =>
  blocks
    .filter((b) => b.type === "context")
    .flatMap((b) => b.elements ?? [])
    .map((e) => e.text);
const allTexts = (blocks: Block[]) => [
  headerOf(blocks),
  ...sectionTexts(blocks),
  ...fieldTexts(blocks),
  ...contextTexts(blocks),
];

const utf8 = (text: string) => new TextEncoder().encode(text).length;

// ---------------------------------------------------------------------------------------------
// Standard Webhooks (reference/fanout.md (c))

const V1 = {
  secret: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
  id: "msg_p5jXN8AQM9LWM0D4loKWxJek",
  timestamp: 1614265330,
  body: '{"test": 2432232314}',
  signature: "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=",
};
const V2 = {
  secret: "whsec_C2FVsBQIhrscChlQIMV+b5sSYspob7oD",
  id: "msg_27UH4WbU6Z5A5EzD8u03UvzRbpk",
  timestamp: 1649367553,
  body: '{"email":"test@example.com","username":"test_user"}',
  signature: "v1,tZ1I4/hDygAJgO5TYxiSd6Sd0kDW6hPenDe+bTa3Kkw=",
};

/** Verifies vector-1 inputs with the given header overrides, at the vector's own time unless told. */
const verifyV1 = (
  overrides: { id?: string; timestamp?: string; signature?: string },
  now = V1.timestamp * 1000,
) =>
  verifyStandardWebhook(
    V1.secret,
    { id: V1.id, timestamp: String(V1.timestamp), signature: V1.signature, ...overrides },
    V1.body,
    now,
  );

/** An independent oracle: node:crypto HMAC with Buffer's base64 decoder. */
const nodeSign = (secretBase64: string, id: string, ts: number, body: string) =>
  `v1,${createHmac("sha256", Buffer.from(secretBase64, "base64")).update(`${id}.${ts}.${body}`).digest("base64")}`;

describe("signStandardWebhook", () => {
  it.each([
    ["vector 1 (JS, Go, Python, Ruby, PHP, C# suites)", V1],
    ["vector 2 (Rust suite)", V2],
  ])("reproduces the official %s", async (_name, v) => {
    expect(await signStandardWebhook(v.secret, v.id, v.timestamp, v.body)).toBe(v.signature);
  });

  it.each([
    ["WebCrypto (the default, Workers)", webCryptoHmacSha256],
    ["node:crypto (Node and Lambda)", nodeHmacSha256],
  ] as const)("signs and verifies the official vectors through %s", async (_name, hmac) => {
    for (const v of [V1, V2]) {
      expect(await signStandardWebhook(v.secret, v.id, v.timestamp, v.body, hmac)).toBe(v.signature);
      const headers = { id: v.id, timestamp: String(v.timestamp), signature: v.signature };
      expect(await verifyStandardWebhook(v.secret, headers, v.body, v.timestamp * 1000, hmac)).toBe(true);
    }
    // Non-ASCII in the body, and a lone surrogate (U+FFFD in UTF-8 for both): the same bytes signed.
    for (const body of ['{"text":"déploiement ✓ 🚀"}', "x\uD800y", ""]) {
      expect(await signStandardWebhook(V1.secret, V1.id, V1.timestamp, body, hmac)).toBe(
        await signStandardWebhook(V1.secret, V1.id, V1.timestamp, body.replace("\uD800", "\uFFFD"), hmac),
      );
      expect(await signStandardWebhook(V1.secret, V1.id, V1.timestamp, body, hmac)).toBe(
        await signStandardWebhook(V1.secret, V1.id, V1.timestamp, body, webCryptoHmacSha256),
      );
    }
  });

  it("signs a webhook request through the port it is given, once, with the secret's raw key", async () => {
    const calls: { key: string; message: string }[] = [];
    const counting: HmacSha256 = async (key, message) => {
      calls.push({ key: Buffer.from(key).toString("base64"), message });
      return "c2lnbmVk";
    };
    const request = await buildSinkRequest(
      { type: "webhook", url: "https://hooks.example.com/in", secret: V1.secret },
      notification(),
      CREATED_AT,
      counting,
    );
    expect(request.headers["webhook-signature"]).toBe("v1,c2lnbmVk");
    expect(calls).toHaveLength(1);
    expect(calls[0]?.key).toBe(V1.secret.slice("whsec_".length));
    expect(calls[0]?.message).toBe(`evt_01J9ZK.${CREATED_AT / 1000}.${request.body}`);
  });

  it("accepts a secret without the whsec_ prefix", async () => {
    expect(await signStandardWebhook(V1.secret.slice("whsec_".length), V1.id, V1.timestamp, V1.body)).toBe(
      V1.signature,
    );
  });

  it.each([
    ["MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaS", "="],
    ["MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSwBr", "=="],
  ])("decodes the unpadded secret %s as if it ended in %s", async (unpadded, padding) => {
    const signature = await signStandardWebhook(`whsec_${unpadded}`, V1.id, V1.timestamp, V1.body);
    expect(signature).toBe(
      await signStandardWebhook(`whsec_${unpadded}${padding}`, V1.id, V1.timestamp, V1.body),
    );
    expect(signature).toBe(nodeSign(unpadded + padding, V1.id, V1.timestamp, V1.body));
    expect(
      await verifyStandardWebhook(
        `whsec_${unpadded}`,
        { id: V1.id, timestamp: String(V1.timestamp), signature },
        V1.body,
        V1.timestamp * 1000,
      ),
    ).toBe(true);
  });

  it.each(["", "whsec_"])("throws on the empty secret %j", async (secret) => {
    await expect(signStandardWebhook(secret, V1.id, V1.timestamp, V1.body)).rejects.toThrow(/empty/);
    await expect(
      verifyStandardWebhook(secret, { id: V1.id, timestamp: "1", signature: V1.signature }, V1.body, 0),
    ).rejects.toThrow(/empty/);
  });

  it("throws on a secret that is not standard base64", async () => {
    await expect(signStandardWebhook("whsec_not-base64_!", V1.id, V1.timestamp, V1.body)).rejects.toThrow(
      /base64/,
    );
  });

  it.each([1614265330.5, -1, Number.NaN])(
    "refuses the timestamp %s (PHP suite: floats, negatives)",
    async (ts) => {
      await expect(signStandardWebhook(V1.secret, V1.id, ts, V1.body)).rejects.toThrow(RangeError);
    },
  );
});

describe("verifyStandardWebhook", () => {
  it.each([
    ["vector 1", V1],
    ["vector 2", V2],
  ])("accepts the official %s", async (_name, v) => {
    const headers = { id: v.id, timestamp: String(v.timestamp), signature: v.signature };
    expect(await verifyStandardWebhook(v.secret, headers, v.body, v.timestamp * 1000)).toBe(true);
  });

  const decoys = [
    "v1,Ceo5qEr07ixe2NLpvHk3FH9bwy/WavXrAFQ/9tdO6mc=",
    "v2,Ceo5qEr07ixe2NLpvHk3FH9bwy/WavXrAFQ/9tdO6mc=",
    "v1,tFtCZ5RDCPxzWQRWXWPgrCgE2frDBe9gjpbWQxnVfsQ=",
  ];

  it("accepts a multi-signature header whose valid entry is third of four (JS suite)", async () => {
    const signature = [
      decoys[0],
      decoys[1],
      V1.signature,
      "v1,Mm7xgUVICxZfQ3bgf0h0Dof65L/IFx+PnZvnDWPCX6Q=",
    ].join(" ");
    expect(await verifyV1({ signature })).toBe(true);
  });

  it.each([
    ["the last character flipped (Python suite)", "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OA="],
    ["another message's signature (Rust test_no_verify)", "v1,R3PTzyfHASBKHH98a7yexTwaJ4yNIcGhFQc1yuN+BPU="],
    [
      "only decoys (JS and Rust suites)",
      [
        ...decoys,
        "v1,Mm7xgUVICxZfQ3bgf0h0Dof65L/IFx+PnZvnDWPCX6Q=",
        "v1,9DfC1c3eeOrXB6w/5dIDydLNQaEyww5KalE5jLBZucE=",
      ].join(" "),
    ],
    ["the valid signature under another version", "v2,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="],
    ["the valid signature without a version", "g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="],
    ["a partial signature v1,", "v1,"],
    ["the first 8 characters of a valid header", V1.signature.slice(0, 8)],
    ["the valid signature cut by one character", V1.signature.slice(0, -1)],
    ["an empty header", ""],
  ])("rejects %s", async (_name, signature) => {
    expect(await verifyV1({ signature })).toBe(false);
  });

  it.each([
    ["301 s old", -301],
    ["301 s in the future", 301],
  ])("rejects a timestamp %s (300 s tolerance)", async (_name, offset) => {
    const timestamp = V1.timestamp + offset;
    const signature = await signStandardWebhook(V1.secret, V1.id, timestamp, V1.body);
    expect(await verifyV1({ timestamp: String(timestamp), signature })).toBe(false);
  });

  it.each([-300, 300])("accepts a timestamp %i s from now", async (offset) => {
    const timestamp = V1.timestamp + offset;
    const signature = await signStandardWebhook(V1.secret, V1.id, timestamp, V1.body);
    expect(await verifyV1({ timestamp: String(timestamp), signature })).toBe(true);
  });

  it("rejects the vector at a time more than 300 s after it was signed", async () => {
    expect(await verifyV1({}, (V1.timestamp + 301) * 1000)).toBe(false);
  });

  it.each(["hello", "1614265330.0", "-1614265330", " 1614265330", ""])(
    "rejects the timestamp header %j",
    async (timestamp) => {
      expect(await verifyV1({ timestamp })).toBe(false);
    },
  );

  it("rejects a missing id or signature, and a changed id or body", async () => {
    const headers = { id: V1.id, timestamp: String(V1.timestamp), signature: V1.signature };
    const now = V1.timestamp * 1000;
    expect(await verifyStandardWebhook(V1.secret, { ...headers, id: "" }, V1.body, now)).toBe(false);
    expect(
      await verifyStandardWebhook(V1.secret, { id: V1.id, timestamp: headers.timestamp }, V1.body, now),
    ).toBe(false);
    expect(await verifyStandardWebhook(V1.secret, { ...headers, id: "msg_other" }, V1.body, now)).toBe(false);
    expect(await verifyStandardWebhook(V1.secret, headers, '{"test": 2432232315}', now)).toBe(false);
    expect(await verifyStandardWebhook(V2.secret, headers, V1.body, now)).toBe(false);
  });
});

// ---------------------------------------------------------------------------------------------
// Requests

describe("ResolvedSink", () => {
  it("mirrors the policy's sink documents (a literal policy sink is a resolved sink once read)", () => {
    // A type check, which tsc runs over the tests: a sink document is assignable to a resolved sink.
    expectTypeOf<SinkDocument>().toExtend<ResolvedSink>();
  });
});

describe("buildSinkRequest: text that is not valid UTF-16", () => {
  // An agent's JSON may carry `\ud800`: JSON.parse keeps it as a lone surrogate.
  const broken = notification({
    reason: "half \uD83D pair, and \uDE80 the other",
    event: {
      ...notification().event,
      tool_input: { command: "echo \uD800 🚀", "key\uDFFF": "v" },
      message: "\uDBFF",
      notification_type: "idle_prompt",
    },
  });
  it.each<ResolvedSink>([
    { type: "slack", url: "https://hooks.slack.com/services/T/B/x" },
    { type: "discord", url: "https://discord.com/api/webhooks/1/x" },
    { type: "webhook", url: "https://siem.example/in", secret: V1.secret },
    { type: "github-dispatch", repo: "acme/app", eventType: "e", token: "t" },
  ])(
    "%o sends U+FFFD for each lone surrogate, which strict JSON parsers refuse as an escape",
    async (sink) => {
      const { body } = await buildSinkRequest(sink, broken, CREATED_AT);
      expect(body).not.toMatch(/\\ud[89a-f][0-9a-f]{2}/i);
      expect(body).not.toMatch(/[\uD800-\uDFFF]/u);
      expect(body).toContain("\uFFFD");
      if (sink.type !== "slack" && sink.type !== "discord") expect(body).toContain("echo \uFFFD 🚀");
    },
  );

  // encodeURIComponent throws on a lone surrogate ("URI malformed"): the message was never built,
  // and the job dead-lettered on its first attempt, on every replay too.
  it.each<ResolvedSink>([
    {
      type: "slack",
      url: "https://hooks.slack.com/services/T/B/x",
      link: "https://dash.example/s/{session_id}",
    },
    {
      type: "discord",
      url: "https://discord.com/api/webhooks/1/x",
      link: "https://dash.example/s/{session_id}",
    },
  ])("%o links a session id with a lone surrogate, as U+FFFD", async (sink) => {
    const event = { ...notification().event, session_id: "ab\uD800cd" };
    const { body } = await buildSinkRequest(sink, notification({ event }), CREATED_AT);
    expect(body).toContain("https://dash.example/s/ab%EF%BF%BDcd");
  });
});

describe("buildSinkRequest: chat text that would reorder its line", () => {
  // Trojan Source (CVE-2021-42574): a right-to-left override shows `cat /File.txt` where the
  // command is `cat /etc/shadow # ‮txt.eliF/ tac`; the reader must see the override instead.
  const BIDI = /[\u202a-\u202e\u2066-\u2069]/;
  const tricky = "cat /etc/shadow # \u202etxt.eliF/ tac \u2066x\u2069";
  const n = notification({
    reason: `ok ${tricky}`,
    event: {
      ...notification().event,
      session_id: "\u202e1911b193",
      cwd: `/home/${tricky}`,
      tool_name: `Bash\u202e`,
      tool_input: { command: tricky },
    },
  });
  const prompt = notification({
    eventName: "Notification",
    decision: "none",
    event: { hook_event_name: "Notification", message: tricky, notification_type: `idle\u202d` },
    relatedTool: { toolName: "Bash", summary: `multi\n${tricky}` },
  });
  it.each<ResolvedSink>([
    { type: "slack", url: "https://hooks.slack.com/services/T/B/x" },
    { type: "discord", url: "https://discord.com/api/webhooks/1/x" },
  ])("%o writes each bidirectional override and isolate as its \\u escape", async (sink) => {
    for (const shown of [n, prompt]) {
      const body = JSON.parse((await buildSinkRequest(sink, shown, CREATED_AT)).body) as unknown;
      const strings = JSON.stringify(body);
      expect(strings).not.toMatch(BIDI);
      expect(strings).toContain("u202etxt.eliF/ tac");
      expect(strings).toContain("u2066x");
    }
  });

  // The direction marks reorder too, and show nothing: between them the digits and punctuation
  // of a name run right to left (`10\u200f.\u200f20` may show as `20.10`), and Discord strips them.
  const marked = "rm -rf /srv/v\u200f10.\u200f20\u061c/\u200e";
  it.each<ResolvedSink>([
    { type: "slack", url: "https://hooks.slack.com/services/T/B/x" },
    { type: "discord", url: "https://discord.com/api/webhooks/1/x" },
  ])("%o writes each direction mark as its \\u escape", async (sink) => {
    const n = notification({
      reason: `ok ${marked}`,
      event: {
        ...notification().event,
        session_id: "\u200f1911b193",
        cwd: `/home/${marked}`,
        tool_name: "Bash\u061c",
        tool_input: { command: marked },
      },
    });
    const body = JSON.parse((await buildSinkRequest(sink, n, CREATED_AT)).body) as unknown;
    const strings = JSON.stringify(body);
    expect(strings).not.toMatch(/[\u061c\u200e\u200f]/);
    for (const written of ["u200f10.", "u200f20", "u061c", "u200e", "u200f1911b19"])
      expect(strings).toContain(written);
  });
});

describe("buildSinkRequest: chat text that hides a character", () => {
  const sinks: ResolvedSink[] = [
    { type: "slack", url: "https://hooks.slack.com/services/T/B/x" },
    { type: "discord", url: "https://discord.com/api/webhooks/1/x" },
  ];
  const strings = async (sink: ResolvedSink, n: Notification) =>
    JSON.stringify(JSON.parse((await buildSinkRequest(sink, n, CREATED_AT)).body) as unknown);

  // `r\u200bm` is no `rm`, and a reviewer reading the message cannot tell them apart.
  it.each(sinks)("%o writes each zero-width character as its \\u escape", async (sink) => {
    const n = notification({
      reason: "ok\u2060 \ufeffhere",
      event: {
        ...notification().event,
        session_id: "19\u200b11b193",
        cwd: "/home/dev/pr\ufeffoj",
        tool_name: "Ba\u200bsh",
        tool_input: { command: "r\u200bm -rf /tmp/\u200cx\u200d" },
      },
    });
    const text = await strings(sink, n);
    expect(text).not.toMatch(/[\u200b-\u200d\u2060\ufeff]/);
    for (const written of [
      "r\\\\u200bm",
      "u200cx",
      "u200d",
      "ok\\\\u2060",
      "u2060",
      "ufeffhere",
      "pr\\\\ufeffoj",
    ])
      expect(text.replaceAll("\\\\\\\\", "\\\\")).toContain(written);
    // The first 8 characters of the session id, the one written as an escape among them.
    expect(text.replaceAll("\\\\\\\\", "\\\\")).toContain("19\\\\u200b11b19");
  });

  // Each shows nothing in Slack and Discord alike: `r\u2063m` (an invisible separator), `r\u00adm`
  // (a soft hyphen), a variation selector or a tag character read as `rm` too.
  it.each(sinks)("%o writes each other default-ignorable character as its \\u escape", async (sink) => {
    const hidden = [
      "\u2061",
      "\u2063",
      "\u2064",
      "\u00ad",
      "\u034f",
      "\u180e",
      "\u3164",
      "\u206f",
      "\ufe0f",
      "\u{e0072}",
    ];
    const n = notification({
      reason: `r${hidden.slice(0, 8).join("")}m \u{e0072}`,
      event: { ...notification().event, tool_input: { command: `r${hidden.join("")}m -rf /` } },
    });
    const text = await strings(sink, n);
    for (const invisible of hidden) expect(text).not.toContain(invisible);
    expect(text.replaceAll("\\\\\\\\", "\\\\")).toContain(
      "r\\\\u2061\\\\u2063\\\\u2064\\\\u00ad\\\\u034f\\\\u180e\\\\u3164\\\\u206f\\\\ufe0f\\\\udb40\\\\udc72m",
    );
  });

  // An emoji's presentation selector is part of the words of a reason or message.
  it.each(sinks)(
    "%o keeps an emoji's variation selector in the words of a reason or message",
    async (sink) => {
      const words = "done \u2764\ufe0f";
      expect(await strings(sink, notification({ reason: words }))).toContain(words);
    },
  );

  // Mongolian picks a letter's form with its own free variation selectors (U+180B to U+180D,
  // U+180F), which Unicode counts among the variation selectors: a command still shows them.
  it.each(sinks)("%o keeps Mongolian's variation selectors in the words, not in a command", async (sink) => {
    const word = "\u182d\u180b\u1820\u1835\u180f\u1820\u1837\u180c";
    const n = notification({
      reason: `done ${word}`,
      event: { ...notification().event, tool_input: { command: `echo ${word}` } },
    });
    const text = await strings(sink, n);
    expect(text).toContain(`done ${word}`);
    expect(text).not.toContain(`echo ${word}`);
  });

  // England's, Scotland's and Wales's flags are a black flag and tag characters (UTS #51's emoji
  // tag sequence): in the words they stay a flag; in a command, and loose in words, a tag is escaped.
  it.each(sinks)("%o keeps a subdivision flag in the words of a reason or message", async (sink) => {
    const tags = (code: string) =>
      [...code].map((c) => String.fromCodePoint(0xe0000 + c.charCodeAt(0))).join("");
    const flags = ["gbeng", "gbsct", "gbwls"].map((code) => `\u{1f3f4}${tags(code)}\u{e007f}`);
    const words = `ship it ${flags.join(" ")}`;
    const n = notification({
      reason: words,
      event: { ...notification().event, tool_input: { command: `echo ${flags[0]}` } },
    });
    const text = await strings(sink, n);
    expect(text).toContain(words);
    expect(text).not.toContain(`echo ${flags[0]}`);
  });

  // Persian writes with the non-joiner, a family emoji is joined by the joiner: in the agent's
  // words they stay as they are, where no command runs.
  it.each(sinks)("%o keeps the joiners in the words of a reason or message", async (sink) => {
    const words = "\u0645\u06cc\u200c\u062e\u0648\u0627\u0647\u062f \u{1f468}\u200d\u{1f469}";
    const text = await strings(sink, notification({ reason: words }));
    expect(text).toContain(words);
  });

  // A rule id is code, as a command is: `deny-r\u200dm` is no `deny-rm`, in the section and in the
  // plain text that notifications show alike.
  it("writes a rule id's joiners as their escapes in Slack's plain text too", async () => {
    const request = await buildSinkRequest(
      sinks[0] as ResolvedSink,
      notification({ ruleId: "deny-r\u200dm\u200cx" }),
      CREATED_AT,
    );
    const { text } = JSON.parse(request.body) as { text: string };
    expect(text).toContain("Rule: deny-r\\u200dm\\u200cx");
    expect(request.body).not.toMatch(/[\u200c\u200d]/);
  });

  // Cut in the middle, `\u202e` showed as `\u2…`, which names no character.
  it.each(sinks)("%o never cuts an escape in two", async (sink) => {
    for (const at of [395, 396, 397, 398]) {
      const n = notification({
        reason: `${"a".repeat(at)}\u202e${"b".repeat(20)}`,
        event: {
          ...notification().event,
          tool_input: { command: `${"c".repeat(at + 1096)}\u200b${"d".repeat(20)}` },
        },
      });
      const text = await strings(sink, n);
      expect(text).not.toMatch(/\\u[0-9a-f]{0,3}…/);
      expect(text).toContain("…");
    }
  });

  // A tag character is written as the escapes of its surrogate pair: cut between them, the
  // message showed `\udb40…`, half a character that names none.
  it.each(sinks)("%o never cuts the escapes of a character past U+FFFF in two", async (sink) => {
    for (let at = 385; at < 399; at++) {
      const n = notification({
        reason: `${"a".repeat(at)}\u{e0072}${"b".repeat(20)}`,
        event: {
          ...notification().event,
          tool_input: { command: `${"c".repeat(at + 1090)}\u{e0072}${"d".repeat(20)}` },
        },
      });
      const text = await strings(sink, n);
      expect(text).toContain("…");
      expect(text).not.toMatch(/\\ud[89ab][0-9a-f]{2}…/);
    }
  });

  // A flag is two regional indicators (UTS #51), a subdivision's flag a black flag and its tags,
  // a family one emoji a joiner joins: cut between them, Ukraine's flag showed the letter U, and
  // England's a black flag.
  const CUT_EMOJI =
    /(?<![\u{1f1e6}-\u{1f1ff}])[\u{1f1e6}-\u{1f1ff}]…|[\u{1f3f4}\u{e0020}-\u{e007e}\u{1f468}\u200d]…/u;
  it.each(sinks)("%o never cuts a flag or a joined emoji in two", async (sink) => {
    const tags = [..."gbeng"].map((c) => String.fromCodePoint(0xe0000 + c.charCodeAt(0))).join("");
    for (const emoji of ["\u{1f1fa}\u{1f1e6}", `\u{1f3f4}${tags}\u{e007f}`, "\u{1f468}\u200d\u{1f469}"])
      for (let at = 380; at < 400; at++) {
        const text = await strings(
          sink,
          notification({ reason: `${"a".repeat(at)}${emoji}${"b".repeat(20)}` }),
        );
        expect(text).toContain("…");
        expect(text).not.toMatch(CUT_EMOJI);
      }
  });

  // A letter with thousands of accents, or a Hangul jamo repeated, is one cluster by UAX #29:
  // kept whole or not at all, a reason or command of one showed as "…" alone.
  it.each(sinks)("%o shows the start of a reason or command that one long cluster makes", async (sink) => {
    for (const cluster of [`x${"\u0301".repeat(10_000)}`, "\u1100".repeat(10_000)])
      for (const n of [
        notification({ reason: cluster }),
        notification({ event: { ...notification().event, tool_input: { command: cluster } } }),
      ]) {
        const text = await strings(sink, n);
        expect(text).toContain("…");
        expect(text).toContain(cluster.slice(0, 40));
      }
  });
});

describe("buildSinkRequest: chat text with control characters", () => {
  const sinks: ResolvedSink[] = [
    { type: "slack", url: "https://hooks.slack.com/services/T/B/x" },
    { type: "discord", url: "https://discord.com/api/webhooks/1/x" },
  ];
  /** Every string of a sink's body, as the chat client reads it (the body's JSON parsed). */
  const shownStrings = async (sink: ResolvedSink, n: Notification) => {
    const found: string[] = [];
    const walk = (value: unknown): void => {
      if (typeof value === "string") found.push(value);
      else if (value !== null && typeof value === "object")
        for (const item of Object.values(value)) walk(item);
    };
    walk(JSON.parse((await buildSinkRequest(sink, n, CREATED_AT)).body));
    return found.join("\n");
  };
  // A NUL ends a C string, an ESC starts a terminal's sequence where a message is read in one
  // (a bridge, a log), and a lone CR hides the start of its line in some; none shows a thing.
  const acting = "\u0000\u0007\u001b[31m\u007f\u0085\u009b";
  const n = notification({
    reason: `ok${acting} then`,
    event: {
      ...notification().event,
      session_id: "\u001b[2J1911b",
      cwd: `/srv/app\u0000/proj`,
      tool_name: "Bash\u001b",
      tool_input: { command: `rm -rf /srv/x\r${acting}` },
    },
  });
  const prompt = notification({
    eventName: "Notification",
    decision: "none",
    event: { hook_event_name: "Notification", message: `line one\r\nline two\rthree${acting}` },
  });

  /** The text as Discord shows its markdown, each character a backslash escapes as written. */
  const unmarked = (sink: ResolvedSink, text: string) =>
    sink.type === "discord" ? text.replace(/\\([\\*_~`|[\]()<>#-])/g, "$1") : text;

  it.each(sinks)(
    "%o writes each control character but a tab and a line end as its \\u escape",
    async (sink) => {
      for (const shown of [n, prompt]) {
        const text = await shownStrings(sink, shown);
        // biome-ignore lint/suspicious/noControlCharactersInRegex: finding them is the test.
        expect(text).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/);
      }
      const text = unmarked(sink, await shownStrings(sink, n));
      expect(text).toContain("ok\\u0000\\u0007\\u001b[31m\\u007f\\u0085\\u009b then");
      // A command must read as what runs: its CR is shown, not made a line end.
      expect(text).toContain("rm -rf /srv/x\\u000d\\u0000");
      expect(text).toContain("\\u001b[2J");
      expect(text).toContain("/srv/app\\u0000/proj");
    },
  );

  // In the agent's words a CR is a line end, as the agent's terminal shows it
  // (`withoutControlsButLines`): CRLF and a lone CR are the message's own line breaks.
  it.each(sinks)("%o makes a CR in the words of a message a line end", async (sink) => {
    const text = unmarked(sink, await shownStrings(sink, prompt));
    expect(text).toMatch(/line one\n>? ?line two\n>? ?three\\u0000/);
  });
});

describe("buildSinkRequest: a whole message cut to its limit", () => {
  // The pieces fit their budgets, but a long command, a message of many short lines (each quoted)
  // and a reason together pass a Slack section's 3 000 or a Discord description's 4 096
  // characters: the last cut of the assembled text must not split an escape either.
  // Lines enough that the cut falls in the reason, whose escapes it must pass over whole.
  it.each<[ResolvedSink, number]>([
    [{ type: "slack", url: "https://hooks.slack.com/services/T/B/x" }, 9],
    [{ type: "discord", url: "https://discord.com/api/webhooks/1/x" }, 12],
  ])("%o never cuts an escape in two", async (sink, lines) => {
    for (let pad = 0; pad < 8; pad++) {
      const n = notification({
        eventName: "Notification",
        decision: "none",
        reason: `${"a".repeat(pad)}${"\u202e".repeat(100)}`,
        event: {
          hook_event_name: "Notification",
          notification_type: "permission_prompt",
          message: `${"\n".repeat(lines)}\u202e`.repeat(60),
        },
        relatedTool: { toolName: "Bash", summary: "c".repeat(2000) },
      });
      const text = JSON.stringify(JSON.parse((await buildSinkRequest(sink, n, CREATED_AT)).body) as unknown);
      expect(text).toContain("…");
      expect(text).not.toMatch(/\\u[0-9a-f]{0,3}…/);
    }
  });
});

describe("buildSinkRequest: slack", () => {
  it("posts {text, blocks} as JSON to the incoming-webhook url", async () => {
    const url = "https://hooks.slack.com/services/T000/B000/XXXX";
    const request = await buildSinkRequest({ type: "slack", url }, notification(), CREATED_AT);
    expect(request.url).toBe(url);
    expect(request.headers["content-type"]).toBe("application/json");
    const body = JSON.parse(request.body);
    expect(Object.keys(body).sort()).toEqual(["blocks", "text"]);
    expect(body).toEqual(JSON.parse(JSON.stringify(renderSlackMessage(notification()))));
  });

  it("adds the sink's link", async () => {
    const request = await buildSinkRequest(
      {
        type: "slack",
        url: "https://hooks.slack.com/services/T/B/X",
        link: "https://dash.example/s/{session_id}",
      },
      notification(),
      CREATED_AT,
    );
    expect(request.body).toContain(`https://dash.example/s/${SESSION}`);
  });
});

describe("buildSinkRequest: discord", () => {
  const url = "https://discord.com/api/webhooks/1/tok";
  type Embed = {
    title: string;
    url?: string;
    color: number;
    description?: string;
    fields: { name: string; value: string; inline: boolean }[];
    footer: { text: string };
    timestamp?: string;
  };
  type DiscordBody = { embeds: Embed[]; allowed_mentions: { parse: unknown[] }; content?: string };
  const discordBody = async (n: Notification, link?: string): Promise<DiscordBody> =>
    JSON.parse(
      (
        await buildSinkRequest(
          { type: "discord", url, ...(link === undefined ? {} : { link }) },
          n,
          CREATED_AT,
        )
      ).body,
    ) as DiscordBody;
  /** Every string Discord reads as markdown: title, description, field names and values. */
  const markdownOf = (embed: Embed) => [
    embed.title,
    embed.description ?? "",
    ...embed.fields.flatMap((f) => [f.name, f.value]),
  ];
  /** Markdown text with each backslash escape removed, then its code spans and blocks. */
  const outsideCode = (text: string) =>
    text.replace(/\\[^A-Za-z0-9\s]/g, "").replace(/```[\s\S]*?```|`[^`]*`/g, "");

  it.each([
    [url, `${url}?wait=true`],
    [`${url}/`, `${url}?wait=true`],
    [`${url}/slack`, `${url}?wait=true`],
    [`${url}/slack/`, `${url}?wait=true`],
    [`${url}?thread_id=42`, `${url}?thread_id=42&wait=true`],
    [`${url}/slack?wait=false&thread_id=42`, `${url}?thread_id=42&wait=true`],
    [`${url}#frag`, `${url}?wait=true`],
    // Blanks a pasted variable brought along, which a URL's parser drops: kept, they went into the path.
    [` ${url} `, `${url}?wait=true`],
    [`${url}\n`, `${url}?wait=true`],
  ])("posts %s to Discord's Execute Webhook endpoint %s", async (configured, expected) => {
    expect(discordWebhookUrl(configured.trim())).toBe(expected);
    const request = await buildSinkRequest({ type: "discord", url: configured }, notification(), CREATED_AT);
    expect(request.url).toBe(expected);
    expect(endsInSlackEndpoint(configured)).toBe(configured.includes("/slack"));
  });

  it("sends one embed with what the Slack message shows, and allowed_mentions that parse nothing", async () => {
    const request = await buildSinkRequest(
      { type: "discord", url, link: "https://dash.example/s/{session_id}" },
      notification(),
      CREATED_AT,
    );
    expect(request.headers["content-type"]).toBe("application/json");
    expect(JSON.parse(request.body)).toEqual({
      embeds: [
        {
          title: "⛔ Denied: Bash",
          url: `https://dash.example/s/${SESSION}`,
          color: 0xed4245,
          description: "`rm -rf /`\n**Reason:** Deleting from / is never allowed",
          fields: [
            { name: "Event", value: "PreToolUse", inline: true },
            { name: "Team", value: "platform", inline: true },
            { name: "Rule", value: "`no-rm-root`", inline: true },
            { name: "Client", value: "claude\\-code", inline: true },
          ],
          footer: { text: "Session 1911b193 · /home/dev/proj · evt_01J9ZK" },
          timestamp: "2026-08-21T09:30:00.000Z",
        },
      ],
      allowed_mentions: { parse: [] },
    });
  });

  it("shows a permission prompt's message as a quote and its type as a field, a multi-line command as a code block", async () => {
    const prompt = (await discordBody(permissionPrompt)).embeds[0];
    expect(prompt?.title).toBe("🔔 Permission needed: Bash");
    expect(prompt?.description).toBe(
      "`git push --force origin main`\n> Claude needs your permission to use Bash",
    );
    expect(prompt?.fields.at(-1)).toEqual({ name: "Type", value: "permission\\_prompt", inline: true });
    const event = { ...notification().event, tool_input: { command: "python\nprint(1)" } };
    // The fence on a line of its own: `python` is not taken for the block's language.
    expect((await discordBody(notification({ event }))).embeds[0]?.description).toMatch(
      /^```\npython\nprint\(1\)\n```\n/,
    );
  });

  it("never pings: @everyone, @here, user and role mentions give a body whose allowed_mentions parse nothing", async () => {
    const pings = "@everyone @here <@123> <@!123456789012345678> <@&456> <#789> <t:1:R>";
    const event = {
      ...notification().event,
      hook_event_name: "Notification",
      notification_type: pings,
      message: pings,
      tool_input: { command: `echo ${pings}` },
    };
    const n = notification({ eventName: "Notification", team: pings, client: pings, event, reason: pings });
    const body = await discordBody(n);
    expect(body.allowed_mentions).toEqual({ parse: [] });
    expect(body.content).toBeUndefined();
    const embed = body.embeds[0] as Embed;
    expect(JSON.stringify(embed)).toContain("@everyone");
    // Outside code, every `<` is escaped, so no mention, channel or timestamp is rendered.
    for (const text of markdownOf(embed)) expect(outsideCode(text)).not.toMatch(/<[@#t]/);
  });

  it("escapes Discord markdown in the agent's text: no masked link, formatting, heading or way out of a code span", async () => {
    const markup = "[click](https://evil.example) **bold** __u__ ~~s~~ ||spoiler|| `code` \\";
    const event = {
      ...notification().event,
      tool_input: { command: "echo ` ``` [x](https://evil.example)" },
      message: `# Heading\n-# small\n> quoted ${markup}`,
    };
    const embed = (await discordBody(notification({ event, reason: markup, team: markup })))
      .embeds[0] as Embed;
    const description = embed.description ?? "";
    // The command stays in its code span: its backticks cannot end it.
    expect(description.split("\n")[0]).toBe("`echo ˋ ˋˋˋ [x](https://evil.example)`");
    for (const text of markdownOf(embed)) {
      // hookgate's own labels (`**Reason:**`) left out.
      // A `)` right after a URL is left as written (Discord would link its escape's backslash):
      // no masked link without the `[` and `](` escaped before it.
      const plain = outsideCode(text)
        .replace(/\*\*[A-Z][a-z ]+:\*\*/g, "")
        .replace(/(?<=https:\/\/evil\.example)\)/g, "");
      expect(plain).not.toMatch(/[[\]()*_~|`]/);
      expect(plain).not.toMatch(/^(?:> )?(?:#|-#)/m);
    }
    expect(description).toContain("\\[click\\]\\(https://evil.example) ");
    expect(description).toContain("> \\# Heading\n> \\-\\# small\n> \\> quoted");
  });

  it("leaves a URL in the text as it is: Discord links it whole, a backslash in it included", async () => {
    // Escaped, `no\-rm\_root` showed and linked to `no/-rm/_root` (discord.js#4356).
    const runbook = "https://wiki.acme.example/policies/no-rm_root~v2(old)#why-not";
    const event = { ...notification().event, hook_event_name: "Notification", message: `read ${runbook}` };
    const n = notification({ eventName: "Notification", event, reason: `see ${runbook}.`, team: runbook });
    const embed = (await discordBody(n)).embeds[0] as Embed;
    expect(embed.description).toContain(`> read ${runbook}\n**Reason:** see ${runbook}.`);
    expect(embed.fields.find((f) => f.name === "Team")?.value).toBe(runbook);
  });

  it("still escapes, in a URL, what could start a masked link, mention, code or spoiler", async () => {
    const reason = "https://a.example/x[y](https://evil.example) https://a.example/`c`||s||<@1>\\_";
    const description = (await discordBody(notification({ reason }))).embeds[0]?.description ?? "";
    expect(description).toBe(
      "`rm -rf /`\n**Reason:** https://a.example/x\\[y\\]\\(https://evil.example) https://a.example/\\`c\\`\\|\\|s\\|\\|\\<@1\\>\\\\\\_",
    );
  });

  it("leaves a URL's closing parenthesis as written: escaped, its backslash was the link's last character", async () => {
    // Discord ends a link before `)` or `.`, but not before `\`: `x\)` linked to `x\`.
    const reason = "see the runbook (https://wiki.acme.example/no-rm-root). Or (https://a.example/b_(c)).";
    const description = (await discordBody(notification({ reason }))).embeds[0]?.description ?? "";
    expect(description).toBe(
      "`rm -rf /`\n**Reason:** see the runbook \\(https://wiki.acme.example/no-rm-root). Or \\(https://a.example/b_(c)).",
    );
  });

  it("cuts a long URL as Discord still links it: its characters unescaped up to the cut", async () => {
    const long = `https://wiki.acme.example/${"a-b_".repeat(200)}`;
    const description = (await discordBody(notification({ reason: long }))).embeds[0]?.description ?? "";
    expect(description).toMatch(
      /^`rm -rf \/`\n\*\*Reason:\*\* https:\/\/wiki\.acme\.example\/(?:a-b_)+a?-?b?…$/,
    );
  });

  it("keeps every part within Discord's embed limits and 6,000 characters in all, whatever the input size", async () => {
    const huge = "<@1>*_`[](x)".repeat(2000);
    const n = notification({
      eventName: "Notification",
      event: {
        session_id: huge,
        cwd: huge,
        hook_event_name: "Notification",
        tool_name: huge,
        tool_input: { command: `${huge}\n${huge}` },
        message: huge,
        notification_type: huge,
      },
      reason: huge,
      team: huge,
      client: huge,
      ruleId: huge,
      id: huge,
      decision: "deny",
      clientDecision: "none",
    });
    const ended = notification({
      eventName: "SessionEnd",
      decision: "none",
      event: { session_id: SESSION, hook_event_name: "SessionEnd", reason: huge },
      reason: huge,
    });
    for (const item of [n, ended]) {
      const body = await discordBody(item, `https://dash.example/${"l".repeat(900)}/{session_id}`);
      expect(body.embeds.length).toBeLessThanOrEqual(DISCORD_LIMITS.embeds);
      const embed = body.embeds[0] as Embed;
      expect(embed.title.length).toBeLessThanOrEqual(DISCORD_LIMITS.title);
      expect(embed.description?.length).toBeLessThanOrEqual(DISCORD_LIMITS.description);
      expect(embed.fields.length).toBeLessThanOrEqual(DISCORD_LIMITS.fields);
      for (const f of embed.fields) {
        expect(f.name.length).toBeLessThanOrEqual(DISCORD_LIMITS.fieldName);
        expect(f.value.length).toBeLessThanOrEqual(DISCORD_LIMITS.fieldValue);
        expect(f.value).not.toBe("");
      }
      expect(embed.footer.text.length).toBeLessThanOrEqual(DISCORD_LIMITS.footerText);
      const total = markdownOf(embed).reduce((sum, text) => sum + text.length, embed.footer.text.length);
      expect(total).toBeLessThanOrEqual(DISCORD_LIMITS.total);
      // Every cut is visible, and none leaves a backslash escaping the marker.
      expect(embed.description).toContain("…");
      expect(embed.description).not.toMatch(/(?<!\\)(?:\\\\)*\\…/);
      for (const text of markdownOf(embed)) expect(outsideCode(text)).not.toMatch(/<@/);
    }
  });

  it("shows an empty team or event name as a dash, as Discord refuses an empty field", async () => {
    const embed = (await discordBody(notification({ team: "" }))).embeds[0] as Embed;
    expect(embed.fields.find((f) => f.name === "Team")?.value).toBe("-");
  });

  it("shows a blank field as a dash too, as Discord refuses a value of only whitespace", async () => {
    const n = notification({
      team: " ",
      eventName: "Notification",
      event: { session_id: SESSION, hook_event_name: "Notification", notification_type: "\t\n" },
    });
    const embed = (await discordBody(n)).embeds[0] as Embed;
    expect(embed.fields.find((f) => f.name === "Team")?.value).toBe("-");
    expect(embed.fields.find((f) => f.name === "Type")?.value).toBe("-");
  });

  // A direction mark, a zero-width character, a soft hyphen or a C0 or C1 control is no longer
  // among them: it is shown as its escape (`\u200e`, `\u200b`, `\u00ad`, `\u0001`).
  it.each(["\ufff9", " \ufff9\ufffa "])(
    "shows a field of nothing but blanks and format characters no escape is written for (%j) as a dash, as Discord strips them and refuses it empty",
    async (invisible) => {
      const n = notification({
        eventName: "Notification",
        event: { session_id: SESSION, hook_event_name: "Notification", notification_type: invisible },
      });
      const embed = (await discordBody(n)).embeds[0] as Embed;
      expect(embed.fields.find((f) => f.name === "Type")?.value).toBe("-");
    },
  );

  it("shows a field of control characters as their escapes", async () => {
    const n = notification({
      eventName: "Notification",
      event: { session_id: SESSION, hook_event_name: "Notification", notification_type: " \u0001\u0085 " },
    });
    const embed = (await discordBody(n)).embeds[0] as Embed;
    expect(embed.fields.find((f) => f.name === "Type")?.value).toBe(" \\\\u0001\\\\u0085 ");
  });
});

describe("buildSinkRequest: webhook", () => {
  const sink = { type: "webhook", url: "https://siem.example/in", secret: V1.secret } as const;
  const attemptAt = CREATED_AT + 5_500;

  it("posts the Standard Webhooks envelope", async () => {
    const request = await buildSinkRequest(sink, notification(), attemptAt);
    expect(request.url).toBe(sink.url);
    expect(JSON.parse(request.body)).toEqual({
      type: "hook.PreToolUse",
      timestamp: "2026-08-21T09:30:00.000Z",
      data: {
        team: "platform",
        client: "claude-code",
        decision: "deny",
        reason: "Deleting from / is never allowed",
        rule: "no-rm-root",
        event: notification().event,
      },
    });
  });

  it("signs the exact body with webhook-id, per-attempt webhook-timestamp and webhook-signature", async () => {
    const request = await buildSinkRequest(sink, notification(), attemptAt);
    expect(request.headers["content-type"]).toBe("application/json");
    expect(request.headers["webhook-id"]).toBe("evt_01J9ZK");
    expect(request.headers["webhook-timestamp"]).toBe(String(Math.floor(attemptAt / 1000)));
    const headers = {
      id: request.headers["webhook-id"] ?? "",
      timestamp: request.headers["webhook-timestamp"] ?? "",
      signature: request.headers["webhook-signature"] ?? "",
    };
    expect(headers.signature).toMatch(/^v1,[A-Za-z0-9+/]{43}=$/);
    expect(await verifyStandardWebhook(V1.secret, headers, request.body, attemptAt)).toBe(true);
    expect(headers.signature).toBe(
      nodeSign(V1.secret.slice(6), headers.id, Number(headers.timestamp), request.body),
    );
  });

  it("keeps webhook-id and the body on a retry; only the timestamp and signature change", async () => {
    const first = await buildSinkRequest(sink, notification(), attemptAt);
    const retry = await buildSinkRequest(sink, notification(), attemptAt + 300_000);
    expect(retry.headers["webhook-id"]).toBe(first.headers["webhook-id"]);
    expect(retry.body).toBe(first.body);
    expect(Number(retry.headers["webhook-timestamp"])).toBe(Number(first.headers["webhook-timestamp"]) + 300);
    expect(retry.headers["webhook-signature"]).not.toBe(first.headers["webhook-signature"]);
  });

  it("sends webhook-id and webhook-timestamp but no signature without a secret", async () => {
    const request = await buildSinkRequest({ type: "webhook", url: sink.url }, notification(), attemptAt);
    expect(request.headers["webhook-id"]).toBe("evt_01J9ZK");
    expect(request.headers["webhook-timestamp"]).toBe(String(Math.floor(attemptAt / 1000)));
    expect(Object.keys(request.headers)).not.toContain("webhook-signature");
  });

  it("says clientDecision none beside the decision when the client acts on none of it", async () => {
    const ignored = notification({ client: "deepcode", decision: "ask", clientDecision: "none" });
    const data = JSON.parse((await buildSinkRequest(sink, ignored, attemptAt)).body).data;
    expect(Object.keys(data)).toEqual([
      "team",
      "client",
      "decision",
      "clientDecision",
      "reason",
      "rule",
      "event",
    ]);
    expect(data).toMatchObject({ decision: "ask", clientDecision: "none" });
  });

  it("omits an absent reason and names dotted events as hook.<name>", async () => {
    const body = JSON.parse((await buildSinkRequest(sink, legacyToolUse, attemptAt)).body);
    expect(body.type).toBe("hook.tool.use");
    expect(Object.keys(body.data)).toEqual(["team", "client", "decision", "rule", "event"]);
  });

  it("fits a long reason and a correlated tool call in 64 KB too, not the event alone", async () => {
    const long = notification({
      reason: "r".repeat(80_000),
      correlation: {
        toolId: "c1",
        toolUse: { toolName: "execute", toolArgs: { command: "é".repeat(70_000) } },
      },
    });
    const request = await buildSinkRequest(sink, long, attemptAt);
    expect(utf8(request.body)).toBeLessThanOrEqual(WEBHOOK_MAX_BYTES);
    const data = JSON.parse(request.body).data;
    expect(data.reason.endsWith(TRUNCATION_MARKER)).toBe(true);
    expect(data.correlation.toolUse.toolArgs.command.endsWith(TRUNCATION_MARKER)).toBe(true);
    expect(data.correlation.toolId).toBe("c1");
  });

  it("keeps the ids whole however short the free text must be cut", async () => {
    // Before, fitting the whole data cut the rule id and the tool id too.
    const rule = "notify-on-every-multi-file-edit-in-the-monorepo";
    const toolId = "toolu_01AbCdEfGhIjKlMnOpQrStUv";
    const paths = Array.from({ length: 1800 }, (_, i) => `/home/dev/proj/packages/app/src/file-${i}.ts`);
    const n = notification({
      ruleId: rule,
      event: { ...notification().event, tool_input: { paths } },
      correlation: { toolId, toolResult: { status: "success", output: "done" } },
    });
    const request = await buildSinkRequest(sink, n, attemptAt);
    expect(utf8(request.body)).toBeLessThanOrEqual(WEBHOOK_MAX_BYTES);
    const data = JSON.parse(request.body).data;
    expect(data.event.tool_input.paths[0]).toContain(TRUNCATION_MARKER);
    expect(data.rule).toBe(rule);
    expect(data.correlation.toolId).toBe(toolId);
  });

  it("sends an event too big even with every string cut as its cut JSON text, within 64 KB", async () => {
    // Thousands of numbers have no string to cut: the body went out at 100 KB, past the bound.
    const rows = Array.from({ length: 20_000 }, (_, i) => i);
    const n = notification({ event: { ...notification().event, tool_input: { rows } } });
    const request = await buildSinkRequest(sink, n, attemptAt);
    expect(utf8(request.body)).toBeLessThanOrEqual(WEBHOOK_MAX_BYTES);
    const data = JSON.parse(request.body).data;
    expect(Object.keys(data.event)).toEqual(["truncated"]);
    expect(data.event.truncated.startsWith(JSON.stringify(n.event).slice(0, 40))).toBe(true);
    expect(data.event.truncated.endsWith(TRUNCATION_MARKER)).toBe(true);
    expect(data.rule).toBe(n.ruleId);
  });

  it("leaves a body under 64 KB alone", async () => {
    const big = notification({ event: { ...notification().event, transcript: "x".repeat(30_000) } });
    const request = await buildSinkRequest(sink, big, attemptAt);
    expect(request.body).not.toContain(TRUNCATION_MARKER);
    expect(JSON.parse(request.body).data.event.transcript).toHaveLength(30_000);
  });

  it("cuts the largest event strings with a visible marker until the body fits in 64 KB", async () => {
    const event = {
      ...notification().event,
      tool_input: { command: "cat huge.log", content: "é".repeat(60_000) },
      tool_response: "🙂".repeat(30_000),
      small: "keep me",
    };
    const request = await buildSinkRequest(sink, notification({ event }), attemptAt);
    expect(utf8(request.body)).toBeLessThanOrEqual(WEBHOOK_MAX_BYTES);
    expect(utf8(request.body)).toBeGreaterThan(WEBHOOK_MAX_BYTES - 1024);
    const sent = JSON.parse(request.body).data.event;
    expect(sent.tool_input.content.endsWith(TRUNCATION_MARKER)).toBe(true);
    expect(sent.tool_response.endsWith(TRUNCATION_MARKER)).toBe(true);
    expect(sent.tool_response).not.toMatch(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])/); // no lone surrogate
    expect(sent.small).toBe("keep me");
    expect(sent.tool_input.command).toBe("cat huge.log");
    const headers = {
      id: request.headers["webhook-id"] ?? "",
      timestamp: request.headers["webhook-timestamp"] ?? "",
      signature: request.headers["webhook-signature"] ?? "",
    };
    expect(await verifyStandardWebhook(V1.secret, headers, request.body, attemptAt)).toBe(true);
  });

  it("refuses to send unsigned when the secret is unusable", async () => {
    await expect(buildSinkRequest({ ...sink, secret: "whsec_" }, notification(), attemptAt)).rejects.toThrow(
      /empty/,
    );
  });
});

describe("buildSinkRequest: github-dispatch", () => {
  const sink = {
    type: "github-dispatch",
    repo: "acme/app",
    eventType: "agent-session-end",
    token: "ghp_secretsecretsecretsecret0000",
  } as const;

  it("posts repository_dispatch to api.github.com with the token and API headers", async () => {
    const request = await buildSinkRequest(sink, notification(), CREATED_AT);
    expect(request.url).toBe("https://api.github.com/repos/acme/app/dispatches");
    expect(request.headers).toEqual({
      accept: "application/vnd.github+json",
      authorization: "Bearer ghp_secretsecretsecretsecret0000",
      "content-type": "application/json",
      "user-agent": "hookgate",
      "x-github-api-version": "2022-11-28",
    });
  });

  it.each([
    ["https://ghe.acme.example/api/v3", "https://ghe.acme.example/api/v3/repos/acme/app/dispatches"],
    ["http://127.0.0.1:9999/", "http://127.0.0.1:9999/repos/acme/app/dispatches"],
    ["https://ghe.acme.example/api/v3 ", "https://ghe.acme.example/api/v3/repos/acme/app/dispatches"],
  ])("uses sink.url %j as the API base", async (url, expected) => {
    expect((await buildSinkRequest({ ...sink, url }, notification(), CREATED_AT)).url).toBe(expected);
  });

  it("sends event_type and at most 10 client_payload keys", async () => {
    const body = JSON.parse((await buildSinkRequest(sink, notification(), CREATED_AT)).body);
    expect(body).toEqual({
      event_type: "agent-session-end",
      client_payload: {
        id: "evt_01J9ZK",
        team: "platform",
        client: "claude-code",
        event: "PreToolUse",
        decision: "deny",
        reason: "Deleting from / is never allowed",
        rule: "no-rm-root",
        session_id: SESSION,
        cwd: "/home/dev/proj",
        tool: { name: "Bash", input: { command: "rm -rf /", description: "clean up" } },
      },
    });
    expect(Object.keys(body.client_payload).length).toBeLessThanOrEqual(10);
  });

  it("uses the related tool of a permission prompt and the thread id of a legacy event", async () => {
    const prompt = JSON.parse(
      (await buildSinkRequest(sink, permissionPrompt, CREATED_AT)).body,
    ).client_payload;
    expect(prompt.tool).toEqual({ name: "Bash", summary: "git push --force origin main" });
    expect(prompt).not.toHaveProperty("reason");
    const legacy = JSON.parse((await buildSinkRequest(sink, legacyToolUse, CREATED_AT)).body).client_payload;
    expect(legacy.session_id).toBe("thread-4f2a9c");
    expect(legacy.tool).toEqual({ name: "execute", input: { command: "pytest -q" } });
  });

  it("keeps the whole JSON under 64 KB by cutting long strings with the marker", async () => {
    const event = { ...notification().event, tool_input: { command: "x".repeat(200_000) } };
    const request = await buildSinkRequest(sink, notification({ event }), CREATED_AT);
    expect(utf8(request.body)).toBeLessThanOrEqual(GITHUB_MAX_BYTES);
    expect(utf8(request.body)).toBeLessThan(64 * 1024);
    const payload = JSON.parse(request.body).client_payload;
    expect(payload.tool.input.command.endsWith(TRUNCATION_MARKER)).toBe(true);
    expect(payload.rule).toBe("no-rm-root");
  });
});

// ---------------------------------------------------------------------------------------------
// Slack rendering

describe("renderSlackMessage", () => {
  it("shows a denied Bash call: decision, command, reason, team, rule, session and cwd", () => {
    const { text, blocks } = renderSlackMessage(notification());
    expect(headerOf(blocks as Block[])).toBe(":no_entry: Denied: Bash");
    expect(sectionTexts(blocks as Block[])[0]).toBe("`rm -rf /`\n*Reason:* Deleting from / is never allowed");
    expect(fieldTexts(blocks as Block[])).toEqual([
      "*Event*\nPreToolUse",
      "*Team*\nplatform",
      "*Rule*\n`no-rm-root`",
      "*Client*\nclaude-code",
    ]);
    expect(contextTexts(blocks as Block[])).toEqual([
      "Session `1911b193`",
      "`/home/dev/proj`",
      `<!date^${CREATED_AT / 1000}^{date_short_pretty} {time_secs}|2026-08-21T09:30:00.000Z>`,
      "evt_01J9ZK",
    ]);
    expect(text.split("\n")).toEqual([
      "⛔ Denied: Bash (PreToolUse, team platform)",
      "`rm -rf /`",
      "Reason: Deleting from / is never allowed",
      "Rule: no-rm-root",
    ]);
  });

  it.each([
    ["ask", ":warning: Needs approval: Bash"],
    ["allow", ":white_check_mark: Allowed: Bash"],
    ["block", ":no_entry: Blocked: Bash"],
    ["defer", ":hourglass_flowing_sand: Deferred: Bash"],
    ["none", ":bell: PreToolUse: Bash"],
    ["constructor", ":bell: PreToolUse: Bash"],
  ])("heads a %s decision with %j", (decision, header) => {
    expect(headerOf(blocksOf(notification({ decision })))).toBe(header);
  });

  it("says a decision the client acts on none of is not enforced, in the blocks and the text", () => {
    const ignored = notification({
      client: "deepcode",
      eventName: "ConfigChange",
      decision: "block",
      clientDecision: "none",
      event: {
        session_id: SESSION,
        cwd: "/home/dev/proj",
        hook_event_name: "ConfigChange",
        source: "user_settings",
      },
    });
    const { text, blocks } = renderSlackMessage(ignored);
    expect(headerOf(blocks as Block[])).toBe(":no_entry: Blocked");
    expect(sectionTexts(blocks as Block[])[0]).toBe(
      "*Reason:* Deleting from / is never allowed\n*Not enforced:* deepcode does not act on this block",
    );
    expect(text).toContain("\nNot enforced: deepcode does not act on this block\n");
    // A decision the client acts on, or no decision at all, says nothing of the kind.
    for (const n of [notification(), notification({ decision: "none", clientDecision: "none" })]) {
      expect(JSON.stringify(renderSlackMessage(n))).not.toContain("enforced");
    }
  });

  it("shows a permission prompt with the tool call that caused it and Claude's message", () => {
    const { text, blocks } = renderSlackMessage(permissionPrompt);
    expect(headerOf(blocks as Block[])).toBe(":bell: Permission needed: Bash");
    expect(sectionTexts(blocks as Block[])[0]).toBe(
      "`git push --force origin main`\n>Claude needs your permission to use Bash",
    );
    expect(fieldTexts(blocks as Block[])).toContain("*Type*\npermission_prompt");
    expect(contextTexts(blocks as Block[])[0]).toBe("Session `e8c979a4`");
    expect(text).toContain("🔔 Permission needed: Bash (Notification, team platform)");
    expect(text).toContain("Claude needs your permission to use Bash");
  });

  it("names deepcode's and deepagents' notification types in the headline as Claude Code's", () => {
    // deepcode sends notification_type "permission" (clients.md §5.3); deepagents v2 sends
    // agent_needs_input and agent_completed (its migrated input.required and task.complete, §8).
    for (const [type, headline] of [
      ["permission", ":bell: Permission needed"],
      ["agent_needs_input", ":bell: Waiting for input"],
      ["agent_completed", ":bell: Task complete"],
    ]) {
      const event = { ...permissionPrompt.event, notification_type: type };
      const { blocks } = renderSlackMessage(
        notification({ ...permissionPrompt, event, relatedTool: undefined }),
      );
      expect(headerOf(blocks as Block[]), type).toBe(headline);
    }
  });

  it("cuts the session id to 8 characters without splitting a surrogate pair", () => {
    const event = { ...notification().event, session_id: "1234567\u{1f600}-rest" };
    const { blocks } = renderSlackMessage(notification({ event }));
    expect(contextTexts(blocks as Block[])[0]).toBe("Session `1234567`");
    const wire = JSON.stringify(blocks);
    expect(wire).not.toMatch(/\\ud83d/i);
  });

  it("treats an empty session id or cwd as missing: no empty code span, no link without a session", () => {
    const event = { ...notification().event, session_id: "", cwd: "" };
    const { text, blocks } = renderSlackMessage(
      notification({ event }),
      "https://hookgate.example/sessions/{session_id}",
    );
    const context = contextTexts(blocks as Block[]);
    expect(context.some((piece) => piece.startsWith("Session") || piece === "``")).toBe(false);
    expect(fieldTexts(blocks as Block[]).some((f) => f.startsWith("*Link*"))).toBe(false);
    expect(text).not.toContain("/sessions/");
  });

  it("shows a session end with its reason and no tool", () => {
    const blocks = blocksOf(sessionEnd);
    expect(headerOf(blocks)).toBe(":bell: Session ended");
    expect(sectionTexts(blocks)).toEqual(["*Ended because:* other"]);
    expect(fieldTexts(blocks)[0]).toBe("*Event*\nSessionEnd");
  });

  it("shows a deepagents legacy tool.use with tool_args and thread_id", () => {
    const blocks = blocksOf(legacyToolUse);
    expect(headerOf(blocks)).toBe(":bell: tool.use: execute");
    expect(sectionTexts(blocks)).toEqual(["`pytest -q`"]);
    expect(fieldTexts(blocks)).toContain("*Client*\ndeepagents-legacy");
    expect(contextTexts(blocks)[0]).toBe("Session `thread-4`");
  });

  it.each([
    ["Write", { file_path: "/home/dev/proj/src/a.ts", content: "export {}" }, "`/home/dev/proj/src/a.ts`"],
    ["Edit", { file_path: "src/b.ts", old_string: "a", new_string: "b" }, "`src/b.ts`"],
    ["Read", { file_path: ".env" }, "`.env`"],
    [
      "WebFetch",
      { url: "https://example.com/x?a=1&b=2", prompt: "p" },
      "`https://example.com/x?a=1&amp;b=2`",
    ],
    ["mcp__github__create_issue", { title: "t" }, '`{"title":"t"}`'],
  ])("shows what %s touches", (tool, input, shown) => {
    const event = { ...notification().event, tool_name: tool, tool_input: input };
    expect(sectionTexts(blocksOf(notification({ event })))[0]?.split("\n")[0]).toBe(shown);
  });

  it("escapes &, < and > in user text, defuses @everyone and keeps backticks from ending the code span", () => {
    const event = {
      ...notification().event,
      tool_input: { command: "echo `id` <b> && cat a > b # @everyone" },
    };
    const { text, blocks } = renderSlackMessage(
      notification({ event, reason: "no <!channel> & no <https://evil.example|links>", team: "r&d" }),
    );
    const section = sectionTexts(blocks as Block[])[0] ?? "";
    expect(section).toContain("`echo ˋidˋ &lt;b&gt; &amp;&amp; cat a &gt; b # @\u200beveryone`");
    expect(section).toContain("no &lt;!channel&gt; &amp; no &lt;https://evil.example|links&gt;");
    expect(fieldTexts(blocks as Block[])).toContain("*Team*\nr&amp;d");
    for (const piece of [...allTexts(blocks as Block[]).slice(1), text]) {
      expect(piece).not.toMatch(/<(?!!date\^)/);
      expect(piece).not.toContain("@everyone");
    }
  });

  it("defuses @channel, @here and @everyone in any case and whatever follows, and asks Slack for verbatim mrkdwn", () => {
    const mentions = "@channel @HERE @Everyone @here_ @here @everyone @Channel1";
    const event = {
      ...notification().event,
      hook_event_name: "Notification",
      notification_type: "idle_prompt",
      message: mentions,
    };
    const { text, blocks } = renderSlackMessage(notification({ event, reason: "ping @channel" }));
    for (const piece of [...allTexts(blocks as Block[]).slice(1), text]) {
      expect(piece).not.toMatch(/@(?:channel|here|everyone)/i);
    }
    expect(sectionTexts(blocks as Block[])[0]).toContain(
      ">@\u200bchannel @\u200bHERE @\u200bEveryone @\u200bhere_ @\u200bhere @\u200beveryone @\u200bChannel1",
    );
    // An address that only starts like one is left whole (a review: a zero-width space in it).
    const address = renderSlackMessage(notification({ reason: "mail ops@hereford.gov" }));
    expect(JSON.stringify(address.blocks)).toContain("ops@hereford.gov");
    const objects = (blocks as Block[]).flatMap((b) => [
      ...(b.type === "section" && b.text ? [b.text] : []),
      ...(b.fields ?? []),
      ...(b.elements ?? []),
    ]);
    expect(objects.length).toBeGreaterThan(4);
    for (const object of objects) expect(object).toMatchObject({ type: "mrkdwn", verbatim: true });
  });

  it("defuses Discord-style user and role mentions and masked links, for a message relayed onward", async () => {
    const markup =
      "<@123456789012345678> <@!123456789012345678> <@&123456789012345678> [click](https://evil.example)";
    const event = {
      ...notification().event,
      hook_event_name: "Notification",
      notification_type: markup,
      message: markup,
      tool_input: { command: markup },
    };
    const n = notification({ eventName: markup, team: markup, event, reason: markup });
    const request = await buildSinkRequest(
      { type: "slack", url: "https://hooks.slack.com/services/T/B/x" },
      n,
      CREATED_AT,
    );
    const { text, blocks } = JSON.parse(request.body) as { text: string; blocks: Block[] };
    const pieces = [...allTexts(blocks).slice(1), text];
    expect(pieces.join("\n")).toContain("evil.example");
    for (const piece of pieces) {
      // As Discord would read it, the entities unescaped.
      const unescaped = piece.replaceAll("&lt;", "<").replaceAll("&gt;", ">").replaceAll("&amp;", "&");
      expect(unescaped).not.toMatch(/<@[!&]?\d/);
      expect(unescaped).not.toContain("](");
    }
    // A short number after an @ (a scoped package, a version) is left whole.
    expect(
      JSON.stringify(renderSlackMessage(notification({ reason: "npm i @types/node@20" })).blocks),
    ).toContain("@types/node@20");
  });

  it("defuses a mention or masked link with control or format characters or combining marks in it, which Discord strips before it reads one", async () => {
    const hidden =
      "@\u0001everyone @every\u0000one @\u0300here @\u00adchannel <@\u0001123456789012345678> <@&\u200e123456789012345678> [x]\u0007(https://evil.example)";
    const event = { ...notification().event, hook_event_name: "Notification", message: hidden };
    const request = await buildSinkRequest(
      { type: "slack", url: "https://discord.com/api/webhooks/1/tok/slack" },
      notification({ eventName: "Notification", event, reason: hidden }),
      CREATED_AT,
    );
    const { text, blocks } = JSON.parse(request.body) as { text: string; blocks: Block[] };
    for (const piece of [...allTexts(blocks).slice(1), text]) {
      // As Discord reads it: those characters stripped (a zero-width space is kept), the entities unescaped.
      const read = piece
        // biome-ignore lint/suspicious/noControlCharactersInRegex: matching them is its purpose.
        .replace(/[\p{M}\u0000-\u0008\u000b-\u001f\u007f-\u009f]|(?!\u200b)\p{Cf}/gu, "")
        .replaceAll("&lt;", "<")
        .replaceAll("&gt;", ">")
        .replaceAll("&amp;", "&");
      expect(read).not.toMatch(/@(?:everyone|here|channel)/i);
      expect(read).not.toMatch(/<@[!&]?\d/);
      expect(read).not.toContain("](");
    }
  });

  it.each(["@everyone", "@here", "@channel"])(
    "leaves no live %s where a cut ends a word that a letter kept from being one",
    (mention) => {
      // `@herefoo` is left whole; cut right after its `@here`, it would read `@here…` and ping.
      const at = (pad: number) => `${"a".repeat(pad)}${mention}x and more`;
      const cuts = [
        // Each text cut on its own: the message at 1 000 and the reason at 400 in the blocks, both at 300 in `text`.
        ...[300, 400, 1000].flatMap((end) => [-1, -2, -3].map((back) => end + back - mention.length)),
      ].map((pad) =>
        notification({
          eventName: "Notification",
          reason: at(pad),
          event: { ...notification().event, hook_event_name: "Notification", message: at(pad) },
        }),
      );
      // The section cut at 3 000 as a whole, inside the reason at its end.
      const lines = { message: "m\n".repeat(366), tool_input: { command: "c".repeat(2000) } };
      for (let pad = 0; pad < 400; pad++)
        cuts.push(notification({ reason: at(pad), event: { ...notification().event, ...lines } }));
      let sectionCut = false;
      for (const n of cuts) {
        const { text, blocks } = renderSlackMessage(n);
        sectionCut ||= sectionTexts(blocks as Block[])[0]?.length === SLACK_LIMITS.sectionText;
        for (const piece of [...allTexts(blocks as Block[]).slice(1), text])
          expect(piece).not.toMatch(/@(?:everyone|here|channel)(?![a-z])/i);
      }
      expect(sectionCut).toBe(true);
    },
  );

  it("renders a multi-line command as a code block", () => {
    const event = { ...notification().event, tool_input: { command: "set -e\nmake test" } };
    expect(sectionTexts(blocksOf(notification({ event })))[0]).toContain("```set -e\nmake test```");
  });

  it("keeps within Slack's limits whatever the input size", () => {
    const huge = "<&>".repeat(40_000);
    const event = {
      ...notification().event,
      session_id: huge,
      cwd: huge,
      message: huge,
      notification_type: huge,
      tool_name: huge,
      tool_input: { command: huge },
    };
    const n = notification({
      eventName: "Notification",
      event,
      reason: huge,
      team: huge,
      ruleId: huge,
      id: huge,
    });
    const { text, blocks } = renderSlackMessage(n, "https://dash.example/{session_id}");
    const typed = blocks as Block[];
    expect(typed.length).toBeLessThanOrEqual(SLACK_LIMITS.blocks);
    expect(headerOf(typed).length).toBeLessThanOrEqual(SLACK_LIMITS.headerText);
    for (const section of sectionTexts(typed))
      expect(section.length).toBeLessThanOrEqual(SLACK_LIMITS.sectionText);
    for (const f of fieldTexts(typed)) expect(f.length).toBeLessThanOrEqual(SLACK_LIMITS.fieldText);
    expect(fieldTexts(typed).length).toBeLessThanOrEqual(SLACK_LIMITS.fields);
    expect(contextTexts(typed).length).toBeLessThanOrEqual(SLACK_LIMITS.contextElements);
    const total = allTexts(typed).reduce((sum, t) => sum + t.length, 0);
    expect(total).toBeLessThanOrEqual(SLACK_LIMITS.totalBlockText);
    expect(text.length).toBeLessThanOrEqual(3000);
    // Cut at a character, never inside an entity such as "&am".
    for (const piece of [...allTexts(typed).slice(1), text]) expect(piece).not.toMatch(/&(?!amp;|lt;|gt;)/);
    expect(sectionTexts(typed)[0]).toContain("…");
  });

  it("adds a link field with {session_id} filled in", () => {
    const fields = fieldTexts(blocksOf(notification(), "https://dash.example/s/{session_id}?team=a&b=c"));
    expect(fields).toContain(`*Link*\n<https://dash.example/s/${SESSION}?team=a&amp;b=c|Open>`);
  });

  it.each([
    [
      "a template that needs a session id the event lacks",
      "https://dash.example/{session_id}",
      sessionEnd.event,
    ],
    ["a link that is not http(s)", "javascript:alert(1)", notification().event],
    ["a link longer than 1 000 characters", `https://dash.example/${"a".repeat(1000)}`, notification().event],
  ])("leaves out %s", (_name, link, event) => {
    const { session_id: _dropped, ...withoutSession } = event;
    const n = notification({ event: link.includes("{session_id}") ? withoutSession : event });
    expect(fieldTexts(blocksOf(n, link)).some((f) => f.startsWith("*Link*"))).toBe(false);
  });

  it("encodes a session id that would break out of the link", () => {
    const event = { ...notification().event, session_id: "a|b>c d" };
    const fields = fieldTexts(blocksOf(notification({ event }), "https://dash.example/{session_id}"));
    expect(fields).toContain("*Link*\n<https://dash.example/a%7Cb%3Ec%20d|Open>");
  });

  it("shows only the fields it names, never the rest of the event", () => {
    const event = {
      ...notification().event,
      transcript_path: "/home/dev/.claude/projects/x.jsonl",
      headers: { authorization: "Bearer abcdefghijklmnop" },
      token: "tok_visible_only_if_dumped",
    };
    const json = JSON.stringify(renderSlackMessage(notification({ event })));
    expect(json).not.toContain("abcdefghijklmnop");
    expect(json).not.toContain("tok_visible_only_if_dumped");
    expect(json).not.toContain("transcript");
  });
});

// ---------------------------------------------------------------------------------------------
// Responses

const NOW = Date.UTC(2026, 7, 21, 12, 0, 0);
const inSeconds = (s: number) => new Date(NOW + s * 1000).toUTCString();

type Row = [
  status: number,
  headers: Record<string, string>,
  body: string,
  kind: "delivered" | "retry" | "permanent",
  retryAfterMs?: number | undefined,
];

function check(sink: ResolvedSink["type"], [status, headers, body, kind, retryAfterMs]: Row) {
  const verdict = classifySinkResponse(sink, status, headers, body, NOW);
  expect(verdict.kind).toBe(kind);
  if (verdict.kind === "retry") expect(verdict.retryAfterMs).toBe(retryAfterMs);
  if (verdict.kind !== "delivered") expect(verdict.reason).toMatch(/\S/);
  return verdict;
}

describe("classifySinkResponse: slack", () => {
  it.each<Row>([
    [200, {}, "ok", "delivered"],
    [200, {}, '{"ok":true}', "delivered"],
    [200, {}, "", "permanent"],
    [200, {}, "<html>captive portal</html>", "permanent"],
    [200, {}, '{"ok":false,"error":"invalid_blocks"}', "permanent"],
    [200, {}, '{"ok":false,"error":"rate_limited","retry_after":3}', "retry", 3000],
    [200, {}, '{"ok":false,"error":"ratelimited"}', "retry", 30_000],
    [200, { "retry-after": "2" }, '{"ok":false,"error":"ratelimited"}', "retry", 2000],
    // White space around the JSON (a proxy's newline) is no part of the answer.
    [200, {}, ' \n{"ok":false,"error":"rate_limited","retry_after":3}\n', "retry", 3000],
    [429, { "retry-after": "1" }, '{"retry_after":1,"ok":false,"error":"rate_limited"}', "retry", 1000],
    [429, {}, '{"retry_after":1,"ok":false,"error":"rate_limited"}', "retry", 1000],
    [429, { "Retry-After": "30" }, '{"retry_after":1}', "retry", 30_000],
    [429, {}, "rate_limited", "retry", undefined],
    [400, {}, "invalid_payload", "permanent"],
    [400, {}, "user_not_found", "permanent"],
    [403, {}, "action_prohibited", "permanent"],
    [404, {}, "channel_not_found", "permanent"],
    [410, {}, "channel_is_archived", "permanent"],
    [403, {}, "invalid_token", "permanent"],
    [500, {}, "rollup_error", "retry", undefined],
    [503, { "retry-after": "5" }, "", "retry", 5000],
    [302, { location: "https://slack.com/" }, "", "permanent"],
  ])("HTTP %i %j %j is %s", (...row) => {
    check("slack", row);
  });

  it.each<[number, Record<string, string>, string, boolean]>([
    [200, {}, '{"ok":false,"error":"ratelimited"}', true],
    [429, { "retry-after": "1" }, "rate_limited", true],
    [503, { "retry-after": "5" }, "", false],
    [500, {}, "rollup_error", false],
  ])("HTTP %i %j %j holds the URL as a rate limit: %s", (status, headers, body, holds) => {
    const verdict = classifySinkResponse("slack", status, headers, body, NOW);
    expect(verdict.kind === "retry" && verdict.rateLimited === true).toBe(holds);
  });

  it("names Slack's error code in the reason", () => {
    const verdict = check("slack", [410, {}, "channel_is_archived", "permanent"]);
    expect(verdict.kind === "permanent" && verdict.reason).toMatch(/410.*channel_is_archived.*archived/);
  });
});

describe("classifySinkResponse: discord", () => {
  it.each<Row>([
    [204, {}, "", "delivered"],
    [200, {}, '{"id":"1","content":""}', "delivered"],
    [429, {}, '{"message":"You are being rate limited.","retry_after":0.347,"global":false}', "retry", 347],
    [429, { "retry-after": "2" }, '{"retry_after":1.5}', "retry", 2000],
    [429, {}, '\n{"retry_after":0.5}\n', "retry", 500],
    [429, { "retry-after": "0.5" }, "", "retry", 500],
    // Discord's own header when neither Retry-After nor retry_after is there.
    [429, { "x-ratelimit-reset-after": "1.25" }, "", "retry", 1250],
    [404, {}, '{"message":"Unknown Webhook","code":10015}', "permanent"],
    [401, {}, '{"message":"Invalid Webhook Token","code":50027}', "permanent"],
    [400, {}, '{"message":"Cannot send an empty message","code":50006}', "permanent"],
    [502, {}, "", "retry", undefined],
    [301, {}, "", "permanent"],
  ])("HTTP %i %j %j is %s", (...row) => {
    check("discord", row);
  });

  const unversioned = "https://discord.com/api/webhooks/1/tok?wait=true";
  it.each([
    // The URL Discord's Copy Webhook URL gives has no API version: Discord answers it as its
    // default, v6, whose 429 counts its waits in milliseconds (discord-api-docs#1454, #2360, #4722).
    [unversioned, { "retry-after": "43323" }, '{"retry_after":43323,"global":false}', 43_323],
    [unversioned, {}, '{"message":"You are being rate limited.","retry_after":1500,"global":false}', 1500],
    [
      "https://discord.com/api/v7/webhooks/1/tok?thread_id=2&wait=true",
      { "retry-after": "800" },
      '{"retry_after":800,"global":false}',
      800,
    ],
    // Cloudflare's 429 in front of Discord (an IP blocked for too many invalid or limited
    // requests) carries no retry_after, and its Retry-After counts seconds (discord-api-docs#1463).
    [
      unversioned,
      { "retry-after": "1800" },
      '{"message":"You are being blocked from accessing our API temporarily due to exceeding our rate limits frequently.","code":0}',
      1_800_000,
    ],
    // X-RateLimit-Reset-After is in seconds in every version.
    [unversioned, { "x-ratelimit-reset-after": "1.25" }, "", 1250],
    // v8 and later count seconds, as documented.
    [
      "https://discord.com/api/v10/webhooks/1/tok?wait=true",
      { "retry-after": "2" },
      '{"retry_after":1.5}',
      2000,
    ],
    ["https://discord.com/api/v8/webhooks/1/tok?wait=true", {}, '{"retry_after":0.347}', 347],
  ])("reads a 429's wait at %s %j %s in the units of the URL's API version", (url, headers, body, wait) => {
    expect(classifySinkResponse("discord", 429, headers, body, NOW, [], url)).toMatchObject({
      kind: "retry",
      retryAfterMs: wait,
      rateLimited: true,
    });
  });

  it.each([
    // A sink of type slack may post to Discord's Slack-compatible endpoint: Discord's rate limiter
    // answers there too, in the units of the URL's API version.
    [
      "https://discord.com/api/webhooks/1/tok/slack",
      { "retry-after": "64570" },
      '{"retry_after":64570,"global":false}',
      64_570,
    ],
    [
      "https://discord.com/api/webhooks/1/tok/slack?thread_id=2",
      {},
      '{"retry_after":1500,"global":false}',
      1500,
    ],
    ["https://discord.com/api/v7/webhooks/1/tok/slack/", {}, '{"retry_after":800,"global":false}', 800],
    ["https://discord.com/api/v10/webhooks/1/tok/slack", { "retry-after": "2" }, '{"retry_after":1.5}', 2000],
    // Cloudflare's 429 in front of it counts seconds, as does Slack itself.
    ["https://discord.com/api/webhooks/1/tok/slack", { "retry-after": "1800" }, '{"code":0}', 1_800_000],
    ["https://hooks.slack.com/services/T/B/x", { "retry-after": "30" }, '{"retry_after":30}', 30_000],
    [
      "https://hooks.slack.com/services/T/B/x",
      {},
      '{"retry_after":1,"ok":false,"error":"rate_limited"}',
      1000,
    ],
  ])("reads a slack sink's 429 at %s %j %s in the units of whoever answers", (url, headers, body, wait) => {
    expect(classifySinkResponse("slack", 429, headers, body, NOW, [], url)).toMatchObject({
      kind: "retry",
      retryAfterMs: wait,
      rateLimited: true,
    });
  });

  it.each([
    ["discord", unversioned],
    ["slack", "https://discord.com/api/webhooks/1/tok/slack"],
  ] as const)(
    "retries a %s sink's 403 code 40333, Cloudflare blocking this host, naming the block rather than the webhook's permissions",
    (sink, url) => {
      // discord-api-docs, JSON Error Codes: "40333 Cloudflare is blocking your request"; the body
      // says only "internal network error" (discord-api-docs#6473). A block of the sender's
      // address lifts, and was once Discord's own fault for hours: dead-lettered at once, every
      // notification of the while was lost, its reason sending the operator to the channel's rights.
      const body = '{"message": "internal network error", "code": 40333}';
      const verdict = classifySinkResponse(sink, 403, {}, body, NOW, [], url);
      expect(verdict).toMatchObject({ kind: "retry" });
      expect(verdict.kind === "retry" && verdict.rateLimited).toBeFalsy();
      expect("reason" in verdict && verdict.reason).toMatch(/^HTTP 403 .*Cloudflare.*internal network error/);
      expect("reason" in verdict && verdict.reason).not.toMatch(/channel or thread/);
      // Another 403 of Discord's is the webhook's own, and stays permanent.
      expect(
        classifySinkResponse(sink, 403, {}, '{"message":"Missing Access","code":50001}', NOW, [], url),
      ).toMatchObject({
        kind: "permanent",
      });
    },
  );

  it("reads another answer's Retry-After in seconds at any URL: only Discord's rate limits count milliseconds", () => {
    // A 503 is not Discord's rate limiter speaking (its front ends answer one too): its
    // Retry-After is RFC 9110's seconds, and read as milliseconds it retried 30 s early.
    expect(classifySinkResponse("discord", 503, { "retry-after": "30" }, "", NOW, [], unversioned)).toEqual({
      kind: "retry",
      retryAfterMs: 30_000,
      reason: "HTTP 503",
    });
  });
});

describe("classifySinkResponse: Retry-After as an HTTP date", () => {
  // RFC 9110 §5.6.7: a recipient reads all three forms, each in GMT. asctime names no zone, and
  // Date.parse reads a date without one in the host's time zone: off by its offset on a laptop.
  it.each([
    ["IMF-fixdate", "Fri, 21 Aug 2026 12:00:30 GMT", NOW],
    ["RFC 850", "Friday, 21-Aug-26 12:00:30 GMT", NOW],
    ["asctime", "Fri Aug 21 12:00:30 2026", NOW],
    ["asctime with a one-digit day", "Fri Aug  7 12:00:30 2026", Date.UTC(2026, 7, 7, 12, 0, 0)],
  ])("reads the %s form as GMT whatever the host's time zone", (_form, date, now) => {
    const zone = process.env.TZ;
    process.env.TZ = "America/New_York";
    try {
      const verdict = classifySinkResponse("webhook", 503, { "retry-after": date }, "", now);
      expect(verdict).toEqual({ kind: "retry", retryAfterMs: 30_000, reason: "HTTP 503" });
    } finally {
      if (zone === undefined) delete process.env.TZ;
      else process.env.TZ = zone;
    }
  });
});

describe("classifySinkResponse: Retry-After sent twice", () => {
  // Two headers arrive joined by ", " (RFC 9110 §5.3, as the egress joins them, or a proxy merging
  // its own with the server's): the joined text is no number nor date, and the default schedule
  // retried long before the server's wait.
  it.each([
    ["the same seconds twice", "120, 120", 120_000],
    ["two waits, the longer second", "30, 120", 120_000],
    ["two dates", "Fri, 21 Aug 2026 12:00:30 GMT, Fri, 21 Aug 2026 12:00:30 GMT", 30_000],
    ["a date and seconds", "Fri, 21 Aug 2026 12:00:30 GMT, 60", 60_000],
    ["an RFC 850 date and an unreadable value", "Friday, 21-Aug-26 12:00:30 GMT, soon", 30_000],
  ])("waits the longest of %s", (_case, value, wait) => {
    expect(classifySinkResponse("webhook", 503, { "retry-after": value }, "", NOW)).toEqual({
      kind: "retry",
      retryAfterMs: wait,
      reason: "HTTP 503",
    });
  });
});

describe("classifySinkResponse: discord reasons", () => {
  it.each([
    [
      400,
      {},
      JSON.stringify({
        code: 50035,
        errors: {
          embeds: {
            "0": {
              description: {
                _errors: [{ code: "BASE_TYPE_MAX_LENGTH", message: "Must be 4096 or fewer in length." }],
              },
            },
          },
        },
        message: "Invalid Form Body",
      }),
      "HTTP 400 Discord refused the message: Invalid Form Body (code 50035): embeds.0.description: Must be 4096 or fewer in length. (BASE_TYPE_MAX_LENGTH)",
    ],
    [
      404,
      {},
      '{"message":"Unknown Webhook","code":10015}',
      "HTTP 404 unknown webhook (it was deleted in Discord: make a new one and put its URL in the sink's url): Unknown Webhook (code 10015)",
    ],
    [
      404,
      {},
      '{"message":"Unknown Channel","code":10003}',
      "HTTP 404 unknown channel (the thread_id in the sink's url names no thread the webhook posts in): Unknown Channel (code 10003)",
    ],
    [
      401,
      {},
      '{"message":"Invalid Webhook Token","code":50027}',
      "HTTP 401 unauthorized (the webhook token in the sink's url is wrong: copy the webhook's URL again): Invalid Webhook Token (code 50027)",
    ],
    // API v6 (an unversioned URL) states a refused field in its older form: the field and its
    // messages, or the indexes of the items it refused.
    [
      400,
      {},
      '{"content": ["Must be 2000 or fewer in length."]}',
      "HTTP 400 Discord refused the message: content: Must be 2000 or fewer in length.",
    ],
    [
      400,
      {},
      '{"embeds": ["0", "2"]}',
      "HTTP 400 Discord refused the message: embeds.0: refused; embeds.2: refused",
    ],
    [
      400,
      {},
      '{"embed": ["Expected an object/dictionary."], "allowed_mentions": {"parse": ["Not a well formed value."]}}',
      "HTTP 400 Discord refused the message: embed: Expected an object/dictionary.; allowed_mentions.parse: Not a well formed value.",
    ],
  ] as const)("dead-letters HTTP %i %j %s as %j", (status, headers, body, reason) => {
    expect(classifySinkResponse("discord", status, headers, body, NOW)).toEqual({
      kind: "permanent",
      reason,
    });
  });

  it("says when a 429 is Discord's global limit, and which scope a route limit has", () => {
    const global = classifySinkResponse(
      "discord",
      429,
      { "retry-after": "2", "x-ratelimit-global": "true", "x-ratelimit-scope": "global" },
      '{"message":"You are being rate limited.","retry_after":1.5,"global":true}',
      NOW,
    );
    expect(global).toEqual({
      kind: "retry",
      retryAfterMs: 2000,
      rateLimited: true,
      reason:
        "HTTP 429 rate limited by Discord (global: every webhook posting from this address waits): You are being rate limited.",
    });
    const shared = classifySinkResponse(
      "discord",
      429,
      { "x-ratelimit-scope": "shared" },
      '{"message":"You are being rate limited.","retry_after":0.25,"global":false}',
      NOW,
    );
    expect(shared).toMatchObject({
      retryAfterMs: 250,
      reason: /^HTTP 429 rate limited by Discord \(scope shared\)/,
    });
  });
});

describe("classifySinkResponse: webhook", () => {
  it.each<Row>([
    [200, {}, "", "delivered"],
    [201, {}, "{}", "delivered"],
    [202, {}, "queued", "delivered"],
    [204, {}, "", "delivered"],
    [301, { location: "https://elsewhere.example/" }, "", "permanent"],
    [302, {}, "", "permanent"],
    [307, {}, "", "permanent"],
    [308, {}, "", "permanent"],
    [408, {}, "", "retry", undefined],
    [425, {}, "", "retry", undefined],
    [429, {}, "", "retry", undefined],
    [429, { "retry-after": "120" }, "", "retry", 120_000],
    [429, { "retry-after": inSeconds(30) }, "", "retry", 30_000],
    [429, { "retry-after": inSeconds(-30) }, "", "retry", 0],
    [429, { "retry-after": "soon" }, "", "retry", undefined],
    [429, { "retry-after": "-5" }, "", "retry", undefined],
    [429, {}, '{"retry_after":9}', "retry", undefined],
    [500, {}, "", "retry", undefined],
    [502, {}, "", "retry", undefined],
    [503, { "Retry-After": "60" }, "", "retry", 60_000],
    [504, {}, "", "retry", undefined],
    [520, {}, "", "retry", undefined],
    [501, {}, "", "permanent"],
    [505, {}, "", "permanent"],
    [400, {}, "bad", "permanent"],
    [401, {}, "", "permanent"],
    [403, {}, "", "permanent"],
    [404, {}, "", "permanent"],
    [410, {}, "", "permanent"],
    [413, {}, "", "permanent"],
    [422, {}, "", "permanent"],
  ])("HTTP %i %j %j is %s", (...row) => {
    check("webhook", row);
  });

  it("says a redirect was not followed, and where it pointed", () => {
    const verdict = check("webhook", [301, { Location: "https://elsewhere.example/" }, "", "permanent"]);
    expect(verdict.kind === "permanent" && verdict.reason).toMatch(/301.*elsewhere\.example.*not followed/);
  });

  it.each([
    [
      "webhook",
      403,
      "",
      "HTTP 403 forbidden (the receiver refuses hookgate: check its access rules and the sink's url)",
    ],
    [
      "webhook",
      404,
      "Not Found",
      "HTTP 404 not found (nothing answers at the sink's url: check it): Not Found",
    ],
    ["webhook", 405, "", "HTTP 405 method not allowed (the sink's url takes no POST: check it)"],
    [
      "webhook",
      413,
      "",
      "HTTP 413 payload too large (the receiver takes less than the 64 KB a body may reach: raise its limit)",
    ],
    [
      "discord",
      403,
      '{"message":"Missing Access","code":50001}',
      "HTTP 403 forbidden (Discord does not let the webhook post there: check the channel or thread it posts in): Missing Access (code 50001)",
    ],
    ["slack", 404, "", "HTTP 404 not found (nothing answers at the sink's url: check it)"],
    ["slack", 413, "", "HTTP 413 payload too large (a proxy in front of the sink may limit bodies)"],
    // Slack's own code says what is wrong: no second explanation.
    ["slack", 404, "channel_not_found", "HTTP 404: channel_not_found (the Slack channel no longer exists)"],
  ] as const)("a %s's HTTP %i %j dead-letters saying what to fix", (sink, status, body, reason) => {
    expect(classifySinkResponse(sink, status, {}, body, NOW)).toEqual({ kind: "permanent", reason });
  });

  it("names a redirect's target by its origin, never its path or query", () => {
    const location = "https://hooks.example/T0/B0/s3cr3tP4th?token=s3cr3tQu3ry";
    const verdict = check("webhook", [302, { location }, "", "permanent"]);
    expect(verdict).toEqual({
      kind: "permanent",
      reason: "HTTP 302 redirect to https://hooks.example/… (redirects are not followed)",
    });
  });

  it("masks and shortens an error body in the reason", () => {
    const body = `token ghp_${"a".repeat(36)} rejected ${"x".repeat(1000)}`;
    const verdict = check("webhook", [400, {}, body, "permanent"]);
    expect(verdict.kind === "permanent" && verdict.reason).not.toContain("ghp_aaaa");
    expect(verdict.kind === "permanent" && verdict.reason.length).toBeLessThan(300);
  });

  describe("scrubs the policy's secrets from an error body before cutting it at 200", () => {
    // A secret no masking by shape knows, placed across the cut.
    const SECRET = "Qm7vX2pL9rT4wZ8kN3cF6hJ1";
    const across = `${"x".repeat(195)}${SECRET} and more`;
    it.each([
      ["webhook", 400, across],
      ["webhook", 500, JSON.stringify({ message: across })],
      ["github-dispatch", 422, JSON.stringify({ message: across })],
      ["slack", 200, across],
    ] as const)("%s HTTP %i", (sink, status, body) => {
      const verdict = classifySinkResponse(sink, status, {}, body, NOW, [SECRET]);
      const reason = verdict.kind === "delivered" ? "" : verdict.reason;
      expect(reason).toContain(`${"x".repeat(195)}[mask…`);
      expect(reason).not.toContain(SECRET.slice(0, 4));
    });

    // A server that wraps its lines put a line end inside the secret it echoes: the reason's
    // spaces, where the line end was, showed both halves.
    it.each(["\n", "\r\n", "\t"])("a secret the body splits with %j", (by) => {
      const split = `${SECRET.slice(0, 10)}${by}${SECRET.slice(10)}`;
      const verdict = classifySinkResponse("webhook", 400, {}, `bad key ${split} given`, NOW, [SECRET]);
      expect(verdict.kind === "permanent" && verdict.reason).toContain(": bad key [masked] given");
    });
  });
});

describe("classifySinkResponse: github-dispatch", () => {
  const reset = String(NOW / 1000 + 90);
  it.each<Row>([
    [204, {}, "", "delivered"],
    [200, {}, "{}", "delivered"],
    [404, {}, '{"message":"Not Found"}', "permanent"],
    [
      422,
      {},
      '{"message":"Invalid request.\\n\\nFor \'properties/event_type\', nil is not a string."}',
      "permanent",
    ],
    [401, {}, '{"message":"Bad credentials"}', "permanent"],
    [403, {}, '{"message":"Resource not accessible by personal access token"}', "permanent"],
    [403, { "x-ratelimit-remaining": "0", "x-ratelimit-reset": reset }, "", "retry", 90_000],
    [403, { "retry-after": "60" }, '{"message":"You have exceeded a secondary rate limit"}', "retry", 60_000],
    // A secondary limit without either header: GitHub asks for a wait of a minute at least.
    [429, {}, '{"message":"You have exceeded a secondary rate limit."}', "retry", 60_000],
    [
      403,
      { "x-ratelimit-remaining": "4987" },
      '{"message":"You have exceeded a secondary rate limit. Please wait a few minutes before you try again."}',
      "retry",
      60_000,
    ],
    [429, { "x-ratelimit-remaining": "0", "x-ratelimit-reset": reset }, "", "retry", 90_000],
    [500, {}, "", "retry", undefined],
    [502, {}, "", "retry", undefined],
    [304, {}, "", "permanent"],
  ])("HTTP %i %j %j is %s", (...row) => {
    check("github-dispatch", row);
  });

  it("explains a 404 as a missing repository or a token that cannot see it", () => {
    const verdict = check("github-dispatch", [404, {}, '{"message":"Not Found"}', "permanent"]);
    expect(verdict.kind === "permanent" && verdict.reason).toMatch(/404.*repository.*Not Found/);
  });
});

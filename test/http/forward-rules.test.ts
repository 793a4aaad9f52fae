/**
 * Forward rules end to end in process: the Hono app, the real egress module, and a loopback
 * downstream hook server that answers as each test says and records what it received.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createPrometheusRegistry } from "../../src/adapters/metrics/prometheus.js";
import { lintPolicy } from "../../src/core/policy-lint.js";
import { authPolicy, jsonOf, type TestApp, TOKEN, testApp } from "../support/app.js";
import { type LoopbackServer, loopbackServer } from "../support/loopback.js";
import { type ModelServer, startModelServer } from "../support/model-server.js";
import { loaded, policyFrom } from "../support/policy.js";

type Reply = {
  status?: number;
  body?: string;
  hang?: boolean;
  location?: string;
  encoding?: string;
  /** The status and the start of the body at once, the rest never. */
  unfinished?: boolean;
};
let next: Reply = {};
let downstream: LoopbackServer;
let model: ModelServer;

beforeAll(async () => {
  downstream = await loopbackServer((_req, res) => {
    const reply = next;
    if (reply.hang) return;
    res.writeHead(
      reply.status ?? 200,
      reply.location
        ? { location: reply.location }
        : {
            "content-type": "application/json",
            ...(reply.encoding !== undefined && { "content-encoding": reply.encoding }),
          },
    );
    if (reply.unfinished) res.write(reply.body ?? "");
    else res.end(reply.body ?? "");
  });
  model = await startModelServer();
});
afterAll(async () => {
  await downstream.close();
  await model.close();
});

const egress = {
  allowedHttpHookUrls: ["http://127.0.0.1:*/*"],
  allowCidrs: ["127.0.0.1/32"],
  httpHookAllowedEnvVars: ["POLICY_TOKEN"],
};

/**
 * Posts a Bash `ls` to `app`: nothing reaches the team server, the answer is the rule's onError
 * deny, its reason `(FORWARD_INVALID_HEADER: ` and then `reason`, and the audit line says so.
 */
async function refusedUnsent(app: TestApp, reason: string): Promise<Record<string, unknown>> {
  const before = downstream.received.length;
  const body = await jsonOf(await app.post("/v1/hooks", bash("ls")));
  expect(downstream.received.length).toBe(before);
  expect(body.hookSpecificOutput).toMatchObject({
    permissionDecision: "deny",
    permissionDecisionReason: expect.stringContaining(`(FORWARD_INVALID_HEADER: ${reason}`),
  });
  expect(lastAudit(app).pending).toEqual([
    expect.objectContaining({ rule: "traced", outcome: "FORWARD_INVALID_HEADER", onError: "deny" }),
  ]);
  return body;
}

/**
 * A policy whose one rule, "traced", forwards every PreToolUse with `headers` and answers deny on
 * any failure; `readsTraceValue`: its headers may read $TRACE_VALUE.
 */
const tracedForward = (
  headers: Record<string, string>,
  { readsTraceValue = false, timeoutMs }: { readsTraceValue?: boolean; timeoutMs?: number } = {},
) =>
  authPolicy(
    [
      {
        id: "traced",
        on: "PreToolUse",
        forward: {
          url: `${downstream.url}/hook`,
          headers,
          ...(readsTraceValue && { allowedEnvVars: ["TRACE_VALUE"] }),
          ...(timeoutMs !== undefined && { timeoutMs }),
          onError: "deny",
        },
      },
    ],
    { egress: readsTraceValue ? { ...egress, httpHookAllowedEnvVars: ["TRACE_VALUE"] } : egress },
  );

/** Claude Code's PermissionRequest for a Bash call. */
const permissionRequest = JSON.stringify({
  session_id: "s",
  transcript_path: "/t",
  cwd: "/p",
  hook_event_name: "PermissionRequest",
  tool_name: "Bash",
  tool_input: { command: "x" },
});

async function appWith(
  forwardFields: Record<string, unknown> = {},
  rules: unknown[] = [],
  extra: Record<string, unknown> = {},
): Promise<TestApp> {
  return testApp(
    await authPolicy(
      [
        ...rules,
        {
          id: "team-server",
          on: ["PreToolUse", "PermissionRequest", "Stop"],
          forward: {
            url: `${downstream.url}/hook`,
            headers: { Authorization: "Bearer $POLICY_TOKEN", "X-Other": "${OTHER_SECRET}" },
            allowedEnvVars: ["POLICY_TOKEN", "OTHER_SECRET"],
            // Far above a loopback call's time, so that a busy host's slow answer is no timeout;
            // the tests of a timeout set their own.
            timeoutMs: 3000,
            onError: "deny",
            ...forwardFields,
          },
        },
      ],
      { egress, ...extra },
    ),
    { POLICY_TOKEN: "downstream-token", OTHER_SECRET: "must-not-leak" },
  );
}

const bash = (command: string) =>
  JSON.stringify({
    session_id: "s",
    transcript_path: "/t",
    cwd: "/p",
    hook_event_name: "PreToolUse",
    tool_name: "mcp__github__create_issue",
    tool_input: { command },
    tool_use_id: "toolu_1",
  });
const deny = (reason: string) =>
  JSON.stringify({
    hookSpecificOutput: {
      hookEventName: "PreToolUse",
      permissionDecision: "deny",
      permissionDecisionReason: reason,
    },
  });
const lastAudit = (app: TestApp) =>
  app.logs.filter((l) => l.msg === "decision").at(-1) as Record<string, unknown>;
/** The downstream's next answer: these hookSpecificOutput fields. */
const answering = (hookSpecificOutput: Record<string, unknown>): Reply => ({
  body: JSON.stringify({ hookSpecificOutput }),
});
/** The downstream's next answer: a PermissionRequest granted with the call rewritten into `command`. */
const grant = (command: string): Reply =>
  answering({
    hookEventName: "PermissionRequest",
    decision: { behavior: "allow", updatedInput: { command } },
  });
/** The one model of the policies with a prompt rule, "m", served by the loopback model server. */
const modelM = () => ({ m: { provider: "anthropic", model: "x", apiKey: "k", url: model.anthropicUrl } });

describe("forward rules", () => {
  it("names in the audit the fields of an answer it does not pass on, such as a tool output rewrite", async () => {
    // A team server that redacts an MCP tool's output: the rewrite is not applied, and the audit
    // line said nothing of it.
    const app = await testApp(
      await authPolicy(
        [{ id: "redact", on: "PostToolUse", forward: { url: `${downstream.url}/hook`, onError: "deny" } }],
        { egress },
      ),
    );
    next = answering({
      hookEventName: "PostToolUse",
      updatedMCPToolOutput: "[redacted]",
      additionalContext: "checked",
    });
    const event = {
      session_id: "s",
      transcript_path: "/t",
      cwd: "/p",
      hook_event_name: "PostToolUse",
      tool_name: "mcp__vault__read",
      tool_input: { path: "db" },
      tool_response: { password: "hunter2" },
    };
    const body = await jsonOf(await app.post("/v1/hooks", JSON.stringify(event)));
    expect(body.hookSpecificOutput.additionalContext).toBe("checked");
    expect(lastAudit(app).pending).toEqual([
      expect.objectContaining({
        rule: "redact",
        outcome: "OK",
        detail: "not passed on: hookSpecificOutput.updatedMCPToolOutput",
      }),
    ]);
    // A rewrite of the input on an event whose answer has none is named as well.
    next = {
      body: JSON.stringify({
        hookSpecificOutput: { hookEventName: "PostToolUse", updatedInput: { path: "x" } },
      }),
    };
    await app.post("/v1/hooks", JSON.stringify(event));
    expect(lastAudit(app).pending).toEqual([
      expect.objectContaining({ rule: "redact", detail: "not passed on: hookSpecificOutput.updatedInput" }),
    ]);
  });

  it("posts the body verbatim and applies the downstream decision", async () => {
    const app = await appWith();
    next = { body: deny("the team server says no") };
    const body = bash("rm x");
    const res = await app.post("/v1/hooks", body);
    expect((await jsonOf(res)).hookSpecificOutput.permissionDecisionReason).toBe("the team server says no");
    const got = downstream.received.at(-1);
    expect(got?.body).toBe(body);
    expect(got?.headers["content-type"]).toBe("application/json");
  });

  it("reads an env: url from the environment, as a model's and a sink's, and answers onError naming an unset one", async () => {
    // POLICY.md, Secrets: every "env:NAME" value is read at load. A forward url was sent as
    // written, refused as the scheme "env:" (EGRESS_BAD_SCHEME), and check said so.
    const rules = [
      {
        id: "relay",
        on: "PreToolUse",
        forward: { url: "env:TEAM_HOOK_URL", timeoutMs: 3000, onError: "deny" },
      },
    ];
    const app = await testApp(await authPolicy(rules, { egress }), {
      TEAM_HOOK_URL: `${downstream.url}/hook?key=a1b2c3d4e5f6a7b8c9d0`,
    });
    next = { body: deny("the team server says no") };
    const before = downstream.received.length;
    const res = await app.post("/v1/hooks", bash("rm x"));
    expect((await jsonOf(res)).hookSpecificOutput.permissionDecisionReason).toBe("the team server says no");
    expect(downstream.received.length).toBe(before + 1);
    expect(downstream.received.at(-1)?.url).toBe("/hook?key=a1b2c3d4e5f6a7b8c9d0");

    const document = await authPolicy(rules, { egress });
    expect((await loaded(document)).warnings).toContainEqual({
      severity: "warning",
      path: "$.rules[0].forward.url",
      message:
        'TEAM_HOOK_URL is not set, so every call of rule "relay" fails and it answers with its onError',
      unsetVariable: "TEAM_HOOK_URL",
    });
    const unset = await testApp(document);
    const answer = await jsonOf(await unset.post("/v1/hooks", bash("rm x")));
    expect(answer.hookSpecificOutput.permissionDecisionReason).toContain(
      "(FORWARD_NO_URL: the rule has no URL (its url reads TEAM_HOOK_URL, which is not set))",
    );
    expect(downstream.received.length).toBe(before + 1);
    expect(lintPolicy(await policyFrom(document, { TEAM_HOOK_URL: "ftp://x.example/" }))).toContainEqual({
      severity: "warning",
      path: "$.rules[0].forward.url",
      message: expect.stringMatching(
        /^the egress guard will refuse it \(EGRESS_BAD_SCHEME: .*\(the URL in TEAM_HOOK_URL here\)$/,
      ),
    });
  });

  it("masks the credentials a downstream reason quotes in the audit line, not in the answer", async () => {
    const app = await appWith();
    const token = `ghp_${"a1B2".repeat(9)}`;
    next = { body: deny(`the command exports ${token}`) };
    const res = await app.post("/v1/hooks", bash(`export GH=${token}`));
    expect((await jsonOf(res)).hookSpecificOutput.permissionDecisionReason).toBe(
      `the command exports ${token}`,
    );
    const audit = lastAudit(app);
    expect(audit.reason).toMatch(/^the command exports \S+$/);
    expect(JSON.stringify(audit)).not.toContain(token);
  });

  it("scrubs from the answer a policy secret the downstream reason quotes, the token it was called with", async () => {
    const app = await appWith();
    next = { body: deny("caller Bearer downstream-token may not run this") };
    const answer = await jsonOf(await app.post("/v1/hooks", bash("rm x")));
    expect(answer.hookSpecificOutput.permissionDecisionReason).toBe(
      "caller Bearer [masked] may not run this",
    );
    expect(JSON.stringify(app.logs)).not.toContain("downstream-token");
  });

  it("drops from the texts it hands the agent the characters that act in a terminal, keeping tabs, newlines and joiners", async () => {
    // A team server's answer may quote what the agent sent (the command, a file name), and Claude
    // Code prints the reason and the systemMessage in the user's terminal: an OSC 52 there writes
    // the clipboard, a carriage return overwrites the line, an override reverses it.
    const app = await appWith();
    next = {
      body: JSON.stringify({
        continue: false,
        stopReason: "frozen\r\u001b[2Kall clear",
        systemMessage: "\u001b]52;c;cm0gLXJmIH4=\u0007copied\u001b]0;title\u0007",
        hookSpecificOutput: {
          hookEventName: "PreToolUse",
          permissionDecision: "deny",
          permissionDecisionReason: "no\tto\n\u202egnp.exe\u2066 \u200fby downstream-\u001btoken",
          additionalContext: "see \u009b31mthis\u2028\u200d\u200c\u00ad",
        },
      }),
    };
    const body = await jsonOf(await app.post("/v1/hooks", bash("rm x")));
    expect(body.hookSpecificOutput).toMatchObject({
      permissionDecision: "deny",
      // A control character inside a secret hides it no more: dropped first, then scrubbed.
      permissionDecisionReason: "no\tto\ngnp.exe by [masked]",
      additionalContext: "see this\n\u200d\u200c\u00ad",
    });
    expect(body).toMatchObject({
      continue: false,
      stopReason: "frozen\nall clear",
      systemMessage: "copied",
    });
  });

  it("hands the agent a coloured answer as its text, each escape sequence dropped whole", async () => {
    // A team server that prints its verdict for a terminal colours it (chalk, tput): without the
    // ESC alone, `[31m` and `]8;;https://…` read as part of the words.
    const app = await appWith();
    next = {
      body: JSON.stringify({
        systemMessage:
          "\u001b(B\u001b[m\u001b[1;31mdenied\u001b[0m by \u001b]8;;https://wiki.example/rm\u001b\\policy\u001b]8;;\u001b\\",
        hookSpecificOutput: {
          hookEventName: "PreToolUse",
          permissionDecision: "deny",
          permissionDecisionReason: "\u009b32mrm\u009b0m is \u001b]0;title\u0007not allowed",
          additionalContext: "see \u001b[38;5;208mthe runbook\u001b[39m",
        },
      }),
    };
    const body = await jsonOf(await app.post("/v1/hooks", bash("rm x")));
    expect(body.systemMessage).toBe("denied by policy");
    expect(body.hookSpecificOutput).toMatchObject({
      permissionDecisionReason: "rm is not allowed",
      additionalContext: "see the runbook",
    });
  });

  it("hands the agent each line end of an answer's texts as a newline, neither joining nor hiding a line", async () => {
    // Dropped, a carriage return or a line separator ran two lines into one word ("checkedno");
    // kept, a carriage return makes the terminal write the next line over the last.
    const app = await appWith();
    next = {
      body: JSON.stringify({
        systemMessage: "rm -rf ~/build\rls",
        hookSpecificOutput: {
          hookEventName: "PreToolUse",
          permissionDecision: "deny",
          permissionDecisionReason: "checked\u2028no deploys on Friday",
          additionalContext: "one\rtwo\r\nthree\u2029four\u0085five\n",
        },
      }),
    };
    const body = await jsonOf(await app.post("/v1/hooks", bash("rm x")));
    expect(body.systemMessage).toBe("rm -rf ~/build\nls");
    expect(body.hookSpecificOutput).toMatchObject({
      permissionDecisionReason: "checked\nno deploys on Friday",
      additionalContext: "one\ntwo\nthree\nfour\nfive\n",
    });
  });

  it("leaves a reason the policy words as written, even one that reads like a credential's shape", async () => {
    const reason = "Basic authentication tokens belong in Vault";
    const app = await appWith({}, [{ id: "vault", on: "PreToolUse", decide: "deny", reason }]);
    await app.post("/v1/hooks", bash("ls"));
    expect(lastAudit(app).reason).toBe(reason);
  });

  it("interpolates only variables allowed by the rule and by egress.httpHookAllowedEnvVars", async () => {
    const app = await appWith();
    next = { body: "" };
    await app.post("/v1/hooks", bash("ls"));
    const headers = downstream.received.at(-1)?.headers;
    expect(headers?.authorization).toBe("Bearer downstream-token");
    expect(headers?.["x-other"]).toBe("");
    expect(JSON.stringify(lastAudit(app))).not.toContain("must-not-leak");
  });

  it("keeps a failed call's detail in the audit line beside the variables it did not interpolate", async () => {
    // A header variable left out of httpHookAllowedEnvVars is sent empty, and the team server then
    // refuses the call (a 401): the line said only "not interpolated: …", the status it answered lost.
    const app = await appWith();
    next = { status: 401, body: "" };
    await app.post("/v1/hooks", bash("ls"));
    expect(lastAudit(app).pending).toEqual([
      expect.objectContaining({
        rule: "team-server",
        outcome: "FORWARD_HTTP_STATUS",
        detail: "HTTP 401 from the downstream hook; not interpolated: OTHER_SECRET",
      }),
    ]);
  });
  it("treats an empty answer as no opinion", async () => {
    const app = await appWith();
    next = { body: "" };
    expect(await (await app.post("/v1/hooks", bash("ls"))).text()).toBe("");
    expect(lastAudit(app).pending).toEqual([
      expect.objectContaining({ rule: "team-server", action: "forward", outcome: "OK" }),
    ]);
  });

  it("names in the audit a context the event cannot carry to the client, such as a Stop's", async () => {
    // Claude Code 2.1.332 reads a Stop's additionalContext as a reason to go on; hookgate never
    // sends a Stop hookSpecificOutput (2.1.112 rejects the whole answer), and the line said OK.
    const app = await appWith();
    next = answering({ hookEventName: "Stop", additionalContext: "also run lint" });
    const stop = {
      session_id: "s",
      transcript_path: "/t",
      cwd: "/p",
      hook_event_name: "Stop",
      stop_hook_active: false,
    };
    expect(await (await app.post("/v1/hooks", JSON.stringify(stop))).text()).toBe("");
    expect(lastAudit(app).pending).toEqual([
      expect.objectContaining({
        rule: "team-server",
        outcome: "OK",
        detail: "not interpolated: OTHER_SECRET; not passed on: hookSpecificOutput.additionalContext",
      }),
    ]);
  });

  it("says in the audit line that the answer ended the turn, where the decision alone says none", async () => {
    // `{"continue": false}` ends Claude Code's turn whatever the decision: the line said
    // `"decision":"none"` and an OK call, as for an empty answer.
    const app = await appWith();
    next = {
      body: JSON.stringify({ continue: false, stopReason: "the change freeze is on: downstream-token" }),
    };
    const body = await jsonOf(await app.post("/v1/hooks", bash("ls")));
    expect(body).toMatchObject({ continue: false });
    const audit = lastAudit(app);
    expect(audit.decision).toBe("none");
    expect(audit.pending).toEqual([
      expect.objectContaining({
        rule: "team-server",
        outcome: "OK",
        detail:
          'not interpolated: OTHER_SECRET; asked to end the agent\'s turn, stopReason "the change freeze is on: [masked]"',
      }),
    ]);
  });

  it.each([
    ["a 500", { status: 500, body: deny("ignored") }, "FORWARD_HTTP_STATUS"],
    ["a text answer", { body: "OK" }, "FORWARD_NOT_JSON"],
    ["a redirect", { status: 302, location: "http://169.254.169.254/" }, "EGRESS_REDIRECT"],
    ["a hang", { hang: true }, "FORWARD_TIMEOUT"],
    [
      "a wrong event echo",
      {
        body: JSON.stringify({
          hookSpecificOutput: { hookEventName: "PostToolUse", additionalContext: "x" },
        }),
      },
      "FORWARD_WRONG_EVENT",
    ],
  ] as const)("answers %s with onError", async (_name, reply, code) => {
    const app = await appWith(code === "FORWARD_TIMEOUT" ? { timeoutMs: 300 } : {});
    next = reply;
    const body = await jsonOf(await app.post("/v1/hooks", bash("ls")));
    expect(body.hookSpecificOutput).toMatchObject({
      permissionDecision: "deny",
      permissionDecisionReason: expect.stringContaining(code),
    });
  });

  it.each([
    ["claude-code", 503],
    ["deepcode", 502],
  ] as const)(
    "answers a %s event whose server sent %i at once and never finished the body with the status, not a timeout",
    async (client, status) => {
      // The body of such an answer is never read, yet it was waited for: after the whole timeoutMs
      // the reason said "no answer within", of a server that had answered its error at once.
      const app = await appWith();
      next = { status, body: "<html><body>Service", unfinished: true };
      const body = await jsonOf(await app.post(`/v1/hooks/${client}`, bash("ls")));
      expect(body.hookSpecificOutput).toMatchObject({
        permissionDecision: "deny",
        permissionDecisionReason: expect.stringContaining(
          `(FORWARD_HTTP_STATUS: HTTP ${status} from the downstream hook)`,
        ),
      });
    },
  );

  it("answers one whose server sent a redirect at once and never finished the body as the redirect, not a timeout", async () => {
    // A 3xx is a non-2xx too: its body, which nothing reads, was waited for to the rule's timeoutMs.
    const app = await appWith();
    next = { status: 302, location: "https://login.example/", body: "<html>Moved", unfinished: true };
    const body = await jsonOf(await app.post("/v1/hooks/claude-code", bash("ls")));
    expect(body.hookSpecificOutput).toMatchObject({
      permissionDecision: "deny",
      permissionDecisionReason: expect.stringContaining("(EGRESS_REDIRECT: "),
    });
  });

  it.each(["gzip", "deflate", "br"])(
    "answers one whose body does not decode as %s with onError, naming the coding, once",
    async (encoding) => {
      // Before, it read as EGRESS_CONNECT_FAILED, "failed: Z_DATA_ERROR", as if the server were down.
      const app = await appWith();
      next = { body: deny("compressed wrongly"), encoding };
      const before = downstream.received.length;
      const body = await jsonOf(await app.post("/v1/hooks", bash("ls")));
      expect(body.hookSpecificOutput).toMatchObject({
        permissionDecision: "deny",
        permissionDecisionReason: expect.stringContaining(
          `EGRESS_BAD_ENCODING: ${downstream.url}/… answered HTTP 200, but its body does not decode as its Content-Encoding ${encoding} says`,
        ),
      });
      expect(downstream.received.length - before).toBe(1);
      expect(lastAudit(app).pending).toEqual([
        expect.objectContaining({ rule: "team-server", outcome: "EGRESS_BAD_ENCODING", onError: "deny" }),
      ]);
    },
  );

  it.each([
    ["a control character", "a\u0001b"],
    ["DEL", "a\u007f"],
    ["a character past U+00FF", "caf\u20ac"],
  ])(
    "refuses a header value with %s by name, sends nothing, and answers with onError",
    async (_what, value) => {
      const app = await testApp(
        await tracedForward(
          { "X-Trace": "id=$TRACE_VALUE", "X-Fine": "ok" },
          { readsTraceValue: true, timeoutMs: 500 },
        ),
        { TRACE_VALUE: value },
      );
      const body = await refusedUnsent(app, "the header X-Trace has a value that no HTTP header can carry");
      expect(JSON.stringify(body)).not.toContain(value);
    },
  );

  it("refuses a header name that is no HTTP header name by name, sends nothing, and answers with onError", async () => {
    // It loaded, and every call failed as EGRESS_CONNECT_FAILED ("invalid header key"), as if the
    // team server were down.
    const app = await testApp(await tracedForward({ "X Trace": "1", "X-Fine": "ok" }, { timeoutMs: 500 }));
    await refusedUnsent(app, 'the header name "X…" (cut at its first space) is no HTTP header name');
  });

  it.each(["Host", "expect", "Transfer-Encoding", "Content-Length", "Connection"])(
    "refuses the header %s, which the HTTP client sets itself or refuses, by name, sends nothing, and answers with onError",
    async (name) => {
      // Host asked the team server's address for another site than the url; the others failed
      // every call as a connection error (undici throws on them).
      const app = await testApp(await tracedForward({ [name]: "x", "X-Fine": "ok" }, { timeoutMs: 500 }));
      await refusedUnsent(app, `the header "${name}" is set by the HTTP client from the request itself`);
    },
  );

  it("never quotes past the first bad character of a header name: a value written into the name stays out of the answer and the logs", async () => {
    // A review: `"Authorization: Bearer <token>": ""`, the header line written as its name, was
    // quoted whole to the agent in the deny reason and to the log on every call.
    const app = await testApp(
      await tracedForward(
        { "Authorization: Bearer sk-live-Zr8Kq2Wm": "", "X Trace": "1" },
        { timeoutMs: 500 },
      ),
    );
    const body = await jsonOf(await app.post("/v1/hooks", bash("ls")));
    expect(body.hookSpecificOutput).toMatchObject({
      permissionDecision: "deny",
      permissionDecisionReason: expect.stringContaining(
        '(FORWARD_INVALID_HEADER: the header names "Authorization…" (cut at its first colon), "X…" (cut at its first space) are no HTTP header name',
      ),
    });
    expect(JSON.stringify(body)).not.toContain("Zr8Kq2Wm");
    expect(JSON.stringify(app.logs)).not.toContain("Zr8Kq2Wm");
  });

  it("sends a header value with tabs, spaces and Latin-1 characters as it is", async () => {
    const app = await testApp(await tracedForward({ "X-Trace": "$TRACE_VALUE" }, { readsTraceValue: true }), {
      TRACE_VALUE: "a\tb ~caf\u00e9",
    });
    next = { body: "" };
    expect(await (await app.post("/v1/hooks", bash("ls"))).text()).toBe("");
    expect(downstream.received.at(-1)?.headers["x-trace"]).toBe("a\tb ~caf\u00e9");
  });

  it("names itself hookgate and sends JSON, never the agent's token; the rule's own user-agent and content-type replace them in any case", async () => {
    const plain = await testApp(await tracedForward({}));
    next = { body: "" };
    await plain.post("/v1/hooks", bash("ls"));
    const sent = downstream.received.at(-1)?.headers;
    expect(sent).toMatchObject({ "user-agent": "hookgate", "content-type": "application/json" });
    expect(sent?.authorization).toBeUndefined();
    expect(JSON.stringify(sent)).not.toContain(TOKEN);
    // As Claude Code's http hook sends them: the hook's headers replace its own and axios's.
    const own = await testApp(
      await tracedForward({
        "user-agent": "acme-gateway",
        "Content-Type": "application/json; charset=utf-8",
      }),
    );
    await own.post("/v1/hooks", bash("ls"));
    expect(downstream.received.at(-1)?.headers).toMatchObject({
      "user-agent": "acme-gateway",
      "content-type": "application/json; charset=utf-8",
    });
  });

  it("denies a downstream allow whose rewrite of the input is a call a static rule denies or asks about", async () => {
    // The static rules judged `git status`; the team server allowed it rewritten into a force
    // push, which went out as an explicit allow of a call the policy denies, past the dialog too.
    const app = await appWith({}, [
      {
        id: "no-force-push",
        on: "PreToolUse",
        where: { "tool_input.command": { regex: "^git push\\b.*--force" } },
        decide: "deny",
        reason: "Force pushes are never allowed",
      },
      {
        id: "ask-push",
        on: "PreToolUse",
        where: { "tool_input.command": { startsWith: "git push" } },
        decide: "ask",
        reason: "A push needs a human",
      },
    ]);
    const rewrite = (command: string) =>
      JSON.stringify({
        hookSpecificOutput: {
          hookEventName: "PreToolUse",
          permissionDecision: "allow",
          updatedInput: { command },
        },
      });
    next = { body: rewrite("git push --force origin main") };
    const denied = await jsonOf(await app.post("/v1/hooks", bash("git status")));
    expect(denied.hookSpecificOutput).toEqual({
      hookEventName: "PreToolUse",
      permissionDecision: "deny",
      permissionDecisionReason:
        'the downstream hook (rule "team-server") allowed the call rewritten into one that rule "no-force-push" denies: Force pushes are never allowed',
    });
    expect(lastAudit(app)).toMatchObject({ decision: "deny" });
    next = { body: rewrite("git push origin main") };
    const asked = await jsonOf(await app.post("/v1/hooks", bash("git status")));
    expect(asked.hookSpecificOutput).toMatchObject({
      permissionDecision: "deny",
      permissionDecisionReason:
        'the downstream hook (rule "team-server") allowed the call rewritten into one that rule "ask-push" asks about: A push needs a human',
    });
    // A command that is no string is a call whose command is not known: the deny rules that
    // read it apply.
    next = {
      body: JSON.stringify({
        hookSpecificOutput: {
          hookEventName: "PreToolUse",
          permissionDecision: "allow",
          updatedInput: { command: 7 },
        },
      }),
    };
    const realBash = JSON.stringify({ ...JSON.parse(bash("git status")), tool_name: "Bash" });
    const unknown = await jsonOf(await app.post("/v1/hooks", realBash));
    expect(unknown.hookSpecificOutput).toMatchObject({
      permissionDecision: "deny",
      permissionDecisionReason: expect.stringContaining('rule "no-force-push" denies'),
    });
    // A rewrite the static rules let through is sent, and the audit line records the input the
    // tool runs with beside the one the agent sent.
    next = { body: rewrite("git status --short") };
    const allowed = await jsonOf(await app.post("/v1/hooks", bash("git status")));
    expect(allowed.hookSpecificOutput).toMatchObject({
      permissionDecision: "allow",
      updatedInput: { command: "git status --short" },
    });
    expect(lastAudit(app)).toMatchObject({
      decision: "allow",
      toolInput: { command: "git status" },
      updatedInput: { command: "git status --short" },
    });
  });

  it("denies a downstream allow on PermissionRequest whose rewrite a static rule asks about, though the ask cannot be sent there", async () => {
    // The ask is withheld on PermissionRequest (no decision sent), which combined to no opinion
    // and let the rewrite out as an allow, past the dialog the ask stood for.
    const app = await appWith({}, [
      {
        id: "ask-push",
        on: "PermissionRequest",
        where: { "tool_input.command": { startsWith: "git push" } },
        decide: "ask",
        reason: "A push needs a human",
      },
    ]);
    next = grant("git push origin main");
    const body = await jsonOf(await app.post("/v1/hooks", permissionRequest));
    expect(body.hookSpecificOutput).toMatchObject({
      hookEventName: "PermissionRequest",
      decision: {
        behavior: "deny",
        message:
          'the downstream hook (rule "team-server") allowed the call rewritten into one that rule "ask-push" asks about: A push needs a human',
      },
    });
  });

  it("judges a PermissionRequest rewrite by the PreToolUse rules too, as the rewritten call never passes PreToolUse", async () => {
    // The PreToolUse rules judged `ls`; the team server then granted the dialog with the input
    // rewritten into a force push, which ran: the deny rules of examples/policy.json are all
    // PreToolUse rules, and no rule on PermissionRequest judged it.
    const app = await appWith({}, [
      {
        id: "no-force-push",
        on: "PreToolUse",
        where: { "tool_input.command": { regex: "^git push\\b.*--force" } },
        decide: "deny",
        reason: "Force pushes are never allowed",
      },
      {
        id: "ask-push",
        on: "PreToolUse",
        if: "Bash(git push *)",
        decide: "ask",
        reason: "A push needs a human",
      },
    ]);
    next = grant("git push --force origin main");
    const denied = await jsonOf(await app.post("/v1/hooks", permissionRequest));
    const why =
      'the downstream hook (rule "team-server") allowed the call rewritten into one that rule "no-force-push" denies: Force pushes are never allowed';
    expect(denied.hookSpecificOutput).toEqual({
      hookEventName: "PermissionRequest",
      decision: { behavior: "deny", message: why },
      permissionDecision: "deny",
      permissionDecisionReason: why,
    });
    // A PreToolUse ask is a dialog the rewrite, sent with the allow, would skip.
    next = grant("git push origin main");
    const asked = await jsonOf(await app.post("/v1/hooks", permissionRequest));
    expect(asked.hookSpecificOutput.decision).toEqual({
      behavior: "deny",
      message:
        'the downstream hook (rule "team-server") allowed the call rewritten into one that rule "ask-push" asks about: A push needs a human',
    });
    // A rule on both events denies once, its reason given once.
    const both = await appWith({}, [
      {
        id: "no-rm",
        on: ["PreToolUse", "PermissionRequest"],
        if: "Bash(rm *)",
        decide: "deny",
        reason: "No rm",
      },
    ]);
    next = grant("rm -rf build");
    expect(
      (await jsonOf(await both.post("/v1/hooks", permissionRequest))).hookSpecificOutput.decision,
    ).toEqual({
      behavior: "deny",
      message:
        'the downstream hook (rule "team-server") allowed the call rewritten into one that rule "no-rm" denies: No rm',
    });
    next = grant("git status --short");
    const allowed = await jsonOf(await app.post("/v1/hooks", permissionRequest));
    expect(allowed.hookSpecificOutput.decision).toEqual({
      behavior: "allow",
      updatedInput: { command: "git status --short" },
    });
  });

  it("denies a downstream rewrite into a call a prompt or forward rule judges that never judged it", async () => {
    // The static rules judged the rewrite; a prompt rule whose `where` holds for the rewritten
    // call only was never asked, and the rewrite went out as an explicit allow the model never saw.
    const app = await appWith(
      {},
      [
        {
          id: "judge-pushes",
          on: "PreToolUse",
          where: { "tool_input.command": { startsWith: "git push" } },
          prompt: { text: "Is this push safe? $ARGUMENTS", model: "m", onError: "deny" },
        },
      ],
      { models: { m: { provider: "anthropic", model: "x", apiKey: "k", url: model.anthropicUrl } } },
    );
    const rewrite = (command: string) =>
      JSON.stringify({
        hookSpecificOutput: {
          hookEventName: "PreToolUse",
          permissionDecision: "allow",
          updatedInput: { command },
        },
      });
    const calls = model.requests.length;
    next = { body: rewrite("git push origin main") };
    const denied = await jsonOf(await app.post("/v1/hooks", bash("git status")));
    expect(denied.hookSpecificOutput).toEqual({
      hookEventName: "PreToolUse",
      permissionDecision: "deny",
      permissionDecisionReason:
        'the downstream hook (rule "team-server") allowed the call rewritten into one that rule "judge-pushes" judges, which did not judge it: hookgate runs prompt and forward rules once, on the call as it came',
    });
    expect(lastAudit(app)).toMatchObject({ decision: "deny", rules: ["team-server"] });
    // Nothing is called a second time for the rewrite.
    expect(model.requests.length).toBe(calls);
    // A rewrite that no such rule reads is sent.
    next = { body: rewrite("git status --short") };
    const allowed = await jsonOf(await app.post("/v1/hooks", bash("git status")));
    expect(allowed.hookSpecificOutput).toMatchObject({
      permissionDecision: "allow",
      updatedInput: { command: "git status --short" },
    });
    // A prompt rule that reads the call as it came as well judged it, once, and lets the rewrite be.
    const every = await appWith(
      {},
      [{ id: "judge-all", on: "PreToolUse", prompt: { text: "ok? $ARGUMENTS", model: "m" } }],
      { models: { m: { provider: "anthropic", model: "x", apiKey: "k", url: model.anthropicUrl } } },
    );
    model.script({ verdict: { ok: true, reason: "fine" } });
    next = { body: rewrite("git push origin main") };
    const judgedOnce = await jsonOf(await every.post("/v1/hooks", bash("git status")));
    expect(judgedOnce.hookSpecificOutput).toMatchObject({
      permissionDecision: "allow",
      updatedInput: { command: "git push origin main" },
    });
    expect(model.requests.length).toBe(calls + 1);
  });

  /** The answer and audit of `rm -rf build` when the team server asks with `reason` and `updatedInput`. */
  async function askedWith(reason: string, updatedInput: Record<string, unknown>) {
    const app = await appWith();
    next = {
      body: JSON.stringify({
        hookSpecificOutput: {
          hookEventName: "PreToolUse",
          permissionDecision: "ask",
          permissionDecisionReason: reason,
          updatedInput,
        },
      }),
    };
    const body = await jsonOf(await app.post("/v1/hooks", bash("rm -rf build")));
    return { answer: body.hookSpecificOutput, pending: lastAudit(app).pending };
  }

  it("asks about the call as it came when a downstream ask carries a rewrite, and says the rewrite was not applied", async () => {
    // Claude Code's docs pair an ask with updatedInput to show the rewritten call; hookgate sends a
    // rewrite only with an allow, so the dialog is for the call as it came and approving it runs
    // that. The server's reason spoke of the rewrite, and neither the user nor the audit was told.
    const { answer, pending } = await askedWith("Confirm the dry run", { command: "rm -rf build --dry-run" });
    expect(answer).toEqual({
      hookEventName: "PreToolUse",
      permissionDecision: "ask",
      permissionDecisionReason:
        "Confirm the dry run (hookgate did not apply the downstream hook's updatedInput: it sends a rewrite only with an allow, so this asks about the call as it came)",
    });
    expect(pending).toEqual([
      expect.objectContaining({
        rule: "team-server",
        outcome: "OK",
        detail: expect.stringContaining("not passed on: hookSpecificOutput.updatedInput"),
      }),
    ]);
  });

  it("adds no note to a downstream ask whose updatedInput is the call as it came: nothing was rewritten", async () => {
    // A server that echoes the input with each answer asks about the very call the dialog shows.
    const { answer, pending } = await askedWith("Confirm the deletion", { command: "rm -rf build" });
    expect(answer).toEqual({
      hookEventName: "PreToolUse",
      permissionDecision: "ask",
      permissionDecisionReason: "Confirm the deletion",
    });
    expect(pending).toEqual([
      expect.not.objectContaining({ detail: expect.stringContaining("updatedInput") }),
    ]);
  });

  it("takes a PermissionRequest grant whose updatedInput is the call as it came as no rewrite: the PreToolUse ask it answers stands aside", async () => {
    // A PreToolUse ask shows the dialog; the team server grants it, echoing the input back. That
    // is the call the PreToolUse rules judged, not one they never saw; the echo is not passed on.
    const app = await appWith({}, [
      { id: "ask-bash", on: "PreToolUse", if: "Bash(x)", decide: "ask", reason: "x needs a human" },
    ]);
    next = grant("x");
    const granted = await jsonOf(await app.post("/v1/hooks", permissionRequest));
    expect(granted.hookSpecificOutput.decision).toEqual({ behavior: "allow" });
  });

  it("merges with static rules by precedence: a static ask beats a downstream allow", async () => {
    const app = await appWith({}, [
      { id: "ask-mcp", on: "PreToolUse", matcher: "mcp__.*", decide: "ask", reason: "MCP needs a human" },
    ]);
    next = answering({ hookEventName: "PreToolUse", permissionDecision: "allow" });
    const body = await jsonOf(await app.post("/v1/hooks", bash("ls")));
    expect(body.hookSpecificOutput).toMatchObject({
      permissionDecision: "ask",
      permissionDecisionReason: "MCP needs a human",
    });
  });

  it("runs prompt and forward rules in parallel and merges them: a judge's deny beats a downstream allow", async () => {
    model.script({ delayMs: 150, next: { verdict: { ok: false, reason: "judge says no" } } });
    const app = await appWith(
      {},
      [{ id: "judge", on: "PreToolUse", prompt: { text: "ok?", model: "m", onError: "allow" } }],
      {
        models: modelM(),
      },
    );
    next = answering({ hookEventName: "PreToolUse", permissionDecision: "allow" });
    const body = await jsonOf(await app.post("/v1/hooks", bash("ls")));
    expect(body.hookSpecificOutput).toMatchObject({
      permissionDecision: "deny",
      permissionDecisionReason: "[ok?]: judge says no",
    });
    expect(lastAudit(app).pending).toEqual([
      expect.objectContaining({ rule: "judge", outcome: "OK" }),
      expect.objectContaining({ rule: "team-server", outcome: "OK" }),
    ]);
  });

  it("adds contexts in rule order, a forward rule's among the static ones", async () => {
    const app = await testApp(
      await authPolicy(
        [
          {
            id: "relay-first",
            on: "PreToolUse",
            forward: { url: `${downstream.url}/hook`, timeoutMs: 3000 },
          },
          { id: "static-second", on: "PreToolUse", context: "SECOND from the static rule" },
        ],
        { egress },
      ),
    );
    next = answering({ hookEventName: "PreToolUse", additionalContext: "FIRST from downstream" });
    const context = (await jsonOf(await app.post("/v1/hooks", bash("ls")))).hookSpecificOutput
      .additionalContext as string;
    expect(context).toContain("FIRST from downstream");
    expect(context.indexOf("FIRST from downstream")).toBeLessThan(
      context.indexOf("SECOND from the static rule"),
    );
  });

  it("runs shadow prompt and forward rules and records what they decided, sending none of it", async () => {
    model.script({ verdict: { ok: false, reason: "judge says no" } });
    const metrics = createPrometheusRegistry();
    const app = await testApp(
      await authPolicy(
        [
          {
            id: "relay-shadow",
            on: "PreToolUse",
            mode: "shadow",
            forward: { url: `${downstream.url}/hook` },
          },
          { id: "judge-shadow", on: "PreToolUse", mode: "shadow", prompt: { text: "ok?", model: "m" } },
          { id: "tell", on: "PreToolUse", context: "enforced context" },
        ],
        {
          egress,
          models: modelM(),
        },
      ),
      {},
      metrics,
    );
    next = { body: deny("downstream says no") };
    const before = downstream.received.length;
    const body = await jsonOf(await app.post("/v1/hooks", bash("ls")));
    // Only the enforcing rule reaches the agent: no permission decision, no shadow reason.
    expect(body.hookSpecificOutput.permissionDecision).toBeUndefined();
    expect(body.hookSpecificOutput.additionalContext).toContain("enforced context");
    expect(JSON.stringify(body)).not.toContain("says no");
    expect(downstream.received.length).toBe(before + 1);
    const audit = lastAudit(app);
    expect(audit.shadow).toEqual([
      { rule: "relay-shadow", decision: "deny", outcome: "OK", ms: expect.any(Number) },
      { rule: "judge-shadow", decision: "deny", outcome: "OK", ms: expect.any(Number), model: "m" },
    ]);
    expect(audit.decision).toBe("none");
    // `pending` is the enforcing rules' calls: replay compares records by it.
    expect(audit.pending).toEqual([]);
    // Counted apart from the enforcing rules' calls, which alerts watch.
    const text = metrics.render();
    expect(text).toContain('hookgate_shadow_calls_total{action="forward",outcome="OK"} 1');
    expect(text).toContain('hookgate_shadow_calls_total{action="prompt",outcome="OK"} 1');
    expect(text).not.toMatch(/hookgate_(judge|forward)_calls_total\{/);
  });

  it("keeps shadow calls out of the enforcing rules' way: a budget and slots of their own", async () => {
    // The shadow rule's calls hang until the enforcing call is answered; the enforcing rule's
    // answer at once.
    let release!: () => void;
    const released = new Promise<void>((r) => (release = r));
    model.script((req) =>
      JSON.stringify(req.body).includes("shadow ok?")
        ? { until: released, next: { verdict: { ok: true, reason: "fine" } } }
        : { verdict: { ok: true, reason: "fine" } },
    );
    const models = {
      m: {
        provider: "anthropic",
        model: "x",
        apiKey: "k",
        url: model.anthropicUrl,
        dailyCallsPerTeam: 1,
        maxConcurrent: 1,
      },
    };
    const app = await testApp(
      await authPolicy(
        [
          {
            id: "judge-shadow",
            on: "PreToolUse",
            matcher: "mcp__.*",
            mode: "shadow",
            prompt: { text: "shadow ok?", model: "m" },
          },
          {
            id: "judge",
            on: "PreToolUse",
            matcher: "Bash",
            // Waiting for the shadow call's slot, it would time out and deny.
            prompt: { text: "ok?", model: "m", timeoutMs: 5000, onError: "deny" },
          },
        ],
        { egress, models },
      ),
    );
    const bashEvent = {
      session_id: "s",
      transcript_path: "/t",
      cwd: "/p",
      hook_event_name: "PreToolUse",
      tool_name: "Bash",
      tool_input: { command: "ls" },
    };
    // The shadow call holds a slot of m (maxConcurrent 1) and spends a call of its budget (1)...
    const before = model.requests.length;
    const shadowed = app.post("/v1/hooks", bash("ls"));
    for (let waited = 0; model.requests.length === before; waited += 5) {
      if (waited > 2000) throw new Error("the shadow call never reached the model");
      await new Promise((r) => setTimeout(r, 5));
    }
    // ...and the enforcing call neither waits for that slot nor finds the team's budget spent.
    expect(await (await app.post("/v1/hooks", bashEvent)).text()).toBe("");
    expect(lastAudit(app).pending).toEqual([expect.objectContaining({ rule: "judge", outcome: "OK" })]);
    release();
    await shadowed;
    expect(lastAudit(app).shadow).toEqual([expect.objectContaining({ rule: "judge-shadow", outcome: "OK" })]);
    // A second shadow call finds its own budget spent, and says so.
    await app.post("/v1/hooks", bash("pwd"));
    expect(lastAudit(app).shadow).toEqual([
      expect.objectContaining({
        rule: "judge-shadow",
        decision: "none",
        outcome: "SKIPPED",
        detail: expect.stringContaining("own daily budget of 1"),
      }),
    ]);
  });

  it("answers an enforcing rule from no verdict a shadow call left in the cache", async () => {
    model.script({ verdict: { ok: true, reason: "fine" } });
    const judge = { text: "same?", model: "m" };
    const app = await testApp(
      await authPolicy(
        [
          { id: "judge-shadow", on: "PreToolUse", mode: "shadow", prompt: judge },
          { id: "judge", on: "PreToolUse", teams: ["b"], prompt: judge },
        ],
        {
          egress,
          models: modelM(),
        },
      ),
    );
    // Team a: only the shadow rule applies, and it calls the model.
    await app.post("/v1/hooks", bash("ls"));
    expect(lastAudit(app).shadow).toEqual([expect.objectContaining({ rule: "judge-shadow", outcome: "OK" })]);
    // Team b, the same event and prompt: the enforcing rule makes its own call.
    await app.post("/v1/hooks", bash("ls"), { authorization: "Bearer team-b-token" });
    expect(lastAudit(app).pending).toEqual([expect.objectContaining({ rule: "judge", outcome: "OK" })]);
  });

  it("grants no Claude Code PermissionRequest from a permissionDecision without the decision object", async () => {
    // Claude Code's schema requires `decision` there (clients.md §6.1): a hook error to it, onError here.
    const app = await appWith();
    next = answering({ hookEventName: "PermissionRequest", permissionDecision: "allow" });
    const body = await jsonOf(await app.post("/v1/hooks/claude-code", permissionRequest));
    expect(body.hookSpecificOutput.decision).toEqual({
      behavior: "deny",
      message: expect.stringContaining("FORWARD_OFF_SCHEMA"),
    });
    expect(lastAudit(app).pending).toEqual([
      expect.objectContaining({ outcome: "FORWARD_OFF_SCHEMA", onError: "deny" }),
    ]);
  });

  it("keeps a forwarded ask on PermissionRequest above another rule's allow, though it cannot be sent there", async () => {
    // POLICY.md: ask over allow. The dialog cannot carry an ask, so no decision is sent and the
    // client shows its dialog, as for a `decide: "ask"` rule beside an allow rule.
    const allow = { id: "allow-bash", on: "PermissionRequest", matcher: "Bash", decide: "allow" };
    const app = await appWith({}, [allow]);
    next = answering({ hookEventName: "PermissionRequest", permissionDecision: "ask" });
    // deepcode's: it reads permissionDecision there, where Claude Code requires the decision object.
    const deepcodeRequest = {
      hook_event_name: "PermissionRequest",
      cwd: "/p",
      tool_name: "Bash",
      tool_desc: "x",
    };
    const res = await app.post("/v1/hooks/deepcode", deepcodeRequest);
    expect(res.status).toBe(200);
    expect(await res.text()).toBe("");
    // The same for the forward's own failure under onError "ask".
    next = { hang: true };
    const failing = await appWith({ onError: "ask", timeoutMs: 100 }, [allow]);
    expect(await (await failing.post("/v1/hooks", permissionRequest)).text()).toBe("");
  });

  it("gives the agent a long forwarded reason whole, and the audit line its first 4,000 characters", async () => {
    const app = await appWith();
    const reason = `${"r".repeat(9_000)}end`;
    next = answering({
      hookEventName: "PreToolUse",
      permissionDecision: "deny",
      permissionDecisionReason: reason,
    });
    const body = await jsonOf(await app.post("/v1/hooks", bash("ls")));
    expect(body.hookSpecificOutput.permissionDecisionReason).toBe(reason);
    const audited = lastAudit(app).reason as string;
    expect(audited).toBe(`${"r".repeat(4000)}…[truncated by hookgate]`);
  });

  it("relays a PermissionRequest decision in both shapes", async () => {
    const app = await appWith();
    next = answering({
      hookEventName: "PermissionRequest",
      decision: { behavior: "deny", message: "no" },
    });
    const body = await jsonOf(await app.post("/v1/hooks", permissionRequest));
    expect(body.hookSpecificOutput).toEqual({
      hookEventName: "PermissionRequest",
      decision: { behavior: "deny", message: "no" },
      permissionDecision: "deny",
      permissionDecisionReason: "no",
    });
  });
});

describe("a policy secret in a downstream answer", () => {
  let echo: LoopbackServer;
  beforeAll(async () => {
    // Not JSON, and the token sits across the 100-character excerpt limit of the reason.
    echo = await loopbackServer((_req, res) => {
      res.writeHead(200, { "content-type": "text/plain" });
      res.end(`${"x".repeat(90)}Qm7vX2pL9rT4wZ8k echoed`);
    });
  });
  afterAll(() => echo.close());

  /**
   * A Claude Code Bash `ls` through a policy whose one rule forwards it to the echo server with
   * `forward`'s fields and answers deny on any failure: the answer, and the app for its logs.
   */
  async function lsEchoed(
    forward: Record<string, unknown>,
    egressSection: Record<string, unknown>,
    env: Record<string, string> = {},
  ) {
    const app = await testApp(
      await authPolicy(
        [
          {
            id: "team-server",
            on: ["PreToolUse"],
            forward: { url: `${echo.url}/hook`, ...forward, onError: "deny" },
          },
        ],
        { egress: egressSection },
      ),
      env,
    );
    const res = await app.post(
      "/v1/hooks",
      JSON.stringify({
        session_id: "s",
        transcript_path: "/t",
        cwd: "/p",
        hook_event_name: "PreToolUse",
        tool_name: "Bash",
        tool_input: { command: "ls" },
      }),
    );
    return { app, answer: await jsonOf(res) };
  }

  it("is scrubbed before the excerpt is cut, so not even its start shows", async () => {
    const { app, answer } = await lsEchoed(
      { headers: { Authorization: "Bearer $POLICY_TOKEN" }, allowedEnvVars: ["POLICY_TOKEN"] },
      egress,
      { POLICY_TOKEN: "Qm7vX2pL9rT4wZ8k" },
    );
    expect(answer.hookSpecificOutput.permissionDecision).toBe("deny");
    expect(answer.hookSpecificOutput.permissionDecisionReason).toContain("[masked]");
    expect(JSON.stringify(answer)).not.toContain("Qm7v");
    expect(JSON.stringify(app.logs)).not.toContain("Qm7v");
  });

  it("is scrubbed when written inline in a header too, as check warns it should not be", async () => {
    const { app, answer } = await lsEchoed(
      { headers: { "X-Api-Key": "Qm7vX2pL9rT4wZ8k" } },
      { allowedHttpHookUrls: ["http://127.0.0.1:*/*"], allowCidrs: ["127.0.0.1/32"] },
    );
    expect(answer.hookSpecificOutput.permissionDecisionReason).toContain("[masked]");
    expect(JSON.stringify(answer)).not.toContain("Qm7v");
    expect(JSON.stringify(app.logs)).not.toContain("Qm7v");
  });
});

describe("a forwarded answer, read as the client that sent the event reads it", () => {
  /** A forward rule on every event below whose failures give no opinion, so a lost decision shows. */
  const clientApp = async (onError: "allow" | "deny" = "allow") =>
    testApp(
      await authPolicy(
        [
          {
            id: "team-server",
            on: ["PreToolUse", "PermissionRequest", "UserPromptSubmit"],
            forward: { url: `${downstream.url}/hook`, timeoutMs: 2000, onError },
          },
        ],
        { egress },
      ),
    );
  /** deepcode's PreToolUse: no transcript_path, a tool_desc (clients.md §5.3). */
  const deepcodeBash = {
    hook_event_name: "PreToolUse",
    cwd: "/p",
    tool_name: "Bash",
    tool_input: { command: "rm x" },
  };
  const deepcodePermission = {
    hook_event_name: "PermissionRequest",
    cwd: "/p",
    tool_name: "Bash",
    tool_desc: "rm x",
  };
  /** deepagents v2's PreToolUse and PermissionRequest (§5.4). */
  const deepagentsBash = {
    session_id: "s",
    transcript_path: "/t",
    cwd: "/p",
    hook_event_name: "PreToolUse",
    tool_name: "Bash",
    tool_input: { command: "rm x" },
    tool_use_id: "t1",
  };
  const deepagentsPermission = {
    session_id: "s",
    transcript_path: "/t",
    cwd: "/p",
    hook_event_name: "PermissionRequest",
    tool_name: "Bash",
    tool_input: { command: "rm x" },
  };
  const answer = (value: unknown) => ({ body: JSON.stringify(value) });

  it("blocks a deepcode prompt that the server denies with permissionDecision, as deepcode reads it", async () => {
    // deepcode counts a permissionDecision "deny" as a block on any event (its src/hooks.ts
    // mergeResults), and drops a prompt on one (src/tui/useChat.ts: `ups.block`). Claude Code
    // strips the field from a UserPromptSubmit answer.
    const app = await clientApp();
    next = answer({
      hookSpecificOutput: {
        hookEventName: "UserPromptSubmit",
        permissionDecision: "deny",
        permissionDecisionReason: "no secrets in prompts",
      },
    });
    const prompt = { hook_event_name: "UserPromptSubmit", cwd: "/p", prompt: "key AKIA…" };
    const blocked = await jsonOf(await app.post("/v1/hooks/deepcode", prompt));
    expect(blocked).toEqual({ decision: "block", reason: "no secrets in prompts" });
    const claudeCode = await app.post("/v1/hooks/claude-code", {
      ...prompt,
      session_id: "s",
      transcript_path: "/t",
    });
    expect(await claudeCode.text()).toBe("");
  });

  it("keeps a deepcode deny whose hookSpecificOutput names no event, as deepcode reads it", async () => {
    const app = await clientApp();
    next = answer({
      hookSpecificOutput: { permissionDecision: "deny", permissionDecisionReason: "not here" },
    });
    const res = await app.post("/v1/hooks/deepcode", deepcodeBash);
    expect(res.status).toBe(200);
    expect((await jsonOf(res)).hookSpecificOutput).toEqual({
      hookEventName: "PreToolUse",
      permissionDecision: "deny",
      permissionDecisionReason: "not here",
    });
    expect(lastAudit(app).pending).toEqual([expect.objectContaining({ rule: "team-server", outcome: "OK" })]);
  });

  it("reads a deepcode answer's hookSpecificOutput whatever event it names, as deepcode does", async () => {
    const app = await clientApp();
    next = answer({
      hookSpecificOutput: {
        hookEventName: "PostToolUse",
        permissionDecision: "deny",
        permissionReason: "why",
      },
    });
    const body = await jsonOf(await app.post("/v1/hooks/deepcode", deepcodeBash));
    expect(body.hookSpecificOutput).toMatchObject({
      permissionDecision: "deny",
      permissionDecisionReason: "why",
    });
    // Claude Code checks the name: the same answer is a failed hook there, onError here.
    next = answer({ hookSpecificOutput: { permissionDecision: "deny" } });
    const claude = await app.post("/v1/hooks/claude-code", bash("rm x"));
    expect(await claude.text()).toBe("");
    expect(lastAudit(app).pending).toEqual([expect.objectContaining({ outcome: "FORWARD_OFF_SCHEMA" })]);
  });

  it("keeps a deepcode deny beside fields of a type deepcode skips, as it validates nothing", async () => {
    const app = await clientApp();
    next = answer({
      decision: "deny",
      systemMessage: 7,
      hookSpecificOutput: {
        permissionDecision: "deny",
        permissionDecisionReason: "no",
        additionalContext: [],
      },
    });
    const body = await jsonOf(await app.post("/v1/hooks/deepcode", deepcodeBash));
    expect(body.hookSpecificOutput).toEqual({
      hookEventName: "PreToolUse",
      permissionDecision: "deny",
      permissionDecisionReason: "no",
    });
    // A hookSpecificOutput that is no object is skipped as well.
    next = answer({ decision: "block", reason: "stop", hookSpecificOutput: "PreToolUse" });
    const prompt = { hook_event_name: "UserPromptSubmit", cwd: "/p", prompt: "hi" };
    expect(await jsonOf(await app.post("/v1/hooks/deepcode", prompt))).toEqual({
      decision: "block",
      reason: "stop",
    });
  });

  it("grants no deepcode PermissionRequest from the decision object, which deepcode does not read", async () => {
    const app = await clientApp();
    next = answer({
      hookSpecificOutput: {
        hookEventName: "PermissionRequest",
        decision: { behavior: "allow" },
        permissionDecision: "deny",
        permissionDecisionReason: "deepcode reads this",
      },
    });
    const denied = await jsonOf(await app.post("/v1/hooks/deepcode", deepcodePermission));
    expect(denied.hookSpecificOutput).toMatchObject({
      permissionDecision: "deny",
      permissionDecisionReason: "deepcode reads this",
    });
    next = answer({
      hookSpecificOutput: { hookEventName: "PermissionRequest", decision: { behavior: "allow" } },
    });
    expect(await (await app.post("/v1/hooks/deepcode", deepcodePermission)).text()).toBe("");
    // Its deny is kept all the same, fail-safe.
    next = answer({
      hookSpecificOutput: {
        hookEventName: "PermissionRequest",
        decision: { behavior: "deny", message: "no" },
      },
    });
    const kept = await jsonOf(await app.post("/v1/hooks/deepcode", deepcodePermission));
    expect(kept.hookSpecificOutput).toMatchObject({
      permissionDecision: "deny",
      permissionDecisionReason: "no",
    });
  });

  it("answers a deepagents event whose forwarded answer says decision approve with onError, as deepagents drops it", async () => {
    const app = await clientApp();
    next = answer({ decision: "approve", reason: "fine" });
    const res = await app.post("/v1/hooks/deepagents", deepagentsBash);
    expect(res.status).toBe(200);
    expect(await res.text()).toBe("");
    expect(lastAudit(app)).toMatchObject({ decision: "none" });
    expect(lastAudit(app).pending).toEqual([
      expect.objectContaining({
        outcome: "FORWARD_OFF_SCHEMA",
        onError: "allow",
        detail: expect.stringContaining(
          'decision: expected the only value deepagents accepts, "block", got "approve"',
        ),
      }),
    ]);
    // Under onError deny, the rule denies and says why.
    const strict = await clientApp("deny");
    const denied = await jsonOf(await strict.post("/v1/hooks/deepagents", deepagentsBash));
    expect(denied.hookSpecificOutput).toMatchObject({
      permissionDecision: "deny",
      permissionDecisionReason: expect.stringContaining("FORWARD_OFF_SCHEMA"),
    });
    // Claude Code still reads it as the deprecated allow.
    next = answer({ decision: "approve" });
    const claude = await jsonOf(await app.post("/v1/hooks/claude-code", bash("ls")));
    expect(claude.hookSpecificOutput.permissionDecision).toBe("allow");
  });

  it("grants no deepagents PermissionRequest from permissionDecision alone: its schema requires the decision object", async () => {
    const app = await clientApp();
    next = answer({
      hookSpecificOutput: { hookEventName: "PermissionRequest", permissionDecision: "allow" },
    });
    expect(await (await app.post("/v1/hooks/deepagents", deepagentsPermission)).text()).toBe("");
    expect(lastAudit(app).pending).toEqual([expect.objectContaining({ outcome: "FORWARD_OFF_SCHEMA" })]);
  });

  it("ignores a deepagents hookSpecificOutput for another of its events and applies the rest, as deepagents does", async () => {
    const app = await clientApp("deny");
    next = answer({
      decision: "block",
      reason: "not this prompt",
      hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: "allow" },
    });
    const prompt = { ...deepagentsBash, hook_event_name: "UserPromptSubmit", prompt: "hi" };
    const body = await jsonOf(await app.post("/v1/hooks/deepagents", prompt));
    expect(body).toEqual({ decision: "block", reason: "not this prompt" });
    next = answer({
      systemMessage: "noted",
      hookSpecificOutput: { hookEventName: "PostToolUse", additionalContext: "x" },
    });
    expect(await jsonOf(await app.post("/v1/hooks/deepagents", deepagentsBash))).toEqual({
      systemMessage: "noted",
    });
    expect(lastAudit(app).pending).toEqual([expect.objectContaining({ outcome: "OK" })]);
    // An event deepagents has no variant for invalidates the whole answer there.
    next = answer({ hookSpecificOutput: { hookEventName: "Notification", additionalContext: "x" } });
    await app.post("/v1/hooks/deepagents", deepagentsBash);
    expect(lastAudit(app).pending).toEqual([expect.objectContaining({ outcome: "FORWARD_OFF_SCHEMA" })]);
  });

  it("types for deepagents the fields it types and hookgate does not use", async () => {
    const app = await clientApp();
    next = answer({
      terminalSequence: 7,
      hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: "allow" },
    });
    expect(await (await app.post("/v1/hooks/deepagents", deepagentsBash)).text()).toBe("");
    expect(lastAudit(app).pending).toEqual([
      expect.objectContaining({
        outcome: "FORWARD_OFF_SCHEMA",
        detail: expect.stringContaining("terminalSequence"),
      }),
    ]);
  });

  it("blocks a deepcode event whose downstream answers 4xx, as deepcode does (with the body's reason); a 5xx is onError's", async () => {
    const app = await clientApp();
    next = { status: 403, body: JSON.stringify({ reason: "not on Fridays" }) };
    const body = await jsonOf(await app.post("/v1/hooks/deepcode", deepcodeBash));
    expect(body.hookSpecificOutput).toMatchObject({
      permissionDecision: "deny",
      permissionDecisionReason: "not on Fridays",
    });
    next = { status: 401, body: "" };
    const prompt = { hook_event_name: "UserPromptSubmit", cwd: "/p", prompt: "hi" };
    expect(await jsonOf(await app.post("/v1/hooks/deepcode", prompt))).toEqual({
      decision: "block",
      reason: "HTTP 401",
    });
    // A 5xx is the server failing: the policy's onError (allow here) decides, as for every client.
    next = { status: 500, body: JSON.stringify({ reason: "crashed" }) };
    expect(await (await app.post("/v1/hooks/deepcode", prompt)).text()).toBe("");
    expect(lastAudit(app).pending).toEqual([expect.objectContaining({ outcome: "FORWARD_HTTP_STATUS" })]);
    // A 3xx fails deepcode's fetch (redirect: "error"), a failed hook: onError there.
    next = { status: 302, location: "http://127.0.0.1:1/x" };
    expect(await (await app.post("/v1/hooks/deepcode", deepcodeBash)).text()).toBe("");
    // Claude Code ignores the body of a non-2xx and goes on: onError.
    next = { status: 403, body: JSON.stringify({ reason: "not on Fridays" }) };
    expect(await (await app.post("/v1/hooks/claude-code", bash("rm x"))).text()).toBe("");
  });

  it("denies a rewrite nested past what JSON.stringify writes out, which no answer can carry, rather than fail the request", async () => {
    // A team server's allow whose updatedInput nests 100,000 deep: JSON.parse reads it, but the
    // answer's writer recurses, and the request failed as INTERNAL_ERROR, answered by the fail
    // mode, which runs the call as it came, not as the server allowed it.
    const deep = `${"[".repeat(100_000)}${"]".repeat(100_000)}`;
    const app = await clientApp();
    next = {
      status: 200,
      body: `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow","updatedInput":{"command":"ls","x":${deep}}}}`,
    };
    for (const client of ["claude-code", "deepcode", "deepagents"]) {
      const answer = await jsonOf(await app.post(`/v1/hooks/${client}`, bash("rm x")));
      expect(answer.hookSpecificOutput).toMatchObject({
        permissionDecision: "deny",
        permissionDecisionReason: expect.stringContaining("denied rather than run unrewritten"),
      });
      expect(answer.hookSpecificOutput).not.toHaveProperty("updatedInput");
      expect(lastAudit(app).pending).toEqual([expect.objectContaining({ outcome: "OK" })]);
    }
  });

  it("blocks a deepcode event on a 4xx whose body nests past what JSON.stringify writes out, by its status or its reason", async () => {
    // JSON.parse reads it, but the writer recurses: FastAPI-style `detail` nested 100,000 deep.
    const deep = `${"[".repeat(100_000)}${"]".repeat(100_000)}`;
    const app = await clientApp("deny");
    const prompt = { hook_event_name: "UserPromptSubmit", cwd: "/p", prompt: "hi" };
    next = { status: 422, body: `{"detail":${deep}}` };
    expect(await jsonOf(await app.post("/v1/hooks/deepcode", prompt))).toEqual({
      decision: "block",
      reason: "HTTP 422",
    });
    next = { status: 403, body: `{"reason":"not on Fridays","message":{"detail":${deep}}}` };
    expect(await jsonOf(await app.post("/v1/hooks/deepcode", prompt))).toEqual({
      decision: "block",
      reason: "not on Fridays",
    });
    // An answer, not a failure: onError (deny) is not what blocked.
    expect(lastAudit(app).pending).toEqual([expect.objectContaining({ outcome: "OK" })]);
  });

  it("reads an answer saying async true from deepcode and deepagents: only Claude Code ignores it", async () => {
    const app = await clientApp();
    const deny = {
      async: true,
      hookSpecificOutput: {
        hookEventName: "PreToolUse",
        permissionDecision: "deny",
        permissionDecisionReason: "no",
      },
    };
    next = answer(deny);
    for (const [route, event] of [
      ["/v1/hooks/deepcode", deepcodeBash],
      ["/v1/hooks/deepagents", deepagentsBash],
    ] as const) {
      const body = await jsonOf(await app.post(route, event));
      expect(body.hookSpecificOutput).toMatchObject({ permissionDecision: "deny" });
    }
    expect(await (await app.post("/v1/hooks/claude-code", bash("rm x"))).text()).toBe("");
  });

  it('reads deepagents\' booleans as its pydantic model does: an interrupt of "true" keeps the deny it is in', async () => {
    const app = await clientApp();
    next = answer({
      hookSpecificOutput: {
        hookEventName: "PermissionRequest",
        decision: { behavior: "deny", message: "no", interrupt: "true" },
      },
    });
    const body = await jsonOf(await app.post("/v1/hooks/deepagents", deepagentsPermission));
    expect(body.hookSpecificOutput.decision).toMatchObject({ behavior: "deny" });
    next = answer({
      continue: 0,
      hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: "deny" },
    });
    const denied = await jsonOf(await app.post("/v1/hooks/deepagents", deepagentsBash));
    expect(denied).toMatchObject({ continue: false, hookSpecificOutput: { permissionDecision: "deny" } });
    // A value pydantic does not read as a boolean still invalidates the answer.
    next = answer({
      continue: "maybe",
      hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: "deny" },
    });
    expect(await (await app.post("/v1/hooks/deepagents", deepagentsBash)).text()).toBe("");
  });

  it("denies a deepcode allow whose updatedInput is no object: the rewrite it asks for cannot be applied", async () => {
    const app = await clientApp();
    next = answer({
      hookSpecificOutput: { permissionDecision: "allow", updatedInput: "rm -i x" },
    });
    const body = await jsonOf(await app.post("/v1/hooks/deepcode", deepcodeBash));
    expect(body.hookSpecificOutput).toMatchObject({
      permissionDecision: "deny",
      permissionDecisionReason: expect.stringContaining("updatedInput"),
    });
    expect(body.hookSpecificOutput.updatedInput).toBeUndefined();
    // A deny beside it stays a deny, and an allow without one is an allow.
    next = answer({ hookSpecificOutput: { permissionDecision: "deny", updatedInput: 7 } });
    const denied = await jsonOf(await app.post("/v1/hooks/deepcode", deepcodeBash));
    expect(denied.hookSpecificOutput.permissionDecision).toBe("deny");
    next = answer({ hookSpecificOutput: { permissionDecision: "allow", additionalContext: 7 } });
    const allowed = await jsonOf(await app.post("/v1/hooks/deepcode", deepcodeBash));
    expect(allowed.hookSpecificOutput.permissionDecision).toBe("allow");
  });
});

import { describe, expect, it } from "vitest";
import { tokensMasked } from "../../src/http/hook-route.js";
import { authPolicy, jsonOf, TOKEN, testApp } from "../support/app.js";
import { sha256 } from "../support/policy.js";

const rules = [{ id: "no-rm", on: "PreToolUse", if: "Bash(rm *)", decide: "deny", reason: "no rm" }];
const denyApp = await testApp(await authPolicy(rules, { defaults: { onError: "deny", maxBodyBytes: 4096 } }));
const allowApp = await testApp(
  await authPolicy(rules, { defaults: { onError: "allow", maxBodyBytes: 4096 } }),
);

const pre = JSON.stringify({
  session_id: "s",
  transcript_path: "/t",
  cwd: "/p",
  hook_event_name: "PreToolUse",
  tool_name: "Bash",
  tool_input: { command: "ls" },
});

/** Every bad request on an agent route answers 200 with a fail-mode body and names its error. */
describe.each([
  ["defaults.onError deny", denyApp, "deny"],
  ["defaults.onError allow", allowApp, "allow"],
] as const)("bad input under %s", (_name, app, mode) => {
  const expectDenied = async (res: Response, code: string) => {
    expect(res.status).toBe(200);
    expect(res.headers.get("x-hookgate-error")).toBe(code);
    expect(res.headers.get("x-hookgate-decision-id")).toBeTruthy();
    const body = await jsonOf(res);
    expect(body.systemMessage).toContain(code);
    expect(body.hookSpecificOutput?.permissionDecision).toBe(mode === "deny" ? "deny" : undefined);
    return body;
  };

  it("truncated JSON, with the event sniffed from what arrived", async () => {
    const body = await expectDenied(await app.post("/v1/hooks", pre.slice(0, -10)), "MALFORMED_JSON");
    expect(body.systemMessage).toMatch(/not valid JSON/);
  });

  it("a wrong content type, with the fix in the message", async () => {
    const body = await expectDenied(
      await app.post("/v1/hooks", pre, { "content-type": "application/x-www-form-urlencoded" }),
      "UNSUPPORTED_CONTENT_TYPE",
    );
    expect(body.systemMessage).toMatch(/Content-Type: application\/json/);
  });

  it("a content type of any length, its audit reason cut at 4,000 characters as every reason is", async () => {
    // A header holds up to 16 KiB, all of it quoted back in the message.
    const sent = `text/plain; x=${"a".repeat(10_000)}`;
    await expectDenied(
      await app.post("/v1/hooks", pre, { "content-type": sent }),
      "UNSUPPORTED_CONTENT_TYPE",
    );
    const reason = app.logs.at(-1)?.reason as string;
    expect(reason.length).toBe(4000 + "…[truncated by hookgate]".length);
    expect(reason).toMatch(/^the hook sent Content-Type "text\/plain; x=a+…\[truncated by hookgate\]$/);
  });

  it("a body over defaults.maxBodyBytes", async () => {
    const big = pre.replace('"ls"', JSON.stringify("x".repeat(10_000)));
    const body = await expectDenied(await app.post("/v1/hooks", big), "BODY_TOO_LARGE");
    expect(body.systemMessage).toMatch(/at most 4096/);
  });

  it("a field of the wrong type", async () => {
    const body = await expectDenied(
      await app.post("/v1/hooks", pre.replace('"Bash"', "42")),
      "EVENT_INVALID",
    );
    expect(body.systemMessage).toMatch(/tool_name must be a string/);
  });

  it("invalid UTF-8", async () => {
    const bytes = new Uint8Array([...new TextEncoder().encode(pre.slice(0, -2)), 0xff, 0xfe, 0x7d, 0x7d]);
    const res = await app.request("/v1/hooks", {
      method: "POST",
      body: bytes,
      headers: { "content-type": "application/json", authorization: "Bearer team-a-token" },
    });
    await expectDenied(res, "BODY_NOT_UTF8");
  });

  it("an unidentifiable body gets the top-level block under deny, nothing under allow", async () => {
    for (const [body, code] of [
      ["[1,2]", "EVENT_NOT_OBJECT"],
      ['{"cwd":"/p"}', "EVENT_NAME_MISSING"],
      ["nonsense", "MALFORMED_JSON"],
    ]) {
      const res = await app.post("/v1/hooks", body as string);
      expect(res.status).toBe(200);
      expect(res.headers.get("x-hookgate-error")).toBe(code);
      const text = await res.text();
      if (mode === "deny")
        expect(JSON.parse(text)).toEqual({
          decision: "block",
          reason: expect.stringContaining(code as string),
        });
      else expect(text).toBe("");
    }
  });

  it("an array of events, or an event encoded twice, is answered in the shape of the event it names", async () => {
    // A JSON string holding the event: an adapter that encodes the body twice.
    for (const body of [`[${pre}]`, JSON.stringify(pre)]) {
      await expectDenied(await app.post("/v1/hooks", body), "EVENT_NOT_OBJECT");
    }
    // A Stop is not blocked (the agent would keep working), nor a PermissionRequest answered with
    // the top-level block Claude Code ignores there.
    const stop = JSON.stringify({
      session_id: "s",
      transcript_path: "/t",
      cwd: "/p",
      hook_event_name: "Stop",
    });
    const stopped = await app.post("/v1/hooks", `[${stop}]`);
    expect(await jsonOf(stopped)).toEqual({ systemMessage: expect.stringContaining("EVENT_NOT_OBJECT") });
    const request = pre.replace('"PreToolUse"', '"PermissionRequest"');
    const asked = await jsonOf(await app.post("/v1/hooks/claude-code", JSON.stringify(request)));
    expect(asked.decision).toBeUndefined();
    expect(asked.hookSpecificOutput?.decision?.behavior).toBe(mode === "deny" ? "deny" : undefined);
  });

  it("an unknown client route answers with the fail mode, in the event's own shape, and the routes to use", async () => {
    const body = await expectDenied(await app.post("/v1/hooks/claude", pre), "UNKNOWN_CLIENT_ROUTE");
    expect(body.systemMessage).toMatch(/use \/v1\/hooks\/claude-code, .*\/v1\/hooks\/deepagents-legacy/);
    // A Stop is not blocked under deny (Claude Code would keep working): the fail mode of an
    // event that cannot be denied is a message.
    const stop = await app.post(
      "/v1/hooks/claude",
      JSON.stringify({ session_id: "s", transcript_path: "/t", cwd: "/p", hook_event_name: "Stop" }),
    );
    expect(stop.headers.get("x-hookgate-error")).toBe("UNKNOWN_CLIENT_ROUTE");
    expect(await jsonOf(stop)).toEqual({ systemMessage: expect.stringContaining("UNKNOWN_CLIENT_ROUTE") });
  });

  it("quotes at most 100 characters of an unknown route, never half an emoji", async () => {
    const route = `${"x".repeat(99)}%F0%9F%98%80tail`;
    const body = await expectDenied(await app.post(`/v1/hooks/${route}`, pre), "UNKNOWN_CLIENT_ROUTE");
    expect(body.systemMessage).toContain(`"/v1/hooks/${"x".repeat(99)}…"`);
  });

  it("masks a token the quote shows once the tokens before it are masked, though it began past 100 characters", async () => {
    // "[masked]" is shorter than a token: the segments after one move forward in the quote, and
    // one read by where it began in the path was shown unchecked.
    const route = `claude-code/${"team-a-token/".repeat(7)}team-b-token`;
    expect(route.indexOf("team-b-token")).toBeGreaterThan(100);
    const body = await expectDenied(await app.post(`/v1/hooks/${route}`, pre), "UNKNOWN_CLIENT_ROUTE");
    expect(body.systemMessage).toContain(`"/v1/hooks/claude-code/${"[masked]/".repeat(7)}[masked]"`);
    expect(JSON.stringify(app.logs)).not.toContain("team-b-token");
  });

  it("masks a token written with an escaped blank around it, as a token is read without them", async () => {
    const body = await expectDenied(
      await app.post("/v1/hooks/claude-code/%20team-a-token%09", pre),
      "UNKNOWN_CLIENT_ROUTE",
    );
    expect(body.systemMessage).toContain('"/v1/hooks/claude-code/[masked]"');
    expect(JSON.stringify(app.logs)).not.toContain("team-a-token");
  });

  it("quotes an unknown route's escapes as every runtime reads them, never cut inside one", async () => {
    const body = await expectDenied(
      await app.post("/v1/hooks/caf%C3%A9%1b%5B2J", pre),
      "UNKNOWN_CLIENT_ROUTE",
    );
    expect(body.systemMessage).toContain('"/v1/hooks/caf%C3%A9%1B%5B2J"');
    const long = await expectDenied(
      await app.post(`/v1/hooks/${"x".repeat(98)}%1Btail`, pre),
      "UNKNOWN_CLIENT_ROUTE",
    );
    expect(long.systemMessage).toContain(`"/v1/hooks/${"x".repeat(98)}…"`);
  });

  it("one trailing slash is the route itself, as are doubled slashes; a deeper path is a mistyped hook path", async () => {
    for (const path of [
      "/v1/hooks/",
      "/v1/hooks/claude-code/",
      "/v1/hooks/claude-code/?x=1",
      "/v1/hooks//",
      "/v1/hooks/claude-code//",
      "//v1//hooks/claude-code",
    ]) {
      const res = await app.post(path, pre);
      expect(res.status, path).toBe(200);
      expect(res.headers.get("x-hookgate-error"), path).toBeNull();
    }
    const deeper = await expectDenied(await app.post("/v1/hooks/a/b/", pre), "UNKNOWN_CLIENT_ROUTE");
    expect(deeper.systemMessage).toContain('"/v1/hooks/a/b"');
    // Other routes name the path without its trailing slash too.
    const wrong = await app.request("/healthz/", { method: "POST" });
    expect(wrong.status).toBe(405);
    expect((await jsonOf(wrong)).error.message).toBe("/healthz answers GET, HEAD, not POST");
    const missing = await app.request("/nowhere/", { method: "GET" });
    expect(missing.status).toBe(404);
    expect((await jsonOf(missing)).error.message).toBe("no route GET /nowhere");
  });

  it("answers every route under a prefix too (a Worker path route, an API mapping key)", async () => {
    for (const path of ["/hookgate/v1/hooks/claude-code", "/a/b/v1/hooks", "/hookgate/v1/hooks/"]) {
      const res = await app.post(path, pre);
      expect(res.status, path).toBe(200);
      expect(res.headers.get("x-hookgate-error"), path).toBeNull();
      expect(res.headers.get("x-hookgate-decision-id"), path).toBeTruthy();
    }
    const denied = await app.post("/hookgate/v1/hooks/claude-code", pre.replace('"ls"', '"rm x"'));
    expect((await jsonOf(denied)).hookSpecificOutput.permissionDecision).toBe("deny");
    const unknown = await expectDenied(
      await app.post("/hookgate/v1/hooks/claude", pre),
      "UNKNOWN_CLIENT_ROUTE",
    );
    expect(unknown.systemMessage).toContain('"/v1/hooks/claude"');
    expect((await app.request("/hookgate/healthz")).status).toBe(200);
    const wrong = await app.request("/hookgate/healthz", { method: "POST" });
    expect(wrong.status).toBe(405);
    expect((await jsonOf(wrong)).error.message).toBe("/hookgate/healthz answers GET, HEAD, not POST");
    const missing = await app.request("/hookgate/nowhere", { method: "GET" });
    expect(missing.status).toBe(404);
    expect((await jsonOf(missing)).error.message).toBe("no route GET /hookgate/nowhere");
  });

  it("names the route a path means whose case alone is wrong, a prefix kept, for a hook and for a person", async () => {
    // `/V1/hooks/deepcode` was answered as any other path: the list of hook URLs, not that this
    // one differs from its route by case alone.
    for (const [path, meant] of [
      ["/V1/hooks/deepcode", "/v1/hooks/deepcode"],
      ["/hookgate/V1/Hooks/Claude-Code/", "/hookgate/v1/hooks/claude-code"],
      ["/v1/HOOKS", "/v1/hooks"],
      ["/V1/simulate", "/v1/simulate"],
    ] as const) {
      const res = await app.post(path, pre);
      expect(res.status).toBe(404);
      const body = await jsonOf(res);
      const said = `no route POST ${path.replace(/\/$/, "")}; paths are case-sensitive: use ${meant}`;
      expect([body.error.code, body.error.message, body.decision, body.reason]).toEqual([
        "NOT_FOUND",
        said,
        "block",
        `hookgate: ${said}`,
      ]);
    }
    const person = await app.request("/Healthz");
    expect([person.status, (await jsonOf(person)).error.message]).toEqual([
      404,
      "no route GET /Healthz; paths are case-sensitive: use /healthz",
    ]);
    // A GET of the hook URL in the wrong case: the route answers POST, and says so once it is right.
    const looked = await app.request("/V1/hooks/claude-code");
    expect((await jsonOf(looked)).error.message).toBe(
      "no route GET /V1/hooks/claude-code; paths are case-sensitive: use /v1/hooks/claude-code",
    );
  });

  it("tells a hook posted to a mistyped URL where the hook routes are, in the reason deepcode shows", async () => {
    const res = await app.post("/v1/hook/deepcode", pre);
    expect(res.status).toBe(404);
    const body = await jsonOf(res);
    expect(body.error.code).toBe("NOT_FOUND");
    const where =
      "hookgate: no route POST /v1/hook/deepcode; hook URLs are /v1/hooks/claude-code, /v1/hooks/deepcode, /v1/hooks/deepagents or /v1/hooks/deepagents-legacy";
    expect(body.reason).toBe(where);
    // deepcode blocks on any non-2xx, and its block says the body's `reason` only beside
    // `decision: "block"`, else `HTTP <status>` (its src/hooks.ts execHttpHook, applyHookJson).
    const deepcodeShows = body.decision === "block" ? body.reason : `HTTP ${res.status}`;
    expect(deepcodeShows).toBe(where);
  });

  it("logs a POST no route takes, which is no decision's audit line: the agent was not judged", async () => {
    // Claude Code lets the action through on a 404, deepcode blocks it: either way the log was
    // silent, and a whole team's mistyped hook URL showed as no traffic at all.
    const before = app.logs.length;
    expect((await app.post(`/v1/hook/${"x".repeat(5000)}`, pre)).status).toBe(404);
    expect((await app.request("/nowhere", { method: "GET" })).status).toBe(404);
    const lines = app.logs.slice(before);
    expect(lines).toEqual([
      {
        level: "warn",
        msg: "a POST to no route answered 404: a hook with a mistyped URL is not judged",
        path: `/v1/hook/${"x".repeat(191)}…`,
      },
    ]);
  });

  it("masks a team's token in the path of a POST no route takes, in the answer and the log line", async () => {
    // A hook URL with a token in its path and a typo before /v1/hooks: the 404's answer and its
    // log line quoted the path whole, the token in the gateway's log.
    const before = app.logs.length;
    const res = await app.post("/v1/hook/claude-code/team-a-token", pre);
    expect(res.status).toBe(404);
    const body = await jsonOf(res);
    expect(body.reason).toContain("no route POST /v1/hook/claude-code/[masked];");
    expect(body.reason).toContain("a token goes in the Authorization header");
    expect(app.logs.slice(before)).toEqual([
      {
        level: "warn",
        msg: "a POST to no route answered 404: a hook with a mistyped URL is not judged",
        path: "/v1/hook/claude-code/[masked]",
      },
    ]);
    expect(JSON.stringify(body)).not.toContain("team-a-token");
  });
});

describe("authentication failures answer with auth.onFailure as a 2xx decision (TV-21)", () => {
  const app = denyApp;
  it.each([
    ["no header", {}, "AUTH_MISSING", /Authorization/],
    ["an empty Bearer", { authorization: "Bearer " }, "AUTH_EMPTY_TOKEN", /allowedEnvVars/],
    ["Bearer with no token", { authorization: "Bearer" }, "AUTH_EMPTY_TOKEN", /allowedEnvVars/],
    ["another scheme", { authorization: "Basic dTpw" }, "AUTH_MALFORMED", /Bearer <token>/],
    ["an unknown token", { authorization: "Bearer guess" }, "AUTH_UNKNOWN_TOKEN", /HOOKGATE_TOKEN/],
  ])("%s denies PreToolUse and says what to fix", async (_name, headers, code, message) => {
    const init: Record<string, string> = { "content-type": "application/json", ...headers };
    const res = await app.request("/v1/hooks", {
      method: "POST",
      body: pre.replace('"ls"', '"rm x"'),
      headers: init,
    });
    expect(res.status).toBe(200);
    expect(res.headers.get("x-hookgate-error")).toBe(code);
    const body = await jsonOf(res);
    expect(body.hookSpecificOutput).toMatchObject({
      hookEventName: "PreToolUse",
      permissionDecision: "deny",
    });
    expect(body.systemMessage).toMatch(message);
  });

  // deepagents runs hookgate init's curl command and strips *TOKEN* variables from its environment
  // (clients.md §8): the fix names HOOKGATE_AUTH and the curl header, never allowedEnvVars.
  it.each([
    ["no header", {}, "AUTH_MISSING", /curl command needs -H "Authorization: Bearer \$HOOKGATE_AUTH"/],
    ["an empty Bearer", { authorization: "Bearer " }, "AUTH_EMPTY_TOKEN", /export HOOKGATE_AUTH/],
    ["an unknown token", { authorization: "Bearer guess" }, "AUTH_UNKNOWN_TOKEN", /check HOOKGATE_AUTH/],
  ])(
    "%s on the deepagents route says what a deepagents user fixes",
    async (_name, headers, code, message) => {
      const res = await app.request("/v1/hooks/deepagents", {
        method: "POST",
        body: pre.replace('"ls"', '"rm x"'),
        headers: { "content-type": "application/json", ...headers },
      });
      expect(res.status).toBe(200);
      expect(res.headers.get("x-hookgate-error")).toBe(code);
      const body = await jsonOf(res);
      expect(body.hookSpecificOutput).toMatchObject({ permissionDecision: "deny" });
      expect(body.systemMessage).toMatch(message);
      expect(body.systemMessage).not.toMatch(/allowedEnvVars|check HOOKGATE_TOKEN/);
    },
  );

  // `hookgate send` (a command hook) names itself: it has no header or curl option to add, only
  // a variable to export. The Hono app is every runtime's (Workers, Lambda).
  it.each([
    ["/v1/hooks/claude-code", {}, /export HOOKGATE_TOKEN=<your team's token> in the shell that starts/],
    ["/v1/hooks/claude-code", { authorization: "Bearer guess" }, /check HOOKGATE_TOKEN \(or HOOKGATE_AUTH/],
    ["/v1/hooks/deepagents", {}, /export HOOKGATE_AUTH=<your team's token> in the shell that starts/],
  ])("%s %o from hookgate send says what its user fixes", async (route, headers, message) => {
    const res = await app.request(route, {
      method: "POST",
      body: pre.replace('"ls"', '"rm x"'),
      headers: { "content-type": "application/json", "user-agent": "hookgate-send", ...headers },
    });
    const body = await jsonOf(res);
    expect(body.systemMessage).toMatch(message);
    expect(body.systemMessage).not.toMatch(/allowedEnvVars|"headers"|curl/);
  });

  it("answers a Notification with no decision and the systemMessage only", async () => {
    const res = await app.request("/v1/hooks", {
      method: "POST",
      body: JSON.stringify({
        session_id: "s",
        transcript_path: "/t",
        cwd: "/p",
        hook_event_name: "Notification",
        message: "m",
        notification_type: "idle_prompt",
      }),
      headers: { "content-type": "application/json", authorization: "Bearer " },
    });
    expect(await jsonOf(res)).toEqual({ systemMessage: expect.stringMatching(/empty Bearer token/) });
  });

  it("never lets a failed token reach the rules", async () => {
    const res = await app.request("/v1/hooks", {
      method: "POST",
      body: pre.replace('"ls"', '"ls"'),
      headers: { "content-type": "application/json", authorization: "Bearer guess" },
    });
    expect((await jsonOf(res)).hookSpecificOutput.permissionDecision).toBe("deny");
    expect(app.logs.at(-1)).toMatchObject({ error: "AUTH_UNKNOWN_TOKEN", team: undefined, rules: [] });
  });
});

// Before, a v2 body on the legacy route was judged as v2 once it parsed, but a
// request error was answered in the legacy dialect, an empty body that lets the tool call run,
// while the audit line said "deny".
describe("a deepagents v2 hook given the legacy URL, on a request error", () => {
  const v2 = JSON.stringify({
    session_id: "s",
    cwd: "/p",
    hook_event_name: "PreToolUse",
    tool_name: "Bash",
    tool_input: { command: "rm -rf /" },
  });
  it.each([
    ["BODY_TOO_LARGE", v2.replace('"rm -rf /"', JSON.stringify("x".repeat(10_000))), undefined],
    ["MALFORMED_JSON", v2.slice(0, -5), undefined],
    ["EVENT_INVALID", v2.replace('{"command":"rm -rf /"}', '"rm -rf /"'), undefined],
    ["UNSUPPORTED_CONTENT_TYPE", v2, "text/plain"],
  ])("is denied as on the deepagents route (%s)", async (code, body, contentType) => {
    const headers = contentType ? { "content-type": contentType } : {};
    const res = await denyApp.post("/v1/hooks/deepagents-legacy", body, headers);
    expect(res.headers.get("x-hookgate-error")).toBe(code);
    expect((await jsonOf(res)).hookSpecificOutput?.permissionDecision).toBe("deny");
    expect(denyApp.logs.at(-1)).toMatchObject({ client: "deepagents", decision: "deny", error: code });
  });

  it("while a legacy body's error gets the legacy answer, and the audit line says nothing was blocked", async () => {
    const res = await denyApp.post("/v1/hooks/deepagents-legacy", '{"event": "tool.use", "tool_name": 42');
    expect(res.headers.get("x-hookgate-error")).toBe("MALFORMED_JSON");
    expect(await res.text()).toBe("");
    expect(denyApp.logs.at(-1)).toMatchObject({ client: "deepagents-legacy", decision: "none" });
  });
});

describe("headers a hook's own settings double or leave unexpanded", () => {
  it("reads a Content-Type sent twice, joined, as the JSON it is", async () => {
    const res = await denyApp.post(
      "/v1/hooks/deepcode",
      JSON.stringify({
        session_id: "s",
        cwd: "/p",
        hook_event_name: "PreToolUse",
        tool_name: "Bash",
        tool_input: { command: "rm -rf /" },
      }),
      { "content-type": "application/json, application/json" },
    );
    expect(res.headers.get("x-hookgate-error")).toBeNull();
    expect(denyApp.logs.at(-1)).toMatchObject({ decision: "deny", rules: ["no-rm"] });
    const mixed = await denyApp.post("/v1/hooks", pre, { "content-type": "application/json, text/plain" });
    expect(mixed.headers.get("x-hookgate-error")).toBe("UNSUPPORTED_CONTENT_TYPE");
  });

  it("says a token that is a variable's name was not expanded", async () => {
    for (const token of ["$hookgate_token", "${HOOKGATE_TOKEN}"]) {
      const res = await denyApp.post("/v1/hooks", pre, { authorization: `Bearer ${token}` });
      expect(res.headers.get("x-hookgate-error")).toBe("AUTH_UNKNOWN_TOKEN");
      expect((await jsonOf(res)).systemMessage).toContain("a variable's name its client did not expand");
    }
  });
});

describe("a token with slashes in an unknown route's path", () => {
  it("is masked whole, written raw or with its slashes as %2F, as base64 tokens have them", async () => {
    // `openssl rand -base64 32` gives a slash or more about one time in two: its segments one by
    // one are no token, and the route was quoted whole, in the answer and the audit line.
    const token = "Zm9v/YmFy+YmF6/cXV4=";
    const app = await testApp({
      version: 1,
      auth: { tokens: [{ team: "a", sha256: await sha256(token) }] },
      rules: [],
    });
    for (const written of [token, token.replaceAll("/", "%2F")]) {
      const res = await app.post(`/v1/hooks/claude-code/${written}/x`, pre);
      expect(res.headers.get("x-hookgate-error")).toBe("UNKNOWN_CLIENT_ROUTE");
      const body = await jsonOf(res);
      expect(body.systemMessage).toContain('"/v1/hooks/claude-code/[masked]/x"');
      expect(body.systemMessage).toContain("Authorization header");
    }
    expect(JSON.stringify(app.logs)).not.toMatch(/Zm9v|YmFy|cXV4/);
  });
});

describe("a base64 token in the path of a POST no route takes", () => {
  it("is masked whole when it starts or ends with a slash or holds two in a row", async () => {
    // `openssl rand -base64 32` starts with "/" one time in 64 and holds "//" about one in 100: the
    // route's reading makes doubled slashes one and drops a trailing one, and no run was the token.
    for (const token of ["/Zm9vYmFyYmF6cXV4", "Zm9v//YmFyYmF6cXV4", "Zm9vYmFyYmF6cXV4/"]) {
      const app = await testApp({
        version: 1,
        auth: { tokens: [{ team: "a", sha256: await sha256(token) }] },
        rules: [],
      });
      const res = await app.post(`/v1/hook/claude-code/${token}`, pre);
      expect(res.status).toBe(404);
      const body = await jsonOf(res);
      expect(body.reason).toContain("Authorization header");
      expect(JSON.stringify(body)).not.toMatch(/Zm9v|YmFy|cXV4/);
      expect(JSON.stringify(app.logs)).not.toMatch(/Zm9v|YmFy|cXV4/);
    }
  });
});

describe("a base64 token in an unknown route's path", () => {
  it("is masked whole when it starts or ends with a slash or holds two in a row", async () => {
    // The route's reading makes doubled slashes one and drops a trailing one: no run of the
    // segments was the token, and the answer and the audit line quoted it with a slash less.
    for (const token of ["/Zm9vYmFyYmF6cXV4", "Zm9v//YmFyYmF6cXV4", "Zm9vYmFyYmF6cXV4/"]) {
      const app = await testApp({
        version: 1,
        auth: { tokens: [{ team: "a", sha256: await sha256(token) }] },
        rules: [],
      });
      const res = await app.post(`/v1/hooks/claude-code/${token}`, pre);
      expect(res.status).toBe(200);
      expect(res.headers.get("x-hookgate-error")).toBe("UNKNOWN_CLIENT_ROUTE");
      const body = await jsonOf(res);
      expect(body.systemMessage).toContain('"/v1/hooks/claude-code/[masked]');
      expect(body.systemMessage).toContain("Authorization header");
      expect(JSON.stringify(body)).not.toMatch(/Zm9v|YmFy|cXV4/);
      expect(JSON.stringify(app.logs)).not.toMatch(/Zm9v|YmFy|cXV4/);
    }
  });
});

describe("a base64 token with six slashes or more in a path", () => {
  // `openssl rand -base64 32` gives six slashes or more about once in 20,000: runs of segments
  // were looked at up to six segments long, and such a token was quoted whole, in the answer and
  // the log line, with any `//` or `/./` around it too.
  const token = "Zm9v/YmFy/YmF6/cXV4/cXV5/cXV6/cXV7";
  it.each([
    ["an unknown route", `/v1/hooks/claude-code/${token}`, 200],
    ["an unknown route, after //", `/v1/hooks/claude-code//${token}//x`, 200],
    ["an unknown route, after /./", `/v1/hooks/claude-code/./${token}/./x`, 200],
    ["an unknown route, after six other segments", `/v1/hooks/a/b/c/d/e/f/${token}`, 200],
    ["a POST no route takes", `/v1/hook/claude-code/${token}`, 404],
    ["a POST no route takes, after //", `/v1/hook//claude-code//${token}//x`, 404],
    ["a POST no route takes, after /./", `/v1/hook/./claude-code/./${token}`, 404],
  ])("is masked whole on %s", async (_name, path, status) => {
    const app = await testApp({
      version: 1,
      auth: { tokens: [{ team: "a", sha256: await sha256(token) }] },
      rules: [],
    });
    const res = await app.post(path, pre);
    expect(res.status).toBe(status);
    const body = JSON.stringify(await jsonOf(res));
    expect(body).toContain("[masked]");
    expect(body).toContain("Authorization header");
    expect(body).not.toMatch(/Zm9v|YmFy|cXV/);
    expect(JSON.stringify(app.logs)).not.toMatch(/Zm9v|YmFy|cXV/);
  });
});

describe("tokensMasked on a path of many one-character segments", () => {
  it("looks at a bounded number of runs, not some 60 per segment the quote shows", async () => {
    // Runs bounded by their length alone cost a caller with no token over 6,000 hashes here.
    const policy = (await testApp(await authPolicy([]))).policy;
    let hashes = 0;
    const counted = async (text: string) => {
      hashes++;
      return sha256(text);
    };
    const { text, masked } = await tokensMasked(`${"/a".repeat(8000)}/${TOKEN}`, 200, policy, counted);
    expect(masked).toBe(false);
    expect(text).toContain(TOKEN); // far past the quote: never looked at, and cut off by the caller
    // Each of the 101 segments the quote shows alone and in runs of up to six, and 1,000 longer runs.
    expect(hashes).toBeLessThanOrEqual(1_000 + 101 * 6);
    // A token right after a few segments is still found.
    expect((await tokensMasked(`/v1/hook/x/${TOKEN}`, 200, policy, counted)).text).toBe(
      "/v1/hook/x/[masked]",
    );
  });
});

describe("a base64 token with a slash after many short segments in a path", () => {
  // Runs of segments were looked at from each segment until 1,000 had been looked at in the path;
  // from a one-character segment some 60 each, so a token's run after twenty such was never
  // looked at, and was quoted whole, where six segments from each were always looked at before.
  const token = "Zm9vYmFyYmF6cXV4/cXV5cXV6cXV7";
  it.each([
    ["an unknown route", `/v1/hooks/claude-code/${"a/".repeat(20)}${token}/${"b/".repeat(60)}`, 200],
    ["a POST no route takes", `/v1/hook/${"a/".repeat(20)}${token}/${"b/".repeat(60)}`, 404],
  ])("is masked whole on %s", async (_name, path, status) => {
    const app = await testApp({
      version: 1,
      auth: { tokens: [{ team: "a", sha256: await sha256(token) }] },
      rules: [],
    });
    const res = await app.post(path, pre);
    expect(res.status).toBe(status);
    const body = JSON.stringify(await jsonOf(res));
    expect(body).toContain("[masked]");
    expect(body).not.toMatch(/Zm9v|cXV5/);
    expect(JSON.stringify(app.logs)).not.toMatch(/Zm9v|cXV5/);
  });
});

describe("a base64 token of seven segments after enough short segments to spend the run budget", () => {
  // Runs of more than six segments were looked at from each segment in turn, each from its
  // shortest, until 1,000 had been: the longer runs from twenty one-character segments before
  // the token spent them all, and it was quoted whole. They are now looked at shortest first
  // across every segment the quote shows.
  const token = "Zm9v/YmFy/YmF6/cXV4/cXV5/cXV6/cXV7";
  const path = `/v1/hook/${"a/".repeat(20)}${token}/${"b/".repeat(60)}`;

  const policy = async () => ({
    version: 1,
    auth: { tokens: [{ team: "a", sha256: await sha256(token) }] },
    rules: [],
  });

  it("is masked in a 404's answer and log line", async () => {
    const app = await testApp(await policy());
    const res = await app.post(path, pre);
    expect(res.status).toBe(404);
    const body = JSON.stringify(await jsonOf(res));
    expect(body).toContain(`/v1/hook/${"a/".repeat(20)}[masked]/b/`);
    expect(body + JSON.stringify(app.logs)).not.toMatch(/Zm9v|YmFy|cXV/);
  });

  it("costs no more hashes than the budget and six runs from each segment the quote shows", async () => {
    const compiled = (await testApp(await policy())).policy;
    let hashes = 0;
    const counted = async (text: string) => {
      hashes++;
      return sha256(text);
    };
    const { text, masked } = await tokensMasked(path, 200, compiled, counted);
    expect(masked).toBe(true);
    expect(text).toBe(`/v1/hook/${"a/".repeat(20)}[masked]/${"b/".repeat(60)}`);
    // Some 100 segments the quote shows: once each and in runs of up to six, then longer runs.
    expect(hashes).toBeLessThanOrEqual(1_000 + 101 * 6);
  });
});

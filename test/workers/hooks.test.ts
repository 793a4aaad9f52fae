/**
 * The Worker answering hooks inside workerd: the shared decision table byte for byte as the
 * Node app answers it (test/runtime/decisions-node.test.ts holds Node to the same table), a
 * Claude Code request through the deployed `fetch` (SELF), and the fail-closed answer when the
 * policy does not load.
 */
import { createExecutionContext, env, SELF, waitOnExecutionContext } from "cloudflare:test";
import { afterEach, describe, expect, it, vi } from "vitest";
import worker, { type WorkerEnv } from "../../src/entry/workers.js";
import table from "../fixtures/decisions.json" with { type: "json" };
import type { DecisionCase } from "../support/decision-case.js";

const cases = (table as { cases: DecisionCase[] }).cases;
const PRE_TOOL_USE = cases[0]?.request.body ?? "";

/** Calls the Worker's own `fetch` export with a changed env, as Cloudflare would after a secret change. */
async function callWorker(request: Request, changes: Partial<Record<string, unknown>>): Promise<Response> {
  const ctx = createExecutionContext();
  const res = await worker.fetch(request, { ...env, ...changes } as WorkerEnv, ctx);
  await waitOnExecutionContext(ctx);
  return res;
}

interface HookAnswer {
  systemMessage?: string;
  hookSpecificOutput: { hookEventName: string; permissionDecision?: string };
}
const answerOf = async (res: Response) => (await res.json()) as HookAnswer;

afterEach(() => {
  vi.restoreAllMocks();
});

describe("the decision table inside workerd", () => {
  it("has the table the Node test checks", () => {
    expect(cases.length).toBeGreaterThanOrEqual(8);
  });

  it.each(cases)("$name", async (c) => {
    const request = new Request(`https://hookgate.test${c.request.path}`, {
      method: c.request.method,
      headers: c.request.headers,
      body:
        c.request.bodyBase64 === undefined
          ? c.request.body
          : Uint8Array.from(atob(c.request.bodyBase64), (ch) => ch.charCodeAt(0)),
    });
    const res = await callWorker(request, { HOOKGATE_POLICY: JSON.stringify(c.policy) });
    const body = await res.text();
    expect({
      status: res.status,
      contentType: res.headers.get("content-type"),
      body,
      policy: res.headers.get("x-hookgate-policy"),
      error: res.headers.get("x-hookgate-error"),
    }).toEqual(c.expected);
  });
});

describe("the deployed fetch handler", () => {
  it("denies a Claude Code PreToolUse by the policy secret, with no trailing slash or redirect needed", async () => {
    const res = await SELF.fetch("https://hookgate.test/v1/hooks", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: PRE_TOOL_USE,
      redirect: "manual",
    });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({
      hookSpecificOutput: {
        hookEventName: "PreToolUse",
        permissionDecision: "deny",
        permissionDecisionReason: "echo is not allowed here",
      },
    });
    expect(res.headers.get("x-hookgate-decision-id")).toMatch(/^[0-9a-f-]{36}$/);
  });

  it("answers a hook on a path route (`example.com/hookgate/*`), prefix and all", async () => {
    const res = await SELF.fetch("https://hookgate.test/hookgate/v1/hooks/claude-code", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: PRE_TOOL_USE,
    });
    expect(res.status).toBe(200);
    expect((await answerOf(res)).hookSpecificOutput.permissionDecision).toBe("deny");
    expect((await SELF.fetch("https://hookgate.test/hookgate/healthz")).status).toBe(200);
  });

  it("reloads when the policy text changes", async () => {
    const allow = JSON.stringify({
      version: 1,
      rules: [
        {
          id: "ok",
          on: "PreToolUse",
          if: "Bash(echo * > /home/dev/proj/ran.txt)",
          decide: "allow",
          reason: "fine",
        },
      ],
    });
    const request = () =>
      new Request("https://hookgate.test/v1/hooks", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: PRE_TOOL_USE,
      });
    const first = await answerOf(await callWorker(request(), { HOOKGATE_POLICY: allow }));
    expect(first.hookSpecificOutput.permissionDecision).toBe("allow");
    const second = await answerOf(await callWorker(request(), {}));
    expect(second.hookSpecificOutput.permissionDecision).toBe("deny");
  });
});

describe("a policy that does not load", () => {
  const hook = () =>
    new Request("https://hookgate.test/v1/hooks/claude-code", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: PRE_TOOL_USE,
    });

  it.each([
    ["invalid JSON", "{ not json", "HOOKGATE_POLICY is invalid"],
    ["a schema error", JSON.stringify({ version: 2, rules: [] }), "HOOKGATE_POLICY is invalid"],
    // The secret takes the JSON itself; "Unexpected token '.'" did not say so.
    [
      "a file's path",
      "./policy.json",
      "HOOKGATE_POLICY holds what looks like a file's path, but takes the policy's JSON itself (jq -c . policy.json | wrangler secret put HOOKGATE_POLICY)",
    ],
    ["no policy at all", undefined, "HOOKGATE_POLICY is not set"],
    // The first 20 of 500 problems quoted, the rest counted: each answer quoted them all.
    [
      "500 problems",
      JSON.stringify({
        version: 1,
        rules: Array.from({ length: 500 }, (_, i) => ({ id: `r${i}`, on: "PreToolUse", decide: "maybe" })),
      }),
      '$.rules[19].decide: must be one of "allow", "deny", "ask", "defer", "block"; and 480 more (hookgate check on the policy lists them all)',
    ],
    // A [vars] table reaches the Worker as an object: said so, not "not set" as it was.
    [
      "a [vars] table",
      { version: 1, rules: [] },
      "HOOKGATE_POLICY is bound as something other than text (a [vars] table, a KV namespace?)",
    ],
  ])(
    "with %s: hooks get a 2xx fail-closed deny, /healthz a 500, and one log line",
    async (_, text, problem) => {
      const errors = vi.spyOn(console, "error").mockImplementation(() => {});
      const changes = { HOOKGATE_POLICY: text };
      const first = await callWorker(hook(), changes);
      const second = await callWorker(hook(), changes);
      for (const res of [first, second]) {
        expect(res.status).toBe(200);
        expect(res.headers.get("x-hookgate-error")).toBe("CONFIG_INVALID");
        const body = await answerOf(res);
        expect(body.hookSpecificOutput).toMatchObject({
          hookEventName: "PreToolUse",
          permissionDecision: "deny",
        });
        expect(body.systemMessage).toContain(problem);
      }
      const health = await callWorker(new Request("https://hookgate.test/healthz"), changes);
      expect(health.status).toBe(500);
      expect(((await health.json()) as { error: { code: string; message: string } }).error).toMatchObject({
        code: "CONFIG_INVALID",
        message: expect.stringContaining(problem),
      });
      const logged = errors.mock.calls.filter(([line]) => String(line).includes("configuration invalid"));
      expect(logged).toHaveLength(1);
    },
  );
});

describe("a policy whose token variables are not set as the Worker's secrets", () => {
  const policy = JSON.stringify({
    version: 1,
    rules: [],
    auth: { tokens: [{ team: "platform", env: "PLATFORM_TEAM_ID" }] },
  });

  it("tells every hook the gateway has no token to check, not to check its own, and the log how to set it", async () => {
    const lines: string[] = [];
    vi.spyOn(console, "warn").mockImplementation((line: string) => lines.push(line));
    const res = await callWorker(
      new Request("https://hookgate.test/v1/hooks/claude-code", {
        method: "POST",
        headers: { "content-type": "application/json", authorization: "Bearer a-teams-token" },
        body: PRE_TOOL_USE,
      }),
      { HOOKGATE_POLICY: policy },
    );
    expect(res.status).toBe(200);
    expect(res.headers.get("x-hookgate-error")).toBe("AUTH_UNKNOWN_TOKEN");
    const body = await answerOf(res);
    expect(body.hookSpecificOutput.permissionDecision).toBe("deny");
    // It said "check HOOKGATE_TOKEN", sending every user to a token that may well be right.
    expect(body.systemMessage).toContain("the gateway has no token to check it against");
    expect(body.systemMessage).not.toContain("check HOOKGATE_TOKEN");
    expect(lines.map((line) => JSON.parse(line) as Record<string, unknown>)).toContainEqual(
      expect.objectContaining({
        msg: "policy warning",
        path: "$.auth.tokens[0].env",
        fix: "set it with `wrangler secret put PLATFORM_TEAM_ID`",
      }),
    );
  });
});

import { describe, expect, it, vi } from "vitest";
import { type HookRequest, handleHook } from "../../src/app/handle-hook.js";
import { createRemoteActions } from "../../src/app/remote-actions.js";
import type { Dialect } from "../../src/core/hook-event.js";
import type { Policy } from "../../src/core/policy.js";
import { runHookRoute } from "../../src/http/hook-route.js";
import { policyFrom, sha256 } from "../support/policy.js";

const policy = await policyFrom({
  version: 1,
  defaults: { onError: "allow" },
  rules: [
    {
      id: "judge",
      on: "PreToolUse",
      matcher: "Write",
      prompt: { text: "ok? $ARGUMENTS", model: "m", onError: "deny" },
    },
    { id: "relay", on: "PreToolUse", matcher: "Edit", forward: { url: "https://policy.example/hook" } },
  ],
  models: { m: { provider: "anthropic", model: "claude-haiku-4-5", apiKey: "env:K" } },
});

const logs: Record<string, unknown>[] = [];
const deps = {
  policy: () => policy,
  clock: { now: () => 0, monotonic: () => 0 },
  newId: () => "id-1",
  sha256,
  logger: {
    log: (_l: string, msg: string, fields?: Record<string, unknown>) => logs.push({ msg, ...fields }),
  },
};
const request = (tool: string, toolInput: Record<string, unknown> = { file_path: "/p/a" }): HookRequest =>
  requestOn("PreToolUse", tool, toolInput);
function requestOn(event: string, tool: string, toolInput: Record<string, unknown>): HookRequest {
  return {
    body: {
      ok: true,
      text: JSON.stringify({
        session_id: "s",
        transcript_path: "/t",
        cwd: "/p",
        hook_event_name: event,
        tool_name: tool,
        tool_input: toolInput,
      }),
    },
    contentType: "application/json",
    authorization: undefined,
    dialect: undefined,
  };
}

describe("handleHook without remote actions", () => {
  it("reports prompt and forward rules as not run, adding nothing to the answer", async () => {
    const outcome = await handleHook(deps, request("Write"));
    expect(outcome.answer.body).toBe("");
    expect(outcome.audit.pending).toEqual([
      expect.objectContaining({ rule: "judge", action: "prompt", outcome: "NOT_RUN" }),
    ]);
    const edit = await handleHook(deps, request("Edit"));
    expect(edit.audit).toMatchObject({
      decision: "none",
      rules: ["relay"],
      pending: [expect.objectContaining({ rule: "relay", outcome: "NOT_RUN" })],
    });
  });

  it("writes no audit line when asked not to (simulate)", async () => {
    const before = logs.length;
    await handleHook(deps, request("Edit"), { audit: false });
    expect(logs.length).toBe(before);
  });

  it("turns an unexpected failure into the fail-mode answer and an INTERNAL_ERROR", async () => {
    const broken = {
      ...deps,
      policy: () => ({
        ...policy,
        rulesFor: () => {
          throw new Error("boom");
        },
        candidates: () => {
          throw new Error("boom");
        },
      }),
    };
    const outcome = await handleHook(broken, request("Write"));
    expect(outcome.error?.code).toBe("INTERNAL_ERROR");
    expect(outcome.answer.status).toBe(200);
    expect(
      logs.some((l) => l.msg === "internal error on the decision path" && l.error === "Error: boom"),
    ).toBe(true);
  });
});

describe("an internal error after the event was read", () => {
  const failing = {
    ...deps,
    policy: () => ({
      ...policy,
      defaults: { ...policy.defaults, onError: "deny" as const },
      rulesFor: () => {
        throw new Error("boom");
      },
      candidates: () => {
        throw new Error("boom");
      },
    }),
  };
  const eventRequest = (event: Record<string, unknown>): HookRequest => ({
    body: { ok: true, text: JSON.stringify({ session_id: "s", transcript_path: "/t", cwd: "/p", ...event }) },
    contentType: "application/json",
    authorization: undefined,
    dialect: "claude-code",
  });

  it("is answered for that event under onError deny: no block that would keep a Stop going", async () => {
    const stop = await handleHook(
      failing,
      eventRequest({ hook_event_name: "Stop", stop_hook_active: false }),
    );
    expect(stop.error?.code).toBe("INTERNAL_ERROR");
    expect(stop.audit.event).toBe("Stop");
    expect(JSON.parse(stop.answer.body)).toEqual({
      systemMessage: expect.stringContaining("[INTERNAL_ERROR]"),
    });
    const prompt = await handleHook(
      failing,
      eventRequest({ hook_event_name: "UserPromptSubmit", prompt: "hi" }),
    );
    expect(JSON.parse(prompt.answer.body)).toEqual({
      systemMessage: expect.stringContaining("[INTERNAL_ERROR]"),
    });
    const pre = await handleHook(failing, request("Write"));
    expect(JSON.parse(pre.answer.body).hookSpecificOutput).toMatchObject({
      hookEventName: "PreToolUse",
      permissionDecision: "deny",
    });
  });
});

describe("the audit line and the replay record", () => {
  it("never show the start of a policy secret that a 2,000-character cut falls inside", async () => {
    const secret = "hgk_9f8e7d6c5b4a39281706";
    const withSecret = await policyFrom(
      {
        version: 1,
        rules: [{ id: "judge", on: "PreToolUse", matcher: "Write", prompt: { text: "ok?", model: "m" } }],
        models: { m: { provider: "anthropic", model: "claude-haiku-4-5", apiKey: "env:KEY" } },
      },
      { KEY: secret },
    );
    expect(withSecret.secrets).toContain(secret);
    const records: unknown[] = [];
    const lines: Record<string, unknown>[] = [];
    const command = `${"x".repeat(1988)} echo ${secret}`;
    await handleHook(
      {
        ...deps,
        policy: () => withSecret,
        logger: { log: (_l, msg, fields) => lines.push({ msg, ...fields }) },
        recorder: (record) => records.push(record),
      },
      request("Bash", { command }),
    );
    const out = JSON.stringify([lines, records]);
    // The command is in both (cut at 2,000 characters), but not the first characters of the key
    // the cut would have fallen inside: it was scrubbed first.
    expect(lines.some((l) => l.msg === "decision")).toBe(true);
    expect(records).toHaveLength(1);
    expect(out.split("x".repeat(1988)).length).toBe(3);
    expect(out).not.toContain("hgk_9f");
  });

  /** The one audit line an event of this body writes, as the logger would write it. */
  const auditLineOf = async (body: Record<string, unknown>): Promise<string> => {
    const lines: string[] = [];
    await handleHook(
      { ...deps, logger: { log: (_l, msg, fields) => lines.push(JSON.stringify({ msg, ...fields })) } },
      {
        body: { ok: true, text: JSON.stringify(body) },
        contentType: "application/json",
        authorization: undefined,
        dialect: undefined,
      },
    );
    expect(lines).toHaveLength(1);
    return lines[0] ?? "";
  };
  const preToolUse = { session_id: "s", transcript_path: "/t", cwd: "/p", hook_event_name: "PreToolUse" };

  it("keeps a huge tool input's line near 32 KiB, and says where it was cut", async () => {
    // Within the default 1 MiB body: an MCP call with an array of numbers, no string to cut.
    const numbers = await auditLineOf({
      ...preToolUse,
      tool_name: "mcp__metrics__push",
      tool_input: { points: Array.from({ length: 150_000 }, (_, i) => i) },
    });
    expect(numbers.length).toBeLessThan(40_000);
    const cut = JSON.parse(numbers);
    expect(cut).toMatchObject({ msg: "decision", tool: "mcp__metrics__push", decision: "none" });
    expect(cut.toolInput.truncated).toMatch(/^\{"points":\[0,1,2,3,.*…\[truncated by hookgate\]$/);
    // Many long strings: each is cut shorter, and the input keeps its shape.
    const strings = await auditLineOf({
      ...preToolUse,
      tool_name: "MultiEdit",
      tool_input: {
        file_path: "/p/a.ts",
        edits: Array.from({ length: 200 }, () => ({
          old_string: "o".repeat(2500),
          new_string: "n".repeat(2500),
        })),
      },
    });
    expect(strings.length).toBeLessThan(40_000);
    const shaped = JSON.parse(strings).toolInput;
    expect(shaped.file_path).toBe("/p/a.ts");
    expect(shaped.edits).toHaveLength(200);
    expect(shaped.edits[0].old_string).toMatch(/^o+…\[truncated by hookgate\]$/);
    // A key of any length is no string masking cuts.
    const key = await auditLineOf({
      ...preToolUse,
      tool_name: "mcp__x__y",
      tool_input: { ["k".repeat(500_000)]: 1 },
    });
    expect(key.length).toBeLessThan(40_000);
    expect(JSON.parse(key).toolInput.truncated).toMatch(/…\[truncated by hookgate\]$/);
  });

  it("cuts an event name, tool name or session id of any length an agent sends", async () => {
    const line = await auditLineOf({
      ...preToolUse,
      hook_event_name: "E".repeat(300_000),
      session_id: "S".repeat(300_000),
      tool_name: "T".repeat(300_000),
      tool_input: { command: "ls" },
    });
    expect(line.length).toBeLessThan(2_000);
    const audit = JSON.parse(line);
    expect(audit.event).toMatch(/^E{256}…\[truncated by hookgate\]$/);
    expect(audit.tool).toMatch(/^T{256}…\[truncated by hookgate\]$/);
    expect(audit.sessionId).toMatch(/^S{256}…\[truncated by hookgate\]$/);
    expect(audit.toolInput).toEqual({ command: "ls" });
  });

  it("masks a credential in an event name, tool name or session id, as a sink's message does", async () => {
    const token = "ghp_A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8";
    const line = await auditLineOf({
      ...preToolUse,
      hook_event_name: `Custom ${token}`,
      session_id: `s-${token}`,
      tool_name: `mcp__gh-${token}__run`,
      tool_input: { command: "ls" },
    });
    const audit = JSON.parse(line);
    expect([audit.event, audit.sessionId, audit.tool]).toEqual([
      "Custom [masked]",
      "s-[masked]",
      "mcp__gh-[masked]__run",
    ]);
  });
});

describe("handleHook calls the notifier only for an event with notify work", () => {
  const called: string[] = [];
  const recording = async (document: unknown) => {
    const notifyPolicy = await policyFrom(document);
    return {
      ...deps,
      policy: () => notifyPolicy,
      notifier: { notify: (input: { event: { name: string } }) => void called.push(input.event.name) },
    };
  };
  const send = (body: Record<string, unknown>, dialect?: HookRequest["dialect"]): HookRequest => ({
    body: { ok: true, text: JSON.stringify(body) },
    contentType: "application/json",
    authorization: undefined,
    dialect,
  });
  const pre = { session_id: "s", transcript_path: "/t", cwd: "/p", hook_event_name: "PreToolUse" };
  const sinks = { audit: { type: "webhook", url: "https://hooks.example.com/audit" } };

  it("remembers a PreToolUse with a session and a tool when a rule notifies on Notification, and no other event", async () => {
    called.length = 0;
    const remembering = await recording({
      version: 1,
      rules: [{ id: "prompts", on: "Notification", notify: ["audit"] }],
      sinks,
    });
    await handleHook(remembering, send({ ...pre, tool_name: "Bash", tool_input: { command: "ls" } }));
    await handleHook(remembering, send({ ...pre, hook_event_name: "Stop" }));
    await handleHook(remembering, send({ ...pre, hook_event_name: "UserPromptSubmit", prompt: "hi" }));
    await handleHook(remembering, send({ ...pre, hook_event_name: "Notification", message: "m" }));
    expect(called).toEqual(["PreToolUse", "Notification"]);
  });

  // A shadow rule's notify is never sent (evaluate.ts), so nothing it would enrich needs
  // remembering: on a Worker each remembered call is a KV write.
  it("remembers no PreToolUse when the only rule notifying on Notification is in shadow", async () => {
    called.length = 0;
    const shadowed = await recording({
      version: 1,
      rules: [{ id: "prompts", on: "Notification", mode: "shadow", notify: ["audit"] }],
      sinks,
    });
    await handleHook(shadowed, send({ ...pre, tool_name: "Bash", tool_input: { command: "ls" } }));
    await handleHook(shadowed, send({ ...pre, hook_event_name: "Notification", message: "m" }));
    expect(called).toEqual([]);
  });

  it("keeps deepagents legacy tool halves only when a rule notifies on tool.use or tool.result", async () => {
    const use = { event: "tool.use", tool_name: "ls", tool_id: "c1", tool_args: {} };
    called.length = 0;
    const silent = await recording({ version: 1, rules: [{ id: "x", on: "Stop", decide: "block" }] });
    await handleHook(silent, send(use, "deepagents-legacy"));
    expect(called).toEqual([]);
    const onResult = await recording({
      version: 1,
      rules: [{ id: "results", on: "tool.result", notify: ["audit"] }],
      sinks,
    });
    await handleHook(onResult, send(use, "deepagents-legacy"));
    await handleHook(onResult, send({ event: "tool.error", tool_names: ["ls"] }, "deepagents-legacy"));
    expect(called).toEqual(["tool.use"]);
  });
});

describe("the daily budget across midnight UTC", () => {
  it("gives a call never sent back to the day it was spent on, not to the day it failed on", async () => {
    const budgeted = await policyFrom(
      {
        version: 1,
        rules: [
          { id: "judge", on: "PreToolUse", prompt: { text: "ok? $ARGUMENTS", model: "m", onError: "deny" } },
        ],
        models: {
          m: { provider: "anthropic", model: "claude-haiku-4-5", apiKey: "env:K", dailyCallsPerTeam: 1 },
        },
      },
      { K: "k" },
    );
    const clock = { t: Date.UTC(2026, 11, 3, 23, 59, 59, 900) };
    const pending: ((failed: boolean) => void)[] = [];
    let sentCalls = 0;
    const answer = () => {
      sentCalls++;
      const verdict = { type: "tool_use", id: "t", name: "verdict", input: { ok: true, reason: "fine" } };
      return {
        ok: true as const,
        value: {
          status: 200,
          headers: {},
          body: JSON.stringify({ content: [verdict], stop_reason: "tool_use" }),
        },
      };
    };
    const remote = createRemoteActions({
      // The first two calls wait until the test settles them: a failure before sending (DNS), or
      // an answer. Any later one is answered at once.
      egress: async () => {
        if (pending.length === 2) return answer();
        return new Promise((resolve) =>
          pending.push((failed) =>
            resolve(
              failed
                ? { ok: false, error: { code: "EGRESS_DNS_FAILED", stage: "dns", reason: "no such host" } }
                : answer(),
            ),
          ),
        );
      },
      env: () => "k",
      clock: { now: () => clock.t, monotonic: () => 0 },
      sha256,
    });
    const call = (command: string) =>
      remote.run({
        rules: budgeted.rules,
        event: {
          name: "PreToolUse",
          dialect: "claude-code",
          known: true,
          payload: { hook_event_name: "PreToolUse", tool_name: "Bash", tool_input: { command } },
        },
        body: "{}",
        bodyChars: 2,
        team: "default",
        policy: budgeted,
        deadlineMs: 60_000,
      });
    const beforeMidnight = call("a");
    await vi.waitFor(() => expect(pending).toHaveLength(1));
    clock.t += 200; // Past midnight: a new day, with its one call.
    const afterMidnight = call("b");
    await vi.waitFor(() => expect(pending).toHaveLength(2));
    pending[0]?.(true); // The first day's call fails before it is sent: that day's call is given back.
    expect((await beforeMidnight).audit).toEqual([expect.objectContaining({ outcome: "EGRESS_DNS_FAILED" })]);
    pending[1]?.(false);
    expect((await afterMidnight).audit).toEqual([expect.objectContaining({ outcome: "OK" })]);
    // The new day's one call is spent: a third is refused without calling the model.
    const third = await call("c");
    expect(third.audit).toEqual([expect.objectContaining({ outcome: "JUDGE_BUDGET_SPENT" })]);
    expect(sentCalls).toBe(1);
  });
});

describe("handleHook tells the notifier what the client does with the decision", () => {
  it("passes clientDecision none for a deepcode block it acts on none of, and nothing where the client acts", async () => {
    const inputs: { decision: string; clientDecision?: string | undefined }[] = [];
    const blocking = await policyFrom({
      version: 1,
      rules: [{ id: "no-config", on: "ConfigChange", decide: "block", reason: "no", notify: ["audit"] }],
      sinks: { audit: { type: "webhook", url: "https://hooks.example.com/audit" } },
    });
    const notifying = {
      ...deps,
      policy: () => blocking,
      notifier: { notify: (input: (typeof inputs)[number]) => void inputs.push(input) },
    };
    const change = { session_id: "s", transcript_path: "/t", cwd: "/p", hook_event_name: "ConfigChange" };
    for (const dialect of ["deepcode", "claude-code"] as const) {
      await handleHook(notifying, {
        body: { ok: true, text: JSON.stringify({ ...change, source: "user_settings" }) },
        contentType: "application/json",
        authorization: undefined,
        dialect,
      });
    }
    expect(inputs.map((i) => [i.decision, i.clientDecision])).toEqual([
      ["block", "none"],
      ["block", undefined],
    ]);
  });
});

describe("an allow a client cannot be given whole", () => {
  const rewrite = async (content: string, dialect: Dialect = "deepagents") => {
    const rewriting = await policyFrom({
      version: 1,
      rules: [
        {
          id: "rewrite",
          on: "PreToolUse",
          matcher: "Write",
          decide: "allow",
          updatedInput: { file_path: "/p/a", content },
        },
      ],
    });
    const lines: Record<string, unknown>[] = [];
    const outcome = await handleHook(
      {
        ...deps,
        policy: () => rewriting,
        logger: {
          log: (_l: string, msg: string, fields?: Record<string, unknown>) => lines.push({ msg, ...fields }),
        },
      },
      { ...request("Write"), dialect },
    );
    return {
      out: JSON.parse(outcome.answer.body).hookSpecificOutput,
      audit: lines.find((l) => l.msg === "decision"),
    };
  };

  it("is a deny saying why when its rewritten input alone is over the 100,000 bytes deepagents reads", async () => {
    // Cut, the JSON would not parse, deepagents would drop the answer and run the unrewritten call.
    const { out, audit } = await rewrite("x".repeat(120_000));
    expect(out.permissionDecision).toBe("deny");
    expect(out.updatedInput).toBeUndefined();
    expect(out.permissionDecisionReason).toMatch(
      /rewritten input \(\d+ bytes of answer\) is over the 100000 deepagents reads; denied/,
    );
    expect(audit).toMatchObject({ decision: "deny", rules: ["rewrite"] });
  });

  it("is a deny saying why on every client when its rewritten input alone is over the 900,000 bytes an answer may take", async () => {
    // Counted as a Lambda returns it, the body a JSON string: 500,000 quotes are 2,000,000 bytes
    // there, past the 1 MB an AWS load balancer passes on (a 502, and Claude Code runs the call).
    for (const content of ["x".repeat(950_000), '"'.repeat(500_000)]) {
      const { out, audit } = await rewrite(content, "claude-code");
      expect(out.permissionDecision).toBe("deny");
      expect(out.updatedInput).toBeUndefined();
      expect(out.permissionDecisionReason).toMatch(
        /rewritten input \(\d+ bytes of answer\) is over the 900000 bytes an answer may take .*; denied/,
      );
      expect(audit).toMatchObject({ decision: "deny", rules: ["rewrite"] });
    }
    const { out } = await rewrite("x".repeat(850_000), "claude-code");
    expect(out.updatedInput.content).toHaveLength(850_000);
  });

  it("is kept, rewritten input and all, when it fits", async () => {
    const { out, audit } = await rewrite("x".repeat(90_000));
    expect(out.permissionDecision).toBe("allow");
    expect(out.updatedInput.content).toHaveLength(90_000);
    expect(audit).toMatchObject({ decision: "allow" });
  });
});

describe("the remote calls' deadline", () => {
  // x-hookgate-timeout 3 s: the request's deadline is 3000 - 250 ms, counted from its arrival.
  const clocked = (at: { t: number }) => ({ ...deps, clock: { now: () => 0, monotonic: () => at.t } });
  const timed = (tool: string, receivedAt?: number): HookRequest => ({
    ...request(tool),
    timeoutHeader: "3",
    ...(receivedAt !== undefined && { receivedAt }),
  });
  /** Remote actions that run nothing and note the deadline each run is given. */
  const notingDeadlines = () => {
    const seen: number[] = [];
    const remote = {
      run: async (input: { deadlineMs: number }) => {
        seen.push(input.deadlineMs);
        return { effects: [], audit: [] };
      },
    };
    return { seen, remote };
  };

  it("is what is left of the request's deadline since it arrived", async () => {
    const at = { t: 1000 };
    const { seen, remote } = notingDeadlines();
    await handleHook({ ...clocked(at), remote }, timed("Write", 0));
    expect(seen).toEqual([1750]);
  });

  it("runs from before the body is read on a hook route", async () => {
    const at = { t: 0 };
    const { seen, remote } = notingDeadlines();
    const body = request("Write").body;
    await runHookRoute({ ...clocked(at), remote }, "claude-code", {
      readBody: async () => {
        at.t += 2000; // a large body, slowly read
        return body as { ok: true; text: string };
      },
      contentType: "application/json",
      authorization: undefined,
      timeoutHeader: "3",
    });
    expect(seen).toEqual([750]);
  });

  it("applies onError at once, calling no model, when no time is left", async () => {
    const at = { t: 2900 };
    const calls: unknown[] = [];
    const remote = createRemoteActions({
      egress: async (r) => {
        calls.push(r);
        return new Promise(() => {});
      },
      env: () => "sk-k",
      clock: { now: () => 0, monotonic: () => at.t },
      sha256,
    });
    const outcome = await handleHook({ ...clocked(at), remote }, timed("Write", 0));
    expect(calls).toEqual([]);
    expect(JSON.parse(outcome.answer.body).hookSpecificOutput).toMatchObject({ permissionDecision: "deny" });
    expect(outcome.audit.pending).toEqual([
      expect.objectContaining({ rule: "judge", outcome: "JUDGE_TIMEOUT", onError: "deny" }),
    ]);
  });

  /** An Anthropic model's answer that denies (the verdict the judges below give). */
  const DENY_RM_BODY = JSON.stringify({
    content: [{ type: "tool_use", id: "t", name: "verdict", input: { ok: false, reason: "rm" } }],
    stop_reason: "tool_use",
  });
  // A judge that denies every call, and the URLs it was called at.
  const denyingJudge = () => {
    const urls: string[] = [];
    const remote = createRemoteActions({
      egress: async (r) => {
        urls.push(r.url);
        return { ok: true, value: { status: 200, headers: {}, body: DENY_RM_BODY } };
      },
      env: () => "k",
      clock: { now: () => 0, monotonic: () => 0 },
      sha256,
    });
    return { remote, urls };
  };
  /**
   * As denyingJudge, on the real clock, but its first call never ends, not even when aborted: as
   * on Workers when the runtime stops the request (past its CPU limit, or 30 s after its client
   * hung up, src/entry/workers.ts), none of whose code runs again.
   */
  const judgeWhoseFirstCallNeverEnds = () => {
    const urls: string[] = [];
    const remote = createRemoteActions({
      egress: async (r) => {
        urls.push(r.url);
        if (urls.length === 1) return new Promise(() => {});
        return { ok: true, value: { status: 200, headers: {}, body: DENY_RM_BODY } };
      },
      env: () => "k",
      clock: { now: () => Date.now(), monotonic: () => performance.now() },
      sha256,
    });
    return { remote, urls };
  };
  /** A policy whose one rule has model `m` (with `model`'s settings) judge every PreToolUse. */
  const judgeEveryPreToolUse = (model: Record<string, unknown> = {}) =>
    policyFrom(
      {
        version: 1,
        rules: [{ id: "judge", on: "PreToolUse", prompt: { text: "Deny rm. $ARGUMENTS", model: "m" } }],
        models: { m: { provider: "anthropic", model: "claude-haiku-4-5", apiKey: "env:K", ...model } },
      },
      { K: "k" },
    );
  const rmRfInput = (policy: Policy, deadlineMs: number) => ({
    rules: policy.rules,
    event: {
      name: "PreToolUse",
      dialect: "claude-code",
      known: true,
      payload: { hook_event_name: "PreToolUse", tool_name: "Bash", tool_input: { command: "rm -rf /" } },
    } as const,
    body: "{}",
    bodyChars: 2,
    team: "default",
    policy,
    deadlineMs,
  });

  it("still answers from the verdict cache when no time is left", async () => {
    // Before, with no time left a cached deny became JUDGE_TIMEOUT, then onError.
    const policy = await policyFrom(
      {
        version: 1,
        rules: [
          {
            id: "judge",
            on: "PreToolUse",
            matcher: "Bash",
            prompt: { text: "Deny rm. $ARGUMENTS", model: "m", onError: "allow" },
          },
        ],
        models: {
          m: { provider: "anthropic", model: "claude-haiku-4-5", apiKey: "env:K", cacheTtlSeconds: 300 },
        },
      },
      { K: "k" },
    );
    const { remote, urls } = denyingJudge();
    expect((await remote.run(rmRfInput(policy, 5000))).effects).toEqual([
      expect.objectContaining({ decision: "deny" }),
    ]);
    const late = await remote.run(rmRfInput(policy, 0));
    expect(late.effects).toEqual([expect.objectContaining({ decision: "deny" })]);
    expect(late.audit).toEqual([expect.objectContaining({ outcome: "CACHE_HIT" })]);
    expect(urls).toHaveLength(1);
  });

  it("calls for an identical event itself once the call it waits on is past its deadline and never ended", async () => {
    // The call in flight never says it ended.
    const policy = await judgeEveryPreToolUse();
    const { remote, urls } = judgeWhoseFirstCallNeverEnds();
    const first = await remote.run(rmRfInput(policy, 100));
    expect(first.audit).toEqual([expect.objectContaining({ outcome: "JUDGE_TIMEOUT" })]);
    const second = await remote.run(rmRfInput(policy, 5000));
    expect(second.audit).toEqual([expect.objectContaining({ outcome: "OK" })]);
    expect(second.effects).toEqual([expect.objectContaining({ decision: "deny" })]);
    expect(urls).toHaveLength(2);
  });

  it("takes back the slot of a call that never ended once it is past its deadline, so the next call is made", async () => {
    // As above, with one call at a time: the stopped call's slot was taken for good, and every
    // later call waited out its deadline for it (a Worker's isolate lives for hours).
    const policy = await judgeEveryPreToolUse({ maxConcurrent: 1 });
    const { remote, urls } = judgeWhoseFirstCallNeverEnds();
    const first = await remote.run(rmRfInput(policy, 100));
    expect(first.audit).toEqual([expect.objectContaining({ outcome: "JUDGE_TIMEOUT" })]);
    const second = await remote.run(rmRfInput(policy, 10_000));
    expect(second.audit).toEqual([expect.objectContaining({ outcome: "OK" })]);
    expect(urls).toHaveLength(2);
  });

  it("leaves no timer behind in an identical event that got the verdict of the call it waited on", async () => {
    // The wait's own timer ran on to the call's deadline: `serve`, stopped, did not exit until it
    // fired (up to the deadline, 600 s on Claude Code's default hook timeout).
    vi.useFakeTimers();
    try {
      const policy = await judgeEveryPreToolUse();
      let answer: (() => void) | undefined;
      let calls = 0;
      const remote = createRemoteActions({
        egress: async () => {
          calls++;
          await new Promise<void>((resolve) => (answer = resolve));
          return { ok: true, value: { status: 200, headers: {}, body: DENY_RM_BODY } };
        },
        env: () => "k",
        clock: { now: () => 0, monotonic: () => 0 },
        sha256,
      });
      const first = remote.run(rmRfInput(policy, 60_000));
      for (let i = 0; i < 100 && !answer; i++) await Promise.resolve();
      const second = remote.run(rmRfInput(policy, 60_000));
      for (let i = 0; i < 100; i++) await Promise.resolve();
      answer?.();
      expect((await first).audit).toEqual([expect.objectContaining({ outcome: "OK" })]);
      expect((await second).audit).toEqual([
        expect.objectContaining({
          outcome: "CACHE_HIT",
          detail: "the verdict of an identical call that was in flight",
        }),
      ]);
      expect(calls).toBe(1);
      expect(vi.getTimerCount()).toBe(0);
    } finally {
      vi.useRealTimers();
    }
  });

  it("answers no cached verdict for a model whose env: url is unset: it calls nowhere", async () => {
    // Keyed as a model with no url, it was answered the public endpoint's verdicts, cached
    // under a policy before a reload.
    const before = await judgeEveryPreToolUse();
    const after = await judgeEveryPreToolUse({ url: "env:JUDGE_URL" });
    const { remote, urls } = denyingJudge();
    expect((await remote.run(rmRfInput(before, 5000))).audit).toEqual([
      expect.objectContaining({ outcome: "OK" }),
    ]);
    const unset = await remote.run(rmRfInput(after, 5000));
    expect(unset.audit).toEqual([expect.objectContaining({ outcome: "JUDGE_NO_URL" })]);
    expect(urls).toEqual(["https://api.anthropic.com/v1/messages"]);
  });
});

describe("a team server's rewrite and the notify rules", () => {
  /**
   * What the notifier is told, and the audit, of `command` sent by `dialect` under `rules` beside
   * a team server (rule "relay") that allows it rewritten into `rm -rf build`, on `event`.
   */
  async function toldOfRewrite(
    rules: readonly Record<string, unknown>[],
    command: string,
    dialect: Dialect,
    event = "PreToolUse",
  ) {
    const notifying = await policyFrom({
      version: 1,
      rules: [
        {
          id: "relay",
          on: ["PreToolUse", "PermissionRequest"],
          matcher: "Bash",
          forward: { url: "https://policy.example/hook" },
        },
        ...rules,
      ],
      sinks: { security: { type: "webhook", url: "https://hooks.example.com/security" } },
    });
    const inputs: { event: { toolInput?: unknown }; notify: readonly { ruleId: string }[] }[] = [];
    const outcome = await handleHook(
      {
        ...deps,
        policy: () => notifying,
        remote: {
          run: async () => ({
            effects: [{ ruleId: "relay", decision: "allow", updatedInput: { command: "rm -rf build" } }],
            audit: [{ rule: "relay", action: "forward", outcome: "OK", ms: 0 }],
          }),
        },
        notifier: { notify: (input: (typeof inputs)[number]) => void inputs.push(input) },
      },
      { ...requestOn(event, "Bash", { command }), dialect },
    );
    return {
      audit: outcome.audit,
      told: inputs.map((i) => [i.notify.map((n) => n.ruleId), i.event.toolInput]),
    };
  }

  it("notifies the rules the call that runs applies to, with the input it runs with", async () => {
    // `ls` rewritten into `rm -rf build` ran, and the security sink whose rule reads `rm` commands
    // never heard of it: notify rules were chosen by the call as the agent sent it.
    const { audit, told } = await toldOfRewrite(
      [{ id: "tell-security", on: "PreToolUse", if: "Bash(rm *)", notify: ["security"] }],
      "ls",
      "claude-code",
    );
    expect(audit).toMatchObject({ decision: "allow", notify: ["security"] });
    expect(told).toEqual([[["tell-security"], { command: "rm -rf build" }]]);
  });

  it("tells a PreToolUse rule of a PermissionRequest's rewrite, the call that runs, though it heard of the call as it came", async () => {
    // Claude Code sends PreToolUse, then PermissionRequest, for one call: a PreToolUse rule that
    // read `rm -f a` was told of it then, and is told of `rm -rf build` when the grant rewrites it
    // into a call it reads too. Two messages for one tool call, but told only of the first, its
    // sink would never learn what ran (nor hear of it at all where PreToolUse never reached the
    // gateway). A rule the rewrite does not apply to hears nothing more.
    const rules = [
      { id: "tell-rm", on: "PreToolUse", if: "Bash(rm *)", notify: ["security"] },
      { id: "tell-recursive", on: "PreToolUse", if: "Bash(rm -rf *)", notify: ["security"] },
      { id: "tell-force", on: "PreToolUse", if: "Bash(rm -f *)", notify: ["security"] },
    ];
    const { audit, told } = await toldOfRewrite(rules, "rm -f a", "claude-code", "PermissionRequest");
    // The audit names a sink once per rule that told it (README, Notifications).
    expect(audit).toMatchObject({ decision: "allow", notify: ["security", "security"] });
    expect(told).toEqual([[["tell-rm", "tell-recursive"], { command: "rm -rf build" }]]);
  });

  it("notifies the call as it came where the client drops the rewrite (deepagents)", async () => {
    // deepagents drops an allow's updatedInput, and the allow with it: the call that runs, if its
    // own permission flow lets it, is `ls`, and a sink told `rm -rf build` heard of a call that never ran.
    const rules = [
      { id: "tell-ls", on: "PreToolUse", if: "Bash(ls *)", notify: ["security"] },
      { id: "tell-rm", on: "PreToolUse", if: "Bash(rm *)", notify: ["security"] },
    ];
    expect((await toldOfRewrite(rules, "ls -la", "claude-code")).told).toEqual([
      [["tell-ls", "tell-rm"], { command: "rm -rf build" }],
    ]);
    const dropped = await toldOfRewrite(rules, "ls -la", "deepagents");
    expect(dropped.audit).toMatchObject({ decision: "allow", clientDecision: "none", notify: ["security"] });
    expect(dropped.told).toEqual([[["tell-ls"], { command: "ls -la" }]]);
  });
});

describe("a team server's allow that echoes the call as it came", () => {
  /** The audit of `ls` on `event` from `dialect`, allowed by a team server that echoes the input. */
  async function echoed(event: string, dialect: Dialect) {
    const echoing = await policyFrom({
      version: 1,
      rules: [
        {
          id: "relay",
          on: ["PreToolUse", "PermissionRequest"],
          matcher: "Bash",
          forward: { url: "https://policy.example/hook" },
        },
      ],
    });
    const sent = request("Bash", { command: "ls" });
    const body = { ...JSON.parse(sent.body.ok ? sent.body.text : "{}"), hook_event_name: event };
    const outcome = await handleHook(
      {
        ...deps,
        policy: () => echoing,
        remote: {
          run: async () => ({
            effects: [{ ruleId: "relay", decision: "allow", updatedInput: { command: "ls" } }],
            audit: [{ rule: "relay", action: "forward", outcome: "OK", ms: 0 }],
          }),
        },
      },
      { ...sent, body: { ok: true, text: JSON.stringify(body) }, dialect },
    );
    return outcome.audit;
  }

  // An echo is no rewrite: deepcode denied it on PermissionRequest (a rewrite it cannot apply),
  // deepagents dropped the allow with it, and every audit line said the call was rewritten.
  it.each([
    ["PreToolUse", "claude-code"],
    ["PermissionRequest", "claude-code"],
    ["PreToolUse", "deepcode"],
    ["PermissionRequest", "deepcode"],
    ["PreToolUse", "deepagents"],
    ["PermissionRequest", "deepagents"],
  ] as const)("is the allow it says on %s from %s, audited without updatedInput", async (event, dialect) => {
    const audit = await echoed(event, dialect);
    expect(audit).toMatchObject({ decision: "allow", rules: ["relay"] });
    expect(audit.clientDecision).toBeUndefined();
    expect(audit.updatedInput).toBeUndefined();
  });

  it("leaves a later rule's rewrite the first one in rule order", async () => {
    // The echo rewrites nothing, so it does not take the place of the rewrite that follows it:
    // taken as the first rewrite and then dropped, it ran the call unredacted.
    const redacting = await policyFrom({
      version: 1,
      rules: [
        { id: "relay", on: "PreToolUse", matcher: "Write", forward: { url: "https://policy.example/hook" } },
        {
          id: "redact-env",
          on: "PreToolUse",
          matcher: "Write",
          where: { "tool_input.file_path": { glob: "**/.env" } },
          decide: "allow",
          updatedInput: { file_path: "/p/.env.example", content: "X" },
        },
      ],
    });
    const outcome = await handleHook(
      {
        ...deps,
        policy: () => redacting,
        remote: {
          run: async () => ({
            effects: [
              { ruleId: "relay", decision: "allow", updatedInput: { content: "X", file_path: "/p/.env" } },
            ],
            audit: [{ rule: "relay", action: "forward", outcome: "OK", ms: 0 }],
          }),
        },
      },
      request("Write", { file_path: "/p/.env", content: "X" }),
    );
    expect(outcome.audit).toMatchObject({
      decision: "allow",
      updatedInput: { file_path: "/p/.env.example", content: "X" },
    });
    expect(JSON.parse(outcome.answer.body).hookSpecificOutput.updatedInput).toEqual({
      file_path: "/p/.env.example",
      content: "X",
    });
  });
});

describe("a team server's rewrite on a client that drops it (deepagents)", () => {
  /** The audit of `git status` on `event` from `dialect`, allowed rewritten into `command`. */
  async function rewrittenInto(command: string, event: string, dialect: Dialect) {
    const guarded = await policyFrom({
      version: 1,
      rules: [
        {
          id: "no-force-push",
          on: "PreToolUse",
          where: { "tool_input.command": { regex: "^git push\\b.*--force" } },
          decide: "deny",
          reason: "Force pushes are never allowed",
        },
        {
          id: "judge-pushes",
          on: "PreToolUse",
          where: { "tool_input.command": { startsWith: "git push" } },
          prompt: { text: "Is this push safe? $ARGUMENTS", model: "m", onError: "deny" },
        },
        {
          id: "relay",
          on: ["PreToolUse", "PermissionRequest"],
          matcher: "Bash",
          forward: { url: "https://policy.example/hook" },
        },
      ],
      models: { m: { provider: "anthropic", model: "claude-haiku-4-5", apiKey: "env:K" } },
    });
    const sent = request("Bash", { command: "git status" });
    const body = { ...JSON.parse(sent.body.ok ? sent.body.text : "{}"), hook_event_name: event };
    const outcome = await handleHook(
      {
        ...deps,
        policy: () => guarded,
        remote: {
          run: async () => ({
            effects: [{ ruleId: "relay", decision: "allow", updatedInput: { command } }],
            audit: [{ rule: "relay", action: "forward", outcome: "OK", ms: 0 }],
          }),
        },
      },
      { ...sent, body: { ok: true, text: JSON.stringify(body) }, dialect },
    );
    return outcome.audit;
  }

  // deepagents drops the allow with its rewrite, and its own permission flow judges `git status`,
  // the call the rules judged: a deny named a rule about a call that never runs there.
  it.each([
    ["git push origin main", "PreToolUse"],
    ["git push origin main", "PermissionRequest"],
    ["git push --force origin main", "PreToolUse"],
    ["git push --force origin main", "PermissionRequest"],
  ])(
    "leaves `git status` rewritten into `%s` on %s to deepagents' own permission flow",
    async (command, event) => {
      expect(await rewrittenInto(command, event, "deepagents")).toMatchObject({
        decision: "allow",
        clientDecision: "none",
        updatedInput: { command },
      });
      // A client that runs the rewrite is not sent it.
      expect(await rewrittenInto(command, event, "claude-code")).toMatchObject({ decision: "deny" });
    },
  );
});

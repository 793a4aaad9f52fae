/**
 * What a real `hookgate serve` lets hooks waiting on a prompt rule hold: 64 MiB of their bodies
 * (read-body.ts WAITING_BODY_BUDGET_BYTES, which node.ts gives the remote actions). A loopback
 * model holds every answer until the test releases it, so the hooks that fit wait on it, and one
 * past the budget is answered at once with its rule's onError; `/metrics` shows the budget full
 * and the hooks it refused.
 */
import { writeFileSync } from "node:fs";
import { type ClientRequest, request, type ServerResponse } from "node:http";
import { connect } from "node:net";
import { join } from "node:path";
import parsePrometheusTextFormat from "parse-prometheus-text-format";
import { afterEach, describe, expect, it } from "vitest";
import {
  BODY_BUDGET_BYTES,
  SHADOW_WAITING_BODY_BUDGET_BYTES,
  UNAUTHENTICATED_BODY_BUDGET_BYTES,
  WAITING_BODY_BUDGET_BYTES,
} from "../../src/http/read-body.js";
import { type LoopbackServer, loopbackServer } from "../support/loopback.js";
import { startServerProcess } from "../support/process.js";
import { tempDir } from "../support/temp.js";

const TOKEN = "hgt_waiting_budget_test_token_0123456789";
/** Each hook's body, in bytes: within the default maxBodyBytes (1 MiB), all ASCII. */
const BODY_BYTES = 1_000_000;
/** The hooks whose bodies fit the budget together (the first always does). */
const FIT = Math.floor(WAITING_BODY_BUDGET_BYTES / BODY_BYTES);
const COUNT = FIT + 3;
/** Hooks sent and neither seen by the model nor answered yet, at most: their bodies still arrive. */
const IN_FLIGHT = 4;

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** A model speaking Anthropic's Messages API that holds every answer until `release`. */
async function holdingModel(): Promise<LoopbackServer & { release(): void }> {
  const held: ServerResponse[] = [];
  const server = await loopbackServer((_req, res) => held.push(res));
  cleanups.push(() => server.close());
  return {
    ...server,
    release() {
      for (const res of held.splice(0)) {
        res.writeHead(200, { "content-type": "application/json" });
        res.end(
          JSON.stringify({
            id: "msg_test",
            type: "message",
            role: "assistant",
            model: "claude-haiku-4-5",
            content: [
              {
                type: "tool_use",
                id: "t",
                name: "verdict",
                input: { ok: false, reason: "the model says no" },
              },
            ],
            stop_reason: "tool_use",
            stop_sequence: null,
            usage: { input_tokens: 10, output_tokens: 10 },
          }),
        );
      }
    },
  };
}

/** A Write of a file `i`, padded to `bytes`: bodies of one length, events all different. */
function write(i: number, bytes = BODY_BYTES): string {
  const event = (content: string) =>
    JSON.stringify({
      session_id: "s",
      transcript_path: "/t",
      cwd: "/p",
      hook_event_name: "PreToolUse",
      tool_name: "Write",
      tool_input: { file_path: `/p/file-${String(i).padStart(4, "0")}`, content },
    });
  const body = event("x".repeat(bytes - event("").length));
  expect(body.length).toBe(bytes);
  return body;
}

async function until(check: () => boolean, what: string, timeoutMs = 30_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** Each budget's sample of `name` in serve's `/metrics`, by its `budget` label. */
async function budgets(url: string, name: string): Promise<Record<string, number>> {
  const families = parsePrometheusTextFormat(await (await fetch(`${url}/metrics`)).text());
  const samples = families.find((f) => f.name === name)?.metrics ?? [];
  return Object.fromEntries(samples.map((m) => [m.labels?.budget, Number(m.value)]));
}

/**
 * A serve in a new folder `name` whose one rule judges each Write through `model`, letting
 * `maxConcurrent` calls out at once, with a deadline far longer than the test (no hook is answered
 * by its deadline while the model holds); stopped after the test.
 */
async function judgingServe(
  model: LoopbackServer,
  name: string,
  maxConcurrent: number,
  defaults: Record<string, unknown> = {},
) {
  const policyPath = join(tempDir(name), "policy.json");
  writeFileSync(
    policyPath,
    JSON.stringify({
      version: 1,
      auth: { tokens: [{ team: "a", env: "HOOKGATE_TOKEN_A" }] },
      defaults: { deadlineMs: 300_000, ...defaults },
      egress: { allowCidrs: ["127.0.0.1/32"] },
      models: {
        judge: {
          provider: "anthropic",
          model: "claude-haiku-4-5",
          url: `${model.url}/v1/messages`,
          apiKey: "env:ANTHROPIC_KEY",
          cacheTtlSeconds: 0,
          maxConcurrent,
        },
      },
      rules: [
        {
          id: "review-writes",
          on: "PreToolUse",
          matcher: "Write",
          prompt: { text: "Is this write safe? $ARGUMENTS", model: "judge", onError: "ask" },
        },
      ],
    }),
  );
  const server = await startServerProcess(policyPath, {
    HOOKGATE_TOKEN_A: TOKEN,
    ANTHROPIC_KEY: "sk-ant-test",
  });
  cleanups.push(() => server.stop());
  return server;
}

describe("serve's budget for hooks waiting on prompt rules", () => {
  it("answers a hook past 64 MiB of waiting bodies at once with its rule's onError, and the rest with the model's verdict", async () => {
    const model = await holdingModel();
    // Every waiting hook's call goes out, so the model sees each one the budget let in.
    const server = await judgingServe(model, "waiting-budget", COUNT);

    let answered = 0;
    let released = false;
    const post = async (i: number) => {
      const res = await fetch(`${server.url}/v1/hooks/claude-code`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${TOKEN}` },
        body: write(i),
      });
      const answer = {
        status: res.status,
        error: res.headers.get("x-hookgate-error"),
        decisionId: String(res.headers.get("x-hookgate-decision-id")),
        // biome-ignore lint/suspicious/noExplicitAny: the decision body as Claude Code reads it.
        body: JSON.parse(await res.text()) as any,
        beforeRelease: !released,
      };
      answered++;
      return answer;
    };
    const answers: ReturnType<typeof post>[] = [];
    for (let i = 0; i < COUNT; i++) {
      await until(() => i - model.received.length - answered < IN_FLIGHT, `room to send hook ${i}`);
      answers.push(post(i));
    }
    // Each hook either reached the model (its body taken in the budget) or was answered.
    await until(
      () => model.received.length + answered === COUNT,
      "every hook to reach the model or be answered",
    );
    // Before, serve gave the remote actions no budget: all of them waited on the model.
    expect(model.received.length).toBe(FIT);
    expect(answered).toBe(COUNT - FIT);
    // An operator sees the budget full and the hooks it refused, apart from real timeouts; the
    // budgets of bodies still arriving, and of hooks waiting on shadow rules alone, hold nothing
    // and refused none.
    expect(await budgets(server.url, "hookgate_body_budget_bytes")).toEqual({
      arriving: 0,
      unauthenticated: 0,
      waiting: FIT * BODY_BYTES,
      shadow: 0,
    });
    expect(await budgets(server.url, "hookgate_body_budget_limit_bytes")).toEqual({
      arriving: BODY_BUDGET_BYTES,
      unauthenticated: UNAUTHENTICATED_BODY_BUDGET_BYTES,
      waiting: WAITING_BODY_BUDGET_BYTES,
      shadow: SHADOW_WAITING_BODY_BUDGET_BYTES,
    });
    expect(await budgets(server.url, "hookgate_body_budget_refused_total")).toEqual({
      arriving: 0,
      unauthenticated: 0,
      waiting: COUNT - FIT,
      shadow: 0,
    });

    model.release();
    released = true;
    const all = await Promise.all(answers);
    const refused = all.filter((a) => a.beforeRelease);
    const judged = all.filter((a) => !a.beforeRelease);
    expect(refused).toHaveLength(COUNT - FIT);
    expect(judged).toHaveLength(FIT);
    for (const a of refused) {
      // A rule's onError is a decision, never a request error: no x-hookgate-error.
      expect([a.status, a.error, a.body.hookSpecificOutput.permissionDecision]).toEqual([200, null, "ask"]);
      expect(a.body.hookSpecificOutput.permissionDecisionReason).toMatch(
        /^hookgate: rule "review-writes" could not be evaluated \(JUDGE_TIMEOUT: not called: the gateway holds as many bytes of other hooks waiting on prompt and forward rules as it may/,
      );
      const audit = await server.waitForLine((l) => l.msg === "decision" && l.decisionId === a.decisionId);
      expect(audit.pending).toEqual([
        expect.objectContaining({
          rule: "review-writes",
          outcome: "JUDGE_TIMEOUT",
          onError: "ask",
          model: "judge",
          detail: expect.stringMatching(
            /^not called: the gateway holds as many bytes of other hooks waiting on prompt and forward rules as it may/,
          ),
        }),
      ]);
    }
    for (const a of judged) {
      expect([a.status, a.error, a.body.hookSpecificOutput.permissionDecision]).toEqual([200, null, "deny"]);
      expect(a.body.hookSpecificOutput.permissionDecisionReason).toContain("the model says no");
    }
    // What they held given back with their answers: the next hook is called again.
    const after = post(COUNT);
    await until(() => model.received.length === FIT + 1, "the next hook's model call");
    model.release();
    expect((await after).body.hookSpecificOutput.permissionDecision).toBe("deny");
    // Answered, the hooks hold nothing.
    expect((await budgets(server.url, "hookgate_body_budget_bytes")).waiting).toBe(0);
  });
});

describe("serve's waiting budget when a hook's client hangs up", () => {
  it("gives back a hook's share at once, gives up its calls not yet at the model, and lets the one at the model run on", async () => {
    // Four 16 MB hooks fill the budget (a fifth would not fit); the model takes one call at a time.
    const big = 16_000_000;
    const fit = Math.floor(WAITING_BODY_BUDGET_BYTES / big);
    expect(fit).toBe(4);
    const model = await holdingModel();
    const server = await judgingServe(model, "waiting-budget-hangup", 1, { maxBodyBytes: 16 * 1024 * 1024 });

    /** A hook sent on a connection of its own, which the test can close before the answer. */
    const send = (i: number): ClientRequest => {
      const req = request(`${server.url}/v1/hooks/claude-code`, {
        method: "POST",
        agent: false,
        headers: { "content-type": "application/json", authorization: `Bearer ${TOKEN}` },
      });
      // A hook hung up fails with ECONNRESET here, as its agent's would.
      req.on("error", () => {});
      req.end(write(i, big));
      return req;
    };
    /** Until the waiting budget holds `bytes`, as `/metrics` says. */
    const holding = async (bytes: number, what: string) => {
      const end = Date.now() + 30_000;
      while ((await budgets(server.url, "hookgate_body_budget_bytes")).waiting !== bytes) {
        if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
        await new Promise((r) => setTimeout(r, 20));
      }
    };
    const decisions = () => server.lines.filter((l) => l.msg === "decision");

    // Hook 0's call is at the model; hooks 1 to 3 wait for its one concurrency slot.
    const hooks = [send(0)];
    await until(() => model.received.length === 1, "hook 0's model call");
    for (let i = 1; i < fit; i++) hooks.push(send(i));
    await holding(fit * big, "every hook in the waiting budget");

    // The agents hang up: the budget holds nothing of theirs, before the model answers.
    for (const req of hooks) req.destroy();
    await holding(0, "the hooks hung up to give back their share");
    // Hooks 1 to 3 gave up their wait for a slot: each audit line says their client left.
    await until(() => decisions().length === fit - 1, "the audit lines of the hooks given up");
    for (const line of decisions()) {
      expect(line).toMatchObject({ decision: "ask", clientLeft: true });
      expect(line.pending).toEqual([
        expect.objectContaining({
          rule: "review-writes",
          outcome: "CLIENT_LEFT",
          onError: "ask",
          detail: "given up: the client closed its connection before the answer",
        }),
      ]);
    }
    expect(model.received).toHaveLength(1);

    // A hook that would have found the budget full is judged: its call waits for the slot, which
    // hook 0's call, run on, gives back with the model's verdict (kept for an identical call).
    const next = fetch(`${server.url}/v1/hooks/claude-code`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${TOKEN}` },
      body: write(fit, big),
    });
    await holding(big, "the next hook in the waiting budget");
    model.release();
    await until(() => model.received.length === 2, "the next hook's model call");
    model.release();
    const answer = await next;
    expect(answer.status).toBe(200);
    // biome-ignore lint/suspicious/noExplicitAny: the decision body as Claude Code reads it.
    const body = (await answer.json()) as any;
    expect(body.hookSpecificOutput.permissionDecision).toBe("deny");
    expect(body.hookSpecificOutput.permissionDecisionReason).toContain("the model says no");
    // Hook 0's audit line, written when its call ended, has the model's verdict and says its
    // client left; the next hook's does not.
    await until(() => decisions().length === fit + 1, "every audit line");
    const lines = decisions();
    const first = lines.find((l) => (l.toolInput as { file_path?: string }).file_path === "/p/file-0000");
    expect(first).toMatchObject({ decision: "deny", clientLeft: true });
    expect(first?.pending).toEqual([expect.objectContaining({ rule: "review-writes", outcome: "OK" })]);
    const last = lines.find((l) => (l.toolInput as { file_path?: string }).file_path === "/p/file-0004");
    expect(last).toMatchObject({ decision: "deny" });
    expect(last).not.toHaveProperty("clientLeft");
    expect((await budgets(server.url, "hookgate_body_budget_bytes")).waiting).toBe(0);
    expect(server.output().stderr).toBe("");
  });
});

describe("serve's waiting budget when pipelined hooks' client hangs up", () => {
  it("gives back the share of a hook queued behind another on the connection, and gives up its call", async () => {
    const model = await holdingModel();
    const server = await judgingServe(model, "waiting-budget-pipelined", 1);
    const bytes = 10_000;
    const hook = (i: number) => {
      const body = write(i, bytes);
      return `POST /v1/hooks/claude-code HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nAuthorization: Bearer ${TOKEN}\r\nContent-Length: ${body.length}\r\n\r\n${body}`;
    };
    // Two hooks on one connection, the second sent before the first's answer (HTTP/1.1
    // pipelining): Node answers them in order, so the second's answer is queued behind the first.
    const { port } = new URL(server.url);
    const socket = connect(Number(port), "127.0.0.1");
    socket.on("error", () => {});
    socket.write(hook(0) + hook(1));
    await until(() => model.received.length === 1, "hook 0's model call");
    const decisions = () => server.lines.filter((l) => l.msg === "decision");
    const holding = async (held: number, what: string) => {
      const end = Date.now() + 30_000;
      while ((await budgets(server.url, "hookgate_body_budget_bytes")).waiting !== held) {
        if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
        await new Promise((r) => setTimeout(r, 20));
      }
    };
    await holding(2 * bytes, "both hooks in the waiting budget");

    socket.destroy();
    // Both give back their share; the second, waiting for the model's one slot, is given up.
    await holding(0, "the hooks hung up to give back their share");
    await until(() => decisions().length === 1, "the audit line of the hook given up");
    expect(decisions()[0]).toMatchObject({
      decision: "ask",
      clientLeft: true,
      toolInput: expect.objectContaining({ file_path: "/p/file-0001" }),
      pending: [expect.objectContaining({ rule: "review-writes", outcome: "CLIENT_LEFT" })],
    });
    model.release();
    await until(() => decisions().length === 2, "the first hook's audit line");
    expect(decisions()[1]).toMatchObject({ decision: "deny", clientLeft: true });
    expect(model.received).toHaveLength(1);
    expect(server.output().stderr).toBe("");
  });
});

/**
 * A forward rule's call given up because its hook's client closed its connection (an agent that
 * cancels a tool call, a user pressing Esc), or because `serve` is stopping, is not an egress refusal: the hook route in process,
 * the real remote actions and egress, reported as `serve` reports refusals (report.ts), and a
 * loopback hook server that never answers.
 */
import { randomUUID } from "node:crypto";
import type { ServerResponse } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createUndiciEgress } from "../../src/adapters/egress/undici.js";
import { createRemoteActions } from "../../src/app/remote-actions.js";
import { reportRefusals } from "../../src/core/egress/report.js";
import type { EgressRequest } from "../../src/core/ports.js";
import { runHookRoute } from "../../src/http/hook-route.js";
import { type LoopbackServer, loopbackServer } from "../support/loopback.js";
import { policyFrom, sha256 } from "../support/policy.js";

const held: ServerResponse[] = [];
let arrived: () => void = () => {};
let hook: LoopbackServer;

beforeAll(async () => {
  hook = await loopbackServer((_req, res) => {
    held.push(res);
    arrived();
  });
});
afterAll(async () => {
  for (const res of held.splice(0)) res.destroy();
  await hook.close();
});

/** A gateway forwarding every PreToolUse, its log lines and counts, and its egress calls as they settle. */
async function gateway(forward: Record<string, unknown>, stopping?: AbortSignal) {
  const policy = await policyFrom({
    version: 1,
    egress: { allowedHttpHookUrls: ["http://127.0.0.1:*/*"], allowCidrs: ["127.0.0.1/32"] },
    rules: [{ id: "team", on: ["PreToolUse"], forward: { url: `${hook.url}/hook`, ...forward } }],
  });
  const logs: Record<string, unknown>[] = [];
  const counts: { name: string; labels?: Readonly<Record<string, string>> }[] = [];
  const logger = {
    log: (level: string, msg: string, fields?: object) => logs.push({ level, msg, ...fields }),
  };
  const egress = createUndiciEgress({
    policy: () => policy.egress,
    onRefusal: reportRefusals(logger, {
      increment: (name, labels) => counts.push({ name, ...(labels && { labels }) }),
    }),
  });
  const calls: Promise<unknown>[] = [];
  const send = (req: EgressRequest) => {
    const call = egress.send(req);
    calls.push(call);
    return call;
  };
  const clock = { now: Date.now, monotonic: () => performance.now() };
  return {
    logs,
    counts,
    /** Every egress call made so far, settled: what it reported is in `logs` and `counts`. */
    settled: () => Promise.all(calls),
    close: () => egress.close(),
    run: (connection?: { left(): boolean; leaving(): AbortSignal }) =>
      runHookRoute(
        {
          policy: () => policy,
          remote: createRemoteActions({ egress: send, env: () => undefined, clock, sha256, stopping }),
          clock,
          newId: randomUUID,
          sha256,
          logger,
        },
        "claude-code",
        {
          readBody: async () => ({
            ok: true,
            text: JSON.stringify({
              session_id: "s",
              transcript_path: "/t",
              cwd: "/p",
              hook_event_name: "PreToolUse",
              tool_name: "Bash",
              tool_input: { command: "ls" },
            }),
          }),
          contentType: "application/json",
          authorization: undefined,
          timeoutHeader: undefined,
          ...(connection && { connection }),
        },
      ),
  };
}

describe("a forward rule's call given up", () => {
  it("because its client left is said in the audit line, neither logged as an egress refusal nor counted as one", async () => {
    const gw = await gateway({});
    const left = new AbortController();
    const called = new Promise<void>((resolve) => (arrived = resolve));
    const outcome = gw.run({ left: () => left.signal.aborted, leaving: () => left.signal });
    // The hook server has the event and holds its answer: the call is in flight.
    await called;
    left.abort();
    const { audit } = await outcome;
    await gw.settled();
    expect(audit.clientLeft).toBe(true);
    expect(audit.pending).toEqual([
      expect.objectContaining({
        rule: "team",
        outcome: "CLIENT_LEFT",
        detail: "given up: the client closed its connection before the answer",
      }),
    ]);
    // Before, the guard reported it as EGRESS_TIMEOUT ("was given up before it answered"): a
    // warning and a count on every cancelled tool call, alarming whoever alerts on them.
    expect(gw.logs.filter((l) => l.msg === "egress refused")).toEqual([]);
    expect(gw.counts.filter((c) => c.name === "hookgate_egress_refused_total")).toEqual([]);
    expect(gw.logs.filter((l) => l.level === "warn" || l.level === "error")).toEqual([]);
    // A debug line says what became of it.
    expect(gw.logs).toContainEqual(
      expect.objectContaining({
        level: "debug",
        msg: "egress call given up: its client left",
        code: "EGRESS_TIMEOUT",
        url: `${hook.url}/…`,
      }),
    );
    await gw.close();
  });

  it("by its own timeoutMs is still logged and counted as an egress refusal", async () => {
    const gw = await gateway({ timeoutMs: 50 });
    const left = new AbortController();
    const { audit } = await gw.run({ left: () => left.signal.aborted, leaving: () => left.signal });
    await gw.settled();
    expect(audit.pending).toEqual([expect.objectContaining({ rule: "team", outcome: "FORWARD_TIMEOUT" })]);
    // The rule's timer or the call's own, whichever fired first: a timeout of the hook server.
    expect(gw.logs.filter((l) => l.msg === "egress refused")).toEqual([
      expect.objectContaining({ level: "warn", code: "EGRESS_TIMEOUT", url: `${hook.url}/…` }),
    ]);
    expect(gw.counts).toEqual([
      { name: "hookgate_egress_refused_total", labels: { code: "EGRESS_TIMEOUT" } },
    ]);
    expect(gw.logs.filter((l) => l.level === "debug")).toEqual([]);
    await gw.close();
  });

  it("because serve is stopping is said in the audit line, neither logged as an egress refusal nor counted as one", async () => {
    const stopping = new AbortController();
    const gw = await gateway({ onError: "deny" }, stopping.signal);
    const called = new Promise<void>((resolve) => (arrived = resolve));
    const outcome = gw.run();
    await called;
    // What serve does a little before it cuts the connections still open (node.ts closeOnce).
    stopping.abort();
    const { audit } = await outcome;
    await gw.settled();
    expect(audit.pending).toEqual([
      expect.objectContaining({
        rule: "team",
        outcome: "FORWARD_TIMEOUT",
        onError: "deny",
        detail: "no answer before the gateway stopped",
      }),
    ]);
    // Before, the guard reported it as EGRESS_TIMEOUT: a warning and a count at every restart,
    // for a hook server that had done nothing wrong.
    expect(gw.logs.filter((l) => l.msg === "egress refused")).toEqual([]);
    expect(gw.counts.filter((c) => c.name === "hookgate_egress_refused_total")).toEqual([]);
    expect(gw.logs).toContainEqual(
      expect.objectContaining({
        level: "debug",
        msg: "egress call given up: the gateway is stopping",
        code: "EGRESS_TIMEOUT",
        url: `${hook.url}/…`,
      }),
    );
    await gw.close();
  });
});

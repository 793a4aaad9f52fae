/**
 * `GET /metrics` of a real `hookgate serve`, after traffic of every kind, read by a Prometheus text
 * parser that is not hookgate's (parse-prometheus-text-format), with what that parser lets pass
 * checked against the format's rules (prometheus.io, Exposition formats, text format 0.0.4).
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import parsePrometheusTextFormat, { type ParsedFamily } from "parse-prometheus-text-format";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { METRIC_HELP } from "../../src/adapters/metrics/prometheus.js";
import { type ServerProcess, startServerProcess } from "../support/process.js";
import { type WebhookReceiver, webhookReceiver } from "../support/receiver.js";
import { tempDir } from "../support/temp.js";

const SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
const TOKEN = "metrics-team-token-1";
/** A sink name is any non-empty text of the policy's: here one needing each of the format's escapes. */
const SINK = 'ops "audit"\\eu\nwest';

function policy(receiverUrl: string, extraRule?: Record<string, unknown>) {
  return JSON.stringify({
    version: 1,
    // A team name needing the escapes too: no series is labelled by team, and none may break.
    auth: { tokens: [{ team: 'plat"form\\\n', env: "METRICS_TOKEN" }], onFailure: "deny" },
    egress: { allowCidrs: ["127.0.0.1/32"] },
    rules: [
      {
        id: "deny-rm",
        on: "PreToolUse",
        if: "Bash(rm -rf /*)",
        decide: "deny",
        reason: "no",
        notify: [SINK],
      },
      { id: "ask-push", on: "PreToolUse", if: "Bash(git push *)", decide: "ask", reason: "a human" },
      { id: "allow-test", on: "PreToolUse", if: "Bash(npm test)", decide: "allow", reason: "safe" },
      { id: "defer-deploy", on: "PreToolUse", if: "Bash(make deploy)", decide: "defer", reason: "later" },
      { id: "block-stop", on: "Stop", where: { stop_hook_active: false }, decide: "block", reason: "test" },
      ...(extraRule ? [extraRule] : []),
    ],
    sinks: { [SINK]: { type: "webhook", url: receiverUrl, secret: "env:WHSEC" } },
  });
}

let server: ServerProcess;
let receiver: WebhookReceiver;
let policyPath: string;

beforeAll(async () => {
  receiver = await webhookReceiver(SECRET);
  policyPath = join(tempDir("metrics"), "policy.json");
  writeFileSync(policyPath, policy(receiver.url));
  server = await startServerProcess(policyPath, { WHSEC: SECRET, METRICS_TOKEN: TOKEN });
});
afterAll(async () => {
  await server?.stop();
  await receiver?.close();
});

async function hook(body: Record<string, unknown>, token = TOKEN, path = "/v1/hooks/claude-code") {
  const res = await fetch(`${server.url}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
    body: JSON.stringify({ session_id: "s1", transcript_path: "/t", cwd: "/p", ...body }),
  });
  expect(res.status).toBe(200);
  return res.text();
}
const bash = (command: string) => ({
  hook_event_name: "PreToolUse",
  tool_name: "Bash",
  tool_input: { command },
});

async function scrape(): Promise<{ text: string; type: string | null }> {
  const res = await fetch(`${server.url}/metrics`);
  expect(res.status).toBe(200);
  return { text: await res.text(), type: res.headers.get("content-type") };
}

/** Label values of one family's samples, as the parser read them back. */
const labelsOf = (families: ParsedFamily[], name: string) =>
  families.find((f) => f.name === name)?.metrics.map((m) => m.labels ?? {}) ?? [];

describe("GET /metrics read by a Prometheus text parser", () => {
  it("is valid after decisions of every kind, a delivery, an auth failure, a 404 and reloads", async () => {
    for (const command of ["rm -rf /srv", "git push origin", "npm test", "make deploy", "ls"])
      await hook(bash(command));
    await hook({ hook_event_name: "Stop", stop_hook_active: false });
    await hook(bash("ls"), "not-the-token");
    await hook({ hook_event_name: "NoSuchEvent" });
    await hook(bash("ls"), TOKEN, "/v1/hooks/no-such-client");
    expect((await fetch(`${server.url}/no/such/route`)).status).toBe(404);
    // A reload that adds a rule, and one that fails and keeps it.
    writeFileSync(
      policyPath,
      policy(receiver.url, { id: "x", on: "PreToolUse", if: "Bash(x)", decide: "deny" }),
    );
    server.child.kill("SIGHUP");
    await server.waitForLine((l) => l.msg === "policy reloaded");
    writeFileSync(policyPath, "{");
    server.child.kill("SIGHUP");
    await server.waitForLine((l) => l.msg === "policy reload failed; keeping the running policy");

    // The delivery thread's counters reach /metrics at its next report, after the delivery.
    const end = Date.now() + 20_000;
    let { text, type } = await scrape();
    while (labelsOf(parsePrometheusTextFormat(text), "hookgate_delivered_total").length === 0) {
      if (Date.now() > end) throw new Error(`no delivery counted; /metrics:\n${text}`);
      await new Promise((r) => setTimeout(r, 50));
      ({ text, type } = await scrape());
    }
    expect(receiver.unique).toHaveLength(1);

    expect(type).toBe("text/plain; version=0.0.4; charset=utf-8");
    expect(text.endsWith("\n")).toBe(true);
    const families = parsePrometheusTextFormat(text);
    const names = families.map((f) => f.name);
    // Each family once, all its samples together (the parser starts a new family at another name).
    expect(new Set(names).size).toBe(names.length);
    const sampleLines = text.split("\n").filter((l) => l !== "" && !l.startsWith("#"));
    for (const family of families) {
      expect(family.help, family.name).not.toBe("");
      expect(family.help, family.name).toBe(METRIC_HELP[family.name]);
      // Each budget serve sets is named in its family's help.
      for (const m of family.metrics) {
        const budget = m.labels?.budget;
        if (budget !== undefined) expect(family.help, family.name).toMatch(new RegExp(`\\b${budget}\\b`));
      }
      expect(["COUNTER", "GAUGE"], family.name).toContain(family.type);
      if (family.type === "COUNTER") expect(family.name).toMatch(/_total$/);
      expect(family.name).toMatch(/^[a-zA-Z_:][a-zA-Z0-9_:]*$/);
      // No series twice: the parser merges a repeated label set into the sample before it.
      const series = family.metrics.map((m) => JSON.stringify(Object.entries(m.labels ?? {}).sort()));
      expect(new Set(series).size, family.name).toBe(series.length);
      for (const m of family.metrics) {
        for (const label of Object.keys(m.labels ?? {})) expect(label).toMatch(/^[a-zA-Z_][a-zA-Z0-9_]*$/);
        expect(m.value, family.name).toMatch(
          /^(?:[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?|NaN|[+-]Inf)$/,
        );
      }
    }
    // Every sample line is one parsed sample: none was merged away as a repeat.
    expect(families.reduce((n, f) => n + f.metrics.length, 0)).toBe(sampleLines.length);

    // The sink's name reads back whole, through the escapes of `"`, `\` and the line feed.
    expect(labelsOf(families, "hookgate_delivered_total")).toEqual([{ sink: SINK }]);
    expect(labelsOf(families, "hookgate_enqueued_total")).toEqual([{ sink: SINK }]);
    expect(labelsOf(families, "hookgate_enqueue_failed_total")).toEqual([{ sink: SINK }]);
    const decisions = labelsOf(families, "hookgate_decisions_total");
    for (const decision of ["allow", "deny", "ask", "defer", "block", "none"])
      expect(decisions.map((l) => l.decision)).toContain(decision);
    expect(decisions.map((l) => l.event)).toContain("unknown");
    expect(labelsOf(families, "hookgate_request_errors_total").map((l) => l.code)).toEqual(
      expect.arrayContaining(["AUTH_UNKNOWN_TOKEN", "UNKNOWN_CLIENT_ROUTE"]),
    );
    expect(labelsOf(families, "hookgate_policy_reloads_total")).toEqual([
      { outcome: "loaded" },
      { outcome: "failed" },
    ]);
  });
});

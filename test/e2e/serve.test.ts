/**
 * `hookgate serve` as a real process: the real Claude Code requests of test/fixtures replayed
 * with their captured headers against examples/policy.json, SIGHUP reloads, and staying up.
 */
import { copyFileSync, readdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { Agent, request as httpRequest } from "node:http";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { shellQuote } from "../../src/entry/shell-word.js";
import { ROOT, type ServerProcess, startServerProcess } from "../support/process.js";
import { sendRaw } from "../support/raw-http.js";
import { tempDir } from "../support/temp.js";

const FIXTURES = join(ROOT, "test/fixtures/claude-code");
const HARNESS_TOKEN = "harness-secret-123";

/** What examples/policy.json answers to each captured request. */
const EXPECTED: Record<string, { type: string | null; body: string }> = {
  PreToolUse: { type: null, body: "" },
  PostToolUse: { type: null, body: "" },
  Notification: { type: null, body: "" },
  SessionEnd: { type: null, body: "" },
  Stop: { type: null, body: "" },
  // The instructions as a JSON object Claude Code appends raw: a plain-text body fails the hook.
  PreCompact: {
    type: "application/json",
    body: JSON.stringify({ reason: "Preserve every API-contract decision verbatim." }),
  },
  UserPromptSubmit: {
    type: "application/json",
    body: JSON.stringify({
      hookSpecificOutput: {
        hookEventName: "UserPromptSubmit",
        additionalContext: "This repository uses pnpm, never npm.",
      },
    }),
  },
};

const fixtures = readdirSync(FIXTURES, { withFileTypes: true })
  .filter((d) => d.isDirectory())
  .flatMap((d) =>
    readdirSync(join(FIXTURES, d.name))
      .filter((f) => f.endsWith(".json") && !f.endsWith(".headers.json"))
      .map((f) => {
        const event = f.replace(/\.json$/, "");
        const headers = JSON.parse(readFileSync(join(FIXTURES, d.name, `${event}.headers.json`), "utf8"))
          .headers as [string, string][];
        return { version: d.name, event, body: readFileSync(join(FIXTURES, d.name, f)), headers };
      }),
  );

/** Sends bytes with exactly the captured headers (but a true Host and Content-Length). */
function replay(url: string, body: Buffer, headers: [string, string][]) {
  const target = new URL("/v1/hooks", url);
  return new Promise<{
    status: number;
    type: string | undefined;
    text: string;
    decisionId: string | undefined;
  }>((resolve, reject) => {
    // Insertion order is wire order for node:http, so the captured order is kept.
    const wire: Record<string, string> = {};
    for (const [name, value] of headers) {
      if (name === "Host" || name === "Content-Length") continue;
      wire[name] = name === "Authorization" ? `Bearer ${HARNESS_TOKEN}` : value;
    }
    wire["Content-Length"] = String(body.length);
    const req = httpRequest(target, { method: "POST", headers: wire }, (res) => {
      let text = "";
      res.setEncoding("utf8");
      res.on("data", (c) => {
        text += c;
      });
      res.on("end", () =>
        resolve({
          status: res.statusCode ?? 0,
          type: res.headers["content-type"],
          text,
          decisionId: res.headers["x-hookgate-decision-id"] as string | undefined,
        }),
      );
    });
    req.on("error", reject);
    req.end(body);
  });
}

let dir: string;
let server: ServerProcess;

beforeAll(async () => {
  dir = tempDir("serve");
  copyFileSync(join(ROOT, "examples/policy.json"), join(dir, "policy.json"));
  server = await startServerProcess(join(dir, "policy.json"), { HOOKGATE_TOKEN_MOBILE: HARNESS_TOKEN });
});
afterAll(async () => {
  await server?.stop();
});

describe("real Claude Code requests against examples/policy.json", () => {
  it("has the captured fixtures to replay", () => {
    expect(fixtures.length).toBe(13);
  });

  it.each(fixtures)("$version $event gets its expected answer", async ({ event, body, headers }) => {
    const res = await replay(server.url, body, headers);
    const want = EXPECTED[event];
    expect(want, `no expectation for ${event}`).toBeDefined();
    expect(res.status).toBe(200);
    expect(res.type).toBe(want?.type ?? undefined);
    expect(res.text).toBe(want?.body);
    const audit = await server.waitForLine((l) => l.msg === "decision" && l.decisionId === res.decisionId);
    expect(audit).toMatchObject({ team: "mobile", client: "claude-code", event });
  });

  it("records the shadowed Stop rule as a would-be block", async () => {
    const stop = fixtures.find((f) => f.version === "2.1.332" && f.event === "Stop");
    const res = await replay(server.url, stop?.body ?? Buffer.from(""), stop?.headers ?? []);
    const audit = await server.waitForLine((l) => l.decisionId === res.decisionId);
    expect(audit.shadow).toEqual([{ rule: "run-tests-first", decision: "block" }]);
    expect(audit.decision).toBe("none");
  });
});

describe("policy reload on SIGHUP", () => {
  const send = async (command: string) => {
    const res = await fetch(`${server.url}/v1/hooks`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${HARNESS_TOKEN}` },
      body: JSON.stringify({
        session_id: "s",
        transcript_path: "/t",
        cwd: "/p",
        hook_event_name: "PreToolUse",
        tool_name: "Bash",
        tool_input: { command },
      }),
    });
    return { text: await res.text(), policy: res.headers.get("x-hookgate-policy") };
  };

  it("swaps in a valid policy, and keeps the running one when the new file is invalid", async () => {
    const before = await send("make deploy");
    expect(before.text).toBe("");
    // Both outcomes at 0 from the start: an alert on their increase sees the first failure.
    const fresh = await (await fetch(`${server.url}/metrics`)).text();
    expect(fresh).toContain('hookgate_policy_reloads_total{outcome="failed"} 0');
    const policy = JSON.parse(readFileSync(join(dir, "policy.json"), "utf8"));
    policy.rules.push({
      id: "no-deploy",
      on: "PreToolUse",
      if: "Bash(make deploy)",
      decide: "deny",
      reason: "deploys go through CI",
    });
    writeFileSync(join(dir, "policy.json"), JSON.stringify(policy));
    server.child.kill("SIGHUP");
    await server.waitForLine((l) => l.msg === "policy reloaded");
    const after = await send("make deploy");
    expect(JSON.parse(after.text).hookSpecificOutput.permissionDecisionReason).toBe("deploys go through CI");
    expect(after.policy).not.toBe(before.policy);

    writeFileSync(
      join(dir, "policy.json"),
      '{"version": 1, "rules": [{"id": "x", "on": "PreToolUse", "decide": "nope"}]}',
    );
    server.child.kill("SIGHUP");
    const failed = await server.waitForLine(
      (l) => l.msg === "policy reload failed; keeping the running policy",
    );
    expect(failed.problems).toEqual([expect.stringMatching(/^\$\.rules\[0\]\.decide: must be one of/)]);
    // The line names the file the problems are in, and what to do: its JSON paths alone ("$.rules[0]")
    // left the operator to work out which file the gateway read.
    const policyPath = join(dir, "policy.json");
    expect(failed.path).toBe(policyPath);
    expect(failed.fix).toBe(
      `fix ${policyPath} (hookgate check ${shellQuote(policyPath)} lists the same problems) and send SIGHUP again; until then the running policy answers`,
    );
    const still = await send("make deploy");
    expect(still.policy).toBe(after.policy);
    expect(JSON.parse(still.text).hookSpecificOutput.permissionDecision).toBe("deny");
    // An operator sees a reload that did not take on /metrics too, not only in the log.
    const metrics = await (await fetch(`${server.url}/metrics`)).text();
    expect(metrics).toContain('hookgate_policy_reloads_total{outcome="loaded"} 1');
    expect(metrics).toContain('hookgate_policy_reloads_total{outcome="failed"} 1');
  });

  it("says that a variable a reloaded policy newly reads takes a restart, as serve reads its environment at start", async () => {
    const policy = JSON.parse(readFileSync(join(ROOT, "examples/policy.json"), "utf8"));
    policy.auth.tokens.push({ team: "web", env: "HOOKGATE_TOKEN_WEB" });
    policy.sinks = { chat: { type: "slack", url: "env:CHAT_WEBHOOK_URL" } };
    writeFileSync(join(dir, "policy.json"), JSON.stringify(policy));
    const from = server.lines.length;
    server.child.kill("SIGHUP");
    await server.waitForLine((l) => l.msg === "policy reloaded" && server.lines.indexOf(l) >= from);
    const warnings = server.lines.slice(from).filter((l) => l.msg === "policy warning");
    expect(warnings.map((w) => [w.path, w.fix])).toEqual([
      [
        "$.auth.tokens[2].env",
        "serve reads its environment only when it starts, so a reload cannot see HOOKGATE_TOKEN_WEB: set it in serve's environment and restart serve",
      ],
      [
        "$.sinks.chat.url",
        "serve reads its environment only when it starts, so a reload cannot see CHAT_WEBHOOK_URL: set it in serve's environment and restart serve",
      ],
    ]);
  });

  it("lists the first 20 problems of a refused reload and counts the rest, in one line a log driver keeps whole", async () => {
    // Every rule with the same mistake, as after a key renamed across a generated policy.
    const rules = Array.from({ length: 500 }, (_, i) => ({ id: `r${i}`, on: "PreToolUse", decide: "nope" }));
    writeFileSync(join(dir, "policy.json"), JSON.stringify({ version: 1, rules }));
    const from = server.lines.length;
    server.child.kill("SIGHUP");
    const failed = await server.waitForLine(
      (l) => l.msg === "policy reload failed; keeping the running policy" && server.lines.indexOf(l) >= from,
    );
    const problems = failed.problems as string[];
    expect(problems).toHaveLength(20);
    expect(problems[19]).toMatch(/^\$\.rules\[19\]\.decide: must be one of/);
    expect(failed.moreProblems).toBe(480);
    // Docker's json-file driver splits a line past 16 KiB into pieces that are no JSON.
    expect(JSON.stringify(failed).length).toBeLessThan(16 * 1024);
  });

  it("says a policy file gone at a reload is gone, without a newcomer's guide to the example policy", async () => {
    // Before, the log line told the operator of a running gateway that "a policy is a JSON file you
    // write: copy the example that comes with hookgate (…)", with the install's path on this machine.
    const policyPath = join(dir, "policy.json");
    renameSync(policyPath, join(dir, "policy.moved"));
    try {
      const from = server.lines.length;
      server.child.kill("SIGHUP");
      const failed = await server.waitForLine(
        (l) =>
          l.msg === "policy reload failed; keeping the running policy" && server.lines.indexOf(l) >= from,
      );
      expect(failed.problems).toEqual([`$: ${policyPath} does not exist`]);
    } finally {
      renameSync(join(dir, "policy.moved"), policyPath);
    }
  });
});

describe("staying up", () => {
  it("answers 2xx to a burst of malformed requests and stays healthy", async () => {
    const bodies = ["", "{", "[]", "null", '{"hook_event_name": 5}', "\u0000", "x".repeat(2 * 1024 * 1024)];
    for (const body of bodies) {
      const res = await fetch(`${server.url}/v1/hooks`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body,
      });
      expect(res.status).toBe(200);
      await res.text();
    }
    expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
  });

  it("reads an oversized body to its end, answers it, and keeps the connection usable", async () => {
    const big = await fetch(`${server.url}/v1/hooks`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: "x".repeat(2 * 1024 * 1024),
    });
    expect(big.status).toBe(200);
    expect(big.headers.get("x-hookgate-error")).toBe("BODY_TOO_LARGE");
    // Drained, not cut off: a client still sending would otherwise see a reset, not the answer.
    expect(big.headers.get("connection")).not.toBe("close");
    await big.text();
    const next = await fetch(`${server.url}/healthz`);
    expect(next.status).toBe(200);
  });

  it("keeps an idle keep-alive connection open past Node's default 5 s, so a session's next hook is not refused", async () => {
    // Claude Code sends all of a session's hooks on one connection (fixtures README); closed by the
    // server as a hook goes out, that hook fails and the tool runs undecided.
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    try {
      const first = await sendRaw(server.url, { method: "GET", path: "/healthz", agent });
      expect(first.headers["keep-alive"]).toBe("timeout=65");
      await new Promise((resolve) => setTimeout(resolve, 6_000));
      const next = await sendRaw(server.url, { method: "GET", path: "/healthz", agent });
      expect(next.status).toBe(200);
      expect(next.reusedSocket, "the idle connection was still open").toBe(true);
    } finally {
      agent.destroy();
    }
  }, 20_000);

  it("reads a large body sent to a mistyped hook route too, so the client gets the answer, not a reset", async () => {
    for (const path of ["/v1/hooks/claude", "/v1/hooks/claude-code/extra"]) {
      const res = await fetch(`${server.url}${path}`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: "x".repeat(5 * 1024 * 1024),
      });
      expect(res.status).toBe(200);
      expect(res.headers.get("x-hookgate-error")).toBe("UNKNOWN_CLIENT_ROUTE");
      expect(res.headers.get("connection")).not.toBe("close");
      await res.text();
    }
  });
});

describe("a gateway on loopback and the names it answers", () => {
  const hook = (host: string, path = "/v1/hooks/claude-code") =>
    sendRaw(server.url, {
      path,
      headers: [
        ["Host", host],
        ["Content-Type", "application/json"],
        ["Authorization", `Bearer ${HARNESS_TOKEN}`],
      ],
      body: JSON.stringify({
        session_id: "s",
        transcript_path: "/t",
        cwd: "/p",
        hook_event_name: "PreToolUse",
        tool_name: "Bash",
        tool_input: { command: "rm -rf /" },
      }),
    });

  it("answers loopback names, and refuses a web page's own name pointed at 127.0.0.1 (DNS rebinding)", async () => {
    const { port } = new URL(server.url);
    // A name's absolute form (a trailing dot) and its capitals are the same name.
    const names = ["localhost", `localhost:${port}`, `localhost.:${port}`, "LOCALHOST", "app.localhost."];
    for (const host of [`127.0.0.1:${port}`, `127.0.0.1.:${port}`, `[::1]:${port}`, ...names]) {
      const res = await hook(host);
      expect(res.headers["x-hookgate-error"], host).toBeUndefined();
      expect(JSON.parse(res.body).hookSpecificOutput.permissionDecision).toBe("deny");
    }
    // A hook route: the auth fail mode's answer, 2xx, saying why.
    const rebound = await hook(`rebind.attacker.example:${port}`);
    expect(rebound.status).toBe(200);
    expect(rebound.headers["x-hookgate-error"]).toBe("HOST_NOT_SERVED");
    expect(rebound.body).toMatch(/addressed to \\"rebind\.attacker\.example:\d+\\"/);
    // Under a prefix too, in the route's client's shape (it once got a 421,
    // which Claude Code lets through, and nothing was logged).
    const prefixed = await hook(`rebind.attacker.example:${port}`, "/hookgate/v1/hooks/claude-code");
    expect(prefixed.status).toBe(200);
    expect(prefixed.headers["x-hookgate-error"]).toBe("HOST_NOT_SERVED");
    expect(JSON.parse(prefixed.body).hookSpecificOutput.permissionDecision).toBe("deny");
    // A percent-encoded slash is a slash to the hook routes, so here too (it got a 421).
    const encoded = await hook(`rebind.attacker.example:${port}`, "/v1/hooks%2Fclaude-code");
    expect(encoded.status).toBe(200);
    expect(encoded.headers["x-hookgate-error"]).toBe("HOST_NOT_SERVED");
    expect(JSON.parse(encoded.body).hookSpecificOutput.permissionDecision).toBe("deny");
    // A target in absolute form names the host, not the Host header (RFC 9112 §3.2.2): Node
    // leaves both as sent, and one naming another host with a loopback Host was answered.
    const absolute = await hook(`127.0.0.1:${port}`, "http://rebind.attacker.example/v1/hooks/claude-code");
    expect(absolute.status).toBe(200);
    expect(absolute.headers["x-hookgate-error"]).toBe("HOST_NOT_SERVED");
    expect(absolute.body).toMatch(/addressed to \\"rebind\.attacker\.example\\"/);
    // Its authority ends at a `?`, as a URL parser reads it: the path is the root, no hook route.
    const query = await hook(`127.0.0.1:${port}`, `http://127.0.0.1:${port}?/v1/hooks/claude-code`);
    const root = await hook(`127.0.0.1:${port}`, "/?/v1/hooks/claude-code");
    expect(root.status).toBe(404);
    expect([query.status, query.body]).toEqual([root.status, root.body]);
    const named = await hook("rebind.attacker.example", `http://127.0.0.1:${port}/v1/hooks/claude-code`);
    expect(named.headers["x-hookgate-error"]).toBeUndefined();
    expect(JSON.parse(named.body).hookSpecificOutput.permissionDecision).toBe("deny");
    const other = await sendRaw(server.url, {
      method: "GET",
      path: "http://rebind.attacker.example/healthz",
      headers: [["Host", `127.0.0.1:${port}`]],
    });
    expect(other.status).toBe(421);
    // Every other route: 421, nothing read or told.
    for (const path of ["/healthz", "/metrics", "/v1/whoami"]) {
      const res = await sendRaw(server.url, {
        method: "GET",
        path,
        headers: [["Host", "rebind.attacker.example"]],
      });
      expect(res.status, path).toBe(421);
      expect(JSON.parse(res.body).error.code).toBe("HOST_NOT_SERVED");
    }
  });
});

describe("GET /metrics", () => {
  it("counts decisions by event, client and kind, and request errors by code, in Prometheus text", async () => {
    const res = await fetch(`${server.url}/metrics`);
    expect(res.headers.get("content-type")).toMatch(/^text\/plain; version=0\.0\.4/);
    const text = await res.text();
    expect(text).toMatch(/# TYPE hookgate_decisions_total counter/);
    expect(text).toMatch(
      /hookgate_decisions_total\{client="claude-code",decision="none",event="PreToolUse"\} \d+/,
    );
    expect(text).toMatch(/hookgate_request_errors_total\{code="MALFORMED_JSON"\} \d+/);
  });

  it("has a series from the start for every counter an alert watches with increase(), so the first count is a rise", async () => {
    // A series that first appears at 1 shows no increase to Prometheus: the alert would miss it.
    const alerts = readFileSync(join(ROOT, "infra/node/prometheus-alerts.yml"), "utf8");
    const watched = [...alerts.matchAll(/increase\((hookgate_[a-z_]+)(\{[^}]*\})?\[/g)].map(
      ([, name, labels]) => `${name}${labels ?? ""}`,
    );
    expect(watched).toContain("hookgate_intake_failed_total");
    const text = await (await fetch(`${server.url}/metrics`)).text();
    const series = text.split("\n").map((line) => line.slice(0, line.lastIndexOf(" ")));
    // A counter kept per sink has a series at 0 for each sink of the policy from the start
    // (fanout.test.ts, "declared at 0"); examples/policy.json has no sinks, so none here.
    const perSink = new Set(["hookgate_enqueue_failed_total"]);
    expect(watched).toContain("hookgate_enqueue_failed_total");
    for (const name of watched) {
      if (perSink.has(name)) continue;
      // A watched selector (`{budget=~"arriving|waiting"}`) needs a series it selects.
      const [bare, selector = ""] = name.split("{");
      const matchers = [...selector.matchAll(/(\w+)(=~|!~|!=|=)"([^"]*)"/g)];
      const selects = (line: string) => {
        const [seriesName, labels = ""] = line.split("{");
        if (seriesName !== bare) return false;
        const values = new Map([...labels.matchAll(/(\w+)="([^"]*)"/g)].map(([, k, v]) => [k, v]));
        return matchers.every(([, label = "", op = "", value = ""]) => {
          const has = values.get(label) ?? "";
          const hit = op.includes("~") ? new RegExp(`^(?:${value})$`).test(has) : has === value;
          return op.startsWith("!") ? !hit : hit;
        });
      };
      expect(series.some(selects), name).toBe(true);
    }
  });
});

describe("doubled slashes in a hook URL", () => {
  it("name the same route (`//v1/hooks/claude-code` was once a 404)", async () => {
    const { port } = new URL(server.url);
    for (const path of [
      "//v1/hooks/claude-code",
      "/v1//hooks/claude-code",
      "/hookgate//v1/hooks/claude-code",
    ]) {
      const res = await sendRaw(server.url, {
        path,
        headers: [
          ["Host", `127.0.0.1:${port}`],
          ["Content-Type", "application/json"],
          ["Authorization", `Bearer ${HARNESS_TOKEN}`],
        ],
        body: JSON.stringify({
          session_id: "s",
          transcript_path: "/t",
          cwd: "/p",
          hook_event_name: "PreToolUse",
          tool_name: "Bash",
          tool_input: { command: "rm -rf /" },
        }),
      });
      expect(res.status, path).toBe(200);
      expect(JSON.parse(res.body).hookSpecificOutput.permissionDecision, path).toBe("deny");
    }
  });
});

describe("odd hook paths on the Node listener", () => {
  const rmRoot = JSON.stringify({
    session_id: "s",
    transcript_path: "/t.jsonl",
    cwd: "/p",
    hook_event_name: "PreToolUse",
    tool_name: "Bash",
    tool_input: { command: "rm -rf /" },
  });
  const send = (path: string) =>
    sendRaw(server.url, {
      method: "POST",
      path,
      headers: [
        ["Content-Type", "application/json"],
        ["Authorization", `Bearer ${HARNESS_TOKEN}`],
      ],
      body: rmRoot,
    });

  it("answers them as the Hono routes do, after URL normalisation", async () => {
    const plain = await send("/v1/hooks/");
    expect(plain.status).toBe(200);
    expect(JSON.parse(plain.body).hookSpecificOutput.permissionDecision).toBe("deny");
    // "." is the route itself, ".." leaves it, and doubled slashes are one (no empty client name).
    const dot = await send("/v1/hooks/.");
    expect(dot.body).toBe(plain.body);
    expect((await send("/v1/hooks/..")).status).toBe(404);
    const empty = await send("/v1/hooks//");
    expect(empty.body).toBe(plain.body);
    const unknown = await send("/v1/hooks/Claude-Code");
    expect(unknown.status).toBe(200);
    expect(unknown.headers["x-hookgate-error"]).toBe("UNKNOWN_CLIENT_ROUTE");
  });
});

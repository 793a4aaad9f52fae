/**
 * The audit line as README.md's "Audit log" documents it, held against real lines of `hookgate
 * serve`: one of each kind of outcome (allow, deny, ask, block, context, shadow, prompt, forward,
 * each fail mode) from each client. SIEM queries are written against these names, so a field added,
 * renamed or retyped without the README fails here.
 */
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AUDIT_FIELD_NAMES, AUDIT_LINE } from "../support/audit-line.js";
import { type LoopbackServer, loopbackServer } from "../support/loopback.js";
import { type ModelServer, startModelServer } from "../support/model-server.js";
import { ROOT, type ServerProcess, startServerProcess } from "../support/process.js";
import { tempDir } from "../support/temp.js";

const TOKEN = "hookgate-dev-token";
const FIXTURES = join(ROOT, "test/fixtures/claude-code");

let model: ModelServer;
let team: LoopbackServer;
let server: ServerProcess;

beforeAll(async () => {
  model = await startModelServer();
  team = await loopbackServer((req, res) => {
    // Never answered: the hook that waits on it is hung up by its client.
    if (req.url === "/hang") return;
    res.writeHead(200, { "content-type": "application/json" });
    res.end(
      req.url === "/rewrite"
        ? JSON.stringify({
            hookSpecificOutput: {
              hookEventName: "PreToolUse",
              permissionDecision: "allow",
              updatedInput: { query: "hookgate", api_key: "sk-live-abcdefghijklmnop" },
            },
          })
        : req.url === "/hook"
          ? JSON.stringify({
              hookSpecificOutput: {
                hookEventName: "PreToolUse",
                permissionDecision: "deny",
                permissionDecisionReason: "the team server says no",
              },
            })
          : "{}",
    );
  });
  const policy = {
    version: 1,
    auth: {
      tokens: [
        { team: "platform", sha256: "0af148632bfc2bdf9076bdc41fa58336a206cd23532da915cc5d2f9e9c3f6a50" },
      ],
      onFailure: "deny",
    },
    defaults: { onError: "allow", deadlineMs: 5000, maxBodyBytes: 4096 },
    egress: {
      allowedHttpHookUrls: [model.anthropicUrl, `${team.url}/*`],
      allowCidrs: ["127.0.0.1/32"],
    },
    models: {
      fast: {
        provider: "anthropic",
        model: "claude-haiku-4-5",
        apiKey: "env:ANTHROPIC_API_KEY",
        url: model.anthropicUrl,
        cacheTtlSeconds: 0,
        dailyCallsPerTeam: 1000,
      },
    },
    sinks: { security: { type: "webhook", url: `${team.url}/sink` } },
    rules: [
      {
        id: "no-rm-root",
        on: "PreToolUse",
        if: "Bash(rm -rf /*)",
        decide: "deny",
        reason: "Deleting from / is never allowed",
        notify: ["security"],
      },
      {
        id: "ask-push",
        on: "PreToolUse",
        if: "Bash(git push *)",
        decide: "ask",
        reason: "Pushes need a human",
      },
      {
        id: "allow-tests",
        on: "PreToolUse",
        if: "Bash(npm test*)",
        decide: "allow",
        reason: "Tests are safe",
      },
      {
        id: "try-ls",
        on: "PreToolUse",
        mode: "shadow",
        if: "Bash(ls *)",
        decide: "deny",
        reason: "would deny ls",
      },
      {
        id: "try-judge",
        on: "PreToolUse",
        mode: "shadow",
        matcher: "Glob",
        // Timeouts far above a loopback call's, so that a call slowed by a busy host is no timeout;
        // the cases of a timeout give the hook a short one of its own (x-hookgate-timeout).
        prompt: { text: "ok? $ARGUMENTS", model: "fast", timeoutMs: 10_000, onError: "allow" },
      },
      {
        id: "judge-writes",
        on: "PreToolUse",
        matcher: "Write",
        prompt: { text: "ok? $ARGUMENTS", model: "fast", timeoutMs: 10_000, onError: "ask" },
      },
      {
        id: "team-server",
        on: "PreToolUse",
        matcher: "mcp__.*",
        forward: { url: `${team.url}/hook`, timeoutMs: 2000, onError: "deny" },
      },
      {
        id: "rewriter",
        on: "PreToolUse",
        matcher: "WebSearch",
        forward: { url: `${team.url}/rewrite`, timeoutMs: 2000, onError: "deny" },
      },
      {
        id: "hung",
        on: "PreToolUse",
        matcher: "NotebookEdit",
        forward: { url: `${team.url}/hang`, timeoutMs: 60_000, onError: "deny" },
      },
      {
        id: "refused",
        on: "PreToolUse",
        matcher: "WebFetch",
        forward: { url: "http://10.9.9.9/hook", timeoutMs: 2000, onError: "deny" },
      },
      {
        id: "finish-tests",
        on: ["Stop", "stop"],
        where: { stop_hook_active: false },
        decide: "block",
        reason: "Run the tests first",
      },
      { id: "repo-context", on: "UserPromptSubmit", context: "This repository uses pnpm." },
      {
        // Past the 100,000 bytes deepagents reads: its answer's reason is cut to fit.
        id: "long-reason",
        on: "PreToolUse",
        matcher: "Grep",
        decide: "deny",
        reason: "Searching is off in this repository. ".repeat(3000),
      },
      { id: "legacy-execute", on: "tool.use", matcher: "execute", decide: "deny", reason: "no shell" },
    ],
  };
  const dir = tempDir("audit");
  writeFileSync(join(dir, "policy.json"), JSON.stringify(policy));
  server = await startServerProcess(join(dir, "policy.json"), { ANTHROPIC_API_KEY: "sk-ant-test" });
});
afterAll(async () => {
  await server?.stop();
  await team?.close();
  await model?.close();
});

async function post(path: string, body: string, headers: Record<string, string> = {}) {
  const res = await fetch(`${server.url}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${TOKEN}`, ...headers },
    body,
  });
  await res.text();
  const id = res.headers.get("x-hookgate-decision-id");
  return server.waitForLine((l) => l.msg === "decision" && l.decisionId === id);
}

/** A hook whose client hangs up once the team's server has it: no answer to read an id from. */
async function hangUp(path: string, body: string) {
  const left = new AbortController();
  const sent = fetch(`${server.url}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${TOKEN}` },
    body,
    signal: left.signal,
  }).catch(() => undefined);
  const before = team.received.length;
  while (!team.received.slice(before).some((r) => r.url === "/hang"))
    await new Promise((r) => setTimeout(r, 10));
  left.abort();
  await sent;
  return server.waitForLine((l) => l.msg === "decision" && l.clientLeft === true);
}

const cc = (event: string, extra: Record<string, unknown>) =>
  JSON.stringify({
    session_id: "s1",
    transcript_path: "/t.jsonl",
    cwd: "/p",
    hook_event_name: event,
    ...extra,
  });
const pre = (tool: string, input: Record<string, unknown>) =>
  cc("PreToolUse", { tool_name: tool, tool_input: input });

const dc = (event: string, extra: Record<string, unknown>) =>
  JSON.stringify({ session_id: "d1", cwd: "/p", hook_event_name: event, ...extra });

/** What every audit line has, then what a judged event adds. */
const ALWAYS = [
  "time",
  "level",
  "msg",
  "decisionId",
  "policy",
  "rules",
  "shadow",
  "pending",
  "notify",
  "decision",
  "latencyMs",
];
const JUDGED = [...ALWAYS, "team", "client", "event", "sessionId"];
const TOOL = [...JUDGED, "tool", "toolInput"];

interface Case {
  name: string;
  path?: string;
  body: string;
  headers?: Record<string, string>;
  before?: () => void;
  /** Its client hangs up before the answer. */
  hangUp?: boolean;
  keys: string[];
  expected: Record<string, unknown>;
}

/** A 1 s hook timeout: a deadline of 0.75 s for the model that does not answer. */
const SHORT_HOOK_TIMEOUT = { "x-hookgate-timeout": "1" };

const CASES: Case[] = [
  {
    name: "allow",
    body: pre("Bash", { command: "npm test" }),
    keys: [...TOOL, "reason"],
    expected: { decision: "allow", rules: ["allow-tests"] },
  },
  {
    name: "deny, with a sink to notify",
    body: pre("Bash", { command: "rm -rf /" }),
    keys: [...TOOL, "reason"],
    expected: { decision: "deny", rules: ["no-rm-root"], notify: ["security"] },
  },
  {
    name: "ask",
    body: pre("Bash", { command: "git push origin main" }),
    keys: [...TOOL, "reason"],
    expected: { decision: "ask" },
  },
  {
    name: "no rule applies",
    body: pre("Read", { file_path: "/p/a" }),
    keys: TOOL,
    expected: { decision: "none", rules: [] },
  },
  {
    name: "block",
    body: cc("Stop", { stop_hook_active: false }),
    keys: [...JUDGED, "reason"],
    expected: { decision: "block" },
  },
  {
    name: "context",
    body: cc("UserPromptSubmit", { prompt: "hello password=hunter22" }),
    keys: [...JUDGED, "prompt"],
    expected: { decision: "none", rules: ["repo-context"], prompt: "hello password=[masked]" },
  },
  {
    name: "a static shadow rule",
    body: pre("Bash", { command: "ls -la" }),
    keys: TOOL,
    expected: { decision: "none", shadow: [{ rule: "try-ls", decision: "deny" }] },
  },
  {
    name: "a prompt rule",
    before: () => model.script({ verdict: { ok: false, reason: "adds a key" } }),
    body: pre("Write", { file_path: "/p/a", content: "x" }),
    keys: [...TOOL, "reason"],
    expected: {
      decision: "deny",
      pending: [expect.objectContaining({ outcome: "OK", budget: { used: 1, limit: 1000 } })],
    },
  },
  {
    name: "a prompt rule whose model is called again",
    before: () => {
      let calls = 0;
      model.script(() =>
        calls++ === 0
          ? { status: 529, body: '{"type":"error"}', headers: { "retry-after-ms": "0" } }
          : { verdict: { ok: true, reason: "fine" } },
      );
    },
    body: pre("Write", { file_path: "/p/b", content: "x" }),
    keys: TOOL,
    expected: {
      decision: "none",
      pending: [expect.objectContaining({ rule: "judge-writes", outcome: "OK", attempts: 2 })],
    },
  },
  {
    name: "a shadow prompt rule",
    before: () => model.script({ verdict: { ok: false, reason: "no globs" } }),
    body: pre("Glob", { pattern: "*" }),
    keys: TOOL,
    expected: {
      decision: "none",
      shadow: [
        expect.objectContaining({ rule: "try-judge", decision: "deny", outcome: "OK", model: "fast" }),
      ],
    },
  },
  {
    name: "a shadow prompt rule whose model times out",
    before: () => model.script({ hang: true }),
    body: pre("Glob", { pattern: "**" }),
    headers: SHORT_HOOK_TIMEOUT,
    keys: TOOL,
    expected: { shadow: [expect.objectContaining({ outcome: "JUDGE_TIMEOUT", detail: expect.any(String) })] },
  },
  {
    name: "a model timeout",
    before: () => model.script({ hang: true }),
    body: pre("Write", { file_path: "/p/c", content: "y" }),
    headers: SHORT_HOOK_TIMEOUT,
    keys: [...TOOL, "reason"],
    expected: {
      decision: "ask",
      pending: [expect.objectContaining({ outcome: "JUDGE_TIMEOUT", onError: "ask" })],
    },
  },
  {
    name: "a forward rule",
    body: pre("mcp__x__y", { a: 1 }),
    keys: [...TOOL, "reason"],
    expected: {
      decision: "deny",
      pending: [{ rule: "team-server", action: "forward", ms: expect.any(Number), outcome: "OK" }],
    },
  },
  {
    name: "a forward rule's rewrite",
    body: pre("WebSearch", { query: "hookgate" }),
    keys: [...TOOL, "updatedInput"],
    expected: {
      decision: "allow",
      toolInput: { query: "hookgate" },
      updatedInput: { query: "hookgate", api_key: "[masked]" },
    },
  },
  {
    name: "egress refused",
    body: pre("WebFetch", { url: "https://example.com" }),
    keys: [...TOOL, "reason"],
    expected: {
      decision: "deny",
      pending: [expect.objectContaining({ outcome: "EGRESS_NOT_ALLOWLISTED", detail: expect.any(String) })],
    },
  },
  {
    name: "bad JSON",
    body: "{not json",
    keys: [...ALWAYS, "client", "reason", "error"],
    expected: { error: "MALFORMED_JSON" },
  },
  {
    name: "oversized",
    body: pre("Bash", { command: "x".repeat(5000) }),
    keys: [...ALWAYS, "client", "event", "reason", "error"],
    expected: { error: "BODY_TOO_LARGE", event: "PreToolUse" },
  },
  {
    name: "an unknown event",
    body: cc("Frobnicate", {}),
    keys: JUDGED,
    expected: { event: "Frobnicate", decision: "none" },
  },
  {
    name: "a bad token",
    body: pre("Bash", { command: "ls" }),
    headers: { authorization: "Bearer not-a-token" },
    keys: [...ALWAYS, "client", "event", "sessionId", "tool", "toolInput", "reason", "error"],
    expected: { error: "AUTH_UNKNOWN_TOKEN", decision: "deny" },
  },
  {
    name: "a forward whose client hung up",
    body: pre("NotebookEdit", { notebook_path: "/p/a.ipynb", new_source: "x" }),
    hangUp: true,
    keys: [...TOOL, "reason", "clientLeft"],
    expected: {
      decision: "deny",
      clientLeft: true,
      pending: [{ rule: "hung", action: "forward", outcome: "CLIENT_LEFT", onError: "deny" }],
    },
  },
  {
    name: "an unknown client route",
    path: "/v1/hooks/frob",
    body: pre("Bash", { command: "ls" }),
    keys: [...ALWAYS, "event", "reason", "error"],
    expected: { error: "UNKNOWN_CLIENT_ROUTE" },
  },
  {
    name: "deepcode, asked",
    path: "/v1/hooks/deepcode",
    body: dc("PreToolUse", { tool_name: "Bash", tool_input: { command: "git push x" } }),
    keys: [...TOOL, "reason", "clientDecision"],
    expected: { client: "deepcode", decision: "ask", clientDecision: "none" },
  },
  {
    name: "deepagents, denied",
    path: "/v1/hooks/deepagents",
    body: pre("Bash", { command: "rm -rf /" }),
    keys: [...TOOL, "reason"],
    expected: { client: "deepagents", decision: "deny" },
  },
  {
    name: "deepagents, its answer cut to fit",
    path: "/v1/hooks/deepagents",
    body: pre("Grep", { pattern: "x" }),
    keys: [...TOOL, "reason", "answerTruncated"],
    expected: { client: "deepagents", decision: "deny", answerTruncated: true, rules: ["long-reason"] },
  },
  {
    name: "deepagents legacy",
    path: "/v1/hooks/deepagents-legacy",
    body: JSON.stringify({
      event: "tool.result",
      tool_name: "read_file",
      tool_id: "c1",
      tool_args: { path: "a" },
    }),
    keys: [...ALWAYS, "team", "client", "event", "tool", "toolInput"],
    expected: { client: "deepagents-legacy", decision: "none" },
  },
  {
    // deepagents' legacy hooks read nothing back: the rule is listed, and nothing was sent.
    name: "deepagents legacy, a deny rule applies",
    path: "/v1/hooks/deepagents-legacy",
    body: JSON.stringify({
      event: "tool.use",
      tool_name: "execute",
      tool_id: "c2",
      tool_args: { command: "ls" },
    }),
    keys: [...ALWAYS, "team", "client", "event", "tool", "toolInput"],
    expected: { client: "deepagents-legacy", decision: "none", rules: ["legacy-execute"] },
  },
];

/** Claude Code's captured requests, each as it came, to `/v1/hooks`. */
const FIXTURE_CASES: Case[] = readdirSync(FIXTURES, { withFileTypes: true })
  .filter((d) => d.isDirectory())
  .flatMap((d) =>
    readdirSync(join(FIXTURES, d.name))
      .filter((f) => f.endsWith(".json") && !f.endsWith(".headers.json"))
      .map((f): Case => {
        const body = readFileSync(join(FIXTURES, d.name, f), "utf8");
        const event = JSON.parse(body);
        return {
          name: `Claude Code ${d.name} ${event.hook_event_name}`,
          body,
          keys: [
            ...JUDGED,
            ...(event.tool_name === undefined ? [] : ["tool", "toolInput"]),
            ...(typeof event.prompt === "string" ? ["prompt"] : []),
            ...(event.hook_event_name === "Stop" ? ["reason"] : []),
          ],
          expected: { client: "claude-code", team: "platform", event: event.hook_event_name },
        };
      }),
  );

const seen: Record<string, unknown>[] = [];

describe("the audit line of each kind of outcome", () => {
  it.each([...CASES, ...FIXTURE_CASES])("$name: documented fields, nothing else", async (c) => {
    c.before?.();
    const line = await (c.hangUp ? hangUp : post)(c.path ?? "/v1/hooks/claude-code", c.body, c.headers);
    seen.push(line);
    const parsed = AUDIT_LINE.safeParse(line);
    expect(parsed.error?.issues ?? [], JSON.stringify(line)).toEqual([]);
    expect(Object.keys(line).sort()).toEqual([...c.keys].sort());
    expect(line).toMatchObject(c.expected);
  });

  it("uses every documented field somewhere, and README.md documents each field of the schema", () => {
    const names = new Set<string>();
    for (const line of seen) {
      for (const key of Object.keys(line)) names.add(key);
      for (const list of ["pending", "shadow"] as const)
        for (const entry of line[list] as Record<string, unknown>[])
          for (const key of Object.keys(entry)) names.add(`${list}[].${key}`);
    }
    expect([...names].sort()).toEqual([...AUDIT_FIELD_NAMES].sort());
    expect(documentedAuditFields().sort()).toEqual([...AUDIT_FIELD_NAMES].sort());
  });
});

/** The field names README.md's "Audit log" tables list in their first column. */
function documentedAuditFields(): string[] {
  const readme = readFileSync(join(ROOT, "README.md"), "utf8");
  const start = readme.indexOf("\n## Audit log\n");
  const section = readme.slice(start, readme.indexOf("\n## ", start + 1));
  return [...section.matchAll(/^\| `([\w.[\]]+)` \|/gm)].map((m) => m[1] as string);
}

/**
 * The test vectors of reference/clients.md §11 that concern deciding and rendering, sent to a
 * real `hookgate serve` process over loopback, each with the exact answer its client expects.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type LoopbackServer, loopbackServer } from "../support/loopback.js";
import { type ServerProcess, startServerProcess } from "../support/process.js";
import { tempDir } from "../support/temp.js";

const TOKEN = "vector-token";
const policy = {
  version: 1,
  auth: { tokens: [{ team: "eng", env: "VECTOR_TOKEN" }], onFailure: "deny" },
  rules: [
    {
      id: "tv01",
      on: "PreToolUse",
      matcher: "Bash",
      if: "Bash(rm -rf /*)",
      decide: "deny",
      reason: "rm -rf / is forbidden",
    },
    {
      id: "tv02",
      on: "PreToolUse",
      matcher: "Bash",
      if: "Bash(npm test)",
      decide: "allow",
      reason: "ci-safe",
    },
    {
      id: "tv03",
      on: "PreToolUse",
      matcher: "Bash",
      where: { "tool_input.command": { regex: "^git push\\b.*--force" } },
      decide: "ask",
      reason: "force push",
    },
    {
      id: "tv04",
      on: "PreToolUse",
      matcher: "Write",
      where: { "tool_input.file_path": { glob: "**/.env" } },
      decide: "allow",
      updatedInput: { file_path: "/p/.env.example", content: "X" },
    },
    {
      id: "tv14",
      on: "Stop",
      where: { stop_hook_active: false },
      decide: "block",
      reason: "Run npm test and report results before finishing.",
    },
    {
      id: "tv17",
      on: "UserPromptSubmit",
      where: { prompt: { regex: "AKIA[0-9A-Z]{16}" } },
      decide: "block",
      reason: "Prompt contains a credential",
    },
    {
      id: "tv18",
      on: "UserPromptSubmit",
      where: { prompt: { not: { regex: "AKIA" } } },
      context: "Repo policy: use pnpm",
    },
    {
      id: "tv16",
      on: "Stop",
      where: { last_assistant_message: "Done, with notes." },
      context: "Summarise the notes before stopping.",
    },
    { id: "tv19", on: "PermissionRequest", if: "Bash(npm run lint)", decide: "allow" },
    {
      id: "tv20",
      on: "PermissionRequest",
      matcher: "Bash",
      where: { tool_desc: { contains: "rm -rf" } },
      decide: "deny",
      reason: "no",
    },
    {
      id: "tv23",
      on: "PreCompact",
      matcher: "manual",
      context: "Preserve every API-contract decision verbatim.",
    },
    {
      id: "tv27",
      on: "PostToolUse",
      where: { "tool_response.stdout": { contains: "3 errors" } },
      decide: "block",
      reason: "Lint failed: 3 errors",
    },
    { id: "tv31", on: "PreToolUse", matcher: "Bash", if: "Bash(ls *)", decide: "allow" },
  ],
};

const common = { session_id: "s", transcript_path: "/t.jsonl", cwd: "/p", permission_mode: "default" };
const cc = (event: string, fields: Record<string, unknown>) => ({
  ...common,
  hook_event_name: event,
  ...fields,
});
const bash = (command: string) =>
  cc("PreToolUse", { tool_name: "Bash", tool_input: { command }, tool_use_id: "toolu_1" });

interface Vector {
  id: string;
  route?: string;
  body: unknown;
  auth?: string;
  contentType?: string;
  expected: unknown;
}

const json = (value: unknown) => ({ type: "application/json", value });
const EMPTY = { type: null, value: "" };

const vectors: Vector[] = [
  {
    id: "TV-01",
    body: bash("rm -rf /"),
    expected: json({
      hookSpecificOutput: {
        hookEventName: "PreToolUse",
        permissionDecision: "deny",
        permissionDecisionReason: "rm -rf / is forbidden",
      },
    }),
  },
  {
    id: "TV-02",
    body: bash("npm test"),
    expected: json({
      hookSpecificOutput: {
        hookEventName: "PreToolUse",
        permissionDecision: "allow",
        permissionDecisionReason: "ci-safe",
      },
    }),
  },
  {
    id: "TV-03",
    body: bash("git push --force origin main"),
    expected: json({
      hookSpecificOutput: {
        hookEventName: "PreToolUse",
        permissionDecision: "ask",
        permissionDecisionReason: "force push",
      },
    }),
  },
  {
    id: "TV-04",
    body: cc("PreToolUse", {
      tool_name: "Write",
      tool_input: { file_path: "/p/.env", content: "X" },
      tool_use_id: "t",
    }),
    expected: json({
      hookSpecificOutput: {
        hookEventName: "PreToolUse",
        permissionDecision: "allow",
        updatedInput: { file_path: "/p/.env.example", content: "X" },
      },
    }),
  },
  { id: "TV-05", body: bash("echo hello"), expected: EMPTY },
  {
    id: "TV-14",
    body: cc("Stop", { stop_hook_active: false, last_assistant_message: "Done." }),
    expected: json({ decision: "block", reason: "Run npm test and report results before finishing." }),
  },
  {
    id: "TV-15",
    body: cc("Stop", { stop_hook_active: true, last_assistant_message: "Done." }),
    expected: EMPTY,
  },
  {
    // Claude Code 2.1.112 has no Stop variant of hookSpecificOutput and fails the whole answer.
    id: "TV-16",
    body: cc("Stop", { stop_hook_active: true, last_assistant_message: "Done, with notes." }),
    expected: EMPTY,
  },
  {
    id: "TV-17",
    body: cc("UserPromptSubmit", { prompt: "paste AWS key AKIAIOSFODNN7EXAMPLE" }),
    expected: json({ decision: "block", reason: "Prompt contains a credential" }),
  },
  {
    id: "TV-18",
    body: cc("UserPromptSubmit", { prompt: "add a route" }),
    expected: json({
      hookSpecificOutput: { hookEventName: "UserPromptSubmit", additionalContext: "Repo policy: use pnpm" },
    }),
  },
  {
    id: "TV-19",
    body: cc("PermissionRequest", {
      tool_name: "Bash",
      tool_input: { command: "npm run lint" },
      permission_suggestions: [],
    }),
    expected: json({
      hookSpecificOutput: {
        hookEventName: "PermissionRequest",
        decision: { behavior: "allow" },
        permissionDecision: "allow",
      },
    }),
  },
  {
    id: "TV-20",
    body: { hook_event_name: "PermissionRequest", cwd: "/p", tool_name: "Bash", tool_desc: "rm -rf build" },
    expected: json({
      hookSpecificOutput: {
        hookEventName: "PermissionRequest",
        decision: { behavior: "deny", message: "no" },
        permissionDecision: "deny",
        permissionDecisionReason: "no",
      },
    }),
  },
  {
    id: "TV-21 PreToolUse",
    body: bash("npm test"),
    auth: "Bearer ",
    expected: json({
      systemMessage: expect.stringMatching(
        /empty Bearer token: list the token's variable .* in the hook's allowedEnvVars/,
      ),
      hookSpecificOutput: {
        hookEventName: "PreToolUse",
        permissionDecision: "deny",
        permissionDecisionReason: expect.stringContaining("AUTH_EMPTY_TOKEN"),
      },
    }),
  },
  {
    id: "TV-21 Notification",
    body: cc("Notification", { message: "m", notification_type: "idle_prompt" }),
    auth: "Bearer ",
    expected: json({ systemMessage: expect.stringContaining("AUTH_EMPTY_TOKEN") }),
  },
  { id: "TV-22", body: cc("PreCompact", { trigger: "auto", custom_instructions: "" }), expected: EMPTY },
  {
    // clients.md's TV-23 says a plain-text body; Claude Code 2.1.112 and 2.1.332 fail a hook whose
    // body is not a JSON object and append a JSON one raw (render.ts renderPreCompact).
    id: "TV-23",
    body: cc("PreCompact", { trigger: "manual", custom_instructions: null }),
    expected: json({ reason: "Preserve every API-contract decision verbatim." }),
  },
  { id: "TV-24", body: cc("SessionEnd", { reason: "prompt_input_exit" }), expected: EMPTY },
  {
    id: "TV-25",
    body: cc("Notification", {
      notification_type: "idle_prompt",
      message: "Claude is waiting for your input",
    }),
    expected: EMPTY,
  },
  {
    id: "TV-27",
    body: cc("PostToolUse", {
      tool_name: "Bash",
      tool_input: { command: "npm run lint" },
      tool_response: { stdout: "3 errors" },
      tool_use_id: "t",
    }),
    expected: json({ decision: "block", reason: "Lint failed: 3 errors" }),
  },
  {
    id: "TV-31",
    body: {
      hook_event_name: "PreToolUse",
      cwd: "/p",
      tool_name: "Bash",
      tool_input: { command: "ls" },
      tool_desc: "ls",
    },
    expected: json({ hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: "allow" } }),
  },
  {
    id: "TV-33",
    route: "/v1/hooks/deepagents",
    body: {
      session_id: "t1",
      transcript_path: "/x.jsonl",
      cwd: "/p",
      hook_event_name: "PreToolUse",
      permission_mode: "default",
      tool_name: "Bash",
      tool_input: { command: "rm -rf /" },
      tool_use_id: "c1",
    },
    expected: json({
      hookSpecificOutput: {
        hookEventName: "PreToolUse",
        permissionDecision: "deny",
        permissionDecisionReason: "rm -rf / is forbidden",
      },
    }),
  },
  {
    id: "TV-35",
    body: `{"event": "tool.result", "tool_name": "read_file", "tool_id": "c9", "tool_args": {"file_path": "a.py"}, "tool_status": "success", "tool_output": "${"x".repeat(1981)}\\u2026[output truncated]"}`,
    expected: EMPTY,
  },
];

let server: ServerProcess;

beforeAll(async () => {
  const dir = tempDir("vectors");
  writeFileSync(join(dir, "policy.json"), JSON.stringify(policy));
  server = await startServerProcess(join(dir, "policy.json"), { VECTOR_TOKEN: TOKEN });
});
afterAll(async () => {
  await server?.stop();
});

describe("clients.md §11 test vectors against a running gateway", () => {
  it.each(vectors)("$id", async ({ route, body, auth, contentType, expected }) => {
    const res = await fetch(`${server.url}${route ?? "/v1/hooks"}`, {
      method: "POST",
      body: typeof body === "string" ? body : JSON.stringify(body),
      headers: {
        "content-type": contentType ?? "application/json",
        authorization: auth ?? `Bearer ${TOKEN}`,
      },
      redirect: "manual",
    });
    expect(res.status).toBe(200);
    expect(res.headers.get("x-hookgate-decision-id")).toBeTruthy();
    expect(res.headers.get("x-hookgate-policy")).toMatch(/^[0-9a-f]{16}$/);
    const text = await res.text();
    const want = expected as { type: string | null; value: unknown };
    expect(res.headers.get("content-type")).toBe(want.type);
    if (want.type === "application/json") {
      expect(JSON.parse(text)).toEqual(want.value);
      expect(text).not.toMatch(/"approve"/);
    } else {
      expect(text).toBe(want.value);
    }
  });

  it("stays healthy after every vector", async () => {
    const res = await fetch(`${server.url}/healthz`);
    expect(res.status).toBe(200);
  });
});

/**
 * The answers of TV-06…TV-13, TV-26 and TV-34 are those of a badly behaved hook server. hookgate
 * meets them as a forward rule's team server, and must read each as the client that sent the
 * event would have read it, then answer that client in its own shape, always a 2xx.
 */
describe("clients.md §11 server answers, given by a forward rule's team server", () => {
  const DENY_BODY = JSON.stringify({
    hookSpecificOutput: {
      hookEventName: "PreToolUse",
      permissionDecision: "deny",
      permissionDecisionReason: "not from this team",
    },
  });
  const replies: Record<string, { status: number; body: string }> = {
    tv06: { status: 200, body: "OK" },
    tv07: { status: 403, body: DENY_BODY },
    tv08: { status: 500, body: "" },
    tv10: { status: 200, body: JSON.stringify({ hookSpecificOutput: { permissionDecision: "deny" } }) },
    tv11: {
      status: 200,
      body: JSON.stringify({ hookSpecificOutput: { hookEventName: "PostToolUse", additionalContext: "x" } }),
    },
    tv12: { status: 200, body: JSON.stringify({ decision: "block", reason: "nope" }) },
    tv13: {
      status: 200,
      body: JSON.stringify({
        hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: "approve" },
      }),
    },
    tv26: {
      status: 200,
      body: JSON.stringify({
        hookSpecificOutput: {
          hookEventName: "PostToolUse",
          updatedToolOutput: { stdout: "token=[redacted]", stderr: "", interrupted: false, isImage: false },
        },
      }),
    },
    tv34: { status: 200, body: JSON.stringify({ decision: "approve" }) },
  };

  let team: LoopbackServer;
  let gateway: ServerProcess;

  beforeAll(async () => {
    team = await loopbackServer((req, res) => {
      const reply = replies[req.url.slice(1)] ?? { status: 404, body: "" };
      res.writeHead(reply.status, { "content-type": "application/json" }).end(reply.body);
    });
    const dir = tempDir("vectors-forward");
    writeFileSync(
      join(dir, "policy.json"),
      JSON.stringify({
        version: 1,
        egress: { allowCidrs: ["127.0.0.0/8"] },
        rules: Object.keys(replies).map((id) => ({
          id,
          on: ["PreToolUse", "PostToolUse"],
          where: { cwd: `/${id}` },
          forward: { url: `${team.url}/${id}`, timeoutMs: 5000, onError: "deny" },
        })),
      }),
    );
    gateway = await startServerProcess(join(dir, "policy.json"));
  });
  afterAll(async () => {
    await gateway?.stop();
    await team?.close();
  });

  const preToolUse = (id: string) =>
    cc("PreToolUse", { cwd: `/${id}`, tool_name: "Bash", tool_input: { command: "ls" }, tool_use_id: "t" });
  const deny = (reason: unknown) => ({
    hookSpecificOutput: {
      hookEventName: "PreToolUse",
      permissionDecision: "deny",
      permissionDecisionReason: reason,
    },
  });
  /** onError's deny, naming why the team server's answer was not one the client takes. */
  const failed = (code: string) => deny(expect.stringContaining(code));

  it.each([
    // Claude Code: a non-JSON, non-2xx, mis-shaped or mis-echoed answer is a failed hook.
    { id: "tv06", client: "claude-code", expected: failed("FORWARD_NOT_JSON") },
    { id: "tv07", client: "claude-code", expected: failed("FORWARD_HTTP_STATUS") },
    { id: "tv08", client: "claude-code", expected: failed("FORWARD_HTTP_STATUS") },
    { id: "tv10", client: "claude-code", expected: failed("FORWARD_OFF_SCHEMA") },
    { id: "tv11", client: "claude-code", expected: failed("FORWARD_WRONG_EVENT") },
    { id: "tv12", client: "claude-code", expected: deny("nope") },
    { id: "tv13", client: "claude-code", expected: failed("FORWARD_OFF_SCHEMA") },
    // deepcode blocks on a 4xx with the body's decision, and checks no schema or event name.
    { id: "tv07", client: "deepcode", expected: deny("not from this team") },
    { id: "tv10", client: "deepcode", expected: deny(expect.stringContaining('"tv10"')) },
    { id: "tv12", client: "deepcode", expected: deny("nope") },
    // deepagents: block maps to deny; `approve` invalidates the whole answer.
    { id: "tv12", client: "deepagents", expected: deny("nope") },
    { id: "tv34", client: "deepagents", expected: failed("FORWARD_OFF_SCHEMA") },
  ])("$id to $client", async ({ id, client, expected }) => {
    const res = await fetch(`${gateway.url}/v1/hooks/${client}`, {
      method: "POST",
      body: JSON.stringify(preToolUse(id)),
      headers: { "content-type": "application/json" },
    });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("application/json");
    const text = await res.text();
    expect(JSON.parse(text)).toEqual(expected);
    expect(text).not.toMatch(/"approve"/);
  });

  it("TV-26: passes no updatedToolOutput on, which Claude Code 2.1.112 strips", async () => {
    const res = await fetch(`${gateway.url}/v1/hooks/claude-code`, {
      method: "POST",
      body: JSON.stringify(
        cc("PostToolUse", {
          cwd: "/tv26",
          tool_name: "Bash",
          tool_input: { command: "env" },
          tool_response: { stdout: "token=abc", stderr: "", interrupted: false, isImage: false },
          tool_use_id: "t",
        }),
      ),
      headers: { "content-type": "application/json" },
    });
    expect(res.status).toBe(200);
    expect(await res.text()).toBe("");
  });
});

/**
 * The test vectors of reference/clients.md §11 that concern deciding and rendering, sent to a
 * real `hookgate serve` process over loopback, each with the exact answer its client expects.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
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

/**
 * The README's worked example for prompt and forward rules, run for real: `hookgate serve` with
 * examples/policy.remote.json, examples/team-hook-server.mjs as the team's hook server, and the
 * loopback model server standing in for api.anthropic.com and the team's server on a free port (the
 * only changes to the policy).
 */
import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ModelServer, startModelServer } from "../support/model-server.js";
import { ROOT, runCli, type ServerProcess, startServerProcess } from "../support/process.js";
import { tempDir } from "../support/temp.js";

let model: ModelServer;
let team: ChildProcess;
let gateway: ServerProcess;
let teamPort = 0;

beforeAll(async () => {
  model = await startModelServer();
  team = spawn(process.execPath, [join(ROOT, "examples/team-hook-server.mjs")], {
    // A free port, which the server's first line names.
    env: { PATH: process.env.PATH ?? "", TEAM_HOOK_TOKEN: "team-secret", PORT: "0" },
    stdio: ["ignore", "pipe", "inherit"],
  });
  const [line] = await once(team.stdout as NodeJS.ReadableStream, "data");
  teamPort = Number(/127\.0\.0\.1:(\d+)\/hook/.exec(String(line))?.[1]);
  expect(teamPort).toBeGreaterThan(0);

  const policy = JSON.parse(readFileSync(join(ROOT, "examples/policy.remote.json"), "utf8"));
  policy.models.fast.url = model.anthropicUrl;
  policy.egress.allowedHttpHookUrls = [`http://127.0.0.1:${teamPort}/*`, model.anthropicUrl];
  policy.rules[1].forward.url = `http://127.0.0.1:${teamPort}/hook`;
  const dir = tempDir("remote");
  writeFileSync(join(dir, "policy.json"), JSON.stringify(policy));
  gateway = await startServerProcess(join(dir, "policy.json"), {
    ANTHROPIC_API_KEY: "sk-ant-test",
    TEAM_HOOK_TOKEN: "team-secret",
  });
});
afterAll(async () => {
  await gateway?.stop();
  team?.kill();
  await model?.close();
});

const hook = async (tool: string, input: Record<string, unknown>) => {
  const res = await fetch(`${gateway.url}/v1/hooks/claude-code`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: "Bearer hookgate-dev-token" },
    body: JSON.stringify({
      session_id: "s",
      transcript_path: "/t",
      cwd: "/p",
      hook_event_name: "PreToolUse",
      tool_name: tool,
      tool_input: input,
    }),
  });
  const text = await res.text();
  return text === "" ? "" : JSON.parse(text);
};

describe("the remote example", () => {
  it("passes hookgate check as shipped", async () => {
    const { code, stdout } = await runCli(["check", "examples/policy.remote.json"], "", {
      ANTHROPIC_API_KEY: "x",
      TEAM_HOOK_TOKEN: "y",
    });
    expect(code).toBe(0);
    expect(stdout).toMatch(/valid, 2 rules/);
  });

  it("asks the model about a write and denies it with the model's reason", async () => {
    model.script({ verdict: { ok: false, reason: "adds an AWS secret key to config.ts" } });
    const body = await hook("Write", { file_path: "/p/config.ts", content: "AWS_SECRET=..." });
    expect(body.hookSpecificOutput.permissionDecision).toBe("deny");
    expect(body.hookSpecificOutput.permissionDecisionReason).toMatch(/adds an AWS secret key to config\.ts$/);
    expect(model.requests.at(-1)?.headers["x-api-key"]).toBe("sk-ant-test");
  });

  it("relays an MCP call to the team's hook server, which denies a repository deletion", async () => {
    const body = await hook("mcp__github__delete_repository", { repo: "acme/app" });
    expect(body.hookSpecificOutput).toEqual({
      hookEventName: "PreToolUse",
      permissionDecision: "deny",
      permissionDecisionReason: "Repositories are deleted by a person, never by an agent.",
    });
    expect(await hook("mcp__github__create_issue", { title: "x" })).toBe("");
  });

  it("counts judge calls, cache hits and forwards in /metrics", async () => {
    model.script({ verdict: { ok: true, reason: "fine" } });
    const body = { file_path: "/p/metrics.ts", content: "x" };
    await hook("Write", body);
    await hook("Write", body);
    const text = await (await fetch(`${gateway.url}/metrics`)).text();
    expect(text).toMatch(/hookgate_judge_calls_total\{model="fast",outcome="OK"\} \d+/);
    expect(text).toMatch(/hookgate_judge_cache_hits_total\{model="fast"\} [1-9]/);
    expect(text).toMatch(/hookgate_forward_calls_total\{outcome="OK"\} \d+/);
  });
});

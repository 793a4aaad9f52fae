import { describe, expect, it } from "vitest";
import { createBrokenConfigApp } from "../../src/http/broken-config.js";
import { jsonOf } from "../support/app.js";

const logs: unknown[] = [];
const app = createBrokenConfigApp(
  "$.rules[0].decide: must be one of …",
  { log: (...a) => logs.push(a) },
  () => "id-1",
);
const post = (path: string, body: unknown) =>
  app.request(path, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });

describe("a gateway whose configuration is invalid", () => {
  it("denies PreToolUse fail-closed with a 2xx naming the problem", async () => {
    const res = await post("/v1/hooks", {
      hook_event_name: "PreToolUse",
      tool_name: "Bash",
      tool_input: { command: "ls" },
    });
    expect(res.status).toBe(200);
    expect(res.headers.get("x-hookgate-error")).toBe("CONFIG_INVALID");
    const body = await jsonOf(res);
    expect(body.hookSpecificOutput.permissionDecision).toBe("deny");
    expect(body.systemMessage).toMatch(/configuration is invalid.*\$\.rules\[0\]\.decide/);
  });

  it("carries a hook answer's headers, and closes a connection whose body it could not read whole", async () => {
    const whole = await post("/v1/hooks", { hook_event_name: "Stop" });
    expect(Object.fromEntries(whole.headers)).toEqual({
      "x-hookgate-decision-id": "id-1",
      "x-hookgate-policy": "invalid",
      "x-hookgate-error": "CONFIG_INVALID",
      "cache-control": "no-store",
      "content-type": "application/json",
    });
    // A client that goes away part way: the rest of its body was never read.
    const cut = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(new TextEncoder().encode('{"hook_event_name":"PreToolUse",'));
        controller.error(new Error("client went away"));
      },
    });
    const res = await app.request("/v1/hooks", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: cut,
      duplex: "half",
    } as RequestInit);
    expect(res.status).toBe(200);
    expect(res.headers.get("connection")).toBe("close");
    expect(res.headers.get("x-hookgate-error")).toBe("CONFIG_INVALID");
  });

  it("answers other events with no decision and the message, and unknown bodies with a block", async () => {
    expect(await jsonOf(await post("/v1/hooks/claude-code", { hook_event_name: "Stop" }))).toEqual({
      systemMessage: expect.stringMatching(/CONFIG_INVALID/),
    });
    expect((await jsonOf(await post("/v1/hooks", { nothing: 1 }))).decision).toBe("block");
  });

  it("answers an event encoded twice (a JSON string holding it) in that event's shape, as the working gateway does", async () => {
    const stop = JSON.stringify({ session_id: "s", hook_event_name: "Stop" });
    // Blocked, a Stop would keep the agent working.
    expect(await jsonOf(await post("/v1/hooks/claude-code", stop))).toEqual({
      systemMessage: expect.stringMatching(/CONFIG_INVALID/),
    });
    const pre = JSON.stringify({ hook_event_name: "PermissionRequest", tool_name: "Bash" });
    const body = await jsonOf(await post("/v1/hooks/claude-code", pre));
    expect(body.hookSpecificOutput.decision.behavior).toBe("deny");
  });

  it("denies on a mistyped deeper hook path and under a prefix too, never a non-2xx an agent would let through", async () => {
    const event = { hook_event_name: "PreToolUse", tool_name: "Bash", tool_input: { command: "ls" } };
    for (const path of [
      "/v1/hooks/claude-code/x",
      "/v1/hooks//",
      "/hookgate/v1/hooks/claude-code",
      "/a/v1/hooks",
    ]) {
      const res = await post(path, event);
      expect([path, res.status, res.headers.get("x-hookgate-error")]).toEqual([path, 200, "CONFIG_INVALID"]);
    }
  });

  it("answers each deepagents shape on either deepagents route in its own dialect", async () => {
    // A v2 hook posted to the legacy route reads its answer as v2: the legacy dialect's empty
    // body would let its PreToolUse through, where the working gateway denies it.
    const v2 = { hook_event_name: "PreToolUse", tool_name: "execute", tool_input: { command: "rm -rf /" } };
    for (const route of ["/v1/hooks/deepagents-legacy", "/v1/hooks/deepagents"]) {
      const res = await post(route, v2);
      expect([route, res.status]).toEqual([route, 200]);
      const legacy = await post(route, { event: "tool.use", tool_name: "execute" });
      expect([route, legacy.status, await legacy.text()]).toEqual([route, 200, ""]);
    }
  });

  it("fails its health check and logs the problem once", async () => {
    const res = await app.request("/healthz");
    expect(res.status).toBe(500);
    expect((await jsonOf(res)).error.code).toBe("CONFIG_INVALID");
    expect(logs).toHaveLength(1);
  });
});

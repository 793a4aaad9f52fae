/**
 * `hookgate serve` over its life as a process: a stdout that closes under it, a SIGHUP while the
 * policy first loads, and stops that must end.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { connect, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { BIN, ROOT, startServerProcess } from "../support/process.js";

const dir = mkdtempSync(join(tmpdir(), "hookgate-lifecycle-"));
const EXAMPLE = readFileSync(join(ROOT, "examples/policy.json"), "utf8");

/** examples/policy.json with `extra` rules that never apply: a file that takes a while to load. */
function policyWith(extra: number, marker: string): string {
  const policy = JSON.parse(EXAMPLE);
  for (let i = 0; i < extra; i++) {
    policy.rules.push({ id: `${marker}-${i}`, on: "Notification", matcher: `never_${i}`, decide: "deny" });
  }
  return JSON.stringify(policy);
}

/** A request whose body never finishes, on its own connection. */
async function stalledRequest(url: string): Promise<Socket> {
  const socket = connect(Number(new URL(url).port), "127.0.0.1");
  await new Promise((resolve) => socket.once("connect", resolve));
  socket.on("error", () => undefined);
  socket.write("POST /v1/hooks/claude-code HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 100\r\n\r\n{");
  await new Promise((resolve) => setTimeout(resolve, 100));
  return socket;
}

const hook = (url: string) =>
  fetch(`${url}/v1/hooks/claude-code`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ session_id: "s", transcript_path: "/t", cwd: "/p", hook_event_name: "Stop" }),
  });

describe("hookgate serve over its life", { timeout: 60_000 }, () => {
  it("keeps answering when its stdout is closed, and says so once on stderr", async () => {
    const path = join(dir, "epipe.json");
    writeFileSync(path, EXAMPLE);
    const server = await startServerProcess(path);
    try {
      server.child.stdout?.destroy(); // `serve | head -n 1`: the reader is gone
      for (let i = 0; i < 3; i++) expect((await hook(server.url)).status).toBe(200);
      expect(server.child.exitCode).toBe(null);
      const { stderr } = server.output();
      expect(stderr.match(/writing to stdout failed \(.*EPIPE.*\); log lines are dropped/g)).toHaveLength(1);
    } finally {
      await server.stop();
    }
  });

  it("ends a stop within its grace period, whatever a client still sends", async () => {
    const path = join(dir, "stop.json");
    writeFileSync(path, EXAMPLE);
    const server = await startServerProcess(path);
    const socket = await stalledRequest(server.url);
    // The stop ended at all (the test's own timeout is the limit), and cleanly.
    const code = await server.stop();
    socket.destroy();
    expect(code).toBe(0);
  });

  it("ends at once on a second signal while it drains, without a stack trace", async () => {
    const path = join(dir, "twice.json");
    writeFileSync(path, EXAMPLE);
    const server = await startServerProcess(path);
    const socket = await stalledRequest(server.url);
    const exited = new Promise<number | null>((resolve) => server.child.once("exit", resolve));
    server.child.kill("SIGTERM");
    await new Promise((resolve) => setTimeout(resolve, 200));
    server.child.kill("SIGINT");
    const code = await exited;
    socket.destroy();
    expect(code).toBe(130);
    expect(server.output().stderr).toBe("");
  });

  it("takes a SIGHUP that comes while the policy first loads as a reload once it runs", async () => {
    const path = join(dir, "early.json");
    const slow = policyWith(20_000, "early");
    writeFileSync(path, slow);
    const child = spawn(
      process.execPath,
      [BIN, "serve", "--policy", path, "--port", "0", "--data-dir", join(dir, "early-data")],
      { cwd: ROOT, env: { PATH: process.env.PATH ?? "" }, stdio: ["ignore", "pipe", "pipe"] },
    );
    let stdout = "";
    child.stdout.on("data", (chunk) => {
      stdout += chunk;
    });
    const exited = new Promise<number | null>((resolve) => child.once("exit", resolve));
    try {
      // SIGHUP (signal 1) caught: bit 0 of SigCgt in /proc, set once the handler is in place.
      const catchesHangup = () => {
        const status = readFileSync(`/proc/${child.pid}/status`, "utf8");
        const mask = /SigCgt:\s*([0-9a-f]+)/.exec(status)?.[1] ?? "0";
        return (BigInt(`0x${mask}`) & 1n) === 1n;
      };
      for (let i = 0; i < 500 && !catchesHangup() && child.exitCode === null; i++) {
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      // The policy is still loading: nothing listens yet.
      expect(stdout).not.toMatch(/hookgate listening/);
      child.kill("SIGHUP");
      for (let i = 0; i < 3000 && !/"policy reloaded"/.test(stdout) && child.exitCode === null; i++) {
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      expect(child.exitCode).toBe(null);
      expect(stdout).toMatch(/"hookgate listening"[\s\S]*"policy reloaded"/);
    } finally {
      if (child.exitCode === null) child.kill("SIGTERM");
      await exited;
    }
  });
});

/**
 * `hookgate serve` over its life as a process: a stdout that closes under it, a SIGHUP while the
 * policy first loads, and stops that must end.
 */
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import dns from "node:dns";
import {
  closeSync,
  existsSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  renameSync,
  unlinkSync,
  writeFileSync,
} from "node:fs";
import { createServer } from "node:http";
import { type AddressInfo, connect, type Socket } from "node:net";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import Database from "better-sqlite3";
import { describe, expect, it, vi } from "vitest";
import { shellQuote } from "../../src/entry/shell-word.js";
import { BIN, childEnv, endProcess, ROOT, runCli, startServerProcess } from "../support/process.js";
import { tempDir, whenDone } from "../support/temp.js";

const dir = tempDir("lifecycle");
const EXAMPLE = readFileSync(join(ROOT, "examples/policy.json"), "utf8");

/** Whether process `pid` catches SIGHUP (signal 1): bit 0 of SigCgt in /proc, set once a handler is in place. */
function catchesHangup(pid: number | undefined): boolean {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const mask = /SigCgt:\s*([0-9a-f]+)/.exec(status)?.[1] ?? "0";
  return (BigInt(`0x${mask}`) & 1n) === 1n;
}

/** examples/policy.json with `extra` rules that never apply: a file that takes a while to load. */
function policyWith(extra: number, marker: string): string {
  const policy = JSON.parse(EXAMPLE);
  for (let i = 0; i < extra; i++) {
    policy.rules.push({ id: `${marker}-${i}`, on: "Notification", matcher: `never_${i}`, decide: "deny" });
  }
  return JSON.stringify(policy);
}

/**
 * The IPv4 port a child listens on, for a serve started with `--port 0` whose stdout cannot carry
 * its "hookgate listening" line: its socket among the listening ones of /proc/net/tcp (state 0A),
 * by inode. A port freed a moment ago and passed as `--port` could be taken first by a server
 * another test started. Undefined if it exited without listening.
 */
async function listeningPort(child: ChildProcess): Promise<number | undefined> {
  const listening = () => {
    const sockets = new Set<string>();
    try {
      for (const fd of readdirSync(`/proc/${child.pid}/fd`)) {
        const inode = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${child.pid}/fd/${fd}`))?.[1];
        if (inode !== undefined) sockets.add(inode);
      }
    } catch {
      return undefined; // it exited meanwhile, or closed the descriptor being read
    }
    for (const line of readFileSync("/proc/net/tcp", "utf8").split("\n").slice(1)) {
      // sl local_address rem_address st tx_queue:rx_queue tr:tm->when retrnsmt uid timeout inode
      const [, local, , state, , , , , , inode] = line.trim().split(/\s+/);
      if (state === "0A" && inode !== undefined && sockets.has(inode)) {
        return Number.parseInt(local?.split(":")[1] ?? "", 16);
      }
    }
    return undefined;
  };
  for (let i = 0; i < 2000 && child.exitCode === null; i++) {
    const port = listening();
    if (port !== undefined) return port;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  return undefined;
}

/**
 * Resolves once the gateway has read a request's headers, which it says with a 100 Continue (the
 * request asks for one): a stop that came before that read closed the connection as one that had
 * sent nothing yet.
 */
function continued(socket: Socket): Promise<void> {
  return new Promise((resolve) => {
    let seen = "";
    const onData = (chunk: Buffer) => {
      seen += chunk;
      if (!seen.includes("\r\n\r\n")) return;
      socket.off("data", onData);
      resolve();
    };
    socket.on("data", onData);
  });
}

const CONTINUE = "HTTP/1.1 100 Continue\r\n\r\n";

describe("serve on ::1 and a request without Host", () => {
  it("answers every route, as on 127.0.0.1: @hono/node-server made no URL of the bare ::1, and answered a bare 400", async () => {
    const { gateway } = await gatewayIn("ipv6", {}, "::1");
    /** The status line and body of `request` sent as it is, on a connection of its own. */
    const send = (request: string) =>
      new Promise<string>((resolve, reject) => {
        const socket = connect(gateway.port, "::1");
        let answer = "";
        socket.on("data", (chunk) => {
          answer += chunk;
        });
        socket.on("error", reject);
        socket.on("close", () => {
          const [head = "", body = ""] = answer.split("\r\n\r\n");
          resolve(`${head.split("\r\n")[0]} ${body}`);
        });
        socket.write(request);
      });
    try {
      for (const version of ["1.1", "1.0"]) {
        const ask = (path: string) => send(`GET ${path} HTTP/${version}\r\nConnection: close\r\n\r\n`);
        expect(await ask("/healthz"), version).toMatch(/^HTTP\/1\.1 200 OK \{"status":"ok"/);
        expect(await ask("/metrics"), version).toMatch(/^HTTP\/1\.1 200 OK # HELP/);
        expect(await ask("/v1/whoami"), version).toMatch(/^HTTP\/1\.1 401 .*"AUTH_MISSING"/);
        expect(await ask("/nope"), version).toMatch(/^HTTP\/1\.1 404 .*"NOT_FOUND"/);
      }
    } finally {
      await gateway.close();
    }
  });
});

/** What serve logs for a reload whose file is the running policy's, byte for byte. */
const UNCHANGED = "policy unchanged; nothing reloaded";

/**
 * Sends `head` (a request's headers, with `Expect: 100-continue`, and the start of its body) on a
 * connection of its own, stops the gateway once it has read them (its 100 Continue), then sends
 * `rest`. Gives what came back after the 100 Continue, once the gateway closed the connection,
 * and the stop's exit code.
 */
async function sendAcrossStop(
  server: Awaited<ReturnType<typeof startServerProcess>>,
  head: string,
  rest: string,
): Promise<{ answer: string; code: number | null }> {
  const socket = connect(Number(new URL(server.url).port), "127.0.0.1");
  await new Promise((resolve) => socket.once("connect", resolve));
  socket.on("error", () => undefined);
  let answer = "";
  socket.on("data", (chunk) => {
    answer += chunk;
  });
  const closed = new Promise((resolve) => socket.once("close", resolve));
  try {
    const read = continued(socket);
    socket.write(head);
    await read;
    const stopped = server.stop();
    await server.waitForLine((l) => l.msg === "hookgate stopping");
    socket.write(rest);
    await closed;
    expect(answer.startsWith(CONTINUE)).toBe(true);
    return { answer: answer.slice(CONTINUE.length), code: await stopped };
  } finally {
    socket.destroy();
  }
}

/**
 * A request whose body never finishes, on its own connection, once the gateway has read its
 * headers (its 100 Continue): a stop that came before that read closed the connection as one that
 * had sent nothing yet.
 */
async function stalledRequest(url: string): Promise<Socket> {
  const socket = connect(Number(new URL(url).port), "127.0.0.1");
  await new Promise((resolve) => socket.once("connect", resolve));
  socket.on("error", () => undefined);
  const read = continued(socket);
  socket.write(
    "POST /v1/hooks/claude-code HTTP/1.1\r\nHost: 127.0.0.1\r\nExpect: 100-continue\r\nContent-Length: 100\r\n\r\n{",
  );
  await read;
  return socket;
}

const hook = (url: string) =>
  fetch(`${url}/v1/hooks/claude-code`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ session_id: "s", transcript_path: "/t", cwd: "/p", hook_event_name: "Stop" }),
  });

/** `hookgate serve` on port 0, its stdout gathered as it comes; ended with the test at the latest. */
function spawnServe(
  policy: string,
  dataDir: string,
  more: { host?: string; nodeFlags?: string[]; record?: string } = {},
) {
  const host = more.host === undefined ? [] : ["--host", more.host];
  const record = more.record === undefined ? [] : ["--record", more.record];
  const args = [
    ...(more.nodeFlags ?? []),
    BIN,
    "serve",
    "--policy",
    policy,
    ...host,
    ...record,
    "--port",
    "0",
  ];
  const child = spawn(process.execPath, [...args, "--data-dir", dataDir], {
    cwd: ROOT,
    env: childEnv(),
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  child.stdout.on("data", (chunk) => {
    stdout += chunk;
  });
  const exited = new Promise<number | null>((resolve) => child.once("exit", resolve));
  whenDone(() => endProcess(child));
  const stop = async () => {
    if (child.exitCode === null) child.kill("SIGTERM");
    await exited;
  };
  return { child, stdout: () => stdout, stop };
}

/** Polls every 10 ms, at most `tries` times, until `done` or the child has exited. */
async function waitWhileRunning(child: ChildProcess, tries: number, done: () => boolean): Promise<void> {
  for (let i = 0; i < tries && !done() && child.exitCode === null; i++) {
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/**
 * A serve child sent a SIGHUP: it reloads the policy once it runs (finding the file unchanged),
 * and keeps running.
 */
async function expectReloadedAndRunning({ child, stdout }: ReturnType<typeof spawnServe>): Promise<void> {
  await waitWhileRunning(child, 3000, () => stdout().includes(`"${UNCHANGED}"`));
  expect(child.exitCode).toBe(null);
  expect(stdout()).toMatch(new RegExp(`"hookgate listening"[\\s\\S]*"${UNCHANGED}"`));
}

/**
 * The built gateway in process (its delivery thread is dist/'s), on examples/policy.json written
 * to `name`.json, and the lines it logs.
 */
async function gatewayIn(name: string, env: Record<string, string> = {}, host = "127.0.0.1") {
  const { startGateway } = (await import(
    new URL("../../dist/entry/node.js", import.meta.url).href
  )) as typeof import("../../src/entry/node.js");
  const path = join(dir, `${name}.json`);
  writeFileSync(path, EXAMPLE);
  const logs: { msg: string; fields: Record<string, unknown> | undefined }[] = [];
  const gateway = await startGateway({
    policyPath: path,
    dataDir: join(dir, `${name}-data`),
    host,
    port: 0,
    env,
    logger: { log: (_level, msg, fields) => logs.push({ msg, fields }) },
  });
  return { gateway, path, logs };
}

/**
 * `hookgate serve` on the policy `document` makes of `target`, the URL of a loopback server that
 * takes requests and never answers them; `hangUp` ends the connections it holds, `stop` ends the two.
 */
async function serveBesideHanging(name: string, document: (target: string) => unknown) {
  let requests = 0;
  const hanging = createServer(() => {
    requests += 1;
  });
  await new Promise<void>((resolve) => hanging.listen(0, "127.0.0.1", resolve));
  const path = join(dir, `${name}.json`);
  writeFileSync(
    path,
    JSON.stringify(document(`http://127.0.0.1:${(hanging.address() as AddressInfo).port}`)),
  );
  const server = await startServerProcess(path);
  return {
    server,
    nextRequest: () => new Promise((resolve) => hanging.once("request", resolve)),
    /** How many requests the sink has received. */
    requests: () => requests,
    hangUp: () => hanging.closeAllConnections(),
    stop: async () => {
      await server.stop();
      hanging.closeAllConnections();
      await new Promise((resolve) => hanging.close(resolve));
    },
  };
}

/**
 * serve beside a sink that accepts and never answers, sent each SessionEnd by a notify rule;
 * `deliverOne` sends a SessionEnd on a connection closed once answered and waits until its
 * delivery reaches the sink.
 */
async function serveWithHangingSink(name: string) {
  const hanging = await serveBesideHanging(name, (target) => ({
    version: 1,
    egress: { allowCidrs: ["127.0.0.1/32"] },
    rules: [{ id: "ends", on: "SessionEnd", notify: ["audit"] }],
    sinks: { audit: { type: "webhook", url: `${target}/hook` } },
  }));
  const deliverOne = async () => {
    const reached = hanging.nextRequest();
    const res = await fetch(`${hanging.server.url}/v1/hooks/claude-code`, {
      method: "POST",
      headers: { "content-type": "application/json", connection: "close" },
      body: JSON.stringify({
        session_id: "s",
        transcript_path: "/t",
        cwd: "/p",
        hook_event_name: "SessionEnd",
        reason: "exit",
      }),
    });
    expect(res.status).toBe(200);
    await res.text();
    await reached;
  };
  return { ...hanging, deliverOne };
}

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

  it("keeps answering when writing its stdout or stderr fails (a full disk under the log file)", async () => {
    const path = join(dir, "enospc.json");
    writeFileSync(path, EXAMPLE);
    // /dev/full answers every write with ENOSPC, as a full disk does.
    for (const stderrFull of [false, true]) {
      const full = openSync("/dev/full", "w");
      const child = spawn(
        process.execPath,
        [BIN, "serve", "--policy", path, "--port", "0", "--data-dir", join(dir, `enospc-${stderrFull}`)],
        {
          cwd: ROOT,
          env: childEnv(),
          stdio: ["ignore", full, stderrFull ? full : "pipe"],
        },
      );
      closeSync(full);
      let stderr = "";
      child.stderr?.on("data", (chunk) => {
        stderr += chunk;
      });
      const exited = new Promise<number | null>((resolve) => child.once("exit", resolve));
      whenDone(() => endProcess(child));
      try {
        const port = await listeningPort(child);
        expect(port, "serve never listened").toEqual(expect.any(Number));
        const url = `http://127.0.0.1:${port}`;
        // Up once /healthz answers (at most 10 s): it has written its first log line by then.
        for (let i = 0; i < 200 && child.exitCode === null; i++) {
          if (
            await fetch(`${url}/healthz`).then(
              (r) => r.ok,
              () => false,
            )
          )
            break;
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
        for (let i = 0; i < 3; i++) expect((await hook(url)).status).toBe(200);
        expect(child.exitCode).toBe(null);
        if (!stderrFull)
          expect(
            stderr.match(/writing to stdout failed \(ENOSPC.*\); log lines are dropped until it has room/g),
          ).toHaveLength(1);
      } finally {
        if (child.exitCode === null) child.kill("SIGTERM");
        expect(await exited).toBe(0);
      }
    }
  });

  it("drops and counts log lines while its stdout is not read, keeps answering, and writes again once it is", async () => {
    const path = join(dir, "stalled-stdout.json");
    writeFileSync(path, EXAMPLE);
    const server = await startServerProcess(path);
    try {
      const stdout = server.child.stdout as NodeJS.ReadableStream;
      stdout.pause(); // a log shipper that stopped reading: the pipe fills, then serve's buffer
      // Audit lines of about 16 KiB (the tool input is logged, masked, each string cut at 2,000
      // characters): 16 MiB in ~1,000 answers.
      const pad = Object.fromEntries(Array.from({ length: 8 }, (_, i) => [`note${i}`, "x".repeat(2000)]));
      const body = JSON.stringify({
        session_id: "s",
        transcript_path: "/t",
        cwd: "/p",
        hook_event_name: "PreToolUse",
        tool_name: "Bash",
        tool_input: { command: "ls", ...pad },
      });
      const post = () =>
        fetch(`${server.url}/v1/hooks/claude-code`, {
          method: "POST",
          headers: { "content-type": "application/json", authorization: "Bearer hookgate-dev-token" },
          body,
        });
      let answered = 0;
      for (let i = 0; i < 200 && !server.output().stderr.includes("stdout is not being read"); i++) {
        const answers = await Promise.all(Array.from({ length: 10 }, post));
        answered += answers.filter((a) => a.status === 200).length;
        await Promise.all(answers.map((a) => a.text()));
      }
      expect(server.output().stderr).toMatch(
        /hookgate: stdout is not being read \(\d+ KiB of log lines wait to be written\); log lines are dropped until it is, and counted in hookgate_log_lines_dropped_total\n/,
      );
      for (let i = 0; i < 20; i++) answered += (await post()).status === 200 ? 1 : 0;
      const metrics = await (await fetch(`${server.url}/metrics`)).text();
      const dropped = Number(/^hookgate_log_lines_dropped_total (\d+)$/m.exec(metrics)?.[1]);
      expect(dropped).toBeGreaterThanOrEqual(20);
      // Past the limit, what waits stays at it: 16 MiB and one turn's batch at most.
      const backlog = Number(/^hookgate_log_backlog_bytes (\d+)$/m.exec(metrics)?.[1]);
      expect(backlog).toBeGreaterThanOrEqual(16 * 1024 * 1024);
      expect(backlog).toBeLessThan(17 * 1024 * 1024);
      expect(answered).toBeGreaterThan(1000);

      stdout.resume();
      // Once the 16 MiB waiting are written: seconds on a busy machine.
      const end = Date.now() + 20_000;
      while (!server.output().stderr.includes("stdout is read again") && Date.now() < end)
        await new Promise((resolve) => setTimeout(resolve, 50));
      expect(server.output().stderr).toMatch(
        /hookgate: stdout is read again; \d+ log lines were dropped meanwhile\n/,
      );
      // Logged again: an answer given now has its audit line.
      const after = await fetch(`${server.url}/v1/hooks/claude-code`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: "Bearer hookgate-dev-token" },
        body: JSON.stringify({ ...JSON.parse(body), session_id: "after-the-stall" }),
      });
      expect(after.status).toBe(200);
      await server.waitForLine((l) => l.msg === "decision" && l.sessionId === "after-the-stall");
    } finally {
      await server.stop();
    }
  });

  it("answers a body that would take the bodies still arriving past 64 MiB at once, and the others as usual", async () => {
    const path = join(dir, "budget.json");
    const policy = JSON.parse(EXAMPLE);
    policy.defaults = { ...policy.defaults, maxBodyBytes: 48 * 1024 * 1024 };
    writeFileSync(path, JSON.stringify(policy));
    const server = await startServerProcess(path);
    const port = Number(new URL(server.url).port);
    /** A Stop whose body is about `mib` MiB, on its own connection; `end()` sends its last bytes. */
    const stop = async (sessionId: string, mib: number) => {
      const head = `{"session_id":"${sessionId}","transcript_path":"/t","cwd":"/p","hook_event_name":"Stop","pad":"`;
      const body = Buffer.from(`${head}${"a".repeat(mib * 1024 * 1024)}"}`);
      const socket = connect(port, "127.0.0.1");
      await new Promise((resolve) => socket.once("connect", resolve));
      socket.on("error", () => undefined);
      let answer = "";
      socket.on("data", (chunk) => {
        answer += chunk;
      });
      const answered = new Promise<string>((resolve) => socket.once("close", () => resolve(answer)));
      socket.write(
        `POST /v1/hooks/claude-code HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\nAuthorization: Bearer hookgate-dev-token\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n`,
      );
      await new Promise<void>((resolve) => socket.write(body.subarray(0, body.length - 10), () => resolve()));
      return { answered, sent: body.length - 10, end: () => socket.end(body.subarray(body.length - 10)) };
    };
    /** The bytes of bodies still arriving that serve holds, from its /metrics. */
    const arriving = async () =>
      Number(
        /^hookgate_body_budget_bytes\{budget="arriving"\} (\d+)$/m.exec(
          await (await fetch(`${server.url}/metrics`)).text(),
        )?.[1],
      );
    try {
      // Written to the socket, most of it has been read; the rest (what the kernel buffers, a few
      // MiB) is read before the next body comes: 44 MiB of a body still arriving are held.
      const held = await stop("held", 44);
      for (let i = 0; i < 400 && (await arriving()) !== held.sent; i++) {
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      expect(await arriving()).toBe(held.sent);
      const refused = await stop("refused", 30);
      refused.end();
      const first = await refused.answered;
      expect(first).toMatch(/^HTTP\/1\.1 200 /);
      expect(first.toLowerCase()).toContain("x-hookgate-error: body_unreadable");
      held.end();
      const second = await held.answered;
      expect(second).toMatch(/^HTTP\/1\.1 200 /);
      expect(second.toLowerCase()).not.toContain("x-hookgate-error");
      expect(await server.waitForLine((l) => l.msg === "decision" && l.sessionId === "held")).toMatchObject({
        event: "Stop",
      });
      // Once the first body is done, the same 30 MiB fit.
      const later = await stop("later", 30);
      later.end();
      expect((await later.answered).toLowerCase()).not.toContain("x-hookgate-error");
    } finally {
      await server.stop();
    }
  });

  it("ends a stop within its grace period, whatever a client still sends", async () => {
    const path = join(dir, "stop.json");
    writeFileSync(path, EXAMPLE);
    const server = await startServerProcess(path);
    const socket = await stalledRequest(server.url);
    let cut = false;
    const closed = new Promise<void>((resolve) =>
      socket.once("close", () => {
        cut = true;
        resolve();
      }),
    );
    const stopped = server.stop();
    // Two seconds into the stop the stalled request still has its connection: the grace is not
    // cut short (a busy host can only keep it open longer).
    await new Promise((resolve) => setTimeout(resolve, 2000));
    expect(cut).toBe(false);
    // The stop ended, cleanly, after cutting the stalled connection at the grace it names.
    const code = await stopped;
    await closed;
    socket.destroy();
    expect(code).toBe(0);
    const line = await server.waitForLine(
      (l) => l.msg === "stopping: connections still open after the grace period are cut",
    );
    expect(line).toMatchObject({ level: "warn", graceMs: 10_000 });
  });

  it("closes at once a connection that has sent nothing yet, as an idle one, instead of waiting out the grace for it", async () => {
    // A client's spare connection, opened ahead of its next request: `closeIdleConnections()`
    // left it, and every stop took the whole 10 s grace, then logged connections cut.
    const path = join(dir, "spare.json");
    writeFileSync(path, EXAMPLE);
    const server = await startServerProcess(path);
    const { port } = new URL(server.url);
    const spare = connect(Number(port), "127.0.0.1");
    await new Promise((resolve) => spare.once("connect", resolve));
    const closed = new Promise((resolve) => spare.once("close", resolve));
    expect(await server.stop()).toBe(0);
    await closed;
    expect(server.lines.filter((l) => String(l.msg).startsWith("stopping:"))).toEqual([]);
    expect(server.lines.at(-1)).toMatchObject({ msg: "hookgate stopped" });
  });

  it("ends the connection of a request it answers while it stops, instead of holding the stop for the grace", async () => {
    const path = join(dir, "answered.json");
    writeFileSync(path, EXAMPLE);
    const server = await startServerProcess(path);
    const body = JSON.stringify({
      session_id: "s",
      transcript_path: "/t",
      cwd: "/p",
      hook_event_name: "Stop",
    });
    // Its headers and the body's first byte before the stop, the rest after it: a request in
    // progress on a keep-alive connection.
    const { answer, code } = await sendAcrossStop(
      server,
      `POST /v1/hooks/claude-code HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nExpect: 100-continue\r\nContent-Length: ${body.length}\r\n\r\n${body[0]}`,
      body.slice(1),
    );
    // Answered, and told that the connection ends, which the gateway then closed.
    expect(answer).toMatch(/^HTTP\/1\.1 200 /);
    expect(answer.toLowerCase()).toContain("\r\nconnection: close\r\n");
    expect(code).toBe(0);
    // It was not left open, idle, until the grace cut it.
    expect(server.lines.filter((l) => String(l.msg).startsWith("stopping:"))).toEqual([]);
    expect(server.lines.at(-1)).toMatchObject({ msg: "hookgate stopped" });
  });

  it("answers a request pipelined behind one in progress when it stops, ending the connection after the last", async () => {
    const path = join(dir, "pipelined.json");
    writeFileSync(path, EXAMPLE);
    const server = await startServerProcess(path);
    const body = JSON.stringify({
      session_id: "s",
      transcript_path: "/t",
      cwd: "/p",
      hook_event_name: "Stop",
    });
    const request = (sent: string, expect = "") =>
      `POST /v1/hooks/claude-code HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n${expect}Content-Length: ${body.length}\r\n\r\n${sent}`;
    // The first request in progress when the stop begins; the second sent, pipelined, with the
    // rest of the first's body, before the first is answered.
    const { answer, code } = await sendAcrossStop(
      server,
      request(body[0] ?? "", "Expect: 100-continue\r\n"),
      `${body.slice(1)}${request(body)}`,
    );
    // Both answered, in order; only the last says the connection ends. The first's answer
    // ended it, and the second, judged, went unanswered.
    const heads = answer.split(/(?=HTTP\/1\.1 \d{3} )/).map((part) => part.split("\r\n\r\n")[0]);
    expect(heads.map((head) => head?.split("\r\n")[0])).toEqual(["HTTP/1.1 200 OK", "HTTP/1.1 200 OK"]);
    expect(heads[0]?.toLowerCase()).not.toContain("\r\nconnection: close");
    expect(heads[1]?.toLowerCase()).toContain("\r\nconnection: close");
    expect(code).toBe(0);
    expect(server.lines.filter((l) => String(l.msg).startsWith("stopping:"))).toEqual([]);
  });

  it("says when it starts to stop and when it has stopped, how long it may take and took", async () => {
    const path = join(dir, "said.json");
    writeFileSync(path, EXAMPLE);
    const server = await startServerProcess(path);
    expect((await hook(server.url)).status).toBe(200);
    expect(await server.stop()).toBe(0);
    const stdout = server.child.stdout;
    if (stdout && !stdout.closed) await new Promise((resolve) => stdout.once("close", resolve));
    // After the decision, those two lines alone, the second the last one written.
    const said = server.lines.slice(server.lines.findIndex((l) => l.msg === "decision") + 1);
    expect(said).toEqual([
      expect.objectContaining({ level: "info", msg: "hookgate stopping", graceMs: 10_000, drainMs: 30_000 }),
      expect.objectContaining({ level: "info", msg: "hookgate stopped", ms: expect.any(Number) }),
    ]);
  });

  it("ends at once on a second signal while it drains, without a stack trace", async () => {
    const path = join(dir, "twice.json");
    writeFileSync(path, EXAMPLE);
    const server = await startServerProcess(path);
    const socket = await stalledRequest(server.url);
    const exited = new Promise<number | null>((resolve) => server.child.once("exit", resolve));
    server.child.kill("SIGTERM");
    // The second signal once the first began the stop: both pending at once, SIGINT came first.
    await server.waitForLine((l) => l.msg === "hookgate stopping");
    server.child.kill("SIGINT");
    const code = await exited;
    socket.destroy();
    expect(code).toBe(130);
    expect(server.output().stderr).toBe("");
    // The log says so, as its last line: it ended at "hookgate stopping", as a kill leaves it.
    const stdout = server.child.stdout;
    if (stdout && !stdout.closed) await new Promise((resolve) => stdout.once("close", resolve));
    expect(server.lines.at(-1)).toMatchObject({
      level: "warn",
      msg: "hookgate stopped at once on a second signal, without waiting for the rest of its stop",
      signal: "SIGINT",
      openConnections: 1,
    });
  });

  it("ignores a SIGHUP that comes while it stops, saying so: neither the policy nor the record file is read again", async () => {
    const path = join(dir, "hangup-stopping.json");
    writeFileSync(path, EXAMPLE);
    const record = join(dir, "hangup-stopping.jsonl");
    const serve = spawnServe(path, join(dir, "hangup-stopping-data"), { record });
    const { child, stdout } = serve;
    try {
      await waitWhileRunning(child, 3000, () => /"hookgate listening"/.test(stdout()));
      const url = String(
        (
          JSON.parse(
            stdout()
              .split("\n")
              .find((l) => l.includes('"hookgate listening"')) ?? "{}",
          ) as {
            url?: string;
          }
        ).url,
      );
      // A request still arriving holds the stop in its grace period while the SIGHUP comes.
      const socket = await stalledRequest(url);
      const exited = new Promise<number | null>((resolve) => child.once("exit", resolve));
      child.kill("SIGTERM");
      await waitWhileRunning(child, 3000, () => /"hookgate stopping"/.test(stdout()));
      // A log rotation and a policy deploy, each of which a SIGHUP would otherwise act on.
      renameSync(record, `${record}.1`);
      writeFileSync(path, JSON.stringify({ ...JSON.parse(EXAMPLE), rules: [] }));
      child.kill("SIGHUP");
      await waitWhileRunning(child, 3000, () => /"SIGHUP ignored: hookgate is stopping"/.test(stdout()));
      socket.destroy();
      expect(await exited).toBe(0);
      const msgs = stdout()
        .split("\n")
        .filter((l) => l !== "")
        .map((l) => (JSON.parse(l) as { msg: string }).msg);
      // Said once; no reload (nor its refusal) after it, and the stop ends as it began.
      expect(
        msgs.slice(msgs.indexOf("hookgate stopping")).filter((m) => /reload|SIGHUP|record/.test(m)),
      ).toEqual(["SIGHUP ignored: hookgate is stopping"]);
      expect(msgs.at(-1)).toBe("hookgate stopped");
      expect(existsSync(record)).toBe(false);
    } finally {
      await serve.stop();
    }
  });

  it("says no request went unanswered when a second signal ends the drain of deliveries with no connection open", async () => {
    // A sink that accepts and never answers: the stop's drain waits on the delivery.
    const { server, deliverOne, stop } = await serveWithHangingSink("twice-draining");
    try {
      await deliverOne();
      const exited = new Promise<number | null>((resolve) => server.child.once("exit", resolve));
      server.child.kill("SIGTERM");
      await server.waitForLine((l) => l.msg === "hookgate stopping");
      server.child.kill("SIGINT");
      expect(await exited).toBe(130);
      const stdout = server.child.stdout;
      if (stdout && !stdout.closed) await new Promise((resolve) => stdout.once("close", resolve));
      const last = server.lines.at(-1);
      expect(last).toMatchObject({
        level: "warn",
        msg: "hookgate stopped at once on a second signal, without waiting for the rest of its stop",
        openConnections: 0,
      });
      // Every request had its answer: the log said some had none.
      expect(String(last?.problem)).not.toMatch(/no answer/);
      expect(String(last?.problem)).toMatch(/deliveries in flight are sent again at the next start/);
    } finally {
      await stop();
    }
  });

  it("takes a SIGHUP that comes while the policy first loads as a reload once it runs", async () => {
    const path = join(dir, "early.json");
    const slow = policyWith(20_000, "early");
    writeFileSync(path, slow);
    const serve = spawnServe(path, join(dir, "early-data"));
    const { child, stdout } = serve;
    try {
      await waitWhileRunning(child, 500, () => catchesHangup(child.pid));
      // The policy is still loading: nothing listens yet.
      expect(stdout()).not.toMatch(/hookgate listening/);
      child.kill("SIGHUP");
      await expectReloadedAndRunning(serve);
    } finally {
      await serve.stop();
    }
  });

  it.each(["SIGTERM", "SIGINT"] as const)(
    "says so on stderr when a %s stops it before it listens, ends by that signal, and starts again on the same data dir",
    async (signal) => {
      // The delivery thread waits out its busy timeout (5 s) for a queue file another process
      // holds: serve has claimed its data dir (serve.pid) and does not listen yet.
      const dataDir = join(dir, `early-${signal}`);
      mkdirSync(dataDir);
      const holder = new Database(join(dataDir, "queue.sqlite"));
      holder.pragma("journal_mode = WAL");
      holder.exec("CREATE TABLE held (x)");
      holder.exec("BEGIN EXCLUSIVE");
      holder.exec("INSERT INTO held VALUES (1)");
      const path = join(dir, `early-${signal}.json`);
      writeFileSync(path, EXAMPLE);
      const child = spawn(
        process.execPath,
        [BIN, "serve", "--policy", path, "--port", "0", "--data-dir", dataDir],
        {
          cwd: ROOT,
          env: childEnv(),
          stdio: ["ignore", "pipe", "pipe"],
        },
      );
      whenDone(() => endProcess(child));
      let stdout = "";
      let stderr = "";
      child.stdout.on("data", (chunk) => {
        stdout += chunk;
      });
      child.stderr.on("data", (chunk) => {
        stderr += chunk;
      });
      const exited = new Promise<NodeJS.Signals | null>((resolve) =>
        child.once("exit", (_code, s) => resolve(s)),
      );
      try {
        await waitWhileRunning(child, 3000, () => existsSync(join(dataDir, "serve.pid")));
        expect(existsSync(join(dataDir, "serve.pid"))).toBe(true);
        child.kill(signal);
        // Ended by the signal, as before: a service manager sees a stop, not a failure.
        expect(await exited).toBe(signal);
      } finally {
        holder.close();
      }
      // Nothing was logged: the log ended as if it had hung.
      expect(stderr).toContain(`hookgate: ${signal} while serve was starting, before it listened: stopped\n`);
      expect(stdout).not.toContain("hookgate listening");
      const again = await startServerProcess(path, {}, dataDir);
      await again.stop();
    },
  );

  it("takes a SIGHUP that comes while its modules still load as a reload once it runs", async () => {
    // Before, the handler was installed once the CLI's modules had loaded (3 s of
    // wall time on a loaded host), and a SIGHUP before that ended the gateway without a line. A
    // module hook holds the CLI's loading until the test has sent its SIGHUP.
    const hold = join(dir, "hold");
    mkdirSync(hold);
    writeFileSync(
      join(hold, "hooks.mjs"),
      `import { existsSync, writeFileSync } from "node:fs";
export async function resolve(specifier, context, next) {
  if (specifier === "./cli.js") {
    writeFileSync(${JSON.stringify(join(hold, "waiting"))}, "");
    while (!existsSync(${JSON.stringify(join(hold, "go"))})) await new Promise((r) => setTimeout(r, 10));
  }
  return next(specifier, context);
}
`,
    );
    writeFileSync(
      join(hold, "register.mjs"),
      `import { register } from "node:module";\nregister(${JSON.stringify(pathToFileURL(join(hold, "hooks.mjs")).href)});\n`,
    );
    const path = join(dir, "loading.json");
    writeFileSync(path, EXAMPLE);
    const serve = spawnServe(path, join(dir, "loading-data"), {
      nodeFlags: ["--import", pathToFileURL(join(hold, "register.mjs")).href],
    });
    const { child } = serve;
    try {
      await waitWhileRunning(child, 3000, () => existsSync(join(hold, "waiting")));
      expect(existsSync(join(hold, "waiting"))).toBe(true);
      // The CLI is not loaded yet, and SIGHUP is already caught.
      expect(catchesHangup(child.pid)).toBe(true);
      child.kill("SIGHUP");
      writeFileSync(join(hold, "go"), "");
      await expectReloadedAndRunning(serve);
    } finally {
      await serve.stop();
    }
  });
});

describe("a --host whose name could not be looked up for now (EAI_AGAIN: no DNS answered)", () => {
  it("is not said to be no name of this machine", async () => {
    const { startGateway } = (await import(
      new URL("../../dist/entry/node.js", import.meta.url).href
    )) as typeof import("../../src/entry/node.js");
    const path = join(dir, "eai-again.json");
    writeFileSync(path, EXAMPLE);
    const lookup = vi.spyOn(dns, "lookup").mockImplementation(((_host: string, ...rest: unknown[]) => {
      const callback = rest.at(-1) as (e: Error) => void;
      const error = Object.assign(new Error("getaddrinfo EAI_AGAIN gateway.corp.example"), {
        code: "EAI_AGAIN",
      });
      process.nextTick(() => callback(error));
    }) as unknown as typeof dns.lookup);
    try {
      await expect(
        startGateway({
          policyPath: path,
          dataDir: join(dir, "eai-again-data"),
          host: "gateway.corp.example",
          port: 0,
          env: {},
          logger: { log: () => undefined },
        }),
      ).rejects.toThrow(
        "cannot listen on --host gateway.corp.example (EAI_AGAIN): its name could not be looked up just now (a DNS failure)",
      );
    } finally {
      lookup.mockRestore();
    }
  });
});

describe("reloads asked in a burst (SIGHUPs from a deploy tool or a file watcher)", () => {
  it("run once for all those asked before it starts, and again for one asked while it runs", async () => {
    const { gateway, path, logs } = await gatewayIn("burst");
    const reloads = () => logs.filter((l) => l.msg === "policy reloaded" || l.msg === UNCHANGED).length;
    try {
      // Each reload compiles the whole policy, holding the decisions meanwhile: three asked
      // together read the same file, so one compile serves them.
      await Promise.all([gateway.reload(), gateway.reload(), gateway.reload()]);
      expect(reloads()).toBe(1);
      // One asked while a reload reads the file may see a newer file: it runs after, once.
      const running = gateway.reload();
      await new Promise((resolve) => setImmediate(resolve));
      // Written beside it and renamed over it, as a deploy does: the running read sees one file whole.
      writeFileSync(`${path}.next`, policyWith(1, "after"));
      renameSync(`${path}.next`, path);
      await Promise.all([running, gateway.reload(), gateway.reload()]);
      expect(reloads()).toBe(3);
      expect(gateway.policy().rules).toHaveLength(8);
    } finally {
      await gateway.close();
    }
  });
});

describe("a reload of a policy file that did not change", () => {
  it("changes nothing and says so in one line, its warnings not logged again; a changed file still loads", async () => {
    // Before, each SIGHUP compiled the same file again: its warnings were logged again and each
    // thread's egress got a new connection pool, for every SIGHUP a deploy tool sent.
    const path = join(dir, "unchanged.json");
    const sinks = { chat: { type: "slack", url: "env:CHAT_URL_NOT_SET" } };
    const rule = { id: "chat", on: "Stop", notify: ["chat"] };
    writeFileSync(path, JSON.stringify({ version: 1, sinks, rules: [rule] }));
    const server = await startServerProcess(path);
    try {
      const msgs = () => server.lines.map((l) => l.msg);
      const warned = () => msgs().filter((m) => m === "policy warning").length;
      const reloadLines = () => msgs().filter((m) => m === "policy reloaded" || m === UNCHANGED);
      const atStart = warned();
      expect(atStart).toBeGreaterThan(0);
      for (const n of [1, 2]) {
        server.child.kill("SIGHUP");
        await server.waitForLine(() => reloadLines().length === n);
      }
      expect(reloadLines()).toEqual([UNCHANGED, UNCHANGED]);
      expect(warned()).toBe(atStart);
      const metrics = await (await fetch(`${server.url}/metrics`)).text();
      expect(metrics).toContain('hookgate_policy_reloads_total{outcome="loaded"} 2');

      writeFileSync(path, JSON.stringify({ version: 1, sinks, rules: [rule, { ...rule, id: "chat-2" }] }));
      server.child.kill("SIGHUP");
      const reloaded = await server.waitForLine((l) => l.msg === "policy reloaded");
      expect(reloaded.rules).toBe(2);
      expect(warned()).toBe(2 * atStart);
    } finally {
      await server.stop();
    }
  });
});

describe("a reload of a path that is no longer a file", () => {
  it("fails at once and keeps the running policy; the next reload of a file loads it", async () => {
    // Before, a FIFO at the policy's path made the SIGHUP's reload
    // wait for a writer forever, and every reload asked after it queued behind it.
    const { gateway, path, logs } = await gatewayIn("fifo-reload");
    try {
      const running = gateway.policy().hash;
      unlinkSync(path);
      execFileSync("mkfifo", [path]);
      expect(await gateway.reload()).toEqual([
        { severity: "error", path: "$", message: `cannot read ${path}: it is a FIFO, not a regular file` },
      ]);
      expect(gateway.policy().hash).toBe(running);
      expect(logs.find((l) => l.msg === "policy reload failed; keeping the running policy")?.fields).toEqual({
        policy: running,
        path,
        problems: [`$: cannot read ${path}: it is a FIFO, not a regular file`],
        fix: `fix ${path} (hookgate check ${shellQuote(path)} lists the same problems) and send SIGHUP again; until then the running policy answers`,
      });
      expect((await hook(gateway.url)).status).toBe(200);
      unlinkSync(path);
      writeFileSync(path, policyWith(1, "after"));
      expect(await gateway.reload()).toEqual([]);
      expect(gateway.policy().rules).toHaveLength(8);
    } finally {
      await gateway.close();
    }
  });

  it("names the check command of a policy path with a space or a quote as a shell reads it", async () => {
    // `hookgate check /srv/team's policy.json` pasted from the line was an unclosed quote.
    const { gateway, path, logs } = await gatewayIn("team's policy");
    try {
      writeFileSync(path, '{"version": 1, "rules": [{"id": "x", "on": "PreToolUse", "decide": "nope"}]}');
      expect(await gateway.reload()).not.toEqual([]);
      const fix = logs.find((l) => l.msg === "policy reload failed; keeping the running policy")?.fields?.fix;
      const quoted = `'${path.replaceAll("'", `'\\''`)}'`;
      expect(fix).toBe(
        `fix ${path} (hookgate check ${quoted} lists the same problems) and send SIGHUP again; until then the running policy answers`,
      );
      expect(execFileSync("sh", ["-c", `printf %s ${quoted}`], { encoding: "utf8" })).toBe(path);
    } finally {
      await gateway.close();
    }
  });
});

describe("a reload whose load throws", () => {
  it("is a failed reload the log names, not one that vanishes without a word", async () => {
    // Before, a load that threw (a token on env "toString" did,
    // through process.env's inherited methods) rejected the reload's promise, which nothing
    // logged: no "policy reload failed" line, no failed count. Here the environment holds a
    // value that is no string, the one way left to make the load throw.
    const { gateway, path, logs } = await gatewayIn("throwing-reload", { ODD: 42 as unknown as string });
    try {
      const running = gateway.policy().hash;
      writeFileSync(
        path,
        JSON.stringify({ version: 1, auth: { tokens: [{ team: "t", env: "ODD" }] }, rules: [] }),
      );
      const problems = await gateway.reload();
      expect(problems).toHaveLength(1);
      expect(problems[0]?.message).toMatch(/^could not be loaded: /);
      expect(gateway.policy().hash).toBe(running);
      const failed = logs.find((l) => l.msg === "policy reload failed; keeping the running policy");
      expect(failed?.fields?.policy).toBe(running);
    } finally {
      await gateway.close();
    }
  });
});

describe("serve stopping with a remote call in flight", { timeout: 60_000 }, () => {
  it("answers the call's onError before it cuts the connection, rather than no answer at all", async () => {
    // A forward allowed 30 s under a 30 s deadline, to a server that never answers. Cut without
    // an answer, the hook would let the action through, whatever onError says.
    const { server, nextRequest, stop } = await serveBesideHanging("slow-forward", (target) => ({
      version: 1,
      defaults: { deadlineMs: 30_000 },
      egress: { allowedHttpHookUrls: [`${target}/*`], allowCidrs: ["127.0.0.1/32"] },
      rules: [
        {
          id: "team-server",
          on: "PreToolUse",
          forward: { url: `${target}/hook`, timeoutMs: 30_000, onError: "deny" },
        },
      ],
    }));
    try {
      const reached = nextRequest();
      const answer = fetch(`${server.url}/v1/hooks/claude-code`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({
          session_id: "s",
          transcript_path: "/t",
          cwd: "/p",
          hook_event_name: "PreToolUse",
          tool_name: "Bash",
          tool_input: { command: "ls" },
        }),
      });
      // The forward has reached the hanging server.
      await reached;
      server.child.kill("SIGTERM");
      const res = await answer;
      expect(res.status).toBe(200);
      const body = (await res.json()) as { hookSpecificOutput: { permissionDecision: string } };
      expect(body.hookSpecificOutput.permissionDecision).toBe("deny");
      const audit = await server.waitForLine((l) => l.msg === "decision");
      expect(audit.pending).toEqual([
        expect.objectContaining({
          outcome: "FORWARD_TIMEOUT",
          detail: "no answer before the gateway stopped",
        }),
      ]);
    } finally {
      await stop();
    }
  });
});

describe("serve stopping with a delivery in flight", { timeout: 60_000 }, () => {
  it("drains it and exits 0, says its job is left for the next start, and does not log connections cut when none was open", async () => {
    // A sink that accepts and never answers: the drain waits out the delivery's egress timeout
    // (15 s), past the 10 s grace the open connections get.
    const { server, deliverOne, stop } = await serveWithHangingSink("hanging-sink");
    try {
      // The delivery has reached the sink; no connection to the gateway is open.
      await deliverOne();
      expect(await server.stop()).toBe(0);
      const stdout = server.child.stdout;
      if (stdout && !stdout.closed) await new Promise((resolve) => stdout.once("close", resolve));
      // The drain ended with the delivery's timeout, logged: the stop did outlast the grace.
      expect(server.lines.some((l) => l.msg === "delivery failed; will retry")).toBe(true);
      // Its retry waits in the queue file: said, not left for the operator to guess.
      expect(
        server.lines.find(
          (l) => l.msg === "delivery jobs left in the queue; the next serve on this data dir delivers them",
        ),
      ).toMatchObject({ level: "info", jobs: 1, path: join(server.dataDir, "queue.sqlite") });
      expect(server.lines.filter((l) => String(l.msg).startsWith("stopping:"))).toEqual([]);
    } finally {
      await stop();
    }
  });

  it("refuses a start on its data dir meanwhile saying that it is stopping and to wait for it, not to stop it", async () => {
    const { server, deliverOne, hangUp, stop } = await serveWithHangingSink("hanging-sink-restart");
    try {
      await deliverOne();
      // A restart that starts the next one as soon as it has signalled the first.
      const stopped = server.stop();
      await server.waitForLine((l) => l.msg === "hookgate stopping");
      const second = await runCli([
        "serve",
        "--policy",
        join(dir, "hanging-sink-restart.json"),
        "--port",
        "0",
        "--data-dir",
        server.dataDir,
      ]);
      expect(second.code).toBe(1);
      expect(second.stderr).toContain(
        `cannot use the data dir ${server.dataDir} yet: the hookgate serve (pid ${server.child.pid}) on it is stopping;`,
      );
      expect(second.stderr).toContain(
        "Its stop takes up to 40 s (its open connections, then the deliveries in flight): wait for that process to exit, then start again",
      );
      // Told to stop a process already stopping, or to take another data dir, which leaves its jobs behind.
      expect(second.stderr).not.toContain("Stop that process");
      // The start refused: the delivery in flight ends now, so the drain need not wait out its
      // timeout (15 s) before the first one exits.
      hangUp();
      expect(await stopped).toBe(0);
      // Gone with its claim: the next serve on the data dir is not taken for one stopping.
      expect(existsSync(join(server.dataDir, "serve.stopping"))).toBe(false);
    } finally {
      await stop();
    }
  });
});

describe("serve beyond loopback", () => {
  it("warns at start when the policy has no auth, and not on loopback", async () => {
    // Bound to every interface for a moment; no request is sent.
    const open = join(dir, "no-auth.json");
    writeFileSync(open, JSON.stringify({ version: 1, rules: [] }));
    const startLines = async (host: string) => {
      const serve = spawnServe(open, join(dir, `open-${host}`), { host });
      await waitWhileRunning(serve.child, 1000, () => /hookgate listening/.test(serve.stdout()));
      await serve.stop();
      return serve
        .stdout()
        .split("\n")
        .filter((l) => l !== "")
        .map((l) => JSON.parse(l) as { level: string; msg: string });
    };
    const wide = await startLines("0.0.0.0");
    expect(wide).toContainEqual(
      expect.objectContaining({
        level: "warn",
        msg: "policy has no auth, and serve listens beyond loopback",
        problem: expect.stringMatching(
          /accepted as team "default".*add auth\.tokens, or listen on 127\.0\.0\.1/,
        ),
      }),
    );
    const local = await startLines("127.0.0.1");
    expect(local.some((l) => l.msg === "hookgate listening")).toBe(true);
    expect(local.some((l) => l.msg.includes("no auth"))).toBe(false);
  });

  it("warns when a reload drops auth, as a start without it does", async () => {
    // It warned at start only: a SIGHUP that took auth away opened the gateway without a word.
    const path = join(dir, "auth-then-none.json");
    const token = { team: "t", sha256: "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08" };
    writeFileSync(path, JSON.stringify({ version: 1, auth: { tokens: [token] }, rules: [] }));
    const serve = spawnServe(path, join(dir, "auth-then-none"), { host: "0.0.0.0" });
    try {
      await waitWhileRunning(serve.child, 1000, () => /hookgate listening/.test(serve.stdout()));
      expect(serve.stdout()).not.toContain("no auth");
      writeFileSync(path, JSON.stringify({ version: 1, rules: [] }));
      serve.child.kill("SIGHUP");
      await waitWhileRunning(serve.child, 1000, () => /no auth, and serve listens/.test(serve.stdout()));
      const lines = serve
        .stdout()
        .split("\n")
        .filter((l) => l !== "")
        .map((l) => JSON.parse(l) as { level: string; msg: string });
      expect(lines.map((l) => l.msg)).toEqual(
        expect.arrayContaining(["policy reloaded", "policy has no auth, and serve listens beyond loopback"]),
      );
    } finally {
      await serve.stop();
    }
  });
});

describe("serve that cannot listen, on a data dir with jobs to deliver", { timeout: 60_000 }, () => {
  it("exits with the port's error having sent no notification: it delivers only once it listens", async () => {
    const { server, deliverOne, stop, requests } = await serveWithHangingSink("taken-port");
    const taken = createServer();
    try {
      // A delivery in flight when serve is killed: its job is taken back at the next start.
      await deliverOne();
      server.child.kill("SIGKILL");
      await new Promise((resolve) => server.child.once("exit", resolve));
      await new Promise<void>((resolve) => taken.listen(0, "127.0.0.1", resolve));
      const port = (taken.address() as AddressInfo).port;
      const policy = join(dir, "taken-port.json");
      // Run beside the sink, not spawnSync: a test blocked in it would hold the sink's requests.
      const run = await runCli(
        ["serve", "--policy", policy, "--port", String(port), "--data-dir", server.dataDir],
        "",
        {},
        50_000,
      );
      expect(run.code).toBe(1);
      expect(run.stderr).toContain(`127.0.0.1:${port} is in use (EADDRINUSE)`);
      // It sent the job again before it found the port taken, spent an attempt (a retry minutes
      // away for the serve that runs next) and held the error back for the delivery's timeout.
      expect(requests()).toBe(1);
    } finally {
      await new Promise((resolve) => taken.close(resolve));
      await stop();
    }
  });
});

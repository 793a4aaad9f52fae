/**
 * The route parity table (test/support/route-table.ts) on `serve` and on the Worker side by side:
 * `hookgate serve` as a process (its node:http listener answering the hook routes, Hono the rest)
 * and the Worker bundle as it ships (scripts/build-worker.mjs) in workerd (Miniflare), each
 * request sent to both over HTTP as its case spells it (repeated headers included), on a
 * keep-alive connection as Claude Code sends a session's hooks. The two answers and the log lines
 * each runtime printed must be the same, and the expected table's (test/fixtures/route-parity.json),
 * which the Lambda handler is held to too. `UPDATE_ROUTE_PARITY=1` rewrites the table from `serve`.
 */
import { execFile } from "node:child_process";
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { Agent } from "node:http";
import { connect } from "node:net";
import { join, relative } from "node:path";
import type { Readable } from "node:stream";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { Miniflare } from "miniflare";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ServerProcess, startServerProcess } from "../support/process.js";
import { type RawRequest, sendRaw } from "../support/raw-http.js";
import {
  expectedOn,
  type Observed,
  observe,
  PARITY_POLICY,
  ROUTE_CASES,
  type RouteCase,
} from "../support/route-table.js";
import { tempDir } from "../support/temp.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const TABLE = join(ROOT, "test/fixtures/route-parity.json");
const update = process.env.UPDATE_ROUTE_PARITY === "1";
const expected = update ? {} : (JSON.parse(readFileSync(TABLE, "utf8")) as Record<string, Observed>);
const observed: Record<string, Observed> = {};

/** The lines one log stream printed, and a wait for the first that `found` picks. */
function lineStream() {
  const lines: Record<string, unknown>[] = [];
  const waiters = new Set<() => void>();
  let partial = "";
  return {
    lines,
    write(chunk: string) {
      const parts = (partial + chunk).split("\n");
      partial = parts.pop() ?? "";
      for (const part of parts)
        if (part.startsWith("{")) lines.push(JSON.parse(part) as Record<string, unknown>);
      for (const wake of waiters) wake();
    },
    /** The index of the first line from `from` on that `found` picks, once printed. */
    until(from: number, found: (line: Record<string, unknown>) => boolean): Promise<number> {
      return new Promise((resolve) => {
        const check = () => {
          const at = lines.findIndex((line, i) => i >= from && found(line));
          if (at < 0) return;
          waiters.delete(check);
          resolve(at);
        };
        waiters.add(check);
        check();
      });
    },
  };
}

let serve: ServerProcess;
let mf: Miniflare;
let workerUrl: string;
/** workerd prints console.log on stdout and console.warn and console.error on stderr. */
const workerOut = lineStream();
const workerErr = lineStream();
const agents = {
  node: new Agent({ keepAlive: true, maxSockets: 1 }),
  workers: new Agent({ keepAlive: true, maxSockets: 1 }),
};

beforeAll(async () => {
  const dir = tempDir("route-parity");
  const policyPath = join(dir, "policy.json");
  writeFileSync(policyPath, JSON.stringify(PARITY_POLICY));
  const outdir = join(dir, "worker");
  await promisify(execFile)(process.execPath, [join(ROOT, "scripts/build-worker.mjs"), "--outdir", outdir], {
    cwd: ROOT,
    env: { ...process.env, WRANGLER_SEND_METRICS: "false", CLOUDFLARE_CF_FETCH_ENABLED: "false" },
  });
  const modules = readdirSync(outdir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile() && e.name.endsWith(".js"))
    .map((e) => relative(outdir, join(e.parentPath, e.name)))
    .sort((a, b) => Number(b === "worker.js") - Number(a === "worker.js"));
  mf = new Miniflare({
    host: "127.0.0.1",
    handleRuntimeStdio(stdout: Readable, stderr: Readable) {
      stdout.on("data", (chunk: Buffer) => workerOut.write(chunk.toString()));
      stderr.on("data", (chunk: Buffer) => workerErr.write(chunk.toString()));
    },
    modules: modules.map((f) => ({ type: "ESModule" as const, path: join(outdir, f) })),
    modulesRoot: outdir,
    compatibilityDate: "2026-04-26",
    bindings: { HOOKGATE_POLICY: JSON.stringify(PARITY_POLICY) },
  });
  workerUrl = (await mf.ready).toString();
  serve = await startServerProcess(policyPath);
  // The Worker loads its policy with its first request, and says so: not a case's line.
  await sendRaw(workerUrl, { method: "GET", path: "/healthz", agent: agents.workers });
  await workerOut.until(0, (l) => l.msg === "policy loaded");
}, 90_000);

afterAll(async () => {
  agents.node.destroy();
  agents.workers.destroy();
  await mf?.dispose();
  await serve?.stop();
  if (update) writeFileSync(TABLE, `${JSON.stringify(observed, null, 2)}\n`);
});

const requestOf = (c: RouteCase, agent: Agent): RawRequest => ({
  method: c.method,
  path: c.path,
  headers: c.headers,
  agent,
  ...(c.bodyBase64 !== undefined
    ? { body: Buffer.from(c.bodyBase64, "base64") }
    : c.body !== undefined
      ? { body: c.body }
      : {}),
});

let marks = 0;
/**
 * Requests whose log lines mark where a case's lines end: a POST to no route, whose warning names
 * its path, and a hook whose decision names it as its session. The Worker prints the two on its
 * two streams, since what one printed may reach this process after what the other printed later.
 * They go on the connection the case's answer came on, so a runtime that closed it unannounced
 * after that answer fails here.
 */
const MARK_BODY = JSON.stringify({ hook_event_name: "Stop", session_id: "" });
async function mark(url: string, agent: Agent, after: RouteCase): Promise<string> {
  const path = `/parity-mark/${++marks}`;
  try {
    // An empty body (Content-Length: 0): one left unread would make the mark, not the case,
    // what a connection cannot carry on after.
    await sendRaw(url, { path, body: "", agent });
    await sendRaw(url, {
      path: "/v1/hooks/claude-code",
      headers: [["content-type", "application/json"]],
      body: MARK_BODY.replace('""', JSON.stringify(path)),
      agent,
    });
  } catch (e) {
    throw new Error(
      `a request after "${after.name}" on its keep-alive connection failed (${String(e)}): the connection was closed without a connection: close`,
    );
  }
  return path;
}
const marked = (path: string) => (l: Record<string, unknown>) => l.path === path || l.sessionId === path;

async function onNode(c: RouteCase): Promise<Observed> {
  const from = serve.lines.length;
  const res = await sendRaw(serve.url, requestOf(c, agents.node));
  const path = await mark(serve.url, agents.node, c);
  // Both marks printed: nothing of this case, nor of the marks, comes after.
  await serve.waitForLine((l) => l.path === path);
  await serve.waitForLine((l) => l.sessionId === path);
  const end = serve.lines.findIndex((l, i) => i >= from && marked(path)(l));
  return observe(c, res.status, (name) => res.headers[name], res.body, serve.lines.slice(from, end));
}

async function onWorker(c: RouteCase): Promise<Observed> {
  const from = [workerOut.lines.length, workerErr.lines.length] as const;
  const res = await sendRaw(workerUrl, requestOf(c, agents.workers));
  const path = await mark(workerUrl, agents.workers, c);
  const [out, err] = await Promise.all([
    workerOut.until(from[0], marked(path)),
    workerErr.until(from[1], marked(path)),
  ]);
  const lines = [...workerOut.lines.slice(from[0], out), ...workerErr.lines.slice(from[1], err)];
  return observe(c, res.status, (name) => res.headers[name], res.body, lines);
}

describe("the route parity table on serve and the Worker, side by side", () => {
  it.each(ROUTE_CASES)("$name", async (c) => {
    const [node, worker] = await Promise.all([onNode(c), onWorker(c)]);
    observed[c.name] = node;
    if (update) return;
    expect(node).toEqual(expected[c.name]);
    expect(worker).toEqual(expectedOn("workers", c, node));
    // The same fields in the same order (toEqual ignores their order).
    expect(worker.log.map((l) => Object.keys(l))).toEqual(node.log.map((l) => Object.keys(l)));
    expect(node.log.map((l) => Object.keys(l))).toEqual(expected[c.name]?.log.map((l) => Object.keys(l)));
  });
});

/**
 * Sends a request's headers and the first bytes of a body its Content-Length says is longer, then
 * stalls, and resolves with the answer's status line once one arrives; the rest of the body is
 * never sent, so an answer at all is one not held back for it.
 */
function stalledBody(origin: string, method: string, path: string): Promise<string> {
  const url = new URL(origin);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(url.port), url.hostname);
    let text = "";
    socket.on("data", (c: Buffer) => {
      text += c.toString("latin1");
      if (!text.includes("\r\n")) return;
      socket.destroy();
      resolve(text.split("\r\n", 1)[0] ?? "");
    });
    socket.on("error", reject);
    socket.on("close", () =>
      reject(new Error(`the connection closed with no answer: ${JSON.stringify(text)}`)),
    );
    socket.write(
      `${method} ${path} HTTP/1.1\r\nHost: ${url.host}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"hook_event_name":`,
    );
  });
}

describe("a body no route reads is not waited for", () => {
  it.each([
    ["a POST to no route", "POST", "/nope", "404"],
    ["a wrong method", "PUT", "/v1/hooks/claude-code", "405"],
    ["simulate's unknown client", "POST", "/v1/simulate?client=nope", "400"],
  ])(
    "%s from a sender that stalls mid-body is answered before the body's end",
    async (_, method, path, status) => {
      const [node, worker] = await Promise.all([
        stalledBody(serve.url, method, path),
        stalledBody(workerUrl, method, path),
      ]);
      expect(node).toMatch(new RegExp(`^HTTP/1\\.1 ${status} `));
      expect(worker).toMatch(new RegExp(`^HTTP/1\\.1 ${status} `));
    },
    20_000,
  );
});

describe("serve's Host check reads a path as the routes do", () => {
  // serve listens on loopback, so a request addressed to another name (a web page's own, pointed
  // at 127.0.0.1) is refused: a hook in its fail mode's answer (HOST_NOT_SERVED, 2xx), any other
  // route with a 421. Which is which must be the table's reading of the path, not one of its own.
  const hooks = ROUTE_CASES.filter((c) => !c.only && c.method === "POST");
  it.each(hooks)("$name", async (c) => {
    const table = expected[c.name] as Observed;
    const isHook = table.log.some((l) => l.msg === "decision");
    const { agent: _, ...request } = requestOf(c, agents.node);
    const res = await sendRaw(serve.url, {
      ...request,
      headers: [["host", "rebind.attacker.example"], ...c.headers],
    });
    if (isHook) {
      expect([res.status, res.headers["x-hookgate-error"]]).toEqual([200, "HOST_NOT_SERVED"]);
    } else {
      expect(res.status).toBe(421);
    }
  });
});

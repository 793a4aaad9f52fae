import { once } from "node:events";
import { Agent, createServer, type IncomingMessage, request, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { connect } from "node:net";
import { PassThrough } from "node:stream";
import { getRequestListener } from "@hono/node-server";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import type { RemoteInput, RemoteRun } from "../../src/app/remote-actions.js";
import type { Policy } from "../../src/core/policy.js";
import {
  type Answer,
  answerWriter,
  hookListener,
  notAProxy,
  parserRefusals,
  streamChunks,
} from "../../src/entry/node-listener.js";
import { createApp } from "../../src/http/app.js";
import { bodyDeadline, createBodyBudget, readBodyChunks } from "../../src/http/read-body.js";
import { watchedBudget } from "../support/app.js";
import { policyFrom, sha256 } from "../support/policy.js";

const bytes = (text: string) => new TextEncoder().encode(text);
const text = (chunk: Uint8Array | undefined) => new TextDecoder().decode(chunk);
/** A bounded wait on a condition: far past its time on a busy host. */
const WAIT = { timeout: 10_000, interval: 5 };
const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

/** What every listener here is given: the policy, a real clock, one id, the real digest. */
function listenerDeps(policy: Policy) {
  return {
    policy: () => policy,
    clock: { now: Date.now, monotonic: () => performance.now() },
    newId: () => "id-1",
    sha256,
  };
}

describe("streamChunks", () => {
  it("gives the chunks in order, whether they come before or after they are asked for, then the end", async () => {
    const stream = new PassThrough();
    const source = streamChunks(stream);
    const first = source.next();
    stream.write(bytes("a"));
    expect(text((await first).value as Uint8Array)).toBe("a");
    stream.write(bytes("b"));
    stream.write(bytes("c"));
    stream.end();
    await nextTurn();
    const rest: string[] = [];
    for (let r = await source.next(); !r.done; r = await source.next()) rest.push(text(r.value));
    expect(rest).toEqual(["b", "c"]);
    expect((await source.next()).done).toBe(true);
  });

  it("pauses the stream while a chunk waits to be asked for, so a body given up is not read on", async () => {
    const stream = new PassThrough();
    const source = streamChunks(stream);
    for (let i = 0; i < 5; i++) stream.write(bytes(String(i)));
    await nextTurn();
    expect(stream.isPaused()).toBe(true);
    expect(stream.readableLength).toBeGreaterThan(0); // left in the stream, not taken in
    const got: string[] = [];
    for (let i = 0; i < 5; i++) got.push(text((await source.next()).value as Uint8Array));
    expect(got.join("")).toBe("01234");
  });

  it("fails the read waiting when the stream fails", async () => {
    const stream = new PassThrough();
    const source = streamChunks(stream);
    const read = source.next();
    stream.destroy(new Error("socket hang up"));
    await expect(read).rejects.toThrow("socket hang up");
  });

  it("fails the next read when the stream closes before its end", async () => {
    const stream = new PassThrough();
    const source = streamChunks(stream);
    stream.destroy();
    await once(stream, "close");
    await expect(source.next()).rejects.toThrow("the connection closed before the body ended");
  });

  it("reads a real request's body, and a client that hangs up mid-body gets BODY_UNREADABLE", async () => {
    const results: unknown[] = [];
    let arrived = 0;
    const server = createServer((req: IncomingMessage, res: ServerResponse) => {
      arrived += 1;
      readBodyChunks(streamChunks(req), req.headers["content-length"], 1024).then((result) => {
        results.push(result);
        res.end();
      });
    });
    server.listen(0, "127.0.0.1");
    await once(server, "listening");
    const { port } = server.address() as AddressInfo;
    try {
      const whole = request({ port, host: "127.0.0.1", method: "POST" });
      whole.end('{"hook_event_name":"Stop"}');
      const [answer] = await once(whole, "response");
      answer.resume();
      await once(answer, "end");
      expect(results[0]).toEqual({ ok: true, text: '{"hook_event_name":"Stop"}' });

      const cut = request({ port, host: "127.0.0.1", method: "POST", headers: { "content-length": "100" } });
      cut.on("error", () => {});
      cut.write('{"hook_event_name":');
      // Hung up once the server is reading the body, then its read's end waited for.
      await vi.waitFor(() => expect(arrived, "the cut request reached the server").toBe(2), WAIT);
      cut.destroy();
      await vi.waitFor(() => expect(results, "the cut request's read ended").toHaveLength(2), WAIT);
      expect(results[1]).toMatchObject({ ok: false, error: { code: "BODY_UNREADABLE" } });
    } finally {
      server.close();
    }
  });
});

describe("hookListener's body deadline", () => {
  const logs: Record<string, unknown>[] = [];
  let port = 0;
  /** Body deadlines that passed: an answer that waited for its deadline comes after one more. */
  let deadlinesPassed = 0;
  let server: ReturnType<typeof createServer>;
  beforeAll(async () => {
    const policy = await policyFrom({
      version: 1,
      rules: [{ id: "no-rm", on: "PreToolUse", matcher: "Bash", if: ["Bash(rm *)"], decide: "deny" }],
    });
    const deps = {
      ...listenerDeps(policy),
      logger: { log: (level: string, msg: string, fields?: object) => logs.push({ level, msg, ...fields }) },
    };
    // As serve wires them (node.ts), with a deadline short enough for a test (serve's is 60 s):
    // the hook routes the listener answers, and those it leaves to the Hono app.
    const withDeadline = {
      ...deps,
      bodyDeadline: () => {
        const deadline = bodyDeadline(300);
        deadline.late.catch(() => {
          deadlinesPassed += 1;
        });
        return deadline;
      },
    };
    const app = createApp(withDeadline);
    server = createServer(hookListener(withDeadline, getRequestListener(app.fetch)));
    server.listen(0, "127.0.0.1");
    await once(server, "listening");
    port = (server.address() as AddressInfo).port;
  });
  afterAll(() => server.close());

  /** Sends `head` of a 500-byte body and no more; the raw answer, and whether its deadline had passed. */
  async function stall(path: string, head: string): Promise<{ answer: string; waited: boolean }> {
    const passedBefore = deadlinesPassed;
    const socket = connect(port, "127.0.0.1");
    await once(socket, "connect");
    socket.write(
      `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 500\r\n\r\n${head}`,
    );
    const received: Buffer[] = [];
    socket.on("data", (chunk: Buffer) => received.push(chunk));
    await once(socket, "close"); // the server closes it: the rest of the body was never read
    return { answer: Buffer.concat(received).toString(), waited: deadlinesPassed === passedBefore + 1 };
  }

  it.each([
    "/v1/hooks/claude-code",
    "/hookgate/v1/hooks/claude-code", // a prefix: the Hono app's route
    "//v1/hooks/claude-code", // doubled slashes: the Hono app's route
  ])(
    "answers a body to %s that does not all arrive in time with the fail mode's decision, named, and closes the connection",
    async (path) => {
      logs.length = 0;
      const head = '{"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"rm -rf /';
      const { answer, waited } = await stall(path, head);
      const [statusLine, ...lines] = answer.slice(0, answer.indexOf("\r\n\r\n")).split("\r\n");
      expect(statusLine).toBe("HTTP/1.1 200 OK");
      expect(lines.map((l) => l.toLowerCase())).toEqual(
        expect.arrayContaining(["x-hookgate-error: body_unreadable", "connection: close"]),
      );
      const body = JSON.parse(answer.slice(answer.indexOf("\r\n\r\n") + 4));
      // The policy sets no defaults.onError: the fail mode is open, said in a systemMessage.
      expect(body).toEqual({
        systemMessage:
          "hookgate: the request body could not be read (it did not all arrive within 0.3 s; the client sent it too slowly or stalled) [BODY_UNREADABLE]",
      });
      expect(waited, "answered only once the body's deadline had passed").toBe(true);
      expect(logs.find((l) => l.msg === "decision")).toMatchObject({
        event: "PreToolUse",
        error: "BODY_UNREADABLE",
      });
    },
  );

  it("answers a /v1/simulate body that does not all arrive in time with the simulation of that error, and closes the connection", async () => {
    logs.length = 0;
    const { answer, waited } = await stall(
      "/v1/simulate",
      '{"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"rm -rf /',
    );
    const [statusLine, ...lines] = answer.slice(0, answer.indexOf("\r\n\r\n")).split("\r\n");
    expect(statusLine).toBe("HTTP/1.1 200 OK");
    expect(lines.map((l) => l.toLowerCase())).toEqual(
      expect.arrayContaining(["x-hookgate-error: body_unreadable", "connection: close"]),
    );
    expect(JSON.parse(answer.slice(answer.indexOf("\r\n\r\n") + 4))).toMatchObject({
      event: "PreToolUse",
      error: {
        code: "BODY_UNREADABLE",
        message:
          "the request body could not be read (it did not all arrive within 0.3 s; the client sent it too slowly or stalled)",
      },
    });
    expect(waited, "answered only once the body's deadline had passed").toBe(true);
    expect(
      logs.filter((l) => l.msg === "decision"),
      "a simulation writes no audit line",
    ).toEqual([]);
  });

  it("leaves a body that arrived alone: past the deadline, the same connection carries the next request", async () => {
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    const post = (command: string) =>
      new Promise<{ status: number; body: string; reused: boolean }>((resolve, reject) => {
        const req = request(
          { port, host: "127.0.0.1", method: "POST", path: "/v1/hooks/claude-code", agent },
          (res) => {
            let body = "";
            res.on("data", (c) => {
              body += c;
            });
            res.on("end", () => resolve({ status: res.statusCode ?? 0, body, reused: req.reusedSocket }));
          },
        );
        req.on("error", reject);
        req.setHeader("content-type", "application/json");
        req.end(
          JSON.stringify({ hook_event_name: "PreToolUse", tool_name: "Bash", tool_input: { command } }),
        );
      });
    try {
      expect((await post("rm -rf /")).body).toMatch(/"permissionDecision":"deny"/);
      await new Promise((resolve) => setTimeout(resolve, 500)); // past the 300 ms deadline
      const next = await post("ls");
      expect(next).toMatchObject({ status: 200, body: "", reused: true });
    } finally {
      agent.destroy();
    }
  });

  it("makes no AbortSignal for a hook without prompt or forward rules: one costs a few µs a decision", async () => {
    // Only a run of remote rules gives up what it waits on when its client leaves (CLIENT_LEFT).
    const Real = globalThis.AbortController;
    let made = 0;
    globalThis.AbortController = class extends Real {
      constructor() {
        super();
        made += 1;
      }
    };
    try {
      logs.length = 0;
      const res = await fetchDecision(port, "rm -rf /");
      expect(res).toMatch(/"permissionDecision":"deny"/);
      expect(made).toBe(0);
    } finally {
      globalThis.AbortController = Real;
    }
  });
});

/** A PreToolUse Bash hook's answer body, sent with node:http (which makes no AbortController). */
function fetchDecision(port: number, command: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = request({ port, host: "127.0.0.1", method: "POST", path: "/v1/hooks/claude-code" }, (res) => {
      let body = "";
      res.on("data", (c) => {
        body += c;
      });
      res.on("end", () => resolve(body));
    });
    req.on("error", reject);
    req.setHeader("content-type", "application/json");
    req.end(JSON.stringify({ hook_event_name: "PreToolUse", tool_name: "Bash", tool_input: { command } }));
  });
}

describe("readBodyChunks with a deadline", () => {
  /** A deadline that never passes, recording whether the reading ended it. */
  const recorded = () => {
    const deadline = { late: new Promise<never>(() => {}), cleared: 0, clear: () => void deadline.cleared++ };
    return deadline;
  };
  const source = (chunks: Uint8Array[], failAt?: number) => {
    let i = 0;
    return {
      next: async (): Promise<IteratorResult<Uint8Array, unknown>> => {
        if (i === failAt) throw new Error("the connection closed before the body ended");
        const value = chunks[i++];
        return value === undefined ? { done: true, value: undefined } : { done: false, value };
      },
    };
  };

  it("ends the deadline however the reading ends: whole, failed, or given up past the drain limit", async () => {
    const whole = recorded();
    expect(await readBodyChunks(source([bytes('{"a":1}')]), null, 1024, () => whole)).toMatchObject({
      ok: true,
    });
    const failed = recorded();
    expect(await readBodyChunks(source([bytes("{")], 1), null, 1024, () => failed)).toMatchObject({
      error: { code: "BODY_UNREADABLE" },
    });
    const givenUp = recorded();
    expect(
      await readBodyChunks(source([bytes("{")]), String(70 * 1024 * 1024), 1024, () => givenUp),
    ).toMatchObject({
      error: { code: "BODY_TOO_LARGE" },
      unread: true,
    });
    expect([whole.cleared, failed.cleared, givenUp.cleared]).toEqual([1, 1, 1]);
  });

  it("gives up on a body whose deadline passes, with its reason, and keeps what came for the event's name", async () => {
    const pending = { next: () => new Promise<IteratorResult<Uint8Array, unknown>>(() => {}) };
    let reads = 0;
    const first = {
      next: () =>
        reads++ === 0
          ? Promise.resolve({ done: false as const, value: bytes('{"hook_event_name":"Stop",') })
          : pending.next(),
    };
    const result = await readBodyChunks(first, "500", 1024, () => bodyDeadline(50));
    expect(result).toEqual({
      ok: false,
      unread: true,
      error: {
        code: "BODY_UNREADABLE",
        message:
          "the request body could not be read (it did not all arrive within 0.05 s; the client sent it too slowly or stalled)",
        eventName: "Stop",
      },
    });
  });
});

describe("readBodyChunks with a budget of bytes still arriving", () => {
  /** A body whose first chunk comes at once and whose end waits until `finish` is called. */
  const stalled = (head: string) => {
    let finish: () => void = () => {};
    const ended = new Promise<void>((resolve) => {
      finish = resolve;
    });
    let reads = 0;
    return {
      finish: () => finish(),
      source: {
        next: async (): Promise<IteratorResult<Uint8Array, unknown>> => {
          if (reads++ === 0) return { done: false, value: bytes(head) };
          await ended;
          return { done: true, value: undefined };
        },
      },
    };
  };

  it("gives up a body that would pass the budget while others arrive, and takes it again once they end", async () => {
    // Clients that each send most of a body and stall would otherwise hold it all until the
    // body deadline: a few hundred of them, at 1 MiB each, ran serve out of memory.
    const budget = createBodyBudget(100);
    const first = stalled(`{"hook_event_name":"Stop","x":"${"a".repeat(60)}`);
    const reading = readBodyChunks(first.source, null, 1024, undefined, budget);
    await new Promise((resolve) => setImmediate(resolve));
    const second = stalled(`{"hook_event_name":"PreToolUse","x":"${"b".repeat(60)}"}`);
    expect(await readBodyChunks(second.source, null, 1024, undefined, budget)).toEqual({
      ok: false,
      unread: true,
      error: {
        code: "BODY_UNREADABLE",
        message:
          "the gateway holds as many bytes of other requests' bodies as it may, so this one was not read; it may be sent again",
        eventName: "PreToolUse",
      },
    });
    // What /metrics reads of it: the first body's bytes held, the second one refused.
    expect([budget.heldBytes(), budget.limitBytes, budget.refused()]).toEqual([
      `{"hook_event_name":"Stop","x":"${"a".repeat(60)}`.length,
      100,
      1,
    ]);
    first.finish();
    await reading;
    expect(budget.heldBytes()).toBe(0);
    const third = stalled(`{"hook_event_name":"PreToolUse","x":"${"c".repeat(60)}"}`);
    third.finish();
    expect(await readBodyChunks(third.source, null, 1024, undefined, budget)).toMatchObject({ ok: true });
  });

  it("reads one body alone whatever its size, so a policy's own limit is never cut by the budget", async () => {
    const budget = createBodyBudget(10);
    const one = stalled(`{"hook_event_name":"Stop","x":"${"a".repeat(60)}"}`);
    one.finish();
    expect(await readBodyChunks(one.source, null, 1024, undefined, budget)).toMatchObject({ ok: true });
    // In several chunks too: its own earlier chunks are not other bodies.
    const chunked = [bytes('{"hook_event_name":"Stop",'), bytes(`"x":"${"a".repeat(40)}`), bytes('"}')];
    let i = 0;
    const source = {
      next: async (): Promise<IteratorResult<Uint8Array, unknown>> => {
        const value = chunked[i++];
        return value === undefined ? { done: true, value: undefined } : { done: false, value };
      },
    };
    expect(await readBodyChunks(source, null, 1024, undefined, budget)).toMatchObject({ ok: true });
  });
});

describe("hookListener's budgets of bodies still arriving", () => {
  it("holds the bodies of callers without a valid token in a budget of their own, so they cannot crowd out a team's hooks", async () => {
    // Without it, 64 stalled 1 MiB bodies sent with no token at all filled serve's one budget, and
    // every team's hook was answered BODY_UNREADABLE in its fail mode until they ended.
    const policy = await policyFrom({
      version: 1,
      auth: { tokens: [{ team: "a", sha256: await sha256("team-a-token") }] },
      rules: [{ id: "no-rm", on: "PreToolUse", matcher: "Bash", if: ["Bash(rm *)"], decide: "deny" }],
    });
    // Settled once the stalled body's first bytes are taken from a budget.
    let tookBytes: () => void = () => {};
    const strangerHolds = new Promise<void>((resolve) => {
      tookBytes = resolve;
    });
    const deps = {
      ...listenerDeps(policy),
      logger: { log: () => {} },
      bodyBudget: watchedBudget(createBodyBudget(100), () => tookBytes()),
      unauthenticatedBodyBudget: watchedBudget(createBodyBudget(100), () => tookBytes()),
    };
    const app = createApp(deps);
    const server = createServer(hookListener(deps, getRequestListener(app.fetch)));
    server.listen(0, "127.0.0.1");
    await once(server, "listening");
    const { port } = server.address() as AddressInfo;
    const stalled = connect(port, "127.0.0.1");
    stalled.on("error", () => {});
    const post = (authorization: string) =>
      new Promise<{ error: string | undefined; body: string }>((resolve, reject) => {
        const req = request(
          { port, host: "127.0.0.1", method: "POST", path: "/v1/hooks/claude-code" },
          (res) => {
            let body = "";
            res.on("data", (c) => {
              body += c;
            });
            res.on("end", () => resolve({ error: res.headers["x-hookgate-error"] as string, body }));
          },
        );
        req.on("error", reject);
        req.setHeader("content-type", "application/json");
        req.setHeader("authorization", authorization);
        req.end(
          JSON.stringify({
            hook_event_name: "PreToolUse",
            tool_name: "Bash",
            tool_input: { command: `rm -rf /${"b".repeat(60)}` },
          }),
        );
      });
    try {
      // No Authorization header, 80 of the 500 bytes it declares, then nothing.
      stalled.write(
        `POST /v1/hooks/claude-code HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 500\r\n\r\n{"hook_event_name":"PreToolUse","x":"${"a".repeat(60)}`,
      );
      await strangerHolds;
      const team = await post("Bearer team-a-token");
      expect(team.error).toBeUndefined();
      expect(team.body).toMatch(/"permissionDecision":"deny"/);
      // Another caller without a valid token shares the stalled one's budget, and is refused by it.
      expect((await post("Bearer not-a-token")).error).toBe("BODY_UNREADABLE");
    } finally {
      stalled.destroy();
      server.close();
    }
  });
});

describe("hookListener's reading of a non-ASCII token", () => {
  it("authenticates the token as curl sends it, in UTF-8, and as node:http sends it, in Latin-1", async () => {
    // deepagents' hook is a curl command, which sends $HOOKGATE_AUTH's bytes as the shell holds
    // them (UTF-8); Node's parser reads a header one character a byte. The token was refused.
    const policy = await policyFrom(
      {
        version: 1,
        auth: { tokens: [{ team: "a", env: "TEAM_A_TOKEN" }] },
        rules: [{ id: "no-rm", on: "PreToolUse", matcher: "Bash", if: ["Bash(rm *)"], decide: "deny" }],
      },
      { TEAM_A_TOKEN: "geheim-für-team-a" },
    );
    const deps = { ...listenerDeps(policy), logger: { log: () => {} } };
    const app = createApp(deps);
    const server = createServer(hookListener(deps, getRequestListener(app.fetch)));
    server.listen(0, "127.0.0.1");
    await once(server, "listening");
    const { port } = server.address() as AddressInfo;
    const body = JSON.stringify({
      hook_event_name: "PreToolUse",
      tool_name: "Bash",
      tool_input: { command: "rm -rf build" },
    });
    const post = async (token: Buffer) => {
      const socket = connect(port, "127.0.0.1");
      await once(socket, "connect");
      socket.write(
        Buffer.concat([
          Buffer.from(
            `POST /v1/hooks/deepagents HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nConnection: close\r\nContent-Length: ${Buffer.byteLength(body)}\r\nAuthorization: Bearer `,
          ),
          token,
          Buffer.from(`\r\n\r\n${body}`),
        ]),
      );
      const received: Buffer[] = [];
      socket.on("data", (chunk: Buffer) => received.push(chunk));
      await once(socket, "close");
      return Buffer.concat(received).toString();
    };
    try {
      for (const encoding of ["utf8", "latin1"] as const) {
        const answer = await post(Buffer.from("geheim-für-team-a", encoding));
        expect(answer, encoding).not.toMatch(/x-hookgate-error/i);
        expect(answer, encoding).toMatch(/"permissionDecision":"deny"/);
      }
      expect(await post(Buffer.from("geheim-fur-team-a"))).toMatch(/x-hookgate-error: AUTH_UNKNOWN_TOKEN/i);
    } finally {
      server.close();
    }
  });
});

describe("hookListener's client-left signal on a kept-alive connection", () => {
  it("lets go of a hook's signal once it is decided: the connection's close aborts only the hook still being decided", async () => {
    // Claude Code sends a session's hooks on one connection, open for hours: a decided hook's
    // signal kept for its close would pile up there, one per hook with remote rules.
    const policy = await policyFrom(
      {
        version: 1,
        models: { m: { provider: "anthropic", model: "claude-haiku-4-5", apiKey: "env:K" } },
        rules: [
          { id: "judge", on: "PreToolUse", matcher: "Write", prompt: { text: "ok? $ARGUMENTS", model: "m" } },
        ],
      },
      { K: "k" },
    );
    const signals: AbortSignal[] = [];
    let started: () => void = () => {};
    // Each run answers at once but the third, which waits for its client to leave.
    const remote = {
      run: (input: RemoteInput): Promise<RemoteRun> => {
        const signal = input.connection?.leaving() as AbortSignal;
        signals.push(signal);
        const none = { effects: [], audit: [] };
        if (signals.length < 3) return Promise.resolve(none);
        started();
        return new Promise((resolve) => signal.addEventListener("abort", () => resolve(none)));
      },
    };
    const deps = {
      ...listenerDeps(policy),
      logger: { log: () => {} },
      remote,
    };
    const server = createServer(hookListener(deps, () => {}));
    server.listen(0, "127.0.0.1");
    await once(server, "listening");
    const { port } = server.address() as AddressInfo;
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    const post = (i: number) => {
      const req = request({ port, host: "127.0.0.1", method: "POST", path: "/v1/hooks/claude-code", agent });
      req.setHeader("content-type", "application/json");
      req.end(
        JSON.stringify({
          hook_event_name: "PreToolUse",
          tool_name: "Write",
          tool_input: { file_path: `/p/${i}` },
        }),
      );
      return req;
    };
    try {
      for (const i of [0, 1]) {
        const [res] = (await once(post(i), "response")) as [IncomingMessage];
        res.resume();
        await once(res, "end");
      }
      const running = new Promise<void>((resolve) => {
        started = resolve;
      });
      const last = post(2);
      last.on("error", () => {});
      await running;
      expect(last.reusedSocket).toBe(true);
      const socket = last.socket;
      expect(socket).not.toBeNull();
      // The server's side closes after the client's: the third hook's signal says when.
      const aborted = once(signals[2] as AbortSignal, "abort");
      socket?.destroy();
      await aborted;
      expect(signals.map((s) => s.aborted)).toEqual([false, false, true]);
    } finally {
      agent.destroy();
      server.close();
    }
  });
});

describe("hookListener with serve's parserRefusals, and a client that ends its connection within a request", () => {
  it("says the connection closed before the body ended, not that Node's parser refused the request", async () => {
    // A client that leaves mid-send (an agent killed, a proxy whose own client left) ends its side
    // of the connection: Node's parser then fails the request being read (HPE_INVALID_EOF_STATE).
    const policy = await policyFrom({ version: 1, rules: [] });
    const logs: Record<string, unknown>[] = [];
    const logger = {
      log: (level: string, msg: string, fields?: object) => logs.push({ level, msg, ...fields }),
    };
    const server = createServer(hookListener({ ...listenerDeps(policy), logger }, () => {}));
    server.on("clientError", parserRefusals({ ...listenerDeps(policy), logger }));
    server.listen(0, "127.0.0.1");
    await once(server, "listening");
    const { port } = server.address() as AddressInfo;
    /** Sends `text`, then ends the connection's sending side; what came back before it closed. */
    const endWithin = async (text: string) => {
      const socket = connect(port, "127.0.0.1");
      await once(socket, "connect");
      const received: Buffer[] = [];
      socket.on("data", (chunk: Buffer) => received.push(chunk));
      socket.on("error", () => {});
      socket.write(text);
      await vi.waitFor(() => expect(socket.bytesWritten).toBe(Buffer.byteLength(text)), WAIT);
      socket.end();
      await once(socket, "close");
      return Buffer.concat(received).toString();
    };
    const head =
      "POST /v1/hooks/claude-code HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 500\r\n\r\n";
    try {
      const answer = await endWithin(`${head}{"hook_event_name":"PreToolUse","tool_name":"Bash"`);
      expect(answer.split("\r\n")[0]).toBe("HTTP/1.1 200 OK");
      expect(JSON.parse(answer.slice(answer.indexOf("\r\n\r\n") + 4))).toEqual({
        systemMessage:
          "hookgate: the request body could not be read (the connection closed before the body ended) [BODY_UNREADABLE]",
      });
      expect(logs.find((l) => l.msg === "decision")).toMatchObject({
        error: "BODY_UNREADABLE",
        reason: "the request body could not be read (the connection closed before the body ended)",
      });
      // Ended within its headers: no request was read, and none refused.
      await endWithin("POST /v1/hooks/claude-code HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Le");
      expect(logs.filter((l) => l.msg === "request refused by Node's HTTP parser")).toEqual([]);
    } finally {
      server.close();
    }
  });
});

describe("hookListener with serve's parserRefusals, and a body refused after its request's answer", () => {
  it("closes the connection, as Node does, rather than leave it open with its parser failed", async () => {
    // A 404 or 405 is answered at once and its body drained after (@hono/node-server): a
    // malformed chunk, or the client's end, fails that drain, and nothing is left to answer.
    const policy = await policyFrom({ version: 1, rules: [] });
    const logger = { log: () => {} };
    const deps = { ...listenerDeps(policy), logger };
    const app = createApp(deps);
    const server = createServer(hookListener(deps, getRequestListener(app.fetch)));
    server.keepAliveTimeout = 65_000; // as serve sets it: an idle connection is not closed for this
    server.on("clientError", parserRefusals(deps));
    server.listen(0, "127.0.0.1");
    await once(server, "listening");
    const { port } = server.address() as AddressInfo;
    const socket = connect(port, "127.0.0.1");
    try {
      await once(socket, "connect");
      let received = "";
      socket.on("data", (chunk: Buffer) => {
        received += chunk.toString();
      });
      socket.on("error", () => {});
      let ended = false;
      socket.on("end", () => {
        ended = true;
      });
      socket.write(
        "POST /v1/hook/deepcode HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n",
      );
      await vi.waitFor(() => expect(received).toContain("HTTP/1.1 404 "), WAIT);
      socket.write("zz\r\n"); // no chunk size
      await vi.waitFor(() => expect(ended, "the server closed the connection").toBe(true), WAIT);
      // The 404 first. Where the chunk came before its drain began (a busy host), the refusal is
      // Node's own, a 400 after it, then the close: either way nothing more is read on it.
      const statuses = received.match(/HTTP\/1\.1 \d{3}/g) ?? [];
      expect(statuses[0]).toBe("HTTP/1.1 404");
      expect(statuses.slice(1).every((status) => status === "HTTP/1.1 400")).toBe(true);
    } finally {
      socket.destroy();
      server.close();
    }
  });
});

describe("answerWriter", () => {
  interface Written {
    calls: string[];
    destroyed: boolean;
  }
  /** A response whose first writeHead throws when `failing`, as Node's does on an invalid header. */
  const fakeResponse = (written: Written, failing = false) =>
    ({
      headersSent: false,
      writeHead(status: number) {
        if (failing && written.calls.length === 0 && status !== 500) {
          written.calls.push("threw");
          throw new Error("invalid header");
        }
        written.calls.push(`head ${status}`);
      },
      end(body: string) {
        written.calls.push(`end ${body}`);
      },
      destroy() {
        written.destroyed = true;
      },
    }) as unknown as ServerResponse;
  const answer = (response: ServerResponse, body: string): Answer => ({
    response,
    status: 200,
    headers: { "content-type": "application/json" },
    body,
  });

  it("writes the answers of one turn in one deferred task, at the end of the turn", async () => {
    const tasks: (() => void)[] = [];
    const send = answerWriter({ log: () => {} }, (task) => tasks.push(task));
    const first: Written = { calls: [], destroyed: false };
    const second: Written = { calls: [], destroyed: false };
    send(answer(fakeResponse(first), "{}"));
    send(answer(fakeResponse(second), '{"continue":true}'));
    expect(tasks).toHaveLength(1); // one task for the turn, not one per answer
    expect(first.calls).toEqual([]); // nothing written before it runs
    tasks[0]?.();
    expect(first.calls).toEqual(["head 200", "end {}"]);
    expect(second.calls).toEqual(["head 200", 'end {"continue":true}']);
    const third: Written = { calls: [], destroyed: false };
    send(answer(fakeResponse(third), "{}"));
    expect(tasks).toHaveLength(2); // a later turn defers again
    tasks[1]?.();
    expect(third.calls).toEqual(["head 200", "end {}"]);

    const real = answerWriter({ log: () => {} });
    const later: Written = { calls: [], destroyed: false };
    real(answer(fakeResponse(later), "{}"));
    expect(later.calls).toEqual([]);
    await nextTurn(); // by default at the end of the turn (setImmediate)
    expect(later.calls).toEqual(["head 200", "end {}"]);
  });

  it("answers a write that throws with a 500 and the log line, leaving the turn's other answers alone", async () => {
    const logs: { msg: string; fields: unknown }[] = [];
    const send = answerWriter({ log: (_level, msg, fields) => logs.push({ msg, fields }) });
    const broken: Written = { calls: [], destroyed: false };
    const fine: Written = { calls: [], destroyed: false };
    send(answer(fakeResponse(broken, true), "{}"));
    send(answer(fakeResponse(fine), '{"continue":true}'));
    await nextTurn();
    expect(broken.calls).toEqual([
      "threw",
      "head 500",
      'end {"error":{"code":"INTERNAL_ERROR","message":"internal error; see the gateway log"}}',
    ]);
    expect(broken.destroyed).toBe(false);
    expect(fine.calls).toEqual(["head 200", 'end {"continue":true}']);
    expect(logs).toEqual([
      { msg: "could not write a hook answer", fields: { error: "invalid header", path: "/v1/hooks" } },
    ]);
  });
});

describe.each([
  ["deny", { decision: "block" }],
  ["allow", undefined],
] as const)("serve's parserRefusals under defaults.onError %s, over a raw socket", (onError, decided) => {
  // Node's parser refuses these before any hookgate code runs; it answered each a bare 400 or
  // 431, which Claude Code lets the action through on and deepcode blocks on, whatever the policy.
  const logs: Record<string, unknown>[] = [];
  const logger = {
    log: (level: string, msg: string, fields?: object) => logs.push({ level, msg, ...fields }),
  };
  let server: ReturnType<typeof createServer>;
  let port: number;
  beforeAll(async () => {
    const policy = await policyFrom({ version: 1, defaults: { onError }, rules: [] });
    const deps = { ...listenerDeps(policy), logger };
    server = createServer(hookListener(deps, getRequestListener(createApp(deps).fetch)));
    server.on("clientError", parserRefusals(deps));
    server.listen(0, "127.0.0.1");
    await once(server, "listening");
    port = (server.address() as AddressInfo).port;
  });
  afterAll(() => server.close());

  /** Sends `text` in one write; everything that came back before the server closed the connection. */
  const exchange = async (text: string) => {
    const socket = connect(port, "127.0.0.1");
    const received: Buffer[] = [];
    socket.on("data", (chunk: Buffer) => received.push(chunk));
    socket.on("error", () => {});
    socket.write(text);
    await once(socket, "close");
    const answer = Buffer.concat(received).toString("latin1");
    const [head = "", body = ""] = answer.split("\r\n\r\n");
    return { status: head.split("\r\n")[0], head: head.toLowerCase(), body };
  };

  it.each([
    [
      "two differing Content-Lengths",
      "Content-Length: 2\r\nContent-Length: 3\r\n\r\n{}",
      "HPE_UNEXPECTED_CONTENT_LENGTH",
    ],
    [
      "a bare LF after a header",
      "Content-Type: application/json\nContent-Length: 2\r\n\r\n{}",
      "HPE_CR_EXPECTED",
    ],
    [
      "headers over 16 KiB",
      `X-Big: ${"a".repeat(20_000)}\r\nContent-Length: 2\r\n\r\n{}`,
      "HPE_HEADER_OVERFLOW",
    ],
  ])(
    "a hook with %s gets its fail mode's decision, then the connection closes",
    async (_name, rest, code) => {
      const before = logs.length;
      const { status, head, body } = await exchange(
        `POST /v1/hooks/claude-code HTTP/1.1\r\nHost: 127.0.0.1\r\n${rest}`,
      );
      expect(status).toBe("HTTP/1.1 200 OK");
      expect(head).toContain("x-hookgate-error: body_unreadable");
      expect(head).toContain("connection: close");
      expect(head).toContain("x-hookgate-decision-id: id-1");
      if (decided) {
        expect(JSON.parse(body)).toEqual({ ...decided, reason: expect.stringContaining(code) });
      } else {
        expect(body).toBe("");
      }
      expect(logs.slice(before)).toEqual([
        expect.objectContaining({ msg: "request refused by Node's HTTP parser", error: code }),
        expect.objectContaining({ msg: "decision", error: "BODY_UNREADABLE" }),
      ]);
    },
  );

  it("closes the connection once the decision is sent, though the client keeps its own side open", async () => {
    // Only ended, the connection stayed open as long as its client held it: no timeout of Node's
    // reached it, and a stop waited on it past its grace.
    const socket = connect({ port, host: "127.0.0.1", allowHalfOpen: true });
    socket.on("error", () => {});
    socket.resume();
    socket.write(
      "POST /v1/hooks HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n{}",
    );
    await once(socket, "end");
    try {
      await vi.waitFor(async () => expect(await openConnections(server)).toBe(0), WAIT);
    } finally {
      socket.destroy();
    }
  });

  it("lets a client still sending a body behind the refused head send it, the decision read", async () => {
    // Closed as soon as the decision was sent, the connection met the rest of an 8 MB body with
    // EPIPE on the client's side, or a reset in place of the decision.
    const socket = connect(port, "127.0.0.1");
    const received: Buffer[] = [];
    const failed: string[] = [];
    socket.on("data", (chunk: Buffer) => received.push(chunk));
    socket.on("error", (e: NodeJS.ErrnoException) => failed.push(e.code ?? e.message));
    const size = 8_000_000;
    socket.write(
      `POST /v1/hooks HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: ${size}\r\nContent-Length: 3\r\n\r\n`,
    );
    socket.end("x".repeat(size));
    await new Promise((resolve) => socket.on("close", resolve));
    expect(failed).toEqual([]);
    expect(Buffer.concat(received).toString("latin1")).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
  });

  it("a hook whose request line itself ends in a bare LF gets its decision too", async () => {
    const { status, head } = await exchange(
      "POST /v1/hooks HTTP/1.1\nHost: 127.0.0.1\nContent-Length: 2\n\n{}",
    );
    expect(status).toBe("HTTP/1.1 200 OK");
    expect(head).toContain("x-hookgate-error: body_unreadable");
  });

  it("any other route, or a method other than POST, gets Node's own answer", async () => {
    const bad = "Content-Length: 2\r\nContent-Length: 3\r\n\r\n{}";
    expect((await exchange(`POST /v1/hook/claude-code HTTP/1.1\r\nHost: 127.0.0.1\r\n${bad}`)).status).toBe(
      "HTTP/1.1 400 Bad Request",
    );
    expect((await exchange(`PUT /v1/hooks HTTP/1.1\r\nHost: 127.0.0.1\r\n${bad}`)).status).toBe(
      "HTTP/1.1 400 Bad Request",
    );
    expect((await exchange("FOO /v1/hooks HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")).status).toBe(
      "HTTP/1.1 400 Bad Request",
    );
  });
});

describe("serve's parserRefusals on an unknown hook route holding a team's token", () => {
  it("masks the token as the path was sent, with its double slash", async () => {
    // The route's reading makes "//" one slash: read there, the token was no token, and the
    // decision line quoted it, but for that slash.
    const token = "Zm9v//YmFy/cXV4";
    const logs: Record<string, unknown>[] = [];
    const logger = {
      log: (level: string, msg: string, fields?: object) => logs.push({ level, msg, ...fields }),
    };
    const policy = await policyFrom({
      version: 1,
      defaults: { onError: "deny" },
      auth: { tokens: [{ team: "a", sha256: await sha256(token) }] },
      rules: [],
    });
    const deps = { ...listenerDeps(policy), logger };
    const server = createServer(hookListener(deps, getRequestListener(createApp(deps).fetch)));
    server.on("clientError", parserRefusals(deps));
    server.listen(0, "127.0.0.1");
    await once(server, "listening");
    try {
      const socket = connect((server.address() as AddressInfo).port, "127.0.0.1");
      const received: Buffer[] = [];
      socket.on("data", (chunk: Buffer) => received.push(chunk));
      socket.write(
        `POST /v1/hooks/claude-code/${token} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n{}`,
      );
      await once(socket, "close");
      const answer = Buffer.concat(received).toString();
      expect(answer).toContain("x-hookgate-error: UNKNOWN_CLIENT_ROUTE");
      const decision = logs.find((line) => line.msg === "decision");
      expect(decision?.reason).toContain('no client route "/v1/hooks/claude-code/[masked]"');
      expect(answer + JSON.stringify(logs)).not.toMatch(/Zm9v|YmFy|cXV4/);
    } finally {
      server.close();
    }
  });
});

/**
 * A server with serve's parserRefusals given `refusalDeps` (the listener's own by default); the
 * answer to `text` sent in one write on a raw socket, and the log lines.
 */
async function refusedHead(
  policy: Policy,
  text: string,
  refusalDeps: (deps: ReturnType<typeof listenerDeps>) => ReturnType<typeof listenerDeps> = (d) => d,
): Promise<{ answer: string; logs: Record<string, unknown>[] }> {
  const logs: Record<string, unknown>[] = [];
  const logger = {
    log: (level: string, msg: string, fields?: object) => logs.push({ level, msg, ...fields }),
  };
  const deps = { ...listenerDeps(policy), logger };
  const server = createServer(hookListener(deps, getRequestListener(createApp(deps).fetch)));
  server.on("clientError", parserRefusals({ ...refusalDeps(deps), logger }));
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  try {
    const socket = connect((server.address() as AddressInfo).port, "127.0.0.1");
    const received: Buffer[] = [];
    socket.on("data", (chunk: Buffer) => received.push(chunk));
    socket.on("error", () => {});
    socket.write(text);
    await once(socket, "close");
    return { answer: Buffer.concat(received).toString("latin1"), logs };
  } finally {
    server.close();
  }
}

const TWO_LENGTHS = "Content-Length: 2\r\nContent-Length: 3\r\n\r\n{}";

describe("serve's parserRefusals under auth, for a head whose token cannot be checked", () => {
  // Answered by defaults.onError alone, a caller with no token got `allow` from a policy whose
  // auth.onFailure is deny, by sending a head Node's parser refuses.
  it.each([
    ["deny", "allow", "deny"],
    ["allow", "deny", "deny"],
    ["ask", "deny", "deny"],
    ["allow", "allow", "allow"],
  ] as const)(
    "auth.onFailure %s and defaults.onError %s answer %s, the stricter",
    async (onFailure, onError, mode) => {
      const policy = await policyFrom({
        version: 1,
        defaults: { onError },
        auth: { onFailure, tokens: [{ team: "a", sha256: await sha256("team-a-token") }] },
        rules: [],
      });
      const { answer, logs } = await refusedHead(
        policy,
        `POST /v1/hooks/claude-code HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer team-a-token\r\n${TWO_LENGTHS}`,
      );
      const [head = "", body = ""] = answer.split("\r\n\r\n");
      expect(head.split("\r\n")[0]).toBe("HTTP/1.1 200 OK");
      expect(head).toContain("x-hookgate-error: BODY_UNREADABLE");
      // Its event unknown: deny is the top-level block, allow an empty body.
      if (mode === "deny") expect(JSON.parse(body)).toMatchObject({ decision: "block" });
      else expect(body).toBe("");
      expect(logs.find((line) => line.msg === "decision")).toMatchObject({
        decision: mode === "deny" ? "block" : "none",
      });
    },
  );

  it("answers a policy without auth by defaults.onError alone", async () => {
    const policy = await policyFrom({ version: 1, defaults: { onError: "allow" }, rules: [] });
    const { answer } = await refusedHead(
      policy,
      `POST /v1/hooks HTTP/1.1\r\nHost: 127.0.0.1\r\n${TWO_LENGTHS}`,
    );
    expect(answer).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
    expect(answer.split("\r\n\r\n")[1]).toBe("");
  });
});

describe("serve's parserRefusals when answering a refused hook fails", () => {
  it("logs the route the hook came on, and closes the connection", async () => {
    // It was logged as /v1/hooks whatever route the hook came on.
    const policy = await policyFrom({ version: 1, rules: [] });
    const broken = (deps: ReturnType<typeof listenerDeps>) => ({
      ...deps,
      policy: (): Policy => {
        throw new Error("no policy");
      },
    });
    for (const [route, logged] of [
      ["/v1/hooks/deepcode", "/v1/hooks/deepcode"],
      ["/prefix/v1/hooks", "/v1/hooks"],
      // An unknown client's name may hold a team's token: not quoted.
      ["/v1/hooks/Zm9vYmFy", "/v1/hooks/…"],
    ]) {
      const { answer, logs } = await refusedHead(
        policy,
        `POST ${route} HTTP/1.1\r\nHost: 127.0.0.1\r\n${TWO_LENGTHS}`,
        broken,
      );
      expect(answer).toBe("");
      expect(logs.filter((line) => line.level === "error")).toEqual([
        { level: "error", msg: "unhandled error", error: "no policy", path: logged },
      ]);
    }
  });
});

/** How many connections a server holds open. */
const openConnections = (server: ReturnType<typeof createServer>) =>
  new Promise<number>((resolve, reject) => server.getConnections((e, n) => (e ? reject(e) : resolve(n))));

describe("serve's CONNECT handler", () => {
  it("tells a client that takes the gateway for its proxy that it is none, at once", async () => {
    // Unhandled, Node closed the connection unanswered: the client saw only a hang-up.
    const logs: Record<string, unknown>[] = [];
    const logger = {
      log: (level: string, msg: string, fields?: object) => logs.push({ level, msg, ...fields }),
    };
    const server = createServer(() => {});
    server.on("connect", notAProxy(logger));
    server.listen(0, "127.0.0.1");
    await once(server, "listening");
    try {
      const socket = connect((server.address() as AddressInfo).port, "127.0.0.1");
      const received: Buffer[] = [];
      socket.on("data", (chunk: Buffer) => received.push(chunk));
      socket.write("CONNECT api.anthropic.com:443 HTTP/1.1\r\nHost: api.anthropic.com:443\r\n\r\n");
      await once(socket, "close");
      const [head = "", body = ""] = Buffer.concat(received).toString().split("\r\n\r\n");
      expect(head.split("\r\n")[0]).toBe("HTTP/1.1 501 Not Implemented");
      expect(head).toContain("connection: close");
      expect(JSON.parse(body).error).toEqual({
        code: "NOT_A_PROXY",
        message: expect.stringContaining("hookgate is no proxy (CONNECT api.anthropic.com:443)"),
      });
      expect(logs).toEqual([
        {
          level: "warn",
          msg: "a CONNECT answered 501: hookgate is no proxy",
          target: "api.anthropic.com:443",
        },
      ]);
    } finally {
      server.close();
    }
  });

  it("closes the connection once its answer is sent, though the client keeps its own side open", async () => {
    // What follows a CONNECT is no HTTP connection of Node's: only ended, it stayed open as long
    // as its client held it, and a stop, which cuts HTTP connections only, waited on it.
    const server = createServer(() => {});
    server.on("connect", notAProxy({ log: () => {} }));
    server.listen(0, "127.0.0.1");
    await once(server, "listening");
    const socket = connect({
      port: (server.address() as AddressInfo).port,
      host: "127.0.0.1",
      allowHalfOpen: true,
    });
    socket.on("error", () => {});
    socket.resume();
    try {
      socket.write("CONNECT api.anthropic.com:443 HTTP/1.1\r\nHost: api.anthropic.com:443\r\n\r\n");
      await once(socket, "end");
      await vi.waitFor(async () => expect(await openConnections(server)).toBe(0), WAIT);
    } finally {
      socket.destroy();
      server.close();
    }
  });
});

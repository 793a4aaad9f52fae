/**
 * Faults around a real `hookgate serve` (issue 9, item 4): notify sinks that answer 500, 429
 * with Retry-After, hang, or reset the connection, while agents keep asking for decisions; and a
 * data dir that cannot be used, at start and in the middle of a run. The decision route never
 * waits for a sink or the queue, so its answers stay 2xx and right; every failing job is retried
 * on its schedule and dead-lettered after its last attempt, with the reason.
 */

import { spawnSync } from "node:child_process";
import {
  chmodSync,
  chownSync,
  closeSync,
  existsSync,
  mkdirSync,
  openSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
  writeSync,
} from "node:fs";
import { request } from "node:http";
import { dirname, join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, describe, expect, inject, it } from "vitest";
import { createSqliteQueue } from "../../src/adapters/queue/sqlite.js";
import { type LoopbackServer, loopbackServer } from "../support/loopback.js";
import { startModelServer } from "../support/model-server.js";
import { BIN, childEnv, ROOT, runCli, type ServerProcess, startServerProcess } from "../support/process.js";
import { type WebhookReceiver, webhookReceiver } from "../support/receiver.js";
import { tempDir } from "../support/temp.js";

const SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** Each failing sink's path on the loopback sink server, and its retry schedule (seconds). */
const FAILING = {
  e500: [0.2, 0.2],
  e429: [0.5],
  reset: [0.2, 0.2],
  hang: [0.2],
} as const;
type Failing = keyof typeof FAILING;

/** One loopback server for the four failing sinks; the path says how it fails. */
async function failingSinks(): Promise<LoopbackServer> {
  const sinks = await loopbackServer((req, res) => {
    switch (req.url.slice(1) as Failing) {
      case "e500":
        return res.writeHead(500).end("boom");
      case "e429":
        // 1 s: inside [0.5 s, 1 s], the clamp the schedule allows, so honoured as sent.
        return res.writeHead(429, { "retry-after": "1" }).end();
      case "reset":
        return res.socket?.destroy();
      case "hang":
        return;
    }
  });
  cleanups.push(() => sinks.close());
  return sinks;
}

function policyFile(sinks: LoopbackServer, receiver: WebhookReceiver): string {
  const dir = tempDir("faults");
  const path = join(dir, "policy.json");
  const webhook = (url: string, retryScheduleSeconds?: readonly number[]) => ({
    type: "webhook",
    url,
    secret: "env:WHSEC",
    ...(retryScheduleSeconds ? { retryScheduleSeconds } : {}),
  });
  writeFileSync(
    path,
    JSON.stringify({
      version: 1,
      egress: { allowCidrs: ["127.0.0.1/32"] },
      rules: [
        {
          id: "no-rm-root",
          on: "PreToolUse",
          matcher: "Bash",
          if: "Bash(rm -rf /*)",
          decide: "deny",
          reason: "Deleting from / is never allowed",
          notify: ["audit", "e500", "e429", "reset"],
        },
        {
          id: "tests",
          on: "PreToolUse",
          matcher: "Bash",
          if: "Bash(npm test *)",
          decide: "allow",
          reason: "Tests are safe",
        },
        { id: "pnpm", on: "UserPromptSubmit", context: "This repository uses pnpm, never npm." },
        { id: "bash-runs", on: "PostToolUse", matcher: "Bash", notify: ["audit", "e500"] },
        { id: "session-ends", on: "SessionEnd", notify: ["hang"] },
      ],
      sinks: {
        audit: webhook(receiver.url),
        ...Object.fromEntries(
          Object.entries(FAILING).map(([name, schedule]) => [
            name,
            webhook(`${sinks.url}/${name}`, schedule),
          ]),
        ),
      },
    }),
  );
  return path;
}

/** failingGateway, once it delivered a first event to its receiver. */
async function deliveringGateway() {
  const started = await failingGateway();
  expect((await post(started.server, bash("ls", "PostToolUse"))).status).toBe(200);
  await until(() => started.receiver.unique.length === 1, "the first delivery");
  // And both its jobs' outcomes written to the queue file (the audit sink's, and the failing e500
  // sink's retry): a file damaged while such a commit is under way can be written over by it (the
  // WAL index made whole again), and the next intake then succeeds where a test wants it to fail.
  await started.server.waitForLine((l) => l.msg === "delivered", 30_000);
  await started.server.waitForLine(
    (l) => l.msg === "delivery failed; will retry" && l.sink === "e500",
    30_000,
  );
  return started;
}

async function gateway(
  policy: string,
  dataDir?: string,
  env: Record<string, string> = {},
): Promise<ServerProcess> {
  const server = await startServerProcess(policy, { WHSEC: SECRET, ...env }, dataDir);
  cleanups.push(() => server.stop());
  return server;
}

/** A receiver of the test's own, closed after it. */
async function ownReceiver(): Promise<WebhookReceiver> {
  const receiver = await webhookReceiver(SECRET);
  cleanups.push(() => receiver.close());
  return receiver;
}

/** A gateway on the policy above, with its four failing sinks and its receiver. */
async function failingGateway() {
  const sinks = await failingSinks();
  const receiver = await ownReceiver();
  const policy = policyFile(sinks, receiver);
  const server = await gateway(policy);
  return { sinks, receiver, policy, server };
}

/** A policy file whose `rules` notify one webhook sink, `audit` at `url`; `extra` goes before the rules. */
function auditPolicyFile(
  kind: string,
  url: string,
  rules: readonly unknown[],
  extra: Record<string, unknown> = {},
): string {
  const path = join(tempDir(kind), "policy.json");
  writeFileSync(
    path,
    JSON.stringify({
      version: 1,
      egress: { allowCidrs: ["127.0.0.1/32"] },
      ...extra,
      rules,
      sinks: { audit: { type: "webhook", url, secret: "env:WHSEC" } },
    }),
  );
  return path;
}

const base = { session_id: "s1", transcript_path: "/t", cwd: "/p" };
const bash = (command: string, event = "PreToolUse") => ({
  ...base,
  hook_event_name: event,
  tool_name: "Bash",
  tool_input: { command },
  tool_use_id: `t-${command}`,
  ...(event === "PostToolUse" ? { tool_response: { stdout: "", stderr: "" } } : {}),
});
const sessionEnd = { ...base, hook_event_name: "SessionEnd", reason: "other" };

/** The requests of the burst and the exact answer each gets from the policy above. */
const KINDS = [
  {
    body: bash("rm -rf /var/tmp/x"),
    expected: {
      hookSpecificOutput: {
        hookEventName: "PreToolUse",
        permissionDecision: "deny",
        permissionDecisionReason: "Deleting from / is never allowed",
      },
    },
  },
  {
    body: bash("npm test -- --run"),
    expected: {
      hookSpecificOutput: {
        hookEventName: "PreToolUse",
        permissionDecision: "allow",
        permissionDecisionReason: "Tests are safe",
      },
    },
  },
  { body: bash("ls", "PostToolUse"), expected: "" },
  {
    body: { ...base, hook_event_name: "UserPromptSubmit", prompt: "hi" },
    expected: {
      hookSpecificOutput: {
        hookEventName: "UserPromptSubmit",
        additionalContext: "This repository uses pnpm, never npm.",
      },
    },
  },
] as const;

async function post(server: ServerProcess, body: unknown): Promise<{ status: number; text: string }> {
  const res = await fetch(`${server.url}/v1/hooks`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  return { status: res.status, text: await res.text() };
}

/** `count` requests cycling through KINDS, `concurrency` at a time; the answers that were wrong. */
async function burst(server: ServerProcess, count: number, concurrency: number) {
  const wrong: { i: number; status: number; text: string }[] = [];
  let next = 0;
  const worker = async () => {
    while (next < count) {
      const i = next++;
      const kind = KINDS[i % KINDS.length] as (typeof KINDS)[number];
      const { status, text } = await post(server, kind.body);
      const expected = kind.expected === "" ? "" : JSON.stringify(kind.expected);
      if (status !== 200 || text !== expected) wrong.push({ i, status, text });
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return wrong;
}

async function until(check: () => boolean, what: string, timeoutMs = 20_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** A gauge's value on /metrics, or undefined while it is not there. */
function gauge(metrics: string, name: string): number | undefined {
  const m = new RegExp(`^${name} ([\\d.e+-]+|NaN)$`, "m").exec(metrics);
  return m ? Number(m[1]) : undefined;
}

/** Reads /metrics until `check` holds for the gauge (the delivery thread sets them every 5 s). */
async function untilGauge(
  server: { url: string },
  name: string,
  check: (value: number) => boolean,
  timeoutMs = 20_000,
): Promise<number> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const value = gauge(await (await fetch(`${server.url}/metrics`)).text(), name);
    if (value !== undefined && check(value)) return value;
    if (Date.now() > end) throw new Error(`timed out waiting for ${name} (last ${value})`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

const attemptsAt = (sinks: LoopbackServer, name: Failing) =>
  sinks.received.filter((r) => r.url === `/${name}`).length;

function counter(metrics: string, name: string, sink?: string): number {
  const pattern = new RegExp(`^${name}(\\{[^}]*\\})? (\\d+)$`, "gm");
  let total = 0;
  for (const m of metrics.matchAll(pattern)) {
    if (sink === undefined || m[1]?.includes(`sink="${sink}"`)) total += Number(m[2]);
  }
  return total;
}

/**
 * Garbage over the start of a file SQLite holds open, in place: a truncation first (writeFileSync)
 * would leave the -shm file, which SQLite maps into memory, shorter than its map for a moment, and
 * a read of it then ends the gateway with SIGBUS instead of the damage the test means.
 */
function overwrite(file: string, size: number): void {
  const fd = openSync(file, existsSync(file) ? "r+" : "w");
  try {
    writeSync(fd, Buffer.alloc(size, 0xab), 0, size, 0);
  } finally {
    closeSync(fd);
  }
}

/** Garbage over the start of an SQLite file and of its -wal and -shm files; the three paths. */
function damage(path: string): string[] {
  const files = [
    [path, 8192],
    [`${path}-wal`, 65536],
    [`${path}-shm`, 32768],
  ] as const;
  for (const [file, size] of files) overwrite(file, size);
  return files.map(([file]) => file);
}

/** /healthz's body, read again until it says nothing of delivery or `timeoutMs` pass; the last read. */
async function untilDeliveryDropped(
  server: ServerProcess,
  first: Record<string, unknown>,
  timeoutMs: number,
): Promise<Record<string, unknown>> {
  const end = Date.now() + timeoutMs;
  let last = first;
  while ("delivery" in last && Date.now() < end) {
    await new Promise((r) => setTimeout(r, 250));
    last = (await (await fetch(`${server.url}/healthz`)).json()) as Record<string, unknown>;
  }
  return last;
}
describe("notify sinks that fail", () => {
  it("leave the decisions on the agent-facing route 2xx and right meanwhile", async () => {
    const { sinks, server } = await failingGateway();

    // Every failing sink is hit and the hanging one holds the consumer before the burst starts.
    expect((await post(server, bash("rm -rf /first"))).status).toBe(200);
    expect((await post(server, sessionEnd)).status).toBe(200);
    await until(
      () => (Object.keys(FAILING) as Failing[]).every((name) => attemptsAt(sinks, name) >= 1),
      "a first attempt at every failing sink",
    );

    const count = 400;
    const wrong = await burst(server, count, 10);
    expect(wrong).toEqual([]);

    // The failures were real while the burst ran: no failing sink acknowledged anything, and the
    // burst's denies and PostToolUse events went on the queue behind them.
    const metrics = await (await fetch(`${server.url}/metrics`)).text();
    expect(counter(metrics, "hookgate_decisions_total")).toBe(count + 2);
    expect(counter(metrics, "hookgate_request_errors_total")).toBe(0);
    expect(counter(metrics, "hookgate_enqueue_failed_total")).toBe(0);
    // 100 denies and 100 PostToolUse in the burst, plus the first deny and the SessionEnd.
    expect(counter(metrics, "hookgate_enqueued_total", "e500")).toBe(201);
    expect(counter(metrics, "hookgate_enqueued_total", "hang")).toBe(1);
    for (const name of Object.keys(FAILING))
      expect(counter(metrics, "hookgate_delivered_total", name)).toBe(0);
    expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
    // The gauges show the jobs held behind the failing sinks (the hanging one's for 15 s at least).
    await untilGauge(server, "hookgate_queue_jobs", (n) => n > 0);
    // Ends the hanging delivery, so the gateway's drain on SIGTERM need not wait for its timeout.
    await sinks.close();
  });

  it("leave jobs due behind a sink at its cap, and /metrics says for how long", async () => {
    const { sinks, server } = await failingGateway();
    // Seven jobs for the hanging sink: five hang (its share of the consumer's slots), two wait.
    const queuedFrom = Date.now();
    for (let n = 0; n < 7; n++) expect((await post(server, sessionEnd)).status).toBe(200);
    await until(() => attemptsAt(sinks, "hang") === 5, "five hanging attempts");
    const due = await untilGauge(server, "hookgate_queue_oldest_due_seconds", (s) => s > 0);
    // Due since it was queued, never longer.
    expect(due).toBeLessThanOrEqual((Date.now() - queuedFrom) / 1000);
    expect(gauge(await (await fetch(`${server.url}/metrics`)).text(), "hookgate_queue_jobs")).toBe(7);
    // Ends the hanging deliveries, so the gateway's drain on SIGTERM need not wait for their timeout.
    await sinks.close();
  });

  it("are retried on their schedule, then dead-lettered after the last attempt with the reason", async () => {
    const { sinks, receiver, server } = await failingGateway();

    expect((await post(server, bash("rm -rf /x"))).status).toBe(200);
    expect((await post(server, sessionEnd)).status).toBe(200);
    // The hanging sink takes two egress timeouts (15 s each) to dead-letter.
    await until(
      () => server.lines.filter((l) => l.msg === "delivery dead-lettered").length === 4,
      "four dead letters",
      80_000,
    );

    // Attempts as the sinks saw them: 1 + the schedule's length, never more.
    expect(attemptsAt(sinks, "e500")).toBe(3);
    expect(attemptsAt(sinks, "e429")).toBe(2);
    expect(attemptsAt(sinks, "reset")).toBe(3);
    expect(attemptsAt(sinks, "hang")).toBe(2);
    expect(receiver.unique).toHaveLength(1);
    expect(receiver.duplicates).toBe(0);

    // The delay each retry was scheduled with: Retry-After honoured, the others 0.2 s ± 20 %.
    const retries = server.lines.filter((l) => l.msg === "delivery failed; will retry");
    const delays = (sink: Failing) => retries.filter((l) => l.sink === sink).map((l) => Number(l.retryInMs));
    expect(delays("e429")).toEqual([1000]);
    for (const sink of ["e500", "reset", "hang"] as const) {
      expect(delays(sink)).toHaveLength(FAILING[sink].length);
      for (const ms of delays(sink)) {
        expect(ms).toBeGreaterThanOrEqual(160);
        expect(ms).toBeLessThanOrEqual(240);
      }
    }

    const listed = await runCli(["dlq", "list", "--json", "--data-dir", server.dataDir]);
    expect(listed.code).toBe(0);
    const dead = JSON.parse(listed.stdout) as { body: { sink: string }; attempts: number; error: string }[];
    const bySink = Object.fromEntries(dead.map((d) => [d.body.sink, d]));
    expect(Object.keys(bySink).sort()).toEqual(["e429", "e500", "hang", "reset"]);
    expect(bySink.e500).toMatchObject({
      attempts: 3,
      error: expect.stringMatching(/^gave up after 3 attempts: HTTP 500/),
    });
    expect(bySink.e429).toMatchObject({
      attempts: 2,
      error: expect.stringMatching(/^gave up after 2 attempts: HTTP 429/),
    });
    expect(bySink.reset).toMatchObject({
      attempts: 3,
      error: expect.stringMatching(/^gave up after 3 attempts: EGRESS_CONNECT_FAILED/),
    });
    expect(bySink.hang).toMatchObject({
      attempts: 2,
      error: expect.stringMatching(/^gave up after 2 attempts: EGRESS_TIMEOUT/),
    });

    const metrics = await (await fetch(`${server.url}/metrics`)).text();
    expect(counter(metrics, "hookgate_enqueued_total")).toBe(5);
    expect(counter(metrics, "hookgate_delivered_total")).toBe(1);
    expect(counter(metrics, "hookgate_dead_lettered_total")).toBe(4);
    expect(counter(metrics, "hookgate_retried_total")).toBe(2 + 1 + 2 + 1);
    // The gauges: the four dead letters, nothing left in the queue or the journal, the thread up.
    await untilGauge(server, "hookgate_queue_dead_letters", (n) => n === 4);
    const after = await (await fetch(`${server.url}/metrics`)).text();
    expect(after).toContain("# TYPE hookgate_queue_dead_letters gauge");
    expect(gauge(after, "hookgate_queue_jobs")).toBe(0);
    expect(gauge(after, "hookgate_queue_oldest_due_seconds")).toBe(0);
    expect(gauge(after, "hookgate_intake_backlog_bytes")).toBe(0);
    expect(gauge(after, "hookgate_delivery_thread_up")).toBe(1);
  }, 120_000);
});

describe("a model server that hangs", () => {
  it("still gets every decision, the judged ones with the rule's onError at the deadline", async () => {
    const model = await startModelServer();
    cleanups.push(() => model.close());
    model.script({ hang: true });
    const path = join(tempDir("model-hang"), "policy.json");
    writeFileSync(
      path,
      JSON.stringify({
        version: 1,
        defaults: { deadlineMs: 500 },
        egress: { allowedHttpHookUrls: ["http://127.0.0.1:*/*"], allowCidrs: ["127.0.0.1/32"] },
        rules: [
          {
            id: "judge-writes",
            on: "PreToolUse",
            matcher: "Write",
            prompt: { text: "Does this write add a secret? $ARGUMENTS", model: "fast", onError: "deny" },
          },
          {
            id: "tests",
            on: "PreToolUse",
            matcher: "Bash",
            if: "Bash(npm test *)",
            decide: "allow",
            reason: "Tests are safe",
          },
        ],
        models: {
          fast: {
            provider: "anthropic",
            model: "claude-haiku-4-5",
            apiKey: "env:MODEL_KEY",
            url: model.anthropicUrl,
          },
        },
      }),
    );
    const server = await startServerProcess(path, { MODEL_KEY: "sk-test-key" });
    cleanups.push(() => server.stop());

    const write = (i: number) => ({
      ...base,
      hook_event_name: "PreToolUse",
      tool_name: "Write",
      tool_input: { file_path: `/p/src/${i}.ts`, content: "x" },
      tool_use_id: `w${i}`,
    });
    const answers = await Promise.all([
      ...Array.from({ length: 5 }, (_, i) => post(server, write(i))),
      ...Array.from({ length: 5 }, () => post(server, KINDS[1].body)),
    ]);
    const judged = answers
      .slice(0, 5)
      .map((a) => ({ status: a.status, output: JSON.parse(a.text).hookSpecificOutput }));
    for (const a of judged) {
      expect(a.status).toBe(200);
      expect(a.output).toMatchObject({
        permissionDecision: "deny",
        // The rule's timeout, whichever of its timer and its call's fired first: never EGRESS_TIMEOUT.
        permissionDecisionReason: expect.stringMatching(
          /\(JUDGE_TIMEOUT: no answer within \d+ ms, what was left of the request's deadline /,
        ),
      });
    }
    for (const a of answers.slice(5))
      expect(a).toEqual({ status: 200, text: JSON.stringify(KINDS[1].expected) });
    // Each judged event reached the model, which never answered.
    expect(model.requests.length).toBe(5);
  });
});

describe("a client that hangs up while its event is judged", () => {
  it("stops nothing: the event is logged and notified, and an identical one gets the verdict of its call", async () => {
    const model = await startModelServer();
    cleanups.push(() => model.close());
    model.script({ delayMs: 1000, next: { verdict: { ok: false, reason: "no fetching that" } } });
    const receiver = await ownReceiver();
    const path = join(tempDir("hang-up"), "policy.json");
    writeFileSync(
      path,
      JSON.stringify({
        version: 1,
        egress: { allowCidrs: ["127.0.0.1/32"] },
        rules: [
          {
            id: "judge-fetches",
            on: "PreToolUse",
            matcher: "WebFetch",
            prompt: { text: "Is this fetch safe? $ARGUMENTS", model: "fast", onError: "ask" },
            notify: ["audit"],
          },
        ],
        models: {
          fast: {
            provider: "anthropic",
            model: "claude-haiku-4-5",
            apiKey: "env:MODEL_KEY",
            url: model.anthropicUrl,
          },
        },
        sinks: { audit: { type: "webhook", url: receiver.url, secret: "env:WHSEC" } },
      }),
    );
    const server = await startServerProcess(path, { MODEL_KEY: "sk-test-key", WHSEC: SECRET });
    cleanups.push(() => server.stop());
    const fetchEvent = (session: string) => ({
      ...base,
      session_id: session,
      hook_event_name: "PreToolUse",
      tool_name: "WebFetch",
      tool_input: { url: "https://docs.example/page", prompt: "summarise" },
    });
    const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

    // Its own connection, closed to hang up: Node's fetch, aborted, opens another that it keeps
    // idle for 4 s, and the gateway's stop at the test's end waited for that one.
    const first = request(`${server.url}/v1/hooks`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      agent: false,
    });
    let answered = false;
    first.on("response", () => {
      answered = true;
    });
    first.on("error", () => undefined); // the hang-up's own
    first.end(JSON.stringify(fetchEvent("s-gone")));
    // Its call made (the model holds it 1 s), the identical event, then the hang-up.
    await until(() => model.requests.length > 0, "the first event's call");
    const second = post(server, fetchEvent("s-next"));
    await pause(20);
    first.destroy();
    expect(answered).toBe(false);
    const answer = await second;
    expect(answer.status).toBe(200);
    expect(JSON.parse(answer.text).hookSpecificOutput).toMatchObject({
      permissionDecision: "deny",
      permissionDecisionReason: "[Is this fetch safe? $ARGUMENTS]: no fetching that",
    });
    expect(model.requests).toHaveLength(1);
    // Both decisions logged, the hung-up one with the call's own outcome.
    const decided = async (session: string) =>
      server.waitForLine((l) => l.msg === "decision" && l.sessionId === session);
    expect(await decided("s-gone")).toMatchObject({
      decision: "deny",
      pending: [expect.objectContaining({ outcome: "OK" })],
    });
    expect(await decided("s-next")).toMatchObject({
      decision: "deny",
      pending: [expect.objectContaining({ outcome: "CACHE_HIT" })],
    });
    // And both notified.
    await until(() => receiver.unique.length >= 2, "both notifications");
    expect(receiver.unique).toHaveLength(2);
  });
});

describe("a data dir that cannot be used", () => {
  /** `serve` on `dataDir` with a policy of no rules, run until it exits. */
  const serveOn = (dataDir: string, timeoutMs?: number) => {
    const policy = join(tempDir("data-dir-policy"), "policy.json");
    writeFileSync(policy, JSON.stringify({ version: 1, rules: [] }));
    return runCli(["serve", "--policy", policy, "--port", "0", "--data-dir", dataDir], "", {}, timeoutMs);
  };

  it.each(["queue.sqlite", "sessions.sqlite", "serve.lock"])(
    "stops `serve` at start naming a %s that is not a database, and what to do about it",
    async (name) => {
      const dataDir = tempDir("baddata");
      writeFileSync(join(dataDir, name), "this is not an SQLite file, ".repeat(200));
      const { code, stderr } = await serveOn(dataDir);
      expect(code).toBe(1);
      expect(stderr).toContain(`cannot use the data dir ${dataDir}`);
      // Before, it named no file and said to pass a writable directory.
      expect(stderr).toContain(`${join(dataDir, name)}: file is not a database`);
      expect(stderr).toMatch(
        /not a SQLite database \(damaged, or another file in its place\): move it aside/,
      );
      // serve.lock's said "file is not a database" with no file named, and that the jobs of a
      // damaged queue.sqlite were lost when one is moved aside, whichever file it was.
      expect(stderr).toContain(`a ${name} `);
    },
  );

  it("stops `serve` at start naming a sessions.sqlite another program holds locked, and no serve for it", async () => {
    const dataDir = tempDir("sessions-held");
    const path = join(dataDir, "sessions.sqlite");
    // A sqlite3 shell holding the file locked: serve.pid names no running serve.
    const holder = new Database(path);
    cleanups.push(async () => holder.close());
    holder.pragma("locking_mode = EXCLUSIVE");
    holder.exec("CREATE TABLE held (x)");
    const { code, stderr } = await serveOn(dataDir);
    expect(code).toBe(1);
    expect(stderr).toContain(`${path}: database is locked`);
    expect(stderr).toContain("another process holds that file locked (a sqlite3 shell");
    expect(stderr).not.toContain("another hookgate serve");
  });

  it("stops `serve` at start naming a queue.sqlite damaged past its first pages, and what to do about it", async () => {
    const dataDir = tempDir("damaged");
    const path = join(dataDir, "queue.sqlite");
    const queue = createSqliteQueue<{ n: number }>({ path });
    await queue.send(
      Array.from({ length: 200 }, (_, n) => ({ id: `j${n}`, body: { n, pad: "x".repeat(400) } })),
    );
    await queue.close();
    // The header and the schema are whole, so the file opens; the jobs' pages are garbage (a disk
    // that lost writes), which SQLite finds only when a statement reads them.
    const db = new Database(path, { readonly: true });
    const leaves = db
      .prepare("SELECT pageno FROM dbstat WHERE name = 'queue_jobs' AND pagetype = 'leaf'")
      .pluck()
      .all() as number[];
    const pageSize = db.pragma("page_size", { simple: true }) as number;
    db.close();
    expect(leaves.length).toBeGreaterThan(1);
    const fd = openSync(path, "r+");
    for (const page of leaves)
      writeSync(fd, Buffer.alloc(pageSize, 0xab), 0, pageSize, (page - 1) * pageSize);
    closeSync(fd);
    const { code, stderr } = await serveOn(dataDir);
    expect(code).toBe(1);
    // It named no file: "(database disk image is malformed); that file is not a SQLite database".
    expect(stderr).toContain(`cannot open the SQLite queue at ${path}: database disk image is malformed`);
    expect(stderr).toContain("that SQLite file is damaged: move it aside");
  });

  it("stops `serve` at start saying a write failed for want of room, not that the data dir is not writable", () => {
    const dataDir = tempDir("nofsize");
    const policy = join(tempDir("nofsize-policy"), "policy.json");
    writeFileSync(policy, JSON.stringify({ version: 1, rules: [] }));
    // No file may grow (RLIMIT_FSIZE 0): every write in the data dir fails with EFBIG, as a full
    // disk's fail with ENOSPC; the directory itself is writable.
    const run = spawnSync(
      "prlimit",
      ["--fsize=0", process.execPath, BIN, "serve", "--policy", policy, "--port", "0", "--data-dir", dataDir],
      { cwd: ROOT, env: childEnv(), timeout: 30_000 },
    );
    expect(run.status).toBe(1);
    const stderr = run.stderr.toString();
    // The first write is the data dir's lock, named since it names no file of its own.
    expect(stderr).toContain(
      `cannot use the data dir ${dataDir} (cannot lock ${join(dataDir, "serve.lock")}: disk I/O error)`,
    );
    expect(stderr).toContain(
      "a write in it failed: the user's disk quota or this process's file size limit (ulimit -f, systemd's LimitFSIZE=) may be reached, or its disk is full or failing",
    );
    expect(stderr).not.toContain("pass --data-dir with a writable directory");
  });

  /** The user nobody, whom root hands `serve` to: no mode stops root itself. */
  const NOBODY = 65534;
  const AS_ROOT = process.getuid?.() === 0;
  /** Root's `serve` runs as nobody, who must be able to run this checkout's CLI. */
  const unprivilegedRuns =
    !AS_ROOT ||
    spawnSync(process.execPath, [BIN, "--version"], { cwd: ROOT, uid: NOBODY, gid: NOBODY }).status === 0;

  it(`stops \`serve\` at start naming a queue.sqlite its user may not read and write (root's, from a sudo hookgate serve), and what to do, not that the data dir is not writable${unprivilegedRuns ? "" : " (skipped: the user nobody cannot run this checkout's CLI)"}`, async () => {
    if (!unprivilegedRuns) return;
    const dataDir = tempDir("not-its-user");
    const path = join(dataDir, "queue.sqlite");
    const queue = createSqliteQueue<{ n: number }>({ path });
    await queue.send([{ id: "j1", body: { n: 1 } }]);
    await queue.close();
    const policyDir = tempDir("not-its-user-policy");
    chmodSync(policyDir, 0o755);
    const policy = join(policyDir, "policy.json");
    writeFileSync(policy, JSON.stringify({ version: 1, rules: [] }), { mode: 0o644 });
    if (AS_ROOT) {
      // The data dir is serve's user's, the queue file root's alone (0600), as `sudo hookgate
      // serve` once left it; the folders above it open to nobody for search.
      chownSync(dataDir, NOBODY, NOBODY);
      for (let folder = dirname(dataDir); folder.startsWith(inject("runTmpdir")); folder = dirname(folder))
        chmodSync(folder, (statSync(folder).mode & 0o7777) | 0o001);
    } else chmodSync(path, 0);
    const run = spawnSync(
      process.execPath,
      [BIN, "serve", "--policy", policy, "--port", "0", "--data-dir", dataDir],
      { cwd: ROOT, env: childEnv(), timeout: 30_000, ...(AS_ROOT ? { uid: NOBODY, gid: NOBODY } : {}) },
    );
    expect(run.status).toBe(1);
    const stderr = run.stderr.toString();
    // SQLite's "unable to open database file", then "pass --data-dir with a writable directory":
    // the directory is writable, and another one leaves the queued job behind.
    expect(stderr).toContain(`cannot open the SQLite queue at ${path}: unable to open database file`);
    expect(stderr).toContain(
      `${path} (owner uid ${statSync(path).uid}) cannot be read and written by this user`,
    );
    // Root's file wants another owner; the user's own, its mode back.
    expect(stderr).toContain(
      AS_ROOT
        ? "give the data dir and everything in it to the user serve runs as (chown -R"
        : "give them back their owner's read and write (chmod u+rw",
    );
    expect(stderr).toContain("another --data-dir would leave the jobs in its queue.sqlite undelivered");
    expect(stderr).not.toContain("pass --data-dir with a writable directory");
  });

  it("stops `serve` at start saying another process holds queue.sqlite locked, not that the data dir is not writable", async () => {
    const dataDir = tempDir("locked");
    const path = join(dataDir, "queue.sqlite");
    // A sqlite3 shell left in a transaction on the queue file, past the thread's busy timeout.
    const holder = new Database(path);
    holder.pragma("journal_mode = WAL");
    holder.exec("CREATE TABLE held (x)");
    holder.exec("BEGIN EXCLUSIVE");
    holder.exec("INSERT INTO held VALUES (1)");
    try {
      const { code, stderr } = await serveOn(dataDir);
      expect(code).toBe(1);
      expect(stderr).toContain(`cannot open the SQLite queue at ${path}: database is locked`);
      expect(stderr).toContain("another process holds that file locked");
      expect(stderr).not.toContain("pass --data-dir with a writable directory");
    } finally {
      holder.close();
    }
  });

  it("stops `serve` at start with a clear error when the data dir is a file", async () => {
    const file = join(tempDir("filedata"), "data");
    writeFileSync(file, "");
    const { code, stderr } = await serveOn(file);
    expect(code).toBe(1);
    expect(stderr).toContain(`cannot use the data dir ${file}`);
    // It said "pass --data-dir with a writable directory" after Node's EEXIST, as if the file were one.
    expect(stderr).toContain(
      `(EEXIST: file already exists, mkdir '${file}'); ${file} is a file, not a directory: pass --data-dir a directory, or one that is yet to be made\n`,
    );
  });

  it("stops `serve` at start saying to move aside or remove a file where the data dir keeps its intake journal", async () => {
    // It said to pass another --data-dir, which leaves the file where it is.
    const dataDir = tempDir("intakefile");
    const intake = join(dataDir, "intake");
    writeFileSync(intake, "");
    const { code, stderr } = await serveOn(dataDir);
    expect(code).toBe(1);
    expect(stderr).toContain(
      `; ${intake} is a file, where hookgate keeps its intake journal: move that file aside (to see what it is) or remove it, and start again`,
    );
    expect(stderr).not.toContain("pass --data-dir");
  });

  // Node's recursive mkdir loops for ever where a file system answers ENOENT inside a parent that
  // exists: `serve` hung at start, `init --write` too (killed here after 20 s, failing the test).
  it.skipIf(!existsSync("/proc/self"))(
    "stops `serve` and `init --write` at once when the directory cannot be made (/proc)",
    async () => {
      const served = await serveOn("/proc/hookgate-test", 20_000);
      expect(served.code).toBe(1);
      expect(served.stderr).toContain(
        "cannot use the data dir /proc/hookgate-test (ENOENT: no such file or directory, mkdir '/proc/hookgate-test'); pass --data-dir with a writable directory",
      );
      const url = "http://127.0.0.1:8787/v1/hooks";
      const args = [
        "init",
        "--client",
        "claude-code",
        "--url",
        url,
        "--write",
        "/proc/hookgate-test/settings.json",
      ];
      const written = await runCli(args, "", {}, 20_000);
      expect(written.code).toBe(1);
      expect(written.stderr).toBe(
        "hookgate: cannot write /proc/hookgate-test/settings.json: its folder /proc/hookgate-test cannot be made: ENOENT: no such file or directory; nothing written (run init without --write and merge what it prints into /proc/hookgate-test/settings.json by hand)\n",
      );
    },
  );

  it("says once which queue file is damaged mid-run and what to do, and delivers the events answered meanwhile once it is moved aside", async () => {
    const { receiver, policy, server } = await deliveringGateway();

    // The queue file overwritten under the running gateway (a disk that lost it, a careless copy).
    const path = join(server.dataDir, "queue.sqlite");
    damage(path);
    // Answered all the same: its job waits in the intake journal.
    expect((await post(server, bash("pwd", "PostToolUse"))).status).toBe(200);
    const fixed = await server.waitForLine(
      (l) => l.msg === "could not take journaled jobs into the queue; will try again",
      30_000,
    );
    expect(fixed.error).toBe(`the SQLite queue at ${path}: file is not a database`);
    expect(fixed.fix).toContain(
      `${path} is damaged: stop serve, move it aside (with its -wal and -shm files, if any)`,
    );
    // /healthz said only "ok": a load balancer kept it in service, and doctor passed, while no
    // notification went out. Still 200: hooks are answered and their events journaled.
    const health = await fetch(`${server.url}/healthz`);
    expect(health.status).toBe(200);
    expect(await health.json()).toMatchObject({
      status: "ok",
      delivery: "failing",
      deliveryError: fixed.error,
      deliveryFix: fixed.fix,
    });
    // A sample that notifies no sink: the receiver counts only the events below.
    const doctor = await runCli(["doctor", "--url", server.url, "--command", "true", "--expect", "none"]);
    expect(doctor.code).toBe(1);
    expect(doctor.stdout).toContain(
      `but it cannot use its delivery queue, so no notify event is delivered: ${fixed.error}`,
    );
    expect(doctor.stdout).toContain(`fix: ${fixed.fix}`);
    // A few more tries of each, every one failing: told once, not at each (the receive was
    // logged every 200 ms, the journal's intake every second, for as long as serve ran).
    const metrics = async () => await (await fetch(`${server.url}/metrics`)).text();
    const end = Date.now() + 30_000;
    while (counter(await metrics(), "hookgate_intake_failed_total") < 3 && Date.now() < end)
      await new Promise((r) => setTimeout(r, 250));
    expect(counter(await metrics(), "hookgate_intake_failed_total")).toBeGreaterThanOrEqual(3);
    const told = (msg: string) => server.lines.filter((l) => l.msg === msg).length;
    expect(told("could not take journaled jobs into the queue; will try again")).toBe(1);
    expect(told("queue receive failed")).toBe(1);
    expect(server.lines.find((l) => l.msg === "queue receive failed")?.error).toBe(
      `the SQLite queue at ${path}: file is not a database`,
    );

    // As the fix says: stop, move it aside, start again. The event answered meanwhile is delivered.
    const dataDir = server.dataDir;
    await server.stop();
    for (const file of [path, `${path}-wal`, `${path}-shm`])
      if (existsSync(file)) renameSync(file, `${file}.damaged`);
    await gateway(policy, dataDir);
    await until(() => receiver.unique.length === 2, "the event answered while the queue file was damaged");
  }, 90_000);

  it("puts back a queue file deleted under it, its data dir removed whole, with the jobs and dead letters it held", async () => {
    const { sinks, server } = await failingGateway();
    // Jobs for the four failing sinks: e500's spends its schedule and is dead-lettered; the
    // hanging sink's is still being sent.
    expect((await post(server, bash("rm -rf /x"))).status).toBe(200);
    expect((await post(server, sessionEnd)).status).toBe(200);
    const dead = await server.waitForLine(
      (l) => l.msg === "delivery dead-lettered" && l.sink === "e500",
      30_000,
    );

    // The data dir removed by hand while serve runs. SQLite went on in the deleted file, and its
    // jobs and dead letters were gone at the next stop, unsaid.
    rmSync(server.dataDir, { recursive: true, force: true });
    const told = await server.waitForLine(
      (l) => l.msg === "the queue file was deleted under serve; putting back a copy of the one it has open",
      30_000,
    );
    expect(told.path).toBe(join(server.dataDir, "queue.sqlite"));
    // The put-back waits for the deliveries in flight: ends the hanging one, which it would
    // otherwise wait out (the sink's 15 s timeout). Its job is retried or dead-lettered, held either way.
    await sinks.close();
    await server.waitForLine((l) => String(l.msg).startsWith("the queue file is back"), 60_000);
    expect(await server.stop()).toBe(0);

    const db = new Database(join(server.dataDir, "queue.sqlite"), { readonly: true });
    try {
      const letters = db.prepare<[], string>("SELECT id FROM queue_dead").pluck().all();
      expect(letters).toContain(dead.job);
      // The hanging sink's job, waiting or (its last attempt spent in the stop) dead-lettered.
      const jobs = db.prepare<[], string>("SELECT id FROM queue_jobs").pluck().all();
      expect([...jobs, ...letters].some((id) => id.endsWith(".hang"))).toBe(true);
    } finally {
      db.close();
    }
  }, 120_000);

  it("says on /healthz that a queue file deleted under it cannot be put back, until it is", async () => {
    const { server } = await deliveringGateway();
    // The data dir removed while serve runs, and made again with a directory where the copy of
    // the queue file is written: the copy fails at every try, and the jobs and dead letters the
    // deleted file holds would be lost at the next stop.
    const path = join(server.dataDir, "queue.sqlite");
    rmSync(server.dataDir, { recursive: true, force: true });
    mkdirSync(join(server.dataDir, "intake"), { recursive: true, mode: 0o700 });
    mkdirSync(`${path}.restoring`);
    const line = await server.waitForLine(
      (l) => l.msg === "could not put back the queue file deleted under serve; will try again",
      30_000,
    );
    // It said "ok" all the while.
    const health = await fetch(`${server.url}/healthz`);
    expect(health.status).toBe(200);
    const body = (await health.json()) as Record<string, unknown>;
    expect(body).toMatchObject({ status: "ok", delivery: "failing", deliveryFix: line.fix });
    expect(body.deliveryError).toBe(
      `the queue file ${path} was deleted under serve and cannot be put back (${String(line.error)}): the jobs and dead letters it holds are lost when serve stops`,
    );

    // Out of the way: the next try puts it back, and /healthz says nothing of delivery again.
    rmSync(`${path}.restoring`, { recursive: true });
    await server.waitForLine((l) => String(l.msg).startsWith("the queue file is back"), 30_000);
    const last = await untilDeliveryDropped(server, body, 60_000);
    expect(last).not.toHaveProperty("delivery");
    expect(existsSync(path)).toBe(true);
  }, 150_000);

  it("says on /healthz that its delivery thread is down while it cannot start again, and drops it once one runs", async () => {
    const { receiver, server } = await failingGateway();
    // The data dir removed while serve runs, and a file made where it keeps its intake journal
    // (before the next second's journal check makes the directory again): the queue file is put
    // back and the delivery thread ends, and each one started after it cannot open the journal.
    const intake = join(server.dataDir, "intake");
    // Should that check run between these steps, it made the directory first: taken again.
    for (let tries = 1; ; tries++) {
      rmSync(server.dataDir, { recursive: true, force: true });
      mkdirSync(server.dataDir, { recursive: true, mode: 0o700 });
      try {
        writeFileSync(intake, "", { flag: "wx" });
        break;
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== "EEXIST" || tries === 10) throw e;
      }
    }
    const failed = await server.waitForLine((l) => l.msg === "the delivery thread could not start", 60_000);
    expect(failed.error).toContain(intake);
    // It said "ok" while no thread ran, however long the restarts went on.
    const health = await fetch(`${server.url}/healthz`);
    expect(health.status).toBe(200);
    const body = (await health.json()) as Record<string, unknown>;
    expect(body).toMatchObject({ status: "ok", delivery: "restarting" });
    expect(body.deliveryError).toContain(`the delivery thread could not start: ${String(failed.error)}`);
    const doctor = await runCli(["doctor", "--url", server.url, "--command", "true", "--expect", "none"]);
    expect(doctor.code).toBe(1);
    expect(doctor.stdout).toContain("but its delivery thread is down and being started again");
    expect(doctor.stdout).toMatch(/fix: its log's "the delivery thread" lines say why/);

    // The file gone, the next start works: /healthz says nothing of delivery, and it delivers.
    rmSync(intake);
    const last = await untilDeliveryDropped(server, body, 90_000);
    expect(last).not.toHaveProperty("delivery");
    expect((await post(server, bash("ls", "PostToolUse"))).status).toBe(200);
    await until(() => receiver.unique.length === 1, "a delivery once the thread runs again");
  }, 150_000);

  it("goes on delivering when a deleted queue file cannot be copied once its deliveries stopped, and puts it back once it can", async () => {
    // The first request is held until the put-back has made its first copy and waits for it.
    let held: ((status: number) => void) | undefined;
    const sink = await loopbackServer((_req, res) => {
      if (held === undefined) held = (status) => res.writeHead(status).end();
      else res.writeHead(204).end();
    });
    cleanups.push(() => sink.close());
    const policy = auditPolicyFile("put-back-fails", `${sink.url}/hook`, [
      { id: "bash-runs", on: "PostToolUse", matcher: "Bash", notify: ["audit"] },
    ]);
    const server = await gateway(policy);
    expect((await post(server, bash("ls", "PostToolUse"))).status).toBe(200);
    await until(() => held !== undefined, "the first delivery, held");
    const path = join(server.dataDir, "queue.sqlite");
    for (const file of [path, `${path}-wal`, `${path}-shm`]) rmSync(file, { force: true });
    await server.waitForLine(
      (l) => l.msg === "the queue file was deleted under serve; putting back a copy of the one it has open",
      30_000,
    );
    // A directory where the copy is written: the copy made after the deliveries end fails.
    const copy = `${path}.restoring`;
    rmSync(copy);
    mkdirSync(copy);
    held?.(204);
    await server.waitForLine(
      (l) => l.msg === "could not put back the queue file deleted under serve; will try again",
      30_000,
    );
    // It delivered nothing more until it stopped.
    expect((await post(server, bash("pwd", "PostToolUse"))).status).toBe(200);
    await until(() => sink.received.length === 2, "the event answered after the failed put-back");
    rmSync(copy, { recursive: true });
    await server.waitForLine((l) => String(l.msg).startsWith("the queue file is back"), 30_000);
    expect(await server.stop()).toBe(0);
  }, 120_000);

  it("says a damaged queue file moved aside while it runs is damaged, not that the data dir is not writable", async () => {
    const { server } = await deliveringGateway();
    const path = join(server.dataDir, "queue.sqlite");
    const files = damage(path);
    expect((await post(server, bash("pwd", "PostToolUse"))).status).toBe(200);
    await server.waitForLine(
      (l) => l.msg === "could not take journaled jobs into the queue; will try again",
      30_000,
    );
    // Moved aside without the stop the fix says first: the open file cannot be copied back.
    for (const file of files) renameSync(file, `${file}.damaged`);
    const line = await server.waitForLine(
      (l) => l.msg === "could not put back the queue file deleted under serve; will try again",
      30_000,
    );
    expect(line.fix).toContain(`${path} is damaged: stop serve`);
  }, 90_000);

  it("goes on from its own copy of a session store damaged mid-run, and names the damaged file at the next start", async () => {
    const receiver = await ownReceiver();
    const policy = auditPolicyFile("sessions-policy", receiver.url, [
      { id: "prompts", on: "Notification", notify: ["audit"] },
      { id: "ls", on: "PreToolUse", matcher: "Bash", if: "Bash(ls *)", decide: "allow", reason: "ok" },
    ]);
    const dataDir = tempDir("sessions-damaged");
    const server = await gateway(policy, dataDir);
    const prompt = {
      ...base,
      hook_event_name: "Notification",
      message: "Bash?",
      notification_type: "permission_prompt",
    };
    const path = join(dataDir, "sessions.sqlite");
    // serve holds the file locked from its start (no other process reads or writes it), with the
    // pages it uses in its cache: another program's damage to it is not seen until serve opens
    // it again, and each tool call is remembered and read back meanwhile, no failure told (each call
    // used to read the file again, fail, and send the prompts without their tool).
    expect(damage(path)).toContain(path);
    for (const n of [1, 2, 3]) {
      expect((await post(server, bash(`ls ${n}`))).status).toBe(200);
      expect((await post(server, prompt)).status).toBe(200);
    }
    await until(() => receiver.unique.length === 3, "the three prompts, notified");
    expect(
      server.lines.filter((l) => l.msg === "session store failed; the notification goes out without it"),
    ).toEqual([]);
    await server.stop();

    const again = await runCli(
      ["serve", "--policy", policy, "--port", "0", "--data-dir", dataDir],
      "",
      { WHSEC: SECRET },
      20_000,
    );
    expect(again.code).toBe(1);
    expect(again.stderr).toContain(`${path}: file is not a database`);
    expect(again.stderr).toMatch(
      /not a SQLite database \(damaged, or another file in its place\): move it aside/,
    );
  }, 60_000);

  it("holds notify events in memory while the journal cannot be written, within a bound, and writes them in order once it can", async () => {
    const receiver = await ownReceiver();
    const policy = auditPolicyFile(
      "journal-fails",
      receiver.url,
      [{ id: "bash-runs", on: "PostToolUse", matcher: "Bash", notify: ["audit"] }],
      { defaults: { maxBodyBytes: 16 * 1024 * 1024 } },
    );
    // Each event below is a job of about 10 KB: the hold takes four of them, not a fifth.
    const server = await gateway(policy, undefined, { HOOKGATE_NOTIFY_MEMORY_BYTES: "45000" });
    const health = async () => (await fetch(`${server.url}/healthz`)).json();
    const metrics = async () => (await fetch(`${server.url}/metrics`)).text();
    // An event past the segment's 4 MiB fills it (many short values: a long one is cut): the next
    // append starts a new segment, and the journal's directory is then a file, so that append
    // fails as on a full disk.
    const big = {
      ...bash("cat big", "PostToolUse"),
      tool_input: Object.fromEntries(Array.from({ length: 5000 }, (_, i) => [`k${i}`, "y".repeat(900)])),
    };
    expect((await post(server, big)).status).toBe(200);
    await until(() => receiver.unique.length === 1, "the large event delivered");
    const intake = join(server.dataDir, "intake");
    renameSync(intake, `${intake}.aside`);
    writeFileSync(intake, "");

    const padded = (command: string) => {
      const event = bash(command, "PostToolUse");
      return {
        ...event,
        tool_input: { ...event.tool_input, a: "p".repeat(3000), b: "q".repeat(3000), c: "r".repeat(3000) },
      };
    };
    const commands = ["echo one", "echo two", "echo three", "echo four", "echo five"];
    for (const command of commands) expect((await post(server, padded(command))).status).toBe(200);
    const heldLine = "notify event held in memory: the intake journal cannot take it yet";
    await until(() => server.lines.filter((l) => l.msg === heldLine).length === 4, "four events held");
    const held = server.lines.filter((l) => l.msg === heldLine);
    expect(held.map((l) => l.heldEvents)).toEqual([1, 2, 3, 4]);
    expect(held[0]?.error).toBeTruthy();
    // The fifth passes the bound: dropped, told with its decision id and counted, as before.
    const dropped = await server.waitForLine(
      (l) => l.msg === "enqueue failed; the decision was answered anyway",
    );
    expect(dropped.error).toMatch(/would pass the 45000 bytes serve holds at most: the event is dropped/);
    expect(held.map((l) => l.decisionId)).not.toContain(dropped.decisionId);
    expect(counter(await metrics(), "hookgate_enqueue_failed_total", "audit")).toBe(1);
    expect(await health()).toMatchObject({ status: "ok", notify: "failing", notifyInMemory: 4 });
    expect(gauge(await metrics(), "hookgate_notify_memory_jobs")).toBe(4);
    expect(gauge(await metrics(), "hookgate_notify_memory_bytes")).toBeGreaterThan(4 * 9000);
    const doctor = await runCli(["doctor", "--url", server.url, "--expect", "none"]);
    expect(doctor.code).toBe(1);
    expect(doctor.stdout).toContain(
      "but it cannot write notify events to its data dir: 4 are held in memory",
    );
    expect(doctor.stdout).toMatch(/fix: .*"notify event held in memory".*free space or make it writable/);

    // The directory back, and no event sent: the second's retry writes the held ones, in order.
    rmSync(intake);
    renameSync(`${intake}.aside`, intake);
    const written = await server.waitForLine(
      (l) => l.msg === "notify events held in memory written to the intake journal",
    );
    expect(written).toMatchObject({ events: 4 });
    await until(() => receiver.unique.length === 5, "the four held events delivered");
    expect(await health()).not.toHaveProperty("notify");
    expect(await health()).not.toHaveProperty("notifyInMemory");
    expect(gauge(await metrics(), "hookgate_notify_memory_jobs")).toBe(0);
    const delivered = receiver.unique.slice(1).map((id) => JSON.stringify(receiver.bodies.get(id)));
    for (const command of commands.slice(0, 4))
      expect(delivered.filter((b) => b.includes(command))).toHaveLength(1);
    expect(delivered.filter((b) => b.includes("echo five"))).toHaveLength(0);
    for (const line of held)
      expect(
        receiver.unique.some((id) => id.includes(String(line.decisionId))),
        String(line.decisionId),
      ).toBe(true);
    expect((await post(server, bash("pwd", "PostToolUse"))).status).toBe(200);
    await until(() => receiver.unique.length === 6, "the event after delivered");
    expect(receiver.duplicates).toBe(0);

    // Held at a stop: tried once more, then each one that is still held is told lost.
    expect((await post(server, { ...big, tool_use_id: "t-big-2" })).status).toBe(200);
    await until(() => receiver.unique.length === 7, "the second large event delivered");
    renameSync(intake, `${intake}.aside`);
    writeFileSync(intake, "");
    expect((await post(server, padded("echo six"))).status).toBe(200);
    const last = await server.waitForLine(
      (l) => l.msg === heldLine && l.heldEvents === 1 && l.decisionId !== held[0]?.decisionId,
    );
    await server.stop();
    const lost = server.lines.filter(
      (l) =>
        l.msg ===
        "notify event held in memory is lost: serve stops and the intake journal still cannot take it",
    );
    expect(lost.map((l) => l.decisionId)).toEqual([last.decisionId]);
    expect(lost[0]?.sinks).toEqual(["audit"]);
  }, 90_000);

  it("keeps answering decisions when the queue cannot be written mid-run, and delivers every held job after", async () => {
    const { receiver, server } = await deliveringGateway();

    // Another process holds the queue's write lock: the delivery thread cannot take the
    // journaled jobs into the queue (it waits out better-sqlite3's 5 s busy timeout, then tries
    // again). The answering thread never touches the queue: every event is answered, and right,
    // and its jobs wait in the intake journal.
    const lock = new Database(join(server.dataDir, "queue.sqlite"));
    cleanups.push(async () => lock.close());
    lock.exec("BEGIN IMMEDIATE");
    for (const kind of KINDS) {
      const { status, text } = await post(server, kind.body);
      expect(status).toBe(200);
      expect(text).toBe(kind.expected === "" ? "" : JSON.stringify(kind.expected));
    }
    await server.waitForLine(
      (l) => l.msg === "could not take journaled jobs into the queue; will try again",
      30_000,
    );
    // /metrics shows the held jobs as journal bytes not yet taken in.
    await untilGauge(server, "hookgate_intake_backlog_bytes", (bytes) => bytes > 0, 30_000);
    const locked = (await (await fetch(`${server.url}/healthz`)).json()) as Record<string, string>;
    expect(locked).toMatchObject({ status: "ok", delivery: "failing" });
    expect(locked.deliveryError).toContain("database is locked");
    expect(locked.deliveryFix).toContain("another process holds that file locked");
    lock.exec("ROLLBACK");

    expect(server.child.exitCode).toBeNull();
    expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
    const metrics = await (await fetch(`${server.url}/metrics`)).text();
    expect(counter(metrics, "hookgate_enqueue_failed_total")).toBe(0);
    expect(counter(metrics, "hookgate_intake_failed_total")).toBeGreaterThan(0);
    // The deny and the PostToolUse call each notified `audit` while the lock was held.
    await until(() => receiver.unique.length === 3, "the held jobs delivered after the lock is released");
    expect((await post(server, bash("pwd", "PostToolUse"))).status).toBe(200);
    await until(() => receiver.unique.length === 4, "a delivery after the lock is released");
    expect(await (await fetch(`${server.url}/healthz`)).json()).not.toHaveProperty("delivery");
    await untilGauge(server, "hookgate_intake_backlog_bytes", (bytes) => bytes === 0);
  }, 90_000);

  it("says on /healthz that its queued jobs cannot be received while no new event comes to fail the intake", async () => {
    const { receiver, server } = await deliveringGateway();

    // The queue file cannot be written (another process holds its write lock; a full disk the
    // same): the gauges still read it and the journal has nothing new to take in, so only the
    // receive of the jobs due fails. /healthz said "ok", and doctor passed, while every retry
    // waited, a failure the log alone told.
    const lock = new Database(join(server.dataDir, "queue.sqlite"));
    cleanups.push(async () => lock.close());
    lock.exec("BEGIN IMMEDIATE");
    const failed = await server.waitForLine((l) => l.msg === "queue receive failed", 30_000);
    expect(failed.error).toContain("database is locked");
    const locked = (await (await fetch(`${server.url}/healthz`)).json()) as Record<string, string>;
    expect(locked).toMatchObject({ status: "ok", delivery: "failing", deliveryError: failed.error });
    // And what to do, in the line as on /healthz.
    expect(failed.fix).toContain("another process holds that file locked");
    expect(locked.deliveryFix).toBe(failed.fix);
    lock.exec("ROLLBACK");

    await server.waitForLine((l) => l.msg === "queue receive works again", 30_000);
    expect((await post(server, bash("pwd", "PostToolUse"))).status).toBe(200);
    await until(() => receiver.unique.length === 2, "a delivery after the lock is released");
    expect(await (await fetch(`${server.url}/healthz`)).json()).not.toHaveProperty("delivery");
  }, 90_000);
});

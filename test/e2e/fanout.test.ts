/**
 * Fan-out through a real `hookgate serve`: notify rules journal jobs before the answer, the
 * delivery thread takes them into the embedded SQLite queue and delivers them signed to a
 * loopback receiver, a SIGKILL mid-burst or before the jobs reach the queue loses nothing and
 * duplicates nothing a receiver keeps, a SIGHUP reload reaches the deliveries, and the
 * dead-letter queue can be listed and replayed.
 */
import {
  chmodSync,
  cpSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { createSqliteQueue, STOPPED_DELIVERING } from "../../src/adapters/queue/sqlite.js";
import type { DeliveryJob } from "../../src/core/delivery.js";
import { type LoopbackServer, loopbackServer } from "../support/loopback.js";
import { ROOT, runCli, type ServerProcess, startServerProcess } from "../support/process.js";
import { webhookReceiver } from "../support/receiver.js";
import { tempDir } from "../support/temp.js";

const SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

function policyFile(sinkUrl: string, retryScheduleSeconds = [1, 1, 1]): string {
  const dir = tempDir("fanout");
  const path = join(dir, "policy.json");
  writeFileSync(
    path,
    JSON.stringify({
      version: 1,
      egress: { allowCidrs: ["127.0.0.1/32"] },
      rules: [
        {
          id: "no-rm",
          on: "PreToolUse",
          if: "Bash(rm -rf /*)",
          decide: "deny",
          reason: "never",
          notify: ["audit"],
        },
        { id: "ends", on: ["SessionEnd", "Notification"], notify: ["audit"] },
      ],
      sinks: { audit: { type: "webhook", url: sinkUrl, secret: "env:WHSEC", retryScheduleSeconds } },
    }),
  );
  return path;
}

async function gateway(policy: string, dataDir?: string): Promise<ServerProcess> {
  const server = await startServerProcess(policy, { WHSEC: SECRET }, dataDir);
  cleanups.push(() => server.stop());
  return server;
}

const post = async (server: ServerProcess, body: Record<string, unknown>) => {
  const res = await fetch(`${server.url}/v1/hooks`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ session_id: "s1", transcript_path: "/t", cwd: "/p", ...body }),
  });
  return { status: res.status, text: await res.text() };
};
const rmEvent = (i: number) => ({
  hook_event_name: "PreToolUse",
  tool_name: "Bash",
  tool_input: { command: `rm -rf /tmp/${i}` },
  tool_use_id: `t${i}`,
});

async function until(check: () => boolean, what: string, timeoutMs = 20_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe("notify through the embedded queue", () => {
  it("answers at once and delivers a signed Standard Webhooks payload", async () => {
    const receiver = await webhookReceiver(SECRET);
    cleanups.push(() => receiver.close());
    const server = await gateway(policyFile(receiver.url));
    const answer = await post(server, rmEvent(1));
    expect(JSON.parse(answer.text).hookSpecificOutput.permissionDecision).toBe("deny");
    await until(() => receiver.unique.length === 1, "one delivery");
    expect(receiver.badSignatures).toBe(0);
    const body = receiver.bodies.get(receiver.unique[0] as string) as {
      data: { event: { tool_input: { command: string } } };
    };
    expect(body).toMatchObject({
      type: "hook.PreToolUse",
      data: { team: "default", client: "claude-code", decision: "deny", rule: "no-rm" },
    });
    expect(body.data.event.tool_input.command).toBe("rm -rf /tmp/1");
    // The delivery thread's counters reach /metrics at its next report (every 50 ms); on a busy
    // machine that may be seconds, so the wait is as long as the deliveries'.
    const metricsNow = async () => (await fetch(`${server.url}/metrics`)).text();
    const end = Date.now() + 20_000;
    let metrics = await metricsNow();
    while (!/hookgate_delivered_total\{sink="audit"\} 1/.test(metrics) && Date.now() < end) {
      await new Promise((r) => setTimeout(r, 50));
      metrics = await metricsNow();
    }
    expect(metrics).toMatch(/hookgate_enqueued_total\{sink="audit"\} 1/);
    expect(metrics).toMatch(/hookgate_delivered_total\{sink="audit"\} 1/);
  });

  it("survives a SIGKILL in the middle of a burst: every event delivered, none twice to the receiver", async () => {
    const receiver = await webhookReceiver(SECRET, 80);
    cleanups.push(() => receiver.close());
    const dataDir = tempDir("crash");
    const policy = policyFile(receiver.url);
    const first = await startServerProcess(policy, { WHSEC: SECRET }, dataDir);
    const burst = 60;
    for (let i = 0; i < burst; i++) expect((await post(first, rmEvent(i))).status).toBe(200);
    await until(() => receiver.unique.length >= 5, "the first deliveries");
    first.child.kill("SIGKILL");
    await first.stop();
    const deliveredBeforeKill = receiver.unique.length;
    expect(deliveredBeforeKill).toBeLessThan(burst);

    await gateway(policy, dataDir);
    await until(() => receiver.unique.length === burst, `all ${burst} events`, 50_000);
    expect(new Set(receiver.unique).size).toBe(burst);
    expect(receiver.badSignatures).toBe(0);
  });
});

/** The ids of every job held under a data dir: in the queue file, its dead letters, or the intake journal. */
function heldJobIds(dataDir: string): string[] {
  const db = new Database(join(dataDir, "queue.sqlite"), { readonly: true });
  const queued = db.prepare("SELECT id FROM queue_jobs UNION SELECT id FROM queue_dead").all() as {
    id: string;
  }[];
  db.close();
  // Each journal line holds one send's jobs.
  const segments = readdirSync(join(dataDir, "intake")).filter((name) => name.endsWith(".jsonl"));
  const journaled = segments.flatMap((name) =>
    readFileSync(join(dataDir, "intake", name), "utf8")
      .split("\n")
      .filter((line) => line !== "")
      .flatMap((line) => (JSON.parse(line) as { id: string }[]).map((job) => job.id)),
  );
  return [...new Set([...queued.map((r) => r.id), ...journaled])];
}

describe("an answered event", () => {
  it("is already held (journaled or queued) when the process is killed the moment its answer arrives", async () => {
    // The sink never answers, so every job stays held for the count below.
    const silent = await loopbackServer(() => undefined);
    cleanups.push(() => silent.close());
    const policy = policyFile(silent.url);
    const dataDir = tempDir("answered");
    const trials = 5;
    for (let i = 0; i < trials; i++) {
      const server = await startServerProcess(policy, { WHSEC: SECRET }, dataDir);
      const res = await fetch(`${server.url}/v1/hooks`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ session_id: "s1", transcript_path: "/t", cwd: "/p", ...rmEvent(i) }),
      });
      server.child.kill("SIGKILL"); // on the answer's headers, before anything else can run
      expect(res.status).toBe(200);
      await server.stop();
    }
    expect(heldJobIds(dataDir)).toHaveLength(trials);
  });

  it("is sent again after a SIGKILL between its send and its ack, with the same webhook-id, and then acked", async () => {
    // The first POST is never answered: the process is killed while it waits for the answer.
    let first = true;
    const sink = await loopbackServer((_req, res) => {
      if (first) {
        first = false;
        return;
      }
      res.writeHead(204).end();
    });
    cleanups.push(() => sink.close());
    const policy = policyFile(sink.url);
    const dataDir = tempDir("unacked");
    const before = await startServerProcess(policy, { WHSEC: SECRET }, dataDir);
    expect((await post(before, rmEvent(1))).status).toBe(200);
    await until(() => sink.received.length === 1, "the first send");
    before.child.kill("SIGKILL");
    await before.stop();

    await gateway(policy, dataDir);
    // Taken back from the dead process at start, not after its lease (60 s) runs out.
    await until(() => sink.received.length === 2, "the send after the restart");
    const [sent, again] = sink.received;
    expect(again?.headers["webhook-id"]).toBe(sent?.headers["webhook-id"]);
    expect(again?.body).toBe(sent?.body);
    const db = new Database(join(dataDir, "queue.sqlite"), { readonly: true });
    try {
      const left = () =>
        db
          .prepare("SELECT (SELECT count(*) FROM queue_jobs) + (SELECT count(*) FROM queue_dead) AS n")
          .get() as {
          n: number;
        };
      await until(() => left().n === 0, "the ack");
    } finally {
      db.close();
    }
    expect(sink.received).toHaveLength(2);
  });

  it("is delivered after a SIGKILL that came before the delivery thread took it into the queue", async () => {
    const receiver = await webhookReceiver(SECRET);
    cleanups.push(() => receiver.close());
    const policy = policyFile(receiver.url);
    const dataDir = tempDir("journaled");
    const first = await startServerProcess(policy, { WHSEC: SECRET }, dataDir);
    // Another process holds the queue's write lock: the jobs can only wait in the journal.
    const lock = new Database(join(dataDir, "queue.sqlite"));
    lock.exec("BEGIN IMMEDIATE");
    const events = 4;
    for (let i = 0; i < events; i++) expect((await post(first, rmEvent(i))).status).toBe(200);
    first.child.kill("SIGKILL");
    await first.stop();
    lock.exec("ROLLBACK");
    const db = new Database(join(dataDir, "queue.sqlite"), { readonly: true });
    expect(db.prepare("SELECT count(*) AS n FROM queue_jobs").get()).toEqual({ n: 0 });
    db.close();
    lock.close();
    expect(receiver.unique).toHaveLength(0);

    await gateway(policy, dataDir);
    await until(() => receiver.unique.length === events, `all ${events} journaled events`);
    expect(new Set(receiver.unique).size).toBe(events);
  });
});

describe("the delivery thread", () => {
  it.skipIf(process.platform !== "linux")(
    "runs at a lower CPU priority than the thread that answers hooks",
    async () => {
      const receiver = await webhookReceiver(SECRET);
      cleanups.push(() => receiver.close());
      const server = await gateway(policyFile(receiver.url));
      expect((await post(server, rmEvent(1))).status).toBe(200);
      await until(() => receiver.unique.length === 1, "a delivery");
      const pid = server.child.pid as number;
      const nice = (tid: string) => {
        const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, "utf8");
        return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[16]);
      };
      const threads = readdirSync(`/proc/${pid}/task`);
      expect(nice(String(pid))).toBe(0);
      expect(threads.filter((tid) => nice(tid) === 10)).toHaveLength(1);
    },
  );
});

describe("a job that ends the delivery thread each time it is sent", () => {
  it("is dead-lettered after its sink's attempts, saying why, and the thread then delivers the others", async () => {
    // Stands for a delivery that kills the thread (out of memory, a native fault): a module
    // preloaded into every thread of serve ends the delivery thread as it starts a request to a
    // path ending in /poison. Nothing reaches the receiver from there.
    const preload = join(tempDir("poison"), "poison.mjs");
    writeFileSync(
      preload,
      [
        'import { subscribe } from "node:diagnostics_channel";',
        'import { isMainThread } from "node:worker_threads";',
        "if (!isMainThread)",
        '  subscribe("undici:request:create", ({ request }) => request.path.endsWith("/poison") && process.exit(70));',
        "",
      ].join("\n"),
    );
    const receiver = await webhookReceiver(SECRET);
    cleanups.push(() => receiver.close());
    const policy = join(tempDir("poison-policy"), "policy.json");
    writeFileSync(
      policy,
      JSON.stringify({
        version: 1,
        egress: { allowCidrs: ["127.0.0.1/32"] },
        rules: [
          { id: "ends", on: "SessionEnd", notify: ["audit", "poison"] },
          { id: "notes", on: "Notification", notify: ["audit"] },
        ],
        sinks: {
          audit: { type: "webhook", url: receiver.url, secret: "env:WHSEC" },
          // Two attempts: the first and one retry.
          poison: {
            type: "webhook",
            url: `${receiver.url}/poison`,
            secret: "env:WHSEC",
            retryScheduleSeconds: [0],
          },
        },
      }),
    );
    const server = await startServerProcess(policy, {
      WHSEC: SECRET,
      NODE_OPTIONS: `--import ${pathToFileURL(preload).href}`,
    });
    cleanups.push(() => server.stop());
    expect((await post(server, { hook_event_name: "SessionEnd", reason: "other" })).status).toBe(200);

    // Restarted after 1 s, then 2 s: a few seconds, or for ever if each death cost no attempt.
    const dead = await server.waitForLine((l) => l.msg === "delivery dead-lettered", 30_000);
    expect(dead).toMatchObject({
      sink: "poison",
      attempts: 2,
      reason: `gave up after 2 attempts: ${STOPPED_DELIVERING}`,
    });
    const deaths = () =>
      server.lines.filter((l) => l.msg === "the delivery thread stopped; starting it again");
    expect(deaths().map((l) => l.code)).toEqual([70, 70]);
    await until(() => receiver.unique.length === 1, "the other sink's delivery of the event");

    // The thread runs on: the next event is delivered, and the thread stopped no more.
    const note = { hook_event_name: "Notification", message: "waiting for input" };
    expect((await post(server, note)).status).toBe(200);
    await until(() => receiver.unique.length === 2, "the next event's delivery");
    expect(deaths()).toHaveLength(2);
    const listed = await runCli(["dlq", "list", "--data-dir", server.dataDir]);
    expect(listed.stdout).toContain(`gave up after 2 attempts: ${STOPPED_DELIVERING}`);
  }, 60_000);
});

describe("a policy reloaded on SIGHUP", () => {
  it("reaches the delivery thread: jobs of events answered after it go to the new sink URL", async () => {
    const before = await webhookReceiver(SECRET);
    const after = await webhookReceiver(SECRET);
    cleanups.push(
      () => before.close(),
      () => after.close(),
    );
    const policy = policyFile(before.url);
    const server = await gateway(policy);
    expect((await post(server, rmEvent(1))).status).toBe(200);
    await until(() => before.unique.length === 1, "the delivery before the reload");

    writeFileSync(policy, readFileSync(policy, "utf8").replace(before.url, after.url));
    server.child.kill("SIGHUP");
    await server.waitForLine((l) => l.msg === "policy reloaded");
    expect((await post(server, rmEvent(2))).status).toBe(200);
    await until(() => after.unique.length === 1, "the delivery after the reload");
    expect(before.unique).toHaveLength(1);
  });
});

describe("failed enqueues on /metrics", () => {
  it("are at 0 for each sink from the start and from the reload that adds it, so an alert on their increase sees the first", async () => {
    const receiver = await webhookReceiver(SECRET);
    cleanups.push(() => receiver.close());
    const policy = policyFile(receiver.url);
    const server = await gateway(policy);
    const metrics = async () => (await fetch(`${server.url}/metrics`)).text();
    expect(await metrics()).toContain('hookgate_enqueue_failed_total{sink="audit"} 0');

    const document = JSON.parse(readFileSync(policy, "utf8"));
    document.sinks.siem = { type: "webhook", url: receiver.url, secret: "env:WHSEC" };
    document.rules[1].notify.push("siem");
    writeFileSync(policy, JSON.stringify(document));
    server.child.kill("SIGHUP");
    await server.waitForLine((l) => l.msg === "policy reloaded");
    expect(await metrics()).toContain('hookgate_enqueue_failed_total{sink="siem"} 0');
  });
});

describe("the dead-letter queue", () => {
  it("dead-letters after the last retry, lists the job with its error, and replays it", async () => {
    let status = 503;
    const sink: LoopbackServer = await loopbackServer((_req, res) => res.writeHead(status).end());
    cleanups.push(() => sink.close());
    const server = await gateway(policyFile(`${sink.url}/hooks`, [0, 0]));
    await post(server, { hook_event_name: "SessionEnd", reason: "other" });
    await server.waitForLine((l) => l.msg === "delivery dead-lettered");
    expect(sink.received.length).toBe(3);

    const listed = await runCli(["dlq", "list", "--data-dir", server.dataDir]);
    expect(listed.code).toBe(0);
    expect(listed.stdout).toMatch(/sink=audit\s+event=SessionEnd\s+attempts=3/);
    expect(listed.stdout).toMatch(/gave up after 3 attempts: .*503/);

    status = 200;
    const replayed = await runCli(["dlq", "replay", "--all", "--data-dir", server.dataDir]);
    expect(replayed.stdout).toBe("replayed 1 job\n");
    await server.waitForLine((l) => l.msg === "delivered");
    expect((await runCli(["dlq", "list", "--data-dir", server.dataDir])).stdout).toBe(
      "the dead-letter queue is empty\n",
    );
  });

  it("lists an event name the agent chose and an error the sink worded with their control characters escaped", async () => {
    // OSC 52 writes the terminal's clipboard; a CSI moves the cursor; an override reorders the line.
    const sink: LoopbackServer = await loopbackServer((_req, res) =>
      res.writeHead(400).end("bad \u001b]52;c;ZWNobyBoaQ==\u0007 \u009b2A request"),
    );
    cleanups.push(() => sink.close());
    const dir = tempDir("controls");
    const policy = join(dir, "policy.json");
    writeFileSync(
      policy,
      JSON.stringify({
        version: 1,
        egress: { allowCidrs: ["127.0.0.1/32"] },
        rules: [{ id: "every", on: "*", notify: ["audit"] }],
        sinks: { audit: { type: "webhook", url: `${sink.url}/hooks`, secret: "env:WHSEC" } },
      }),
    );
    const server = await gateway(policy);
    await post(server, { hook_event_name: "Evt\u001b]0;title\u0007\u2028x\u202egnp.exe" });
    await server.waitForLine((l) => l.msg === "delivery dead-lettered");

    const listed = await runCli(["dlq", "list", "--data-dir", server.dataDir]);
    expect(listed.code).toBe(0);
    // biome-ignore lint/suspicious/noControlCharactersInRegex: none of them may be printed.
    expect(listed.stdout).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u2028\u202e]/);
    expect(listed.stdout).toContain("event=Evt\\u001b]0;title\\u0007\\u2028x\\u202egnp.exe  attempts=1");
    expect(listed.stdout).toContain("bad \\u001b]52;c;ZWNobyBoaQ==\\u0007 \\u009b2A request");
    // --json is JSON, its strings as they were: a reader of it gets the event's own name.
    const [dead] = JSON.parse((await runCli(["dlq", "list", "--json", "--data-dir", server.dataDir])).stdout);
    expect(dead.body.notification.eventName).toBe("Evt\u001b]0;title\u0007\u2028x\u202egnp.exe");
  });

  it("takes over a data dir the journal's first release left: its queued job, its unread journal line and its dead letter", async () => {
    // Made by that release's serve, killed with a line still in its journal (test/fixtures/upgrade).
    const dataDir = tempDir("upgrade");
    cpSync(join(ROOT, "test/fixtures/upgrade/first-journal"), dataDir, { recursive: true });
    const receiver = await webhookReceiver(SECRET);
    cleanups.push(() => receiver.close());
    await gateway(policyFile(receiver.url), dataDir);
    await until(() => receiver.unique.length === 2, "the queued job and the journaled one");
    expect([...receiver.unique].sort()).toEqual([
      "evt_250c81cf-ae22-458a-a66a-04a0f1032f07",
      "evt_3f706c84-bbb5-4ad6-a036-eae796ee3770",
    ]);

    const listed = await runCli(["dlq", "list", "--data-dir", dataDir]);
    expect(listed.stdout).toMatch(
      /^evt_11a340cd-a299-44aa-a6cc-fd9843d7a266\.audit {2}sink=audit {2}event=PreToolUse {2}attempts=2 .*\n {2}gave up after 2 attempts: EGRESS_CONNECT_FAILED: .*\n$/,
    );
    expect((await runCli(["dlq", "replay", "--all", "--data-dir", dataDir])).stdout).toBe("replayed 1 job\n");
    await until(() => receiver.unique.length === 3, "the replayed dead letter");
    expect(receiver.badSignatures).toBe(0);
  });

  it("takes over a data dir the SQLite queue's first release left, killed while delivering: its waiting job, the one in delivery and its dead letter, each sent once", async () => {
    // Made by that release's serve, which had no journal nor the queue's later columns, killed
    // with a job leased to it (test/fixtures/upgrade).
    const dataDir = tempDir("upgrade-first-queue");
    cpSync(join(ROOT, "test/fixtures/upgrade/first-queue"), dataDir, { recursive: true });
    const receiver = await webhookReceiver(SECRET);
    cleanups.push(() => receiver.close());
    const server = await gateway(policyFile(receiver.url), dataDir);
    await until(() => receiver.unique.length === 2, "the waiting job and the one in delivery");
    expect([...receiver.unique].sort()).toEqual([
      "evt_a1fc4f23-d5e7-40f9-8df0-14ebfe4baf5a",
      "evt_e7ba2208-b07a-40a3-ad11-0846077bc8cc",
    ]);

    const listed = await runCli(["dlq", "list", "--data-dir", dataDir]);
    expect(listed.stdout).toMatch(
      /^evt_1b4514e5-dda6-4275-9fbe-bbcc683d12c0\.audit {2}sink=audit {2}event=PreToolUse {2}attempts=2 .*\n {2}gave up after 2 attempts: HTTP 500: nope\n$/,
    );
    expect((await runCli(["dlq", "replay", "--all", "--data-dir", dataDir])).stdout).toBe("replayed 1 job\n");
    // And an event of its own, through the journal it adds and the session store that release made.
    expect((await post(server, rmEvent(9))).status).toBe(200);
    await until(() => receiver.unique.length === 4, "the replayed dead letter and the new event");
    expect(await server.stop()).toBe(0);
    expect(receiver.duplicates).toBe(0);
    expect(receiver.badSignatures).toBe(0);
    // The job in delivery at the kill is sent as that release stored it.
    const inDelivery = receiver.bodies.get("evt_a1fc4f23-d5e7-40f9-8df0-14ebfe4baf5a") as {
      data: { event: unknown };
    };
    expect(inDelivery.data.event).toMatchObject({ tool_input: { command: "rm -rf /tmp/c" } });
  });

  it("replays under --policy only the dead letters whose sink the policy has, naming the others by sink", async () => {
    // Before, a dead letter of a sink the policy had dropped was replayed, dead-lettered again at
    // once with "no longer in the policy" in place of the error it failed with, and the CLI said
    // nothing of it.
    const dataDir = tempDir("gone-sink");
    const queue = createSqliteQueue<DeliveryJob>({ path: join(dataDir, "queue.sqlite") });
    const jobs = [
      ["evt_1.audit", "audit"],
      ["evt_1.chat", "chat"],
      ["evt_2.chat", "chat"],
      ["evt_2.pager", "pager"],
      ["evt_3.audit", "audit"],
    ].map(
      ([id = "", sink = ""]): DeliveryJob => ({
        id,
        sink,
        notification: { eventName: "SessionEnd", event: {} } as DeliveryJob["notification"],
      }),
    );
    await queue.send(jobs.map((job) => ({ id: job.id, body: job, group: job.sink })));
    for (const leased of await queue.receive(jobs.length, 60_000))
      expect(await queue.deadLetter(leased, "gave up after 4 attempts: HTTP 500")).toBe(true);
    await queue.close();
    const policy = policyFile("http://127.0.0.1:9/hook");

    const one = await runCli([
      "dlq",
      "replay",
      "--id",
      "evt_2.pager",
      "--policy",
      policy,
      "--data-dir",
      dataDir,
    ]);
    expect([one.code, one.stdout]).toEqual([1, "replayed 0 jobs\n"]);
    expect(one.stderr).toBe(
      `hookgate: left 1 dead letter whose sink ${policy} no longer has: "pager" (1); replayed, it would be dead-lettered again at once. Add the sink back (and reload serve) and replay again, or drop it (hookgate dlq drop --id ID)\n`,
    );

    const all = await runCli(["dlq", "replay", "--all", "--policy", policy, "--data-dir", dataDir]);
    expect([all.code, all.stdout]).toEqual([0, "replayed 2 jobs\n"]);
    expect(all.stderr).toContain(
      `left 3 dead letters whose sink ${policy} no longer has: "chat" (2), "pager" (1);`,
    );
    // Left as they were, with the error they failed with.
    const left = JSON.parse((await runCli(["dlq", "list", "--json", "--data-dir", dataDir])).stdout) as {
      id: string;
      error: string;
    }[];
    expect(left.map((d) => [d.id, d.error]).sort()).toEqual(
      ["evt_1.chat", "evt_2.chat", "evt_2.pager"].map((id) => [id, "gave up after 4 attempts: HTTP 500"]),
    );
    const broken = await runCli([
      "dlq",
      "replay",
      "--all",
      "--policy",
      join(dataDir, "none.json"),
      "--data-dir",
      dataDir,
    ]);
    expect(broken.code).toBe(1);
    expect(broken.stderr).toContain("none.json: no such file");
  });

  it("lists a dead letter stored with its error unmasked (before errors were masked) masked", async () => {
    // A dead letter as a gateway wrote it before the error of a delivery that threw was masked.
    const dataDir = tempDir("old-dead-letter");
    const queue = createSqliteQueue<DeliveryJob>({ path: join(dataDir, "queue.sqlite") });
    const job: DeliveryJob = {
      id: "evt_old.audit",
      sink: "audit",
      notification: { eventName: "SessionEnd", event: {} } as DeliveryJob["notification"],
    };
    await queue.send([{ id: job.id, body: job, group: "audit" }]);
    const [leased] = await queue.receive(1, 60_000);
    const token = "abcdefghijklmnopqrstuvwx";
    const raw = `gave up after 8 attempts: internal error: fetch failed for https://hooks.slack.com/services/T0123ABCD/B0123ABCD/${token} (authorization: Bearer sk-live-abcdefghijklmnop1234)`;
    expect(leased && (await queue.deadLetter(leased, raw))).toBe(true);
    await queue.close();

    const [text, json] = await Promise.all([
      runCli(["dlq", "list", "--data-dir", dataDir]),
      runCli(["dlq", "list", "--json", "--data-dir", dataDir]),
    ]);
    const masked =
      "gave up after 8 attempts: internal error: fetch failed for https://hooks.slack.com/services/[masked] (authorization: Bearer [masked])";
    expect(text.code).toBe(0);
    expect(text.stdout).toContain(`\n  ${masked}\n`);
    expect((JSON.parse(json.stdout) as { error: string }[]).map((d) => d.error)).toEqual([masked]);
    for (const out of [text.stdout, json.stdout]) {
      expect(out).not.toContain(token);
      expect(out).not.toContain("sk-live");
    }
  });

  it("drops dead letters for good, beside a running serve, and says when an id is not one", async () => {
    const sink: LoopbackServer = await loopbackServer((_req, res) => res.writeHead(503).end());
    cleanups.push(() => sink.close());
    const server = await gateway(policyFile(`${sink.url}/hooks`, [0]));
    await post(server, { hook_event_name: "SessionEnd", reason: "other" });
    await post(server, { hook_event_name: "SessionEnd", reason: "logout" });
    await until(
      () => server.lines.filter((l) => l.msg === "delivery dead-lettered").length === 2,
      "two dead letters",
    );
    const dead = JSON.parse(
      (await runCli(["dlq", "list", "--json", "--data-dir", server.dataDir])).stdout,
    ) as {
      id: string;
    }[];
    expect(dead).toHaveLength(2);
    const [first, second] = dead.map((d) => d.id);
    // The checks that change nothing run at once: each is a process of its own, and one after
    // another they took most of a minute on a loaded host.
    const badLimits = ["0", "1.5", "x", "10001"];
    const dir = server.dataDir;
    const [limited, limitedJson, exact, limitOnDrop, unknown, nowhere, usage, both, ...refusals] =
      await Promise.all([
        runCli(["dlq", "list", "--limit", "1", "--data-dir", dir]),
        runCli(["dlq", "list", "--json", "--limit", "1", "--data-dir", dir]),
        runCli(["dlq", "list", "--limit", "2", "--data-dir", dir]),
        runCli(["dlq", "drop", "--all", "--limit", "1", "--data-dir", dir]),
        runCli([
          "dlq",
          "replay",
          ...["--id", "unknown", "--id", "other", "--id", "unknown"],
          "--data-dir",
          dir,
        ]),
        runCli(["dlq", "list", "--data-dir", join(dir, "missing")]),
        runCli(["dlq", "drop", "--data-dir", dir]),
        runCli(["dlq", "drop", "--all", "--id", String(second), "--data-dir", dir]),
        ...badLimits.map((bad) => runCli(["dlq", "list", "--limit", bad, "--data-dir", "no-such-dir"])),
      ]);
    // --limit shows the oldest first, says that more remain, and is checked before the queue opens.
    expect(limited.code).toBe(0);
    expect(limited.stdout).toContain(String(first));
    expect(limited.stdout).not.toContain(String(second));
    expect(limited.stdout).toContain("(1 shown; more remain: pass a higher --limit)\n");
    expect((JSON.parse(limitedJson.stdout) as { id: string }[]).map((d) => d.id)).toEqual([first]);
    expect(exact.stdout).toContain(String(second));
    expect(exact.stdout).not.toContain("more remain");
    badLimits.forEach((bad, i) => {
      expect([refusals[i]?.code, refusals[i]?.stderr]).toEqual([
        2,
        expect.stringContaining(`--limit takes a whole number from 1 to 10000, not "${bad}"`),
      ]);
    });
    expect([limitOnDrop.code, limitOnDrop.stderr]).toEqual([
      2,
      expect.stringContaining("dlq drop takes no --limit"),
    ]);
    // Each id that is no dead letter is named, once: a count alone left the user to find which.
    expect([unknown.code, unknown.stdout, unknown.stderr]).toEqual([
      1,
      "replayed 0 jobs\n",
      "2 of the ids given are not dead letters (mistyped, or replayed or dropped already): unknown, other; see hookgate dlq list\n",
    ]);
    // A data dir with no queue in it is an error that names the fix, not a usage error.
    expect([nowhere.code, nowhere.stdout, nowhere.stderr]).toEqual([
      1,
      "",
      `hookgate: no queue at ${join(dir, "missing", "queue.sqlite")}: pass the --data-dir that hookgate serve uses\n`,
    ]);
    expect(usage.code).toBe(2);
    expect(usage.stderr).toContain("dlq drop needs --id ID (repeatable) or --all");
    expect(both.code).toBe(2);
    expect(both.stderr).toContain("dlq drop takes --id or --all, not both");

    const one = await runCli(["dlq", "drop", "--id", String(first), "--data-dir", server.dataDir]);
    expect([one.code, one.stdout]).toEqual([0, "dropped 1 job\n"]);
    const missing = await runCli(["dlq", "drop", "--id", String(first), "--data-dir", server.dataDir]);
    // The failure goes to stderr, as every command's failures do; stdout says what was done.
    expect([missing.code, missing.stdout, missing.stderr]).toEqual([
      1,
      "dropped 0 jobs\n",
      `1 of the ids given is not a dead letter (mistyped, or replayed or dropped already): ${first}; see hookgate dlq list\n`,
    ]);
    // The same id twice is one dead letter, dropped once; the first id is gone already.
    const repeated = await runCli([
      "dlq",
      "drop",
      ...["--id", String(second), "--id", String(second)],
      "--data-dir",
      server.dataDir,
    ]);
    expect([repeated.code, repeated.stdout]).toEqual([0, "dropped 1 job\n"]);

    const rest = await runCli(["dlq", "drop", "--all", "--data-dir", server.dataDir]);
    expect([rest.code, rest.stdout]).toEqual([0, "dropped 0 jobs\n"]);
    expect((await runCli(["dlq", "list", "--data-dir", server.dataDir])).stdout).toBe(
      "the dead-letter queue is empty\n",
    );
    // Gone for good: a replay finds nothing, and the sink saw each job only on its two attempts.
    expect((await runCli(["dlq", "replay", "--all", "--data-dir", server.dataDir])).stdout).toBe(
      "replayed 0 jobs\n",
    );
    expect(sink.received.length).toBe(4);
    // Eight rounds of hookgate commands, each command a Node process: room on a loaded host.
  }, 120_000);

  it("refuses to start on a data dir it cannot write, with a clear error", async () => {
    // A path below a regular file can never be a directory, whoever runs the test (root included).
    const file = join(tempDir("notadir"), "file");
    writeFileSync(file, "");
    const dataDir = join(file, "data");
    const { code, stderr } = await runCli([
      "serve",
      "--policy",
      policyFile("http://127.0.0.1:1/x"),
      "--port",
      "0",
      "--data-dir",
      dataDir,
    ]);
    expect(code).toBe(1);
    expect(stderr).toContain(`cannot use the data dir ${dataDir}`);
    expect(stderr).toMatch(/ENOTDIR|EEXIST.*pass --data-dir with a writable directory/);
  });

  it("makes its data dir readable by its own user alone, and leaves one that exists as it is", async () => {
    const policy = policyFile("http://127.0.0.1:1/x");
    const parent = tempDir("mode");
    chmodSync(parent, 0o755);
    const made = join(parent, "made", "data");
    const server = await gateway(policy, made);
    expect((await post(server, rmEvent(1))).status).toBe(200);
    await server.stop();
    expect(statSync(made).mode & 0o777).toBe(0o700);
    // A parent made on the way is no data dir: it keeps the default mode.
    expect(statSync(join(parent, "made")).mode & 0o777).toBe(0o777 & ~process.umask());

    const shared = join(parent, "shared");
    mkdirSync(shared, { mode: 0o750 });
    chmodSync(shared, 0o750);
    await (await gateway(policy, shared)).stop();
    expect(statSync(shared).mode & 0o777).toBe(0o750);
  });

  it("stops cleanly when serve.pid cannot be removed", async () => {
    const policy = policyFile("http://127.0.0.1:1/x");
    const dataDir = tempDir("pid");
    // Something rm cannot remove stands at serve.pid (as a data dir made read-only would be).
    mkdirSync(join(dataDir, "serve.pid", "kept"), { recursive: true });
    const server = await gateway(policy, dataDir);
    expect((await post(server, rmEvent(1))).status).toBe(200);
    expect(await server.stop()).toBe(0);
    expect(server.lines.some((l) => l.msg === "hookgate stopped")).toBe(true);
    expect(server.output().stderr).toBe("");
  });

  it("refuses a second serve on a data dir in use, and lets one start after the first is killed", async () => {
    const policy = policyFile("http://127.0.0.1:1/x");
    const dataDir = tempDir("claimed");
    const first = await startServerProcess(policy, { WHSEC: SECRET }, dataDir);
    cleanups.push(() => first.stop()); // a failed expectation below would otherwise leave it running
    const second = await runCli(["serve", "--policy", policy, "--port", "0", "--data-dir", dataDir]);
    expect(second.code).toBe(1);
    expect(second.stderr).toContain(
      `cannot use the data dir ${dataDir}: another hookgate serve (pid ${first.child.pid}) is running on it; it holds ${join(dataDir, "serve.lock")}, a lock the operating system drops when that process ends, so it is never stale: do not delete it. Stop that process, or give each process its own --data-dir`,
    );
    expect((await post(first, rmEvent(1))).status).toBe(200);

    // The claim is a lock the operating system drops with the process, even on SIGKILL.
    first.child.kill("SIGKILL");
    await first.stop();
    const third = await gateway(policy, dataDir);
    expect((await post(third, rmEvent(2))).status).toBe(200);
    await third.stop();
    const fourth = await gateway(policy, dataDir);
    expect((await post(fourth, rmEvent(3))).status).toBe(200);
  });

  const lockFiles = (dataDir: string) => [
    join(dataDir, "serve.lock"),
    ...readdirSync(join(dataDir, "intake"))
      .filter((name) => name.endsWith(".lock"))
      .map((name) => join(dataDir, "intake", name)),
  ];
  it.each([
    ["serve.lock was", (dataDir: string) => [join(dataDir, "serve.lock")], true, /the intake journal/],
    // The first one takes its journal lock again within a second, and the start waits for that.
    ["every lock file was", lockFiles, true, /the intake journal/],
    // Its journal segment gone too, the first one still holds the session store locked.
    [
      "every lock file and journal segment were",
      (dataDir: string) => [
        join(dataDir, "serve.lock"),
        ...readdirSync(join(dataDir, "intake")).map((name) => join(dataDir, "intake", name)),
      ],
      true,
      // As it starts, the first one may have written a new segment, whose lock it holds.
      /the intake journal|sessions\.sqlite locked/,
    ],
    // The session store deleted too, a start that comes before the first one's copy of its
    // segment finds no lock of the first one's to wait for: it may start, and then must lose nothing.
    [
      "every lock file, journal segment and session store were",
      (dataDir: string) => [
        join(dataDir, "serve.lock"),
        join(dataDir, "sessions.sqlite"),
        ...readdirSync(join(dataDir, "intake")).map((name) => join(dataDir, "intake", name)),
      ],
      undefined,
      /the intake journal/,
    ],
  ])(
    "loses no notify event sent to a serve whose %s deleted when a second serve starts on its data dir",
    async (_, deleted, refused, holds) => {
      const receiver = await webhookReceiver(SECRET);
      cleanups.push(() => receiver.close());
      const policy = policyFile(receiver.url);
      const dataDir = tempDir("unlocked");
      const first = await gateway(policy, dataDir);
      expect((await post(first, rmEvent(0))).status).toBe(200);
      await until(() => receiver.unique.length === 1, "the first delivery");
      // An operator takes the locks for stale ones and deletes them.
      for (const path of deleted(dataDir)) rmSync(path);
      let second: ServerProcess | undefined;
      let refusal = "";
      try {
        second = await gateway(policy, dataDir);
      } catch (e) {
        refusal = String(e);
      }
      // Refused, it says which process holds the data dir and what to do; let run, it must lose nothing.
      if (refused !== undefined) expect(second === undefined).toBe(refused);
      if (second === undefined) {
        expect(refusal).toContain(`another hookgate serve (pid ${first.child.pid}) is running on it`);
        expect(refusal).toMatch(holds);
        expect(refusal).toContain("Stop that process, or give each process its own --data-dir");
      }
      const sent = 10;
      for (let i = 1; i <= sent; i++) {
        expect((await post(first, rmEvent(i))).status).toBe(200);
        if (second) expect((await post(second, rmEvent(100 + i))).status).toBe(200);
      }
      const expected = 1 + sent * (second ? 2 : 1);
      if (second) {
        // Both running, a journal segment of one waits behind the other's live one (a reader
        // never deletes a segment its writer holds): held on disk, delivered once that one stops.
        await second.stop();
        await first.stop();
        await gateway(policy, dataDir);
      }
      await until(() => receiver.unique.length >= expected, `${expected} deliveries`);
      expect(receiver.unique).toHaveLength(expected);
    },
  );

  it("gives up its data dir and exits when it cannot listen", async () => {
    const taken = await loopbackServer(() => undefined);
    cleanups.push(() => taken.close());
    const port = new URL(taken.url).port;
    const policy = policyFile("http://127.0.0.1:1/x");
    const dataDir = tempDir("noport");
    const failed = await runCli([
      "serve",
      "--policy",
      policy,
      "--host",
      "127.0.0.1",
      "--port",
      port,
      "--data-dir",
      dataDir,
    ]);
    expect(failed.code).toBe(1);
    expect(failed.stderr).toContain(`127.0.0.1:${port} is in use (EADDRINUSE)`);
    expect(failed.stderr).toContain("stop it, or pass another --port");
    const next = await gateway(policy, dataDir);
    expect((await post(next, rmEvent(1))).status).toBe(200);
  });
});

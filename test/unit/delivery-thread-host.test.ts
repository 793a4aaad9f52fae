/**
 * The main thread's side of the delivery thread, against real worker threads running stand-in
 * modules (the real thread needs the built dist/ and is covered end to end in
 * test/e2e/fanout.test.ts): a thread that dies is started again and its reports still arrive;
 * a thread that cannot start fails the start with its reason.
 */

import { spawn } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import type { ServerResponse } from "node:http";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import Database from "better-sqlite3";
import { describe, expect, it, vi } from "vitest";
import { createPrometheusRegistry } from "../../src/adapters/metrics/prometheus.js";
import { openJournalWriter } from "../../src/adapters/queue/journal.js";
import { createSqliteQueue, partialCopy } from "../../src/adapters/queue/sqlite.js";
import type { DeliveryJob } from "../../src/core/delivery.js";
import {
  type DeliverySettings,
  ENDING,
  IN_CALL,
  JOURNAL_DIR,
  startDeliveryThread,
} from "../../src/entry/delivery-thread-host.js";
import { loopbackServer } from "../support/loopback.js";
import { ROOT } from "../support/process.js";
import { tempDir, whenDone } from "../support/temp.js";

/** Writes a stand-in thread module and returns its URL. */
function standIn(source: string): URL {
  const path = join(tempDir("thread"), "thread.mjs");
  writeFileSync(path, `import { parentPort } from "node:worker_threads";\n${source}`);
  return pathToFileURL(path);
}

const FIRST: DeliverySettings = { document: { sinks: undefined, egress: undefined }, secrets: [] };

function harness(script: URL, dataDir = "unused", settings = FIRST, heartbeatMs?: number, stopMs?: number) {
  const lines: string[] = [];
  const logs: { msg: string; fields?: Record<string, unknown> }[] = [];
  const metrics = createPrometheusRegistry();
  const start = async () => {
    const thread = await startDeliveryThread({
      dataDir,
      settings,
      env: {},
      lines: { write: (line) => lines.push(line) },
      metrics,
      logger: { log: (_level, msg, fields) => logs.push({ msg, ...(fields ? { fields } : {}) }) },
      script,
      ...(heartbeatMs === undefined ? {} : { heartbeatMs }),
      ...(stopMs === undefined ? {} : { stopMs }),
    });
    // Stopped before the test's directories are removed, however the test ended.
    whenDone(() => thread.stop());
    // As serve does once it listens.
    thread.deliver();
    return thread;
  };
  return { lines, logs, metrics, start };
}

/**
 * Waits for `check` to hold, at most `ms` (what follows asserts it): a thread started or started
 * again loads its modules and opens SQLite, seconds on a busy host.
 */
const until = async (check: () => boolean, ms = 20_000) => {
  const end = Date.now() + ms;
  while (!check() && Date.now() < end) await new Promise((r) => setTimeout(r, 10));
};

/** The built delivery thread, the one serve starts. */
const REAL_THREAD = new URL("../../dist/entry/delivery-thread.js", import.meta.url);

/** The JSON lines a thread logged, parsed. */
const jsonLines = (lines: readonly string[]) =>
  lines
    .join("")
    .split("\n")
    .filter((l) => l !== "")
    .map((l) => JSON.parse(l) as Record<string, unknown>);

/** Deletes the queue file under a running thread, with its -wal and -shm files. */
function deleteQueueFile(dataDir: string): string {
  const path = join(dataDir, "queue.sqlite");
  for (const file of [path, `${path}-wal`, `${path}-shm`]) rmSync(file, { force: true });
  return path;
}

/**
 * A webhook sink that holds its first request unanswered (`held()`, once it came; `onHeld` runs
 * as it comes) and answers the rest 204, and the settings that send notify jobs to it.
 */
async function holdingSink(onHeld: () => void = () => {}) {
  let held: ServerResponse | undefined;
  const sink = await loopbackServer((_req, res) => {
    if (held === undefined) {
      held = res;
      onHeld();
    } else res.writeHead(204).end();
  });
  whenDone(() => sink.close());
  const settings: DeliverySettings = {
    document: {
      sinks: { audit: { type: "webhook", url: `${sink.url}/hook`, retryScheduleSeconds: [1, 1, 1] } },
      egress: { allowCidrs: ["127.0.0.1/32"] },
    },
    secrets: [],
  };
  return { sink, settings, held: () => held };
}

/** Journals notify event `n`'s job for a sink (audit), as the answering thread does, and wakes the thread. */
function notifier(dataDir: string, thread: { wake(): void }) {
  const journal = openJournalWriter(join(dataDir, JOURNAL_DIR));
  whenDone(() => journal.close());
  return (n: number, sink = "audit") => {
    const job: DeliveryJob = {
      id: `evt_${n}.${sink}`,
      sink,
      notification: {
        id: `evt_${n}`,
        createdAt: Date.now(),
        team: "t",
        client: "claude-code",
        eventName: "Notification",
        decision: "none",
        ruleId: "r",
        event: { message: `event ${n}` },
      },
    };
    journal.append([{ id: job.id, body: job, group: sink }]);
    thread.wake();
  };
}

describe("startDeliveryThread", () => {
  it("starts a thread that dies again, and keeps writing its lines and counting its counters", async () => {
    const script = standIn(`
      parentPort.postMessage({ kind: "report", lines: "started\\n", counts: [["hookgate_delivered_total", { sink: "s" }]] });
      parentPort.postMessage({ kind: "ready" });
      parentPort.on("message", (m) => {
        if (m.kind === "wake") throw new Error("boom");
        if (m.kind === "stop") parentPort.close();
      });
    `);
    const { lines, logs, metrics, start } = harness(script);
    const thread = await start();
    await until(() => lines.length === 1);
    // Dies twice: each time it is started again.
    for (const started of [2, 3]) {
      thread.wake();
      await until(() => lines.length === started);
    }
    expect(lines).toEqual(["started\n", "started\n", "started\n"]);
    expect(logs.map((l) => l.msg)).toEqual([
      "the delivery thread failed",
      "the delivery thread stopped; starting it again",
      "the delivery thread failed",
      "the delivery thread stopped; starting it again",
    ]);
    expect(logs[0]?.fields).toEqual({ error: "boom" });
    // Each death in a row waits twice as long before the next start.
    expect(logs.filter((l) => l.fields?.inMs !== undefined).map((l) => l.fields?.inMs)).toEqual([1000, 2000]);
    expect(metrics.render()).toContain('hookgate_delivered_total{sink="s"} 3');
    await thread.stop();
  });

  it("doubles the wait before each start of a thread that keeps dying, whatever the wall clock does", async () => {
    const script = standIn(`
      parentPort.postMessage({ kind: "report", lines: "started\\n", counts: [] });
      parentPort.postMessage({ kind: "ready" });
      parentPort.on("message", (m) => {
        if (m.kind === "wake") throw new Error("boom");
        if (m.kind === "stop") parentPort.close();
      });
    `);
    const { lines, logs, start } = harness(script);
    // The wall clock of this process (the thread's host), stepped forward 2 minutes while the
    // second thread runs (NTP correcting a host that resumed behind): that thread ran for a second,
    // and its death is the second in a row, not the first after a long run.
    const wall = Date.now;
    let step = 0;
    const clock = vi.spyOn(Date, "now").mockImplementation(() => wall() + step);
    try {
      const thread = await start();
      await until(() => lines.length === 1);
      thread.wake();
      await until(() => lines.length === 2);
      step = 120_000;
      thread.wake();
      await until(() => logs.filter((l) => l.fields?.inMs !== undefined).length === 2);
      expect(logs.filter((l) => l.fields?.inMs !== undefined).map((l) => l.fields?.inMs)).toEqual([
        1000, 2000,
      ]);
      await thread.stop();
    } finally {
      clock.mockRestore();
    }
  });

  it("stops at once, and starts nothing, when the thread died and waits to be started again", async () => {
    const script = standIn(`
      parentPort.postMessage({ kind: "report", lines: "started\\n", counts: [] });
      parentPort.postMessage({ kind: "gauges", values: { hookgate_queue_jobs: 2, hookgate_intake_backlog_bytes: 0 } });
      parentPort.postMessage({ kind: "ready" });
      parentPort.on("message", (m) => {
        if (m.kind === "wake") throw new Error("boom");
      });
    `);
    const { lines, logs, metrics, start } = harness(script);
    const thread = await start();
    // The thread's gauges, and whether it runs.
    await until(() => metrics.render().includes("hookgate_queue_jobs 2"));
    expect(metrics.render()).toContain("hookgate_intake_backlog_bytes 0\n");
    expect(metrics.render()).toContain("hookgate_delivery_thread_up 1\n");
    thread.wake();
    await until(() => logs.length === 2);
    expect(logs[1]?.msg).toBe("the delivery thread stopped; starting it again");
    expect(metrics.render()).toContain("hookgate_delivery_thread_up 0\n");
    // What /healthz says until a thread runs again.
    expect(thread.trouble()).toMatchObject({
      delivery: "restarting",
      error: "the delivery thread exited (code 1); started again in 1000 ms",
    });
    // SIGTERM in the second before the restart: nothing is running, so nothing to wait for.
    await thread.stop();
    await new Promise((r) => setTimeout(r, 1200));
    expect(lines).toEqual(["started\n"]);
  });

  it("fails the start with the thread's reason when it cannot open what it needs", async () => {
    const script = standIn(`
      parentPort.postMessage({ kind: "failed", error: "cannot open the SQLite queue at q: file is not a database" });
      parentPort.close();
    `);
    const { logs, start } = harness(script);
    await expect(start()).rejects.toThrow("cannot open the SQLite queue at q: file is not a database");
    // Not started again: `serve` stops with the reason.
    await new Promise((r) => setTimeout(r, 1200));
    expect(logs).toEqual([]);
  });

  it("passes each reloaded policy's settings on, starts a thread again with them, and waits for it on stop", async () => {
    const script = standIn(`
      import { workerData } from "node:worker_threads";
      const say = (line) => parentPort.postMessage({ kind: "report", lines: line + "\\n", counts: [] });
      say("start " + JSON.stringify(workerData.settings));
      parentPort.postMessage({ kind: "ready" });
      parentPort.on("message", (m) => {
        if (m.kind === "policy") say("policy " + JSON.stringify(m.settings));
        if (m.kind === "wake") throw new Error("boom");
        if (m.kind === "stop") setTimeout(() => {
          say("drained");
          parentPort.close();
        }, 50);
      });
    `);
    const { lines, logs, metrics, start } = harness(script);
    const thread = await start();
    // Ready is not delivering: up is 1 only once a thread sends its gauges, which this one never does.
    await until(() => lines.length === 1);
    expect(metrics.render()).toContain("hookgate_delivery_thread_up 0\n");
    const next: DeliverySettings = {
      document: {
        sinks: { audit: { type: "webhook", url: "https://example.com/hook" } },
        egress: { allowCidrs: ["10.0.0.0/8"] },
      },
      secrets: ["s3cret-value"],
    };
    thread.policy(next);
    await until(() => lines.length === 2);
    thread.wake();
    await until(() => lines.length === 3);
    await thread.stop();
    expect(lines).toEqual([
      `start ${JSON.stringify(FIRST)}\n`,
      `policy ${JSON.stringify(next)}\n`,
      `start ${JSON.stringify(next)}\n`,
      "drained\n",
    ]);
    expect(logs.map((l) => l.msg)).toEqual([
      "the delivery thread failed",
      "the delivery thread stopped; starting it again",
    ]);
  });

  it("wakes the thread only after the answers its turn writes, once however often it is asked", async () => {
    const script = standIn(`
      parentPort.postMessage({ kind: "ready" });
      parentPort.on("message", (m) => {
        if (m.kind === "wake") parentPort.postMessage({ kind: "report", lines: "woken " + Date.now() + "\\n", counts: [] });
        if (m.kind === "stop") parentPort.close();
      });
    `);
    const { lines, start } = harness(script);
    const thread = await start();
    let answersWrittenAt = 0;
    // As a notify rule's request does: the jobs journaled (wake), then the listener queues the
    // turn's answers (node-listener.ts answerWriter). Writing them takes 100 ms here, so a wake
    // posted before them reaches the thread while they are being written.
    thread.wake();
    thread.wake();
    setImmediate(() => {
      const end = Date.now() + 100;
      while (Date.now() < end) {}
      answersWrittenAt = Date.now();
    });
    whenDone(() => thread.stop());
    await until(() => lines.length === 1);
    await new Promise((r) => setTimeout(r, 100));
    expect(lines).toHaveLength(1);
    const wokenAt = Number(/^woken (\d+)\n$/.exec(lines[0] ?? "")?.[1]);
    expect(answersWrittenAt).toBeGreaterThan(0);
    expect(wokenAt).toBeGreaterThanOrEqual(answersWrittenAt);
    await thread.stop();
  });

  it("logs, from the real thread, a recorded intake position it does not resume at (built dist/)", async () => {
    // queue.sqlite kept a position in segment 7; the journal directory was removed since.
    const dataDir = tempDir("thread");
    const queue = createSqliteQueue({ path: join(dataDir, "queue.sqlite") });
    await queue.intake([], { segment: 7, offset: 100 });
    await queue.close();
    const { lines, start } = harness(REAL_THREAD, dataDir);
    const thread = await start();
    await thread.stop();
    expect(jsonLines(lines)).toContainEqual(
      expect.objectContaining({
        level: "warn",
        msg: "the intake journal is not resumed at its recorded position; reading it from the start of its first segment",
        recorded: { segment: 7, offset: 100 },
        start: { segment: 0, offset: 0 },
        why: "its segment is gone",
      }),
    );
  });

  it("logs and counts, from the real thread, a journal line that is not jobs and its dead letter, never its text (built dist/)", async () => {
    const dataDir = tempDir("thread");
    mkdirSync(join(dataDir, JOURNAL_DIR));
    writeFileSync(join(dataDir, JOURNAL_DIR, "intake-000000000001.jsonl"), "token=s3cret garbage\n");
    const { lines, metrics, start } = harness(REAL_THREAD, dataDir);
    const thread = await start();
    await until(() => lines.join("").includes("delivery dead-lettered"));
    await thread.stop();
    const logged = jsonLines(lines);
    expect(logged).toContainEqual(
      expect.objectContaining({
        level: "error",
        msg: "an intake journal line is not jobs; it is taken in as one job, dead-lettered as its text",
        segment: 1,
        offset: 0,
        bytes: 20,
        job: "intake-1-0",
      }),
    );
    expect(logged).toContainEqual(
      expect.objectContaining({
        level: "error",
        msg: "delivery dead-lettered",
        job: "intake-1-0",
        sink: "unknown",
        attempts: 0,
        reason: "the stored job is not valid JSON; dead-lettered as stored",
      }),
    );
    expect(metrics.render()).toContain('hookgate_dead_lettered_total{sink="unknown"} 1\n');
    expect(lines.join("")).not.toContain("s3cret");
  });

  it("still gets the lines the real thread logged just before it died (built dist/)", async () => {
    // A journal whose first segment ends in a torn line: the thread's first drain logs a warning
    // for it, which waits up to 50 ms to be reported with other lines.
    const dataDir = tempDir("thread");
    mkdirSync(join(dataDir, JOURNAL_DIR));
    writeFileSync(join(dataDir, JOURNAL_DIR, "intake-000000000001.jsonl"), '[{"id":"torn');
    writeFileSync(join(dataDir, JOURNAL_DIR, "intake-000000000002.jsonl"), "");
    const { lines, logs, start } = harness(REAL_THREAD, dataDir);
    const thread = await start();
    // Handled right after that drain's first turn: settings it cannot read throw in the thread's
    // message handler, an error nothing there catches, and the thread dies well within 50 ms.
    thread.policy(null as unknown as DeliverySettings);
    await until(() => logs.length >= 2);
    await thread.stop();
    expect(logs[0]?.msg).toContain("the delivery thread failed");
    expect(JSON.stringify(logs[0]?.fields)).toContain("reading 'document'");
    const messages = jsonLines(lines).map((l) => l.msg);
    expect(messages).toContain(
      "skipped the torn end of an intake journal segment (a write cut short: that send had failed)",
    );
  });

  it("ends a thread that stops responding mid-delivery, starts another, and that one delivers its job and the next (built dist/)", async () => {
    const dataDir = tempDir("thread");
    // The sink holds its first request unanswered and has the thread stop running JavaScript
    // meanwhile, as a renderer's endless loop or a driver's call that never returns would: the
    // real thread, loaded by a module that spins forever, once, when the file `hang` appears.
    const { sink, settings, held } = await holdingSink(() => writeFileSync(join(dataDir, "hang"), ""));
    const script = standIn(`
      import { existsSync, unlinkSync } from "node:fs";
      import { workerData } from "node:worker_threads";
      const hang = workerData.dataDir + "/hang";
      setInterval(() => {
        if (!existsSync(hang)) return;
        unlinkSync(hang);
        for (;;) {}
      }, 10).unref();
      await import(${JSON.stringify(REAL_THREAD.href)});
    `);
    // Gauges every second: a thread silent for 6 s is taken for hung (30 s in serve). Long enough
    // that a thread starting on a busy host is not taken for hung; should one be all the same, it
    // is replaced like the hung one and its jobs sent again, which the checks below allow.
    const { logs, metrics, start } = harness(script, dataDir, settings, 1000);
    const thread = await start();
    const notify = notifier(dataDir, thread);
    notify(1);
    await until(() => held() !== undefined);
    // Journaled while the thread is hung: its wake goes unheard.
    notify(2);
    const hungLine = "the delivery thread stopped responding; ended it and starting it again";
    await until(() => logs.some((l) => l.msg === hungLine), 25_000);
    expect(logs.find((l) => l.msg === hungLine)?.fields).toMatchObject({ inMs: 1000 });
    expect(metrics.render()).toContain("hookgate_delivery_thread_up 0\n");
    expect(metrics.render()).toContain('hookgate_delivery_thread_restarts_total{reason="unresponsive"} 1\n');
    expect(thread.trouble()).toMatchObject({ delivery: "restarting" });
    expect(thread.trouble()?.error).toMatch(
      /^the delivery thread stopped responding \(nothing in \d+ ms\); started again in 1000 ms$/,
    );
    // The job it was delivering is sent again by the next thread (same webhook-id), and the one
    // journaled meanwhile is delivered too.
    await until(() => /hookgate_delivered_total\{sink="audit"\} [2-9]\n/.test(metrics.render()), 25_000);
    const ids = sink.received.map((r) => r.headers["webhook-id"]);
    expect(ids.filter((id) => id === "evt_1").length).toBeGreaterThanOrEqual(2);
    expect(ids).toContain("evt_2");
    expect(new Set(ids)).toEqual(new Set(["evt_1", "evt_2"]));
    expect(metrics.render()).toContain("hookgate_delivery_thread_up 1\n");
    await thread.stop();
    expect(new Set(logs.map((l) => l.msg))).toEqual(new Set([hungLine]));
  }, 60_000);

  /**
   * The real thread delivering ten jobs (five to each of two sinks, as many as it delivers at a
   * time) that the sink holds; then another process locks the queue file (a `sqlite3` shell's open
   * transaction) and every delivery ends at once, answered 503: ten writes in a row, each waiting
   * out the busy timeout (a heartbeat). Later requests are answered 204. `script` is the thread
   * run, the real one unless a test wraps it.
   */
  async function tenSettledOnALockedFile(heartbeatMs: number, stopMs?: number, script = REAL_THREAD) {
    const dataDir = tempDir("thread");
    const held: ServerResponse[] = [];
    let answering = false;
    const sink = await loopbackServer((_req, res) => {
      if (answering) res.writeHead(204).end();
      else held.push(res);
    });
    whenDone(() => sink.close());
    const retryScheduleSeconds = [1, 1, 1, 1, 1];
    const settings: DeliverySettings = {
      document: {
        sinks: {
          audit: { type: "webhook", url: `${sink.url}/a`, retryScheduleSeconds },
          audit2: { type: "webhook", url: `${sink.url}/b`, retryScheduleSeconds },
        },
        egress: { allowCidrs: ["127.0.0.1/32"] },
      },
      secrets: [],
    };
    const { logs, metrics, start } = harness(script, dataDir, settings, heartbeatMs, stopMs);
    const thread = await start();
    const notify = notifier(dataDir, thread);
    for (let n = 1; n <= 5; n++) {
      notify(n);
      notify(n, "audit2");
    }
    await until(() => held.length === 10);
    expect(held).toHaveLength(10);
    const lock = new Database(join(dataDir, "queue.sqlite"));
    whenDone(() => lock.close());
    lock.exec("BEGIN IMMEDIATE");
    answering = true;
    for (const res of held.splice(0)) res.writeHead(503).end();
    return { thread, notify, sink, lock, logs, metrics, dataDir };
  }

  it("keeps a real thread whose queue file another process holds locked, says it fails, and delivers once it is free (built dist/)", async () => {
    // Each of the thread's writes waits out the busy timeout. A batch of deliveries settled one
    // after another left no turn for the gauges' timer, the thread went silent past six
    // heartbeats, was ended as hung inside a SQLite call (which can abort the whole process), and
    // /healthz went failing, restarting, failing. Gauges every second: silent for 6 s, a thread
    // is taken for hung (30 s in serve). At 300 ms, a thread still loading its modules on a busy
    // host (it runs at a lower priority) was taken for hung before it delivered. With six beats of
    // silence allowed, a busy timeout of up to six beats would pass unseen below: the real thread,
    // wrapped, writes down each of its connections' busy timeouts, none of which may outlast a beat.
    const script = standIn(`
      import { appendFileSync } from "node:fs";
      import { createRequire } from "node:module";
      import { workerData } from "node:worker_threads";
      const Database = createRequire(${JSON.stringify(join(ROOT, "package.json"))})("better-sqlite3");
      const pragma = Database.prototype.pragma;
      const told = new WeakSet();
      Database.prototype.pragma = function (...args) {
        if (!told.has(this)) {
          told.add(this);
          appendFileSync(workerData.dataDir + "/busy-timeouts", pragma.call(this, "busy_timeout", { simple: true }) + "\\n");
        }
        return pragma.apply(this, args);
      };
      await import(${JSON.stringify(REAL_THREAD.href)});
    `);
    const { thread, notify, sink, lock, logs, metrics, dataDir } = await tenSettledOnALockedFile(
      1000,
      undefined,
      script,
    );
    const busyTimeouts = readFileSync(join(dataDir, "busy-timeouts"), "utf8")
      .split("\n")
      .filter(Boolean)
      .map(Number);
    expect(busyTimeouts.length).toBeGreaterThan(0);
    expect(busyTimeouts.filter((ms) => ms > 1000)).toEqual([]);
    await until(() => thread.trouble()?.delivery === "failing");
    expect(thread.trouble()).toMatchObject({ delivery: "failing" });
    // Held for a silence and a half more: a thread that waits on a lock is no hung thread.
    await new Promise((r) => setTimeout(r, 1.5 * 6 * 1000));
    expect(thread.trouble()).toMatchObject({ delivery: "failing" });
    lock.exec("COMMIT");
    await until(() => thread.trouble() === undefined);
    expect(thread.trouble()).toBeUndefined();
    // The same thread delivers what comes next. (The ten's retries were recorded once it was free.)
    notify(6);
    await until(() => sink.received.some((r) => r.headers["webhook-id"] === "evt_6"));
    expect(sink.received.map((r) => r.headers["webhook-id"])).toContain("evt_6");
    expect(metrics.render()).not.toContain('reason="unresponsive"');
    expect(logs.map((l) => l.msg)).not.toContain(
      "the delivery thread stopped responding; ended it and starting it again",
    );
    await thread.stop();
  }, 60_000);

  it("ends a real thread that does not stop in time between SQLite calls, not inside one waiting on a lock (built dist/)", async () => {
    // serve stops with deliveries in flight on a locked queue file: each one that ends is a write
    // that waits out the busy timeout. Ended inside such a wait, better-sqlite3 failed a V8 check
    // as it threw SQLITE_BUSY, which aborted the whole process (and this test's worker with it).
    // Busy waits of a second each; the stop ends the thread after a tenth of one.
    const { thread, sink, lock, logs } = await tenSettledOnALockedFile(1000, 100);
    await until(() => sink.received.length === 10);
    await thread.stop();
    expect(logs.map((l) => l.msg)).toContain("the delivery thread did not stop in time; ending it");
    lock.exec("COMMIT");
  }, 60_000);

  it("stops a real thread whose outcomes wait on a locked queue file without waiting out their leases, its jobs left for the next serve (built dist/)", async () => {
    // Each outcome waiting on the lock was tried again until its lease ended (60 s): the stop
    // took its whole 30 s and ended the thread.
    const { thread, sink, lock, logs, dataDir } = await tenSettledOnALockedFile(1000);
    await until(() => sink.received.length === 10);
    await until(() => thread.trouble()?.delivery === "failing");
    await thread.stop();
    expect(logs.map((l) => l.msg)).not.toContain("the delivery thread did not stop in time; ending it");
    lock.exec("COMMIT");
    // Nothing lost: the ten are leased still, and the next serve takes them back.
    const next = createSqliteQueue<DeliveryJob>({ path: join(dataDir, "queue.sqlite"), owner: "next" });
    whenDone(() => next.close());
    expect(next.recoverLeases()).toBe(10);
  }, 60_000);

  it("stops a real thread putting back a deleted queue file while its outcomes wait on a lock, without waiting out their leases (built dist/)", async () => {
    // The put-back stops the deliveries first, and a stop waits for it: the outcomes waiting on
    // the lock were tried again until their leases ended (60 s), told to give up only after it.
    const { thread, sink, lock, logs, dataDir } = await tenSettledOnALockedFile(1000);
    await until(() => sink.received.length === 10);
    await until(() => thread.trouble()?.delivery === "failing");
    const path = deleteQueueFile(dataDir);
    // The put-back has made its first copy, and stops the deliveries.
    await until(() => existsSync(`${path}.restoring`));
    await thread.stop();
    expect(logs.map((l) => l.msg)).not.toContain("the delivery thread did not stop in time; ending it");
    lock.exec("COMMIT");
    // Put back, the ten leased still: the next serve takes them back.
    const next = createSqliteQueue<DeliveryJob>({ path, owner: "next" });
    whenDone(() => next.close());
    expect(next.recoverLeases()).toBe(10);
  }, 90_000);

  it("lets the process exit after halt while its thread waits on a lock, without aborting (built dist/)", async () => {
    // A second signal while serve stops exits the process, which ends the delivery thread
    // wherever it is: inside a SQLite call waiting on a queue file another process held locked,
    // better-sqlite3 aborted the whole process (FATAL ERROR, SIGABRT, exit 134) instead of 130.
    const dataDir = tempDir("thread");
    const file = join(dataDir, "queue.sqlite");
    const lock = new Database(file);
    whenDone(() => lock.close());
    lock.exec("CREATE TABLE t (n INTEGER)");
    lock.exec("BEGIN EXCLUSIVE");
    // A thread that marks each call as the real one does and waits on the lock for seconds.
    const script = standIn(`
      import { workerData } from "node:worker_threads";
      import { createRequire } from "node:module";
      const Database = createRequire(${JSON.stringify(join(ROOT, "package.json"))})("better-sqlite3");
      const calls = new Int32Array(workerData.calls);
      const db = new Database(${JSON.stringify(file)}, { timeout: 3000 });
      parentPort.postMessage({ kind: "ready" });
      setTimeout(() => {
        while (Atomics.compareExchange(calls, 0, 0, 1) !== 2) {
          parentPort.postMessage({ kind: "report", lines: "in call\\n", counts: [] });
          try { db.exec("INSERT INTO t VALUES (1)"); } catch {}
          Atomics.store(calls, 0, Atomics.load(calls, 1) === 1 ? 2 : 0);
        }
      }, 0);
    `);
    const host = pathToFileURL(join(ROOT, "dist/entry/delivery-thread-host.js")).href;
    const main = join(tempDir("thread"), "main.mjs");
    writeFileSync(
      main,
      `import { startDeliveryThread } from ${JSON.stringify(host)};
      let thread;
      thread = await startDeliveryThread({
        dataDir: ${JSON.stringify(dataDir)},
        settings: { document: { sinks: undefined, egress: undefined }, secrets: [] },
        env: {},
        lines: { write(line) {
          // Well inside the thread's three-second wait on the lock.
          if (line.includes("in call")) setTimeout(() => { thread.halt(); process.exit(130); }, 200);
        } },
        metrics: { increment() {}, set() {} },
        logger: { log() {} },
        script: new URL(${JSON.stringify(script.href)}),
      });`,
    );
    const child = spawn(process.execPath, [main], { stdio: ["ignore", "ignore", "pipe"] });
    let stderr = "";
    child.stderr.on("data", (chunk) => {
      stderr += String(chunk);
    });
    const [code, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((resolve) =>
      child.once("exit", (c, s) => resolve([c, s])),
    );
    expect({ code, signal, stderr }).toEqual({ code: 130, signal: null, stderr: "" });
    lock.exec("ROLLBACK");
  }, 30_000);

  it("puts back a queue file deleted under the real thread readable by its user alone, in a data dir of a wider mode (built dist/)", async () => {
    // A data dir that existed with a wider mode (systemd's StateDirectory is 0755), its queue
    // file deleted by hand: the copy put back held the same notify events as the file it
    // replaces, and SQLite makes a new file 0644.
    const dataDir = tempDir("thread");
    chmodSync(dataDir, 0o755);
    const { lines, start } = harness(REAL_THREAD, dataDir, FIRST, 1000);
    const thread = await start();
    const path = join(dataDir, "queue.sqlite");
    expect(statSync(path).mode & 0o777).toBe(0o600);
    deleteQueueFile(dataDir);
    await until(() => lines.join("").includes("the queue file is back"), 20_000);
    expect(statSync(path).mode & 0o777).toBe(0o600);
    await thread.stop();
  }, 30_000);

  it("keeps the real thread's heartbeat while it puts back a deleted queue file behind a delivery in flight (built dist/)", async () => {
    // The put-back waits for the deliveries in flight, up to a sink's 15 s timeout, and copies the
    // whole file: longer than six heartbeats, and a thread silent meanwhile was ended as hung
    // mid-way, the file never put back, and the next one started on an empty queue.
    const dataDir = tempDir("thread");
    const { sink, settings, held } = await holdingSink();
    const { lines, logs, start } = harness(REAL_THREAD, dataDir, settings, 1000);
    const thread = await start();
    notifier(dataDir, thread)(1);
    await until(() => held() !== undefined);
    deleteQueueFile(dataDir);
    const hungLine = "the delivery thread stopped responding; ended it and starting it again";
    const back = () => lines.join("").includes("the queue file is back");
    await until(() => back() || logs.some((l) => l.msg === hungLine), 40_000);
    expect(logs.map((l) => l.msg)).not.toContain(hungLine);
    expect(back()).toBe(true);
    // The job it was delivering is in the file put back, and the next thread delivers it.
    await until(() => sink.received.length >= 2, 20_000);
    expect(sink.received.map((r) => r.headers["webhook-id"])).toEqual(["evt_1", "evt_1"]);
    await thread.stop();
  }, 90_000);

  it("goes on delivering when the real thread cannot copy a deleted queue file after its deliveries stopped, and puts it back once it can (built dist/)", async () => {
    // The second copy, made once the deliveries in flight end, failed (a full disk): the thread
    // went on with its consumer stopped and its poll cleared, delivering nothing until serve
    // stopped, while its heartbeat told the host all was well.
    const dataDir = tempDir("thread");
    const { sink, settings, held } = await holdingSink();
    const { lines, start } = harness(REAL_THREAD, dataDir, settings, 1000);
    const thread = await start();
    const notify = notifier(dataDir, thread);
    const logged = (msg: string) => lines.join("").includes(msg);
    notify(1);
    await until(() => held() !== undefined);
    const path = deleteQueueFile(dataDir);
    await until(() => logged("the queue file was deleted under serve; putting back a copy"), 20_000);
    // The first copy is made; a directory in its place makes the second fail.
    const copy = `${path}.restoring`;
    rmSync(copy);
    mkdirSync(copy);
    held()?.writeHead(204).end();
    await until(
      () => logged("could not put back the queue file deleted under serve; will try again"),
      20_000,
    );
    notify(2);
    await until(() => sink.received.length >= 2, 20_000);
    expect(sink.received.map((r) => r.headers["webhook-id"])).toEqual(["evt_1", "evt_2"]);
    expect(logged("the queue file is back")).toBe(false);
    // Once the copy can be written, the next heartbeat puts the file back.
    rmSync(copy, { recursive: true });
    await until(() => logged("the queue file is back"), 20_000);
    expect(logged("the queue file is back")).toBe(true);
    expect(logged("the queue file deleted under serve can be written again")).toBe(true);
    await thread.stop();
  }, 90_000);

  it("ends the real thread when the copy of a deleted queue file cannot be renamed into place, and the next one puts it there (built dist/)", async () => {
    // The rename failed after the queue was closed: the thread went on with no queue, delivering
    // nothing until serve stopped, and the copy with its jobs was left beside an empty file.
    const dataDir = tempDir("thread");
    const { sink, settings, held } = await holdingSink();
    const { lines, logs, start } = harness(REAL_THREAD, dataDir, settings, 1000);
    const thread = await start();
    notifier(dataDir, thread)(1);
    await until(() => held() !== undefined);
    const path = deleteQueueFile(dataDir);
    const logged = (msg: string) => lines.join("").includes(msg);
    await until(() => logged("the queue file was deleted under serve; putting back a copy"), 20_000);
    // A directory where the queue file goes: the rename fails, and the next thread cannot open it.
    mkdirSync(path);
    held()?.writeHead(500).end();
    const hostSaid = (msg: string) => logs.some((l) => l.msg === msg);
    await until(() => hostSaid("the delivery thread could not start"), 20_000);
    // Why, and what to do: the directory in its way, not SQLite's "unable to open database file".
    const couldNot = logs.find((l) => l.msg === "the delivery thread could not start");
    expect(couldNot?.fields?.error).toContain(`${path} is not a file`);
    expect(couldNot?.fields?.error).toContain(`remove what is at ${path}`);
    // The copy is beside its path, with its jobs: neither a failure tried again at the next
    // heartbeat (the thread ended) nor jobs lost at a stop, as the line and /healthz said.
    expect(logged("could not move the copy of the queue file deleted under serve into place")).toBe(true);
    expect(logged("will try again")).toBe(false);
    expect(logged("lost")).toBe(false);
    expect(hostSaid("the delivery thread stopped; starting it again")).toBe(true);
    rmSync(path, { recursive: true });
    await until(() => logged("put back the copy of a queue file deleted under serve"), 20_000);
    expect(logged("put back the copy of a queue file deleted under serve")).toBe(true);
    // The job whose attempt failed is in the copy put back, and the next thread retries it.
    await until(() => sink.received.length >= 2, 20_000);
    expect(sink.received.map((r) => r.headers["webhook-id"])).toEqual(["evt_1", "evt_1"]);
    await thread.stop();
  }, 90_000);

  it("removes, as the real thread starts, the part of a copy a killed serve was writing, and moves only a whole copy into place (built dist/)", async () => {
    // serve killed while it wrote the copy of a deleted queue file: that part of a file was at
    // queue.sqlite.restoring, and the next start moved it into place as the queue put back.
    const dataDir = tempDir("thread");
    const path = join(dataDir, "queue.sqlite");
    const copy = `${path}.restoring`;
    const partial = partialCopy(copy);
    writeFileSync(partial, "SQLite format 3\0 cut short", { mode: 0o600 });
    const first = harness(REAL_THREAD, dataDir);
    await (await first.start()).stop();
    expect(first.logs).toEqual([]);
    expect(first.lines.join("")).toContain(
      "removed the unfinished copy of a queue file deleted under serve, left by a serve that ended while writing it; the queue starts empty",
    );
    expect(statSync(partial, { throwIfNoEntry: false })).toBeUndefined();
    expect(statSync(copy, { throwIfNoEntry: false })).toBeUndefined();
    const fresh = createSqliteQueue({ path });
    try {
      expect(fresh.stats()).toMatchObject({ jobs: 0, deadLetters: 0 });
    } finally {
      await fresh.close();
    }
    // A whole copy, with a job, and the part of a later one that was to replace it.
    deleteQueueFile(dataDir);
    const source = createSqliteQueue({ path: join(tempDir("source"), "queue.sqlite") });
    try {
      await source.send([{ id: "kept", body: "not a job" }]);
      await source.copyTo(copy);
    } finally {
      await source.close();
    }
    writeFileSync(partial, "SQLite format 3\0 cut short", { mode: 0o600 });
    const second = harness(REAL_THREAD, dataDir);
    await (await second.start()).stop();
    const said = second.lines.join("");
    expect(said).toContain("the queue goes on from the file at its path or a whole copy");
    expect(said).toContain("put back the copy of a queue file deleted under serve, left beside its path");
    expect(statSync(partial, { throwIfNoEntry: false })).toBeUndefined();
    const moved = createSqliteQueue({ path });
    try {
      expect(moved.stats().jobs + moved.stats().deadLetters).toBe(1);
    } finally {
      await moved.close();
    }
  });

  it("puts back at a stop a queue file deleted since the real thread's last heartbeat (built dist/)", async () => {
    // The data dir removed, then serve stopped within the 5 s to the next check: the dead letter
    // went with the deleted file, and the stop said nothing.
    const dataDir = tempDir("thread");
    mkdirSync(join(dataDir, JOURNAL_DIR));
    writeFileSync(join(dataDir, JOURNAL_DIR, "intake-000000000001.jsonl"), "garbage\n");
    const { lines, logs, metrics, start } = harness(REAL_THREAD, dataDir);
    const thread = await start();
    await until(() => lines.join("").includes("delivery dead-lettered"));
    await until(() => metrics.render().includes("hookgate_queue_dead_letters 1\n"));
    const path = deleteQueueFile(dataDir);
    await thread.stop();
    expect(logs).toEqual([]);
    expect(lines.join("")).toContain("the queue file was deleted under serve; putting back a copy");
    expect(statSync(path).mode & 0o777).toBe(0o600);
    const queue = createSqliteQueue({ path });
    try {
      expect((await queue.listDead()).map((d) => d.id)).toEqual(["intake-1-0"]);
    } finally {
      await queue.close();
    }
  });

  it.skipIf(process.platform !== "linux").each([
    { after: "a stop", deleted: false },
    { after: "putting back a deleted queue file", deleted: true },
  ])(
    "ignores a wake that comes after the real thread's last drain of $after (built dist/)",
    async ({ deleted }) => {
      // The answering thread wakes the delivery thread for each event it journals until the
      // thread's port closes, after the journal and the queue closed. The real thread, loaded by
      // a module that hands it a wake just before its port closes and counts the journal segments
      // this process has open before and after (/proc/self/fd): a drain opens its segment again.
      const dataDir = tempDir("thread");
      mkdirSync(join(dataDir, JOURNAL_DIR));
      writeFileSync(join(dataDir, JOURNAL_DIR, "intake-000000000001.jsonl"), "");
      const script = standIn(`
        import { readdirSync, readlinkSync } from "node:fs";
        import { workerData } from "node:worker_threads";
        const segments = () =>
          readdirSync("/proc/self/fd").filter((fd) => {
            try {
              const target = readlinkSync("/proc/self/fd/" + fd);
              return target.startsWith(workerData.dataDir) && target.includes(".jsonl");
            } catch {
              return false;
            }
          }).length;
        let handle;
        const on = parentPort.on.bind(parentPort);
        parentPort.on = (event, listener) => {
          if (event === "message") handle = listener;
          return on(event, listener);
        };
        const close = parentPort.close.bind(parentPort);
        parentPort.close = () => {
          const before = segments();
          handle({ kind: "wake" });
          const opened = segments() - before;
          parentPort.postMessage({ kind: "report", lines: JSON.stringify({ msg: "late wake", opened }) + "\\n", counts: [] });
          close();
        };
        await import(${JSON.stringify(REAL_THREAD.href)});
      `);
      const { lines, logs, metrics, start } = harness(script, dataDir, FIRST, 1000);
      const thread = await start();
      const late = () =>
        lines
          .join("")
          .split("\n")
          .filter((l) => l.startsWith('{"msg":"late wake"'))
          .map((l) => (JSON.parse(l) as { opened: number }).opened);
      if (deleted) {
        // Put back at the next heartbeat, after which the thread ends and another starts.
        deleteQueueFile(dataDir);
        await until(() => late().length === 1);
        expect(lines.join("")).toContain("the queue file is back");
        await until(() => logs.length === 1);
        expect(logs.map((l) => l.msg)).toEqual(["the delivery thread stopped; starting it again"]);
        // The next thread, stopped below, delivers.
        await until(() => metrics.render().includes("hookgate_delivery_thread_up 1\n"));
        expect(metrics.render()).toContain("hookgate_delivery_thread_up 1\n");
      }
      await thread.stop();
      expect(late()).toEqual(deleted ? [0, 0] : [0]);
    },
    60_000,
  );

  it("fails the start when the thread stops responding before it is ready", async () => {
    const script = standIn("for (;;) {}");
    const { logs, start } = harness(script, "unused", FIRST, 50);
    await expect(start()).rejects.toThrow(
      "the delivery thread stopped responding (nothing in 300 ms) before it was ready",
    );
    await new Promise((r) => setTimeout(r, 1200));
    expect(logs).toEqual([]);
  });

  it("says nothing more of a thread it gave up before it was ready, when that one then says it could not start", async () => {
    // As the real thread stuck in a SQLite call before it was ready: the call's end finds it is
    // being ended, and its start fails with that, after the start was failed for its silence.
    const script = standIn(`
      import { workerData } from "node:worker_threads";
      const calls = new Int32Array(workerData.calls);
      Atomics.store(calls, 0, ${IN_CALL});
      while (Atomics.load(calls, 1) !== 1) {}
      parentPort.postMessage({ kind: "failed", error: "the delivery thread is being ended" });
      parentPort.postMessage({ kind: "report", lines: "said\\n", counts: [] });
      Atomics.store(calls, 0, ${ENDING});
    `);
    // Silent for 6 s, not the 300 ms of a heartbeat of 50: on a busy host a thread not yet
    // running after 300 ms was ended before it entered its call, and said nothing at all.
    const { lines, logs, start } = harness(script, "unused", FIRST, 1000);
    await expect(start()).rejects.toThrow("before it was ready");
    await until(() => lines.length > 0);
    expect(lines).toEqual(["said\n"]);
    expect(logs).toEqual([]);
  });

  it("keeps hookgate_delivery_thread_up at 0 when a thread it gave up sends its gauges as its call ends", async () => {
    // As the real thread stuck in a SQLite call past six heartbeats: the call's end finds it is
    // being ended, its next heartbeat's reads fail, and it posts its gauges (NaN) all the same
    // before it is ended. They set the thread up again, and the gauges NaN, while none ran
    // until the next one started. The thread started again only beats: it never is up.
    const dataDir = tempDir("thread");
    const script = standIn(`
      import { existsSync, writeFileSync } from "node:fs";
      import { workerData } from "node:worker_threads";
      const again = workerData.dataDir + "/started-once";
      parentPort.on("message", (message) => {
        if (message.kind === "stop") process.exit(0);
      });
      if (existsSync(again)) setInterval(() => parentPort.postMessage({ kind: "beat" }), 10);
      else {
        writeFileSync(again, "");
        parentPort.postMessage({ kind: "ready" });
        parentPort.postMessage({ kind: "gauges", values: { hookgate_queue_jobs: 3 } });
        setTimeout(() => {
          const calls = new Int32Array(workerData.calls);
          Atomics.store(calls, 0, ${IN_CALL});
          while (Atomics.load(calls, 1) !== 1) {}
          Atomics.store(calls, 0, ${ENDING});
          parentPort.postMessage({ kind: "trouble", trouble: { delivery: "failing", error: "being ended" } });
          parentPort.postMessage({ kind: "gauges", values: { hookgate_queue_jobs: NaN } });
          parentPort.postMessage({ kind: "report", lines: "said\\n", counts: [] });
        }, 0);
      }
    `);
    // Silent for 6 s, not the 300 ms of a heartbeat of 50: a thread started on a busy host is
    // not given up before it has said it is ready.
    const { lines, metrics, start } = harness(script, dataDir, FIRST, 1000);
    const thread = await start();
    await until(() => lines.length > 0);
    expect(lines).toEqual(["said\n"]);
    expect(metrics.render()).toContain("hookgate_delivery_thread_up 0\n");
    expect(metrics.render()).toContain("hookgate_queue_jobs 3\n");
    expect(thread.trouble()).toMatchObject({ delivery: "restarting" });
    await thread.stop();
  });
});

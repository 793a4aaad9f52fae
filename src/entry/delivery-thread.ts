/**
 * The delivery thread of `serve` (a worker thread, started by node.ts): it owns the SQLite queue,
 * takes the jobs the answering thread journals (adapters/queue/journal.ts) into it, and runs the
 * consumer, so leases, acks, rendering, signing and the sinks' round trips never share an event
 * loop with decisions, and at a lower CPU priority than the thread that answers. Its log lines
 * and counter increments go to the answering thread every 50 ms at most and when it exits, even
 * on an uncaught error; that thread writes and counts them with its own. Its queue and journal
 * gauges go every 5 s: the heartbeat by which that thread tells when this one stopped responding.
 * It gets the policy's delivery settings (sinks, egress section, secrets), never its rules.
 */
import { readlinkSync, renameSync, rmSync, statSync } from "node:fs";
import { setPriority } from "node:os";
import { join } from "node:path";
import { parentPort, workerData } from "node:worker_threads";
import { createJsonLogger } from "../adapters/log/json-lines.js";
import { openJournalReader } from "../adapters/queue/journal.js";
import { createSqliteQueue, partialCopy } from "../adapters/queue/sqlite.js";
import { sqliteFix } from "../adapters/sqlite-fix.js";
import { reportDeadLetter } from "../app/dead-letter.js";
import type { DeliveryJob } from "../core/delivery.js";
import { errorMessage } from "../core/errors.js";
import type { Metrics } from "../core/ports.js";
import { type ToldFailure, toldFailure } from "../core/recurring-failure.js";
import { envReaderOf } from "../core/secret-ref.js";
import type { DeliveryTrouble } from "../http/app.js";
import {
  type DeliverySettings,
  type DeliveryThreadData,
  ENDING,
  type FromDeliveryThread,
  IN_CALL,
  JOURNAL_DIR,
  type ToDeliveryThread,
} from "./delivery-thread-host.js";
import { makeDirectory } from "./make-directory.js";
import { openNamed } from "./open-named.js";
import { putBack } from "./put-back.js";

const monotonic = () => performance.now();

/**
 * What to do about the queue file when it fails while `serve` runs, or undefined when nothing is
 * known to help. The jobs answered meanwhile wait in the intake journal.
 */
const queueFix = (error: string, path: string): string | undefined =>
  sqliteFix(error, {
    running: true,
    file: path,
    movedAside:
      " and takes in the intake journal from its start: the notify events answered meanwhile wait there and are delivered then (some delivered already may be sent again, with the same webhook-id); the retries and dead letters the damaged file held are lost",
    meanwhile: "what the intake journal holds meanwhile is taken in then",
  });

/** How often the journal is read when no wake comes (a safety net: each turn that appends sends one). */
const POLL_MS = 1000;

if (!parentPort) throw new Error("delivery-thread.ts runs as a worker thread of `hookgate serve`");
const port = parentPort;
const data = workerData as DeliveryThreadData;
const post = (message: FromDeliveryThread) => port.postMessage(message);
/**
 * A heartbeat before each queue call, at most five a heartbeatMs: calls made one after another
 * in one turn (a batch of deliveries settled), each waiting out the busy timeout while another
 * process holds the queue file locked (a `sqlite3` shell's open transaction), left the gauges'
 * timer no turn; silent past six heartbeats, the thread was ended as hung inside a SQLite call,
 * which aborts the whole process (better-sqlite3 cannot be terminated mid-call).
 */
let beatAt = Number.NEGATIVE_INFINITY;
const beat = () => {
  const now = performance.now();
  if (now - beatAt < data.heartbeatMs / 5) return;
  beatAt = now;
  post({ kind: "beat" });
};
/**
 * Marks this thread inside a SQLite call, where the host must not end it (delivery-thread-host.ts
 * `endBetweenCalls`); once the host would end it, the call in progress is the last one.
 */
const calls = new Int32Array(data.calls);
const beforeCall = () => {
  beat();
  if (Atomics.compareExchange(calls, 0, 0, IN_CALL) === ENDING)
    throw new Error("the delivery thread is being ended");
};
const afterCall = () => {
  Atomics.store(calls, 0, Atomics.load(calls, 1) === 1 ? ENDING : 0);
};

let lines = "";
let counts: [string, Record<string, string>][] = [];
let timer: NodeJS.Timeout | undefined;
const report = () => {
  clearTimeout(timer);
  timer = undefined;
  if (lines === "" && counts.length === 0) return;
  post({ kind: "report", lines, counts });
  lines = "";
  counts = [];
};
/**
 * Log lines and counts go to the answering thread at most this often: each message costs that
 * thread a turn's work beside the decisions, and per turn here it was several per event.
 */
const REPORT_MS = 50;
const later = () => {
  timer ??= setTimeout(report, REPORT_MS);
};
// A thread that dies on an error nothing here catches still hands over what it logged and
// counted last, often the reason: Node runs `exit` listeners of a worker thread on the way out.
process.on("exit", report);
const logger = createJsonLogger({
  write(line) {
    lines += line;
    later();
  },
});
const metrics: Metrics = {
  increment(name, labels = {}) {
    counts.push([name, { ...labels }]);
    later();
  },
};

/**
 * Deliveries are asynchronous and decisions are on every tool call's path: when the two threads
 * want the same core, this one yields (nice 10 on Linux, where a thread has its own priority;
 * elsewhere it keeps the process's). Idle cores still run it at full speed.
 */
const NICE = 10;
function lowerPriority(): void {
  try {
    const tid = Number(readlinkSync("/proc/thread-self").split("/").pop());
    // setpriority on a thread id changes that thread only (Linux); never the whole process.
    if (Number.isInteger(tid) && tid !== process.pid) setPriority(tid, NICE);
  } catch {
    // No /proc (macOS, Windows): the thread keeps the process's priority.
  }
}

/**
 * Puts at `path` the copy a put-back of a deleted queue file left beside it (its rename failed,
 * or the process ended between the close and the rename): opened as missing, the queue was a new,
 * empty file, and the jobs and dead letters in the copy were overwritten by the next put-back.
 * Something else at `path` (a directory) fails the start, saying to remove it.
 */
function putBackCopy(path: string, copy: string): void {
  const there = statSync(path, { throwIfNoEntry: false });
  if (there?.isFile() === true) return;
  if (statSync(copy, { throwIfNoEntry: false })?.isFile() !== true) return;
  // What kept the rename from putting the copy there: SQLite said only "unable to open".
  if (there !== undefined)
    throw new Error(
      `${path} is not a file, and the copy of the queue file deleted under serve, with its jobs and dead letters, waits beside it at ${copy}: remove what is at ${path}, and the copy is moved there as the delivery thread starts again`,
    );
  try {
    renameSync(copy, path);
  } catch (e) {
    throw new Error(
      `cannot move ${copy} to ${path}, the queue file deleted under serve and copied back with its jobs and dead letters (${errorMessage(e)}): move it there by hand`,
    );
  }
  logger.log("warn", "put back the copy of a queue file deleted under serve, left beside its path", {
    path,
    copy,
  });
}

/**
 * Removes what a put-back's copy left when the process was killed while writing it (SIGKILL, the
 * OOM killer, a power loss): part of a copy, never moved into place (`putBackCopy` moves only a
 * whole one, which `copyTo` renames to `copy` once written).
 */
function dropUnfinishedCopy(path: string, copy: string): void {
  const partial = partialCopy(copy);
  if (statSync(partial, { throwIfNoEntry: false })?.isFile() !== true) return;
  try {
    rmSync(partial, { force: true });
    rmSync(`${partial}-journal`, { force: true });
  } catch {
    // A data dir read-only: left there, and never used.
  }
  const whole = (file: string) => statSync(file, { throwIfNoEntry: false })?.isFile() === true;
  logger.log(
    "warn",
    `removed the unfinished copy of a queue file deleted under serve, left by a serve that ended while writing it; ${whole(path) || whole(copy) ? "the queue goes on from the file at its path or a whole copy" : "the queue starts empty: the jobs and dead letters of the deleted file are lost"}`,
    { path, partial },
  );
}

async function start(): Promise<void> {
  lowerPriority();
  // First what can stop `serve` from starting, the queue file; then `serve` listens while the
  // rest of this thread loads (undici, the egress guard and the deliverer, a few hundred ms of
  // imports in a new isolate). Messages wait in the port until the handler below is attached.
  const queuePath = join(data.dataDir, "queue.sqlite");
  const copy = `${queuePath}.restoring`;
  dropUnfinishedCopy(queuePath, copy);
  putBackCopy(queuePath, copy);
  /** Settles waiting on a lock, told once they start and once a minute (`onSettleWait`). */
  let settleWait: ((error?: unknown) => void) | undefined;
  const { queue, recovered, resumeAt } = openNamed(
    queuePath,
    (path) => {
      const opened = createSqliteQueue<DeliveryJob>({
        path,
        // No one call waits longer than a heartbeat (5 s in serve), so that with the beat before
        // each one a thread waiting on a lock is never silent for six.
        busyTimeoutMs: data.heartbeatMs,
        beforeCall,
        afterCall,
        // A job the queue dead-letters itself (a body that is not JSON) is told as the consumer's are.
        onDeadLettered: (letter) =>
          reportDeadLetter(
            { logger, metrics },
            { job: letter.id, sink: letter.group ?? "unknown", attempts: letter.attempts },
            letter.reason,
          ),
        onSettleWait: (error) => settleWait?.(error),
        // Delays and leases are wall-clock times: a step back would have held them by the step.
        onClockStep: (step) =>
          logger.log(
            "warn",
            "the wall clock went back; the queue's delays and leases were moved back with it",
            {
              seconds: Math.round(step.byMs / 1000),
              jobs: step.jobs,
            },
          ),
      });
      // Read before `ready`: a queue file damaged past its first pages fails here, not in its open.
      return { queue: opened, recovered: opened.recoverLeases(), resumeAt: opened.intakePosition() };
    },
    "the SQLite queue",
  );
  if (recovered > 0) logger.log("info", "took back jobs leased by the previous process", { jobs: recovered });
  // The consumer is poked as the rows are handed over, before their commit: its receive joins the
  // same commit, which leases them (sqlite.ts commits a turn's sends before its leases).
  let poke = () => {};
  const journal = openJournalReader(join(data.dataDir, JOURNAL_DIR), {
    intake: (rows, position) => {
      const committed = queue.intake(rows, position);
      if (rows.length > 0) poke();
      return committed;
    },
    position: resumeAt,
    onTorn: (segment, bytes) =>
      logger.log(
        "warn",
        "skipped the torn end of an intake journal segment (a write cut short: that send had failed)",
        {
          segment,
          bytes,
        },
      ),
    onReposition: (recorded, start, why) =>
      logger.log(
        "warn",
        "the intake journal is not resumed at its recorded position; reading it from the start of its first segment",
        { recorded, start, why },
      ),
    onGone: (segment) =>
      logger.log(
        "error",
        "an intake journal segment was deleted before it was read; the notify events in it are lost",
        {
          segment,
          fix: `find what deletes files under ${join(data.dataDir, JOURNAL_DIR)} while serve runs`,
        },
      ),
    onUnreadable: ({ segment, offset, bytes, id }) =>
      logger.log(
        "error",
        "an intake journal line is not jobs; it is taken in as one job, dead-lettered as its text",
        { segment, offset, bytes, job: id },
      ),
  });
  post({ kind: "ready" });

  const [
    { createUndiciEgress },
    { nodeHmacSha256 },
    { receiveFailureLog, startConsumer },
    { createDeliverer },
    { reportRefusals },
    { compileEgressPolicy },
  ] = await Promise.all([
    import("../adapters/egress/undici.js"),
    import("../adapters/hash/node-crypto.js"),
    import("../app/consumer.js"),
    import("../app/deliver.js"),
    import("../core/egress/report.js"),
    import("../core/egress/policy.js"),
  ]);
  const env = envReaderOf(process.env);
  // The answering thread validated these before it passed them on (they are a `DeliveryPolicy`
  // as they come); the egress section compiles here to the same guard.
  const load = (settings: DeliverySettings) => ({
    ...settings,
    egress: compileEgressPolicy(settings.document.egress).policy,
  });
  // Messages are handled in the order they were posted: a reload is in place before the wake
  // of any event answered after it, so that event's jobs are delivered under it.
  let current = load(data.settings);
  const egress = createUndiciEgress({
    policy: () => current.egress,
    onRefusal: reportRefusals(logger, metrics),
  });
  const deliverer = createDeliverer({
    policy: () => current,
    egress: egress.send,
    env,
    clock: { now: Date.now, monotonic: () => performance.now() },
    random: Math.random,
    hmac: nodeHmacSha256,
  });
  // What keeps the queue file from being used, by what found it (the journal's intake, the
  // consumer's receive, the queue's gauges): the answering thread's /healthz says the first, as
  // it changes.
  const troubles = new Map<string, DeliveryTrouble>();
  let toldTrouble = "null";
  const setTrouble = (source: string, trouble: DeliveryTrouble | undefined) => {
    if (trouble === undefined) troubles.delete(source);
    else troubles.set(source, trouble);
    const first = troubles.values().next().value;
    const text = JSON.stringify(first ?? null);
    if (text === toldTrouble) return;
    toldTrouble = text;
    post({ kind: "trouble", trouble: first });
  };
  /** A queue file's failure told with what to do about it, where that is known. */
  const failedWithFix = (failures: ToldFailure, e: unknown, source?: string) => {
    const error = errorMessage(e);
    const fix = queueFix(error, queuePath);
    failures.failed(error, fix === undefined ? undefined : { fix });
    if (source !== undefined) setTrouble(source, { delivery: "failing", error, fix });
  };

  // A queue file that cannot be written (locked, on a full disk) fails every receive while its
  // gauges still read and, with no new event, the journal has nothing to take in: the receive
  // alone finds it, and the jobs due wait.
  const receiveLog = receiveFailureLog(logger, monotonic);
  const receiveFailures: ToldFailure = {
    failed: (error) => failedWithFix(receiveLog, error, "receive"),
    worked: () => {
      receiveLog.worked();
      if (troubles.has("receive")) setTrouble("receive", undefined);
    },
  };
  const settleLog = toldFailure(
    logger,
    "error",
    "could not record the outcome of a delivery; trying again until its lease ends",
    "the outcomes of deliveries are recorded again",
    monotonic,
  );
  settleWait = (error) => {
    if (error === undefined) {
      settleLog.worked();
      setTrouble("settle", undefined);
    } else failedWithFix(settleLog, error, "settle");
  };
  const deliver = () => {
    const started = startConsumer({ queue, deliverer, logger, metrics, monotonic, receiveFailures });
    poke = started.poke;
    return started;
  };
  /** `serve` listens (delivery-thread-host.ts `deliver`): the thread delivers; before, it does not. */
  let delivering = data.delivering;
  let consumer = delivering ? deliver() : undefined;

  // A queue file that fails every read (damaged, locked, on a full disk) fails every drain, each
  // second: told when it starts, with what to do, then once a minute (every failure is counted).
  const intakeFailures = toldFailure(
    logger,
    "error",
    "could not take journaled jobs into the queue; will try again",
    "journaled jobs are taken into the queue again",
    monotonic,
  );
  const drainAll = () =>
    journal.drain().then(
      () => {
        intakeFailures.worked();
        setTrouble("intake", undefined);
      },
      (e) => {
        metrics.increment("hookgate_intake_failed_total");
        failedWithFix(intakeFailures, e, "intake");
      },
    );
  /**
   * Set as a stop or a restore begins its last drain: the queue is copied or closed after it, and
   * the answering thread goes on waking this one (each event it journals) until its port closes.
   * A drain started by such a wake ran against a closed journal and queue (a false intake error,
   * a segment opened again and never closed), or took lines into the queue file being replaced
   * after its copy was made, and could delete their segment. Set before that drain, not after
   * it: a wake during it queues one more drain (journal.ts `drain`), which would still be running
   * as they close. Nothing is lost: only the drain that took a segment in deletes it, so what is
   * journaled meanwhile waits in the journal for the next thread or serve.
   */
  let closing = false;
  const drain = () => (closing ? Promise.resolve() : drainAll());
  /** The last drain of a stop or a restore; every drain after it does nothing. */
  const lastDrain = () => {
    closing = true;
    // Shares, and waits for, a drain still running and the one a wake queued behind it.
    return drainAll();
  };
  let poll = setInterval(drain, POLL_MS);
  // Posted even when a read fails, its gauges NaN rather than their last values: the message
  // itself tells the answering thread that this thread is up (`hookgate_delivery_thread_up`).
  const gaugeFailures = (what: string) =>
    toldFailure(
      logger,
      "warn",
      `could not read the ${what} for /metrics`,
      `the ${what} for /metrics can be read again`,
      monotonic,
    );
  const queueGaugeFailures = gaugeFailures("queue's gauges");
  const journalGaugeFailures = gaugeFailures("intake journal's backlog");
  const safely = (
    failures: ToldFailure,
    read: () => Record<string, number>,
    names: readonly string[],
    source?: string,
  ) => {
    try {
      const values = read();
      failures.worked();
      if (source !== undefined) setTrouble(source, undefined);
      return values;
    } catch (e) {
      // Read every 5 s, with traffic or without: where a damaged queue file is told first.
      failedWithFix(failures, e, source);
      return Object.fromEntries(names.map((name) => [name, Number.NaN]));
    }
  };
  const gauges = () => {
    const queueGauges = safely(
      queueGaugeFailures,
      () => {
        const stats = queue.stats();
        return {
          hookgate_queue_jobs: stats.jobs,
          hookgate_queue_dead_letters: stats.deadLetters,
          hookgate_queue_oldest_due_seconds:
            stats.oldestDueAt === undefined ? 0 : Math.max(0, (Date.now() - stats.oldestDueAt) / 1000),
        };
      },
      ["hookgate_queue_jobs", "hookgate_queue_dead_letters", "hookgate_queue_oldest_due_seconds"],
      "gauges",
    );
    const journalGauges = safely(
      journalGaugeFailures,
      () => ({ hookgate_intake_backlog_bytes: journal.backlogBytes() }),
      ["hookgate_intake_backlog_bytes"],
    );
    post({ kind: "gauges", values: { ...queueGauges, ...journalGauges } });
    checkQueueFile();
  };

  // The queue file deleted under the running thread (its data dir removed by hand, a cleanup
  // job): SQLite goes on in the deleted file, so every job and dead letter in it was lost at the
  // next stop, and nothing said so. A copy of it is put back at its path and this thread ends:
  // the next one (delivery-thread-host.ts) opens the copy, and the journal resumes where it was.
  let restoring: Promise<void> | undefined;
  /** A put-back closed the journal and the queue: the thread ends, done or not. */
  let closed = false;
  /** The thread ended after a put-back: a stop has nothing left to do. */
  let ended = false;
  const end = async () => {
    await egress.close();
    ended = true;
    report();
    port.close();
  };
  const restoreFailures = toldFailure(
    logger,
    "error",
    "could not put back the queue file deleted under serve; will try again",
    "the queue file deleted under serve can be written again",
    monotonic,
  );
  const queueFileGone = (): boolean => {
    try {
      return statSync(queuePath, { throwIfNoEntry: false }) === undefined;
    } catch {
      return true; // ENOTDIR: the data dir is a file now
    }
  };
  /** Copies the open queue beside its path, to be renamed to it once closed, and says so. */
  const copyBack = async () => {
    makeDirectory(data.dataDir, 0o700);
    await copyQueue();
    const { jobs, deadLetters } = queue.stats();
    logger.log(
      "error",
      "the queue file was deleted under serve; putting back a copy of the one it has open",
      {
        path: queuePath,
        jobs,
        deadLetters,
      },
    );
  };
  /**
   * A copy that failed (it left no part of itself at `copy`) removes the earlier one it was to
   * replace: the thread goes on from the file it has open, and a thread that starts where the
   * queue file is missing would move that older copy into place (`putBackCopy`).
   */
  const copyQueue = () =>
    queue.copyTo(copy).catch((e: unknown) => {
      try {
        rmSync(copy, { force: true });
      } catch {
        // Not a file (a directory in its way): no copy to mistake for a whole one.
      }
      throw e;
    });
  /** What to do about a copy that failed, `then` said after it. */
  const copyFix = (error: string, then: string) =>
    // A damaged file moved aside while serve ran cannot be copied: the fix is a damaged file's.
    queueFix(error, queuePath) ?? `make ${data.dataDir} writable again${then}`;
  const restore = async () => {
    // A first copy while deliveries go on: a data dir that cannot be written stops nothing.
    await copyBack();
    // The heartbeat goes on until the copy is made: the deliveries in flight (up to a sink's
    // timeout) and the copy of a large file take longer than the host waits for a silent thread,
    // which it ended as hung mid-way, the file never put back.
    clearInterval(poll);
    await lastDrain();
    await consumer?.stop();
    consumer = undefined;
    try {
      await copyQueue();
    } catch (e) {
      // Nothing is closed yet: the thread goes on as it was (a consumer again, the poll, wakes
      // that drain), and the next heartbeat tries again. Left stopped, it delivered nothing until
      // serve stopped, and its heartbeat kept the host from noticing.
      if (delivering) consumer = deliver();
      poll = setInterval(drain, POLL_MS);
      closing = false;
      throw e;
    }
    clearInterval(gaugeTimer);
    // From here a failure (the rename: the data dir removed again, or read-only) ends the thread:
    // its journal and queue are closed. The next one puts the copy in place as it starts.
    closed = true;
    journal.close();
    await queue.close();
    renameSync(copy, queuePath);
    // After tries that failed: said once that the fix worked.
    restoreFailures.worked({ path: queuePath });
    logger.log(
      "info",
      "the queue file is back, with its jobs and dead letters; the delivery thread starts again on it",
      {
        path: queuePath,
      },
    );
  };
  function checkQueueFile(): void {
    if (restoring) return;
    if (!queueFileGone()) {
      setTrouble("restore", undefined);
      return;
    }
    // Its queue closed, done or not, the thread ends and the host starts another, which moves a
    // copy the rename left into place as it starts: not a failure to try again, nor jobs lost at a stop.
    restoring = putBack({ restore, closed: () => closed, notMoved, failed, end });
  }
  /** A put-back that failed before it closed the queue: told, and tried again at the next heartbeat. */
  function failed(e: unknown): void {
    const error = errorMessage(e);
    const fix = copyFix(error, "; serve puts the file back at its next try");
    restoreFailures.failed(error, {
      path: queuePath,
      problem:
        "the jobs and dead letters in the file serve has open are not at its path when serve starts again",
      fix,
    });
    // Deliveries go on from the deleted file, but a stop loses what it holds: /healthz says so.
    setTrouble("restore", {
      delivery: "failing",
      error: `the queue file ${queuePath} was deleted under serve and cannot be put back (${error}): the jobs and dead letters it holds are lost when serve stops`,
      fix,
    });
    // The thread goes on (restore resumed whatever it had stopped) and tries again.
    restoring = undefined;
  }
  // Said at a stop: the jobs still waiting (a sink down, retries hours away) were not in the log,
  // and a stop looked like the end of every notification answered.
  const leftForNextStart = () => {
    let jobs: number;
    try {
      jobs = queue.stats().jobs;
    } catch {
      return; // a queue file that cannot be read: told already, with what to do
    }
    if (jobs > 0)
      logger.log("info", "delivery jobs left in the queue; the next serve on this data dir delivers them", {
        jobs,
        path: queuePath,
      });
  };
  /**
   * A put-back whose copy was made and its queue closed, but not moved to its path (a directory in
   * its way, the data dir read-only or removed again): the next thread, or serve, moves the copy
   * there as it starts (`putBackCopy`), unless it went too.
   */
  const notMoved = (e: unknown): void => {
    const error = errorMessage(e);
    let left = false;
    try {
      left = statSync(copy, { throwIfNoEntry: false })?.isFile() === true;
    } catch {
      // ENOTDIR: the data dir is a file now; the copy went with it.
    }
    if (left)
      logger.log(
        "error",
        "could not move the copy of the queue file deleted under serve into place; the next delivery thread or serve moves it there, with its jobs and dead letters, as it starts",
        {
          path: queuePath,
          copy,
          error,
          fix: `make ${data.dataDir} writable again and remove what is at ${queuePath}, if anything`,
        },
      );
    else
      logger.log(
        "error",
        "could not put back the queue file deleted under serve; its copy is gone too, and its jobs and dead letters are lost",
        { path: queuePath, copy, error, fix: `find what deletes ${data.dataDir} while serve runs` },
      );
  };
  const lostAtStop = (e: unknown): false => {
    const error = errorMessage(e);
    logger.log(
      "error",
      "could not put back the queue file deleted under serve as it stopped; its jobs and dead letters are lost",
      {
        path: queuePath,
        error,
        fix: copyFix(error, " before serve stops, or put the file back by hand"),
      },
    );
    return false;
  };
  gauges();
  // Also the heartbeat: a thread that stops sending them is ended and started again.
  const gaugeTimer = setInterval(gauges, data.heartbeatMs);

  port.on("message", (message: ToDeliveryThread) => {
    if (message.kind === "wake") void drain();
    else if (message.kind === "deliver") {
      delivering = true;
      // Not once a stop or a put-back began its last drain: the queue closes after it.
      if (!closing) consumer ??= deliver();
    } else if (message.kind === "policy") current = load(message.settings);
    else if (message.kind === "stop") {
      void (async () => {
        // The deliveries in flight end, and their outcomes are tried once, each waiting a moment
        // for a lock (SHORT_BUSY_MS), not the busy timeout: one waiting on a lock or a full disk
        // is left leased for the next serve, not waited for until its lease ends. Before the wait
        // for a put-back, which stops the deliveries first: after it, they waited out their leases.
        queue.stopWaiting();
        // Putting back a deleted queue file ends the thread once it is done; one that failed
        // left it running, to stop as usual.
        await restoring;
        if (ended) return;
        clearInterval(poll);
        clearInterval(gaugeTimer);
        await lastDrain();
        await consumer?.stop();
        // Deleted since the last heartbeat's check (the data dir removed, then serve stopped):
        // put back as at a heartbeat, or its jobs and dead letters went with the process.
        const gone = queueFileGone();
        let putBack = false;
        if (gone) putBack = await copyBack().then(() => true, lostAtStop);
        else leftForNextStart();
        journal.close();
        await queue.close();
        if (putBack) {
          try {
            renameSync(copy, queuePath);
          } catch (e) {
            notMoved(e);
          }
        }
        await egress.close();
        report();
        port.close();
      })();
    }
  });
  // What the previous process journaled, taken in after `serve` is ready: a long backlog never
  // holds up the start.
  void drain();
}

start().catch((e) => {
  report();
  const error = errorMessage(e);
  post({ kind: "failed", error, fix: queueFix(error, join(data.dataDir, "queue.sqlite")) });
  port.close();
});

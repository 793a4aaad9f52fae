/**
 * The answering thread's side of the delivery thread (delivery-thread.ts): starts it, wakes it
 * once per turn in which jobs were journaled, passes it each reloaded policy, writes its log
 * lines and counts its counters, starts it again if it dies or stops responding, and drains it on
 * close.
 */
import { Worker } from "node:worker_threads";
import type { LineSink } from "../adapters/log/json-lines.js";
import type { Gauges } from "../adapters/metrics/prometheus.js";
import type { DeliveryPolicy } from "../app/deliver.js";
import type { Policy } from "../core/policy.js";
import type { PolicyDocument } from "../core/policy-schema.js";
import type { Logger, Metrics } from "../core/ports.js";
import type { DeliveryTrouble } from "../http/app.js";

/** Where the intake journal's segments live, under the data dir. */
export const JOURNAL_DIR = "intake";

/**
 * The part of a loaded policy that deliveries use, as plain data: the sinks and the egress section
 * as validated, and the secret values to scrub. The thread compiles only the egress section; the
 * rules, tens of MiB and about a second of compiling for 10,000 of them, stay on the answering
 * thread, and the thread never loads the policy compiler.
 */
export interface DeliverySettings extends DeliveryPolicy {
  readonly document: Pick<PolicyDocument, "sinks" | "egress">;
}

export function deliverySettings(policy: Policy): DeliverySettings {
  return {
    document: { sinks: policy.document.sinks, egress: policy.document.egress },
    secrets: policy.secrets,
  };
}

/** What the answering thread passes at start. */
export interface DeliveryThreadData {
  readonly dataDir: string;
  /** The running policy's delivery settings. */
  readonly settings: DeliverySettings;
  /** How often the thread sends its gauges: the heartbeat the answering thread watches. */
  readonly heartbeatMs: number;
  /** `serve` listens (a thread started again): deliver from the start, not on `deliver`. */
  readonly delivering: boolean;
  /**
   * Two Int32s: the first IN_CALL while the thread is inside a SQLite call, ENDING once it is to
   * make none; the second 1 once the host would end it, so that its call in progress is its last.
   */
  readonly calls: SharedArrayBuffer;
}

/** `DeliveryThreadData.calls`: the thread is inside a SQLite call; the host must not end it now. */
export const IN_CALL = 1;
/** `DeliveryThreadData.calls`: the host ends the thread; it makes no SQLite call from here. */
export const ENDING = 2;

/** Answering thread → delivery thread. */
export type ToDeliveryThread =
  | { readonly kind: "wake" }
  | { readonly kind: "deliver" }
  | { readonly kind: "policy"; readonly settings: DeliverySettings }
  | { readonly kind: "stop" };

/** Delivery thread → answering thread. */
export type FromDeliveryThread =
  | { readonly kind: "ready" }
  /** Posted before a queue call that may wait on another process's lock: alive, between gauges. */
  | { readonly kind: "beat" }
  | { readonly kind: "gauges"; readonly values: Readonly<Record<string, number>> }
  | { readonly kind: "failed"; readonly error: string; readonly fix?: string | undefined }
  /** Sent as it changes: what keeps the queue file from being used, or undefined once it works. */
  | { readonly kind: "trouble"; readonly trouble: DeliveryTrouble | undefined }
  | {
      readonly kind: "report";
      readonly lines: string;
      readonly counts: readonly (readonly [string, Record<string, string>])[];
    };

export interface DeliveryThread {
  /** Jobs were journaled: the thread reads the journal once this turn's answers are written. */
  wake(): void;
  /**
   * `serve` listens: the thread delivers from now on. Before, it takes the journal into the queue
   * and sends nothing: a start that then fails (its port taken) sent jobs again, spending an
   * attempt of each (a retry minutes away), and held its error back until they were answered.
   */
  deliver(): void;
  /** The policy was reloaded: the thread delivers under its settings from now on. */
  policy(settings: DeliverySettings): void;
  /** Lets in-flight deliveries finish, closes the queue and ends the thread. */
  stop(): Promise<void>;
  /**
   * Before `process.exit` (a second signal): the thread makes no SQLite call from here, and this
   * blocks until it is out of the one it is in, a busy timeout at most. The exit ends the thread
   * where it is, and inside a call (waiting on a queue file another process holds locked)
   * better-sqlite3 aborted the whole process (FATAL ERROR, SIGABRT) instead of its exit.
   */
  halt(): void;
  /** What keeps notify events from being delivered now, if anything (/healthz). */
  trouble(): DeliveryTrouble | undefined;
}

export interface DeliveryThreadOptions
  extends Omit<DeliveryThreadData, "heartbeatMs" | "delivering" | "calls"> {
  readonly env: NodeJS.ProcessEnv;
  /** Where the thread's log lines are written (serve's batched, scrubbed stdout). */
  readonly lines: LineSink;
  /** Counts the thread's counters; sets its gauges and `hookgate_delivery_thread_up`. */
  readonly metrics: Metrics & Gauges;
  readonly logger: Logger;
  /** The thread's module: delivery-thread.js beside this file (tests pass a stand-in). */
  readonly script?: URL;
  /** HEARTBEAT_MS unless a test makes it shorter. */
  readonly heartbeatMs?: number;
  /** STOP_MS unless a test makes it shorter. */
  readonly stopMs?: number;
}

/**
 * A thread that dies is started again after this long, doubled for each death in a row up to
 * MAX_RESTART_MS; a thread that ran for that long before it died starts the count again.
 */
const RESTART_MS = 1000;
const MAX_RESTART_MS = 60_000;
/** On close, a thread still delivering after this long is terminated (its leases come back). */
export const STOP_MS = 30_000;
/** The thread sends its gauges this often, whatever it is doing: its heartbeat. */
export const HEARTBEAT_MS = 5000;
/**
 * A thread that sent nothing for this many heartbeats (30 s) has stopped running JavaScript: an
 * endless loop, or a synchronous call that never returns. It is terminated and started again as a
 * dead one is. Six beats, because what a working thread can be stuck in for a while is a few
 * seconds long: one SQLite call waiting out the queue file's 5 s busy timeout, a WAL checkpoint
 * on a slow disk, a full GC, taking in a journal line of tens of MiB. A false alarm costs the
 * deliveries in flight a second send (same webhook-id) and an attempt each.
 */
export const MISSED_HEARTBEATS = 6;

/**
 * Tells the thread its call in progress is its last, and marks it ENDING if it is in none: true
 * once it makes no SQLite call from here.
 */
function endsCalls(calls: Int32Array): boolean {
  Atomics.store(calls, 1, 1);
  return Atomics.compareExchange(calls, 0, 0, ENDING) !== IN_CALL;
}

/**
 * Ends `thread` once it is between SQLite calls: one ended inside a call (waiting out the busy
 * timeout on a queue file another process holds locked) aborted the whole process, better-sqlite3
 * failing a V8 check as it threw its error (better-sqlite3 issue 1507). A call that never returns
 * leaves the thread running, as ending it did.
 */
function endBetweenCalls(thread: Worker, calls: Int32Array): void {
  if (!endsCalls(calls)) {
    setTimeout(() => endBetweenCalls(thread, calls), 10).unref();
    return;
  }
  void thread.terminate();
}

/**
 * Resolves once the thread has opened the queue (it loads the rest after); rejects with why it
 * could not.
 */
export function startDeliveryThread(options: DeliveryThreadOptions): Promise<DeliveryThread> {
  let settings = options.settings;
  let worker: Worker;
  let stopping = false;
  let restart: NodeJS.Timeout | undefined;
  let wakeScheduled = false;
  /** `deliver` was called: a thread started again delivers at once. */
  let delivering = false;
  /** The current thread has not exited (false while a restart is pending). */
  let alive = false;
  let spawnedAt = 0;
  let deaths = 0;
  /** What the current thread said last keeps the queue file from being used. */
  let trouble: DeliveryTrouble | undefined;
  /** Why no thread runs, from a thread's death until one opens the queue again. */
  let down: DeliveryTrouble | undefined;
  const restarting = (error: string, fix?: string): DeliveryTrouble => ({
    delivery: "restarting",
    error,
    fix,
  });
  const heartbeatMs = options.heartbeatMs ?? HEARTBEAT_MS;
  const silenceMs = MISSED_HEARTBEATS * heartbeatMs;
  const stopMs = options.stopMs ?? STOP_MS;
  /** The current thread's `DeliveryThreadData.calls`, as `worker` is the current thread. */
  let calls: Int32Array;

  /** Starts a thread again after the back-off; returns the wait. */
  const restartLater = (): number => {
    if (performance.now() - spawnedAt >= MAX_RESTART_MS) deaths = 0;
    const delay = Math.min(RESTART_MS * 2 ** deaths, MAX_RESTART_MS);
    deaths += 1;
    restart = setTimeout(() => spawn(), delay);
    return delay;
  };

  /** `starting`: the first start's promise, settled by the thread's first word; restarts have none. */
  const spawn = (starting?: { resolve: () => void; reject: (e: Error) => void }) => {
    let start = starting;
    const called = new Int32Array(new SharedArrayBuffer(8));
    calls = called;
    const data: DeliveryThreadData = {
      dataDir: options.dataDir,
      settings,
      heartbeatMs,
      delivering,
      calls: called.buffer as SharedArrayBuffer,
    };
    const thread = new Worker(options.script ?? new URL("./delivery-thread.js", import.meta.url), {
      workerData: data,
      env: options.env,
    });
    worker = thread;
    alive = true;
    trouble = undefined;
    // On the monotonic clock: a wall clock stepped forward while a thread ran made its death look
    // like the first after a long run (the back-off started again at 1 s), and one stepped back
    // made a thread that ran for a day wait as if it had died at once.
    spawnedAt = performance.now();
    // Up only once it delivers: a thread stuck loading shows 0, not nothing.
    options.metrics.set("hookgate_delivery_thread_up", 0);
    let heardAt = spawnedAt;
    /**
     * Set once this thread is given up for not responding: its exit starts no other, and of what
     * it says until it is ended only its log lines and counts are taken (`thread.on("message")`).
     */
    let abandoned = false;
    /** This thread said it could not start (after the first start): why it is down. */
    let failedToStart = false;
    // Any message is a heartbeat, its gauges every heartbeatMs at least. Checked once per silence
    // bound, not per message; and one turn later, after the messages that wait in the port: an
    // answering thread itself held up past the bound must not take a live thread for a hung one.
    let watchdog: NodeJS.Timeout | undefined;
    const watch = (inMs: number) => {
      watchdog = setTimeout(() => setImmediate(check), inMs).unref();
    };
    const check = () => {
      if (stopping || !alive) return;
      const silent = performance.now() - heardAt;
      // Whole milliseconds: a fractional delay (performance.now() is) deoptimises Node's timer.
      if (silent < silenceMs) return watch(Math.ceil(silenceMs - silent));
      if (start) {
        // Not ready yet: `serve` stops with the reason, as for a thread that could not start.
        start.reject(
          new Error(
            `the delivery thread stopped responding (nothing in ${silenceMs} ms) before it was ready`,
          ),
        );
        start = undefined;
        // Given up as below: the rejection says why, not the "being ended" this one says next.
        abandoned = true;
        endBetweenCalls(thread, called);
        return;
      }
      // Not waiting for its exit: a thread stuck in a native call (the SQLite driver) ends only
      // once that call returns, if ever. The next one takes back the jobs it was delivering.
      abandoned = true;
      alive = false;
      options.metrics.set("hookgate_delivery_thread_up", 0);
      options.metrics.increment("hookgate_delivery_thread_restarts_total", { reason: "unresponsive" });
      endBetweenCalls(thread, called);
      const inMs = restartLater();
      down = restarting(
        `the delivery thread stopped responding (nothing in ${Math.round(silent)} ms); started again in ${inMs} ms`,
      );
      options.logger.log("error", "the delivery thread stopped responding; ended it and starting it again", {
        silentMs: Math.round(silent),
        inMs,
      });
    };
    watch(silenceMs);
    thread.on("message", (message: FromDeliveryThread) => {
      heardAt = performance.now();
      // Given up, it may still speak as the call it was stuck in ends: its failing to start or its
      // trouble ("being ended"), its heartbeat's gauges (read NaN), which set it up again while
      // none ran. Only what it logged and counted is its own to tell.
      if (abandoned && message.kind !== "report") return;
      if (message.kind === "report") {
        if (message.lines !== "") options.lines.write(message.lines);
        for (const [name, labels] of message.counts) options.metrics.increment(name, labels);
      } else if (message.kind === "gauges") {
        // Sent once the thread delivers (after `ready` and its imports), then every heartbeatMs.
        options.metrics.set("hookgate_delivery_thread_up", 1);
        for (const [name, value] of Object.entries(message.values)) options.metrics.set(name, value);
      } else if (message.kind === "trouble") {
        trouble = message.trouble;
      } else if (message.kind === "ready") {
        down = undefined;
        start?.resolve();
        start = undefined;
      } else if (message.kind === "failed") {
        if (start) start.reject(new Error(message.error));
        else {
          options.logger.log("error", "the delivery thread could not start", {
            error: message.error,
            ...(message.fix !== undefined && { fix: message.fix }),
          });
          down = restarting(`the delivery thread could not start: ${message.error}`, message.fix);
          failedToStart = true;
        }
        start = undefined;
      }
    });
    thread.on("error", (e) => {
      if (!abandoned) options.logger.log("error", "the delivery thread failed", { error: e.message });
    });
    thread.on("exit", (code) => {
      clearTimeout(watchdog);
      if (abandoned) return;
      alive = false;
      options.metrics.set("hookgate_delivery_thread_up", 0);
      if (stopping) return;
      if (start) {
        start.reject(new Error(`the delivery thread exited (code ${code}) before it was ready`));
        return;
      }
      options.metrics.increment("hookgate_delivery_thread_restarts_total", { reason: "exited" });
      const inMs = restartLater();
      // One that could not start is down for the reason it gave, said already.
      if (!failedToStart)
        down = restarting(`the delivery thread exited (code ${code}); started again in ${inMs} ms`);
      else if (down) down = { ...down, error: `${down.error}; started again in ${inMs} ms` };
      options.logger.log("error", "the delivery thread stopped; starting it again", { code, inMs });
    });
  };

  return new Promise<void>((resolve, reject) => {
    spawn({
      resolve,
      reject: (e) => {
        stopping = true;
        reject(e);
      },
    });
  }).then(() => ({
    wake() {
      if (wakeScheduled) return;
      wakeScheduled = true;
      // Posted after the turn's answers are written: the listener writes them in a setImmediate
      // queued once they are decided, after this call, so the wake waits one more turn. Waking
      // the thread before them cost a paced client's answer a third of its latency on this host
      // (bench/README.md, enqueue.js "The wake after the answers").
      setImmediate(() =>
        setImmediate(() => {
          wakeScheduled = false;
          worker.postMessage({ kind: "wake" } satisfies ToDeliveryThread);
        }),
      );
    },
    deliver() {
      delivering = true;
      worker.postMessage({ kind: "deliver" } satisfies ToDeliveryThread);
    },
    policy(next) {
      settings = next;
      worker.postMessage({ kind: "policy", settings: next } satisfies ToDeliveryThread);
    },
    trouble: () => down ?? trouble,
    halt() {
      if (!alive) return;
      // Bounded: a call that never returns is left to the exit, as before.
      const end = performance.now() + 2 * heartbeatMs;
      while (!endsCalls(calls) && performance.now() < end) Atomics.wait(calls, 0, IN_CALL, 10);
    },
    async stop() {
      stopping = true;
      clearTimeout(restart);
      // Died and waiting to be started again: there is nothing to drain.
      if (!alive) return;
      const exited = new Promise<void>((resolve) => {
        const timer = setTimeout(() => {
          options.logger.log("warn", "the delivery thread did not stop in time; ending it", {
            afterMs: stopMs,
          });
          endBetweenCalls(worker, calls);
        }, stopMs);
        worker.once("exit", () => {
          clearTimeout(timer);
          resolve();
        });
      });
      worker.postMessage({ kind: "stop" } satisfies ToDeliveryThread);
      await exited;
    },
  }));
}

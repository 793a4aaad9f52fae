/**
 * Composition root for plain Node: a node:http server whose hook routes are answered by
 * node-listener.ts and everything else by the Hono app (through @hono/node-server), the policy from a file
 * (reloaded on SIGHUP; a reload that fails validation keeps the running policy), JSON logs on
 * stdout. Notify jobs are appended to the intake journal before the answer; the delivery thread
 * (delivery-thread.ts) takes them into the SQLite queue and delivers them.
 */
import { randomUUID } from "node:crypto";
import {
  accessSync,
  constants,
  fstatSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import type { ServerResponse } from "node:http";
import { createServer } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { basename, join, resolve, sep } from "node:path";
import { isatty } from "node:tty";
import { getRequestListener } from "@hono/node-server";
import Database from "better-sqlite3";
import { createUndiciEgress } from "../adapters/egress/undici.js";
import { nodeSha256 } from "../adapters/hash/node-crypto.js";
import {
  fileLines,
  type GuardedStream,
  guardStream,
  type LineStream,
} from "../adapters/log/guarded-stream.js";
import { batchLines, createJsonLogger, scrubLines } from "../adapters/log/json-lines.js";
import { createPrometheusRegistry } from "../adapters/metrics/prometheus.js";
import { loadPolicyFileText, PolicyLoadError, readPolicyText } from "../adapters/policy-source/file.js";
import {
  CHECK_MS as JOURNAL_CHECK_MS,
  type JournalWriter,
  journalHeld,
  openJournalWriter,
} from "../adapters/queue/journal.js";
import { createJournalHold, HOLD_BYTES } from "../adapters/queue/journal-hold.js";
import { createJsonlRecorder } from "../adapters/record/jsonl.js";
import { createSqliteSessionStore } from "../adapters/session/sqlite.js";
import { sqliteFix } from "../adapters/sqlite-fix.js";
import { createNotifier } from "../app/notify.js";
import { createRemoteActions } from "../app/remote-actions.js";
import type { DeliveryJob } from "../core/delivery.js";
import { reportRefusals } from "../core/egress/report.js";
import { errorMessage } from "../core/errors.js";
import { scrubbingWith } from "../core/mask.js";
import { type LoadedPolicy, listedProblems, type Policy, type PolicyIssue } from "../core/policy.js";
import type { Logger } from "../core/ports.js";
import { err, type Result } from "../core/result.js";
import { envReaderOf, nameToShow } from "../core/secret-ref.js";
import { createApp } from "../http/app.js";
import {
  bodyDeadline,
  createBodyBudget,
  SHADOW_WAITING_BODY_BUDGET_BYTES,
  UNAUTHENTICATED_BODY_BUDGET_BYTES,
  WAITING_BODY_BUDGET_BYTES,
} from "../http/read-body.js";
import {
  type DeliveryThread,
  deliverySettings,
  JOURNAL_DIR,
  STOP_MS,
  startDeliveryThread,
} from "./delivery-thread-host.js";
import { makeDirectory } from "./make-directory.js";
import { hookListener, loopbackHost, loopbackName, notAProxy, parserRefusals } from "./node-listener.js";
import { openNamed } from "./open-named.js";
import { shellQuote } from "./shell-word.js";

export interface ServeOptions {
  readonly policyPath: string;
  /** Where the embedded queue and session store live (created if missing). */
  readonly dataDir: string;
  readonly host: string;
  readonly port: number;
  readonly logger?: Logger;
  readonly env?: NodeJS.ProcessEnv;
  /** `--record FILE`: append every judged event, masked, as a replayable JSONL record. */
  readonly recordPath?: string | undefined;
}

export interface RunningGateway {
  readonly url: string;
  readonly port: number;
  policy(): Policy;
  /**
   * Reopens the `--record` file, then re-reads the policy file; on failure keeps the running
   * policy and returns the problems. Once `close` was called it does neither, and says so.
   */
  reload(): Promise<readonly PolicyIssue[]>;
  close(): Promise<void>;
  /**
   * Says that the process ends now, without the rest of its stop (a second signal while it
   * stops), writes out what is logged and waits for the delivery thread to leave its SQLite call,
   * if it is in one (a busy timeout at most); the caller exits.
   */
  halt(signal: NodeJS.Signals): void;
}

export async function startGateway(options: ServeOptions): Promise<RunningGateway> {
  // Audit lines go out once per event-loop turn (batchLines); what is buffered is written on
  // close and on process exit. Each batch is scrubbed of the running policy's secret values,
  // read at write time: a SIGHUP reload can change them.
  let running: (() => Policy) | undefined;
  const scrub = scrubbingWith(() => running?.().secrets ?? NO_SECRETS);
  const guarded = guardedStdout();
  const stdout = batchLines(scrubLines(guarded, scrub));
  process.once("exit", stdout.flush);
  const logger = options.logger ?? createJsonLogger(stdout);
  const env = options.env ?? process.env;
  // Read first: a wrong value stops the start before anything is opened.
  const holdLimit = holdBytes(env);
  const policyDeps = { env: envReaderOf(env), sha256: nodeSha256 };
  /** The text of the file the running policy was loaded from. */
  let runningText: string | undefined;
  /** The file's policy, loaded; undefined for a reload that finds the running policy's text. */
  const load = async (reload: boolean): Promise<Result<LoadedPolicy, PolicyIssue[]> | undefined> => {
    // A regular file only: a FIFO at the path would hold this reload, and every one after it.
    const text = await readPolicyText(options.policyPath, { filesOnly: true });
    if (!text.ok) return err([text.error]);
    // The same text compiles to the running policy: serve's environment is fixed when it starts,
    // so its "env:NAME" values are the same too. Compiled again, it logged its warnings again and
    // gave each thread's egress a new connection pool (one per policy), on every SIGHUP a deploy
    // tool sends whether the file changed or not.
    if (text.value === runningText) return undefined;
    const loaded = await loadPolicyFileText(options.policyPath, text.value, policyDeps);
    if (loaded.ok) {
      runningText = text.value;
      for (const w of loaded.value.warnings)
        logger.log("warn", "policy warning", {
          path: w.path,
          problem: w.message,
          // A variable newly named by the file (a token, a sink's URL) and set since the start, in
          // a systemd EnvironmentFile say: a reload does not see it, whatever the operator sees.
          ...(reload && w.unsetVariable !== undefined
            ? {
                fix: `serve reads its environment only when it starts, so a reload cannot see ${nameToShow(w.unsetVariable) ?? "the variable"}: set it in serve's environment and restart serve`,
              }
            : {}),
        });
    }
    return loaded;
  };

  /** `check` says this of every policy without auth; bound beyond loopback it is what matters. */
  const warnIfOpen = (policy: Policy) => {
    if (policy.auth !== undefined || loopbackName(options.host)) return;
    logger.log("warn", "policy has no auth, and serve listens beyond loopback", {
      host: options.host,
      problem:
        'every caller that can reach it is accepted as team "default" and can make it call models, forward hooks and notify sinks; add auth.tokens, or listen on 127.0.0.1',
    });
  };
  const first = await load(false);
  // Never undefined: nothing runs yet for the file to match.
  if (!first?.ok) throw new PolicyLoadError(options.policyPath, first?.error ?? []);
  warnIfOpen(first.value.policy);
  let current = first.value.policy;
  /** The latest reload was refused: /healthz says so until one loads. */
  let reloadFailed = false;
  /**
   * The latest intake journal append failed (a full or read-only disk): its notify events are held
   * in memory (journal-hold.ts), or dropped past the hold's bound. /healthz says so until an append
   * works again and nothing is held.
   */
  let notifyFailing = false;
  let reloading: Promise<unknown> = Promise.resolve();
  /** The reload asked for that has not started yet, if any. */
  let waiting: Promise<readonly PolicyIssue[]> | undefined;
  running = () => current;

  const metrics = createPrometheusRegistry();
  // At 0 from the start, so that an alert on their increase sees a process's first one
  // (infra/node/prometheus-alerts.yml).
  for (const outcome of ["loaded", "failed"]) metrics.declare("hookgate_policy_reloads_total", { outcome });
  metrics.declare("hookgate_intake_failed_total", {});
  for (const reason of ["exited", "unresponsive"])
    metrics.declare("hookgate_delivery_thread_restarts_total", { reason });
  for (const operation of ["rememberTool", "lastTool", "correlate"])
    metrics.declare("hookgate_session_store_failed_total", { operation });
  /** Each sink's failed enqueues at 0 too, from the start and from the reload that adds it. */
  const declareSinks = (policy: Policy) => {
    for (const sink of Object.keys(policy.document.sinks ?? {}))
      metrics.declare("hookgate_enqueue_failed_total", { sink });
  };
  declareSinks(current);
  const egress = createUndiciEgress({
    policy: () => current.egress,
    onRefusal: reportRefusals(logger, metrics),
  });
  const clock = { now: Date.now, monotonic: () => performance.now() };
  const stopping = new AbortController();
  /**
   * The budgets of hook bodies, by the `budget` label of their gauges: those still arriving (a
   * team's, and those no token vouches for, held apart so that they cannot crowd out a team's),
   * and those of hooks waiting on prompt and forward rules, bounded apart from those arriving:
   * on an enforcing rule, and on shadow rules alone (apart, so that they never crowd out hooks
   * that enforcing rules are to answer).
   */
  const budgets = {
    arriving: createBodyBudget(),
    unauthenticated: createBodyBudget(UNAUTHENTICATED_BODY_BUDGET_BYTES),
    waiting: createBodyBudget(WAITING_BODY_BUDGET_BYTES),
    shadow: createBodyBudget(SHADOW_WAITING_BODY_BUDGET_BYTES),
  };
  const remote = createRemoteActions({
    egress: egress.send,
    env: policyDeps.env,
    clock,
    sha256: nodeSha256,
    metrics,
    stopping: stopping.signal,
    waitingBudget: budgets.waiting,
    shadowWaitingBudget: budgets.shadow,
  });
  const recorder =
    options.recordPath === undefined
      ? undefined
      : createJsonlRecorder(options.recordPath, logger, {
          // Scrubbed as the log is, by the same running policy's secrets.
          scrub,
        });
  const store = openDataDir(options.dataDir);
  let deliveries: DeliveryThread;
  try {
    deliveries = await startDeliveryThread({
      dataDir: options.dataDir,
      settings: deliverySettings(first.value.policy),
      env,
      lines: stdout,
      metrics,
      logger,
    });
  } catch (e) {
    // The thread opens the queue file first: what stops it is the data dir (a file that is not
    // a database, a lock held past the busy timeout).
    store.close();
    throw dataDirError(options.dataDir, e);
  }
  // A journal segment deleted under the writer (journal.ts: a second serve on the data dir with
  // every lock file deleted) is copied to a new one here, within a second, and a lock file
  // deleted by hand is taken again, so that a serve starting meanwhile still sees this one.
  // Notify jobs the journal could not take, held in memory until it does.
  const hold = createJournalHold<DeliveryJob>((messages) => store.journal.append(messages), holdLimit);
  /** Appends what is held, oldest first, after an answer or on the second's timer. */
  const retryHeld = () => {
    if (hold.size().sends === 0) return;
    const written = hold.retry();
    if (written === 0) return;
    deliveries.wake();
    const left = hold.size().sends;
    if (left === 0) notifyFailing = false;
    logger.log("info", "notify events held in memory written to the intake journal", {
      events: written,
      ...(left > 0 ? { stillHeld: left } : {}),
    });
  };
  let retrySoon = false;
  const journalCheck = setInterval(() => {
    retryHeld();
    try {
      store.journal.check();
    } catch (e) {
      logger.log(
        "error",
        "could not copy a deleted intake journal segment to a new one; trying again in a second",
        {
          error: errorMessage(e),
        },
      );
    }
  }, JOURNAL_CHECK_MS).unref();
  const notifier = createNotifier({
    queue: {
      // Journaled before the answer goes out, so an answered event survives a SIGKILL (notify.ts);
      // the delivery thread takes it into the queue.
      async send(messages) {
        let held: { readonly error: unknown } | undefined;
        try {
          held = hold.send(messages);
        } catch (e) {
          // Past the hold's bound: dropped, logged and counted as a failed enqueue (notify.ts).
          notifyFailing = true;
          throw e;
        }
        if (held === undefined) {
          notifyFailing = false;
          deliveries.wake();
          return;
        }
        notifyFailing = true;
        const size = hold.size();
        logger.log("warn", "notify event held in memory: the intake journal cannot take it yet", {
          decisionId: decisionOf(messages),
          sinks: messages.map((m) => m.body.sink),
          heldEvents: size.sends,
          heldBytes: size.bytes,
          ...(held.error === undefined
            ? { problem: "events held before it are not written yet" }
            : { error: errorMessage(held.error) }),
          fix: "free space on the data dir's disk or make it writable: held events are written to the journal within a second of that, and lost if serve stops first",
        });
        // Tried again once this answer is out, never on its path.
        if (!retrySoon) {
          retrySoon = true;
          setImmediate(() => {
            retrySoon = false;
            retryHeld();
          });
        }
      },
    },
    clock,
    logger,
    metrics,
    sessions: store.sessions,
    defer: (task) => task(),
  });
  const deps = {
    remote,
    notifier,
    recorder: recorder?.record,
    metrics,
    // The hook routes Hono answers (a prefix, doubled slashes) read their bodies within the same
    // deadline and the same budget of bytes still arriving as those the listener answers.
    bodyDeadline,
    bodyBudget: budgets.arriving,
    unauthenticatedBodyBudget: budgets.unauthenticated,
    metricsText: () => {
      metrics.setCounter("hookgate_log_lines_dropped_total", guarded.dropped());
      metrics.set("hookgate_log_backlog_bytes", guarded.backlogBytes());
      const held = hold.size();
      metrics.set("hookgate_notify_memory_jobs", held.jobs);
      metrics.set("hookgate_notify_memory_bytes", held.bytes);
      for (const [name, budget] of Object.entries(budgets)) {
        const labels = { budget: name };
        metrics.set("hookgate_body_budget_bytes", budget.heldBytes(), labels);
        metrics.set("hookgate_body_budget_limit_bytes", budget.limitBytes, labels);
        metrics.setCounter("hookgate_body_budget_refused_total", budget.refused(), labels);
      }
      return metrics.render();
    },
    policy: () => current,
    reloadFailed: () => reloadFailed,
    notifyFailing: () => notifyFailing,
    notifyInMemory: () => hold.size().sends,
    deliveryTrouble: () => deliveries.trouble(),
    clock,
    newId: randomUUID,
    sha256: nodeSha256,
    logger,
  };
  /** What the server's end leaves to close, in order: no more appends, then the thread drains. */
  const closeAfterServer = async () => {
    clearInterval(journalCheck);
    // Held events get one more try; those the journal still cannot take end with the process.
    retryHeld();
    hold.close();
    for (const messages of hold.held()) {
      logger.log(
        "error",
        "notify event held in memory is lost: serve stops and the intake journal still cannot take it",
        {
          decisionId: decisionOf(messages),
          sinks: messages.map((m) => m.body.sink),
        },
      );
      for (const m of messages) metrics.increment("hookgate_enqueue_failed_total", { sink: m.body.sink });
    }
    try {
      store.journal.close();
    } catch (e) {
      logger.log(
        "error",
        "could not copy a deleted intake journal segment to a new one at stop; the notify events in it that were not yet taken in are lost",
        { error: errorMessage(e) },
      );
    }
    await deliveries.stop();
    store.close();
    await recorder?.close();
    await egress.close();
  };
  const app = createApp(deps);
  // Bound to loopback, only loopback names are served: DNS rebinding (README, "serve").
  const servesHost = loopbackName(options.host) ? loopbackHost : undefined;
  // The bind address as a URL names it: an IPv6 one in brackets. The app's URL names it for a
  // request without Host; unbracketed, no URL could be made of it, and @hono/node-server answered
  // every route a bare 400 on `--host ::1`.
  const host = options.host.includes(":") ? `[${options.host}]` : options.host;
  // An HTTP/1.1 hook without a Host header is judged, as an HTTP/1.0 one is: Node answered it a
  // bare 400 of its own, logged nowhere, which its client lets through. A browser, the only
  // sender the loopback Host check is for, always sends one.
  const server = createServer(
    { requireHostHeader: false },
    hookListener(deps, getRequestListener(app.fetch, { hostname: host }), servesHost),
  );
  // Every header is read: past Node's default of 2,000 the rest were dropped unsaid (a hook's
  // Content-Type and token among them), and the 16 KiB limit on headers bounds them anyway.
  server.maxHeadersCount = 0;
  // An Expect other than 100-continue is ignored (RFC 9110 §10.1.1 allows it) and the request
  // answered as any other: Node answered a hook a bare 417, logged nowhere.
  server.on("checkExpectation", (request, response) => server.emit("request", request, response));
  // Claude Code sends a session's hooks on one keep-alive connection, often more than Node's
  // default 5 s apart: a server closing it just as the next hook goes out fails that hook, and
  // the tool runs undecided. So the client closes an idle connection, not the gateway (65 s,
  // above common clients' and load balancers' idle timeouts; `close()` ends idle ones at once).
  server.keepAliveTimeout = 65_000;
  server.headersTimeout = 66_000;
  // What Node's parser refuses (431, 400, 408) is logged, and answered as Node answers it but
  // on a hook route it can be read from: there, the fail mode's decision. A CONNECT, a client
  // taking the gateway for its proxy, is told it is none.
  server.on("clientError", parserRefusals(deps));
  server.on("connect", notAProxy(logger));
  let closing: Promise<void> | undefined;
  /** When the stop began (performance.now()), once it has. */
  let stopBegan: number | undefined;
  // Every connection open, for a stop: one that has sent nothing yet (a client's spare, opened
  // ahead of its next request) is closed at once, as idle ones are; `closeIdleConnections()`
  // leaves it, and a stop waited out its whole grace for it.
  const connections = new Set<Socket>();
  /**
   * Each connection's latest request's answer: one still being made when a stop begins ends its
   * connection too. Left open, the connection idled once answered and held the stop for the
   * whole grace, then was logged as cut. A map set per request, never a listener per request.
   */
  const answers = new Map<Socket, ServerResponse>();
  server.on("connection", (socket: Socket) => {
    connections.add(socket);
    socket.once("close", () => {
      connections.delete(socket);
      answers.delete(socket);
    });
  });
  // Once closing, every answer ends its connection: a keep-alive client would otherwise hold
  // the server open by sending on. Only the connection's last answer says so: a request
  // pipelined behind one not yet answered takes the mark from it, or the earlier answer ended
  // the connection and this one, judged, went unanswered.
  server.on("request", (req, res) => {
    if (closing) {
      const earlier = answers.get(req.socket);
      if (earlier !== undefined && !earlier.headersSent) earlier.removeHeader("connection");
      if (!res.headersSent) res.setHeader("connection", "close");
    }
    answers.set(req.socket, res);
  });
  try {
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(options.port, options.host, () => {
        server.off("error", reject);
        resolve();
      });
    });
  } catch (e) {
    // The port is taken, say: give back all that started, the thread and the data dir's claim
    // included, or the process would stay up holding them.
    await closeAfterServer();
    const code = (e as { code?: string }).code;
    if (code === "EADDRINUSE") {
      throw new Error(
        `${options.host}:${options.port} is in use (EADDRINUSE): another gateway may hold it (npm start and npx leave it running when only they are stopped); stop it, or pass another --port`,
      );
    }
    // A --host name whose lookup failed for now (no DNS answered): the name may well be right.
    if (code === "EAI_AGAIN") {
      throw new Error(
        `cannot listen on --host ${options.host} (${code}): its name could not be looked up just now (a DNS failure); check this machine's DNS and start again, or pass one of its addresses (127.0.0.1, the default, for this machine alone; 0.0.0.0 for every interface)`,
      );
    }
    // A mistyped --host: an address no interface of this machine has, or a name with no address.
    if (code === "EADDRNOTAVAIL" || code === "ENOTFOUND") {
      throw new Error(
        `cannot listen on --host ${options.host} (${code}): it is no address of this machine${code === "EADDRNOTAVAIL" ? "" : ", nor a name that resolves to one"}; pass one of its own addresses (127.0.0.1, the default, for this machine alone; 0.0.0.0 for every interface)`,
      );
    }
    throw e;
  }
  const port = (server.address() as AddressInfo).port;
  // Deliveries begin once serve listens (delivery-thread-host.ts `deliver`).
  deliveries.deliver();
  logger.log("info", "hookgate listening", {
    url: `http://${host}:${port}`,
    policy: current.hash,
    rules: current.rules.length,
  });

  return {
    url: `http://${host}:${port}`,
    port,
    policy: () => current,
    reload() {
      // A SIGHUP once SIGTERM or SIGINT began the stop: the gateway is going away, and the next
      // start reads the policy and opens the record file. A reload then compiled the policy on
      // the thread still answering the last requests, and logged "policy reloaded" (or its
      // refusal) between "hookgate stopping" and "hookgate stopped".
      if (closing) {
        logger.log("warn", "SIGHUP ignored: hookgate is stopping", {
          policy: current.hash,
          next: "the next start reads the policy file and opens the --record file",
        });
        return Promise.resolve([]);
      }
      // The record file first, whatever the policy does: a log rotation that renamed it sends
      // SIGHUP so that records go to a new file at the path (README, "Recording traffic").
      reopenRecording();
      // One at a time, in the order asked: a slow read of an older file never lands last. A
      // reload asked while another waits to start is that one: it reads the file as it is when
      // it starts, so a burst of SIGHUPs (a deploy tool, a file watcher) costs one more compile
      // of the policy, not one per signal, each holding the decisions behind it.
      if (waiting) return waiting;
      const run = reloading.then(() => {
        waiting = undefined;
        return reloadOnce();
      });
      waiting = run;
      reloading = run.then(
        () => undefined,
        () => undefined,
      );
      return run;
    },
    close() {
      closing ??= closeOnce();
      return closing;
    },
    halt(signal) {
      // Without this the log ended at "hookgate stopping", as if the process had been killed.
      logger.log(
        "warn",
        "hookgate stopped at once on a second signal, without waiting for the rest of its stop",
        {
          signal,
          ms: stopBegan === undefined ? 0 : Math.round(performance.now() - stopBegan),
          openConnections: connections.size,
          // Requests cut only if a connection was open: a second signal in the delivery
          // thread's drain cuts none.
          problem: `${connections.size > 0 ? "requests still open got no answer; " : ""}notify events already answered are kept in the intake journal and the queue, and deliveries in flight are sent again at the next start`,
        },
      );
      stdout.flush();
      // The exit that follows ends the delivery thread: only between two SQLite calls.
      deliveries.halt();
    },
  };

  function reopenRecording(): void {
    if (!recorder) return;
    try {
      recorder.reopen();
    } catch (e) {
      logger.log("error", "could not reopen the record file; recording goes on as it was", {
        error: errorMessage(e),
      });
    }
  }

  async function reloadOnce(): Promise<readonly PolicyIssue[]> {
    // A load that throws is a failed reload like any other: a rejection here reached no one (the
    // SIGHUP handler drops the promise), so it went without a log line or a count.
    const next = await load(true).catch((e: unknown) =>
      err<PolicyIssue[]>([
        { severity: "error", path: "$", message: `could not be loaded: ${errorMessage(e)}` },
      ]),
    );
    if (next === undefined) {
      // The file's policy runs: a reload refused before (a broken file put back) is over.
      reloadFailed = false;
      metrics.increment("hookgate_policy_reloads_total", { outcome: "loaded" });
      logger.log("info", "policy unchanged; nothing reloaded", { policy: current.hash });
      return [];
    }
    if (!next.ok) {
      // The file named: the problems' JSON paths ("$.rules[0]") do not say which file was read.
      const { listed, more } = listedProblems(next.error);
      logger.log("error", "policy reload failed; keeping the running policy", {
        policy: current.hash,
        path: options.policyPath,
        problems: listed,
        ...(more > 0 ? { moreProblems: more } : {}),
        fix: `fix ${options.policyPath} (hookgate check ${shellQuote(options.policyPath)} lists the same problems) and send SIGHUP again; until then the running policy answers`,
      });
      // Counted too: a deploy whose new policy never took is otherwise seen only in the log.
      metrics.increment("hookgate_policy_reloads_total", { outcome: "failed" });
      reloadFailed = true;
      return next.error;
    }
    current = next.value.policy;
    reloadFailed = false;
    declareSinks(current);
    deliveries.policy(deliverySettings(current));
    metrics.increment("hookgate_policy_reloads_total", { outcome: "loaded" });
    logger.log("info", "policy reloaded", { policy: current.hash, rules: current.rules.length });
    // A reload that drops `auth` opens the gateway as a start without it would.
    warnIfOpen(current);
    return [];
  }

  async function closeOnce(): Promise<void> {
    // Said at once: a stop can take a while (connections up to the grace, then the delivery
    // thread's drain), and a log silent meanwhile cannot be told from a gateway that hangs.
    const began = performance.now();
    stopBegan = began;
    // Before the line: a start refused once it is out says that this one is stopping.
    store.stopping();
    logger.log("info", "hookgate stopping", { graceMs: CLOSE_GRACE_MS, drainMs: STOP_MS });
    let cut: NodeJS.Timeout | undefined;
    await new Promise<void>((resolve, reject) => {
      server.close((e) => (e ? reject(e) : resolve()));
      server.closeIdleConnections();
      for (const socket of connections) if (socket.bytesRead === 0) socket.destroy();
      // Requests being answered now (a body still arriving, a judgment under way): their answers
      // say `connection: close`, and Node ends the connection once each is sent.
      for (const res of answers.values()) if (!res.headersSent) res.setHeader("connection", "close");
      // A request still being sent (or a client that never stops) gets this long, then its
      // connection is cut: a stop must end. A prompt or forward call still running a little
      // before that ends with its rule's onError, so its answer is sent, not cut off (a hook
      // with no answer lets the action through, whatever onError says).
      setTimeout(() => stopping.abort(), CLOSE_GRACE_MS - ANSWER_MARGIN_MS).unref();
      cut = setTimeout(() => {
        logger.log("warn", "stopping: connections still open after the grace period are cut", {
          graceMs: CLOSE_GRACE_MS,
        });
        server.closeAllConnections();
      }, CLOSE_GRACE_MS).unref();
    }).finally(() => {
      // Every connection ended in time: none is left to cut, and a drain of the delivery thread
      // that outlasts the grace must not be logged as connections cut.
      clearTimeout(cut);
    });
    // Let the callbacks of the last answers run, then drain the delivery thread.
    await new Promise((resolve) => setImmediate(resolve));
    await closeAfterServer();
    logger.log("info", "hookgate stopped", { ms: Math.round(performance.now() - began) });
    stdout.flush();
    process.removeListener("exit", stdout.flush);
  }
}

/** The decision a send's jobs are for: their notification's id is `evt_<decision id>` (notify.ts). */
function decisionOf(messages: readonly { readonly body: DeliveryJob }[]): string | undefined {
  return messages[0]?.body.notification.id.replace(/^evt_/, "");
}

/**
 * The most bytes of notify jobs held in memory while the intake journal cannot take them:
 * `HOOKGATE_NOTIFY_MEMORY_BYTES`, or 64 MiB (journal-hold.ts `HOLD_BYTES`).
 */
function holdBytes(env: NodeJS.ProcessEnv): number {
  const text = env.HOOKGATE_NOTIFY_MEMORY_BYTES;
  if (text === undefined || text === "") return HOLD_BYTES;
  if (!/^\d{1,15}$/.test(text))
    throw new Error(
      `HOOKGATE_NOTIFY_MEMORY_BYTES=${JSON.stringify(text)} is not a number of bytes: give a whole number (${HOLD_BYTES}, 64 MiB, by default), or unset it`,
    );
  return Number(text);
}

/** How long a stop waits for requests in flight before cutting their connections. */
const CLOSE_GRACE_MS = 10_000;
/** How long before that remote calls still running are ended with their onError. */
const ANSWER_MARGIN_MS = 1000;

/**
 * stdout, guarded (adapters/log/guarded-stream.ts): a closed pipe or one not read drops log lines,
 * which stderr says, and the gateway goes on answering. One guard per process, never removed: an
 * EPIPE can surface a tick after the write that caused it.
 */
function guardedStdout(): GuardedStream {
  if (!stdoutGuard) {
    // A write to stderr that fails (a full disk under it too) comes as an `error` event, which
    // would end the process unheard: there is nothing left to tell it to.
    process.stderr.on("error", () => undefined);
    stdoutGuard = guardStream(stdoutLines(), (message) => {
      try {
        process.stderr.write(`hookgate: ${message}\n`);
      } catch {
        // stderr is gone too: nothing left to tell.
      }
    });
  }
  return stdoutGuard;
}

let stdoutGuard: GuardedStream | undefined;

/**
 * stdout as the guard writes it: a file (systemd's `StandardOutput=append:`, `> serve.log`) with
 * one synchronous write per batch on its descriptor, as Node's own stream on a file does, but not
 * given up after a write that found a full disk; a pipe, a socket or a terminal as Node's stream.
 */
function stdoutLines(): LineStream {
  try {
    const stat = fstatSync(1);
    if (stat.isFile() || (stat.isCharacterDevice() && !isatty(1))) return fileLines(1);
  } catch {
    // No descriptor 1 to look at: Node's stream says what it can.
  }
  return process.stdout;
}

const NO_SECRETS: readonly string[] = [];

export class DataDirError extends Error {}

/**
 * better-sqlite3 waits for another process's lock synchronously, holding the event loop: the
 * session store (the answering thread's only SQLite file) waits at most this long as `serve`
 * opens it, then `serve` stops, naming the file. Open, it holds the file locked until it closes
 * (adapters/session/sqlite.ts), so no other process's lock can hold a decision.
 */
const BUSY_TIMEOUT_MS = 100;

/**
 * Creates the data dir, claims it for this process and opens the intake journal and session
 * store, or says clearly why not.
 */
function openDataDir(dataDir: string): {
  journal: JournalWriter;
  sessions: ReturnType<typeof createSqliteSessionStore>;
  /** Closes the journal (again: closing it twice is safe) and the session store, and gives the data dir up. */
  close: () => void;
  /** Marks the claim as one whose serve is stopping, for a start refused meanwhile to say so. */
  stopping: () => void;
} {
  let claimed: ReturnType<typeof claim> | undefined;
  try {
    // Its files hold what agents did (notifications, tool summaries, the intake journal): a data
    // dir serve makes is its own user's alone. One that exists keeps its mode.
    makeDirectory(dataDir, 0o700);
    accessSync(dataDir, constants.W_OK);
    claimed = claim(dataDir);
    const { sessions, release: giveUp, stopping } = claimed;
    const journal = openJournalWriter(join(dataDir, JOURNAL_DIR));
    return {
      journal,
      sessions,
      stopping,
      close() {
        try {
          journal.close();
        } finally {
          sessions.close();
          giveUp();
        }
      },
    };
  } catch (e) {
    claimed?.sessions.close();
    claimed?.release();
    if (e instanceof DataDirError) throw e;
    throw dataDirError(dataDir, e);
  }
}

/**
 * One `serve` per data dir: two would read one journal and fight over its position. The claim is
 * an exclusive lock on `serve.lock`, a SQLite file held in an open transaction: the operating
 * system drops it when the process dies, however it dies, so no stale claim is ever left, and a
 * second claim in the same process is refused too. A `serve.lock` someone deleted is no claim
 * any more, so the claim also needs the intake journal free: a running serve's writer holds its
 * segment's lock in the journal directory (journal.ts), and that refuses a second one too; and
 * the session store, which a running serve holds locked from its start (adapters/session/
 * sqlite.ts), so that one whose lock files and journal segments were all deleted is still told
 * apart. The claim opens the session store: its lock is taken there, before serve.pid is written.
 */
function claim(dataDir: string): {
  sessions: ReturnType<typeof createSqliteSessionStore>;
  release: () => void;
  stopping: () => void;
} {
  const path = join(dataDir, "serve.lock");
  const pidPath = join(dataDir, "serve.pid");
  const stoppingPath = join(dataDir, "serve.stopping");
  const journalDir = join(dataDir, JOURNAL_DIR);
  // Which process, so that the operator stops it rather than delete a lock taken for stale.
  const refuse = (holds: string) => {
    const running = runningServe(dataDir);
    const pid = running === undefined ? "" : ` (pid ${running.pid})`;
    // Stopped already (a restart that starts the next one at once): told to stop it, or to take
    // another data dir, which leaves its queue's jobs behind, the operator had nothing right to do.
    if (running?.stopping)
      return new DataDirError(
        `cannot use the data dir ${dataDir} yet: the hookgate serve${pid} on it is stopping; ${holds}. Its stop takes up to ${(CLOSE_GRACE_MS + STOP_MS) / 1000} s (its open connections, then the deliveries in flight): wait for that process to exit, then start again`,
      );
    return new DataDirError(
      `cannot use the data dir ${dataDir}: another hookgate serve${pid} is running on it; ${holds}. Stop that process, or give each process its own --data-dir`,
    );
  };
  let lock: Database.Database | undefined;
  try {
    lock = new Database(path, { timeout: 0 });
    lock.exec("BEGIN EXCLUSIVE");
  } catch (e) {
    lock?.close();
    if ((e as { code?: string }).code === "SQLITE_BUSY")
      throw refuse(
        `it holds ${path}, a lock the operating system drops when that process ends, so it is never stale: do not delete it`,
      );
    // SQLite names no file ("file is not a database"), and the fix says to move "that file" aside.
    throw new Error(`cannot lock ${path}: ${errorMessage(e)}`, { cause: e });
  }
  try {
    if (journalHeld(journalDir))
      throw refuse(
        `it writes the intake journal in ${journalDir} and holds its lock there (${path} was deleted, which freed that one); both are locks the operating system drops when that process ends, so they are never stale: do not delete them`,
      );
  } catch (e) {
    lock.close();
    throw e;
  }
  let sessions: ReturnType<typeof createSqliteSessionStore>;
  try {
    sessions = openNamed(join(dataDir, "sessions.sqlite"), (file) => {
      try {
        return createSqliteSessionStore(file, BUSY_TIMEOUT_MS);
      } catch (e) {
        // Held by a process serve.pid does not name (a sqlite3 shell), the file's own failure says so.
        if ((e as { code?: string }).code !== "SQLITE_BUSY" || runningServe(dataDir) === undefined) throw e;
        throw refuse(
          `it holds ${file} locked (${path} and the intake journal's locks were deleted, which freed those); the operating system drops every one of them when that process ends, so they are never stale: do not delete them`,
        );
      }
    });
  } catch (e) {
    lock.close();
    throw e;
  }
  try {
    // A serve killed as it stopped left its serve.stopping: in a container, the pid it names is
    // this one's too.
    rmSync(stoppingPath, { force: true });
    writeFileSync(pidPath, `${process.pid}\n`);
  } catch {
    // Only a message's detail: the claim holds without it.
  }
  const release = () => {
    if (!lock.open) return;
    try {
      rmSync(stoppingPath, { force: true });
      rmSync(pidPath, { force: true });
    } catch {
      // Left behind (a data dir made read-only meanwhile), it names a process that has ended,
      // which a refusal never says (runningServe); thrown, it ended the stop before the lock, the
      // record file and the egress were closed, with exit 1.
    }
    lock.close();
  };
  // serve.pid keeps its one number, which scripts and process managers read (`kill -HUP $(cat …)`).
  const stopping = () => {
    if (!lock.open) return;
    try {
      writeFileSync(stoppingPath, `${process.pid}\n`);
    } catch {
      // Only a message's detail, as the pid is.
    }
  };
  return { sessions, release, stopping };
}

/** The process serve.pid names, if it runs, and whether serve.stopping says it has begun to stop. */
function runningServe(dataDir: string): { pid: number; stopping: boolean } | undefined {
  const pid = pidIn(join(dataDir, "serve.pid"));
  if (pid === undefined) return undefined; // an older serve holds the lock, or it has not written its pid yet
  // Left by a serve killed as it stopped, it names another process.
  const stopping = pidIn(join(dataDir, "serve.stopping")) === pid;
  try {
    process.kill(pid, 0);
    return { pid, stopping };
  } catch (e) {
    // EPERM: it runs, as another user; ESRCH: the file outlived a process killed before.
    return (e as NodeJS.ErrnoException).code === "EPERM" ? { pid, stopping } : undefined;
  }
}

function pidIn(path: string): number | undefined {
  let pid: number;
  try {
    pid = Number(readFileSync(path, "utf8").trim());
  } catch {
    return undefined;
  }
  return Number.isSafeInteger(pid) && pid > 0 ? pid : undefined;
}

/** What a data dir's SQLite file moved aside at the start takes with it, whichever file failed. */
const MOVED_ASIDE =
  "; a queue.sqlite moved aside takes its jobs and dead letters with it, a sessions.sqlite the tool calls it remembered, a serve.lock nothing";

function dataDirError(dataDir: string, e: unknown): DataDirError {
  const why = errorMessage(e);
  const fix =
    fileInPlace(dataDir, why) ??
    notWritable(dataDir, why) ??
    sqliteFix(why, { movedAside: MOVED_ASIDE }) ??
    "pass --data-dir with a writable directory";
  return new DataDirError(`cannot use the data dir ${dataDir} (${why}); ${fix}`);
}

/**
 * What to do about a file where the data dir keeps a directory (its `intake` journal), which the
 * failure names (`ENOTDIR: not a directory, scandir '…/intake'`): that file is in the way, and
 * another --data-dir would leave it there. Undefined for any other failure.
 */
function fileInPlace(dataDir: string, why: string): string | undefined {
  const path = /\b(?:ENOTDIR|EEXIST)\b[^']*'([^']+)'/.exec(why)?.[1];
  if (path === undefined) return undefined;
  if (resolve(path) === resolve(dataDir))
    return `${dataDir} is a file, not a directory: pass --data-dir a directory, or one that is yet to be made`;
  if (!isInside(resolve(dataDir), resolve(path))) return undefined;
  try {
    if (!statSync(path).isFile()) return undefined;
  } catch {
    return undefined;
  }
  const what = basename(path) === "intake" ? "its intake journal" : "a directory";
  return `${path} is a file, where hookgate keeps ${what}: move that file aside (to see what it is) or remove it, and start again`;
}

const isInside = (dir: string, path: string) => path.startsWith(`${dir}${sep}`);

/**
 * What to do about a data dir, or files in it, that this user may not read and write, after a
 * failure that may be that (SQLite says only "unable to open database file" or "attempt to write
 * a readonly database"): a `serve` run once as another user (root, with sudo) made them, and the
 * directory itself may well be writable. Another --data-dir, which was all it said, leaves the
 * jobs in the queue file undelivered. Undefined when every one can be read and written.
 */
function notWritable(dataDir: string, why: string): string | undefined {
  if (!/\b(?:EACCES|EPERM)\b|unable to open database file|readonly database/.test(why)) return undefined;
  const denied: string[] = [];
  const look = (path: string) => {
    try {
      accessSync(path, constants.R_OK | constants.W_OK);
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code === "EACCES" || code === "EPERM") denied.push(path);
    }
  };
  const list = (dir: string) => {
    try {
      return readdirSync(dir).map((name) => join(dir, name));
    } catch {
      return []; // not there, or not readable: the directory itself is named then
    }
  };
  look(dataDir);
  const entries = list(dataDir);
  // The file the failure names, with its SQLite companions (-wal, -shm, -journal) and, a
  // directory, its files: another file of someone else's (a serve.lock-journal root's kill left)
  // is no reason for this failure. Every one when none is named.
  const named = entries.filter((path) => why.includes(path));
  for (const path of entries) {
    if (named.length > 0 && !named.some((n) => path === n || path.startsWith(`${n}-`))) continue;
    look(path);
    if (named.includes(path) || basename(path) === JOURNAL_DIR) for (const inside of list(path)) look(inside);
  }
  if (denied.length === 0) return undefined;
  const shown = denied.slice(0, 3).map((path) => {
    const owner = ownerOf(path);
    return owner === undefined ? path : `${path} (owner uid ${owner})`;
  });
  const more = denied.length > shown.length ? ` and ${denied.length - shown.length} more` : "";
  const uid = process.getuid?.();
  const user = uid === undefined ? "this user" : `this user (uid ${uid})`;
  // Its own files with their mode taken away (chmod) want the mode back, not another owner.
  const own = uid !== undefined && denied.every((path) => ownerOf(path) === uid);
  const fix = own
    ? "give them back their owner's read and write (chmod u+rw, and u+x on a directory)"
    : "give the data dir and everything in it to the user serve runs as (chown -R; a serve run once as another user, with sudo say, leaves its files so), or run serve as their owner";
  // A queue file holds jobs not yet delivered, which another --data-dir leaves behind.
  const queued = statSync(join(dataDir, "queue.sqlite"), { throwIfNoEntry: false }) !== undefined;
  return `${shown.join(", ")}${more} cannot be read and written by ${user}: ${fix}${queued ? "; another --data-dir would leave the jobs in its queue.sqlite undelivered" : ", or pass another --data-dir"}`;
}

function ownerOf(path: string): number | undefined {
  try {
    return statSync(path).uid;
  } catch {
    return undefined;
  }
}

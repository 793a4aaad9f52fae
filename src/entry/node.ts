/**
 * Composition root for plain Node: a node:http server whose hook routes are answered by
 * node-listener.ts and everything else by the Hono app (through @hono/node-server), the policy from a file
 * (reloaded on SIGHUP; a reload that fails validation keeps the running policy), JSON logs on
 * stdout.
 */
import { randomUUID } from "node:crypto";
import { accessSync, constants, mkdirSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { getRequestListener } from "@hono/node-server";
import { createUndiciEgress } from "../adapters/egress/undici.js";
import { nodeHmacSha256, nodeSha256 } from "../adapters/hash/node-crypto.js";
import { batchLines, createJsonLogger, scrubLines } from "../adapters/log/json-lines.js";
import { createPrometheusRegistry } from "../adapters/metrics/prometheus.js";
import { formatIssues, loadPolicyFile } from "../adapters/policy-source/file.js";
import { createSqliteQueue } from "../adapters/queue/sqlite.js";
import { createJsonlRecorder } from "../adapters/record/jsonl.js";
import { createSqliteSessionStore } from "../adapters/session/sqlite.js";
import { startConsumer } from "../app/consumer.js";
import { createDeliverer } from "../app/deliver.js";
import { createNotifier } from "../app/notify.js";
import { createRemoteActions } from "../app/remote-actions.js";
import type { DeliveryJob } from "../core/delivery.js";
import { reportRefusals } from "../core/egress/report.js";
import { scrubbingWith } from "../core/mask.js";
import type { Policy, PolicyIssue } from "../core/policy.js";
import type { Logger } from "../core/ports.js";
import { createApp } from "../http/app.js";
import { hookListener } from "./node-listener.js";

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
  /** Re-reads the policy file; on failure keeps the running policy and returns the problems. */
  reload(): Promise<readonly PolicyIssue[]>;
  close(): Promise<void>;
}

export class PolicyLoadError extends Error {
  constructor(
    readonly path: string,
    readonly issues: readonly PolicyIssue[],
  ) {
    super(`policy ${path} is invalid:\n${formatIssues(issues)}`);
  }
}

export async function startGateway(options: ServeOptions): Promise<RunningGateway> {
  // Audit lines go out once per event-loop turn (batchLines); what is buffered is written on
  // close and on process exit. Each batch is scrubbed of the running policy's secret values,
  // read at write time: a SIGHUP reload can change them.
  let running: (() => Policy) | undefined;
  const stdout = batchLines(
    scrubLines(
      process.stdout,
      scrubbingWith(() => running?.().secrets ?? NO_SECRETS),
    ),
  );
  process.once("exit", stdout.flush);
  const logger = options.logger ?? createJsonLogger(stdout);
  const env = options.env ?? process.env;
  const policyDeps = { env: (name: string) => env[name], sha256: nodeSha256 };
  const load = async () => {
    const loaded = await loadPolicyFile(options.policyPath, policyDeps);
    if (loaded.ok) {
      for (const w of loaded.value.warnings)
        logger.log("warn", "policy warning", { path: w.path, problem: w.message });
    }
    return loaded;
  };

  const first = await load();
  if (!first.ok) throw new PolicyLoadError(options.policyPath, first.error);
  let current = first.value.policy;
  running = () => current;

  const metrics = createPrometheusRegistry();
  const egress = createUndiciEgress({
    policy: () => current.egress,
    onRefusal: reportRefusals(logger, metrics),
  });
  const clock = { now: Date.now, monotonic: () => performance.now() };
  const remote = createRemoteActions({
    egress: egress.send,
    env: policyDeps.env,
    clock,
    sha256: nodeSha256,
    metrics,
  });
  const recorder =
    options.recordPath === undefined
      ? undefined
      : createJsonlRecorder(options.recordPath, (e) =>
          logger.log("error", "recording failed; no more records are written", { error: e.message }),
        );
  const store = openDataDir(options.dataDir);
  const recovered = store.queue.recoverLeases();
  if (recovered > 0) logger.log("info", "took back jobs leased by the previous process", { jobs: recovered });
  const notifier = createNotifier({
    queue: store.queue,
    clock,
    logger,
    metrics,
    sessions: store.sessions,
    // Enqueued before the answer goes out: an answered event survives a SIGKILL (notify.ts).
    defer: (task) => task(),
  });
  const deliverer = createDeliverer({
    policy: () => current,
    egress: egress.send,
    env: policyDeps.env,
    clock,
    random: Math.random,
    hmac: nodeHmacSha256,
  });
  const consumer = startConsumer({ queue: store.queue, deliverer, logger, metrics });
  const deps = {
    remote,
    notifier,
    recorder: recorder?.record,
    metrics,
    metricsText: () => metrics.render(),
    policy: () => current,
    clock,
    newId: randomUUID,
    sha256: nodeSha256,
    logger,
  };
  const app = createApp(deps);
  const server = createServer(hookListener(deps, getRequestListener(app.fetch, { hostname: options.host })));
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port, options.host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  const host = options.host.includes(":") ? `[${options.host}]` : options.host;
  logger.log("info", "hookgate listening", {
    url: `http://${host}:${port}`,
    policy: current.hash,
    rules: current.rules.length,
  });

  return {
    url: `http://${host}:${port}`,
    port,
    policy: () => current,
    async reload() {
      const next = await load();
      if (!next.ok) {
        logger.log("error", "policy reload failed; keeping the running policy", {
          policy: current.hash,
          problems: next.error.map((i) => `${i.path}: ${i.message}`),
        });
        return next.error;
      }
      current = next.value.policy;
      logger.log("info", "policy reloaded", { policy: current.hash, rules: current.rules.length });
      return [];
    },
    async close() {
      await new Promise<void>((resolve, reject) => {
        server.close((e) => (e ? reject(e) : resolve()));
        if ("closeIdleConnections" in server) server.closeIdleConnections();
      });
      // Let the callbacks of the last answers run, then drain the consumer.
      await new Promise((resolve) => setImmediate(resolve));
      await consumer.stop();
      store.queue.close();
      store.sessions.close();
      await recorder?.close();
      await egress.close();
      stdout.flush();
      process.removeListener("exit", stdout.flush);
    },
  };
}

const NO_SECRETS: readonly string[] = [];

export class DataDirError extends Error {}

/**
 * better-sqlite3 waits for another process's lock synchronously, holding the event loop: the
 * gateway waits at most this long, then the enqueue fails (logged, counted) and decisions go on.
 */
const BUSY_TIMEOUT_MS = 100;

/** Creates the data dir and opens the embedded queue and session store, or says clearly why not. */
function openDataDir(dataDir: string) {
  try {
    mkdirSync(dataDir, { recursive: true });
    accessSync(dataDir, constants.W_OK);
    return {
      queue: createSqliteQueue<DeliveryJob>({
        path: join(dataDir, "queue.sqlite"),
        busyTimeoutMs: BUSY_TIMEOUT_MS,
      }),
      sessions: createSqliteSessionStore(join(dataDir, "sessions.sqlite"), BUSY_TIMEOUT_MS),
    };
  } catch (e) {
    const why = e instanceof Error ? e.message : String(e);
    throw new DataDirError(
      `cannot use the data dir ${dataDir} (${why}); pass --data-dir with a writable directory`,
    );
  }
}

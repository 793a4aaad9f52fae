/**
 * Composition root for Cloudflare Workers: `fetch` answers hooks with the one Hono app, `queue`
 * delivers the notify jobs Cloudflare Queues pushes back. The policy is the `HOOKGATE_POLICY`
 * secret (JSON text; its `env:NAME` references read the Worker's other bindings), compiled once
 * per isolate and again only when its text changes. A missing or invalid policy never switches
 * the guard off: hooks get a 2xx fail-closed answer and /healthz a 500 (http/broken-config.ts).
 * Bindings and their setup: wrangler.toml and infra/README.md (Cloudflare Workers).
 *
 * A cold start evaluates only what this module imports statically (scripts/build-worker.mjs
 * bundles the rest as modules of their own, loaded with import()): the regex and glob engines
 * when the policy has such patterns, the Bash splitter when it has `Bash(…)` rules, remote actions (prompt, forward), the deliverer and the
 * egress guard they share when first used. Most hooks need none of them.
 */
import { webCryptoSha256 } from "../adapters/hash/web-crypto.js";
import { createLineFormat, createLineLogger, LOG_LEVELS } from "../adapters/log/json-lines.js";
import {
  type AnalyticsEngineLike,
  createAnalyticsEngineMetrics,
} from "../adapters/metrics/analytics-engine.js";
import type {
  DeadLetterEnvelope,
  Envelope,
  PushedBatch,
  QueueProducerBinding,
} from "../adapters/queue/cloudflare.js";
import type { KvNamespaceLike } from "../adapters/session/kv.js";
import type { Deliverer } from "../app/deliver.js";
import type { Notifier, StoreFailures } from "../app/notify.js";
import type { RemoteActions } from "../app/remote-actions.js";
import { createLogRecorder, recordsAsked } from "../app/replay.js";
import type { DeliveryJob } from "../core/delivery.js";
import { errorMessage } from "../core/errors.js";
import { scrubbingWith } from "../core/mask.js";
import { withPatternEngines } from "../core/pattern-engines.js";
import {
  describeProblems,
  loadPolicy,
  looksLikeFilePath,
  notifies,
  type Policy,
  type PolicyDeps,
} from "../core/policy.js";
import type { Egress, Logger, LogLevel, Metrics } from "../core/ports.js";
import { nameToShow, variableNamedHere, variableShown } from "../core/secret-ref.js";
import { createApp } from "../http/app.js";
import { createBrokenConfigApp } from "../http/broken-config.js";
import {
  BODY_DEADLINE_MS,
  bodyDeadline,
  createBodyBudget,
  type HoldExpiry,
  readBody,
  SHADOW_WAITING_BODY_BUDGET_BYTES,
  UNAUTHENTICATED_BODY_BUDGET_BYTES,
  WORKERS_BODY_BUDGET_BYTES,
  WORKERS_MAX_BODY_BYTES,
} from "../http/read-body.js";
import { lazyNotifier, lazyRemoteActions } from "./lazy-actions.js";
import { once } from "./once.js";

/** What the notify path needs, loaded with the first event a notify rule applies to. */
const notifyModules = once(() =>
  Promise.all([
    import("../app/notify.js"),
    import("../adapters/queue/cloudflare.js"),
    import("../adapters/session/kv.js"),
  ]),
);

export interface WorkerEnv {
  /** The policy document as JSON text: a secret (`wrangler secret put HOOKGATE_POLICY`). */
  readonly HOOKGATE_POLICY?: string;
  readonly HOOKGATE_QUEUE?: QueueProducerBinding<Envelope<DeliveryJob>>;
  readonly HOOKGATE_DLQ?: QueueProducerBinding<DeadLetterEnvelope<unknown>>;
  /** KV for the last tool call per session (Notification enrichment); optional. */
  readonly HOOKGATE_SESSIONS?: KvNamespaceLike;
  /** Workers Analytics Engine dataset for the counters; optional. */
  readonly HOOKGATE_METRICS?: AnalyticsEngineLike;
  /** DoH JSON endpoint for the egress guard's look-ups (default Cloudflare's). */
  readonly HOOKGATE_DOH_ENDPOINT?: string;
  readonly HOOKGATE_LOG_LEVEL?: string;
  /**
   * "1" writes a replayable "hook record" log line per decision (`hookgate replay` reads them); a
   * [vars] entry `HOOKGATE_RECORD = 1` arrives as the number 1 (wrangler binds a value that is no
   * string as JSON, `true` as a boolean, which is no 1: `recording`).
   */
  readonly HOOKGATE_RECORD?: string | number | boolean;
  readonly [name: string]: unknown;
}

export interface ExecutionContextLike {
  waitUntil(promise: Promise<unknown>): void;
}

type IsolateState =
  | {
      readonly ok: true;
      readonly policy: Policy;
      readonly remote: RemoteActions;
      readonly deliverer: Deliverer;
    }
  | { readonly ok: false; readonly app: { fetch(r: Request): Response | Promise<Response> } };

/** How long jobs wait, sent again each time, while the policy is broken (no bound on the total). */
const BROKEN_CONFIG_RETRY_SECONDS = 300;

/** The bindings of the latest invocation: env is per isolate, so every invocation sees the same. */
let bindings: WorkerEnv = {};
let cached: { readonly text: string | undefined; readonly state: IsolateState } | undefined;

const clock = { now: () => Date.now(), monotonic: () => performance.now() };
/**
 * A policy's `env:NAME` as the binding's text. A binding that is set but no text reads as unset,
 * said once per isolate and value: reported as "not set" alone, it sent the operator looking for
 * a variable that is there.
 */
const envReader = (name: string) => {
  const value = bindings[name];
  if (typeof value === "string") return value;
  const wrong = notText(name);
  if (wrong && toldNotText.get(name) !== value) {
    toldNotText.set(name, value);
    logger.log(
      "error",
      `${variableShown(name)} is bound as ${wrong.what}, which is no text: read as not set`,
      {
        fix: wrong.fix,
      },
    );
  }
  return undefined;
};

/** The value of a binding that is no text last told, per name. */
const toldNotText = new Map<string, unknown>();

/**
 * What the binding `name` is when it is set but no text, and how to make it text; undefined for
 * text or none. wrangler binds a [vars] value that is no string as JSON (`KEY = 1`, a table). A
 * Secrets Store secret is read with an async get(), and a policy's env: values are read as it
 * loads, synchronously; in workerd it looks like any other binding, so it is named among them.
 */
function notText(name: string): { what: string; fix: string } | undefined {
  const value: unknown = bindings[name];
  if (value === undefined || typeof value === "string") return undefined;
  // A name that reads like a secret is not repeated here either (secret-ref.ts nameToShow).
  const shown = nameToShow(name) ?? "NAME";
  const put = `\`wrangler secret put ${shown}\``;
  if (
    typeof value !== "object" ||
    value === null ||
    Array.isArray(value) ||
    Object.getPrototypeOf(value) === Object.prototype
  ) {
    const json =
      typeof value !== "object" ? `a ${typeof value}` : Array.isArray(value) ? "an array" : "a table";
    return { what: `${json} from [vars]`, fix: `quote it in [vars] (${shown} = "…"), or set it with ${put}` };
  }
  return {
    what: "a binding of another kind (a Secrets Store secret, a KV namespace, a service?)",
    fix: `a Worker reads env: values as text only, as it loads the policy, so not from a Secrets Store secret: set ${shown} with ${put} or as a [vars] text, and remove or rename the binding of that name`,
  };
}
const newId = () => crypto.randomUUID();

/**
 * Why `name` reads as unset, in the reasons a rule's or a delivery's failure gives at call time
 * (a decision's reason, a dead letter's error): a binding that is no text, as a policy's load
 * says it, not "is not set".
 */
const unsetReason = (name: string) => {
  const wrong = notText(name);
  return wrong ? `is bound as ${wrong.what}, not as text` : "is not set";
};

/** The HOOKGATE_LOG_LEVEL that is no level last said so: said once per isolate and value. */
let toldLevel: string | undefined;

/**
 * The lowest level written: HOOKGATE_LOG_LEVEL's, looked up among LOG_LEVELS' own names
 * (`toString` or `constructor` read Object.prototype and let every level through); any other
 * value counts as `info` and is said once in a warning.
 */
function minLevel(): number {
  const name: unknown = bindings.HOOKGATE_LOG_LEVEL;
  if (name === undefined || name === "") return LOG_LEVELS.info;
  if (typeof name === "string" && Object.hasOwn(LOG_LEVELS, name)) return LOG_LEVELS[name as LogLevel];
  const value = typeof name === "string" ? name : `(a ${typeof name})`;
  if (toldLevel !== value) {
    toldLevel = value;
    logger.log("warn", "HOOKGATE_LOG_LEVEL is no level: writing from info up", {
      value,
      levels: Object.keys(LOG_LEVELS).join(", "),
    });
  }
  return LOG_LEVELS.info;
}

/** The HOOKGATE_RECORD that is neither on nor off last said so: said once per isolate and value. */
let toldRecord: unknown;

/**
 * Whether HOOKGATE_RECORD turns hook records on (`recordsAsked`; wrangler binds a [vars] value that
 * is no string as JSON). A value neither on nor off is warned of once per isolate and value.
 */
function recording(): boolean {
  const value: unknown = bindings.HOOKGATE_RECORD;
  const asked = recordsAsked(value);
  if (asked !== undefined) return asked;
  if (toldRecord !== value) {
    toldRecord = value;
    logger.log("warn", "HOOKGATE_RECORD is neither 1 nor 0: writing no hook records", {
      value: typeof value === "string" ? value : `(a ${typeof value})`,
      fix: 'set it to 1 (HOOKGATE_RECORD = "1" or 1 in [vars]) to write them, or to 0 or unset for none',
    });
  }
  return false;
}

const NO_SECRETS: readonly string[] = [];
/** The secret values of the isolate's policy (none while it is broken or not loaded yet). */
const scrub = scrubbingWith(() => (cached?.state.ok ? cached.state.policy.secrets : NO_SECRETS));

/** A line on the console, scrubbed of the policy's secret values, by the method of its level. */
function write(level: LogLevel, line: string): void {
  const text = scrub(line);
  if (level === "error") console.error(text);
  else if (level === "warn") console.warn(text);
  else console.log(text);
}

/** The lines Node and Lambda write (json-lines.ts), with no line break: the console adds its own. */
const logger: Logger = createLineLogger(createLineFormat(Date.now, ""), minLevel, write);

/**
 * The bindings read besides the policy: the method that tells each one's kind, and that kind as
 * wrangler.toml declares it.
 */
const BINDING_KINDS = {
  HOOKGATE_QUEUE: ["sendBatch", "a queue producer ([[queues.producers]])"],
  HOOKGATE_DLQ: ["send", "a queue producer ([[queues.producers]])"],
  HOOKGATE_SESSIONS: ["get", "a KV namespace ([[kv_namespaces]])"],
  HOOKGATE_METRICS: ["writeDataPoint", "an Analytics Engine dataset ([[analytics_engine_datasets]])"],
} as const;
type BindingName = keyof typeof BINDING_KINDS;

/** The value of another kind last told, per binding: said once per isolate and value. */
const toldBindings = new Map<BindingName, unknown>();

/**
 * The binding `name` when it is of its kind, else undefined. One of another kind under that name
 * (a [vars] entry, a KV namespace where a queue belongs) is said once: used, each call failed as
 * "… is not a function", a notify event's send only after its three tries, and a counter's write
 * warned at every increment.
 */
function binding<T>(name: BindingName): T | undefined {
  const value: unknown = bindings[name];
  if (value === undefined) return undefined;
  const [method, kind] = BINDING_KINDS[name];
  if (typeof (value as Record<string, unknown> | null)?.[method] === "function") return value as T;
  if (toldBindings.get(name) !== value) {
    toldBindings.set(name, value);
    logger.log("error", `${name} is bound as something other than ${kind}: left unused`, {
      fix: bindingFix(name),
    });
  }
  return undefined;
}

/** Why the binding `name` cannot be used: missing, or of another kind. */
const bindingProblem = (name: BindingName) =>
  bindings[name] === undefined
    ? `the ${name} binding is missing`
    : `the ${name} binding is not ${BINDING_KINDS[name][1]}`;

/** How to make the binding `name` usable: bind it, and where one of another kind holds its name, remove that. */
const bindingFix = (name: BindingName) =>
  `bind ${name} in wrangler.toml as ${BINDING_KINDS[name][1]}${
    bindings[name] === undefined ? "" : ", and remove the [vars] entry or other binding of that name"
  }`;

/**
 * `bindingProblem` as an error, with `bindingFix`: what /healthz says of it, said in each failed
 * send too (one of another kind said only what was wrong, not to remove it).
 */
const unusable = (name: BindingName) => new Error(`${bindingProblem(name)}: ${bindingFix(name)}`);

/** Counters as Analytics Engine data points (index = counter name); nothing when unbound. */
const metrics: Metrics = createAnalyticsEngineMetrics(
  () => binding<AnalyticsEngineLike>("HOOKGATE_METRICS"),
  logger,
);

/** The compiled policy and what hangs on it, built once per isolate and policy text. */
async function isolateState(env: WorkerEnv): Promise<IsolateState> {
  bindings = env;
  const value: unknown = env.HOOKGATE_POLICY;
  // A [vars] table, a JSON variable or another binding is no text: keyed apart from "not set".
  const text = typeof value === "string" || value === undefined ? value : `\0${typeof value}`;
  if (cached && cached.text === text) return cached.state;
  const loaded = await loadPolicyText(value);
  // Another invocation may have loaded the same text meanwhile: keep its state (logged once).
  if (cached && cached.text === text) return cached.state;
  let state: IsolateState;
  if ("problem" in loaded) {
    state = { ok: false, app: createBrokenConfigApp(loaded.problem, logger, newId, bodyDeadline) };
  } else {
    state = buildState(loaded.policy, env);
    logger.log("info", "policy loaded", { policy: loaded.policy.hash, rules: loaded.policy.rules.length });
  }
  cached = { text, state };
  return state;
}

/** A body a Worker holds in its 128 MB of memory, whatever defaults.maxBodyBytes allows. */
const BODY_CEILING = {
  bytes: WORKERS_MAX_BODY_BYTES,
  setBy: "the Workers ceiling, within an isolate's 128 MB of memory, whatever defaults.maxBodyBytes says",
};

/**
 * The bytes of hook bodies the isolate holds at once, whatever request holds them: while they
 * arrive, and while their hooks wait on prompt and forward rules (remote-actions.ts
 * `waitingBudget`). Each request's app is made anew, so the budget is the isolate's, not the
 * app's. A body past it is refused at once, never left to wait for room: code resumed from
 * another request cannot do I/O for this one (remote-actions.ts `Semaphore`).
 */
const bodyBudget = createBodyBudget(WORKERS_BODY_BUDGET_BYTES, holdExpiry());
/** Bodies no token vouches for, held apart as on Node, so that they cannot crowd out a team's. */
const unauthenticatedBodyBudget = createBodyBudget(UNAUTHENTICATED_BODY_BUDGET_BYTES, holdExpiry());

/**
 * When a hold on the isolate's budgets is over at the latest, however its request went: a request
 * the runtime stops (past its CPU limit, or 30 s after its client hung up) never ends its holds,
 * and they are dropped then (read-body.ts `createBodyBudget`). A body arriving holds from the
 * start of its reading until the body deadline at most (BODY_DEADLINE_MS, 60 s), and the runtime
 * sets no time limit of its own on a request whose client stays connected; a hook waiting on
 * remote rules holds within its request's deadline (REQUEST_BUDGET_MS, 28 s from its arrival). So
 * 60 s from a hold's start: the shorter 28 s or the 30 s after a hang-up would drop the holds of
 * bodies still arriving, uncounted while the isolate goes on holding them.
 */
function holdExpiry(): HoldExpiry {
  return { holdMs: BODY_DEADLINE_MS, monotonic: clock.monotonic };
}
/**
 * Hooks waiting on shadow rules alone, held apart as on Node, so that a slow shadow model never
 * fills `bodyBudget` and has other hooks refused or their enforcing rules answered with onError.
 */
const shadowWaitingBudget = createBodyBudget(SHADOW_WAITING_BODY_BUDGET_BYTES, holdExpiry());

const PUT_POLICY = "jq -c . policy.json | wrangler secret put HOOKGATE_POLICY";

async function loadPolicyText(text: unknown): Promise<{ policy: Policy } | { problem: string }> {
  if (text !== undefined && typeof text !== "string")
    return {
      problem: `HOOKGATE_POLICY is bound as something other than text (a [vars] table, a KV namespace?): remove that binding and put the policy as a secret (${PUT_POLICY})`,
    };
  if (text === undefined || text.trim() === "")
    return {
      problem: `HOOKGATE_POLICY is not set (${PUT_POLICY}; for wrangler dev, a HOOKGATE_POLICY line in .dev.vars)`,
    };
  try {
    const deps: PolicyDeps = { env: envReader, sha256: webCryptoSha256 };
    const loaded = await withPatternEngines(() => loadPolicy(text, deps));
    if (!loaded.ok && looksLikeFilePath(text))
      return {
        problem: `HOOKGATE_POLICY holds what looks like a file's path, but takes the policy's JSON itself (${PUT_POLICY})`,
      };
    if (!loaded.ok)
      return {
        problem: `HOOKGATE_POLICY is invalid: ${describeProblems(loaded.error)}`,
      };
    for (const w of loaded.value.warnings) {
      // "NAME is not set" where NAME is bound, but as no text: said as what it is. The warning
      // names the variable as variableNamedHere does, withheld where it reads like a secret.
      const wrong = w.unsetVariable === undefined ? undefined : notText(w.unsetVariable);
      const named = w.unsetVariable === undefined ? "" : variableNamedHere(w.unsetVariable);
      const problem = wrong
        ? w.message.replace(`${named} is not set`, `${named} is bound as ${wrong.what}, which is no text`)
        : w.message;
      // An unset one is a secret never put: said so, as Node's reload says to restart serve.
      const fix =
        wrong?.fix ??
        (w.unsetVariable === undefined
          ? undefined
          : `set it with \`wrangler secret put ${nameToShow(w.unsetVariable) ?? "NAME"}\``);
      logger.log("warn", "policy warning", { path: w.path, problem, ...(fix && { fix }) });
    }
    const maxBodyBytes = loaded.value.policy.defaults.maxBodyBytes;
    if (maxBodyBytes > WORKERS_MAX_BODY_BYTES)
      logger.log("warn", "policy warning", {
        path: "defaults.maxBodyBytes",
        problem: `is ${maxBodyBytes}, above the ${WORKERS_MAX_BODY_BYTES} bytes (16 MiB) a Worker reads within an isolate's 128 MB of memory: a larger body gets defaults.onError with BODY_TOO_LARGE; set it to ${WORKERS_MAX_BODY_BYTES} or less`,
      });
    return { policy: loaded.value.policy };
  } catch (e) {
    return { problem: `HOOKGATE_POLICY could not be loaded: ${errorMessage(e)}` };
  }
}

function buildState(policy: Policy, env: WorkerEnv): IsolateState {
  const egress = once(async () => {
    const { createDohResolver, createWorkersEgress, reportRefusals } = await import("./workers-egress.js");
    return createWorkersEgress({
      policy: () => policy.egress,
      resolve: createDohResolver(env.HOOKGATE_DOH_ENDPOINT ? { endpoint: env.HOOKGATE_DOH_ENDPOINT } : {}),
      onRefusal: reportRefusals(logger, metrics),
    }).send;
  });
  const send: Egress = async (request) => (await egress())(request);
  const remote = lazyRemoteActions(
    once(async () => {
      const { createRemoteActions } = await import("../app/remote-actions.js");
      return createRemoteActions({
        egress: send,
        env: envReader,
        unsetReason,
        clock,
        sha256: webCryptoSha256,
        metrics,
        waitingBudget: bodyBudget,
        shadowWaitingBudget,
      });
    }),
  );
  const deliverer = once(async () => {
    const { createDeliverer } = await import("../app/deliver.js");
    return createDeliverer({
      policy: () => policy,
      egress: send,
      env: envReader,
      unsetReason,
      clock,
      random: Math.random,
    });
  });
  return {
    ok: true,
    policy,
    remote,
    deliverer: { deliver: async (...args) => (await deliverer()).deliver(...args) },
  };
}

/**
 * How long a request may take, from its arrival, before its deadline (src/core/deadline.ts) ends
 * its remote calls: 2 s inside the 30 s the runtime gives a request whose client hung up, which
 * leaves it the time to write its audit line and enqueue its notify work. A longer
 * `defaults.deadlineMs` is capped to it.
 */
const REQUEST_BUDGET_MS = 28_000;

/**
 * A client that hangs up cancels its request, and with it whatever the request has still to do:
 * a prompt rule's model call (which an identical event may be waiting for, src/app/remote-actions.ts),
 * the decision's audit line, its notify work. Held in waitUntil, the handling runs on, as it does
 * on Node, where a hang-up stops nothing, for up to the 30 s the runtime gives waitUntil after a
 * hang-up; REQUEST_BUDGET_MS ends every request inside them, whenever its client hangs up.
 */
function fetch(request: Request, env: WorkerEnv, ctx: ExecutionContextLike): Promise<Response> {
  const ends = clock.monotonic() + REQUEST_BUDGET_MS;
  const answer = handle(request, env, ctx, () => ends - clock.monotonic()).then((response) =>
    setAside(request, response),
  );
  ctx.waitUntil(answer.catch(() => undefined));
  return answer;
}

/** How long a body no route read may take to arrive before its answer goes out anyway. */
const SET_ASIDE_MS = 500;

/**
 * A body no route read (a POST to no route, a 405, simulate's 400) is read and set aside before
 * the answer: workerd cannot read a body once the answer is sent, and closes a keep-alive
 * connection whose body was left unread without saying so, so the client's next request on it
 * (an agent's next hook) fails with a reset. It waits SET_ASIDE_MS at most, as @hono/node-server
 * drains such a body after Node's answer: a stalled sender gets its 404 or 405 then, not at the
 * body deadline, and its connection, which it could send nothing more on anyway, closes.
 */
async function setAside(request: Request, response: Response): Promise<Response> {
  if (request.body !== null && !request.bodyUsed)
    await readBody(request, 0, () => bodyDeadline(SET_ASIDE_MS));
  return response;
}

async function handle(
  request: Request,
  env: WorkerEnv,
  ctx: ExecutionContextLike,
  runtimeLeftMs: () => number,
): Promise<Response> {
  const state = await isolateState(env);
  if (!state.ok) return state.app.fetch(request);
  const queue = binding<QueueProducerBinding<Envelope<DeliveryJob>>>("HOOKGATE_QUEUE");
  const kv = binding<KvNamespaceLike>("HOOKGATE_SESSIONS");
  const notifier = notifierFor(queue, kv, ctx);
  const app = createApp({
    policy: () => state.policy,
    clock,
    newId,
    sha256: webCryptoSha256,
    logger,
    metrics,
    remote: state.remote,
    notifier,
    recorder: recording() ? createLogRecorder(logger) : undefined,
    runtimeLeftMs,
    // A policy that notifies, with no queue to send to: each event's send fails (logged, counted),
    // and /healthz, which `hookgate doctor` reads, said ok while every notification was lost. The
    // error is the cause alone: doctor's line already says that no notify event is delivered.
    deliveryTrouble: () =>
      queue === undefined && notifies(state.policy)
        ? {
            delivery: "failing",
            error: bindingProblem("HOOKGATE_QUEUE"),
            fix: bindingFix("HOOKGATE_QUEUE"),
          }
        : undefined,
    // Its dead letters, each sent from the queue handler after a job's last try, fail in turn:
    // only they said so, once a notification had already been lost.
    deadLetterTrouble: () =>
      notifies(state.policy) && binding("HOOKGATE_DLQ") === undefined
        ? { error: bindingProblem("HOOKGATE_DLQ"), fix: bindingFix("HOOKGATE_DLQ") }
        : undefined,
    // The runtime waits for a body for as long as its client stays connected.
    bodyDeadline,
    bodyCeiling: BODY_CEILING,
    bodyBudget,
    unauthenticatedBodyBudget,
  });
  return app.fetch(request);
}

/**
 * How the session store's failures have been told, for the isolate: the notifier is made per
 * request, and each of its own told a KV outage again.
 */
let storeFailures: StoreFailures | undefined;

/**
 * The notifier, loaded with the first event that has notify work: a policy whose rules notify
 * nothing never loads it (the 64 KiB main module). The enqueue runs after the answer, in this
 * request's waitUntil.
 */
function notifierFor(
  queue: WorkerEnv["HOOKGATE_QUEUE"],
  kv: KvNamespaceLike | undefined,
  ctx: ExecutionContextLike,
): Notifier {
  const load = async () => {
    const [
      { createNotifier, sessionStoreFailures },
      { createCloudflareProducer, fitDeliveryJob },
      { createKvSessionStore },
    ] = await notifyModules();
    storeFailures ??= sessionStoreFailures(logger, clock);
    return createNotifier({
      queue: queue
        ? createCloudflareProducer(queue, { fit: fitDeliveryJob })
        : { send: () => Promise.reject(unusable("HOOKGATE_QUEUE")) },
      clock,
      logger,
      metrics,
      sessions: kv ? createKvSessionStore(kv) : undefined,
      storeFailures,
      defer: (task) => task(),
    });
  };
  return lazyNotifier(load, (task) => ctx.waitUntil(task()), logger, metrics);
}

async function queue(batch: PushedBatch, env: WorkerEnv, _ctx?: ExecutionContextLike): Promise<void> {
  const state = await isolateState(env);
  const jobs = binding<QueueProducerBinding<Envelope<DeliveryJob>>>("HOOKGATE_QUEUE");
  const deadLetters = binding<QueueProducerBinding<DeadLetterEnvelope<unknown>>>("HOOKGATE_DLQ") ?? {
    send: () => Promise.reject(unusable("HOOKGATE_DLQ")),
    sendBatch: () => Promise.reject(unusable("HOOKGATE_DLQ")),
  };
  if (!state.ok) {
    const { holdForPolicy } = await import("../adapters/queue/cloudflare-consumer.js");
    const deps = { jobs, deadLetters, logger, metrics, now: clock.now };
    await holdForPolicy(batch, deps, BROKEN_CONFIG_RETRY_SECONDS);
    return;
  }
  // Only this handler settles pushed messages: a fetch never loads the consumer.
  const { createCloudflareConsumer } = await import("../adapters/queue/cloudflare-consumer.js");
  await createCloudflareConsumer({
    deliverer: state.deliverer,
    deadLetters,
    jobs,
    logger,
    metrics,
    now: clock.now,
  }).consume(batch);
}

export default { fetch, queue };

/**
 * What the two Lambda handlers share: the policy, loaded once per container on the first
 * invocation from `HOOKGATE_POLICY` (or the policy baked in by scripts/build-lambda.mjs), JSON
 * logs on stdout (CloudWatch), and the outbound modules (undici egress, the SQS queue) loaded on
 * first use with `import()`, so a decision that needs neither does not parse them at cold start.
 * The bundle leaves the pattern engines out too (scripts/build-lambda.mjs): the regex and glob
 * engines are imported only when the policy has such a pattern.
 */
import { randomUUID } from "node:crypto";
import type { SQSClient, SQSClientConfig } from "@aws-sdk/client-sqs";
import { nodeSha256 } from "../adapters/hash/node-crypto.js";
import { createJsonLogger, scrubLines } from "../adapters/log/json-lines.js";
import type { RedrivePolicy } from "../adapters/queue/sqs.js";
import type { DeliveryJob } from "../core/delivery.js";
import { errorMessage } from "../core/errors.js";
import { scrubbingWith } from "../core/mask.js";
import { withPatternEngines } from "../core/pattern-engines.js";
import {
  describeProblems,
  loadPolicy,
  looksLikeFilePath,
  type Policy,
  type PolicyDeps,
} from "../core/policy.js";
import type { Clock, Egress, EnvReader, Logger } from "../core/ports.js";
import type { Queue } from "../core/queue.js";
import { envReaderOf } from "../core/secret-ref.js";
import { once } from "./once.js";

/** Replaced by scripts/build-lambda.mjs with the text of `HOOKGATE_POLICY_FILE`, when given. */
declare const __HOOKGATE_BUNDLED_POLICY__: string | undefined;

export const POLICY_ENV = "HOOKGATE_POLICY";
export const QUEUE_URL_ENV = "HOOKGATE_QUEUE_URL";
export const DLQ_URL_ENV = "HOOKGATE_DLQ_URL";

/** The functions of a deployment, as a queue's role names them. */
const FUNCTION_OF = { producer: "the HTTP function", consumer: "the delivery function" } as const;

/**
 * How to set the queue URL `name` that the function of `role` lacks: said in each SQS call it
 * fails, as /healthz says it (a failed enqueue said only "HOOKGATE_QUEUE_URL is not set").
 */
export function setQueueUrl(
  name: typeof QUEUE_URL_ENV | typeof DLQ_URL_ENV,
  role: keyof typeof FUNCTION_OF,
): string {
  const queue =
    name === QUEUE_URL_ENV ? ["delivery queue", "DeliveryQueue"] : ["dead-letter queue", "DeadLetterQueue"];
  return `set ${name} in ${FUNCTION_OF[role]}'s environment to the ${queue[0]}'s URL (serverless.yml sets it to the ${queue[1]} of infra/aws/template.yaml)`;
}

export interface LambdaOptions {
  /** Settings and the secrets the policy reads as `env:NAME` (default `process.env`). */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** The policy text baked in at build time; by default what the build defined, if anything. */
  readonly bundledPolicy?: string | undefined;
  readonly logger?: Logger;
  readonly newId?: () => string;
  readonly clock?: Clock;
  /**
   * Builds the SQS client on first use, for every queue (default: the AWS SDK's, configured by the
   * Lambda environment, one per region its queue URLs name).
   */
  readonly sqsClient?: () => Promise<SQSClient>;
}

export type LambdaConfig =
  | { readonly ok: true; readonly policy: Policy }
  | { readonly ok: false; readonly problem: string };

export interface LambdaRuntime {
  readonly env: EnvReader;
  readonly logger: Logger;
  readonly newId: () => string;
  readonly clock: Clock;
  /** The policy, or what keeps it from loading; loaded on the first call, once per container. */
  config(): Promise<LambdaConfig>;
  /** The egress guard; undici is imported on the first request. */
  readonly egress: Egress;
  /**
   * A new SQS queue on the container's SQS clients (`clientFor`: one per region, the DLQ's calls
   * signed for its own); the AWS SDK is imported on its first call. The consumer also needs the
   * DLQ. `signal`, read as each request is sent, ends it. The HTTP function opens one producer per
   * container; the consumer one per invocation, so the batched
   * calls of two invocations that run at once (Lambda Managed Instances) never share a request.
   */
  queue(role: "producer" | "consumer", signal?: () => AbortSignal | undefined): Queue<DeliveryJob>;
  /**
   * `HOOKGATE_QUEUE_URL`'s redrive policy (its `maxReceiveCount` and DLQ), undefined when it has
   * none; throws when it cannot be read.
   */
  redrivePolicy(signal?: AbortSignal): Promise<RedrivePolicy | undefined>;
}

export function createLambdaRuntime(options: LambdaOptions = {}): LambdaRuntime {
  const vars = options.env ?? process.env;
  const env = envReaderOf(vars);
  // Each line is scrubbed of the loaded policy's secret values (none before it loads).
  const logger =
    options.logger ??
    createJsonLogger(
      scrubLines(
        process.stdout,
        scrubbingWith(() => current?.secrets ?? NO_SECRETS),
      ),
    );
  const clock = options.clock ?? { now: Date.now, monotonic: () => performance.now() };
  const bundled =
    "bundledPolicy" in options
      ? options.bundledPolicy
      : typeof __HOOKGATE_BUNDLED_POLICY__ === "string"
        ? __HOOKGATE_BUNDLED_POLICY__
        : undefined;
  let loaded: Promise<LambdaConfig> | undefined;
  let current: Policy | undefined;

  async function load(): Promise<LambdaConfig> {
    const fromEnv = env(POLICY_ENV) || undefined;
    const text = fromEnv ?? bundled;
    if (text === undefined) {
      return {
        ok: false,
        problem: `${POLICY_ENV} is not set and no policy was bundled at build time (HOOKGATE_POLICY_FILE)`,
      };
    }
    const source = fromEnv === undefined ? "the policy bundled at build time" : POLICY_ENV;
    if (fromEnv !== undefined && bundled !== undefined)
      logger.log("warn", `${POLICY_ENV} is set, so the policy bundled at build time is ignored`);
    try {
      const deps: PolicyDeps = { env, sha256: nodeSha256 };
      const result = await withPatternEngines(() => loadPolicy(text, deps));
      if (!result.ok && fromEnv !== undefined && looksLikeFilePath(fromEnv))
        return {
          ok: false,
          problem: `${POLICY_ENV} holds what looks like a file's path, but takes the policy's JSON itself: put the JSON in it (jq -c . policy.json), or bake the file into the bundle at build time (HOOKGATE_POLICY_FILE=policy.json npm run package:lambda)`,
        };
      if (!result.ok) return { ok: false, problem: `${source}: ${describeProblems(result.error)}` };
      for (const w of result.value.warnings)
        logger.log("warn", "policy warning", { path: w.path, problem: w.message });
      current = result.value.policy;
      logger.log("info", "policy loaded", { source, policy: current.hash, rules: current.rules.length });
      return { ok: true, policy: current };
    } catch (e) {
      return {
        ok: false,
        problem: `${source} could not be loaded: ${errorMessage(e)}`,
      };
    }
  }

  const undici = once(async () => {
    const [{ createUndiciEgress }, { reportRefusals }] = await Promise.all([
      import("../adapters/egress/undici.js"),
      import("../core/egress/report.js"),
    ]);
    return createUndiciEgress({
      policy: () => {
        if (!current) throw new Error("egress used before the policy loaded");
        return current.egress;
      },
      onRefusal: reportRefusals(logger, undefined),
    });
  });

  const injected = options.sqsClient && once(options.sqsClient);
  /**
   * Per region, its SQS client: the queue's and the DLQ's, one client when they share it. Built
   * `once`, so a build that failed is tried again at the next call, as every other client here.
   */
  const clients = new Map<string, () => Promise<SQSClient>>();
  /**
   * The SQS client signed for `queueUrl`'s region (`createLambdaSqsClient`), made on first use: the
   * DLQ's calls too were signed for the queue's region, which SQS refuses for a DLQ of another.
   */
  const clientFor = async (queueUrl: string): Promise<SQSClient> => {
    if (injected) return injected();
    const { queueUrlRegion } = await import("../adapters/queue/sqs.js");
    const region = queueUrlRegion(queueUrl) ?? "";
    let made = clients.get(region);
    if (!made) {
      made = once(() => createLambdaSqsClient({}, queueUrl));
      clients.set(region, made);
    }
    return made();
  };
  function queue(role: "producer" | "consumer", signal?: () => AbortSignal | undefined): Queue<DeliveryJob> {
    const open = once(async () => {
      const queueUrl = env(QUEUE_URL_ENV);
      const deadLetterQueueUrl = env(DLQ_URL_ENV);
      const unset = (name: typeof QUEUE_URL_ENV | typeof DLQ_URL_ENV) =>
        new Error(`${name} is not set: ${setQueueUrl(name, role)}`);
      if (!queueUrl) throw unset(QUEUE_URL_ENV);
      if (role === "consumer" && !deadLetterQueueUrl) throw unset(DLQ_URL_ENV);
      // The job's fitting comes with the SQS client: an HTTP function's cold start needs neither.
      const [{ createSqsQueue }, { fitDeliveryJob }, sqs, dlqSqs] = await Promise.all([
        import("../adapters/queue/sqs.js"),
        import("../core/delivery.js"),
        clientFor(queueUrl),
        role === "consumer" && deadLetterQueueUrl ? clientFor(deadLetterQueueUrl) : undefined,
      ]);
      return createSqsQueue<DeliveryJob>({
        client: sqs,
        ...(dlqSqs && { deadLetterClient: dlqSqs }),
        queueUrl,
        // The producer only sends; it never dead-letters.
        deadLetterQueueUrl: deadLetterQueueUrl ?? "",
        // An event near the body limit (raised towards Lambda's 6 MB) is cut to SQS's 1 MiB, as
        // on Cloudflare, rather than refused and lost; and so is a dead letter with its error.
        fit: fitDeliveryJob,
        ...(signal && { signal }),
      });
    });
    return lazyQueue(open);
  }

  return {
    env,
    logger,
    newId: options.newId ?? randomUUID,
    clock,
    config: () => {
      loaded ??= load();
      return loaded;
    },
    egress: async (request) => (await undici()).send(request),
    queue,
    async redrivePolicy(signal) {
      const queueUrl = env(QUEUE_URL_ENV);
      if (!queueUrl) throw new Error(`${QUEUE_URL_ENV} is not set`);
      const [{ readRedrivePolicy }, sqs] = await Promise.all([
        import("../adapters/queue/sqs.js"),
        clientFor(queueUrl),
      ]);
      return readRedrivePolicy(sqs, queueUrl, signal);
    },
  };
}

const NO_SECRETS: readonly string[] = [];

/**
 * Refuses an event the function was not wired for (an SQS batch sent to the HTTP function, a
 * request to the consumer): logged with the event's first keys, then thrown, so the invocation
 * fails where it can be seen.
 */
export function refuseEvent(logger: Logger, event: unknown, message: string): never {
  const keys = typeof event === "object" && event !== null ? Object.keys(event).slice(0, 10) : [];
  logger.log("error", message, { eventKeys: keys });
  throw new Error(message);
}

/**
 * Whether an SQS record's `eventSourceARN` (`arn:aws:sqs:REGION:ACCOUNT:NAME`) is the queue at
 * `url`: AWS's `https://sqs.REGION.amazonaws.com/ACCOUNT/NAME` (its FIPS, China, dual-stack,
 * legacy and VPC endpoint hosts name the region too, and the legacy global `queue.amazonaws.com`
 * is us-east-1's: read as naming none, another region's queue of the same account and name (a
 * stage deployed there) was taken for it) or a local server's
 * `http://127.0.0.1:PORT/ACCOUNT/NAME`, whose host names no region, so only the account and the
 * name are compared; ElasticMQ's `http://localhost:9324/queue/NAME` names no account either, so
 * only the name is (`queue` read as one, no ARN matched it: the delivery function warned of
 * another redrive target and of a batch from another queue). The URL is read once, for every
 * record of a batch.
 */
export function isArnOfQueueAt(url: string): (arn: unknown) => boolean {
  let host: string;
  let path: string[];
  try {
    const parsed = new URL(url);
    host = parsed.hostname.toLowerCase();
    path = parsed.pathname.split("/").filter(Boolean);
  } catch {
    return () => false;
  }
  const hostRegion =
    host === "queue.amazonaws.com"
      ? "us-east-1"
      : host.split(".").find((label) => /^[a-z]{2,4}(?:-[a-z]+)+-\d+$/.test(label));
  // An AWS account ID is 12 digits.
  const account = /^\d{12}$/.test(path.at(-2) ?? "") ? path.at(-2) : undefined;
  return (arn) => {
    // A hand-made test event may carry none.
    if (typeof arn !== "string") return false;
    const [scheme, , service, region, arnAccount, name, ...rest] = arn.split(":");
    if (scheme !== "arn" || service !== "sqs" || !name || rest.length > 0) return false;
    return (
      path.at(-1) === name &&
      (account === undefined || account === arnAccount) &&
      (hostRegion === undefined || hostRegion === region)
    );
  };
}

/** How long one try of an SQS call may take to connect, and then to be answered. */
export const SQS_CONNECT_TIMEOUT_MS = 3_000;
export const SQS_ANSWER_TIMEOUT_MS = 5_000;

/**
 * The SQS client of both functions (configured by the Lambda environment; `config` adds to it).
 * The SDK waits for an answer for ever by default (requestTimeout 0, and even a requestTimeout
 * only warns without throwOnRequestTimeout): a call that hung (a connection dropped while Lambda
 * froze the container, a network fault) held the delivery function until its timeout, so the
 * whole batch failed, delivered jobs were sent again and every job spent a receive; and a notify
 * send never ended nor failed. Each try now fails after these, and the SDK's retries still apply.
 *
 * Its calls are signed for the region `queueUrl` names, as `hookgate dlq`'s are: the SDK sends
 * each to the queue URL's host but signed for the function's own region (AWS_REGION, which Lambda
 * sets and reserves), so SQS refused every call to a queue of another region, an HTTP function
 * deployed nearer its team than the queue's stack losing every notification. A VPC endpoint's
 * URL names its region too (`queueUrlRegion`); one that names none (a local server's) keeps the
 * function's region. A DLQ in another region than the queue has a client of its own.
 */
export async function createLambdaSqsClient(
  config: SQSClientConfig = {},
  queueUrl?: string,
): Promise<SQSClient> {
  const [{ SQSClient }, { SQS_SDK_LOGGER, queueUrlRegion }] = await Promise.all([
    import("@aws-sdk/client-sqs"),
    import("../adapters/queue/sqs.js"),
  ]);
  const region = queueUrl === undefined ? undefined : queueUrlRegion(queueUrl);
  return new SQSClient({
    logger: SQS_SDK_LOGGER,
    ...(region && { region }),
    ...config,
    requestHandler: {
      connectionTimeout: SQS_CONNECT_TIMEOUT_MS,
      requestTimeout: SQS_ANSWER_TIMEOUT_MS,
      throwOnRequestTimeout: true,
    },
  });
}

/** The SQS queue, opened (and its client loaded) on first use. */
function lazyQueue(open: () => Promise<Queue<DeliveryJob>>): Queue<DeliveryJob> {
  return {
    skipsGroups: false,
    send: async (messages) => (await open()).send(messages),
    receive: async (max, visibilityMs, skip) => (await open()).receive(max, visibilityMs, skip),
    ack: async (message) => (await open()).ack(message),
    retry: async (message, delayMs, error) => (await open()).retry(message, delayMs, error),
    hold: async (message, delayMs, reason, options) => (await open()).hold(message, delayMs, reason, options),
    deadLetter: async (message, error) => (await open()).deadLetter(message, error),
    listDead: async (limit) => (await open()).listDead(limit),
    replayDead: async (ids) => (await open()).replayDead(ids),
    dropDead: async (ids) => (await open()).dropDead(ids),
    close: async () => undefined,
  };
}

/**
 * deliver(job) → ack | retry after a delay | dead-letter, for one delivery job. Each queue
 * backend translates the outcome (SQLite visibility, SQS visibility and DLQ, Cloudflare
 * `ack()` / `retry({delaySeconds})`). Every sink call goes through the egress guard; nothing is
 * dropped silently: a job is delivered, retried on schedule, or dead-lettered with its reason.
 * A reason may quote what the sink answered, so it is scrubbed of the policy's secret values
 * (a sink may echo the token or URL it was sent) before it is logged or stored with the job; so
 * is the error of an attempt that threw, which is retried on its sink's schedule and dead-lettered
 * as `thrownOutcome`.
 */
import {
  attemptCount,
  DEFAULT_RETRY_SCHEDULE_SECONDS,
  type DeliveryJob,
  type DeliveryOutcome,
  holdOrDead,
  MAX_DELAY_MS,
  retryOrDead,
  thrownOutcome,
} from "../core/delivery.js";
import type { EgressCode, EgressStage } from "../core/egress/refusal.js";
import { errorMessage } from "../core/errors.js";
import { invalidHeaderValues } from "../core/forward.js";
import { scrubSecrets } from "../core/mask.js";
import type { PolicyDocument } from "../core/policy-schema.js";
import type { Clock, Egress, EnvReader, HmacSha256, UnsetReason } from "../core/ports.js";
import { resolveSecret, SINK_ENV_FIELDS, variableShown } from "../core/secret-ref.js";
import { awaitedInBody, buildSinkRequest, classifySinkResponse, type ResolvedSink } from "../core/sinks.js";

export type { DeliveryOutcome };

/**
 * What deliveries read of a policy: its sinks, and the secret values scrubbed from what a sink
 * answers. A loaded `Policy` is one; `serve`'s delivery thread gets only these (and the egress
 * section), never the rules.
 */
export interface DeliveryPolicy {
  readonly document: Pick<PolicyDocument, "sinks">;
  readonly secrets: readonly string[];
}

export interface DeliverDeps {
  readonly policy: () => DeliveryPolicy;
  readonly egress: Egress;
  readonly env: EnvReader;
  /** Why a sink's variable reads as unset ("is not set" when absent). */
  readonly unsetReason?: UnsetReason | undefined;
  readonly clock: Clock;
  /** A number in [0, 1), for retry jitter. */
  readonly random: () => number;
  /** Waits, for the per-webhook rate limit (a port so tests need not sleep). */
  readonly sleep?: (ms: number) => Promise<void>;
  /** How long a sink call may take (`SINK_TIMEOUT_MS` by default). */
  readonly timeoutMs?: number;
  /** Signs Standard Webhooks; WebCrypto when absent (Workers), node:crypto on Node. */
  readonly hmac?: HmacSha256;
}

/**
 * Asked right before the sink call, after any pacing wait, with the longest that call may take:
 * false when the caller cannot wait that long (a Lambda invocation near its timeout). The job is
 * then not sent, and comes back as an `unsent` retry.
 */
export type MayStart = (timeoutMs: number) => boolean;

/** How long a sink call may take, unless `DeliverDeps.timeoutMs` says otherwise. */
export const SINK_TIMEOUT_MS = 15_000;

/** What a receive knows of a job beyond its sends: all absent for a first receive with time to spare. */
export interface DeliverOptions {
  /** For a caller short of time (the Lambda consumer). */
  readonly mayStart?: MayStart | undefined;
  /**
   * The receives held unsent before this one (0): past MAX_HOLDS a job that would be held again
   * is dead-lettered instead.
   */
  readonly holds?: number | undefined;
  /**
   * Why the previous receive recorded no outcome (`ReceivedMessage`): past the sink's last attempt
   * the job is then dead-lettered with it, unsent.
   */
  readonly interrupted?: string | undefined;
}

export interface Deliverer {
  /** `attempts` counts the sends (the queue's `attempts`). */
  deliver(job: DeliveryJob, attempts: number, options?: DeliverOptions): Promise<DeliveryOutcome>;
}

/**
 * Egress failures worth another try; every other refusal is a configuration problem. A name that
 * resolves to nothing is one: Node's resolver fails it (ENOTFOUND, EGRESS_DNS_FAILED), as
 * DNS-over-HTTPS on Workers fails NXDOMAIN, where a name with no records is EGRESS_NO_ADDRESS; a DNS
 * outage or a record being re-created must not dead-letter on one runtime what the other retries.
 */
const TRANSIENT: ReadonlySet<EgressCode> = new Set([
  "EGRESS_TIMEOUT",
  "EGRESS_CONNECT_FAILED",
  "EGRESS_DNS_FAILED",
  "EGRESS_NO_ADDRESS",
]);
/** The egress guard's stages that refuse a request before it connects: nothing was sent. */
const REFUSED_UNSENT: ReadonlySet<EgressStage> = new Set(["url", "allowlist", "name", "address"]);
/** Slack and Discord webhooks take about one message per second (fanout.md B3, B4). */
const CHAT_INTERVAL_MS = 1000;

const NOT_STARTED = "not sent: too little time was left to wait for the sink's answer";

/** How long after a rate limit's hold a held job comes back. */
const HOLD_MARGIN_MS = 100;

export function createDeliverer(deps: DeliverDeps): Deliverer {
  const nextSlot = new Map<string, number>();
  /** Per URL, when a rate-limited sink said to come back (Retry-After), on the monotonic clock. */
  const heldUntil = new Map<string, number>();
  const sleep = deps.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));

  /**
   * How long every delivery to this URL is held because the sink said when to come back, or 0;
   * then, for a chat webhook, reserves the next send slot and waits for it. Both on the monotonic
   * clock: a wall clock stepped back (NTP after a VM resumes) would otherwise hold every send for
   * the step, past the job's lease, and the job would be leased and sent again. A held job is not
   * sent (nor waited for: a Retry-After may be an hour) but retried once the hold has passed;
   * else the jobs queued behind one that got a 429 went out a second apart into the same rate
   * limit, each spending a retry.
   */
  async function paced(url: string, chat: boolean): Promise<number> {
    const held = heldFor(url);
    if (held > 0 || !chat) return held;
    const now = deps.clock.monotonic();
    const slot = Math.max(now, nextSlot.get(url) ?? 0);
    nextSlot.set(url, slot + CHAT_INTERVAL_MS);
    if (slot > now) await sleep(slot - now);
    // A 429 may have come back while this job waited for its slot (the consumer has several jobs
    // of one sink in flight): it is held too.
    return heldFor(url);
  }

  function heldFor(url: string): number {
    const left = (heldUntil.get(url) ?? 0) - deps.clock.monotonic();
    if (left > 0) return left;
    heldUntil.delete(url);
    return 0;
  }

  /** Holds every delivery to this URL for what the sink asked, up to the 12 h a retry may wait. */
  function hold(url: string, retryAfterMs: number): void {
    const until = deps.clock.monotonic() + Math.min(retryAfterMs, MAX_DELAY_MS);
    heldUntil.set(url, Math.max(until, heldUntil.get(url) ?? 0));
  }

  async function deliver(
    job: DeliveryJob,
    attempts: number,
    { mayStart, holds = 0, interrupted }: DeliverOptions = {},
  ): Promise<DeliveryOutcome> {
    // The secrets of the policy the call is made under and of the one in force when it is read:
    // one reloaded while the call runs (a token rotated) knows only the new ones, and the old
    // token a sink echoes would stay in the reason.
    const atStart = deps.policy().secrets;
    const secrets = () => {
      const now = deps.policy().secrets;
      return now === atStart ? now : [...atStart, ...now];
    };
    let tried: DeliveryOutcome;
    try {
      tried = await attempt(job, attempts, secrets, mayStart, interrupted);
    } catch (e) {
      // A defect; its message may quote a secret of the sink's, scrubbed below with the others.
      // On the sink's schedule: past its last attempt a Lambda or Workers receive, which always
      // says `interrupted`, would dead-letter it as one that ended the function, and every
      // consumer would send it more often than the sink's schedule allows.
      tried = thrownOutcome(attempts, e, sinkConfig(job)?.retryScheduleSeconds);
    }
    const outcome = holdOrDead(tried, holds);
    if (outcome.kind === "ack") return outcome;
    return { ...outcome, reason: scrubSecrets(outcome.reason, secrets()) };
  }

  /** The job's sink in the policy in force; own members only, as the policy checks a rule's sinks: "constructor" is no sink. */
  function sinkConfig(job: DeliveryJob): SinkConfig | undefined {
    const sinks = deps.policy().document.sinks;
    return sinks && Object.hasOwn(sinks, job.sink) ? sinks[job.sink] : undefined;
  }

  async function attempt(
    job: DeliveryJob,
    attempts: number,
    secrets: () => readonly string[],
    mayStart?: MayStart,
    interrupted?: string,
  ): Promise<DeliveryOutcome> {
    const config = sinkConfig(job);
    if (!config) return unsentDead(`sink "${job.sink}" is no longer in the policy`);
    const schedule = config.retryScheduleSeconds ?? DEFAULT_RETRY_SCHEDULE_SECONDS;
    // Its last attempt (the first and one per retry) ended with no outcome, the delivery thread
    // gone with it: sent again, a job that ends the thread (out of memory, a native fault) would
    // end it again, at every restart, and hold up the other jobs for ever.
    if (interrupted !== undefined && attempts > schedule.length + 1)
      return unsentDead(`gave up after ${attemptCount(attempts - 1)}: ${interrupted}`);
    const sink = resolveSink(config, deps.env, deps.unsetReason);
    if (typeof sink === "string") return unsentDead(`sink "${job.sink}": ${sink}`);
    const retryLater = (reason: string, retryAfterMs?: number): DeliveryOutcome =>
      retryOrDead(attempts, schedule, deps.random(), reason, retryAfterMs);

    let request: Awaited<ReturnType<typeof buildSinkRequest>>;
    try {
      request = await buildSinkRequest(sink, job.notification, deps.clock.now(), deps.hmac);
    } catch (e) {
      // The same job and sink would fail the same way on every attempt (a secret that is no key).
      return unsentDead(`sink "${job.sink}": ${errorMessage(e)}`);
    }
    // A token or secret no header can carry (a pasted curly quote) fails before anything is sent,
    // on every attempt: the HTTP client's refusal would read as a failed connection and be retried.
    const invalid = invalidHeaderValues(request.headers);
    if (invalid.length > 0) {
      return unsentDead(
        `sink "${job.sink}": the ${invalid.join(", ")} header would carry a character no HTTP header can (a control character, DEL, or one past U+00FF), so nothing was sent; fix the token or secret the sink reads`,
      );
    }
    const held = await paced(request.url, sink.type === "slack" || sink.type === "discord");
    if (held > 0) {
      // Not an attempt: held by the queue (`Queue.hold`) until the hold has passed (HOLD_MARGIN_MS
      // after it, as the queue's wall clock and this monotonic one differ by a few ms), never by
      // the retry schedule's next step, and dead-lettered only past MAX_HOLDS.
      return {
        kind: "retry",
        delayMs: Math.ceil(held) + HOLD_MARGIN_MS,
        reason: `not sent: the sink asked to wait ${Math.ceil(held / 1000)} s more after a rate limit`,
        unsent: true,
      };
    }
    const timeoutMs = deps.timeoutMs ?? SINK_TIMEOUT_MS;
    if (mayStart && !mayStart(timeoutMs)) {
      // Nothing reached the sink: no attempt failed, so neither the schedule nor (before
      // MAX_HOLDS) a dead letter.
      return { kind: "retry", delayMs: 0, reason: NOT_STARTED, unsent: true };
    }
    const sent = await deps.egress({
      url: request.url,
      method: "POST",
      headers: request.headers,
      body: request.body,
      timeoutMs,
      truncateResponse: true,
    });
    if (!sent.ok) {
      const reason = `${sent.error.code}: ${sent.error.reason}`;
      if (TRANSIENT.has(sent.error.code)) return retryLater(reason);
      // Refused before it connected (the URL, the allowlist, a blocked name or address): unsent.
      return REFUSED_UNSENT.has(sent.error.stage) ? unsentDead(reason) : { kind: "dead", reason };
    }
    const verdict = classifySinkResponse(
      sink.type,
      sent.value.status,
      sent.value.headers,
      sent.value.body,
      deps.clock.now(),
      secrets(),
      request.url,
    );
    if (verdict.kind === "delivered") return { kind: "ack" };
    // The status decides, whatever the body did after it (a 2xx is delivered, even one whose body
    // never ends), but where a permanent verdict rests on the body's words (a Slack 200's "ok", a
    // GitHub 403's secondary rate limit, a Discord 403's code 40333): one that broke off before
    // them is not known to be refused, nor (Slack) known to be posted. The reason says when what
    // it quotes was cut.
    const { status, cutShort } = sent.value;
    const awaited = cutShort === undefined ? undefined : awaitedInBody(sink.type, status, request.url);
    if (verdict.kind === "permanent" && awaited !== undefined)
      return retryLater(`HTTP ${status}, but the answer broke off before ${awaited}: ${cutShort}`);
    const reason = cutShort === undefined ? verdict.reason : `${verdict.reason}; ${cutShort}`;
    if (verdict.kind === "permanent") return { kind: "dead", reason };
    // A rate limit (a 429, GitHub's 403, Slack's HTTP 200 `ratelimited`) holds the sink's other
    // jobs too; a 503's Retry-After only this one.
    if (verdict.rateLimited && verdict.retryAfterMs !== undefined) hold(request.url, verdict.retryAfterMs);
    return retryLater(reason, verdict.retryAfterMs);
  }

  return { deliver };
}

/**
 * A job no attempt can send (its sink gone or unusable), dead-lettered before any send: its dead
 * letter counts this receive as no attempt (core/delivery.ts `deadLetterAttempts`).
 */
function unsentDead(reason: string): DeliveryOutcome {
  return { kind: "dead", reason, unsent: true };
}

type SinkConfig = NonNullable<PolicyDocument["sinks"]>[string];

/** The sink with its `env:` secrets read, or why it cannot be used. */
function resolveSink(
  config: SinkConfig,
  env: EnvReader,
  unset: UnsetReason = () => "is not set",
): ResolvedSink | string {
  const resolved: Record<string, unknown> = { ...config };
  for (const field of SINK_ENV_FIELDS[config.type]) {
    const value = resolved[field];
    if (typeof value !== "string") continue;
    const read = resolveSecret(value, env);
    if (read === undefined)
      return `${field} reads ${variableShown(value.slice(4))}, which ${unset(value.slice(4))}`;
    resolved[field] = read;
  }
  // The schema's sink with string fields replaced by strings: still the same shape.
  return resolved as ResolvedSink;
}

/**
 * Delivery jobs and their retry schedule. A job is one notification for one sink; its id is
 * stable (`<event id>.<sink>`), so a receiver that drops repeated `webhook-id`s sees each event
 * once whatever the queue redelivers.
 */
import { errorMessage } from "./errors.js";
import type { HookEvent } from "./hook-event.js";
import { isRecord } from "./json-object.js";
import { maskedName, maskString, maskValue } from "./mask.js";
import type { Notification } from "./sinks.js";
import { capStringsToFit, capToFit, cut, flattenFreeText } from "./truncate.js";

export interface DeliveryJob {
  readonly id: string;
  readonly sink: string;
  readonly notification: Notification;
}

/**
 * Whether a stored or received body is a delivery job: a queue's message from elsewhere, or a
 * journal line that parses but is not a job, can never be delivered and is dead-lettered as it
 * is, rather than redelivered with every lease.
 */
export function isDeliveryJob(value: unknown): value is DeliveryJob {
  if (!isRecord(value)) return false;
  const { id, sink, notification } = value;
  return (
    typeof id === "string" &&
    typeof sink === "string" &&
    isRecord(notification) &&
    typeof notification.eventName === "string" &&
    typeof notification.event === "object" &&
    notification.event !== null
  );
}

/**
 * A job as SQS and Cloudflare Queues carry it: `{id, body}`, the id the job's own; a held job's
 * copy adds the attempts (sends) before it and its holds, 0 when absent or not a count.
 */
export interface JobEnvelope {
  readonly id: string;
  readonly body: DeliveryJob;
  readonly sent: number;
  readonly holds: number;
}

/**
 * A queue message's parsed body as a job's envelope, or why it is not one: the one reader of the
 * Lambda and Worker consumers, so a message one dead-letters the other does not deliver.
 */
export function readJobEnvelope(value: unknown): JobEnvelope | string {
  if (!isRecord(value)) return "body is not an {id, body} envelope";
  const { id, body, sent, holds } = value;
  if (typeof id !== "string" || typeof body !== "object" || body === null)
    return "body is not an {id, body} envelope";
  if (!isDeliveryJob(body)) return "envelope body is not a delivery job";
  // Every producer writes the job's own id: a message with another was not put there by hookgate,
  // and its held copy and dead letter would go under an id that is not its job's.
  if (body.id !== id) return "envelope id is not its job's id";
  return { id, body, sent: carriedCount(sent), holds: carriedCount(holds) };
}

/** A count a held job's copy carries (`sent`, `holds`), 0 when absent or not one. */
export function carriedCount(value: unknown): number {
  return typeof value === "number" && Number.isInteger(value) && value > 0 ? value : 0;
}

/**
 * Svix's schedule (fanout.md): after the first attempt, retry in 5 s, 5 min, 30 min, 2 h, 5 h,
 * 10 h, 10 h; then dead-letter. Each delay gets ±20 % jitter so a burst that failed together
 * does not retry together. No delay exceeds 12 h, the longest any backend can hold a message.
 */
export const DEFAULT_RETRY_SCHEDULE_SECONDS: readonly number[] = [5, 300, 1800, 7200, 18_000, 36_000, 36_000];
export const MAX_DELAY_MS = 12 * 3600 * 1000;

/**
 * The delay before attempt `attempts + 1`, or undefined when the schedule is spent.
 * `random` is a number in [0, 1) (a port, so tests are exact).
 */
export function retryDelayMs(
  attempts: number,
  schedule: readonly number[],
  random: number,
  retryAfterMs?: number | undefined,
): number | undefined {
  const base = schedule[attempts - 1];
  if (base === undefined) return undefined;
  const baseMs = base * 1000;
  const jittered = baseMs * (0.8 + 0.4 * random);
  // Honour Retry-After whole, up to the 12 h any backend can hold a job: a sink that says when to
  // come back (Slack's 30 s, GitHub's rate-limit reset in 40 minutes) is not asked again before,
  // where each early attempt spends one of the schedule's and GitHub may ban the integration.
  // A sooner Retry-After does not make us come back before the schedule's own delay.
  const wanted = retryAfterMs === undefined ? jittered : Math.max(retryAfterMs, jittered);
  return Math.min(Math.round(wanted), MAX_DELAY_MS);
}

/**
 * What a Lambda or Workers receive past its sink's last attempt adds to why it is dead-lettered
 * unsent (app/deliver.ts `interrupted`): SQS and Cloudflare count receives, not what the last one
 * came to, so a job whose sink's `retryScheduleSeconds` was shortened while it waited for a
 * retry comes back past its last attempt too, never having ended anything. It is not sent either
 * (the count cannot tell which, and a job that ends the function must not be sent again), and
 * the dead letter says both, so that the operator replays it rather than look for a crash.
 */
export const SCHEDULE_SHORTENED =
  "unless its sink's retryScheduleSeconds was shortened while it waited for a retry, which a receive cannot tell apart: then replay it";

/**
 * The most attempts a job of these sinks can take, one more than the longest retry schedule: a
 * sink's own, or the default, which a `deliver` that threw outside its sink's attempt follows
 * whatever its sink's (`thrownOutcome`, a consumer's own catch). A queue that counts receives as
 * attempts (SQS) must allow a job this many receives before its own limit moves it elsewhere (a
 * redrive policy's `maxReceiveCount`).
 */
export function mostAttempts(
  sinks: Iterable<{ readonly retryScheduleSeconds?: readonly number[] | undefined }>,
): number {
  let longest = DEFAULT_RETRY_SCHEDULE_SECONDS.length;
  for (const sink of sinks) longest = Math.max(longest, sink.retryScheduleSeconds?.length ?? 0);
  return longest + 1;
}

/** What one delivery attempt came to; each queue backend translates it (app/deliver.ts). */
export type DeliveryOutcome =
  | { readonly kind: "ack" }
  | {
      readonly kind: "retry";
      readonly delayMs: number;
      readonly reason: string;
      /**
       * Nothing was sent: the sink's rate limit holds it, or the caller's time ran short before
       * the sink call (deliver.ts `MayStart`). The queue holds it (`Queue.hold`): no attempt.
       */
      readonly unsent?: true;
    }
  | {
      readonly kind: "dead";
      readonly reason: string;
      /**
       * Nothing was sent this time (held past MAX_HOLDS, or a sink no attempt can send to: gone
       * from the policy, a secret no header can carry): the dead letter counts no attempt for it.
       */
      readonly unsent?: true;
    };

/**
 * How many times a job may be held unsent (a rate limit's wait, too little time on Lambda) in
 * all before it is dead-lettered: a sink that rate-limits for ever, or a function whose timeout
 * never leaves time for a sink call, still ends in a dead letter with its reason rather than in
 * holds without end. On SQS a hold longer than 15 minutes (the longest delay of a message sent)
 * takes one hold per 15 minutes, so 100 holds there are at least 25 h.
 */
export const MAX_HOLDS = 100;

/**
 * A held outcome (`unsent`) for a job already held `holds` times, or, past MAX_HOLDS, its dead
 * letter; any other outcome as it is.
 */
export function holdOrDead(outcome: DeliveryOutcome, holds: number): DeliveryOutcome {
  if (outcome.kind !== "retry" || !outcome.unsent || holds < MAX_HOLDS) return outcome;
  return {
    kind: "dead",
    reason: `gave up after ${holds} holds without a send: ${outcome.reason}`,
    unsent: true,
  };
}

/**
 * The attempts a dead letter records, the sends: a job's attempts, less this receive when it
 * sent nothing (`unsent`), which would read as one send too many.
 */
export function deadLetterAttempts(outcome: DeliveryOutcome, attempts: number): number {
  return outcome.kind === "dead" && outcome.unsent ? Math.max(0, attempts - 1) : attempts;
}

/**
 * The outcome of a `deliver` that threw: a defect, not the sink's answer. Retried on the sink's
 * schedule when the deliverer knows it, else the default (no jitter), then dead-lettered with the
 * error: never retried every few seconds for ever, nor left for the queue's own redrive, which
 * keeps no reason, nor past the sink's last attempt, where a Lambda or Workers receive read it as
 * one that ended the function (`interrupted`). Every consumer uses it. The
 * error's text may quote anything (a URL with its token, a header), so it is masked as a log line
 * is before it is logged or stored with the dead letter; the deliverer scrubs the policy's secret
 * values from it too (deliver.ts).
 */
export function thrownOutcome(
  attempts: number,
  error: unknown,
  schedule: readonly number[] = DEFAULT_RETRY_SCHEDULE_SECONDS,
): DeliveryOutcome {
  const reason = `internal error: ${maskString(errorMessage(error))}`;
  return retryOrDead(attempts, schedule, 0.5, reason);
}

/** Another attempt on the schedule, or, once it is spent, the dead letter with the last reason. */
export function retryOrDead(
  attempts: number,
  schedule: readonly number[],
  random: number,
  reason: string,
  retryAfterMs?: number,
): DeliveryOutcome {
  const delayMs = retryDelayMs(attempts, schedule, random, retryAfterMs);
  return delayMs === undefined
    ? { kind: "dead", reason: `gave up after ${attemptCount(attempts)}: ${reason}` }
    : { kind: "retry", delayMs, reason };
}

/** One notification per hook event, the event masked before it is stored or sent anywhere. */
export function createNotification(
  id: string,
  createdAt: number,
  event: HookEvent,
  fields: {
    team: string;
    decision: string;
    clientDecision?: string | undefined;
    reason?: string | undefined;
    ruleId: string;
  },
  relatedTool?: Notification["relatedTool"],
  secrets: readonly string[] = [],
): Notification {
  return {
    id,
    createdAt,
    team: fields.team,
    client: event.dialect,
    eventName: shownEventName(event.name, secrets),
    decision: fields.decision,
    ...(fields.clientDecision !== undefined && { clientDecision: fields.clientDecision }),
    reason: fields.reason,
    ruleId: fields.ruleId,
    event: maskValue(event.payload, secrets, 4000) as Record<string, unknown>,
    relatedTool,
  };
}

/** As long as an unknown event's name is shown: cut like a tool name (notify.ts NAME_MAX). */
const EVENT_NAME_MAX = 256;

/**
 * An unknown event's name, the agent's text, masked as the event's strings are (`maskedName`,
 * maskValue's `maskedHead`): it is a Slack message's title and a webhook's `type`, where the
 * event's own copy was masked. Cut like a tool name, with its marker.
 */
function shownEventName(name: string, secrets: readonly string[]): string {
  return maskedName(name, secrets, EVENT_NAME_MAX);
}

/**
 * The job with its free text (the already masked event, the reason, a related tool's summary, a
 * legacy tool call's other half) cut to fit by truncate.ts `capToFit`: the longest strings first,
 * no key dropped and the ids whole; when even strings cut to nothing do not fit (a huge structure
 * of short values), the event and the other half's arguments become their JSON text, cut the same
 * way, under the key `truncated`. A body that is no job (an unreadable message on its way to the
 * dead-letter queue) becomes its text, cut the same way.
 */
export function fitDeliveryJob(job: DeliveryJob, fits: (candidate: DeliveryJob) => boolean): DeliveryJob {
  if (fits(job)) return job;
  if (!isDeliveryJob(job)) return fitUnreadable(job, fits);
  const n = job.notification;
  const { relatedTool, correlation } = n;
  const toolUse = correlation?.toolUse;
  const toolResult = correlation?.toolResult;
  const free = {
    event: n.event,
    reason: n.reason,
    summary: relatedTool?.summary,
    args: toolUse?.toolArgs,
    output: toolResult?.output,
  };
  const withFree = (fitted: unknown): DeliveryJob => {
    const { event, reason, summary, args, output } = fitted as typeof free;
    return {
      ...job,
      notification: {
        ...n,
        event,
        ...(reason !== undefined && { reason }),
        ...(relatedTool && { relatedTool: { ...relatedTool, summary: summary ?? "" } }),
        ...(correlation && {
          correlation: {
            ...correlation,
            ...(toolUse && { toolUse: { ...toolUse, toolArgs: args ?? {} } }),
            ...(toolResult && { toolResult: { ...toolResult, output: output ?? "" } }),
          },
        }),
      },
    };
  };
  return withFree(capToFit(free, (candidate) => fits(withFree(candidate)), flattenFreeText));
}

/**
 * A body that is no job (an unreadable message dead-lettered as it came), too big once quoted in
 * its dead letter (JSON escapes every `"` and backslash of a text): its text, cut to the largest length
 * that fits plus TRUNCATION_MARKER. Left whole, the dead letter would be refused on every attempt
 * and the message moved by the queue's own retry limit with no reason.
 */
function fitUnreadable(body: unknown, fits: (candidate: DeliveryJob) => boolean): DeliveryJob {
  const text = typeof body === "string" ? body : (JSON.stringify(body) ?? String(body));
  const fitted = capStringsToFit(text, (candidate) => fits(candidate as DeliveryJob)) ?? cut(text, 0);
  return fitted as DeliveryJob;
}

/** `1 attempt`, `3 attempts`: how a dead letter's reason counts them. */
export function attemptCount(attempts: number): string {
  return `${attempts} attempt${attempts === 1 ? "" : "s"}`;
}

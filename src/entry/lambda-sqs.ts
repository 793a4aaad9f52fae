/**
 * Composition root for the delivery function: the SQS event source mapping hands it a batch, and
 * it answers a partial batch response (`ReportBatchItemFailures`, fanout.md B1). Per record:
 * delivered → not reported, so Lambda deletes it; retry → its visibility set to the retry delay
 * and reported, so Lambda leaves it on the queue until then; dead, or a body that is not a job →
 * sent to the DLQ and deleted by the queue adapter, not reported (also when only the delete
 * failed: Lambda's own delete is the second try); an error (an SQS call that
 * failed) → only that record reported, to come back after the queue's visibility timeout (the
 * redrive policy moves it to the DLQ after maxReceiveCount receives; back past its sink's last
 * attempt, which recorded no outcome, it is dead-lettered unsent); held (a delivery whose sink
 * call the invocation's time left could not wait for, `SETTLE_MARGIN_MS`, or that its sink's rate
 * limit holds) → not sent, a copy carrying its sends and holds put back on the queue and the
 * message deleted by the queue adapter, not reported: no receive spent. A configuration that
 * cannot deliver (a policy that does not load, a function timeout too short for any sink call to
 * start) holds every job for 5 minutes, not counted as a hold, and says so once per container.
 * A batch from the DLQ itself (`HOOKGATE_DLQ_URL` also given an event source mapping to this
 * function) → nothing delivered, held or dead-lettered: the invocation fails, so every record
 * stays on the DLQ, back after its visibility timeout, and each batch logs the mapping to remove.
 */
import type { Context, SQSBatchItemFailure, SQSBatchResponse, SQSEvent, SQSRecord } from "aws-lambda";
import { nodeHmacSha256 } from "../adapters/hash/node-crypto.js";
import type { RedrivePolicy } from "../adapters/queue/sqs.js";
import { createDeliverer, type Deliverer, type MayStart, SINK_TIMEOUT_MS } from "../app/deliver.js";
import {
  type DeliveryJob,
  deadLetterAttempts,
  type JobEnvelope,
  mostAttempts,
  readJobEnvelope,
  SCHEDULE_SHORTENED,
  thrownOutcome,
} from "../core/delivery.js";
import { errorMessage } from "../core/errors.js";
import type { Policy } from "../core/policy.js";
import { isCopySent, type Queue, type ReceivedMessage } from "../core/queue.js";
import { RememberedIds, UnsentReceives } from "../core/remembered-ids.js";
import { withoutUserinfo } from "../core/url-userinfo.js";
import {
  createLambdaRuntime,
  DLQ_URL_ENV,
  isArnOfQueueAt,
  type LambdaOptions,
  QUEUE_URL_ENV,
  refuseEvent,
  SQS_ANSWER_TIMEOUT_MS,
  SQS_CONNECT_TIMEOUT_MS,
} from "./lambda-config.js";

/** What the handler reads of Lambda's context: how long the invocation has left. */
export type SqsContext = Pick<Context, "getRemainingTimeInMillis">;
export type SqsHandler = (event: SQSEvent, context?: SqsContext) => Promise<SQSBatchResponse>;

/**
 * Time kept to answer in: every SQS call ends this long before the invocation's time runs out,
 * the SDK's retries included, and its record is reported. A settle needing more than one try of
 * each call (SETTLE_MARGIN_MS) is cut short there rather than run into the function's timeout.
 */
const RETURN_MS = 1_000;

/**
 * Time a delivery needs beyond its sink call: one try of each SQS call that settles it (a retry's
 * visibility change; a dead letter's two, the send to the DLQ and then the delete) and the
 * return. A delivery starts only while the invocation has its egress timeout plus this left: one
 * started later could run into the function's timeout, which fails the whole batch, so every
 * record, delivered ones too, comes back (sent twice, and each a receive of its retry schedule
 * spent).
 */
export const SETTLE_MARGIN_MS = 2 * (SQS_CONNECT_TIMEOUT_MS + SQS_ANSWER_TIMEOUT_MS) + RETURN_MS;

/**
 * Why a record is back past its sink's last attempt (`Deliverer.deliver`'s `interrupted`, which
 * dead-letters it unsent, as `serve` does a job its delivery thread died with): the receive of
 * that attempt recorded no outcome. Sent again, a job that ends the function every time failed
 * its batch at each receive (the batch's other records back too, each a receive spent) until the
 * redrive policy moved it, without a reason. A record is back past it so too when its sink's
 * schedule was shortened while it waited for a retry, which nothing on the record tells apart
 * (SCHEDULE_SHORTENED).
 */
const LAST_ATTEMPT_UNSETTLED = `its last attempt recorded no outcome (the delivery function ended while delivering it: out of memory, a crash, its timeout; or the SQS call that settles it failed), ${SCHEDULE_SHORTENED}`;

/** How long a job waits on the queue before the next look at a broken configuration (the Worker's too). */
const BROKEN_CONFIG_HOLD_SECONDS = 300;

/**
 * The time left at an invocation's start below which no sink call of it could ever start: the
 * function's timeout is too short (Lambda's default is 3 s), a configuration problem as a policy
 * that does not load is, and handled as one.
 */
export const LEAST_TIMEOUT_MS = SINK_TIMEOUT_MS + SETTLE_MARGIN_MS;

export function createSqsHandler(options: LambdaOptions = {}): SqsHandler {
  const runtime = createLambdaRuntime(options);
  const { logger } = runtime;
  /**
   * The queue of one invocation, its every SQS call ended by that invocation's time left. Lambda
   * Managed Instances run several batches at once in one environment, sharing this handler: each
   * gets its own queue, whose batched deletes and visibility changes never carry another's entries.
   */
  const queueFor = (invocation: SqsContext | undefined): Queue<DeliveryJob> =>
    runtime.queue("consumer", () => {
      if (!invocation) return undefined;
      const leftMs = invocation.getRemainingTimeInMillis() - RETURN_MS;
      // Already past it, the signal is aborted, so the SDK sends nothing: AbortSignal.timeout(0)
      // fires only after the request went out, and SQS could carry out a call reported as failed
      // (a dead letter sent, the record back for a second one).
      return leftMs > 0
        ? AbortSignal.timeout(leftMs)
        : AbortSignal.abort(new DOMException("the invocation's time is up", "TimeoutError"));
    });
  let current: Deliverer | undefined;
  let toldBroken = false;
  let toldShort = false;
  /**
   * Records this container dead-lettered or held whose delete then failed, by SQS message id (the
   * same on every receive), to what was done. Such a record is not reported, so Lambda deletes it;
   * should that fail too and it come back here, it is neither delivered again nor dead-lettered
   * or held a second time.
   */
  const settled = new RememberedIds<"dead-lettered" | "held">();
  /**
   * Records this container reported after a receive that sent nothing (a dead letter made before
   * any send, or a hold, whose SQS call failed): back, their receive count holds that receive,
   * which is taken off their attempts again (`UnsentReceives`). A record that comes back to
   * another container counts it.
   */
  const unsent = new UnsentReceives();
  /**
   * A record as the queue adapter takes it back: its job, and its attempts (sends) less the
   * receives of earlier holds whose copy was not sent (`unsent`).
   */
  const received = (record: SQSRecord, carried: JobEnvelope): ReceivedMessage<DeliveryJob> => ({
    id: carried.body.id,
    body: carried.body,
    attempts: unsent.sends(record.messageId, carried.sent + receiveCount(record)),
    holds: carried.holds,
    receipt: record.receiptHandle,
  });
  /** The look at the queue's redrive policy, once per container, with the first valid policy. */
  let redriveChecked: Promise<void> | undefined;

  /**
   * Says, once, when the queue's redrive policy would take jobs from hookgate: a `maxReceiveCount`
   * below the attempts of the policy's longest retry schedule moves a job that keeps failing to
   * the DLQ before its last retries, and its dead letter then carries no error; one equal to
   * them moves a job whose last attempt ended the function before the function can dead-letter it
   * with why, at the next receive; a queue with no
   * redrive policy keeps a record the function never settles until the queue's retention runs
   * out, failing its batch each time. Never holds up a delivery: a read
   * that fails says what to check by hand.
   */
  async function checkRedrive(policy: Policy, signal: AbortSignal | undefined): Promise<void> {
    const attempts = mostAttempts(Object.values(policy.document.sinks ?? {}));
    // One receive more than the attempts: the one at which a job whose last attempt ended the
    // function is dead-lettered, with why (LAST_ATTEMPT_UNSETTLED), before SQS moves it without.
    const needed = attempts + 1;
    const set = `set its maxReceiveCount to at least ${needed}, the attempts of the policy's longest retry schedule and one receive more, at which a job whose last attempt ended the function is dead-lettered with why (infra/aws/template.yaml sets 25)`;
    // Without it there is no queue to ask, whatever the role allows: said as the fix it needs.
    if (!runtime.env(QUEUE_URL_ENV)) {
      logger.log(
        "warn",
        `HOOKGATE_QUEUE_URL is not set on the delivery function: set it to the jobs queue's URL (serverless.yml sets it for both functions), without which no job is retried at its delay, held or dead-lettered; until then check the queue's redrive policy by hand: ${set}`,
        { neededReceives: needed },
      );
      return;
    }
    let redrive: RedrivePolicy | undefined;
    try {
      redrive = await runtime.redrivePolicy(signal);
    } catch (e) {
      logger.log(
        "warn",
        `could not read the queue's redrive policy (the delivery function's role needs sqs:GetQueueAttributes on the queue, as infra/aws/template.yaml's ConsumerPolicy allows); check it by hand: ${set}`,
        { neededReceives: needed, error: errorMessage(e) },
      );
      return;
    }
    if (redrive === undefined) {
      logger.log(
        "warn",
        `the queue has no redrive policy: a record the delivery function never settles (one that ends it before its delivery starts, or whose dead letter cannot be sent) comes back until the queue's retention period ends, failing its batch each time; give the queue a redrive policy to the DLQ and ${set}`,
        { neededReceives: needed },
      );
      return;
    }
    const { maxReceiveCount } = redrive;
    if (maxReceiveCount < needed)
      logger.log(
        "warn",
        `the queue's redrive policy moves a job to the DLQ after ${maxReceiveCount} receives, fewer than it may need: ${
          maxReceiveCount < attempts
            ? "a job that keeps failing loses its last retries, and its dead letter the error"
            : "a job whose last attempt ended the function leaves before the function can dead-letter it, and its dead letter has no reason"
        } (hookgate dlq list shows "moved by the SQS redrive policy"); ${set}`,
        { maxReceiveCount, neededReceives: needed },
      );
    checkRedriveTarget(redrive.deadLetterTargetArn);
  }

  /**
   * Says, once, when the redrive policy moves jobs to another queue than `HOOKGATE_DLQ_URL`'s,
   * where the function puts its own dead letters: the jobs SQS moves (those the function never
   * settles) would lie where `hookgate dlq list` with that URL, and the DLQ alarm of
   * infra/aws/template.yaml, never look (a URL of another stage's DLQ, a policy set by hand).
   */
  function checkRedriveTarget(target: string | undefined): void {
    const dlqUrl = runtime.env(DLQ_URL_ENV);
    // Without the URL every dead letter is reported (said with each record); nothing to compare.
    if (!dlqUrl || target === undefined || isArnOfQueueAt(dlqUrl)(target)) return;
    logger.log(
      "warn",
      `the queue's redrive policy moves jobs to another queue than ${DLQ_URL_ENV}'s, where the delivery function puts its own dead letters: the jobs SQS moves (those the function never settles) are not where \`hookgate dlq list\` with ${DLQ_URL_ENV} looks; set the redrive policy's deadLetterTargetArn to the queue ${DLQ_URL_ENV} names, or ${DLQ_URL_ENV} to the redrive target's URL (serverless.yml sets both to the DeadLetterQueue of infra/aws/template.yaml)`,
      // A local server's URL may carry a user and password.
      { redriveTarget: target, dlqUrl: withoutUserinfo(dlqUrl) },
    );
  }

  /**
   * While the configuration is broken (the policy, or a function timeout too short to start any
   * delivery), a job waits for a valid one: held on the queue with a delay (`Queue.hold`, as a
   * copy carrying its sends and holds), its record not reported, so Lambda deletes it.
   * Reported, it would come back with a higher ApproximateReceiveCount, which the sink's retry
   * schedule reads as attempts (one real attempt after the fix could dead-letter it), and the
   * redrive policy would move it to the DLQ. A wait for the policy is no hold either
   * (as the Worker's `holdForPolicy`): the copy carries the holds the record had. Whether it was
   * settled: a record that is no job needs no policy and is dead-lettered at once
   * (`deadLetterNoJob`); one whose copy is not sent is reported (its receive then noted in
   * `unsent`, as it sent nothing).
   */
  async function hold(queue: Queue<DeliveryJob>, record: SQSRecord, problem: BrokenConfig): Promise<boolean> {
    if (settled.get(record.messageId)) return true;
    let carried: JobEnvelope;
    try {
      carried = decodeEnvelope(record.body);
    } catch (e) {
      // No policy can make it deliverable: dead-lettered now, as with a valid one.
      return !(await deadLetterNoJob(queue, record, e));
    }
    try {
      await queue.hold(received(record, carried), BROKEN_CONFIG_HOLD_SECONDS * 1000, problem.reason, {
        addsHold: false,
      });
      return true;
    } catch (e) {
      if (isCopySent(e, "held copy")) {
        // The copy is on the queue: Lambda's delete is the second try, as for any held record.
        settled.remember(record.messageId, "held");
        logger.log(
          "warn",
          `delivery held for ${problem.waitingFor}; the old message's delete failed, left for Lambda to delete`,
          { messageId: record.messageId, job: carried.body.id, deleteFailed: errorMessage(e) },
        );
        return true;
      }
      // Nothing was sent on this receive, which its receive count holds when it comes back.
      unsent.add(record.messageId);
      logger.log("error", "could not hold a record on the queue; reported for redelivery", {
        messageId: record.messageId,
        error: errorMessage(e),
      });
      return false;
    }
  }

  /**
   * A record that is no job: no attempt can deliver it, so into the DLQ at once, as stored and
   * with why (as the Worker does), rather than back 25 times until the redrive policy moves it
   * without a reason. Whether it must be reported: its dead letter was not sent. One whose
   * delete alone failed is not (Lambda's own delete is the second try), and is remembered.
   */
  async function deadLetterNoJob(
    queue: Queue<DeliveryJob>,
    record: SQSRecord,
    problem: unknown,
  ): Promise<boolean> {
    const fields = { messageId: record.messageId };
    const reason = `not a delivery job: ${errorMessage(problem)}`;
    const unreadable = {
      id: record.messageId,
      body: record.body,
      // Never sent, on this receive or an earlier one (its dead letter's send failed): no attempt.
      attempts: 0,
      receipt: record.receiptHandle,
    };
    try {
      await queue.deadLetter(unreadable as unknown as ReceivedMessage<DeliveryJob>, reason);
      logger.log("error", "record dead-lettered", { ...fields, reason });
      return false;
    } catch (e) {
      if (isCopySent(e, "dead letter")) {
        settled.remember(record.messageId, "dead-lettered");
        logger.log("error", "record dead-lettered", {
          ...fields,
          reason,
          deleteFailed: `${errorMessage(e)}; left for Lambda to delete`,
        });
        return false;
      }
      logger.log("error", "record failed; reported for redelivery", { ...fields, error: errorMessage(e) });
      return true;
    }
  }

  /** Whether the record must be reported in `batchItemFailures`. */
  async function handleRecord(
    queue: Queue<DeliveryJob>,
    deliverer: Deliverer,
    record: SQSRecord,
    mayStart: MayStart | undefined,
  ): Promise<boolean> {
    const fields: Record<string, unknown> = { messageId: record.messageId };
    const done = settled.get(record.messageId);
    if (done) {
      logger.log("warn", `record already ${done}; not delivered again, left for Lambda to delete`, fields);
      return false;
    }
    /** The dead letter being made, to be logged as made should only its delete fail. */
    let dead: { readonly line: string; readonly reason: string } | undefined;
    /** The held copy being sent, to be logged as held should only the delete fail. */
    let held: { readonly reason: string; readonly attempts: number } | undefined;
    /** Nothing was sent on this receive: should its settle fail, it is no attempt when it comes back. */
    let sentNothing = false;
    try {
      let carried: JobEnvelope;
      try {
        carried = decodeEnvelope(record.body);
      } catch (e) {
        return await deadLetterNoJob(queue, record, e);
      }
      const message = received(record, carried);
      const { body: job, attempts } = message;
      const { holds } = carried;
      Object.assign(fields, { job: job.id, sink: job.sink, event: job.notification.eventName, attempts });
      const outcome = await deliverer
        .deliver(job, attempts, { mayStart, holds, interrupted: LAST_ATTEMPT_UNSETTLED })
        .catch((e: unknown) => thrownOutcome(attempts, e));
      sentNothing = outcome.kind !== "ack" && outcome.unsent === true;
      switch (outcome.kind) {
        case "ack":
          unsent.forget(record.messageId);
          logger.log("info", "delivered", fields);
          return false;
        case "retry":
          if (outcome.unsent) {
            // Nothing was sent (a rate limit's hold, or too little time left): a copy with the
            // counts goes back and this message is deleted, so no receive is spent. One SQS call
            // and a delete, within SETTLE_MARGIN_MS as a dead letter's two are.
            // The sends after the hold: the copy does not count this receive.
            held = { reason: outcome.reason, attempts: Math.max(0, attempts - 1) };
            await queue.hold(message, outcome.delayMs, outcome.reason);
            logger.log("info", "delivery held; not sent", {
              ...fields,
              attempts: held.attempts,
              holds: holds + 1,
              retryInMs: outcome.delayMs,
              reason: outcome.reason,
            });
            return false;
          }
          await queue.retry(message, outcome.delayMs, outcome.reason);
          logger.log("warn", "delivery failed; will retry", {
            ...fields,
            retryInMs: outcome.delayMs,
            reason: outcome.reason,
          });
          return true;
        case "dead": {
          dead = { line: "delivery dead-lettered", reason: outcome.reason };
          // The sends: a job dead-lettered past MAX_HOLDS was not sent this time either.
          const sends = deadLetterAttempts(outcome, attempts);
          fields.attempts = sends;
          await queue.deadLetter({ ...message, attempts: sends }, outcome.reason);
          unsent.forget(record.messageId);
          logger.log("error", "delivery dead-lettered", { ...fields, reason: outcome.reason });
          return false;
        }
      }
    } catch (e) {
      if (dead && isCopySent(e, "dead letter")) {
        // The dead letter is in the DLQ. Reported, the record would come back, be delivered
        // again and get a second dead letter; not reported, Lambda deletes it, a second try at
        // the delete that failed. Logged as every dead letter is, with why, and the delete's error.
        settled.remember(record.messageId, "dead-lettered");
        logger.log("error", dead.line, {
          ...fields,
          reason: dead.reason,
          deleteFailed: `${errorMessage(e)}; left for Lambda to delete`,
        });
        return false;
      }
      if (held && isCopySent(e, "held copy")) {
        // The copy is on the queue: not reported, Lambda deletes the record (a second try at the
        // delete), and should it come back here it is not delivered again.
        settled.remember(record.messageId, "held");
        logger.log("warn", "delivery held; the old message's delete failed, left for Lambda to delete", {
          ...fields,
          attempts: held.attempts,
          reason: held.reason,
          deleteFailed: errorMessage(e),
        });
        return false;
      }
      if (sentNothing) unsent.add(record.messageId);
      logger.log("error", "record failed; reported for redelivery", {
        ...fields,
        error: errorMessage(e),
      });
      return true;
    }
  }

  /**
   * The queues said to be no HOOKGATE_QUEUE_URL's, by their ARNs: said once per container and
   * queue (with only the last kept, two mappings on other queues said it at each other batch).
   */
  const toldSources = new Set<string>();
  /**
   * Says, once, a batch from a queue that HOOKGATE_QUEUE_URL does not name (the URL of another
   * stage's queue, say): a retry's visibility change was refused on the URL's queue, so the record
   * came back only after its own visibility timeout, and a held job's copy went to the URL's queue,
   * delivered, if at all, by whatever reads that one, each failure naming only the receipt handle.
   */
  function tellOtherSource(records: readonly SQSRecord[]): void {
    const queueUrl = runtime.env(QUEUE_URL_ENV);
    if (!queueUrl) return;
    const isJobsArn = isArnOfQueueAt(queueUrl);
    // A hand-made test event may carry no ARN: nothing to compare.
    const other = records.find((r) => typeof r.eventSourceARN === "string" && !isJobsArn(r.eventSourceARN));
    if (!other || toldSources.has(other.eventSourceARN)) return;
    toldSources.add(other.eventSourceARN);
    logger.log(
      "error",
      `a batch came from a queue that ${QUEUE_URL_ENV} does not name: its retries come back at the queue's visibility timeout, not at their delay, and its held jobs' copies go to ${QUEUE_URL_ENV}'s queue instead`,
      {
        queue: other.eventSourceARN,
        fix: `set ${QUEUE_URL_ENV} on the delivery function to the URL of the queue its event source mapping reads (serverless.yml sets both to the DeliveryQueue of infra/aws/template.yaml)`,
      },
    );
  }

  return async (event, context) => {
    if (!isSqsBatch(event)) {
      // An HTTP request or a schedule wired to the consumer: thrown, the invocation fails where it
      // can be seen (a TypeError on `Records` said nothing of what was wrong). So is an SNS
      // subscription's or an S3 notification's Records list: read as SQS records, each was "no
      // job", reported as a failure with no message id, which an asynchronous invocation does not
      // read, so it ended as a success and the event was lost.
      refuseEvent(logger, event, NOT_SQS);
    }
    const dlqUrl = runtime.env(DLQ_URL_ENV);
    const isDlqArn = dlqUrl ? isArnOfQueueAt(dlqUrl) : undefined;
    const fromDlq = isDlqArn && event.Records.find((r) => isDlqArn(r.eventSourceARN));
    if (fromDlq) {
      // An event source mapping on the DLQ too: each letter read as its job went to its sink again
      // and, failing, into the DLQ again, which handed it back, for ever. Thrown rather than
      // reported, before anything is delivered or held: the whole batch stays on the DLQ, also
      // under a mapping without ReportBatchItemFailures, which deletes reported records too.
      const fix = `remove the event source mapping of ${fromDlq.eventSourceARN}, where ${DLQ_URL_ENV} sends dead letters, from the delivery function (or, if that is its jobs queue, set ${DLQ_URL_ENV} to the DLQ); deliver dead letters with \`hookgate dlq replay\` once their sink is fixed`;
      logger.log("error", DEAD_LETTERS_BACK, {
        queue: fromDlq.eventSourceARN,
        records: event.Records.length,
        fix,
      });
      throw new Error(`${DEAD_LETTERS_BACK}: ${fix}`);
    }
    tellOtherSource(event.Records);
    const queue = queueFor(context);
    // Read before the policy's first load spends any: what the function's timeout gives.
    const startedWithMs = context?.getRemainingTimeInMillis();
    const config = await runtime.config();
    const failed = (records: readonly SQSRecord[]): SQSBatchResponse => ({
      batchItemFailures: records.map((r): SQSBatchItemFailure => ({ itemIdentifier: r.messageId })),
    });
    if (!config.ok) {
      // Logged once per container; every job waits on the queue until the configuration is fixed.
      if (!toldBroken)
        logger.log("error", "configuration invalid; delivery jobs wait on the queue for a valid policy", {
          problem: config.problem,
          retryInSeconds: BROKEN_CONFIG_HOLD_SECONDS,
        });
      toldBroken = true;
      const held = await Promise.all(event.Records.map((r) => hold(queue, r, INVALID_POLICY)));
      return failed(event.Records.filter((_, i) => !held[i]));
    }
    if (startedWithMs !== undefined && startedWithMs < LEAST_TIMEOUT_MS) {
      // Held one by one for lack of time, each job would come back at once and, after MAX_HOLDS
      // rounds, be dead-lettered without a send.
      if (!toldShort)
        logger.log(
          "error",
          `the delivery function's timeout is too short: a sink call starts only while ${LEAST_TIMEOUT_MS / 1000} s of the invocation are left; set it to 60 s, as serverless.yml does (infra/README.md); delivery jobs wait on the queue until then`,
          {
            invocationStartedWithMs: startedWithMs,
            neededMs: LEAST_TIMEOUT_MS,
            retryInSeconds: BROKEN_CONFIG_HOLD_SECONDS,
          },
        );
      toldShort = true;
      const held = await Promise.all(event.Records.map((r) => hold(queue, r, SHORT_TIMEOUT)));
      return failed(event.Records.filter((_, i) => !held[i]));
    }
    const { policy } = config;
    current ??= createDeliverer({
      policy: () => policy,
      egress: runtime.egress,
      env: runtime.env,
      clock: runtime.clock,
      random: Math.random,
      hmac: nodeHmacSha256,
    });
    const deliverer = current;
    const mayStart: MayStart | undefined =
      context && ((timeoutMs) => context.getRemainingTimeInMillis() >= timeoutMs + SETTLE_MARGIN_MS);
    // Beside the deliveries, and within the invocation's time as every SQS call is (read from
    // the time it started with, the one look already taken).
    redriveChecked ??= checkRedrive(
      policy,
      startedWithMs === undefined ? undefined : AbortSignal.timeout(Math.max(0, startedWithMs - RETURN_MS)),
    );
    const [reported] = await Promise.all([
      Promise.all(event.Records.map((record) => handleRecord(queue, deliverer, record, mayStart))),
      redriveChecked,
    ]);
    return failed(event.Records.filter((_, i) => reported[i]));
  };
}

/** Why jobs are held while the configuration is broken: the hold's reason, and what they wait for. */
interface BrokenConfig {
  readonly reason: string;
  readonly waitingFor: string;
}
const INVALID_POLICY: BrokenConfig = { reason: "the configuration is invalid", waitingFor: "a valid policy" };
const SHORT_TIMEOUT: BrokenConfig = {
  reason: "the function's timeout is too short to start a delivery",
  waitingFor: "a longer function timeout",
};

/** The queue adapter's `{id, body}` envelope of a job; throws saying why a body is not one. */
export function decodeEnvelope(text: string): JobEnvelope {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new Error("body is not JSON");
  }
  // The Worker's consumer reads its messages with the same reader.
  const envelope = readJobEnvelope(value);
  if (typeof envelope === "string") throw new Error(envelope);
  return envelope;
}

/** 1 on the first delivery; SQS counts every receive, including those that timed out. */
function receiveCount(record: SQSRecord): number {
  const count = Number(record.attributes.ApproximateReceiveCount);
  return Number.isInteger(count) && count > 0 ? count : 1;
}

export const handler: SqsHandler = createSqsHandler();

/** Whether the event is an SQS event source batch: a Records list, each record from `aws:sqs`. */
function isSqsBatch(event: unknown): event is SQSEvent {
  const records = (event as { Records?: unknown } | null)?.Records;
  return (
    Array.isArray(records) &&
    records.every((r) => (r as { eventSource?: unknown } | null)?.eventSource === "aws:sqs")
  );
}

const DEAD_LETTERS_BACK =
  "dead letters came back to the delivery function; left on the DLQ, not delivered again";

const NOT_SQS =
  "the SQS consumer was invoked with an event that is no SQS batch (no Records list of aws:sqs records): invoke lambda-sqs.handler through the queue's event source mapping; hook requests go to lambda-http.handler";

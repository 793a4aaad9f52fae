/**
 * The delivery handler on Lambda, fed SQS event source batches (test/fixtures/lambda/sqs-event.json)
 * whose records were received from a real SQS server (local-aws-sqs), delivering to loopback
 * receivers through the egress guard. The partial batch response must name exactly the records
 * Lambda should leave on the queue (fanout.md B1).
 */
import { readFileSync } from "node:fs";
import type { Server, ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import {
  CreateQueueCommand,
  DeleteMessageCommand,
  DeleteQueueCommand,
  GetQueueAttributesCommand,
  type Message,
  ReceiveMessageCommand,
  SendMessageCommand,
  type SQSClient,
} from "@aws-sdk/client-sqs";
import type { SQSEvent, SQSRecord } from "aws-lambda";
import { createSqsServer } from "local-aws-sqs";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { createSqsClientForLocal, createSqsQueue } from "../../src/adapters/queue/sqs.js";
import { type DeliveryJob, MAX_HOLDS } from "../../src/core/delivery.js";
import type { Logger } from "../../src/core/ports.js";
import {
  createLambdaSqsClient,
  isArnOfQueueAt,
  SQS_ANSWER_TIMEOUT_MS,
  SQS_CONNECT_TIMEOUT_MS,
} from "../../src/entry/lambda-config.js";
import {
  createSqsHandler,
  decodeEnvelope,
  SETTLE_MARGIN_MS,
  type SqsContext,
} from "../../src/entry/lambda-sqs.js";
import { type LoopbackServer, loopbackServer } from "../support/loopback.js";
import { type WebhookReceiver, webhookReceiver } from "../support/receiver.js";

const SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
const FIXTURE: SQSEvent = JSON.parse(
  readFileSync(new URL("../fixtures/lambda/sqs-event.json", import.meta.url), "utf8"),
);
/** Events of other sources that also carry a Records list (AWS's shapes): an SNS subscription, an S3 notification. */
const SNS_EVENT = JSON.parse(
  readFileSync(new URL("../fixtures/lambda/sns-event.json", import.meta.url), "utf8"),
);
const S3_EVENT = JSON.parse(
  readFileSync(new URL("../fixtures/lambda/s3-event.json", import.meta.url), "utf8"),
);
const jobOf = (n: number): DeliveryJob => decodeEnvelope(FIXTURE.Records[n]?.body ?? "").body;
const withSink = (job: DeliveryJob, sink: string): DeliveryJob => ({
  ...job,
  id: `${job.notification.id}.${sink}`,
  sink,
});

let server: Server;
let client: SQSClient;
let queueUrl: string;
let dlqUrl: string;
let receiver: WebhookReceiver;
let failing: LoopbackServer;
let queues = 0;

beforeAll(async () => {
  server = await createSqsServer({ port: 0, hostname: "127.0.0.1" });
  client = createSqsClientForLocal(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
  receiver = await webhookReceiver(SECRET);
  failing = await loopbackServer((_req, res) => res.writeHead(503).end("busy"));
});
afterAll(async () => {
  client?.destroy();
  await receiver?.close();
  await failing?.close();
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
});

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

/**
 * A source queue and its DLQ wired by a redrive policy, as infra/aws/template.yaml declares them
 * (`maxReceiveCount` 25; with null, a queue with no redrive policy).
 */
async function createPair(maxReceiveCount: number | null = 25): Promise<void> {
  const n = ++queues;
  dlqUrl = (await client.send(new CreateQueueCommand({ QueueName: `lambda-dlq-${n}` }))).QueueUrl ?? "";
  const arn = await client.send(
    new GetQueueAttributesCommand({ QueueUrl: dlqUrl, AttributeNames: ["QueueArn"] }),
  );
  queueUrl =
    (
      await client.send(
        new CreateQueueCommand({
          QueueName: `lambda-jobs-${n}`,
          ...(maxReceiveCount !== null && {
            Attributes: {
              RedrivePolicy: JSON.stringify({
                deadLetterTargetArn: arn.Attributes?.QueueArn,
                maxReceiveCount,
              }),
            },
          }),
        }),
      )
    ).QueueUrl ?? "";
  const pair = [queueUrl, dlqUrl];
  cleanups.push(async () => {
    for (const url of pair) await client.send(new DeleteQueueCommand({ QueueUrl: url }));
  });
}

/**
 * A FIFO queue and its FIFO DLQ (SQS requires a FIFO queue's DLQ to be FIFO too), wired as
 * `createPair` wires the standard ones; their URLs, deleted after the test.
 */
async function createFifoPair(): Promise<{ queueUrl: string; dlqUrl: string }> {
  const n = ++queues;
  const fifo = { FifoQueue: "true" };
  const dlq =
    (await client.send(new CreateQueueCommand({ QueueName: `lambda-dlq-${n}.fifo`, Attributes: fifo })))
      .QueueUrl ?? "";
  const arn = await client.send(
    new GetQueueAttributesCommand({ QueueUrl: dlq, AttributeNames: ["QueueArn"] }),
  );
  const source =
    (
      await client.send(
        new CreateQueueCommand({
          QueueName: `lambda-jobs-${n}.fifo`,
          Attributes: {
            ...fifo,
            RedrivePolicy: JSON.stringify({
              deadLetterTargetArn: arn.Attributes?.QueueArn,
              maxReceiveCount: 25,
            }),
          },
        }),
      )
    ).QueueUrl ?? "";
  cleanups.push(async () => {
    for (const url of [source, dlq]) await client.send(new DeleteQueueCommand({ QueueUrl: url }));
  });
  return { queueUrl: source, dlqUrl: dlq };
}

/** The policy of the `audit` receiver and the `flaky` sink, at `flakyUrl` (the failing server's by default). */
const policy = (flakyUrl = failing.url) =>
  JSON.stringify({
    version: 1,
    egress: { allowCidrs: ["127.0.0.1/32"] },
    rules: [{ id: "audit-everything", on: "*", notify: ["audit", "flaky"] }],
    sinks: {
      audit: { type: "webhook", url: receiver.url, secret: "env:WHSEC" },
      flaky: { type: "webhook", url: `${flakyUrl}/hooks`, retryScheduleSeconds: [60] },
    },
  });

/** A policy that sends every event's job to one webhook sink, `audit`, with these settings (its url first). */
const auditPolicy = (audit: { url: string; retryScheduleSeconds?: readonly number[] }) =>
  JSON.stringify({
    version: 1,
    egress: { allowCidrs: ["127.0.0.1/32"] },
    rules: [{ id: "audit-everything", on: "*", notify: ["audit"] }],
    sinks: { audit: { type: "webhook", secret: "env:WHSEC", ...audit } },
  });

interface HandlerDeps {
  sqsClient?: SQSClient;
  log?: Logger["log"];
}

/**
 * A handler of `policy()` on the test's queue pair, `env` changing any of that, through
 * `sqsClient` (the loopback server's client by default), its log lines to `log`.
 */
const handlerFor = (env: Record<string, string> = {}, deps: HandlerDeps = {}) =>
  createSqsHandler({
    env: {
      HOOKGATE_POLICY: policy(),
      HOOKGATE_QUEUE_URL: queueUrl,
      HOOKGATE_DLQ_URL: dlqUrl,
      WHSEC: SECRET,
      ...env,
    },
    sqsClient: async () => deps.sqsClient ?? client,
    logger: { log: deps.log ?? (() => undefined) },
  });

/** A handler whose policy sends every event's job to one webhook, `url` (a receiver of the test's own). */
const ownSinkHandler = (url: string, deps: HandlerDeps = {}) =>
  handlerFor({ HOOKGATE_POLICY: auditPolicy({ url }) }, deps);

/** A handler whose policy does not load. */
const brokenHandler = (deps: HandlerDeps = {}) => handlerFor({ HOOKGATE_POLICY: "{" }, deps);

/** The message and fields of each line logged, and the `log` that keeps them. */
function logLines() {
  const lines: { message: string; fields: Record<string, unknown> }[] = [];
  const log: Logger["log"] = (_level, message, fields = {}) => lines.push({ message, fields });
  return { lines, log };
}

/**
 * An SQS endpoint that never answers, the function's client of it (one try per call when
 * `maxAttempts` is 1) and the env naming queues there; closed after the test. The look at the
 * queue's redrive policy alone is refused at once, as a role without sqs:GetQueueAttributes is:
 * the handler waits for that look too, and a hung one held each test for its three tries (15 s).
 */
async function hangingSqs(maxAttempts?: number) {
  const hanging = await loopbackServer((req, res) => {
    if (req.headers["x-amz-target"] === "AmazonSQS.GetQueueAttributes")
      res
        .writeHead(400, { "content-type": "application/x-amz-json-1.0" })
        .end(JSON.stringify({ __type: "com.amazonaws.sqs#AccessDenied", message: "not allowed" }));
  });
  cleanups.push(() => hanging.close());
  const sqs = await createLambdaSqsClient({
    endpoint: hanging.url,
    region: "us-east-1",
    credentials: { accessKeyId: "local", secretAccessKey: "local" },
    ...(maxAttempts === undefined ? {} : { maxAttempts }),
  });
  cleanups.push(async () => sqs.destroy());
  const env = {
    HOOKGATE_QUEUE_URL: `${hanging.url}/000000000000/jobs`,
    HOOKGATE_DLQ_URL: `${hanging.url}/000000000000/dlq`,
  };
  return { hanging, sqs, env };
}

/** An event of one record a job, `m-<i>` and `receipt-<i>`, in the fixture's shape, never on a queue. */
function recordsOf(jobs: readonly DeliveryJob[]): SQSEvent {
  const template = FIXTURE.Records[0] as SQSRecord;
  return {
    Records: jobs.map((job, i) => ({
      ...template,
      messageId: `m-${i}`,
      receiptHandle: `receipt-${i}`,
      body: JSON.stringify({ id: job.id, body: job }),
    })),
  };
}

/**
 * A client of the loopback SQS server whose `before` runs ahead of each of its calls (the
 * command's name and its input, to change in place): throwing fails that call. Destroyed after
 * the test.
 */
function clientWith(before: (command: string, input: Record<string, unknown>) => void): SQSClient {
  const changed = createSqsClientForLocal(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
  cleanups.push(async () => changed.destroy());
  changed.middlewareStack.add(
    (next, context) => async (args) => {
      before(context.commandName ?? "", args.input as Record<string, unknown>);
      return next(args);
    },
    { step: "initialize", name: "before" },
  );
  return changed;
}

/**
 * The requests of one SQS action (`ChangeMessageVisibilityBatch`) a server got, by the AWS JSON
 * protocol's target header: not the handler's look at the queue's redrive policy.
 */
const callsTo = (server: LoopbackServer, action: string) =>
  server.received.filter((r) => r.headers["x-amz-target"] === `AmazonSQS.${action}`);

/**
 * Receives what is on the queue (the test's jobs queue by default) as the event source mapping
 * would, keeping the messages visible.
 */
async function receiveAll(expected: number, url = queueUrl): Promise<Message[]> {
  const got: Message[] = [];
  while (got.length < expected) {
    const res = await client.send(
      new ReceiveMessageCommand({
        QueueUrl: url,
        MaxNumberOfMessages: 10,
        VisibilityTimeout: 0,
        WaitTimeSeconds: 0,
        AttributeNames: ["All"],
        MessageSystemAttributeNames: ["All"],
      }),
    );
    for (const m of res.Messages ?? []) if (!got.some((g) => g.MessageId === m.MessageId)) got.push(m);
  }
  return got;
}

/** The Lambda event for received messages, in the shape of the fixture (hand-written in SQS's shape). */
function eventOf(
  messages: readonly Message[],
  receiveCounts: Readonly<Record<string, string>> = {},
): SQSEvent {
  const template = FIXTURE.Records[0] as SQSRecord;
  return {
    Records: messages.map((m) => ({
      ...template,
      eventSourceARN: arnOf(queueUrl),
      messageId: m.MessageId ?? "",
      receiptHandle: m.ReceiptHandle ?? "",
      body: m.Body ?? "",
      md5OfBody: m.MD5OfBody ?? "",
      attributes: {
        ...template.attributes,
        ApproximateReceiveCount: receiveCounts[m.Body ?? ""] ?? m.Attributes?.ApproximateReceiveCount ?? "1",
      },
    })),
  };
}

/** The ARN of the queue at `url` (`…/ACCOUNT/NAME`), as an event source mapping names it. */
function arnOf(url: string): string {
  const [account, name] = new URL(url).pathname.split("/").filter(Boolean);
  return `arn:aws:sqs:us-east-1:${account}:${name}`;
}

/**
 * Lambda's context for an invocation of the function serverless.yml declares: 60 s left at its
 * start, the handler's first look; its later looks return `later` in turn, the last repeating.
 */
function invocationOf(...later: number[]): SqsContext {
  const looks = [60_000, ...later];
  return { getRemainingTimeInMillis: () => (looks.length > 1 ? looks.shift() : looks[0]) ?? 0 };
}

async function send(jobs: readonly DeliveryJob[], raw: readonly string[] = []): Promise<void> {
  const queue = createSqsQueue<DeliveryJob>({ client, queueUrl, deadLetterQueueUrl: dlqUrl });
  await queue.send(jobs.map((job) => ({ id: job.id, body: job })));
  for (const body of raw)
    await client.send(new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: body }));
}

describe("the Lambda SQS handler", () => {
  it("fails an invocation whose event is no SQS batch, saying which handler takes it", async () => {
    const lines: Record<string, unknown>[] = [];
    const handler = handlerFor({}, { log: (level, msg, fields) => lines.push({ level, msg, ...fields }) });
    const httpRequest = JSON.parse(
      readFileSync(new URL("../fixtures/lambda/http-api-v2-pre-tool-use.json", import.meta.url), "utf8"),
    );
    // A hook request wired to the consumer by mistake, a schedule, the console's test event.
    const notSqs = [
      httpRequest,
      { source: "aws.events", detail: {} },
      { key1: "value1" },
      { Records: "x" },
      null,
      SNS_EVENT,
      S3_EVENT,
    ];
    for (const event of notSqs)
      await expect(handler(event as unknown as SQSEvent)).rejects.toThrow(
        /no SQS batch .*lambda-http\.handler$/,
      );
    expect(lines.map((l) => [l.level, l.eventKeys])).toEqual([
      ["error", Object.keys(httpRequest).slice(0, 10)],
      ["error", ["source", "detail"]],
      ["error", ["key1"]],
      ["error", ["Records"]],
      ["error", []],
      ["error", ["Records"]],
      ["error", ["Records"]],
    ]);
  });

  it("decodes every job of the fixture's batch", () => {
    expect(FIXTURE.Records).toHaveLength(3);
    expect(FIXTURE.Records.map((_, i) => jobOf(i).notification.eventName)).toEqual([
      "PreToolUse",
      "Notification",
      "SessionEnd",
    ]);
  });

  it("reports only the retried record; delivers one, dead-letters one and the unreadable one", async () => {
    await createPair();
    const delivered = withSink(jobOf(0), "audit");
    const retried = withSink(jobOf(1), "flaky");
    const dead = withSink(jobOf(2), "flaky");
    await send([delivered, retried, dead], ["not a job"]);
    const messages = await receiveAll(4);
    const byBody = (match: (body: string) => boolean) => messages.find((m) => match(m.Body ?? ""))?.MessageId;
    // The dead job is on its second receive: its one scheduled retry is spent.
    const deadBody = messages.find((m) => m.Body?.includes(dead.id))?.Body ?? "";
    // The one that is no job on its third receive (its dead letter's send failed twice): never
    // sent, it records no attempt all the same (it once said 2).
    const event = eventOf(messages, { [deadBody]: "2", "not a job": "3" });

    const response = await handlerFor()(event);

    expect(response.batchItemFailures).toEqual([{ itemIdentifier: byBody((b) => b.includes(retried.id)) }]);
    // The webhook-id is the event's id, the same on every attempt.
    expect(receiver.unique).toContain(delivered.notification.id);
    expect(receiver.badSignatures).toBe(0);

    const queue = createSqsQueue<DeliveryJob>({ client, queueUrl, deadLetterQueueUrl: dlqUrl });
    const letters = await queue.listDead();
    expect(letters).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          id: dead.id,
          attempts: 2,
          error: expect.stringMatching(/gave up after 2 attempts: HTTP 503/),
        }),
        // As stored, under its SQS message id, saying why.
        expect.objectContaining({
          id: byBody((b) => b === "not a job"),
          body: "not a job",
          // Never sent: no attempt (it once said 1).
          attempts: 0,
          error: "not a delivery job: body is not JSON",
        }),
      ]),
    );
    expect(letters).toHaveLength(2);

    // What Lambda does with the answer: delete every record not reported. The retried job is
    // then hidden for its retry delay (60 s): nothing comes back now.
    const reported = new Set(response.batchItemFailures.map((f) => f.itemIdentifier));
    for (const r of event.Records.filter((r) => !reported.has(r.messageId)))
      await client.send(new DeleteMessageCommand({ QueueUrl: queueUrl, ReceiptHandle: r.receiptHandle }));
    const left = await client.send(
      new ReceiveMessageCommand({ QueueUrl: queueUrl, MaxNumberOfMessages: 10, WaitTimeSeconds: 0 }),
    );
    expect(left.Messages ?? []).toEqual([]);
  });

  it("dead-letters an unreadable record too big to quote whole, its body cut to fit, rather than leave it to the redrive policy", async () => {
    // Quoted in the dead letter, a body of 600 000 double quotes became 1.2 MB, past SQS's 1 MiB:
    // the send failed on every receive, and the redrive policy moved it 25 receives later without
    // saying why.
    await createPair();
    const body = '"'.repeat(600_000);
    await send([], [body]);
    const event = eventOf(await receiveAll(1));

    const response = await handlerFor()(event);

    expect(response.batchItemFailures).toEqual([]);
    const queue = createSqsQueue<DeliveryJob>({ client, queueUrl, deadLetterQueueUrl: dlqUrl });
    const [letter, ...more] = await queue.listDead();
    expect(more).toEqual([]);
    expect(letter).toMatchObject({
      id: event.Records[0]?.messageId,
      error: "not a delivery job: body is not JSON",
    });
    const kept = letter?.body as unknown as string;
    expect(kept.endsWith("…[truncated by hookgate]")).toBe(true);
    expect(body.startsWith(kept.slice(0, -"…[truncated by hookgate]".length))).toBe(true);
    expect(kept.length).toBeGreaterThan(400_000);
  });

  it("dead-letters, undelivered, a record whose envelope id is not its job's, as the Worker does", async () => {
    await createPair();
    const base = withSink(jobOf(0), "audit");
    const notificationId = `evt_${crypto.randomUUID()}`;
    const job: DeliveryJob = {
      ...base,
      id: `${notificationId}.audit`,
      notification: { ...base.notification, id: notificationId },
    };
    const body = JSON.stringify({ id: "evt_other.audit", body: job });
    await send([], [body]);
    const event = eventOf(await receiveAll(1));

    const response = await handlerFor()(event);

    expect(response.batchItemFailures).toEqual([]);
    expect(receiver.unique).not.toContain(notificationId);
    const letters = await createSqsQueue<DeliveryJob>({
      client,
      queueUrl,
      deadLetterQueueUrl: dlqUrl,
    }).listDead();
    expect(letters).toEqual([
      expect.objectContaining({
        id: event.Records[0]?.messageId,
        body,
        attempts: 0,
        error: "not a delivery job: envelope id is not its job's id",
      }),
    ]);
  });

  it("reports a record whose dead letter could not be sent, and only that one", async () => {
    await createPair();
    const delivered = withSink(jobOf(0), "audit");
    const dead = withSink(jobOf(1), "flaky");
    await send([delivered, dead]);
    const messages = await receiveAll(2);
    const deadBody = messages.find((m) => m.Body?.includes(dead.id))?.Body ?? "";
    const event = eventOf(messages, { [deadBody]: "2" });
    const broken = event.Records.find((r) => r.body === deadBody) as SQSRecord;

    // SQS refuses the send: there is no such DLQ.
    const response = await handlerFor({ HOOKGATE_DLQ_URL: `${dlqUrl}-gone` })(event);

    expect(response.batchItemFailures).toEqual([{ itemIdentifier: broken.messageId }]);
  });

  it("dead-letters a job whose sink left the policy with no attempt when its first dead letter's send failed", async () => {
    // Before, the record reported after the failed send came back with its receive
    // count one higher, and the dead letter then made counted that receive, which sent nothing,
    // as an attempt. The send fails in the handler's SQS client only (the SDK's middleware).
    await createPair();
    const gone = withSink(jobOf(0), "gone");
    await send([gone]);
    let failSends = true;
    const flakyDlq = clientWith((command, input) => {
      const to = (input as { QueueUrl?: string }).QueueUrl;
      if (failSends && command === "SendMessageCommand" && to === dlqUrl)
        throw Object.assign(new Error("socket hang up"), { code: "ECONNRESET" });
    });
    const handler = handlerFor({}, { sqsClient: flakyDlq });
    const [message] = await receiveAll(1);
    if (!message) throw new Error("nothing received");
    // Its first receive, then its second, as SQS brings a reported record back (the receives
    // here to read it stand for none).
    const first = eventOf([message], { [message.Body ?? ""]: "1" });
    const record = first.Records[0] as SQSRecord;
    expect((await handler(first)).batchItemFailures).toEqual([{ itemIdentifier: record.messageId }]);
    failSends = false;
    const again = eventOf([message], { [message.Body ?? ""]: "2" });
    expect((await handler(again)).batchItemFailures).toEqual([]);
    const queue = createSqsQueue<DeliveryJob>({ client, queueUrl, deadLetterQueueUrl: dlqUrl });
    expect((await queue.listDead()).map((d) => [d.id, d.attempts, d.error])).toEqual([
      [gone.id, 0, 'sink "gone" is no longer in the policy'],
    ]);
  });

  it("leaves a record whose dead letter was sent but whose delete failed to Lambda's delete, and never dead-letters it twice", async () => {
    // Before, the record was reported, so it came back, was delivered again and got a second
    // dead letter. The delete fails in the handler's SQS client only (the SDK's middleware, as
    // the contract suite injects SQS's answers); the send to the DLQ and everything else is the
    // real server's.
    await createPair();
    const dead = withSink(jobOf(1), "flaky");
    await send([dead]);
    const first = eventOf(await receiveAll(1), {});
    (first.Records[0] as SQSRecord).attributes.ApproximateReceiveCount = "2";
    let failDeletes = true;
    const flakyDeletes = clientWith((command, input) => {
      if (failDeletes && command === "DeleteMessageBatchCommand")
        throw Object.assign(new Error("socket hang up"), { code: "ECONNRESET" });
    });
    const handler = handlerFor({}, { sqsClient: flakyDeletes });
    const posts = () => failing.received.length;
    const before = posts();

    // Not reported: Lambda deletes every record not reported, a second try at the delete.
    expect((await handler(first)).batchItemFailures).toEqual([]);
    expect(posts()).toBe(before + 1);
    const queue = createSqsQueue<DeliveryJob>({ client, queueUrl, deadLetterQueueUrl: dlqUrl });
    expect((await queue.listDead()).map((d) => d.id)).toEqual([dead.id]);

    // Should Lambda's delete fail as well, the message comes back to this container: it is
    // neither sent to the sink again nor dead-lettered again, and still left to Lambda.
    failDeletes = false;
    const again = eventOf(await receiveAll(1), {});
    expect(again.Records[0]?.messageId).toBe(first.Records[0]?.messageId);
    expect((await handler(again)).batchItemFailures).toEqual([]);
    expect(posts()).toBe(before + 1);
    const letters = await client.send(
      new GetQueueAttributesCommand({ QueueUrl: dlqUrl, AttributeNames: ["ApproximateNumberOfMessages"] }),
    );
    expect(letters.Attributes?.ApproximateNumberOfMessages).toBe("1");
  });

  it("logs a dead letter whose delete failed as every dead letter: an error line with why", async () => {
    // Before, the handler logged only a warning naming the delete's error, so the
    // reason the job was dead-lettered was in no log line, and no error line counted it.
    await createPair();
    const dead = withSink(jobOf(1), "flaky");
    await send([dead], ["not a job"]);
    const messages = await receiveAll(2);
    const deadBody = messages.find((m) => m.Body?.includes(dead.id))?.Body ?? "";
    const event = eventOf(messages, { [deadBody]: "2" });
    const noDeletes = clientWith((command, input) => {
      if (command === "DeleteMessageBatchCommand")
        throw Object.assign(new Error("socket hang up"), { code: "ECONNRESET" });
    });
    const lines: { level: string; message: string; fields: Record<string, unknown> }[] = [];
    const handler = handlerFor(
      {},
      { sqsClient: noDeletes, log: (level, message, fields = {}) => lines.push({ level, message, fields }) },
    );

    expect((await handler(event)).batchItemFailures).toEqual([]);

    const errors = lines.filter((l) => l.level === "error");
    expect(errors).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          message: "delivery dead-lettered",
          fields: expect.objectContaining({
            job: dead.id,
            reason: expect.stringMatching(/503/),
            deleteFailed: expect.stringMatching(/socket hang up/),
          }),
        }),
        expect.objectContaining({
          message: "record dead-lettered",
          fields: expect.objectContaining({
            reason: expect.stringMatching(/^not a delivery job/),
            deleteFailed: expect.stringMatching(/socket hang up/),
          }),
        }),
      ]),
    );
    expect(errors).toHaveLength(2);
  });

  it("holds each job on the queue with a delay while the policy does not load, and dead-letters what is no job at once", async () => {
    // Before, every record was reported, so each receive raised the
    // ApproximateReceiveCount the retry schedule reads as attempts, and after the fix one failed
    // attempt dead-lettered the job ("gave up after 4 attempts") with only one real send.
    await createPair();
    await send([withSink(jobOf(2), "flaky"), withSink(jobOf(2), "audit")], ["not a job"]);
    const received = await receiveAll(3);
    // Received three times already: the receive count a held job must not carry on with.
    const event = eventOf(received, Object.fromEntries(received.map((m) => [m.Body ?? "", "3"])));
    for (const m of received)
      await client.send(new DeleteMessageCommand({ QueueUrl: queueUrl, ReceiptHandle: m.ReceiptHandle }));
    const lines: string[] = [];
    const broken = brokenHandler({ log: (_level, msg) => lines.push(msg) });
    const unreadable = event.Records.find((r) => r.body === "not a job") as SQSRecord;
    // What is no job needs no policy to be dead-lettered: reported, it came back every 6 minutes
    // ("could not hold a record") until the redrive policy moved it, 25 receives later, with no
    // reason.
    expect((await broken(event)).batchItemFailures).toEqual([]);
    expect(lines.filter((l) => l.startsWith("configuration invalid"))).toHaveLength(1);
    expect(lines).toContain("record dead-lettered");
    expect(
      await createSqsQueue<DeliveryJob>({ client, queueUrl, deadLetterQueueUrl: dlqUrl }).listDead(),
    ).toEqual([
      expect.objectContaining({
        id: unreadable.messageId,
        body: "not a job",
        attempts: 0,
        error: "not a delivery job: body is not JSON",
      }),
    ]);
    // Both jobs are on the queue again as new messages (a receive count of 0), delayed.
    const attributes = await client.send(
      new GetQueueAttributesCommand({
        QueueUrl: queueUrl,
        AttributeNames: ["ApproximateNumberOfMessagesDelayed", "ApproximateNumberOfMessages"],
      }),
    );
    expect(attributes.Attributes).toMatchObject({
      ApproximateNumberOfMessagesDelayed: "2",
      ApproximateNumberOfMessages: "0",
    });
  });

  it("holds a job while the policy does not load as a copy carrying its sends and holds, so its schedule does not start again", async () => {
    // Before (RELIABILITY.md problem 9), the hold sent a bare {id, body}, so a job held
    // while the policy was broken came back with no sends and no holds.
    await createPair();
    const job = withSink(jobOf(0), "audit");
    await client.send(
      new SendMessageCommand({
        QueueUrl: queueUrl,
        MessageBody: JSON.stringify({ id: job.id, body: job, sent: 1, holds: 2 }),
      }),
    );
    const [original] = await receiveAll(1);
    if (!original) throw new Error("nothing received");
    // Its second receive: one send before this copy and two receives of it make 3 attempts.
    const event = eventOf([original], { [original.Body ?? ""]: "2" });
    // The same SQS, but the copy is sent with no delay, to be received at once.
    const undelayed = clientWith((command, input) => {
      if (command === "SendMessageCommand" || command === "SendMessageBatchCommand") {
        const send = input as { DelaySeconds?: number; Entries?: { DelaySeconds?: number }[] };
        send.DelaySeconds &&= 0;
        for (const entry of send.Entries ?? []) entry.DelaySeconds &&= 0;
      }
    });
    const broken = brokenHandler({ sqsClient: undelayed });
    expect((await broken(event)).batchItemFailures).toEqual([]);
    // Lambda deletes the record it was not told of (a second delete where the hold made one).
    await client
      .send(new DeleteMessageCommand({ QueueUrl: queueUrl, ReceiptHandle: original.ReceiptHandle }))
      .catch(() => undefined);
    const queue = createSqsQueue<DeliveryJob>({ client, queueUrl, deadLetterQueueUrl: dlqUrl });
    // The copy's first receive: its 2 sends before it and this one; the holds as they were (a
    // wait for the policy is no hold).
    expect((await queue.receive(10, 30_000)).map((m) => [m.id, m.attempts, m.holds])).toEqual([
      [job.id, 3, 2],
    ]);
  });

  it("holds a job while the policy does not load with no attempt for an earlier hold whose copy was not sent", async () => {
    // Before, the record reported after its copy's send failed came back with its
    // receive count one higher, and the copy then sent carried that receive, which sent nothing,
    // as a send. The copy's send fails once in the handler's SQS client only; copies go with no
    // delay, to be received at once.
    await createPair();
    const job = withSink(jobOf(0), "audit");
    await send([job]);
    const [original] = await receiveAll(1);
    if (!original) throw new Error("nothing received");
    let failCopies = 1;
    const flaky = clientWith((command, input) => {
      if (command === "SendMessageCommand") {
        if (failCopies-- > 0) throw Object.assign(new Error("socket hang up"), { code: "ECONNRESET" });
        (input as { DelaySeconds?: number }).DelaySeconds = 0;
      }
    });
    const broken = brokenHandler({ sqsClient: flaky });
    // Its first receive (the copy not sent: reported), then its second, as SQS brings it back.
    const first = eventOf([original], { [original.Body ?? ""]: "1" });
    const record = first.Records[0] as SQSRecord;
    expect((await broken(first)).batchItemFailures).toEqual([{ itemIdentifier: record.messageId }]);
    const again = eventOf([original], { [original.Body ?? ""]: "2" });
    expect((await broken(again)).batchItemFailures).toEqual([]);
    await client
      .send(new DeleteMessageCommand({ QueueUrl: queueUrl, ReceiptHandle: original.ReceiptHandle }))
      .catch(() => undefined);
    const queue = createSqsQueue<DeliveryJob>({ client, queueUrl, deadLetterQueueUrl: dlqUrl });
    // The copy's first receive: never sent before it.
    expect((await queue.receive(10, 30_000)).map((m) => [m.id, m.attempts, m.holds])).toEqual([
      [job.id, 1, 0],
    ]);
  });

  it("says the AWS SDK's warning of a queue URL on another host than its region's endpoint without the URL's user and password", async () => {
    // The SDK warns on the console, by itself, that it sends to the queue URL's host, naming the
    // URL as given: with the password it carried.
    await createPair();
    const sqs = await createLambdaSqsClient({
      region: "us-east-1",
      credentials: { accessKeyId: "local", secretAccessKey: "local" },
    });
    cleanups.push(async () => sqs.destroy());
    const warned: string[] = [];
    const warn = vi.spyOn(console, "warn").mockImplementation((...content) => {
      warned.push(content.join(" "));
    });
    try {
      const queue = createSqsQueue<DeliveryJob>({
        client: sqs,
        queueUrl: queueUrl.replace("://", "://local:hunter2@"),
        deadLetterQueueUrl: dlqUrl,
      });
      await queue.send([{ id: jobOf(0).id, body: jobOf(0) }]);
    } finally {
      warn.mockRestore();
    }
    expect(warned.join("\n")).toContain(`QueueUrl=${queueUrl} differs from SQSClient resolved endpoint=`);
    expect(warned.join("\n")).not.toContain("hunter2");
  });

  it("reports a record whose SQS call hangs, and answers for the others, instead of waiting for ever", {
    timeout: 45_000,
  }, async () => {
    // The AWS SDK waits for an answer for ever by default: a hung ChangeMessageVisibility held the
    // function until Lambda's timeout, which failed the whole batch (the delivered job sent again,
    // every job's receive count spent).
    const { hanging, sqs, env } = await hangingSqs(1);
    const delivered = withSink(jobOf(0), "audit");
    const retried = withSink(jobOf(1), "flaky");
    const event = recordsOf([delivered, retried]);
    const lines: string[] = [];
    const handler = handlerFor(env, { sqsClient: sqs, log: (_level, msg) => lines.push(msg) });

    const response = await handler(event);

    expect(response.batchItemFailures).toEqual([{ itemIdentifier: "m-1" }]);
    expect(receiver.unique).toContain(delivered.notification.id);
    expect(lines).toContain("record failed; reported for redelivery");
    expect(hanging.received.length).toBeGreaterThan(0);
  });

  it("cuts an SQS call short, the SDK's retries too, a second before the invocation's time runs out", {
    timeout: 45_000,
  }, async () => {
    // Before, a settle's SQS call that needed the SDK's retries (3 tries of up to 8 s each)
    // could outlast SETTLE_MARGIN_MS and run into the function's timeout, which fails the whole
    // batch. The context says 60 s at the sink call's start, then 1.5 s: the hung
    // ChangeMessageVisibility gets one try, not three, and its record is reported.
    const { hanging, sqs, env } = await hangingSqs();
    const retried = withSink(jobOf(1), "flaky");
    const event = recordsOf([retried]);
    const { lines, log } = logLines();
    const handler = handlerFor(env, { sqsClient: sqs, log });
    const context = invocationOf(60_000, 1_500);

    const response = await handler(event, context);

    expect(response.batchItemFailures).toEqual([{ itemIdentifier: "m-0" }]);
    expect(lines).toContainEqual({
      message: "record failed; reported for redelivery",
      fields: expect.objectContaining({ job: retried.id, error: expect.stringMatching(/abort/i) }),
    });
    expect(callsTo(hanging, "ChangeMessageVisibilityBatch")).toHaveLength(1);
  });

  it("sends no SQS call at all once less than the second kept to answer in is left, so a reported dead letter was not made", async () => {
    // Before, with under 1 s left the signal was AbortSignal.timeout(0), which fires
    // only after the request went out: the send to the DLQ reached SQS, yet failed as aborted, so
    // the record was reported, came back, was sent to its sink again and got a second dead letter.
    await createPair();
    const dead = withSink(jobOf(1), "flaky");
    await send([dead]);
    const event = eventOf(await receiveAll(1), {});
    (event.Records[0] as SQSRecord).attributes.ApproximateReceiveCount = "2";
    const { lines, log } = logLines();
    const handler = handlerFor({}, { log });
    // 60 s when the delivery may start, then 500 ms once the sink has answered.
    const context = invocationOf(60_000, 500);

    const response = await handler(event, context);

    expect(response.batchItemFailures).toEqual([{ itemIdentifier: event.Records[0]?.messageId }]);
    expect(lines).toContainEqual({
      message: "record failed; reported for redelivery",
      fields: expect.objectContaining({ job: dead.id, error: expect.stringMatching(/abort/i) }),
    });
    const letters = await client.send(
      new GetQueueAttributesCommand({ QueueUrl: dlqUrl, AttributeNames: ["ApproximateNumberOfMessages"] }),
    );
    expect(letters.Attributes?.ApproximateNumberOfMessages).toBe("0");
  });

  it("retries the jobs of one batch in one ChangeMessageVisibilityBatch request, a queue opened per batch and not per record", async () => {
    // Each invocation opens a queue of its own (for Lambda Managed Instances); its records still
    // share that queue's batches. A queue per record, or per SQS call, would send one request
    // per job: ten times the calls SQS bills on the ordinary path.
    await createPair();
    const jobs = Array.from({ length: 10 }, (_, i) => ({
      ...withSink(jobOf(1), "flaky"),
      id: `retried-${i}`,
    }));
    await send(jobs);
    const received = await receiveAll(jobs.length);
    const requests: number[] = [];
    const watched = clientWith((command, input) => {
      if (command === "ChangeMessageVisibilityBatchCommand")
        requests.push((input as { Entries?: unknown[] }).Entries?.length ?? 0);
    });
    // The sink answers the ten at once, when all ten have arrived: their retries then meet within
    // the queue's batch window however far apart a busy host sends them.
    const waiting: ServerResponse[] = [];
    const together = await loopbackServer((_req, res) => {
      waiting.push(res);
      if (waiting.length === jobs.length) for (const held of waiting) held.writeHead(503).end("busy");
    });
    cleanups.push(() => together.close());
    const handler = handlerFor({ HOOKGATE_POLICY: policy(together.url) }, { sqsClient: watched });

    const response = await handler(eventOf(received), invocationOf());

    expect(together.received).toHaveLength(jobs.length);
    expect(response.batchItemFailures).toHaveLength(jobs.length);
    expect(requests).toEqual([jobs.length]);
  });

  it.each([
    ["the one out of time first", true],
    ["the one with time left first", false],
  ])(
    "bounds the SQS calls of each of two batches that overlap in one environment by its own time left (%s)",
    async (_, shortFirst) => {
      // Lambda Managed Instances hand one environment many invocations at once, sharing the
      // handler. Both batches hold a job its sink fails, to be retried (a visibility change): the
      // invocation down to 500 ms once its sink answered sends no SQS call and reports its record;
      // the one with 60 s left retries its own. Read from the other invocation, or batched with the
      // other's, one invocation's call ran past its function timeout or was cut short for nothing.
      await createPair();
      const [short, long] = [withSink(jobOf(0), "flaky"), withSink(jobOf(1), "flaky")];
      await send([short, long]);
      const received = await receiveAll(2);
      const eventFor = (job: DeliveryJob) =>
        eventOf(received.filter((m) => decodeEnvelope(m.Body ?? "").body.id === job.id));
      const { lines, log } = logLines();
      // The visibility changes SQS carried out, by message id, one list per request.
      const changes: string[][] = [];
      const watched = createSqsClientForLocal(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
      cleanups.push(async () => watched.destroy());
      watched.middlewareStack.add(
        (next, context) => async (args) => {
          const out = await next(args);
          if (context.commandName === "ChangeMessageVisibilityBatchCommand") {
            const entries = (args.input as { Entries?: { ReceiptHandle?: string }[] }).Entries ?? [];
            changes.push(
              entries.map((e) => received.find((m) => m.ReceiptHandle === e.ReceiptHandle)?.MessageId ?? ""),
            );
          }
          return out;
        },
        { step: "initialize", name: "noteChanges" },
      );
      const handler = handlerFor({}, { sqsClient: watched, log });
      const calls = [
        () => handler(eventFor(short), invocationOf(60_000, 500)),
        () => handler(eventFor(long), invocationOf()),
      ];
      const [shortResponse, longResponse] = shortFirst
        ? await Promise.all(calls.map((call) => call()))
        : (await Promise.all([...calls].reverse().map((call) => call()))).reverse();

      const idOf = (job: DeliveryJob) => eventFor(job).Records[0]?.messageId ?? "";
      expect(shortResponse?.batchItemFailures).toEqual([{ itemIdentifier: idOf(short) }]);
      expect(longResponse?.batchItemFailures).toEqual([{ itemIdentifier: idOf(long) }]);
      expect(lines).toContainEqual({
        message: "record failed; reported for redelivery",
        fields: expect.objectContaining({ job: short.id, error: expect.stringMatching(/abort/i) }),
      });
      expect(lines).toContainEqual({
        message: "delivery failed; will retry",
        fields: expect.objectContaining({ job: long.id }),
      });
      // Only the invocation with time left changed a visibility, in a request of its own.
      expect(changes).toEqual([[idOf(long)]]);
    },
  );

  it("cuts a hold's send short too, a second before the invocation's time runs out", {
    timeout: 45_000,
  }, async () => {
    // Before, the held copy's SendMessage carried no abort signal, so a job held
    // for lack of time, the latest a settle starts, could outlast the invocation on a hung SQS
    // (three tries of up to 8 s each), which fails the whole batch.
    const { hanging, sqs, env } = await hangingSqs();
    const job = withSink(jobOf(0), "audit");
    const event = recordsOf([job]);
    const { lines, log } = logLines();
    const handler = handlerFor(env, { sqsClient: sqs, log });
    // 20 s at the sink call's start, too little for it: held. Then 1.5 s as the copy is sent.
    const context = invocationOf(20_000, 1_500);

    const response = await handler(event, context);

    expect(response.batchItemFailures).toEqual([{ itemIdentifier: "m-0" }]);
    expect(lines).toContainEqual({
      message: "record failed; reported for redelivery",
      fields: expect.objectContaining({ job: job.id, error: expect.stringMatching(/abort/i) }),
    });
    expect(callsTo(hanging, "SendMessage")).toHaveLength(1);
  });

  it("starts no delivery the invocation's time left cannot cover, and holds those records on the queue", async () => {
    // At first the handler never read the time left, so a batch whose deliveries ran into the
    // function's timeout was killed mid-way and every record came back, delivered ones too.
    // Then the records not started were reported, and came back with a receive spent.
    await createPair();
    const own = await webhookReceiver(SECRET);
    cleanups.push(() => own.close());
    const jobs = [0, 1, 2].map((n) => withSink(jobOf(n), "audit"));
    await send(jobs);
    const event = eventOf(await receiveAll(3));
    const handler = ownSinkHandler(own.url);
    // The serverless.yml timeout (60 s) at the first look; then time runs out: 20 s cannot cover a
    // 15 s sink call and the settle after it.
    const context = invocationOf(60_000, 20_000);

    const response = await handler(event, context);

    // One delivery started; the two that could not finish in time were not sent but held: a copy
    // of each is on the queue and the record is not reported, so no receive is spent.
    expect(own.unique).toHaveLength(1);
    expect(response.batchItemFailures).toEqual([]);
    // What Lambda does with the answer: every record is deleted (the held ones were already).
    const sentRecord = event.Records.find((r) =>
      own.unique.includes(decodeEnvelope(r.body).body.notification.id),
    );
    await client.send(
      new DeleteMessageCommand({ QueueUrl: queueUrl, ReceiptHandle: sentRecord?.receiptHandle ?? "" }),
    );
    const copies = await receiveAll(2);
    expect(copies.map((m) => JSON.parse(m.Body ?? "")).map((b) => [b.sent, b.holds])).toEqual([
      [0, 1],
      [0, 1],
    ]);
    // The next invocation delivers the copies. Each event reached the receiver once.
    const again = await handler(eventOf(copies), { getRemainingTimeInMillis: () => 60_000 });
    expect(again.batchItemFailures).toEqual([]);
    expect(own.unique.sort()).toEqual(jobs.map((j) => j.notification.id).sort());
    expect(own.duplicates).toBe(0);
  });

  it("counts a job held for lack of time as no attempt: held, then failing, it is dead-lettered after the schedule's sends", async () => {
    // Before (RELIABILITY.md problem 9), the held record came back with its receive count one
    // higher, which the schedule read as an attempt: a sink with no retries was dead-lettered
    // "gave up after 2 attempts" after one send.
    await createPair();
    const job = withSink(jobOf(0), "flaky");
    await send([job]);
    const lines: { msg: string; fields: Record<string, unknown> | undefined }[] = [];
    const handler = handlerFor(
      {
        HOOKGATE_POLICY: JSON.stringify({
          version: 1,
          egress: { allowCidrs: ["127.0.0.1/32"] },
          rules: [{ id: "audit-everything", on: "*", notify: ["flaky"] }],
          sinks: { flaky: { type: "webhook", url: `${failing.url}/held`, retryScheduleSeconds: [] } },
        }),
      },
      { log: (_level, msg, fields) => lines.push({ msg, fields }) },
    );
    const posts = () => failing.received.filter((r) => r.url === "/held").length;
    // Twice too late, then in time.
    for (const _ of [1, 2]) {
      await handler(eventOf(await receiveAll(1)), invocationOf(20_000));
      expect(posts()).toBe(0);
    }
    const response = await handler(eventOf(await receiveAll(1)), { getRemainingTimeInMillis: () => 60_000 });
    expect(response.batchItemFailures).toEqual([]);
    expect(posts()).toBe(1);
    // Each hold's line gives the attempts after it, the sends (it once said 1,
    // the receive the hold gave back).
    expect(lines.filter((l) => l.msg === "delivery held; not sent").map((l) => l.fields)).toEqual([
      expect.objectContaining({ attempts: 0, holds: 1 }),
      expect.objectContaining({ attempts: 0, holds: 2 }),
    ]);
    const queue = createSqsQueue<DeliveryJob>({ client, queueUrl, deadLetterQueueUrl: dlqUrl });
    const letters = await queue.listDead();
    expect(letters.map((l) => [l.id, l.attempts, l.error])).toEqual([
      [job.id, 1, "gave up after 1 attempt: HTTP 503: busy"],
    ]);
  });

  it("dead-letters a job held MAX_HOLDS times with the reason, rather than hold it for ever", async () => {
    await createPair();
    const job = withSink(jobOf(0), "audit");
    await client.send(
      new SendMessageCommand({
        QueueUrl: queueUrl,
        MessageBody: JSON.stringify({ id: job.id, body: job, sent: 2, holds: MAX_HOLDS }),
      }),
    );
    const response = await handlerFor()(eventOf(await receiveAll(1)), invocationOf(20_000));
    expect(response.batchItemFailures).toEqual([]);
    const queue = createSqsQueue<DeliveryJob>({ client, queueUrl, deadLetterQueueUrl: dlqUrl });
    const letters = await queue.listDead();
    // The 2 sends before; it once said 3, its last receive, which sent nothing, counted.
    expect(letters.map((l) => [l.id, l.attempts, l.error])).toEqual([
      [
        job.id,
        2,
        `gave up after ${MAX_HOLDS} holds without a send: not sent: too little time was left to wait for the sink's answer`,
      ],
    ]);
  });

  it("holds every job with a delay when the function's timeout can never start a delivery, and says what to set", async () => {
    // Deployed without serverless.yml, a function gets Lambda's default timeout of 3 s: no sink
    // call could ever start, so each job went back with no delay, came back at once, and after
    // MAX_HOLDS such rounds was dead-lettered without ever being sent; nothing said the timeout
    // was the cause. Now each waits on the queue, as for a policy that does not load, its holds
    // unspent, and one error line names the fix.
    await createPair();
    const own = await webhookReceiver(SECRET);
    cleanups.push(() => own.close());
    const fresh = withSink(jobOf(0), "audit");
    const heldLong = withSink(jobOf(1), "audit");
    await send([fresh]);
    await client.send(
      new SendMessageCommand({
        QueueUrl: queueUrl,
        MessageBody: JSON.stringify({ id: heldLong.id, body: heldLong, sent: 1, holds: MAX_HOLDS }),
      }),
    );
    const received = await receiveAll(2);
    const lines: { level: string; msg: string; fields: Record<string, unknown> }[] = [];
    const handler = ownSinkHandler(own.url, {
      log: (level, msg, fields = {}) => lines.push({ level, msg, fields }),
    });
    const threeSeconds = { getRemainingTimeInMillis: () => 3_000 };
    expect((await handler(eventOf(received), threeSeconds)).batchItemFailures).toEqual([]);
    // What Lambda does with the answer: it deletes both records (the holds already did).
    for (const m of received)
      await client.send(new DeleteMessageCommand({ QueueUrl: queueUrl, ReceiptHandle: m.ReceiptHandle }));
    expect(own.unique).toEqual([]);
    const queue = createSqsQueue<DeliveryJob>({ client, queueUrl, deadLetterQueueUrl: dlqUrl });
    expect(await queue.listDead()).toEqual([]);
    // Both wait on the queue, delayed, their holds as they were.
    const attributes = await client.send(
      new GetQueueAttributesCommand({
        QueueUrl: queueUrl,
        AttributeNames: ["ApproximateNumberOfMessagesDelayed", "ApproximateNumberOfMessages"],
      }),
    );
    expect(attributes.Attributes).toMatchObject({
      ApproximateNumberOfMessagesDelayed: "2",
      ApproximateNumberOfMessages: "0",
    });
    const errors = lines.filter((l) => l.level === "error");
    expect(errors).toHaveLength(1);
    expect(errors[0]?.msg).toMatch(/timeout is too short.*set it to 60 s/);
    expect(errors[0]?.fields).toMatchObject({
      invocationStartedWithMs: 3_000,
      neededMs: 15_000 + SETTLE_MARGIN_MS,
    });
  });

  it("never delivers a held record twice when only the old message's delete failed", async () => {
    await createPair();
    const own = await webhookReceiver(SECRET);
    cleanups.push(() => own.close());
    const job = withSink(jobOf(0), "audit");
    await send([job]);
    const lines: { msg: string; fields: Record<string, unknown> | undefined }[] = [];
    const first = eventOf(await receiveAll(1));
    let failDeletes = true;
    const flakyDeletes = clientWith((command, input) => {
      if (failDeletes && command === "DeleteMessageBatchCommand")
        throw Object.assign(new Error("socket hang up"), { code: "ECONNRESET" });
    });
    const handler = ownSinkHandler(own.url, {
      sqsClient: flakyDeletes,
      log: (_level, msg, fields) => lines.push({ msg, fields }),
    });
    // Held; the copy is sent, the old message's delete fails: not reported (Lambda's delete is a
    // second try).
    expect((await handler(first, invocationOf(20_000))).batchItemFailures).toEqual([]);
    // Its attempts after the hold: none sent.
    expect(
      lines.find((l) => l.msg === "delivery held; the old message's delete failed, left for Lambda to delete")
        ?.fields,
    ).toMatchObject({ attempts: 0, deleteFailed: expect.stringMatching(/socket hang up/) });
    failDeletes = false;
    // Should Lambda's delete fail too, both come back: the old one is not delivered again.
    const both = await receiveAll(2);
    expect(
      (await handler(eventOf(both), { getRemainingTimeInMillis: () => 60_000 })).batchItemFailures,
    ).toEqual([]);
    expect(own.unique).toEqual([job.notification.id]);
    expect(own.duplicates).toBe(0);
  });

  it("logs a record held while the policy does not load whose old message's delete failed", async () => {
    // Since that hold is `Queue.hold`, a copy and then a delete, a delete
    // that failed was remembered and left to Lambda's delete without a line, where every other
    // delete that fails is logged.
    await createPair();
    const job = withSink(jobOf(0), "audit");
    await send([job]);
    const first = eventOf(await receiveAll(1));
    const flakyDeletes = clientWith((command, input) => {
      if (command === "DeleteMessageBatchCommand")
        throw Object.assign(new Error("socket hang up"), { code: "ECONNRESET" });
    });
    const lines: { level: string; msg: string; fields: Record<string, unknown> }[] = [];
    const broken = brokenHandler({
      sqsClient: flakyDeletes,
      log: (level, msg, fields = {}) => lines.push({ level, msg, fields }),
    });
    // The copy is in: not reported, Lambda's delete is the second try.
    expect((await broken(first)).batchItemFailures).toEqual([]);
    expect(lines).toContainEqual({
      level: "warn",
      msg: "delivery held for a valid policy; the old message's delete failed, left for Lambda to delete",
      fields: {
        messageId: first.Records[0]?.messageId,
        job: job.id,
        deleteFailed: expect.stringMatching(/socket hang up/),
      },
    });
  });

  it("starts a delivery only while the time left covers its sink call and a dead letter's two SQS calls", async () => {
    // Before, the margin held one try of one SQS call, but a delivery that ends in
    // a dead letter settles with two (the send to the DLQ, then the delete), so one started with
    // only the egress timeout and one try left could still run into the function's timeout.
    await createPair();
    const own = await webhookReceiver(SECRET);
    cleanups.push(() => own.close());
    const job = withSink(jobOf(0), "audit");
    await send([job]);
    const handler = ownSinkHandler(own.url);
    const oneTry = SQS_CONNECT_TIMEOUT_MS + SQS_ANSWER_TIMEOUT_MS;
    const event = eventOf(await receiveAll(1));
    // The 15 s sink call and two tries, but not the second to return in.
    const short = await handler(event, invocationOf(15_000 + 2 * oneTry + 999));
    // Not started: held, its copy on the queue.
    expect(short.batchItemFailures).toEqual([]);
    expect(own.unique).toEqual([]);
    const enough = await handler(eventOf(await receiveAll(1)), invocationOf(15_000 + 2 * oneTry + 1_000));
    expect(enough.batchItemFailures).toEqual([]);
    expect(own.unique).toEqual([job.notification.id]);
  });

  it("dead-letters unsent, with why, a job back past its last attempt, which ended the function instead of settling", async () => {
    // A job whose delivery ends the function (out of memory, a crash) fails its batch at every
    // receive, its batch's other records back too. It was sent again at each receive past its
    // schedule's 8 attempts, until the redrive policy moved it 25 receives in, without a reason.
    await createPair();
    // An event id of its own: the receiver keeps the ids of every test's deliveries.
    const base = jobOf(0);
    const poison = withSink({ ...base, notification: { ...base.notification, id: "evt_poison" } }, "audit");
    await send([poison]);
    const [message] = await receiveAll(1);
    const event = eventOf(message ? [message] : [], { [message?.Body ?? ""]: "9" });

    const response = await handlerFor()(event, invocationOf());

    expect(response.batchItemFailures).toEqual([]);
    expect(receiver.unique).not.toContain(poison.notification.id);
    const queue = createSqsQueue<DeliveryJob>({ client, queueUrl, deadLetterQueueUrl: dlqUrl });
    expect(await queue.listDead()).toEqual([
      expect.objectContaining({
        id: poison.id,
        attempts: 8,
        error: expect.stringMatching(
          /^gave up after 8 attempts: its last attempt recorded no outcome \(the delivery function ended while delivering it/,
        ),
      }),
    ]);
  });

  it("says, of a job back past its sink's last attempt, that a schedule shortened while it waited brings it back so too", async () => {
    // Sent twice under the default schedule, then its sink's retryScheduleSeconds set to one
    // retry: its third receive is past the new last attempt, as a receive after a last attempt
    // that ended the function is, and nothing on the record tells the two apart. The sink is up,
    // yet the job is not sent; its dead letter blamed a crash that never happened, and the
    // operator looked for one rather than replay it.
    await createPair();
    const base = jobOf(0);
    const waited = withSink(
      { ...base, notification: { ...base.notification, id: "evt_shortened" } },
      "audit",
    );
    await send([waited]);
    const [message] = await receiveAll(1);
    const handler = handlerFor({
      HOOKGATE_POLICY: auditPolicy({ url: receiver.url, retryScheduleSeconds: [60] }),
    });

    const response = await handler(
      eventOf(message ? [message] : [], { [message?.Body ?? ""]: "3" }),
      invocationOf(),
    );

    expect(response.batchItemFailures).toEqual([]);
    expect(receiver.unique).not.toContain(waited.notification.id);
    const queue = createSqsQueue<DeliveryJob>({ client, queueUrl, deadLetterQueueUrl: dlqUrl });
    const [letter] = await queue.listDead();
    expect(letter).toMatchObject({ id: waited.id, attempts: 2 });
    expect(letter?.error).toMatch(/^gave up after 2 attempts: its last attempt recorded no outcome \(/);
    expect(letter?.error).toContain("retryScheduleSeconds was shortened while it waited for a retry");
  });

  describe("the queue's redrive policy", () => {
    /** 20 retries, the most the policy schema allows: 21 attempts. */
    const LONGEST = Array.from({ length: 20 }, () => 60);

    /**
     * The warning lines of two invocations of one container, each delivering a job to the test's
     * receiver through a sink retried on `schedule`.
     */
    async function warningsOfTwoInvocations(
      schedule: readonly number[] = LONGEST,
      env: Record<string, string> = {},
    ) {
      const warnings: { message: string; fields: Record<string, unknown> }[] = [];
      const handler = handlerFor(
        { HOOKGATE_POLICY: auditPolicy({ url: receiver.url, retryScheduleSeconds: schedule }), ...env },
        {
          log: (level, message, fields = {}) => {
            if (level === "warn") warnings.push({ message, fields });
          },
        },
      );
      for (const n of [0, 1]) {
        const job = withSink(jobOf(n), "audit");
        await send([job]);
        const response = await handler(eventOf(await receiveAll(1)), invocationOf());
        expect(response.batchItemFailures).toEqual([]);
        expect(receiver.unique).toContain(job.notification.id);
      }
      return warnings;
    }

    it("says once when its maxReceiveCount would move a job to the DLQ before its last attempt, and what to set", async () => {
      // SQS moves a message once its receives exceed maxReceiveCount, and the consumer counts
      // receives as attempts: at 20, a job on a 20-retry schedule that kept failing left for the
      // DLQ before its 21st attempt, with no error, and nothing said so beforehand.
      await createPair(20);
      expect(await warningsOfTwoInvocations()).toEqual([
        {
          message: expect.stringMatching(
            /^the queue's redrive policy moves a job to the DLQ after 20 receives, fewer than it may need: a job that keeps failing loses its last retries, .*set its maxReceiveCount to at least 22/,
          ),
          fields: { maxReceiveCount: 20, neededReceives: 22 },
        },
      ]);
    });

    it("says so too of a maxReceiveCount equal to the attempts, which leaves no receive to dead-letter a job whose last attempt ended the function", async () => {
      // At 21, a 20-retry job whose 21st attempt ended the function was moved by SQS at its 22nd
      // receive, the one at which the function dead-letters it with why, so without a reason.
      await createPair(21);
      expect(await warningsOfTwoInvocations()).toEqual([
        {
          message: expect.stringMatching(
            /^the queue's redrive policy moves a job to the DLQ after 21 receives, fewer than it may need: a job whose last attempt ended the function leaves before the function can dead-letter it, .*set its maxReceiveCount to at least 22/,
          ),
          fields: { maxReceiveCount: 21, neededReceives: 22 },
        },
      ]);
    });

    it("counts the default schedule, which a delivery that throws follows, against a shorter one of a sink's", async () => {
      // A sink with no retries still gets the default schedule's 8 attempts when its delivery
      // throws, and a ninth receive to be dead-lettered at should the last end the function.
      await createPair(8);
      expect(await warningsOfTwoInvocations([])).toEqual([
        expect.objectContaining({ fields: { maxReceiveCount: 8, neededReceives: 9 } }),
      ]);
    });

    it("says nothing of a maxReceiveCount that lets the longest schedule make every attempt, and one receive more", async () => {
      await createPair(22);
      expect(await warningsOfTwoInvocations()).toEqual([]);
    });

    it("says once when it moves jobs to another DLQ than HOOKGATE_DLQ_URL's, where the function's own dead letters go", async () => {
      // A HOOKGATE_DLQ_URL of another stage, or a redrive policy set by hand: the jobs SQS moved
      // (those the function never settled) went to a queue that `hookgate dlq list` with that
      // URL and the template's DLQ alarm never read, and nothing said the two differ.
      await createPair(25);
      const redriveTarget = (
        await client.send(new GetQueueAttributesCommand({ QueueUrl: dlqUrl, AttributeNames: ["QueueArn"] }))
      ).Attributes?.QueueArn;
      const other =
        (await client.send(new CreateQueueCommand({ QueueName: `lambda-other-dlq-${queues}` }))).QueueUrl ??
        "";
      cleanups.push(() => client.send(new DeleteQueueCommand({ QueueUrl: other })));
      // A local server's URL with a user and password, which the line leaves out.
      const withUser = other.replace("http://", "http://hookgate:pw-4f9c2a@");
      const warnings = await warningsOfTwoInvocations(LONGEST, { HOOKGATE_DLQ_URL: withUser });
      expect(warnings).toEqual([
        {
          message: expect.stringMatching(
            /^the queue's redrive policy moves jobs to another queue than HOOKGATE_DLQ_URL's, where the delivery function puts its own dead letters: .*set the redrive policy's deadLetterTargetArn to the queue HOOKGATE_DLQ_URL names, or HOOKGATE_DLQ_URL to the redrive target's URL/,
          ),
          fields: { redriveTarget, dlqUrl: other },
        },
      ]);
    });

    it("says nothing of the redrive target for a DLQ URL that names no account (ElasticMQ's /queue/NAME), whose name is the target's", async () => {
      // Read as an account, `queue` never matched the target's: a false warning on every container.
      await createPair(25);
      const name = new URL(dlqUrl).pathname.split("/").filter(Boolean).at(-1);
      const warnings = await warningsOfTwoInvocations(LONGEST, {
        HOOKGATE_DLQ_URL: `http://localhost:9324/queue/${name}`,
      });
      expect(warnings).toEqual([]);
    });

    it("says once that a queue with no redrive policy keeps a record the function never settles", async () => {
      await createPair(null);
      expect(await warningsOfTwoInvocations()).toEqual([
        {
          message: expect.stringMatching(
            /^the queue has no redrive policy: a record the delivery function never settles .*set its maxReceiveCount to at least 22/,
          ),
          fields: { neededReceives: 22 },
        },
      ]);
    });

    it("says what to check by hand when it cannot read the redrive policy, and delivers all the same", async () => {
      await createPair();
      const denied = clientWith((command) => {
        if (command === "GetQueueAttributesCommand") throw new Error("AccessDenied: not authorized");
      });
      const warnings: { message: string; fields: Record<string, unknown> }[] = [];
      const handler = ownSinkHandler(receiver.url, {
        sqsClient: denied,
        log: (level, message, fields = {}) => {
          if (level === "warn") warnings.push({ message, fields });
        },
      });
      const job = withSink(jobOf(2), "audit");
      await send([job]);

      const response = await handler(eventOf(await receiveAll(1)), invocationOf());

      expect(response.batchItemFailures).toEqual([]);
      expect(receiver.unique).toContain(job.notification.id);
      expect(warnings).toEqual([
        {
          message: expect.stringMatching(
            /^could not read the queue's redrive policy \(.*sqs:GetQueueAttributes.*\); check it by hand: set its maxReceiveCount to at least 9/,
          ),
          fields: { neededReceives: 9, error: "AccessDenied: not authorized" },
        },
      ]);
    });

    it("says HOOKGATE_QUEUE_URL is not set on the delivery function, not that its role may lack a permission", async () => {
      // It said "the delivery function's role needs sqs:GetQueueAttributes", the unset variable
      // only in the line's `error`.
      await createPair();
      const warnings: { message: string; fields: Record<string, unknown> }[] = [];
      const errors: string[] = [];
      const handler = handlerFor(
        { HOOKGATE_POLICY: auditPolicy({ url: receiver.url }), HOOKGATE_QUEUE_URL: "" },
        {
          log: (level, message, fields = {}) => {
            if (level === "warn") warnings.push({ message, fields });
            if (level === "error") errors.push(message);
          },
        },
      );
      const job = withSink(jobOf(2), "audit");
      await send([job]);
      const response = await handler(eventOf(await receiveAll(1)), invocationOf());
      expect(response.batchItemFailures).toEqual([]);
      expect(warnings).toEqual([
        {
          message: expect.stringMatching(
            /^HOOKGATE_QUEUE_URL is not set on the delivery function: set it to the jobs queue's URL .*; until then check the queue's redrive policy by hand: set its maxReceiveCount to at least 9/,
          ),
          fields: { neededReceives: 9 },
        },
      ]);
      // Not "notify rules will fail", of rules the HTTP function runs, not this one.
      expect(errors).toEqual([]);
    });
  });

  it("says a FIFO queue is no queue it can use, where each failed record was reported with SQS's missing MessageGroupId", async () => {
    // SQS refuses a FIFO queue's message without a MessageGroupId and with a DelaySeconds of its
    // own: no notification reached it, and no dead letter its DLQ, each refusal naming only the
    // missing parameter. Here a job some other producer put on one, in a message group.
    const fifo = await createFifoPair();
    const dead = withSink(jobOf(2), "flaky");
    await client.send(
      new SendMessageCommand({
        QueueUrl: fifo.queueUrl,
        MessageBody: JSON.stringify({ id: dead.id, body: dead }),
        MessageGroupId: "hookgate",
        MessageDeduplicationId: dead.id,
      }),
    );
    const received = await client.send(
      new ReceiveMessageCommand({
        QueueUrl: fifo.queueUrl,
        MaxNumberOfMessages: 10,
        WaitTimeSeconds: 0,
        AttributeNames: ["All"],
        MessageSystemAttributeNames: ["All"],
      }),
    );
    const [message] = received.Messages ?? [];
    if (!message) throw new Error("the job did not come back from the FIFO queue");
    // A FIFO record as Lambda hands it over: its group, deduplication id and sequence number, and
    // the queue's name ending in .fifo; on its second receive, its one scheduled retry spent.
    const template = eventOf([message]).Records[0] as SQSRecord;
    const record: SQSRecord = {
      ...template,
      attributes: {
        ...template.attributes,
        ApproximateReceiveCount: "2",
        SequenceNumber: message.Attributes?.SequenceNumber ?? "18849496460467696128",
        MessageGroupId: "hookgate",
        MessageDeduplicationId: dead.id,
      },
      eventSourceARN: arnOf(fifo.queueUrl),
    };
    const lines: { level: string; message: string; fields: Record<string, unknown> }[] = [];
    const handler = handlerFor(
      { HOOKGATE_QUEUE_URL: fifo.queueUrl, HOOKGATE_DLQ_URL: fifo.dlqUrl },
      { log: (level, message, fields = {}) => lines.push({ level, message, fields }) },
    );

    const response = await handler({ Records: [record] }, invocationOf());

    expect(response.batchItemFailures).toEqual([{ itemIdentifier: record.messageId }]);
    expect(lines.filter((l) => l.level === "error")).toEqual([
      expect.objectContaining({
        message: "record failed; reported for redelivery",
        fields: expect.objectContaining({
          job: dead.id,
          error: expect.stringContaining(
            `the SQS queue ${fifo.queueUrl} is a FIFO queue: hookgate needs standard queues`,
          ),
        }),
      }),
    ]);
  });

  it("says once that a batch came from a queue HOOKGATE_QUEUE_URL does not name, and delivers it", async () => {
    // Another stage's queue URL, say: a retry's visibility change was refused on it and a held
    // job's copy went to it, each failure naming only the receipt handle.
    await createPair();
    const errors: Record<string, unknown>[] = [];
    const handler = ownSinkHandler(receiver.url, {
      log: (level, msg, fields = {}) => {
        if (level === "error") errors.push({ msg, ...fields });
      },
    });
    const other = "arn:aws:sqs:us-east-1:000000000000:hookgate-staging-DeliveryQueue";
    const jobs = [withSink(jobOf(2), "audit"), withSink(jobOf(0), "audit")];
    for (const job of jobs) {
      await send([job]);
      const event = eventOf(await receiveAll(1));
      for (const record of event.Records) record.eventSourceARN = other;
      expect((await handler(event, invocationOf())).batchItemFailures).toEqual([]);
    }
    expect(receiver.unique).toEqual(expect.arrayContaining(jobs.map((j) => j.notification.id)));
    expect(errors).toEqual([
      {
        msg: "a batch came from a queue that HOOKGATE_QUEUE_URL does not name: its retries come back at the queue's visibility timeout, not at their delay, and its held jobs' copies go to HOOKGATE_QUEUE_URL's queue instead",
        queue: other,
        fix: "set HOOKGATE_QUEUE_URL on the delivery function to the URL of the queue its event source mapping reads (serverless.yml sets both to the DeliveryQueue of infra/aws/template.yaml)",
      },
    ]);
  });

  it("says it once per queue HOOKGATE_QUEUE_URL does not name, with batches from two such queues in turn", async () => {
    // Only the last queue said was kept: two event source mappings on other queues said it again
    // at each batch that came from the other one.
    await createPair();
    const told: unknown[] = [];
    const handler = ownSinkHandler(receiver.url, {
      log: (_level, message, fields = {}) => {
        if (message.startsWith("a batch came from a queue")) told.push(fields.queue);
      },
    });
    const staging = "arn:aws:sqs:us-east-1:000000000000:hookgate-staging-DeliveryQueue";
    const dev = "arn:aws:sqs:us-east-1:000000000000:hookgate-dev-DeliveryQueue";
    for (const source of [staging, dev, staging, dev]) {
      await send([withSink(jobOf(0), "audit")]);
      const event = eventOf(await receiveAll(1));
      for (const record of event.Records) record.eventSourceARN = source;
      expect((await handler(event, invocationOf())).batchItemFailures).toEqual([]);
    }
    expect(told).toEqual([staging, dev]);
  });

  it("leaves a batch from its own DLQ there, undelivered, and fails the invocation naming the event source mapping to remove", async () => {
    // A second event source mapping, on the DLQ: each dead letter was read as its job, sent to its
    // sink again and, failing, dead-lettered into the DLQ again, which handed it back, for ever.
    await createPair();
    const fresh = (job: DeliveryJob, sink: string): DeliveryJob => {
      const id = `evt_${crypto.randomUUID()}`;
      return { ...job, id: `${id}.${sink}`, sink, notification: { ...job.notification, id } };
    };
    const toAudit = fresh(jobOf(0), "audit");
    const toFlaky = fresh(jobOf(2), "flaky");
    const queue = createSqsQueue<DeliveryJob>({ client, queueUrl, deadLetterQueueUrl: dlqUrl });
    await send([toAudit, toFlaky]);
    for (const message of await receiveAll(2)) {
      const { id, body } = decodeEnvelope(message.Body ?? "");
      await queue.deadLetter(
        { id, body, attempts: 2, receipt: message.ReceiptHandle ?? "" },
        "gave up after 2 attempts: HTTP 503",
      );
    }
    const letters = await receiveAll(2, dlqUrl);
    const dlqArn =
      (await client.send(new GetQueueAttributesCommand({ QueueUrl: dlqUrl, AttributeNames: ["QueueArn"] })))
        .Attributes?.QueueArn ?? "";
    // The flaky job's letter on its second receive: past its one retry, it would be dead-lettered.
    const flakyLetter = letters.find((m) => m.Body?.includes(toFlaky.id))?.Body ?? "";
    const event = eventOf(letters, { [flakyLetter]: "2" });
    for (const record of event.Records) record.eventSourceARN = dlqArn;
    const { lines, log } = logLines();
    const handler = handlerFor({}, { log });

    const outcome = await handler(event).then(
      (response) => response,
      (e: Error) => e.message,
    );

    expect(receiver.unique).not.toContain(toAudit.notification.id);
    expect(failing.received.filter((r) => JSON.stringify(r).includes(toFlaky.notification.id))).toEqual([]);
    // Both letters still there, as they were: not deleted, and no second letter.
    const depth = await client.send(
      new GetQueueAttributesCommand({ QueueUrl: dlqUrl, AttributeNames: ["ApproximateNumberOfMessages"] }),
    );
    expect(depth.Attributes?.ApproximateNumberOfMessages).toBe("2");
    const letter = (id: string) =>
      expect.objectContaining({ id, attempts: 2, error: "gave up after 2 attempts: HTTP 503" });
    expect(await queue.listDead()).toEqual(expect.arrayContaining([letter(toAudit.id), letter(toFlaky.id)]));
    // A failed invocation, not a partial batch response: a mapping without ReportBatchItemFailures
    // reads that as a success and deletes every record, the last copy of its event.
    expect(outcome).toMatch(/^dead letters came back to the delivery function.*hookgate dlq replay/);
    expect(lines).toEqual([
      {
        message: "dead letters came back to the delivery function; left on the DLQ, not delivered again",
        fields: expect.objectContaining({ queue: dlqArn, records: 2, fix: expect.stringContaining(dlqArn) }),
      },
    ]);
  });

  it.each([
    [
      "arn:aws:sqs:eu-west-1:123456789012:hookgate-dlq",
      "https://sqs.eu-west-1.amazonaws.com/123456789012/hookgate-dlq",
      true,
    ],
    [
      "arn:aws:sqs:eu-west-1:123456789012:hookgate-dlq",
      "https://eu-west-1.queue.amazonaws.com/123456789012/hookgate-dlq",
      true,
    ],
    [
      "arn:aws:sqs:us-gov-west-1:123456789012:dlq",
      "https://sqs-fips.us-gov-west-1.amazonaws.com/123456789012/dlq",
      true,
    ],
    [
      "arn:aws-cn:sqs:cn-north-1:123456789012:dlq",
      "https://sqs.cn-north-1.amazonaws.com.cn/123456789012/dlq",
      true,
    ],
    ["arn:aws:sqs:eu-west-1:123456789012:dlq", "https://sqs.eu-west-1.api.aws/123456789012/dlq", true],
    [
      "arn:aws:sqs:eu-west-1:123456789012:dlq",
      "https://vpce-0a1b2c3d-4e5f.sqs.eu-west-1.vpce.amazonaws.com/123456789012/dlq",
      true,
    ],
    // A local server's URL names no region.
    ["arn:aws:sqs:us-east-1:000000000000:dlq", "http://127.0.0.1:4566/000000000000/dlq", true],
    ["arn:aws:sqs:us-east-1:000000000000:dlq", "http://localhost:9324/000000000000/dlq/", true],
    // ElasticMQ's URL names no account either: only the name is compared.
    ["arn:aws:sqs:elasticmq:000000000000:dlq", "http://localhost:9324/queue/dlq", true],
    ["arn:aws:sqs:elasticmq:000000000000:jobs", "http://localhost:9324/queue/dlq", false],
    // The jobs queue, the same name in another account or region, a name it ends with.
    [
      "arn:aws:sqs:eu-west-1:123456789012:hookgate-jobs",
      "https://sqs.eu-west-1.amazonaws.com/123456789012/hookgate-dlq",
      false,
    ],
    ["arn:aws:sqs:eu-west-1:210987654321:dlq", "https://sqs.eu-west-1.amazonaws.com/123456789012/dlq", false],
    ["arn:aws:sqs:eu-west-2:123456789012:dlq", "https://sqs.eu-west-1.amazonaws.com/123456789012/dlq", false],
    // The legacy global host is us-east-1's: a queue of that name in another region is another.
    ["arn:aws:sqs:us-east-1:123456789012:dlq", "https://queue.amazonaws.com/123456789012/dlq", true],
    ["arn:aws:sqs:eu-west-1:123456789012:dlq", "https://queue.amazonaws.com/123456789012/dlq", false],
    [
      "arn:aws:sqs:eu-west-1:123456789012:dlq",
      "https://sqs.eu-west-1.amazonaws.com/123456789012/my-dlq",
      false,
    ],
    ["arn:aws:sqs:eu-west-1:123456789012:dlq", "not a url", false],
    ["", "https://sqs.eu-west-1.amazonaws.com/123456789012/dlq", false],
  ])("reads %s as the queue at %s: %s", (arn, url, same) => {
    expect(isArnOfQueueAt(url)(arn)).toBe(same);
  });

  it("reports every record when it has no DLQ to dead-letter into", async () => {
    await createPair();
    await send([withSink(jobOf(2), "flaky")]);
    const event = eventOf(await receiveAll(1), {});
    event.Records[0] = {
      ...(event.Records[0] as SQSRecord),
      attributes: { ...(event.Records[0] as SQSRecord).attributes, ApproximateReceiveCount: "2" },
    };
    const lines: Record<string, unknown>[] = [];
    const response = await handlerFor(
      { HOOKGATE_DLQ_URL: "" },
      { log: (level, msg, fields) => lines.push({ level, msg, ...fields }) },
    )(event);
    expect(response.batchItemFailures).toEqual([{ itemIdentifier: event.Records[0]?.messageId }]);
    // With what to set where: it said only "HOOKGATE_DLQ_URL is not set".
    expect(lines).toContainEqual(
      expect.objectContaining({
        msg: "record failed; reported for redelivery",
        error:
          "HOOKGATE_DLQ_URL is not set: set HOOKGATE_DLQ_URL in the delivery function's environment to the dead-letter queue's URL (serverless.yml sets it to the DeadLetterQueue of infra/aws/template.yaml)",
      }),
    );
  });
});

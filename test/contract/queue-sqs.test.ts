/**
 * The queue contract against SQS, spoken to by the real AWS SDK over loopback: local-aws-sqs is
 * an SQS JSON-protocol server. Each test gets a fresh source queue whose redrive policy points at
 * a fresh DLQ. Then what only SQS has: batch limits, clamping, refused entries, the redrive
 * policy as the safety net, messages that are not ours, and acks and retries gathered into batch
 * requests, each call still settling with its own entry's result.
 */
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import {
  CreateQueueCommand,
  type DeleteMessageBatchRequest,
  DeleteQueueCommand,
  GetQueueAttributesCommand,
  ReceiveMessageCommand,
  type ReceiveMessageCommandInput,
  type SendMessageBatchRequest,
  SendMessageCommand,
  SQSClient,
} from "@aws-sdk/client-sqs";
import { createSqsServer } from "local-aws-sqs";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { createSqsClientForLocal, createSqsQueue } from "../../src/adapters/queue/sqs.js";
import { type DeliveryJob, fitDeliveryJob } from "../../src/core/delivery.js";
import type { Queue } from "../../src/core/queue.js";
import { type Job, queueContract } from "./queue.contract.js";

let server: Server;
let endpoint: string;
let client: SQSClient;
let queues = 0;

beforeAll(async () => {
  server = await createSqsServer({ port: 0, hostname: "127.0.0.1" });
  const { port } = server.address() as AddressInfo;
  endpoint = `http://127.0.0.1:${port}`;
  client = createSqsClientForLocal(endpoint);
});
afterAll(async () => {
  client?.destroy();
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
});

interface Pair {
  readonly queueUrl: string;
  readonly deadLetterQueueUrl: string;
  delete(): Promise<void>;
}

/** A source queue and its DLQ, wired by a RedrivePolicy as in infra/. */
async function createQueuePair(
  options: {
    maxReceiveCount?: number;
    maximumMessageSize?: number;
    deadLetterMaximumMessageSize?: number;
  } = {},
): Promise<Pair> {
  const n = ++queues;
  const dlq = await client.send(
    new CreateQueueCommand({
      QueueName: `hookgate-dlq-${n}`,
      ...(options.deadLetterMaximumMessageSize
        ? { Attributes: { MaximumMessageSize: String(options.deadLetterMaximumMessageSize) } }
        : {}),
    }),
  );
  const deadLetterQueueUrl = dlq.QueueUrl ?? "";
  const attributes = await client.send(
    new GetQueueAttributesCommand({ QueueUrl: deadLetterQueueUrl, AttributeNames: ["QueueArn"] }),
  );
  const source = await client.send(
    new CreateQueueCommand({
      QueueName: `hookgate-jobs-${n}`,
      Attributes: {
        RedrivePolicy: JSON.stringify({
          deadLetterTargetArn: attributes.Attributes?.QueueArn,
          maxReceiveCount: options.maxReceiveCount ?? 10,
        }),
        ...(options.maximumMessageSize ? { MaximumMessageSize: String(options.maximumMessageSize) } : {}),
      },
    }),
  );
  const queueUrl = source.QueueUrl ?? "";
  return {
    queueUrl,
    deadLetterQueueUrl,
    async delete() {
      await client.send(new DeleteQueueCommand({ QueueUrl: queueUrl }));
      await client.send(new DeleteQueueCommand({ QueueUrl: deadLetterQueueUrl }));
    },
  };
}

queueContract("sqs queue (local-aws-sqs)", async () => {
  const pair = await createQueuePair();
  return {
    queue: createSqsQueue<Job>({
      client,
      queueUrl: pair.queueUrl,
      deadLetterQueueUrl: pair.deadLetterQueueUrl,
    }),
    dedupsIds: false,
    staleReceiptsIgnored: false,
    retryCountsAsReceive: true,
    cleanup: () => pair.delete(),
  };
});

describe("sqs queue, SQS specifics", () => {
  let pair: Pair;
  let queue: Queue<string>;
  const unreadable: string[] = [];

  async function open(options?: Parameters<typeof createQueuePair>[0]): Promise<void> {
    pair = await createQueuePair(options);
    queue = createSqsQueue<string>({
      client,
      queueUrl: pair.queueUrl,
      deadLetterQueueUrl: pair.deadLetterQueueUrl,
      onUnreadable: ({ reason }) => unreadable.push(reason),
    });
  }
  afterEach(async () => {
    unreadable.length = 0;
    await pair.delete();
  });

  it("refuses a FIFO queue or DLQ, naming it, where SQS refused each send for want of a MessageGroupId", async () => {
    await open();
    const n = ++queues;
    const fifo = async (name: string) =>
      (await client.send(new CreateQueueCommand({ QueueName: name, Attributes: { FifoQueue: "true" } })))
        .QueueUrl ?? "";
    const fifoQueue = await fifo(`hookgate-jobs-${n}.fifo`);
    const fifoDlq = await fifo(`hookgate-dlq-${n}.fifo`);
    try {
      const sendWith = async (queueUrl: string, deadLetterQueueUrl: string) =>
        createSqsQueue<string>({ client, queueUrl, deadLetterQueueUrl }).send([{ id: "job-1", body: "x" }]);
      await expect(sendWith(fifoQueue, fifoDlq)).rejects.toThrow(
        `the SQS queue ${fifoQueue} is a FIFO queue: hookgate needs standard queues`,
      );
      // A dead letter would be refused: said before the first send, not at the first dead letter.
      await expect(sendWith(pair.queueUrl, fifoDlq)).rejects.toThrow(
        `the SQS dead-letter queue ${fifoDlq} is a FIFO queue: hookgate needs standard queues`,
      );
      expect(await queue.receive(10, 30_000)).toEqual([]);
    } finally {
      for (const url of [fifoQueue, fifoDlq]) await client.send(new DeleteQueueCommand({ QueueUrl: url }));
    }
  });

  it("splits a send whose bodies pass 1 MiB into batches under it", async () => {
    await open();
    // Three 400 KiB bodies: one batch would be 1.2 MiB, which SQS refuses (BatchRequestTooLong).
    const bodies = ["a", "b", "c"].map((c) => c.repeat(400 * 1024));
    await queue.send(bodies.map((body, n) => ({ id: `big-${n}`, body })));
    const got = await queue.receive(10, 30_000);
    expect(got.map((m) => [m.id, m.body.length]).sort()).toEqual([
      ["big-0", 400 * 1024],
      ["big-1", 400 * 1024],
      ["big-2", 400 * 1024],
    ]);
    expect(got.find((m) => m.id === "big-1")?.body).toBe(bodies[1]);
  });

  it("refuses a message over 1 MiB by its id, sending nothing", async () => {
    await open();
    await expect(
      queue.send([
        { id: "small", body: "x" },
        { id: "huge", body: "y".repeat(1024 * 1024) },
      ]),
    ).rejects.toThrow(/SQS message huge is \d+ bytes/);
    expect(await queue.receive(10, 30_000)).toEqual([]);
  });

  it("cuts a delivery job over 1 MiB to fit, on send and on dead-lettering, when given fitDeliveryJob", async () => {
    // A PostToolUse near the default 1 MiB body limit (or past it, where Lambda's limit is raised):
    // refused, its notification would be lost; cut, it is delivered with its strings marked.
    await open();
    const delivery = createSqsQueue<DeliveryJob>({
      client,
      queueUrl: pair.queueUrl,
      deadLetterQueueUrl: pair.deadLetterQueueUrl,
      fit: fitDeliveryJob,
    });
    const output = Array.from({ length: 300 }, (_, i) => `${i} ${"o".repeat(3990)}`);
    const job: DeliveryJob = {
      id: "evt_big.audit",
      sink: "audit",
      notification: {
        id: "evt_big",
        createdAt: 0,
        team: "default",
        client: "claude-code",
        eventName: "PostToolUse",
        decision: "none",
        ruleId: "r",
        event: { tool_name: "Bash", tool_response: { output } },
      },
    };
    await delivery.send([{ id: job.id, body: job }]);
    const [got] = await delivery.receive(1, 30_000);
    expect(got?.id).toBe(job.id);
    const event = got?.body.notification.event as { tool_response: { output: string[] } };
    expect(event.tool_response.output).toHaveLength(300);
    expect(event.tool_response.output[299]).toMatch(/^299 o+…\[truncated by hookgate\]$/);
    if (!got) return;
    await delivery.deadLetter(got, `HTTP 500 ${"e".repeat(10_000)}`);
    const [dead] = await delivery.listDead(10);
    expect(dead).toMatchObject({ id: job.id, attempts: 1 });
    expect(dead?.error).toMatch(/^HTTP 500 e+/);
  });

  it("cuts a delivery job to a queue's own smaller limit when SQS refuses it as too long, on send, hold and dead-lettering", async () => {
    // A queue made before 2025, or by Terraform's default `max_message_size`, takes 256 KiB: a
    // job between that and 1 MiB was refused, its notification lost, and its dead letter never made.
    const limit = 256 * 1024;
    await open({ maximumMessageSize: limit, deadLetterMaximumMessageSize: limit });
    const delivery = createSqsQueue<DeliveryJob>({
      client,
      queueUrl: pair.queueUrl,
      deadLetterQueueUrl: pair.deadLetterQueueUrl,
      fit: fitDeliveryJob,
    });
    const output = Array.from({ length: 100 }, (_, i) => `${i} ${"o".repeat(3990)}`);
    const job = (id: string): DeliveryJob => ({
      id,
      sink: "audit",
      notification: {
        id,
        createdAt: 0,
        team: "default",
        client: "claude-code",
        eventName: "PostToolUse",
        decision: "none",
        ruleId: "r",
        event: { tool_name: "Bash", tool_response: { output } },
      },
    });
    const small = job("evt_small.audit");
    const smallBody = { ...small, notification: { ...small.notification, event: { tool_name: "Bash" } } };
    await delivery.send([
      { id: smallBody.id, body: smallBody },
      { id: "evt_big.audit", body: job("evt_big.audit") },
    ]);
    const got = await delivery.receive(10, 30_000);
    expect(got.map((m) => m.id).sort()).toEqual(["evt_big.audit", "evt_small.audit"]);
    const big = got.find((m) => m.id === "evt_big.audit");
    if (!big) return;
    const { output: cut } = (big.body.notification.event as { tool_response: { output: string[] } })
      .tool_response;
    expect(cut).toHaveLength(100);
    expect(cut[99]).toMatch(/^99 o+…\[truncated by hookgate\]$/);
    // A new queue object (another Lambda container) learns the limit from SQS again.
    const other = createSqsQueue<DeliveryJob>({
      client,
      queueUrl: pair.queueUrl,
      deadLetterQueueUrl: pair.deadLetterQueueUrl,
      fit: fitDeliveryJob,
    });
    await other.hold({ ...big, body: job("evt_big.audit") }, 0, "rate limited");
    const [held] = await other.receive(1, 30_000);
    expect(held?.id).toBe("evt_big.audit");
    if (!held) return;
    await createSqsQueue<DeliveryJob>({
      client,
      queueUrl: pair.queueUrl,
      deadLetterQueueUrl: pair.deadLetterQueueUrl,
      fit: fitDeliveryJob,
    }).deadLetter({ ...held, body: job("evt_big.audit") }, "HTTP 500");
    const [dead] = await delivery.listDead(10);
    expect(dead).toMatchObject({ id: "evt_big.audit", error: "HTTP 500" });
  });

  it("throws listing the entries SQS failed in a 200 answer, after sending the rest", async () => {
    await open({ maximumMessageSize: 1024 });
    await expect(
      queue.send([
        { id: "fits", body: "x" },
        { id: "too-long", body: "y".repeat(2000) },
      ]),
    ).rejects.toThrow(/SQS refused 1 of 2 messages: too-long \(InvalidParameterValue/);
    await expect(
      queue.send([
        { id: "fits-too", body: "x" },
        { id: "too-long-too", body: "y".repeat(2000) },
      ]),
    ).rejects.toMatchObject({ notSent: ["too-long-too"] });
    expect((await queue.receive(10, 30_000)).map((m) => m.id).sort()).toEqual(["fits", "fits-too"]);
  });

  it("clamps a delay beyond SQS's 900 s instead of failing the send", async () => {
    await open();
    await queue.send([{ id: "far", body: "x", delayMs: 3_600_000 }]);
    expect(await queue.receive(10, 30_000)).toEqual([]);
  });

  it("lists more dead letters than one receive returns, and leaves them all in place", async () => {
    await open();
    await queue.send(Array.from({ length: 15 }, (_, n) => ({ id: `d-${n}`, body: `job ${n}` })));
    for (const m of await queue.receive(15, 30_000)) await queue.deadLetter(m, "HTTP 500");
    const first = await queue.listDead();
    expect(first.map((d) => d.id).sort()).toEqual(Array.from({ length: 15 }, (_, n) => `d-${n}`).sort());
    expect((await queue.listDead(4)).length).toBe(4);
    expect((await queue.listDead()).length).toBe(15);
  });

  it("shows a job the redrive policy moved (the crash safety net) as a dead letter", async () => {
    await open({ maxReceiveCount: 1 });
    await queue.send([{ id: "crashed", body: "job" }]);
    expect(await queue.receive(10, 1000)).toHaveLength(1);
    // Never acked: when the lease runs out, receive count 1 ≥ maxReceiveCount moves it.
    await new Promise((resolve) => setTimeout(resolve, 1300));
    const dead = await queue.listDead();
    expect(dead).toEqual([
      {
        id: "crashed",
        body: "job",
        attempts: 0,
        error: expect.stringMatching(/redrive/),
        failedAt: expect.any(Number),
      },
    ]);
    expect(await queue.replayDead(["crashed"])).toEqual({ count: 1, missing: [] });
    expect(await queue.receive(10, 30_000)).toMatchObject([{ id: "crashed", body: "job", attempts: 1 }]);
  });

  it("drops more dead letters than one receive returns; --all also what is not a dead letter", async () => {
    await open();
    await queue.send(Array.from({ length: 15 }, (_, n) => ({ id: `d-${n}`, body: `job ${n}` })));
    for (const m of await queue.receive(15, 30_000)) await queue.deadLetter(m, "HTTP 500");
    await client.send(new SendMessageCommand({ QueueUrl: pair.deadLetterQueueUrl, MessageBody: "not json" }));
    // By id: the one asked for, and the message that is not a dead letter stays.
    expect(await queue.dropDead(["d-3", "d-12"])).toEqual({ count: 2, missing: [] });
    // Listed too, under the id it is dropped by: the count matches the list.
    const listed = await queue.listDead();
    expect(listed.length).toBe(14);
    expect(listed.filter((d) => d.id.startsWith("unreadable-")).map((d) => d.body)).toEqual(["not json"]);
    expect(await queue.dropDead()).toEqual({ count: 14, missing: [] });
    expect(await queue.listDead()).toEqual([]);
    const left = await client.send(
      new ReceiveMessageCommand({
        QueueUrl: pair.deadLetterQueueUrl,
        MaxNumberOfMessages: 10,
        WaitTimeSeconds: 0,
      }),
    );
    expect(left.Messages ?? []).toEqual([]);
  });

  it("takes a job dead-lettered twice once: one replay, no copy left behind, counted once", async () => {
    await open();
    const letter = (id: string) =>
      JSON.stringify({ id, body: `job ${id}`, attempts: 3, error: "HTTP 500", failedAt: Date.now() });
    for (const id of ["dup", "other", "dup", "gone", "gone"])
      await client.send(
        new SendMessageCommand({ QueueUrl: pair.deadLetterQueueUrl, MessageBody: letter(id) }),
      );
    // "missing" was never a dead letter: named as such (the CLI exits 1).
    expect(await queue.dropDead(["gone", "missing"])).toEqual({ count: 1, missing: ["missing"] });
    expect(await queue.replayDead(["dup"])).toEqual({ count: 1, missing: [] });
    expect((await queue.listDead()).map((d) => d.id)).toEqual(["other"]);
    expect((await queue.receive(10, 30_000)).map((m) => m.id)).toEqual(["dup"]);
    expect(await queue.receive(10, 30_000)).toEqual([]);
  });

  it("deletes the dead letters a replay sent when SQS refuses another of their page, and leaves that one listed", async () => {
    // The source queue refuses messages over 1 KiB; the DLQ does not. Before, the
    // whole page stayed on the DLQ, hidden for 30 s: the two sent were sent again by the next
    // replay.
    await open({ maximumMessageSize: 1024 });
    const letter = (id: string, body: string) =>
      JSON.stringify({ id, body, attempts: 3, error: "HTTP 500", failedAt: Date.now() });
    for (const [id, body] of [
      ["ok-1", "x"],
      ["too-long", "y".repeat(2000)],
      ["ok-2", "z"],
    ] as const)
      await client.send(
        new SendMessageCommand({ QueueUrl: pair.deadLetterQueueUrl, MessageBody: letter(id, body) }),
      );
    await expect(queue.replayDead()).rejects.toMatchObject({
      name: "SweepStoppedError",
      done: 2,
      message: expect.stringMatching(/SQS refused 1 of 3 messages: too-long \(InvalidParameterValue/),
      cause: expect.objectContaining({ name: "SendFailedError", notSent: ["too-long"] }),
    });
    expect((await queue.receive(10, 30_000)).map((m) => m.id).sort()).toEqual(["ok-1", "ok-2"]);
    // Hidden or not, the DLQ holds only the refused one, which is visible again at once.
    const attributes = await client.send(
      new GetQueueAttributesCommand({
        QueueUrl: pair.deadLetterQueueUrl,
        AttributeNames: ["ApproximateNumberOfMessages"],
      }),
    );
    expect(attributes.Attributes?.ApproximateNumberOfMessages).toBe("1");
    expect((await queue.listDead()).map((d) => d.id)).toEqual(["too-long"]);
  });

  /** Puts a dead letter on the DLQ as written, whatever its body. */
  const deadLetterText = (text: string) =>
    client.send(new SendMessageCommand({ QueueUrl: pair.deadLetterQueueUrl, MessageBody: text }));
  const visibleOnDlq = async () =>
    (
      await client.send(
        new GetQueueAttributesCommand({
          QueueUrl: pair.deadLetterQueueUrl,
          AttributeNames: ["ApproximateNumberOfMessages"],
        }),
      )
    ).Attributes?.ApproximateNumberOfMessages;

  /** `count` dead letters `j-0`, `j-1`, … on the DLQ: two pages of 10 and more. */
  const deadLetters = async (count: number) => {
    for (let n = 0; n < count; n++)
      await deadLetterText(
        JSON.stringify({ id: `j-${n}`, body: n, attempts: 1, error: "HTTP 500", failedAt: n }),
      );
  };
  /** Thrown by a client's middleware: the connection went as SQS was called. */
  const hangUp = (): never => {
    throw Object.assign(new Error("socket hang up"), { code: "ECONNRESET" });
  };
  /**
   * A queue on the pair `open` made, through a client of its own that calls `change` before each
   * call of `command` (after it, when `after`: SQS did it) with its count (from 1) and its input:
   * `change` throws to fail the call.
   */
  const queueChanging = (
    command: string,
    change: (n: number, input: Record<string, unknown>) => void,
    after = false,
  ) => {
    const changing = createSqsClientForLocal(endpoint);
    let calls = 0;
    changing.middlewareStack.add(
      (next, context) => async (args) => {
        if (context.commandName !== command) return next(args);
        const n = ++calls;
        if (!after) change(n, args.input as Record<string, unknown>);
        const result = await next(args);
        if (after) change(n, args.input as Record<string, unknown>);
        return result;
      },
      { step: "initialize", name: "change" },
    );
    const changed = createSqsQueue<string>({
      client: changing,
      queueUrl: pair.queueUrl,
      deadLetterQueueUrl: pair.deadLetterQueueUrl,
    });
    return { queue: changed, close: () => changing.destroy() };
  };

  it("makes a replay's page visible again at once when its send fails before any request, and says which", async () => {
    // Before, the page size check refused the page before sending it, and the
    // page stayed hidden for the 30 s each page is hidden for: a listing right after the
    // failure showed no dead letter. This dead letter's numbers, written short, are each 21
    // digits as JSON.stringify writes them: 700 KB on the DLQ, 3.7 MB as a job again.
    await open();
    await deadLetterText(`{"id":"wide","body":[${Array.from({ length: 175_000 }, () => "1e20").join(",")}]}`);
    await deadLetterText(
      JSON.stringify({ id: "small", body: "x", attempts: 1, error: "HTTP 500", failedAt: 1 }),
    );
    await expect(queue.replayDead()).rejects.toMatchObject({
      done: 0,
      message: expect.stringMatching(
        /^SQS message wide is \d+ bytes, over the 1048576 SQS takes; nothing was sent/,
      ),
    });
    expect(await queue.receive(10, 30_000)).toEqual([]);
    expect(await visibleOnDlq()).toBe("2");
    expect((await queue.listDead()).map((d) => d.id).sort()).toEqual(["small", "wide"]);
  });

  it("makes a replay's page visible again at once when the SQS client throws as it is called", async () => {
    await open();
    for (const id of ["a", "b"])
      await deadLetterText(JSON.stringify({ id, body: id, attempts: 1, error: "HTTP 500", failedAt: 1 }));
    const throwing = createSqsClientForLocal(endpoint);
    const send = throwing.send.bind(throwing);
    throwing.send = ((command: { constructor: { name: string } }, ...rest: unknown[]) => {
      if (command.constructor.name === "SendMessageBatchCommand") throw new Error("Region is missing");
      return (send as (...args: unknown[]) => unknown)(command, ...rest);
    }) as typeof throwing.send;
    const replaying = createSqsQueue<string>({
      client: throwing,
      queueUrl: pair.queueUrl,
      deadLetterQueueUrl: pair.deadLetterQueueUrl,
    });
    await expect(replaying.replayDead()).rejects.toMatchObject({
      done: 0,
      message: expect.stringMatching(/Region is missing/),
    });
    throwing.destroy();
    expect(await visibleOnDlq()).toBe("2");
  });

  it("says how many dead letters a replay sent before a later page's send failed", async () => {
    // Before, a replay stopped on its second page said only why, and the operator
    // could not tell that the first page's ten were already back on the queue.
    await open();
    await deadLetters(13);
    const flaky = queueChanging("SendMessageBatchCommand", (n) => n === 2 && hangUp());
    const replay = flaky.queue.replayDead();
    await expect(replay).rejects.toMatchObject({ done: 10 });
    await expect(replay).rejects.toThrow(/socket hang up/);
    flaky.close();
    expect(await queue.receive(10, 30_000)).toHaveLength(10);
    expect(await visibleOnDlq()).toBe("3");
  });

  it.each([
    ["SQS took it and the answer was lost", true],
    ["it never reached SQS", false],
  ])(
    "says which dead letters a replay may have sent when a page's send got no answer: %s",
    async (_how, after) => {
      // Before, a send with no answer was taken as not sent, and the replay said only
      // how many it had sent before: a second replay could send that page twice, unwarned.
      await open();
      await deadLetters(13);
      const flaky = queueChanging("SendMessageBatchCommand", (n) => n === 2 && hangUp(), after);
      const replay = flaky.queue.replayDead();
      await expect(replay).rejects.toMatchObject({ name: "SweepStoppedError", done: 10, unsure: 3 });
      await expect(replay).rejects.toThrow(/socket hang up/);
      flaky.close();
      expect(await queue.receive(10, 30_000)).toHaveLength(10);
      expect(await queue.receive(10, 30_000)).toHaveLength(after ? 3 : 0);
      // Sent or not, they are still dead letters, listed at once.
      expect(await visibleOnDlq()).toBe("3");
      expect((await queue.listDead()).map((d) => d.id).sort()).toEqual(["j-10", "j-11", "j-12"]);
    },
  );

  it("counts no dead letter of a page SQS refused whole as maybe sent", async () => {
    // An answer that refuses the request (a 4xx) says nothing of it was sent.
    await open();
    await deadLetters(3);
    const refusing = queueChanging("SendMessageBatchCommand", (_n, input) => {
      input.QueueUrl = `${pair.queueUrl}-missing`;
    });
    const replay = refusing.queue.replayDead();
    await expect(replay).rejects.toMatchObject({ name: "SweepStoppedError", done: 0, unsure: 0 });
    await expect(replay).rejects.toThrow(/does not exist/);
    refusing.close();
    expect(await visibleOnDlq()).toBe("3");
  });

  it("counts no dead letter of a page as maybe sent when the SDK found no credentials to send it with", async () => {
    // The AWS SDK reads a request's credentials before its retry step, and a
    // provider's error has no status; read as a request with no answer, the replay said the page
    // may be on the queue, though nothing had gone out.
    await open();
    await deadLetters(3);
    // Credentials that expire at once, read again for each request: none for the page's send.
    let command = "";
    const unsigned = new SQSClient({
      region: "us-east-1",
      endpoint,
      credentials: async () => {
        if (command === "SendMessageBatchCommand")
          throw Object.assign(new Error("Could not load credentials from any providers"), {
            name: "CredentialsProviderError",
          });
        return { accessKeyId: "local", secretAccessKey: "local", expiration: new Date(0) };
      },
    });
    unsigned.middlewareStack.add(
      (next, context) => async (args) => {
        command = context.commandName ?? "";
        return next(args);
      },
      { step: "initialize", name: "whichCommand" },
    );
    const replaying = createSqsQueue<string>({
      client: unsigned,
      queueUrl: pair.queueUrl,
      deadLetterQueueUrl: pair.deadLetterQueueUrl,
    });
    const replay = replaying.replayDead();
    await expect(replay).rejects.toThrow(/Could not load credentials/);
    await expect(replay).rejects.toMatchObject({ name: "SweepStoppedError", done: 0, unsure: 0 });
    unsigned.destroy();
    expect(await queue.receive(10, 30_000)).toHaveLength(0);
    expect(await visibleOnDlq()).toBe("3");
  });

  it("counts the dead letters of a page as maybe sent when the SDK found no credentials only for a try after one that went out", async () => {
    // The SDK signs each try, and refreshes credentials about to expire there: a refresh that
    // fails on the try after a connection reset says nothing of the try before, which SQS took.
    await open();
    await deadLetters(3);
    const refreshing = createSqsClientForLocal(endpoint);
    let tries = 0;
    refreshing.middlewareStack.add(
      (next, context) => async (args) => {
        if (context.commandName !== "SendMessageBatchCommand") return next(args);
        if (++tries === 1) {
          await next(args);
          throw Object.assign(new Error("socket hang up"), { code: "ECONNRESET" });
        }
        throw Object.assign(new Error("Could not load credentials from any providers"), {
          name: "CredentialsProviderError",
        });
      },
      // Where the SDK's signer runs: after the retry step.
      { step: "finalizeRequest", priority: "low", name: "takeThenNoCredentials" },
    );
    const replaying = createSqsQueue<string>({
      client: refreshing,
      queueUrl: pair.queueUrl,
      deadLetterQueueUrl: pair.deadLetterQueueUrl,
    });
    const replay = replaying.replayDead();
    await expect(replay).rejects.toThrow(/Could not load credentials/);
    expect(tries).toBe(2);
    expect(await queue.receive(10, 30_000)).toHaveLength(3);
    await expect(replay).rejects.toMatchObject({ name: "SweepStoppedError", done: 0, unsure: 3 });
    refreshing.destroy();
  });

  it("counts the dead letters of a page as maybe sent when SQS refused the send only after the SDK tried it again", async () => {
    // The AWS SDK sends a request again after no answer or a 5xx (three tries by default), and
    // rejects with the last try's answer: a 4xx then says nothing of the tries before it, one of
    // which SQS may have taken.
    await open();
    await deadLetters(3);
    const retrying = createSqsClientForLocal(endpoint);
    let tries = 0;
    retrying.middlewareStack.add(
      (next, context) => async (args) => {
        if (context.commandName !== "SendMessageBatchCommand") return next(args);
        if (++tries === 1) {
          await next(args);
          throw Object.assign(new Error("socket hang up"), { code: "ECONNRESET" });
        }
        // The retry goes to a queue that does not exist: SQS answers 400.
        const request = args.request as { body: Uint8Array; headers: Record<string, string> };
        const body = new TextDecoder()
          .decode(request.body)
          .replace(pair.queueUrl, `${pair.queueUrl}-missing`);
        request.body = new TextEncoder().encode(body);
        request.headers["content-length"] = String(Buffer.byteLength(body));
        return next(args);
      },
      { step: "deserialize", priority: "high", name: "takeThenRefuse" },
    );
    const replaying = createSqsQueue<string>({
      client: retrying,
      queueUrl: pair.queueUrl,
      deadLetterQueueUrl: pair.deadLetterQueueUrl,
    });
    const replay = replaying.replayDead();
    await expect(replay).rejects.toThrow(/does not exist/);
    expect(tries).toBe(2);
    expect(await queue.receive(10, 30_000)).toHaveLength(3);
    await expect(replay).rejects.toMatchObject({ name: "SweepStoppedError", done: 0, unsure: 3 });
    retrying.destroy();
  });

  it("says a replay's dead letters that went out may stay on the DLQ too when their page's delete gets no answer", async () => {
    // Before, the replay stopped with the delete's error alone, and the command
    // then said the dead letters left were still to be replayed: those of the page, back on the
    // queue already, were among them, and a second replay would send them again.
    await open();
    for (const id of ["a", "b"])
      await deadLetterText(JSON.stringify({ id, body: id, attempts: 1, error: "HTTP 500", failedAt: 1 }));
    const flaky = queueChanging("DeleteMessageBatchCommand", hangUp);
    const replay = flaky.queue.replayDead();
    await expect(replay).rejects.toMatchObject({ done: 2 });
    await expect(replay).rejects.toThrow(
      /2 dead letters went out and may stay on the DLQ too, a delete unanswered \(a replay sends them again\): socket hang up/,
    );
    flaky.close();
    expect((await queue.receive(10, 30_000)).map((m) => m.id).sort()).toEqual(["a", "b"]);
  });

  it("says a replayed job's second copy may stay on the DLQ when the delete of a page holding only that copy gets no answer", async () => {
    // The page's one dead letter was a copy of a job the replay sent on the page before: its
    // delete failing stopped the replay with the delete's error alone, and the command said the
    // dead letters left were still to be replayed, this job among them.
    await open();
    const letter = (id: string) =>
      JSON.stringify({ id, body: id, attempts: 1, error: "HTTP 500", failedAt: 1 });
    for (const id of ["dup", ...Array.from({ length: 9 }, (_, n) => `j-${n}`), "dup"])
      await deadLetterText(letter(id));
    const flaky = queueChanging("DeleteMessageBatchCommand", (n) => n === 2 && hangUp());
    const replay = flaky.queue.replayDead();
    await expect(replay).rejects.toMatchObject({ done: 10 });
    await expect(replay).rejects.toThrow(
      /^1 dead letter went out and may stay on the DLQ too, a delete unanswered \(a replay sends them again\): socket hang up/,
    );
    flaky.close();
  });

  it("names only the dead letters SQS refused to delete as staying on the DLQ after a replay", async () => {
    // Before, a page's delete that SQS refused for one entry was said to leave the
    // whole page on the DLQ, to be sent again by the next replay.
    await open();
    for (const id of ["a", "b", "c"])
      await deadLetterText(JSON.stringify({ id, body: id, attempts: 1, error: "HTTP 500", failedAt: 1 }));
    const spoiling = queueChanging("DeleteMessageBatchCommand", (_n, input) => {
      const entries = input.Entries as { ReceiptHandle?: string }[] | undefined;
      if (entries?.[0]) entries[0] = { ...entries[0], ReceiptHandle: "not-a-receipt" };
    });
    const replay = spoiling.queue.replayDead();
    await expect(replay).rejects.toMatchObject({ done: 3 });
    await expect(replay).rejects.toThrow(
      /^1 dead letter went out but stays on the DLQ too \(a replay sends them again\)/,
    );
    spoiling.close();
    expect(await visibleOnDlq()).toBe("1");
  });

  it("says a replay's dead letters that went out may stay on the DLQ too when SQS refused the rest of the page and the delete got no answer", async () => {
    await open();
    for (const id of ["a", "b", "c"])
      await deadLetterText(JSON.stringify({ id, body: id, attempts: 1, error: "HTTP 500", failedAt: 1 }));
    const client = createSqsClientForLocal(endpoint);
    client.middlewareStack.add(
      (next, context) => async (args) => {
        if (context.commandName === "DeleteMessageBatchCommand") hangUp();
        if (context.commandName !== "SendMessageBatchCommand") return next(args);
        // SQS takes the page but its last entry, which it refuses for the sender's fault.
        const input = args.input as SendMessageBatchRequest;
        const entries = input.Entries ?? [];
        const result = await next({ ...args, input: { ...input, Entries: entries.slice(0, -1) } });
        const output = result.output as { Failed?: unknown[] };
        output.Failed = [
          { Id: entries.at(-1)?.Id, Code: "InvalidParameterValue", Message: "no", SenderFault: true },
        ];
        return result;
      },
      { step: "initialize", name: "refuseLastThenHangUp" },
    );
    const replaying = createSqsQueue<string>({
      client,
      queueUrl: pair.queueUrl,
      deadLetterQueueUrl: pair.deadLetterQueueUrl,
    });
    const replay = replaying.replayDead();
    await expect(replay).rejects.toMatchObject({ done: 2 });
    await expect(replay).rejects.toThrow(
      /; the dead letters that went out may stay on the DLQ too \(a replay sends them again\): socket hang up$/,
    );
    client.destroy();
    expect(await queue.receive(10, 30_000)).toHaveLength(2);
  });

  it("says how many dead letters a drop deleted before a later page's delete failed", async () => {
    // Before, a drop stopped on its second page said only why; the first page's ten were
    // gone already, and the operator could not tell.
    await open();
    await deadLetters(13);
    const flaky = queueChanging("DeleteMessageBatchCommand", (n) => n === 2 && hangUp());
    const drop = flaky.queue.dropDead();
    // The delete of the page it stopped on failed whole: its three may be gone or not.
    await expect(drop).rejects.toMatchObject({ name: "SweepStoppedError", done: 10, unsure: 3 });
    await expect(drop).rejects.toThrow(/socket hang up/);
    flaky.close();
    // The first page is gone; the DLQ holds the three of the page it stopped on.
    expect(await visibleOnDlq()).toBe("3");
  });

  it("counts a dead letter whose delete SQS failed on its side and whose retry got no answer as maybe dropped", async () => {
    // SQS fails the last entry on its own side (SenderFault false); the request that tries it
    // again reaches SQS, which deletes it, and its answer is lost.
    await open();
    await deadLetters(3);
    const flaky = createSqsClientForLocal(endpoint);
    let calls = 0;
    flaky.middlewareStack.add(
      (next, context) => async (args) => {
        if (context.commandName !== "DeleteMessageBatchCommand") return next(args);
        if (++calls > 1) {
          await next(args);
          hangUp();
        }
        const input = args.input as DeleteMessageBatchRequest;
        const entries = input.Entries ?? [];
        const lost = entries.at(-1);
        const result = await next({ ...args, input: { ...input, Entries: entries.slice(0, -1) } });
        const output = result.output as { Failed?: unknown[] };
        output.Failed = [{ Id: lost?.Id, Code: "InternalError", Message: "try again", SenderFault: false }];
        return result;
      },
      { step: "initialize", name: "loseOneThenTheAnswer" },
    );
    const dropping = createSqsQueue<string>({
      client: flaky,
      queueUrl: pair.queueUrl,
      deadLetterQueueUrl: pair.deadLetterQueueUrl,
    });
    await expect(dropping.dropDead()).rejects.toMatchObject({
      name: "SweepStoppedError",
      done: 2,
      unsure: 1,
    });
    flaky.destroy();
    expect(await visibleOnDlq()).toBe("0");
  });

  it("counts the dead letters SQS deleted of the page whose delete it refused in part", async () => {
    // SQS names the entries of a batch it refused, so the others are known to be gone. Before,
    // the drop's count left the whole page out and said "some may be gone too".
    await open();
    await deadLetters(13);
    // The second page's first receipt spoilt: SQS refuses that entry alone.
    const spoiling = queueChanging("DeleteMessageBatchCommand", (n, input) => {
      const entries = input.Entries as { ReceiptHandle?: string }[] | undefined;
      if (n === 2 && entries?.[0]) entries[0] = { ...entries[0], ReceiptHandle: "not-a-receipt" };
    });
    await expect(spoiling.queue.dropDead()).rejects.toMatchObject({
      name: "SweepStoppedError",
      done: 12,
      unsure: 0,
      message: expect.stringMatching(/SQS refused to delete 1 messages/),
    });
    spoiling.close();
    expect(await visibleOnDlq()).toBe("1");
  });

  it.each([
    ["SQS refuses that copy's delete", false, { done: 11, unsure: 0 }],
    ["that copy's delete gets no answer", true, { done: 9, unsure: 3 }],
  ])(
    "counts no job as dropped whose second copy stays when a drop stops: %s",
    async (_how, hangsUp, counts) => {
      // Before, the drop counted by job id, so a job whose first copy it deleted on
      // one page counted as dropped though it stopped on the page holding its second copy.
      await open();
      const letter = (id: string) =>
        JSON.stringify({ id, body: id, attempts: 1, error: "HTTP 500", failedAt: 1 });
      const first = ["dup", ...Array.from({ length: 9 }, (_, n) => `j-${n}`)];
      for (const id of [...first, "dup", "j-9", "j-10"]) await deadLetterText(letter(id));
      // Each receipt's job, as the DLQ hands them out; the second page's delete fails for dup's copy.
      const jobOf = new Map<string, string>();
      const failing = createSqsClientForLocal(endpoint);
      let deletes = 0;
      failing.middlewareStack.add(
        (next, context) => async (args) => {
          const input = args.input as DeleteMessageBatchRequest;
          if (context.commandName === "DeleteMessageBatchCommand" && ++deletes === 2) {
            if (hangsUp) hangUp();
            input.Entries = (input.Entries ?? []).map((e) =>
              jobOf.get(e.ReceiptHandle ?? "") === "dup" ? { ...e, ReceiptHandle: "not-a-receipt" } : e,
            );
          }
          const result = await next(args);
          if (context.commandName === "ReceiveMessageCommand")
            for (const m of (result.output as { Messages?: { Body?: string; ReceiptHandle?: string }[] })
              .Messages ?? [])
              jobOf.set(m.ReceiptHandle ?? "", (JSON.parse(m.Body ?? "{}") as { id: string }).id);
          return result;
        },
        { step: "initialize", name: "failDupsSecondCopy" },
      );
      const dropping = createSqsQueue<string>({
        client: failing,
        queueUrl: pair.queueUrl,
        deadLetterQueueUrl: pair.deadLetterQueueUrl,
      });
      await expect(dropping.dropDead()).rejects.toMatchObject({ name: "SweepStoppedError", ...counts });
      failing.destroy();
      expect(await visibleOnDlq()).toBe(hangsUp ? "3" : "1");
    },
  );

  it("lists a job dead-lettered twice once, with its latest error", async () => {
    await open();
    const letter = (id: string, error: string, failedAt: number) =>
      JSON.stringify({ id, body: `job ${id}`, attempts: 3, error, failedAt });
    for (const [id, error, at] of [
      ["dup", "HTTP 500", 1_000],
      ["other", "HTTP 410", 2_000],
      ["dup", "HTTP 503", 3_000],
    ] as const)
      await client.send(
        new SendMessageCommand({ QueueUrl: pair.deadLetterQueueUrl, MessageBody: letter(id, error, at) }),
      );
    expect((await queue.listDead()).map((d) => [d.id, d.error])).toEqual([
      ["other", "HTTP 410"],
      ["dup", "HTTP 503"],
    ]);
  });

  it("ends a listing when its first pages come back, rather than read them round and round", async () => {
    await open();
    // Visibility 0 on every DLQ receive: each page is back at once, as pages are in a listing
    // that outlasts the 30 s it hides them for.
    const recorder = createSqsClientForLocal(endpoint);
    recorder.middlewareStack.add(
      (next, context) => async (args) => {
        const input = args.input as ReceiveMessageCommandInput;
        if (context.commandName === "ReceiveMessageCommand" && input.QueueUrl === pair.deadLetterQueueUrl)
          return next({ ...args, input: { ...input, VisibilityTimeout: 0 } });
        return next(args);
      },
      { step: "initialize", name: "noVisibility" },
    );
    const recorded = createSqsQueue<string>({
      client: recorder,
      queueUrl: pair.queueUrl,
      deadLetterQueueUrl: pair.deadLetterQueueUrl,
    });
    try {
      const letter = (id: string) =>
        JSON.stringify({ id, body: `job ${id}`, attempts: 3, error: "HTTP 500", failedAt: Date.now() });
      for (const id of ["a", "b", "c"])
        await client.send(
          new SendMessageCommand({ QueueUrl: pair.deadLetterQueueUrl, MessageBody: letter(id) }),
        );
      // Three dead letters and a limit of 100: only a page that repeats can end it.
      const listed = (await recorded.listDead(100)).map((d) => d.id).sort();
      expect(listed).toEqual(["a", "b", "c"]);
    } finally {
      await recorded.close();
      recorder.destroy();
    }
  }, 20_000);

  it("long-polls the DLQ as it reads it to the end, so a false empty answer cannot end a sweep early", async () => {
    await open();
    const recorder = createSqsClientForLocal(endpoint);
    const waits: { dlq: boolean; wait: number | undefined }[] = [];
    recorder.middlewareStack.add(
      (next, context) => async (args) => {
        if (context.commandName === "ReceiveMessageCommand") {
          const input = args.input as { QueueUrl?: string; WaitTimeSeconds?: number };
          waits.push({ dlq: input.QueueUrl === pair.deadLetterQueueUrl, wait: input.WaitTimeSeconds });
        }
        return next(args);
      },
      { step: "initialize", name: "recordWaits" },
    );
    const recorded = createSqsQueue<string>({
      client: recorder,
      queueUrl: pair.queueUrl,
      deadLetterQueueUrl: pair.deadLetterQueueUrl,
    });
    try {
      await recorded.send([{ id: "a", body: "x" }]);
      for (const m of await recorded.receive(10, 30_000)) await recorded.deadLetter(m, "HTTP 500");
      expect((await recorded.listDead()).map((d) => d.id)).toEqual(["a"]);
      expect(await recorded.replayDead(["missing"])).toEqual({ count: 0, missing: ["missing"] });
      expect(await recorded.dropDead(["a"])).toEqual({ count: 1, missing: [] });
      const dlq = waits.filter((w) => w.dlq);
      expect(dlq.length).toBeGreaterThanOrEqual(3);
      expect(dlq.every((w) => w.wait === 1)).toBe(true);
      // The consumer's receives stay short polls: it polls again anyway.
      const main = waits.filter((w) => !w.dlq);
      expect(main.length).toBeGreaterThan(0);
      expect(main.every((w) => w.wait === 0)).toBe(true);
    } finally {
      await recorded.close();
      recorder.destroy();
    }
  });

  it("skips a message that is not a job envelope and says so", async () => {
    await open();
    await client.send(new SendMessageCommand({ QueueUrl: pair.queueUrl, MessageBody: "not json" }));
    await queue.send([{ id: "ours", body: "x" }]);
    expect((await queue.receive(10, 30_000)).map((m) => m.id)).toEqual(["ours"]);
    expect(unreadable).toEqual(["body is not JSON"]);
  });

  describe("acks and retries in batch requests", () => {
    /** A client of its own that records each command it sends (and may alter a request and its answer). */
    let recording: SQSClient;
    const commands: string[] = [];

    function openRecorded(): void {
      recording = createSqsClientForLocal(endpoint);
      recording.middlewareStack.add(
        (next, context) => async (args) => {
          commands.push(context.commandName ?? "");
          return next(args);
        },
        { step: "initialize", name: "recordCommands" },
      );
      queue = createSqsQueue<string>({
        client: recording,
        queueUrl: pair.queueUrl,
        deadLetterQueueUrl: pair.deadLetterQueueUrl,
      });
    }
    afterEach(() => {
      commands.length = 0;
      recording?.destroy();
    });
    const sent = (name: string) => commands.filter((c) => c === name).length;
    const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

    /**
     * Makes the first `command` (a batch request) lose its last entry inside "SQS" (SenderFault
     * false, the rest carried out); `later` takes the requests after it (sent as they are by default).
     */
    function loseLastEntryOfFirst(
      command: "SendMessageBatchCommand" | "DeleteMessageBatchCommand",
      later: (send: () => Promise<unknown>) => Promise<unknown> = (send) => send(),
    ): void {
      let calls = 0;
      recording.middlewareStack.add(
        (next, context) => async (args) => {
          if (context.commandName !== command) return next(args);
          if (++calls > 1) return later(() => next(args)) as ReturnType<typeof next>;
          const input = args.input as SendMessageBatchRequest | DeleteMessageBatchRequest;
          const entries = input.Entries ?? [];
          const lost = entries.at(-1);
          const result = await next({ ...args, input: { ...input, Entries: entries.slice(0, -1) } });
          const output = result.output as { Failed?: unknown[] };
          output.Failed = [
            ...(output.Failed ?? []),
            { Id: lost?.Id, Code: "InternalError", Message: "try again", SenderFault: false },
          ];
          return result;
        },
        { step: "initialize", name: "loseLastEntryOfFirst" },
      );
    }

    it("deletes the acks of a batch's deliveries ten to a DeleteMessageBatch", async () => {
      await open();
      openRecorded();
      await queue.send(Array.from({ length: 12 }, (_, n) => ({ id: `j-${n}`, body: `job ${n}` })));
      const got = await queue.receive(12, 1000);
      expect(got).toHaveLength(12);
      // As the consumer does: each job settled on its own as its delivery ends.
      await Promise.all(got.map((m) => queue.ack(m)));
      expect(sent("DeleteMessageBatchCommand")).toBe(2);
      expect(sent("DeleteMessageCommand")).toBe(0);
      await sleep(1300);
      expect(await queue.receive(10, 30_000)).toEqual([]);
    });

    it("changes the visibility of retries in one ChangeMessageVisibilityBatch", async () => {
      await open();
      openRecorded();
      await queue.send(["a", "b", "c"].map((id) => ({ id, body: id })));
      const got = await queue.receive(3, 30_000);
      await Promise.all(got.map((m) => queue.retry(m, 0, "HTTP 503")));
      expect(sent("ChangeMessageVisibilityBatchCommand")).toBe(1);
      expect(sent("ChangeMessageVisibilityCommand")).toBe(0);
      expect((await queue.receive(10, 30_000)).map((m) => m.id).sort()).toEqual(["a", "b", "c"]);
    });

    it("keeps a long retry inside SQS's 12 h from the receive, with room for the attempt itself", async () => {
      await open();
      openRecorded();
      const asked: number[] = [];
      recording.middlewareStack.add(
        (next, context) => async (args) => {
          if (context.commandName === "ChangeMessageVisibilityBatchCommand") {
            const input = args.input as { Entries?: { VisibilityTimeout?: number }[] };
            for (const entry of input.Entries ?? []) asked.push(entry.VisibilityTimeout ?? -1);
          }
          return next(args);
        },
        { step: "initialize", name: "noteVisibility" },
      );
      await queue.send([{ id: "later", body: "x" }]);
      const [got] = await queue.receive(1, 30_000);
      if (!got) throw new Error("nothing received");
      await queue.retry(got, 13 * 3_600_000, "HTTP 503");
      expect(asked).toEqual([43_200 - 900]);
    });

    it("rejects only the ack SQS refused, whose message comes back after its visibility timeout", async () => {
      await open();
      openRecorded();
      await queue.send([
        { id: "done", body: "x" },
        { id: "refused", body: "y" },
      ]);
      const got = await queue.receive(2, 1000);
      const done = got.find((m) => m.id === "done");
      const refused = got.find((m) => m.id === "refused");
      if (!done || !refused) throw new Error("both not received");
      const [acked, rejected] = await Promise.allSettled([
        queue.ack(done),
        queue.ack({ ...refused, receipt: "not-a-receipt" }),
      ]);
      expect(acked.status).toBe("fulfilled");
      expect(rejected).toMatchObject({
        status: "rejected",
        reason: expect.objectContaining({
          message: expect.stringMatching(/SQS refused to delete a message \(ReceiptHandleIsInvalid/),
        }),
      });
      expect(sent("DeleteMessageBatchCommand")).toBe(1);
      await sleep(1300);
      expect(await queue.receive(10, 30_000)).toMatchObject([{ id: "refused", attempts: 2 }]);
    });

    it("says when a dead letter was sent but its message's delete was refused, so the caller does not dead-letter it twice", async () => {
      await open();
      openRecorded();
      await queue.send([{ id: "bad", body: "x" }]);
      const [got] = await queue.receive(1, 1000);
      if (!got) throw new Error("nothing received");
      await expect(queue.deadLetter({ ...got, receipt: "not-a-receipt" }, "HTTP 410")).rejects.toMatchObject({
        name: "CopySentError",
        message: expect.stringMatching(/^dead letter sent, but .*ReceiptHandleIsInvalid/),
      });
      expect((await queue.listDead()).map((d) => d.id)).toEqual(["bad"]);
    });

    it("sends an entry SQS failed on its side once more, in the next batch request", async () => {
      await open();
      openRecorded();
      loseLastEntryOfFirst("DeleteMessageBatchCommand");
      await queue.send(["a", "b", "c"].map((id) => ({ id, body: id })));
      const got = await queue.receive(3, 1000);
      await Promise.all(got.map((m) => queue.ack(m)));
      expect(sent("DeleteMessageBatchCommand")).toBe(2);
      await sleep(1300);
      expect(await queue.receive(10, 30_000)).toEqual([]);
    });

    it("settles the acks SQS took when the request that tries another again fails, and rejects only that one", async () => {
      // Before, the whole call rejected, so every ack of the batch was logged as not settled
      // (and on Lambda a dead letter taken as deleted read as one to report).
      await open();
      openRecorded();
      // The request that tries the lost entry again fails with no answer.
      loseLastEntryOfFirst("DeleteMessageBatchCommand", async () => {
        throw Object.assign(new Error("socket hang up"), { code: "ECONNRESET" });
      });
      await queue.send(["a", "b", "c"].map((id) => ({ id, body: id })));
      const got = await queue.receive(3, 1000);
      const settled = await Promise.allSettled(got.map((m) => queue.ack(m)));
      expect(settled.map((r) => r.status)).toEqual(["fulfilled", "fulfilled", "rejected"]);
      expect(settled[2]).toMatchObject({
        reason: expect.objectContaining({
          message: expect.stringMatching(/InternalError: try again; .*socket hang up/),
        }),
      });
      await sleep(1300);
      expect((await queue.receive(10, 30_000)).map((m) => m.id)).toEqual([got[2]?.id]);
    });

    it("sends a message SQS failed on its side once more, so the job is not lost", async () => {
      await open();
      openRecorded();
      loseLastEntryOfFirst("SendMessageBatchCommand");
      await queue.send(["a", "b", "c"].map((id) => ({ id, body: id })));
      expect(sent("SendMessageBatchCommand")).toBe(2);
      expect((await queue.receive(10, 30_000)).map((m) => m.id).sort()).toEqual(["a", "b", "c"]);
    });

    it("names a job whose last request got no answer as maybe sent, also when that request tried it again", async () => {
      // Before, such a job was named as not sent alone, though SQS may have taken
      // it; a replay then made its dead letter visible again as if it had not gone out.
      await open();
      openRecorded();
      // The request that tries the lost entry again reaches SQS, and its answer is lost.
      loseLastEntryOfFirst("SendMessageBatchCommand", async (send) => {
        await send();
        throw Object.assign(new Error("socket hang up"), { code: "ECONNRESET" });
      });
      const sending = queue.send(["a", "b", "c"].map((id) => ({ id, body: id })));
      await expect(sending).rejects.toMatchObject({ name: "SendFailedError", notSent: ["c"], unsure: ["c"] });
      expect((await queue.receive(10, 30_000)).map((m) => m.id).sort()).toEqual(["a", "b", "c"]);
    });

    it("sends the batches after one whose request fails as a whole, and names only that one's jobs as not sent", async () => {
      // Before, the first failing request ended the send, the later batches were never tried,
      // and the error named none of the jobs, sent or not.
      await open();
      openRecorded();
      let calls = 0;
      recording.middlewareStack.add(
        (next, context) => async (args) => {
          if (context.commandName === "SendMessageBatchCommand" && ++calls === 1)
            throw Object.assign(new Error("socket hang up"), { code: "ECONNRESET" });
          return next(args);
        },
        { step: "initialize", name: "hangUpFirstSend" },
      );
      const ids = Array.from({ length: 12 }, (_, i) => `job-${i}`);
      const sending = queue.send(ids.map((id) => ({ id, body: id })));
      await expect(sending).rejects.toThrow(
        /SQS refused 10 of 12 messages: job-0 \(socket hang up\), .*job-9 /,
      );
      await expect(sending).rejects.not.toThrow(/job-1[01]/);
      // As data too, for the notifier to log and count the jobs sent and those not.
      await expect(sending).rejects.toMatchObject({ name: "SendFailedError", notSent: ids.slice(0, 10) });
      // With no answer, SQS may have taken them all the same.
      await expect(sending).rejects.toMatchObject({ unsure: ids.slice(0, 10) });
      const received = await queue.receive(10, 30_000);
      expect(received.map((m) => m.id).sort()).toEqual(["job-10", "job-11"]);
    });

    it("sends what waits for a batch on close", async () => {
      await open();
      recording = createSqsClientForLocal(endpoint);
      queue = createSqsQueue<string>({
        client: recording,
        queueUrl: pair.queueUrl,
        deadLetterQueueUrl: pair.deadLetterQueueUrl,
        batchWindowMs: 60_000,
      });
      await queue.send([{ id: "late", body: "x" }]);
      const [late] = await queue.receive(1, 1000);
      if (!late) throw new Error("nothing received");
      const acked = queue.ack(late);
      await queue.close();
      await acked;
      await sleep(1300);
      expect(await queue.receive(10, 30_000)).toEqual([]);
    });
  });

  it("writes the {id, body} envelope on the wire", async () => {
    await open();
    await queue.send([{ id: "evt.slack", body: "payload" }]);
    const raw = await client.send(new ReceiveMessageCommand({ QueueUrl: pair.queueUrl, WaitTimeSeconds: 0 }));
    expect(JSON.parse(raw.Messages?.[0]?.Body ?? "null")).toEqual({ id: "evt.slack", body: "payload" });
  });
});

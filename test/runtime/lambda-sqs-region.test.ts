/**
 * The Lambda functions' SQS client: signed for the region its queue URL names, not only the
 * function's own (`AWS_REGION`, which Lambda sets and no deployment can change). Each call is
 * recorded as signed and stopped before it is sent: nothing leaves the process.
 */
import { SendMessageCommand, SQSClient } from "@aws-sdk/client-sqs";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { DeliveryJob } from "../../src/core/delivery.js";
import type { ReceivedMessage } from "../../src/core/queue.js";
import { createLambdaRuntime, createLambdaSqsClient } from "../../src/entry/lambda-config.js";

const CREDENTIALS = {
  accessKeyId: "AKIAIOSFODNN7EXAMPLE",
  secretAccessKey: "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
};

afterEach(() => {
  vi.unstubAllEnvs();
  vi.restoreAllMocks();
});

/** The region of a SigV4 `Authorization` header's credential scope. */
const signedRegion = (authorization: unknown) =>
  /Credential=[^/]+\/\d{8}\/([^/]+)\/sqs\/aws4_request/.exec(String(authorization))?.[1];

/** The regions `queueUrl`'s client signs a send for, in a function whose own region is us-east-1. */
async function signedRegionsFor(queueUrl: string): Promise<(string | undefined)[]> {
  vi.stubEnv("AWS_REGION", "us-east-1");
  const sqs = await createLambdaSqsClient({ credentials: CREDENTIALS }, queueUrl);
  const signed: unknown[] = [];
  // The deserialize step runs after the request is signed, just before it would be sent.
  sqs.middlewareStack.add(
    () => async (args) => {
      signed.push((args.request as { headers: Record<string, string> }).headers.authorization);
      throw new Error("recorded, not sent");
    },
    { step: "deserialize", name: "recordSigned" },
  );
  try {
    await expect(sqs.send(new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: "{}" }))).rejects.toThrow(
      "recorded, not sent",
    );
  } finally {
    sqs.destroy();
  }
  return [...new Set(signed.map(signedRegion))];
}

describe("the Lambda functions' SQS client", () => {
  it("signs a call for the region of its queue URL, in another region than the function's", async () => {
    // An HTTP function deployed in us-east-1 with the queue of eu-west-1: the SDK sent each call
    // to the queue URL's host, signed for AWS_REGION, which SQS refuses, so every notification
    // was lost; and Lambda reserves AWS_REGION, so nothing the operator could set made it work.
    expect(await signedRegionsFor("https://sqs.eu-west-1.amazonaws.com/123456789012/hookgate-jobs")).toEqual([
      "eu-west-1",
    ]);
  });

  it("signs a call through a VPC endpoint of another region for the endpoint's region", async () => {
    // The endpoint's host names its region; read as none, the call was signed for the function's.
    expect(
      await signedRegionsFor(
        "https://vpce-0a1b2c3d-4e5f6a7b.sqs.eu-west-1.vpce.amazonaws.com/123456789012/jobs",
      ),
    ).toEqual(["eu-west-1"]);
  });

  it("signs for the function's own region a queue URL that names none (a local server's)", async () => {
    expect(await signedRegionsFor("http://127.0.0.1:9324/000000000000/jobs")).toEqual(["us-east-1"]);
  });

  it("signs the delivery function's calls to its DLQ for the DLQ's region, and those to its queue for the queue's", async () => {
    // One client signed for HOOKGATE_QUEUE_URL's region sent the dead letters too: a DLQ of
    // another region refused every one, each job left for the redrive policy to move, without why.
    vi.stubEnv("AWS_REGION", "us-east-1");
    vi.stubEnv("AWS_ACCESS_KEY_ID", CREDENTIALS.accessKeyId);
    vi.stubEnv("AWS_SECRET_ACCESS_KEY", CREDENTIALS.secretAccessKey);
    const queueUrl = "https://sqs.eu-west-1.amazonaws.com/123456789012/hookgate-jobs";
    const dlqUrl = "https://sqs.us-west-2.amazonaws.com/123456789012/hookgate-dlq";
    const signed = recordingSignedRegions();
    const queue = createLambdaRuntime({
      env: { HOOKGATE_QUEUE_URL: queueUrl, HOOKGATE_DLQ_URL: dlqUrl },
      logger: { log: () => undefined },
    }).queue("consumer");
    const message: ReceivedMessage<DeliveryJob> = {
      id: "job-1",
      body: { id: "job-1", sink: "audit", notification: {} } as unknown as DeliveryJob,
      attempts: 3,
      holds: 0,
      receipt: "receipt-1",
    };
    await expect(queue.deadLetter(message, "HTTP 410")).rejects.toThrow("recorded, not sent");
    await expect(queue.ack(message)).rejects.toThrow("recorded, not sent");
    expect(Object.fromEntries(signed)).toEqual({ [dlqUrl]: "us-west-2", [queueUrl]: "eu-west-1" });
  });
});

/**
 * Each SQS call made meanwhile by any client, recorded as signed and stopped before it is sent:
 * the region its signature is for, by its queue URL.
 */
function recordingSignedRegions(): Map<string, string | undefined> {
  const signed = new Map<string, string | undefined>();
  const recording = new WeakSet<SQSClient>();
  const send = SQSClient.prototype.send as (this: SQSClient, ...args: unknown[]) => Promise<unknown>;
  vi.spyOn(SQSClient.prototype, "send").mockImplementation(function (this: SQSClient, ...args: unknown[]) {
    if (!recording.has(this)) {
      recording.add(this);
      this.middlewareStack.add(
        () => async (call) => {
          const input = call.input as { QueueUrl?: string };
          const headers = (call.request as { headers: Record<string, string> }).headers;
          signed.set(String(input.QueueUrl), signedRegion(headers.authorization));
          throw new Error("recorded, not sent");
        },
        { step: "deserialize", name: "recordSigned" },
      );
    }
    return send.apply(this, args);
  } as never);
  return signed;
}

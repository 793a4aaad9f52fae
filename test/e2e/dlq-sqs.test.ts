/**
 * `hookgate dlq replay` and `drop` on SQS, the built command against a real SQS server on
 * loopback (local-aws-sqs): a replay or drop that stops part way says how many dead letters it
 * sent or deleted first, and a page a replay could not send is visible again at once.
 */
import { writeFileSync } from "node:fs";
import { request, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import {
  CreateQueueCommand,
  GetQueueAttributesCommand,
  ReceiveMessageCommand,
  SendMessageCommand,
  type SQSClient,
} from "@aws-sdk/client-sqs";
import { createSqsServer } from "local-aws-sqs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSqsClientForLocal } from "../../src/adapters/queue/sqs.js";
import { loopbackServer, refusingPort } from "../support/loopback.js";
import { runCli } from "../support/process.js";
import { tempDir, whenDone } from "../support/temp.js";

let server: Server;
let endpoint: string;
let client: SQSClient;
let queues = 0;

beforeAll(async () => {
  server = await createSqsServer({ port: 0, hostname: "127.0.0.1" });
  endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  client = createSqsClientForLocal(endpoint);
});
afterAll(async () => {
  client?.destroy();
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
});

/** A jobs queue (taking messages up to `maximumMessageSize`) and its DLQ, with these dead letters. */
async function queuesWith(letters: readonly string[], maximumMessageSize?: number) {
  const n = ++queues;
  const create = async (name: string, attributes?: Record<string, string>) =>
    (await client.send(new CreateQueueCommand({ QueueName: name, Attributes: attributes }))).QueueUrl ?? "";
  const dlq = await create(`dlq-${n}`);
  const jobs = await create(
    `jobs-${n}`,
    maximumMessageSize ? { MaximumMessageSize: String(maximumMessageSize) } : undefined,
  );
  for (const text of letters) await client.send(new SendMessageCommand({ QueueUrl: dlq, MessageBody: text }));
  const args = ["--sqs-queue-url", jobs, "--sqs-dlq-url", dlq, "--sqs-endpoint", endpoint];
  return {
    args,
    /** What the replay put on the jobs queue, by id. */
    async replayed(): Promise<string[]> {
      const ids: string[] = [];
      for (;;) {
        const got = await client.send(
          new ReceiveMessageCommand({ QueueUrl: jobs, MaxNumberOfMessages: 10, VisibilityTimeout: 60 }),
        );
        if (!got.Messages?.length) return ids.sort();
        ids.push(...got.Messages.map((m) => (JSON.parse(m.Body ?? "{}") as { id: string }).id));
      }
    },
    async visibleDeadLetters(): Promise<string | undefined> {
      const attributes = await client.send(
        new GetQueueAttributesCommand({ QueueUrl: dlq, AttributeNames: ["ApproximateNumberOfMessages"] }),
      );
      return attributes.Attributes?.ApproximateNumberOfMessages;
    },
  };
}

describe("hookgate dlq when SQS throttles", { timeout: 60_000 }, () => {
  // SQS's RequestThrottled (its query code too, at HTTP 403, as the SDK's model gives it) and the
  // AWS JSON protocol's ThrottlingException.
  it.each([
    [403, "RequestThrottled;Sender", "com.amazonaws.sqs#RequestThrottled"],
    [400, "ThrottlingException;Sender", "com.amazon.coral.availability#ThrottlingException"],
  ])(
    "lists the dead letters after a receive throttled with HTTP %i (%s), which the SDK tries again after a pause",
    async (status, queryError, type) => {
      // A list that failed on it would have its user run it again, at once, adding to the load.
      const t = await queuesWith([letter("t1", { sink: "audit" })]);
      let receives = 0;
      const proxy = await loopbackServer((req, res) => {
        if (req.headers["x-amz-target"] === "AmazonSQS.ReceiveMessage" && ++receives === 1) {
          res.writeHead(status, {
            "content-type": "application/x-amz-json-1.0",
            "x-amzn-query-error": queryError,
          });
          res.end(JSON.stringify({ __type: type, message: "Rate exceeded" }));
          return;
        }
        request(`${endpoint}${req.url}`, { method: req.method, headers: req.headers }, (answer) => {
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(res);
        }).end(req.body);
      });
      whenDone(() => proxy.close());
      const args = [...t.args.slice(0, -1), proxy.url];
      const listed = await runCli(["dlq", "list", "--json", ...args]);
      expect(listed.code, listed.stderr).toBe(0);
      expect(listed.stdout).toContain('"t1"');
      expect(receives).toBeGreaterThan(1);
    },
  );
});

describe("hookgate dlq on a queue URL that names no region", { timeout: 60_000 }, () => {
  it("says the region its calls are signed for, AWS_REGION's", async () => {
    // A host that names none (a DNS alias of the SQS endpoint) was signed for AWS_REGION unsaid,
    // and SQS's refusal for a queue of another region named no region.
    const t = await queuesWith([]);
    const [queueUrl = "", dlqUrl = ""] = [t.args[1], t.args[3]];
    const listed = await runCli(["dlq", "list", "--sqs-queue-url", queueUrl, "--sqs-dlq-url", dlqUrl], "", {
      HOME: tempDir("aws-home"),
      AWS_REGION: "eu-west-1",
      AWS_ACCESS_KEY_ID: "test",
      AWS_SECRET_ACCESS_KEY: "test",
    });
    expect(listed.code, listed.stderr).toBe(0);
    // The lines after it are the SDK's own (its notice of the Node versions it will require).
    expect(listed.stderr.split("\n")[0]).toBe(
      `hookgate dlq: ${queueUrl} names no region; its calls are signed for eu-west-1 (AWS_REGION, or the profile's): set AWS_REGION to the queue's if it is another`,
    );
  });
});

const letter = (id: string, body: unknown) =>
  JSON.stringify({ id, body, attempts: 1, error: "HTTP 500", failedAt: 1 });

/**
 * An endpoint in front of the SQS server that passes each request on, except that from the
 * `from`-th SendMessageBatch on it hangs up with no answer: after passing it on (SQS took it) when
 * `forward`, else before.
 */
async function hangingUpOnSends(from: number, forward: boolean): Promise<string> {
  let sends = 0;
  const proxy = await loopbackServer((req, res) => {
    const fails = req.headers["x-amz-target"] === "AmazonSQS.SendMessageBatch" && ++sends >= from;
    if (fails && !forward) return void res.destroy();
    request(`${endpoint}${req.url}`, { method: req.method, headers: req.headers }, (answer) => {
      if (fails) return void res.destroy();
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    }).end(req.body);
  });
  whenDone(() => proxy.close());
  return proxy.url;
}

describe("hookgate dlq replay on SQS", () => {
  it("replays under --policy only the dead letters whose sink the policy has, leaving the others visible", async () => {
    const dir = tempDir("dlq-sqs-policy");
    const policy = join(dir, "policy.json");
    writeFileSync(
      policy,
      JSON.stringify({
        version: 1,
        rules: [],
        sinks: { audit: { type: "webhook", url: "https://hooks.example/h" } },
      }),
    );
    const job = (id: string, sink: string) =>
      letter(id, { id, sink, notification: { eventName: "Stop", event: {} } });
    const t = await queuesWith([
      job("a1", "audit"),
      job("c1", "chat"),
      job("a2", "audit"),
      job("c2", "chat"),
    ]);
    const result = await runCli(["dlq", "replay", "--all", "--policy", policy, ...t.args]);
    expect([result.code, result.stdout]).toEqual([0, "replayed 2 jobs\n"]);
    expect(result.stderr).toContain(
      `hookgate: left 2 dead letters whose sink ${policy} no longer has: "chat" (2);`,
    );
    expect(await t.replayed()).toEqual(["a1", "a2"]);
    const listed = await runCli(["dlq", "list", "--json", ...t.args]);
    expect((JSON.parse(listed.stdout) as { id: string }[]).map((d) => d.id).sort()).toEqual(["c1", "c2"]);
  });

  it("says how many jobs it replayed before a page it could not send stopped it", async () => {
    // Before, the error said why the replay stopped, not that earlier pages had
    // gone out, which a second replay would send again. The jobs queue takes 1 KiB at most: SQS
    // refuses the long dead letter, on whichever page it comes.
    const ids = Array.from({ length: 14 }, (_, i) => `job-${String(i).padStart(2, "0")}`);
    const t = await queuesWith(
      [
        ...ids.slice(0, 12).map((id) => letter(id, id)),
        letter("too-long", "y".repeat(2000)),
        ...ids.slice(12).map((id) => letter(id, id)),
      ],
      1024,
    );
    const result = await runCli(["dlq", "replay", "--all", ...t.args]);
    // On Node 20 the AWS SDK warns on stderr first (README), hence the multiline matches.
    expect(result.code).toBe(1);
    const replayed = await t.replayed();
    expect(replayed.length).toBeGreaterThan(0);
    expect(replayed).not.toContain("too-long");
    expect(result.stderr).toMatch(
      /^hookgate: dlq replay stopped: SQS refused 1 of \d+ messages: too-long \(/m,
    );
    expect(result.stderr).toContain(
      `\nreplayed ${replayed.length} jobs before it stopped (on the queue again`,
    );
    expect(result.stderr).toContain("hookgate dlq drop --id ID");
    // What was not replayed is a dead letter still, listed at once.
    const listed = await runCli(["dlq", "list", "--json", ...t.args]);
    const left = (JSON.parse(listed.stdout) as { id: string }[]).map((d) => d.id).sort();
    expect([...left, ...replayed].sort()).toEqual([...ids, "too-long"].sort());
  });

  it("makes a page it refused before sending it visible again at once, and names the dead letter", async () => {
    // Before, the size check refused the page before any request and the page
    // stayed hidden for the 30 s it is hidden for: a listing right after showed none of it. This
    // dead letter's numbers, written short, are 21 digits each as a job again: over 1 MiB.
    const wide = `{"id":"wide","body":[${Array.from({ length: 175_000 }, () => "1e20").join(",")}]}`;
    const t = await queuesWith([wide, letter("small", "x")]);
    const result = await runCli(["dlq", "replay", "--all", ...t.args]);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(
      /^hookgate: dlq replay stopped: SQS message wide is \d+ bytes, over the 1048576 SQS takes; nothing was sent\nreplayed 0 jobs before it stopped/m,
    );
    expect(await t.replayed()).toEqual([]);
    expect(await t.visibleDeadLetters()).toBe("2");
  });

  it.each([
    ["SQS took it and the answer was lost", true],
    ["it never reached SQS", false],
  ])(
    "says the dead letters of a page whose send got no answer may be on the queue too: %s",
    async (_how, forward) => {
      // Before, the replay said how many it had replayed before, and that the others
      // were still dead letters, to replay again: the page it stopped on may have gone out too.
      const ids = Array.from({ length: 13 }, (_, i) => `job-${String(i).padStart(2, "0")}`);
      const t = await queuesWith(ids.map((id) => letter(id, id)));
      const proxy = await hangingUpOnSends(2, forward);
      const result = await runCli([
        "dlq",
        "replay",
        "--all",
        ...t.args.map((a) => (a === endpoint ? proxy : a)),
      ]);
      expect(result.code).toBe(1);
      expect(result.stderr).toMatch(/^hookgate: dlq replay stopped: .*socket hang up/m);
      expect(result.stderr).toContain(
        "\nreplayed 10 jobs before it stopped (on the queue again: not to be replayed twice; " +
          "and 3 of the page it stopped on may be on the queue too, their send got no answer, " +
          "though they are still dead letters: a replay sends them again);",
      );
      // The SDK sends a request that got no answer again: a job may be on the queue more than once.
      const replayed = [...new Set(await t.replayed())];
      expect(replayed).toHaveLength(forward ? 13 : 10);
      const listed = await runCli(["dlq", "list", "--json", ...t.args]);
      const left = (JSON.parse(listed.stdout) as { id: string }[]).map((d) => d.id).sort();
      expect(left).toHaveLength(3);
      expect(left.every((id) => forward === replayed.includes(id))).toBe(true);
    },
  );
});

describe("hookgate dlq drop on SQS", () => {
  it("lists a DLQ message that is no dead letter (a record the redrive policy moved as it was), and drops it by its id", async () => {
    // The redrive policy moves a record the consumer could not dead-letter itself (no
    // HOOKGATE_DLQ_URL, the DLQ refusing sends) as it came. `list` skipped it: "the dead-letter
    // queue is empty" while the DLQ depth alarm, which says to run `hookgate dlq list`, fired.
    const t = await queuesWith(["not json", letter("evt_1.audit", { id: "evt_1.audit", sink: "audit" })]);
    const listed = await runCli(["dlq", "list", ...t.args]);
    expect(listed.code).toBe(0);
    const id = /^(unreadable-\S+) {2}\(a job that does not parse\) {2}attempts=0 {2}at=\S+\n {2}(.+)$/m.exec(
      listed.stdout,
    );
    expect(id?.[2]).toBe(
      "not a dead letter (body is not JSON): moved by the SQS redrive policy as it came, or sent by something else; it cannot be replayed (hookgate dlq drop --id ID deletes it)",
    );
    expect(listed.stdout).toContain("evt_1.audit  sink=audit");
    const json = JSON.parse((await runCli(["dlq", "list", "--json", ...t.args])).stdout) as {
      id: string;
      body: unknown;
    }[];
    expect(json.find((d) => d.id === id?.[1])?.body).toBe("not json");
    // Not replayed by --all: it is no job.
    expect((await runCli(["dlq", "replay", "--all", ...t.args])).stdout).toBe("replayed 1 job\n");
    const dropped = await runCli(["dlq", "drop", "--id", id?.[1] ?? "", ...t.args]);
    expect([dropped.code, dropped.stdout]).toEqual([0, "dropped 1 job\n"]);
    expect((await runCli(["dlq", "list", ...t.args])).stdout).toBe("the dead-letter queue is empty\n");
  });

  /**
   * `dlq replay --all` of one dead letter through a proxy in front of the SQS server that, as
   * each replayed job is sent, puts `again(body)` on the DLQ (a consumer dead-lettering it at
   * once) while the replay still reads the DLQ; then the DLQ's [id, error] pairs.
   */
  async function replayWhileDeadLettered(again: (messageBody: string) => string): Promise<string[][]> {
    const t = await queuesWith([letter("evt_1.audit", { id: "evt_1.audit", sink: "audit" })]);
    const dlq = t.args[3] ?? "";
    const proxy = await loopbackServer((req, res) => {
      const target = req.headers["x-amz-target"];
      request(`${endpoint}${req.url}`, { method: req.method, headers: req.headers }, (answer) => {
        let text = "";
        answer.on("data", (c) => {
          text += c;
        });
        answer.on("end", async () => {
          if (target === "AmazonSQS.SendMessageBatch") {
            const sent = JSON.parse(req.body) as { Entries: { MessageBody: string }[] };
            for (const entry of sent.Entries) {
              await client.send(
                new SendMessageCommand({ QueueUrl: dlq, MessageBody: again(entry.MessageBody) }),
              );
            }
          }
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          res.end(text);
        });
      }).end(req.body);
    });
    whenDone(() => proxy.close());
    const args = [...t.args.slice(0, 4), "--sqs-endpoint", proxy.url];
    const replayed = await runCli(["dlq", "replay", "--all", ...args]);
    expect([replayed.code, replayed.stdout]).toEqual([0, "replayed 1 job\n"]);
    const listed = JSON.parse((await runCli(["dlq", "list", "--json", ...t.args])).stdout) as {
      id: string;
      error: string;
    }[];
    return listed.map((d) => [d.id, d.error]);
  }

  it("leaves the new dead letter of a replayed job that failed again at once, rather than deleting it as a copy", async () => {
    // A consumer that takes each replayed job at once and dead-letters it again (a sink that
    // still refuses it), while the replay still reads the DLQ: the replay took that new dead
    // letter for a second copy of one it had sent, and deleted it, and the job was gone.
    const listed = await replayWhileDeadLettered((messageBody) => {
      const { id, body } = JSON.parse(messageBody) as { id: string; body: unknown };
      return JSON.stringify({ id, body, attempts: 1, error: "HTTP 400: again", failedAt: Date.now() });
    });
    expect(listed).toEqual([["evt_1.audit", "HTTP 400: again"]]);
  });

  it("leaves a replayed job the redrive policy moved back to the DLQ while the replay still reads it, rather than deleting it as a copy", async () => {
    // A replayed job whose consumer never settles it (a Lambda that times out at each try) is moved
    // by SQS's redrive policy as it was sent: no failedAt, only SQS's SentTimestamp. The replay
    // took it for a second copy of the one it had sent, deleted it, and the job was gone.
    const listed = await replayWhileDeadLettered((messageBody) => messageBody);
    expect(listed).toEqual([
      ["evt_1.audit", "moved by the SQS redrive policy after maxReceiveCount receives"],
    ]);
  });

  it("masks the text of a DLQ message that is no dead letter in list --json, as it masks a job's error", async () => {
    // A record sent to the DLQ by something else, as it came: --json printed its text unmasked.
    const token = "ghp_abcdefghijklmnopqrstuvwxyz0123456789";
    const t = await queuesWith([`curl -H "Authorization: token ${token}" https://example.com`]);
    const listed = await runCli(["dlq", "list", "--json", ...t.args]);
    expect(listed.code).toBe(0);
    const [message] = JSON.parse(listed.stdout) as { id: string; body: unknown }[];
    expect(message?.id).toMatch(/^unreadable-/);
    expect(message?.body).toEqual(expect.stringContaining("https://example.com"));
    expect(listed.stdout).not.toContain(token);
  });

  it("says what to do with a DLQ message that is no dead letter when its id from `list` is given to replay", async () => {
    const t = await queuesWith(["not json", letter("evt_1.audit", { id: "evt_1.audit", sink: "audit" })]);
    const listed = JSON.parse((await runCli(["dlq", "list", "--json", ...t.args])).stdout) as {
      id: string;
    }[];
    const id = listed.find((d) => d.id.startsWith("unreadable-"))?.id ?? "";
    expect(id).not.toBe("");
    // It said "1 of the ids given is not a dead letter: see hookgate dlq list", where it is listed.
    const replayed = await runCli(["dlq", "replay", "--id", id, "--id", "evt_1.audit", ...t.args]);
    expect([replayed.code, replayed.stdout]).toEqual([1, "replayed 1 job\n"]);
    expect(replayed.stderr).toContain(
      `${id} is a message on the DLQ that is no job (hookgate dlq list shows its text): it cannot be replayed; hookgate dlq drop --id ${id} deletes it\n`,
    );
    expect(replayed.stderr).not.toContain("not a dead letter");
    expect(await t.replayed()).toEqual(["evt_1.audit"]);
    // Still there, to be dropped.
    const left = JSON.parse((await runCli(["dlq", "list", "--json", ...t.args])).stdout) as { id: string }[];
    expect(left.map((d) => d.id)).toEqual([id]);
  });

  it("names each id given that is no dead letter, from what its one pass over the DLQ read", async () => {
    // It said "2 of the ids given are not a dead letter" and left the user to find which.
    const t = await queuesWith([letter("evt_1.audit", "a"), letter("evt_2.audit", "b")]);
    const args = ["--id", "evt_9.audit", "--id", "evt_1.audit", "--id", "evt_7.chat", ...t.args];
    const dropped = await runCli(["dlq", "drop", ...args]);
    expect([dropped.code, dropped.stdout]).toEqual([1, "dropped 1 job\n"]);
    expect(dropped.stderr).toContain(
      "\n2 of the ids given are not dead letters (mistyped, or replayed or dropped already): evt_9.audit, evt_7.chat; see hookgate dlq list\n",
    );
    const replayed = await runCli(["dlq", "replay", ...args]);
    expect([replayed.code, replayed.stdout]).toEqual([1, "replayed 0 jobs\n"]);
    expect(replayed.stderr).toContain(
      "\n3 of the ids given are not dead letters (mistyped, or replayed or dropped already): evt_9.audit, evt_1.audit, evt_7.chat; see hookgate dlq list\n",
    );
    // The others stay, visible at once.
    const left = JSON.parse((await runCli(["dlq", "list", "--json", ...t.args])).stdout) as { id: string }[];
    expect(left.map((d) => d.id)).toEqual(["evt_2.audit"]);
  });

  it("names a replay's id of a message that is no job as no dead letter when the DLQ holds no such message", async () => {
    // A mistyped or dropped one: it said the message was on the DLQ, to be dropped, where a drop
    // of it then found nothing.
    const t = await queuesWith(["not json"]);
    const id = "unreadable-00000000-0000-0000-0000-000000000000";
    const replayed = await runCli(["dlq", "replay", "--id", id, ...t.args]);
    expect([replayed.code, replayed.stdout]).toEqual([1, "replayed 0 jobs\n"]);
    expect(replayed.stderr).toContain(
      `1 of the ids given is not a dead letter (mistyped, or replayed or dropped already): ${id}; see hookgate dlq list\n`,
    );
    expect(replayed.stderr).not.toContain("is a message on the DLQ that is no job");
  });

  it("says how many jobs it dropped when it stops, here before its first page", async () => {
    // Before, a drop that stopped said only why, as replay once did; a DLQ URL
    // that names no queue stops it at its first receive.
    const t = await queuesWith([]);
    const args = t.args.map((a) => (a.includes("/dlq-") ? `${a}-missing` : a));
    const result = await runCli(["dlq", "drop", "--all", ...args]);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^hookgate: dlq drop stopped: .+\ndropped 0 jobs before it stopped;/m);
    // Stopped at a receive, no page was being deleted: none of it may be gone.
    expect(result.stderr).not.toContain("may be gone");
    expect(result.stderr).toContain("Fix what the error names and drop again.");
  });
});

describe("hookgate dlq against an AWS queue URL, with no AWS configuration", () => {
  // No profile, no keys, no region, and no instance metadata to ask: nothing goes on the network.
  const bare = () => ({ HOME: tempDir("aws-home"), AWS_EC2_METADATA_DISABLED: "true" });
  const url = (region: string, name: string) => `https://sqs.${region}.amazonaws.com/123456789012/${name}`;

  it("signs for the region the queue URL names, and says which credentials to set when it finds none", async () => {
    // Before, it said only "Region is missing", then "Could not load credentials from any providers".
    const args = ["--sqs-queue-url", url("eu-west-1", "jobs"), "--sqs-dlq-url", url("eu-west-1", "dlq")];
    const result = await runCli(["dlq", "list", ...args], "", bare());
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(
      "Could not load credentials from any providers: set AWS_PROFILE to a profile of ~/.aws/config",
    );
    expect(result.stderr).toContain("or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY");
  });

  it("says to set AWS_REGION for a queue URL that names no region", async () => {
    const args = [
      "--sqs-queue-url",
      "https://sqs.example.test/1/jobs",
      "--sqs-dlq-url",
      "https://sqs.example.test/1/dlq",
    ];
    const result = await runCli(["dlq", "list", ...args], "", bare());
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(
      "Region is missing: https://sqs.example.test/1/jobs names none; set AWS_REGION to the queue's",
    );
  });
});

describe("hookgate dlq on a queue and a DLQ in two regions", { timeout: 60_000 }, () => {
  /**
   * A front of the SQS server on loopback that records, by queue name, the regions each call was
   * signed for; AWS's hosts of each region resolved to it, as /etc/hosts would; and the
   * environment of a shell with keys and those hosts.
   */
  async function signingFront() {
    const signed = new Map<string, Set<string | undefined>>();
    const front = await loopbackServer((req, res) => {
      const queueUrl = (JSON.parse(req.body || "{}") as { QueueUrl?: string }).QueueUrl ?? "";
      const name = queueUrl.split("/").pop() ?? "";
      const region = /Credential=[^/]+\/\d{8}\/([^/]+)\//.exec(String(req.headers.authorization))?.[1];
      signed.set(name, (signed.get(name) ?? new Set()).add(region));
      request(`${endpoint}${req.url}`, { method: req.method, headers: req.headers }, (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      }).end(req.body);
    });
    whenDone(() => front.close());
    const hosts = join(tempDir("aws-hosts"), "aws-hosts.mjs");
    writeFileSync(
      hosts,
      [
        'import dns from "node:dns";',
        "const lookup = dns.lookup;",
        'dns.lookup = (host, ...rest) => lookup(/\\.amazonaws\\.com$/i.test(host) ? "127.0.0.1" : host, ...rest);',
        "",
      ].join("\n"),
    );
    return {
      /** The regions each queue's calls were signed for, by the last part of its URL. */
      signed: (urls: readonly string[]) =>
        Object.fromEntries(
          urls.map((url) => {
            const name = new URL(url).pathname.split("/").pop() ?? "";
            return [name, [...(signed.get(name) ?? [])]];
          }),
        ),
      /** `url`'s queue at the front, by a host that names `region`, or by its address for none. */
      at: (region: string | undefined, url: string) =>
        `http://${region ? `sqs.${region}.amazonaws.com` : "127.0.0.1"}:${front.port}${new URL(url).pathname}`,
      env: {
        HOME: tempDir("aws-home"),
        AWS_EC2_METADATA_DISABLED: "true",
        AWS_ACCESS_KEY_ID: "AKIAIOSFODNN7EXAMPLE",
        AWS_SECRET_ACCESS_KEY: "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
        NODE_OPTIONS: `--import ${pathToFileURL(hosts).href}`,
      },
    };
  }

  it("replays, its calls to the DLQ signed for the DLQ's region and those to the queue for the queue's", async () => {
    // The delivery function writes dead letters to a DLQ of another region with a client of its
    // own (lambda-config.ts); `dlq` refused such a pair, so its dead letters could be neither
    // listed nor replayed.
    const t = await queuesWith([letter("r1", { id: "r1", sink: "audit" })]);
    const front = await signingFront();
    const [jobs, dlq] = [t.args[1] ?? "", t.args[3] ?? ""];
    const args = [
      "--sqs-queue-url",
      front.at("eu-west-1", jobs),
      "--sqs-dlq-url",
      front.at("us-west-2", dlq),
    ];
    const result = await runCli(["dlq", "replay", "--all", ...args], "", front.env);
    expect([result.code, result.stdout], result.stderr).toEqual([0, "replayed 1 job\n"]);
    expect(await t.replayed()).toEqual(["r1"]);
    expect(front.signed([dlq, jobs])).toEqual({
      [new URL(dlq).pathname.split("/").pop() ?? ""]: ["us-west-2"],
      [new URL(jobs).pathname.split("/").pop() ?? ""]: ["eu-west-1"],
    });
  });

  it("signs the calls to a DLQ whose URL names no region for AWS_REGION, as the delivery function does, and says so", async () => {
    // They were signed for the queue's region, which the delivery function does not sign its dead
    // letters for, and nothing was said of the DLQ, where the same of a queue is.
    const t = await queuesWith([letter("n1", { id: "n1", sink: "audit" })]);
    const front = await signingFront();
    const [jobs, dlq] = [t.args[1] ?? "", t.args[3] ?? ""];
    const dlqUrl = front.at(undefined, dlq);
    const args = ["--sqs-queue-url", front.at("eu-west-1", jobs), "--sqs-dlq-url", dlqUrl];
    const result = await runCli(["dlq", "replay", "--all", ...args], "", {
      ...front.env,
      AWS_REGION: "us-west-2",
    });
    expect([result.code, result.stdout], result.stderr).toEqual([0, "replayed 1 job\n"]);
    expect(result.stderr.split("\n")[0]).toBe(
      `hookgate dlq: ${dlqUrl} names no region; its calls are signed for us-west-2 (AWS_REGION, or the profile's): set AWS_REGION to the DLQ's if it is another`,
    );
    expect(front.signed([dlq, jobs])).toEqual({
      [new URL(dlq).pathname.split("/").pop() ?? ""]: ["us-west-2"],
      [new URL(jobs).pathname.split("/").pop() ?? ""]: ["eu-west-1"],
    });
  });
});

describe("hookgate dlq on a queue URL whose host is not its region's SQS endpoint", () => {
  // The AWS SDK warns, by itself, that it sends the calls to the queue URL's host, naming the URL
  // as given: with the user name and password it carried.
  it("says the SDK's warning without the queue URL's user and password", async () => {
    const t = await queuesWith([letter("w1", { id: "w1" })]);
    const withUserinfo = (url: string) => url.replace("://", "://local:hunter2@");
    const [jobs, dlq] = [t.args[1] ?? "", t.args[3] ?? ""];
    const env = {
      HOME: tempDir("aws-home"),
      AWS_EC2_METADATA_DISABLED: "true",
      AWS_REGION: "us-east-1",
      AWS_ACCESS_KEY_ID: "local",
      AWS_SECRET_ACCESS_KEY: "local",
    };
    const args = ["--sqs-queue-url", withUserinfo(jobs), "--sqs-dlq-url", withUserinfo(dlq), "--json"];
    const result = await runCli(["dlq", "list", ...args], "", env);
    expect(result.code, result.stderr).toBe(0);
    expect((JSON.parse(result.stdout) as { id: string }[]).map((d) => d.id)).toEqual(["w1"]);
    expect(result.stderr).toContain(`QueueUrl=${dlq} differs from SQSClient resolved endpoint=`);
    expect(result.stderr).not.toContain("hunter2");
  });
});

describe("hookgate dlq against an SQS endpoint that refuses the connection", () => {
  // Before, both said only "connect ECONNREFUSED 127.0.0.1:PORT": not that it was SQS, nor which URL.
  it("names the --sqs-endpoint, without its user and password, and what to check", async () => {
    const port = await refusingPort();
    const queue = (name: string) => `http://127.0.0.1:${port}/000000000000/${name}`;
    const args = ["--sqs-queue-url", queue("jobs"), "--sqs-dlq-url", queue("dlq")];
    const endpoint = `http://local:hunter2@127.0.0.1:${port}`;
    const result = await runCli(["dlq", "list", ...args, "--sqs-endpoint", endpoint]);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(
      `\nhookgate: the SQS endpoint http://127.0.0.1:${port} refused the connection (connect ECONNREFUSED 127.0.0.1:${port}): check that this is the SQS server's address, and that it is running\n`,
    );
    expect(result.stderr).not.toContain("hunter2");
  });

  it("names the queue URL's host, where the calls go with no --sqs-endpoint, in a replay that stops", async () => {
    const port = await refusingPort();
    const queue = (name: string) => `http://127.0.0.1:${port}/000000000000/${name}`;
    const env = {
      HOME: tempDir("aws-home"),
      AWS_EC2_METADATA_DISABLED: "true",
      AWS_REGION: "eu-west-1",
      AWS_ACCESS_KEY_ID: "AKIAIOSFODNN7EXAMPLE",
      AWS_SECRET_ACCESS_KEY: "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
    };
    const args = ["--sqs-queue-url", queue("jobs"), "--sqs-dlq-url", queue("dlq")];
    const result = await runCli(["dlq", "replay", "--all", ...args], "", env);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(
      `\nhookgate: dlq replay stopped: the SQS endpoint http://127.0.0.1:${port} refused the connection (connect ECONNREFUSED 127.0.0.1:${port}): check the host of the queue URL, and this machine's network (a proxy, a VPN)\nreplayed 0 jobs before it stopped`,
    );
  });
});

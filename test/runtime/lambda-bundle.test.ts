/**
 * The Lambda bundle as Lambda loads it: scripts/build-lambda.mjs runs first (into a temp dir),
 * then each handler is imported from its .mjs file by a plain Node process and invoked with a
 * fixture event: the HTTP handler puts a notify job on SQS (local-aws-sqs) through the lazily
 * loaded AWS SDK chunk, and the SQS handler delivers it through the lazily loaded undici chunk.
 * The regex and glob engines are lazy chunks too, loaded for a policy that has such patterns.
 */
import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import { cpSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { promisify } from "node:util";
import { CreateQueueCommand, ReceiveMessageCommand, type SQSClient } from "@aws-sdk/client-sqs";
import type { SQSBatchResponse, SQSEvent } from "aws-lambda";
import { createSqsServer } from "local-aws-sqs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSqsClientForLocal } from "../../src/adapters/queue/sqs.js";
import { loopbackServer } from "../support/loopback.js";
import { ROOT } from "../support/process.js";
import { type WebhookReceiver, webhookReceiver } from "../support/receiver.js";
import { tempDir } from "../support/temp.js";

const run = promisify(execFile);
const SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
const BAKED_POLICY = JSON.stringify({
  version: 1,
  rules: [{ id: "baked", on: "PreToolUse", decide: "deny", reason: "from the bundle" }],
});
const fixture = (name: string) => readFileSync(join(ROOT, "test/fixtures/lambda", name), "utf8");

let outdir: string;
let bakedOutdir: string;
let inputs: string;
let buildOutput: string;
let server: Server;
let endpoint: string;
let client: SQSClient;
let receiver: WebhookReceiver;

beforeAll(async () => {
  outdir = tempDir("lambda-bundle");
  bakedOutdir = tempDir("lambda-baked");
  inputs = tempDir("lambda-policy");
  const policyFile = join(inputs, "policy.json");
  writeFileSync(policyFile, BAKED_POLICY);
  // The builds run first: every test here reads their output.
  const [build] = await Promise.all([
    run(process.execPath, ["scripts/build-lambda.mjs", "--outdir", outdir], { cwd: ROOT }),
    run(process.execPath, ["scripts/build-lambda.mjs", "--outdir", bakedOutdir], {
      cwd: ROOT,
      env: { ...process.env, HOOKGATE_POLICY_FILE: policyFile },
    }),
  ]);
  buildOutput = build.stdout;
  server = await createSqsServer({ port: 0, hostname: "127.0.0.1" });
  endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  client = createSqsClientForLocal(endpoint);
  receiver = await webhookReceiver(SECRET);
}, 60_000);
afterAll(async () => {
  client?.destroy();
  await receiver?.close();
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
});

/** The files a bundle file loads before its code runs: its static imports, transitively. */
function staticClosure(file: string, seen = new Set<string>()): Set<string> {
  if (seen.has(file)) return seen;
  seen.add(file);
  const text = readFileSync(file, "utf8");
  for (const m of text.matchAll(/(?:import|export)\s*(?:[\w*{}\s,$]*?from\s*)?"(\.{1,2}\/[^"]+)"/g))
    staticClosure(join(file, "..", m[1] ?? ""), seen);
  return seen;
}

/** Imports a handler from the bundle in a fresh Node process, as the Lambda runtime does, and invokes it. */
async function invoke(
  handlerFile: string,
  event: unknown,
  env: Record<string, string>,
  dir = outdir,
): Promise<unknown> {
  return (await invokeLogged(handlerFile, event, env, dir)).result;
}

/** invoke, with the log lines the handler wrote on stdout. */
async function invokeLogged(
  handlerFile: string,
  event: unknown,
  env: Record<string, string>,
  dir = outdir,
): Promise<{ result: unknown; stdout: string }> {
  const script = `
    const { handler } = await import(process.env.BUNDLE);
    const result = await handler(JSON.parse(process.env.EVENT), { getRemainingTimeInMillis: () => Number(process.env.LEFT_MS) });
    process.stderr.write("RESULT " + JSON.stringify(result) + "\\n", () => process.exit(0));
  `;
  const { stdout, stderr } = await run(process.execPath, ["--input-type=module", "-e", script], {
    cwd: dir,
    env: {
      PATH: process.env.PATH ?? "",
      BUNDLE: join(dir, handlerFile),
      // The function's timeout in serverless.yml: the delivery function starts no sink call it
      // could not wait for (15 s and the settle).
      LEFT_MS: handlerFile === "lambda-sqs.mjs" ? "60000" : "10000",
      EVENT: JSON.stringify(event),
      AWS_REGION: "us-east-1",
      AWS_ACCESS_KEY_ID: "local",
      AWS_SECRET_ACCESS_KEY: "local",
      AWS_ENDPOINT_URL_SQS: endpoint,
      AWS_EC2_METADATA_DISABLED: "true",
      ...env,
    },
    timeout: 20_000,
  });
  const line = stderr.split("\n").find((l) => l.startsWith("RESULT "));
  if (!line) throw new Error(`no result from ${handlerFile}:\n${stderr}`);
  return { result: JSON.parse(line.slice("RESULT ".length)), stdout };
}

describe("the Lambda bundle", () => {
  it("reports raw and gzip sizes for each handler's cold start", () => {
    expect(buildOutput).toMatch(/lambda-http\.mjs: cold start [\d.]+ KiB \([\d.]+ KiB gzip\)/);
    expect(buildOutput).toMatch(/lambda-sqs\.mjs: cold start [\d.]+ KiB \([\d.]+ KiB gzip\)/);
  });

  it("loads neither the AWS SDK, undici, the pattern engines, the Bash splitter, remote actions, the notifier, Hono's app, the delivery jobs' code nor the token check at cold start, but ships them in lazy chunks", () => {
    // Strings only each package's code holds: undici's error codes, SQS's JSON-protocol target,
    // re2js's and minimatch's error messages, a wrapper the splitter reads and shell-quote's escapes;
    // and lines of hookgate's remote actions and notifier, which the HTTP handler imports with the
    // first event that needs them (src/entry/lazy-actions.ts), and of Hono's router, which only
    // the routes other than the hook routes need (lambda-http.ts `adapt`), of the delivery
    // jobs' code, which comes with the SQS client (lambda-config.ts `queue`), and of the token
    // check, which only a policy with `auth` needs (core/auth.ts `authenticate`).
    const markers = {
      undici: "UND_ERR_",
      "@aws-sdk/client-sqs": "AmazonSQS",
      re2js: "invalid nested repetition operator",
      minimatch: "pattern is too long",
      "core/shell-command.ts": "systemd-run",
      "shell-quote": "abeEfnrtv",
      "better-sqlite3": "better_sqlite3",
    };
    const httpMarkers = {
      "app/remote-actions.ts": "no answer before the gateway stopped",
      "app/notify.ts": "the notification goes out without it",
      "hono (http/app.ts)": "Context is not finalized",
      "core/delivery.ts": "envelope body is not a delivery job",
      "core/auth-token.ts": 'as a "sha256" itself',
    };
    const textOf = (files: Iterable<string>) => [...files].map((f) => readFileSync(f, "utf8")).join("\n");
    for (const handler of ["lambda-http.mjs", "lambda-sqs.mjs"]) {
      const cold = textOf(staticClosure(join(outdir, handler)));
      for (const [name, marker] of Object.entries(markers))
        expect(cold.includes(marker), `${handler} loads ${name} at cold start`).toBe(false);
    }
    const httpCold = textOf(staticClosure(join(outdir, "lambda-http.mjs")));
    for (const [name, marker] of Object.entries(httpMarkers))
      expect(httpCold.includes(marker), `lambda-http.mjs loads ${name} at cold start`).toBe(false);
    const chunks = readdirSync(join(outdir, "chunks")).map((f) => join(outdir, "chunks", f));
    const shipped = textOf(chunks);
    expect(shipped.includes(markers.undici)).toBe(true);
    expect(shipped.includes(markers["@aws-sdk/client-sqs"])).toBe(true);
    expect(shipped.includes(markers.re2js)).toBe(true);
    expect(shipped.includes(markers.minimatch)).toBe(true);
    expect(shipped.includes(markers["core/shell-command.ts"])).toBe(true);
    expect(shipped.includes(markers["shell-quote"])).toBe(true);
    expect(shipped.includes(markers["better-sqlite3"])).toBe(false);
    for (const marker of Object.values(httpMarkers)) expect(shipped.includes(marker)).toBe(true);
  });

  it("answers a hook and enqueues its job, then delivers the job from an SQS batch", async () => {
    const queueUrl = (await client.send(new CreateQueueCommand({ QueueName: "bundle-jobs" }))).QueueUrl ?? "";
    const dlqUrl = (await client.send(new CreateQueueCommand({ QueueName: "bundle-dlq" }))).QueueUrl ?? "";
    const policy = JSON.stringify({
      version: 1,
      egress: { allowCidrs: ["127.0.0.1/32"] },
      rules: [{ id: "audit", on: "PreToolUse", decide: "deny", reason: "audited", notify: ["audit"] }],
      sinks: { audit: { type: "webhook", url: receiver.url, secret: "env:WHSEC" } },
    });
    const env = {
      HOOKGATE_POLICY: policy,
      HOOKGATE_QUEUE_URL: queueUrl,
      HOOKGATE_DLQ_URL: dlqUrl,
      WHSEC: SECRET,
    };

    const answer = (await invoke(
      "lambda-http.mjs",
      JSON.parse(fixture("http-api-v2-pre-tool-use-base64.json")),
      env,
    )) as { statusCode: number; body: string };
    expect(answer.statusCode).toBe(200);
    expect(JSON.parse(answer.body).hookSpecificOutput.permissionDecision).toBe("deny");

    const received = await client.send(
      new ReceiveMessageCommand({ QueueUrl: queueUrl, WaitTimeSeconds: 0, AttributeNames: ["All"] }),
    );
    const message = received.Messages?.[0];
    expect(message).toBeDefined();
    const template = (JSON.parse(fixture("sqs-event.json")) as SQSEvent).Records[0];
    const batch: SQSEvent = {
      Records: [
        {
          ...(template as SQSEvent["Records"][number]),
          messageId: message?.MessageId ?? "",
          receiptHandle: message?.ReceiptHandle ?? "",
          body: message?.Body ?? "",
        },
      ],
    };
    const response = (await invoke("lambda-sqs.mjs", batch, env)) as SQSBatchResponse;
    expect(response).toEqual({ batchItemFailures: [] });
    expect(receiver.unique).toHaveLength(1);
    expect(receiver.badSignatures).toBe(0);
  });

  it("refuses a sink on loopback, where Lambda's Runtime API listens: nothing reaches it, the job is dead-lettered", async () => {
    // The bundled guard, undici and its connector in lazy chunks: a sink at 127.0.0.1 (the Runtime
    // API is 127.0.0.1:9001) under a policy that opens no range is refused before any connection.
    const queueUrl =
      (await client.send(new CreateQueueCommand({ QueueName: "bundle-loopback" }))).QueueUrl ?? "";
    const dlqUrl =
      (await client.send(new CreateQueueCommand({ QueueName: "bundle-loopback-dlq" }))).QueueUrl ?? "";
    const canary = await loopbackServer((_req, res) => res.end("reached"));
    try {
      const policy = JSON.stringify({
        version: 1,
        rules: [{ id: "audit", on: "PreToolUse", decide: "deny", reason: "audited", notify: ["runtime"] }],
        sinks: { runtime: { type: "webhook", url: `${canary.url}/2018-06-01/runtime/invocation/next` } },
      });
      const env = { HOOKGATE_POLICY: policy, HOOKGATE_QUEUE_URL: queueUrl, HOOKGATE_DLQ_URL: dlqUrl };
      await invoke("lambda-http.mjs", JSON.parse(fixture("http-api-v2-pre-tool-use-base64.json")), env);
      const received = await client.send(
        new ReceiveMessageCommand({ QueueUrl: queueUrl, WaitTimeSeconds: 0 }),
      );
      const message = received.Messages?.[0];
      expect(message).toBeDefined();
      const template = (JSON.parse(fixture("sqs-event.json")) as SQSEvent).Records[0];
      const record = {
        ...(template as SQSEvent["Records"][number]),
        messageId: message?.MessageId ?? "",
        receiptHandle: message?.ReceiptHandle ?? "",
        body: message?.Body ?? "",
      };
      expect(await invoke("lambda-sqs.mjs", { Records: [record] }, env)).toEqual({ batchItemFailures: [] });
      const dead = await client.send(new ReceiveMessageCommand({ QueueUrl: dlqUrl, WaitTimeSeconds: 0 }));
      expect(dead.Messages?.[0]?.Body).toContain("EGRESS_BLOCKED_ADDRESS");
      expect(canary.received).toEqual([]);
    } finally {
      await canary.close();
    }
  });

  it("loads the pattern engines and the Bash splitter for a policy with a regex matcher, a path glob and a Bash(…) rule", async () => {
    const policy = JSON.stringify({
      version: 1,
      rules: [
        {
          id: "shell",
          on: "PreToolUse",
          matcher: "Ba.*",
          if: "Bash(rm -rf *)",
          decide: "deny",
          reason: "regex",
        },
        { id: "env", on: "PreToolUse", if: "Read(**/.env)", decide: "deny", reason: "glob" },
      ],
    });
    const event = JSON.parse(fixture("http-api-v2-pre-tool-use.json")) as {
      body: string;
      headers: Record<string, string>;
    };
    const body = JSON.parse(event.body) as { tool_input: Record<string, unknown> };
    body.tool_input = { command: "rm -rf /tmp/x" };
    event.body = JSON.stringify(body);
    event.headers["content-length"] = String(Buffer.byteLength(event.body));
    const answer = (await invoke("lambda-http.mjs", event, { HOOKGATE_POLICY: policy })) as {
      statusCode: number;
      body: string;
    };
    expect(answer.statusCode).toBe(200);
    expect(JSON.parse(answer.body).hookSpecificOutput.permissionDecisionReason).toBe("regex");
  });

  it("checks a policy's tokens with the token check's chunk, loaded with the first request", async () => {
    // The fixture sends "Bearer harness-secret-123".
    const policy = (sha256: string) =>
      JSON.stringify({
        version: 1,
        auth: { tokens: [{ team: "platform", sha256 }] },
        rules: [{ id: "all", on: "PreToolUse", teams: ["platform"], decide: "deny", reason: "platform's" }],
      });
    const event = JSON.parse(fixture("http-api-v2-pre-tool-use.json"));
    const answerOf = async (sha256: string) => {
      const answer = (await invoke("lambda-http.mjs", event, { HOOKGATE_POLICY: policy(sha256) })) as {
        statusCode: number;
        headers: Record<string, string>;
        body: string;
      };
      const output = JSON.parse(answer.body).hookSpecificOutput;
      return [answer.statusCode, answer.headers["x-hookgate-error"], output.permissionDecisionReason];
    };
    const known = createHash("sha256").update("harness-secret-123").digest("hex");
    expect(await answerOf(known)).toEqual([200, undefined, "platform's"]);
    const other = createHash("sha256").update("another-token").digest("hex");
    const [status, error, reason] = await answerOf(other);
    expect([status, error]).toEqual([200, "AUTH_UNKNOWN_TOKEN"]);
    expect(reason).toContain("the hook's token is not one this gateway knows: check HOOKGATE_TOKEN");
  });

  it("answers a hook on its direct path without loading Node's fetch (undici), which a cold start would parse for nothing", async () => {
    // Node loads its fetch with the first Headers, Request or Response a process makes: the
    // check of an event's headers made one, some 20–45 ms of the first decision's cold start.
    const script = `
      const { handler } = await import(process.env.BUNDLE);
      const result = await handler(JSON.parse(process.env.EVENT), { getRemainingTimeInMillis: () => 10000 });
      const fetchLoaded = process.moduleLoadList.some((m) => m.includes("undici"));
      process.stderr.write("RESULT " + JSON.stringify({ result, fetchLoaded }) + "\\n", () => process.exit(0));
    `;
    const { stderr } = await run(process.execPath, ["--input-type=module", "-e", script], {
      cwd: outdir,
      env: {
        PATH: process.env.PATH ?? "",
        BUNDLE: join(outdir, "lambda-http.mjs"),
        EVENT: fixture("http-api-v2-pre-tool-use.json"),
        HOOKGATE_POLICY: JSON.stringify({
          version: 1,
          rules: [{ id: "all", on: "PreToolUse", decide: "deny", reason: "denied" }],
        }),
      },
      timeout: 20_000,
    });
    const line = stderr.split("\n").find((l) => l.startsWith("RESULT ")) ?? "RESULT {}";
    const { result, fetchLoaded } = JSON.parse(line.slice("RESULT ".length));
    expect(JSON.parse(result.body).hookSpecificOutput.permissionDecisionReason).toBe("denied");
    expect(fetchLoaded).toBe(false);
  });

  it("answers a notify event whose notify path is not shipped, and logs the failed enqueue with its sinks", async () => {
    // The bundle without the chunk that holds the notifier, which the HTTP handler imports with
    // the first event that has notify work.
    const dir = tempDir("lambda-no-notifier");
    cpSync(outdir, dir, { recursive: true });
    const chunks = join(dir, "chunks");
    const notifier = readdirSync(chunks).filter((f) =>
      readFileSync(join(chunks, f), "utf8").includes("the notification goes out without it"),
    );
    expect(notifier).toHaveLength(1);
    rmSync(join(chunks, notifier[0] ?? ""));
    const policy = JSON.stringify({
      version: 1,
      rules: [{ id: "audit", on: "PreToolUse", decide: "deny", reason: "audited", notify: ["audit"] }],
      sinks: { audit: { type: "webhook", url: "https://hooks.example.com/audit", secret: "env:WHSEC" } },
    });
    const { result, stdout } = await invokeLogged(
      "lambda-http.mjs",
      JSON.parse(fixture("http-api-v2-pre-tool-use.json")),
      { HOOKGATE_POLICY: policy, HOOKGATE_QUEUE_URL: `${endpoint}/000000000000/absent`, WHSEC: SECRET },
      dir,
    );
    const answer = result as { statusCode: number; body: string };
    expect(answer.statusCode).toBe(200);
    expect(JSON.parse(answer.body).hookSpecificOutput).toMatchObject({
      permissionDecision: "deny",
      permissionDecisionReason: "audited",
    });
    const line = stdout.split("\n").find((l) => l.includes("enqueue failed"));
    expect(JSON.parse(line ?? "{}")).toMatchObject({
      level: "error",
      msg: "enqueue failed; the decision was answered anyway",
      event: "PreToolUse",
      sinks: ["audit"],
      error: expect.stringContaining(notifier[0] ?? "?"),
    });
  });

  it("answers from a policy baked in at build time when HOOKGATE_POLICY is unset", async () => {
    const answer = (await invoke(
      "lambda-http.mjs",
      JSON.parse(fixture("function-url-pre-tool-use.json")),
      {},
      bakedOutdir,
    )) as {
      body: string;
    };
    expect(JSON.parse(answer.body).hookSpecificOutput.permissionDecisionReason).toBe("from the bundle");
  });

  /** The exit code and stderr of a build refusing to bake in `policyFile`. */
  async function refusedBuild(policyFile: string): Promise<{ code: unknown; stderr: string }> {
    try {
      await run(process.execPath, ["scripts/build-lambda.mjs", "--outdir", join(bakedOutdir, "never")], {
        cwd: ROOT,
        env: { ...process.env, HOOKGATE_POLICY_FILE: policyFile },
      });
    } catch (e) {
      const failed = e as { code?: unknown; stderr?: string };
      return { code: failed.code, stderr: failed.stderr ?? "" };
    }
    throw new Error(`the build baked in ${policyFile}`);
  }

  it("refuses an --outdir holding files no build wrote, and touches none of them", async () => {
    // The build empties its folder first: given a folder of the user's (a home folder, `/`), it
    // deleted all of it.
    const theirs = tempDir("lambda-theirs");
    writeFileSync(join(theirs, "notes.txt"), "mine");
    const refused = await run(process.execPath, ["scripts/build-lambda.mjs", "--outdir", theirs], {
      cwd: ROOT,
    }).then(
      () => undefined,
      (e: { code?: unknown; stderr?: string }) => e,
    );
    expect(refused?.code).toBe(1);
    expect(refused?.stderr).toBe(
      `build-lambda: --outdir ${theirs} holds files no build of it wrote (notes.txt), and the build empties its folder first: give a new or empty folder\n`,
    );
    expect(readFileSync(join(theirs, "notes.txt"), "utf8")).toBe("mine");
  });

  it("empties a folder an earlier build of it wrote, and builds into it", async () => {
    const earlier = tempDir("lambda-earlier");
    writeFileSync(join(earlier, "lambda-http.mjs"), "an earlier build");
    writeFileSync(join(earlier, "chunk-old.mjs"), "an earlier chunk");
    await run(process.execPath, ["scripts/build-lambda.mjs", "--outdir", earlier], { cwd: ROOT });
    expect(readdirSync(earlier)).not.toContain("chunk-old.mjs");
    expect(readFileSync(join(earlier, "lambda-http.mjs"), "utf8")).not.toBe("an earlier build");
  });

  it("refuses to bake a policy file that is not JSON, saying so alone", async () => {
    const bad = join(inputs, "bad.json");
    writeFileSync(bad, "{ not json");
    const { code, stderr } = await refusedBuild(bad);
    expect(code).toBe(1);
    // One line: no stack trace pointing into the script, where the fix is in the file.
    // The fix is in the file: hookgate check names its line and column, where V8 gives an offset.
    expect(stderr).toMatch(
      /^build-lambda: HOOKGATE_POLICY_FILE .+ is not JSON: .+; hookgate check says where\n$/,
    );
    expect(stderr).toContain(`HOOKGATE_POLICY_FILE ${bad} is not JSON`);
  });

  it("says a policy file it cannot find cannot be read, alone, not that it is not UTF-8", async () => {
    // Before, the message came wrapped in a stack trace of the script and the line that threw it.
    const missing = join(inputs, "no-such-policy.json");
    expect(await refusedBuild(missing)).toEqual({
      code: 1,
      stderr: `build-lambda: HOOKGATE_POLICY_FILE ${missing} cannot be read (ENOENT: no such file or directory, open '${missing}')\n`,
    });
  });

  it("refuses a policy file that is not UTF-8, and reads one with a byte-order mark, as check does", async () => {
    const latin1 = join(inputs, "latin1.json");
    writeFileSync(
      latin1,
      Buffer.from(
        '{"version": 1, "rules": [{"id": "k", "on": "PreToolUse", "if": "Read(**/schl\xfcssel.txt)", "decide": "deny"}]}',
        "latin1",
      ),
    );
    const { code, stderr } = await refusedBuild(latin1);
    expect(code).toBe(1);
    expect(stderr).toMatch(
      /^build-lambda: HOOKGATE_POLICY_FILE .+ is not UTF-8 .+: save it as UTF-8; hookgate check says where\n$/,
    );
    const bom = join(inputs, "bom.json");
    writeFileSync(
      bom,
      Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('{"version": 1, "rules": []}')]),
    );
    await run(process.execPath, ["scripts/build-lambda.mjs", "--outdir", join(bakedOutdir, "bom")], {
      cwd: ROOT,
      env: { ...process.env, HOOKGATE_POLICY_FILE: bom },
    });
  });
});

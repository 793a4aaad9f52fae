/**
 * `serverless package` (framework v3) on serverless.yml, offline: no credentials, telemetry and
 * notifications off, and every DNS lookup or outbound connection refused and recorded
 * (test/fixtures/lambda/deny-network.cjs). The build runs first, since the package is
 * dist-lambda/. Everything happens in a temp copy, so the working tree is left as it was.
 * Then the CloudFormation template it compiled is checked for what the deploy relies on.
 */
import { execFile } from "node:child_process";
import { cpSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { beforeAll, describe, expect, it } from "vitest";
import { SQS_MAX_MESSAGE_BYTES } from "../../src/adapters/queue/sqs.js";
import { SETTLE_MARGIN_MS } from "../../src/entry/lambda-sqs.js";
import { ROOT } from "../support/process.js";
import { tempDir } from "../support/temp.js";

const run = promisify(execFile);

interface Resource {
  Type: string;
  Properties: Record<string, unknown>;
  DependsOn?: string | string[];
}
interface Template {
  Parameters?: Record<string, { Default?: unknown }>;
  Resources: Record<string, Resource>;
}

let dir: string;
let template: Template;
let zipEntries: string[];
let networkLog: string;
let output: string;

/** File names in a zip's central directory (signature 0x02014b50, name length at 28, name at 46). */
function zipNames(zip: Buffer): string[] {
  const names: string[] = [];
  for (let i = zip.indexOf("PK\x01\x02"); i >= 0; i = zip.indexOf("PK\x01\x02", i + 4)) {
    const length = zip.readUInt16LE(i + 28);
    names.push(zip.subarray(i + 46, i + 46 + length).toString("utf8"));
  }
  return names;
}

/**
 * Packages a copy of serverless.yml (as `edit` changes it) into `dir`/`name`, offline, and
 * returns what serverless printed and the path of its output.
 */
async function slsPackage(name: string, edit: (yml: string) => string = (yml) => yml) {
  const service = join(dir, name);
  mkdirSync(join(service, "infra", "aws"), { recursive: true });
  writeFileSync(join(service, "serverless.yml"), edit(readFileSync(join(ROOT, "serverless.yml"), "utf8")));
  cpSync(join(ROOT, "infra/aws/template.yaml"), join(service, "infra/aws/template.yaml"));
  // Build first: the package is whatever scripts/build-lambda.mjs put in dist-lambda/.
  await run(process.execPath, ["scripts/build-lambda.mjs", "--outdir", join(service, "dist-lambda")], {
    cwd: ROOT,
  });

  const out = join(dir, `${name}-package`);
  const sls = await run(
    process.execPath,
    [join(ROOT, "node_modules/serverless/bin/serverless.js"), "package", "--stage", "test", "--package", out],
    {
      cwd: service,
      // Only what packaging needs: no AWS credentials or profile, a fresh HOME (no ~/.aws, no
      // ~/.serverlessrc), and the network preloaded away.
      env: {
        PATH: process.env.PATH ?? "",
        HOME: join(dir, "home"),
        AWS_REGION: "us-east-1",
        SLS_TELEMETRY_DISABLED: "1",
        SLS_NOTIFICATIONS_MODE: "off",
        CI: "1",
        HOOKGATE_NETWORK_LOG: networkLog,
        NODE_OPTIONS: `--require ${join(ROOT, "test/fixtures/lambda/deny-network.cjs")}`,
      },
      timeout: 120_000,
    },
  );
  return { output: sls.stdout + sls.stderr, out };
}

const templateIn = (out: string): Template =>
  JSON.parse(readFileSync(join(out, "cloudformation-template-update-stack.json"), "utf8"));

beforeAll(async () => {
  dir = tempDir("sls");
  networkLog = join(dir, "network.log");
  const sls = await slsPackage("service");
  output = sls.output;
  template = templateIn(sls.out);
  zipEntries = zipNames(readFileSync(join(sls.out, "hookgate.zip")));
}, 150_000);

const resources = (type: string) =>
  Object.entries(template.Resources).filter(([, r]) => r.Type === type) as [string, Resource][];
/** A property's value, a `Ref` to a template parameter read as its default. */
const resolved = (value: unknown): unknown => {
  const ref = (value as { Ref?: string } | undefined)?.Ref;
  return ref !== undefined && template.Parameters?.[ref] ? template.Parameters[ref].Default : value;
};
const getAtt = (logicalId: string) => ({ "Fn::GetAtt": [logicalId, "Arn"] });

interface Statement {
  Effect: string;
  Action: string | string[];
  Resource: unknown;
}
/** Every statement of every IAM role and managed policy in the template. */
function iamStatements(): Statement[] {
  const statements: Statement[] = [];
  for (const [, policy] of resources("AWS::IAM::ManagedPolicy"))
    statements.push(...(policy.Properties.PolicyDocument as { Statement: Statement[] }).Statement);
  for (const [, role] of resources("AWS::IAM::Role")) {
    for (const inline of (role.Properties.Policies ?? []) as { PolicyDocument: { Statement: Statement[] } }[])
      statements.push(...inline.PolicyDocument.Statement);
  }
  return statements;
}

describe("serverless package", () => {
  it("runs offline: no DNS lookup, no connection, and only the known runtime warning", () => {
    expect(existsSync(networkLog) ? readFileSync(networkLog, "utf8") : "").toBe("");
    expect(output).toMatch(/Service packaged/);
    expect(output).toMatch(/provider\.runtime/);
  });

  it("packages the bundle and nothing else", () => {
    expect(zipEntries).toContain("dist-lambda/lambda-http.mjs");
    expect(zipEntries).toContain("dist-lambda/lambda-sqs.mjs");
    expect(zipEntries.filter((name) => !name.startsWith("dist-lambda/"))).toEqual([]);
  });

  it("declares both functions on nodejs22.x with the bundle's handlers", () => {
    const functions = Object.fromEntries(
      resources("AWS::Lambda::Function").map(([id, f]) => [id, f.Properties]),
    );
    expect(functions.HttpLambdaFunction).toMatchObject({
      Handler: "dist-lambda/lambda-http.handler",
      Runtime: "nodejs22.x",
      Role: getAtt("HttpRole"),
    });
    expect(functions.DeliverLambdaFunction).toMatchObject({
      Handler: "dist-lambda/lambda-sqs.handler",
      Runtime: "nodejs22.x",
      Role: getAtt("DeliverRole"),
    });
    expect(Object.keys(functions)).toHaveLength(2);
  });

  it("takes the policy and secrets from dynamic references that CloudFormation resolves at deploy", () => {
    const http = template.Resources.HttpLambdaFunction?.Properties ?? {};
    const env = (http.Environment as { Variables: Record<string, unknown> }).Variables;
    expect(env.HOOKGATE_POLICY).toMatch(/^\{\{resolve:ssm:\/hookgate\/test\/policy\}\}$/);
    expect(env.HOOKGATE_QUEUE_URL).toEqual({ Ref: "DeliveryQueue" });
    const secrets = Object.entries(env).filter(([name]) => !name.startsWith("HOOKGATE_QUEUE"));
    for (const [name, value] of secrets)
      expect(String(value), name).toMatch(/^\{\{resolve:(ssm|secretsmanager):[^}]+\}\}$/);
  });

  it("feeds the delivery function from the queue with partial batch responses", () => {
    const [[, mapping]] = resources("AWS::Lambda::EventSourceMapping") as [[string, Resource]];
    expect(mapping.Properties).toMatchObject({
      EventSourceArn: getAtt("DeliveryQueue"),
      FunctionName: getAtt("DeliverLambdaFunction"),
      FunctionResponseTypes: ["ReportBatchItemFailures"],
    });
  });

  it("gives the queue a redrive policy to the DLQ and a visibility of at least 6 x the consumer's timeout", () => {
    const queue = template.Resources.DeliveryQueue?.Properties as Record<string, unknown>;
    const redrive = queue.RedrivePolicy as { deadLetterTargetArn: unknown; maxReceiveCount: unknown };
    expect(redrive.deadLetterTargetArn).toEqual(getAtt("DeadLetterQueue"));
    expect(Number(resolved(redrive.maxReceiveCount))).toBeGreaterThan(21);
    const consumerTimeout = Number(template.Resources.DeliverLambdaFunction?.Properties.Timeout);
    expect(consumerTimeout).toBeGreaterThan(0);
    expect(Number(resolved(queue.VisibilityTimeout))).toBeGreaterThanOrEqual(6 * consumerTimeout);
    expect(template.Resources.DeadLetterQueue?.Type).toBe("AWS::SQS::Queue");
  });

  it("sizes both queues for the 1 MiB message the SQS adapter fits a job to", () => {
    // The adapter cuts a job to 1 MiB and sends it whole below that. Left unset, the limit was
    // whatever SQS's default was when the stack made the queue (256 KiB before 2025, and still so
    // in some tools' docs), and CloudFormation does not change an unset attribute on update: such
    // a queue refused every job between the two, and the notification was lost ("enqueue
    // failed"). The DLQ takes dead letters of the same size, and what the redrive policy moves.
    for (const name of ["DeliveryQueue", "DeadLetterQueue"]) {
      const queue = template.Resources[name]?.Properties as Record<string, unknown>;
      expect(Number(queue.MaximumMessageSize), name).toBe(SQS_MAX_MESSAGE_BYTES);
    }
  });

  it("gives the delivery function the time a whole batch needs, so that no sink call of it is left unstarted", () => {
    // A sink call starts only while its 15 s and SETTLE_MARGIN_MS are left; the last of ten jobs
    // for one Slack or Discord webhook waits 9 s for its send slot first. Strictly more: the
    // invocation has spent some time before its first call, and at exactly this sum the last
    // job of a full batch was left unsent every time.
    const consumerTimeout = Number(template.Resources.DeliverLambdaFunction?.Properties.Timeout);
    expect(consumerTimeout * 1000).toBeGreaterThan(9_000 + 15_000 + SETTLE_MARGIN_MS);
  });

  it("alarms before the jobs waiting for a retry reach SQS's in-flight limit, past which nothing is delivered", () => {
    // A retry is a visibility change, so a job waiting for it (up to 12 h) is in flight; a
    // standard queue holds about 120,000 in flight, and then receives come back empty for every
    // sink. Nothing watched it.
    const alarm = resources("AWS::CloudWatch::Alarm")
      .map(([, a]) => a.Properties)
      .find((a) => a.MetricName === "ApproximateNumberOfMessagesNotVisible");
    expect(alarm?.Dimensions).toEqual([
      { Name: "QueueName", Value: { "Fn::GetAtt": ["DeliveryQueue", "QueueName"] } },
    ]);
    expect(alarm?.ComparisonOperator).toBe("GreaterThanThreshold");
    expect(Number(alarm?.Threshold)).toBeLessThan(120_000);
  });

  it("alarms on DLQ depth and on the age of the oldest job", () => {
    const alarms = resources("AWS::CloudWatch::Alarm").map(([, a]) => a.Properties);
    expect(alarms).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          MetricName: "ApproximateNumberOfMessagesVisible",
          Dimensions: [{ Name: "QueueName", Value: { "Fn::GetAtt": ["DeadLetterQueue", "QueueName"] } }],
        }),
        expect.objectContaining({
          MetricName: "ApproximateAgeOfOldestMessage",
          Dimensions: [{ Name: "QueueName", Value: { "Fn::GetAtt": ["DeliveryQueue", "QueueName"] } }],
        }),
      ]),
    );
  });

  it("documents the standalone deploy of infra/aws/template.yaml with the IAM capability its policies need", () => {
    // CloudFormation refuses a stack that creates IAM resources without CAPABILITY_IAM
    // (InsufficientCapabilitiesException), so a command without it cannot deploy the template.
    const raw = readFileSync(join(ROOT, "infra/aws/template.yaml"), "utf8");
    expect(raw).toMatch(/Type: AWS::IAM::/);
    for (const doc of ["infra/README.md", "infra/aws/template.yaml"]) {
      const text = readFileSync(join(ROOT, doc), "utf8").replace(/\s+/g, " ");
      const commands = text.match(/aws cloudformation deploy [^`)]*/g) ?? [];
      expect(commands.length, doc).toBeGreaterThan(0);
      for (const command of commands) expect(command, doc).toContain("--capabilities CAPABILITY_IAM");
    }
  });

  it("limits IAM to the queue ARNs (and each function's own log group)", () => {
    const statements = iamStatements();
    expect(statements.length).toBeGreaterThan(0);
    const sqs = statements.filter((s) => [s.Action].flat().some((a) => a.startsWith("sqs:")));
    expect(sqs.length).toBeGreaterThan(0);
    for (const s of statements) {
      expect(s.Effect).toBe("Allow");
      expect(JSON.stringify(s.Resource), JSON.stringify(s)).not.toMatch(/"\*"|:\*"/);
      expect(
        [s.Action].flat().some((a) => a.includes("*")),
        JSON.stringify(s),
      ).toBe(false);
    }
    for (const s of sqs)
      expect([getAtt("DeliveryQueue"), getAtt("DeadLetterQueue")]).toContainEqual(s.Resource);
    const logs = statements.filter((s) => !sqs.includes(s));
    for (const s of logs)
      expect([getAtt("HttpLogGroup"), getAtt("DeliverLogGroup")]).toContainEqual(s.Resource);

    // The HTTP function may only send. The consumer sends to its DLQ, and to its own queue: while
    // the policy does not load it holds each job by sending it again (lambda-sqs.ts `hold`),
    // which AWS refuses without this grant (every hold once failed there).
    const sends = sqs.filter((s) => [s.Action].flat().includes("sqs:SendMessage")).map((s) => s.Resource);
    expect(sends).toEqual(expect.arrayContaining([getAtt("DeliveryQueue"), getAtt("DeadLetterQueue")]));
    const statementsOf = (name: string) =>
      (template.Resources[name]?.Properties.PolicyDocument as { Statement: Statement[] } | undefined)
        ?.Statement ?? [];
    expect(statementsOf("ProducerPolicy")).toEqual([
      { Effect: "Allow", Action: "sqs:SendMessage", Resource: getAtt("DeliveryQueue") },
    ]);
    const consumerSends = statementsOf("ConsumerPolicy")
      .filter((s) => [s.Action].flat().includes("sqs:SendMessage"))
      .map((s) => s.Resource);
    expect(consumerSends).toEqual([getAtt("DeadLetterQueue"), getAtt("DeliveryQueue")]);
  });
});

describe("serverless package with the Function URL infra/README.md describes", () => {
  /**
   * What infra/README.md says to add for a Function URL: `url: true` on the `http` function and
   * the `resources` item in its fenced yaml block.
   */
  const readme = readFileSync(join(ROOT, "infra/README.md"), "utf8");
  const block = /\n( *)```yaml\n([\s\S]*?)\n *```/.exec(readme);
  const item = (block?.[2] ?? "")
    .split("\n")
    .map((line) => `  ${line.slice(block?.[1]?.length ?? 0)}`)
    .join("\n");
  let withUrl: Template;

  beforeAll(async () => {
    expect(readme).toMatch(/add\s+`url: true` to the `http` function/);
    const sls = await slsPackage(
      "service-url",
      (yml) => `${yml.replace("handler: dist-lambda/lambda-http.handler\n", "$&    url: true\n")}\n${item}\n`,
    );
    withUrl = templateIn(sls.out);
  }, 150_000);

  it("grants the public invoke that a new Function URL needs: InvokeFunctionUrl and, since October 2025, InvokeFunction", () => {
    // AWS has required both permissions of a Function URL created since October 2025; serverless 3
    // writes only the first, so with `url: true` alone every hook got a 403, which Claude Code
    // reads as "let the action through".
    const of = (type: string) =>
      Object.values(withUrl.Resources)
        .filter((r) => r.Type === type)
        .map((r) => r.Properties);
    expect(of("AWS::Lambda::Url")).toEqual([
      { AuthType: "NONE", TargetFunctionArn: getAtt("HttpLambdaFunction") },
    ]);
    const grants = of("AWS::Lambda::Permission").filter((p) => p.Principal === "*");
    expect(grants).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          FunctionName: getAtt("HttpLambdaFunction"),
          Action: "lambda:InvokeFunctionUrl",
          FunctionUrlAuthType: "NONE",
        }),
        {
          FunctionName: getAtt("HttpLambdaFunction"),
          Action: "lambda:InvokeFunction",
          Principal: "*",
          InvokedViaFunctionUrl: true,
        },
      ]),
    );
    expect(grants).toHaveLength(2);
  });
});

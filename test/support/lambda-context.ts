import { createHash } from "node:crypto";
import type { LambdaContext } from "hono/aws-lambda";

/** The context a Lambda HTTP invocation of the test function gets, with `remainingMs` left. */
export function lambdaContext(remainingMs = 29_000): LambdaContext {
  return {
    callbackWaitsForEmptyEventLoop: true,
    functionName: "hookgate-test-http",
    functionVersion: "$LATEST",
    invokedFunctionArn: "arn:aws:lambda:us-east-1:123456789012:function:hookgate-test-http",
    memoryLimitInMB: "1024",
    awsRequestId: "5f0f2d6a-8a57-4c35-9b7e-0c2d5b1c7e11",
    logGroupName: "/aws/lambda/hookgate-test-http",
    logStreamName: "2026/11/29/[$LATEST]0123456789abcdef",
    getRemainingTimeInMillis: () => remainingMs,
  };
}

/**
 * The Lambda tests' policy, as HOOKGATE_POLICY holds it: the platform team's token is the one the
 * captured Claude Code requests carry (`Bearer harness-secret-123`), and one rule denies a Bash
 * redirect. `defaults` as given.
 */
export function harnessPolicy(defaults?: Record<string, unknown>): string {
  return JSON.stringify({
    version: 1,
    auth: {
      tokens: [{ team: "platform", sha256: createHash("sha256").update("harness-secret-123").digest("hex") }],
      onFailure: "deny",
    },
    ...(defaults && { defaults }),
    rules: [
      {
        id: "no-redirects",
        on: "PreToolUse",
        matcher: "Bash",
        where: { "tool_input.command": { regex: ">" } },
        decide: "deny",
        reason: "Writing files from a shell redirect is not allowed here",
      },
    ],
  });
}

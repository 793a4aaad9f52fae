/**
 * The Lambda HTTP handler's audit line as its own logger writes it to stdout: the fields README.md's
 * "Audit log" documents, as Node (test/e2e/audit-schema.test.ts) and Workers
 * (test/workers/audit-line.test.ts) write them for the same deny.
 */
import { readFileSync } from "node:fs";
import type { LambdaEvent } from "hono/aws-lambda";
import { afterEach, describe, expect, it, vi } from "vitest";
import { createHttpHandler } from "../../src/entry/lambda-http.js";
import { AUDIT_LINE } from "../support/audit-line.js";
import { lambdaContext } from "../support/lambda-context.js";

const EVENT = JSON.parse(
  readFileSync(new URL("../fixtures/lambda/http-api-v2-pre-tool-use.json", import.meta.url), "utf8"),
) as LambdaEvent;

const context = lambdaContext();

const POLICY = JSON.stringify({
  version: 1,
  rules: [{ id: "no-redirects", on: "PreToolUse", if: "Bash(echo *)", decide: "deny", reason: "no echo" }],
});

afterEach(() => {
  vi.restoreAllMocks();
});

describe("the Lambda HTTP handler's audit line", () => {
  it("has the documented fields, and those Node and Workers write for the same deny", async () => {
    const written: string[] = [];
    vi.spyOn(process.stdout, "write").mockImplementation((chunk: string | Uint8Array) => {
      written.push(String(chunk));
      return true;
    });
    const handler = createHttpHandler({ env: { HOOKGATE_POLICY: POLICY } });
    const res = await handler(EVENT, context);
    vi.restoreAllMocks();
    expect(res.statusCode).toBe(200);
    const line = JSON.parse(
      written
        .join("")
        .split("\n")
        .find((l) => l.includes('"msg":"decision"')) ?? "{}",
    );
    expect(AUDIT_LINE.safeParse(line).error?.issues ?? []).toEqual([]);
    expect(Object.keys(line)).toEqual([
      "time",
      "level",
      "msg",
      "decisionId",
      "policy",
      "team",
      "client",
      "event",
      "tool",
      "sessionId",
      "rules",
      "shadow",
      "pending",
      "notify",
      "decision",
      "reason",
      "latencyMs",
      "toolInput",
    ]);
    expect(line).toMatchObject({ team: "default", decision: "deny", rules: ["no-redirects"] });
  });
});

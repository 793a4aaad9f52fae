/**
 * What coldstart.js and lambda-warm.js hand the Lambda handlers and check of their answers: an
 * HTTP API v2 PreToolUse event that the one-rule policy denies, and that policy.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { ROOT } from "./common.js";

export const LAMBDA_FIXTURE = join(ROOT, "test", "fixtures", "lambda", "http-api-v2-pre-tool-use.json");

/** A policy whose only rule denies this request; no auth block, no notify, prompt or forward. */
export const DENY_POLICY = {
  version: 1,
  rules: [
    {
      id: "no-rm-root",
      on: "PreToolUse",
      matcher: "Bash",
      if: "Bash(rm -rf /*)",
      decide: "deny",
      reason: "Deleting from / is never allowed",
    },
  ],
};

/** The HTTP API v2 PreToolUse fixture with its Bash command swapped for `rm -rf /`. */
export function benchmarkEvent() {
  const event = JSON.parse(readFileSync(LAMBDA_FIXTURE, "utf8"));
  const body = JSON.parse(event.body);
  body.tool_input.command = "rm -rf /";
  body.tool_input.description = "Delete everything";
  event.body = JSON.stringify(body);
  event.headers["content-length"] = String(Buffer.byteLength(event.body));
  return event;
}

/** Undefined when hookgate answered with no-rm-root's deny, else what it answered. */
export function checkHookgate(result) {
  let decision;
  let reason;
  try {
    const body = JSON.parse(result.body);
    decision = body.hookSpecificOutput?.permissionDecision;
    reason = body.hookSpecificOutput?.permissionDecisionReason;
  } catch {
    decision = undefined;
  }
  const error = Object.entries(result.headers ?? {}).find(([k]) => k.toLowerCase() === "x-hookgate-error");
  if (result.statusCode !== 200 || decision !== "deny" || error || !String(reason).includes("never allowed"))
    return `expected 200 and no-rm-root's deny, got ${JSON.stringify(result)}`;
  return undefined;
}

/** Undefined when the minimal Hono handler answered as it does, else what it answered. */
export function checkMinimal(result) {
  if (result.statusCode !== 200 || result.body !== '{"ok":true}')
    return `expected 200 {"ok":true}, got ${JSON.stringify(result)}`;
  return undefined;
}

/**
 * The audit line and the notification say the same of what the client does with a decision
 * (clientDecision), for every client, event and decision; a Slack message says "Not enforced"
 * exactly when that is none and a decision was made.
 */
import { describe, expect, it } from "vitest";
import { handleHook } from "../../src/app/handle-hook.js";
import type { NotifyInput } from "../../src/app/notify.js";
import { createNotification } from "../../src/core/delivery.js";
import { renderSlackMessage } from "../../src/core/sinks.js";
import { policyFrom, sha256 } from "../support/policy.js";

const EVENTS = [
  "PreToolUse",
  "PermissionRequest",
  "PostToolUse",
  "UserPromptSubmit",
  "UserPromptExpansion",
  "ConfigChange",
  "PreCompact",
  "Stop",
  "SubagentStop",
  "Notification",
  "SessionStart",
];
const DECISIONS = ["allow", "deny", "ask", "defer", "block", undefined];

describe("clientDecision: the audit line and the notification agree", () => {
  it("for every client, event and decision, and Not enforced shows only for a decision the client drops", async () => {
    let checked = 0;
    let dropped = 0;
    for (const dialect of ["claude-code", "deepcode", "deepagents"] as const) {
      for (const event of EVENTS) {
        for (const decide of DECISIONS) {
          const rule = {
            id: "r",
            on: event,
            notify: ["audit"],
            ...(decide && { decide, reason: "because" }),
            ...(event === "Stop" || event === "SubagentStop" ? { where: { stop_hook_active: false } } : {}),
          };
          let policy: Awaited<ReturnType<typeof policyFrom>>;
          try {
            policy = await policyFrom({
              version: 1,
              rules: [rule],
              sinks: { audit: { type: "slack", url: "https://hooks.slack.com/services/T/B/x" } },
            });
          } catch {
            continue; // A decision this event cannot take in a policy.
          }
          const inputs: NotifyInput[] = [];
          const outcome = await handleHook(
            {
              policy: () => policy,
              clock: { now: () => 0, monotonic: () => 0 },
              newId: () => "id",
              sha256,
              logger: { log: () => {} },
              notifier: { notify: (input: NotifyInput) => void inputs.push(input) },
            },
            {
              body: {
                ok: true,
                text: JSON.stringify({
                  session_id: "s",
                  transcript_path: "/t",
                  cwd: "/p",
                  hook_event_name: event,
                  tool_name: "Bash",
                  tool_input: { command: "ls" },
                  tool_use_id: "u",
                  prompt: "hi",
                  source: "user_settings",
                  trigger: "manual",
                  message: "m",
                  notification_type: "idle_prompt",
                  stop_hook_active: false,
                }),
              },
              contentType: "application/json",
              authorization: undefined,
              dialect,
            },
          );
          if (outcome.audit.error !== undefined) continue;
          const input = inputs[0];
          expect(input, `${dialect} ${event} ${decide}`).toBeDefined();
          if (!input) continue;
          const where = `${dialect} ${event} ${decide}: audit ${outcome.audit.decision}/${outcome.audit.clientDecision}`;
          expect([input.decision, input.clientDecision], where).toEqual([
            outcome.audit.decision,
            outcome.audit.clientDecision,
          ]);
          const notification = createNotification("n", 0, input.event, {
            team: input.team,
            decision: input.decision,
            clientDecision: input.clientDecision,
            reason: input.reason,
            ruleId: "r",
          });
          const { text, blocks } = renderSlackMessage(notification);
          const says = text.includes("Not enforced") || JSON.stringify(blocks).includes("Not enforced");
          const drops = input.clientDecision === "none" && input.decision !== "none";
          expect(says, where).toBe(drops);
          if (drops)
            expect(text).toContain(`Not enforced: ${dialect} does not act on this ${input.decision}`);
          checked += 1;
          if (drops) dropped += 1;
        }
      }
    }
    expect(checked).toBeGreaterThan(50);
    expect(dropped).toBeGreaterThan(3);
  });
});

import { describe, expect, it } from "vitest";
import type { Decision } from "../../src/core/decision.js";
import type { Dialect } from "../../src/core/hook-event.js";
import {
  ANSWER_BYTES,
  DEEPAGENTS_OUTPUT_BYTES,
  deliverable,
  renderDecision,
  renderDeliverable,
  renderRequestFailure,
} from "../../src/core/render.js";

const d = (fields: Partial<Decision>): Decision => ({ kind: "none", decidedBy: [], ...fields });
const body = (decision: Decision, event: string, dialect: Dialect = "claude-code") => {
  const answer = renderDecision(decision, event, dialect);
  expect(answer.status).toBe(200);
  return answer.body === "" ? "" : JSON.parse(answer.body);
};

describe("renderDecision", () => {
  it("answers no opinion with an empty 200 (TV-05)", () => {
    expect(renderDecision(d({}), "PreToolUse", "claude-code")).toEqual({
      status: 200,
      contentType: undefined,
      body: "",
    });
  });

  it("denies PreToolUse with permissionDecision and echoes the event (TV-01)", () => {
    expect(body(d({ kind: "deny", reason: "rm -rf / is forbidden" }), "PreToolUse")).toEqual({
      hookSpecificOutput: {
        hookEventName: "PreToolUse",
        permissionDecision: "deny",
        permissionDecisionReason: "rm -rf / is forbidden",
      },
    });
  });

  it.each(["allow", "ask", "defer"] as const)("passes %s through on PreToolUse (TV-02, TV-03)", (kind) => {
    expect(body(d({ kind, reason: "why" }), "PreToolUse").hookSpecificOutput.permissionDecision).toBe(kind);
  });

  it("sends updatedInput with an allow only (TV-04)", () => {
    const updatedInput = { file_path: "/p/.env.example", content: "X" };
    expect(body(d({ kind: "allow", updatedInput }), "PreToolUse").hookSpecificOutput.updatedInput).toEqual(
      updatedInput,
    );
    expect(
      body(d({ kind: "ask", updatedInput }), "PreToolUse").hookSpecificOutput.updatedInput,
    ).toBeUndefined();
    // On PermissionRequest Claude Code reads it inside decision, beside behavior "allow".
    expect(body(d({ kind: "allow", updatedInput }), "PermissionRequest").hookSpecificOutput.decision).toEqual(
      {
        behavior: "allow",
        updatedInput,
      },
    );
    expect(
      body(d({ kind: "deny", reason: "no", updatedInput }), "PermissionRequest").hookSpecificOutput.decision,
    ).toEqual({ behavior: "deny", message: "no" });
  });

  it("answers PermissionRequest with both decision.behavior and permissionDecision (TV-20)", () => {
    expect(body(d({ kind: "deny", reason: "no" }), "PermissionRequest", "deepcode")).toEqual({
      hookSpecificOutput: {
        hookEventName: "PermissionRequest",
        decision: { behavior: "deny", message: "no" },
        permissionDecision: "deny",
        permissionDecisionReason: "no",
      },
    });
    expect(body(d({ kind: "allow" }), "PermissionRequest").hookSpecificOutput).toEqual({
      hookEventName: "PermissionRequest",
      decision: { behavior: "allow" },
      permissionDecision: "allow",
    });
  });

  it("answers deepagents' PermissionRequest with the decision object alone, the only key its wire model allows", () => {
    // deepagents_code hooks/models/wire.py: PermissionRequestSpecificOutput is hookEventName and
    // decision, in a model that once forbade any other key (extra="forbid"): permissionDecision
    // beside them failed the whole answer, and the deny was dropped.
    expect(body(d({ kind: "deny", reason: "no" }), "PermissionRequest", "deepagents")).toEqual({
      hookSpecificOutput: {
        hookEventName: "PermissionRequest",
        decision: { behavior: "deny", message: "no" },
      },
    });
    expect(body(d({ kind: "allow", reason: "ok" }), "PermissionRequest", "deepagents")).toEqual({
      hookSpecificOutput: { hookEventName: "PermissionRequest", decision: { behavior: "allow" } },
    });
    const failure = renderRequestFailure("deny", "PermissionRequest", "deepagents", "hookgate: bad token");
    expect(JSON.parse(failure.answer.body).hookSpecificOutput).toEqual({
      hookEventName: "PermissionRequest",
      decision: { behavior: "deny", message: "hookgate: bad token" },
    });
  });

  it("blocks Stop with a top-level decision and never a hookSpecificOutput (TV-14, TV-16)", () => {
    const out = body(d({ kind: "block", reason: "Run npm test", context: "extra" }), "Stop");
    expect(out).toEqual({ decision: "block", reason: "Run npm test" });
    expect(body(d({ context: "only context" }), "SubagentStop")).toBe("");
  });

  it("blocks UserPromptSubmit and adds context there (TV-17, TV-18)", () => {
    expect(body(d({ kind: "block", reason: "Prompt contains a credential" }), "UserPromptSubmit")).toEqual({
      decision: "block",
      reason: "Prompt contains a credential",
    });
    expect(body(d({ context: "Repo policy: use pnpm" }), "UserPromptSubmit")).toEqual({
      hookSpecificOutput: { hookEventName: "UserPromptSubmit", additionalContext: "Repo policy: use pnpm" },
    });
  });

  it("feeds a PostToolUse block back with its reason (TV-27)", () => {
    expect(body(d({ kind: "block", reason: "Lint failed: 3 errors" }), "PostToolUse")).toEqual({
      decision: "block",
      reason: "Lint failed: 3 errors",
    });
  });

  it("says a PostToolUse block's reason to deepcode as context, the one field it reads back there", () => {
    // deepcode's loop reads only updatedOutput and additionalContext from PostToolUse and
    // PostToolUseFailure hooks; Claude Code reads the block's reason.
    for (const event of ["PostToolUse", "PostToolUseFailure"]) {
      expect(body(d({ kind: "block", reason: "Lint failed: 3 errors" }), event, "deepcode")).toEqual({
        decision: "block",
        reason: "Lint failed: 3 errors",
        hookSpecificOutput: { hookEventName: event, additionalContext: "Lint failed: 3 errors" },
      });
    }
    expect(
      body(
        d({ kind: "block", reason: "Lint failed", context: "Run npm run lint" }),
        "PostToolUse",
        "deepcode",
      ).hookSpecificOutput.additionalContext,
    ).toBe("Run npm run lint\n\nLint failed");
    expect(
      body(d({ kind: "block", reason: "no" }), "PostToolUse", "claude-code").hookSpecificOutput,
    ).toBeUndefined();
    expect(
      body(d({ kind: "block", reason: "no" }), "UserPromptSubmit", "deepcode").hookSpecificOutput,
    ).toBeUndefined();
  });

  it("sends deepcode a PostToolBatch or UserPromptExpansion context, which it reads back there, and a batch block's reason too", () => {
    // deepcode appends PostToolBatch's additionalContext to the batch's last tool result (its
    // src/loop.ts) and UserPromptExpansion's to the expanded prompt (src/tui/useChat.ts); it reads
    // no block from either. Claude Code 2.1.112 has no variant for these events, and never sends them.
    for (const event of ["PostToolBatch", "UserPromptExpansion"]) {
      expect(body(d({ context: "Use pnpm, not npm." }), event, "deepcode")).toEqual({
        hookSpecificOutput: { hookEventName: event, additionalContext: "Use pnpm, not npm." },
      });
      expect(body(d({ context: "Use pnpm, not npm." }), event, "claude-code")).toBe("");
    }
    expect(body(d({ kind: "block", reason: "Tests failed" }), "PostToolBatch", "deepcode")).toEqual({
      decision: "block",
      reason: "Tests failed",
      hookSpecificOutput: { hookEventName: "PostToolBatch", additionalContext: "Tests failed" },
    });
  });

  it("gives deepagents an allow with its rewritten input only when the answer fits, texts cut to their markers", () => {
    // Before, sized without its texts, an allow just under the limit went out just
    // over it once the reason's marker was added; deepagents dropped it and ran the call unrewritten.
    // Each text cut to the marker alone, with an empty content: what a size adds to must fit.
    const marker = "…[truncated by hookgate]";
    const allow = { hookEventName: "PreToolUse", permissionDecision: "allow" };
    const emptyAnswers = {
      reason: {
        hookSpecificOutput: { ...allow, permissionDecisionReason: marker, updatedInput: { content: "" } },
      },
      systemMessage: {
        systemMessage: marker,
        hookSpecificOutput: { ...allow, updatedInput: { content: "" } },
      },
      context: { hookSpecificOutput: { ...allow, updatedInput: { content: "" }, additionalContext: marker } },
    };
    for (const [key, empty] of Object.entries(emptyAnswers)) {
      const room = DEEPAGENTS_OUTPUT_BYTES - new TextEncoder().encode(JSON.stringify(empty)).length;
      for (const size of [99_700, room - 1, room, room + 1, 99_950, 100_010]) {
        const decision = d({
          kind: "allow",
          updatedInput: { content: "x".repeat(size) },
          [key]: key.repeat(500),
        });
        const given = deliverable(decision, "PreToolUse", "deepagents");
        const body = renderDecision(given, "PreToolUse", "deepagents").body;
        expect(new TextEncoder().encode(body).length, `${size} ${key}`).toBeLessThanOrEqual(
          DEEPAGENTS_OUTPUT_BYTES,
        );
        const out = JSON.parse(body).hookSpecificOutput;
        if (size <= room) {
          expect(out.permissionDecision, `${size} ${key}`).toBe("allow");
          expect(out.updatedInput.content).toHaveLength(size);
        } else {
          expect(out.permissionDecision, `${size} ${key}`).toBe("deny");
          expect(out.permissionDecisionReason).toMatch(/rewritten input/);
        }
      }
    }
    expect(
      deliverable(
        d({ kind: "allow", updatedInput: { content: "x".repeat(99_990) }, reason: "r" }),
        "PreToolUse",
        "claude-code",
      ).kind,
    ).toBe("allow");
  });

  it("renders what deliverable gives, as renderDecision renders it, in one call", () => {
    const size = DEEPAGENTS_OUTPUT_BYTES;
    const cases: [Decision, string, Dialect][] = [
      [d({ kind: "allow", updatedInput: { command: "ls" }, reason: "r" }), "PreToolUse", "claude-code"],
      [d({ kind: "allow", updatedInput: { command: "ls" } }), "PermissionRequest", "deepcode"],
      [d({ kind: "allow", updatedInput: { content: "x".repeat(size) } }), "PreToolUse", "deepagents"],
      [
        d({ kind: "allow", updatedInput: { content: "x".repeat(size / 2) }, context: "c".repeat(size) }),
        "PreToolUse",
        "deepagents",
      ],
      [d({ kind: "deny", reason: "no" }), "PreToolUse", "deepcode"],
    ];
    for (const [decision, event, dialect] of cases) {
      const given = deliverable(decision, event, dialect);
      expect(renderDeliverable(decision, event, dialect)).toEqual({
        decision: given,
        answer: renderDecision(given, event, dialect),
      });
    }
  });

  it("denies a deepcode PermissionRequest allow that rewrites the input, which deepcode would run unrewritten", () => {
    const rewrite = d({ kind: "allow", updatedInput: { file_path: "/p/.env.example" } });
    const given = deliverable(rewrite, "PermissionRequest", "deepcode");
    expect(given.kind).toBe("deny");
    const out = JSON.parse(renderDecision(given, "PermissionRequest", "deepcode").body).hookSpecificOutput;
    expect(out.permissionDecision).toBe("deny");
    expect(out.permissionDecisionReason).toMatch(/rewritten input.*PreToolUse/);
    // deepcode applies a rewrite on PreToolUse, Claude Code on both; an allow without one stays.
    expect(deliverable(rewrite, "PreToolUse", "deepcode")).toBe(rewrite);
    expect(deliverable(rewrite, "PermissionRequest", "claude-code")).toBe(rewrite);
    const plain = d({ kind: "allow" });
    expect(deliverable(plain, "PermissionRequest", "deepcode")).toBe(plain);
  });

  it("keeps a deepagents answer within the 100,000 bytes deepagents reads, cutting its texts and keeping the decision", () => {
    // Past 100,000 bytes deepagents cuts the JSON, cannot parse it, and the deny is lost.
    const decision = d({ kind: "deny", reason: "é".repeat(60_000), context: "x".repeat(120_000) });
    const answer = renderDecision(decision, "PreToolUse", "deepagents");
    const bytes = new TextEncoder().encode(answer.body).length;
    expect(bytes).toBeLessThanOrEqual(DEEPAGENTS_OUTPUT_BYTES);
    expect(bytes).toBeGreaterThan(DEEPAGENTS_OUTPUT_BYTES - 1000);
    const out = JSON.parse(answer.body);
    expect(out.hookSpecificOutput.permissionDecision).toBe("deny");
    expect(out.hookSpecificOutput.permissionDecisionReason).toMatch(/^é+…\[truncated by hookgate\]$/);
    expect(out.hookSpecificOutput.additionalContext).toMatch(/^x+…\[truncated by hookgate\]$/);
    // Claude Code saves long texts to a file itself; a short deepagents answer is left whole.
    expect(renderDecision(decision, "PreToolUse", "claude-code").body.length).toBeGreaterThan(180_000);
    expect(body(d({ kind: "deny", reason: "é".repeat(30_000) }), "PreToolUse", "deepagents")).toEqual(
      body(d({ kind: "deny", reason: "é".repeat(30_000) }), "PreToolUse", "claude-code"),
    );
  });

  it("keeps every client's answer within the 900,000 bytes a Lambda behind a load balancer can return, counted as it returns it", () => {
    // The body is a JSON string in a Lambda's result, each quote in a text three characters more
    // there: 400,000 of them are 1.6 MB past the ALB's 1 MB, a 502 on which Claude Code runs the call.
    const asReturned = (answer: { body: string }) =>
      new TextEncoder().encode(JSON.stringify(answer.body)).length;
    const decision = d({ kind: "block", reason: '"'.repeat(200_000), context: '"'.repeat(200_000) });
    for (const dialect of ["claude-code", "deepcode"] as const) {
      const answer = renderDecision(decision, "PostToolUse", dialect);
      expect(asReturned(answer)).toBeLessThanOrEqual(ANSWER_BYTES);
      expect(asReturned(answer)).toBeGreaterThan(ANSWER_BYTES - 1000);
      expect(answer.truncated).toBe(true);
      const out = JSON.parse(answer.body);
      expect(out.decision).toBe("block");
      expect(out.reason).toMatch(/^"+…\[truncated by hookgate\]$/);
    }
    // An answer that fits is left whole and not said to be cut.
    const whole = renderDecision(
      d({ kind: "deny", reason: "x".repeat(400_000) }),
      "PreToolUse",
      "claude-code",
    );
    expect([
      JSON.parse(whole.body).hookSpecificOutput.permissionDecisionReason.length,
      whole.truncated,
    ]).toEqual([400_000, undefined]);
  });

  it("answers deepcode's PreCompact without the context, which it reads nothing back from", () => {
    expect(renderDecision(d({ context: "Preserve decisions." }), "PreCompact", "deepcode").body).toBe("");
  });

  it("answers PreCompact with an empty body, or its instructions as a JSON object Claude Code appends (TV-22; TV-23's plain text fails the hook)", () => {
    expect(renderDecision(d({}), "PreCompact", "claude-code").body).toBe("");
    expect(renderDecision(d({ systemMessage: "x" }), "PreCompact", "claude-code").body).toBe("");
    expect(renderDecision(d({ context: " \n" }), "PreCompact", "claude-code").body).toBe("");
    expect(
      renderDecision(
        d({ context: "Preserve every API-contract decision verbatim." }),
        "PreCompact",
        "claude-code",
      ),
    ).toEqual({
      status: 200,
      contentType: "application/json",
      body: '{"reason":"Preserve every API-contract decision verbatim."}',
    });
  });

  it("never sends decision approve, on any event", () => {
    for (const event of ["PreToolUse", "PermissionRequest", "Stop", "UserPromptSubmit", "PostToolUse"]) {
      expect(renderDecision(d({ kind: "allow", reason: "ok" }), event, "claude-code").body).not.toMatch(
        /approve/,
      );
    }
  });

  it("says each decision in the event's own word, so none is dropped for its spelling", () => {
    expect(body(d({ kind: "block", reason: "no" }), "PreToolUse").hookSpecificOutput).toEqual({
      hookEventName: "PreToolUse",
      permissionDecision: "deny",
      permissionDecisionReason: "no",
    });
    expect(body(d({ kind: "block", reason: "no" }), "PermissionRequest").hookSpecificOutput.decision).toEqual(
      {
        behavior: "deny",
        message: "no",
      },
    );
    expect(body(d({ kind: "deny", reason: "no" }), "Stop")).toEqual({ decision: "block", reason: "no" });
    expect(renderDecision(d({ kind: "deny", reason: "no" }), "PreCompact", "claude-code").body).toBe(
      '{"decision":"block","reason":"no"}',
    );
  });

  it("sends no decision an event cannot honour", () => {
    expect(body(d({ kind: "deny", reason: "x" }), "Notification")).toBe("");
    expect(body(d({ kind: "ask", reason: "x" }), "PermissionRequest")).toBe("");
  });

  it("sends deepagents v2 context only on its own variants", () => {
    expect(body(d({ context: "c" }), "Notification", "claude-code")).toEqual({
      hookSpecificOutput: { hookEventName: "Notification", additionalContext: "c" },
    });
    expect(body(d({ context: "c" }), "Notification", "deepagents")).toBe("");
    expect(body(d({ context: "c" }), "PreCompact", "deepagents")).toBe("");
    // SubagentStop's context is the parent's context there (deepagents_code hooks/reducer.py);
    // Stop's would make the agent go on, as a block does, so it is not sent.
    expect(body(d({ context: "c" }), "SubagentStop", "deepagents")).toEqual({
      hookSpecificOutput: { hookEventName: "SubagentStop", additionalContext: "c" },
    });
    expect(body(d({ context: "c" }), "Stop", "deepagents")).toBe("");
    expect(body(d({ kind: "block", reason: "r", context: "c" }), "Stop", "deepagents")).toEqual({
      decision: "block",
      reason: "r",
    });
    expect(body(d({ context: "c" }), "SubagentStop", "deepcode")).toBe("");
  });

  it("answers every deepagents legacy event with an empty body", () => {
    expect(
      renderDecision(d({ kind: "deny", reason: "x", systemMessage: "y" }), "tool.use", "deepagents-legacy")
        .body,
    ).toBe("");
  });

  it("ends the turn with continue false when a rule asks to stop (TV-36)", () => {
    expect(body(d({ kind: "deny", reason: "outside src", stop: true }), "PreToolUse")).toEqual({
      continue: false,
      stopReason: "outside src",
      hookSpecificOutput: {
        hookEventName: "PreToolUse",
        permissionDecision: "deny",
        permissionDecisionReason: "outside src",
      },
    });
  });
});

describe("renderRequestFailure", () => {
  const message = "hookgate: bad token";

  it("denies PreToolUse under deny, with the systemMessage (TV-21)", () => {
    const { answer, kind } = renderRequestFailure("deny", "PreToolUse", "claude-code", message);
    expect(kind).toBe("deny");
    expect(JSON.parse(answer.body)).toEqual({
      systemMessage: message,
      hookSpecificOutput: {
        hookEventName: "PreToolUse",
        permissionDecision: "deny",
        permissionDecisionReason: message,
      },
    });
  });

  it("denies PermissionRequest under deny", () => {
    const { answer } = renderRequestFailure("deny", "PermissionRequest", "claude-code", message);
    expect(JSON.parse(answer.body).hookSpecificOutput.decision).toEqual({ behavior: "deny", message });
  });

  it.each(["UserPromptSubmit", "Stop", "Notification", "PostToolUse", "SessionEnd"])(
    "answers %s under deny with no decision, only the systemMessage",
    (event) => {
      const { answer, kind } = renderRequestFailure("deny", event, "claude-code", message);
      expect(kind).toBe("none");
      expect(JSON.parse(answer.body)).toEqual({ systemMessage: message });
    },
  );

  it("answers an unidentified event under deny with the top-level block", () => {
    const { answer } = renderRequestFailure("deny", undefined, "claude-code", message);
    expect(JSON.parse(answer.body)).toEqual({ decision: "block", reason: message });
  });

  it("never allows explicitly under allow", () => {
    const { answer, kind } = renderRequestFailure("allow", "PreToolUse", "claude-code", message);
    expect(kind).toBe("none");
    expect(JSON.parse(answer.body)).toEqual({ systemMessage: message });
    expect(renderRequestFailure("allow", undefined, "claude-code", message).answer.body).toBe("");
  });

  it("answers an unidentified event under ask empty, not with deny's block", () => {
    const { answer, kind } = renderRequestFailure("ask", undefined, "claude-code", message);
    expect(kind).toBe("none");
    expect(answer.body).toBe("");
  });

  it("asks on PreToolUse under ask, and leaves PermissionRequest to its own dialog", () => {
    expect(
      JSON.parse(renderRequestFailure("ask", "PreToolUse", "claude-code", message).answer.body)
        .hookSpecificOutput.permissionDecision,
    ).toBe("ask");
    // No decision is given, and none is recorded: the client's own dialog asks.
    const { answer, kind } = renderRequestFailure("ask", "PermissionRequest", "claude-code", message);
    expect(kind).toBe("none");
    expect(JSON.parse(answer.body)).toEqual({ systemMessage: message });
  });

  it("keeps PreCompact empty whatever the failure", () => {
    expect(renderRequestFailure("deny", "PreCompact", "claude-code", message).answer.body).toBe("");
  });
});

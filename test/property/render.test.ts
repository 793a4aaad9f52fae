/**
 * The renderer against every client dialect: for any decision on any event, the answer is a 2xx
 * body its client accepts (client-dialects.ts, from reference/clients.md), and a decision the
 * event can carry is never lost on the way.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { Decision } from "../../src/core/decision.js";
import { CLAUDE_CODE_EVENTS, DEEPAGENTS_LEGACY_EVENTS } from "../../src/core/events.js";
import { DIALECTS, type Dialect } from "../../src/core/hook-event.js";
import { renderDecision, renderRequestFailure } from "../../src/core/render.js";
import { answerProblems } from "./client-dialects.js";

/** Reasons and messages as an attacker or a model may word them: any code units, lone surrogates too. */
const text = fc.oneof(
  fc.string(),
  fc.string({ unit: "binary" }),
  fc.constantFrom("", " ", "{}", "\uD800", "approve", '"}', "</script>"),
);

const event = fc.oneof(
  { arbitrary: fc.constantFrom(...CLAUDE_CODE_EVENTS), weight: 6 },
  { arbitrary: fc.constantFrom(...DEEPAGENTS_LEGACY_EVENTS), weight: 1 },
  { arbitrary: fc.constantFrom("__proto__", "constructor", "toString", "hasOwnProperty", ""), weight: 1 },
  { arbitrary: fc.string(), weight: 1 },
);

const dialect = fc.constantFrom(...DIALECTS);

const decision: fc.Arbitrary<Decision> = fc.record(
  {
    kind: fc.constantFrom("none", "allow", "deny", "ask", "defer", "block"),
    reason: fc.option(text, { nil: undefined }),
    context: fc.option(text, { nil: undefined }),
    systemMessage: fc.option(text, { nil: undefined }),
    updatedInput: fc.option(fc.dictionary(fc.string(), fc.jsonValue()), { nil: undefined }),
    stop: fc.option(fc.boolean(), { nil: undefined }),
    stopReason: fc.option(text, { nil: undefined }),
    decidedBy: fc.array(fc.string(), { maxLength: 3 }),
  },
  { requiredKeys: ["kind", "decidedBy"] },
);

const parsed = (body: string): Record<string, unknown> =>
  body === "" ? {} : (JSON.parse(body) as Record<string, unknown>);

const specificOf = (body: string): Record<string, unknown> =>
  (parsed(body).hookSpecificOutput as Record<string, unknown> | undefined) ?? {};

/** Events where a top-level `decision: "block"` acts, per clients.md §6.2's decision-control table. */
const BLOCKING_EVENTS = new Set([
  "UserPromptSubmit",
  "PostToolUse",
  "PostToolUseFailure",
  "Stop",
  "SubagentStop",
  "PreCompact",
  "ConfigChange",
  "TaskCreated",
  "PostToolBatch",
  "UserPromptExpansion",
]);

/** An answer as a client receives it, which may be one hookgate never sends. */
type WireAnswer = Parameters<typeof answerProblems>[0];

const jsonAnswer = (value: unknown): WireAnswer => ({
  status: 200,
  contentType: "application/json",
  body: JSON.stringify(value),
});

// The validator is only as good as what it rejects: the client-side failures of clients.md §11.
describe("answerProblems (the dialect validators themselves)", () => {
  it.each<[string, WireAnswer, string, Dialect]>([
    [
      "TV-10 no hookEventName",
      jsonAnswer({ hookSpecificOutput: { permissionDecision: "deny" } }),
      "PreToolUse",
      "claude-code",
    ],
    [
      "TV-11 wrong echo",
      jsonAnswer({ hookSpecificOutput: { hookEventName: "PostToolUse", additionalContext: "x" } }),
      "PreToolUse",
      "claude-code",
    ],
    [
      "TV-13 unknown permissionDecision",
      jsonAnswer({ hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: "approve" } }),
      "PreToolUse",
      "claude-code",
    ],
    [
      "TV-16 Stop variant on 2.1.112",
      jsonAnswer({ hookSpecificOutput: { hookEventName: "Stop", additionalContext: "x" } }),
      "Stop",
      "claude-code",
    ],
    ["TV-22 {} on PreCompact", jsonAnswer({}), "PreCompact", "claude-code"],
    [
      "TV-23's plain text on PreCompact, which fails the hook",
      { status: 200, contentType: "text/plain; charset=utf-8", body: "Keep it" },
      "PreCompact",
      "claude-code",
    ],
    ["TV-34 decision approve", jsonAnswer({ decision: "approve" }), "PreToolUse", "deepagents"],
    [
      "TV-06 plain text",
      { status: 200, contentType: "text/plain; charset=utf-8", body: "OK" },
      "PreToolUse",
      "claude-code",
    ],
    [
      "a deepagents v2 variant it lacks",
      jsonAnswer({ hookSpecificOutput: { hookEventName: "Notification", additionalContext: "x" } }),
      "Notification",
      "deepagents",
    ],
    [
      "PermissionRequest without decision",
      jsonAnswer({ hookSpecificOutput: { hookEventName: "PermissionRequest", permissionDecision: "deny" } }),
      "PermissionRequest",
      "deepcode",
    ],
    ["a body for deepagents legacy", jsonAnswer({ systemMessage: "x" }), "tool.use", "deepagents-legacy"],
    ["an array", jsonAnswer([]), "PreToolUse", "claude-code"],
  ])("rejects %s", (_name, answer, event, dia) => {
    expect(answerProblems(answer, event, dia)).not.toEqual([]);
  });

  it.each<[string, WireAnswer, string, Dialect]>([
    [
      "TV-01 deny",
      jsonAnswer({
        hookSpecificOutput: {
          hookEventName: "PreToolUse",
          permissionDecision: "deny",
          permissionDecisionReason: "no",
        },
      }),
      "PreToolUse",
      "claude-code",
    ],
    ["TV-14 Stop block", jsonAnswer({ decision: "block", reason: "Run npm test" }), "Stop", "claude-code"],
    [
      "TV-20 PermissionRequest deny",
      jsonAnswer({
        hookSpecificOutput: {
          hookEventName: "PermissionRequest",
          decision: { behavior: "deny", message: "no" },
          permissionDecision: "deny",
          permissionDecisionReason: "no",
        },
      }),
      "PermissionRequest",
      "deepcode",
    ],
    ["PreCompact instructions", jsonAnswer({ reason: "Keep it" }), "PreCompact", "claude-code"],
    ["TV-05 empty", { status: 200, contentType: undefined, body: "" }, "PreToolUse", "deepagents-legacy"],
  ])("accepts %s", (_name, answer, event, dia) => {
    expect(answerProblems(answer, event, dia)).toEqual([]);
  });
});

describe("renderDecision", () => {
  it("answers every decision on every event with a body its client accepts", () => {
    fc.assert(
      fc.property(decision, event, dialect, (d, e, dia) => {
        expect(answerProblems(renderDecision(d, e, dia), e, dia)).toEqual([]);
      }),
      { numRuns: 1500 },
    );
  });

  it("answers no opinion with an empty body", () => {
    const silent = decision.map((d) => ({ ...d, kind: "none" as const, context: "", systemMessage: "" }));
    fc.assert(
      fc.property(silent, event, dialect, (d, e, dia) => {
        const { stop: _stop, ...rest } = d;
        expect(renderDecision(rest, e, dia)).toEqual({ status: 200, contentType: undefined, body: "" });
      }),
      { numRuns: 300 },
    );
  });

  it("never loses a permission decision on PreToolUse (deny and block both deny)", () => {
    const client = fc.constantFrom<Dialect>("claude-code", "deepcode", "deepagents");
    fc.assert(
      fc.property(decision, client, (d, dia) => {
        const specific = specificOf(renderDecision(d, "PreToolUse", dia).body);
        const expected = d.kind === "block" ? "deny" : d.kind === "none" ? undefined : d.kind;
        expect(specific.permissionDecision).toBe(expected);
      }),
      { numRuns: 300 },
    );
  });

  it("never loses an allow or deny on PermissionRequest, in the field each client reads", () => {
    const client = fc.constantFrom<Dialect>("claude-code", "deepcode", "deepagents");
    const kind = fc.constantFrom("allow", "deny", "block") satisfies fc.Arbitrary<Decision["kind"]>;
    fc.assert(
      fc.property(decision, kind, client, (d, k, dia) => {
        const specific = specificOf(renderDecision({ ...d, kind: k }, "PermissionRequest", dia).body);
        const expected = k === "allow" ? "allow" : "deny";
        // deepagents reads `decision` alone, and some versions refuse the answer over any other key.
        expect(specific.permissionDecision).toBe(dia === "deepagents" ? undefined : expected);
        expect((specific.decision as Record<string, unknown> | undefined)?.behavior).toBe(expected);
      }),
      { numRuns: 300 },
    );
  });

  it("blocks every event whose block acts, whether the decision says block or deny", () => {
    const client = fc.constantFrom<Dialect>("claude-code", "deepcode", "deepagents");
    const kind = fc.constantFrom("deny", "block") satisfies fc.Arbitrary<Decision["kind"]>;
    fc.assert(
      fc.property(decision, kind, fc.constantFrom(...BLOCKING_EVENTS), client, (d, k, e, dia) => {
        expect(parsed(renderDecision({ ...d, kind: k }, e, dia).body).decision).toBe("block");
      }),
      { numRuns: 300 },
    );
  });

  it("carries a systemMessage and a stop everywhere but PreCompact and deepagents legacy", () => {
    const client = fc.constantFrom<Dialect>("claude-code", "deepcode", "deepagents");
    const notPreCompact = event.filter((e) => e !== "PreCompact");
    fc.assert(
      fc.property(decision, notPreCompact, client, fc.string({ minLength: 1 }), (d, e, dia, message) => {
        const out = parsed(renderDecision({ ...d, systemMessage: message, stop: true }, e, dia).body);
        expect(out.systemMessage).toBe(message);
        expect(out.continue).toBe(false);
      }),
      { numRuns: 300 },
    );
  });
});

describe("renderRequestFailure", () => {
  const mode = fc.constantFrom("allow", "deny", "ask") satisfies fc.Arbitrary<"allow" | "deny" | "ask">;

  it("answers every failure with a body its client accepts, and never allows explicitly", () => {
    fc.assert(
      fc.property(mode, fc.option(event, { nil: undefined }), dialect, text, (m, e, dia, message) => {
        const { answer, kind } = renderRequestFailure(m, e, dia, message);
        expect(answerProblems(answer, e ?? "", dia)).toEqual([]);
        expect(kind).not.toBe("allow");
        expect(answer.body).not.toMatch(/"(?:permissionDecision|behavior)":"allow"/);
        if (m === "allow") expect(kind).toBe("none");
      }),
      { numRuns: 1500 },
    );
  });

  it("denies a guarded event under deny, in every client that reads an answer", () => {
    const client = fc.constantFrom<Dialect>("claude-code", "deepcode", "deepagents");
    const guarded = fc.constantFrom("PreToolUse", "PermissionRequest");
    fc.assert(
      fc.property(guarded, client, fc.string(), (e, dia, message) => {
        const { answer, kind } = renderRequestFailure("deny", e, dia, message);
        expect(kind).toBe("deny");
        const specific = specificOf(answer.body);
        const denied =
          e === "PermissionRequest" && dia === "deepagents"
            ? (specific.decision as Record<string, unknown> | undefined)?.behavior
            : specific.permissionDecision;
        expect(denied).toBe("deny");
      }),
      { numRuns: 150 },
    );
  });
});

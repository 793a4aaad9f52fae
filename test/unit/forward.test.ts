// biome-ignore-all lint/suspicious/noTemplateCurlyInString: Claude Code header templates under test, not JS templates
import { describe, expect, it, vi } from "vitest";
import type { RuleEffect } from "../../src/core/decision.js";
import {
  type ForwardFailureCode,
  fieldsNotPassedOn,
  forwardHeaders,
  interpolateHeaders,
  parseForwardResponse,
} from "../../src/core/forward.js";
import type { Dialect } from "../../src/core/hook-event.js";
import type { EnvReader } from "../../src/core/ports.js";

const ENV: Readonly<Record<string, string>> = {
  GW_AUTH: "s3cr3t",
  GW_AUTH_V2: "must-not-leak",
  lower_tok: "lt",
  UNLISTED: "must-not-leak",
  CRLF: "a\r\nX-Evil: 1",
  ONLY_RULE: "must-not-leak",
};
const env: EnvReader = (name) => ENV[name];
const ALLOWED = ["GW_AUTH", "UNSET_BUT_LISTED", "CRLF", "ONLY_RULE"];
const GLOBAL = ["GW_AUTH", "UNSET_BUT_LISTED", "CRLF"];

const one = (template: string, allowed: readonly string[] | undefined = ALLOWED, global = GLOBAL) =>
  interpolateHeaders({ authorization: template }, allowed, global, env);

describe("interpolateHeaders", () => {
  it.each([
    // clients.md §3.3, Claude Code column
    ["Bearer $GW_AUTH", "Bearer s3cr3t", []],
    ["Bearer ${GW_AUTH}_V2", "Bearer s3cr3t_V2", []],
    ["Bearer $GW_AUTH_V2", "Bearer ", ["GW_AUTH_V2"]],
    ["Bearer $lower_tok", "Bearer $lower_tok", []],
    ["Bearer $UNLISTED", "Bearer ", ["UNLISTED"]],
    ["$CRLF", "aX-Evil: 1", []],
    ["Bearer $UNSET_BUT_LISTED", "Bearer ", []],
    // beyond the table
    ["${GW_AUTH}${GW_AUTH}", "s3cr3ts3cr3t", []],
    ["$GW_AUTH-$GW_AUTH", "s3cr3t-s3cr3t", []],
    ["Bearer ${lower_tok} $1 $ ${}", "Bearer ${lower_tok} $1 $ ${}", []],
    ["Bearer $ONLY_RULE", "Bearer ", ["ONLY_RULE"]],
    ["$UNLISTED $GW_AUTH_V2 ${UNLISTED}", "  ", ["UNLISTED", "GW_AUTH_V2"]],
    ["a\r\nX-Evil: 1\0", "aX-Evil: 1", []],
  ])("%j becomes %j", (template, expected, dropped) => {
    expect(one(template)).toStrictEqual({ headers: { authorization: expected }, dropped });
  });

  it("interpolates nothing when egress.httpHookAllowedEnvVars is undefined", () => {
    expect(
      interpolateHeaders({ a: "Bearer $GW_AUTH", b: "${CRLF}x", c: "$lower_tok" }, ALLOWED, undefined, env),
    ).toStrictEqual({
      headers: { a: "Bearer ", b: "x", c: "$lower_tok" },
      dropped: ["GW_AUTH", "CRLF"],
    });
  });

  it("interpolates nothing when the rule lists no allowedEnvVars", () => {
    expect(interpolateHeaders({ authorization: "Bearer $GW_AUTH" }, undefined, GLOBAL, env)).toStrictEqual({
      headers: { authorization: "Bearer " },
      dropped: ["GW_AUTH"],
    });
  });

  it("never reads a variable that is not allowed", () => {
    const reader = vi.fn(env);
    interpolateHeaders({ a: "$GW_AUTH $UNLISTED $ONLY_RULE" }, ALLOWED, GLOBAL, reader);
    expect(reader.mock.calls).toEqual([["GW_AUTH"]]);
  });

  it("leaves header names alone and keeps every header", () => {
    expect(interpolateHeaders({ "X-$GW_AUTH": "v" }, ALLOWED, GLOBAL, env).headers).toStrictEqual({
      "X-$GW_AUTH": "v",
    });
    const own = JSON.parse('{"__proto__": "$GW_AUTH"}') as Record<string, string>;
    expect(Object.entries(interpolateHeaders(own, ALLOWED, GLOBAL, env).headers)).toEqual([
      ["__proto__", "s3cr3t"],
    ]);
  });

  it("sends no headers when there are none", () => {
    expect(interpolateHeaders(undefined, ALLOWED, GLOBAL, env)).toStrictEqual({ headers: {}, dropped: [] });
  });
});

const parse = (body: string, event = "PreToolUse", status = 200, dialect: Dialect = "claude-code") =>
  parseForwardResponse("r1", status, body, event, dialect);
const effect = (fields: Omit<RuleEffect, "ruleId"> = {}) => ({
  ok: true,
  value: { ruleId: "r1", ...fields },
});
const failed = (code: ForwardFailureCode) => ({ ok: false, error: { code, message: expect.any(String) } });
const json = (value: unknown) => JSON.stringify(value);
const pre = (fields: Record<string, unknown>) =>
  json({ hookSpecificOutput: { hookEventName: "PreToolUse", ...fields } });

describe("parseForwardResponse: status and body (clients.md §4.1, §4.2)", () => {
  const deny = pre({ permissionDecision: "deny", permissionDecisionReason: "no" });

  it.each([100, 199, 301, 302, 304, 400, 403, 404, 500, 503, 0, Number.NaN])(
    "ignores the body of an HTTP %s answer (TV-07, TV-08)",
    (status) => {
      expect(parse(deny, "PreToolUse", status)).toStrictEqual({
        ok: false,
        error: { code: "FORWARD_HTTP_STATUS", message: `HTTP ${status} from the downstream hook` },
      });
    },
  );

  it.each([200, 201, 204, 299])("reads the body of an HTTP %s answer", (status) => {
    expect(parse(deny, "PreToolUse", status)).toStrictEqual(effect({ decision: "deny", reason: "no" }));
  });

  it.each([
    ["an empty body (TV-05)", ""],
    ["whitespace", " \r\n\t "],
    ["a lone BOM", "\uFEFF"],
    ['{"async": true}, whatever else it says', '{"async": true, "decision": "block"}'],
    ["an object with unknown keys only", '{"ok": true, "foo": 1}'],
    ["an empty object", "{}"],
    ["async false, an unknown key", '{"async": false}'],
  ])("has no opinion on %s", (_, body) => {
    expect(parse(body)).toStrictEqual(effect());
  });

  it.each([
    ["text (TV-06)", "OK", "FORWARD_NOT_JSON"],
    ["an array", '[{"decision": "block"}]', "FORWARD_NOT_JSON"],
    ["null", "null", "FORWARD_NOT_JSON"],
    ["a quoted string", '"{}"', "FORWARD_NOT_JSON"],
    ["a number", "1", "FORWARD_NOT_JSON"],
    ["HTML", "<html>502</html>", "FORWARD_NOT_JSON"],
    ["truncated JSON", '{"decision": "block"', "FORWARD_INVALID_JSON"],
    ["JSON with a trailing comma", '{"decision": "block",}', "FORWARD_INVALID_JSON"],
    ["an object followed by text", '{"decision": "block"} ok', "FORWARD_INVALID_JSON"],
  ] as const)("fails on %s", (_, body, code) => {
    expect(parse(body)).toStrictEqual(failed(code));
  });

  it("reads a BOM-prefixed JSON body", () => {
    expect(parse(`\uFEFF${json({ decision: "block", reason: "nope" })}\n`)).toStrictEqual(
      effect({ decision: "deny", reason: "nope" }),
    );
  });

  it("never throws, whatever the body", () => {
    const deep = `${'{"a":'.repeat(200_000)}1${"}".repeat(200_000)}`;
    const bodies = [
      deep,
      '{"__proto__": {"decision": "block"}}',
      '{"constructor": {"hookEventName": 1}, "hasOwnProperty": 1}',
      '{"hookSpecificOutput": {"hookEventName": "PreToolUse", "__proto__": {"permissionDecision": "deny"}}}',
      "\u0000",
      "{\u0000}",
    ];
    for (const body of bodies) {
      for (const event of ["PreToolUse", "PermissionRequest", "Stop", "PreCompact", "", "tool.use"]) {
        expect(() => parse(body, event)).not.toThrow();
      }
    }
    expect(parse('{"__proto__": {"decision": "block"}}', "Stop")).toStrictEqual(effect());
  });
});

describe("parseForwardResponse: what a failure message quotes of the answer", () => {
  // A policy secret no masking by shape knows, placed across the 100-character cut.
  const SECRET = "Qm7vX2pL9rT4wZ8kN3cF6hJ1";
  const across = `${"x".repeat(90)}${SECRET} and more`;
  it.each([
    ["text", across, "FORWARD_NOT_JSON"],
    ["invalid JSON", `{${across}`, "FORWARD_INVALID_JSON"],
    ["an off-schema value", json({ continue: across }), "FORWARD_OFF_SCHEMA"],
    [
      "an answer for another event",
      json({ hookSpecificOutput: { hookEventName: across } }),
      "FORWARD_WRONG_EVENT",
    ],
  ] as const)("scrubs the policy's secrets from %s before cutting it", (_, body, code) => {
    const result = parseForwardResponse("r1", 200, body, "PreToolUse", "claude-code", [SECRET]);
    expect(result).toStrictEqual(failed(code));
    const message = result.ok ? "" : result.error.message;
    expect(message).toMatch(/x{90}\[masked\] a?…/);
    expect(message).not.toContain(SECRET.slice(0, 4));
  });

  // A server that wraps its lines, or a secret pasted with a zero-width space: the message quotes
  // the character as an escape (`\t`), between the secret's two halves, for the agent to read.
  it.each([
    ["a tab", "\t"],
    ["a newline", "\n"],
    ["a zero-width space", "\u200b"],
    ["a CSI's introducer", "\u001b["],
  ])("scrubs a secret that %s splits from what it quotes", (_, split) => {
    const quoted = `${SECRET.slice(0, 12)}${split}${SECRET.slice(12)}`;
    for (const body of [`key ${quoted}`, json({ continue: `key ${quoted}` })]) {
      const result = parseForwardResponse("r1", 200, body, "PreToolUse", "claude-code", [SECRET]);
      const message = result.ok ? "" : result.error.message;
      expect(message).toContain("key [masked]");
      expect(message).not.toContain(SECRET.slice(12));
    }
  });

  it("cuts the body it quotes between characters, never between an emoji's two halves", () => {
    const result = parse(`${"x".repeat(99)}\u{1F600} and more`);
    const message = result.ok ? "" : result.error.message;
    expect(message).toContain(`"${"x".repeat(99)}…"`);
  });

  it("masks a credential by its shape before cutting, too", () => {
    const result = parse(`${"x".repeat(90)} ghp_${"a".repeat(36)}`);
    const message = result.ok ? "" : result.error.message;
    expect(message).toContain(`${"x".repeat(90)} [masked]`);
    expect(message).not.toMatch(/ghp_|aaaa/);
  });
});

describe("parseForwardResponse: the policy's secrets in the texts the agent is handed", () => {
  // A value pasted from a web page may hold a zero-width space or a direction mark: a secret as
  // the policy has it (collectSecrets keeps such values whole), quoted back by the server.
  const HOLDING = "Qm7vX2pL9rT4\u200bwZ8kN3cF6hJ1";
  const SPLIT = "Yt5bR8nE2sD6gH9jK4mP7qW3";
  it.each([
    ["one that holds a character the agent is not handed", HOLDING, HOLDING],
    ["one split by such a character", SPLIT, `${SPLIT.slice(0, 8)}\u001b${SPLIT.slice(8)}`],
  ])("masks %s", (_, secret, quoted) => {
    const body = json({
      systemMessage: `seen ${quoted}`,
      hookSpecificOutput: {
        hookEventName: "PreToolUse",
        permissionDecision: "deny",
        permissionDecisionReason: `token ${quoted} refused`,
        additionalContext: `ctx ${quoted}`,
      },
    });
    const result = parseForwardResponse("r1", 200, body, "PreToolUse", "claude-code", [secret]);
    expect(result).toStrictEqual(
      effect({
        decision: "deny",
        reason: "token [masked] refused",
        context: "ctx [masked]",
        systemMessage: "seen [masked]",
      }),
    );
  });
});

describe("parseForwardResponse: schema (clients.md §6.1)", () => {
  it.each([
    ["continue", { continue: "no" }],
    ["stopReason", { continue: false, stopReason: 1 }],
    ["decision", { decision: "allow" }],
    ["decision", { decision: "deny" }],
    ["decision", { decision: null }],
    ["reason", { decision: "block", reason: 5 }],
    ["systemMessage", { systemMessage: {} }],
    ["hookSpecificOutput", { hookSpecificOutput: [] }],
    ["hookSpecificOutput", { hookSpecificOutput: "PreToolUse" }],
    ["hookSpecificOutput.hookEventName", { hookSpecificOutput: { permissionDecision: "deny" } }],
    ["hookSpecificOutput.hookEventName", { hookSpecificOutput: { hookEventName: 7 } }],
    [
      "hookSpecificOutput.permissionDecision",
      { hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: "approve" } },
    ],
    [
      "hookSpecificOutput.permissionDecision",
      { hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: "block" } },
    ],
    [
      "hookSpecificOutput.permissionDecisionReason",
      { hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecisionReason: 1 } },
    ],
    [
      "hookSpecificOutput.updatedInput",
      { hookSpecificOutput: { hookEventName: "PreToolUse", updatedInput: "x" } },
    ],
    [
      "hookSpecificOutput.updatedInput",
      { hookSpecificOutput: { hookEventName: "PreToolUse", updatedInput: [] } },
    ],
    [
      "hookSpecificOutput.additionalContext",
      { hookSpecificOutput: { hookEventName: "PreToolUse", additionalContext: ["x"] } },
    ],
  ])("PreToolUse: a bad %s is off-schema and named", (path, output) => {
    const result = parse(json(output));
    expect(result).toStrictEqual(failed("FORWARD_OFF_SCHEMA"));
    expect(!result.ok && result.error.message).toContain(`${path}:`);
  });

  it.each([
    ["hookSpecificOutput.decision", { decision: "allow" }],
    ["hookSpecificOutput.decision.behavior", { decision: {} }],
    ["hookSpecificOutput.decision.behavior", { decision: { behavior: "ask" } }],
    ["hookSpecificOutput.decision.message", { decision: { behavior: "deny", message: 1 } }],
    ["hookSpecificOutput.decision.interrupt", { decision: { behavior: "deny", interrupt: "yes" } }],
    ["hookSpecificOutput.decision.updatedInput", { decision: { behavior: "allow", updatedInput: "x" } }],
    ["hookSpecificOutput.permissionDecision", { permissionDecision: "approve" }],
  ])("PermissionRequest: a bad %s is off-schema and named", (path, fields) => {
    const result = parse(
      json({ hookSpecificOutput: { hookEventName: "PermissionRequest", ...fields } }),
      "PermissionRequest",
    );
    expect(result).toStrictEqual(failed("FORWARD_OFF_SCHEMA"));
    expect(!result.ok && result.error.message).toContain(`${path}:`);
  });

  it("PermissionRequest: a bad hookSpecificOutput.decision.updatedPermissions is off-schema and named", () => {
    for (const updatedPermissions of ["everything", {}, ["addRules"], null]) {
      const result = parse(
        json({
          hookSpecificOutput: {
            hookEventName: "PermissionRequest",
            decision: { behavior: "allow", updatedPermissions },
          },
        }),
        "PermissionRequest",
      );
      expect(result).toStrictEqual(failed("FORWARD_OFF_SCHEMA"));
      expect(!result.ok && result.error.message).toContain("hookSpecificOutput.decision.updatedPermissions:");
    }
  });

  it.each([
    ["suppressOutput", { suppressOutput: "no" }],
    ["terminalSequence", { terminalSequence: 7 }],
  ])("a bad top-level %s is off-schema, as Claude Code fails the whole answer on it", (path, fields) => {
    const result = parse(
      json({ ...fields, hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: "allow" } }),
    );
    expect(result).toStrictEqual(failed("FORWARD_OFF_SCHEMA"));
    expect(!result.ok && result.error.message).toContain(`${path}:`);
    expect(parse(json({ suppressOutput: true, terminalSequence: "\u0007" }))).toStrictEqual(effect());
    // deepcode validates nothing (clients.md §6.3): its deny stands beside a mistyped field.
    const deny = { hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: "deny" } };
    for (const extra of [{ suppressOutput: "true" }, { terminalSequence: null }])
      expect(parse(json({ ...extra, ...deny }), "PreToolUse", 200, "deepcode")).toStrictEqual(
        effect({ decision: "deny", reason: expect.any(String) }),
      );
  });

  describe("PermissionRequest without the decision object", () => {
    const body = (permissionDecision: string) =>
      json({
        hookSpecificOutput: {
          hookEventName: "PermissionRequest",
          permissionDecision,
          permissionDecisionReason: "why",
        },
      });

    it("is off-schema from Claude Code, whose schema requires it, when it would grant: never a grant", () => {
      const result = parse(body("allow"), "PermissionRequest");
      expect(result).toStrictEqual(failed("FORWARD_OFF_SCHEMA"));
      expect(!result.ok && result.error.message).toContain(
        "hookSpecificOutput.decision: required field is missing",
      );
      // A deny or ask it states is kept, fail-safe (a review: it became onError, an allow by default).
      expect(parse(body("deny"), "PermissionRequest")).toStrictEqual(
        effect({ decision: "deny", reason: "why" }),
      );
      expect(parse(body("ask"), "PermissionRequest")).toStrictEqual(effect({ withheld: "ask" }));
      expect(
        parse(json({ hookSpecificOutput: { hookEventName: "PermissionRequest" } }), "PermissionRequest"),
      ).toStrictEqual(effect());
    });

    it("reads deepcode's permissionDecision there (clients.md §6.3)", () => {
      expect(parse(body("deny"), "PermissionRequest", 200, "deepcode")).toStrictEqual(
        effect({ decision: "deny", reason: "why" }),
      );
      // Not sent, but it still outranks another rule's allow (ask over allow).
      expect(parse(body("ask"), "PermissionRequest", 200, "deepcode")).toStrictEqual(
        effect({ withheld: "ask" }),
      );
    });
  });

  it("fails TV-10 (hookSpecificOutput without hookEventName), even next to a block", () => {
    expect(parse('{"hookSpecificOutput":{"permissionDecision":"deny"}}')).toStrictEqual(
      failed("FORWARD_OFF_SCHEMA"),
    );
    expect(parse('{"decision":"block","hookSpecificOutput":{"permissionDecision":"deny"}}')).toStrictEqual(
      failed("FORWARD_OFF_SCHEMA"),
    );
  });

  it("fails TV-11 (an answer for another event)", () => {
    expect(
      parse('{"hookSpecificOutput":{"hookEventName":"PostToolUse","additionalContext":"x"}}'),
    ).toStrictEqual({
      ok: false,
      error: {
        code: "FORWARD_WRONG_EVENT",
        message: 'the downstream hook answered for "PostToolUse", not "PreToolUse"',
      },
    });
  });

  it("escapes in a failure's quote of the answer what JSON leaves raw and the agent's terminal acts on", () => {
    // The message is the onError reason the agent's terminal shows, and the answer may echo what
    // the agent sent: a C1 CSI, a line separator, an override or a direction mark there acted.
    const name = "Post\u009b2J\u2028\u202e\u200fTool\u200bUse";
    expect(
      parse(json({ hookSpecificOutput: { hookEventName: name, additionalContext: "x" } })),
    ).toStrictEqual({
      ok: false,
      error: {
        code: "FORWARD_WRONG_EVENT",
        message:
          'the downstream hook answered for "Post\\u009b2J\\u2028\\u202e\\u200fTool\\u200bUse", not "PreToolUse"',
      },
    });
  });

  it("drops a mismatched hookSpecificOutput when the answer also blocks, as CC-332 does", () => {
    const body = json({
      decision: "block",
      reason: "stop",
      hookSpecificOutput: { hookEventName: "PostToolUse", additionalContext: "x", updatedInput: "ignored" },
    });
    expect(parse(body)).toStrictEqual(effect({ decision: "deny", reason: "stop" }));
    expect(parse(body, "Stop")).toStrictEqual(effect({ decision: "block", reason: "stop" }));
  });

  it("fails TV-13 (permissionDecision approve)", () => {
    expect(
      parse('{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"approve"}}'),
    ).toStrictEqual(failed("FORWARD_OFF_SCHEMA"));
  });

  it("ignores unknown keys at every level", () => {
    const body = json({
      suppressOutput: true,
      terminalSequence: "x",
      extra: { anything: [1] },
      hookSpecificOutput: {
        hookEventName: "PreToolUse",
        permissionDecision: "ask",
        permissionDisplay: { internal: true },
        sessionTitle: 3,
      },
    });
    expect(parse(body)).toStrictEqual(effect({ decision: "ask" }));
  });

  it("ignores the PreToolUse fields on an event whose variant lacks them, as Claude Code strips them", () => {
    const body = json({
      hookSpecificOutput: {
        hookEventName: "PostToolUse",
        permissionDecision: "approve",
        updatedInput: "x",
        additionalContext: "lint is clean",
      },
    });
    expect(parse(body, "PostToolUse")).toStrictEqual(effect({ context: "lint is clean" }));
  });
});

describe("parseForwardResponse: effects (clients.md §6.2)", () => {
  it.each([
    [
      "TV-01 deny",
      "PreToolUse",
      pre({ permissionDecision: "deny", permissionDecisionReason: "rm -rf / is forbidden" }),
      { decision: "deny", reason: "rm -rf / is forbidden" },
    ],
    [
      "TV-02 allow",
      "PreToolUse",
      pre({ permissionDecision: "allow", permissionDecisionReason: "ci-safe" }),
      { decision: "allow", reason: "ci-safe" },
    ],
    [
      "TV-03 ask",
      "PreToolUse",
      pre({ permissionDecision: "ask", permissionDecisionReason: "force push" }),
      { decision: "ask", reason: "force push" },
    ],
    ["defer", "PreToolUse", pre({ permissionDecision: "defer" }), { decision: "defer" }],
    [
      "TV-04 allow with updatedInput",
      "PreToolUse",
      pre({ permissionDecision: "allow", updatedInput: { file_path: "/p/.env.example", content: "X" } }),
      { decision: "allow", updatedInput: { file_path: "/p/.env.example", content: "X" } },
    ],
    [
      "updatedInput dropped on deny",
      "PreToolUse",
      pre({ permissionDecision: "deny", updatedInput: { a: 1 } }),
      { decision: "deny", reason: 'the downstream hook (rule "r1") decided deny' },
    ],
    [
      "updatedInput dropped on ask, and the user told the dialog is for the call as it came",
      "PreToolUse",
      pre({ permissionDecision: "ask", updatedInput: { a: 1 } }),
      {
        decision: "ask",
        reason:
          "hookgate did not apply the downstream hook's updatedInput: it sends a rewrite only with an allow, so this asks about the call as it came",
      },
    ],
    [
      "updatedInput dropped on defer, said after the reason",
      "PreToolUse",
      pre({ permissionDecision: "defer", permissionDecisionReason: "later", updatedInput: { a: 1 } }),
      {
        decision: "defer",
        reason:
          "later (hookgate did not apply the downstream hook's updatedInput: it sends a rewrite only with an allow, so this defers the call as it came)",
      },
    ],
    ["updatedInput dropped without a decision", "PreToolUse", pre({ updatedInput: { a: 1 } }), {}],
    [
      "TV-12 legacy block",
      "PreToolUse",
      '{"decision":"block","reason":"nope"}',
      { decision: "deny", reason: "nope" },
    ],
    [
      "legacy approve",
      "PreToolUse",
      '{"decision":"approve","reason":"fine"}',
      { decision: "allow", reason: "fine" },
    ],
    [
      "permissionDecisionReason before reason",
      "PreToolUse",
      json({
        reason: "outer",
        hookSpecificOutput: {
          hookEventName: "PreToolUse",
          permissionDecision: "deny",
          permissionDecisionReason: "inner",
        },
      }),
      { decision: "deny", reason: "inner" },
    ],
    [
      "reason when permissionDecisionReason is absent",
      "PreToolUse",
      json({
        reason: "outer",
        hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: "deny" },
      }),
      { decision: "deny", reason: "outer" },
    ],
    [
      "reason when permissionDecisionReason is empty, as Claude Code's || reads it",
      "PreToolUse",
      json({
        reason: "outer",
        hookSpecificOutput: {
          hookEventName: "PreToolUse",
          permissionDecision: "deny",
          permissionDecisionReason: "",
        },
      }),
      { decision: "deny", reason: "outer" },
    ],
    [
      "an empty reason is none",
      "PreToolUse",
      json({
        reason: "",
        hookSpecificOutput: {
          hookEventName: "PreToolUse",
          permissionDecision: "deny",
          permissionDecisionReason: "",
        },
      }),
      { decision: "deny", reason: 'the downstream hook (rule "r1") decided deny' },
    ],
    [
      "a reason of nothing but characters that act in a terminal is none",
      "PreToolUse",
      json({
        reason: "\u200f",
        hookSpecificOutput: {
          hookEventName: "PreToolUse",
          permissionDecision: "deny",
          permissionDecisionReason: "\u001b\u2066",
        },
      }),
      { decision: "deny", reason: 'the downstream hook (rule "r1") decided deny' },
    ],
    // Each line end reaches the agent as a newline: a reason of nothing but them says nothing.
    [
      "a reason of nothing but line ends and spaces gives way to the other",
      "PreToolUse",
      json({
        reason: "outer",
        hookSpecificOutput: {
          hookEventName: "PreToolUse",
          permissionDecision: "deny",
          permissionDecisionReason: "\r\u2028",
        },
      }),
      { decision: "deny", reason: "outer" },
    ],
    [
      "a reason of nothing but line ends and spaces is none",
      "PreToolUse",
      json({
        reason: " \u2029",
        hookSpecificOutput: {
          hookEventName: "PreToolUse",
          permissionDecision: "deny",
          permissionDecisionReason: "\r",
        },
      }),
      { decision: "deny", reason: 'the downstream hook (rule "r1") decided deny' },
    ],
    [
      "block outranks permissionDecision allow",
      "PreToolUse",
      json({
        decision: "block",
        hookSpecificOutput: {
          hookEventName: "PreToolUse",
          permissionDecision: "allow",
          updatedInput: { a: 1 },
        },
      }),
      { decision: "deny", reason: 'the downstream hook (rule "r1") decided deny' },
    ],
    [
      "block outranks permissionDecision ask, with the block's reason, not the ask's",
      "PreToolUse",
      json({
        decision: "block",
        reason: "no force pushes",
        hookSpecificOutput: {
          hookEventName: "PreToolUse",
          permissionDecision: "ask",
          permissionDecisionReason: "please confirm",
        },
      }),
      { decision: "deny", reason: "no force pushes" },
    ],
    [
      "block outranks permissionDecision allow, never with the allow's reason",
      "PreToolUse",
      json({
        decision: "block",
        hookSpecificOutput: {
          hookEventName: "PreToolUse",
          permissionDecision: "allow",
          permissionDecisionReason: "ci-safe",
        },
      }),
      { decision: "deny", reason: 'the downstream hook (rule "r1") decided deny' },
    ],
    [
      "permissionDecision ask outranks approve",
      "PreToolUse",
      json({
        decision: "approve",
        hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: "ask" },
      }),
      { decision: "ask" },
    ],
    [
      "additionalContext and systemMessage",
      "PreToolUse",
      json({
        systemMessage: "heads up",
        hookSpecificOutput: { hookEventName: "PreToolUse", additionalContext: "use pnpm" },
      }),
      { context: "use pnpm", systemMessage: "heads up" },
    ],
    [
      "TV-19 PermissionRequest allow",
      "PermissionRequest",
      json({
        hookSpecificOutput: {
          hookEventName: "PermissionRequest",
          decision: { behavior: "allow", updatedPermissions: [{ type: "addRules" }] },
        },
      }),
      { decision: "allow" },
    ],
    [
      "PermissionRequest allow with updatedInput",
      "PermissionRequest",
      json({
        hookSpecificOutput: {
          hookEventName: "PermissionRequest",
          decision: { behavior: "allow", updatedInput: { command: "npm run lint" } },
        },
      }),
      { decision: "allow", updatedInput: { command: "npm run lint" } },
    ],
    [
      "TV-20 PermissionRequest in both shapes",
      "PermissionRequest",
      json({
        hookSpecificOutput: {
          hookEventName: "PermissionRequest",
          decision: { behavior: "deny", message: "no" },
          permissionDecision: "deny",
          permissionDecisionReason: "no",
        },
      }),
      { decision: "deny", reason: "no" },
    ],
    [
      "PermissionRequest decision object over permissionDecision",
      "PermissionRequest",
      json({
        hookSpecificOutput: {
          hookEventName: "PermissionRequest",
          decision: { behavior: "deny", message: "msg" },
          permissionDecision: "allow",
        },
      }),
      { decision: "deny", reason: "msg" },
    ],
    [
      "PermissionRequest deny with interrupt",
      "PermissionRequest",
      json({
        hookSpecificOutput: {
          hookEventName: "PermissionRequest",
          decision: { behavior: "deny", interrupt: true },
        },
      }),
      { decision: "deny", reason: 'the downstream hook (rule "r1") decided deny', stop: true },
    ],
    [
      "PermissionRequest block over a granting decision object, with the block's reason",
      "PermissionRequest",
      json({
        decision: "block",
        reason: "nope",
        hookSpecificOutput: {
          hookEventName: "PermissionRequest",
          decision: { behavior: "allow" },
          permissionDecisionReason: "fine by me",
        },
      }),
      { decision: "deny", reason: "nope" },
    ],
    [
      "PermissionRequest legacy block",
      "PermissionRequest",
      '{"decision":"block","reason":"nope"}',
      { decision: "deny", reason: "nope" },
    ],
    [
      "TV-14 Stop block",
      "Stop",
      '{"decision":"block","reason":"Run npm test and report results before finishing."}',
      { decision: "block", reason: "Run npm test and report results before finishing." },
    ],
    [
      "Stop block without a reason",
      "Stop",
      '{"decision":"block"}',
      { decision: "block", reason: 'the downstream hook (rule "r1") decided block' },
    ],
    [
      "TV-17 UserPromptSubmit block",
      "UserPromptSubmit",
      '{"decision":"block","reason":"Prompt contains a credential"}',
      { decision: "block", reason: "Prompt contains a credential" },
    ],
    [
      "TV-27 PostToolUse block",
      "PostToolUse",
      '{"decision":"block","reason":"Lint failed: 3 errors"}',
      { decision: "block", reason: "Lint failed: 3 errors" },
    ],
    ["approve is not honoured on PostToolUse", "PostToolUse", '{"decision":"approve","reason":"fine"}', {}],
    // Claude Code grants a permission dialog only through the decision object (clients.md §6.2).
    [
      "approve does not grant a PermissionRequest",
      "PermissionRequest",
      '{"decision":"approve","reason":"fine"}',
      {},
    ],
    [
      "block is not honoured on Notification",
      "Notification",
      '{"decision":"block","reason":"x","systemMessage":"m"}',
      { systemMessage: "m", withheld: "block" },
    ],
    [
      "TV-36 continue false",
      "PreToolUse",
      json({
        continue: false,
        stopReason: "outside src",
        hookSpecificOutput: {
          hookEventName: "PreToolUse",
          permissionDecision: "deny",
          permissionDecisionReason: "outside src",
        },
      }),
      { decision: "deny", reason: "outside src", stop: true, stopReason: "outside src" },
    ],
    ["continue false alone", "Stop", '{"continue":false}', { stop: true }],
    ["continue true", "Stop", '{"continue":true,"stopReason":"unused"}', {}],
    [
      "TV-18 UserPromptSubmit context",
      "UserPromptSubmit",
      json({
        hookSpecificOutput: { hookEventName: "UserPromptSubmit", additionalContext: "Repo policy: use pnpm" },
      }),
      { context: "Repo policy: use pnpm" },
    ],
  ] as const)("%s", (_, event, body, expected) => {
    expect(parse(body, event)).toStrictEqual(effect(expected));
  });
});

describe("parseForwardResponse: PreCompact (clients.md §4.4)", () => {
  it.each([
    [
      "TV-23 text",
      "Preserve every API-contract decision verbatim.\n",
      "Preserve every API-contract decision verbatim.",
    ],
    ["an array", " [1, 2] ", "[1, 2]"],
    ["null", "null", "null"],
    ["text that starts like JSON", "{keep the API decisions}", "{keep the API decisions}"],
    // As the texts of a JSON answer: what acts in a terminal is dropped, tabs and newlines stay.
    [
      "text without its terminal controls",
      "Keep\u001b]52;c;eA==\u0007 the\tAPI\u202e decisions\r\nverbatim",
      "Keep the\tAPI decisions\nverbatim",
    ],
  ])("appends %s to the compaction instructions", (_, body, context) => {
    expect(parse(body, "PreCompact")).toStrictEqual(effect({ context }));
  });

  it.each([
    ["an empty body (TV-22)", "", {}],
    ["a JSON block", '{"decision":"block","reason":"not now"}', { decision: "block", reason: "not now" }],
    ["an empty JSON object", "{}", {}],
    // How hookgate words them (render.ts): a gateway forwarding to another passes them on.
    [
      "instructions as a reason",
      '{"reason":"Keep the API decisions."}',
      { context: "Keep the API decisions." },
    ],
  ] as const)("reads %s as hook output", (_, body, expected) => {
    expect(parse(body, "PreCompact")).toStrictEqual(effect(expected));
  });

  it("still fails on a non-2xx status and an off-schema object", () => {
    expect(parse("instructions", "PreCompact", 500)).toStrictEqual(failed("FORWARD_HTTP_STATUS"));
    expect(parse('{"decision":"stop"}', "PreCompact")).toStrictEqual(failed("FORWARD_OFF_SCHEMA"));
  });

  it("is text only on PreCompact", () => {
    expect(parse("Preserve everything.", "PostCompact")).toStrictEqual(failed("FORWARD_NOT_JSON"));
    // A reason without a decision is instructions on PreCompact alone.
    expect(parse('{"reason":"Preserve everything."}', "PostCompact")).toStrictEqual(effect({}));
  });
});

describe("parseForwardResponse: read as the client that sent the event reads it", () => {
  const denyWithout = (key: string, value: unknown) =>
    json({
      hookSpecificOutput: { [key]: value, permissionDecision: "deny", permissionDecisionReason: "no" },
    });

  it.each<[Dialect]>([["claude-code"], ["deepagents"]])(
    "%s: a PermissionRequest deny is told with the decision object's message, which it reads, over permissionDecisionReason, which it strips",
    (dialect) => {
      const body = json({
        hookSpecificOutput: {
          hookEventName: "PermissionRequest",
          decision: { behavior: "deny", message: "rm is not allowed in CI" },
          permissionDecision: "deny",
          permissionDecisionReason: "rm-policy",
        },
      });
      expect(parse(body, "PermissionRequest", 200, dialect)).toStrictEqual(
        effect({ decision: "deny", reason: "rm is not allowed in CI" }),
      );
      // Without a message the object's deny still says why, in the reason given beside it.
      const bare = json({
        hookSpecificOutput: {
          hookEventName: "PermissionRequest",
          decision: { behavior: "deny" },
          permissionDecisionReason: "rm-policy",
        },
      });
      expect(parse(bare, "PermissionRequest", 200, dialect)).toStrictEqual(
        effect({ decision: "deny", reason: "rm-policy" }),
      );
      // An empty message says nothing; the reason beside it does.
      const empty = json({
        hookSpecificOutput: {
          hookEventName: "PermissionRequest",
          decision: { behavior: "deny", message: "" },
          permissionDecisionReason: "rm-policy",
        },
      });
      expect(parse(empty, "PermissionRequest", 200, dialect)).toStrictEqual(
        effect({ decision: "deny", reason: "rm-policy" }),
      );
    },
  );

  it.each([
    [
      "names no event",
      json({ hookSpecificOutput: { permissionDecision: "deny", permissionDecisionReason: "no" } }),
    ],
    ["names another event", denyWithout("hookEventName", "PostToolUse")],
    ["names the event in another type", denyWithout("hookEventName", 7)],
    [
      "sits beside a top-level decision deepcode skips",
      json({ decision: "deny", ...JSON.parse(denyWithout("x", 1)) }),
    ],
  ])("deepcode: a deny whose answer %s is read, as deepcode checks neither", (_, body) => {
    expect(parse(body, "PreToolUse", 200, "deepcode")).toStrictEqual(
      effect({ decision: "deny", reason: "no" }),
    );
    expect(parse(body)).toStrictEqual(expect.objectContaining({ ok: false }));
  });

  it("deepcode: reads permissionReason first, and no PermissionRequest decision object but its deny", () => {
    const reasoned = json({
      hookSpecificOutput: {
        permissionDecision: "deny",
        permissionReason: "a",
        permissionDecisionReason: "b",
      },
    });
    expect(parse(reasoned, "PreToolUse", 200, "deepcode")).toStrictEqual(
      effect({ decision: "deny", reason: "a" }),
    );
    const object = (decision: unknown) =>
      json({ hookSpecificOutput: { hookEventName: "PermissionRequest", decision } });
    expect(parse(object({ behavior: "allow" }), "PermissionRequest", 200, "deepcode")).toStrictEqual(
      effect(),
    );
    expect(parse(object("allow"), "PermissionRequest", 200, "deepcode")).toStrictEqual(effect());
    expect(
      parse(object({ behavior: "deny", message: "m" }), "PermissionRequest", 200, "deepcode"),
    ).toStrictEqual(effect({ decision: "deny", reason: "m" }));
  });

  it.each([
    [
      "decision approve",
      json({ decision: "approve" }),
      'decision: expected the only value deepagents accepts, "block"',
    ],
    [
      "a hookSpecificOutput for an event without one",
      json({ hookSpecificOutput: { hookEventName: "Notification" } }),
      "deepagents has no output",
    ],
    ["a terminalSequence that is no string", json({ terminalSequence: 7 }), "terminalSequence"],
    [
      "a PermissionRequest allow without the decision object",
      json({ hookSpecificOutput: { hookEventName: "PermissionRequest", permissionDecision: "allow" } }),
      "hookSpecificOutput.decision: required field is missing",
    ],
  ])("deepagents: %s is off-schema, as deepagents drops the whole answer", (_, body, message) => {
    const event = body.includes("PermissionRequest") ? "PermissionRequest" : "PreToolUse";
    const result = parse(body, event, 200, "deepagents");
    expect(result).toStrictEqual(failed("FORWARD_OFF_SCHEMA"));
    expect(!result.ok && result.error.message).toContain(message);
  });

  it("deepagents: a hookSpecificOutput for another of its events is ignored, the rest read", () => {
    const body = json({
      decision: "block",
      reason: "r",
      hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: "allow" },
    });
    expect(parse(body, "UserPromptSubmit", 200, "deepagents")).toStrictEqual(
      effect({ decision: "block", reason: "r" }),
    );
    expect(parse(body, "UserPromptSubmit")).toStrictEqual(effect({ decision: "block", reason: "r" }));
    expect(
      parse(json({ hookSpecificOutput: { hookEventName: "PreToolUse" } }), "UserPromptSubmit"),
    ).toStrictEqual(failed("FORWARD_WRONG_EVENT"));
    expect(
      parse(
        json({ hookSpecificOutput: { hookEventName: "PreToolUse" } }),
        "UserPromptSubmit",
        200,
        "deepagents",
      ),
    ).toStrictEqual(effect());
  });
});

describe("fieldsNotPassedOn", () => {
  it("names a PermissionRequest allow's updatedPermissions, which hookgate never writes to the user's settings (TV-19)", () => {
    const body = json({
      hookSpecificOutput: {
        hookEventName: "PermissionRequest",
        decision: {
          behavior: "allow",
          updatedPermissions: [
            {
              type: "addRules",
              rules: [{ toolName: "Bash", ruleContent: "npm run lint" }],
              behavior: "allow",
              destination: "localSettings",
            },
          ],
        },
      },
    });
    expect(fieldsNotPassedOn(body, "PermissionRequest", "claude-code")).toEqual([
      "hookSpecificOutput.decision.updatedPermissions",
    ]);
    expect(
      fieldsNotPassedOn(
        json({ hookSpecificOutput: { hookEventName: "PermissionRequest", decision: { behavior: "allow" } } }),
        "PermissionRequest",
        "claude-code",
      ),
    ).toEqual([]);
  });
});

describe("forwardHeaders", () => {
  it("sends each header once: a rule's own content-type or user-agent, in any case, replaces hookgate's", () => {
    // A Headers object built from two names differing in case joins their values: on Workers a
    // rule's Content-Type went out as `application/cloudevents+json, application/json`.
    expect(forwardHeaders({ "Content-Type": "application/cloudevents+json", "X-Team": "a" })).toEqual({
      "user-agent": "hookgate",
      "Content-Type": "application/cloudevents+json",
      "X-Team": "a",
    });
    expect(forwardHeaders({})).toEqual({ "content-type": "application/json", "user-agent": "hookgate" });
  });
});

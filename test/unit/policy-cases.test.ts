import { describe, expect, it } from "vitest";
import {
  answerContext,
  caseBody,
  checkExpectation,
  type Expectation,
  type Observed,
  parseCases,
  ruleCoverage,
} from "../../src/core/policy-cases.js";

const event = { hook_event_name: "PreToolUse", tool_name: "Bash", tool_input: { command: "ls" } };

const problems = (document: unknown) => {
  const result = parseCases(typeof document === "string" ? document : JSON.stringify(document));
  if (result.ok) throw new Error("expected the cases file to be invalid");
  return result.error.map((i) => `${i.path}: ${i.message}`);
};

describe("parseCases", () => {
  it("accepts inline events, event files, defaults and every expectation", () => {
    const result = parseCases(
      JSON.stringify({
        client: "claude-code",
        team: "platform",
        cases: [
          {
            name: "ls",
            event,
            expect: { decision: "none", reason: "", context: false, rules: [], shadowed: [] },
          },
          {
            event: "events/stop.json",
            with: { stop_hook_active: true },
            team: "mobile",
            expect: { decision: "block", context: "x" },
          },
        ],
      }),
    );
    expect(result.ok).toBe(true);
  });

  it("lists every problem with its JSON path", () => {
    expect(
      problems({
        client: "cursor",
        cases: [
          { event, expect: { decison: "deny" } },
          { event: 42, expect: { decision: "maybe" } },
          { event, expect: { decision: "deny", rules: "no-rm-root" }, extra: true },
        ],
      }),
    ).toEqual([
      '$.client: must be one of "claude-code", "deepcode", "deepagents", "deepagents-legacy"',
      "$.cases[0].expect.decision: is required",
      '$.cases[0].expect: unknown key "decison"',
      "$.cases[1].event: must be an event object or the path of a JSON file holding one",
      '$.cases[1].expect.decision: must be one of "allow", "deny", "ask", "defer", "block", "none"',
      '$.cases[2].expect.rules: must be a list: write ["no-rm-root"] for a list of one',
      '$.cases[2]: unknown key "extra"',
    ]);
  });

  it("says what is wrong with a file that is not JSON or has no cases", () => {
    expect(problems("{")[0]).toMatch(/^\$: is not valid JSON/);
    expect(problems({ cases: [] })).toEqual(["$.cases: must list at least one case"]);
    expect(problems({})).toEqual(["$.cases: is required"]);
  });

  it("refuses a case with a key twice, which would test only the last", () => {
    const text =
      '{"cases": [{"name": "rm", "event": {}, "expect": {"decision": "deny"},\n  "expect": {"decision": "none"}}]}';
    expect(problems(text)).toEqual([
      "$.cases[0].expect: appears again at line 2; JSON keeps only the last, so merge the two or delete one",
    ]);
  });

  it('takes a "__proto__" key inside an event\'s fields, which an agent may send and the body keeps', () => {
    // Before, the policy's "__proto__" refusal reached cases files whole, so a
    // case whose tool_input held such a key (an MCP tool's argument) was refused, though the
    // body sent keeps it as the agent's would.
    const text =
      '{"cases": [{"event": {"tool_name": "mcp__x__y", "tool_input": {"__proto__": {"a": 1}}},\n' +
      '  "with": {"tool_input": {"\\u005f_proto__": 2}}, "expect": {"decision": "none"}}]}';
    const parsed = parseCases(text);
    expect(parsed.ok).toBe(true);
    if (!parsed.ok) return;
    const [only] = parsed.value.cases;
    expect(caseBody(only?.event as Record<string, unknown>, only?.with)).toBe(
      '{"tool_name":"mcp__x__y","tool_input":{"__proto__":2}}',
    );
    expect(caseBody(only?.event as Record<string, unknown>)).toBe(
      '{"tool_name":"mcp__x__y","tool_input":{"__proto__":{"a":1}}}',
    );
  });

  it('refuses a "__proto__" key elsewhere: at an event\'s top level, or in an expectation, it would be dropped', () => {
    const text =
      '{"cases": [{"event": {"__proto__": {"tool_name": "Bash"}},\n  "with": {"__proto__": 1}, "expect": {"decision": "none", "__proto__": 1}}]}';
    expect(problems(text).map((p) => p.split(":")[0])).toEqual([
      "$.cases[0].event.__proto__",
      "$.cases[0].with.__proto__",
      "$.cases[0].expect.__proto__",
    ]);
  });
});

describe("caseBody", () => {
  it("lays `with` over the event's top-level fields", () => {
    expect(JSON.parse(caseBody(event, { tool_input: { command: "rm -rf /" } }))).toEqual({
      ...event,
      tool_input: { command: "rm -rf /" },
    });
    expect(caseBody(event)).toBe(JSON.stringify(event));
  });
});

const observed = (over: Partial<Observed> = {}): Observed => ({
  decision: "deny",
  reason: "Deleting from / is never allowed",
  context: undefined,
  rules: ["no-rm-root"],
  shadowed: [],
  ...over,
});

describe("checkExpectation", () => {
  it.each([
    ["the decision", { decision: "deny" }],
    ["a reason substring", { decision: "deny", reason: "never allowed" }],
    ["no context", { decision: "deny", context: false }],
    ["the applied rules, in any order", { decision: "deny", rules: ["no-rm-root"] }],
    ["no shadow rule", { decision: "deny", shadowed: [] }],
  ] satisfies [string, Expectation][])("passes on %s", (_what, expect_) => {
    expect(checkExpectation(expect_, observed())).toEqual([]);
  });

  it.each([
    [{ decision: "ask" }, observed(), "decision: expected ask, got deny"],
    [
      { decision: "deny", reason: "secrets" },
      observed(),
      'reason: expected it to contain "secrets", got "Deleting from / is never allowed"',
    ],
    [
      { decision: "none", reason: "x" },
      observed({ decision: "none", reason: undefined }),
      'reason: expected it to contain "x", got none',
    ],
    [{ decision: "deny", context: true }, observed(), "context: expected added context, got none"],
    [
      { decision: "deny", context: false },
      observed({ context: "pnpm" }),
      'context: expected none, got "pnpm"',
    ],
    [
      { decision: "deny", context: "npm" },
      observed({ context: "use yarn" }),
      'context: expected it to contain "npm", got "use yarn"',
    ],
    [{ decision: "deny", rules: [] }, observed(), "rules: expected none, applied [no-rm-root]"],
    [
      { decision: "deny", rules: ["no-rm-root", "env-files"] },
      observed(),
      "rules: expected [no-rm-root, env-files], applied [no-rm-root]",
    ],
    [
      { decision: "deny", shadowed: ["run-tests-first"] },
      observed(),
      "shadowed: expected [run-tests-first], got none",
    ],
  ] satisfies [Expectation, Observed, string][])("fails on %j given %j", (expect_, seen, failure) => {
    expect(checkExpectation(expect_, seen)[0]).toEqual(failure);
  });

  it("names the rules that applied when a case fails without listing them", () => {
    expect(checkExpectation({ decision: "ask" }, observed())).toEqual([
      "decision: expected ask, got deny",
      "rules: applied [no-rm-root]",
    ]);
    expect(checkExpectation({ decision: "deny" }, observed({ decision: "none", rules: [] }))).toEqual([
      "decision: expected deny, got none",
      "rules: applied none",
    ]);
    // A case that lists its rules already says which differ; a passing case says nothing.
    expect(checkExpectation({ decision: "ask", rules: ["no-rm-root"] }, observed())).toEqual([
      "decision: expected ask, got deny",
    ]);
    expect(checkExpectation({ decision: "deny" }, observed())).toEqual([]);
  });

  it("fails an event no client sends and no rule names, which no rule could apply to", () => {
    const typo = observed({ decision: "none", reason: undefined, rules: [], event: "PreToolUsee" });
    const rules = [{ id: "no-rm-root", mode: "enforce", events: ["PreToolUse"] }] as const;
    expect(checkExpectation({ decision: "none", rules: [] }, typo, rules)).toEqual([
      'event: "PreToolUsee" is not an event any supported client sends, and no rule names it: did you mean PreToolUse?',
    ]);
    // A rule that names it makes it an event the policy means (a client's newer one).
    const named = [...rules, { id: "newer", mode: "enforce", events: ["PreToolUsee"] }] as const;
    expect(checkExpectation({ decision: "none", rules: [] }, typo, named)).toEqual([]);
    expect(
      checkExpectation({ decision: "none", rules: [] }, { ...typo, event: "PreToolUse" }, rules),
    ).toEqual([]);
  });

  it("fails an event the gateway could not judge, even when the fail mode looks like the expectation", () => {
    const failures = checkExpectation(
      { decision: "none" },
      observed({
        decision: "none",
        reason: undefined,
        rules: [],
        error: { code: "EVENT_INVALID", message: "tool_name is required" },
      }),
    );
    expect(failures).toEqual(["event: not judged (EVENT_INVALID: tool_name is required)"]);
  });

  it("lists every difference at once", () => {
    expect(checkExpectation({ decision: "allow", reason: "z", rules: [] }, observed())).toHaveLength(3);
  });
});

describe("answerContext", () => {
  it.each([
    [{ contentType: "application/json", body: "" }, undefined],
    [
      {
        contentType: "application/json",
        body: JSON.stringify({
          hookSpecificOutput: { hookEventName: "UserPromptSubmit", additionalContext: "pnpm" },
        }),
      },
      "pnpm",
    ],
    [
      { contentType: "application/json", body: '{"reason":"Preserve every API decision."}' },
      "Preserve every API decision.",
      "PreCompact",
    ],
    [
      { contentType: "application/json", body: '{"decision":"block","reason":"no"}' },
      undefined,
      "PreCompact",
    ],
    [{ contentType: "application/json", body: '{"reason":"no"}' }, undefined],
    [{ contentType: undefined, body: "not json" }, undefined],
  ])("reads %j as %j", (answer, context, event = "UserPromptSubmit") => {
    expect(answerContext(answer, event)).toBe(context);
  });
});

describe("ruleCoverage", () => {
  it("lists the rules no case exercised, and the rules that are off", () => {
    const rules = [
      { id: "a", mode: "enforce" },
      { id: "b", mode: "shadow" },
      { id: "c", mode: "enforce" },
      { id: "d", mode: "off" },
    ];
    expect(ruleCoverage(rules, new Set(["a", "b"]))).toEqual({ uncovered: ["c"], off: ["d"] });
    expect(ruleCoverage(rules, new Set(["a", "b", "c"]))).toEqual({ uncovered: [], off: ["d"] });
  });
});

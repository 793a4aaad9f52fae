/**
 * The policy loader on any input: random text and JSON, valid policies built from POLICY.md's
 * grammar, and those policies with one thing broken. Loading never throws; a valid policy loads;
 * a broken one names the rule it broke; an unsupported regex is refused with its reason; and a
 * loaded policy evaluates any event into an answer its client accepts.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { combineEffects } from "../../src/core/decision.js";
import { evaluatePolicy } from "../../src/core/evaluate.js";
import { CLAUDE_CODE_EVENTS, DEEPAGENTS_LEGACY_EVENTS, parseHookEvent } from "../../src/core/events.js";
import type { HookEvent } from "../../src/core/hook-event.js";
import { scanJson } from "../../src/core/json-scan.js";
import { loadPolicy, type PolicyIssue } from "../../src/core/policy.js";
import { lintPolicy } from "../../src/core/policy-lint.js";
import { DECISION_KINDS } from "../../src/core/policy-schema.js";
import { renderDecision } from "../../src/core/render.js";
import { compileWhere } from "../../src/core/where.js";
import { sha256 } from "../support/policy.js";
import { answerProblems } from "./client-dialects.js";

async function load(text: string, env: Record<string, string> = {}) {
  return loadPolicy(text, { env: (name) => env[name], sha256 });
}

function expectWellFormedIssues(issues: readonly PolicyIssue[]): void {
  for (const issue of issues) {
    expect(["error", "warning"]).toContain(issue.severity);
    expect(issue.path).toMatch(/^\$/);
    expect(issue.message).toMatch(/\S/);
  }
}

// ---------------------------------------------------------------------------------------------
// Valid policies, from the grammar of POLICY.md
// ---------------------------------------------------------------------------------------------

const EVENTS = [...CLAUDE_CODE_EVENTS, ...DEEPAGENTS_LEGACY_EVENTS];
const on = fc.oneof(
  fc.constantFrom(...EVENTS, "*"),
  fc.uniqueArray(fc.constantFrom(...EVENTS), { minLength: 1, maxLength: 3 }),
);
const matcher = fc.constantFrom(
  "",
  "*",
  "Bash",
  "Write|Edit",
  "mcp__.*",
  "mcp__(github|gitlab)__.*",
  "^Read$",
  "auto",
);
const ifRule = fc.constantFrom(
  "Bash",
  "Bash(npm test)",
  "Bash(git push *)",
  "Bash(rm -rf /*)",
  "Bash(ls:*)",
  "Read(./.env)",
  "Read(**/.env)",
  "Read(~/.ssh/**)",
  "Read(//etc/passwd)",
  "Edit(src/**)",
  "WebFetch(domain:*.example.com)",
  "WebSearch(claude *)",
  "mcp__github",
  "mcp__github__*",
);
const safeRegex = fc.constantFrom(
  "^git push\\b.*(--force|-f\\b)",
  "rm\\s+-rf",
  "^(a|aa)+$",
  "(x+x+)+y",
  "\\.env$",
);
const path = fc.oneof(
  fc.constantFrom(
    "tool_input.command",
    "tool_input.file_path",
    "cwd",
    "stop_hook_active",
    "tool_name",
    "prompt",
  ),
  fc.array(fc.stringMatching(/^[a-z_]{1,6}$/), { minLength: 1, maxLength: 3 }).map((s) => s.join(".")),
);
const literal = fc.oneof(fc.string(), fc.integer(), fc.boolean(), fc.constant(null));
const operator: fc.Arbitrary<Record<string, unknown>> = fc.letrec<{ op: Record<string, unknown> }>((tie) => ({
  op: fc.oneof(
    { arbitrary: fc.jsonValue({ maxDepth: 2 }).map((equals) => ({ equals })), weight: 1 },
    { arbitrary: safeRegex.map((regex) => ({ regex })), weight: 2 },
    {
      arbitrary: fc.constantFrom("src/**", "*.env", "**/[a-z]*", "{a,b}/c").map((glob) => ({ glob })),
      weight: 1,
    },
    { arbitrary: literal.map((contains) => ({ contains })), weight: 1 },
    { arbitrary: fc.string().map((startsWith) => ({ startsWith })), weight: 1 },
    { arbitrary: fc.array(literal, { maxLength: 3 }).map((values) => ({ in: values })), weight: 1 },
    { arbitrary: fc.boolean().map((exists) => ({ exists })), weight: 1 },
    { arbitrary: tie("op").map((not) => ({ not })), weight: 1 },
  ),
})).op;
const where = fc.dictionary(path, fc.oneof(literal, operator), { minKeys: 1, maxKeys: 3 });

const opt = <T>(arb: fc.Arbitrary<T>) => fc.option(arb, { nil: undefined });
const text = fc.string({ minLength: 1, maxLength: 20 });

interface Names {
  sinks: string[];
  models: string[];
}

/** One rule with exactly one action, naming only sinks and models the policy defines. */
const rule = (id: string, names: Names) => {
  const action = fc.oneof(
    fc.record(
      {
        decide: fc.constantFrom(...DECISION_KINDS),
        reason: opt(fc.string()),
        context: opt(fc.string()),
        systemMessage: opt(fc.string()),
        updatedInput: opt(fc.dictionary(fc.string(), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 2 })),
      },
      { requiredKeys: ["decide"] },
    ),
    fc.record({ context: fc.string(), systemMessage: opt(fc.string()) }, { requiredKeys: ["context"] }),
    ...(names.models.length > 0
      ? [
          fc.record({
            prompt: fc.record(
              {
                text,
                model: fc.constantFrom(...names.models),
                timeoutMs: opt(fc.integer({ min: 1, max: 10_000 })),
                onError: opt(fc.constantFrom("allow", "deny", "ask")),
                stop: opt(fc.boolean()),
              },
              { requiredKeys: ["text", "model"] },
            ),
          }),
        ]
      : []),
    fc.record({
      forward: fc.record(
        {
          url: fc.constantFrom("https://policy.example.com/hook", "http://127.0.0.1:9/h"),
          headers: opt(fc.dictionary(text, fc.string(), { maxKeys: 2 })),
          allowedEnvVars: opt(fc.array(text, { maxLength: 2 })),
          timeoutMs: opt(fc.integer({ min: 1, max: 10_000 })),
          onError: opt(fc.constantFrom("allow", "deny", "ask")),
        },
        { requiredKeys: ["url"] },
      ),
    }),
  );
  const notify =
    names.sinks.length > 0
      ? opt(fc.uniqueArray(fc.constantFrom(...names.sinks), { maxLength: 2 }))
      : fc.constant(undefined);
  return fc
    .record(
      {
        on,
        description: opt(fc.string()),
        matcher: opt(matcher),
        if: opt(fc.oneof(ifRule, fc.array(ifRule, { minLength: 1, maxLength: 3 }))),
        where: opt(where),
        teams: opt(fc.array(fc.constantFrom("platform", "mobile"), { minLength: 1, maxLength: 2 })),
        mode: opt(fc.constantFrom("enforce", "shadow", "off")),
        action,
        notify,
      },
      { requiredKeys: ["on", "action"] },
    )
    .map(({ action: a, ...rest }) => dropUndefined({ id, ...rest, ...a }));
};

function dropUndefined(value: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined));
}

const validPolicy: fc.Arbitrary<Record<string, unknown>> = fc
  .record({
    sinks: fc.uniqueArray(fc.stringMatching(/^[a-z][a-z-]{0,7}$/), { maxLength: 3 }),
    models: fc.uniqueArray(fc.stringMatching(/^[a-z][a-z-]{0,7}$/), { maxLength: 2 }),
    ids: fc.uniqueArray(fc.stringMatching(/^[a-z0-9][a-z0-9-]{0,9}$/), { minLength: 1, maxLength: 6 }),
  })
  .chain(({ sinks, models, ids }) =>
    fc.record(
      {
        version: fc.constant(1),
        rules: fc.tuple(...ids.map((id) => rule(id, { sinks, models }))),
        sinks: fc.constant(
          Object.fromEntries(
            sinks.map((s, i) => [
              s,
              i % 2
                ? { type: "slack", url: "env:SLACK_URL" }
                : { type: "webhook", url: "https://siem.example.com/in", secret: "env:WHSEC" },
            ]),
          ),
        ),
        models: fc.constant(
          Object.fromEntries(
            models.map((m) => [m, { provider: "anthropic", model: "claude-haiku-4-5", apiKey: "env:KEY" }]),
          ),
        ),
        auth: fc.record(
          {
            // A token names one team (one listed for two is refused): each team's tokens are
            // drawn from its own digests and its own variable.
            tokens: fc.array(
              fc.constantFrom("platform", "mobile").chain((team) =>
                fc.oneof(
                  fc.record({
                    team: fc.constant(team),
                    sha256: fc.stringMatching(
                      team === "platform" ? /^[0-7][0-9a-f]{63}$/ : /^[89a-f][0-9a-f]{63}$/,
                    ),
                  }),
                  fc.record({
                    team: fc.constant(team),
                    env: fc.constant(team === "platform" ? "TOKEN_A" : "TOKEN_B"),
                  }),
                ),
              ),
              { maxLength: 2 },
            ),
            onFailure: opt(fc.constantFrom("allow", "deny", "ask")),
          },
          { requiredKeys: ["tokens"] },
        ),
        defaults: fc.record(
          {
            onError: fc.constantFrom("allow", "deny", "ask"),
            deadlineMs: fc.integer({ min: 1, max: 30_000 }),
            maxBodyBytes: fc.integer({ min: 1, max: 10_000_000 }),
          },
          { requiredKeys: [] },
        ),
        egress: fc.record(
          {
            allowedHttpHookUrls: fc.array(
              fc.constantFrom("https://hooks.slack.com/services/*", "https://*.example.com/*"),
              { maxLength: 2 },
            ),
            httpHookAllowedEnvVars: fc.array(fc.constantFrom("POLICY_TOKEN"), { maxLength: 1 }),
            allowCidrs: fc.array(fc.constantFrom("10.0.0.0/8", "127.0.0.1/32"), { maxLength: 1 }),
            allowNat64: fc.boolean(),
          },
          { requiredKeys: [] },
        ),
      },
      // sinks and models always: the rules may name them.
      { requiredKeys: ["version", "rules", "sinks", "models"] },
    ),
  )
  .map((p) => dropUndefined(p as Record<string, unknown>))
  // A key "__proto__" anywhere (fast-check draws it in a where's JSON values) is refused on its
  // own, by the JSON scan, before the schema: such a document is no valid policy.
  .filter((p) => !JSON.stringify(p).includes('"__proto__"'));

// ---------------------------------------------------------------------------------------------
// Events to evaluate a loaded policy against
// ---------------------------------------------------------------------------------------------

const event: fc.Arbitrary<HookEvent> = fc
  .record(
    {
      name: fc.constantFrom(...EVENTS, "BrandNewEvent"),
      dialect: fc.constantFrom("claude-code", "deepcode", "deepagents", "deepagents-legacy" as const),
      tool: fc.constantFrom(
        "Bash",
        "Read",
        "Edit",
        "Write",
        "WebFetch",
        "mcp__github__create_issue",
        "Custom",
      ),
      command: fc.oneof(fc.string(), fc.constantFrom("rm -rf /", "npm test && git push --force", "cat .env")),
      file: fc.oneof(fc.string(), fc.constantFrom("/p/.env", "src/a.ts", "~/.ssh/id_rsa", "/etc/passwd")),
      extra: fc.dictionary(
        fc.constantFrom("stop_hook_active", "prompt", "trigger", "source", "reason", "url"),
        fc.jsonValue({ maxDepth: 1 }),
      ),
    },
    { requiredKeys: ["name", "dialect", "tool", "command", "file", "extra"] },
  )
  .map(({ name, dialect, tool, command, file, extra }) => {
    const body = {
      ...extra,
      ...(dialect === "deepagents-legacy"
        ? { event: name, tool_args: { command, file_path: file } }
        : { hook_event_name: name, tool_input: { command, file_path: file } }),
      session_id: "s",
      transcript_path: "/home/dev/.claude/projects/p/s.jsonl",
      cwd: "/p",
      tool_name: tool,
    };
    return parseHookEvent(body, dialect);
  })
  // A mistyped extra field (`prompt: 3` on UserPromptSubmit) is refused before any policy runs.
  .filter((parsed) => parsed.ok)
  .map((parsed) => (parsed as { ok: true; value: HookEvent }).value);

// ---------------------------------------------------------------------------------------------

describe("loadPolicy on any text", () => {
  it("never throws on arbitrary text, and says what is wrong", async () => {
    await fc.assert(
      fc.asyncProperty(fc.oneof(fc.string(), fc.string({ unit: "binary" })), async (t) => {
        const result = await load(t);
        if (!result.ok) expectWellFormedIssues(result.error);
      }),
      { numRuns: 200 },
    );
  });

  it("never throws on arbitrary JSON, and rejects every non-policy with a path", async () => {
    await fc.assert(
      fc.asyncProperty(fc.json({ maxDepth: 4 }), async (t) => {
        const result = await load(t);
        expect(result.ok).toBe(false);
        if (!result.ok) expectWellFormedIssues(result.error);
      }),
      { numRuns: 200 },
    );
  });
});

describe("loadPolicy on policies built from POLICY.md", () => {
  it("loads every valid policy, lints it, and answers any event with a body its client accepts", async () => {
    await fc.assert(
      fc.asyncProperty(
        validPolicy,
        fc.array(event, { minLength: 1, maxLength: 4 }),
        async (document, events) => {
          const result = await load(JSON.stringify(document), { TOKEN_A: "a" });
          if (!result.ok) throw new Error(result.error.map((i) => `${i.path}: ${i.message}`).join("\n"));
          const { policy, warnings } = result.value;
          expect(policy.rules).toHaveLength((document.rules as unknown[]).length);
          expectWellFormedIssues(warnings);
          expectWellFormedIssues(lintPolicy(policy));
          for (const e of events) {
            for (const team of ["platform", "default"]) {
              const evaluation = evaluatePolicy(policy, e, { team }, true);
              for (const match of [...evaluation.enforced, ...evaluation.shadowed]) {
                expect(policy.rules).toContain(match.rule);
              }
              // Every rule of the event that the team could meet is explained; no other team's.
              expect(evaluation.explanations?.map((x) => x.ruleId)).toEqual(
                policy
                  .rulesFor(e.name)
                  .filter((r) => r.teams === undefined || r.teams.has(team))
                  .map((r) => r.id),
              );
              const decision = combineEffects(evaluation.enforced.map((m) => m.effect));
              expect(answerProblems(renderDecision(decision, e.name, e.dialect), e.name, e.dialect)).toEqual(
                [],
              );
            }
          }
        },
      ),
      { numRuns: 100 },
    );
  });

  /** Breakages that no valid policy survives, each pinned to the rule it breaks. */
  const breakage = fc.constantFrom(
    (r: Record<string, unknown>) => ({ ...r, decison: "deny" }),
    (r: Record<string, unknown>) => ({ ...r, on: 42 }),
    (r: Record<string, unknown>) => ({ ...r, on: [] }),
    (r: Record<string, unknown>) => ({ ...r, matcher: "(" }),
    (r: Record<string, unknown>) => ({ ...r, matcher: "x".repeat(201) }),
    (r: Record<string, unknown>) => ({ ...r, if: "Bash(" }),
    (r: Record<string, unknown>) => ({ ...r, if: ["Read(x)", 7] }),
    (r: Record<string, unknown>) => ({ ...r, where: { "a..b": 1 } }),
    (r: Record<string, unknown>) => ({ ...r, where: { cwd: { regex: "a", glob: "b" } } }),
    (r: Record<string, unknown>) => ({ ...r, mode: "loud" }),
    (r: Record<string, unknown>) => ({ ...r, notify: ["no-such-sink"] }),
    (r: Record<string, unknown>) => ({ ...r, decide: "approve" }),
    (r: Record<string, unknown>) => ({ ...r, id: "" }),
    (r: Record<string, unknown>) => ({ ...r, teams: [] }),
    (r: Record<string, unknown>) => {
      const { decide: _d, context: _c, prompt: _p, forward: _f, notify: _n, ...rest } = r;
      return rest;
    },
  );

  it("rejects a policy with one broken rule, pointing at that rule", async () => {
    const broken = validPolicy.chain((document) => {
      const rules = document.rules as Record<string, unknown>[];
      return fc.tuple(fc.constant(document), fc.integer({ min: 0, max: rules.length - 1 }), breakage);
    });
    await fc.assert(
      fc.asyncProperty(broken, async ([document, index, breakIt]) => {
        const rules = [...(document.rules as Record<string, unknown>[])];
        rules[index] = breakIt(rules[index] as Record<string, unknown>);
        const result = await load(JSON.stringify({ ...document, rules }));
        expect(result.ok).toBe(false);
        if (result.ok) return;
        expectWellFormedIssues(result.error);
        expect(result.error.map((i) => i.path).some((p) => p.startsWith(`$.rules[${index}]`))).toBe(true);
      }),
      { numRuns: 100 },
    );
  });

  it("never throws when any value anywhere in a valid policy is replaced by arbitrary JSON", async () => {
    const mutated = fc.tuple(
      validPolicy,
      fc.array(fc.nat(), { minLength: 1, maxLength: 6 }),
      fc.jsonValue({ maxDepth: 3 }),
    );
    await fc.assert(
      fc.asyncProperty(mutated, event, async ([document, steps, value], e) => {
        const result = await load(JSON.stringify(replaceAt(document, steps, value)));
        if (!result.ok) {
          expectWellFormedIssues(result.error);
          return;
        }
        expectWellFormedIssues(lintPolicy(result.value.policy));
        const evaluation = evaluatePolicy(result.value.policy, e, { team: "platform" });
        const decision = combineEffects(evaluation.enforced.map((m) => m.effect));
        expect(answerProblems(renderDecision(decision, e.name, e.dialect), e.name, e.dialect)).toEqual([]);
      }),
      { numRuns: 100 },
    );
  });

  it("refuses a regex RE2 cannot run, at its path, naming backreferences and lookaround", async () => {
    const unsupported = fc.constantFrom(
      "(a)\\1",
      "(?=Bash)",
      "(?!x)y",
      "(?<=a)b",
      "(?<!a)b",
      "(?<n>a)\\k<n>",
    );
    const placed = validPolicy.chain((document) =>
      fc.tuple(
        fc.constant(document),
        fc.integer({ min: 0, max: (document.rules as unknown[]).length - 1 }),
        unsupported,
        fc.constantFrom("matcher", "where", "where-not"),
      ),
    );
    await fc.assert(
      fc.asyncProperty(placed, async ([document, index, pattern, place]) => {
        const rules = [...(document.rules as Record<string, unknown>[])];
        const target = rules[index] as Record<string, unknown>;
        rules[index] =
          place === "matcher"
            ? { ...target, matcher: pattern }
            : {
                ...target,
                where: {
                  "tool_input.command": place === "where" ? { regex: pattern } : { not: { regex: pattern } },
                },
              };
        const result = await load(JSON.stringify({ ...document, rules }));
        expect(result.ok).toBe(false);
        if (result.ok) return;
        const expectedPath =
          place === "matcher"
            ? `$.rules[${index}].matcher`
            : `$.rules[${index}].where["tool_input.command"]${place === "where" ? "" : ".not"}.regex`;
        const issue = result.error.find((i) => i.path === expectedPath);
        expect(issue?.message).toMatch(
          /not a valid RE2 regular expression.*backreferences and lookaround are not supported/,
        );
      }),
      { numRuns: 40 },
    );
  });
});

/** `document` with the value reached by following `steps` (indexes into keys) replaced. */
function replaceAt(document: unknown, steps: readonly number[], value: unknown): unknown {
  if (steps.length === 0 || document === null || typeof document !== "object") return value;
  const [step, ...rest] = steps as [number, ...number[]];
  if (Array.isArray(document)) {
    if (document.length === 0) return value;
    const i = step % document.length;
    return document.map((item, j) => (j === i ? replaceAt(item, rest, value) : item));
  }
  const keys = Object.keys(document);
  if (keys.length === 0) return value;
  const key = keys[step % keys.length] as string;
  return { ...document, [key]: replaceAt((document as Record<string, unknown>)[key], rest, value) };
}

describe("compileWhere on any object", () => {
  it("compiles or reports issues, and its predicates answer a boolean for any payload", () => {
    const anyWhere = fc.dictionary(fc.string(), fc.jsonValue({ maxDepth: 3 }));
    const payload = fc.dictionary(fc.string(), fc.jsonValue({ maxDepth: 3 }));
    fc.assert(
      fc.property(fc.oneof(anyWhere, where), fc.array(payload, { maxLength: 3 }), (w, payloads) => {
        const compiled = compileWhere(w);
        if (!compiled.ok) {
          for (const issue of compiled.error) expect(issue.message).toMatch(/\S/);
          return;
        }
        for (const p of payloads)
          for (const predicate of compiled.value) expect(typeof predicate(p)).toBe("boolean");
      }),
      { numRuns: 400 },
    );
  });
});

describe("scanJson", () => {
  it("finds no repeat in any JSON text JSON.stringify writes, and finds one a repeated key adds", () => {
    fc.assert(
      fc.property(
        fc.jsonValue(),
        fc.string().filter((k) => k !== "v"),
        fc.boolean(),
        (value, key, spaced) => {
          // A key "__proto__" is found wherever it stands (kind "prototype"): left aside here.
          const repeats = (text: string) => scanJson(text, 1000).filter((r) => r.kind !== "prototype");
          const text = JSON.stringify(value, null, spaced ? 2 : 0);
          expect(repeats(text)).toEqual([]);
          // The same key twice at the top, around whatever the value is.
          const twice = `{${JSON.stringify(key)}: 1, "v": ${text},\n${JSON.stringify(key)}: 2}`;
          expect(repeats(twice).map((r) => r.path)).toEqual([[key]]);
          if (key === "__proto__")
            expect(
              scanJson(twice, 1000)
                .filter((r) => r.kind === "prototype")
                .map((r) => r.path),
            ).toContainEqual([key]);
        },
      ),
      { numRuns: 500 },
    );
  });
});

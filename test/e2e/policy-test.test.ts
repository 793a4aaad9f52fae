/** `hookgate test` as a user and CI run it: one line per case, a summary, exit codes. */
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { runCli } from "../support/process.js";
import { tempDir } from "../support/temp.js";

const dir = tempDir("policy-test");
const file = (name: string, content: unknown) => {
  const path = join(dir, name);
  writeFileSync(path, typeof content === "string" ? content : JSON.stringify(content, null, 2));
  return path;
};

const bash = (command: string) => ({
  session_id: "s",
  transcript_path: "/home/dev/.claude/projects/p/s.jsonl",
  cwd: "/home/dev/proj",
  hook_event_name: "PreToolUse",
  tool_name: "Bash",
  tool_input: { command },
});

describe("hookgate test examples/policy.json examples/policy.test.json", () => {
  it("passes every case of the example policy's own tests and exercises every rule", async () => {
    const { code, stdout } = await runCli([
      "test",
      "examples/policy.json",
      "examples/policy.test.json",
      "--coverage",
    ]);
    expect(stdout).toMatch(/^PASS {2}rm -rf \/ is denied$/m);
    expect(stdout).toMatch(/^PASS {2}Stop: run-tests-first is in shadow mode, recorded but never sent$/m);
    expect(stdout).not.toMatch(/^FAIL/m);
    expect(stdout).toMatch(/^141 passed, 0 failed$/m);
    expect(stdout).toMatch(/^coverage: 7 of 7 rules exercised$/m);
    expect(code).toBe(0);
  });

  it("fails the example tests against a policy that changes one rule, naming the case", async () => {
    const { code, stdout } = await runCli([
      "test",
      "test/fixtures/replay/policy.candidate.json",
      "examples/policy.test.json",
    ]);
    expect(stdout).toMatch(/^FAIL {2}rm -rf inside the project is left to the client$/m);
    expect(stdout).toMatch(
      / {6}decision: expected none, got deny\n {6}rules: expected none, applied \[no-rm-root\]\n {6}at examples\/policy.test.json \$\.cases\[2\]/,
    );
    expect(stdout).toMatch(
      /^FAIL {2}rm -rf \/ is denied\n {6}reason: expected it to contain "never allowed"/m,
    );
    expect(stdout).toMatch(/^129 passed, 12 failed$/m);
    expect(code).toBe(1);
  });

  // The candidate is a copy: each edit of the example's rules has to reach it, or the failures
  // above would be put down to no-rm-root while another rule had drifted.
  it("runs against a candidate that is the example policy with no-rm-root alone changed", () => {
    const read = (path: string) => JSON.parse(readFileSync(path, "utf8")) as { rules: { id: string }[] };
    const example = read("examples/policy.json");
    const candidate = read("test/fixtures/replay/policy.candidate.json");
    const others = (policy: typeof example) => ({
      ...policy,
      $schema: undefined,
      rules: policy.rules.filter((r) => r.id !== "no-rm-root"),
    });
    expect(candidate.rules.map((r) => r.id)).toEqual(example.rules.map((r) => r.id));
    expect(others(candidate)).toEqual(others(example));
  });

  it("prints the same results as one JSON document with --json, and the same exit code", async () => {
    const { code, stdout, stderr } = await runCli([
      "test",
      "test/fixtures/replay/policy.candidate.json",
      "examples/policy.test.json",
      "--coverage",
      "--json",
    ]);
    expect(code).toBe(1);
    expect(stderr).toBe("");
    // The JSON alone: JSON.parse refuses a PASS line or a summary before or after it.
    const report = JSON.parse(stdout);
    expect(report).toMatchObject({
      policy: "test/fixtures/replay/policy.candidate.json",
      passed: 129,
      failed: 12,
      coverage: { active: 7, exercised: 7, uncovered: [], off: [] },
    });
    expect(report.cases).toHaveLength(141);
    expect(report.cases[2]).toEqual({
      name: "rm -rf inside the project is left to the client",
      file: "examples/policy.test.json",
      index: 2,
      passed: false,
      failures: ["decision: expected none, got deny", "rules: expected none, applied [no-rm-root]"],
      notes: [],
    });
    expect(report.cases[1]).toMatchObject({ passed: true, failures: [] });
  });
});

describe("hookgate test", () => {
  const policy = file("policy.json", {
    version: 1,
    auth: {
      tokens: [
        { team: "mobile", env: "UNSET_TOKEN_VAR" },
        { team: "web", env: "UNSET_TOKEN_VAR" },
      ],
    },
    rules: [
      { id: "deny-rm", on: "PreToolUse", if: "Bash(rm *)", decide: "deny", reason: "no rm" },
      { id: "mobile-asks", on: "PreToolUse", teams: ["mobile"], matcher: "Bash", decide: "ask" },
      {
        id: "judge",
        on: "PreToolUse",
        matcher: "Write",
        prompt: { text: "ok? $ARGUMENTS", model: "m", onError: "deny" },
      },
      { id: "never-hit", on: "SessionEnd", context: "bye" },
      { id: "off", on: "Stop", mode: "off", decide: "block" },
    ],
    models: {
      m: {
        provider: "anthropic",
        model: "claude-haiku-4-5",
        apiKey: "env:UNSET_KEY",
        url: "http://127.0.0.1:9/v1",
      },
    },
  });
  mkdirSync(join(dir, "events"), { recursive: true });
  file("events/ls.json", bash("ls"));
  file("events/write.json", {
    ...bash("x"),
    tool_name: "Write",
    tool_input: { file_path: "/home/dev/proj/a.ts" },
  });

  it("judges as the case's team without a token, reads events relative to the cases file, and reports coverage", async () => {
    const cases = file("cases.json", {
      team: "web",
      cases: [
        {
          name: "rm as web",
          event: "events/ls.json",
          with: { tool_input: { command: "rm -rf x" } },
          expect: { decision: "deny", rules: ["deny-rm"] },
        },
        { name: "ls as web", event: "events/ls.json", expect: { decision: "none", rules: [] } },
        {
          name: "ls as mobile",
          team: "mobile",
          event: "events/ls.json",
          expect: { decision: "ask", rules: ["mobile-asks"] },
        },
        {
          name: "write is judged live only",
          event: "events/write.json",
          expect: { decision: "none", rules: ["judge"] },
        },
      ],
    });
    const { code, stdout } = await runCli(["test", policy, cases, "--coverage"]);
    expect(stdout).toMatch(/^4 passed, 0 failed$/m);
    expect(stdout).toContain(
      "PASS  write is judged live only\n      note: judge (prompt) was not run: hookgate test calls no model or downstream hook",
    );
    expect(stdout).toMatch(
      /^coverage: 3 of 4 rules exercised\n {2}not exercised: never-hit\n {2}off \(never evaluated\): off$/m,
    );
    expect(code).toBe(0);
  });

  it("notes a shadow prompt rule that applied as not run, as an enforcing one", async () => {
    // Its verdict is a model's: the case's shadowed list holds it, and nothing said it was never
    // asked (simulate says so, `shadow: judge was not run`).
    const shadowJudge = file("shadow-judge.json", {
      version: 1,
      rules: [
        {
          id: "judge",
          on: "PreToolUse",
          matcher: "Write",
          mode: "shadow",
          prompt: { text: "ok? $ARGUMENTS", model: "m", onError: "deny" },
        },
      ],
      models: { m: { provider: "anthropic", model: "claude-haiku-4-5", apiKey: "env:UNSET_KEY" } },
    });
    const cases = file("shadow-judge.cases.json", {
      cases: [
        { name: "write", event: "events/write.json", expect: { decision: "none", shadowed: ["judge"] } },
      ],
    });
    const { code, stdout } = await runCli(["test", shadowJudge, cases]);
    expect(stdout).toContain(
      "PASS  write\n      note: judge (shadow prompt) was not run: hookgate test calls no model or downstream hook\n",
    );
    expect(code).toBe(0);
  });

  it("notes a decision the case's client does not act on, as the audit line's clientDecision does", async () => {
    // deepcode goes on from an ask as from no decision, and acts on no block on
    // UserPromptExpansion (its src/loop.ts, src/tui/useChat.ts): a passing case said nothing.
    const client = file("client-acts.json", {
      version: 1,
      rules: [
        { id: "ask-push", on: "PreToolUse", if: "Bash(git push *)", decide: "ask", reason: "push" },
        { id: "no-deploy", on: "UserPromptExpansion", matcher: "deploy", decide: "block", reason: "no" },
      ],
    });
    const cases = file("client-acts.cases.json", {
      client: "deepcode",
      cases: [
        {
          name: "push asks",
          event: {
            hook_event_name: "PreToolUse",
            cwd: "/p",
            tool_name: "Bash",
            tool_input: { command: "git push" },
            tool_desc: "git push",
          },
          expect: { decision: "ask" },
        },
        {
          name: "deploy is blocked",
          event: { hook_event_name: "UserPromptExpansion", cwd: "/p", command_name: "deploy" },
          expect: { decision: "block" },
        },
        {
          name: "push asks Claude Code",
          client: "claude-code",
          event: bash("git push"),
          expect: { decision: "ask" },
        },
      ],
    });
    const { code, stdout } = await runCli(["test", client, cases]);
    expect(stdout).toContain(
      'PASS  push asks\n      note: deepcode does not act on "ask" on PreToolUse: it goes on as with no decision',
    );
    expect(stdout).toContain(
      'PASS  deploy is blocked\n      note: deepcode does not act on "block" on UserPromptExpansion: it goes on as with no decision',
    );
    expect(stdout).toMatch(/^PASS {2}push asks Claude Code$/m);
    expect(stdout).not.toMatch(/push asks Claude Code\n {6}note/);
    expect(code).toBe(0);
    // --json's notes are the same lines, without their indent and "note: ".
    const json = JSON.parse((await runCli(["test", client, cases, "--json"])).stdout);
    expect(json.cases.map((c: { notes: string[] }) => c.notes)).toEqual([
      ['deepcode does not act on "ask" on PreToolUse: it goes on as with no decision'],
      ['deepcode does not act on "block" on UserPromptExpansion: it goes on as with no decision'],
      [],
    ]);
  });

  it("refuses a case whose team no token of the policy authenticates as", async () => {
    // Before, "team": "mobil" ran as a team no rule names and passed `expect: none`.
    const cases = file("typo-team.json", {
      cases: [{ name: "ls as mobil", team: "mobil", event: "events/ls.json", expect: { decision: "none" } }],
    });
    const { code, stdout, stderr } = await runCli(["test", policy, cases]);
    expect(code).toBe(1);
    expect(stderr).toContain(`${cases}: $.cases[0]: team "mobil" is no team of ${policy} ("mobile", "web")`);
    expect(stdout).toBe("");
  });

  it("judges a case without a team as the policy's only team, and refuses it when there are several", async () => {
    // A hunt: a case without a team ran as "default", which no token was, so a deny rule for
    // the policy's only team never applied and `expect: none` passed.
    const single = file("single-team.json", {
      version: 1,
      auth: { tokens: [{ team: "platform", env: "UNSET_TOKEN_VAR" }] },
      rules: [{ id: "deny-rm", on: "PreToolUse", teams: ["platform"], if: "Bash(rm *)", decide: "deny" }],
    });
    const noTeam = file("no-team.json", {
      client: "claude-code",
      cases: [{ name: "rm", event: bash("rm -rf x"), expect: { decision: "deny", rules: ["deny-rm"] } }],
    });
    const judged = await runCli(["test", single, noTeam]);
    expect(judged.stdout).toMatch(/^PASS {2}rm$/m);
    expect(judged.code).toBe(0);
    const several = await runCli(["test", policy, noTeam]);
    expect(several.stderr).toContain(
      `${noTeam}: $.cases[0]: names no team, and ${policy} has several ("mobile", "web"): add "team" to the case or the file`,
    );
    // Invalid cases are why test could not run: on stderr, and no case ran.
    expect(several.stdout).toBe("");
    expect(several.code).toBe(1);
    const noTokens = file("no-tokens.json", { version: 1, auth: { tokens: [] }, rules: [] });
    const none = await runCli(["test", noTokens, noTeam]);
    expect(none.stderr).toContain("names no team, and");
    expect(none.code).toBe(1);
    const noAuth = file("no-auth.json", {
      version: 1,
      rules: [{ id: "deny-rm", on: "PreToolUse", teams: ["default"], if: "Bash(rm *)", decide: "deny" }],
    });
    expect((await runCli(["test", noAuth, noTeam])).code).toBe(0);
  });

  it("fails a case whose event no client sends and no rule names, naming the event meant", async () => {
    // A typo'd hook_event_name was taken for a client's newer event, no rule applied, and
    // `expect: none` passed a case that tested nothing.
    const cases = file("typo-event.json", {
      team: "web",
      cases: [
        {
          name: "typo",
          event: { ...bash("rm -rf x"), hook_event_name: "PreToolUsee" },
          expect: { decision: "none", rules: [] },
        },
      ],
    });
    const { code, stdout } = await runCli(["test", policy, cases]);
    expect(stdout).toContain(
      'FAIL  typo\n      event: "PreToolUsee" is not an event any supported client sends, and no rule names it: did you mean PreToolUse?',
    );
    expect(code).toBe(1);
  });

  it("refuses a with key that is a near miss of the event's own field, before running anything", async () => {
    // "tool_inptu" was added beside tool_input, and the case tested the recorded "ls" unchanged.
    const cases = file("typo-with.json", {
      team: "web",
      cases: [
        {
          name: "rm as web",
          event: "events/ls.json",
          with: { tool_inptu: { command: "rm -rf x" } },
          expect: { decision: "none" },
        },
        {
          name: "new field",
          event: "events/ls.json",
          with: { permission_mode: "plan" },
          expect: { decision: "none" },
        },
      ],
    });
    const { code, stdout, stderr } = await runCli(["test", policy, cases]);
    expect(stderr).toContain(
      `${cases}: $.cases[0].with.tool_inptu: the event has no "tool_inptu" (it would be added, and tool_input sent as recorded): did you mean tool_input?`,
    );
    expect(stderr).toMatch(/^cases invalid \(1 problem\)$/m);
    expect(stdout).toBe("");
    expect(code).toBe(1);
  });

  it("names no with key the case already sets as the one a near miss means", async () => {
    // Beside tool_input, "tool_inptu" was refused as meaning tool_input ("sent as recorded", though
    // the case sets it): renamed so, the with would hold tool_input twice.
    const cases = file("typo-with-beside.json", {
      team: "web",
      cases: [
        {
          name: "rm as web",
          event: "events/ls.json",
          with: { tool_input: { command: "rm -rf x" }, tool_inptu: { command: "ls" } },
          expect: { decision: "deny", rules: ["deny-rm"] },
        },
      ],
    });
    const { code, stdout, stderr } = await runCli(["test", policy, cases]);
    expect(stderr).toBe("");
    expect(stdout).toMatch(/^PASS {2}rm as web$/m);
    expect(code).toBe(0);
  });

  it("prints every failure of a case and exits 1", async () => {
    const cases = file("failing.json", {
      client: "claude-code",
      team: "web",
      cases: [
        {
          name: "wrong",
          event: bash("rm -rf /"),
          expect: { decision: "ask", reason: "nope", context: true },
        },
        { name: "invalid event", event: { hook_event_name: "PreToolUse" }, expect: { decision: "none" } },
      ],
    });
    const { code, stdout } = await runCli(["test", policy, cases]);
    expect(stdout).toContain(
      [
        "FAIL  wrong",
        "      decision: expected ask, got deny",
        '      reason: expected it to contain "nope", got "no rm"',
        "      context: expected added context, got none",
        "      rules: applied [deny-rm]",
        `      at ${cases} $.cases[0]`,
        "FAIL  invalid event",
        "      event: not judged (EVENT_INVALID: tool_name is required)",
      ].join("\n"),
    );
    expect(stdout).toMatch(/^0 passed, 2 failed$/m);
    expect(code).toBe(1);
  });

  it("says why an expectation can never hold: a decision the event is never answered, a rule the policy lacks or lists elsewhere", async () => {
    const stop = {
      session_id: "s",
      transcript_path: "/home/dev/.claude/projects/p/s.jsonl",
      cwd: "/home/dev/proj",
      hook_event_name: "Stop",
      stop_hook_active: false,
    };
    const cases = file("never.json", {
      client: "claude-code",
      team: "platform",
      cases: [
        { name: "deny on Stop", event: stop, expect: { decision: "deny", shadowed: ["run-tests-frist"] } },
        {
          name: "a typo and a shadow rule in rules",
          event: bash("rm -rf /"),
          expect: { decision: "deny", rules: ["no-rm-rot", "run-tests-first"] },
        },
        {
          name: "an ask on a Notification",
          event: { ...stop, hook_event_name: "Notification", message: "m", stop_hook_active: undefined },
          expect: { decision: "ask", shadowed: ["no-rm-root"] },
        },
      ],
    });
    const { code, stdout } = await runCli(["test", "examples/policy.json", cases]);
    expect(code).toBe(1);
    expect(stdout).toContain(
      [
        "FAIL  deny on Stop",
        "      decision: expected deny, got none (Stop is never answered deny: only block or none)",
        '      shadowed: expected [run-tests-frist], got [run-tests-first] ("run-tests-frist" is no rule of the policy: did you mean run-tests-first?)',
      ].join("\n"),
    );
    expect(stdout).toContain(
      '      rules: expected [no-rm-rot, run-tests-first], applied [no-rm-root] ("no-rm-rot" is no rule of the policy: did you mean no-rm-root?; "run-tests-first" is a shadow rule: list it in shadowed)',
    );
    expect(stdout).toContain(
      "      decision: expected ask, got none (Notification is never answered ask: it takes no decision, so only none)",
    );
    expect(stdout).toContain(
      '      shadowed: expected [no-rm-root], got none ("no-rm-root" is no shadow rule: list it in rules)',
    );
  });

  it("refuses an invalid cases file, listing every problem with its path, before running anything", async () => {
    const cases = file("invalid.json", {
      cases: [
        { event: "events/missing.json", expect: { decision: "deny" } },
        { event: bash("ls"), expect: { decison: "deny" } },
      ],
    });
    const schema = await runCli(["test", policy, cases]);
    expect(schema.stderr).toContain(`${cases}: $.cases[1].expect: unknown key "decison"`);
    expect(schema.stdout).toBe("");
    expect(schema.code).toBe(1);
    const missing = file("missing.json", {
      cases: [{ event: "events/missing.json", expect: { decision: "deny" } }],
    });
    const read = await runCli(["test", policy, missing]);
    expect(read.stderr).toMatch(/missing\.json: \$\.cases\[0\]\.event: cannot read .*events\/missing\.json/);
    expect(read.code).toBe(1);
    mkdirSync(join(dir, "events"), { recursive: true });
    file("events/trailing-comma.json", '{\n  "hook_event_name": "PreToolUse",\n}');
    const broken = file("broken-event.json", {
      cases: [
        { event: "events/trailing-comma.json", with: { tool_name: "Bash" }, expect: { decision: "deny" } },
      ],
    });
    // An event file the gateway would refuse (over the policy's body limit) is not judged.
    const small = file("small-bodies.json", {
      version: 1,
      defaults: { onError: "deny", maxBodyBytes: 200 },
      rules: [{ id: "no-rm", on: "PreToolUse", if: "Bash(rm *)", decide: "deny" }],
    });
    file("events/big.json", bash(`ls ${"a".repeat(300)}`));
    const bigCase = file("big-event.json", {
      cases: [{ event: "events/big.json", expect: { decision: "deny" } }],
    });
    const refused = await runCli(["test", small, bigCase]);
    expect(refused.stdout).toMatch(
      /event: not judged \(BODY_TOO_LARGE: the request body is \d+ bytes; this gateway reads at most 200/,
    );
    expect(refused.code).toBe(1);
    const parse = await runCli(["test", policy, broken]);
    expect(parse.stderr).toContain(
      `${broken}: $.cases[0].event: ${join(dir, "events/trailing-comma.json")} is not valid JSON: Expected double-quoted property name at line 3, column 1: JSON takes no comma before } or ]; delete it`,
    );
    expect(parse.code).toBe(1);
  });

  it("refuses an event file that is not UTF-8 under with, as the gateway refuses it without", async () => {
    // A Latin-1 é in a recorded command: decoded leniently it became U+FFFD, and the case was
    // judged and passed, while the same file without "with" fails as BODY_NOT_UTF8.
    mkdirSync(join(dir, "latin 1"), { recursive: true });
    const latin1 = join(dir, "latin 1/rm.json");
    writeFileSync(latin1, JSON.stringify(bash("rm -rf caf\u00e9")), "latin1");
    const cases = file("latin1-cases.json", {
      team: "web",
      cases: [{ event: "latin 1/rm.json", with: { cwd: "/home/dev/other" }, expect: { decision: "deny" } }],
    });
    const { code, stdout, stderr } = await runCli(["test", policy, cases]);
    expect(stdout).toBe("");
    expect(stderr).toBe(
      `${cases}: $.cases[0].event: ${latin1} is not UTF-8, as a hook body must be; save it as UTF-8\ncases invalid (1 problem)\n`,
    );
    expect(code).toBe(1);
  });

  it("is a usage error without cases files, and exits 1 on an invalid policy", async () => {
    expect((await runCli(["test", policy])).code).toBe(2);
    const bad = file("bad-policy.json", {
      version: 1,
      rules: [{ id: "x", on: "PreToolUse", decide: "maybe" }],
    });
    const result = await runCli(["test", bad, "examples/policy.test.json"]);
    // As check words it, on stderr: no case ran, so there is no report on stdout.
    expect(result.stdout).toBe("");
    expect(result.stderr).toMatch(
      /^error: \$\.rules\[0\]\.decide: must be one of[^\n]*\n.*bad-policy\.json: invalid \(1 problem\)\n$/,
    );
    expect(result.code).toBe(1);
  });

  it("says so when the cases file is given where the policy goes", async () => {
    const result = await runCli(["test", "examples/policy.test.json", "examples/policy.json"]);
    expect(result.code).toBe(1);
    expect(result.stdout).toBe("");
    expect(result.stderr).toMatch(
      /\nexamples\/policy\.test\.json: invalid \(3 problems\)\nexamples\/policy\.test\.json holds "cases", so it is a cases file: the policy comes first \(hookgate test POLICY CASES\.json\.\.\.\)\n$/,
    );
  });
});

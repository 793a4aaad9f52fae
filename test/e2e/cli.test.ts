/** The `hookgate` command as a user runs it: output and exit codes. */
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { closeSync, mkdirSync, openSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { describe, expect, it, vi } from "vitest";
import { createSqliteQueue } from "../../src/adapters/queue/sqlite.js";
import type { DeliveryJob } from "../../src/core/delivery.js";
import { main } from "../../src/entry/cli.js";
import { BIN, type CliResult, ROOT, runCli } from "../support/process.js";
import { tempDir } from "../support/temp.js";

const dir = tempDir("cli");
const file = (name: string, content: unknown) => {
  const path = join(dir, name);
  writeFileSync(path, typeof content === "string" ? content : JSON.stringify(content));
  return path;
};

/**
 * `hookgate ARGS` as main in this process: its exit code and what it wrote to stdout and stderr.
 * For what only prints (help, usage), as the built command is the same main run by bin.ts.
 */
async function runMain(args: string[]): Promise<CliResult> {
  let stdout = "";
  let stderr = "";
  const out = vi.spyOn(process.stdout, "write").mockImplementation((chunk) => {
    stdout += String(chunk);
    return true;
  });
  const err = vi.spyOn(process.stderr, "write").mockImplementation((chunk) => {
    stderr += String(chunk);
    return true;
  });
  try {
    const code = await main(args);
    return { code, stdout, stderr };
  } finally {
    out.mockRestore();
    err.mockRestore();
  }
}

const rmEvent = file("rm.json", {
  session_id: "s",
  transcript_path: "/t",
  cwd: "/p",
  hook_event_name: "PreToolUse",
  tool_name: "Bash",
  tool_input: { command: "rm -rf /" },
});

describe("hookgate check", () => {
  it("passes examples/policy.json, printing its warnings", async () => {
    const { code, stdout } = await runCli(["check", "examples/policy.json"]);
    expect(code).toBe(0);
    expect(stdout).toMatch(/examples\/policy.json: valid, 7 rules, 2 warnings, policy [0-9a-f]{16}\n$/);
    expect(stdout).toMatch(
      /warning: \$\.auth\.tokens\[1\]\.env: the variable HOOKGATE_TOKEN_MOBILE is not set/,
    );
    // keep-api-decisions' compaction instructions: deepcode and deepagents read none back.
    expect(stdout).toContain(
      "warning: $.rules[6].context: PreCompact carries added context to Claude Code only; deepcode and deepagents cannot receive it there",
    );
  });

  it("says a cases file given in a policy's place is one, and which command takes it", async () => {
    expect(await runCli(["check", "examples/policy.test.json"])).toEqual({
      code: 1,
      stdout:
        'error: $.version: is required: write "version": 1\nerror: $.rules: is required\nerror: $: unknown keys "description", "client", "team", "cases"\n' +
        "examples/policy.test.json: invalid (3 problems)\n" +
        'examples/policy.test.json holds "cases", so it is a cases file, not a policy: run hookgate test POLICY examples/policy.test.json\n',
      stderr: "",
    });
  });

  it("quotes a cases file's path with a space in the test command it names", async () => {
    // `run hookgate test POLICY my cases.json` pasted gave test a file "my" and a file "cases.json".
    const cases = file("my cases.json", readFileSync(join(ROOT, "examples/policy.test.json"), "utf8"));
    const { code, stdout } = await runCli(["check", cases]);
    expect(code).toBe(1);
    expect(stdout).toContain(
      `${cases} holds "cases", so it is a cases file, not a policy: run hookgate test POLICY '${cases}'\n`,
    );
  });

  it("warns about an env: reference that is no shell's variable name, in a sink and a model", async () => {
    const policy = file("env-names.json", {
      version: 1,
      rules: [],
      sinks: { chat: { type: "slack", url: "env:slack-webhook" } },
      models: { fast: { provider: "anthropic", model: "x", apiKey: "env:9KEY" } },
    });
    const { code, stdout } = await runCli(["check", policy]);
    expect(code).toBe(0);
    for (const path of ["$.sinks.chat.url", "$.models.fast.apiKey"])
      expect(stdout).toContain(
        `warning: ${path}: "env:" should be followed by an environment variable's name: letters, digits and _, not starting with a digit; no shell can export this one`,
      );
    expect(stdout).toMatch(/env-names.json: valid, 0 rules, 6 warnings/);
  });

  it("warns about a name in httpHookAllowedEnvVars or allowedEnvVars that no header's $VAR reads", async () => {
    const policy = file("allowed-names.json", {
      version: 1,
      auth: { tokens: [{ team: "t", sha256: "a".repeat(64) }] },
      egress: { httpHookAllowedEnvVars: ["env:TEAM_TOKEN"], allowedHttpHookUrls: ["https://*.example/*"] },
      rules: [
        {
          id: "relay",
          on: "PreToolUse",
          forward: { url: "https://policy.example/hook", allowedEnvVars: ["$TEAM_TOKEN", "TEAM-TOKEN"] },
        },
      ],
    });
    const rule = "a name a header's $VAR reads: upper-case letters, digits and _, not starting with a digit";
    const { code, stdout } = await runCli(["check", policy]);
    expect(code).toBe(0);
    expect(stdout.split("\n").filter((line) => line.startsWith("warning:"))).toEqual([
      `warning: $.egress.httpHookAllowedEnvVars[0]: should be ${rule} (write "TEAM_TOKEN"); no header's $VAR reads this one`,
      `warning: $.rules[0].forward.allowedEnvVars[0]: should be ${rule} (write "TEAM_TOKEN"); no header's $VAR reads this one`,
      `warning: $.rules[0].forward.allowedEnvVars[1]: should be ${rule}; no shell can export this one, nor a header's $VAR read it`,
    ]);
  });

  it("reads a model's env: url from the environment, warning when it is unset", async () => {
    const policy = file("model-url.json", {
      version: 1,
      auth: { tokens: [{ team: "t", sha256: "a".repeat(64) }] },
      egress: { allowedHttpHookUrls: ["https://*.example/*"] },
      rules: [],
      models: {
        fast: { provider: "anthropic", model: "x", apiKey: "env:K", url: "env:HOOKGATE_TEST_JUDGE_URL" },
      },
    });
    // Set, it is judged as it reads (allowed here): no warning. It was judged as "env:…", refused.
    const set = await runCli(["check", policy], "", {
      K: "k",
      HOOKGATE_TEST_JUDGE_URL: "https://llm.example/v1/messages",
    });
    expect(set.code).toBe(0);
    expect(set.stdout).toMatch(/model-url.json: valid, 0 rules, 0 warnings/);
    const unset = await runCli(["check", policy], "", { K: "k" });
    expect(unset.code).toBe(0);
    expect(unset.stdout).toContain(
      'warning: $.models.fast.url: HOOKGATE_TEST_JUDGE_URL is not set, so every call to model "fast" fails and its rules answer with onError',
    );
  });

  it("fails with every problem and its JSON path", async () => {
    const bad = file("bad.json", {
      version: 1,
      rules: [
        { id: "a", on: "PreToolUse", matcher: "(", decide: "deny" },
        { id: "a", on: "Stop", decide: "stop" },
      ],
    });
    const { code, stdout } = await runCli(["check", bad]);
    expect(code).toBe(1);
    expect(stdout).toMatch(
      /error: \$\.rules\[1\]\.decide: must be one of "allow", "deny", "ask", "defer", "block"/,
    );
    // Rule 0 passes the schema, so its matcher is compiled and reported in the same run, and
    // the repeated id too.
    expect(stdout).toMatch(/error: \$\.rules\[0\]\.matcher: is not a valid RE2/);
    expect(stdout).toMatch(/error: \$\.rules\[1\]\.id: "a" is already the id of \$\.rules\[0\]/);
    expect(stdout).toMatch(/invalid \(3 problems\)/);
    const compileErrors = await runCli([
      "check",
      file("bad2.json", {
        version: 1,
        rules: [
          { id: "a", on: "PreToolUse", matcher: "(", decide: "deny" },
          { id: "a", on: "Stop", decide: "block" },
        ],
      }),
    ]);
    expect(compileErrors.stdout).toMatch(/error: \$\.rules\[0\]\.matcher: is not a valid RE2/);
    expect(compileErrors.stdout).toMatch(
      /error: \$\.rules\[1\]\.id: "a" is already the id of \$\.rules\[0\]/,
    );
  });

  it("refuses backreferences and lookaround, which RE2 cannot run, saying so", async () => {
    const policy = file("re2.json", {
      version: 1,
      rules: [
        { id: "backref", on: "PreToolUse", matcher: "(Bash)\\1", decide: "deny" },
        {
          id: "ahead",
          on: "PreToolUse",
          where: { "tool_input.command": { regex: "rm(?= -rf)" } },
          decide: "deny",
        },
        {
          id: "behind",
          on: "PreToolUse",
          where: { cwd: { not: { regex: "(?<!/home)/p" } } },
          decide: "deny",
        },
      ],
    });
    const { code, stdout } = await runCli(["check", policy]);
    expect(code).toBe(1);
    for (const path of [
      "$.rules[0].matcher",
      '$.rules[1].where["tool_input.command"].regex',
      "$.rules[2].where.cwd.not.regex",
    ]) {
      const line = stdout.split("\n").find((l) => l.includes(`error: ${path}: `));
      expect(line).toMatch(
        /not a valid RE2 regular expression.*backreferences and lookaround are not supported/,
      );
    }
  });

  it("refuses a regex whose compiled program is too big, saying how to simplify it", async () => {
    const policy = file("re2-size.json", {
      version: 1,
      rules: [
        { id: "matcher", on: "PreToolUse", matcher: "mcp__(.*a){30}", decide: "deny" },
        {
          id: "where",
          on: "PreToolUse",
          where: { "tool_input.content": { regex: "ghp_[A-Za-z0-9]{20,255}" } },
          decide: "deny",
        },
        {
          id: "fits",
          on: "PreToolUse",
          where: { "tool_input.content": { regex: "ghp_[A-Za-z0-9]{20,}" } },
          decide: "deny",
        },
      ],
    });
    const { code, stdout } = await runCli(["check", policy]);
    expect(code).toBe(1);
    const errors = stdout.split("\n").filter((l) => l.includes("error: "));
    expect(errors).toHaveLength(2);
    expect(errors[0]).toMatch(
      /error: \$\.rules\[0\]\.matcher: .*is too complex \(program size \d+ > 100\); simplify it/,
    );
    expect(errors[1]).toMatch(
      /error: \$\.rules\[1\]\.where\["tool_input\.content"\]\.regex: .*is too complex \(program size \d+ > 100\); simplify it \(a counted repeat is compiled once per count/,
    );
  });

  it("warns about what no client can honour and about unreachable rules", async () => {
    const policy = file("warn.json", {
      version: 1,
      rules: [
        { id: "ask-pr", on: "PermissionRequest", decide: "ask" },
        { id: "deny-note", on: "Notification", decide: "deny" },
        { id: "if-stop", on: "Stop", if: "Bash(ls)", decide: "block", where: { stop_hook_active: false } },
        { id: "loop", on: "Stop", decide: "block" },
        { id: "future", on: "BrandNewEvent", context: "x" },
        { id: "start", on: "SessionStart", context: "hi" },
        { id: "legacy", on: "tool.use", where: { "tool_input.command": { regex: "^rm" } }, context: "x" },
      ],
      models: { m: { provider: "anthropic", model: "claude-haiku-4-5", apiKey: "sk-ant-inline" } },
    });
    const { code, stdout } = await runCli(["check", policy]);
    expect(code).toBe(0);
    for (const pattern of [
      /\$: has no "auth"/,
      /\$\.rules\[0\]\.decide: no client can honour "ask" on PermissionRequest/,
      /\$\.rules\[1\]\.decide: no client can honour "deny" on Notification/,
      /\$\.rules\[2\]\.on: "if" applies only to tool events, so this rule never applies to Stop/,
      /\$\.rules\[3\]\.where: blocks Stop without checking stop_hook_active/,
      /\$\.rules\[4\]\.on: "BrandNewEvent" is not an event any supported client sends/,
      /\$\.rules\[5\]\.on: Claude Code never sends http hooks on SessionStart/,
      /\$\.rules\[6\]\.where\["tool_input\.command"\]: tool\.use carries no "tool_input" .*write "tool_args\.command"/,
      /\$\.models\.m\.apiKey: is an inline secret/,
    ]) {
      expect(stdout).toMatch(pattern);
    }
  });

  it("refuses a policy that is not UTF-8, saying where, and reads one with a byte-order mark", async () => {
    // Before, read as UTF-8, a Latin-1 ü became U+FFFD, and the rule's pattern
    // silently matched nothing while check called the policy valid.
    const rule = { id: "keys", on: "PreToolUse", if: "Read(**/schlüssel.txt)", decide: "deny" };
    const latin1 = join(dir, "latin1.json");
    writeFileSync(latin1, Buffer.from(`{"version": 1,\n"rules": [${JSON.stringify(rule)}]}`, "latin1"));
    const refused = await runCli(["check", latin1]);
    expect(refused.code).toBe(1);
    expect(refused.stdout).toContain(
      `error: $: ${latin1} is not UTF-8: byte 0xfc at line 2, column 60; save it as UTF-8`,
    );
    const bom = join(dir, "bom.json");
    writeFileSync(
      bom,
      Buffer.concat([
        Buffer.from([0xef, 0xbb, 0xbf]),
        Buffer.from(JSON.stringify({ version: 1, rules: [rule] })),
      ]),
    );
    const read = await runCli(["check", bom]);
    expect(read.code, read.stdout).toBe(0);
  });

  it("reads a policy piped to it, as /dev/stdin or a shell's <(…)", async () => {
    // Before, when FIFOs were first refused (for a SIGHUP's reload, which must not wait
    // on one), `cat policy.json | hookgate check /dev/stdin` and `check <(…)` were refused too.
    const piped = spawnSync(
      "sh",
      ["-c", 'cat examples/policy.json | "$1" "$2" check /dev/stdin', "sh", process.execPath, BIN],
      {
        cwd: ROOT,
        encoding: "utf8",
      },
    );
    expect(piped.stderr).toBe("");
    expect(piped.stdout).toMatch(/^\/dev\/stdin: valid, 7 rules, 2 warnings, policy [0-9a-f]{16}$/m);
    expect(piped.status).toBe(0);
  });

  it("reads only the environment's own variables: env:toString and env:constructor are unset, not Object's", async () => {
    // process.env["toString"] is Object's function: before, a token on env "toString" crashed
    // check with "raw?.trim is not a function", and a model's apiKey "env:constructor" was taken
    // as set.
    const policy = file("env-names.json", {
      version: 1,
      auth: { tokens: [{ team: "t", env: "toString" }] },
      models: { m: { provider: "anthropic", model: "x", apiKey: "env:constructor" } },
      rules: [{ id: "r", on: "PreToolUse", prompt: { text: "t", model: "m" } }],
    });
    const { code, stdout, stderr } = await runCli(["check", policy]);
    expect(stderr).toBe("");
    expect(code, stdout).toBe(0);
    expect(stdout).toContain(
      'warning: $.auth.tokens[0].env: the variable toString is not set, so team "t" cannot authenticate with it',
    );
    expect(stdout).toContain(
      'warning: $.models.m.apiKey: constructor is not set, so every call to model "m" fails',
    );
  });

  it("names the key an unknown one most likely means, in every section", async () => {
    const policy = file("near-misses.json", {
      version: 1,
      defualts: { onError: "allow" },
      egress: { denyCidr: [] },
      rules: [
        { id: "a", on: "PreToolUse", decision: "deny", reasn: "x" },
        { id: "b", on: "PreToolUse", forward: { url: "https://x.example/h", timeoutMS: 2000 } },
        { id: "c", on: "Stop", decide: "block", notfy: ["s"] },
        { id: "d", on: "Stop", decide: "block", frobnicate: true },
      ],
      sinks: {
        "eng-slack": { type: "slack", url: "https://hooks.slack.com/services/x", retryScheduleSecond: [1] },
      },
      models: { m: { provider: "anthropic", model: "x", apiKey: "env:K", maxConcurent: 2 } },
    });
    const { code, stdout } = await runMain(["check", policy]);
    expect(code).toBe(1);
    const unknown = stdout.split("\n").filter((line) => line.includes("unknown key"));
    expect(unknown.sort()).toEqual(
      [
        'error: $: unknown key "defualts" (did you mean "defaults"?)',
        'error: $.egress: unknown key "denyCidr" (did you mean "denyCidrs"?)',
        'error: $.rules[0]: unknown keys "decision", "reasn" (did you mean "decide" for "decision", "reason" for "reasn"?)',
        'error: $.rules[1].forward: unknown key "timeoutMS" (did you mean "timeoutMs"?)',
        'error: $.rules[2]: unknown key "notfy" (did you mean "notify"?)',
        'error: $.rules[3]: unknown key "frobnicate"',
        'error: $.sinks["eng-slack"]: unknown key "retryScheduleSecond" (did you mean "retryScheduleSeconds"?)',
        'error: $.models.m: unknown key "maxConcurent" (did you mean "maxConcurrent"?)',
      ].sort(),
    );
  });

  it("names no key the object already has as the one an unknown key means", async () => {
    // A token with both "team" and "tean" was told `did you mean "team"?`: renaming it so would
    // write "team" twice, and JSON keeps the last one.
    const policy = file("present-near-misses.json", {
      version: 1,
      auth: { tokens: [{ team: "a", tean: "b", env: "HOOKGATE_TOKEN_A" }] },
      defaults: { onError: "allow", onErorr: "deny" },
      rules: [{ id: "a", on: "Stop", decide: "block", reason: "x", reasn: "y", notfy: ["s"] }],
      sinks: { s: { type: "slack", url: "https://hooks.slack.com/services/x", urll: "x" } },
    });
    const { code, stdout } = await runMain(["check", policy]);
    expect(code).toBe(1);
    const unknown = stdout.split("\n").filter((line) => line.includes("unknown key"));
    expect(unknown.sort()).toEqual(
      [
        'error: $.auth.tokens[0]: unknown key "tean"',
        'error: $.defaults: unknown key "onErorr"',
        'error: $.rules[0]: unknown keys "reasn", "notfy" (did you mean "notify" for "notfy"?)',
        'error: $.sinks.s: unknown key "urll"',
      ].sort(),
    );
  });

  it("offers a rule with an action no key of another action", async () => {
    const policy = file("action-near-misses.json", {
      version: 1,
      models: { m: { provider: "anthropic", model: "x", apiKey: "env:K" } },
      rules: [
        { id: "a", on: "PreToolUse", prompt: { model: "m", text: "x" }, decison: "deny" },
        { id: "b", on: "PreToolUse", decide: "deny", reason: "x", promt: "y", contxt: "z" },
        { id: "c", on: "PreToolUse", decison: "deny" },
      ],
    });
    const { stdout } = await runMain(["check", policy]);
    const unknown = stdout.split("\n").filter((line) => line.includes("unknown key"));
    // A rule takes one action (a decide may carry a context): none is offered beside another.
    expect(unknown.sort()).toEqual(
      [
        'error: $.rules[0]: unknown key "decison"',
        'error: $.rules[1]: unknown keys "promt", "contxt" (did you mean "context" for "contxt"?)',
        'error: $.rules[2]: unknown key "decison" (did you mean "decide"?)',
      ].sort(),
    );
  });

  it("offers a sink's unknown key only a key of its own type's", async () => {
    const policy = file("sink-near-misses.json", {
      version: 1,
      rules: [],
      sinks: {
        slack: { type: "slack", url: "https://hooks.slack.com/services/x", secrt: "s", tokn: "t" },
        hook: { type: "webhook", url: "https://x.example/h", secrt: "s", lnk: "l" },
      },
    });
    const { code, stdout } = await runMain(["check", policy]);
    expect(code).toBe(1);
    const unknown = stdout.split("\n").filter((line) => line.includes("unknown key"));
    // A Slack sink takes no secret (a webhook's) and no token (github-dispatch's); a webhook no link.
    expect(unknown.sort()).toEqual(
      [
        'error: $.sinks.slack: unknown keys "secrt", "tokn"',
        'error: $.sinks.hook: unknown keys "secrt", "lnk" (did you mean "secret" for "secrt"?)',
      ].sort(),
    );
  });

  it("says a policy written in YAML looks like YAML, and reads a JSON one as JSON whatever its name", async () => {
    const yaml = file(
      "policy.yaml",
      "# team policy\nversion: 1\nrules:\n  - id: no-rm\n    on: PreToolUse\n",
    );
    const result = await runMain(["check", yaml]);
    expect(result.code).toBe(1);
    expect(result.stdout).toBe(
      `error: $: is not valid JSON: Unexpected token '#' at line 1, column 1; ${yaml} looks like YAML: hookgate reads a policy as JSON only, so convert it to JSON\n${yaml}: invalid (1 problem)\n`,
    );
    // And one whose first key holds a block (`rules:` at the end of its line), which was not.
    const block = file("block.yaml", "rules:\n  - id: no-rm\n    on: PreToolUse\nversion: 1\n");
    expect((await runMain(["check", block])).stdout).toMatch(
      /^error: \$: is not valid JSON: [^\n]*; \S*block\.yaml looks like YAML: hookgate reads a policy as JSON only/,
    );
    // JSON is YAML too: a JSON policy named .yaml is read, and broken JSON is not called YAML.
    const json = file("json.yaml", { version: 1, rules: [] });
    expect((await runMain(["check", json])).code).toBe(0);
    const broken = await runMain(["check", file("broken.yaml", '{"version": 1, "rules": [')]);
    expect(broken.stdout).not.toMatch(/YAML/);
    // Nor are a JSON object's members without its braces (pasted from inside a policy): quoted
    // keys, and commas at the ends of lines, or members that are whole JSON once braced.
    for (const [name, text] of [
      ["members.json", '"version": 1,\n"rules": []\n'],
      ["member.json", '"version": 1\n'],
      ["members-broken.json", '"version": 1,\n"rules": [\n'],
    ] as const) {
      const members = await runMain(["check", file(name, text)]);
      expect(members.code, name).toBe(1);
      expect(members.stdout, name).not.toMatch(/YAML/);
    }
    // So does test of a cases file written in YAML, which said only "Unexpected token 'c'".
    const cases = file("cases.yaml", "cases:\n  - name: rm is denied\n");
    expect(await runCli(["test", "examples/policy.json", cases])).toEqual({
      code: 1,
      stdout: "",
      stderr: `${cases}: $: is not valid JSON: Unexpected token 'c' at line 1, column 1; ${cases} looks like YAML: hookgate reads test cases as JSON only, so convert it to JSON\ncases invalid (1 problem)\n`,
    });
  });

  it("names a file it cannot read once, with why, as replay names one; replay takes stdin once", async () => {
    const missing = join(dir, "no-such-policy.json");
    // Before, "cannot read …: ENOENT: no such file or directory" and "invalid (1 problem)": a
    // newcomer's first check, of a policy not yet written, was told neither that nor how to write one.
    expect(await runCli(["check", missing])).toEqual({
      code: 1,
      stdout: `error: $: ${missing} does not exist; a policy is a JSON file you write: copy the example that comes with hookgate (examples/policy.json), make its rules your team's, and run hookgate check on it\n${missing}: no such file\n`,
      stderr: "",
    });
    const records = join(dir, "no-such-records.jsonl");
    const [gone, folder] = await Promise.all([
      runCli(["replay", "--policy", "examples/policy.json", records]),
      runCli(["replay", "--policy", "examples/policy.json", dir]),
    ]);
    expect(gone).toEqual({
      code: 1,
      stdout: "",
      stderr: `hookgate: cannot read ${records}: ENOENT: no such file or directory\n`,
    });
    // stdin twice: the second - read nothing and was called a file of no records.
    const twice = await runCli(
      ["replay", "--policy", "examples/policy.json", "-", "-"],
      readFileSync(join(ROOT, "test/fixtures/replay/traffic.jsonl")),
    );
    expect(twice.code).toBe(2);
    expect(twice.stdout).toBe("");
    expect(twice.stderr).toMatch(
      /^hookgate: replay reads stdin \(-\) once: give - one time\n\nUsage:\n {2}hookgate replay /,
    );
    // Node's "EISDIR: illegal operation on a directory, read" came from its first read.
    expect(folder).toEqual({
      code: 1,
      stdout: "",
      stderr: `hookgate: cannot read ${dir}: it is a directory; name the records files in it\n`,
    });
    // stdin redirected from a folder (`- < records/`) was read as empty: "- holds no hook records".
    const fd = openSync(dir, "r");
    try {
      const fromFolder = spawnSync(
        process.execPath,
        [BIN, "replay", "--policy", "examples/policy.json", "-"],
        {
          cwd: ROOT,
          encoding: "utf8",
          stdio: [fd, "pipe", "pipe"],
        },
      );
      expect(fromFolder).toMatchObject({
        status: 1,
        stdout: "",
        stderr: "hookgate: cannot read stdin (-): it is a directory; name the records files in it\n",
      });
    } finally {
      closeSync(fd);
    }
  });

  it("is a usage error without a file", async () => {
    expect((await runCli(["check"])).code).toBe(2);
  });
});

describe("hookgate serve's options", () => {
  it("says a --host that is no address of this machine is one, and what to pass", async () => {
    const serveOn = (host: string) =>
      runCli([
        "serve",
        "--policy",
        "examples/policy.json",
        "--host",
        host,
        "--port",
        "0",
        "--data-dir",
        join(dir, `host-${host}`),
      ]);
    const address = await serveOn("192.0.2.1");
    expect(address.code).toBe(1);
    expect(address.stderr).toContain(
      "hookgate: cannot listen on --host 192.0.2.1 (EADDRNOTAVAIL): it is no address of this machine; pass one of its own addresses (127.0.0.1, the default, for this machine alone; 0.0.0.0 for every interface)\n",
    );
    // A .invalid name is NXDOMAIN (ENOTFOUND) wherever DNS answers; a lookup no DNS server
    // answered in time (none configured, a packet lost on a busy host) fails for now (EAI_AGAIN),
    // which is not told the name is wrong.
    const name = await serveOn("gateway.invalid");
    expect(name.code).toBe(1);
    expect(name.stderr).toMatch(
      /^hookgate: cannot listen on --host gateway\.invalid (?:\(ENOTFOUND\): it is no address of this machine, nor a name that resolves to one; pass one of its own addresses|\(EAI_AGAIN\): its name could not be looked up just now \(a DNS failure\); check this machine's DNS and start again, or pass one of its addresses) \(127\.0\.0\.1, the default, for this machine alone; 0\.0\.0\.0 for every interface\)$/m,
    );
  });

  // Before, `--host "$HOST"` with HOST unset listened on every address with no Host
  // check, and `--port "$PORT"` with PORT unset on a random port.
  it.each([
    [["--host", ""], /--host is empty/],
    [["--host", "  "], /--host is empty/],
    // "cannot use the data dir  (ENOENT…)" and "cannot record to  (ENOENT…)", two spaces and no option.
    [["--data-dir", ""], /^hookgate: --data-dir is empty \(an unset variable\?\): /],
    [["--record", ""], /^hookgate: --record is empty \(an unset variable\?\): /],
    [["--port", ""], /--port "" is not a port/],
    [["--port", "0x50"], /--port "0x50" is not a port/],
    [["--port", "1e3"], /--port "1e3" is not a port/],
    [["--port", "70000"], /--port "70000" is not a port/],
    // Copied from a URL: each was said to be "no address of this machine", 127.0.0.1 included.
    [["--host", "127.0.0.1:8787"], /--host "127.0.0.1:8787" has a port: pass --host 127.0.0.1 --port 8787/],
    [["--host", "[::1]:9000"], /--host "\[::1\]:9000" has a port: pass --host ::1 --port 9000/],
    [["--host", "[::1]"], /--host "\[::1\]" is in brackets, as in a URL: pass --host ::1/],
    [
      ["--host", "http://0.0.0.0:8787/"],
      /--host "http:\/\/0.0.0.0:8787\/" is a URL: pass --host 0.0.0.0 --port 8787/,
    ],
    // A scheme's default port, written out, is still the port meant (the URL parser drops it).
    [
      ["--host", "http://127.0.0.1:80"],
      /--host "http:\/\/127.0.0.1:80" is a URL: pass --host 127.0.0.1 --port 80/,
    ],
  ])("refuses %j as a usage error, listening nowhere", async (flags, message) => {
    const { code, stderr } = await runCli(["serve", "--policy", "examples/policy.json", ...flags]);
    expect(code).toBe(2);
    expect(stderr).toMatch(message);
  });
});

describe("hookgate simulate", () => {
  it("prints the exact body and which rules applied", async () => {
    const { code, stdout } = await runCli([
      "simulate",
      "--policy",
      "examples/policy.json",
      "--token",
      "hookgate-dev-token",
      rmEvent,
    ]);
    expect(code).toBe(0);
    expect(stdout).toContain(
      'body: {"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"Deleting from / is never allowed"}}',
    );
    expect(stdout).toMatch(/\+ no-rm-root \[enforce\]: on PreToolUse, matcher "Bash" matched, "if" matched/);
    expect(stdout).toMatch(
      /- tests-need-no-prompt \[enforce\]: no "if" permission rule matches the Bash call/,
    );
    expect(stdout).toMatch(/team: platform/);
  });

  it("says a prompt rule, enforcing or shadow, was not run, and that the gateway's answer has its verdict", async () => {
    const prompt = { text: "Is this safe? $ARGUMENTS", model: "m", onError: "ask" };
    const policy = file("shadow-prompt.json", {
      version: 1,
      rules: [
        { id: "judge", on: "PreToolUse", matcher: "Bash", prompt },
        { id: "judge-next", on: "PreToolUse", matcher: "Bash", mode: "shadow", prompt },
      ],
      models: { m: { provider: "anthropic", model: "claude-haiku-4-5", apiKey: "k" } },
    });
    const { code, stdout } = await runCli([
      "simulate",
      "--policy",
      policy,
      "--client",
      "claude-code",
      rmEvent,
    ]);
    expect(code).toBe(0);
    // It made no call, so it has no verdict: "would have decided none" said it had one.
    expect(stdout).not.toContain("judge-next would have decided");
    expect(stdout).toContain(
      "shadow: judge-next was not run (simulate does not call models or downstream hooks)",
    );
    expect(stdout).toContain(
      "pending: judge (prompt): NOT_RUN (simulate does not call models or downstream hooks)",
    );
    expect(stdout).toMatch(/^note: the answer above leaves out the prompt and forward rules not run/m);
  });

  it("shows an authentication failure as the client would get it, and --json for machines", async () => {
    const { stdout } = await runCli(["simulate", "--policy", "examples/policy.json", "--json", rmEvent]);
    const result = JSON.parse(stdout);
    expect(result.error.code).toBe("AUTH_MISSING");
    expect(JSON.parse(result.answer.body).hookSpecificOutput.permissionDecision).toBe("deny");
  });

  it("says how to give simulate a token when it sent none", async () => {
    const run = (client: string) =>
      runCli(["simulate", "--policy", "examples/policy.json", "--client", client, rmEvent], "", {});
    expect((await run("claude-code")).stdout).toMatch(
      /hint: simulate sent no token: pass --token T, or export HOOKGATE_TOKEN/,
    );
    expect((await run("deepagents")).stdout).toMatch(/or export HOOKGATE_AUTH as/);
  });

  it("sends the token the client's hook would send when --token is not given", async () => {
    const simulated = async (env: Record<string, string>, client = "claude-code", event = rmEvent) =>
      JSON.parse(
        (
          await runCli(
            ["simulate", "--policy", "examples/policy.json", "--client", client, "--json", event],
            "",
            env,
          )
        ).stdout,
      );
    const start = file("session-start.json", {
      session_id: "s",
      transcript_path: "/t",
      cwd: "/p",
      hook_event_name: "SessionStart",
      source: "startup",
    });
    const auth = { HOOKGATE_AUTH: "hookgate-dev-token" };
    expect((await simulated({ HOOKGATE_TOKEN: "hookgate-dev-token" })).team).toBe("platform");
    // Claude Code's and deepcode's http hooks send HOOKGATE_TOKEN alone: with HOOKGATE_AUTH only,
    // the live hook gets AUTH_MISSING, and so does simulate.
    expect((await simulated(auth)).error.code).toBe("AUTH_MISSING");
    expect((await simulated(auth, "deepcode")).error.code).toBe("AUTH_MISSING");
    // Claude Code's SessionStart hook is `hookgate send`, which falls back to HOOKGATE_AUTH, as
    // does an event on no named route.
    expect((await simulated(auth, "claude-code", start)).team).toBe("platform");
    expect(
      JSON.parse(
        (await runCli(["simulate", "--policy", "examples/policy.json", "--json", rmEvent], "", auth)).stdout,
      ).team,
    ).toBe("platform");
    const { stdout } = await runCli(
      ["simulate", "--policy", "examples/policy.json", "--client", "claude-code", rmEvent],
      "",
      auth,
    );
    expect(stdout).toMatch(
      /hint: simulate sent no token: HOOKGATE_AUTH is set, but Claude Code's http hooks send HOOKGATE_TOKEN alone, so the hook gets this answer too: export HOOKGATE_TOKEN/,
    );
    // deepagents strips variables named *TOKEN* from hooks: its adapter sends HOOKGATE_AUTH alone.
    expect((await simulated({ HOOKGATE_TOKEN: "hookgate-dev-token" }, "deepagents")).error.code).toBe(
      "AUTH_MISSING",
    );
  });

  it("reads the event from stdin and takes a client", async () => {
    const legacy = '{"event": "tool.use", "tool_name": "execute", "tool_id": "1", "tool_args": {}}';
    const { code, stdout } = await runCli(
      [
        "simulate",
        "--policy",
        "examples/policy.json",
        "--token",
        "hookgate-dev-token",
        "--client",
        "deepagents-legacy",
        "-",
      ],
      legacy,
    );
    expect(code).toBe(0);
    expect(stdout).toMatch(/body: \(empty\)/);
    expect(stdout).toMatch(/client: deepagents-legacy\s+event: tool.use/);
  });

  it("rejects an unknown client as a usage error", async () => {
    expect(
      (await runCli(["simulate", "--policy", "examples/policy.json", "--client", "cursor", rmEvent])).code,
    ).toBe(2);
  });

  it("checks the event file's bytes as serve checks a body: its size limit and UTF-8", async () => {
    // serve refuses these with the fail mode; simulate judged them as if they were whole.
    const policy = join(dir, "small-bodies.json");
    writeFileSync(
      policy,
      JSON.stringify({
        version: 1,
        defaults: { onError: "deny", maxBodyBytes: 200 },
        rules: [{ id: "no-rm", on: "PreToolUse", if: "Bash(rm *)", decide: "deny", reason: "no rm" }],
      }),
    );
    const event = (command: string) =>
      `{"session_id":"s","transcript_path":"/t","cwd":"/p","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"${command}"}}`;
    const big = join(dir, "big.json");
    writeFileSync(big, event(`ls ${"a".repeat(300)}`));
    const latin1 = join(dir, "latin1.json");
    writeFileSync(latin1, Buffer.concat([Buffer.from(event("rm -rf /tmp/")), Buffer.from([0xff])]));
    const simulated = async (file: string) =>
      JSON.parse((await runCli(["simulate", "--policy", policy, "--json", file])).stdout);
    const tooBig = await simulated(big);
    expect(tooBig.error.code).toBe("BODY_TOO_LARGE");
    expect(JSON.parse(tooBig.answer.body).hookSpecificOutput.permissionDecision).toBe("deny");
    expect((await simulated(latin1)).error.code).toBe("BODY_NOT_UTF8");
    // The same bytes on stdin: decoded as text first, the 0xff became U+FFFD and the rm was judged.
    const piped = await runCli(["simulate", "--policy", policy, "--json", "-"], readFileSync(latin1));
    expect(JSON.parse(piped.stdout).error.code).toBe("BODY_NOT_UTF8");
  });

  it("names an event file it cannot read and says why", async () => {
    const missing = await runCli(["simulate", "--policy", "examples/policy.json", join(dir, "nope.json")]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain(`cannot read the event file ${join(dir, "nope.json")}: no such file`);
    const folder = await runCli(["simulate", "--policy", "examples/policy.json", dir]);
    expect(folder.stderr).toContain(`cannot read the event file ${dir}: it is a directory`);
  });

  it("answers an event file that is not JSON as the gateway would, and says where it breaks", async () => {
    const broken = file(
      "broken-event.json",
      '{\n  "hook_event_name": "PreToolUse",,\n  "tool_name": "Bash"\n}\n',
    );
    const result = await runCli(["simulate", "--policy", "examples/policy.json", broken]);
    // The gateway's answer to such a body, as before; the hook's sender is told no more.
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^error: MALFORMED_JSON: /m);
    expect(result.stdout).toMatch(
      /\nhint: \S*broken-event\.json is not valid JSON: Expected double-quoted property name at line 2, column 35\n$/,
    );
    const piped = await runCli(["simulate", "--policy", "examples/policy.json", "-"], "");
    expect(piped.stdout).toMatch(/\nhint: stdin is not valid JSON: it is empty\n$/);
  });

  it("says what is wrong with an invalid policy on stderr, as check words it", async () => {
    const bad = file("simulate-bad.json", {
      version: 1,
      rules: [{ id: "x", on: "PreToolUse", decide: "maybe" }],
    });
    const result = await runCli(["simulate", "--policy", bad, rmEvent]);
    expect(result.code).toBe(1);
    expect(result.stdout).toBe("");
    expect(result.stderr).toMatch(
      /^error: \$\.rules\[0\]\.decide: must be one of[^\n]*\n.*simulate-bad\.json: invalid \(1 problem\)\n$/,
    );
  });
});

describe("hookgate dlq's command line", () => {
  /** A data dir whose SQLite queue holds one dead letter, as serve leaves it. */
  async function dataDirWithDeadLetter(): Promise<string> {
    const dataDir = tempDir("dlq");
    const queue = createSqliteQueue<DeliveryJob>({ path: join(dataDir, "queue.sqlite") });
    const job = { id: "job-1", sink: "chat", notification: { eventName: "Stop" } } as unknown as DeliveryJob;
    await queue.send([{ id: job.id, body: job }]);
    for (const message of await queue.receive(1, 30_000)) await queue.deadLetter(message, "HTTP 500");
    await queue.close();
    return dataDir;
  }

  it("takes an --sqs-* option given empty (an unset variable) for a mistake, not for the SQLite queue", async () => {
    const dataDir = await dataDirWithDeadLetter();
    for (const [sqs, problem] of [
      [["--sqs-queue-url", "", "--sqs-dlq-url", ""], "--sqs-queue-url and --sqs-dlq-url are empty"],
      [
        ["--sqs-queue-url", "https://sqs.us-east-1.amazonaws.com/1/q", "--sqs-dlq-url", " "],
        "--sqs-dlq-url is empty",
      ],
      [["--sqs-endpoint", "http://127.0.0.1:4566"], "SQS needs both --sqs-queue-url and --sqs-dlq-url"],
    ] as const) {
      // Read as none, these dropped the dead letters of the SQLite queue, not the SQS ones meant.
      const result = await runMain(["dlq", "drop", "--all", ...sqs, "--data-dir", dataDir]);
      expect([result.code, result.stdout], sqs.join(" ")).toEqual([2, ""]);
      expect(result.stderr.split("\n")[0]).toContain(`hookgate: ${problem}`);
    }
    const listed = await runMain(["dlq", "list", "--json", "--data-dir", dataDir]);
    expect((JSON.parse(listed.stdout) as { id: string }[]).map((d) => d.id)).toEqual(["job-1"]);
  });

  it("takes an empty --policy or --data-dir (an unset variable) for a mistake, naming the option", async () => {
    const dataDir = await dataDirWithDeadLetter();
    for (const [args, problem] of [
      // "cannot read : ENOENT…", naming no option.
      [
        ["replay", "--all", "--policy", "", "--data-dir", dataDir],
        "--policy is empty (an unset variable?): give the policy file, or leave --policy out to replay every dead letter",
      ],
      // "no queue at queue.sqlite", or the queue.sqlite of the working directory if it held one.
      [
        ["list", "--data-dir", ""],
        "--data-dir is empty (an unset variable?): give the --data-dir that hookgate serve uses, or leave it out for .hookgate",
      ],
      [
        ["drop", "--all", "--data-dir", " "],
        "--data-dir is empty (an unset variable?): give the --data-dir that hookgate serve uses, or leave it out for .hookgate",
      ],
    ] as const) {
      const result = await runMain(["dlq", ...args]);
      expect([result.code, result.stdout, result.stderr.split("\n")[0]], args.join(" ")).toEqual([
        2,
        "",
        `hookgate: ${problem}`,
      ]);
    }
    const listed = await runMain(["dlq", "list", "--json", "--data-dir", dataDir]);
    expect((JSON.parse(listed.stdout) as { id: string }[]).map((d) => d.id)).toEqual(["job-1"]);
  });

  it("refuses an option of another subcommand, as it refuses --limit on drop", async () => {
    const dataDir = await dataDirWithDeadLetter();
    for (const [args, problem] of [
      [["list", "--id", "job-2"], "dlq list takes no --id: it lists every dead letter, up to --limit"],
      [["list", "--all"], "dlq list takes no --all: it lists every dead letter, up to --limit"],
      [["replay", "--all", "--json"], 'dlq replay takes no --json: it prints one line, "replayed N jobs"'],
      [["drop", "--id", "job-1", "--json"], 'dlq drop takes no --json: it prints one line, "dropped N jobs"'],
    ] as const) {
      // Ignored, `list --id` listed every dead letter, and `replay --all --json | jq` read no JSON.
      const result = await runMain(["dlq", ...args, "--data-dir", dataDir]);
      expect([result.code, result.stdout, result.stderr.split("\n")[0]], args.join(" ")).toEqual([
        2,
        "",
        `hookgate: ${problem}`,
      ]);
    }
    const listed = await runMain(["dlq", "list", "--json", "--data-dir", dataDir]);
    expect((JSON.parse(listed.stdout) as { id: string }[]).map((d) => d.id)).toEqual(["job-1"]);
  });

  it("names what to fix when --data-dir holds no hookgate queue, and leaves what it holds as it was", async () => {
    const other = "pass the --data-dir that hookgate serve uses";
    const text = tempDir("dlq-text");
    writeFileSync(join(text, "queue.sqlite"), "not a database, a note\n");
    // Another program's database: opened as the queue, it got the queue's tables and was listed
    // as an empty dead-letter queue, exit 0.
    const foreign = tempDir("dlq-foreign");
    const db = new Database(join(foreign, "queue.sqlite"));
    db.exec("CREATE TABLE notes (body TEXT)");
    db.close();
    const folder = tempDir("dlq-folder");
    mkdirSync(join(folder, "queue.sqlite"));
    for (const [dataDir, problem] of [
      [
        text,
        `${join(text, "queue.sqlite")} is not a hookgate queue (SQLite: file is not a database): ${other}`,
      ],
      [foreign, `${join(foreign, "queue.sqlite")} is an SQLite database but not a hookgate queue: ${other}`],
      [folder, `${join(folder, "queue.sqlite")} is a directory, not the queue file: ${other}`],
    ] as const) {
      for (const args of [["list"], ["drop", "--all"]]) {
        const result = await runMain(["dlq", ...args, "--data-dir", dataDir]);
        expect([result.code, result.stdout, result.stderr], args.join(" ")).toEqual([
          1,
          "",
          `hookgate: ${problem}\n`,
        ]);
      }
    }
    const tables = new Database(join(foreign, "queue.sqlite"), { readonly: true });
    expect(tables.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").pluck().all()).toEqual([
      "notes",
    ]);
    tables.close();
  });
});

describe("hookgate schema and token hash", () => {
  it("prints the JSON Schema generated from the zod schema, the same as examples/policy.schema.json", async () => {
    const { code, stdout } = await runCli(["schema"]);
    expect(code).toBe(0);
    const schema = JSON.parse(stdout);
    expect(schema.$schema).toBe("https://json-schema.org/draft/2020-12/schema");
    expect(schema.required).toEqual(expect.arrayContaining(["version", "rules"]));
    expect(stdout).toBe(readFileSync(join(ROOT, "examples/policy.schema.json"), "utf8"));
    // A `where` operator object takes exactly one operator, as `check` says; an editor reading
    // the schema is told so too, where the zod refine has no JSON Schema form of its own.
    const operators: Record<string, unknown>[] = [];
    const walk = (node: unknown): void => {
      if (node === null || typeof node !== "object") return;
      const record = node as Record<string, unknown>;
      const properties = record.properties as Record<string, unknown> | undefined;
      if (properties && "startsWith" in properties && "exists" in properties) operators.push(record);
      for (const value of Object.values(record)) walk(value);
    };
    walk(schema);
    expect(operators.length).toBeGreaterThan(0);
    for (const operator of operators) expect(operator).toMatchObject({ minProperties: 1, maxProperties: 1 });
  });

  it("refuses an argument or option schema does not take, as every command does", async () => {
    for (const [args, problem] of [
      [["schema", "policy.json"], 'schema takes no argument "policy.json"'],
      [["schema", "--out", "schema.json"], "unknown option --out"],
    ] as const) {
      const result = await runMain([...args]);
      expect(result.code, args.join(" ")).toBe(2);
      expect(result.stdout).toBe("");
      expect(result.stderr).toMatch(new RegExp(`^hookgate: ${problem}\n\nUsage:\n {2}hookgate schema\n`));
    }
  });

  it("hashes the token on stdin trimmed, as the gateway trims the token it is sent", async () => {
    const expected = createHash("sha256").update("hookgate-dev-token").digest("hex");
    expect((await runCli(["token", "hash"], "hookgate-dev-token\n")).stdout).toBe(`${expected}\n`);
    // Before, "tok\n\n" or " tok" hashed to what no client's token could match.
    expect((await runCli(["token", "hash"], " hookgate-dev-token\r\n\n")).stdout).toBe(`${expected}\n`);
    expect(expected).toBe("0af148632bfc2bdf9076bdc41fa58336a206cd23532da915cc5d2f9e9c3f6a50");
    for (const blank of ["", "  \n"]) {
      const empty = await runCli(["token", "hash"], blank);
      expect(empty.code).toBe(1);
      expect(empty.stderr).toMatch(/no token on stdin/);
    }
  });

  it("says a token given as an argument goes on stdin, and repeats no argument", async () => {
    // Each was told `token takes one subcommand: "hash"`, which it had given; a base64url token
    // may start with a `-`, and was repeated as an unknown option.
    for (const extra of ["hookgate-dev-token", "-Xk9_tokenLooksLikeAnOption", "--frob"]) {
      const result = await runMain(["token", "hash", extra]);
      expect([result.code, result.stdout, result.stderr.split("\n")[0]]).toEqual([
        2,
        "",
        'hookgate: token hash takes no argument or option and reads the token on stdin (a shell keeps its arguments in its history): printf %s "$HOOKGATE_TOKEN" | hookgate token hash',
      ]);
      expect(result.stderr).not.toContain(extra);
    }
  });

  it("prints a command's own help for CMD --help and help CMD, the usage on stderr for no command", async () => {
    // Every command's help from main in this process: a process for each, one after the other,
    // took most of the test's minute on a loaded host. The built command prints one of them and
    // the usage for no command, so what bin.ts adds (the streams, the exit code) is run too.
    const all = await runMain(["--help"]);
    expect(all.code).toBe(0);
    expect(all.stderr).toBe("");
    expect(all.stdout).toMatch(
      /^hookgate: a hook gateway for AI coding agents\n\nUsage:\n {2}hookgate serve /,
    );
    expect(all.stdout).toMatch(/^ {2}hookgate doctor .*\n {16}\[--timeout S\]\n {2}hookgate --version\n$/m);
    // The global usage, as each command's lines: `  hookgate CMD ...` and the lines continuing it.
    const usageLines = new Map<string, string[]>();
    let current: string[] = [];
    for (const line of all.stdout.slice(all.stdout.indexOf("Usage:\n") + 7).split("\n")) {
      const command = /^ {2}hookgate ([a-z][a-z-]*)/.exec(line)?.[1];
      if (command !== undefined) {
        current = usageLines.get(command) ?? [];
        usageLines.set(command, current);
        current.push(line);
      } else if (/^ {3,}\S/.test(line)) current.push(line);
      else current = [];
    }
    expect([...usageLines.keys()].join(" ")).toBe(
      "serve check simulate test replay egress-check dlq schema token init send doctor",
    );
    for (const [command, lines] of usageLines) {
      const help = await runMain([command, "--help"]);
      expect(help.code).toBe(0);
      expect(help.stderr).toBe("");
      // Only this command's usage, as the global usage shows it, then what its options mean.
      expect(help.stdout).toMatch(new RegExp(`^Usage:\n  hookgate ${command}[ \n]`));
      expect(help.stdout.slice(0, help.stdout.indexOf("\n\n"))).toBe(`Usage:\n${lines.join("\n")}`);
      expect(help.stdout.slice(help.stdout.indexOf("\n\n")).trim()).not.toBe("");
      expect(await runMain(["help", command]), command).toEqual(help);
      expect(await runMain([command, "-h"]), command).toEqual(help);
    }
    expect((await runMain(["serve", "--help"])).stdout).toMatch(
      /--data-dir DIR +where the notification queue/,
    );
    expect((await runMain(["send", "-h"])).stdout).toMatch(
      /--timeout S +seconds to wait for the answer \(default 10/,
    );
    const unknown = await runMain(["help", "frobnicate"]);
    expect(unknown.code).toBe(2);
    expect(unknown.stdout).toBe("");
    expect(unknown.stderr).toBe(`hookgate: unknown command "frobnicate"\n\n${all.stdout}`);
    // Words after the topic are refused, as every command refuses a stray argument, with the
    // topic's usage, as a usage error in that command gives it.
    const checkUsage = (await runMain(["check", "--bad-option"])).stderr.replace(/^hookgate: .*\n\n/, "");
    expect(checkUsage).toMatch(/^Usage:\n {2}hookgate check FILE\n/);
    expect(await runMain(["help", "check", "policy.json"])).toEqual({
      code: 2,
      stdout: "",
      stderr: `hookgate: help takes one command, not "policy.json" after it\n\n${checkUsage}`,
    });
    expect(await runMain(["--version", "check"])).toEqual({
      code: 2,
      stdout: "",
      stderr: `hookgate: --version takes no arguments\n\n${all.stdout}`,
    });
    const inProcess = await runMain([]);
    expect(inProcess).toEqual({ code: 2, stdout: "", stderr: all.stdout });

    const [doctor, none] = await Promise.all([runCli(["doctor", "--help"]), runCli([])]);
    expect(doctor).toEqual(await runMain(["doctor", "--help"]));
    expect(none).toEqual(inProcess);
  });

  it("answers a usage error in a command with that command's usage", async () => {
    const result = await runCli(["doctor", "--expect", "maybe", "--url", "http://127.0.0.1:1"]);
    expect(result.code).toBe(2);
    expect(result.stdout).toBe("");
    expect(result.stderr).toBe(
      "hookgate: --expect maybe is not one of deny, allow, ask, defer, none; none: no opinion\n\nUsage:\n" +
        "  hookgate doctor --url URL [--client NAME] [--expect deny|allow|ask|defer|none] [--command CMD]\n" +
        "                [--timeout S]\n\nhookgate doctor --help says what each option means.\n",
    );
    const parse = await runCli(["check", "--frob"]);
    expect(parse.code).toBe(2);
    expect(parse.stderr).toMatch(
      /^hookgate: unknown option --frob\n\nUsage:\n {2}hookgate check FILE\n\nhookgate check --help/s,
    );
  });

  it("points a command without options at what its help says, not at an option table it lacks", async () => {
    for (const args of [
      ["check", "--json", "p.json"],
      ["schema", "--json"],
      ["token", "hash", "--json"],
    ]) {
      const result = await runMain(args);
      expect(result.code, args.join(" ")).toBe(2);
      expect(result.stderr, args.join(" ")).toMatch(
        new RegExp(`\\n\\nhookgate ${args[0]} --help says what it does\\.\\n$`),
      );
      expect((await runMain([args[0] as string, "--help"])).stdout, args[0]).not.toMatch(/^ {2}--/m);
    }
    expect((await runMain(["dlq", "list", "--frob"])).stderr).toMatch(
      /\n\nhookgate dlq --help says what each option means\.\n$/,
    );
  });

  it('says which option a mistyped or misplaced word meant, never node\'s `-- "--policy"`', async () => {
    // The first line of stderr for each command line: what a user who mixed the commands' habits reads.
    const said = async (args: string[]) => {
      const result = await runMain(args);
      expect(result.code, args.join(" ")).toBe(2);
      return result.stderr.split("\n")[0];
    };
    expect(await said(["check", "--policy", "examples/policy.json"])).toBe(
      "hookgate: check takes the policy file as its first argument, not --policy: hookgate check FILE",
    );
    expect(await said(["test", "--policy", "p.json", "cases.json"])).toBe(
      "hookgate: test takes the policy file as its first argument, not --policy: hookgate test POLICY CASES.json...",
    );
    expect(await said(["serve", "examples/policy.json"])).toBe(
      'hookgate: "examples/policy.json" needs its option: did you mean --policy examples/policy.json?',
    );
    expect(await said(["doctor", "http://127.0.0.1:8787/v1/hooks/claude-code"])).toBe(
      'hookgate: "http://127.0.0.1:8787/v1/hooks/claude-code" needs its option: did you mean --url http://127.0.0.1:8787/v1/hooks/claude-code?',
    );
    expect(await said(["init", "deepcode", "--url", "http://127.0.0.1:8787/v1/hooks/deepcode"])).toBe(
      'hookgate: "deepcode" needs its option: did you mean --client deepcode?',
    );
    // Events separated by spaces: the shell ends --events' value at the first one.
    expect(
      await said([
        "init",
        "--client",
        "claude-code",
        "--url",
        "http://127.0.0.1:8787/v1/hooks/claude-code",
        "--events",
        "PreToolUse",
        "Stop",
      ]),
    ).toBe(
      'hookgate: init takes no argument "Stop": --events takes every event in one comma-separated list, as in --events EVENT,Stop',
    );
    expect(await said(["doctor", "--url", "http://127.0.0.1:1", "--expct", "allow"])).toBe(
      "hookgate: unknown option --expct (did you mean --expect?)",
    );
    expect(await said(["egress-check", "https://example.com/", "--alow", "https://example.com/*"])).toBe(
      "hookgate: unknown option --alow (did you mean --allow?)",
    );
    expect(await said(["dlq", "list", "--limt", "3"])).toBe(
      "hookgate: unknown option --limt (did you mean --limit?)",
    );
    expect(await said(["serve", "--policy", "p.json", "-x"])).toBe("hookgate: unknown option -x");
    // An option cut short is refused, and named before an option it is a near miss of (`--port`
    // is one edit from `--pol`); cut shorter than the options it starts, it names them all.
    expect(await said(["serve", "--pol", "p.json"])).toBe(
      "hookgate: unknown option --pol (did you mean --policy?)",
    );
    expect(await said(["serve", "--policy", "p.json", "--po", "8080"])).toBe(
      "hookgate: unknown option --po (did you mean --policy or --port?)",
    );
    expect(await said(["egress-check", "https://example.com/", "--pol", "p.json"])).toBe(
      "hookgate: unknown option --pol (did you mean --policy?)",
    );
    // An option the help names only in passing (replay's "serve --record"; dlq's "--sqs-...") is
    // not one the command takes, and is never offered for itself.
    expect(await said(["replay", "--policy", "p.json", "--record", "r.jsonl"])).toBe(
      "hookgate: unknown option --record",
    );
    expect(await said(["dlq", "list", "--sqs"])).toBe(
      "hookgate: unknown option --sqs (did you mean --sqs-queue-url, --sqs-dlq-url or --sqs-endpoint?)",
    );
    // send never fails, and says the same on stderr.
    const send = await runMain(["send", "--ur", "http://127.0.0.1:1/v1/hooks/claude-code"]);
    expect(send).toEqual({
      code: 0,
      stdout: "",
      stderr: "hookgate send: unknown option --ur (did you mean --url?); the agent gets no answer\n",
    });
  });

  it("names the word a mistyped or cut-short value most likely means, for each that takes one of a fixed set", async () => {
    const hook = "http://127.0.0.1:1/v1/hooks/claude-code";
    const clients = "claude-code, deepcode, deepagents, deepagents-legacy";
    const said = async (args: string[]) => {
      const result = await runMain(args);
      expect(result.code, args.join(" ")).toBe(2);
      return result.stderr.split("\n")[0];
    };
    // init listed the clients and named none; send, doctor and simulate said "must be one of".
    const init = await runCli(["init", "--client", "claud", "--url", hook]);
    expect(init.code).toBe(2);
    expect(init.stderr.split("\n")[0]).toBe(
      `hookgate: --client claud is not one of ${clients} (did you mean claude-code?)`,
    );
    expect(await said(["doctor", "--url", hook, "--client", "deepagent"])).toBe(
      `hookgate: --client deepagent is not one of ${clients} (did you mean deepagents?)`,
    );
    expect(
      await said(["simulate", "--policy", "examples/policy.json", "--client", "Deepcode", rmEvent]),
    ).toBe(`hookgate: --client Deepcode is not one of ${clients} (did you mean deepcode?)`);
    expect(await said(["doctor", "--url", hook, "--expect", "dney"])).toBe(
      "hookgate: --expect dney is not one of deny, allow, ask, defer, none (did you mean deny?); none: no opinion",
    );
    expect(await said(["dlq", "lsit"])).toBe(
      'hookgate: dlq takes "list", "replay" or "drop" (did you mean list?)',
    );
    expect(await said(["token", "hsah"])).toBe(
      'hookgate: token takes one subcommand: "hash" (did you mean hash?)',
    );
    // A word as near to several as to one names none of them.
    expect(await said(["init", "--client", "deep", "--url", hook])).toBe(
      `hookgate: --client deep is not one of ${clients}`,
    );
    expect(await runMain(["send", "--url", hook, "--client", "claude"])).toEqual({
      code: 0,
      stdout: "",
      stderr: `hookgate send: --client claude is not one of ${clients} (did you mean claude-code?); the agent gets no answer\n`,
    });
  });

  it("says an option given without its value needs one, named as its help names it", async () => {
    // Node's words were "Option '--policy <value>' argument missing", and for one followed by
    // another option three lines ending "use '--host=-XYZ'".
    const missing = await runCli(["serve", "--policy"]);
    expect(missing.code).toBe(2);
    expect(missing.stdout).toBe("");
    expect(missing.stderr).toMatch(
      /^hookgate: --policy needs a value: --policy FILE\n\nUsage:\n {2}hookgate serve /,
    );
    const first = async (args: string[]) => {
      const result = await runMain(args);
      expect(result.code, args.join(" ")).toBe(2);
      return result.stderr.split("\n")[0];
    };
    expect(await first(["serve", "--host", "--port", "0", "--policy", "p.json"])).toBe(
      'hookgate: --host needs a value before the next option: --host ADDR (or --host=ADDR for one that starts with "-")',
    );
    expect(await first(["egress-check", "https://example.com/", "--resolve"])).toBe(
      "hookgate: --resolve needs a value: --resolve HOST:ADDR",
    );
    expect(await first(["test", "p.json", "c.json", "--coverage=yes"])).toBe(
      "hookgate: --coverage takes no value",
    );
  });

  it("takes a negative number after an option as its value, and says what the option takes", async () => {
    // parseArgs read `-1` as an option and asked for `--timeout=-XYZ`; the value then given was
    // refused in turn, its range said only then.
    const init = await runCli([
      "init",
      "--client",
      "claude-code",
      "--url",
      "http://127.0.0.1:1",
      "--timeout",
      "-1",
    ]);
    expect(init.code).toBe(2);
    expect(init.stdout).toBe("");
    expect(init.stderr).toMatch(
      /^hookgate: --timeout -1 must be a whole number of seconds from 2 to 600\n\nUsage:/,
    );
    const first = async (args: string[]) => {
      const result = await runMain(args);
      expect(result.code, args.join(" ")).toBe(2);
      return result.stderr.split("\n")[0];
    };
    expect(await first(["serve", "--policy", "examples/policy.json", "--port", "-1"])).toBe(
      'hookgate: --port "-1" is not a port (0 to 65535)',
    );
    expect(await first(["dlq", "list", "--limit", "-5"])).toBe(
      'hookgate: --limit takes a whole number from 1 to 10000, not "-5"',
    );
    // Past `--` every word is an argument, as parseArgs reads it.
    expect(await first(["egress-check", "--", "--x", "-1"])).toBe("hookgate: egress-check takes one URL");
  });

  it("says how to write in full a hook URL given without its scheme", async () => {
    // `localhost:8787` parses, with the scheme `localhost:`: it was only "not http or https".
    const [init, doctor, send] = await Promise.all([
      runCli(["init", "--client", "claude-code", "--url", "localhost:8787"]),
      runCli(["doctor", "--url", "127.0.0.1:8787/v1/hooks/claude-code"]),
      runCli(["send", "--url", "localhost:8787/v1/hooks/claude-code"], "{}"),
    ]);
    expect(init.code).toBe(2);
    expect(init.stderr).toMatch(
      /^hookgate: --url localhost:8787 must be http or https: write it in full, http:\/\/localhost:8787\n\n/,
    );
    expect(doctor.code).toBe(2);
    expect(doctor.stderr).toMatch(
      /^hookgate: "127\.0\.0\.1:8787\/v1\/hooks\/claude-code" is not a URL: write it in full, http:\/\/127\.0\.0\.1:8787\/v1\/hooks\/claude-code\n\n/,
    );
    expect(send).toEqual({
      code: 0,
      stdout: "",
      stderr:
        'hookgate send: "localhost:8787/v1/hooks/claude-code" is not an http or https URL: write it in full, http://localhost:8787/v1/hooks/claude-code; the agent gets no answer\n',
    });
    // A URL with a scheme of its own is told only that it is not http or https.
    expect((await runMain(["doctor", "--url", "ftp://127.0.0.1/x"])).stderr).toMatch(
      /^hookgate: "ftp:\/\/127\.0\.0\.1\/x" is not an http or https URL\n\n/,
    );
  });

  it("never repeats the password of a URL given without its scheme", async () => {
    // `u:hunter2@host:8787` parses, with the scheme `u:` and the password in its path: it was
    // echoed whole before the hint that had left it out.
    const url = "u:hunter2@127.0.0.1:8787/v1/hooks/claude-code";
    const [init, doctor, send, egress] = await Promise.all([
      runCli(["init", "--client", "claude-code", "--url", url]),
      runCli(["doctor", "--url", url]),
      runCli(["send", "--url", url], "{}"),
      runCli(["egress-check", url]),
    ]);
    expect(init.code).toBe(2);
    expect(init.stderr).toMatch(
      /^hookgate: --url 127\.0\.0\.1:8787\/v1\/hooks\/claude-code must be http or https: write it in full, http:\/\/127\.0\.0\.1:8787\/v1\/hooks\/claude-code\n\n/,
    );
    expect(doctor.code).toBe(2);
    expect(doctor.stderr).toMatch(
      /^hookgate: "127\.0\.0\.1:8787\/v1\/hooks\/claude-code" is not an http or https URL: write it in full, http:\/\/127\.0\.0\.1:8787\/v1\/hooks\/claude-code\n\n/,
    );
    expect(send.code).toBe(0);
    expect(send.stderr).toMatch(/^hookgate send: "127\.0\.0\.1:8787\/v1\/hooks\/claude-code" is not an http/);
    expect(egress.code).toBe(1);
    expect(JSON.parse(egress.stdout)).toMatchObject({
      url: "127.0.0.1:8787/v1/hooks/claude-code",
      decision: "deny",
    });
    for (const { stdout, stderr } of [init, doctor, send, egress])
      expect(stdout + stderr).not.toContain("hunter2");
  });

  it("prints its version from package.json", async () => {
    const { version } = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8"));
    const result = await runCli(["--version"]);
    expect(result).toMatchObject({ code: 0, stdout: `hookgate ${version}\n` });
  });

  it("refuses unknown commands and a serve without a policy", async () => {
    expect((await runCli(["frobnicate"])).code).toBe(2);
    expect((await runCli(["serve"])).stderr).toMatch(/serve needs --policy FILE/);
    // A misspelt command is named with the one it most likely meant, in help too.
    const misspelt = await runCli(["chek", "examples/policy.json"]);
    expect(misspelt.code).toBe(2);
    expect(misspelt.stdout).toBe("");
    expect(misspelt.stderr).toMatch(/^hookgate: unknown command "chek" \(did you mean check\?\)\n\n/);
    expect((await runMain(["help", "egres-check"])).stderr).toMatch(
      /^hookgate: unknown command "egres-check" \(did you mean egress-check\?\)\n/,
    );
    // An option before its command is named with the command that takes it.
    const first = await runCli(["--policy", "examples/policy.json", "serve"]);
    expect(first.code).toBe(2);
    expect(first.stderr).toMatch(
      /^hookgate: unknown command "--policy": the command comes first, then its options \(hookgate serve --policy …\)\n\n/,
    );
    expect((await runMain(["--frob"])).stderr).toMatch(/^hookgate: unknown command "--frob"\n\n/);
  });

  it("refuses to serve an invalid policy, listing its problems", async () => {
    const bad = file("serve-bad.json", {
      version: 1,
      rules: [{ id: "x", on: "PreToolUse", decide: "maybe" }],
    });
    const { code, stdout, stderr } = await runCli(["serve", "--policy", bad, "--port", "0"]);
    expect(code).toBe(1);
    expect(stdout).toBe("");
    // As check words it, on stderr: serve could not start.
    expect(stderr).toMatch(
      /^error: \$\.rules\[0\]\.decide: must be one of[^\n]*\n.*serve-bad\.json: invalid \(1 problem\)\n$/,
    );
  });
});

describe("a reader that stops early (`hookgate test … | head -1`)", () => {
  it("is no failure: the command exits with its own code, no stack trace", async () => {
    const { spawn } = await import("node:child_process");
    const { BIN } = await import("../support/process.js");
    const child = spawn(
      process.execPath,
      [BIN, "test", "examples/policy.json", "examples/policy.test.json"],
      {
        cwd: ROOT,
        stdio: ["ignore", "pipe", "pipe"],
      },
    );
    let stderr = "";
    child.stderr.on("data", (chunk) => {
      stderr += chunk;
    });
    // As head does: read the first chunk, then close the pipe.
    child.stdout.once("data", () => child.stdout.destroy());
    const code = await new Promise((resolve) => child.on("close", resolve));
    expect(stderr).not.toMatch(/EPIPE/);
    expect(code).toBe(0);
  });

  it("nor is a stderr no one reads: each command still exits with its own code", async () => {
    const { spawn } = await import("node:child_process");
    const { BIN } = await import("../support/process.js");
    // stderr's reader gone before the command writes its first diagnostic, as `2>&1 | true` does.
    const exitCode = (args: string[]) => {
      const child = spawn(process.execPath, [BIN, ...args], {
        cwd: ROOT,
        stdio: ["ignore", "ignore", "pipe"],
      });
      child.stderr.destroy();
      return new Promise((resolve) => child.on("close", resolve));
    };
    const [usage, init, send] = await Promise.all([
      exitCode(["check"]),
      exitCode(["init", "--client", "claude-code", "--url", "http://127.0.0.1:8787/v1/hooks/claude-code"]),
      // A failure send says on stderr only: still 0, never a client's block or error.
      exitCode(["send", "--url", "http://127.0.0.1:1/v1/hooks/claude-code"]),
    ]);
    expect({ usage, init, send }).toEqual({ usage: 2, init: 0, send: 0 });
  });
});

/**
 * Recorded traffic and its replay: `hookgate serve --record` on a real process, `hookgate
 * replay` on what it wrote and on the same records exported from Workers and Lambda log streams.
 */
import { execFileSync, spawn } from "node:child_process";
import {
  chmodSync,
  closeSync,
  constants,
  existsSync,
  openSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  symlinkSync,
  truncateSync,
  writeFileSync,
  writeSync,
} from "node:fs";
import { open } from "node:fs/promises";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { gzipSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import { createJsonLogger } from "../../src/adapters/log/json-lines.js";
import { createJsonlRecorder } from "../../src/adapters/record/jsonl.js";
import { handleHook, type ReplayRecord } from "../../src/app/handle-hook.js";
import {
  createJudge,
  createLogRecorder,
  RECORD_LOG_BYTES,
  readRecords,
  replayImpact,
} from "../../src/app/replay.js";
import {
  CLAUDE_CODE_EVENTS,
  DEEPAGENTS_LEGACY_EVENTS,
  DEEPAGENTS_V2_EVENTS,
  TOOL_EVENTS,
} from "../../src/core/events.js";
import type { Dialect } from "../../src/core/hook-event.js";
import { loopbackServer } from "../support/loopback.js";
import { startModelServer } from "../support/model-server.js";
import { policyFrom, sha256 } from "../support/policy.js";
import { BIN, type CliResult, childEnv, endProcess, ROOT, runCli } from "../support/process.js";
import { tempDir, whenDone } from "../support/temp.js";

const dir = tempDir("replay");
const CANDIDATE = "test/fixtures/replay/policy.candidate.json";
const TRAFFIC = "test/fixtures/replay/traffic.jsonl";

let candidates = 0;

/** CANDIDATE with a token for each of `teams` too (replay compares no record of a team it has none for). */
function candidateWith(...teams: string[]): string {
  const policy = JSON.parse(readFileSync(join(ROOT, CANDIDATE), "utf8")) as {
    auth: { tokens: unknown[] };
  };
  policy.auth.tokens.push(...teams.map((team, i) => ({ team, sha256: String(i).repeat(64) })));
  candidates += 1;
  const file = join(dir, `candidate-${candidates}.json`);
  writeFileSync(file, JSON.stringify(policy));
  return file;
}

/** `hookgate serve --record FILE` on a free port; resolves once it listens. */
async function serveRecording(recordPath: string, env: Record<string, string> = {}) {
  const child = spawn(
    process.execPath,
    [
      BIN,
      "serve",
      "--policy",
      "examples/policy.json",
      "--port",
      "0",
      "--data-dir",
      join(dir, "data"),
      "--record",
      recordPath,
    ],
    { cwd: ROOT, env: childEnv(env), stdio: ["ignore", "pipe", "pipe"] },
  );
  const exited = new Promise<number | null>((resolve) => child.once("exit", resolve));
  whenDone(() => endProcess(child));
  const messages: string[] = [];
  const lines: string[] = [];
  const url = await new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout }).on("line", (line) => {
      const parsed = JSON.parse(line) as { msg?: string; url?: string };
      lines.push(line);
      messages.push(String(parsed.msg));
      if (parsed.msg === "hookgate listening") resolve(String(parsed.url));
    });
    void exited.then(() => reject(new Error("hookgate serve exited before listening")));
  });
  return {
    url,
    /**
     * Sends SIGHUP and resolves once the reload it asks for is logged (at most 10 s): the policy
     * file is unchanged, so it is logged as such; the record file is reopened before it.
     */
    hangUp: async () => {
      const reloaded = (m: string) => m === "policy reloaded" || m === "policy unchanged; nothing reloaded";
      const before = messages.filter(reloaded).length;
      child.kill("SIGHUP");
      const end = Date.now() + 10_000;
      while (messages.filter(reloaded).length === before) {
        if (Date.now() > end || child.exitCode !== null) throw new Error("no policy reload logged");
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    },
    stop: async () => {
      child.kill("SIGTERM");
      return exited;
    },
    /** Ends it at once, for a gateway that no longer hears SIGTERM. */
    kill: async () => {
      child.kill("SIGKILL");
      return exited;
    },
    messages,
    /** Its stdout, a line at a time. */
    lines,
  };
}

const bash = (command: string) =>
  JSON.stringify({
    session_id: "s2",
    transcript_path: "/home/dev/.claude/projects/p/s2.jsonl",
    cwd: "/home/dev/proj",
    hook_event_name: "PreToolUse",
    tool_name: "Bash",
    tool_input: { command },
  });

const post = (url: string, body: string, token = "hookgate-dev-token") =>
  fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
    body,
  });

describe("hookgate serve --record", () => {
  it("appends one masked, replayable record per judged event, and nothing for simulate or failed requests", async () => {
    const recordPath = join(dir, "traffic.jsonl");
    writeFileSync(recordPath, "");
    const server = await serveRecording(recordPath);
    try {
      const hooks = `${server.url}/v1/hooks/claude-code`;
      const fixture = readFileSync(join(ROOT, "test/fixtures/claude-code/2.1.332/PreToolUse.json"), "utf8");
      expect((await post(hooks, fixture)).status).toBe(200);
      await (await post(hooks, bash("rm -rf /"))).text();
      await (await post(hooks, bash("rm -rf node_modules"))).text();
      await (
        await post(hooks, bash("curl -H 'Authorization: Bearer sk-abcdefghijklmnopqrstuvwxyz' x.io"))
      ).text();
      await (await post(hooks, bash("rm -rf /"), "wrong-token")).text();
      await (await post(hooks, "{not json")).text();
      await (await post(`${server.url}/v1/simulate`, bash("rm -rf /"))).text();
    } finally {
      await server.stop();
    }
    const records = readFileSync(recordPath, "utf8")
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as ReplayRecord);
    expect(records).toHaveLength(4);
    expect(records[1]).toMatchObject({
      client: "claude-code",
      team: "platform",
      decision: "deny",
      reason: "Deleting from / is never allowed",
      rules: ["no-rm-root"],
      shadow: [],
      event: { hook_event_name: "PreToolUse", tool_input: { command: "rm -rf /" } },
    });
    expect(records[1]?.policy).toMatch(/^[0-9a-f]{16}$/);
    expect(Date.parse(records[1]?.time ?? "")).not.toBeNaN();
    expect(records[0]?.event).toEqual(
      JSON.parse(readFileSync(join(ROOT, "test/fixtures/claude-code/2.1.332/PreToolUse.json"), "utf8")),
    );
    expect(JSON.stringify(records[3])).not.toContain("sk-abcdefghijklmnopqrstuvwxyz");
    expect(JSON.stringify(records[3])).toContain("[masked]");

    const replay = await runCli(["replay", "--policy", CANDIDATE, recordPath, "--json"]);
    expect(replay.code).toBe(0);
    const report = JSON.parse(replay.stdout);
    expect(report).toMatchObject({ records: 4, changed: 1, unchanged: 3, byChange: { "none->deny": 1 } });
  });

  it("scrubs the policy's secret values from a record as from the audit line, in the event's keys too", async () => {
    // A team token read from the environment: a tool input keyed by it (an MCP tool's map of
    // credentials) was masked by value only, and the record file quoted the key.
    const token = "mobile-Zq8vR3xT0pLk5WnY2cJh";
    const recordPath = join(dir, "scrubbed.jsonl");
    const server = await serveRecording(recordPath, { HOOKGATE_TOKEN_MOBILE: token });
    try {
      const body = JSON.stringify({
        session_id: "s2",
        transcript_path: "/home/dev/.claude/projects/p/s2.jsonl",
        cwd: "/home/dev/proj",
        hook_event_name: "PreToolUse",
        tool_name: "mcp__vault__store",
        tool_input: { entries: { [token]: "gateway", note: token } },
      });
      expect((await post(`${server.url}/v1/hooks/claude-code`, body, token)).status).toBe(200);
    } finally {
      await server.stop();
    }
    const audit = server.lines.find((l) => l.includes('"msg":"decision"')) ?? "";
    expect(audit).toContain("mcp__vault__store");
    expect(audit).not.toContain(token);
    const written = readFileSync(recordPath, "utf8");
    expect(written).toContain("mcp__vault__store");
    expect(written).not.toContain(token);
    expect((JSON.parse(written) as ReplayRecord).team).toBe("mobile");
  });

  it("writes to a new file at its path after SIGHUP, so a log rotation that renamed the file loses nothing", async () => {
    const recordPath = join(dir, "rotated.jsonl");
    const server = await serveRecording(recordPath);
    try {
      const hooks = `${server.url}/v1/hooks/claude-code`;
      await (await post(hooks, bash("rm -rf /before"))).text();
      // As logrotate does by default: rename the file, then signal the process.
      await until(() => existsSync(recordPath) && readFileSync(recordPath, "utf8").includes("/before"));
      renameSync(recordPath, `${recordPath}.1`);
      await server.hangUp();
      await (await post(hooks, bash("rm -rf /after"))).text();
    } finally {
      await server.stop();
    }
    const commands = (file: string) =>
      readFileSync(file, "utf8")
        .trim()
        .split("\n")
        .map((line) => (JSON.parse(line) as { event: { tool_input: unknown } }).event.tool_input);
    expect(commands(`${recordPath}.1`)).toEqual([{ command: "rm -rf /before" }]);
    expect(commands(recordPath)).toEqual([{ command: "rm -rf /after" }]);
  });

  it("keeps answering after SIGHUP when the record file is a FIFO whose reader has gone", async () => {
    const fifo = join(dir, "gone-reader.fifo");
    execFileSync("mkfifo", [fifo]);
    // A reader while it starts, gone before the SIGHUP: opening the FIFO to write again would wait
    // for the next reader, with the gateway's whole event loop.
    const reader = openSync(fifo, constants.O_RDONLY | constants.O_NONBLOCK);
    const server = await serveRecording(fifo);
    let stopped = false;
    try {
      closeSync(reader);
      await server.hangUp();
      expect(server.messages).toContain("could not reopen the record file; recording goes on as it was");
      const answer = await post(`${server.url}/v1/hooks/claude-code`, bash("rm -rf /after"));
      expect(answer.status).toBe(200);
      expect(await server.stop()).toBe(0);
      stopped = true;
    } finally {
      if (!stopped) await server.kill();
    }
  });

  it("stops, and exits 0, when the record file takes no records (a FIFO nobody reads)", async () => {
    const fifo = join(dir, "unread.fifo");
    execFileSync("mkfifo", [fifo]);
    // A reader that never reads: the pipe fills, and the gateway's write to it blocks.
    const reader = openSync(fifo, constants.O_RDONLY | constants.O_NONBLOCK);
    const server = await serveRecording(fifo);
    let stopped = false;
    try {
      const hooks = `${server.url}/v1/hooks/claude-code`;
      // 200 records of 2 KB: past the pipe's 64 KiB.
      for (let i = 0; i < 200; i++) await (await post(hooks, bash(`echo ${"x".repeat(2000)}`))).text();
      expect(await server.stop()).toBe(0);
      stopped = true;
      expect(server.messages).toContain(
        "the record file took no records while serve stopped; those waiting are not written",
      );
      expect(server.messages.at(-1)).toBe("hookgate stopped");
    } finally {
      if (!stopped) await server.kill();
      closeSync(reader);
    }
  });

  it("stops, and exits 0, when a record file SIGHUP replaced still holds records it takes no more", async () => {
    const fifo = join(dir, "unread-reopened.fifo");
    execFileSync("mkfifo", [fifo]);
    const reader = openSync(fifo, constants.O_RDONLY | constants.O_NONBLOCK);
    const server = await serveRecording(fifo);
    let stopped = false;
    try {
      const hooks = `${server.url}/v1/hooks/claude-code`;
      for (let i = 0; i < 200; i++) await (await post(hooks, bash(`echo ${"x".repeat(2000)}`))).text();
      // Opened again while the first still waits with records the FIFO has no room for.
      await server.hangUp();
      expect((await post(hooks, bash("rm -rf /after"))).status).toBe(200);
      expect(await server.stop()).toBe(0);
      stopped = true;
      expect(server.messages.at(-1)).toBe("hookgate stopped");
    } finally {
      if (!stopped) await server.kill();
      closeSync(reader);
    }
  });

  it("makes the record file readable by its own user alone, and leaves one that exists as it is", async () => {
    const made = join(dir, "private.jsonl");
    const existing = join(dir, "shared.jsonl");
    writeFileSync(existing, "");
    chmodSync(existing, 0o640);
    for (const path of [made, existing]) await (await serveRecording(path)).stop();
    expect(statSync(made).mode & 0o777).toBe(0o600);
    expect(statSync(existing).mode & 0o777).toBe(0o640);
  });
});

/**
 * `fifo` opened to write, once `run` (a replay given it) opens it to read. Should the replay end
 * without opening it, a reader of the test's own lets the open return, and the test fails with
 * the replay's result: the open waited for a reader for ever, the test for its timeout, and a
 * thread of Node's pool stayed blocked in it.
 */
async function writerOf(fifo: string, run: Promise<CliResult>) {
  const opening = open(fifo, "w");
  const ended = await Promise.race([opening.then(() => false), run.then(() => true)]);
  if (!ended) return opening;
  const reader = openSync(fifo, constants.O_RDONLY | constants.O_NONBLOCK);
  try {
    await (await opening).close();
  } finally {
    closeSync(reader);
  }
  throw new Error(`replay ended before it opened ${fifo}: ${JSON.stringify(await run)}`);
}

/** Waits for `check` to hold, at most 10 s. */
async function until(check: () => boolean): Promise<void> {
  const end = Date.now() + 10_000;
  while (!check()) {
    if (Date.now() > end) throw new Error("timed out");
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe("hookgate replay", () => {
  it("prints the impact of a candidate on recorded traffic: counts by change, rule, team and tool, with examples", async () => {
    const { code, stdout } = await runCli(["replay", "--policy", CANDIDATE, TRAFFIC, "--examples", "2"]);
    expect(code).toBe(0);
    expect(stdout).toMatch(
      /^replayed 13 records against test\/fixtures\/replay\/policy.candidate.json \(policy [0-9a-f]{16}\)$/m,
    );
    expect(stdout).toMatch(/^4 changed, 9 unchanged$/m);
    expect(stdout).toMatch(/^by change:\n {2}none -> deny {2}4$/m);
    expect(stdout).toMatch(/^by rule:\n {2}no-rm-root {2}4 {2}\(none -> deny 4\)$/m);
    expect(stdout).toMatch(/^by team:\n {2}platform {2}4 {2}\(none -> deny 4\)$/m);
    expect(stdout).toMatch(/^by tool:\n {2}Bash {2}4 {2}\(none -> deny 4\)$/m);
    expect(stdout).toMatch(/^ {2}run-tests-first: block 1$/m);
    expect(stdout).toContain(
      'PreToolUse Bash {"command":"rm -rf node_modules"}\n      was none\n      now deny "rm -rf is run by a person, never by an agent" [no-rm-root]',
    );
    expect(stdout.match(/^ {6}was /gm)).toHaveLength(2);
  });

  it("reads a file named twice, by the same path or another, once, and says so", async () => {
    // `records/*.jsonl records/today.jsonl` replayed today's records twice and counted them twice.
    const copy = join(dir, "twice.jsonl");
    writeFileSync(copy, readFileSync(join(ROOT, TRAFFIC)));
    const link = join(dir, "twice-link.jsonl");
    rmSync(link, { force: true });
    symlinkSync(copy, link);
    const { code, stdout, stderr } = await runCli([
      "replay",
      "--policy",
      CANDIDATE,
      copy,
      link,
      copy,
      "--json",
    ]);
    expect(code).toBe(0);
    expect(JSON.parse(stdout)).toMatchObject({ records: 13, changed: 4, unchanged: 9 });
    expect(stderr).toBe(
      `hookgate: ${link} is ${copy} again (the same file); its records are replayed once\n` +
        `hookgate: ${copy} is ${copy} again (the same file); its records are replayed once\n`,
    );
  });

  it("reads stdin redirected from a file named too (`- FILE < FILE`) once, and says so", async () => {
    // stdin was copied and counted as a file of its own: every record of FILE twice.
    const file = join(dir, "stdin-too.jsonl");
    writeFileSync(file, readFileSync(join(ROOT, TRAFFIC)));
    const other = join(dir, "stdin-other.jsonl");
    writeFileSync(other, readFileSync(join(ROOT, TRAFFIC)));
    const withStdinFrom = (input: string, args: string[]) => {
      const fd = openSync(input, "r");
      try {
        const child = spawn(process.execPath, [BIN, "replay", "--policy", CANDIDATE, ...args, "--json"], {
          cwd: ROOT,
          env: childEnv(),
          stdio: [fd, "pipe", "pipe"],
        });
        whenDone(() => endProcess(child));
        let stdout = "";
        let stderr = "";
        child.stdout?.on("data", (c) => {
          stdout += c;
        });
        child.stderr?.on("data", (c) => {
          stderr += c;
        });
        return new Promise<CliResult>((resolve) =>
          child.on("close", (code) => resolve({ code, stdout, stderr })),
        );
      } finally {
        closeSync(fd);
      }
    };
    const stdinFirst = await withStdinFrom(file, ["-", file]);
    expect(stdinFirst.code).toBe(0);
    expect(JSON.parse(stdinFirst.stdout)).toMatchObject({ records: 13, changed: 4, unchanged: 9 });
    expect(stdinFirst.stderr).toBe(
      `hookgate: ${file} is stdin (-) again (the same file); its records are replayed once\n`,
    );
    const fileFirst = await withStdinFrom(file, [file, "-"]);
    expect(JSON.parse(fileFirst.stdout)).toMatchObject({ records: 13, changed: 4, unchanged: 9 });
    expect(fileFirst.stderr).toBe(
      `hookgate: stdin (-) is ${file} again (the same file); its records are replayed once\n`,
    );
    // Another file with the same records is another file: both are counted.
    const another = await withStdinFrom(other, ["-", file]);
    expect(another.stderr).toBe("");
    expect(JSON.parse(another.stdout)).toMatchObject({ records: 26, changed: 8, unchanged: 18 });
  });

  it("prints a record's control characters escaped, never to the terminal as they are", async () => {
    // A team, a time or a reason is the record's to hold: an ESC sequence in one retitled or
    // cleared the terminal replay printed to, and a line break forged a line of the report.
    const records = readFileSync(join(ROOT, TRAFFIC), "utf8").trimEnd().split("\n");
    const changed = records.map((line) => {
      const r = JSON.parse(line) as Record<string, unknown>;
      if (!JSON.stringify(r.event).includes("rm -rf node_modules")) return line;
      return JSON.stringify({
        ...r,
        team: "ops\u001b]0;owned\u0007",
        time: "t\u009b2J",
        reason: "a\nnow allow",
      });
    });
    const file = join(dir, "controls.jsonl");
    writeFileSync(file, `${changed.join("\n")}\n`);
    const result = await runCli(["replay", "--policy", candidateWith("ops\u001b]0;owned\u0007"), file]);
    expect(result.code).toBe(0);
    // biome-ignore lint/suspicious/noControlCharactersInRegex: none may reach the terminal.
    expect(result.stdout).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/);
    expect(result.stdout).toContain("ops\\u001b]0;owned\\u0007");
    expect(result.stdout).toContain(
      't\\u009b2J ops\\u001b]0;owned\\u0007 claude-code PreToolUse Bash {"command":"rm -rf node_modules"}',
    );
    expect(result.stdout).not.toMatch(/^now allow/m);
  });

  it("prints a record's bidirectional overrides escaped, as a judge's reason is cleared of them", async () => {
    // An override or isolate (U+202A–202E, U+2066–2069) in a team reordered the line it was printed on.
    const records = readFileSync(join(ROOT, TRAFFIC), "utf8").trimEnd().split("\n");
    const changed = records.map((line) => {
      const r = JSON.parse(line) as Record<string, unknown>;
      if (!JSON.stringify(r.event).includes("rm -rf node_modules")) return line;
      return JSON.stringify({ ...r, team: "ops\u202eled\u2066x\u2069" });
    });
    const file = join(dir, "bidi.jsonl");
    writeFileSync(file, `${changed.join("\n")}\n`);
    const result = await runCli(["replay", "--policy", CANDIDATE, file]);
    expect(result.code).toBe(0);
    expect(result.stdout).not.toMatch(/[\u202a-\u202e\u2066-\u2069]/);
    expect(result.stdout).toContain("ops\\u202eled\\u2066x\\u2069");
  });

  it("says which changes are of events recorded masked, whose answer may be the masking's", async () => {
    // Denied live on the password the agent typed, which the record holds masked; and on the end
    // of a command the record holds cut at 2,000 characters. Judged again, neither is denied.
    const records = readFileSync(join(ROOT, TRAFFIC), "utf8").trimEnd().split("\n");
    const template = JSON.parse(records[8] ?? "") as { event: { tool_input: unknown } };
    const denied = (command: string, rule: string) =>
      JSON.stringify({
        ...template,
        event: { ...template.event, tool_input: { command } },
        decision: "deny",
        reason: "no",
        rules: [rule],
      });
    const file = join(dir, "masked.jsonl");
    writeFileSync(
      file,
      `${[
        ...records,
        denied("mysql -u root -p[masked] shop", "no-db-password"),
        denied(`echo ${"a".repeat(1995)}…[12 more characters]`, "no-long-echo"),
        // Unchanged, yet a rule reading the password may answer the live event otherwise.
        JSON.stringify({
          ...template,
          event: { ...template.event, tool_input: { command: "psql postgres://app:[masked]@db/shop" } },
        }),
      ].join("\n")}\n`,
    );
    const json = JSON.parse((await runCli(["replay", "--policy", CANDIDATE, file, "--json"])).stdout);
    expect(json).toMatchObject({
      changed: 6,
      unchanged: 10,
      byChange: { "none->deny": 4, "deny->none": 2 },
      masked: { compared: 3, records: 2, byChange: { "deny->none": 2 } },
    });
    expect(json.examples["deny->none"].map((e: { masked?: boolean }) => e.masked)).toEqual([true, true]);
    expect(json.examples["none->deny"].map((e: { masked?: boolean }) => e.masked)).toEqual([
      undefined,
      undefined,
      undefined,
    ]);
    const { stdout } = await runCli(["replay", "--policy", CANDIDATE, file]);
    expect(stdout).toMatch(
      /^recorded masked \(3 of the records compared, 2 of the changes\): .*\n {2}deny -> none {2}2$/m,
    );
    expect(stdout).toContain('{"command":"mysql -u root -p[masked] shop"} (masked)\n      was deny');
    expect(stdout).toContain('{"command":"rm -rf node_modules"}\n      was none');
  });

  it("compares no record of a team the candidate has no token for, and judges every record as the default team without auth", async () => {
    // A team renamed or removed in the candidate: live its callers' tokens are refused (or are
    // another team's now), which no record can tell; judged as the team it was, it read unchanged.
    const records = readFileSync(join(ROOT, TRAFFIC), "utf8").trimEnd().split("\n");
    const renamed = records.map((line) => {
      const r = JSON.parse(line) as Record<string, unknown>;
      return JSON.stringify(JSON.stringify(r.event).includes("rm -rf") ? { ...r, team: "ios" } : r);
    });
    const file = join(dir, "teams.jsonl");
    writeFileSync(file, `${renamed.join("\n")}\n`);
    const json = JSON.parse((await runCli(["replay", "--policy", CANDIDATE, file, "--json"])).stdout);
    expect(json).toMatchObject({
      records: 13,
      changed: 0,
      unchanged: 7,
      teamUnknown: { records: 6, byTeam: { ios: 6 } },
    });
    const { stdout } = await runCli(["replay", "--policy", CANDIDATE, file]);
    expect(stdout).toMatch(/^0 changed, 7 unchanged, 6 not compared$/m);
    expect(stdout).toMatch(
      /^not compared \(6\): their team is no team of the candidate's tokens.*\n {2}ios {2}6$/m,
    );
    // Without auth every caller is the default team: a rule for the recorded team never applies.
    const noAuth = JSON.parse(readFileSync(join(ROOT, "examples/policy.json"), "utf8")) as Record<
      string,
      unknown
    >;
    delete noAuth.auth;
    noAuth.rules = [
      ...(noAuth.rules as unknown[]),
      { id: "platform-only", on: "PreToolUse", teams: ["platform"], decide: "deny", reason: "no" },
    ];
    const open = join(dir, "no-auth.json");
    writeFileSync(open, JSON.stringify(noAuth));
    const unauthenticated = JSON.parse(
      (await runCli(["replay", "--policy", open, TRAFFIC, "--json"])).stdout,
    );
    expect(unauthenticated).toMatchObject({ changed: 0, teamUnknown: { records: 0 } });
  });

  it("compares no record whose event the candidate cannot judge, which answers a fail mode", async () => {
    // A PreToolUse without its tool_name (edited, or from a version that took one): judged, it
    // read as "deny -> none" put down to no-rm-root, which the candidate never got to.
    const records = readFileSync(join(ROOT, TRAFFIC), "utf8").trimEnd().split("\n");
    const denied = JSON.parse(records.find((l) => l.includes('"rm -rf /"')) ?? "") as {
      event: Record<string, unknown>;
    };
    const { tool_name: _, ...toolless } = denied.event;
    const file = join(dir, "unjudged.jsonl");
    writeFileSync(file, `${[...records, JSON.stringify({ ...denied, event: toolless })].join("\n")}\n`);
    const json = JSON.parse((await runCli(["replay", "--policy", CANDIDATE, file, "--json"])).stdout);
    expect(json).toMatchObject({
      records: 14,
      changed: 4,
      unchanged: 9,
      byChange: { "none->deny": 4 },
      unjudged: { records: 1, byError: { EVENT_INVALID: 1 } },
    });
    const { stdout } = await runCli(["replay", "--policy", CANDIDATE, file]);
    expect(stdout).toMatch(/^4 changed, 9 unchanged, 1 not compared$/m);
    expect(stdout).toMatch(
      /^not compared \(1\): the candidate cannot judge their event .*\n {2}EVENT_INVALID {2}1$/m,
    );
  });

  it("counts a single record as one record", async () => {
    const one = join(dir, "one.jsonl");
    writeFileSync(one, `${readFileSync(join(ROOT, TRAFFIC), "utf8").split("\n")[0]}\n`);
    const { code, stdout } = await runCli(["replay", "--policy", CANDIDATE, one]);
    expect(code).toBe(0);
    expect(stdout).toMatch(
      /^replayed 1 record against test\/fixtures\/replay\/policy.candidate.json \(policy [0-9a-f]{16}\)$/m,
    );
  });

  it("answers --json for CI, and shows no change against the policy that answered", async () => {
    const json = JSON.parse((await runCli(["replay", "--policy", CANDIDATE, TRAFFIC, "--json"])).stdout);
    expect(json).toMatchObject({
      candidate: CANDIDATE,
      records: 13,
      changed: 4,
      unchanged: 9,
      byChange: { "none->deny": 4 },
      byRule: { "no-rm-root": { "none->deny": 4 } },
      byTeam: { platform: { "none->deny": 4 } },
      byTool: { Bash: { "none->deny": 4 } },
      notRun: { records: 0 },
    });
    // README's "For CI, `--json` prints the same report (…)" names every key of it.
    const named = /For CI, `--json` prints the same report \(([^)]*)\)/.exec(
      readFileSync(join(ROOT, "README.md"), "utf8"),
    )?.[1];
    const keys = named
      ?.split(";")[0]
      ?.match(/`\w+`/g)
      ?.map((key) => key.slice(1, -1));
    expect(keys?.sort()).toEqual(Object.keys(json).sort());
    expect(json.examples["none->deny"]).toHaveLength(3);
    expect(json.examples["none->deny"][0]).toMatchObject({
      event: "PreToolUse",
      tool: "Bash",
      input: { command: "rm -rf node_modules" },
      before: { decision: "none", rules: [] },
      after: { decision: "deny", rules: ["no-rm-root"] },
    });
    const same = JSON.parse(
      (await runCli(["replay", "--policy", "examples/policy.json", TRAFFIC, "--json"])).stdout,
    );
    expect(same).toMatchObject({ records: 13, changed: 0, unchanged: 13, byChange: {} });
  });

  it.each([
    ["wrangler tail --format json", "test/fixtures/replay/wrangler-tail.json"],
    ["a CloudWatch Logs Insights export", "test/fixtures/replay/cloudwatch-insights.json"],
  ])("reads the same records from %s", async (_what, path) => {
    const json = JSON.parse((await runCli(["replay", "--policy", CANDIDATE, path, "--json"])).stdout);
    expect(json).toMatchObject({ records: 13, changed: 4, byChange: { "none->deny": 4 } });
  });

  it("reads Lambda's raw stdout lines, with or without a text prefix, and stdin", async () => {
    const record = readFileSync(join(ROOT, TRAFFIC), "utf8").split("\n")[8] ?? "";
    const line = `{"time":"2026-11-29T23:15:14.747Z","level":"info","msg":"hook record","record":${record}}`;
    const stream = [
      "START RequestId: 8d1c Version: $LATEST",
      '{"time":"2026-11-29T23:15:14.747Z","level":"info","msg":"decision","decisionId":"x","event":"PreToolUse","decision":"none"}',
      line,
      `2026-11-29T23:15:14.747Z\t8d1c\tINFO\t${line}`,
      "END RequestId: 8d1c",
    ].join("\n");
    const { code, stdout } = await runCli(["replay", "--policy", CANDIDATE, "-", "--json"], stream);
    expect(code).toBe(0);
    expect(JSON.parse(stdout)).toMatchObject({ records: 2, changed: 2 });
  });

  it("replays a file of 200,000 records, not only small ones", async () => {
    const record = JSON.stringify({
      time: "2026-11-29T23:21:02.526Z",
      decisionId: "d",
      policy: "f0d9c9726998939d",
      client: "claude-code",
      team: "platform",
      event: { hook_event_name: "Stop", session_id: "s" },
      decision: "none",
      rules: [],
      shadow: [],
    });
    const big = join(dir, "big.jsonl");
    writeFileSync(big, `${record}\n`.repeat(200_000));
    const { code, stdout, stderr } = await runCli(["replay", "--policy", CANDIDATE, big, "--json"]);
    expect(stderr).toBe("");
    expect(code).toBe(0);
    expect(JSON.parse(stdout)).toMatchObject({ records: 200_000, changed: 0, unchanged: 200_000 });
  });

  it("replays a file larger than the process may hold, a record at a time", async () => {
    // 200 MiB of 8 KB records against a 64 MiB heap: read whole, as replay did, it ran out of memory.
    const record = (i: number) =>
      JSON.stringify({
        time: "2026-11-29T23:21:02.526Z",
        decisionId: `d${i}`,
        policy: "f0d9c9726998939d",
        client: "claude-code",
        team: "platform",
        event: { hook_event_name: "Stop", session_id: "s", note: `é${"x".repeat(8000)}` },
        decision: "none",
        rules: [],
        shadow: [],
      });
    const large = join(dir, "large.jsonl");
    const fd = openSync(large, "w");
    let records = 0;
    try {
      const block = `${Array.from({ length: 1000 }, (_, i) => record(i)).join("\n")}\n`;
      while (records * 8000 < 200 * 2 ** 20) {
        writeSync(fd, block);
        records += 1000;
      }
    } finally {
      closeSync(fd);
    }
    try {
      const { code, stdout, stderr } = await runCli(["replay", "--policy", CANDIDATE, large, "--json"], "", {
        NODE_OPTIONS: "--max-old-space-size=64",
      });
      expect(stderr).toBe("");
      expect(code).toBe(0);
      expect(JSON.parse(stdout)).toMatchObject({ records, changed: 0, unchanged: records });
    } finally {
      rmSync(large);
    }
  });

  it("replays a Logs Insights export larger than the process may hold, a row at a time", async () => {
    // One JSON document of 64 MiB (aws logs get-query-results, 4-space indent) against a 64 MiB
    // heap: held whole and parsed as one value, as replay did, it ran out of memory.
    const message = (i: number) =>
      JSON.stringify({
        time: "2026-11-29T23:21:02.526Z",
        level: "info",
        msg: "hook record",
        record: {
          time: "2026-11-29T23:21:02.526Z",
          decisionId: `d${i}`,
          policy: "f0d9c9726998939d",
          client: "claude-code",
          team: "platform",
          event: { hook_event_name: "Stop", session_id: "s", note: `é${"x".repeat(8000)}` },
          decision: "none",
          rules: [],
          shadow: [],
        },
      });
    const row = (i: number) =>
      JSON.stringify(
        [
          { field: "@timestamp", value: "2026-11-29 23:21:02.526" },
          { field: "@message", value: message(i) },
          { field: "@ptr", value: `p${i}` },
        ],
        null,
        4,
      ).replace(/^/gm, "        ");
    const insights = join(dir, "insights-large.json");
    const fd = openSync(insights, "w");
    let rows = 0;
    try {
      writeSync(fd, '{\n    "results": [\n');
      while (rows * 8000 < 64 * 2 ** 20) {
        const block = Array.from({ length: 1000 }, (_, i) => row(rows + i)).join(",\n");
        writeSync(fd, `${rows > 0 ? ",\n" : ""}${block}`);
        rows += 1000;
      }
      writeSync(
        fd,
        `\n    ],\n    "statistics": {\n        "recordsMatched": ${rows}.0\n    },\n    "status": "Complete"\n}\n`,
      );
    } finally {
      closeSync(fd);
    }
    try {
      const { code, stdout, stderr } = await runCli(
        ["replay", "--policy", CANDIDATE, insights, "--json"],
        "",
        {
          NODE_OPTIONS: "--max-old-space-size=64",
        },
      );
      expect(stderr).toBe("");
      expect(code).toBe(0);
      expect(JSON.parse(stdout)).toMatchObject({ records: rows, changed: 0, unchanged: rows });
    } finally {
      rmSync(insights);
    }
  });

  it("says which line is too long to read in one piece", async () => {
    // Sparse: 3 GiB that take no disk, one line with no newline; refused past 512 MiB of it.
    const huge = join(dir, "huge.jsonl");
    writeFileSync(huge, "");
    truncateSync(huge, 3 * 2 ** 30);
    const { code, stderr } = await runCli(["replay", "--policy", CANDIDATE, huge]);
    rmSync(huge);
    expect(code).toBe(1);
    expect(stderr).toBe(
      `hookgate: cannot read ${huge}: line 1 is longer than replay reads in one piece (512 MiB): a hook record is one line, far shorter\n`,
    );
  });

  it("reads a pretty-printed export that starts with a byte order mark, and stdin or a pipe through a temporary file it removes", async () => {
    const text = readFileSync(join(ROOT, "test/fixtures/replay/wrangler-tail.json"), "utf8");
    const marked = join(dir, "bom.json");
    writeFileSync(marked, `\uFEFF${text}`);
    const file = await runCli(["replay", "--policy", CANDIDATE, marked, "--json"]);
    expect(file.stderr).toBe("");
    expect(JSON.parse(file.stdout)).toMatchObject({ records: 13, changed: 4 });

    const temp = tempDir("replay-tmp");
    const piped = await runCli(["replay", "--policy", CANDIDATE, "-", "--json"], `\uFEFF${text}`, {
      TMPDIR: temp,
    });
    expect(JSON.parse(piped.stdout)).toMatchObject({ records: 13, changed: 4 });
    expect(readdirSync(temp)).toEqual([]);

    // A pipe given as a file (`<(zcat records.jsonl.gz)`) is read once too, and copied.
    const fifo = join(dir, "records.fifo");
    execFileSync("mkfifo", [fifo]);
    const writer = spawn("sh", ["-c", 'cat "$1" > "$2"', "sh", join(ROOT, TRAFFIC), fifo]);
    whenDone(() => endProcess(writer));
    const fromPipe = await runCli(["replay", "--policy", CANDIDATE, fifo, "--json"], "", { TMPDIR: temp });
    expect(JSON.parse(fromPipe.stdout)).toMatchObject({ records: 13, changed: 4 });
    expect(readdirSync(temp)).toEqual([]);
  });

  it("names a UTF-16 export as UTF-16, not as a file of no records", async () => {
    // Windows PowerShell's `wrangler tail --format json > tail.json` writes UTF-16 with a byte
    // order mark: read as UTF-8 its records were "other lines", and the fix offered was to record.
    const text = readFileSync(join(ROOT, TRAFFIC), "utf8");
    const wide = join(dir, "utf16.jsonl");
    writeFileSync(wide, Buffer.from(`\uFEFF${text}`, "utf16le"));
    const file = await runCli(["replay", "--policy", CANDIDATE, wide]);
    expect(file).toMatchObject({ code: 1, stdout: "" });
    expect(file.stderr).toBe(
      `hookgate: ${wide} is UTF-16, not UTF-8 (Windows PowerShell's > writes UTF-16): save it as UTF-8 (| Out-File -Encoding utf8)\n`,
    );
    const big = await runCli(
      ["replay", "--policy", CANDIDATE, "-"],
      Buffer.from(`\uFEFF${text}`, "utf16le").swap16(),
    );
    expect(big.stderr).toMatch(/^hookgate: stdin \(-\) is UTF-16, not UTF-8 /);
  });

  it("names a gzip-compressed records file as compressed, not as a file of no records", async () => {
    // logrotate's `compress` leaves recordings as .gz: their bytes were "other lines", and the fix
    // offered was to record.
    const packed = gzipSync(readFileSync(join(ROOT, TRAFFIC)));
    const gz = join(dir, "traffic 1.jsonl.gz");
    writeFileSync(gz, packed);
    const file = await runCli(["replay", "--policy", CANDIDATE, gz]);
    expect(file).toMatchObject({ code: 1, stdout: "" });
    expect(file.stderr).toBe(
      `hookgate: ${gz} is gzip-compressed (logrotate's compress, Firehose's files): replay what zcat gives, <(zcat '${gz}') in its place\n`,
    );
    const piped = await runCli(["replay", "--policy", CANDIDATE, "-"], packed);
    expect(piped).toMatchObject({ code: 1, stdout: "" });
    expect(piped.stderr).toMatch(
      /^hookgate: stdin \(-\) is gzip-compressed .*: pipe it through zcat first\n$/,
    );
  });

  it("leaves no copy of stdin in the temporary directory, even while it reads it or when interrupted", async () => {
    // The copy holds recorded events: it leaves the directory as soon as it is made. It was
    // removed only after the replay, and stayed behind when Ctrl-C stopped it.
    const temp = tempDir("replay-tmp");
    const child = spawn(process.execPath, [BIN, "replay", "--policy", CANDIDATE, "-", "--json"], {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? "", TMPDIR: temp },
      stdio: ["pipe", "ignore", "ignore"],
    });
    whenDone(() => endProcess(child));
    const exited = new Promise<NodeJS.Signals | null>((resolve) =>
      child.once("exit", (_, signal) => resolve(signal)),
    );
    // More than a pipe holds: written only once replay has read most of it into its copy.
    const lines = readFileSync(join(ROOT, TRAFFIC), "utf8");
    await new Promise<void>((resolve, reject) =>
      child.stdin.write(lines.repeat(Math.ceil(2 ** 21 / lines.length)), (e) => (e ? reject(e) : resolve())),
    );
    expect(readdirSync(temp)).toEqual([]);
    child.kill("SIGINT");
    expect(await exited).toBe("SIGINT");
    expect(readdirSync(temp)).toEqual([]);
  });

  it("exits 1, reporting nothing, when a file is rewritten between its check and its replay", async () => {
    // A FIFO given second holds replay after the first file's check, until it is opened to write.
    const first = join(dir, "rewritten.jsonl");
    const traffic = readFileSync(join(ROOT, TRAFFIC), "utf8");
    writeFileSync(first, traffic);
    const fifo = join(dir, "second.fifo");
    execFileSync("mkfifo", [fifo]);
    try {
      const run = runCli(["replay", "--policy", CANDIDATE, first, fifo, "--json"]);
      const writer = await writerOf(fifo, run);
      // In place, as `: > FILE` or logrotate's copytruncate: 3 records of the 13 checked, and one
      // malformed that the check never saw.
      writeFileSync(
        first,
        `${traffic.split("\n").slice(0, 3).join("\n")}\n{"msg":"hook record","record":{}}\n`,
      );
      await writer.writeFile(traffic);
      await writer.close();
      const { code, stdout, stderr } = await run;
      expect(stderr).toBe(
        `hookgate: ${first} changed after it was checked (rewritten or truncated, not appended to): what was replayed is not what was checked, no report; replay a copy no one writes to\n`,
      );
      expect(code).toBe(1);
      expect(stdout).toBe("");
    } finally {
      rmSync(fifo);
    }
  });

  it("exits 1 when a file is cut at the end of one of its 1 MiB blocks between its check and its replay", async () => {
    // Every block read again is the one checked: only their count says the file is shorter.
    const record = readFileSync(join(ROOT, TRAFFIC), "utf8").split("\n")[8] ?? "";
    const pad = (n: number) => `${record}\n${" ".repeat(n - Buffer.byteLength(record) - 2)}\n`;
    const file = join(dir, "blocks.jsonl");
    writeFileSync(file, pad(2 ** 20).repeat(2));
    const fifo = join(dir, "blocks.fifo");
    execFileSync("mkfifo", [fifo]);
    try {
      const run = runCli(["replay", "--policy", CANDIDATE, file, fifo, "--json"]);
      const writer = await writerOf(fifo, run);
      truncateSync(file, 2 ** 20);
      await writer.writeFile(readFileSync(join(ROOT, TRAFFIC), "utf8"));
      await writer.close();
      const { code, stdout, stderr } = await run;
      expect(stderr).toContain(`hookgate: ${file} changed after it was checked`);
      expect(code).toBe(1);
      expect(stdout).toBe("");
    } finally {
      rmSync(fifo);
    }
  });

  it("with --with-judge, calls no model for a record rewritten between its check and its replay", async () => {
    // The replay's reads are checked against the check's a block at a time, before any record in
    // a block is judged: the rewritten records were judged (their models called, at their cost)
    // and only the digest of the whole file, at its end, said it had changed.
    const model = await startModelServer();
    const first = join(dir, "rewritten-judged.jsonl");
    const fifo = join(dir, "judged.fifo");
    try {
      model.script({ verdict: { ok: false, reason: "writes a secret" } });
      const candidate = join(dir, "judge-rewritten.json");
      writeFileSync(
        candidate,
        JSON.stringify({
          version: 1,
          egress: { allowCidrs: ["127.0.0.1/32"] },
          rules: [
            {
              id: "judge",
              on: "PreToolUse",
              matcher: "Write",
              prompt: { text: "ok? $ARGUMENTS", model: "m", onError: "allow" },
            },
          ],
          models: { m: { provider: "anthropic", model: "x", apiKey: "k", url: model.anthropicUrl } },
        }),
      );
      const records = (tool: string) =>
        Array.from({ length: 3 }, (_, i) =>
          JSON.stringify({
            time: "2026-11-29T00:00:00.000Z",
            decisionId: `d-${tool}-${i}`,
            policy: "p",
            team: "default",
            client: "claude-code",
            event: {
              session_id: "s",
              transcript_path: "/t",
              cwd: "/p",
              hook_event_name: "PreToolUse",
              tool_name: tool,
              tool_input: { file_path: `/p/${i}.txt` },
            },
            decision: "none",
            rules: [],
          }),
        ).join("\n");
      // Checked: three Reads, which call no model. Replayed: three Writes in their place.
      writeFileSync(first, `${records("Read")}\n`);
      execFileSync("mkfifo", [fifo]);
      const run = runCli(["replay", "--policy", candidate, "--with-judge", "--json", first, fifo]);
      const writer = await writerOf(fifo, run);
      writeFileSync(first, `${records("Write")}\n`);
      await writer.writeFile(readFileSync(join(ROOT, TRAFFIC), "utf8"));
      await writer.close();
      const { code, stdout, stderr } = await run;
      expect(stderr).toContain(`hookgate: ${first} changed after it was checked`);
      expect(code).toBe(1);
      expect(stdout).toBe("");
      expect(model.requests).toEqual([]);
    } finally {
      rmSync(fifo, { force: true });
      await model.close();
    }
  });

  it("exits 1 only on unreadable input", async () => {
    const missing = await runCli(["replay", "--policy", CANDIDATE, join(dir, "missing.jsonl")]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/cannot read .*missing\.jsonl/);

    const noRecords = join(dir, "other.log");
    writeFileSync(noRecords, 'hello\n{"msg":"policy loaded"}\n');
    const none = await runCli(["replay", "--policy", CANDIDATE, noRecords]);
    expect(none.code).toBe(1);
    expect(none.stderr).toMatch(/holds no hook records \(2 other lines\)/);

    const malformed = join(dir, "malformed.jsonl");
    writeFileSync(
      malformed,
      '{"msg":"hook record","record":{"event":"x","decision":"maybe","client":"claude-code"}}\n',
    );
    const bad = await runCli(["replay", "--policy", CANDIDATE, malformed]);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain(
      "line 1: event must be an object; decision must be one of allow, deny, ask, defer, block, none",
    );
    // The same on stdin, through its temporary copy.
    const badStdin = await runCli(["replay", "--policy", CANDIDATE, "-"], readFileSync(malformed, "utf8"));
    expect(badStdin.code).toBe(1);
    expect(badStdin.stderr).toContain("-: 1 malformed hook record");

    const invalidPolicy = join(dir, "policy.json");
    writeFileSync(invalidPolicy, '{"version": 1, "rules": [{"id": "x", "on": "Stop", "decide": "stop"}]}');
    const invalid = await runCli(["replay", "--policy", invalidPolicy, TRAFFIC]);
    expect(invalid).toMatchObject({ code: 1, stdout: "" });
    // As check words it: each problem, then the file and how many.
    expect(invalid.stderr).toBe(
      `error: $.rules[0].decide: must be one of "allow", "deny", "ask", "defer", "block"\n${invalidPolicy}: invalid (1 problem)\n`,
    );

    // An empty file (or stdin from a pipe whose command failed) is a mistake, not "no impact".
    const empty = join(dir, "empty.jsonl");
    writeFileSync(empty, "");
    const nothing = await runCli(["replay", "--policy", CANDIDATE, empty]);
    expect(nothing.code).toBe(1);
    expect(nothing.stderr).toMatch(/empty\.jsonl holds no hook records \(it is empty\)/);
    // stdin is named as replay's other messages name it: "- holds no hook records" read as a typo.
    const piped = await runCli(["replay", "--policy", CANDIDATE, "-"], "");
    expect(piped).toMatchObject({ code: 1, stdout: "" });
    expect(piped.stderr).toMatch(/^hookgate: stdin \(-\) holds no hook records \(it is empty\): /);
  });

  it("says so when a record is cut short, and replays the rest", async () => {
    const lines = readFileSync(TRAFFIC, "utf8").trimEnd().split("\n");
    const last = lines.at(-1) ?? "";
    const cut = join(dir, "cut.jsonl");
    writeFileSync(cut, `${[...lines.slice(0, -1), last.slice(0, last.length >> 1)].join("\n")}\n`);
    const result = await runCli(["replay", "--policy", CANDIDATE, cut]);
    expect(result.code).toBe(0);
    expect(result.stderr).toContain(
      `cut.jsonl: 1 line that looks like a record but does not parse, first at line ${lines.length} (cut short?); not replayed`,
    );
    expect(result.stdout).toMatch(new RegExp(`^replayed ${lines.length - 1} records`, "m"));
  });

  it("says so when an export holds a record's log line cut short (CloudWatch's 256 KB), and replays the rest", async () => {
    type Row = { field: string; value: string }[];
    const insights = JSON.parse(
      readFileSync(join(ROOT, "test/fixtures/replay/cloudwatch-insights.json"), "utf8"),
    );
    const rows = insights.results as Row[];
    const cutRow = (row: Row): Row =>
      row.map((f) => (f.field === "@message" ? { ...f, value: f.value.slice(0, f.value.length >> 1) } : f));
    const some = join(dir, "insights-cut.json");
    writeFileSync(
      some,
      JSON.stringify({ ...insights, results: [cutRow(rows[0] as Row), ...rows.slice(1)] }, null, 4),
    );
    const result = await runCli(["replay", "--policy", CANDIDATE, some]);
    expect(result.code).toBe(0);
    expect(result.stderr).toContain(
      "insights-cut.json: 1 line that looks like a record but does not parse, first at line 1 (cut short?); not replayed",
    );
    expect(result.stdout).toMatch(new RegExp(`^replayed ${rows.length - 1} records`, "m"));

    const only = join(dir, "insights-only-cut.json");
    writeFileSync(only, JSON.stringify({ ...insights, results: [cutRow(rows[0] as Row)] }, null, 4));
    const none = await runCli(["replay", "--policy", CANDIDATE, only]);
    expect(none.code).toBe(1);
    expect(none.stderr).toContain(
      "insights-only-cut.json holds no hook records (1 other line; 1 looks like a record cut short, first at line 1)",
    );
  });

  it("says so when a record cut short has the next one appended on its line, and replays that one", async () => {
    // What `serve --record` leaves when a write is cut (a crash, a full disk) and the next start
    // appends to the file: the cut record was dropped without a word.
    const lines = readFileSync(TRAFFIC, "utf8").trimEnd().split("\n");
    const [first = "", second = ""] = lines;
    const joined = join(dir, "joined.jsonl");
    writeFileSync(joined, `${first.slice(0, first.length >> 1)}${second}\n${lines.slice(2).join("\n")}\n`);
    const result = await runCli(["replay", "--policy", CANDIDATE, joined]);
    expect(result.code).toBe(0);
    expect(result.stderr).toContain(
      "joined.jsonl: 1 line that looks like a record but does not parse, first at line 1 (cut short?); not replayed",
    );
    expect(result.stdout).toMatch(new RegExp(`^replayed ${lines.length - 1} records`, "m"));
  });

  it("needs --policy", async () => {
    expect((await runCli(["replay", TRAFFIC])).code).toBe(2);
  });

  it("calls the candidate's judge with --with-judge, and never forwards", async () => {
    const model = await startModelServer();
    const hookServer = await loopbackServer((_req, res) => res.end(""));
    try {
      model.script({ verdict: { ok: false, reason: "writes a secret" } });
      const candidate = join(dir, "judge.json");
      writeFileSync(
        candidate,
        JSON.stringify({
          version: 1,
          egress: { allowCidrs: ["127.0.0.1/32"] },
          rules: [
            {
              id: "judge",
              on: "PreToolUse",
              matcher: "Write",
              prompt: { text: "ok? $ARGUMENTS", model: "m", onError: "allow" },
            },
            {
              id: "relay",
              on: "PreToolUse",
              matcher: "Edit",
              forward: { url: `${hookServer.url}/hook`, onError: "allow" },
            },
            {
              id: "judge-shadow",
              on: "PreToolUse",
              matcher: "Write",
              mode: "shadow",
              prompt: { text: "shadow? $ARGUMENTS", model: "m" },
            },
          ],
          models: { m: { provider: "anthropic", model: "x", apiKey: "k", url: model.anthropicUrl } },
        }),
      );
      const record = (tool: string) =>
        JSON.stringify({
          time: "2026-11-29T00:00:00.000Z",
          decisionId: `d-${tool}`,
          policy: "p",
          team: "default",
          client: "claude-code",
          event: {
            session_id: "s",
            transcript_path: "/t",
            cwd: "/p",
            hook_event_name: "PreToolUse",
            tool_name: tool,
            tool_input: { file_path: "/p/.env" },
          },
          decision: "none",
          rules: [],
        });
      const records = join(dir, "judge.jsonl");
      writeFileSync(records, `${record("Write")}\n${record("Edit")}\n`);
      const plain = JSON.parse((await runCli(["replay", "--policy", candidate, "--json", records])).stdout);
      expect(plain.notRun.records).toBe(2);
      // A shadow rule not called is counted as not run, never as a verdict of "none".
      expect(plain.shadow).toEqual({ "judge-shadow": { "not run": 1 } });
      const judged = await runCli(["replay", "--policy", candidate, "--with-judge", "--json", records]);
      expect(judged.code).toBe(0);
      const report = JSON.parse(judged.stdout);
      expect(report.byChange).toEqual({ "none->deny": 1 });
      // Put down to the prompt rule whose model denied (it once said "(no rule)").
      expect(report.byRule).toEqual({ judge: { "none->deny": 1 } });
      expect(report.notRun).toEqual({ records: 1, byRule: { relay: 1 } });
      expect(report.shadow).toEqual({ "judge-shadow": { deny: 1 } });
      expect(model.requests.length).toBe(2);
      expect(hookServer.received).toEqual([]);

      // A model it cannot call (its key unset here) is no change of policy: its records are not
      // compared, and stderr says why before the report.
      const keyless = join(dir, "judge-keyless.json");
      const document = JSON.parse(readFileSync(candidate, "utf8"));
      document.models.m.apiKey = "env:HOOKGATE_TEST_UNSET_KEY";
      writeFileSync(keyless, JSON.stringify(document));
      const failed = await runCli(["replay", "--policy", keyless, "--with-judge", "--json", records]);
      expect(failed.code).toBe(0);
      expect(failed.stderr).toContain("$.models.m.apiKey: HOOKGATE_TEST_UNSET_KEY is not set");
      const failedReport = JSON.parse(failed.stdout);
      expect(failedReport.changed).toBe(0);
      expect(failedReport.byChange).toEqual({});
      expect(failedReport.judgeFailed).toEqual({ records: 1, byRule: { "judge (JUDGE_NO_API_KEY)": 1 } });
      const text = await runCli(["replay", "--policy", keyless, "--with-judge", records]);
      expect(text.stdout).toContain("0 changed, 0 unchanged, 2 not compared");
      expect(text.stdout).toContain(
        "not compared (1): their prompt rules' model calls failed, so they answered their onError:\n  judge (JUDGE_NO_API_KEY)  1",
      );

      // So is one whose env: url is unset: named first, never called at the public endpoint.
      const urlless = join(dir, "judge-urlless.json");
      document.models.m.apiKey = "k";
      document.models.m.url = "env:HOOKGATE_TEST_UNSET_URL";
      writeFileSync(urlless, JSON.stringify(document));
      const calls = model.requests.length;
      const nowhere = await runCli(["replay", "--policy", urlless, "--with-judge", "--json", records]);
      expect(nowhere.stderr).toContain("$.models.m.url: HOOKGATE_TEST_UNSET_URL is not set");
      expect(JSON.parse(nowhere.stdout).judgeFailed).toEqual({
        records: 1,
        byRule: { "judge (JUDGE_NO_URL)": 1 },
      });
      expect(model.requests.length).toBe(calls);
    } finally {
      await model.close();
      await hookServer.close();
    }
  });
});

const policy = await policyFrom({
  version: 1,
  auth: { tokens: [{ team: "a", sha256: await sha256("token-a") }] },
  rules: [
    { id: "deny-rm", on: "PreToolUse", if: "Bash(rm *)", decide: "deny", reason: "no rm" },
    { id: "b-asks", on: "PreToolUse", teams: ["b"], decide: "ask" },
  ],
});

describe("the recorder port and the judge behind test and replay", () => {
  const deps = (recorder: (r: ReplayRecord) => void, logs: unknown[] = []) => ({
    policy: () => policy,
    clock: { now: () => Date.parse("2026-01-02T03:04:05Z"), monotonic: () => 0 },
    newId: () => "id-1",
    sha256,
    logger: {
      log: (_level: string, msg: string, fields?: Record<string, unknown>) => logs.push({ msg, ...fields }),
    },
    recorder,
  });
  const request = (body: string, token = "token-a") => ({
    body: { ok: true as const, text: body },
    contentType: "application/json",
    authorization: `Bearer ${token}`,
    dialect: "claude-code" as const,
  });

  it("records next to the audit line only, and a failing recorder never changes the answer", async () => {
    const records: ReplayRecord[] = [];
    await handleHook(
      deps((r) => records.push(r)),
      request(bash("rm -rf x")),
    );
    await handleHook(
      deps((r) => records.push(r)),
      request(bash("rm -rf x")),
      { audit: false, explain: true, runRemote: false },
    );
    await handleHook(
      deps((r) => records.push(r)),
      request(bash("rm -rf x"), "wrong"),
    );
    expect(records).toEqual([
      {
        time: "2026-01-02T03:04:05.000Z",
        decisionId: "id-1",
        policy: policy.hash,
        client: "claude-code",
        team: "a",
        event: JSON.parse(bash("rm -rf x")),
        decision: "deny",
        reason: "no rm",
        rules: ["deny-rm"],
        shadow: [],
      },
    ]);
    const logs: unknown[] = [];
    const outcome = await handleHook(
      deps(() => {
        throw new Error("disk full");
      }, logs),
      request(bash("rm -rf x")),
    );
    expect(outcome.audit.decision).toBe("deny");
    expect(logs).toContainEqual(
      expect.objectContaining({ msg: "recording the decision failed", error: "Error: disk full" }),
    );
  });

  it("writes the Workers and Lambda record as a log line that readRecords reads back", async () => {
    const lines: string[] = [];
    const record = createLogRecorder({
      log: (level, msg, fields) => lines.push(JSON.stringify({ time: "t", level, msg, ...fields })),
    });
    await handleHook(deps(record), request(bash("rm -rf x")));
    expect(JSON.parse(lines[0] ?? "")).toMatchObject({ msg: "hook record", record: { decision: "deny" } });
    const read = readRecords(lines.join("\n"));
    expect(read.records).toHaveLength(1);
    expect(read.records[0]).toMatchObject({ team: "a", rules: ["deny-rm"], decision: "deny" });
  });

  it("serialises a record once on Workers and Lambda, where the JSON lines' logger takes the JSON it was measured by", () => {
    const lines: string[] = [];
    const record = createLogRecorder(
      createJsonLogger({ write: (line) => lines.push(line) }, "info", () => 0),
    );
    let serialised = 0;
    const event = {
      toJSON() {
        serialised++;
        return JSON.parse(bash("rm -rf x"));
      },
    };
    record({
      time: "2026-01-01T00:00:00.000Z",
      decisionId: "id-1",
      policy: "p",
      client: "claude-code",
      team: "a",
      event,
      decision: "deny",
      reason: "no rm",
      rules: ["deny-rm"],
      shadow: [],
    });
    expect(serialised).toBe(1);
    expect(lines).toHaveLength(1);
    expect(lines[0]?.endsWith("}\n")).toBe(true);
    expect(JSON.parse(lines[0] ?? "")).toEqual({
      time: "1970-01-01T00:00:00.000Z",
      level: "info",
      msg: "hook record",
      record: expect.objectContaining({ event: JSON.parse(bash("rm -rf x")), rules: ["deny-rm"] }),
    });
    expect(readRecords(lines.join("")).records).toMatchObject([{ decisionId: "id-1", decision: "deny" }]);
  });

  it("measures a record as the log line writes it, its control characters escaped six bytes each", () => {
    // 30,000 C1 controls in a session id: 60 KB of JSON as JSON.stringify writes it, 180 KB once
    // the log line escapes each (\u0085), past the limit a log line is held to.
    const sessionId = "\u0085".repeat(30_000);
    expect(Buffer.byteLength(JSON.stringify({ session_id: sessionId }))).toBeLessThan(RECORD_LOG_BYTES);
    const lines: string[] = [];
    const record = createLogRecorder(
      createJsonLogger({ write: (line) => lines.push(line) }, "info", () => 0),
    );
    record({
      time: "2026-01-01T00:00:00.000Z",
      decisionId: "id-1",
      policy: "p",
      client: "claude-code",
      team: "a",
      event: { session_id: sessionId },
      decision: "none",
      reason: "",
      rules: [],
      shadow: [],
    });
    expect(lines).toHaveLength(1);
    expect(Buffer.byteLength(lines[0] ?? "")).toBeLessThan(RECORD_LOG_BYTES);
    const written = (JSON.parse(lines[0] ?? "") as { record: Record<string, unknown> }).record;
    expect(written).not.toHaveProperty("event");
    expect(written.eventOmitted).toEqual({ bytes: 60_017 });
  });

  it("writes a record's control characters escaped, as measured, through the logger that takes its JSON", () => {
    const lines: string[] = [];
    const record = createLogRecorder(
      createJsonLogger({ write: (line) => lines.push(line) }, "info", () => 0),
    );
    record({
      time: "2026-01-01T00:00:00.000Z",
      decisionId: "id-1",
      policy: "p",
      client: "claude-code",
      team: "a\u202eb",
      event: { session_id: "s\u0085\u2028" },
      decision: "none",
      reason: "",
      rules: [],
      shadow: [],
    });
    expect(lines).toHaveLength(1);
    expect(lines[0]).not.toMatch(/[\u0085\u2028\u202e]/);
    expect(lines[0]).toContain('"team":"a\\u202eb"');
    expect(lines[0]).toContain('"session_id":"s\\u0085\\u2028"');
    expect(JSON.parse(lines[0] ?? "")).toMatchObject({
      record: { team: "a\u202eb", event: { session_id: "s\u0085\u2028" } },
    });
  });

  it("writes a record too large for a log line without its event, which replay counts as not compared", async () => {
    // A Glob's paths: each string short, so masking's cut at 2,000 characters does not bound it.
    const glob = JSON.stringify({
      session_id: "s2",
      transcript_path: "/home/dev/.claude/projects/p/s2.jsonl",
      cwd: "/home/dev/proj",
      hook_event_name: "PostToolUse",
      tool_name: "Glob",
      tool_input: { pattern: "**/*.ts" },
      tool_response: {
        filenames: Array.from({ length: 4000 }, (_, i) => `/home/dev/proj/src/module-${i}/index.ts`),
        numFiles: 4000,
      },
    });
    expect(glob.length).toBeGreaterThan(RECORD_LOG_BYTES);
    const lines: string[] = [];
    const record = createLogRecorder({
      log: (level, msg, fields) => lines.push(JSON.stringify({ time: "t", level, msg, ...fields })),
    });
    await handleHook(deps(record), request(glob));
    await handleHook(deps(record), request(bash("rm -rf x")));
    const [large = "", small = ""] = lines;
    expect(large.length).toBeLessThan(RECORD_LOG_BYTES);
    const written = (JSON.parse(large) as { record: Record<string, unknown> }).record;
    expect(written).not.toHaveProperty("event");
    expect(written).toMatchObject({ decision: "none", team: "a", client: "claude-code", decisionId: "id-1" });
    expect(written.eventOmitted).toEqual({ bytes: glob.length });
    expect(JSON.parse(small)).toMatchObject({ record: { event: { tool_input: { command: "rm -rf x" } } } });

    const file = join(dir, "omitted.log");
    writeFileSync(file, `${lines.join("\n")}\n`);
    const candidate = candidateWith("a");
    const text = await runCli(["replay", "--policy", candidate, file]);
    expect(text.code).toBe(0);
    expect(text.stdout).toContain("replayed 2 records");
    expect(text.stdout).toContain("0 changed, 1 unchanged, 1 not compared");
    expect(text.stdout).toContain(
      "not compared (1): their event was too large for a log line (over 128 KiB of record), so it was recorded without it; answered live:\n  none  1",
    );
    const json = JSON.parse((await runCli(["replay", "--policy", candidate, file, "--json"])).stdout);
    expect(json).toMatchObject({ records: 2, changed: 0, unchanged: 1 });
    expect(json.eventOmitted).toEqual({ records: 1, byDecision: { none: 1 } });
  });

  it("reads back every record the record file takes, for every client and event, and judges each as answered", async () => {
    const everywhere = await policyFrom({
      version: 1,
      auth: { tokens: [{ team: "a", sha256: await sha256("token-a") }] },
      rules: [
        { id: "deny-all", on: "*", decide: "deny", reason: "no" },
        { id: "context-all", on: "*", context: "read the README" },
        { id: "shadow-block", on: "*", mode: "shadow", decide: "block", reason: "not yet" },
      ],
    });
    const file = join(dir, "every-event.jsonl");
    const recorder = createJsonlRecorder(file, { log: () => undefined });
    const body = (client: Dialect, name: string) => {
      if (client === "deepagents-legacy")
        return { event: name, thread_id: "t", tool_name: "Bash", tool_args: { command: "ls" } };
      return {
        hook_event_name: name,
        session_id: "s",
        cwd: "/p",
        ...(client === "claude-code" && { transcript_path: "/home/dev/.claude/projects/p/s.jsonl" }),
        ...(TOOL_EVENTS.has(name) && { tool_name: "Bash", tool_input: { command: "ls" } }),
      };
    };
    const events: [Dialect, readonly string[]][] = [
      ["claude-code", CLAUDE_CODE_EVENTS],
      ["deepcode", CLAUDE_CODE_EVENTS],
      ["deepagents", DEEPAGENTS_V2_EVENTS],
      ["deepagents-legacy", DEEPAGENTS_LEGACY_EVENTS],
    ];
    const answered: string[] = [];
    for (const [client, names] of events)
      for (const name of names) {
        const outcome = await handleHook(
          { ...deps(recorder.record), policy: () => everywhere },
          { ...request(JSON.stringify(body(client, name))), dialect: client },
        );
        expect(outcome.error).toBeUndefined();
        answered.push(`${client} ${name} ${outcome.audit.decision}`);
      }
    await recorder.close();
    const read = readRecords(readFileSync(file, "utf8"));
    expect(read).toMatchObject({ invalid: [], skipped: 0, unparsed: { count: 0 } });
    expect(
      read.records.map(
        (r) =>
          `${r.client} ${(r.event as Record<string, string>).hook_event_name ?? (r.event as Record<string, string>).event} ${r.decision}`,
      ),
    ).toEqual(answered);
    const report = await replayImpact(
      { clock: { now: () => 0, monotonic: () => 0 }, newId: () => "id", sha256 },
      everywhere,
      read.records,
    );
    expect(report).toMatchObject({ records: answered.length, unchanged: answered.length, changed: 0 });
  });

  it("judges as the given team without its token", async () => {
    const judge = createJudge(
      { clock: { now: () => 0, monotonic: () => 0 }, newId: () => "id", sha256 },
      policy,
    );
    const asB = await judge({ body: { ok: true, text: bash("ls") }, client: "claude-code", team: "b" });
    expect(asB.audit).toMatchObject({ team: "b", decision: "ask", rules: ["b-asks"] });
    expect(asB.error).toBeUndefined();
    const asA = await judge({ body: { ok: true, text: bash("ls") }, client: "claude-code", team: "a" });
    expect(asA.audit).toMatchObject({ team: "a", decision: "none", rules: [] });
  });
});

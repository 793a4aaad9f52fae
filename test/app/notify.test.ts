/** The notifier: jobs per sink, enrichment of permission prompts, and deepagents tool-call correlation. */
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { CreateQueueCommand } from "@aws-sdk/client-sqs";
import { createSqsServer } from "local-aws-sqs";
import { describe, expect, it } from "vitest";
import { createPrometheusRegistry } from "../../src/adapters/metrics/prometheus.js";
import { createMemoryQueue } from "../../src/adapters/queue/memory.js";
import { createSqsClientForLocal, createSqsQueue } from "../../src/adapters/queue/sqs.js";
import { createMemorySessionStore } from "../../src/adapters/session/memory.js";
import { createSqliteSessionStore } from "../../src/adapters/session/sqlite.js";
import { createNotifier, type NotifyInput, sessionStoreFailures } from "../../src/app/notify.js";
import type { DeliveryJob } from "../../src/core/delivery.js";
import { parseHookEvent } from "../../src/core/events.js";
import { tempDir } from "../support/temp.js";

function setup() {
  const queue = createMemoryQueue<DeliveryJob>();
  const tasks: Promise<void>[] = [];
  const logs: unknown[] = [];
  const notifier = createNotifier({
    queue,
    clock: { now: () => 1_700_000_000_000, monotonic: () => 0 },
    logger: { log: (...a) => logs.push(a) },
    sessions: createMemorySessionStore(),
    defer: (task) => {
      tasks.push(task());
    },
  });
  const send = async (body: unknown, fields: Partial<NotifyInput> = {}) => {
    const event = parseHookEvent(body);
    if (!event.ok) throw new Error(event.error.message);
    notifier.notify({
      decisionId: `d${tasks.length}`,
      event: event.value,
      team: "t",
      decision: "none",
      reason: undefined,
      notify: [{ ruleId: "r", sinks: ["audit"] }],
      remember: true,
      ...fields,
    });
    await Promise.all(tasks);
  };
  const jobs = async () => (await queue.receive(100, 60_000)).map((m) => m.body);
  return { send, jobs, logs, queue };
}

/**
 * The body of Claude Code's Notification for a permission prompt in `session`. Its message names the
 * tool the prompt is for, which picks the remembered call; "m" names none.
 */
function permissionPrompt(session: string, message = "Claude needs your permission to use Bash") {
  return {
    session_id: session,
    transcript_path: "/t",
    cwd: "/p",
    hook_event_name: "Notification",
    message,
    notification_type: "permission_prompt",
  };
}

/** What the gateway hands the notifier for a Claude Code permission prompt a rule notifies to `audit`. */
function promptInput(decisionId: string): NotifyInput {
  const event = parseHookEvent(permissionPrompt("s", "m"));
  if (!event.ok) throw new Error(event.error.message);
  return {
    decisionId,
    event: event.value,
    team: "t",
    decision: "none",
    reason: undefined,
    notify: [{ ruleId: "r", sinks: ["audit"] }],
    remember: true,
  };
}

/**
 * A notifier over a memory session store whose tool-call writes `refused` picks throw as KV's
 * 429 does; `send` notifies one event, waits for its work and moves the clock a second on.
 */
function notifierRefusingWrites(
  refused: (ids: readonly string[], tool: { toolName: string; summary: string }) => boolean,
) {
  let now = 1_700_000_000_000;
  const store = createMemorySessionStore();
  const rememberTool = store.rememberTool.bind(store);
  store.rememberTool = async (ids, tool, at) => {
    if (refused(ids, tool)) throw new Error("KV PUT failed: 429 Too Many Requests");
    return rememberTool(ids, tool, at);
  };
  const queue = createMemoryQueue<DeliveryJob>();
  const tasks: Promise<void>[] = [];
  const notifier = createNotifier({
    queue,
    clock: { now: () => now, monotonic: () => 0 },
    logger: { log: () => {} },
    sessions: store,
    defer: (t) => {
      tasks.push(t());
    },
  });
  const send = async (body: unknown, fields: Partial<NotifyInput> = {}) => {
    const event = parseHookEvent(body);
    if (!event.ok) throw new Error(event.error.message);
    notifier.notify({ ...promptInput(`d${now}`), event: event.value, ...fields });
    await Promise.all(tasks);
    now += 1_000;
  };
  return { queue, send };
}

describe("createNotifier", () => {
  it("puts one job per sink per event, even when several rules name the same sink", async () => {
    const { send, jobs } = setup();
    await send(
      { session_id: "s", transcript_path: "/t", cwd: "/p", hook_event_name: "SessionEnd", reason: "other" },
      {
        notify: [
          { ruleId: "a", sinks: ["audit", "chat"] },
          { ruleId: "b", sinks: ["audit"] },
        ],
      },
    );
    const all = await jobs();
    expect(all.map((j) => j.id).sort()).toEqual(["evt_d0.audit", "evt_d0.chat"]);
    expect(all[0]?.notification.id).toBe("evt_d0");
  });

  it("carries what the client does with the decision when that differs, and nothing when not", async () => {
    const { send, jobs } = setup();
    const change = { session_id: "s", cwd: "/p", hook_event_name: "ConfigChange", source: "user_settings" };
    await send(change, { decision: "block", clientDecision: "none" });
    await send(change, { decision: "block" });
    const [ignored, acted] = (await jobs()).map((j) => j.notification);
    expect(ignored).toMatchObject({ decision: "block", clientDecision: "none" });
    expect(acted?.decision).toBe("block");
    expect(acted && "clientDecision" in acted).toBe(false);
  });

  it("adds the preceding PreToolUse to a permission_prompt Notification of the same session", async () => {
    const { send, jobs } = setup();
    await send(
      {
        session_id: "s1",
        transcript_path: "/t",
        cwd: "/p",
        hook_event_name: "PreToolUse",
        tool_name: "Bash",
        tool_input: { command: "git push --force" },
      },
      { notify: [] },
    );
    await send(permissionPrompt("s1"));
    const [job] = await jobs();
    expect(job?.notification.relatedTool).toEqual({ toolName: "Bash", summary: "git push --force" });
  });

  it("notifies deepcode's events without a session id, and names them in no session's prompt", async () => {
    // deepcode sends session_id on a few events only (clients.md §5.3), none of them a PreToolUse:
    // its calls are neither dropped nor remembered under one shared key that every deepcode
    // agent's permission prompt would then read.
    const { send, jobs } = setup();
    const pre = { cwd: "/p", hook_event_name: "PreToolUse", tool_name: "Bash", tool_desc: "run" };
    await send({ ...pre, tool_input: { command: "git push --force" } });
    await send({ ...pre, cwd: "/q", tool_input: { command: "rm -rf build" } });
    const prompt = { cwd: "/p", hook_event_name: "Notification", notification_type: "permission" };
    await send({ ...prompt, session_id: "d1", message: "deepcode needs your permission to use Bash" });
    // Nor does a prompt that comes without one read them.
    await send({ ...prompt, message: "deepcode needs your permission to use Bash" });
    const sent = await jobs();
    expect(sent.map((j) => [j.notification.eventName, j.notification.relatedTool])).toEqual([
      ["PreToolUse", undefined],
      ["PreToolUse", undefined],
      ["Notification", undefined],
      ["Notification", undefined],
    ]);
    expect(sent.map((j) => (j.notification.event as Record<string, unknown>).session_id)).toEqual([
      undefined,
      undefined,
      "d1",
      undefined,
    ]);
  });

  it("names the tool a permission prompt names, not a tool call the session made after it", async () => {
    // Parallel calls (a subagent's, or reads Claude runs at once) reach the gateway while the
    // prompt waits: the prompt for Bash was told as one for the Read that came next.
    const { send, jobs } = setup();
    const pre = { session_id: "s1", transcript_path: "/t", cwd: "/p", hook_event_name: "PreToolUse" };
    await send({ ...pre, tool_name: "Bash", tool_input: { command: "git push --force" } }, { notify: [] });
    await send({ ...pre, tool_name: "Read", tool_input: { file_path: "README.md" } }, { notify: [] });
    await send(permissionPrompt("s1"));
    // A message that names no tool remembered, or none at all, gets the session's last one.
    await send(permissionPrompt("s1", "Claude needs your permission to use Update"));
    await send(permissionPrompt("s1", "m"));
    expect((await jobs()).map((j) => j.notification.relatedTool)).toEqual([
      { toolName: "Bash", summary: "git push --force" },
      { toolName: "Read", summary: "README.md" },
      { toolName: "Read", summary: "README.md" },
    ]);
  });

  it("cuts the remembered tool call at 300 characters without splitting a character in two", async () => {
    const { send, jobs } = setup();
    const base = { session_id: "s2", transcript_path: "/t", cwd: "/p" };
    // The emoji's two UTF-16 halves sit at 299 and 300: a cut between them left a lone half.
    const command = `echo ${"a".repeat(294)}\u{1F600} done`;
    await send(
      { ...base, hook_event_name: "PreToolUse", tool_name: "Bash", tool_input: { command } },
      { notify: [] },
    );
    await send(permissionPrompt("s2"));
    const [job] = await jobs();
    expect(job?.notification.relatedTool?.summary).toBe(`echo ${"a".repeat(294)}…`);
  });

  // A key block past the cut: masked whole, then cut, or its END line is gone and it shows.
  const KEY = `-----BEGIN EC PRIVATE KEY-----\nMHcCAQEEIIVngSLri+JkDAbL92/l7G5WTxVfmWMqGu8Zu92lcs3loAoGCCqGSM49\n${"AwEHoUQDQgAEO/THdFCdujXSlmU4".repeat(12)}\n-----END EC PRIVATE KEY-----`;

  it("masks the remembered tool call whole before cutting it, and scrubs the policy's secrets", async () => {
    const { send, jobs } = setup();
    const pre = (session: string, command: string) => ({
      session_id: session,
      transcript_path: "/t",
      cwd: "/p",
      hook_event_name: "PreToolUse",
      tool_name: "Bash",
      tool_input: { command },
    });
    await send(pre("k", `mkdir -p keys && cat > k.pem <<'EOF'\n${KEY}\nEOF`), { notify: [] });
    await send(permissionPrompt("k"));
    await send(pre("p", "curl -s -H 'X-Policy: ptok-9f8e7d6c5b4a3928' https://x"), {
      notify: [],
      secrets: ["ptok-9f8e7d6c5b4a3928"],
    });
    await send(permissionPrompt("p"));
    // A quoted value across the 300-character cut: cut first, no shape would match what is left.
    await send(pre("q", `${"true && ".repeat(34)}export DB_PASSWORD="correct horse battery staple"`), {
      notify: [],
    });
    await send(permissionPrompt("q"));
    // An input with no command or path is summed up as its JSON, masked by its keys too.
    await send(
      { ...pre("j", ""), tool_name: "mcp__db__connect", tool_input: { user: "svc", pass: "hunter2hunter2" } },
      { notify: [] },
    );
    await send(permissionPrompt("j"));
    const summaries = (await jobs()).map((j) => j.notification.relatedTool?.summary ?? "");
    expect(summaries).toHaveLength(4);
    expect(summaries.join("\n")).not.toMatch(/MHcCAQEE|ptok-9f8e|corre|hunter2/);
    expect(summaries[3]).toBe('{"user":"svc","pass":"[masked]"}');
    expect(summaries[0]).toContain("<<'EOF'\n[masked]\nEOF");
  });

  it("masks a deepagents tool result whole before cutting it to 500 characters", async () => {
    const { send, jobs } = setup();
    // The quoted value crosses the cut: cut first, its closing quote is gone and no shape matches.
    const output = `Created .env\n${"x".repeat(466)}\nDB_PASSWORD="correct horse battery staple"\n`;
    await send({
      event: "tool.result",
      tool_name: "execute",
      tool_id: "c9",
      tool_args: {},
      tool_status: "success",
      tool_output: output,
    });
    await send({
      event: "tool.use",
      tool_name: "execute",
      tool_id: "c9",
      tool_args: { command: "make env" },
    });
    const use = (await jobs()).find((j) => j.notification.eventName === "tool.use")?.notification;
    expect(use?.correlation?.toolResult?.output).toMatch(/^Created \.env\n/);
    expect(use?.correlation?.toolResult?.output).not.toMatch(/corre|horse/);
  });

  it("cuts a deepagents tool result at 500 characters without splitting a character in two", async () => {
    const { send, jobs } = setup();
    const output = `${"x".repeat(499)}\u{1F600} done`;
    const result = { tool_name: "execute", tool_id: "c8", tool_status: "success", tool_output: output };
    await send({ event: "tool.result", tool_args: {}, ...result });
    await send({ event: "tool.use", tool_name: "execute", tool_id: "c8", tool_args: { command: "ls" } });
    const use = (await jobs()).find((j) => j.notification.eventName === "tool.use")?.notification;
    expect(use?.correlation?.toolResult?.output).toBe("x".repeat(499));
  });

  it.each([
    ["use first", ["use", "result"]],
    ["result first", ["result", "use"]],
  ])("correlates deepagents tool.use and tool.result by tool_id, %s", async (_name, order) => {
    const { send, jobs } = setup();
    const bodies: Record<string, string> = {
      use: '{"event": "tool.use", "tool_name": "write_file", "tool_id": "c1", "tool_args": {"file_path": "src/a.py", "content": "x"}}',
      result:
        '{"event": "tool.result", "tool_name": "write_file", "tool_id": "c1", "tool_args": {}, "tool_status": "success", "tool_output": "Updated file src/a.py"}',
    };
    for (const half of order) await send(JSON.parse(bodies[half] as string));
    const all = await jobs();
    const second = all.find((j) => j.notification.eventName === `tool.${order[1]}`)?.notification;
    if (order[1] === "result")
      expect(second?.correlation?.toolUse).toEqual({
        toolName: "write_file",
        toolArgs: { file_path: "src/a.py", content: "x" },
      });
    else
      expect(second?.correlation?.toolResult).toEqual({ status: "success", output: "Updated file src/a.py" });
    const first = all.find((j) => j.notification.eventName === `tool.${order[0]}`)?.notification;
    expect(first?.correlation).toEqual({ toolId: "c1" });
  });

  it("bounds and masks what the agent names: tool names, ids, a result's status and an event's name", async () => {
    // Before, these went into jobs whole, so a 150 KB tool name made a job no
    // Cloudflare queue takes (the notification lost), and a status carried secrets to the sinks.
    const { send, jobs } = setup();
    const longName = `mcp__srv__${"t".repeat(150_000)}`;
    await send({
      event: "tool.result",
      tool_name: "execute",
      tool_id: "c7",
      tool_args: {},
      tool_status: `failed ghp_A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8 ${"s".repeat(200_000)}`,
      tool_output: "out",
    });
    await send({ event: "tool.use", tool_name: longName, tool_id: "c7", tool_args: {} });
    await send({ event: "tool.use", tool_name: "ls", tool_id: "i".repeat(401), tool_args: {} });
    await send({ session_id: "s", transcript_path: "/t", cwd: "/p", hook_event_name: "E".repeat(200_000) });
    const all = await jobs();
    // One job for each event sent, every one of them bounded.
    expect(all).toHaveLength(4);
    for (const job of all) expect(JSON.stringify(job).length).toBeLessThan(5_000);
    const use = all.find(
      (j) => j.notification.correlation?.toolId === "c7" && j.notification.eventName === "tool.use",
    );
    const status = use?.notification.correlation?.toolResult?.status ?? "";
    expect(status).toMatch(/^failed \[masked\] s+…/);
    expect(status).not.toContain("ghp_");
    const longId = all.find((j) => j.notification.event.tool_id === "i".repeat(401));
    expect(longId?.notification.eventName).toBe("tool.use");
    expect(longId?.notification.correlation).toBeUndefined();
    expect(all.some((j) => j.notification.eventName.startsWith("EEEE"))).toBe(true);
  });

  it("remembers no session or tool call whose key (the team's name and the id) is over 400 UTF-8 bytes, on any store, as KV could not", async () => {
    // A Workers KV key holds 512 bytes: the KV store skipped such ids while SQLite kept them, so a
    // permission prompt was enriched on Node and not on Workers. Team "t"'s key is `["t","…"]`,
    // 8 bytes and the id's: 392 bytes of id fit; 131 × "ツ" is 393 bytes in 131 characters.
    const { send, jobs } = setup();
    for (const [sessionId, toolId] of [
      ["s".repeat(392), "t".repeat(392)],
      ["s".repeat(393), "t".repeat(393)],
      ["ツ".repeat(131), "ツ".repeat(131)],
    ] as const) {
      const pre = { session_id: sessionId, transcript_path: "/t", cwd: "/p" };
      await send({ ...pre, hook_event_name: "PreToolUse", tool_name: "Bash", tool_input: { command: "ls" } });
      await send(permissionPrompt(sessionId, "m"));
      await send({ event: "tool.use", tool_name: "execute", tool_id: toolId, tool_args: {} });
      await send({ event: "tool.result", tool_name: "execute", tool_id: toolId, tool_status: "success" });
    }
    const enriched = (await jobs()).map((j) => {
      const n = j.notification;
      if (n.eventName === "Notification") return `${n.eventName} ${n.relatedTool?.toolName ?? "-"}`;
      if (n.eventName === "tool.result") return `${n.eventName} ${n.correlation?.toolUse?.toolName ?? "-"}`;
      return undefined;
    });
    expect(enriched.filter((e) => e !== undefined)).toEqual([
      "Notification Bash",
      "tool.result execute",
      "Notification -",
      "tool.result -",
      "Notification -",
      "tool.result -",
    ]);
  });

  it("keeps each team's sessions and tool calls to itself, even when another team sends the same ids", async () => {
    // Ids come from the agent: a team holding another's session id read that session's last tool
    // into its own sinks, and could plant one for the other's prompt.
    const { send, jobs } = setup();
    const pre = { session_id: "shared", transcript_path: "/t", cwd: "/p" };
    const prompt = permissionPrompt("shared", "m");
    await send(
      { ...pre, hook_event_name: "PreToolUse", tool_name: "Bash", tool_input: { command: "deploy prod" } },
      { team: "platform", notify: [] },
    );
    await send(prompt, { team: "mobile" });
    await send(
      { event: "tool.use", tool_name: "execute", tool_id: "c1", tool_args: {} },
      { team: "platform" },
    );
    await send(
      { event: "tool.result", tool_name: "execute", tool_id: "c1", tool_status: "success" },
      { team: "mobile" },
    );
    await send(prompt, { team: "platform" });
    const seen = (await jobs()).map((j) => {
      const n = j.notification;
      return `${n.team} ${n.eventName} ${n.relatedTool?.summary ?? n.correlation?.toolUse?.toolName ?? "-"}`;
    });
    expect(seen).toEqual([
      "mobile Notification -",
      "platform tool.use -",
      "mobile tool.result -",
      "platform Notification deploy prod",
    ]);
  });

  it("remembers a tool name cut to a bound for a permission prompt", async () => {
    const { send, jobs } = setup();
    const pre = { session_id: "s", transcript_path: "/t", cwd: "/p" };
    await send(
      { ...pre, hook_event_name: "PreToolUse", tool_name: `mcp__x__${"y".repeat(150_000)}`, tool_input: {} },
      { notify: [] },
    );
    await send(permissionPrompt("s", "m"));
    const [job] = await jobs();
    expect(job?.notification.relatedTool?.toolName).toMatch(/^mcp__x__y+…/);
    expect(job?.notification.relatedTool?.toolName.length).toBeLessThan(400);
  });

  it("masks a remembered tool name that holds a secret, as the event's own copy is", async () => {
    // An MCP tool's name is its server's and the tool's, which a user may have named with a token.
    const { send, jobs } = setup();
    const secret = "ptok-9f8e7d6c5b4a3928";
    const token = "ghp_A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8";
    const pre = { session_id: "s", transcript_path: "/t", cwd: "/p", hook_event_name: "PreToolUse" };
    await send(
      { ...pre, tool_name: `mcp__${secret}__run`, tool_input: {} },
      { notify: [], secrets: [secret] },
    );
    await send(permissionPrompt("s", "m"));
    await send({ ...pre, tool_name: `mcp__gh-${token}__run`, tool_input: {} }, { notify: [] });
    await send(permissionPrompt("s", "m"));
    // deepagents' tool.use, carried with its tool.result.
    await send({ event: "tool.use", tool_name: `x-${token}`, tool_id: "c3", tool_args: {} }, { notify: [] });
    await send({
      event: "tool.result",
      tool_name: "x",
      tool_id: "c3",
      tool_args: {},
      tool_status: "success",
    });
    const all = await jobs();
    expect(
      all.map((j) => j.notification.relatedTool?.toolName ?? j.notification.correlation?.toolUse?.toolName),
    ).toEqual(["mcp__[masked]__run", "mcp__gh-[masked]__run", "x-[masked]"]);
  });

  it("masks a policy secret an agent's text holds with a tab or a line end inside it", async () => {
    // A token wrapped by a terminal or pasted with a tab still shows to a person who reads the
    // message; what masking catches is the secret as some text around it split it by accident.
    const { send, jobs } = setup();
    const secret = "ptok-9f8e7d6c5b4a3928";
    const split = (by: string) => `${secret.slice(0, 9)}${by}${secret.slice(9)}`;
    await send(
      {
        session_id: "s",
        transcript_path: "/t",
        cwd: "/p",
        hook_event_name: "UserPromptSubmit",
        prompt: `use ${split("\t")} and ${split("\r\n")}`,
      },
      { secrets: [secret] },
    );
    const [job] = await jobs();
    expect(job?.notification.event.prompt).toBe("use [masked] and [masked]");
  });

  it("remembers no tool call the client is told to deny: it never runs, and no prompt asks for it", async () => {
    // A Bash call waiting on its prompt, and another the policy denied meanwhile (an agent's
    // parallel calls): the prompt was told as one for the denied command, which never ran.
    const { send, jobs } = setup();
    const pre = { session_id: "s", transcript_path: "/t", cwd: "/p", hook_event_name: "PreToolUse" };
    await send({ ...pre, tool_name: "Bash", tool_input: { command: "npm publish" } }, { notify: [] });
    await send(
      { ...pre, tool_name: "Bash", tool_input: { command: "rm -rf ~" } },
      { decision: "deny", reason: "no rm of home", notify: [] },
    );
    await send(permissionPrompt("s"));
    const [job] = await jobs();
    expect(job?.notification.relatedTool).toEqual({ toolName: "Bash", summary: "npm publish" });
  });

  it.each([
    ["in memory (as KV keeps it)", () => createMemorySessionStore()],
    ["in SQLite", () => createSqliteSessionStore(join(tempDir("notify-lone"), "sessions.sqlite"))],
  ])("names a tool call with a lone surrogate the same way whatever the store: %s", async (_name, make) => {
    // SQLite writes a lone surrogate as three bytes no UTF-8 reader takes, read back as three
    // U+FFFD, where KV's JSON keeps it (and the sink's body then writes one U+FFFD): one call was
    // named two ways on Node and Workers.
    const queue = createMemoryQueue<DeliveryJob>();
    const tasks: Promise<void>[] = [];
    const notifier = createNotifier({
      queue,
      clock: { now: () => 1_700_000_000_000, monotonic: () => 0 },
      logger: { log: () => {} },
      sessions: make(),
      defer: (t) => {
        tasks.push(t());
      },
    });
    const base = { session_id: "s", transcript_path: "/t", cwd: "/p" };
    const events = [
      {
        ...base,
        hook_event_name: "PreToolUse",
        tool_name: "mcp__x__\ud83d",
        tool_input: { command: "echo \udc00!" },
      },
      permissionPrompt("s", "Claude needs your permission to use mcp__x__\ud83d"),
    ];
    for (const [i, body] of events.entries()) {
      const event = parseHookEvent(body);
      if (!event.ok) throw new Error(event.error.message);
      notifier.notify({
        ...promptInput(`d${i}`),
        event: event.value,
        notify: i === 0 ? [] : promptInput("").notify,
      });
      await Promise.all(tasks);
    }
    const [job] = (await queue.receive(10, 1000)).map((m) => m.body);
    expect(job?.notification.relatedTool).toEqual({ toolName: "mcp__x__\ufffd", summary: "echo \ufffd!" });
  });

  it("still enqueues when the session store fails, logging the failure", async () => {
    const queue = createMemoryQueue<DeliveryJob>();
    const tasks: Promise<void>[] = [];
    const logs: unknown[] = [];
    const broken = createMemorySessionStore();
    broken.lastTool = async () => {
      throw new Error("database is locked");
    };
    const notifier = createNotifier({
      queue,
      clock: { now: () => 0, monotonic: () => 0 },
      logger: { log: (...a) => logs.push(a) },
      sessions: broken,
      defer: (t) => {
        tasks.push(t());
      },
    });
    notifier.notify(promptInput("d"));
    await Promise.all(tasks);
    expect((await queue.receive(10, 1000)).map((m) => m.body.id)).toEqual(["evt_d.audit"]);
    expect(JSON.stringify(logs)).toMatch(
      /session store failed; the notification goes out without it.*database is locked/,
    );
  });

  it("counts each failed write of a SQLite session store", async () => {
    // Only the log told of them, once a minute: nothing counted how many notifications went out
    // without their tool.
    const path = join(tempDir("notify-sessions"), "sessions.sqlite");
    const sessions = createSqliteSessionStore(path, 0);
    const metrics = createPrometheusRegistry();
    const tasks: Promise<void>[] = [];
    const notifier = createNotifier({
      queue: createMemoryQueue<DeliveryJob>(),
      clock: { now: () => 0, monotonic: () => 0 },
      logger: { log: () => {} },
      metrics,
      sessions,
      defer: (t) => {
        tasks.push(t());
      },
    });
    const event = (body: unknown) => {
      const parsed = parseHookEvent(body);
      if (!parsed.ok) throw new Error(parsed.error.message);
      return parsed.value;
    };
    const pre = event({
      session_id: "s",
      transcript_path: "/t",
      cwd: "/p",
      hook_event_name: "PreToolUse",
      tool_name: "Bash",
      tool_input: { command: "ls" },
    });
    const use = event({ event: "tool.use", tool_name: "execute", tool_id: "c1", tool_args: {} });
    // Every call of a store whose file serve can no longer use fails (here its connection is
    // closed; no other process can lock it while it is open).
    sessions.close();
    notifier.notify({ ...promptInput("d0"), event: pre, notify: [] });
    notifier.notify({ ...promptInput("d1"), event: pre, notify: [] });
    notifier.notify({ ...promptInput("d2"), event: use });
    await Promise.all(tasks);
    const text = metrics.render();
    expect(text).toContain('hookgate_session_store_failed_total{operation="rememberTool"} 2');
    expect(text).toContain('hookgate_session_store_failed_total{operation="correlate"} 1');
    expect(text).toContain('hookgate_enqueued_total{sink="audit"} 1');
  });

  it("says when the session store works again, and tells its next failure as new", async () => {
    const tasks: Promise<void>[] = [];
    const logs: { level: string; msg: string; fields?: Record<string, unknown> | undefined }[] = [];
    const store = createMemorySessionStore();
    const lastTool = store.lastTool.bind(store);
    let locked = true;
    store.lastTool = async (id) => {
      if (locked) throw new Error("database is locked");
      return lastTool(id);
    };
    const notifier = createNotifier({
      queue: createMemoryQueue<DeliveryJob>(),
      clock: { now: () => 0, monotonic: () => 0 },
      logger: { log: (level, msg, fields) => logs.push({ level, msg, fields }) },
      sessions: store,
      defer: (t) => {
        tasks.push(t());
      },
    });
    const prompt = async () => {
      notifier.notify(promptInput(`d${tasks.length}`));
      await Promise.all(tasks);
    };
    const told = () => logs.map((l) => `${l.msg}${l.fields?.failures ? ` ${l.fields.failures}` : ""}`);
    await prompt();
    await prompt();
    locked = false;
    await prompt();
    await prompt();
    // A lock taken again (a backup, a sqlite3 shell) within the minute is a new failure, told.
    locked = true;
    await prompt();
    expect(told()).toEqual([
      "session store failed; the notification goes out without it",
      "session store works again 2",
      "session store failed; the notification goes out without it",
    ]);
  });

  it("names no tool call remembered before a write of tool calls failed, as it may not be the session's last", async () => {
    // A sessions.sqlite on a full disk (or KV refusing writes) keeps what it held: each prompt was
    // told with the last call written before, hours old perhaps, not the command it asks about.
    let now = 1_700_000_000_000;
    const clock = { now: () => now, monotonic: () => 0 };
    const logger = { log: () => {} };
    const storeFailures = sessionStoreFailures(logger, clock);
    const store = createMemorySessionStore();
    const rememberTool = store.rememberTool.bind(store);
    let full = false;
    store.rememberTool = async (ids, tool, at) => {
      if (full) throw new Error("the session store at sessions.sqlite: database or disk is full");
      return rememberTool(ids, tool, at);
    };
    const queue = createMemoryQueue<DeliveryJob>();
    // A notifier per event, sharing what was told of the store, as on Workers.
    const send = async (body: unknown, fields: Partial<NotifyInput> = {}) => {
      const event = parseHookEvent(body);
      if (!event.ok) throw new Error(event.error.message);
      const tasks: Promise<void>[] = [];
      const notifier = createNotifier({
        queue,
        clock,
        logger,
        sessions: store,
        storeFailures,
        defer: (t) => {
          tasks.push(t());
        },
      });
      notifier.notify({ ...promptInput(`d${now}`), event: event.value, ...fields });
      await Promise.all(tasks);
      now += 60_000;
    };
    const base = { session_id: "s", transcript_path: "/t", cwd: "/p" };
    const bash = (command: string) => ({
      ...base,
      hook_event_name: "PreToolUse",
      tool_name: "Bash",
      tool_input: { command },
    });
    const prompt = permissionPrompt("s");
    await send(bash("git status"), { notify: [] });
    full = true;
    await send(bash("git push --force"), { notify: [] });
    await send(prompt);
    full = false;
    // Another session's write works: this one's last call is still unknown.
    await send({ ...bash("ls"), session_id: "other" }, { notify: [] });
    await send(prompt);
    await send(bash("npm test"), { notify: [] });
    await send(prompt);
    expect((await queue.receive(10, 1000)).map((m) => m.body.notification.relatedTool)).toEqual([
      undefined,
      undefined,
      { toolName: "Bash", summary: "npm test" },
    ]);
  });

  it("still names a session's call when only another session's write failed", async () => {
    // KV takes one write a second per key: an agent's parallel calls have some refused (429)
    // every minute or so. Those must not take the tool from every other session's prompt.
    const { queue, send } = notifierRefusingWrites((ids) => ids.some((id) => id.includes("busy")));
    const base = { transcript_path: "/t", cwd: "/p" };
    const pre = (session: string, command: string) => ({
      ...base,
      session_id: session,
      hook_event_name: "PreToolUse",
      tool_name: "Bash",
      tool_input: { command },
    });
    await send(pre("calm", "make"), { notify: [] });
    await send(pre("busy", "ls"), { notify: [] });
    await send(permissionPrompt("calm"));
    const [job] = (await queue.receive(10, 1000)).map((m) => m.body);
    expect(job?.notification.relatedTool).toEqual({ toolName: "Bash", summary: "make" });
  });

  it("names no other tool's call for a prompt whose tool's latest call failed to be remembered", async () => {
    // An agent's parallel calls: the second Bash call's write is refused (KV's one write a second
    // to a key), the Read call after it is remembered. The prompt is for a Bash call, whichever
    // it is; the session's last call is the Read, which no Bash prompt is about.
    const { queue, send } = notifierRefusingWrites((_ids, tool) => tool.summary.startsWith("rm"));
    const base = { transcript_path: "/t", cwd: "/p", session_id: "s", hook_event_name: "PreToolUse" };
    await send({ ...base, tool_name: "Bash", tool_input: { command: "make" } }, { notify: [] });
    await send({ ...base, tool_name: "Bash", tool_input: { command: "rm -rf build" } }, { notify: [] });
    await send({ ...base, tool_name: "Read", tool_input: { file_path: "/p/a" } }, { notify: [] });
    await send(permissionPrompt("s"));
    const [job] = (await queue.receive(10, 1000)).map((m) => m.body);
    expect(job?.notification.relatedTool).toBeUndefined();
  });

  it("keeps at most 4,096 keys whose write failed, taking every call up to a forgotten one's failure as stale", () => {
    const failures = sessionStoreFailures({ log: () => {} }, { now: () => 0, monotonic: () => 0 });
    for (let i = 0; i <= 4096; i++) failures.unremembered([`k${i}`], 100 + i);
    failures.remembered(["k4096"], 90); // a write that started before the failure says nothing of it
    expect(failures.staleUpTo("k4096")).toBe(4196);
    expect(failures.staleUpTo("k1")).toBe(101);
    // k0, the oldest, is forgotten: no key's call up to its failure is known to be fresh.
    expect(failures.staleUpTo("k0")).toBe(100);
    expect(failures.staleUpTo("never-failed")).toBe(100);
    failures.remembered(["k1"], 200);
    expect(failures.staleUpTo("k1")).toBe(100);
  });

  it("tells writes that keep failing once, though the reads between them work", async () => {
    // A sessions.sqlite on a full disk fails every write and reads on: each permission prompt's
    // read was told as the store working again and the next tool call's write as a new failure,
    // two lines per prompt for as long as the disk stayed full.
    const tasks: Promise<void>[] = [];
    const logs: { msg: string; fields?: Record<string, unknown> | undefined }[] = [];
    const store = createMemorySessionStore();
    store.rememberTool = async () => {
      throw new Error("the session store at /data/sessions.sqlite: database or disk is full");
    };
    const notifier = createNotifier({
      queue: createMemoryQueue<DeliveryJob>(),
      clock: { now: () => 0, monotonic: () => 0 },
      logger: { log: (_level, msg, fields) => logs.push({ msg, fields }) },
      sessions: store,
      defer: (t) => {
        tasks.push(t());
      },
    });
    const pre = parseHookEvent({
      session_id: "s",
      transcript_path: "/t",
      cwd: "/p",
      hook_event_name: "PreToolUse",
      tool_name: "Bash",
      tool_input: { command: "ls" },
    });
    if (!pre.ok) throw new Error(pre.error.message);
    for (let i = 0; i < 3; i++) {
      notifier.notify({ ...promptInput(`a${i}`), event: pre.value, notify: [] });
      notifier.notify({ ...promptInput(`b${i}`), event: pre.value, notify: [] });
      notifier.notify(promptInput(`p${i}`));
      await Promise.all(tasks);
    }
    expect(logs.map((l) => [l.msg, l.fields?.what])).toEqual([
      ["session store failed; the notification goes out without it", "rememberTool"],
    ]);
  });

  it("tells a store outage once a minute and its end across notifiers made per event, sharing how it was told", async () => {
    // Workers makes a notifier per request: each told the outage of its own, once per event.
    const logs: { msg: string; fields?: Record<string, unknown> | undefined }[] = [];
    const logger = {
      log: (_level: string, msg: string, fields?: Record<string, unknown>) => logs.push({ msg, fields }),
    };
    let monotonic = 0;
    const clock = { now: () => 0, monotonic: () => monotonic };
    const storeFailures = sessionStoreFailures(logger, clock);
    const store = createMemorySessionStore();
    const lastTool = store.lastTool.bind(store);
    let down = true;
    store.lastTool = async (id) => {
      if (down) throw new Error("KV GET failed: 503 Service Unavailable");
      return lastTool(id);
    };
    let n = 0;
    const prompt = async () => {
      const tasks: Promise<void>[] = [];
      const notifier = createNotifier({
        queue: createMemoryQueue<DeliveryJob>(),
        clock,
        logger,
        sessions: store,
        storeFailures,
        defer: (t) => {
          tasks.push(t());
        },
      });
      notifier.notify(promptInput(`d${n++}`));
      await Promise.all(tasks);
    };
    await prompt();
    await prompt();
    await prompt();
    monotonic = 60_000;
    await prompt();
    down = false;
    await prompt();
    await prompt();
    expect(logs.map((l) => [l.msg, l.fields?.repeated ?? l.fields?.failures])).toEqual([
      ["session store failed; the notification goes out without it", undefined],
      ["session store failed; the notification goes out without it", 2],
      ["session store works again", 4],
    ]);
  });

  it("logs and counts a failed enqueue without throwing", async () => {
    const { send, logs, queue } = setup();
    queue.send = async () => {
      throw new Error("disk full");
    };
    await send({
      session_id: "s",
      transcript_path: "/t",
      cwd: "/p",
      hook_event_name: "SessionEnd",
      reason: "other",
    });
    expect(JSON.stringify(logs)).toMatch(/enqueue failed; the decision was answered anyway.*disk full/);
  });

  it.each([
    ["before SQS took it", false],
    ["after SQS took it", true],
  ])(
    "logs and counts only the jobs an SQS send did not put on the queue, and counts the others as enqueued; the first request's answer lost %s",
    async (_, taken) => {
      // Twelve sinks are two SendMessageBatch requests; when the first failed as a
      // whole, the line once listed all twelve sinks and no job was counted as enqueued, though two were
      // on the queue. Real SQS on loopback; the first request fails through the SDK's middleware.
      const server = await createSqsServer({ port: 0, hostname: "127.0.0.1" });
      const client = createSqsClientForLocal(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
      try {
        let requests = 0;
        client.middlewareStack.add(
          (next, context) => async (args) => {
            if (context.commandName !== "SendMessageBatchCommand" || ++requests !== 1) return next(args);
            if (taken) await next(args);
            throw Object.assign(new Error("socket hang up"), { code: "ECONNRESET" });
          },
          { step: "initialize", name: "hangUpFirstSend" },
        );
        const url = async (name: string) =>
          (await client.send(new CreateQueueCommand({ QueueName: name }))).QueueUrl ?? "";
        const queue = createSqsQueue<DeliveryJob>({
          client,
          queueUrl: await url("notify-jobs"),
          deadLetterQueueUrl: await url("notify-dlq"),
        });
        const logs: [string, string, Record<string, unknown>][] = [];
        const counted: string[] = [];
        const sinks = Array.from({ length: 12 }, (_, i) => `s${String(i).padStart(2, "0")}`);
        const event = parseHookEvent({
          session_id: "s",
          cwd: "/p",
          hook_event_name: "SessionEnd",
          reason: "other",
        });
        if (!event.ok) throw new Error(event.error.message);
        await createNotifier({
          queue,
          clock: { now: () => 1_700_000_000_000, monotonic: () => 0 },
          logger: { log: (level, msg, fields) => logs.push([level, msg, fields ?? {}]) },
          metrics: { increment: (name, labels) => counted.push(`${name} ${labels?.sink ?? ""}`) },
          defer: (task) => task(),
        }).notify({
          decisionId: "d",
          event: event.value,
          team: "t",
          decision: "none",
          reason: undefined,
          notify: [{ ruleId: "r", sinks }],
          remember: false,
        });
        const onQueue = [...(await queue.receive(10, 60_000)), ...(await queue.receive(10, 60_000))];
        expect(onQueue.map((m) => m.body.sink).sort()).toEqual(taken ? sinks : ["s10", "s11"]);
        // With no answer, the line cannot tell which: it names those jobs as maybe on the queue
        // too. It said only that they were not, while all twelve were delivered.
        expect(logs).toEqual([
          [
            "error",
            "enqueue failed; the decision was answered anyway",
            expect.objectContaining({
              sinks: sinks.slice(0, 10),
              sent: ["s10", "s11"],
              maybeSent: sinks.slice(0, 10),
            }),
          ],
        ]);
        expect(counted.sort()).toEqual([
          ...sinks.slice(0, 10).map((sink) => `hookgate_enqueue_failed_total ${sink}`),
          "hookgate_enqueued_total s10",
          "hookgate_enqueued_total s11",
        ]);
      } finally {
        client.destroy();
        await new Promise<void>((resolve) => server.close(() => resolve()));
      }
    },
  );
});

import { readdirSync, readFileSync } from "node:fs";
import { describe, expect, it, vi } from "vitest";
import {
  CLAUDE_CODE_EVENTS,
  DEEPAGENTS_LEGACY_EVENTS,
  DEEPAGENTS_V2_EVENTS,
  detectDialect,
  type EventError,
  isKnownEvent,
  parseHookEvent,
  sniffEventName,
  TOOL_EVENTS,
} from "../../src/core/events.js";
import type { Dialect, HookEvent } from "../../src/core/hook-event.js";

function expectOk(body: unknown, dialect?: Dialect): HookEvent {
  const result = parseHookEvent(body, dialect);
  if (!result.ok) throw new Error(`expected ok, got ${JSON.stringify(result.error)}`);
  return result.value;
}

function expectErr(body: unknown, dialect?: Dialect): EventError {
  const result = parseHookEvent(body, dialect);
  if (result.ok) throw new Error(`expected an error, got ${JSON.stringify(result.value)}`);
  return result.error;
}

// Real captured Claude Code bodies (test/fixtures/claude-code/README.md). Read at collection
// time: a missing folder makes readdirSync throw and the whole file fail.
const FIXTURE_ROOT = new URL("../fixtures/claude-code/", import.meta.url);
const fixtures = readdirSync(FIXTURE_ROOT, { withFileTypes: true })
  .filter((entry) => entry.isDirectory())
  .flatMap((dir) =>
    readdirSync(new URL(`${dir.name}/`, FIXTURE_ROOT))
      .filter((file) => file.endsWith(".json") && !file.endsWith(".headers.json"))
      .map((file) => ({
        version: dir.name,
        event: file.slice(0, -".json".length),
        text: readFileSync(new URL(`${dir.name}/${file}`, FIXTURE_ROOT), "utf8"),
      })),
  );

describe("event lists", () => {
  it("has the 34 Claude Code 2.1.332 events, the 12 deepagents v2 and the 12 legacy events", () => {
    expect(CLAUDE_CODE_EVENTS).toHaveLength(34);
    expect(new Set(CLAUDE_CODE_EVENTS).size).toBe(34);
    expect(CLAUDE_CODE_EVENTS).toContain("PreSkillShellCommand");
    expect(DEEPAGENTS_V2_EVENTS).toEqual([
      "SessionStart",
      "UserPromptSubmit",
      "SessionEnd",
      "PermissionRequest",
      "Notification",
      "PreToolUse",
      "PostToolUse",
      "PostToolUseFailure",
      "PreCompact",
      "Stop",
      "SubagentStart",
      "SubagentStop",
    ]);
    expect(DEEPAGENTS_LEGACY_EVENTS).toEqual([
      "tool.use",
      "tool.result",
      "tool.error",
      "permission.request",
      "session.start",
      "user.prompt",
      "task.complete",
      "session.end",
      "input.required",
      "context.offload",
      "context.compact",
      "user.name.set",
    ]);
    expect([...TOOL_EVENTS].sort()).toEqual(
      ["PermissionDenied", "PermissionRequest", "PostToolUse", "PostToolUseFailure", "PreToolUse"].sort(),
    );
  });

  it("cannot be mutated at run time", () => {
    expect(Object.isFrozen(CLAUDE_CODE_EVENTS)).toBe(true);
    expect(Object.isFrozen(DEEPAGENTS_V2_EVENTS)).toBe(true);
    expect(Object.isFrozen(DEEPAGENTS_LEGACY_EVENTS)).toBe(true);
  });

  it.each([
    ["PreToolUse", true],
    ["PreSkillShellCommand", true],
    ["tool.use", true],
    ["user.name.set", true],
    ["pretooluse", false],
    ["tool.future", false],
    ["", false],
    ["constructor", false],
    ["__proto__", false],
  ])("isKnownEvent(%j) is %s", (name, known) => {
    expect(isKnownEvent(name)).toBe(known);
  });

  it("parses a minimal body of every Claude Code event as known, with its own name", () => {
    for (const name of CLAUDE_CODE_EVENTS) {
      const body = TOOL_EVENTS.has(name)
        ? { hook_event_name: name, transcript_path: "/t.jsonl", tool_name: "Bash", tool_input: {} }
        : { hook_event_name: name, transcript_path: "/t.jsonl" };
      expect(expectOk(body), name).toMatchObject({ name, dialect: "claude-code", known: true });
    }
  });
});

describe("Claude Code fixtures", () => {
  it("covers both captured versions and all 13 captured bodies", () => {
    expect(new Set(fixtures.map((f) => f.version))).toEqual(new Set(["2.1.112", "2.1.332"]));
    expect(fixtures).toHaveLength(13);
  });

  it.each(fixtures)("$version/$event parses as a known claude-code event", ({ event, text }) => {
    const body = JSON.parse(text) as Record<string, unknown>;
    const parsed = expectOk(body);
    expect(parsed.name).toBe(event);
    expect(parsed.dialect).toBe("claude-code");
    expect(parsed.known).toBe(true);
    expect(parsed.sessionId).toBe(body.session_id);
    expect(parsed.transcriptPath).toBe(body.transcript_path);
    expect(parsed.cwd).toBe("/home/dev/proj");
    if (TOOL_EVENTS.has(event)) {
      expect(parsed.toolName).toBe("Bash");
      expect(parsed.toolInput).toBe(body.tool_input);
    } else {
      expect(parsed.toolName).toBeUndefined();
      expect(parsed.toolInput).toBeUndefined();
    }
    // The payload is the caller's object, every key kept in its wire order.
    expect(parsed.payload).toBe(body);
    expect(JSON.stringify(parsed.payload)).toBe(text);
    expect(expectOk(JSON.parse(text), "claude-code")).toMatchObject({ name: event, dialect: "claude-code" });
  });

  it("accepts the 2.1.332 PreCompact with custom_instructions: null", () => {
    const precompact = fixtures.find((f) => f.version === "2.1.332" && f.event === "PreCompact");
    expect(precompact?.text).toContain('"custom_instructions":null');
    expect(expectOk(JSON.parse(precompact?.text ?? "null")).name).toBe("PreCompact");
  });
});

describe("deepcode bodies (clients.md 5.3)", () => {
  const bodies: ReadonlyArray<readonly [string, Record<string, unknown>]> = [
    [
      "PreToolUse",
      {
        hook_event_name: "PreToolUse",
        cwd: "/p",
        tool_name: "Bash",
        tool_input: { command: "ls" },
        tool_desc: "ls",
      },
    ],
    [
      "PostToolUse",
      {
        hook_event_name: "PostToolUse",
        cwd: "/p",
        tool_name: "Bash",
        tool_input: { command: "ls" },
        tool_desc: "ls",
        tool_response: "a\nb\n",
        tool_output: "a\nb\n",
        tool_use_id: "call_1",
        duration_ms: 12,
      },
    ],
    [
      "PostToolUseFailure",
      {
        hook_event_name: "PostToolUseFailure",
        cwd: "/p",
        tool_name: "Bash",
        tool_input: { command: "false" },
        tool_desc: "false",
        error: "exit 1",
        tool_use_id: "call_2",
        duration_ms: 3,
      },
    ],
    [
      "PermissionRequest",
      { hook_event_name: "PermissionRequest", cwd: "/p", tool_name: "Bash", tool_desc: "rm -rf build" },
    ],
    [
      "PermissionDenied",
      {
        hook_event_name: "PermissionDenied",
        cwd: "/p",
        tool_name: "Bash",
        tool_input: { command: "rm -rf build" },
        tool_use_id: "call_3",
        tool_desc: "rm -rf build",
        reason: "denied by user",
      },
    ],
    ["UserPromptSubmit", { hook_event_name: "UserPromptSubmit", cwd: "/p", prompt: "hi" }],
    [
      "Stop",
      { hook_event_name: "Stop", cwd: "/p", stop_hook_active: false, last_assistant_message: "Done." },
    ],
    ["SubagentStart", { hook_event_name: "SubagentStart", agent_id: "a1", agent_type: "explore", cwd: "/p" }],
    [
      "SubagentStop",
      {
        hook_event_name: "SubagentStop",
        agent_id: "a1",
        agent_type: "explore",
        cwd: "/p",
        stop_hook_active: false,
        last_assistant_message: "found it",
      },
    ],
    ["SessionStart", { hook_event_name: "SessionStart", cwd: "/p", session_id: "s1", source: "startup" }],
    ["SessionEnd", { hook_event_name: "SessionEnd", cwd: "/p", session_id: "s1", reason: "exit" }],
    [
      "Notification",
      {
        hook_event_name: "Notification",
        cwd: "/p",
        session_id: "s1",
        message: "deepcode needs your permission",
        notification_type: "permission",
      },
    ],
    ["PreCompact", { hook_event_name: "PreCompact", cwd: "/p", trigger: "auto", messages_count: 42 }],
    [
      "PostCompact",
      {
        hook_event_name: "PostCompact",
        cwd: "/p",
        trigger: "auto",
        summary: "we did things",
        truncated: false,
        messages_before: 42,
        messages_after: 3,
      },
    ],
    [
      "PostToolBatch",
      {
        hook_event_name: "PostToolBatch",
        cwd: "/p",
        tool_calls: [
          { tool_name: "Read", tool_input: { file_path: "/p/a" }, tool_use_id: "c1", tool_response: "x" },
          // The model's arguments as they came when they are not valid JSON (safeParseArgs).
          {
            tool_name: "Bash",
            tool_input: '{"command": "ls',
            tool_use_id: "c2",
            tool_response: "参数不是合法 JSON",
          },
        ],
      },
    ],
    [
      // deepcode's turn counter is a number (src/tui/useChat.ts `turn_id: currentTurnId`).
      "MessageDisplay",
      {
        hook_event_name: "MessageDisplay",
        cwd: "/p",
        turn_id: 3,
        message_id: "3:0",
        index: 0,
        final: false,
        delta: "Here is the plan",
      },
    ],
    [
      "UserPromptExpansion",
      {
        hook_event_name: "UserPromptExpansion",
        cwd: "/p",
        expansion_type: "command",
        command_name: "deploy",
        command_args: "prod",
        command_source: "user",
        original: "/deploy prod",
      },
    ],
    [
      "StopFailure",
      {
        hook_event_name: "StopFailure",
        cwd: "/p",
        error: "rate_limit",
        error_details: "429 Too Many Requests",
        last_assistant_message: "",
      },
    ],
  ];

  it.each(bodies)("%s is detected as deepcode and parses as known", (name, body) => {
    expect(detectDialect(body)).toBe("deepcode");
    const parsed = expectOk(body);
    expect(parsed).toMatchObject({ name, dialect: "deepcode", known: true, cwd: "/p" });
    expect(parsed.transcriptPath).toBeUndefined();
    expect(parsed.sessionId).toBe(body.session_id);
    expect(parsed.toolName).toBe(body.tool_name);
    expect(parsed.toolInput).toBe(body.tool_input);
    expect(parsed.payload).toBe(body);
  });

  // deepcode's PostToolBatch carries each call's arguments as JSON.parse read them (src/loop.ts
  // `safeParseArgs`): a model's `[]`, `5` or `true` is a call its loop refuses, not a batch to refuse.
  it.each([[[]], [5], [true], [[{ command: "ls" }]]])(
    "takes PostToolBatch whose call's input is %j, any JSON value",
    (toolInput) => {
      const body = {
        hook_event_name: "PostToolBatch",
        cwd: "/p",
        tool_calls: [
          { tool_name: "Bash", tool_input: toolInput, tool_use_id: "c1", tool_response: "参数不符合 schema" },
          { tool_name: "Read", tool_input: { file_path: "/p/a" }, tool_use_id: "c2", tool_response: "x" },
        ],
      };
      expect(expectOk(body, "deepcode")).toMatchObject({ name: "PostToolBatch", known: true, payload: body });
    },
  );

  it("gives PermissionRequest a tool name but no tool input (deepcode sends none)", () => {
    const parsed = expectOk(
      { hook_event_name: "PermissionRequest", cwd: "/p", tool_name: "Bash", tool_desc: "rm -rf build" },
      "deepcode",
    );
    expect(parsed.toolName).toBe("Bash");
    expect(parsed).not.toHaveProperty("toolInput");
  });
});

describe("deepagents v2 bodies (TV-33)", () => {
  const tv33 =
    '{"session_id":"t1","transcript_path":"/x.jsonl","cwd":"/p","hook_event_name":"PreToolUse","permission_mode":"default","tool_name":"Bash","tool_input":{"command":"rm -rf /"},"tool_use_id":"c1"}';

  it("parses TV-33 on a deepagents route", () => {
    const body = JSON.parse(tv33) as unknown;
    expect(expectOk(body, "deepagents")).toEqual({
      name: "PreToolUse",
      dialect: "deepagents",
      known: true,
      payload: body,
      sessionId: "t1",
      transcriptPath: "/x.jsonl",
      cwd: "/p",
      toolName: "Bash",
      toolInput: { command: "rm -rf /" },
    });
  });

  it("cannot tell TV-33 from Claude Code without the route", () => {
    expect(detectDialect(JSON.parse(tv33) as Record<string, unknown>)).toBe("claude-code");
  });

  it.each(DEEPAGENTS_V2_EVENTS)("knows %s", (name) => {
    const body = {
      session_id: "t1",
      transcript_path: "/x.jsonl",
      cwd: "/p",
      hook_event_name: name,
      tool_name: "Bash",
      tool_input: {},
    };
    expect(expectOk(body, "deepagents").known).toBe(true);
  });

  it("treats a Claude Code event outside the v2 set as unknown", () => {
    const body = {
      session_id: "t1",
      transcript_path: "/x.jsonl",
      cwd: "/p",
      hook_event_name: "PostToolBatch",
    };
    expect(expectOk(body, "deepagents")).toMatchObject({ name: "PostToolBatch", known: false });
    expect(expectOk(body, "claude-code").known).toBe(true);
  });

  it("validates v2 events with the Claude Code schemas", () => {
    const body = {
      session_id: "t1",
      transcript_path: "/x.jsonl",
      hook_event_name: "Stop",
      stop_hook_active: "no",
    };
    expect(expectErr(body, "deepagents")).toMatchObject({ code: "EVENT_INVALID", path: "stop_hook_active" });
  });
});

describe("deepagents legacy bodies (clients.md 5.5, TV-35)", () => {
  // Python json.dumps: ", " and ": " separators, non-ASCII escaped as \uXXXX.
  const tv35 = `{"event": "tool.result", "tool_name": "read_file", "tool_id": "c9", "tool_args": {"file_path": "a.py"}, "tool_status": "success", "tool_output": "${"x".repeat(1981)}\\u2026[output truncated]"}`;

  it("parses TV-35 with its Python spacing and \\u2026 escape", () => {
    expect(tv35).toContain('\\u2026[output truncated]"}');
    const body = JSON.parse(tv35) as Record<string, unknown>;
    expect(detectDialect(body)).toBe("deepagents-legacy");
    const parsed = expectOk(body);
    expect(parsed).toEqual({
      name: "tool.result",
      dialect: "deepagents-legacy",
      known: true,
      payload: body,
      toolName: "read_file",
      toolInput: { file_path: "a.py" },
    });
    expect(parsed.payload.tool_output).toHaveLength(2000);
    expect(String(parsed.payload.tool_output).endsWith("\u2026[output truncated]")).toBe(true);
  });

  it.each([
    [
      "tool.use",
      '{"event": "tool.use", "tool_name": "write_file", "tool_id": "toolu_abc123", "tool_args": {"file_path": "src/foo.py", "content": "caf\\u00e9"}}',
    ],
    [
      "tool.result",
      '{"event": "tool.result", "tool_name": "write_file", "tool_id": "toolu_abc123", "tool_args": {"file_path": "src/foo.py", "content": "..."}, "tool_status": "success", "tool_output": "Updated file src/foo.py"}',
    ],
    [
      "tool.result",
      '{"event": "tool.result", "tool_name": "execute", "tool_id": null, "tool_args": {"command": "ls"}, "tool_status": "error", "tool_output": "boom"}',
    ],
    ["tool.error", '{"event": "tool.error", "tool_names": ["execute"]}'],
    ["permission.request", '{"event": "permission.request", "tool_names": ["execute", "write_file"]}'],
    ["session.start", '{"event": "session.start", "thread_id": "th-1"}'],
    ["user.prompt", '{"event": "user.prompt"}'],
    ["task.complete", '{"event": "task.complete", "thread_id": "th-1"}'],
    ["session.end", '{"event": "session.end", "thread_id": "th-1"}'],
    ["input.required", '{"event": "input.required"}'],
    ["context.offload", '{"event": "context.offload"}'],
    ["context.compact", '{"event": "context.compact"}'],
    ["user.name.set", '{"event": "user.name.set", "name": "Ren\\u00e9", "assistant_id": "agent"}'],
  ])("parses %s", (name, text) => {
    const body = JSON.parse(text) as Record<string, unknown>;
    const parsed = expectOk(body);
    expect(parsed).toMatchObject({ name, dialect: "deepagents-legacy", known: true });
    expect(parsed.payload).toBe(body);
    expect(parsed.sessionId).toBe(body.thread_id);
    expect(parsed.toolName).toBe(body.tool_name);
    expect(parsed.toolInput).toBe(body.tool_args);
  });

  it("uses thread_id, not session_id, as the session", () => {
    const parsed = expectOk({ event: "session.start", thread_id: "th-1", session_id: "s-9" });
    expect(parsed.sessionId).toBe("th-1");
  });

  it.each([
    [{ event: "tool.use", tool_id: "c1", tool_args: {} }, "tool_name", "tool_name is required"],
    [{ event: "tool.use", tool_name: 7 }, "tool_name", "tool_name must be a string"],
    [{ event: "tool.use", tool_name: "ls", tool_args: ["x"] }, "tool_args", "tool_args must be an object"],
    [{ event: "tool.result", tool_name: "ls", tool_id: 5 }, "tool_id", "tool_id must be a string"],
    [{ event: "tool.error", tool_names: "execute" }, "tool_names", "tool_names must be an array"],
    [{ event: "tool.error", tool_names: ["ok", 3] }, "tool_names.1", "tool_names.1 must be a string"],
    [{ event: "session.end", thread_id: 1 }, "thread_id", "thread_id must be a string"],
  ])("rejects %j", (body, path, message) => {
    expect(expectErr(body)).toEqual({ code: "EVENT_INVALID", eventName: body.event, path, message });
  });

  it("accepts an unknown dotted event as a generic legacy event", () => {
    expect(expectOk({ event: "tool.future", thread_id: "th" })).toEqual({
      name: "tool.future",
      dialect: "deepagents-legacy",
      known: false,
      payload: { event: "tool.future", thread_id: "th" },
      sessionId: "th",
    });
  });

  it("does not know Claude Code names on a legacy route", () => {
    const parsed = expectOk({ hook_event_name: "PreToolUse", tool_name: "Bash" }, "deepagents-legacy");
    expect(parsed).toMatchObject({ name: "PreToolUse", dialect: "deepagents-legacy", known: false });
  });
});

describe("event name resolution", () => {
  it("falls back to hook_event_name on a legacy route when there is no event key", () => {
    expect(expectOk({ hook_event_name: "tool.use", tool_name: "ls" }, "deepagents-legacy")).toMatchObject({
      name: "tool.use",
      known: true,
      toolName: "ls",
    });
  });

  it("falls back to event on a Claude Code route when there is no hook_event_name key", () => {
    expect(expectOk({ event: "tool.use", tool_name: "ls" }, "claude-code")).toMatchObject({
      name: "tool.use",
      dialect: "claude-code",
      known: false,
    });
  });

  it("prefers the dialect's own key when both are present", () => {
    const body = {
      hook_event_name: "FileChanged",
      transcript_path: "/t",
      file_path: "/p/a",
      event: "change",
    };
    expect(expectOk(body, "claude-code")).toMatchObject({ name: "FileChanged", known: true });
    expect(expectOk(body, "deepagents-legacy")).toMatchObject({ name: "change", known: false });
    expect(expectOk(body)).toMatchObject({ name: "FileChanged", dialect: "claude-code" });
  });

  it("detects the dialect from the body when none is given", () => {
    expect(expectOk({ hook_event_name: "Stop", cwd: "/p" }).dialect).toBe("deepcode");
    expect(expectOk({ event: "user.prompt" }).dialect).toBe("deepagents-legacy");
  });

  it("detects the dialect when untyped code passes one outside the union", () => {
    const parsed = expectOk({ event: "user.prompt" }, "bogus" as Dialect);
    expect(parsed).toMatchObject({ dialect: "deepagents-legacy", known: true });
  });
});

describe("unknown event names", () => {
  it.each([
    ["claude-code", { hook_event_name: "FutureEvent", transcript_path: "/t", session_id: "s", extra: [1] }],
    ["deepcode", { hook_event_name: "FutureEvent", cwd: "/p", tool_name: "Bash", tool_input: { a: 1 } }],
    ["deepagents", { hook_event_name: "FutureEvent", transcript_path: "/t" }],
    ["claude-code", { hook_event_name: "constructor", transcript_path: "/t" }],
    ["claude-code", { hook_event_name: "__proto__", transcript_path: "/t" }],
  ] as const)("accepts %s %j with known: false", (dialect, body) => {
    const parsed = expectOk(body, dialect);
    expect(parsed).toMatchObject({ name: body.hook_event_name, dialect, known: false });
    expect(parsed.payload).toBe(body);
  });

  it("still reads tool fields of an unknown event when they have the right type", () => {
    const body = {
      hook_event_name: "PreFutureTool",
      cwd: "/p",
      tool_name: "Bash",
      tool_input: { command: "ls" },
    };
    expect(expectOk(body)).toMatchObject({ toolName: "Bash", toolInput: { command: "ls" } });
    const wrong = { hook_event_name: "PreFutureTool", cwd: "/p", tool_name: 1, tool_input: "ls" };
    const parsed = expectOk(wrong);
    expect(parsed).not.toHaveProperty("toolName");
    expect(parsed).not.toHaveProperty("toolInput");
  });

  it.each([
    ["claude-code", "hook_event_name", "pretooluse", "PreToolUse"],
    ["claude-code", "hook_event_name", "STOP", "Stop"],
    ["deepcode", "hook_event_name", "Pretooluse", "PreToolUse"],
    ["deepagents", "hook_event_name", "sessionstart", "SessionStart"],
    ["deepagents-legacy", "event", "Tool.Use", "tool.use"],
  ] as const)("refuses %s's %s %j, a known name miscased, naming %s", (dialect, key, name, meant) => {
    expect(expectErr({ [key]: name, tool_name: "Bash", tool_input: {} }, dialect)).toEqual({
      code: "EVENT_INVALID",
      eventName: name,
      path: key,
      message: `${key} "${name}" is no event; names are case-sensitive: did you mean ${meant}?`,
    });
  });

  it.each([
    ["claude-code", "hook_event_name", "PreToolUse ", "PreToolUse"],
    ["deepcode", "hook_event_name", " Stop", "Stop"],
    ["deepagents", "hook_event_name", "PreToolUse\n", "PreToolUse"],
    ["deepagents-legacy", "event", "\ttool.use", "tool.use"],
    ["claude-code", "hook_event_name", " pretooluse ", "PreToolUse"],
  ] as const)("refuses %s's %s %j, a known name in white space, naming %s", (dialect, key, name, meant) => {
    expect(expectErr({ [key]: name, tool_name: "Bash", tool_input: {} }, dialect)).toEqual({
      code: "EVENT_INVALID",
      eventName: name,
      path: key,
      message: `${key} ${JSON.stringify(name)} is no event; a name has no white space around it: did you mean ${meant}?`,
    });
  });

  it.each([
    // A paste from a web page or a document brings these along; none shows in a quote as written.
    ["PreToolUse\u00a0", '"PreToolUse\\u00a0"'],
    ["\ufeffPreToolUse", '"\\ufeffPreToolUse"'],
    ["PreToolUse\u200b", '"PreToolUse\\u200b"'],
    ["\u3000PreToolUse\u2028", '"\\u3000PreToolUse\\u2028"'],
  ])(
    "refuses %j, a known name in white space or invisible characters, showing them escaped",
    (name, quoted) => {
      expect(expectErr({ hook_event_name: name, tool_name: "Bash", tool_input: {} }, "claude-code")).toEqual({
        code: "EVENT_INVALID",
        eventName: name,
        path: "hook_event_name",
        message: `hook_event_name ${quoted} is no event; a name has no white space around it: did you mean PreToolUse?`,
      });
    },
  );

  // events.ts writes its padding out as a class of the BMP (PADDING_CLASS), for speed: this holds
  // it to the Unicode properties it copies, as the engine running the tests reads them.
  it("takes as padding each BMP character that is white space or default-ignorable, and no other", () => {
    const property = /^[\s\p{Default_Ignorable_Code_Point}]$/u;
    const differing: string[] = [];
    for (let code = 0; code <= 0xffff; code++) {
      if (code >= 0xd800 && code <= 0xdfff) continue;
      const result = parseHookEvent({ hook_event_name: `Stop${String.fromCharCode(code)}` }, "claude-code");
      const padding = !result.ok && result.error.message.includes("no white space around it");
      if (padding !== property.test(String.fromCharCode(code))) differing.push(code.toString(16));
    }
    expect(differing).toEqual([]);
  });

  it("quotes at most 100 characters of a padded name, however much of it must be escaped", () => {
    const name = `${"\u00a0".repeat(100_000)}PreToolUse`;
    const message = expectErr({ hook_event_name: name }, "claude-code").message;
    expect(message.startsWith(`hook_event_name "${"\\u00a0".repeat(16)}`)).toBe(true);
    expect(message).toMatch(/… is no event; a name has no white space around it: did you mean PreToolUse\?$/);
    expect(message.length).toBeLessThan(200);
  });
  it("judges a name another dialect knows, spelled as it is there, as unknown (no typo to name)", () => {
    // PostToolBatch is Claude Code's; deepagents v2 does not send it.
    expect(expectOk({ hook_event_name: "PostToolBatch" }, "deepagents")).toMatchObject({ known: false });
    expect(expectOk({ hook_event_name: "posttoolbatch" }, "deepagents")).toMatchObject({ known: false });
  });

  it("checks the common fields of an unknown event", () => {
    expect(expectErr({ hook_event_name: "FutureEvent", cwd: 5 })).toEqual({
      code: "EVENT_INVALID",
      eventName: "FutureEvent",
      path: "cwd",
      message: "cwd must be a string",
    });
  });
});

describe("errors", () => {
  it.each([
    [[], "hook body must be a JSON object, got an array"],
    [[{ hook_event_name: "Stop" }], "hook body must be a JSON object, got an array"],
    [null, "hook body must be a JSON object, got null"],
    ["{}", "hook body must be a JSON object, got a string"],
    [42, "hook body must be a JSON object, got a number"],
    [true, "hook body must be a JSON object, got a boolean"],
    [undefined, "hook body must be a JSON object, got undefined"],
  ])("EVENT_NOT_OBJECT for %j", (body, message) => {
    expect(expectErr(body)).toEqual({ code: "EVENT_NOT_OBJECT", message });
  });

  it.each([
    [{ transcript_path: "/t" }, undefined, { message: "hook body has no hook_event_name" }],
    [{ thread_id: "t" }, "deepagents-legacy", { message: "hook body has no event" }],
    [
      { hook_event_name: "", transcript_path: "/t" },
      undefined,
      { message: "hook_event_name must be a non-empty string", path: "hook_event_name" },
    ],
    [
      { hook_event_name: 5 },
      undefined,
      { message: "hook_event_name must be a non-empty string", path: "hook_event_name" },
    ],
    [
      { hook_event_name: null },
      undefined,
      { message: "hook_event_name must be a non-empty string", path: "hook_event_name" },
    ],
    [
      { event: ["tool.use"] },
      "deepagents-legacy",
      { message: "event must be a non-empty string", path: "event" },
    ],
    [{ event: "" }, "deepagents-legacy", { message: "event must be a non-empty string", path: "event" }],
  ] as const)("EVENT_NAME_MISSING for %j on %s", (body, dialect, expected) => {
    expect(expectErr(body, dialect)).toEqual({ code: "EVENT_NAME_MISSING", ...expected });
  });

  const pre = { session_id: "s", transcript_path: "/t", cwd: "/p", hook_event_name: "PreToolUse" };
  it.each([
    [{ ...pre, tool_name: 42, tool_input: {} }, "PreToolUse", "tool_name", "tool_name must be a string"],
    [{ ...pre, tool_input: {} }, "PreToolUse", "tool_name", "tool_name is required"],
    [{ ...pre, tool_name: "" }, "PreToolUse", "tool_name", "tool_name must not be empty"],
    [
      { ...pre, tool_name: "Bash", tool_input: "x" },
      "PreToolUse",
      "tool_input",
      "tool_input must be an object",
    ],
    [
      { ...pre, tool_name: "Bash", tool_input: [] },
      "PreToolUse",
      "tool_input",
      "tool_input must be an object",
    ],
    [{ ...pre, cwd: 5, tool_name: "Bash" }, "PreToolUse", "cwd", "cwd must be a string"],
    [{ ...pre, session_id: 1, tool_name: "Bash" }, "PreToolUse", "session_id", "session_id must be a string"],
    [
      { ...pre, tool_name: "Bash", effort: { level: 3 } },
      "PreToolUse",
      "effort.level",
      "effort.level must be a string",
    ],
    [{ ...pre, tool_name: "Bash", effort: "high" }, "PreToolUse", "effort", "effort must be an object"],
    [
      { ...pre, hook_event_name: "PostToolUse", tool_name: "Bash", duration_ms: "5" },
      "PostToolUse",
      "duration_ms",
      "duration_ms must be a number",
    ],
    [
      { ...pre, hook_event_name: "Stop", stop_hook_active: "yes" },
      "Stop",
      "stop_hook_active",
      "stop_hook_active must be a boolean",
    ],
    [
      { ...pre, hook_event_name: "PreCompact", custom_instructions: 5 },
      "PreCompact",
      "custom_instructions",
      "custom_instructions must be a string",
    ],
    [
      { ...pre, hook_event_name: "PostToolBatch", tool_calls: [{ tool_name: "Read" }, { tool_name: 1 }] },
      "PostToolBatch",
      "tool_calls.1.tool_name",
      "tool_calls.1.tool_name must be a string",
    ],
    [
      { ...pre, hook_event_name: "PostToolBatch", tool_calls: ["Read"] },
      "PostToolBatch",
      "tool_calls.0",
      "tool_calls.0 must be an object",
    ],
    [
      { ...pre, hook_event_name: "Stop", background_tasks: {} },
      "Stop",
      "background_tasks",
      "background_tasks must be an array",
    ],
  ])("EVENT_INVALID for %j", (body, eventName, path, message) => {
    expect(expectErr(body)).toEqual({ code: "EVENT_INVALID", eventName, path, message });
  });

  it("reads a null optional field as absent, as a client's serializer writes it, tool_input too", () => {
    const nulls = {
      ...pre,
      tool_name: "Bash",
      tool_input: { command: "ls" },
      tool_use_id: null,
      agent_type: null,
      permission_mode: null,
      effort: null,
      session_id: null,
    };
    const parsed = parseHookEvent(nulls);
    expect(parsed.ok).toBe(true);
    if (parsed.ok) {
      expect(parsed.value).toMatchObject({
        name: "PreToolUse",
        toolName: "Bash",
        toolInput: { command: "ls" },
      });
      expect(parsed.value.sessionId).toBeUndefined();
    }
    expect(parseHookEvent({ ...pre, hook_event_name: "Stop", last_assistant_message: null }).ok).toBe(true);
    expect(parseHookEvent({ event: "tool.result", tool_name: "ls", tool_id: null }).ok).toBe(true);
    // Judged as a call without its input (evaluate.ts: deny-style `if` rules match it).
    const noInput = expectOk({ ...pre, tool_name: "Bash", tool_input: null });
    expect(noInput).toMatchObject({ name: "PreToolUse", toolName: "Bash" });
    expect(noInput).not.toHaveProperty("toolInput");
    expect(expectOk({ event: "tool.use", tool_name: "ls", tool_args: null })).not.toHaveProperty("toolInput");
  });

  it("reports the first issue when several fields are wrong", () => {
    const error = expectErr({ ...pre, cwd: 5, tool_name: 42, tool_input: "x" });
    expect(error).toMatchObject({ code: "EVENT_INVALID", path: "cwd" });
  });

  it("does not echo field values in messages", () => {
    const error = expectErr({ ...pre, tool_name: "Bash", tool_input: "sk-live-SECRET" });
    expect(error.message).not.toContain("SECRET");
  });

  it("turns a body that throws on read into EVENT_INVALID instead of throwing", () => {
    const body = {
      hook_event_name: "PreToolUse",
      get tool_name(): string {
        throw new Error("boom");
      },
    };
    expect(expectErr(body)).toEqual({ code: "EVENT_INVALID", message: "hook body could not be read" });
    const proxy = new Proxy(
      {},
      {
        getOwnPropertyDescriptor() {
          throw new Error("boom");
        },
      },
    );
    expect(expectErr(proxy).code).toBe("EVENT_INVALID");
  });

  it("never throws on odd but JSON-shaped input", () => {
    let deep: unknown = {};
    for (let i = 0; i < 10_000; i++) deep = [deep];
    const odd: unknown[] = [
      JSON.parse('{"__proto__": {"hook_event_name": "Stop"}}'),
      JSON.parse('{"hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": {"__proto__": 1}}'),
      { hook_event_name: "PreToolUse", tool_name: "Bash", tool_input: { deep } },
      { hook_event_name: "PostToolBatch", transcript_path: "/t", tool_calls: [deep] },
      Object.create(null),
      { hook_event_name: "x".repeat(1_000_000) },
    ];
    for (const body of odd) expect(() => parseHookEvent(body)).not.toThrow();
    expect(parseHookEvent(odd[0]).ok).toBe(false);
    expect(parseHookEvent(odd[1]).ok).toBe(true);
    expect(parseHookEvent(odd[3])).toMatchObject({ ok: false, error: { path: "tool_calls.0" } });
  });
});

describe("detectDialect", () => {
  it.each([
    [{ event: "tool.use", tool_name: "ls" }, "deepagents-legacy"],
    [{ event: "future.thing" }, "deepagents-legacy"],
    [{ event: "tool.use", transcript_path: "/t" }, "deepagents-legacy"],
    [{ event: 5, transcript_path: "/t" }, "claude-code"],
    [{ event: 5 }, "deepcode"],
    [{ hook_event_name: "FileChanged", transcript_path: "/t", event: "change" }, "claude-code"],
    [{ hook_event_name: "PreToolUse", transcript_path: "/t", tool_desc: "ls" }, "deepcode"],
    [{ hook_event_name: "PreToolUse", cwd: "/p" }, "deepcode"],
    [{}, "deepcode"],
    [{ hook_event_name: "Stop", transcript_path: "/t" }, "claude-code"],
    [{ hook_event_name: "Stop", transcript_path: "" }, "claude-code"],
    [{ hook_event_name: "Stop", transcript_path: null }, "claude-code"],
  ] as const)("%j is %s", (body, dialect) => {
    expect(detectDialect(body)).toBe(dialect);
  });
});

describe("sniffEventName", () => {
  const filler = "a".repeat(10 * 1024 * 1024);

  it("finds the event near the start of a huge Claude Code body", () => {
    const text = `{"session_id":"s","transcript_path":"/t","cwd":"/p","hook_event_name":"PostToolUse","tool_name":"Read","tool_response":"${filler}"}`;
    expect(sniffEventName(text)).toBe("PostToolUse");
  });

  it("finds the event of a huge legacy body with Python spacing", () => {
    expect(sniffEventName(`{"event": "tool.result", "tool_output": "${filler}"}`)).toBe("tool.result");
  });

  it("tolerates whitespace around the colon", () => {
    expect(sniffEventName('{\n  "hook_event_name" :\t "Stop"\n}')).toBe("Stop");
  });

  it("prefers hook_event_name when the body also carries an event field", () => {
    expect(sniffEventName('{"hook_event_name":"FileChanged","file_path":"/a","event":"change"}')).toBe(
      "FileChanged",
    );
  });

  it("reads a body encoded twice (a JSON string holding the event), cut short too", () => {
    const stop = { session_id: "s", hook_event_name: "Stop", last_assistant_message: "done" };
    const twice = JSON.stringify(JSON.stringify(stop));
    expect(sniffEventName(twice)).toBe("Stop");
    expect(sniffEventName(` ${twice.slice(0, -20)}`)).toBe("Stop");
    expect(sniffEventName(JSON.stringify(JSON.stringify({ event: "tool.use" })))).toBe("tool.use");
  });

  it("looks at the first 64 KiB only", () => {
    const head = '{"x":"';
    const tail = '","hook_event_name":"Stop"';
    const endingAt = (end: number) => `${head}${" ".repeat(end - head.length - tail.length)}${tail}}`;
    expect(sniffEventName(endingAt(64 * 1024))).toBe("Stop");
    expect(sniffEventName(endingAt(64 * 1024 + 1))).toBeUndefined();
    expect(sniffEventName(endingAt(1024 * 1024))).toBeUndefined();
  });

  it.each([
    ["", undefined],
    ["garbage \u0000\uffff not json", undefined],
    ['{"hook_event_name":"NotAnEvent"}', undefined],
    ['{"hook_event_name":"Pre-Tool"}', undefined],
    ['{"hook_event_name":123}', undefined],
    ['{"event":"tool.unknown"}', undefined],
    ['{"event":"Tool.Use"}', undefined],
    ['{"prompt":"say \\"hook_event_name\\": \\"Stop\\""}', undefined],
    ['{"hook_event_name":"constructor"}', undefined],
    ['{"my_hook_event_name":"Stop"}', undefined],
    ['{"subevent":"tool.use"}', undefined],
  ])("returns %j for %j", (text, expected) => {
    expect(sniffEventName(text)).toBe(expected);
  });

  it("finds nothing in adversarial input, reading no more than its first 64 KiB", () => {
    const adversarial = [
      `"hook_event_name"${" ".repeat(10_000_000)}`,
      '"hook_event_name":"'.repeat(500_000),
      `"event":"${"a".repeat(10_000_000)}`,
      '"'.repeat(10_000_000),
    ];
    // The work is bounded by what the pattern is given, whatever the body's size (bench/ measures
    // the time); sniffEventName runs no other regex.
    const exec = vi.spyOn(RegExp.prototype, "exec");
    let answers: (string | undefined)[];
    let read: number[];
    try {
      answers = adversarial.map((text) => sniffEventName(text));
      read = exec.mock.calls.map(([text]) => String(text).length);
    } finally {
      exec.mockRestore();
    }
    expect(answers).toEqual(adversarial.map(() => undefined));
    expect(read).toHaveLength(adversarial.length);
    for (const length of read) expect(length).toBeLessThanOrEqual(64 * 1024);
  });
});

/**
 * The bad-input catalogue (issue 9, part 2): one table of hostile and broken requests sent to a
 * real `hookgate serve`, each with the exact answer it must get. On the agent-facing routes that
 * is always a 2xx decision (DESIGN.md: a status code never carries a decision), rendered for the
 * event the way clients.md §6.5 and POLICY.md "Fail modes" say; the few rows that are not 2xx are
 * requests Node's HTTP parser refuses before any application code runs, and each says why.
 * After every row the server must still answer /healthz and a normal decision.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { Agent } from "node:http";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ServerProcess, startServerProcess } from "../support/process.js";
import { type RawRequest, type RawResponse, residentKiB, sendBytes, sendRaw } from "../support/raw-http.js";
import { tempDir } from "../support/temp.js";

const UNKNOWN_PATH =
  "no route POST /v1/hook; hook URLs are /v1/hooks/claude-code, /v1/hooks/deepcode, /v1/hooks/deepagents or /v1/hooks/deepagents-legacy";

const TOKEN_A = "catalogue-team-a-token";
const TOKEN_B = "catalogue-team-b-token";
const MiB = 1024 * 1024;

const POLICY = {
  version: 1,
  auth: {
    tokens: [
      { team: "a", env: "CATALOGUE_TOKEN_A" },
      { team: "b", env: "CATALOGUE_TOKEN_B" },
    ],
    onFailure: "deny",
  },
  // maxBodyBytes stays at its default, 1 MiB.
  defaults: { onError: "deny" },
  rules: [
    { id: "no-rm", on: "PreToolUse", if: "Bash(rm *)", decide: "deny", reason: "no rm" },
    {
      id: "a-writes",
      on: "PreToolUse",
      matcher: "Write",
      teams: ["a"],
      decide: "ask",
      reason: "team a reviews writes",
    },
  ],
};

// ---------------------------------------------------------------------------------------------
// Requests

type Json = Record<string, unknown>;
const common = { session_id: "s1", transcript_path: "/t.jsonl", cwd: "/p", permission_mode: "default" };
const event = (name: string, fields: Json = {}): Json => ({ ...common, hook_event_name: name, ...fields });
const bash = (command: string, fields: Json = {}) =>
  event("PreToolUse", { tool_name: "Bash", tool_input: { command }, tool_use_id: "toolu_1", ...fields });
const PRE_RM = JSON.stringify(bash("rm -rf build"));

type Headers = readonly (readonly [string, string])[];
/** Content-Type and Authorization as a client sends them; null leaves one out. */
const headers = (token: string | null = TOKEN_A, contentType: string | null = "application/json") => {
  const out: [string, string][] = [];
  if (contentType !== null) out.push(["Content-Type", contentType]);
  if (token !== null) out.push(["Authorization", `Bearer ${token}`]);
  return out as Headers;
};
const post = (body: string | Uint8Array, extra: Partial<RawRequest> = {}): RawRequest => ({
  path: "/v1/hooks",
  headers: headers(),
  body,
  ...extra,
});

/** A PreToolUse body of exactly `size` bytes: tool_input carries a padding string. */
function preOfSize(size: number): Buffer {
  const [prefix = "", suffix = ""] = JSON.stringify(
    bash("rm -rf build", { tool_input: { command: "rm -rf build", pad: "@" } }),
  ).split("@");
  return Buffer.concat([
    Buffer.from(prefix),
    Buffer.alloc(size - prefix.length - suffix.length, 0x61),
    Buffer.from(suffix),
  ]);
}

/** tool_input.x nested `depth` levels deep, as arrays or as objects. */
function nested(depth: number, kind: "array" | "object"): string {
  const open = kind === "array" ? "[" : '{"a":';
  const close = kind === "array" ? "]" : "}";
  const inner = kind === "array" ? "" : "1";
  return JSON.stringify(bash("ls", { tool_input: { command: "ls", x: 0 } })).replace(
    '"x":0',
    `"x":${open.repeat(depth)}${inner}${close.repeat(depth)}`,
  );
}

const bytes = (...parts: (string | number[])[]) =>
  Buffer.concat(parts.map((p) => (typeof p === "string" ? Buffer.from(p) : Buffer.from(p))));

// ---------------------------------------------------------------------------------------------
// Expected answers (defaults.onError and auth.onFailure are both deny)

const has = (code: string) => expect.stringContaining(`[${code}]`);
/** A request-level deny on PreToolUse: denied, and the user told what is wrong. */
const deniedPre = (code: string, message: RegExp | string = "") => ({
  systemMessage: expect.stringMatching(messagePattern(code, message)),
  hookSpecificOutput: {
    hookEventName: "PreToolUse",
    permissionDecision: "deny",
    permissionDecisionReason: expect.stringMatching(messagePattern(code, message)),
  },
});
/** A request-level deny on PermissionRequest: both shapes, for Claude Code and deepcode (TV-20). */
const deniedPermission = (code: string) => ({
  systemMessage: has(code),
  hookSpecificOutput: {
    hookEventName: "PermissionRequest",
    decision: { behavior: "deny", message: has(code) },
    permissionDecision: "deny",
    permissionDecisionReason: has(code),
  },
});
/** Any other identified event: no decision, only the systemMessage. */
const toldOnly = (code: string, message: RegExp | string = "") => ({
  systemMessage: expect.stringMatching(messagePattern(code, message)),
});
/** An event nobody can name: the top-level block every client accepts. */
const topBlock = (code: string) => ({ decision: "block", reason: has(code) });
const ruleDeny = (reason: string) => ({
  hookSpecificOutput: {
    hookEventName: "PreToolUse",
    permissionDecision: "deny",
    permissionDecisionReason: reason,
  },
});

function messagePattern(code: string, message: RegExp | string): RegExp {
  const text = typeof message === "string" ? escapeRegExp(message) : message.source;
  return new RegExp(`^hookgate: .*${text}.*\\[${code}\\]$`, "s");
}
const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

// ---------------------------------------------------------------------------------------------
// The table

interface Expected {
  readonly status: number;
  /** `x-hookgate-error`; null when the request was judged normally. Only on hook answers. */
  readonly error?: string | null;
  /** The body: "" for empty, an object (JSON, with matchers) for a decision. */
  readonly body?: unknown;
  /** Headers that must have exactly this value (undefined: must be absent). */
  readonly headers?: Readonly<Record<string, string | undefined>>;
  /** The team the audit line names. */
  readonly team?: string;
  /** Refused by Node's parser before any code of ours runs: the code of the warning logged. */
  readonly refusedByNode?: string;
}

interface Row {
  readonly name: string;
  /** A request, or raw bytes on a socket for what Node's parser refuses. */
  readonly request: RawRequest | { readonly bytes: Uint8Array };
  readonly expected: Expected;
  /** Send the follow-up decision on the same keep-alive connection, which must be reused. */
  readonly keepAlive?: boolean;
}

const decision = (error: string | null, body: unknown, extra: Partial<Expected> = {}): Expected => ({
  status: 200,
  error,
  body,
  ...extra,
});

/** Wrong types in every field the gateway validates: [event, field(s), message]. */
const WRONG_TYPES: readonly (readonly [string, Json, string])[] = [
  ["PreToolUse", { session_id: 1 }, "session_id must be a string"],
  ["PreToolUse", { transcript_path: {} }, "transcript_path must be a string"],
  ["PreToolUse", { cwd: [] }, "cwd must be a string"],
  ["PreToolUse", { permission_mode: true }, "permission_mode must be a string"],
  ["PreToolUse", { agent_id: 1 }, "agent_id must be a string"],
  ["PreToolUse", { agent_type: 7 }, "agent_type must be a string"],
  ["PreToolUse", { prompt_id: 7 }, "prompt_id must be a string"],
  ["PreToolUse", { scratchpad_dir: false }, "scratchpad_dir must be a string"],
  ["PreToolUse", { effort: "high" }, "effort must be an object"],
  ["PreToolUse", { effort: { level: 3 } }, "effort.level must be a string"],
  ["PreToolUse", { tool_name: 42 }, "tool_name must be a string"],
  ["PreToolUse", { tool_name: "" }, "tool_name must not be empty"],
  ["PreToolUse", { tool_name: undefined }, "tool_name is required"],
  ["PreToolUse", { tool_input: "rm -rf /" }, "tool_input must be an object"],
  ["PreToolUse", { tool_input: ["rm"] }, "tool_input must be an object"],
  ["PreToolUse", { tool_use_id: 7 }, "tool_use_id must be a string"],
  ["PermissionRequest", { tool_input: 1 }, "tool_input must be an object"],
  ["PermissionRequest", { permission_suggestions: {} }, "permission_suggestions must be an array"],
  ["PostToolUse", { duration_ms: "5" }, "duration_ms must be a number"],
  ["PostToolUseFailure", { is_interrupt: "no" }, "is_interrupt must be a boolean"],
  ["PostToolBatch", { tool_calls: "x" }, "tool_calls must be an array"],
  ["PostToolBatch", { tool_calls: [{ tool_name: 1 }] }, "tool_calls.0.tool_name must be a string"],
  ["Stop", { stop_hook_active: "false" }, "stop_hook_active must be a boolean"],
  ["Stop", { last_assistant_message: 1 }, "last_assistant_message must be a string"],
  ["SubagentStop", { agent_transcript_path: 1 }, "agent_transcript_path must be a string"],
  ["UserPromptSubmit", { prompt: 42 }, "prompt must be a string"],
  ["Notification", { message: {} }, "message must be a string"],
  ["Notification", { notification_type: 1 }, "notification_type must be a string"],
  ["SessionEnd", { reason: 1 }, "reason must be a string"],
  ["PreCompact", { custom_instructions: 1 }, "custom_instructions must be a string"],
  ["PostCompact", { messages_before: "3" }, "messages_before must be a number"],
  ["MessageDisplay", { final: "yes" }, "final must be a boolean"],
];

function wrongTypeRow([name, fields, message]: (typeof WRONG_TYPES)[number]): Row {
  const toolFields = ["PreToolUse", "PermissionRequest", "PostToolUse", "PostToolUseFailure"].includes(name)
    ? { tool_name: "Bash", tool_input: { command: "ls" } }
    : {};
  const body = JSON.stringify(event(name, { ...toolFields, ...fields }));
  const expected =
    name === "PreToolUse"
      ? deniedPre("EVENT_INVALID", message)
      : name === "PermissionRequest"
        ? deniedPermission("EVENT_INVALID")
        : name === "PreCompact"
          ? "" // any PreCompact body would become compaction instructions (clients.md §4.4)
          : toldOnly("EVENT_INVALID", message);
  return {
    name: `wrong type: ${name} ${JSON.stringify(fields)} (${message})`,
    request: post(body),
    expected: decision("EVENT_INVALID", expected),
  };
}

const TEN_MB = preOfSize(10 * MiB);
const ROWS: readonly Row[] = [
  // Truncated and non-JSON bodies. The event is sniffed from what arrived.
  {
    name: "truncated JSON, cut inside a string",
    request: post(PRE_RM.slice(0, -12)),
    expected: decision("MALFORMED_JSON", deniedPre("MALFORMED_JSON", "is not valid JSON")),
  },
  {
    name: "truncated JSON, cut after the event name",
    request: post('{"hook_event_name":"PreToolUse"'),
    expected: decision("MALFORMED_JSON", deniedPre("MALFORMED_JSON")),
  },
  {
    name: "truncated Stop: no decision on Stop, only the message",
    request: post(JSON.stringify(event("Stop", { stop_hook_active: false })).slice(0, -3)),
    expected: decision("MALFORMED_JSON", toldOnly("MALFORMED_JSON")),
  },
  {
    // Unparsed, the body cannot say it is legacy, so the deepagents route's v2 answer goes out;
    // a legacy adapter discards it either way.
    // Answered as a legacy body that parses is on this route: empty, the legacy hook reads nothing.
    name: "truncated deepagents legacy tool.use on the deepagents route",
    request: post('{"event": "tool.use", "tool_name": "execute", "tool_args": {"command": "rm', {
      path: "/v1/hooks/deepagents",
    }),
    expected: decision("MALFORMED_JSON", ""),
  },
  {
    name: "an empty body",
    request: post(""),
    expected: decision("MALFORMED_JSON", topBlock("MALFORMED_JSON")),
  },
  {
    name: "not JSON at all",
    request: post("rm -rf /"),
    expected: decision("MALFORMED_JSON", topBlock("MALFORMED_JSON")),
  },
  {
    name: "JSON null",
    request: post("null"),
    expected: decision("EVENT_NOT_OBJECT", topBlock("EVENT_NOT_OBJECT")),
  },
  {
    name: "a JSON array",
    request: post("[1,2]"),
    expected: decision("EVENT_NOT_OBJECT", topBlock("EVENT_NOT_OBJECT")),
  },
  {
    name: "a JSON string",
    request: post('"PreToolUse"'),
    expected: decision("EVENT_NOT_OBJECT", topBlock("EVENT_NOT_OBJECT")),
  },
  {
    name: "trailing garbage after the object",
    request: post(`${PRE_RM}}`),
    expected: decision("MALFORMED_JSON", deniedPre("MALFORMED_JSON")),
  },

  // Wrong types in every field.
  {
    name: "wrong type: hook_event_name 42",
    request: post(JSON.stringify({ ...bash("rm x"), hook_event_name: 42 })),
    expected: decision("EVENT_NAME_MISSING", topBlock("EVENT_NAME_MISSING")),
  },
  {
    name: "wrong type: hook_event_name empty",
    request: post(JSON.stringify({ ...bash("rm x"), hook_event_name: "" })),
    expected: decision("EVENT_NAME_MISSING", topBlock("EVENT_NAME_MISSING")),
  },
  {
    name: "missing hook_event_name",
    request: post(JSON.stringify({ ...bash("rm x"), hook_event_name: undefined })),
    expected: decision("EVENT_NAME_MISSING", topBlock("EVENT_NAME_MISSING")),
  },
  ...WRONG_TYPES.map(wrongTypeRow),
  {
    name: "wrong type on the deepcode route: tool_name 42",
    request: post(JSON.stringify({ hook_event_name: "PreToolUse", cwd: "/p", tool_name: 42 }), {
      path: "/v1/hooks/deepcode",
    }),
    expected: decision("EVENT_INVALID", deniedPre("EVENT_INVALID", "tool_name must be a string")),
  },
  {
    name: "wrong type in a legacy tool.use: tool_args a string",
    request: post('{"event": "tool.use", "tool_name": "execute", "tool_id": "c1", "tool_args": "rm"}', {
      path: "/v1/hooks/deepagents",
    }),
    expected: decision("EVENT_INVALID", ""),
  },
  {
    // A serializer's null for a field no rule needs: read as absent, and the rule still denies.
    name: "null in optional fields of a PreToolUse is judged, not refused",
    request: post(
      JSON.stringify({
        ...bash("rm x"),
        tool_use_id: null,
        agent_type: null,
        permission_mode: null,
        effort: null,
      }),
    ),
    expected: decision(null, ruleDeny("no rm"), { team: "a" }),
  },
  {
    // What it runs is not known: every deny-style `if` entry on Bash matches it, to fail safe.
    name: "a PreToolUse without tool_input is judged: its Bash deny rule matches, saying why",
    request: post(JSON.stringify({ ...bash("rm x"), tool_input: undefined })),
    expected: decision(
      null,
      ruleDeny(
        "no rm (the call came without its tool_input, or its command or URL, so hookgate treats it as matching)",
      ),
      { team: "a" },
    ),
  },
  {
    name: "a null tool_input is read as absent, as any field's null: judged the same",
    request: post(JSON.stringify({ ...bash("rm x"), tool_input: null })),
    expected: decision(
      null,
      ruleDeny(
        "no rm (the call came without its tool_input, or its command or URL, so hookgate treats it as matching)",
      ),
      { team: "a" },
    ),
  },
  {
    // Judged as an unknown event it would meet no rule: refused, naming the event meant. No
    // client reads a decision on an event it misnames, so the fail mode is said, not enforced.
    name: "a known event name miscased is refused, not judged as a new event",
    request: post(JSON.stringify({ ...bash("rm x"), hook_event_name: "pretooluse" })),
    expected: decision("EVENT_INVALID", {
      systemMessage:
        'hookgate: hook_event_name "pretooluse" is no event; names are case-sensitive: did you mean PreToolUse? [EVENT_INVALID]',
    }),
  },
  {
    // Judged as an unknown event, it met no rule and its audit line said no more than "none".
    name: "a known event name with a space after it is refused, not judged as a new event",
    request: post(JSON.stringify({ ...bash("rm x"), hook_event_name: "PreToolUse " })),
    expected: decision("EVENT_INVALID", {
      systemMessage:
        'hookgate: hook_event_name "PreToolUse " is no event; a name has no white space around it: did you mean PreToolUse? [EVENT_INVALID]',
    }),
  },
  {
    name: "an unknown future event with unknown keys is judged, not refused",
    request: post(JSON.stringify(event("FutureEvent", { novel: { a: 1 } }))),
    expected: decision(null, "", { team: "a" }),
  },

  // Sizes. 1 MiB is defaults.maxBodyBytes; oversized bodies are drained, so the answer arrives.
  {
    name: "a body of exactly 1 MiB is judged",
    request: post(preOfSize(MiB)),
    expected: decision(null, ruleDeny("no rm"), { team: "a" }),
  },
  {
    name: "a body of 1 MiB + 1 byte",
    request: post(preOfSize(MiB + 1)),
    expected: decision("BODY_TOO_LARGE", deniedPre("BODY_TOO_LARGE", "at most 1048576")),
  },
  {
    name: "10 MB with Content-Length, then the same connection carries the next request",
    request: post(TEN_MB),
    keepAlive: true,
    expected: decision("BODY_TOO_LARGE", deniedPre("BODY_TOO_LARGE", "is 10485760 bytes"), {
      headers: { connection: "keep-alive" },
    }),
  },
  {
    name: "10 MB chunked (no Content-Length)",
    request: post(TEN_MB, { chunkBytes: 64 * 1024 }),
    keepAlive: true,
    expected: decision("BODY_TOO_LARGE", deniedPre("BODY_TOO_LARGE", "is 10485760 bytes")),
  },
  {
    name: "10 MB Stop: no decision on Stop, only the message",
    request: post(
      Buffer.concat([
        Buffer.from('{"hook_event_name":"Stop","stop_hook_active":false,"last_assistant_message":"'),
        Buffer.alloc(10 * MiB, 0x61),
        Buffer.from('"}'),
      ]),
    ),
    expected: decision("BODY_TOO_LARGE", toldOnly("BODY_TOO_LARGE")),
  },
  {
    name: "declares 70 MiB, sends 128 KiB and waits: refused at once, connection closed",
    request: {
      bytes: Buffer.concat([
        Buffer.from(
          `POST /v1/hooks HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nAuthorization: Bearer ${TOKEN_A}\r\nContent-Length: ${70 * MiB}\r\n\r\n`,
        ),
        preOfSize(128 * 1024),
      ]),
    },
    expected: decision("BODY_TOO_LARGE", deniedPre("BODY_TOO_LARGE", "at least"), {
      headers: { connection: "close" },
    }),
  },
  {
    // RFC 9110 §8.6 allows leading zeros; Node's parser takes them. Read as no length at all, the
    // gateway waited out the 60 s body deadline and answered BODY_UNREADABLE.
    name: "declares 70 MiB in 16 digits (leading zeros), sends 128 KiB and waits: refused at once, connection closed",
    request: {
      bytes: Buffer.concat([
        Buffer.from(
          `POST /v1/hooks HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nAuthorization: Bearer ${TOKEN_A}\r\nContent-Length: ${String(70 * MiB).padStart(16, "0")}\r\n\r\n`,
        ),
        preOfSize(128 * 1024),
      ]),
    },
    expected: decision("BODY_TOO_LARGE", deniedPre("BODY_TOO_LARGE", `at least ${70 * MiB} bytes`), {
      headers: { connection: "close" },
    }),
  },

  // Deep nesting: V8 parses any depth, but nothing after JSON.parse could walk it.
  {
    name: "100,000 nested arrays",
    request: post(nested(100_000, "array")),
    expected: decision("MALFORMED_JSON", deniedPre("MALFORMED_JSON", "deeper than 1000 levels")),
  },
  {
    name: "100,000 nested objects",
    request: post(nested(100_000, "object")),
    expected: decision("MALFORMED_JSON", deniedPre("MALFORMED_JSON", "deeper than 1000 levels")),
  },
  {
    name: "1,000 nested levels (the whole body) are judged",
    request: post(nested(998, "array")),
    expected: decision(null, "", { team: "a" }),
  },
  {
    name: "1,001 nested levels are refused",
    request: post(nested(999, "array")),
    expected: decision("MALFORMED_JSON", deniedPre("MALFORMED_JSON", "deeper than 1000 levels")),
  },
  {
    name: "100,000 brackets inside a string are text, not nesting",
    request: post(
      JSON.stringify(bash("ls", { tool_input: { command: "ls", description: "[".repeat(100_000) } })),
    ),
    expected: decision(null, "", { team: "a" }),
  },

  {
    name: "an escaped quote before 5,000 brackets in a string does not end the string",
    request: post(
      JSON.stringify(bash("ls", { tool_input: { command: "ls", description: `\\"${"{".repeat(5000)}` } })),
    ),
    expected: decision(null, "", { team: "a" }),
  },

  // Encodings.
  {
    name: "invalid UTF-8: a lone 0xFF",
    request: post(bytes(PRE_RM.slice(0, -3), [0xff], '"}}')),
    expected: decision("BODY_NOT_UTF8", deniedPre("BODY_NOT_UTF8")),
  },
  {
    name: "invalid UTF-8: an overlong '/' (C0 AF)",
    request: post(bytes(PRE_RM.slice(0, -3), [0xc0, 0xaf], '"}}')),
    expected: decision("BODY_NOT_UTF8", deniedPre("BODY_NOT_UTF8")),
  },
  {
    name: "invalid UTF-8: an encoded surrogate (ED A0 80)",
    request: post(bytes(PRE_RM.slice(0, -3), [0xed, 0xa0, 0x80], '"}}')),
    expected: decision("BODY_NOT_UTF8", deniedPre("BODY_NOT_UTF8")),
  },
  {
    name: "invalid UTF-8: a sequence cut at the end",
    request: post(bytes(PRE_RM, [0xe2, 0x82])),
    expected: decision("BODY_NOT_UTF8", deniedPre("BODY_NOT_UTF8")),
  },
  {
    name: "a Latin-1 body declared charset=iso-8859-1: not UTF-8, the message naming the charset",
    request: post(Buffer.from(PRE_RM.replace("rm -rf build", "rm -rf caf\u00e9"), "latin1"), {
      headers: headers(TOKEN_A, "application/json; charset=iso-8859-1"),
    }),
    expected: decision(
      "BODY_NOT_UTF8",
      deniedPre(
        "BODY_NOT_UTF8",
        "its Content-Type says charset=iso-8859-1, but JSON is UTF-8: send it in UTF-8",
      ),
    ),
  },
  {
    name: "UTF-16LE with a BOM: no event can be read",
    request: post(Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(PRE_RM, "utf16le")])),
    expected: decision("BODY_NOT_UTF8", topBlock("BODY_NOT_UTF8")),
  },
  {
    // Valid UTF-8 (a NUL beside each ASCII character), so no event name can be read either.
    name: "UTF-16LE without a BOM: malformed JSON, the message asking for UTF-8",
    request: post(Buffer.from(PRE_RM, "utf16le")),
    expected: decision("MALFORMED_JSON", {
      decision: "block",
      reason: expect.stringMatching(
        /it holds NUL characters: is it UTF-16\? A hook sends UTF-8 \[MALFORMED_JSON\]$/,
      ),
    }),
  },
  {
    // Compressed, the event's name cannot be read: the answer is the unnamed event's block.
    name: "a gzip-compressed body: not UTF-8, the message asking for it uncompressed",
    request: post(gzipSync(PRE_RM), { headers: [...headers(), ["Content-Encoding", "gzip"]] }),
    expected: decision("BODY_NOT_UTF8", {
      decision: "block",
      reason:
        "hookgate: the request body is not valid UTF-8 (it is gzip-compressed: send it uncompressed) [BODY_NOT_UTF8]",
    }),
  },
  {
    name: "a UTF-8 BOM is accepted",
    request: post(bytes([0xef, 0xbb, 0xbf], PRE_RM)),
    expected: decision(null, ruleDeny("no rm"), { team: "a" }),
  },
  {
    name: "a lone surrogate as a \\u escape is valid JSON and judged",
    request: post(PRE_RM.replace("build", "build\\ud800")),
    expected: decision(null, ruleDeny("no rm"), { team: "a" }),
  },

  {
    // In the audit line the control character is `\u001c`, whose last digit starts the token:
    // masked there as anywhere, the line read `\u001[masked]`, no JSON, and its decision unlogged.
    name: "the caller's own token after a control character: its audit line is still JSON",
    request: post(JSON.stringify(bash(`echo \u001c${TOKEN_A.slice(1)}`))),
    expected: decision(null, "", { team: "a" }),
  },

  // Duplicate keys: JSON.parse keeps the last one, and so does every rule.
  {
    name: "duplicate key: command ls then rm, the last (rm) is judged",
    request: post(PRE_RM.replace('"command":"rm -rf build"', '"command":"ls","command":"rm -rf build"')),
    expected: decision(null, ruleDeny("no rm"), { team: "a" }),
  },
  {
    name: "duplicate key: command rm then ls, the last (ls) is judged",
    request: post(PRE_RM.replace('"command":"rm -rf build"', '"command":"rm -rf build","command":"ls"')),
    expected: decision(null, "", { team: "a" }),
  },
  {
    name: "duplicate key: hook_event_name Stop then PreToolUse, judged as PreToolUse",
    request: post(
      PRE_RM.replace(
        '"hook_event_name":"PreToolUse"',
        '"hook_event_name":"Stop","hook_event_name":"PreToolUse"',
      ),
    ),
    expected: decision(null, ruleDeny("no rm"), { team: "a" }),
  },

  // Headers.
  {
    // Refused by Node before any code of ours runs (no body, no event to name): a bare 431 until
    // 2026-12-07, which Claude Code lets through. The request line names a hook route.
    name: "a 20 KiB header: refused by Node, answered the fail mode's decision for no event named",
    request: post(PRE_RM, { headers: [...headers(), ["X-Padding", "p".repeat(20 * 1024)]] }),
    expected: decision("BODY_UNREADABLE", topBlock("BODY_UNREADABLE"), {
      headers: { connection: "close" },
      refusedByNode: "HPE_HEADER_OVERFLOW",
    }),
  },
  {
    name: "a 20 KiB Authorization header: the same decision",
    request: post(PRE_RM, { headers: headers(`${TOKEN_A}${"x".repeat(20 * 1024)}`) }),
    expected: decision("BODY_UNREADABLE", topBlock("BODY_UNREADABLE"), {
      headers: { connection: "close" },
      refusedByNode: "HPE_HEADER_OVERFLOW",
    }),
  },
  {
    name: "a 12 KiB header, under Node's limit, is judged",
    request: post(PRE_RM, { headers: [...headers(), ["X-Padding", "p".repeat(12 * 1024)]] }),
    expected: decision(null, ruleDeny("no rm"), { team: "a" }),
  },
  {
    name: "two Authorization headers (team a's, then team b's) authenticate nobody, and say so",
    request: post(PRE_RM.replace("rm -rf build", "ls"), {
      headers: [...headers(), ["Authorization", `Bearer ${TOKEN_B}`]],
    }),
    expected: decision("AUTH_MALFORMED", deniedPre("AUTH_MALFORMED")),
  },
  {
    name: "the same Authorization header twice authenticates nobody",
    request: post(PRE_RM.replace("rm -rf build", "ls"), {
      headers: [...headers(), ["Authorization", `Bearer ${TOKEN_A}`]],
    }),
    expected: decision("AUTH_MALFORMED", deniedPre("AUTH_MALFORMED")),
  },
  {
    name: "two Content-Type headers",
    request: post(PRE_RM, { headers: [...headers(), ["Content-Type", "text/plain"]] }),
    expected: decision(
      "UNSUPPORTED_CONTENT_TYPE",
      deniedPre("UNSUPPORTED_CONTENT_TYPE", "application/json, text/plain"),
    ),
  },
  {
    // Node keeps 2,000 headers by default and drops the rest unsaid: the hook was refused for a
    // Content-Type "(none)" and no token, which it had sent.
    name: "2,001 headers before the Content-Type and token: all are read, and the hook judged",
    request: post(PRE_RM, {
      headers: [...Array.from({ length: 2001 }, () => ["X-Pad", "p"] as const), ...headers()],
    }),
    expected: decision(null, ruleDeny("no rm"), { team: "a" }),
  },
  {
    // Node answered a bare 417 of its own, logged nowhere, which Claude Code lets through.
    name: "an Expect other than 100-continue is ignored, and the hook judged",
    request: {
      bytes: Buffer.from(
        `POST /v1/hooks HTTP/1.1\r\nHost: 127.0.0.1\r\nExpect: 200-ok\r\nContent-Type: application/json\r\nAuthorization: Bearer ${TOKEN_A}\r\nContent-Length: ${PRE_RM.length}\r\nConnection: close\r\n\r\n${PRE_RM}`,
      ),
    },
    expected: decision(null, ruleDeny("no rm"), { team: "a" }),
  },
  {
    // Node answered a bare 400 of its own, logged nowhere; HTTP/1.0 without a Host is judged.
    name: "an HTTP/1.1 hook without a Host header is judged, as an HTTP/1.0 one is",
    request: {
      bytes: Buffer.from(
        `POST /v1/hooks HTTP/1.1\r\nContent-Type: application/json\r\nAuthorization: Bearer ${TOKEN_A}\r\nContent-Length: ${PRE_RM.length}\r\nConnection: close\r\n\r\n${PRE_RM}`,
      ),
    },
    expected: decision(null, ruleDeny("no rm"), { team: "a" }),
  },
  {
    name: "a NUL byte in a header: refused by Node, answered the fail mode's decision",
    request: {
      bytes: Buffer.from(
        `POST /v1/hooks HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${TOKEN_A}\0\r\nContent-Length: 0\r\n\r\n`,
      ),
    },
    expected: decision("BODY_UNREADABLE", topBlock("BODY_UNREADABLE"), {
      headers: { connection: "close" },
      refusedByNode: "HPE_",
    }),
  },
  {
    name: "Content-Length and Transfer-Encoding together (request smuggling): refused by Node, the same decision",
    request: {
      bytes: Buffer.from(
        `POST /v1/hooks HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\n0\r\n\r\n`,
      ),
    },
    expected: decision("BODY_UNREADABLE", topBlock("BODY_UNREADABLE"), {
      headers: { connection: "close" },
      refusedByNode: "HPE_",
    }),
  },
  {
    name: "two differing Content-Lengths: refused by Node, the same decision",
    request: {
      bytes: Buffer.from(
        `POST /v1/hooks/claude-code HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n{}`,
      ),
    },
    expected: decision("BODY_UNREADABLE", topBlock("BODY_UNREADABLE"), {
      headers: { connection: "close" },
      refusedByNode: "HPE_UNEXPECTED_CONTENT_LENGTH",
    }),
  },
  {
    name: "bare LF line ends: refused by Node, the same decision",
    request: {
      bytes: Buffer.from(
        `POST /v1/hooks HTTP/1.1\nHost: 127.0.0.1\nContent-Type: application/json\nContent-Length: 2\n\n{}`,
      ),
    },
    expected: decision("BODY_UNREADABLE", topBlock("BODY_UNREADABLE"), {
      headers: { connection: "close" },
      refusedByNode: "HPE_",
    }),
  },
  {
    name: "the same refusal on no hook route: Node's own 400",
    request: {
      bytes: Buffer.from(
        `POST /v1/hook HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n{}`,
      ),
    },
    expected: {
      status: 400,
      headers: { connection: "close" },
      refusedByNode: "HPE_UNEXPECTED_CONTENT_LENGTH",
    },
  },
  {
    // The bytes past the declared length are no request, and Node's parser refuses them while
    // the request before them is being answered: a 400 went out in place of its answer.
    name: "a Content-Length shorter than the body: the declared body is answered, then the connection closes",
    request: {
      bytes: Buffer.from(
        `POST /v1/hooks HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nAuthorization: Bearer ${TOKEN_A}\r\nContent-Length: 10\r\n\r\n${PRE_RM}`,
      ),
    },
    expected: decision("MALFORMED_JSON", topBlock("MALFORMED_JSON"), { headers: { connection: "close" } }),
  },
  {
    // Node's parser refuses the chunk while the hook reads its body: a 400 went out in place of
    // the fail mode's decision, which the audit line gave.
    name: "a malformed chunk in a hook's body: its fail mode's decision, then the connection closes",
    request: {
      bytes: Buffer.from(
        `POST /v1/hooks HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nAuthorization: Bearer ${TOKEN_A}\r\nTransfer-Encoding: chunked\r\n\r\n${(PRE_RM.length - 5).toString(16)}\r\n${PRE_RM.slice(0, -5)}\r\nZZ\r\n`,
      ),
    },
    expected: decision("BODY_UNREADABLE", deniedPre("BODY_UNREADABLE", "Invalid character in chunk size"), {
      headers: { connection: "close" },
    }),
  },
  {
    // The first chunk is refused in the same read as the headers, before the hook begins to read
    // its body: a 400 went out in place of its decision, which the audit line gave.
    name: "a malformed first chunk sent with a hook's headers: its fail mode's decision, then the connection closes",
    request: {
      bytes: Buffer.from(
        `POST /v1/hooks HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nAuthorization: Bearer ${TOKEN_A}\r\nTransfer-Encoding: chunked\r\n\r\nZZ\r\n${PRE_RM}\r\n0\r\n\r\n`,
      ),
    },
    expected: decision("BODY_UNREADABLE", topBlock("BODY_UNREADABLE"), { headers: { connection: "close" } }),
  },
  {
    name: "not HTTP at all: 400 from Node",
    request: { bytes: Buffer.from("hello\r\n\r\n") },
    expected: { status: 400, refusedByNode: "HPE_" },
  },

  // Content types.
  {
    name: "no Content-Type",
    request: post(PRE_RM, { headers: headers(TOKEN_A, null) }),
    expected: decision("UNSUPPORTED_CONTENT_TYPE", deniedPre("UNSUPPORTED_CONTENT_TYPE", "(none)")),
  },
  {
    name: "curl's default form type",
    request: post(PRE_RM, { headers: headers(TOKEN_A, "application/x-www-form-urlencoded") }),
    expected: decision(
      "UNSUPPORTED_CONTENT_TYPE",
      deniedPre("UNSUPPORTED_CONTENT_TYPE", "-H 'Content-Type: application/json'"),
    ),
  },
  {
    name: "text/plain",
    request: post(PRE_RM, { headers: headers(TOKEN_A, "text/plain") }),
    expected: decision("UNSUPPORTED_CONTENT_TYPE", deniedPre("UNSUPPORTED_CONTENT_TYPE")),
  },
  {
    name: "multipart/form-data",
    request: post(PRE_RM, { headers: headers(TOKEN_A, "multipart/form-data; boundary=x") }),
    expected: decision("UNSUPPORTED_CONTENT_TYPE", deniedPre("UNSUPPORTED_CONTENT_TYPE")),
  },
  {
    name: "application/json with a charset is JSON",
    request: post(PRE_RM, { headers: headers(TOKEN_A, "application/json; charset=utf-8") }),
    expected: decision(null, ruleDeny("no rm"), { team: "a" }),
  },
  {
    name: "APPLICATION/JSON in capitals is JSON",
    request: post(PRE_RM, { headers: headers(TOKEN_A, "APPLICATION/JSON") }),
    expected: decision(null, ruleDeny("no rm"), { team: "a" }),
  },
  {
    name: "a +json type is JSON",
    request: post(PRE_RM, { headers: headers(TOKEN_A, "application/vnd.hook+json") }),
    expected: decision(null, ruleDeny("no rm"), { team: "a" }),
  },

  // Authentication (TV-21): every failure is auth.onFailure as a 2xx decision.
  {
    name: "no Authorization header",
    request: post(PRE_RM, { headers: headers(null) }),
    expected: decision("AUTH_MISSING", deniedPre("AUTH_MISSING", "no Authorization header")),
  },
  {
    name: "an empty Bearer (the client's variable is not in allowedEnvVars)",
    request: post(PRE_RM, {
      headers: [
        ["Content-Type", "application/json"],
        ["Authorization", "Bearer "],
      ],
    }),
    expected: decision("AUTH_EMPTY_TOKEN", deniedPre("AUTH_EMPTY_TOKEN", "allowedEnvVars")),
  },
  {
    name: "an empty Bearer on Notification: only the message",
    request: post(JSON.stringify(event("Notification", { message: "m", notification_type: "idle_prompt" })), {
      headers: [
        ["Content-Type", "application/json"],
        ["Authorization", "Bearer "],
      ],
    }),
    expected: decision("AUTH_EMPTY_TOKEN", toldOnly("AUTH_EMPTY_TOKEN", "empty Bearer token")),
  },
  {
    name: "Basic instead of Bearer",
    request: post(PRE_RM, {
      headers: [
        ["Content-Type", "application/json"],
        ["Authorization", `Basic ${Buffer.from(`a:${TOKEN_A}`).toString("base64")}`],
      ],
    }),
    expected: decision("AUTH_MALFORMED", deniedPre("AUTH_MALFORMED", "Bearer <token>")),
  },
  {
    name: "an unknown token",
    request: post(PRE_RM.replace("rm -rf build", "ls"), { headers: headers("guess") }),
    expected: decision("AUTH_UNKNOWN_TOKEN", deniedPre("AUTH_UNKNOWN_TOKEN")),
  },
  {
    name: "team a's token with one byte more",
    request: post(PRE_RM.replace("rm -rf build", "ls"), { headers: headers(`${TOKEN_A}x`) }),
    expected: decision("AUTH_UNKNOWN_TOKEN", deniedPre("AUTH_UNKNOWN_TOKEN")),
  },
  {
    name: "team a's token with one byte less",
    request: post(PRE_RM.replace("rm -rf build", "ls"), { headers: headers(TOKEN_A.slice(0, -1)) }),
    expected: decision("AUTH_UNKNOWN_TOKEN", deniedPre("AUTH_UNKNOWN_TOKEN")),
  },
  {
    name: "a Latin-1 byte in the token",
    request: post(PRE_RM.replace("rm -rf build", "ls"), { headers: headers(`${TOKEN_A}\u00e9`) }),
    expected: decision("AUTH_UNKNOWN_TOKEN", deniedPre("AUTH_UNKNOWN_TOKEN")),
  },
  {
    name: "team a's token: team a's rule asks before a Write",
    request: post(
      JSON.stringify(event("PreToolUse", { tool_name: "Write", tool_input: { file_path: "/p/a" } })),
    ),
    expected: decision(
      null,
      {
        hookSpecificOutput: {
          hookEventName: "PreToolUse",
          permissionDecision: "ask",
          permissionDecisionReason: "team a reviews writes",
        },
      },
      { team: "a" },
    ),
  },
  {
    name: "another team's token: team b never gets team a's rule",
    request: post(
      JSON.stringify(event("PreToolUse", { tool_name: "Write", tool_input: { file_path: "/p/a" } })),
      {
        headers: headers(TOKEN_B),
      },
    ),
    expected: decision(null, "", { team: "b" }),
  },

  // Routes and methods.
  {
    name: "a trailing slash",
    request: post(PRE_RM, { path: "/v1/hooks/" }),
    expected: decision(null, ruleDeny("no rm"), { team: "a" }),
  },
  {
    name: "a query string",
    request: post(PRE_RM, { path: "/v1/hooks?session=1" }),
    expected: decision(null, ruleDeny("no rm"), { team: "a" }),
  },
  {
    name: "an unknown client route",
    request: post(PRE_RM, { path: "/v1/hooks/claude" }),
    expected: decision("UNKNOWN_CLIENT_ROUTE", deniedPre("UNKNOWN_CLIENT_ROUTE", "no client route")),
  },
  {
    name: "a path below a client route",
    request: post(PRE_RM, { path: "/v1/hooks/claude-code/extra" }),
    expected: decision("UNKNOWN_CLIENT_ROUTE", deniedPre("UNKNOWN_CLIENT_ROUTE", "no client route")),
  },
  {
    name: "an unknown route outside /v1/hooks is a 404 (not a hook URL)",
    request: post(PRE_RM, { path: "/v1/hook" }),
    expected: {
      status: 404,
      // deepcode blocks on the 404 and, beside decision "block", shows the body's reason: it says
      // where the hook routes are.
      body: {
        error: { code: "NOT_FOUND", message: UNKNOWN_PATH },
        decision: "block",
        reason: `hookgate: ${UNKNOWN_PATH}`,
      },
    },
  },
  ...(["GET", "PUT", "PATCH", "DELETE", "TRACE", "PROPFIND"] as const).map(
    (method): Row => ({
      name: `${method} on /v1/hooks: 405, Allow: POST (agents only POST)`,
      request: { method, path: "/v1/hooks", headers: headers() },
      expected: {
        status: 405,
        headers: { allow: "POST" },
        body: { error: { code: "METHOD_NOT_ALLOWED", message: `/v1/hooks answers POST, not ${method}` } },
      },
    }),
  ),
  {
    name: "HEAD on /v1/hooks/claude-code: 405 without a body",
    request: { method: "HEAD", path: "/v1/hooks/claude-code" },
    expected: { status: 405, headers: { allow: "POST" }, body: "" },
  },
  {
    name: "OPTIONS on /v1/hooks: 204 with Allow",
    request: { method: "OPTIONS", path: "/v1/hooks" },
    expected: { status: 204, headers: { allow: "POST" }, body: "" },
  },
  {
    name: "POST on /healthz: 405, Allow: GET, HEAD",
    request: post(PRE_RM, { path: "/healthz" }),
    expected: { status: 405, headers: { allow: "GET, HEAD" } },
  },
  {
    name: "a method Node does not know (FOO): 400 from Node's parser",
    request: { bytes: Buffer.from("FOO /v1/hooks HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n") },
    expected: { status: 400, refusedByNode: "HPE_" },
  },
  {
    // An agent whose proxy variable names the gateway: Node closed the connection unanswered.
    name: "CONNECT: 501, hookgate is no proxy",
    request: {
      bytes: Buffer.from("CONNECT api.anthropic.com:443 HTTP/1.1\r\nHost: api.anthropic.com:443\r\n\r\n"),
    },
    expected: {
      status: 501,
      headers: { connection: "close" },
      body: { error: { code: "NOT_A_PROXY", message: expect.stringContaining("hookgate is no proxy") } },
    },
  },
];

// ---------------------------------------------------------------------------------------------
// Running it

let server: ServerProcess;
let policyHash: string;
let sent = 0;
let rssBefore: number | undefined;
const figures: string[] = [];

beforeAll(async () => {
  const dir = tempDir("catalogue");
  writeFileSync(join(dir, "policy.json"), JSON.stringify(POLICY));
  server = await startServerProcess(join(dir, "policy.json"), {
    CATALOGUE_TOKEN_A: TOKEN_A,
    CATALOGUE_TOKEN_B: TOKEN_B,
  });
  const health = await fetch(`${server.url}/healthz`);
  policyHash = ((await health.json()) as { policy: string }).policy;
  rssBefore = await residentKiB(server.child.pid);
});
afterAll(async () => {
  await server?.stop();
});

async function send(row: Row, agent: Agent | undefined): Promise<RawResponse> {
  sent++;
  if ("bytes" in row.request) {
    const answer = await sendBytes(server.url, row.request.bytes);
    return parseSocketAnswer(answer.text);
  }
  return sendRaw(server.url, { ...row.request, ...(agent ? { agent } : {}) });
}

/** Enough of an HTTP/1.1 answer read off a socket: status, headers, a Content-Length body. */
function parseSocketAnswer(text: string): RawResponse {
  const [head = "", rest = ""] = text.split("\r\n\r\n", 2);
  const [statusLine = "", ...lines] = head.split("\r\n");
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(":");
    if (colon > 0) headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  const length = Number(headers["content-length"] ?? rest.length);
  return {
    status: Number(statusLine.split(" ")[1] ?? 0),
    headers,
    body: Buffer.from(rest, "latin1").subarray(0, length).toString("utf8"),
    reusedSocket: false,
  };
}

/** The warnings the server logged for requests Node's parser refused. */
const parserRefusals = () => server.lines.filter((l) => l.msg === "request refused by Node's HTTP parser");

async function assertAnswer(row: Row, res: RawResponse, refusedBefore: number): Promise<void> {
  const want = row.expected;
  if (want.refusedByNode !== undefined) {
    // Nowhere else would the gateway's log say a hook was refused (and so let through).
    await server.waitForLine(() => parserRefusals().length > refusedBefore);
    const line = parserRefusals().at(-1);
    // On a hook route its decision went out in place of Node's status.
    expect(line).toMatchObject(
      want.status === 200
        ? { level: "warn", answered: "its hook's fail mode, then the connection closes" }
        : { level: "warn", status: want.status },
    );
    expect(String(line?.error)).toMatch(new RegExp(`^${want.refusedByNode}`));
  }
  expect(res.status, row.name).toBe(want.status);
  for (const [name, value] of Object.entries(want.headers ?? {})) expect(res.headers[name], name).toBe(value);
  if (want.error !== undefined) {
    // A hook answer: identified, attributable, and never cached.
    expect(res.headers["x-hookgate-error"]).toBe(want.error ?? undefined);
    expect(res.headers["x-hookgate-decision-id"]).toMatch(/^[0-9a-f-]{36}$/);
    expect(res.headers["x-hookgate-policy"]).toBe(policyHash);
    expect(res.headers["cache-control"]).toBe("no-store");
  }
  if (want.body !== undefined) {
    if (want.body === "") {
      expect(res.body).toBe("");
    } else {
      if (want.error !== undefined) expect(res.headers["content-type"]).toBe("application/json");
      expect(JSON.parse(res.body)).toEqual(want.body);
    }
  }
  const decisionId = res.headers["x-hookgate-decision-id"];
  if (want.error !== undefined && decisionId) {
    const audit = await server.waitForLine((l) => l.msg === "decision" && l.decisionId === decisionId);
    expect(audit.error).toBe(want.error ?? undefined);
    if (want.team !== undefined) expect(audit.team).toBe(want.team);
    if (want.error?.startsWith("AUTH_")) {
      expect(audit.team).toBeUndefined();
      expect(audit.rules).toEqual([]);
    }
  }
}

/** The server still answers: /healthz, and a normal decision (on the row's connection if kept alive). */
async function assertHealthy(agent: Agent | undefined): Promise<void> {
  sent += 2;
  const health = await sendRaw(server.url, { method: "GET", path: "/healthz" });
  expect(health.status).toBe(200);
  const normal = await sendRaw(server.url, { ...post(PRE_RM), ...(agent ? { agent } : {}) });
  expect(normal.status).toBe(200);
  expect(JSON.parse(normal.body)).toEqual(ruleDeny("no rm"));
  if (agent) expect(normal.reusedSocket, "the keep-alive connection is reused").toBe(true);
}

describe("the bad-input catalogue against a running hookgate serve", () => {
  it("has a row for every kind of bad input the issue names", () => {
    expect(ROWS.length).toBeGreaterThanOrEqual(90);
    expect(new Set(ROWS.map((r) => r.name)).size).toBe(ROWS.length);
  });

  it("is counted as it is in docs/RELIABILITY.md, its table of rows, and README", () => {
    // A row added here and counted in one place only: README's status table said 124 rows while
    // RELIABILITY.md said 127, and RELIABILITY.md's table of what the rows send summed to 126.
    const root = new URL("../../", import.meta.url);
    const reliability = readFileSync(new URL("docs/RELIABILITY.md", root), "utf8");
    const readme = readFileSync(new URL("README.md", root), "utf8");
    expect(reliability).toContain(`| ${ROWS.length} rows, every agent-facing answer 2xx`);
    expect(reliability).toContain(`one table of ${ROWS.length} rows against one server`);
    const start = reliability.indexOf("\n| rows | input | answer |");
    const table = reliability.slice(start, reliability.indexOf("\n\n", start));
    const counts = [...table.matchAll(/^\| (\d+) \|/gm)].map((m) => Number(m[1]));
    expect(counts.reduce((sum, n) => sum + n, 0)).toBe(ROWS.length);
    expect(readme).toContain(`a ${ROWS.length}-row bad-input catalogue`);
  });

  it.each(ROWS)("$name", async (row) => {
    const agent = row.keepAlive ? new Agent({ keepAlive: true, maxSockets: 1 }) : undefined;
    try {
      const started = performance.now();
      const refusedBefore = parserRefusals().length;
      const res = await send(row, agent);
      if (row.request !== undefined && "body" in row.request && row.request.body === TEN_MB) {
        figures.push(`${row.name}: answered in ${Math.round(performance.now() - started)} ms`);
      }
      await assertAnswer(row, res, refusedBefore);
      await assertHealthy(agent);
    } finally {
      agent?.destroy();
    }
  });

  it("a hook with a malformed first chunk pipelined behind a good one: both answered, then the connection closes", async () => {
    // The parser refuses the second hook's chunk while the first is being answered: that answer
    // was sent with `Connection: close`, and the second, whose audit line gave its decision, was
    // never answered.
    sent += 2;
    const hook = `POST /v1/hooks HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nAuthorization: Bearer ${TOKEN_A}\r\n`;
    const answer = await sendBytes(
      server.url,
      Buffer.from(
        `${hook}Content-Length: ${Buffer.byteLength(PRE_RM)}\r\n\r\n${PRE_RM}` +
          `${hook}Transfer-Encoding: chunked\r\n\r\nZZ\r\n${PRE_RM}\r\n0\r\n\r\n`,
      ),
    );
    const [first, second, ...more] = answer.text.split(/(?=HTTP\/1\.1 \d{3} )/).map(parseSocketAnswer);
    expect(more).toEqual([]);
    expect(first?.status).toBe(200);
    expect(first?.headers.connection).toBe("keep-alive");
    expect(JSON.parse(first?.body ?? "")).toEqual(ruleDeny("no rm"));
    expect(second?.status).toBe(200);
    expect(second?.headers["x-hookgate-error"]).toBe("BODY_UNREADABLE");
    expect(second?.headers.connection).toBe("close");
    expect(JSON.parse(second?.body ?? "")).toEqual(topBlock("BODY_UNREADABLE"));
    await assertHealthy(undefined);
  });

  it("is still healthy at the end: alive, no internal error, nothing on stderr", async () => {
    const rss = await residentKiB(server.child.pid);
    expect(server.child.exitCode).toBeNull();
    await assertHealthy(undefined);
    const problems = server.lines.filter(
      (l) => l.level === "error" || l.error === "INTERNAL_ERROR" || l.msg === "unhandled error",
    );
    expect(problems).toEqual([]);
    // Every line the gateway wrote is JSON (startServerProcess keeps any other as `raw`).
    expect(server.lines.filter((l) => l.raw !== undefined)).toEqual([]);
    expect(server.output().stderr).toBe("");
    const decisions = server.lines.filter((l) => l.msg === "decision").length;
    figures.push(
      `${ROWS.length} rows, ${sent} requests sent, ${decisions} audit lines, RSS ${rssBefore ?? "n/a"} KiB before, ${rss ?? "n/a"} KiB after`,
    );
    console.info(`bad-input catalogue: ${figures.join("; ")}`);
  });
});

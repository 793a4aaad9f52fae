/**
 * Hook request bodies → HookEvent: event lists, dialect detection and per-event validation
 * (reference/clients.md §5). Runs on every request and on Workers, so it imports only
 * `zod/mini` (the classic entry bloats the Worker bundle), builds each schema once, on its first
 * use (`field`), and never throws: a bad body is an EventError value.
 */
import * as z from "zod/mini";
import { closestName } from "./closest-name.js";
import { escaped } from "./escape-controls.js";
import type { Dialect, HookEvent } from "./hook-event.js";
import { isRecord } from "./json-object.js";
import { err, ok, type Result } from "./result.js";
import { shorten } from "./truncate.js";

const CLAUDE_CODE_EVENT_NAMES = Object.freeze([
  "PreToolUse",
  "PostToolUse",
  "PostToolUseFailure",
  "PostToolBatch",
  "Notification",
  "UserPromptSubmit",
  "UserPromptExpansion",
  "SessionStart",
  "SessionEnd",
  "Stop",
  "StopFailure",
  "SubagentStart",
  "SubagentStop",
  "PreCompact",
  "PostCompact",
  "PermissionRequest",
  "PermissionDenied",
  "Setup",
  "TeammateIdle",
  "TaskCreated",
  "TaskCompleted",
  "Elicitation",
  "ElicitationResult",
  "ConfigChange",
  "WorktreeCreate",
  "WorktreeRemove",
  "InstructionsLoaded",
  "CwdChanged",
  "FileChanged",
  "MessageDisplay",
  "DirectoryAdded",
  "PreModelSwitch",
  "PostModelSwitch",
  "PreSkillShellCommand",
] as const);
type ClaudeCodeEventName = (typeof CLAUDE_CODE_EVENT_NAMES)[number];

const DEEPAGENTS_V2_EVENT_NAMES = Object.freeze([
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
] as const satisfies readonly ClaudeCodeEventName[]);

const DEEPAGENTS_LEGACY_EVENT_NAMES = Object.freeze([
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
] as const);
type LegacyEventName = (typeof DEEPAGENTS_LEGACY_EVENT_NAMES)[number];

/** The 34 events of Claude Code 2.1.332 (clients.md §5.2); deepcode uses the same names. */
export const CLAUDE_CODE_EVENTS: readonly string[] = CLAUDE_CODE_EVENT_NAMES;
/** The 12 events deepagents v2 (`dcode`) sends to a command adapter (clients.md §5.4). */
export const DEEPAGENTS_V2_EVENTS: readonly string[] = DEEPAGENTS_V2_EVENT_NAMES;
/** The dotted events of deepagents' legacy hooks (clients.md §5.5). */
export const DEEPAGENTS_LEGACY_EVENTS: readonly string[] = DEEPAGENTS_LEGACY_EVENT_NAMES;
/** Events whose body carries `tool_name`. */
export const TOOL_EVENTS: ReadonlySet<string> = new Set<ClaudeCodeEventName>([
  "PreToolUse",
  "PostToolUse",
  "PostToolUseFailure",
  "PermissionRequest",
  "PermissionDenied",
]);

const ALL_EVENTS: ReadonlySet<string> = new Set([
  ...CLAUDE_CODE_EVENT_NAMES,
  ...DEEPAGENTS_V2_EVENT_NAMES,
  ...DEEPAGENTS_LEGACY_EVENT_NAMES,
]);

export function isKnownEvent(name: string): boolean {
  return ALL_EVENTS.has(name);
}

/**
 * The known event a misspelt name most likely means (at most two edits away, case aside), if
 * any: among every client's events, or among `among` (one client's).
 */
export function closestEvent(name: string, among: Iterable<string> = ALL_EVENTS): string | undefined {
  return closestName(name, among);
}

export interface EventError {
  code: "EVENT_NOT_OBJECT" | "EVENT_NAME_MISSING" | "EVENT_INVALID";
  message: string;
  eventName?: string;
  /** Dotted path of the offending field (`tool_name`, `effort.level`, `tool_calls.0.tool_name`). */
  path?: string;
}

/**
 * A body field: its zod schema, which words what is wrong, and a plain test that accepts exactly
 * what the schema accepts. Every request runs the tests; zod runs only on a body they refuse, to
 * say why (its object parser costs more than the rest of parsing and builds a copy of the body).
 * test/property/events.test.ts checks that the two agree on any input.
 */
interface Field {
  readonly schema: z.ZodMiniType;
  readonly accepts: (value: unknown) => boolean;
  readonly shape: FieldShape;
}

/** A JSON type a field may have; null is not listed, since every field may be null (read as absent). */
export type JsonType = "string" | "number" | "boolean" | "object" | "array";

/**
 * What a field accepts, as `check` reads it (policy-lint.ts): its JSON types, an object's
 * declared fields (any other key may be there, of any type) and an array's items (undefined:
 * any item).
 */
export interface FieldShape {
  readonly types: readonly JsonType[];
  readonly fields?: Readonly<Record<string, FieldShape>>;
  readonly item?: FieldShape;
}

export interface EventSchema {
  readonly schema: z.ZodMiniType<Record<string, unknown>>;
  readonly accepts: (body: Readonly<Record<string, unknown>>) => boolean;
  readonly shape: FieldShape;
}

type Fields = Readonly<Record<string, Field>>;

/**
 * A field whose zod schema is built when it is first read, once, not as the module loads: only a
 * refused body reads one, and building every event's schemas at load was part of every cold
 * start (bench/HISTORY.md, "The Lambda handler's cold start: the events' schemas and auth on
 * first use").
 */
function field<T extends z.ZodMiniType>(
  build: () => T,
  accepts: (value: unknown) => boolean,
  shape: FieldShape,
): Field & { readonly schema: T } {
  let schema: T | undefined;
  return {
    get schema() {
      schema ??= build();
      return schema;
    },
    accepts,
    shape,
  };
}

/** A loose object (unknown keys kept) with these fields. */
function looseObject(fields: Fields, error?: string): Field & EventSchema {
  const shapes: Record<string, FieldShape> = {};
  for (const [key, f] of Object.entries(fields)) shapes[key] = f.shape;
  const entries = Object.entries(fields).map(([key, f]) => [key, f.accepts] as const);
  return field(
    () => {
      const shape: Record<string, z.ZodMiniType> = {};
      for (const [key, f] of Object.entries(fields)) shape[key] = f.schema;
      return error === undefined ? z.looseObject(shape) : z.looseObject(shape, { error });
    },
    (value) => {
      if (!isRecord(value)) return false;
      for (const [key, accepts] of entries) if (!accepts(value[key])) return false;
      return true;
    },
    { types: ["object"], fields: shapes },
  );
}

/**
 * A field a body may leave out, or send as `null`: a client's serializer writes null for a value
 * it does not have (Claude Code 2.1.332 sends `custom_instructions: null`, documented as a
 * string), and refusing that would answer every such event with the fail mode, skipping every
 * rule (clients.md §10.8). The event reads null as absent.
 */
const optional = (f: Field): Field =>
  field(
    () => z.optional(z.nullable(f.schema)),
    (value) => value === undefined || value === null || f.accepts(value),
    f.shape,
  );

const isString = (value: unknown): value is string => typeof value === "string";

function arrayOf(item: Field, error: string): Field {
  return field(
    () => z.array(item.schema, { error }),
    (value) => {
      if (!Array.isArray(value)) return false;
      // An index loop, as zod reads them: a hole is an undefined item.
      for (let i = 0; i < value.length; i++) if (!item.accepts(value[i])) return false;
      return true;
    },
    { types: ["array"], ...(item.shape.types.length < ANY.types.length && { item: item.shape }) },
  );
}

// Field builders. Every field is optional and enum-like fields are plain strings: clients add
// values (deepcode sends SessionEnd `reason:"exit"`, Notification `notification_type:"permission"`).
// The error texts complete "<path> ..." and never echo the input, which may hold secrets.
/** Any JSON value: an item of a list whose items no source describes. */
const ANY: FieldShape = { types: ["string", "number", "boolean", "object", "array"] };
/** A field that takes any JSON value. */
const anything = field(
  () => z.unknown(),
  () => true,
  ANY,
);
const string = field(() => z.string({ error: "must be a string" }), isString, { types: ["string"] });
const str = optional(string);
const num = optional(
  field(
    () => z.number({ error: "must be a number" }),
    // zod's number refuses NaN and the infinities, which JSON cannot send anyway.
    (value) => typeof value === "number" && Number.isFinite(value),
    { types: ["number"] },
  ),
);
const bool = optional(
  field(
    () => z.boolean({ error: "must be a boolean" }),
    (value) => typeof value === "boolean",
    { types: ["boolean"] },
  ),
);
const object = field(
  () => z.custom<Record<string, unknown>>(isRecord, { error: "must be an object" }),
  isRecord,
  { types: ["object"] },
);
const obj = optional(object);
/**
 * A tool call's input, null read as absent as any field's: a PreToolUse without one is judged, its
 * deny-style `if` rules matching to fail safe (permission-rule.ts `ToolCall.inputMissing`).
 */
const toolInput = obj;
/**
 * A batched call's input (PostToolBatch `tool_calls[].tool_input`), any JSON value: deepcode sends
 * the model's arguments as `JSON.parse` read them, whatever they are (`[]`, `5`, `true`), or as
 * the string they came as when they are not JSON (src/loop.ts `safeParseArgs`), a call its loop
 * then refuses; refusing the batch for it would skip every rule on the event.
 */
const batchedToolInput = optional(anything);
/**
 * MessageDisplay's `turn_id`: Claude Code sends a string, deepcode its turn counter as a number
 * (src/tui/useChat.ts: `turn_id: currentTurnId`). Refusing the number answered every deepcode
 * MessageDisplay with a request error, every rule on the event skipped.
 */
const turnId = optional(
  field(
    () => z.union([string.schema, z.number()], { error: "must be a string or a number" }),
    (value) => isString(value) || (typeof value === "number" && Number.isFinite(value)),
    { types: ["string", "number"] },
  ),
);
const list = optional(arrayOf(anything, "must be an array"));
const strList = optional(arrayOf(string, "must be an array"));
const requiredToolName = field(
  () =>
    z
      .string({ error: (issue) => (issue.input === undefined ? "is required" : "must be a string") })
      .check(z.minLength(1, { error: "must not be empty" })),
  (value) => isString(value) && value.length >= 1,
  { types: ["string"] },
);

/** Claude Code common fields (§5.1); deepcode and deepagents v2 send a subset of them. */
const COMMON_FIELDS = {
  session_id: str,
  transcript_path: str,
  cwd: str,
  scratchpad_dir: str,
  prompt_id: str,
  permission_mode: str,
  agent_id: str,
  agent_type: str,
  effort: optional(looseObject({ level: str }, "must be an object")),
};

/** `tool_desc` is deepcode's; `tool_input` is optional because deepcode's PermissionRequest omits it. */
const TOOL_FIELDS = { tool_name: requiredToolName, tool_input: toolInput, tool_use_id: str, tool_desc: str };

const STOP_FIELDS = {
  stop_hook_active: bool,
  last_assistant_message: str,
  background_tasks: list,
  session_crons: list,
};

const TASK_FIELDS = {
  task_id: str,
  task_subject: str,
  task_description: str,
  teammate_name: str,
  team_name: str,
};

function ccEvent(fields: Fields = {}): EventSchema {
  return looseObject({ ...COMMON_FIELDS, ...fields });
}

// Per-event fields of §5.2 plus the deepcode variants of §5.3. A field whose type neither source
// states (command_args, error_details, content, ...) is left to the catch-all.
const CLAUDE_CODE_SCHEMAS: Readonly<Record<ClaudeCodeEventName, EventSchema>> = {
  PreToolUse: ccEvent(TOOL_FIELDS),
  PostToolUse: ccEvent({ ...TOOL_FIELDS, duration_ms: num }),
  PostToolUseFailure: ccEvent({ ...TOOL_FIELDS, error: str, is_interrupt: bool, duration_ms: num }),
  PostToolBatch: ccEvent({
    tool_calls: optional(
      arrayOf(
        looseObject({ tool_name: str, tool_input: batchedToolInput, tool_use_id: str }, "must be an object"),
        "must be an array",
      ),
    ),
  }),
  Notification: ccEvent({ message: str, title: str, notification_type: str }),
  UserPromptSubmit: ccEvent({ prompt: str, session_title: str }),
  UserPromptExpansion: ccEvent({ expansion_type: str, command_name: str, command_source: str, prompt: str }),
  SessionStart: ccEvent({ source: str, model: str, session_title: str }),
  SessionEnd: ccEvent({ reason: str }),
  Stop: ccEvent(STOP_FIELDS),
  StopFailure: ccEvent({ error: str, last_assistant_message: str }),
  SubagentStart: ccEvent(),
  SubagentStop: ccEvent({ ...STOP_FIELDS, agent_transcript_path: str }),
  // Claude Code 2.1.332 sends `custom_instructions: null`; deepcode sends `messages_count` instead.
  PreCompact: ccEvent({ trigger: str, custom_instructions: str, messages_count: num }),
  // deepcode sends `summary` (and counts) where Claude Code sends `compact_summary`.
  PostCompact: ccEvent({
    trigger: str,
    compact_summary: str,
    summary: str,
    truncated: bool,
    messages_before: num,
    messages_after: num,
  }),
  PermissionRequest: ccEvent({ ...TOOL_FIELDS, permission_suggestions: list }),
  PermissionDenied: ccEvent({ ...TOOL_FIELDS, reason: str }),
  Setup: ccEvent({ trigger: str }),
  TeammateIdle: ccEvent({ teammate_name: str, team_name: str }),
  TaskCreated: ccEvent(TASK_FIELDS),
  TaskCompleted: ccEvent(TASK_FIELDS),
  Elicitation: ccEvent({
    mcp_server_name: str,
    message: str,
    mode: str,
    url: str,
    elicitation_id: str,
    requested_schema: obj,
  }),
  ElicitationResult: ccEvent({ mcp_server_name: str, elicitation_id: str, mode: str, action: str }),
  ConfigChange: ccEvent({ source: str, file_path: str }),
  WorktreeCreate: ccEvent({ name: str }),
  WorktreeRemove: ccEvent({ worktree_path: str }),
  InstructionsLoaded: ccEvent({
    file_path: str,
    memory_type: str,
    load_reason: str,
    trigger_file_path: str,
    parent_file_path: str,
  }),
  CwdChanged: ccEvent({ old_cwd: str, new_cwd: str }),
  FileChanged: ccEvent({ file_path: str, event: str }),
  MessageDisplay: ccEvent({ turn_id: turnId, message_id: str, index: num, final: bool, delta: str }),
  DirectoryAdded: ccEvent(),
  PreModelSwitch: ccEvent(),
  PostModelSwitch: ccEvent(),
  PreSkillShellCommand: ccEvent(),
};

const LEGACY_COMMON_FIELDS = { thread_id: str };

function legacyEvent(fields: Fields = {}): EventSchema {
  return looseObject({ ...LEGACY_COMMON_FIELDS, ...fields });
}

const LEGACY_TOOL_FIELDS = { tool_name: requiredToolName, tool_id: str, tool_args: toolInput };

/** Payloads of §5.5; `json.dumps` spacing and `\uXXXX` escapes are JSON.parse's concern, not ours. */
const LEGACY_FIELDS: Readonly<Record<LegacyEventName, Fields>> = {
  "tool.use": LEGACY_TOOL_FIELDS,
  "tool.result": { ...LEGACY_TOOL_FIELDS, tool_status: str, tool_output: str },
  "tool.error": { tool_names: strList },
  "permission.request": { tool_names: strList },
  "session.start": {},
  "user.prompt": {},
  "task.complete": {},
  "session.end": {},
  "input.required": {},
  "context.offload": {},
  "context.compact": {},
  "user.name.set": { name: str, assistant_id: str },
};

/**
 * The top-level keys a deepagents legacy event's body carries at most (`event`, `thread_id` and
 * its payload's, clients.md §5.5), or undefined for a name that is no legacy event: a `where`
 * on any other key never holds there (`check` says so).
 */
export function legacyEventKeys(name: string): readonly string[] | undefined {
  if (!Object.hasOwn(LEGACY_FIELDS, name)) return undefined;
  return [
    "event",
    ...Object.keys(LEGACY_COMMON_FIELDS),
    ...Object.keys(LEGACY_FIELDS[name as LegacyEventName]),
  ];
}

// Maps, not object lookups, so that names like `constructor` or `__proto__` are simply unknown.
const claudeCodeSchemas: ReadonlyMap<string, EventSchema> = new Map(
  CLAUDE_CODE_EVENT_NAMES.map((name) => [name, CLAUDE_CODE_SCHEMAS[name]]),
);
const deepagentsSchemas: ReadonlyMap<string, EventSchema> = new Map(
  DEEPAGENTS_V2_EVENT_NAMES.map((name) => [name, CLAUDE_CODE_SCHEMAS[name]]),
);
const legacySchemas: ReadonlyMap<string, EventSchema> = new Map(
  DEEPAGENTS_LEGACY_EVENT_NAMES.map((name) => [name, legacyEvent(LEGACY_FIELDS[name])]),
);

interface DialectSchemas {
  readonly known: ReadonlyMap<string, EventSchema>;
  /** For an event name the dialect does not define: the common fields only. */
  readonly generic: EventSchema;
}

const genericClaudeCode = ccEvent();
const SCHEMAS_BY_DIALECT: Readonly<Record<Dialect, DialectSchemas>> = {
  "claude-code": { known: claudeCodeSchemas, generic: genericClaudeCode },
  deepcode: { known: claudeCodeSchemas, generic: genericClaudeCode },
  deepagents: { known: deepagentsSchemas, generic: genericClaudeCode },
  "deepagents-legacy": { known: legacySchemas, generic: legacyEvent() },
};

/**
 * The fields a body of this event may carry and their types, for an event some client defines
 * (Claude Code's, which deepcode and deepagents v2 share, or a deepagents legacy one), else
 * undefined: an unknown event carries any field.
 */
export function eventShape(name: string): FieldShape | undefined {
  return (claudeCodeSchemas.get(name) ?? legacySchemas.get(name))?.shape;
}

/** The schema a body of this event is checked against in this dialect: its own, else the generic one. */
export function eventSchemaFor(name: string, dialect: Dialect): EventSchema {
  const schemas = SCHEMAS_BY_DIALECT[dialect];
  return schemas.known.get(name) ?? schemas.generic;
}

/**
 * Which wire format a body speaks when the route does not say. Never `deepagents`: its v2
 * bodies are Claude Code-shaped, so only the route can tell them apart.
 */
export function detectDialect(body: Readonly<Record<string, unknown>>): Dialect {
  // Claude Code's FileChanged carries `event: "change"` next to `hook_event_name`.
  if (typeof body.event === "string" && !Object.hasOwn(body, "hook_event_name")) return "deepagents-legacy";
  if (Object.hasOwn(body, "tool_desc") || !Object.hasOwn(body, "transcript_path")) return "deepcode";
  return "claude-code";
}

function describeNonObject(body: unknown): string {
  if (body === null || body === undefined) return String(body);
  if (Array.isArray(body)) return "an array";
  return `a ${typeof body}`;
}

function firstIssueError(eventName: string, issues: readonly z.core.$ZodIssue[]): EventError {
  const issue = issues[0];
  if (issue === undefined)
    return { code: "EVENT_INVALID", message: `${eventName} body is invalid`, eventName };
  const path = issue.path.map(String).join(".");
  return { code: "EVENT_INVALID", message: `${path} ${issue.message}`, eventName, path };
}

/**
 * White space and the characters a text shows nothing of (a BOM, a zero-width space): what a
 * paste from a web page or a document brings along around a name. Unicode's
 * Default_Ignorable_Code_Point of the BMP written out, as a class without the u flag (which
 * \p{Default_Ignorable_Code_Point} needs): with it, the first scans of a megabyte of zero-width
 * spaces, before the engine compiled the pattern, took several times as long in Node 20 and in
 * workerd (500 ms, not 50). test/unit/events.test.ts holds the list to the property.
 */
const PADDING_CLASS =
  "\\s\\u00ad\\u034f\\u061c\\u115f-\\u1160\\u17b4-\\u17b5\\u180b-\\u180f\\u200b-\\u200f\\u202a-\\u202e\\u2060-\\u206f\\u3164\\ufe00-\\ufe0f\\ufeff\\uffa0\\ufff0-\\ufff8";
const PADDING = new RegExp(`^[${PADDING_CLASS}]$`);
const LEADING_PADDING = new RegExp(`^[${PADDING_CLASS}]*`);
const ALL_PADDING = new RegExp(`^[${PADDING_CLASS}]*$`);
/** The longest name of a known event: a padded one's name is no longer. */
const LONGEST_EVENT_NAME = Math.max(...[...ALL_EVENTS].map((name) => name.length));

/**
 * `name` without the padding around it, where that leaves a name no longer than a known event's;
 * else a longer text, which names none. Each step reads the text once: a regex anchored at its
 * end, or a test of each character, took 30 ms on a megabyte of padding.
 */
function unpadded(name: string): string {
  const rest = name.slice(LEADING_PADDING.exec(name)?.[0].length ?? 0);
  if (!ALL_PADDING.test(rest.slice(LONGEST_EVENT_NAME))) return rest;
  let end = Math.min(rest.length, LONGEST_EVENT_NAME);
  while (end > 0 && PADDING.test(rest.charAt(end - 1))) end -= 1;
  return rest.slice(0, end);
}

/**
 * A padded name quoted as JSON, with each padding character JSON leaves raw written `\uXXXX`
 * (a no-break space reads as a space, a BOM or a zero-width space as nothing, and the message
 * then said "PreToolUse" is no event, did you mean PreToolUse). Cut before it is escaped, as any
 * length of padding may come, and after, to 100 characters.
 */
function quotedPadded(name: string): string {
  const json = JSON.stringify(shorten(name, 100));
  return shorten(json.replace(/[^\S ]|\p{Default_Ignorable_Code_Point}/gu, escaped), 100);
}

type MutableHookEvent = { -readonly [K in keyof HookEvent]: HookEvent[K] };

function parseObject(body: Record<string, unknown>, dialect: Dialect): Result<HookEvent, EventError> {
  const legacy = dialect === "deepagents-legacy";
  // The dialect's own key wins; the other one is used only when the dialect's key is absent.
  const primaryKey = legacy ? "event" : "hook_event_name";
  const otherKey = legacy ? "hook_event_name" : "event";
  const nameKey = !Object.hasOwn(body, primaryKey) && Object.hasOwn(body, otherKey) ? otherKey : primaryKey;
  const name = Object.hasOwn(body, nameKey) ? body[nameKey] : undefined;
  if (name === undefined) {
    return err({ code: "EVENT_NAME_MISSING", message: `hook body has no ${primaryKey}` });
  }
  if (typeof name !== "string" || name === "") {
    return err({
      code: "EVENT_NAME_MISSING",
      message: `${nameKey} must be a non-empty string`,
      path: nameKey,
    });
  }

  const schemas = SCHEMAS_BY_DIALECT[dialect];
  const chosen = schemas.known.get(name) ?? schemas.generic;
  // An unknown name is judged (a client's new event), but not one of ours miscased or in white
  // space: no client adds `pretooluse` or `PreToolUse ` beside PreToolUse (a hand-written payload
  // does), and judging it against no rules would hide the typo.
  if (chosen === schemas.generic) {
    const trimmed = unpadded(name);
    const lower = trimmed.toLowerCase();
    for (const meant of schemas.known.keys())
      if (meant.toLowerCase() === lower)
        return err({
          code: "EVENT_INVALID",
          message:
            trimmed === name
              ? `${nameKey} "${name}" is no event; names are case-sensitive: did you mean ${meant}?`
              : `${nameKey} ${quotedPadded(name)} is no event; a name has no white space around it: did you mean ${meant}?`,
          eventName: name,
          path: nameKey,
        });
  }
  if (!chosen.accepts(body)) {
    const checked = chosen.schema.safeParse(body);
    if (!checked.success) return err(firstIssueError(name, checked.error.issues));
  }

  // The payload stays the caller's object: zod's output is a copy that may differ in key order.
  const known = chosen !== schemas.generic;
  const event: MutableHookEvent = { name, dialect, known, payload: body };
  const sessionId = legacy ? body.thread_id : body.session_id;
  if (typeof sessionId === "string") event.sessionId = sessionId;
  if (typeof body.transcript_path === "string") event.transcriptPath = body.transcript_path;
  if (typeof body.cwd === "string") event.cwd = body.cwd;
  if (typeof body.tool_name === "string" && body.tool_name !== "") event.toolName = body.tool_name;
  const toolInput = legacy ? body.tool_args : body.tool_input;
  if (isRecord(toolInput)) event.toolInput = toolInput;
  return ok(event);
}

/**
 * Validates an already JSON.parse'd hook body and names its event. `dialect` is the route's
 * dialect; without it the body decides (`detectDialect`). Unknown event names are accepted with
 * `known: false`, since clients add events faster than we do.
 */
export function parseHookEvent(body: unknown, dialect?: Dialect): Result<HookEvent, EventError> {
  if (!isRecord(body)) {
    return err({
      code: "EVENT_NOT_OBJECT",
      message: `hook body must be a JSON object, got ${describeNonObject(body)}`,
    });
  }
  try {
    // A dialect outside the union can only come from untyped code; the body decides then.
    const supported = dialect !== undefined && Object.hasOwn(SCHEMAS_BY_DIALECT, dialect);
    return parseObject(body, supported ? dialect : detectDialect(body));
  } catch {
    // Only reachable for bodies JSON.parse cannot produce (throwing getters, proxies).
    return err({ code: "EVENT_INVALID", message: "hook body could not be read" });
  }
}

const SNIFF_LIMIT = 64 * 1024;
// Linear: matching starts only at a quote and each attempt stops at the next quote or non-name
// character. One pattern for both keys, so the first occurrence wins: `event` comes first in a
// legacy body, and Claude Code's FileChanged `event` field comes after `hook_event_name`.
const SNIFF_PATTERN = /"(?:hook_event_name"\s*:\s*"([A-Za-z]+)|event"\s*:\s*"([a-z.]+))"/;

/**
 * The event name of a body that cannot be judged (too large, not JSON, no object), read from its
 * first 64 KiB; only known names. A JSON string holding the event (encoded twice) is read with
 * its quotes unescaped, as every path reads it: the working gateway and a broken one alike.
 */
export function sniffEventName(text: string): string | undefined {
  if (typeof text !== "string") return undefined;
  const start = text.length > SNIFF_LIMIT ? text.slice(0, SNIFF_LIMIT) : text;
  // A body that is a JSON string (an event encoded twice) has its quotes escaped once.
  const twice = start.trimStart().startsWith('"');
  const match = SNIFF_PATTERN.exec(twice ? start.replaceAll('\\"', '"') : start);
  const name = match?.[1] ?? match?.[2];
  return name !== undefined && ALL_EVENTS.has(name) ? name : undefined;
}

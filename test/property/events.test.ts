/**
 * The event normalizer on any input: it never throws, every answer is a well-formed result, and
 * well-typed bodies of every event parse while a mistyped field is named by its path.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  CLAUDE_CODE_EVENTS,
  DEEPAGENTS_LEGACY_EVENTS,
  detectDialect,
  eventSchemaFor,
  isKnownEvent,
  parseHookEvent,
  sniffEventName,
  TOOL_EVENTS,
} from "../../src/core/events.js";
import { DIALECTS, type Dialect } from "../../src/core/hook-event.js";

const ERROR_CODES = ["EVENT_NOT_OBJECT", "EVENT_NAME_MISSING", "EVENT_INVALID"];

const dialect = fc.option(fc.constantFrom(...DIALECTS), { nil: undefined });

/** What JSON.parse can hand the normalizer: `__proto__` and friends arrive as own keys. */
const parsedJson = fc.json({ maxDepth: 4 }).map((t) => JSON.parse(t) as unknown);

const eventName = fc.oneof(
  fc.constantFrom(...CLAUDE_CODE_EVENTS),
  fc.constantFrom(...DEEPAGENTS_LEGACY_EVENTS),
  fc.constantFrom("__proto__", "constructor", "toString", ""),
  fc.string(),
);

/** Bodies with an event name in either key, so parsing goes past the name check into the schemas. */
const namedBody = fc
  .tuple(
    fc.constantFrom("hook_event_name", "event"),
    eventName,
    fc.dictionary(
      fc.oneof(
        fc.constantFrom("tool_name", "tool_input", "tool_args", "session_id", "thread_id", "cwd", "effort"),
        fc.constantFrom("transcript_path", "tool_desc", "tool_calls", "tool_names", "prompt", "event"),
        fc.string(),
      ),
      fc.jsonValue({ maxDepth: 3 }),
    ),
  )
  .map(([key, name, rest]) => JSON.parse(JSON.stringify({ ...rest, [key]: name })) as unknown);

function expectWellFormed(body: unknown, dia: Dialect | undefined): void {
  const result = parseHookEvent(body, dia);
  if (result.ok) {
    const event = result.value;
    expect(typeof event.name).toBe("string");
    expect(event.name).not.toBe("");
    expect(DIALECTS).toContain(event.dialect);
    if (dia !== undefined) expect(event.dialect).toBe(dia);
    expect(event.payload).toBe(body);
    if (event.known) expect(isKnownEvent(event.name)).toBe(true);
    if (event.toolName !== undefined) expect(typeof event.toolName).toBe("string");
    if (event.toolInput !== undefined) expect(typeof event.toolInput).toBe("object");
  } else {
    expect(ERROR_CODES).toContain(result.error.code);
    expect(typeof result.error.message).toBe("string");
  }
}

describe("parseHookEvent on any input", () => {
  it("never throws on any JSON value, for every route dialect", () => {
    fc.assert(
      fc.property(parsedJson, dialect, (body, dia) => expectWellFormed(body, dia)),
      { numRuns: 1000 },
    );
  });

  it("never throws on bodies with an event name and arbitrary fields", () => {
    fc.assert(
      fc.property(namedBody, dialect, (body, dia) => expectWellFormed(body, dia)),
      { numRuns: 2000 },
    );
  });

  it("never throws on values JSON cannot express (undefined, -0, sparse arrays, null prototypes)", () => {
    fc.assert(
      fc.property(fc.anything({ withNullPrototype: true, withSparseArray: true }), dialect, (body, dia) =>
        expectWellFormed(body, dia),
      ),
      { numRuns: 500 },
    );
  });
});

// ---------------------------------------------------------------------------------------------
// Well-typed and mistyped bodies, from the field types of clients.md §5.1–§5.3
// ---------------------------------------------------------------------------------------------

type FieldType = "string" | "object";

/** Common fields every Claude Code-shaped body may carry, with the type clients.md gives them. */
const COMMON: Readonly<Record<string, FieldType>> = {
  session_id: "string",
  transcript_path: "string",
  cwd: "string",
  permission_mode: "string",
  agent_id: "string",
  agent_type: "string",
  prompt_id: "string",
};

const TOOL: Readonly<Record<string, FieldType>> = {
  tool_input: "object",
  tool_use_id: "string",
};

const typedValue = (type: FieldType) =>
  type === "string" ? fc.string() : fc.dictionary(fc.string(), fc.jsonValue({ maxDepth: 2 }));

/** A JSON value whose type is not `type`. */
const wrongValue = (type: FieldType) =>
  fc.oneof(
    fc.integer(),
    fc.boolean(),
    fc.array(fc.string(), { maxLength: 2 }),
    type === "string" ? fc.dictionary(fc.string(), fc.string(), { maxKeys: 2 }) : fc.string(),
  );

/** A subset of the fields, each with a value of its type, plus extra keys no schema knows. */
const typedFields = (fields: Readonly<Record<string, FieldType>>) =>
  fc.record(
    Object.fromEntries(Object.entries(fields).map(([k, t]) => [k, typedValue(t)])) as Record<
      string,
      fc.Arbitrary<unknown>
    >,
    { requiredKeys: [] },
  );

const extras = fc.dictionary(
  fc.string().map((k) => `x_${k}`),
  fc.jsonValue({ maxDepth: 2 }),
  { maxKeys: 3 },
);

const toolEvent = fc.constantFrom(...TOOL_EVENTS);
const ccDialect = fc.constantFrom<Dialect>("claude-code", "deepcode");

/** Every field name an event schema declares, so that generated bodies exercise each field's test. */
const SCHEMA_FIELDS = [
  ..."session_id transcript_path cwd scratchpad_dir prompt_id permission_mode agent_id agent_type effort".split(
    " ",
  ),
  ..."tool_name tool_input tool_use_id tool_desc duration_ms error is_interrupt tool_calls message title".split(
    " ",
  ),
  ..."notification_type prompt session_title expansion_type command_name command_source source model".split(
    " ",
  ),
  ..."reason stop_hook_active last_assistant_message background_tasks session_crons agent_transcript_path".split(
    " ",
  ),
  ..."trigger custom_instructions messages_count compact_summary summary truncated messages_before".split(
    " ",
  ),
  ..."messages_after permission_suggestions teammate_name team_name task_id task_subject task_description".split(
    " ",
  ),
  ..."mcp_server_name mode url elicitation_id requested_schema action file_path name worktree_path".split(
    " ",
  ),
  ..."memory_type load_reason trigger_file_path parent_file_path old_cwd new_cwd event turn_id message_id".split(
    " ",
  ),
  ..."index final delta thread_id tool_id tool_args tool_status tool_output tool_names assistant_id".split(
    " ",
  ),
];

/** Values of every type a field test tells apart, JSON's and a few it cannot send. */
const fieldValue: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
  value: fc.oneof(
    fc.string({ maxLength: 3 }),
    fc.constantFrom("", null, undefined, true, 0, -0, Number.NaN, Number.POSITIVE_INFINITY, 1.5),
    fc.array(fc.oneof(fc.string({ maxLength: 2 }), fc.integer()), { maxLength: 3 }),
    // A sparse array: zod reads a hole as an undefined item.
    fc.constant(Object.assign(["a"], { 2: "b" })),
    fc.record({ level: tie("leaf") }, { requiredKeys: [] }),
    fc.array(
      fc.record(
        { tool_name: tie("leaf"), tool_input: tie("leaf"), tool_use_id: tie("leaf") },
        { requiredKeys: [] },
      ),
      { maxLength: 2 },
    ),
    fc.dictionary(fc.string({ maxLength: 3 }), tie("leaf"), { maxKeys: 2 }),
  ),
  leaf: fc.oneof(
    fc.string({ maxLength: 3 }),
    fc.constantFrom("", null, undefined, 1, false, Number.NaN),
    fc.constant({}),
    fc.constant([]),
    fc.constant(["x"]),
  ),
})).value;

/** One of each kind of value a field test must tell apart, nested shapes included. */
const TRICKY_VALUES: readonly unknown[] = [
  undefined,
  null,
  "",
  "x",
  0,
  -0,
  1.5,
  Number.NaN,
  Number.POSITIVE_INFINITY,
  true,
  {},
  { level: "high" },
  { level: 3 },
  [],
  ["a", "b"],
  ["a", 1],
  Object.assign(["a"], { 2: "b" }),
  [{ tool_name: "Bash", tool_input: {}, tool_use_id: "t" }],
  [{ tool_name: 1 }],
  [{ tool_input: [] }],
  [null],
];

describe("the field tests beside the zod schemas", () => {
  it("agree with zod on every declared field and kind of value, one field at a time", () => {
    const names = [...CLAUDE_CODE_EVENTS, ...DEEPAGENTS_LEGACY_EVENTS, "SomethingNew"];
    for (const dia of DIALECTS)
      for (const name of names) {
        const schema = eventSchemaFor(name, dia);
        for (const field of SCHEMA_FIELDS)
          for (const value of TRICKY_VALUES) {
            // tool_name is required on tool events: give it a valid one unless it is the field tried.
            const body = field === "tool_name" ? { tool_name: value } : { tool_name: "Bash", [field]: value };
            if (schema.accepts(body) !== schema.schema.safeParse(body).success)
              expect.fail(`${dia} ${name}: ${field} = ${String(value)} judged differently`);
          }
      }
  });

  it("accept exactly the bodies zod accepts, for every event of every dialect", () => {
    const names = [...CLAUDE_CODE_EVENTS, ...DEEPAGENTS_LEGACY_EVENTS, "SomethingNew"];
    let refused = 0;
    fc.assert(
      fc.property(
        fc.constantFrom(...names),
        fc.constantFrom(...DIALECTS),
        fc.dictionary(fc.oneof(fc.constantFrom(...SCHEMA_FIELDS), fc.string({ maxLength: 4 })), fieldValue, {
          maxKeys: 6,
        }),
        (name, dia, body) => {
          const schema = eventSchemaFor(name, dia);
          const accepted = schema.accepts(body);
          if (!accepted) refused++;
          expect(accepted).toBe(schema.schema.safeParse(body).success);
        },
      ),
      { numRuns: 5000 },
    );
    // Not vacuous: both answers come up.
    expect(refused).toBeGreaterThan(500);
    expect(refused).toBeLessThan(4500);
  });
});

describe("parseHookEvent on Claude Code-shaped bodies", () => {
  it("parses every well-typed tool event and keeps its tool name, input and session", () => {
    const body = fc.record({
      name: toolEvent,
      toolName: fc.string({ minLength: 1 }),
      common: typedFields(COMMON),
      tool: typedFields(TOOL),
      extra: extras,
    });
    fc.assert(
      fc.property(body, ccDialect, ({ name, toolName, common, tool, extra }, dia) => {
        const raw: Record<string, unknown> = {
          ...extra,
          ...common,
          ...tool,
          hook_event_name: name,
          tool_name: toolName,
        };
        const result = parseHookEvent(raw, dia);
        if (!result.ok) throw new Error(`rejected: ${JSON.stringify(result.error)}`);
        expect(result.value).toMatchObject({ name, known: true, toolName });
        expect(result.value.toolInput).toBe(raw.tool_input);
        expect(result.value.sessionId).toBe(raw.session_id);
      }),
      { numRuns: 1000 },
    );
  });

  it("names the one mistyped field by its path", () => {
    const fields = { ...COMMON, ...TOOL };
    const mistyped = fc
      .constantFrom(...Object.keys(fields))
      .chain((field) =>
        fc.tuple(fc.constant(field), wrongValue(fields[field] as FieldType), typedFields(COMMON), toolEvent),
      );
    fc.assert(
      fc.property(mistyped, ccDialect, ([field, bad, common, name], dia) => {
        const raw = { ...common, hook_event_name: name, tool_name: "Bash", tool_input: {}, [field]: bad };
        const result = parseHookEvent(raw, dia);
        expect(result.ok).toBe(false);
        if (!result.ok) expect(result.error).toMatchObject({ code: "EVENT_INVALID", path: field });
      }),
      { numRuns: 500 },
    );
  });

  it("requires a non-empty string tool_name on tool events", () => {
    const badName = fc.oneof(fc.constant(""), fc.integer(), fc.constant(null), fc.boolean());
    fc.assert(
      fc.property(toolEvent, badName, ccDialect, (name, toolName, dia) => {
        const result = parseHookEvent({ hook_event_name: name, tool_name: toolName }, dia);
        expect(result.ok).toBe(false);
        if (!result.ok) expect(result.error.path).toBe("tool_name");
      }),
      { numRuns: 200 },
    );
  });
});

describe("detectDialect and sniffEventName", () => {
  it("detects one of the three self-describing dialects for any object", () => {
    const object = fc.dictionary(fc.string(), fc.jsonValue({ maxDepth: 2 }));
    fc.assert(
      fc.property(object, (body) => {
        expect(["claude-code", "deepcode", "deepagents-legacy"]).toContain(detectDialect(body));
      }),
      { numRuns: 1000 },
    );
  });

  it("never throws on any text and only ever names a known event", () => {
    const anyText = fc.oneof(fc.string(), fc.string({ unit: "binary" }), fc.json());
    fc.assert(
      fc.property(anyText, (text) => {
        const name = sniffEventName(text);
        if (name !== undefined) expect(isKnownEvent(name)).toBe(true);
      }),
      { numRuns: 1000 },
    );
  });

  it("finds the event of a serialized body whatever its string values hold", () => {
    // Values may hold `"hook_event_name":"Stop"` themselves; JSON escaping must keep them inert.
    const decoy = fc.constantFrom('"hook_event_name":"Stop"', '"event":"tool.use"', "\\", '"');
    const value = fc.oneof(fc.string(), decoy);
    fc.assert(
      fc.property(fc.constantFrom(...CLAUDE_CODE_EVENTS), fc.dictionary(fc.string(), value), (name, rest) => {
        const { hook_event_name: _drop, event: _event, ...others } = rest;
        const text = JSON.stringify({ ...others, hook_event_name: name, event: "change" });
        expect(sniffEventName(text)).toBe(name);
      }),
      { numRuns: 1000 },
    );
  });
});

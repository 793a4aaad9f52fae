import { describe, expect, it } from "vitest";
import { batchLines, createJsonLogger, scrubLines } from "../../src/adapters/log/json-lines.js";
import { escapeControls } from "../../src/core/escape-controls.js";
import { scrubbingWith } from "../../src/core/mask.js";

/** A stream that keeps each write, and a defer that runs tasks only when told. */
function harness(scrub?: (text: string) => string) {
  const writes: string[] = [];
  const tasks: (() => void)[] = [];
  const stream = { write: (text: string) => writes.push(text) };
  // Scrubbing wraps the stream, so it runs once per batch the batcher writes.
  const sink = batchLines(scrub ? scrubLines(stream, scrub) : stream, { defer: (task) => tasks.push(task) });
  const endOfTurn = () => {
    for (const task of tasks.splice(0)) task();
  };
  return { writes, sink, endOfTurn, tasks };
}

describe("batchLines", () => {
  it("writes the lines of one turn in one write, in order, at the end of the turn", () => {
    const { writes, sink, endOfTurn, tasks } = harness();
    sink.write("a\n");
    sink.write("b\n");
    sink.write("c\n");
    expect(writes).toEqual([]);
    expect(tasks).toHaveLength(1);
    endOfTurn();
    expect(writes).toEqual(["a\nb\nc\n"]);
    sink.write("d\n");
    endOfTurn();
    expect(writes).toEqual(["a\nb\nc\n", "d\n"]);
  });

  it("writes at once when a batch grows past 64 KiB, and flush writes what is left", () => {
    const { writes, sink } = harness();
    const line = `${"x".repeat(1023)}\n`;
    for (let i = 0; i < 64; i++) sink.write(line);
    expect(writes).toHaveLength(1);
    expect(writes[0]).toHaveLength(64 * 1024);
    sink.write("tail\n");
    sink.flush();
    expect(writes).toEqual([line.repeat(64), "tail\n"]);
    sink.flush();
    expect(writes).toHaveLength(2);
  });

  it("carries whole JSON lines from the logger", () => {
    const { writes, sink, endOfTurn } = harness();
    const logger = createJsonLogger(sink, "info", () => 0);
    logger.log("info", "decision", { decisionId: "d1" });
    logger.log("debug", "dropped");
    logger.log("error", "oops", { error: "x" });
    endOfTurn();
    const lines = writes
      .join("")
      .trimEnd()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(lines).toEqual([
      { time: "1970-01-01T00:00:00.000Z", level: "info", msg: "decision", decisionId: "d1" },
      { time: "1970-01-01T00:00:00.000Z", level: "error", msg: "oops", error: "x" },
    ]);
  });
});

describe("scrubbing secret values from log lines", () => {
  const SECRET = "r4nd0m-t0ken-without-a-shape";

  it("scrubs each batch once, with the secrets of the policy in force when it is written", () => {
    let secrets: readonly string[] = [SECRET];
    const scrubbed: string[] = [];
    const scrub = scrubbingWith(() => secrets);
    const { writes, sink, endOfTurn } = harness((text) => {
      scrubbed.push(text);
      return scrub(text);
    });
    const logger = createJsonLogger(sink, "info", () => 0);
    logger.log("warn", "egress refused", { reason: `peer said ${SECRET}` });
    logger.log("info", "decision", { detail: `"${SECRET}"` });
    endOfTurn();
    expect(scrubbed).toHaveLength(1);
    expect(writes.join("")).not.toContain(SECRET);
    expect(
      writes
        .join("")
        .trimEnd()
        .split("\n")
        .map((l) => JSON.parse(l)),
    ).toMatchObject([{ reason: "peer said [masked]" }, { detail: '"[masked]"' }]);

    // A reload changes the secrets: the new ones apply, and the old ones are still scrubbed.
    secrets = ["an0ther-s3cret-value"];
    logger.log("info", "x", { a: SECRET, b: "an0ther-s3cret-value" });
    endOfTurn();
    expect(JSON.parse(writes.at(-1) ?? "")).toMatchObject({ a: "[masked]", b: "[masked]" });
  });

  it("masks a secret's JSON-escaped form, as it stands in a log line", () => {
    const quoted = 'pa"ss\\word\u0001-long';
    const { writes, sink, endOfTurn } = harness(scrubbingWith(() => [quoted]));
    createJsonLogger(sink, "info", () => 0).log("info", "x", { field: `at ${quoted} end` });
    endOfTurn();
    expect(writes.join("")).not.toContain(JSON.stringify(quoted).slice(1, -1));
    expect(JSON.parse(writes.join(""))).toMatchObject({ field: "at [masked] end" });
  });

  // The line escapes what JSON.stringify leaves as it is (a zero-width space, a BOM a secret read
  // from a file begins with, a direction mark, U+2028): a secret holding one, searched for as
  // JSON.stringify writes it, was not found in the line, and was written out whole.
  it.each([
    ["a zero-width space", "tok\u200b-0123456789ab"],
    ["a BOM", "\ufefftok-0123456789ab"],
    ["a direction mark", "tok-0123\u200e456789ab"],
    ["a line separator", "tok-0123\u2028456789ab"],
    ["a C1 control", "tok-0123\u0085456789ab"],
  ])("masks a secret holding a character the line writes as an escape: %s", (_what, secret) => {
    const { writes, sink, endOfTurn } = harness(scrubbingWith(() => [secret]));
    createJsonLogger(sink, "info", () => 0).log("warn", "peer said", { error: `auth ${secret} refused` });
    endOfTurn();
    expect(writes.join("")).not.toContain("456789ab");
    expect(JSON.parse(writes.join(""))).toMatchObject({ error: "auth [masked] refused" });
  });

  // An agent knows its own token: written after a tab (`\tok-…` in the line), its masking left
  // `\[masked]`, and the line, its decision's audit line, was no JSON a log pipeline reads.
  it.each([
    [
      "after a tab, its first letter read as the escape's",
      "tok-0123456789ab",
      "x\tok-0123456789ab y",
      "x[masked] y",
    ],
    ["after a newline", "n0123456789abcdef", "x\n0123456789abcdef", "x[masked]"],
    ["inside a \\u escape (a control character's)", "1abcdef0123", "x\u0001abcdef0123 y", "x[masked] y"],
    ["inside a \\u escape escapeControls wrote", "28abcdef0123", "x\u2028abcdef0123", "x[masked]"],
    ["ending in the escape's backslash", "abcdefgh\\", 'abcdefgh" y', "[masked] y"],
    ["after an escaped backslash, which it leaves", "tok-0123456789ab", "x\\tok-0123456789ab", "x\\[masked]"],
  ])(
    "masks a secret that starts or ends inside a JSON escape with the escape: %s",
    (_what, secret, value, shown) => {
      const { writes, sink, endOfTurn } = harness(scrubbingWith(() => [secret]));
      createJsonLogger(sink, "info", () => 0).log("info", "decision", { toolInput: { command: value } });
      endOfTurn();
      expect(JSON.parse(writes.join(""))).toMatchObject({ toolInput: { command: shown } });
    },
  );

  it("writes a batch unchanged when the policy has no secrets", () => {
    const { writes, sink, endOfTurn } = harness(scrubbingWith(() => []));
    sink.write("a token-like-but-unknown-value\n");
    endOfTurn();
    expect(writes).toEqual(["a token-like-but-unknown-value\n"]);
  });

  it("scrubs line by line for a sink that is not batched", () => {
    const writes: string[] = [];
    const sink = scrubLines(
      { write: (line: string) => writes.push(line) },
      scrubbingWith(() => [SECRET]),
    );
    sink.write(`{"msg":"${SECRET}"}\n`);
    expect(writes).toEqual(['{"msg":"[masked]"}\n']);
  });
});

describe("createJsonLogger", () => {
  it("writes time, level and msg first, then the fields, byte for byte as JSON.stringify would", () => {
    const writes: string[] = [];
    let ms = 0;
    const logger = createJsonLogger({ write: (line) => writes.push(line) }, "info", () => ms);
    logger.log("info", "decision", {
      decisionId: "d1",
      rules: ["a"],
      skipped: undefined,
      quote: 'say "hi"\n',
    });
    logger.log("warn", "no fields");
    logger.log("info", "empty", {});
    ms = 1_700_000_000_123;
    logger.log("error", 'a "quoted" message');
    const spread = (time: string, level: string, msg: string, fields?: Record<string, unknown>) =>
      `${JSON.stringify({ time, level, msg, ...fields })}\n`;
    const epoch = "1970-01-01T00:00:00.000Z";
    expect(writes).toEqual([
      spread(epoch, "info", "decision", { decisionId: "d1", rules: ["a"], quote: 'say "hi"\n' }),
      spread(epoch, "warn", "no fields"),
      spread(epoch, "info", "empty"),
      spread("2023-11-14T22:13:20.123Z", "error", 'a "quoted" message'),
    ]);
  });

  it("writes an array or an object with its own toJSON as the spread did", () => {
    const writes: string[] = [];
    const logger = createJsonLogger({ write: (line) => writes.push(line) }, "info", () => 0);
    const odd = [{ toJSON: () => ({ shown: 1 }), hidden: 2 }, ["a", "b"]] as unknown as Record<
      string,
      unknown
    >[];
    for (const fields of odd) logger.log("info", "odd", fields);
    expect(writes).toEqual(
      odd.map(
        (fields) =>
          `${JSON.stringify({ time: "1970-01-01T00:00:00.000Z", level: "info", msg: "odd", ...fields })}\n`,
      ),
    );
    for (const line of writes) expect(() => JSON.parse(line)).not.toThrow();
  });

  it("lets a field named time, level or msg replace the logger's own, as a spread would", () => {
    const writes: string[] = [];
    const logger = createJsonLogger({ write: (line) => writes.push(line) }, "info", () => 0);
    logger.log("info", "forwarded", { msg: "theirs", level: "custom", other: 1 });
    expect(writes.map((l) => JSON.parse(l))).toEqual([
      { time: "1970-01-01T00:00:00.000Z", level: "custom", msg: "theirs", other: 1 },
    ]);
    expect(writes[0]?.match(/"msg"/g)).toHaveLength(1);
  });

  it("escapes what JSON leaves raw and a terminal or viewer acts on, in the message and every field, by each way a line is made", () => {
    const writes: string[] = [];
    const logger = createJsonLogger({ write: (line) => writes.push(line) }, "info", () => 0);
    // DEL, C1's CSI, the line and paragraph separators, an override, an isolate and its end, the
    // direction marks (RLM, LRM, ALM) and the zero-width characters.
    const sent =
      "a\u007f\u009b2A\u2028\u2029\u202ecba\u2067x\u2069\u200f\u200e\u061cr\u200bm\u200c\u200d\u2060\ufeff é";
    logger.log("info", `msg ${sent}`, { sessionId: sent, input: { command: sent } });
    logger.log("info", "spread", { msg: sent }); // the spread's way
    // The fields escaped by the caller, which measured them (Logger.logJson); the message here.
    logger.logJson?.("info", `json ${sent}`, escapeControls(JSON.stringify({ record: sent })));
    const escaped =
      "a\\u007f\\u009b2A\\u2028\\u2029\\u202ecba\\u2067x\\u2069\\u200f\\u200e\\u061cr\\u200bm\\u200c\\u200d\\u2060\\ufeff é";
    expect(writes).toHaveLength(3);
    for (const line of writes) {
      expect(line).not.toMatch(
        /[\u007f-\u009f\u061c\u200b-\u200f\u2028\u2029\u202a-\u202e\u2060\u2066-\u2069\ufeff]/,
      );
      expect(line).toContain(escaped);
      expect(line.endsWith("}\n")).toBe(true);
    }
    expect(writes.map((l) => JSON.parse(l))).toEqual([
      {
        time: "1970-01-01T00:00:00.000Z",
        level: "info",
        msg: `msg ${sent}`,
        sessionId: sent,
        input: { command: sent },
      },
      { time: "1970-01-01T00:00:00.000Z", level: "info", msg: sent },
      { time: "1970-01-01T00:00:00.000Z", level: "info", msg: `json ${sent}`, record: sent },
    ]);
  });
});

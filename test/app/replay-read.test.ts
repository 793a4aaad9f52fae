/**
 * Reading hook records as a stream (`hookgate replay`): the same records and counts as reading the
 * text whole, whatever the chunks the text arrives in, and never more than a line (or one JSON
 * value spanning lines) held at a time.
 */
import { createReadStream, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { ReplayRecord } from "../../src/app/handle-hook.js";
import { createTally, HOLD, RecordTooLarge, readRecords, streamRecords } from "../../src/app/replay.js";
import { tempDir } from "../support/temp.js";

const dir = tempDir("replay-read");

const TRAFFIC = readFileSync("test/fixtures/replay/traffic.jsonl", "utf8");
const WRANGLER = readFileSync("test/fixtures/replay/wrangler-tail.json", "utf8");
const INSIGHTS = readFileSync("test/fixtures/replay/cloudwatch-insights.json", "utf8");

/** The text in chunks of `size` characters. */
async function* chunked(text: string, size: number): AsyncGenerator<string> {
  for (let i = 0; i < text.length; i += size) yield text.slice(i, i + size);
}

async function streamed(chunks: AsyncIterable<string>, limit = Number.POSITIVE_INFINITY, hold = HOLD) {
  const tally = createTally(10);
  const records: ReplayRecord[] = [];
  for await (const record of streamRecords(chunks, tally, limit, hold)) records.push(record);
  return { records, invalid: tally.invalid, skipped: tally.skipped, unparsed: tally.unparsed, tally };
}

/** What streaming gives, as readRecords reports it. */
async function asRead(chunks: AsyncIterable<string>, hold = HOLD) {
  const { records, invalid, skipped, unparsed } = await streamed(chunks, Number.POSITIVE_INFINITY, hold);
  return { records, invalid, skipped, unparsed };
}

const record = JSON.parse(TRAFFIC.split("\n")[8] ?? "") as Record<string, unknown>;
const line = (fields: Record<string, unknown> = {}) => JSON.stringify({ ...record, ...fields });

describe("streamRecords", () => {
  it.each([
    ["JSONL", TRAFFIC],
    ["wrangler tail --format json", WRANGLER],
    ["a Logs Insights export", INSIGHTS],
  ])("finds in %s what readRecords finds, in chunks of any size", async (_what, text) => {
    const whole = readRecords(text);
    expect(whole.records).toHaveLength(13);
    for (const size of [1, 7, 64, 1000, text.length])
      expect(await asRead(chunked(text, size))).toEqual(whole);
  });

  it.each([
    ["a Logs Insights export", INSIGHTS],
    ["the same with one space of indent", JSON.stringify(JSON.parse(INSIGHTS), null, 1)],
    ["the same with no indent", INSIGHTS.replace(/^[ \t]+/gm, "")],
    [
      "the same with fields whose strings hold quotes, backslashes, brackets and commas",
      JSON.stringify(
        {
          results: (JSON.parse(INSIGHTS) as { results: unknown[][] }).results.map((row, i) => [
            { field: "note", value: ['say "hi', "\\", '\\"]', "} ], {", "é\u2028"][i % 5] },
            ...row,
          ]),
        },
        null,
        4,
      ),
    ],
    [
      "the same under a key that holds a quote and a bracket",
      INSIGHTS.replace('"results"', '"re\\"sults [0]"'),
    ],
    ["wrangler tail --format json", WRANGLER],
    [
      "aws logs filter-log-events --output json",
      JSON.stringify(
        {
          events: TRAFFIC.trimEnd()
            .split("\n")
            .map((l, i) => ({
              logStreamName: "s",
              timestamp: i,
              message: `2026-11-29T23:21:02.526Z\tr${i}\tINFO\t${JSON.stringify({ msg: "hook record", record: JSON.parse(l) })}`,
              eventId: `e${i}`,
            })),
          searchedLogStreams: [{ logStreamName: "s", searchedCompletely: true }],
        },
        null,
        4,
      ),
    ],
  ])(
    "finds in %s read a member at a time, past what it holds, what reading it whole finds",
    async (_what, text) => {
      // A Logs Insights export is one JSON document: held whole, a 300 MiB one took 2.4 GB.
      const whole = readRecords(text);
      expect(whole.records).toHaveLength(13);
      for (const hold of [0, 1, 64, 1000])
        for (const size of [7, 1000, text.length])
          expect(await asRead(chunked(text, size), hold)).toEqual(whole);
    },
  );

  it("keeps the whole rows of an export read a member at a time that is cut short, and counts it", async () => {
    // Its lines are not held to be read again: the records of its whole members stay read.
    const cut = INSIGHTS.slice(0, INSIGHTS.indexOf('"@ptr"', INSIGHTS.length >> 1));
    const read = await streamed(chunked(cut, 100), Number.POSITIVE_INFINITY, 64);
    expect(read.records.map((r) => r.decisionId)).toEqual(
      readRecords(INSIGHTS)
        .records.slice(0, read.records.length)
        .map((r) => r.decisionId),
    );
    expect(read.records.length).toBeGreaterThan(3);
    expect(read.unparsed).toEqual({ count: 1, firstLine: 1 });
    // Held whole (under its size to hold), it is given up and its lines read again, which finds
    // the same rows (a row's fields are objects on lines of their own).
    expect((await streamed(chunked(cut, 100))).records).toEqual(read.records);
    // A record printed over several lines (`jq .`) is held whole: it is a record.
    const pretty = JSON.stringify(JSON.parse(TRAFFIC.split("\n")[0] ?? ""), null, 2);
    expect((await streamed(chunked(`${pretty}\n${pretty}\n`, 100))).records).toHaveLength(2);
  });

  it("finds a record printed over lines past what it holds (`jq .`, `jq -S .`, `jq -s .`), held whole", async () => {
    // A record's body may be up to 64 MiB (`defaults.maxBodyBytes`) and `jq .` adds an indent to
    // each line: one of 949 KB (a Glob's 60,000 file names) printed so is 1.49 MB. Read a member
    // at a time, as a Logs Insights export is, it was no record, and replay skipped it.
    const record = JSON.parse(TRAFFIC.split("\n")[0] ?? "") as Record<string, unknown>;
    const sorted = Object.fromEntries(Object.entries(record).sort(([a], [b]) => (a < b ? -1 : 1)));
    const log = { time: "2026-11-29T23:21:02.526Z", level: "info", msg: "hook record", record };
    for (const value of [record, sorted, log, [record, record], { results: [[record]] }]) {
      const text = `${JSON.stringify(value, null, 2)}\n`;
      const whole = readRecords(text);
      expect(whole.records.length).toBeGreaterThan(0);
      // Past 64 characters held, as a record past 1 MiB is.
      for (const size of [7, text.length]) expect(await asRead(chunked(text, size), 64)).toEqual(whole);
    }
  });

  it("reads a record split across a file's read chunks, a multi-byte character cut in two among them", async () => {
    // é is two bytes in UTF-8: with 16-byte reads, some are cut between two reads.
    const text = `${[0, 1, 2, 3].map((i) => line({ decisionId: `é${i}`, reason: "é".repeat(50 + i) })).join("\n")}\n`;
    const path = join(dir, "chunks.jsonl");
    writeFileSync(path, text);
    const read = await streamed(createReadStream(path, { encoding: "utf8", highWaterMark: 16 }));
    expect(read.records.map((r) => [r.decisionId, r.reason])).toEqual(
      [0, 1, 2, 3].map((i) => [`é${i}`, "é".repeat(50 + i)]),
    );
    expect(read.skipped).toBe(0);
    expect(read.unparsed.count).toBe(0);
  });

  it("reads a record longer than a read chunk", async () => {
    const long = line({
      decisionId: "long",
      event: { ...(record.event as object), pad: "x".repeat(200_000) },
    });
    const path = join(dir, "long.jsonl");
    writeFileSync(path, `${line()}\n${long}\n${line()}\n`);
    const read = await streamed(createReadStream(path, { encoding: "utf8", highWaterMark: 1024 }));
    expect(read.records.map((r) => r.decisionId)).toEqual([record.decisionId, "long", record.decisionId]);
  });

  it("reads CRLF line ends, a UTF-8 byte order mark, an empty text and a last line without its newline", async () => {
    const crlf = `${line()}\r\n${line()}\r\n`;
    expect(await asRead(chunked(crlf, 5))).toEqual(readRecords(crlf));
    expect((await streamed(chunked(crlf, 5))).records).toHaveLength(2);
    const bom = `\uFEFF${line()}\n${line()}`;
    expect((await streamed(chunked(bom, 3))).records).toHaveLength(2);
    // A pretty-printed export with a byte order mark (dropped, as a policy file's is).
    expect((await streamed(chunked(`\uFEFF${WRANGLER}`, 100))).records).toHaveLength(13);
    expect(await asRead(chunked("", 1))).toEqual({
      records: [],
      invalid: [],
      skipped: 0,
      unparsed: { count: 0, firstLine: undefined },
    });
  });

  it("counts a record cut short at the end, and one cut short before whole records, and reads on", async () => {
    const whole = line();
    const torn = `${whole}\n${whole.slice(0, whole.length >> 1)}`;
    expect(await asRead(chunked(torn, 9))).toEqual(readRecords(torn));
    expect((await streamed(chunked(torn, 9))).unparsed).toEqual({ count: 1, firstLine: 2 });
    // Cut inside a string: its `{` never closes; the records after it are read, not held.
    const middle = `${whole}\n${whole.slice(0, 40)}\n${whole}\n${whole}\n`;
    expect(await asRead(chunked(middle, 9))).toEqual(readRecords(middle));
    const read = await streamed(chunked(middle, 9));
    expect(read.records).toHaveLength(3);
    expect(read.unparsed).toEqual({ count: 1, firstLine: 2 });
    // Before pretty-printed values, which are not records of their own line.
    const beforePretty = `${whole.slice(0, 40)}\n${WRANGLER}`;
    const pretty = await streamed(chunked(beforePretty, 50));
    expect(pretty.records).toHaveLength(13);
    expect(pretty.unparsed).toEqual({ count: 1, firstLine: 1 });
  });

  it("reads every value of a line that holds several one after another (Firehose's CloudWatch Logs on S3)", async () => {
    // Firehose writes each batch of log events as a JSON object, with nothing between them.
    const lines = TRAFFIC.trim().split("\n");
    const batch = (records: readonly string[]) =>
      JSON.stringify({
        messageType: "DATA_MESSAGE",
        logGroup: "/aws/lambda/hookgate-prod-http",
        logEvents: records.map((r, id) => ({
          id: String(id),
          timestamp: 0,
          message: `2026-11-29T23:21:02.526Z\treq\tINFO\t${JSON.stringify({ level: "info", msg: "hook record", record: JSON.parse(r) })}\n`,
        })),
      });
    const firehose = `${batch(lines.slice(0, 4))}${batch(lines.slice(4, 9))}${batch(lines.slice(9))}`;
    const read = await streamed(chunked(firehose, 1000));
    expect(read.records).toHaveLength(13);
    expect(read.unparsed.count).toBe(0);
    expect(await asRead(chunked(firehose, 1000))).toEqual(readRecords(firehose));
    // Records with nothing between them, as `cat` of files that end without a newline gives.
    const joined = await streamed(chunked(lines.join(""), 100));
    expect(joined.records.map((r) => r.decisionId)).toEqual(lines.map((l) => JSON.parse(l).decisionId));
    expect(joined.unparsed.count).toBe(0);
  });

  it("reads every value of a line behind a text prefix, not only its last", async () => {
    // A log shipper's line: its timestamp, then the values it was given, apart or not.
    const lines = TRAFFIC.trim().split("\n");
    const prefixed = `2026-11-29T23:21:02.526Z ${lines[0]}${lines[1]} ${lines[2]}\n[INFO] ${lines[3]}\t${lines[4]}`;
    const read = await streamed(chunked(prefixed, 100));
    expect(read.records.map((r) => r.decisionId)).toEqual(
      lines.slice(0, 5).map((l) => JSON.parse(l).decisionId),
    );
    expect(read.unparsed.count).toBe(0);
    expect(await asRead(chunked(prefixed, 100))).toEqual(readRecords(prefixed));
    // Text after the values: the line is no prefix and values, as before; nor is a `{` in the
    // prefix's text the start of values.
    const trailed = `note ${lines[0]} ${lines[1]} done\nsaid "{" then ${lines[2]}`;
    expect(readRecords(trailed).records.map((r) => r.decisionId)).toEqual([
      JSON.parse(lines[2] ?? "").decisionId,
    ]);
  });

  it("keeps the whole values of a line behind a text prefix whose last value is cut short, and counts the cut", async () => {
    // A log shipper's line that a full disk or a 256 KB cap ended inside its last value: the
    // values before it are whole records. The line was counted as one cut short, and they were lost.
    const lines = TRAFFIC.trim().split("\n");
    const cut = (l: string | undefined) => (l ?? "").slice(0, 60);
    for (const text of [
      `2026-11-29T23:21:02.526Z ${lines[0]}${cut(lines[1])}`,
      `2026-11-29T23:21:02.526Z ${lines[0]} ${lines[1]}\t${cut(lines[2])}`,
      `2026-11-29T23:21:02.526Z ${lines[0]}${(lines[1] ?? "").slice(0, (lines[1] ?? "").indexOf('"decisionId"') + 14)}`,
    ]) {
      const read = await streamed(chunked(text, 100));
      const whole = text.includes(lines[1] ?? "") ? 2 : 1;
      expect(read.records.map((r) => r.decisionId)).toEqual(
        lines.slice(0, whole).map((l) => JSON.parse(l).decisionId),
      );
      expect(read.unparsed).toEqual({ count: 1, firstLine: 1 });
      expect(await asRead(chunked(text, 100))).toEqual(readRecords(text));
    }
    // Text after a value, not a value cut short, is still no prefix and values.
    expect(readRecords(`ts ${lines[0]} then some words`).records).toHaveLength(0);
  });

  it("reads a long line of nested brackets that never close as one line skipped, and the records after it", () => {
    const lines = TRAFFIC.trim().split("\n");
    for (const garbage of ['{"a":'.repeat(2_000), "[".repeat(10_000), `x ${"{".repeat(5_000)}!`]) {
      const read = readRecords(`${garbage}\n${lines[0]}\nts ${garbage}${lines[1]}`);
      expect(read.records).toHaveLength(2);
    }
  });

  it.each([
    ["a Logs Insights export", INSIGHTS],
    ["wrangler tail --format json", WRANGLER],
  ])("counts a log line cut short inside %s as cut short, not as another line", async (_what, text) => {
    // CloudWatch keeps 256 KB of a log event: an export holds the rest of a longer record's line
    // as a string that does not parse. It was skipped as text that holds no record.
    let at = text.indexOf('msg\\":\\"hook record') + 200;
    while (text.charAt(at - 1) === "\\") at -= 1;
    const cut = `${text.slice(0, at)}${text.slice(text.indexOf(']}}"', at) + 3)}`;
    const read = await streamed(chunked(cut, 100));
    expect(read.records).toHaveLength(12);
    expect(read.unparsed).toEqual({ count: 1, firstLine: 1 });
    expect(read).toMatchObject(readRecords(cut));
    expect(await asRead(chunked(cut, 100), 64)).toEqual(readRecords(cut));
  });

  it("counts no line cut short for text that only mentions a hook record or its fields", async () => {
    const mentions = [
      { message: ["{ the hook record, below }"] },
      { message: 'see {"decisionId" in the audit line' },
      { "@message": 'INFO {"level":"info","msg":"decision","note":"no hook record"' },
    ];
    const read = await streamed(chunked(mentions.map((m) => JSON.stringify(m)).join("\n"), 100));
    expect(read.unparsed.count).toBe(0);
    expect(read.skipped).toBe(3);
  });

  it("gives up a record cut short at the next line that starts a value in its first column, holding no more", async () => {
    // Pretty-printed values indent all but their closing line, and JSONL starts each line with
    // `{`: a line starting with `{` or `[` begins a value of its own. A record cut short was held
    // until the next line that was a whole hook record by itself: before a pretty-printed export
    // or lines that are not records, that was the end of the file (its size in memory, refused
    // past the limit, and read again once for each record cut short).
    const limit = 10_000;
    const pretty = `${WRANGLER.split("\n").slice(0, 3).join("\n")}\n${WRANGLER.repeat(3)}`;
    expect(pretty.length).toBeGreaterThan(limit);
    const read = await streamed(chunked(pretty, 100), limit);
    expect(read.records).toHaveLength(39);
    expect(read.unparsed).toEqual({ count: 1, firstLine: 1 });

    const other = JSON.stringify({ time: "2026-11-29T23:21:02.526Z", level: "info", msg: "decision" });
    const jsonl = `${line().slice(0, 40)}\n${`${other}\n`.repeat(500)}${line()}\n`;
    expect(jsonl.length).toBeGreaterThan(limit);
    const lines = await streamed(chunked(jsonl, 100), limit);
    expect(lines.records).toHaveLength(1);
    expect(lines.unparsed).toEqual({ count: 1, firstLine: 1 });
    expect(lines.skipped).toBe(501);

    // With no indent (Python's `json.dumps(indent=0)`), `{` starts lines inside a value too.
    const flat = WRANGLER.replace(/^[ \t]+/gm, "");
    const unindented = await streamed(chunked(flat, 100), limit);
    expect(unindented.records).toHaveLength(13);
    expect(unindented.unparsed).toEqual({ count: 0, firstLine: undefined });
  });

  it("reads a record written without its event (too large for a log line), and refuses one with both", async () => {
    const { event: _, ...rest } = record;
    const read = await streamed(
      chunked(
        `${JSON.stringify({ ...rest, eventOmitted: { bytes: 300_000 } })}\n${line({ eventOmitted: { bytes: 1 } })}\n`,
        10,
      ),
    );
    expect(read.records).toHaveLength(1);
    expect(read.records[0]).toMatchObject({ event: undefined, eventOmitted: { bytes: 300_000 } });
    expect(read.invalid).toEqual([
      { at: "line 2", problem: "eventOmitted must be an object with bytes, and no event beside it" },
    ]);
  });

  it("names the line of a malformed record, and keeps only the first few of many", async () => {
    const bad = line({ decision: "maybe" });
    const text = `${line()}\n${Array.from({ length: 12 }, () => bad).join("\n")}\n`;
    const read = await streamed(chunked(text, 10));
    expect(read.tally.invalidCount).toBe(12);
    expect(read.invalid).toHaveLength(10);
    expect(read.invalid[0]).toEqual({
      at: "line 2",
      problem: "decision must be one of allow, deny, ask, defer, block, none",
    });
    expect(read.records).toHaveLength(1);
  });

  it("refuses a line, or a value spanning lines, longer than its limit, naming where it starts", async () => {
    const refused = async (text: string, limit: number) => {
      try {
        await streamed(chunked(text, 10), limit);
      } catch (e) {
        return e instanceof RecordTooLarge ? { line: e.line, spansLines: e.spansLines } : e;
      }
      return "read";
    };
    expect(await refused(`${line()}\n${line()}\n`, 10_000)).toBe("read");
    expect(await refused(`${line()}\n${"x".repeat(20_000)}\n`, 10_000)).toEqual({
      line: 2,
      spansLines: false,
    });
    expect(await refused(`${line()}\n${"x".repeat(20_000)}`, 10_000)).toEqual({ line: 2, spansLines: false });
    expect(await refused(`${line()}\n${WRANGLER}`, 1_000)).toEqual({ line: 2, spansLines: true });
  });
});

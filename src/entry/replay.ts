/**
 * `hookgate replay --policy CANDIDATE RECORDS...`: judges recorded traffic against a candidate
 * policy with no side effects and prints what would change. Impact is information, so the exit
 * code is 0 whatever changed; 1 only when the policy or the records cannot be read.
 */
import { constants } from "node:buffer";
import { createHash, randomUUID } from "node:crypto";
import type { Stats } from "node:fs";
import { type FileHandle, mkdtemp, open, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { StringDecoder } from "node:string_decoder";
import { parseArgs } from "node:util";
import { createUndiciEgress } from "../adapters/egress/undici.js";
import { nodeSha256 } from "../adapters/hash/node-crypto.js";
import { formatIssues } from "../adapters/policy-source/file.js";
import type { ReplayRecord } from "../app/handle-hook.js";
import { createRemoteActions } from "../app/remote-actions.js";
import {
  type Counts,
  createTally,
  type ImpactExample,
  type ImpactReport,
  promptsOnly,
  RECORD_LOG_BYTES,
  RecordTooLarge,
  replayImpact,
  streamRecords,
} from "../app/replay.js";
import { errorMessage, systemReason } from "../core/errors.js";
import { escapeControls } from "../core/escape-controls.js";
import type { LoadedPolicy } from "../core/policy.js";
import { envReaderOf } from "../core/secret-ref.js";
import { shorten } from "../core/truncate.js";
import { isGzip } from "../http/read-body.js";
import { loadCommandPolicy } from "./command-policy.js";
import type { CommandIo } from "./policy-test.js";
import { shellQuote } from "./shell-word.js";
import { UsageError } from "./usage-error.js";

export async function replayCommand(
  args: readonly string[],
  io: CommandIo & {
    readonly stdin: () => NodeJS.ReadableStream;
    /** What stdin is (fstat of fd 0): a file redirected to it (`< FILE`) is known by its identity. */
    readonly stdinStat: () => Promise<Stats | undefined>;
  },
): Promise<number> {
  const { values, positionals } = parseArgs({
    args: [...args],
    allowPositionals: true,
    options: {
      policy: { type: "string" },
      json: { type: "boolean" },
      examples: { type: "string" },
      "with-judge": { type: "boolean" },
    },
  });
  if (!values.policy) throw new UsageError("replay needs --policy CANDIDATE");
  if (positionals.length === 0)
    throw new UsageError("replay takes one or more record files (or - for stdin)");
  // stdin is read to its end once: a second - held nothing, and was refused as a file of no records.
  if (positionals.filter((file) => file === "-").length > 1)
    throw new UsageError("replay reads stdin (-) once: give - one time");
  const examples = Number(values.examples ?? "3");
  if (!/^\d+$/.test(values.examples ?? "3"))
    throw new UsageError(`--examples ${JSON.stringify(values.examples)} is not a count`);

  const loaded = await loadCommandPolicy(values.policy, io.err, 1);
  if (typeof loaded === "number") return loaded;
  // Each file is read twice, as a stream: once to check it (a malformed record or a file with
  // none exits 1 before anything is judged or a model called), then to replay it; the second read
  // stops where the first did, so a recording still being written replays what was checked, and
  // must read the same bytes, checked a block at a time before any record in a block is judged.
  // stdin and pipes are copied to a private temporary file to be read twice.
  const files: CheckedFile[] = [];
  const spools: string[] = [];
  /**
   * The input copied to a file only this user can read, opened. The file leaves its directory as
   * soon as it is made (it lasts as long as its handle): it holds recorded events, and replay
   * interrupted (Ctrl-C) or killed leaves nothing of them behind.
   */
  const copied = async (input: NodeJS.ReadableStream): Promise<FileHandle> => {
    const spool = await mkdtemp(join(tmpdir(), "hookgate-replay-"));
    spools.push(spool);
    const handle = await open(join(spool, "input"), "wx+", 0o600);
    try {
      // Where an open file cannot be removed, the `finally` below removes it after.
      await rm(spool, { recursive: true, force: true }).catch(() => undefined);
      // Written through the handle, not a write stream on it: one left open for the reads kept
      // the handle's close waiting forever (the process then ended with 0, whatever replay said).
      await writeFile(handle, input);
      return handle;
    } catch (e) {
      await handle.close();
      throw e;
    }
  };
  try {
    for (const file of positionals) {
      let handle: FileHandle;
      let stat: Stats | undefined;
      try {
        const fileHandle = file === "-" ? undefined : await open(file, "r");
        stat = fileHandle === undefined ? await io.stdinStat() : await fileHandle.stat();
        // stdin too (`- < records/`), which Node reads as empty.
        if (stat?.isDirectory()) {
          await fileHandle?.close();
          io.err(`hookgate: cannot read ${nameOf(file)}: it is a directory; name the records files in it\n`);
          return 1;
        }
        // A file named twice (`records/*.jsonl records/today.jsonl`, or by a link, or as stdin:
        // `- records.jsonl < records.jsonl`) is one file: its records are counted once.
        const named = stat?.isFile() ? stat : undefined;
        const same = named && files.find((f) => f.dev === named.dev && f.ino === named.ino);
        if (same !== undefined) {
          await fileHandle?.close();
          io.err(
            `hookgate: ${nameOf(file)} is ${nameOf(same.name)} again (the same file); its records are replayed once\n`,
          );
          continue;
        }
        if (fileHandle === undefined) handle = await copied(io.stdin());
        else handle = fileHandle;
        // A pipe (`<(zcat records.jsonl.gz)`) can be read only once.
        if (fileHandle !== undefined && stat !== undefined && !stat.isFile()) {
          const piped = handle;
          try {
            handle = await copied(piped.createReadStream({ autoClose: false }));
          } finally {
            await piped.close();
          }
        }
      } catch (e) {
        io.err(`hookgate: cannot read ${file}: ${systemReason(e)}\n`);
        return 1;
      }
      // A copy (stdin, a pipe) is a file of its own, stated once made; stdin redirected from a
      // file keeps that file's identity, for the file named after it.
      const { dev, ino } = stat?.isFile() ? stat : await handle.stat();
      const opened: CheckedFile = { name: file, handle, dev, ino, bytes: 0, digests: [] };
      files.push(opened);
      const tally = createTally(10);
      let start: Buffer | undefined;
      try {
        const stream = handle.createReadStream({ autoClose: false, start: 0, highWaterMark: BLOCK });
        const digested = async function* () {
          for await (const block of blocksOf(stream)) {
            start ??= block.subarray(0, 2);
            opened.digests.push(digestOf(block));
            yield block;
          }
        };
        for await (const _ of streamRecords(decoded(digested()), tally, constants.MAX_STRING_LENGTH));
        opened.bytes = stream.bytesRead;
      } catch (e) {
        io.err(
          `hookgate: cannot read ${file}: ${e instanceof RecordTooLarge ? tooLargeFix(e) : errorMessage(e)}\n`,
        );
        return 1;
      }
      if (tally.invalidCount > 0) {
        const shown = tally.invalid.map((i) => `${file}: ${i.at}: ${i.problem}`);
        const more =
          tally.invalidCount > shown.length ? `\n… and ${tally.invalidCount - shown.length} more` : "";
        io.err(
          `${shown.join("\n")}${more}\nhookgate: ${file}: ${tally.invalidCount} malformed hook record${tally.invalidCount > 1 ? "s" : ""}\n`,
        );
        return 1;
      }
      const { count, firstLine } = tally.unparsed;
      if (tally.records === 0) {
        // Compressed, its bytes are no text: "other lines", and the fix offered was to record.
        if (start !== undefined && isGzip(start)) {
          io.err(
            `hookgate: ${nameOf(file)} is gzip-compressed (logrotate's compress, Firehose's files): ${file === "-" ? "pipe it through zcat first" : `replay what zcat gives, <(zcat ${shellQuote(file)}) in its place`}\n`,
          );
          return 1;
        }
        // Read as UTF-8, UTF-16 text is no line of JSON: its records were called "other lines".
        if (start !== undefined && isUtf16(start)) {
          io.err(
            `hookgate: ${nameOf(file)} is UTF-16, not UTF-8 (Windows PowerShell's > writes UTF-16): save it as UTF-8 (| Out-File -Encoding utf8)\n`,
          );
          return 1;
        }
        const cut =
          count > 0
            ? `; ${count} look${count > 1 ? "" : "s"} like a record cut short, first at line ${firstLine}`
            : "";
        const held =
          tally.skipped > 0
            ? `${tally.skipped} other line${tally.skipped > 1 ? "s" : ""}${cut}`
            : "it is empty";
        io.err(
          `hookgate: ${nameOf(file)} holds no hook records (${held}): record with \`hookgate serve --record FILE\`, or export the "hook record" log lines (see README)\n`,
        );
        return 1;
      }
      if (count > 0) {
        io.err(
          `hookgate: ${file}: ${count} line${count > 1 ? "s" : ""} that look${count > 1 ? "" : "s"} like a record but ${count > 1 ? "do" : "does"} not parse, first at line ${firstLine} (cut short?); not replayed\n`,
        );
      }
    }
    return await replayFiles({ ...values, policy: values.policy }, loaded, files, examples, io);
  } finally {
    for (const file of files) await file.handle.close();
    for (const spool of spools) await rm(spool, { recursive: true, force: true });
  }
}

/** Whether a file starts with UTF-16's byte order mark, little- or big-endian. */
function isUtf16(start: Buffer): boolean {
  return (start[0] === 0xff && start[1] === 0xfe) || (start[0] === 0xfe && start[1] === 0xff);
}

/** A records file as the user named it: `-` is stdin. */
function nameOf(file: string): string {
  return file === "-" ? "stdin (-)" : file;
}

/** A record file opened and checked: the bytes the check read, and the SHA-256 of each block. */
interface CheckedFile {
  readonly name: string;
  readonly handle: FileHandle;
  /** The file's identity (its copy's for stdin and pipes), to read a file named twice once. */
  readonly dev: number;
  readonly ino: number;
  bytes: number;
  readonly digests: Buffer[];
}

/** A file whose bytes checked were not those read again to replay it (rewritten or truncated). */
class FileChanged extends Error {
  constructor(readonly file: string) {
    super(`${file} changed after it was checked`);
  }
}

/**
 * The bytes read, in blocks of BLOCK bytes from the start of the file (the last one shorter),
 * whatever sizes the reads return: the check and the replay cut a file at the same offsets.
 */
async function* blocksOf(reads: AsyncIterable<Buffer>): AsyncGenerator<Buffer> {
  let held: Buffer[] = [];
  let size = 0;
  for await (const read of reads) {
    let rest = read;
    while (size + rest.length >= BLOCK) {
      const cut = BLOCK - size;
      yield held.length === 0 ? rest.subarray(0, cut) : Buffer.concat([...held, rest.subarray(0, cut)]);
      held = [];
      size = 0;
      rest = rest.subarray(cut);
    }
    if (rest.length > 0) {
      held.push(rest);
      size += rest.length;
    }
  }
  if (size > 0) yield Buffer.concat(held);
}

const digestOf = (block: Buffer) => createHash("sha256").update(block).digest();

/** UTF-8 text of the blocks, as a read stream with `encoding: "utf8"` decodes it. */
async function* decoded(blocks: AsyncIterable<Buffer>): AsyncGenerator<string> {
  const decoder = new StringDecoder("utf8");
  for await (const block of blocks) yield decoder.write(block);
  const last = decoder.end();
  if (last !== "") yield last;
}

/**
 * The records of the files checked, read again up to where the check stopped. Each block is
 * compared with the check's before any of its text is read, so no record is judged (no model
 * called) that the check did not see: throws FileChanged at the first block that differs, or
 * at the end of a file cut shorter.
 */
async function* recordsOf(files: readonly CheckedFile[]): AsyncGenerator<ReplayRecord> {
  for (const { name, handle, bytes, digests } of files) {
    if (bytes === 0) continue;
    const stream = handle.createReadStream({
      autoClose: false,
      start: 0,
      end: bytes - 1,
      highWaterMark: BLOCK,
    });
    const verified = async function* () {
      let n = 0;
      for await (const block of blocksOf(stream)) {
        const checked = digests[n];
        n += 1;
        if (checked === undefined || !digestOf(block).equals(checked)) throw new FileChanged(name);
        yield block;
      }
      if (n !== digests.length) throw new FileChanged(name);
    };
    yield* streamRecords(decoded(verified()), createTally(0), constants.MAX_STRING_LENGTH);
  }
}

async function replayFiles(
  values: { policy: string; json?: boolean | undefined; "with-judge"?: boolean | undefined },
  loaded: LoadedPolicy,
  files: readonly CheckedFile[],
  examples: number,
  io: CommandIo,
): Promise<number> {
  const candidate = loaded.policy;
  // A model whose key or URL is unset fails every call: say so before the report counts them.
  if (values["with-judge"]) {
    const keys = loaded.warnings.filter((w) => /^\$\.models\b.*\.(?:apiKey|url)$/.test(w.path));
    if (keys.length > 0) io.err(`${formatIssues(keys)}\n`);
  }
  const clock = { now: Date.now, monotonic: () => performance.now() };
  // --with-judge calls the candidate's models (through the egress guard, under its egress rules);
  // forward rules are never replayed.
  const egress = values["with-judge"] ? createUndiciEgress({ policy: () => candidate.egress }) : undefined;
  const remote = egress
    ? promptsOnly(
        createRemoteActions({
          egress: egress.send,
          env: envReaderOf(process.env),
          clock,
          sha256: nodeSha256,
        }),
      )
    : undefined;
  let report: ImpactReport;
  try {
    report = await replayImpact(
      { clock, newId: randomUUID, sha256: nodeSha256, remote },
      candidate,
      recordsOf(files),
      { examples },
    );
  } catch (e) {
    if (!(e instanceof FileChanged)) throw e;
    io.err(
      `hookgate: ${e.file} changed after it was checked (rewritten or truncated, not appended to): what was replayed is not what was checked, no report; replay a copy no one writes to\n`,
    );
    return 1;
  } finally {
    await egress?.close();
  }
  io.out(
    values.json
      ? `${JSON.stringify({ candidate: values.policy, ...report }, null, 2)}\n`
      : describeImpact(values.policy, report, examples),
  );
  return 0;
}

/**
 * Records are read a line at a time (a pretty-printed value, as `wrangler tail` prints, a value
 * at a time; a Logs Insights export, one document, a member at a time): past the longest string
 * V8 makes (about 512 MiB) one cannot be held.
 */
const tooLargeFix = (e: RecordTooLarge) =>
  e.spansLines
    ? `the JSON value from line ${e.line} on holds a member larger than replay reads in one piece (${MIB} MiB)`
    : `line ${e.line} is longer than replay reads in one piece (${MIB} MiB): a hook record is one line, far shorter`;

/**
 * Bytes read at a time (fewer, larger reads than a stream's 64 KiB; a record is a line of them),
 * and the blocks whose SHA-256 the replay compares with the check's.
 */
const BLOCK = 2 ** 20;

const MIB = Math.round(constants.MAX_STRING_LENGTH / 2 ** 20);

const arrow = (change: string) => change.replace("->", " -> ");

function describeImpact(file: string, report: ImpactReport, examples: number): string {
  const notCompared =
    report.notRun.records +
    report.judgeFailed.records +
    report.eventOmitted.records +
    report.teamUnknown.records +
    report.unjudged.records;
  const lines = [
    `replayed ${report.records} record${report.records === 1 ? "" : "s"} against ${file} (policy ${report.policy})`,
    `recorded under ${
      Object.entries(report.recordedPolicies)
        .map(([hash, n]) => `policy ${shown(hash)} (${n})`)
        .join(", ") || "no policy"
    }`,
    `${report.changed} changed, ${report.unchanged} unchanged${notCompared > 0 ? `, ${notCompared} not compared` : ""}`,
  ];
  if (report.changed > 0) {
    lines.push("", "by change:");
    const width = longest(Object.keys(report.byChange).map((c) => arrow(c).length));
    for (const [change, n] of Object.entries(report.byChange))
      lines.push(`  ${arrow(change).padEnd(width)}  ${n}`);
    section(lines, "by rule", report.byRule);
    section(lines, "by team", report.byTeam);
    section(lines, "by tool", report.byTool);
  }
  if (report.masked.compared > 0) {
    lines.push(
      "",
      `recorded masked (${report.masked.compared} of the records compared, ${report.masked.records} of the changes): a value in their event was masked or cut at 2,000 characters, so the candidate judged less than was answered live and may answer the live event otherwise${report.masked.records > 0 ? ` (changes marked "(masked)" below)` : ""}:`,
    );
    for (const [change, n] of Object.entries(report.masked.byChange)) lines.push(`  ${arrow(change)}  ${n}`);
  }
  if (report.notRun.records > 0) {
    lines.push(
      "",
      `not compared (${report.notRun.records}): they reach prompt or forward rules, which replay does not run:`,
    );
    for (const [rule, n] of Object.entries(report.notRun.byRule)) lines.push(`  ${rule}  ${n}`);
  }
  if (report.judgeFailed.records > 0) {
    lines.push(
      "",
      `not compared (${report.judgeFailed.records}): their prompt rules' model calls failed, so they answered their onError:`,
    );
    for (const [rule, n] of Object.entries(report.judgeFailed.byRule)) lines.push(`  ${rule}  ${n}`);
  }
  if (report.eventOmitted.records > 0) {
    lines.push(
      "",
      `not compared (${report.eventOmitted.records}): their event was too large for a log line (over ${RECORD_LOG_BYTES / 1024} KiB of record), so it was recorded without it; answered live:`,
    );
    for (const [decision, n] of Object.entries(report.eventOmitted.byDecision))
      lines.push(`  ${decision}  ${n}`);
  }
  if (report.unjudged.records > 0) {
    lines.push(
      "",
      `not compared (${report.unjudged.records}): the candidate cannot judge their event (masked or cut, edited, or from a version that took what this one refuses), so it answered its fail mode:`,
    );
    for (const [code, n] of Object.entries(report.unjudged.byError)) lines.push(`  ${shown(code)}  ${n}`);
  }
  if (report.teamUnknown.records > 0) {
    lines.push(
      "",
      `not compared (${report.teamUnknown.records}): their team is no team of the candidate's tokens, so live their hooks are refused (auth.onFailure) unless the candidate gives their token to another team:`,
    );
    for (const [team, n] of Object.entries(report.teamUnknown.byTeam)) lines.push(`  ${shown(team)}  ${n}`);
  }
  if (Object.keys(report.shadow).length > 0) {
    lines.push("", "shadow rules of the candidate (would have decided, never sent):");
    for (const [rule, counts] of Object.entries(report.shadow)) {
      lines.push(
        `  ${rule}: ${Object.entries(counts)
          .map(([d, n]) => `${d} ${n}`)
          .join(", ")}`,
      );
    }
  }
  if (report.changed > 0 && examples > 0) {
    lines.push("", `examples (first ${examples} of each change):`);
    for (const [change, list] of Object.entries(report.examples)) {
      lines.push(`  ${arrow(change)}`);
      for (const example of list) lines.push(...describeExample(example));
    }
  }
  return `${lines.join("\n")}\n`;
}

function section(lines: string[], title: string, nested: Record<string, Counts>): void {
  lines.push("", `${title}:`);
  const total = (counts: Counts) => Object.values(counts).reduce((s, n) => s + n, 0);
  const width = longest(Object.keys(nested).map((k) => shown(k).length));
  const digits = longest(Object.values(nested).map((c) => String(total(c)).length));
  for (const [name, counts] of Object.entries(nested)) {
    const key = shown(name);
    const detail = Object.entries(counts)
      .map(([change, n]) => `${arrow(change)} ${n}`)
      .join(", ");
    lines.push(`  ${key.padEnd(width)}  ${String(total(counts)).padStart(digits)}  (${detail})`);
  }
}

/** The largest of the lengths (a list as long as a report's teams or tools: no spread). */
function longest(lengths: readonly number[]): number {
  return lengths.reduce((a, b) => Math.max(a, b), 0);
}

/**
 * Text from a record (a team, a tool name, a reason: an agent's, a model's or a downstream
 * server's to choose) with its control characters escaped: printed raw, an ESC sequence from a
 * recorded event drove the terminal replay runs in, a line break forged report lines, and a
 * bidirectional override or isolate reordered one (judge.ts clears a model's reason of the same).
 */
const shown = escapeControls;

function describeExample(example: ImpactExample): string[] {
  const input = example.input === undefined ? "" : ` ${shown(shorten(JSON.stringify(example.input), 100))}`;
  const said = (side: ImpactExample["before"]) =>
    `${side.decision}${side.reason ? ` "${shown(shorten(side.reason, 80))}"` : ""}${side.rules.length > 0 ? ` [${shown(side.rules.join(", "))}]` : ""}`;
  return [
    `    ${shown(`${example.time} ${example.team} ${example.client} ${example.event}${example.tool ? ` ${example.tool}` : ""}`)}${input}${example.masked ? " (masked)" : ""}`,
    `      was ${said(example.before)}`,
    `      now ${said(example.after)}`,
  ];
}

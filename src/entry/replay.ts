/**
 * `hookgate replay --policy CANDIDATE RECORDS...`: judges recorded traffic against a candidate
 * policy with no side effects and prints what would change. Impact is information, so the exit
 * code is 0 whatever changed; 1 only when the policy or the records cannot be read.
 */
import { constants } from "node:buffer";
import { randomUUID } from "node:crypto";
import { readFile } from "node:fs/promises";
import { parseArgs } from "node:util";
import { createUndiciEgress } from "../adapters/egress/undici.js";
import { nodeSha256 } from "../adapters/hash/node-crypto.js";
import { formatIssues, loadPolicyFile } from "../adapters/policy-source/file.js";
import type { ReplayRecord } from "../app/handle-hook.js";
import { createRemoteActions } from "../app/remote-actions.js";
import {
  type Counts,
  type ImpactExample,
  type ImpactReport,
  promptsOnly,
  readRecords,
  replayImpact,
} from "../app/replay.js";
import { errorMessage } from "../core/errors.js";
import { shorten } from "../core/truncate.js";
import type { CommandIo } from "./policy-test.js";
import { UsageError } from "./usage-error.js";

export async function replayCommand(
  args: readonly string[],
  io: CommandIo & { readonly stdin: () => Promise<Uint8Array> },
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
  const examples = Number(values.examples ?? "3");
  if (!/^\d+$/.test(values.examples ?? "3"))
    throw new UsageError(`--examples ${JSON.stringify(values.examples)} is not a count`);

  const loaded = await loadPolicyFile(values.policy, {
    env: (name) => process.env[name],
    sha256: nodeSha256,
  });
  if (!loaded.ok) {
    io.err(`${formatIssues(loaded.error)}\nhookgate: ${values.policy}: invalid policy\n`);
    return 1;
  }
  const records: ReplayRecord[] = [];
  for (const file of positionals) {
    let text: string;
    try {
      text = file === "-" ? Buffer.from(await io.stdin()).toString("utf8") : await readFile(file, "utf8");
    } catch (e) {
      io.err(`hookgate: cannot read ${file}: ${tooLarge(e) ? tooLargeFix(file) : errorMessage(e)}\n`);
      return 1;
    }
    const read = readRecords(text);
    if (read.invalid.length > 0) {
      const shown = read.invalid.slice(0, 10).map((i) => `${file}: ${i.at}: ${i.problem}`);
      const more = read.invalid.length > 10 ? `\n… and ${read.invalid.length - 10} more` : "";
      io.err(
        `${shown.join("\n")}${more}\nhookgate: ${file}: ${read.invalid.length} malformed hook record${read.invalid.length > 1 ? "s" : ""}\n`,
      );
      return 1;
    }
    if (read.records.length === 0) {
      const held =
        read.skipped > 0 ? `${read.skipped} other line${read.skipped > 1 ? "s" : ""}` : "it is empty";
      io.err(
        `hookgate: ${file} holds no hook records (${held}): record with \`hookgate serve --record FILE\`, or export the "hook record" log lines (see README)\n`,
      );
      return 1;
    }
    const { count, firstLine } = read.unparsed;
    if (count > 0) {
      io.err(
        `hookgate: ${file}: ${count} line${count > 1 ? "s" : ""} that look${count > 1 ? "" : "s"} like a record but ${count > 1 ? "do" : "does"} not parse, first at line ${firstLine} (cut short?); not replayed\n`,
      );
    }
    // One by one: spread into push, a file's records are as many arguments, and a file of
    // 200,000 records (43 MB of short ones) overflowed the stack.
    for (const record of read.records) records.push(record);
  }

  const candidate = loaded.value.policy;
  // A model whose key is unset fails every call: say so before the report counts them.
  if (values["with-judge"]) {
    const keys = loaded.value.warnings.filter((w) => /^\$\.models\b.*\.apiKey$/.test(w.path));
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
          env: (name) => process.env[name],
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
      records,
      { examples },
    );
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
 * A file is read whole, as one string: past the longest string V8 makes (about 512 MiB of
 * records) the read fails with "Invalid string length", and past 2 GiB Node refuses it. serve
 * --record writes one file until it is rotated (SIGHUP), so a long recording gets there.
 */
function tooLarge(e: unknown): boolean {
  const code = (e as { code?: unknown } | undefined)?.code;
  return (
    code === "ERR_FS_FILE_TOO_LARGE" ||
    code === "ERR_STRING_TOO_LONG" ||
    (e instanceof RangeError && /string length/i.test(e.message))
  );
}

const tooLargeFix = (file: string) =>
  `it is larger than replay reads in one piece (${Math.round(constants.MAX_STRING_LENGTH / 2 ** 20)} MiB): split it by lines (split -l 500000 ${file === "-" ? "FILE" : file} part-) and pass the parts`;

const arrow = (change: string) => change.replace("->", " -> ");

function describeImpact(file: string, report: ImpactReport, examples: number): string {
  const notCompared = report.notRun.records + report.judgeFailed.records;
  const lines = [
    `replayed ${report.records} records against ${file} (policy ${report.policy})`,
    `recorded under ${
      Object.entries(report.recordedPolicies)
        .map(([hash, n]) => `policy ${hash} (${n})`)
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
  const width = longest(Object.keys(nested).map((k) => k.length));
  const digits = longest(Object.values(nested).map((c) => String(total(c)).length));
  for (const [key, counts] of Object.entries(nested)) {
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

function describeExample(example: ImpactExample): string[] {
  const input = example.input === undefined ? "" : ` ${shorten(JSON.stringify(example.input), 100)}`;
  const said = (side: ImpactExample["before"]) =>
    `${side.decision}${side.reason ? ` "${shorten(side.reason, 80)}"` : ""}${side.rules.length > 0 ? ` [${side.rules.join(", ")}]` : ""}`;
  return [
    `    ${example.time} ${example.team} ${example.client} ${example.event}${example.tool ? ` ${example.tool}` : ""}${input}`,
    `      was ${said(example.before)}`,
    `      now ${said(example.after)}`,
  ];
}

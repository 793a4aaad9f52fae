/**
 * `hookgate test POLICY CASES...`: runs a policy's tests. Each case is judged as simulate
 * judges (no audit, no notify, no model calls or forwards: prompt and forward rules show as
 * not run), as the case's team without a token. Exit 0 when every case passes, 1 otherwise.
 */
import { randomUUID } from "node:crypto";
import { readFile } from "node:fs/promises";
import { dirname, resolve } from "node:path";
import { parseArgs } from "node:util";
import { nodeSha256 } from "../adapters/hash/node-crypto.js";
import { readJsonText, withYamlHint } from "../adapters/policy-source/file.js";
import { createJudge } from "../app/replay.js";
import { DEFAULT_TEAM, listTeams, teamsOf } from "../core/auth.js";
import { closestName } from "../core/closest-name.js";
import { errorMessage } from "../core/errors.js";
import { jsonProblem } from "../core/json-text.js";
import { jsonPath, type Policy, type PolicyIssue } from "../core/policy.js";
import {
  answerContext,
  type CasesDocument,
  caseBody,
  checkExpectation,
  type PolicyCase,
  parseCases,
  ruleCoverage,
} from "../core/policy-cases.js";
import { strictUtf8 } from "../core/strict-utf8.js";
import { bodyFromBytes } from "../http/read-body.js";
import { holdsCases, loadCommandPolicy } from "./command-policy.js";
import { UsageError } from "./usage-error.js";

export interface CommandIo {
  readonly out: (text: string) => void;
  readonly err: (text: string) => void;
}

/** The files given the other way round: a cases file where the policy goes, said after its problems. */
function casesFirstHint(policyPath: string, issues: readonly PolicyIssue[]): string {
  return holdsCases(issues)
    ? `${policyPath} holds "cases", so it is a cases file: the policy comes first (hookgate test POLICY CASES.json...)\n`
    : "";
}

interface LoadedCase {
  readonly file: string;
  readonly index: number;
  readonly spec: PolicyCase;
  readonly document: CasesDocument;
  /** The event file's bytes as they are, or the JSON of a case's own event. */
  readonly body: Uint8Array;
}

/** Said of a rule whose model or downstream hook a case would have asked. */
const NOT_RUN = "was not run: hookgate test calls no model or downstream hook";

export async function policyTestCommand(args: readonly string[], io: CommandIo): Promise<number> {
  const { values, positionals } = parseArgs({
    args: [...args],
    allowPositionals: true,
    options: { coverage: { type: "boolean" }, json: { type: "boolean" } },
  });
  const [policyPath, ...caseFiles] = positionals;
  if (!policyPath || caseFiles.length === 0) throw new UsageError("test takes a policy file and cases files");
  // On stderr, as every command but check says it: no case ran, so there is no report.
  const loaded = await loadCommandPolicy(
    policyPath,
    (report, issues) => io.err(`${report}${casesFirstHint(policyPath, issues)}`),
    1,
  );
  if (typeof loaded === "number") return loaded;
  const policy = loaded.policy;

  const cases: LoadedCase[] = [];
  const problems: string[] = [];
  for (const file of caseFiles) {
    const result = await loadCases(file);
    if (result.problems.length > 0) problems.push(...result.problems.map((p) => `${file}: ${p}`));
    cases.push(...result.cases);
  }
  // A team no token authenticates as tests what cannot happen (a typo passes `expect: none`).
  // A case that names no team is judged as the only team a caller can be (`default` without
  // auth); with several, guessing one would test rules for a caller the author did not mean.
  const teams = teamsOf(policy.document);
  const teamOf = new Map<LoadedCase, string>();
  for (const c of cases) {
    const named = c.spec.team ?? c.document.team;
    const at = `${c.file}: $.cases[${c.index}]`;
    if (named !== undefined) {
      if (teams.has(named)) teamOf.set(c, named);
      else problems.push(`${at}: team "${named}" is no team of ${policyPath} (${listTeams(teams)})`);
    } else if (teams.size === 1) {
      teamOf.set(c, [...teams][0] ?? DEFAULT_TEAM);
    } else if (teams.size === 0) {
      problems.push(
        `${at}: names no team, and ${policyPath} has no auth tokens, so no caller has a team to judge it as`,
      );
    } else {
      problems.push(
        `${at}: names no team, and ${policyPath} has several (${listTeams(teams)}): add "team" to the case or the file`,
      );
    }
  }
  if (problems.length > 0) {
    io.err(
      `${problems.join("\n")}\ncases invalid (${problems.length} problem${problems.length > 1 ? "s" : ""})\n`,
    );
    return 1;
  }

  const judge = createJudge(
    { clock: { now: Date.now, monotonic: () => performance.now() }, newId: randomUUID, sha256: nodeSha256 },
    policy,
  );
  const exercised = new Set<string>();
  const results: CaseResult[] = [];
  for (const c of cases) {
    const outcome = await judge({
      // Read as `serve` reads a request's body: its size limit, UTF-8 and nesting checked.
      body: await bodyFromBytes(c.body, policy.defaults.maxBodyBytes),
      client: c.spec.client ?? c.document.client,
      team: teamOf.get(c) ?? DEFAULT_TEAM,
    });
    const audit = outcome.audit;
    for (const id of audit.rules) exercised.add(id);
    for (const s of audit.shadow) exercised.add(s.rule);
    const failures = checkExpectation(
      c.spec.expect,
      {
        decision: audit.decision,
        reason: audit.reason,
        context: answerContext(outcome.answer, audit.event),
        rules: audit.rules,
        shadowed: audit.shadow.map((s) => s.rule),
        error: outcome.error,
        event: audit.event,
      },
      policy.rules,
    );
    const notes: string[] = [];
    // What the client does with the decision, where that differs (event-capabilities.ts
    // `clientDecision`): a deepcode case passing with "ask" is a prompt deepcode never shows.
    if (audit.clientDecision !== undefined) {
      const acted = audit.clientDecision === "none" ? "no decision" : `"${audit.clientDecision}"`;
      notes.push(
        `${audit.client} does not act on "${audit.decision}" on ${audit.event}: it goes on as with ${acted}`,
      );
    }
    for (const p of audit.pending.filter((p) => p.outcome === "NOT_RUN")) {
      notes.push(`${p.rule} (${p.action}) ${NOT_RUN}`);
    }
    // A shadow one applies (the case's `shadowed` lists it) with no verdict: its model was never asked.
    for (const s of audit.shadow.filter((s) => s.outcome === "NOT_RUN")) {
      const action = policy.rules.find((r) => r.id === s.rule)?.action?.kind;
      notes.push(`${s.rule} (shadow ${action}) ${NOT_RUN}`);
    }
    const result: CaseResult = {
      name: c.spec.name ?? `${audit.event ?? "event"}${audit.tool ? ` ${audit.tool}` : ""}`,
      file: c.file,
      index: c.index,
      passed: failures.length === 0,
      failures,
      notes,
    };
    results.push(result);
    // Each case's lines as it runs; with --json, the one document at the end.
    if (!values.json) io.out(describeCase(result));
  }
  const passed = results.filter((r) => r.passed).length;
  const failed = results.length - passed;
  // The rules no case applied, and the counts both outputs give.
  const coverage = values.coverage ? coverageOf(policy.rules, exercised) : undefined;
  if (values.json) {
    const report = {
      policy: policyPath,
      passed,
      failed,
      cases: results,
      ...(coverage && { coverage }),
    };
    io.out(`${JSON.stringify(report, null, 2)}\n`);
    return failed === 0 ? 0 : 1;
  }
  io.out(`${passed} passed, ${failed} failed\n`);
  if (coverage) {
    io.out(`coverage: ${coverage.exercised} of ${coverage.active} rules exercised\n`);
    for (const id of coverage.uncovered) io.out(`  not exercised: ${id}\n`);
    for (const id of coverage.off) io.out(`  off (never evaluated): ${id}\n`);
  }
  return failed === 0 ? 0 : 1;
}

/** `--coverage`: the rules not `off`, how many of them a case applied, and the rule ids of each kind. */
function coverageOf(rules: Policy["rules"], exercised: ReadonlySet<string>) {
  const { uncovered, off } = ruleCoverage(rules, exercised);
  const active = rules.length - off.length;
  return { active, exercised: active - uncovered.length, uncovered, off };
}

/** One case's outcome: what its lines say, and `--json`'s entry for it. */
interface CaseResult {
  readonly name: string;
  readonly file: string;
  readonly index: number;
  readonly passed: boolean;
  readonly failures: readonly string[];
  readonly notes: readonly string[];
}

function describeCase(result: CaseResult): string {
  const lines = [`${result.passed ? "PASS" : "FAIL"}  ${result.name}`];
  for (const failure of result.failures) lines.push(`      ${failure}`);
  if (!result.passed) lines.push(`      at ${result.file} $.cases[${result.index}]`);
  for (const note of result.notes) lines.push(`      note: ${note}`);
  return `${lines.join("\n")}\n`;
}

/** A cases file with every event read; problems carry their JSON path. */
async function loadCases(file: string): Promise<{ cases: LoadedCase[]; problems: string[] }> {
  const text = await readJsonText(file);
  if (!text.ok) return { cases: [], problems: [`$: ${text.error.message}`] };
  const parsed = parseCases(text.value);
  if (!parsed.ok)
    return { cases: [], problems: withYamlHint(file, text.value, parsed.error, "test cases").map(describe) };
  const document = parsed.value;
  const cases: LoadedCase[] = [];
  const problems: string[] = [];
  for (const [index, spec] of document.cases.entries()) {
    if (typeof spec.event !== "string") {
      const typo = misspeltOverlay(spec.event, spec.with, index);
      if (typo !== undefined) problems.push(typo);
      else cases.push({ file, index, spec, document, body: encoded(caseBody(spec.event, spec.with)) });
      continue;
    }
    const eventPath = resolve(dirname(file), spec.event);
    const at = `$.cases[${index}].event`;
    let eventBytes: Uint8Array;
    try {
      eventBytes = await readFile(eventPath);
    } catch (e) {
      problems.push(`${at}: cannot read ${eventPath}: ${errorMessage(e)}`);
      continue;
    }
    if (spec.with === undefined) {
      // The file's bytes as they are: a recorded body is sent exactly as the client sent it.
      cases.push({ file, index, spec, document, body: eventBytes });
      continue;
    }
    // Strictly, as the gateway reads a body: decoded leniently, a byte that is no UTF-8 became
    // U+FFFD and the case was judged, where the same file without "with" is refused.
    const eventText = strictUtf8(eventBytes);
    if (eventText === undefined) {
      problems.push(`${at}: ${eventPath} is not UTF-8, as a hook body must be; save it as UTF-8`);
      continue;
    }
    let event: unknown;
    try {
      event = JSON.parse(eventText);
    } catch (e) {
      problems.push(`${at}: ${eventPath} is not valid JSON: ${jsonProblem(e, eventText)}`);
      continue;
    }
    if (event === null || typeof event !== "object" || Array.isArray(event)) {
      problems.push(`${at}: ${eventPath} does not hold a JSON object, so "with" cannot be laid over it`);
      continue;
    }
    const typo = misspeltOverlay(event as Record<string, unknown>, spec.with, index);
    if (typo !== undefined) {
      problems.push(typo);
      continue;
    }
    cases.push({
      file,
      index,
      spec,
      document,
      body: encoded(caseBody(event as Record<string, unknown>, spec.with)),
    });
  }
  return { cases, problems };
}

/**
 * A `with` key the event lacks that is a near miss of one it has (`tool_inptu`): laid over the
 * event it would add a field and leave the one meant as recorded, so the case would test the
 * event unchanged. A key of four characters or fewer is taken as meant (few edits make any), and
 * so is one beside the field it is near: `with` sets that field already, and renamed to it, the
 * key would be there twice.
 */
function misspeltOverlay(
  event: Readonly<Record<string, unknown>>,
  overlay: Readonly<Record<string, unknown>> | undefined,
  index: number,
): string | undefined {
  const keys = Object.keys(overlay ?? {});
  const recorded = Object.keys(event).filter((field) => !keys.includes(field));
  for (const key of keys) {
    if (Object.hasOwn(event, key) || key.length <= 4) continue;
    const meant = closestName(key, recorded);
    if (meant !== undefined)
      return `$.cases[${index}].with${jsonPath([key]).slice(1)}: the event has no "${key}" (it would be added, and ${meant} sent as recorded): did you mean ${meant}?`;
  }
  return undefined;
}

const encoded = (text: string) => new TextEncoder().encode(text);
const describe = (issue: PolicyIssue) => `${issue.path}: ${issue.message}`;

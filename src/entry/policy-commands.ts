/**
 * The commands that load a policy in this process: `serve` (the gateway), `check` and
 * `simulate`. cli.ts imports this module only for them, as it imports every command's module
 * only for that command: the policy compiler, Hono and SQLite are most of the CLI's start-up
 * (`hookgate send` is a command hook's whole run).
 */
import { randomUUID } from "node:crypto";
import { readFile } from "node:fs/promises";
import { parseArgs } from "node:util";
import { nodeSha256 } from "../adapters/hash/node-crypto.js";
import { formatIssues, invalidPolicyReport, PolicyLoadError } from "../adapters/policy-source/file.js";
import { handleHook } from "../app/handle-hook.js";
import { errorMessage } from "../core/errors.js";
import { sniffEventName } from "../core/events.js";
import { DIALECTS, type Dialect } from "../core/hook-event.js";
import { jsonProblem } from "../core/json-text.js";
import type { Policy } from "../core/policy.js";
import { lintPolicy } from "../core/policy-lint.js";
import { envReaderOf } from "../core/secret-ref.js";
import { simulation } from "../http/app.js";
import { bodyFromBytes } from "../http/read-body.js";
import { notOneOf, refuseEmpty } from "./arg-errors.js";
import type { Io } from "./cli.js";
import { holdsCases, loadCommandPolicy } from "./command-policy.js";
import { catchEarlyStop, releaseEarlyStop, takeEarlyHangup } from "./early-hangup.js";
import { NO_HTTP_IN_CLAUDE_CODE } from "./init.js";
import { startGateway } from "./node.js";
import { type Env, tokenFromEnv } from "./send.js";
import { shellQuote } from "./shell-word.js";
import { UsageError } from "./usage-error.js";

export async function serveCommand(args: readonly string[], io: Io): Promise<number> {
  const { values } = parseArgs({
    args: [...args],
    options: {
      policy: { type: "string" },
      host: { type: "string" },
      port: { type: "string" },
      "data-dir": { type: "string" },
      record: { type: "string" },
    },
  });
  if (!values.policy) throw new UsageError("serve needs --policy FILE");
  // Digits only: Number() reads "" as 0 (a random port, where hooks point at 8787) and "0x50" as 80.
  const port = Number(values.port ?? "8787");
  if (!/^\d{1,5}$/.test(values.port ?? "8787") || port > 65535)
    throw new UsageError(`--port ${JSON.stringify(values.port)} is not a port (0 to 65535)`);
  // An empty --host (an unset $HOST) would listen on every address, with no Host check.
  if (values.host !== undefined && values.host.trim() === "")
    throw new UsageError("--host is empty: give an address to listen on (127.0.0.1 by default)");
  if (values.host !== undefined) checkHostForm(values.host);
  // "cannot use the data dir  (ENOENT…)" named no option.
  refuseEmpty(
    "--data-dir",
    values["data-dir"],
    "give the folder for the queue and sessions, or leave it out for .hookgate",
  );
  refuseEmpty("--record", values.record, "give the file to record hooks to, or leave --record out");
  // SIGHUP's default is to end the process: it is caught from the start, and one that comes
  // while the policy first loads is a reload once the gateway runs (a deploy may send it early).
  let reload: (() => void) | undefined;
  let reloadAsked = false;
  process.on("SIGHUP", () => {
    if (reload) reload();
    else reloadAsked = true;
  });
  // One that came before this command ran, while the CLI's modules loaded (bin.ts).
  if (takeEarlyHangup()) reloadAsked = true;
  // A SIGTERM or SIGINT from here until it listens ends it saying so (bin.ts, early-hangup.ts);
  // caught here too when serve runs without bin.ts.
  catchEarlyStop();
  const gateway = await startGateway({
    policyPath: values.policy,
    host: values.host ?? "127.0.0.1",
    port,
    dataDir: values["data-dir"] ?? ".hookgate",
    recordPath: values.record,
  }).catch((e: unknown) => {
    if (!(e instanceof PolicyLoadError)) throw e;
    io.err(invalidPolicyReport(e.path, e.issues));
    return undefined;
  });
  if (gateway === undefined) return 1;
  reload = () => void gateway.reload();
  if (reloadAsked) reload();
  await new Promise<void>((resolve) => {
    // The first SIGTERM or SIGINT stops gracefully; a second one while it drains (a forward
    // still waiting on a slow team server, say) ends the process at once, as a second Ctrl-C
    // does elsewhere. What was answered is journaled already; the next start delivers it.
    let stopping = false;
    const stop = (signal: NodeJS.Signals) => {
      if (stopping) {
        gateway.halt(signal);
        process.exit(signal === "SIGINT" ? 130 : 143);
      }
      stopping = true;
      void gateway.close().finally(resolve);
    };
    releaseEarlyStop();
    process.on("SIGTERM", stop);
    process.on("SIGINT", stop);
  });
  return 0;
}

/**
 * A --host copied from a URL (`http://…`, `host:port`, `[::1]`) is a usage error saying what to
 * pass: listening on it failed with "no address of this machine", of 127.0.0.1 too.
 */
function checkHostForm(host: string): void {
  const shown = JSON.stringify(host);
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(host)) {
    let url: URL | undefined;
    try {
      url = new URL(host);
    } catch {
      // Said without the parts it could not find.
    }
    const name = url?.hostname.replace(/^\[(.*)\]$/, "$1");
    // As written: the URL parser drops a scheme's default port (`http://127.0.0.1:80`).
    const written = /^[^:]*:\/\/(?:[^@/?#]*@)?(?:\[[^\]]*\]|[^:/?#]*):(\d+)(?:[/?#]|$)/.exec(host)?.[1];
    const port = written === undefined ? "" : ` --port ${Number(written)}`;
    throw new UsageError(
      `--host ${shown} is a URL: pass ${name ? `--host ${name}${port}` : "the address or name alone, and the port with --port"}`,
    );
  }
  const withPort = /^(?:\[([^\]]*)\]|([^:[\]]+)):(\d+)$/.exec(host);
  if (withPort)
    throw new UsageError(
      `--host ${shown} has a port: pass --host ${withPort[1] ?? withPort[2]} --port ${withPort[3]}`,
    );
  const bracketed = /^\[([^\]]*)\]$/.exec(host);
  if (bracketed)
    throw new UsageError(`--host ${shown} is in brackets, as in a URL: pass --host ${bracketed[1]}`);
}

export async function checkCommand(args: readonly string[], io: Io): Promise<number> {
  const { positionals } = parseArgs({ args: [...args], allowPositionals: true });
  const [file] = positionals;
  if (!file || positionals.length > 1) throw new UsageError("check takes one policy file");
  const loaded = await loadCommandPolicy(
    file,
    (report, issues) =>
      io.out(
        holdsCases(issues)
          ? `${report}${file} holds "cases", so it is a cases file, not a policy: run hookgate test POLICY ${shellQuote(file)}\n`
          : report,
      ),
    1,
  );
  if (typeof loaded === "number") return loaded;
  const warnings = [...loaded.warnings, ...lintPolicy(loaded.policy, envReaderOf(process.env))];
  if (warnings.length > 0) io.out(`${formatIssues(warnings)}\n`);
  const policy = loaded.policy;
  io.out(
    `${file}: valid, ${count(policy.rules.length, "rule")}, ${count(warnings.length, "warning")}, policy ${policy.hash}\n`,
  );
  return 0;
}

export async function simulateCommand(args: readonly string[], io: Io): Promise<number> {
  const { values, positionals } = parseArgs({
    args: [...args],
    allowPositionals: true,
    options: {
      policy: { type: "string" },
      client: { type: "string" },
      token: { type: "string" },
      json: { type: "boolean" },
    },
  });
  if (!values.policy) throw new UsageError("simulate needs --policy FILE");
  const [file] = positionals;
  if (!file || positionals.length > 1) throw new UsageError("simulate takes one event file (or - for stdin)");
  const client = values.client;
  if (client !== undefined && !(DIALECTS as readonly string[]).includes(client)) {
    throw new UsageError(notOneOf("--client", client, DIALECTS));
  }
  const loaded = await loadCommandPolicy(values.policy, io.err, 1);
  if (typeof loaded === "number") return loaded;
  const bytes = file === "-" ? await io.stdin() : await readEventFile(file);
  const hookSends = hookTokenEnv(process.env, client as Dialect | undefined, bytes);
  const token = values.token ?? tokenFromEnv(hookSends, client)?.value;
  const outcome = await simulate(loaded.policy, bytes, client as Dialect | undefined, token);
  const result = simulation(outcome);
  if (values.json) {
    io.out(`${JSON.stringify(result, null, 2)}\n`);
    return 0;
  }
  io.out(describeSimulation(result));
  // The gateway tells a hook's sender no more (a body may hold a secret where it breaks); the
  // event here is the user's own file, to be mended by line and column.
  if (result.error?.code === "MALFORMED_JSON") {
    const problem = malformedAt(bytes);
    if (problem !== undefined)
      io.out(`hint: ${file === "-" ? "stdin" : file} is not valid JSON: ${problem}\n`);
  }
  // The error's advice is for a hook's settings; from here the token comes from the command line.
  if (token === undefined && result.error?.code === "AUTH_MISSING") {
    const name = client?.startsWith("deepagents") ? "HOOKGATE_AUTH" : "HOOKGATE_TOKEN";
    const unsent = hookSends === process.env ? undefined : tokenFromEnv(process.env, client);
    io.out(
      unsent
        ? `hint: simulate sent no token: ${unsent.name} is set, but ${client === "deepcode" ? "deepcode's" : "Claude Code's"} http hooks send HOOKGATE_TOKEN alone, so the hook gets this answer too: export HOOKGATE_TOKEN in the shell that starts the agent (or pass --token T)\n`
        : `hint: simulate sent no token: pass --token T, or export ${name} as the client's hook would\n`,
    );
  }
  return 0;
}

/**
 * The variables the client's hook, as init writes it, sends its token from: Claude Code's and
 * deepcode's http hooks HOOKGATE_TOKEN alone (a HOOKGATE_AUTH beside it never leaves, and the
 * live hook gets AUTH_MISSING, as doctor says); `hookgate send` (Claude Code's SessionStart and
 * Setup, and an event on no named route) HOOKGATE_TOKEN, else HOOKGATE_AUTH; the deepagents
 * adapter HOOKGATE_AUTH alone (`tokenFromEnv` reads only that one for its clients).
 */
function hookTokenEnv(env: Env, client: Dialect | undefined, bytes: Uint8Array): Env {
  const httpHook =
    client === "deepcode" ||
    (client === "claude-code" &&
      !NO_HTTP_IN_CLAUDE_CODE.has(sniffEventName(new TextDecoder().decode(bytes.subarray(0, 65536))) ?? ""));
  return httpHook ? { HOOKGATE_TOKEN: env.HOOKGATE_TOKEN } : env;
}

/** An event file's bytes, as a request would carry them; a file that cannot be read is named. */
async function readEventFile(file: string): Promise<Uint8Array> {
  try {
    return await readFile(file);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    const why =
      code === "ENOENT" ? "no such file" : code === "EISDIR" ? "it is a directory" : errorMessage(e);
    throw new Error(`cannot read the event file ${file}: ${why}`);
  }
}

export async function simulate(
  policy: Policy,
  bytes: Uint8Array,
  client: Dialect | undefined,
  token: string | undefined,
) {
  return handleHook(
    {
      policy: () => policy,
      clock: { now: Date.now, monotonic: () => performance.now() },
      newId: randomUUID,
      sha256: nodeSha256,
      logger: { log: () => undefined },
    },
    {
      body: await bodyFromBytes(bytes, policy.defaults.maxBodyBytes),
      contentType: "application/json",
      authorization: token === undefined ? undefined : `Bearer ${token}`,
      dialect: client,
    },
    { explain: true, audit: false, runRemote: false },
  );
}

/** Where an event's text stops being JSON, by line and column; none for one that parses (too deep). */
function malformedAt(bytes: Uint8Array): string | undefined {
  const text = new TextDecoder().decode(bytes);
  try {
    JSON.parse(text);
    return undefined;
  } catch (e) {
    return jsonProblem(e, text);
  }
}

function describeSimulation(result: ReturnType<typeof simulation>): string {
  const lines = [
    `status: ${result.answer.status}`,
    `content-type: ${result.answer.contentType ?? "(none)"}`,
    `body: ${result.answer.body === "" ? "(empty)" : result.answer.body}`,
    "",
    `client: ${result.client ?? "unknown"}  event: ${result.event ?? "unknown"}  team: ${result.team ?? "-"}`,
    `decision: ${result.decision}${result.reason ? ` (${result.reason})` : ""}`,
  ];
  if (result.error) lines.push(`error: ${result.error.code}: ${result.error.message}`);
  if (result.rules.length > 0) lines.push("rules:");
  for (const rule of result.rules) {
    const mark = rule.applied ? (rule.mode === "shadow" ? "~" : "+") : "-";
    lines.push(`  ${mark} ${rule.ruleId} [${rule.mode}]: ${rule.why}`);
  }
  // A shadow prompt or forward rule that was not called has no verdict: not "none".
  for (const s of result.shadowed)
    lines.push(
      s.outcome === "NOT_RUN" || s.outcome === "SKIPPED"
        ? `shadow: ${s.rule} was not run${s.detail ? ` (${s.detail})` : ""}`
        : `shadow: ${s.rule} would have decided ${s.decision}`,
    );
  for (const p of result.pending)
    lines.push(`pending: ${p.rule} (${p.action}): ${p.outcome}${p.detail ? ` (${p.detail})` : ""}`);
  // The gateway calls them, and their verdicts join the answer above.
  if (result.pending.some((p) => p.outcome === "NOT_RUN"))
    lines.push(
      "note: the answer above leaves out the prompt and forward rules not run; the gateway's also has their verdicts",
    );
  return `${lines.join("\n")}\n`;
}

const count = (n: number, noun: string) => `${n} ${noun}${n === 1 ? "" : "s"}`;

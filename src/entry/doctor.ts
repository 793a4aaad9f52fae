/**
 * `hookgate doctor --url URL [--client NAME] [--expect KIND] [--command CMD] [--timeout S]`:
 * from a developer's machine, checks what a hook needs, in order: the gateway answers
 * (GET /healthz), the token in the environment is accepted and which team it maps to
 * (GET /v1/whoami), and a sample PreToolUse (`rm -rf /` unless --command) gets the decision
 * the policy is expected to give (--expect, default deny). Prints each check with ✓ or ✗ and a
 * fix; exits 0 when all pass, 1 otherwise. Its requests take the agent's route to the gateway,
 * through the proxy of the environment unless NO_PROXY exempts it (agent-proxy.ts), as `send`'s
 * do, but for a loopback gateway behind a proxy on another machine: `send` posts to it directly,
 * and the checks stop at the failed proxy check, as the agent's http hooks fail there.
 *
 * `--url` is the hook URL from `hookgate init` or the gateway's base URL; the route (and so the
 * sample's dialect) is the URL's own, else `--client`'s, else Claude Code's.
 */
import { lookup } from "node:dns/promises";
import { readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import ipaddr from "ipaddr.js";
import {
  answerReader,
  CODING_FIX,
  type GatewayResult,
  gatewayRequest,
  leftCoded,
} from "../adapters/gateway-client/node.js";
import { clientRefusedRange } from "../core/egress/client-refused.js";
import { DIALECTS } from "../core/hook-event.js";
import { isRecord } from "../core/json-object.js";
import { proxyScheme, socksVersion } from "../core/proxy-scheme.js";
import { withoutUserinfo } from "../core/url-userinfo.js";
import { agentProxy, proxyFor, strandingProxy } from "./agent-proxy.js";
import { notOneOf } from "./arg-errors.js";
import {
  type CommandIo,
  clientIgnored,
  DEFAULT_SEND_TIMEOUT_SECONDS,
  type Env,
  gatewayBaseUrl,
  mistypedHookUrl,
  parseGatewayUrl,
  resolveHookUrl,
  routeClient,
  tokenFromEnv,
  unsendableToken,
} from "./send.js";
import { shellQuote } from "./shell-word.js";
import { UsageError } from "./usage-error.js";

const EXPECTATIONS = ["deny", "allow", "ask", "defer", "none"] as const;
type Expectation = (typeof EXPECTATIONS)[number];

interface Check {
  readonly ok: boolean;
  readonly line: string;
  readonly fix?: string;
  /** Failed, but the checks after it still tell something (a gateway that answers). */
  readonly goOn?: true;
}

/** Every address a host name resolves to, as the agent's own lookup would see them. */
export type Resolve = (host: string) => Promise<readonly string[]>;

const resolveAll: Resolve = async (host) => (await lookup(host, { all: true })).map((a) => a.address);

export async function doctorCommand(
  args: readonly string[],
  io: CommandIo,
  env: Env,
  resolve: Resolve = resolveAll,
): Promise<number> {
  const { values } = parseArgs({
    args: [...args],
    options: {
      url: { type: "string" },
      client: { type: "string" },
      expect: { type: "string" },
      command: { type: "string" },
      timeout: { type: "string" },
    },
  });
  if (!values.url) throw new UsageError("doctor needs --url (the hook URL, or the gateway's base URL)");
  const client = values.client;
  if (client !== undefined && !(DIALECTS as readonly string[]).includes(client)) {
    throw new UsageError(notOneOf("--client", client, DIALECTS));
  }
  const expect = (values.expect ?? "deny") as Expectation;
  if (!EXPECTATIONS.includes(expect)) {
    throw new UsageError(`${notOneOf("--expect", expect, EXPECTATIONS)}; none: no opinion`);
  }
  const seconds = Number(values.timeout ?? DEFAULT_SEND_TIMEOUT_SECONDS);
  if (!Number.isFinite(seconds) || seconds <= 0 || seconds > 600) {
    throw new UsageError(
      `--timeout ${values.timeout} is not a number of seconds more than 0 and at most 600`,
    );
  }
  try {
    parseGatewayUrl(values.url);
  } catch (e) {
    throw new UsageError((e as Error).message);
  }
  const hookUrl = resolveHookUrl(values.url, client ?? "claude-code");
  const routed = routeClient(hookUrl);
  const dialect =
    routed && (DIALECTS as readonly string[]).includes(routed) ? routed : (client ?? "claude-code");
  // As `send` says it: the checks below are of the URL's route, not of the client asked for.
  if (client !== undefined && dialect !== client) io.err(clientIgnored("doctor", dialect, client));
  const base = gatewayBaseUrl(values.url);
  const command = values.command ?? "rm -rf /";
  const timeoutMs = seconds * 1000;
  // The variable the client's hook sends: Claude Code's and deepcode's http hooks (as `init`
  // writes them) send HOOKGATE_TOKEN alone, the deepagents adapter HOOKGATE_AUTH alone. A
  // HOOKGATE_AUTH beside a missing HOOKGATE_TOKEN would pass here and fail in the agent.
  const token = tokenFromEnv(
    dialect.startsWith("deepagents") ? env : { HOOKGATE_TOKEN: env.HOOKGATE_TOKEN },
    dialect,
  );

  // Every route also answers under a prefix (a Worker path route), so a mistyped hook URL taken
  // for a base URL (`/v1/hook/claude-code`) would pass every check while the agent, posting to
  // the URL as written, gets a 404. hookgate's routes start at `/v1/`: a URL without a hook
  // route that holds it is no base. (A hook URL's prefix may: an API stage named `v1`.)
  // Then there is no hook URL to derive, and no sample to send, and the header names only what
  // was given: no dialect, which for `/v1/hook/deepcode` would read claude-code's.
  const mistyped = mistypedHookUrl(values.url, client);
  // The checks below take the agent's route to the gateway, as `send` does: through the proxy of
  // its environment unless NO_PROXY exempts the host. A check that connected directly passed
  // while every hook failed at the proxy (a 407, a proxy that cannot reach the gateway).
  const via = proxyFor(hookUrl, dialect, env);
  io.out(
    mistyped
      ? `hookgate doctor: ${base}\n`
      : `hookgate doctor: gateway ${base}, hook ${hookUrl} (${dialect}), ${routeText(hookUrl, dialect, env, via)}\n`,
  );
  const curlrc = dialect.startsWith("deepagents") ? curlConfigNote(env) : undefined;
  if (curlrc !== undefined && !mistyped) io.out(`note: ${curlrc}\n`);
  const checks: Check[] = [];
  const print = (check: Check) => {
    checks.push(check);
    io.out(`${check.ok ? "✓" : "✗"} ${check.line}\n${check.fix ? `    fix: ${check.fix}\n` : ""}`);
  };

  if (mistyped) {
    print({
      ok: false,
      line: `hook URL: ${base} ${mistyped.problem}`,
      fix: mistyped.fix,
    });
    print({ ok: false, line: "token: not checked (the hook URL is mistyped)" });
    print({ ok: false, line: "sample decision: not checked (the hook URL is mistyped)" });
    return 1;
  }
  // A loopback check that passes (it names the older releases that fail) yields to a failed one.
  const loopback = loopbackThroughProxy(hookUrl, dialect, env, via);
  const refused =
    loopback?.ok === false
      ? loopback
      : ((await clientRefusedAnswers(hookUrl, dialect, env, resolve)) ?? loopback);
  if (refused) print(refused);
  if (loopback?.ok === false) {
    // The agent's route, which the checks take, ends at the proxy's own loopback: what answers
    // there (nothing, or another machine's service) says nothing of this gateway.
    const why = "the route ends at the proxy's own loopback";
    for (const check of ["gateway answers", "token", "sample decision"])
      print({ ok: false, line: `${check}: not checked (${why})` });
    return 1;
  }
  const unspoken = unspokenProxy(hookUrl, dialect, env) ?? escapedSocksCredentials(hookUrl, dialect, env);
  if (unspoken) print(unspoken);
  const health = await gatewayRequest({ method: "GET", url: `${base}/healthz`, timeoutMs, ...via });
  const viaFix = proxyFix(hookUrl, dialect, env, via);
  const healthChecks = checkHealth(orFix(health, viaFix), base, viaFix);
  for (const check of healthChecks) print(check);
  if (healthChecks.some((check) => !check.ok && check.goOn !== true)) {
    // Whatever answered is not a working hookgate at that URL: its token and sample checks would
    // only add misleading fixes.
    // A request that failed through a proxy (a 407, a proxy that is down) may never have reached
    // a gateway that runs.
    const why = health.ok
      ? "the health check failed"
      : via.proxy === undefined
        ? "the gateway did not answer"
        : "no answer came through the proxy";
    print({ ok: false, line: `token: not checked (${why})` });
    print({ ok: false, line: `sample decision: not checked (${why})` });
    return 1;
  }

  const curled =
    token && dialect.startsWith("deepagents") ? curlRefusedToken(token.name, env[token.name]) : undefined;
  const unsendable = token && (curled?.problem ?? unsendableToken(token));
  if (unsendable) {
    print({
      ok: false,
      line: `token: ${unsendable}`,
      fix: `set ${token?.name} to the token alone${curled ? `: ${curled.fix}` : ""}`,
    });
    print({ ok: false, line: "sample decision: not checked (the token cannot be sent)" });
    return 1;
  }
  const authorization: Record<string, string> = token ? { authorization: `Bearer ${token.value}` } : {};
  const whoami = await gatewayRequest({
    method: "GET",
    // The gateway words a refusal's fix for the client's hook (an older gateway ignores it).
    url: `${base}/v1/whoami?client=${dialect}`,
    headers: authorization,
    timeoutMs,
    ...via,
  });
  // The variable is set but holds nothing (`export HOOKGATE_TOKEN=` of an empty file): "not set"
  // would send its user to look for a variable that is there.
  const blank = env[dialect.startsWith("deepagents") ? "HOOKGATE_AUTH" : "HOOKGATE_TOKEN"] !== undefined;
  print(checkToken(orFix(whoami, viaFix), token?.name, dialect, blank));

  const body = JSON.stringify(sampleEvent(dialect, command));
  const sample = await gatewayRequest({
    method: "POST",
    url: hookUrl,
    headers: {
      "content-type": "application/json",
      "x-hookgate-timeout": String(seconds),
      ...authorization,
    },
    body,
    timeoutMs,
    // The sample's answer as the agent's hook reads it; the checks above read hookgate's own.
    reader: answerReader(dialect),
    ...via,
  });
  print(checkSample(orFix(sample, viaFix), { command, expect, dialect, hookUrl, body }));
  return checks.every((c) => c.ok) ? 0 : 1;
}

/**
 * A failed check when the hook URL's host name resolves to an address the agent refuses: its
 * lookup fails the hook on any one of them, a non-blocking error, and the tool call runs as if
 * no hook had answered, while every check below passes from here (this command connects
 * anyway). Not for an address written in the URL, which the lookup never sees, nor through a
 * proxy, which the agent's hook then goes by without its lookup (clients.md §2.1), unless NO_PROXY
 * exempts the host: a corporate NO_PROXY lists the internal names, those of private addresses.
 */
async function clientRefusedAnswers(
  hookUrl: string,
  dialect: string,
  env: Env,
  resolve: Resolve,
): Promise<Check | undefined> {
  if (!checksHookAddress(dialect)) return undefined;
  const proxy = agentProxy(hookUrl, dialect, env);
  const host = new URL(hookUrl).hostname;
  if (proxy.used || ipaddr.isValid(host.replace(/^\[|\]$/g, ""))) return undefined;
  let answers: readonly string[];
  try {
    answers = await resolve(host);
  } catch {
    return undefined; // the gateway's check says it does not resolve
  }
  const refused = answers.flatMap((address) => {
    const range = clientRefusedRange(address);
    return range === undefined ? [] : [`${address} (${range})`];
  });
  if (refused.length === 0) return undefined;
  const agent = hookClient(dialect);
  const direct = directWhy(proxy, agent);
  const exempted = direct === undefined ? "" : ` (${[direct, proxy.older].filter((s) => s).join("; ")})`;
  const rename =
    "give the gateway a name whose every address is public (or loopback, for a gateway on this machine)";
  const throughProxy = "the agent reaches it through the proxy, which it connects to without that check";
  return {
    ok: false,
    goOn: true,
    line: `address: ${host} resolves to ${refused.join(", ")}${exempted}: ${agent} refuses an http hook whose host has such an address (ERR_HTTP_HOOK_BLOCKED_ADDRESS) and runs the tool call as if no hook had answered`,
    fix:
      proxy.exemptedBy !== undefined
        ? `${rename}, or take ${host} out of ${proxy.exemptedBy} so that ${throughProxy}`
        : proxy.ignored !== undefined
          ? `${rename}, or write ${proxy.ignored} as a URL (http://host:port) so that ${throughProxy}`
          : `${rename}, or have the agent reach it through a proxy (HTTPS_PROXY), which it connects to without that check`,
  };
}

/** The clients whose http hooks look the gateway's name up with their address check (deepagents' hook is curl, which has none). */
function checksHookAddress(dialect: string): boolean {
  return dialect === "claude-code" || dialect === "deepcode";
}

/** What posts the client's hooks, as a check's line names it: for deepagents, init's curl command. */
function hookClient(dialect: string): string {
  if (dialect === "claude-code") return "Claude Code";
  return dialect === "deepcode" ? "deepcode" : "deepagents' curl";
}

/** The route a hook takes, as the header says the checks follow it. */
function hookWay(dialect: string): string {
  return dialect.startsWith("deepagents") ? "as its hook's curl goes" : "as its http hooks go";
}

/**
 * The route the checks take, as the header says it: the proxy's host and port (never its user
 * name or password), or direct, and why, where a proxy is set that the agent does not use.
 */
function routeText(
  hookUrl: string,
  dialect: string,
  env: Env,
  via: { proxy?: string; stranded?: URL },
): string {
  const proxyHost = via.stranded?.host ?? (via.proxy === undefined ? undefined : shownHost(via.proxy));
  if (proxyHost !== undefined) {
    const read = agentProxy(hookUrl, dialect, env);
    // Its user set NO_PROXY=* for no proxy at all, and would read a fix to list the host there as
    // done: the proxy check's, where that proxy cannot reach a loopback gateway, too.
    const star = read.starIgnored
      ? ` (deepcode reads no * in ${read.noProxy}: name the host there, ${new URL(hookUrl).hostname}, for it to connect directly)`
      : "";
    return `through the proxy ${proxyHost}, ${hookWay(dialect)}${star}`;
  }
  const why = directWhy(agentProxy(hookUrl, dialect, env), hookClient(dialect));
  return why === undefined ? "direct" : `direct, ${hookWay(dialect)} (${why})`;
}

/** A proxy's host and port as the header shows it, never its user name or password. */
function shownHost(proxy: string): string {
  try {
    return new URL(proxy).host;
  } catch {
    return withoutUserinfo(proxy);
  }
}

/** Why the agent connects directly though a proxy is set, as a check's line says it. */
function directWhy(read: ReturnType<typeof agentProxy>, agent: string): string | undefined {
  if (read.exemptedBy !== undefined) {
    return `${read.exemptedBy} ${read.exemptedBy.includes(" and ") ? "exempt" : "exempts"} it from the proxy`;
  }
  if (read.ignored !== undefined)
    return `${agent} ignores ${read.ignored}, a proxy without a scheme such as http://`;
  if (read.unread !== undefined) return `curl reads no ${read.unread.name}, only ${read.unread.read}`;
  return undefined;
}

/**
 * A failed check when the hook URL names this machine's loopback and the agent posts to it
 * through a proxy on another machine (NO_PROXY does not exempt it, as the agent reads it: a
 * NO_PROXY of `localhost` alone leaves 127.0.0.1 to the proxy): the proxy connects to its own
 * loopback, the hook fails, a non-blocking error, and the tool call runs as if no hook had
 * answered. The checks, which take the agent's route, stop there: what answers at the proxy's
 * loopback says nothing of this gateway. A proxy on this machine (a local cntlm) reaches the
 * gateway, and is no matter.
 */
function loopbackThroughProxy(
  hookUrl: string,
  dialect: string,
  env: Env,
  via: { stranded?: URL },
): Check | undefined {
  const host = new URL(hookUrl).hostname.replace(/^\[|\]$/g, "");
  const read = agentProxy(hookUrl, dialect, env);
  // Where the current release connects directly, the proxy the older releases (`older`) take.
  const proxy =
    via.stranded ??
    (read.proxy !== undefined && read.older !== undefined ? strandingProxy(hookUrl, read.proxy) : undefined);
  if (proxy === undefined) return undefined;
  const agent = hookClient(dialect);
  // The check passes, and says which releases it fails for.
  if (via.stranded === undefined) {
    return {
      ok: true,
      line: `proxy: ${agent} posts to ${host} directly, as ${directWhy(read, agent)} (${read.older}, and post through the proxy at ${proxy.host}, which reaches its own loopback, not this machine's)`,
    };
  }
  const listed = read.noProxy !== undefined && env[read.noProxy] ? `,$${read.noProxy}` : "";
  // The entry as the client matches it: deepcode compares the URL's host name, an IPv6 address in
  // its brackets (`[::1]`), and `::1` left its hooks on the proxy after the fix was done.
  const entry = dialect === "deepcode" ? new URL(hookUrl).hostname : host;
  return {
    ok: false,
    line: `proxy: ${agent} posts to ${host} through the proxy at ${proxy.host}, as ${read.noProxy} does not exempt it, and that proxy reaches its own loopback, not this machine's: the hook fails and the tool call runs as if no hook had answered`,
    fix: `add ${entry} to ${read.noProxy} in the shell that starts the agent (export ${read.noProxy}=${entry}${listed})`,
  };
}

/**
 * A failed check when the agent's http hooks go through a proxy whose protocol its client does
 * not speak (`unspoken`: a SOCKS proxy to Claude Code, a socks5h:// or SOCKS4 one to deepcode):
 * every hook fails, a non-blocking error, and the tool call runs as if no hook had answered. The
 * checks after it go on, through that proxy (hookgate's client speaks SOCKS5 and SOCKS4): they
 * still say whether the gateway answers.
 */
function unspokenProxy(hookUrl: string, dialect: string, env: Env): Check | undefined {
  const read = agentProxy(hookUrl, dialect, env);
  if (!read.used || read.unspoken === undefined || read.proxy === undefined) return undefined;
  const agent = hookClient(dialect);
  const variable = read.from ?? "HTTPS_PROXY";
  const url = new URL(hookUrl);
  const shown = withoutUserinfo(read.proxy);
  // undici's SOCKS5 sends the gateway's name for the proxy to resolve, as socks5h:// asks.
  const socks5 = dialect === "deepcode" && proxyScheme(read.proxy) === "socks5h";
  // Kept, not shown: a secret may be among them.
  const credentials =
    shown === read.proxy ? "" : ", with the user name and password its URL gives now before the host";
  return {
    ok: false,
    goOn: true,
    line: `proxy: ${agent} posts to ${url.host} through the proxy of ${variable}, ${shown}, but ${read.unspoken}: every hook fails and the tool call runs as if no hook had answered`,
    fix: `${socks5 ? `write ${variable} as ${shown.replace(/^socks5h:/i, "socks5:")}${credentials}, which deepcode's client takes as socks5h:// asks (the proxy resolves the name)` : `point ${variable} at an http proxy (http://host:port)`}; or, for the agent to connect to ${url.hostname} directly, add ${url.hostname} to ${read.noProxy ?? "NO_PROXY"} in the shell that starts the agent`,
  };
}

/**
 * A failed check where deepcode's hooks go through a SOCKS5 proxy whose URL escapes a character
 * of its user name or password (`us%40er`, and `us@er`, which a URL escapes so): undici's
 * ProxyAgent, deepcode's client, hands its SOCKS5 client the URL's own, escapes and all (undici
 * 7.30, checked over a loopback SOCKS5 server), where curl and hookgate's client decode them. A
 * proxy that takes them decoded refuses every hook; the checks after it, made by hookgate's
 * client, go on through the proxy.
 */
function escapedSocksCredentials(hookUrl: string, dialect: string, env: Env): Check | undefined {
  if (dialect !== "deepcode") return undefined;
  const read = agentProxy(hookUrl, dialect, env);
  if (!read.used || read.proxy === undefined || socksVersion(read.proxy) !== 5) return undefined;
  const { username, password } = URL.canParse(read.proxy)
    ? new URL(read.proxy)
    : { username: "", password: "" };
  if (!`${username}${password}`.includes("%")) return undefined;
  const variable = read.from ?? "HTTPS_PROXY";
  return {
    ok: false,
    goOn: true,
    line: `proxy: deepcode posts to ${new URL(hookUrl).host} through the SOCKS5 proxy of ${variable}, ${withoutUserinfo(read.proxy)}, but its http client (undici's ProxyAgent) sends the user name and password of the proxy's URL as the URL writes them, escapes and all (%40 for @), where curl and these checks decode them: a proxy that takes them decoded refuses every hook, and the tool call runs as if no hook had answered`,
    fix: `give the proxy a user name and password that a URL writes as they are (letters, digits and - . _ ~), or point ${variable} at an http proxy, whose user name and password deepcode's client decodes`,
  };
}

/**
 * What to change when a request through the proxy got no answer, or the proxy's own (a 502 of
 * one that cannot reach the gateway): the proxy, which the agent's hooks go through too, not the
 * gateway. START_HINT told to start a gateway that ran, behind a proxy that was down.
 */
function proxyFix(hookUrl: string, dialect: string, env: Env, via: { proxy?: string }): string | undefined {
  if (via.proxy === undefined) return undefined;
  const host = new URL(hookUrl).host;
  const noProxy = agentProxy(hookUrl, dialect, env).noProxy ?? "NO_PROXY";
  // deepcode and curl match an entry with the host name alone: the host and port leave their
  // hooks on the proxy. curl takes an IPv6 address without its brackets.
  const entry =
    dialect === "claude-code"
      ? "it"
      : dialect === "deepcode"
        ? new URL(hookUrl).hostname
        : new URL(hookUrl).hostname.replace(/^\[|\]$/g, "");
  return `check that the proxy runs and reaches ${host}, as the agent's hooks go through it; or, for the agent to connect to ${host} directly, add ${entry} to ${noProxy} in the shell that starts the agent`;
}

/** A failed request with `fix` (proxyFix) where the failure does not say its own. */
function orFix(result: GatewayResult, fix: string | undefined): GatewayResult {
  return result.ok || result.fix !== undefined || fix === undefined ? result : { ...result, fix };
}

const START_HINT =
  "start the gateway (npm start in a hookgate clone, or hookgate serve --policy FILE), or fix the host and port in --url";

/**
 * `viaFix`: what to change of the proxy the request went through (proxyFix), if it did. A
 * gateway that answers gets a check per problem its /healthz gives, each with its fix: naming
 * the first alone hid the rest (a failing dead-letter binding behind a failing delivery queue)
 * until it was fixed.
 */
function checkHealth(result: GatewayResult, base: string, viaFix: string | undefined): Check[] {
  if (!result.ok)
    return [{ ok: false, line: `gateway answers: ${result.error}`, fix: result.fix ?? START_HINT }];
  const { status, body } = result.response;
  const json = parseObject(body);
  if (status === 200 && json?.status === "ok") {
    const line = `gateway answers: GET /healthz 200, policy ${String(json.policy ?? "?")}`;
    const problems = healthProblems(json);
    if (problems.length === 0) return [{ ok: true, line }];
    // It answers and decides: the token and sample checks still tell.
    return problems.map(({ problem, fix }) => ({
      ok: false,
      goOn: true,
      line: `${line}, but ${problem}`,
      fix,
    }));
  }
  return [answerNotOk(status, body, json, base, viaFix)];
}

/** What a hookgate /healthz that answers "ok" says is wrong, each with its fix. */
function healthProblems(json: Record<string, unknown>): { problem: string; fix: string }[] {
  const problems: { problem: string; fix: string }[] = [];
  // It answers, by the policy it ran before.
  if (json.reload === "failed")
    problems.push({
      problem: "it refused its last policy reload and still runs this policy",
      fix: 'its log\'s "policy reload failed" line lists the problems (hookgate check on its policy file shows them too); fix the file and send the gateway SIGHUP again',
    });
  // It decides, but the notify events it answers are held in memory, or dropped: none is
  // delivered until its data dir takes them, and a stop meanwhile loses them.
  if (json.notify === "failing") {
    const held = typeof json.notifyInMemory === "number" ? json.notifyInMemory : 0;
    problems.push({
      problem: `it cannot write notify events to its data dir: ${held === 0 ? "its latest one was dropped" : `${held} ${held === 1 ? "is" : "are"} held in memory, lost if it stops`}`,
      fix: 'its log\'s "notify event held in memory" and "enqueue failed" lines say why (a full or read-only disk under --data-dir): free space or make it writable; the gateway writes what it holds within a second, and /healthz drops "notify" once nothing is held',
    });
  }
  const deliveryError = typeof json.deliveryError === "string" ? `: ${json.deliveryError}` : "";
  const deliveryFix = typeof json.deliveryFix === "string" ? json.deliveryFix : undefined;
  // It decides and journals notify events, but delivers none: its queue file fails.
  if (json.delivery === "failing")
    problems.push({
      problem: `it cannot use its delivery queue, so no notify event is delivered${deliveryError}`,
      fix:
        deliveryFix ??
        'its log\'s "could not take journaled jobs into the queue" line says why; the notify events answered meanwhile wait in its intake journal',
    });
  // Its delivery thread died and is being started again: nothing is delivered meanwhile.
  if (json.delivery === "restarting")
    problems.push({
      problem: `its delivery thread is down and being started again, so no notify event is delivered${deliveryError}`,
      fix:
        deliveryFix ??
        'its log\'s "the delivery thread" lines say why; the notify events answered meanwhile wait in its intake journal and are delivered once the thread runs again',
    });
  // It delivers, but a notify event that fails for good is lost with no dead letter to replay
  // (a Worker's missing HOOKGATE_DLQ binding): only the failed dead letters said so.
  if (json.deadLetters === "failing") {
    const error = typeof json.deadLetterError === "string" ? `: ${json.deadLetterError}` : "";
    problems.push({
      problem: `it cannot set aside a notify event that fails for good as a dead letter, so such an event is lost${error}`,
      fix:
        typeof json.deadLetterFix === "string"
          ? json.deadLetterFix
          : 'its log\'s "dead-letter send failed" lines say why',
    });
  }
  return problems;
}

/** A /healthz answer that is not hookgate's "ok": a configuration that does not load, a refusal, another server's; `viaFix` as in checkHealth. */
function answerNotOk(
  status: number,
  body: string,
  json: Record<string, unknown> | undefined,
  base: string,
  viaFix: string | undefined,
): Check {
  if (status === 500 && json) {
    return {
      ok: false,
      line: `gateway answers but its configuration does not load: ${body.trim().slice(0, 300)}`,
      fix: "read the gateway's log, and run hookgate check on its policy file",
    };
  }
  // A gateway that refuses the request says why (a loopback gateway asked by another name: 421).
  const error = json?.error as { code?: unknown; message?: unknown } | undefined;
  if (typeof error?.code === "string" && typeof error.message === "string") {
    return {
      ok: false,
      line: `gateway answers: GET ${base}/healthz gave HTTP ${status}, ${error.code}`,
      fix: error.message,
    };
  }
  return {
    ok: false,
    line: `gateway answers: GET ${base}/healthz gave HTTP ${status}, not hookgate's {"status":"ok"}`,
    // Through a proxy, the answer is as likely the proxy's own (502: it cannot reach the gateway).
    fix: `${viaFix === undefined ? "" : `${viaFix}; or `}check that --url points at a hookgate gateway (e.g. http://127.0.0.1:8787/v1/hooks/claude-code)`,
  };
}

/** The auth failure of a gateway whose token check did not load (core/auth.ts), and its fix. */
const UNCHECKED = "AUTH_UNAVAILABLE";
const UNCHECKED_FIX = "the gateway's operator makes its token check load; your token may well be right";

/** `blank`: no token was found, though the client's variable is set (to blanks). */
function checkToken(
  result: GatewayResult,
  variable: string | undefined,
  dialect: string,
  blank: boolean,
): Check {
  if (!result.ok) return { ok: false, line: `token: ${result.error}`, fix: result.fix ?? START_HINT };
  const { status, body } = result.response;
  const json = parseObject(body);
  if (status === 200 && json) {
    const team = String(json.team ?? "?");
    if (json.authRequired === false) {
      return { ok: true, line: `token: the gateway requires none (its policy has no auth); team "${team}"` };
    }
    return { ok: true, line: `token in ${variable ?? "(none)"} accepted: team "${team}"` };
  }
  if (status === 401) {
    const error = isRecord(json?.error) ? json.error : {};
    const message = typeof error.message === "string" ? error.message : body.trim().slice(0, 200);
    const code = typeof error.code === "string" ? error.code : "401";
    // The gateway checked no token (its token check did not load): a token changed changes nothing.
    if (code === UNCHECKED)
      return {
        ok: false,
        line: `token in ${variable ?? "(none)"} not checked (${code}): ${message}`,
        fix: UNCHECKED_FIX,
      };
    if (variable === undefined && dialect.startsWith("deepagents")) {
      return {
        ok: false,
        line: `token: HOOKGATE_AUTH is ${blank ? "empty" : "not set"}, and the gateway needs one (${code}); the deepagents adapter sends only HOOKGATE_AUTH`,
        fix: "export HOOKGATE_AUTH=<your team's token> (the example policy's is hookgate-dev-token), in the shell that starts the agent too",
      };
    }
    if (variable === undefined) {
      return {
        ok: false,
        line: `token: HOOKGATE_TOKEN is ${blank ? "empty" : "not set"}, and the gateway needs one (${code}); ${dialect}'s http hooks send only HOOKGATE_TOKEN (HOOKGATE_AUTH is the deepagents adapter's)`,
        fix: "export HOOKGATE_TOKEN=<your team's token> (the example policy's is hookgate-dev-token), in the shell that starts the agent too",
      };
    }
    return {
      ok: false,
      line: `token in ${variable} refused (${code}): ${message}`,
      fix: `set ${variable} to a token listed in the gateway policy's auth.tokens: ask the gateway's operator for your team's token (the example policy's is hookgate-dev-token)`,
    };
  }
  if (status === 404) {
    return {
      ok: false,
      line: "token: the gateway has no GET /v1/whoami",
      fix: "upgrade the gateway to a hookgate with /v1/whoami",
    };
  }
  return { ok: false, line: `token: GET /v1/whoami gave HTTP ${status}`, fix: "read the gateway's log" };
}

function checkSample(
  result: GatewayResult,
  sample: { command: string; expect: Expectation; dialect: string; hookUrl: string; body: string },
): Check {
  // The legacy route's sample is deepagents' own tool.use of its execute tool (sampleEvent).
  const event = sample.dialect === "deepagents-legacy" ? "tool.use execute" : "PreToolUse Bash";
  const what = `sample ${event} ${JSON.stringify(sample.command)}`;
  if (!result.ok) return { ok: false, line: `${what}: ${result.error}`, fix: result.fix ?? START_HINT };
  const { status, body, headers } = result.response;
  if (status < 200 || status > 299) {
    return {
      ok: false,
      line: `${what}: HTTP ${status} from ${sample.hookUrl}`,
      fix: "use the hook URL hookgate init printed (e.g. http://127.0.0.1:8787/v1/hooks/claude-code)",
    };
  }
  const answer = readDecision(body);
  const error = headers["x-hookgate-error"];
  if (error) {
    return {
      ok: false,
      line: `${what}: the gateway could not judge it (${error})${answer.message ? `: ${answer.message}` : ""}`,
      fix:
        error === UNCHECKED
          ? UNCHECKED_FIX
          : error.startsWith("AUTH_")
            ? "fix the token (see above); the gateway answers every hook with auth.onFailure until then"
            : "read the gateway's log for this decision id",
    };
  }
  if (answer.decision === "unreadable") {
    const coded = leftCoded(headers, answerReader(sample.dialect));
    if (coded)
      return { ok: false, line: `${what}: the answer is not a JSON object: ${coded}`, fix: CODING_FIX };
    return {
      ok: false,
      line: `${what}: the answer is not a JSON object: ${body.trim().slice(0, 200)}`,
      fix: "check that --url points at a hookgate gateway",
    };
  }
  const got = `${answer.decision}${answer.reason ? ` ("${answer.reason}")` : ""}`;
  if (answer.decision === sample.expect) return { ok: true, line: `${what} → ${got}, as expected` };
  const legacy = sample.dialect === "deepagents-legacy";
  return {
    ok: false,
    line: `${what} → ${got}, expected ${sample.expect}`,
    fix: legacy
      ? "deepagents legacy hooks never get a decision back: pass --expect none to check that the gateway answers them, or run doctor with a /v1/hooks/deepagents or /v1/hooks/claude-code URL"
      : // The sample itself, ready to paste: an EVENT.json left to write sent its reader to guess
        // the event's fields. printf, not echo, which reads a JSON escape's backslash in sh.
        `the policy does not decide this as expected (or pass --expect ${answer.decision} if the policy is right); to see which rules apply to the sample, run: printf '%s' ${shellQuote(withoutEscapedBackslash(sample.body))} | hookgate simulate --policy FILE --client ${sample.dialect} -`,
  };
}

/**
 * JSON text with its escaped backslashes (`\\`) written `\u005c`, the same text to a JSON reader:
 * fish, unlike a POSIX shell, reads `\\` inside single quotes as one backslash (and `\'` as a
 * quote, which JSON never writes), so a command's `\n` (a backslash, then n) reached simulate as
 * a line break there. Every other backslash of JSON text comes before a letter, `"` or `/`,
 * which both shells keep. Matched left to right, a pair is always one escape: a backslash in JSON
 * text starts one.
 */
function withoutEscapedBackslash(json: string): string {
  return json.replaceAll("\\\\", "\\u005c");
}

/** What a client would make of the answer: PreToolUse's permissionDecision, or a block. */
function readDecision(body: string): { decision: string; reason?: string; message?: string } {
  if (body.trim() === "") return { decision: "none" };
  const json = parseObject(body);
  if (!json) return { decision: "unreadable" };
  const specific = isRecord(json.hookSpecificOutput) ? json.hookSpecificOutput : {};
  const message = typeof json.systemMessage === "string" ? json.systemMessage : undefined;
  const withMessage = message === undefined ? {} : { message };
  if (typeof specific.permissionDecision === "string") {
    const reason = specific.permissionDecisionReason;
    return {
      decision: specific.permissionDecision,
      ...(typeof reason === "string" ? { reason } : {}),
      ...withMessage,
    };
  }
  if (json.decision === "block") {
    return {
      decision: "deny",
      ...(typeof json.reason === "string" ? { reason: json.reason } : {}),
      ...withMessage,
    };
  }
  return { decision: "none", ...withMessage };
}

function sampleEvent(dialect: string, command: string): Record<string, unknown> {
  const cwd = process.cwd();
  if (dialect === "deepcode") {
    return {
      hook_event_name: "PreToolUse",
      cwd,
      tool_name: "Bash",
      tool_input: { command },
      tool_desc: command,
    };
  }
  if (dialect === "deepagents-legacy") {
    return { event: "tool.use", tool_name: "execute", tool_id: "hookgate-doctor", tool_args: { command } };
  }
  return {
    session_id: "hookgate-doctor",
    transcript_path: "/tmp/hookgate-doctor.jsonl",
    cwd,
    permission_mode: "default",
    hook_event_name: "PreToolUse",
    tool_name: "Bash",
    tool_input: { command },
    tool_use_id: "toolu_hookgate_doctor",
  };
}

function parseObject(text: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(text);
    return isRecord(value) ? value : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The long options of a curl config file that change the route of the hook's requests (curl(1)):
 * a proxy, a SOCKS one, one in front of it, the hosts exempted from it.
 */
const CURL_ROUTE_OPTIONS = new Set([
  "proxy",
  "preproxy",
  "socks4",
  "socks4a",
  "socks5",
  "socks5-hostname",
  "noproxy",
]);

/**
 * The short options of curl 7.88 that take a value (its tool_getparam.c; checked with its own
 * run). In a group (`-kx URL`, `-xhttp://…`), the first of them takes the rest of the word, or
 * the next, as its value, and the letters before it are switches.
 */
const CURL_SHORT_WITH_VALUE = "AbcCdDeEFHKmoPQrtTuUwxXyYz";

/**
 * The route option a curl config line sets, as the note names it (`-x`, `--proxy`), else
 * undefined. A short option is read by its case, as curl reads it (`-X` is the request's method),
 * and in its group: `-xhttp://…` and `-kx …` set the proxy, `-Xx` the method x.
 */
function curlRouteOption(line: string): string | undefined {
  const word = /^\s*(\S+)/.exec(line)?.[1] ?? "";
  if (/^-[^-]/.test(word)) {
    const valued = [...word.slice(1)].find((letter) => CURL_SHORT_WITH_VALUE.includes(letter));
    return valued === "x" ? "-x" : undefined;
  }
  // A long option's name, with two dashes or none, ends before a blank, = or :.
  const name = /^-{0,2}([A-Za-z0-9-]+)/.exec(word)?.[1];
  return name !== undefined && CURL_ROUTE_OPTIONS.has(name.toLowerCase()) ? `--${name}` : undefined;
}

/**
 * The config files curl 7.88 looks for, in its order (its tool_findfile.c; checked against its
 * `-v`): $CURL_HOME/.curlrc, $XDG_CONFIG_HOME/.curlrc, $HOME/.curlrc, then, where
 * XDG_CONFIG_HOME is unset or empty, XDG's default place, `.config/curlrc` without the dot,
 * under $CURL_HOME, or under $HOME where CURL_HOME is unset or empty: curl looks under one of
 * them, not both. A variable unset or empty names none.
 */
function curlConfigFiles(env: Env): string[] {
  const under = (dirs: readonly (string | undefined)[], name: string) =>
    dirs.filter((dir): dir is string => Boolean(dir)).map((dir) => join(dir, name));
  const dotted = under([env.CURL_HOME, env.XDG_CONFIG_HOME, env.HOME], ".curlrc");
  return env.XDG_CONFIG_HOME
    ? dotted
    : [...dotted, ...under([env.CURL_HOME || env.HOME], join(".config", "curlrc"))];
}

/**
 * What `doctor` says of the config file deepagents' hook, init's curl command, reads before its
 * own options, if there is one: curl reads the first of `curlConfigFiles` that exists (curl(1),
 * -K), unless -q comes first. Its proxy there overrides the variables the checks read, its other
 * options (--insecure, a header) change the request: the checks, which read none of it, passed
 * for a hook that failed.
 */
function curlConfigNote(env: Env): string | undefined {
  for (const file of curlConfigFiles(env)) {
    let text: string;
    try {
      const kind = statSync(file);
      // curl 7.88 opens a folder there as its file, reads nothing of it and looks no further.
      if (kind.isDirectory()) return undefined;
      // A FIFO or a device held doctor for as long as nothing wrote to it: a file alone is read.
      if (!kind.isFile())
        return `${curlReads(file)}, which is no regular file and which these checks do not read${ANY_CURL_OPTION}`;
      text = readFileSync(file, "utf8");
    } catch {
      continue;
    }
    // An option starts its line.
    const route = text
      .split(/\r?\n/)
      .map(curlRouteOption)
      .filter((name): name is string => name !== undefined);
    const sets =
      route.length > 0
        ? `, and it sets ${[...new Set(route)].join(", ")}: the hook's requests may not take the route above`
        : ANY_CURL_OPTION;
    return `${curlReads(file)}, which these checks do not${sets}`;
  }
  return undefined;
}

const curlReads = (file: string) => `deepagents' hook, init's curl command, reads ${file}`;
const ANY_CURL_OPTION = ": an option there (a proxy, --insecure, a header) changes the hook's requests";

/**
 * deepagents' hook is init's curl command, which sends the variable as it is, where `send` and
 * this check trim it: a carriage return that `$(cat FILE)` leaves of a file with Windows line
 * endings reaches the gateway's HTTP server, which refuses the request (400) before hookgate
 * sees it, and curl's failure is no decision, so the tool runs. (Claude Code and deepcode strip
 * CR and LF from a header's value themselves.)
 */
function curlRefusedToken(
  name: string,
  raw: string | undefined,
): { problem: string; fix: string } | undefined {
  // Tab is a header's whitespace; every other control character is refused (RFC 9110 §5.5).
  if (raw === undefined || /^[\t\x20-\x7e\u0080-\uffff]*$/.test(raw)) return undefined;
  return {
    problem: `${name} holds a line break or another control character (a carriage return, as $(cat FILE) leaves of a file with Windows line endings): deepagents' hook, init's curl command, sends it as it is, the gateway's HTTP server refuses the request (400), and the agent goes on without an answer`,
    fix: `export ${name}="$(tr -d '\\r\\n' < FILE)"`,
  };
}

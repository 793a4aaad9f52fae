/**
 * `hookgate send --url URL [--client NAME] [--timeout SECONDS]`: a hook adapter. Reads one event
 * on stdin, posts it to the gateway with the token from the environment (HOOKGATE_TOKEN, else
 * HOOKGATE_AUTH; HOOKGATE_AUTH only on a deepagents route), through the proxy the agent's http hooks
 * to that URL go through (agent-proxy.ts; directly to this machine's loopback where that proxy is
 * on another machine), and prints the answer body exactly, decoded from its content codings as the
 * route's client decodes them (gateway-client/node.ts `codingsRead`; Claude Code's for a route
 * that names none). It never breaks the agent: on any failure
 * (a bad command line, a bad URL, the gateway down or slow, a non-2xx answer, one that does not
 * decode, a 2xx answer that is neither empty nor a JSON object, so not hookgate's) it prints nothing,
 * says why on standard error (with what to change, where the failure knows it) and still exits 0.
 *
 * `--url` is the full hook URL, as written in the client's settings. Only when it is a gateway
 * base URL (its path has no `/v1/hooks`, nor any `/v1/`) does `--client` pick the route:
 * `/v1/hooks/<client>`, or `/v1/hooks` (dialect read from the body) without `--client`. A path
 * with `/v1/` but no `/v1/hooks` is a mistyped hook URL, and a failure.
 */
import { parseArgs } from "node:util";
import { answerReader, CODING_FIX, gatewayRequest, leftCoded } from "../adapters/gateway-client/node.js";
import { errorMessage } from "../core/errors.js";
import { DIALECTS } from "../core/hook-event.js";
import { isRecord } from "../core/json-object.js";
import { withoutUserinfo } from "../core/url-userinfo.js";
import { proxyFor } from "./agent-proxy.js";
import { argumentProblem, isArgumentError, notOneOf } from "./arg-errors.js";

export interface CommandIo {
  out: (text: string) => void;
  err: (text: string) => void;
  /** The event as the client's hook wrote it, posted byte for byte. */
  stdin: () => Promise<Uint8Array>;
}

export type Env = Readonly<Record<string, string | undefined>>;

export const DEFAULT_SEND_TIMEOUT_SECONDS = 10;

/**
 * The token a hook adapter sends: HOOKGATE_TOKEN, else HOOKGATE_AUTH. deepagents removes every
 * variable whose name holds TOKEN from a hook's environment, so its adapter (init's curl
 * command) sends HOOKGATE_AUTH alone: for its dialects only that one is read.
 */
export function tokenFromEnv(env: Env, dialect?: string): { name: string; value: string } | undefined {
  for (const name of tokenVariables(dialect)) {
    const value = env[name]?.trim();
    if (value) return { name, value };
  }
  return undefined;
}

/** The variables `tokenFromEnv` reads, in order. */
function tokenVariables(dialect: string | undefined): readonly string[] {
  return dialect?.startsWith("deepagents") ? ["HOOKGATE_AUTH"] : ["HOOKGATE_TOKEN", "HOOKGATE_AUTH"];
}

const HOOKS_PATH = /\/v1\/hooks(?:\/|$)/;

/** What node:http sends as a header's value (its checkInvalidHeaderChar): tab, printable ASCII, Latin-1. */
const HEADER_VALUE = /^[\t\x20-\x7e\x80-\xff]*$/;

/**
 * Why a token cannot be sent, naming its variable, or undefined when it can: node:http refuses
 * such a header before sending anything, with a message that names the header, not the variable.
 */
export function unsendableToken(token: { name: string; value: string }): string | undefined {
  return HEADER_VALUE.test(token.value)
    ? undefined
    : `${token.name} holds a character no HTTP header can carry (a line break, or one pasted with the token such as a typographic quote)`;
}

/** Whether the URL's path names a hook route (`…/v1/hooks`, `…/v1/hooks/<client>`). */
export function isHookUrl(url: string): boolean {
  return HOOKS_PATH.test(parseGatewayUrl(url).pathname);
}

/** A URL with `/v1/` in its path but no hook route: a hook URL mistyped, not a gateway's base URL. */
function isMistypedHookUrl(url: string): boolean {
  return !isHookUrl(url) && /(?:^|\/)v1(?:\/|$)/.test(parseGatewayUrl(url).pathname);
}

/**
 * The hook URL a mistyped one (`isMistypedHookUrl`) most likely meant, on its own host and port,
 * without user name or password: its path up to its last `v1` segment, then `/v1/hooks/` and the
 * client, `client` when given, else a client's name among the segments after `v1`
 * (`/v1/hook/deepcode`), else claude-code.
 */
export function meantHookUrl(url: string, client: string | undefined): string {
  const parsed = parseGatewayUrl(url);
  const segments = parsed.pathname.split("/");
  const v1 = segments.lastIndexOf("v1");
  const named = segments.slice(v1 + 1).find((s) => (DIALECTS as readonly string[]).includes(s));
  const prefix = segments.slice(0, v1).join("/").replace(/\/+$/, "");
  return `${parsed.origin}${prefix}/v1/hooks/${client ?? named ?? "claude-code"}`;
}

/**
 * The URL to post to: `url` itself when its path already names a hook route, otherwise the
 * base URL plus `/v1/hooks/<client>` (or `/v1/hooks`). Throws on a URL that is not http(s).
 */
export function resolveHookUrl(url: string, client: string | undefined): string {
  if (isHookUrl(url)) return url;
  const parsed = parseGatewayUrl(url);
  const base = parsed.href.replace(/[?#].*$/, "").replace(/\/+$/, "");
  return `${base}/v1/hooks${client ? `/${client}` : ""}`;
}

/** The client a hook URL's route names, if any (`/v1/hooks/deepcode` → deepcode). */
export function routeClient(url: string): string | undefined {
  const match = /\/v1\/hooks\/([^/?#]+)\/?$/.exec(parseGatewayUrl(url).pathname);
  return match?.[1];
}

/**
 * What `send` and `doctor` say of a mistyped hook URL (`isMistypedHookUrl`), and its fix;
 * undefined for any other URL.
 */
export function mistypedHookUrl(
  url: string,
  client: string | undefined,
): { problem: string; fix: string } | undefined {
  if (!isMistypedHookUrl(url)) return undefined;
  return {
    problem: "is no hook route and no gateway base URL (its path has /v1/ but no /v1/hooks)",
    fix: `use the hook URL hookgate init printed (here likely ${meantHookUrl(url, client)})`,
  };
}

/**
 * What `send` and `doctor` say on stderr when `--client` asks for another client than the hook
 * URL's route names: the route is the one used.
 */
export function clientIgnored(command: string, routed: string, client: string): string {
  return `hookgate ${command}: --url already names the route /v1/hooks/${routed}; --client ${client} is ignored\n`;
}

/** The gateway's base URL: everything before `/v1/hooks` in the path (the URL itself otherwise). */
export function gatewayBaseUrl(url: string): string {
  const parsed = parseGatewayUrl(url);
  const at = parsed.pathname.search(HOOKS_PATH);
  const path = at === -1 ? parsed.pathname : parsed.pathname.slice(0, at);
  return `${parsed.origin}${path}`.replace(/\/+$/, "");
}

/**
 * How to write in full a URL given without its scheme: `localhost:8787` parses, with the scheme
 * `localhost:`, and `127.0.0.1:8787` does not. Empty for one that has a scheme.
 */
export function schemeHint(url: string): string {
  const full = `http://${url}`;
  return url.includes("://") || !URL.canParse(full) ? "" : `: write it in full, ${withoutUserinfo(full)}`;
}

export function parseGatewayUrl(url: string): URL {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new Error(
      `"${withoutUserinfo(url)}" is not a URL${schemeHint(url) || " (expected e.g. http://127.0.0.1:8787/v1/hooks/claude-code)"}`,
    );
  }
  if (parsed.protocol !== "http:" && parsed.protocol !== "https:") {
    throw new Error(`"${withoutUserinfo(url)}" is not an http or https URL${schemeHint(url)}`);
  }
  if (parsed.username || parsed.password) {
    throw new Error(
      `"${withoutUserinfo(url)}" carries a user name or password (not shown); the token goes in HOOKGATE_TOKEN`,
    );
  }
  return parsed;
}

export async function sendCommand(args: readonly string[], io: CommandIo, env: Env): Promise<number> {
  const fail = (message: string) => {
    io.err(`hookgate send: ${message}; the agent gets no answer\n`);
    return 0;
  };
  try {
    const { values } = parseArgs({
      args: [...args],
      options: {
        url: { type: "string" },
        client: { type: "string" },
        timeout: { type: "string" },
      },
    });
    if (!values.url)
      return fail("needs --url (the hook URL, e.g. http://127.0.0.1:8787/v1/hooks/claude-code)");
    const client = values.client;
    if (client !== undefined && !(DIALECTS as readonly string[]).includes(client)) {
      return fail(notOneOf("--client", client, DIALECTS));
    }
    const seconds = Number(values.timeout ?? DEFAULT_SEND_TIMEOUT_SECONDS);
    if (!Number.isFinite(seconds) || seconds <= 0 || seconds > 600) {
      return fail(`--timeout ${values.timeout} is not a number of seconds more than 0 and at most 600`);
    }
    // Every route also answers under a prefix, so a mistyped hook URL (`/v1/hook/deepagents`)
    // taken for a base URL was posted to `/v1/hook/deepagents/v1/hooks`: judged in the dialect
    // read from the body (a deepagents v2 event as Claude Code's) instead of failing as the same
    // URL fails in an http hook. hookgate's routes start at `/v1/`, as doctor reads it.
    const mistyped = mistypedHookUrl(values.url, client);
    if (mistyped) return fail(`"${withoutUserinfo(values.url)}" ${mistyped.problem}: ${mistyped.fix}`);
    const url = resolveHookUrl(values.url, client);
    const named = routeClient(url);
    if (client !== undefined && named !== undefined && named !== client) {
      io.err(clientIgnored("send", named, client));
    }
    const body = await io.stdin();
    // deepagents strips variables named *TOKEN* from a hook's environment: only HOOKGATE_AUTH
    // reaches a command it runs, as simulate reads it for that client.
    const dialect = named ?? client;
    const token = tokenFromEnv(env, dialect);
    if (!token) {
      const [first, ...others] = tokenVariables(dialect);
      const unset =
        others.length === 0 ? `${first} is not` : `neither ${[first, ...others].join(" nor ")} is`;
      io.err(`hookgate send: ${unset} set; sending no token\n`);
    }
    const unsendable = token && unsendableToken(token);
    if (unsendable) return fail(`${unsendable}: set it to the token alone`);
    const { proxy, proxyVariable } = proxyFor(url, dialect, env);
    const reader = answerReader(dialect);
    // An answer that came through a proxy may be the proxy's own (a 502 of one that cannot reach
    // this machine's gateway, its block page): said as from the URL alone, it sent the user to a
    // gateway that was never asked.
    const from =
      proxy === undefined ? url : `${url} through the proxy ${withoutUserinfo(proxy).replace(/\/$/, "")}`;
    const result = await gatewayRequest({
      method: "POST",
      url,
      ...(proxy === undefined ? {} : { proxy, proxyVariable }),
      headers: {
        "content-type": "application/json",
        "x-hookgate-timeout": String(seconds),
        // The gateway words an auth failure's fix for this command, not for an http hook's header.
        "user-agent": "hookgate-send",
        ...(token ? { authorization: `Bearer ${token.value}` } : {}),
      },
      body,
      timeoutMs: seconds * 1000,
      reader,
    });
    // What to change, where the failure knows it (a proxy's 407, an https URL to plain http), as
    // doctor says it; the person who reads this stderr is the one who can change it.
    if (!result.ok) return fail(result.fix ? `${result.error}: ${result.fix}` : result.error);
    const { status, body: answer } = result.response;
    if (status < 200 || status > 299) {
      const excerpt = answer.trim().slice(0, 200);
      return fail(`HTTP ${status} from ${from}${excerpt ? `: ${excerpt}` : ""}`);
    }
    // hookgate answers a hook with an empty body or a JSON object. Anything else comes from
    // something else at the URL (a site's catch-all page, a login page), and printed it would be
    // read as context: Claude Code adds a SessionStart hook's plain output to the session, as
    // deepagents does on SessionStart and UserPromptSubmit (clients.md §6.4).
    if (answer.trim() !== "" && !isJsonObject(answer)) {
      // A coding the agent's client leaves on it: the URL is the gateway's, and what is in front
      // of it compresses.
      const coded = leftCoded(result.response.headers, reader);
      if (coded) return fail(`HTTP ${status} from ${from} is not a JSON object: ${coded}: ${CODING_FIX}`);
      const excerpt = answer.trim().slice(0, 100);
      return fail(
        `HTTP ${status} from ${from} is not a JSON object, so not hookgate's answer (is the URL the gateway's?): ${excerpt}`,
      );
    }
    const error = result.response.headers["x-hookgate-error"];
    if (error) io.err(`hookgate send: the gateway could not judge this event (${error})\n`);
    io.out(answer);
    return 0;
  } catch (e) {
    return fail(isArgumentError(e) ? argumentProblem("send", e) : errorMessage(e));
  }
}

function isJsonObject(text: string): boolean {
  try {
    return isRecord(JSON.parse(text));
  } catch {
    return false;
  }
}

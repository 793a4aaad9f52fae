/**
 * The agent-facing hook routes, apart from how a runtime delivers the request: which dialect a
 * route names, reading the body under the policy's limit, the decision, and the answer's status,
 * headers and body. The Hono app (every runtime) and Node's listener (src/entry/node-listener.ts)
 * both answer `/v1/hooks*` through these two functions, so they give the same status, headers
 * and body (header case and order are each server's own).
 */
import { type ClientConnection, type HookDeps, type HookOutcome, handleHook } from "../app/handle-hook.js";
import { authenticate } from "../core/auth.js";
import type { RequestError } from "../core/errors.js";
import { sniffEventName } from "../core/events.js";
import { DIALECTS, isDialect } from "../core/hook-event.js";
import type { Policy } from "../core/policy.js";
import type { Sha256 } from "../core/ports.js";
import { shorten } from "../core/truncate.js";
import type { BodyResult } from "./read-body.js";

/** The hook routes' paths, one per client dialect. */
export const HOOK_PATHS: readonly string[] = DIALECTS.map((d) => `/v1/hooks/${d}`);

/** The hook routes, as messages list them: `/v1/hooks/claude-code, … or /v1/hooks/deepagents-legacy`. */
export const HOOK_ROUTES = `${HOOK_PATHS.slice(0, -1).join(", ")} or ${HOOK_PATHS.at(-1)}`;

/** The last resort's answer (a 500, `application/json`), as every runtime gives it: app.ts's onError too. */
export const INTERNAL_ERROR_BODY = JSON.stringify({
  error: { code: "INTERNAL_ERROR", message: "internal error; see the gateway log" },
});

/** One hook request as any runtime hands it over. */
export interface HookRouteRequest {
  /**
   * Reads the body under this many bytes (the policy's `defaults.maxBodyBytes`), in the budget of
   * bodies still arriving for requests whose Authorization header `authenticated`, or in the
   * other one (app.ts `unauthenticatedBodyBudget`).
   */
  readonly readBody: (maxBytes: number, authenticated: boolean) => Promise<BodyResult>;
  readonly contentType: string | undefined;
  /**
   * The request's target as sent (a path or a whole URL): a token in an unknown route's path is
   * looked for in it, as the route's reading made a base64 token's "//" one slash.
   */
  readonly target?: string | undefined;
  readonly authorization: string | undefined;
  readonly timeoutHeader: string | undefined;
  /** The `user-agent` header: `hookgate send` names itself, and an auth failure's fix is worded for it. */
  readonly userAgent?: string | undefined;
  /**
   * Refused before its body is looked at (a Host the gateway does not serve): answered as this
   * request error, in its code's fail mode (handle-hook.ts), the body read only for its event's
   * name and otherwise set aside.
   */
  readonly refused?: RequestError | undefined;
  /** Its headers could not be read, its token with them (handle-hook.ts `HookRequest`). */
  readonly tokenUnchecked?: boolean | undefined;
  /**
   * The client's connection (Node's listener): when the client closes it before the answer is
   * written, its remote rules give back their share of the waiting budget and give up what they
   * wait on.
   */
  readonly connection?: ClientConnection | undefined;
}

export interface HookRouteOutcome extends HookOutcome {
  /** Part of the body was never read, so the connection cannot carry another request. */
  readonly bodyUnread: boolean;
}

/**
 * Answers `POST /v1/hooks` (`client` undefined: the body decides the dialect) or
 * `POST /v1/hooks/<client>`. An unknown client name, or a request refused before it is looked
 * at, is answered as a request error, its body read and set aside.
 */
export async function runHookRoute(
  deps: HookDeps,
  client: string | undefined,
  request: HookRouteRequest,
  explain = false,
): Promise<HookRouteOutcome> {
  // The deadline runs from here, the request's arrival: its body's reading counts against it.
  const receivedAt = deps.clock.monotonic();
  const dialect = client !== undefined && isDialect(client) ? client : undefined;
  const known = client === undefined || dialect !== undefined;
  const policy = deps.policy();
  const refusal: RequestError | undefined =
    request.refused ??
    (known ? undefined : await unknownClientRoute(client, request.target, policy, deps.sha256));
  // The token is checked before the body is read, so that bodies no token vouches for are held in
  // a budget of their own: callers without one cannot fill the bytes a team's hooks are read in
  // and have every hook answered by the fail mode. handleHook takes the team found (a failure it
  // checks again, to word its message for the event's client).
  const auth = await authenticate(request.authorization, policy, deps.sha256);
  let body = await request.readBody(policy.defaults.maxBodyBytes, auth.ok);
  // A refused request's body is read too (within the limit) and set aside: a body left unread
  // makes a client that is still sending it see a reset, not this answer. Its event is named
  // as for any request error, so that the fail mode answers in that event's shape.
  if (refusal) {
    const eventName = body.ok ? sniffEventName(body.text) : body.error.eventName;
    body = { ok: false, error: { ...refusal, eventName }, unread: !body.ok && body.unread === true };
  }
  const outcome = await handleHook(
    deps,
    {
      body,
      contentType: request.contentType,
      authorization: request.authorization,
      dialect,
      timeoutHeader: request.timeoutHeader,
      userAgent: request.userAgent,
      receivedAt,
      authenticated: auth.ok ? { policy, team: auth.team } : undefined,
      tokenUnchecked: request.tokenUnchecked,
      connection: request.connection,
    },
    { explain, audit: !explain, runRemote: !explain },
  );
  // Named field by field: on Node 20's V8 an object spread followed by a property of the literal's
  // own (`{ ...outcome, bodyUnread }`) made objects that outlived young-generation collections
  // though nothing referred to them: under load some 100 KB promoted at each, old-generation
  // collections every second, and 15% more CPU a request (bench/HISTORY.md, "A spread then a
  // property").
  return {
    answer: outcome.answer,
    decisionId: outcome.decisionId,
    policyHash: outcome.policyHash,
    error: outcome.error,
    audit: outcome.audit,
    explanations: outcome.explanations,
    bodyUnread: !body.ok && body.unread === true,
  };
}

/**
 * The headers every hook answer (and simulate's) carries, the broken configuration's
 * (broken-config.ts) too.
 */
export function outcomeHeaders(
  outcome: Pick<HookRouteOutcome, "decisionId" | "policyHash" | "bodyUnread"> & {
    readonly error?: { readonly code: string } | undefined;
  },
): Record<string, string> {
  const headers: Record<string, string> = {
    "x-hookgate-decision-id": outcome.decisionId,
    "x-hookgate-policy": outcome.policyHash,
    "cache-control": "no-store",
  };
  if (outcome.error) headers["x-hookgate-error"] = outcome.error.code;
  // The rest of the body was never read, so this connection cannot carry another request; say
  // so, or a keep-alive client (Claude Code shares one per session) would reuse it.
  if (outcome.bodyUnread) headers.connection = "close";
  return headers;
}

/** What goes on the wire for a hook route's outcome. */
export function hookResponse(outcome: HookRouteOutcome): {
  status: number;
  headers: Record<string, string>;
  body: string;
} {
  const headers = outcomeHeaders(outcome);
  if (outcome.answer.contentType) headers["content-type"] = outcome.answer.contentType;
  return { status: outcome.answer.status, headers, body: outcome.answer.body };
}

/**
 * The refusal of a route no client has, quoting it with a team's token in its path masked: Claude
 * Code expands no variable in a hook's URL, so a token may be written into its path (as a Slack
 * webhook's secret is), and the quote goes into the answer and the audit line.
 */
async function unknownClientRoute(
  client: string,
  target: string | undefined,
  policy: Policy,
  sha256: Sha256,
): Promise<RequestError> {
  // The path as sent first: the route's reading makes "//" one slash and drops a trailing one,
  // and a base64 token that starts or ends with a slash, or holds two, was then no run of segments.
  // Read there, each segment also decoded, it holds every token the route's reading does: that
  // one is looked in only where no target came.
  const path = target === undefined ? undefined : pathSent(target);
  const sent = path === undefined ? undefined : await tokensMasked(path, QUOTED_PATH_CHARS, policy, sha256);
  if (sent?.masked)
    return {
      code: "UNKNOWN_CLIENT_ROUTE",
      message: `no client route "${shorten(sent.text, QUOTED_PATH_CHARS)}"; use ${HOOK_ROUTES}${TOKEN_IN_URL}`,
    };
  const { text, masked } =
    sent === undefined
      ? await tokensMasked(client, QUOTED_ROUTE_CHARS, policy, sha256)
      : { text: client, masked: false };
  return {
    code: "UNKNOWN_CLIENT_ROUTE",
    message: `no client route "/v1/hooks/${shown(text)}"; use ${HOOK_ROUTES}${masked ? TOKEN_IN_URL : ""}`,
  };
}

/** How much of a path as sent a refusal (here, and a 404's in app.ts) quotes once a token is masked in it. */
export const QUOTED_PATH_CHARS = 200;

/** The path of a request's target (a path or a whole URL), its slashes as sent. */
function pathSent(target: string): string | undefined {
  try {
    return new URL(target, "http://gateway").pathname;
  } catch {
    return undefined;
  }
}

/** What a refusal quoting a path with a token masked adds. */
export const TOKEN_IN_URL = "; a token goes in the Authorization header, never in the URL";

/**
 * `path` with each of its segments that is a team's token (or a run of them, with the slashes
 * between them) as `[masked]`, those that come within the first `quoted` characters of the result
 * only: the caller cuts it there, and a path of many segments costs no more hashes.
 */
export async function tokensMasked(
  path: string,
  quoted: number,
  policy: Policy,
  sha256: Sha256,
): Promise<{ text: string; masked: boolean }> {
  if (!policy.auth) return { text: path, masked: false };
  // A lookup, not authenticate's comparison with every token in constant time: no decision rests
  // on it, and a caller with no token made a path of 300 candidates cost 300 times every token's.
  const digests = new Set(policy.auth.tokens.flatMap((token) => token.sha256 ?? []));
  const parts = path.split("/");
  // For each segment: how many segments from it are a token (0 for none found), whether it is in
  // one found, how many from it were looked at, and whether no longer run from it can be one (the
  // path ends, a token found follows, or it is past TOKEN_RUN_CHARS).
  const found = new Array<number>(parts.length).fill(0);
  const inToken = new Array<boolean>(parts.length).fill(false);
  const looked = new Array<number>(parts.length).fill(0);
  const ended = new Array<boolean>(parts.length).fill(false);
  let runsLeft = TOKEN_RUNS;
  // Runs are looked at by their number of segments, shortest first, across every segment the
  // quote shows: taken from each segment in turn, the longer runs from twenty one-character
  // segments spent the budget, and a token of seven segments after them was quoted whole.
  for (let n = 1, more = true; more && runsLeft > 0; n++) {
    more = false;
    // Where the segment is in the quote, not in the path: "[masked]" is shorter than most tokens,
    // and a segment after one found comes into the quote, to be looked at from its shortest run.
    let start = 0;
    for (let i = 0; i < parts.length && start <= quoted; ) {
      if (found[i] === 0 && !ended[i]) {
        await lookFrom(i, n);
        more ||= found[i] === 0 && !ended[i];
      }
      const run = found[i] as number;
      start += (run > 0 ? MASK.length : (parts[i] as string).length) + 1;
      i += Math.max(run, 1);
    }
  }
  const segments: string[] = [];
  for (let i = 0; i < parts.length; i += Math.max(found[i] as number, 1))
    segments.push((found[i] as number) > 0 ? MASK : (parts[i] as string));
  return { text: segments.join("/"), masked: found.some((run) => run > 0) };

  /**
   * Looks at the runs of up to `n` segments from the `i`th not looked at yet, shortest first,
   * until one is a team's token with the slashes between them: a base64 token has slashes
   * (`openssl rand -base64 32` one or more about one time in two), and a `%2F` is one too
   * (route-path.ts), so its segments one by one are no token.
   */
  async function lookFrom(i: number, n: number): Promise<void> {
    while ((looked[i] as number) < n) {
      const size = (looked[i] as number) + 1;
      const last = i + size - 1;
      if (last >= parts.length || inToken[last]) {
        ended[i] = true;
        return;
      }
      const joined = parts.slice(i, last + 1).join("/");
      if (joined.length > TOKEN_RUN_CHARS) {
        ended[i] = true;
        return;
      }
      // Runs of a few segments from each are always looked at, the longer ones in the budget.
      if (size > TOKEN_SEGMENTS && runsLeft-- <= 0) return;
      looked[i] = size;
      if (joined !== "" && (await isToken(joined))) {
        found[i] = size;
        inToken.fill(true, i, last + 1);
        return;
      }
    }
  }

  async function isToken(segment: string): Promise<boolean> {
    if (digests.has(await sha256(segment))) return true;
    // Its escapes as the URL kept them (route-path.ts), and as the token was written, without the
    // blanks around it, as authenticate reads a token (`%20<token>`).
    const decoded = segment.includes("%") ? decodedSegment(segment)?.trim() : undefined;
    return decoded !== undefined && decoded !== "" && digests.has(await sha256(decoded));
  }
}

/**
 * How long a run of segments a token with slashes is looked for in: bounded by its length, not by
 * its slashes (a 44-character base64 token has six or more about once in 20,000, and a count of
 * six segments let those through whole). 128 holds a 96-byte base64 token; a token without a
 * slash is looked for at any length.
 */
const TOKEN_RUN_CHARS = 128;

/**
 * How many segments a run from each segment the quote shows is always looked at across: a
 * 44-character base64 token has five slashes or fewer but about once in 20,000, and each segment
 * a quote shows (at most 100 of 200 characters) costs at most five runs here.
 */
const TOKEN_SEGMENTS = 6;

/** What a token found in a path is quoted as. */
const MASK = "[masked]";

/**
 * How many runs of more than TOKEN_SEGMENTS segments one path may have looked at, taken shortest
 * first across the segments the quote shows: a path of hundreds of one-character segments would
 * cost some 60 hashes per segment the quote shows, over 100 ms of a caller with no token. A hook
 * URL with a token in it has a few segments and looks at tens; a token of seven segments after
 * twenty one-character ones is found in some 100 runs, one from each segment the quote shows.
 */
const TOKEN_RUNS = 1_000;

/** How much of a route name a refusal quotes. */
const QUOTED_ROUTE_CHARS = 100;

function decodedSegment(segment: string): string | undefined {
  try {
    return decodeURIComponent(segment);
  } catch {
    return undefined;
  }
}

/**
 * A route name as quoted back: any request can send one, so at most 100 characters of it, in the
 * form every runtime reads it (route-path.ts: escapes of other than unreserved characters kept,
 * no control character raw), never cut inside an escape.
 */
function shown(client: string): string {
  return shorten(client, QUOTED_ROUTE_CHARS).replace(/%[0-9A-F]?…$/, "…");
}

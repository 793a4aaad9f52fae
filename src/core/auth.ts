/**
 * Bearer tokens to teams. Tokens are stored and compared as SHA-256 digests, in constant time,
 * and every configured token is compared on every request, so timing says nothing about which
 * token came close. Only digests are compared, so both sides always have 64 characters whatever
 * the length of the token sent. A failure is a value with a message that tells the user what to
 * fix, and never contains the token.
 *
 * A policy without `auth` reads no token: the reading and its failures' messages (auth-token.ts)
 * are imported with the first request to a policy that has one, not at every cold start.
 */

import { errorMessage } from "./errors.js";
import type { Dialect } from "./hook-event.js";
import type { Policy } from "./policy.js";
import type { PolicyDocument } from "./policy-schema.js";
import type { Sha256 } from "./ports.js";

export type AuthFailureCode =
  | "AUTH_MISSING"
  | "AUTH_MALFORMED"
  | "AUTH_EMPTY_TOKEN"
  | "AUTH_UNKNOWN_TOKEN"
  | "AUTH_UNAVAILABLE";

export type AuthOutcome =
  | { readonly ok: true; readonly team: string }
  | { readonly ok: false; readonly code: AuthFailureCode; readonly message: string };

/** A policy without `auth` accepts every caller as this team (POLICY.md "Without auth"). */
export const DEFAULT_TEAM = "default";

/** The teams a caller can authenticate as: the tokens' own, or DEFAULT_TEAM alone without auth. */
export function teamsOf(document: PolicyDocument): ReadonlySet<string> {
  return new Set(document.auth?.tokens.map((t) => t.team) ?? [DEFAULT_TEAM]);
}

/** The teams as a message lists them: `"platform", "mobile"`. */
export function listTeams(teams: ReadonlySet<string>): string {
  return [...teams].map((t) => `"${t}"`).join(", ");
}

/** Compares two digests; `constantTimeEqual` unless a test wants to watch the comparisons. */
export type DigestEqual = (presented: string, configured: string) => boolean;

/**
 * `client`: the route's client, whose kind of hook the fix in a failure's message is worded for
 * (Claude Code's when not known), unless the `userAgent` says `hookgate send` sent it; both are
 * read only when the request fails.
 */
export async function authenticate(
  authorization: string | undefined,
  policy: Policy,
  sha256: Sha256,
  client?: Dialect,
  equal: DigestEqual = constantTimeEqual,
  userAgent?: string,
): Promise<AuthOutcome> {
  if (!policy.auth) return { ok: true, team: DEFAULT_TEAM };
  // Once loaded, read without an await: a turn less on every decision of a policy with auth.
  let module = tokenModule;
  if (module === undefined) {
    try {
      module = await tokenReading();
    } catch (e) {
      return authUnavailable(e);
    }
  }
  return module.authenticateToken(authorization, policy.auth, sha256, client, equal, userAgent);
}

/**
 * The token check could not be loaded (a bundle's chunk not deployed, a file gone under a running
 * gateway, no file descriptor left to read it): no token was checked, so the request is refused as
 * an auth failure is, in `auth.onFailure`. Thrown, it left the hook route a 500, which Claude Code
 * lets through, or `defaults.onError` on the decision path.
 */
export function authUnavailable(e: unknown): AuthOutcome {
  return {
    ok: false,
    code: "AUTH_UNAVAILABLE",
    message: `the gateway could not load its token check, so it checked no token (${loadFailure(e)}): its operator deploys every module of its build, or restarts it after its files changed`,
  };
}

/**
 * What a failed import is said as to a caller no token has vouched for: Node's code
 * (`ERR_MODULE_NOT_FOUND`, `EMFILE`), not its text, which names the gateway's files by their
 * absolute paths; workerd's errors carry no code, and their text names the bundle's module only.
 */
function loadFailure(e: unknown): string {
  const code = (e as { code?: unknown } | undefined)?.code;
  return typeof code === "string" ? code : errorMessage(e);
}

let reading: Promise<typeof import("./auth-token.js")> | undefined;
let tokenModule: typeof import("./auth-token.js") | undefined;

/** auth-token.ts, imported once; a failed import is forgotten and tried again with the next request. */
function tokenReading(): Promise<typeof import("./auth-token.js")> {
  reading ??= import("./auth-token.js").then(
    (loaded) => {
      tokenModule = loaded;
      return loaded;
    },
    (e: unknown) => {
      reading = undefined;
      throw e;
    },
  );
  return reading;
}

/**
 * Two strings compared without an early exit: every position of the longer one is read and a
 * length difference only sets a bit. (node:crypto's timingSafeEqual is not available on Workers;
 * the inputs here are hex digests of equal length anyway.)
 */
export function constantTimeEqual(a: string, b: string): boolean {
  const length = Math.max(a.length, b.length);
  let diff = a.length ^ b.length;
  for (let i = 0; i < length; i++) diff |= (a.charCodeAt(i) | 0) ^ (b.charCodeAt(i) | 0);
  return diff === 0;
}

/**
 * Bearer tokens to teams. Tokens are stored and compared as SHA-256 digests, in constant time,
 * and every configured token is compared on every request, so timing says nothing about which
 * token came close. A failure is a value with a message that tells the user what to fix.
 */
import type { Policy } from "./policy.js";
import type { Sha256 } from "./ports.js";

export type AuthFailureCode = "AUTH_MISSING" | "AUTH_MALFORMED" | "AUTH_EMPTY_TOKEN" | "AUTH_UNKNOWN_TOKEN";

export type AuthOutcome =
  | { readonly ok: true; readonly team: string }
  | { readonly ok: false; readonly code: AuthFailureCode; readonly message: string };

/** A policy without `auth` accepts every caller as this team (POLICY.md "Without auth"). */
export const DEFAULT_TEAM = "default";

const BEARER = /^Bearer(?:[ \t]+(.*))?$/i;

export async function authenticate(
  authorization: string | undefined,
  policy: Policy,
  sha256: Sha256,
): Promise<AuthOutcome> {
  if (!policy.auth) return { ok: true, team: DEFAULT_TEAM };
  const header = authorization?.trim() ?? "";
  if (header === "") {
    return fail(
      "AUTH_MISSING",
      'the hook sent no Authorization header. Add "headers": {"Authorization": "Bearer $HOOKGATE_TOKEN"} and "allowedEnvVars": ["HOOKGATE_TOKEN"] to the hook',
    );
  }
  const bearer = BEARER.exec(header);
  if (!bearer) return fail("AUTH_MALFORMED", 'the Authorization header is not "Bearer <token>"');
  const token = bearer[1]?.trim() ?? "";
  if (token === "") {
    // Clients send "Bearer " when the variable is not in allowedEnvVars or is unset (clients.md §3.3).
    return fail(
      "AUTH_EMPTY_TOKEN",
      "the hook sent an empty Bearer token: list the token's variable (e.g. HOOKGATE_TOKEN) in the hook's allowedEnvVars (and in httpHookAllowedEnvVars if you set it), and export it",
    );
  }
  const digest = await sha256(token);
  let team: string | undefined;
  for (const candidate of policy.auth.tokens) {
    if (candidate.sha256 !== undefined && constantTimeEqual(digest, candidate.sha256) && team === undefined) {
      team = candidate.team;
    }
  }
  if (team !== undefined) return { ok: true, team };
  return fail("AUTH_UNKNOWN_TOKEN", "the hook's token is not one this gateway knows: check HOOKGATE_TOKEN");
}

function fail(code: AuthFailureCode, message: string): AuthOutcome {
  return { ok: false, code, message };
}

/** Equal-length digests compared without an early exit. */
export function constantTimeEqual(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return diff === 0;
}

/**
 * A Bearer token read and checked against a policy's tokens, and what a failure tells the user to
 * fix, worded for the hook that sent it (auth.ts `authenticate`, which imports this module with
 * the first request to a policy that has `auth`).
 */
import type { AuthFailureCode, AuthOutcome, DigestEqual } from "./auth.js";
import type { Dialect } from "./hook-event.js";
import type { Policy } from "./policy.js";
import type { Sha256 } from "./ports.js";
import { strictUtf8 } from "./strict-utf8.js";

const BEARER = /^Bearer(?:[ \t]+(.*))?$/i;
/** What a policy's `sha256` holds (policy-schema.ts). */
const DIGEST = /^[0-9a-f]{64}$/;

/**
 * What a user of each kind of hook does to send the token. Claude Code's and deepcode's `http`
 * hooks send a header of the hook's own, with the variables `allowedEnvVars` lets through;
 * deepagents runs `hookgate init`'s curl command, and removes every variable whose name holds
 * TOKEN, KEY, SECRET or PASSWORD from a hook's environment (clients.md §8), so it sends
 * HOOKGATE_AUTH: advice to list HOOKGATE_TOKEN in allowedEnvVars could never work there.
 */
const FIXES = {
  http: {
    missing:
      'Add "headers": {"Authorization": "Bearer $HOOKGATE_TOKEN"} and "allowedEnvVars": ["HOOKGATE_TOKEN"] to the hook',
    empty:
      "list the token's variable (e.g. HOOKGATE_TOKEN) in the hook's allowedEnvVars (and in httpHookAllowedEnvVars if you set it), and export it",
    malformed: 'write the hook\'s header as "Authorization": "Bearer $HOOKGATE_TOKEN"',
    unknown: "check HOOKGATE_TOKEN",
    variable: "HOOKGATE_TOKEN",
    unexpanded:
      "list the variable, spelt exactly so, in the hook's allowedEnvVars and set it in the agent's environment",
  },
  command: {
    missing:
      'The hook\'s curl command needs -H "Authorization: Bearer $HOOKGATE_AUTH" (hookgate init --client CLIENT writes it)',
    empty:
      "export HOOKGATE_AUTH in the shell that starts the agent (deepagents removes variables named *TOKEN*, *KEY*, *SECRET* or *PASSWORD* from a hook's environment, so HOOKGATE_TOKEN never arrives)",
    malformed:
      'the curl command\'s header must be -H "Authorization: Bearer $HOOKGATE_AUTH" (hookgate init --client CLIENT writes it)',
    unknown: "check HOOKGATE_AUTH",
    variable: "HOOKGATE_AUTH",
    // A shell leaves `$VAR` as written only inside single quotes; an unset one it makes empty.
    unexpanded:
      'the shell that ran the curl command left it as written, as it does inside single quotes: write the header in double quotes, -H "Authorization: Bearer $HOOKGATE_AUTH" (hookgate init --client CLIENT writes it)',
  },
  // `hookgate send`, a command hook: it sends HOOKGATE_TOKEN, else HOOKGATE_AUTH, from the
  // agent's environment, and no header of the hook's own (it never sends an empty token). A name
  // sent unexpanded is the variable's value: its fix is an empty one's.
  send: {
    missing:
      "export HOOKGATE_TOKEN=<your team's token> in the shell that starts the agent: hookgate send, the command hook, sends it (or HOOKGATE_AUTH when HOOKGATE_TOKEN is unset)",
    empty: "export HOOKGATE_TOKEN=<your team's token> in the shell that starts the agent",
    unknown:
      "check HOOKGATE_TOKEN (or HOOKGATE_AUTH, which hookgate send sends when HOOKGATE_TOKEN is unset)",
    variable: "HOOKGATE_TOKEN (or HOOKGATE_AUTH, where that is the one set)",
  },
  sendDeepagents: {
    missing:
      "export HOOKGATE_AUTH=<your team's token> in the shell that starts the agent: hookgate send, the command hook, sends it (deepagents removes variables named *TOKEN*, *KEY*, *SECRET* or *PASSWORD* from a hook's environment, so HOOKGATE_TOKEN never arrives)",
    empty: "export HOOKGATE_AUTH=<your team's token> in the shell that starts the agent",
    unknown: "check HOOKGATE_AUTH",
    variable: "HOOKGATE_AUTH",
  },
} as const;

/**
 * Claude Code expands only upper-case names in a hook's header (`$[A-Z_][A-Z0-9_]*`, clients.md
 * §3.3) and makes an unlisted one empty, so a name it leaves as written has a lower-case letter,
 * which listing in allowedEnvVars never expands. deepcode expands names of either case.
 */
const CLAUDE_CODE_UNEXPANDED_LOWER_CASE =
  "Claude Code expands only upper-case names in a header: name the variable in upper case (e.g. HOOKGATE_TOKEN), list it in the hook's allowedEnvVars and export it";

/**
 * Who sent the hook, for the fix a failure's message names: the client's own hook (an http hook,
 * deepagents' curl command) or `hookgate send` (its `user-agent`, `hookgate-send`).
 */
type HookSender = "hook" | "send";

/** The sender a request's `user-agent` names. */
function senderOf(userAgent: string | undefined): HookSender {
  return /^hookgate-send(?:\/|\s|$)/i.test(userAgent?.trim() ?? "") ? "send" : "hook";
}

/** The fixes a failure's message names, worded for the client's kind of hook or for `hookgate send`. */
function fixesFor(client: Dialect | undefined, userAgent: string | undefined) {
  const deepagents = client?.startsWith("deepagents") === true;
  if (senderOf(userAgent) === "send") return deepagents ? FIXES.sendDeepagents : FIXES.send;
  return deepagents ? FIXES.command : FIXES.http;
}

/**
 * The team `authorization` authenticates as among `auth`'s tokens, or the failure, as
 * auth.ts `authenticate` says.
 */
export async function authenticateToken(
  authorization: string | undefined,
  auth: NonNullable<Policy["auth"]>,
  sha256: Sha256,
  client: Dialect | undefined,
  equal: DigestEqual,
  userAgent: string | undefined,
): Promise<AuthOutcome> {
  const fix = () => fixesFor(client, userAgent);
  const header = authorization?.trim() ?? "";
  if (header === "")
    return fail(
      "AUTH_MISSING",
      `the hook sent no Authorization header. ${fix().missing.replace("CLIENT", client ?? "")}`,
    );
  const bearer = BEARER.exec(header);
  if (!bearer) {
    // `hookgate send` writes its header itself: there is no header of the user's to mend.
    const fixes = fix();
    const where = "malformed" in fixes ? `: ${fixes.malformed.replace("CLIENT", client ?? "")}` : "";
    return fail("AUTH_MALFORMED", `the Authorization header is not "Bearer <token>"${where}`);
  }
  const token = bearer[1]?.trim() ?? "";
  if (token === "") {
    // Clients send "Bearer " when the variable is not in allowedEnvVars or is unset (clients.md §3.3).
    return fail("AUTH_EMPTY_TOKEN", `the hook sent an empty Bearer token: ${fix().empty}`);
  }
  const digest = await sha256(token);
  const spelt = utf8Reading(token);
  const digests = spelt === undefined ? [digest] : [digest, await sha256(spelt)];
  let team: string | undefined;
  for (const candidate of auth.tokens) {
    for (const presented of digests) {
      // Compare first, then look at the result: no candidate is skipped once one has matched.
      const match = candidate.sha256 !== undefined && equal(presented, candidate.sha256);
      if (match && team === undefined) team = candidate.team;
    }
  }
  if (team !== undefined) return { ok: true, team };
  // A token of 64 hex digits (`openssl rand -hex 32`) passes the schema as a digest: pasted into
  // `sha256` itself, its team's every hook was refused as unknown, sending its user to a token
  // that is right. Compared as digests are, every candidate.
  if (DIGEST.test(token)) {
    let pasted = false;
    for (const candidate of auth.tokens) {
      const match = candidate.sha256 !== undefined && equal(token, candidate.sha256);
      pasted ||= match;
    }
    if (pasted)
      return fail(
        "AUTH_UNKNOWN_TOKEN",
        'the hook\'s token is written in the gateway policy\'s auth.tokens as a "sha256" itself: that field takes the token\'s SHA-256 (printf %s "$TOKEN" | hookgate token hash), never the token',
      );
  }
  // Two Authorization headers arrive joined by ", " (RFC 9110 §5.3): not a token of its own.
  if (/,\s*Bearer\b/i.test(token))
    return fail(
      "AUTH_MALFORMED",
      "the hook sent two Authorization headers (joined, they are no token): send one",
    );
  // `$hookgate_token`, `${HOOKGATE_TOKEN}`: a name the client did not expand. The name is no secret.
  // Inside quotes too (-H 'Authorization: Bearer "$HOOKGATE_AUTH"'): its variable was never read,
  // so the quotes are no value of its to take out (moreThanToken).
  if (/^(["']?)\$\{?[A-Za-z_][A-Za-z0-9_]*\}?\1$/.test(token)) {
    const fixes = fix();
    const lowerCase = fixes === FIXES.http && client !== "deepcode" && /[a-z]/.test(token);
    return fail(
      "AUTH_UNKNOWN_TOKEN",
      `the hook sent ${JSON.stringify(token)} as its token, a variable's name its client did not expand: ${
        lowerCase
          ? CLAUDE_CODE_UNEXPANDED_LOWER_CASE
          : ("unexpanded" in fixes ? fixes.unexpanded : fixes.empty).replace("CLIENT", client ?? "")
      }`,
    );
  }
  // Every token's variable unset where the gateway runs (a Worker's secret never put): no token
  // can match, and "check HOOKGATE_TOKEN" sent each team's user to a token that may be right.
  // An empty list reads no variable, and no policy warning names one.
  if (auth.tokens.every((t) => t.sha256 === undefined))
    return fail(
      "AUTH_UNKNOWN_TOKEN",
      auth.tokens.length === 0
        ? "the gateway has no token to check it against: its policy's auth.tokens lists none, for its operator to add one per team"
        : `the gateway has no token to check it against: the variables its policy's auth.tokens read are not set where it runs, for its operator to set (its "policy warning" log lines name them)`,
    );
  const extra = moreThanToken(token);
  if (extra !== undefined)
    return fail("AUTH_UNKNOWN_TOKEN", `${extra}: set ${fix().variable} to the token alone`);
  return fail("AUTH_UNKNOWN_TOKEN", `the hook's token is not one this gateway knows: ${fix().unknown}`);
}

/**
 * What a token no team has holds besides a token, by its shape alone (it names no part of it):
 * quotes around it, which an env file read without a shell keeps (`docker --env-file`), or the
 * header's own scheme again, from a variable set to "Bearer <token>" under a header that already
 * says Bearer. Their user, told to check the variable, found a value that looked right.
 */
function moreThanToken(token: string): string | undefined {
  if (/^(["'])[^"']*\1$/.test(token))
    return "the hook's token arrived inside quotes, which its variable holds (an env file read without a shell, as docker --env-file reads one, keeps them) unless its header adds them";
  if (/^Bearer[ \t]/i.test(token))
    return 'the hook\'s token starts with a second "Bearer": its variable holds "Bearer <token>", and the header already says Bearer';
  return undefined;
}

/**
 * The text a presented token's bytes spell in UTF-8, where that is another reading of it. A
 * policy's token is text (its variable, or what `hookgate token hash` read as UTF-8), a header is
 * bytes: node:http clients (Claude Code 2.1.112, `hookgate send`) send each character of a
 * non-ASCII token as one Latin-1 byte, curl (deepagents' hook, a shell's `$HOOKGATE_AUTH`) sends
 * its UTF-8 bytes, and Node's parser reads a header one character a byte, so a token curl sent
 * arrived as `pÃ¤ss` for `päss` and was refused. workerd decodes a header's UTF-8 itself. A token
 * is compared as it came and, when its characters are bytes, some past ASCII, that spell UTF-8,
 * as the text they spell.
 */
function utf8Reading(token: string): string | undefined {
  let beyondAscii = false;
  for (let i = 0; i < token.length; i++) {
    const code = token.charCodeAt(i);
    if (code > 0xff) return undefined;
    if (code > 0x7f) beyondAscii = true;
  }
  if (!beyondAscii) return undefined;
  // undefined for bytes that spell no UTF-8: Latin-1 alone
  return strictUtf8(Uint8Array.from(token, (c) => c.charCodeAt(0)));
}

function fail(code: AuthFailureCode, message: string): AuthOutcome {
  return { ok: false, code, message };
}

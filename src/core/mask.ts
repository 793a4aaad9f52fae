/**
 * Masking for anything that leaves the process as text (audit lines, logs, recorded events).
 * Values under secret-looking keys are replaced whole; inside strings, well-known credential
 * shapes are replaced. No pattern nests a quantifier whose matches could overlap, so they stay
 * linear in the input, and none starts again inside the run it just read (two reviews timed each
 * shape's pieces repeated to 64 KiB: a few ms each).
 */

export const MASK = "[masked]";

const SECRET_KEY =
  /passw(?:or)?d|passphrase|(?:^|_)(?:pass|pwd|pin)$|secret|token|api[_-]?key|authorization|credential|private[_-]?key|cookie/i;
/** Keys that name a secret rather than hold one (`secret_name`, `token_type`). */
const NOT_SECRET_KEY = /(?:name|id|arn|type)$/i;
/** Keys under which a number is a secret (a PIN); under the others it counts (`max_tokens: 4096`). */
const NUMERIC_SECRET_KEY = /(?:passw(?:or)?d|passphrase|(?:^|_)(?:pass|pwd|pin))$/i;

/** The names of variables, YAML keys and JSON keys that hold a secret, for the shapes below. */
const NAMED =
  "PASSWORD|PASSWD|PASSPHRASE|SECRET|TOKEN(?!I[SZ]E)|API_?KEY|ACCESS_?KEY|PRIVATE_?KEY|APP_?KEY|CREDENTIALS?|_PASS|_PWD";
/** Suffixes of a name that says where or what a secret is, not the secret (`TOKEN_FILE=/run/x`). */
const NOT_A_VALUE =
  "NAME|ID|ARN|TYPE|FILE|PATH|URL|URI|ENDPOINT|HEADER|FIELD|TTL|SECONDS|DAYS|LENGTH|LIMIT|EXPIRY";

export const SECRET_SHAPES: readonly [RegExp, string][] = [
  // A key block, PGP's too, to its END line, or without one (a file read in part) its base64 run.
  [
    /-----BEGIN [A-Z ]{0,32}PRIVATE KEY(?: BLOCK)?-----(?:[\s\S]{0,8192}?-----END [A-Z ]{0,32}PRIVATE KEY(?: BLOCK)?-----|[A-Za-z0-9+/=:,\s\\-]{0,8192})/g,
    MASK,
  ],
  [/\b(?:AKIA|ASIA)[0-9A-Z]{16}\b/g, MASK],
  [/\bgh[pousr]_[A-Za-z0-9]{20,255}/g, MASK],
  [/\bgithub_pat_[A-Za-z0-9_]{20,255}/g, MASK],
  [/\bxox[abposr]-[A-Za-z0-9-]{10,255}/g, MASK],
  [/\bsk-[A-Za-z0-9_-]{20,255}/g, MASK],
  // Stripe, Slack app-level, npm, Google API and GitLab tokens.
  [
    /\b(?:[sr]k_(?:live|test)_[A-Za-z0-9]{10,255}|xapp-[A-Za-z0-9-]{10,255}|npm_[A-Za-z0-9]{36}|AIza[0-9A-Za-z_-]{35}|glpat-[A-Za-z0-9_-]{20,255})/g,
    MASK,
  ],
  [/\bwhsec_[A-Za-z0-9+/=]{8,255}/g, MASK],
  [/(?<![A-Za-z0-9_-])eyJ[A-Za-z0-9_-]{8,4096}\.[A-Za-z0-9_-]{8,4096}\.[A-Za-z0-9_-]{8,4096}/g, MASK],
  [/(hooks\.slack\.com\/(?:services|workflows|triggers)\/)[A-Za-z0-9/]{8,255}/g, `$1${MASK}`],
  [/(discord(?:app)?\.com\/api\/(?:v\d{1,2}\/)?webhooks\/\d{1,32}\/)[A-Za-z0-9_-]{8,255}/g, `$1${MASK}`],
  // A credential after its scheme has a digit or a symbol ("Basic validation" is prose), the
  // scheme spelt as headers spell it (not a path's `…/token` before the next word).
  [
    /\b(Bearer|bearer|BEARER|Basic|BASIC|Token|TOKEN)[ \t]+(?=[A-Za-z.-]{0,4096}[0-9_~+/=])[A-Za-z0-9._~+/=-]{8,4096}/g,
    `$1 ${MASK}`,
  ],
  // A URL's password, up to the last @ before the host (`//admin:p@ss@db`), also with no user.
  [/(\/\/[^/\s:@]{0,256}:)[^/\s]{1,256}@/g, `$1${MASK}@`],
  // curl's user:password (`docker run -u 1000:1000` is a uid and a gid).
  [
    /(\bcurl\b(?:[^\n;|&\\]|\\[\s\S]){0,512}?[ \t](?:-u|--user)[ \t]{0,4}['"]?[^\s:'"]{1,256}:)(?!\$)[^\s'"]{1,256}/g,
    `$1${MASK}`,
  ],
  [/(--(?:password|passwd|token|secret|api-key)[= ]['"]?)[^\s'"]{1,4096}/gi, `$1${MASK}`],
  // A header holding a credential, when its value looks like one (12 or more, a digit among them).
  [
    /(?<![^\s'"])((?:PRIVATE-TOKEN|(?:Proxy-)?Authorization|Cookie|Api-?Key|X-(?:[A-Za-z0-9-]{0,64}-)?(?:Api-?|Auth-?|Access-?)?(?:Key|Token|Auth|Secret))[ \t]{0,4}:[ \t]{0,8})(?=[^\s'"]{0,4096}\d)[^\s'"]{12,4096}/gi,
    `$1${MASK}`,
  ],
  // NAME=value, quoted (escaped quotes too); not a comparison, a count of tokens or a $(...) or $VAR.
  [
    new RegExp(
      `\\b(?![A-Za-z0-9_]{0,64}TOKENS\\b)([A-Za-z0-9_]{0,64}(?:${NAMED})[A-Za-z0-9_]{0,64})(?<!_(?:${NOT_A_VALUE}))=(?!=)(?:\\\\"(?!\\$[({A-Za-z_])(?:[^"\\\\]|\\\\\\\\){0,4096}\\\\"|"(?!\\$[({A-Za-z_])(?:[^"\\\\]|\\\\[\\s\\S]){0,4096}"|\\$?'[^']{0,4096}'|(?!\\$|[A-Za-z_][\\w.]{0,256}[()\\[\\]])(?:[^\\s"'\\\\]|\\\\[^\\s"]){1,4096})`,
      "gi",
    ),
    `$1=${MASK}`,
  ],
  // A spaced = before a quoted literal (terraform.tfvars, settings.py, `const password = "x"`), not a
  // name of one (`SECRET_NAME = "prod/db"`).
  [
    new RegExp(
      `\\b(?![A-Za-z0-9_]{0,64}TOKENS\\b)([A-Za-z0-9_]{0,64}(?:${NAMED})[A-Za-z0-9_]{0,64})(?<!_(?:${NOT_A_VALUE}))([ \\t]{1,4}=[ \\t]{0,4}|=[ \\t]{1,4})(?:"(?!\\$[({A-Za-z_])(?:[^"\\\\\\n]|\\\\.){1,4096}"|'[^'\\n]{1,4096}')`,
      "gi",
    ),
    `$1$2"${MASK}"`,
  ],
  // ~/.aws/credentials, whose lines are spaced around the =.
  [/^([ \t]{0,16}aws_(?:secret_access_key|session_token)[ \t]{0,8}=[ \t]{0,8})\S{1,4096}/gim, `$1${MASK}`],
  // YAML and .env-style keys in capitals (`POSTGRES_PASSWORD: x`, not `${{ secrets.X }}`), and
  // JSON keys ending in a secret's name (`"password": "x"`, not `"password_policy"`).
  [
    new RegExp(
      `\\b(?![A-Z0-9_]{0,64}TOKENS\\b)([A-Z0-9_]{0,64}(?:${NAMED})[A-Z0-9_]{0,64})(?<!_(?:${NOT_A_VALUE})):[ \\t]{1,8}(?!["']?\\$|#)(?:"(?:[^"\\\\]|\\\\.){0,4096}"|'[^']{0,4096}'|(?:[^\\s"'\\\\]|\\\\[^\\s"]){1,4096})`,
      "g",
    ),
    `$1: ${MASK}`,
  ],
  [
    new RegExp(
      `("[A-Za-z0-9_-]{0,64}(?:${NAMED})(?:[_-]?(?:KEY|VALUE))?"[ \\t]{0,8}:[ \\t]{0,8})"(?!\\$\\{)(?:[^"\\\\]|\\\\.){1,4096}"`,
      "gi",
    ),
    `$1"${MASK}"`,
  ],
];

/**
 * A substring every shape above needs (case-insensitive, so a superset): text without any of
 * them is returned as it is after one scan instead of one per shape. Most audited strings, a Bash
 * command or a file path, have none. test/unit/mask.test.ts checks the superset property.
 */
export const MAY_HOLD_SECRET =
  /PRIVATE KEY|AKIA|ASIA|gh[pousr]_|github_pat_|xox[abposr]-|xapp-|sk-|[sr]k_|npm_|AIza|glpat-|whsec_|eyJ|hooks\.slack\.com|webhooks\/|bearer|basic|token|@|=|passw|passphrase|secret|_pass|_pwd|api[_-]?key|access_?key|private_?key|app_?key|credential|cookie|auth|x-|-u/i;

export function maskString(text: string): string {
  if (!MAY_HOLD_SECRET.test(text)) return text;
  let out = text;
  for (const [pattern, replacement] of SECRET_SHAPES) out = out.replace(pattern, replacement);
  return out;
}

/**
 * A masked deep copy; strings longer than `maxString` are cut with a visible marker. `secrets`
 * (the policy's own secret values) are scrubbed before the cut, so a cut never leaves the start
 * of one showing.
 */
export function maskValue(value: unknown, secrets: readonly string[] = [], maxString = 2000): unknown {
  return maskDeep(value, maxString, secrets, 0);
}

function maskDeep(value: unknown, maxString: number, secrets: readonly string[], depth: number): unknown {
  if (typeof value === "string") {
    // Only what can show is masked: every shape is shorter than MASK_WINDOW, so one that starts
    // before the cut ends inside this head, and a 1 MiB string costs what 18 KiB does.
    const head = value.length > maxString + MASK_WINDOW ? value.slice(0, maxString + MASK_WINDOW) : value;
    return truncate(maskString(scrubSecrets(head, secrets)), maxString, value.length - head.length);
  }
  if (value === null || typeof value !== "object") return value;
  if (depth > 16) return "[too deep]";
  if (Array.isArray(value)) return value.map((item) => maskDeep(item, maxString, secrets, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) {
    out[key] =
      SECRET_KEY.test(key) && !NOT_SECRET_KEY.test(key)
        ? maskedWhole(item, NUMERIC_SECRET_KEY.test(key), depth + 1)
        : maskDeep(item, maxString, secrets, depth + 1);
  }
  return out;
}

/** Under a secret-looking key: every string, at any depth, is MASK, and every number under a PIN's. */
function maskedWhole(value: unknown, numbers: boolean, depth: number): unknown {
  if (typeof value === "string" || (numbers && typeof value === "number")) return MASK;
  if (value === null || typeof value !== "object") return value;
  if (depth > 16) return "[too deep]";
  if (Array.isArray(value)) return value.map((item) => maskedWhole(item, numbers, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) out[key] = maskedWhole(item, numbers, depth + 1);
  return out;
}

/** Longer than any shape's match (a JWT's three parts of up to 4,096 characters) and any policy secret worth scrubbing. */
const MASK_WINDOW = 16_384;

function truncate(text: string, max: number, dropped = 0): string {
  return text.length > max ? `${text.slice(0, max)}…[${text.length - max + dropped} more characters]` : text;
}

/** The strings to look for, per secrets list: each value and its JSON-escaped forms, longest first. */
const NEEDLES = new WeakMap<readonly string[], readonly string[]>();

function needlesOf(secrets: readonly string[]): readonly string[] {
  let needles = NEEDLES.get(secrets);
  if (needles === undefined) {
    const all = new Set<string>();
    for (const secret of secrets) {
      // As written in a JSON string (a log line), and in a JSON string quoted into another one
      // (a downstream excerpt in an audit line); for most secrets all three are the same.
      const once = JSON.stringify(secret).slice(1, -1);
      all.add(secret).add(once).add(JSON.stringify(once).slice(1, -1));
    }
    needles = [...all].sort((a, b) => b.length - a.length);
    NEEDLES.set(secrets, needles);
  }
  return needles;
}

/**
 * Every occurrence of a known secret value (`Policy.secrets`), raw or JSON-escaped, replaced by
 * MASK: what masking by shape cannot catch, such as a random token a peer echoes back. With no
 * secrets it returns the text as is.
 */
export function scrubSecrets(text: string, secrets: readonly string[]): string {
  if (secrets.length === 0) return text;
  let out = text;
  for (const needle of needlesOf(secrets)) if (out.includes(needle)) out = out.replaceAll(needle, MASK);
  return out;
}

/**
 * `scrubSecrets` for a log sink, with the secrets of the policy in force (`Policy.secrets`).
 * `secrets` is read at each call, so a reloaded policy's secrets apply from the next batch; the
 * previous policy's are scrubbed too, for lines written before the reload and flushed after it.
 * With no secrets the text is returned as is.
 */
export function scrubbingWith(secrets: () => readonly string[]): (text: string) => string {
  let current: readonly string[] = [];
  let previous: readonly string[] = [];
  return (text) => {
    const now = secrets();
    if (now !== current) {
      previous = current;
      current = now;
    }
    return scrubSecrets(scrubSecrets(text, current), previous);
  };
}

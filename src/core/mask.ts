/**
 * Masking for anything that leaves the process as text (audit lines, logs, recorded events).
 * Values under secret-looking keys are replaced whole; inside strings, well-known credential
 * shapes are replaced. The patterns have no nested quantifiers, so they stay linear in the input.
 */

export const MASK = "[masked]";

const SECRET_KEY = /passw(?:or)?d|secret|token|api[_-]?key|authorization|credential|private[_-]?key|cookie/i;

export const SECRET_SHAPES: readonly [RegExp, string][] = [
  [/-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]{0,8192}?-----END [A-Z ]*PRIVATE KEY-----/g, MASK],
  [/\b(?:AKIA|ASIA)[0-9A-Z]{16}\b/g, MASK],
  [/\bgh[pousr]_[A-Za-z0-9]{20,255}/g, MASK],
  [/\bgithub_pat_[A-Za-z0-9_]{20,255}/g, MASK],
  [/\bxox[abposr]-[A-Za-z0-9-]{10,255}/g, MASK],
  [/\bsk-[A-Za-z0-9_-]{20,255}/g, MASK],
  [/\bwhsec_[A-Za-z0-9+/=]{8,255}/g, MASK],
  [/\beyJ[A-Za-z0-9_-]{8,4096}\.[A-Za-z0-9_-]{8,4096}\.[A-Za-z0-9_-]{8,4096}/g, MASK],
  [/(hooks\.slack\.com\/services\/)[A-Za-z0-9/]{8,255}/g, `$1${MASK}`],
  [/(discord(?:app)?\.com\/api\/webhooks\/\d{1,32}\/)[A-Za-z0-9_-]{8,255}/g, `$1${MASK}`],
  [/\b(Bearer|Basic|Token)[ \t]+[A-Za-z0-9._~+/=-]{8,4096}/gi, `$1 ${MASK}`],
  [/(\/\/[^/\s:@]{1,256}:)[^/\s@]{1,256}@/g, `$1${MASK}@`],
  [
    /\b([A-Za-z0-9_]{0,64}(?:PASSWORD|PASSWD|SECRET|TOKEN|API_?KEY)[A-Za-z0-9_]{0,64})=(?:"[^"]{0,4096}"|'[^']{0,4096}'|[^\s"']{1,4096})/gi,
    `$1=${MASK}`,
  ],
];

/**
 * A substring every shape above needs (case-insensitive, so a superset): text without any of
 * them is returned as it is after one scan instead of thirteen. Most audited strings, a Bash
 * command or a file path, have none. test/unit/mask.test.ts checks the superset property.
 */
export const MAY_HOLD_SECRET =
  /PRIVATE KEY|AKIA|ASIA|gh[pousr]_|github_pat_|xox[abposr]-|sk-|whsec_|eyJ|hooks\.slack\.com|webhooks\/|bearer|basic|token|@|=/i;

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
  if (typeof value === "string") return truncate(maskString(scrubSecrets(value, secrets)), maxString);
  if (value === null || typeof value !== "object") return value;
  if (depth > 16) return "[too deep]";
  if (Array.isArray(value)) return value.map((item) => maskDeep(item, maxString, secrets, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) {
    out[key] =
      typeof item === "string" && SECRET_KEY.test(key) ? MASK : maskDeep(item, maxString, secrets, depth + 1);
  }
  return out;
}

function truncate(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max)}…[${text.length - max} more characters]` : text;
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

/**
 * Masking (src/core/mask.ts) as the audit line, the recorded event and every sink use it: on any
 * JSON value it never throws, keeps the value's shape, cuts strings no further than documented,
 * changes nothing the second time, and a credential in each shape the README names, placed
 * anywhere in the value (under any key, inside longer text), never shows in what it returns.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { MASK, maskString, maskValue } from "../../src/core/mask.js";
import { objectOf } from "./own-object.js";

const text = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc.string({ unit: "binary", maxLength: 40 }),
  fc.constantFrom(
    "",
    "\uD800",
    "\uD83D\uDE00",
    "password=hunter22",
    "Bearer abc123def456",
    "[masked]",
    "[Cookie: sid=abc; x=y]",
    "Set-Cookie: a=b; Path=/",
  ),
  fc.nat({ max: 2600 }).map((n) => "\uD83D\uDE00x".repeat(n)),
);

const key = fc.oneof(
  fc.string({ maxLength: 8 }),
  fc.constantFrom(
    "__proto__",
    "password",
    "pin",
    "api_key",
    "OPENAI_KEY",
    "sort_key",
    "secret_name",
    "token",
  ),
);

const json: fc.Arbitrary<unknown> = fc.letrec<{ value: unknown }>((tie) => ({
  value: fc.oneof(
    { depthSize: "small" },
    text,
    fc.integer(),
    fc.boolean(),
    fc.constant(null),
    fc.array(tie("value"), { maxLength: 5 }),
    fc.array(fc.tuple(key, tie("value")), { maxLength: 5 }).map(objectOf),
  ),
})).value;

/** `inner` under `depth` arrays or objects. */
const nested = (inner: fc.Arbitrary<unknown>, maxDepth: number) =>
  fc
    .tuple(inner, fc.array(fc.oneof(key, fc.constant(0)), { maxLength: maxDepth }))
    .map(([value, path]) =>
      path.reduceRight<unknown>((acc, k) => (typeof k === "number" ? [acc] : objectOf([[k, acc]])), value),
    );

const anyValue = fc.oneof({ arbitrary: json, weight: 6 }, { arbitrary: nested(json, 24), weight: 1 });

const CUT = /^([\s\S]*)…\[(\d+) more characters\]$/;

/** Walks both, checking the masked copy has the original's shape and its strings the documented cut. */
function sameShape(before: unknown, after: unknown, maxString: number, depth = 0): void {
  if (typeof before === "string") {
    expect(typeof after).toBe("string");
    const masked = after as string;
    const cut = CUT.exec(masked);
    // Under a secret-looking key a string is MASK whatever its length; else at most maxString, or cut.
    if (cut && masked.length > maxString) expect((cut[1] ?? "").length).toBeLessThanOrEqual(maxString);
    else if (masked !== MASK) expect(masked.length).toBeLessThanOrEqual(maxString);
  } else if (before === null || typeof before !== "object") {
    // A number under a password's or PIN's key is masked whole; nothing else that is not a string changes.
    if (after !== before) expect([typeof before, after]).toEqual(["number", MASK]);
  } else if (depth > 16) expect(after).toBe("[too deep]");
  else if (Array.isArray(before)) {
    expect(Array.isArray(after)).toBe(true);
    expect((after as unknown[]).length).toBe(before.length);
    for (const [i, item] of before.entries()) sameShape(item, (after as unknown[])[i], maxString, depth + 1);
  } else {
    const a = after as Record<string, unknown>;
    expect(Object.keys(a)).toEqual(Object.keys(before));
    for (const [k, v] of Object.entries(before)) {
      expect(Object.hasOwn(a, k)).toBe(true);
      sameShape(v, a[k], maxString, depth + 1);
    }
  }
}

describe("maskValue on any JSON value", () => {
  it("never throws, keeps the shape (to 16 levels, then `[too deep]`), and cuts strings at maxString", () => {
    fc.assert(
      fc.property(anyValue, fc.integer({ min: 0, max: 3000 }), (value, maxString) => {
        sameShape(value, maskValue(value, [], maxString), maxString);
      }),
      { numRuns: 300 },
    );
  });

  it("changes nothing the second time, where nothing was cut", () => {
    fc.assert(
      fc.property(anyValue, (value) => {
        const once = maskValue(value, [], Number.MAX_SAFE_INTEGER);
        expect(maskValue(once, [], Number.MAX_SAFE_INTEGER)).toEqual(once);
      }),
      { numRuns: 300 },
    );
  });
});

const ALNUM = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
const chars = (alphabet: string, min: number, max: number) =>
  fc.string({ unit: fc.constantFrom(...alphabet), minLength: min, maxLength: max });
/** Random enough that no context word could hold 12 of its characters in a row. */
const withDigit = (alphabet: string, min: number, max: number) =>
  fc.tuple(chars(alphabet, min - 1, max - 1), fc.integer({ min: 0, max: 9 })).map(([s, d]) => `${d}${s}`);

const base64url = (value: object) => Buffer.from(JSON.stringify(value)).toString("base64url");

/** A credential in one of the README's shapes: the whole text and the part that must not show. */
interface Credential {
  readonly text: string;
  readonly secret: string;
  /** A header is read where one starts: at the start, after a space, a quote (`-H 'X-Api-Key: …'`) or an opening bracket. */
  readonly header?: true;
}
const shaped = (prefix: string, body: fc.Arbitrary<string>, suffix = ""): fc.Arbitrary<Credential> =>
  body.map((secret) => ({ text: `${prefix}${secret}${suffix}`, secret }));

const credential: fc.Arbitrary<Credential> = fc.oneof(
  shaped("AKIA", chars("ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789", 16, 16)),
  shaped("ASIA", chars("ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789", 16, 16)),
  fc.constantFrom("ghp_", "gho_", "ghu_", "ghs_", "ghr_").chain((p) => shaped(p, chars(ALNUM, 20, 60))),
  shaped("github_pat_", chars(`${ALNUM}_`, 20, 90)),
  fc
    .constantFrom("xoxb-", "xoxp-", "xoxa-", "xoxe-1-", "xoxe.xoxp-1-", "xapp-1-")
    .chain((p) => shaped(p, chars(`${ALNUM}-`, 10, 60))),
  shaped("sk-", chars(`${ALNUM}_-`, 20, 90)),
  fc
    .constantFrom("sk_live_", "sk_test_", "rk_live_", "rk_test_")
    .chain((p) => shaped(p, chars(ALNUM, 10, 60))),
  shaped("npm_", chars(ALNUM, 36, 36)),
  shaped("AIza", chars(`${ALNUM}_-`, 35, 35)),
  fc
    .constantFrom(
      "glpat-",
      "gldt-",
      "glrt-",
      "glptt-",
      "glcbt-",
      "gloas-",
      "glsoat-",
      "glft-",
      "glimt-",
      "glagent-",
      "glffct-",
    )
    .chain((p) => shaped(p, chars(`${ALNUM}_-`, 20, 60))),
  shaped("hf_", chars(ALNUM, 34, 34)),
  shaped("pypi-AgE", chars(`${ALNUM}_-`, 50, 120)),
  fc
    .tuple(chars(`${ALNUM}_-`, 22, 22), chars(`${ALNUM}_-`, 43, 43))
    .map(([id, secret]) => ({ text: `SG.${id}.${secret}`, secret })),
  shaped("whsec_", chars(`${ALNUM}+/=`, 8, 60)),
  // A JWT as issued: its header and payload JSON objects in base64url (the header starts `eyJ`), non-ASCII
  // claims too, whose UTF-8 can spell another token's prefix (`-sk-…`); its signature base64url.
  fc
    .tuple(
      fc.record(
        {
          alg: fc.constantFrom("HS256", "RS256", "ES256", "none"),
          typ: fc.constant("JWT"),
          kid: fc.string(),
        },
        { requiredKeys: ["alg"] },
      ),
      fc.tuple(
        fc.string({ minLength: 1, maxLength: 20 }),
        fc.dictionary(fc.string({ maxLength: 8 }), fc.oneof(fc.string({ unit: "grapheme" }), fc.integer()), {
          maxKeys: 4,
        }),
      ),
      chars(`${ALNUM}_-`, 12, 60),
    )
    .map(([header, [sub, claims], signature]) => ({
      text: `${base64url({ ...header })}.${base64url({ sub, ...claims })}.${signature}`,
      secret: signature,
    })),
  fc
    .tuple(
      fc.constantFrom("RSA ", "EC ", "OPENSSH ", ""),
      fc.array(chars(`${ALNUM}+/`, 12, 64), { minLength: 1, maxLength: 4 }),
      fc.boolean(),
    )
    .map(([kind, lines, ended]) => ({
      text: `-----BEGIN ${kind}PRIVATE KEY-----\n${lines.join("\n")}${ended ? `\n-----END ${kind}PRIVATE KEY-----` : ""}`,
      secret: lines[0] ?? "",
    })),
  fc
    .constantFrom("Bearer ", "bearer ", "Basic ", "Token ")
    .chain((p) => shaped(p, withDigit(`${ALNUM}._~+/=-`, 12, 60))),
  // Basic's or Bearer's credential with no digit: letters in no word's case (a capital after a small one).
  fc
    .tuple(
      fc.constantFrom("Basic ", "Authorization: basic ", "Bearer ", "bearer "),
      chars("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ/", 10, 40),
    )
    .map(([scheme, body]) => ({ text: `${scheme}x${body}Q`, secret: `x${body}Q` })),
  shaped(
    "Authorization: AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request, SignedHeaders=host;x-amz-date, Signature=",
    chars("0123456789abcdef", 64, 64),
  ).map((c): Credential => ({ ...c, header: true })),
  // A cookie's value, whatever its characters, in a header bare or quoted.
  fc
    .tuple(
      fc.constantFrom(
        "Cookie: theme=dark; sid=",
        "Set-Cookie: sid=",
        '"Cookie": "a=b; sid=',
        "{'set-cookie': 'sid=",
        '{\\"Cookie\\": \\"a=b; sid=',
      ),
      chars(`${ALNUM}!#$%&*+-./:<=>?@^_|~`, 12, 40),
    )
    .map(([prefix, value]) => ({ text: `${prefix}x${value}`, secret: `x${value}` })),
  shaped("https://admin:", withDigit(ALNUM, 12, 40), "@db.example.com/prod"),
  shaped("curl -u admin:", withDigit(ALNUM, 12, 40), " https://example.com"),
  shaped("--password=", withDigit(ALNUM, 12, 40)),
  shaped("mysql -uroot -p", withDigit(ALNUM, 12, 40)),
  shaped("sshpass -p ", withDigit(ALNUM, 12, 40)),
  // A passphrase quoted with its blanks: what follows its first blank must not show either.
  fc
    .tuple(
      fc.constantFrom(
        ["mysql -uroot -p", ""],
        ["docker login -u me -p ", ""],
        ["sshpass -p ", ""],
        ["redis-cli -a ", ""],
        ["curl -u ", "admin:"],
      ),
      fc.constantFrom("'", '"'),
    )
    .chain(([[flag, user], q]) => shaped(`${flag}${q}${user}correct horse `, withDigit(ALNUM, 12, 40), q)),
  // A secret a command stores or logs in with (`gh secret set`, Secrets Manager, openssl, zip, …).
  fc
    .constantFrom(
      "gh secret set API_KEY --body ",
      "gh secret set API_KEY -b ",
      "gh secret set API_KEY <<< ",
      "aws ssm put-parameter --name /p --type SecureString --value ",
      "aws secretsmanager create-secret --name p --secret-string ",
      "openssl rsa -in k.pem -passin pass:",
      "zip -r -P ",
      "7z a -p",
      "htpasswd -bc .htpasswd admin ",
      "htpasswd -nbB admin ",
      "az login -u me -p ",
      "docker login -u me -p=",
      "docker login -u me -p",
      "vault login ",
      "npm config set //registry.npmjs.org/:_authToken ",
      "Authorization: Bearer \\\n  ",
    )
    .chain((p) => shaped(p, withDigit(ALNUM, 12, 40))),
  shaped("hvs.", chars(`${ALNUM}_-`, 24, 90)),
  shaped("https://api.telegram.org/bot123456789:", chars(`${ALNUM}_-`, 35, 35), "/sendMessage"),
  shaped("export DB_PASSWORD=", withDigit(ALNUM, 12, 40)),
  shaped("ENCRYPTION_KEY=", withDigit(ALNUM, 12, 40)),
  shaped('"password": "', withDigit(ALNUM, 12, 40), '"'),
  fc
    .constantFrom(
      "password",
      "api_key",
      "apiKey",
      "api-key",
      "X-Api-Key",
      "access-key",
      "private_key",
      "client_secret",
    )
    .chain((name) => shaped(`"${name}": "`, withDigit(ALNUM, 12, 40), '"')),
  // The same with its quotes escaped, as in a double-quoted shell string (`curl -d "{\"password\": …}"`).
  fc
    .constantFrom("password", "api_key", "X-Api-Key", "client_secret", "Authorization")
    .chain((name) => shaped(`\\"${name}\\": \\"`, withDigit(ALNUM, 12, 40), '\\"')),
  // A Python dict's key in single quotes, and a JS object literal's bare name, before a literal.
  fc
    .constantFrom("password", "api_key", "X-Api-Key", "secret", "auth_token")
    .chain((name) =>
      fc.constantFrom("'", '"').chain((q) => shaped(`'${name}': ${q}`, withDigit(ALNUM, 12, 40), q)),
    ),
  fc
    .constantFrom("password", "apiKey", "api_key", "accessToken", "clientSecret", "DB_PASS")
    .chain((name) =>
      fc.constantFrom("'", '"').chain((q) => shaped(`${name}: ${q}`, withDigit(ALNUM, 12, 40), q)),
    ),
  shaped("<password>", withDigit(ALNUM, 12, 40), "</password>"),
  // An Authorization header's value quoted as a literal, with no scheme or one not Bearer's.
  fc
    .tuple(fc.constantFrom("'", '"'), fc.constantFrom("", "ApiKey "))
    .chain(([q, scheme]) => shaped(`${q}Authorization${q}: ${q}${scheme}`, withDigit(ALNUM, 12, 40), q)),
  ...[
    "X-Api-Key: ",
    "Authorization: Bearer ",
    "Authorization: ",
    "Authorization: SSWS ",
    "DD-API-KEY: ",
    "Circle-Token: ",
    "X-Vault-Secret: ",
  ].map((name) => shaped(name, withDigit(ALNUM, 12, 40)).map((c): Credential => ({ ...c, header: true }))),
);

/** What may stand either side of a credential in longer text: words, punctuation, line breaks. */
const SEPARATORS = [
  " ",
  "\n",
  "\t",
  "'",
  '"',
  "(",
  ")",
  ";",
  ",",
  "|",
  "&",
  "<",
  ">",
  "`",
  "[",
  "]",
  "{",
  "}",
];
const context = fc
  .array(
    fc.constantFrom("echo", "run", "cat", "the key is", "x", "1", "--verbose", "https://example.com", "ok"),
    {
      maxLength: 3,
    },
  )
  .map((words) => words.join(" "));
const HEADER_STARTS = [" ", "\n", "\t", "'", '"', "(", "[", "{"];
const inText = fc
  .tuple(context, fc.constantFrom(...SEPARATORS), credential, fc.constantFrom(...SEPARATORS), context)
  .map(([before, left, c, right, after]) => {
    const start = c.header && !HEADER_STARTS.includes(left) ? " " : left;
    return { text: `${before}${start}${c.text}${right}${after}`, secret: c.secret };
  });

/** A run of 12 characters of the secret (or all of it) anywhere in what masking returned. */
function shows(masked: unknown, secret: string): string | undefined {
  const out = JSON.stringify(masked);
  const run = Math.min(12, secret.length);
  for (let i = 0; i + run <= secret.length; i++)
    if (out.includes(secret.slice(i, i + run))) return secret.slice(i, i + run);
  return undefined;
}

describe("a credential in a documented shape", () => {
  it("never shows, in a string alone or inside longer text", () => {
    fc.assert(
      fc.property(inText, ({ text: t, secret }) => {
        expect(shows(maskString(t), secret)).toBeUndefined();
      }),
      { numRuns: 1500 },
    );
  });

  it("never shows wherever it is placed in a value, under any key", () => {
    fc.assert(
      fc.property(
        inText,
        fc.array(fc.oneof(key, fc.constant(0)), { maxLength: 6 }),
        json,
        ({ text: t, secret }, path, sibling) => {
          const value = path.reduceRight<unknown>(
            (acc, k) =>
              typeof k === "number"
                ? [sibling, acc]
                : objectOf([
                    ["sibling", sibling],
                    [k, acc],
                  ]),
            t,
          );
          expect(shows(maskValue(value), secret)).toBeUndefined();
        },
      ),
      { numRuns: 500 },
    );
  });
});

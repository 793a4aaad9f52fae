/**
 * The credential shapes masking looks for inside strings (mask.ts `maskString`). A module of its
 * own so that the bundles whose cold start counts (the Worker, the Lambda handlers) load it with
 * the first policy (scripts/lazy-engines.mjs, mask.ts `loadMaskShapes`) rather than at every cold
 * start. No pattern nests a quantifier whose matches could overlap, so they stay linear in the
 * input, and none starts again inside the run it just read (two reviews timed each shape's pieces
 * repeated to 64 KiB: a few ms each).
 */

const MASK = "[masked]";

/** The names of variables, YAML keys and JSON keys that hold a secret, for the shapes below. */
const NAMED =
  "PASSWORD|PASSWD|PASSPHRASE|SECRET|TOKEN(?!I[SZ]E)|API_?KEY|ACCESS_?KEY|PRIVATE_?KEY|APP_?KEY|CREDENTIALS?|_PASS|_PWD";
/**
 * hookgate's own error codes with a secret's word in them: a reason quotes one before its message
 * (`JUDGE_NO_API_KEY: model "store" has no API key`), which the capitals' `NAME: value` shape
 * would read as a key and its first word as the key's value.
 */
const OWN_CODES = "JUDGE_NO_API_KEY|AUTH_EMPTY_TOKEN|AUTH_UNKNOWN_TOKEN";
/** Suffixes of a name that says where or what a secret is, not the secret (`TOKEN_FILE=/run/x`). */
const NOT_A_VALUE =
  "NAME|ID|ARN|TYPE|FILE|PATH|URL|URI|ENDPOINT|HEADER|FIELD|TTL|SECONDS|DAYS|LENGTH|LIMIT|EXPIRY";

/**
 * An environment-style name in capitals ending in `_KEY` (`ENCRYPTION_KEY`, `RAILS_MASTER_KEY`,
 * and `ENCRYPTION_KEY_B64`), as mask.ts reads a key so named, but not one naming data
 * (`SORT_KEY`, `PUBLIC_KEY`: the words of mask.ts `DATA_KEY`, which this lazily loaded module
 * cannot import), nor git's `GIT_CONFIG_KEY_0`, which names a setting (`core.fsmonitor`) that
 * an auditor needs to read. Case-sensitive: in code, `json_key = "name"` is no credential.
 */
const DATA_KEY_WORDS =
  "PUBLIC|PUBLISHABLE|SORT|PARTITION|RANGE|HASH|PRIMARY|FOREIGN|ROUTING|CACHE|S3|OBJECT|IDEMPOTENCY|DEDUPE?|LOOKUP|GROUP|ROW|INDEX|UNIQUE|SEARCH";
const ENV_KEY = `[A-Z][A-Z0-9_]{0,64}_KEY(?![A-Z0-9])(?<!(?:\\b|_)(?:${DATA_KEY_WORDS})_KEY|\\bGIT_CONFIG_KEY)(?:_[A-Z0-9]{1,32}){0,2}`;

/** A word in either case, for the patterns that are case-sensitive. */
const anyCase = (word: string): string => word.replace(/[a-z]/g, (c) => `[${c}${c.toUpperCase()}]`);
/**
 * A secret's name as code spells it, in any case (`password`, `API_KEY`, C#'s `Password`), after
 * `_`-separated words (`db_password`, `GITHUB_TOKEN`) and before a version (`token_2`,
 * `API_KEY_V2`), and nothing else: `password1` or `pass123` is a password.
 */
const SECRET_NAME = `(?:[A-Za-z0-9]{1,64}_){0,8}(?:${["pass", "passwd", "password", "passphrase", "pwd", "secret", "token", "key", "apikey", "credentials?", "auth"].map(anyCase).join("|")})(?:_[Vv]?[0-9]{1,3})?`;
/** A dotted path's parts before its last, and the dot before it (`settings.`, `self.config.`). */
const PATH_HEAD = "[A-Za-z_][A-Za-z0-9_]{0,64}(?:\\.[A-Za-z_][A-Za-z0-9_]{0,64}){0,15}\\.";
/**
 * A dotted path of names whose last part is a secret's name (`settings.API_KEY`, `user.password`,
 * `config.openai_api_key_2`): in code, where a secret is read from, not one, up to what ends an
 * expression. A password or token with a dot ends in other text (`my.password1`, `admin.pass123`,
 * `Summer2024.Secure`, `sk.…`, Doppler's `dp.st.…`), so stays a value (a JWT is masked before).
 */
const SECRET_PATH = `${PATH_HEAD}${SECRET_NAME}`;
const SECRET_REFERENCE = `${SECRET_PATH}(?=$|[\\s"',;)\\]}])`;

/**
 * Where `NAME=` is a parameter of a URL's query or fragment (`…/o?X-Amz-Credential=…&X-Amz-Date=…`,
 * `/cb#access_token=…&expires_in=3600`): right after `?`, `#` or `&`, in a word with a `/` before
 * its `?` or `#`. Not shell's `TOKEN=x&&make` nor an env file's `PASSWORD=p&ss`, whose `&` may be
 * the value's. Each lookbehind reads back at most one stretch between `?`s, so its cost is linear.
 */
const IN_URL_QUERY = "(?<=[?#&][\\w.-]{0,160}=)(?<=/[^\\s?#]{0,4096}[?#][^\\s]{0,4096})";

/**
 * What follows `NAME=` when it is a value: quoted (escaped quotes too), or a word; not `$(...)`,
 * `$VAR`, a call or subscript (`x=f(y)`), a SECRET_REFERENCE (`api_key=settings.API_KEY`, a keyword
 * argument), the name itself (`TOKEN=TOKEN`), or a value a shape before masked (URL_QUERY's
 * `?token=[masked])`, whose `)` closes a link). Group 1 is the name. In a URL's query or
 * fragment (IN_URL_QUERY) a word ends at `&` or `#`, which a URL-encoded value never holds raw.
 */
const ASSIGNED_VALUE = `(?:\\\\"(?!\\$[({A-Za-z_])(?:[^"\\\\]|\\\\\\\\){0,4096}\\\\"|"(?!\\$[({A-Za-z_])(?:[^"\\\\]|\\\\[\\s\\S]){0,4096}"|\\$?'[^']{0,4096}'|(?!\\$|[A-Za-z_][\\w.]{0,256}[()\\[\\]]|${SECRET_REFERENCE}|\\1\\b|\\[masked\\](?![\\w.~+/=-]))(?:${IN_URL_QUERY}[^\\s"'\\\\&#]{1,4096}|(?!${IN_URL_QUERY})(?:[^\\s"'\\\\]|\\\\[^\\s"]){1,4096}))`;

/**
 * A value that says where a key is, not the key: a path from home or here (`~/.ssh/id_rsa`,
 * `./k.pem`), or an absolute one whose last part has a `.` (`/etc/keys/signing.pem`), which no
 * base64 or hex secret has.
 */
const KEY_PATH =
  "(?:(?:~|\\.{1,2})/[\\w.~/-]{0,4096}|/(?:[\\w.-]{1,255}/){0,64}[\\w-]{0,255}\\.[\\w.-]{1,255})";
/**
 * The end of a YAML line after its value: blanks, then a comment or none. YAML reads a `#` as a
 * comment only after a blank (YAML 1.2, 6.6): in `password: S3cret#Pass` it is the value's.
 */
const YAML_LINE_END = "[ \\t]*(?:(?<=[ \\t])#[^\\n]{0,4096})?$";
/**
 * A number spaced after its `=`, Python's or Ruby's, not an INI file's, unless the name is a
 * password's (`token_count = 0`, `ERRORTOKEN = 60`; my.cnf's `password = 123456` is one).
 */
const CODE_NUMBER = `(?<!(?:PASS|PASSWD|PASSWORD|PASSPHRASE|PWD)[ \\t]{0,8}=[ \\t]{0,8})[-+]?[0-9][0-9_.]{0,64}[ \\t]*$`;
/** A word in capitals with at most one run of digits (`HS256`, `ES256K`, `SHA3`), for CODE_NAME. */
const CAPITALS_WORD = "[A-Z]{1,64}(?:[0-9]{1,8}[A-Z]{0,64})?";
/**
 * A name as code spells one and a password or a token does not: words joined by `_` (`eos_id2`,
 * `_private_key_pkcs12`), in capitals (`HS256`, `MAX_LEN_2`), or in camelCase or PascalCase of
 * whole words (`eosTokenId2`, `RollingFileAppender`). Not one word with a digit in or after it
 * (`password1`, `abc123def456`), one capitalised word (`Secure`), nor a random run (Doppler's,
 * Vault's, `ABC123DEF456`, `P4SSW0RD`), whose capitals and digits fall anywhere.
 */
const CODE_NAME = `_{0,2}(?:[a-z][a-z0-9]{0,64}(?:_[a-z0-9]{1,64}){1,16}|${CAPITALS_WORD}(?:_(?:${CAPITALS_WORD}|[0-9]{1,8})){0,16}|[a-z]{1,64}[0-9]{0,8}(?:[A-Z][a-z]{1,64}[0-9]{0,8}){1,16}|(?:[A-Z][a-z]{1,64}[0-9]{0,8}){2,16})`;
/**
 * A value spaced after its `=` that is an attribute read in Python or Ruby, not an INI file's
 * dotted password or token (`hunter2.Secure`, `my.password1`, `sk.abc123def456`): a dotted path
 * whose last part is a secret's name (`api_key = settings.API_KEY_V2`, `x.password =
 * user.password_2`) or a CODE_NAME (`token = tokenizer.eos_id2`). Case-sensitive, so a test of its
 * own: the shape that reads the line is not.
 */
const ATTRIBUTE_READ = new RegExp(`^${PATH_HEAD}(?:${SECRET_NAME}|${CODE_NAME})$`);
/**
 * A dotted path whose last part is a secret's name (`settings.PASSWORD`, `self.password_2`): what
 * NAME= reads as code (SECRET_REFERENCE), and all a password's spaced line does.
 */
const SECRET_READ = new RegExp(`^${SECRET_PATH}$`);
/** The last part of a spaced line's name, before its `=` (`_private_key` of `result._private_key = `). */
const ASSIGNED_NAME = /([A-Za-z0-9_-]{1,64})[ \t]{0,8}=[ \t]{0,8}$/;
/** A password's name, as CODE_NUMBER reads one (`DB_PASS`, `PGPASSWORD`, `passwd`). */
const PASSWORD_NAME = /(?:pass|passwd|password|passphrase|pwd)$/i;
const DOTTED_PATH = /^[A-Za-z_]\w{0,64}(?:\.[A-Za-z_]\w{0,64}){1,16}$/;

/**
 * A spaced line's value masked, unless it is an ATTRIBUTE_READ or reads the name it is assigned
 * to (`MLKEM768X25519PrivateKey = hpke.MLKEM768X25519PrivateKey`, `password1 = form.password1`).
 * Under a password's name only a SECRET_READ is code, as in `PASSWORD=…`: a dotted password is
 * often words joined by `_` or in capitals (`hello.world_2024`, `admin.ADMIN123`), which a token's
 * or a key's line reads as code (`token = tokenizer.eos_id2`, `private_key_alg = Algorithm.RS256`).
 */
function maskSpacedValue(line: string, name: string, value: string): string {
  if (DOTTED_PATH.test(value)) {
    const assigned = ASSIGNED_NAME.exec(name)?.[1];
    if (assigned !== undefined && value.endsWith(`.${assigned}`)) return line;
    if ((assigned !== undefined && PASSWORD_NAME.test(assigned) ? SECRET_READ : ATTRIBUTE_READ).test(value))
      return line;
  }
  return `${name}${MASK}`;
}

/** A header's or YAML key's words naming a key that is data, as DATA_KEY_WORDS, spelt with `-`. */
const DATA_HEADER_KEY = `(?:${DATA_KEY_WORDS}|SEC-WEBSOCKET)-KEY`;

/**
 * A parameter's value in a URL's query or fragment: up to a blank, a quote, a `\` (Go's JSON
 * writes `&` as `\u0026`), `&` or `#`, and up to a `)` or `>` that closes a bracket opened before
 * it (a Markdown link's `[x](…?token=…)`, `<…?token=…>`), which a URL-encoded value never holds
 * raw; a bracket the value opens it keeps (`?token=a(1)b`). Each lookbehind reads back to the
 * nearest blank or unpaired bracket (past pairs such as the `(1)` of `(…?x=(1)&token=…)`), and the
 * `)` it starts at ends the next one's reading, so the cost stays linear.
 */
const URL_VALUE = `(?:[^\\s"'\\\\&#()<>]|\\((?:[^\\s"'\\\\&#()<>]{0,4096}\\))?|\\)(?<!\\((?:[^\\s()]|\\([^\\s()]{0,256}\\)){0,4096}\\))|>(?<!<[^\\s<>]{0,4096}>)|<){1,4096}`;
/**
 * A URL's query or fragment (after a `?` or `#` in a word with a `/` before it), and in it a
 * parameter holding a secret, up to its URL_VALUE's end: under a name NAME= reads (`?token=`,
 * `&client_secret=`, `X-Amz-Credential=`; not `token_type=` or `max_tokens=`), which NAME= masked
 * up to the link's closing bracket, and under others: a password's short names (`?pwd=`,
 * `?pass=`), a signature at any length (`sig=`, `signature=`), Google APIs' `?key=`, Firebase's
 * `?auth=`, an OAuth authorization `code=`, a session id (`session=`, `sessionid=`, `PHPSESSID=`,
 * `jsessionid=`), and a `…_key=` or a dashed `…-key=` as headers name one (`license_key=`,
 * `api-key=`, Azure API Management's `subscription-key=`; not one naming data, `sort_key=`,
 * `cache-key=`). The whole name only: `?sort=key`, `?keyword=`, `?zip_code=` and `?monkey=` stay,
 * and so does a variable (`?key=$KEY`). A name follows `?`, `#`, `&` or `;`: HTML writes the `&`
 * between parameters as `&amp;` (an href's `?q=x&amp;key=…`), `;` is the older separator, and
 * Go's JSON writes `&` as `\u0026`. The query is read once, and its lookbehind reads back one
 * stretch between `?`s, so the cost is linear.
 */
const URL_QUERY = /[?#](?<=\/[^\s?#]{0,4096}[?#])[^\s]{1,8192}/g;
/** What starts a URL's parameter, as URL_QUERY_SECRET reads one. */
const URL_PARAM_START = "(?:[?#&;]|\\\\u0026)";
/** The names besides NAMED's that a URL's parameter is masked under whole (`?pwd=`, `?key=`, `?code=`). */
const URL_PARAM_SHORT_NAMES =
  "pwd|pass|key|sig|signature|auth|code|session(?:[_-]?id)?|(?:php)?sessid|jsessionid";
const URL_QUERY_SECRET_NAME = `(?![\\w.-]{0,64}TOKENS\\b)[\\w.-]{0,64}(?:${NAMED})[\\w.-]{0,64}(?<![_.-](?:${NOT_A_VALUE}))|${URL_PARAM_SHORT_NAMES}|[A-Za-z0-9]{1,32}(?:[_-][A-Za-z0-9]{1,32}){0,4}[_-]key(?<!(?:[?#&;_-]|\\\\u0026)(?:${DATA_KEY_WORDS}|SEC-WEBSOCKET)[_-]KEY)`;
const URL_QUERY_SECRET = new RegExp(
  `(${URL_PARAM_START}(?:${URL_QUERY_SECRET_NAME})=)(?!\\$)${URL_VALUE}`,
  "gi",
);
const URL_QUERY_SECRET_GATE = new RegExp(
  `${URL_PARAM_START}(?:${URL_PARAM_SHORT_NAMES})=|[_-]key=|${NAMED}`,
  "i",
);

/**
 * The query at `offset` of `text` with its secrets' values masked. Its parameters are read in the
 * text up to the query's end, so that a value's lookbehinds see the bracket a link opened before
 * the URL and no search reads past the query.
 */
function maskUrlQuery(query: string, offset: number, text: string): string {
  const upToEnd = text.slice(0, offset + query.length);
  let out = "";
  let last = offset;
  URL_QUERY_SECRET.lastIndex = offset;
  for (let m = URL_QUERY_SECRET.exec(upToEnd); m !== null; m = URL_QUERY_SECRET.exec(upToEnd)) {
    out += `${upToEnd.slice(last, m.index)}${m[1]}${MASK}`;
    last = m.index + m[0].length;
  }
  return out + upToEnd.slice(last);
}

/**
 * An Authorization header's scheme word other than Bearer, Basic or Token, which their own shape
 * reads (`Authorization: ApiKey …`, Okta's `SSWS …`, `AWS4-HMAC-SHA256 …`): optional, so that a
 * value with no scheme is read too. Not before a variable (`Bearer $OPENAI_API_KEY_2`, `ApiKey
 * ${API_KEY_V2}`), which is code, as the Bearer shape leaves it.
 */
const AUTH_SCHEME =
  "(?:(?<=Authorization[\"']?[ \\t]{0,4}:[ \\t]{0,8}[\"']?)[A-Za-z][A-Za-z0-9-]{1,32}[ \\t]{1,4}(?!\\$[({A-Za-z_]))?";

/**
 * A name of NAMED anywhere in the text: the shapes that read names run only then. At every word
 * they try up to 64 characters against each name, most of masking's cost on text without one
 * (a 16 KiB file: 250 of 370 µs).
 */
const NAMED_GATE = new RegExp(NAMED, "i");
/** NAMED with its `…_KEY` names spelt with a dash too (`api-key`), for JSON keys, which may be headers' names. */
const NAMED_DASHED = NAMED.replaceAll("_?KEY", "[_-]?KEY");
const NAMED_DASHED_GATE = new RegExp(NAMED_DASHED, "i");
/** The same for ENV_KEY. */
const ENV_KEY_GATE = /_KEY(?![A-Z0-9])/;

/** A shape, what replaces its match, and a test the text must pass for the shape to run at all. */
export type SecretShape = readonly [RegExp, string | Replacer, RegExp?];
/** What `String.replace` calls with a match, its groups, its offset and the whole text. */
type Replacer = Extract<Parameters<typeof String.prototype.replace>[1], (...args: never[]) => string>;

/**
 * A Cookie or Set-Cookie header's value, bare, quoted as a literal (`{"Cookie": "…"}`,
 * `setHeader("Set-Cookie", "…")`, its quotes escaped too, `curl -d "{\"Cookie\": \"…\"}"`) or in brackets; which shows each cookie's name and masks its value (RFC 6265: pairs split by `;`, a
 * value never holds `;`, `,` or a blank, and may be in double quotes, `sid="…"`; Set-Cookie's
 * joined by `,`). A value that is code
 * (`${sid}`) stays, and so does a Set-Cookie attribute's, which says how a cookie is kept.
 */
const COOKIE_HEADER =
  /((?<![\w-])(?:Set-)?Cookie(?:\\?["']?[ \t]{0,4}:|\\?["'][ \t]{0,4},)[ \t]{0,8}\\?["']?)((?:[^\n\r"'\\]|(?<==)"[^\n\r";,\\]{0,4096}"){1,8192})/gi;
const COOKIE_PAIR =
  /(^|[;,][ \t]{0,8})(?:([^=;,\s"'\\]{1,256})=)?(?!\$)(\[masked\]|"[^;,\s"'\\]{0,4096}"|[^;,\s"'\\]{1,4096}?)(?=(?:[)\]}]{1,4}[.:]?)?(?:[;,\s"'\\]|$))/g;
const COOKIE_ATTRIBUTE = /^(?:Expires|Max-Age|Domain|Path|SameSite|Priority)$/i;
/**
 * A list of Cookie or Set-Cookie headers as a literal, a Python dict's (`{'set-cookie': ['a=…;
 * Path=/', 'b=…']}`) or a Node `setHeader('Set-Cookie', [...])`'s: each quoted string in it is
 * read as COOKIE_HEADER reads one header. The list ends at a `]` outside its strings and outside
 * a value a shape before masked: the `]` of a first cookie's `jwt=[masked]` ended it, and the
 * cookies after it showed.
 */
const COOKIE_LIST =
  /((?<![\w-])(?:Set-)?Cookie(?:["']?[ \t]{0,4}:|["'][ \t]{0,4},)[ \t]{0,8}\[)((?:\[masked\]|"[^"\n\r]{0,4096}"|'[^'\n\r]{0,4096}'|`[^`\n\r]{0,4096}`|[^\]\n\r"'`]){1,8192})/gi;
const QUOTED = /(["'`])((?:(?!\1)[^\n\r\\]){1,4096})\1/g;
/**
 * A cookie a browser script sets, `document.cookie = "sid=…; path=/"` (in quotes or a template
 * literal, whose `${…}` stays), read as a Set-Cookie header.
 */
const DOCUMENT_COOKIE = /(\bdocument\.cookie[ \t]{0,4}=[ \t]{0,4}(["'`]))((?:(?!\2)[^\n\r\\]){1,4096})/g;

/** A cookie header's value with each cookie's value masked; `attributes`: Set-Cookie's stay. */
function maskCookiePairs(value: string, attributes: boolean): string {
  return value.replace(COOKIE_PAIR, (pair, before: string, name: string | undefined, cookie: string) => {
    if (cookie === MASK) return pair;
    if (name === undefined)
      // A value with no name is masked as the other headers' are: 12 or more, a digit among them.
      return cookie.length >= 12 && /\d/.test(cookie) ? `${before}${MASK}` : pair;
    return attributes && COOKIE_ATTRIBUTE.test(name) ? pair : `${before}${name}=${MASK}`;
  });
}

function maskCookies(_: string, header: string, value: string): string {
  return header + maskCookiePairs(value, /^set-/i.test(header));
}

function maskCookieList(_: string, header: string, list: string): string {
  const attributes = /^set-/i.test(header);
  return (
    header +
    list.replace(
      QUOTED,
      (_q, quote: string, value: string) => quote + maskCookiePairs(value, attributes) + quote,
    )
  );
}

function maskDocumentCookie(_: string, assignment: string, _quote: string, value: string): string {
  return assignment + maskCookiePairs(value, true);
}

/**
 * The Basic scheme as headers spell it; a small `basic` only as an Authorization header's ("a basic
 * JavaScript setup" is prose). Its lookbehind comes after `basic`, not before it: first, it ran at
 * every word of the text instead of at a scheme's first letter, 5 times the shape's cost.
 */
const BASIC_SCHEME = `Basic|BASIC|basic(?<=(?:[Aa]uthorization|AUTHORIZATION)["']?[ \\t]{0,4}:[ \\t]{0,8}["']?basic)`;

/** Whether `base64` decodes to `user:password` in printable ASCII (RFC 7617's Basic credentials). */
function isBasicCredential(base64: string): boolean {
  let decoded: string;
  try {
    decoded = atob(base64);
  } catch {
    return false;
  }
  return /^[\x20-\x7e]*:[\x20-\x7e]*$/.test(decoded);
}

/**
 * A password as a client's argument: in quotes up to the closing one, blanks and all (a
 * passphrase, `-p'correct horse'`), or a word; not a variable (`"$PW"`).
 */
const PASSWORD_ARG = `(?!['"]?\\$)(?:'[^'\\n]{1,256}'|"[^"\\n]{1,256}"|['"]?[^\\s'"]{1,256})`;

/**
 * A port that docker's or podman's `-p` publishes (`27017:27017`, `127.0.0.1:27017:27017/tcp`,
 * `8000-8010:8000-8010`): after a container named mongo (`docker run --name mongo -p
 * 27017:27017 mongo:7`) it is no mongo client's password, and an auditor reads it.
 */
const PUBLISHED_PORT = "['\"]?(?:[0-9.-]{1,39}:){1,2}[0-9-]{1,11}(?:/(?:tcp|udp|sctp))?['\"]?(?![^\\s;|&])";

/**
 * A secret a command stores, which may be long and span lines (a JSON document, a PEM): quoted up
 * to its closing quote, or a word; not a variable.
 */
const SECRET_ARG = `(?!['"]?\\$)(?:'[^']{1,4096}'|"(?:[^"\\\\]|\\\\[\\s\\S]){1,4096}"|[^\\s'"]{1,4096})`;

/**
 * What follows a command's name up to one of its flags: its words on one line, or on several
 * joined by `\` (`aws ssm put-parameter \⏎ --type SecureString \⏎ --value …`), but not past the
 * next run of `command`, so that no run is read twice.
 */
const commandRest = (command: string): string => `(?:(?!\\b${command}\\b)[^\\n;|&\\\\]|\\\\[\\s\\S]){0,512}?`;

/**
 * A credential's value in a Bearer, Basic or Token header, as the Bearer shape reads one: a digit
 * or a symbol in it, or letters in no word's case (`dXNlcjpwYXNz`), which no prose has.
 */
const HAS_DIGIT_OR_SYMBOL = "[A-Za-z./-]{0,4096}[0-9_~+=]";
const IN_NO_WORDS_CASE =
  "(?:[A-Z./-]{0,4096}[a-z][a-z./-]{0,4096}[A-Z]|[./-]{0,4096}[A-Z][./-]{0,4096}[A-Z][A-Z./-]{0,4096}[a-z])";

/**
 * A long flag that takes a credential: `--password X`, and one whose name ends in a credential's
 * (`aws rds … --master-user-password X`, `az vm create … --admin-password X`, `--auth-token X`,
 * `--client-secret X`, gpg's `--passphrase X`), which the `NAME=` shapes read only with a `=`.
 */
const FLAG_SECRET = "password|passwd|passphrase|token|secret|api-key";
/**
 * The words before a FLAG_SECRET that make a flag name no credential: a switch (`--no-password`,
 * gh's `--show-token`, and `--with-token`, which reads stdin), a page's place (`aws …
 * --starting-token`, `--next-token`, `--page-token`) or a tokenizer's special token (`--eos-token
 * "</s>"`). A prefixed flag followed by another (`--manage-master-user-password --engine x`) or a
 * redirection (`--with-token < f`) is a switch too. A variable (`--token "$T"`) stays, as after
 * `NAME=`.
 */
const NOT_A_SECRET_FLAG =
  "no|show|with|starting|next|page|continuation|pagination|pad|eos|bos|unk|sep|cls|mask";

/**
 * What BuildKit's and Swarm's `--secret` takes: where a secret is, not the secret (`docker build
 * --secret id=npmrc,src=$HOME/.npmrc`, `--secret type=env,id=KEY`, `docker service create
 * --secret source=db_pw,target=pw`), which an auditor reads to know what a build was given.
 */
const SECRET_MOUNT = "(?:id|src|source|type|env|target)=";

/**
 * A command that reads a password or a secret from its stdin: `docker login`, `helm registry
 * login` and `oras login` with `--password-stdin`, `wrangler secret put NAME` and `vercel env add
 * NAME` (after a package manager's runner too: `npx`, `pnpm`, `yarn`, `bunx`, as their docs spell
 * them), and `gcloud secrets create` or `versions add` with `--data-file=-`: after the `|` that
 * feeds it.
 */
const STDIN_LOGIN =
  "(?:(?:npx|bunx|pnpm(?:[ \\t]+(?:exec|dlx))?|yarn(?:[ \\t]+dlx)?)[ \\t]+)?(?:wrangler[ \\t]+secret[ \\t]+put\\b|vercel[ \\t]+env[ \\t]+add\\b)|[^\\n;|&]{0,256}?[ \\t]--password-stdin\\b|gcloud[ \\t]+secrets[ \\t]+(?:create|versions[ \\t]+add)\\b[^\\n;|&]{0,256}?[ \\t]--data-file[= ]-(?![^\\s;|&])";

/**
 * `htpasswd` with `-b`, which takes the password as its last argument: the third after the flags
 * (`htpasswd -bc FILE USER PASSWORD`), or the second with `-n`, which writes no file (`htpasswd
 * -nbB USER PASSWORD`). `-C` and `-r` take a number.
 */
const HTPASSWD =
  /(\bhtpasswd((?:[ \t]{1,4}-[A-Za-z25]{1,8}(?:(?<=[Cr])[ \t]{1,4}[0-9]{1,6})?){1,8}))((?:[ \t]{1,4}(?:'[^'\n]{0,256}'|"[^"\n]{0,256}"|[^\s'"]{1,256})){2,3})/g;
const HTPASSWD_ARG = /[ \t]{1,4}(?:'[^'\n]{0,256}'|"[^"\n]{0,256}"|[^\s'"]{1,256})/g;

function maskHtpasswd(match: string, command: string, flags: string, args: string): string {
  if (!/-[A-Za-z25]{0,7}b/.test(flags)) return match;
  const words = args.match(HTPASSWD_ARG) ?? [];
  const at = /-[A-Za-z25]{0,7}n/.test(flags) ? 1 : 2;
  const password = words[at];
  if (password === undefined || /^[ \t]*['"]?\$/.test(password)) return match;
  words[at] = password.replace(/^([ \t]*)[\s\S]*$/, `$1${MASK}`);
  return command + words.join("");
}

export const SECRET_SHAPES: readonly SecretShape[] = [
  // A key block, PGP's too, to its END line, or without one (a file read in part) its base64 run.
  // Either stops at the next key's BEGIN line, which the next match reads (to its END, the old
  // reach of this one): else each of many BEGINs read 8 KiB ahead (1 MB of them took 0.4 s).
  [
    /-----BEGIN [A-Z ]{0,32}PRIVATE KEY(?: BLOCK)?-----(?:(?:(?!-----BEGIN [A-Z ]{0,32}PRIVATE KEY)[\s\S]){0,8192}?(?:-----END [A-Z ]{0,32}PRIVATE KEY(?: BLOCK)?-----|(?=-----BEGIN [A-Z ]{0,32}PRIVATE KEY))|(?:(?!-----BEGIN [A-Z ]{0,32}PRIVATE KEY)[A-Za-z0-9+/=:,\s\\-]){0,8192})/g,
    MASK,
  ],
  // A JWT before the tokens' prefixes: its base64url may spell one (`-sk-…` in a payload with
  // non-ASCII claims), which masked alone left the JWT broken and its signature showing.
  [/(?<![A-Za-z0-9_-])eyJ[A-Za-z0-9_-]{8,4096}\.[A-Za-z0-9_-]{8,4096}\.[A-Za-z0-9_-]{8,4096}/g, MASK],
  [/\b(?:AKIA|ASIA)[0-9A-Z]{16}\b/g, MASK],
  [/\bgh[pousr]_[A-Za-z0-9]{20,255}/g, MASK],
  [/\bgithub_pat_[A-Za-z0-9_]{20,255}/g, MASK],
  [/\bxox[abposr]-[A-Za-z0-9-]{10,255}/g, MASK],
  // Slack's rotating tokens: a refresh token (`xoxe-1-…`) and an access or configuration token
  // (`xoxe.xoxp-1-…`, `xoxe.xoxb-1-…`).
  [/\bxoxe(?:\.xox[abposr])?-[A-Za-z0-9-]{10,255}/g, MASK],
  [/\bsk-[A-Za-z0-9_-]{20,255}/g, MASK],
  // Stripe, Slack app-level, npm, Google API and GitLab tokens (a personal, deploy, runner, trigger,
  // CI job, OAuth application, SCIM, feed, incoming mail, agent or feature flag client token).
  [
    /\b(?:[sr]k_(?:live|test)_[A-Za-z0-9]{10,255}|xapp-[A-Za-z0-9-]{10,255}|npm_[A-Za-z0-9]{36}|AIza[0-9A-Za-z_-]{35}|gl(?:pat|dt|rt|ptt|cbt|oas|soat|ft|imt|agent|ffct)-[A-Za-z0-9_-]{20,255})/g,
    MASK,
  ],
  // A Hugging Face token (`hf_` and 34 letters; digits allowed, not relied on) as a whole word, a
  // PyPI token, and a SendGrid key (`SG.`, a 22-character id, `.`, a 43-character secret).
  [/\bhf_[A-Za-z0-9]{34}\b/g, MASK],
  // A PyPI API token: `pypi-` and a macaroon, whose base64 starts `AgE`.
  [/\bpypi-AgE[A-Za-z0-9_-]{50,4096}/g, MASK],
  [/\bSG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}(?![A-Za-z0-9_-])/g, MASK],
  [/\bwhsec_[A-Za-z0-9+/=]{8,255}/g, MASK],
  // A HashiCorp Vault service, batch or recovery token (Vault 1.10 on; its older `s.…` ones only
  // after `vault login`, below).
  [/\bhv[sbr]\.[A-Za-z0-9_-]{20,1024}/g, MASK],
  // Other vendors' prefixed credentials, each as its vendor documents it or the secret scanners
  // (gitleaks, trufflehog) read it, so that a bare one in a command or a file shows no more
  // than one after `TOKEN=`: xAI (`xai-` and 80), Groq (`gsk_` and 52), a Google OAuth access
  // token (`ya29.`, service accounts' with dots in it), Databricks (`dapi` and 32 hex digits),
  // DigitalOcean (`dop_v1_`, `doo_v1_`, `dor_v1_` and 64), Linear (`lin_api_` and 40), Sentry
  // (a personal `sntryu_` and 64, an organization's `sntrys_` and base64 of its claims), Doppler
  // (`dp.st.`, `dp.pt.` and the others, a service token's config name between), Cloudflare's
  // scannable tokens (`cfut_`, `cfat_`, `cfk_`), Atlassian (`ATATT3`), Twilio's API key (`SK`
  // and 32 hex digits), Mailgun's (`key-` and 32; not `cache-key-…`) and Notion's (`ntn_`, and
  // the older `secret_` and 43 with a digit among them: `secret_` and a word is a name).
  [
    /\b(?:xai-[A-Za-z0-9_]{80}\b|gsk_[A-Za-z0-9]{52}\b|ya29\.(?:[A-Za-z0-9_-]|\.(?=[A-Za-z0-9_-])){20,4096}|dapi[0-9a-f]{32}(?:-[0-9])?\b|do[opr]_v1_[0-9a-f]{64}\b|lin_api_[A-Za-z0-9]{40}\b|sntryu_[0-9a-f]{64}\b|sntrys_eyJ[A-Za-z0-9+/=_]{32,4096}|dp\.(?:ct|pt|st|sa|said|scim|audit)\.(?:[a-z0-9_-]{2,35}\.)?[A-Za-z0-9]{40,44}\b|cf(?:ut|at|k)_[A-Za-z0-9]{40,255}|ATATT3[A-Za-z0-9_=-]{150,255}|SK[0-9a-fA-F]{32}\b|ntn_[0-9]{11}[A-Za-z0-9]{35}\b|secret_(?=[A-Za-z]{0,42}[0-9])[A-Za-z0-9]{43}\b)/g,
    MASK,
  ],
  [/(?<![\w-])key-[0-9a-f]{32}(?![\w-])/g, MASK],
  [/(hooks\.slack\.com\/(?:services|workflows|triggers)\/)[A-Za-z0-9/]{8,255}/g, `$1${MASK}`],
  [/(discord(?:app)?\.com\/api\/(?:v\d{1,2}\/)?webhooks\/\d{1,32}\/)[A-Za-z0-9_-]{8,255}/g, `$1${MASK}`],
  // A Telegram bot's token in its API's URL (`…/bot123456789:AA…/sendMessage`, `…/file/bot…`).
  [/(\bapi\.telegram\.org\/(?:file\/)?bot)[0-9]{1,16}:[A-Za-z0-9_-]{20,255}/g, `$1${MASK}`],
  // A credential after its scheme has a digit or a symbol, or after Basic or Bearer letters in
  // no word's case (base64 of `user:pass`, `dXNlcjpwYXNz`: a capital after a small letter, or two
  // before the first): "Basic validation", "Bearer Tokens", "BASIC AUTH" or "Basic usage/examples"
  // is prose, and Java's `Token accessToken` a declaration. The scheme is spelt as headers spell
  // it (not a path's `…/token`; Basic as BASIC_SCHEME reads it).
  [
    new RegExp(
      `\\b(Bearer|bearer|BEARER|${BASIC_SCHEME}|Token|TOKEN)[ \\t]+(?![ \\t])(?=${HAS_DIGIT_OR_SYMBOL}|(?<!(?:Token|TOKEN)[ \\t]{1,4096})${IN_NO_WORDS_CASE})[A-Za-z0-9._~+/=-]{8,4096}`,
      "g",
    ),
    `$1 ${MASK}`,
  ],
  // The same with the credential on the next line, after a shell's line continuation (`curl -H
  // "Authorization: Bearer \⏎ eyJ…"`), whose `\` and line break stay; not a flag or a variable
  // there (`TOKEN \⏎ --build-arg …`, `Bearer \⏎ $TOKEN`).
  [
    new RegExp(
      `\\b(Bearer|bearer|BEARER|${BASIC_SCHEME}|Token|TOKEN)([ \\t]{0,4}\\\\\\r?\\n[ \\t]{0,64})(?![-$])(?=${HAS_DIGIT_OR_SYMBOL}|${IN_NO_WORDS_CASE})[A-Za-z0-9._~+/=-]{8,4096}`,
      "g",
    ),
    `$1$2${MASK}`,
  ],
  // A Basic credential of letters in a word's case, all small or capitalised (`ajhodjpj`, base64
  // of `j8hv:c`; about one in 3,000 of those with no digit), which the shape before takes for a
  // word: masked when it decodes, as RFC 7617 has it, to `user:password` in printable ASCII, which
  // no word of prose does (none of 10,000 words in Python's library).
  [
    new RegExp(`\\b(${BASIC_SCHEME})[ \\t]{1,4}([A-Za-z]{8,4096})(?![\\w.~+/=-])`, "g"),
    (match: string, scheme: string, credential: string) =>
      isBasicCredential(credential) ? `${scheme} ${MASK}` : match,
    /basic/i,
  ],
  // A URL's password, up to the last @ before the host (`//admin:p@ss@db`), also with no user.
  [/(\/\/[^/\s:@]{0,256}:)[^/\s]{1,256}@/g, `$1${MASK}@`],
  // curl's user:password (`docker run -u 1000:1000` is a uid and a gid), in quotes up to the
  // closing one, as PASSWORD_ARG reads one.
  [
    /(\bcurl\b(?:(?!\bcurl\b)[^\n;|&\\]|\\[\s\S]){0,512}?[ \t](?:-u|--user)[ \t]{0,4}['"]?[^\s:'"]{1,256}:)(?!\$)(?:(?<='[^\s:'"]{1,256}:)[^'\n]{1,256}(?=')|(?<="[^\s:'"]{1,256}:)[^"\n]{1,256}(?=")|[^\s'"]{1,256})/g,
    `$1${MASK}`,
  ],
  [
    new RegExp(
      `(--(?:(?:[A-Za-z0-9]{1,32}-){1,4}(?:${FLAG_SECRET})(?<!-(?:${NOT_A_SECRET_FLAG})-(?:${FLAG_SECRET}))[= ](?![-<>|;&])|(?:${FLAG_SECRET})[= ]))(?!['"]?(?:\\$|${SECRET_MOUNT}))(?:'[^'\\n]{1,4096}'|"[^"\\n]{1,4096}"|['"]?[^\\s'"]{1,4096})`,
      "gi",
    ),
    `$1${MASK}`,
  ],
  // A password as a client's own flag: `mysql -pX`, `docker login -p X` (`-p=X` and `-pX` too, as
  // its flags' parser reads them; `az login -p X`), `sshpass -p X`, `redis-cli -a X`, `zip -P X`,
  // `7z a -pX`, `htpasswd -b FILE USER X`, `mongosh -p X` (not its `-p` alone, which prompts,
  // nor docker's after a container named mongo: PUBLISHED_PORT), SQL Server's `sqlcmd -P X`,
  // keytool's and jarsigner's `-storepass X` and `-keypass X` (each of them: a command often has
  // both; not `-storepass:env NAME`), and a .netrc line.
  [
    new RegExp(`(\\b(?:mysql|mysqldump|mariadb)\\b[^\\n;|&]{0,256}?[ \\t]-p)(?![ \\t])${PASSWORD_ARG}`, "g"),
    `$1${MASK}`,
  ],
  [
    new RegExp(
      `(\\b(?:docker|podman|helm|oras|az)[ \\t]+(?:(?:registry|acr)[ \\t]+)?login\\b[^\\n;|&]{0,256}?[ \\t]-p(?:=|[ \\t]{1,4})?)${PASSWORD_ARG}`,
      "g",
    ),
    `$1${MASK}`,
  ],
  [new RegExp(`(\\bsshpass[ \\t]+-p[ \\t]{0,4})${PASSWORD_ARG}`, "g"), `$1${MASK}`],
  [new RegExp(`(\\bredis-cli\\b[^\\n;|&]{0,256}?[ \\t]-a[ \\t]{1,4})${PASSWORD_ARG}`, "g"), `$1${MASK}`],
  [
    new RegExp(`((?<![\\w.-])(?:un)?zip\\b[^\\n;|&]{0,256}?[ \\t]-P[ \\t]{0,4})${PASSWORD_ARG}`, "g"),
    `$1${MASK}`,
  ],
  [new RegExp(`((?<![\\w.-])7z[arz]?\\b[^\\n;|&]{0,256}?[ \\t]-p)${PASSWORD_ARG}`, "g"), `$1${MASK}`],
  [HTPASSWD, maskHtpasswd, /htpasswd/],
  [
    new RegExp(
      `((?<![\\w.-])mongo(?:sh|dump|restore|export|import|stat|top)?(?![\\w.-])[^\\n;|&]{0,256}?[ \\t]-p[ \\t]{1,4})(?!-|${PUBLISHED_PORT})${PASSWORD_ARG}`,
      "g",
    ),
    `$1${MASK}`,
    /mongo/,
  ],
  [
    new RegExp(`(\\b(?:sqlcmd|bcp)\\b[^\\n;|&]{0,256}?[ \\t]-P[ \\t]{0,4})(?!-)${PASSWORD_ARG}`, "g"),
    `$1${MASK}`,
    /sqlcmd|bcp/,
  ],
  [
    new RegExp(
      `((?<![\\w-])-(?:src|dest)?(?:storepass|keypass)(?<=\\b(?:keytool|jarsigner)\\b[^\\n;|&]{0,512})[ \\t]{1,4})${PASSWORD_ARG}`,
      "g",
    ),
    `$1${MASK}`,
    /storepass|keypass/,
  ],
  [/(\bmachine[ \t]+\S{1,256}[ \t]+login[ \t]+\S{1,256}[ \t]+password[ \t]+)\S{1,256}/g, `$1${MASK}`],
  // A password in SQL, as `psql -c "…"`, `mysql -e "…"` and a migration's file spell it:
  // PostgreSQL's `CREATE ROLE … [ENCRYPTED] PASSWORD '…'` and `ALTER USER … PASSWORD '…'`,
  // MySQL's `IDENTIFIED BY '…'` (`IDENTIFIED WITH plugin BY "…"`, its double quotes too). A
  // literal's quote is doubled inside it. Not a variable (`'$PW'`), nor a literal starting with a
  // blank, which is code around the word (`'Wrong password ' + name + '!'`). Which quote a keyword
  // takes is said by a lookahead after its blanks: a lookbehind for `BY` read all the blanks back
  // at each one given back (a keyword and 16 KiB of blanks took 0.25 s).
  [
    /(\b(?:PASSWORD[ \t]+(?=')|IDENTIFIED(?:[ \t]+WITH[ \t]+\w{1,64})?[ \t]+BY[ \t]+))(['"])(?![\s$])(?:(?!\2)[^\n]|\2\2){1,4096}\2/gi,
    `$1$2${MASK}$2`,
    /password|identified/i,
  ],
  // Credentials as other clients' files and flags spell them: .npmrc's `_auth=`, a docker
  // config.json's `"auth"` (base64 of user:password; its quotes escaped too, as a CI script's
  // `echo "{\"auths\": …}"` writes it), `curl -b` and `--cookie` with a cookie (not a cookie
  // jar's file name), `kubectl create secret --from-literal=KEY=VALUE` (every literal, a
  // configmap's too), `aws configure set aws_secret_access_key X`.
  [/((?:^|[:\s])_auth[ \t]{0,4}=[ \t]{0,4})(?!\$)[^\s'"]{1,4096}/gm, `$1${MASK}`],
  [
    /((\\?")auth\2[ \t]{0,8}:[ \t]{0,8})\2(?:[A-Za-z0-9+/]{4}){3,1024}(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?\2/g,
    `$1$2${MASK}$2`,
  ],
  [
    /(\bcurl\b(?:(?!\bcurl\b)[^\n;|&\\]|\\[\s\S]){0,512}?[ \t](?:-b|--cookie)[ \t=]{1,4})(?:"(?=[^"\n]{0,4096}=)[^"\n]{1,4096}"|'(?=[^'\n]{0,4096}=)[^'\n]{1,4096}'|(?=[^\s'"]{0,4096}=)[^\s'"]{1,4096})/g,
    `$1${MASK}`,
  ],
  [/(--from-literal[= ]['"]?[^=\s'"]{1,253}=)(?!\$)[^\s'"]{1,4096}/g, `$1${MASK}`],
  [
    /(\baws[ \t]+configure[ \t]+set[ \t]+(?:[\w-]{1,64}\.)?aws_(?:secret_access_key|session_token)[ \t]+)['"]?(?!\$)[^\s'"]{1,4096}/g,
    `$1${MASK}`,
  ],
  // Secrets a command stores: `gh secret set NAME --body X` (`-b X`, `<<< X`, and `echo X |`, as
  // gh reads its stdin without a body), a password or a secret a command reads from its stdin
  // (`echo X | docker login -u me --password-stdin`, `printf X |` as printf's format alone, `<<<
  // X` after the flag; STDIN_LOGIN), an SSM parameter's `--value X` when it is a `--type
  // SecureString` (a String's is configuration, an AMI id or a URL, which an auditor reads),
  // Secrets Manager's `--secret-string X` (not a `file://` to read it from), openssl's `-passin
  // pass:X` (not `env:` or `file:`) and `-k X`, `-K X` or `-hmac X` (not `-kfile`), `npm config
  // set //registry/:_authToken X`, and `vault login X` after its flags, `-name=value` or `-name
  // value` as Go's flag package reads them (not its `-` for stdin, nor a method's `k=v`).
  [
    new RegExp(
      `(\\bgh[ \\t]+secret[ \\t]+set\\b${commandRest("gh")}(?:[ \\t](?:--body(?:=|[ \\t]{1,4})|-b(?:=|[ \\t]{0,4}))|<<<[ \\t]{0,4}))${PASSWORD_ARG}`,
      "g",
    ),
    `$1${MASK}`,
  ],
  [
    new RegExp(
      `(\\b(?:echo(?:[ \\t]{1,4}-[neE]{1,3}){0,2}|printf(?:[ \\t]{1,4}['"]?%s(?:\\\\n)?['"]?)?)[ \\t]{1,4})(?!-[neE]{1,3}[ \\t])${PASSWORD_ARG}(?=[ \\t]{0,4}\\|[ \\t]{0,4}(?:gh[ \\t]+secret[ \\t]+set\\b|${STDIN_LOGIN}))`,
      "g",
    ),
    `$1${MASK}`,
    /\bgh[ \t]+secret[ \t]+set\b|--password-stdin\b|secret[ \t]+put\b|env[ \t]+add\b|--data-file[= ]-/,
  ],
  [
    new RegExp(`((?<![\\w-])--password-stdin\\b[^\\n;|&]{0,256}?<<<[ \\t]{0,4})${PASSWORD_ARG}`, "g"),
    `$1${MASK}`,
    /--password-stdin\b/,
  ],
  [
    new RegExp(
      `(\\baws[ \\t]+ssm[ \\t]+put-parameter\\b(?=${commandRest("aws")}[ \\t]--type(?:=|[ \\t]{1,4})['"]?SecureString\\b)${commandRest("aws")}[ \\t]--value(?:=|[ \\t]{1,4}))(?!['"]?fileb?://)${SECRET_ARG}`,
      "g",
    ),
    `$1${MASK}`,
  ],
  [new RegExp(`(--secret-string(?:=|[ \\t]{1,4}))(?!['"]?fileb?://)${SECRET_ARG}`, "g"), `$1${MASK}`],
  [
    new RegExp(
      `((?<![\\w-])-(?:passin|passout|pass|password|srppass)[ \\t]{1,4}['"]?pass:)(?:(?<='pass:)(?!\\$)[^'\\n]{1,256}(?=')|(?<="pass:)(?!\\$)[^"\\n]{1,256}(?=")|${PASSWORD_ARG})`,
      "g",
    ),
    `$1${MASK}`,
  ],
  [
    new RegExp(`(\\bopenssl\\b${commandRest("openssl")}[ \\t]-(?:k|K|hmac)[ \\t]{1,4})${PASSWORD_ARG}`, "g"),
    `$1${MASK}`,
  ],
  [
    new RegExp(
      `(\\b(?:npm|pnpm|yarn)[ \\t]+config[ \\t]+set[ \\t]+(?:-\\S{1,64}[ \\t]{1,4}){0,4}['"]?[^\\s='"]{0,512}(?:_authToken|_auth|_password|npmAuthToken|npmAuthIdent)['"]?[ \\t]{1,4})${PASSWORD_ARG}`,
      "g",
    ),
    `$1${MASK}`,
  ],
  [
    /(\bvault[ \t]+login(?:[ \t]{1,4}-{1,2}(?:[\w-]{1,64}=\S{0,256}|(?:no-print|no-store|non-interactive|tls-skip-verify|token-only)(?![\w-])|[\w-]{1,64}[ \t]{1,4}(?![-$])[^\s;|&]{1,256})){0,8}[ \t]{1,4})(?![-$]|['"]\$)(?:'[^'\n=]{1,256}'|"[^"\n=]{1,256}"|[^\s'"=;|&()<>`]{1,256}(?![^\s'";|&()<>`]))/g,
    `$1${MASK}`,
  ],
  // A connection string's `Pwd=` (ODBC, SQL Server) and Azure Storage's `AccountKey=`: a segment
  // at the start or after a `;`, up to the next (not `pwd = os.getcwd()` or `export PWD=dir`), and
  // a signed URL's signature (Azure SAS, S3, GCS).
  [/((?:^|;)[ \t]{0,4}(?:pwd|AccountKey)=)(?![/~$;'"\s])[^;'"\s]{1,4096}(?=$|[;'"\s])/gim, `$1${MASK}`],
  [/([?&](?:sig|signature|X-Amz-Signature|X-Goog-Signature)=)[A-Za-z0-9%+/=_-]{16,4096}/gi, `$1${MASK}`],
  [URL_QUERY, maskUrlQuery, URL_QUERY_SECRET_GATE],
  // AWS Signature Version 4's in an Authorization header (`AWS4-HMAC-SHA256 Credential=…,
  // SignedHeaders=…, Signature=` and 64 hex digits).
  [/(\bSignature=)[0-9a-f]{64}(?![0-9A-Za-z])/g, `$1${MASK}`],
  // Lowercase YAML keys on their own line (`password: x`, a kubeconfig's `token:`, an S3 config's
  // `secret_key:`, Rails' `secret_key_base:`), not a type or a permission (`password: string`,
  // `id-token: write`), nor a key of data (`sort_key: created`), nor where a key is
  // (`private_key: ~/.ssh/id_rsa`).
  [
    new RegExp(
      `^([ \\t]{0,32}(?:- )?[A-Za-z0-9_.-]{0,32}(?:password|passwd|secret|token|(?:api|secret|access|private|signing|encryption|master)[-_]?key(?:[-_]base)?|client-key-data)[ \\t]{0,4}:[ \\t]{1,8})(?!(?<=key[ \\t]{0,4}:[ \\t]{1,8})${KEY_PATH}${YAML_LINE_END})(?!["']?\\$|(?:string|str|number|int|bool|boolean|None|null|true|false|read|write|none|~)${YAML_LINE_END})(?:"[^"\\n]{1,4096}"|'[^'\\n]{1,4096}'|[^\\s"'#;,()[\\]{}<>|][^\\s"';,()[\\]{}<>|]{0,4095})(?=${YAML_LINE_END})`,
      "gim",
    ),
    `$1${MASK}`,
  ],
  [COOKIE_HEADER, maskCookies, /cookie/i],
  [COOKIE_LIST, maskCookieList, /cookie/i],
  [DOCUMENT_COOKIE, maskDocumentCookie, /document\.cookie/],
  // A header holding a credential, when its value looks like one (12 or more, a digit among them):
  // also any name ending in -Key, -Token or -Secret (Datadog's `DD-API-KEY`, Azure's
  // `Ocp-Apim-Subscription-Key`, `Circle-Token`), but not one naming data (`Idempotency-Key`,
  // `Cache-Key`, `Sec-WebSocket-Key`) nor a value that is a path (`ssh-key: ~/.ssh/id_ed25519`).
  // A header in brackets (`[X-Api-Key: …]`, a log's) ends before its closing ones. An
  // Authorization's scheme, when it is not Bearer, Basic or Token (`ApiKey`, Okta's `SSWS`), stays.
  [
    new RegExp(
      `(?<![^\\s'"([{])((?:PRIVATE-TOKEN|(?:Proxy-)?Authorization|Api-?Key|X-(?:[A-Za-z0-9-]{0,64}-)?(?:Api-?|Auth-?|Access-?)?(?:Key|Token|Auth|Secret)|[A-Za-z0-9]{1,32}(?:-[A-Za-z0-9]{1,32}){0,4}-(?:Key|Token|Secret)(?<!(?:^|[\\s'"([{-])${DATA_HEADER_KEY}))[ \\t]{0,4}:[ \\t]{0,8}${AUTH_SCHEME})(?!${KEY_PATH}(?![^\\s'"]))(?=[^\\s'"]{0,4096}\\d)[^\\s'"]{12,4096}?(?=(?:[)\\]}]{1,4}[.,;:]?)?(?![^\\s'"]))`,
      "gi",
    ),
    `$1${MASK}`,
  ],
  // NAME=value, quoted (escaped quotes too); not a comparison, a count of tokens or a $(...) or $VAR.
  [
    new RegExp(
      `\\b(?![A-Za-z0-9_]{0,64}TOKENS\\b)([A-Za-z0-9_]{0,64}(?:${NAMED})[A-Za-z0-9_]{0,64})(?<!_(?:${NOT_A_VALUE}))=(?!=)${ASSIGNED_VALUE}`,
      "gi",
    ),
    `$1=${MASK}`,
    NAMED_GATE,
  ],
  // The same for an environment-style `*_KEY` name in capitals (`ENCRYPTION_KEY=…` in a .env).
  [
    new RegExp(`\\b(${ENV_KEY})(?<!_(?:${NOT_A_VALUE}))=(?!=)${ASSIGNED_VALUE}`, "g"),
    `$1=${MASK}`,
    ENV_KEY_GATE,
  ],
  // A spaced = before a quoted literal (terraform.tfvars, settings.py, `const password = "x"`, Go's
  // `password := "x"`), not a name of one (`SECRET_NAME = "prod/db"`).
  [
    new RegExp(
      `\\b(?![A-Za-z0-9_]{0,64}TOKENS\\b)([A-Za-z0-9_]{0,64}(?:${NAMED})[A-Za-z0-9_]{0,64})(?<!_(?:${NOT_A_VALUE}))([ \\t]{1,4}:?=[ \\t]{0,4}|:?=[ \\t]{1,4})(?:"(?!\\$[({A-Za-z_])(?:[^"\\\\\\n]|\\\\.){1,4096}"|'[^'\\n]{1,4096}')`,
      "gi",
    ),
    `$1$2"${MASK}"`,
    NAMED_GATE,
  ],
  // ~/.aws/credentials, whose lines are spaced around the =.
  [/^([ \t]{0,16}aws_(?:secret_access_key|session_token)[ \t]{0,8}=[ \t]{0,8})\S{1,4096}/gim, `$1${MASK}`],
  // An INI or properties line spaced around its = with an unquoted value (~/.pypirc's
  // `password = pypi-…`, my.cnf, odbc.ini), the value one word with a digit or a symbol in it: in
  // code, `password = hashed` or `token = None` is a name, `token = next_token()` a call, and a
  // line ending in `;` a statement; a number (`token_count = 0`) or an ATTRIBUTE_READ (`api_key =
  // settings.API_KEY_V2`) is code too, a number only a password's, and `password = hunter2.Secure`
  // a password.
  [
    new RegExp(
      `^([ \\t]{0,32}(?![A-Za-z0-9_.-]{0,64}TOKENS\\b)[A-Za-z0-9_.-]{0,64}(?:${NAMED})[A-Za-z0-9_.-]{0,64}(?<![_.-](?:${NOT_A_VALUE}))[ \\t]{0,8}=(?!=)[ \\t]{0,8})(?![$%"'])(?!${CODE_NUMBER})(?=[^\\s]{0,4096}[0-9!@#%^&*+=~/-])([^\\s"'()[\\]{};,<>|\`]{1,4096})(?=[ \\t]*$)`,
      "gim",
    ),
    maskSpacedValue,
    NAMED_GATE,
  ],
  // YAML and .env-style keys in capitals (`POSTGRES_PASSWORD: x`, not `${{ secrets.X }}`), and
  // JSON keys ending in a secret's name (`"password": "x"`, not `"password_policy"`).
  [
    new RegExp(
      `\\b(?![A-Z0-9_]{0,64}TOKENS\\b|(?:${OWN_CODES}):)([A-Z0-9_]{0,64}(?:${NAMED})[A-Z0-9_]{0,64})(?<!_(?:${NOT_A_VALUE})):[ \\t]{1,8}(?!["']?\\$|#)(?:"(?:[^"\\\\]|\\\\.){0,4096}"|'[^']{0,4096}'|(?:[^\\s"'\\\\]|\\\\[^\\s"]){1,4096})`,
      "g",
    ),
    `$1: ${MASK}`,
    NAMED_GATE,
  ],
  // An environment-style `*_KEY` name in capitals as a YAML line of its own (a compose file's
  // `RAILS_MASTER_KEY: …`), not in code (`const SESSION_KEY: string`, `{ QUERY_KEY: "todos", }`,
  // an object literal's `STRIPE_KEY: process.env.STRIPE_KEY,` on a line of its own).
  [
    new RegExp(
      `^([ \\t]{0,32}(?:- )?${ENV_KEY}(?<!_(?:${NOT_A_VALUE})):[ \\t]{1,8})(?!["']?\\$|#)(?:"(?:[^"\\\\\\n]|\\\\.){1,4096}"|'[^'\\n]{1,4096}'|[^\\s"'#][^\\s"']{0,4095}(?<![,;]))(?=${YAML_LINE_END})`,
      "gm",
    ),
    `$1${MASK}`,
    ENV_KEY_GATE,
  ],
  // A secret's name in capitals, quoted, then its value quoted: a call's first two arguments
  // (WordPress's `define('DB_PASSWORD', '…')`, Go's `os.Setenv`) and an environment's entry set
  // (`os.environ['API_KEY'] = '…'`, Ruby's `ENV['API_KEY'] ||= '…'`). Not a variable, nor another
  // name (a list of the variables a program needs, `['API_KEY', 'DB_PASSWORD']`). wp-config.php
  // aligns its values with up to a few dozen blanks.
  [
    new RegExp(
      `((["'])(?![A-Z0-9_]{0,64}TOKENS\\2)(?:[A-Z0-9_]{0,64}(?:${NAMED})[A-Z0-9_]{0,64}|${ENV_KEY})(?<!_(?:${NOT_A_VALUE}))\\2(?:[ \\t]{0,8},|\\][ \\t]{0,8}\\|{0,2}=)[ \\t]{0,32})(["'])(?!\\$|[A-Z][A-Z0-9_]{0,64}\\3)(?:(?!\\3)[^\\\\\\n]|\\\\.){1,4096}\\3`,
      "g",
    ),
    `$1$3${MASK}$3`,
    /["'][ \t]{0,8}(?:,|\][ \t]{0,8}\|{0,2}=)/,
  ],
  // A key ending in a secret's name before a quoted literal: JSON's, a header's name with a dash
  // too (`{"X-Api-Key": "…"}` in a requests call), a Python dict's in single quotes (`{'password':
  // '…'}`), and a JS object literal's bare name (`{ apiKey: "…" }`), whose value must be one word
  // with a digit or a symbol (`password: "Password"` is a label, `token: "Token"` a type). Its
  // quotes may be escaped, as JSON's are in a double-quoted shell string or a string literal
  // (`curl -d "{\"password\": \"…\"}"`): the value then ends at the first escaped quote.
  [
    new RegExp(
      `((?:(\\\\?["'])[A-Za-z0-9_-]{0,64}(?:${NAMED_DASHED})(?:[_-]?(?:KEY|VALUE))?\\2|(?<![\\w$.-])[A-Za-z0-9_$]{0,64}(?:${NAMED})(?=:[ \\t]{0,8}(["'])(?=[^\\s"'\\\\]{0,4096}[0-9!@#%^&*+=~/-])[^\\s"'\\\\]{1,4096}\\3))[ \\t]{0,8}:[ \\t]{0,8})(\\\\?["'])(?!\\$\\{)(?:(?!\\4)[^\\\\\\n]|(?!\\4)\\\\.){1,4096}\\4`,
      "gi",
    ),
    `$1$4${MASK}$4`,
    NAMED_DASHED_GATE,
  ],
  // An Authorization header's value as a quoted literal (`{"Authorization": "…"}` in JSON or a
  // Python dict), one word with a digit or a symbol, after a scheme word or none (not `"Bearer " +
  // token`, whose token is code, nor `"required"`); its quotes escaped too, as the shape before reads them.
  [
    new RegExp(
      `((\\\\?["'])(?:Proxy-)?Authorization\\2[ \\t]{0,8}:[ \\t]{0,8}(\\\\?["'])(?!\\$\\{)${AUTH_SCHEME})(?=[^\\s"'\\\\]{0,4096}[0-9!@#%^&*+=~/-])[^\\s"'\\\\]{8,4096}(?=\\3)`,
      "gi",
    ),
    `$1${MASK}`,
    /authorization/i,
  ],
  // XML: an element named ending in a secret's name (Maven's settings.xml `<password>…</password>`),
  // and a .NET config's `<add key="ApiKey" value="…"/>`; not `<password>${env.PW}</password>`.
  [
    new RegExp(`(<([A-Za-z0-9_.:-]{0,64}(?:${NAMED}))>)(?![$])[^<]{1,4096}(?=</\\2>)`, "gi"),
    `$1${MASK}`,
    NAMED_GATE,
  ],
  [
    new RegExp(
      `(\\bkey="[A-Za-z0-9_.:-]{0,64}(?:${NAMED})"[ \\t]{1,8}value=")(?![$])[^"]{1,4096}(?=")`,
      "gi",
    ),
    `$1${MASK}`,
    NAMED_GATE,
  ],
];

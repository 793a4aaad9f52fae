/**
 * README.md is the user's reference: what the code can answer, log or read is named there, and
 * what README names is something the code does. Each check reads the sources as text, so a new
 * code, log line, setting or option fails here until it is documented.
 */
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { tempDir } from "../support/temp.js";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const README = readFileSync(join(ROOT, "README.md"), "utf8");

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith(".ts") ? [path] : [];
  });
}

const FILES = sourceFiles(join(ROOT, "src")).map((path) => ({ path, text: readFileSync(path, "utf8") }));
const SOURCES = FILES.map((file) => file.text);

/** The section of README under `heading` (a whole heading line). */
function section(heading: string): string {
  const start = README.indexOf(`\n${heading}\n`);
  expect(start, heading).toBeGreaterThan(0);
  // Up to the next heading of its level or above.
  const level = heading.indexOf(" ");
  const rest = README.slice(start + heading.length + 1);
  const end = new RegExp(`\\n#{1,${level}} `).exec(rest)?.index;
  return README.slice(start, end === undefined ? undefined : start + heading.length + 1 + end);
}

/** The first column of a section's tables: `| \`NAME\` |`. */
function tableNames(text: string): string[] {
  return [...text.matchAll(/^\| `([^`]+)` \|/gm)].map((m) => m[1] as string);
}

describe("README's table of codes", () => {
  /**
   * UPPER_SNAKE string literals that are not hookgate's codes: environment variables and bindings,
   * the proxy variables, Node's (its HTTP parser's too), OpenSSL's certificate checks', SQLite's and undici's error codes, and the variable names masking and the shell
   * rules read.
   */
  const NOT_CODES =
    /^(HOOKGATE_|ERR_|HPE_|CERT_|UNABLE_TO_|SQLITE_|UND_ERR_|LC_|GIT_|RUST_)|^(CGO_ENABLED|EAI_AGAIN|FORCE_COLOR|ALL_PROXY|HTTP_PROXY|HTTPS_PROXY|NO_PROXY|NODE_ENV|NO_COLOR|TAR_OPTIONS)$/;
  const literals = (text: string) =>
    [...text.matchAll(/"([A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+)"/g)].map((m) => m[1] as string);
  const codes = new Set(SOURCES.flatMap(literals).filter((name) => !NOT_CODES.test(name)));
  const documented = tableNames(section("## Codes"));

  it("lists every code a hook's answer, a rule's call or an egress refusal can carry", () => {
    // The walk finds codes of each kind, so the check below can fail.
    for (const code of [
      "AUTH_MISSING",
      "BODY_TOO_LARGE",
      "JUDGE_TIMEOUT",
      "FORWARD_NO_URL",
      "EGRESS_REDIRECT",
    ])
      expect(codes).toContain(code);
    expect([...codes].filter((code) => !documented.includes(code)).sort()).toEqual([]);
  });

  it("lists no code the code cannot produce, and each once", () => {
    // The outcomes of a call that did not fail have no underscore to find them by.
    const outcomes = ["OK", "SKIPPED"];
    expect(documented.filter((code) => !codes.has(code) && !outcomes.includes(code))).toEqual([]);
    expect(documented.length).toBe(new Set(documented).size);
  });
});

describe("README's settings", () => {
  const namesIn = (text: string) => new Set(text.match(/(?<![\w$])HOOKGATE_[A-Z0-9_]*[A-Z0-9](?!\w)/g));
  const scripts = readdirSync(join(ROOT, "scripts"))
    .filter((name) => name.endsWith(".mjs"))
    .map((name) => readFileSync(join(ROOT, "scripts", name), "utf8"));
  const read = new Set([...SOURCES, ...scripts].flatMap((text) => [...namesIn(text)]));
  const rows = [...section("### Settings").matchAll(/^\| ([^|]*) \|/gm)].flatMap((m) => [
    ...namesIn(m[1] as string),
  ]);

  it("has a row for every variable and binding hookgate reads, and none for another", () => {
    // The walk finds the names each runtime reads, so the check below can fail.
    for (const name of ["HOOKGATE_POLICY", "HOOKGATE_QUEUE_URL", "HOOKGATE_SESSIONS", "HOOKGATE_POLICY_FILE"])
      expect(read).toContain(name);
    expect([...read].filter((name) => !rows.includes(name)).sort()).toEqual([]);
    expect(rows.filter((name) => !read.has(name))).toEqual([]);
  });

  it("names no other HOOKGATE_ variable than these and the examples' env: references", () => {
    const examples = ["examples/policy.json", "serverless.yml"].map((file) =>
      readFileSync(join(ROOT, file), "utf8"),
    );
    const known = new Set([...read, ...examples.flatMap((text) => [...namesIn(text)])]);
    expect([...namesIn(README)].filter((name) => !known.has(name))).toEqual([]);
  });
});

describe("README's CLI section", () => {
  const block = /\n## CLI\n\n```\n([\s\S]*?)```/.exec(README)?.[1] ?? "";

  it("shows the usage `hookgate --help` prints", async () => {
    const { USAGE } = await import("../../src/entry/help.js");
    const lines = USAGE.slice(USAGE.indexOf("Usage:\n") + "Usage:\n".length).replace(/^ {2}/gm, "");
    expect(block).toBe(lines);
  });

  it("names every option a command reads, and no other", () => {
    const options = new Set(
      // parseArgs reads options in src/entry alone; elsewhere `{ type: "string" }` is a JSON schema's.
      FILES.filter((file) => file.path.includes("/src/entry/"))
        .flatMap(({ text }) => [...text.matchAll(/"?([a-z][a-z-]*)"?: \{ type: "(?:string|boolean)"/g)])
        .map((m) => `--${m[1]}`),
    );
    // The walk finds options of several commands, so the check below can fail.
    for (const option of ["--policy", "--coverage", "--sqs-queue-url", "--with-judge"])
      expect(options).toContain(option);
    // `--sqs-...` stands for the three `--sqs-` options before it.
    const named = new Set(block.match(/--[a-z][a-z-]*[a-z](?![a-z-])/g));
    expect([...options].filter((option) => !named.has(option)).sort()).toEqual([]);
    expect([...named].filter((option) => !options.has(option) && option !== "--version")).toEqual([]);
  });
});

describe("README's warnings and errors in the log", () => {
  const table = section("## Warnings and errors in the log");
  /**
   * Each `log("warn" | "error", "msg"` message, its `${…}` parts left as they are; a message kept
   * in a constant of the same file (`log("error", NOT_X, …)`, `refuseEvent(logger, event, NOT_SQS)`)
   * read from that constant.
   */
  const messages = SOURCES.flatMap((text) => [
    ...[...text.matchAll(/\.log\(\s*"(?:warn|error)",\s*(["`])((?:\\.|(?!\1)[^\\])*)\1/g)].map(
      (m) => m[2] as string,
    ),
    // `toldFailure(logger, "error", "queue receive failed", …)` (recurring-failure.ts) logs its
    // message at that level when the failure starts and once a minute while it goes on.
    ...[...text.matchAll(/toldFailure\(\s*[^,]+,\s*"(?:warn|error)",\s*(["`])((?:\\.|(?!\1)[^\\])*)\1/g)].map(
      (m) => m[2] as string,
    ),
    // `refuseEvent(logger, event, NOT_SQS)` (lambda-config.ts) logs its message as an error.
    ...[
      ...text.matchAll(
        /(?:\.log\(\s*"(?:warn|error)",|refuseEvent\([^,]+,[^,]+,)\s*([A-Z][A-Z0-9_]*)\s*[,)]/g,
      ),
    ].map((m) => {
      const constant = new RegExp(`const ${m[1]}\\s*=\\s*"((?:\\\\.|[^"\\\\])*)"`).exec(text);
      if (!constant) throw new Error(`${m[1]}, a logged message, is no string constant of its file`);
      return constant[1] as string;
    }),
  ]);
  /**
   * What a reader greps for: the message's text up to its first variable or stop (`;`, `:`, `(`),
   * or, where that is a word or two, its longest such text.
   */
  const greppable = (message: string) => {
    const parts = message.split(/\$\{[^}]*\}|[;:(]/).map((part) => part.trim());
    const first = parts[0] ?? "";
    return first.length >= 12 ? first : parts.reduce((a, b) => (b.length > a.length ? b : a), "");
  };

  it("names every warning and error line hookgate writes", () => {
    // The walk finds lines of several modules, so the check below can fail.
    for (const message of [
      "egress refused",
      "delivery dead-lettered",
      "policy reload failed; keeping the running policy",
      // Told through toldFailure.
      "queue receive failed",
    ])
      expect(messages).toContain(message);
    // Kept in constants (lambda-http.ts, lambda-sqs.ts).
    for (const start of [
      "the HTTP function was invoked with an event that is no HTTP request",
      "the SQS consumer was invoked with an event that is no SQS batch",
    ])
      expect(messages.filter((message) => message.startsWith(start))).toHaveLength(1);
    expect(messages.filter((message) => !table.includes(greppable(message)))).toEqual([]);
  });
});

describe("docs/POLICY.md", () => {
  it("names every field of the policy's schema", () => {
    const doc = readFileSync(join(ROOT, "docs/POLICY.md"), "utf8");
    const schema = JSON.parse(readFileSync(join(ROOT, "examples/policy.schema.json"), "utf8"));
    const fields = new Set<string>();
    const walk = (node: unknown): void => {
      if (Array.isArray(node)) for (const item of node) walk(item);
      else if (node !== null && typeof node === "object") {
        const { properties } = node as { properties?: unknown };
        if (properties !== null && typeof properties === "object")
          for (const name of Object.keys(properties)) fields.add(name);
        for (const value of Object.values(node)) walk(value);
      }
    };
    walk(schema);
    // The walk reaches every level, so the check below can fail.
    for (const field of ["version", "retryScheduleSeconds", "startsWith", "dailyCallsPerTeam"])
      expect(fields).toContain(field);
    expect(
      [...fields].filter((field) => !doc.includes(`\`${field}\``) && !doc.includes(`"${field}"`)),
    ).toEqual([]);
  });
});

describe("README's output of the example policy", () => {
  // The Quick start's doctor and the audit line show the hash `serve` gives examples/policy.json:
  // a reader compares it with their own gateway's, so it changes with every edit of the example.
  it("shows the hash examples/policy.json has now", async () => {
    const { loadPolicyFile } = await import("../../src/adapters/policy-source/file.js");
    const { sha256 } = await import("../support/policy.js");
    const loaded = await loadPolicyFile(join(ROOT, "examples/policy.json"), { env: () => undefined, sha256 });
    expect(loaded.ok ? undefined : loaded.error, "examples/policy.json does not load").toBeUndefined();
    const hash = loaded.ok ? loaded.value.policy.hash : "";
    const doctor = /✓ gateway answers: GET \/healthz 200, policy ([0-9a-f]{16})/.exec(README)?.[1];
    const audit = /"msg":"decision","decisionId":"…","policy":"([0-9a-f]{16})"/.exec(README)?.[1];
    // Said so that the next edit of the example knows the two places and what to write there.
    expect(
      { doctor, audit },
      `README.md shows another hash than examples/policy.json's: write ${hash} in the Quick start's doctor output ("✓ gateway answers: GET /healthz 200, policy ${hash}") and in the audit line's example ("policy":"${hash}")`,
    ).toEqual({ doctor: hash, audit: hash });
  });

  // The example's tests pass (test/e2e/policy-test.test.ts), so README's run of them lists each
  // case as it is named now: a case added to examples/policy.test.json is a line added here.
  it("shows every case of examples/policy.test.json in its run of hookgate test", () => {
    const command = "$ npx hookgate test examples/policy.json examples/policy.test.json --coverage\n";
    const start = README.indexOf(command) + command.length;
    const shown = README.slice(start, README.indexOf("\ncoverage: ", start)).split("\n");
    const cases: { name: string }[] = JSON.parse(
      readFileSync(join(ROOT, "examples/policy.test.json"), "utf8"),
    ).cases;
    expect(shown).toEqual([...cases.map((c) => `PASS  ${c.name}`), `${cases.length} passed, 0 failed`]);
  });

  // The candidate's run of the example's tests is cut short with "…", but each line it shows, the
  // count of cases passed and failed too, is one `hookgate test` prints now, in its order: a case
  // added to examples/policy.test.json changes that count.
  it("shows lines the candidate's run of hookgate test prints now", async () => {
    const { policyTestCommand } = await import("../../src/entry/policy-test.js");
    const args = ["test/fixtures/replay/policy.candidate.json", "examples/policy.test.json"];
    const command = `$ npx hookgate test ${args.join(" ")}\n`;
    const start = README.indexOf(command);
    expect(start, command).toBeGreaterThan(0);
    const shown = README.slice(start + command.length, README.indexOf("\n```", start))
      .split("\n")
      .filter((line) => line !== "…");
    const printed: string[] = [];
    const keep = (text: string) => {
      printed.push(text);
    };
    const code = await policyTestCommand(
      args.map((path) => join(ROOT, path)),
      { out: keep, err: keep },
    );
    expect(code).toBe(1);
    const lines = printed.join("").replaceAll(ROOT, "").split("\n");
    let next = 0;
    const notPrinted = shown.filter((line) => {
      const at = lines.indexOf(line, next);
      if (at >= 0) next = at + 1;
      return at < 0;
    });
    const failures = lines.filter((line) => !line.startsWith("PASS  ")).join("\n");
    expect(
      notPrinted,
      `hookgate test ${args.join(" ")} prints (its PASS lines left out):\n${failures}`,
    ).toEqual([]);
  });

  // The `check` section shows its run on a policy of five rules, given below the run: a warning
  // reworded in the code is a line to change there.
  it("shows what hookgate check prints for the rules its check section gives", async () => {
    const { checkCommand } = await import("../../src/entry/policy-commands.js");
    const command = "$ npx hookgate check policy.json\n";
    const start = README.indexOf(command);
    expect(start, command).toBeGreaterThan(0);
    const shown = README.slice(start + command.length, README.indexOf("```", start));
    const rulesAt = README.indexOf("```json\n", start) + "```json\n".length;
    const rules = README.slice(rulesAt, README.indexOf("\n```", rulesAt));
    const dir = tempDir("docs-check");
    writeFileSync(join(dir, "policy.json"), `{ "version": 1, "rules": [\n${rules}\n] }\n`);
    const printed: string[] = [];
    const keep = (text: string) => {
      printed.push(text);
    };
    const stdin = () => Promise.resolve(new Uint8Array());
    const code = await checkCommand([join(dir, "policy.json")], { out: keep, err: keep, stdin });
    expect(code).toBe(0);
    expect(printed.join("").replaceAll(`${dir}/`, "")).toBe(shown);
  });

  // The replay example's candidate is examples/policy.json with one rule changed, so every edit of
  // the example changes its hash too, and the report README shows must change with it.
  it("shows the hash the replay example's candidate has now", async () => {
    const { loadPolicyFile } = await import("../../src/adapters/policy-source/file.js");
    const { sha256 } = await import("../support/policy.js");
    const path = "test/fixtures/replay/policy.candidate.json";
    const loaded = await loadPolicyFile(join(ROOT, path), { env: () => undefined, sha256 });
    expect(loaded.ok ? undefined : loaded.error, `${path} does not load`).toBeUndefined();
    const hash = loaded.ok ? loaded.value.policy.hash : "";
    const shown =
      /replayed 13 records against test\/fixtures\/replay\/policy\.candidate\.json \(policy ([0-9a-f]{16})\)/.exec(
        README,
      )?.[1];
    expect(
      shown,
      `README.md's replay report shows another hash than ${path}'s: write ${hash} in its first line`,
    ).toBe(hash);
  });
});

/**
 * The route parity table: one policy and a list of requests over every route (each client's
 * hook, wrong methods, bad bodies and tokens, /healthz, /v1/simulate, 404s, doubled and encoded
 * slashes), and what each runtime's answer to one is reduced to for comparison: its status, the
 * headers hookgate sets, its body and its log lines. `serve` and the Worker bundle in workerd,
 * side by side over HTTP (test/e2e/route-parity.test.ts), and the Lambda handler
 * (test/runtime/route-parity-lambda.test.ts)
 * are each held to the one expected table, test/fixtures/route-parity.json, so one runtime
 * drifting from the others fails its test. Where README documents a runtime's own answer, the
 * case says so in `only`.
 */

/** The token the table's requests carry; the policy knows its SHA-256. */
export const PARITY_TOKEN = "parity-token-123";

export const PARITY_POLICY = {
  version: 1,
  auth: {
    // sha256("parity-token-123")
    tokens: [
      { team: "platform", sha256: "bff1d2c21f07ea31d785ca472e8bafade190890cb6968888f858f956c3a67610" },
    ],
    onFailure: "deny",
  },
  defaults: { onError: "deny", maxBodyBytes: 1024 },
  rules: [
    {
      id: "no-echo",
      on: "PreToolUse",
      matcher: "Bash",
      if: "Bash(echo *)",
      decide: "deny",
      reason: "echo is not allowed here",
    },
  ],
};

export interface RouteCase {
  readonly name: string;
  readonly method: string;
  /** Path and query, as the client sends them. */
  readonly path: string;
  /** In wire order; a name may repeat. */
  readonly headers: readonly (readonly [string, string])[];
  readonly body?: string;
  /** The body's bytes, sent in place of `body`, where they are no UTF-8 text. */
  readonly bodyBase64?: string;
  /**
   * API Gateway's HTTP API decodes an escape in this path that the other runtimes keep (`%3B`,
   * `%252F`), so behind it the function is asked another path (README): not compared there.
   */
  readonly httpApiDecodes?: true;
  /** A route only `serve` answers (README: /metrics is Node's alone). */
  readonly only?: "node";
  /** The answer is Prometheus text, compared as such (`prometheusShape`). */
  readonly prometheus?: boolean;
}

const PRE_TOOL_USE = JSON.stringify({
  session_id: "s-parity",
  transcript_path: "/home/dev/.claude/projects/p/s-parity.jsonl",
  cwd: "/home/dev/proj",
  permission_mode: "default",
  hook_event_name: "PreToolUse",
  tool_name: "Bash",
  tool_input: { command: "echo hi" },
  tool_use_id: "toolu_parity",
});
const LEGACY = JSON.stringify({
  event: "tool.use",
  thread_id: "t-parity",
  tool_name: "shell",
  tool_args: { command: "echo hi" },
});
/** PRE_TOOL_USE, gzip-compressed. */
const GZIPPED =
  "H4sIAAAAAAACA1VPOw4CIRS8ipl6lX5LT2ChNSHwDKzAIzzQmI13N8TdwnJ+mZkVQiKBsw4OM+RYTA3tjQmtmiy2htJ0Mc1jhvKcSDl6qpONpjtSpfJCtokqak+eFuEcMcG+3F9meDGhUE3h15jYEWY4upseGyZ45oemJ+Wms0lDu1S6Mseb0FjEHHfhbMTvVMilN8wrLKdk8qgl6/ngAz6bpQv9Dg7U9Xby8wWvjjbK/gAAAA==";

const JSON_HEADERS = [
  ["content-type", "application/json"],
  ["authorization", `Bearer ${PARITY_TOKEN}`],
] as const;
const hook = (name: string, path: string, extra: Partial<RouteCase> = {}): RouteCase => ({
  name,
  method: "POST",
  path,
  headers: JSON_HEADERS,
  body: PRE_TOOL_USE,
  ...extra,
});
const withContentType = (value: string) => [["content-type", value], JSON_HEADERS[1]] as const;
const get = (name: string, path: string, method = "GET"): RouteCase => ({
  name,
  method,
  path,
  headers: [["authorization", `Bearer ${PARITY_TOKEN}`]],
});

export const ROUTE_CASES: readonly RouteCase[] = [
  hook("hook: /v1/hooks, the dialect from the body", "/v1/hooks"),
  hook("hook: /v1/hooks/claude-code", "/v1/hooks/claude-code"),
  hook("hook: /v1/hooks/deepcode", "/v1/hooks/deepcode"),
  hook("hook: /v1/hooks/deepagents", "/v1/hooks/deepagents"),
  hook("hook: /v1/hooks/deepagents-legacy", "/v1/hooks/deepagents-legacy", { body: LEGACY }),
  hook("hook: an unknown client name", "/v1/hooks/claude"),
  hook("hook: a trailing slash", "/v1/hooks/claude-code/"),
  hook("hook: a query", "/v1/hooks/claude-code?session=1"),
  hook("hook: a trailing slash and a query", "/v1/hooks/claude-code/?session=1"),
  hook("hook: a deeper path", "/v1/hooks/claude-code/extra"),
  hook("hook: a stage prefix", "/prod/v1/hooks/claude-code"),
  hook("hook: doubled slashes", "//v1//hooks/claude-code"),
  hook("hook: an empty client name", "/v1/hooks//"),
  hook("hook: a percent-encoded slash before the client", "/v1/hooks%2Fclaude-code"),
  hook("hook: a percent-encoded client name", "/v1/hooks/claude%2Dcode"),
  hook("hook: a dot segment", "/v1/hooks/./claude-code"),
  hook("hook: a percent-encoded slash in the client name", "/v1/hooks/claude%2Fcode"),
  hook("hook: a percent-encoded slash in lower case", "/v1/hooks%2fclaude-code"),
  hook("hook: a stage prefix with percent-encoded slashes", "/prod%2Fv1%2Fhooks%2Fclaude-code"),
  hook("hook: a stage prefix and a trailing slash", "/prod/v1/hooks/claude-code/"),
  hook("hook: a stage prefix and doubled slashes", "/prod//v1/hooks//claude-code"),
  hook("hook: a stage prefix, the dialect from the body", "/prod/v1/hooks/"),
  get("GET on a hook route", "/v1/hooks/claude-code"),
  get("HEAD on a hook route", "/v1/hooks/claude-code", "HEAD"),
  get("OPTIONS on a hook route", "/v1/hooks/claude-code", "OPTIONS"),
  { ...hook("PUT on a hook route", "/v1/hooks/claude-code"), method: "PUT" },
  get("GET on /v1/hooks", "/v1/hooks"),
  hook("content type: text/plain", "/v1/hooks/claude-code", { headers: withContentType("text/plain") }),
  hook("content type: none", "/v1/hooks/claude-code", { headers: [JSON_HEADERS[1]] }),
  // workerd drops a header sent with no value; Node keeps it: both are no Content-Type.
  hook("content type: empty", "/v1/hooks/claude-code", { headers: withContentType("") }),
  // Empty values among repeated ones are read as workerd reads them: not there.
  hook("content type: only spaces", "/v1/hooks/claude-code", { headers: withContentType("   ") }),
  hook("content type: empty twice", "/v1/hooks/claude-code", {
    headers: [["content-type", ""], ...withContentType("")],
  }),
  hook("content type: application/json and an empty one", "/v1/hooks/claude-code", {
    headers: [["content-type", ""], ...JSON_HEADERS],
  }),
  hook("POST /v1/simulate with an empty content type", "/v1/simulate", { headers: withContentType("") }),
  hook("content type: form-urlencoded", "/v1/hooks/claude-code", {
    headers: withContentType("application/x-www-form-urlencoded"),
  }),
  hook("content type: application/json; charset=utf-8", "/v1/hooks/claude-code", {
    headers: withContentType("application/json; charset=utf-8"),
  }),
  hook("content type: Application/JSON; Charset=UTF-8", "/v1/hooks/claude-code", {
    headers: withContentType("Application/JSON; Charset=UTF-8"),
  }),
  hook("content type: application/json; charset=iso-8859-1", "/v1/hooks/claude-code", {
    headers: withContentType("application/json; charset=iso-8859-1"),
  }),
  hook("content type: application/json twice", "/v1/hooks/claude-code", {
    headers: [["content-type", "application/json"], ...JSON_HEADERS],
  }),
  hook("body: gzip-compressed", "/v1/hooks/claude-code", {
    headers: [...JSON_HEADERS, ["content-encoding", "gzip"]],
    bodyBase64: GZIPPED,
  }),
  hook("body: empty", "/v1/hooks/claude-code", { body: "" }),
  hook("body: malformed JSON", "/v1/hooks/claude-code", { body: '{"hook_event_name":"PreToolUse",' }),
  hook("body: over defaults.maxBodyBytes", "/v1/hooks/claude-code", {
    body: JSON.stringify({ ...JSON.parse(PRE_TOOL_USE), padding: "x".repeat(2000) }),
  }),
  hook("token: missing", "/v1/hooks/claude-code", { headers: [JSON_HEADERS[0]] }),
  hook("token: unknown", "/v1/hooks/claude-code", {
    headers: [JSON_HEADERS[0], ["authorization", "Bearer not-a-token"]],
  }),
  hook("token: Basic", "/v1/hooks/claude-code", {
    headers: [JSON_HEADERS[0], ["authorization", "Basic dXNlcjpwYXNz"]],
  }),
  hook("token: twice", "/v1/hooks/claude-code", { headers: [...JSON_HEADERS, JSON_HEADERS[1]] }),
  // Under a prefix, as an HTTP API stage or a Worker's path route puts one: `serve`'s listener
  // answers these too, as src/http/route-path.ts reads the path.
  hook("prefixed: token twice", "/prod/v1/hooks/claude-code", {
    headers: [...JSON_HEADERS, JSON_HEADERS[1]],
  }),
  hook("prefixed: content type twice", "/prod/v1/hooks/claude-code", {
    headers: [["content-type", "application/json"], ...JSON_HEADERS],
  }),
  hook("prefixed: no content type", "/prod/v1/hooks/claude-code", { headers: [JSON_HEADERS[1]] }),
  hook("prefixed: an unknown client name", "/prod/v1/hooks/claude"),
  hook("prefixed: body over defaults.maxBodyBytes", "/prod/v1/hooks/claude-code", {
    body: JSON.stringify({ ...JSON.parse(PRE_TOOL_USE), padding: "x".repeat(2000) }),
  }),
  hook("hook: x-hookgate-timeout twice", "/v1/hooks/claude-code", {
    headers: [...JSON_HEADERS, ["x-hookgate-timeout", "5"], ["x-hookgate-timeout", "5"]],
  }),
  hook("prefixed: x-hookgate-timeout twice", "/prod/v1/hooks/claude-code", {
    headers: [...JSON_HEADERS, ["x-hookgate-timeout", "5"], ["x-hookgate-timeout", "5"]],
  }),
  hook("hook: hookgate send without a token, user-agent twice", "/v1/hooks/claude-code", {
    headers: [JSON_HEADERS[0], ["user-agent", "hookgate-send"], ["user-agent", "curl/8.5.0"]],
  }),
  hook("prefixed: hookgate send without a token, user-agent twice", "/prod/v1/hooks/claude-code", {
    headers: [JSON_HEADERS[0], ["user-agent", "hookgate-send"], ["user-agent", "curl/8.5.0"]],
  }),
  hook("hook: an upper-case path", "/V1/HOOKS/claude-code"),
  hook("hook: an upper-case client name", "/v1/hooks/Claude-Code"),
  hook("hook: two trailing slashes", "/v1/hooks/claude-code//"),
  hook("hook: an empty query", "/v1/hooks/claude-code?"),
  hook("hook: three dots", "/v1/hooks/..."),
  hook("hook: a dot-dot segment", "/v1/hooks/../hooks/claude-code"),
  hook("hook: a percent-encoded letter", "/v1/hooks/%63laude-code"),
  hook("hook: a semicolon", "/v1/hooks/claude-code;v=1"),
  hook("hook: a query with a slash", "/v1/hooks/claude-code?next=/v1/hooks/x"),
  // Escapes other than %2F, read once by one function on every runtime (src/http/route-path.ts):
  // an unreserved character's escape is that character, any other stays an escape.
  hook("hook: a percent-encoded letter in v1", "/%761/hooks/claude-code"),
  hook("hook: percent-encoded letters in hooks, upper-case hex", "/v1/%68%6F%6F%6B%73/deepcode"),
  hook("hook: a stage prefix and a percent-encoded letter", "/prod/v1/hook%73/claude-code"),
  hook("hook: a percent-encoded dot-dot segment", "/v1/hooks/%2e%2E/hooks/claude-code"),
  hook("hook: a dot-dot after a doubled slash", "/v1/hooks//../claude-code"),
  hook("hook: a dot-dot that ends the path", "/v1/hooks/claude-code/.."),
  hook(
    "hook: a percent-encoded slash and dot-dot leaving the hooks",
    "/v1/hooks/claude-code%2F..%2F..%2Fdeepcode",
  ),
  hook("hook: a double-encoded slash", "/v1/hooks%252Fclaude-code", { httpApiDecodes: true }),
  hook("hook: a double-encoded slash in the client name", "/v1/hooks/claude%252Fcode", {
    httpApiDecodes: true,
  }),
  hook("hook: a malformed escape", "/v1/hooks/claude-code%zz"),
  hook("hook: a lone percent sign", "/v1/hooks/%"),
  hook("hook: an escaped space in the client name", "/v1/hooks/claude%20code"),
  hook("hook: lower-case hex in an escape kept", "/v1/hooks/claude%3bcode", { httpApiDecodes: true }),
  hook("hook: a brace in the client name", "/v1/hooks/claude{code}"),
  hook("hook: a backslash", "/v1/hooks\\claude-code"),
  hook("token: a non-ASCII character", "/v1/hooks/claude-code", {
    headers: [JSON_HEADERS[0], ["authorization", "Bearer t\u00f6ken"]],
  }),
  hook("hook: x-hookgate-timeout not a number", "/v1/hooks/claude-code", {
    headers: [...JSON_HEADERS, ["x-hookgate-timeout", "soon"]],
  }),
  hook("POST /v1/simulate/ under a prefix", "/prod/v1/simulate/"),
  hook("POST /v1/whoami", "/v1/whoami"),
  get("OPTIONS /healthz", "/healthz", "OPTIONS"),
  get("GET /prod/healthz", "/prod/healthz"),
  hook("POST /v1/simulate with the token twice", "/v1/simulate", {
    headers: [...JSON_HEADERS, JSON_HEADERS[1]],
  }),
  hook("POST /v1/simulate without a content type", "/v1/simulate", { headers: [JSON_HEADERS[1]] }),
  get("GET /healthz", "/healthz"),
  get("HEAD /healthz", "/healthz", "HEAD"),
  get("GET /healthz/ with a query", "/healthz/?probe=1"),
  hook("POST /healthz", "/healthz"),
  get("GET /v1/whoami", "/v1/whoami"),
  { ...get("GET /v1/whoami without a token", "/v1/whoami"), headers: [] },
  hook("POST /v1/simulate", "/v1/simulate"),
  hook("POST /v1/simulate?client=claude-code", "/v1/simulate?client=claude-code"),
  hook("POST /v1/simulate?client=nope", "/v1/simulate?client=nope"),
  hook("POST /v1/simulate with a bad token", "/v1/simulate", {
    headers: [JSON_HEADERS[0], ["authorization", "Bearer not-a-token"]],
  }),
  get("GET /v1/simulate", "/v1/simulate"),
  get("GET a path that is no route", "/nope"),
  hook("POST a path that is no route", "/v1/hook/claude-code"),
  // A team's token written into the hook's URL is masked in the answer and the log line alike.
  hook("hook: the team's token as a deeper path", `/v1/hooks/claude-code/${PARITY_TOKEN}`),
  hook("hook: the team's token after a doubled slash", `/v1/hooks/claude-code//${PARITY_TOKEN}/x`),
  hook("POST the team's token on a path that is no route", `/v1/hook/claude-code/${PARITY_TOKEN}`),
  get("GET /healthz in the wrong case", "/Healthz"),
  { ...get("GET /metrics", "/metrics"), only: "node", prometheus: true },
];

/** The headers hookgate sets, as compared. */
const SHOWN = [
  "content-type",
  "cache-control",
  "connection",
  "allow",
  "x-hookgate-error",
  "x-hookgate-policy",
  "x-hookgate-decision-id",
] as const;

/** Values that change from one request to the next, compared by their shape alone. */
const VOLATILE: Readonly<Record<string, (value: unknown) => string | undefined>> = {
  time: (v) =>
    typeof v === "string" && /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/.test(v) ? "<time>" : undefined,
  decisionId: (v) => (typeof v === "string" && UUID.test(v) ? "<id>" : undefined),
  "x-hookgate-decision-id": (v) => (typeof v === "string" && UUID.test(v) ? "<id>" : undefined),
  latencyMs: (v) => (typeof v === "number" && v >= 0 ? "<ms>" : undefined),
};
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const stable = (name: string, value: unknown) => VOLATILE[name]?.(value) ?? value;

export interface Observed {
  status: number;
  headers: Record<string, string>;
  body: string;
  /** Each line the request logged, its fields in the order written. */
  log: Record<string, unknown>[];
}

/** A runtime's answer to `c` and the lines it logged, reduced to what the table compares. */
export function observe(
  c: RouteCase,
  status: number,
  header: (name: string) => string | null | undefined,
  body: string,
  lines: readonly Record<string, unknown>[],
): Observed {
  const headers: Record<string, string> = {};
  for (const name of SHOWN) {
    const value = header(name);
    if (value === null || value === undefined) continue;
    // Node says keep-alive on its own; what hookgate decides is whether a connection ends.
    if (name === "connection" && value.toLowerCase() !== "close") continue;
    headers[name] = String(stable(name, value));
  }
  const log = lines.map((line) =>
    Object.fromEntries(Object.entries(line).map(([k, v]) => [k, stable(k, v)])),
  );
  return { status, headers, body: c.prometheus && status === 200 ? prometheusShape(body) : body, log };
}

/**
 * Prometheus text as such: its series and counts depend on what ran before it (the delivery
 * thread's gauges come every few seconds), so a body whose every line is a comment or a sample
 * stands as `<Prometheus text>`, and any other is compared whole.
 */
function prometheusShape(body: string): string {
  const lines = body.split("\n").filter((l) => l !== "");
  const exposition = /^(?:# (?:HELP|TYPE) [a-z_]+ .+|[a-z_]+(?:\{.*\})? -?[\d.e+]+|[a-z_]+(?:\{.*\})? NaN)$/;
  return lines.length > 0 && lines.every((l) => exposition.test(l)) ? "<Prometheus text>" : body;
}

export type Runtime = "node" | "workers" | "lambda";

/**
 * What `runtime` is expected to answer to `c`, given `serve`'s answer: the same, except for a
 * route README says only `serve` has, which answers elsewhere as any path that is no route.
 */
export function expectedOn(runtime: Runtime, c: RouteCase, onNode: Observed): Observed {
  if (runtime === "node" || c.only !== "node") return onNode;
  return {
    status: 404,
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ error: { code: "NOT_FOUND", message: `no route ${c.method} ${c.path}` } }),
    log: [],
  };
}

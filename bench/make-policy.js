/**
 * A realistic policy of N rules, the same bytes for the same flags: seeded, no Math.random.
 * bench/policy-200.json is its output at the defaults (regenerate it with `--out
 * bench/policy-200.json`); bench/scaling.js and bench/command-hook.js build theirs with it.
 *
 *   node bench/make-policy.js [--rules 200] [--seed 10] [--shape mixed|indexed] [--out FILE]
 *
 * Without --out the policy goes to stdout. What is in it:
 *
 * - sha256 token auth for five teams; each team's token is `TEAM_TOKENS[team]` below, the
 *   platform team's is bench/policy.json's (`hookgate-dev-token`), so every benchmark that
 *   authenticates as platform keeps working;
 * - the 23 hand-written rules of `CORE_RULES` (bench/policy.json's 21 in its order, with two more
 *   after `no-rm-root`), then
 *   generated rules over PreToolUse, PostToolUse, UserPromptSubmit, Stop, Notification and
 *   SessionStart: exact matchers (Bash, Edit|Write, Read, WebFetch, MCP tools by name), a few
 *   regex matchers (`mcp__github__.*`), Bash `if` permission rules, `where` conditions,
 *   team-scoped rules, shadow rules and context rules.
 *
 * The measured event of decision.js, scaling.js, command-hook.js and enqueue.js (Claude Code's
 * PreToolUse Bash `rm -rf /`, platform team) applies exactly three rules at every size and shape:
 * `MEASURED_RULES` below. `no-rm-root` denies, `ask-recursive-delete` asks (outranked, so its
 * reason is not sent), and `shadow-recursive-delete` is recorded only: the answer is the same
 * deny, byte for byte, as with bench/policy.json (decision.js checks only that it is a deny).
 *
 * `hookgate check` warns about the SessionStart rules (Claude Code sends no HTTP hooks there; a
 * command hook running `hookgate send` or deepcode reaches them); there is nothing else to warn of.
 *
 * `--shape mixed` (the default) draws the generated rules from the whole mix, so about a third
 * of them are Bash rules, which the index keeps as candidates for every Bash call. `--shape
 * indexed` draws only rules the index sets aside for a Bash PreToolUse (other events, other
 * exact matchers), so the candidates for the measured event are the same at every size.
 */
import { createHash } from "node:crypto";
import { readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";

const ROOT = dirname(dirname(fileURLToPath(import.meta.url)));

/** Tokens of the five teams, stored in the policy as their sha256 (`hookgate token hash`). */
export const TEAM_TOKENS = {
  platform: "hookgate-dev-token",
  mobile: "hookgate-mobile-token",
  data: "hookgate-data-token",
  web: "hookgate-web-token",
  payments: "hookgate-payments-token",
};
const TEAMS = Object.keys(TEAM_TOKENS);

/** What the measured event (PreToolUse Bash `rm -rf /`, team platform) applies, in file order. */
export const MEASURED_RULES = {
  enforced: ["no-rm-root", "ask-recursive-delete"],
  shadow: ["shadow-recursive-delete"],
};

export const SHAPES = ["mixed", "indexed"];

/**
 * The measured request, as decision.js sends it: Claude Code 2.1.332's real PreToolUse body
 * (test/fixtures/claude-code/2.1.332/) with the command `rm -rf /`, and its headers with the
 * platform team's token (autocannon and undici add Host, Content-Length, Connection).
 */
export function measuredRequest() {
  const fixture = join(ROOT, "test", "fixtures", "claude-code", "2.1.332", "PreToolUse.json");
  const event = JSON.parse(readFileSync(fixture, "utf8"));
  event.tool_input.command = "rm -rf /";
  event.tool_input.description = "Delete everything";
  return {
    body: JSON.stringify(event),
    headers: {
      accept: "application/json, text/plain, */*",
      "content-type": "application/json",
      authorization: `Bearer ${TEAM_TOKENS.platform}`,
      "user-agent": "axios/1.15.2",
      "accept-encoding": "gzip, compress, deflate, br",
    },
  };
}

/** The answer every policy here gives the measured request: `no-rm-root`'s deny, nothing else. */
export const MEASURED_ANSWER = JSON.stringify({
  hookSpecificOutput: {
    hookEventName: "PreToolUse",
    permissionDecision: "deny",
    permissionDecisionReason: "Deleting from / is never allowed",
  },
});

/** Hand-written rules, first in the file: bench/policy.json's, and the two the measured event adds. */
const CORE_RULES = [
  {
    id: "no-rm-root",
    on: "PreToolUse",
    matcher: "Bash",
    if: "Bash(rm -rf /*)",
    decide: "deny",
    reason: "Deleting from / is never allowed",
  },
  {
    id: "ask-recursive-delete",
    on: "PreToolUse",
    matcher: "Bash",
    if: ["Bash(rm -rf *)", "Bash(rm -fr *)"],
    decide: "ask",
    reason: "Recursive deletes need a human",
  },
  {
    id: "shadow-recursive-delete",
    description: "Trial: deny every recursive delete outside the checkout's build directories",
    on: "PreToolUse",
    matcher: "Bash",
    mode: "shadow",
    if: "Bash(rm -rf *)",
    where: { "tool_input.command": { not: { regex: "^rm -rf (\\./)?(dist|build|node_modules|target)\\b" } } },
    decide: "deny",
    reason: "Recursive deletes are limited to build directories",
  },
  {
    id: "no-rm-home",
    on: "PreToolUse",
    matcher: "Bash",
    if: ["Bash(rm -rf ~*)", "Bash(rm -rf $HOME*)"],
    decide: "deny",
    reason: "Deleting the home directory is never allowed",
  },
  {
    id: "ask-force-push",
    on: "PreToolUse",
    matcher: "Bash",
    where: { "tool_input.command": { regex: "^git push\\b.*(--force|-f\\b)" } },
    decide: "ask",
    reason: "Force push needs a human",
  },
  {
    id: "no-curl-pipe-shell",
    on: "PreToolUse",
    matcher: "Bash",
    where: { "tool_input.command": { regex: "(curl|wget)\\b[^|]*\\|\\s*(sudo\\s+)?(ba|z)?sh\\b" } },
    decide: "deny",
    reason: "Piping a download into a shell is not allowed; download, read, then run",
  },
  {
    id: "ask-sudo",
    on: "PreToolUse",
    matcher: "Bash",
    if: "Bash(sudo *)",
    decide: "ask",
    reason: "sudo needs a human",
  },
  {
    id: "no-world-writable",
    on: "PreToolUse",
    matcher: "Bash",
    where: { "tool_input.command": { regex: "\\bchmod\\s+(-R\\s+)?0?777\\b" } },
    decide: "deny",
    reason: "World-writable permissions are never needed",
  },
  {
    id: "tests-and-lint",
    on: "PreToolUse",
    matcher: "Bash",
    if: ["Bash(npm test *)", "Bash(npm run lint *)", "Bash(npx vitest *)"],
    decide: "allow",
    reason: "Tests and lint are always safe to run",
  },
  {
    id: "git-read-only",
    on: "PreToolUse",
    matcher: "Bash",
    if: ["Bash(git status *)", "Bash(git diff *)", "Bash(git log *)", "Bash(git show *)"],
    decide: "allow",
    reason: "Read-only git commands",
  },
  {
    id: "env-files",
    on: ["PreToolUse"],
    if: ["Read(**/.env)", "Read(**/.env.*)", "Edit(**/.env)", "Edit(**/.env.*)"],
    decide: "deny",
    reason: ".env files hold secrets",
  },
  {
    id: "ssh-keys",
    on: "PreToolUse",
    if: ["Read(~/.ssh/**)", "Edit(~/.ssh/**)"],
    decide: "deny",
    reason: "SSH keys stay on the machine",
  },
  {
    id: "lockfiles-by-tools",
    on: "PreToolUse",
    matcher: "Write|Edit",
    where: { "tool_input.file_path": { glob: "**/{package-lock.json,pnpm-lock.yaml,yarn.lock}" } },
    decide: "ask",
    reason: "Lockfiles are written by the package manager, not by hand",
  },
  {
    id: "migrations-context",
    on: "PreToolUse",
    matcher: "Write|Edit",
    where: { "tool_input.file_path": { contains: "/migrations/" } },
    context: "Migrations must be reversible and must not rewrite an applied migration.",
  },
  {
    id: "internal-hosts",
    on: "PreToolUse",
    matcher: "WebFetch",
    if: "WebFetch(domain:*.corp.acme.example)",
    decide: "deny",
    reason: "Internal hosts are not for agents",
  },
  {
    id: "github-destructive",
    on: "PreToolUse",
    matcher: "mcp__github__(delete|merge)_.*",
    decide: "ask",
    reason: "Deleting or merging on GitHub needs a human",
  },
  {
    id: "mobile-xcodebuild",
    on: "PreToolUse",
    matcher: "Bash",
    teams: ["mobile"],
    if: "Bash(xcodebuild *)",
    decide: "allow",
    reason: "The mobile team builds with xcodebuild",
  },
  {
    id: "privileged-containers",
    on: "PreToolUse",
    matcher: "Bash",
    mode: "shadow",
    where: { "tool_input.command": { regex: "\\bdocker\\s+run\\b.*--privileged" } },
    decide: "deny",
    reason: "Privileged containers escape the sandbox",
  },
  {
    id: "kubectl-prod",
    on: "PreToolUse",
    matcher: "Bash",
    mode: "shadow",
    if: "Bash(kubectl *)",
    where: { "tool_input.command": { regex: "--context[= ]prod" } },
    decide: "ask",
    reason: "Production clusters need a human",
  },
  {
    id: "run-tests-first",
    on: "Stop",
    mode: "shadow",
    where: { stop_hook_active: false },
    decide: "block",
    reason: "Run the test suite and report the result before finishing.",
  },
  {
    id: "release-changelog",
    on: "Stop",
    where: { cwd: { startsWith: "/srv/release/" }, stop_hook_active: false },
    decide: "block",
    reason: "Release checkouts need a CHANGELOG entry before finishing.",
  },
  {
    id: "repo-context",
    on: "UserPromptSubmit",
    context: "This repository uses pnpm, never npm.",
  },
  {
    id: "no-keys-in-prompts",
    on: "UserPromptSubmit",
    where: { prompt: { regex: "AKIA[0-9A-Z]{16}" } },
    decide: "block",
    reason: "The prompt contains what looks like an AWS access key; remove it and rotate the key.",
  },
];

const SERVICES = [
  "payments",
  "checkout",
  "search",
  "identity",
  "billing",
  "catalog",
  "notifications",
  "ledger",
  "reporting",
  "gateway",
  "inventory",
  "shipping",
];
const REPOS = [
  "web-app",
  "mobile-app",
  "data-pipelines",
  "platform-infra",
  "payments-api",
  "design-system",
  "ml-models",
  "docs-site",
];
const ENVS = ["prod", "staging"];
const REGIONS = ["eu-west-1", "us-east-1", "ap-southeast-2"];
const PACKAGE_MANAGERS = [
  { pm: "pnpm", test: "pnpm test", lint: "pnpm lint" },
  { pm: "npm", test: "npm test", lint: "npm run lint" },
  { pm: "yarn", test: "yarn test", lint: "yarn lint" },
  { pm: "go", test: "go test ./...", lint: "golangci-lint run" },
  { pm: "cargo", test: "cargo test", lint: "cargo clippy" },
  { pm: "poetry", test: "poetry run pytest", lint: "poetry run ruff check" },
];
const MCP_TOOLS = {
  github: ["create_issue", "create_pull_request", "merge_pull_request", "delete_branch", "push_files"],
  jira: ["create_issue", "transition_issue", "delete_issue"],
  slack: ["post_message", "invite_user", "archive_channel"],
  linear: ["create_issue", "update_issue", "delete_issue"],
  sentry: ["resolve_issue", "delete_project"],
  postgres: ["run_query", "execute_sql"],
  notion: ["update_page", "delete_page"],
  datadog: ["mute_monitor", "delete_dashboard"],
};
const INTERNAL_DOMAINS = [
  "corp.acme.example",
  "internal.acme.example",
  "vault.acme.example",
  "admin.acme.example",
];
const DOC_DOMAINS = [
  "docs.python.org",
  "developer.mozilla.org",
  "nodejs.org",
  "docs.aws.amazon.com",
  "kubernetes.io",
  "go.dev",
  "doc.rust-lang.org",
];
const FORMATTERS = [
  { ext: "ts", tool: "biome format" },
  { ext: "py", tool: "ruff format" },
  { ext: "go", tool: "gofmt -w" },
  { ext: "rs", tool: "cargo fmt" },
  { ext: "swift", tool: "swift-format" },
  { ext: "kt", tool: "ktlint -F" },
  { ext: "tf", tool: "terraform fmt" },
  { ext: "sql", tool: "sqlfluff fix" },
];
const SECRET_PATTERNS = [
  { regex: "ghp_[A-Za-z0-9]{36}", what: "a GitHub personal access token" },
  { regex: "xox[bp]-[0-9A-Za-z-]{10,}", what: "a Slack token" },
  { regex: "-----BEGIN (RSA |EC |OPENSSH )?PRIVATE KEY-----", what: "a private key" },
  { regex: "sk_live_[0-9a-zA-Z]{24,}", what: "a Stripe live key" },
  { regex: "AIza[0-9A-Za-z_-]{35}", what: "a Google API key" },
];

/**
 * Generated rules: [weight, bashCandidate, build]. `bashCandidate` marks the rules the index keeps
 * for a Bash PreToolUse (matcher Bash, or a regex matcher); `--shape indexed` leaves them out.
 * None of them applies to `rm -rf /`: their Bash patterns and regexes name other commands.
 */
const TEMPLATES = [
  [10, true, bashDeny],
  [10, true, bashAsk],
  [6, true, bashAllow],
  [4, true, bashWhere],
  [1.5, true, mcpRegex],
  [10, false, editWrite],
  [4, false, readSecrets],
  [4, false, webFetch],
  [10, false, mcpExact],
  [8, false, postToolUse],
  [6, false, promptContext],
  [3, false, promptSecrets],
  [4, false, stop],
  [3, false, notification],
  [1.5, false, sessionStart],
];

function bashDeny(g) {
  const svc = g.pick(SERVICES);
  const env = g.pick(ENVS);
  const choices = [
    [
      ["Bash(npm publish *)", "Bash(pnpm publish *)", "Bash(yarn npm publish *)"],
      "Packages are published by CI",
    ],
    [[`Bash(terraform destroy *)`], "Destroying infrastructure goes through the platform team"],
    [["Bash(docker run --privileged *)"], "Privileged containers escape the sandbox"],
    [[`Bash(kubectl delete namespace ${svc}*)`], `The ${svc} namespace is managed by Argo CD`],
    [[`Bash(helm uninstall ${svc} *)`], `The ${svc} release is managed by Argo CD`],
    [
      ["Bash(gcloud projects delete *)", "Bash(aws s3 rb *)"],
      "Deleting cloud projects and buckets needs a ticket",
    ],
    [["Bash(git push --force *)", "Bash(git push -f *)"], "Force pushes are not allowed"],
    [["Bash(git reset --hard origin/*)"], "Hard resets to the remote lose local work"],
    [[`Bash(psql *${svc}-${env}*)`], `Connect to the ${svc} ${env} database through the bastion`],
    [["Bash(mkfs *)", "Bash(dd of=/dev/*)"], "Writing to block devices is never allowed"],
  ];
  const [ifRules, reason] = g.pick(choices);
  return g.rule("bash-deny", { on: "PreToolUse", matcher: "Bash", if: ifRules, decide: "deny", reason });
}

function bashAsk(g) {
  const svc = g.pick(SERVICES);
  const env = g.pick(ENVS);
  const region = g.pick(REGIONS);
  const choices = [
    {
      if: ["Bash(kubectl apply *)", "Bash(kubectl delete *)", "Bash(kubectl scale *)"],
      where: { "tool_input.command": { regex: `--context[= ]${env}-${region}\\b` } },
      reason: `Changes to the ${env} cluster in ${region} need a human`,
    },
    {
      if: [`Bash(helm upgrade ${svc} *)`, `Bash(helm rollback ${svc} *)`],
      reason: `Releasing ${svc} by hand needs a human`,
    },
    {
      if: ["Bash(terraform apply *)"],
      where: { cwd: { contains: `/infra/${env}` } },
      reason: `terraform apply in ${env} needs a human`,
    },
    {
      if: ["Bash(git push *)"],
      where: { "tool_input.command": { regex: "\\b(main|master|release/\\S+)\\b" } },
      reason: "Pushing to a protected branch needs a human",
    },
    { if: ["Bash(gh pr merge *)", "Bash(gh release create *)"], reason: "Merges and releases need a human" },
    {
      if: ["Bash(aws *)"],
      where: { "tool_input.command": { regex: `--profile[= ]${env}\\b` } },
      reason: `AWS calls with the ${env} profile need a human`,
    },
    { if: ["Bash(ssh *)", "Bash(scp *)"], reason: "Remote shells need a human" },
    { if: [`Bash(redis-cli -h ${svc}-${env}*)`], reason: `The ${svc} ${env} cache is shared` },
  ];
  const c = g.pick(choices);
  return g.rule("bash-ask", {
    on: "PreToolUse",
    matcher: "Bash",
    if: c.if,
    ...(c.where ? { where: c.where } : {}),
    decide: "ask",
    reason: c.reason,
  });
}

function bashAllow(g) {
  const repo = g.pick(REPOS);
  const pm = g.pick(PACKAGE_MANAGERS);
  return g.rule("bash-allow", {
    on: "PreToolUse",
    matcher: "Bash",
    if: [`Bash(${pm.test}*)`, `Bash(${pm.lint}*)`],
    where: { cwd: { contains: `/${repo}` } },
    decide: "allow",
    reason: `Tests and lint in ${repo} are safe to run`,
  });
}

function bashWhere(g) {
  const choices = [
    ["\\bgit\\s+commit\\b.*--no-verify", "ask", "Skipping the commit hooks needs a human"],
    ["\\bnpm\\s+install\\s+(-g|--global)\\b", "deny", "Global installs change the machine, not the project"],
    ["\\bpip3?\\s+install\\b.*--break-system-packages", "deny", "Install into a virtualenv instead"],
    ["\\bbase64\\s+(-d|--decode)\\b.*\\|\\s*(ba|z)?sh\\b", "deny", "Decoding into a shell hides what runs"],
    ["\\bcrontab\\s+-r\\b", "deny", "Removing every cron job is never needed"],
    ["\\bgit\\s+clean\\s+-[a-z]*f[a-z]*d", "ask", "git clean deletes untracked work"],
    ["\\bnc\\s+(-l|-e)\\b", "deny", "Listening sockets and reverse shells are not allowed"],
  ];
  const [regex, decide, reason] = g.pick(choices);
  return g.rule("bash-where", {
    on: "PreToolUse",
    matcher: "Bash",
    where: { "tool_input.command": { regex } },
    decide,
    reason,
  });
}

function mcpRegex(g) {
  const server = g.pick(Object.keys(MCP_TOOLS));
  const choices = [
    { matcher: `mcp__${server}__.*`, where: { "tool_input.repo": { startsWith: "acme/legacy-" } } },
    { matcher: `mcp__${server}__(delete|archive)_.*` },
    { matcher: "mcp__.*__delete_.*", where: { cwd: { contains: `/${g.pick(REPOS)}` } } },
  ];
  const c = g.pick(choices);
  return g.rule("mcp-regex", {
    on: "PreToolUse",
    matcher: c.matcher,
    ...(c.where ? { where: c.where } : {}),
    decide: "ask",
    reason: "Destructive or legacy-repository MCP calls need a human",
  });
}

function editWrite(g) {
  const svc = g.pick(SERVICES);
  const env = g.pick(ENVS);
  const matcher = g.pick(["Edit|Write", "Write|Edit|MultiEdit", "Edit", "Write"]);
  const choices = [
    {
      glob: `**/services/${svc}/migrations/**`,
      context: `Migrations of ${svc} run on deploy: keep them reversible and backward compatible.`,
    },
    {
      glob: "**/.github/workflows/**",
      decide: "ask",
      reason: "CI workflows run with the repository's secrets",
    },
    {
      glob: `**/generated/${svc}/**`,
      decide: "deny",
      reason: `Generated ${svc} code is rebuilt by make gen`,
    },
    {
      glob: `**/infra/${env}/**`,
      decide: "ask",
      reason: `Infrastructure for ${env} is reviewed by the platform team`,
    },
    { glob: "**/CODEOWNERS", decide: "ask", reason: "Ownership changes need a human" },
    { glob: "**/*.{pem,key,p12}", decide: "deny", reason: "Key material is never written by an agent" },
    {
      glob: `**/services/${svc}/api/**/*.proto`,
      context: `The ${svc} API is public: add fields, never renumber or remove them.`,
    },
  ];
  const c = g.pick(choices);
  return g.rule("edit", {
    on: "PreToolUse",
    matcher,
    where: { "tool_input.file_path": { glob: c.glob } },
    ...(c.decide ? { decide: c.decide, reason: c.reason } : { context: c.context }),
  });
}

function readSecrets(g) {
  const svc = g.pick(SERVICES);
  const choices = [
    [[`Read(**/secrets/${svc}/**)`], `The ${svc} secrets stay in the vault`],
    [["Read(~/.aws/credentials)", "Read(~/.aws/config)"], "Cloud credentials stay on the machine"],
    [["Read(**/*.pem)", "Read(**/*.key)"], "Key material is never read by an agent"],
    [["Read(~/.npmrc)", "Read(**/.npmrc)"], "Registry tokens stay on the machine"],
    [["Read(~/.kube/config)"], "Cluster credentials stay on the machine"],
  ];
  const [ifRules, reason] = g.pick(choices);
  return g.rule("read", { on: "PreToolUse", matcher: "Read", if: ifRules, decide: "deny", reason });
}

function webFetch(g) {
  if (g.chance(0.5)) {
    const domain = g.pick(INTERNAL_DOMAINS);
    return g.rule("fetch", {
      on: "PreToolUse",
      matcher: "WebFetch",
      if: `WebFetch(domain:*.${domain})`,
      decide: "deny",
      reason: `${domain} is internal`,
    });
  }
  const domain = g.pick(DOC_DOMAINS);
  return g.rule("fetch", {
    on: "PreToolUse",
    matcher: "WebFetch",
    if: `WebFetch(domain:${domain})`,
    decide: "allow",
    reason: "Public documentation",
  });
}

function mcpExact(g) {
  const server = g.pick(Object.keys(MCP_TOOLS));
  const tool = g.pick(MCP_TOOLS[server]);
  const repo = g.pick(REPOS);
  const destructive = /delete|archive|merge|execute|push/.test(tool);
  const decide = destructive ? g.pick(["ask", "deny"]) : g.pick(["allow", "ask"]);
  const where =
    server === "github"
      ? { "tool_input.repo": { equals: `acme/${repo}` } }
      : g.chance(0.3)
        ? { cwd: { contains: `/${repo}` } }
        : undefined;
  return g.rule("mcp", {
    on: "PreToolUse",
    matcher: `mcp__${server}__${tool}`,
    ...(where ? { where } : {}),
    decide,
    reason: `${server} ${tool.replaceAll("_", " ")}: ${decide === "allow" ? "routine" : "needs a human"}${where ? ` (${repo})` : ""}`,
  });
}

function postToolUse(g) {
  if (g.chance(0.6)) {
    const f = g.pick(FORMATTERS);
    return g.rule("post-format", {
      on: "PostToolUse",
      matcher: g.pick(["Edit|Write", "Write|Edit|MultiEdit"]),
      where: { "tool_input.file_path": { glob: `**/*.${f.ext}` } },
      context: `Run ${f.tool} on the .${f.ext} files you changed before committing.`,
    });
  }
  const pm = g.pick(PACKAGE_MANAGERS);
  return g.rule("post-tests", {
    on: "PostToolUse",
    matcher: "Bash",
    where: {
      "tool_input.command": { startsWith: pm.test },
      "tool_response.stderr": { regex: "\\b(FAIL|FAILED|panicked)\\b" },
    },
    decide: "block",
    reason: `The tests failed: fix them (${pm.test}) before moving on.`,
  });
}

function promptContext(g) {
  const svc = g.pick(SERVICES);
  const repo = g.pick(REPOS);
  const choices = [
    {
      where: { prompt: { regex: `(?i)\\b(deploy|release)\\b.*\\b${svc}\\b` } },
      context: `Deploys of ${svc} go through the release train; never deploy from a laptop.`,
    },
    {
      where: { cwd: { contains: `/${repo}` } },
      context: `${repo}: read CONTRIBUTING.md before larger changes; keep pull requests under 400 lines.`,
    },
    {
      where: { prompt: { regex: "(?i)\\b(incident|outage|sev[12])\\b" } },
      context: "During an incident, change nothing in production without the incident commander.",
    },
  ];
  const c = g.pick(choices);
  return g.rule("prompt-context", { on: "UserPromptSubmit", where: c.where, context: c.context });
}

function promptSecrets(g) {
  const s = g.pick(SECRET_PATTERNS);
  return g.rule("prompt-secret", {
    on: "UserPromptSubmit",
    where: { prompt: { regex: s.regex } },
    decide: "block",
    reason: `The prompt contains what looks like ${s.what}; remove it and rotate it.`,
  });
}

function stop(g) {
  const repo = g.pick(REPOS);
  const pm = g.pick(PACKAGE_MANAGERS);
  return g.rule("stop", {
    on: "Stop",
    where: { stop_hook_active: false, cwd: { contains: `/${repo}` } },
    decide: "block",
    reason: `Run \`${pm.test}\` in ${repo} and report the result before finishing.`,
  });
}

function notification(g) {
  const type = g.pick(["permission_prompt", "idle_prompt"]);
  return g.rule("notification", {
    on: "Notification",
    matcher: type,
    context:
      type === "permission_prompt"
        ? "A person must answer this prompt; say what the command does and why it is needed."
        : "While idle, summarise what is done and what is left.",
  });
}

function sessionStart(g) {
  const repo = g.pick(REPOS);
  const pm = g.pick(PACKAGE_MANAGERS);
  return g.rule("session-start", {
    on: "SessionStart",
    matcher: g.pick(["startup", "startup|resume", "resume|compact"]),
    where: { cwd: { contains: `/${repo}` } },
    context: `${repo} builds with ${pm.pm}: test with \`${pm.test}\`, lint with \`${pm.lint}\`.`,
  });
}

/** mulberry32: a small seeded generator, enough for picking vocabulary. */
function seeded(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** The policy document: `rules` rules in all (at least the hand-written ones), in file order. */
export function makePolicy({ rules = 200, seed = 10, shape = "mixed" } = {}) {
  if (!SHAPES.includes(shape)) throw new Error(`shape must be one of ${SHAPES.join(", ")}`);
  if (rules < CORE_RULES.length) throw new Error(`a policy has at least ${CORE_RULES.length} rules`);
  const random = seeded(seed);
  const counters = new Map();
  const g = {
    pick: (items) => items[Math.floor(random() * items.length)],
    chance: (p) => random() < p,
    id(prefix) {
      const n = (counters.get(prefix) ?? 0) + 1;
      counters.set(prefix, n);
      return `${prefix}-${n}`;
    },
    /** A generated rule: its id, then sometimes a team scope or shadow mode, then the rest. */
    rule(prefix, fields) {
      const { on, matcher, ...rest } = fields;
      const scoped = g.chance(0.25) ? { teams: [g.pick(TEAMS)] } : {};
      const shadow = g.chance(0.06) ? { mode: "shadow" } : {};
      return { id: g.id(prefix), on, ...(matcher ? { matcher } : {}), ...scoped, ...shadow, ...rest };
    },
  };
  const templates = TEMPLATES.filter(([, bash]) => shape === "mixed" || !bash);
  const total = templates.reduce((n, [w]) => n + w, 0);
  const generated = [];
  while (CORE_RULES.length + generated.length < rules) {
    generated.push(weighted(templates, random() * total)(g));
  }
  return {
    version: 1,
    auth: {
      tokens: TEAMS.map((team) => ({ team, sha256: sha256(TEAM_TOKENS[team]) })),
      onFailure: "deny",
    },
    defaults: { onError: "allow", deadlineMs: 5000 },
    rules: [...CORE_RULES, ...generated],
  };
}

/** The template whose share of the total weight `r` falls in. */
function weighted(templates, r) {
  let left = r;
  for (const [weight, , build] of templates) {
    left -= weight;
    if (left < 0) return build;
  }
  return templates[templates.length - 1][2];
}

function sha256(text) {
  return createHash("sha256").update(text).digest("hex");
}

const LINE_WIDTH = 110;

/**
 * JSON as Biome formats it (2 spaces, 110 columns): the document and each rule one key per
 * line, smaller values on one line where they fit. So the committed file is the generator's
 * output byte for byte, and `biome check` leaves it alone.
 */
export function formatPolicy(document) {
  return `${format(document, "", 0, 2)}\n`;
}

/** `expandDepth`: levels always written one key per line (the document, `rules` and each rule). */
function format(value, indent, used, expandDepth) {
  if (value === null || typeof value !== "object") return JSON.stringify(value);
  if (expandDepth <= 0) {
    const inline = compact(value);
    if (indent.length + used + inline.length + 1 <= LINE_WIDTH) return inline;
  }
  const inner = `${indent}  `;
  if (Array.isArray(value)) {
    if (value.length === 0) return "[]";
    const items = value.map((v) => `${inner}${format(v, inner, 0, expandDepth - 1)}`);
    return `[\n${items.join(",\n")}\n${indent}]`;
  }
  const keys = Object.keys(value);
  if (keys.length === 0) return "{}";
  const lines = keys.map((k) => {
    const key = `${JSON.stringify(k)}: `;
    const depth = k === "rules" ? expandDepth : expandDepth - 1;
    return `${inner}${key}${format(value[k], inner, key.length, depth)}`;
  });
  return `{\n${lines.join(",\n")}\n${indent}}`;
}

function compact(value) {
  if (value === null || typeof value !== "object") return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map(compact).join(", ")}]`;
  const entries = Object.entries(value).map(([k, v]) => `${JSON.stringify(k)}: ${compact(v)}`);
  return entries.length === 0 ? "{}" : `{ ${entries.join(", ")} }`;
}

function main() {
  const { values: flags } = parseArgs({
    options: {
      rules: { type: "string", default: "200" },
      seed: { type: "string", default: "10" },
      shape: { type: "string", default: "mixed" },
      out: { type: "string" },
    },
  });
  const rules = Number(flags.rules);
  const seed = Number(flags.seed);
  if (!Number.isInteger(rules) || rules < CORE_RULES.length || rules > 100_000) {
    process.stderr.write(
      `make-policy.js: --rules must be an integer from ${CORE_RULES.length} to 100000, got ${flags.rules}\n`,
    );
    process.exit(2);
  }
  if (!Number.isInteger(seed) || seed < 0 || seed > 2 ** 32 - 1) {
    process.stderr.write(
      `make-policy.js: --seed must be an integer from 0 to 4294967295, got ${flags.seed}\n`,
    );
    process.exit(2);
  }
  if (!SHAPES.includes(flags.shape)) {
    process.stderr.write(`make-policy.js: --shape must be one of ${SHAPES.join(", ")}, got ${flags.shape}\n`);
    process.exit(2);
  }
  const text = formatPolicy(makePolicy({ rules, seed, shape: flags.shape }));
  if (flags.out === undefined) process.stdout.write(text);
  else writeFileSync(flags.out, text);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) main();

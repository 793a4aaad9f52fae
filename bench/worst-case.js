/**
 * The decision's worst case: what one Bash command can cost a decision. Before Bash rules are
 * matched, a PreToolUse Bash call's command is split into the commands it runs
 * (src/core/shell-command.ts), and `serve` answers every agent from one event loop, so a command
 * that is slow to split delays every decision queued behind it. This measures a decision on
 * commands built to be slow to split (each character an operator, a comment, a heredoc opener,
 * an `eval`), against two baselines measured in the same rounds: decision.js's request
 * (`rm -rf /`) and a 16 KiB commit message in a heredoc, the longest command agents commonly send.
 *
 *   node bench/worst-case.js [--rounds 4] [--calls 3] [--seconds 30] [--policy bench/policy-200.json]
 *
 * In process, against dist/ (needs `npm run build`): `handleHook` with the 200-rule policy on
 * decision.js's request with its command replaced, each hostile command at 8 and 16 KiB
 * (16 KiB is the longest command the splitter reads; a longer one is unreadable at once, and
 * every deny-style Bash rule matches it). The split of a command is memoised, as the same
 * command is read by several rules, so each case alternates two spellings of its command (the
 * second has a leading blank). Per case: the median wall and CPU ms per decision over
 * `rounds` × `calls` decisions, its ratio to the `rm -rf /` decision, and the growth from 8 to
 * 16 KiB (2 where the work is linear in the command's length, 4 where it is quadratic). A round
 * starts only while it fits in `seconds`, the warm-up included (common.js's roundBudget; the
 * first always runs): on a slow host the hostile commands alone took 69 s of 4 rounds.
 * Checks that every answer is a decision with no error, the same for both spellings, and that
 * `rm -rf /` gets no-rm-root's deny. Stops by itself in a few seconds. Writes
 * bench/results/worst-case-<date>T<time>.json and prints a Markdown table.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { createRun, log, machine, median, ROOT, round1, round3, roundBudget, writeResult } from "./common.js";
import { MEASURED_ANSWER, measuredRequest } from "./make-policy.js";

const { fail, boundedInt, boundedNumber, parseFlags } = createRun("worst-case.js");

const { values: flags } = parseFlags({
  options: {
    rounds: { type: "string", default: "4" },
    calls: { type: "string", default: "3" },
    seconds: { type: "string", default: "30" },
    policy: { type: "string", default: join(ROOT, "bench", "policy-200.json") },
  },
});
const options = {
  rounds: boundedInt("rounds", flags.rounds, 1, 100),
  calls: boundedInt("calls", flags.calls, 2, 100),
  seconds: boundedNumber("seconds", flags.seconds, 0, 3600),
  policy: flags.policy,
};

/** What the summary says when the time budget ended the rounds early. */
let roundsCut = "";

const dist = (path) => import(join(ROOT, "dist", path));
const { loadPolicy } = await dist("core/policy.js").catch(() =>
  fail("dist/ is missing or stale: run npm run build first"),
);
const { handleHook } = await dist("app/handle-hook.js");
const { splitCommand, MAX_COMMAND_LENGTH } = await dist("core/shell-command.js");
const { nodeSha256 } = await dist("adapters/hash/node-crypto.js");
const { createJsonLogger } = await dist("adapters/log/json-lines.js");

/** `unit` repeated to exactly `length` characters. */
const repeated = (unit, length) => unit.repeat(Math.ceil(length / unit.length)).slice(0, length);

/** A commit message of about `length` characters in a quoted heredoc, as Claude Code writes one. */
const commitMessage = (length) =>
  `git commit -m "$(cat <<'EOF'\n${repeated("Fix the retry loop so a slow sink no longer blocks. ", length - 40)}\nEOF\n)"`;

/**
 * Each shape once took the splitter more than linear time, or is among the slowest per
 * character (bench/README.md, worst-case.js).
 */
const HOSTILE = [
  { name: "`<` repeated", command: (n) => repeated("<", n) },
  { name: "`a #⏎` repeated", command: (n) => repeated("a #\n", n) },
  { name: "`echo $(` + `a #⏎` repeated + `)`", command: (n) => `echo $(${repeated("a #\n", n - 8)})` },
  { name: "`eval ` repeated", command: (n) => repeated("eval ", n) },
  { name: "`(a` repeated", command: (n) => repeated("(a", n) },
  { name: "`$(` repeated", command: (n) => repeated("$(", n) },
  { name: "`@(` repeated", command: (n) => repeated("@(", n) },
  { name: "`[[ ` repeated", command: (n) => repeated("[[ ", n) },
  // Each argument's brace lists are expanded for deny-style rules, up to 64 KiB of words.
  { name: "`echo ` + `x{1..9} ` repeated", command: (n) => `echo ${repeated("x{1..9} ", n - 5)}` },
  // A reserved word right after a compound command's end starts a command: each is split off.
  { name: "`[[ x ]] then ` repeated", command: (n) => repeated("[[ x ]] then ", n) },
  { name: "`for ((;;)) do ` repeated", command: (n) => repeated("for ((;;)) do ", n) },
  { name: "`a|` repeated", command: (n) => repeated("a|", n) },
  { name: "`a⏎` repeated", command: (n) => repeated("a\n", n) },
  { name: "`x=(` repeated", command: (n) => repeated("x=(", n) },
  // Subscripts whose end the code-in-data check looks past: a quoted `]`, a nested `[`.
  { name: '`a["]"` repeated', command: (n) => repeated('a["]"', n) },
  { name: "`a[[]` repeated", command: (n) => repeated("a[[]", n) },
  // Two that an intermediate build's subscript check took over 15 s on (backtracking).
  { name: "`a['\\'` repeated", command: (n) => repeated("a['\\'", n) },
  { name: "`c\\[\\\\x` repeated", command: (n) => repeated("c\\[\\\\x", n) },
  // Lone globs in a command with a `case`: each was looked for among the case's patterns.
  { name: "a `case`, then `*;` repeated", command: (n) => `case x in x) ;; esac; ${repeated("*;", n - 22)}` },
  {
    name: "a `case`, then `a*|` repeated",
    command: (n) => `case x in x) ;; esac; ${repeated("a*|", n - 22)}`,
  },
  // A run of `$` before a `]`: an intermediate build's subscript check was quadratic on it (720 ms).
  { name: "`$` repeated, then `]`", command: (n) => `${repeated("$", n - 1)}]` },
  // A `case` at every command start: each is checked for being one (the scan's command-start test).
  { name: "`case x in⏎` repeated", command: (n) => repeated("case x in\n", n) },
  // Many commands, each one that Bash rules name or a redirection: the rules' work per command.
  { name: "`git push -f origin main;` repeated", command: (n) => repeated("git push -f origin main;", n) },
  // git read past its options and through the alias its `-c` defines, a shell command here.
  { name: "`git -c alias.x='!x' x;` repeated", command: (n) => repeated("git -c alias.x='!x' x;", n) },
  // A setting's or a variable's command, read as a script (run 29).
  {
    name: "`git -c core.pager='x;y' log;` repeated",
    command: (n) => repeated("git -c core.pager='x;y' log;", n),
  },
  { name: "`GIT_PAGER='x;y' ` repeated", command: (n) => repeated("GIT_PAGER='x;y' ", n) },
  { name: "`env EDITOR=x ` repeated", command: (n) => repeated("env EDITOR=x ", n) },
  // What a remote host or a container runs, and a CLI past its global options (run 29).
  { name: "`ssh h ` repeated", command: (n) => repeated("ssh h ", n) },
  { name: "`docker run -v $P:/s i ` repeated", command: (n) => repeated("docker run -v $P:/s i ", n) },
  { name: "`kubectl exec p -- ` repeated", command: (n) => repeated("kubectl exec p -- ", n) },
  { name: "`kubectl -n x ` repeated", command: (n) => repeated("kubectl -n x ", n) },
  { name: "`ssh h a;` repeated", command: (n) => repeated("ssh h a;", n) },
  { name: "`uv run ` repeated", command: (n) => repeated("uv run ", n) },
  { name: "`npx -c x ` repeated", command: (n) => repeated("npx -c x ", n) },
  { name: "`git bisect run ` repeated", command: (n) => repeated("git bisect run ", n) },
  { name: "`rsync -e x ` repeated", command: (n) => repeated("rsync -e x ", n) },
  // kubectl exec without `--`, each later word a guess (quadratic before it stopped at 16).
  { name: "`kubectl exec p x ` repeated", command: (n) => repeated("kubectl exec p x ", n) },
  { name: "`pnpm -r ` repeated", command: (n) => repeated("pnpm -r ", n) },
  // nix's and corepack's runners, nix-shell's script (run 29).
  { name: "`nix develop -c ` repeated", command: (n) => repeated("nix develop -c ", n) },
  { name: "`nix-shell --run x ` repeated", command: (n) => repeated("nix-shell --run x ", n) },
  { name: "`corepack pnpm exec ` repeated", command: (n) => repeated("corepack pnpm exec ", n) },
  // A -c that may be an option's value: the next -c read as nix's too, each nested (a guess each).
  {
    name: "`nix develop --keep -c --keep -c ` repeated",
    command: (n) => repeated("nix develop --keep -c --keep -c ", n),
  },
  // By another case each level is read twice, as written and by its lower-case name.
  { name: "`SSH h ` repeated", command: (n) => repeated("SSH h ", n) },
  { name: "`a>b;` repeated", command: (n) => repeated("a>b;", n) },
  // What find, fd and xargs run is read as a command of its own (2026-12-02, run 17).
  { name: "`find -exec ` repeated", command: (n) => repeated("find -exec ", n) },
  { name: "`xargs -I{} ` repeated", command: (n) => repeated("xargs -I{} ", n) },
  { name: "`xargs -i ` repeated", command: (n) => repeated("xargs -i ", n) },
  // A wrapper's value that may split, and a guess-only wrapper's quoted operand: each wrapper's
  // command nests the next (2026-12-02, run 18: 16 KiB of `sudo -u $U ` or `xargs -n $N `
  // took about 50 ms at run 17's last commit, guessed; 6 ms once such a value is unreadable).
  { name: "`sudo -u $U ` repeated", command: (n) => repeated("sudo -u $U ", n) },
  { name: '`flock "$L" ` repeated', command: (n) => repeated('flock "$L" ', n) },
  // Run 24: a wrapper chain (a review measured 50 ms for 16 KiB of `env `), and the same named
  // in capitals, which deny-style rules read through as the lower-case name.
  { name: "`env ` repeated", command: (n) => repeated("env ", n) },
  { name: "`ENV ` repeated", command: (n) => repeated("ENV ", n) },
  // Run 32: tmux and screen, whose later words are each guessed as a command and, for tmux,
  // read as scripts (a word with a blank), each nesting the next.
  { name: "`tmux ` repeated", command: (n) => repeated("tmux ", n) },
  { name: "`tmux 'a b' ` repeated", command: (n) => repeated("tmux 'a b' ", n) },
  { name: "`screen ` repeated", command: (n) => repeated("screen ", n) },
  // A name in capitals that a builtin sets, read as one the environment may hold: a regex that
  // could take its first capital anywhere in the run was quadratic (16 KiB of `let AAA…Ax` in
  // 0.8 s, of `read AAA…Ax` in 0.3 s), and `let`'s subscript looked from each `[` to the end.
  { name: "`let ` + `A` repeated + `x`", command: (n) => `let ${repeated("A", n - 5)}x` },
  { name: "`let ` + `A1` repeated", command: (n) => `let ${repeated("A1", n - 4)}` },
  { name: "`let ` + `,A[` repeated", command: (n) => `let ${repeated(",A[", n - 4)}` },
  // The same regex reads zsh's arrays tied to PATH, prefixed (`++path`) too, and a `${…}`'s subscript.
  { name: "`let ` + `,path[` repeated", command: (n) => `let ${repeated(",path[", n - 4)}` },
  { name: "`let ` + `++` repeated", command: (n) => `let ${repeated("++", n - 4)}` },
  {
    name: "`echo` of a subscript, `,path[` repeated",
    command: (n) => `echo \${a[${repeated(",path[", n - 11)}]}`,
  },
  { name: "`read ` + `A` repeated + `x`", command: (n) => `read ${repeated("A", n - 6)}x` },
  // zsh's `$NAME[…]`, whose subscript is read as arithmetic from each `$`, within bounds.
  { name: "`echo ` + `$a[` repeated", command: (n) => `echo ${repeated("$a[", n - 5)}` },
  { name: '`echo "` + `$a[[x` repeated', command: (n) => `echo "${repeated("$a[[x", n - 6)}` },
];
const SIZES = [MAX_COMMAND_LENGTH / 2, MAX_COMMAND_LENGTH];

/**
 * A Read's `file_path` (or another tool's path or URL) built to be slow to read as a path
 * (src/core/permission-rule.ts `pathsOf`): a path's length is bounded only by the body's, and a
 * review of run 25 measured 5 minutes for 500 KB of `root/` once /proc's links were followed
 * (each `root` rebuilt the path read so far; run 26 found the same with one long segment
 * before the `root`s), and 8 s for 100 KB of spaces in a Windows path (a regex stripping a
 * segment's trailing blanks). `windows` gives the event a Windows cwd; `tool` and `field` put the
 * text in another tool's input (a Glob's `pattern`, a WebFetch's `url`).
 */
const HOSTILE_PATHS = [
  { name: "Read of `/` + `root/` repeated", path: (n) => `/${repeated("root/", n - 1)}` },
  {
    name: "Read of `/proc/self/root/` + `root/../` repeated",
    path: (n) => `/proc/self/root/${repeated("root/../", n - 16)}`,
  },
  {
    // Each `root` pushed read the path so far again (run 26): the first segment's length times
    // the count of `root`s.
    name: "Read of `/proc/`, a long segment, `/root/../` repeated",
    path: (n) => `/proc/${repeated("a", n / 2)}/${repeated("root/../", n / 2 - 7)}`,
  },
  {
    // Each `/` of the run began a match of `/\/+$/` that read to the run's end (run 26: 6.5 s
    // for 100 KB).
    name: "Glob of `a`, `/` repeated, `x`",
    tool: "Glob",
    field: "pattern",
    path: (n) => `a${repeated("/", n - 2)}x`,
  },
  {
    // Each `where.glob` rule normalized the path again and walked its `**` over every segment
    // (run 26: 1.9 s for 1 MB with the 200-rule policy's Edit rules).
    name: "Edit of `/` + `a/` repeated",
    tool: "Edit",
    path: (n) => `/${repeated("a/", n - 1)}`,
  },
  {
    // The audit line's masking: each BEGIN looked 8 KiB ahead for its END (run 26: 0.4 s for
    // 1 MB).
    name: "MCP input of `-----BEGIN PRIVATE KEY-----!` repeated",
    tool: "mcp__files__write",
    field: "content",
    path: (n) => repeated("-----BEGIN PRIVATE KEY-----!", n),
  },
  {
    // A scheme word before blanks: each blank given back looked behind them all for `Token` (a
    // first draft of the shape for Basic's credential with no digit: 0.36 s for 20 KB).
    name: "MCP input of `Basic`, blanks, `!`",
    tool: "mcp__files__write",
    field: "content",
    path: (n) => `Basic${repeated(" ", n - 6)}!`,
  },
  {
    // SQL's password: each blank given back looked behind them all for `BY` (a first version of
    // the shape: 0.25 s for 16 KiB).
    name: "MCP input of `PASSWORD`, blanks, `x`",
    tool: "mcp__files__write",
    field: "content",
    path: (n) => `PASSWORD${repeated(" ", n - 9)}x`,
  },
  {
    // Each WebFetch rule parsed the URL again (run 26: 0.7 s for 1 MB of host).
    name: "WebFetch of `https://`, `é.` repeated, `com/`",
    tool: "WebFetch",
    field: "url",
    path: (n) => `https://${repeated("é.", n - 12)}com/`,
  },
  {
    name: "Read on Windows of `C:\\p\\`, blanks, `x`",
    windows: true,
    path: (n) => `C:\\p\\${repeated(" ", n - 6)}x`,
  },
  {
    // Windows opens paths up to 32,767 characters (run 27: it matched no rule past 4,096 before;
    // a review measured 0.3 s an allow rule at 32 KB when each directory above it was tried in turn;
    // run 28: one test of the rule's glob and one of `glob/**` a rule).
    name: "Read on Windows of `C:\\p\\` + `a\\` repeated + `.env`",
    windows: true,
    path: (n) => `C:\\p\\${repeated("a\\", n / 2 - 5)}.env`,
  },
  {
    name: "Read on Windows of `.env`, `:` repeated, `⏎x`",
    windows: true,
    path: (n) => `C:\\p\\.env${repeated(":", n - 11)}\nx`,
  },
  {
    // A segment's trailing dots and spaces: allow rules read the path again with them kept.
    name: "Edit on Windows of `C:\\p\\` + `a. \\` repeated + `x`",
    windows: true,
    tool: "Edit",
    path: (n) => `C:\\p\\${repeated("a. \\", n - 6)}x`,
  },
  {
    // A legacy junction that leads to its own folder, repeated: allow rules read it as written
    // and where it leads.
    name: "Edit on Windows of `C:\\ProgramData\\` + `Application Data\\` repeated + `x`",
    windows: true,
    tool: "Edit",
    path: (n) => `C:\\ProgramData\\${repeated("Application Data\\", n - 16)}x`,
  },
];

await main();

async function main() {
  const loaded = await loadPolicy(readFileSync(options.policy, "utf8"), {
    env: () => undefined,
    sha256: nodeSha256,
  });
  if (!loaded.ok) fail(`${options.policy} does not load: ${JSON.stringify(loaded.error.slice(0, 3))}`);
  const policy = loaded.value.policy;
  const request = measuredRequest();
  const event = JSON.parse(request.body);
  let calls = 0;
  const deps = {
    policy: () => policy,
    clock: { now: Date.now, monotonic: () => performance.now() },
    newId: () => `bench-${calls++}`,
    sha256: nodeSha256,
    logger: createJsonLogger({ write() {} }),
  };
  const hookRequest = (command, path) => {
    const body = path
      ? {
          ...event,
          ...(path.windows && { cwd: "C:\\p" }),
          tool_name: path.tool ?? "Read",
          tool_input: { [path.field ?? "file_path"]: command },
        }
      : { ...event, tool_input: { ...event.tool_input, command } };
    return {
      body: { ok: true, text: JSON.stringify(body) },
      contentType: request.headers["content-type"],
      authorization: request.headers.authorization,
      dialect: undefined,
    };
  };

  const cases = [
    { name: "baseline: `rm -rf /` (decision.js's request)", kind: "baseline", bytes: 8, command: "rm -rf /" },
    {
      name: "baseline: a 16 KiB commit message in a heredoc",
      kind: "commit",
      bytes: MAX_COMMAND_LENGTH,
      command: commitMessage(MAX_COMMAND_LENGTH - 1),
    },
    ...HOSTILE.flatMap((h) =>
      // One character short, for the second spelling's leading blank.
      SIZES.map((bytes) => ({ name: h.name, kind: "hostile", bytes, command: h.command(bytes - 1) })),
    ),
    ...HOSTILE_PATHS.flatMap((h) =>
      SIZES.map((bytes) => ({ name: h.name, kind: "hostile", bytes, command: h.path(bytes - 1), path: h })),
    ),
  ];
  // The warm-up below is the budget's first round.
  const budget = roundBudget(options.seconds, 1);
  for (const c of cases) {
    if (c.command.length >= MAX_COMMAND_LENGTH)
      fail(`${c.name}: ${c.command.length} characters, over the limit`);
    c.requests = [hookRequest(c.command, c.path), hookRequest(` ${c.command}`, c.path)];
    c.unreadable = c.path ? false : splitCommand(c.command).unreadable;
    c.wallMs = [];
    c.cpuMs = [];
    // Warm-up, and the answer checked: no error, the same for both spellings.
    const answers = [];
    for (const r of c.requests) {
      const outcome = await handleHook(deps, r);
      if (outcome.error !== undefined) fail(`${c.name}: the decision failed with ${outcome.error.code}`);
      answers.push(outcome.answer.body);
    }
    if (answers[0] !== answers[1]) fail(`${c.name}: the two spellings got ${answers[0]} and ${answers[1]}`);
    if (c.kind === "baseline" && answers[0] !== MEASURED_ANSWER) {
      fail(`${c.name}: got ${answers[0]}, expected ${MEASURED_ANSWER}`);
    }
    c.decision =
      answers[0] === "" ? "none" : (JSON.parse(answers[0]).hookSpecificOutput?.permissionDecision ?? "?");
  }

  log(
    `worst-case: ${cases.length} commands, up to ${options.rounds} rounds of ${options.calls} decisions each ` +
      `within ${options.seconds} s`,
  );
  for (let round = 1; round <= options.rounds && budget.start(round); round++) {
    for (const c of cases) {
      for (let i = 0; i < options.calls; i++) {
        const cpu0 = process.cpuUsage();
        const t0 = performance.now();
        await handleHook(deps, c.requests[i % 2]);
        const ms = performance.now() - t0;
        const cpu = process.cpuUsage(cpu0);
        c.wallMs.push(ms);
        c.cpuMs.push((cpu.user + cpu.system) / 1000);
      }
    }
  }

  roundsCut = budget.settle(options);
  const baseline = cases[0];
  const baseMs = median(baseline.wallMs);
  const rows = cases.map((c) => {
    const wallMs = median(c.wallMs);
    return {
      name: c.name,
      kind: c.kind,
      bytes: c.bytes,
      decision: c.decision,
      unreadable: c.unreadable,
      wallMs: round3(wallMs),
      wallMsRange: [round3(Math.min(...c.wallMs)), round3(Math.max(...c.wallMs))],
      cpuMs: round3(median(c.cpuMs)),
      timesBaseline: round1(wallMs / baseMs),
    };
  });
  for (const row of rows) {
    if (row.kind !== "hostile" || row.bytes !== MAX_COMMAND_LENGTH) continue;
    const half = rows.find((r) => r.name === row.name && r.bytes === MAX_COMMAND_LENGTH / 2);
    row.growth = half ? round1(row.wallMs / half.wallMs) : null;
  }
  const worst = rows.reduce((a, b) => (b.wallMs > a.wallMs ? b : a));
  const result = {
    benchmark: "worst-case",
    date: new Date().toISOString(),
    machine: machine("in process; other load on the machine moves the wall figures"),
    options,
    baselineMs: round3(baseMs),
    worst: { name: worst.name, bytes: worst.bytes, wallMs: worst.wallMs, timesBaseline: worst.timesBaseline },
    maxGrowth: Math.max(...rows.map((r) => r.growth ?? 0)),
    cases: rows,
  };
  const file = writeResult("worst-case", result);
  process.stdout.write(`\n${markdown(result)}\n\nwritten to ${file}\n`);
}

function markdown(result) {
  const lines = [
    `In process (\`handleHook\`, ${options.policy.endsWith("policy-200.json") ? "the 200-rule policy" : options.policy}), ` +
      `median of ${options.rounds}${roundsCut} × ${options.calls} decisions per command; growth: the 16 KiB median over the 8 KiB one.`,
    "",
    "| command | KiB | answer | ms per decision (range) | CPU ms | × `rm -rf /` | growth 8 → 16 KiB |",
    "|---|---:|---|---:|---:|---:|---:|",
  ];
  for (const r of result.cases) {
    if (r.kind === "hostile" && r.bytes !== MAX_COMMAND_LENGTH) continue;
    const answer = `${r.decision}${r.unreadable ? " (unreadable)" : ""}`;
    lines.push(
      `| ${r.name} | ${round1(r.bytes / 1024)} | ${answer} | ${r.wallMs} (${r.wallMsRange.join("–")}) | ${r.cpuMs} | ` +
        `${r.timesBaseline}× | ${r.growth === undefined ? "" : `${r.growth}×`} |`,
    );
  }
  lines.push(
    "",
    `**Worst case:** ${result.worst.name} at ${round1(result.worst.bytes / 1024)} KiB, ${result.worst.wallMs} ms per ` +
      `decision, ${result.worst.timesBaseline}× the \`rm -rf /\` decision (${result.baselineMs} ms); largest growth ` +
      `from 8 to 16 KiB ${result.maxGrowth}× (2× is linear).`,
  );
  return lines.join("\n");
}

/**
 * What `hookgate --help` and `hookgate CMD --help` print. Each command's usage lines make up the
 * global usage (README.md's CLI section shows it); its own help adds what each option means.
 * A usage error in a command prints that command's usage, not every command's.
 */

interface CommandHelp {
  /** The synopsis, one or more lines, each starting with `hookgate`. */
  readonly usage: string;
  /** What the command does and what each option means, for `hookgate CMD --help`. */
  readonly details: string;
}

const CLIENTS = "claude-code|deepcode|deepagents|deepagents-legacy";

export const COMMAND_HELP = {
  serve: {
    usage:
      "hookgate serve --policy FILE [--host 127.0.0.1] [--port 8787] [--data-dir .hookgate] [--record FILE]",
    details: `Runs the gateway on Node, answering hooks on /v1/hooks/<client>.

  --policy FILE     the policy file (hookgate check FILE validates it); SIGHUP reloads it, and a
                    reload that fails keeps the running policy
  --host ADDR       the address to listen on (default 127.0.0.1; bound to loopback, only requests
                    whose Host names loopback are answered)
  --port N          the port (default 8787; 0 picks a free one)
  --data-dir DIR    where the notification queue, its intake journal and the session store live
                    (default .hookgate); one serve per directory
  --record FILE     appends each decision's record (masked input and answer) to FILE, for
                    hookgate replay; SIGHUP opens FILE again (rename it first to rotate it)

SIGTERM or SIGINT stops it after the open requests, forward calls and deliveries in flight.`,
  },
  check: {
    usage: "hookgate check FILE",
    details: `Validates a policy file: exit 0 when it is valid (warnings printed: unknown events, rules no
event can reach, decisions a client cannot honour, inline secrets, no auth), 1 with every
problem and its JSON path.`,
  },
  simulate: {
    usage: `hookgate simulate --policy FILE [--client ${CLIENTS}] [--token T] [--json] EVENT.json|-`,
    details: `Answers one event (a file, or - for stdin) as the gateway would, and says why each rule the
token's team could meet did or did not apply (+ applied, ~ shadow, - not applied).

  --policy FILE     the policy file
  --client NAME     the route the event comes in on (default: told by the body's fields)
  --token T         the token the hook sends (default: the variable the client's hook sends:
                    HOOKGATE_TOKEN for claude-code and deepcode (else HOOKGATE_AUTH on Claude
                    Code's SessionStart and Setup, hookgate send hooks), HOOKGATE_AUTH for
                    deepagents and deepagents-legacy; without --client, HOOKGATE_TOKEN, else
                    HOOKGATE_AUTH)
  --json            prints the answer and the rules as JSON`,
  },
  test: {
    usage: "hookgate test POLICY CASES.json... [--coverage] [--json]",
    details: `Runs a policy's test cases (events and the answer each must get): exit 1 on any failing case,
or when the policy or a cases file is invalid (said on stderr; no case runs).

  --coverage        also lists the rules no case applied
  --json            prints the cases' results (and the coverage) as JSON`,
  },
  replay: {
    usage: "hookgate replay --policy CANDIDATE [--with-judge] [--json] [--examples N] RECORDS.jsonl...|-",
    details: `Replays recorded traffic (serve --record, or - for stdin) against a candidate policy and
reports what would change: exit 0 whatever it finds, 1 when the policy or a records file
cannot be read.

  --policy FILE     the candidate policy
  --with-judge      calls the candidate's models for its prompt rules (otherwise "not run")
  --json            prints the report as JSON
  --examples N      how many examples of each change to show (default 3)`,
  },
  "egress-check": {
    usage: "hookgate egress-check URL [--policy FILE] [--allow GLOB]... [--resolve HOST:ADDR]...",
    details: `Judges one URL as the egress guard would, resolving its host but never connecting; prints
{"url","decision","reason","stage"}. Exit 0 allow, 1 deny, 2 for a bad --resolve or --allow, and
when the policy cannot be read or is one serve and check refuse (an invalid egress section, a
repeated rule id).

  --policy FILE     takes the allowlist from the policy's egress section
  --allow GLOB      a URL glob to allow (repeatable)
  --resolve HOST:ADDR  answers DNS for HOST with ADDR, as curl's --resolve (repeatable)`,
  },
  dlq: {
    usage: `hookgate dlq list [--data-dir DIR | --sqs-queue-url U --sqs-dlq-url D [--sqs-endpoint E]] [--limit N] [--json]
hookgate dlq replay (--id ID... | --all) [--policy FILE] [--data-dir DIR | --sqs-... ]
hookgate dlq drop (--id ID... | --all) [--data-dir DIR | --sqs-... ]`,
    details: `Lists, replays or drops notifications that ran out of retries; safe beside a running serve.

  --data-dir DIR    the SQLite queue's directory (default .hookgate)
  --sqs-queue-url U, --sqs-dlq-url D, --sqs-endpoint E
                    the SQS queue, its dead-letter queue, and an endpoint other than AWS's
  --limit N         list at most N (default 1000)
  --json            lists them as a JSON array
  --id ID           the dead letter to replay or drop (repeatable); --all for every one
  --policy FILE     replay only the dead letters of sinks this policy (serve's) has; the
                    others stay dead letters, named by sink on stderr

On SQS a replay goes a page of 10 at a time; one that stops (a dead letter SQS will not take, a
failed request) exits 1 with why and how many it replayed before it stopped, which are on the
queue again. The others stay dead letters, listed again at once: fix what the error names and
replay again, or drop the one SQS will not take.`,
  },
  schema: {
    usage: "hookgate schema",
    details: "Prints the policy file's JSON Schema (examples/policy.schema.json).",
  },
  token: {
    usage: "hookgate token hash            (reads the token on stdin)",
    details:
      'Prints the SHA-256 of the token on stdin, for a policy\'s auth.tokens[].sha256 (spaces and\nnewlines around it are trimmed, as the gateway trims a Bearer token):\n  printf %s "$TOKEN" | hookgate token hash',
  },
  init: {
    usage: `hookgate init --client ${CLIENTS} --url HOOK_URL
              [--events LIST] [--timeout S] [--fail-closed] [--managed] [--write FILE]`,
    details: `Prints a client's hook configuration for this gateway (notes on stderr).

  --client NAME     the agent client
  --url HOOK_URL    the full hook URL, such as http://127.0.0.1:8787/v1/hooks/claude-code
  --events LIST     comma-separated events to hook (default: the client's usual set)
  --timeout S       each hook's timeout in whole seconds, 2 to 600 (default 10), sent as
                    x-hookgate-timeout (deepagents' curl gives up a second sooner; legacy hooks
                    run under deepagents' fixed 5 s); at most the client's default where it
                    holds the user: UserPromptSubmit 30, Claude Code's MessageDisplay 10 and
                    SessionEnd 2
  --fail-closed     a gateway that cannot be reached blocks PreToolUse instead of letting it run
                    (Claude Code, deepagents v2; deepcode and legacy hooks cannot)
  --managed         Claude Code's managed-settings variant (allowManagedHooksOnly)
  --write FILE      merges the configuration into FILE, replacing the hooks an earlier init
                    wrote there (for this URL or another); one edited since stays, named`,
  },
  send: {
    usage: "hookgate send --url URL [--client NAME] [--timeout S]   (event on stdin; never fails)",
    details: `Posts one event from stdin with HOOKGATE_TOKEN (or HOOKGATE_AUTH; on a deepagents route
HOOKGATE_AUTH only) and prints the answer body;
exits 0 even when it fails, saying why on stderr, so a broken gateway never breaks the agent.

  --url URL         the full hook URL (or the gateway's base URL, with --client)
  --client NAME     the route, when --url has no /v1/hooks path
  --timeout S       seconds to wait for the answer (default 10, at most 600), also sent as
                    x-hookgate-timeout`,
  },
  doctor: {
    usage: `hookgate doctor --url URL [--client NAME] [--expect deny|allow|ask|defer|none] [--command CMD]
              [--timeout S]`,
    details: `Checks a running gateway from where the agent runs: it answers, the token is accepted
(HOOKGATE_TOKEN, the one Claude Code's and deepcode's http hooks send; HOOKGATE_AUTH for
deepagents), and a sample PreToolUse gets the expected decision. Exit 0 when every check
passed; a failed one says how to fix it.

  --url URL         the hook URL (or the gateway's base URL)
  --client NAME     the sample's dialect when the URL names no route (default claude-code)
  --expect D        the decision the sample must get (default deny)
  --command CMD     the sample's Bash command (default rm -rf /)
  --timeout S       seconds for each request, default 10, at most 600`,
  },
} satisfies Readonly<Record<string, CommandHelp>>;

/** A command of the CLI: each has its help. */
export type CommandName = keyof typeof COMMAND_HELP;

/** Each line two spaces in, as usage lines are shown. */
const indent = (text: string): string => text.replace(/^/gm, "  ");

export const USAGE = `hookgate: a hook gateway for AI coding agents

Usage:
${Object.values(COMMAND_HELP)
  .map((c) => indent(c.usage))
  .join("\n")}
  hookgate --version
`;

/** `hookgate CMD --help`. */
export function commandHelp(command: CommandName): string {
  const help: CommandHelp = COMMAND_HELP[command];
  return `Usage:\n${indent(help.usage)}\n\n${help.details}\n`;
}

/**
 * Said after a usage error in CMD: its synopsis and where the rest is. A command without options
 * (`check`, `schema`, `token`) has no option table to point at.
 */
export function commandUsage(command: CommandName): string {
  const help: CommandHelp = COMMAND_HELP[command];
  const more = /^ {2}--/m.test(help.details) ? "what each option means" : "what it does";
  return `Usage:\n${indent(help.usage)}\n\nhookgate ${command} --help says ${more}.\n`;
}

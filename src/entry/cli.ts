/**
 * The `hookgate` command. Exit codes: 0 success, 1 a failed check or a run-time failure,
 * 2 a usage error. Each command's module is imported when that command runs, so a command
 * loads only what it uses: `hookgate send`, a command hook's whole run, starts without the
 * policy compiler, Hono or SQLite (bench/README.md, "The CLI's start").
 */
import { fstat } from "node:fs";
import { readFile } from "node:fs/promises";
import { parseArgs, promisify } from "node:util";
import { nodeSha256 } from "../adapters/hash/node-crypto.js";
import { errorMessage } from "../core/errors.js";
import {
  argumentProblem,
  commandTaking,
  didYouMean,
  isArgumentError,
  negativeValuesJoined,
} from "./arg-errors.js";
import { type CommandName, commandHelp, commandUsage, USAGE } from "./help.js";
import { UsageError } from "./usage-error.js";

export type Io = {
  out: (text: string) => void;
  err: (text: string) => void;
  /** stdin as it came: an event is judged as bytes, as `serve` judges a body; text is decoded by its reader. */
  stdin: () => Promise<Uint8Array>;
};

const io: Io = {
  out: (text) => process.stdout.write(text),
  err: (text) => process.stderr.write(text),
  stdin: readStdin,
};

/** Each command and what runs it, given the arguments after its name; the exit code comes back. */
const COMMANDS: Readonly<Record<CommandName, (args: readonly string[]) => Promise<number>>> = {
  serve: async (args) => (await import("./policy-commands.js")).serveCommand(args, io),
  check: async (args) => (await import("./policy-commands.js")).checkCommand(args, io),
  simulate: async (args) => (await import("./policy-commands.js")).simulateCommand(args, io),
  test: async (args) => (await import("./policy-test.js")).policyTestCommand(args, io),
  replay: async (args) =>
    (await import("./replay.js")).replayCommand(args, {
      ...io,
      stdin: () => process.stdin,
      stdinStat: () => promisify(fstat)(0).catch(() => undefined),
    }),
  "egress-check": async (args) => (await import("./egress-check.js")).egressCheckCommand(args, io),
  dlq: async (args) => (await import("./dlq.js")).dlqCommand(args, io),
  schema: async (args) => {
    // Nothing to take: `schema --out FILE` or `schema policy.json` is a usage error, not ignored.
    parseArgs({ args: [...args], options: {} });
    const { policyJsonSchema } = await import("../core/policy-schema.js");
    io.out(`${JSON.stringify(policyJsonSchema(), null, 2)}\n`);
    return 0;
  },
  token: tokenCommand,
  init: async (args) => (await import("./init.js")).initCommand(args, io),
  send: async (args) => (await import("./send.js")).sendCommand(args, io, process.env),
  doctor: async (args) => (await import("./doctor.js")).doctorCommand(args, io, process.env),
};

/** The command this word names, if any. */
function commandNamed(word: string | undefined): CommandName | undefined {
  return word !== undefined && Object.hasOwn(COMMANDS, word) ? (word as CommandName) : undefined;
}

/** The refusal of a word that names no command, with the command it most likely meant (`chek`). */
function unknownCommand(word: string): UsageError {
  // An option given first (`hookgate --policy p.json serve`): its command goes before it.
  const taker = word.startsWith("--") ? commandTaking(word.replace(/=.*/s, "")) : undefined;
  if (taker !== undefined)
    return new UsageError(
      `unknown command "${word}": the command comes first, then its options (hookgate ${taker} ${word} …)`,
    );
  return new UsageError(`unknown command "${word}"${didYouMean(word, Object.keys(COMMANDS))}`);
}

/** `hookgate help`, `--help` or `-h`. */
function isHelp(word: string | undefined): boolean {
  return word === "help" || word === "--help" || word === "-h";
}

export async function main(argv: readonly string[]): Promise<number> {
  const [command, ...rest] = argv;
  const named = commandNamed(command);
  const run = named === undefined ? undefined : COMMANDS[named];
  // `hookgate CMD --help` is help, not a command with an unknown option.
  if (named !== undefined && (rest.includes("--help") || rest.includes("-h"))) {
    io.out(commandHelp(named));
    return 0;
  }
  try {
    if (run) return await run(negativeValuesJoined(rest));
    if (command === undefined) {
      io.err(USAGE); // no command is a usage error: its text goes where errors go
      return 2;
    }
    if (isHelp(command)) {
      // `hookgate help CMD` is `hookgate CMD --help`.
      const [topic, ...extra] = rest;
      const about = commandNamed(topic);
      if (topic !== undefined && about === undefined) throw unknownCommand(topic);
      if (extra.length > 0) throw new UsageError(`help takes one command, not "${extra.join(" ")}" after it`);
      io.out(about === undefined ? USAGE : commandHelp(about));
      return 0;
    }
    if (command === "--version" || command === "-v") {
      if (rest.length > 0) throw new UsageError(`${command} takes no arguments`);
      const manifest = JSON.parse(await readFile(new URL("../../package.json", import.meta.url), "utf8"));
      io.out(`hookgate ${manifest.version}\n`);
      return 0;
    }
    throw unknownCommand(command);
  } catch (e) {
    if (e instanceof UsageError || isArgumentError(e)) {
      // A usage error in a command, or in `help CMD`, shows that command's usage; an unknown
      // command, every one.
      const about = named ?? (isHelp(command) ? commandNamed(rest[0]) : undefined);
      const usage = about === undefined ? USAGE : commandUsage(about);
      const problem = named !== undefined && isArgumentError(e) ? argumentProblem(named, e) : e.message;
      io.err(`hookgate: ${problem}\n\n${usage}`);
      return 2;
    }
    io.err(`hookgate: ${errorMessage(e)}\n`);
    return 1;
  }
}

async function tokenCommand(args: readonly string[]): Promise<number> {
  if (args[0] !== "hash")
    throw new UsageError(`token takes one subcommand: "hash"${didYouMean(args[0] ?? "", ["hash"])}`);
  // `token hash TOKEN` was told that token takes one subcommand, which it was given. What follows
  // is not repeated: a base64url token may start with a `-` and read as an option.
  if (args.length > 1)
    throw new UsageError(
      'token hash takes no argument or option and reads the token on stdin (a shell keeps its arguments in its history): printf %s "$HOOKGATE_TOKEN" | hookgate token hash',
    );
  // Trimmed as the gateway trims the Bearer token it is sent: a hash of "tok\n\n" matches no client.
  const token = Buffer.from(await io.stdin())
    .toString("utf8")
    .trim();
  if (token === "") {
    io.err('hookgate: no token on stdin (try: printf %s "$HOOKGATE_TOKEN" | hookgate token hash)\n');
    return 1;
  }
  io.out(`${await nodeSha256(token)}\n`);
  return 0;
}

async function readStdin(): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

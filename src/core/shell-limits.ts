/**
 * The longest command shell-command.ts reads: 16 KiB, far above what agents run (a heredoc commit
 * message is a few KB). shell-quote allocates per token and is not linear on every input: on a
 * loaded 2-core machine a hostile compound command took up to ~45 ms at 16 KB, ~0.5 s at 100 KB,
 * and its crude split for what shell-quote cannot read still took ~1.5 s at 1 MB. A longer command is not read at all
 * (`splitCommand` returns it opaque, with no subcommands); permission-rule.ts decides what a
 * rule makes of it (POLICY.md, `if`). A module of its own, so that evaluate.ts can say it in a
 * reason where the Worker has not loaded the splitter (shell.ts).
 */
export const MAX_COMMAND_LENGTH = 16_384;

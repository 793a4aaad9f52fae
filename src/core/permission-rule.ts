/**
 * Claude Code's permission-rule grammar (`Tool` or `Tool(specifier)`), used by a policy rule's
 * `if` (POLICY.md). Parsing happens once at policy load; matching is pure and never throws, so
 * it runs unchanged on Node, Lambda and Workers.
 */
import { isRecord } from "./json-object.js";
import { keepLast } from "./keep-last.js";
import { compileCoveringGlob, normalizePath, type PathGlobTest } from "./path-glob.js";
import { err, ok, type Result } from "./result.js";
import { canonicalCommandPattern, SHELL_ENGINE_MISSING, splitCommand } from "./shell.js";
import type { CommandSplit, Subcommand } from "./shell-command.js";

export interface PermissionRule {
  /** The rule as written in the policy. */
  readonly source: string;
  readonly target: RuleTarget;
}

export interface ToolCall {
  readonly toolName: string;
  readonly toolInput?: Readonly<Record<string, unknown>> | undefined;
  /** The event's cwd (project root proxy). */
  readonly cwd?: string | undefined;
  /** e.g. /home/dev/.claude/projects/x/y.jsonl, used to infer the home dir. */
  readonly transcriptPath?: string | undefined;
  /**
   * The input is the client's description of the call, not the call (deepcode's PermissionRequest:
   * `tool_desc` only): deny-style rules read it, allow rules never allow on it.
   */
  readonly described?: boolean;
  /**
   * The call came without the input every client sends with it (a PreToolUse with no
   * `tool_input`): what it runs or touches is not known, so a deny-style entry that reads the
   * input matches it, to fail safe, and an allow entry never does.
   */
  readonly inputMissing?: boolean;
}

type RuleTarget =
  | { readonly kind: "tool"; readonly name: string }
  | { readonly kind: "mcp"; readonly pattern: Glob }
  | { readonly kind: "bash"; readonly pattern: Glob }
  | { readonly kind: "path"; readonly tools: ReadonlySet<string>; readonly pattern: PathPattern }
  | { readonly kind: "domain"; readonly domain: string; readonly subdomainsOnly: boolean }
  | { readonly kind: "text"; readonly tool: string; readonly field: string; readonly pattern: Glob };

// ---------------------------------------------------------------------------------------------
// Parsing
// ---------------------------------------------------------------------------------------------

const TOOL_NAME = /^[A-Za-z][A-Za-z0-9_-]*$/;
const MCP_NAME = /^mcp__[A-Za-z0-9_*-]+$/;

/**
 * Tools each path rule covers. Claude Code applies Read rules to every built-in tool that
 * reads files and Edit rules to every tool that edits them; other names cover only themselves.
 */
const PATH_RULE_TOOLS: Readonly<Record<string, readonly string[]>> = {
  Read: ["Read", "Glob", "Grep", "LS", "NotebookRead"],
  Edit: ["Edit", "Write", "MultiEdit", "NotebookEdit"],
  Write: ["Write"],
  MultiEdit: ["MultiEdit"],
  NotebookEdit: ["NotebookEdit"],
  NotebookRead: ["NotebookRead"],
  Glob: ["Glob"],
  Grep: ["Grep"],
  LS: ["LS"],
};

export function parsePermissionRule(text: string): Result<PermissionRule, string> {
  const split = splitRule(text);
  if (!split.ok) return split;
  const { name, specifier } = split.value;
  const target = name.startsWith("mcp__") ? mcpTarget(name, specifier) : toolTarget(name, specifier);
  if (!target.ok) {
    // A message that starts with the entry itself (a name that is the whole entry) says it once.
    const named = target.error.startsWith(`"${text.trim()}" `);
    return err(named ? target.error : `"${text}": ${target.error}`);
  }
  return ok({ source: text, target: target.value });
}

/** `Tool(specifier)` into its parts, with `\(` and `\)` unescaped in the specifier. */
function splitRule(text: string): Result<{ name: string; specifier: string | undefined }, string> {
  const trimmed = text.trim();
  if (trimmed === "")
    return err("is empty; write a tool name such as Bash, or Tool(specifier) such as Bash(npm test)");
  const open = trimmed.indexOf("(");
  if (open < 0) {
    if (trimmed.includes(")")) return err(`"${text}" has a ")" without a matching "("`);
    return ok({ name: trimmed, specifier: undefined });
  }
  if (!trimmed.endsWith(")")) return err(`"${text}" must end with ")" closing the "(" after the tool name`);
  const inner = trimmed.slice(open + 1, -1);
  if (!parensBalance(inner)) {
    return err(`"${text}" has unbalanced parentheses; write a literal one as \\( or \\)`);
  }
  if (inner.trim() === "") {
    return err(
      `"${text}" has an empty specifier; write "${trimmed.slice(0, open)}" alone to match every call`,
    );
  }
  return ok({ name: trimmed.slice(0, open), specifier: inner.replace(/\\([()])/g, "$1") });
}

function parensBalance(text: string): boolean {
  let depth = 0;
  for (let i = 0; i < text.length; i += 1) {
    const c = text.charAt(i);
    if (c === "\\") i += 1;
    else if (c === "(") depth += 1;
    else if (c === ")" && --depth < 0) return false;
  }
  return depth === 0;
}

function mcpTarget(name: string, specifier: string | undefined): Result<RuleTarget, string> {
  if (!MCP_NAME.test(name) || name === "mcp__") {
    return err("is not an MCP tool name; write mcp__server, mcp__server__tool or mcp__server__*");
  }
  if (specifier !== undefined) return err("MCP rules take no specifier; write mcp__server__tool alone");
  // Two segments (`mcp__github`) cover every tool of that server, as in Claude Code.
  const pattern = name.split("__").length === 2 && !name.includes("*") ? `${name}__*` : name;
  return ok({ kind: "mcp", pattern: compileGlob(pattern) });
}

function toolTarget(name: string, specifier: string | undefined): Result<RuleTarget, string> {
  if (!TOOL_NAME.test(name)) {
    const meant = specifier === undefined ? meantRule(name) : undefined;
    return err(
      `"${name}" is not a tool name; a tool name is letters, digits, "_" and "-" (Bash, Read, mcp__server__tool)${meant === undefined ? "" : `: write "${meant}"`}`,
    );
  }
  const pathTools = Object.hasOwn(PATH_RULE_TOOLS, name) ? PATH_RULE_TOOLS[name] : undefined;
  if (pathTools !== undefined && specifier !== undefined) {
    // In NFC, as the paths it is matched against (pathsOf).
    const pattern = parsePathPattern(specifier.normalize("NFC"));
    return pattern.ok ? ok({ kind: "path", tools: new Set(pathTools), pattern: pattern.value }) : pattern;
  }
  // Claude Code documents `Bash(*)` as the same rule as `Bash`.
  if (specifier === undefined || specifier.trim() === "*") return ok({ kind: "tool", name });
  if (name === "Bash") return bashTarget(specifier);
  if (name === "WebFetch") return domainTarget(specifier);
  if (name === "WebSearch")
    return ok({ kind: "text", tool: name, field: "query", pattern: compileGlob(specifier) });
  // Other tools have no specifier grammar in Claude Code. We match it against a string
  // `command`, the one input field whose meaning is the same across agent tools, and nothing else.
  return ok({ kind: "text", tool: name, field: "command", pattern: compileGlob(specifier) });
}

/** The tools whose rules read a specifier. */
const SPECIFIER_TOOLS: readonly string[] = ["Bash", "WebFetch", "WebSearch", ...Object.keys(PATH_RULE_TOOLS)];
/**
 * Those tools by their name in lower case, but for the ones a shell command is named as (`ls`,
 * `grep`, `bash`): `read ~/.ssh` means the Read tool, `ls -la` the command.
 */
const SPECIFIER_TOOL_BY_LOWER: ReadonlyMap<string, string> = new Map(
  SPECIFIER_TOOLS.filter((tool) => !["Bash", "LS", "Grep"].includes(tool)).map((tool) => [
    tool.toLowerCase(),
    tool,
  ]),
);

/**
 * The folders at the top of a macOS or Linux file system that no project holds by those names.
 * Not lib, bin, tmp, var, dev, home, root, srv or private: many projects have one (a Rails app's
 * bin, lib, tmp; a Symfony app's var), and a deny of `Edit(/lib/**)` written for it would be told
 * to become `Edit(//lib/**)`, which no longer covers the project's folder.
 */
export const SYSTEM_FOLDER = /^\/(?:etc|usr|opt|sbin|proc|sys|mnt|Users|Volumes)(?:\/|$)/;

/**
 * The rule a first policy's entry without parentheses means: a tool that reads a specifier and
 * its specifier after a space or a colon (`Bash rm -rf *`, `Bash:rm *`, `read ~/.ssh`), or a bare
 * command, which starts with a lower-case word where a tool name starts with a capital (`rm -rf *`,
 * `git push *`). A system folder after one "/" is the system's (`Read:/etc/passwd`), which a rule
 * writes with two: `Read(/etc/passwd)` names the project's etc/passwd, and check says so.
 */
function meantRule(text: string): string | undefined {
  const [, word = "", rest] = /^([^\s:]+)(?:\s+|:)(.+)$/s.exec(text) ?? [];
  const tool = SPECIFIER_TOOLS.includes(word) ? word : SPECIFIER_TOOL_BY_LOWER.get(word);
  const specifier = rest?.trim() ?? "";
  const absolute =
    tool !== undefined && Object.hasOwn(PATH_RULE_TOOLS, tool) && SYSTEM_FOLDER.test(specifier);
  const meant =
    rest !== undefined && tool !== undefined
      ? `${tool}(${absolute ? "/" : ""}${domainFor(tool, specifier)})`
      : /^[a-z][\w.-]*\s/.test(text)
        ? `Bash(${text})`
        : undefined;
  // Only a rule that loads is told: `WebFetch example.com` was told "WebFetch(example.com)", an
  // error of its own.
  return meant !== undefined && parsePermissionRule(meant).ok ? meant : undefined;
}

/** A WebFetch specifier written as a bare host (`example.com`) is its `domain:` rule's. */
const domainFor = (tool: string, specifier: string) =>
  tool === "WebFetch" && !specifier.startsWith("domain:") ? `domain:${specifier}` : specifier;

// ---------------------------------------------------------------------------------------------
// Command globs: `*` matches any run of characters, matched without backtracking.
// ---------------------------------------------------------------------------------------------

/** A `*` glob as its literal pieces: the text is segments[0] * segments[1] * ... */
interface Glob {
  readonly segments: readonly string[];
  /** A trailing ` *` also matches the bare command: `ls *` matches `ls` (Claude Code). */
  readonly optionalTail: boolean;
}

/** Markers for escaped characters while the specifier passes through the shell tokenizer. */
const LITERAL_STAR = "\uE001";
const LITERAL_BACKSLASH = "\uE002";

/** `\*` is a literal star and `\\` a literal backslash, as in Claude Code's rule syntax. */
function protectEscapes(text: string): string {
  return text
    .replace(/[\uE001\uE002]/g, "\uFFFD")
    .replace(/\\([*\\])/g, (_, c: string) => (c === "*" ? LITERAL_STAR : LITERAL_BACKSLASH));
}

function compileGlob(text: string): Glob {
  const collapsed = collapse(protectEscapes(text));
  return globFromProtected(collapsed);
}

function globFromProtected(text: string): Glob {
  const restore = (s: string) => s.replaceAll(LITERAL_STAR, "*").replaceAll(LITERAL_BACKSLASH, "\\");
  return { segments: text.split("*").map(restore), optionalTail: text.endsWith(" *") };
}

function bashTarget(specifier: string): Result<RuleTarget, string> {
  // The legacy `prefix:*` means `prefix *` (Claude Code keeps it for old settings files).
  const modern = specifier.trimEnd().endsWith(":*") ? `${specifier.trimEnd().slice(0, -2)} *` : specifier;
  const canonical = canonicalCommandPattern(protectEscapes(modern));
  if (canonical === undefined) return err(SHELL_ENGINE_MISSING);
  if (canonical === "") return err("has a specifier that is empty once quotes are removed");
  return ok({ kind: "bash", pattern: globFromProtected(canonical) });
}

function collapse(text: string): string {
  return text.replace(/\s+/g, " ").trim();
}

/** Whether `text` matches the whole glob. Linear in practice: each literal piece is found once, leftmost. */
function globMatches(glob: Glob, text: string): boolean {
  if (matchSegments(glob.segments, text)) return true;
  if (!glob.optionalTail) return false;
  const head = glob.segments.slice(0, -1);
  const last = head[head.length - 1] ?? "";
  return matchSegments([...head.slice(0, -1), last.slice(0, -1)], text);
}

function matchSegments(segments: readonly string[], text: string): boolean {
  const first = segments[0] ?? "";
  if (segments.length === 1) return text === first;
  const last = segments[segments.length - 1] ?? "";
  if (text.length < first.length + last.length || !text.startsWith(first) || !text.endsWith(last))
    return false;
  let at = first.length;
  const end = text.length - last.length;
  for (const middle of segments.slice(1, -1)) {
    const found = text.indexOf(middle, at);
    if (found < 0 || found + middle.length > end) return false;
    at = found + middle.length;
  }
  return true;
}

// ---------------------------------------------------------------------------------------------
// Path patterns: gitignore-style anchors resolved against the event's cwd and home.
// ---------------------------------------------------------------------------------------------

type Anchor = "root" | "home" | "project" | "cwd" | "anywhere";

interface PathPattern {
  readonly anchor: Anchor;
  /** `..` segments at the start of the pattern, applied to the anchor directory. */
  readonly up: number;
  /**
   * Whether the path relative to the anchor, or a directory above it, matches
   * (compileCoveringGlob); undefined matches the anchor directory and all in it.
   */
  readonly glob: PathGlobTest | undefined;
  /** The same, ignoring case: what deny-style rules use (see matchesPath). */
  readonly globNocase: PathGlobTest | undefined;
}

/**
 * Longer paths fail with ENAMETOOLONG on Linux and macOS, so they can reach no file to protect.
 * Windows opens paths up to 32,767 characters (Node passes them as `\\?\` paths, with no
 * MAX_PATH), so a Windows client's limit is that.
 */
const MAX_PATH_LENGTH = 4096;
const WINDOWS_MAX_PATH_LENGTH = 32_767;
const maxPathLength = (windows: boolean) => (windows ? WINDOWS_MAX_PATH_LENGTH : MAX_PATH_LENGTH);

/** `!` and `#` are plain characters in a permission rule, never minimatch negation or comments. */
const MINIMATCH_OPTIONS = { dot: true, nonegate: true, nocomment: true, platform: "linux" } as const;

function parsePathPattern(specifier: string): Result<PathPattern, string> {
  const { anchor, rest } = classifyPath(specifier.trim());
  const normalized = normalizePath(withoutTrailingSlashes(rest.replace(/^\/+/, "")));
  const segments = normalized === "." ? [] : normalized.split("/");
  let up = 0;
  while (segments[up] === "..") up += 1;
  // `dir/**` is `dir`: a matched directory covers its contents (matchesUnder), and the directory
  // itself is what a Grep, Glob or LS of it names (Claude Code strips the `/**` too).
  while (segments.length > up && segments.at(-1) === "**") segments.pop();
  const remainder = segments.slice(up).join("/");
  if (remainder === "") return ok({ anchor, up, glob: undefined, globNocase: undefined });
  const text = anchor === "anywhere" ? `**/${remainder}` : remainder;
  const glob = compileCoveringGlob(text, MINIMATCH_OPTIONS);
  const globNocase = compileCoveringGlob(text, { ...MINIMATCH_OPTIONS, nocase: true });
  if (!glob.ok) return err(`has a path pattern that ${glob.error}`);
  if (!globNocase.ok) return err(`has a path pattern that ${globNocase.error}`);
  return ok({ anchor, up, glob: glob.value, globNocase: globNocase.value });
}

/**
 * Claude Code's anchors: `//abs` is absolute, `~/x` is in the home directory, `/x` is in the
 * project root (the event's cwd, and for deny-style rules also the directory the transcript's
 * folder names: projectRootsOf) and `./x` or `a/b` in the cwd. A pattern without a slash (a
 * trailing one aside) matches at any depth, as in gitignore, and so does `**\/x`.
 */
function classifyPath(spec: string): { anchor: Anchor; rest: string } {
  if (spec.startsWith("//")) return { anchor: "root", rest: spec.slice(2) };
  if (spec === "~" || spec.startsWith("~/")) return { anchor: "home", rest: spec.slice(2) };
  if (spec.startsWith("/")) return { anchor: "project", rest: spec.slice(1) };
  if (spec === "." || spec.startsWith("./")) return { anchor: "cwd", rest: spec.slice(2) };
  const body = withoutTrailingSlashes(spec);
  if (!body.includes("/")) return { anchor: "anywhere", rest: body };
  if (body.startsWith("**/")) return { anchor: "anywhere", rest: body.slice(3) };
  return { anchor: "cwd", rest: body };
}

// ---------------------------------------------------------------------------------------------
// Matching
// ---------------------------------------------------------------------------------------------

/** "any": deny-style rules (any subcommand matching is enough). "all": allow rules (every subcommand must match). */
export function matchesPermissionRule(
  rule: PermissionRule,
  call: ToolCall,
  quantifier: "any" | "all",
): boolean {
  const target = rule.target;
  const input = isRecord(call.toolInput) ? call.toolInput : {};
  // An entry that reads the input, of a call without it: matched by name alone, deny-style only.
  const unknown = call.inputMissing === true && quantifier === "any";
  switch (target.kind) {
    case "tool":
      return call.toolName === target.name;
    case "mcp":
      return globMatches(target.pattern, call.toolName);
    case "bash":
      return (
        call.toolName === "Bash" && (unknown || matchesCommand(target.pattern, input.command, quantifier))
      );
    case "path":
      return (
        target.tools.has(call.toolName) && (unknown || matchesPath(target.pattern, input, call, quantifier))
      );
    case "domain":
      return call.toolName === "WebFetch" && (unknown || matchesDomain(target, input.url));
    case "text": {
      const value = input[target.field];
      return (
        call.toolName === target.tool &&
        (unknown || (typeof value === "string" && globMatches(target.pattern, collapse(value))))
      );
    }
  }
}

/**
 * An allow rule's `if` list: one entry that allows the whole call, or, for a compound Bash
 * command, every subcommand allowed by some Bash entry (exactly as written; never an opaque
 * command), as Claude Code reads its allow list: `["Bash(npm test)", "Bash(npm run lint)"]`
 * allows `npm test && npm run lint`.
 */
export function allowListMatches(rules: readonly PermissionRule[], call: ToolCall): boolean {
  if (rules.some((r) => r.target.kind !== "bash" && matchesPermissionRule(r, call, "all"))) return true;
  if (call.toolName !== "Bash") return false;
  const patterns = bashPatternsOf(rules);
  const command = isRecord(call.toolInput) ? call.toolInput.command : undefined;
  return patterns.length > 0 && everySubcommandMatches(patterns, command);
}

/** A rule list's Bash patterns, gathered once per list (a policy rule's `if` list lives as long as its policy). */
const bashPatterns = new WeakMap<readonly PermissionRule[], readonly Glob[]>();
function bashPatternsOf(rules: readonly PermissionRule[]): readonly Glob[] {
  let patterns = bashPatterns.get(rules);
  if (patterns === undefined) {
    patterns = rules.flatMap((r) => (r.target.kind === "bash" ? [r.target.pattern] : []));
    bashPatterns.set(rules, patterns);
  }
  return patterns;
}

/**
 * Every `if` rule of every policy rule checks the same command of one event in turn; splitting
 * it once instead of once per pattern is most of a decision's cost (bench/HISTORY.md).
 */
const keptSplit = keepLast(splitCommand);
function splitOnce(command: string): CommandSplit {
  // Without the splitter (shell.ts: never asked for before a Bash rule loads it), fail safe as for
  // a command that cannot be read; keepLast keeps no such answer, and it may be loaded next call.
  return keptSplit(command) ?? { subcommands: [], wrappers: [], opaque: true, unreadable: true };
}

/**
 * An allow rule ("all") must match every subcommand exactly as written, and never approves an
 * opaque command. A deny rule ("any") needs one match, and also accepts a subcommand without
 * its redirections or with its command path dropped (`/bin/rm -rf / 2>/dev/null`), so those
 * spellings cannot slip past it.
 *
 * A command too long to split (MAX_COMMAND_LENGTH) fails safe: padding could hide any
 * subcommand behind quotes or a substitution, so every deny-style pattern matches it and no
 * allow pattern does. Matching it as unknown (false) instead would let `r''m -rf /` plus
 * 16 KB of padding past a `Bash(rm -rf *)` deny. So does a command with a program that cannot
 * be named (shell-command.ts `unreadable`: `$a -rf /`, `echo 'rm -rf /' | bash`, nesting past
 * what is followed).
 */
function matchesCommand(pattern: Glob, command: unknown, quantifier: "any" | "all"): boolean {
  if (quantifier === "all") return everySubcommandMatches([pattern], command);
  if (typeof command !== "string") return false;
  // Over MAX_COMMAND_LENGTH the split is unreadable, with no subcommands.
  const split = splitOnce(command);
  return split.unreadable || someSubcommandMatches(pattern, split);
}

/**
 * Deny-style: one subcommand matches, as written or in one of its variants, or a wrapper read
 * past with what it runs (`Bash(nohup *)` against `nohup make`).
 */
function someSubcommandMatches(pattern: Glob, split: CommandSplit): boolean {
  return (
    split.subcommands.some(
      (s) => globMatches(pattern, s.text) || s.variants.some((v) => globMatches(pattern, v)),
    ) || split.wrappers.some((w) => globMatches(pattern, w))
  );
}

/**
 * Whether a Bash rule matches one of the command's subcommands as read, leaving out the
 * fail-safe match of a command that cannot be read (for the note that says a rule applied for
 * that reason alone). False for a rule of another kind.
 */
export function matchesReadCommand(rule: PermissionRule, command: unknown): boolean {
  if (rule.target.kind !== "bash" || typeof command !== "string") return false;
  return someSubcommandMatches(rule.target.pattern, splitOnce(command));
}

/** A Bash command of which some program cannot be named (shell-command.ts `unreadable`). */
export function isUnreadableCommand(command: unknown): boolean {
  return typeof command === "string" && splitOnce(command).unreadable;
}

/**
 * Whether an allow pattern approves one subcommand. Its redirections are read apart: one that
 * writes to a file (`echo x > ~/.bashrc`) is approved only by a pattern that names that
 * redirection word for word, never by a `*` reaching over it (`Bash(echo *)`, or
 * `Bash(echo * 2>/dev/null)`); harmless ones (`2>&1`, `>/dev/null`) may be left out of the
 * pattern (`Bash(npm test)` approves `npm test 2>&1`).
 */
function allowMatches(pattern: Glob, subcommand: Subcommand): boolean {
  const writes = subcommand.writes;
  if (writes !== undefined)
    return (
      writes.every((w) => pattern.segments.some((s) => s.includes(w))) &&
      globMatches(pattern, subcommand.text)
    );
  // Harmless redirections alone (`{ npm test; } 2>&1`) run nothing.
  if (subcommand.bare === "") return true;
  return (
    globMatches(pattern, subcommand.text) ||
    (subcommand.bare !== undefined && globMatches(pattern, subcommand.bare))
  );
}

/** Allow-style: a readable, transparent command whose every subcommand, as written, one pattern matches. */
function everySubcommandMatches(patterns: readonly Glob[], command: unknown): boolean {
  if (typeof command !== "string") return false;
  const split = splitOnce(command);
  if (split.opaque || split.subcommands.length === 0) return false;
  return split.subcommands.every((s) => s.denyOnly || patterns.some((p) => allowMatches(p, s)));
}

/**
 * The word every command this rule matches starts with, when its pattern names one: the literal
 * text before the first space of a Bash pattern whose first word has no `*` (`git push *` → `git`).
 * Undefined for any other rule. A command whose subcommands (and their wrapper-stripped
 * variants) start with none of a rule's words cannot match it: evaluation skips the globs.
 */
export function commandWordOf(rule: PermissionRule): string | undefined {
  if (rule.target.kind !== "bash") return undefined;
  const segments = rule.target.pattern.segments;
  const first = segments[0] ?? "";
  const space = first.indexOf(" ");
  if (space > 0) return first.slice(0, space);
  return segments.length === 1 && first !== "" ? first : undefined;
}

/**
 * The first words of a Bash command's subcommands, of their variants and of the wrappers read
 * past, from the same split the patterns are matched against; undefined when the command is not a
 * string or too long to be read (over MAX_COMMAND_LENGTH, or unreadable, every pattern counts as
 * matching, so nothing may be skipped).
 */
export function commandWords(command: unknown): ReadonlySet<string> | undefined {
  if (typeof command !== "string") return undefined;
  const split = splitOnce(command);
  if (split.unreadable) return undefined;
  const words = new Set<string>();
  const add = (text: string) => {
    const space = text.indexOf(" ");
    words.add(space < 0 ? text : text.slice(0, space));
  };
  for (const s of split.subcommands) {
    add(s.text);
    for (const v of s.variants) add(v);
  }
  for (const w of split.wrappers) add(w);
  return words;
}

function matchesDomain(target: { domain: string; subdomainsOnly: boolean }, url: unknown): boolean {
  if (typeof url !== "string") return false;
  const host = hostOf(url);
  if (host === "") return false;
  return target.subdomainsOnly ? host.endsWith(`.${target.domain}`) : host === target.domain;
}

/**
 * A URL's host, lower case, without a trailing dot; empty when it does not parse. Kept for the
 * last URL asked: a policy's WebFetch rules read the same call's URL one after another (parsing
 * 1 MB of host once per rule took 0.7 s).
 */
const hostOf = keepLast((url: string): string => {
  try {
    return new URL(url).hostname.toLowerCase().replace(/\.$/, "");
  } catch {
    return "";
  }
});

/** `domain:example.com` or `domain:*.example.com`; the host is normalized as URL would (IDNA, case). */
function domainTarget(specifier: string): Result<RuleTarget, string> {
  const match = /^domain:(.+)$/.exec(specifier.trim());
  if (!match) return err("WebFetch rules take domain:HOST, such as WebFetch(domain:example.com)");
  const raw = (match[1] as string).trim().toLowerCase();
  const subdomainsOnly = raw.startsWith("*.");
  const host = subdomainsOnly ? raw.slice(2) : raw;
  if (host === "" || /[*/?#@:\\\s[\]]/.test(host)) {
    return err(`"${raw}" is not a host name; write domain:example.com or domain:*.example.com`);
  }
  let domain: string;
  try {
    domain = new URL(`http://${host}`).hostname.replace(/\.$/, "");
  } catch {
    return err(`"${raw}" is not a host name; write domain:example.com or domain:*.example.com`);
  }
  return ok({ kind: "domain", domain, subdomainsOnly });
}

/** The fields a path tool names its file or directory in. */
const PATH_FIELDS = ["file_path", "notebook_path", "path"] as const;

/**
 * Whether the call's path matches. Deny-style rules ("any") fail safe: every path field the
 * call carries is checked, case is ignored (macOS and Windows file systems ignore it by default,
 * so `.ENV` is `.env` there), and a `~/..` path whose home is unknown matches. Allow rules
 * ("all") need every path field to match exactly, and read `~` only where the home is known or
 * the path itself still says `~/`.
 */
function matchesPath(
  pattern: PathPattern,
  input: Readonly<Record<string, unknown>>,
  call: ToolCall,
  quantifier: "any" | "all",
): boolean {
  const deny = quantifier === "any";
  const holds = (read: CallPaths): boolean => {
    const { paths, allowPaths, led, home, projectFolder, maxLength } = read;
    const cwd = deny ? read.denyCwd : read.cwd;
    if (paths.length === 0) return false;
    const matches = (path: string | undefined, from = cwd): boolean => {
      if (path === undefined) return deny; // `~/..` with no home: it could be anywhere
      if (path.length > maxLength) return false; // no file the client can open
      return anchorBases(pattern.anchor, path, from, home, deny, projectFolder).some((base) =>
        matchesUnder(pattern, path, base, deny),
      );
    };
    if (deny) return paths.some((path) => matches(path));
    // On a Windows client a path through a legacy junction opens where it leads, which deny-style
    // rules read; an allow rule approves it only as written and there too, so `Edit(//c/Users/**)`
    // approves no `C:\Users\All Users\x` (`C:\ProgramData\x`).
    if (!allowPaths.every((path) => matches(path))) return false;
    return led === undefined || led.paths.every((path) => matches(path, led.cwd));
  };
  const opened = pathsOf(input, call, true, true);
  // A deny-style rule also reads a Windows path with its trailing dots and spaces kept, as Node
  // opens it: `.env.` is then a file named `.env.`, which `**/.env.*` names.
  if (deny) return holds(opened) || (opened.trimmed && holds(pathsOf(input, call, true, false)));
  // A cwd, transcript path or pattern not in NFC is the same folder as its NFC form on macOS
  // alone: on Linux and Windows (NTFS keeps a name's code points) `cafe\u0301` and `café` are two
  // folders. A segment's trailing dots and spaces are dropped where Win32 opens the path, but
  // kept where it is not normalized (Node on Windows writes `src.\x` into a folder `src.`). An
  // allow rule approves only what every reading approves, so `Edit(./**)` from a cwd in NFD
  // approves no file in its NFC twin, and `Edit(./src/**)` no `src.\x`.
  const forms = opened.normalized ? [true, false] : [true];
  const trims = opened.trimmed ? [true, false] : [true];
  return forms.every((nfc) => trims.every((trim) => holds(pathsOf(input, call, nfc, trim))));
}

interface CallPaths {
  readonly input: Readonly<Record<string, unknown>>;
  readonly call: ToolCall;
  /**
   * Each path field the call carries and a Glob's `pattern` (globPatternPaths), resolved
   * (`resolvePath`); undefined where it cannot be.
   */
  readonly paths: readonly (string | undefined)[];
  /** The path fields as an allow rule reads them, and a Glob's listing directories (globListRoots). */
  readonly allowPaths: readonly (string | undefined)[];
  readonly cwd: string | undefined;
  /** The cwd as deny-style rules read it: with the home's name where it stands short (longHomePath). */
  readonly denyCwd: string | undefined;
  readonly home: string | undefined;
  /** The transcript's project folder as a POSIX path's would be spelt (projectFolderOf). */
  readonly projectFolder: string | undefined;
  /** The longest path the client's system opens (maxPathLength). */
  readonly maxLength: number;
  /** Whether reading the call's cwd, transcript path, Glob pattern or Grep glob in NFC changed one. */
  readonly normalized: boolean;
  /** Whether dropping a segment's trailing dots and spaces (posixPath) changed one of its texts. */
  readonly trimmed: boolean;
  /**
   * On a Windows client, the allow paths and the cwd through the legacy junctions they pass
   * (throughJunctions), where that changed one; an allow rule must approve them there too.
   */
  readonly led:
    | { readonly paths: readonly (string | undefined)[]; readonly cwd: string | undefined }
    | undefined;
}

/**
 * The call's paths, cwd and home, worked out once per call rather than once per rule: a policy's
 * path rules are checked one after another against the same call (as `splitOnce` does for Bash).
 * One per reading: in NFC or as given, with a Windows path's trailing dots and spaces dropped or
 * kept (for allow rules, see matchesPath).
 */
const memoPaths: (CallPaths | undefined)[] = [];

function pathsOf(
  input: Readonly<Record<string, unknown>>,
  call: ToolCall,
  nfc: boolean,
  trim: boolean,
): CallPaths {
  const slot = (nfc ? 0 : 1) + (trim ? 0 : 2);
  const memo = memoPaths[slot];
  if (memo !== undefined && memo.call === call && memo.input === input) return memo;
  const drive = windowsRoot(call);
  let normalized = false;
  let trimmed = false;
  const asPosix = (text: string): string => {
    const form = posixPath(text, drive, trim);
    if (trim && !trimmed && drive !== undefined && form !== posixPath(text, drive, false)) trimmed = true;
    return form;
  };
  const inNfc = (text: string): string => {
    if (!nfc) return text;
    const form = text.normalize("NFC");
    if (form !== text) normalized = true;
    return form;
  };
  // In NFC, as the tool's paths (below): macOS gives a directory's name as it was created, which
  // may be NFD, and a cwd in NFD anchored no path in NFC.
  const transcriptPath = typeof call.transcriptPath === "string" ? inNfc(call.transcriptPath) : undefined;
  const home = inferHome(transcriptPath === undefined ? undefined : asPosix(transcriptPath));
  // On a Windows client `..` stops at the drive (`/c/..` is `/c`) or the share, as Windows reads it.
  const floor = drive === undefined ? 0 : 1;
  // Unknown where a Windows client's cwd names no directory that can be read from it.
  const rawCwd =
    typeof call.cwd !== "string" || (drive !== undefined && unreadableOnWindows(call.cwd, drive))
      ? undefined
      : asPosix(inNfc(call.cwd));
  // A cwd through an 8.3 short name (read below) makes each path read from it unknown too: after
  // an agent's `cd SSH~1` in Git Bash, `id_rsa` is `.ssh\id_rsa`. Where the short name is the
  // home's own (longHomePath), deny-style rules read it as the home, and allow rules approve none.
  const cwdShort = drive !== undefined && rawCwd?.split("/").some(isShortName) === true;
  const longCwd = cwdShort && rawCwd !== undefined ? longHomePath(rawCwd, home) : undefined;
  const shortCwd = cwdShort && longCwd === undefined;
  const cwd = rawCwd?.startsWith("/") ? openPath(rawCwd, floor, false) : undefined;
  const denyCwd = longCwd === undefined ? cwd : openPath(longCwd, floor, false);
  const opened = (path: string) => resolvePath(path, denyCwd, home, floor, { cwd: denyCwd, deny: true });
  // A cwd on a server with a one-letter name (`\\c\share`) reads as on drive C:, and its `..` stops
  // at the drive: deny-style rules also read each path field with `..` stopping at the share (a
  // Glob pattern with a `..` is unknown), and allow rules approve nothing there (they could
  // approve a file on C:).
  const letterShare = drive !== undefined && ONE_LETTER_SHARE.test(drive);
  /**
   * A path's text as an allow rule reads it (the file it opens; unknown through a cwd link, whose
   * process may stand elsewhere, and for a UNC path, which no drive rule names) and every reading a
   * deny-style rule takes: that file, the path as written, and on a Windows client the other
   * files its spelling may name.
   */
  const read = (text: string): { allow: string | undefined; deny: (string | undefined)[] } => {
    if (drive !== undefined && unreadableOnWindows(text, drive))
      return { allow: undefined, deny: [undefined] };
    const posix = asPosix(text);
    const fromCwd = !posix.startsWith("/") && posix !== "~" && !posix.startsWith("~/");
    if (drive !== undefined && posix.split("/").some(isShortName)) {
      // Unknown, unless its one short name is the home's (longHomePath): deny-style rules read
      // that. Not in Git Bash's `/c/x`, also read as `\c\x`, where the short name is elsewhere.
      const long = fromCwd || /^\/[A-Za-z]\//.test(text) ? undefined : longHomePath(posix, home);
      if (long === undefined) return { allow: undefined, deny: [undefined] };
      return { allow: undefined, deny: read(`${long.charAt(1)}:${long.slice(2)}`).deny };
    }
    if (shortCwd && fromCwd) return { allow: undefined, deny: [undefined] };
    // A share on a one-letter server reads as drive C: to the rules: which file it is is unknown,
    // unless the cwd is on one, whose client's every path is read both ways (below).
    if (!letterShare && ONE_LETTER_SHARE.test(posix)) return { allow: undefined, deny: [undefined] };
    const deny = [opened(posix)];
    const written = resolvePath(posix, denyCwd, home, floor, false);
    if (written !== deny[0]) deny.push(written);
    if (letterShare) deny.push(resolvePath(posix, denyCwd, home, 2, { cwd: denyCwd, deny: true }));
    // A UNC path names no drive, so no drive's rule covers it; a path on the cwd's share is read.
    const unc = drive !== undefined && posix.startsWith("//") && !`${posix}/`.startsWith(`${drive}/`);
    const allow =
      unc || letterShare || (cwdShort && fromCwd)
        ? undefined
        : resolvePath(posix, cwd, home, floor, ALLOW_LINKS);
    if (drive !== undefined) {
      // Git Bash's `/c/x` is `C:\x` to Claude Code, `\c\x` on the cwd's drive to a tool that
      // takes it as written.
      if (/^\/[A-Za-z]\//.test(text)) deny.push(opened(`${drive}${text}`));
      // An admin share (`\\host\C$\x`) is `C:\x` on that host, which may be this one by a name or
      // an address the client knows it by.
      const shared = sharedPath(text);
      if (shared !== undefined) deny.push(opened(asPosix(shared)));
      // A WSL distribution's share (`\\wsl$\Ubuntu\x`, or `x` from a cwd there) is `/x` in it,
      // opened as Linux opens it (its /proc too), and `/mnt/c/x` there is `C:\x`, through the
      // drive's legacy junctions as Windows opens it.
      const full = posix.startsWith("/") || rawCwd === undefined ? posix : `${rawCwd}/${posix}`;
      const wsl = WSL_SHARE.exec(full);
      if (wsl !== null) {
        const linux = openPath(full.slice(wsl[0].length), 0, { cwd: undefined, deny: true });
        const mounted = linux?.replace(/^\/mnt(?=\/[a-z](?:\/|$))/i, "");
        deny.push(linux, mounted);
        if (mounted !== linux && mounted !== undefined) deny.push(throughJunctions(mounted));
      }
    }
    return { allow, deny };
  };
  const paths: (string | undefined)[] = [];
  let allowPaths: (string | undefined)[] = [];
  // A Glob's directories: its `path`'s readings when it has one.
  let roots: (string | undefined)[] | undefined;
  for (const field of PATH_FIELDS) {
    const value = input[field];
    if (typeof value !== "string" || value === "") continue;
    // As Claude Code's expandPath reads a path before it opens it: trimmed, in NFC.
    const { allow, deny } = read(value.trim().normalize("NFC"));
    paths.push(...deny);
    allowPaths.push(allow);
    if (field === "path") roots = deny;
  }
  if (call.toolName === "Glob" && typeof input.pattern === "string" && input.pattern !== "") {
    const fromCwd = typeof input.path !== "string" || input.path === "";
    const root = fromCwd ? (cwdShort ? undefined : cwd) : allowPaths.at(-1);
    if (fromCwd && shortCwd) paths.push(undefined);
    const windows = drive !== undefined;
    // ripgrep matches a pattern byte for byte: one in NFD lists the files whose names are stored
    // in NFD, which the rules (in NFC) cover as the same files, as macOS opens them.
    const text = inNfc(input.pattern);
    const pattern = asPosix(text);
    // From a cwd on a one-letter server no allow rule approves, and a `..` may stop at the share.
    const listed = letterShare ? [undefined] : globListRoots(text, pattern, windows, root, cwd, home);
    allowPaths = [...allowPaths, ...listed];
    // Under every reading of its root, and of its own text where that names a share, or a WSL
    // distribution's (as its Linux path too).
    const shared = windows ? sharedPath(text) : undefined;
    const patterns = shared === undefined ? [pattern] : [pattern, asPosix(shared)];
    // A folder spelt as an 8.3 short name (`C:\PROGRA~1\**`) is opened as the long name it stands
    // for, which the pattern does not tell: unknown, as a path field's (read), unless it is the
    // home's own (longHomePath), read as the home.
    if (windows && pattern.split("/").some(isShortName)) {
      const long = /^\/[A-Za-z]\//.test(text) ? undefined : longHomePath(pattern, home);
      if (long === undefined) paths.push(undefined);
      else patterns.push(long);
    }
    const wsl = windows ? WSL_SHARE.exec(pattern) : null;
    if (wsl !== null) patterns.push(pattern.slice(wsl[0].length) || "/");
    if (
      windows &&
      (unreadableOnWindows(text, drive) ||
        ONE_LETTER_SHARE.test(pattern) ||
        (letterShare && /(?:^|\/)\.\.(?:\/|$)/.test(pattern)))
    )
      paths.push(undefined);
    paths.push(...globReadings(patterns, windows, roots, denyCwd, home, floor));
  }
  // A Grep's `glob` names the files whose lines it prints, as a Glob's pattern names those it
  // lists: deny-style rules read each of its globs the same way. It only narrows the search under
  // the Grep's `path`, which an allow rule must cover; with no `path` none approves it.
  if (call.toolName === "Grep" && typeof input.glob === "string") {
    if (allowPaths.length === 0) allowPaths.push(undefined);
    if (roots === undefined && shortCwd) paths.push(undefined);
    const globs = grepGlobs(inNfc(input.glob));
    // More than a search names files by, each checked against every path rule: unknown.
    if (globs.length > MAX_GREP_GLOBS) paths.push(undefined);
    else {
      const texts = globs.map((glob) => asPosix(glob));
      paths.push(...globReadings(texts, drive !== undefined, roots, denyCwd, home, floor));
    }
  }
  const projectFolder = projectFolderOf(transcriptPath, drive !== undefined);
  const reading: CallPaths = {
    input,
    call,
    paths,
    allowPaths,
    cwd,
    denyCwd,
    home,
    projectFolder,
    maxLength: maxPathLength(drive !== undefined),
    normalized,
    trimmed,
    led: drive === undefined ? undefined : junctionReading(allowPaths, cwd),
  };
  memoPaths[slot] = reading;
  return reading;
}

/**
 * A Glob call's `pattern` as deny-style rules read it: the paths it names, resolved against the
 * call's `path` (or the cwd) with its wildcards kept as characters, so `~/.ssh/*` is
 * `/home/dev/.ssh/*`, which `~/.ssh/**` covers. Read as the Glob tool (ripgrep's `--glob`) reads
 * it: a pattern with no `/` matches at any depth (`*.md` is `**\/*.md`), one that starts with `!`
 * names everything but a few (`**`), `**` also matches no directory (so `**\/.env` is also
 * `.env`), and a backslash escapes the next character on a POSIX client. Longer than any path can
 * be once repeated `**` are folded, it is unknown, as a `~/..` with no home is.
 */
function globPatternPaths(
  pattern: string,
  windows: boolean,
  root: string | undefined,
  cwd: string | undefined,
  home: string | undefined,
  floor: number,
): (string | undefined)[] {
  let body = pattern.startsWith("!") ? "**" : windows ? pattern : pattern.replace(/\\(.)/g, "$1");
  if (!withoutTrailingSlashes(body).includes("/")) body = `**/${body}`;
  body = body.replace(/(?:^|\/)\*\*(?:\/\*\*)+(?=\/|$)/g, (run) => (run.startsWith("/") ? "/**" : "**"));
  const anchored = body.startsWith("/") || body === "~" || body.startsWith("~/");
  const full = anchored || root === undefined ? body : `${root}/${body}`;
  if (full.length > MAX_PATH_LENGTH) return [undefined];
  // As the files it names and as written, each also without its `**/`.
  const readings = [full, full.replace(/(^|\/)\*\*\//g, "$1")].flatMap((text) => [
    resolvePath(text, cwd, home, floor, { cwd, deny: true }),
    resolvePath(text, cwd, home, floor, false),
  ]);
  return [...new Set(readings)];
}

/**
 * A Glob's patterns or a Grep's globs as deny-style rules read them (globPatternPaths), under each
 * reading of the call's `path` (`roots`), or the cwd without one. One with a `/` also under the
 * cwd: ripgrep anchors it at its own directory rather than at the path it searches (`src/.env`
 * with `path: "src"` names `src/.env`), while one without is a name at any depth under the path.
 */
function globReadings(
  patterns: readonly string[],
  windows: boolean,
  roots: readonly (string | undefined)[] | undefined,
  cwd: string | undefined,
  home: string | undefined,
  floor: number,
): (string | undefined)[] {
  const paths: (string | undefined)[] = [];
  for (const pattern of patterns) {
    const anchored =
      roots !== undefined && cwd !== undefined && withoutTrailingSlashes(pattern).includes("/");
    for (const base of anchored ? [...roots, cwd] : (roots ?? [cwd])) {
      // A `path` that names no known directory (`~/..` with no home): the pattern could be anywhere.
      if (base === undefined && roots !== undefined) paths.push(undefined);
      else paths.push(...globPatternPaths(pattern, windows, base, cwd, home, floor));
    }
  }
  return paths;
}

/** More globs than a Grep names files by: past it, which files it reads is not worked out. */
const MAX_GREP_GLOBS = 64;

/**
 * The globs a Grep's `glob` passes to ripgrep, as Claude Code's Grep tool splits it: at white
 * space, and a word without a brace list also at its commas (`*.ts,.env`). An exclusion (`!x`)
 * only leaves files out of the search its `path` already names.
 */
function grepGlobs(glob: string): string[] {
  return glob
    .split(/\s+/)
    .flatMap((word) => (word.includes("{") && word.includes("}") ? [word] : word.split(",")))
    .filter((word) => word !== "" && !word.startsWith("!"));
}

/**
 * A Glob call's `pattern` as an allow rule reads it: the directory under which it may list any
 * file, which the rule must cover whole. That is the pattern's leading segments with no
 * wildcard, escape, class, brace or parenthesis in them, and never its last one: ripgrep matches
 * a name with no `/` at any depth, and a Claude Code version may anchor the rest of a pattern
 * elsewhere. A rule's own wildcards then never match a pattern's `*` as a character (`src/?.md`
 * does not cover `src/*.md`), and a class holding `/` or `..` (`[/../src/]*`) reads as the
 * directory before it. A pattern starting with `!` or `#` (every file: a negation, a comment to
 * ripgrep) lists the whole root; one starting with `~` is unknown (the tool may not expand it).
 * One starting with `/` is read both as an absolute path and under the root: ripgrep anchors it
 * at its own directory, which Claude Code versions set to the cwd or the path. From a Windows
 * client (`raw` as sent, `pattern` as posixPath reads it) an absolute pattern is never allowed,
 * since its drive is added here but ripgrep anchors it at its own directory, and in a relative one
 * ripgrep may read a `\` as an escape, not a separator, so nothing of it is plain.
 */
function globListRoots(
  raw: string,
  pattern: string,
  windows: boolean,
  root: string | undefined,
  cwd: string | undefined,
  home: string | undefined,
): (string | undefined)[] {
  if (windows && /^(?:[\\/]|[A-Za-z]:)/.test(raw)) return [undefined];
  if (windows && raw.includes("\\")) return [root];
  if (pattern.startsWith("~") || root === undefined) return [undefined];
  const segments = /^[!#]/.test(pattern) ? [] : pattern.split("/");
  let plain = 0;
  while (plain < segments.length - 1 && !GLOB_SYNTAX.test(segments[plain] as string)) plain += 1;
  const prefix = segments.slice(0, plain).join("/");
  const dirs = prefix === "" ? [root] : [`${root}/${prefix}`];
  if (pattern.startsWith("/")) dirs.push(prefix || "/");
  return dirs.map((dir) =>
    dir.length > MAX_PATH_LENGTH ? undefined : resolvePath(dir, cwd, home, windows ? 1 : 0, ALLOW_LINKS),
  );
}

/** What makes a segment of a Glob pattern more than a plain name. */
const GLOB_SYNTAX = /[*?[\]{}()\\!#~]/;

/** A Windows drive path: a drive letter, a colon and a separator. */
const WINDOWS_PATH = /^[A-Za-z]:[\\/]/;

/**
 * A Windows client's root as posixPath reads it: its cwd's drive (`/c`) or share
 * (`//server/share`, a UNC or WSL cwd), C: where the cwd names neither. Undefined for a POSIX
 * client. A client is on Windows when its cwd is a drive or UNC path, or, with no absolute POSIX
 * cwd, its transcript (under the Windows home, even for a WSL cwd) a drive path.
 */
function windowsRoot(call: ToolCall): string | undefined {
  const cwd = typeof call.cwd === "string" ? call.cwd : "";
  const transcript = typeof call.transcriptPath === "string" ? call.transcriptPath : "";
  const windows =
    WINDOWS_PATH.test(cwd) ||
    cwd.startsWith("\\\\") ||
    (!cwd.startsWith("/") && WINDOWS_PATH.test(transcript));
  if (!windows) return;
  return /^\/(?:[a-z]|\/[^/]+\/[^/]+)(?=\/|$)/.exec(posixPath(cwd, "/c"))?.[0] ?? "/c";
}

/** A share on a server whose name is one character, as posixPath writes it (`//c/share`). */
const ONE_LETTER_SHARE = /^\/\/[^/](?:\/|$)/;

/** A WSL distribution's share, as posixPath writes it: `//wsl$/NAME`. */
const WSL_SHARE = /^\/\/wsl\$\/[^/]+(?=\/|$)/i;

/**
 * A Windows path's device-namespace prefix, `\\?\`, `\\.\` or the NT `\??\` Win32 passes to the kernel
 * as it is: one pattern, so posixPath, DEVICE_PATH and ADMIN_SHARE read the same prefixes.
 */
const DEVICE_PREFIX = String.raw`(?:[\\/]{2}[?.]|[\\/]\?\?)[\\/]`;
/** The same, with the `UNC\` of a share after it (`\\?\UNC\host\share`). */
const DEVICE_PREFIX_UNC = new RegExp(String.raw`^${DEVICE_PREFIX}(?:UNC(?=[\\/]))?`, "i");

/**
 * Claude Code on Windows sends `C:\\Users\\dev\\.env`, and its rules read it as `/c/Users/dev/.env`.
 * `drive` is the client's root (windowsRoot: `/c`, or `//server/share`); undefined for a POSIX
 * client, whose paths are left as they are. On Windows backslashes are separators, and every way
 * to name the same file reads the same: `\\\\?\\C:\\x` and `\\\\localhost\\C$\\x` are `C:\\x`, `\\x` is
 * under the cwd's root, `C:x` is relative (to that drive's current directory, taken as the cwd),
 * and what Windows ignores when it opens a file is dropped: an alternate data stream
 * (`.env::$DATA`) and trailing dots and spaces (`.env.`). Without `trim` those are kept, as where
 * a path is not normalized (`\\\\?\\`, Node's writes: `src.\\x` lands in a folder `src.`).
 */
function posixPath(path: string, drive: string | undefined, trim = true): string {
  if (drive === undefined) return path;
  let rest = path
    // `\\?\UNC\host\share\x` is `\\host\share\x`; `\\?\C:\x` and `\\.\C:\x` are `C:\x`, and so is
    // the NT path `\??\C:\x`, which Win32 passes to the kernel as it is.
    .replace(DEVICE_PREFIX_UNC, (prefix) => (prefix.length > 4 ? "\\" : ""))
    // A share's root with no separator after it is the drive's root, not its current directory.
    .replace(/^[\\/]{2}(?:localhost|127\.0\.0\.1)[\\/]([A-Za-z])\$(?=[\\/]|$)/i, "$1:\\")
    // Git Bash's `/c/x`, which Claude Code on Windows reads as `C:\x`.
    .replace(/^\/([A-Za-z])(?=\/)/, "$1:");
  let root = "";
  const letter = /^([A-Za-z]):/.exec(rest);
  if (letter !== null) {
    rest = rest.slice(2);
    if (/^[\\/]/.test(rest)) root = `/${(letter[1] as string).toLowerCase()}`;
  } else if (/^[\\/](?![\\/])/.test(rest)) {
    root = drive;
  }
  const segments = rest
    .replaceAll("\\", "/")
    .split("/")
    .map((segment) => {
      const named = segment.replace(/:[\s\S]*$/, "");
      return trim ? trimDots(named) : named;
    });
  // WSL's two names for its shares, one reading (after the trim: `wsl.localhost.` is the same).
  if (root === "" && segments[0] === "" && segments[1] === "" && /^wsl\.localhost$/i.test(segments[2] ?? ""))
    segments[2] = "wsl$";
  return root + segments.join("/");
}

/**
 * `text` without the `/`s it ends with. A loop: `/\/+$/` starts again at each `/` of a run that does
 * not end the text, quadratic in its length (100 KB of `/` in a Glob pattern took 6.5 s).
 */
function withoutTrailingSlashes(text: string): string {
  let end = text.length;
  while (end > 0 && text[end - 1] === "/") end -= 1;
  return text.slice(0, end);
}

/** A segment without the dots and spaces Windows drops from its end, unless it is only those. */
function trimDots(segment: string): string {
  let end = segment.length;
  while (end > 0 && (segment[end - 1] === "." || segment[end - 1] === " ")) end -= 1;
  return end === 0 ? segment : segment.slice(0, end);
}

/** A macOS firmlink's other side (`/System/Volumes/Data/Users`, `/private/var`): the same files. */
const FIRMLINK = /^\/(?:System\/Volumes\/Data|private(?=\/(?:var|etc|tmp)\b))(?=\/|$)/i;

/** A Windows profile folder, as posixPath writes it (`/c/Users/dev`). */
const PROFILE = String.raw`^(\/[a-z]\/users\/[^/]+)`;
/** The Windows folder of a profile's shell folders. */
const SHELL = "AppData/Roaming/Microsoft/Windows";

/**
 * The junctions Windows keeps for programs written before Vista, each with where it leads
 * (`C:\Documents and Settings` is `C:\Users`, a profile's `Application Data` its
 * `AppData\Roaming`): a listing of one is refused, a path through one opens the file it leads to.
 * The two that lead to their own folder are read in one step however often they are repeated
 * (`ProgramData\Application Data\Application Data\…` is `ProgramData`), as Windows opens them.
 */
const LEGACY_JUNCTIONS: readonly (readonly [RegExp, string])[] = [
  [/^(\/[a-z])\/documents and settings(?=\/|$)/i, "$1/Users"],
  [/^(\/[a-z])\/users\/all users(?=\/|$)/i, "$1/ProgramData"],
  [/^(\/[a-z]\/users)\/default user(?=\/|$)/i, "$1/Default"],
  [/^(\/[a-z]\/programdata)(?:\/application data)+(?=\/|$)/i, "$1"],
  [/^(\/[a-z])\/programdata\/(desktop|documents)(?=\/|$)/i, "$1/Users/Public/$2"],
  [/^(\/[a-z]\/programdata)\/(start menu|templates)(?=\/|$)/i, "$1/Microsoft/Windows/$2"],
  [new RegExp(`${PROFILE}\\/application data(?=\\/|$)`, "i"), "$1/AppData/Roaming"],
  [new RegExp(`${PROFILE}\\/local settings(?=\\/|$)`, "i"), "$1/AppData/Local"],
  [new RegExp(`${PROFILE}\\/my documents(?=\\/|$)`, "i"), "$1/Documents"],
  [new RegExp(`${PROFILE}\\/(recent|sendto|start menu|templates)(?=\\/|$)`, "i"), `$1/${SHELL}/$2`],
  [new RegExp(`${PROFILE}\\/nethood(?=\\/|$)`, "i"), `$1/${SHELL}/Network Shortcuts`],
  [new RegExp(`${PROFILE}\\/printhood(?=\\/|$)`, "i"), `$1/${SHELL}/Printer Shortcuts`],
  [new RegExp(`${PROFILE}\\/appdata\\/local(?:\\/application data)+(?=\\/|$)`, "i"), "$1/AppData/Local"],
  [new RegExp(`${PROFILE}\\/documents\\/my (music|pictures|videos)(?=\\/|$)`, "i"), "$1/$2"],
];

/**
 * A Windows client's opened path (`/c/…`) through the legacy junctions it passes, to where they
 * lead; one junction may lead through another (`Local Settings\Application Data`).
 */
function throughJunctions(path: string): string {
  let through = path;
  for (let hops = 0; hops < LEGACY_JUNCTIONS.length; hops += 1) {
    const junction = LEGACY_JUNCTIONS.find(([name]) => name.test(through));
    if (junction === undefined) break;
    through = through.replace(junction[0], junction[1]);
  }
  return through;
}

/** Windows allow paths and cwd through the junctions they pass; undefined where none passes one. */
function junctionReading(paths: readonly (string | undefined)[], cwd: string | undefined): CallPaths["led"] {
  const led = paths.map((path) => (path === undefined ? path : throughJunctions(path)));
  const ledCwd = cwd === undefined ? cwd : throughJunctions(cwd);
  return ledCwd === cwd && led.every((path, i) => path === paths[i])
    ? undefined
    : { paths: led, cwd: ledCwd };
}

/**
 * A Windows path in the device namespace that names no drive or share (`\\?\Volume{…}\x`,
 * `\\?\GLOBALROOT\Device\…`, `\\.\PhysicalDrive0`, `\??\Volume{…}\x`): which file it is cannot
 * be read from it.
 */
const DEVICE_PATH = new RegExp(String.raw`^${DEVICE_PREFIX}(?![A-Za-z]:[\\/]|UNC[\\/])`, "i");

/**
 * Whether a Windows client's path names no file that can be read from it: a device path, or a
 * drive-relative `D:x` off the cwd's drive (`drive`, windowsRoot's; relative to D:'s own current
 * directory, which the event does not give). A share on a one-letter server is another, unless
 * the cwd is on one (ONE_LETTER_SHARE, told on posixPath's form, whose trim reads `\\c.\share` as
 * `\\c\share`).
 */
function unreadableOnWindows(text: string, drive: string): boolean {
  return (
    DEVICE_PATH.test(text) ||
    (/^[A-Za-z]:(?![\\/])/.test(text) && `/${text.charAt(0).toLowerCase()}` !== drive)
  );
}

/**
 * Whether a segment of a Windows client's path may be an 8.3 short name (`PROGRA~1`, `ENV~1`,
 * `SETTIN~2.JSO`): at most 8 characters, a `~` and digits among them, then an extension of at most
 * 3. A volume with short names on (a system drive's default) opens the long name it stands for,
 * which the path does not tell (`ENV~1` may be `.env`, `SSH~1` `.ssh`).
 */
function isShortName(segment: string): boolean {
  const name = /^([^.~\s]{1,6})~(\d{1,6})(?:\.[^.\s]{1,3})?$/.exec(segment);
  return name !== null && (name[1] as string).length + 1 + (name[2] as string).length <= 8;
}

/**
 * A Windows client's `path` (posixPath's) with the home's own name (`/c/Users/developer`'s) where
 * it stands as an 8.3 short name (`/c/Users/DEVELO~1/…`, as Windows gives a long user name's
 * %TEMP%), for deny-style rules: the name shortens to it (upper-cased, without leading dots,
 * spaces and `+,;=[]`, its first 6 characters before the `~`; a name with another dot is not
 * read, its short name keeps an extension). Which folder that is, `~1` or `~2`, is on the
 * disk, so no allow rule reads it so. Undefined where any other segment may be a short name.
 */
function longHomePath(path: string, home: string | undefined): string | undefined {
  if (home === undefined || !/^\/[a-z]\//.test(home)) return undefined;
  const name = home.slice(home.lastIndexOf("/") + 1);
  const parent = home.slice(0, home.length - name.length);
  // A name of at most 8 characters that 8.3 allows (`dev`) is its own short name: `DEV~1` is
  // another folder's. One with a dot past its leading dots keeps an extension (`john.smith`
  // is `JOHN~1.SMI`), which is left unknown: `JOHNSM~1` is another folder's.
  const kept = name.length <= 8 && !/[.\s+,;=[\]]/.test(name);
  const extended = name.replace(/^\.+/, "").includes(".");
  if (
    kept ||
    extended ||
    isShortName(name) ||
    path.slice(0, parent.length).toLowerCase() !== parent.toLowerCase()
  )
    return undefined;
  const segment = path.slice(parent.length).split("/", 1)[0] as string;
  const base = /^([^.~]+)~\d+$/.exec(segment)?.[1];
  const long = home + path.slice(parent.length + segment.length);
  if (base === undefined || !isShortName(segment) || long.split("/").some(isShortName)) return undefined;
  const short = name.toUpperCase().replace(/[.\s+,;=[\]]/g, "");
  return short.slice(0, 6) === base.toUpperCase() ? long : undefined;
}

/**
 * A Windows admin share's prefix, `\\host\C$`, `\\?\UNC\host\C$` or `\??\UNC\host\C$`: group 1 is
 * its drive, or `ADMIN` for `ADMIN$`, the Windows directory.
 */
const ADMIN_SHARE = new RegExp(
  String.raw`^(?:[\\/]{2}|${DEVICE_PREFIX}UNC[\\/])[^\\/]+[\\/]([A-Za-z]|ADMIN)\$(?=[\\/]|$)`,
  "i",
);

/** What an admin share's path names on its host, as a drive path (`C:\x`); undefined for any other. */
function sharedPath(text: string): string | undefined {
  const share = ADMIN_SHARE.exec(text);
  if (share === null) return undefined;
  const root = (share[1] as string).length === 1 ? `${share[1]}:` : "C:\\Windows";
  return `${root}\\${text.slice(share[0].length)}`;
}

/** A process in /proc: this one (self, thread-self) or another by its pid. */
const PROCESS = /^(?:self|thread-self|\d{1,10})$/;

/**
 * The link /proc keeps that a normalized path's segments end at: a process's (or one of its
 * tasks') `root` or `cwd`, or one of its open files (`fd/N`, `map_files/…`, and `/dev/fd/N`, which
 * leads to this process's), named `fd`; with whether the process is this one. Read segment by
 * segment, each tested on at most a few characters, so that a long segment costs nothing more.
 */
function procLink(out: readonly string[]): { readonly name: string; readonly self: boolean } | undefined {
  const n = out.length;
  if (n === 3 && out[0] === "dev" && out[1] === "fd") return { name: "fd", self: true };
  if (out[0] !== "proc" || n < 3 || n > 6 || !PROCESS.test(out[1] as string)) return undefined;
  const self = !/^\d/.test(out[1] as string);
  // Under one of its tasks: /proc/PID/task/TID/…
  const at = n > 4 && out[2] === "task" && /^\d{1,10}$/.test(out[3] as string) ? 4 : 2;
  const name = out[at];
  if (n === at + 1 && (name === "root" || name === "cwd")) return { name, self };
  return n === at + 2 && (name === "fd" || name === "map_files") ? { name: "fd", self } : undefined;
}

/**
 * Claude Code keeps a session's transcript in `projects/<folder>/<session>.jsonl` under its config
 * directory, the folder named after the project directory the session started in, every
 * character but an ASCII letter or digit written `-` (`/home/dev/app` is `-home-dev-app`,
 * `C:\app` is `C--app`). The cwd of a later event is where the agent has `cd`ed to since, so a
 * `/x` rule, which Claude Code anchors at the project, is read there as well. Returned as a POSIX
 * path's folder would read (`C--app` as `-c-app`, matching `/c/app`), lower-cased: deny-style
 * rules ignore case. Undefined for a folder longer than 200 characters, which Claude Code cuts
 * and ends with a hash.
 */
function projectFolderOf(transcriptPath: string | undefined, windows: boolean): string | undefined {
  if (typeof transcriptPath !== "string") return undefined;
  const folder = /[/\\]projects[/\\]([A-Za-z0-9-]{1,200})[/\\][^/\\]+\.jsonl$/.exec(transcriptPath)?.[1];
  if (folder === undefined) return undefined;
  const drive = windows ? /^([A-Za-z])--/.exec(folder) : null;
  return (drive ? `-${drive[1]}-${folder.slice(3)}` : folder).toLowerCase();
}

/**
 * The directory above `path` (or `path` itself) whose name the transcript's project folder is
 * (projectFolderOf): spelt as Claude Code spells it, the folder is the start of the path's own
 * spelling up to a `/`, as the spelling keeps every character's place.
 */
function projectRootOf(path: string, folder: string): string | undefined {
  const end = folder.length;
  if (!path.startsWith("/") || path.length < end || (path.length > end && path[end] !== "/"))
    return undefined;
  const root = path.slice(0, end);
  return root.replace(/[^A-Za-z0-9]/g, "-").toLowerCase() === folder ? root : undefined;
}

/** Claude Code keeps transcripts under ~/.claude/projects, so the home dir is what precedes /.claude/. */
function inferHome(transcriptPath: string | undefined): string | undefined {
  if (typeof transcriptPath !== "string") return undefined;
  const at = transcriptPath.indexOf("/.claude/");
  return at > 0 && transcriptPath.startsWith("/") ? normalizePath(transcriptPath.slice(0, at)) : undefined;
}

/**
 * The absolute, normalized path (openPath); relative when there is no cwd to resolve it against.
 * A leading `~` is the home directory (Claude Code expands it), kept as `~/...` when unknown;
 * undefined when it is unknown and the path climbs out of it (`~/../../etc/passwd`), and where
 * openPath cannot say which file it is.
 */
function resolvePath(
  raw: string,
  cwd: string | undefined,
  home: string | undefined,
  floor: number,
  links: Links,
): string | undefined {
  const tilde = raw === "~" || raw.startsWith("~/");
  if (tilde && home === undefined) {
    const path = normalizePath(raw);
    return path === "~" || path.startsWith("~/") ? path : undefined;
  }
  const full = tilde ? home + raw.slice(1) : raw.startsWith("/") || cwd === undefined ? raw : `${cwd}/${raw}`;
  return full.startsWith("/") ? openPath(full, floor, links) : normalizePath(full);
}

/**
 * Whether openPath follows the links /proc keeps; to which directory this process's cwd leads;
 * and, for deny-style rules, another process's root taken as `/` (its files at the same paths,
 * for all a container may hold) rather than unknown.
 */
type Links = { readonly cwd: string | undefined; readonly deny: boolean } | false;

/** Links as an allow rule reads them: only this process's root is known. */
const ALLOW_LINKS: Links = { cwd: undefined, deny: false };

/**
 * An absolute path normalized as the kernel opens it: `..` never climbs above the root, nor above
 * the first `floor` segments (a Windows client's drive: 1), nor on Windows above a share
 * (`/server/share`, whose first segment is longer than a drive letter). With `links`, the links
 * /proc keeps (procLink) are followed where they lead, a `..` after one too: this process's `root`
 * to `/`, its `cwd` to `links.cwd`, another's root as `links` says, and undefined (unknown) where
 * that is not known (no cwd given, another process's cwd, an open file); and a macOS firmlink's
 * other side is read as the path it mirrors.
 */
function openPath(path: string, floor: number, links: Links): string | undefined {
  let out: string[] = [];
  // Below another process's root: a chroot's `..` there climbs out of it, to a place unknown here.
  let chrooted = false;
  for (const segment of path.split("/")) {
    if (segment === "" || segment === ".") continue;
    if (segment === "..") {
      if (chrooted && out.length === 0) return undefined;
      // On Windows two segments for a share (`/server/share`), one for a drive (`/c`).
      if (out.length > (floor && (out[0]?.length ?? 0) > 1 ? 2 : floor)) out.pop();
      continue;
    }
    out.push(segment);
    const link = links && out.length >= 3 ? procLink(out) : undefined;
    if (link === undefined || !links) continue;
    const { name, self } = link;
    chrooted = !self;
    if (name === "root" && (self || links.deny)) out = [];
    else if (name === "cwd" && self && links.cwd !== undefined) out = links.cwd.split("/").filter(Boolean);
    // Another process's cwd, and an open file: which file it is, is not known here.
    else return undefined;
  }
  let opened = `/${out.join("/")}`;
  // In any case, as APFS reads names, and through each (`/System/Volumes/Data/private/etc`).
  while (links && FIRMLINK.test(opened)) opened = opened.replace(FIRMLINK, "") || "/";
  // On a Windows client, for deny-style rules: a legacy junction is where it leads. An allow rule
  // reads it both as written and there (junctionReading), approving what both readings approve.
  if (links && links.deny && floor === 1) opened = throughJunctions(opened);
  return opened;
}

/**
 * The directories the pattern's remainder is relative to. With no known home, `~/x` is
 * checked against a path still spelled `~/...`, and for deny-style rules also under /root,
 * /home/NAME and /Users/NAME (an allow rule would otherwise approve anyone's home).
 */
function anchorBases(
  anchor: Anchor,
  path: string,
  cwd: string | undefined,
  home: string | undefined,
  deny: boolean,
  /** The transcript's project folder, which deny-style rules read as a project root too. */
  projectFolder: string | undefined,
): string[] {
  switch (anchor) {
    case "root":
      return ["/"];
    case "cwd":
      return cwd === undefined ? [] : [cwd];
    case "project": {
      const root = !deny || projectFolder === undefined ? undefined : projectRootOf(path, projectFolder);
      return [...(cwd === undefined ? [] : [cwd]), ...(root === undefined ? [] : [root])];
    }
    case "home": {
      // A path under the known home is under no other base: one look.
      if (!deny || (home !== undefined && path.startsWith(`${home}/`))) return [home ?? "~"];
      // Also with a home read from the transcript: a CLAUDE_CONFIG_DIR outside the real home
      // makes that the wrong one, and a deny must not cover less than with no home at all.
      const user = /^(?:\/[a-z])?\/(?:home|users)\/[^/]+/i.exec(path);
      return [home ?? "~", "/root", "/var/root", ...(user ? [user[0]] : [])];
    }
    case "anywhere":
      // Claude Code reads a pattern with no anchor (`*.md`, `**/x`) from the cwd, where a path
      // outside it matches none: an allow rule approves no more. A deny-style one reads it
      // anywhere on the disk, to fail safe. The cwd itself (a Glob's or Grep's directory when it
      // names none) is read by its name: `Read(*)` still approves a Glob of `*` there. By its name
      // alone, from the directory above it: read from `/`, `Read(src)` approved a Grep of all of
      // /home/dev/src/app, its .env too, for a directory named src above it.
      if (!deny) return cwd === undefined ? [] : [path === cwd ? parentOf(cwd) : cwd];
      return [path.startsWith("/") ? "/" : ""];
  }
}

/** The directory above an absolute, normalized `path`; `/` for `/` itself. */
function parentOf(path: string): string {
  return path.slice(0, path.lastIndexOf("/")) || "/";
}

/** Whether the path, or a directory above it (gitignore: a matched directory covers its contents), matches. */
function matchesUnder(pattern: PathPattern, path: string, anchorDir: string, nocase: boolean): boolean {
  const base = applyUp(anchorDir, pattern.up);
  if (base === undefined) return false;
  const relative = relativeTo(path, base, nocase);
  if (relative === undefined) return false;
  const glob = nocase ? pattern.globNocase : pattern.glob;
  return glob === undefined || glob(relative);
}

function applyUp(dir: string, up: number): string | undefined {
  if (up === 0) return dir;
  if (!dir.startsWith("/")) return undefined;
  return normalizePath(`${dir}${"/..".repeat(up)}`);
}

/**
 * `path` relative to `base`, or undefined when it is not inside it. The empty base is the
 * "anywhere" base of a relative path: leading `..` segments are dropped, the rest compared.
 */
function relativeTo(path: string, base: string, nocase: boolean): string | undefined {
  if (base === "") return path.replace(/^(?:\.\.\/)*(?:\.\.$)?/, "");
  if (base === "/") return path.startsWith("/") ? path.slice(1) : undefined;
  // Ignoring case, the lowered path is sliced: lowering may change a string's length (`İ`).
  const [p, b] = nocase ? [path.toLowerCase(), base.toLowerCase()] : [path, base];
  if (p === b) return "";
  return p.startsWith(`${b}/`) ? p.slice(b.length + 1) : undefined;
}

/**
 * `hookgate init --client NAME --url HOOK_URL [--events LIST] [--timeout S] [--fail-closed]
 * [--managed] [--write FILE]`: the client configuration that points an agent at the gateway.
 * The configuration alone goes to standard output (notes go to standard error), or is merged
 * into FILE with `--write`. The hook URL is exactly `--url`.
 *
 * - claude-code: a settings.json fragment (`hooks`, `allowedHttpHookUrls`,
 *   `httpHookAllowedEnvVars`): one `http` hook per event, except SessionStart and Setup, where
 *   Claude Code never sends http hooks (clients.md §4.5), which run `hookgate send` instead.
 * - deepcode: the same for its user settings layer, all `http`.
 * - deepagents: a v2 event map of `command` hooks running a curl adapter (v2 drops `http`).
 * - deepagents-legacy: the list form, the same adapter under the 5 s subprocess limit.
 */
import { execFile } from "node:child_process";
import type { Stats } from "node:fs";
import {
  chmod,
  chown,
  readdir,
  readFile,
  readlink,
  realpath,
  rename,
  rm,
  stat,
  writeFile,
} from "node:fs/promises";
import { homedir } from "node:os";
import { basename, dirname, join, resolve } from "node:path";
import { isDeepStrictEqual, parseArgs, promisify } from "node:util";
import { clientRefusedRange } from "../core/egress/client-refused.js";
import { systemReason } from "../core/errors.js";
import { CLAUDE_CODE_EVENTS, DEEPAGENTS_LEGACY_EVENTS, DEEPAGENTS_V2_EVENTS } from "../core/events.js";
import { DIALECTS } from "../core/hook-event.js";
import { isRecord } from "../core/json-object.js";
import { jsonProblem } from "../core/json-text.js";
import { withoutUserinfo } from "../core/url-userinfo.js";
import { didYouMean, notOneOf, refuseEmpty } from "./arg-errors.js";
import { makeDirectory } from "./make-directory.js";
import { loopbackName } from "./node-listener.js";
import { type CommandIo, schemeHint } from "./send.js";
import { shellQuote } from "./shell-word.js";
import { UsageError } from "./usage-error.js";

type InitClient = "claude-code" | "deepcode" | "deepagents" | "deepagents-legacy";

/** deepcode's HOOK_EVENTS (deepcode-hooks.txt). */
const DEEPCODE_EVENTS: readonly string[] = [
  "PreToolUse",
  "PostToolUse",
  "PostToolUseFailure",
  "PostToolBatch",
  "PermissionRequest",
  "PermissionDenied",
  "SessionStart",
  "SessionEnd",
  "Setup",
  "UserPromptSubmit",
  "UserPromptExpansion",
  "Stop",
  "StopFailure",
  "SubagentStart",
  "SubagentStop",
  "PreCompact",
  "PostCompact",
  "TaskCreated",
  "TaskCompleted",
  "MessageDisplay",
  "Notification",
  "ConfigChange",
  "CwdChanged",
  "InstructionsLoaded",
  "WorktreeCreate",
  "WorktreeRemove",
  "Elicitation",
  "ElicitationResult",
  "TeammateIdle",
  "FileChanged",
];

/**
 * Events deepcode takes in its settings (HOOK_EVENTS) but does not fire yet, each reserved for a
 * subsystem it has not built (deepcode-hooks.txt). init writes their hooks, which cost nothing and
 * work once a deepcode fires them (init cannot tell which deepcode runs: it is on no registry),
 * and says that they stay silent until then.
 */
const DEEPCODE_NOT_FIRED: ReadonlySet<string> = new Set([
  "Elicitation",
  "ElicitationResult",
  "TeammateIdle",
  "FileChanged",
]);

/**
 * Events Claude Code 2.1.332 fires that 2.1.112 does not have (clients.md §5.2); the release in
 * between that added each was not pinned down, so the note names both.
 */
const CLAUDE_CODE_AFTER_2_1_112: ReadonlySet<string> = new Set([
  "PostToolBatch",
  "UserPromptExpansion",
  "PreModelSwitch",
  "PostModelSwitch",
  "DirectoryAdded",
  "MessageDisplay",
  "PreSkillShellCommand",
]);

/** What a policy can act on, without a request on every file watch or display delta. */
const DEFAULT_EVENTS: readonly string[] = [
  "PreToolUse",
  "PermissionRequest",
  "PostToolUse",
  "UserPromptSubmit",
  "Stop",
  "SubagentStop",
  "PreCompact",
  "Notification",
  "SessionEnd",
];

/**
 * Every legacy event deepagents sends, each compaction once: a current deepagents sends both
 * context.offload and context.compact for one manual compaction (its migration maps each to
 * PreCompact "manual"), and the older CLI sent context.compact on /compact, and on /offload
 * beside context.offload. So context.compact alone reaches every version, once.
 */
const DEFAULT_LEGACY_EVENTS: readonly string[] = DEEPAGENTS_LEGACY_EVENTS.filter(
  (e) => e !== "context.offload",
);

const KNOWN_EVENTS: Record<InitClient, readonly string[]> = {
  "claude-code": CLAUDE_CODE_EVENTS,
  deepcode: DEEPCODE_EVENTS,
  deepagents: DEEPAGENTS_V2_EVENTS,
  "deepagents-legacy": DEEPAGENTS_LEGACY_EVENTS,
};

/** Claude Code never sends an http hook on these (clients.md §4.5): init writes `hookgate send` there. */
export const NO_HTTP_IN_CLAUDE_CODE = new Set(["SessionStart", "Setup"]);

export const DEFAULT_HOOK_TIMEOUT_SECONDS = 10;

/** The longest timeout init gives an event's hook, and why, for the note when --timeout was more. */
interface EventTimeoutCap {
  readonly seconds: number;
  readonly why: string;
}

/**
 * Per client, the events on which a hook's timeout holds the user: the client waits for the hook
 * there, a short time by default, and a hook's own timeout replaces that default (Claude Code
 * 2.1.332: `e.timeout ? e.timeout*1000 : <the event's default>`, clients.md §2.2; deepagents v2's
 * runner the same, §6.4). init writes the default as the most, as a longer timeout only makes the
 * user wait longer for a gateway that is slow or down. Every other event (and every deepcode
 * event: 30 s unless the hook says, §9) waits on no one and takes --timeout as given.
 */
const EVENT_TIMEOUT_CAPS: Readonly<Record<InitClient, ReadonlyMap<string, EventTimeoutCap>>> = {
  "claude-code": new Map([
    [
      "UserPromptSubmit",
      {
        seconds: 30,
        why: "Claude Code sends the prompt only once its UserPromptSubmit hooks answer, and waits 30 s for one that sets no timeout",
      },
    ],
    [
      "MessageDisplay",
      {
        seconds: 10,
        why: "Claude Code shows a message only once its MessageDisplay hooks answer, and waits 10 s for one that sets no timeout",
      },
    ],
    [
      // 2, not 1.5: --timeout is whole seconds, and `hookgate send` needs one under the hook's.
      "SessionEnd",
      {
        seconds: 2,
        why: "Claude Code's SessionEnd hooks share a 1.5 s budget as a session ends, which a hook's longer timeout stretches (up to 60 s) while the user waits",
      },
    ],
  ]),
  deepcode: new Map(),
  deepagents: new Map([
    [
      "UserPromptSubmit",
      {
        seconds: 30,
        why: "deepagents sends the prompt only once its UserPromptSubmit hooks answer, and waits 30 s for one that sets no timeout",
      },
    ],
  ]),
  // Every legacy hook runs under deepagents' fixed 5 s.
  "deepagents-legacy": new Map(),
};
/** deepagents legacy kills a hook after 5 s (HOOK_SUBPROCESS_TIMEOUT); curl must give up first. */
const LEGACY_CURL_SECONDS = 4;

/** The variable the token is read from. deepagents removes *KEY*, *TOKEN*, *SECRET*, *PASSWORD*. */
const TOKEN_VAR = "HOOKGATE_TOKEN";
const ADAPTER_TOKEN_VAR = "HOOKGATE_AUTH";
/** The hook's timeout, sent to the gateway; also how --write knows the hooks init wrote. */
const TIMEOUT_HEADER = "x-hookgate-timeout";

const ALLOWLIST_NOTE =
  "allowedHttpHookUrls and httpHookAllowedEnvVars merge across settings files, and once either is set anywhere it binds every http hook: each URL must match one of the patterns, and a header interpolates only the variables listed (any other becomes empty), so add your other http hooks' URLs and variables";

export interface InitOptions {
  readonly client: InitClient;
  readonly url: string;
  readonly events: readonly string[];
  /** The --timeout given; DEFAULT_HOOK_TIMEOUT_SECONDS when absent. */
  readonly timeoutSeconds?: number | undefined;
  readonly failClosed: boolean;
  readonly managed: boolean;
}

export interface InitOutput {
  readonly config: Record<string, unknown>;
  readonly notes: readonly string[];
}

/**
 * Where Claude Code reads managed settings on this system: managed-settings.json, then (2.1.83 and
 * later) each .json file of managed-settings.d/ in name order, a later file's value winning. Only
 * these are enforced, and only here is allowManagedHooksOnly read.
 */
export function claudeCodeManagedFolder(platform: NodeJS.Platform = process.platform): string {
  if (platform === "darwin") return "/Library/Application Support/ClaudeCode";
  if (platform === "win32") return "C:\\Program Files\\ClaudeCode";
  return "/etc/claude-code";
}

/** Claude Code's managed settings file on `platform`, as `--managed`'s note names it. */
function managedSettingsFile(platform: NodeJS.Platform): string {
  return `${claudeCodeManagedFolder(platform)}${platform === "win32" ? "\\" : "/"}managed-settings.json`;
}

/** `managedFolder`: Claude Code's managed settings folder, the system's unless a test gives one. */
export async function initCommand(
  args: readonly string[],
  io: CommandIo,
  managedFolder = claudeCodeManagedFolder(),
): Promise<number> {
  const { values } = parseArgs({
    args: [...args],
    options: {
      client: { type: "string" },
      url: { type: "string" },
      events: { type: "string" },
      write: { type: "string" },
      timeout: { type: "string" },
      "fail-closed": { type: "boolean" },
      managed: { type: "boolean" },
    },
  });
  const client = values.client;
  if (!client) throw new UsageError(`init needs --client ${DIALECTS.join("|")}`);
  if (!(DIALECTS as readonly string[]).includes(client))
    throw new UsageError(notOneOf("--client", client, DIALECTS));
  if (!values.url) throw new UsageError("init needs --url, the hook URL the client will post to");
  const timeoutSeconds = values.timeout === undefined ? undefined : Number(values.timeout);
  if (
    timeoutSeconds !== undefined &&
    (!Number.isInteger(timeoutSeconds) || timeoutSeconds < 2 || timeoutSeconds > 600)
  ) {
    throw new UsageError(`--timeout ${values.timeout} must be a whole number of seconds from 2 to 600`);
  }
  const known = KNOWN_EVENTS[client as InitClient];
  const events =
    values.events === undefined ? defaultEvents(client as InitClient) : parseEvents(values.events);
  const unknown = events.filter((e) => !known.includes(e));
  if (unknown.length > 0) {
    // Event names are case-sensitive: `pretooluse` is no event, and no hook would ever fire.
    const named = unknown.map((e) => `${e}${didYouMean(e, known)}`);
    throw new UsageError(`${client} has no event ${named.join(", ")}; its events are ${known.join(", ")}`);
  }
  // An empty --write (an unset variable: `--write "$SETTINGS"`) read as none printed the
  // configuration and exited 0, so a set-up script went on with no hooks written.
  refuseEmpty("--write", values.write, "give the settings file to merge into");
  if (values.write !== undefined) {
    const unexpanded = unexpandedWrite(values.write);
    if (unexpanded !== undefined) throw new UsageError(unexpanded);
  }
  if (values.managed && client !== "claude-code") {
    throw new UsageError("--managed is Claude Code's managed settings; other clients have none");
  }
  const output = buildInitConfig({
    client: client as InitClient,
    url: values.url,
    events,
    timeoutSeconds,
    failClosed: values["fail-closed"] ?? false,
    managed: values.managed ?? false,
  });
  if (values.write !== undefined) {
    if (client === "deepcode") await refuseStrippedLayer(values.write);
    const written = await writeMerged(values.write, output.config, values.url, client as InitClient);
    io.err(`hookgate init: ${written.merged ? "merged into" : "wrote"} ${values.write}\n`);
    for (const earlier of written.replaced) {
      io.err(`hookgate init: replaced the hooks an earlier init wrote for ${withoutUserinfo(earlier)}\n`);
    }
    for (const kept of written.kept) io.err(`hookgate init: ${keptNote(kept, values.url)}\n`);
    const managedWarnings =
      client === "claude-code"
        ? await managedSettingsWarnings(values.write, values.managed ?? false, managedFolder)
        : [];
    for (const warning of [...written.warnings, ...managedWarnings])
      io.err(`hookgate init: warning: ${warning}\n`);
  } else {
    io.out(`${JSON.stringify(output.config, null, 2)}\n`);
  }
  io.err(output.notes.map((n) => `hookgate init: ${n}\n`).join(""));
  return 0;
}

/**
 * Why a --write path still holds what a shell expands, or undefined. Written as it stands, it is a
 * folder in the working directory no client reads, reported as "wrote …", and the agent looked
 * guarded. The shell expands "~" (`~/x`, another user's `~name/x`) only at a word's start, so
 * `--write=~/x` or a quoted "~/x" arrives as written; cmd.exe expands no "~" at all (`~\x`). A
 * `$NAME` arrives so inside single quotes or from a program that runs no shell (a Dockerfile's
 * exec form), and `%NAME%` from any shell but cmd.exe (PowerShell writes `$env:NAME`).
 */
function unexpandedWrite(path: string): string | undefined {
  if (path.startsWith("~")) {
    const [, name = "~", rest = ""] = /^([^/\\]*)(.*)$/s.exec(path) ?? [];
    if (rest.startsWith("\\")) {
      return `--write ${path} starts with a "~" that was not expanded (cmd.exe expands none): give the settings file's own path, %USERPROFILE%${rest} in cmd.exe or $HOME${rest} in PowerShell (.\\${path} for a folder named ${name})`;
    }
    const home = name === "~" ? `, or $HOME${rest}` : "";
    return `--write ${path} starts with a "~" the shell did not expand (it expands one only at the start of a word, not after --write= or inside quotes): write --write ${path} with a space and no quotes${home} (./${path} for a folder named ${name})`;
  }
  const variable = /\$\{?[A-Za-z_]\w*\}?|%[A-Za-z_][\w()]*%/.exec(path)?.[0];
  if (variable === undefined) return undefined;
  const how = variable.startsWith("%")
    ? "only cmd.exe expands a %NAME% (in PowerShell write $env:NAME)"
    : "no shell expands one inside single quotes, nor a program that runs none";
  return `--write ${path} holds ${variable}, a variable that was not expanded (${how}): give the settings file's own path`;
}

/** Why a hook that looks like init's stayed, and what to do about it. */
function keptNote({ event, url, differing }: KeptHook, ownUrl: string): string {
  const where = event === undefined ? "in the hooks list" : `on ${event}`;
  const todo =
    url === ownUrl
      ? "the gateway gets its events twice, from it and from the hook init wrote: delete one"
      : "delete it if an earlier init wrote it for a gateway you no longer use";
  return `kept a hook ${where} for ${withoutUserinfo(url)}: it differs from what init writes (${differing.join(", ")}), so it was edited by hand; ${todo}`;
}

function defaultEvents(client: InitClient): readonly string[] {
  return client === "deepagents-legacy" ? DEFAULT_LEGACY_EVENTS : DEFAULT_EVENTS;
}

function parseEvents(list: string): string[] {
  const events = [
    ...new Set(
      list
        .split(",")
        .map((e) => e.trim())
        .filter((e) => e !== ""),
    ),
  ];
  if (events.length === 0) throw new UsageError("--events needs at least one event name");
  return events;
}

/** The configuration and the notes for one client. Throws UsageError on a URL it cannot serve. */
export function buildInitConfig(options: InitOptions): InitOutput {
  const notes = checkUrl(options);
  switch (options.client) {
    case "claude-code":
      return claudeCode(options, notes);
    case "deepcode":
      return deepcode(options, notes);
    case "deepagents":
      return deepagents(options, notes);
    case "deepagents-legacy":
      return deepagentsLegacy(options, notes);
  }
}

// ---------------------------------------------------------------------------------------------
// Claude Code and deepcode

function claudeCode(options: InitOptions, notes: string[]): InitOutput {
  const { url, events, timeoutSeconds = DEFAULT_HOOK_TIMEOUT_SECONDS } = options;
  if (events.includes("WorktreeCreate")) {
    throw new UsageError(
      "a WorktreeCreate hook replaces git worktree creation and must answer a worktreePath; hookgate does not, so it cannot take that event",
    );
  }
  const hooks: Record<string, unknown[]> = {};
  const commandEvents: string[] = [];
  for (const event of events) {
    if (NO_HTTP_IN_CLAUDE_CODE.has(event)) {
      commandEvents.push(event);
      hooks[event] = [
        {
          hooks: [
            { type: "command", command: sendCommandLine(url, timeoutSeconds), timeout: timeoutSeconds },
          ],
        },
      ];
      continue;
    }
    const seconds = hookSeconds(options, event, notes);
    const hook: Record<string, unknown> = httpHook(url, seconds);
    if (options.failClosed && event === "PreToolUse") hook.onFailure = "block";
    hooks[event] = [{ hooks: [hook] }];
  }
  const config: Record<string, unknown> = {
    hooks,
    allowedHttpHookUrls: [allowlistPattern(url)],
    httpHookAllowedEnvVars: [TOKEN_VAR],
  };
  if (options.managed) config.allowManagedHooksOnly = true;

  notes.unshift(`Claude Code settings for ${events.length} event(s), posting to ${url}`);
  if (options.managed) {
    notes.push(
      `install as managed settings: ${managedSettingsFile("linux")} (Linux, WSL), ${managedSettingsFile("darwin")} (macOS), ${managedSettingsFile("win32")} (Windows)`,
      "allowManagedHooksOnly: Claude Code then ignores every hook from user and project settings and from plugins, but those of plugins the managed settings force-enable (from Claude Code 2.1.101)",
    );
  } else {
    notes.push(
      "hooks belong in ~/.claude/settings.json (yours) or .claude/settings.json (a project); --write FILE merges them into one",
    );
  }
  notes.push(ALLOWLIST_NOTE);
  notes.push(
    `export ${TOKEN_VAR}=<your team's token> in the shell that starts claude (the example policy's is hookgate-dev-token); without it Claude Code sends an empty "Bearer "`,
  );
  const later = events.filter((e) => CLAUDE_CODE_AFTER_2_1_112.has(e));
  if (later.length > 0) {
    const them = later.length > 1 ? "them" : "it";
    notes.push(
      `${later.join(", ")}: Claude Code 2.1.112 and earlier never send ${them} (2.1.332 does; the release in between that added ${them} is not known), so on an older Claude Code ${later.length > 1 ? "these hooks stay" : "this hook stays"} silent`,
    );
  }
  if (commandEvents.length > 0) {
    notes.push(
      `${commandEvents.join(" and ")}: Claude Code sends no http hook there, so ${commandEvents.length > 1 ? "they are command hooks" : "it is a command hook"} running \`hookgate send\`; hookgate must be on the PATH (npm link in a clone of hookgate puts it there)`,
    );
  }
  if (options.failClosed) {
    notes.push(
      'PreToolUse has onFailure "block" (Claude Code 2.1.295 or later; older versions ignore it and let the tool run when the gateway fails)',
    );
  } else if (events.includes("PreToolUse")) {
    notes.push(
      "when the gateway is down or slower than the timeout, Claude Code lets the action through; --fail-closed blocks PreToolUse instead",
    );
  }
  notes.push(`check the setup with: hookgate doctor --url ${shellQuote(url)}`);
  return { config, notes };
}

function deepcode(options: InitOptions, notes: string[]): InitOutput {
  const { url, events } = options;
  const hooks: Record<string, unknown[]> = {};
  for (const event of events) hooks[event] = [{ hooks: [httpHook(url, hookSeconds(options, event, notes))] }];
  const config = {
    hooks,
    allowedHttpHookUrls: [allowlistPattern(url)],
    httpHookAllowedEnvVars: [TOKEN_VAR],
  };
  notes.unshift(`deepcode settings for ${events.length} event(s), posting to ${url}`);
  notes.push(
    "merge into your user settings, ~/.deepcode/settings.json (or your own untracked settings.local.json): deepcode strips hooks, allowedHttpHookUrls and httpHookAllowedEnvVars from a project's .deepcode/settings.json and from git-tracked local settings, so hooks there never run",
    `export ${TOKEN_VAR}=<your team's token> in the shell that starts deepcode (the example policy's is hookgate-dev-token)`,
    ALLOWLIST_NOTE,
  );
  const silent = events.filter((e) => DEEPCODE_NOT_FIRED.has(e));
  if (silent.length > 0) {
    const them = silent.length > 1 ? "them" : "it";
    notes.push(
      `${silent.join(", ")}: deepcode takes ${them} in its settings but does not fire ${them} yet (reserved for a part of deepcode not built), so ${silent.length > 1 ? "these hooks stay" : "this hook stays"} silent until a deepcode that fires ${them}`,
    );
  }
  if (options.failClosed) {
    notes.push(
      "deepcode has no onFailure: --fail-closed changes nothing here. deepcode already blocks on a non-2xx answer, but a gateway it cannot reach lets the action through",
    );
  }
  notes.push(`check the setup with: hookgate doctor --url ${shellQuote(url)}`);
  return { config, notes };
}

/**
 * The timeout of `event`'s hook: --timeout (or the default), at most the client's cap for the
 * event (EVENT_TIMEOUT_CAPS), with a note when a --timeout given was lowered.
 */
function hookSeconds(options: InitOptions, event: string, notes: string[]): number {
  const seconds = options.timeoutSeconds ?? DEFAULT_HOOK_TIMEOUT_SECONDS;
  const cap = EVENT_TIMEOUT_CAPS[options.client].get(event);
  if (cap === undefined || seconds <= cap.seconds) return seconds;
  if (options.timeoutSeconds !== undefined) {
    notes.push(`--timeout ${seconds} lowered to ${cap.seconds} s on ${event}: ${cap.why}`);
  }
  return cap.seconds;
}

function httpHook(url: string, seconds: number): Record<string, unknown> {
  return {
    type: "http",
    url,
    timeout: seconds,
    // The gateway reads the hook's timeout here and answers before the client gives up.
    headers: { Authorization: `Bearer $${TOKEN_VAR}`, [TIMEOUT_HEADER]: String(seconds) },
    allowedEnvVars: [TOKEN_VAR],
  };
}

/**
 * `scheme://host[:port]/*`, exactly as the URL is written: matches the hook URL under both the
 * raw-string regex of Claude Code ≤ 2.1.112 (and deepcode) and the URL-aware matcher of later
 * versions (clients.md §3.2), and nothing on another host or port.
 */
export function allowlistPattern(url: string): string {
  const pattern = originPattern(url);
  if (pattern === undefined) throw new UsageError(`--url ${url} is not an absolute URL`);
  return pattern;
}

function originPattern(url: string): string | undefined {
  const origin = /^[a-zA-Z][a-zA-Z0-9+.-]*:\/\/[^/?#]*/.exec(url)?.[0];
  return origin === undefined ? undefined : `${origin}/*`;
}

/** The command a Claude Code command hook runs: `hookgate send`, a second under the hook's timeout. */
function sendCommandLine(url: string, hookSeconds: number): string {
  return `hookgate send --url ${shellQuote(url)} --timeout ${hookSeconds - 1}`;
}

// ---------------------------------------------------------------------------------------------
// deepagents

function deepagents(options: InitOptions, notes: string[]): InitOutput {
  const { url, events } = options;
  const hooks: Record<string, unknown[]> = {};
  for (const event of events) {
    const failClosed = options.failClosed && event === "PreToolUse";
    const seconds = hookSeconds(options, event, notes);
    hooks[event] = [
      {
        hooks: [
          {
            type: "command",
            command: curlAdapter(url, seconds - 1, failClosed),
            timeout: seconds,
          },
        ],
      },
    ];
  }
  notes.unshift(`deepagents (v2) hooks for ${events.length} event(s), posting to ${url} through curl`);
  notes.push(
    "merge into ~/.deepagents/hooks.json (or a trusted project's .deepagents/hooks.json); it cannot share a file with the legacy list form",
    ...adapterTokenNotes(),
  );
  if (options.failClosed) {
    notes.push(
      "PreToolUse exits 2 when the gateway cannot be reached, something in front of it answers an HTTP error, or the answer is not the gateway's (a redirect, a page), which deepagents reads as a block",
    );
  }
  notes.push(`check the setup with: HOOKGATE_AUTH=… hookgate doctor --url ${shellQuote(url)}`);
  return { config: { hooks }, notes };
}

function deepagentsLegacy(options: InitOptions, notes: string[]): InitOutput {
  const { url, events } = options;
  const config = {
    hooks: [
      { command: ["sh", "-c", curlAdapter(url, LEGACY_CURL_SECONDS, false, false)], events: [...events] },
    ],
  };
  notes.unshift(`deepagents legacy hook for ${events.length} event(s), posting to ${url} through curl`);
  notes.push(
    "merge into ~/.deepagents/hooks.json (the list form; it cannot share a file with a v2 event map)",
    ...adapterTokenNotes(),
    "deepagents legacy reads nothing back: these events are audited and notified, never decided. Use --client deepagents (v2) for decisions",
    `deepagents kills a legacy hook after 5 s, so curl gives up after ${LEGACY_CURL_SECONDS} s`,
  );
  if (options.timeoutSeconds !== undefined)
    notes.push("--timeout changes nothing here: deepagents gives every legacy hook 5 s");
  if (options.failClosed) notes.push("--fail-closed changes nothing here: legacy hooks cannot block");
  return { config, notes };
}

function adapterTokenNotes(): string[] {
  return [
    `export ${ADAPTER_TOKEN_VAR}=<your team's token> (the example policy's is hookgate-dev-token): deepagents removes variables whose names contain KEY, TOKEN, SECRET or PASSWORD from a hook's environment, so ${TOKEN_VAR} would arrive empty`,
    "the adapter needs curl on the PATH",
  ];
}

/**
 * Posts stdin to the gateway and prints the answer. The gateway answers every hook with a 2xx, so
 * an HTTP error comes from what stands in front of it (API Gateway's 502 when the function fails,
 * a Worker's HTML error page, a proxy), and its body is no answer: `--fail` prints nothing then
 * and exits 22, which deepagents only logs, as it does a gateway it cannot reach. Printed, an HTML
 * page would be read as context on UserPromptSubmit and SessionStart, where deepagents takes
 * plain output as context (clients.md §6.4), and its text would reach the model. Fail-closed
 * makes that exit a 2, a block, as for an unreachable gateway; deepagents reads no output beside
 * an exit 2.
 *
 * Where deepagents reads the answer (v2, `checked`), what is printed must also be the gateway's:
 * a 2xx that is empty or a JSON object, as `hookgate send` requires. A redirect (a sign-in proxy)
 * or a 200 page (a site's catch-all at a wrong URL) is no HTTP error to `--fail`, and printed
 * it would be context too, or let a fail-closed PreToolUse through.
 */
function curlAdapter(url: string, maxSeconds: number, failClosed: boolean, checked = true): string {
  const curl = [
    "curl -sS --fail",
    `--max-time ${maxSeconds}`,
    "-H 'Content-Type: application/json'",
    `-H '${TIMEOUT_HEADER}: ${maxSeconds}'`,
    `-H "Authorization: Bearer \${${ADAPTER_TOKEN_VAR}}"`,
    "--data-binary @-",
    // The status after the body, with a space: the body is what comes before the last one.
    ...(checked ? ["-w ' %{http_code}'"] : []),
    shellQuote(url),
  ].join(" ");
  if (!checked) return curl;
  const fail = (why: string) =>
    failClosed
      ? `{ echo "hookgate: ${why}; blocking (fail-closed)" >&2; exit 2; }`
      : `{ echo "hookgate: ${why}; nothing printed" >&2; exit 1; }`;
  return [
    // Not `|| exit`: curl's own status would be handed on, and its 2 (a failed init, an option
    // an old curl does not know) is a block to deepagents on every event, a Stop continued.
    `answer=$(${curl}) || ${
      failClosed
        ? fail(
            "the gateway did not answer with a decision (no connection, or an HTTP error from in front of it)",
          )
        : `{ echo "hookgate: curl exited $?; nothing printed" >&2; exit 1; }`
    }`,
    `status=\${answer##* }`,
    `answer=\${answer% *}`,
    `case "$status" in 2??) ;; *) ${fail("HTTP $status is not an answer from the gateway")};; esac`,
    `case "$answer" in ''|'{'*) printf '%s' "$answer";; *) ${fail("the answer is not a JSON object, so not the gateway's (is the URL the gateway's?)")};; esac`,
  ].join("; ");
}

// ---------------------------------------------------------------------------------------------
// The URL

const ROUTES: Record<InitClient, string> = {
  "claude-code": "/v1/hooks/claude-code",
  deepcode: "/v1/hooks/deepcode",
  deepagents: "/v1/hooks/deepagents",
  "deepagents-legacy": "/v1/hooks/deepagents",
};

/** Refuses what cannot work; returns notes about what may not. */
function checkUrl(options: InitOptions): string[] {
  const { url, client } = options;
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new UsageError(
      `--url ${withoutUserinfo(url)} is not a URL${schemeHint(url) || ` (e.g. http://127.0.0.1:8787${ROUTES[client]})`}`,
    );
  }
  if (parsed.protocol !== "http:" && parsed.protocol !== "https:") {
    throw new UsageError(`--url ${withoutUserinfo(url)} must be http or https${schemeHint(url)}`);
  }
  if (parsed.username || parsed.password) {
    throw new UsageError(
      `--url ${withoutUserinfo(url)} carries a user name or password (not shown); the token goes in a header instead`,
    );
  }
  const path = parsed.pathname.replace(/\/{2,}/g, "/").replace(/\/+$/, "");
  const suggestion = `${parsed.origin}${path}${ROUTES[client]}`;
  if (path === "") {
    throw new UsageError(
      `--url is the full hook URL, not the gateway's base URL: did you mean ${suggestion}?`,
    );
  }
  const notes: string[] = [];
  if (client === "deepagents") {
    if (!path.endsWith("/v1/hooks/deepagents")) {
      throw new UsageError(
        `deepagents v2 bodies look like Claude Code's, so its hooks must name the route /v1/hooks/deepagents (e.g. ${parsed.origin}/v1/hooks/deepagents)`,
      );
    }
  } else {
    const accepted =
      client === "deepagents-legacy"
        ? ["/v1/hooks", "/v1/hooks/deepagents", "/v1/hooks/deepagents-legacy"]
        : ["/v1/hooks", `/v1/hooks/${client}`];
    const under = path.lastIndexOf("/v1/hooks/");
    if (under >= 0 && !accepted.some((route) => path.endsWith(route))) {
      // A hookgate route, but not this client's: the gateway would read every event in another
      // client's dialect there, or answer each with its unknown-route decision.
      const other = path.slice(under + "/v1/hooks/".length);
      const read = !Object.hasOwn(ROUTES, other)
        ? "is no hook route: the gateway answers every hook there with its unknown-route decision"
        : `is ${other}'s route, where the gateway reads every event as ${other}'s`;
      throw new UsageError(
        `--url's path ${path} ${read}; ${client}'s hooks go to ${parsed.origin}${path.slice(0, under)}${ROUTES[client]}`,
      );
    }
    if (!accepted.some((route) => path.endsWith(route))) {
      notes.push(
        `the URL's path is not hookgate's route for ${client} (${ROUTES[client]}); it is used as given`,
      );
    }
  }
  const host = parsed.hostname.replace(/^\[|\]$/g, "");
  if (parsed.protocol === "http:" && !loopbackName(host)) {
    notes.push(`${url} is plain http: the token crosses the network in clear text; use https`);
  }
  const refused = client === "claude-code" || client === "deepcode" ? clientRefusedRange(host) : undefined;
  if (refused !== undefined) {
    notes.push(
      `${host} is ${refused === "cloud metadata" ? "a cloud metadata" : "a private"} address: ${client === "claude-code" ? "Claude Code" : "deepcode"} refuses http hooks to private, link-local and cloud metadata addresses (loopback is allowed) unless it goes through a proxy`,
    );
  }
  return notes;
}

// ---------------------------------------------------------------------------------------------
// --write: merge into an existing file, replacing the hooks an earlier init wrote

/**
 * deepcode strips hooks and both allowlists from a project's .deepcode/settings.json and from a
 * .deepcode/settings.local.json that git tracks (its settingsLayers.ts, clients.md §9): hooks
 * written there never run, and the agent goes unguarded while init said it wrote them. Its user
 * layer, ~/.deepcode/settings.json, is read whole even when deepcode runs in the home folder,
 * where it is also the project's; any other file is one given to deepcode itself, also whole.
 */
async function refuseStrippedLayer(path: string): Promise<void> {
  const file = resolve(path);
  const folder = dirname(file);
  if (basename(folder) !== ".deepcode") return;
  const user = join(homedir(), ".deepcode", "settings.json");
  const strips = "deepcode strips hooks, allowedHttpHookUrls and httpHookAllowedEnvVars from";
  if (basename(file) === "settings.json") {
    if (file === user || (await writeTarget(file)) === (await writeTarget(user))) return;
    throw new Error(
      `${strips} a project's .deepcode/settings.json, so hooks written to ${path} would never run; nothing written: write them to ${user} (yours), or to ${join(folder, "settings.local.json")} kept out of git`,
    );
  }
  if (basename(file) === "settings.local.json" && (await gitTracks(file))) {
    throw new Error(
      `${path} is tracked by git, and ${strips} a git-tracked settings.local.json, so hooks written there would never run; nothing written: take it out of git (git rm --cached ${shellQuote(path)}), or write them to ${user} (yours)`,
    );
  }
}

/** Whether git tracks `file`, as deepcode asks it; no git, or no repository, is untracked. */
async function gitTracks(file: string): Promise<boolean> {
  try {
    await promisify(execFile)("git", ["ls-files", "--error-unmatch", file], { cwd: dirname(file) });
    return true;
  } catch {
    return false;
  }
}

async function writeMerged(
  path: string,
  config: Record<string, unknown>,
  url: string,
  client: InitClient,
): Promise<{ merged: boolean; replaced: string[]; kept: KeptHook[]; warnings: string[] }> {
  let existing: Record<string, unknown> | undefined;
  // Written where the file's chain of symlinks ends (a dotfiles checkout).
  const target = await writeTarget(path);
  const found = await stat(path).catch(() => undefined);
  if (found?.isDirectory()) throw new Error(`--write ${path} is a directory: name the settings file in it`);
  // Anything but a file would be read (a terminal or a named pipe waits for input for ever) and
  // then renamed over: /dev/null, as root.
  if (found !== undefined && !found.isFile()) {
    throw new Error(
      `--write ${path} is a device, a socket or a named pipe, not a settings file: name the settings file`,
    );
  }
  let read: string | undefined;
  try {
    read = await readFile(path, "utf8");
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== "ENOENT") throw await readError(path, target, found, e);
  }
  // A byte-order mark (a Windows editor's UTF-8) is read past, as for a policy file, and not
  // written back: JSON has none.
  const text = read?.replace(/^\uFEFF/, "");
  if (text !== undefined && text.trim() !== "") {
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch (e) {
      throw new Error(`${path} is not valid JSON (${jsonProblem(e, text)}); left unchanged`);
    }
    if (!isRecord(parsed)) throw new Error(`${path} does not hold a JSON object; left unchanged`);
    existing = parsed;
  }
  const merged = existing ? mergeConfig(existing, config, path, client) : config;
  // With its mode (stat followed the links to `target`): settings may hold secrets, and a 0600
  // file must not come back 0644.
  const mode = found?.mode;
  // The new file is renamed over the old, which the folder allows whatever the file's mode: a
  // file its owner made read-only (kept from the agent, or from edits) would be replaced.
  if (mode !== undefined && (mode & 0o200) === 0) {
    throw new Error(
      `${path} is read-only; left unchanged (chmod u+w ${shellQuote(path)} to let init merge into it)`,
    );
  }
  await makeFolder(path, target);
  // The file's own line ends (CRLF from a Windows editor), as its indent: a diff shows only what
  // init changed. JSON.stringify puts a line break only between tokens, never inside a string.
  const eol = /\r?\n/.exec(text ?? "")?.[0] ?? "\n";
  const json = JSON.stringify(merged, null, indentOf(text)).replaceAll("\n", eol);
  await replaceFile(path, target, `${json}${eol}`, found, read);
  const replaced = existing ? earlierUrls(existing.hooks).filter((earlier) => earlier !== url) : [];
  return {
    merged: existing !== undefined,
    replaced,
    kept: existing ? keptLookalikes(existing.hooks, url) : [],
    warnings: existing
      ? [
          ...hooksSwitchedOff(existing, path, client),
          ...newlyRestricted(existing, config, url),
          ...staleAllowlist(merged, replaced, url),
        ]
      : [],
  };
}

/**
 * Puts `content` in place of `target` through a temporary file beside it and a rename, so that an
 * agent starting meanwhile never reads half a file. `read` is what the file held when init read
 * it (undefined: no file): another program that wrote it since (the agent saving a permission, a
 * second init) would lose its change to the rename, so the file is left as that program wrote it.
 * `found`: the file's stat, whose mode and owner the new file keeps. Whatever fails, the
 * temporary file goes.
 */
async function replaceFile(
  path: string,
  target: string,
  content: string,
  found: Stats | undefined,
  read: string | undefined,
): Promise<void> {
  const folder = dirname(target);
  const temporary = `${target}.hookgate-${process.pid}.tmp`;
  try {
    // Made readable by its owner only when it replaces a file, which may be private (0600): the
    // chmod below gives it that file's mode, and until then nobody else reads the content.
    await writeFile(temporary, content, found === undefined ? undefined : { mode: 0o600 });
    if (found !== undefined) {
      // Its owner too: run as root (sudo), the new file would be root's, and a 0600 settings
      // file one its own user can no longer read, nor the agent save a permission in.
      if (process.getuid?.() === 0 && (found.uid !== 0 || found.gid !== 0))
        await chown(temporary, found.uid, found.gid);
      await chmod(temporary, found.mode & 0o7777);
    }
    const now = await readFile(path, "utf8").catch((e: NodeJS.ErrnoException) => {
      if (e.code === "ENOENT") return undefined;
      throw e;
    });
    if (now !== read) {
      throw new Error(
        `${path} changed while init was merging into it (another program wrote it); left as that program wrote it: run init again`,
      );
    }
    await rename(temporary, target);
  } catch (e) {
    await rm(temporary, { force: true }).catch(() => undefined);
    const code = (e as NodeJS.ErrnoException).code;
    if (code === undefined) throw e;
    const { why, fix } = folderRefusal(
      e,
      folder,
      "create or replace files",
      `give yourself write permission on ${folder}, or `,
    );
    throw refusal("write", path, why, fix, read !== undefined);
  }
}

/**
 * Why init leaves the settings file as it is, and what to do: merging what init prints by hand
 * is always left. `exists`: the file is there, and unchanged; otherwise none was made.
 */
function refusal(verb: "read" | "write", path: string, why: string, fix: string, exists: boolean): Error {
  return new Error(
    `cannot ${verb} ${path}: ${why}; ${exists ? "left unchanged" : "nothing written"} (${fix}run init without --write and merge what it prints into ${path} by hand)`,
  );
}

/** The settings file cannot be read (the file itself, or a folder on its way): why, and what to do. */
async function readError(path: string, target: string, found: Stats | undefined, e: unknown): Promise<Error> {
  const code = (e as NodeJS.ErrnoException).code;
  const inTheWay = code === "ENOTDIR" ? await fileInTheWay(target) : undefined;
  if (inTheWay !== undefined) {
    return refusal(
      "write",
      path,
      `${inTheWay} is a file, where a folder should be`,
      `move ${inTheWay} out of the way, or name another settings file, or `,
      false,
    );
  }
  if (code === "ELOOP") {
    return refusal(
      "read",
      path,
      "its symbolic links go round in a loop (ELOOP)",
      `point ${path} at the settings file, or `,
      false,
    );
  }
  if (code === "EACCES" || code === "EPERM") {
    // stat needs only the folders' search permission: it found the file, so the file is unreadable.
    return found === undefined
      ? refusal(
          "read",
          path,
          `a folder on its way does not let you in (${code})`,
          "give yourself search permission (x) on its folders, or ",
          false,
        )
      : refusal(
          "read",
          path,
          `you may not read it (${code})`,
          "give yourself read permission on it, or ",
          true,
        );
  }
  return refusal("read", path, systemReason(e), "", found !== undefined);
}

/** The settings file's folder, made where missing; what stops it is named with what to do. */
async function makeFolder(path: string, target: string): Promise<void> {
  const folder = dirname(target);
  try {
    makeDirectory(folder);
  } catch (e) {
    const made = (e as NodeJS.ErrnoException).path ?? folder;
    const inTheWay = await fileInTheWay(target);
    const { why, fix } =
      inTheWay !== undefined
        ? {
            why: `${inTheWay} is a file, where a folder should be`,
            fix: `move ${inTheWay} out of the way, or `,
          }
        : folderRefusal(e, dirname(made), `create ${made}`, `create ${folder} yourself, or `);
    throw refusal("write", path, `its folder ${folder} cannot be made: ${why}`, fix, false);
  }
}

/**
 * Why `folder` took no new entry (`doing`: what init asked of it), for the settings file and the
 * folders made for it alike; `denied` is what to do when a permission refused it, which only the
 * caller knows. Any other code keeps Node's words, without the call and the path they end with
 * (the temporary file's, which is no help).
 */
function folderRefusal(
  e: unknown,
  folder: string,
  doing: string,
  denied: string,
): { readonly why: string; readonly fix: string } {
  const code = (e as NodeJS.ErrnoException).code;
  if (code === "EACCES" || code === "EPERM")
    return { why: `${folder} does not let you ${doing} in it (${code})`, fix: denied };
  if (code === "EROFS") return { why: `${folder} is on a read-only file system`, fix: "" };
  return { why: systemReason(e), fix: "" };
}

/** The file (not a folder) nearest `target` on its way, if the nearest that exists is one. */
async function fileInTheWay(target: string): Promise<string | undefined> {
  for (let dir = dirname(target); dirname(dir) !== dir; dir = dirname(dir)) {
    const found = await stat(dir).catch(() => undefined);
    if (found !== undefined) return found.isDirectory() ? undefined : dir;
  }
  return undefined;
}

/**
 * Claude Code runs no hook from a settings file that sets disableAllHooks (its /hooks menu saves
 * it in the user's), unless one that outranks it sets it false: the hooks written there would not
 * run, and the agent go unguarded. The switch is the user's, so it stays, and init says so.
 * deepcode has no such setting.
 */
function hooksSwitchedOff(existing: Record<string, unknown>, path: string, client: InitClient): string[] {
  if (client !== "claude-code" || existing.disableAllHooks !== true) return [];
  return [
    `${path} sets disableAllHooks: true, so Claude Code runs no hook from it, these included (unless a settings file that outranks it sets it false): take it out, or set it false, for the gateway to be asked`,
  ];
}

/**
 * Claude Code enforces its managed settings alone: written anywhere else, a --managed file's hooks
 * are the user's to change or remove, and its allowManagedHooksOnly does nothing. Written into the
 * managed settings without allowManagedHooksOnly in force, the gateway's hooks cannot be removed
 * but are not the only ones: the user's, the project's and the plugins' run beside them. That
 * switch is the team's policy, so init sets it only when --managed asks, and says so otherwise.
 * With it in force, the hooks init writes into any other settings file never run, and the agent
 * goes unguarded while init said it wrote them.
 */
async function managedSettingsWarnings(path: string, managed: boolean, folder: string): Promise<string[]> {
  const base = join(folder, "managed-settings.json");
  const dropIns = join(folder, "managed-settings.d");
  if (!(await isManagedSettings(path, base, dropIns))) {
    if (managed) {
      return [
        `${path} is not Claude Code's managed settings (${base}, or a .json file in ${dropIns}), so nothing in it is enforced: users can change or remove the hooks written there, and Claude Code ignores allowManagedHooksOnly outside managed settings; put the file there (as root), or deliver it by MDM or the claude.ai console, for the gateway's hooks to be enforced`,
      ];
    }
    return (await managedHooksOnly(base, dropIns))
      ? [
          `Claude Code's managed settings (${base}, ${dropIns}) set allowManagedHooksOnly: true, so it runs no hook from ${path}, these included: the gateway's hooks must go into the managed settings (init --managed prints them) for the agent to call it`,
        ]
      : [];
  }
  if (await managedHooksOnly(base, dropIns)) return [];
  return [
    `${path} is Claude Code's managed settings, and they do not set allowManagedHooksOnly: true, so the hooks of users' own settings, of projects and of plugins run beside the gateway's; set it true there${managed ? "" : " (init --managed does)"} for the gateway's hooks to be the only ones`,
  ];
}

/** Whether `path` is the managed settings file, or a drop-in Claude Code reads beside it. */
async function isManagedSettings(path: string, base: string, dropIns: string): Promise<boolean> {
  if ((await writeTarget(path)) === (await writeTarget(base))) return true;
  // A drop-in is found by its name in the folder, a link to a file elsewhere too.
  const name = basename(path);
  return (
    name.endsWith(".json") &&
    !name.startsWith(".") &&
    (await writeTarget(dirname(resolve(path)))) === (await writeTarget(dropIns))
  );
}

/** allowManagedHooksOnly as Claude Code merges it: the base file's, then each drop-in's in name order. */
async function managedHooksOnly(base: string, dropIns: string): Promise<boolean> {
  const names = await readdir(dropIns).catch(() => []);
  const files = names
    .filter((name) => name.endsWith(".json") && !name.startsWith("."))
    .sort()
    .map((name) => join(dropIns, name));
  let only = false;
  for (const file of [base, ...files]) {
    const settings: unknown = await readFile(file, "utf8")
      .then((text) => JSON.parse(text.replace(/^\uFEFF/, "")))
      .catch(() => undefined);
    if (isRecord(settings) && settings.allowManagedHooksOnly !== undefined)
      only = settings.allowManagedHooksOnly === true;
  }
  return only;
}

/**
 * An unset allowedHttpHookUrls allows every URL; once hookgate's pattern is there, the file's
 * other http hooks must match a pattern too, or the client stops calling them (clients.md §3.1).
 * An unset httpHookAllowedEnvVars likewise lets each hook use its own allowedEnvVars.
 */
function newlyRestricted(
  existing: Record<string, unknown>,
  config: Record<string, unknown>,
  url: string,
): string[] {
  const warnings: string[] = [];
  const others = handlersIn(existing.hooks).filter(
    (hook): hook is Record<string, unknown> =>
      isRecord(hook) && hook.type === "http" && typeof hook.url === "string" && hook.url !== url,
  );
  const urls = new Set(others.map((hook) => hook.url as string));
  if ("allowedHttpHookUrls" in config && existing.allowedHttpHookUrls === undefined && urls.size > 0) {
    warnings.push(
      `allowedHttpHookUrls was unset, which allows every URL; it now lists only ${allowlistPattern(url)}, so add patterns for your other http hooks (${[...urls].join(", ")}) or they stop being called`,
    );
  }
  // The same for variables: unset, each hook interpolates its own allowedEnvVars; once set, only
  // those also listed there (clients.md §3.1). They are named, not added: a name listed there
  // also lets Claude Code interpolate a variable it takes for a credential (§3.3).
  const listed = config.httpHookAllowedEnvVars;
  if (Array.isArray(listed) && existing.httpHookAllowedEnvVars == null) {
    const dropped = new Map<string, Set<string>>();
    for (const hook of others) {
      const names = Array.isArray(hook.allowedEnvVars) ? hook.allowedEnvVars : [];
      for (const name of names) {
        if (typeof name !== "string" || listed.includes(name)) continue;
        dropped.set(name, (dropped.get(name) ?? new Set()).add(hook.url as string));
      }
    }
    if (dropped.size > 0) {
      const named = [...dropped].map(([name, at]) => `${name} (${[...at].join(", ")})`).join(", ");
      warnings.push(
        `httpHookAllowedEnvVars was unset, which lets each http hook use the variables of its own allowedEnvVars; it now lists only ${listed.join(", ")}, so add your other http hooks' variables to it, ${named}, or their headers go out with those variables empty`,
      );
    }
  }
  return warnings;
}

/**
 * The other gateways' URLs of the hooks an earlier init wrote, which this run replaces: a
 * gateway that moved (another port, its deployed URL) would otherwise get every event too, and a
 * fail-closed PreToolUse on one that is gone blocks every tool.
 */
function earlierUrls(hooks: unknown): string[] {
  return [
    ...new Set(
      handlersIn(hooks)
        .map((hook) => writtenFor(hook))
        .filter((url) => url !== undefined),
    ),
  ];
}

/** Every hook in a file's `hooks`: the legacy list's entries, or those of an event map's groups. */
function handlersIn(hooks: unknown): unknown[] {
  return Array.isArray(hooks) ? hooks : Object.values(isRecord(hooks) ? hooks : {}).flatMap(groupHandlers);
}

/** The hooks of one event's groups in an event map. */
function groupHandlers(groups: unknown): unknown[] {
  return (Array.isArray(groups) ? groups : []).flatMap((group) =>
    isRecord(group) && Array.isArray(group.hooks) ? group.hooks : [],
  );
}

/** A replaced gateway's allowlist pattern is left, as other settings files may rely on it. */
function staleAllowlist(merged: Record<string, unknown>, replaced: string[], url: string): string[] {
  const list = Array.isArray(merged.allowedHttpHookUrls) ? merged.allowedHttpHookUrls : [];
  const stale = new Set(
    replaced
      .map(originPattern)
      .filter(
        (pattern) => pattern !== undefined && pattern !== allowlistPattern(url) && list.includes(pattern),
      ),
  );
  return [...stale].map(
    (pattern) =>
      `allowedHttpHookUrls still lists ${pattern}, the replaced gateway's; take it out unless another http hook posts there`,
  );
}

function mergeConfig(
  existing: Record<string, unknown>,
  config: Record<string, unknown>,
  path: string,
  client: InitClient,
): Record<string, unknown> {
  const result: Record<string, unknown> = { ...existing };
  for (const [key, value] of Object.entries(config)) {
    const current = existing[key];
    if (key === "hooks") {
      result.hooks = mergeHooks(current, value, path, client);
    } else if (Array.isArray(value)) {
      // Anything but a list there is the user's to fix: replaced, it would be lost.
      if (current != null && !Array.isArray(current))
        throw new Error(`${path}: "${key}" is not a list; left unchanged (make it a list, or delete it)`);
      const before = current ?? [];
      result[key] = [...before, ...value.filter((v) => !before.includes(v))];
    } else {
      result[key] = value;
    }
  }
  return result;
}

function mergeHooks(current: unknown, generated: unknown, path: string, client: InitClient): unknown {
  if (current == null) return generated;
  if (!Array.isArray(current) && !isRecord(current)) {
    // Neither form: saying it holds the other one would send the user after hooks it has not.
    throw new Error(
      `${path}: "hooks" is ${typeof current === "boolean" ? "true or false" : `a ${typeof current}`}, neither an event map nor a list; left unchanged (make it ${Array.isArray(generated) ? "a list" : "an object of events"}, or delete it)`,
    );
  }
  if (Array.isArray(generated)) {
    if (!Array.isArray(current)) {
      throw new Error(
        `${path} holds a v2 event map of hooks; the legacy list form cannot be merged into it: use --client deepagents for v2 hooks, or write the legacy ones to another file`,
      );
    }
    return [...current.filter((entry) => writtenFor(entry) === undefined), ...generated];
  }
  if (!isRecord(current) || !isRecord(generated)) {
    // Claude Code and deepcode know no list form: such a file is no settings of theirs to point
    // at deepagents, and its hooks, whatever wrote them, run in neither.
    if (client === "claude-code" || client === "deepcode") {
      throw new Error(
        `${path} holds "hooks" as a list, which ${client === "claude-code" ? "Claude Code" : "deepcode"} does not read (its hooks are an object of events, each a list of {"matcher", "hooks"} groups); left unchanged (make it an object of events, or delete it)`,
      );
    }
    throw new Error(
      `${path} holds "hooks" as a list (the deepagents legacy form); an event map cannot be merged into it: take the legacy hooks out of it first (or write the v2 hooks to another file, such as a project's .deepagents/hooks.json), or keep the legacy form with --client deepagents-legacy`,
    );
  }
  // Every event, not only those written now: a run with fewer --events takes back the hooks an
  // earlier run put on the others, and an event left with none of the user's goes.
  const result: Record<string, unknown> = { ...current };
  for (const event of new Set([...Object.keys(current), ...Object.keys(generated)])) {
    // Own keys only: the file's event "constructor" or "toString" is not one init writes.
    const groups = Object.hasOwn(generated, event) ? generated[event] : undefined;
    const before = Object.hasOwn(result, event) ? result[event] : undefined;
    if (groups === undefined && !Array.isArray(before)) continue;
    if (before != null && !Array.isArray(before))
      throw new Error(`${path}: hooks.${event} is not a list; left unchanged (make it a list, or delete it)`);
    const kept: unknown[] = [];
    // A group with a matcher (or any field of its own) that held init's hook scoped the gateway
    // to some tools: the new hook takes the old one's place there, or the next run would send
    // the gateway every tool call. Only a hook of init's found in a group without one, or none
    // found, adds init's own group.
    const fresh = groupHandlers(groups);
    let placed = false;
    let unscoped = false;
    for (const group of Array.isArray(before) ? before : []) {
      if (!isRecord(group) || !Array.isArray(group.hooks)) {
        kept.push(group);
        continue;
      }
      const first = group.hooks.findIndex((hook) => writtenFor(hook) !== undefined);
      const others = group.hooks.filter((hook) => writtenFor(hook) === undefined);
      if (first >= 0 && groups !== undefined && Object.keys(group).some((key) => key !== "hooks")) {
        kept.push({ ...group, hooks: [...others.slice(0, first), ...fresh, ...others.slice(first)] });
        placed = true;
        continue;
      }
      if (first >= 0) unscoped = true;
      if (others.length > 0) kept.push({ ...group, hooks: others });
    }
    if (groups === undefined && kept.length === 0) delete result[event];
    else result[event] = [...kept, ...(placed && !unscoped ? [] : ((groups as unknown[] | undefined) ?? []))];
  }
  return result;
}

/**
 * The file's own indent, its first indented line's, so that a file kept in a dotfiles repo shows
 * only what init changed in a diff; 2 spaces, as Claude Code writes, for a new or one-line file.
 */
function indentOf(text: string | undefined): string {
  return /^[ \t]+(?=\S)/m.exec(text ?? "")?.[0].slice(0, 10) ?? "  ";
}

/**
 * The file a write to `path` should replace: the end of its chain of symlinks (GNU stow, chezmoi
 * and home-manager link to links), written in place so that every link stays. Where the chain
 * ends at a file or a folder not made yet, that is where init makes it.
 */
async function writeTarget(path: string, hops = 0): Promise<string> {
  const full = resolve(path);
  try {
    return await realpath(full);
  } catch {
    // Something on the way is missing: its folder reached as the system reaches it, then its own
    // link, if it is one, followed from there. A loop stops here, and reading the file says so.
    const parent = dirname(full);
    const folder = parent === full ? full : await writeTarget(parent, hops);
    const here = join(folder, basename(full));
    const link = await readlink(here).catch(() => undefined);
    return link === undefined || hops >= 40 ? here : writeTarget(resolve(folder, link), hops + 1);
  }
}

/** A hook of the file that looks like one init wrote but is not as init writes it. */
interface KeptHook {
  /** Its event, or undefined in the legacy list. */
  readonly event: string | undefined;
  readonly url: string;
  /** The hook's fields that differ from the nearest form init writes. */
  readonly differing: readonly string[];
}

/**
 * The URL of a hook exactly as init writes it, for any URL, timeout and --fail-closed: such a hook
 * is replaced. One that differs (a header added, its timeout changed apart from its
 * `x-hookgate-timeout`, a field of its own) was edited by hand, and stays.
 */
function writtenFor(hook: unknown): string | undefined {
  if (!isRecord(hook)) return undefined;
  const url = hookUrl(hook)?.url;
  return url !== undefined && initForms(url, hook).some((form) => isDeepStrictEqual(form, hook))
    ? url
    : undefined;
}

/**
 * The forms init writes for `url` with the hook's timeout (or `seconds`): http hooks (fail-closed
 * or not), the command running `hookgate send`, the deepagents adapters, and the legacy entry,
 * whose events are whatever --events gave.
 */
function initForms(
  url: string,
  hook: Record<string, unknown>,
  seconds = typeof hook.timeout === "number" ? hook.timeout : DEFAULT_HOOK_TIMEOUT_SECONDS,
): Record<string, unknown>[] {
  const http = httpHook(url, seconds);
  const command = (line: string) => ({ type: "command", command: line, timeout: seconds });
  const events =
    Array.isArray(hook.events) && hook.events.every((e) => typeof e === "string") ? hook.events : [];
  return [
    http,
    { ...http, onFailure: "block" },
    command(sendCommandLine(url, seconds)),
    command(curlAdapter(url, seconds - 1, false)),
    command(curlAdapter(url, seconds - 1, true)),
    // The v2 adapter an earlier init wrote: curl alone.
    command(curlAdapter(url, seconds - 1, false, false)),
    { command: ["sh", "-c", curlAdapter(url, LEGACY_CURL_SECONDS, false, false)], events },
  ];
}

/**
 * The URL a hook posts to, where init would have written it: an http hook's `url`, or the URL word
 * of a `hookgate send --url URL` command or of init's curl adapter (`sh -c`-wrapped for
 * deepagents legacy); `marked` when it carries init's `x-hookgate-timeout` (send's --timeout),
 * and `seconds`, the hook's timeout init wrote beside that marker, when it can be read from it.
 */
function hookUrl(
  hook: Record<string, unknown>,
): { url: string; marked: boolean; seconds?: number | undefined } | undefined {
  if (typeof hook.url === "string") {
    const marker = isRecord(hook.headers) ? hook.headers[TIMEOUT_HEADER] : undefined;
    return {
      url: hook.url,
      marked: isRecord(hook.headers) && Object.hasOwn(hook.headers, TIMEOUT_HEADER),
      seconds: typeof marker === "string" && /^\d+$/.test(marker) ? Number(marker) : undefined,
    };
  }
  const joined = Array.isArray(hook.command) ? hook.command.join(" ") : hook.command;
  if (typeof joined !== "string") return undefined;
  const command = joined.startsWith("sh -c ") ? joined.slice("sh -c ".length) : joined;
  const word = String.raw`('(?:[^']|'\\'')*'|[^\s')]+)`;
  const unquoted = (quoted: string) =>
    quoted.startsWith("'") ? quoted.slice(1, -1).replaceAll(`'\\''`, "'") : quoted;
  // The commands wait a second less than the hook's timeout init wrote.
  const send = new RegExp(String.raw`^hookgate send --url ${word}(?=\s|$)(?: --timeout (\d+)$)?`).exec(
    command,
  );
  if (send?.[1] !== undefined) {
    const seconds = send[2] === undefined ? undefined : Number(send[2]) + 1;
    return { url: unquoted(send[1]), marked: seconds !== undefined, seconds };
  }
  // The checked adapter (deepagents v2) captures curl's output, the URL its last word inside
  // `$(…)`; the plain one (legacy, and the v2 adapter init wrote before) is curl itself.
  const adapter = new RegExp(
    String.raw`^(?:answer=\$\()?curl -sS .* -H '${TIMEOUT_HEADER}: (\d+)' .*--data-binary @-(?: -w ' %\{http_code\}')? ${word}(?:\)| |$)`,
  ).exec(command);
  return adapter?.[2] === undefined
    ? undefined
    : { url: unquoted(adapter[2]), marked: true, seconds: Number(adapter[1]) + 1 };
}

/**
 * The hooks an earlier init may have written and someone edited since: init's marker, or this
 * gateway's URL, on a hook not as init writes it. They stay, and init says so: such a hook on
 * this URL sends the gateway each of its events twice. A user's own hook to another URL, without
 * the marker (a `hookgate send` to another gateway, a command that mentions a URL), is theirs and
 * goes unmentioned.
 */
function keptLookalikes(hooks: unknown, url: string): KeptHook[] {
  const lists: [string | undefined, unknown[]][] = Array.isArray(hooks)
    ? [[undefined, hooks]]
    : Object.entries(isRecord(hooks) ? hooks : {}).map(([event, groups]) => [event, groupHandlers(groups)]);
  const kept: KeptHook[] = [];
  for (const [event, list] of lists) {
    for (const hook of list) {
      if (!isRecord(hook) || writtenFor(hook) !== undefined) continue;
      const posts = hookUrl(hook);
      if (posts === undefined || (!posts.marked && posts.url !== url)) continue;
      // The forms with the timeout init's marker gives first: a timeout changed by hand, the
      // marker left as init wrote it, differs in its timeout, not in the marker.
      const forms = [
        ...(posts.seconds === undefined ? [] : initForms(posts.url, hook, posts.seconds)),
        ...initForms(posts.url, hook),
      ];
      const differing = forms
        .map((form) =>
          [...new Set([...Object.keys(form), ...Object.keys(hook)])].filter(
            (key) => !isDeepStrictEqual(form[key], hook[key]),
          ),
        )
        .reduce((fewest, keys) => (keys.length < fewest.length ? keys : fewest));
      kept.push({ event, url: posts.url, differing });
    }
  }
  return kept;
}

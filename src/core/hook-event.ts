/**
 * The one internal shape every agent request becomes, whatever client sent it.
 * Parsing and dialect detection live in events.ts; this file only names the shape.
 */

/**
 * Which client's wire format a request speaks (reference/clients.md §1):
 * - `claude-code`: Claude Code http hooks.
 * - `deepcode`: deepcode http hooks, a sparse Claude Code subset with `tool_desc` and no `transcript_path`.
 * - `deepagents`: deepagents v2 (`dcode`) command hooks relayed by an adapter; Claude Code-shaped bodies.
 * - `deepagents-legacy`: deepagents dotted events (`{"event": "tool.use", ...}`), fire-and-forget.
 */
export type Dialect = "claude-code" | "deepcode" | "deepagents" | "deepagents-legacy";

export const DIALECTS: readonly Dialect[] = ["claude-code", "deepcode", "deepagents", "deepagents-legacy"];

export interface HookEvent {
  /** `hook_event_name`, or the dotted `event` of a deepagents legacy body. */
  readonly name: string;
  readonly dialect: Dialect;
  /** False for an event name this dialect does not define (clients add events; we accept them). */
  readonly known: boolean;
  /** The parsed body exactly as received, unknown keys included. */
  readonly payload: Readonly<Record<string, unknown>>;
  readonly sessionId?: string;
  readonly transcriptPath?: string;
  readonly cwd?: string;
  /** Tool events only: `tool_name` (deepagents legacy: its native name, e.g. `write_file`). */
  readonly toolName?: string;
  /** Tool events only: `tool_input` (deepagents legacy: `tool_args`). */
  readonly toolInput?: Readonly<Record<string, unknown>>;
}

/**
 * The one internal shape every agent request becomes, whatever client sent it.
 * Parsing and dialect detection live in events.ts; this file names the shape, and which
 * deepagents dialect a body on either deepagents route speaks (`routedDialect`).
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
const DIALECT_NAMES: ReadonlySet<string> = new Set(DIALECTS);
/** Whether `name` (a route's or a query's, as the agent sent it) is one of the dialects. */
export function isDialect(name: string): name is Dialect {
  return DIALECT_NAMES.has(name);
}

/**
 * Either deepagents route takes either deepagents shape; the body tells (its keys; for a body not
 * read, the event's name sniffed from it: `PreToolUse`, `tool.use`). Legacy adapters may post
 * dotted events to the deepagents route, and a v2 hook posted to the legacy route reads its
 * answer as any v2 hook does: answered in the legacy dialect (an empty body, nothing judged), its
 * PreToolUse would be let through unjudged, a request error's too.
 */
export function routedDialect(
  dialect: Dialect | undefined,
  body: unknown,
  eventName?: string,
): Dialect | undefined {
  if (!dialect?.startsWith("deepagents")) return dialect;
  if (body === undefined && eventName !== undefined)
    return eventName.includes(".") ? "deepagents-legacy" : "deepagents";
  if (body === null || typeof body !== "object") return dialect;
  const record = body as Record<string, unknown>;
  if (typeof record.event === "string" && record.hook_event_name === undefined) return "deepagents-legacy";
  if (typeof record.hook_event_name === "string" && record.event === undefined) return "deepagents";
  return dialect;
}

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

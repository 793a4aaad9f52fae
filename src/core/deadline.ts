/**
 * How long a request may take before hookgate must answer. The answer has to arrive before the
 * client gives up, or the client cancels the hook and lets the action through (clients.md §2.2),
 * so the policy's `defaults.deadlineMs` is capped per event below each client's own limit, and
 * below the hook's configured timeout when the request carries it in `x-hookgate-timeout`
 * (no client sends its timeout by itself; `hookgate init` writes that header).
 */
import type { Dialect } from "./hook-event.js";

/** What is kept back from a client's limit for the network and the rendering of the answer. */
export const DEADLINE_MARGIN_MS = 250;

/**
 * The longest a request may take unless `x-hookgate-timeout` says the hook waits longer: Claude
 * Code's default http hook timeout (and deepagents v2's command hook default) is 600 s, past which
 * the client cancels the hook and lets the action through, so a longer deadline only ever answers
 * too late. A hook configured with a longer timeout waits that long, and its header says so.
 */
export const MAX_DEADLINE_MS = 600_000 - DEADLINE_MARGIN_MS;
/**
 * The shortest deadline: one written shorter (`"deadlineMs": 5`, seconds meant) is raised to it,
 * so a request is still answered from its rules; `check` names it.
 */
export const MIN_DEADLINE_MS = 50;
/** setTimeout's limit, past which Node fires a timer after 1 ms: no deadline is longer. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * Each client's own limit on one event, where it is shorter than the 600 s default. `timed`: the
 * request says the hook's own timeout (`x-hookgate-timeout`), which every client waits in place
 * of its event defaults; only deepagents' legacy dispatcher and Claude Code's SessionEnd budget
 * cut a hook sooner whatever its timeout.
 */
function clientLimitMs(event: string, dialect: Dialect, timed: boolean): number | undefined {
  // The legacy dispatcher (and the migration adapter) kill a hook after 5 s (clients.md §8).
  if (dialect === "deepagents-legacy") return 5000;
  // Claude Code 2.1.3xx's SessionEnd hooks share a 1.5 s budget, which a longer per-hook timeout
  // in the settings raises up to 60 s (clients.md §2.2): a hook whose own timeout the header gives
  // is waited that long, at most 60 s. deepcode and deepagents have no such budget.
  if (event === "SessionEnd" && dialect === "claude-code") return timed ? 60_000 : 1500;
  if (timed) return undefined;
  // deepagents v2 runs its command hooks for 600 s by default, 30 s on UserPromptSubmit (§6.4),
  // unless the handler sets its own `timeout` (its hooks/runner.py: `handler.timeout if
  // handler.timeout is not None else default_timeout`), as `hookgate init` writes beside the header.
  if (dialect === "deepagents") return event === "UserPromptSubmit" ? 30_000 : undefined;
  // deepcode waits the hook's own timeout on every event, 30 s when the hook sets none (its
  // src/hooks.ts: `(hook.timeout ?? 30) * 1000`); it has none of Claude Code's event limits.
  if (dialect === "deepcode") return 30_000;
  // Claude Code 2.1.332's defaults for a hook with no timeout (clients.md §2.2: `e.timeout ?
  // e.timeout*1000 : <the event's default>`).
  if (event === "MessageDisplay") return 10_000;
  if (event === "UserPromptSubmit") return 30_000;
  return undefined;
}

/**
 * The request's deadline: the policy's, below the client's limits, and below `runtimeLeftMs`, what
 * the runtime itself leaves for answering (a Lambda invocation ends at its timeout, and its client
 * then gets a 5xx, which Claude Code reads as "let the action through").
 */
export function requestDeadlineMs(
  event: string,
  dialect: Dialect,
  policyDeadlineMs: number,
  timeoutHeader: string | undefined,
  runtimeLeftMs = Number.POSITIVE_INFINITY,
): number {
  const seconds = headerSeconds(timeoutHeader);
  // What the client waits: the hook's own timeout when the header gives it, else the default.
  const waits = seconds === undefined ? MAX_DEADLINE_MS : seconds * 1000 - DEADLINE_MARGIN_MS;
  let limit = Math.min(policyDeadlineMs, runtimeLeftMs, waits, MAX_TIMER_MS);
  const client = clientLimitMs(event, dialect, seconds !== undefined);
  if (client !== undefined) limit = Math.min(limit, client - DEADLINE_MARGIN_MS);
  return Math.max(MIN_DEADLINE_MS, limit);
}

/**
 * How long the client is known to wait for the answer: the hook's own timeout as
 * `x-hookgate-timeout` gives it (below a client's fixed limit), less the margin; undefined without
 * the header, when only the policy's deadline is known. Work done after the answer is built (a
 * Lambda's enqueue) may use the time up to it.
 */
export function clientWaitsMs(
  event: string,
  dialect: Dialect,
  timeoutHeader: string | undefined,
): number | undefined {
  if (headerSeconds(timeoutHeader) === undefined) return undefined;
  return requestDeadlineMs(event, dialect, Number.POSITIVE_INFINITY, timeoutHeader);
}

/**
 * The header's seconds: its first comma-separated value (a header sent twice arrives joined as
 * `3, 3`), which may end in `s` (`3s`, as a hook's timeout is written by hand). Anything else that
 * is not a positive number is refused, and the policy's deadline applies.
 */
function headerSeconds(timeoutHeader: string | undefined): number | undefined {
  const first = timeoutHeader
    ?.split(",")[0]
    ?.trim()
    .replace(/(?<=\d|\.)s$/, "");
  const seconds = first === undefined || first === "" ? Number.NaN : Number(first);
  return Number.isFinite(seconds) && seconds > 0 ? seconds : undefined;
}

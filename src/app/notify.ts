/**
 * The `notify` action: one delivery job per sink for each event a notify rule applies to, put
 * on the queue. Where the runtime's `defer` returns the work's promise (Node, whose send is one
 * append to the intake journal), the answer waits for it, so an answered event is already held
 * when the process dies; Workers and Lambda defer it past the answer (waitUntil, the invocation's
 * settle). A failed enqueue is logged and counted, by sink: of a send that failed in part, only the
 * jobs not sent (the others are enqueued); the decision is answered anyway.
 */
import { createNotification, type DeliveryJob } from "../core/delivery.js";
import { errorMessage } from "../core/errors.js";
import type { HookEvent } from "../core/hook-event.js";
import { maskedName, maskString, maskValue, scrubSecretsAcrossControls } from "../core/mask.js";
import type { Clock, Logger, Metrics } from "../core/ports.js";
import { maybeSentBy, notSentBy, type Queue } from "../core/queue.js";
import { type ToldFailure, toldFailure } from "../core/recurring-failure.js";
import type { Correlation, Notification } from "../core/sinks.js";
import { capString, shorten, sliceCodePoints, utf8Length, wellFormed } from "../core/truncate.js";

/**
 * What the gateway remembers of a session, to enrich later events (SQLite on Node, KV on Workers).
 * Its session and tool ids are keys the notifier makes (`teamKey`): never empty, at most
 * `MAX_ID_BYTES` long, and each names the team whose event it came from.
 */
export interface SessionStore {
  /**
   * One tool call under each of its keys (the session's, and the session's with the tool's
   * name), in one write where the store can: one SQLite transaction, one commit on the answer's
   * path; one KV put a key, and for a key KV refuses, a mark under another that every isolate
   * reads (kv.ts `refusedKey`).
   */
  rememberTool(
    sessionIds: readonly string[],
    tool: { toolName: string; summary: string },
    at: number,
  ): Promise<void>;
  /**
   * `at`: when it is read; what was written a day or more before it is not given (KV's expiry).
   * `writtenAfter`: what was written at or before it is not given either (`StoreFailures`).
   * `"refused"`: the latest call under it was not written, as the store knows where another
   * isolate's write was refused (KV: kv.ts `refusedKey`); none is given, as for `writtenAfter`.
   */
  lastTool(
    sessionId: string,
    at?: number,
    writtenAfter?: number,
  ): Promise<{ toolName: string; summary: string } | "refused" | undefined>;
  /** deepagents legacy tool calls: each half stored by tool_id, whichever arrives first. */
  rememberToolHalf(toolId: string, half: ToolHalf, at: number): Promise<void>;
  toolHalves(toolId: string, at?: number): Promise<{ use?: ToolHalf; result?: ToolHalf }>;
}

/**
 * What a store that writes each key on its own (KV, one put a key) rejects with when it wrote some
 * of a call's keys and not others: the keys not written, with the store's error as its message.
 * The keys it did write hold the call, and a prompt in this isolate is told it from them.
 */
export class UnwrittenKeysError extends Error {
  constructor(
    readonly keys: readonly string[],
    cause: unknown,
  ) {
    super(errorMessage(cause), { cause });
    this.name = "UnwrittenKeysError";
  }
}

/** By name, not class, as queue.ts `isCopySent`: a bundle that splits chunks may hold the class twice. */
function unwrittenKeys(e: unknown): readonly string[] | undefined {
  return e instanceof Error && e.name === "UnwrittenKeysError" ? (e as UnwrittenKeysError).keys : undefined;
}

export type ToolHalf =
  | { readonly kind: "use"; readonly toolName: string; readonly toolArgs: Readonly<Record<string, unknown>> }
  | { readonly kind: "result"; readonly status: string; readonly output: string };

export interface NotifyDeps {
  /** Only sending is needed here, so a push-consumer queue (Cloudflare) fits as it is. */
  readonly queue: Pick<Queue<DeliveryJob>, "send">;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly metrics?: Metrics | undefined;
  readonly sessions?: SessionStore | undefined;
  /**
   * How the session store's failures have been told, and which keys' tool calls last failed to be
   * remembered (`sessionStoreFailures`): one per process or isolate, shared by the notifiers made
   * there (Workers makes one per request), so a store that fails every call is told when it
   * starts, once a minute and when it ends, not once per notifier, and a prompt handled by another
   * request's notifier is not told a call from before its session's failed write. A notifier of
   * its own when absent.
   */
  readonly storeFailures?: StoreFailures | undefined;
  /**
   * Runs the enqueue: returning its promise makes the answer wait for it (Node); returning
   * nothing runs it after the answer (waitUntil on Workers, the invocation's settle on Lambda).
   * `answerBy` is when the answer must be out (Lambda holds it for the enqueue until then at most);
   * `work` names what the task enqueues, for a log line about a task still running then.
   */
  readonly defer: (task: () => Promise<void>, answerBy?: number, work?: DeferredWork) => Promise<void> | void;
}

/** The decision a deferred enqueue is for, and its rules' sinks (the notify input itself). */
export type DeferredWork = Pick<NotifyInput, "decisionId" | "notify">;

export interface NotifyInput {
  readonly decisionId: string;
  readonly event: HookEvent;
  readonly team: string;
  readonly decision: string;
  /** What the client does with `decision` where that differs (`none`): Notification's. */
  readonly clientDecision?: string | undefined;
  readonly reason: string | undefined;
  readonly notify: readonly { readonly ruleId: string; readonly sinks: readonly string[] }[];
  /** Whether any rule notifies on Notification events: only then are PreToolUse calls remembered. */
  readonly remember: boolean;
  /** The policy's secret values, scrubbed from what is sent and stored (policy.ts `secrets`). */
  readonly secrets?: readonly string[] | undefined;
  /** When the answer must be out, on the clock's monotonic time: the request's deadline. */
  readonly answerBy?: number | undefined;
  /**
   * When a session store call still running is given up as failed, on the clock's monotonic time,
   * and the notification goes out without it: the request's deadline (src/core/deadline.ts), or
   * later, what the runtime leaves the request (a Worker's work after the answer).
   */
  readonly deadline?: number | undefined;
}

export interface Notifier {
  /**
   * A promise when the runtime's `defer` gives one: the answer waits for it. Never rejects.
   * Called only for an event with something to do (handle-hook.ts `notifyWork`): a notify rule
   * applied, a tool call to remember, a deepagents tool half to correlate.
   */
  notify(input: NotifyInput): Promise<void> | void;
}

const PERMISSION_PROMPTS = new Set(["permission_prompt", "permission"]);
/** How Claude Code's permission_prompt message names its tool (fixtures/claude-code, Notification). */
const PERMISSION_MESSAGE = "Claude needs your permission to use ";

/**
 * The tool a permission prompt's message names, if it names one. An agent's calls made in
 * parallel (subagents of one session, reads run at once) reach the gateway while the prompt waits,
 * so the session's last tool call is often another tool than the prompt's.
 */
function toolNamedBy(event: HookEvent): string | undefined {
  const message = event.payload.message;
  if (typeof message !== "string" || !message.startsWith(PERMISSION_MESSAGE)) return undefined;
  const name = message.slice(PERMISSION_MESSAGE.length);
  return name === "" ? undefined : capString(name, NAME_MAX);
}

/**
 * The longest tool name, tool id or status a notification carries: they come from the agent, and
 * a job must fit its queue's message (Cloudflare's 128 KB) with room for the event, which alone
 * is cut to fit (delivery.ts `fitDeliveryJob`).
 */
const NAME_MAX = 256;
/**
 * The longest key a session or tool id is remembered under (`teamKey`), in UTF-8 bytes: a client's
 * ids are UUIDs and `toolu_…`, and a Workers KV key (the id behind a prefix) holds at most 512.
 * Checked here, for every store, so an id is remembered on every runtime or on none; a longer one
 * gets no enrichment.
 */
export const MAX_ID_BYTES = 400;

/**
 * The key a session or tool id is remembered under: the team's name with it, so that one team's
 * events never read nor write what another team's remembered, even with the other's session id
 * in hand (ids come from the agent, and two teams may share one gateway); with a tool's name, the
 * key of that session's last call of that tool. Undefined when there is no id or the key would pass
 * `MAX_ID_BYTES`.
 */
function teamKey(team: string, id: unknown, toolName?: string): string | undefined {
  if (typeof id !== "string" || id === "") return undefined;
  const key = JSON.stringify(toolName === undefined ? [team, id] : [team, id, toolName]);
  return key.length <= MAX_ID_BYTES && utf8Length(key) <= MAX_ID_BYTES ? key : undefined;
}

/** What one process or isolate knows of the session store's failures (`sessionStoreFailures`). */
export interface StoreFailures {
  /** How `operation`'s failures are told, one `ToldFailure` for each. */
  told(operation: string): ToldFailure;
  /**
   * A tool call could not be remembered under `keys` at `at`: the store still holds what was
   * written there before (a `sessions.sqlite` on a full disk, KV refusing writes), which may be
   * hours old and another command than the one a prompt asks about.
   */
  unremembered(keys: readonly string[], at: number): void;
  /** It was remembered under `keys` at `at`. */
  remembered(keys: readonly string[], at: number): void;
  /**
   * The time at or before which what `key` holds is not known to be its last call (-Infinity when
   * no write of it failed here): a prompt is told only a call written after it.
   */
  staleUpTo(key: string): number;
  /** Whether the latest write of `key` seen here failed (of the keys still kept). */
  writeFailed(key: string): boolean;
}

/**
 * The keys whose latest write failed that are kept, each under 400 bytes: past it the oldest is
 * forgotten, and every key's calls up to its failure are taken as stale.
 */
const MAX_UNREMEMBERED = 4096;

/**
 * A store that fails every call (a damaged file, a KV outage) fails every tool call's: told when
 * it starts, when its error changes and then once a minute, not once or twice per event. Each
 * operation's are told apart: on a full disk the writes fail and the reads work, and one read
 * working told the store working again and the next write's failure as new, two lines for every
 * permission prompt while the disk stayed full.
 */
export function sessionStoreFailures(logger: Logger, clock: Clock): StoreFailures {
  const byOperation = new Map<string, ToldFailure>();
  // Each key whose latest write failed, with when; what is stale for every key, once one is forgotten.
  const unremembered = new Map<string, number>();
  let staleForAll = Number.NEGATIVE_INFINITY;
  return {
    told(operation) {
      let told = byOperation.get(operation);
      if (told === undefined) {
        told = toldFailure(
          logger,
          "warn",
          "session store failed; the notification goes out without it",
          "session store works again",
          clock.monotonic,
        );
        byOperation.set(operation, told);
      }
      return told;
    },
    unremembered(keys, at) {
      for (const key of keys) {
        const failedAt = Math.max(at, unremembered.get(key) ?? at);
        unremembered.delete(key); // kept in order of failure: the oldest first out
        unremembered.set(key, failedAt);
      }
      for (const [key, failedAt] of unremembered) {
        if (unremembered.size <= MAX_UNREMEMBERED) break;
        unremembered.delete(key);
        staleForAll = Math.max(staleForAll, failedAt);
      }
    },
    remembered(keys, at) {
      for (const key of keys) {
        const failedAt = unremembered.get(key);
        if (failedAt !== undefined && failedAt < at) unremembered.delete(key);
      }
    },
    staleUpTo(key) {
      return Math.max(staleForAll, unremembered.get(key) ?? Number.NEGATIVE_INFINITY);
    },
    writeFailed(key) {
      return unremembered.has(key);
    },
  };
}

export function createNotifier(deps: NotifyDeps): Notifier {
  const storeFailures = deps.storeFailures ?? sessionStoreFailures(deps.logger, deps.clock);
  /**
   * Enrichment only adds context: when the session store fails, log it, count it and send anyway.
   * `readsStore`: the task always calls the store, so that it worked says the operation works
   * again (told once, and its next failure is told as new); a correlation calls it only for some
   * events, and answers something only when it did.
   */
  async function enrich<T>(
    what: string,
    deadline: number | undefined,
    task: () => Promise<T>,
    readsStore = true,
  ): Promise<T | undefined> {
    try {
      const value = await byDeadline(task(), deadline, deps.clock.monotonic);
      if (readsStore || value !== undefined) storeFailures.told(what).worked({ what });
      return value;
    } catch (e) {
      storeFailures.told(what).failed(errorMessage(e), { what });
      // Counted at every failure, as the log tells only some of them.
      deps.metrics?.increment("hookgate_session_store_failed_total", { operation: what });
      return undefined;
    }
  }

  async function run(input: NotifyInput): Promise<void> {
    const { event } = input;
    const sessions = deps.sessions;
    const now = deps.clock.now();
    const sessionKey = teamKey(input.team, event.sessionId);
    // A call the client denies never runs, and no prompt asks about it: remembered, it would be
    // named in place of the call a prompt is for (an agent's parallel calls of one tool, or a
    // prompt for a tool whose calls the hook is not sent), the command told being one that never ran.
    const denied = (input.clientDecision ?? input.decision) === "deny";
    if (
      sessions &&
      input.remember &&
      event.name === "PreToolUse" &&
      sessionKey &&
      event.toolName &&
      !denied
    ) {
      const toolName = capString(event.toolName, NAME_MAX);
      // Stored as a sink's body shows it (sinks.ts `sinkJson`), a lone surrogate as U+FFFD: SQLite
      // writes one as bytes no UTF-8 reader takes, read back as three U+FFFD, where KV's JSON keeps
      // it, and one call was named two ways on Node and Workers.
      const tool = {
        toolName: wellFormed(shownToolName(event.toolName, input.secrets)),
        summary: wellFormed(summarize(event, input.secrets)),
      };
      // Under the session, and under the session and the tool's name, for a prompt naming it.
      const byName = teamKey(input.team, event.sessionId, toolName);
      const keys = byName === undefined ? [sessionKey] : [sessionKey, byName];
      // A write given up at the deadline may land yet: what it wrote is not known to be fresh.
      let unwritten: readonly string[] = keys;
      const remembered = await enrich("rememberTool", input.deadline, async () => {
        await sessions.rememberTool(keys, tool, now).catch((e: unknown) => {
          unwritten = unwrittenKeys(e) ?? keys;
          throw e;
        });
        return true;
      });
      if (remembered === undefined) {
        // The keys a store says it wrote hold this call: taken as failed too, a prompt for the
        // tool whose key took it was told no call in this isolate, and this call in every other.
        storeFailures.unremembered(unwritten, now);
        storeFailures.remembered(
          keys.filter((key) => !unwritten.includes(key)),
          now,
        );
      } else storeFailures.remembered(keys, now);
    }
    // Only deepagents' legacy halves are paired (correlate): for any other event the call, its
    // deadline's timer and the race against it, cost a notify rule's event about 2 µs for nothing.
    const correlation =
      sessions && event.dialect === "deepagents-legacy"
        ? await enrich(
            "correlate",
            input.deadline,
            () => correlate(event, input.team, sessions, now, input.secrets),
            false,
          )
        : undefined;
    if (input.notify.length === 0) return;
    let related: Notification["relatedTool"];
    const type = event.payload.notification_type;
    if (
      sessions &&
      event.name === "Notification" &&
      typeof type === "string" &&
      PERMISSION_PROMPTS.has(type) &&
      sessionKey
    ) {
      const named = toolNamedBy(event);
      const byName = named === undefined ? undefined : teamKey(input.team, event.sessionId, named);
      // A name the prompt gives that no tool call was remembered by (a tool's display name, a
      // key over the bound) leaves the session's last tool call, as a message naming none does.
      // Not one whose tool's latest call failed to be remembered: each call is written under
      // both keys at once, so the session's calls since are another tool's.
      related = await enrich("lastTool", input.deadline, async () => {
        if (byName !== undefined) {
          const last = await sessions.lastTool(byName, now, storeFailures.staleUpTo(byName));
          if (last === "refused") return undefined;
          if (last !== undefined || storeFailures.writeFailed(byName)) return last;
        }
        const last = await sessions.lastTool(sessionKey, now, storeFailures.staleUpTo(sessionKey));
        return last === "refused" ? undefined : last;
      });
    }
    const jobs = new Map<string, DeliveryJob>();
    const id = `evt_${input.decisionId}`;
    // The event is masked once, whatever the number of sinks; each job differs only in its rule.
    const base = {
      ...createNotification(
        id,
        deps.clock.now(),
        event,
        {
          team: input.team,
          decision: input.decision,
          clientDecision: input.clientDecision,
          reason: input.reason,
          ruleId: "",
        },
        related,
        input.secrets,
      ),
      ...(correlation ? { correlation } : {}),
    };
    for (const { ruleId, sinks } of input.notify) {
      for (const sink of sinks) {
        if (jobs.has(sink)) continue; // one message per sink per event, whichever rules named it
        jobs.set(sink, { id: `${id}.${sink}`, sink, notification: { ...base, ruleId } });
      }
    }
    const all = [...jobs.values()];
    try {
      await deps.queue.send(all.map((job) => ({ id: job.id, body: job, group: job.sink })));
    } catch (e) {
      // A send can fail in part (SQS's batches, Cloudflare's): the jobs it put on the queue are
      // counted as enqueued, and only the others are logged and counted as failed.
      const notSent = notSentBy(e);
      const [failed, sent] = partition(all, (job) => notSent === undefined || notSent.has(job.id));
      for (const job of sent) deps.metrics?.increment("hookgate_enqueued_total", { sink: job.sink });
      // A request that got no answer (a timeout, a connection cut) may have been taken all the
      // same: those jobs are named apart, as they may yet be delivered.
      const maybe = maybeSentBy(e);
      enqueueFailed(
        input,
        failed.map((job) => job.sink),
        sent.map((job) => job.sink),
        e,
        failed.filter((job) => maybe.has(job.id)).map((job) => job.sink),
      );
      return;
    }
    for (const job of all) deps.metrics?.increment("hookgate_enqueued_total", { sink: job.sink });
  }

  /**
   * Logged with the sinks whose jobs are not on the queue (and those that are, and of the first
   * those that may be), each counted.
   */
  function enqueueFailed(
    input: NotifyInput,
    sinks: readonly string[],
    sent: readonly string[],
    e: unknown,
    maybeSent: readonly string[] = [],
  ) {
    deps.logger.log("error", "enqueue failed; the decision was answered anyway", {
      decisionId: input.decisionId,
      event: input.event.name,
      sinks,
      ...(sent.length > 0 ? { sent } : {}),
      ...(maybeSent.length > 0 ? { maybeSent } : {}),
      error: errorMessage(e),
    });
    for (const sink of sinks) deps.metrics?.increment("hookgate_enqueue_failed_total", { sink });
  }

  return {
    notify(input) {
      return deps.defer(
        () =>
          run(input).catch((e) =>
            enqueueFailed(input, [...new Set(input.notify.flatMap((n) => n.sinks))], [], e),
          ),
        input.answerBy,
        input,
      );
    },
  };
}

/**
 * The store's answer, or a rejection once the request's deadline has passed. Workers KV has no
 * timeout of its own: a call that hung held the notification, enqueued after it, until the
 * runtime ended the request's waitUntil, and the job was lost. The call itself runs on; only the
 * wait for it ends.
 */
function byDeadline<T>(task: Promise<T>, deadline: number | undefined, monotonic: () => number): Promise<T> {
  if (deadline === undefined) return task;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(
      () => reject(new Error("no answer within the request's deadline")),
      Math.max(0, deadline - monotonic()),
    );
  });
  return Promise.race([task, late]).finally(() => clearTimeout(timer));
}

function partition<T>(items: readonly T[], test: (item: T) => boolean): [T[], T[]] {
  const yes: T[] = [];
  const no: T[] = [];
  for (const item of items) (test(item) ? yes : no).push(item);
  return [yes, no];
}

/**
 * deepagents fires tool.use and tool.result fire-and-forget, so they arrive in either order
 * (deepagents-hooks.txt). Each half is stored by tool_id; the notification of the second half
 * carries the first. Masked before it is stored.
 */
async function correlate(
  event: HookEvent,
  team: string,
  sessions: SessionStore,
  now: number,
  secrets: readonly string[] = [],
): Promise<Correlation | undefined> {
  const toolId = event.payload.tool_id;
  const toolKey = teamKey(team, toolId);
  if (toolKey === undefined || typeof toolId !== "string") return undefined;
  let half: ToolHalf | undefined;
  if (event.name === "tool.use" && event.toolName) {
    half = {
      kind: "use",
      toolName: shownToolName(event.toolName, secrets),
      toolArgs: maskValue(event.toolInput ?? {}, secrets) as Record<string, unknown>,
    };
  } else if (event.name === "tool.result") {
    const output = event.payload.tool_output;
    half = {
      kind: "result",
      // "success" or "error" from deepagents; anything else is the agent's text, masked and cut.
      status: maskValue(String(event.payload.tool_status ?? "unknown"), secrets, NAME_MAX) as string,
      // Masked whole, then cut: cut first, a key block lost its END line and was shown.
      output:
        typeof output === "string"
          ? sliceCodePoints(maskString(scrubSecretsAcrossControls(output, secrets)), 500)
          : "",
    };
  }
  if (!half) return undefined;
  // Written before the other half is read: of two halves handled at once (Workers, where each
  // waits on KV), each read then follows both writes or one, so at least one of them is paired;
  // read first, both read nothing and neither was.
  await sessions.rememberToolHalf(toolKey, half, now);
  const known = await sessions.toolHalves(toolKey, now);
  const other = half.kind === "use" ? known.result : known.use;
  if (!other) return { toolId };
  return other.kind === "use"
    ? { toolId, toolUse: { toolName: other.toolName, toolArgs: other.toolArgs } }
    : { toolId, toolResult: { status: other.status, output: other.output } };
}

/**
 * A tool's name as a message shows it: the agent's text (an MCP server's name is the user's to
 * choose), masked as the event's own copy is and cut with the marker a cut name ends in
 * (maskedName), where the name the prompt's key reads stays as sent.
 */
function shownToolName(name: string, secrets: readonly string[] = []): string {
  return maskedName(name, secrets, NAME_MAX);
}

/** The longest summary of a remembered tool call, in UTF-16 units. */
const SUMMARY_LENGTH = 300;

/**
 * One line a person recognises: the command, the file, or the URL of a tool call; masked whole
 * and scrubbed of the policy's secrets, then cut (cut first, a key block lost its END line and
 * was shown).
 */
export function summarize(event: HookEvent, secrets: readonly string[] = []): string {
  const input = event.toolInput ?? {};
  const pick = ["command", "file_path", "notebook_path", "url", "path", "pattern", "query"].find(
    (k) => typeof input[k] === "string",
  );
  // Masked as the audit line masks it (a whole input by its keys too: `{"pass": …}`), then cut.
  // The mask keeps one character more than the summary, so its own cut marker never shows.
  const text = pick
    ? (maskValue(String(input[pick]), secrets, SUMMARY_LENGTH + 1) as string)
    : JSON.stringify(maskValue(input, secrets, SUMMARY_LENGTH + 1));
  return shorten(text, SUMMARY_LENGTH);
}

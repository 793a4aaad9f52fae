/**
 * The session store on Workers: the last tool call per session, with when it was written, and each
 * half of a deepagents legacy tool call by tool id, in a KV namespace, forgotten a day after they
 * were written (KV's own expiry). KV is eventually consistent: a write can take up to 60 s to be
 * seen in another location, and a key takes one write a second, so of a session's tool calls
 * started within one second (an agent's parallel calls) the first may be the one remembered, and
 * a call whose write is refused is marked under a key of its own, so that no isolate names the
 * older one for it (`refusedKey`), nor one written just after the mark (`MARK_COVERS_MS`). The
 * events of one session normally reach one location seconds apart. Nothing here counts or
 * decides: remembering is best effort, after the answer; a failed read or write rejects, as the other
 * stores' do, and the notifier logs it (once a minute while it goes on) and sends the notification
 * without it. KV calls have no timeout: the notifier gives up one still running at the request's
 * deadline, or 2 s after the answer at least when the decision spent it (a slow prompt rule),
 * within what the Worker leaves the request (`storeDeadline` in src/app/handle-hook.ts).
 */
import { type SessionStore, type ToolHalf, UnwrittenKeysError } from "../../app/notify.js";

/** What this store needs of a KV namespace binding (a subset of workers-types' `KVNamespace`). */
export interface KvNamespaceLike {
  get(key: string, type: "json"): Promise<unknown>;
  put(key: string, value: string, options?: { expirationTtl?: number }): Promise<void>;
}

/** How long KV keeps what is written: one day, like the SQLite store's retention on Node. */
const TTL_SECONDS = 24 * 3600;

/**
 * How long after a mark's time a call written under its key is not given either: KV takes one
 * write a second on the mark's key too, so a later refused call's mark may be refused within a
 * second of it, leaving it older than a call written in between (the one before the call a prompt
 * asks about); and a second more for the time from a call to its mark's write. A call written that
 * soon after a mark is given as none, not taken for the next.
 */
const MARK_COVERS_MS = 2000;

/** A key is a prefix of at most 12 bytes and the notifier's key of at most 400 (the team and the id, notify.ts `MAX_ID_BYTES`): under KV's 512. */
const keyOf = (prefix: string, id: string) => `${prefix}:${id}`;

export function createKvSessionStore(kv: KvNamespaceLike): SessionStore {
  async function put(key: string, value: unknown): Promise<void> {
    await kv.put(key, JSON.stringify(value), { expirationTtl: TTL_SECONDS });
  }
  async function get(key: string): Promise<Record<string, unknown> | undefined> {
    const value = await kv.get(key, "json");
    return value !== null && typeof value === "object" ? (value as Record<string, unknown>) : undefined;
  }
  // The two halves of a tool call live under two keys, so neither write can undo the other.
  const halfKey = (toolId: string, kind: ToolHalf["kind"]) => keyOf(`half-${kind}`, toolId);
  const toolKey = (id: string) => keyOf("tool", id);
  // When a call could not be written under a key: the notifier keeps it for its own isolate only
  // (notify.ts `StoreFailures`), and an isolate that did not see the write refused named the older
  // call the key still holds, another command than the one its prompt asks about.
  const refusedKey = (id: string) => keyOf("toolfail", id);

  return {
    async rememberTool(sessionIds, tool, at) {
      const value = { toolName: tool.toolName, summary: tool.summary, at };
      const writes = await Promise.allSettled(sessionIds.map((id) => put(toolKey(id), value)));
      const refused = sessionIds.filter((_, i) => writes[i]?.status === "rejected");
      if (refused.length === 0) return;
      // Another key, so not refused by KV's one write a second to the key refused (its 429); a KV
      // that refuses every write refuses it too, which leaves it to the isolate that saw it.
      await Promise.allSettled(refused.map((id) => put(refusedKey(id), { at })));
      // Naming the keys not written: the others hold the call, for a prompt in this isolate too.
      throw new UnwrittenKeysError(
        refused,
        (writes.find((w) => w.status === "rejected") as PromiseRejectedResult).reason,
      );
    },
    async lastTool(sessionId, _at, writtenAfter = Number.NEGATIVE_INFINITY) {
      const [value, refused] = await Promise.all([get(toolKey(sessionId)), get(refusedKey(sessionId))]);
      const after =
        typeof refused?.at === "number" ? Math.max(writtenAfter, refused.at + MARK_COVERS_MS) : writtenAfter;
      const toolName = value?.toolName;
      const summary = value?.summary;
      // One an earlier hookgate wrote carries no time: of unknown age, given only without a bound.
      const fresh = typeof value?.at === "number" ? value.at > after : after === Number.NEGATIVE_INFINITY;
      if (typeof toolName === "string" && typeof summary === "string" && fresh) return { toolName, summary };
      // Told apart from none: a prompt naming this key's tool is then told no other tool's call.
      return after > writtenAfter ? "refused" : undefined;
    },
    async rememberToolHalf(toolId, half) {
      await put(halfKey(toolId, half.kind), half);
    },
    async toolHalves(toolId) {
      const [use, result] = await Promise.all([get(halfKey(toolId, "use")), get(halfKey(toolId, "result"))]);
      return {
        ...(use?.kind === "use" ? { use: use as unknown as ToolHalf } : {}),
        ...(result?.kind === "result" ? { result: result as unknown as ToolHalf } : {}),
      };
    },
  };
}

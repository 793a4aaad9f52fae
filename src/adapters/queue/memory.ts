/**
 * An in-memory queue for unit tests only: nothing survives the process. Same semantics as the
 * SQLite queue (queue/sqlite.ts): leases with a receipt, stale receipts change nothing, a lease
 * that runs out makes the job visible again, a duplicate id already queued is ignored.
 */
import type { DeadLetter, OutgoingMessage, Queue, ReceivedMessage } from "../../core/queue.js";

interface Row<T> {
  readonly id: string;
  readonly body: T;
  readonly group: string | undefined;
  readonly seq: number;
  /** Ready time, or the end of the current lease: the job is visible once this has passed. */
  visibleAt: number;
  attempts: number;
  holds: number;
  receipt: string | undefined;
}

export interface MemoryQueueOptions {
  readonly now?: () => number;
}

export function createMemoryQueue<T>(options: MemoryQueueOptions = {}): Queue<T> {
  const now = options.now ?? Date.now;
  const rows = new Map<string, Row<T>>();
  /** Each dead letter, always a job here, with the group it had, which a replay gives back. */
  const dead = new Map<string, DeadLetter<T> & { readonly body: T; readonly group: string | undefined }>();
  /** The ids of the dead letters asked for (each once), or of all of them. */
  const chooseDead = (ids: readonly string[] | undefined) =>
    ids === undefined ? [...dead.keys()] : [...new Set(ids)].filter((id) => dead.has(id));
  const missingDead = (ids: readonly string[] | undefined) =>
    ids === undefined ? [] : [...new Set(ids)].filter((id) => !dead.has(id));
  let seq = 0;
  let receipts = 0;
  let closed = false;

  function open(): void {
    if (closed) throw new Error("the memory queue is closed");
  }

  /** The row this receipt still leases, or undefined when the receipt is stale. */
  function leased(message: ReceivedMessage<T>): Row<T> | undefined {
    const row = rows.get(message.id);
    return row !== undefined && row.receipt === message.receipt ? row : undefined;
  }

  function enqueue(id: string, body: T, delayMs: number, group?: string): boolean {
    if (rows.has(id)) return false;
    rows.set(id, {
      id,
      group,
      body: structuredClone(body),
      seq: seq++,
      visibleAt: now() + Math.max(0, delayMs),
      attempts: 0,
      holds: 0,
      receipt: undefined,
    });
    return true;
  }

  return {
    skipsGroups: true,
    async send(messages) {
      open();
      for (const m of messages as readonly OutgoingMessage<T>[])
        enqueue(m.id, m.body, m.delayMs ?? 0, m.group);
    },

    async receive(max, visibilityMs, skipGroups = []) {
      open();
      const at = now();
      const due = [...rows.values()]
        .filter((row) => row.visibleAt <= at && (row.group === undefined || !skipGroups.includes(row.group)))
        .sort((a, b) => a.visibleAt - b.visibleAt || a.seq - b.seq)
        .slice(0, Math.max(0, max));
      return due.map((row) => {
        row.visibleAt = at + Math.max(0, visibilityMs);
        row.attempts += 1;
        row.receipt = `lease-${++receipts}`;
        return {
          id: row.id,
          body: structuredClone(row.body),
          attempts: row.attempts,
          holds: row.holds,
          receipt: row.receipt,
        };
      });
    },

    async ack(message) {
      open();
      return leased(message) !== undefined && rows.delete(message.id);
    },

    async retry(message, delayMs) {
      open();
      const row = leased(message);
      if (!row) return false;
      row.visibleAt = now() + Math.max(0, delayMs);
      row.receipt = undefined;
      return true;
    },

    async hold(message, delayMs, _reason, options) {
      open();
      const row = leased(message);
      if (!row) return false;
      row.visibleAt = now() + Math.max(0, delayMs);
      row.receipt = undefined;
      row.attempts = Math.max(0, row.attempts - 1);
      if (options?.addsHold !== false) row.holds += 1;
      return true;
    },

    async deadLetter(message, error) {
      open();
      const row = leased(message);
      if (!row) return false;
      rows.delete(row.id);
      const { id, body, group } = row;
      dead.set(row.id, { id, body, attempts: message.attempts, error, failedAt: now(), group });
      return true;
    },

    async listDead(limit = 100) {
      open();
      return [...dead.values()]
        .sort((a, b) => a.failedAt - b.failedAt)
        .slice(0, Math.max(0, limit))
        .map(({ id, body, attempts, error, failedAt }) => ({
          id,
          body: structuredClone(body),
          attempts,
          error,
          failedAt,
        }));
    },

    async replayDead(ids, keep) {
      open();
      const missing = missingDead(ids);
      let replayed = 0;
      for (const id of chooseDead(ids)) {
        const letter = dead.get(id);
        if (!letter || (keep !== undefined && !keep(letter.body))) continue;
        dead.delete(id);
        enqueue(id, letter.body, 0, letter.group);
        replayed++;
      }
      return { count: replayed, missing };
    },

    async dropDead(ids) {
      open();
      const missing = missingDead(ids);
      const chosen = chooseDead(ids);
      for (const id of chosen) dead.delete(id);
      return { count: chosen.length, missing };
    },

    async close() {
      closed = true;
    },
  };
}

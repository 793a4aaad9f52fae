/**
 * `hookgate dlq list [--limit N] | replay | drop [--id ID]... [--all]`: the dead-letter queue of
 * the embedded SQLite queue (`--data-dir`, default .hookgate) or of SQS (`--sqs-queue-url`,
 * `--sqs-dlq-url`, optional `--sqs-endpoint` for a local SQS-compatible server). `drop` deletes
 * for good: the SQLite file keeps dead letters until they are replayed or dropped (SQS also
 * expires them after the DLQ's retention period). `list` shows up to `--limit` dead letters
 * (default 1,000), oldest first, each error masked as a log line is, and says when more remain (on SQS, which has no browse call, the
 * oldest of those it read); `--json` prints them as an array, with no such note. A replay on SQS
 * that stops part way (a page whose send fails) exits 1 saying how many it replayed first, and
 * how many of the page it stopped on may be on the queue too when that page's send got no
 * answer; the dead letters of that page it did not send, or may have, are visible again at once.
 * A drop that stops says how many it deleted, and how many of the page it stopped on may be gone
 * too when that page's delete got no answer. `replay --policy FILE` leaves the dead letters of
 * sinks that policy has not, and names them by sink on stderr.
 */
import { accessSync, constants, realpathSync, statSync } from "node:fs";
import { dirname, join } from "node:path";
import { parseArgs } from "node:util";
import type { DeliveryJob } from "../core/delivery.js";
import { errorMessage } from "../core/errors.js";
import { escapeControls } from "../core/escape-controls.js";
import { maskString } from "../core/mask.js";
import { type DeadSwept, type Queue, sweptBefore, UNREADABLE_PREFIX } from "../core/queue.js";
import { withoutUserinfo } from "../core/url-userinfo.js";
import { didYouMean, refuseEmpty } from "./arg-errors.js";
import { UsageError } from "./usage-error.js";

export async function dlqCommand(
  args: readonly string[],
  io: { readonly out: (text: string) => void; readonly err: (text: string) => void },
): Promise<number> {
  const out = io.out;
  const [sub, ...rest] = args;
  if (sub !== "list" && sub !== "replay" && sub !== "drop")
    throw new UsageError(
      `dlq takes "list", "replay" or "drop"${didYouMean(sub ?? "", ["list", "replay", "drop"])}`,
    );
  const { values } = parseArgs({
    args: [...rest],
    options: {
      "data-dir": { type: "string" },
      id: { type: "string", multiple: true },
      all: { type: "boolean" },
      limit: { type: "string" },
      json: { type: "boolean" },
      "sqs-queue-url": { type: "string" },
      "sqs-dlq-url": { type: "string" },
      "sqs-endpoint": { type: "string" },
      policy: { type: "string" },
    },
  });
  const limit = listLimit(values.limit);
  // The three share one option table: an option of another subcommand is refused, not ignored
  // (`dlq list --id ID` listed every dead letter; `dlq replay --all --json | jq` read a text line).
  if (sub === "list") {
    if (values.id !== undefined || values.all)
      throw new UsageError(
        `dlq list takes no ${values.all ? "--all" : "--id"}: it lists every dead letter, up to --limit`,
      );
  } else {
    if (values.json)
      throw new UsageError(
        `dlq ${sub} takes no --json: it prints one line, "${sub === "replay" ? "replayed" : "dropped"} N jobs"`,
      );
    if (values.limit !== undefined) throw new UsageError(`dlq ${sub} takes no --limit`);
    if (!values.all && !values.id) throw new UsageError(`dlq ${sub} needs --id ID (repeatable) or --all`);
    if (values.all && values.id) throw new UsageError(`dlq ${sub} takes --id or --all, not both`);
  }
  if (values.policy !== undefined && sub !== "replay") throw new UsageError(`dlq ${sub} takes no --policy`);
  // An unset variable's: "cannot read : ENOENT" and "no queue at queue.sqlite" named no option,
  // and an empty --data-dir was the working directory, whose queue.sqlite may be another's.
  refuseEmpty(
    "--policy",
    values.policy,
    "give the policy file, or leave --policy out to replay every dead letter",
  );
  refuseEmpty(
    "--data-dir",
    values["data-dir"],
    "give the --data-dir that hookgate serve uses, or leave it out for .hookgate",
  );
  const sinks = values.policy === undefined ? undefined : await policySinks(values.policy, io);
  if (typeof sinks === "number") return sinks;
  const queue = await openQueue(values, sub !== "list", io.err);
  try {
    if (sub === "list") {
      // One more than shown, to tell whether more remain.
      // The error masked as it is shown, as a log line is: a dead letter stored before the error
      // of a delivery that threw was masked holds it as it was (a URL with its token, a header).
      // So is the text of a message that is no job (SQS: not a dead letter; SQLite: a job that
      // does not parse), which --json shows as it came, where a job was masked before it was queued.
      const dead = (await queue.listDead(limit + 1)).map((d) => ({
        ...d,
        body: typeof d.body === "string" ? maskString(d.body) : d.body,
        error: maskString(d.error),
      }));
      const more = dead.length > limit;
      if (more) dead.length = limit;
      if (values.json) out(`${JSON.stringify(dead)}\n`);
      else if (dead.length === 0) out("the dead-letter queue is empty\n");
      else {
        for (const d of dead) {
          const when = new Date(d.failedAt).toISOString();
          // The event's name is the agent's, the error may quote a sink's answer: escaped, no
          // control sequence of theirs reaches the terminal, nor a line break forges a line.
          const line = `${d.id}  ${jobSummary(d.body)}  attempts=${d.attempts}  at=${when}`;
          out(`${escapeControls(line)}\n  ${escapeControls(d.error)}\n`);
        }
        if (more) out(`(${limit} shown; more remain: pass a higher --limit)\n`);
      }
      return 0;
    }
    const ids = values.all ? undefined : values.id;
    /** The dead letters left because the policy has not their sink: job id to sink. */
    const left = new Map<string, string>();
    const keep =
      sinks === undefined
        ? undefined
        : (body: unknown) => {
            const job = body as Partial<DeliveryJob> | null;
            if (typeof job?.sink !== "string" || typeof job.id !== "string" || sinks.has(job.sink))
              return true;
            left.set(job.id, job.sink);
            return false;
          };
    let swept: DeadSwept;
    try {
      swept = sub === "replay" ? await queue.replayDead(ids, keep) : await queue.dropDead(ids);
    } catch (e) {
      if (left.size > 0) io.err(leftNote(left, values.policy ?? ""));
      const swept = sweptBefore(e);
      if (swept === undefined) throw e;
      const { done, unsure } = swept;
      const jobs = `${done} job${done === 1 ? "" : "s"}`;
      // Stopped part way (SQS, a page at a time): what went out is on the queue already, and a
      // second replay of it would send it twice; so may what a send with no answer sent.
      io.err(
        sub === "replay"
          ? `hookgate: dlq replay stopped: ${errorMessage(e)}\n` +
              `replayed ${jobs} before it stopped (on the queue again: not to be replayed twice` +
              (unsure > 0
                ? `; and ${unsure} of the page it stopped on may be on the queue too, their send got no ` +
                  "answer, though they are still dead letters: a replay sends them again"
                : "") +
              "); the others are still dead letters (hookgate dlq list). Fix what the error names " +
              "and replay again, or drop a dead letter SQS will not take back (hookgate dlq drop --id ID).\n"
          : `hookgate: dlq drop stopped: ${errorMessage(e)}\n` +
              `dropped ${jobs} before it stopped` +
              (unsure > 0 ? ` (and ${unsure} of the page it stopped on may be gone too)` : "") +
              "; the others are still dead letters (hookgate dlq list). Fix what the error names and drop again.\n",
      );
      return 1;
    }
    const { count } = swept;
    out(`${sub === "replay" ? "replayed" : "dropped"} ${count} job${count === 1 ? "" : "s"}\n`);
    if (left.size > 0) io.err(leftNote(left, values.policy ?? ""));
    // An id that `list` shows for a DLQ message that is no job (SQS) is never replayed: said as
    // such, with what to do, rather than as an id that is no dead letter, which sent the user
    // back to the list that showed it.
    // Only one the queue has: a mistyped one, or one dropped already, is no dead letter (below).
    const jobless =
      sub === "replay"
        ? [...new Set(ids)].filter((id) => id.startsWith(UNREADABLE_PREFIX) && !swept.missing.includes(id))
        : [];
    for (const id of jobless)
      io.err(
        `${id} is a message on the DLQ that is no job (hookgate dlq list shows its text): it cannot be replayed; hookgate dlq drop --id ${id} deletes it\n`,
      );
    // An id that is not a dead letter is a mistake worth an exit code (a typo, or already done),
    // named: among several ids, a count alone left the user to find which.
    const missed = swept.missing;
    if (missed.length > 0) {
      const n = missed.length;
      const named = missed.map((id) => escapeControls(id)).join(", ");
      io.err(
        `${n} of the ids given ${n === 1 ? "is not a dead letter" : "are not dead letters"} (mistyped, or replayed or dropped already): ${named}; see hookgate dlq list\n`,
      );
    }
    // An id given and left was asked for and not done; with --all, leaving them is what --policy asks.
    return missed.length > 0 || jobless.length > 0 || (ids !== undefined && left.size > 0) ? 1 : 0;
  } finally {
    await queue.close();
  }
}

/**
 * The sinks of the policy `dlq replay --policy` names, or exit code 1 once it said on stderr that
 * the file does not load.
 */
async function policySinks(
  path: string,
  io: { readonly err: (text: string) => void },
): Promise<ReadonlySet<string> | number> {
  const { loadCommandPolicy } = await import("./command-policy.js");
  const loaded = await loadCommandPolicy(path, io.err, 1);
  return typeof loaded === "number" ? loaded : new Set(Object.keys(loaded.policy.document.sinks ?? {}));
}

/**
 * What a replay under `--policy` left, by sink: replayed, each would be dead-lettered again at
 * once, its error then saying only that the sink is gone where it said why it failed.
 */
function leftNote(left: ReadonlyMap<string, string>, policyPath: string): string {
  const bySink = new Map<string, number>();
  for (const sink of left.values()) bySink.set(sink, (bySink.get(sink) ?? 0) + 1);
  const named = [...bySink].map(([sink, n]) => `"${escapeControls(sink)}" (${n})`).join(", ");
  const n = left.size;
  return `hookgate: left ${n} dead letter${n === 1 ? "" : "s"} whose sink ${policyPath} no longer has: ${named}; replayed, ${n === 1 ? "it" : "they"} would be dead-lettered again at once. Add the sink back (and reload serve) and replay again, or drop ${n === 1 ? "it" : "them"} (hookgate dlq drop --id ID)\n`;
}

/** Dead letters `list` shows when no --limit is given. */
const DEFAULT_LIST_LIMIT = 1000;
/**
 * SQS pages through the DLQ 10 at a time, each page hidden for 30 s while the listing reads on
 * (sqs.ts): 10,000 is about what one listing reads before its first pages come back, where it
 * stops.
 */
const MAX_LIST_LIMIT = 10_000;

function listLimit(text: string | undefined): number {
  if (text === undefined) return DEFAULT_LIST_LIMIT;
  const n = Number(text);
  if (!/^\d+$/.test(text) || n < 1 || n > MAX_LIST_LIMIT)
    throw new UsageError(`--limit takes a whole number from 1 to ${MAX_LIST_LIMIT}, not "${text}"`);
  return n;
}

async function openQueue(
  values: Record<string, unknown>,
  write: boolean,
  err: (text: string) => void,
): Promise<Queue<DeliveryJob>> {
  const queueUrl = values["sqs-queue-url"] as string | undefined;
  const dlqUrl = values["sqs-dlq-url"] as string | undefined;
  const endpoint = values["sqs-endpoint"] as string | undefined;
  // Any --sqs-* option given, even empty (an unset variable: `--sqs-queue-url "$QUEUE_URL"`),
  // asks for SQS: read as none, the command went to the SQLite queue of --data-dir (.hookgate),
  // where `dlq drop --all` deleted dead letters that were not the ones meant.
  if (queueUrl !== undefined || dlqUrl !== undefined || endpoint !== undefined) {
    const empty = Object.entries({
      "--sqs-queue-url": queueUrl,
      "--sqs-dlq-url": dlqUrl,
      "--sqs-endpoint": endpoint,
    })
      .filter(([, value]) => value?.trim() === "")
      .map(([option]) => option);
    if (empty.length > 0)
      throw new UsageError(
        `${empty.join(" and ")} ${empty.length > 1 ? "are" : "is"} empty (an unset variable?): give each its URL, or leave the --sqs-* options out for the SQLite queue of --data-dir`,
      );
    if (!queueUrl || !dlqUrl) throw new UsageError("SQS needs both --sqs-queue-url and --sqs-dlq-url");
    const { createSqsQueue, createSqsClientForLocal, createSqsClientForShell, queueUrlRegion } = await import(
      "../adapters/queue/sqs.js"
    );
    const [queueRegion, dlqRegion] = [queueUrlRegion(queueUrl), queueUrlRegion(dlqUrl)];
    const client = endpoint ? createSqsClientForLocal(endpoint) : createSqsClientForShell(queueUrl);
    // The delivery function signs its dead letters' calls for the DLQ's region where it differs
    // from the queue's, and for its own, AWS_REGION, where the DLQ's URL names none
    // (lambda-config.ts `clientFor`): its calls here are signed so too.
    const deadLetterClient =
      !endpoint && dlqRegion !== queueRegion ? createSqsClientForShell(dlqUrl) : undefined;
    if (!endpoint) {
      await sayUnnamedRegion(client, queueUrl, queueRegion, "queue", err);
      await sayUnnamedRegion(deadLetterClient ?? client, dlqUrl, dlqRegion, "DLQ", err);
    }
    return createSqsQueue<DeliveryJob>({
      client,
      queueUrl,
      deadLetterQueueUrl: dlqUrl,
      ...(deadLetterClient && { deadLetterClient }),
    });
  }
  const dataDir = (values["data-dir"] as string | undefined) ?? ".hookgate";
  const path = join(dataDir, "queue.sqlite");
  // Not a usage error: the command line is fine, the directory holds no queue (exit 1, one line).
  const problem = await queueFileProblem(path, write);
  if (problem !== undefined) throw new Error(problem);
  const { createSqliteQueue } = await import("../adapters/queue/sqlite.js");
  return createSqliteQueue<DeliveryJob>({ path });
}

/**
 * Said once, before its calls, of a queue URL whose host names no region (a DNS alias of the SQS
 * endpoint): its calls are signed for the SDK's own region, AWS_REGION or the profile's, which SQS
 * refuses for a queue of another, in words that name no region. With none at all, the call's own
 * failure says to set AWS_REGION.
 */
async function sayUnnamedRegion(
  client: { readonly config: { readonly region: () => Promise<string> } },
  url: string,
  named: string | undefined,
  whose: "queue" | "DLQ",
  err: (text: string) => void,
): Promise<void> {
  if (named !== undefined) return;
  const region = await client.config.region().catch(() => undefined);
  if (region)
    err(
      `hookgate dlq: ${withoutUserinfo(url)} names no region; its calls are signed for ${region} (AWS_REGION, or the profile's): set AWS_REGION to the ${whose}'s if it is another\n`,
    );
}

/**
 * Why `path` is not a queue file `serve` keeps that this user can use, with what to do; or
 * undefined. Looked at before it is opened: opening makes the queue's tables in any SQLite file
 * (another program's database was listed as an empty dead-letter queue, and changed), and
 * SQLite's own errors name no cause ("unable to open database file" for a directory or a file
 * this user cannot read, "attempt to write a readonly database" for a read-only folder).
 */
async function queueFileProblem(path: string, write: boolean): Promise<string | undefined> {
  const other = "pass the --data-dir that hookgate serve uses";
  const asServe = "run hookgate dlq as the user hookgate serve runs as";
  let size: number;
  try {
    const stat = statSync(path);
    if (stat.isDirectory()) return `${path} is a directory, not the queue file: ${other}`;
    if (!stat.isFile()) return `${path} is not a file: ${other}`;
    size = stat.size;
  } catch (e) {
    const code = (e as { code?: unknown }).code;
    if (code === "ENOENT" || code === "ENOTDIR") return `no queue at ${path}: ${other}`;
    return `cannot reach ${path} (${errorMessage(e)}): ${asServe}`;
  }
  try {
    accessSync(path, write ? constants.R_OK | constants.W_OK : constants.R_OK);
  } catch {
    return `cannot ${write ? "read and write" : "read"} ${path} (its mode or owner does not let this user): ${asServe}`;
  }
  // SQLite writes the queue's -wal and -shm files beside it (beside the file a link names), and
  // removes them on close.
  const folder = dirname(realpathSync(path));
  try {
    accessSync(folder, constants.W_OK);
  } catch {
    return `${folder} is read-only to this user, and SQLite writes its -wal and -shm files there: ${asServe}, or make the folder writable`;
  }
  // An empty file is a queue `serve` began (its file is made before SQLite writes to it).
  if (size === 0) return undefined;
  const { default: Database } = await import("better-sqlite3");
  let db: InstanceType<typeof Database> | undefined;
  try {
    db = new Database(path, { readonly: true, fileMustExist: true });
    const table = db
      .prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'queue_jobs'")
      .get();
    return table === undefined
      ? `${path} is an SQLite database but not a hookgate queue: ${other}`
      : undefined;
  } catch (e) {
    if ((e as { code?: unknown }).code === "SQLITE_NOTADB")
      return `${path} is not a hookgate queue (SQLite: ${errorMessage(e)}): ${other}`;
    return undefined; // left for the queue's open to refuse, naming why
  } finally {
    db?.close();
  }
}

/** Sink and event of a dead job; a job stored as text that does not parse says so (its error tells why). */
function jobSummary(body: unknown): string {
  const job = body as Partial<DeliveryJob> | string | null;
  if (job === null || typeof job !== "object") return "(a job that does not parse)";
  return `sink=${job.sink}  event=${job.notification?.eventName}`;
}

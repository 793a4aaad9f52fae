/**
 * wrangler.toml as wrangler reads it (its own config reader, the one `wrangler deploy` uses),
 * checked for what the Worker's deliveries rely on and cannot check themselves: the Worker has
 * no binding that tells it its queue consumer's settings.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { unstable_getVarsForDev, unstable_readConfig } from "wrangler";
import { MAX_RETRY_SCHEDULE_LENGTH } from "../../src/core/policy-schema.js";
import { ROOT } from "../support/process.js";
import { tempDir } from "../support/temp.js";

/** What this file reads of the config (wrangler's own types leave these entries untyped). */
interface Queues {
  readonly producers?: readonly { readonly binding: string; readonly queue: string }[];
  readonly consumers?: readonly {
    readonly queue: string;
    readonly max_retries?: number;
    readonly dead_letter_queue?: string;
    readonly retry_delay?: number;
  }[];
}

const config: { queues: Queues } = unstable_readConfig(
  { config: join(ROOT, "wrangler.toml") },
  { hideWarnings: true },
);

describe("wrangler.toml's queue consumer", () => {
  const producers = config.queues.producers ?? [];
  const jobsQueue = producers.find((p) => p.binding === "HOOKGATE_QUEUE")?.queue;
  const consumer = (config.queues.consumers ?? []).find((c) => c.queue === jobsQueue);

  it("consumes the queue the notifier produces on", () => {
    expect(jobsQueue).toBe("hookgate-jobs");
    expect(consumer).toBeDefined();
  });

  it("lets a job make every retry of the longest schedule a policy may hold before Cloudflare moves it", () => {
    // Cloudflare counts every delivery in `attempts`, which the consumer reads as the job's, and
    // moves a message after `max_retries` retries (3 when unset) whatever the Worker made of it:
    // below the schedule's retries, a failing job left before its last ones, without its error.
    expect(consumer?.max_retries).toBeGreaterThanOrEqual(MAX_RETRY_SCHEDULE_LENGTH);
    expect(consumer?.max_retries).toBeLessThanOrEqual(100);
  });

  it("brings a job back once past the longest schedule, for the Worker to dead-letter with why", () => {
    // A job whose last attempt ended the Worker is dead-lettered by it, unsent, at its next
    // delivery; with no retry left for that, Cloudflare moved it without a reason.
    expect(consumer?.max_retries).toBeGreaterThanOrEqual(MAX_RETRY_SCHEDULE_LENGTH + 1);
  });

  it("spaces out the redeliveries of a batch the Worker never settled", () => {
    // A batch whose invocation ended (a crash, the CPU time limit) comes back after retry_delay,
    // 0 when unset: a crash loop then spent each job's attempts and max_retries within minutes.
    // The Worker's own retries give their delay, so it changes no retry schedule. At most 12 h.
    expect(consumer?.retry_delay).toBeGreaterThanOrEqual(60);
    expect(consumer?.retry_delay).toBeLessThanOrEqual(43_200);
  });

  it("has Cloudflare move what it retires to the DLQ the Worker dead-letters to, not delete it", () => {
    // Without a dead_letter_queue, a message past max_retries is deleted.
    const dlq = producers.find((p) => p.binding === "HOOKGATE_DLQ")?.queue;
    expect(dlq).toBe("hookgate-jobs-dlq");
    expect(consumer?.dead_letter_queue).toBe(dlq);
  });
});

describe("README's wrangler dev steps", () => {
  const readme = readFileSync(join(ROOT, "README.md"), "utf8");
  const steps = /```sh\n(printf "HOOKGATE_POLICY=[\s\S]*?)```/.exec(readme)?.[1] ?? "";

  it("write a policy a fresh clone holds into .dev.vars, with a line for each variable it reads", () => {
    // Run from the clone: a file it lacks made jq fail and left HOOKGATE_POLICY empty there.
    const file = /jq -c \. ([^\s)]+)/.exec(steps)?.[1];
    expect(file).toBeDefined();
    expect(existsSync(join(ROOT, file ?? ""))).toBe(true);
    const policy = JSON.parse(readFileSync(join(ROOT, file ?? ""), "utf8"));
    const read = (policy.auth?.tokens ?? []).flatMap((t: { env?: string }) => (t.env ? [t.env] : []));
    const written = [...steps.matchAll(/echo "(\w+)=/g)].map((m) => m[1]);
    expect(written).toEqual(read);
  });

  // The README's line run as it is (jq is what it needs), read back by wrangler's own reader.
  const hasJq = spawnSync("jq", ["--version"]).status === 0;
  it.skipIf(!hasJq)("write a policy with an apostrophe into .dev.vars as wrangler dev reads it", () => {
    // wrangler ends a quoted .dev.vars value at its first ', which cut a policy's "Don't" there:
    // the Worker got no JSON and answered every hook CONFIG_INVALID.
    const line = steps.split("\n")[0] ?? "";
    const dir = tempDir("dev-vars");
    mkdirSync(join(dir, "examples"));
    const policy = {
      version: 1,
      rules: [{ id: "no-push", on: "PreToolUse", decide: "deny", reason: `Don't # push, it's "main"` }],
    };
    writeFileSync(join(dir, "examples", "policy.json"), JSON.stringify(policy, null, 2));
    execFileSync("bash", ["-c", line], { cwd: dir });
    const vars = unstable_getVarsForDev(join(dir, "wrangler.toml"), undefined, {}, undefined, true);
    const value = (vars.HOOKGATE_POLICY as { value?: string } | undefined)?.value ?? "";
    expect(JSON.parse(value)).toEqual(policy);
  });
});

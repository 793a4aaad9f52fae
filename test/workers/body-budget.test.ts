/**
 * The bytes of hook bodies one isolate holds at once, inside workerd (read-body.ts
 * WORKERS_BODY_BUDGET_BYTES): an isolate serves many requests in its 128 MB, and bodies arriving
 * or waiting on a prompt rule's model held without bound until it ran out and answered a 5xx,
 * which Claude Code lets through. Past the budget a hook is answered at once in its fail mode
 * (BODY_UNREADABLE), as on Node; the bytes come back when the bodies holding them are answered.
 */
import { createExecutionContext, env, waitOnExecutionContext } from "cloudflare:test";
import { afterEach, beforeEach, describe, expect, it, type MockInstance, vi } from "vitest";
import worker, { type WorkerEnv } from "../../src/entry/workers.js";
import {
  BODY_DEADLINE_MS,
  WORKERS_BODY_BUDGET_BYTES,
  WORKERS_MAX_BODY_BYTES,
} from "../../src/http/read-body.js";
import { MODEL_ORIGIN } from "./fanout-policy.js";

const HEAD =
  '{"hook_event_name":"PreToolUse","session_id":"s","cwd":"/p","tool_name":"Write","tool_input":{"file_path":"/p/a.txt","content":"';
const TAIL = '"}}';
/** Half the budget, in one body within the Workers ceiling: two of them fill the budget. */
const HALF = WORKERS_BODY_BUDGET_BYTES / 2 - TAIL.length;
const CHUNK = 1024 * 1024;

/** Its own text per test: the Worker keeps a policy per isolate and text. */
const policyOf = (marker: string, rules: unknown[]) => ({
  version: 1,
  defaults: { onError: "deny", maxBodyBytes: WORKERS_MAX_BODY_BYTES },
  rules: [{ id: "note", description: marker, on: "PreToolUse", decide: "ask", reason: "judged" }, ...rules],
  models: {
    m: { provider: "anthropic", model: "claude-haiku-4-5", apiKey: "env:JUDGE_KEY", url: "env:JUDGE_URL" },
  },
});

/** The lines logged at info, the decision lines among them. */
let logged: MockInstance<typeof console.log>;

beforeEach(() => {
  // Each decision line holds the event's 16 MiB of input.
  logged = vi.spyOn(console, "log").mockImplementation(() => {});
  // The model calls given up at their rule's timeoutMs.
  vi.spyOn(console, "warn").mockImplementation(() => {});
});

afterEach(() => {
  vi.restoreAllMocks();
});

/** The first `size` bytes of a PreToolUse for a Write, the rest (TAIL) left to send. */
function headOf(size: number): Uint8Array {
  const bytes = new Uint8Array(size).fill(0x61);
  bytes.set(new TextEncoder().encode(HEAD), 0);
  return bytes;
}

function post(policy: object, body: Uint8Array | ReadableStream<Uint8Array>): Promise<Response> {
  const ctx = createExecutionContext();
  return worker
    .fetch(
      new Request("https://hookgate.test/v1/hooks/claude-code", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body,
      }),
      {
        ...env,
        HOOKGATE_POLICY: JSON.stringify(policy),
        JUDGE_KEY: "sk-workerd",
        JUDGE_URL: `${MODEL_ORIGIN}/v1/messages`,
      } as WorkerEnv,
      ctx,
    )
    .then(async (res) => {
      await waitOnExecutionContext(ctx);
      return res;
    });
}

/**
 * A hook whose body sends all but its last bytes, in 1 MiB chunks, and stalls: `read` once the
 * Worker has read what came and asks for more, `finish` sends the rest.
 */
function stalled(policy: object, size: number) {
  const head = headOf(size);
  let asked: () => void = () => {};
  const read = new Promise<void>((resolve) => {
    asked = resolve;
  });
  let finish: () => void = () => {};
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      for (let at = 0; at < size; at += CHUNK) controller.enqueue(head.slice(at, at + CHUNK));
      finish = () => {
        controller.enqueue(new TextEncoder().encode(TAIL));
        controller.close();
      };
    },
    pull() {
      asked();
      return new Promise<void>(() => {});
    },
  });
  return { answer: post(policy, body), read, finish: () => finish() };
}

/** Two stalled hooks of half the budget each, once the Worker has read what came of both. */
async function fillBudget(policy: object) {
  const first = stalled(policy, HALF);
  await first.read;
  const second = stalled(policy, HALF);
  await second.read;
  return [first, second] as const;
}

const small = () => new TextEncoder().encode(`${HEAD}hello${TAIL}`);

/** A whole hook of half the budget. */
function halfBody(): Uint8Array {
  const body = headOf(HALF + TAIL.length);
  body.set(new TextEncoder().encode(TAIL), HALF);
  return body;
}

/**
 * A policy whose rule `rule` (its id, and a mode if any) asks the model that holds its calls
 * for 60 s, giving up after 15 s.
 */
const stuckModelPolicy = (marker: string, rule: { id: string; mode?: string }) =>
  policyOf(marker, [
    {
      ...rule,
      on: "PreToolUse",
      prompt: { text: `stuck-model ${marker}: ok? $ARGUMENTS`, model: "m", timeoutMs: 15_000 },
    },
  ]);

/** Returns once the model has been called for the policy marked `marker`. */
async function untilModelCalled(marker: string): Promise<void> {
  for (;;) {
    const seen = (await (await env.NETWORK.fetch("https://control.test/requests")).json()) as {
      body: string;
    }[];
    if (seen.some((r) => r.body.includes(marker))) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

interface Answer {
  systemMessage?: string;
  hookSpecificOutput: { permissionDecision: string; permissionDecisionReason?: string };
}

async function expectRefused(res: Response) {
  expect(res.status).toBe(200);
  expect(res.headers.get("x-hookgate-error")).toBe("BODY_UNREADABLE");
  const answer = (await res.json()) as Answer;
  expect(answer.hookSpecificOutput.permissionDecision).toBe("deny");
  expect(answer.systemMessage).toContain(
    "the gateway holds as many bytes of other requests' bodies as it may, so this one was not read; it may be sent again",
  );
}

async function expectJudged(res: Response) {
  expect(res.status).toBe(200);
  expect(res.headers.get("x-hookgate-error")).toBeNull();
  const answer = (await res.json()) as Answer;
  expect(answer.hookSpecificOutput.permissionDecision).toBe("ask");
}

describe("the hook bodies an isolate holds at once", () => {
  it("past the budget, while bodies arrive, answer a hook at once in its fail mode; answered, they give their bytes back", async () => {
    const policy = policyOf(crypto.randomUUID(), []);
    const [first, second] = await fillBudget(policy);
    // Before, it was read too: nothing bounded what the isolate's requests held together.
    await expectRefused(await post(policy, small()));
    first.finish();
    second.finish();
    await expectJudged(await first.answer);
    await expectJudged(await second.answer);
    await expectJudged(await post(policy, small()));
  });

  it("stop counting the bodies of requests that never end once their time is past, as the runtime's stopped ones", async () => {
    // A request the runtime stops (past its CPU limit, or 30 s after its client hung up) runs no
    // `finally`: two 16 MiB bodies held their bytes for the isolate's life, and every later hook
    // was refused. These two never end while the isolate's clock moves past the 60 s a body may
    // take to arrive, and the grace after it.
    const policy = policyOf(crypto.randomUUID(), []);
    const [first, second] = await fillBudget(policy);
    await expectRefused(await post(policy, small()));
    const now = performance.now.bind(performance);
    const later = vi.spyOn(performance, "now").mockImplementation(() => now() + BODY_DEADLINE_MS + 1000);
    await expectJudged(await post(policy, small()));
    later.mockRestore();
    // Read on past their time after all (the runtime would have stopped them, the body deadline
    // ended them): not read further, and what they held is not given back a second time.
    first.finish();
    second.finish();
    await expectRefused(await first.answer);
    await expectRefused(await second.answer);
    await expectJudged(await post(policy, small()));
  });

  it("count the body of a hook waiting on a prompt rule's model", async () => {
    const marker = crypto.randomUUID();
    // Its model holds the call for 60 s; the rule gives up after 15 s, in its onError.
    const policy = stuckModelPolicy(marker, { id: "judge" });
    const waiting = post(policy, halfBody());
    // Its model called: the hook holds its body until the model answers.
    await untilModelCalled(marker);
    const arriving = stalled(policy, HALF);
    await arriving.read;
    await expectRefused(await post(policy, small()));
    arriving.finish();
    await arriving.answer;
    const answer = (await (await waiting).json()) as Answer;
    expect(answer.hookSpecificOutput.permissionDecision).toBe("deny");
    expect(answer.hookSpecificOutput.permissionDecisionReason).toMatch(/JUDGE_TIMEOUT/);
  }, 45_000);

  it("leave out the body of a hook waiting on shadow rules alone: a shadow rule changes no answer", async () => {
    const marker = crypto.randomUUID();
    const policy = stuckModelPolicy(marker, { id: "trial", mode: "shadow" });
    const trying = post(policy, halfBody());
    await untilModelCalled(marker);
    const arriving = stalled(policy, HALF);
    await arriving.read;
    // Before, the shadow rule's wait held half the isolate's budget, and this hook was refused.
    await expectJudged(await post(policy, small()));
    // Its own shadow rule found the shadow budget held by the first: skipped, not waited for.
    const skipped = logged.mock.calls
      .map(([line]) => String(line))
      .filter((line) => line.includes("waiting on shadow rules alone"))
      .map((line) => JSON.parse(line));
    expect(skipped).toEqual([
      expect.objectContaining({ shadow: [expect.objectContaining({ rule: "trial", outcome: "SKIPPED" })] }),
    ]);
    arriving.finish();
    await expectJudged(await arriving.answer);
    await expectJudged(await trying);
  }, 45_000);
});

import { randomUUID } from "node:crypto";
import { createUndiciEgress, type Resolver } from "../../src/adapters/egress/undici.js";
import { createRemoteActions } from "../../src/app/remote-actions.js";
import type { Policy } from "../../src/core/policy.js";
import type { Metrics } from "../../src/core/ports.js";
import { createApp } from "../../src/http/app.js";
import type { BodyBudget } from "../../src/http/read-body.js";
import { policyFrom, sha256 } from "./policy.js";

export interface TestApp {
  request(path: string, init?: RequestInit): Promise<Response>;
  post(path: string, body: string | object, headers?: Record<string, string>): Promise<Response>;
  logs: Record<string, unknown>[];
  policy: Policy;
  /** Swaps the policy in, as a SIGHUP reload does. */
  reload(document: unknown): Promise<void>;
}

export const TOKEN = "team-a-token";

/** When each test app's wall clock starts. */
export const NOON_UTC = Date.UTC(2026, 0, 15, 12);

/**
 * The Hono app over a policy, in process, with the audit log captured. Prompt and forward rules
 * run for real: through the undici egress module to loopback servers the policy allows.
 */
export async function testApp(
  document: unknown,
  env: Record<string, string> = {},
  metrics?: Metrics,
  /** DNS for the egress, in place of the system's. */
  resolve?: Resolver,
): Promise<TestApp> {
  let policy = await policyFrom(document, env);
  const logs: Record<string, unknown>[] = [];
  // Real time, moved to run on from noon UTC of one day: a daily budget a test spent stays spent
  // however close to midnight UTC the test runs (the next day's budget answered its next call).
  const since = Date.now();
  const clock = { now: () => NOON_UTC + (Date.now() - since), monotonic: () => performance.now() };
  const egress = createUndiciEgress({
    ...(resolve && { resolve }),
    policy: () => policy.egress,
    onRefusal: (refusal) => logs.push({ msg: "egress refused", code: refusal.code }),
  });
  const app = createApp({
    policy: () => policy,
    remote: createRemoteActions({ egress: egress.send, env: (name) => env[name], clock, sha256, metrics }),
    clock,
    newId: randomUUID,
    sha256,
    logger: { log: (level, msg, fields) => logs.push({ level, msg, ...fields }) },
  });
  const request = async (path: string, init?: RequestInit) => app.request(`http://gateway.test${path}`, init);
  return {
    request,
    post: (path, body, headers = {}) =>
      request(path, {
        method: "POST",
        body: typeof body === "string" ? body : JSON.stringify(body),
        headers: { "content-type": "application/json", authorization: `Bearer ${TOKEN}`, ...headers },
      }),
    logs,
    policy,
    async reload(next) {
      policy = await policyFrom(next, env);
    },
  };
}

export async function authPolicy(rules: unknown[], extra: Record<string, unknown> = {}) {
  return {
    version: 1,
    auth: {
      tokens: [
        { team: "a", sha256: await sha256(TOKEN) },
        { team: "b", sha256: await sha256("team-b-token") },
      ],
    },
    rules,
    ...extra,
  };
}

/** A response's JSON body, for field-by-field assertions. */
// biome-ignore lint/suspicious/noExplicitAny: tests inspect decision bodies field by field
export const jsonOf = async (res: Response): Promise<any> => res.json();

/**
 * `budget`, calling `tookBytes` after each take of a hold on it: a test waits on it to know that a
 * stalled body holds its first bytes, whatever the turns of the event loop reading them took.
 */
export function watchedBudget(budget: BodyBudget, tookBytes: () => void): BodyBudget {
  return {
    hold: () => {
      const hold = budget.hold();
      return {
        take: (bytes) => {
          const taken = hold.take(bytes);
          tookBytes();
          return taken;
        },
        end: () => hold.end(),
      };
    },
  };
}

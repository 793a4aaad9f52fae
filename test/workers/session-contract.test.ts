/**
 * The session store contract (test/contract/session.contract.ts) on Workers KV, inside workerd:
 * the real KV binding of wrangler.toml (HOOKGATE_SESSIONS), which Miniflare holds to KV's limits
 * (a key of at most 512 bytes). A failed read or write fails the test rather than being reported.
 */
import { env } from "cloudflare:test";
import { createKvSessionStore } from "../../src/adapters/session/kv.js";
import { sessionContract } from "../contract/session.contract.js";

sessionContract("Workers KV session store", async () => {
  const failures: unknown[] = [];
  const store = createKvSessionStore(env.HOOKGATE_SESSIONS, {
    onError: (operation, error) => failures.push(`${operation}: ${String(error)}`),
  });
  return {
    store,
    cleanup: async () => {
      if (failures.length > 0) throw new Error(`KV refused: ${failures.join("; ")}`);
    },
  };
});

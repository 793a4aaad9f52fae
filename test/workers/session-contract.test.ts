/**
 * The session store contract (test/contract/session.contract.ts) on Workers KV, inside workerd:
 * the real KV binding of wrangler.toml (HOOKGATE_SESSIONS), which Miniflare holds to KV's limits
 * (a key of at most 512 bytes). A failed read or write rejects, failing the test.
 */
import { env } from "cloudflare:test";
import { createKvSessionStore } from "../../src/adapters/session/kv.js";
import { sessionContract } from "../contract/session.contract.js";

sessionContract("Workers KV session store", async () => ({
  store: createKvSessionStore(env.HOOKGATE_SESSIONS),
  cleanup: async () => {},
}));

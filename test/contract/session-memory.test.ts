/** The session store contract against the in-memory store (unit tests' store). */
import { createMemorySessionStore } from "../../src/adapters/session/memory.js";
import { sessionContract } from "./session.contract.js";

sessionContract("memory session store", async () => ({
  store: createMemorySessionStore(),
  cleanup: async () => {},
}));

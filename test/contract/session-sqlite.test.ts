/** The session store contract against the SQLite store `serve` uses, on a real file. */
import { join } from "node:path";
import { createSqliteSessionStore } from "../../src/adapters/session/sqlite.js";
import { tempDir } from "../support/temp.js";
import { sessionContract } from "./session.contract.js";

sessionContract("SQLite session store", async () => {
  const store = createSqliteSessionStore(join(tempDir("session-contract"), "sessions.sqlite"));
  return { store, cleanup: async () => store.close() };
});

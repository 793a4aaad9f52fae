/** The session store in memory: for tests, and for runtimes without a configured store. */
import type { SessionStore } from "../../app/notify.js";

export function createMemorySessionStore(): SessionStore {
  const tools = new Map<string, { toolName: string; summary: string }>();
  return {
    async rememberTool(sessionId, tool) {
      tools.set(sessionId, tool);
    },
    async lastTool(sessionId) {
      return tools.get(sessionId);
    },
  };
}

/** The session store in memory, for tests: no runtime uses it (Lambda has no session store), so nothing here expires. */
import type { SessionStore, ToolHalf } from "../../app/notify.js";

export function createMemorySessionStore(): SessionStore {
  const tools = new Map<string, { toolName: string; summary: string }>();
  const halves = new Map<string, { use?: ToolHalf; result?: ToolHalf }>();
  return {
    async rememberTool(sessionIds, tool) {
      for (const id of sessionIds) tools.set(id, tool);
    },
    async lastTool(sessionId) {
      return tools.get(sessionId);
    },
    async rememberToolHalf(toolId, half) {
      halves.set(toolId, { ...halves.get(toolId), [half.kind]: half });
    },
    async toolHalves(toolId) {
      return halves.get(toolId) ?? {};
    },
  };
}

/** The session store in memory, for tests: no runtime uses it (Lambda has no session store), so nothing here expires. */
import type { SessionStore, ToolHalf } from "../../app/notify.js";

export function createMemorySessionStore(): SessionStore {
  const tools = new Map<string, { toolName: string; summary: string; at: number }>();
  const halves = new Map<string, { use?: ToolHalf; result?: ToolHalf }>();
  return {
    async rememberTool(sessionIds, { toolName, summary }, at) {
      for (const id of sessionIds) tools.set(id, { toolName, summary, at });
    },
    async lastTool(sessionId, _at, writtenAfter = Number.NEGATIVE_INFINITY) {
      const tool = tools.get(sessionId);
      return tool !== undefined && tool.at > writtenAfter
        ? { toolName: tool.toolName, summary: tool.summary }
        : undefined;
    },
    async rememberToolHalf(toolId, half) {
      halves.set(toolId, { ...halves.get(toolId), [half.kind]: half });
    },
    async toolHalves(toolId) {
      return halves.get(toolId) ?? {};
    },
  };
}

/**
 * The session store contract every store must pass (STYLE.md: one suite, every backend): memory
 * here, SQLite on a real file (session-sqlite.test.ts), Workers KV inside workerd
 * (test/workers/session-contract.test.ts). Each test uses ids of its own, so a store whose
 * storage outlives a test (KV in workerd) needs no cleanup between them. Expiry is each store's
 * own (KV's TTL, SQLite's sweep) and is tested with the store.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { MAX_ID_BYTES, type SessionStore, type ToolHalf } from "../../src/app/notify.js";

export interface SessionStoreUnderTest {
  readonly store: SessionStore;
  cleanup(): Promise<void>;
}

const T0 = 1_700_000_000_000;

/** An id no other test uses, `length` UTF-8 bytes long, of `unit` repeated after a unique head. */
function freshId(length = 24, unit = "x"): string {
  const head = crypto.randomUUID().slice(0, 8);
  const unitBytes = new TextEncoder().encode(unit).byteLength;
  const fill = length - head.length;
  if (fill % unitBytes !== 0) throw new Error(`${fill} bytes cannot be filled with ${unit}`);
  return head + unit.repeat(fill / unitBytes);
}

const use = (toolName: string, toolArgs: Record<string, unknown> = {}): ToolHalf => ({
  kind: "use",
  toolName,
  toolArgs,
});
const result = (status: string, output: string): ToolHalf => ({ kind: "result", status, output });

export function sessionContract(name: string, make: () => Promise<SessionStoreUnderTest>): void {
  describe(name, () => {
    let t: SessionStoreUnderTest;
    let store: SessionStore;

    beforeEach(async () => {
      t = await make();
      store = t.store;
    });
    afterEach(async () => {
      await t.cleanup();
    });

    it("knows nothing of a session or a tool call it was never told of", async () => {
      expect(await store.lastTool(freshId())).toBeUndefined();
      expect(await store.toolHalves(freshId())).toEqual({});
    });

    it("keeps each session's last tool call, the later write replacing the earlier, sessions apart", async () => {
      const [a, b] = [freshId(), freshId()];
      await store.rememberTool([a], { toolName: "Bash", summary: "npm test" }, T0);
      await store.rememberTool([b], { toolName: "Read", summary: "README.md" }, T0);
      await store.rememberTool([a], { toolName: "Edit", summary: "src/a.ts" }, T0 + 1);
      expect(await store.lastTool(a)).toEqual({ toolName: "Edit", summary: "src/a.ts" });
      expect(await store.lastTool(b)).toEqual({ toolName: "Read", summary: "README.md" });
    });

    it("keeps one tool call under each key it is given, each replaced on its own", async () => {
      const [session, byName] = [freshId(), freshId()];
      await store.rememberTool([session, byName], { toolName: "Bash", summary: "npm test" }, T0);
      await store.rememberTool([session], { toolName: "Read", summary: "a.txt" }, T0 + 1);
      expect(await store.lastTool(session)).toEqual({ toolName: "Read", summary: "a.txt" });
      expect(await store.lastTool(byName)).toEqual({ toolName: "Bash", summary: "npm test" });
    });

    it("gives no tool call written at or before the time it is told, when it is told one", async () => {
      // The notifier's bound: when a write of the session's tool call last failed, since what was
      // written before may no longer be the session's last call.
      const session = freshId();
      await store.rememberTool([session], { toolName: "Bash", summary: "git status" }, T0);
      expect(await store.lastTool(session, T0 + 10, T0 - 1)).toEqual({
        toolName: "Bash",
        summary: "git status",
      });
      expect(await store.lastTool(session, T0 + 10, T0)).toBeUndefined();
      expect(await store.lastTool(session, T0 + 10, T0 + 5)).toBeUndefined();
      await store.rememberTool([session], { toolName: "Bash", summary: "npm test" }, T0 + 6);
      expect(await store.lastTool(session, T0 + 10, T0 + 5)).toEqual({
        toolName: "Bash",
        summary: "npm test",
      });
    });

    it("keeps a tool call's two halves in either order, a half written again replacing only itself", async () => {
      const [first, second] = [freshId(), freshId()];
      await store.rememberToolHalf(first, result("success", "a b"), T0);
      expect(await store.toolHalves(first)).toEqual({ result: result("success", "a b") });
      await store.rememberToolHalf(first, use("execute", { command: "ls" }), T0 + 1);
      await store.rememberToolHalf(second, use("read_file", { path: "a.txt" }), T0);
      await store.rememberToolHalf(first, result("error", "no such file"), T0 + 2);
      expect(await store.toolHalves(first)).toEqual({
        use: use("execute", { command: "ls" }),
        result: result("error", "no such file"),
      });
      expect(await store.toolHalves(second)).toEqual({ use: use("read_file", { path: "a.txt" }) });
    });

    it(`takes ids of ${MAX_ID_BYTES} bytes, the longest the notifier passes, in one- and four-byte characters`, async () => {
      const ids = [freshId(MAX_ID_BYTES, "s"), freshId(MAX_ID_BYTES, "😀")];
      for (const id of ids) {
        await store.rememberTool([id], { toolName: "Bash", summary: id.slice(0, 8) }, T0);
        await store.rememberToolHalf(id, use("execute"), T0);
        await store.rememberToolHalf(id, result("success", id.slice(0, 8)), T0);
      }
      for (const id of ids) {
        expect(await store.lastTool(id)).toEqual({ toolName: "Bash", summary: id.slice(0, 8) });
        expect(await store.toolHalves(id)).toEqual({
          use: use("execute"),
          result: result("success", id.slice(0, 8)),
        });
        // A shorter id that the long one starts with is another session.
        expect(await store.lastTool(id.slice(0, -2))).toBeUndefined();
      }
    });

    it("gives back what it was given, whatever characters it holds, and tool arguments of 256 KiB", async () => {
      const session = freshId();
      const summary = `echo "a\\nb" 'ü' \u2028 😀 \u0000 ${"x".repeat(100)}`;
      await store.rememberTool([session], { toolName: "mcp__srv__tool", summary }, T0);
      expect(await store.lastTool(session)).toEqual({ toolName: "mcp__srv__tool", summary });

      const toolId = freshId();
      const args = {
        files: Array.from({ length: 128 }, (_, i) => ({ path: `src/${i}.ts`, content: "y".repeat(2000) })),
        nested: { list: [1, 2.5, true, null, "ü"], empty: {} },
      };
      await store.rememberToolHalf(toolId, use("write_files", args), T0);
      expect(await store.toolHalves(toolId)).toEqual({ use: use("write_files", args) });
    });

    it("keeps both halves written at once, and one whole tool call of two written at once", async () => {
      const [toolId, session] = [freshId(), freshId()];
      const bash = { toolName: "Bash", summary: "ls" };
      const read = { toolName: "Read", summary: "a.txt" };
      await Promise.all([
        store.rememberToolHalf(toolId, use("execute"), T0),
        store.rememberToolHalf(toolId, result("success", "done"), T0),
        store.rememberTool([session], bash, T0),
        store.rememberTool([session], read, T0),
      ]);
      expect(await store.toolHalves(toolId)).toEqual({
        use: use("execute"),
        result: result("success", "done"),
      });
      expect([bash, read]).toContainEqual(await store.lastTool(session));
    });
  });
}

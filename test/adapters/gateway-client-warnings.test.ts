/**
 * The CLI's client through a SOCKS5 proxy and Node's warnings, in a file of its own: the client's
 * modules load here, after the test has taken `process.emitWarning` as it was, and undici's
 * notice is emitted once a process.
 */
import { createServer } from "node:http";
import { describe, expect, it } from "vitest";
import { listenUntilDone } from "../support/loopback.js";
import { socksProxy } from "../support/socks-proxy.js";

describe("gatewayRequest through a SOCKS5 proxy", () => {
  it("keeps undici's notice that its SOCKS5 support is experimental off stderr, and leaves every other warning to the process", async () => {
    // process.emitWarning was replaced for the whole process as the client loaded, to drop one text.
    const emitWarning = process.emitWarning;
    const warnings: string[] = [];
    const heard = (warning: Error) => warnings.push(warning.message);
    process.on("warning", heard);
    try {
      const { gatewayRequest } = await import("../../src/adapters/gateway-client/node.js");
      const proxy = await socksProxy();
      const port = await listenUntilDone(createServer((_req, res) => res.end("{}")));
      const result = await gatewayRequest({
        method: "GET",
        url: `http://127.0.0.1:${port}/healthz`,
        timeoutMs: 5000,
        proxy: proxy.url,
      });
      expect(result.ok, JSON.stringify(result)).toBe(true);
      expect(proxy.seen).toEqual([`127.0.0.1:${port}`]);
      expect(process.emitWarning).toBe(emitWarning);
      process.emitWarning("another warning", "ExperimentalWarning");
      // A warning reaches its listeners on the next tick.
      await new Promise((resolve) => setImmediate(resolve));
      expect(warnings).toEqual(["another warning"]);
    } finally {
      process.off("warning", heard);
    }
  });
});

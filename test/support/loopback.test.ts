import { connect, createServer } from "node:net";
import { describe, expect, it } from "vitest";
import { refusingPort } from "./loopback.js";

/** What listening on `port` of `host` gives: "listening", or the error's code. */
async function listenOn(port: number, host: string): Promise<string> {
  const server = createServer();
  return new Promise((resolve) => {
    server.once("error", (e: NodeJS.ErrnoException) => resolve(e.code ?? e.message));
    server.listen(port, host, () => server.close(() => resolve("listening")));
  });
}

describe("refusingPort", () => {
  it("refuses connections on its port, which no server another test starts can take meanwhile", async () => {
    const port = await refusingPort();
    const outcome = await new Promise<string>((resolve) => {
      const socket = connect(port, "127.0.0.1");
      socket.once("error", (e: NodeJS.ErrnoException) => resolve(e.code ?? e.message));
      socket.once("connect", () => {
        socket.destroy();
        resolve("connected");
      });
    });
    expect(outcome).toBe("ECONNREFUSED");
    // A port freed a moment ago is the next listener's to take.
    for (const host of ["127.0.0.1", "0.0.0.0"]) expect(await listenOn(port, host)).toBe("EADDRINUSE");
  });
});

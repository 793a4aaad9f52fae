import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import {
  type AddressInfo,
  connect,
  createServer as createTcpServer,
  type Server as TcpServer,
} from "node:net";
import { whenDone } from "./temp.js";

export interface Received {
  method: string;
  url: string;
  headers: IncomingMessage["headers"];
  body: string;
}

export interface LoopbackServer {
  url: string;
  port: number;
  received: Received[];
  close(): Promise<void>;
}

/**
 * An http or https `server` listening on 127.0.0.1 until the test ends (or the file's tests,
 * called outside a test), its connections closed then; its port.
 */
export async function listenUntilDone(server: TcpServer & { closeAllConnections(): void }): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  whenDone(
    () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(resolve);
      }),
  );
  return (server.address() as AddressInfo).port;
}

/** A real HTTP server on a loopback address that records what arrived and answers as told. */
export async function loopbackServer(
  answer: (req: Received, res: ServerResponse) => void,
  host = "127.0.0.1",
  port = 0,
): Promise<LoopbackServer> {
  const received: Received[] = [];
  const server: Server = createServer((req, res) => {
    let body = "";
    req.setEncoding("utf8");
    req.on("data", (c) => {
      body += c;
    });
    req.on("end", () => {
      const r = { method: req.method ?? "", url: req.url ?? "", headers: req.headers, body };
      received.push(r);
      answer(r, res);
    });
  });
  await new Promise<void>((resolve) => server.listen(port, host, resolve));
  const actual = (server.address() as AddressInfo).port;
  return {
    url: `http://${host}:${actual}`,
    port: actual,
    received,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/**
 * A port of 127.0.0.1 that refuses connections until the test ends (or the file's tests, called
 * outside a test): the local port of a connection held open to a server of its own, which no
 * listener on 127.0.0.1, 0.0.0.0 or :: can take meanwhile (EADDRINUSE). A port freed a moment ago
 * could be taken by a server another test starts, and the connection answered in place of refused.
 */
export async function refusingPort(): Promise<number> {
  const server = createTcpServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const held = connect((server.address() as AddressInfo).port, "127.0.0.1");
  await new Promise((resolve) => held.once("connect", resolve));
  whenDone(async () => {
    held.destroy();
    await new Promise((resolve) => server.close(resolve));
  });
  return held.localPort as number;
}

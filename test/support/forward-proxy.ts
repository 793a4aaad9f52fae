/** A loopback forward proxy for `hookgate send` and `hookgate doctor`, which take the agent's route. */
import { createServer, type IncomingMessage, request, type ServerResponse } from "node:http";
import { createServer as createHttpsServer } from "node:https";
import { connect } from "node:net";
import type { Duplex } from "node:stream";
import { listenUntilDone } from "./loopback.js";

/**
 * A loopback forward proxy, as an agent's is: it passes on a request in absolute form (an http
 * URL's) and tunnels a CONNECT (an https one's), recording each (`POST http://…`, `CONNECT
 * host:port`) and its Proxy-Authorization (`credentials`, undefined where none came); with
 * `refuse`, it answers every request with that status instead. With `tls`, an https proxy, which
 * the client speaks TLS to before its request (test/support/tls.ts).
 */
export async function forwardProxy(
  refuse?: number,
  tls?: { key: Buffer; cert: Buffer },
): Promise<{ url: string; seen: string[]; credentials: (string | undefined)[] }> {
  const seen: string[] = [];
  const credentials: (string | undefined)[] = [];
  const handle = (req: IncomingMessage, res: ServerResponse) => {
    if (refuse !== undefined) {
      res.writeHead(refuse).end();
      return;
    }
    seen.push(`${req.method} ${req.url}`);
    credentials.push(req.headers["proxy-authorization"]);
    const upstream = request(req.url ?? "", { method: req.method, headers: req.headers }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    upstream.on("error", () => res.destroy());
    req.pipe(upstream);
  };
  const proxy = tls === undefined ? createServer(handle) : createHttpsServer(tls, handle);
  // A tunnel's two sockets are no longer the server's connections, which it closes itself.
  const tunnels = new Set<Duplex>();
  proxy.on("connect", (req, client) => {
    tunnels.add(client);
    client.on("close", () => tunnels.delete(client));
    if (refuse !== undefined) {
      client.end(`HTTP/1.1 ${refuse} Refused\r\n\r\n`);
      return;
    }
    seen.push(`CONNECT ${req.url}`);
    credentials.push(req.headers["proxy-authorization"]);
    const [host, port] = (req.url ?? "").split(/:(?=\d+$)/);
    const upstream = connect(Number(port), host, () => {
      client.write("HTTP/1.1 200 Connection Established\r\n\r\n");
      upstream.pipe(client).pipe(upstream);
    });
    tunnels.add(upstream);
    upstream.on("close", () => tunnels.delete(upstream));
    upstream.on("error", () => client.destroy());
    client.on("error", () => upstream.destroy());
  });
  const closeConnections = proxy.closeAllConnections.bind(proxy);
  const port = await listenUntilDone(
    Object.assign(proxy, {
      closeAllConnections: () => {
        closeConnections();
        for (const socket of tunnels) socket.destroy();
      },
    }),
  );
  return {
    url: `${tls === undefined ? "http" : "https"}://127.0.0.1:${port}`,
    seen,
    credentials,
  };
}

/**
 * A loopback stand-in for what hookgate calls out to (bench/egress.js's target, bench/remote.js's
 * model and team hook server): a node:http server that reads each POST body in full and answers
 * 200 with the fixed JSON body in BENCH_BODY at once. `GET /count` answers
 * `{"posts": n, "connections": m}`, the POSTs answered and TCP connections accepted so far, so a
 * benchmark can prove which calls did (or did not) reach it, and over how many connections.
 *
 * A request with an `x-bench-close` header gets `connection: close` with its answer.
 *
 * Prints one line, `{"url":"http://127.0.0.1:PORT"}`, once it listens.
 */
import { createServer } from "node:http";

const body = Buffer.from(process.env.BENCH_BODY ?? "{}", "utf8");
const headers = { "content-type": "application/json", "content-length": String(body.length) };
let posts = 0;
let connections = 0;

const server = createServer((req, res) => {
  req.on("data", () => {});
  req.on("end", () => {
    if (req.method === "GET" && req.url === "/count") {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ posts, connections }));
      return;
    }
    posts++;
    // `x-bench-close`: the answer closes its connection, so the next request opens a new one.
    // (A client's own `connection: close` would do, but hookgate's guard drops hop-by-hop headers.)
    res.writeHead(200, req.headers["x-bench-close"] ? { ...headers, connection: "close" } : headers);
    res.end(body);
  });
});

server.on("connection", () => {
  connections++;
});

server.listen(0, "127.0.0.1", () => {
  const address = server.address();
  const port = typeof address === "object" && address !== null ? address.port : 0;
  process.stdout.write(`${JSON.stringify({ url: `http://127.0.0.1:${port}` })}\n`);
});

for (const signal of ["SIGTERM", "SIGINT"]) {
  process.once(signal, () => {
    server.close();
    server.closeAllConnections();
  });
}

/**
 * The baseline for bench/decision.js: a bare node:http server that reads each request body in
 * full (as the gateway must) and answers 200 with a fixed JSON body. decision.js passes the
 * gateway's own answer in BENCH_BODY, so both servers put the same number of body bytes on the
 * wire and the difference between them is the gateway's work, not the payload.
 *
 * Prints one line, `{"url":"http://127.0.0.1:PORT"}`, once it listens.
 */
import { createServer } from "node:http";

const body = Buffer.from(process.env.BENCH_BODY ?? "{}", "utf8");
const headers = { "content-type": "application/json", "content-length": String(body.length) };

const server = createServer((req, res) => {
  req.on("data", () => {});
  req.on("end", () => {
    res.writeHead(200, headers);
    res.end(body);
  });
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

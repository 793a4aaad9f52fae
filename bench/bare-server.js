/**
 * The baseline for bench/decision.js: a bare node:http server that reads each request body in
 * full (as the gateway must) and answers 200 with a fixed JSON body. decision.js passes the
 * gateway's own answer in BENCH_BODY, so both servers put the same number of body bytes on the
 * wire and the difference between them is the gateway's work, not the payload.
 *
 * BENCH_WORK_US (default 0) makes it spin that many microseconds per request before answering:
 * decision.js's work ladder, which shows what a given amount of synchronous work per request
 * costs a node:http server on this machine, and so what budget the 0.85x target leaves.
 *
 * Prints one line, `{"url":"http://127.0.0.1:PORT"}`, once it listens.
 */
import { createServer } from "node:http";

const body = Buffer.from(process.env.BENCH_BODY ?? "{}", "utf8");
const headers = { "content-type": "application/json", "content-length": String(body.length) };
const workMs = Number(process.env.BENCH_WORK_US ?? 0) / 1000;

/** Busy for `workMs`, as synchronous request handling would be. */
function work() {
  const until = performance.now() + workMs;
  while (performance.now() < until) {}
}

const server = createServer((req, res) => {
  req.on("data", () => {});
  req.on("end", () => {
    if (workMs > 0) work();
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

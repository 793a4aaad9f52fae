/**
 * bench/fanout.js's webhook receiver: a loopback node:http server that reads each POST body in
 * full and answers 204 at once, counting the POSTs and the distinct `webhook-id`s it has seen.
 * `GET /count` answers `{"posts": n, "unique": u, "withoutId": w}`; `GET /wait?unique=U&timeoutMs=T`
 * answers the same as soon as `unique` reaches U (or after T ms, whichever comes first), so the
 * benchmark learns when the last new id arrived without polling.
 *
 * Prints one line, `{"url":"http://127.0.0.1:PORT"}`, once it listens.
 */
import { createServer } from "node:http";

const ids = new Set();
let posts = 0;
let withoutId = 0;
/** Waiting `GET /wait` requests: [target, respond]. */
let waiters = [];

const counts = () => JSON.stringify({ posts, unique: ids.size, withoutId });

function answer(res, text) {
  res.writeHead(200, { "content-type": "application/json" });
  res.end(text);
}

function wake() {
  if (waiters.length === 0) return;
  const ready = waiters.filter(([target]) => ids.size >= target);
  if (ready.length === 0) return;
  waiters = waiters.filter(([target]) => ids.size < target);
  const text = counts();
  for (const [, respond] of ready) respond(text);
}

const server = createServer((req, res) => {
  if (req.method === "GET") {
    req.resume();
    const url = new URL(req.url ?? "/", "http://x");
    if (url.pathname === "/count") return answer(res, counts());
    if (url.pathname === "/wait") {
      const target = Number(url.searchParams.get("unique"));
      const timeoutMs = Number(url.searchParams.get("timeoutMs") ?? "60000");
      if (ids.size >= target) return answer(res, counts());
      let done = false;
      const respond = (text) => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        answer(res, text);
      };
      const timer = setTimeout(() => {
        waiters = waiters.filter(([, r]) => r !== respond);
        respond(counts());
      }, timeoutMs);
      waiters.push([target, respond]);
      return;
    }
    res.writeHead(404);
    return res.end();
  }
  req.on("data", () => {});
  req.on("end", () => {
    posts++;
    const id = req.headers["webhook-id"];
    if (typeof id === "string" && id !== "") ids.add(id);
    else withoutId++;
    res.writeHead(204);
    res.end();
    wake();
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

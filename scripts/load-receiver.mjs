/**
 * scripts/load.mjs's two notify sinks, in one loopback node:http child process:
 *
 * - `POST /audit`, a Standard Webhooks receiver as a real one should be: it verifies each
 *   signature (`verifyStandardWebhook` from dist/, the secret in LOAD_AUDIT_WHSEC), answers 401
 *   to a bad one, and drops a repeated `webhook-id` (acknowledged with 204, counted as a
 *   duplicate).
 * - `POST /siem`, a sink that is down: it answers 500 to everything (or, with LOAD_SIEM_MODE=hang,
 *   never answers), counting the attempts per `webhook-id` (and still checking signatures, with
 *   LOAD_SIEM_WHSEC).
 *
 * `GET /count` answers what each has seen. Prints one line, `{"url":"http://127.0.0.1:PORT"}`,
 * once it listens; stops on SIGTERM.
 */
import { createServer } from "node:http";
import { verifyStandardWebhook } from "../dist/core/sinks.js";

const secrets = { audit: process.env.LOAD_AUDIT_WHSEC, siem: process.env.LOAD_SIEM_WHSEC };
const siemHangs = process.env.LOAD_SIEM_MODE === "hang";
if (!secrets.audit || !secrets.siem) {
  process.stderr.write("load-receiver: LOAD_AUDIT_WHSEC and LOAD_SIEM_WHSEC must be set\n");
  process.exit(2);
}

const audit = { posts: 0, unique: 0, duplicates: 0, badSignatures: 0, byType: {} };
const auditIds = new Set();
const siem = { posts: 0, badSignatures: 0 };
/** webhook-id → attempts seen at the failing sink. */
const siemAttempts = new Map();

async function verified(sink, req, body) {
  return verifyStandardWebhook(
    secrets[sink],
    {
      id: String(req.headers["webhook-id"] ?? ""),
      timestamp: String(req.headers["webhook-timestamp"] ?? ""),
      signature: String(req.headers["webhook-signature"] ?? ""),
    },
    body,
    Date.now(),
  );
}

async function onAudit(req, body, res) {
  audit.posts++;
  if (!(await verified("audit", req, body))) {
    audit.badSignatures++;
    return res.writeHead(401).end();
  }
  const id = String(req.headers["webhook-id"]);
  if (auditIds.has(id)) {
    audit.duplicates++;
  } else {
    auditIds.add(id);
    audit.unique++;
    const type = String(JSON.parse(body).type);
    audit.byType[type] = (audit.byType[type] ?? 0) + 1;
  }
  res.writeHead(204).end();
}

async function onSiem(req, body, res) {
  siem.posts++;
  if (!(await verified("siem", req, body))) siem.badSignatures++;
  const id = String(req.headers["webhook-id"] ?? "");
  siemAttempts.set(id, (siemAttempts.get(id) ?? 0) + 1);
  if (siemHangs) return; // the gateway's egress timeout ends it
  res.writeHead(500, { "content-type": "text/plain" }).end("siem is down");
}

function counts() {
  /** How many ids saw 1, 2, 3... attempts. */
  const attempts = {};
  for (const n of siemAttempts.values()) attempts[n] = (attempts[n] ?? 0) + 1;
  return { audit, siem: { ...siem, ids: siemAttempts.size, attempts } };
}

const server = createServer((req, res) => {
  if (req.method === "GET") {
    req.resume();
    if (req.url === "/count") {
      res.writeHead(200, { "content-type": "application/json" });
      return res.end(JSON.stringify(counts()));
    }
    return res.writeHead(404).end();
  }
  const chunks = [];
  req.on("data", (c) => chunks.push(c));
  req.on("end", () => {
    const body = Buffer.concat(chunks).toString("utf8");
    const handle = req.url === "/audit" ? onAudit : req.url === "/siem" ? onSiem : undefined;
    if (!handle) return res.writeHead(404).end();
    handle(req, body, res).catch((e) => {
      process.stderr.write(`load-receiver: ${e instanceof Error ? e.message : String(e)}\n`);
      if (!res.headersSent) res.writeHead(400).end();
    });
  });
});

server.listen(0, "127.0.0.1", () => {
  const address = server.address();
  const port = typeof address === "object" && address !== null ? address.port : 0;
  process.stdout.write(`${JSON.stringify({ url: `http://127.0.0.1:${port}` })}\n`);
});

process.once("SIGTERM", () => {
  server.close();
  server.closeAllConnections();
});

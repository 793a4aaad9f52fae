/** Loopback https servers with the test CA's certificate (test/fixtures/tls/README.md). */
import { readFileSync } from "node:fs";
import type { IncomingMessage, ServerResponse } from "node:http";
import { createServer } from "node:https";
import { join } from "node:path";
import { listenUntilDone } from "./loopback.js";
import { ROOT } from "./process.js";

const FIXTURES = join(ROOT, "test/fixtures/tls");

/** The test CA's certificate file, for a child process's NODE_EXTRA_CA_CERTS. */
export const TEST_CA_FILE = join(FIXTURES, "ca.pem");

/** The key and certificate of `gateway.example.test` and `127.0.0.1`, signed by the test CA. */
export const SERVER_TLS = {
  key: readFileSync(join(FIXTURES, "server.key")),
  cert: readFileSync(join(FIXTURES, "server.pem")),
};

/** The names the server certificate holds, as Node lists them. */
export const SERVER_CERT_NAMES = "DNS:gateway.example.test, IP Address:127.0.0.1";

/** An https server on 127.0.0.1 with that certificate, closed when the test ends; its port. */
export async function httpsServer(
  answer: (req: IncomingMessage, res: ServerResponse) => void,
): Promise<number> {
  return listenUntilDone(createServer(SERVER_TLS, answer));
}

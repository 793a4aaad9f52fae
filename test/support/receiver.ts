import { verifyStandardWebhook } from "../../src/core/sinks.js";
import { type LoopbackServer, loopbackServer, type Received } from "./loopback.js";

export interface WebhookReceiver {
  server: LoopbackServer;
  url: string;
  /** Every webhook-id accepted once, in arrival order; repeats are dropped, as a receiver should. */
  unique: string[];
  duplicates: number;
  badSignatures: number;
  bodies: Map<string, unknown>;
  close(): Promise<void>;
}

/**
 * A Standard Webhooks receiver on loopback: verifies every signature, answers 2xx after
 * `delayMs`, and drops repeated `webhook-id`s (acknowledging them, as receivers do).
 */
export async function webhookReceiver(secret: string, delayMs = 0): Promise<WebhookReceiver> {
  const seen = new Set<string>();
  const state = {
    unique: [] as string[],
    duplicates: 0,
    badSignatures: 0,
    bodies: new Map<string, unknown>(),
  };
  const server = await loopbackServer((req: Received, res) => {
    const id = String(req.headers["webhook-id"] ?? "");
    void verifyStandardWebhook(
      secret,
      {
        id,
        timestamp: String(req.headers["webhook-timestamp"] ?? ""),
        signature: String(req.headers["webhook-signature"] ?? ""),
      },
      req.body,
      Date.now(),
    ).then((valid) => {
      setTimeout(() => {
        if (!valid) {
          state.badSignatures++;
          res.writeHead(401).end();
          return;
        }
        if (seen.has(id)) state.duplicates++;
        else {
          seen.add(id);
          state.unique.push(id);
          state.bodies.set(id, JSON.parse(req.body));
        }
        res.writeHead(204).end();
      }, delayMs);
    });
  });
  return Object.assign(state, { server, url: `${server.url}/hooks`, close: () => server.close() });
}

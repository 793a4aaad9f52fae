/**
 * A fake judge model on a loopback port, speaking Anthropic's Messages API on `/v1/messages`
 * and OpenAI's chat completions on `/v1/chat/completions`, answering as each test scripts it
 * and recording every request so tests can check what hookgate sent.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { brotliCompressSync, deflateSync, gzipSync } from "node:zlib";

export type ModelScript =
  | { verdict: { ok: boolean; reason: string; impossible?: boolean } }
  | { text: string }
  | { status: number; body: string; headers?: Record<string, string> }
  | { hang: true }
  | { delayMs: number; next: ModelScript }
  /** `next`, once `until` settles: a call held for exactly as long as the test needs it. */
  | { until: Promise<unknown>; next: ModelScript }
  | { reset: true }
  /** The JSON answer of `next` in a content coding (with its content-encoding), or after a UTF-8 BOM. */
  | { encode: Encoding; next: ModelScript };

export type Encoding = "gzip" | "deflate" | "br" | "bom";

const ENCODERS: Record<Encoding, (body: Buffer) => Buffer> = {
  gzip: gzipSync,
  deflate: deflateSync,
  br: brotliCompressSync,
  bom: (body) => Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), body]),
};

export interface ModelRequest {
  path: string;
  headers: Record<string, string | string[] | undefined>;
  // biome-ignore lint/suspicious/noExplicitAny: tests read arbitrary fields of the recorded JSON.
  body: any;
}

export interface ModelServer {
  /** Origin, e.g. `http://127.0.0.1:PORT`. */
  url: string;
  anthropicUrl: string;
  openaiUrl: string;
  requests: ModelRequest[];
  /** How to answer from now on: one script for every request, or one chosen per request. */
  script(next: ModelScript | ((req: ModelRequest) => ModelScript)): void;
  /** Ends every connection, hanging ones included. */
  close(): Promise<void>;
}

const DEFAULT_SCRIPT: ModelScript = { verdict: { ok: true, reason: "fine" } };

function sendJson(res: ServerResponse, status: number, value: unknown, encoding?: Encoding): void {
  const body = Buffer.from(JSON.stringify(value));
  if (!encoding) {
    res.writeHead(status, { "content-type": "application/json" });
    res.end(body);
    return;
  }
  res.writeHead(status, {
    "content-type": "application/json",
    ...(encoding !== "bom" && { "content-encoding": encoding }),
  });
  res.end(ENCODERS[encoding](body));
}

function anthropicAnswer(model: unknown, content: unknown[], stopReason: string): unknown {
  return {
    id: "msg_test",
    type: "message",
    role: "assistant",
    model,
    content,
    stop_reason: stopReason,
    stop_sequence: null,
    usage: { input_tokens: 10, output_tokens: 10 },
  };
}

function openaiAnswer(model: unknown, content: string): unknown {
  return {
    id: "chatcmpl-test",
    object: "chat.completion",
    created: 0,
    model,
    choices: [{ index: 0, message: { role: "assistant", content, refusal: null }, finish_reason: "stop" }],
    usage: { prompt_tokens: 10, completion_tokens: 10, total_tokens: 20 },
  };
}

export async function startModelServer(): Promise<ModelServer> {
  const requests: ModelRequest[] = [];
  const sockets = new Set<Socket>();
  const timers = new Set<NodeJS.Timeout>();
  let current: ModelScript | ((req: ModelRequest) => ModelScript) = DEFAULT_SCRIPT;

  function answer(req: ModelRequest, res: ServerResponse, script: ModelScript, encoding?: Encoding): void {
    if ("hang" in script) return;
    if ("encode" in script) {
      answer(req, res, script.next, script.encode);
      return;
    }
    if ("reset" in script) {
      res.socket?.destroy();
      return;
    }
    if ("until" in script) {
      const go = () => answer(req, res, script.next);
      script.until.then(go, go);
      return;
    }
    if ("delayMs" in script) {
      const timer = setTimeout(() => {
        timers.delete(timer);
        answer(req, res, script.next);
      }, script.delayMs);
      timers.add(timer);
      return;
    }
    if ("status" in script) {
      res.writeHead(script.status, { "content-type": "application/json", ...script.headers });
      res.end(script.body);
      return;
    }
    const model = req.body?.model;
    if (req.path === "/v1/messages") {
      const block =
        "verdict" in script
          ? { type: "tool_use", id: "toolu_test", name: "verdict", input: script.verdict }
          : { type: "text", text: script.text };
      sendJson(
        res,
        200,
        anthropicAnswer(model, [block], "verdict" in script ? "tool_use" : "end_turn"),
        encoding,
      );
      return;
    }
    if (req.path === "/v1/chat/completions") {
      const content = "verdict" in script ? JSON.stringify(script.verdict) : script.text;
      sendJson(res, 200, openaiAnswer(model, content), encoding);
      return;
    }
    sendJson(res, 404, { error: { message: `no such endpoint: ${req.path}` } });
  }

  const server = createServer((incoming: IncomingMessage, res: ServerResponse) => {
    let raw = "";
    incoming.setEncoding("utf8");
    incoming.on("data", (chunk: string) => {
      raw += chunk;
    });
    incoming.on("end", () => {
      let body: unknown;
      try {
        body = JSON.parse(raw);
      } catch {
        body = raw;
      }
      const req: ModelRequest = {
        path: (incoming.url ?? "").split("?")[0] ?? "",
        headers: incoming.headers,
        body,
      };
      requests.push(req);
      answer(req, res, typeof current === "function" ? current(req) : current);
    });
  });
  server.on("connection", (socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  return {
    url,
    anthropicUrl: `${url}/v1/messages`,
    openaiUrl: `${url}/v1/chat/completions`,
    requests,
    script(next) {
      current = next;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const timer of timers) clearTimeout(timer);
        timers.clear();
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

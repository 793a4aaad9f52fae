/**
 * The Node request listener: a POST to a hook route (`/v1/hooks`, `/v1/hooks/<client>`, under any
 * prefix, read by src/http/route-path.ts `hookRoute` as the Hono app reads it) is answered straight
 * from node:http, every other request goes to the Hono app. The hook routes are the gateway's hot
 * path, and building a web `Request` (URL, Headers, AbortSignal, a ReadableStream for the body)
 * per decision cost more CPU than the decision itself (bench/HISTORY.md). Both paths run the same
 * code after the body is read (`runHookRoute` and `hookResponse` in src/http/hook-route.ts); the
 * end-to-end tests (test/e2e: the captured Claude Code requests, the client vectors, the bad-input
 * catalogue) run against `hookgate serve`, so against this listener. One difference is kept on
 * purpose: a malformed Host header is not refused here as such (@hono/node-server answers 400);
 * on a loopback bind it is simply not a loopback name (`loopbackHost`).
 */
import {
  type IncomingMessage,
  type OutgoingHttpHeaders,
  type RequestListener,
  type ServerResponse,
  STATUS_CODES,
} from "node:http";
import type { Duplex } from "node:stream";
import type { ClientConnection, HookDeps } from "../app/handle-hook.js";
import { errorMessage, type RequestError } from "../core/errors.js";
import { isDialect } from "../core/hook-event.js";
import { shorten } from "../core/truncate.js";
import type { AppDeps } from "../http/app.js";
import {
  type HookRouteOutcome,
  hookResponse,
  INTERNAL_ERROR_BODY,
  runHookRoute,
} from "../http/hook-route.js";
import { type ChunkSource, readBodyChunks } from "../http/read-body.js";
import { hookRoute, targetHost } from "../http/route-path.js";

/** The gateway's dependencies, with what the app reads a hook body with: the listener reads it so too. */
export type ListenerDeps = HookDeps &
  Pick<AppDeps, "bodyDeadline" | "bodyBudget" | "unauthenticatedBodyBudget">;

/**
 * `servesHost` says whether a request's Host is one the gateway answers (`serve` on loopback
 * answers only loopback names: `loopbackHost`). Any other request to a hook route gets the
 * auth fail mode's answer (HOST_NOT_SERVED); any other route, 421 Misdirected Request.
 */
export function hookListener(
  deps: ListenerDeps,
  fallback: RequestListener,
  servesHost: (host: string | undefined) => boolean = () => true,
): RequestListener {
  const send = answerWriter(deps.logger);
  return (request, response) => {
    const route = hookRouteOf(request);
    const host = addressedTo(request);
    let refused: RequestError | undefined;
    if (!servesHost(host)) {
      if (!route) {
        misdirected(response, host);
        return;
      }
      refused = hostNotServed(host);
    } else if (!route) {
      fallback(request, response); // every other route
      return;
    }
    answer(deps, request, response, route.client, send, refused).catch((e: unknown) => {
      // runHookRoute answers every failure itself; this is the last resort, as Hono's onError.
      deps.logger.log("error", "unhandled error", {
        error: errorMessage(e),
        path: routeLogged(route.client),
      });
      internalError(response);
    });
  };
}

/**
 * The hook route a request is answered on (every POST to one is, by `answer`): every hook route,
 * read as the app reads it (route-path.ts), a prefix, doubled or encoded slashes, escapes and dot
 * segments included.
 */
function hookRouteOf(request: IncomingMessage): ReturnType<typeof hookRoute> {
  return request.method === "POST" ? hookRoute(request.url ?? "") : undefined;
}

/**
 * What Node's parser refused of a hook's body before its reader began (`parserRefusals`), which
 * the reader then fails with. Set only on such a refusal: nothing is kept for a hook read whole.
 */
const bodyRefusals = new WeakMap<IncomingMessage, Error>();

/** Node's own answers to what its parser refuses, by error code; any other is a 400. */
const PARSER_ANSWERS: Readonly<Record<string, readonly [number, string]>> = {
  HPE_HEADER_OVERFLOW: [431, "Request Header Fields Too Large"],
  HPE_CHUNK_EXTENSIONS_OVERFLOW: [413, "Payload Too Large"],
  ERR_HTTP_REQUEST_TIMEOUT: [408, "Request Timeout"],
};

/**
 * The server's `clientError` handler: what Node's HTTP parser refuses before any hookgate code
 * runs (headers over 16 KiB: 431; a malformed request line, header or framing, such as two
 * differing Content-Lengths or a bare LF line end: 400; headers not in by `headersTimeout`: 408).
 * A POST to a hook route whose request line came in the packet refused (as an agent sends its
 * head, in one write) is answered its fail mode's decision (`BODY_UNREADABLE`, in a 2xx: Claude
 * Code lets the action through on any 4xx, deepcode blocks it), then the connection closes;
 * anything else as Node's own handler answers it. Each is logged: without the line a hook refused
 * so is in no log of the gateway's. A socket's own error (a client resetting its connection) is
 * no request, and is not logged, nor is a connection its client ended within a request.
 */
export function parserRefusals(deps: HookDeps): (error: Error, socket: Duplex) => void {
  const { logger } = deps;
  return (error, socket) => {
    // A hook being answered its fail mode: the parser, failed, refuses each packet that follows.
    if (refusedHooks.has(socket)) return;
    const code = (error as NodeJS.ErrnoException).code ?? "";
    const [status, text] = PARSER_ANSWERS[code] ?? [400, "Bad Request"];
    // The client ended its side of the connection within a request (the parser's end of input
    // mid-message): a client that left (an agent killed mid-send, a proxy whose own client left),
    // as one that resets it, not a request refused. Logged as a refusal, and its hook's reader
    // failed with "Parse Error", the log and the answer blamed Node's parser for it.
    const left = code === "HPE_INVALID_EOF_STATE";
    const failure = left ? new Error("the connection closed before the body ended") : error;
    const answering = (socket as { _httpMessage?: ServerResponse | null })._httpMessage;
    // The request the parser was reading when it refused: a hook whose body it cut short (a
    // malformed chunk) fails its reader with this error, which its reader is given once it begins
    // when that was yet to happen (a malformed first chunk sent with the headers), and is answered
    // its fail mode's decision, with `connection: close`. It may be a request pipelined behind the
    // one being answered, which is answered first, on a connection kept for the hook's answer.
    const parsing = (socket as { parser?: { incoming?: IncomingMessage | null } | null }).parser?.incoming;
    const reading = parsing ? parsing.listenerCount("error") > 0 : false;
    const cut =
      parsing && !parsing.complete && (reading || hookRouteOf(parsing) !== undefined) ? parsing : undefined;
    // Else what was refused came after the request being answered (a Content-Length shorter than
    // the body sent, bytes that are no request): that answer goes out, then the connection closes.
    // A 400 in its place was all the client saw, which Claude Code lets through, while the audit
    // line said what was decided.
    const read = cut === undefined && answering?.headersSent === false && answering.req.complete;
    // A hook refused in its head, nothing being answered on its connection: its route is known
    // only from its request line, which the parser does not hand over before the head's end.
    const hook =
      cut === undefined && !read && !left && !answering && socket.writable
        ? refusedHookRoute(error)
        : undefined;
    if (!left && (code.startsWith("HPE_") || code === "ERR_HTTP_REQUEST_TIMEOUT")) {
      logger.log("warn", "request refused by Node's HTTP parser", {
        error: code,
        ...(cut || read
          ? {
              answered: `${read ? "the request before it" : "the request it cut short"}, then the connection closes`,
            }
          : hook
            ? { answered: "its hook's fail mode, then the connection closes" }
            : { status }),
        reason: shorten(errorMessage(error), 200),
      });
    }
    if (cut) {
      if (answering?.req === cut) answering.shouldKeepAlive = false;
      if (reading) cut.emit("error", failure);
      else bodyRefusals.set(cut, failure);
      // Answered already (a 404 or 405 drains its body after its answer): nothing is left to send,
      // and the connection closes as Node's own handler closes it. Left open, it idled out the
      // keep-alive's 65 s with its parser failed, and held a stop for its whole grace.
      if (!answering) socket.destroy();
      return;
    }
    if (read) {
      answering.shouldKeepAlive = false;
      return;
    }
    if (hook) {
      refusedHooks.add(socket);
      answerRefusedHook(deps, hook, code, error, socket);
      return;
    }
    // As Node's own: an answer only where none has begun on this connection (a pipelined request
    // after one being answered would corrupt it), then the connection closed.
    if (socket.writable && !answering?.headersSent) {
      socket.write(`HTTP/1.1 ${status} ${text}\r\nConnection: close\r\n\r\n`);
    }
    socket.destroy(error);
  };
}

/**
 * The hook route a request refused in its head was sent to: the last request line in the packet
 * refused that began before the refusal (a packet may hold the end of the request before it), a
 * POST to a hook route. Its line end may be what was refused (a bare LF). None when the packet
 * held no such line: a head sent in pieces, or one that never ended (`headersTimeout`, which
 * hands over no packet); the route is then not known, and Node's own answer goes out. The target
 * comes with it: an unknown route is quoted as sent, a team's token in it masked there.
 */
function refusedHookRoute(error: Error): RefusedHook | undefined {
  const { rawPacket, bytesParsed } = error as { rawPacket?: Buffer; bytesParsed?: number };
  if (!Buffer.isBuffer(rawPacket) || bytesParsed === undefined) return undefined;
  const head = rawPacket.toString("latin1", 0, Math.min(bytesParsed + 1, REQUEST_LINE_BYTES_SEEN));
  let target: string | undefined;
  for (const line of head.matchAll(/(?:^|\n)([!-~]+) ([!-~]+) HTTP\/1\.[01]\r?\n/g)) {
    target = line[1] === "POST" ? line[2] : undefined;
  }
  if (target === undefined) return undefined;
  const route = hookRoute(target);
  return route && { client: route.client, target };
}

/** A hook route refused in its head: its client, as the route reads it, and its target as sent. */
interface RefusedHook {
  readonly client: string | undefined;
  readonly target: string;
}

/**
 * The connections of hooks refused in their heads, answered their fail mode:
 * nothing more is read on them.
 */
const refusedHooks = new WeakSet<Duplex>();

/** How far into a refused packet its request line is looked for: a head is at most 16 KiB. */
const REQUEST_LINE_BYTES_SEEN = 16 * 1024 + 1024;

/**
 * A hook refused in its head, answered as a hook whose body could not be read: its event unknown,
 * `defaults.onError` decides (a top-level block, or an empty body), with the decision's headers
 * and an audit line, then the connection closes (what follows the refusal cannot be read).
 */
function answerRefusedHook(
  deps: HookDeps,
  { client, target }: RefusedHook,
  code: string,
  error: Error,
  socket: Duplex,
): void {
  const refused: RequestError = {
    code: "BODY_UNREADABLE",
    message: `the request could not be read: Node's HTTP parser refused its head (${code}: ${shorten(errorMessage(error), 200)})`,
  };
  runHookRoute(deps, client, {
    readBody: async () => ({ ok: false, error: refused, unread: true }),
    contentType: undefined,
    target,
    authorization: undefined,
    timeoutHeader: undefined,
    tokenUnchecked: true,
  })
    .then((outcome) => {
      const { status, headers, body } = hookResponse(outcome);
      if (socket.writable) endThenClose(socket, closingAnswer(status, headers, body));
    })
    .catch((e: unknown) => {
      deps.logger.log("error", "unhandled error", { error: errorMessage(e), path: routeLogged(client) });
      socket.destroy();
    });
}

/**
 * The hook route a request came on, as a log line names it: a client's route by its name, an
 * unknown one's unquoted (it may hold a team's token, which only the refusal's quote masks).
 */
function routeLogged(client: string | undefined): string {
  if (client === undefined) return "/v1/hooks";
  return isDialect(client) ? `/v1/hooks/${client}` : "/v1/hooks/…";
}

/**
 * The server's `connect` handler: hookgate is no proxy, and a CONNECT comes from a client whose
 * proxy variable (HTTPS_PROXY, HTTP_PROXY, ALL_PROXY) names the gateway. Unhandled, Node closed
 * its connection unanswered, and the client said no more than that the socket hung up. Its target
 * is a host and port, no route: 501 (RFC 9110 §9.1), saying what to change, then the connection
 * closes (what follows a CONNECT is the tunnel's bytes, never a request).
 */
export function notAProxy(logger: HookDeps["logger"]): (request: IncomingMessage, socket: Duplex) => void {
  return (request, socket) => {
    const target = shorten(request.url ?? "", 200);
    logger.log("warn", "a CONNECT answered 501: hookgate is no proxy", { target });
    const body = JSON.stringify({
      error: {
        code: "NOT_A_PROXY",
        message: `hookgate is no proxy (CONNECT ${target}): a proxy variable (HTTPS_PROXY, HTTP_PROXY, ALL_PROXY) names the gateway; put the gateway in the hook's url, and the proxy, if any, in the variable`,
      },
    });
    socket.on("error", () => {}); // a client gone before the answer: nothing to tell it
    endThenClose(socket, closingAnswer(501, { "content-type": "application/json" }, body));
  };
}

/**
 * Writes an answer hookgate writes itself, not through a ServerResponse, then closes the
 * connection: when its client ends its side, or `LINGER_MS` after the answer, whichever comes
 * first. Only ended, a connection whose client kept its own side open stayed open: no timeout of
 * Node's reaches it (a CONNECT's is no HTTP connection any more; a failed parser's refusals are
 * passed over), and a stop waited on it past its grace, which cuts only HTTP connections. Not
 * closed at once: a client still sending a body behind a refused head (a few MiB) got EPIPE, or
 * a reset in place of the answer; what it sends meanwhile is read and dropped.
 */
function endThenClose(socket: Duplex, answer: string): void {
  socket.end(answer, () => {
    const cut = setTimeout(() => socket.destroy(), LINGER_MS).unref();
    socket.once("close", () => clearTimeout(cut));
  });
  socket.resume();
}

/**
 * An answer written on the socket itself, its length said and the connection's close, once (a
 * decision whose body went unread says `connection: close` in its own headers already).
 */
function closingAnswer(status: number, headers: Record<string, string>, body: string): string {
  const all = { ...headers, "content-length": String(Buffer.byteLength(body)), connection: "close" };
  const lines = Object.entries(all).map(([name, value]) => `${name}: ${value}\r\n`);
  return `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\n${lines.join("")}\r\n${body}`;
}

/** How long a connection answered by `endThenClose` waits for its client to end its side. */
const LINGER_MS = 2_000;

/**
 * The authority a request is addressed to: an absolute-form target's (`POST http://name/v1/hooks`),
 * which RFC 9112 §3.2.2 has a server use in place of Host, read where the routes read that
 * target's path (route-path.ts `targetHost`) and Hono its URL; else the Host header. Node's parser
 * takes such a target as it came, in `url`, and leaves Host as sent: a target naming another host
 * with a loopback Host passed the check.
 */
function addressedTo(request: IncomingMessage): string | undefined {
  return targetHost(request.url ?? "") ?? request.headers.host;
}

/** A bind address or URL host (no brackets, no port) that is loopback: 127.x, ::1 or localhost. */
export function loopbackName(name: string): boolean {
  return /^(?:127\.|::1$|::ffff:127\.|localhost$)/i.test(name);
}

/**
 * A Host that names loopback: an IP literal or `localhost` (and its subdomains), any port. A web
 * page's own name, pointed at 127.0.0.1 by its DNS (rebinding), is neither: the page could
 * otherwise read the gateway's answers as its own origin, and act as a local agent.
 */
export function loopbackHost(host: string | undefined): boolean {
  if (host === undefined) return true; // HTTP/1.0 has none, nor may a hand-made client; a browser always sends one
  // A name's one trailing dot (`localhost.`) is its absolute form, the same name (RFC 6761 §6.3).
  const name = (
    host.startsWith("[") ? host.slice(1, host.indexOf("]")) : host.replace(/\.?(?::\d*)?$/, "")
  ).toLowerCase();
  if (name === "localhost" || name.endsWith(".localhost")) return true;
  // Digits and dots, or a colon (an IPv6 literal, from brackets): no DNS name looks like either.
  // Other spellings of an address (0x7f.1) are not served.
  return /^[\d.]+$/.test(name) || name.includes(":");
}

function hostNotServed(host: string | undefined): RequestError {
  return {
    code: "HOST_NOT_SERVED",
    message: `the request is addressed to ${JSON.stringify(String(host).slice(0, 100))}; a gateway bound to loopback answers only requests to 127.0.0.1, [::1] or localhost (a web page may have pointed its own name here); put one of those in the hook URL`,
  };
}

function misdirected(response: ServerResponse, host: string | undefined): void {
  const { code, message } = hostNotServed(host);
  response.writeHead(421, { "content-type": "application/json", connection: "close" });
  response.end(JSON.stringify({ error: { code, message } }));
}

/** A 500 while nothing was sent yet, else the connection closed: the last resort's answer. */
function internalError(response: ServerResponse): void {
  if (response.headersSent) {
    response.destroy();
    return;
  }
  response.writeHead(500, { "content-type": "application/json" });
  response.end(INTERNAL_ERROR_BODY);
}

async function answer(
  deps: ListenerDeps,
  request: IncomingMessage,
  response: ServerResponse,
  client: string | undefined,
  send: (answer: Answer) => void,
  refused?: RequestError,
): Promise<void> {
  const header = (name: string) => rawHeader(request.rawHeaders, name);
  const connection = new SocketConnection(request.socket);
  let outcome: HookRouteOutcome;
  try {
    outcome = await runHookRoute(deps, client, {
      readBody: (maxBytes, authenticated) => {
        const chunks = streamChunks(request);
        const parserError = bodyRefusals.get(request);
        // After the chunks that came before it, as the parser would have told them.
        if (parserError) setImmediate(() => request.emit("error", parserError));
        return readBodyChunks(
          chunks,
          rawHeader(request.rawHeaders, "content-length"),
          maxBytes,
          deps.bodyDeadline,
          authenticated ? deps.bodyBudget : (deps.unauthenticatedBodyBudget ?? deps.bodyBudget),
        );
      },
      contentType: header("content-type"),
      target: request.url,
      authorization: header("authorization"),
      timeoutHeader: header("x-hookgate-timeout"),
      userAgent: header("user-agent"),
      refused,
      connection,
    });
  } finally {
    connection.forget();
  }
  const { status, headers, body } = hookResponse(outcome);
  headers["content-length"] = String(Buffer.byteLength(body));
  send({ response, status, headers, body });
}

/**
 * A hook's connection, closed before the answer is decided (the agent's hook timeout, an
 * interrupt, a killed agent): nobody reads the answer, and the hook lets go of what it waits on
 * (remote-actions.ts CLIENT_LEFT). The connection's close, not the response's: the response of a
 * request pipelined behind another is not the connection's yet, and never closes. The signal is
 * made only for a run of remote rules that asks for it (an AbortSignal costs a few µs), aborted at
 * once when the connection closed before; `forget` lets go of it once the hook is decided.
 */
class SocketConnection implements ClientConnection {
  private left_: AbortController | undefined;
  private forget_: (() => void) | undefined;
  constructor(private readonly socket: Duplex) {}

  left(): boolean {
    return this.socket.destroyed;
  }

  leaving(): AbortSignal {
    if (!this.left_) {
      const controller = new AbortController();
      this.left_ = controller;
      this.forget_ = onceClosed(this.socket, () => controller.abort());
    }
    return this.left_.signal;
  }

  forget(): void {
    this.forget_?.();
  }
}

/**
 * What each hook still being decided on a connection does when it closes, by connection: one
 * `close` listener for them all, as pipelined requests are decided together (one listener each
 * went past Node's limit of 10 with the 11th). Returns what forgets it once decided.
 */
const closing = new WeakMap<Duplex, Set<() => void>>();
function onceClosed(socket: Duplex, closed: () => void): () => void {
  if (socket.destroyed) {
    closed();
    return () => {};
  }
  let waiting = closing.get(socket);
  if (!waiting) {
    const hooks = new Set<() => void>();
    waiting = hooks;
    closing.set(socket, hooks);
    socket.once("close", () => {
      closing.delete(socket);
      for (const hook of hooks) hook();
    });
  }
  const hooks = waiting;
  hooks.add(closed);
  return () => hooks.delete(closed);
}

export interface Answer {
  readonly response: ServerResponse;
  readonly status: number;
  readonly headers: OutgoingHttpHeaders;
  readonly body: string;
}

/**
 * Writes the answers decided in one turn of the event loop together, at its end (`defer`,
 * setImmediate), rather than each as soon as it is decided. Under load one turn reads several
 * connections' requests; written one by one between decisions, every answer wakes the client's
 * process afresh, and that wake-up, not the decision, was most of the gateway's CPU per request
 * (bench/HISTORY.md "Answers written at the end of the turn"). An answer decided while reading
 * requests goes out at the end of that turn: the last one decided when it would have, the first
 * ones by the time the turn's other decisions take. A notify rule's enqueue is one synchronous
 * append to the intake journal, so its answer goes out in the same turn; the delivery thread is
 * woken after it (delivery-thread-host.ts `wake`). A write that throws is
 * logged and answered as the listener's last resort does (a 500, or the connection closed once
 * something was sent), alone.
 */
export function answerWriter(
  logger: HookDeps["logger"],
  defer: (task: () => void) => void = setImmediate,
): (answer: Answer) => void {
  let pending: Answer[] = [];
  const flush = () => {
    const answers = pending;
    pending = [];
    for (const { response, status, headers, body } of answers) {
      try {
        response.writeHead(status, headers);
        response.end(body);
      } catch (e) {
        logger.log("error", "could not write a hook answer", {
          error: errorMessage(e),
          path: "/v1/hooks",
        });
        internalError(response);
      }
    }
  };
  return (answer) => {
    if (pending.push(answer) === 1) defer(flush);
  };
}

/** The part of a Node readable stream that `streamChunks` uses (an IncomingMessage). */
export interface ChunkStream {
  on(event: "data", listener: (chunk: Uint8Array) => void): unknown;
  on(event: "end" | "close", listener: () => void): unknown;
  on(event: "error", listener: (error: Error) => void): unknown;
  pause(): unknown;
  resume(): unknown;
}

/**
 * A request body's chunks from the stream's own events: the stream's async iterator costs a
 * few µs per request more (it is built per request on `readable` and `read()`; bench/HISTORY.md).
 * A chunk that arrives before it is asked for pauses the stream until it is, so a body given up
 * part way (readBodyChunks past the drain limit) is not read on into memory. An error, or the
 * connection closing before the body's end, fails the next read.
 */
export function streamChunks(stream: ChunkStream): ChunkSource {
  const queued: Uint8Array[] = [];
  let ended = false;
  let failure: Error | undefined;
  let waiting: { resolve: (r: IteratorResult<Uint8Array>) => void; reject: (e: Error) => void } | undefined;
  const settle = () => {
    const waiter = waiting;
    if (!waiter) return;
    if (queued.length > 0) {
      waiting = undefined;
      waiter.resolve({ done: false, value: queued.shift() as Uint8Array });
    } else if (failure) {
      waiting = undefined;
      waiter.reject(failure);
    } else if (ended) {
      waiting = undefined;
      waiter.resolve({ done: true, value: undefined });
    }
  };
  stream.on("data", (chunk) => {
    queued.push(chunk);
    if (waiting) settle();
    else stream.pause();
  });
  stream.on("end", () => {
    ended = true;
    settle();
  });
  stream.on("error", (error) => {
    failure ??= error;
    settle();
  });
  stream.on("close", () => {
    if (!ended) failure ??= new Error("the connection closed before the body ended");
    settle();
  });
  return {
    next: () =>
      new Promise((resolve, reject) => {
        waiting = { resolve, reject };
        settle();
        if (waiting) stream.resume();
      }),
  };
}

/**
 * A header's value as a web `Headers` object would give it: every occurrence, joined with ", ".
 * Node's `request.headers` keeps only the first Authorization or Content-Type; two Authorization
 * headers must not authenticate here when the Hono path would refuse them.
 */
function rawHeader(raw: readonly string[], name: string): string | undefined {
  let value: string | undefined;
  for (let i = 0; i < raw.length; i += 2) {
    const key = raw[i] as string;
    if (key.length === name.length && key.toLowerCase() === name) {
      const v = raw[i + 1] as string;
      value = value === undefined ? v : `${value}, ${v}`;
    }
  }
  return value;
}

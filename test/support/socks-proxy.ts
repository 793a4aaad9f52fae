/** A loopback SOCKS5 proxy (RFC 1928), for `hookgate send` and `hookgate doctor` through one. */
import { connect, createServer, type Server, type Socket } from "node:net";
import { listenUntilDone } from "./loopback.js";

/**
 * A SOCKS5 proxy that connects to the host and port each client asks for (an IPv4 address or a
 * name, which it resolves itself, as `socks5h://` asks) and records each (`host:port`). Without
 * authentication, or with `authenticate`, by user name and password (RFC 1929), any taken, each
 * recorded as `user:password`; a client that offers no user name and password is refused. It
 * answers any other greeting (SOCKS4's) by closing the connection.
 */
export async function socksProxy(
  options: { readonly authenticate?: boolean } = {},
): Promise<{ url: string; seen: string[]; credentials: string[] }> {
  const seen: string[] = [];
  const credentials: string[] = [];
  const sockets = new Set<Socket>();
  const server = createServer((client) => {
    sockets.add(client);
    client.on("close", () => sockets.delete(client));
    client.on("error", () => client.destroy());
    let buffered = Buffer.alloc(0);
    let greeted = false;
    let authenticated = !options.authenticate;
    const onData = (chunk: Buffer) => {
      buffered = Buffer.concat([buffered, chunk]);
      if (!greeted) {
        // VER 5, NMETHODS, METHODS: answer "no authentication", or "user name and password"
        // (2), or none acceptable (0xff) where the client offers no such method.
        if (buffered[0] !== 5) return void client.destroy();
        const length = 2 + (buffered[1] ?? 0);
        if (buffered.length < length) return;
        const offered = [...buffered.subarray(2, length)];
        buffered = buffered.subarray(length);
        greeted = true;
        if (authenticated) client.write(Buffer.from([5, 0]));
        else if (offered.includes(2)) client.write(Buffer.from([5, 2]));
        else return void client.end(Buffer.from([5, 0xff]));
      }
      if (!authenticated) {
        // VER 1, ULEN, UNAME, PLEN, PASSWD: any taken.
        const userEnd = 2 + (buffered[1] ?? 0);
        if (buffered.length < userEnd + 1) return;
        const end = userEnd + 1 + (buffered[userEnd] ?? 0);
        if (buffered.length < end) return;
        const user = buffered.subarray(2, userEnd).toString("utf8");
        credentials.push(`${user}:${buffered.subarray(userEnd + 1, end).toString("utf8")}`);
        buffered = buffered.subarray(end);
        authenticated = true;
        client.write(Buffer.from([1, 0]));
      }
      // VER 5, CMD 1 (CONNECT), RSV, ATYP, address, port.
      if (buffered.length < 5) return;
      const type = buffered[3];
      const addressEnd = type === 1 ? 8 : type === 3 ? 5 + (buffered[4] ?? 0) : undefined;
      if (addressEnd === undefined) return void client.destroy();
      if (buffered.length < addressEnd + 2) return;
      const host =
        type === 1
          ? [...buffered.subarray(4, 8)].join(".")
          : buffered.subarray(5, addressEnd).toString("latin1");
      const port = buffered.readUInt16BE(addressEnd);
      client.off("data", onData);
      seen.push(`${host}:${port}`);
      // REP 0: granted; REP 5: connection refused.
      tunnel(sockets, client, { host, port }, buffered.subarray(addressEnd + 2), {
        granted: Buffer.from([5, 0, 0, 1, 0, 0, 0, 0, 0, 0]),
        refused: Buffer.from([5, 5, 0, 1, 0, 0, 0, 0, 0, 0]),
      });
    };
    client.on("data", onData);
  });
  const port = await listenUntilDone(closingTracked(server, sockets));
  return { url: `socks5h://127.0.0.1:${port}`, seen, credentials };
}

/**
 * A SOCKS4 proxy, with SOCKS4A's names, that connects to the address or name each client asks
 * for and records each (`host:port`) and the user ID it sent. It answers 91 (refused) where the
 * target refuses, and closes any other greeting (SOCKS5's). With `afterGrant`, a proxy that sends
 * that text in the packet of its grant (90), as no gateway does before it is asked; with
 * `trickleMs`, one that sends its answer a byte at a time, one each `trickleMs`. `answered` counts
 * the answers it sent whole.
 */
export async function socks4Proxy(
  options: { readonly afterGrant?: string; readonly trickleMs?: number } = {},
): Promise<{ url: string; seen: string[]; userIds: string[]; answered: () => number }> {
  const seen: string[] = [];
  const userIds: string[] = [];
  let answered = 0;
  const sockets = new Set<Socket>();
  const reply = (code: number) => Buffer.from([0, code, 0, 0, 0, 0, 0, 0]);
  const server = createServer((client) => {
    sockets.add(client);
    client.on("close", () => sockets.delete(client));
    client.on("error", () => client.destroy());
    let buffered = Buffer.alloc(0);
    const onData = (chunk: Buffer) => {
      buffered = Buffer.concat([buffered, chunk]);
      // VN 4, CD 1 (CONNECT), DSTPORT, DSTIP, USERID NUL, and after a DSTIP of 0.0.0.x a name NUL.
      if (buffered[0] !== 4 || (buffered.length > 1 && buffered[1] !== 1)) return void client.destroy();
      const userEnd = buffered.indexOf(0, 8);
      if (userEnd < 0) return;
      const named = buffered[4] === 0 && buffered[5] === 0 && buffered[6] === 0 && buffered[7] !== 0;
      const nameEnd = named ? buffered.indexOf(0, userEnd + 1) : userEnd;
      if (nameEnd < 0) return;
      client.off("data", onData);
      const port = buffered.readUInt16BE(2);
      const host = named
        ? buffered.subarray(userEnd + 1, nameEnd).toString("latin1")
        : [...buffered.subarray(4, 8)].join(".");
      userIds.push(buffered.subarray(8, userEnd).toString("utf8"));
      seen.push(`${host}:${port}`);
      tunnel(sockets, client, { host, port }, buffered.subarray(nameEnd + 1), {
        granted: Buffer.concat([reply(90), Buffer.from(options.afterGrant ?? "")]),
        refused: reply(91),
        ...(options.trickleMs !== undefined && { trickleMs: options.trickleMs }),
        sent: () => answered++,
      });
    };
    client.on("data", onData);
  });
  const port = await listenUntilDone(closingTracked(server, sockets));
  return { url: `socks4://127.0.0.1:${port}`, seen, userIds, answered: () => answered };
}

/**
 * The connection a proxy's `client` asked for: once the target took it, `answer.granted` is sent
 * (a byte each `answer.trickleMs`, if given; `answer.sent` is called once it is) and `rest`, what the client sent after its request,
 * goes on to the target, then each side is piped to the other; `answer.refused` ends the client's
 * connection where the target refused it. The target's socket is tracked in `sockets`.
 */
function tunnel(
  sockets: Set<Socket>,
  client: Socket,
  target: { readonly host: string; readonly port: number },
  rest: Buffer,
  answer: {
    readonly granted: Buffer;
    readonly refused: Buffer;
    readonly trickleMs?: number;
    readonly sent?: () => void;
  },
): void {
  const upstream = connect(target.port, target.host, async () => {
    if (answer.trickleMs === undefined) client.write(answer.granted);
    else
      for (const byte of answer.granted) {
        await new Promise((resolve) => setTimeout(resolve, answer.trickleMs));
        if (client.destroyed) return;
        client.write(Buffer.from([byte]));
      }
    answer.sent?.();
    if (rest.length > 0) upstream.write(rest);
    upstream.pipe(client).pipe(upstream);
  });
  sockets.add(upstream);
  upstream.on("close", () => sockets.delete(upstream));
  upstream.on("error", () => client.end(answer.refused));
}

/** `server`, whose closeAllConnections destroys every socket in `sockets`, clients and targets. */
function closingTracked(server: Server, sockets: Set<Socket>): Server & { closeAllConnections(): void } {
  return Object.assign(server, {
    closeAllConnections: () => {
      for (const socket of sockets) socket.destroy();
    },
  });
}

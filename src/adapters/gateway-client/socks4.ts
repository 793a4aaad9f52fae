/**
 * The CLI's connections to the gateway through a SOCKS4 proxy, as curl (deepagents' hook, init's
 * curl command) speaks it for `socks4://`, `socks://` and `socks4a://`: undici speaks SOCKS5
 * alone. The exchange is SOCKS 4's CONNECT and its 4A extension: a request of eight bytes, a user
 * ID and, for 4A, the gateway's name; an answer of eight bytes, 90 when granted.
 */
import { lookup } from "node:dns/promises";
import { connect, isIPv4, type Socket } from "node:net";
import { Agent, buildConnector } from "undici";

/** How the proxy is asked: where it listens, whether it resolves the name, and the user ID sent. */
export interface Socks4Route {
  readonly host: string;
  readonly port: number;
  /** socks4a://: the gateway's name is sent for the proxy to resolve, as curl sends it. */
  readonly sendsName: boolean;
  /** The proxy URL's user name, decoded, as curl sends it; SOCKS4 has no password. */
  readonly userId: string;
  /** A proxy that does not answer fails the connection after this long. */
  readonly timeoutMs: number;
}

/**
 * An agent whose every connection, an https gateway's TLS within it, goes through the proxy. Its
 * TLS handshake is given the request's time: undici aborts no request while its connection is
 * made, and its connector's own 10 s held a command whose gateway never answered the handshake
 * that long, whatever its timeout.
 */
export function socks4Agent(route: Socks4Route): Agent {
  const tls = buildConnector({ timeout: route.timeoutMs });
  return new Agent({
    connect: (options, callback) => {
      const port = Number(options.port) || (options.protocol === "https:" ? 443 : 80);
      socks4Connect(route, options.hostname, port).then(
        (socket) =>
          options.protocol === "https:"
            ? tls({ ...options, httpSocket: socket }, callback)
            : callback(null, socket),
        (e: Error) => callback(e, null),
      );
    },
  });
}

/**
 * A socket to `host`:`port` through the proxy, once it granted the connection. socks4:// sends an
 * IPv4 address, the name resolved here as curl resolves it; SOCKS4 carries no IPv6 address.
 */
async function socks4Connect(route: Socks4Route, hostname: string, port: number): Promise<Socket> {
  const host = hostname.replace(/^\[|\]$/g, "");
  const address = isIPv4(host) || route.sendsName ? host : await ipv4Of(host);
  const named = !isIPv4(address);
  const request = Buffer.concat([
    Buffer.from([4, 1, port >> 8, port & 0xff]),
    // 0.0.0.1, an address no one connects to, says that a name follows (SOCKS 4A).
    Buffer.from(named ? [0, 0, 0, 1] : address.split(".").map(Number)),
    Buffer.from(`${route.userId}\0`, "utf8"),
    named ? Buffer.from(`${address}\0`, "utf8") : Buffer.alloc(0),
  ]);
  const socket = connect(route.port, route.host);
  return new Promise((resolve, reject) => {
    let answer = Buffer.alloc(0);
    // A deadline for the whole exchange, not the socket's idle timeout: a proxy that sent its
    // answer a byte at a time, each within the timeout, held the command for up to eight of them.
    const deadline = setTimeout(() => timedOut(), route.timeoutMs);
    const settle = (failure?: Error) => {
      socket.off("data", onData).off("error", settle).off("end", ended);
      clearTimeout(deadline);
      if (failure === undefined) return resolve(socket);
      socket.destroy();
      reject(failure);
    };
    const ended = () =>
      settle(new Error(`the SOCKS4 proxy closed the connection to ${host}:${port} unanswered`));
    const timedOut = () =>
      settle(new Error(`the SOCKS4 proxy did not answer within ${route.timeoutMs / 1000} s`));
    const onData = (chunk: Buffer) => {
      answer = Buffer.concat([answer, chunk]);
      if (answer.length < 8) return;
      const code = answer[1];
      if (code !== 90)
        return settle(new Error(`the SOCKS4 proxy refused the connection to ${host}:${port} (${code})`));
      // The gateway speaks only when asked, in HTTP and TLS alike: bytes after the answer are not
      // its own. Put back on the socket while this reader still listened, they came back to it,
      // and the command hung past its timeout, its memory growing.
      if (answer.length > 8)
        return settle(
          new Error(
            `the SOCKS4 proxy sent ${answer.length - 8} bytes after its answer, before the gateway was asked anything`,
          ),
        );
      settle();
    };
    socket.once("connect", () => socket.write(request));
    socket.on("data", onData).on("error", settle).on("end", ended);
  });
}

/** The first IPv4 address of a name, or a failure that says SOCKS4 needs one. */
async function ipv4Of(host: string): Promise<string> {
  if (host.includes(":")) throw new Error(`SOCKS4 carries IPv4 addresses alone, not ${host}: use socks5h://`);
  return (await lookup(host, { family: 4 })).address;
}

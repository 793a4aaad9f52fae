/**
 * HTTP requests `fetch` cannot express, for tests against a real server: any method token,
 * repeated headers, headers past Node's 16 KiB limit, raw body bytes (invalid UTF-8, 10 MB,
 * chunked), and plain bytes on a socket for what is not HTTP at all.
 */
import { type Agent, request as httpRequest } from "node:http";
import { connect } from "node:net";

export interface RawRequest {
  readonly method?: string;
  readonly path: string;
  /** In wire order; a name may repeat. Host and Content-Length are added unless given. */
  readonly headers?: readonly (readonly [string, string])[];
  readonly body?: string | Uint8Array;
  /** Send the body with Transfer-Encoding: chunked in chunks of this many bytes. */
  readonly chunkBytes?: number;
  /** Reuse connections (keep-alive); by default each request has its own. */
  readonly agent?: Agent;
}

export interface RawResponse {
  readonly status: number;
  /** Lower-case names; repeated headers joined with ", ". */
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
  /** Whether the request went out on a connection an earlier request had used. */
  readonly reusedSocket: boolean;
}

/** Sends one request and reads the whole answer; rejects only when no answer arrived. */
export function sendRaw(origin: string, req: RawRequest): Promise<RawResponse> {
  const url = new URL(origin);
  const body = typeof req.body === "string" ? Buffer.from(req.body) : req.body;
  const flat: string[] = [];
  const given = new Set((req.headers ?? []).map(([name]) => name.toLowerCase()));
  if (!given.has("host")) flat.push("Host", url.host);
  for (const [name, value] of req.headers ?? []) flat.push(name, value);
  if (body !== undefined && req.chunkBytes === undefined && !given.has("content-length")) {
    flat.push("Content-Length", String(body.byteLength));
  }
  return new Promise((resolve, reject) => {
    const outgoing = httpRequest(
      {
        host: url.hostname,
        port: url.port,
        method: req.method ?? "POST",
        path: req.path,
        headers: flat,
        agent: req.agent ?? false,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () => {
          const headers: Record<string, string> = {};
          for (let i = 0; i < res.rawHeaders.length; i += 2) {
            const name = (res.rawHeaders[i] as string).toLowerCase();
            const value = res.rawHeaders[i + 1] as string;
            headers[name] = headers[name] === undefined ? value : `${headers[name]}, ${value}`;
          }
          resolve({
            status: res.statusCode ?? 0,
            headers,
            body: Buffer.concat(chunks).toString("utf8"),
            reusedSocket: outgoing.reusedSocket,
          });
        });
        res.on("error", reject);
      },
    );
    outgoing.on("error", reject);
    if (body === undefined) {
      outgoing.end();
    } else if (req.chunkBytes === undefined) {
      outgoing.end(body);
    } else {
      for (let i = 0; i < body.byteLength; i += req.chunkBytes) {
        outgoing.write(body.subarray(i, i + req.chunkBytes));
      }
      outgoing.end();
    }
  });
}

export interface SocketAnswer {
  /** The status line, e.g. `HTTP/1.1 400 Bad Request`, or "" when nothing came back. */
  readonly statusLine: string;
  readonly text: string;
}

/**
 * Writes bytes on a fresh connection and collects what comes back until the server closes it. For
 * requests Node's own parser refuses, and for bodies it refuses before their end: the server
 * closes each such connection after its answer, however long a busy host takes to give it.
 */
export function sendBytes(origin: string, bytes: Uint8Array): Promise<SocketAnswer> {
  const url = new URL(origin);
  return new Promise((resolve) => {
    const socket = connect(Number(url.port), url.hostname);
    const chunks: Buffer[] = [];
    socket.on("data", (c: Buffer) => chunks.push(c));
    socket.on("error", () => undefined);
    socket.on("close", () => {
      const text = Buffer.concat(chunks).toString("latin1");
      resolve({ statusLine: text.split("\r\n", 1)[0] ?? "", text });
    });
    socket.write(bytes);
  });
}

/** Resident memory of a process in KiB, from /proc (Linux); undefined elsewhere. */
export async function residentKiB(pid: number | undefined): Promise<number | undefined> {
  if (pid === undefined) return undefined;
  try {
    const { readFile } = await import("node:fs/promises");
    const status = await readFile(`/proc/${pid}/status`, "utf8");
    const match = /^VmRSS:\s+(\d+)\s+kB/m.exec(status);
    return match ? Number(match[1]) : undefined;
  } catch {
    return undefined;
  }
}

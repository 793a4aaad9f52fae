/**
 * The CLI's client for a gateway (`hookgate send`, `hookgate doctor`) against loopback servers:
 * what it returns for an answer, and the sentence it gives for each way an exchange fails.
 * test/e2e/send.test.ts covers the failures a user meets through the command (refused, no such
 * host, a redirect, --timeout); these are the ones the command's tests do not reach.
 */

import dns from "node:dns";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { createServer as createTcpServer, type Socket } from "node:net";
import { brotliCompressSync, deflateRawSync, deflateSync, gzipSync } from "node:zlib";
import { describe, expect, it, vi } from "vitest";
import { gatewayRequest, leftCoded } from "../../src/adapters/gateway-client/node.js";
import { forwardProxy } from "../support/forward-proxy.js";
import { listenUntilDone, refusingPort } from "../support/loopback.js";
import { socks4Proxy, socksProxy } from "../support/socks-proxy.js";
import { httpsServer, SERVER_TLS } from "../support/tls.js";

const json = () => '{"decision":"block","reason":"é"}';

/** A loopback server answering with `handle`; its base URL. */
async function serve(handle: (req: IncomingMessage, res: ServerResponse) => void): Promise<string> {
  return `http://127.0.0.1:${await listenUntilDone(createServer(handle))}`;
}

describe("gatewayRequest", () => {
  it("returns the status, the body and the headers (lower case, repeated ones joined)", async () => {
    let seen: Record<string, string | undefined> = {};
    const url = await serve((req, res) => {
      let body = "";
      req.on("data", (chunk) => {
        body += chunk;
      });
      req.on("end", () => {
        seen = {
          method: req.method,
          body,
          type: req.headers["content-type"],
          length: req.headers["content-length"],
        };
        res.writeHead(200, { "X-Hookgate-Decision": "deny", "Set-Cookie": ["a=1", "b=2"] });
        res.end('{"decision":"block"}');
      });
    });
    const body = '{"hook_event_name":"PreToolUse","é":1}';
    const result = await gatewayRequest({
      method: "POST",
      url: `${url}/v1/hooks`,
      headers: { "content-type": "application/json" },
      body,
      timeoutMs: 5000,
    });
    expect(result).toMatchObject({
      ok: true,
      response: {
        status: 200,
        body: '{"decision":"block"}',
        headers: { "x-hookgate-decision": "deny", "set-cookie": "a=1, b=2" },
      },
    });
    // Content-Length in bytes, not characters.
    expect(seen).toEqual({
      method: "POST",
      body,
      type: "application/json",
      length: String(Buffer.byteLength(body)),
    });
  });

  it("does not follow a redirect: the 3xx is the answer", async () => {
    let requests = 0;
    const url = await serve((_req, res) => {
      requests++;
      res.writeHead(302, { location: "/elsewhere" }).end();
    });
    const result = await gatewayRequest({ method: "GET", url: `${url}/healthz`, timeoutMs: 5000 });
    expect(result).toMatchObject({
      ok: true,
      response: { status: 302, headers: { location: "/elsewhere" } },
    });
    expect(requests).toBe(1);
  });

  it("refuses an answer larger than maxBytes", async () => {
    const url = await serve((_req, res) => res.end("x".repeat(64 * 1024)));
    const result = await gatewayRequest({ method: "GET", url, timeoutMs: 5000, maxBytes: 1024 });
    expect(result).toEqual({ ok: false, error: `the answer from ${url}/ is larger than the client accepts` });
  });

  it("bounds the whole exchange, the body's reading too", async () => {
    // Headers at once, then a body that never ends.
    const url = await serve((_req, res) => {
      res.writeHead(200, { "content-type": "application/json" });
      res.write("{");
    });
    const result = await gatewayRequest({ method: "GET", url, timeoutMs: 300 });
    expect(result).toEqual({ ok: false, error: `${url}/ did not answer within 0.3 s` });
  });

  it("says the server closed the connection when it hangs up without an answer", async () => {
    const url = await serve((req) => req.socket.destroy());
    const result = await gatewayRequest({ method: "POST", url, body: "{}", timeoutMs: 5000 });
    expect(result).toEqual({
      ok: false,
      error: `127.0.0.1:${new URL(url).port} closed the connection (ECONNRESET)`,
    });
  });

  it("says which header it could not send (a line break in a token), sending nothing", async () => {
    let requests = 0;
    const url = await serve((_req, res) => {
      requests++;
      res.end();
    });
    const result = await gatewayRequest({
      method: "POST",
      url,
      headers: { authorization: "Bearer abc\r\nX-Injected: 1" },
      body: "{}",
      timeoutMs: 5000,
    });
    expect(result.ok).toBe(false);
    expect(!result.ok && result.error).toMatch(
      new RegExp(`^request to ${url}/ failed: .*"authorization".*\\(ERR_INVALID_CHAR\\)$`),
    );
    expect(requests).toBe(0);
  });

  it("says an https URL met a server that speaks plain http, on one line", async () => {
    const url = await serve((_req, res) => res.end("{}"));
    const port = new URL(url).port;
    const result = await gatewayRequest({
      method: "GET",
      url: `https://127.0.0.1:${port}/healthz`,
      timeoutMs: 5000,
    });
    expect(result).toEqual({
      ok: false,
      error: `TLS to 127.0.0.1:${port} failed (wrong version number): the server may speak plain http (try http://)`,
      fix: "use http:// in --url and in the hook URL: hookgate serve speaks plain http, and https is a TLS proxy's in front of it",
    });
  });

  it("says an https URL met a server that speaks plain http through a proxy's tunnel too, with the same fix, not OpenSSL's line", async () => {
    // Through a proxy, undici's TLS error carries OpenSSL's own code, not EPROTO: said raw, with
    // no fix, doctor's fix then sent its user to a proxy that had reached the gateway.
    const url = await serve((_req, res) => res.end("{}"));
    const port = new URL(url).port;
    const proxy = await forwardProxy();
    const result = await gatewayRequest({
      method: "GET",
      url: `https://127.0.0.1:${port}/healthz`,
      timeoutMs: 5000,
      proxy: proxy.url,
    });
    expect(proxy.seen).toEqual([`CONNECT 127.0.0.1:${port}`]);
    expect(result).toEqual({
      ok: false,
      error: `TLS to 127.0.0.1:${port} failed (wrong version number): the server may speak plain http (try http://) (through the proxy ${proxy.url})`,
      fix: "use http:// in --url and in the hook URL: hookgate serve speaks plain http, and https is a TLS proxy's in front of it",
    });
  });

  it.each([
    ["a user name and password", "me:hunter2@", `Basic ${btoa("me:hunter2")}`],
    // As curl and axios (Claude Code's http hooks) send it; undici sent none without a password.
    ["a user name alone", "me@", `Basic ${btoa("me:")}`],
    ["a user name and an empty password", "me:@", `Basic ${btoa("me:")}`],
    ["a percent-encoded user name", "d%40corp:p%3Aw@", `Basic ${btoa("d@corp:p:w")}`],
    ["no user name", "", undefined],
  ])("sends the proxy's credentials for a proxy URL with %s", async (_, userinfo, credentials) => {
    const url = await serve((_req, res) => res.end("{}"));
    for (const target of [url, url.replace("http:", "https:")]) {
      const proxy = await forwardProxy();
      await gatewayRequest({
        method: "GET",
        url: `${target}/healthz`,
        timeoutMs: 5000,
        proxy: proxy.url.replace("//", `//${userinfo}`),
      });
      // In absolute form to an http gateway, on the CONNECT to an https one.
      expect(proxy.credentials, target).toEqual([credentials]);
    }
  });

  it.each([
    ["directly", false],
    ["through a proxy", true],
  ])(
    "decodes an answer a server compressed unasked, as the agent's http client does, %s",
    async (_, proxied) => {
      // nginx in front of a gateway (gzip on) compresses JSON; Claude Code's client decodes it, and
      // `send` printed gzip's bytes to the agent in its place.
      const json = '{"decision":"block","reason":"é"}';
      const url = await serve((req, res) => {
        if (req.url === "/gzip") res.writeHead(200, { "content-encoding": "gzip" }).end(gzipSync(json));
        else res.writeHead(200, { "content-encoding": "gzip" }).end(json);
      });
      const proxy = proxied ? await forwardProxy() : undefined;
      const ask = (path: string) =>
        gatewayRequest({
          method: "POST",
          url: `${url}${path}`,
          body: "{}",
          timeoutMs: 5000,
          ...(proxy && { proxy: proxy.url }),
        });
      const result = await ask("/gzip");
      expect(result.ok && result.response.body).toBe(json);
      expect(result.ok && result.response.headers["content-encoding"]).toBeUndefined();
      // Through a proxy, the answer may be the proxy's own: said with the proxy, as its other failures are.
      const via = proxy ? ` (through the proxy ${proxy.url})` : "";
      expect(await ask("/corrupt")).toEqual({
        ok: false,
        error: `the answer from ${url}/corrupt (HTTP 200)${via} does not decode as its Content-Encoding gzip says (Z_DATA_ERROR: incorrect header check)`,
        fix: "check the server, or a proxy in front of the gateway, that compresses its answers",
      });
    },
  );

  it.each([
    // axios decodes one coding, the header's whole value; undici's fetch a list of up to 5, and
    // fails on more; curl, run without --compressed, none.
    ["axios", "gzip", json(), true],
    ["axios", "deflate, br", json(), false],
    ["fetch", "deflate, br", json(), true],
    ["fetch", "gzip, gzip, gzip, gzip, gzip", json(), true],
    ["fetch", "gzip, zz", json(), false],
    ["curl", "gzip", json(), false],
  ] as const)("reads an answer as %s reads Content-Encoding %s", async (reader, coding, body, decoded) => {
    // send printed what no agent read: a list of codings decoded for Claude Code, a gzip answer
    // decoded for deepagents' curl hook, which prints it as it came.
    const codings = coding.split(", ");
    let coded = Buffer.from(body);
    for (const c of codings)
      coded =
        c === "br"
          ? brotliCompressSync(coded)
          : c === "deflate"
            ? deflateSync(coded)
            : c === "gzip"
              ? gzipSync(coded)
              : coded;
    const url = await serve((_req, res) => res.writeHead(200, { "content-encoding": coding }).end(coded));
    const result = await gatewayRequest({
      method: "POST",
      url: `${url}/`,
      body: "{}",
      timeoutMs: 5000,
      reader,
    });
    expect(result.ok && result.response.body === body).toBe(decoded);
    expect(result.ok && result.response.headers["content-encoding"]).toBe(decoded ? undefined : coding);
  });

  it("fails an answer that names more codings than undici's fetch (deepcode) takes, as the hook fails", async () => {
    // Each coding is decoded whole, on the one thread, where the timeout cannot stop it: a header
    // of a thousand `gzip`s held `send` for seconds. deepcode's fetch refuses more than 5.
    let coded = Buffer.from(json());
    for (let i = 0; i < 6; i++) coded = gzipSync(coded);
    const url = await serve((_req, res) =>
      res.writeHead(200, { "content-encoding": Array(6).fill("gzip").join(", ") }).end(coded),
    );
    const ask = (reader: "axios" | "fetch") =>
      gatewayRequest({ method: "POST", url: `${url}/six`, body: "{}", timeoutMs: 5000, reader });
    expect(await ask("fetch")).toEqual({
      ok: false,
      error: `the answer from ${url}/six (HTTP 200) names 6 content codings, more than deepcode's http client (undici's fetch) decodes (5), and the hook fails`,
      fix: "check the server, or a proxy in front of the gateway, that compresses its answers",
    });
    const axios = await ask("axios");
    expect(axios.ok && axios.response.body.charCodeAt(0)).toBe(0x1f);
  });

  it.each(["axios", "fetch"] as const)(
    "reads an empty answer whose Content-Encoding is br, and a 204's, as %s does: empty",
    async (reader) => {
      // An empty br body failed "unexpected end of file" where the agent's client reads nothing:
      // both flush what they have at the end, and skip a 204's body.
      const url = await serve((req, res) =>
        res.writeHead(req.url === "/204" ? 204 : 200, { "content-encoding": "br" }).end(),
      );
      for (const path of ["/200", "/204"]) {
        const result = await gatewayRequest({
          method: "POST",
          url: `${url}${path}`,
          body: "{}",
          timeoutMs: 5000,
          reader,
        });
        expect(result.ok && result.response.body, path).toBe("");
      }
    },
  );

  it("says of no coding left on an answer whose Content-Encoding or Transfer-Encoding is identity: it names none", () => {
    expect(leftCoded({ "content-encoding": "identity" }, "axios")).toBeUndefined();
    // Read as the egress guard reads the header (codingsOf): identity is no coding, nor chunked.
    expect(leftCoded({ "transfer-encoding": "identity, chunked" }, "axios")).toBeUndefined();
    expect(leftCoded({ "content-encoding": "zstd" }, "fetch")).toBe(
      "it comes in Content-Encoding zstd, which deepcode's http client (undici's fetch) does not decode",
    );
  });

  it("leaves a Transfer-Encoding gzip answer coded, as every agent's client does, and says so", async () => {
    // Node's http client and undici read a transfer coding other than chunked to the connection's
    // end and hand its bytes on; curl does without --tr-encoding. The agent reads no JSON.
    // node:http writes a body as it is given under a Transfer-Encoding that is not chunked.
    const url = await serve((_req, res) =>
      res.writeHead(200, { "transfer-encoding": "gzip", connection: "close" }).end(gzipSync(json())),
    );
    const result = await gatewayRequest({ method: "POST", url: `${url}/te`, body: "{}", timeoutMs: 5000 });
    expect(result.ok && result.response.body.charCodeAt(0)).toBe(0x1f);
    expect(result.ok && leftCoded(result.response.headers, "axios")).toBe(
      "it comes in Transfer-Encoding gzip, which no agent's http client decodes",
    );
  });

  it.each(["axios", "fetch"] as const)(
    "names the Transfer-Encoding gzip over a Content-Encoding br, not the br, for %s",
    async (reader) => {
      // The client decodes the content coding from bytes still in the transfer coding, and fails:
      // said as "does not decode as its Content-Encoding br says", the fix went to the br layer,
      // which was whole.
      const url = await serve((_req, res) =>
        res
          .writeHead(200, { "transfer-encoding": "gzip", "content-encoding": "br", connection: "close" })
          .end(gzipSync(brotliCompressSync(json()))),
      );
      const result = await gatewayRequest({
        method: "POST",
        url: `${url}/te`,
        body: "{}",
        timeoutMs: 5000,
        reader,
      });
      expect(result.ok && leftCoded(result.response.headers, reader)).toBe(
        "it comes in Transfer-Encoding gzip, which no agent's http client decodes",
      );
    },
  );

  it("decodes a deflate answer sent without its zlib header, as the agent's http client does", async () => {
    // Some servers send `Content-Encoding: deflate` as raw deflate data; axios (Claude Code's http
    // client) puts a zlib header in front of data that has none, so the agent's hook reads it,
    // and `send` failed where the hook had its answer.
    const json = '{"decision":"block","reason":"raw"}';
    const url = await serve((_req, res) =>
      res.writeHead(200, { "content-encoding": "deflate" }).end(deflateRawSync(json)),
    );
    const result = await gatewayRequest({ method: "POST", url: `${url}/raw`, body: "{}", timeoutMs: 5000 });
    expect(result.ok && result.response.body).toBe(json);
  });

  it.each([
    // axios decodes gzip with zlib's unzip, which takes a zlib stream too, and reads deflate as
    // zlib's only where the first byte is 0x78; undici's fetch takes a gzip stream alone, and a
    // zlib header of any window size (a first byte whose low four bits are 8, 0x28 here).
    ["axios", "gzip", deflateSync(json()), true],
    ["fetch", "gzip", deflateSync(json()), false],
    ["fetch", "deflate", deflateSync(json(), { windowBits: 10 }), true],
    ["axios", "deflate", deflateSync(json(), { windowBits: 10 }), false],
  ] as const)(
    "reads as %s does an answer in Content-Encoding %s that is zlib's",
    async (reader, coding, coded, read) => {
      // send failed where the agent's hook had its answer, or printed one the hook never read.
      const url = await serve((_req, res) => res.writeHead(200, { "content-encoding": coding }).end(coded));
      const result = await gatewayRequest({
        method: "POST",
        url: `${url}/`,
        body: "{}",
        timeoutMs: 5000,
        reader,
      });
      expect(result.ok && result.response.body === json()).toBe(read);
      if (!read) expect(result.ok).toBe(false);
    },
  );

  it.each([
    ["directly", false],
    ["through a proxy", true],
  ])("refuses an answer that decodes past the size limit, %s, naming the route", async (_, proxied) => {
    // A small gzip answer that decodes to more than the client takes (a gzip bomb) is as large as
    // one that came that large: through a proxy, said with the proxy, as that one is.
    const url = await serve((_req, res) =>
      res.writeHead(200, { "content-encoding": "gzip" }).end(gzipSync(Buffer.alloc(4096, 32))),
    );
    const proxy = proxied ? await forwardProxy() : undefined;
    const result = await gatewayRequest({
      method: "POST",
      url: `${url}/bomb`,
      body: "{}",
      timeoutMs: 5000,
      maxBytes: 1024,
      ...(proxy && { proxy: proxy.url }),
    });
    const via = proxy ? ` (through the proxy ${proxy.url})` : "";
    expect(result).toEqual({
      ok: false,
      error: `the answer from ${url}/bomb${via} is larger than the client accepts`,
    });
  });

  it.each([
    ["directly", undefined],
    ["through an http proxy's tunnel", forwardProxy],
    ["through a SOCKS4 proxy", socks4Proxy],
  ])(
    "says a gateway certificate signed by a CA Node does not trust is fixed with NODE_EXTRA_CA_CERTS, %s",
    async (_, proxied) => {
      // A private CA's server that sends no chain fails as UNABLE_TO_VERIFY_LEAF_SIGNATURE, which
      // names no CERT: it got no fix, and doctor sent its user to start a gateway that ran.
      const port = await httpsServer((_req, res) => res.end("{}"));
      const proxy = proxied ? await proxied() : undefined;
      const result = await gatewayRequest({
        method: "GET",
        url: `https://127.0.0.1:${port}/healthz`,
        timeoutMs: 5000,
        ...(proxy && { proxy: proxy.url }),
      });
      expect(result).toEqual({
        ok: false,
        error: `TLS to 127.0.0.1:${port} failed (UNABLE_TO_VERIFY_LEAF_SIGNATURE)${proxy ? ` (through the proxy ${proxy.url})` : ""}`,
        fix: "if a proxy inspects TLS, or the gateway's certificate comes from a private CA, set NODE_EXTRA_CA_CERTS to the path of that CA's certificate file (PEM) in the shell that runs hookgate and the agent: Node reads it only as it starts",
      });
    },
  );

  it.each(["http", "https"])(
    "says an https proxy's own certificate is not trusted, naming the proxy and not the %s gateway behind it",
    async (scheme) => {
      // This process does not trust the test CA: the proxy's handshake fails before any CONNECT.
      // Said before as undici's raw line, or as the gateway's TLS, whose user then looked at the gateway.
      const proxy = await forwardProxy(undefined, SERVER_TLS);
      const result = await gatewayRequest({
        method: "GET",
        url: `${scheme}://127.0.0.1:9/healthz`,
        timeoutMs: 5000,
        proxy: proxy.url,
      });
      expect(proxy.seen).toEqual([]);
      expect(result).toEqual({
        ok: false,
        error: `TLS to ${new URL(proxy.url).host} failed (UNABLE_TO_VERIFY_LEAF_SIGNATURE) (the proxy ${proxy.url})`,
        fix: "if a proxy inspects TLS, or the proxy's certificate comes from a private CA, set NODE_EXTRA_CA_CERTS to the path of that CA's certificate file (PEM) in the shell that runs hookgate and the agent: Node reads it only as it starts",
      });
    },
  );

  it("says a proxy given as https:// that speaks plain http is the proxy's mistake, with its fix", async () => {
    const proxy = await forwardProxy();
    const https = proxy.url.replace("http:", "https:");
    const result = await gatewayRequest({
      method: "GET",
      url: "https://127.0.0.1:9/healthz",
      timeoutMs: 5000,
      proxy: https,
    });
    expect(result).toEqual({
      ok: false,
      error: `TLS to ${new URL(proxy.url).host} failed (wrong version number): the server may speak plain http (try http://) (the proxy ${https})`,
      fix: "use http:// in the proxy's URL (HTTPS_PROXY or HTTP_PROXY): the proxy speaks plain http, and a CONNECT tunnel still carries the gateway's https",
    });
  });

  it.each([
    [
      "no user name",
      "",
      "give the proxy's user name and password in its URL (http://user:password@host:port)",
    ],
    [
      "a user name alone",
      "me@",
      "give the password after the user name in the proxy's URL (http://user:password@host:port): the user name alone was sent, with an empty password",
    ],
    [
      "a user name and password",
      "me:hunter2@",
      "check the user name and password in the proxy's URL, sent as Basic authentication (a proxy that asks for NTLM or Kerberos needs a local one, such as cntlm, in front of it)",
    ],
  ])("says what to change of a proxy's 407 to a URL with %s", async (_, userinfo, fix) => {
    // Told to give the password its URL already gave, its user looked for a mistake that was not there.
    const url = await serve((_req, res) => res.end("{}"));
    const proxy = await forwardProxy(407);
    const result = await gatewayRequest({
      method: "GET",
      url: `${url}/healthz`,
      timeoutMs: 5000,
      proxy: proxy.url.replace("//", `//${userinfo}`),
    });
    expect(result).toEqual({
      ok: false,
      error: `the proxy ${proxy.url} refused the request (HTTP 407 Proxy Authentication Required)`,
      fix,
    });
  });

  it.each([
    ["user name", "me%zz@"],
    ["password", "me:pa%ss@"],
  ])(
    "says what to write of a bad percent-escape in the proxy's %s, sending nothing",
    async (part, userinfo) => {
      // decodeURIComponent's "URI malformed" named neither the proxy nor what to change.
      const url = await serve((_req, res) => res.end("{}"));
      const proxy = await forwardProxy();
      const result = await gatewayRequest({
        method: "GET",
        url: `${url}/healthz`,
        timeoutMs: 5000,
        proxy: proxy.url.replace("//", `//${userinfo}`),
      });
      expect(proxy.seen).toEqual([]);
      expect(result).toEqual({
        ok: false,
        error: `the proxy ${proxy.url} is not usable: the ${part} in its URL does not decode: each % in it must start an escape of UTF-8 text, such as %40 for @`,
        fix: "write a % of the user name or password as %25 in the proxy's URL (HTTPS_PROXY or HTTP_PROXY): a URL reads % and the two characters after it as one escaped character",
      });
    },
  );

  it.each([
    ["socks4", "127.0.0.1"],
    ["socks4a", "localhost"],
  ])("goes through a %s:// proxy as curl does, the gateway's name sent as %s", async (scheme, sent) => {
    // socks4:// has the name resolved here (SOCKS4 carries an IPv4 address), socks4a:// sends it.
    const port = await listenUntilDone(createServer((_req, res) => res.end('{"ok":1}')));
    const proxy = await socks4Proxy();
    const result = await gatewayRequest({
      method: "GET",
      url: `http://localhost:${port}/healthz`,
      timeoutMs: 5000,
      proxy: proxy.url.replace("socks4:", `${scheme}:`).replace("//", "//me:unsent@"),
    });
    expect(result.ok, JSON.stringify(result)).toBe(true);
    expect(proxy.seen).toEqual([`${sent}:${port}`]);
    expect(proxy.userIds).toEqual(["me"]);
  });

  it("says that a SOCKS4 proxy refused the connection, naming the gateway's host and port", async () => {
    const port = await refusingPort();
    const proxy = await socks4Proxy();
    const result = await gatewayRequest({
      method: "GET",
      url: `http://127.0.0.1:${port}/healthz`,
      timeoutMs: 5000,
      proxy: proxy.url,
    });
    expect(result).toEqual({
      ok: false,
      error: `request to http://127.0.0.1:${port}/healthz through the proxy ${proxy.url} failed: the SOCKS4 proxy refused the connection to 127.0.0.1:${port} (91)`,
    });
  });

  it("fails a SOCKS4 proxy that sends bytes after its answer, before the gateway was asked anything", async () => {
    // They were put back on the socket while its reader still listened, which read them again:
    // the command hung past its timeout, its memory growing, and printed nothing.
    const port = await listenUntilDone(createServer((_req, res) => res.end("{}")));
    const forged = "HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\n{}";
    const proxy = await socks4Proxy({ afterGrant: forged });
    const result = await gatewayRequest({
      method: "POST",
      url: `http://127.0.0.1:${port}/v1/hooks/deepagents`,
      timeoutMs: 5000,
      body: "{}",
      proxy: proxy.url,
    });
    expect(result).toEqual({
      ok: false,
      error: `request to http://127.0.0.1:${port}/v1/hooks/deepagents through the proxy ${proxy.url} failed: the SOCKS4 proxy sent ${forged.length} bytes after its answer, before the gateway was asked anything`,
    });
  });

  it.each([
    ["a SOCKS4 proxy", socks4Proxy],
    ["an http proxy's tunnel", forwardProxy],
    ["a SOCKS5 proxy", socksProxy],
  ])(
    "gives an https gateway's TLS handshake through %s the request's time, not undici's 10 s, and then closes it",
    async (_, proxied) => {
      // A gateway that takes the connection and never answers the handshake: undici aborts no
      // request while its connection is made, and its TLS connector gave up after its own 10 s,
      // failing a request given 12 with "Connect Timeout Error" (and one given 3 after 10).
      // Through SOCKS5, undici gives the handshake no limit: the request was never answered, and
      // once it was, its connection still held the process.
      const held = new Set<Socket>();
      let left: () => void = () => {};
      const gatewayLeft = new Promise<void>((resolve) => {
        left = resolve;
      });
      const silent = createTcpServer((socket) => {
        held.add(socket);
        socket.on("end", left).on("close", left).resume();
      });
      const port = await listenUntilDone(
        Object.assign(silent, {
          closeAllConnections: () => {
            for (const socket of held) socket.destroy();
          },
        }),
      );
      const proxy = await proxied();
      const result = await gatewayRequest({
        method: "POST",
        url: `https://127.0.0.1:${port}/v1/hooks/deepagents`,
        timeoutMs: 12_000,
        body: "{}",
        proxy: proxy.url,
      });
      expect(result).toEqual({
        ok: false,
        error: `https://127.0.0.1:${port}/v1/hooks/deepagents did not answer within 12 s (through the proxy ${proxy.url})`,
      });
      await gatewayLeft;
    },
  );

  it("bounds a SOCKS4 proxy's whole answer by the request's time, not each byte of it", async () => {
    // The socket's idle timeout was restarted by each byte: a proxy that sent its eight a quarter
    // of the timeout apart was waited for to its last, twice the timeout, the command held so.
    const port = await listenUntilDone(createServer((_req, res) => res.end("{}")));
    const proxy = await socks4Proxy({ trickleMs: 250 });
    const result = await gatewayRequest({
      method: "POST",
      url: `http://127.0.0.1:${port}/v1/hooks/deepagents`,
      timeoutMs: 1000,
      body: "{}",
      proxy: proxy.url,
    });
    expect(result).toEqual({
      ok: false,
      error: `http://127.0.0.1:${port}/v1/hooks/deepagents did not answer within 1 s (through the proxy ${proxy.url})`,
    });
    expect(proxy.answered()).toBe(0);
  });

  it.each(["socks4://127.0.0.1:99999", "socks4a://me:pw@proxy corp:1080", "socks5h://127.0.0.1:99999"])(
    "says that the proxy %s, whose URL does not parse, is not usable, as it says of an http one",
    async (proxy) => {
      // A SOCKS4 one that did not parse threw its bare "Invalid URL": send printed it without
      // naming the proxy, and doctor stopped at it, its checks unmade.
      const url = await serve((_req, res) => res.end("{}"));
      const result = await gatewayRequest({ method: "GET", url: `${url}/healthz`, timeoutMs: 5000, proxy });
      expect(result).toEqual({
        ok: false,
        error: `the proxy ${proxy.replace("me:pw@", "")} is not usable: Invalid URL`,
      });
    },
  );

  it.each([
    ["not a URL", "not a url", '"not a url" is not a URL'],
    ["not http", "ftp://127.0.0.1/", "ftp://127.0.0.1/: only http and https URLs are supported"],
  ])("refuses a URL that is %s", async (_, url, error) => {
    expect(await gatewayRequest({ method: "GET", url, timeoutMs: 5000 })).toEqual({ ok: false, error });
  });

  it("tells a name that does not exist from a lookup that failed for now (EAI_AGAIN: DNS down, a VPN off)", async () => {
    const failing = (code: string) =>
      vi.spyOn(dns, "lookup").mockImplementation(((_host: string, _options: unknown, callback: unknown) => {
        const error = Object.assign(new Error(`getaddrinfo ${code} gateway.corp.example`), { code });
        process.nextTick(() => (callback as (e: Error) => void)(error));
      }) as unknown as typeof dns.lookup);
    const url = "http://gateway.corp.example:8787/v1/hooks/claude-code";
    const spy = failing("EAI_AGAIN");
    try {
      const again = await gatewayRequest({ method: "GET", url, timeoutMs: 5000 });
      expect(again).toEqual({
        ok: false,
        error: "the host gateway.corp.example could not be looked up just now (EAI_AGAIN, a DNS failure)",
        fix: "check this machine's DNS or network (a VPN?) and run it again, or put the gateway's address in --url",
      });
    } finally {
      spy.mockRestore();
    }
    const missing = failing("ENOTFOUND");
    try {
      const result = await gatewayRequest({ method: "GET", url, timeoutMs: 5000 });
      expect(result).toMatchObject({
        ok: false,
        error: "the host gateway.corp.example does not resolve (ENOTFOUND)",
        fix: "fix the host name in --url (gateway.corp.example), or use 127.0.0.1 for a gateway on this machine",
      });
    } finally {
      missing.mockRestore();
    }
  });
});

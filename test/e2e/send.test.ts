/**
 * `hookgate send`: a hook adapter that prints the gateway's answer exactly, and on any failure
 * prints nothing and still exits 0, so it can never break the agent that runs it.
 */

import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { brotliCompressSync, deflateSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { forwardProxy } from "../support/forward-proxy.js";
import { refusingPort } from "../support/loopback.js";
import { BIN, childEnv, ROOT, runCli, type ServerProcess, startServerProcess } from "../support/process.js";
import { socks4Proxy, socksProxy } from "../support/socks-proxy.js";
import { whenDone } from "../support/temp.js";
import { httpsServer, SERVER_CERT_NAMES, SERVER_TLS, TEST_CA_FILE } from "../support/tls.js";

const TOKEN = "hookgate-dev-token";
const FIXTURES = join(ROOT, "test/fixtures/onboarding");
const fixture = (name: string) => readFileSync(join(FIXTURES, name), "utf8");
const DENY =
  '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"Deleting from / is never allowed"}}';

/** A PreToolUse with its own session id, to find its audit line. */
function event(sessionId: string, command = "rm -rf /"): string {
  return JSON.stringify({
    session_id: sessionId,
    transcript_path: `/tmp/${sessionId}.jsonl`,
    cwd: "/home/dev/proj",
    hook_event_name: "PreToolUse",
    tool_name: "Bash",
    tool_input: { command },
  });
}

let server: ServerProcess;
let stub: Server;
let stubUrl: string;
let closedUrl: string;

beforeAll(async () => {
  server = await startServerProcess(join(ROOT, "examples/policy.json"));
  // A server that misbehaves in every way a gateway URL can.
  stub = createServer((req, res) => {
    if (req.url?.startsWith("/500")) {
      res.writeHead(500, { "content-type": "application/json" });
      res.end(DENY);
    } else if (req.url?.startsWith("/302")) {
      res.writeHead(302, { location: "/v1/hooks/claude-code" });
      res.end();
    } else if (req.url?.startsWith("/401")) {
      res.writeHead(401, { "content-type": "application/json" });
      res.end('{"error":{"code":"AUTH_UNKNOWN_TOKEN","message":"no"}}');
    } else if (req.url?.startsWith("/page")) {
      // A web server at the URL that is not hookgate (a site's catch-all, a login page): a 200.
      res.writeHead(200, { "content-type": "text/html" });
      res.end("<!DOCTYPE html><title>Sign in</title>");
    } else if (req.url?.startsWith("/coded")) {
      // A proxy in front of the gateway that compresses twice: a list of codings.
      res.writeHead(200, { "content-encoding": "deflate, br" });
      res.end(brotliCompressSync(deflateSync(DENY)));
    } else if (req.url?.startsWith("/slow")) {
      // never answers
    } else {
      res.writeHead(404);
      res.end("not found");
    }
  });
  await new Promise<void>((resolve) => stub.listen(0, "127.0.0.1", resolve));
  stubUrl = `http://127.0.0.1:${(stub.address() as AddressInfo).port}`;
  closedUrl = `http://127.0.0.1:${await refusingPort()}/v1/hooks/claude-code`;
});
afterAll(async () => {
  stub?.closeAllConnections();
  await new Promise((resolve) => stub?.close(resolve));
  await server?.stop();
});

describe("hookgate send", { timeout: 90_000 }, () => {
  it("prints the gateway's answer exactly and exits 0", async () => {
    const result = await runCli(
      ["send", "--url", `${server.url}/v1/hooks/claude-code`],
      fixture("claude-code.PreToolUse.json"),
      { HOOKGATE_TOKEN: TOKEN },
    );
    expect(result).toMatchObject({ code: 0, stdout: DENY });
    expect(result.stderr).toBe("");
    const line = await server.waitForLine(
      (l) => l.msg === "decision" && l.sessionId === "9f3c0d2e-onboarding",
    );
    expect(line).toMatchObject({ team: "platform", client: "claude-code", decision: "deny" });
  });

  it("prints an empty answer as nothing", async () => {
    const result = await runCli(
      ["send", "--url", `${server.url}/v1/hooks/claude-code`],
      event("s-ls", "ls"),
      {
        HOOKGATE_TOKEN: TOKEN,
      },
    );
    expect(result).toMatchObject({ code: 0, stdout: "" });
  });

  it("posts stdin byte for byte: invalid UTF-8 reaches the gateway as it came", async () => {
    // Decoded as text first, the 0xff became U+FFFD and the gateway judged an `ls` it never got.
    const [before, after] = event("s-latin1", "ls X").split("X");
    const bytes = Buffer.concat([Buffer.from(before ?? ""), Buffer.from([0xff]), Buffer.from(after ?? "")]);
    const result = await runCli(["send", "--url", `${server.url}/v1/hooks/claude-code`], bytes, {
      HOOKGATE_TOKEN: TOKEN,
    });
    expect(result.code).toBe(0);
    expect(result.stderr).toContain("could not judge this event (BODY_NOT_UTF8)");
  });

  it("takes the token from HOOKGATE_AUTH when HOOKGATE_TOKEN is unset, HOOKGATE_TOKEN first", async () => {
    const auth = await runCli(["send", "--url", `${server.url}/v1/hooks/claude-code`], event("s-auth"), {
      HOOKGATE_AUTH: TOKEN,
    });
    expect(auth.stdout).toBe(DENY);
    expect(await server.waitForLine((l) => l.sessionId === "s-auth")).toMatchObject({ team: "platform" });
    const both = await runCli(["send", "--url", `${server.url}/v1/hooks/claude-code`], event("s-both"), {
      HOOKGATE_TOKEN: TOKEN,
      HOOKGATE_AUTH: "wrong",
    });
    expect(both.stdout).toBe(DENY);
    expect(await server.waitForLine((l) => l.sessionId === "s-both")).toMatchObject({ team: "platform" });
  });

  it("says which variables it read when no token is set, per route", async () => {
    const claude = await runCli(
      ["send", "--url", `${server.url}/v1/hooks/claude-code`],
      event("s-none-1"),
      {},
    );
    expect(claude.stderr).toContain("neither HOOKGATE_TOKEN nor HOOKGATE_AUTH is set; sending no token");
    const agents = await runCli(["send", "--url", `${server.url}/v1/hooks/deepagents`], event("s-none-2"), {
      HOOKGATE_TOKEN: TOKEN,
    });
    expect(agents.stderr).toContain("HOOKGATE_AUTH is not set; sending no token");
  });

  it("gets the gateway's auth failure worded for itself, not for an http hook's header", async () => {
    // Told to add "headers" and "allowedEnvVars" to the hook (an http hook's fix, or the curl
    // command's on the deepagents route), a user of this command hook had nothing to add there.
    const claude = await runCli(
      ["send", "--url", `${server.url}/v1/hooks/claude-code`],
      event("s-fix-1"),
      {},
    );
    expect(claude.stdout).toContain(
      "export HOOKGATE_TOKEN=<your team's token> in the shell that starts the agent: hookgate send, the command hook, sends it",
    );
    expect(claude.stdout).not.toMatch(/allowedEnvVars|"headers"/);
    const agents = await runCli(["send", "--url", `${server.url}/v1/hooks/deepagents`], event("s-fix-2"), {});
    expect(agents.stdout).toContain(
      "export HOOKGATE_AUTH=<your team's token> in the shell that starts the agent",
    );
    expect(agents.stdout).not.toContain("curl");
    const wrong = await runCli(["send", "--url", `${server.url}/v1/hooks/claude-code`], event("s-fix-3"), {
      HOOKGATE_AUTH: "not-a-team-token",
    });
    expect(wrong.stdout).toContain(
      "check HOOKGATE_TOKEN (or HOOKGATE_AUTH, which hookgate send sends when HOOKGATE_TOKEN is unset)",
    );
  });

  it("names the variable to fix when the token holds a character no header can carry", async () => {
    // node:http's own refusal named the "authorization" header, not the variable the user set.
    for (const [name, value] of [
      ["HOOKGATE_TOKEN", "hookgate-dev\ntoken"],
      ["HOOKGATE_AUTH", "hookgate-dev-token\u201d"],
    ] as const) {
      const result = await runCli(
        ["send", "--url", `${server.url}/v1/hooks/claude-code`],
        event(`s-badchar-${name}`),
        { [name]: value },
      );
      expect(result).toMatchObject({ code: 0, stdout: "" });
      expect(result.stderr).toMatch(
        new RegExp(
          `^hookgate send: ${name} holds a character no HTTP header can carry.*set it to the token alone`,
        ),
      );
    }
  });

  it("--client picks the route only when --url is the gateway's base URL", async () => {
    const base = await runCli(
      ["send", "--url", server.url, "--client", "deepcode"],
      fixture("deepcode.PreToolUse.json"),
      { HOOKGATE_TOKEN: TOKEN },
    );
    expect(base).toMatchObject({ code: 0, stdout: DENY });
    expect(await server.waitForLine((l) => l.msg === "decision" && l.client === "deepcode")).toMatchObject({
      team: "platform",
    });

    // The route's client reads its token: deepagents strips *TOKEN* variables, so HOOKGATE_AUTH only.
    const full = await runCli(
      ["send", "--url", `${server.url}/v1/hooks/deepagents`, "--client", "claude-code"],
      event("s-full"),
      { HOOKGATE_AUTH: TOKEN, HOOKGATE_TOKEN: "wrong" },
    );
    expect(full.stdout).toBe(DENY);
    expect(full.stderr).toMatch(/--client claude-code is ignored/);
    expect(await server.waitForLine((l) => l.sessionId === "s-full")).toMatchObject({ client: "deepagents" });

    // No --client and a base URL: the generic route, dialect read from the body.
    const generic = await runCli(["send", "--url", `${server.url}/`], event("s-generic"), {
      HOOKGATE_TOKEN: TOKEN,
    });
    expect(generic.stdout).toBe(DENY);
    expect(await server.waitForLine((l) => l.sessionId === "s-generic")).toMatchObject({
      client: "claude-code",
    });
  });

  it("posts through the proxy of HTTPS_PROXY or HTTP_PROXY, as Claude Code's http hooks do, unless NO_PROXY exempts the host", async () => {
    const proxy = await forwardProxy();
    const hookUrl = `${server.url}/v1/hooks/claude-code`;
    const target = new URL(server.url).host;
    for (const variable of ["HTTPS_PROXY", "HTTP_PROXY"]) {
      const result = await runCli(["send", "--url", hookUrl], fixture("claude-code.PreToolUse.json"), {
        HOOKGATE_TOKEN: TOKEN,
        [variable]: proxy.url,
      });
      expect(result).toMatchObject({ code: 0, stdout: DENY, stderr: "" });
    }
    expect(proxy.seen).toEqual([
      `POST http://${target}/v1/hooks/claude-code`,
      `POST http://${target}/v1/hooks/claude-code`,
    ]);
    const exempt = await runCli(["send", "--url", hookUrl], fixture("claude-code.PreToolUse.json"), {
      HOOKGATE_TOKEN: TOKEN,
      HTTPS_PROXY: proxy.url,
      NO_PROXY: "127.0.0.1",
    });
    expect(exempt).toMatchObject({ code: 0, stdout: DENY });
    expect(proxy.seen).toHaveLength(2);
  });

  it("prints a compressed answer as the route's client reads it: decoded for deepcode, none for Claude Code", async () => {
    // axios decodes one coding, undici's fetch a list: send decoded the list for every route, so it
    // printed a decision the Claude Code hook never read (a hook error, the tool call let through).
    const deepcode = await runCli(["send", "--url", `${stubUrl}/coded/v1/hooks/deepcode`], "{}", {});
    expect(deepcode.stdout).toBe(DENY);
    const claude = await runCli(["send", "--url", `${stubUrl}/coded/v1/hooks/claude-code`], "{}", {});
    expect(claude.stdout).toBe("");
    expect(claude.stderr).toContain(
      "it comes in Content-Encoding deflate, br, which Claude Code's http client (axios) does not decode: check the server, or a proxy in front of the gateway, that compresses its answers; the agent gets no answer",
    );
  });

  it("posts on a deepagents route as its hook, init's curl command, goes: http_proxy, never HTTP_PROXY", async () => {
    // It went Claude Code's way, through HTTP_PROXY, which curl never reads (doctor checked directly).
    const proxy = await forwardProxy();
    const hookUrl = `${server.url}/v1/hooks/deepagents`;
    for (const [variable, seen] of [
      ["HTTP_PROXY", 0],
      ["http_proxy", 1],
    ] as const) {
      const result = await runCli(["send", "--url", hookUrl], event(`s-curl-${variable}`), {
        HOOKGATE_AUTH: TOKEN,
        [variable]: proxy.url,
      });
      expect(result, variable).toMatchObject({ code: 0, stdout: DENY, stderr: "" });
      expect(proxy.seen, variable).toHaveLength(seen);
    }
  });

  it("posts through a SOCKS5 proxy, socks5h:// as curl takes it, with no warning on stderr", async () => {
    // socks5h:// failed, "Invalid URL protocol", where deepagents' curl posts through it; and
    // undici's notice that its SOCKS5 support is experimental came on every hook's stderr.
    const proxy = await socksProxy();
    const target = new URL(server.url).host;
    const routes = [
      ["deepagents", "ALL_PROXY", proxy.url],
      ["deepcode", "HTTPS_PROXY", proxy.url.replace("socks5h:", "socks5:")],
    ] as const;
    for (const [client, variable, url] of routes) {
      const result = await runCli(
        ["send", "--url", `${server.url}/v1/hooks/${client}`],
        event(`s-socks-${client}`),
        {
          HOOKGATE_AUTH: TOKEN,
          HOOKGATE_TOKEN: TOKEN,
          [variable]: url,
        },
      );
      expect(result, client).toMatchObject({ code: 0, stdout: DENY, stderr: "" });
    }
    expect(proxy.seen).toEqual([target, target]);
  });

  it("gives a SOCKS5 proxy the user name and password of its URL decoded, as curl does", async () => {
    // undici hands its SOCKS5 client the URL's user name and password as written, escapes and
    // all: a password with a %40 for its "@" was refused by a proxy that took curl's.
    const proxy = await socksProxy({ authenticate: true });
    const result = await runCli(
      ["send", "--url", `${server.url}/v1/hooks/deepagents`],
      event("s-socks-auth"),
      {
        HOOKGATE_AUTH: TOKEN,
        ALL_PROXY: proxy.url.replace("//", "//us%40er:p%40ss%3Aw@"),
      },
    );
    expect(result).toMatchObject({ code: 0, stdout: DENY, stderr: "" });
    expect(proxy.credentials).toEqual(["us@er:p@ss:w"]);
  });

  it("posts through a SOCKS4 proxy, curl's socks:// too, as deepagents' hook does", async () => {
    // It spoke no SOCKS4 and the event was lost, where the hook's curl posts through the proxy.
    const proxy = await socks4Proxy();
    const port = new URL(proxy.url).port;
    for (const scheme of ["socks4", "socks4a", "socks"]) {
      const result = await runCli(["send", "--url", `${server.url}/v1/hooks/deepagents`], event("s-socks4"), {
        HOOKGATE_AUTH: TOKEN,
        ALL_PROXY: `${scheme}://127.0.0.1:${port}`,
      });
      expect(result, scheme).toMatchObject({ code: 0, stdout: DENY, stderr: "" });
    }
    const target = new URL(server.url).host;
    expect(proxy.seen).toEqual([target, target, target]);
  });

  it("names a SOCKS4 proxy whose URL does not parse as the proxy that is not usable", async () => {
    // Its SOCKS5 URL, written from the host, threw: "hookgate send: Invalid URL", naming no URL.
    const result = await runCli(
      ["send", "--url", `${server.url}/v1/hooks/deepagents`],
      event("s-socks4-bad"),
      {
        HOOKGATE_AUTH: TOKEN,
        ALL_PROXY: "socks4://proxy host:1080",
      },
    );
    expect(result).toMatchObject({ code: 0, stdout: "" });
    expect(result.stderr).toMatch(/^hookgate send: the proxy socks4:\/\/proxy host:1080 is not usable: /);
  });

  it("names the variable its proxy came from in a fix to the proxy's URL: curl's http_proxy, never HTTP_PROXY", async () => {
    // The fix said "(HTTPS_PROXY or HTTP_PROXY)" for every route: on a deepagents one, whose curl
    // never reads HTTP_PROXY, its user mended a variable that was not the one in use.
    const proxy = await forwardProxy();
    for (const [route, variable] of [
      ["deepagents", "http_proxy"],
      ["claude-code", "HTTP_PROXY"],
    ] as const) {
      const result = await runCli(
        ["send", "--url", `${server.url}/v1/hooks/${route}`],
        event(`s-esc-${route}`),
        {
          HOOKGATE_AUTH: TOKEN,
          HOOKGATE_TOKEN: TOKEN,
          [variable]: proxy.url.replace("//", "//me:pa%ss@"),
        },
      );
      expect(result.stdout, route).toBe("");
      expect(result.stderr, route).toContain(`as %25 in the proxy's URL (${variable}):`);
      expect(result.stderr, route).not.toContain("pa%ss");
    }
    expect(proxy.seen).toEqual([]);
  });

  it("posts to a gateway on this machine's loopback directly when the proxy is on another machine", async () => {
    // That proxy would connect to its own loopback: SessionStart and Setup, which reach the
    // gateway only through send, were lost though the gateway answers here. No request leaves
    // this machine: the proxy is never asked.
    for (const proxy of ["http://proxy.invalid:3128", "http://user:pw@proxy.invalid:3128"]) {
      const result = await runCli(
        ["send", "--url", `${server.url}/v1/hooks/claude-code`],
        fixture("claude-code.PreToolUse.json"),
        { HOOKGATE_TOKEN: TOKEN, HTTPS_PROXY: proxy },
      );
      expect(result).toMatchObject({ code: 0, stdout: DENY, stderr: "" });
    }
  });

  it("through a proxy, ends without the optimising compile of undici's parser that held its exit", async () => {
    // undici parses the answer with WebAssembly; V8 then compiled its parser again, optimised, in
    // the background, and the process waited for that compile before it could exit (a few hundred
    // ms added to a command hook that had already printed its answer).
    const proxy = await forwardProxy();
    const result = await new Promise<{ stdout: string; code: number | null }>((resolve) => {
      const child = spawn(
        process.execPath,
        ["--trace-wasm-compilation-times", BIN, "send", "--url", `${server.url}/v1/hooks/claude-code`],
        { cwd: ROOT, env: childEnv({ HOOKGATE_TOKEN: TOKEN, HTTP_PROXY: proxy.url }) },
      );
      whenDone(() => void child.kill("SIGKILL"));
      let stdout = "";
      child.stdout.on("data", (c) => {
        stdout += c;
      });
      child.on("exit", (code) => resolve({ stdout, code }));
      child.stdin.end(fixture("claude-code.PreToolUse.json"));
    });
    expect(result.code).toBe(0);
    expect(result.stdout).toContain(DENY);
    expect(proxy.seen).toHaveLength(1);
    // V8's trace names the tier of each compile: the baseline one alone.
    expect(result.stdout).toMatch(/using Liftoff/);
    expect(result.stdout).not.toMatch(/using TurboFan/);
  });

  it("names the proxy in an HTTP error that came through it, without its password", async () => {
    // A proxy set for other machines that cannot reach this one's gateway answers 502 itself: said
    // as "HTTP 502 from <the gateway's URL>" alone, it sent the user looking at a gateway that was
    // never asked.
    const proxy = await forwardProxy(502);
    const hookUrl = `${server.url}/v1/hooks/claude-code`;
    const result = await runCli(["send", "--url", hookUrl], fixture("claude-code.PreToolUse.json"), {
      HOOKGATE_TOKEN: TOKEN,
      HTTP_PROXY: proxy.url.replace("//", "//me:hunter2@"),
    });
    expect(result).toMatchObject({ code: 0, stdout: "" });
    expect(result.stderr).toBe(
      `hookgate send: HTTP 502 from ${hookUrl} through the proxy ${proxy.url}; the agent gets no answer\n`,
    );
  });

  it("says the proxy refused the request when it answers 407, and what to change, without its password", async () => {
    const proxy = await forwardProxy(407);
    const result = await runCli(
      ["send", "--url", `${server.url}/v1/hooks/claude-code`],
      fixture("claude-code.PreToolUse.json"),
      { HOOKGATE_TOKEN: TOKEN, HTTPS_PROXY: proxy.url.replace("//", "//me:hunter2@") },
    );
    expect(result).toMatchObject({ code: 0, stdout: "" });
    expect(result.stderr).toMatch(
      /^hookgate send: the proxy http:\/\/127\.0\.0\.1:\d+ refused the request \(HTTP 407/,
    );
    expect(result.stderr).toContain(
      "(HTTP 407 Proxy Authentication Required): check the user name and password in the proxy's URL, sent as Basic authentication (a proxy that asks for NTLM or Kerberos needs a local one, such as cntlm, in front of it); the agent gets no answer\n",
    );
    expect(result.stderr).not.toContain("hunter2");
  });

  it("says which names a gateway's trusted certificate holds when the URL's host is not one, and what to change", async () => {
    // The CA trusted as a user trusts theirs: only the name is wrong (localhost, where the
    // certificate says 127.0.0.1). Said before as "(ERR_TLS_CERT_ALTNAME_INVALID)" alone.
    const port = await httpsServer((_req, res) => res.end("{}"));
    const result = await runCli(
      ["send", "--url", `https://localhost:${port}/v1/hooks/claude-code`],
      fixture("claude-code.PreToolUse.json"),
      { HOOKGATE_TOKEN: TOKEN, NODE_EXTRA_CA_CERTS: TEST_CA_FILE },
    );
    expect(result).toMatchObject({ code: 0, stdout: "" });
    expect(result.stderr).toBe(
      `hookgate send: TLS to localhost:${port} failed (ERR_TLS_CERT_ALTNAME_INVALID): the gateway's certificate is not for localhost; it holds ${SERVER_CERT_NAMES}: use one of those names as the host in --url and in the hook URL, or have the gateway's certificate made for localhost too; the agent gets no answer\n`,
    );
  });

  it("says an https proxy's certificate is not for the proxy URL's host as the proxy's, not undici's raw line", async () => {
    // undici wraps this one failure of the proxy's TLS (UND_ERR_PRX_TLS, "Secure Proxy Connection failed").
    const proxy = await forwardProxy(undefined, SERVER_TLS);
    const byName = proxy.url.replace("127.0.0.1", "localhost");
    const result = await runCli(
      ["send", "--url", "http://gateway.example.test:8787/v1/hooks/claude-code"],
      fixture("claude-code.PreToolUse.json"),
      { HOOKGATE_TOKEN: TOKEN, HTTPS_PROXY: byName, NODE_EXTRA_CA_CERTS: TEST_CA_FILE },
    );
    expect(result).toMatchObject({ code: 0, stdout: "" });
    expect(proxy.seen).toEqual([]);
    expect(result.stderr).toBe(
      `hookgate send: TLS to ${new URL(byName).host} failed (ERR_TLS_CERT_ALTNAME_INVALID): the proxy's certificate is not for localhost; it holds ${SERVER_CERT_NAMES} (the proxy ${byName}): use one of those names as the host in the proxy's URL (HTTPS_PROXY), or have the proxy's certificate made for localhost too; the agent gets no answer\n`,
    );
  });

  it("through an https proxy at an IP address, prints no warning of Node's beside its own line", async () => {
    // undici named the proxy's IP address as the TLS server name, and Node warned of it (DEP0123)
    // on the stderr a hook's user reads.
    const port = await refusingPort();
    const result = await runCli(
      ["send", "--url", "http://gateway.example.test:8787/v1/hooks/claude-code"],
      fixture("claude-code.PreToolUse.json"),
      { HOOKGATE_TOKEN: TOKEN, HTTPS_PROXY: `https://127.0.0.1:${port}` },
    );
    expect(result).toMatchObject({ code: 0, stdout: "" });
    expect(result.stderr).toMatch(
      /^hookgate send: request to .* through the proxy https:\/\/127\.0\.0\.1:\d+ failed: .*ECONNREFUSED/,
    );
    expect(result.stderr).not.toContain("DEP0123");
    expect(result.stderr.trimEnd().split("\n")).toHaveLength(1);
  });

  it.each([
    ["the gateway is down", () => ["--url", closedUrl], /nothing is listening/],
    ["the URL is not a URL", () => ["--url", "not a url"], /is not a URL/],
    ["the URL is not http", () => ["--url", "ftp://127.0.0.1/v1/hooks"], /not an http/],
    ["the URL carries a password", () => ["--url", "http://u:p@127.0.0.1/v1/hooks"], /password/],
    [
      "the host does not resolve",
      () => ["--url", "http://no-such-host.invalid/v1/hooks"],
      // ENOTFOUND where DNS answers; EAI_AGAIN on a host without DNS.
      /does not resolve|could not be looked up just now/,
    ],
    // The failure's fix, as doctor prints it: the message alone says "try http://".
    [
      "--url is https to the plain-http gateway",
      () => ["--url", `${server.url.replace("http:", "https:")}/v1/hooks/claude-code`],
      /\(try http:\/\/\): use http:\/\/ in --url and in the hook URL: hookgate serve speaks plain http/,
    ],
    ["the answer is a 500", () => ["--url", `${stubUrl}/500/v1/hooks/claude-code`], /HTTP 500/],
    ["the answer is a 401", () => ["--url", `${stubUrl}/401/v1/hooks/claude-code`], /HTTP 401/],
    ["the answer is a 404", () => ["--url", `${stubUrl}/nope/v1/hooks/claude-code`], /HTTP 404/],
    ["the answer is a redirect", () => ["--url", `${stubUrl}/302/v1/hooks/claude-code`], /HTTP 302/],
    // Claude Code adds a SessionStart command hook's plain output to the context, as deepagents
    // does on SessionStart and UserPromptSubmit: a page printed would reach the model.
    [
      "a 200 answer is not a hook answer",
      () => ["--url", `${stubUrl}/page/v1/hooks/claude-code`],
      /not a JSON object.*not hookgate/,
    ],
    [
      "no answer within --timeout",
      () => ["--url", `${stubUrl}/slow/v1/hooks`, "--timeout", "1"],
      /within 1 s/,
    ],
    // Taken for a base URL, it was posted to /v1/hook/deepagents/v1/hooks and judged, a
    // deepagents v2 event as Claude Code's, while an http hook at that URL gets a 404.
    [
      "--url is a mistyped hook URL",
      () => ["--url", `${server.url}/v1/hook/claude-code`],
      /no hook route and no gateway base URL \(its path has \/v1\/ but no \/v1\/hooks\): use the hook URL hookgate init printed \(here likely http:\/\/127\.0\.0\.1:\d+\/v1\/hooks\/claude-code\)/,
    ],
    ["--url is missing", () => [], /needs --url/],
    ["an option is unknown", () => ["--url", closedUrl, "--bogus"], /bogus/],
    [
      "--client is unknown",
      () => ["--url", closedUrl, "--client", "cursor"],
      /--client cursor is not one of claude-code, /,
    ],
  ])("prints nothing and exits 0 when %s", async (_, args, reason) => {
    const result = await runCli(["send", ...args()], fixture("claude-code.PreToolUse.json"), {
      HOOKGATE_TOKEN: TOKEN,
    });
    expect(result.code).toBe(0);
    expect(result.stdout).toBe("");
    expect(result.stderr).toMatch(reason);
    expect(result.stderr).toMatch(/^hookgate send: /);
  });
});

/** `hookgate doctor` against a running gateway: each check with ✓ or ✗ and a fix. */
import { spawnSync } from "node:child_process";
import { copyFileSync, mkdirSync, writeFileSync } from "node:fs";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { join } from "node:path";
import { brotliCompressSync, deflateSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { doctorCommand, type Resolve } from "../../src/entry/doctor.js";
import { forwardProxy } from "../support/forward-proxy.js";
import { listenUntilDone, refusingPort } from "../support/loopback.js";
import { BIN, childEnv, ROOT, runCli, type ServerProcess, startServerProcess } from "../support/process.js";
import { socks4Proxy, socksProxy } from "../support/socks-proxy.js";
import { tempDir } from "../support/temp.js";

const TOKEN = "hookgate-dev-token";

let server: ServerProcess;
let closedUrl: string;
beforeAll(async () => {
  server = await startServerProcess(join(ROOT, "examples/policy.json"));
  closedUrl = `http://127.0.0.1:${await refusingPort()}/v1/hooks/claude-code`;
});
afterAll(async () => {
  await server?.stop();
});

/**
 * A shell word as fish reads it (fish-language(1), "Quotes"): inside single quotes, \\ is a
 * backslash and \' a quote, any other backslash itself; outside them, a backslash escapes the
 * character after it. Enough for the words shellQuote writes.
 */
function fishWord(word: string): string {
  let out = "";
  let quoted = false;
  for (let i = 0; i < word.length; i++) {
    const c = word[i];
    const next = word[i + 1] ?? "";
    if (c === "'") quoted = !quoted;
    else if (c === "\\" && (!quoted || next === "\\" || next === "'")) out += word[++i];
    else out += c;
  }
  return out;
}

const lines = (stdout: string) => stdout.split("\n").filter((l) => /^[✓✗] /.test(l));

/**
 * `hookgate doctor --url url` run in this process with `env`, its DNS lookups answered by
 * `resolve` (the system's when not given): its exit code and what it printed.
 */
async function doctorIn(
  url: string,
  env: Record<string, string>,
  resolve?: Resolve,
): Promise<{ code: number; out: string }> {
  let out = "";
  const io = {
    out: (text: string) => {
      out += text;
    },
    err: () => {},
    stdin: async () => new Uint8Array(),
  };
  const code = await doctorCommand(["--url", url], io, env, resolve);
  return { code, out };
}

/** A loopback server answering with `answer` until the test ends; its claude-code hook URL. */
async function hookUrlOf(answer: (req: IncomingMessage, res: ServerResponse) => void): Promise<string> {
  return `http://127.0.0.1:${await listenUntilDone(createServer(answer))}/v1/hooks/claude-code`;
}

/**
 * `hookgate doctor` against a loopback server whose /healthz is hookgate's with `health` added,
 * and which answers the token and sample checks as the gateway does.
 */
async function doctorAgainstHealth(health: Record<string, unknown>): Promise<{ code: number; out: string }> {
  const url = await hookUrlOf((req, res) => {
    req.resume();
    res.writeHead(200, { "content-type": "application/json" });
    if (req.url === "/healthz") {
      res.end(JSON.stringify({ status: "ok", policy: "0123456789abcdef", ...health }));
      return;
    }
    res.end(
      JSON.stringify(
        req.url?.startsWith("/v1/whoami")
          ? { team: "platform" }
          : { hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: "deny" } },
      ),
    );
  });
  return doctorIn(url, { HOOKGATE_TOKEN: TOKEN });
}

describe("hookgate doctor", { timeout: 90_000 }, () => {
  it("passes every check with the right token", async () => {
    const result = await runCli(["doctor", "--url", `${server.url}/v1/hooks/claude-code`], "", {
      HOOKGATE_TOKEN: TOKEN,
    });
    expect(result.code, result.stdout).toBe(0);
    const checks = lines(result.stdout);
    expect(checks).toHaveLength(3);
    expect(checks.every((l) => l.startsWith("✓ "))).toBe(true);
    expect(checks[0]).toMatch(/gateway answers: GET \/healthz 200, policy [0-9a-f]{16}/);
    expect(checks[1]).toBe('✓ token in HOOKGATE_TOKEN accepted: team "platform"');
    expect(checks[2]).toBe(
      '✓ sample PreToolUse Bash "rm -rf /" → deny ("Deleting from / is never allowed"), as expected',
    );
  });

  it("works from the gateway's base URL and with each client's route and token variable", async () => {
    const runs = await Promise.all([
      runCli(["doctor", "--url", server.url], "", { HOOKGATE_TOKEN: TOKEN }),
      runCli(["doctor", "--url", `${server.url}/v1/hooks/deepcode`], "", { HOOKGATE_TOKEN: TOKEN }),
      runCli(["doctor", "--url", `${server.url}/v1/hooks/deepagents`], "", { HOOKGATE_AUTH: TOKEN }),
      runCli(
        ["doctor", "--url", server.url, "--command", "git push --force origin main", "--expect", "ask"],
        "",
        {
          HOOKGATE_TOKEN: TOKEN,
        },
      ),
    ]);
    for (const run of runs) expect(run.code, run.stdout).toBe(0);
    expect(runs[1]?.stdout).toMatch(/\(deepcode\)/);
    expect(runs[2]?.stdout).toMatch(/token in HOOKGATE_AUTH accepted/);
    expect(runs[3]?.stdout).toMatch(
      /→ ask \("A force push or a remote branch deletion needs a human"\), as expected/,
    );
  });

  it("says that --client is ignored when the hook URL names another client's route, as send does", async () => {
    const [other, same] = await Promise.all([
      runCli(["doctor", "--url", `${server.url}/v1/hooks/claude-code`, "--client", "deepcode"], "", {
        HOOKGATE_TOKEN: TOKEN,
      }),
      runCli(["doctor", "--url", `${server.url}/v1/hooks/deepcode`, "--client", "deepcode"], "", {
        HOOKGATE_TOKEN: TOKEN,
      }),
    ]);
    expect(other.code).toBe(0);
    expect(other.stdout.split("\n")[0]).toMatch(/\/v1\/hooks\/claude-code \(claude-code\), direct$/);
    expect(other.stderr).toBe(
      "hookgate doctor: --url already names the route /v1/hooks/claude-code; --client deepcode is ignored\n",
    );
    expect(same.code).toBe(0);
    expect(same.stderr).toBe("");
  });

  it("fails the token check with a clear fix when the token is wrong", async () => {
    const result = await runCli(["doctor", "--url", `${server.url}/v1/hooks/claude-code`], "", {
      HOOKGATE_TOKEN: "not-the-token",
    });
    expect(result.code).toBe(1);
    const out = result.stdout;
    expect(lines(out)[0]).toMatch(/^✓ gateway answers/);
    expect(out).toMatch(/✗ token in HOOKGATE_TOKEN refused \(AUTH_UNKNOWN_TOKEN\)/);
    expect(out).toMatch(/fix: set HOOKGATE_TOKEN to a token listed in the gateway policy's auth\.tokens/);
    // The sample is denied by auth.onFailure, not by the policy: that is not a pass.
    expect(out).toMatch(/✗ sample PreToolUse .*could not judge it \(AUTH_UNKNOWN_TOKEN\)/);
  });

  it("names HOOKGATE_AUTH alone when a deepagents token is wrong, the one variable its hook sends", async () => {
    const result = await runCli(["doctor", "--url", `${server.url}/v1/hooks/deepagents`], "", {
      HOOKGATE_AUTH: "not-the-token",
    });
    expect(result.code).toBe(1);
    expect(lines(result.stdout)[1]).toBe(
      "✗ token in HOOKGATE_AUTH refused (AUTH_UNKNOWN_TOKEN): the hook's token is not one this gateway knows: check HOOKGATE_AUTH",
    );
    expect(result.stdout).not.toContain("HOOKGATE_TOKEN");
  });

  it("says which variable to export when there is no token", async () => {
    const result = await runCli(["doctor", "--url", server.url], "", {});
    expect(result.code).toBe(1);
    expect(result.stdout).toMatch(/✗ token: HOOKGATE_TOKEN is not set/);
    expect(result.stdout).toMatch(/fix: export HOOKGATE_TOKEN=/);
  });

  it("names the variable to fix when the token holds a character no header can carry", async () => {
    // node:http refuses such a header, and its message named the header and not the variable.
    const result = await runCli(["doctor", "--url", server.url], "", {
      HOOKGATE_TOKEN: "hookgate-dev\ntoken",
    });
    expect(result.code).toBe(1);
    expect(lines(result.stdout)).toEqual([
      expect.stringMatching(/^✓ gateway answers/),
      "✗ token: HOOKGATE_TOKEN holds a character no HTTP header can carry (a line break, or one pasted with the token such as a typographic quote)",
      "✗ sample decision: not checked (the token cannot be sent)",
    ]);
    expect(result.stdout).toMatch(/fix: set HOOKGATE_TOKEN to the token alone/);
    expect(result.stdout).not.toMatch(/ERR_INVALID_CHAR|start the gateway/);
  });

  it("fails a deepagents token with a carriage return, which its curl hook sends and the gateway refuses", async () => {
    // `export HOOKGATE_AUTH=$(cat token.txt)` of a file with Windows line endings: curl sends the
    // CR in the header, Node's parser answers 400, and deepagents runs the tool unjudged. Claude
    // Code strips CR and LF from a header itself, so its HOOKGATE_TOKEN with one is sent whole.
    const [deepagents, claude] = await Promise.all([
      runCli(["doctor", "--url", `${server.url}/v1/hooks/deepagents`], "", { HOOKGATE_AUTH: `${TOKEN}\r` }),
      runCli(["doctor", "--url", `${server.url}/v1/hooks/claude-code`], "", { HOOKGATE_TOKEN: `${TOKEN}\r` }),
    ]);
    expect(deepagents.code).toBe(1);
    expect(lines(deepagents.stdout)).toEqual([
      expect.stringMatching(/^✓ gateway answers/),
      "✗ token: HOOKGATE_AUTH holds a line break or another control character (a carriage return, as $(cat FILE) leaves of a file with Windows line endings): deepagents' hook, init's curl command, sends it as it is, the gateway's HTTP server refuses the request (400), and the agent goes on without an answer",
      "✗ sample decision: not checked (the token cannot be sent)",
    ]);
    expect(deepagents.stdout).toContain(
      `fix: set HOOKGATE_AUTH to the token alone: export HOOKGATE_AUTH="$(tr -d '\\r\\n' < FILE)"`,
    );
    expect(claude.code, claude.stdout).toBe(0);
  });

  it("checks HOOKGATE_TOKEN alone for Claude Code and deepcode, the only variable their http hooks send", async () => {
    // HOOKGATE_AUTH set and HOOKGATE_TOKEN not: the hook init writes sends an empty Bearer, which
    // the gateway refuses; doctor passed this setup before.
    for (const client of ["claude-code", "deepcode"]) {
      const result = await runCli(["doctor", "--url", `${server.url}/v1/hooks/${client}`], "", {
        HOOKGATE_AUTH: TOKEN,
      });
      expect(result.code).toBe(1);
      expect(result.stdout).toContain(`✗ token: HOOKGATE_TOKEN is not set, and the gateway needs one`);
      expect(result.stdout).toContain(`${client}'s http hooks send only HOOKGATE_TOKEN`);
    }
  });

  it("says a token variable set to nothing is empty, not unset (an `export HOOKGATE_TOKEN=` of an empty file)", async () => {
    const [claude, deepagents] = await Promise.all([
      runCli(["doctor", "--url", `${server.url}/v1/hooks/claude-code`], "", { HOOKGATE_TOKEN: "" }),
      runCli(["doctor", "--url", `${server.url}/v1/hooks/deepagents`], "", { HOOKGATE_AUTH: " \t" }),
    ]);
    expect(claude.code).toBe(1);
    expect(claude.stdout).toContain("✗ token: HOOKGATE_TOKEN is empty, and the gateway needs one");
    expect(deepagents.code).toBe(1);
    expect(deepagents.stdout).toContain("✗ token: HOOKGATE_AUTH is empty, and the gateway needs one");
  });

  it("passes on the gateway's own fix when it refuses the request (a loopback gateway asked by another name)", async () => {
    // What serve bound to loopback answers a request addressed to a name it does not serve.
    const url = await hookUrlOf((_req, res) =>
      res.writeHead(421, { "content-type": "application/json" }).end(
        JSON.stringify({
          error: {
            code: "HOST_NOT_SERVED",
            message: 'the request is addressed to "vm:8787"; … put one of those in the hook URL',
          },
        }),
      ),
    );
    const result = await runCli(["doctor", "--url", url], "", { HOOKGATE_TOKEN: TOKEN });
    expect(result.code).toBe(1);
    expect(result.stdout).toMatch(/✗ gateway answers: GET .*\/healthz gave HTTP 421, HOST_NOT_SERVED/);
    expect(result.stdout).toMatch(
      /fix: the request is addressed to "vm:8787"; … put one of those in the hook URL/,
    );
  });

  it("says a token the gateway could not check (AUTH_UNAVAILABLE) is for its operator to fix, not a token to change", async () => {
    // What a gateway answers when its token check did not load (a bundle's chunk not deployed).
    const message =
      "the gateway could not load its token check, so it checked no token (No such module): its operator deploys every module of its build, or restarts it after its files changed";
    const url = await hookUrlOf((req, res) => {
      if (req.url?.startsWith("/healthz"))
        return res
          .writeHead(200, { "content-type": "application/json" })
          .end(JSON.stringify({ status: "ok" }));
      if (req.url?.startsWith("/v1/whoami"))
        return res
          .writeHead(401, { "content-type": "application/json" })
          .end(JSON.stringify({ error: { code: "AUTH_UNAVAILABLE", message } }));
      req.resume();
      return res
        .writeHead(200, { "content-type": "application/json", "x-hookgate-error": "AUTH_UNAVAILABLE" })
        .end(
          JSON.stringify({
            systemMessage: `hookgate: ${message} [AUTH_UNAVAILABLE]`,
            hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: "deny" },
          }),
        );
    });
    const result = await runCli(["doctor", "--url", url], "", { HOOKGATE_TOKEN: TOKEN });
    expect(result.code).toBe(1);
    expect(result.stdout).toContain(`✗ token in HOOKGATE_TOKEN not checked (AUTH_UNAVAILABLE): ${message}`);
    expect(result.stdout).not.toMatch(/fix: (set HOOKGATE_TOKEN|fix the token)/);
    expect(result.stdout).toContain(
      "fix: the gateway's operator makes its token check load; your token may well be right",
    );
  });

  it("fails an address check when the hook URL's name resolves to an address Claude Code or deepcode refuses", async () => {
    // Claude Code's and deepcode's lookup fails an http hook on any private answer, and the tool
    // call then runs unguarded; this command connects anyway, so every other check passed.
    const port = new URL(server.url).port;
    const doctor = async (url: string, answers: readonly string[], env: Record<string, string> = {}) => {
      const asked: string[] = [];
      const run = await doctorIn(url, { HOOKGATE_TOKEN: TOKEN, ...env }, async (host) => {
        asked.push(host);
        return answers;
      });
      return { ...run, asked };
    };
    const split = await doctor(`http://localhost:${port}/v1/hooks/claude-code`, ["127.0.0.1", "10.0.0.5"]);
    expect(split.code, split.out).toBe(1);
    expect(lines(split.out)[0]).toBe(
      "✗ address: localhost resolves to 10.0.0.5 (private): Claude Code refuses an http hook whose host has such an address (ERR_HTTP_HOOK_BLOCKED_ADDRESS) and runs the tool call as if no hook had answered",
    );
    expect(split.out).toMatch(/fix: give the gateway a name whose every address is public/);
    // The gateway's own checks still ran.
    expect(lines(split.out).slice(1)).toHaveLength(3);
    const deepcode = await doctor(`http://localhost:${port}/v1/hooks/deepcode`, ["64:ff9b::a9fe:a9fe"]);
    expect(lines(deepcode.out)[0]).toMatch(
      /^✗ address: localhost resolves to 64:ff9b::a9fe:a9fe \(linkLocal\): deepcode refuses/,
    );

    const loopback = await doctor(`http://localhost:${port}/v1/hooks/claude-code`, ["127.0.0.1", "::1"]);
    expect(loopback.code, loopback.out).toBe(0);
    expect(loopback.asked).toEqual(["localhost"]);
    // deepagents' curl adapter has no such lookup; a proxy connects in the agent's place; an
    // address written in the URL is never looked up: Node connects to it without the lookup the
    // agent gives, so deepcode's refusal of 0/8 never meets `http://0.0.0.0` (undici 7, checked),
    // which reaches this machine, as a gateway started on all addresses prints it.
    for (const [url, env] of [
      [`http://localhost:${port}/v1/hooks/deepagents`, { HOOKGATE_AUTH: TOKEN }],
      [`http://localhost:${port}/v1/hooks/claude-code`, { HTTPS_PROXY: "http://127.0.0.1:9" }],
      [`${server.url}/v1/hooks/claude-code`, {}],
      [`http://0.0.0.0:${port}/v1/hooks/deepcode`, {}],
    ] as const) {
      const run = await doctor(url, ["10.0.0.5"], env);
      expect(run.asked, url).toEqual([]);
      expect(run.out).not.toMatch(/address:/);
    }
    const unspecified = await doctor(`http://0.0.0.0:${port}/v1/hooks/deepcode`, []);
    expect(unspecified.code, unspecified.out).toBe(0);
  });

  it("reads the sample's compressed answer as the route's client reads it", async () => {
    // A proxy in front of the gateway compresses twice: deepcode's fetch decodes the list, Claude
    // Code's axios does not, and its hook reads no decision; doctor passed both.
    const url = await hookUrlOf((req, res) => {
      req.resume();
      if (req.url === "/healthz") res.end(JSON.stringify({ status: "ok", policy: "0123456789abcdef" }));
      else if (req.url?.startsWith("/v1/whoami")) res.end(JSON.stringify({ team: "platform" }));
      else {
        const deny = { hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: "deny" } };
        res.writeHead(200, { "content-encoding": "deflate, br" });
        res.end(brotliCompressSync(deflateSync(JSON.stringify(deny))));
      }
    });
    const env = { HOOKGATE_TOKEN: TOKEN };
    expect((await doctorIn(url.replace(/claude-code$/, "deepcode"), env)).code).toBe(0);
    const claude = await doctorIn(url, env);
    expect(claude.code).toBe(1);
    expect(lines(claude.out)[2]).toBe(
      '✗ sample PreToolUse Bash "rm -rf /": the answer is not a JSON object: it comes in Content-Encoding deflate, br, which Claude Code\'s http client (axios) does not decode',
    );
    expect(claude.out).toContain(
      "fix: check the server, or a proxy in front of the gateway, that compresses its answers",
    );
  });

  it("checks a deepagents route by the route its hook, init's curl command, takes, as send posts", async () => {
    // It checked directly, while send went Claude Code's way and curl its own.
    const proxy = await forwardProxy();
    const hookUrl = `${server.url}/v1/hooks/deepagents`;
    const proxyHost = new URL(proxy.url).host;
    const through = await runCli(["doctor", "--url", hookUrl], "", {
      HOOKGATE_AUTH: TOKEN,
      http_proxy: proxy.url,
    });
    expect(through.code, through.stdout).toBe(0);
    expect(through.stdout.split("\n")[0]).toBe(
      `hookgate doctor: gateway ${server.url}, hook ${hookUrl} (deepagents), through the proxy ${proxyHost}, as its hook's curl goes`,
    );
    expect(proxy.seen).toHaveLength(3);
    // curl never reads HTTP_PROXY: direct, and said so.
    const direct = await runCli(["doctor", "--url", hookUrl], "", {
      HOOKGATE_AUTH: TOKEN,
      HTTP_PROXY: proxy.url,
    });
    expect(direct.code, direct.stdout).toBe(0);
    expect(direct.stdout.split("\n")[0]).toBe(
      `hookgate doctor: gateway ${server.url}, hook ${hookUrl} (deepagents), direct, as its hook's curl goes (curl reads no HTTP_PROXY, only http_proxy for an http URL)`,
    );
    expect(proxy.seen).toHaveLength(3);
    // A proxy on another machine reaches its own loopback: curl's hook fails there, as an http hook does.
    const stranded = await runCli(["doctor", "--url", hookUrl], "", {
      HOOKGATE_AUTH: TOKEN,
      http_proxy: "http://proxy.corp.invalid:3128",
    });
    expect(stranded.code).toBe(1);
    expect(lines(stranded.stdout)[0]).toMatch(
      /^✗ proxy: deepagents' curl posts to 127\.0\.0\.1 through the proxy at proxy\.corp\.invalid:3128, as NO_PROXY does not exempt it/,
    );
    expect(stranded.stdout).toContain("fix: add 127.0.0.1 to NO_PROXY in the shell that starts the agent");
  });

  it("says on a deepagents route that its curl reads ~/.curlrc, which the checks do not, and the route options it sets", async () => {
    // A proxy set in ~/.curlrc takes the hook's curl elsewhere than the route the checks took.
    const home = tempDir("doctor-curlrc");
    const hookUrl = `${server.url}/v1/hooks/deepagents`;
    const note = (out: string) => out.split("\n").find((line) => line.startsWith("note: "));
    expect(note((await doctorIn(hookUrl, { HOOKGATE_AUTH: TOKEN, HOME: home })).out)).toBeUndefined();
    writeFileSync(
      join(home, ".curlrc"),
      '# proxy of the office\nproxy = "http://proxy.corp.example:3128"\n-k\n',
    );
    const { code, out } = await doctorIn(hookUrl, { HOOKGATE_AUTH: TOKEN, HOME: home });
    expect(code, out).toBe(0);
    expect(note(out)).toBe(
      `note: deepagents' hook, init's curl command, reads ${join(home, ".curlrc")}, which these checks do not, and it sets --proxy: the hook's requests may not take the route above`,
    );
    // CURL_HOME's comes first; one without a route option is still said, as it may change the request.
    const curlHome = tempDir("doctor-curl-home");
    writeFileSync(join(curlHome, ".curlrc"), "insecure\n");
    const first = await doctorIn(hookUrl, { HOOKGATE_AUTH: TOKEN, HOME: home, CURL_HOME: curlHome });
    expect(note(first.out)).toBe(
      `note: deepagents' hook, init's curl command, reads ${join(curlHome, ".curlrc")}, which these checks do not: an option there (a proxy, --insecure, a header) changes the hook's requests`,
    );
    // Claude Code's http hooks read no curl config.
    expect(
      note((await doctorIn(`${server.url}/v1/hooks/claude-code`, { HOOKGATE_TOKEN: TOKEN, HOME: home })).out),
    ).toBeUndefined();
  });

  it("reads a curl config's short options as curl does, by case: -X is the request's method, not -x's proxy", async () => {
    // `-X POST` was said to set a route option, "-X", as if it were -x (--proxy).
    const home = tempDir("doctor-curlrc-case");
    writeFileSync(join(home, ".curlrc"), "-X POST\n");
    const hookUrl = `${server.url}/v1/hooks/deepagents`;
    const method = await doctorIn(hookUrl, { HOOKGATE_AUTH: TOKEN, HOME: home });
    expect(method.out).toContain(
      `note: deepagents' hook, init's curl command, reads ${join(home, ".curlrc")}, which these checks do not: an option there (a proxy, --insecure, a header) changes the hook's requests\n`,
    );
    writeFileSync(join(home, ".curlrc"), "-x http://proxy.corp.example:3128\n");
    const proxy = await doctorIn(hookUrl, { HOOKGATE_AUTH: TOKEN, HOME: home });
    expect(proxy.out).toContain(", and it sets -x: the hook's requests may not take the route above\n");
  });

  it.each([
    ["-xhttp://proxy.corp.example:3128", true],
    ["-kx http://proxy.corp.example:3128", true],
    ["-sSxhttp://proxy.corp.example:3128", true],
    ["-Xx", false],
    ["-Hx-proxy: 1", false],
  ])("reads a curl config's group of short options %s as curl 7.88 does (-x set: %s)", async (line, sets) => {
    // `-xhttp://…`, its value attached, and `-kx …`, a switch before it, set curl's proxy
    // (checked with its own run); the note read them as options named "xhttp" and "kx".
    const home = tempDir("doctor-curlrc-group");
    writeFileSync(join(home, ".curlrc"), `${line}\n`);
    const { out } = await doctorIn(`${server.url}/v1/hooks/deepagents`, { HOOKGATE_AUTH: TOKEN, HOME: home });
    expect(out.includes(", and it sets -x: the hook's requests may not take the route above\n"), out).toBe(
      sets,
    );
  });

  it("names no curl config where the first is a folder, as curl then reads none", async () => {
    // curl 7.88 stops at a folder named .curlrc (checked with its own run): a proxy in
    // ~/.config/curlrc, which doctor named, was never read.
    const home = tempDir("doctor-curlrc-folder");
    mkdirSync(join(home, ".curlrc"));
    mkdirSync(join(home, ".config"));
    writeFileSync(join(home, ".config", "curlrc"), "proxy = http://proxy.corp.example:3128\n");
    const result = await doctorIn(`${server.url}/v1/hooks/deepagents`, { HOOKGATE_AUTH: TOKEN, HOME: home });
    expect(result.out).toContain("gateway answers");
    expect(result.out).not.toContain("curlrc");
  });

  it("names a curl config that is a FIFO without reading it, where doctor waited for a writer that never came", async () => {
    const home = tempDir("doctor-curlrc-fifo");
    expect(spawnSync("mkfifo", [join(home, ".curlrc")]).status).toBe(0);
    const result = await doctorIn(`${server.url}/v1/hooks/deepagents`, { HOOKGATE_AUTH: TOKEN, HOME: home });
    expect(result.out).toContain(
      `note: deepagents' hook, init's curl command, reads ${join(home, ".curlrc")}, which is no regular file and which these checks do not read`,
    );
  });

  it("names the curlrc in ~/.config that curl reads where XDG_CONFIG_HOME is unset, and no other where it is set", async () => {
    // curl 7.88 reads $CURL_HOME/.config/curlrc and ~/.config/curlrc (no dot) after the .curlrc
    // files, when XDG_CONFIG_HOME is unset or empty: a proxy there went unsaid.
    const home = tempDir("doctor-xdg-curlrc");
    const hookUrl = `${server.url}/v1/hooks/deepagents`;
    const note = (out: string) => out.split("\n").find((line) => line.startsWith("note: "));
    mkdirSync(join(home, ".config"));
    writeFileSync(join(home, ".config", "curlrc"), "proxy = http://proxy.corp.example:3128\n");
    for (const env of [{ HOME: home }, { HOME: home, XDG_CONFIG_HOME: "" }]) {
      expect(note((await doctorIn(hookUrl, { HOOKGATE_AUTH: TOKEN, ...env })).out)).toBe(
        `note: deepagents' hook, init's curl command, reads ${join(home, ".config", "curlrc")}, which these checks do not, and it sets --proxy: the hook's requests may not take the route above`,
      );
    }
    // CURL_HOME's comes before HOME's.
    const curlHome = tempDir("doctor-xdg-curl-home");
    mkdirSync(join(curlHome, ".config"));
    writeFileSync(join(curlHome, ".config", "curlrc"), "insecure\n");
    expect(
      note((await doctorIn(hookUrl, { HOOKGATE_AUTH: TOKEN, HOME: home, CURL_HOME: curlHome })).out),
    ).toBe(
      `note: deepagents' hook, init's curl command, reads ${join(curlHome, ".config", "curlrc")}, which these checks do not: an option there (a proxy, --insecure, a header) changes the hook's requests`,
    );
    // With CURL_HOME set, curl 7.88 looks under it alone: not in HOME's, even where CURL_HOME has none.
    const emptyCurlHome = tempDir("doctor-xdg-empty-curl-home");
    expect(
      note((await doctorIn(hookUrl, { HOOKGATE_AUTH: TOKEN, HOME: home, CURL_HOME: emptyCurlHome })).out),
    ).toBeUndefined();
    // With XDG_CONFIG_HOME set, curl looks in neither.
    const xdg = tempDir("doctor-xdg-config");
    expect(
      note((await doctorIn(hookUrl, { HOOKGATE_AUTH: TOKEN, HOME: home, XDG_CONFIG_HOME: xdg })).out),
    ).toBeUndefined();
  });

  it("fails a proxy check where the agent's http client cannot use its SOCKS proxy, and checks the gateway through it", async () => {
    // Claude Code's hooks ask any proxy in HTTP, and deepcode's undici takes no socks5h://: doctor
    // passed through the SOCKS proxy while every hook failed at it.
    const proxy = await socksProxy();
    const target = new URL(server.url).host;
    const claude = await runCli(["doctor", "--url", `${server.url}/v1/hooks/claude-code`], "", {
      HOOKGATE_TOKEN: TOKEN,
      HTTPS_PROXY: proxy.url,
    });
    expect(claude.code, claude.stdout).toBe(1);
    expect(lines(claude.stdout)).toEqual([
      `✗ proxy: Claude Code posts to ${target} through the proxy of HTTPS_PROXY, ${proxy.url}, but its http client asks every proxy in HTTP (a CONNECT), which a SOCKS proxy does not answer: every hook fails and the tool call runs as if no hook had answered`,
      expect.stringMatching(/^✓ gateway answers/),
      expect.stringMatching(/^✓ token/),
      expect.stringMatching(/^✓ sample PreToolUse Bash "rm -rf \/" → deny/),
    ]);
    expect(claude.stdout).toContain(
      "fix: point HTTPS_PROXY at an http proxy (http://host:port); or, for the agent to connect to 127.0.0.1 directly, add 127.0.0.1 to NO_PROXY in the shell that starts the agent",
    );
    expect(proxy.seen).toEqual([target, target, target]);
    const deepcode = await runCli(["doctor", "--url", `${server.url}/v1/hooks/deepcode`], "", {
      HOOKGATE_TOKEN: TOKEN,
      HTTPS_PROXY: proxy.url,
    });
    expect(deepcode.code, deepcode.stdout).toBe(1);
    expect(lines(deepcode.stdout)[0]).toBe(
      `✗ proxy: deepcode posts to ${target} through the proxy of HTTPS_PROXY, ${proxy.url}, but its http client (undici's ProxyAgent) takes no socks5h:// proxy ("Invalid URL protocol"): every hook fails and the tool call runs as if no hook had answered`,
    );
    const socks5 = proxy.url.replace("socks5h:", "socks5:");
    expect(deepcode.stdout).toContain(`fix: write HTTPS_PROXY as ${socks5}, which deepcode's client takes`);
    const written = await runCli(["doctor", "--url", `${server.url}/v1/hooks/deepcode`], "", {
      HOOKGATE_TOKEN: TOKEN,
      HTTPS_PROXY: socks5,
    });
    expect(written.code, written.stdout).toBe(0);
  });

  it.each(["socks4", "socks4a", "socks"])(
    "checks a deepagents route through its %s:// proxy, which its hook's curl speaks as SOCKS4",
    async (scheme) => {
      // hookgate's client spoke no SOCKS4: every check failed at a proxy the hook went through.
      const proxy = await socks4Proxy();
      const port = new URL(proxy.url).port;
      const { code, out } = await doctorIn(`${server.url}/v1/hooks/deepagents`, {
        HOOKGATE_AUTH: TOKEN,
        ALL_PROXY: `${scheme}://hook%40user:unsent@127.0.0.1:${port}`,
      });
      expect(code, out).toBe(0);
      expect(lines(out)).toEqual([
        expect.stringMatching(/^✓ gateway answers/),
        expect.stringMatching(/^✓ token/),
        expect.stringMatching(/^✓ sample PreToolUse Bash "rm -rf \/" → deny/),
      ]);
      // SOCKS4A sends the name for the proxy to resolve; an address is sent as it is.
      const target = new URL(server.url).host;
      expect(proxy.seen).toEqual([target, target, target]);
      // The user name as the user ID, decoded as curl sends it; SOCKS4 has no password.
      expect(proxy.userIds).toEqual(["hook@user", "hook@user", "hook@user"]);
    },
  );

  it("fails a proxy check where deepcode's client sends its SOCKS5 proxy's user name and password still escaped", async () => {
    // undici's ProxyAgent (7.30, deepcode's client) hands its SOCKS5 client the URL's user name
    // and password as written, escapes and all (checked over this loopback SOCKS5 server), where
    // hookgate's client decodes them as curl does: every check passed through a proxy that
    // refused each of deepcode's hooks.
    const proxy = await socksProxy({ authenticate: true });
    const port = new URL(proxy.url).port;
    const target = new URL(server.url).host;
    const escaped = await doctorIn(`${server.url}/v1/hooks/deepcode`, {
      HOOKGATE_TOKEN: TOKEN,
      HTTPS_PROXY: `socks5://us%40er:p%3Ass@127.0.0.1:${port}`,
    });
    expect(escaped.code, escaped.out).toBe(1);
    expect(lines(escaped.out)).toEqual([
      `✗ proxy: deepcode posts to ${target} through the SOCKS5 proxy of HTTPS_PROXY, socks5://127.0.0.1:${port}, but its http client (undici's ProxyAgent) sends the user name and password of the proxy's URL as the URL writes them, escapes and all (%40 for @), where curl and these checks decode them: a proxy that takes them decoded refuses every hook, and the tool call runs as if no hook had answered`,
      expect.stringMatching(/^✓ gateway answers/),
      expect.stringMatching(/^✓ token/),
      expect.stringMatching(/^✓ sample PreToolUse Bash "rm -rf \/" → deny/),
    ]);
    expect(escaped.out).toContain(
      "fix: give the proxy a user name and password that a URL writes as they are (letters, digits and - . _ ~), or point HTTPS_PROXY at an http proxy, whose user name and password deepcode's client decodes",
    );
    expect(escaped.out).not.toContain("p%3Ass");
    expect(proxy.credentials).toEqual(["us@er:p:ss", "us@er:p:ss", "us@er:p:ss"]);
    // Without an escape the URL's are sent as written by both.
    const plain = await doctorIn(`${server.url}/v1/hooks/deepcode`, {
      HOOKGATE_TOKEN: TOKEN,
      HTTPS_PROXY: `socks5://user:pass@127.0.0.1:${port}`,
    });
    expect(plain.code, plain.out).toBe(0);
  });

  it("says to keep the user name and password of deepcode's socks5h:// proxy in the socks5:// URL it gives, not what they are", async () => {
    // The fix wrote the socks5:// URL without them: copied, the proxy got no user name.
    const port = await refusingPort();
    const { out } = await doctorIn(`${server.url}/v1/hooks/deepcode`, {
      HOOKGATE_TOKEN: TOKEN,
      HTTPS_PROXY: `socks5h://me:s3cret@127.0.0.1:${port}`,
    });
    expect(out).not.toContain("s3cret");
    expect(out).toContain(
      `fix: write HTTPS_PROXY as socks5://127.0.0.1:${port}, with the user name and password its URL gives now before the host, which deepcode's client takes as socks5h:// asks (the proxy resolves the name); or,`,
    );
  });

  it("checks through the proxy the agent's http hooks go through, as send posts, and says which route it took", async () => {
    // A check that connected directly passed while every hook failed at the proxy.
    const proxy = await forwardProxy();
    const hookUrl = `${server.url}/v1/hooks/claude-code`;
    const target = new URL(server.url).host;
    const proxyHost = new URL(proxy.url).host;
    const withPassword = proxy.url.replace("//", "//me:hunter2@");
    const through = await runCli(["doctor", "--url", hookUrl], "", {
      HOOKGATE_TOKEN: TOKEN,
      HTTPS_PROXY: withPassword,
    });
    expect(through.code, through.stdout).toBe(0);
    expect(through.stdout.split("\n")[0]).toBe(
      `hookgate doctor: gateway ${server.url}, hook ${hookUrl} (claude-code), through the proxy ${proxyHost}, as its http hooks go`,
    );
    expect(through.stdout).not.toContain("hunter2");
    expect(proxy.seen).toEqual([
      `GET http://${target}/healthz`,
      `GET http://${target}/v1/whoami?client=claude-code`,
      `POST http://${target}/v1/hooks/claude-code`,
    ]);
    // NO_PROXY exempts the host: the agent, and so the checks, connect directly.
    const exempt = await runCli(["doctor", "--url", hookUrl], "", {
      HOOKGATE_TOKEN: TOKEN,
      HTTPS_PROXY: proxy.url,
      NO_PROXY: "127.0.0.1",
    });
    expect(exempt.code, exempt.stdout).toBe(0);
    expect(exempt.stdout.split("\n")[0]).toMatch(
      /\(claude-code\), direct, as its http hooks go \(NO_PROXY exempts it from the proxy\)$/,
    );
    expect(proxy.seen).toHaveLength(3);
    const none = await runCli(["doctor", "--url", hookUrl], "", { HOOKGATE_TOKEN: TOKEN });
    expect(none.stdout.split("\n")[0]).toMatch(/\(claude-code\), direct$/);
    // A proxy that refuses fails the check the hooks would fail, with what to change.
    const refusing = await forwardProxy(407);
    const refused = await runCli(["doctor", "--url", hookUrl], "", {
      HOOKGATE_TOKEN: TOKEN,
      HTTPS_PROXY: refusing.url.replace("//", "//me:hunter2@"),
    });
    expect(refused.code).toBe(1);
    expect(lines(refused.stdout)[0]).toMatch(
      /^✗ gateway answers: the proxy http:\/\/127\.0\.0\.1:\d+ refused the request \(HTTP 407 Proxy Authentication Required\)$/,
    );
    expect(refused.stdout).toContain("fix: check the user name and password in the proxy's URL");
    expect(refused.stdout).not.toContain("hunter2");
    // The gateway, which runs, was never reached: the checks left undone say where it stopped.
    expect(lines(refused.stdout).slice(-2)).toEqual([
      "✗ token: not checked (no answer came through the proxy)",
      "✗ sample decision: not checked (no answer came through the proxy)",
    ]);
    // A proxy that is down: its fix is the proxy's, not to start the gateway, which runs.
    const down = await runCli(["doctor", "--url", hookUrl], "", {
      HOOKGATE_TOKEN: TOKEN,
      HTTPS_PROXY: `http://127.0.0.1:${await refusingPort()}`,
    });
    expect(down.code).toBe(1);
    expect(lines(down.stdout)[0]).toMatch(
      /^✗ gateway answers: request to .* through the proxy http:\/\/127\.0\.0\.1:\d+ failed: .*ECONNREFUSED/,
    );
    expect(down.stdout).toContain(
      `fix: check that the proxy runs and reaches ${target}, as the agent's hooks go through it; or, for the agent to connect to ${target} directly, add it to NO_PROXY in the shell that starts the agent\n`,
    );
    expect(down.stdout).not.toContain("start the gateway");
    // A proxy that cannot reach the gateway answers for it (502): the fix names the proxy first.
    const unreaching = await forwardProxy(502);
    const bad = await runCli(["doctor", "--url", hookUrl], "", {
      HOOKGATE_TOKEN: TOKEN,
      HTTPS_PROXY: unreaching.url,
    });
    expect(lines(bad.stdout)[0]).toBe(
      `✗ gateway answers: GET ${server.url}/healthz gave HTTP 502, not hookgate's {"status":"ok"}`,
    );
    expect(bad.stdout).toContain(
      `fix: check that the proxy runs and reaches ${target}, as the agent's hooks go through it; or, for the agent to connect to ${target} directly, add it to NO_PROXY in the shell that starts the agent; or check that --url points at a hookgate gateway`,
    );
  });

  it("names the NO_PROXY entry that exempts a deepcode route, which matches no port, when its proxy is down", async () => {
    // deepcode compares an entry with the host name alone: `127.0.0.1:8787`, the host and port the
    // fix named, leaves its hooks on the proxy, and the next run failed the same way.
    const hookUrl = `${server.url}/v1/hooks/deepcode`;
    const host = new URL(server.url).hostname;
    const doctor = (env: Record<string, string>) =>
      doctorIn(hookUrl, { HOOKGATE_TOKEN: TOKEN, ...env }, async () => [host]);
    const down = { HTTPS_PROXY: `http://127.0.0.1:${await refusingPort()}` };
    const failed = await doctor(down);
    expect(failed.code, failed.out).toBe(1);
    const entry = /add (\S+) to NO_PROXY in the shell/.exec(failed.out)?.[1];
    expect(entry, failed.out).toBe(host);
    const fixed = await doctor({ ...down, NO_PROXY: entry ?? "" });
    expect(fixed.code, fixed.out).toBe(0);
  });

  it("says that deepcode reads no * in NO_PROXY, where its hooks, and so the checks, go through the proxy", async () => {
    // deepcode drops an entry's leading * and matches what is left, no host: the "no proxy at
    // all" of curl and Claude Code leaves its hooks on the proxy, and a fix to add the host to
    // NO_PROXY read as done already.
    const proxy = await forwardProxy();
    const hookUrl = `${server.url}/v1/hooks/deepcode`;
    const host = new URL(server.url).hostname;
    const run = await runCli(["doctor", "--url", hookUrl], "", {
      HOOKGATE_TOKEN: TOKEN,
      HTTPS_PROXY: proxy.url,
      NO_PROXY: "*",
    });
    expect(run.stdout.split("\n")[0]).toBe(
      `hookgate doctor: gateway ${server.url}, hook ${hookUrl} (deepcode), through the proxy ${new URL(proxy.url).host}, as its http hooks go (deepcode reads no * in NO_PROXY: name the host there, ${host}, for it to connect directly)`,
    );
    expect(proxy.seen).toHaveLength(3);
  });

  it("says that deepcode reads no * in NO_PROXY where its proxy, on another machine, cannot reach a loopback gateway", async () => {
    // The check fails with a fix to list the host in NO_PROXY, which its user, who set * there,
    // would read as done already without the header's word on it.
    const hookUrl = `${server.url}/v1/hooks/deepcode`;
    const host = new URL(server.url).hostname;
    const env = { HOOKGATE_TOKEN: TOKEN, HTTPS_PROXY: "http://proxy.corp.example:3128", NO_PROXY: "*" };
    const { code, out } = await doctorIn(hookUrl, env, async () => ["127.0.0.1"]);
    expect(code).toBe(1);
    expect(out.split("\n")[0]).toBe(
      `hookgate doctor: gateway ${server.url}, hook ${hookUrl} (deepcode), through the proxy proxy.corp.example:3128, as its http hooks go (deepcode reads no * in NO_PROXY: name the host there, ${host}, for it to connect directly)`,
    );
  });

  it("fails a proxy check when the agent would post to this machine's loopback through a proxy on another", async () => {
    // The proxy connects to its own loopback: the hook fails open in the agent, and this command,
    // which takes the agent's route, checks nothing of the gateway through it.
    const local = await forwardProxy();
    const url = `${server.url}/v1/hooks/claude-code`;
    const host = new URL(server.url).hostname;
    const doctor = async (hookUrl: string, env: Record<string, string>) => {
      const run = await doctorIn(hookUrl, { HOOKGATE_TOKEN: TOKEN, ...env }, async () => ["127.0.0.1"]);
      return { ...run, proxy: lines(run.out).find((l) => l.includes(" proxy: ")) };
    };
    const remote = { HTTPS_PROXY: "http://user:secret@proxy.corp.example:8080", NO_PROXY: "localhost" };
    const proxied = await doctor(url, remote);
    expect(proxied.code, proxied.out).toBe(1);
    expect(proxied.proxy).toBe(
      `✗ proxy: Claude Code posts to ${host} through the proxy at proxy.corp.example:8080, as NO_PROXY does not exempt it, and that proxy reaches its own loopback, not this machine's: the hook fails and the tool call runs as if no hook had answered`,
    );
    expect(proxied.out).toContain(
      `fix: add ${host} to NO_PROXY in the shell that starts the agent (export NO_PROXY=${host},$NO_PROXY)`,
    );
    expect(proxied.out).not.toContain("secret");
    expect(lines(proxied.out).slice(1)).toEqual([
      "✗ gateway answers: not checked (the route ends at the proxy's own loopback)",
      "✗ token: not checked (the route ends at the proxy's own loopback)",
      "✗ sample decision: not checked (the route ends at the proxy's own loopback)",
    ]);
    // deepcode takes a proxy without a scheme for an http:// one.
    expect(
      (await doctor(`${server.url}/v1/hooks/deepcode`, { HTTP_PROXY: "proxy.corp.example:3128" })).proxy,
    ).toMatch(/^✗ proxy: deepcode posts to .* through the proxy at proxy\.corp\.example:3128, as NO_PROXY/);
    // An empty variable, each client its own way: Claude Code picks by `||` and goes on to the
    // next name; deepcode (as undici's EnvHttpProxyAgent) by `??`, so an empty https_proxy is no
    // proxy and an empty NO_PROXY hides no_proxy.
    expect((await doctor(url, { ...remote, https_proxy: "" })).proxy).toMatch(/proxy\.corp\.example:8080/);
    const deepcodeUrl = `${server.url}/v1/hooks/deepcode`;
    expect((await doctor(deepcodeUrl, { ...remote, NO_PROXY: "", no_proxy: host })).proxy).toMatch(
      /^✗ proxy: deepcode posts to .* as NO_PROXY does not exempt it/,
    );
    for (const [hookUrl, env] of [
      [deepcodeUrl, { ...remote, https_proxy: "" }],
      [url, { ...remote, NO_PROXY: `localhost,${host}` }],
      [url, { ...remote, no_proxy: host }],
      // A proxy on this machine reaches the gateway.
      [url, { HTTPS_PROXY: local.url }],
      // Written as an IPv4-mapped address, which a URL writes in hex ([::ffff:7f00:1]).
      [url, { HTTPS_PROXY: local.url.replace("127.0.0.1", "[::ffff:127.0.0.1]") }],
      // deepagents' curl adapter is none of these clients.
      [`${server.url}/v1/hooks/deepagents`, { ...remote, HOOKGATE_AUTH: TOKEN }],
    ] as const) {
      const run = await doctor(hookUrl, env);
      expect(run.proxy, `${hookUrl} ${JSON.stringify(env)}`).toBeUndefined();
      expect(run.code, run.out).toBe(0);
    }
    // Claude Code's current release reads no_proxy and NO_PROXY together when they differ, takes
    // `*` in either, and ignores a proxy without a scheme: it posts directly, and the line says
    // that 2.1.112 and earlier, which read no_proxy alone and took any proxy, fail the hook.
    const older = (why: string) =>
      `✓ proxy: Claude Code posts to ${host} directly, as ${why} (Claude Code 2.1.112 and earlier`;
    const beyond =
      ", and post through the proxy at proxy.corp.example:8080, which reaches its own loopback, not this machine's)";
    for (const [env, line] of [
      [
        { ...remote, no_proxy: "foo", NO_PROXY: host },
        `${older("NO_PROXY exempts it from the proxy")} read only no_proxy here${beyond}`,
      ],
      [
        { ...remote, no_proxy: "foo", NO_PROXY: "*" },
        `${older("NO_PROXY exempts it from the proxy")} read only no_proxy here${beyond}`,
      ],
      [
        { https_proxy: "proxy.corp.example:8080", no_proxy: "" },
        `${older("Claude Code ignores https_proxy, a proxy without a scheme such as http://")} take it as http://${beyond}`,
      ],
    ] as const) {
      const run = await doctor(url, env);
      expect(run.proxy, JSON.stringify(env)).toBe(line);
      expect(run.code, run.out).toBe(0);
    }
    // Neither exempts it: the fix names no_proxy, which every release reads.
    const neither = await doctor(url, { ...remote, no_proxy: "foo" });
    expect(neither.proxy).toMatch(/^✗ proxy: .* as no_proxy does not exempt it/);
    expect(neither.out).toContain(`(export no_proxy=${host},$no_proxy)`);
    // An IPv6 gateway: the NO_PROXY the fix exports is one each client reads as exempting it.
    // deepcode compares an entry with the URL's host name, brackets and all, so that `::1` leaves
    // its hooks on the proxy, and a user who did as the fix said got the same failure again.
    for (const client of ["claude-code", "deepcode"]) {
      const v6 = `http://[::1]:${new URL(server.url).port}/v1/hooks/${client}`;
      const failed = await doctor(v6, remote);
      const exported = /\(export NO_PROXY=([^,)]*),\$NO_PROXY\)/.exec(failed.out)?.[1];
      expect(exported, failed.out).toBeDefined();
      const fixed = await doctor(v6, { ...remote, NO_PROXY: `${exported},${remote.NO_PROXY}` });
      expect(fixed.proxy, `${client}: ${fixed.out}`).toBeUndefined();
    }
  });

  it("runs the address check through a proxy when NO_PROXY exempts the hook's host, as each client reads it", async () => {
    // A corporate NO_PROXY lists the internal names, and the agent connects to them directly,
    // through its checking lookup: the proxy in HTTPS_PROXY is no way past it there.
    const local = await forwardProxy();
    const port = new URL(server.url).port;
    const doctor = async (route: string, env: Record<string, string>) => {
      const url = `http://localhost:${port}/v1/hooks/${route}`;
      const proxied = { HOOKGATE_TOKEN: TOKEN, HTTPS_PROXY: local.url, ...env };
      const run = await doctorIn(url, proxied, async () => ["10.0.0.5"]);
      return { ...run, address: lines(run.out).find((l) => l.includes("address:")) };
    };
    const exempt = await doctor("claude-code", { NO_PROXY: "example.com, .localhost" });
    expect(exempt.code, exempt.out).toBe(1);
    expect(exempt.address).toBe(
      "✗ address: localhost resolves to 10.0.0.5 (private) (NO_PROXY exempts it from the proxy): Claude Code refuses an http hook whose host has such an address (ERR_HTTP_HOOK_BLOCKED_ADDRESS) and runs the tool call as if no hook had answered",
    );
    expect(exempt.out).toMatch(/fix: .*or take localhost out of NO_PROXY so that the agent reaches it/);
    expect((await doctor("claude-code", { no_proxy: `localhost:${port}` })).address).toMatch(
      /\(no_proxy exempts it/,
    );
    expect((await doctor("claude-code", { NO_PROXY: "*" })).address).toMatch(/\(NO_PROXY exempts it/);
    // Claude Code's current release reads both variables when they differ, and `*` in either,
    // where 2.1.112 and earlier read no_proxy alone; it ignores a proxy without a scheme.
    const both = await doctor("claude-code", { no_proxy: "foo", NO_PROXY: ".internal.corp, localhost" });
    expect(both.code, both.out).toBe(1);
    expect(both.address).toBe(
      "✗ address: localhost resolves to 10.0.0.5 (private) (NO_PROXY exempts it from the proxy; Claude Code 2.1.112 and earlier read only no_proxy here): Claude Code refuses an http hook whose host has such an address (ERR_HTTP_HOOK_BLOCKED_ADDRESS) and runs the tool call as if no hook had answered",
    );
    expect((await doctor("claude-code", { no_proxy: "foo", NO_PROXY: "*" })).address).toMatch(
      /\(NO_PROXY exempts it from the proxy; Claude Code 2\.1\.112 and earlier read only no_proxy here\)/,
    );
    expect((await doctor("claude-code", { no_proxy: "localhost", NO_PROXY: ".localhost" })).address).toMatch(
      /\(no_proxy and NO_PROXY exempt it from the proxy\): /,
    );
    const bare = await doctor("claude-code", { HTTPS_PROXY: "proxy.corp.example:8080" });
    expect(bare.address).toMatch(
      /\(Claude Code ignores HTTPS_PROXY, a proxy without a scheme such as http:\/\/; Claude Code 2\.1\.112 and earlier take it as http:\/\/\): /,
    );
    expect(bare.out).toMatch(
      /fix: .*or write HTTPS_PROXY as a URL \(http:\/\/host:port\) so that the agent reaches it/,
    );
    // deepcode drops a leading `*.`; Claude Code takes `*.localhost` for a host name of its own.
    expect((await doctor("deepcode", { NO_PROXY: "*.localhost" })).address).toMatch(/deepcode refuses/);
    for (const [route, env] of [
      ["claude-code", { NO_PROXY: "*.localhost" }],
      ["claude-code", { NO_PROXY: "localhost:1" }],
      ["deepcode", { NO_PROXY: "*" }],
      ["deepcode", { NO_PROXY: "notlocalhost" }],
      // deepcode reads NO_PROXY alone when set, and takes a proxy without a scheme.
      ["deepcode", { no_proxy: "localhost", NO_PROXY: "notlocalhost" }],
      ["deepcode", { HTTPS_PROXY: local.url.replace("http://", "") }],
    ] as const) {
      const run = await doctor(route, env);
      expect(run.address, `${route} ${JSON.stringify(env)}`).toBeUndefined();
      expect(run.code, run.out).toBe(0);
    }
  });

  it("checks HOOKGATE_AUTH alone for deepagents, the only variable its adapter sends", async () => {
    const result = await runCli(["doctor", "--url", `${server.url}/v1/hooks/deepagents`], "", {
      HOOKGATE_TOKEN: TOKEN,
      HOOKGATE_AUTH: "stale",
    });
    expect(result.code).toBe(1);
    expect(result.stdout).toMatch(/✗ token in HOOKGATE_AUTH refused \(AUTH_UNKNOWN_TOKEN\)/);
    const unset = await runCli(["doctor", "--url", `${server.url}/v1/hooks/deepagents`], "", {
      HOOKGATE_TOKEN: TOKEN,
    });
    expect(unset.stdout).toMatch(/✗ token: HOOKGATE_AUTH is not set/);
    expect(unset.stdout).toMatch(/fix: export HOOKGATE_AUTH=/);
  });

  it("names the legacy route's sample as the tool.use it sends, and says that --expect none checks it", async () => {
    const url = `${server.url}/v1/hooks/deepagents-legacy`;
    const denied = await runCli(["doctor", "--url", url], "", { HOOKGATE_AUTH: TOKEN });
    expect(denied.code).toBe(1);
    expect(lines(denied.stdout)[2]).toBe('✗ sample tool.use execute "rm -rf /" → none, expected deny');
    expect(denied.stdout).toMatch(
      /fix: deepagents legacy hooks never get a decision back: pass --expect none/,
    );
    const none = await runCli(["doctor", "--url", url, "--expect", "none"], "", { HOOKGATE_AUTH: TOKEN });
    expect(none.code, none.stdout).toBe(0);
    expect(lines(none.stdout)[2]).toBe('✓ sample tool.use execute "rm -rf /" → none, as expected');
  });

  it("fails the gateway check, with the fix it gives, when its /healthz says dead letters cannot be sent", async () => {
    // A Worker without HOOKGATE_DLQ says so on /healthz; doctor passed it with a ✓. Here a
    // loopback server answers as that Worker does.
    const error = "the HOOKGATE_DLQ binding is missing";
    const fix = "bind HOOKGATE_DLQ in wrangler.toml as a queue producer ([[queues.producers]])";
    const { code, out } = await doctorAgainstHealth({
      deadLetters: "failing",
      deadLetterError: error,
      deadLetterFix: fix,
    });
    expect(code).toBe(1);
    expect(lines(out)[0]).toBe(
      `✗ gateway answers: GET /healthz 200, policy 0123456789abcdef, but it cannot set aside a notify event that fails for good as a dead letter, so such an event is lost: ${error}`,
    );
    expect(out).toContain(`    fix: ${fix}\n`);
    // The gateway still decides: the token and sample checks ran, and passed.
    expect(lines(out)).toHaveLength(3);
    expect(
      lines(out)
        .slice(1)
        .every((l) => l.startsWith("✓ ")),
    ).toBe(true);
  });

  it("names each problem its /healthz gives, with each one's fix, not the first alone", async () => {
    // A Worker missing both queue bindings: its failing delivery queue hid the dead letters',
    // whose fix the operator then learnt only once the first was fixed.
    const { code, out } = await doctorAgainstHealth({
      reload: "failed",
      delivery: "failing",
      deliveryError: "the HOOKGATE_QUEUE binding is missing",
      deliveryFix: "bind HOOKGATE_QUEUE",
      deadLetters: "failing",
      deadLetterError: "the HOOKGATE_DLQ binding is missing",
      deadLetterFix: "bind HOOKGATE_DLQ",
    });
    expect(code).toBe(1);
    const health = "✗ gateway answers: GET /healthz 200, policy 0123456789abcdef, but";
    expect(out.split("\n").slice(1, 7)).toEqual([
      `${health} it refused its last policy reload and still runs this policy`,
      expect.stringMatching(/^ {4}fix: its log's "policy reload failed" line lists the problems/),
      `${health} it cannot use its delivery queue, so no notify event is delivered: the HOOKGATE_QUEUE binding is missing`,
      "    fix: bind HOOKGATE_QUEUE",
      `${health} it cannot set aside a notify event that fails for good as a dead letter, so such an event is lost: the HOOKGATE_DLQ binding is missing`,
      "    fix: bind HOOKGATE_DLQ",
    ]);
    // It still decides: the token and sample checks ran, and passed.
    expect(lines(out).slice(3)).toEqual([
      expect.stringMatching(/^✓ token/),
      expect.stringMatching(/^✓ sample/),
    ]);
  });

  it("checks nothing more when what answers at the URL is not a hookgate gateway", async () => {
    // Another web server on the port: its 404 for /healthz is no hookgate answer.
    const url = await hookUrlOf((_req, res) => res.writeHead(404).end("not found"));
    const result = await runCli(["doctor", "--url", url], "", { HOOKGATE_TOKEN: TOKEN });
    expect(result.code).toBe(1);
    expect(lines(result.stdout)).toEqual([
      expect.stringMatching(/^✗ gateway answers: GET .*\/healthz gave HTTP 404/),
      "✗ token: not checked (the health check failed)",
      "✗ sample decision: not checked (the health check failed)",
    ]);
  });

  it("names a mistyped hook URL, which the gateway's prefixed routes would otherwise take for a base", async () => {
    const result = await runCli(["doctor", "--url", `${server.url}/v1/hook/claude-code`], "", {
      HOOKGATE_TOKEN: TOKEN,
    });
    expect(result.code).toBe(1);
    expect(lines(result.stdout)).toEqual([
      `✗ hook URL: ${server.url}/v1/hook/claude-code is no hook route and no gateway base URL (its path has /v1/ but no /v1/hooks)`,
      "✗ token: not checked (the hook URL is mistyped)",
      "✗ sample decision: not checked (the hook URL is mistyped)",
    ]);
    // The one it likely meant, on its own host and port.
    expect(result.stdout).toContain(
      `fix: use the hook URL hookgate init printed (here likely ${server.url}/v1/hooks/claude-code)`,
    );
    // The header derives no hook URL from it (`…/v1/hook/claude-code/v1/hooks/claude-code`),
    // nor a sample's dialect, as no sample is sent: claude-code's, the default, for deepcode's.
    expect(result.stdout.split("\n")[0]).toBe(`hookgate doctor: ${server.url}/v1/hook/claude-code`);
    const deepcode = await runCli(["doctor", "--url", `${server.url}/v1/hook/deepcode`], "", {
      HOOKGATE_TOKEN: TOKEN,
    });
    expect(deepcode.stdout.split("\n")[0]).toBe(`hookgate doctor: ${server.url}/v1/hook/deepcode`);
    expect(deepcode.stdout).toContain(`(here likely ${server.url}/v1/hooks/deepcode)`);
    // A base URL under a prefix is a base URL, and a hook URL's prefix may be `/v1` (an API
    // stage named so): every check runs there.
    for (const url of [`${server.url}/hookgate`, `${server.url}/v1/v1/hooks/claude-code`]) {
      const prefixed = await runCli(["doctor", "--url", url], "", { HOOKGATE_TOKEN: TOKEN });
      expect(prefixed.code, prefixed.stdout).toBe(0);
    }
  });

  it("fails the sample check when the policy does not decide as expected", async () => {
    const result = await runCli(["doctor", "--url", server.url, "--expect", "allow"], "", {
      HOOKGATE_TOKEN: TOKEN,
    });
    expect(result.code).toBe(1);
    const checks = lines(result.stdout);
    expect(checks.slice(0, 2).every((l) => l.startsWith("✓ "))).toBe(true);
    expect(checks[2]).toMatch(/^✗ sample PreToolUse Bash "rm -rf \/" → deny .*expected allow$/);
    expect(result.stdout).toMatch(/fix: .*hookgate simulate/);
  });

  it("gives the simulate command that shows why, with the sample it sent, ready to run", async () => {
    // A command holding a quote and a backslash, which the printed command must carry as sent.
    const command = `rm -rf / # it's "done" \\n`;
    const result = await runCli(
      ["doctor", "--url", server.url, "--expect", "allow", "--command", command],
      "",
      {
        HOOKGATE_TOKEN: TOKEN,
      },
    );
    expect(result.code).toBe(1);
    const run = /run: (.*)$/m.exec(result.stdout)?.[1] ?? "";
    expect(run, result.stdout).toMatch(
      /^printf '%s' .* \| hookgate simulate --policy FILE --client claude-code -$/,
    );
    // Run as printed, by sh, with FILE and hookgate filled in.
    const line = run.replace("| hookgate ", '| "$1" "$2" ').replace("--policy FILE", '--policy "$3"');
    const shell = spawnSync("sh", ["-c", line, "sh", process.execPath, BIN, "examples/policy.json"], {
      cwd: ROOT,
      encoding: "utf8",
      env: childEnv({ HOOKGATE_TOKEN: TOKEN }),
    });
    expect(shell.status, shell.stderr).toBe(0);
    expect(shell.stdout).toContain("+ no-rm-root [enforce]");
    // The sample arrived whole, as JSON (a quote or backslash lost on the way is MALFORMED_JSON).
    expect(shell.stdout).not.toContain("MALFORMED_JSON");
    // fish reads the same word as the same event: inside its single quotes, \\ is one backslash
    // and \' a quote, so a JSON escape `\\n` (a backslash, then n) came to simulate as a line break.
    const word = /^printf '%s' (.*) \| hookgate/.exec(run)?.[1] ?? "";
    const posix = spawnSync("sh", ["-c", `printf '%s' ${word}`], { encoding: "utf8" }).stdout;
    expect(JSON.parse(fishWord(word))).toEqual(JSON.parse(posix));
    expect(JSON.parse(posix).tool_input.command).toBe(command);
  });

  it("fails the first check, with how to start the gateway, when nothing answers", async () => {
    const result = await runCli(["doctor", "--url", closedUrl], "", { HOOKGATE_TOKEN: TOKEN });
    expect(result.code).toBe(1);
    const checks = lines(result.stdout);
    expect(checks).toHaveLength(3);
    expect(checks.every((l) => l.startsWith("✗ "))).toBe(true);
    expect(result.stdout).toMatch(/nothing is listening/);
    expect(result.stdout).toMatch(/fix: start the gateway \(npm start/);
  });

  it("says to use http:// for an https URL to the plain-http gateway, and to fix a host that does not resolve", async () => {
    const hook = `${server.url.replace(/^http:/, "https:")}/v1/hooks/claude-code`;
    const tls = await runCli(["doctor", "--url", hook], "", { HOOKGATE_TOKEN: TOKEN });
    expect(tls.code).toBe(1);
    expect(lines(tls.stdout)[0]).toMatch(
      /^✗ gateway answers: TLS to 127\.0\.0\.1:\d+ failed \(wrong version number\)/,
    );
    expect(tls.stdout).toContain(
      "    fix: use http:// in --url and in the hook URL: hookgate serve speaks plain http, and https is a TLS proxy's in front of it\n",
    );
    const name = await runCli(["doctor", "--url", "http://gateway.invalid:8787/v1/hooks/claude-code"], "", {
      HOOKGATE_TOKEN: TOKEN,
    });
    expect(name.code).toBe(1);
    // A .invalid name is NXDOMAIN (ENOTFOUND) wherever DNS answers; a host with no DNS at all
    // fails the lookup for now (EAI_AGAIN), which is not told the name is wrong.
    expect(name.stdout).toMatch(
      /\n {4}fix: (?:fix the host name in --url \(gateway\.invalid\), or use 127\.0\.0\.1 for a gateway on this machine|check this machine's DNS or network \(a VPN\?\) and run it again, or put the gateway's address in --url)\n/,
    );
  });

  it("fails the first check while the gateway's last policy reload was refused, and checks the rest", async () => {
    // /healthz said "ok" with the running policy's hash after a SIGHUP whose file did not load, so
    // doctor passed every check on a gateway still enforcing the policy the deploy meant to replace.
    const path = join(tempDir("doctor-reload"), "policy.json");
    copyFileSync(join(ROOT, "examples/policy.json"), path);
    const reloading = await startServerProcess(path);
    try {
      const before = (await (await fetch(`${reloading.url}/healthz`)).json()) as Record<string, unknown>;
      writeFileSync(path, '{"version":1,"rules":[');
      reloading.child.kill("SIGHUP");
      await reloading.waitForLine((l) => l.msg === "policy reload failed; keeping the running policy");
      const health = await fetch(`${reloading.url}/healthz`);
      expect(health.status).toBe(200);
      expect(await health.json()).toEqual({ status: "ok", policy: before.policy, reload: "failed" });
      const failed = await runCli(["doctor", "--url", reloading.url], "", { HOOKGATE_TOKEN: TOKEN });
      expect(failed.code, failed.stdout).toBe(1);
      const checks = lines(failed.stdout);
      expect(checks[0]).toBe(
        `✗ gateway answers: GET /healthz 200, policy ${String(before.policy)}, but it refused its last policy reload and still runs this policy`,
      );
      expect(failed.stdout).toMatch(/fix: .*"policy reload failed".*hookgate check .*SIGHUP/);
      expect(checks.slice(1).every((l) => l.startsWith("✓ "))).toBe(true);
      expect(checks).toHaveLength(3);

      // A reload that loads clears it, the running policy's own file put back too.
      copyFileSync(join(ROOT, "examples/policy.json"), path);
      reloading.child.kill("SIGHUP");
      await reloading.waitForLine((l) => l.msg === "policy unchanged; nothing reloaded");
      expect(await (await fetch(`${reloading.url}/healthz`)).json()).toEqual({
        status: "ok",
        policy: before.policy,
      });
      const passed = await runCli(["doctor", "--url", reloading.url], "", { HOOKGATE_TOKEN: TOKEN });
      expect(passed.code, passed.stdout).toBe(0);
    } finally {
      await reloading.stop();
    }
  });

  it("is a usage error without --url or with an unknown --expect", async () => {
    const [noUrl, badExpect] = await Promise.all([
      runCli(["doctor"]),
      runCli(["doctor", "--url", server.url, "--expect", "maybe"]),
    ]);
    expect(noUrl.code).toBe(2);
    expect(badExpect.code).toBe(2);
  });
});

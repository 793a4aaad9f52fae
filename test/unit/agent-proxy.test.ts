import { describe, expect, it } from "vitest";
import { agentProxy, proxyFor, strandingProxy } from "../../src/entry/agent-proxy.js";

describe("strandingProxy", () => {
  const remote = "http://proxy.corp:3128";

  it.each([
    "http://localhost:8787/",
    "http://LOCALHOST./",
    "http://gw.localhost/",
    "http://127.0.0.1:8787/",
    "http://127.1.2.3/",
    "http://[::1]:8787/",
    "http://[0:0:0:0:0:0:0:1]/",
    "http://[::ffff:127.0.0.1]/",
    // A connect to the unspecified address reaches this machine on Linux and macOS.
    "http://0.0.0.0:8787/",
    "http://[::]:8787/",
  ])("takes %s for this machine's loopback, which a proxy on another machine cannot reach", (url) => {
    expect(strandingProxy(url, remote)).toEqual(new URL(remote));
    // A proxy there (a local cntlm) reaches it, as a loopback gateway.
    expect(strandingProxy(url, url)).toBeUndefined();
  });

  it.each([
    "http://proxy.corp:3128/",
    "http://localhost.example.com/",
    "http://128.0.0.1/",
    "http://10.0.0.1/",
    "http://0.0.0.1/",
    "http://[::2]/",
    "http://[::ffff:10.0.0.1]/",
  ])("does not take %s for it", (url) => {
    expect(strandingProxy(url, remote)).toBeUndefined();
  });
});

describe("proxyFor", () => {
  const hook = "http://127.0.0.1:8787/v1/hooks/claude-code";

  it("posts to a loopback gateway directly when the proxy is on another machine", () => {
    expect(proxyFor(hook, "claude-code", { HTTPS_PROXY: "http://proxy.corp:3128" })).toEqual({
      stranded: new URL("http://proxy.corp:3128"),
    });
  });

  it("posts to a gateway at 0.0.0.0 directly when the proxy is on another machine", () => {
    // A gateway started on 0.0.0.0 is reached at that address from this machine, not the proxy's.
    expect(
      proxyFor("http://0.0.0.0:8787/v1/hooks/claude-code", "claude-code", {
        HTTPS_PROXY: "http://proxy.corp:3128",
      }),
    ).toEqual({ stranded: new URL("http://proxy.corp:3128") });
  });

  it("keeps a proxy on this machine, and any proxy for a gateway elsewhere", () => {
    expect(proxyFor(hook, "claude-code", { HTTPS_PROXY: "http://127.0.0.1:3128" })).toEqual({
      proxy: "http://127.0.0.1:3128",
      proxyVariable: "HTTPS_PROXY",
    });
    expect(
      proxyFor("https://hooks.example.com/v1/hooks/claude-code", "claude-code", {
        HTTPS_PROXY: "http://proxy.corp:3128",
      }),
    ).toEqual({ proxy: "http://proxy.corp:3128", proxyVariable: "HTTPS_PROXY" });
  });

  it("names the variable deepcode takes its proxy from: the first set, an empty one too", () => {
    const url = "https://hooks.example.com/v1/hooks/deepcode";
    const proxy = "http://proxy.corp:3128";
    expect(proxyFor(url, "deepcode", { http_proxy: proxy, HTTP_PROXY: "http://other:1" })).toEqual({
      proxy,
      proxyVariable: "http_proxy",
    });
    // `??` stops at an empty https_proxy: no proxy at all.
    expect(proxyFor(url, "deepcode", { https_proxy: "", HTTPS_PROXY: proxy })).toEqual({});
  });
});

describe("agentProxy", () => {
  // A proxy on this machine, so that only NO_PROXY decides the route.
  const local = { HTTPS_PROXY: "http://127.0.0.1:3128" };

  it.each(["::1", "[::1]", "[::1]:8787", "localhost,::1"])(
    "takes NO_PROXY=%s to exempt http://[::1]:8787, as curl does, for Claude Code",
    (noProxy) => {
      // A URL writes an IPv6 host in brackets, a NO_PROXY entry either way.
      expect(
        agentProxy("http://[::1]:8787/v1/hooks/claude-code", "claude-code", { ...local, NO_PROXY: noProxy }),
      ).toMatchObject({ used: false, exemptedBy: "NO_PROXY" });
    },
  );

  it.each([
    ["::2", "http://[::1]:8787/"],
    ["[::1]:9999", "http://[::1]:8787/"],
    ["::1", "http://127.0.0.1:8787/"],
  ])("does not take NO_PROXY=%s to exempt %s", (noProxy, url) => {
    expect(agentProxy(url, "claude-code", { ...local, NO_PROXY: noProxy })).toMatchObject({ used: true });
  });

  it("reads deepcode's NO_PROXY as its code does: [::1] exempts http://[::1], a bare ::1 does not", () => {
    // deepcode compares NO_PROXY's entries with the URL's hostname, brackets and all.
    const url = "http://[::1]:8787/v1/hooks/deepcode";
    expect(agentProxy(url, "deepcode", { ...local, NO_PROXY: "[::1]" })).toMatchObject({ used: false });
    expect(agentProxy(url, "deepcode", { ...local, NO_PROXY: "::1" })).toMatchObject({ used: true });
  });

  it.each([
    ["claude-code", "socks5h://127.0.0.1:1080", true],
    ["claude-code", "socks5://127.0.0.1:1080", true],
    ["claude-code", "SOCKS4A://127.0.0.1:1080", true],
    ["claude-code", "http://127.0.0.1:3128", false],
    // undici's ProxyAgent speaks SOCKS5 written socks5:// or socks://, and refuses every other scheme.
    ["deepcode", "socks5://127.0.0.1:1080", false],
    ["deepcode", "socks://127.0.0.1:1080", false],
    ["deepcode", "socks5h://127.0.0.1:1080", true],
    ["deepcode", "socks4://127.0.0.1:1080", true],
    ["deepcode", "127.0.0.1:3128", false],
    // curl speaks every SOCKS version.
    ["deepagents", "socks4a://127.0.0.1:1080", false],
  ])("reads whether %s's http hooks can use the proxy %s: unusable %s", (dialect, proxy, unusable) => {
    const read = agentProxy(`https://hooks.example.com/v1/hooks/${dialect}`, dialect, { HTTPS_PROXY: proxy });
    expect(read.used).toBe(true);
    expect(read.unspoken !== undefined).toBe(unusable);
  });
});

describe("agentProxy for deepagents, whose hook is init's curl command", () => {
  // curl reads the variables its own way (curl(1), ENVIRONMENT): http_proxy only in lower case for
  // an http URL, https_proxy or HTTPS_PROXY for an https one, then all_proxy or ALL_PROXY; an empty
  // one is unset. Checked against curl 7.88's own choice (`curl -v` names the variable it used).
  const http = "http://gw.example.com:8787/v1/hooks/deepagents";
  const https = "https://gw.example.com/v1/hooks/deepagents";
  const proxy = "http://proxy.corp:3128";

  it.each([
    ["http_proxy", http, { http_proxy: proxy }, "http_proxy"],
    ["HTTPS_PROXY", https, { HTTPS_PROXY: proxy }, "HTTPS_PROXY"],
    [
      "https_proxy before HTTPS_PROXY",
      https,
      { https_proxy: proxy, HTTPS_PROXY: "http://other:1" },
      "https_proxy",
    ],
    ["ALL_PROXY", http, { ALL_PROXY: proxy }, "ALL_PROXY"],
    ["all_proxy after an empty http_proxy", http, { http_proxy: "", all_proxy: proxy }, "all_proxy"],
  ])("goes through %s", (_, url, env, from) => {
    expect(agentProxy(url, "deepagents", env)).toMatchObject({ used: true, proxy, from });
    // The variable goes with it, for a fix to the proxy's URL to name the one curl read.
    expect(proxyFor(url, "deepagents-legacy", env)).toEqual({ proxy, proxyVariable: from });
  });

  it.each([
    // curl never reads HTTP_PROXY (a CGI request's Proxy header sets it), nor an https URL's proxy for http.
    ["HTTP_PROXY", http, { HTTP_PROXY: proxy }, "http_proxy for an http URL"],
    ["HTTPS_PROXY", http, { HTTPS_PROXY: proxy }, "http_proxy for an http URL"],
    ["http_proxy", https, { http_proxy: proxy }, "https_proxy or HTTPS_PROXY for an https URL"],
  ])("connects directly with %s alone to %s, where Claude Code's hooks take it", (name, url, env, read) => {
    expect(agentProxy(url, "deepagents", env)).toEqual({ used: false, unread: { name, read } });
    expect(proxyFor(url, "deepagents", env)).toEqual({});
    expect(proxyFor(url, "claude-code", env)).toEqual({ proxy, proxyVariable: name });
  });

  it.each([
    ["gw.example.com", http],
    [".example.com", http],
    ["example.com.", http],
    ["a b,gw.example.com", http],
    ["*", http],
    ["10.0.0.0/8", "http://10.1.2.3:8787/v1/hooks/deepagents"],
    ["10.1.2.3", "http://10.1.2.3:8787/v1/hooks/deepagents"],
    ["::1", "http://[::1]:8787/v1/hooks/deepagents"],
    // curl reads a range's bits as C's atoi does: digits up to the first other character, none 0.
    ["10.0.0.0/8x", "http://10.1.2.3:8787/v1/hooks/deepagents"],
    ["10.1.2.3/abc", "http://10.1.2.3:8787/v1/hooks/deepagents"],
    ["10.1.2.3/0", "http://10.1.2.3:8787/v1/hooks/deepagents"],
    ["10.1.2.3/32", "http://10.1.2.3:8787/v1/hooks/deepagents"],
    ["10.1.2.3/8", "http://10.200.0.1:8787/v1/hooks/deepagents"],
    ["192.168.0.0/17", "http://192.168.127.255:8787/v1/hooks/deepagents"],
    // curl 7.88 names an IPv6 host as the URL writes it, or as inet_ntop writes it when that is
    // shorter (`[0:0::1]` is `::1`): an address with an IPv4 part stays dotted, where a WHATWG
    // URL writes it in hex (`[::ffff:a01:203]`).
    ["0:0:0:0:0:0:0:1 ::1", "http://[0:0::1]:8787/v1/hooks/deepagents"],
    ["FD00::1", "http://[fd00:0::1]:8787/v1/hooks/deepagents"],
    ["::ffff:10.1.2.3", "http://[::ffff:10.1.2.3]:8787/v1/hooks/deepagents"],
    ["::ffff:10.1.2.3", "http://u:p@[::FFFF:10.1.2.3]:8787/v1/hooks/deepagents"],
    ["::ffff:a01:203", "http://[::ffff:a01:203]:8787/v1/hooks/deepagents"],
    ["::10.1.2.3", "http://[::10.1.2.3]:8787/v1/hooks/deepagents"],
  ])("takes NO_PROXY=%s to exempt %s", (noProxy, url) => {
    expect(agentProxy(url, "deepagents", { http_proxy: proxy, NO_PROXY: noProxy })).toMatchObject({
      used: false,
      exemptedBy: "NO_PROXY",
    });
  });

  it.each([
    ["gw.example.com:8787", http],
    ["ample.com", http],
    ["[::1]", "http://[::1]:8787/v1/hooks/deepagents"],
    // curl 7.88 compares an IPv6 host as a name, as written: the same address written otherwise
    // is another (before, it was taken to exempt it, and doctor said direct where curl proxied).
    ["0:0::1", "http://[::1]:8787/v1/hooks/deepagents"],
    ["10.0.0.0/16", "http://10.1.2.3:8787/v1/hooks/deepagents"],
    ["192.168.0.0/17", "http://192.168.128.0:8787/v1/hooks/deepagents"],
    ["10.1.2.3/33", "http://10.1.2.3:8787/v1/hooks/deepagents"],
    ["10.1.2.3/-8", "http://10.1.2.3:8787/v1/hooks/deepagents"],
    // An IPv6 host is a name to curl 7.88 whatever it holds: no range, nor an IPv4 part, reads it.
    ["::1/128", "http://[::1]:8787/v1/hooks/deepagents"],
    ["fd00::/8", "http://[fd00::1]:8787/v1/hooks/deepagents"],
    ["10.0.0.0/8", "http://[::ffff:10.1.2.3]:8787/v1/hooks/deepagents"],
    ["10.1.2.3", "http://[::ffff:10.1.2.3]:8787/v1/hooks/deepagents"],
    ["::ffff:10.0.0.0/104", "http://[::ffff:10.1.2.3]:8787/v1/hooks/deepagents"],
    ["::ffff:10.1.2.3", "http://10.1.2.3:8787/v1/hooks/deepagents"],
    // Nor the same address in the other form than the one curl names it by.
    ["::ffff:a01:203", "http://[::ffff:10.1.2.3]:8787/v1/hooks/deepagents"],
    ["::ffff:10.1.2.3", "http://[::ffff:a01:203]:8787/v1/hooks/deepagents"],
    ["::a01:203", "http://[::10.1.2.3]:8787/v1/hooks/deepagents"],
    // curl reads no range of 0 bits, nor of bits left out after the slash: the address alone.
    ["0.0.0.0/0", "http://10.1.2.3:8787/v1/hooks/deepagents"],
    ["127.0.0.1/", "http://10.1.2.3:8787/v1/hooks/deepagents"],
    ["10.0.0.0/ 8", "http://10.1.2.3:8787/v1/hooks/deepagents"],
    // Nor drops a dot next to an IP address, nor trims a `*` that is not the whole list.
    [".10.1.2.3", "http://10.1.2.3:8787/v1/hooks/deepagents"],
    ["10.1.2.3.", "http://10.1.2.3:8787/v1/hooks/deepagents"],
    ["010.1.2.3", "http://10.1.2.3:8787/v1/hooks/deepagents"],
    [" *", http],
    ["* ", http],
  ])("does not take NO_PROXY=%s to exempt %s", (noProxy, url) => {
    expect(agentProxy(url, "deepagents", { http_proxy: proxy, NO_PROXY: noProxy })).toMatchObject({
      used: true,
      noProxy: "NO_PROXY",
    });
  });

  it("reads no_proxy alone when it is set, NO_PROXY only when it is not (or empty)", () => {
    const env = { http_proxy: proxy, NO_PROXY: "gw.example.com" };
    expect(agentProxy(http, "deepagents", { ...env, no_proxy: "other" })).toMatchObject({
      used: true,
      noProxy: "no_proxy",
    });
    expect(agentProxy(http, "deepagents", { ...env, no_proxy: "" })).toMatchObject({
      used: false,
      exemptedBy: "NO_PROXY",
    });
  });
});

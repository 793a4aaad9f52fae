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
    });
    expect(
      proxyFor("https://hooks.example.com/v1/hooks/claude-code", "claude-code", {
        HTTPS_PROXY: "http://proxy.corp:3128",
      }),
    ).toEqual({ proxy: "http://proxy.corp:3128" });
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
});

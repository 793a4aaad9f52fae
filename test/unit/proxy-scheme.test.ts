import { describe, expect, it } from "vitest";
import { asCurlReadsIt, proxyScheme, socksVersion } from "../../src/core/proxy-scheme.js";

describe("proxyScheme", () => {
  it.each([
    ["http://proxy.corp:3128", "http"],
    ["HTTPS://proxy.corp", "https"],
    ["socks5h://user:p%40ss@127.0.0.1:1080", "socks5h"],
    // Written without a scheme: an http proxy to the clients that take it, not the scheme `proxy.corp`.
    ["proxy.corp:8080", undefined],
    ["socks5:proxy.corp", undefined],
    ["", undefined],
  ])("reads %s as %s", (proxy, scheme) => {
    expect(proxyScheme(proxy)).toBe(scheme);
  });
});

describe("socksVersion", () => {
  it.each([
    ["socks4://127.0.0.1:1080", 4],
    ["SOCKS4A://127.0.0.1:1080", 4],
    ["socks5://127.0.0.1:1080", 5],
    ["socks5h://127.0.0.1:1080", 5],
    // socks:// names no version: undici (deepcode's client, hookgate's own) speaks SOCKS5.
    ["socks://127.0.0.1:1080", 5],
    ["http://127.0.0.1:3128", undefined],
    ["socks.corp:1080", undefined],
  ])("reads %s as SOCKS %s", (proxy, version) => {
    expect(socksVersion(proxy)).toBe(version);
  });
});

describe("asCurlReadsIt", () => {
  it.each([
    // curl (deepagents' hook) reads socks:// as SOCKS4 (7.88), where undici reads SOCKS5.
    ["socks://me@127.0.0.1:1080", "socks4://me@127.0.0.1:1080"],
    ["SOCKS://127.0.0.1:1080", "socks4://127.0.0.1:1080"],
    ["socks5://127.0.0.1:1080", "socks5://127.0.0.1:1080"],
    ["socks4a://127.0.0.1:1080", "socks4a://127.0.0.1:1080"],
    ["http://socks:1080", "http://socks:1080"],
  ])("hands %s on as %s", (proxy, handed) => {
    expect(asCurlReadsIt(proxy)).toBe(handed);
  });
});

/**
 * The one reading of a path (src/http/route-path.ts) gives the same route for a request line's
 * target, as Node's listener reads it, and for the URL a WHATWG parser made of it, as Hono reads
 * it on every runtime: a path the two read apart is a hook on one side and a 421 or 404 on the
 * other.
 */
import { describe, expect, it } from "vitest";
import { hookRoute, routePath, targetHost } from "../../src/http/route-path.js";

const TARGETS: readonly (readonly [string, string | undefined | null])[] = [
  // [target, the client it names (undefined: the body decides; null: no hook route)]
  ["/v1/hooks", undefined],
  ["/v1/hooks/claude-code?x=1", "claude-code"],
  ["/%761/hooks/claude-code", "claude-code"],
  ["/v1/hooks/%63laude-code", "claude-code"],
  ["/v1/hooks%2fclaude-code", "claude-code"],
  ["/v1/hooks/claude%2Fcode", "claude/code"],
  ["/v1/hooks/%2e%2E/hooks/deepcode", "deepcode"],
  ["/v1/hooks/.%2e/hooks/deepcode", "deepcode"],
  ["/v1/hooks//../claude-code", "claude-code"],
  ["/v1//hooks/claude-code", "claude-code"],
  ["//v1/hooks///claude-code//", "claude-code"],
  ["/v1/hooks/claude-code#x/../deepcode", "claude-code"],
  ["/v1/hooks/claude-code/..", undefined],
  ["/v1/hooks/claude-code/.", "claude-code"],
  ["/v1/hooks/claude-code%2F..%2F..%2Fdeepcode", null],
  ["/v1/hooks\\claude-code", "claude-code"],
  ["/prod%2Fv1%2Fhooks%2Fclaude-code/", "claude-code"],
  ["/v1/hooks/claude%20code", "claude%20code"],
  ["/v1/hooks/claude%3bcode", "claude%3Bcode"],
  ["/v1/hooks/claude%252Fcode", "claude%252Fcode"],
  ["/v1/hooks%252Fclaude-code", null],
  ["/v1/hooks/%zz", "%25zz"],
  ["/v1/hooks/%", "%25"],
  // A `%` starting no escape, then escapes of hex digits: no escape made, read again or not.
  ["/v1/hooks%%32%46claude-code", null],
  ["/v1/hooks/%%36%33laude-code", "%2563laude-code"],
  ["/v1/hooks/%4%31", "%2541"],
  ["/v1/hooks/cl{a}|^`", "cl%7Ba%7D%7C%5E%60"],
  ["/v1/hooks/...", "..."],
  ["/V1/HOOKS/claude-code", null],
  ["/v1/hooksx/claude-code", null],
  ["/healthz", null],
  // The first `/v1/hooks` names the route: a deeper path under the root one is an unknown name.
  ["/v1/hooks/x/v1/hooks/claude-code", "x/v1/hooks/claude-code"],
  ["/v1/hooks/claude-code/v1/hooks", "claude-code/v1/hooks"],
  ["/prod/v1/hooks/x/v1/hooks/claude-code", "x/v1/hooks/claude-code"],
  ["http://127.0.0.1:8787/hookgate/v1/hooks/deepagents?x", "deepagents"],
  // An absolute-form target's authority ends at its first `/`, `\\`, `?` or `#`.
  ["http://127.0.0.1:8787?/v1/hooks/claude-code", null],
  ["http://a.example\\@127.0.0.1/v1/hooks/claude-code", "claude-code"],
  ["http://a.example\\v1\\hooks\\claude-code", "claude-code"],
];

describe("a path read once for every runtime", () => {
  it.each(TARGETS)("%s", (target, client) => {
    const route = hookRoute(target);
    expect(route === undefined ? null : route.client).toBe(client);
    const url = target.startsWith("/") ? new URL(`http://gateway${target}`) : new URL(target);
    expect(hookRoute(url.href)).toEqual(route);
    expect(routePath(url.href)).toBe(routePath(target));
    // Read once: the normal form reads as itself.
    expect(routePath(routePath(target))).toBe(routePath(target));
  });
});

describe("the host an absolute-form target names", () => {
  it.each([
    "http://127.0.0.1:8787/v1/hooks",
    "http://rebind.attacker.example/v1/hooks",
    "http://user:pw@127.0.0.1/v1/hooks",
    "http://a.example\\@127.0.0.1/v1/hooks",
    "http://a.example?@127.0.0.1/v1/hooks",
    "http://a.example#@127.0.0.1/v1/hooks",
    "http://[::1]:8787",
  ])("%s, as a URL parser reads it", (target) => {
    expect(targetHost(target)).toBe(new URL(target).host);
  });

  it("is none for a target in origin form", () => {
    expect(targetHost("/v1/hooks/claude-code?u=http://a.example/")).toBeUndefined();
  });
});

/**
 * `withoutUserinfo` keeps a URL's user name and password out of messages (`init`, `send`,
 * `doctor`, `egress-check`, `dlq`), also for text the URL parser refuses
 * (`http:\\user:secret@host:99999/` was once echoed whole) and for one written without its scheme
 * (`user:secret@host:8787` parses, with the scheme `user:`).
 */
import { describe, expect, it } from "vitest";
import { withoutUserinfo } from "../../src/core/url-userinfo.js";

describe("withoutUserinfo", () => {
  it.each([
    ["http://user:secret@host/x", "http://host/x"],
    ["http://user:secret@host:99999/x", "http://host:99999/x"],
    ["http:\\\\user:secret@host:99999/", "http:\\\\host:99999/"],
    ["http:user:secret@host:99999/", "http:host:99999/"],
    ["HTTPS:/user:secret@host:99999", "HTTPS:/host:99999"],
    ["ftp://user:secret@host:99999/", "ftp://host:99999/"],
    ["http://a@b:secret@host:99999/", "http://host:99999/"],
    ["user:secret@host:8787", "host:8787"],
    ["user:secret@host:8787/v1/hooks/claude-code", "host:8787/v1/hooks/claude-code"],
    [" user:secret@host", "host"],
    ["user@host:secret@127.0.0.1:8787", "127.0.0.1:8787"],
  ])("%s shows as %s", (text, shown) => {
    expect(withoutUserinfo(text)).toBe(shown);
    expect(withoutUserinfo(text)).not.toContain("secret");
  });

  it("leaves a URL with no user name as it is, and an @ in its path", () => {
    expect(withoutUserinfo("http://127.0.0.1:8787/v1/hooks")).toBe("http://127.0.0.1:8787/v1/hooks");
    expect(withoutUserinfo("http://host:99999/a@b")).toBe("http://host:99999/a@b");
    expect(withoutUserinfo("localhost:8787/a@b")).toBe("localhost:8787/a@b");
    expect(withoutUserinfo("file:///a@b")).toBe("file:///a@b");
  });
});

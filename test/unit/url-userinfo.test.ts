/**
 * `withoutUserinfo` keeps a URL's user name and password out of messages (`init`, `send`,
 * `doctor`, `egress-check`, `dlq`), also for text the URL parser refuses
 * (`http:\\user:secret@host:99999/` was once echoed whole) and for one written without its scheme
 * (`user:secret@host:8787` parses, with the scheme `user:`).
 */
import { format } from "node:util";
import { describe, expect, it } from "vitest";
import { withoutUserinfo, withoutUserinfoIn } from "../../src/core/url-userinfo.js";

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
    // Unparseable for the # or ? in its password: the URL parser would not read it either way.
    ["http://u:pa#secret@host:8787/", "http://host:8787/"],
    ["http://u:pa?secret@host:8787/v1", "http://host:8787/v1"],
    // A "/" or "\" in the password (a base64 secret) cuts what the parser reads as the port short.
    ["http://u:pa/secret@host:8787/v1", "http://host:8787/v1"],
    ["https://AKIA:wJalr/secret+bPx@sqs.example/1/q", "https://sqs.example/1/q"],
    ["http://u:pa\\secret@host/", "http://host/"],
    ["http://u:pa/se@cret@[::1]:8787/", "http://[::1]:8787/"],
    ["u:pa/secret@host:8787", "host:8787"],
    // Parsed, with the user name as the host and the password as its query, fragment or path.
    ["http://u:#secret@host:8787/", "http://host:8787/"],
    ["http://u:?secret@host:8787/", "http://host:8787/"],
    ["http://u:/secret@host:8787/", "http://host:8787/"],
    // The URL parser's other schemes that read a backslash as a slash.
    ["ftp:\\\\user:secret@host:99999/", "ftp:\\\\host:99999/"],
    ["wss:user:secret@host:99999/", "wss:host:99999/"],
  ])("%s shows as %s", (text, shown) => {
    expect(withoutUserinfo(text)).toBe(shown);
    expect(withoutUserinfo(text)).not.toContain("secret");
  });

  it("leaves a URL with no user name as it is, and an @ in its path", () => {
    expect(withoutUserinfo("http://127.0.0.1:8787/v1/hooks")).toBe("http://127.0.0.1:8787/v1/hooks");
    expect(withoutUserinfo("http://host:99999/a@b")).toBe("http://host:99999/a@b");
    expect(withoutUserinfo("localhost:8787/a@b")).toBe("localhost:8787/a@b");
    expect(withoutUserinfo("file:///a@b")).toBe("file:///a@b");
    expect(withoutUserinfo("http://registry:4873/@scope/pkg")).toBe("http://registry:4873/@scope/pkg");
    expect(withoutUserinfo("http://[::1]:8787/a@b")).toBe("http://[::1]:8787/a@b");
  });
});

describe("withoutUserinfoIn", () => {
  // The AWS SDK's own warning names a queue URL as it was given, user name and password included.
  it.each([
    [
      "QueueUrl=https://user:secret@sqs.example/1/q differs from SQSClient resolved endpoint=https://sqs.us-east-1.amazonaws.com/, using QueueUrl host",
      "QueueUrl=https://sqs.example/1/q differs from SQSClient resolved endpoint=https://sqs.us-east-1.amazonaws.com/, using QueueUrl host",
    ],
    ["a http://u:secret@a/x and b ftp://v:secret@b:21/y", "a http://a/x and b ftp://b:21/y"],
    ["QueueUrl=http://u:se cret@host:9/q", "QueueUrl=http://host:9/q"],
    ["QueueUrl=http://a@b:secret@host", "QueueUrl=http://host"],
    ["QueueUrl=http:\\\\u:secret@host/q", "QueueUrl=http:\\\\host/q"],
    ["QueueUrl=http:u:secret@host/q", "QueueUrl=http:host/q"],
    ["QueueUrl=HTTPS://U:secret@HOST/q\nnext line", "QueueUrl=HTTPS://HOST/q\nnext line"],
    [
      "QueueUrl=https://AKIA:wJalr/secret@sqs.example/1/q differs",
      "QueueUrl=https://sqs.example/1/q differs",
    ],
    ["QueueUrl=http://u:pa\\secret@host/q", "QueueUrl=http://host/q"],
    ["a http://u:pa/secret@a/q and http://b/x", "a http://a/q and http://b/x"],
    ["QueueUrl=ftp:\\\\u:secret@host:99999/q", "QueueUrl=ftp:\\\\host:99999/q"],
    ["QueueUrl=_http://u:secret@host/q", "QueueUrl=_http://host/q"],
  ])("%s shows as %s", (text, shown) => {
    expect(withoutUserinfoIn(text)).toBe(shown);
    expect(withoutUserinfoIn(text)).not.toContain("secret");
  });

  it.each([
    ["http://u:pa#secret@127.0.0.1:9/000000000000/q", "http://127.0.0.1:9/000000000000/q"],
    ["http://u:pa?secret@127.0.0.1:9/000000000000/q", "http://127.0.0.1:9/000000000000/q"],
    ["http://u:pa/secret@127.0.0.1:9/000000000000/q", "http://127.0.0.1:9/000000000000/q"],
  ])("leaves the password out of the URL parser's error, which the SDK warns, for %s", (url, shown) => {
    // A password holding an unencoded "#", "?" or "/" makes a URL the parser refuses: the SDK warns
    // its error, and the error quotes the URL whole.
    let warned = "";
    try {
      new URL(url);
    } catch (e) {
      warned = format(e);
    }
    expect(warned).toContain(url);
    expect(withoutUserinfoIn(warned)).toContain(`input: '${shown}'`);
    expect(withoutUserinfoIn(warned)).not.toContain("secret");
  });

  it("leaves text with no user name in its URLs as it is, an @ in a path or elsewhere too", () => {
    for (const text of [
      "QueueUrl=http://127.0.0.1:9/000000000000/jobs differs",
      "http://host/a@b",
      "mail ops@example.com about http://host:1/",
      "rows: 3, news: ops@example.com",
      "http://[::1]:8787/a@b and http://registry:4873/@scope/pkg",
      "no URL at all",
    ])
      expect(withoutUserinfoIn(text)).toBe(text);
  });
});

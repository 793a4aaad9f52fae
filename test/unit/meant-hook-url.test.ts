import { describe, expect, it } from "vitest";
import { meantHookUrl } from "../../src/entry/send.js";

describe("meantHookUrl", () => {
  it.each([
    ["http://127.0.0.1:8787/v1/hook/claude-code", undefined, "http://127.0.0.1:8787/v1/hooks/claude-code"],
    // The client named among the segments after v1, else --client's, else Claude Code's.
    ["http://127.0.0.1:8787/v1/hook/deepcode", undefined, "http://127.0.0.1:8787/v1/hooks/deepcode"],
    ["http://127.0.0.1:8787/v1/hook/deepcode", "deepagents", "http://127.0.0.1:8787/v1/hooks/deepagents"],
    ["http://gw.internal:9000/v1/hooksx", undefined, "http://gw.internal:9000/v1/hooks/claude-code"],
    ["http://127.0.0.1:8787/v1", undefined, "http://127.0.0.1:8787/v1/hooks/claude-code"],
    // A prefix the gateway is served under is kept; the query and fragment are not.
    [
      "https://tools.example/hookgate/v1/hook/deepagents-legacy?x=1#y",
      undefined,
      "https://tools.example/hookgate/v1/hooks/deepagents-legacy",
    ],
    [
      "http://127.0.0.1:8787/hookgate//v1/hook/",
      undefined,
      "http://127.0.0.1:8787/hookgate/v1/hooks/claude-code",
    ],
  ])("reads %s (--client %s) as %s", (url, client, meant) => {
    expect(meantHookUrl(url, client)).toBe(meant);
  });
});

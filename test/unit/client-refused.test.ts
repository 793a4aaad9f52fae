import { describe, expect, it } from "vitest";
import { clientRefusedRange } from "../../src/core/egress/client-refused.js";
import { buildInitConfig } from "../../src/entry/init.js";

describe("clientRefusedRange: the addresses Claude Code's and deepcode's http hooks refuse", () => {
  it.each([
    ["0.0.0.1", "unspecified"],
    ["10.0.0.1", "private"],
    ["172.16.0.1", "private"],
    ["172.31.255.255", "private"],
    ["192.168.1.1", "private"],
    ["169.254.169.254", "linkLocal"],
    ["100.64.0.1", "carrierGradeNat"],
    ["100.127.255.255", "carrierGradeNat"],
    ["::", "unspecified"],
    ["fd00::1", "uniqueLocal"],
    ["fe80::1", "linkLocal"],
    ["::ffff:10.0.0.1", "private"],
    ["64:ff9b::a00:1", "private"],
    ["168.63.129.16", "cloud metadata"],
    ["192.0.0.192", "cloud metadata"],
  ])("refuses %s (%s)", (address, range) => {
    expect(clientRefusedRange(address)).toBe(range);
  });

  it.each([
    "127.0.0.1",
    "::1",
    "172.15.255.255",
    "172.32.0.0",
    "100.63.255.255",
    "100.128.0.0",
    "192.169.0.1",
    "8.8.8.8",
    "2606:4700::1111",
    "gateway.example.com",
  ])("lets %s through", (address) => {
    expect(clientRefusedRange(address)).toBeUndefined();
  });
});

describe("init's note on a hook URL at a refused address", () => {
  const notesFor = (url: string, client: "claude-code" | "deepcode" | "deepagents" = "claude-code") =>
    buildInitConfig({ client, url, events: ["PreToolUse"], failClosed: false, managed: false }).notes.filter(
      (note) => note.includes("refuses http hooks"),
    );

  it("notes a private IPv4 address, as each agent is named", () => {
    expect(notesFor("https://10.1.2.3/v1/hooks/claude-code")).toEqual([
      "10.1.2.3 is a private address: Claude Code refuses http hooks to private, link-local and cloud metadata addresses (loopback is allowed) unless it goes through a proxy",
    ]);
    expect(notesFor("https://10.1.2.3/v1/hooks/deepcode", "deepcode")[0]).toContain("deepcode refuses");
  });

  it("notes a unique-local IPv6 address, which the agents refuse as they refuse 10/8", () => {
    expect(notesFor("https://[fd12::1]/v1/hooks/claude-code")).toHaveLength(1);
  });

  it("says a cloud metadata address is one", () => {
    expect(notesFor("https://168.63.129.16/v1/hooks/claude-code")[0]).toMatch(
      /^168\.63\.129\.16 is a cloud metadata address: /,
    );
  });

  it("notes nothing for loopback, a public address or deepagents, whose hooks run curl", () => {
    expect(notesFor("http://127.0.0.1:8787/v1/hooks/claude-code")).toEqual([]);
    expect(notesFor("https://8.8.8.8/v1/hooks/claude-code")).toEqual([]);
    expect(notesFor("https://10.1.2.3/v1/hooks/deepagents", "deepagents")).toEqual([]);
  });
});

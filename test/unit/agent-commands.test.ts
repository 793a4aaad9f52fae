/**
 * Commands of the kind coding agents send to the Bash tool (git, package managers, test runners,
 * containers, cloud CLIs, one-liners and multi-line scripts; test/fixtures/bash/agent-commands.json),
 * each with whether splitCommand calls it unreadable. An unreadable command matches every
 * deny-style Bash rule, so for an ordinary command it is a false denial. A change that makes one
 * of these unreadable, or reads one that holds a program no one can name, fails here: look at
 * the command, then update the file.
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { splitCommand } from "../../src/core/shell-command.js";

const cases: { command: string; unreadable: boolean; why?: string }[] = JSON.parse(
  readFileSync(new URL("../fixtures/bash/agent-commands.json", import.meta.url), "utf8"),
);

describe("commands agents send", () => {
  it("are unreadable only where a program that runs cannot be named", () => {
    const changed = cases
      .filter(({ command, unreadable }) => splitCommand(command).unreadable !== unreadable)
      .map(({ command, unreadable }) => ({ command, expected: unreadable }));
    expect(changed).toEqual([]);
  });

  it("say why each unreadable one is", () => {
    const unreadable = cases.filter((c) => c.unreadable);
    expect(unreadable.length).toBeGreaterThan(0);
    expect(unreadable.filter((c) => !c.why)).toEqual([]);
    // Most are ordinary and readable: the file is a guard against false denials.
    expect(unreadable.length / cases.length).toBeLessThan(0.05);
  });
});

/** Reading a policy file from disk: what is not a file is refused at once, with what to fix. */

import { execFileSync, spawn, spawnSync } from "node:child_process";
import { mkdirSync, symlinkSync, truncateSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { invalidPolicyReport, loadPolicyFile, readJsonText } from "../../src/adapters/policy-source/file.js";
import { sha256 } from "../support/policy.js";
import { BIN, childEnv, endProcess, ROOT } from "../support/process.js";
import { tempDir, whenDone } from "../support/temp.js";

const dir = tempDir("policy-file");
const deps = { env: () => undefined, sha256 };

describe("readJsonText", () => {
  it("refuses a FIFO at once, for serve, rather than waiting for a writer that never comes", async () => {
    // Before, a SIGHUP while the policy's path was a FIFO waited
    // forever, and every reload asked after it waited behind it.
    const fifo = join(dir, "policy.fifo");
    execFileSync("mkfifo", [fifo]);
    expect(await readJsonText(fifo, { filesOnly: true })).toEqual({
      ok: false,
      error: { message: `cannot read ${fifo}: it is a FIFO, not a regular file`, missing: false },
    });
  });

  it("reads a pipe to its end for a command (check <(…), /dev/stdin), at most 16 MiB of it", async () => {
    // Before, `hookgate check <(jq . policy.json)`, `replay --policy <(git show
    // main:policy.json)` and a policy piped to /dev/stdin were refused as FIFOs, read before.
    const fifo = join(dir, "piped.fifo");
    execFileSync("mkfifo", [fifo]);
    const text = '{"version":1,"rules":[]}';
    // The writer waits for a reader: stopped when the test ends, or a failed read left it waiting.
    const writer = spawn("sh", ["-c", 'printf %s "$1" > "$2"', "sh", text, fifo]);
    whenDone(() => endProcess(writer));
    const written = new Promise((resolve) => writer.once("exit", resolve));
    expect(await readJsonText(fifo)).toEqual({ ok: true, value: text });
    expect(await written).toBe(0);
    expect(await readJsonText("/dev/zero")).toEqual({
      ok: false,
      error: {
        message:
          "cannot read /dev/zero: it is more than 16777216 bytes; a JSON file here may be at most 16777216 (16 MiB)",
        missing: false,
      },
    });
  });

  it("refuses a device (/dev/zero, which never ends) for serve, and a directory, saying what each is", async () => {
    expect(await readJsonText("/dev/zero", { filesOnly: true })).toEqual({
      ok: false,
      error: { message: "cannot read /dev/zero: it is a device, not a regular file", missing: false },
    });
    const sub = join(dir, "a-directory");
    mkdirSync(sub);
    expect(await readJsonText(sub)).toEqual({
      ok: false,
      error: { message: `cannot read ${sub}: it is a directory, not a regular file`, missing: false },
    });
  });

  it("refuses a file over 16 MiB by its size, before reading it", async () => {
    // Before, `check` on a 600 MB file ran past two minutes and
    // 4.5 GB, decoding ever shorter prefixes of a text too long for a string.
    const big = join(dir, "big.json");
    writeFileSync(big, "");
    truncateSync(big, 16 * 1024 * 1024 + 1);
    expect(await readJsonText(big)).toEqual({
      ok: false,
      error: {
        message: `cannot read ${big}: it is 16777217 bytes; a JSON file here may be at most 16777216 (16 MiB)`,
        missing: false,
      },
    });
  });

  it("says a path with no file is missing by the error's code, and a command tells how to write one", async () => {
    const missing = join(dir, "not-written.json");
    expect(await readJsonText(missing)).toEqual({
      ok: false,
      error: { message: `${missing} does not exist`, missing: true },
    });
    const loaded = await loadPolicyFile(missing, deps);
    expect(loaded).toEqual({
      ok: false,
      error: [{ severity: "error", path: "$", message: `${missing} does not exist`, missingFile: true }],
    });
    // A file that cannot be read for another reason is not said to be missing.
    const denied = await loadPolicyFile(dir, deps);
    expect(denied.ok ? undefined : invalidPolicyReport(dir, denied.error)).toMatch(
      /invalid \(1 problem\)\n$/,
    );
    expect(loaded.ok ? "" : invalidPolicyReport(missing, loaded.error)).toMatch(
      /^error: \$: .*not-written\.json does not exist; a policy is a JSON file you write: .*\n.*not-written\.json: no such file\n$/,
    );
  });

  it("follows a symlink to a file, and names a loop", async () => {
    const target = join(dir, "target.json");
    writeFileSync(target, '{"version":1,"rules":[]}');
    const link = join(dir, "link.json");
    symlinkSync(target, link);
    expect((await loadPolicyFile(link, deps)).ok).toBe(true);
    symlinkSync(join(dir, "loop-b"), join(dir, "loop-a"));
    symlinkSync(join(dir, "loop-a"), join(dir, "loop-b"));
    const loop = await readJsonText(join(dir, "loop-a"));
    expect(loop.ok).toBe(false);
    expect(loop.ok ? "" : loop.error.message).toMatch(/^cannot read .*loop-a: ELOOP/);
  });

  it("names the example policy by its path from a folder below its clone, not its absolute path", () => {
    // Before, the absolute path from any folder the example is not below, where ../ is shorter.
    const said = spawnSync(process.execPath, [BIN, "check", "no-such-policy.json"], {
      cwd: join(ROOT, "test"),
      env: childEnv(),
      encoding: "utf8",
    });
    expect(said.stdout).toContain("copy the example that comes with hookgate (../examples/policy.json)");
  });

  it("says a link whose file is gone is a broken link, not a file that does not exist", async () => {
    // Before, "does not exist; a policy is a JSON file you write: copy the example…", of a path
    // that is there.
    const broken = join(dir, "broken.json");
    symlinkSync("released/policy.json", broken);
    expect(await readJsonText(broken)).toEqual({
      ok: false,
      error: {
        message: `${broken} is a broken link: it points to released/policy.json, which does not exist`,
        missing: false,
      },
    });
  });

  it("names each link of a broken chain up to the file that is gone", async () => {
    // Before, "it points to current.json, which does not exist", of a link that is there.
    mkdirSync(join(dir, "chain"));
    const current = join(dir, "chain", "current.json");
    symlinkSync("../released-2/policy.json", current);
    const policy = join(dir, "chain-policy.json");
    symlinkSync("chain/current.json", policy);
    expect(await readJsonText(policy)).toEqual({
      ok: false,
      error: {
        message: `${policy} is a broken link: it points to chain/current.json, a link to ../released-2/policy.json, which does not exist`,
        missing: false,
      },
    });
  });
});

describe("loadPolicyFile's near misses", () => {
  it("names the key another format's word for it means, which no typo distance reaches", async () => {
    // Before, `unknown key "message"` and the like, with no word of what to write.
    const file = join(dir, "other-words.json");
    const rule = {
      id: "r",
      on: "PreToolUse",
      tool: "Bash",
      when: { cwd: "/srv" },
      action: "deny",
      message: "no",
    };
    writeFileSync(file, JSON.stringify({ version: 1, rules: [rule] }));
    const loaded = await loadPolicyFile(file, deps);
    expect(loaded.ok ? [] : loaded.error.map((issue) => `${issue.path}: ${issue.message}`)).toEqual([
      '$.rules[0]: unknown keys "tool", "when", "action", "message" (did you mean "matcher" for "tool", "where" for "when", "decide" for "action", "reason" for "message"?)',
    ]);
  });
});

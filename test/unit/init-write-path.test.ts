import { readdirSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { initCommand } from "../../src/entry/init.js";
import { UsageError } from "../../src/entry/usage-error.js";
import { tempDir } from "../support/temp.js";

const io = { out: () => {}, err: () => {}, stdin: async () => new Uint8Array() };
const url = "http://127.0.0.1:8787/v1/hooks/claude-code";
const init = (write: string) =>
  initCommand(["--client", "claude-code", "--url", url, `--write=${write}`], io);

describe("init --write: a path still holding what a shell expands is refused, not made a folder", () => {
  // Run where a path written as it stands would land, a folder of the test's own.
  const home = process.cwd();
  const here = tempDir("init-write-path");
  beforeAll(() => process.chdir(here));
  afterAll(() => process.chdir(home));

  it.each([
    [
      "~root/.claude/settings.json",
      '--write ~root/.claude/settings.json starts with a "~" the shell did not expand (it expands one only at the start of a word, not after --write= or inside quotes): write --write ~root/.claude/settings.json with a space and no quotes (./~root/.claude/settings.json for a folder named ~root)',
    ],
    [
      "~\\.claude\\settings.json",
      '--write ~\\.claude\\settings.json starts with a "~" that was not expanded (cmd.exe expands none): give the settings file\'s own path, %USERPROFILE%\\.claude\\settings.json in cmd.exe or $HOME\\.claude\\settings.json in PowerShell (.\\~\\.claude\\settings.json for a folder named ~)',
    ],
    [
      "%USERPROFILE%\\.claude\\settings.json",
      "--write %USERPROFILE%\\.claude\\settings.json holds %USERPROFILE%, a variable that was not expanded (only cmd.exe expands a %NAME% (in PowerShell write $env:NAME)): give the settings file's own path",
    ],
    [
      "$HOME/.claude/settings.json",
      "--write $HOME/.claude/settings.json holds $HOME, a variable that was not expanded (no shell expands one inside single quotes, nor a program that runs none): give the settings file's own path",
    ],
    [
      `srv/\${PROJECT}/.claude/settings.json`,
      `--write srv/\${PROJECT}/.claude/settings.json holds \${PROJECT}, a variable that was not expanded (no shell expands one inside single quotes, nor a program that runs none): give the settings file's own path`,
    ],
  ])("%s", async (write, message) => {
    const refused = init(write);
    await expect(refused).rejects.toThrow(UsageError);
    await expect(refused).rejects.toThrow(message);
    expect(readdirSync(here)).toEqual([]);
  });
});

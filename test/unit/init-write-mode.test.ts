import { mkdtemp, writeFile as realWriteFile, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";

/** The mode of each file init writes, read the moment it is written (before any chmod). */
const written: { path: string; mode: number }[] = [];
vi.mock("node:fs/promises", async (importOriginal) => {
  const real = await importOriginal<typeof import("node:fs/promises")>();
  return {
    ...real,
    writeFile: async (...args: Parameters<typeof real.writeFile>) => {
      await real.writeFile(...args);
      const path = String(args[0]);
      written.push({ path, mode: (await real.stat(path)).mode & 0o777 });
    },
  };
});

const { initCommand } = await import("../../src/entry/init.js");

const folders: string[] = [];
afterEach(async () => {
  written.length = 0;
  await Promise.all(folders.splice(0).map((folder) => rm(folder, { recursive: true, force: true })));
});

const io = { out: () => {}, err: () => {}, stdin: async () => new Uint8Array() };
const url = "http://127.0.0.1:8787/v1/hooks/claude-code";

describe("init --write: the file it puts in place", () => {
  it("is never readable by others while it is written, when the settings file is private", async () => {
    const folder = await mkdtemp(join(tmpdir(), "hookgate-init-mode-"));
    folders.push(folder);
    const settings = join(folder, "settings.json");
    await realWriteFile(settings, '{"permissions": {}}\n', { mode: 0o600 });
    written.length = 0;
    expect(await initCommand(["--client", "claude-code", "--url", url, "--write", settings], io)).toBe(0);
    const temporary = written.find((file) => file.path.endsWith(".tmp"));
    expect(temporary).toBeDefined();
    expect((temporary?.mode ?? 0o777) & 0o077).toBe(0);
    expect((await stat(settings)).mode & 0o777).toBe(0o600);
  });

  it("keeps a new settings file's mode as the umask makes it", async () => {
    const folder = await mkdtemp(join(tmpdir(), "hookgate-init-mode-"));
    folders.push(folder);
    const settings = join(folder, "settings.json");
    const mask = process.umask();
    expect(await initCommand(["--client", "claude-code", "--url", url, "--write", settings], io)).toBe(0);
    expect((await stat(settings)).mode & 0o777).toBe(0o666 & ~mask);
  });
});

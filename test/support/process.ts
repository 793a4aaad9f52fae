import { type ChildProcess, spawn } from "node:child_process";
import { tmpdir } from "node:os";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { tempDir, whenDone } from "./temp.js";

export const ROOT = fileURLToPath(new URL("../../", import.meta.url));
export const BIN = fileURLToPath(new URL("../../dist/entry/bin.js", import.meta.url));

export interface ServerProcess {
  url: string;
  dataDir: string;
  child: ChildProcess;
  /** Every JSON log line the server has printed so far. */
  lines: Record<string, unknown>[];
  /** Everything printed on stdout and stderr so far, as received. */
  output(): { stdout: string; stderr: string };
  waitForLine(
    predicate: (line: Record<string, unknown>) => boolean,
    timeoutMs?: number,
  ): Promise<Record<string, unknown>>;
  stop(): Promise<number | null>;
}

/**
 * The environment of a process a test starts: PATH, and TMPDIR so that what it makes there lands
 * in the run's own temporary directory (test/support/run-tmpdir.ts), where a leftover is seen.
 */
export function childEnv(env: Record<string, string> = {}): Record<string, string> {
  return { PATH: process.env.PATH ?? "", TMPDIR: tmpdir(), ...env };
}

/**
 * Starts `hookgate serve` as a real process on a free loopback port, with its own data dir. It is
 * stopped when the test that started it ends (or its file's tests, if started outside a test),
 * before its data dir is removed.
 */
export async function startServerProcess(
  policyPath: string,
  env: Record<string, string> = {},
  dataDir = tempDir("data"),
): Promise<ServerProcess> {
  const child = spawn(
    process.execPath,
    [BIN, "serve", "--policy", policyPath, "--host", "127.0.0.1", "--port", "0", "--data-dir", dataDir],
    {
      cwd: ROOT,
      env: childEnv(env),
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  const lines: Record<string, unknown>[] = [];
  const waiters = new Set<() => void>();
  let stderr = "";
  let stdout = "";
  child.stderr?.on("data", (chunk) => {
    stderr += chunk;
  });
  child.stdout?.on("data", (chunk) => {
    stdout += chunk;
  });
  createInterface({ input: child.stdout as NodeJS.ReadableStream }).on("line", (line) => {
    try {
      lines.push(JSON.parse(line));
    } catch {
      lines.push({ raw: line });
    }
    for (const wake of waiters) wake();
  });
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  whenDone(() => endProcess(child));

  const waitForLine = (predicate: (line: Record<string, unknown>) => boolean, timeoutMs = 10_000) =>
    new Promise<Record<string, unknown>>((resolve, reject) => {
      const check = () => {
        const found = lines.find(predicate);
        if (found) {
          waiters.delete(check);
          clearTimeout(timer);
          resolve(found);
        }
      };
      const timer = setTimeout(() => {
        waiters.delete(check);
        // What it did log, so that a failure says where it stopped: the last lines' messages.
        const logged = lines.slice(-15).map((l) => String(l.msg ?? l.raw ?? JSON.stringify(l)).slice(0, 160));
        reject(
          new Error(
            `no matching log line in ${timeoutMs} ms; its last lines: ${JSON.stringify(logged)}; stderr: ${stderr}`,
          ),
        );
      }, timeoutMs);
      waiters.add(check);
      void exited.then(() => {
        if (waiters.has(check)) {
          waiters.delete(check);
          clearTimeout(timer);
          reject(new Error(`server exited; stderr: ${stderr}`));
        }
      });
      check();
    });

  const listening = await waitForLine((l) => l.msg === "hookgate listening");
  return {
    url: String(listening.url),
    dataDir,
    child,
    lines,
    output: () => ({ stdout, stderr }),
    waitForLine,
    stop: async () => {
      if (child.exitCode === null) child.kill("SIGTERM");
      return exited;
    },
  };
}

/**
 * Ends a process a test started and resolves once it has exited: SIGTERM, then SIGKILL if it is
 * still running 10 s later (a gateway that no longer hears SIGTERM), so that its directory is
 * removed only after it (test/support/temp.ts), however the test ended.
 */
export async function endProcess(child: ChildProcess): Promise<void> {
  if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once("exit", resolve));
  child.kill("SIGTERM");
  const timer = setTimeout(() => child.kill("SIGKILL"), 10_000);
  await exited;
  clearTimeout(timer);
}

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs the built `hookgate` command with optional stdin. A command still running after
 * `killAfterMs` is killed (code null), and one still running when the test that ran it ends is
 * stopped then (test/support/temp.ts), so a test that expected it to exit never leaves it behind.
 * A test that failed before it ended left it running, and a test file ends sooner than 60 s:
 * a `replay` waiting on a FIFO the failed test never opened, its path then removed, ran on.
 */
export function runCli(
  args: string[],
  stdin: string | Uint8Array = "",
  env: Record<string, string> = {},
  killAfterMs = 60_000,
): Promise<CliResult> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [BIN, ...args], { cwd: ROOT, env: childEnv(env) });
    whenDone(() => endProcess(child));
    const timer = setTimeout(() => child.kill("SIGKILL"), killAfterMs);
    child.on("exit", () => clearTimeout(timer));
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (c) => {
      stdout += c;
    });
    child.stderr.on("data", (c) => {
      stderr += c;
    });
    child.on("exit", (code) => resolve({ code, stdout, stderr }));
    // A command that ends before it reads its input (a usage error, `send` refusing its --url)
    // closes the pipe: the write's EPIPE says nothing about the command's result.
    child.stdin.on("error", () => {});
    child.stdin.end(stdin);
  });
}

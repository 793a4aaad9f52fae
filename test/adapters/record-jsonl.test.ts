/**
 * The `--record` file (src/adapters/record/jsonl.ts) against a FIFO that nobody reads for a while,
 * standing in for a hung network mount: the records waiting in memory stay under the limit, the
 * ones past it are dropped and counted, and every record not counted as dropped reaches the file
 * once it is read again.
 */
import { execFileSync } from "node:child_process";
import { closeSync, constants, openSync, readFileSync, readSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { createJsonlRecorder } from "../../src/adapters/record/jsonl.js";
import type { ReplayRecord } from "../../src/app/handle-hook.js";
import { tempDir } from "../support/temp.js";

describe("the record file", () => {
  it("escapes what JSON leaves raw and a terminal acts on, as a log line does, and reads back as recorded", async () => {
    const path = join(tempDir("record"), "records.jsonl");
    const recorder = createJsonlRecorder(path, { log: () => undefined });
    const record = { event: { session_id: "s\u009b2A\u2028\u202ex\u007f" } } as unknown as ReplayRecord;
    recorder.record(record);
    await recorder.close();
    const text = readFileSync(path, "utf8");
    expect(text).toBe('{"event":{"session_id":"s\\u009b2A\\u2028\\u202ex\\u007f"}}\n');
    expect(JSON.parse(text)).toEqual(record);
  });

  it("says that a file's folder does not exist, since it makes the file but never its folder", () => {
    const dir = tempDir("record");
    const path = join(dir, "records", "traffic.jsonl");
    expect(() => createJsonlRecorder(path, { log: () => undefined })).toThrow(
      `cannot record to ${path} (ENOENT: no such file or directory, open '${path}'); its folder ${join(dir, "records")} does not exist: make it first, or pass --record with a file in a folder that does`,
    );
  });

  it("drops records past its limit while the file takes none, says how many, and loses no other", async () => {
    const dir = tempDir("record");
    const fifo = join(dir, "records.jsonl");
    execFileSync("mkfifo", [fifo]);
    // A reader that reads nothing yet: the recorder's writes fill the pipe, then wait in memory.
    const reader = openSync(fifo, constants.O_RDONLY | constants.O_NONBLOCK);
    const logs: { level: string; message: string; fields: Record<string, unknown> }[] = [];
    const logger = {
      log: (level: string, message: string, fields = {}) => logs.push({ level, message, fields }),
    };
    const limit = 256 * 1024;
    const recorder = createJsonlRecorder(fifo, logger, { limitBytes: limit });
    const record = { body: "x".repeat(1000) } as unknown as ReplayRecord;
    const line = Buffer.byteLength(`${JSON.stringify(record)}\n`);
    let sent = 0;
    for (; sent < 2000; sent += 1) recorder.record(record); // 2 MB: the pipe's 64 KiB and the limit, many times
    const warned = logs.filter((l) => l.level === "warn");
    expect(warned).toHaveLength(1);
    expect(warned[0]?.message).toMatch(/not taking records; they are dropped/);
    expect(warned[0]?.fields.waitingBytes).toBeGreaterThan(limit);
    expect(warned[0]?.fields.waitingBytes).toBeLessThanOrEqual(limit + line);

    // Read again; one more record at a time until the recorder takes them again.
    let read = 0;
    const chunk = Buffer.alloc(1 << 16);
    const drain = () => {
      for (;;) {
        try {
          const n = readSync(reader, chunk, 0, chunk.length, null);
          if (n <= 0) return;
          read += n;
        } catch (e) {
          if ((e as NodeJS.ErrnoException).code === "EAGAIN") return;
          throw e;
        }
      }
    };
    const resumed = () => logs.find((l) => l.level === "info" && /takes records again/.test(l.message));
    for (let tries = 0; resumed() === undefined && tries < 500; tries += 1) {
      drain();
      await new Promise((resolve) => setTimeout(resolve, 10));
      recorder.record(record);
      sent += 1;
    }
    const dropped = resumed()?.fields.dropped as number;
    expect(dropped).toBeGreaterThan(0);
    const closed = recorder.close();
    let done = false;
    void closed.then(() => {
      done = true;
    });
    while (!done) {
      drain();
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    drain();
    closeSync(reader);
    expect(read).toBe((sent - dropped) * line);
  });

  it("says how many records it dropped when it is closed before it takes records again", async () => {
    const dir = tempDir("record");
    const fifo = join(dir, "records.jsonl");
    execFileSync("mkfifo", [fifo]);
    const reader = openSync(fifo, constants.O_RDONLY | constants.O_NONBLOCK);
    const logs: { level: string; message: string; fields: Record<string, unknown> }[] = [];
    const logger = {
      log: (level: string, message: string, fields = {}) => logs.push({ level, message, fields }),
    };
    const recorder = createJsonlRecorder(fifo, logger, { limitBytes: 256 * 1024 });
    const record = { body: "x".repeat(1000) } as unknown as ReplayRecord;
    const line = Buffer.byteLength(`${JSON.stringify(record)}\n`);
    const sent = 2000;
    for (let i = 0; i < sent; i += 1) recorder.record(record);
    // Stopped while it drops: the file takes what waits, and no record comes after to say the count.
    let read = 0;
    const chunk = Buffer.alloc(1 << 16);
    const drain = () => {
      for (;;) {
        try {
          const n = readSync(reader, chunk, 0, chunk.length, null);
          if (n <= 0) return;
          read += n;
        } catch (e) {
          if ((e as NodeJS.ErrnoException).code === "EAGAIN") return;
          throw e;
        }
      }
    };
    let done = false;
    void recorder.close().then(() => {
      done = true;
    });
    while (!done) {
      drain();
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    drain();
    closeSync(reader);
    const counted = logs.find((l) => l.fields.dropped !== undefined);
    expect(counted?.fields.dropped).toBe(sent - read / line);
  });
});

/**
 * guardStream on real sockets: a reader that stops reading, then reads again, and one that goes
 * away. The stream is a real net.Socket (as process.stdout is on a pipe), its peer a real socket.
 */
import { once } from "node:events";
import { closeSync, openSync } from "node:fs";
import { createServer, type Server, type Socket } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { fileLines, guardStream } from "../../src/adapters/log/guarded-stream.js";

const servers: Server[] = [];
afterEach(() => {
  for (const server of servers.splice(0)) server.close();
});

/** A connected pair: `writer` is what the guard writes to, `reader` its peer, paused at first. */
async function socketPair(): Promise<{ writer: Socket; reader: Socket }> {
  const server = createServer();
  servers.push(server);
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const accepted = once(server, "connection");
  const { port } = server.address() as { port: number };
  const { connect } = await import("node:net");
  const writer = connect(port, "127.0.0.1");
  await once(writer, "connect");
  const [reader] = (await accepted) as [Socket];
  reader.pause();
  return { writer, reader };
}

const line = (n: number) => `${JSON.stringify({ n, pad: "x".repeat(1000) })}\n`;
const turn = () => new Promise((resolve) => setImmediate(resolve));

describe("guardStream", () => {
  it("drops and counts lines past the limit while the reader is stalled, and says so when it starts and ends", async () => {
    const { writer, reader } = await socketPair();
    const said: string[] = [];
    const limit = 1024 * 1024;
    const guard = guardStream(writer, (m) => said.push(m), limit);
    // Far more than the kernel's socket buffers (a few MB on loopback) and the limit together.
    const total = 20_000;
    for (let i = 0; i < total; i++) guard.write(line(i));
    expect(guard.backlogBytes()).toBeGreaterThanOrEqual(limit);
    expect(guard.backlogBytes()).toBeLessThan(limit + 2000); // one line past it at most
    const dropped = guard.dropped();
    expect(dropped).toBeGreaterThan(0);
    expect(said).toHaveLength(1);
    expect(said[0]).toMatch(
      /^stdout is not being read \(\d+ KiB of log lines wait to be written\); log lines are dropped until it is/,
    );

    // The reader reads again: what was written arrives whole and in order, then the guard says
    // how many were dropped, and writes again.
    const received: Buffer[] = [];
    reader.on("data", (chunk: Buffer) => received.push(chunk));
    reader.resume();
    await once(writer, "drain");
    await turn();
    expect(said[1]).toBe(`stdout is read again; ${dropped} log lines were dropped meanwhile`);
    guard.write(line(-1));
    const last = line(-1);
    for (let i = 0; i < 500 && !Buffer.concat(received).toString().endsWith(last); i++)
      await new Promise((resolve) => setTimeout(resolve, 10));
    const lines = Buffer.concat(received).toString().trimEnd().split("\n");
    expect(lines).toHaveLength(total - dropped + 1);
    const ns = lines.map((l) => (JSON.parse(l) as { n: number }).n);
    expect(ns.slice(0, -1)).toEqual([...Array(total - dropped).keys()]);
    expect(ns.at(-1)).toBe(-1);
    expect(guard.dropped()).toBe(dropped);
    writer.destroy();
    reader.destroy();
  });

  it("drops every line once a write fails, saying so once, and never throws", async () => {
    const { writer, reader } = await socketPair();
    const said: string[] = [];
    const guard = guardStream(writer, (m) => said.push(m));
    reader.destroy();
    writer.destroy(Object.assign(new Error("write EPIPE"), { code: "EPIPE" }));
    await turn();
    guard.write(line(1));
    guard.write(`${line(2)}${line(3)}`);
    expect(said).toEqual(["writing to stdout failed (write EPIPE); log lines are dropped from now on"]);
    expect(guard.dropped()).toBe(3);
  });

  it("counts the lines still waiting in the stream when it fails, which are lost with it", async () => {
    // A pipe whose reader went away (`serve | head`, a log shipper killed) fails the writes it
    // holds: up to the 16 MiB limit of lines, lost without a count while the counter said 0.
    const { writer, reader } = await socketPair();
    const said: string[] = [];
    const guard = guardStream(writer, (m) => said.push(m));
    let n = 0;
    while (writer.writableLength < 200_000) guard.write(line(n++));
    const waiting = writer.writableLength;
    expect(guard.dropped()).toBe(0);
    const closed = new Promise((resolve) => writer.once("close", resolve));
    reader.destroy();
    writer.destroy(Object.assign(new Error("write EPIPE"), { code: "EPIPE" }));
    await closed;
    await turn();
    expect(said).toEqual(["writing to stdout failed (write EPIPE); log lines are dropped from now on"]);
    // The lines the waiting bytes make, but for the one the system was writing when it failed
    // (its callback is not told).
    const lost = Math.floor(waiting / line(n).length) - 1;
    expect(guard.dropped()).toBeGreaterThanOrEqual(lost);
    expect(guard.dropped()).toBeLessThanOrEqual(n);
    guard.write(line(n));
    expect(guard.dropped()).toBeGreaterThanOrEqual(lost + 1);
  });

  it.each([
    ["a full disk", "ENOSPC", "ENOSPC: no space left on device, write"],
    // A file size limit (ulimit -f, systemd's LimitFSIZE=): the file has room again once a
    // logrotate copytruncate empties it. Taken for a failed stream, the log stayed silent.
    ["a file at the size limit", "EFBIG", "EFBIG: file too large, write"],
  ])(
    "drops lines while a write finds no room (%s), says so, and writes again once one succeeds",
    (_, code, message) => {
      let room = false;
      const written: string[] = [];
      const noRoom = Object.assign(new Error(message), { code });
      const file = {
        write(text: string) {
          if (!room) throw noRoom;
          written.push(text);
        },
        writableLength: 0,
        on: () => undefined,
      };
      const said: string[] = [];
      const guard = guardStream(file, (m) => said.push(m));
      guard.write(line(1));
      guard.write(`${line(2)}${line(3)}`);
      expect(guard.dropped()).toBe(3);
      expect(said).toEqual([
        `writing to stdout failed (${message}); log lines are dropped until it has room, and counted in hookgate_log_lines_dropped_total`,
      ]);
      // The disk has room again: the next line is written, and the guard says what was lost.
      room = true;
      guard.write(line(4));
      expect(written).toEqual([line(4)]);
      expect(said[1]).toBe("stdout has room again; 3 log lines were dropped meanwhile");
      guard.write(line(5));
      expect(written).toEqual([line(4), line(5)]);
      expect(said).toHaveLength(2);
      expect(guard.dropped()).toBe(3);
    },
  );
});

describe("fileLines", () => {
  it("ends a line a filling disk cut short before the next write, which would run on from it", () => {
    let room = 10; // bytes the disk still takes
    const file: Buffer[] = [];
    const write = (_fd: number, bytes: Buffer, offset: number) => {
      if (room === 0)
        throw Object.assign(new Error("ENOSPC: no space left on device, write"), { code: "ENOSPC" });
      const taken = bytes.subarray(offset, offset + Math.min(room, bytes.length - offset));
      room -= taken.length;
      file.push(Buffer.from(taken));
      return taken.length;
    };
    const said: string[] = [];
    const guard = guardStream(fileLines(-1, write), (m) => said.push(m));
    guard.write(`${line(1)}${line(2)}`);
    expect(guard.dropped()).toBe(2);
    room = 100_000; // the disk freed
    guard.write(line(3));
    const lines = Buffer.concat(file).toString().split("\n");
    // The cut line stands alone (counted as dropped), and the next one is whole.
    expect(lines).toEqual([line(1).slice(0, 10), line(3).trimEnd(), ""]);
    guard.write(line(4));
    expect(
      Buffer.concat(file)
        .toString()
        .endsWith(`${line(3)}${line(4)}`),
    ).toBe(true);
  });

  it("throws a write that finds no room to its caller, for the guard to judge", () => {
    const fd = openSync("/dev/full", "w");
    try {
      expect(() => fileLines(fd).write("x\n")).toThrow(expect.objectContaining({ code: "ENOSPC" }));
    } finally {
      closeSync(fd);
    }
  });
});

import { describe, expect, it } from "vitest";
import { batchLines, createJsonLogger } from "../../src/adapters/log/json-lines.js";

/** A stream that keeps each write, and a defer that runs tasks only when told. */
function harness() {
  const writes: string[] = [];
  const tasks: (() => void)[] = [];
  const sink = batchLines({ write: (text: string) => writes.push(text) }, (task) => tasks.push(task));
  const endOfTurn = () => {
    for (const task of tasks.splice(0)) task();
  };
  return { writes, sink, endOfTurn, tasks };
}

describe("batchLines", () => {
  it("writes the lines of one turn in one write, in order, at the end of the turn", () => {
    const { writes, sink, endOfTurn, tasks } = harness();
    sink.write("a\n");
    sink.write("b\n");
    sink.write("c\n");
    expect(writes).toEqual([]);
    expect(tasks).toHaveLength(1);
    endOfTurn();
    expect(writes).toEqual(["a\nb\nc\n"]);
    sink.write("d\n");
    endOfTurn();
    expect(writes).toEqual(["a\nb\nc\n", "d\n"]);
  });

  it("writes at once when a batch grows past 64 KiB, and flush writes what is left", () => {
    const { writes, sink } = harness();
    const line = `${"x".repeat(1023)}\n`;
    for (let i = 0; i < 64; i++) sink.write(line);
    expect(writes).toHaveLength(1);
    expect(writes[0]).toHaveLength(64 * 1024);
    sink.write("tail\n");
    sink.flush();
    expect(writes).toEqual([line.repeat(64), "tail\n"]);
    sink.flush();
    expect(writes).toHaveLength(2);
  });

  it("carries whole JSON lines from the logger", () => {
    const { writes, sink, endOfTurn } = harness();
    const logger = createJsonLogger(sink, "info", () => 0);
    logger.log("info", "decision", { decisionId: "d1" });
    logger.log("debug", "dropped");
    logger.log("error", "oops", { error: "x" });
    endOfTurn();
    const lines = writes
      .join("")
      .trimEnd()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(lines).toEqual([
      { time: "1970-01-01T00:00:00.000Z", level: "info", msg: "decision", decisionId: "d1" },
      { time: "1970-01-01T00:00:00.000Z", level: "error", msg: "oops", error: "x" },
    ]);
  });
});

/**
 * The hold of notify jobs the intake journal could not take, over a real journal in a temporary
 * directory: the journal's directory swapped for a file makes each append fail as a full disk does.
 */
import { renameSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { openJournalReader, openJournalWriter } from "../../src/adapters/queue/journal.js";
import { createJournalHold } from "../../src/adapters/queue/journal-hold.js";
import type { OutgoingMessage } from "../../src/core/queue.js";
import { tempDir } from "../support/temp.js";

const job = (id: string): OutgoingMessage<{ text: string }> => ({ id, body: { text: "x".repeat(100) } });

/** Every job id the journal holds, in the order a reader takes them in. */
async function journaled(dir: string): Promise<string[]> {
  const ids: string[] = [];
  const reader = openJournalReader(dir, {
    position: undefined,
    intake: async (rows) => {
      ids.push(...rows.map((r) => r.id));
    },
  });
  await reader.drain();
  reader.close();
  return ids;
}

describe("the journal hold", () => {
  it("holds sends while the journal fails, refuses the newest past its bound, and writes the held ones first, in order", async () => {
    const dir = join(tempDir("journal-hold"), "intake");
    // A segment per append: each one opens a new file, which fails while the directory is a file.
    const writer = openJournalWriter(dir, 1);
    // Each job is 129 bytes of JSON: the bound takes four, not five.
    const hold = createJournalHold<{ text: string }>((m) => writer.append(m), 520);
    expect(hold.send([job("a")])).toBeUndefined();
    renameSync(dir, `${dir}.aside`);
    writeFileSync(dir, "");
    expect(hold.send([job("b1"), job("b2")])).toMatchObject({ error: expect.any(Error) });
    expect(hold.send([job("c")])).toEqual({ error: undefined });
    expect(hold.size()).toMatchObject({ sends: 2, jobs: 3 });
    expect(() => hold.send([job("d1"), job("d2")])).toThrow(
      /would pass the 520 bytes serve holds at most: the event is dropped/,
    );
    expect(hold.retry()).toBe(0);
    expect(hold.size()).toMatchObject({ sends: 2, jobs: 3 });

    rmSync(dir);
    renameSync(`${dir}.aside`, dir);
    // A send while some are held waits behind them, even though the journal takes it now.
    expect(hold.send([job("e")])).toEqual({ error: undefined });
    expect(hold.retry()).toBe(3);
    expect(hold.size()).toEqual({ sends: 0, jobs: 0, bytes: 0 });
    expect(hold.send([job("f")])).toBeUndefined();
    writer.close();
    expect(await journaled(dir)).toEqual(["a", "b1", "b2", "c", "e", "f"]);
  });

  it("once closed, holds nothing more: a send the journal takes is written once, one it refuses throws", async () => {
    const dir = join(tempDir("journal-hold"), "intake");
    const writer = openJournalWriter(dir, 1);
    const hold = createJournalHold<{ text: string }>((m) => writer.append(m));
    expect(hold.send([job("first")])).toBeUndefined();
    renameSync(dir, `${dir}.aside`);
    writeFileSync(dir, "");
    expect(hold.send([job("a")])).toMatchObject({ error: expect.any(Error) });
    hold.close();
    expect(() => hold.send([job("b")])).toThrow();
    rmSync(dir);
    renameSync(`${dir}.aside`, dir);
    // Written, not also held: held, it would be written again by a retry, and told lost besides.
    expect(hold.send([job("c")])).toBeUndefined();
    expect(hold.held().map((m) => m.map((j) => j.id))).toEqual([["a"]]);
    writer.close();
    expect(await journaled(dir)).toEqual(["first", "c"]);
  });
});

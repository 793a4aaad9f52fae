import { statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { makeDirectory } from "../../src/entry/make-directory.js";
import { tempDir } from "../support/temp.js";

describe("makeDirectory", () => {
  it("makes every missing level, and is content with a directory that exists", () => {
    const root = tempDir("mkdir");
    const dir = join(root, "a", "b", "c");
    makeDirectory(dir);
    expect(statSync(dir).isDirectory()).toBe(true);
    expect(() => makeDirectory(dir)).not.toThrow();
  });

  it("makes a path with `..` through a directory it makes, as Node's recursive mkdir did", () => {
    // Before, the retry after making `new` took `new/..` for a new directory: EEXIST.
    const root = tempDir("mkdir");
    makeDirectory(`${root}/new/../d`);
    expect(statSync(join(root, "d")).isDirectory()).toBe(true);
  });

  it("refuses a file in the directory's place, as mkdir -p does", () => {
    const file = join(tempDir("mkdir"), "data");
    writeFileSync(file, "");
    expect(() => makeDirectory(file)).toThrow(/EEXIST/);
    expect(() => makeDirectory(join(file, "below"))).toThrow(/ENOTDIR/);
  });
});

/**
 * The output folder of a bundle build (build-worker.mjs, build-lambda.mjs), emptied before each
 * build. Only a folder the build can own is emptied: the script's default one, a folder that does
 * not exist yet or is empty, or one an earlier build of the same script wrote (it holds that
 * build's `ownFile`). Any other `--outdir` (a home folder, `/`, a folder of the user's files given
 * by mistake) is refused with the folder named, and nothing in it is touched; so is the repository
 * or a folder holding it.
 */
import { mkdirSync, readdirSync, rmSync } from "node:fs";
import { isAbsolute, relative } from "node:path";

/**
 * Empties `outdir` (absolute), or returns why it may not: `root` is the repository, `defaultDir`
 * the script's own output folder, `ownFile` a file each of its builds writes at the folder's top.
 */
export function emptyOutDir(outdir, root, defaultDir, ownFile) {
  const toRoot = relative(outdir, root);
  if (toRoot === "" || (!toRoot.startsWith("..") && !isAbsolute(toRoot))) {
    return `--outdir ${outdir} would delete ${root}: give a folder outside it, or leave --outdir out`;
  }
  if (outdir !== defaultDir) {
    let entries = [];
    try {
      entries = readdirSync(outdir);
    } catch (e) {
      if (e.code !== "ENOENT")
        return `--outdir ${outdir} cannot be used (${e.message}): give a new or empty folder`;
    }
    if (entries.length > 0 && !entries.includes(ownFile)) {
      const some = `${entries.slice(0, 3).join(", ")}${entries.length > 3 ? ", …" : ""}`;
      return `--outdir ${outdir} holds files no build of it wrote (${some}), and the build empties its folder first: give a new or empty folder`;
    }
  }
  rmSync(outdir, { recursive: true, force: true });
  mkdirSync(outdir, { recursive: true });
  return undefined;
}

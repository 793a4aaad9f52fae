#!/usr/bin/env node
/** The `hookgate` executable: runs the CLI and exits with its code. */
import { main } from "./cli.js";

main(process.argv.slice(2)).then((code) => {
  process.exitCode = code;
});

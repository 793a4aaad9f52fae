/**
 * A setup file of the node test project: after a file's last test (and its own afterAll hooks,
 * which vitest runs before this one, registered first), the directories and processes it made
 * outside any test are cleaned up (test/support/temp.ts).
 */
import { afterAll } from "vitest";
import { runFileCleanups } from "./temp.js";

afterAll(runFileCleanups);

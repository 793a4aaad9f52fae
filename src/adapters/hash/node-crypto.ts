/** The Sha256 port on Node: node:crypto is synchronous and several times faster than subtle. */
import { createHash } from "node:crypto";
import type { Sha256 } from "../../core/ports.js";

export const nodeSha256: Sha256 = async (text) => createHash("sha256").update(text, "utf8").digest("hex");

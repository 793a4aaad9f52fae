/** The Sha256 port on Workers (and any runtime with WebCrypto): `crypto.subtle.digest`, hex-encoded. */
import type { Sha256 } from "../../core/ports.js";

const HEX = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, "0"));

export const webCryptoSha256: Sha256 = async (text) => {
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text)));
  let hex = "";
  for (const byte of digest) hex += HEX[byte];
  return hex;
};

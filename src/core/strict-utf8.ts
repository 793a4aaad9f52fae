/** One decoder for every caller: a whole decode() (no `stream`) keeps no state between calls. */
const STRICT_UTF8 = new TextDecoder("utf-8", { fatal: true });

/**
 * The UTF-8 text of bytes, or undefined where they spell none (no U+FFFD in place of a bad
 * byte): a hook body, a policy file, a token's bytes. Rethrows anything else (V8's plain Error
 * for bytes too long for one string).
 */
export function strictUtf8(bytes: Uint8Array): string | undefined {
  try {
    return STRICT_UTF8.decode(bytes);
  } catch (e) {
    if (e instanceof TypeError) return undefined;
    throw e;
  }
}

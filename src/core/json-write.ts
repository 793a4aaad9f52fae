/**
 * An object or array written out as JSON, or undefined for one nested deeper than JSON.stringify
 * can write: JSON.parse reads a remote server's 100,000 levels of `[`, but the writer recurses,
 * and its RangeError would turn the server's answer into an INTERNAL_ERROR that no longer says
 * what the server answered.
 */
export function writeJson(value: object): string | undefined {
  try {
    return JSON.stringify(value);
  } catch {
    return undefined;
  }
}

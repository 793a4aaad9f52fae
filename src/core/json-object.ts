/** A parsed JSON value that is an object: not null, not an array. */
export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * Sets `key` on a copy as its own, "__proto__" too (an MCP tool's argument may be so named):
 * assigned, that key set the copy's prototype, so it was dropped from what is logged and sent,
 * and its members read as the copy's own (a `command` shown that the call had not). A plain
 * assignment otherwise, which costs less than building the copy with `Object.fromEntries`: this
 * runs on every decision's audit line, and on every key of a value cut to fit.
 */
export function setOwnKey(out: Record<string, unknown>, key: string, item: unknown): void {
  if (key === "__proto__")
    Object.defineProperty(out, key, { value: item, enumerable: true, writable: true, configurable: true });
  else out[key] = item;
}

/** Objects built as JSON.parse builds them, for the property tests' JSON values. */

/** Each entry an own enumerable property: a `__proto__` key is the object's own, as JSON.parse makes it. */
export function objectOf(entries: [string, unknown][]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of entries)
    Object.defineProperty(out, k, { value: v, enumerable: true, writable: true, configurable: true });
  return out;
}

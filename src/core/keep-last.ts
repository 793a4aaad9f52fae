/**
 * `compute` with its answer for the last key kept. A policy's rules read the same field of one
 * event one after another (a Bash command split, a URL's host, a path normalized), each a pure
 * function of the text, so a one-entry memo is exact and costs nothing when the key changes. An
 * undefined answer is not kept.
 */
export function keepLast<T>(compute: (key: string) => T): (key: string) => T {
  let lastKey: string | undefined;
  let lastValue: T | undefined;
  return (key) => {
    if (key !== lastKey || lastValue === undefined) {
      lastValue = compute(key);
      lastKey = key;
    }
    return lastValue as T;
  };
}

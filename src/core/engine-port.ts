/**
 * An engine a size-bound bundle leaves out of the code every cold start evaluates
 * (scripts/lazy-engines.mjs): the regex engine (regex.ts), the path-glob engine (path-glob.ts) and
 * the Bash splitter (shell.ts). Elsewhere it is there from the start; there, a compile that asks
 * for it finds none and marks it wanted, and an entry loads it (pattern-engines.ts) and compiles
 * the policy again.
 */
export interface EnginePort<E> {
  /** The engine; undefined where none is loaded, which marks it wanted. */
  want(): E | undefined;
  /** The engine, without marking it wanted. */
  current(): E | undefined;
  register(engine: E): void;
  /** True once `want` found no engine, until one is registered: the loader's cue. */
  isWanted(): boolean;
}

/** A port whose engine is `bundled`, undefined only in bundles built without it. */
export function enginePort<E>(bundled: E | undefined): EnginePort<E> {
  let engine = bundled;
  let wanted = false;
  return {
    want() {
      if (engine === undefined) wanted = true;
      return engine;
    },
    current: () => engine,
    register(registered) {
      engine = registered;
    },
    isWanted: () => wanted && engine === undefined,
  };
}

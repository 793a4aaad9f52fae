/**
 * Message ids a long-running consumer remembers, each with what was done to it, at most
 * `MAX_REMEMBERED_IDS`: one more forgets the one remembered first. For messages settled whose
 * delete then failed (SQS), so that one coming back is not delivered again; bounded, so that a
 * consumer running for months does not grow with them.
 */
export const MAX_REMEMBERED_IDS = 1_000;

export class RememberedIds<V> {
  readonly #done = new Map<string, V>();

  get(id: string): V | undefined {
    return this.#done.get(id);
  }

  remember(id: string, done: V): void {
    this.#done.set(id, done);
    if (this.#done.size > MAX_REMEMBERED_IDS) this.#done.delete(this.#done.keys().next().value as string);
  }

  forget(id: string): void {
    this.#done.delete(id);
  }
}

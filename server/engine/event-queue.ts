/**
 * A push-to-pull bridge: callbacks push events, a consumer iterates them. Returning from the
 * iteration (a consumer that goes away) runs `onReturn`, e.g. to unsubscribe; the producer is
 * not affected.
 * @module
 */
export class EventQueue<T> implements AsyncIterableIterator<T> {
  readonly #items: T[] = [];
  #wake: (() => void) | null = null;
  #ended = false;
  #failure: unknown = undefined;
  onReturn: () => void = () => {};

  /** Items waiting to be read. */
  get pending(): number {
    return this.#items.length;
  }

  push(item: T): void {
    if (this.#ended) return;
    this.#items.push(item);
    this.#wake?.();
  }

  end(): void {
    this.#ended = true;
    this.#wake?.();
  }

  /** Ends the iteration with `error` (thrown by next() once the queued items are read). */
  fail(error: unknown): void {
    this.#failure = error;
    this.end();
  }

  async next(): Promise<IteratorResult<T>> {
    for (;;) {
      if (this.#items.length) return { value: this.#items.shift()!, done: false };
      if (this.#ended) {
        this.onReturn();
        if (this.#failure !== undefined) throw this.#failure;
        return { value: undefined, done: true };
      }
      await new Promise<void>((resolve) => (this.#wake = resolve));
      this.#wake = null;
    }
  }

  async return(): Promise<IteratorResult<T>> {
    this.#ended = true;
    this.#items.length = 0;
    this.onReturn();
    return { value: undefined, done: true };
  }

  [Symbol.asyncIterator](): AsyncIterableIterator<T> {
    return this;
  }
}

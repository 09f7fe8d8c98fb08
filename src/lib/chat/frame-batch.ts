/**
 * Collects items and hands them over at most once per animation frame: a fast token stream then
 * costs one state update and one render per frame, not one per token.
 * @module
 */

/** `requestAnimationFrame` in the browser, a 16 ms timer elsewhere. */
export const nextFrame = (fn: () => void): void => {
  if (typeof requestAnimationFrame === 'function') requestAnimationFrame(() => fn());
  else setTimeout(fn, 16);
};

export class FrameBatch<T> {
  #items: T[] = [];
  #scheduled = false;
  readonly #apply: (items: T[]) => void;
  readonly #schedule: (fn: () => void) => void;

  constructor(apply: (items: T[]) => void, schedule: (fn: () => void) => void = nextFrame) {
    this.#apply = apply;
    this.#schedule = schedule;
  }

  push(item: T): void {
    this.#items.push(item);
    if (this.#scheduled) return;
    this.#scheduled = true;
    this.#schedule(() => this.flush());
  }

  /** Applies what is waiting now (before anything that must come after it). */
  flush(): void {
    this.#scheduled = false;
    if (this.#items.length === 0) return;
    const items = this.#items;
    this.#items = [];
    this.#apply(items);
  }

  clear(): void {
    this.#items = [];
  }
}

/**
 * At most N tasks at once, the rest waiting in arrival order. Written here rather than taken from
 * p-limit or p-queue: neither is a dependency of this project (p-queue is only LangChain's), and
 * the whole rule is the dozen lines below.
 * @module
 */

export interface FifoLimiter {
  /** Runs `task` when one of the slots is free; a slot is held until the task's promise settles. */
  run<T>(task: () => Promise<T>): Promise<T>;
  /** Tasks running now. */
  readonly active: number;
  /** Tasks waiting for a slot. */
  readonly queued: number;
}

/**
 * A limiter of `concurrency` slots. A freed slot passes straight to the oldest waiter, so a task
 * arriving at that moment cannot jump the queue.
 * @example const pdfs = createFifoLimiter(2); await pdfs.run(() => readInWorker(bytes));
 */
export function createFifoLimiter(concurrency: number): FifoLimiter {
  if (!Number.isInteger(concurrency) || concurrency < 1) throw new RangeError(`concurrency must be a positive integer, not ${concurrency}`);
  let active = 0;
  const waiting: Array<() => void> = [];
  const release = () => {
    const next = waiting.shift();
    if (next) next(); // the slot changes hands: `active` stays the same
    else active--;
  };
  return {
    get active() {
      return active;
    },
    get queued() {
      return waiting.length;
    },
    async run(task) {
      if (active < concurrency) active++;
      else await new Promise<void>((resolve) => waiting.push(resolve));
      try {
        return await task();
      } finally {
        release();
      }
    },
  };
}

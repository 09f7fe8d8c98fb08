/**
 * Unqueued calls (`POST /run/{api}`) go through the same per-endpoint scheduler as joins, so they
 * count against the endpoint's concurrency, queue size and per-owner caps (the audit ran 150 at
 * once when /run skipped it).
 * @module
 */
import { RequestRejectedError } from './errors.ts';
import type { OwnerKey } from './ownership.ts';
import type { GradioQueue } from './queue.ts';
import type { Job, Scheduler } from './scheduler.ts';

/** The unqueued calls of one plugin instance. */
export class DirectRuns {
  /** Calls waiting for a slot, with how to refuse them at shutdown. */
  readonly #waiting = new Map<Job, { scheduler: Scheduler; reject: (error: Error) => void }>();
  /** Calls running, aborted at shutdown so `close()` is not held by a handler that never ends. */
  readonly #running = new Set<AbortController>();

  constructor(private readonly queue: GradioQueue) {}

  /** Runs `task` once a slot is free (throws 503/429 at once when refused); an abort while waiting gives up the place. */
  run<T>(fnIndex: number, owner: OwnerKey, controller: AbortController, task: () => Promise<T>): Promise<T> {
    const { scheduler } = this.queue.admit(fnIndex, owner);
    const { signal } = controller;
    return new Promise<T>((resolve, reject) => {
      const job: Job = {
        key: owner ?? undefined,
        start: () => {
          this.#waiting.delete(job);
          this.#running.add(controller);
          task()
            .then(resolve, reject)
            .finally(() => {
              this.#running.delete(controller);
              scheduler.release(job);
            });
        },
      };
      if (scheduler.offer(job) !== 'queued') return;
      this.#waiting.set(job, { scheduler, reject });
      signal.addEventListener(
        'abort',
        () => {
          if (!scheduler.remove(job)) return;
          this.#waiting.delete(job);
          reject(signal.reason);
        },
        { once: true },
      );
    });
  }

  /** Shutdown (after the drain): calls still waiting get a 503 instead of a slot, running ones are aborted. */
  stopAll(): void {
    const reason = Object.assign(new Error('The server is shutting down; please retry.'), { title: 'Server stopped' });
    for (const controller of this.#running) controller.abort(reason);
    for (const [job, { scheduler, reject }] of this.#waiting) {
      scheduler.remove(job);
      reject(new RequestRejectedError(503, 'The server is shutting down.', 'SHUTTING_DOWN'));
    }
    this.#waiting.clear();
  }
}

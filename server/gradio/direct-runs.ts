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

  constructor(private readonly queue: GradioQueue) {}

  /** Runs `task` once a slot is free (throws 503/429 at once when refused); an abort while waiting gives up the place. */
  run<T>(fnIndex: number, owner: OwnerKey, signal: AbortSignal, task: () => Promise<T>): Promise<T> {
    const { scheduler } = this.queue.admit(fnIndex, owner);
    return new Promise<T>((resolve, reject) => {
      const job: Job = {
        key: owner ?? undefined,
        start: () => {
          this.#waiting.delete(job);
          task()
            .then(resolve, reject)
            .finally(() => scheduler.release(job));
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

  /** Shutdown: calls still waiting get a 503 instead of a slot. */
  refuseWaiting(): void {
    for (const [job, { scheduler, reject }] of this.#waiting) {
      scheduler.remove(job);
      reject(new RequestRejectedError(503, 'The server is shutting down.', 'SHUTTING_DOWN'));
    }
    this.#waiting.clear();
  }
}

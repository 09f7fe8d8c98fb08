/**
 * Per-endpoint admission: at most `concurrencyLimit` jobs run, the rest wait in FIFO order, and
 * running + waiting never exceeds `queueSize` (503 beyond, as Gradio). Knows nothing of HTTP.
 * @module
 */

/** A unit of work the scheduler starts when a slot is free. */
export interface Job {
  start(): void;
}

/** Outcome of `offer()`. */
export type Admission = 'started' | 'queued' | 'full';

/** FIFO admission with a concurrency limit. */
export class Scheduler<J extends Job = Job> {
  #running = 0;
  #waiting: J[] = [];
  constructor(
    readonly concurrencyLimit: number,
    readonly queueSize: number,
    /** Called after the waiting list changed (to send fresh estimations). */
    private readonly onWaitingChanged: (waiting: readonly J[]) => void = () => {},
  ) {}

  get running(): number {
    return this.#running;
  }

  get waiting(): readonly J[] {
    return this.#waiting;
  }

  /** Admits a job: starts it now, queues it, or refuses it when the queue is full. */
  offer(job: J): Admission {
    if (this.#running + this.#waiting.length >= this.queueSize) return 'full';
    if (this.#running < this.concurrencyLimit && this.#waiting.length === 0) {
      this.#running++;
      job.start();
      return 'started';
    }
    this.#waiting.push(job);
    return 'queued';
  }

  /** Rank of a waiting job (0 = next), or -1. */
  rank(job: J): number {
    return this.#waiting.indexOf(job);
  }

  /** A running job finished: start the next waiting one. */
  release(): void {
    this.#running = Math.max(0, this.#running - 1);
    this.#pump();
  }

  /** Removes a job that has not started (cancel, disconnect). Returns whether it was waiting. */
  remove(job: J): boolean {
    const i = this.#waiting.indexOf(job);
    if (i < 0) return false;
    this.#waiting.splice(i, 1);
    this.onWaitingChanged(this.#waiting);
    return true;
  }

  #pump(): void {
    let started = false;
    while (this.#running < this.concurrencyLimit && this.#waiting.length > 0) {
      const job = this.#waiting.shift()!;
      this.#running++;
      started = true;
      job.start();
    }
    if (started) this.onWaitingChanged(this.#waiting);
  }
}

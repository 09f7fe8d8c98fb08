/**
 * Per-endpoint admission: at most `concurrencyLimit` jobs run, the rest wait in FIFO order, and
 * running + waiting never exceeds `queueSize` (503 beyond, as Gradio). Jobs carry an owner `key`:
 * one key may hold at most `perKey.queueSize` jobs and run at most `perKey.concurrency` at once,
 * so a single user's flood fills neither the queue nor the running slots for everyone else.
 * Knows nothing of HTTP.
 * @module
 */

/** A unit of work the scheduler starts when a slot is free. `key` groups jobs of one owner; keyless jobs have no share cap. */
export interface Job {
  readonly key?: string;
  start(): void;
}

/** Outcome of `offer()`: `key_full` when the job's owner already holds its share. */
export type Admission = 'started' | 'queued' | 'full' | 'key_full';

/** Caps per owner key (default: none). */
export interface PerKeyLimits {
  concurrency: number;
  queueSize: number;
}

interface KeyCount {
  running: number;
  total: number;
}

const NO_KEY = '\u0000';

/** FIFO admission with a concurrency limit and per-key shares. */
export class Scheduler<J extends Job = Job> {
  #running = 0;
  #waiting: J[] = [];
  readonly #keys = new Map<string, KeyCount>();
  constructor(
    readonly concurrencyLimit: number,
    readonly queueSize: number,
    /** Called after the waiting list changed (to send fresh estimations). */
    private readonly onWaitingChanged: (waiting: readonly J[]) => void = () => {},
    readonly perKey: PerKeyLimits = { concurrency: Infinity, queueSize: Infinity },
  ) {}

  get running(): number {
    return this.#running;
  }

  get waiting(): readonly J[] {
    return this.#waiting;
  }

  /** Why a job would be refused now, or null when `offer()` would take it. */
  refusal(key: string | undefined): 'full' | 'key_full' | null {
    if (this.#running + this.#waiting.length >= this.queueSize) return 'full';
    if (key !== undefined && (this.#keys.get(key)?.total ?? 0) >= this.perKey.queueSize) return 'key_full';
    return null;
  }

  /** Admits a job: starts it now, queues it, or refuses it when the queue (or its owner's share) is full. */
  offer(job: J): Admission {
    const refused = this.refusal(job.key);
    if (refused) return refused;
    const count = this.#count(job);
    count.total++;
    // After every pump, either all slots are busy or every waiting job's owner is at its cap, so
    // a job whose owner has room may start now without overtaking anyone who could run.
    if (this.#running < this.concurrencyLimit && this.#mayRun(job, count)) {
      this.#begin(job, count);
      return 'started';
    }
    this.#waiting.push(job);
    return 'queued';
  }

  /** Rank of a waiting job (0 = next), or -1. */
  rank(job: J): number {
    return this.#waiting.indexOf(job);
  }

  /** A running job finished: start the next waiting ones that may run. */
  release(job?: J): void {
    this.#running = Math.max(0, this.#running - 1);
    if (job) {
      const count = this.#count(job);
      count.running = Math.max(0, count.running - 1);
      this.#drop(job, count);
    }
    this.#pump();
  }

  /** Removes a job that has not started (cancel, disconnect). Returns whether it was waiting. */
  remove(job: J): boolean {
    const i = this.#waiting.indexOf(job);
    if (i < 0) return false;
    this.#waiting.splice(i, 1);
    this.#drop(job, this.#count(job));
    this.onWaitingChanged(this.#waiting);
    return true;
  }

  #count(job: J): KeyCount {
    const key = job.key ?? NO_KEY;
    let count = this.#keys.get(key);
    if (!count) this.#keys.set(key, (count = { running: 0, total: 0 }));
    return count;
  }

  #mayRun(job: J, count: KeyCount): boolean {
    return job.key === undefined || count.running < this.perKey.concurrency;
  }

  #drop(job: J, count: KeyCount): void {
    count.total = Math.max(0, count.total - 1);
    if (count.total === 0) this.#keys.delete(job.key ?? NO_KEY);
  }

  #begin(job: J, count: KeyCount): void {
    this.#running++;
    count.running++;
    job.start();
  }

  #pump(): void {
    let started = false;
    for (let i = 0; i < this.#waiting.length && this.#running < this.concurrencyLimit; ) {
      const job = this.#waiting[i];
      const count = this.#count(job);
      if (!this.#mayRun(job, count)) {
        i++;
        continue;
      }
      this.#waiting.splice(i, 1);
      started = true;
      this.#begin(job, count);
    }
    if (started) this.onWaitingChanged(this.#waiting);
  }
}

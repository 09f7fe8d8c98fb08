/**
 * Writes that failed because the database was away, kept in memory and retried until it is back
 * (backoff 1 s doubling to 30 s). The answer a user watched stream during an outage is written
 * whole once PostgreSQL returns, instead of being lost (or left at its first few characters).
 * Bounded: beyond `max` pending writes the oldest is dropped and logged. A write that fails for
 * any other reason (bad data) is logged and dropped: retrying cannot help it.
 * @module
 */
import type { FastifyBaseLogger } from 'fastify';
import { isDatabaseUnavailable } from '../db/index.ts';

export interface PendingWritesOptions {
  log: Pick<FastifyBaseLogger, 'warn' | 'error' | 'info'>;
  max?: number;
  firstDelayMs?: number;
  maxDelayMs?: number;
}

interface Pending {
  label: string;
  write: () => Promise<void>;
}

export class PendingWrites {
  readonly #queue: Pending[] = [];
  readonly #options: Required<PendingWritesOptions>;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #delayMs: number;
  #running: Promise<void> | undefined;

  constructor(options: PendingWritesOptions) {
    this.#options = { max: 1_000, firstDelayMs: 1_000, maxDelayMs: 30_000, ...options };
    this.#delayMs = this.#options.firstDelayMs;
  }

  /** How many writes wait for the database. */
  get size(): number {
    return this.#queue.length;
  }

  /** Keeps `write` until it succeeds; `label` names it in logs. */
  defer(label: string, write: () => Promise<void>): void {
    if (this.#queue.length >= this.#options.max) {
      const dropped = this.#queue.shift()!;
      this.#options.log.error({ write: dropped.label }, 'pending write dropped: too many waiting for the database');
    }
    this.#queue.push({ label, write });
    this.#options.log.warn({ write: label, pending: this.#queue.length }, 'database unavailable: write kept in memory');
    this.#schedule();
  }

  /** Tries every pending write now, in order; stops at the first that still finds the database away. */
  flush(): Promise<void> {
    this.#running ??= this.#drain().finally(() => (this.#running = undefined));
    return this.#running;
  }

  /** Shutdown: one last attempt, then report what could not be written. */
  async close(): Promise<void> {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    await this.flush();
    if (this.#queue.length) {
      this.#options.log.error({ writes: this.#queue.map((p) => p.label) }, 'database still unavailable at shutdown: writes lost');
      this.#queue.length = 0;
    }
  }

  async #drain(): Promise<void> {
    while (this.#queue.length) {
      const next = this.#queue[0];
      try {
        await next.write();
      } catch (error) {
        if (isDatabaseUnavailable(error)) return this.#backoff();
        this.#options.log.error({ err: error, write: next.label }, 'pending write failed for good');
      }
      this.#queue.shift();
      this.#delayMs = this.#options.firstDelayMs;
    }
  }

  #backoff(): void {
    this.#delayMs = Math.min(this.#delayMs * 2, this.#options.maxDelayMs);
    this.#schedule();
  }

  #schedule(): void {
    if (this.#timer) return;
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      void this.flush();
    }, this.#delayMs);
    this.#timer.unref();
  }
}

/**
 * Keeps the embedded postmaster running while node does: when it dies (kill -9, OOM killer), it
 * is started again on the same socket or port, so the pool's next connection succeeds and the app
 * recovers without a restart. Attempts back off (1, 2, 4 … 30 s) while the server keeps failing;
 * after a kill -9 the old backends need a moment to notice and release shared memory.
 * @module
 */
import { isAlive } from './server.ts';

export interface SupervisorOptions {
  /** The running postmaster's pid. */
  pid: number;
  /** Starts the server again; resolves with the new postmaster's pid. */
  restart(): Promise<number>;
  /** One line per event, for the operator. */
  report(message: string): void;
  checkEveryMs?: number;
}

export interface Supervisor {
  readonly pid: number;
  /** Stops watching (before a deliberate stop). Waits for a restart in progress. */
  stop(): Promise<void>;
}

const MAX_BACKOFF_MS = 30_000;

export function superviseServer(options: SupervisorOptions): Supervisor {
  let pid = options.pid;
  let stopped = false;
  let restarting: Promise<void> | null = null;
  let backoffMs = 1_000;
  let nextAttemptAt = 0;

  const attempt = async () => {
    options.report(`the embedded database (pid ${pid}) stopped unexpectedly; starting it again`);
    try {
      pid = await options.restart();
      backoffMs = 1_000;
      options.report(`the embedded database is running again (pid ${pid})`);
    } catch (error) {
      nextAttemptAt = Date.now() + backoffMs;
      options.report(`the embedded database did not start again (${(error as Error).message}); next attempt in ${backoffMs / 1000} s`);
      backoffMs = Math.min(backoffMs * 2, MAX_BACKOFF_MS);
    }
  };

  const timer = setInterval(() => {
    if (stopped || restarting || isAlive(pid) || Date.now() < nextAttemptAt) return;
    restarting = attempt().finally(() => (restarting = null));
  }, options.checkEveryMs ?? 1_000);
  timer.unref(); // never what keeps node alive

  return {
    get pid() {
      return pid;
    },
    async stop() {
      stopped = true;
      clearInterval(timer);
      await restarting;
    },
  };
}

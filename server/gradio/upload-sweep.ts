/**
 * The retention sweep of uploads: every `uploadSweepIntervalMs` (default a tenth of the retention,
 * at most an hour) it removes files older than `uploadRetentionMs` that `isFileReferenced` does
 * not claim. Off when no retention is set.
 * @module
 */
import type { GradioPluginOptions } from './types.ts';
import type { UploadStorage } from './upload-store.ts';

/** Where the sweep reports (Fastify's logger fits). */
interface SweepLogger {
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
}

/** Starts the periodic sweep; `stop()` ends it and waits for a pass in progress. */
export function startUploadSweep(store: UploadStorage, options: GradioPluginOptions<any>, log: SweepLogger): { stop(): Promise<void> } {
  const retention = options.uploadRetentionMs;
  if (!retention) return { stop: async () => {} };
  const every = options.uploadSweepIntervalMs ?? Math.min(Math.max(Math.floor(retention / 10), 1000), 3_600_000);
  const keep = options.isFileReferenced ?? (() => false);
  let running: Promise<void> | null = null;
  const pass = () => {
    if (running) return; // a slow pass is still going: skip this tick
    running = store
      .sweep(retention, keep)
      .then((removed) => {
        if (removed) log.info({ removed }, 'upload sweep removed expired files');
      })
      .catch((error) => log.warn({ err: error }, 'upload sweep failed'))
      .finally(() => (running = null));
  };
  const timer = setInterval(pass, every);
  timer.unref();
  return {
    async stop() {
      clearInterval(timer);
      await running;
    },
  };
}

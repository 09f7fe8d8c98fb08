/**
 * The durable job queue of the headless API: pg-boss in PostgreSQL (its own schema), so queued
 * background runs survive a restart, several gateway processes share the work (a job is fetched by
 * one worker, SKIP LOCKED), and a worker that dies mid-run stops its heartbeat, after which the
 * job is failed and retried by whichever process is alive.
 *
 *   agent-run        one job per background run (POST /v1/runs); heartbeat while the run runs
 *   approval-expiry  one job per pending approval, startAfter = expires_at: fires once, on time,
 *                    across replicas; a scheduled sweep every minute is the backstop
 * @module
 */
import { PgBoss, type Job } from 'pg-boss';
import { isDatabaseUnavailable, type Pool } from '../db/index.ts';

export const RUN_QUEUE = 'agent-run';
export const EXPIRY_QUEUE = 'approval-expiry';
export const EXPIRY_SWEEP_QUEUE = 'approval-expiry-sweep';

export interface JobQueueSettings {
  /** Seconds without a heartbeat after which a running job counts as its worker's loss (>= 10). */
  heartbeatS: number;
  /** How often pg-boss looks for lost and expired jobs. */
  superviseS: number;
  /** Idle poll interval when no NOTIFY wakes a worker. */
  pollS: number;
  /** Background runs executed at once per process. */
  concurrency: number;
  /** Attempts after the first (a lost worker counts as a failed attempt). */
  retryLimit: number;
}

export interface JobHandlers {
  /** `lastAttempt`: no retry follows a throw, so the handler settles the run as failed itself. */
  run(runId: string, lastAttempt: boolean): Promise<void>;
  expire(approvalId: string | null): Promise<void>;
}

export interface JobQueue {
  /**
   * Queues a background run. `rank`: how many of its user's runs wait before it. Jobs are fetched
   * by rank first (pg-boss priority = -rank), then in order: round-robin by user, so one user's long
   * queue never delays another user's first run by more than one run slot.
   */
  enqueueRun(runId: string, rank?: number): Promise<void>;
  scheduleExpiry(approvalId: string, at: Date): Promise<void>;
  /**
   * The process is closing: it takes no more background runs (those it runs go on). A run queued
   * or retried during the drain is left to the other processes, not started here only to be cut at
   * the grace's end, spending an attempt.
   */
  stopTakingRuns(): Promise<void>;
  stop(): Promise<void>;
}

/** Pure: the pg-boss schema for the pool's schema (tests give each file a schema of its own). */
export function jobSchemaFor(currentSchema: string): string {
  return currentSchema === 'public' ? 'pgboss' : `${currentSchema}_pgboss`.slice(0, 63);
}

/**
 * Pure: how a pg-boss 'error' is logged. pg-boss handles its own connections (each checked-out
 * client and its LISTEN client listen for 'error', and it reconnects), and emits what it saw: a lost
 * connection is a warning, and never carries the pg client that pg-pool attaches to it (a whole
 * connection object in every log line).
 */
export function jobQueueLogEntry(err: unknown): { level: 'warn' | 'error'; obj: object; msg: string } {
  if (!isDatabaseUnavailable(err)) return { level: 'error', obj: { err }, msg: 'job queue error' };
  const { message, code } = err as { message?: string; code?: string };
  return { level: 'warn', obj: { err: { message, code } }, msg: 'job queue: database unavailable' };
}

export async function startJobQueue(options: { pool: Pool; databaseUrl: string; settings: JobQueueSettings; handlers: JobHandlers; log: { error(obj: object, msg?: string): void; warn(obj: object, msg?: string): void } }): Promise<JobQueue> {
  const { settings, handlers, log } = options;
  const { rows } = await options.pool.query<{ schema: string }>('SELECT current_schema() AS schema');
  const boss = new PgBoss({
    connectionString: options.databaseUrl,
    schema: jobSchemaFor(rows[0].schema),
    max: 4,
    useListenNotify: true,
    superviseIntervalSeconds: settings.superviseS,
    monitorIntervalSeconds: settings.superviseS,
    registerInstance: false,
  });
  boss.on('error', (err) => {
    const entry = jobQueueLogEntry(err);
    log[entry.level](entry.obj, entry.msg);
  });
  await boss.start();
  const queue = { notify: true, retryLimit: settings.retryLimit, retryDelay: 1, deleteAfterSeconds: 7 * 24 * 3600 };
  await boss.createQueue(RUN_QUEUE, { ...queue, heartbeatSeconds: settings.heartbeatS, expireInSeconds: 6 * 3600 });
  await boss.createQueue(EXPIRY_QUEUE, { ...queue, retryLimit: 20, expireInSeconds: 600 });
  await boss.createQueue(EXPIRY_SWEEP_QUEUE, { ...queue, policy: 'singleton', retryLimit: 0, expireInSeconds: 600 });

  const polling = { pollingIntervalSeconds: settings.pollS, notifyPollingIntervalSeconds: Math.max(settings.pollS, 5) };
  await boss.work<{ runId: string }>(RUN_QUEUE, { ...polling, localConcurrency: settings.concurrency }, async (jobs: Job<{ runId: string }>[]) => {
    for (const job of jobs) await handlers.run(job.data.runId, job.retryCount >= settings.retryLimit);
  });
  // A delayed job is found by polling (its NOTIFY fired when it was sent): the poll interval is
  // how late an expiry may fire.
  await boss.work<{ approvalId: string }>(EXPIRY_QUEUE, { pollingIntervalSeconds: settings.pollS, notifyPollingIntervalSeconds: settings.pollS, localConcurrency: 2 }, async (jobs: Job<{ approvalId: string }>[]) => {
    for (const job of jobs) await handlers.expire(job.data.approvalId);
  });
  await boss.work(EXPIRY_SWEEP_QUEUE, polling, async () => handlers.expire(null));
  await boss.schedule(EXPIRY_SWEEP_QUEUE, '* * * * *');

  return {
    async enqueueRun(runId, rank = 0) {
      await boss.send(RUN_QUEUE, { runId }, { singletonKey: runId, priority: -Math.max(0, Math.floor(rank)) });
    },
    async scheduleExpiry(approvalId, at) {
      await boss.send(EXPIRY_QUEUE, { approvalId }, { startAfter: at, singletonKey: approvalId });
    },
    async stopTakingRuns() {
      await boss.offWork(RUN_QUEUE, { wait: false });
    },
    async stop() {
      // Not graceful: a run in flight is the engine's to stop (it commits cancelled/shutdown); its
      // job then completes, or, after a kill, is retried elsewhere once its heartbeat lapses.
      await boss.stop({ graceful: false, close: true, timeout: 2_000 }).catch((err) => log.error({ err }, 'job queue stop failed'));
    },
  };
}

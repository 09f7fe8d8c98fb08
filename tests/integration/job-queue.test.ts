/**
 * The job queue of background runs on real pg-boss: two queues on one database, as two gateway
 * processes run them. A process that is closing takes no more runs (its drain would only cut them
 * at the grace's end, spending an attempt); the other process takes them.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startJobQueue, type JobQueue } from '../../server/v1/job-queue.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';

let db: TestDatabase;
const queues: JobQueue[] = [];

beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  await Promise.all(queues.map((q) => q.stop()));
  await db?.drop();
});

const POLL_S = 0.5;

async function startQueue(taken: string[]): Promise<JobQueue> {
  const queue = await startJobQueue({
    pool: db.pool,
    databaseUrl: db.url,
    settings: { heartbeatS: 10, superviseS: 1, pollS: POLL_S, concurrency: 2, retryLimit: 0 },
    handlers: { run: async (runId) => void taken.push(runId), expire: async () => {} },
    log: { error: () => {}, warn: () => {} },
  });
  queues.push(queue);
  return queue;
}

describe('job queue', () => {
  it('after stopTakingRuns a process takes no more runs: one queued then goes to the other process, once', async () => {
    const byClosing: string[] = [];
    const byOther: string[] = [];
    const closing = await startQueue(byClosing);
    const before = randomUUID();
    await closing.enqueueRun(before);
    await expect.poll(() => byClosing).toEqual([before]); // it did take runs

    await closing.stopTakingRuns();
    const queued = randomUUID();
    await closing.enqueueRun(queued); // sending still works (a run created by a request in flight)
    // Three of the closing queue's poll periods (and its NOTIFY, at once) in which it could take the
    // run; then a second process starts and takes it.
    await new Promise((r) => setTimeout(r, 3 * POLL_S * 1000));
    expect(byClosing).toEqual([before]);
    await startQueue(byOther);
    await expect.poll(() => byOther, { timeout: 10_000 }).toEqual([queued]);
    expect(byClosing).toEqual([before]);
  });
});

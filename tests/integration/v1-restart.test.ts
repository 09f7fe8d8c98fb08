/**
 * Durability of background runs (issue 11): the job queue lives in PostgreSQL, so a SIGKILL of the
 * real process while one run is running and another is queued loses neither. After the restart the
 * queued run runs, and the running one (its worker's heartbeat stopped) is retried once its dead
 * turn is settled: both end completed. Two processes on one database share the queue.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { login } from '../helpers/chat-client.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';
import { startMain, type MainProcess } from '../helpers/main-process.ts';
import { v1, waitForRun } from './v1-support.ts';

const LONG = 'tell me about yourself and what you can help me with today in detail';
let db: TestDatabase;
let dataDir: string;
const started: MainProcess[] = [];

const env = () => ({
  DATABASE_URL: db.url,
  DATA_DIR: dataDir,
  SERVICE_CLIENT_SECRET: 'restart-secret-0123456789abcdef',
  LEASE_TTL_S: '2',
  JOBS_HEARTBEAT_S: '10',
  JOBS_SUPERVISE_S: '1',
  JOBS_POLL_S: '0.5',
  JOBS_CONCURRENCY: '1',
  // About 5 s per LONG answer: a stop sent once a run is seen running always lands mid-answer,
  // even on a loaded machine (at 40 ms the run could finish before the stop took effect).
  OFFLINE_MODEL_DELAY_MS: '100',
  // A stop cuts a run short (it is retried elsewhere) instead of letting it finish within the grace.
  SHUTDOWN_GRACE_MS: '300',
  // Several gateways on one database say so, or main.ts refuses the second.
  REPLICAS: 'true',
});

async function start(): Promise<MainProcess> {
  const p = await startMain([], env());
  started.push(p);
  return p;
}

beforeAll(async () => {
  db = await createTestDatabase();
  dataDir = await mkdtemp(join(tmpdir(), 'airlock-headless-restart-'));
});
afterAll(async () => {
  for (const p of started) {
    p.child.kill('SIGKILL');
    await p.exited;
  }
  await db?.drop();
  await rm(dataDir, { recursive: true, force: true });
});

const runBody = (text: string) => ({ messages: [{ role: 'user', content: text }] });

describe('background runs across a SIGKILL', () => {
  it('a running and a queued run both complete after the process is killed and started again', async () => {
    const first = await start();
    const token = await login(first.url, 'operator');
    const running = (await v1(first.url, '/runs', { token, body: runBody(LONG) })).body.run_id;
    const queued = (await v1(first.url, '/runs', { token, body: runBody('What is the health of payments-api?') })).body.run_id;
    // One at a time (JOBS_CONCURRENCY=1): the first is answering, the second waits in the queue.
    await waitForRun(first.url, token, running, (r) => r.status === 'running' && r.turn_count === 1);
    // Mid-answer (the offline model takes seconds over it at 40 ms a word), and the other still queued.
    await new Promise((r) => setTimeout(r, 500));
    expect((await v1(first.url, `/runs/${running}`, { token })).body.status).toBe('running');
    expect((await v1(first.url, `/runs/${queued}`, { token })).body.status).toBe('queued');

    first.child.kill('SIGKILL');
    await first.exited;

    const second = await start();
    const done = await waitForRun(second.url, token, queued, (r) => r.status === 'completed', 60_000);
    expect(done.content).toContain('payments-api');
    const retried = await waitForRun(second.url, token, running, (r) => r.status === 'completed', 60_000);
    expect(retried.attempts).toBe(2);
    expect(retried.turn_count).toBe(2);
    // The dead attempt is in the trace as the process's exit; the retry's answer follows it.
    const events = (await v1(second.url, `/runs/${running}/events?limit=1000`, { token })).body.events;
    const ends = events.filter((e: any) => e.type === 'session_end');
    expect(ends.map((e: any) => e.status)).toEqual(['failed', 'completed']);
    expect(ends[0].metadata.stop_reason).toBe('process_exit');
  }, 120_000);

  it('two processes on one database share the queue', async () => {
    const a = started.at(-1)!;
    const b = await start();
    const token = await login(a.url, 'viewer');
    // Each process runs one at a time: while one answers the long question, the other takes the next.
    const ids: string[] = [];
    for (let i = 0; i < 2; i++) ids.push((await v1(i % 2 ? b.url : a.url, '/runs', { token, body: runBody(LONG) })).body.run_id);
    for (const id of ids) await waitForRun(a.url, token, id, (r) => r.status === 'completed', 60_000);
    const owners = await db.pool.query(
      `SELECT DISTINCT split_part(r.owner, ':', 2) AS pid FROM agent_run_turns t JOIN runs r ON r.id = t.engine_run_id WHERE t.run_id = ANY($1::text[])`,
      [ids],
    );
    expect(owners.rows.map((r) => Number(r.pid)).sort()).toEqual([a.child.pid, b.child.pid].sort());
  }, 120_000);

  it('a graceful stop (SIGTERM) of the process running a background run: another process retries it', async () => {
    const [a, b] = started.slice(-2);
    const token = await login(a.url, 'viewer');
    const runId = (await v1(a.url, '/runs', { token, body: runBody(LONG) })).body.run_id;
    await waitForRun(a.url, token, runId, (r) => r.status === 'running' && r.turn_count === 1);
    const owner = await db.pool.query(`SELECT split_part(r.owner, ':', 2)::int AS pid FROM agent_run_turns t JOIN runs r ON r.id = t.engine_run_id WHERE t.run_id = $1`, [runId]);
    const [stopping, staying] = owner.rows[0].pid === a.child.pid ? [a, b] : [b, a];
    await stopping.stop(20_000);
    // The stop ends by itself (the run cut at the grace's end, its attempt settled), not by a kill.
    expect(await stopping.exited).toBe(0);
    const done = await waitForRun(staying.url, token, runId, (r) => r.status === 'completed', 60_000);
    expect(done.attempts).toBeGreaterThanOrEqual(2);
    const ends = (await v1(staying.url, `/runs/${runId}/events?limit=1000`, { token })).body.events.filter((e: any) => e.type === 'session_end');
    // The stopped attempt ended as the shutdown's: settled by the stopping process itself.
    expect([ends[0].status, ends[0].metadata.stop_reason]).toEqual(['cancelled', 'shutdown']);
    expect([ends.at(-1).status, ends.at(-1).metadata.stop_reason]).toEqual(['completed', 'end_turn']);
    // Keep two processes for the next test.
    await start();
  }, 90_000);

  it('a cancel sent to one process stops the run where another process runs it', async () => {
    const alive = () => started.filter((p) => p.child.exitCode === null && p.child.signalCode === null);
    while (alive().length < 2) await start();
    const [a, b] = alive().slice(-2);
    const token = await login(a.url, 'viewer');
    const runId = (await v1(a.url, '/runs', { token, body: runBody(LONG) })).body.run_id;
    await waitForRun(a.url, token, runId, (r) => r.status === 'running' && r.turn_count === 1);
    const owner = await db.pool.query(`SELECT split_part(r.owner, ':', 2)::int AS pid FROM agent_run_turns t JOIN runs r ON r.id = t.engine_run_id WHERE t.run_id = $1`, [runId]);
    const other = owner.rows[0].pid === a.child.pid ? b : a;
    expect(owner.rows[0].pid).not.toBe(other.child.pid);
    const cancelled = await v1(other.url, `/runs/${runId}/cancel`, { token, body: {} });
    expect(cancelled.status).toBe(200);
    expect(cancelled.body.status).toBe('cancelled');
  }, 60_000);
});

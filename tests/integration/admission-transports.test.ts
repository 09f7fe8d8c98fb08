/**
 * Issue 30 item 4 (findings 4, 5): admission for every transport, over real HTTP against the real
 * gateway and job queue.
 *  - AG-UI shares the per-user cap of streamed runs (CHAT_USER_CONCURRENCY) with v1 streams: one
 *    viewer opening many concurrent AG-UI runs gets 429 RATE_LIMITED + Retry-After past the cap,
 *    while another user's run starts at once.
 *  - Background runs: at most CHAT_USER_QUEUE queued per user (429 at POST /runs), fetched
 *    round-robin by user: 200 runs of one user never delay another user's single run by more than
 *    one run slot.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { login } from '../helpers/chat-client.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { eventually, v1 } from './v1-support.ts';

const CAP = 2;
const QUEUE = 8;
const LONG = 'tell me about yourself and what you can help me with today in detail';

let db: TestDatabase;
let server: TestServer;
let admin: string;
let viewer: string;

beforeAll(async () => {
  db = await createTestDatabase();
  server = await startTestServer({
    db,
    env: { OFFLINE_MODEL_DELAY_MS: '40', JOBS_SUPERVISE_S: '1', JOBS_POLL_S: '0.5', JOBS_CONCURRENCY: '1', CHAT_USER_CONCURRENCY: String(CAP), CHAT_USER_QUEUE: String(QUEUE) },
  });
  [admin, viewer] = await Promise.all([login(server.url, 'admin'), login(server.url, 'viewer')]);
});
afterAll(async () => {
  await server?.close();
  await db?.drop();
});

/** Opens an AG-UI run; resolves once its status (and, when 200, its first bytes) arrived. */
async function openAgUi(token: string, abort: AbortController): Promise<{ status: number; retryAfter: string | null; body?: any; ms: number }> {
  const started = Date.now();
  const res = await fetch(`${server.url}/api/agent/ag-ui`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'text/event-stream' },
    body: JSON.stringify({ threadId: randomUUID(), runId: randomUUID(), messages: [{ id: randomUUID(), role: 'user', content: LONG }], tools: [], context: [] }),
    signal: abort.signal,
  });
  if (res.status !== 200) return { status: res.status, retryAfter: res.headers.get('retry-after'), body: await res.json(), ms: Date.now() - started };
  const reader = res.body!.getReader();
  await reader.read();
  return { status: 200, retryAfter: null, ms: Date.now() - started };
}

describe('AG-UI admission (finding 4)', () => {
  it('a viewer\'s concurrent AG-UI runs past CHAT_USER_CONCURRENCY get 429 + Retry-After; another user\'s run starts at once', async () => {
    const abort = new AbortController();
    try {
      const tries = await Promise.all(Array.from({ length: 12 }, () => openAgUi(viewer, abort)));
      const ok = tries.filter((t) => t.status === 200);
      const refused = tries.filter((t) => t.status === 429);
      expect(ok).toHaveLength(CAP);
      expect(refused).toHaveLength(12 - CAP);
      for (const r of refused) {
        expect(r.body).toMatchObject({ error: { code: 'RATE_LIMITED' } });
        expect(Number(r.retryAfter)).toBeGreaterThan(0);
      }
      // The cap is shared with v1 streams of the same user in this process.
      const v1Stream = await v1(server.url, '/chat/completions', { token: viewer, body: { messages: [{ role: 'user', content: 'hello' }], stream: true } });
      expect(v1Stream.status).toBe(429);
      expect(Number(v1Stream.headers.get('retry-after'))).toBeGreaterThan(0);
      // Another user is not held back by the viewer's runs.
      const other = await openAgUi(admin, abort);
      expect(other.status).toBe(200);
      expect(other.ms).toBeLessThan(2_000);
    } finally {
      abort.abort();
    }
    // The slots come back when the viewer's runs end (not when their clients leave).
    await eventually(async () => {
      const r = await openAgUi(viewer, new AbortController());
      return r.status === 200;
    }, 30_000, 'a viewer slot freed');
  }, 60_000);
});

describe('background runs (finding 5)', () => {
  it('200 queued runs of one user: 429 past CHAT_USER_QUEUE, and another user\'s single run starts within one run slot', async () => {
    const replies = await Promise.all(Array.from({ length: 200 }, () => v1(server.url, '/runs', { token: viewer, body: { messages: [{ role: 'user', content: LONG }] } })));
    const accepted = replies.filter((r) => r.status === 202);
    const refused = replies.filter((r) => r.status === 429);
    // A run that started meanwhile frees its place in the queue: a few more may be accepted.
    expect(accepted.length).toBeGreaterThanOrEqual(QUEUE);
    expect(accepted.length).toBeLessThanOrEqual(QUEUE + 3);
    expect(accepted.length + refused.length).toBe(200);
    expect(refused[0].body).toMatchObject({ type: 'error', error: { code: 'RATE_LIMITED' } });
    expect(Number(refused[0].headers.get('retry-after'))).toBeGreaterThan(0);

    // Wait until the viewer's queue is running, with several still queued behind.
    await eventually(async () => (await db.pool.query(`SELECT count(*)::int AS n FROM agent_runs a JOIN users u ON u.id = a.user_id WHERE u.username = 'viewer' AND a.status = 'running'`)).rows[0].n >= 1, 20_000, 'a viewer run running');
    const mine = await v1(server.url, '/runs', { token: admin, body: { messages: [{ role: 'user', content: 'hello' }] } });
    expect(mine.status).toBe(202);
    const runId = mine.body.run_id as string;
    const started = await eventually(async () => {
      const { rows } = await db.pool.query(`SELECT created_at, started_at FROM agent_runs WHERE id = $1`, [runId]);
      return rows[0].started_at ? rows[0] : null;
    }, 60_000, 'the admin run started');
    // Viewer runs that started between the admin's POST and its start: at most one run slot.
    const { rows } = await db.pool.query(
      `SELECT count(*)::int AS n FROM agent_runs a JOIN users u ON u.id = a.user_id WHERE u.username = 'viewer' AND a.mode = 'background' AND a.started_at > $1 AND a.started_at < $2`,
      [started.created_at, started.started_at],
    );
    expect(rows[0].n).toBeLessThanOrEqual(1);
    const stillQueued = (await db.pool.query(`SELECT count(*)::int AS n FROM agent_runs a JOIN users u ON u.id = a.user_id WHERE u.username = 'viewer' AND a.status = 'queued'`)).rows[0].n;
    expect(stillQueued).toBeGreaterThan(1);
  }, 120_000);
});

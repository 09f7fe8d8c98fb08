/**
 * Gaps of the headless API closed after it merged (issue 11), over real HTTP against the real
 * gateway and job queue:
 * - `GET /v1/runs?status=&limit=` filters by the derived status in SQL, before the LIMIT: a page
 *   is full whenever enough runs match, and paging with `before` / `next_before` walks them all.
 * - Every turn of a headless run acts with a token minted for it: a run whose approval is decided
 *   after its first turn's token expired (AGENT_TOKEN_TTL_S=2 here) still runs its tool.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashPassword } from '../../server/auth/index.ts';
import { chat, collect, connectChat, login } from '../helpers/chat-client.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { v1, waitForRun } from './v1-support.ts';

const TOKEN_TTL_S = 2;

let db: TestDatabase;
let server: TestServer;
let admin: string;
/** An admin of a tenant of its own: the runs it lists are only the ones this file makes for it. */
let lister: string;
/** Requests what `admin` decides (both may deploy, only admins may). */
let secondAdmin: string;

const ask = (text: string) => ({ messages: [{ role: 'user', content: text }] });

beforeAll(async () => {
  db = await createTestDatabase();
  server = await startTestServer({ db, env: { OFFLINE_MODEL_DELAY_MS: '1', JOBS_SUPERVISE_S: '1', JOBS_POLL_S: '0.5', AGENT_TOKEN_TTL_S: String(TOKEN_TTL_S) } });
  const hash = await hashPassword('demo-password-1');
  await db.pool.query(`INSERT INTO users (username, password_hash, role, tenant) VALUES ('paging-admin', $1, 'admin', 'paging'), ('second-admin', $1, 'admin', 'demo')`, [hash]);
  [admin, lister, secondAdmin] = await Promise.all(['admin', 'paging-admin', 'second-admin'].map((u) => login(server.url, u)));
});
afterAll(async () => {
  await server?.close();
  await db?.drop();
});

async function background(token: string, text: string): Promise<string> {
  const reply = await v1(server.url, '/runs', { token, body: ask(text) });
  expect(reply.status).toBe(202);
  return reply.body.run_id;
}

/** Every page of `GET /runs?status=…&limit=…`, following next_before; each page's ids. */
async function allPages(token: string, status: string, limit: number): Promise<string[][]> {
  const pages: string[][] = [];
  let before: string | null = null;
  for (let guard = 0; guard < 20; guard++) {
    const reply = await v1(server.url, `/runs?status=${status}&limit=${limit}${before ? `&before=${before}` : ''}`, { token });
    expect(reply.status).toBe(200);
    for (const run of reply.body.runs) expect(run.status).toBe(status);
    expect(reply.body.count).toBe(reply.body.runs.length);
    pages.push(reply.body.runs.map((r: any) => r.run_id));
    before = reply.body.next_before;
    if (!before) return pages;
  }
  return expect.fail('paging never ended');
}

describe('GET /v1/runs?status=&limit=', () => {
  it('filters before the limit: full pages in mixed statuses, and before/next_before pages through all of them', async () => {
    // Oldest first: 3 paused for approval, 1 cancelled, then 3 completed (the newest), so the
    // newest `limit` rows hold no paused run (a filter after the LIMIT comes back empty).
    const paused: string[] = [];
    for (const service of ['checkout-api', 'inventory-service', 'auth-service']) {
      const id = await background(lister, `deploy ${service} 1.0.0 to staging`);
      await waitForRun(server.url, lister, id, (r) => r.status === 'awaiting_approval');
      paused.push(id);
    }
    const cancelled = await background(lister, 'deploy kafka-broker 1.0.0 to staging');
    await waitForRun(server.url, lister, cancelled, (r) => r.status === 'awaiting_approval');
    expect((await v1(server.url, `/runs/${cancelled}/cancel`, { token: lister, method: 'POST' })).body.status).toBe('cancelled');
    const completed: string[] = [];
    for (const service of ['payments-api', 'orders-api', 'auth-service']) {
      const id = await background(lister, `What is the health of ${service}?`);
      await waitForRun(server.url, lister, id, (r) => r.status === 'completed');
      completed.push(id);
    }
    // Statuses only the row holds: queued (no job sent: it stays queued) and failed.
    const rowOnly = await db.pool.query<{ id: string; status: string }>(
      `INSERT INTO agent_runs (id, tenant, user_id, username, user_key, mode, status, text, metadata, auth_provider)
       SELECT gen_random_uuid(), 'paging', id, username, 'paging:' || username, 'background', s, 'x', '{}', 'user_token'
       FROM users, unnest(ARRAY['queued', 'queued', 'queued', 'failed']) AS s WHERE username = 'paging-admin'
       RETURNING id, status`,
    );
    const queued = rowOnly.rows.filter((r) => r.status === 'queued').map((r) => r.id);

    const newestFirst = (ids: string[]) => [...ids].reverse();
    const awaiting = await allPages(lister, 'awaiting_approval', 2);
    expect(awaiting).toEqual([newestFirst(paused).slice(0, 2), newestFirst(paused).slice(2)]);
    expect((await allPages(lister, 'completed', 2)).flat()).toEqual(newestFirst(completed));
    expect((await allPages(lister, 'completed', 3))).toEqual([newestFirst(completed), []]);
    expect((await allPages(lister, 'cancelled', 1)).flat()).toEqual([cancelled]);
    expect((await allPages(lister, 'queued', 2)).flat().sort()).toEqual([...queued].sort());
    expect((await allPages(lister, 'failed', 5)).flat()).toHaveLength(1);
    expect((await allPages(lister, 'running', 5)).flat()).toEqual([]);
    // /traces pages the same way.
    const traces1 = (await v1(server.url, '/traces?status=awaiting_approval&limit=2', { token: lister })).body;
    expect(traces1.traces.map((t: any) => t.run_id)).toEqual(newestFirst(paused).slice(0, 2));
    const traces2 = (await v1(server.url, `/traces?status=awaiting_approval&limit=2&before=${traces1.next_before}`, { token: lister })).body;
    expect(traces2).toMatchObject({ count: 1, next_before: null });
    expect(traces2.traces[0].run_id).toBe(paused[0]);
    // Unfiltered paging still sees every run once.
    const everything = (await v1(server.url, '/runs?limit=200', { token: lister })).body.runs.map((r: any) => r.run_id);
    expect(everything).toHaveLength(11);
    expect(new Set(everything).size).toBe(11);

    // A cursor that is not a run of this list is refused, not silently ignored.
    const bad = await v1(server.url, `/runs?limit=2&before=${crypto.randomUUID()}`, { token: lister });
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({ type: 'error', error: { code: 'VALIDATION_ERROR' } });
    // Another tenant's run as the cursor: not a run of this list.
    const othersRun = await background(admin, 'What is the health of billing-api?');
    expect((await v1(server.url, `/runs?limit=2&before=${othersRun}`, { token: lister })).status).toBe(400);
    expect((await v1(server.url, '/runs?status=nope', { token: lister })).body).toMatchObject({ error: { code: 'VALIDATION_ERROR' } });
  });
});

describe('tokens of background runs', () => {
  it('a run whose approval is decided after its first turn token expired still runs its tool (Gradio confirm)', async () => {
    const runId = await background(admin, 'deploy checkout-api 3.1.4 to staging');
    const paused = await waitForRun(server.url, admin, runId, (r) => r.status === 'awaiting_approval');
    const approvalId = paused.approval_request_ids[0];
    const { rows } = await db.pool.query<{ conversation_id: string }>('SELECT conversation_id FROM approvals WHERE id = $1', [approvalId]);
    // Past the lifetime of any token minted for the first turn (bounded wait on the clock).
    const expiredAt = Date.parse(paused.started_at) + (TOKEN_TTL_S + 1) * 1000;
    while (Date.now() < expiredAt) await new Promise((r) => setTimeout(r, 100));

    const client = await connectChat(server.url, admin);
    try {
      const turn = await collect(chat(client, 'confirm', rows[0].conversation_id, 'confirm'));
      expect(turn.messages.some((m) => m.metadata.type === 'confirm_resolved')).toBe(true);
    } finally {
      client.close();
    }
    const done = await waitForRun(server.url, admin, runId, (r) => r.status === 'completed');
    expect(done.turn_count).toBe(2);
    const events = (await v1(server.url, `/runs/${runId}/events?limit=100`, { token: admin })).body.events;
    const result = events.find((e: any) => e.type === 'tool_result');
    expect(result, JSON.stringify(result)).toMatchObject({ tool_name: 'deploy_service', status: 'success' });
    expect((await db.pool.query(`SELECT count(*)::int AS n FROM deployments WHERE service = 'checkout-api' AND version = '3.1.4'`)).rows[0].n).toBe(1);
  });

  it('the same through the API, approved by another user after the wait', async () => {
    const runId = await background(secondAdmin, 'deploy orders-api 2.0.0 to staging');
    const paused = await waitForRun(server.url, secondAdmin, runId, (r) => r.status === 'awaiting_approval');
    const expiredAt = Date.parse(paused.started_at) + (TOKEN_TTL_S + 1) * 1000;
    while (Date.now() < expiredAt) await new Promise((r) => setTimeout(r, 100));
    const decided = await v1(server.url, `/approvals/${paused.approval_request_ids[0]}/approve`, { token: admin, body: { reason: 'late' } });
    expect(decided.status).toBe(200);
    await waitForRun(server.url, secondAdmin, runId, (r) => r.status === 'completed');
    expect((await db.pool.query(`SELECT count(*)::int AS n FROM deployments WHERE service = 'orders-api' AND version = '2.0.0'`)).rows[0].n).toBe(1);
    // The decision's audit row names the decider (admin), not the requester the resume runs as.
    const audit = await db.pool.query(`SELECT username, operation, arguments FROM audit_log WHERE arguments->>'approval_id' = $1`, [paused.approval_request_ids[0]]);
    expect(audit.rows).toEqual([expect.objectContaining({ username: 'admin', operation: 'approval.approve' })]);
  });
});

/**
 * Issue 30 finding 11: concurrent identical approves by different users. They shared the
 * request_id `v1-decide:{id}:approve`, so every decider replayed the winner's turn: all got 200,
 * and only the first was audited. Now each decider's attempt is its own: exactly one 200, the
 * rest 409 CONFLICT, one deployment, and one audit row per attempt.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashPassword } from '../../server/auth/index.ts';
import { login } from '../helpers/chat-client.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { v1, waitForRun } from './v1-support.ts';

const DECIDERS = ['racer-1', 'racer-2', 'racer-3', 'racer-4', 'racer-5'];

let db: TestDatabase;
let server: TestServer;
let requester: string;
let deciders: string[];

beforeAll(async () => {
  db = await createTestDatabase();
  server = await startTestServer({ db, env: { OFFLINE_MODEL_DELAY_MS: '1', JOBS_SUPERVISE_S: '1', JOBS_POLL_S: '0.5' } });
  const hash = await hashPassword('demo-password-1');
  for (const u of DECIDERS) await db.pool.query(`INSERT INTO users (username, password_hash, role, tenant) VALUES ($1, $2, 'admin', 'demo')`, [u, hash]);
  requester = await login(server.url, 'admin');
  deciders = await Promise.all(DECIDERS.map((u) => login(server.url, u)));
});
afterAll(async () => {
  await server?.close();
  await db?.drop();
});

describe('concurrent approves by different users (issue 30 finding 11)', () => {
  it('one 200, the rest 409, one deployment, an audit row per attempt', async () => {
    const started = await v1(server.url, '/runs', { token: requester, body: { messages: [{ role: 'user', content: 'deploy payments-api 7.7.7 to staging' }] } });
    expect(started.status).toBe(202);
    const paused = await waitForRun(server.url, requester, started.body.run_id, (r) => r.status === 'awaiting_approval');
    const approvalId = paused.approval_request_ids[0];

    const replies = await Promise.all(deciders.map((token) => v1(server.url, `/approvals/${approvalId}/approve`, { token, body: { reason: 'race' } })));
    const statuses = replies.map((r) => r.status).sort();
    expect(statuses, JSON.stringify(replies.map((r) => r.body))).toEqual([200, 409, 409, 409, 409]);
    for (const r of replies.filter((r) => r.status === 409)) expect(r.body).toMatchObject({ error: { code: 'CONFLICT' } });

    await waitForRun(server.url, requester, started.body.run_id, (r) => r.status === 'completed');
    expect((await db.pool.query(`SELECT count(*)::int AS n FROM deployments WHERE service = 'payments-api' AND version = '7.7.7'`)).rows[0].n).toBe(1);
    const audit = await db.pool.query<{ username: string; outcome: string; status_code: number }>(
      `SELECT username, outcome, status_code FROM audit_log WHERE arguments->>'approval_id' = $1 AND operation = 'approval.approve'`,
      [approvalId],
    );
    expect(audit.rows.map((r) => r.username).sort()).toEqual([...DECIDERS].sort());
    expect(audit.rows.filter((r) => r.outcome === 'success')).toHaveLength(1);
    expect(audit.rows.filter((r) => r.status_code === 409)).toHaveLength(4);
    // The winner is the one audited as the success.
    const winner = DECIDERS[replies.findIndex((r) => r.status === 200)];
    expect(audit.rows.find((r) => r.outcome === 'success')!.username).toBe(winner);
  });
});

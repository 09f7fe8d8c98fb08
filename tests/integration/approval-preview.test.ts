/**
 * Issue 27 item 3 end to end (real gateway and api processes, real PostgreSQL, the offline model,
 * the v1 API by fetch): a deploy's approval carries the api's dry-run preview and the arguments'
 * labels; the preview sent neither X-Tool-Call-Id nor Idempotency-Key (its audit row has no call id);
 * a deploy landing between the preview and the approval makes the api refuse the approved call
 * (412): that approval is closed as denied / state_changed and a new one for the same tool call
 * opens with a fresh preview naming the new state, linked by `replaces`; approving it deploys once.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { login } from '../helpers/chat-client.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { v1, waitForRun } from './v1-support.ts';

let db: TestDatabase;
let server: TestServer;
let admin: string;

beforeAll(async () => {
  db = await createTestDatabase();
  server = await startTestServer({ db, env: { OFFLINE_MODEL_DELAY_MS: '1', JOBS_SUPERVISE_S: '1', JOBS_POLL_S: '0.5' } });
  admin = await login(server.url, 'admin');
});
afterAll(async () => {
  await server?.close();
  await db?.drop();
});

const deployments = async (version: string) =>
  (await db.pool.query(`SELECT count(*)::int AS n FROM deployments WHERE service = 'payments-api' AND environment = 'staging' AND version = $1`, [version])).rows[0].n as number;

describe('the preview on the approval, and a state change before the confirm', () => {
  it('shows the preview, closes the stale approval as state_changed, asks again with a fresh preview, deploys once', async () => {
    const started = await v1(server.url, '/runs', { token: admin, body: { messages: [{ role: 'user', content: 'deploy payments-api 7.8.0 to staging' }] } });
    expect(started.status).toBe(202);
    const paused = await waitForRun(server.url, admin, started.body.run_id, (r) => r.status === 'awaiting_approval');
    const firstId = paused.approval_request_ids[0];
    const first = (await v1(server.url, `/approvals/${firstId}`, { token: admin })).body;
    expect(first.preview.summary).toMatch(/^payments-api staging: 2\.14\.1 → 7\.8\.0; last deploy \d+ d ago by admin$/);
    expect(first.preview.state_hash).toMatch(/^[0-9a-f]{64}$/);
    expect(first.labels).toEqual({ service: 'Service', version: 'Version', environment: 'Environment' });
    const previews = await db.pool.query(`SELECT tool_call_id, outcome FROM audit_log WHERE operation = 'deploy_service'`);
    expect(previews.rows).toEqual([{ tool_call_id: null, outcome: 'preview' }]);
    expect(await db.pool.query(`SELECT 1 FROM idempotency_keys WHERE operation = 'deploy_service'`).then((r) => r.rowCount)).toBe(0);

    // A concurrent deploy lands between the preview and the approval.
    await db.pool.query(`INSERT INTO deployments (service, version, environment, status, deployed_by, started_at, finished_at) VALUES ('payments-api', '7.7.9', 'staging', 'succeeded', 'operator', now(), now())`);

    const approved = await v1(server.url, `/approvals/${firstId}/approve`, { token: admin, body: {} });
    expect(approved.status, JSON.stringify(approved.body)).toBe(200);
    const again = await waitForRun(server.url, admin, started.body.run_id, (r) => r.status === 'awaiting_approval' && r.approval_request_ids.some((id: string) => id !== firstId));
    const secondId = again.approval_request_ids.find((id: string) => id !== firstId);
    expect(await deployments('7.8.0')).toBe(0);
    const closed = (await v1(server.url, `/approvals/${firstId}`, { token: admin })).body;
    expect(closed.status).toBe('denied');
    expect(closed.resolution_reason).toBe('state_changed');
    const second = (await v1(server.url, `/approvals/${secondId}`, { token: admin })).body;
    expect(second.status).toBe('pending');
    expect(second.replaces).toBe(firstId);
    expect(second.tool_args).toEqual(first.tool_args);
    expect(second.preview.summary).toMatch(/^payments-api staging: 7\.7\.9 → 7\.8\.0; last deploy just now by operator$/);
    expect(second.preview.state_hash).not.toBe(first.preview.state_hash);
    const refused = await db.pool.query(`SELECT status_code, error_code FROM audit_log WHERE operation = 'deploy_service' AND status_code = 412`);
    expect(refused.rows.length).toBeGreaterThanOrEqual(1);
    expect(refused.rows[0].error_code).toBe('PRECONDITION_FAILED');

    expect((await v1(server.url, `/approvals/${secondId}/approve`, { token: admin, body: {} })).status).toBe(200);
    await waitForRun(server.url, admin, started.body.run_id, (r) => r.status === 'completed');
    expect(await deployments('7.8.0')).toBe(1);
  });
});

describe('a Deny reason (issue 27 item 4)', () => {
  it('the model is told the approver\'s reason', async () => {
    const started = await v1(server.url, '/runs', { token: admin, body: { messages: [{ role: 'user', content: 'deploy orders-api 3.9.1 to staging' }] } });
    const paused = await waitForRun(server.url, admin, started.body.run_id, (r) => r.status === 'awaiting_approval');
    const id = paused.approval_request_ids[0];
    expect((await v1(server.url, `/approvals/${id}/deny`, { token: admin, body: { reason: 'wait for the 3.9.2 hotfix' } })).status).toBe(200);
    await waitForRun(server.url, admin, started.body.run_id, (r) => r.status === 'completed');
    const result = await db.pool.query(`SELECT payload FROM conversation_events WHERE kind = 'tool.result' AND payload->>'tool' = 'deploy_service' AND payload->>'status' = 'error'`);
    expect(result.rows).toHaveLength(1);
    expect(result.rows[0].payload.error).toBe('Not done: the user denied deploy_service. Their reason: "wait for the 3.9.2 hotfix"');
    expect(await db.pool.query(`SELECT 1 FROM deployments WHERE service = 'orders-api' AND version = '3.9.1'`).then((r) => r.rowCount)).toBe(0);
  });
});

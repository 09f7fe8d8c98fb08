/**
 * Idempotency-Key on side-effecting tool calls: repeat -> stored result, no second effect; other
 * arguments -> 409; concurrent duplicates -> exactly one effect.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auditRows, startApi, type ApiHarness } from './api-support.ts';

let api: ApiHarness;
let operator: string;
let admin: string;
beforeAll(async () => {
  api = await startApi();
  [operator, admin] = await Promise.all([api.login('operator'), api.login('admin')]);
});
afterAll(() => api.close());

const count = async (sql: string, params: unknown[]) => (await api.db.pool.query(sql, params)).rows[0].n as number;

describe('Idempotency-Key', () => {
  it('a repeat returns the stored result and acts once', async () => {
    const body = { title: 'Rotate TLS certificates', priority: 'high' };
    const headers = { 'idempotency-key': 'call_task_1' };
    const first = await api.tool('POST', '/api/tools/tasks', { user: operator, body, headers });
    const second = await api.tool('POST', '/api/tools/tasks', { user: operator, body: { priority: 'high', title: 'Rotate TLS certificates' }, headers });
    expect(first.status).toBe(201);
    expect(second.status).toBe(201);
    expect(second.body).toEqual(first.body);
    expect(second.headers.get('idempotent-replayed')).toBe('true');
    expect(await count("SELECT count(*)::int AS n FROM tasks WHERE title = 'Rotate TLS certificates'", [])).toBe(1);
    const rows = await auditRows(api.db, 'tool_call_id = $1', ['call_task_1']);
    expect(rows.map((r) => r.outcome)).toEqual(['replayed', 'success']);
  });

  it('the same key with other arguments is 409 CONFLICT, and acts not at all', async () => {
    const headers = { 'idempotency-key': 'call_task_2' };
    expect((await api.tool('POST', '/api/tools/tasks', { user: operator, body: { title: 'A' }, headers })).status).toBe(201);
    const other = await api.tool('POST', '/api/tools/tasks', { user: operator, body: { title: 'B' }, headers });
    expect(other.status).toBe(409);
    expect(other.body.error.code).toBe('CONFLICT');
    expect(await count("SELECT count(*)::int AS n FROM tasks WHERE title = 'B'", [])).toBe(0);
    // Another operation under the same key conflicts too.
    const otherOp = await api.tool('POST', '/api/tools/maintenance', {
      user: operator,
      body: { service: 'cdn-edge', duration_minutes: 5, reason: 'x' },
      headers,
    });
    expect(otherOp.status).toBe(409);
  });

  it('X-Tool-Call-Id works as the key when Idempotency-Key is absent', async () => {
    const headers = { 'x-tool-call-id': 'call_deploy_1' };
    const body = { service: 'orders-api', version: '3.9.0', environment: 'staging' };
    const a = await api.tool('POST', '/api/tools/deployments', { user: admin, body, headers });
    const b = await api.tool('POST', '/api/tools/deployments', { user: admin, body, headers });
    expect(a.status).toBe(201);
    expect(b.body.id).toBe(a.body.id);
    expect(await count("SELECT count(*)::int AS n FROM deployments WHERE service = 'orders-api' AND version = '3.9.0'", [])).toBe(1);
  });

  it('keys are per user: another user with the same key acts for themselves', async () => {
    const headers = { 'idempotency-key': 'call_shared' };
    const a = await api.tool('POST', '/api/tools/tasks', { user: operator, body: { title: 'per-user' }, headers });
    const b = await api.tool('POST', '/api/tools/tasks', { user: admin, body: { title: 'per-user' }, headers });
    expect(b.body.id).not.toBe(a.body.id);
  });

  it('concurrent duplicates: one effect, every caller gets the same result', async () => {
    const body = { service: 'inventory-service', duration_minutes: 15, reason: 'Reindex' };
    const headers = { 'idempotency-key': 'call_maint_race' };
    const results = await Promise.all(
      Array.from({ length: 10 }, () => api.tool('POST', '/api/tools/maintenance', { user: operator, body, headers })),
    );
    expect(results.map((r) => r.status)).toEqual(Array(10).fill(201));
    expect(new Set(results.map((r) => r.body.id)).size).toBe(1);
    expect(await count("SELECT count(*)::int AS n FROM maintenance_events WHERE service = 'inventory-service' AND reason = 'Reindex'", [])).toBe(1);
    const outcomes = (await auditRows(api.db, 'tool_call_id = $1', ['call_maint_race'])).map((r) => r.outcome);
    expect(outcomes.filter((o) => o === 'success')).toHaveLength(1);
    expect(outcomes.filter((o) => o === 'replayed')).toHaveLength(9);
  });

  it('a failed effect stores nothing: the retry runs again', async () => {
    const headers = { 'idempotency-key': 'call_end_retry' };
    const first = await api.tool('POST', '/api/tools/maintenance/end', { user: operator, body: { service: 'payments-api' }, headers });
    expect(first.status).toBe(404);
    await api.tool('POST', '/api/tools/maintenance', {
      user: operator,
      body: { service: 'payments-api', duration_minutes: 5, reason: 'Hotfix' },
    });
    const retry = await api.tool('POST', '/api/tools/maintenance/end', { user: operator, body: { service: 'payments-api' }, headers });
    expect(retry.status).toBe(200);
  });

  it('without a key every call acts', async () => {
    await api.tool('POST', '/api/tools/tasks', { user: operator, body: { title: 'no-key' } });
    await api.tool('POST', '/api/tools/tasks', { user: operator, body: { title: 'no-key' } });
    expect(await count("SELECT count(*)::int AS n FROM tasks WHERE title = 'no-key'", [])).toBe(2);
  });
});

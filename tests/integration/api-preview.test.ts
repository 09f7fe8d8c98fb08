/**
 * Issue 27 item 3 at the api: `?dry_run=true` on deploy_service and start_maintenance answers a
 * preview with the same RBAC and no effect, is audited as `preview` and never stored as idempotent;
 * a real call with `If-Match: <state_hash>` runs only while the state is what the preview read
 * (412 PRECONDITION_FAILED after a concurrent deploy, nothing done).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auditRows, startApi, type ApiHarness } from './api-support.ts';

let api: ApiHarness;
let viewer: string;
let operator: string;
let admin: string;
beforeAll(async () => {
  api = await startApi();
  [viewer, operator, admin] = await Promise.all([api.login('viewer'), api.login('operator'), api.login('admin')]);
});
afterAll(() => api.close());

const count = async (sql: string, params: unknown[] = []) => (await api.db.pool.query(sql, params)).rows[0].n as number;
const deploy = (user: string, body: unknown, query = '', headers: Record<string, string> = {}) => api.tool('POST', `/api/tools/deployments${query}`, { user, body, headers });

describe('dry run', () => {
  it('a deploy preview names the running version, the new one and the last deploy, and deploys nothing', async () => {
    const before = await count("SELECT count(*)::int AS n FROM deployments WHERE service = 'checkout-api'");
    const res = await deploy(admin, { service: 'checkout-api', version: '5.3.1', environment: 'staging' }, '?dry_run=true');
    expect(res.status).toBe(200);
    expect(res.body.dry_run).toBe(true);
    expect(res.body.preview.summary).toBe('checkout-api staging: 5.3.0 → 5.3.1; last deploy 1 d ago by admin');
    expect(res.body.preview.state_hash).toMatch(/^[0-9a-f]{64}$/);
    expect(res.body.preview.details).toMatchObject({ current_version: '5.3.0', new_version: '5.3.1' });
    expect(await count("SELECT count(*)::int AS n FROM deployments WHERE service = 'checkout-api'")).toBe(before);
    const [row] = await auditRows(api.db, "operation = 'deploy_service'");
    expect(row.outcome).toBe('preview');
    expect(row.status_code).toBe(200);
  });

  it('has the same RBAC: an operator may not preview a deploy (403, audited denied)', async () => {
    const res = await deploy(operator, { service: 'checkout-api', version: '5.3.1', environment: 'staging' }, '?dry_run=true');
    expect(res.status).toBe(403);
    expect(res.body.error.code).toBe('FORBIDDEN');
    const viewerRes = await api.tool('POST', '/api/tools/maintenance?dry_run=true', { user: viewer, body: { service: 'db-primary', duration_minutes: 30, reason: 'x' } });
    expect(viewerRes.status).toBe(403);
  });

  it('a maintenance preview counts dependents and opens no window', async () => {
    const res = await api.tool('POST', '/api/tools/maintenance?dry_run=true', { user: operator, body: { service: 'db-primary', duration_minutes: 30, reason: 'disk' } });
    expect(res.status).toBe(200);
    const dependents = await count("SELECT count(*)::int AS n FROM services WHERE 'db-primary' = ANY(depends_on)");
    expect(res.body.preview.summary).toBe(`db-primary: no maintenance window now; ${dependents} dependent services; 30 min from now`);
    expect(await count("SELECT count(*)::int AS n FROM maintenance_events WHERE service = 'db-primary' AND reason = 'disk'")).toBe(0);
  });

  it('is never stored as idempotent: a dry run under a key leaves the key free for the real call', async () => {
    const body = { service: 'orders-api', version: '3.9.9', environment: 'staging' };
    const headers = { 'idempotency-key': 'call_preview_key' };
    expect((await deploy(admin, body, '?dry_run=true', headers)).status).toBe(200);
    expect(await count("SELECT count(*)::int AS n FROM idempotency_keys WHERE key = 'call_preview_key'")).toBe(0);
    const real = await deploy(admin, body, '', headers);
    expect(real.status).toBe(201);
    expect(real.headers.get('idempotent-replayed')).toBeNull();
    expect(real.body.version).toBe('3.9.9');
  });

  it('a bad dry_run value is a 400', async () => {
    const res = await deploy(admin, { service: 'orders-api', version: '1', environment: 'staging' }, '?dry_run=yes');
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('VALIDATION_ERROR');
  });
});

describe('If-Match at execution', () => {
  it('runs while the state is unchanged', async () => {
    const body = { service: 'payments-api', version: '2.15.0', environment: 'staging' };
    const { state_hash } = (await deploy(admin, body, '?dry_run=true')).body.preview;
    const res = await deploy(admin, body, '', { 'if-match': `"${state_hash}"`, 'idempotency-key': 'call_if_match_ok' });
    expect(res.status).toBe(201);
  });

  it('a concurrent deploy between preview and execution: 412 PRECONDITION_FAILED and nothing deployed', async () => {
    const body = { service: 'search-api', version: '9.0.0', environment: 'staging' };
    const { state_hash } = (await deploy(admin, body, '?dry_run=true')).body.preview;
    expect((await deploy(admin, { ...body, version: '8.9.9' })).status).toBe(201);
    const res = await deploy(admin, body, '', { 'if-match': state_hash, 'idempotency-key': 'call_if_match_stale' });
    expect(res.status).toBe(412);
    expect(res.body.error.code).toBe('PRECONDITION_FAILED');
    expect(res.body.error.details.expected_state_hash).toBe(state_hash);
    expect(res.body.error.details.state_hash).not.toBe(state_hash);
    expect(await count("SELECT count(*)::int AS n FROM deployments WHERE service = 'search-api' AND version = '9.0.0'")).toBe(0);
    const fresh = (await deploy(admin, body, '?dry_run=true')).body.preview;
    expect(fresh.state_hash).toBe(res.body.error.details.state_hash);
    expect(fresh.summary).toContain('8.9.9 → 9.0.0');
  });

  it('a window opened meanwhile fails start_maintenance with 412', async () => {
    const body = { service: 'cdn-edge', duration_minutes: 10, reason: 'cache purge' };
    const { state_hash } = (await api.tool('POST', '/api/tools/maintenance?dry_run=true', { user: operator, body })).body.preview;
    expect((await api.tool('POST', '/api/tools/maintenance', { user: admin, body: { ...body, reason: 'other' } })).status).toBe(201);
    const res = await api.tool('POST', '/api/tools/maintenance', { user: operator, body, headers: { 'if-match': state_hash } });
    expect(res.status).toBe(412);
  });
});

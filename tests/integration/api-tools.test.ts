/**
 * Tool endpoints: each one's success and failure paths, with both tokens, and their audit rows.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auditRows, startApi, type ApiHarness } from './api-support.ts';

let api: ApiHarness;
let viewer: string;
let operator: string;
let admin: string;
beforeAll(async () => {
  api = await startApi();
  [viewer, operator, admin] = await Promise.all(['viewer', 'operator', 'admin'].map((u) => api.login(u)));
});
afterAll(() => api.close());

describe('GET /api/tools/capabilities', () => {
  it('lists every tool with what this role may do', async () => {
    const res = await api.tool('GET', '/api/tools/capabilities', { user: operator });
    expect(res.status).toBe(200);
    expect(res.body.user).toMatchObject({ username: 'operator', role: 'operator' });
    const allowed = Object.fromEntries(res.body.tools.map((t: { name: string; allowed: boolean }) => [t.name, t.allowed]));
    expect(allowed).toMatchObject({ start_maintenance: true, deploy_service: false, search_dashboards: true, show_capabilities: true });
    expect(res.body.tools).toHaveLength(12);
    expect(res.body.permissions).toContain('maintenance:write');
    expect(res.body).not.toHaveProperty('path');
  });
});

describe('dashboards', () => {
  it('searches by words in title, tags and description, best match first', async () => {
    const res = await api.tool('GET', '/api/tools/dashboards?q=payments%20latency', { user: viewer });
    expect(res.status).toBe(200);
    expect(res.body.items[0].id).toBe('payments-latency');
    const errors = await api.tool('GET', '/api/tools/dashboards?q=errors&limit=3', { user: viewer });
    expect(errors.body.items).toHaveLength(3);
    for (const d of errors.body.items) expect(`${d.title} ${d.description} ${d.tags}`.toLowerCase()).toContain('error');
    const partial = await api.tool('GET', '/api/tools/dashboards?q=replicat', { user: viewer });
    expect(partial.body.items.map((d: { id: string }) => d.id)).toContain('db-primary-overview');
    const none = await api.tool('GET', '/api/tools/dashboards?q=zzzqqq', { user: viewer });
    expect(none.body).toMatchObject({ count: 0, items: [] });
  });

  it('lists all without q, caps limit, and gets one with panels (404 for an unknown id)', async () => {
    const all = await api.tool('GET', '/api/tools/dashboards?limit=50', { user: viewer });
    expect(all.body.count).toBe(16);
    const tooMany = await api.tool('GET', '/api/tools/dashboards?limit=51', { user: viewer });
    expect(tooMany.status).toBe(400);
    expect(tooMany.body.error.details[0]).toMatchObject({ path: 'limit', location: 'query' });
    const one = await api.tool('GET', '/api/tools/dashboards/kafka-lag', { user: viewer });
    expect(one.status).toBe(200);
    expect(one.body).toMatchObject({ id: 'kafka-lag', service: 'kafka-broker' });
    expect(one.body.panels.length).toBeGreaterThan(0);
    const missing = await api.tool('GET', '/api/tools/dashboards/nope', { user: viewer });
    expect(missing.status).toBe(404);
    expect(missing.body.error.code).toBe('NOT_FOUND');
  });
});

describe('maintenance', () => {
  it('lists seeded events by status and service', async () => {
    const past = await api.tool('GET', '/api/tools/maintenance?status=past', { user: viewer });
    expect(past.body.items.length).toBeGreaterThanOrEqual(3);
    expect(past.body.items.every((e: { status: string }) => e.status === 'past')).toBe(true);
    const upcoming = await api.tool('GET', '/api/tools/maintenance?status=upcoming&service=notifications', { user: viewer });
    expect(upcoming.body.items).toHaveLength(1);
    const bad = await api.tool('GET', '/api/tools/maintenance?status=soon', { user: viewer });
    expect(bad.status).toBe(400);
    const unknown = await api.tool('GET', '/api/tools/maintenance?service=nope', { user: viewer });
    expect(unknown.status).toBe(404);
  });

  it('starts (201), refuses a second while active (409), ends (200), then 404 when none is active', async () => {
    const started = await api.tool('POST', '/api/tools/maintenance', {
      user: operator,
      body: { service: 'redis-cache', duration_minutes: 30, reason: 'Resharding' },
    });
    expect(started.status).toBe(201);
    expect(started.body).toMatchObject({ service: 'redis-cache', status: 'active', reason: 'Resharding', created_by: 'operator' });
    expect(Date.parse(started.body.ends_at) - Date.parse(started.body.starts_at)).toBe(30 * 60_000);
    const health = await api.tool('GET', '/api/tools/health?service=redis-cache', { user: viewer });
    expect(health.body.in_maintenance).toBe(true);
    const twice = await api.tool('POST', '/api/tools/maintenance', {
      user: operator,
      body: { service: 'redis-cache', duration_minutes: 10, reason: 'again' },
    });
    expect(twice.status).toBe(409);
    expect(twice.body.error.code).toBe('CONFLICT');
    const active = await api.tool('GET', '/api/tools/maintenance?status=active&service=redis-cache', { user: viewer });
    expect(active.body.items.map((e: { id: string }) => e.id)).toEqual([started.body.id]);
    const ended = await api.tool('POST', '/api/tools/maintenance/end', { user: operator, body: { service: 'redis-cache' } });
    expect(ended.status).toBe(200);
    expect(ended.body).toMatchObject({ id: started.body.id, status: 'past', ended_by: 'operator' });
    const again = await api.tool('POST', '/api/tools/maintenance/end', { user: operator, body: { service: 'redis-cache' } });
    expect(again.status).toBe(404);
  });

  it('validates the start body field by field', async () => {
    const res = await api.tool('POST', '/api/tools/maintenance', {
      user: operator,
      body: { service: '', duration_minutes: 0 },
    });
    expect(res.status).toBe(400);
    expect(res.body.error.details.map((d: { path: string }) => d.path).sort()).toEqual(['duration_minutes', 'reason', 'service']);
    const unknown = await api.tool('POST', '/api/tools/maintenance', {
      user: operator,
      body: { service: 'nope', duration_minutes: 5, reason: 'x' },
    });
    expect(unknown.status).toBe(404);
  });
});

describe('deployments', () => {
  it('lists newest first with filters; 404 for unknown service or environment', async () => {
    const res = await api.tool('GET', '/api/tools/deployments?service=auth-service&environment=production', { user: viewer });
    expect(res.status).toBe(200);
    expect(res.body.items.map((d: { version: string }) => d.version)).toEqual(['1.21.4', '1.22.0']);
    expect((await api.tool('GET', '/api/tools/deployments?service=nope', { user: viewer })).status).toBe(404);
    expect((await api.tool('GET', '/api/tools/deployments?environment=moon', { user: viewer })).status).toBe(404);
    expect((await api.tool('GET', '/api/tools/deployments?limit=0', { user: viewer })).status).toBe(400);
  });

  it('deploys (admin), and the environment then runs the new version', async () => {
    const res = await api.tool('POST', '/api/tools/deployments', {
      user: admin,
      body: { service: 'checkout-api', version: '5.3.0', environment: 'production' },
    });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ service: 'checkout-api', version: '5.3.0', status: 'succeeded', previous_version: '5.2.3', deployed_by: 'admin' });
    const env = await api.tool('GET', '/api/tools/environment?environment=production', { user: viewer });
    expect(env.body.services.find((s: { service: string }) => s.service === 'checkout-api').version).toBe('5.3.0');
    const badVersion = await api.tool('POST', '/api/tools/deployments', {
      user: admin,
      body: { service: 'checkout-api', version: '5.3.0; rm -rf /', environment: 'production' },
    });
    expect(badVersion.status).toBe(400);
    const badEnv = await api.tool('POST', '/api/tools/deployments', {
      user: admin,
      body: { service: 'checkout-api', version: '5.3.1', environment: 'moon' },
    });
    expect(badEnv.status).toBe(404);
  });
});

describe('health and environment', () => {
  it('reports all services with a summary, or one; 404 for unknown', async () => {
    const all = await api.tool('GET', '/api/tools/health', { user: viewer });
    expect(all.status).toBe(200);
    expect(all.body.summary).toMatchObject({ total: 12, degraded: 1 });
    const one = await api.tool('GET', '/api/tools/health?service=search-api', { user: viewer });
    expect(one.body).toMatchObject({ service: 'search-api', status: 'degraded' });
    expect(one.body.latency_p95_ms).toBeGreaterThan(500);
    expect((await api.tool('GET', '/api/tools/health?service=nope', { user: viewer })).status).toBe(404);
  });

  it('describes environments; 404 for unknown', async () => {
    const all = await api.tool('GET', '/api/tools/environment', { user: viewer });
    expect(all.body.items.map((e: { name: string }) => e.name)).toEqual(['production', 'staging', 'dev']);
    const staging = await api.tool('GET', '/api/tools/environment?environment=staging', { user: viewer });
    expect(staging.body).toMatchObject({ name: 'staging', region: 'eu-west-1' });
    expect(staging.body.services.length).toBeGreaterThan(5);
    expect((await api.tool('GET', '/api/tools/environment?environment=moon', { user: viewer })).status).toBe(404);
  });
});

describe('tasks', () => {
  it('creates (201) with defaults and lists newest first', async () => {
    const res = await api.tool('POST', '/api/tools/tasks', { user: operator, body: { title: 'Check cache evictions', service: 'redis-cache' } });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ title: 'Check cache evictions', priority: 'medium', status: 'open', created_by: 'operator' });
    const list = await api.tool('GET', '/api/tools/tasks', { user: viewer });
    expect(list.body.items[0].id).toBe(res.body.id);
    const bad = await api.tool('POST', '/api/tools/tasks', { user: operator, body: { title: 'x', priority: 'urgent' } });
    expect(bad.status).toBe(400);
    expect(bad.body.error.details[0].path).toBe('priority');
    const unknown = await api.tool('POST', '/api/tools/tasks', { user: operator, body: { title: 'x', service: 'nope' } });
    expect(unknown.status).toBe(404);
  });

  it('refuses bodies over the size limit with 413', async () => {
    const res = await api.tool('POST', '/api/tools/tasks', { user: operator, body: { title: 'x', description: 'y'.repeat(1_100_000) } });
    expect(res.status).toBe(413);
    expect(res.body.error.code).toBe('PAYLOAD_TOO_LARGE');
  });
});

describe('audit of tool calls', () => {
  it('writes one row per call with both principals, arguments, outcome, tool_call_id and conversation', async () => {
    const conversationId = crypto.randomUUID();
    await api.tool('GET', '/api/tools/health?service=cdn-edge', {
      user: viewer,
      headers: { 'x-tool-call-id': 'call_audit_1', 'x-conversation-id': conversationId },
    });
    const [row] = await auditRows(api.db, 'tool_call_id = $1', ['call_audit_1']);
    expect(row).toMatchObject({
      service_actor: 'airlock-gateway',
      username: 'viewer',
      user_role: 'viewer',
      operation: 'check_health',
      arguments: { service: 'cdn-edge' },
      outcome: 'success',
      status_code: 200,
      conversation_id: conversationId,
    });
    expect(row.user_id).toMatch(/^[0-9a-f-]{36}$/);
    expect(row.at).toBeInstanceOf(Date);
  });

  it('audits refused calls too: 403 with the missing permission, 400, 404', async () => {
    const denied = await api.tool('POST', '/api/tools/deployments', {
      user: operator,
      body: { service: 'payments-api', version: '9.9.9', environment: 'production' },
      headers: { 'idempotency-key': 'call_denied_1' },
    });
    expect(denied.status).toBe(403);
    expect(denied.body.error).toMatchObject({ code: 'FORBIDDEN', details: { permission: 'deployments:write' } });
    const [row] = await auditRows(api.db, 'tool_call_id = $1', ['call_denied_1']);
    expect(row).toMatchObject({ operation: 'deploy_service', outcome: 'denied', status_code: 403, error_code: 'FORBIDDEN', username: 'operator' });
    expect(row.arguments).toMatchObject({ service: 'payments-api', version: '9.9.9' });
    await api.tool('GET', '/api/tools/dashboards/nope', { user: viewer, headers: { 'x-tool-call-id': 'call_nf' } });
    expect((await auditRows(api.db, 'tool_call_id = $1', ['call_nf']))[0]).toMatchObject({ outcome: 'not_found', status_code: 404 });
    await api.tool('GET', '/api/tools/dashboards?limit=abc', { user: viewer, headers: { 'x-tool-call-id': 'call_bad' } });
    expect((await auditRows(api.db, 'tool_call_id = $1', ['call_bad']))[0]).toMatchObject({ outcome: 'invalid', status_code: 400 });
  });
});

/**
 * RBAC table: every role x every tool operation -> allowed or 403 FORBIDDEN naming the permission.
 * "Allowed" means the request got past RBAC (any status but 401/403).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApi, type ApiHarness } from './api-support.ts';

let api: ApiHarness;
const tokens: Record<string, string> = {};
beforeAll(async () => {
  api = await startApi();
  for (const role of ['viewer', 'operator', 'admin']) tokens[role] = await api.login(role);
});
afterAll(() => api.close());

const OPERATIONS: { op: string; method: string; path: string; body?: unknown; permission: string | null }[] = [
  { op: 'show_capabilities', method: 'GET', path: '/api/tools/capabilities', permission: null },
  { op: 'search_dashboards', method: 'GET', path: '/api/tools/dashboards?q=latency', permission: 'dashboards:read' },
  { op: 'get_dashboard', method: 'GET', path: '/api/tools/dashboards/slo-overview', permission: 'dashboards:read' },
  { op: 'list_maintenance_events', method: 'GET', path: '/api/tools/maintenance', permission: 'maintenance:read' },
  { op: 'start_maintenance', method: 'POST', path: '/api/tools/maintenance', body: { service: 'orders-api', duration_minutes: 5, reason: 'rbac' }, permission: 'maintenance:write' },
  { op: 'end_maintenance', method: 'POST', path: '/api/tools/maintenance/end', body: { service: 'orders-api' }, permission: 'maintenance:write' },
  { op: 'list_deployments', method: 'GET', path: '/api/tools/deployments', permission: 'deployments:read' },
  { op: 'deploy_service', method: 'POST', path: '/api/tools/deployments', body: { service: 'orders-api', version: '3.9.0', environment: 'dev' }, permission: 'deployments:write' },
  { op: 'check_health', method: 'GET', path: '/api/tools/health', permission: 'health:read' },
  { op: 'get_environment', method: 'GET', path: '/api/tools/environment', permission: 'environment:read' },
  { op: 'create_task', method: 'POST', path: '/api/tools/tasks', body: { title: 'rbac' }, permission: 'tasks:write' },
  { op: 'list_tasks', method: 'GET', path: '/api/tools/tasks', permission: 'tasks:read' },
];

// The expected table, written out rather than derived from the code under test.
const ALLOWED: Record<string, string[]> = {
  viewer: ['show_capabilities', 'search_dashboards', 'get_dashboard', 'list_maintenance_events', 'list_deployments', 'check_health', 'get_environment', 'list_tasks'],
  operator: ['show_capabilities', 'search_dashboards', 'get_dashboard', 'list_maintenance_events', 'start_maintenance', 'end_maintenance', 'list_deployments', 'check_health', 'get_environment', 'create_task', 'list_tasks'],
  admin: OPERATIONS.map((o) => o.op),
};

describe('role x operation', () => {
  for (const role of ['viewer', 'operator', 'admin']) {
    for (const o of OPERATIONS) {
      const allowed = ALLOWED[role].includes(o.op);
      it(`${role} ${o.op} -> ${allowed ? 'allowed' : '403'}`, async () => {
        const res = await api.tool(o.method, o.path, { user: tokens[role], body: o.body });
        if (allowed) {
          expect(res.status, JSON.stringify(res.body)).toBeLessThan(400);
        } else {
          expect(res.status).toBe(403);
          expect(res.body.error).toMatchObject({ code: 'FORBIDDEN', details: { permission: o.permission } });
        }
      });
    }
  }
});

describe('the service token alone grants nothing', () => {
  it('admin-only audit log refuses viewer and operator', async () => {
    for (const role of ['viewer', 'operator']) {
      const res = await api.request('GET', '/api/audit', { token: tokens[role] });
      expect(res.status).toBe(403);
      expect(res.body.error.details.permission).toBe('audit:read');
    }
    expect((await api.request('GET', '/api/audit', { token: tokens.admin })).status).toBe(200);
  });
});

/**
 * GET /api/audit: admin only, newest first, filters, keyset paging.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAuditWriter } from '../../server/api/tools/audit-writer.ts';
import { startApi, type ApiHarness } from './api-support.ts';

let api: ApiHarness;
let admin: string;
let viewer: string;
beforeAll(async () => {
  api = await startApi();
  [admin, viewer] = await Promise.all([api.login('admin'), api.login('viewer')]);
  for (let i = 0; i < 7; i++) {
    await api.tool('GET', '/api/tools/health', { user: viewer, headers: { 'x-tool-call-id': `h${i}`, 'x-conversation-id': 'conv-a' } });
  }
  await api.tool('POST', '/api/tools/deployments', {
    user: viewer,
    body: { service: 'cdn-edge', version: '1.0.0', environment: 'dev' },
    headers: { 'x-tool-call-id': 'denied-1', 'x-conversation-id': 'conv-b' },
  });
});
afterAll(() => api.close());

describe('GET /api/audit', () => {
  it('pages newest first with a cursor, without gaps or repeats', async () => {
    const first = await api.request('GET', '/api/audit?limit=5', { token: admin });
    expect(first.status).toBe(200);
    expect(first.body.items).toHaveLength(5);
    expect(first.body.items[0]).toMatchObject({ operation: 'deploy_service', outcome: 'denied', status_code: 403, tool_call_id: 'denied-1' });
    const ids = first.body.items.map((a: { id: string }) => Number(a.id));
    expect([...ids].sort((a, b) => b - a)).toEqual(ids);
    const second = await api.request('GET', `/api/audit?limit=5&cursor=${first.body.next_cursor}`, { token: admin });
    expect(second.body.items).toHaveLength(3);
    expect(second.body.next_cursor).toBeNull();
    expect(Number(second.body.items[0].id)).toBeLessThan(ids[4]);
  });

  it('filters by operation, outcome, user, conversation and tool_call_id', async () => {
    const q = async (qs: string) => (await api.request('GET', `/api/audit?${qs}`, { token: admin })).body.items as any[];
    expect(await q('operation=check_health')).toHaveLength(7);
    expect(await q('outcome=denied')).toHaveLength(1);
    expect(await q('conversation_id=conv-a')).toHaveLength(7);
    expect((await q('tool_call_id=h3'))[0]).toMatchObject({ tool_call_id: 'h3', username: 'viewer', service_actor: 'airlock-gateway' });
    const viewerId = (await api.request('GET', '/api/auth/me', { token: viewer })).body.id;
    expect(await q(`user_id=${viewerId}`)).toHaveLength(8);
    expect(await q(`since=${encodeURIComponent(new Date(Date.now() + 60_000).toISOString())}`)).toHaveLength(0);
  });

  it('is admin only (403 naming audit:read), needs a token (401), validates filters (400)', async () => {
    const denied = await api.request('GET', '/api/audit', { token: viewer });
    expect(denied.status).toBe(403);
    expect(denied.body.error.details).toEqual({ permission: 'audit:read' });
    expect((await api.request('GET', '/api/audit')).status).toBe(401);
    for (const qs of ['limit=0', 'outcome=maybe', 'user_id=x', 'since=yesterday', 'cursor=abc']) {
      expect((await api.request('GET', `/api/audit?${qs}`, { token: admin })).status, qs).toBe(400);
    }
  });
});

describe('audit writer (group commit)', () => {
  it('commits every concurrent write, batched, each resolving after its row exists', async () => {
    const writer = createAuditWriter(api.db.pool);
    const entry = (i: number) => ({
      serviceActor: 'bench',
      userId: null,
      username: null,
      userRole: null,
      operation: 'batch_test',
      method: 'GET',
      path: '/x',
      arguments: { i, nested: { ok: true } },
      outcome: 'success' as const,
      statusCode: 200,
      errorCode: null,
      toolCallId: `batch-${i}`,
      conversationId: null,
      durationMs: i,
    });
    await Promise.all(Array.from({ length: 40 }, (_, i) => writer.write(entry(i))));
    const { rows } = await api.db.pool.query("SELECT arguments, tool_call_id FROM audit_log WHERE operation = 'batch_test' ORDER BY id");
    expect(rows).toHaveLength(40);
    expect(rows.map((r) => r.tool_call_id)).toEqual(Array.from({ length: 40 }, (_, i) => `batch-${i}`));
    expect(rows[3].arguments).toEqual({ i: 3, nested: { ok: true } });
  });

  it('a row whose arguments cannot be stored does not lose its batch', async () => {
    const writer = createAuditWriter(api.db.pool);
    const entry = (i: number, args: Record<string, unknown>) => ({
      serviceActor: 'bench', userId: null, username: null, userRole: null, operation: 'poison_test', method: 'POST',
      path: '/x', arguments: args, outcome: 'invalid' as const, statusCode: 400, errorCode: null,
      toolCallId: `poison-${i}`, conversationId: null, durationMs: 1,
    });
    await Promise.all([writer.write(entry(0, { a: 1 })), writer.write(entry(1, { bad: 'nul\u0000here' })), writer.write(entry(2, { b: 2 }))]);
    const { rows } = await api.db.pool.query("SELECT tool_call_id, arguments FROM audit_log WHERE operation = 'poison_test' ORDER BY tool_call_id");
    expect(rows).toEqual([
      { tool_call_id: 'poison-0', arguments: { a: 1 } },
      { tool_call_id: 'poison-1', arguments: { unrecordable_arguments: true } },
      { tool_call_id: 'poison-2', arguments: { b: 2 } },
    ]);
  });

  it('a tool call with a NUL character is a 400, and still audited', async () => {
    const res = await api.tool('POST', '/api/tools/tasks', {
      user: admin,
      body: { title: 'nul\u0000title' },
      headers: { 'x-tool-call-id': 'nul-call' },
    });
    expect(res.status).toBe(400);
    expect(res.body.error.details[0]).toMatchObject({ path: 'title' });
    const { rows } = await api.db.pool.query("SELECT outcome, arguments FROM audit_log WHERE tool_call_id = 'nul-call'");
    expect(rows).toEqual([{ outcome: 'invalid', arguments: { unrecordable_arguments: true } }]);
  });
});

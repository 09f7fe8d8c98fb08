/**
 * Approve with a grant (issue 27 item 2) and a deny's reason (item 4), end to end: the real gateway
 * and api, PostgreSQL, the offline model, a real POLICY_FILE; v1 by fetch, /chat by the real
 * @gradio/client (every message checked against the strict wire schema). The approval offers a
 * grant (`grantable`) from its rule; approving with one runs the call and makes the grant, so the
 * next matching call runs with no card; the rule's max_grant_s and grantable: false hold at
 * creation; a deny's reason from /chat reaches the model.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { collect, connectChat, login } from '../helpers/chat-client.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { v1, waitForRun } from './v1-support.ts';

const POLICY = `tool_rules:
  deploy_service:
    - action: require_approval
      when: {environment: production}
      grantable: false
    - action: require_approval
      max_grant_s: 3600
`;

let dir: string;
let db: TestDatabase;
let server: TestServer;
let admin: string;
let operator: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'airlock-grants-'));
  await writeFile(join(dir, 'policy.yaml'), POLICY);
  db = await createTestDatabase();
  server = await startTestServer({ db, env: { OFFLINE_MODEL_DELAY_MS: '1', POLICY_FILE: join(dir, 'policy.yaml') } });
  admin = await login(server.url, 'admin');
  operator = await login(server.url, 'operator');
});
afterEach(async () => {
  await db.pool.query(`UPDATE approval_grants SET revoked_at = now() WHERE revoked_at IS NULL`);
});
afterAll(async () => {
  await server?.close();
  await db?.drop();
  await rm(dir, { recursive: true, force: true });
});

const deployed = async (service: string, version: string, environment: string) =>
  (await db.pool.query(`SELECT count(*)::int AS n FROM deployments WHERE service = $1 AND environment = $3 AND version = $2`, [service, version, environment])).rows[0].n as number;

async function deploy(token: string, text: string) {
  const started = await v1(server.url, '/runs', { token, body: { messages: [{ role: 'user', content: text }] } });
  expect(started.status).toBe(202);
  return waitForRun(server.url, token, started.body.run_id, (r) => r.status === 'completed' || r.status === 'awaiting_approval');
}

describe('approve with a grant', () => {
  it('v1: the approval offers its rule grant; approving with one runs the call and the next matching call runs with no card', async () => {
    const first = await deploy(admin, 'deploy payments-api 8.1.0 to staging');
    expect(first.status).toBe('awaiting_approval');
    const [approvalId] = first.approval_request_ids as string[];
    const approval = (await v1(server.url, `/approvals/${approvalId}`, { token: admin })).body;
    // The narrowest useful grant (issue 37 item 6): this service to this environment.
    expect(approval.grantable).toEqual({ max_ttl_s: 3600, match: { environment: 'staging', service: 'payments-api' } });

    // Longer than the rule's max_grant_s: refused at creation, with the limit; nothing decided.
    const tooLong = await v1(server.url, `/approvals/${approvalId}/approve`, { token: admin, body: { grant: { ttl_s: 7200 } } });
    expect(tooLong.status).toBe(400);
    expect(tooLong.body.error).toMatchObject({ code: 'VALIDATION_ERROR', details: { max_ttl_s: 3600 } });
    // A match that does not cover the call is refused; unknown fields too; a deny takes no grant.
    expect((await v1(server.url, `/approvals/${approvalId}/approve`, { token: admin, body: { grant: { ttl_s: 60, match: { environment: 'dev' } } } })).status).toBe(400);
    expect((await v1(server.url, `/approvals/${approvalId}/approve`, { token: admin, body: { grant: { ttl_s: 60, forever: true } } })).status).toBe(400);
    expect((await v1(server.url, `/approvals/${approvalId}/deny`, { token: admin, body: { grant: { ttl_s: 60 } } })).status).toBe(400);
    expect((await db.pool.query(`SELECT count(*)::int AS n FROM approval_grants`)).rows[0].n).toBe(0);

    const approved = await v1(server.url, `/approvals/${approvalId}/approve`, { token: admin, body: { grant: { ttl_s: 3600 } } });
    expect(approved.status, JSON.stringify(approved.body)).toBe(200);
    expect(approved.body.grant_id).toMatch(/^[0-9a-f-]{36}$/);
    await waitForRun(server.url, admin, first.run_id, (r) => r.status === 'completed');
    expect(await deployed('payments-api', '8.1.0', 'staging')).toBe(1);
    const grants = (await v1(server.url, '/grants', { token: admin })).body.grants.filter((g: { revoked_at: string | null }) => g.revoked_at === null);
    expect(grants).toMatchObject([{ id: approved.body.grant_id, tool: 'deploy_service', match: { environment: 'staging', service: 'payments-api' }, scope: 'user', created_by: 'admin', for_user: 'admin', uses: 0 }]);
    const ttl = new Date(grants[0].expires_at).getTime() - Date.now();
    expect(ttl).toBeGreaterThan(3500_000);
    expect(ttl).toBeLessThanOrEqual(3600_000);

    // The same service, another version, the same environment: the grant covers it.
    const next = await deploy(admin, 'deploy payments-api 8.2.0 to staging');
    expect(next.status).toBe('completed');
    expect(next.approval_request_ids).toEqual([]);
    expect(await deployed('payments-api', '8.2.0', 'staging')).toBe(1);
    // Another service to the same environment: not covered (issue 37 item 6: it used to run with no card).
    const other = await deploy(admin, 'deploy checkout-api 8.2.0 to staging');
    expect(other.status).toBe('awaiting_approval');
    expect(await deployed('checkout-api', '8.2.0', 'staging')).toBe(0);
    expect((await v1(server.url, `/approvals/${other.approval_request_ids[0]}/deny`, { token: admin, body: {} })).status).toBe(200);
    // Production: outside the match, and its rule is never grantable.
    const production = await deploy(admin, 'deploy payments-api 8.3.0 to production');
    expect(production.status).toBe('awaiting_approval');
    const prodId = production.approval_request_ids[0];
    expect((await v1(server.url, `/approvals/${prodId}`, { token: admin })).body.grantable).toBeNull();
    const refused = await v1(server.url, `/approvals/${prodId}/approve`, { token: admin, body: { grant: { ttl_s: 60 } } });
    expect(refused.status).toBe(403);
    expect(refused.body.error.code).toBe('FORBIDDEN');
    expect(await deployed('payments-api', '8.3.0', 'production')).toBe(0);
  });

  it('a tenant grant needs an admin: an operator approving their own maintenance may grant for themselves only', async () => {
    const asked = await deploy(operator, 'start maintenance on search-api for 30 minutes because reindex');
    expect(asked.status).toBe('awaiting_approval');
    const id = asked.approval_request_ids[0];
    const tenant = await v1(server.url, `/approvals/${id}/approve`, { token: operator, body: { grant: { ttl_s: 60, scope: 'tenant' } } });
    expect(tenant.status).toBe(403);
    expect(tenant.body.error.code).toBe('FORBIDDEN');
    const own = await v1(server.url, `/approvals/${id}/approve`, { token: operator, body: { grant: { ttl_s: 60 } } });
    expect(own.status, JSON.stringify(own.body)).toBe(200);
    const { rows } = await db.pool.query(`SELECT match, scope_user IS NOT NULL AS for_user FROM approval_grants WHERE id = $1`, [own.body.grant_id]);
    expect(rows).toEqual([{ match: { service: 'search-api' }, for_user: true }]);
  });

  it('v1 POST /grants: the rule the match falls under decides (grantable: false refused, max_grant_s the limit)', async () => {
    const prod = await v1(server.url, '/grants', { token: admin, body: { tool: 'deploy_service', match: { environment: 'production' }, ttl_s: 60 } });
    expect(prod.status).toBe(403);
    expect(prod.body.error.code).toBe('FORBIDDEN');
    const long = await v1(server.url, '/grants', { token: admin, body: { tool: 'deploy_service', match: { environment: 'staging' }, ttl_s: 3601 } });
    expect(long.status).toBe(400);
    expect(long.body.error.details).toEqual({ max_ttl_s: 3600 });
    // A viewer may not run the tool, so may not grant it.
    const viewer = await login(server.url, 'viewer');
    expect((await v1(server.url, '/grants', { token: viewer, body: { tool: 'deploy_service', match: { environment: 'staging' }, ttl_s: 60 } })).status).toBe(403);
    expect((await v1(server.url, '/grants', { token: admin, body: { tool: 'deploy_service', match: { environment: 'staging' }, ttl_s: 3600 } })).status).toBe(201);
  });

  it('/chat: confirm_required says grantable; action confirm + grant runs the call and makes the grant; a deny reason in text reaches the model', async () => {
    const client = await connectChat(server.url, admin);
    const asked = await collect(client.submit('/chat', { message: { text: 'deploy orders-api 8.4.0 to staging', files: [] }, conversation_id: 'new', action: '' }));
    const card = asked.messages.find((m) => m.metadata.type === 'confirm_required')!.metadata;
    expect(card.grantable).toEqual({ max_ttl_s: 3600, match: { environment: 'staging', service: 'orders-api' } });
    const conversationId = card.thread_id as string;
    const confirmed = await collect(client.submit('/chat', { conversation_id: conversationId, action: 'confirm', approval_id: card.approval_id, grant: { ttl_s: 600 } }));
    expect(confirmed.types).toContain('tool_end');
    expect(await deployed('orders-api', '8.4.0', 'staging')).toBe(1);
    // The resolved card says the grant was made (issue 37 item 6), live and in the stored history.
    const resolved = confirmed.messages.find((m) => m.metadata.type === 'confirm_resolved')!.metadata as { grant_made?: { id: string } };
    expect(resolved.grant_made).toMatchObject({ match: { environment: 'staging', service: 'orders-api' }, ttl_s: 600 });
    const stored = await db.pool.query(`SELECT metadata->'grant_made' AS g FROM messages WHERE conversation_id = $1 AND metadata->>'approval_id' = $2`, [conversationId, card.approval_id]);
    expect(stored.rows).toMatchObject([{ g: { id: resolved.grant_made?.id, match: { environment: 'staging', service: 'orders-api' }, ttl_s: 600 } }]);
    const { rows } = await db.pool.query(`SELECT g.match, g.scope_user, u.username FROM approval_grants g JOIN users u ON u.id = g.created_by JOIN approvals a ON a.grant_id = g.id WHERE a.id = $1`, [card.approval_id]);
    expect(rows).toMatchObject([{ match: { environment: 'staging', service: 'orders-api' }, username: 'admin' }]);
    // The next staging deploy runs under it: its tool card names the grant, who made it and until when.
    const granted = await collect(client.submit('/chat', { message: { text: 'deploy orders-api 8.4.1 to staging', files: [] }, conversation_id: conversationId, action: '' }));
    const start = granted.messages.find((m) => m.metadata.type === 'tool_start' && m.metadata.tool === 'deploy_service')!.metadata;
    expect(start).toMatchObject({ grant_by: 'admin' });
    expect(typeof start.grant_id).toBe('string');
    expect(Date.parse(start.grant_until as string)).toBeGreaterThan(Date.now());
    // A grant goes with a confirm only.
    const misuse = await collect(client.submit('/chat', { conversation_id: conversationId, action: 'deny', grant: { ttl_s: 60 } }));
    expect(misuse.status).toBe('error');
    await db.pool.query(`UPDATE approval_grants SET revoked_at = now() WHERE revoked_at IS NULL`);

    const again = await collect(client.submit('/chat', { message: { text: 'deploy orders-api 8.5.0 to staging', files: [] }, conversation_id: conversationId, action: '' }));
    const second = again.messages.find((m) => m.metadata.type === 'confirm_required')!.metadata;
    await collect(client.submit('/chat', { conversation_id: conversationId, action: 'deny', approval_id: second.approval_id, text: 'use the canary first' }));
    const told = await db.pool.query(`SELECT payload->>'error' AS error FROM conversation_events WHERE conversation_id = $1 AND kind = 'tool.result' AND payload->>'status' = 'error'`, [conversationId]);
    expect(told.rows.map((r) => r.error)).toEqual([expect.stringContaining('Their reason: "use the canary first"')]);
    expect((await db.pool.query(`SELECT decision_note FROM approvals WHERE id = $1`, [second.approval_id])).rows[0].decision_note).toBe('use the canary first');
    expect(await deployed('orders-api', '8.5.0', 'staging')).toBe(0);
  });
});

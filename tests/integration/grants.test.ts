/**
 * Standing grants (issue 27 item 2) end to end: real gateway and api processes, real PostgreSQL, the
 * offline model, the v1 API by fetch. A grant for staging deploys lets the next staging deploy run
 * with no approval (its tool.call and tool.result carry grant_id, the grant counts the use); a
 * production deploy, outside the match, still asks; once revoked, the very next staging deploy asks.
 * Bad input is a clear 400/403, never a grant.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chat, collect, connectChat, login } from '../helpers/chat-client.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { v1, waitForRun } from './v1-support.ts';

let db: TestDatabase;
let server: TestServer;
let admin: string;
let operator: string;

beforeAll(async () => {
  db = await createTestDatabase();
  server = await startTestServer({ db, env: { OFFLINE_MODEL_DELAY_MS: '1', JOBS_SUPERVISE_S: '1', JOBS_POLL_S: '0.5' } });
  admin = await login(server.url, 'admin');
  operator = await login(server.url, 'operator');
});
afterAll(async () => {
  await server?.close();
  await db?.drop();
});

const deployed = async (version: string, environment: string) =>
  (await db.pool.query(`SELECT count(*)::int AS n FROM deployments WHERE service = 'payments-api' AND environment = $2 AND version = $1`, [version, environment])).rows[0].n as number;

/** Starts a run that asks for the deploy and waits until it completed or paused. */
async function deploy(text: string) {
  const started = await v1(server.url, '/runs', { token: admin, body: { messages: [{ role: 'user', content: text }] } });
  expect(started.status).toBe(202);
  return waitForRun(server.url, admin, started.body.run_id, (r) => r.status === 'completed' || r.status === 'awaiting_approval');
}

const toolEvents = async (kind: 'tool.call' | 'tool.result', version: string) =>
  (await db.pool.query(`SELECT payload FROM conversation_events WHERE kind = $1 AND payload->>'tool' = 'deploy_service' AND ($1 = 'tool.result' OR payload->'input'->>'version' = $2)`, [kind, version])).rows.map((r) => r.payload);

describe('standing grants', () => {
  it('a matching call runs without a card under grant_id; outside the match it asks; revoked, the next call asks', async () => {
    const made = await v1(server.url, '/grants', { token: admin, body: { tool: 'deploy_service', match: { environment: 'staging' }, ttl_s: 3600 } });
    expect(made.status, JSON.stringify(made.body)).toBe(201);
    expect(made.body).toMatchObject({ tool: 'deploy_service', match: { environment: 'staging' }, scope: 'user', created_by: 'admin', for_user: 'admin', revoked_at: null, uses: 0 });
    const grantId = made.body.id as string;

    const granted = await deploy('deploy payments-api 7.8.1 to staging');
    expect(granted.status).toBe('completed');
    expect(granted.approval_request_ids).toEqual([]);
    expect(await deployed('7.8.1', 'staging')).toBe(1);
    const [call] = await toolEvents('tool.call', '7.8.1');
    expect(call.grant_id).toBe(grantId);
    const results = (await toolEvents('tool.result', '')).filter((p) => p.tool_call_id === call.tool_call_id);
    expect(results).toMatchObject([{ status: 'done', grant_id: grantId }]);
    expect((await v1(server.url, '/grants', { token: admin })).body.grants).toMatchObject([{ id: grantId, uses: 1 }]);

    const production = await deploy('deploy payments-api 7.8.2 to production');
    expect(production.status).toBe('awaiting_approval');
    expect(await deployed('7.8.2', 'production')).toBe(0);

    const revoked = await v1(server.url, `/grants/${grantId}`, { token: admin, method: 'DELETE' });
    expect(revoked.status).toBe(200);
    expect(revoked.body.revoked_at).not.toBeNull();
    const after = await deploy('deploy payments-api 7.8.3 to staging');
    expect(after.status).toBe('awaiting_approval');
    expect(await deployed('7.8.3', 'staging')).toBe(0);
    expect((await v1(server.url, `/grants/${grantId}`, { token: admin, method: 'DELETE' })).status).toBe(404);
  });

  it('on /chat (the real Gradio client, every message checked against the strict wire schema): tool_start and tool_end name the grant', async () => {
    const made = await v1(server.url, '/grants', { token: admin, body: { tool: 'deploy_service', match: { environment: 'staging', service: 'payments-api' }, ttl_s: 600 } });
    const client = await connectChat(server.url, admin);
    const turn = await collect(chat(client, 'deploy payments-api 7.9.0 to staging'));
    const steps = turn.messages.map((m) => m.metadata).filter((m) => m.tool === 'deploy_service');
    expect(steps.map((m) => [m.type, m.grant_id])).toEqual([['tool_start', made.body.id], ['tool_end', made.body.id]]);
    expect(turn.messages.some((m) => m.metadata.type === 'confirm_required')).toBe(false);
    expect(await deployed('7.9.0', 'staging')).toBe(1);
    await v1(server.url, `/grants/${made.body.id}`, { token: admin, method: 'DELETE' });
  });

  it('refuses bad grants with a clear code, and nobody else sees or revokes a user grant', async () => {
    const bad = [
      { tool: 'deploy_service', ttl_s: 8 * 3600 + 1 },
      { tool: 'deploy_service', ttl_s: 60, extra: true },
      { tool: 'deploy service', ttl_s: 60 },
      { tool: 'deploy_service', ttl_s: 60, scope: 'world' },
    ];
    for (const body of bad) {
      const res = await v1(server.url, '/grants', { token: admin, body });
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.error.code).toBe('VALIDATION_ERROR');
    }
    const tenant = await v1(server.url, '/grants', { token: operator, body: { tool: 'start_maintenance', ttl_s: 60, scope: 'tenant' } });
    expect(tenant.status).toBe(403);
    expect(tenant.body.error.code).toBe('FORBIDDEN');
    // An empty match under a rule without `when` would cover every call of the tool (issue 36 item 2).
    const empty = await v1(server.url, '/grants', { token: admin, body: { tool: 'start_maintenance', match: {}, ttl_s: 60 } });
    expect(empty.status).toBe(400);
    expect(empty.body.error.code).toBe('VALIDATION_ERROR');
    const own = await v1(server.url, '/grants', { token: admin, body: { tool: 'start_maintenance', match: { service: 'orders-api' }, ttl_s: 60 } });
    expect(own.status).toBe(201);
    expect((await v1(server.url, '/grants', { token: operator })).body.grants).toEqual([]);
    expect((await v1(server.url, `/grants/${own.body.id}`, { token: operator, method: 'DELETE' })).status).toBe(404);
    expect((await db.pool.query(`SELECT count(*)::int AS n FROM approval_grants WHERE revoked_at IS NULL`)).rows[0].n).toBe(1);
  });
});

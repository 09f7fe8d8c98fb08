/**
 * Issue 36's two High findings, as the audit performed them, on the real gateway and api, a real
 * PostgreSQL, the offline model and a real POLICY_FILE (a passkey step-up for production, an
 * admin-only maintenance of db-primary, a catch-all grantable maintenance rule):
 * - item 1: an edit of a plain staging deploy into production, by v1 `approve {arguments}`, the
 *   inbox, and /chat `action: confirm` with `arguments`, needs the passkey exactly as the direct
 *   production deploy does (403 STEP_UP_REQUIRED, nothing run, nothing recorded); with the passkey
 *   signed over the edited call's hash (passkey-challenge {arguments}) it runs once.
 * - item 2: a grant with an empty `match`, through an approve or `POST /grants`, is refused (400);
 *   a grant made under the catch-all rule never lets a db-primary maintenance (another rule) run
 *   without its admin, even with a match that covers it; a changed policy retires a grant.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { collect, connectChat, login } from '../helpers/chat-client.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { SoftAuthenticator } from '../helpers/soft-authenticator.ts';
import { v1, waitForRun } from './v1-support.ts';

const POLICY = `tool_rules:
  deploy_service:
    - action: require_approval
      when: {environment: production}
      step_up: passkey
    - require_approval
  start_maintenance:
    - action: require_approval
      when: {service: db-primary}
      approvals: {count: 1, roles: [admin]}
    - action: require_approval
      max_grant_s: 3600
`;

let dir: string;
let db: TestDatabase;
let server: TestServer;
const tokens: Record<string, string> = {};

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'airlock-rules-'));
  await writeFile(join(dir, 'policy.yaml'), POLICY);
  db = await createTestDatabase();
  server = await startTestServer({ db, env: { OFFLINE_MODEL_DELAY_MS: '1', POLICY_FILE: join(dir, 'policy.yaml') } });
  for (const u of ['admin', 'operator']) tokens[u] = await login(server.url, u);
}, 60_000);
afterAll(async () => {
  await server?.close();
  await db?.drop();
  await rm(dir, { recursive: true, force: true });
});

async function paused(user: string, text: string): Promise<{ runId: string; approvalId: string; conversationId: string }> {
  const run = await v1(server.url, '/runs', { token: tokens[user], body: { messages: [{ role: 'user', content: text }] } });
  expect(run.status, JSON.stringify(run.body)).toBe(202);
  const state = await waitForRun(server.url, tokens[user], run.body.run_id, (r) => r.status === 'awaiting_approval' || r.status === 'completed');
  expect(state.status).toBe('awaiting_approval');
  const approvalId = state.approval_request_ids[0] as string;
  const row = await db.pool.query<{ conversation_id: string }>('SELECT conversation_id FROM approvals WHERE id = $1', [approvalId]);
  return { runId: run.body.run_id, approvalId, conversationId: row.rows[0].conversation_id };
}

const approve = (user: string, approvalId: string, body: Record<string, unknown> = {}, headers: Record<string, string> = {}) =>
  v1(server.url, `/approvals/${approvalId}/approve`, { token: tokens[user], body, headers });

const deployments = async (version: string) => (await db.pool.query(`SELECT environment FROM deployments WHERE version = $1`, [version])).rows.map((r) => r.environment as string);
const row = async (id: string) => (await db.pool.query('SELECT status, final_args, step_up FROM approvals WHERE id = $1', [id])).rows[0];
const windows = async (reason: string) => (await db.pool.query(`SELECT service FROM maintenance_events WHERE reason = $1`, [reason])).rows.map((r) => r.service as string);

describe('issue 36 item 1: an edit keeps the step-up of the rule it falls under', () => {
  const production = (version: string) => ({ service: 'payments-api', version, environment: 'production' });

  it('v1 and the inbox: approve {arguments} into production without a passkey is 403, as the direct production deploy is', async () => {
    const direct = await paused('admin', 'deploy payments-api 2.0.0 to production');
    expect(await approve('admin', direct.approvalId)).toMatchObject({ status: 403, body: { error: { code: 'STEP_UP_REQUIRED' } } });

    const { approvalId } = await paused('admin', 'deploy payments-api 2.0.0 to staging');
    for (const headers of [{}, {}, { 'Airlock-Channel': 'inbox' }] as Array<Record<string, string>>) {
      const refused = await approve('admin', approvalId, { arguments: production('2.0.0-edited') }, headers);
      expect(refused.status, JSON.stringify(refused.body)).toBe(403);
      expect(refused.body.error.code).toBe('STEP_UP_REQUIRED');
    }
    expect(await row(approvalId)).toMatchObject({ status: 'pending', final_args: null, step_up: null });
    expect((await db.pool.query('SELECT 1 FROM approval_decisions WHERE approval_id = $1', [approvalId])).rowCount).toBe(0);
    expect(await deployments('2.0.0-edited')).toEqual([]);
  }, 60_000);

  it('/chat confirm with arguments into production: STEP_UP_REQUIRED, nothing runs', async () => {
    const client = await connectChat(server.url, tokens.admin);
    const asked = await collect(client.submit('/chat', { message: { text: 'deploy payments-api 2.1.0 to staging', files: [] }, conversation_id: 'new', action: '' }));
    const card = asked.messages.find((m) => m.metadata.type === 'confirm_required')!;
    const approvalId = card.metadata.approval_id as string;
    const conversationId = asked.final!.metadata.conversation_id as string;
    const confirmed = await collect(client.submit('/chat', { message: { text: '', files: [] }, conversation_id: conversationId, action: 'confirm', approval_id: approvalId, arguments: production('2.1.0-edited') }));
    expect(confirmed.messages.map((m) => m.metadata)).toContainEqual(expect.objectContaining({ type: 'error', code: 'STEP_UP_REQUIRED' }));
    expect(await row(approvalId)).toMatchObject({ status: 'pending', final_args: null });
    expect(await deployments('2.1.0-edited')).toEqual([]);
    await client.close?.();
  }, 60_000);

  it('with the passkey signed over the edited call, the edit runs once and the row keeps its step-up', async () => {
    const authenticator = new SoftAuthenticator(server.url);
    const options = await v1(server.url, '/passkeys/options', { token: tokens.admin, body: {} });
    expect((await v1(server.url, '/passkeys', { token: tokens.admin, body: { response: authenticator.register(options.body) } })).status).toBe(201);
    const { runId, approvalId } = await paused('admin', 'deploy payments-api 2.2.0 to staging');
    const edited = production('2.2.0-edited');
    // A signature over the call as proposed does not cover the edit.
    const proposed = (await v1(server.url, `/approvals/${approvalId}/passkey-challenge`, { token: tokens.admin, body: {} })).body;
    const wrong = await approve('admin', approvalId, { arguments: edited, passkey: { nonce: proposed.nonce, response: authenticator.assert(proposed.options) } });
    expect(wrong).toMatchObject({ status: 403, body: { error: { code: 'STEP_UP_REQUIRED' } } });
    const signed = (await v1(server.url, `/approvals/${approvalId}/passkey-challenge`, { token: tokens.admin, body: { arguments: edited } })).body;
    const approved = await approve('admin', approvalId, { arguments: edited, passkey: { nonce: signed.nonce, response: authenticator.assert(signed.options) } });
    expect(approved.status, JSON.stringify(approved.body)).toBe(200);
    expect(approved.body).toMatchObject({ status: 'approved', step_up: 'passkey', edited_args: edited });
    await waitForRun(server.url, tokens.admin, runId, (r) => r.status === 'completed', 30_000);
    expect(await deployments('2.2.0-edited')).toEqual(['production']);
    const decision = (await db.pool.query('SELECT passkey FROM approval_decisions WHERE approval_id = $1', [approvalId])).rows[0];
    expect(decision.passkey).toMatchObject({ credential_id: authenticator.credentialId, nonce: signed.nonce });
  }, 60_000);
});

describe('issue 36 item 2: a grant keeps the rule it was made under', () => {
  it("an approve with {grant: {match: {}}} under the catch-all rule is 400; the operator's db-primary maintenance still asks an admin", async () => {
    const own = await paused('operator', 'start maintenance on orders-api for 30 minutes because of a disk swap');
    const refused = await approve('operator', own.approvalId, { grant: { ttl_s: 3600, match: {} } });
    expect(refused.status, JSON.stringify(refused.body)).toBe(400);
    expect(refused.body.error).toMatchObject({ code: 'VALIDATION_ERROR', message: expect.stringContaining('every call') });
    expect((await db.pool.query('SELECT count(*)::int AS n FROM approval_grants')).rows[0].n).toBe(0);
    expect(await row(own.approvalId)).toMatchObject({ status: 'pending' });
    // Approved once, without a grant: the window opens.
    expect((await approve('operator', own.approvalId)).status).toBe(200);
    await waitForRun(server.url, tokens.operator, own.runId, (r) => r.status === 'completed', 30_000);
    expect(await windows('disk swap')).toEqual(['orders-api']);

    const primary = await paused('operator', 'start maintenance on db-primary for 30 minutes because of a disk swap two');
    expect(await windows('disk swap two')).toEqual([]);
    expect((await approve('operator', primary.approvalId)).status).toBe(403);
  }, 60_000);

  it('a grant whose match covers a db-primary call, made under the catch-all rule, does not cover it (another rule); it covers its own rule', async () => {
    const own = await paused('operator', 'start maintenance on orders-api for 45 minutes because of a fan check');
    const made = await approve('operator', own.approvalId, { grant: { ttl_s: 3600, match: { duration_minutes: 45 } } });
    expect(made.status, JSON.stringify(made.body)).toBe(200);
    await waitForRun(server.url, tokens.operator, own.runId, (r) => r.status === 'completed', 30_000);
    const stored = (await db.pool.query('SELECT rule_hash, approvers FROM approval_grants WHERE id = $1', [made.body.grant_id])).rows[0];
    expect(stored).toMatchObject({ rule_hash: expect.stringMatching(/^[0-9a-f]{64}$/), approvers: { required: 1, roles: [], users: [] } });

    // The same rule (another service, 45 minutes): runs under the grant, no card.
    const covered = await v1(server.url, '/runs', { token: tokens.operator, body: { messages: [{ role: 'user', content: 'start maintenance on search-api for 45 minutes because of a fan check two' }] } });
    expect((await waitForRun(server.url, tokens.operator, covered.body.run_id, (r) => r.status === 'completed' || r.status === 'awaiting_approval')).status).toBe('completed');
    expect(await windows('fan check two')).toEqual(['search-api']);
    // db-primary, 45 minutes: the match fits, but its rule needs an admin: it asks.
    const primary = await paused('operator', 'start maintenance on db-primary for 45 minutes because of a fan check three');
    expect(await windows('fan check three')).toEqual([]);
    expect((await v1(server.url, `/approvals/${primary.approvalId}`, { token: tokens.operator })).body).toMatchObject({ status: 'pending', approvals_required: 1 });
    expect((await db.pool.query('SELECT uses FROM approval_grants WHERE id = $1', [made.body.grant_id])).rows[0].uses).toBe(1);
  }, 60_000);

  it('POST /grants with an empty match is 400; a grant made before its rule was known (no rule_hash) covers nothing', async () => {
    const direct = await v1(server.url, '/grants', { token: tokens.operator, body: { tool: 'start_maintenance', ttl_s: 3600, match: {} } });
    expect(direct.status, JSON.stringify(direct.body)).toBe(400);
    expect(direct.body.error.code).toBe('VALIDATION_ERROR');
    const made = await v1(server.url, '/grants', { token: tokens.operator, body: { tool: 'start_maintenance', ttl_s: 3600, match: { duration_minutes: 50 } } });
    expect(made.status).toBe(201);
    // As a grant stored before migration 241 (or one whose rule changed since): retired.
    await db.pool.query('UPDATE approval_grants SET rule_hash = NULL WHERE id = $1', [made.body.id]);
    const asked = await paused('operator', 'start maintenance on search-api for 50 minutes because of a cable swap');
    expect(await windows('cable swap')).toEqual([]);
    expect((await v1(server.url, `/approvals/${asked.approvalId}/deny`, { token: tokens.operator, body: {} })).status).toBe(200);
  }, 60_000);
});

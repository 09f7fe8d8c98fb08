/**
 * Signed one-use decision links (issue 26 item 4), on real processes and a real database: links
 * minted as notifications mint them (mintLinksForApproval) for the designated approvers of a
 * production deploy under the two-admin rule. A GET shows what will run and never consumes; a
 * forged link, another user's session, a changed action, an expired link and a replay are refused
 * and decide nothing; the requester cannot approve their own two-person request by a link; the
 * approvers' links count as channel `link` and the deploy runs once.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TWO_ADMIN_POLICY } from '../helpers/approval-policy.ts';
import { hashPassword } from '../../server/auth/index.ts';
import { mintApprovalLink, mintLinksForApproval } from '../../server/db/approval-links.ts';
import { login } from '../helpers/chat-client.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';
import { startMain, type MainProcess } from '../helpers/main-process.ts';
import { v1, waitForRun } from './v1-support.ts';

const SECRET = 'links-secret-0123456789abcdef';
let db: TestDatabase;
let dir: string;
let api: MainProcess;
let gateway: MainProcess;
const tokens: Record<string, string> = {};

beforeAll(async () => {
  db = await createTestDatabase();
  dir = await mkdtemp(join(tmpdir(), 'airlock-links-'));
  await writeFile(join(dir, 'policy.yaml'), TWO_ADMIN_POLICY);
  api = await startMain(['--role', 'api'], { DATABASE_URL: db.url, DATA_DIR: dir, SERVICE_CLIENT_SECRET: SECRET });
  const hash = await hashPassword('demo-password-1');
  for (const u of ['admin2', 'admin3']) await db.pool.query(`INSERT INTO users (username, password_hash, role, tenant) VALUES ($1, $2, 'admin', 'demo')`, [u, hash]);
  for (const u of ['admin', 'admin2', 'admin3', 'operator']) tokens[u] = await login(api.url, u);
  gateway = await startMain(['--role', 'gateway'], { DATABASE_URL: db.url, DATA_DIR: dir, SERVICE_CLIENT_SECRET: SECRET, API_URL: api.url, POLICY_FILE: join(dir, 'policy.yaml'), OFFLINE_MODEL_DELAY_MS: '1' });
}, 60_000);

afterAll(async () => {
  for (const p of [gateway, api]) {
    p?.child.kill('SIGKILL');
    await p?.exited;
  }
  await db?.drop();
  await rm(dir, { recursive: true, force: true });
});

const link = (token: string, path = '', init: { user?: string; body?: unknown } = {}) =>
  fetch(`${gateway.url}/api/agent/v1/approve/${token}${path}`, {
    method: path ? 'POST' : 'GET',
    headers: { 'content-type': 'application/json', ...(init.user ? { authorization: `Bearer ${tokens[init.user]}` } : {}) },
    body: path ? JSON.stringify(init.body ?? {}) : undefined,
  });
const json = async (r: Response) => ({ status: r.status, body: await r.json() });
const decisions = async (approvalId: string) => (await db.pool.query(`SELECT count(*)::int AS n FROM approval_decisions WHERE approval_id = $1`, [approvalId])).rows[0].n;
const deployments = async (version: string) => (await db.pool.query(`SELECT count(*)::int AS n FROM deployments WHERE version = $1`, [version])).rows[0].n;

describe('decision links', () => {
  it('preview without consuming; refusals decide nothing; the approvers decide by link; it runs once', async () => {
    const run = await v1(gateway.url, '/runs', { token: tokens.admin, body: { messages: [{ role: 'user', content: 'deploy payments-api 6.6.1 to production' }] } });
    const paused = await waitForRun(gateway.url, tokens.admin, run.body.run_id, (r) => r.status === 'awaiting_approval');
    const approvalId: string = paused.approval_request_ids[0];

    const minted = await mintLinksForApproval(db.pool, approvalId);
    // Designated: the admins other than the requester (distinct_from_requester).
    expect(minted.map((l) => l.user)).toEqual(['admin2', 'admin3']);
    const [admin2Link, admin3Link] = minted.map((l) => l.token);
    expect((await db.pool.query(`SELECT count(*)::int AS n FROM approval_links WHERE token_hash = $1`, [admin2Link])).rows[0].n).toBe(0); // stored hashed

    // A GET (a scanner, an unfurler, the page) shows what will run, twice, and consumes nothing.
    for (let i = 0; i < 2; i++) {
      const r = await link(admin2Link);
      expect(r.headers.get('referrer-policy')).toBe('no-referrer');
      expect((await json(r)).body).toMatchObject({ approval: { id: approvalId, status: 'pending', tool_args: { version: '6.6.1', environment: 'production' }, approvals_required: 2 } });
    }
    expect((await db.pool.query(`SELECT count(*)::int AS n FROM approval_links WHERE approval_id = $1 AND used_at IS NOT NULL`, [approvalId])).rows[0].n).toBe(0);

    // A link alone never decides: no session.
    expect((await link(admin2Link, '/approve')).status).toBe(401);
    // Forged.
    expect(await json(await link('x'.repeat(43), '/approve', { user: 'admin2' }))).toMatchObject({ status: 404, body: { error: { code: 'NOT_FOUND' } } });
    // Another user's session.
    expect(await json(await link(admin2Link, '/approve', { user: 'admin3' }))).toMatchObject({ status: 403, body: { error: { code: 'FORBIDDEN' } } });
    // The requester approving their own two-person request, even with a link of their own.
    const own = await mintApprovalLink(db.pool, { approvalId, userId: (await db.pool.query(`SELECT id::text FROM users WHERE username = 'admin'`)).rows[0].id, actionHash: (await db.pool.query(`SELECT action_hash FROM approvals WHERE id = $1`, [approvalId])).rows[0].action_hash, expiresAt: new Date(Date.now() + 60_000) });
    expect(await json(await link(own, '/approve', { user: 'admin' }))).toMatchObject({ status: 403, body: { error: { code: 'FORBIDDEN' } } });
    // Expired.
    await db.pool.query(`UPDATE approval_links SET expires_at = now() - interval '1 second' WHERE approval_id = $1 AND user_id = (SELECT id::text FROM users WHERE username = 'admin3')`, [approvalId]);
    expect(await json(await link(admin3Link, '/approve', { user: 'admin3' }))).toMatchObject({ body: { error: { code: 'APPROVAL_EXPIRED' } } });
    expect(await decisions(approvalId)).toBe(0);
    // Each refusal of a real link is audited, naming the link's route (its token never stored),
    // not the v1 path (issue 36 item 7); the forged token names no approval.
    const refused = await db.pool.query(`SELECT username, outcome, status_code, path, arguments->>'channel' AS channel FROM audit_log WHERE arguments->>'approval_id' = $1 AND outcome <> 'success' ORDER BY id`, [approvalId]);
    const linkPath = '/api/agent/v1/approve/[redacted]/approve';
    expect(refused.rows).toEqual([
      { username: 'admin3', outcome: 'denied', status_code: 403, path: linkPath, channel: 'link' },
      { username: 'admin', outcome: 'denied', status_code: 403, path: linkPath, channel: 'link' },
      { username: 'admin3', outcome: 'conflict', status_code: 410, path: linkPath, channel: 'link' },
    ]);

    // The approver, signed in: counted, by link.
    const first = await json(await link(admin2Link, '/approve', { user: 'admin2', body: { reason: 'from my phone' } }));
    expect(first).toMatchObject({ status: 200, body: { status: 'pending', approved_by: ['admin2'], decisions: [{ user: 'admin2', decision: 'approve', channel: 'link' }] } });
    const audit = await db.pool.query(`SELECT arguments->>'channel' AS channel, path FROM audit_log WHERE arguments->>'approval_id' = $1 AND outcome = 'success'`, [approvalId]);
    expect(audit.rows).toEqual([{ channel: 'link', path: '/api/agent/v1/approve/[redacted]/approve' }]);
    // Replay of the used link.
    expect(await json(await link(admin2Link, '/approve', { user: 'admin2' }))).toMatchObject({ status: 409, body: { error: { code: 'CONFLICT' } } });

    // A link whose action no longer matches (bound to another action hash): refused, nothing decided.
    const [fresh] = (await mintLinksForApproval(db.pool, approvalId)).filter((l) => l.user === 'admin3');
    await db.pool.query(`UPDATE approval_links SET action_hash = 'changed' WHERE approval_id = $1 AND used_at IS NULL AND expires_at > now()`, [approvalId]);
    expect((await link(fresh.token, '/approve', { user: 'admin3' })).status).toBe(409);
    expect(await decisions(approvalId)).toBe(1);
    expect(await deployments('6.6.1')).toBe(0);

    // A good link for the second approver completes it: the deploy runs once.
    const [last] = (await mintLinksForApproval(db.pool, approvalId)).filter((l) => l.user === 'admin3');
    expect(await json(await link(last.token, '/approve', { user: 'admin3' }))).toMatchObject({ status: 200, body: { status: 'approved', approved_by: ['admin2', 'admin3'] } });
    await waitForRun(gateway.url, tokens.admin, run.body.run_id, (r) => r.status === 'completed');
    expect(await deployments('6.6.1')).toBe(1);
    // After the end, links refuse (the approval is decided).
    expect((await link(last.token, '/approve', { user: 'admin3' })).status).toBe(409);
  }, 90_000);
});

describe('links after an escalation', () => {
  it("a task routed to admin2 links admin2 alone; once it escalated to every admin, their notification links them and admin3's link decides", async () => {
    const run = await v1(gateway.url, '/runs', { token: tokens.operator, body: { messages: [{ role: 'user', content: 'create a task to rotate the payments-api certificates' }] } });
    const paused = await waitForRun(gateway.url, tokens.operator, run.body.run_id, (r) => r.status === 'awaiting_approval');
    const approvalId: string = paused.approval_request_ids[0];
    expect((await mintLinksForApproval(db.pool, approvalId)).map((l) => l.user)).toEqual(['admin2']);
    // Ten minutes pass for it (escalate.after_s 600).
    await db.pool.query(`UPDATE approvals SET created_at = created_at - interval '601 seconds' WHERE id = $1`, [approvalId]);
    const escalated = await mintLinksForApproval(db.pool, approvalId);
    expect(escalated.map((l) => l.user)).toEqual(['admin', 'admin2', 'admin3']);
    const admin3Link = escalated.find((l) => l.user === 'admin3')!.token;
    expect(await json(await link(admin3Link, '/approve', { user: 'admin3' }))).toMatchObject({ status: 200, body: { status: 'approved', approved_by: ['admin3'] } });
    expect((await waitForRun(gateway.url, tokens.operator, run.body.run_id, (r) => r.status === 'completed')).status).toBe('completed');
  }, 60_000);
});

/**
 * A second approver (issue 26 items 5 and 6), end to end on real processes: the api and the
 * gateway are `server/main.ts` children with a real POLICY_FILE, decisions go through the v1
 * approvals API, the database is real. A production deploy under a two-admin rule: the requester
 * approving their own two-person request is refused (403) and nothing is recorded but its audit row
 * (as for a second approve by the same admin, 409: issue 36 item 7); the first admin's
 * approval is "1 of 2" (the v1 object, the ledger's approval.approved, the audit row with its
 * channel); the gateway is killed with SIGKILL between the first and the second approval; after the
 * restart nothing is lost, no approver counts twice, and the second admin completes it: the deploy
 * runs once. A denial by any approver ends it. An operator's maintenance routed to admins: the
 * operator may deny but not approve, a viewer does not see it (404), an admin approves it.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { decodeJwt } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TWO_ADMIN_POLICY } from '../helpers/approval-policy.ts';
import { hashPassword } from '../../server/auth/index.ts';
import { chat, collect, connectChat, login } from '../helpers/chat-client.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';
import { startMain, type MainProcess } from '../helpers/main-process.ts';
import { parseSseBlock, v1, waitForRun } from './v1-support.ts';


const SECRET = 'm-of-n-secret-0123456789abcdef';
let db: TestDatabase;
let dir: string;
let api: MainProcess;
let gateway: MainProcess;
const started: MainProcess[] = [];
const tokens: Record<string, string> = {};

async function startGateway(): Promise<MainProcess> {
  const g = await startMain(['--role', 'gateway'], {
    DATABASE_URL: db.url, DATA_DIR: dir, SERVICE_CLIENT_SECRET: SECRET, API_URL: api.url, LEASE_TTL_S: '2', POLICY_FILE: join(dir, 'policy.yaml'),
    OFFLINE_MODEL_DELAY_MS: '1', JOBS_SUPERVISE_S: '1', JOBS_POLL_S: '0.5',
  });
  started.push(g);
  return g;
}

beforeAll(async () => {
  db = await createTestDatabase();
  dir = await mkdtemp(join(tmpdir(), 'airlock-m-of-n-'));
  await writeFile(join(dir, 'policy.yaml'), TWO_ADMIN_POLICY);
  api = await startMain(['--role', 'api'], { DATABASE_URL: db.url, DATA_DIR: dir, SERVICE_CLIENT_SECRET: SECRET });
  started.push(api);
  const hash = await hashPassword('demo-password-1');
  for (const u of ['admin2', 'admin3']) await db.pool.query(`INSERT INTO users (username, password_hash, role, tenant) VALUES ($1, $2, 'admin', 'demo')`, [u, hash]);
  for (const u of ['admin', 'admin2', 'admin3', 'operator', 'viewer']) tokens[u] = await login(api.url, u);
  gateway = await startGateway();
}, 60_000);

afterAll(async () => {
  for (const p of started) {
    p.child.kill('SIGKILL');
    await p.exited;
  }
  await db?.drop();
  await rm(dir, { recursive: true, force: true });
});

async function pausedRun(user: string, text: string): Promise<{ runId: string; approvalId: string }> {
  const run = await v1(gateway.url, '/runs', { token: tokens[user], body: { messages: [{ role: 'user', content: text }] } });
  expect(run.status, JSON.stringify(run.body)).toBe(202);
  const paused = await waitForRun(gateway.url, tokens[user], run.body.run_id, (r) => r.status === 'awaiting_approval');
  return { runId: run.body.run_id, approvalId: paused.approval_request_ids[0] };
}

const decide = (user: string, approvalId: string, decision: 'approve' | 'deny', reason?: string) =>
  v1(gateway.url, `/approvals/${approvalId}/${decision}`, { token: tokens[user], body: reason ? { reason } : {} });

/** The approval's card in its conversation's stored history (GET /api/assistant/history, a reload's read). */
async function storedCard(approvalId: string): Promise<Record<string, unknown> | undefined> {
  const conversationId = (await db.pool.query(`SELECT conversation_id FROM approvals WHERE id = $1`, [approvalId])).rows[0].conversation_id;
  const res = await fetch(`${api.url}/api/assistant/history?conversation_id=${conversationId}`, { headers: { authorization: `Bearer ${tokens.admin}` } });
  expect(res.status).toBe(200);
  const { items } = (await res.json()) as { items: Array<{ metadata: Record<string, unknown> | null }> };
  return items.map((m) => m.metadata ?? {}).find((m) => m.type === 'approval' && m.approval_id === approvalId);
}

/** An approval's audit rows of refused attempts, oldest first. */
async function refusedRows(approvalId: string) {
  const { rows } = await db.pool.query(
    `SELECT username, operation, outcome, status_code, error_code, path, arguments->>'channel' AS channel FROM audit_log WHERE arguments->>'approval_id' = $1 AND outcome <> 'success' ORDER BY id`,
    [approvalId],
  );
  return rows;
}

async function deployments(version: string): Promise<number> {
  return (await db.pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM deployments WHERE version = $1`, [version])).rows[0].n;
}

describe('two admins for a production deploy (M-of-N)', () => {
  it('refuses the requester, counts the first, survives kill -9, and the second completes it: the deploy runs once', async () => {
    const { runId, approvalId } = await pausedRun('admin', 'deploy payments-api 9.9.1 to production');
    const before = await v1(gateway.url, `/approvals/${approvalId}`, { token: tokens.admin });
    expect(before.body).toMatchObject({ status: 'pending', approvals_required: 2, approved_by: [], decisions: [] });

    // The requester approving their own two-person request: refused, nothing recorded.
    const own = await decide('admin', approvalId, 'approve');
    expect(own).toMatchObject({ status: 403, body: { error: { code: 'FORBIDDEN' } } });
    expect((await db.pool.query(`SELECT count(*)::int AS n FROM approval_decisions WHERE approval_id = $1`, [approvalId])).rows[0].n).toBe(0);
    // ...but the attempt is audited (issue 36 item 7: every attempt has its own audit row).
    expect(await refusedRows(approvalId)).toEqual([
      { username: 'admin', operation: 'approval.approve', outcome: 'denied', status_code: 403, error_code: 'FORBIDDEN', path: `/api/agent/v1/approvals/${approvalId}/approve`, channel: 'v1' },
    ]);

    // The first admin: 1 of 2, still pending, nothing run.
    const first = await decide('admin2', approvalId, 'approve', 'looks right');
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    expect(first.body).toMatchObject({ status: 'pending', approvals_required: 2, approved_by: ['admin2'], decisions: [{ user: 'admin2', decision: 'approve', channel: 'v1' }] });
    expect(await deployments('9.9.1')).toBe(0);
    const progress = await db.pool.query(`SELECT payload FROM conversation_events WHERE kind = 'approval.approved' AND payload->>'approval_id' = $1`, [approvalId]);
    expect(progress.rows.map((r) => r.payload)).toEqual([expect.objectContaining({ approval_id: approvalId, by: 'admin2', approved_count: 1, approvals_required: 2 })]);
    const audit = await db.pool.query(`SELECT username, arguments FROM audit_log WHERE operation = 'approval.approve' AND arguments->>'approval_id' = $1 AND outcome = 'success'`, [approvalId]);
    expect(audit.rows).toEqual([expect.objectContaining({ username: 'admin2', arguments: expect.objectContaining({ result: 'progress', channel: 'v1', approved_count: 1, approvals_required: 2 }) })]);

    // No approver counts twice; the second attempt has its audit row too.
    expect(await decide('admin2', approvalId, 'approve')).toMatchObject({ status: 409, body: { error: { code: 'CONFLICT' } } });
    expect((await refusedRows(approvalId)).map((r) => [r.username, r.outcome, r.status_code, r.error_code])).toEqual([['admin', 'denied', 403, 'FORBIDDEN'], ['admin2', 'conflict', 409, 'CONFLICT']]);
    // A reload's history shows the card as the live one does: 1 of 2, by admin2.
    expect(await storedCard(approvalId)).toMatchObject({ type: 'approval', status: 'pending', approvals_required: 2, approved_by: ['admin2'] });

    // kill -9 of the gateway between the first and the second approval.
    gateway.child.kill('SIGKILL');
    await gateway.exited;
    gateway = await startGateway();

    const after = await v1(gateway.url, `/approvals/${approvalId}`, { token: tokens.admin3 });
    expect(after.body).toMatchObject({ status: 'pending', approved_by: ['admin2'] });
    const second = await decide('admin3', approvalId, 'approve');
    expect(second.status, JSON.stringify(second.body)).toBe(200);
    expect(second.body).toMatchObject({ status: 'approved', approved_by: ['admin2', 'admin3'], resolved_by: 'demo:admin3' });
    await waitForRun(gateway.url, tokens.admin, runId, (r) => r.status === 'completed', 30_000);
    expect(await deployments('9.9.1')).toBe(1);
    // The receipt (issue 28) names both approvers, each with the way their decision came.
    const served = await v1(gateway.url, `/approvals/${approvalId}/receipt`, { token: tokens.admin3 });
    expect(served.status).toBe(200);
    const claims = decodeJwt((served.body as { receipt: string }).receipt);
    expect(claims).toMatchObject({ decision: 'approved', approvers: [{ user: 'admin2', channel: 'v1' }, { user: 'admin3', channel: 'v1' }] });
    // Decided: a third approval changes nothing.
    expect((await decide('admin2', approvalId, 'approve')).status).toBe(409);
    expect(await deployments('9.9.1')).toBe(1);
  }, 90_000);

  it('a denial by any approver ends it: nothing runs', async () => {
    const { runId, approvalId } = await pausedRun('admin', 'deploy payments-api 9.9.2 to production');
    expect((await decide('admin2', approvalId, 'approve')).body).toMatchObject({ status: 'pending', approved_by: ['admin2'] });
    const denied = await decide('admin3', approvalId, 'deny', 'not today');
    expect(denied.body).toMatchObject({ status: 'denied', decisions: [{ user: 'admin2', decision: 'approve' }, { user: 'admin3', decision: 'deny', channel: 'v1' }] });
    await waitForRun(gateway.url, tokens.admin, runId, (r) => r.status === 'completed');
    expect(await deployments('9.9.2')).toBe(0);
  }, 60_000);

  it('staging needs one approver as before: the requester approves it alone', async () => {
    const { runId, approvalId } = await pausedRun('admin', 'deploy payments-api 9.9.3 to staging');
    expect((await decide('admin', approvalId, 'approve')).body).toMatchObject({ status: 'approved', approvals_required: 1, approved_by: ['admin'] });
    await waitForRun(gateway.url, tokens.admin, runId, (r) => r.status === 'completed');
    expect(await deployments('9.9.3')).toBe(1);
  }, 60_000);
});

describe('a /chat decision that will be refused is refused before its turn', () => {
  it("the requester's own confirm of a two-person request: FORBIDDEN with its code, no run, the conversation goes on", async () => {
    const client = await connectChat(gateway.url, tokens.admin);
    const paused = await collect(chat(client, 'deploy payments-api 9.9.6 to production'));
    const asked = paused.final!.metadata as { type: string; conversation_id: string; approval_id: string };
    expect(asked.type).toBe('confirm_required');
    const runs = async () => (await db.pool.query(`SELECT count(*)::int AS n FROM runs WHERE conversation_id = $1`, [asked.conversation_id])).rows[0].n;
    const before = await runs();
    const own = await collect(client.submit('/chat', { message: 'confirm', conversation_id: asked.conversation_id, action: 'confirm', approval_id: asked.approval_id }));
    expect(own.final!.metadata).toMatchObject({ type: 'error', code: 'FORBIDDEN' });
    expect(own.final!.metadata.detail).toMatch(/approvers other than you/);
    // Refused before any turn: no run (failed or not), nothing recorded, the approval still waits.
    expect(await runs()).toBe(before);
    expect((await db.pool.query(`SELECT count(*)::int AS n FROM approval_decisions WHERE approval_id = $1`, [asked.approval_id])).rows[0].n).toBe(0);
    // A viewer, who may not see it: not found, and no run either.
    const viewer = await connectChat(gateway.url, tokens.viewer);
    const unseen = await collect(viewer.submit('/chat', { message: 'confirm', conversation_id: asked.conversation_id, action: 'confirm', approval_id: asked.approval_id }));
    expect(unseen.final!.metadata).toMatchObject({ type: 'error', code: 'APPROVAL_NOT_FOUND' });
    expect(await runs()).toBe(before);
    // Each refused attempt through /chat has its own audit row too (issue 36 item 7), as v1's do.
    expect(await refusedRows(asked.approval_id)).toEqual([
      { username: 'admin', operation: 'approval.approve', outcome: 'denied', status_code: 403, error_code: 'FORBIDDEN', path: '/chat', channel: 'chat' },
      { username: 'viewer', operation: 'approval.approve', outcome: 'not_found', status_code: 404, error_code: 'APPROVAL_NOT_FOUND', path: '/chat', channel: 'chat' },
    ]);
    // The two other admins complete it: the conversation was left intact, the deploy runs once.
    expect((await decide('admin2', asked.approval_id, 'approve')).body).toMatchObject({ status: 'pending' });
    expect((await decide('admin3', asked.approval_id, 'approve')).body).toMatchObject({ status: 'approved' });
    await expect.poll(() => deployments('9.9.6'), { timeout: 30_000 }).toBe(1);
  }, 60_000);
});

describe("an operator's maintenance routed to admins", () => {
  it('the operator may not approve it, a viewer does not see it, an admin approves it and it runs once', async () => {
    const { runId, approvalId } = await pausedRun('operator', 'start maintenance on payments-api for 30 minutes because of a disk swap');
    expect(await decide('operator', approvalId, 'approve')).toMatchObject({ status: 403, body: { error: { code: 'FORBIDDEN' } } });
    expect(await decide('viewer', approvalId, 'approve')).toMatchObject({ status: 404, body: { error: { code: 'APPROVAL_NOT_FOUND' } } });
    // The admin's list shows it, with who may decide and how many.
    const listed = await v1(gateway.url, '/approvals?status=pending', { token: tokens.admin });
    expect(listed.body.approvals.find((a: { id: string }) => a.id === approvalId)).toMatchObject({ approvals_required: 1, approved_by: [] });
    expect((await decide('admin', approvalId, 'approve')).body).toMatchObject({ status: 'approved', approved_by: ['admin'] });
    await waitForRun(gateway.url, tokens.operator, runId, (r) => r.status === 'completed');
    const windows = await db.pool.query(`SELECT count(*)::int AS n FROM maintenance_events WHERE reason LIKE '%disk swap%'`);
    expect(windows.rows[0].n).toBe(1);
  }, 60_000);

  it('the requester may always deny', async () => {
    const { approvalId } = await pausedRun('operator', 'start maintenance on checkout-api for 15 minutes because of a cable check');
    expect((await decide('operator', approvalId, 'deny')).body).toMatchObject({ status: 'denied', decisions: [{ user: 'operator', decision: 'deny', channel: 'v1' }] });
  }, 60_000);
});

describe('GET /approvals/stream: the inbox list, live (issue 26 item 1)', () => {
  it('sends the list, then again when an approval opens, counts an approver, and ends', async () => {
    const abort = new AbortController();
    const res = await fetch(`${gateway.url}/api/agent/v1/approvals/stream`, { headers: { authorization: `Bearer ${tokens.admin3}` }, signal: abort.signal });
    expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
    let buffer = '';
    /** The next `approvals` frame's list. */
    const next = async (): Promise<Array<{ id: string; approved_by: string[] }>> => {
      for (;;) {
        const end = buffer.indexOf('\n\n');
        if (end >= 0) {
          const frame = parseSseBlock(buffer.slice(0, end));
          buffer = buffer.slice(end + 2);
          if (frame?.event === 'approvals') return (frame.data as { approvals: Array<{ id: string; approved_by: string[] }> }).approvals;
          continue;
        }
        const { value, done } = await reader.read();
        if (done) throw new Error('the stream ended');
        buffer += value;
      }
    };
    try {
      const first = await next();
      const { approvalId } = await pausedRun('admin', 'deploy payments-api 9.9.4 to production');
      let list = await next();
      while (!list.some((a) => a.id === approvalId)) list = await next();
      expect(list.length).toBe(first.length + 1);
      await decide('admin2', approvalId, 'approve');
      list = await next();
      expect(list.find((a) => a.id === approvalId)?.approved_by).toEqual(['admin2']);
      await decide('admin', approvalId, 'deny');
      list = await next();
      while (list.some((a) => a.id === approvalId)) list = await next();
      expect(list.length).toBe(first.length);
    } finally {
      abort.abort();
    }
  }, 60_000);
});

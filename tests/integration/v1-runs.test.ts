/**
 * Background runs and approvals of the headless API over real HTTP against the real gateway and
 * job queue (pg-boss in PostgreSQL): 202 queued -> completed; replay paging; a run paused for
 * approval, approved through /v1/approvals with no client attached, finishing completed under the
 * same run_id; deny; exactly once across the API and /chat confirm; who may decide; another
 * tenant's runs and approvals are 404; cancel; traces.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashPassword } from '../../server/auth/index.ts';
import { chat, collect, connectChat, login } from '../helpers/chat-client.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { eventually, streamCompletion, v1, waitForRun } from './v1-support.ts';

let db: TestDatabase;
let server: TestServer;
let admin: string;
let operator: string;
let viewer: string;
let outsider: string;

const LONG = 'tell me about yourself and what you can help me with today in detail';
const ask = (text: string, extra: Record<string, unknown> = {}) => ({ messages: [{ role: 'user', content: text }], ...extra });

beforeAll(async () => {
  db = await createTestDatabase();
  server = await startTestServer({ db, env: { OFFLINE_MODEL_DELAY_MS: '5', JOBS_SUPERVISE_S: '1', JOBS_POLL_S: '0.5', CHAT_USER_CONCURRENCY: '1' } });
  // A user of another tenant (the demo users are tenant `demo`).
  await db.pool.query(`INSERT INTO users (username, password_hash, role, tenant) VALUES ('acme-admin', $1, 'admin', 'acme')`, [await hashPassword('demo-password-1')]);
  [admin, operator, viewer, outsider] = await Promise.all(['admin', 'operator', 'viewer', 'acme-admin'].map((u) => login(server.url, u)));
});
afterAll(async () => {
  await server?.close();
  await db?.drop();
});

async function startBackground(token: string, text: string, extra: Record<string, unknown> = {}): Promise<string> {
  const reply = await v1(server.url, '/runs', { token, body: ask(text, extra) });
  expect(reply.status).toBe(202);
  expect(reply.body).toMatchObject({ status: 'queued', run_id: expect.stringMatching(/^[0-9a-f-]{36}$/) });
  return reply.body.run_id;
}

async function pendingApprovalOf(token: string, runId: string): Promise<any> {
  const run = await waitForRun(server.url, token, runId, (r) => r.status === 'awaiting_approval');
  expect(run.approval_request_ids).toHaveLength(1);
  const approval = await v1(server.url, `/approvals/${run.approval_request_ids[0]}`, { token });
  expect(approval.status).toBe(200);
  return approval.body;
}

async function allEvents(token: string, runId: string): Promise<any[]> {
  const reply = await v1(server.url, `/runs/${runId}/events?limit=1000`, { token });
  expect(reply.status).toBe(200);
  return reply.body.events;
}

describe('background runs', () => {
  it('POST /v1/runs answers 202 queued; the job queue runs it to completed', async () => {
    const runId = await startBackground(viewer, 'What is the health of payments-api?', { metadata: { caller: 'test', purpose: 'qa' } });
    const run = await waitForRun(server.url, viewer, runId, (r) => r.status === 'completed');
    expect(run).toMatchObject({ run_id: runId, mode: 'background', user_key: 'demo:viewer', metadata: { caller: 'test', purpose: 'qa' }, attempts: 1 });
    expect(run.content).toContain('payments-api');
    expect(run.finished_at).not.toBeNull();
    const list = await v1(server.url, '/runs?status=completed', { token: viewer });
    expect(list.body.runs.map((r: any) => r.run_id)).toContain(runId);
  });

  it('replays events by sequence with count, total_event_count, next_after_sequence and has_more', async () => {
    const runId = await startBackground(viewer, 'What is the health of payments-api?');
    await waitForRun(server.url, viewer, runId, (r) => r.status === 'completed');
    const all = await allEvents(viewer, runId);
    expect(all.map((e) => e.sequence)).toEqual(all.map((_, i) => i + 1));
    expect(all.map((e) => e.type)).toEqual(['session_start', 'tool_call', 'tool_result', 'token', 'session_end']);
    const pages: any[] = [];
    let after = 0;
    for (;;) {
      const page = await v1(server.url, `/runs/${runId}/events?after_sequence=${after}&limit=2`, { token: viewer });
      expect(page.body.total_event_count).toBe(all.length);
      expect(page.body.count).toBe(page.body.events.length);
      pages.push(...page.body.events);
      after = page.body.next_after_sequence;
      if (!page.body.has_more) break;
    }
    expect(pages).toEqual(all);
    expect((await v1(server.url, `/runs/${runId}/events?after_sequence=${all.length}`, { token: viewer })).body).toMatchObject({ count: 0, has_more: false, next_after_sequence: all.length });
    expect((await v1(server.url, `/runs/${runId}/events?limit=0`, { token: viewer })).status).toBe(400);
  });

  it('traces list and read the run from the ledger', async () => {
    const runId = await startBackground(viewer, 'What is the health of payments-api?');
    await waitForRun(server.url, viewer, runId, (r) => r.status === 'completed');
    const trace = await v1(server.url, `/traces/${runId}`, { token: viewer });
    expect(trace.body).toMatchObject({ run_id: runId, status: 'completed', tool_call_count: 1, event_count: 5 });
    expect(trace.body.final_content).toContain('payments-api');
    const events = await v1(server.url, `/traces/${runId}/events?limit=2`, { token: viewer });
    expect(events.body).toMatchObject({ count: 2, total_event_count: 5, has_more: true });
    const list = await v1(server.url, '/traces', { token: viewer });
    expect(list.body.traces.map((t: any) => t.run_id)).toContain(runId);
  });
});

describe('approvals', () => {
  it('a paused background run is approved through /v1/approvals with no client attached and completes under the same run_id', async () => {
    const runId = await startBackground(admin, 'deploy checkout-api 2.4.1 to staging', { tool_policy: { mode: 'allowlist', allowed_tools: ['deploy_service'] } });
    const approval = await pendingApprovalOf(admin, runId);
    expect(approval).toMatchObject({
      status: 'pending', approved: false, expired: false, timeout_seconds: 300, resolved_at: null, resolution_reason: null,
      policy_scope: expect.any(String), policy_action: 'require_approval', policy_matched: expect.any(Boolean),
      requested_by: 'demo:admin', resolved_by: null, tool_name: 'deploy_service', run_id: runId,
    });
    const pending = await v1(server.url, '/approvals?status=pending', { token: admin });
    expect(pending.body.approvals.map((a: any) => a.id)).toContain(approval.id);

    // A decision with a field it does not know is refused, and decides nothing.
    const unknown = await v1(server.url, `/approvals/${approval.id}/approve`, { token: admin, body: { reason: 'ok', arguments: { version: '6.6.6' } } });
    expect(unknown.status).toBe(400);
    expect(unknown.body.error.code).toBe('VALIDATION_ERROR');
    expect((await v1(server.url, `/approvals/${approval.id}`, { token: admin })).body.status).toBe('pending');

    const decided = await v1(server.url, `/approvals/${approval.id}/approve`, { token: admin, body: { reason: 'operator approved in review UI' } });
    expect(decided.status).toBe(200);
    expect(decided.body).toMatchObject({ status: 'approved', approved: true, resolved_by: 'demo:admin', resolution_reason: 'operator approved in review UI' });
    expect(decided.body.resolved_at).not.toBeNull();

    const run = await waitForRun(server.url, admin, runId, (r) => r.status === 'completed');
    expect(run.turn_count).toBe(2);
    const types = (await allEvents(admin, runId)).map((e) => e.type);
    expect(types).toEqual(['session_start', 'ask_user', 'session_end', 'approval_resolved', 'tool_call', 'tool_result', 'token', 'session_end']);
    const deployed = await db.pool.query(`SELECT count(*)::int AS n FROM deployments WHERE service = 'checkout-api' AND version = '2.4.1'`);
    expect(deployed.rows[0].n).toBe(1);
    // Audited with the caller.
    const audit = await db.pool.query(`SELECT * FROM audit_log WHERE operation = 'approval.approve' AND arguments->>'approval_id' = $1 ORDER BY id`, [approval.id]);
    expect(audit.rows).toHaveLength(2);
    // The refused attempt first, with its own row (issue 36 item 7), then the decision.
    expect(audit.rows[0]).toMatchObject({ username: 'admin', outcome: 'invalid', status_code: 400, error_code: 'VALIDATION_ERROR', path: `/api/agent/v1/approvals/${approval.id}/approve` });
    expect(audit.rows[1]).toMatchObject({ username: 'admin', outcome: 'success', method: 'POST', path: `/api/agent/v1/approvals/${approval.id}/approve` });
    expect(audit.rows[1].arguments).toMatchObject({ tool: 'deploy_service', result: 'confirmed', reason: 'operator approved in review UI' });
    // Once means once.
    const again = await v1(server.url, `/approvals/${approval.id}/approve`, { token: admin, body: {} });
    expect(again.status).toBe(409);
    expect(again.body).toMatchObject({ type: 'error', error: { code: 'CONFLICT' } });
  });

  it('deny: the tool never runs, the model is told, the run completes', async () => {
    const runId = await startBackground(admin, 'deploy inventory-service 9.9.9 to staging');
    const approval = await pendingApprovalOf(admin, runId);
    const denied = await v1(server.url, `/approvals/${approval.id}/deny`, { token: admin, body: { reason: 'not today' } });
    expect(denied.body).toMatchObject({ status: 'denied', approved: false, resolution_reason: 'not today' });
    const run = await waitForRun(server.url, admin, runId, (r) => r.status === 'completed');
    expect(run.content.toLowerCase()).toContain('not');
    const result = (await allEvents(admin, runId)).find((e) => e.type === 'tool_result');
    expect(result).toMatchObject({ tool_name: 'deploy_service', status: 'error' });
    expect(result.content).toContain('denied');
    expect((await db.pool.query(`SELECT count(*)::int AS n FROM deployments WHERE service = 'inventory-service' AND version = '9.9.9'`)).rows[0].n).toBe(0);
  });

  it('a /chat confirm of an API run resumes the same run; the API then answers 409 (exactly once)', async () => {
    const runId = await startBackground(admin, 'deploy orders-api 4.5.6 to staging');
    const approval = await pendingApprovalOf(admin, runId);
    const client = await connectChat(server.url, admin);
    try {
      const turn = await collect(chat(client, 'confirm', approval.session_id, 'confirm'));
      expect(turn.messages.some((m) => m.metadata.type === 'confirm_resolved')).toBe(true);
    } finally {
      client.close();
    }
    await waitForRun(server.url, admin, runId, (r) => r.status === 'completed');
    // The /chat decision is audited like the API's: the decider, the approval, the tool, the result.
    const decided = await db.pool.query(`SELECT * FROM audit_log WHERE arguments->>'approval_id' = $1 AND outcome = 'success'`, [approval.id]);
    expect(decided.rows).toHaveLength(1);
    expect(decided.rows[0]).toMatchObject({ operation: 'approval.approve', username: 'admin', user_role: 'admin', service_actor: null, method: 'POST', path: '/chat', tool_call_id: expect.any(String), conversation_id: approval.session_id });
    expect(decided.rows[0].arguments).toMatchObject({ approval_id: approval.id, tool: 'deploy_service', result: 'confirmed', resolution_reason: 'user_confirmed', decided_by: decided.rows[0].user_id });
    const late = await v1(server.url, `/approvals/${approval.id}/approve`, { token: admin, body: {} });
    expect(late.status).toBe(409);
    // The refused late attempt is audited too, as a conflict, by the API that refused it.
    const refused = await db.pool.query(`SELECT outcome, status_code FROM audit_log WHERE arguments->>'approval_id' = $1 AND outcome <> 'success'`, [approval.id]);
    expect(refused.rows).toEqual([{ outcome: 'conflict', status_code: 409 }]);
    expect((await db.pool.query(`SELECT count(*)::int AS n FROM deployments WHERE service = 'orders-api' AND version = '4.5.6'`)).rows[0].n).toBe(1);
  });

  it('an API approve racing a /chat confirm of the same approval: one decision, the tool runs once', async () => {
    const runId = await startBackground(admin, 'deploy auth-service 7.7.7 to staging');
    const approval = await pendingApprovalOf(admin, runId);
    const client = await connectChat(server.url, admin);
    try {
      const [api, tab] = await Promise.all([
        v1(server.url, `/approvals/${approval.id}/approve`, { token: admin, body: { reason: 'race' } }),
        collect(chat(client, 'confirm', approval.session_id, 'confirm')),
      ]);
      const tabResolved = tab.messages.some((m) => m.metadata.type === 'confirm_resolved');
      // Exactly one of them decided; the other was told so (the API: 409; the tab: an error).
      expect(api.status === 200).not.toBe(tabResolved);
      if (api.status !== 200) expect(api.status).toBe(409);
      else expect(tab.messages.at(-1)!.metadata.type).toBe('error');
    } finally {
      client.close();
    }
    await waitForRun(server.url, admin, runId, (r) => r.status === 'completed');
    expect((await db.pool.query(`SELECT count(*)::int AS n FROM deployments WHERE service = 'auth-service' AND version = '7.7.7'`)).rows[0].n).toBe(1);
    const resolvedEvents = (await allEvents(admin, runId)).filter((e) => e.type === 'approval_resolved');
    expect(resolvedEvents).toHaveLength(1);
  });

  it('a new message in the session supersedes a paused run: it ends cancelled and its approval is denied', async () => {
    const runId = await startBackground(admin, 'deploy kafka-broker 1.0.5 to staging');
    const approval = await pendingApprovalOf(admin, runId);
    const client = await connectChat(server.url, admin);
    try {
      await collect(chat(client, 'hello', approval.session_id));
    } finally {
      client.close();
    }
    expect((await v1(server.url, `/runs/${runId}`, { token: admin })).body).toMatchObject({ status: 'cancelled', error: { code: 'CONFLICT' } });
    expect((await v1(server.url, `/approvals/${approval.id}`, { token: admin })).body).toMatchObject({ status: 'denied', resolution_reason: 'superseded_by_new_message' });
    // Superseding is a decision too: audited as a deny by who sent the message, where they sent it.
    const audit = await db.pool.query(`SELECT * FROM audit_log WHERE arguments->>'approval_id' = $1`, [approval.id]);
    expect(audit.rows).toHaveLength(1);
    expect(audit.rows[0]).toMatchObject({ operation: 'approval.deny', username: 'admin', path: '/chat' });
    expect(audit.rows[0].arguments).toMatchObject({ result: 'denied', resolution_reason: 'superseded_by_new_message' });
  });

  it('who decides: an admin (approvals:decide) may decide the operator\'s; another viewer cannot see it', async () => {
    const runId = await startBackground(operator, 'start maintenance on payments-api for 30 minutes because of database upgrade');
    const approval = await pendingApprovalOf(operator, runId);
    expect((await v1(server.url, `/approvals/${approval.id}`, { token: viewer })).status).toBe(404);
    expect((await v1(server.url, `/approvals/${approval.id}/approve`, { token: viewer, body: {} })).status).toBe(404);
    expect((await v1(server.url, `/runs/${runId}`, { token: viewer })).status).toBe(404);
    const decided = await v1(server.url, `/approvals/${approval.id}/approve`, { token: admin, body: { reason: 'on call' } });
    expect(decided.status).toBe(200);
    expect(decided.body).toMatchObject({ requested_by: 'demo:operator', resolved_by: 'demo:admin' });
    await waitForRun(server.url, operator, runId, (r) => r.status === 'completed');
  });

  it('another tenant gets 404 for runs, events, traces and approvals, and sees none in lists', async () => {
    const runId = await startBackground(admin, 'deploy search-api 1.0.0 to staging');
    const approval = await pendingApprovalOf(admin, runId);
    for (const path of [`/runs/${runId}`, `/runs/${runId}/events`, `/traces/${runId}`, `/traces/${runId}/events`, `/approvals/${approval.id}`]) {
      const reply = await v1(server.url, path, { token: outsider });
      expect(reply.status, path).toBe(404);
      expect(reply.body.type).toBe('error');
    }
    for (const path of [`/runs/${runId}/cancel`, `/approvals/${approval.id}/approve`, `/approvals/${approval.id}/deny`]) {
      expect((await v1(server.url, path, { token: outsider, body: {} })).status, path).toBe(404);
    }
    expect((await v1(server.url, '/runs', { token: outsider })).body.runs).toEqual([]);
    expect((await v1(server.url, '/approvals', { token: outsider })).body.approvals).toEqual([]);
    expect((await v1(server.url, '/traces', { token: outsider })).body.traces).toEqual([]);
    // Still pending: the outsider's attempts changed nothing.
    expect((await v1(server.url, `/approvals/${approval.id}`, { token: admin })).body.status).toBe('pending');
    await v1(server.url, `/approvals/${approval.id}/deny`, { token: admin, body: {} });
  });

  it('tool_policy is stored with the run: a resume applies it (allowlist without the paused tool refuses it)', async () => {
    // Offered at the pause (the allowlist names it), then the stored policy is changed under the run:
    // the resume reads the stored one and refuses the call at execution time.
    const runId = await startBackground(admin, 'deploy search-api 1.0.1 to staging', { tool_policy: { mode: 'allowlist', allowed_tools: ['deploy_service'] } });
    const approval = await pendingApprovalOf(admin, runId);
    await db.pool.query(`UPDATE agent_runs SET tool_policy = '{"mode":"none"}' WHERE id = $1`, [runId]);
    await v1(server.url, `/approvals/${approval.id}/approve`, { token: admin, body: {} });
    await waitForRun(server.url, admin, runId, (r) => r.status === 'completed');
    const result = (await allEvents(admin, runId)).find((e) => e.type === 'tool_result');
    expect(result).toMatchObject({ tool_name: 'deploy_service', status: 'error', metadata: { error_code: 'FORBIDDEN' } });
    expect(result.content).toContain('tool_policy');
    expect((await db.pool.query(`SELECT count(*)::int AS n FROM deployments WHERE service = 'search-api' AND version = '1.0.1'`)).rows[0].n).toBe(0);
  });
});

describe('admission', () => {
  it('a user\'s streamed runs beyond CHAT_USER_CONCURRENCY are RATE_LIMITED (429); background runs are not', async () => {
    let opened!: () => void;
    const firstFrame = new Promise<void>((resolve) => (opened = resolve));
    const first = streamCompletion(server.url, operator, ask(LONG), () => opened());
    await firstFrame;
    const second = await v1(server.url, '/chat/completions', { token: operator, body: ask('hello') });
    expect(second.status).toBe(429);
    expect(second.body).toMatchObject({ type: 'error', error: { code: 'RATE_LIMITED' } });
    expect((await v1(server.url, '/runs', { token: operator, body: ask('hello') })).status).toBe(202);
    expect((await first).frames.at(-1)!.data).toBe('[DONE]');
    expect((await v1(server.url, '/chat/completions', { token: operator, body: ask('hello') })).status).toBe(200);
  });
});

describe('cancel', () => {
  it('cancels a running background run', async () => {
    const runId = await startBackground(viewer, LONG);
    await waitForRun(server.url, viewer, runId, (r) => r.status === 'running' && r.turn_count === 1);
    const cancelled = await v1(server.url, `/runs/${runId}/cancel`, { token: viewer, body: {} });
    expect(cancelled.status).toBe(200);
    expect(cancelled.body.status).toBe('cancelled');
    const again = await v1(server.url, `/runs/${runId}/cancel`, { token: viewer, body: {} });
    expect(again.status).toBe(409);
  });

  it('cancels a run awaiting approval: its approval is denied and the tool never runs', async () => {
    const runId = await startBackground(admin, 'deploy cdn-edge 1.0.2 to staging');
    const approval = await pendingApprovalOf(admin, runId);
    const cancelled = await v1(server.url, `/runs/${runId}/cancel`, { token: admin, body: {} });
    expect(cancelled.body.status).toBe('cancelled');
    await eventually(async () => (await v1(server.url, `/approvals/${approval.id}`, { token: admin })).body.status === 'denied', 10_000, 'the approval denied');
    expect((await db.pool.query(`SELECT count(*)::int AS n FROM deployments WHERE service = 'cdn-edge' AND version = '1.0.2'`)).rows[0].n).toBe(0);
  });
});

/**
 * Approval expiry on time, with nobody looking: a pending approval past expires_at is expired by
 * the job queue's delayed job (fires once across replicas), reason approval_timeout; the tool never
 * runs, the model is told and the run finishes, and the conversation's ledger (what an open tab
 * shows) records the card as expired. Also for an approval opened through /chat, and for one a
 * call of the OpenAI face (issue 43 item 4) waits for: its stream ends with the model's explanation.
 */
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chat, collect, connectChat, login } from '../helpers/chat-client.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { eventually, v1, waitForRun } from './v1-support.ts';

let db: TestDatabase;
let server: TestServer;
let admin: string;

beforeAll(async () => {
  db = await createTestDatabase();
  server = await startTestServer({ db, env: { APPROVAL_TIMEOUT_S: '2', JOBS_SUPERVISE_S: '1', JOBS_POLL_S: '0.5' } });
  admin = await login(server.url, 'admin');
});
afterAll(async () => {
  await server?.close();
  await db?.drop();
});

describe('approval expiry', () => {
  it('a background run\'s approval expires on time; the tool never runs and the run completes', async () => {
    const created = await v1(server.url, '/runs', { token: admin, body: { messages: [{ role: 'user', content: 'deploy web-frontend 1.0.3 to staging' }] } });
    const runId = created.body.run_id;
    const paused = await waitForRun(server.url, admin, runId, (r) => r.status === 'awaiting_approval');
    const approvalId = paused.approval_request_ids[0];
    // Nobody reads or decides anything from here on: only the timer job acts.
    const run = await waitForRun(server.url, admin, runId, (r) => r.status === 'completed', 15_000);
    const approval = (await v1(server.url, `/approvals/${approvalId}`, { token: admin })).body;
    expect(approval).toMatchObject({ status: 'expired', approved: false, expired: true, resolution_reason: 'approval_timeout', resolved_by: null, timeout_seconds: 2 });
    // On time: resolved within a couple of poll intervals of expires_at, not "when someone looked".
    const late = Date.parse(approval.resolved_at) - Date.parse(approval.expires_at);
    expect(late).toBeGreaterThanOrEqual(0);
    expect(late).toBeLessThan(3_000);
    const events = (await v1(server.url, `/runs/${runId}/events?limit=100`, { token: admin })).body.events;
    expect(events.find((e: any) => e.type === 'approval_resolved')).toMatchObject({ approval_request_id: approvalId, status: 'expired' });
    expect(events.find((e: any) => e.type === 'tool_result')).toMatchObject({ tool_name: 'deploy_service', status: 'error', metadata: { error_code: 'APPROVAL_EXPIRED' } });
    expect(run.content.length).toBeGreaterThan(0);
    expect((await db.pool.query(`SELECT count(*)::int AS n FROM deployments WHERE service = 'web-frontend' AND version = '1.0.3'`)).rows[0].n).toBe(0);
    // Audited like any decision: one row, decided by nobody (the `system` timer).
    const audit = await db.pool.query(`SELECT * FROM audit_log WHERE arguments->>'approval_id' = $1`, [approvalId]);
    expect(audit.rows).toHaveLength(1);
    expect(audit.rows[0]).toMatchObject({ operation: 'approval.expire', service_actor: 'system', user_id: null, username: null, method: 'JOB', path: 'approval-expiry', outcome: 'success' });
    expect(audit.rows[0].arguments).toMatchObject({ tool: 'deploy_service', result: 'expired', resolution_reason: 'approval_timeout', decided_by: 'system' });
  });

  it('an approval opened in /chat expires too, and the conversation ledger shows the card expired', async () => {
    const client = await connectChat(server.url, admin);
    let conversationId = '';
    try {
      const pause = await collect(chat(client, 'deploy redis-cache 1.0.4 to staging'));
      const card = pause.messages.find((m) => m.metadata.type === 'confirm_required')!;
      conversationId = card.metadata.conversation_id as string;
    } finally {
      client.close();
    }
    const resolved = await eventually(async () => {
      const res = await fetch(`${server.url}/api/agent/conversations/${conversationId}/events?limit=500`, { headers: { authorization: `Bearer ${admin}` } });
      const body = (await res.json()) as { events: Array<{ kind: string; payload: any }> };
      return body.events.find((e) => e.kind === 'approval.resolved') ?? null;
    }, 15_000, 'the approval to expire');
    expect(resolved.payload.result).toBe('expired');
    const row = await db.pool.query(`SELECT status, reason FROM approvals WHERE conversation_id = $1`, [conversationId]);
    expect(row.rows[0]).toEqual({ status: 'expired', reason: 'approval_timeout' });
  });

  it('an OpenAI face stream waiting for an approval that expires ends with the model\'s explanation; nothing ran', async () => {
    const client = new OpenAI({ apiKey: admin, baseURL: `${server.url}/api/agent/openai/v1`, maxRetries: 0 });
    const stream = await client.chat.completions.create({ model: 'airlock', stream: true, messages: [{ role: 'user', content: 'deploy web-frontend 1.0.5 to staging' }] });
    let text = '';
    let finish: string | null = null;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta.content ?? '';
      finish = chunk.choices[0]?.finish_reason ?? finish;
    }
    // Nobody decided: the timer did, and the same stream carried the model's words to its end.
    expect(text).toMatch(/Waiting for approval[\s\S]*the approval expired before it was confirmed/);
    expect(finish).toBe('stop');
    expect((await db.pool.query(`SELECT count(*)::int AS n FROM deployments WHERE service = 'web-frontend' AND version = '1.0.5'`)).rows[0].n).toBe(0);
  });
});

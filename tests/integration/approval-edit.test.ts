/**
 * Edit, then approve (issue 27 item 1), on a real gateway and api (one process), real PostgreSQL
 * and a real POLICY_FILE with issue 20's `when` rules:
 * - v1 `approve {arguments}`: the deploy runs once with the edited version, never the proposed one;
 *   the audit row and the ledger's approval.resolved keep the original and edited arguments and
 *   the RFC 6902 patch; the receipt names the final action hash and the original one; the tool
 *   card's input is the edited call; the model's thread (read from the checkpoint) keeps its own
 *   call and its ToolMessage begins with the note naming what ran; the final answer names it.
 * - refused, with nothing recorded: unknown arguments, a wrong type, arguments with a deny, an
 *   edit into a value the policy denies, an operator's edit into an admin-only maintenance.
 * - escalation by edit: staging -> production under the two-admin rule needs a second admin; an
 *   edit resets the approvals so far (M-of-N).
 * - /chat `arguments` (@gradio/client) and the AG-UI resume `{approved: true, editedArgs}` (HttpAgent).
 */
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { HttpAgent, type AgentSubscriber } from '@ag-ui/client';
import type { BaseEvent, Interrupt } from '@ag-ui/core';
import { PostgresSaver } from '@langchain/langgraph-checkpoint-postgres';
import { decodeJwt } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { actionHash } from '../../server/approvals/rules.ts';
import { mintLinksForApproval } from '../../server/db/approval-links.ts';
import { hashPassword } from '../../server/auth/index.ts';
import { collect, connectChat, login } from '../helpers/chat-client.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { v1, waitForRun } from './v1-support.ts';
import { EDIT_POLICY } from '../helpers/approval-policy.ts';


let db: TestDatabase;
let dir: string;
let server: TestServer;
let saver: PostgresSaver;
const tokens: Record<string, string> = {};

beforeAll(async () => {
  db = await createTestDatabase();
  dir = await mkdtemp(join(tmpdir(), 'airlock-edit-'));
  await writeFile(join(dir, 'policy.yaml'), EDIT_POLICY);
  server = await startTestServer({ db, env: { POLICY_FILE: join(dir, 'policy.yaml') } });
  saver = PostgresSaver.fromConnString(db.url, { schema: db.schema });
  const hash = await hashPassword('demo-password-1');
  for (const u of ['admin2', 'admin3']) await db.pool.query(`INSERT INTO users (username, password_hash, role, tenant) VALUES ($1, $2, 'admin', 'demo')`, [u, hash]);
  for (const u of ['admin', 'admin2', 'admin3', 'operator']) tokens[u] = await login(server.url, u);
}, 60_000);

afterAll(async () => {
  await saver?.end();
  await server?.close();
  await db?.drop();
  await rm(dir, { recursive: true, force: true });
});

async function pausedRun(user: string, text: string): Promise<{ runId: string; approvalId: string; conversationId: string }> {
  const run = await v1(server.url, '/runs', { token: tokens[user], body: { messages: [{ role: 'user', content: text }] } });
  expect(run.status, JSON.stringify(run.body)).toBe(202);
  const paused = await waitForRun(server.url, tokens[user], run.body.run_id, (r) => r.status === 'awaiting_approval');
  const approvalId = paused.approval_request_ids[0] as string;
  const row = await db.pool.query<{ conversation_id: string }>('SELECT conversation_id FROM approvals WHERE id = $1', [approvalId]);
  return { runId: run.body.run_id, approvalId, conversationId: row.rows[0].conversation_id };
}

const approve = (user: string, approvalId: string, body: Record<string, unknown> = {}) => v1(server.url, `/approvals/${approvalId}/approve`, { token: tokens[user], body });

const deployments = async (service: string, version: string, environment?: string) =>
  (await db.pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM deployments WHERE service = $1 AND version = $2 AND ($3::text IS NULL OR environment = $3)`, [service, version, environment ?? null])).rows[0].n;

const approvalRow = async (id: string) => (await db.pool.query('SELECT status, args, action_hash, final_args, final_action_hash, requested_by FROM approvals WHERE id = $1', [id])).rows[0];

const ledger = async (conversationId: string) =>
  (await db.pool.query<{ kind: string; payload: any }>('SELECT kind, payload FROM conversation_events WHERE conversation_id = $1 ORDER BY seq', [conversationId])).rows;

/** The model's thread as the checkpoint holds it. */
async function thread(conversationId: string): Promise<Array<{ content: unknown; tool_call_id?: string; tool_calls?: Array<{ id: string; name: string; args: Record<string, unknown> }> }>> {
  const tuple = await saver.getTuple({ configurable: { thread_id: conversationId, checkpoint_ns: '' } });
  return (tuple?.checkpoint.channel_values.messages ?? []) as never;
}

describe('v1 approve {arguments}', () => {
  it('runs the edited call once; audit, ledger, receipt, card, checkpoint and answer tell the truth', async () => {
    const { runId, approvalId, conversationId } = await pausedRun('admin', 'deploy checkout-api 7.1.0 to staging');
    const edited = { service: 'checkout-api', version: '7.1.1', environment: 'staging' };
    const decided = await approve('admin', approvalId, { arguments: edited });
    expect(decided.status, JSON.stringify(decided.body)).toBe(200);
    expect(decided.body).toMatchObject({ status: 'approved', tool_args: { version: '7.1.0' }, edited_args: edited });
    const run = await waitForRun(server.url, tokens.admin, runId, (r) => r.status === 'completed', 30_000);
    expect(await deployments('checkout-api', '7.1.1', 'staging')).toBe(1);
    expect(await deployments('checkout-api', '7.1.0')).toBe(0);

    // The row: the interrupt's binding stays, the final action beside it.
    const row = await approvalRow(approvalId);
    expect(row).toMatchObject({ status: 'approved', args: { version: '7.1.0' }, final_args: edited });
    expect(row.final_action_hash).toBe(actionHash({ tool: 'deploy_service', args: edited, userId: row.requested_by }));
    expect(row.action_hash).not.toBe(row.final_action_hash);

    // The audit row: both argument sets and the RFC 6902 patch.
    const audit = await db.pool.query(`SELECT arguments FROM audit_log WHERE operation = 'approval.approve' AND arguments->>'approval_id' = $1`, [approvalId]);
    expect(audit.rows).toHaveLength(1);
    expect(audit.rows[0].arguments).toMatchObject({
      original_arguments: { service: 'checkout-api', version: '7.1.0', environment: 'staging' },
      edited_arguments: edited,
      patch: [{ op: 'replace', path: '/version', value: '7.1.1' }],
      original_action_hash: row.action_hash,
      action_hash: row.final_action_hash,
    });
    // The api's own row of the deploy: the edited version ran.
    const call = await db.pool.query(`SELECT arguments FROM audit_log WHERE operation = 'deploy_service' AND outcome = 'success' AND conversation_id = $1`, [conversationId]);
    expect(call.rows.map((r) => r.arguments.version)).toEqual(['7.1.1']);

    // The ledger: approval.resolved with the edit; the tool card's input is the edited call.
    const events = await ledger(conversationId);
    expect(events.find((e) => e.kind === 'approval.resolved')?.payload).toMatchObject({ result: 'confirmed', edited: { args: edited, patch: [{ op: 'replace', path: '/version', value: '7.1.1' }] } });
    const toolCalls = events.filter((e) => e.kind === 'tool.call' && e.payload.tool === 'deploy_service');
    expect(toolCalls.at(-1)?.payload.input).toEqual(edited);
    const result = events.filter((e) => e.kind === 'tool.result').at(-1)?.payload;
    expect(result).toMatchObject({ status: 'done', output: expect.objectContaining({ version: '7.1.1' }) });

    // The receipt: the final action, and the one first asked.
    const receipt = await v1(server.url, `/approvals/${approvalId}/receipt`, { token: tokens.admin });
    expect(decodeJwt(receipt.body.receipt)).toMatchObject({ action_hash: row.final_action_hash, original_action_hash: row.action_hash });

    // What the model receives: its own call, then a result that says what really ran.
    const messages = await thread(conversationId);
    const ai = messages.find((m) => m.tool_calls?.some((c) => c.name === 'deploy_service'));
    const callId = ai!.tool_calls!.find((c) => c.name === 'deploy_service')!.id;
    const reply = messages.find((m) => m.tool_call_id === callId)!;
    expect(String(reply.content)).toMatch(/^Note: the user edited this call before approving it\. deploy_service ran with these arguments, not the ones proposed: .*"version":"7\.1\.1"/);
    expect(String(reply.content)).toContain('Result: ');
    // And so the answer names the version that ran.
    expect(JSON.stringify(run)).toContain('7.1.1');
    const answer = events.filter((e) => e.kind === 'assistant.message').at(-1)?.payload.text as string;
    expect(answer).toContain('7.1.1');
    expect(answer).not.toContain('7.1.0');
  }, 60_000);

  it('refuses unknown arguments, a wrong type and arguments with a deny; nothing is recorded', async () => {
    const { approvalId } = await pausedRun('admin', 'deploy checkout-api 7.2.0 to staging');
    const unknown = await approve('admin', approvalId, { arguments: { service: 'checkout-api', version: '7.2.1', environment: 'staging', force: true } });
    expect(unknown).toMatchObject({ status: 400, body: { error: { code: 'VALIDATION_ERROR' } } });
    expect(unknown.body.error.message).toMatch(/unknown argument force/);
    const wrongType = await approve('admin', approvalId, { arguments: { service: 'checkout-api', version: 721, environment: 'staging' } });
    expect(wrongType).toMatchObject({ status: 400, body: { error: { code: 'VALIDATION_ERROR' } } });
    expect(wrongType.body.error.message).toMatch(/version/);
    const withDeny = await v1(server.url, `/approvals/${approvalId}/deny`, { token: tokens.admin, body: { arguments: { version: '7.2.1' } } });
    expect(withDeny).toMatchObject({ status: 400, body: { error: { code: 'VALIDATION_ERROR' } } });
    // An unknown field in the body itself is refused too.
    expect(await approve('admin', approvalId, { args: { version: '7.2.1' } })).toMatchObject({ status: 400, body: { error: { code: 'VALIDATION_ERROR' } } });
    expect(await approvalRow(approvalId)).toMatchObject({ status: 'pending', final_args: null, final_action_hash: null });
    // A corrected edit then goes through (a refused one does not block its request id).
    const ok = await approve('admin', approvalId, { arguments: { service: 'checkout-api', version: '7.2.1', environment: 'staging' } });
    expect(ok.body).toMatchObject({ status: 'approved', edited_args: { version: '7.2.1' } });
  }, 60_000);

  it('refuses an edit into a value the policy denies', async () => {
    const { approvalId } = await pausedRun('admin', 'deploy checkout-api 7.3.0 to staging');
    const refused = await approve('admin', approvalId, { arguments: { service: 'checkout-api', version: '7.3.0', environment: 'forbidden' } });
    expect(refused).toMatchObject({ status: 403, body: { error: { code: 'FORBIDDEN' } } });
    expect(refused.body.error.message).toMatch(/policy does not allow/);
    expect(await approvalRow(approvalId)).toMatchObject({ status: 'pending', final_args: null });
  }, 60_000);

  it("refuses an operator's edit of a maintenance into an admin-only service; an admin may make it", async () => {
    const { runId, approvalId } = await pausedRun('operator', 'start maintenance on checkout-api for 30 minutes because of a cable check');
    const into = { service: 'db-primary', duration_minutes: 30, reason: 'cable check' };
    const refused = await approve('operator', approvalId, { arguments: into });
    expect(refused).toMatchObject({ status: 403, body: { error: { code: 'FORBIDDEN' } } });
    expect(refused.body.error.message).toMatch(/role admin/);
    expect(await approvalRow(approvalId)).toMatchObject({ status: 'pending', final_args: null });
    // The admin (an approver of the operator's request) may, and the edited window opens once.
    expect((await approve('admin', approvalId, { arguments: into })).body).toMatchObject({ status: 'approved', approvals_required: 1, edited_args: into });
    await waitForRun(server.url, tokens.operator, runId, (r) => r.status === 'completed', 30_000);
    const windows = await db.pool.query(`SELECT service FROM maintenance_events WHERE reason = 'cable check'`);
    expect(windows.rows.map((r) => r.service)).toEqual(['db-primary']);
  }, 60_000);

  it('an edit staging -> production raises it to two admins, and an edit resets the approvals so far', async () => {
    const { runId, approvalId } = await pausedRun('admin', 'deploy payments-api 7.4.0 to staging');
    const production = { service: 'payments-api', version: '7.4.0', environment: 'production' };
    // The requester may not approve a two-admin production deploy of their own.
    expect(await approve('admin', approvalId, { arguments: production })).toMatchObject({ status: 403 });
    const first = await approve('admin2', approvalId, { arguments: production });
    expect(first.body).toMatchObject({ status: 'pending', approvals_required: 2, approved_by: ['admin2'], edited_args: production });
    expect(await deployments('payments-api', '7.4.0')).toBe(0);
    // admin3 edits the version: admin2 approved another action, so only admin3 counts now.
    const edited = { ...production, version: '7.4.1' };
    const second = await approve('admin3', approvalId, { arguments: edited });
    expect(second.body).toMatchObject({ status: 'pending', approvals_required: 2, approved_by: ['admin3'], edited_args: edited });
    // admin2 approves what is now asked (no edit): two of two.
    const third = await approve('admin2', approvalId);
    expect(third.body).toMatchObject({ status: 'approved', approved_by: ['admin3', 'admin2'] });
    await waitForRun(server.url, tokens.admin, runId, (r) => r.status === 'completed', 30_000);
    expect(await deployments('payments-api', '7.4.1', 'production')).toBe(1);
    expect(await deployments('payments-api', '7.4.0')).toBe(0);
  }, 60_000);
});

describe('edit attacks and edges', () => {
  it('an edit revokes the links sent for the action as it was', async () => {
    const { approvalId } = await pausedRun('admin', 'deploy payments-api 7.6.0 to production');
    const links = await mintLinksForApproval(db.pool, approvalId);
    expect(links.length).toBeGreaterThan(0);
    const open = async () => (await db.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM approval_links WHERE approval_id = $1 AND used_at IS NULL AND expires_at > now()', [approvalId])).rows[0].n;
    expect(await open()).toBe(links.length);
    const edited = { service: 'payments-api', version: '7.6.1', environment: 'production' };
    expect((await approve('admin2', approvalId, { arguments: edited })).body).toMatchObject({ status: 'pending', edited_args: edited });
    expect(await open()).toBe(0);
  }, 60_000);

  it('a resume whose final arguments no longer hash to final_action_hash runs nothing', async () => {
    const { runId, approvalId } = await pausedRun('admin', 'deploy payments-api 7.7.0 to production');
    const edited = { service: 'payments-api', version: '7.7.1', environment: 'production' };
    expect((await approve('admin2', approvalId, { arguments: edited })).body).toMatchObject({ status: 'pending' });
    // The attack: the row's final arguments changed behind the approvers' backs (the hash stays the approved one).
    await db.pool.query(`UPDATE approvals SET final_args = jsonb_set(final_args, '{version}', '"6.6.6"') WHERE id = $1`, [approvalId]);
    expect((await approve('admin3', approvalId)).body).toMatchObject({ status: 'approved' });
    await waitForRun(server.url, tokens.admin, runId, (r) => r.status === 'completed' || r.status === 'failed', 30_000);
    for (const v of ['7.7.0', '7.7.1', '6.6.6']) expect(await deployments('payments-api', v)).toBe(0);
  }, 60_000);

  it('a plain approve by link (its page shows the call as proposed) of an edited approval is refused; the inbox/v1 approve it', async () => {
    const { runId, approvalId } = await pausedRun('admin', 'deploy payments-api 7.9.0 to production');
    const edited = { service: 'payments-api', version: '7.9.1', environment: 'production' };
    expect((await approve('admin2', approvalId, { arguments: edited })).body).toMatchObject({ status: 'pending', approved_by: ['admin2'] });
    const admin3Link = (await mintLinksForApproval(db.pool, approvalId)).find((l) => l.user === 'admin3')!.token;
    const byLink = await fetch(`${server.url}/api/agent/v1/approve/${admin3Link}/approve`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${tokens.admin3}` }, body: '{}' });
    expect(byLink.status).toBe(409);
    expect((await byLink.json()).error.message).toMatch(/edited after this was shown/);
    expect((await db.pool.query('SELECT count(*)::int AS n FROM approval_decisions WHERE approval_id = $1', [approvalId])).rows[0].n).toBe(1);
    expect((await approve('admin3', approvalId)).body).toMatchObject({ status: 'approved' });
    await waitForRun(server.url, tokens.admin, runId, (r) => r.status === 'completed', 30_000);
    expect(await deployments('payments-api', '7.9.1', 'production')).toBe(1);
    expect(await deployments('payments-api', '7.9.0')).toBe(0);
  }, 60_000);

  it('a grant with an edit is refused, and nothing is recorded', async () => {
    const { approvalId } = await pausedRun('admin', 'deploy checkout-api 7.8.0 to staging');
    const refused = await approve('admin', approvalId, { arguments: { service: 'checkout-api', version: '7.8.1', environment: 'staging' }, grant: { ttl_s: 3600 } });
    expect(refused).toMatchObject({ status: 400, body: { error: { code: 'VALIDATION_ERROR' } } });
    expect(refused.body.error.message).toMatch(/grant cannot be made with edited arguments/);
    expect(await approvalRow(approvalId)).toMatchObject({ status: 'pending', final_args: null });
    expect((await db.pool.query('SELECT count(*)::int AS n FROM approval_grants')).rows[0].n).toBe(0);
  }, 60_000);
});

describe('/chat arguments and the AG-UI resume editedArgs', () => {
  it('/chat: confirm with arguments runs the edited call; arguments with deny are refused', async () => {
    const client = await connectChat(server.url, tokens.admin);
    const asked = await collect(client.submit('/chat', { message: { text: 'deploy payments-api 7.5.0 to staging', files: [] }, conversation_id: 'new', action: '' }));
    const card = asked.messages.find((m) => m.metadata.type === 'confirm_required')!;
    const conversationId = (card.metadata as { conversation_id?: string }).conversation_id ?? (asked.final!.metadata as { conversation_id: string }).conversation_id;
    const approvalId = (card.metadata as unknown as { approval_id: string }).approval_id;
    const edited = { service: 'payments-api', version: '7.5.1', environment: 'staging' };
    const denied = await collect(client.submit('/chat', { message: { text: '', files: [] }, conversation_id: conversationId, action: 'deny', approval_id: approvalId, arguments: edited }));
    expect(JSON.stringify(denied)).toMatch(/VALIDATION_ERROR|arguments go with/);
    // Arguments that do not fit the schema: the error names each, by its path, for the card's fields.
    const misfit = await collect(client.submit('/chat', { message: { text: '', files: [] }, conversation_id: conversationId, action: 'confirm', approval_id: approvalId, arguments: { ...edited, version: 7, colour: 'red' } }));
    const error = misfit.messages.find((m) => m.metadata.type === 'error')?.metadata as { code?: string; fields?: Array<{ path: string; message: string }> } | undefined;
    expect(error?.code).toBe('VALIDATION_ERROR');
    expect(error?.fields).toEqual(expect.arrayContaining([{ path: 'version', message: expect.any(String) }, { path: '', message: expect.stringMatching(/unknown argument colour/) }]));
    expect(await approvalRow(approvalId)).toMatchObject({ status: 'pending', final_args: null });
    const confirmed = await collect(client.submit('/chat', { message: { text: '', files: [] }, conversation_id: conversationId, action: 'confirm', approval_id: approvalId, arguments: edited }));
    const resolved = confirmed.messages.find((m) => m.metadata.type === 'confirm_resolved');
    expect(resolved?.metadata).toMatchObject({ result: 'confirmed', edited: { args: edited, patch: [{ op: 'replace', path: '/version', value: '7.5.1' }] } });
    expect(confirmed.messages.find((m) => m.metadata.type === 'tool_start' || m.metadata.type === 'tool_end')?.metadata).toMatchObject({ tool: 'deploy_service' });
    expect(confirmed.final?.content).toContain('7.5.1');
    expect(await deployments('payments-api', '7.5.1')).toBe(1);
    expect(await deployments('payments-api', '7.5.0')).toBe(0);
  }, 60_000);

  it('AG-UI: {approved: true, editedArgs} runs the edited call; editedArgs with a denial and unknown payload fields are refused', async () => {
    const agent = new HttpAgent({ url: `${server.url}/api/agent/ag-ui`, headers: { Authorization: `Bearer ${tokens.admin}` }, threadId: randomUUID() });
    const events: BaseEvent[] = [];
    agent.subscribe({ onEvent: ({ event }) => void events.push(event) } satisfies AgentSubscriber);
    agent.addMessage({ id: randomUUID(), role: 'user', content: 'deploy checkout-api 7.6.0 to staging' });
    await agent.runAgent();
    const [interrupt] = (events.at(-1) as unknown as { outcome: { interrupts: Interrupt[] } }).outcome.interrupts;
    const raw = (payload: unknown) =>
      fetch(`${server.url}/api/agent/ag-ui`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'text/event-stream', authorization: `Bearer ${tokens.admin}` },
        body: JSON.stringify({ threadId: agent.threadId, runId: randomUUID(), state: {}, messages: [], tools: [], context: [], forwardedProps: {}, resume: [{ interruptId: interrupt.id, status: 'resolved', payload }] }),
      });
    const deniedEdit = await raw({ approved: false, editedArgs: { version: '7.6.1' } });
    expect(deniedEdit.status).toBe(400);
    const unknownField = await raw({ approved: true, edited_args: { version: '7.6.1' } });
    expect(unknownField.status).toBe(400);
    events.length = 0;
    await agent.runAgent({ resume: [{ interruptId: interrupt.id, status: 'resolved', payload: { approved: true, editedArgs: { service: 'checkout-api', version: '7.6.1', environment: 'staging' } } }] });
    expect(events.at(-1)).toMatchObject({ type: 'RUN_FINISHED', outcome: { type: 'success' } });
    expect(await deployments('checkout-api', '7.6.1')).toBe(1);
    expect(await deployments('checkout-api', '7.6.0')).toBe(0);
  }, 60_000);
});

/**
 * /chat end to end on one real server (api + gateway roles): the real @gradio/client, real
 * PostgreSQL, the offline model over HTTP through ChatOpenAI.
 */
import type { Client } from '@gradio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chat, collect, connectChat, login, type WireMessage } from '../helpers/chat-client.ts';
import { isFileReferenced } from '../../server/db/messages.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';

let db: TestDatabase;
let server: TestServer;
let admin: Client;
let viewer: Client;

beforeAll(async () => {
  db = await createTestDatabase();
  server = await startTestServer({ db });
  admin = await connectChat(server.url, await login(server.url, 'admin'));
  viewer = await connectChat(server.url, await login(server.url, 'viewer'));
});

afterAll(async () => {
  admin?.close();
  viewer?.close();
  await server?.close();
  await db?.drop();
});

const meta = (m: WireMessage | undefined) => m?.metadata as Record<string, unknown>;
const deploymentsOf = async (service: string, version: string) =>
  Number((await db.pool.query('SELECT count(*) FROM deployments WHERE service = $1 AND version = $2', [service, version])).rows[0].count);

describe('/chat', () => {
  it('streams an answer and creates the conversation on the first message', async () => {
    const turn = await collect(chat(admin, 'hello there'));
    expect(turn.status).toBe('complete');
    const tokens = turn.messages.filter((m) => m.metadata.type === 'stream_token');
    expect(tokens.length).toBeGreaterThan(3);
    const id = turn.messages[0].metadata.conversation_id;
    expect(id).toMatch(/^[0-9a-f-]{36}$/);
    expect(turn.messages.every((m) => m.metadata.conversation_id === id)).toBe(true);
    // content accumulates: each token extends the previous content
    for (let i = 1; i < tokens.length; i++) expect(tokens[i].content.startsWith(tokens[i - 1].content)).toBe(true);
    expect(turn.final!.content).toBe(tokens.map((t) => t.metadata.token).join(''));
  });

  it('shows a safe tool as tool_start -> tool_end -> answer', async () => {
    const turn = await collect(chat(admin, "what's the health of payments-api"));
    const start = turn.types.indexOf('tool_start');
    const end = turn.types.indexOf('tool_end');
    expect(start).toBeGreaterThanOrEqual(0);
    expect(end).toBeGreaterThan(start);
    expect(turn.types.lastIndexOf('stream_token')).toBeGreaterThan(end);
    expect(meta(turn.messages[start])).toMatchObject({ tool: 'check_health', input: { service: 'payments-api' } });
    expect(meta(turn.messages[end])).toMatchObject({ tool: 'check_health', tool_call_id: meta(turn.messages[start]).tool_call_id });
    expect(typeof meta(turn.messages[end]).duration_ms).toBe('number');
    expect(turn.final!.content).toMatch(/payments-api/);
  });

  it('pauses a deploy for confirmation, then confirm resumes it once', async () => {
    // 1. the dangerous request pauses
    const first = await collect(chat(admin, 'deploy checkout-api 2.4.1 to staging'));
    expect(first.status).toBe('complete');
    const confirm = first.messages.find((m) => m.metadata.type === 'confirm_required');
    expect(confirm).toBeDefined();
    expect(meta(confirm)).toMatchObject({ tool: 'deploy_service', input: { service: 'checkout-api', version: '2.4.1', environment: 'staging' }, timeout_s: 300 });
    expect(String(meta(confirm).prompt)).toContain('checkout-api');
    expect(first.final!.metadata.type).toBe('confirm_required');
    const id = confirm!.metadata.conversation_id;
    expect(await deploymentsOf('checkout-api', '2.4.1')).toBe(0);
    const active = await (await fetch(`${server.url}/api/agent/conversations/${id}/active`, { headers: { authorization: `Bearer ${await login(server.url, 'admin')}` } })).json();
    expect(active).toMatchObject({ active: true, state: 'awaiting_confirmation' });

    // 2. confirm resumes from the checkpoint
    const second = await collect(chat(admin, 'confirm', id, 'confirm'));
    expect(second.types[0]).toBe('confirm_resolved');
    expect(meta(second.messages[0])).toMatchObject({ result: 'confirmed', approval_id: meta(confirm).approval_id });
    expect(second.types).toContain('tool_end');
    expect(second.final!.content.length).toBeGreaterThan(0);
    expect(await deploymentsOf('checkout-api', '2.4.1')).toBe(1);

    // 3. a second confirm finds nothing to approve and deploys nothing
    const again = await collect(chat(admin, 'confirm', id, 'confirm'));
    expect(meta(again.final)).toMatchObject({ type: 'error', code: 'APPROVAL_NOT_FOUND' });
    expect(await deploymentsOf('checkout-api', '2.4.1')).toBe(1);

    // 4. the transcript holds the user message, the approval (confirmed), the tool card and the answer
    const history = await (await fetch(`${server.url}/api/assistant/history?conversation_id=${id}`, { headers: { authorization: `Bearer ${await login(server.url, 'admin')}` } })).json();
    const kinds = history.items.map((m: { role: string; metadata: { type?: string; status?: string } }) => `${m.role}:${m.metadata.type ?? ''}:${m.metadata.status ?? ''}`);
    expect(kinds).toEqual(expect.arrayContaining(['user::', 'assistant:approval:confirmed', 'assistant:tool:done', 'assistant:answer:']));
  });

  it('deny: the tool never runs and the answer says so', async () => {
    const first = await collect(chat(admin, 'deploy search-api 9.9.9 to production'));
    const id = first.final!.metadata.conversation_id;
    expect(first.final!.metadata.type).toBe('confirm_required');
    const second = await collect(chat(admin, 'deny', id, 'deny'));
    expect(meta(second.messages[0])).toMatchObject({ type: 'confirm_resolved', result: 'denied' });
    expect(second.types).not.toContain('tool_end');
    expect(second.final!.content).toMatch(/not/i);
    expect(await deploymentsOf('search-api', '9.9.9')).toBe(0);
  });

  it('a viewer asking to deploy gets FORBIDDEN and nothing is deployed', async () => {
    const turn = await collect(chat(viewer, 'deploy checkout-api 3.0.0 to production'));
    expect(turn.types).not.toContain('confirm_required');
    const errors = turn.messages.filter((m) => m.metadata.type === 'error' || m.metadata.type === 'tool_error');
    expect(errors.some((m) => m.metadata.code === 'FORBIDDEN')).toBe(true);
    expect(await deploymentsOf('checkout-api', '3.0.0')).toBe(0);
  });

  it('a new message while an approval is pending denies it first and the thread goes on', async () => {
    const first = await collect(chat(admin, 'start maintenance on db-primary for 30 minutes because of a disk upgrade'));
    const id = first.final!.metadata.conversation_id;
    expect(first.final!.metadata.type).toBe('confirm_required');
    const second = await collect(chat(admin, "what's the health of db-primary", id));
    // Said, not silent (issue 23 item 3): the reason in v1's words on the wire, and the model's answer starts with what did not run.
    expect(meta(second.messages[0])).toMatchObject({ type: 'confirm_resolved', result: 'denied', reason: 'superseded_by_new_message' });
    expect(second.types).toContain('tool_end');
    expect(second.status).toBe('complete');
    expect(second.final!.content).toMatch(/^I did not start maintenance .*: the request was replaced by a newer message, so nothing was changed\./);
    const { rows: cards } = await db.pool.query("SELECT metadata FROM messages WHERE conversation_id = $1 AND metadata->>'type' = 'approval'", [id]);
    expect(cards[0].metadata).toMatchObject({ status: 'denied', reason: 'superseded_by_new_message' });
    const { rows: resolved } = await db.pool.query("SELECT payload FROM conversation_events WHERE conversation_id = $1 AND kind = 'approval.resolved'", [id]);
    expect(resolved[0].payload).toMatchObject({ result: 'denied', reason: 'superseded_by_new_message' });
    const maintenance = await db.pool.query("SELECT count(*) FROM maintenance_events WHERE service = 'db-primary' AND reason = 'disk upgrade'");
    expect(Number(maintenance.rows[0].count)).toBe(0);
  });

  it('rejects bad input and foreign conversations with taxonomy codes', async () => {
    const empty = await collect(chat(admin, '   '));
    expect(meta(empty.final)).toMatchObject({ type: 'error', code: 'VALIDATION_ERROR' });
    const badId = await collect(chat(admin, 'hi', 'not-a-uuid'));
    expect(meta(badId.final)).toMatchObject({ type: 'error', code: 'VALIDATION_ERROR' });
    const mine = (await collect(chat(admin, 'hello'))).final!.metadata.conversation_id;
    const foreign = await collect(chat(viewer, 'hello', mine));
    expect(meta(foreign.final)).toMatchObject({ type: 'error', code: 'NOT_FOUND' });
    const foreignConfirm = await collect(chat(viewer, 'confirm', mine, 'confirm'));
    expect(meta(foreignConfirm.final)).toMatchObject({ type: 'error', code: 'APPROVAL_NOT_FOUND' });
  });

  it('takes uploaded files with a message and refuses paths it did not store', async () => {
    const blob = new Blob(['error budget report'], { type: 'text/plain' });
    const [stored] = (await admin.upload_files(`${server.url}/api/agent/gradio`, [new File([blob], 'report.txt')])).files ?? [];
    expect(stored).toBeTruthy();
    const turn = await collect(admin.submit('/chat', { message: { text: 'hello', files: [{ path: stored, orig_name: 'report.txt' }] }, conversation_id: 'new' }));
    expect(turn.status).toBe('complete');
    const id = turn.final!.metadata.conversation_id;
    const history = await (await fetch(`${server.url}/api/assistant/history?conversation_id=${id}`, { headers: { authorization: `Bearer ${await login(server.url, 'admin')}` } })).json();
    expect(history.items[0]).toMatchObject({ role: 'user', content: 'hello', metadata: { files: [{ path: stored, orig_name: 'report.txt' }] } });

    const foreign = await collect(admin.submit('/chat', { message: { text: 'hello', files: [{ path: '/etc/passwd' }] } }));
    expect(meta(foreign.final)).toMatchObject({ type: 'error', code: 'VALIDATION_ERROR' });
  });

  it("binds uploads to the uploader: another user can neither attach nor download them; messages keep them from the sweep", async () => {
    const [stored] = (await admin.upload_files(`${server.url}/api/agent/gradio`, [new File(['admin only'], 'secret.txt')])).files ?? [];
    expect(stored).toMatch(/^[0-9a-f]{32}\/secret\.txt$/);
    const stolen = await collect(viewer.submit('/chat', { message: { text: 'mine now', files: [{ path: stored }] } }));
    expect(meta(stolen.final)).toMatchObject({ type: 'error', code: 'VALIDATION_ERROR' });
    const file = `${server.url}/api/agent/gradio/gradio_api/file=${stored}`;
    expect((await fetch(file, { headers: { authorization: `Bearer ${await login(server.url, 'viewer')}` } })).status).toBe(404);
    expect((await fetch(file, { headers: { authorization: `Bearer ${await login(server.url, 'admin')}` } })).status).toBe(200);

    expect(await isFileReferenced(db.pool, stored)).toBe(false);
    expect((await collect(admin.submit('/chat', { message: { text: 'see file', files: [{ path: stored }] } }))).status).toBe('complete');
    expect(await isFileReferenced(db.pool, stored)).toBe(true);
  });

  it('answers 401 to a missing or invalid token', async () => {
    const res = await fetch(`${server.url}/api/agent/gradio/config`);
    expect(res.status).toBe(401);
    const bad = await fetch(`${server.url}/api/agent/gradio/config`, { headers: { authorization: 'Bearer nope' } });
    expect(bad.status).toBe(401);
  });
});

/**
 * Issue 29 item 2, branches that never re-run an action: /chat `action: "regenerate" | "edit"`
 * with `message_id` against the real app, the real @gradio/client, PostgreSQL and LangGraph's own
 * checkpoints (read back with a real PostgresSaver). A regenerate before an executed deploy asks
 * again (a new card, still one deployment); an edit after it keeps the call and its result in the
 * fork's thread and runs nothing again. History, the ledger and AG-UI name the branch; the switch
 * puts the thread back on the branch it shows.
 */
import type { Client } from '@gradio/client';
import type { BaseMessage } from '@langchain/core/messages';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startOfflineModelServer } from '../../server/agent/offline-model/server.ts';
import { collect, connectChat, login, type WireMessage } from '../helpers/chat-client.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';
import { startModelProxy, type ModelProxy } from '../helpers/model-proxy.ts';
import { readFrames } from '../helpers/sse.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { threadReader, type ThreadReader } from '../helpers/thread-reader.ts';

let db: TestDatabase;
let server: TestServer;
let reader: ThreadReader;
let admin: Client;
let token: string;

beforeAll(async () => {
  db = await createTestDatabase();
  server = await startTestServer({ db });
  reader = threadReader(db);
  token = await login(server.url, 'admin');
  admin = await connectChat(server.url, token);
});

afterAll(async () => {
  admin?.close();
  await reader?.close();
  await server?.close();
  await db?.drop();
});

type Action = 'confirm' | 'deny' | 'regenerate' | 'edit' | null;
/** One /chat turn through `client`: a message, a decision, or a fork of `messageId`. */
const sendVia = (client: Client) => (text: string, conversationId: string | null, action: Action = null, messageId: string | null = null) =>
  collect(client.submit('/chat', { message: { text, files: [] }, conversation_id: conversationId ?? 'new', action: action ?? '', message_id: messageId ?? '' }));
const send = (...args: Parameters<ReturnType<typeof sendVia>>) => sendVia(admin)(...args);
const meta = (m: WireMessage | undefined) => m?.metadata as Record<string, unknown>;
const card = (turn: Awaited<ReturnType<typeof send>>) => meta(turn.messages.find((m) => m.metadata.type === 'confirm_required'));
const deployments = async (service: string, version: string) =>
  Number((await db.pool.query('SELECT count(*) FROM deployments WHERE service = $1 AND version = $2', [service, version])).rows[0].count);

interface History {
  items: Array<{ id: string; role: string; content: string; metadata: Record<string, unknown>; seq: number; branch: number }>;
  active_branch: number;
  branch: number;
  branches: Array<{ branch: number; parent_branch: number; from_message_seq: number }>;
}
const getFrom = async (url: string, bearer: string, path: string) => {
  const res = await fetch(`${url}${path}`, { headers: { authorization: `Bearer ${bearer}` } });
  expect(res.status, path).toBe(200);
  return res.json();
};
const get = (path: string) => getFrom(server.url, token, path);
const historyPath = (id: string, branch?: number) => `/api/assistant/history?conversation_id=${id}&limit=200${branch === undefined ? '' : `&branch=${branch}`}`;
const history = (id: string, branch?: number): Promise<History> => get(historyPath(id, branch));
const events = async (id: string, branch?: number): Promise<Array<{ seq: number; kind: string; payload: Record<string, unknown> }>> =>
  (await get(`/api/agent/conversations/${id}/events?limit=500${branch === undefined ? '' : `&branch=${branch}`}`)).events;
const switchTo = (id: string, branch: number) =>
  fetch(`${server.url}/api/agent/conversations/${id}/branch`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify({ branch }) });
/** An AG-UI reconnect to a finished run of the conversation: its MESSAGES_SNAPSHOT event. */
async function agUiSnapshot(id: string): Promise<{ messages: Array<{ role: string; content?: string }>; rawEvent?: { active_branch?: number } }> {
  const runId = (await db.pool.query('SELECT request_id FROM runs WHERE conversation_id = $1 ORDER BY started_at DESC LIMIT 1', [id])).rows[0].request_id;
  const body = { threadId: id, runId, messages: [], tools: [], context: [] };
  const response = await fetch(`${server.url}/api/agent/ag-ui`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'text/event-stream', 'last-event-id': '1' },
    body: JSON.stringify(body),
  });
  expect(response.status).toBe(200);
  const frames = await readFrames(response);
  return frames.find((f) => f.data?.type === 'MESSAGES_SNAPSHOT')!.data;
}
const kinds = (messages: BaseMessage[]) => messages.map((m) => m.getType());

/** A conversation whose deploy was asked, confirmed and run: its id and the approval. */
async function deployed(service: string, version: string) {
  const asked = await send(`deploy ${service} ${version} to staging`, null);
  const first = card(asked);
  expect(first).toMatchObject({ tool: 'deploy_service' });
  const id = String(first.conversation_id);
  const done = await send('confirm', id, 'confirm');
  expect(done.status).toBe('complete');
  expect(await deployments(service, version)).toBe(1);
  return { id, approvalId: String(first.approval_id) };
}

describe('branches (issue 29)', () => {
  it('a regenerate before an executed deploy asks again with a new card, and the deploy stays run once', async () => {
    const { id, approvalId } = await deployed('checkout-api', '7.1.0');
    const before = await history(id);
    expect(before.active_branch).toBe(0);
    const user = before.items.find((m) => m.role === 'user')!;
    const answer = before.items.find((m) => m.role === 'assistant' && m.seq > user.seq)!;

    const again = await send('', id, 'regenerate', answer.id);
    expect(again.status).toBe('complete');
    const second = card(again);
    expect(second).toMatchObject({ tool: 'deploy_service', input: { service: 'checkout-api', version: '7.1.0', environment: 'staging' } });
    expect(second.approval_id).not.toBe(approvalId);
    expect(await deployments('checkout-api', '7.1.0')).toBe(1);
    // A regenerate commits no user.message; the fork and the turn's events name branch 1.
    const log = await events(id);
    const fork = log.find((e) => e.kind === 'branch.forked')!;
    const userEvent = log.find((e) => e.kind === 'user.message')!;
    expect(fork.payload).toMatchObject({ branch: 1, parent_branch: 0, from_seq: userEvent.seq + 1 });
    expect(log.filter((e) => e.kind === 'user.message')).toHaveLength(1);
    const onBranch = await events(id, 1);
    expect(onBranch.map((e) => e.kind)).toEqual(expect.arrayContaining(['branch.forked', 'approval.requested', 'run.finished']));
    expect(onBranch.every((e) => e.payload.branch === 1)).toBe(true);
    expect((await events(id, 0)).some((e) => e.kind === 'branch.forked')).toBe(false);

    // History loads on the new branch: the user's message, then the new card; the executed
    // deploy's card and answer stay on branch 0 with its approval.
    const after = await history(id);
    expect(after.active_branch).toBe(1);
    expect(after.branches).toEqual([{ branch: 1, parent_branch: 0, from_message_seq: user.seq + 1 }]);
    expect(after.items.map((m) => m.id)[0]).toBe(user.id);
    expect(after.items.filter((m) => m.metadata.type === 'approval').map((m) => m.metadata.approval_id)).toEqual([second.approval_id]);
    const original = await history(id, 0);
    expect(original.items.map((m) => m.id)).toEqual(before.items.map((m) => m.id));
    expect(original.items.find((m) => m.metadata.approval_id === approvalId)?.metadata.status).toBe('confirmed');
    expect((await db.pool.query('SELECT status FROM approvals WHERE id = $1', [approvalId])).rows[0].status).toBe('approved');

    // The thread: one human message (the fork replaced what came after it) and a new pending call.
    const thread = await reader.messages(id);
    expect(kinds(thread).filter((k) => k === 'human')).toHaveLength(1);
    expect(thread.filter((m) => m.getType() === 'tool')).toHaveLength(0);

    // Confirming the new card deploys once more: the user asked for it again, on a card.
    const confirmed = await send('confirm', id, 'confirm');
    expect(confirmed.status).toBe('complete');
    expect(await deployments('checkout-api', '7.1.0')).toBe(2);
  });

  it('an edit after an executed deploy keeps its result in the fork and deploys nothing again; the switch navigates back', async () => {
    const { id } = await deployed('payments-api', '8.2.0');
    const next = await send('hello there', id);
    expect(next.status).toBe('complete');
    const before = await history(id);
    const hello = before.items.findLast((m) => m.role === 'user')!;
    expect(hello.content).toBe('hello there');

    const edited = await send("what's the health of payments-api", id, 'edit', hello.id);
    expect(edited.status).toBe('complete');
    expect(edited.types).not.toContain('confirm_required');
    expect(await deployments('payments-api', '8.2.0')).toBe(1);

    // The fork's thread: the deploy's call and result, then the edited message (not "hello there").
    const thread = await reader.messages(id);
    const humans = thread.filter((m) => m.getType() === 'human').map((m) => String(m.content));
    expect(humans).toHaveLength(2);
    expect(humans[1]).toContain('health of payments-api');
    expect(thread.some((m) => m.getType() === 'tool' && (m as unknown as { name: string }).name === 'deploy_service')).toBe(true);

    const onFork = await history(id);
    expect(onFork.active_branch).toBe(1);
    expect(onFork.items.filter((m) => m.role === 'user').map((m) => m.content)).toEqual(['deploy payments-api 8.2.0 to staging', "what's the health of payments-api"]);
    expect(onFork.items.some((m) => m.metadata.tool === 'deploy_service' && m.metadata.status === 'done')).toBe(true);
    // AG-UI's reconnect snapshot is the fork's transcript and names the branch.
    const snapshot = await agUiSnapshot(id);
    expect(snapshot.rawEvent?.active_branch).toBe(1);
    const snapshotUsers = snapshot.messages.filter((m) => m.role === 'user').map((m) => m.content);
    expect(snapshotUsers).toEqual(['deploy payments-api 8.2.0 to staging', "what's the health of payments-api"]);
    const log = await events(id);
    expect(log.filter((e) => e.kind === 'branch.forked').map((e) => e.payload)).toEqual([
      expect.objectContaining({ branch: 1, parent_branch: 0, from_seq: log.findLast((e) => e.kind === 'user.message' && !e.payload.branch)!.seq }),
    ]);

    // Back to branch 0: history shows "hello there" again, and the next turn goes on from there.
    const switched = await switchTo(id, 0);
    expect(switched.status).toBe(200);
    expect(await switched.json()).toMatchObject({ active_branch: 0 });
    const back = await history(id);
    expect(back.active_branch).toBe(0);
    expect(back.items.map((m) => m.id)).toEqual(before.items.map((m) => m.id));
    expect((await events(id)).at(-1)).toMatchObject({ kind: 'branch.switched' });
    // As if the process died right after the next turn recorded the move (thread_branch, and the
    // head of the branch it left) and before its run wrote a checkpoint: the thread still stands on
    // branch 1's head. The next turn must still go on from branch 0's.
    const newest = (await db.pool.query(`SELECT max(checkpoint_id) AS id FROM checkpoints WHERE thread_id = $1 AND checkpoint_ns = ''`, [id])).rows[0].id;
    await db.pool.query('UPDATE conversation_branches SET head_checkpoint = $2 WHERE conversation_id = $1 AND branch = 1', [id, newest]);
    await db.pool.query('UPDATE conversations SET thread_branch = 0 WHERE id = $1', [id]);
    const more = await send('thanks', id);
    expect(more.status).toBe('complete');
    const resumed = await reader.humans(id);
    expect(resumed).toEqual(['deploy payments-api 8.2.0 to staging', 'hello there', 'thanks']);
    expect(await deployments('payments-api', '8.2.0')).toBe(1);

    // And to branch 1 again: its thread comes back (the edited message, then the new one).
    expect((await switchTo(id, 1)).status).toBe(200);
    await send('and now?', id);
    const fork = await reader.humans(id);
    expect(fork).toEqual(['deploy payments-api 8.2.0 to staging', "what's the health of payments-api", 'and now?']);
  });

  it('an edit of an edit is a third version of the same message (siblings, not a chain)', async () => {
    const first = await send('hello one', null);
    const id = String(first.messages[0].metadata.conversation_id);
    const u1 = (await history(id)).items[0];
    await send('hello two', id, 'edit', u1.id);
    const u2 = (await history(id)).items[0];
    expect(u2.content).toBe('hello two');
    await send('hello three', id, 'edit', u2.id);
    const h = await history(id);
    expect(h.items[0].content).toBe('hello three');
    expect(h.branches).toEqual([
      { branch: 1, parent_branch: 0, from_message_seq: u1.seq },
      { branch: 2, parent_branch: 0, from_message_seq: u1.seq },
    ]);
  });

  it('an edit right after a switch forks the shown branch, not the one the thread last ran on', async () => {
    const first = await send('m1', null);
    const id = String(first.messages[0].metadata.conversation_id);
    await send('m2', id);
    await send('m3', id);
    const [, m2, m3] = (await history(id)).items.filter((m) => m.role === 'user');
    await send('m2b', id, 'edit', m2.id);
    expect((await switchTo(id, 0)).status).toBe(200);
    // No turn in between: the thread still stands on branch 1 (m1, m2b).
    await send('m3b', id, 'edit', m3.id);
    const humans = await reader.humans(id);
    expect(humans).toEqual(['m1', 'm2', 'm3b']);
    expect((await history(id)).items.filter((m) => m.role === 'user').map((m) => m.content)).toEqual(['m1', 'm2', 'm3b']);
  });

  it("a regenerate gives the model the message's files again; an edit its own", async () => {
    const log = ['2026-12-02 09:00:01 INFO  start', '2026-12-02 09:00:02 ERROR payment provider timeout after 5000 ms'].join('\n');
    const uploaded = await admin.upload_files(`${server.url}/api/agent/gradio`, [new File([log], 'app.log', { type: 'text/plain' })]);
    const files = [{ path: uploaded.files![0], orig_name: 'app.log', size: log.length, mime_type: 'text/plain', meta: { _type: 'gradio.FileData' } }];
    const first = await collect(admin.submit('/chat', { message: { text: 'what went wrong in the attached log?', files }, conversation_id: 'new', action: '', message_id: '' }));
    expect(first.final!.content).toContain('ERROR payment provider timeout after 5000 ms');
    const id = String(first.final!.metadata.conversation_id);
    const answer = (await history(id)).items.findLast((m) => m.role === 'assistant')!;
    const again = await send('', id, 'regenerate', answer.id);
    expect(again.status).toBe('complete');
    expect(again.final!.content).toContain('ERROR payment provider timeout after 5000 ms');
    // An edit that keeps the files (as the UI's Edit does) gives them to the model with the new words.
    const user = (await history(id)).items.find((m) => m.role === 'user')!;
    const edited = await collect(admin.submit('/chat', { message: { text: 'what went wrong in the attached log, in short?', files }, conversation_id: id, action: 'edit', message_id: user.id }));
    expect(edited.status).toBe('complete');
    expect(edited.final!.content).toContain('ERROR payment provider timeout after 5000 ms');
    expect((await history(id)).items[0]).toMatchObject({ content: 'what went wrong in the attached log, in short?', metadata: { files: [{ orig_name: 'app.log', status: 'read' }] } });
  });

  it('refuses what cannot branch: a message of no shown branch, the wrong role, no message_id, a switch to no branch', async () => {
    const first = await send('hello', null);
    const id = String(first.messages[0].metadata.conversation_id);
    const h = await history(id);
    const user = h.items.find((m) => m.role === 'user')!;
    const answer = h.items.find((m) => m.role === 'assistant')!;
    for (const [action, messageId, text] of [['edit', answer.id, 'x'], ['regenerate', user.id, ''], ['edit', '00000000-0000-4000-8000-000000000000', 'x'], ['regenerate', null, '']] as const) {
      const turn = await send(text, id, action, messageId);
      expect(turn.types.at(-1), `${action} ${messageId}`).toBe('error');
      expect(meta(turn.final)).toMatchObject({ code: 'VALIDATION_ERROR' });
    }
    expect((await switchTo(id, 5)).status).toBe(404);
    const bad = await switchTo(id, -1);
    expect(bad.status).toBe(400);
  });
});

describe('a retried Edit or Regenerate (its run failed after the fork committed)', () => {
  let offline: Awaited<ReturnType<typeof startOfflineModelServer>>;
  let model: ModelProxy;
  let failing: TestServer;
  let failingToken: string;
  let client: Client;
  /** The next streamed completion answers 500: the turn fails after its fork committed. */
  let failNext = false;

  beforeAll(async () => {
    offline = await startOfflineModelServer({ delayMs: 0, modelName: 'airlock-offline-1' });
    model = await startModelProxy(offline.baseUrl, (req, res, raw) => {
      if (!failNext || !req.url?.endsWith('/chat/completions') || !JSON.parse(raw.toString()).stream) return false;
      failNext = false;
      res.writeHead(500, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { message: 'the model fell over', type: 'server_error' } }));
      return true;
    });
    failing = await startTestServer({ db, env: { OPENAI_BASE_URL: model.url, OPENAI_API_KEY: 'offline', OPENAI_MAX_RETRIES: '0', MODEL_TITLES: 'false' } });
    failingToken = await login(failing.url, 'admin');
    client = await connectChat(failing.url, failingToken);
  });

  afterAll(async () => {
    client?.close();
    await failing?.close();
    await model?.close();
    await offline?.close();
  });

  const sendTo = (...args: Parameters<ReturnType<typeof sendVia>>) => sendVia(client)(...args);
  const historyOf = (id: string): Promise<History> => getFrom(failing.url, failingToken, historyPath(id));

  for (const action of ['edit', 'regenerate'] as const) {
    it(`the same ${action} sent again forks the same place once more (a sibling of the failed branch), not VALIDATION_ERROR`, async () => {
      const first = await sendTo('hello there', null);
      const id = String(first.final!.metadata.conversation_id);
      const before = await historyOf(id);
      const target = before.items.find((m) => m.role === (action === 'edit' ? 'user' : 'assistant'))!;
      const text = action === 'edit' ? 'hello again' : '';
      failNext = true;
      const failed = await sendTo(text, id, action, target.id);
      expect(failed.types.at(-1)).toBe('error');
      expect((await historyOf(id)).active_branch).toBe(1); // the fork committed before the model failed
      const retried = await sendTo(text, id, action, target.id);
      expect(retried.status).toBe('complete');
      const after = await historyOf(id);
      expect(after.active_branch).toBe(2);
      const from = action === 'edit' ? target.seq : before.items.find((m) => m.role === 'user')!.seq + 1;
      expect(after.branches.map((b) => [b.branch, b.parent_branch, b.from_message_seq])).toEqual([
        [1, 0, from],
        [2, 0, from],
      ]);
      expect(after.items.map((m) => [m.role, m.branch])).toEqual([
        ['user', action === 'edit' ? 2 : 0],
        ['assistant', 2],
      ]);
      if (action === 'edit') expect(after.items[0].content).toBe('hello again');
    });
  }
});

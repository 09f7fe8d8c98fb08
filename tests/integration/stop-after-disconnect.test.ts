/**
 * Stop reaches a run whose client left (issue 30, item 6). A run belongs to the engine, not to a
 * connection: a client that goes away leaves it running, and then every Stop must still end it:
 * - Gradio: /cancel with the event id (the event lives as long as its run);
 * - the UI after a reload: POST /api/agent/conversations/:id/cancel (it has no submission left);
 * - v1: POST /runs/:id/cancel after the SSE client of a streamed completion went away.
 * Each time the run ends `cancelled` (stop_reason cancelled), well before its answer would have
 * ended, and the conversation takes the next message. Real HTTP, the real @gradio/client, the
 * offline model slowed down so that an answer lasts many seconds.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chat, collect, connectChat, login } from '../helpers/chat-client.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { readRawStream, sleep } from './gradio-server.ts';
import { v1 } from './v1-support.ts';

const LONG = 'tell me about yourself and what you can help me with today in detail';
const G = '/api/agent/gradio';

let db: TestDatabase;
let server: TestServer;
let token: string;

beforeAll(async () => {
  db = await createTestDatabase();
  // ~100 tokens at 150 ms each: an answer lasts well over 10 s unless it is stopped.
  server = await startTestServer({ db, env: { OFFLINE_MODEL_DELAY_MS: '150' } });
  token = await login(server.url, 'operator');
});
afterAll(async () => {
  await server?.close();
  await db?.drop();
});

const auth = () => ({ authorization: `Bearer ${token}` });

/** The conversation's runs, oldest first. */
async function runsOf(conversationId: string): Promise<{ id: string; status: string }[]> {
  return (await db.pool.query('SELECT id, status FROM runs WHERE conversation_id = $1 ORDER BY started_at', [conversationId])).rows;
}

/** Waits for the run to settle; its status and how its ledger says it stopped. */
async function settled(conversationId: string, runId: string): Promise<{ status: string; stopReason: string }> {
  await expect.poll(async () => (await runsOf(conversationId)).find((r) => r.id === runId)?.status, { timeout: 10_000 }).not.toBe('running');
  const { rows } = await db.pool.query(`SELECT payload FROM conversation_events WHERE conversation_id = $1 AND kind = 'run.finished' AND payload->>'run_id' = $2`, [conversationId, runId]);
  return { status: rows[0].payload.status, stopReason: rows[0].payload.stop_reason };
}

/** The next message in the conversation is answered (not CONVERSATION_BUSY). */
async function answersNext(conversationId: string): Promise<void> {
  const client = await connectChat(server.url, token);
  try {
    const next = await collect(chat(client, 'hello', conversationId));
    expect(next.types).not.toContain('error');
  } finally {
    client.close();
  }
}

/** Starts a long answer over raw Gradio HTTP and drops the stream after a few tokens. */
async function leaveMidAnswer(): Promise<{ eventId: string; fnIndex: number; sessionHash: string; conversationId: string }> {
  const sessionHash = randomUUID().slice(0, 12);
  // /chat's fn_index, and as many values as it has inputs (the rest null: their defaults).
  const config = (await (await fetch(`${server.url}${G}/config`, { headers: auth() })).json()) as { dependencies: { id: number; api_name: string; inputs: unknown[] }[] };
  const endpoint = config.dependencies.find((d) => d.api_name === 'chat')!;
  const fnIndex = endpoint.id;
  const data = endpoint.inputs.map((_, i) => (i === 0 ? { text: LONG, files: [] } : null));
  const join = await fetch(`${server.url}${G}/gradio_api/queue/join`, {
    method: 'POST',
    headers: { ...auth(), 'content-type': 'application/json' },
    body: JSON.stringify({ data, fn_index: fnIndex, session_hash: sessionHash }),
  });
  expect({ status: join.status, body: join.status === 200 ? '' : await join.text() }).toEqual({ status: 200, body: '' });
  const { event_id: eventId } = (await join.json()) as { event_id: string };
  const gone = new AbortController();
  const stream = await fetch(`${server.url}${G}/gradio_api/queue/data?session_hash=${sessionHash}`, { headers: auth(), signal: gone.signal });
  const { frames } = await readRawStream(stream, (all) => all.filter((f) => f.msg === 'process_generating').length >= 3);
  gone.abort();
  const conversationId = frames.find((f) => f.msg === 'process_generating').output.data[0].metadata.conversation_id as string;
  // Let the gateway see the client go and the run stream on without it (a few more tokens).
  await sleep(1_000);
  return { eventId, fnIndex, sessionHash, conversationId };
}

describe('Stop reaches a run whose client left', () => {
  it('Gradio: /cancel with the event id stops the run after its stream went away', async () => {
    const { eventId, fnIndex, sessionHash, conversationId } = await leaveMidAnswer();
    const [run] = (await runsOf(conversationId)).filter((r) => r.status === 'running');
    expect(run).toBeDefined();
    const cancel = await fetch(`${server.url}${G}/gradio_api/cancel`, {
      method: 'POST',
      headers: { ...auth(), 'content-type': 'application/json' },
      body: JSON.stringify({ event_id: eventId, session_hash: sessionHash, fn_index: fnIndex }),
    });
    expect(cancel.status).toBe(200);
    expect(await settled(conversationId, run.id)).toEqual({ status: 'cancelled', stopReason: 'cancelled' });
    await answersNext(conversationId);
  }, 30_000);

  it('the UI after a reload: POST /api/agent/conversations/:id/cancel stops the running answer', async () => {
    const { conversationId } = await leaveMidAnswer();
    const [run] = (await runsOf(conversationId)).filter((r) => r.status === 'running');
    expect(run).toBeDefined();

    // Another user may not stop it (the conversation is not theirs), and it keeps running.
    const viewer = await login(server.url, 'viewer');
    const foreign = await fetch(`${server.url}/api/agent/conversations/${conversationId}/cancel`, { method: 'POST', headers: { authorization: `Bearer ${viewer}` } });
    expect(foreign.status).toBe(404);
    expect((await runsOf(conversationId)).find((r) => r.id === run.id)?.status).toBe('running');

    const stop = await fetch(`${server.url}/api/agent/conversations/${conversationId}/cancel`, { method: 'POST', headers: auth() });
    expect(stop.status).toBe(202);
    expect(await settled(conversationId, run.id)).toEqual({ status: 'cancelled', stopReason: 'cancelled' });
    // Nothing runs any more: a second Stop says so.
    const again = await fetch(`${server.url}/api/agent/conversations/${conversationId}/cancel`, { method: 'POST', headers: auth() });
    expect(again.status).toBe(409);
    expect(((await again.json()) as { error: { code: string } }).error.code).toBe('CONFLICT');
    await answersNext(conversationId);
  }, 30_000);

  it('v1: POST /runs/:id/cancel stops a streamed run whose SSE client went away', async () => {
    const gone = new AbortController();
    const res = await fetch(`${server.url}/api/agent/v1/chat/completions`, {
      method: 'POST',
      headers: { ...auth(), 'content-type': 'application/json' },
      body: JSON.stringify({ messages: [{ role: 'user', content: LONG }], stream: true }),
      signal: gone.signal,
    });
    const runId = res.headers.get('x-run-id')!;
    let seen = '';
    for await (const part of res.body as unknown as AsyncIterable<Uint8Array>) {
      seen += new TextDecoder().decode(part);
      if ((seen.match(/event: token/g) ?? []).length >= 3) break;
    }
    gone.abort();
    await sleep(1_000);
    const before = await v1(server.url, `/runs/${runId}`, { token });
    expect(before.body.status).toBe('running');
    const cancelled = await v1(server.url, `/runs/${runId}/cancel`, { token, body: {} });
    expect(cancelled.status).toBe(200);
    expect(cancelled.body.status).toBe('cancelled');
    await answersNext(before.body.session_id);
  }, 30_000);
});

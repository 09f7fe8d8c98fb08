/**
 * The event ledger through real clients: a killed @gradio/client process, a retry with the same
 * request_id, SSE resume by Last-Event-ID over real HTTP, an attach mid-answer, the page route,
 * capabilities, and the drain on shutdown.
 */
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { Client } from '@gradio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { collect, connectChat, login, type WireMessage } from '../helpers/chat-client.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { readSse, type SseFrame } from '../helpers/sse.ts';

const LONG = 'tell me about yourself and what you can help me with today in detail';

let db: TestDatabase;
let server: TestServer;
let token: string;
let client: Client;

beforeAll(async () => {
  db = await createTestDatabase();
  server = await startTestServer({ db, env: { OFFLINE_MODEL_DELAY_MS: '15', EVENTS_HEARTBEAT_MS: '200' } });
  token = await login(server.url, 'admin');
  client = await connectChat(server.url, token);
});
afterAll(async () => {
  client?.close();
  await server?.close();
  await db?.drop();
});

const auth = () => ({ authorization: `Bearer ${token}` });
/** No `conversationId`: a new conversation ("new"), not the one this client session used last. */
const submit = (c: Client, text: string, requestId: string, conversationId = 'new') =>
  c.submit('/chat', { message: { text, files: [] }, conversation_id: conversationId, request_id: requestId });

async function events(conversationId: string, query = ''): Promise<any> {
  const res = await fetch(`${server.url}/api/agent/conversations/${conversationId}/events?limit=500${query}`, { headers: auth() });
  expect(res.status).toBe(200);
  return res.json();
}

async function runsFor(requestId: string): Promise<number> {
  return Number((await db.pool.query('SELECT count(*) FROM runs WHERE request_id = $1', [requestId])).rows[0].count);
}

const answerOf = (evs: { kind: string; payload: any }[], runId: string) =>
  evs.filter((e) => e.kind === 'assistant.message' && e.payload.run_id === runId).map((e) => e.payload.text).join('');

describe('disconnect is not cancel; request_id', () => {
  it('1. a client process killed mid-answer: the run still finishes and assistant.message holds the full text', async () => {
    const requestId = randomUUID();
    const child = spawn(process.execPath, ['--import', 'tsx', 'tests/helpers/chat-submit-process.ts', server.url, token, LONG, requestId], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    const conversationId = await new Promise<string>((resolve, reject) => {
      child.stdout!.on('data', (chunk) => {
        out += chunk;
        const lines = out.split('\n').filter(Boolean).map((l) => JSON.parse(l) as WireMessage);
        if (lines.filter((m) => m.metadata.type === 'stream_token').length >= 3) resolve(lines[0].metadata.conversation_id);
      });
      child.once('exit', () => reject(new Error(`client exited before 3 tokens: ${out}`)));
    });
    child.kill('SIGKILL');
    const seenTokens = out.split('\n').filter(Boolean).map((l) => JSON.parse(l) as WireMessage).filter((m) => m.metadata.type === 'stream_token').length;

    await expect.poll(async () => (await events(conversationId)).events.some((e: any) => e.kind === 'run.finished'), { timeout: 30_000 }).toBe(true);
    const page = await events(conversationId);
    const finished = page.events.find((e: any) => e.kind === 'run.finished');
    expect(finished.payload).toMatchObject({ status: 'done', stop_reason: 'end_turn', error_code: null });
    const text = answerOf(page.events, finished.payload.run_id);
    expect(text.length).toBeGreaterThan(100);
    expect(page.events.filter((e: any) => e.kind === 'assistant.message').every((e: any) => !e.payload.cancelled)).toBe(true);
    expect(seenTokens).toBeLessThan(text.split(' ').length); // it really was killed mid-answer

    // 2. The same request_id again: no second run, the same answer, from the start.
    const replay = await collect(submit(client, LONG, requestId));
    expect(replay.status).toBe('complete');
    expect(replay.final!.content).toBe(text);
    expect(replay.final!.metadata.conversation_id).toBe(conversationId);
    expect(await runsFor(requestId)).toBe(1);
    expect((await events(conversationId)).events.filter((e: any) => e.kind === 'user.message')).toHaveLength(1);
  });

  it('3. a retry with the same request_id while the run streams follows it (no CONVERSATION_BUSY, no second run)', async () => {
    const requestId = randomUUID();
    const other = await connectChat(server.url, token);
    let retry: Promise<Awaited<ReturnType<typeof collect>>> | undefined;
    const first = await collect(submit(client, LONG, requestId), (_m, i) => {
      if (i === 2) retry = collect(submit(other, LONG, requestId));
    });
    const second = await retry!;
    other.close();
    expect(second.types).not.toContain('error');
    expect(second.final!.content).toBe(first.final!.content);
    expect(second.final!.metadata.conversation_id).toBe(first.final!.metadata.conversation_id);
    expect(await runsFor(requestId)).toBe(1);
  });

  it('4. the same request_id with another message is CONFLICT, and nothing runs', async () => {
    const requestId = randomUUID();
    const first = await collect(submit(client, 'hello', requestId));
    const conflict = await collect(submit(client, 'hello there, something else', requestId));
    expect(conflict.final!.metadata).toMatchObject({ type: 'error', code: 'CONFLICT' });
    expect(await runsFor(requestId)).toBe(1);
    expect((await events(first.final!.metadata.conversation_id)).events.filter((e: any) => e.kind === 'user.message')).toHaveLength(1);
  });

  it('4c. request_id is scoped per conversation (seed 001): the same key in two conversations is two submits; without one, it names the run that opened a conversation', async () => {
    const a = (await collect(submit(client, 'hello', randomUUID()))).final!.metadata.conversation_id;
    const b = (await collect(submit(client, 'hello', randomUUID()))).final!.metadata.conversation_id;
    const requestId = randomUUID();
    const inA = await collect(submit(client, "what's the health of payments-api", requestId, a));
    const inB = await collect(submit(client, "what's the health of payments-api", requestId, b));
    expect([inA.status, inB.status]).toEqual(['complete', 'complete']);
    expect(inB.final!.metadata.conversation_id).toBe(b);
    expect(await runsFor(requestId)).toBe(2);
    // A retry in A replays A's run; nothing runs again.
    const retryA = await collect(submit(client, "what's the health of payments-api", requestId, a));
    expect(retryA.final!.content).toBe(inA.final!.content);
    expect(await runsFor(requestId)).toBe(2);
    // Naming no conversation: no run opened one under this key, so a new conversation starts; its retry replays it.
    const fresh = await collect(submit(client, "what's the health of payments-api", requestId));
    expect([a, b]).not.toContain(fresh.final!.metadata.conversation_id);
    expect(await runsFor(requestId)).toBe(3);
    const retryFresh = await collect(submit(client, "what's the health of payments-api", requestId));
    expect(retryFresh.final!.metadata.conversation_id).toBe(fresh.final!.metadata.conversation_id);
    expect(await runsFor(requestId)).toBe(3);
  });

  it("4b. attack: another user replaying someone's request_id gets a run of their own, never the other's answer", async () => {
    const requestId = randomUUID();
    const mine = await collect(submit(client, "what's the health of payments-api", requestId));
    const viewer = await connectChat(server.url, await login(server.url, 'viewer'));
    const theirs = await collect(submit(viewer, "what's the health of payments-api", requestId));
    viewer.close();
    expect(theirs.status).toBe('complete');
    expect(theirs.final!.metadata.conversation_id).not.toBe(mine.final!.metadata.conversation_id);
    expect(await runsFor(requestId)).toBe(2);
    const owners = (await db.pool.query('SELECT DISTINCT user_id FROM runs WHERE request_id = $1', [requestId])).rows;
    expect(owners).toHaveLength(2);
  });
});

describe('reading the ledger', () => {
  it('5. SSE resume with Last-Event-ID over real HTTP: no gap, no duplicate; partials carry no id', async () => {
    const started = await collect(submit(client, 'hello', randomUUID()));
    const id = started.final!.metadata.conversation_id;
    const turn = collect(submit(client, "what's the health of payments-api and then tell me about yourself in detail", randomUUID(), id));
    const url = `${server.url}/api/agent/conversations/${id}/events/stream?partials=1`;
    const isEnd = (f: SseFrame, all: SseFrame[]) => f.event === 'run.finished' && all.filter((x) => x.event === 'run.finished').length === 2;

    // Disconnect after the first events of the second run.
    const first = await readSse(url, auth(), (f) => f.id !== undefined && Number(f.id) >= 5);
    expect(first.contentType).toMatch(/^text\/event-stream/);
    const lastId = first.frames.filter((f) => f.id !== undefined).at(-1)!.id!;
    // `?after=0` would replay everything: Last-Event-ID wins.
    const second = await readSse(`${url}&after=0`, { ...auth(), 'last-event-id': lastId }, (f, all) => isEnd(f, [...first.frames, ...all]));
    await turn;

    const ids = [...first.frames, ...second.frames].filter((f) => f.id !== undefined).map((f) => Number(f.id));
    const page = await events(id);
    expect(ids).toEqual(page.events.map((e: any) => e.seq)); // 1..n, each once
    expect(ids).toEqual(Array.from({ length: ids.length }, (_, i) => i + 1));
    const committed = [...first.frames, ...second.frames].filter((f) => f.id !== undefined);
    expect(committed.map((f) => f.event)).toEqual(page.events.map((e: any) => e.kind));
    expect(committed.at(-1)!.data).toEqual(page.events.at(-1).payload);
    const partials = [...first.frames, ...second.frames].filter((f) => f.event === 'partial');
    expect(partials.length).toBeGreaterThan(0);
    expect(partials.every((f) => f.id === undefined && typeof f.data.token === 'string')).toBe(true);
  });

  it('6. a subscriber attaching mid-answer with partials=1&snapshot=1 gets the answer so far as ONE partial_snapshot, then the following tokens, nothing doubled', async () => {
    const requestId = randomUUID();
    let conversationId = '';
    let attached: Promise<Awaited<ReturnType<typeof readSse>>> | undefined;
    const turn = await collect(submit(client, LONG, requestId), async (m, i) => {
      conversationId = m.metadata.conversation_id;
      if (i !== 12) return;
      const head = (await events(conversationId)).events.at(-1).seq; // attach after what is committed
      attached = readSse(`${server.url}/api/agent/conversations/${conversationId}/events/stream?after=${head}&partials=1&snapshot=1`, auth(), (f) => f.event === 'run.finished');
    });
    const { frames } = await attached!;
    const partials = frames.filter((f) => f.event === 'partial' || f.event === 'partial_snapshot').map((f) => f.data.token as string);
    const message = frames.find((f) => f.event === 'assistant.message')!;
    expect(partials.length).toBeGreaterThan(1);
    expect(frames.find((f) => f.event === 'partial' || f.event === 'partial_snapshot')!.event).toBe('partial_snapshot'); // the answer so far first, once
    expect(partials.join('')).toBe(message.data.text); // snapshot + following tokens = the answer, once
    expect(message.data.text).toBe(turn.final!.content);
  });

  it('7. pages: after/limit/next_after/has_more; bad limits are VALIDATION_ERROR; another user gets 404', async () => {
    const turn = await collect(submit(client, "what's the health of payments-api", randomUUID()));
    const id = turn.final!.metadata.conversation_id;
    const all = (await events(id)).events;
    expect(all.length).toBeGreaterThanOrEqual(4);
    const p1 = await (await fetch(`${server.url}/api/agent/conversations/${id}/events?limit=2`, { headers: auth() })).json();
    expect(p1.events.map((e: any) => e.seq)).toEqual([1, 2]);
    expect(p1).toMatchObject({ next_after: 2, has_more: true });
    expect(Object.keys(p1.events[0]).sort()).toEqual(['created_at', 'kind', 'payload', 'seq']);
    const p2 = await (await fetch(`${server.url}/api/agent/conversations/${id}/events?after=2&limit=500`, { headers: auth() })).json();
    expect(p2.events[0].seq).toBe(3);
    expect(p2.has_more).toBe(false);
    expect(p2.next_after).toBe(all.at(-1).seq);

    const tooMany = await fetch(`${server.url}/api/agent/conversations/${id}/events?limit=501`, { headers: auth() });
    expect(tooMany.status).toBe(400);
    expect((await tooMany.json()).error.code).toBe('VALIDATION_ERROR');
    const viewer = await login(server.url, 'viewer');
    for (const path of ['events', 'events/stream']) {
      const res = await fetch(`${server.url}/api/agent/conversations/${id}/${path}`, { headers: { authorization: `Bearer ${viewer}` } });
      expect(res.status).toBe(404);
      expect((await res.json()).error.code).toBe('NOT_FOUND');
    }
    expect((await fetch(`${server.url}/api/agent/conversations/${id}/events`)).status).toBe(401);
  });

  it('11. history carries ledger_seq: a reload streams on from it mid-answer, nothing lost, nothing twice', async () => {
    let reading: Promise<Awaited<ReturnType<typeof readSse>>> | undefined;
    let historySeq = -1;
    const turn = await collect(submit(client, LONG, randomUUID()), async (m, i) => {
      if (i !== 10) return;
      const id = m.metadata.conversation_id;
      const history = await (await fetch(`${server.url}/api/assistant/history?conversation_id=${id}`, { headers: auth() })).json();
      historySeq = history.ledger_seq;
      expect(history.items[0].role).toBe('user');
      expect(history.items.at(-1).metadata.type).toBe('answer'); // the answer so far
      reading = readSse(`${server.url}/api/agent/conversations/${id}/events/stream?after=${historySeq}&partials=1&snapshot=1`, auth(), (f) => f.event === 'run.finished');
    });
    const { frames } = await reading!;
    const all = (await events(turn.final!.metadata.conversation_id)).events;
    expect(historySeq).toBe(all.find((e: any) => e.kind === 'assistant.message').seq - 1); // all but the answer committed
    expect(frames.filter((f) => f.id !== undefined).map((f) => Number(f.id))).toEqual(all.filter((e: any) => e.seq > historySeq).map((e: any) => e.seq));
    expect(frames.filter((f) => f.event === 'partial' || f.event === 'partial_snapshot').map((f) => f.data.token).join('')).toBe(turn.final!.content);
  });

  it('8. capabilities are public and say what the server offers', async () => {
    const res = await fetch(`${server.url}/api/agent/v1/capabilities`);
    expect(res.status).toBe(200);
    const body = await res.json();
    expect(body).toMatchObject({ apiVersion: 'v1', features: { partials: true, 'partials.snapshot': true, 'events.stream': true }, limits: { eventsPageDefault: 100, eventsPageMax: 500 } });
    expect(body.serviceVersion).toMatch(/^airlock\/\d+\.\d+\.\d+/);
  });

  it('9. heartbeats are comment lines', async () => {
    const turn = await collect(submit(client, 'hello', randomUUID()));
    const id = turn.final!.metadata.conversation_id;
    const { frames } = await readSse(`${server.url}/api/agent/conversations/${id}/events/stream`, auth(), (_f, all) => all.filter((f) => f.comment === 'heartbeat').length >= 2);
    expect(frames.filter((f) => f.comment === 'heartbeat').length).toBe(2);
    expect(frames.filter((f) => f.id !== undefined).length).toBe((await events(id)).events.length);
  });
});

describe('shutdown', () => {
  it('12. a run still streaming at shutdown commits its partial answer and run.finished cancelled/shutdown', async () => {
    const other = await startTestServer({ db, env: { OFFLINE_MODEL_DELAY_MS: '40', SHUTDOWN_GRACE_MS: '200' } });
    const t = await login(other.url, 'admin');
    const c = await connectChat(other.url, t);
    let conversationId = '';
    await collect(submit(c, LONG, randomUUID()), (m, i) => {
      conversationId = m.metadata.conversation_id;
      if (i === 5) void other.close();
    }).catch(() => undefined);
    c.close();
    await expect.poll(async () => (await events(conversationId)).events.at(-1)?.kind, { timeout: 15_000 }).toBe('run.finished');
    const all = (await events(conversationId)).events;
    expect(all.at(-1).payload).toMatchObject({ status: 'cancelled', stop_reason: 'shutdown' });
    const answer = all.find((e: any) => e.kind === 'assistant.message');
    expect(answer.payload.cancelled).toBe(true);
    expect(answer.payload.text.length).toBeGreaterThan(0);
  });

  it('10. an open event stream gets its remaining events, then event: drain {retry_after_ms: 1000}', async () => {
    const second = await startTestServer({ db, env: { OFFLINE_MODEL_DELAY_MS: '0' } });
    const t = await login(second.url, 'admin');
    const c = await connectChat(second.url, t);
    const turn = await collect(submit(c, 'hello', randomUUID()));
    c.close();
    const id = turn.final!.metadata.conversation_id;
    const reading = readSse(`${second.url}/api/agent/conversations/${id}/events/stream`, { authorization: `Bearer ${t}` }, (f) => f.event === 'drain');
    await new Promise((r) => setTimeout(r, 300));
    await second.close();
    const { frames } = await reading;
    const committed = frames.filter((f) => f.id !== undefined);
    expect(committed.map((f) => Number(f.id))).toEqual((await events(id)).events.map((e: any) => e.seq));
    expect(frames.at(-1)).toMatchObject({ event: 'drain', data: { retry_after_ms: 1000 } });
    expect(frames.at(-1)!.id).toBeUndefined();
  });
});

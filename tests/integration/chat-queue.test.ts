/**
 * Queued input (issue 24 item 4, seed 001) with the real clients: @gradio/client on /chat, fetch on
 * v1 and the edge routes. A message sent while the agent runs waits and runs next, in order; a
 * removed one never runs; MAX_QUEUED_INPUTS caps the queue; a queued message waits out a pending
 * approval and never denies it; Stop ends only the running turn. The running turn is held at the
 * model (model-gate.ts), so "while it runs" involves no timing.
 */
import { randomUUID } from 'node:crypto';
import { HttpAgent } from '@ag-ui/client';
import type { BaseEvent } from '@ag-ui/core';
import type { Client } from '@gradio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chat, collect, connectChat, login, type Turn, type WireMessage } from '../helpers/chat-client.ts';
import type { TestDatabase } from '../helpers/database.ts';
import { startGatedChat, type GatedChat } from '../helpers/gated-chat.ts';
import type { ModelGate } from '../helpers/model-gate.ts';
import type { TestServer } from '../helpers/server.ts';
import { streamCompletion, v1 } from './v1-support.ts';

let db: TestDatabase;
let gate: ModelGate;
let server: TestServer;
let token: string;
let client: Client;

let gated: GatedChat;

beforeAll(async () => {
  gated = await startGatedChat({ MAX_QUEUED_INPUTS: '5' });
  ({ db, gate, server, token, client } = gated);
});
afterAll(() => gated?.close());

/** A /chat call with a request id, its first message apart from its end. */
function send(text: string, conversationId: string, requestId: string, action = '') {
  let first!: (m: WireMessage) => void;
  const firstMessage = new Promise<WireMessage>((resolve) => (first = resolve));
  const done: Promise<Turn> = collect(client.submit('/chat', { message: { text, files: [] }, conversation_id: conversationId, action, request_id: requestId }), (m, i) => {
    if (i === 0) first(m);
  });
  return { first: firstMessage, done };
}

/** A conversation whose next turn is running, held at the model until gate.release(). */
async function runningConversation(text = 'what can you do?'): Promise<{ id: string; running: Promise<Turn> }> {
  const opened = await collect(chat(client, 'hello'));
  const id = opened.final!.metadata.conversation_id;
  const held = gate.hold();
  const running = collect(chat(client, text, id));
  await held;
  return { id, running };
}

const edge = (id: string, method: string, path = '', body?: unknown) =>
  fetch(`${server.url}/api/agent/conversations/${id}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body ? { 'content-type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });

async function userMessages(id: string): Promise<Array<{ request_id: string; text: string; delivery?: string; run_id: string }>> {
  const { rows } = await db.pool.query<{ payload: { request_id: string; text: string; delivery?: string; run_id: string } }>(
    `SELECT payload FROM conversation_events WHERE conversation_id = $1 AND kind = 'user.message' ORDER BY seq`,
    [id],
  );
  return rows.map((r) => r.payload);
}

async function runsOf(id: string, requestId: string): Promise<string[]> {
  const { rows } = await db.pool.query<{ status: string }>('SELECT status FROM runs WHERE conversation_id = $1 AND request_id = $2', [id, requestId]);
  return rows.map((r) => r.status);
}

describe('queued input on /chat (@gradio/client)', () => {
  it('a message sent while the agent runs waits, then runs next; a retry follows it; a removed one never runs', async () => {
    const { id, running } = await runningConversation();
    const second = send('list maintenance events', id, 'q-second');
    expect((await second.first).metadata).toMatchObject({ type: 'queued', position: 1, request_id: 'q-second', conversation_id: id });
    const third = send('search dashboards for latency', id, 'q-third');
    expect((await third.first).metadata).toMatchObject({ type: 'queued', position: 2, request_id: 'q-third' });

    // Nothing of a queued message is in the conversation yet: no run, no user.message.
    expect(await runsOf(id, 'q-second')).toEqual([]);
    const listed = await (await edge(id, 'GET', '/queue')).json();
    expect(listed).toMatchObject({ waiting_for_approval: false, queued: [{ request_id: 'q-second', position: 1, text: 'list maintenance events' }, { request_id: 'q-third', position: 2 }] });

    // Removed before it started: its own call ends (CONFLICT), a second removal is 404.
    expect((await edge(id, 'DELETE', '/queue/q-third')).status).toBe(200);
    const removed = await third.done;
    expect(removed.final!.metadata).toMatchObject({ type: 'error', code: 'CONFLICT' });
    expect((await edge(id, 'DELETE', '/queue/q-third')).status).toBe(404);
    expect((await edge(id, 'DELETE', '/queue/never-queued')).status).toBe(404);

    gate.release();
    expect((await running).status).toBe('complete');
    const ran = await second.done;
    expect(ran.types).not.toContain('error');
    expect(ran.types).toContain('tool_end');
    expect(ran.final!.metadata.conversation_id).toBe(id);

    // In order, written when its turn started, with delivery "queue"; the removed one left no trace.
    const messages = await userMessages(id);
    expect(messages.map((m) => m.text)).toEqual(['hello', 'what can you do?', 'list maintenance events']);
    expect(messages[2]).toMatchObject({ request_id: 'q-second', delivery: 'queue' });
    expect(messages[1].delivery).toBeUndefined();
    expect(await runsOf(id, 'q-second')).toEqual(['done']);
    expect(await runsOf(id, 'q-third')).toEqual([]);
    // Started: no longer removable.
    expect((await edge(id, 'DELETE', '/queue/q-second')).status).toBe(404);
    // The same request id again replays the run it became (idempotent), never a second turn.
    const replay = await collect(client.submit('/chat', { message: { text: 'list maintenance events', files: [] }, conversation_id: id, action: '', request_id: 'q-second' }));
    expect(replay.types).toContain('tool_end');
    expect(await runsOf(id, 'q-second')).toEqual(['done']);
  });

  it('a retry of a queued message follows the same queued message (one turn)', async () => {
    const { id, running } = await runningConversation();
    const queued = send('list maintenance events', id, 'q-retry');
    expect((await queued.first).metadata).toMatchObject({ type: 'queued', position: 1 });
    const retry = send('list maintenance events', id, 'q-retry');
    expect((await retry.first).metadata).toMatchObject({ type: 'queued', position: 1, request_id: 'q-retry' });
    const conflict = await collect(client.submit('/chat', { message: { text: 'something else', files: [] }, conversation_id: id, action: '', request_id: 'q-retry' }));
    expect(conflict.final!.metadata).toMatchObject({ type: 'error', code: 'CONFLICT' });
    gate.release();
    await running;
    const [a, b] = await Promise.all([queued.done, retry.done]);
    expect(a.types).toContain('tool_end');
    expect(b.types).toContain('tool_end');
    expect(await runsOf(id, 'q-retry')).toEqual(['done']);
    expect((await userMessages(id)).filter((m) => m.request_id === 'q-retry')).toHaveLength(1);
  });

  it('Stop ends only the running turn: the queued message then runs', async () => {
    const { id, running } = await runningConversation();
    const queued = send('list maintenance events', id, 'q-after-stop');
    expect((await queued.first).metadata.type).toBe('queued');
    expect((await edge(id, 'POST', '/cancel')).status).toBe(202);
    gate.release();
    // Stopped before its first token (the model held): Gradio ends that call with no value, which
    // the strict reader refuses; the runs table says what happened.
    await running.catch(() => undefined);
    const ran = await queued.done;
    expect(ran.types).toContain('tool_end');
    const { rows } = await db.pool.query<{ request_id: string; status: string }>('SELECT request_id, status FROM runs WHERE conversation_id = $1 ORDER BY started_at', [id]);
    expect(rows.slice(1).map((r) => r.status)).toEqual(['cancelled', 'done']);
  });

  it('a queued message waits while an approval is pending ("waiting for the approval"), never denies it, and runs after the decision', async () => {
    const opened = await collect(chat(client, 'hello'));
    const id = opened.final!.metadata.conversation_id;
    const held = gate.hold();
    const deploy = collect(chat(client, 'deploy checkout-api 9.9.9 to staging', id));
    await held;
    const queued = send("what's the health of payments-api", id, 'q-behind-approval');
    expect((await queued.first).metadata.type).toBe('queued');
    gate.release();
    const paused = await deploy;
    expect(paused.final!.metadata.type).toBe('confirm_required');
    const approvalId = paused.final!.metadata.approval_id as string;

    // Paused: the queue waits for the decision, and says so.
    const listed = await (await edge(id, 'GET', '/queue')).json();
    expect(listed).toMatchObject({ waiting_for_approval: true, queued: [{ request_id: 'q-behind-approval' }] });
    expect(await runsOf(id, 'q-behind-approval')).toEqual([]);

    const confirm = await collect(chat(client, 'confirm', id, 'confirm'));
    expect(confirm.types).toContain('confirm_resolved');
    const ran = await queued.done;
    expect(ran.types).toContain('tool_end');
    const { rows } = await db.pool.query<{ status: string; reason: string | null }>('SELECT status, reason FROM approvals WHERE id = $1', [approvalId]);
    expect(rows[0].status).toBe('approved');
    expect((await userMessages(id)).at(-1)).toMatchObject({ request_id: 'q-behind-approval', delivery: 'queue' });
  });
});

describe('queued input over the edge writes and v1', () => {
  it('at most MAX_QUEUED_INPUTS wait (then CONVERSATION_BUSY); they run in the order sent', async () => {
    const { id, running } = await runningConversation();
    const texts = ['list maintenance events', 'search dashboards for latency', "what's the health of payments-api", 'list maintenance events again', 'hello again'];
    for (const [i, text] of texts.entries()) {
      const res = await edge(id, 'POST', '/events', { kind: 'user.message', payload: { text, requestId: `edge-${i}` } });
      expect(res.status).toBe(202);
      expect(await res.json()).toMatchObject({ queued: true, position: i + 1, delivery: 'queue' });
    }
    const full = await edge(id, 'POST', '/events', { kind: 'user.message', payload: { text: 'one too many', requestId: 'edge-6' } });
    expect(full.status).toBe(409);
    expect((await full.json()).error ?? {}).toBeDefined();
    gate.release();
    await running;
    await expect.poll(async () => (await runsOf(id, 'edge-4')).join(), { timeout: 60_000 }).toBe('done');
    const messages = await userMessages(id);
    expect(messages.slice(2).map((m) => m.text)).toEqual(texts);
    expect(messages.slice(2).every((m) => m.delivery === 'queue')).toBe(true);
  });

  it('v1 stream:true stays open: a queued event, then its own run to session_end; stream:false waits for its turn', async () => {
    const { id, running } = await runningConversation();
    const frames: string[] = [];
    let queuedFrame: Record<string, unknown> | undefined;
    let sawQueued!: () => void;
    const queuedSeen = new Promise<void>((r) => (sawQueued = r));
    const streamed = streamCompletion(server.url, token, { messages: [{ role: 'user', content: 'list maintenance events' }], session_id: id }, (f) => {
      frames.push(f.event);
      if (f.event === 'queued') {
        queuedFrame = f.data;
        sawQueued();
      }
    });
    await queuedSeen;
    expect(queuedFrame).toMatchObject({ type: 'queued', position: 1, session_id: id });
    const sync = v1(server.url, '/chat/completions', { token, body: { messages: [{ role: 'user', content: "what's the health of payments-api" }], session_id: id, stream: false } });
    await expect.poll(async () => (await (await edge(id, 'GET', '/queue')).json()).queued.length).toBe(2);
    gate.release();
    await running;
    const stream = await streamed;
    expect(stream.status).toBe(200);
    expect(frames.slice(0, 2)).toEqual(['session_start', 'queued']);
    expect(frames).toContain('tool_result');
    expect(frames.at(-1)).toBe('done');
    const reply = await sync;
    expect(reply.status).toBe(200);
    expect(reply.body).toMatchObject({ type: 'chat.completion', status: 'completed', session_id: id });
    expect((await userMessages(id)).slice(2).map((m) => m.text)).toEqual(['list maintenance events', "what's the health of payments-api"]);
  });
});

describe('queued input over AG-UI (@ag-ui/client HttpAgent)', () => {
  const agent = (threadId: string) => {
    const a = new HttpAgent({ url: `${server.url}/api/agent/ag-ui`, headers: { Authorization: `Bearer ${token}` }, threadId });
    const events: BaseEvent[] = [];
    a.subscribe({ onEvent: ({ event }) => void events.push(event) });
    return { a, events };
  };
  const say = (a: HttpAgent, text: string, id = randomUUID()) => {
    a.addMessage({ id, role: 'user', content: text });
    return a.runAgent();
  };

  it('a run on a thread whose agent runs: RUN_STARTED, CUSTOM queued, then its own run after the running one', async () => {
    const threadId = `queue-thread-${randomUUID()}`;
    const first = agent(threadId);
    await say(first.a, 'hello');
    const held = gate.hold();
    const running = say(first.a, 'what can you do?');
    await held;

    const other = agent(threadId); // another tab on the same thread
    let sawQueued!: () => void;
    const queuedSeen = new Promise<void>((r) => (sawQueued = r));
    other.a.subscribe({ onCustomEvent: () => sawQueued() });
    const messageId = randomUUID();
    const queued = say(other.a, 'list maintenance events', messageId);
    await queuedSeen;
    expect(other.events.map((e) => e.type)).toEqual(['RUN_STARTED', 'CUSTOM']);
    expect(other.events[1]).toMatchObject({ name: 'queued', value: { type: 'queued', position: 1 } });

    gate.release();
    await running;
    await queued;
    const types = other.events.map((e) => e.type);
    expect(types).toContain('TOOL_CALL_RESULT');
    expect(other.events.at(-1)).toMatchObject({ type: 'RUN_FINISHED', outcome: { type: 'success' } });
    const { rows } = await db.pool.query<{ conversation_id: string }>('SELECT conversation_id FROM conversation_events WHERE kind = $1 AND payload->>$2 = $3', ['user.message', 'client_message_id', messageId]);
    const messages = await userMessages(rows[0].conversation_id);
    expect(messages.map((m) => m.text)).toEqual(['hello', 'what can you do?', 'list maintenance events']);
    expect(messages[2].delivery).toBe('queue');
  });
});

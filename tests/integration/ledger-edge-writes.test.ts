/**
 * Issue 24 item 4, seed 001's ledger words over real HTTP (fetch, as an external channel would
 * call) and the real @gradio/client, against the real gateway and PostgreSQL:
 * - `POST /api/agent/conversations/{id}/events` takes the seed's edge write of `user.message`
 *   (`requestId`, `delivery` queue|guide, metadata fields), under the same auth and idempotency as
 *   a submit: the same requestId is the same submission, another kind is 400, another user's
 *   conversation 404; the event says `delivery: "queue"` (a guide is written as queue);
 * - `assistant.message` carries `input_seqs`: the user.message seqs it answered, also on a
 *   decision's resume (the message that asked for the action).
 */
import { randomUUID } from 'node:crypto';
import type { Client } from '@gradio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { collect, connectChat, login } from '../helpers/chat-client.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { eventually } from './v1-support.ts';

let db: TestDatabase;
let server: TestServer;
let admin: string;
let client: Client;

beforeAll(async () => {
  db = await createTestDatabase();
  server = await startTestServer({ db });
  admin = await login(server.url, 'admin');
  client = await connectChat(server.url, admin);
});
afterAll(async () => {
  client?.close();
  await server?.close();
  await db?.drop();
});

const newConversation = async () =>
  (await collect(client.submit('/chat', { message: { text: 'hello', files: [] }, conversation_id: 'new' }))).final!.metadata.conversation_id as string;

const write = (conversationId: string, body: unknown, token: string | null = admin) =>
  fetch(`${server.url}/api/agent/conversations/${conversationId}/events`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: JSON.stringify(body),
  });

async function ledger(conversationId: string): Promise<Array<{ seq: number; kind: string; payload: any }>> {
  const res = await fetch(`${server.url}/api/agent/conversations/${conversationId}/events?limit=500`, { headers: { authorization: `Bearer ${admin}` } });
  return (await res.json()).events;
}

/** The run's events once it finished. */
const finished = (conversationId: string, runId: string) =>
  eventually(async () => {
    const events = (await ledger(conversationId)).filter((e) => e.payload.run_id === runId);
    return events.some((e) => e.kind === 'run.finished') && events;
  }, 20_000, `run ${runId} to finish`);

describe('edge writes (seed 001)', () => {
  it('a user.message from an external channel is a submission: 201, the same requestId again is the same one (200), the answer follows in the ledger', async () => {
    const conversationId = await newConversation();
    const requestId = `slack:${randomUUID()}`;
    const body = { kind: 'user.message', payload: { text: "what's the health of payments-api", requestId, delivery: 'guide', channel: 'slack', selection: { ts: '1.2' } } };
    const first = await write(conversationId, body);
    expect(first.status).toBe(201);
    const created = await first.json();
    expect(created).toMatchObject({ created: true, requestId, kind: 'user.message', conversation_id: conversationId, delivery: 'queue' });
    expect(created.seq).toEqual(expect.any(Number));

    const again = await write(conversationId, body);
    expect(again.status).toBe(200);
    expect(await again.json()).toMatchObject({ created: false, requestId, seq: created.seq, run_id: created.run_id });

    const events = await finished(conversationId, created.run_id);
    const message = events.find((e) => e.kind === 'user.message')!;
    // A guide is written as queue, so the event says what happened; metadata fields are not stored.
    expect(message).toMatchObject({ seq: created.seq, payload: { text: "what's the health of payments-api", request_id: requestId, delivery: 'queue' } });
    expect(message.payload.channel).toBeUndefined();
    const answers = events.filter((e) => e.kind === 'assistant.message');
    expect(answers.length).toBeGreaterThan(0);
    for (const answer of answers) expect(answer.payload.input_seqs).toEqual([created.seq]);
    expect(events.filter((e) => e.kind === 'run.finished').map((e) => e.payload.status)).toEqual(['done']);

    // The same key with another text is another request: CONFLICT, nothing written.
    const conflict = await write(conversationId, { kind: 'user.message', payload: { text: 'something else', requestId } });
    expect(conflict.status).toBe(409);
    expect((await conflict.json()).error.code).toBe('CONFLICT');
    expect((await ledger(conversationId)).filter((e) => e.kind === 'user.message')).toHaveLength(2);
  });

  it('refuses what the seed refuses: another kind, a bad delivery, selection or retryOf, an empty text (400); no token (401); another user\'s conversation (404)', async () => {
    const conversationId = await newConversation();
    const bad = [
      { kind: 'assistant.message', payload: { text: 'I am the assistant now' } },
      { kind: 'tool.result', payload: { text: 'x' } },
      { kind: 'user.message', payload: { text: 'hi', delivery: 'later' } },
      { kind: 'user.message', payload: { text: 'hi', selection: 'all' } },
      { kind: 'user.message', payload: { text: 'hi', retryOf: -1 } },
      { kind: 'user.message', payload: { text: '   ' } },
      { kind: 'user.message', payload: { text: 'hi', requestId: 'a', request_id: 'b' } },
      { kind: 'user.message', payload: { text: 'hi', requestId: 7 } },
    ];
    for (const body of bad) {
      const res = await write(conversationId, body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect((await res.json()).error.code).toBe('VALIDATION_ERROR');
    }
    expect((await write(conversationId, { kind: 'user.message', payload: { text: 'hi' } }, null)).status).toBe(401);
    const viewer = await login(server.url, 'viewer');
    expect((await write(conversationId, { kind: 'user.message', payload: { text: 'hi' } }, viewer)).status).toBe(404);
    // Nothing of these landed.
    expect((await ledger(conversationId)).filter((e) => e.kind === 'user.message')).toHaveLength(1);
  });
});

describe('assistant.message input_seqs', () => {
  it('a /chat turn answers its own message; a confirm\'s resume answers the message that asked for the action', async () => {
    const asked = await collect(client.submit('/chat', { message: { text: 'deploy checkout-api 9.9.9 to staging', files: [] }, conversation_id: 'new' }));
    const { conversation_id: conversationId, approval_id: approvalId } = asked.final!.metadata as unknown as { conversation_id: string; approval_id: string };
    expect(asked.final!.metadata.type).toBe('confirm_required');
    await collect(client.submit('/chat', { message: { text: 'confirm', files: [] }, conversation_id: conversationId, action: 'confirm', approval_id: approvalId }));
    const events = await ledger(conversationId);
    const deploySeq = events.find((e) => e.kind === 'user.message')!.seq;
    const runs = [...new Set(events.map((e) => e.payload.run_id))];
    expect(runs).toHaveLength(2);
    const answers = events.filter((e) => e.kind === 'assistant.message');
    // The confirm's run wrote no message of its own: its answer is still the deploy request's.
    expect(answers.filter((e) => e.payload.run_id === runs[1]).length).toBeGreaterThan(0);
    for (const answer of answers) expect(answer.payload.input_seqs).toEqual([deploySeq]);
  });
});

/**
 * Partials are opt-in (seed 001; issue 43 item 3): token frames only with `partials=1`, as
 * `event: partial` without `id:`, never replayed after a Last-Event-ID reconnect; the UI's
 * `snapshot=1` gets the answer so far once as `event: partial_snapshot`. The answer is held at the
 * model after its first tokens (model-gate.ts), so "mid-answer" involves no timing.
 */
import { randomUUID } from 'node:crypto';
import type { Client } from '@gradio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { collect, connectChat, login } from '../helpers/chat-client.ts';
import type { TestDatabase } from '../helpers/database.ts';
import { startGatedChat, type GatedChat } from '../helpers/gated-chat.ts';
import type { ModelGate } from '../helpers/model-gate.ts';
import type { TestServer } from '../helpers/server.ts';
import { readSse, type SseFrame } from '../helpers/sse.ts';

const LONG = 'tell me about yourself and what you can help me with today in detail';

let db: TestDatabase;
let gate: ModelGate;
let server: TestServer;
let token: string;
let client: Client;

let gated: GatedChat;

beforeAll(async () => {
  gated = await startGatedChat({ EVENTS_HEARTBEAT_MS: '60000' });
  ({ db, gate, server, token, client } = gated);
});
afterAll(() => gated?.close());

const auth = () => ({ authorization: `Bearer ${token}` });
const submit = (text: string, conversationId: string) => client.submit('/chat', { message: { text, files: [] }, conversation_id: conversationId, request_id: randomUUID() });
const isPartial = (f: SseFrame) => f.event === 'partial' || f.event === 'partial_snapshot';
const tokens = (frames: SseFrame[], event = 'partial') => frames.filter((f) => f.event === event).map((f) => f.data.token as string).join('');

/**
 * Opens a stream and reads it to run.finished; `attached` resolves at its first committed frame:
 * the stream subscribed to the running answer in the same tick it wrote it (event-stream.ts).
 */
function follow(id: string, query: string, headers: Record<string, string> = {}) {
  let attached!: () => void;
  const ready = new Promise<void>((resolve) => (attached = resolve));
  const url = `${server.url}/api/agent/conversations/${id}/events/stream${query}`;
  const done = readSse(url, { ...auth(), ...headers }, (f) => (f.id !== undefined && attached(), f.event === 'run.finished'));
  return { ready, done: done.then((r) => r.frames) };
}

describe('partials are opt-in and never replayed (issue 43 item 3)', () => {
  it('none without partials=1; with it, no id and only what streams after attaching; a Last-Event-ID resume replays nothing; snapshot=1 gets the answer so far once', async () => {
    const first = await collect(submit('hello', 'new'));
    const id = first.final!.metadata.conversation_id;
    const soFar = gate.holdAfter(3);
    const turn = collect(submit(LONG, id));
    const heldText = await soFar;
    const page = await (await fetch(`${server.url}/api/agent/conversations/${id}/events?limit=500`, { headers: auth() })).json();
    const head = page.events.at(-1).seq as number;

    // The UI's way (partials=1&snapshot=1): the answer so far as ONE partial_snapshot without an id.
    // Read until this process has published every token the model let through.
    const ui = await readSse(`${server.url}/api/agent/conversations/${id}/events/stream?after=${head}&partials=1&snapshot=1`, auth(), (_f, all) => tokens(all, 'partial_snapshot') + tokens(all) === heldText);
    expect(ui.frames.filter(isPartial)[0]).toMatchObject({ event: 'partial_snapshot', data: { token: expect.any(String) } });
    expect(ui.frames.filter((f) => f.event === 'partial_snapshot')).toHaveLength(1);
    expect(ui.frames.filter(isPartial).every((f) => f.id === undefined)).toBe(true);

    // Attached mid-answer, before the model goes on: the default, partials=1 fresh, and a resume.
    const plain = follow(id, `?after=${head - 1}`);
    const opted = follow(id, `?after=${head - 1}&partials=1`);
    const resumed = follow(id, '?partials=1&snapshot=1', { 'last-event-id': String(head - 1) });
    await Promise.all([opted.ready, resumed.ready, plain.ready]);
    gate.release();
    const answer = (await turn).final!.content;
    expect(answer.startsWith(heldText)).toBe(true);
    const tail = answer.slice(heldText.length);
    expect(tail.length).toBeGreaterThan(0);

    const withoutOptIn = await plain.done;
    expect(withoutOptIn.filter(isPartial)).toEqual([]); // committed events only
    expect(withoutOptIn.find((f) => f.event === 'assistant.message')?.data.text).toBe(answer);

    const optedIn = await opted.done;
    expect(optedIn.some((f) => f.event === 'partial_snapshot')).toBe(false);
    expect(optedIn.filter(isPartial).every((f) => f.id === undefined)).toBe(true);
    expect(tokens(optedIn)).toBe(tail); // what streamed after it attached, not the answer so far

    const afterReconnect = await resumed.done;
    expect(afterReconnect.some((f) => f.event === 'partial_snapshot')).toBe(false); // even though it asked
    expect(tokens(afterReconnect)).toBe(tail); // nothing of the answer so far replayed
    expect(afterReconnect.filter((f) => f.id !== undefined).map((f) => Number(f.id))[0]).toBe(head);
  });

  it('snapshot=1 without partials=1 is VALIDATION_ERROR; partials must be 1 or 0', async () => {
    const first = await collect(submit('hello', 'new'));
    const id = first.final!.metadata.conversation_id;
    for (const query of ['?snapshot=1', '?partials=yes']) {
      const res = await fetch(`${server.url}/api/agent/conversations/${id}/events/stream${query}`, { headers: auth() });
      expect(res.status).toBe(400);
      expect((await res.json()).error.code).toBe('VALIDATION_ERROR');
    }
  });
});

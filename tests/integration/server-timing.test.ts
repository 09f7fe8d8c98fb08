/**
 * Server-Timing (issue 28 item 6) through the real server: a REST route, a v1 `stream: false`
 * completion with a tool call and Gradio's unqueued `/run/chat` send `Server-Timing: queue, model,
 * tools, db, total`; the v1 JSON completion carries the same `timings`; a streamed v1 completion
 * carries them on its `session_end` instead, a streamed /chat turn on its last message, and a
 * streamed answer (the audit export) has no header.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chat, collect, connectChat, login } from '../helpers/chat-client.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { streamCompletion, v1 } from './v1-support.ts';

let db: TestDatabase;
let server: TestServer;
let token: string;

beforeAll(async () => {
  db = await createTestDatabase();
  server = await startTestServer({ db, env: { OFFLINE_MODEL_DELAY_MS: '1' } });
  token = await login(server.url, 'admin');
});
afterAll(async () => {
  await server?.close();
  await db?.drop();
});

const NAMES = ['queue', 'model', 'tools', 'db', 'total'];

/** `Server-Timing` as {name: ms}, in the header's order. */
function parseServerTiming(header: string | null): Record<string, number> {
  expect(header).toBeTruthy();
  const entries = header!.split(',').map((part) => {
    const [name, dur] = part.trim().split(';');
    expect(dur).toMatch(/^dur=\d+(\.\d+)?$/);
    return [name, Number(dur.slice(4))] as const;
  });
  expect(entries.map(([n]) => n)).toEqual(NAMES);
  return Object.fromEntries(entries);
}

describe('Server-Timing', () => {
  it('a REST route: db time and the total, nothing of a model or tools', async () => {
    const res = await fetch(`${server.url}/api/assistant/conversations`, { headers: { authorization: `Bearer ${token}` } });
    expect(res.status).toBe(200);
    const t = parseServerTiming(res.headers.get('server-timing'));
    expect(t).toMatchObject({ queue: 0, model: 0, tools: 0 });
    expect(t.db).toBeGreaterThan(0);
    expect(t.total).toBeGreaterThanOrEqual(t.db);
  });

  it('a v1 stream:false completion with a tool call: header and timings agree on every part', async () => {
    const reply = await v1(server.url, '/chat/completions', { token, body: { messages: [{ role: 'user', content: 'What is the health of payments-api?' }], stream: false } });
    expect(reply.status).toBe(200);
    expect(reply.body.tool_calls.length).toBeGreaterThan(0);
    const header = parseServerTiming(reply.headers.get('server-timing'));
    const body = reply.body.timings;
    expect(Object.keys(body)).toEqual(NAMES);
    for (const part of ['queue', 'model', 'tools', 'db']) {
      expect(body[part], part).toBeGreaterThan(0);
      // The header is read a moment after the body (the run's last writes may still add db time).
      expect(header[part], part).toBeGreaterThanOrEqual(body[part]);
    }
    expect(header.total).toBeGreaterThanOrEqual(body.total);
    expect(body.total).toBeGreaterThanOrEqual(body.model);
  });

  it('a streamed v1 completion carries timings on session_end, not as a header', async () => {
    const { frames } = await streamCompletion(server.url, token, { messages: [{ role: 'user', content: 'What is the health of payments-api?' }] });
    const end = frames.find((f) => f.event === 'session_end')!.data;
    expect(Object.keys(end.metadata.timings)).toEqual(NAMES);
    expect(end.metadata.timings.model).toBeGreaterThan(0);
    expect(end.metadata.timings.tools).toBeGreaterThan(0);
  });

  it('a streamed /chat turn (the real Gradio client) carries timings on its last message only, also when it pauses', async () => {
    const client = await connectChat(server.url, token);
    try {
      const answer = await collect(chat(client, 'What is the health of payments-api?'));
      const timed = answer.messages.filter((m) => m.metadata.timings);
      expect(timed).toEqual([answer.final]);
      expect(answer.final!.content).toBe(answer.messages.at(-2)!.content); // the last message adds no text
      const t = answer.final!.metadata.timings as Record<string, number>;
      expect(Object.keys(t)).toEqual(NAMES);
      for (const part of ['model', 'tools', 'db']) expect(t[part], part).toBeGreaterThan(0);

      const pause = await collect(chat(client, 'deploy checkout-api 3.1.4 to staging'));
      expect(pause.final!.metadata.type).toBe('confirm_required');
      expect(pause.messages.filter((m) => m.metadata.timings)).toEqual([pause.final]);
      const confirmed = await collect(chat(client, 'confirm', pause.final!.metadata.conversation_id, 'confirm'));
      expect(confirmed.messages.filter((m) => m.metadata.timings)).toEqual([confirmed.final]);
    } finally {
      client.close();
    }
  });

  it("Gradio's unqueued /run/chat", async () => {
    const res = await fetch(`${server.url}/api/agent/gradio/gradio_api/run/chat`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: JSON.stringify({ data: [{ text: 'What is the health of payments-api?', files: [] }] }),
    });
    expect(res.status).toBe(200);
    const t = parseServerTiming(res.headers.get('server-timing'));
    expect(t.model).toBeGreaterThan(0);
    expect(t.tools).toBeGreaterThan(0);
    expect(t.db).toBeGreaterThan(0);
  });

  it('a streamed REST answer (the audit export) has no header', async () => {
    const res = await fetch(`${server.url}/api/audit/export`, { headers: { authorization: `Bearer ${token}` } });
    expect(res.status).toBe(200);
    await res.text();
    expect(res.headers.get('server-timing')).toBeNull();
  });
});

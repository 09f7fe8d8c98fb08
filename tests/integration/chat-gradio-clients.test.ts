/**
 * Issue 13, /chat as Gradio clients see it, against the real app and PostgreSQL with
 * @gradio/client 2.7.0: login with `auth:` (cookie), errors that end the event with
 * success:false after the error ChatMessage, Gradio's MetadataDict keys on tool steps, a paused
 * run's readable `content`, and `log` messages.
 */
import { Client } from '@gradio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chat, collect, connectChat, DEMO_PASSWORD, login } from '../helpers/chat-client.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';

let db: TestDatabase;
let server: TestServer;

beforeAll(async () => {
  db = await createTestDatabase();
  // Tokens 15 ms apart, so a cancel lands mid-answer.
  server = await startTestServer({ db, env: { OFFLINE_MODEL_DELAY_MS: '15' } });
});
afterAll(async () => {
  await server?.close();
  await db?.drop();
});

describe('/chat for Gradio clients', () => {
  it('Client.connect with auth: [user, pass] logs in through /login and chats; a wrong password is refused', async () => {
    const client = await Client.connect(`${server.url}/api/agent/gradio`, { auth: ['admin', DEMO_PASSWORD], events: ['data', 'status'] });
    const turn = await collect(chat(client, 'hello there'));
    expect(turn.status).toBe('complete');
    expect(turn.final!.content.length).toBeGreaterThan(0);
    client.close();
    await expect(Client.connect(`${server.url}/api/agent/gradio`, { auth: ['admin', 'wrong-password'] })).rejects.toThrow(/Invalid credentials/);
  });

  it('/logout revokes the cookie\'s token: the same cookie is refused afterwards', async () => {
    const form = new FormData();
    form.append('username', 'admin');
    form.append('password', DEMO_PASSWORD);
    const res = await fetch(`${server.url}/api/agent/gradio/login`, { method: 'POST', body: form });
    expect(res.status).toBe(200);
    const cookie = res.headers.get('set-cookie')!.split(';')[0];
    expect((await fetch(`${server.url}/api/agent/gradio/config`, { headers: { cookie } })).status).toBe(200);
    const out = await fetch(`${server.url}/api/agent/gradio/logout`, { headers: { cookie }, redirect: 'manual' });
    expect(out.status).toBe(302);
    // The attack: a copy of the cookie kept after logout.
    expect((await fetch(`${server.url}/api/agent/gradio/config`, { headers: { cookie } })).status).toBe(401);
  });

  it('password guessing on /login is throttled like /api/auth/login (429), the right password included', async () => {
    const guess = (password: string) =>
      fetch(`${server.url}/api/agent/gradio/login`, { method: 'POST', body: new URLSearchParams({ username: 'operator', password }) });
    const statuses: number[] = [];
    for (let i = 0; i < 6; i++) statuses.push((await guess(`guess-${i}`)).status);
    expect(statuses.slice(0, 5)).toEqual([401, 401, 401, 401, 401]);
    expect(statuses[5]).toBe(429);
    const locked = await guess(DEMO_PASSWORD);
    expect(locked.status).toBe(429);
    expect(await locked.json()).toEqual({ detail: 'Too many failed logins. Try again later.' });
  });

  it('an error streams its ChatMessage, then the event ends with status error and the code', async () => {
    const client = await connectChat(server.url, await login(server.url, 'admin'));
    const turn = await collect(chat(client, '   '));
    expect(turn.final!.metadata).toMatchObject({ type: 'error', code: 'VALIDATION_ERROR' });
    expect(turn.status).toBe('error');
    expect(turn.errorMessage).toMatch(/^VALIDATION_ERROR: /);
    // The unqueued /run answers the code's HTTP status in Gradio's error payload (not a 500).
    const run = await fetch(`${server.url}/api/agent/gradio/gradio_api/run/chat`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${await login(server.url, 'admin')}` },
      body: JSON.stringify({ data: [{ text: '   ', files: [] }] }),
    });
    expect(run.status).toBe(400);
    expect(await run.json()).toMatchObject({ title: 'VALIDATION_ERROR', error: expect.stringMatching(/^VALIDATION_ERROR: /) });
    // predict() (what Python's predict() mirrors) rejects instead of resolving a "successful" error
    await expect(client.predict('/chat', { message: { text: '   ', files: [] } })).rejects.toMatchObject({ message: expect.stringMatching(/^VALIDATION_ERROR/) });
    client.close();
  });

  it('tool steps carry Gradio metadata (title, status pending|done, id, duration s, log) and log messages', async () => {
    const client = await Client.connect(`${server.url}/api/agent/gradio`, {
      headers: { Authorization: `Bearer ${await login(server.url, 'admin')}` },
      events: ['data', 'status', 'log'],
    });
    const logs: string[] = [];
    const messages: any[] = [];
    for await (const event of chat(client, "what's the health of payments-api")) {
      if (event.type === 'data') messages.push(structuredClone((event.data as unknown[])[0]));
      if (event.type === 'log') logs.push(`${event.level}:${event.log}`);
    }
    const start = messages.find((m) => m.metadata.type === 'tool_start');
    const end = messages.find((m) => m.metadata.type === 'tool_end');
    expect(start.metadata).toMatchObject({ title: '🛠️ check_health', status: 'pending', id: start.metadata.tool_call_id, log: '{"service":"payments-api"}' });
    expect(end.metadata).toMatchObject({ title: '🛠️ check_health', status: 'done', id: start.metadata.tool_call_id });
    expect(end.metadata.duration).toBeCloseTo(end.metadata.duration_ms / 1000, 6);
    expect(logs).toContain('info:Running check_health…');
    client.close();
  });

  it("a paused run's final content says what is waiting and how to confirm; an approval log is sent", async () => {
    const client = await Client.connect(`${server.url}/api/agent/gradio`, {
      headers: { Authorization: `Bearer ${await login(server.url, 'admin')}` },
      events: ['data', 'status', 'log'],
    });
    const logs: string[] = [];
    let final: any;
    for await (const event of chat(client, 'deploy checkout-api 2.4.1 to staging')) {
      if (event.type === 'data') final = structuredClone((event.data as unknown[])[0]);
      if (event.type === 'log') logs.push(`${event.level}:${event.log}`);
    }
    expect(final.metadata.type).toBe('confirm_required');
    expect(final.content).toContain(`approval_id "${final.metadata.approval_id}"`);
    expect(final.content).toContain(`conversation_id "${final.metadata.conversation_id}"`);
    expect(final.content).toMatch(/action "confirm"/);
    expect(logs.some((l) => l.startsWith('warning:Approval needed:'))).toBe(true);
    client.close();
  });

  it('a batch paused for two approvals: the final content names both, one line each', async () => {
    const client = await connectChat(server.url, await login(server.url, 'admin'));
    const turn = await collect(chat(client, 'deploy checkout-api 5.0.1 to staging; deploy payments-api 5.0.1 to staging'));
    const ids = turn.messages.filter((m) => m.metadata.type === 'confirm_required').map((m) => m.metadata.approval_id as string);
    expect(ids).toHaveLength(2);
    const notes = turn.final!.content.split('\n').filter((line) => line.startsWith('Approval needed:'));
    expect(notes).toHaveLength(2);
    ids.forEach((id, i) => expect(notes[i]).toContain(`approval_id "${id}"`));
    client.close();
  });

  it.each(['token', 'auth'] as const)('a client connected with %s: cancels its /chat run (the JS client sends no Authorization to /cancel)', async (how) => {
    const token = await login(server.url, 'admin');
    const options = how === 'token' ? { token: token as `hf_${string}` } : { auth: ['admin', DEMO_PASSWORD] as [string, string] };
    const client = await Client.connect(`${server.url}/api/agent/gradio`, { ...options, events: ['data', 'status'] });
    const submission = chat(client, 'tell me about yourself and what you can help me with today in detail');
    let conversationId = '';
    const turn = await collect(submission, async (m, i) => {
      conversationId = m.metadata.conversation_id;
      if (i === 3) await submission.cancel();
    });
    expect(turn.messages.length).toBeLessThan(40);
    await expect.poll(async () => {
      const history = await (await fetch(`${server.url}/api/assistant/history?conversation_id=${conversationId}`, { headers: { authorization: `Bearer ${token}` } })).json();
      return history.items.find((m: { metadata: { type?: string } }) => m.metadata.type === 'answer')?.metadata.cancelled;
    }, { timeout: 5000 }).toBe(true);
    client.close();
  });
});

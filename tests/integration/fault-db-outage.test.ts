/**
 * Database outages (issue 10.3): a real server process whose PostgreSQL goes away (through a TCP
 * proxy we cut, refuse or black-hole) answers 503 SERVICE_UNAVAILABLE, retryable, on the REST api
 * and the Gradio gateway, never 401; an answer streaming at that moment ends with the same
 * retryable code and is written whole once the database is back; the same token works again.
 * Part of the fault suite (`npm run test:faults`): prints fault, outcome, data lost.
 */
import { Client } from '@gradio/client';
import { randomUUID } from 'node:crypto';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import { chat, collect, connectChat, login } from '../helpers/chat-client.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';
import { createFaultTable } from '../helpers/fault-table.ts';
import { startMain, type MainProcess } from '../helpers/main-process.ts';
import { startTcpProxy, type TcpProxy } from '../helpers/tcp-proxy.ts';

let db: TestDatabase;
let proxy: TcpProxy;
let main: MainProcess;
let dataDir: string;
let token: string;

const GRADIO = '/api/agent/gradio';
const table = createFaultTable('db-outage');

beforeAll(async () => {
  db = await createTestDatabase();
  const target = new URL(inject('databaseUrl'));
  proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port || 5432) });
  dataDir = await mkdtemp(join(tmpdir(), 'airlock-outage-'));
  await chmod(dataDir, 0o755);
  main = await startMain(['--role', 'api,gateway'], {
    DATABASE_URL: proxy.urlFor(db.url),
    DATA_DIR: dataDir,
    DEMO_USERS: 'true',
    DEMO_PASSWORD: 'demo-password-1',
    SERVICE_CLIENT_SECRET: 'test-service-secret-0123456789',
    OFFLINE_MODEL_DELAY_MS: '60',
  });
  token = await login(main.url, 'operator');
});
afterAll(async () => {
  table.print();
  await main?.stop();
  await proxy?.close();
  await db?.drop();
  await rm(dataDir, { recursive: true, force: true });
});

async function get(path: string, bearer: string | null = token) {
  const res = await fetch(main.url + path, { headers: bearer ? { authorization: `Bearer ${bearer}` } : {} });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : null };
}

async function post(path: string, body: unknown, bearer: string | null = token) {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (bearer) headers.authorization = `Bearer ${bearer}`;
  const res = await fetch(main.url + path, { method: 'POST', headers, body: JSON.stringify(body) });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : null };
}

/** Every route a signed-in client uses, REST and Gradio, with the user's valid token. */
const ROUTES: [string, () => ReturnType<typeof get>][] = [
  ['GET /api/auth/me', () => get('/api/auth/me')],
  ['GET /api/assistant/conversations', () => get('/api/assistant/conversations')],
  ['GET /api/assistant/history', () => get(`/api/assistant/history?conversation_id=${randomUUID()}`)],
  ['GET /api/agent/conversations/:id/active', () => get(`/api/agent/conversations/${randomUUID()}/active`)],
  ['POST /api/assistant/conversations', () => post('/api/assistant/conversations', { title: 'x' })],
  ['POST /api/auth/login (right password)', () => post('/api/auth/login', { username: 'operator', password: 'demo-password-1' }, null)],
  ['GET gradio /config', () => get(`${GRADIO}/config`)],
  ['GET gradio /gradio_api/info', () => get(`${GRADIO}/gradio_api/info`)],
  ['POST gradio /gradio_api/queue/join', () => post(`${GRADIO}/gradio_api/queue/join`, { data: [{ text: 'hi', files: [] }, '', ''], fn_index: 0, session_hash: 'outage1' })],
];

/** Every route answers 503 SERVICE_UNAVAILABLE with Retry-After; returns how many did (for the table). */
async function expectAllUnavailable(): Promise<number> {
  let unavailable = 0;
  for (const [name, call] of ROUTES) {
    const res = await call();
    expect(res.status, name).toBe(503);
    expect(res.headers.get('retry-after'), name).toMatch(/^\d+$/);
    expect(res.body.error, name).toMatchObject({ code: 'SERVICE_UNAVAILABLE' });
    unavailable++;
  }
  return unavailable;
}

describe('the database goes away under a running server', () => {
  it('1. control: with the database up, the token works on REST and Gradio', async () => {
    expect((await get('/api/auth/me')).body).toMatchObject({ username: 'operator', role: 'operator' });
    expect((await get(`${GRADIO}/config`)).status).toBe(200);
  });

  it('2. refused (server stopped): every route answers 503 SERVICE_UNAVAILABLE with Retry-After, never 401', async () => {
    await proxy.refuse();
    const unavailable = await expectAllUnavailable();
    // A token that is really invalid is still refused as such: the signature fails before any lookup.
    const [h, p] = token.split('.');
    expect((await get('/api/auth/me', `${h}.${p}.${'A'.repeat(86)}`)).status).toBe(401);
    table.record({ fault: 'PostgreSQL refused (stopped)', outcome: `${unavailable}/${ROUTES.length} routes 503 SERVICE_UNAVAILABLE, 0 x 401`, lost: 0 });
  });

  it('3. the real @gradio/client sees a failed connect that is not a credentials error', async () => {
    const error = await Client.connect(`${main.url}${GRADIO}`, { headers: { Authorization: `Bearer ${token}` } }).then(
      () => null,
      (e: Error) => e,
    );
    expect(error?.message).toMatch(/503/);
    expect(error?.message).not.toMatch(/credentials|not authenticated|401/i);
  });

  it('4. back: the same token works again, and a chat turn completes', async () => {
    await proxy.restore();
    expect((await get('/api/auth/me')).status).toBe(200);
    const turn = await collect(chat(await connectChat(main.url, token), 'What is the health of payments-api?'));
    expect(turn.status).toBe('complete');
    expect(turn.types).toContain('tool_end');
    expect(turn.final?.metadata.type).not.toBe('error');
  });

  it('5. black-holed (host stops answering): requests end within the connect timeout as 503, not a hang', async () => {
    await proxy.hang();
    const started = Date.now();
    const res = await get('/api/auth/me');
    expect(res.status).toBe(503);
    expect(res.body.error.code).toBe('SERVICE_UNAVAILABLE');
    const elapsed = Date.now() - started;
    expect(elapsed).toBeLessThan(15_000);
    await proxy.restore();
    expect((await get('/api/auth/me')).status).toBe(200);
    table.record({ fault: 'PostgreSQL black-holed (no answer)', outcome: `503 after ${elapsed} ms, then 200 with the same token`, lost: 0 });
  });

  it('6. mid-answer: the stream ends with a retryable SERVICE_UNAVAILABLE, never INTERNAL or UNAUTHORIZED', async () => {
    const client = await connectChat(main.url, token);
    let cut = false;
    const turn = await collect(chat(client, 'tell me about yourself and what you can help me with today in detail'), async (m) => {
      if (!cut && m.metadata.type === 'stream_token' && m.content.length > 10) {
        cut = true;
        await proxy.refuse();
      }
    });
    expect(cut).toBe(true);
    const last = turn.final!;
    expect(last.metadata).toMatchObject({ type: 'error', code: 'SERVICE_UNAVAILABLE', retryable: true });
    expect(last.content.length).toBeGreaterThan(10);
    await proxy.restore();
    expect((await get('/api/auth/me')).status).toBe(200);
    expect(main.child.exitCode).toBeNull(); // the process rode it out

    // 7. the partial answer was kept in memory and written whole once the database was back:
    // every character the user saw, marked with the outage, not its first few characters.
    const conversationId = last.metadata.conversation_id;
    let stored: { content: string; metadata: Record<string, any> } | undefined;
    for (const deadline = Date.now() + 30_000; Date.now() < deadline; await new Promise((r) => setTimeout(r, 250))) {
      const { rows } = await db.pool.query(
        "SELECT content, metadata FROM messages WHERE conversation_id = $1 AND metadata->>'type' = 'answer' ORDER BY seq DESC LIMIT 1",
        [conversationId],
      );
      stored = rows[0];
      if (stored?.metadata.error) break;
    }
    expect(stored?.content).toBe(last.content);
    expect(stored?.metadata.error).toMatchObject({ code: 'SERVICE_UNAVAILABLE' });
    const history = await get(`/api/assistant/history?conversation_id=${conversationId}`);
    expect(history.body.items.at(-1)).toMatchObject({ role: 'assistant', content: last.content });
    table.record({
      fault: 'PostgreSQL lost mid-answer, then back',
      outcome: `stream ended SERVICE_UNAVAILABLE; ${stored?.content.length} chars written after the outage`,
      lost: last.content.length - (stored?.content.length ?? 0),
    });
  });
});

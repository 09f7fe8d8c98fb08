/**
 * Issue 9, item 9: inputs that used to reach PostgreSQL and come back as 500s (impossible
 * timestamps, cursors whose values do not fit the column, metadata nested thousands deep, NUL in
 * /chat text) are 400 VALIDATION_ERROR, and nothing is written.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeCursor } from '../../server/api/cursor.ts';
import { chat, collect, connectChat, login } from '../helpers/chat-client.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';

let db: TestDatabase;
let server: TestServer;
let admin: string;
let conversationId: string;
beforeAll(async () => {
  db = await createTestDatabase();
  server = await startTestServer({ db, roles: ['api', 'gateway'] });
  admin = await login(server.url, 'admin');
  conversationId = (await call('POST', '/api/assistant/conversations', { title: 'edge' })).body.id;
});
afterAll(async () => {
  await server?.close();
  await db?.drop();
});

async function call(method: string, path: string, body?: unknown, raw?: string) {
  const res = await fetch(server.url + path, {
    method,
    headers: { authorization: `Bearer ${admin}`, ...(body !== undefined || raw ? { 'content-type': 'application/json' } : {}) },
    body: raw ?? (body === undefined ? undefined : JSON.stringify(body)),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null };
}

const UUID = '00000000-0000-4000-8000-000000000000';
const bad: Array<[string, string]> = [
  ['audit since: Feb 31', '/api/audit?since=2026-02-31T00:00:00Z'],
  ['audit until: year 0', '/api/audit?until=0000-01-01T00:00:00Z'],
  ['audit since: 29 Feb of a common year', '/api/audit?since=2026-02-29T12:00:00%2B01:00'],
  ['audit cursor past bigint', `/api/audit?cursor=${encodeCursor({ b: '9999999999999999999' })}`],
  ['conversation cursor: not a timestamp', `/api/assistant/conversations?cursor=${encodeCursor({ u: 'yesterday', i: UUID })}`],
  ['conversation cursor: Feb 30', `/api/assistant/conversations?cursor=${encodeCursor({ u: '2026-02-30 10:00:00+00', i: UUID })}`],
  ['conversation cursor: rank 1.2.3', `/api/assistant/conversations?q=x&cursor=${encodeCursor({ u: '2026-01-01 10:00:00+00', i: UUID, r: '1.2.3' })}`],
  ['conversation cursor: rank underflows real', `/api/assistant/conversations?q=x&cursor=${encodeCursor({ u: '2026-01-01 10:00:00+00', i: UUID, r: '1e-50' })}`],
  ['conversation cursor: rank overflows real', `/api/assistant/conversations?q=x&cursor=${encodeCursor({ u: '2026-01-01 10:00:00+00', i: UUID, r: '1e39' })}`],
  ['history cursor past bigint', `/api/assistant/history?conversation_id={conv}&before=${encodeCursor({ s: '9223372036854775808' })}`],
  ['history cursor: not an integer', `/api/assistant/history?conversation_id={conv}&before=${encodeCursor({ s: '1.5' })}`],
  ['limit not an integer', '/api/assistant/conversations?limit=1.5'],
];

describe('#9 bad input is 400 VALIDATION_ERROR, never 500', () => {
  it.each(bad)('%s', async (_name, path) => {
    const res = await call('GET', path.replace('{conv}', conversationId));
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('VALIDATION_ERROR');
  });

  it('keeps valid timestamps and cursors working', async () => {
    expect((await call('GET', '/api/audit?since=2024-02-29T00:00:00Z&until=2099-12-31T23:59:59%2B14:00')).status).toBe(200);
    const cursor = encodeCursor({ u: '2026-01-01 10:00:00.123456+00', i: UUID, r: '0.0607927' });
    expect((await call('GET', `/api/assistant/conversations?q=x&cursor=${cursor}`)).status).toBe(200);
  });

  it.each([5_000, 100_000])('refuses message metadata nested %i deep without storing it', async (depth) => {
    const raw = `{"role":"user","content":"deep","metadata":{"x":${'['.repeat(depth)}${']'.repeat(depth)}}}`;
    const res = await call('POST', `/api/assistant/conversations/${conversationId}/messages`, undefined, raw);
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('VALIDATION_ERROR');
    const { rows } = await db.pool.query("SELECT count(*)::int AS n FROM messages WHERE content = 'deep'");
    expect(rows[0].n).toBe(0);
  });

  it('answers NUL in /chat text with a VALIDATION_ERROR event and creates no conversation', async () => {
    const before = (await db.pool.query('SELECT count(*)::int AS n FROM conversations')).rows[0].n;
    const client = await connectChat(server.url, admin);
    try {
      for (const text of ['hello\u0000world', '\u0000']) {
        const turn = await collect(chat(client, text));
        expect(turn.final?.metadata).toMatchObject({ type: 'error', code: 'VALIDATION_ERROR' });
        expect(String(turn.final?.metadata.detail)).toMatch(/NUL/);
      }
    } finally {
      client.close();
    }
    expect((await db.pool.query('SELECT count(*)::int AS n FROM conversations')).rows[0].n).toBe(before);
  });
});

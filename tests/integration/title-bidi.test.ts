/**
 * Issue 30, item 9 (finding 16): conversation titles kept bidi controls (U+202A–U+202E,
 * U+2066–U+2069, U+200E, U+200F, U+061C), so a title could read as something else in every list.
 * Performed against the real API on real PostgreSQL: a given title, a title derived from the first
 * user message (the messages trigger, and airlock_derive_title as the chat turn's opening calls
 * it), and a rename all store the title without them; a title of nothing but controls is refused
 * on rename; migration 190 cleans titles already stored.
 */
import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApi, type ApiHarness } from './api-support.ts';

const RLO = '\u202E';
const ALL = '\u202A\u202B\u202C\u202D\u202E\u2066\u2067\u2068\u2069\u200E\u200F\u061C';
const BIDI = /[\u202A-\u202E\u2066-\u2069\u200E\u200F\u061C]/;

let api: ApiHarness;
let alice: string;
beforeAll(async () => {
  api = await startApi();
  alice = await api.login('operator');
});
afterAll(() => api?.close());

const create = async (body: unknown = {}) => {
  const res = await api.request('POST', '/api/assistant/conversations', { token: alice, body });
  expect(res.status).toBe(201);
  return res.body as { id: string; title: string };
};
const titleInDb = async (id: string) => (await api.db.pool.query<{ title: string }>('SELECT title FROM conversations WHERE id = $1', [id])).rows[0]!.title;

describe('bidi controls in conversation titles', () => {
  it('are stripped from a given title', async () => {
    const conv = await create({ title: `invoice ${RLO}fdp.exe${ALL}` });
    expect(conv.title).toBe('invoice fdp.exe');
    expect(await titleInDb(conv.id)).toBe('invoice fdp.exe');
    // Nothing but controls is an empty title, refused like ''.
    const empty = await api.request('POST', '/api/assistant/conversations', { token: alice, body: { title: ALL } });
    expect(empty.status).toBe(400);
    expect(empty.body.error.code).toBe('VALIDATION_ERROR');
  });

  it('are stripped from a title derived from the first user message', async () => {
    const conv = await create();
    const res = await api.request('POST', `/api/assistant/conversations/${conv.id}/messages`, { token: alice, body: { role: 'user', content: `${RLO}check${ALL} the   payments-api` } });
    expect(res.status).toBeLessThan(300);
    expect(await titleInDb(conv.id)).toBe('check the payments-api');
    const list = await api.request('GET', '/api/assistant/conversations', { token: alice });
    expect(list.body.items.find((c: { id: string }) => c.id === conv.id).title).toBe('check the payments-api');
  });

  it('are stripped by airlock_derive_title (the chat turn opening derives with it), before the 60-character cut', async () => {
    const derive = async (text: string) => (await api.db.pool.query<{ t: string | null }>('SELECT airlock_derive_title($1) AS t', [text])).rows[0]!.t;
    expect(await derive(`a${ALL}b`)).toBe('ab');
    expect(await derive(ALL)).toBeNull();
    expect(await derive(`${ALL.repeat(10)}${'x'.repeat(70)}`)).toBe(`${'x'.repeat(59)}…`);
  });

  it('are stripped on rename, and a title of nothing but controls is refused', async () => {
    const conv = await create({ title: 'plain' });
    const renamed = await api.request('PATCH', `/api/assistant/conversations/${conv.id}`, { token: alice, body: { title: `${RLO}gnp.txt ok\u2066` } });
    expect(renamed.status).toBe(200);
    expect(renamed.body.title).toBe('gnp.txt ok');
    expect(await titleInDb(conv.id)).toBe('gnp.txt ok');
    const empty = await api.request('PATCH', `/api/assistant/conversations/${conv.id}`, { token: alice, body: { title: ` ${ALL} ` } });
    expect(empty.status).toBe(400);
    expect(empty.body.error.code).toBe('VALIDATION_ERROR');
    expect(await titleInDb(conv.id)).toBe('gnp.txt ok');
  });

  it('are cleaned from titles already stored by migration 190', async () => {
    const a = await create({ title: 'placeholder a' });
    const b = await create({ title: 'placeholder b' });
    await api.db.pool.query('UPDATE conversations SET title = $2 WHERE id = $1', [a.id, `old${RLO} title`]);
    await api.db.pool.query('UPDATE conversations SET title = $2 WHERE id = $1', [b.id, ALL]);
    const sql = await readFile(new URL('../../server/db/migrations/190_title_bidi_controls.sql', import.meta.url), 'utf8');
    await api.db.pool.query(sql);
    expect(await titleInDb(a.id)).toBe('old title');
    expect(await titleInDb(b.id)).toBe('New conversation');
    const { rows } = await api.db.pool.query<{ title: string }>('SELECT title FROM conversations');
    expect(rows.filter((r) => BIDI.test(r.title))).toEqual([]);
  });
});

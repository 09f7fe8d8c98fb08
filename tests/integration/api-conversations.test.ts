/**
 * /api/assistant and /api/agent: conversations, history, messages, the active gate. Another
 * user's conversation is 404.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tryTakeLease, setLeaseState } from '../../server/db/leases.ts';
import { startApi, type ApiHarness } from './api-support.ts';

let api: ApiHarness;
let alice: string; // the operator demo user
let bob: string; // the viewer demo user
beforeAll(async () => {
  api = await startApi();
  [alice, bob] = await Promise.all([api.login('operator'), api.login('viewer')]);
});
afterAll(() => api.close());

const create = async (token: string, body: unknown = {}) => {
  const res = await api.request('POST', '/api/assistant/conversations', { token, body });
  expect(res.status).toBe(201);
  return res.body as { id: string; title: string; created_at: string; updated_at: string; archived: boolean };
};
const say = (token: string, id: string, body: unknown) =>
  api.request('POST', `/api/assistant/conversations/${id}/messages`, { token, body });

describe('POST /api/assistant/conversations', () => {
  it('creates with the contract shape; title given, or derived from the first user message', async () => {
    const titled = await create(alice, { title: 'Payments incident' });
    expect(Object.keys(titled).sort()).toEqual(['archived', 'created_at', 'id', 'title', 'updated_at']);
    expect(titled).toMatchObject({ title: 'Payments incident', archived: false });
    const untitled = await create(alice);
    expect(untitled.title).toBe('New conversation');
    await say(alice, untitled.id, { role: 'user', content: 'Why is search-api slow today?' });
    const list = await api.request('GET', '/api/assistant/conversations?limit=1', { token: alice });
    expect(list.body.items[0]).toMatchObject({ id: untitled.id, title: 'Why is search-api slow today?' });
    const noBody = await api.request('POST', '/api/assistant/conversations', { token: alice });
    expect(noBody.status).toBe(201);
  });

  it('validates the title and needs a user token', async () => {
    const res = await api.request('POST', '/api/assistant/conversations', { token: alice, body: { title: 'x'.repeat(201) } });
    expect(res.status).toBe(400);
    expect(res.body.error.details[0]).toMatchObject({ path: 'title', location: 'body' });
    expect((await api.request('POST', '/api/assistant/conversations', { body: {} })).status).toBe(401);
  });
});

describe('GET /api/assistant/conversations', () => {
  it('pages newest activity first, and stays correct while conversations are added', async () => {
    const token = await api.login('admin');
    const ids: string[] = [];
    for (let i = 0; i < 12; i++) ids.push((await create(token, { title: `Paging ${i}` })).id);
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const res: any = await api.request('GET', `/api/assistant/conversations?limit=5${cursor ? `&cursor=${cursor}` : ''}`, { token });
      expect(res.status).toBe(200);
      seen.push(...res.body.items.map((c: { id: string }) => c.id));
      cursor = res.body.next_cursor;
      // New conversations arrive between pages: they must neither shift nor repeat what follows.
      if (pages++ === 0) for (let i = 0; i < 3; i++) await create(token, { title: `Late ${i}` });
    } while (cursor);
    expect(seen).toEqual([...ids].reverse());
  });

  it('moves a conversation to the top when a message is appended', async () => {
    const old = await create(bob, { title: 'old one' });
    await create(bob, { title: 'newer one' });
    await say(bob, old.id, { role: 'user', content: 'bump' });
    const res = await api.request('GET', '/api/assistant/conversations?limit=1', { token: bob });
    expect(res.body.items[0].id).toBe(old.id);
  });

  it('searches titles and message text, best match first', async () => {
    const token = await api.login('admin');
    const inTitle = await create(token, { title: 'Kafka consumer lag on orders topic' });
    const inText = await create(token, { title: 'Morning check' });
    await say(token, inText.id, { role: 'assistant', content: 'Kafka looks fine; one broker had a short spike.' });
    const unrelated = await create(token, { title: 'Deploy checkout' });
    const res = await api.request('GET', '/api/assistant/conversations?q=kafka%20lag', { token });
    expect(res.body.items.map((c: { id: string }) => c.id)).toEqual([inTitle.id]);
    const broad = await api.request('GET', '/api/assistant/conversations?q=kafka', { token });
    const ids = broad.body.items.map((c: { id: string }) => c.id);
    expect(ids).toEqual([inTitle.id, inText.id]); // a title hit outranks a message hit
    expect(ids).not.toContain(unrelated.id);
    // Search results page too.
    const p1 = await api.request('GET', '/api/assistant/conversations?q=kafka&limit=1', { token });
    expect(p1.body.items[0].id).toBe(inTitle.id);
    const p2 = await api.request('GET', `/api/assistant/conversations?q=kafka&limit=1&cursor=${p1.body.next_cursor}`, { token });
    expect(p2.body.items[0].id).toBe(inText.id);
    expect(p2.body.next_cursor).toBeNull();
  });

  it('search results carry a snippet with the found words marked, from the newest matching message (issue 29 item 3)', async () => {
    const token = await api.login('admin');
    const conv = await create(token, { title: 'Quokka round' });
    await say(token, conv.id, { role: 'user', content: 'anything odd in the zeppelin cluster overnight?' });
    await say(token, conv.id, { role: 'assistant', content: 'The zeppelin cluster had one broker restart at 03:10; lag recovered within a minute.' });
    // A message cannot fake a mark: the private-use delimiters are stripped from the text first.
    await say(token, conv.id, { role: 'user', content: 'thanks \uE000pretend\uE001 marks' });
    const res = await api.request('GET', '/api/assistant/conversations?q=zeppelin%20broker', { token });
    expect(res.body.items.map((c: { id: string }) => c.id)).toEqual([conv.id]);
    const snippet = res.body.items[0].snippet as Array<{ text: string; hit: boolean }>;
    expect(snippet.filter((p) => p.hit).map((p) => p.text.toLowerCase())).toEqual(['zeppelin', 'broker']);
    expect(snippet.map((p) => p.text).join('')).toContain('cluster had one');
    // A title-only hit is snippeted from the title; a plain listing has no snippet at all.
    const titled = await api.request('GET', '/api/assistant/conversations?q=quokka', { token });
    expect(titled.body.items[0].snippet).toEqual([{ text: 'Quokka', hit: true }, { text: ' round', hit: false }]);
    const plain = await api.request('GET', '/api/assistant/conversations?limit=1', { token });
    expect(plain.body.items[0]).not.toHaveProperty('snippet');
    // The found word is marked, the text's own delimiters are gone: "pretend" is no hit.
    const fake = await api.request('GET', '/api/assistant/conversations?q=thanks', { token });
    const parts = fake.body.items[0].snippet as Array<{ text: string; hit: boolean }>;
    expect(parts.filter((p) => p.hit).map((p) => p.text)).toEqual(['thanks']);
    expect(parts.map((p) => p.text).join('')).toBe('thanks pretend marks');
  });

  it('GET /conversations/{id}: one of yours, with its current title; anyone else\'s is 404', async () => {
    const conv = await create(bob, { title: 'mine' });
    const res = await api.request('GET', `/api/assistant/conversations/${conv.id}`, { token: bob });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id: conv.id, title: 'mine', archived: false });
    const other = await api.request('GET', `/api/assistant/conversations/${conv.id}`, { token: await api.login('admin') });
    expect(other.status).toBe(404);
    expect(other.body.error.code).toBe('NOT_FOUND');
  });

  it('excludes archived ones unless ?archived=true; restore brings them back', async () => {
    const conv = await create(bob, { title: 'to archive' });
    expect((await api.request('DELETE', `/api/assistant/conversations/${conv.id}`, { token: bob })).status).toBe(204);
    const active = await api.request('GET', '/api/assistant/conversations?limit=100', { token: bob });
    expect(active.body.items.map((c: { id: string }) => c.id)).not.toContain(conv.id);
    const archived = await api.request('GET', '/api/assistant/conversations?archived=true', { token: bob });
    expect(archived.body.items).toEqual([expect.objectContaining({ id: conv.id, archived: true })]);
    const restored = await api.request('POST', `/api/assistant/conversations/${conv.id}/restore`, { token: bob });
    expect(restored.status).toBe(200);
    expect(restored.body).toMatchObject({ id: conv.id, archived: false });
  });

  it('rejects bad queries and foreign cursors with 400', async () => {
    for (const qs of ['limit=0', 'limit=101', 'archived=maybe', 'cursor=nonsense']) {
      const res = await api.request('GET', `/api/assistant/conversations?${qs}`, { token: alice });
      expect(res.status, qs).toBe(400);
      expect(res.body.error.code).toBe('VALIDATION_ERROR');
    }
  });
});

describe('PATCH, DELETE, restore', () => {
  it('renames; a renamed conversation keeps its title when messages arrive', async () => {
    const conv = await create(alice);
    const res = await api.request('PATCH', `/api/assistant/conversations/${conv.id}`, { token: alice, body: { title: 'Renamed' } });
    expect(res.status).toBe(200);
    expect(res.body.title).toBe('Renamed');
    await say(alice, conv.id, { role: 'user', content: 'first words' });
    const search = await api.request('GET', '/api/assistant/conversations?q=renamed', { token: alice });
    expect(search.body.items[0]).toMatchObject({ id: conv.id, title: 'Renamed' });
    const bad = await api.request('PATCH', `/api/assistant/conversations/${conv.id}`, { token: alice, body: { title: '  ' } });
    expect(bad.status).toBe(400);
  });

  it("another user's conversation is 404 everywhere (never 403), as is an unknown or malformed id", async () => {
    const conv = await create(alice, { title: 'private' });
    await say(alice, conv.id, { role: 'user', content: 'secret' });
    const attempts = [
      api.request('PATCH', `/api/assistant/conversations/${conv.id}`, { token: bob, body: { title: 'mine now' } }),
      api.request('DELETE', `/api/assistant/conversations/${conv.id}`, { token: bob }),
      api.request('POST', `/api/assistant/conversations/${conv.id}/restore`, { token: bob }),
      api.request('GET', `/api/assistant/history?conversation_id=${conv.id}`, { token: bob }),
      say(bob, conv.id, { role: 'user', content: 'hi' }),
      api.request('GET', `/api/agent/conversations/${conv.id}/active`, { token: bob }),
      api.request('DELETE', `/api/assistant/conversations/${crypto.randomUUID()}`, { token: alice }),
    ];
    for (const res of await Promise.all(attempts)) {
      expect(res.status).toBe(404);
      expect(res.body.error.code).toBe('NOT_FOUND');
    }
    const search = await api.request('GET', '/api/assistant/conversations?q=secret', { token: bob });
    expect(search.body.items).toEqual([]);
    const malformed = await api.request('DELETE', '/api/assistant/conversations/not-a-uuid', { token: alice });
    expect(malformed.status).toBe(400);
    const still = await api.request('GET', `/api/assistant/history?conversation_id=${conv.id}`, { token: alice });
    expect(still.body.items.map((m: { content: string }) => m.content)).toEqual(['secret']);
  });
});

describe('messages and history', () => {
  it('appends with the Message shape; idempotent by request_id; 409 for another payload', async () => {
    const conv = await create(alice);
    const body = { role: 'user', content: 'Start maintenance on cdn-edge', metadata: { files: [] }, request_id: 'req-1' };
    const first = await say(alice, conv.id, body);
    expect(first.status).toBe(201);
    expect(Object.keys(first.body).sort()).toEqual(['branch', 'content', 'conversation_id', 'created_at', 'id', 'metadata', 'role', 'seq']);
    expect(first.body).toMatchObject({ conversation_id: conv.id, role: 'user', content: body.content, metadata: { files: [] } });
    const again = await say(alice, conv.id, body);
    expect(again.body.id).toBe(first.body.id);
    const conflict = await say(alice, conv.id, { ...body, content: 'something else' });
    expect(conflict.status).toBe(409);
    expect(conflict.body.error.code).toBe('CONFLICT');
    const invalid = await say(alice, conv.id, { role: 'system', content: 'x' });
    expect(invalid.status).toBe(400);
    expect(invalid.body.error.details[0].path).toBe('role');
  });

  it('pages history: oldest first within a page, before pages to older, stable while appending', async () => {
    const conv = await create(alice);
    for (let i = 0; i < 9; i++) await say(alice, conv.id, { role: i % 2 ? 'assistant' : 'user', content: `m${i}`, metadata: { i } });
    const url = (before?: string) =>
      `/api/assistant/history?conversation_id=${conv.id}&limit=4${before ? `&before=${before}` : ''}`;
    const p1 = await api.request('GET', url(), { token: alice });
    expect(p1.body.items.map((m: { content: string }) => m.content)).toEqual(['m5', 'm6', 'm7', 'm8']);
    expect(p1.body.items[0]).toMatchObject({ role: 'assistant', metadata: { i: 5 } });
    await say(alice, conv.id, { role: 'user', content: 'new while paging' });
    const p2 = await api.request('GET', url(p1.body.next_before), { token: alice });
    expect(p2.body.items.map((m: { content: string }) => m.content)).toEqual(['m1', 'm2', 'm3', 'm4']);
    const p3 = await api.request('GET', url(p2.body.next_before), { token: alice });
    expect(p3.body.items.map((m: { content: string }) => m.content)).toEqual(['m0']);
    expect(p3.body.next_before).toBeNull();
    for (const qs of ['conversation_id=nope', `conversation_id=${conv.id}&limit=500`, `conversation_id=${conv.id}&before=zzz`, '']) {
      expect((await api.request('GET', `/api/assistant/history?${qs}`, { token: alice })).status, qs).toBe(400);
    }
  });
});

describe('GET /api/agent/conversations/:id/active', () => {
  it('is idle without a lease, then reports the holder, state and since', async () => {
    const conv = await create(alice);
    const idle = await api.request('GET', `/api/agent/conversations/${conv.id}/active`, { token: alice });
    expect(idle.status).toBe(200);
    expect(idle.body).toEqual({ active: false, state: 'idle', since: null });
    await tryTakeLease(api.db.pool, { conversationId: conv.id, holder: 'run-1', state: 'streaming', ttlS: 30 });
    const streaming = await api.request('GET', `/api/agent/conversations/${conv.id}/active`, { token: alice });
    expect(streaming.body).toMatchObject({ active: true, state: 'streaming', holder: 'run-1' });
    expect(Date.parse(streaming.body.since)).toBeGreaterThan(Date.now() - 60_000);
    await setLeaseState(api.db.pool, { conversationId: conv.id, holder: 'run-1', state: 'awaiting_confirmation', ttlS: 300 });
    const waiting = await api.request('GET', `/api/agent/conversations/${conv.id}/active`, { token: alice });
    expect(waiting.body).toMatchObject({ active: true, state: 'awaiting_confirmation' });
  });

  it('is idle again once the lease expired', async () => {
    const conv = await create(alice);
    await tryTakeLease(api.db.pool, { conversationId: conv.id, holder: 'run-2', state: 'streaming', ttlS: 0.05 });
    await new Promise((r) => setTimeout(r, 120));
    const res = await api.request('GET', `/api/agent/conversations/${conv.id}/active`, { token: alice });
    expect(res.body).toEqual({ active: false, state: 'idle', since: null });
    expect((await api.request('GET', `/api/agent/conversations/nope/active`, { token: alice })).status).toBe(400);
    expect((await api.request('GET', `/api/agent/conversations/${conv.id}/active`)).status).toBe(401);
  });
});

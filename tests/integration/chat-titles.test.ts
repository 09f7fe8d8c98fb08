/**
 * Titles after the first answer (issue 29, item 3) end to end: the real @gradio/client on /chat, the
 * offline model, real PostgreSQL; the title read and renamed through the conversations API.
 */
import type { Client } from '@gradio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { titleFor } from '../../server/engine/title-rule.ts';
import { chat, collect, connectChat, login } from '../helpers/chat-client.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';

let db: TestDatabase;
let server: TestServer;
let token: string;
let admin: Client;

beforeAll(async () => {
  db = await createTestDatabase();
  server = await startTestServer({ db });
  token = await login(server.url, 'admin');
  admin = await connectChat(server.url, token);
});

afterAll(async () => {
  admin?.close();
  await server?.close();
  await db?.drop();
});

async function titleOf(id: string): Promise<string> {
  const res = await fetch(`${server.url}/api/assistant/conversations?limit=100`, { headers: { authorization: `Bearer ${token}` } });
  expect(res.status).toBe(200);
  const { items } = (await res.json()) as { items: Array<{ id: string; title: string }> };
  return items.find((c) => c.id === id)!.title;
}

describe('conversation titles after the first answer', () => {
  it("is the rule's title from the first message and its answer, kept on later turns", async () => {
    const message = 'can you check the health of all services?';
    const first = await collect(chat(admin, message));
    expect(first.status).toBe('complete');
    const id = first.messages[0].metadata.conversation_id;
    expect(await titleOf(id)).toBe(titleFor(message, first.final!.content));
    expect(await titleOf(id)).toBe('Health of all services');

    const second = await collect(chat(admin, "what's the health of payments-api", id));
    expect(second.status).toBe('complete');
    expect(await titleOf(id)).toBe('Health of all services');
  });

  it("never overwrites the user's rename, after its first answer, on a later turn", async () => {
    const first = await collect(chat(admin, 'check health of all services in staging'));
    const id = first.messages[0].metadata.conversation_id;
    expect(await titleOf(id)).toBe('Health of all services in staging');
    const renamed = await fetch(`${server.url}/api/assistant/conversations/${id}`, {
      method: 'PATCH',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ title: 'My staging check' }),
    });
    expect(renamed.status).toBe(200);
    const later = await collect(chat(admin, 'list open incidents', id));
    expect(later.status).toBe('complete');
    expect(await titleOf(id)).toBe('My staging check');
  });

  it('renamed before any answer ended, the first answer keeps the rename', async () => {
    const created = await fetch(`${server.url}/api/assistant/conversations`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({}),
    });
    const { id } = (await created.json()) as { id: string };
    await fetch(`${server.url}/api/assistant/conversations/${id}`, {
      method: 'PATCH',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ title: 'Named first' }),
    });
    const turn = await collect(chat(admin, 'check health of all services', id));
    expect(turn.status).toBe('complete');
    expect(await titleOf(id)).toBe('Named first');
  });
});

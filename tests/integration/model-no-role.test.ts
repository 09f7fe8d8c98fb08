/**
 * Issue 30, item 9 (finding 13): a model whose streamed deltas carry no `role`. @langchain/openai
 * takes a delta's role from the delta, else from the previous delta, so a first delta with none
 * became a ChatMessageChunk and every turn failed. The model's fetch wrapper now gives the first
 * delta `role: "assistant"`. A proxy in front of the offline model strips `role` from every delta
 * of its streamed answers; a plain answer and a turn with a tool call both complete, through the
 * real @gradio/client and the real gateway on real PostgreSQL.
 */
import type { Client } from '@gradio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startOfflineModelServer } from '../../server/agent/offline-model/server.ts';
import { chat, collect, connectChat, login } from '../helpers/chat-client.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';
import { startModelProxy, type ModelProxy } from '../helpers/model-proxy.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';

let db: TestDatabase;
let offline: Awaited<ReturnType<typeof startOfflineModelServer>>;
let model: ModelProxy;
let server: TestServer;
let client: Client;
/** Streamed completions answered with no role in any delta, and the deltas stripped. */
const seen = { streams: 0, stripped: 0 };

/** `data:` lines of an SSE text, with `role` removed from every delta. */
function stripRoles(text: string): string {
  return text.replace(/^data: (\{.*\})$/gm, (_line, json: string) => {
    const data = JSON.parse(json) as { choices?: { delta?: Record<string, unknown> }[] };
    for (const choice of data.choices ?? []) if (choice.delta && 'role' in choice.delta) (delete choice.delta.role, seen.stripped++);
    return `data: ${JSON.stringify(data)}`;
  });
}

beforeAll(async () => {
  db = await createTestDatabase();
  offline = await startOfflineModelServer({ delayMs: 0, modelName: 'airlock-offline-1' });
  model = await startModelProxy(offline.baseUrl, async (req, res, raw) => {
    if (!(req.url?.endsWith('/chat/completions') && raw.length && JSON.parse(raw.toString()).stream)) return false;
    const upstream = await fetch(`${offline.baseUrl}/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: raw.toString() });
    const text = await upstream.text();
    seen.streams++;
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.end(stripRoles(text));
    return true;
  });
  server = await startTestServer({ db, env: { OPENAI_BASE_URL: model.url, OPENAI_API_KEY: 'offline', OPENAI_MAX_RETRIES: '0' } });
  client = await connectChat(server.url, await login(server.url, 'operator'));
});

afterAll(async () => {
  client?.close();
  await server?.close();
  await model?.close();
  await offline?.close();
  await db?.drop();
});

describe('a model whose stream deltas have no role', () => {
  it('answers a plain turn', async () => {
    const turn = await collect(chat(client, 'hello'));
    expect(turn.types).not.toContain('error');
    expect(turn.types).toContain('stream_token');
    expect(turn.final!.content.length).toBeGreaterThan(0);
    expect(seen.stripped).toBeGreaterThan(0); // the model really sent deltas with no role
  }, 30_000);

  it('answers a turn with a tool call, and the stored answer is whole', async () => {
    const before = seen.streams;
    const turn = await collect(chat(client, "what's the health of payments-api"));
    expect(turn.types).not.toContain('error');
    expect(seen.streams - before).toBeGreaterThanOrEqual(2); // the tool call, then the answer
    const conversationId = turn.final!.metadata.conversation_id;
    const { rows } = await db.pool.query<{ status: string }>('SELECT status FROM runs WHERE conversation_id = $1', [conversationId]);
    expect(rows.map((r) => r.status)).toEqual(['done']);
    expect(turn.final!.content.length).toBeGreaterThan(0);
  }, 30_000);
});

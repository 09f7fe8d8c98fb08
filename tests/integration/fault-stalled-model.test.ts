/**
 * Fault (issue 30, item 6): a model stream that stalls mid-answer. A fake OpenAI-compatible
 * endpoint sends one chunk, then only `: ping` comments for ever (what kept a run `running` for 13
 * minutes, its conversation CONVERSATION_BUSY). With MODEL_IDLE_TIMEOUT_MS=1500 the turn ends with
 * a retryable LLM_UNAVAILABLE, the run row is settled, the stalled connection is dropped, and the
 * next message in the same conversation is answered. The real @gradio/client, the real gateway
 * in process, real PostgreSQL; everything but a stalled /chat/completions goes to the offline model.
 */
import type { Client } from '@gradio/client';
import type { ServerResponse } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startOfflineModelServer } from '../../server/agent/offline-model/server.ts';
import { chat, collect, connectChat, login } from '../helpers/chat-client.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';
import { createFaultTable } from '../helpers/fault-table.ts';
import { startModelProxy } from '../helpers/model-proxy.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';

const IDLE_MS = 1_500;
const PING_MS = 200;

const table = createFaultTable('stalled-model');
let db: TestDatabase;

beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  table.print();
  await db?.drop();
});

const chunk = (content: string) =>
  `data: ${JSON.stringify({ id: 'stall-1', object: 'chat.completion.chunk', created: 0, model: 'airlock-offline-1', choices: [{ index: 0, delta: { role: 'assistant', content }, finish_reason: null }] })}\n\n`;

/** Forwards to the offline model; while `stalled`, a streamed completion sends one chunk and then only pings. */
async function startStallingModel(target: string) {
  let stalled = false;
  const open = new Set<ServerResponse>();
  let closedStalls = 0;
  const proxy = await startModelProxy(target, (req, res, body) => {
    if (!(stalled && req.url?.endsWith('/chat/completions') && JSON.parse(body.toString()).stream)) return false;
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.write(chunk('Let me look into that'));
    const ping = setInterval(() => res.write(': ping\n\n'), PING_MS);
    open.add(res);
    res.once('close', () => {
      clearInterval(ping);
      open.delete(res);
      closedStalls++;
    });
    return true;
  });
  return {
    ...proxy,
    stall: (on: boolean) => void (stalled = on),
    /** Stalled streams still open, and those the client closed. */
    streams: () => ({ open: open.size, closed: closedStalls }),
  };
}

describe('a model stream that stalls mid-answer', () => {
  let model: Awaited<ReturnType<typeof startOfflineModelServer>>;
  let stalling: Awaited<ReturnType<typeof startStallingModel>>;
  let server: TestServer;
  let client: Client;

  beforeAll(async () => {
    model = await startOfflineModelServer({ delayMs: 0, modelName: 'airlock-offline-1' });
    stalling = await startStallingModel(model.baseUrl);
    server = await startTestServer({
      db,
      env: { OPENAI_BASE_URL: stalling.url, OPENAI_API_KEY: 'offline', OPENAI_TIMEOUT_MS: '5000', OPENAI_MAX_RETRIES: '0', MODEL_IDLE_TIMEOUT_MS: String(IDLE_MS) },
    });
    client = await connectChat(server.url, await login(server.url, 'operator'));
  });
  afterAll(async () => {
    client?.close();
    await server?.close();
    await stalling?.close();
    await model?.close();
  });

  it('ends the turn with a retryable LLM_UNAVAILABLE after MODEL_IDLE_TIMEOUT_MS; the run is settled and the conversation free', async () => {
    const first = await collect(chat(client, 'hello'));
    const conversationId = first.final!.metadata.conversation_id;

    stalling.stall(true);
    const startedAt = Date.now();
    const failed = await collect(chat(client, 'what can you do?', conversationId));
    const tookMs = Date.now() - startedAt;
    expect(failed.types).toContain('stream_token'); // the one chunk arrived before the stall
    const error = failed.messages.find((m) => m.metadata.type === 'error')!;
    expect(error.metadata).toMatchObject({ code: 'LLM_UNAVAILABLE', retryable: true });
    // Pings every 200 ms did not keep it alive, and it ended near the idle limit (3x margin).
    expect(tookMs).toBeGreaterThanOrEqual(IDLE_MS);
    expect(tookMs).toBeLessThan(IDLE_MS * 3);

    // The run row is settled (nothing left running), and the stalled upstream connection dropped.
    const { rows } = await db.pool.query<{ status: string }>('SELECT status FROM runs WHERE conversation_id = $1 ORDER BY started_at', [conversationId]);
    expect(rows.map((r) => r.status)).toEqual(['done', 'failed']);
    await expect.poll(() => stalling.streams(), { timeout: IDLE_MS * 3 }).toEqual({ open: 0, closed: 1 });

    // The conversation is free: the next message is answered, not CONVERSATION_BUSY.
    stalling.stall(false);
    const again = await collect(chat(client, 'what can you do?', conversationId));
    expect(again.types).not.toContain('error');
    expect(again.final!.content.length).toBeGreaterThan(0);
    // The process is up (its health answers), not merely this conversation.
    expect((await fetch(`${server.url}/api/agent/v1/health`)).status).toBe(200);
    table.record({ fault: 'stalled model', outcome: `LLM_UNAVAILABLE (retryable) after ${tookMs} ms, run failed, next turn answers, process up`, lost: 0 });
  }, 30_000);
});

/**
 * Faults (crash-safety issue, proof): the model endpoint flapping (down, slow, garbage) and SIGTERM
 * with 50 streams open. Real processes and clients: the offline model behind a proxy the test
 * controls, the real @gradio/client, the real server/main.ts for the shutdown.
 */
import type { Client } from '@gradio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startOfflineModelServer } from '../../server/agent/offline-model/server.ts';
import { chat, collect, connectChat, login } from '../helpers/chat-client.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';
import { createFaultTable } from '../helpers/fault-table.ts';
import { startMain } from '../helpers/main-process.ts';
import { startModelProxy } from '../helpers/model-proxy.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';

type Mode = 'up' | 'down' | 'slow' | 'garbage';

const table = createFaultTable('model-and-shutdown');
let db: TestDatabase;

beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  table.print();
  await db?.drop();
});

/** An OpenAI-compatible endpoint that forwards to the offline model, or fails the way `mode` says. */
async function startFlappingModel(target: string) {
  let mode: Mode = 'up';
  const proxy = await startModelProxy(target, (req, res) => {
    if (mode === 'down') return req.socket.destroy(), true; // connection reset, as a dead host
    if (mode === 'slow') return true; // never answers: the client's timeout must end it
    if (mode === 'garbage') {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      return res.end('data: {not json at all\n\ndata: [DONE]\n\n'), true;
    }
    return false;
  });
  return { ...proxy, set: (next: Mode) => void (mode = next) };
}

describe('the model endpoint flapping', () => {
  let model: Awaited<ReturnType<typeof startOfflineModelServer>>;
  let flapping: Awaited<ReturnType<typeof startFlappingModel>>;
  let server: TestServer;
  let client: Client;

  beforeAll(async () => {
    model = await startOfflineModelServer({ delayMs: 0, modelName: 'airlock-offline-1' });
    flapping = await startFlappingModel(model.baseUrl);
    server = await startTestServer({
      db,
      env: { OPENAI_BASE_URL: flapping.url, OPENAI_API_KEY: 'offline', OPENAI_TIMEOUT_MS: '1500', OPENAI_MAX_RETRIES: '0' },
    });
    client = await connectChat(server.url, await login(server.url, 'operator'));
  });
  afterAll(async () => {
    client?.close();
    await server?.close();
    await flapping?.close();
    await model?.close();
  });

  it.each(['down', 'slow', 'garbage'] as const)('%s: the turn ends with a retryable LLM_UNAVAILABLE, and the next turn works once it is back', async (mode) => {
    const first = await collect(chat(client, 'hello'));
    const conversationId = first.final!.metadata.conversation_id;
    flapping.set(mode);
    const failed = await collect(chat(client, 'what can you do?', conversationId));
    const error = failed.messages.find((m) => m.metadata.type === 'error')!;
    expect(error.metadata).toMatchObject({ code: 'LLM_UNAVAILABLE', retryable: true });
    flapping.set('up');
    const again = await collect(chat(client, 'what can you do?', conversationId));
    expect(again.types).not.toContain('error');
    expect(again.final!.content.length).toBeGreaterThan(0);
    table.record({ fault: `model endpoint ${mode}`, outcome: 'LLM_UNAVAILABLE (retryable), next turn answers', lost: 0 });
  });
});

describe('SIGTERM with 50 streams open', () => {
  // A database of its own: the in-process server above sealed its signing key with a key this
  // separate process does not share.
  let own: TestDatabase;
  beforeAll(async () => {
    own = await createTestDatabase();
  });
  afterAll(async () => {
    await own?.drop();
  });

  it('every stream gets a terminal message, every run is finished in the ledger, the process exits 0', async () => {
    const main = await startMain([], {
      DATABASE_URL: own.url, DEMO_USERS: 'true', OFFLINE_MODEL_DELAY_MS: '40', SHUTDOWN_GRACE_MS: '500',
      CHAT_USER_CONCURRENCY: '64', CHAT_USER_QUEUE: '64',
    });
    const client = await connectChat(main.url, await login(main.url, 'viewer'));
    let streaming = 0;
    let resolveAll!: () => void;
    const allStreaming = new Promise<void>((resolve) => (resolveAll = resolve));
    const turns = Array.from({ length: 50 }, () => {
      let counted = false;
      return collect(chat(client, 'tell me about yourself and what you can help me with today in detail'), (m) => {
        if (counted || m.metadata.type !== 'stream_token') return;
        counted = true;
        if (++streaming === 50) resolveAll();
      }).catch((error: Error) => ({ status: `threw ${error.message}`, messages: [] }));
    });
    await allStreaming;
    main.child.kill('SIGTERM');
    const ended = await Promise.all(turns);
    expect(await main.exited).toBe(0);
    client.close();
    // Each stream ended (the iterator returned) with a terminal status, none hung.
    expect(ended.map((t) => t.status).filter((s) => s !== 'complete' && s !== 'error')).toEqual([]);
    const { rows } = await own.pool.query<{ status: string; n: number }>(`SELECT status, count(*)::int AS n FROM runs GROUP BY status`);
    const running = rows.find((r) => r.status === 'running')?.n ?? 0;
    expect(running).toBe(0);
    table.record({ fault: 'SIGTERM with 50 open streams', outcome: `all ended; runs ${rows.map((r) => `${r.status}=${r.n}`).join(', ')}; exit 0`, lost: running });
  });
});

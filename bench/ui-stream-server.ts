/**
 * The UI bench's server: the built UI (web role), the real Gradio server code with a synthetic
 * `/chat` that streams N markdown tokens as the gateway would (ChatMessage with the answer so far),
 * and the few REST answers the chat page asks for. Lets the bench measure the UI alone.
 */
import Fastify, { type FastifyInstance } from 'fastify';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chatEndpoint } from '../server/chat/chat-endpoint.ts';
import { gradioPlugin } from '../server/gradio/index.ts';
import { webRoutes } from '../server/web/index.ts';

/** A realistic answer: prose, a list, a code block and a table, repeated, split into word tokens. */
export function syntheticTokens(count: number): string[] {
  const block = [
    'Checked **payments-api** across three regions. Latency is within its objective, but two things stand out:\n\n',
    '- p95 rose from 180 ms to 240 ms after the 14:05 deploy\n- error rate is flat at 0.2 %\n\n',
    '```sh\nkubectl -n payments rollout history deploy/payments-api\n```\n\n',
    '| region | p95 | errors |\n|---|---|---|\n| eu-west | 238 ms | 0.2 % |\n| us-east | 244 ms | 0.3 % |\n\n',
  ].join('');
  const words = block.split(/(?<=\s)/);
  return Array.from({ length: count }, (_, i) => words[i % words.length]);
}

export async function startStreamServer(options: { tokens: number; intervalMs: number }): Promise<{ url: string; app: FastifyInstance }> {
  const app = Fastify({ logger: false });
  const now = new Date().toISOString();
  const conversation = { id: 'bench', title: 'Bench', created_at: now, updated_at: now, archived: false };
  // The page signs itself in from its refresh cookie; this bench server signs everybody in as one user.
  app.post('/api/auth/refresh', async () => ({ access_token: 'bench', expires_in: 3600, user: { id: 'u', username: 'bench', role: 'admin' } }));
  app.get('/api/agent/info', async () => ({ model: 'bench', offline_model: false, approval_timeout_s: 300 }));
  app.get('/api/assistant/conversations', async () => ({ items: [conversation], next_cursor: null }));
  app.post('/api/assistant/conversations', async () => conversation);
  app.get('/api/assistant/history', async () => ({ items: [], next_before: null }));
  app.get('/api/agent/conversations/:id/active', async () => ({ active: false, state: 'idle', since: null }));

  const tokens = syntheticTokens(options.tokens);
  await app.register(gradioPlugin, {
    prefix: '/api/agent/gradio',
    authenticate: () => ({}),
    dataDir: mkdtempSync(join(tmpdir(), 'airlock-bench-')),
    uploadMaxBytes: 1024 * 1024,
    // The gateway's own /chat declaration (so the page's calls resolve as they do in the product), a synthetic handler.
    endpoints: [
      chatEndpoint(async function* (request) {
        let content = '';
        for (const token of tokens) {
          if (request.signal.aborted) return;
          content += token;
          yield [{ role: 'assistant', content, metadata: { type: 'stream_token', token, conversation_id: 'bench' } }];
          await new Promise((r) => setTimeout(r, options.intervalMs));
        }
      }),
    ],
  });
  await app.register(webRoutes);
  await app.listen({ host: '127.0.0.1', port: 0 });
  const address = app.server.address() as { port: number };
  return { url: `http://127.0.0.1:${address.port}`, app };
}

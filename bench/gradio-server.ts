/**
 * Child process for bench/gradio.bench.ts: the gradio plugin (Fastify) and a minimal node:http
 * SSE baseline, both producing the same tokens at the same cadence (one event-loop turn per
 * token, as tokens read from an upstream model would arrive). Answers CPU and RSS queries over IPC
 * so the parent measures server-side cost only.
 */
import { mkdtemp } from 'node:fs/promises';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Fastify from 'fastify';
import { gradioPlugin, type EndpointDefinition } from '../server/gradio/index.ts';

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));
export const tokenAt = (i: number) => ` tok${i % 97}`;

async function* tokens(n: number, signal?: AbortSignal): AsyncGenerator<string> {
  for (let i = 0; i < n && !signal?.aborted; i++) {
    await nextTurn();
    yield tokenAt(i);
  }
}

const endpoints: EndpointDefinition[] = [
  {
    apiName: 'stream',
    inputs: [{ name: 'count', label: 'Count', component: 'number', default: 2000 }],
    outputs: [{ label: 'Response', component: 'json' }],
    concurrencyLimit: 1000,
    queueSize: 5000,
    async *handler({ data, signal }) {
      let content = '';
      for await (const token of tokens(data[0] as number, signal)) {
        content += token;
        yield [{ role: 'assistant', content, metadata: { type: 'stream_token', token } }];
      }
    },
  },
  {
    apiName: 'idle',
    inputs: [],
    outputs: [{ label: 'Response', component: 'json' }],
    concurrencyLimit: 5000,
    queueSize: 5000,
    handler: ({ signal }) => new Promise((resolve) => signal.addEventListener('abort', () => resolve([null]))),
  },
];

const app = Fastify({ logger: false });
await app.register(gradioPlugin, {
  prefix: '/api/agent/gradio',
  endpoints,
  authenticate: () => ({ user: 'bench' }),
  dataDir: await mkdtemp(join(tmpdir(), 'airlock-bench-')),
  uploadMaxBytes: 1024 * 1024,
});
await app.listen({ host: '127.0.0.1', port: 0 });

// The baseline: the same tokens as plain SSE frames, written one per token.
const raw = createServer(async (req, res) => {
  const url = new URL(req.url ?? '/', 'http://x');
  res.writeHead(200, { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-cache' });
  if (url.pathname === '/idle') {
    res.flushHeaders(); // held open until the client leaves
    return;
  }
  const n = Number(url.searchParams.get('n') ?? 2000);
  for await (const token of tokens(n)) res.write(`data: ${JSON.stringify({ token })}\n\n`);
  res.end();
});
raw.keepAliveTimeout = 60_000;
await new Promise<void>((resolve) => raw.listen(0, '127.0.0.1', resolve));

const port = (s: { address(): unknown }) => (s.address() as { port: number }).port;
process.on('message', (message: { cmd: string }) => {
  if (message.cmd === 'cpu') process.send!({ cpu: process.cpuUsage() });
  if (message.cmd === 'rss') {
    (globalThis as { gc?: () => void }).gc?.();
    setTimeout(() => {
      (globalThis as { gc?: () => void }).gc?.();
      const m = process.memoryUsage();
      process.send!({ rss: { rss: m.rss, heap: m.heapUsed + m.external } });
    }, 200);
  }
  if (message.cmd === 'exit') void app.close().then(() => process.exit(0));
});
// The parent went away (finished, killed or timed out): do not linger.
process.on('disconnect', () => process.exit(0));
process.send!({ ready: true, gradioPort: port(app.server), rawPort: port(raw) });

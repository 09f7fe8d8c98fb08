/**
 * /chat bench: time to first token and per-token time of /chat (real @gradio/client -> gateway
 * -> LangGraph -> ChatOpenAI -> offline model) against the offline model streamed directly, in
 * one run; and confirm -> first resumed token latency.
 *
 *   npm run bench -- chat            (BENCH_TURNS to tune)
 */
import { Client } from '@gradio/client';
import { buildApp, localUrl } from '../server/app.ts';
import { loadConfig } from '../server/config.ts';
import { startOfflineModelServer } from '../server/chat/offline-model-server.ts';
import { median, openBenchDatabase } from './support.ts';

const TURNS = Number(process.env.BENCH_TURNS ?? 15);
const PROMPT = process.env.BENCH_PROMPT ?? 'hello';
const PASSWORD = 'bench-password-1';

interface Timing {
  ttftMs: number;
  perTokenMs: number;
  tokens: number;
}

/** Streams the offline model's answer directly over its OpenAI-compatible SSE. */
async function direct(baseUrl: string): Promise<Timing> {
  const start = performance.now();
  const res = await fetch(`${baseUrl}/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'airlock-offline-1', stream: true, messages: [{ role: 'user', content: PROMPT }] }),
  });
  let first = 0;
  let tokens = 0;
  const decoder = new TextDecoder();
  for await (const chunk of res.body!) {
    for (const line of decoder.decode(chunk, { stream: true }).split('\n')) {
      if (!line.startsWith('data: {')) continue;
      const delta = JSON.parse(line.slice(6)).choices?.[0]?.delta?.content;
      if (!delta) continue;
      tokens++;
      if (!first) first = performance.now();
    }
  }
  const end = performance.now();
  return { ttftMs: first - start, perTokenMs: (end - first) / Math.max(1, tokens - 1), tokens };
}

async function viaChat(client: Client, text: string, conversationId = '', action = ''): Promise<Timing & { last: any }> {
  const start = performance.now();
  let first = 0;
  let tokens = 0;
  let last: any;
  const submission = client.submit('/chat', { message: { text, files: [] }, conversation_id: conversationId, action });
  for await (const event of submission) {
    if (event.type !== 'data') continue;
    last = structuredClone((event.data as unknown[])[0]);
    if (last.metadata.type !== 'stream_token') continue;
    tokens++;
    if (!first) first = performance.now();
  }
  const end = performance.now();
  return { ttftMs: first - start, perTokenMs: (end - first) / Math.max(1, tokens - 1), tokens, last };
}

async function main(): Promise<void> {
  const db = await openBenchDatabase();
  const config = loadConfig({
    HOST: '127.0.0.1',
    PORT: '0',
    LOG_LEVEL: 'silent',
    DEMO_PASSWORD: PASSWORD,
    SERVICE_CLIENT_SECRET: 'bench-service-secret-0123456789',
    OFFLINE_MODEL_DELAY_MS: '0',
  });
  const app = await buildApp({ config, roles: ['api', 'gateway'], pool: db.pool, databaseUrl: db.url });
  await app.listen({ host: '127.0.0.1', port: 0 });
  const base = localUrl(app);
  const model = await startOfflineModelServer({ delayMs: 0, modelName: 'airlock-offline-1' });
  const login = await fetch(`${base}/api/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ username: 'admin', password: PASSWORD }),
  });
  const { access_token: token } = (await login.json()) as { access_token: string };
  const client = await Client.connect(`${base}/api/agent/gradio`, { headers: { Authorization: `Bearer ${token}` }, events: ['data', 'status'] });

  await direct(model.baseUrl); // warm-up
  await viaChat(client, PROMPT);
  const directRuns: Timing[] = [];
  const chatRuns: Timing[] = [];
  for (let i = 0; i < TURNS; i++) {
    directRuns.push(await direct(model.baseUrl));
    chatRuns.push(await viaChat(client, PROMPT)); // a new conversation each turn
  }

  const resumeTtft: number[] = [];
  for (let i = 0; i < Math.ceil(TURNS / 2); i++) {
    const pause = await viaChat(client, `deploy checkout-api 1.0.${i} to staging`);
    const id = pause.last.metadata.conversation_id;
    resumeTtft.push((await viaChat(client, 'confirm', id, 'confirm')).ttftMs);
  }

  const row = (name: string, runs: Timing[]) =>
    `| ${name} | ${median(runs.map((r) => r.ttftMs)).toFixed(2)} | ${(median(runs.map((r) => r.perTokenMs)) * 1000).toFixed(0)} | ${median(runs.map((r) => r.tokens))} |`;
  const d = median(directRuns.map((r) => r.perTokenMs));
  const c = median(chatRuns.map((r) => r.perTokenMs));
  console.log(`/chat vs the offline model streamed directly (median of ${TURNS} turns, model delay 0)`);
  console.log('| path | time to first token (ms) | per token (µs) | tokens |');
  console.log('|---|---|---|---|');
  console.log(row('offline model, direct SSE', directRuns));
  console.log(row('/chat via @gradio/client', chatRuns));
  console.log(`per-token overhead of /chat: ${((c - d) * 1000).toFixed(0)} µs (${(c / d).toFixed(2)}x)`);
  console.log(`confirm -> first resumed token: median ${median(resumeTtft).toFixed(2)} ms over ${resumeTtft.length} approvals`);

  client.close();
  await model.close();
  await app.close();
  await db.close();
}

await main();

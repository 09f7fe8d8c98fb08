/**
 * Ledger bench (issue 8), in one run:
 * 1. what the ledger adds per submit: the old path wrote the user message; the engine also looks
 *    up the request_id, inserts the run row and commits user.message with the message in one
 *    transaction (the difference, same database), and which part of it is on the path to the
 *    first token (the run row: the user.message commit overlaps the model call).
 * 2. ledger rows per answer: events are written per segment, never per token.
 * 3. attach latency: an event-stream request made mid-answer -> its first partial frame (the
 *    answer-so-far snapshot).
 *
 *   npm run bench -- ledger          (BENCH_SAMPLES to tune)
 */
import { randomUUID } from 'node:crypto';
import { Client } from '@gradio/client';
import { buildApp, localUrl } from '../server/app.ts';
import { loadConfig } from '../server/config.ts';
import { createConversation } from '../server/db/conversations.ts';
import { withTransaction } from '../server/db/index.ts';
import { appendMessage } from '../server/db/messages.ts';
import { findRunByRequest, insertRun } from '../server/db/runs.ts';
import { PgLedger } from '../server/engine/index.ts';
import { median, openBenchDatabase } from './support.ts';

const SAMPLES = Number(process.env.BENCH_SAMPLES ?? 200);
const PASSWORD = 'bench-password-1';
const LONG = 'tell me about yourself and what you can help me with today in detail';

async function time(fn: () => Promise<unknown>): Promise<number> {
  const start = performance.now();
  await fn();
  return performance.now() - start;
}

async function main(): Promise<void> {
  const db = await openBenchDatabase();
  const config = loadConfig({
    HOST: '127.0.0.1', PORT: '0', LOG_LEVEL: 'silent', DEMO_PASSWORD: PASSWORD,
    SERVICE_CLIENT_SECRET: 'bench-service-secret-0123456789', OFFLINE_MODEL_DELAY_MS: '10',
  });
  const app = await buildApp({ config, roles: ['api', 'gateway'], pool: db.pool, databaseUrl: db.url });
  await app.listen({ host: '127.0.0.1', port: 0 });
  const base = localUrl(app);
  const login = await fetch(`${base}/api/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username: 'admin', password: PASSWORD }) });
  const { access_token: token, user } = (await login.json()) as { access_token: string; user: { id: string } };

  // 1. Before the first token: old path vs engine path, alternating so load hits both alike.
  const ledger = new PgLedger(db.pool);
  const conversationId = (await createConversation(db.pool, { userId: user.id, text: 'bench' })).id;
  const oldPath: number[] = [];
  const newPath: number[] = [];
  const runRow: number[] = [];
  for (let i = 0; i < SAMPLES; i++) {
    const key = randomUUID();
    runRow.push(await time(() => insertRun(db.pool, { id: randomUUID(), conversationId, userId: user.id, requestId: key, requestHash: 'h', owner: 'bench', leaseTtlS: 30 })));
    oldPath.push(await time(() => appendMessage(db.pool, { conversationId, role: 'user', content: 'hi', metadata: {} })));
    newPath.push(await time(async () => {
      const requestId = randomUUID();
      const runId = randomUUID();
      await findRunByRequest(db.pool, { userId: user.id, requestId, conversationId });
      await insertRun(db.pool, { id: runId, conversationId, userId: user.id, requestId, requestHash: 'h', owner: 'bench', leaseTtlS: 30 });
      await withTransaction(db.pool, async (tx) => {
        await appendMessage(tx, { conversationId, role: 'user', content: 'hi', metadata: {} });
        await ledger.append(conversationId, [{ kind: 'user.message', payload: { run_id: runId, request_id: requestId, text: 'hi', files: [] } }], { tx });
      });
    }));
  }
  await ledger.close();

  // 2 and 3: a real turn, and an event stream attached mid-answer.
  const client = await Client.connect(`${base}/api/agent/gradio`, { headers: { Authorization: `Bearer ${token}` }, events: ['data', 'status'] });
  const attach: number[] = [];
  let rows = 0;
  let tokens = 0;
  for (let i = 0; i < 8; i++) {
    let id = '';
    let seen = 0;
    let measuring: Promise<number> | undefined;
    for await (const event of client.submit('/chat', { message: { text: LONG, files: [] } })) {
      if (event.type !== 'data') continue;
      const m = (event.data as any[])[0];
      id = m.metadata.conversation_id;
      if (m.metadata.type === 'stream_token' && ++seen === 10) measuring = firstPartial(`${base}/api/agent/conversations/${id}/events/stream?after=1000000000`, token);
    }
    if (measuring) attach.push(await measuring);
    tokens = seen;
    rows = Number((await db.pool.query('SELECT count(*) FROM conversation_events WHERE conversation_id = $1', [id])).rows[0].count);
  }
  client.close();

  const added = median(newPath) - median(oldPath);
  console.log(`ledger cost before the first token (median of ${SAMPLES}, same database, alternating)`);
  console.log('| path | ms |');
  console.log('|---|---|');
  console.log(`| old: user message row | ${median(oldPath).toFixed(3)} |`);
  console.log(`| engine: request_id lookup + run row + user message and user.message in one transaction | ${median(newPath).toFixed(3)} |`);
  console.log(`database work the ledger adds per submit: ${added.toFixed(3)} ms`);
  console.log(`of it on the path to the first token: the run row, ${median(runRow).toFixed(3)} ms (the request_id lookup runs alongside the conversation lookup; user.message commits while the model call starts)`);
  console.log(`ledger rows for one answer of ${tokens} tokens: ${rows} (no row per token)`);
  console.log(`attach latency (stream request mid-answer -> first partial frame): median ${median(attach).toFixed(2)} ms over ${attach.length}`);

  await app.close();
  await db.close();
}

/** Opens the stream and resolves with the time until its first `event: partial` frame. */
async function firstPartial(url: string, token: string): Promise<number> {
  const start = performance.now();
  const controller = new AbortController();
  const res = await fetch(url, { headers: { authorization: `Bearer ${token}` }, signal: controller.signal });
  const decoder = new TextDecoder();
  let text = '';
  for await (const chunk of res.body!) {
    text += decoder.decode(chunk as Uint8Array, { stream: true });
    if (text.includes('event: partial')) break;
  }
  const elapsed = performance.now() - start;
  controller.abort();
  return elapsed;
}

await main();

/**
 * Several replicas (issue 14), in one run:
 * 1. added latency per token of the PostgreSQL session bus vs the in-process one: a frame
 *    published on one replica's bus -> delivered to a stream attached on another replica's bus
 *    (the only hop replicas add), p50/p95, with paced tokens (one stream, a token every 5 ms);
 * 2. NOTIFY count per token: paced (one stream) and under load (50 streams, a token every 20 ms
 *    each: frames published while a batch is in flight share the next NOTIFY);
 * 3. end to end through the real nginx with the real @gradio/client: streams and tokens/s with
 *    1 vs 3 gateway replicas (REPLICAS=true, offline model), same load.
 *
 *   npm run bench -- replicas      (BENCH_TOKENS, BENCH_STREAMS to tune)
 */
import { chat, collect, connectChat, login } from '../tests/helpers/chat-client.ts';
import { startCluster } from '../tests/helpers/cluster.ts';
import { createMemorySessionBus, PgSessionBus, type SessionBus } from '../server/gradio/index.ts';
import { openBenchDatabase, percentile } from './support.ts';

const TOKENS = Number(process.env.BENCH_TOKENS ?? 400);
const STREAMS = Number(process.env.BENCH_STREAMS ?? 24);
const owner = { owner: 'bench', sessionHash: 'bench' };
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const fmt = (n: number) => n.toFixed(3);

/** Publishes `tokens` frames on `from`, one every `gapMs`, and measures publish -> delivery on `to`. */
async function latency(from: SessionBus, to: SessionBus, session: string, tokens: number, gapMs: number): Promise<number[]> {
  const sent = new Map<string, number>();
  const delays: number[] = [];
  await from.addEvent(session, `${session}:e`, owner);
  let done!: () => void;
  const finished = new Promise<void>((r) => (done = r));
  const deadline = Date.now() + 5_000;
  let attachment = null;
  while (!attachment && Date.now() < deadline) {
    attachment = await to.attach(session, (m) => {
      const at = sent.get(m.frame);
      if (at !== undefined) delays.push(performance.now() - at);
      if (m.terminal) done();
    });
    if (!attachment) await sleep(2);
  }
  for (let i = 0; i < tokens; i++) {
    const frame = `data: {"msg":"process_generating","token":${i},"session":"${session}"}\n\n`;
    sent.set(frame, performance.now());
    from.publish(session, { eventId: `${session}:e`, frame, terminal: false });
    await sleep(gapMs);
  }
  from.publish(session, { eventId: `${session}:e`, frame: 'end', terminal: true });
  await finished;
  attachment!.detach();
  return delays;
}

const stats = (d: number[]) => {
  const sorted = [...d].sort((a, b) => a - b);
  return { p50: percentile(sorted, 50), p95: percentile(sorted, 95) };
};

async function busPart(): Promise<void> {
  const db = await openBenchDatabase();
  const memory = createMemorySessionBus();
  const a = await PgSessionBus.start({ pool: db.pool });
  const b = await PgSessionBus.start({ pool: db.pool });
  try {
    // Alternate so machine load hits both alike.
    const mem: number[] = [];
    const pg: number[] = [];
    for (let round = 0; round < 4; round++) {
      mem.push(...(await latency(memory, memory, `mem-${round}`, TOKENS / 4, 5)));
      pg.push(...(await latency(a, b, `pg-${round}`, TOKENS / 4, 5)));
    }
    const m = stats(mem);
    const p = stats(pg);
    console.log(`1. publish -> delivery per token (${pg.length} paced tokens, a token every 5 ms):`);
    console.log(`   in-process bus  p50 ${fmt(m.p50)} ms  p95 ${fmt(m.p95)} ms`);
    console.log(`   PostgreSQL bus  p50 ${fmt(p.p50)} ms  p95 ${fmt(p.p95)} ms  (added p50 ${fmt(p.p50 - m.p50)} ms)`);

    const before = a.stats.notifies;
    const paced = a.stats.frames;
    await latency(a, b, 'paced', 200, 5);
    console.log(`2. NOTIFY per token, one paced stream: ${fmt((a.stats.notifies - before) / (a.stats.frames - paced))}`);
    const n0 = a.stats.notifies;
    const f0 = a.stats.frames;
    const loaded = await Promise.all(Array.from({ length: 50 }, (_, i) => latency(a, b, `load-${i}`, 100, 20)));
    const l = stats(loaded.flat());
    console.log(`   50 streams, a token every 20 ms each: ${fmt((a.stats.notifies - n0) / (a.stats.frames - f0))} NOTIFY per token; delivery p50 ${fmt(l.p50)} ms p95 ${fmt(l.p95)} ms`);
  } finally {
    await a.close();
    await b.close();
    await db.close();
  }
}

async function clusterPart(replicas: number, databaseUrl: string): Promise<{ seconds: number; tokens: number; streams: number; failed: number }> {
  const cluster = await startCluster({ replicas, databaseUrl, env: { OFFLINE_MODEL_DELAY_MS: '5', LOG_LEVEL: 'silent', CHAT_USER_CONCURRENCY: '64', CHAT_USER_QUEUE: '128' } });
  try {
    const token = await login(cluster.url, 'admin');
    const clients = await Promise.all(Array.from({ length: STREAMS }, () => connectChat(cluster.url, token)));
    await collect(chat(clients[0], 'warm up')); // first turn pays the agent's lazy starts
    const started = performance.now();
    const turns = await Promise.all(clients.map((c) => collect(chat(c, 'tell me about yourself and what you can help me with today in detail'))));
    const seconds = (performance.now() - started) / 1000;
    clients.forEach((c) => c.close());
    return { seconds, tokens: turns.reduce((n, t) => n + t.messages.length, 0), streams: turns.length, failed: turns.filter((t) => t.status !== 'complete').length };
  } finally {
    await cluster.stop();
  }
}

async function main(): Promise<void> {
  await busPart();
  if (process.env.BENCH_PARTS === 'bus') return;
  const db = await openBenchDatabase();
  try {
    console.log(`3. ${STREAMS} concurrent /chat streams through nginx (offline model, 5 ms per token), real @gradio/client:`);
    for (const n of [1, 3]) {
      const r = await clusterPart(n, db.url);
      console.log(`   ${n} replica${n > 1 ? 's' : ' '}: ${r.streams} streams (${r.failed} failed) in ${r.seconds.toFixed(2)} s, ${(r.tokens / r.seconds).toFixed(0)} frames/s to clients`);
    }
  } finally {
    await db.close();
  }
}

await main();
process.exit(0);

/**
 * Checkpoint reads on a long conversation: `getTuple` (what LangGraph does at the start of every
 * run and every resume) on threads of 1 to 80 turns, through the gateway's checkpointer pool
 * (server/db/bytea-array.ts's bytea[] parser) next to a pool with node-pg's default parser, which
 * is the reference. p50 / p99 in ms, and the gateway process's CPU per read.
 *
 *   npm run bench -- checkpoint        (BENCH_SAMPLES to tune, default 60)
 */
import { AIMessage, HumanMessage } from '@langchain/core/messages';
import { MessagesAnnotation, StateGraph } from '@langchain/langgraph';
import { PostgresSaver } from '@langchain/langgraph-checkpoint-postgres';
import pg from 'pg';
import { fastByteaArrayTypes } from '../server/db/bytea-array.ts';
import { openBenchDatabase, percentile } from './support.ts';

const SAMPLES = Number(process.env.BENCH_SAMPLES ?? 60);
const TURNS = [1, 10, 40, 80];
const ANSWER = 'Checked payments-api across three regions. Latency is within its objective, but two things stand out. '.repeat(4);

const db = await openBenchDatabase();
const schema = (await db.pool.query<{ s: string }>('SELECT current_schema() AS s')).rows[0].s;
const fastPool = new pg.Pool({ connectionString: db.url, max: 2, types: fastByteaArrayTypes });
const plainPool = new pg.Pool({ connectionString: db.url, max: 2 });
const fast = new PostgresSaver(fastPool, undefined, { schema });
const plain = new PostgresSaver(plainPool, undefined, { schema });
await fast.setup();

// A thread that grows by one question and one answer per turn, as a conversation does.
const graph = new StateGraph(MessagesAnnotation)
  .addNode('answer', () => ({ messages: [new AIMessage(ANSWER)] }))
  .addEdge('__start__', 'answer')
  .compile({ checkpointer: fast });

async function timed(saver: PostgresSaver, thread: string): Promise<{ ms: number; cpuUs: number }> {
  const cpu = process.cpuUsage();
  const start = performance.now();
  await saver.getTuple({ configurable: { thread_id: thread } });
  const ms = performance.now() - start;
  const used = process.cpuUsage(cpu);
  return { ms, cpuUs: used.user + used.system };
}

const p = (xs: number[], q: number) => percentile([...xs].sort((a, b) => a - b), q);
console.log(`getTuple on a thread of N turns, ${SAMPLES} reads each, alternating: the gateway's pool vs node-pg's default bytea[] parser (reference)`);
console.log('| turns | gateway p50 / p99 (ms) | reference p50 / p99 (ms) | ratio p50 | gateway CPU per read p50 (µs) | reference CPU per read p50 (µs) |');
console.log('|---|---|---|---|---|---|');
for (const turns of TURNS) {
  const thread = `bench-${turns}`;
  for (let t = 0; t < turns; t++) await graph.invoke({ messages: [new HumanMessage(`question ${t}`)] }, { configurable: { thread_id: thread } });
  const ours: { ms: number; cpuUs: number }[] = [];
  const ref: { ms: number; cpuUs: number }[] = [];
  for (let i = 0; i < SAMPLES; i++) {
    ours.push(await timed(fast, thread));
    ref.push(await timed(plain, thread));
  }
  const ms = (xs: typeof ours, q: number) => p(xs.map((x) => x.ms), q);
  const cpu = (xs: typeof ours) => p(xs.map((x) => x.cpuUs), 50);
  console.log(`| ${turns} | ${ms(ours, 50).toFixed(2)} / ${ms(ours, 99).toFixed(2)} | ${ms(ref, 50).toFixed(2)} / ${ms(ref, 99).toFixed(2)} | ${(ms(ours, 50) / ms(ref, 50)).toFixed(2)}x | ${cpu(ours)} | ${cpu(ref)} |`);
}
await fastPool.end();
await plainPool.end();
await db.close();

/**
 * The agent graph alone: CPU per token of the graph /chat runs (createAgent with the Airlock
 * middleware and tools, its three stream modes) next to the bare two-node graph of the reference
 * pipeline, in one process, on one checkpointer, against the offline model in its own process. No
 * HTTP, no ledger, no Gradio: what the graph itself costs, so the rest of /chat's gap is ours.
 *
 *   npm run bench -- graph            (BENCH_TURNS per variant, default 40)
 */
import { randomUUID } from 'node:crypto';
import { HumanMessage } from '@langchain/core/messages';
import { END, MessagesAnnotation, START, StateGraph } from '@langchain/langgraph';
import { createAgentGraph } from '../server/agent/graph.ts';
import { createChatModel } from '../server/agent/model.ts';
import { OneStatementPostgresSaver } from '../server/agent/postgres-saver.ts';
import { startChild } from './children.ts';
import { openBenchDatabase, percentile } from './support.ts';

const TURNS = Number(process.env.BENCH_TURNS ?? 40);

const model = await startChild<{ baseUrl: string }>('./model-process.ts', ['0']);
const db = await openBenchDatabase();
const settings = { baseUrl: model.ready.baseUrl, apiKey: 'x', name: 'airlock-offline-1', timeoutMs: 60_000, maxRetries: 0 };
const schema = (await db.pool.query<{ s: string }>('SELECT current_schema() AS s')).rows[0].s;
const saver = new OneStatementPostgresSaver(db.pool, { schema });
await saver.setup();

const chat = createChatModel(settings);
const bare = new StateGraph(MessagesAnnotation)
  .addNode('gate', () => ({}))
  .addNode('agent', async (state) => ({ messages: [await chat.invoke(state.messages)] }))
  .addEdge(START, 'gate')
  .addEdge('gate', 'agent')
  .addEdge('agent', END)
  .compile({ checkpointer: saver });
const agent = createAgentGraph({ model: settings, checkpointer: saver });

type Streamable = { stream(input: unknown, options: unknown): Promise<AsyncIterable<unknown>> };

/** One turn on a new thread; returns the tokens streamed. */
function turn(graph: Streamable, modes: 'messages' | string[]) {
  return async () => {
    let tokens = 0;
    const stream = await graph.stream({ messages: [new HumanMessage('hello')] }, { configurable: { thread_id: randomUUID() }, streamMode: modes, durability: 'sync' });
    for await (const part of stream) {
      const [mode, chunk] = modes === 'messages' ? ['messages', part] : (part as [string, unknown]);
      const content = mode === 'messages' ? (chunk as [{ content?: unknown }])[0]?.content : undefined;
      if (typeof content === 'string' && content) tokens++;
    }
    return tokens;
  };
}

const variants: Array<[string, () => Promise<number>]> = [
  ['bare two-node graph, "messages" (the reference)', turn(bare as unknown as Streamable, 'messages')],
  ['createAgent + middleware, "messages"', turn(agent as unknown as Streamable, 'messages')],
  ['createAgent + middleware, messages/updates/tools (/chat)', turn(agent as unknown as Streamable, ['messages', 'updates', 'tools'])],
];
for (const [, run] of variants) for (let i = 0; i < 5; i++) await run(); // warm-up
const perToken = new Map<string, number[]>(variants.map(([name]) => [name, []]));
// Interleaved, so the machine's load moves every variant alike.
for (let i = 0; i < TURNS; i++) {
  for (const [name, run] of variants) {
    const before = process.cpuUsage();
    const tokens = await run();
    const used = process.cpuUsage(before);
    perToken.get(name)!.push((used.user + used.system) / tokens);
  }
}

const p = (xs: number[], q: number) => percentile([...xs].sort((a, b) => a - b), q);
const reference = perToken.get(variants[0][0])!;
console.log(`The agent graph alone: process CPU per token (µs), ${TURNS} turns per variant, interleaved, offline model in its own process`);
console.log('| graph | p50 | p99 | ratio p50 | ratio p99 |');
console.log('|---|---|---|---|---|');
for (const [name, xs] of perToken) {
  console.log(`| ${name} | ${p(xs, 50).toFixed(0)} | ${p(xs, 99).toFixed(0)} | ${(p(xs, 50) / p(reference, 50)).toFixed(2)}x | ${(p(xs, 99) / p(reference, 99)).toFixed(2)}x |`);
}
await db.close();
model.stop();

/**
 * The reference pipeline every gateway figure is divided by: a bare LangGraph graph (an approval
 * gate that interrupts, then one ChatOpenAI node) checkpointed by PostgresSaver, on the same
 * offline model, streamed as raw Gradio-style `process_generating` SSE frames. No auth, no ledger,
 * no queue: the floor that /chat's own costs are measured against, in the same run.
 *
 *   POST /run?thread=<id>&gate=1   -> pauses at the gate (one `paused` frame), else streams tokens
 *   POST /run?thread=<id>&resume=1 -> resumes the paused thread and streams tokens
 */
import { createServer, type Server } from 'node:http';
import { randomUUID } from 'node:crypto';
import { PostgresSaver } from '@langchain/langgraph-checkpoint-postgres';
import { Command, END, interrupt, MessagesAnnotation, START, StateGraph } from '@langchain/langgraph';
import { HumanMessage } from '@langchain/core/messages';
import pg from 'pg';
import { createChatModel } from '../server/agent/model.ts';

export interface ReferenceServer {
  url: string;
  close(): Promise<void>;
}

export async function startReference(modelBaseUrl: string, databaseUrl: string): Promise<ReferenceServer> {
  const pool = new pg.Pool({ connectionString: databaseUrl, max: 10 });
  const schema = (await pool.query<{ s: string }>('SELECT current_schema() AS s')).rows[0].s;
  const saver = new PostgresSaver(pool, undefined, { schema });
  await saver.setup();
  const model = createChatModel({ baseUrl: modelBaseUrl, apiKey: 'x', name: 'airlock-offline-1', timeoutMs: 60_000, maxRetries: 0 });
  const graph = new StateGraph(MessagesAnnotation)
    .addNode('gate', (state) => {
      const last = state.messages.at(-1);
      // Only a message that asks for it pauses, like an approval-gated tool call.
      if (typeof last?.content === 'string' && last.content.startsWith('deploy')) interrupt({ approve: true });
      return {};
    })
    .addNode('agent', async (state) => ({ messages: [await model.invoke(state.messages)] }))
    .addEdge(START, 'gate')
    .addEdge('gate', 'agent')
    .addEdge('agent', END)
    .compile({ checkpointer: saver });

  const server: Server = createServer(async (req, res) => {
    const url = new URL(req.url!, 'http://x');
    let body = '';
    for await (const chunk of req) body += chunk;
    // An empty `thread=` is a new thread too: the bench's submits must not share one growing history.
    const thread = url.searchParams.get('thread') || randomUUID();
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    const options = { configurable: { thread_id: thread }, streamMode: 'messages' as const };
    const stream = url.searchParams.get('resume')
      ? await graph.stream(new Command({ resume: 'confirm' }), options)
      : await graph.stream({ messages: [new HumanMessage(body || 'hello')] }, options);
    for await (const [chunk] of stream) {
      const text = typeof chunk.content === 'string' ? chunk.content : '';
      if (!text) continue;
      res.write(`data: ${JSON.stringify({ msg: 'process_generating', output: { data: [text] } })}\n\n`);
      // Each frame on the wire now, not at the next tick (Node corks a chunked response until then,
      // which in a burst is the burst's end): a floor that holds its first token back flatters us.
      while (res.writableCorked > 0) res.uncork();
    }
    const state = await graph.getState({ configurable: { thread_id: thread } });
    res.end(`data: ${JSON.stringify({ msg: 'process_completed', paused: state.next.length > 0 })}\n\n`);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as { port: number }).port;
  return {
    url: `http://127.0.0.1:${port}/run`,
    async close() {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
      await pool.end();
    },
  };
}

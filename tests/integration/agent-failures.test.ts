/**
 * The agent runtime when things go wrong: cancel mid-answer and mid-tool (the thread stays usable),
 * model endpoint down or failing (LLM_UNAVAILABLE after bounded retries), backend failures
 * (tool_error TOOL_FAILURE and the agent carries on). Real PostgreSQL checkpoints.
 */
import type { BaseMessage } from '@langchain/core/messages';
import { PostgresSaver } from '@langchain/langgraph-checkpoint-postgres';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { localUrl } from '../../server/app.ts';
import { createAgentRuntime, type AgentEvent } from '../../server/agent/index.ts';
import { danglingToolCalls } from '../../server/agent/runtime.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';
import { collect, SERVICE_SECRET, shape, startFakeBackend, startOfflineModel } from './agent-fixtures.ts';

let db: TestDatabase;
let saver: PostgresSaver;
let model: Awaited<ReturnType<typeof startOfflineModel>>;
let backend: Awaited<ReturnType<typeof startFakeBackend>>;
let failing: FastifyInstance;
let failingRequests = 0;
let thread = 0;

const user = { userToken: 'user-admin', conversationId: 'conv-f' };
const newThread = () => `f-${++thread}-${Date.now()}`;
const runtime = (baseUrl: string, options: { maxRetries?: number; apiUrl?: string } = {}) =>
  createAgentRuntime({
    model: { baseUrl, apiKey: 'offline', name: 'airlock-offline-1', timeoutMs: 3_000, maxRetries: options.maxRetries ?? 1 },
    apiUrl: () => options.apiUrl ?? backend.url,
    serviceCredentials: { clientId: 'airlock-gateway', clientSecret: SERVICE_SECRET },
    checkpointer: saver,
  });

async function messagesOf(threadId: string): Promise<BaseMessage[]> {
  const tuple = await saver.getTuple({ configurable: { thread_id: threadId, checkpoint_ns: '' } });
  return (tuple?.checkpoint.channel_values.messages ?? []) as BaseMessage[];
}

/** Runs until `stopWhen` says so, then aborts with a reason; returns the events seen and the error. */
async function runAndAbort(events: AsyncIterable<AgentEvent>, controller: AbortController, stopWhen: (seen: AgentEvent[]) => boolean) {
  const seen: AgentEvent[] = [];
  let abortedAt = 0;
  try {
    for await (const e of events) {
      seen.push(e);
      if (stopWhen(seen)) {
        abortedAt = Date.now();
        controller.abort(new Error('cancelled by the user'));
      }
    }
  } catch (error) {
    return { seen, error: error as Error, latencyMs: Date.now() - abortedAt };
  }
  return { seen, error: null, latencyMs: Date.now() - abortedAt };
}

beforeAll(async () => {
  db = await createTestDatabase({ migrate: false });
  saver = PostgresSaver.fromConnString(db.url, { schema: db.schema });
  await saver.setup();
  model = await startOfflineModel(30);
  backend = await startFakeBackend({ healthDelayMs: 1_500 });
  failing = Fastify({ logger: false });
  failing.post('/v1/chat/completions', async (_req, reply) => {
    failingRequests++;
    return reply.status(500).send({ error: { message: 'model crashed', type: 'server_error' } });
  });
  await failing.listen({ host: '127.0.0.1', port: 0 });
});
afterAll(async () => {
  await saver?.end();
  await model?.app.close();
  await backend?.app.close();
  await failing?.close();
  await db?.drop();
});

describe('agent runtime failures', () => {
  it('aborts mid-answer with the abort reason, then a new message works', async () => {
    const agent = await runtime(model.baseUrl);
    const threadId = newThread();
    const controller = new AbortController();
    // 1. Abort after three tokens.
    const { seen, error, latencyMs } = await runAndAbort(agent.run({ threadId, text: 'hello', ...user, signal: controller.signal }), controller, (s) => s.length === 3);
    expect(error?.message).toBe('cancelled by the user');
    expect(latencyMs).toBeLessThan(1_000);
    expect(seen.map((e) => e.type)).toEqual(['token', 'token', 'token']);
    // 2. The next message runs normally.
    const events = await collect(agent.run({ threadId, text: 'list maintenance events', ...user }));
    expect(shape(events)).toEqual(['tool_start', 'tool_end', 'token', 'done']);
  });

  it('aborts during a tool, then closes the dangling call before the next message', async () => {
    const agent = await runtime(model.baseUrl);
    const threadId = newThread();
    const controller = new AbortController();
    const { seen, error, latencyMs } = await runAndAbort(
      agent.run({ threadId, text: "what's the health of payments-api", ...user, signal: controller.signal }),
      controller,
      (s) => s.at(-1)?.type === 'tool_start',
    );
    expect(error?.message).toBe('cancelled by the user');
    // The backend call (1.5 s) is abandoned, not awaited.
    expect(latencyMs).toBeLessThan(1_000);
    expect(seen.map((e) => e.type)).toEqual(['tool_start']);
    // The thread was left with a tool call without a reply (OpenAI would answer 400 to it).
    expect(danglingToolCalls(await messagesOf(threadId))).toHaveLength(1);
    const events = await collect(agent.run({ threadId, text: 'list maintenance events', ...user }));
    expect(shape(events)).toEqual(['tool_start', 'tool_end', 'token', 'done']);
    const messages = await messagesOf(threadId);
    expect(danglingToolCalls(messages)).toEqual([]);
    expect(messages.some((m) => String(m.content).includes('"CANCELLED"'))).toBe(true);
  });

  it('throws LLM_UNAVAILABLE after bounded retries when the model fails', async () => {
    const agent = await runtime(`${localUrl(failing)}/v1`, { maxRetries: 1 });
    failingRequests = 0;
    const error = await collect(agent.run({ threadId: newThread(), text: 'hello', ...user })).catch((e) => e);
    expect(error).toMatchObject({ name: 'AirlockError', code: 'LLM_UNAVAILABLE', retryable: true });
    expect(failingRequests).toBe(2);
  });

  it('throws LLM_UNAVAILABLE when the model endpoint is down, and the thread works once it is back', async () => {
    const threadId = newThread();
    const down = await runtime('http://127.0.0.1:9/v1', { maxRetries: 1 });
    const started = Date.now();
    await expect(collect(down.run({ threadId, text: 'hello', ...user }))).rejects.toMatchObject({ code: 'LLM_UNAVAILABLE' });
    expect(Date.now() - started).toBeLessThan(15_000);
    const up = await runtime(model.baseUrl);
    const events = await collect(up.run({ threadId, text: 'hello again', ...user }));
    expect(events.at(-1)).toMatchObject({ type: 'done', text: expect.stringMatching(/^Hello! /) });
  });

  it('turns a backend 5xx into tool_error TOOL_FAILURE and carries on', async () => {
    const broken = await startFakeBackend({ failHealth: true });
    try {
      const agent = await runtime(model.baseUrl, { apiUrl: broken.url });
      const events = await collect(agent.run({ threadId: newThread(), text: "what's the health of payments-api", ...user }));
      expect(shape(events)).toEqual(['tool_start', 'tool_error', 'token', 'done']);
      expect(events[1]).toMatchObject({ tool: 'check_health', code: 'TOOL_FAILURE', error: 'health store down' });
      expect(events.at(-1)).toMatchObject({ text: 'I could not check the health of payments-api: health store down' });
    } finally {
      await broken.app.close();
    }
  });

  it('turns an unreachable backend into tool_error TOOL_FAILURE', async () => {
    const agent = await runtime(model.baseUrl, { apiUrl: 'http://127.0.0.1:9' });
    const events = await collect(agent.run({ threadId: newThread(), text: 'list maintenance events', ...user }));
    expect(shape(events)).toEqual(['tool_start', 'tool_error', 'token', 'done']);
    expect(events[1]).toMatchObject({ code: 'TOOL_FAILURE' });
  });

  it('rejects a bad user token as UNAUTHORIZED', async () => {
    const agent = await runtime(model.baseUrl);
    const events = await collect(agent.run({ threadId: newThread(), text: 'list maintenance events', userToken: 'forged', conversationId: 'c' }));
    expect(events[1]).toMatchObject({ type: 'tool_error', code: 'UNAUTHORIZED' });
    expect(events.at(-1)).toMatchObject({ text: expect.stringMatching(/not authorised/) });
  });
});

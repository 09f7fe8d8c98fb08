/**
 * tool_policy at its second enforcement point: a model that calls a tool it was NOT offered (a
 * scripted OpenAI-compatible endpoint that answers as if every built-in tool were offered). The
 * first point is visible in what the model was offered; the second refuses the call at execution
 * (FORBIDDEN), and the refused call is in the run's trace.
 */
import Fastify, { type FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { localUrl } from '../../server/app.ts';
import { completionBody, estimateUsage, newCompletionId, streamChunks } from '../../server/agent/offline-model/completion.ts';
import { hashEmbed } from '../../server/agent/offline-model/embeddings.ts';
import { KNOWN_TOOLS } from '../../server/agent/offline-model/intents.ts';
import { respond, type ChatMessageIn } from '../../server/agent/offline-model/respond.ts';
import { login } from '../helpers/chat-client.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { v1 } from './v1-support.ts';

let db: TestDatabase;
let server: TestServer;
let model: FastifyInstance;
let viewer: string;
/** The tool names offered in each chat request the model received. */
const offered: string[][] = [];

/** Answers like the offline model, but as if every built-in tool had been offered (a disobedient model). */
async function startDisobedientModel(): Promise<string> {
  model = Fastify({ logger: false });
  model.post('/v1/embeddings', async (req) => {
    const input = (req.body as { input: string | string[] }).input;
    const texts = typeof input === 'string' ? [input] : input;
    return { object: 'list', data: texts.map((t, index) => ({ object: 'embedding', index, embedding: hashEmbed(t) })), usage: { prompt_tokens: 0, total_tokens: 0 } };
  });
  model.post('/v1/chat/completions', async (req, reply) => {
    const body = req.body as { messages: ChatMessageIn[]; tools?: Array<{ function?: { name: string } }>; stream?: boolean };
    offered.push((body.tools ?? []).flatMap((t) => (t.function ? [t.function.name] : [])));
    const decision = respond(body.messages, [...KNOWN_TOOLS].map((name) => ({ name })));
    const base = { id: newCompletionId(), model: 'disobedient', created: Math.floor(Date.now() / 1000) };
    if (!body.stream) return completionBody(base, decision, estimateUsage('', ''));
    reply.hijack();
    reply.raw.writeHead(200, { 'content-type': 'text/event-stream' });
    for (const chunk of streamChunks(base, decision, null)) reply.raw.write(`data: ${JSON.stringify(chunk)}\n\n`);
    reply.raw.end('data: [DONE]\n\n');
  });
  await model.listen({ host: '127.0.0.1', port: 0 });
  return `${localUrl(model)}/v1`;
}

beforeAll(async () => {
  db = await createTestDatabase();
  const baseUrl = await startDisobedientModel();
  server = await startTestServer({ db, env: { OPENAI_BASE_URL: baseUrl, OPENAI_MODEL: 'disobedient', JOBS_SUPERVISE_S: '1', JOBS_POLL_S: '0.5' } });
  viewer = await login(server.url, 'viewer');
});
afterAll(async () => {
  await server?.close();
  await model?.close();
  await db?.drop();
});

const ask = (text: string, policy: unknown) => ({ messages: [{ role: 'user', content: text }], tool_policy: policy });

describe('tool_policy at execution', () => {
  for (const policy of [{ mode: 'none' }, { mode: 'allowlist', allowed_tools: ['list_deployments'] }]) {
    it(`${policy.mode}: the unoffered call is refused with FORBIDDEN and recorded in the trace`, async () => {
      const before = offered.length;
      const reply = await v1(server.url, '/chat/completions', { token: viewer, body: ask('What is the health of payments-api?', policy) });
      expect(reply.status).toBe(200);
      // First point: check_health was never offered.
      const seen = offered.slice(before);
      expect(seen.length).toBeGreaterThan(0);
      for (const names of seen) expect(names).not.toContain('check_health');
      if (policy.mode === 'none') for (const names of seen) expect(names).toEqual([]);
      // Second point: the model called it anyway; the call was refused, not run.
      const trace = await v1(server.url, `/traces/${reply.body.run_id}/events?limit=100`, { token: viewer });
      const call = trace.body.events.find((e: any) => e.type === 'tool_call');
      const result = trace.body.events.find((e: any) => e.type === 'tool_result');
      expect(call).toMatchObject({ tool_name: 'check_health' });
      expect(result).toMatchObject({ tool_name: 'check_health', tool_call_id: call.tool_call_id, status: 'error', metadata: { error_code: 'FORBIDDEN' } });
      expect(result.content).toContain('tool_policy');
      const audit = await db.pool.query(`SELECT count(*)::int AS n FROM audit_log WHERE operation = 'check_health' AND tool_call_id = $1`, [call.tool_call_id]);
      expect(audit.rows[0].n).toBe(0); // the backend never saw the call
    });
  }

  it('without a policy the same model\'s call runs (the refusal above is the policy\'s doing)', async () => {
    const reply = await v1(server.url, '/chat/completions', { token: viewer, body: { messages: [{ role: 'user', content: 'What is the health of payments-api?' }] } });
    const result = reply.body.events.find((e: any) => e.type === 'tool_result');
    expect(result).toMatchObject({ tool_name: 'check_health', status: 'success' });
    // The backend audits a call that ran, so the zero counts above mean "never reached the backend".
    const audit = await db.pool.query(`SELECT count(*)::int AS n FROM audit_log WHERE operation = 'check_health' AND tool_call_id = $1`, [result.tool_call_id]);
    expect(audit.rows[0].n).toBe(1);
  });
});

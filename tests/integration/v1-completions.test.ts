/**
 * The headless API's identity and /v1/chat/completions over real HTTP, against the real gateway
 * (engine, LangGraph agent, offline model, PostgreSQL): user token and service token + X-User-JWT,
 * user_key, tenants; the streamed event sequence and the non-streamed summary; tool_policy at both
 * enforcement points.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { login } from '../helpers/chat-client.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { serviceToken, streamCompletion, v1 } from './v1-support.ts';

let db: TestDatabase;
let server: TestServer;
let admin: string;
let operator: string;
let viewer: string;

beforeAll(async () => {
  db = await createTestDatabase();
  server = await startTestServer({ db, env: { OFFLINE_MODEL_DELAY_MS: '0', JOBS_SUPERVISE_S: '1', JOBS_POLL_S: '0.5' } });
  [admin, operator, viewer] = await Promise.all([login(server.url, 'admin'), login(server.url, 'operator'), login(server.url, 'viewer')]);
});
afterAll(async () => {
  await server?.close();
  await db?.drop();
});

const ask = (text: string, extra: Record<string, unknown> = {}) => ({ messages: [{ role: 'user', content: text }], ...extra });

describe('identity', () => {
  it('refuses a missing or bad token with the seed error envelope and a taxonomy code', async () => {
    const none = await v1(server.url, '/runs');
    expect(none.status).toBe(401);
    expect(none.body).toMatchObject({ type: 'error', error: { code: 'UNAUTHORIZED' } });
    const bad = await v1(server.url, '/runs', { token: 'not-a-jwt' });
    expect(bad.status).toBe(401);
    expect(bad.body.type).toBe('error');
    const unknown = await v1(server.url, '/no-such-route', { token: viewer });
    expect(unknown.status).toBe(404);
    expect(unknown.body).toMatchObject({ type: 'error', error: { code: 'NOT_FOUND' } });
  });

  it('accepts the service token with X-User-JWT and acts as that user (auth_provider service_token)', async () => {
    const service = await serviceToken(server.url);
    const reply = await v1(server.url, '/chat/completions', { token: service, headers: { 'x-user-jwt': operator }, body: ask('hello there') });
    expect(reply.status).toBe(200);
    const run = await v1(server.url, `/runs/${reply.body.run_id}`, { token: operator });
    expect(run.status).toBe(200);
    expect(run.body).toMatchObject({ user_key: 'demo:operator', auth_provider: 'service_token', status: 'completed' });
  });

  it('refuses a user token posing as the service token, and the service token alone', async () => {
    // A user cannot act as another user by putting that user's token in X-User-JWT.
    const borrowed = await v1(server.url, '/runs', { token: viewer, headers: { 'x-user-jwt': admin } });
    expect(borrowed.status).toBe(401);
    const service = await serviceToken(server.url);
    const alone = await v1(server.url, '/runs', { token: service });
    expect(alone.status).toBe(401);
    expect(alone.body.error.code).toBe('UNAUTHORIZED');
  });

  it('refuses a user_key that is not the caller\'s own (403) and accepts the caller\'s', async () => {
    const foreign = await v1(server.url, '/chat/completions', { token: viewer, body: ask('hello', { user_key: 'demo:admin' }) });
    expect(foreign.status).toBe(403);
    expect(foreign.body).toMatchObject({ type: 'error', error: { code: 'FORBIDDEN' } });
    const own = await v1(server.url, '/chat/completions', { token: viewer, body: ask('hello', { user_key: 'demo:viewer' }) });
    expect(own.status).toBe(200);
  });

  it('answers bad input with VALIDATION_ERROR, never a crash', async () => {
    for (const body of [{}, { messages: [] }, { messages: [{ role: 'system', content: 'only system' }] }, { messages: [{ role: 'user', content: '   ' }] }, ask('x', { tool_policy: { mode: 'sometimes' } }), ask('x', { session_id: 'no pe' }), ask('x', { session_id: 'x'.repeat(129) })]) {
      const reply = await v1(server.url, '/chat/completions', { token: viewer, body });
      expect(reply.status, JSON.stringify(body)).toBe(400);
      expect(reply.body.error.code).toBe('VALIDATION_ERROR');
    }
    // Issue 24: session_id is opaque; an unknown UUID starts the caller's conversation with that id
    // (only another user's conversation is 404: v1-seed000.test.ts).
    const unknownSession = await v1(server.url, '/chat/completions', { token: viewer, body: ask('hello', { session_id: '00000000-0000-4000-8000-000000000000' }) });
    expect(unknownSession.status).toBe(200);
    expect(unknownSession.body.session_id).toBe('00000000-0000-4000-8000-000000000000');
  });
});

describe('POST /v1/chat/completions', () => {
  it('stream: true sends session_start, tool_call, tool_result, token deltas, session_end, then done', async () => {
    const { status, contentType, frames } = await streamCompletion(server.url, viewer, ask('What is the health of payments-api?'));
    expect(status).toBe(200);
    expect(contentType).toContain('text/event-stream');
    const types = frames.map((f) => f.event);
    expect(types[0]).toBe('session_start');
    expect(types.at(-1)).toBe('done');
    expect(frames.at(-1)!.data).toBe('[DONE]');
    expect(types.at(-2)).toBe('session_end');
    const order = ['session_start', 'tool_call', 'tool_result', 'token', 'session_end', 'done'].map((t) => types.indexOf(t));
    expect(order.every((i) => i >= 0)).toBe(true);
    expect([...order].sort((a, b) => a - b)).toEqual(order);
    for (const f of frames.slice(0, -1)) {
      expect(f.data.schema).toBe('fastreact.agent_event.v1');
      expect(f.data.type).toBe(f.event);
      expect(f.data.run_id).toBe(frames[0].data.run_id);
      expect(f.data.session_id).toMatch(/^[0-9a-f-]{36}$/);
      expect(f.data.event_id).toBe(`${f.data.run_id}:${f.data.sequence}`);
      expect(Number.isNaN(Date.parse(f.data.timestamp))).toBe(false);
    }
    const call = frames.find((f) => f.event === 'tool_call')!.data;
    expect(call.tool_name).toBe('check_health');
    expect(call.tool_args).toMatchObject({ service: 'payments-api' });
    const result = frames.find((f) => f.event === 'tool_result')!.data;
    expect(result).toMatchObject({ tool_call_id: call.tool_call_id, status: 'success' });
    const answer = frames.filter((f) => f.event === 'token').map((f) => f.data.content).join('');
    expect(answer).toContain('payments-api');
    expect(frames.at(-2)!.data.status).toBe('completed');
    // The durable replay holds the same answer.
    const run = await v1(server.url, `/runs/${call.run_id}`, { token: viewer });
    expect(run.body.status).toBe('completed');
    expect(run.body.content).toBe(answer);
  });

  it('live and replayed events number the same event alike (stream: true, stream: false, a pause)', async () => {
    const replay = async (runId: string) => (await v1(server.url, `/runs/${runId}/events?limit=1000`, { token: admin })).body.events as any[];
    const pairs = (events: any[]) => events.map((e) => [e.sequence, e.type, e.type === 'token' ? e.content : (e.tool_call_id ?? e.approval_request_id ?? e.status ?? null)]);
    /** Live frames as the replay holds them: the deltas of one sequence joined into one token. */
    const joined = (events: any[]) => {
      const out: any[] = [];
      for (const e of events) {
        const last = out.at(-1);
        if (e.type === 'token' && last?.type === 'token' && last.sequence === e.sequence) last.content += e.content;
        else out.push({ ...e });
      }
      return out;
    };
    for (const text of ['What is the health of payments-api?', 'deploy checkout-api 9.1.0 to staging']) {
      // stream_until "pause": the stream ends at the approval pause (issue 24; the default follows the run).
      const { frames } = await streamCompletion(server.url, admin, { ...ask(text), stream_until: 'pause' });
      const live = frames.slice(0, -1).map((f) => f.data);
      // The answer streams as several deltas (the pause streams none): one sequence, one segment.
      if (text.startsWith('What')) expect(new Set(live.filter((e) => e.type === 'token').map((e) => e.sequence)).size).toBeLessThan(live.filter((e) => e.type === 'token').length);
      else expect(live.map((e) => e.type)).toContain('ask_user');
      expect(live.map((e) => e.sequence)).toEqual([...live.map((e) => e.sequence)].sort((a, b) => a - b));
      expect(pairs(joined(live))).toEqual(pairs(await replay(live[0].run_id)));
      const summary = (await v1(server.url, '/chat/completions', { token: admin, body: ask(text.replace(/9\.1\.0/, '9.2.0')) })).body;
      expect(pairs(summary.events)).toEqual(pairs(await replay(summary.run_id)));
    }
  });

  it('stream: false returns the seed summary', async () => {
    const reply = await v1(server.url, '/chat/completions', { token: viewer, body: ask('What is the health of payments-api?') });
    expect(reply.status).toBe(200);
    const body = reply.body;
    expect(body).toMatchObject({ type: 'chat.completion', status: 'completed', metadata: { schema: 'fastreact.agent_event.v1' } });
    expect(body.run_id).toMatch(/^[0-9a-f-]{36}$/);
    expect(body.content).toContain('payments-api');
    expect(body.tool_calls).toEqual([expect.objectContaining({ tool_name: 'check_health', tool_call_id: expect.any(String), event_id: expect.stringContaining(body.run_id) })]);
    expect(body.events.map((e: any) => e.type)).toEqual(['session_start', 'tool_call', 'tool_result', 'token', 'session_end']);
    expect(body.metadata.event_count).toBe(body.events.length);
    expect(body.duration_ms).toBeGreaterThan(0);
  });

  it('continues a session (session_id = conversation id) and prepends system messages', async () => {
    const first = await v1(server.url, '/chat/completions', { token: viewer, body: ask('hello') });
    const second = await v1(server.url, '/chat/completions', {
      token: viewer,
      body: { messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'What is the health of payments-api?' }], session_id: first.body.session_id },
    });
    expect(second.status).toBe(200);
    expect(second.body.session_id).toBe(first.body.session_id);
    expect(second.body.status).toBe('completed');
  });

  it('a dangerous tool pauses (stream_until "pause"): ask_user then session_end awaiting_approval; stream:false returns the approval ids', async () => {
    const { frames } = await streamCompletion(server.url, admin, { ...ask('deploy checkout-api 2.4.1 to staging'), stream_until: 'pause' });
    const types = frames.map((f) => f.event);
    expect(types.slice(-3)).toEqual(['ask_user', 'session_end', 'done']);
    const asked = frames.find((f) => f.event === 'ask_user')!.data;
    expect(asked).toMatchObject({ tool_name: 'deploy_service', approval_request_id: expect.stringMatching(/^[0-9a-f-]{36}$/) });
    expect(asked.metadata).toMatchObject({ request_id: asked.approval_request_id, timeout_seconds: 300, policy_action: 'require_approval' });
    expect(frames.at(-2)!.data.status).toBe('awaiting_approval');

    const sync = await v1(server.url, '/chat/completions', { token: admin, body: ask('deploy orders-api 4.5.6 to staging') });
    expect(sync.body.status).toBe('awaiting_approval');
    expect(sync.body.approval_request_ids).toHaveLength(1);
  });
});

describe('tool_policy', () => {
  it('mode none: no tool is offered, so none runs, and the run completes', async () => {
    const reply = await v1(server.url, '/chat/completions', { token: viewer, body: ask('What is the health of payments-api?', { tool_policy: { mode: 'none' } }) });
    expect(reply.status).toBe(200);
    expect(reply.body.status).toBe('completed');
    expect(reply.body.tool_calls).toEqual([]);
    const run = await v1(server.url, `/runs/${reply.body.run_id}`, { token: viewer });
    expect(run.body.tool_policy).toEqual({ mode: 'none' });
  });

  it('allowlist: the listed tool is offered and runs; another is not offered', async () => {
    const allowed = await v1(server.url, '/chat/completions', { token: viewer, body: ask('What is the health of payments-api?', { tool_policy: { mode: 'allowlist', allowed_tools: ['check_health'] } }) });
    expect(allowed.body.tool_calls.map((c: any) => c.tool_name)).toEqual(['check_health']);
    const other = await v1(server.url, '/chat/completions', { token: viewer, body: ask('What is the health of payments-api?', { tool_policy: { mode: 'allowlist', allowed_tools: ['list_deployments'] } }) });
    expect(other.body.tool_calls.map((c: any) => c.tool_name)).not.toContain('check_health');
  });
});

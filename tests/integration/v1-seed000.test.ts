/**
 * Seed 000's own call shapes (issue 24 item 3), over real HTTP with fetch against the real gateway:
 * - a failed run answers `type:"error"` with `error:{code,message}` at the code's HTTP status
 *   (stream:false), and the SSE `error` event carries the same `error` before `done`;
 * - `X-FastReAct-Service-Token: <service JWT>` is accepted like `Authorization: Bearer`;
 * - the PSKA call: the service token with `user_key` and no user JWT, allowed by the policy file's
 *   `service_rules.<client_id>.user_key_only`, acts as that user and is audited as such.
 * The model sits behind a proxy that can be switched down (a connection reset).
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startOfflineModelServer } from '../../server/agent/offline-model/server.ts';
import { login } from '../helpers/chat-client.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';
import { startModelProxy, type ModelProxy } from '../helpers/model-proxy.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { parseSseBlock, readRaw, serviceToken, v1, type V1Frame } from './v1-support.ts';

let db: TestDatabase;
let server: TestServer;
let model: Awaited<ReturnType<typeof startOfflineModelServer>>;
let proxy: ModelProxy;
let dir: string;
let modelDown = false;
let operator: string;
let service: string;

/** The seed's request, as PSKA sends it. */
const pskaCall = (text: string, extra: Record<string, unknown> = {}) => ({
  messages: [
    { role: 'system', content: 'Use PSKA MCP tools and cite evidence.' },
    { role: 'user', content: text },
  ],
  user_key: 'demo:operator',
  metadata: { caller: 'pska', purpose: 'qa', tenant_key: 'demo' },
  ...extra,
});

/** Reads an SSE response frame by frame (the seed's `event:` + `data:`). */
async function sse(res: Response): Promise<V1Frame[]> {
  return (await res.text()).split('\n\n').map(parseSseBlock).filter((f): f is V1Frame => f !== null);
}

const completions = (headers: Record<string, string>, body: unknown) =>
  fetch(`${server.url}/api/agent/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });

beforeAll(async () => {
  db = await createTestDatabase();
  dir = await mkdtemp(join(tmpdir(), 'airlock-seed000-'));
  await writeFile(join(dir, 'policy.json'), JSON.stringify({ policy: { default_action: 'caution', service_rules: { 'airlock-gateway': { user_key_only: true } } } }));
  model = await startOfflineModelServer({ delayMs: 0, modelName: 'airlock-offline-1' });
  proxy = await startModelProxy(model.baseUrl, (req) => (modelDown ? (req.socket.destroy(), true) : false));
  server = await startTestServer({
    db,
    env: { POLICY_FILE: join(dir, 'policy.json'), OPENAI_BASE_URL: proxy.url, OPENAI_API_KEY: 'offline', OPENAI_TIMEOUT_MS: '1500', OPENAI_MAX_RETRIES: '0' },
  });
  operator = await login(server.url, 'operator');
  service = await serviceToken(server.url);
});
afterAll(async () => {
  await server?.close();
  await proxy?.close();
  await model?.close();
  await db?.drop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('a failed run (the model down)', () => {
  it('stream:false answers type:"error" with error:{code,message}, run_id, session_id and events, at the code\'s status', async () => {
    modelDown = true;
    try {
      const res = await completions({ authorization: `Bearer ${operator}` }, { messages: [{ role: 'user', content: 'What is the health of payments-api?' }], stream: false });
      const body = (await res.json()) as any;
      expect(body.type).toBe('error');
      expect(body.error).toMatchObject({ code: 'LLM_UNAVAILABLE' });
      expect(typeof body.error.message).toBe('string');
      expect(res.status).toBe(503);
      expect(body.run_id).toEqual(expect.any(String));
      expect(body.session_id).toEqual(expect.any(String));
      expect(Array.isArray(body.events)).toBe(true);
      const run = await v1(server.url, `/runs/${body.run_id}`, { token: operator });
      expect(run.body.status).toBe('failed');
    } finally {
      modelDown = false;
    }
  });

  it('stream:true: the error event carries error:{code,message} before done', async () => {
    modelDown = true;
    try {
      const res = await completions({ authorization: `Bearer ${operator}` }, { messages: [{ role: 'user', content: 'What is the health of payments-api?' }], stream: true });
      expect(res.status).toBe(200);
      const frames = await sse(res);
      const error = frames.findIndex((f) => f.event === 'error');
      expect(error).toBeGreaterThan(0);
      expect(frames[error].data).toMatchObject({ schema: 'fastreact.agent_event.v1', type: 'error', error: { code: 'LLM_UNAVAILABLE' } });
      expect(typeof frames[error].data.error.message).toBe('string');
      expect(frames.at(-1)).toEqual({ event: 'done', data: '[DONE]' });
      expect(error).toBeLessThan(frames.length - 1);
    } finally {
      modelDown = false;
    }
  });
});

describe('X-FastReAct-Service-Token', () => {
  it('is accepted like Authorization: Bearer, with X-User-JWT', async () => {
    const res = await completions({ 'x-fastreact-service-token': service, 'x-user-jwt': operator }, { messages: [{ role: 'user', content: 'hello there' }] });
    const body = (await res.json()) as any;
    expect(res.status).toBe(200);
    expect(body).toMatchObject({ type: 'chat.completion', status: 'completed' });
    const run = await v1(server.url, `/runs/${body.run_id}`, { token: operator });
    expect(run.body).toMatchObject({ user_key: 'demo:operator', auth_provider: 'service_token' });
  });

  it('opens /ready, and a bad one is 401 UNAUTHORIZED in the seed envelope', async () => {
    const ready = await fetch(`${server.url}/api/agent/v1/ready`, { headers: { 'x-fastreact-service-token': service } });
    expect(ready.status).toBe(200);
    const bad = await completions({ 'x-fastreact-service-token': 'not-a-token' }, pskaCall('hello'));
    expect(bad.status).toBe(401);
    expect(await bad.json()).toMatchObject({ type: 'error', error: { code: 'UNAUTHORIZED' } });
  });
});

describe('the PSKA call: service token + user_key, no user JWT', () => {
  it('acts as the user named by user_key (policy service_rules user_key_only), audited as such', async () => {
    const res = await completions({ 'x-fastreact-service-token': service }, pskaCall('What is the health of payments-api?'));
    const body = (await res.json()) as any;
    expect(res.status).toBe(200);
    expect(body).toMatchObject({ type: 'chat.completion', status: 'completed' });
    const run = await v1(server.url, `/runs/${body.run_id}`, { token: operator });
    expect(run.status).toBe(200);
    expect(run.body).toMatchObject({ user_key: 'demo:operator', auth_provider: 'service_token' });
    const { rows } = await db.pool.query(`SELECT service_actor, username, outcome, arguments FROM audit_log WHERE operation = 'v1.user_key_only' ORDER BY id`);
    expect(rows.at(-1)).toMatchObject({ service_actor: 'airlock-gateway', username: 'operator', outcome: 'success', arguments: { user_key: 'demo:operator', user_from: 'user_key' } });
  });

  it('the same shape with Authorization: Bearer <service JWT> and stream:true', async () => {
    const res = await completions({ authorization: `Bearer ${service}` }, pskaCall('hello there', { stream: true }));
    expect(res.status).toBe(200);
    const frames = await sse(res);
    expect(frames[0]).toMatchObject({ event: 'session_start', data: { metadata: { user_key: 'demo:operator' } } });
    expect(frames.at(-1)).toEqual({ event: 'done', data: '[DONE]' });
  });

  it('an unknown or malformed user_key is 401 UNAUTHORIZED, and audited', async () => {
    for (const user_key of ['demo:nobody', 'no-colon', undefined]) {
      const res = await completions({ 'x-fastreact-service-token': service }, { ...pskaCall('hello'), user_key });
      expect(res.status).toBe(401);
      expect(await res.json()).toMatchObject({ type: 'error', error: { code: 'UNAUTHORIZED' } });
    }
    const { rows } = await db.pool.query(`SELECT count(*)::int AS n FROM audit_log WHERE operation = 'v1.user_key_only' AND outcome = 'unauthorized'`);
    expect(rows[0].n).toBeGreaterThanOrEqual(3);
  });
});

describe('stream:true through an approval pause', () => {
  /** Opens a streaming completion and reads its raw text as it comes; `onText` sees all of it so far. */
  async function openStream(token: string, body: Record<string, unknown>, onText: (raw: string) => void | Promise<void>) {
    const res = await completions({ authorization: `Bearer ${token}` }, { ...body, stream: true });
    expect(res.status).toBe(200);
    return readRaw(res, onText);
  }
  const framesOf = async (raw: string) => sse(new Response(raw));

  it('stays open with heartbeats while the approval waits, then carries the rest of the run to its end', async () => {
    const admin = await login(server.url, 'admin');
    let approvedAt = 0;
    let approving: Promise<unknown> | null = null;
    const raw = await openStream(admin, { messages: [{ role: 'user', content: 'deploy checkout-api 3.1.4 to staging' }] }, async (text) => {
      if (approving || !text.includes('event: ask_user')) return;
      // Decide only after a heartbeat: the stream is still open and says so while it waits.
      if (!text.includes(': heartbeat')) return;
      const asked = (await framesOf(text)).find((f) => f.event === 'ask_user')!.data;
      approvedAt = text.length;
      approving = v1(server.url, `/approvals/${asked.approval_request_id}/approve`, { token: admin, body: { reason: 'seed 000 stream test' } });
    });
    expect(approving).not.toBeNull();
    expect((await approving!) as any).toMatchObject({ status: 200 });
    const frames = await framesOf(raw);
    const types = frames.map((f) => f.event);
    // The pause, then (after the decision) the tool result and the final answer, one stream.
    expect(types).toContain('ask_user');
    const pauseEnd = frames.findIndex((f) => f.event === 'session_end' && f.data.status === 'awaiting_approval');
    expect(pauseEnd).toBeGreaterThan(0);
    const after = frames.slice(pauseEnd + 1);
    expect(after.map((f) => f.event)).toContain('tool_result');
    expect(after.at(-2)).toMatchObject({ event: 'session_end' });
    expect(after.at(-2)!.data.status).not.toBe('awaiting_approval');
    expect(frames.at(-1)).toEqual({ event: 'done', data: '[DONE]' });
    expect(raw.slice(approvedAt)).toContain('event: tool_result');
    // Sequences never go back: the followed part numbers as the replay does.
    const seqs = frames.slice(0, -1).map((f) => f.data.sequence);
    expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
    const replay = await v1(server.url, `/runs/${frames[0].data.run_id}/events?limit=1000`, { token: admin });
    expect(replay.body.events.at(-1).sequence).toBe(seqs.at(-1));
  }, 40_000);

  it('stream_until "pause" ends at the pause as before; another value is a VALIDATION_ERROR', async () => {
    const admin = await login(server.url, 'admin');
    const raw = await openStream(admin, { messages: [{ role: 'user', content: 'deploy orders-api 3.1.5 to staging' }], stream_until: 'pause' }, () => {});
    const types = (await framesOf(raw)).map((f) => f.event);
    expect(types.slice(-3)).toEqual(['ask_user', 'session_end', 'done']);
    const bad = await completions({ authorization: `Bearer ${admin}` }, { messages: [{ role: 'user', content: 'hello' }], stream: true, stream_until: 'forever' });
    expect(bad.status).toBe(400);
    expect(await bad.json()).toMatchObject({ type: 'error', error: { code: 'VALIDATION_ERROR' } });
  });
});

describe('session_id is an opaque string', () => {
  const SESSION = 'pska:report-42.part_1';
  it('a non-UUID session_id names one conversation of the caller\'s, continued by the next call and echoed everywhere', async () => {
    const first = await v1(server.url, '/chat/completions', { token: operator, body: { messages: [{ role: 'user', content: 'hello' }], session_id: SESSION } });
    expect(first.status).toBe(200);
    expect(first.body.session_id).toBe(SESSION);
    expect(first.body.events.every((e: any) => e.session_id === SESSION)).toBe(true);
    const second = await v1(server.url, '/chat/completions', { token: operator, body: { messages: [{ role: 'user', content: 'What is the health of payments-api?' }], session_id: SESSION } });
    expect(second.body).toMatchObject({ type: 'chat.completion', status: 'completed', session_id: SESSION });
    const run = await v1(server.url, `/runs/${second.body.run_id}`, { token: operator });
    expect(run.body.session_id).toBe(SESSION);
    const replay = await v1(server.url, `/runs/${second.body.run_id}/events`, { token: operator });
    expect(replay.body.events.every((e: any) => e.session_id === SESSION)).toBe(true);
    const { rows } = await db.pool.query('SELECT DISTINCT session_id FROM agent_runs WHERE id = ANY($1::text[])', [[first.body.run_id, second.body.run_id]]);
    expect(rows).toHaveLength(1);
    // A background run with the same string continues it too.
    const queued = await v1(server.url, '/runs', { token: operator, body: { messages: [{ role: 'user', content: 'hello again' }], session_id: SESSION } });
    expect(queued.status).toBe(202);
    expect(queued.body.session_id).toBe(SESSION);
    const again = await db.pool.query('SELECT session_id FROM agent_runs WHERE id = $1', [queued.body.run_id]);
    expect(again.rows[0].session_id).toBe(rows[0].session_id);
  });

  it('the same string from another user is that user\'s own conversation; another user\'s conversation UUID is 404', async () => {
    const viewer = await login(server.url, 'viewer');
    const mine = await v1(server.url, '/chat/completions', { token: operator, body: { messages: [{ role: 'user', content: 'hello' }], session_id: 'shared-name' } });
    const theirs = await v1(server.url, '/chat/completions', { token: viewer, body: { messages: [{ role: 'user', content: 'hello' }], session_id: 'shared-name' } });
    expect(theirs.status).toBe(200);
    expect(theirs.body.session_id).toBe('shared-name');
    const { rows } = await db.pool.query('SELECT id, session_id FROM agent_runs WHERE id = ANY($1::text[])', [[mine.body.run_id, theirs.body.run_id]]);
    expect(new Set(rows.map((r) => r.session_id)).size).toBe(2);
    const conversation = rows.find((r) => r.id === mine.body.run_id)!.session_id;
    const stolen = await v1(server.url, '/chat/completions', { token: viewer, body: { messages: [{ role: 'user', content: 'hello' }], session_id: conversation } });
    expect(stolen.status).toBe(404);
    expect(stolen.body).toMatchObject({ type: 'error', error: { code: 'NOT_FOUND' } });
  });

  it('GET /approvals takes session_id as the other routes do: the caller\'s alias or a conversation id; records echo the alias', async () => {
    const admin = await login(server.url, 'admin');
    const paused = await v1(server.url, '/chat/completions', { token: admin, body: { messages: [{ role: 'user', content: 'deploy ledger-api 5.0.1 to staging' }], session_id: 'change-review:42' } });
    const elsewhere = await v1(server.url, '/chat/completions', { token: admin, body: { messages: [{ role: 'user', content: 'deploy ledger-api 5.0.2 to staging' }], session_id: 'change-review:43' } });
    const approvalOf = (reply: typeof paused) => reply.body.events.find((e: any) => e.type === 'ask_user').approval_request_id;
    const listed = await v1(server.url, '/approvals?session_id=change-review:42', { token: admin });
    expect(listed.status).toBe(200);
    expect(listed.body.approvals.map((a: any) => a.id)).toEqual([approvalOf(paused)]);
    expect(listed.body.approvals[0].session_id).toBe('change-review:42');
    // The conversation id names the same session; the single read echoes the alias too.
    const { rows } = await db.pool.query('SELECT session_id FROM agent_runs WHERE id = $1', [paused.body.run_id]);
    const byId = await v1(server.url, `/approvals?session_id=${rows[0].session_id}`, { token: admin });
    expect(byId.body.approvals.map((a: any) => a.id)).toEqual([approvalOf(paused)]);
    expect((await v1(server.url, `/approvals/${approvalOf(elsewhere)}`, { token: admin })).body.session_id).toBe('change-review:43');
    // Another caller's string is their own: the operator has no 'change-review:42', so nothing.
    expect((await v1(server.url, '/approvals?session_id=change-review:42', { token: operator })).body).toEqual({ approvals: [], count: 0 });
    const bad = await v1(server.url, '/approvals?session_id=has%20space', { token: admin });
    expect(bad.status).toBe(400);
    expect(JSON.stringify(bad.body)).toContain('session_id');
  });

  it('anything but 1-128 characters of [A-Za-z0-9._:-] is a VALIDATION_ERROR naming session_id', async () => {
    for (const session_id of ['has space', 'x'.repeat(129), '', 'ünïcode', 'a/b']) {
      const reply = await v1(server.url, '/chat/completions', { token: operator, body: { messages: [{ role: 'user', content: 'hello' }], session_id } });
      expect(reply.status).toBe(400);
      expect(reply.body).toMatchObject({ type: 'error', error: { code: 'VALIDATION_ERROR' } });
      expect(reply.body.error.message).toContain('session_id');
    }
    const longest = await v1(server.url, '/chat/completions', { token: operator, body: { messages: [{ role: 'user', content: 'hello' }], session_id: 'a'.repeat(128) } });
    expect(longest.status).toBe(200);
    expect(longest.body.session_id).toBe('a'.repeat(128));
  });
});

describe('metadata.run_id is an opaque string', () => {
  it('names the run: echoed in the answer, its events and every read; reused is 409 CONFLICT', async () => {
    const RUN = 'pska:report-run.2026-06-11_7';
    const reply = await v1(server.url, '/chat/completions', { token: operator, body: { messages: [{ role: 'user', content: 'hello' }], metadata: { caller: 'pska', run_id: RUN, purpose: 'report' } } });
    expect(reply.status).toBe(200);
    expect(reply.body.run_id).toBe(RUN);
    expect(reply.body.events[0]).toMatchObject({ run_id: RUN, event_id: `${RUN}:1` });
    const run = await v1(server.url, `/runs/${encodeURIComponent(RUN)}`, { token: operator });
    expect(run.status).toBe(200);
    expect(run.body).toMatchObject({ run_id: RUN, status: 'completed' });
    const events = await v1(server.url, `/runs/${encodeURIComponent(RUN)}/events`, { token: operator });
    expect(events.body.run_id).toBe(RUN);
    expect(events.body.events.at(-1).event_id).toBe(`${RUN}:${events.body.events.at(-1).sequence}`);
    const trace = await v1(server.url, `/traces/${encodeURIComponent(RUN)}`, { token: operator });
    expect(trace.status).toBe(200);
    const again = await v1(server.url, '/chat/completions', { token: operator, body: { messages: [{ role: 'user', content: 'hello' }], metadata: { run_id: RUN } } });
    expect(again.status).toBe(409);
    expect(again.body).toMatchObject({ type: 'error', error: { code: 'CONFLICT' } });
    // A background run with its own id, paged by it.
    const queued = await v1(server.url, '/runs', { token: operator, body: { messages: [{ role: 'user', content: 'hello' }], metadata: { run_id: 'bg.run-1' } } });
    expect(queued.status).toBe(202);
    expect(queued.body.run_id).toBe('bg.run-1');
    const page = await v1(server.url, `/runs?limit=1&before=${encodeURIComponent(RUN)}`, { token: operator });
    expect(page.status).toBe(200);
  });

  it('anything but 1-128 characters of [A-Za-z0-9._:-] is a VALIDATION_ERROR naming metadata.run_id', async () => {
    for (const run_id of ['has space', 'x'.repeat(129), '', 42, 'a/b']) {
      const reply = await v1(server.url, '/chat/completions', { token: operator, body: { messages: [{ role: 'user', content: 'hello' }], metadata: { run_id } } });
      expect(reply.status).toBe(400);
      expect(reply.body).toMatchObject({ type: 'error', error: { code: 'VALIDATION_ERROR' } });
      expect(reply.body.error.message).toContain('metadata.run_id');
    }
  });
});

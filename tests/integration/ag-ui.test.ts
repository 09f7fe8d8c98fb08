/**
 * Issue 13, AG-UI: POST /api/agent/ag-ui against the real app and PostgreSQL, driven by the real
 * @ag-ui/client HttpAgent (plain chat, tool calls, an approval round trip confirmed and denied),
 * and by raw HTTP where HttpAgent cannot go (a reconnect with Last-Event-ID, an expired interrupt
 * it refuses client-side, replays, another user's thread, malformed input).
 */
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { promisify } from 'node:util';
import { HttpAgent, type AgentSubscriber } from '@ag-ui/client';
import type { BaseEvent, Interrupt } from '@ag-ui/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { login } from '../helpers/chat-client.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { startMain } from '../helpers/main-process.ts';
import { parseSse, readFrames, type SseFrame } from '../helpers/sse.ts';

let db: TestDatabase;
let server: TestServer;
let url: string;
let admin: string;
let viewer: string;

beforeAll(async () => {
  db = await createTestDatabase();
  // Paced answers, so that a stream can be cut while an answer is streaming.
  server = await startTestServer({ db, env: { OFFLINE_MODEL_DELAY_MS: '15' } });
  url = `${server.url}/api/agent/ag-ui`;
  [admin, viewer] = await Promise.all([login(server.url, 'admin'), login(server.url, 'viewer')]);
});
afterAll(async () => {
  await server?.close();
  await db?.drop();
});

const deployments = async (service: string, version: string) =>
  Number((await db.pool.query('SELECT count(*) FROM deployments WHERE service = $1 AND version = $2', [service, version])).rows[0].count);

const ledger = async (threadId: string) =>
  (await db.pool.query('SELECT seq, kind, payload FROM conversation_events WHERE conversation_id = $1 ORDER BY seq', [threadId])).rows as { seq: number; kind: string; payload: any }[];

function agentFor(token: string, threadId: string = randomUUID()): { agent: HttpAgent; events: BaseEvent[] } {
  const agent = new HttpAgent({ url, headers: { Authorization: `Bearer ${token}` }, threadId });
  const events: BaseEvent[] = [];
  agent.subscribe({ onEvent: ({ event }) => void events.push(event) } satisfies AgentSubscriber);
  return { agent, events };
}

async function say(agent: HttpAgent, text: string) {
  agent.addMessage({ id: randomUUID(), role: 'user', content: text });
  return agent.runAgent();
}

/** POSTs a RunAgentInput and reads the SSE frames until `stop` or the end. */
async function post(
  body: unknown,
  options: { token?: string; headers?: Record<string, string>; stop?: (f: SseFrame, all: SseFrame[]) => boolean; at?: string } = {},
): Promise<{ status: number; json?: any; frames: SseFrame[] }> {
  const controller = new AbortController();
  const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'text/event-stream', ...options.headers };
  if (options.token !== undefined) headers.authorization = `Bearer ${options.token}`;
  const response = await fetch(options.at ?? url, { method: 'POST', headers, body: typeof body === 'string' ? body : JSON.stringify(body), signal: controller.signal });
  if (response.status !== 200) return { status: response.status, json: await response.json(), frames: [] };
  try {
    return { status: 200, frames: await readFrames(response, { stop: options.stop }) };
  } finally {
    controller.abort();
  }
}

const input = (threadId: string, over: Record<string, unknown> = {}) => ({
  threadId,
  runId: randomUUID(),
  messages: [{ id: randomUUID(), role: 'user', content: "what's the health of payments-api" }],
  tools: [],
  context: [],
  ...over,
});
const typesOf = (frames: SseFrame[]) => frames.filter((f) => f.data).map((f) => f.data.type as string);

describe('AG-UI through @ag-ui/client HttpAgent', () => {
  it('plain chat: RUN_STARTED, one streamed text message, RUN_FINISHED success; the thread is the conversation', async () => {
    const { agent, events } = agentFor(admin);
    const { newMessages } = await say(agent, 'hello');
    const types = events.map((e) => e.type);
    expect(types[0]).toBe('RUN_STARTED');
    expect(types.at(-1)).toBe('RUN_FINISHED');
    expect(events.at(-1)).toMatchObject({ threadId: agent.threadId, outcome: { type: 'success' } });
    expect(types.filter((t) => t === 'TEXT_MESSAGE_START')).toHaveLength(1);
    expect(types.filter((t) => t === 'TEXT_MESSAGE_CONTENT').length).toBeGreaterThan(1);
    const answer = newMessages.find((m) => m.role === 'assistant');
    // What the client assembled is exactly what the ledger committed: no token lost or doubled.
    const committed = (await ledger(agent.threadId)).filter((e) => e.kind === 'assistant.message');
    expect(committed).toHaveLength(1);
    expect(answer?.content).toBe(committed[0].payload.text);
    const conversation = await db.pool.query("SELECT u.username FROM conversations c JOIN users u ON u.id = c.user_id WHERE c.id = $1", [agent.threadId]);
    expect(conversation.rows).toEqual([{ username: 'admin' }]);

    // The next run on the same thread continues it: only the last user message is new.
    await say(agent, "what's the health of payments-api");
    const users = (await ledger(agent.threadId)).filter((e) => e.kind === 'user.message').map((e) => e.payload.text);
    expect(users).toEqual(['hello', "what's the health of payments-api"]);
  });

  it('tool calls: TOOL_CALL_START/ARGS/END/RESULT, then the answer', async () => {
    const { agent, events } = agentFor(admin);
    const { newMessages } = await say(agent, "what's the health of payments-api");
    const start = events.find((e) => e.type === 'TOOL_CALL_START') as any;
    expect(start.toolCallName).toBe('check_health');
    const args = events.filter((e) => e.type === 'TOOL_CALL_ARGS' && (e as any).toolCallId === start.toolCallId).map((e: any) => e.delta).join('');
    expect(JSON.parse(args)).toMatchObject({ service: 'payments-api' });
    const result = events.find((e) => e.type === 'TOOL_CALL_RESULT') as any;
    expect(result.toolCallId).toBe(start.toolCallId);
    expect(JSON.parse(result.content)).toMatchObject({ service: 'payments-api' });
    const order: string[] = events.map((e) => e.type);
    expect(order.indexOf('TOOL_CALL_END')).toBeLessThan(order.indexOf('TOOL_CALL_RESULT'));
    expect(order.lastIndexOf('TEXT_MESSAGE_CONTENT')).toBeGreaterThan(order.indexOf('TOOL_CALL_RESULT'));
    // The client's message list holds the call, its result and the answer.
    expect(newMessages.map((m) => m.role)).toEqual(expect.arrayContaining(['assistant', 'tool']));
    expect(newMessages.find((m) => m.role === 'tool')).toMatchObject({ toolCallId: start.toolCallId });
  });

  it('an approval is an interrupt; resume approved runs the action once; a replayed resume does nothing', async () => {
    const { agent, events } = agentFor(admin);
    await say(agent, 'deploy checkout-api 2.4.1 to staging');
    const finished = events.at(-1) as any;
    expect(finished.type).toBe('RUN_FINISHED');
    expect(finished.outcome.type).toBe('interrupt');
    const [interrupt] = finished.outcome.interrupts as Interrupt[];
    expect(interrupt).toMatchObject({ reason: 'tool_approval', metadata: { tool: 'deploy_service' } });
    expect(interrupt.message).toMatch(/checkout-api/);
    expect(Date.parse(interrupt.expiresAt!)).toBeGreaterThan(Date.now());
    // The interrupt names the tool call the stream announced.
    expect(events.find((e) => e.type === 'TOOL_CALL_START' && (e as any).toolCallId === interrupt.toolCallId)).toMatchObject({ toolCallName: 'deploy_service' });
    expect(agent.pendingInterrupts.map((i) => i.id)).toEqual([interrupt.id]);
    expect(await deployments('checkout-api', '2.4.1')).toBe(0);

    events.length = 0;
    await agent.runAgent({ resume: [{ interruptId: interrupt.id, status: 'resolved', payload: { approved: true } }] });
    expect(events.at(-1)).toMatchObject({ type: 'RUN_FINISHED', outcome: { type: 'success' } });
    // The result answers the very call the interrupt named.
    expect(events.find((e) => e.type === 'TOOL_CALL_RESULT')).toMatchObject({ toolCallId: interrupt.toolCallId });
    expect(agent.pendingInterrupts).toEqual([]);
    expect(await deployments('checkout-api', '2.4.1')).toBe(1);
    expect((await db.pool.query('SELECT status FROM approvals WHERE id = $1', [interrupt.id])).rows[0].status).toBe('approved');
    // The decision is audited as any other (issue 11): who, which approval, which tool, the result.
    const audit = await db.pool.query(`SELECT * FROM audit_log WHERE arguments->>'approval_id' = $1`, [interrupt.id]);
    expect(audit.rows).toHaveLength(1);
    expect(audit.rows[0]).toMatchObject({ operation: 'approval.approve', username: 'admin', user_role: 'admin', method: 'POST', path: '/api/agent/ag-ui', outcome: 'success' });
    expect(audit.rows[0].arguments).toMatchObject({ tool: 'deploy_service', result: 'confirmed', resolution_reason: 'user_confirmed' });

    // The same resume again (a new run): nothing is pending, nothing runs twice.
    const again = await post(input(agent.threadId, { resume: [{ interruptId: interrupt.id, status: 'resolved', payload: { approved: true } }] }), { token: admin });
    expect(again.status).toBe(200);
    expect(again.frames.find((f) => f.data?.type === 'RUN_ERROR')?.data).toMatchObject({ code: 'APPROVAL_NOT_FOUND' });
    expect(await deployments('checkout-api', '2.4.1')).toBe(1);
  });

  it('resume with approved: false denies; status cancelled denies too', async () => {
    for (const entry of [{ status: 'resolved', payload: { approved: false, reason: 'not today' } }, { status: 'cancelled' }] as const) {
      const { agent, events } = agentFor(admin);
      const version = entry.status === 'cancelled' ? '9.9.2' : '9.9.1';
      await say(agent, `deploy checkout-api ${version} to staging`);
      const [interrupt] = agent.pendingInterrupts;
      expect(interrupt).toBeDefined();
      events.length = 0;
      await agent.runAgent({ resume: [{ interruptId: interrupt.id, ...entry }] });
      expect(events[0].type).toBe('RUN_STARTED');
      expect(events.at(-1)).toMatchObject({ type: 'RUN_FINISHED', outcome: { type: 'success' } });
      expect(await deployments('checkout-api', version)).toBe(0);
      expect((await db.pool.query('SELECT status FROM approvals WHERE id = $1', [interrupt.id])).rows[0].status).toBe('denied');
    }
  });
  it('two approvals in one run are two interrupts; one resume array decides each, exactly as named', async () => {
    const { agent, events } = agentFor(admin);
    await say(agent, 'deploy checkout-api 4.0.1 to staging; deploy payments-api 4.0.1 to staging');
    const interrupts = agent.pendingInterrupts;
    expect(interrupts).toHaveLength(2);
    const of = (service: string) => interrupts.find((i) => (i.metadata?.input as { service: string }).service === service)!;
    events.length = 0;
    await agent.runAgent({
      resume: [
        { interruptId: of('checkout-api').id, status: 'resolved', payload: { approved: true } },
        { interruptId: of('payments-api').id, status: 'resolved', payload: { approved: false, reason: 'freeze' } },
      ],
    });
    expect(events.at(-1)).toMatchObject({ type: 'RUN_FINISHED', outcome: { type: 'success' } });
    const deployed = await db.pool.query("SELECT service FROM deployments WHERE version = '4.0.1' ORDER BY service");
    expect(deployed.rows).toEqual([{ service: 'checkout-api' }]);
  });
});

describe("the README's curl example", () => {
  it('runs as printed (with the server and token filled in) and streams a tool call to RUN_FINISHED', async () => {
    const readme = await readFile(new URL('../../README.md', import.meta.url), 'utf8');
    const section = readme.slice(readme.indexOf('### AG-UI'));
    const command = /```bash\n([\s\S]*?)\n# data:/.exec(section)![1].replace('http://127.0.0.1:3000', server.url);
    const { stdout } = await promisify(execFile)('bash', ['-c', command], { env: { ...process.env, TOKEN: admin }, timeout: 20_000 });
    const types = parseSse(stdout + '\n\n').frames.filter((f) => f.data).map((f) => f.data.type);
    expect(types[0]).toBe('RUN_STARTED');
    expect(types).toContain('TOOL_CALL_START');
    expect(types.at(-1)).toBe('RUN_FINISHED');
  });
});

describe('AG-UI when the model is down', () => {
  it('the run ends with RUN_ERROR carrying our code (LLM_UNAVAILABLE), seen by HttpAgent', async () => {
    // Nothing listens on port 9: the model call is refused at once.
    const down = await startTestServer({ db, env: { OPENAI_BASE_URL: 'http://127.0.0.1:9/v1', OPENAI_API_KEY: 'x', OPENAI_TIMEOUT_MS: '1500', OPENAI_MAX_RETRIES: '0' } });
    try {
      const agent = new HttpAgent({ url: `${down.url}/api/agent/ag-ui`, headers: { Authorization: `Bearer ${await login(down.url, 'admin')}` }, threadId: randomUUID() });
      const errors: BaseEvent[] = [];
      agent.addMessage({ id: randomUUID(), role: 'user', content: 'hello' });
      await agent.runAgent({}, { onRunErrorEvent: ({ event }) => void errors.push(event) }).catch(() => {});
      expect(errors).toEqual([expect.objectContaining({ type: 'RUN_ERROR', code: 'LLM_UNAVAILABLE' })]);
      expect((errors[0] as any).message.length).toBeGreaterThan(0);
    } finally {
      await down.close();
    }
  });
});

describe('AG-UI over raw HTTP', () => {
  it('a reconnect with Last-Event-ID gets a snapshot of the answer so far, then the rest: no text twice', async () => {
    const threadId = randomUUID();
    const body = input(threadId, { messages: [{ id: randomUUID(), role: 'user', content: 'hello, tell me about yourself' }] });
    // Cut the stream once some answer text has arrived after an id.
    const first = await post(body, { token: admin, stop: (_f, all) => all.some((f) => f.id) && all.filter((f) => f.data?.type === 'TEXT_MESSAGE_CONTENT').length >= 3 });
    const lastId = first.frames.filter((f) => f.id).at(-1)!.id!;
    const seen = first.frames.filter((f) => f.data?.type === 'TEXT_MESSAGE_CONTENT').map((f) => f.data.delta).join('');
    expect(first.frames.some((f) => f.data?.type === 'RUN_FINISHED')).toBe(false);

    const second = await post(body, { token: admin, headers: { 'last-event-id': lastId } });
    const types = typesOf(second.frames);
    expect(types[0]).toBe('RUN_STARTED');
    expect(types[1]).toBe('MESSAGES_SNAPSHOT');
    expect(types.at(-1)).toBe('RUN_FINISHED');
    const snapshotFrame = second.frames.find((f) => f.data?.type === 'MESSAGES_SNAPSHOT')!;
    expect(Number(snapshotFrame.id)).toBeGreaterThanOrEqual(Number(lastId));
    const messages = snapshotFrame.data.messages as { id: string; role: string; content?: string }[];
    expect(messages[0]).toMatchObject({ role: 'user', content: 'hello, tell me about yourself' });
    const answer = messages.find((m) => m.role === 'assistant');
    const rest = second.frames.filter((f) => f.data?.type === 'TEXT_MESSAGE_CONTENT');
    const committed = (await ledger(threadId)).find((e) => e.kind === 'assistant.message')!.payload.text as string;
    // The snapshot has at least what the first stream showed; with what follows it is the answer, once.
    const snapshotText = answer?.content ?? '';
    expect(snapshotText.startsWith(seen)).toBe(true);
    expect(snapshotText + rest.map((f) => f.data.delta).join('')).toBe(committed);
    // It was cut mid-answer: the snapshot carries the streamed part, the rest continues that message.
    expect(answer).toBeDefined();
    expect(rest.length).toBeGreaterThan(0);
    expect(rest.every((f) => f.data.messageId === answer!.id)).toBe(true);
    expect(second.frames.find((f) => f.data?.type === 'TEXT_MESSAGE_START')!.data.messageId).toBe(answer!.id);
    // Nothing after the snapshot carries an id at or below the client's.
    for (const f of second.frames.filter((f) => f.id)) expect(Number(f.id)).toBeGreaterThanOrEqual(Number(lastId));
  });

  it('a reconnect to a finished run: RUN_STARTED, the snapshot, RUN_FINISHED; an unknown run is 404', async () => {
    const { agent } = agentFor(admin);
    await say(agent, 'deploy checkout-api 7.0.0 to staging');
    const runId = (await db.pool.query('SELECT request_id FROM runs WHERE conversation_id = $1', [agent.threadId])).rows[0].request_id;
    const body = input(agent.threadId, { runId });
    const again = await post(body, { token: admin, headers: { 'last-event-id': '1' } });
    expect(typesOf(again.frames)).toEqual(['RUN_STARTED', 'MESSAGES_SNAPSHOT', 'RUN_FINISHED']);
    expect(again.frames.at(-1)!.data.outcome.interrupts[0].id).toBe(agent.pendingInterrupts[0].id);
    const unknown = await post(input(agent.threadId), { token: admin, headers: { 'last-event-id': '1' } });
    expect(unknown).toMatchObject({ status: 404, json: { error: { code: 'NOT_FOUND' } } });
    expect(await post(body, { token: admin, headers: { 'last-event-id': 'x' } })).toMatchObject({ status: 400, json: { error: { code: 'VALIDATION_ERROR' } } });
  });

  it('a resume answering one of two interrupts finishes with the other one still to answer', async () => {
    const { agent } = agentFor(admin);
    await say(agent, 'deploy checkout-api 4.0.2 to staging; deploy payments-api 4.0.2 to staging');
    const [a, b] = agent.pendingInterrupts;
    const partial = await post(input(agent.threadId, { resume: [{ interruptId: a.id, status: 'resolved', payload: { approved: true } }] }), { token: admin });
    const end = partial.frames.at(-1)!.data;
    expect(end).toMatchObject({ type: 'RUN_FINISHED', outcome: { type: 'interrupt' } });
    expect(end.outcome.interrupts.map((i: Interrupt) => i.id)).toEqual([b.id]);
    expect(end.outcome.interrupts[0]).toMatchObject({ toolCallId: b.toolCallId, expiresAt: b.expiresAt });
    expect((await db.pool.query("SELECT count(*)::int AS n FROM deployments WHERE version = '4.0.2'")).rows[0].n).toBe(0);
  });

  it('a new message instead of a resume supersedes the pending interrupt (denied, nothing runs), as on /chat', async () => {
    const { agent } = agentFor(admin);
    await say(agent, 'deploy checkout-api 4.4.4 to staging');
    const [interrupt] = agent.pendingInterrupts;
    const next = await post(input(agent.threadId, { messages: [{ id: randomUUID(), role: 'user', content: 'hello' }] }), { token: admin });
    expect(next.frames.at(-1)!.data).toMatchObject({ type: 'RUN_FINISHED', outcome: { type: 'success' } });
    expect((await db.pool.query('SELECT status, reason FROM approvals WHERE id = $1', [interrupt.id])).rows[0]).toEqual({ status: 'denied', reason: 'superseded_by_new_message' });
    expect(await deployments('checkout-api', '4.4.4')).toBe(0);
  });

  it('a resume of an expired interrupt is RUN_ERROR APPROVAL_EXPIRED and runs nothing; cancelling it goes through', async () => {
    const { agent } = agentFor(admin);
    await say(agent, 'deploy checkout-api 5.5.5 to staging');
    const [interrupt] = agent.pendingInterrupts;
    await db.pool.query("UPDATE approvals SET expires_at = now() - interval '1 second' WHERE id = $1", [interrupt.id]);
    const stale = await post(input(agent.threadId, { resume: [{ interruptId: interrupt.id, status: 'resolved', payload: { approved: true } }] }), { token: admin });
    expect(typesOf(stale.frames)).toEqual(['RUN_STARTED', 'RUN_ERROR']);
    expect(stale.frames[1].data).toMatchObject({ code: 'APPROVAL_EXPIRED' });
    expect(await deployments('checkout-api', '5.5.5')).toBe(0);
    expect((await db.pool.query('SELECT status FROM approvals WHERE id = $1', [interrupt.id])).rows[0].status).toBe('pending');

    const cancelled = await post(input(agent.threadId, { resume: [{ interruptId: interrupt.id, status: 'cancelled' }] }), { token: admin });
    expect(cancelled.frames.at(-1)!.data).toMatchObject({ type: 'RUN_FINISHED', outcome: { type: 'success' } });
    expect((await db.pool.query('SELECT status FROM approvals WHERE id = $1', [interrupt.id])).rows[0].status).toBe('expired');
    expect(await deployments('checkout-api', '5.5.5')).toBe(0);
  });

  it('the same runId again replays the run (nothing runs twice); a different input under it is CONFLICT', async () => {
    const { agent } = agentFor(admin);
    await say(agent, 'deploy checkout-api 6.1.0 to staging');
    const [interrupt] = agent.pendingInterrupts;
    const body = input(agent.threadId, { resume: [{ interruptId: interrupt.id, status: 'resolved', payload: { approved: true } }] });
    const once = await post(body, { token: admin });
    const twice = await post(body, { token: admin });
    // Replayed from the ledger, the answer comes whole (its tokens were live only): the same text.
    const squash = (frames: SseFrame[]) => typesOf(frames).filter((t, i, all) => t !== 'TEXT_MESSAGE_CONTENT' || all[i - 1] !== t);
    const text = (frames: SseFrame[]) => frames.filter((f) => f.data?.type === 'TEXT_MESSAGE_CONTENT').map((f) => f.data.delta).join('');
    expect(squash(twice.frames)).toEqual(squash(once.frames));
    expect(text(twice.frames)).toBe(text(once.frames));
    expect(twice.frames.at(-1)!.data).toMatchObject({ type: 'RUN_FINISHED', outcome: { type: 'success' } });
    expect(await deployments('checkout-api', '6.1.0')).toBe(1);
    const other = await post({ ...body, resume: undefined }, { token: admin });
    expect(other).toMatchObject({ status: 409, json: { error: { code: 'CONFLICT' } } });
  });

  it("another user's thread is 404, for a new message, a resume and a reconnect; nothing is written to it", async () => {
    const { agent } = agentFor(admin);
    await say(agent, 'deploy checkout-api 8.0.0 to staging');
    const [interrupt] = agent.pendingInterrupts;
    const before = (await ledger(agent.threadId)).length;
    const attempts = [
      input(agent.threadId),
      input(agent.threadId, { resume: [{ interruptId: interrupt.id, status: 'resolved', payload: { approved: true } }] }),
    ];
    for (const body of attempts) expect(await post(body, { token: viewer })).toMatchObject({ status: 404, json: { error: { code: 'NOT_FOUND' } } });
    expect(await post(input(agent.threadId), { token: viewer, headers: { 'last-event-id': '1' } })).toMatchObject({ status: 404 });
    // Through HttpAgent too: the client sees the HTTP error.
    const { agent: intruder } = agentFor(viewer, agent.threadId);
    await expect(say(intruder, 'hello')).rejects.toThrow(/404/);
    expect((await ledger(agent.threadId)).length).toBe(before);
    expect(await deployments('checkout-api', '8.0.0')).toBe(0);
  });

  it('attacks on a resume: two concurrent confirms deploy once; an interrupt id resumed from another thread decides nothing', async () => {
    const { agent } = agentFor(admin);
    await say(agent, 'deploy checkout-api 2.2.2 to staging');
    const [interrupt] = agent.pendingInterrupts;
    const confirm = () => post(input(agent.threadId, { resume: [{ interruptId: interrupt.id, status: 'resolved', payload: { approved: true } }] }), { token: admin });

    // The viewer, in a thread of their own, names the admin's interrupt: not theirs, nothing happens.
    const { agent: other } = agentFor(viewer);
    await say(other, 'hello');
    const hijack = await post(input(other.threadId, { resume: [{ interruptId: interrupt.id, status: 'resolved', payload: { approved: true } }] }), { token: viewer });
    expect(hijack.frames.at(-1)!.data).toMatchObject({ type: 'RUN_ERROR', code: 'APPROVAL_NOT_FOUND' });
    expect((await db.pool.query('SELECT status FROM approvals WHERE id = $1', [interrupt.id])).rows[0].status).toBe('pending');

    const results = await Promise.all([confirm(), confirm(), confirm()]);
    const outcome = (r: Awaited<ReturnType<typeof confirm>>) => (r.status !== 200 ? r.json.error.code : r.frames.at(-1)!.data.outcome?.type ?? r.frames.at(-1)!.data.code);
    const outcomes = results.map(outcome);
    expect(outcomes.filter((o) => o === 'success')).toHaveLength(1);
    for (const o of outcomes.filter((o) => o !== 'success')) expect(['CONVERSATION_BUSY', 'APPROVAL_NOT_FOUND']).toContain(o);
    expect(await deployments('checkout-api', '2.2.2')).toBe(1);
  });

  it('a new threadId claimed at once by two users belongs to exactly one; the same user twice is never an error but busy', async () => {
    const threadId = randomUUID();
    const body = () => input(threadId, { messages: [{ id: randomUUID(), role: 'user', content: 'hello' }] });
    const [a, b] = await Promise.all([post(body(), { token: admin }), post(body(), { token: viewer })]);
    expect([a.status, b.status].sort()).toEqual([200, 404]);
    const owner = (await db.pool.query('SELECT u.username FROM conversations c JOIN users u ON u.id = c.user_id WHERE c.id = $1', [threadId])).rows;
    expect(owner).toEqual([{ username: a.status === 200 ? 'admin' : 'viewer' }]);

    const mine = randomUUID();
    const twice = await Promise.all([post(input(mine, { messages: [{ id: 'm', role: 'user', content: 'hello' }] }), { token: admin }), post(input(mine, { messages: [{ id: 'm', role: 'user', content: 'hello' }] }), { token: admin })]);
    for (const r of twice) {
      if (r.status === 200) expect(r.frames.at(-1)!.data).toMatchObject({ type: 'RUN_FINISHED', outcome: { type: 'success' } });
      else expect(r).toMatchObject({ status: 409, json: { error: { code: 'CONVERSATION_BUSY' } } });
    }
    expect(twice.some((r) => r.status === 200)).toBe(true);
  });

  it('malformed input is 400 VALIDATION_ERROR; no token is 401', async () => {
    const threadId = randomUUID();
    const cases: unknown[] = [
      '{not json',
      {},
      input(''),
      input('x'.repeat(129)),
      input(threadId, { runId: '' }),
      input(threadId, { messages: [] }),
      input(threadId, { messages: [{ id: 'm', role: 'assistant', content: 'hi' }] }),
      input(threadId, { messages: [{ id: 'm', role: 'user', content: '   ' }] }),
      input(threadId, { messages: [{ id: 'm', role: 'user', content: [{ type: 'image', source: { type: 'url', value: 'https://x/y.png' } }] }] }),
      input(threadId, { resume: [{ interruptId: 'nope', status: 'resolved', payload: { approved: true } }] }),
      input(threadId, { resume: [{ interruptId: randomUUID(), status: 'resolved', payload: { ok: 1 } }] }),
      input(threadId, { resume: [{ interruptId: randomUUID(), status: 'maybe' }] }),
    ];
    for (const body of cases) {
      const res = await post(body, { token: admin });
      expect(res, JSON.stringify(body)).toMatchObject({ status: 400, json: { error: { code: 'VALIDATION_ERROR' } } });
    }
    // None of them created the thread.
    expect((await db.pool.query('SELECT count(*) FROM conversations WHERE id = $1', [threadId])).rows[0].count).toBe('0');
    expect(await post(input(threadId))).toMatchObject({ status: 401, json: { error: { code: 'UNAUTHORIZED' } } });
    expect(await post(input(threadId), { token: 'garbage' })).toMatchObject({ status: 401 });
  });
});

describe('AG-UI across replicas (a second real process on the same database)', () => {
  const cutMidAnswer = (_f: SseFrame, all: SseFrame[]) => all.some((f) => f.id) && all.filter((f) => f.data?.type === 'TEXT_MESSAGE_CONTENT').length >= 3;
  const replica = () =>
    // Slower answers than here (~2.5 s), so that a cut lands mid-answer even on a busy machine.
    // REPLICAS: a second gateway on one database says so, or main.ts refuses to start it.
    startMain([], { DATABASE_URL: db.url, DATA_DIR: server.config.dataDir, SERVICE_CLIENT_SECRET: 'test-service-secret-0123456789', OFFLINE_MODEL_DELAY_MS: '40', REPLICAS: 'true' });

  it('a stream cut on one replica resumes on the other through the ledger; a closing replica ends its streams', async () => {
    const other = await replica();
    const otherUrl = `${other.url}/api/agent/ag-ui`;
    try {
      // 1. Started there, resumed here: the run is not in this process, its commits are in the ledger.
      const threadId = randomUUID();
      const body = input(threadId, { messages: [{ id: randomUUID(), role: 'user', content: 'hello, tell me about yourself' }] });
      const first = await post(body, { token: admin, stop: cutMidAnswer, at: otherUrl });
      const lastId = first.frames.filter((f) => f.id).at(-1)!.id!;
      const second = await post(body, { token: admin, headers: { 'last-event-id': lastId } });
      expect(typesOf(second.frames)).toEqual(['RUN_STARTED', 'MESSAGES_SNAPSHOT', 'TEXT_MESSAGE_START', 'TEXT_MESSAGE_CONTENT', 'TEXT_MESSAGE_END', 'RUN_FINISHED']);
      const snapshot = second.frames[1].data.messages as { role: string; id: string }[];
      // Tokens are live only in the process that runs the run: the snapshot has the question, no partial answer.
      expect(snapshot.map((m) => m.role)).toEqual(['user']);
      const committed = (await ledger(threadId)).find((e) => e.kind === 'assistant.message')!.payload.text;
      expect(second.frames[3].data.delta).toBe(committed);

      // 2. A replica that closes ends its AG-UI streams (no terminal event) at once, lets the run
      // finish within its grace, and exits; the client reconnects to the other one and gets the
      // run's end, the whole answer.
      const slow = input(randomUUID(), { messages: [{ id: randomUUID(), role: 'user', content: 'hello, tell me about yourself' }] });
      let stopping: Promise<void> | undefined;
      const cut = await post(slow, { token: admin, at: otherUrl, stop: (f, all) => (cutMidAnswer(f, all) && (stopping ??= other.stop(10_000)), false) });
      await stopping;
      expect(cut.frames.some((f) => f.data?.type === 'RUN_FINISHED' || f.data?.type === 'RUN_ERROR')).toBe(false);
      expect(other.child.signalCode ?? other.child.exitCode).not.toBe('SIGKILL');
      const resumed = await post(slow, { token: admin, headers: { 'last-event-id': cut.frames.filter((f) => f.id).at(-1)!.id! } });
      expect(resumed.frames.at(-1)!.data).toMatchObject({ type: 'RUN_FINISHED', outcome: { type: 'success' } });
      expect(await other.exited).toBe(0);
    } finally {
      await other.stop();
    }
  });
});

/** A fetch for HttpAgent that notes each SSE `id:` of the responses (HttpAgent itself drops them). */
function idRecordingFetch(ids: string[]): typeof fetch {
  return async (target, init) => {
    const response = await fetch(target, init);
    if (!response.body || response.status !== 200) return response;
    const decoder = new TextDecoder();
    let buffer = '';
    const body = response.body.pipeThrough(
      new TransformStream<Uint8Array, Uint8Array>({
        transform(chunk, controller) {
          buffer += decoder.decode(chunk, { stream: true });
          const lines = buffer.split('\n');
          buffer = lines.pop()!;
          for (const line of lines) if (line.startsWith('id:')) ids.push(line.slice(3).trim());
          controller.enqueue(chunk);
        },
      }),
    );
    return new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers });
  };
}

describe('issue 24: AG-UI reconnect and thread ids through HttpAgent', () => {
  it('a two-turn thread, the second stream cut mid-answer and resumed with Last-Event-ID: the messages in true order, under the client’s ids', async () => {
    const ids: string[] = [];
    const agent = new HttpAgent({ url, headers: { Authorization: `Bearer ${admin}` }, threadId: randomUUID(), fetch: idRecordingFetch(ids) });
    agent.addMessage({ id: 'u1', role: 'user', content: "what's the health of payments-api" });
    await agent.runAgent();
    expect(agent.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'assistant']);

    // Turn 2: cut once some of the answer (after the tool's result) has arrived after an id.
    agent.addMessage({ id: 'u2', role: 'user', content: "what's the health of checkout-api" });
    const runId = randomUUID();
    const before = ids.length;
    let afterResult = 0;
    let resultSeen = false;
    const cut = agent.subscribe({
      onEvent: ({ event }) => {
        if (event.type === 'TOOL_CALL_RESULT') resultSeen = true;
        if (event.type === 'TEXT_MESSAGE_CONTENT' && resultSeen && ++afterResult === 2 && ids.length > before) agent.abortRun();
      },
    });
    await agent.runAgent({ runId }).catch(() => {});
    cut.unsubscribe();
    // The client holds the second answer in part (the offline model's is ~15 words, paced).
    expect(agent.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'assistant', 'user', 'assistant', 'tool', 'assistant']);
    const partial = agent.messages.at(-1)!.content as string;
    expect(partial.length).toBeGreaterThan(0);
    const rows = () => ledger(agent.threadId);

    // Resume through HttpAgent: the same runId, with Last-Event-ID.
    const events: BaseEvent[] = [];
    agent.headers = { ...agent.headers, 'Last-Event-ID': ids.at(-1)! };
    await agent.runAgent({ runId }, { onEvent: ({ event }) => void events.push(event) });
    expect(events.map((e) => e.type).slice(0, 2)).toEqual(['RUN_STARTED', 'MESSAGES_SNAPSHOT']);
    expect(events.at(-1)).toMatchObject({ type: 'RUN_FINISHED', outcome: { type: 'success' } });

    const messages = agent.messages;
    expect(messages.map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'assistant', 'user', 'assistant', 'tool', 'assistant']);
    expect(messages[0]).toMatchObject({ id: 'u1', content: "what's the health of payments-api" });
    expect(messages[4]).toMatchObject({ id: 'u2', content: "what's the health of checkout-api" });
    expect(new Set(messages.map((m) => m.id)).size).toBe(messages.length);
    // Each tool result follows its call; each answer is the committed one, whole and once.
    for (const i of [2, 6]) expect((messages[i] as any).toolCallId).toBe((messages[i - 1] as any).toolCalls[0].id);
    const answers = (await rows()).filter((e) => e.kind === 'assistant.message' && e.payload.text).map((e) => e.payload.text);
    expect([messages[3].content, messages[7].content]).toEqual(answers);
    expect(answers[1].startsWith(partial) && answers[1].length > partial.length).toBe(true);
    // The ledger keeps the client's ids with the turns.
    expect((await rows()).filter((e) => e.kind === 'user.message').map((e) => e.payload.client_message_id)).toEqual(['u1', 'u2']);
  });

  it('a threadId that is not a UUID works across two turns, is echoed, and is isolated per user', async () => {
    const threadId = 'thread_abc123';
    const { agent, events } = agentFor(admin, threadId);
    await say(agent, 'hello');
    await say(agent, "what's the health of payments-api");
    expect(events.filter((e) => e.type === 'RUN_STARTED' || e.type === 'RUN_FINISHED').map((e: any) => e.threadId)).toEqual([threadId, threadId, threadId, threadId]);
    expect(events.at(-1)).toMatchObject({ type: 'RUN_FINISHED', outcome: { type: 'success' } });
    const mapped = async (token: string) =>
      (await db.pool.query('SELECT t.conversation_id, c.user_id, u.username FROM conversation_aliases t JOIN conversations c ON c.id = t.conversation_id JOIN users u ON u.id = c.user_id WHERE t.external_id = $1 AND u.username = $2', [threadId, token])).rows;
    const [mine] = await mapped('admin');
    expect(mine).toBeDefined();
    const users = (await ledger(mine.conversation_id)).filter((e) => e.kind === 'user.message').map((e) => e.payload.text);
    expect(users).toEqual(['hello', "what's the health of payments-api"]);

    // The viewer's thread of the same name is the viewer's own: nothing of the admin's, nothing written to it.
    const adminRows = (await ledger(mine.conversation_id)).length;
    const { agent: other } = agentFor(viewer, threadId);
    await say(other, 'hello');
    expect(other.messages.map((m) => m.role)).toEqual(['user', 'assistant']);
    const [theirs] = await mapped('viewer');
    expect(theirs.conversation_id).not.toBe(mine.conversation_id);
    expect((await ledger(mine.conversation_id)).length).toBe(adminRows);
    expect((await ledger(theirs.conversation_id)).filter((e) => e.kind === 'user.message')).toHaveLength(1);
    // A reconnect of the admin's run through the viewer's thread of that name: no such run there.
    const adminRun = (await db.pool.query('SELECT request_id FROM runs WHERE conversation_id = $1 ORDER BY started_at DESC LIMIT 1', [mine.conversation_id])).rows[0].request_id;
    expect(await post(input(threadId, { runId: adminRun }), { token: viewer, headers: { 'last-event-id': '1' } })).toMatchObject({ status: 404 });
    // The admin's own reconnect finds it: the snapshot of the admin's thread, under the client's ids.
    const again = await post(input(threadId, { runId: adminRun }), { token: admin, headers: { 'last-event-id': '1' } });
    const snapshot = again.frames.find((f) => f.data?.type === 'MESSAGES_SNAPSHOT')!.data.messages as { id: string; role: string }[];
    expect(snapshot.filter((m) => m.role === 'user').map((m) => m.id)).toEqual(agent.messages.filter((m) => m.role === 'user').map((m) => m.id));
    expect(again.frames.at(-1)!.data).toMatchObject({ type: 'RUN_FINISHED', threadId });
  });

  it('a threadId is any string of 1–128 characters without control characters', async () => {
    const long = 'x'.repeat(128);
    const ok = await post(input(long, { messages: [{ id: 'm', role: 'user', content: 'hello' }] }), { token: admin });
    expect(ok.status).toBe(200);
    expect(ok.frames.at(-1)!.data).toMatchObject({ type: 'RUN_FINISHED', threadId: long });
    for (const bad of ['', 'x'.repeat(129), 'a\u0000b', 'line\nbreak']) {
      expect(await post(input(bad), { token: admin }), JSON.stringify(bad)).toMatchObject({ status: 400, json: { error: { code: 'VALIDATION_ERROR' } } });
    }
  });
});

/**
 * The agent runtime end to end: the real ChatOpenAI against the offline model over HTTP, tools
 * against a fake backend over HTTP, checkpoints in real PostgreSQL (PostgresSaver).
 */
import { PostgresSaver } from '@langchain/langgraph-checkpoint-postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAgentRuntime, type AgentEvent, type AgentRuntime } from '../../server/agent/index.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';
import { collect, SERVICE_SECRET, shape, startFakeBackend, startOfflineModel } from './agent-fixtures.ts';

let db: TestDatabase;
let saver: PostgresSaver;
let model: Awaited<ReturnType<typeof startOfflineModel>>;
let backend: Awaited<ReturnType<typeof startFakeBackend>>;
let agent: AgentRuntime;
let thread = 0;

const admin = { userToken: 'user-admin', conversationId: 'conv-admin' };
const newThread = () => `thread-${++thread}-${Date.now()}`;
const makeRuntime = (baseUrl: string, checkpointer = saver, maxRetries = 1) =>
  createAgentRuntime({
    model: { baseUrl, apiKey: 'offline', name: 'airlock-offline-1', timeoutMs: 5_000, maxRetries },
    apiUrl: () => backend.url,
    serviceCredentials: { clientId: 'airlock-gateway', clientSecret: SERVICE_SECRET },
    checkpointer,
  });
const done = (events: AgentEvent[]) => events.at(-1) as Extract<AgentEvent, { type: 'done' }>;
// The calls with an effect: a tool asking for approval first reads its preview (?dry_run=true, issue
// 27), which changes nothing and is not counted here.
const posts = () => backend.calls.filter((c) => c.method === 'POST' && c.query.dry_run !== 'true');

beforeAll(async () => {
  db = await createTestDatabase({ migrate: false });
  saver = PostgresSaver.fromConnString(db.url, { schema: db.schema });
  await saver.setup();
  model = await startOfflineModel(0);
  backend = await startFakeBackend();
  agent = await makeRuntime(model.baseUrl);
});
afterAll(async () => {
  await saver?.end();
  await model?.app.close();
  await backend?.app.close();
  await db?.drop();
});

describe('agent runtime', () => {
  it('streams an answer token by token', async () => {
    const events = await collect(agent.run({ threadId: newThread(), text: 'hello', ...admin }));
    const tokens = events.filter((e) => e.type === 'token');
    expect(tokens.length).toBeGreaterThan(20);
    expect(shape(events)).toEqual(['token', 'done']);
    expect(done(events).text).toBe(tokens.map((t) => t.token).join(''));
    expect(done(events).text).toMatch(/^Hello! I'm the Airlock operations assistant/);
  });

  it('continueThread (a retried run, issue 30) of a thread that had answered: no model call and no tool again, done with the stored answer', async () => {
    const threadId = newThread();
    const first = await collect(agent.run({ threadId, text: "what's the health of payments-api", ...admin }));
    const [calls, asked] = [backend.calls.length, model.offered.length];
    const again = await collect(agent.continueThread({ threadId, ...admin }));
    expect(shape(again)).toEqual(['done']);
    expect(done(again).text).toBe(done(first).text);
    expect([backend.calls.length, model.offered.length]).toEqual([calls, asked]);
  });

  it('runs a safe tool with both identities: tool_start -> tool_end -> answer', async () => {
    const before = backend.calls.length;
    const events = await collect(agent.run({ threadId: newThread(), text: "what's the health of payments-api", ...admin }));
    expect(shape(events)).toEqual(['tool_start', 'tool_end', 'token', 'done']);
    const [start, end] = events as [Extract<AgentEvent, { type: 'tool_start' }>, Extract<AgentEvent, { type: 'tool_end' }>];
    expect(start).toMatchObject({ tool: 'check_health', input: { service: 'payments-api' } });
    expect(end).toMatchObject({ tool: 'check_health', toolCallId: start.toolCallId, output: { status: 'healthy' } });
    expect(end.durationMs).toBeGreaterThanOrEqual(0);
    expect(done(events).text).toBe('payments-api is healthy.');
    const call = backend.calls[before];
    expect(call).toMatchObject({ method: 'GET', path: '/api/tools/health', query: { service: 'payments-api' } });
    expect(call.headers).toMatchObject({
      authorization: expect.stringMatching(/^Bearer svc-/), 'x-user-jwt': 'user-admin',
      'x-tool-call-id': start.toolCallId, 'x-conversation-id': 'conv-admin', 'idempotency-key': undefined,
    });
  });

  it('offers the model only the tools selected for the request (context budget)', async () => {
    model.offered.length = 0;
    await collect(agent.run({ threadId: newThread(), text: 'start maintenance on db-primary for 30 minutes because of a disk upgrade', ...admin }));
    expect(model.offered[0]).toEqual(['show_capabilities', 'list_maintenance_events', 'start_maintenance', 'end_maintenance']);
    model.offered.length = 0;
    await collect(agent.run({ threadId: newThread(), text: "what's the health of payments-api", ...admin }));
    // Keywords give two tools; the embedding fallback (the offline model's /v1/embeddings) may add one.
    expect(model.offered[0].slice(0, 1)).toEqual(['show_capabilities']);
    expect(model.offered[0]).toContain('check_health');
    expect(model.offered[0].length).toBeLessThanOrEqual(3);
    expect(model.offered[0]).not.toContain('deploy_service');
  });

  it('pauses a dangerous tool, then runs it once approved', async () => {
    const threadId = newThread();
    const postsBefore = posts().length;
    // 1. The run pauses: approval_required is the last event, nothing was posted.
    const first = await collect(agent.run({ threadId, text: 'deploy checkout-api 2.4.1 to staging', ...admin }));
    expect(shape(first)).toEqual(['approval_required']);
    const [approval] = (first[0] as Extract<AgentEvent, { type: 'approval_required' }>).approvals;
    expect(approval).toMatchObject({ tool: 'deploy_service', args: { service: 'checkout-api', version: '2.4.1', environment: 'staging' } });
    expect(posts().length).toBe(postsBefore);
    // 2. pendingApprovals() reads the same from the checkpoint.
    expect(await agent.pendingApprovals(threadId)).toEqual([approval]);
    // 3. Resume approved: the tool runs with the tool call id as idempotency key, then the answer.
    const second = await collect(agent.resume({ threadId, decisions: { [approval.interruptId]: { approved: true } }, ...admin }));
    expect(shape(second)).toEqual(['tool_start', 'tool_end', 'token', 'done']);
    expect(done(second).text).toBe('Done: checkout-api 2.4.1 is deploying to staging (status: in_progress).');
    expect(posts().slice(postsBefore).map((c) => [c.path, c.headers['idempotency-key']])).toEqual([['/api/tools/deployments', approval.toolCallId]]);
    // 4. Nothing is pending any more; a second resume finds nothing.
    expect(await agent.pendingApprovals(threadId)).toEqual([]);
    await expect(collect(agent.resume({ threadId, decisions: { [approval.interruptId]: { approved: true } }, ...admin }))).rejects.toMatchObject({ code: 'APPROVAL_NOT_FOUND' });
  });

  it.each([
    ['denied', undefined, /^I did not start maintenance on db-primary: you denied the request/],
    ['expired', 'APPROVAL_EXPIRED', /^I did not start maintenance on db-primary: the approval expired/],
  ] as const)('answers that nothing was done when the approval is %s', async (reason, code, answer) => {
    const threadId = newThread();
    const postsBefore = posts().length;
    const first = await collect(agent.run({ threadId, text: 'start maintenance on db-primary for 30 minutes because of a disk upgrade', ...admin }));
    const [approval] = (first[0] as Extract<AgentEvent, { type: 'approval_required' }>).approvals;
    const events = await collect(agent.resume({ threadId, decisions: { [approval.interruptId]: { approved: false, reason } }, ...admin }));
    expect(shape(events)).toEqual(['tool_start', 'tool_error', 'token', 'done']);
    const error = events[1] as Extract<AgentEvent, { type: 'tool_error' }>;
    expect(error.code).toBe(code);
    expect(done(events).text).toMatch(answer);
    expect(posts().length).toBe(postsBefore);
  });

  it('gives a viewer FORBIDDEN at once instead of an approval prompt', async () => {
    const events = await collect(agent.run({ threadId: newThread(), text: 'deploy checkout-api 2.4.1 to staging', userToken: 'user-viewer', conversationId: 'c-v' }));
    expect(shape(events)).toEqual(['tool_start', 'tool_error', 'token', 'done']);
    expect(events[1]).toMatchObject({ tool: 'deploy_service', code: 'FORBIDDEN' });
    expect(done(events).text).toMatch(/^I could not deploy checkout-api 2.4.1 to staging: you don't have permission/);
  });

  it('pauses parallel dangerous calls separately and resumes them by interrupt id (mixed batch)', async () => {
    const threadId = newThread();
    const postsBefore = posts().length;
    const text = 'deploy checkout-api 2.4.1 to staging; start maintenance on db-primary for 1 hour because of a reboot; list maintenance events';
    const first = await collect(agent.run({ threadId, text, ...admin }));
    // The safe sibling ran; both dangerous calls wait, each with its own interrupt.
    expect(shape(first)).toEqual(['tool_start', 'tool_end', 'approval_required']);
    const approvals = (first.at(-1) as Extract<AgentEvent, { type: 'approval_required' }>).approvals;
    expect(approvals.map((a) => a.tool).sort()).toEqual(['deploy_service', 'start_maintenance']);
    const deploy = approvals.find((a) => a.tool === 'deploy_service')!;
    const maintenance = approvals.find((a) => a.tool === 'start_maintenance')!;
    const second = await collect(agent.resume({
      threadId, ...admin,
      decisions: { [deploy.interruptId]: { approved: true }, [maintenance.interruptId]: { approved: false, reason: 'denied' } },
    }));
    expect(second.filter((e) => e.type === 'tool_end').map((e) => (e as { tool: string }).tool)).toEqual(['deploy_service']);
    expect(second.filter((e) => e.type === 'tool_error').map((e) => (e as { tool: string }).tool)).toEqual(['start_maintenance']);
    expect(posts().slice(postsBefore).map((c) => c.path)).toEqual(['/api/tools/deployments']);
    const answer = done(second).text;
    expect(answer).toContain('Done: checkout-api 2.4.1 is deploying to staging');
    expect(answer).toContain('I did not start maintenance on db-primary: you denied the request');
    // The safe call's result is in the answer too (it ran once, before the pause).
    expect(answer).toContain('Maintenance events:');
    expect(backend.calls.filter((c) => c.path === '/api/tools/maintenance' && c.method === 'GET' && c.headers['x-conversation-id'] === 'conv-admin').length).toBeGreaterThan(0);
  });

  it('requires a decision for every pending approval at once', async () => {
    const threadId = newThread();
    const first = await collect(agent.run({ threadId, text: 'end the maintenance on db-primary; deploy checkout-api 2.4.1 to staging', ...admin }));
    const [a, b] = (first.at(-1) as Extract<AgentEvent, { type: 'approval_required' }>).approvals;
    // 1. Half a decision is refused, and nothing changes.
    await expect(collect(agent.resume({ threadId, decisions: { [a.interruptId]: { approved: true } }, ...admin }))).rejects.toMatchObject({
      code: 'VALIDATION_ERROR', details: { missing: [b.interruptId] },
    });
    expect(await agent.pendingApprovals(threadId)).toEqual([a, b]);
    // 2. Unknown ids alone: nothing to resume.
    await expect(collect(agent.resume({ threadId, decisions: { nope: { approved: true } }, ...admin }))).rejects.toMatchObject({ code: 'APPROVAL_NOT_FOUND' });
    // 3. Both decided: done.
    const done2 = await collect(agent.resume({ threadId, decisions: { [a.interruptId]: { approved: true }, [b.interruptId]: { approved: false, reason: 'denied' } }, ...admin }));
    expect(done2.at(-1)).toMatchObject({ type: 'done' });
    expect(await agent.pendingApprovals(threadId)).toEqual([]);
  });

  it('supersedes a pending approval when a new message arrives, and the thread stays usable', async () => {
    const threadId = newThread();
    const postsBefore = posts().length;
    await collect(agent.run({ threadId, text: 'deploy checkout-api 2.4.1 to staging', ...admin }));
    expect(await agent.pendingApprovals(threadId)).toHaveLength(1);
    const events = await collect(agent.run({ threadId, text: "what's the health of payments-api", ...admin }));
    expect(shape(events)).toEqual(['tool_start', 'tool_end', 'token', 'done']);
    expect(await agent.pendingApprovals(threadId)).toEqual([]);
    expect(posts().length).toBe(postsBefore);
  });

  it('keeps a finished sibling\'s result when a mixed batch is superseded', async () => {
    const threadId = newThread();
    await collect(agent.run({ threadId, text: 'deploy checkout-api 2.4.1 to staging; list maintenance events', ...admin }));
    await collect(agent.run({ threadId, text: 'hello', ...admin }));
    const tuple = await saver.getTuple({ configurable: { thread_id: threadId, checkpoint_ns: '' } });
    const tools = (tuple!.checkpoint.channel_values.messages as Array<{ name?: string; content: unknown; tool_call_id?: string }>).filter((m) => m.tool_call_id);
    expect(tools.map((m) => [m.name, String(m.content).includes('SUPERSEDED'), String(m.content).includes('kernel patch')])).toEqual(
      expect.arrayContaining([['deploy_service', true, false], ['list_maintenance_events', false, true]]),
    );
    expect(tools).toHaveLength(2);
  });

  it('asks for missing arguments, then acts on the reply', async () => {
    const threadId = newThread();
    const q = await collect(agent.run({ threadId, text: 'deploy checkout-api', ...admin }));
    expect(done(q).text).toBe('To deploy checkout-api, I still need which version and which environment (for example staging or production). Could you tell me?');
    const r = await collect(agent.run({ threadId, text: '2.4.1 to staging', ...admin }));
    expect((r.at(-1) as Extract<AgentEvent, { type: 'approval_required' }>).approvals[0].args).toEqual({ service: 'checkout-api', version: '2.4.1', environment: 'staging' });
  });

  it('survives a gateway restart between the pause and the approval (new saver, new runtime)', async () => {
    const threadId = newThread();
    await collect(agent.run({ threadId, text: 'end the maintenance on db-primary', ...admin }));
    const saver2 = PostgresSaver.fromConnString(db.url, { schema: db.schema });
    try {
      const agent2 = await makeRuntime(model.baseUrl, saver2);
      const [approval] = await agent2.pendingApprovals(threadId);
      const events = await collect(agent2.resume({ threadId, decisions: { [approval.interruptId]: { approved: true } }, ...admin }));
      expect(done(events).text).toBe('Done: the maintenance on db-primary has ended.');
    } finally {
      await saver2.end();
    }
  });

  it('never stores the user token in the checkpoint tables', async () => {
    const text: Record<string, string> = {
      checkpoints: "checkpoint::text || metadata::text",
      checkpoint_blobs: "coalesce(encode(blob, 'escape'), '')",
      checkpoint_writes: "encode(blob, 'escape')",
    };
    const count = async (table: string, needle: string) =>
      (await db.pool.query(`SELECT count(*)::int AS n FROM ${db.schema}.${table} WHERE position($1 in ${text[table]}) > 0`, [needle])).rows[0].n as number;
    // Control: the conversation itself is there, so the search can see inside the blobs.
    expect((await count('checkpoint_blobs', 'checkout-api')) + (await count('checkpoint_writes', 'checkout-api'))).toBeGreaterThan(0);
    for (const table of Object.keys(text)) expect(await count(table, 'user-admin'), table).toBe(0);
  });
});

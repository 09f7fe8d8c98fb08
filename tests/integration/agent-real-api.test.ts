/**
 * The agent against the real backend API (server/api via startTestServer, roles ['api']): the tool
 * paths, dual identity, RBAC and response shapes as built, with the offline model over HTTP.
 */
import { PostgresSaver } from '@langchain/langgraph-checkpoint-postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAgentRuntime, type AgentEvent, type AgentRuntime } from '../../server/agent/index.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { collect, shape, startOfflineModel } from './agent-fixtures.ts';

let db: TestDatabase;
let saver: PostgresSaver;
let api: TestServer;
let model: Awaited<ReturnType<typeof startOfflineModel>>;
let agent: AgentRuntime;
const tokens: Record<string, string> = {};
let thread = 0;

async function login(username: string): Promise<string> {
  const r = await fetch(`${api.url}/api/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ username, password: 'demo-password-1' }),
  });
  expect(r.status).toBe(200);
  return ((await r.json()) as { access_token: string }).access_token;
}

const as = (role: string) => ({ threadId: `real-${++thread}`, userToken: tokens[role], conversationId: `00000000-0000-4000-8000-00000000000${thread % 10}` });
const done = (events: AgentEvent[]) => (events.at(-1) as Extract<AgentEvent, { type: 'done' }>).text;
const approvalsOf = (events: AgentEvent[]) => (events.at(-1) as Extract<AgentEvent, { type: 'approval_required' }>).approvals;

beforeAll(async () => {
  db = await createTestDatabase();
  api = await startTestServer({ db, roles: ['api'] });
  saver = PostgresSaver.fromConnString(db.url, { schema: db.schema });
  await saver.setup();
  model = await startOfflineModel(0);
  agent = await createAgentRuntime({
    model: { baseUrl: model.baseUrl, apiKey: 'offline', name: 'airlock-offline-1', timeoutMs: 5_000, maxRetries: 1 },
    apiUrl: () => api.url,
    serviceCredentials: { clientId: api.config.service.clientId, clientSecret: api.config.service.clientSecret },
    checkpointer: saver,
  });
  for (const role of ['viewer', 'operator', 'admin']) tokens[role] = await login(role);
});
afterAll(async () => {
  await saver?.end();
  await model?.app.close();
  await api?.close();
  await db?.drop();
});

describe('agent against the real api', () => {
  it.each([
    ['what can you do?', 'show_capabilities', /^Here is what I can do for you \(you are viewer, role viewer\):\n\n\| tool \| allowed \| description \|/],
    ['search dashboards for latency', 'search_dashboards', /^Dashboards matching “latency”:\n\n\| id \| title \|[^]*\n\| payments-latency \| Payments API latency \|/],
    ["what's the health of payments-api", 'check_health', /^payments-api is healthy \(p95 latency 182 ms, error rate 0.12 %, 30-day uptime 99.982 %\)\.$/],
    ['tell me about the staging environment', 'get_environment', /^\*\*staging\*\*: Pre-production mirror of production, nightly data refresh \(region eu-west-1, cluster stg-eks-01/],
    ['list deployments of checkout-api', 'list_deployments', /^Recent deployments:\n\n\| id \| service \| version \|/],
    ['list maintenance events', 'list_maintenance_events', /^Maintenance events:\n\n/],
    ['get dashboard payments-latency', 'get_dashboard', /^\*\*Payments API latency\*\*: p50\/p95\/p99 latency .*\n\n\| unit \| title \|\n\| --- \| --- \|\n\| ms \| p95 latency \|/],
  ])('%s -> %s', async (text, tool, answer) => {
    const events = await collect(agent.run({ ...as('viewer'), text }));
    expect(shape(events)).toEqual(['tool_start', 'tool_end', 'token', 'done']);
    expect(events[0]).toMatchObject({ type: 'tool_start', tool });
    expect(done(events)).toMatch(answer);
  });

  it('deploys as admin after approval, exactly once', async () => {
    const who = as('admin');
    // 1. Pause.
    const [approval] = approvalsOf(await collect(agent.run({ ...who, text: 'deploy checkout-api 2.4.1 to staging' })));
    // 2. Approve: the real api deploys.
    const events = await collect(agent.resume({ ...who, decisions: { [approval.interruptId]: { approved: true } } }));
    expect(shape(events)).toEqual(['tool_start', 'tool_end', 'token', 'done']);
    expect(done(events)).toMatch(/^Done: checkout-api 2.4.1 is deploying to staging/);
    // 3. The deployment is there once, under the tool call id.
    const { rows } = await db.pool.query(`SELECT count(*)::int AS n FROM deployments WHERE service = 'checkout-api' AND version = '2.4.1'`);
    expect(rows[0].n).toBe(1);
  });

  it('runs maintenance start and end as operator', async () => {
    const who = as('operator');
    const [start] = approvalsOf(await collect(agent.run({ ...who, text: 'start maintenance on db-primary for 30 minutes because of a disk upgrade' })));
    expect(done(await collect(agent.resume({ ...who, decisions: { [start.interruptId]: { approved: true } } })))).toBe(
      'Done: maintenance started on db-primary for 30 minutes (disk upgrade).',
    );
    const [end] = approvalsOf(await collect(agent.run({ ...who, text: 'end the maintenance on db-primary' })));
    expect(done(await collect(agent.resume({ ...who, decisions: { [end.interruptId]: { approved: true } } })))).toBe('Done: the maintenance on db-primary has ended.');
  });

  it('creates a task as operator', async () => {
    const events = await collect(agent.run({ ...as('operator'), text: 'create a task to rotate the db-primary credentials' }));
    expect(done(events)).toMatch(/^Created the task “rotate the db-primary credentials” \(id /);
  });

  it('gives a viewer FORBIDDEN for deploy and maintenance without a prompt', async () => {
    for (const text of ['deploy checkout-api 2.4.1 to staging', 'start maintenance on db-primary for 30 minutes because of a disk upgrade']) {
      const events = await collect(agent.run({ ...as('viewer'), text }));
      expect(shape(events)).toEqual(['tool_start', 'tool_error', 'token', 'done']);
      expect(events[1]).toMatchObject({ code: 'FORBIDDEN' });
    }
  });

  it('answers NOT_FOUND for an unknown service', async () => {
    const events = await collect(agent.run({ ...as('viewer'), text: 'what is the health of nope-service' }));
    expect(events[1]).toMatchObject({ type: 'tool_error', code: 'NOT_FOUND' });
    expect(done(events)).toBe('I could not check the health of nope-service: Unknown service "nope-service".');
  });
});

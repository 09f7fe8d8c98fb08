/**
 * Operations over real HTTP (issue 11 part B): /api/agent/v1/health and /ready, the Prometheus
 * text of GET /metrics parsed after real /chat turns (@gradio/client), the fastreact.metrics.v1
 * summary, and a bad POLICY_FILE stopping a real main process with one line naming the line.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Client } from '@gradio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chat, collect, connectChat, login, serviceToken } from '../helpers/chat-client.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';
import { runMainToExit } from '../helpers/main-process.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';

let db: TestDatabase;
let server: TestServer;
let broken: TestServer;
let dir: string;
const clients: Client[] = [];

const connect = async (url: string, user: string) => {
  const c = await connectChat(url, await login(url, user));
  clients.push(c);
  return c;
};

interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** The Prometheus text exposition format, line by line: `# HELP`/`# TYPE`, then `name{labels} value`. */
function parsePrometheus(text: string): { samples: Sample[]; types: Record<string, string> } {
  const samples: Sample[] = [];
  const types: Record<string, string> = {};
  for (const line of text.split('\n')) {
    if (!line.trim()) continue;
    const type = /^# TYPE (\S+) (\S+)$/.exec(line);
    if (type) types[type[1]] = type[2];
    if (line.startsWith('#')) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)(?: \d+)?$/.exec(line);
    if (!m) throw new Error(`not a Prometheus sample line: ${line}`);
    const labels = Object.fromEntries([...(m[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((l) => [l[1], l[2]]));
    samples.push({ name: m[1], labels, value: Number(m[3]) });
  }
  return { samples, types };
}

const sample = (samples: Sample[], name: string, labels: Record<string, string> = {}) =>
  samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v)).reduce((n, s) => n + s.value, 0);

async function scrape(url: string): Promise<ReturnType<typeof parsePrometheus>> {
  const res = await fetch(`${url}/metrics`, { headers: { authorization: `Bearer ${await serviceToken(url)}` } });
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
  return parsePrometheus(await res.text());
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'airlock-ops-'));
  await writeFile(join(dir, 'tools.yaml'), 'servers:\n  - name: nowhere\n    url: http://127.0.0.1:9/mcp\n');
  db = await createTestDatabase();
  server = await startTestServer({ db });
  // A model endpoint nobody listens on, and an MCP server that is down.
  broken = await startTestServer({ db, env: { OPENAI_BASE_URL: 'http://127.0.0.1:9/v1', OPENAI_MAX_RETRIES: '0', TOOLS_FILE: join(dir, 'tools.yaml'), MCP_TIMEOUT_MS: '2000' } });
});

afterAll(async () => {
  for (const c of clients) c.close();
  await server?.close();
  await broken?.close();
  await db?.drop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('GET /api/agent/v1/health', () => {
  it('is public and names the contract', async () => {
    const res = await fetch(`${server.url}/api/agent/v1/health`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ status: 'ok', service_contract: 'fastreact.agent_event.v1', contract_version: 'v1', agent_ready: true });
  });
});

describe('GET /api/agent/v1/ready', () => {
  it('with the service token: database, model, tools and MCP servers, each with its status', async () => {
    const res = await fetch(`${server.url}/api/agent/v1/ready`, { headers: { authorization: `Bearer ${await serviceToken(server.url)}` } });
    expect(res.status).toBe(200);
    const body = await res.json();
    expect(body).toMatchObject({
      ready: true, agent_ready: true, service_contract: 'fastreact.agent_event.v1', auth: { required: true },
      database: { status: 'up' },
      model: { name: 'airlock-offline-1', offline: true, api_base_configured: false, status: 'up' },
      tools: { status: 'up', count: 11, mcp: [] }, // the agent's 11 operations (list_tasks is api-only)
      mcp: { ready: true, servers: [], tools: [] },
    });
    expect(body.tools.builtin).toContain('deploy_service');
  });

  it('a dead model endpoint makes it 503; a down MCP server is listed with its reason', async () => {
    const res = await fetch(`${broken.url}/api/agent/v1/ready`, { headers: { authorization: `Bearer ${await serviceToken(broken.url)}` } });
    expect(res.status).toBe(503);
    const body = await res.json();
    expect(body).toMatchObject({ ready: false, database: { status: 'up' }, model: { status: 'down', api_base_configured: true }, mcp: { ready: false } });
    expect(body.model.error).toMatch(/fetch failed|ECONNREFUSED|no answer/);
    expect(body.mcp.servers).toEqual([expect.objectContaining({ name: 'nowhere', transport: 'http', alive: false, status: 'down' })]);
    expect(body.mcp.servers[0].last_error).toMatch(/connect failed/);
  });

  it('refuses anyone without the service token, in the v1 error shape', async () => {
    const none = await fetch(`${server.url}/api/agent/v1/ready`);
    expect(none.status).toBe(401);
    expect(await none.json()).toEqual({ type: 'error', error: { code: 'UNAUTHORIZED', message: 'The service token is required (Authorization: Bearer or X-FastReAct-Service-Token).' } });
    const user = await fetch(`${server.url}/api/agent/v1/ready`, { headers: { authorization: `Bearer ${await login(server.url, 'admin')}` } });
    expect(user.status).toBe(401);
  });
});

describe('GET /metrics (Prometheus text)', () => {
  it('after real chat turns: time to first token, runs, tools, approvals and open streams', async () => {
    const before = await scrape(server.url);
    const admin = await connect(server.url, 'admin');
    let midStream = -1;
    const turn = await collect(chat(admin, "what's the health of payments-api"), async (_m, index) => {
      if (index === 0) midStream = sample((await scrape(server.url)).samples, 'airlock_open_streams', { kind: 'run' });
    });
    expect(turn.status).toBe('complete');
    expect(midStream).toBeGreaterThanOrEqual(1);

    // an approval, confirmed: the wait is measured
    const paused = await collect(chat(admin, 'deploy checkout-api 2.4.1 to staging'));
    const id = paused.final!.metadata.conversation_id;
    expect(paused.types).toContain('confirm_required');
    expect((await collect(chat(admin, 'confirm', id, 'confirm'))).types).toContain('tool_end');
    // the approved call's audit row says what routed it through an approval (its preview, read before
    // the card, is audited as outcome preview: issue 27)
    const deployRow = (await db.pool.query(`SELECT outcome, policy_action, policy_scope FROM audit_log WHERE operation = 'deploy_service' AND conversation_id = $1 AND outcome <> 'preview'`, [id])).rows;
    expect(deployRow).toEqual([{ outcome: 'success', policy_action: 'require_approval', policy_scope: 'builtin' }]);

    const after = await scrape(server.url);
    const delta = (name: string, labels: Record<string, string> = {}) => sample(after.samples, name, labels) - sample(before.samples, name, labels);
    expect(after.types).toMatchObject({
      airlock_time_to_first_token_seconds: 'histogram', airlock_run_duration_seconds: 'histogram', airlock_tool_duration_seconds: 'histogram',
      airlock_approval_wait_seconds: 'histogram', airlock_runs_total: 'counter', airlock_approvals_total: 'counter', airlock_errors_total: 'counter',
      airlock_open_streams: 'gauge', airlock_running_runs: 'gauge',
    });
    expect(delta('airlock_time_to_first_token_seconds_count')).toBeGreaterThanOrEqual(2);
    expect(sample(after.samples, 'airlock_time_to_first_token_seconds_sum')).toBeGreaterThan(0);
    expect(delta('airlock_runs_total', { status: 'completed' })).toBe(2);
    expect(delta('airlock_runs_total', { status: 'awaiting_approval' })).toBe(1);
    expect(delta('airlock_tool_duration_seconds_count', { tool: 'check_health' })).toBe(1);
    expect(delta('airlock_tool_duration_seconds_count', { tool: 'deploy_service' })).toBe(1);
    expect(delta('airlock_approvals_total', { result: 'requested' })).toBe(1);
    expect(delta('airlock_approvals_total', { result: 'confirmed' })).toBe(1);
    // the wait is observed from the row once the resolution commits
    let wait = 0;
    for (let i = 0; i < 50 && wait < 1; i++) wait = sample((await scrape(server.url)).samples, 'airlock_approval_wait_seconds_count', { result: 'confirmed' }) - sample(before.samples, 'airlock_approval_wait_seconds_count', { result: 'confirmed' });
    expect(wait).toBe(1);
    expect(delta('airlock_tool_calls_total', { action: 'allow' })).toBe(1);
    expect(delta('airlock_tool_calls_total', { action: 'require_approval' })).toBe(1);
    // every follower has gone: nothing runs, no stream is open (bounded poll: ends are asynchronous)
    let open = -1;
    for (let i = 0; i < 50 && open !== 0; i++) open = sample((await scrape(server.url)).samples, 'airlock_open_streams', { kind: 'run' });
    expect(open).toBe(0);

    // a conversation event stream (server/events) is counted while it is open
    const token = await login(server.url, 'admin');
    const gone = new AbortController();
    const res = await fetch(`${server.url}/api/agent/conversations/${id}/events/stream`, { headers: { authorization: `Bearer ${token}` }, signal: gone.signal });
    expect(res.status).toBe(200);
    await res.body!.getReader().read(); // ": open"
    expect(sample((await scrape(server.url)).samples, 'airlock_open_streams', { kind: 'conversation' })).toBe(1);
    gone.abort();
    let conversations = -1;
    for (let i = 0; i < 50 && conversations !== 0; i++) conversations = sample((await scrape(server.url)).samples, 'airlock_open_streams', { kind: 'conversation' });
    expect(conversations).toBe(0);
    expect(sample(after.samples, 'airlock_running_runs')).toBe(0);
    expect(after.samples.some((s) => s.name.startsWith('airlock_process_'))).toBe(true);
  });

  it('a failed run counts its error code', async () => {
    const before = sample((await scrape(broken.url)).samples, 'airlock_errors_total', { source: 'run', code: 'LLM_UNAVAILABLE' });
    const turn = await collect(chat(await connect(broken.url, 'admin'), 'hello'));
    expect(turn.types).toContain('error');
    const after = await scrape(broken.url);
    expect(sample(after.samples, 'airlock_errors_total', { source: 'run', code: 'LLM_UNAVAILABLE' }) - before).toBe(1);
  });

  it('needs the service token', async () => {
    expect((await fetch(`${server.url}/metrics`)).status).toBe(401);
    expect((await fetch(`${server.url}/metrics`, { headers: { authorization: `Bearer ${await login(server.url, 'admin')}` } })).status).toBe(401);
  });
});

describe('GET /api/agent/v1/metrics (fastreact.metrics.v1)', () => {
  it('summarises runs, events, tools, approvals and errors from the database', async () => {
    const res = await fetch(`${server.url}/api/agent/v1/metrics`, { headers: { authorization: `Bearer ${await serviceToken(server.url)}` } });
    expect(res.status).toBe(200);
    const body = await res.json();
    expect(body.schema).toBe('fastreact.metrics.v1');
    expect(body.runs.status_counts.completed).toBeGreaterThanOrEqual(2);
    expect(body.runs.status_counts.failed).toBeGreaterThanOrEqual(1);
    expect(body.runs.trace_count).toBe(Object.values(body.runs.status_counts as Record<string, number>).reduce((a, b) => a + b, 0));
    expect(body.runs.avg_duration_ms).toBeGreaterThanOrEqual(0);
    expect(body.events.total_count).toBeGreaterThan(body.events.error_count);
    expect(body.tools.audit_count).toBeGreaterThanOrEqual(2);
    expect(body.approvals.status_counts.approved).toBeGreaterThanOrEqual(1);
    expect(body.approvals.avg_resolution_ms).toBeGreaterThanOrEqual(0);
    expect(body.errors.recent[0]).toMatchObject({ source: 'run', code: 'LLM_UNAVAILABLE' });
    expect(body.store.backend).toBe('postgresql');
    expect((await fetch(`${server.url}/api/agent/v1/metrics`)).status).toBe(401);
  });
});

describe('a bad POLICY_FILE stops the start', () => {
  it('with one line naming the file and the line', async () => {
    const file = join(dir, 'bad-policy.yaml');
    await writeFile(file, 'policy:\n  default_action: caution\n  tool_rules:\n    deploy_service: maybe\n');
    // Before the database is touched: an unreachable DATABASE_URL proves the file is read first.
    const result = await runMainToExit(join(dir, 'data'), { DATABASE_URL: 'postgres://nobody@127.0.0.1:9/none', POLICY_FILE: file, SERVICE_CLIENT_SECRET: 'test-service-secret-0123456789' });
    expect(result.code).toBe(1);
    const lines = result.stderr.trim().split('\n');
    expect(lines).toEqual([
      `Airlock cannot start: the policy file ${file} line 4: tool_rules.deploy_service: expected one of allow, caution, require_approval, deny, or a rule {action, when?, approvals?, …}, or a list of them. Fix it or unset POLICY_FILE.`,
    ]);
  });
});

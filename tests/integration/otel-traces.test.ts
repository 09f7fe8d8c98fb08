/**
 * OpenTelemetry traces (issue 28 item 5) of one full run with an approval, exported by the real
 * gateway process over OTLP/HTTP JSON to a receiver inside the test: the span names, their parent
 * links and their attributes, and the W3C traceparent the backend API call carried (a recording
 * proxy sits between the gateway and the api process), and on an MCP tool's HTTP call (a recording
 * MCP server). The gateway is stopped (SIGTERM) before the
 * spans are read: its shutdown exports what the batch processor still holds, so nothing is timed.
 */
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chat, collect, connectChat, login } from '../helpers/chat-client.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';
import { startMain, type MainProcess } from '../helpers/main-process.ts';
import { startRecordingMcp, type RecordingMcp } from '../helpers/recording-mcp.ts';
import { guarded } from '../helpers/guarded-handler.ts';

const SECRET = 'otel-secret-0123456789abcdef';

/** One exported span, as the OTLP JSON encoding gives it, with its attributes as a plain object. */
interface ExportedSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  startMs: number;
  endMs: number;
  attributes: Record<string, unknown>;
  links: Array<{ traceId: string; spanId: string }>;
  status: { code?: number; message?: string };
  resource: Record<string, unknown>;
}

type KeyValue = { key: string; value: Record<string, unknown> };

function valueOf(v: Record<string, unknown>): unknown {
  if ('stringValue' in v) return v.stringValue;
  if ('intValue' in v) return Number(v.intValue);
  if ('doubleValue' in v) return Number(v.doubleValue);
  if ('boolValue' in v) return v.boolValue;
  if ('arrayValue' in v) return ((v.arrayValue as { values?: Array<Record<string, unknown>> }).values ?? []).map(valueOf);
  return undefined;
}

const attributesOf = (list: KeyValue[] | undefined) => Object.fromEntries((list ?? []).map((a) => [a.key, valueOf(a.value)]));
const nanosToMs = (n: unknown) => Number(BigInt(String(n)) / 1_000_000n);

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/** The OTLP/HTTP JSON receiver: POST /v1/traces. */
function startReceiver(spans: ExportedSpan[], contentTypes: string[]): Promise<Server> {
  const server = createServer(guarded(async (req, res) => {
    const body = await readBody(req);
    if (req.method !== 'POST' || req.url !== '/v1/traces') return void res.writeHead(404).end();
    contentTypes.push(String(req.headers['content-type']));
    const payload = JSON.parse(body) as { resourceSpans: Array<{ resource?: { attributes?: KeyValue[] }; scopeSpans: Array<{ spans: Array<Record<string, unknown>> }> }> };
    for (const rs of payload.resourceSpans) {
      const resource = attributesOf(rs.resource?.attributes);
      for (const ss of rs.scopeSpans) {
        for (const s of ss.spans) {
          spans.push({
            traceId: s.traceId as string, spanId: s.spanId as string, parentSpanId: (s.parentSpanId as string) || undefined, name: s.name as string, kind: s.kind as number,
            startMs: nanosToMs(s.startTimeUnixNano), endMs: nanosToMs(s.endTimeUnixNano), attributes: attributesOf(s.attributes as KeyValue[]),
            links: ((s.links as Array<{ traceId: string; spanId: string }>) ?? []).map((l) => ({ traceId: l.traceId, spanId: l.spanId })),
            status: (s.status as ExportedSpan['status']) ?? {}, resource,
          });
        }
      }
    }
    res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
  }));
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

/** A proxy in front of the api that records each request's method, path and traceparent. */
function startRecordingProxy(target: () => string, seen: Array<{ method: string; path: string; traceparent?: string }>): Promise<Server> {
  const server = createServer(guarded(async (req, res) => {
    const body = await readBody(req);
    seen.push({ method: req.method!, path: req.url!, traceparent: req.headers.traceparent as string | undefined });
    const headers = Object.fromEntries(Object.entries(req.headers).filter(([k]) => !['host', 'connection', 'content-length'].includes(k))) as Record<string, string>;
    const upstream = await fetch(`${target()}${req.url}`, { method: req.method, headers, body: body || undefined });
    res.writeHead(upstream.status, { 'content-type': upstream.headers.get('content-type') ?? 'application/json' }).end(Buffer.from(await upstream.arrayBuffer()));
  }));
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

const urlOf = (server: Server) => `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

let db: TestDatabase;
let dataDir: string;
let api: MainProcess;
let gateway: MainProcess;
let receiver: Server;
let proxy: Server;
let mcp: RecordingMcp;
const spans: ExportedSpan[] = [];
const contentTypes: string[] = [];
const apiCalls: Array<{ method: string; path: string; traceparent?: string }> = [];
let conversationId = '';
let approvalId = '';
let tool = '';

beforeAll(async () => {
  db = await createTestDatabase();
  dataDir = await mkdtemp(join(tmpdir(), 'airlock-otel-'));
  api = await startMain(['--role', 'api'], { DATABASE_URL: db.url, DATA_DIR: dataDir, SERVICE_CLIENT_SECRET: SECRET });
  receiver = await startReceiver(spans, contentTypes);
  proxy = await startRecordingProxy(() => api.url, apiCalls);
  mcp = await startRecordingMcp(() => {
    const server = new McpServer({ name: 'ident', version: '1.0.0' });
    server.registerTool('whoami', { description: 'Tell who is calling this identity service.', annotations: { readOnlyHint: true } }, async () => ({ content: [{ type: 'text', text: 'ident says hi' }] }));
    return server;
  });
  const toolsFile = join(dataDir, 'tools.yaml');
  await writeFile(toolsFile, ['servers:', '  - name: ident', `    url: ${mcp.url}/mcp`].join('\n'));
  gateway = await startMain(['--role', 'gateway'], {
    DATABASE_URL: db.url, DATA_DIR: dataDir, SERVICE_CLIENT_SECRET: SECRET, API_URL: urlOf(proxy), TOOLS_FILE: toolsFile,
    OTEL_EXPORTER_OTLP_ENDPOINT: urlOf(receiver), OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json', OTEL_SERVICE_NAME: 'airlock-under-test',
  });
  const token = await login(api.url, 'admin');
  await mcpServerUp(gateway.url, token);
  const client = await connectChat(gateway.url, token);
  const asked = await collect(chat(client, 'whoami on the ident service'));
  expect(asked.messages.some((m) => m.metadata.type === 'tool_end' && m.metadata.tool === 'ident_whoami')).toBe(true);
  const pause = await collect(chat(client, 'deploy checkout-api 4.2.0 to staging'));
  expect(pause.final!.metadata.type).toBe('confirm_required');
  ({ conversation_id: conversationId, approval_id: approvalId, tool } = pause.final!.metadata as Record<string, string>);
  const done = await collect(client.submit('/chat', { message: 'confirm', conversation_id: conversationId, action: 'confirm', approval_id: approvalId }));
  expect(done.messages.some((m) => m.metadata.type === 'tool_end' && m.metadata.tool === tool)).toBe(true);
  client.close();
  await gateway.stop(); // its shutdown exports the spans still batched
}, 180_000);

afterAll(async () => {
  await gateway?.stop();
  await api?.stop();
  receiver?.close();
  proxy?.close();
  await mcp?.close();
  await db?.drop();
  await rm(dataDir, { recursive: true, force: true });
});

/** Until the gateway's first connect to the MCP server has ended (the start does not wait for it). */
async function mcpServerUp(url: string, token: string): Promise<void> {
  for (;;) {
    const res = await fetch(`${url}/api/agent/tools/servers`, { headers: { authorization: `Bearer ${token}` } });
    const body = (await res.json()) as { servers?: Array<{ name: string; status: string }> };
    const status = body.servers?.find((s) => s.name === 'ident')?.status;
    if (status && status !== 'connecting') return void expect(status).toBe('up');
    await new Promise((r) => setTimeout(r, 50));
  }
}

const named = (name: string) => spans.filter((s) => s.name === name);
/** The two turns of the approval's conversation: the pause, then the decision. */
const approvalTurns = () => named('invoke_agent airlock').filter((s) => s.attributes['gen_ai.conversation.id'] === conversationId);
const byId = (id: string | undefined) => spans.find((s) => s.spanId === id);

describe('OpenTelemetry traces of a run with an approval (OTLP/HTTP JSON)', () => {
  it('exports JSON to /v1/traces with the service name of OTEL_SERVICE_NAME', () => {
    expect(contentTypes.length).toBeGreaterThan(0);
    expect(contentTypes.every((t) => t.startsWith('application/json'))).toBe(true);
    expect(spans.every((s) => s.resource['service.name'] === 'airlock-under-test')).toBe(true);
  });

  it('one invoke_agent span per turn, roots of their own traces: the pause, then the decision', () => {
    const turns = approvalTurns();
    expect(turns.map((t) => [t.attributes['airlock.turn.kind'], t.attributes['airlock.run.status']])).toEqual([['message', 'paused'], ['decision', 'done']]);
    for (const turn of turns) {
      expect(turn.parentSpanId).toBeUndefined();
      expect(turn.attributes).toMatchObject({ 'gen_ai.operation.name': 'invoke_agent', 'gen_ai.agent.name': 'airlock' });
      expect(turn.attributes['airlock.run.id']).toEqual(expect.any(String));
    }
    expect(turns[0].traceId).not.toBe(turns[1].traceId);
  });

  it('model calls, tool calls (with their source) and ledger commits are children of their turn', () => {
    const [pause, decision] = approvalTurns();
    const models = spans.filter((s) => s.name.startsWith('chat ') && s.attributes['gen_ai.conversation.id'] === conversationId);
    expect(models.length).toBeGreaterThanOrEqual(2);
    for (const m of models) {
      expect(m.name).toBe(`chat ${m.attributes['gen_ai.request.model']}`);
      expect(m.kind).toBe(3); // CLIENT
      expect(m.attributes).toMatchObject({ 'gen_ai.operation.name': 'chat', 'gen_ai.conversation.id': conversationId });
      expect([pause.spanId, decision.spanId]).toContain(m.parentSpanId);
    }
    const calls = named(`execute_tool ${tool}`);
    expect(calls.map((c) => byId(c.parentSpanId)?.attributes['airlock.turn.kind'])).toEqual(['message', 'decision']);
    expect(calls[0].attributes['airlock.tool.paused']).toBe(true); // it paused for the approval
    expect(calls[1].attributes['airlock.tool.paused']).toBeUndefined();
    for (const c of calls) expect(c.attributes).toMatchObject({ 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': tool, 'airlock.tool.source': 'builtin', 'gen_ai.tool.call.id': expect.any(String) });
    const commits = named('airlock.ledger.commit').filter((c) => [pause.spanId, decision.spanId].includes(c.parentSpanId!));
    expect(commits.length).toBeGreaterThanOrEqual(4);
    for (const c of commits) expect([pause.spanId, decision.spanId]).toContain(c.parentSpanId);
    expect(commits.flatMap((c) => c.attributes['airlock.ledger.kinds'] as string[])).toEqual(expect.arrayContaining(['user.message', 'approval.requested', 'approval.resolved', 'run.finished']));
  });

  it('the approval wait: from its request to its decision, the child of the turn that paused, linked to the deciding turn', async () => {
    const [pause, decision] = approvalTurns();
    const [wait] = named('airlock.approval.wait');
    expect(named('airlock.approval.wait')).toHaveLength(1);
    expect(wait.traceId).toBe(pause.traceId);
    expect(wait.parentSpanId).toBe(pause.spanId);
    expect(wait.links).toEqual([{ traceId: decision.traceId, spanId: decision.spanId }]);
    expect(wait.attributes).toMatchObject({ 'airlock.approval.id': approvalId, 'airlock.approval.outcome': 'approved', 'airlock.approval.reason': 'user_confirmed', 'gen_ai.tool.name': tool });
    const { rows } = await db.pool.query<{ created_at: Date; resolved_at: Date; trace_parent: string }>('SELECT created_at, resolved_at, trace_parent FROM approvals WHERE id = $1', [approvalId]);
    expect(wait.startMs).toBe(rows[0].created_at.getTime());
    expect(wait.endMs).toBe(rows[0].resolved_at.getTime());
    expect(rows[0].trace_parent).toBe(`00-${pause.traceId}-${pause.spanId}-01`);
  });

  it('the backend API call is a client span of the tool call, and its traceparent reached the api', () => {
    const [, resumed] = named(`execute_tool ${tool}`);
    const post = spans.find((s) => s.parentSpanId === resumed.spanId && s.name === 'POST /api/tools/deployments');
    expect(post).toBeDefined();
    expect(post!.kind).toBe(3);
    expect(post!.attributes).toMatchObject({ 'http.request.method': 'POST', 'http.response.status_code': expect.any(Number), 'url.template': '/api/tools/deployments' });
    // The deploy itself (its preview, a dry run of the same route, went before the pause).
    const arrived = apiCalls.filter((c) => c.method === 'POST' && c.path === '/api/tools/deployments');
    expect(arrived.map((c) => c.traceparent)).toEqual([`00-${post!.traceId}-${post!.spanId}-01`]);
    // Every call of a tool carried one, each naming its own client span.
    const toolCalls = apiCalls.filter((c) => c.path.startsWith('/api/tools/'));
    for (const call of toolCalls) {
      const [, traceId, spanId] = call.traceparent!.split('-');
      expect(spans.find((s) => s.traceId === traceId && s.spanId === spanId)?.kind).toBe(3);
    }
  });

  it("an MCP tool's call names its server, and its traceparent reached the MCP server", () => {
    const [call] = named('execute_tool ident_whoami');
    expect(call.attributes).toMatchObject({ 'airlock.tool.source': 'mcp', 'airlock.tool.server': 'ident', 'gen_ai.tool.name': 'ident_whoami' });
    expect(byId(call.parentSpanId)?.name).toBe('invoke_agent airlock');
    const calls = mcp.seen.filter((r) => r.method === 'tools/call');
    expect(calls.map((r) => r.headers.traceparent)).toEqual([`00-${call.traceId}-${call.spanId}-01`]);
  });
});

/**
 * Issue 30, items 8 and 9 (findings 9 and 10), performed against the real server:
 * - NUL from the model or from an MCP tool is cleaned at storage (U+0000 -> U+FFFD): the turn
 *   completes, the stored answer and ledger hold U+FFFD, and the run is finished (before: the turn
 *   failed with INTERNAL, the answer was lost and the run row stayed `running`);
 * - the last 500s are 400s with a taxonomy code: v1 metadata nested 5,000 deep, NUL in v1 content
 *   or in a metadata key, a cursor whose offset is `+15:99`, Gradio `/login` with NUL in the
 *   username, and NUL in `request_id` on /chat and v1. Client input with NUL stays refused.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Client } from '@gradio/client';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startOfflineModelServer } from '../../server/agent/offline-model/server.ts';
import { encodeCursor } from '../../server/api/cursor.ts';
import { chat, collect, connectChat, login } from '../helpers/chat-client.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';
import { startModelProxy, type ModelProxy } from '../helpers/model-proxy.ts';
import { startRecordingMcp, type RecordingMcp } from '../helpers/recording-mcp.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { v1 } from './v1-support.ts';

/** What the fake model streams when the user's message asks for it. */
const NUL_TRIGGER = 'answer with a nul';
const NUL_ANSWER = ['Before', ' the\u0000NUL', ' and after.'];

let db: TestDatabase;
let server: TestServer;
let offline: Awaited<ReturnType<typeof startOfflineModelServer>>;
let model: ModelProxy;
let mcpHttp: RecordingMcp;
let dir: string;
let admin: string;
let client: Client;


/** An OpenAI-compatible model: streams NUL_ANSWER when asked to, else forwards to the offline model. */
async function startModel(target: string): Promise<string> {
  model = await startModelProxy(target, (req, res, raw) => {
    const body = raw.length ? JSON.parse(raw.toString()) : {};
    const lastUser = [...(body.messages ?? [])].reverse().find((m: { role: string }) => m.role === 'user');
    if (!(req.url?.endsWith('/chat/completions') && body.stream && String(lastUser?.content ?? '').includes(NUL_TRIGGER))) return false;
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    const chunk = (delta: object, finish: string | null) =>
      `data: ${JSON.stringify({ id: 'nul-1', object: 'chat.completion.chunk', created: 0, model: body.model, choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
    NUL_ANSWER.forEach((text, i) => res.write(chunk(i === 0 ? { role: 'assistant', content: text } : { content: text }, null)));
    res.end(`${chunk({}, 'stop')}data: [DONE]\n\n`);
    return true;
  });
  return model.url;
}

/** An HTTP MCP server whose tool answers with a NUL in its text. */
async function startMcp(): Promise<string> {
  mcpHttp = await startRecordingMcp(() => {
    const mcp = new McpServer({ name: 'ident', version: '1.0.0' });
    mcp.registerTool('whoami', { description: 'Tell who is calling this identity service.', annotations: { readOnlyHint: true } }, async () => ({
      content: [{ type: 'text', text: 'ident says: nul\u0000here' }],
    }));
    return mcp;
  });
  return `${mcpHttp.url}/mcp`;
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'airlock-nul-'));
  const toolsFile = join(dir, 'tools.yaml');
  await writeFile(toolsFile, ['servers:', '  - name: ident', `    url: ${await startMcp()}`].join('\n'));
  offline = await startOfflineModelServer({ delayMs: 0, modelName: 'airlock-offline-1' });
  const modelUrl = await startModel(offline.baseUrl);
  db = await createTestDatabase();
  server = await startTestServer({ db, env: { TOOLS_FILE: toolsFile, OPENAI_BASE_URL: modelUrl, OPENAI_API_KEY: 'offline', OPENAI_MAX_RETRIES: '0' } });
  admin = await login(server.url, 'admin');
  client = await connectChat(server.url, admin);
});

afterAll(async () => {
  client?.close();
  await server?.close();
  await model?.close();
  await mcpHttp?.close();
  await offline?.close();
  await db?.drop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

async function storedTurn(conversationId: string) {
  const messages = (await db.pool.query('SELECT role, content, metadata FROM messages WHERE conversation_id = $1 ORDER BY seq', [conversationId])).rows;
  const runs = (await db.pool.query('SELECT status FROM runs WHERE conversation_id = $1', [conversationId])).rows.map((r) => r.status);
  const events = (await db.pool.query('SELECT kind, payload::text AS payload FROM conversation_events WHERE conversation_id = $1 ORDER BY seq', [conversationId])).rows;
  return { messages, runs, events };
}

describe('#9 NUL from the model or a tool is cleaned at storage, and the turn completes', () => {
  it('a model answer with NUL: finished run, stored answer with U+FFFD', async () => {
    const turn = await collect(chat(client, `please ${NUL_TRIGGER}`));
    expect(turn.final?.metadata.type).not.toBe('error');
    const conversationId = turn.messages[0].metadata.conversation_id;
    const { messages, runs, events } = await storedTurn(conversationId);
    const answer = messages.find((m) => m.role === 'assistant' && m.content.includes('after.'));
    expect(answer?.content).toBe('Before the\uFFFDNUL and after.');
    expect(runs).toEqual(['done']);
    expect(events.some((e) => e.payload.includes('\uFFFD'))).toBe(true);
    // the conversation is free: the next turn runs
    const next = await collect(chat(client, 'what can you do?', conversationId));
    expect(next.final?.metadata.type).not.toBe('error');
  });

  it('an MCP tool result with NUL: the tool card and the answer are stored, the run finished', async () => {
    const turn = await collect(chat(client, 'whoami on the ident service'));
    expect(turn.types).toContain('tool_end');
    expect(turn.final?.metadata.type).not.toBe('error');
    const conversationId = turn.messages[0].metadata.conversation_id;
    const { messages, runs } = await storedTurn(conversationId);
    expect(JSON.stringify(messages)).toContain('nul\uFFFDhere');
    expect(JSON.stringify(messages)).not.toContain('\\u0000');
    expect(runs).toEqual(['done']);
  });

  it('the same answer through v1: the run completes with U+FFFD in its content', async () => {
    const res = await v1(server.url, '/chat/completions', { token: admin, body: { messages: [{ role: 'user', content: `please ${NUL_TRIGGER}` }] } });
    expect(res.status).toBe(200);
    // the live answer is what the model said; only storage cleans it
    expect(res.body).toMatchObject({ status: 'completed', content: expect.stringMatching(/^Before the[\u0000\uFFFD]NUL and after\.$/) });
    const { runs } = await storedTurn(res.body.session_id);
    expect(runs).toEqual(['done']);
    expect((await v1(server.url, `/runs/${res.body.run_id}`, { token: admin })).body).toMatchObject({ status: 'completed', content: 'Before the\uFFFDNUL and after.' });
  });

  it('client text with NUL is still refused (VALIDATION_ERROR), not cleaned', async () => {
    const turn = await collect(chat(client, 'hi\u0000there'));
    expect(turn.final?.metadata).toMatchObject({ type: 'error', code: 'VALIDATION_ERROR' });
  });
});

describe('#10 the remaining 500s are 400 with a taxonomy code', () => {
  const completion = (body: Record<string, unknown>) => v1(server.url, '/chat/completions', { token: admin, body: { messages: [{ role: 'user', content: 'hello' }], ...body } });

  it('v1: metadata nested 5,000 deep', async () => {
    const raw = `{"messages":[{"role":"user","content":"deep"}],"metadata":{"d":${'{"d":'.repeat(5_000)}1${'}'.repeat(5_000)}}}`;
    for (const path of ['/chat/completions', '/runs']) {
      const res = await fetch(`${server.url}/api/agent/v1${path}`, { method: 'POST', headers: { authorization: `Bearer ${admin}`, 'content-type': 'application/json' }, body: raw });
      expect(res.status, path).toBe(400);
      expect((await res.json()).error.code, path).toBe('VALIDATION_ERROR');
    }
  });

  it('v1: metadata 32 levels deep is accepted, 33 is refused', async () => {
    const levels = (n: number) => {
      let v: Record<string, unknown> = {};
      for (let i = 1; i < n; i++) v = { d: v };
      return v;
    };
    const refused = await completion({ metadata: levels(33) });
    expect(refused.status).toBe(400);
    expect(refused.body.error).toMatchObject({ code: 'VALIDATION_ERROR', message: expect.stringMatching(/^metadata\.(d\.){31}d: must not nest deeper than 32 levels$/) });
    expect((await completion({ metadata: levels(32) })).status).toBe(200);
  });

  it.each([
    ['NUL in the content', { messages: [{ role: 'user', content: 'hel\u0000lo' }] }],
    ['NUL in a content part', { messages: [{ role: 'user', content: [{ type: 'text', text: 'hel\u0000lo' }] }] }],
    ['NUL in a metadata key', { metadata: { 'k\u0000ey': 1 } }],
    ['NUL in a metadata value', { metadata: { request_id: 'r\u0000id' } }],
    ['NUL in a system message', { messages: [{ role: 'system', content: 'sys\u0000tem' }, { role: 'user', content: 'hello' }] }],
  ])('v1: %s', async (_name, body) => {
    for (const path of ['/chat/completions', '/runs']) {
      const res = await v1(server.url, path, { token: admin, body: { messages: [{ role: 'user', content: 'hello' }], ...body } });
      expect(res.status, path).toBe(400);
      expect(res.body.error.code, path).toBe('VALIDATION_ERROR');
    }
  });

  it('a cursor whose timestamp offset is +15:99', async () => {
    const cursor = encodeCursor({ u: '2026-01-01 10:00:00+15:99', i: '00000000-0000-4000-8000-000000000000' });
    const res = await fetch(`${server.url}/api/assistant/conversations?cursor=${cursor}`, { headers: { authorization: `Bearer ${admin}` } });
    expect(res.status).toBe(400);
    expect((await res.json()).error.code).toBe('VALIDATION_ERROR');
  });

  it('Gradio /login with NUL in the username', async () => {
    for (const body of [new URLSearchParams({ username: 'ad\u0000min', password: 'x' }), (() => {
      const form = new FormData();
      form.set('username', 'ad\u0000min');
      form.set('password', 'x');
      return form;
    })()]) {
      const res = await fetch(`${server.url}/api/agent/gradio/login`, { method: 'POST', body });
      expect(res.status).toBe(400);
      expect((await res.json()).error.code).toBe('VALIDATION_ERROR');
    }
  });

  it('/chat: NUL in request_id', async () => {
    const turn = await collect(client.submit('/chat', { message: { text: 'hello', files: [] }, request_id: 'r\u0000id' }));
    expect(turn.final?.metadata).toMatchObject({ type: 'error', code: 'VALIDATION_ERROR' });
  });
});

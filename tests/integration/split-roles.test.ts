/**
 * The production layout: api and gateway in separate processes behind the real nginx, sharing
 * PostgreSQL and the service credentials. A chat turn crosses nginx -> gateway -> api.
 */
import { randomUUID } from 'node:crypto';
import { HttpAgent } from '@ag-ui/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chat, collect, connectChat, login } from '../helpers/chat-client.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';
import { startNginx, type NginxInstance } from '../helpers/nginx.ts';
import { startTestServer, testConfig, type TestServer } from '../helpers/server.ts';
import { readSse } from '../helpers/sse.ts';

let db: TestDatabase;
let api: TestServer;
let gateway: TestServer;
let nginx: NginxInstance;

beforeAll(async () => {
  db = await createTestDatabase();
  api = await startTestServer({ db, roles: ['api'] });
  gateway = await startTestServer({ db, roles: ['gateway'], config: testConfig({ API_URL: api.url }) });
  const port = (s: TestServer) => Number(new URL(s.url).port);
  nginx = await startNginx({ web: port(api), api: port(api), gateway: port(gateway) });
});

afterAll(async () => {
  await nginx?.stop();
  await gateway?.close();
  await api?.close();
  await db?.drop();
});

describe('split roles behind nginx', () => {
  it('routes /api/agent/info to the gateway and the rest of /api to the api', async () => {
    const info = await fetch(`${nginx.url}/api/agent/info`);
    expect(info.status).toBe(200);
    expect(await info.json()).toMatchObject({ offline_model: true, approval_timeout_s: 300 });
    expect((await fetch(`${nginx.url}/api/auth/jwks.json`)).status).toBe(200);
    expect((await fetch(`${api.url}/api/agent/info`)).status).toBe(404);
  });

  it('runs a tool call across nginx -> gateway -> api', async () => {
    const client = await connectChat(nginx.url, await login(nginx.url, 'operator'));
    const turn = await collect(chat(client, "what's the health of payments-api"));
    expect(turn.types).toContain('tool_end');
    expect(turn.final!.content).toMatch(/payments-api/);
    client.close();
  });

  it('serves the event ledger and capabilities from the gateway through nginx (SSE resumes with Last-Event-ID)', async () => {
    const token = await login(nginx.url, 'operator');
    const client = await connectChat(nginx.url, token);
    const turn = await collect(chat(client, "what's the health of payments-api"));
    client.close();
    const id = turn.final!.metadata.conversation_id;
    const auth = { authorization: `Bearer ${token}` };
    const page = await (await fetch(`${nginx.url}/api/agent/conversations/${id}/events`, { headers: auth })).json();
    expect(page.events.at(-1)).toMatchObject({ kind: 'run.finished', payload: { status: 'done' } });
    expect((await fetch(`${api.url}/api/agent/conversations/${id}/events`, { headers: auth })).status).toBe(404); // not the api's
    const { contentType, frames } = await readSse(`${nginx.url}/api/agent/conversations/${id}/events/stream`, { ...auth, 'last-event-id': '1' }, (f) => f.event === 'run.finished');
    expect(contentType).toMatch(/^text\/event-stream/);
    expect(frames.filter((f) => f.id !== undefined).map((f) => Number(f.id))).toEqual(page.events.slice(1).map((e: { seq: number }) => e.seq));
    const caps = await fetch(`${nginx.url}/api/agent/v1/capabilities`);
    expect((await caps.json()).apiVersion).toBe('v1');
  });

  it('serves AG-UI from the gateway through nginx: a tool call streamed, an interrupt resumed', async () => {
    const token = await login(nginx.url, 'admin');
    const agent = new HttpAgent({ url: `${nginx.url}/api/agent/ag-ui`, headers: { Authorization: `Bearer ${token}` }, threadId: randomUUID() });
    const types: string[] = [];
    agent.subscribe({ onEvent: ({ event }) => void types.push(event.type) });
    agent.addMessage({ id: randomUUID(), role: 'user', content: 'deploy checkout-api 3.3.3 to staging' });
    await agent.runAgent();
    const [interrupt] = agent.pendingInterrupts;
    expect(interrupt).toMatchObject({ reason: 'tool_approval' });
    await agent.runAgent({ resume: [{ interruptId: interrupt.id, status: 'resolved', payload: { approved: true } }] });
    expect(types.filter((t) => t === 'TOOL_CALL_RESULT')).toHaveLength(1);
    expect(types.at(-1)).toBe('RUN_FINISHED');
    expect((await db.pool.query("SELECT count(*)::int AS n FROM deployments WHERE version = '3.3.3'")).rows[0].n).toBe(1);
    const onApi = await fetch(`${api.url}/api/agent/ag-ui`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: '{}' });
    expect(onApi.status).toBe(404); // not the api's
  });

  it('serves the headless API (a streamed completion, the runs list) from the gateway through nginx', async () => {
    const token = await login(nginx.url, 'viewer');
    const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
    const res = await fetch(`${nginx.url}/api/agent/v1/chat/completions`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ messages: [{ role: 'user', content: "what's the health of payments-api" }], stream: true }),
    });
    expect(res.status).toBe(200);
    const text = await res.text();
    expect(text).toContain('event: session_start');
    expect(text.trimEnd().endsWith('data: [DONE]')).toBe(true);
    const runs = await (await fetch(`${nginx.url}/api/agent/v1/runs`, { headers })).json();
    expect(runs.runs[0]).toMatchObject({ status: 'completed', user_key: 'demo:viewer' });
  });
});

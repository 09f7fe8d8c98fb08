/**
 * Issue 30 finding 12 through the gateway: a model's long answer read with the curl call API
 * (`POST /gradio_api/call/chat`, then `GET …/{event_id}`), whose every event repeats the whole
 * answer. With CALL_STREAM_MAX_BYTES small, the stream ends with `event: error` and code
 * PAYLOAD_TOO_LARGE: never cut with no terminal event, never held past the cap.
 */
import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { login } from '../helpers/chat-client.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { guarded } from '../helpers/guarded-handler.ts';

const CAP = 64 * 1024;
const TOKEN = 'All systems nominal; ';
const TOKENS = 10_000; // a 210 KB answer

let db: TestDatabase;
let server: TestServer;
let model: Server;
let admin: string;

/** An OpenAI-compatible model that answers everything with a long text, token by token. */
async function startModel(): Promise<string> {
  model = createServer(guarded(async (req, res) => {
    let raw = '';
    for await (const chunk of req) raw += chunk;
    if (!req.url?.endsWith('/chat/completions')) return void res.writeHead(404).end();
    const body = JSON.parse(raw);
    const chunk = (delta: object, finish: string | null) =>
      `data: ${JSON.stringify({ id: 'long-1', object: 'chat.completion.chunk', created: 0, model: body.model, choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    for (let i = 0; i < TOKENS && !res.destroyed; i++) {
      if (!res.write(chunk(i === 0 ? { role: 'assistant', content: TOKEN } : { content: TOKEN }, null))) await new Promise((r) => res.once('drain', r));
    }
    res.end(`${chunk({}, 'stop')}data: [DONE]\n\n`);
  }));
  await new Promise<void>((r) => model.listen(0, '127.0.0.1', r));
  return `http://127.0.0.1:${(model.address() as { port: number }).port}/v1`;
}

beforeAll(async () => {
  const modelUrl = await startModel();
  db = await createTestDatabase();
  server = await startTestServer({ db, env: { OPENAI_BASE_URL: modelUrl, OPENAI_API_KEY: 'offline', OPENAI_MAX_RETRIES: '0', CALL_STREAM_MAX_BYTES: String(CAP) } });
  admin = await login(server.url, 'admin');
});
afterAll(async () => {
  await server?.close();
  model?.closeAllConnections();
  await new Promise<void>((r) => (model ? model.close(() => r()) : r()));
  await db?.drop();
});

describe('a long answer over the call API (issue 30 finding 12)', () => {
  it('ends with event: error PAYLOAD_TOO_LARGE past CALL_STREAM_MAX_BYTES', async () => {
    const base = `${server.url}/api/agent/gradio/gradio_api/call/chat`;
    const headers = { authorization: `Bearer ${admin}`, 'content-type': 'application/json' };
    const posted = await fetch(base, { method: 'POST', headers, body: JSON.stringify({ data: [{ text: 'status report please', files: [] }] }) });
    expect(posted.status).toBe(200);
    const { event_id: eventId } = (await posted.json()) as { event_id: string };
    const raw = await (await fetch(`${base}/${eventId}`, { headers: { authorization: headers.authorization } })).text();
    const events = raw
      .split('\n\n')
      .filter((b) => b.startsWith('event: '))
      .map((b) => ({ event: b.slice(7, b.indexOf('\n')), data: b.slice(b.indexOf('\ndata: ') + 7) }));
    expect(events.length).toBeGreaterThan(0);
    const last = events.at(-1)!;
    expect(last.event, raw.slice(-500)).toBe('error');
    expect(JSON.parse(last.data)).toMatchObject({ code: 'PAYLOAD_TOO_LARGE' });
    for (const e of events) expect(Buffer.byteLength(e.data)).toBeLessThanOrEqual(CAP);
  });
});

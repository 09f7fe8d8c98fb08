/**
 * Issue 37 item 9: the MCP server paths refuse DNS rebinding (the MCP transport spec: an invalid
 * Origin gets 403), against the real app: with the real MCP TypeScript client and with raw HTTP
 * requests that set Host and Origin as a rebinding page's browser would (what curl sends). Without
 * PUBLIC_URL only the loopback names are allowed; with it, only its name and origin. A request with
 * no Origin (a CLI client) passes. `/mcp` is served with and without its trailing slash.
 */
import { request as httpRequest } from 'node:http';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { login } from '../helpers/chat-client.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';

let db: TestDatabase;
let local: TestServer;
let pinned: TestServer;
let token: string;

beforeAll(async () => {
  db = await createTestDatabase();
  local = await startTestServer({ db });
  pinned = await startTestServer({ db, env: { PUBLIC_URL: 'https://chat.example.com' } });
  token = await login(local.url, 'admin');
});
afterAll(async () => {
  await local?.close();
  await pinned?.close();
  await db?.drop();
});

const MCP = '/api/agent/gradio/gradio_api/mcp';
const INITIALIZE = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-03-26', capabilities: {}, clientInfo: { name: 'curl', version: '1' } } });

/** One HTTP request with the Host and Origin given (fetch may not set Host): its status and body. */
function raw(server: TestServer, path: string, headers: Record<string, string>, method = 'POST'): Promise<{ status: number; body: string }> {
  const url = new URL(server.url);
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: url.hostname, port: url.port, path: `${MCP}${path}`, method, headers: { authorization: `Bearer ${token}`, ...(method === 'POST' ? { 'content-type': 'application/json', accept: 'application/json, text/event-stream' } : {}), ...headers } }, (res) => {
      // A refusal ends at once; an accepted SSE stream is read no further than its status.
      if (res.statusCode !== 200 || method === 'GET') {
        res.destroy();
        return resolve({ status: res.statusCode ?? 0, body: '' });
      }
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end(method === 'POST' ? INITIALIZE : undefined);
  });
}

const portOf = (server: TestServer) => new URL(server.url).port;

async function listTools(url: string, headers: Record<string, string> = {}): Promise<string[]> {
  const client = new Client({ name: 'origin-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { Authorization: `Bearer ${token}`, ...headers } } }));
  try {
    return (await client.listTools()).tools.map((t) => t.name);
  } finally {
    await client.close();
  }
}

describe('MCP without PUBLIC_URL: loopback names only', () => {
  it('the MCP client works at …/mcp and …/mcp/, with no Origin and with a loopback one', async () => {
    expect(await listTools(`${local.url}${MCP}`)).toEqual(['chat']);
    expect(await listTools(`${local.url}${MCP}/`)).toEqual(['chat']);
    expect(await listTools(`${local.url}${MCP}`, { Origin: `http://localhost:${portOf(local)}` })).toEqual(['chat']);
  });

  it('a foreign Origin is refused with 403 by the client too', async () => {
    await expect(listTools(`${local.url}${MCP}`, { Origin: 'https://evil.example' })).rejects.toMatchObject({ code: 403, message: expect.stringContaining('are refused') });
  });

  it('a foreign Origin gets 403 on every MCP path (streamable, SSE, messages, schema)', async () => {
    const evil = { origin: 'https://evil.example' };
    for (const path of ['', '/', '/http', '/http/', '/messages/?sessionId=x']) expect((await raw(local, path, evil)).status, path).toBe(403);
    for (const path of ['/sse', '/schema']) expect((await raw(local, path, evil, 'GET')).status, path).toBe(403);
  });

  it('DNS rebinding (Host and Origin both the attacker\'s name) gets 403; so do a foreign Host alone and Origin: null', async () => {
    const port = portOf(local);
    expect((await raw(local, '', { host: `evil.example:${port}`, origin: `http://evil.example:${port}` })).status).toBe(403);
    expect((await raw(local, '', { host: `evil.example:${port}` })).status).toBe(403);
    expect((await raw(local, '', { host: `evil@127.0.0.1:${port}` })).status).toBe(403);
    expect((await raw(local, '', { origin: 'null' })).status).toBe(403);
    const refused = await new Promise<string>((resolve) => {
      const url = new URL(local.url);
      httpRequest({ host: url.hostname, port: url.port, path: `${MCP}/`, method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', origin: 'https://evil.example' } }, (res) => {
        let body = '';
        res.on('data', (c) => (body += c));
        res.on('end', () => resolve(body));
      }).end(INITIALIZE);
    });
    expect(JSON.parse(refused)).toMatchObject({ detail: expect.stringMatching(/evil\.example.*refused/) });
  });

  it('no Origin (a CLI client), or a loopback one on any port, passes', async () => {
    const ok = await raw(local, '', {});
    expect(ok.status).toBe(200);
    expect(ok.body).toContain('"serverInfo"');
    expect((await raw(local, '', { host: `localhost:${portOf(local)}`, origin: 'http://127.0.0.1:5173' })).status).toBe(200);
    expect((await raw(local, '/schema', {}, 'GET')).status).toBe(200);
  });
});

describe('MCP with PUBLIC_URL: its name and origin only', () => {
  it('the loopback name is no longer enough; PUBLIC_URL\'s Host and origin pass', async () => {
    expect((await raw(pinned, '', {})).status).toBe(403);
    expect((await raw(pinned, '', { host: 'chat.example.com', origin: `http://localhost:${portOf(pinned)}` })).status).toBe(403);
    expect((await raw(pinned, '', { host: 'chat.example.com', origin: 'http://chat.example.com' })).status).toBe(403);
    expect((await raw(pinned, '', { host: 'chat.example.com', origin: 'https://chat.example.com' })).status).toBe(200);
    expect((await raw(pinned, '', { host: 'chat.example.com' })).status).toBe(200);
  });
});

/**
 * Issue 24 item 2: the gateway's Gradio `/config` reports the Gradio version we track
 * (docs/gradio-protocol.md, "Sources") and `connect_heartbeat: true`, as upstream does for a
 * ChatInterface (its history is State): @gradio/client 2.7.0 then opens the heartbeat, curl and
 * Python's config read (replayed: `gradio_client` cannot be installed here) see the same.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { Client } from '@gradio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { login } from '../helpers/chat-client.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';

const run = promisify(execFile);

let db: TestDatabase;
let server: TestServer;
let base: string;
let token: string;

beforeAll(async () => {
  db = await createTestDatabase();
  server = await startTestServer({ db });
  base = `${server.url}/api/agent/gradio`;
  token = await login(server.url, 'admin');
});
afterAll(async () => {
  await server?.close();
  await db?.drop();
});

describe('/config as upstream reports it for a ChatInterface', () => {
  it('curl and Python: version 6.25.0 (the Gradio we track), connect_heartbeat true', async () => {
    const curl = JSON.parse((await run('curl', ['-s', '-H', `Authorization: Bearer ${token}`, `${base}/config`], { timeout: 20_000 })).stdout);
    expect(curl).toMatchObject({ version: '6.25.0', connect_heartbeat: true, protocol: 'sse_v3' });
    // Python's Client reads /config with httpx, then opens the heartbeat whatever it says.
    const python = await (await fetch(`${base}/config`, { headers: { authorization: `Bearer ${token}`, 'user-agent': 'python-httpx/0.28.1' } })).json();
    expect(python).toMatchObject({ version: '6.25.0', connect_heartbeat: true });
  });

  it('@gradio/client reads it and opens the heartbeat of its session; the stream says ALIVE and stays open', async () => {
    const seen: string[] = [];
    const original = globalThis.fetch;
    globalThis.fetch = ((input: Parameters<typeof fetch>[0], init?: RequestInit) => {
      seen.push(typeof input === 'string' ? input : input instanceof URL ? input.href : input.url);
      return original(input, init);
    }) as typeof fetch;
    let client: Client | undefined;
    try {
      client = await Client.connect(base, { headers: { Authorization: `Bearer ${token}` } });
      expect(client.config).toMatchObject({ version: '6.25.0', connect_heartbeat: true });
      const deadline = Date.now() + 5_000;
      while (!seen.some((u) => u.includes('/gradio_api/heartbeat/')) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    } finally {
      globalThis.fetch = original;
      client?.close();
    }
    const heartbeat = seen.find((u) => u.includes('/gradio_api/heartbeat/'));
    expect(heartbeat).toBeDefined();
    // What that stream carries (Python opens the same): ALIVE, held open for its owner.
    const stream = await fetch(heartbeat!, { headers: { authorization: `Bearer ${token}` } });
    expect(stream.status).toBe(200);
    const { raw } = await readRawStreamText(stream, 300);
    expect(raw).toContain('ALIVE');
  });
});

/** Reads a stream's text for `ms`, then lets it go (a heartbeat never ends by itself). */
async function readRawStreamText(response: Response, ms: number): Promise<{ raw: string }> {
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  let raw = '';
  const stop = setTimeout(() => void reader.cancel(), ms);
  for (;;) {
    const { value, done } = await reader.read().catch(() => ({ value: undefined, done: true as const }));
    if (done) break;
    raw += decoder.decode(value, { stream: true });
  }
  clearTimeout(stop);
  return { raw };
}

/**
 * Issue 9, items 2, 8 and 10: attacks on what the proxy tells the app, performed against the real
 * app behind the real nginx (and directly), from loopback addresses that are not the proxy
 * (127.0.0.7 and friends: other hosts, as far as nginx and the app can tell).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';
import { httpFrom } from '../helpers/http-from.ts';
import { startNginx, type NginxInstance } from '../helpers/nginx.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';

const SERVICE = { client_id: 'airlock-gateway', client_secret: 'test-service-secret-0123456789' };
const RIGHT = 'demo-password-1';

let db: TestDatabase;
let server: TestServer;
let nginx: NginxInstance;
beforeAll(async () => {
  db = await createTestDatabase();
  server = await startTestServer({ db, roles: ['api', 'gateway'] });
  nginx = await startNginx({ upstream: Number(new URL(server.url).port) });
});
afterAll(async () => {
  await nginx?.stop();
  await server?.close();
  await db?.drop();
});

const login = (from: string, base: string, username: string, password: string, headers: Record<string, string> = {}) =>
  httpFrom(from, `${base}/api/auth/login`, { method: 'POST', json: { username, password }, headers });

describe('#2 login throttling cannot be steered with X-Forwarded-For', () => {
  it('through nginx: rotating the header gives no extra guesses', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 8; i++) {
      const res = await login('127.0.0.7', nginx.url, 'operator', `wrong-${i}`, { 'x-forwarded-for': `203.0.113.${i}` });
      statuses.push(res.status);
    }
    expect(statuses).toEqual([401, 401, 401, 401, 401, 429, 429, 429]);
    const right = await login('127.0.0.7', nginx.url, 'operator', RIGHT, { 'x-forwarded-for': '203.0.113.99' });
    expect(right.status).toBe(429);
    expect(right.json().error.code).toBe('RATE_LIMITED');
    expect(Number(right.headers['retry-after'])).toBeGreaterThan(0);
    // The app counted the real address only.
    const { rows } = await db.pool.query<{ key: string }>("SELECT key FROM login_attempts WHERE key LIKE '%203.0.113%'");
    expect(rows).toEqual([]);
  });

  it("through nginx: naming the victim's address does not lock the victim out", async () => {
    for (let i = 0; i < 8; i++) await login('127.0.0.9', nginx.url, 'viewer', `wrong-${i}`, { 'x-forwarded-for': '127.0.0.8' });
    expect((await login('127.0.0.9', nginx.url, 'viewer', RIGHT)).status).toBe(429);
    const victim = await login('127.0.0.8', nginx.url, 'viewer', RIGHT);
    expect(victim.status).toBe(200);
    expect(victim.json().user.username).toBe('viewer');
  });

  it("directly: a peer outside TRUST_PROXY cannot choose its address either", async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 7; i++) {
      statuses.push((await login('127.0.0.10', server.url, 'admin', `wrong-${i}`, { 'x-forwarded-for': `198.51.100.${i}` })).status);
    }
    expect(statuses.slice(0, 5)).toEqual([401, 401, 401, 401, 401]);
    expect(statuses.slice(5)).toEqual([429, 429]);
    // The real admin elsewhere is not slowed.
    expect((await login('127.0.0.11', server.url, 'admin', RIGHT)).status).toBe(200);
  });

  it('nginx limits login requests per address (limit_req) with a RATE_LIMITED body', async () => {
    // Spraying many usernames: the app's per-pair lock never triggers, the edge's limit does.
    const replies = await Promise.all(Array.from({ length: 40 }, (_, i) => login('127.0.0.12', nginx.url, `spray${i}`, 'wrong-password')));
    const edge = replies.filter((r) => r.status === 429);
    expect(edge.length).toBeGreaterThanOrEqual(15);
    expect(replies.filter((r) => r.status === 401).length).toBeGreaterThanOrEqual(15);
    expect(edge[0].json()).toEqual({ error: { code: 'RATE_LIMITED', message: expect.any(String) } });
    expect(edge[0].headers['content-type']).toContain('application/json');
    // Another address is not affected.
    expect((await login('127.0.0.13', nginx.url, 'viewer', RIGHT)).status).toBe(200);
  });

  it('the Gradio clients\' /login (issue 13) goes through the same edge limit and the gateway counts the real address', async () => {
    const gradioLogin = (from: string, username: string, password: string) =>
      httpFrom(from, `${nginx.url}/api/agent/gradio/login`, {
        method: 'POST',
        body: new URLSearchParams({ username, password }).toString(),
        headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-forwarded-for': '198.51.100.7' },
      });
    const ok = await gradioLogin('127.0.0.15', 'viewer', RIGHT);
    expect(ok.status).toBe(200);
    expect(ok.headers['set-cookie']?.[0]).toMatch(/^access-token-[0-9a-f]{16}=/);
    const replies = await Promise.all(Array.from({ length: 40 }, (_, i) => gradioLogin('127.0.0.16', `gspray${i}`, 'wrong-password')));
    expect(replies.filter((r) => r.status === 429).length).toBeGreaterThanOrEqual(15);
    expect(replies.filter((r) => r.status === 401).length).toBeGreaterThanOrEqual(15);
    // Failures are counted for the peer nginx saw, not the forged X-Forwarded-For.
    const { rows } = await db.pool.query<{ key: string }>("SELECT key FROM login_attempts WHERE key LIKE '%gspray%' OR key LIKE '%198.51.100.7%'");
    expect(rows.some((r) => r.key.includes('198.51.100.7'))).toBe(false);
    expect(rows.some((r) => r.key.includes('127.0.0.16'))).toBe(true);
  });
});

describe('#8 gateway-only endpoints', () => {
  const outside = [
    ['GET', '/api/tools/capabilities'],
    ['GET', '/api/%74ools/capabilities'],
    ['GET', '//api/tools/capabilities'],
    ['GET', '/api/x/../tools/health'],
    ['POST', '/api/tools/deployments'],
    ['POST', '/api/auth/service-token'],
    ['POST', '/api/auth/service-token/'],
    ['POST', '/api/auth/%73ervice-token'],
  ];
  it.each(outside)('nginx refuses %s %s from outside the internal network', async (method, path) => {
    const res = await httpFrom('127.0.0.7', nginx.url + path, { method, json: method === 'POST' ? SERVICE : undefined });
    expect(res.status).toBe(403);
    expect(res.json().error.code).toBe('FORBIDDEN');
  });

  it('nginx lets the internal network through', async () => {
    const token = await httpFrom('127.0.0.1', `${nginx.url}/api/auth/service-token`, { method: 'POST', json: SERVICE });
    expect(token.status).toBe(200);
    const tools = await httpFrom('127.0.0.1', `${nginx.url}/api/tools/capabilities`);
    expect(tools.status).toBe(401); // reached the app, which wants both tokens
  });

  it('the app rate-limits service tokens per address, right secret or not', async () => {
    const wrong = { ...SERVICE, client_secret: 'wrong-secret-0123456789abcdef' };
    const statuses: number[] = [];
    for (let i = 0; i < 31; i++) statuses.push((await httpFrom('127.0.0.14', `${server.url}/api/auth/service-token`, { method: 'POST', json: wrong })).status);
    expect(statuses.slice(0, 30).every((s) => s === 401)).toBe(true);
    expect(statuses[30]).toBe(429);
    const right = await httpFrom('127.0.0.14', `${server.url}/api/auth/service-token`, { method: 'POST', json: SERVICE });
    expect(right.status).toBe(429);
    expect(right.json().error.code).toBe('RATE_LIMITED');
    expect((await httpFrom('127.0.0.15', `${server.url}/api/auth/service-token`, { method: 'POST', json: SERVICE })).status).toBe(200);
  });
});

describe('#10 Gradio /config root', () => {
  const rootFrom = async (from: string, base: string, headers: Record<string, string>) => {
    const token = (await login(from, base, 'viewer', RIGHT)).json().access_token as string;
    const res = await httpFrom(from, `${base}/api/agent/gradio/config`, { headers: { authorization: `Bearer ${token}`, ...headers } });
    expect(res.status).toBe(200);
    return res.json().root as string;
  };
  const forged = { 'x-forwarded-host': 'evil.example', 'x-forwarded-proto': 'https' };

  it("ignores an untrusted peer's X-Forwarded-Host/Proto", async () => {
    expect(await rootFrom('127.0.0.16', server.url, forged)).toBe(`${server.url}/api/agent/gradio`);
  });

  it('behind nginx, is the public address however the client forges the headers', async () => {
    expect(await rootFrom('127.0.0.16', nginx.url, forged)).toBe(`${nginx.url}/api/agent/gradio`);
  });

  it('is PUBLIC_URL when set, even against a trusted proxy and a forged Host', async () => {
    const pinned = await startTestServer({ db, roles: ['api', 'gateway'], env: { PUBLIC_URL: 'https://chat.example.com' } });
    try {
      expect(await rootFrom('127.0.0.1', pinned.url, { ...forged, host: 'evil.example' })).toBe('https://chat.example.com/api/agent/gradio');
    } finally {
      await pinned.close();
    }
  });
});

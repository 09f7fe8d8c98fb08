/**
 * Issue 9, item 7: security headers from the app alone and behind the real nginx (never twice),
 * HSTS only over TLS as the app can trust it. Pages (SvelteKit's own hash-mode CSP) are checked in
 * the browser: tests/e2e/15-headers.spec.ts.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { API_CSP_DIRECTIVES, HSTS_VALUE, PERMISSIONS_POLICY } from '../../server/security-headers.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';
import { httpFrom, type FromReply } from '../helpers/http-from.ts';
import { NGINX_BIN, NGINX_TEMPLATE, startNginx, type NginxInstance } from '../helpers/nginx.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';

const API_CSP = Object.entries(API_CSP_DIRECTIVES)
  .map(([name, values]) => `${name} ${values.join(' ')}`)
  .join(';'); // helmet's spelling; nginx's fallback uses the same

let db: TestDatabase;
let server: TestServer;
let nginx: NginxInstance;
let token: string;
beforeAll(async () => {
  db = await createTestDatabase();
  server = await startTestServer({ db, roles: ['api', 'gateway'] });
  nginx = await startNginx({ upstream: Number(new URL(server.url).port) });
  const res = await httpFrom('127.0.0.1', `${server.url}/api/auth/login`, { method: 'POST', json: { username: 'viewer', password: 'demo-password-1' } });
  token = res.json().access_token;
});
afterAll(async () => {
  await nginx?.stop();
  await server?.close();
  await db?.drop();
});

/** Each header once, with exactly this value (a duplicate would arrive joined with ", "). */
function expectStrictHeaders(res: FromReply): void {
  expect(res.headers['content-security-policy']).toBe(API_CSP);
  expect(res.headers['x-content-type-options']).toBe('nosniff');
  expect(res.headers['x-frame-options']).toBe('DENY');
  expect(res.headers['referrer-policy']).toBe('same-origin');
  expect(res.headers['permissions-policy']).toBe(PERMISSIONS_POLICY);
  expect(res.headers['cross-origin-opener-policy']).toBe('same-origin');
}

const paths: Array<[string, string, boolean]> = [
  ['REST JSON', '/api/auth/jwks.json', false],
  ['REST error', '/api/assistant/conversations', false],
  ['unknown route', '/api/nope', false],
  ['Gradio /config', '/api/agent/gradio/config', true],
  ['Gradio heartbeat', '/api/agent/gradio/gradio_api/heartbeat/abc', true],
];

describe('#7 security headers', () => {
  it.each(paths)('the app alone sets them: %s', async (_name, path, withToken) => {
    // The heartbeat is an endless event stream: its headers are what matters.
    const res = await httpFrom('127.0.0.1', server.url + path, {
      headers: withToken ? { authorization: `Bearer ${token}` } : {},
      headersOnly: path.includes('heartbeat'),
    });
    expectStrictHeaders(res);
    expect(res.headers['strict-transport-security']).toBeUndefined();
  });

  it.each(paths)('behind nginx, each header once: %s', async (_name, path, withToken) => {
    const res = await httpFrom('127.0.0.1', nginx.url + path, {
      headers: withToken ? { authorization: `Bearer ${token}` } : {},
      headersOnly: path.includes('heartbeat'),
    });
    expectStrictHeaders(res);
  });

  it("nginx's own responses carry them too (403 at the edge)", async () => {
    const res = await httpFrom('127.0.0.7', `${nginx.url}/api/tools/capabilities`);
    expect(res.status).toBe(403);
    expect(res.headers['content-security-policy']).toBe(API_CSP);
    expect(res.headers['x-content-type-options']).toBe('nosniff');
    expect(res.headers['x-frame-options']).toBe('DENY');
  });

  it('sends HSTS only when a trusted proxy says the request came over TLS', async () => {
    const https = { 'x-forwarded-proto': 'https' };
    const trusted = await httpFrom('127.0.0.1', `${server.url}/api/auth/jwks.json`, { headers: https });
    expect(trusted.headers['strict-transport-security']).toBe(HSTS_VALUE);
    const forged = await httpFrom('127.0.0.7', `${server.url}/api/auth/jwks.json`, { headers: https });
    expect(forged.headers['strict-transport-security']).toBeUndefined();
    // nginx (plain HTTP here) overwrites a client's X-Forwarded-Proto with its own scheme.
    const viaNginx = await httpFrom('127.0.0.7', `${nginx.url}/api/auth/jwks.json`, { headers: https });
    expect(viaNginx.headers['strict-transport-security']).toBeUndefined();
  });
});

describe('nginx: the production config', () => {
  it.each(['edge-http', 'edge-server'])('%s is identical in nginx.conf and the test template', async (name) => {
    const block = (text: string) => {
      const start = text.indexOf(`# >>> ${name}`);
      const end = text.indexOf(`# <<< ${name}`);
      expect(start).toBeGreaterThan(-1);
      expect(end).toBeGreaterThan(start);
      return text.slice(start, end);
    };
    const production = await readFile(new URL('../../nginx/nginx.conf', import.meta.url), 'utf8');
    expect(block(await readFile(NGINX_TEMPLATE, 'utf8'))).toBe(block(production));
  });

  it('nginx.conf itself passes `nginx -t` (paths moved to a temp folder)', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'airlock-nginx-t-'));
    try {
      const production = await readFile(new URL('../../nginx/nginx.conf', import.meta.url), 'utf8');
      const conf = join(dir, 'nginx.conf');
      await writeFile(conf, production.replaceAll('/run/nginx-airlock.pid', join(dir, 'pid')).replaceAll('/var/log/nginx/', `${dir}/`));
      const result = await new Promise<{ code: number; out: string }>((resolve) =>
        execFile(NGINX_BIN, ['-t', '-p', dir, '-e', join(dir, 'error.log'), '-c', conf], (error, stdout, stderr) =>
          resolve({ code: error ? 1 : 0, out: stdout + stderr }),
        ),
      );
      expect(result.out).toContain('test is successful');
      expect(result.code).toBe(0);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

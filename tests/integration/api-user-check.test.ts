/**
 * Issue 9.12 attack table: a user token speaks only for a user that exists now, with the role it
 * has now, and lives no longer than USER_TOKEN_TTL_S. Each attack uses a token signed with our real
 * key (so only these checks stand between it and access), on the api and on the Gradio gateway.
 */
import { keyCipherFor } from '../../server/auth/index.ts';
import { importJWK, SignJWT, type JWK } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashPassword } from '../../server/auth/index.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { DEMO_PASSWORD, SERVICE } from './api-support.ts';

const USER_TTL_S = 3600;
const SERVICE_TTL_S = 300;
const DEPLOY = { service: 'orders-api', version: '3.9.0', environment: 'dev' };

let db: TestDatabase;
let server: TestServer;
let kid: string;
let privateJwk: JWK;
let service: string;
const now = () => Math.floor(Date.now() / 1000);

async function call(method: string, path: string, headers: Record<string, string>, body?: unknown) {
  if (body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(server.url + path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null };
}
const me = (user: string) => call('GET', '/api/auth/me', { authorization: `Bearer ${user}` });
const gradioConfig = (user: string) => call('GET', '/api/agent/gradio/config', { authorization: `Bearer ${user}` });
const deploy = (user: string, n: number) =>
  call('POST', '/api/tools/deployments', { authorization: `Bearer ${service}`, 'x-user-jwt': user, 'idempotency-key': `uc_${n}_${Date.now()}` }, DEPLOY);

async function login(username: string, password = DEMO_PASSWORD): Promise<{ token: string; id: string }> {
  const res = await call('POST', '/api/auth/login', {}, { username, password });
  if (res.status !== 200) throw new Error(`login ${username}: ${res.status}`);
  return { token: res.body.access_token, id: res.body.user.id };
}

async function createUser(username: string, role: string): Promise<void> {
  await db.pool.query('INSERT INTO users (username, password_hash, role) VALUES ($1, $2, $3)', [username, await hashPassword(DEMO_PASSWORD), role]);
}

/** A user token signed with our real key; claims override the valid defaults. */
async function forge(claims: Record<string, unknown>, kind: 'user' | 'service' = 'user', header: Record<string, unknown> = {}): Promise<string> {
  const base =
    kind === 'user'
      ? { iss: 'airlock', aud: 'airlock:user', username: 'ghost', role: 'admin', iat: now(), exp: now() + 300 }
      : { iss: 'airlock', aud: 'airlock:service', sub: SERVICE.client_id, iat: now(), exp: now() + 60 };
  return new SignJWT({ ...base, jti: crypto.randomUUID(), ...claims })
    .setProtectedHeader({ alg: 'ES256', kid, typ: `${kind}+jwt`, ...header })
    .sign(await importJWK(privateJwk, 'ES256'));
}

beforeAll(async () => {
  db = await createTestDatabase();
  server = await startTestServer({
    db,
    roles: ['api', 'gateway'],
    env: { USER_TOKEN_TTL_S: String(USER_TTL_S), SERVICE_TOKEN_TTL_S: String(SERVICE_TTL_S), DEMO_USERS: 'true' },
  });
  service = (await call('POST', '/api/auth/service-token', {}, SERVICE)).body.access_token;
  await login('viewer'); // the signing key exists after the first token
  const { rows } = await db.pool.query('SELECT kid, private_jwk FROM signing_keys');
  // Stored sealed (encrypted at rest): the test opens it with the server's own key-encryption key.
  [kid, privateJwk] = [rows[0].kid, keyCipherFor(server.config).open(rows[0].private_jwk, rows[0].kid)];
});
afterAll(async () => {
  await server?.close();
  await db?.drop();
});

describe('role and user come from the users table, not from the token', () => {
  it('a demoted admin cannot deploy any more (same token, next request)', async () => {
    await createUser('boss', 'admin');
    const { token } = await login('boss');
    expect((await deploy(token, 1)).status).toBe(201);
    await db.pool.query("UPDATE users SET role = 'viewer' WHERE username = 'boss'");
    const refused = await deploy(token, 2);
    expect(refused.status).toBe(403);
    expect(refused.body.error).toMatchObject({ code: 'FORBIDDEN', details: { permission: 'deployments:write' } });
    expect((await me(token)).body).toMatchObject({ username: 'boss', role: 'viewer' });
  });

  it('a deleted user is refused on the api and the gateway', async () => {
    await createUser('leaver', 'operator');
    const { token } = await login('leaver');
    expect((await me(token)).status).toBe(200);
    expect((await gradioConfig(token)).status).toBe(200);
    await db.pool.query("DELETE FROM users WHERE username = 'leaver'");
    const refused = await me(token);
    expect(refused.status).toBe(401);
    expect(refused.body.error.code).toBe('UNAUTHORIZED');
    expect((await gradioConfig(token)).status).toBe(401);
    expect((await deploy(token, 3)).status).toBe(401);
  });

  it('a validly signed token whose sub is no user is refused (uuid or not)', async () => {
    for (const sub of [crypto.randomUUID(), 'admin', "' OR 1=1 --", '0'.repeat(36)]) {
      const token = await forge({ sub });
      expect((await me(token)).status, sub).toBe(401);
      expect((await gradioConfig(token)).status, sub).toBe(401);
      expect((await deploy(token, 4)).status, sub).toBe(401);
    }
  });

  it('a forged role claim gives nothing: a viewer token claiming admin is still a viewer', async () => {
    const viewer = await login('viewer');
    const token = await forge({ sub: viewer.id, username: 'viewer', role: 'admin' });
    expect((await deploy(token, 5)).status).toBe(403);
    expect((await me(token)).body.role).toBe('viewer');
  });

  it('no deployment was made by any refused attempt', async () => {
    const { rows } = await db.pool.query("SELECT count(*)::int AS n FROM deployments WHERE version = '3.9.0' AND environment = 'dev'");
    expect(rows[0].n).toBe(1); // the demoted admin's one deploy before the demotion
  });
});

describe('a token may not live longer than the configured lifetime', () => {
  it('exp - iat of 30 days is refused, though signed by our key and not expired', async () => {
    const admin = await login('admin');
    const token = await forge({ sub: admin.id, username: 'admin', iat: now(), exp: now() + 30 * 86_400 });
    expect((await me(token)).status).toBe(401);
    expect((await gradioConfig(token)).status).toBe(401);
    expect((await deploy(token, 6)).status).toBe(401);
  });

  it('one second over USER_TOKEN_TTL_S is refused; exactly the TTL passes (control)', async () => {
    const admin = await login('admin');
    expect((await me(await forge({ sub: admin.id, iat: now(), exp: now() + USER_TTL_S + 1 }))).status).toBe(401);
    expect((await me(await forge({ sub: admin.id, iat: now(), exp: now() + USER_TTL_S }))).status).toBe(200);
    expect((await me(admin.token)).status).toBe(200); // what login issues passes
  });

  it('a service token living longer than SERVICE_TOKEN_TTL_S is refused', async () => {
    const admin = await login('admin');
    const long = await forge({ iat: now(), exp: now() + SERVICE_TTL_S + 60 }, 'service');
    const res = await call('GET', '/api/tools/capabilities', { authorization: `Bearer ${long}`, 'x-user-jwt': admin.token });
    expect(res.status).toBe(401);
    expect(res.body.error.details).toEqual({ token: 'service' });
  });
});

describe('junk that must be "invalid" (401), never a database error (500/503)', () => {
  it.each([
    ['a NUL byte', 'k\u0000id'],
    ['an object', { $ne: null }],
    ['an array', ['a', ['b']]],
    ['a number', 42],
    ['4 kB', 'k'.repeat(4096)],
    ['quotes and SQL', "x' OR '1'='1"],
  ])('kid as %s -> 401', async (_name, junk) => {
    const admin = await login('admin');
    const token = await forge({ sub: admin.id }, 'user', { kid: junk });
    const res = await me(token);
    expect(res.status).toBe(401);
    expect(res.body.error.code).toBe('UNAUTHORIZED');
    expect((await gradioConfig(token)).status).toBe(401);
  });
});

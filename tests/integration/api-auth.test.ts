/**
 * /api/auth: login, me, logout (revocation), JWKS, service tokens, throttling, demo users, keys.
 */
import { decodeJwt, decodeProtectedHeader } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKeyCipher, ensureDemoUsers, keyCipherFor, keyStoreFor } from '../../server/auth/index.ts';
import { createPool } from '../../server/db/index.ts';
import { createTestDatabase } from '../helpers/database.ts';
import { SERVICE, startApi, type ApiHarness } from './api-support.ts';

let api: ApiHarness;
beforeAll(async () => {
  api = await startApi();
});
afterAll(() => api.close());

describe('POST /api/auth/login', () => {
  it('returns a user JWT with the contract shape and claims', async () => {
    const res = await api.request('POST', '/api/auth/login', { body: { username: 'operator', password: 'demo-password-1' } });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ token_type: 'Bearer', expires_in: 8 * 3600, user: { username: 'operator', role: 'operator' } });
    expect(res.body.user.id).toMatch(/^[0-9a-f-]{36}$/);
    const header = decodeProtectedHeader(res.body.access_token);
    expect(header).toMatchObject({ alg: 'ES256', typ: 'user+jwt' });
    expect(header.kid).toBeTruthy();
    const claims = decodeJwt(res.body.access_token);
    expect(claims).toMatchObject({ iss: 'airlock', aud: 'airlock:user', sub: res.body.user.id, role: 'operator', username: 'operator' });
    expect(claims.exp! - claims.iat!).toBe(8 * 3600);
    expect(claims.jti).toBeTruthy();
  });

  it('is case-insensitive on the username', async () => {
    const res = await api.request('POST', '/api/auth/login', { body: { username: 'Viewer', password: 'demo-password-1' } });
    expect(res.status).toBe(200);
  });

  it('refuses a wrong password or unknown user with 401 UNAUTHORIZED', async () => {
    for (const body of [{ username: 'admin', password: 'nope-nope' }, { username: 'ghost', password: 'demo-password-1' }]) {
      const res = await api.request('POST', '/api/auth/login', { body, headers: { 'x-forwarded-for': '10.9.9.9' } });
      expect(res.status).toBe(401);
      expect(res.body.error.code).toBe('UNAUTHORIZED');
    }
  });

  it('validates the body with field-level details', async () => {
    const res = await api.request('POST', '/api/auth/login', { body: { username: '' } });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('VALIDATION_ERROR');
    expect(res.body.error.details.map((d: { path: string }) => d.path).sort()).toEqual(['password', 'username']);
    const broken = await api.request('POST', '/api/auth/login', { body: '{"username":' });
    expect(broken.status).toBe(400);
    expect(broken.body.error.code).toBe('VALIDATION_ERROR');
    expect(JSON.stringify(broken.body)).not.toMatch(/at .*\.ts/);
  });

  it('slows down repeated failures per user and address, not for others', async () => {
    const address = { 'x-forwarded-for': '10.1.2.3' };
    let last;
    for (let i = 0; i < 6; i++) {
      last = await api.request('POST', '/api/auth/login', { body: { username: 'admin', password: 'wrong-password' }, headers: address });
    }
    expect(last!.status).toBe(429);
    expect(last!.body.error.code).toBe('RATE_LIMITED');
    expect(Number(last!.headers.get('retry-after'))).toBeGreaterThan(0);
    // Even the right password waits while locked…
    const locked = await api.request('POST', '/api/auth/login', { body: { username: 'admin', password: 'demo-password-1' }, headers: address });
    expect(locked.status).toBe(429);
    // …but the same user from another address, and another user from this one, are not slowed.
    const elsewhere = await api.request('POST', '/api/auth/login', {
      body: { username: 'admin', password: 'demo-password-1' },
      headers: { 'x-forwarded-for': '10.1.2.4' },
    });
    expect(elsewhere.status).toBe(200);
    const other = await api.request('POST', '/api/auth/login', { body: { username: 'viewer', password: 'demo-password-1' }, headers: address });
    expect(other.status).toBe(200);
  });
});

describe('GET /api/auth/me and POST /api/auth/logout', () => {
  it('describes the user with their permissions', async () => {
    const token = await api.login('admin');
    const res = await api.request('GET', '/api/auth/me', { token });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ username: 'admin', role: 'admin' });
    expect(res.body.permissions).toContain('deployments:write');
    const viewer = await api.request('GET', '/api/auth/me', { token: await api.login('viewer') });
    expect(viewer.body.permissions).not.toContain('maintenance:write');
  });

  it('needs a token: 401 without or with garbage', async () => {
    expect((await api.request('GET', '/api/auth/me')).status).toBe(401);
    const res = await api.request('GET', '/api/auth/me', { token: 'not.a.jwt' });
    expect(res.status).toBe(401);
    expect(res.body.error.code).toBe('UNAUTHORIZED');
    expect(res.headers.get('www-authenticate')).toBe('Bearer');
  });

  it('logout revokes the token (204) and only that token', async () => {
    const token = await api.login('viewer');
    const other = await api.login('viewer');
    expect((await api.request('POST', '/api/auth/logout', { token })).status).toBe(204);
    const after = await api.request('GET', '/api/auth/me', { token });
    expect(after.status).toBe(401);
    expect((await api.request('POST', '/api/auth/logout', { token })).status).toBe(401);
    expect((await api.request('GET', '/api/auth/me', { token: other })).status).toBe(200);
  });
});

describe('GET /api/auth/jwks.json', () => {
  it('publishes the public signing key by kid, without private parts', async () => {
    const res = await api.request('GET', '/api/auth/jwks.json');
    expect(res.status).toBe(200);
    expect(res.body.keys).toHaveLength(1);
    const [key] = res.body.keys;
    expect(key).toMatchObject({ kty: 'EC', crv: 'P-256', alg: 'ES256', use: 'sig' });
    expect(key.d).toBeUndefined();
    const token = await api.login('viewer');
    expect(decodeProtectedHeader(token).kid).toBe(key.kid);
  });
});

describe('POST /api/auth/service-token', () => {
  it('issues a short-lived service JWT for the right client credentials', async () => {
    const res = await api.request('POST', '/api/auth/service-token', { body: SERVICE });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ token_type: 'Bearer', expires_in: 300 });
    expect(decodeProtectedHeader(res.body.access_token).typ).toBe('service+jwt');
    expect(decodeJwt(res.body.access_token)).toMatchObject({ aud: 'airlock:service', sub: 'airlock-gateway' });
  });

  it('refuses wrong credentials (401) and a malformed body (400)', async () => {
    const wrong = await api.request('POST', '/api/auth/service-token', { body: { ...SERVICE, client_secret: 'x'.repeat(30) } });
    expect(wrong.status).toBe(401);
    const otherClient = await api.request('POST', '/api/auth/service-token', { body: { ...SERVICE, client_id: 'someone' } });
    expect(otherClient.status).toBe(401);
    const bad = await api.request('POST', '/api/auth/service-token', { body: { client_id: 'airlock-gateway' } });
    expect(bad.status).toBe(400);
    expect(bad.body.error.details[0].path).toBe('client_secret');
  });
});

describe('keys and demo users at start', () => {
  it('a restart keeps the key, so tokens stay valid', async () => {
    const token = await api.login('viewer');
    const restarted = createPool(api.db.url);
    try {
      expect((await keyStoreFor(restarted, keyCipherFor(api.server.config)).signingKey()).kid).toBe(decodeProtectedHeader(token).kid);
    } finally {
      await restarted.end();
    }
  });

  it('concurrent first starts agree on one key', async () => {
    const empty = await createTestDatabase();
    // Three "processes": pools of their own, so three key stores with nothing cached.
    const pools = [1, 2, 3].map(() => createPool(empty.url));
    const cipher = createKeyCipher('one-key-encryption-key-for-all-three-starts');
    try {
      const kids = await Promise.all(pools.map(async (p) => (await keyStoreFor(p, cipher).signingKey()).kid));
      expect(new Set(kids).size).toBe(1);
      const { rows } = await empty.pool.query('SELECT count(*)::int AS n FROM signing_keys');
      expect(rows[0].n).toBe(1);
    } finally {
      await Promise.all(pools.map((p) => p.end()));
      await empty.drop();
    }
  });

  it('creates demo users once, race-safe, and prints a generated password only on creation', async () => {
    await api.db.pool.query("DELETE FROM users WHERE username IN ('viewer', 'operator', 'admin')");
    const results = await Promise.all([1, 2, 3].map(() => ensureDemoUsers(api.db.pool, { demoPassword: undefined })));
    const creators = results.filter((r) => r.created.length > 0);
    expect(creators).toHaveLength(1);
    expect(creators[0].created).toEqual(['viewer', 'operator', 'admin']);
    expect(creators[0].generatedPassword).toMatch(/^[\w-]{16}$/);
    expect(results.filter((r) => r.generatedPassword)).toHaveLength(1);
    const { rows } = await api.db.pool.query("SELECT password_hash FROM users WHERE username = 'admin'");
    expect(rows[0].password_hash).toMatch(/^scrypt\$/);
    expect(rows[0].password_hash).not.toContain(creators[0].generatedPassword);
    const generated = await api.request('POST', '/api/auth/login', {
      body: { username: 'admin', password: creators[0].generatedPassword },
      headers: { 'x-forwarded-for': '10.7.7.7' },
    });
    expect(generated.status).toBe(200);
    // DEMO_PASSWORD set again: the users are kept and their password follows the setting.
    const again = await ensureDemoUsers(api.db.pool, { demoPassword: 'demo-password-1' });
    expect(again).toEqual({ created: [], skipped: [] });
    expect((await api.request('POST', '/api/auth/login', { body: { username: 'admin', password: 'demo-password-1' } })).status).toBe(200);
  });
});

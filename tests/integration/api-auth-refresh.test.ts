/**
 * Browser sessions (issue 8): POST /api/auth/login {cookie:true} sets an httpOnly, SameSite=Strict
 * refresh cookie under /api/auth/; POST /api/auth/refresh rotates it and returns a short-lived
 * access token. The attacks are performed for real against the running server: a cross-origin
 * refresh, a refresh after logout, a replayed (already spent) refresh token, a double spend.
 */
import { decodeJwt } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_PASSWORD, startApi, type ApiHarness, type Reply } from './api-support.ts';

const ACCESS_TTL_S = 60;
let api: ApiHarness;
let origin: string;
beforeAll(async () => {
  api = await startApi({ SESSION_ACCESS_TTL_S: String(ACCESS_TTL_S) });
  origin = new URL(api.url).origin;
});
afterAll(() => api.close());

/** The refresh cookie's value from a Set-Cookie answer ('' when it was cleared), or null when none was set. */
function refreshCookie(res: Reply): { value: string; attributes: string } | null {
  const line = res.headers.getSetCookie().find((c) => c.startsWith('airlock_refresh='));
  if (!line) return null;
  const [pair, ...attributes] = line.split(';');
  return { value: pair!.slice('airlock_refresh='.length), attributes: attributes.join(';').trim() };
}

async function browserLogin(username = 'operator'): Promise<{ res: Reply; cookie: string }> {
  const res = await api.request('POST', '/api/auth/login', { body: { username, password: DEMO_PASSWORD, cookie: true }, headers: { origin } });
  expect(res.status).toBe(200);
  return { res, cookie: refreshCookie(res)!.value };
}

function refresh(cookie: string | null, from: string | null = origin): Promise<Reply> {
  const headers: Record<string, string> = {};
  if (cookie !== null) headers.cookie = `airlock_refresh=${cookie}`;
  if (from !== null) headers.origin = from;
  return api.request('POST', '/api/auth/refresh', { headers });
}

describe('cookie sign-in', () => {
  it('sets an httpOnly SameSite=Strict cookie under /api/auth/ and returns a short-lived access token', async () => {
    const { res, cookie } = await browserLogin();
    const set = refreshCookie(res)!;
    expect(cookie).toMatch(/^[0-9a-f-]{36}\.[A-Za-z0-9_-]{43}$/);
    expect(set.attributes).toMatch(/HttpOnly/i);
    expect(set.attributes).toMatch(/SameSite=Strict/i);
    expect(set.attributes).toMatch(/Path=\/api\/auth\//);
    expect(set.attributes).toMatch(/Expires=/);
    // The refresh token never appears where a script could read it.
    expect(JSON.stringify(res.body)).not.toContain(cookie);
    const claims = decodeJwt(res.body.access_token);
    expect(claims.exp! - claims.iat!).toBe(ACCESS_TTL_S);
    expect(res.body.expires_in).toBe(ACCESS_TTL_S);
    const me = await api.request('GET', '/api/auth/me', { token: res.body.access_token });
    expect(me.body.username).toBe('operator');
  });

  it('leaves bearer logins as they were: no cookie, the full lifetime', async () => {
    const res = await api.request('POST', '/api/auth/login', { body: { username: 'viewer', password: DEMO_PASSWORD } });
    expect(res.status).toBe(200);
    expect(refreshCookie(res)).toBeNull();
    expect(res.body.expires_in).toBe(8 * 3600);
  });

  it('refuses a cookie sign-in from another site (login CSRF)', async () => {
    const res = await api.request('POST', '/api/auth/login', {
      body: { username: 'operator', password: DEMO_PASSWORD, cookie: true },
      headers: { origin: 'https://evil.example' },
    });
    expect(res.status).toBe(403);
    expect(res.body.error.code).toBe('FORBIDDEN');
    expect(refreshCookie(res)).toBeNull();
  });
});

describe('POST /api/auth/refresh', () => {
  it('rotates the cookie and returns a working access token for the same user', async () => {
    const { cookie } = await browserLogin('admin');
    const res = await refresh(cookie);
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(res.body).toMatchObject({ token_type: 'Bearer', expires_in: ACCESS_TTL_S, user: { username: 'admin', role: 'admin' } });
    const next = refreshCookie(res)!.value;
    expect(next).not.toBe(cookie);
    const me = await api.request('GET', '/api/auth/me', { token: res.body.access_token });
    expect(me.body).toMatchObject({ username: 'admin' });
    expect((await refresh(next)).status).toBe(200);
  });

  it('ATTACK: a cross-origin refresh with the victim\'s cookie is refused and spends nothing', async () => {
    const { cookie } = await browserLogin();
    for (const from of ['https://evil.example', `${origin}.evil.example`, 'null', null]) {
      const res = await refresh(cookie, from);
      expect(res.status).toBe(403);
      expect(res.body.error.code).toBe('FORBIDDEN');
      expect(res.body.access_token).toBeUndefined();
    }
    // The refused attempts did not spend the cookie: its owner still refreshes.
    expect((await refresh(cookie)).status).toBe(200);
  });

  it('ATTACK: a refresh after logout is refused, and logout clears the cookie', async () => {
    const { res: login, cookie } = await browserLogin();
    const out = await api.request('POST', '/api/auth/logout', {
      token: login.body.access_token,
      headers: { cookie: `airlock_refresh=${cookie}`, origin },
    });
    expect(out.status).toBe(204);
    expect(refreshCookie(out)).toMatchObject({ value: '' });
    const res = await refresh(cookie);
    expect(res.status).toBe(401);
    expect(res.body.error.code).toBe('UNAUTHORIZED');
    expect(res.body.error.details).toEqual({ session: 'ended' });
  });

  it('signing out ends every tab\'s access token of that session at once; other sessions and bearer logins live on', async () => {
    const { res: tabA, cookie } = await browserLogin('viewer');
    const tabB = await refresh(cookie); // a second tab's token, same session
    const other = await browserLogin('viewer'); // another browser
    const bearer = await api.login('viewer');
    expect(decodeJwt(tabB.body.access_token).sid).toBe(decodeJwt(tabA.body.access_token).sid);
    const out = await api.request('POST', '/api/auth/logout', {
      token: tabA.body.access_token,
      headers: { cookie: `airlock_refresh=${refreshCookie(tabB)!.value}`, origin },
    });
    expect(out.status).toBe(204);
    const me = (token: string) => api.request('GET', '/api/auth/me', { token });
    expect((await me(tabB.body.access_token)).status).toBe(401);
    expect((await me(other.res.body.access_token)).status).toBe(200);
    expect((await me(bearer)).status).toBe(200);
  });

  it('ATTACK: a replayed (spent) refresh token is refused and revokes the whole session', async () => {
    const { cookie: stolen } = await browserLogin();
    const first = await refresh(stolen);
    expect(first.status).toBe(200);
    const current = refreshCookie(first)!.value;
    const replay = await refresh(stolen);
    expect(replay.status).toBe(401);
    expect(replay.body.access_token).toBeUndefined();
    // Reuse detection: the thief's replay also ends the legitimate holder's session.
    expect((await refresh(current)).status).toBe(401);
  });

  it('ATTACK: two refreshes racing with one token: at most one succeeds', async () => {
    const { cookie } = await browserLogin();
    const results = await Promise.all([refresh(cookie), refresh(cookie), refresh(cookie)]);
    expect(results.filter((r) => r.status === 200).length).toBeLessThanOrEqual(1);
    expect(results.filter((r) => r.status === 401).length).toBeGreaterThanOrEqual(2);
  });

  it('says "none" without a cookie and "ended" for a forged, malformed or expired one; never a 500', async () => {
    const none = await refresh(null);
    expect(none.status).toBe(401);
    expect(none.body.error.details).toEqual({ session: 'none' });
    const { cookie } = await browserLogin();
    const forged = `${cookie.split('.')[0]}.${'A'.repeat(43)}`;
    for (const bad of [forged, 'garbage', '%%%', `${cookie}x`]) {
      const res = await refresh(bad);
      expect(res.status).toBe(401);
      expect(res.body.error.details).toEqual({ session: 'ended' });
    }
    await api.db.pool.query("UPDATE refresh_tokens SET expires_at = now() - interval '1 second' WHERE id = $1", [cookie.split('.')[0]]);
    const expired = await refresh(cookie);
    expect(expired.status).toBe(401);
    expect(expired.body.error.message).toMatch(/expired/);
  });
});

/**
 * Single sign-on against a real OpenID provider (issue 39 items 1, 2 and 8): panva's oidc-provider,
 * started as a process once for this file, with its own people and groups. The code flow with
 * PKCE lands on /login?sso=1 with the refresh-cookie session; groups map to roles through
 * OIDC_ROLE_MAP; an unmapped person, a tampered state, a wrong nonce, a wrong iss and a replayed
 * callback are refused with /login?sso_error=…; an open redirect is not followed.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../server/db/index.ts';
import { Browser, PROVIDER_CLIENT, startTestProvider, type TestProvider } from '../helpers/oidc-provider.ts';
import { startApi, type ApiHarness } from './api-support.ts';

let provider: TestProvider;
let api: ApiHarness;
const CALLBACK = () => `${api.url}/api/auth/oidc/callback`;

beforeAll(async () => {
  provider = await startTestProvider();
  api = await startApi({
    OIDC_ISSUER: provider.issuer,
    OIDC_CLIENT_ID: PROVIDER_CLIENT.id,
    OIDC_CLIENT_SECRET: PROVIDER_CLIENT.secret,
    OIDC_ALLOW_HTTP: 'true',
    OIDC_SCOPES: 'openid profile email groups',
    OIDC_NAME: 'Example ID',
    OIDC_ROLE_MAP: 'admin=ops-admins;operator=oncall',
  });
  provider.register({ redirectUris: [CALLBACK()], postLogoutRedirectUris: [`${api.url}/login?signedout=1`] });
});
afterAll(async () => {
  await api?.close();
  await provider?.stop();
});

/** A browser's sign-in as `account`, up to the callback URL the provider sends it back to. */
async function toCallback(account: string, options: { next?: string; authUrl?: (u: URL) => void } = {}) {
  const browser = new Browser();
  const start = await browser.get(`${api.url}/api/auth/oidc/login?next=${encodeURIComponent(options.next ?? '/chat')}`);
  expect(start.status).toBe(302);
  const authUrl = new URL(start.headers.get('location')!);
  expect(authUrl.origin).toBe(provider.issuer);
  expect(authUrl.searchParams.get('code_challenge_method')).toBe('S256');
  options.authUrl?.(authUrl);
  const { url: interaction } = await browser.follow(authUrl.href, `${provider.issuer}/interaction/`);
  const { url: callback } = await browser.follow(`${interaction}/as/${account}`, CALLBACK());
  return { browser, callback: new URL(callback) };
}

async function session(browser: Browser) {
  const cookie = browser.cookie(api.url, 'airlock_refresh');
  const res = await fetch(`${api.url}/api/auth/refresh`, { method: 'POST', headers: { origin: api.url, cookie: `airlock_refresh=${cookie}` } });
  return { status: res.status, body: await res.json() };
}

describe('sign-in with the provider', () => {
  it('runs the code flow with PKCE and starts a cookie session for the person, with the role of their groups', async () => {
    const { browser, callback } = await toCallback('alice', { next: '/chat/abc?x=1' });
    expect(callback.searchParams.get('iss')).toBe(provider.issuer);
    const done = await browser.get(callback.href);
    expect(done.status).toBe(302);
    expect(done.headers.get('location')).toBe(`/login?sso=1&next=${encodeURIComponent('/chat/abc?x=1')}`);
    const { status, body } = await session(browser);
    expect(status).toBe(200);
    expect(body.user).toMatchObject({ username: 'alice', role: 'operator' });
    const { rows } = await api.db.pool.query("SELECT source, issuer, subject, email, display_name, role_from_claims, password_hash, last_sign_in_at FROM users WHERE username = 'alice'");
    expect(rows[0]).toMatchObject({ source: 'oidc', issuer: provider.issuer, subject: 'alice', email: 'alice@example.com', display_name: 'Alice Smith', role_from_claims: true, password_hash: null });
    expect(rows[0].last_sign_in_at).not.toBeNull();
  });

  it('offers the provider on the login page once discovered', async () => {
    const res = await api.request('GET', '/api/auth/providers');
    expect(res.body).toEqual({ password: true, oidc: { name: 'Example ID', configured: true, available: true } });
  });

  it('maps an admin group to admin, lowercases an email-shaped name, and never takes a local name', async () => {
    const root = await toCallback('root');
    await root.browser.get(root.callback.href);
    expect((await session(root.browser)).body.user).toMatchObject({ username: 'root.admin@example.com', role: 'admin' });
    // "operator" is a demo user's (local) name: the provider's operator gets operator-2.
    const op = await toCallback('operator');
    await op.browser.get(op.callback.href);
    expect((await session(op.browser)).body.user).toMatchObject({ username: 'operator-2', role: 'operator' });
  });

  it('refuses a person none of whose groups maps, with a page in words', async () => {
    const { browser, callback } = await toCallback('mallory');
    const res = await browser.get(callback.href);
    expect(res.headers.get('location')).toBe('/login?sso_error=unmapped');
    expect(browser.cookie(api.url, 'airlock_refresh')).toBeUndefined();
    expect((await api.db.pool.query("SELECT 1 FROM users WHERE subject = 'mallory'")).rowCount).toBe(0);
  });

  it('refuses a tampered state, a wrong iss and a replayed callback', async () => {
    const tampered = await toCallback('alice');
    tampered.callback.searchParams.set('state', 'attacker-state');
    expect((await tampered.browser.get(tampered.callback.href)).headers.get('location')).toBe('/login?sso_error=state');

    const wrongIss = await toCallback('alice');
    wrongIss.callback.searchParams.set('iss', 'https://evil.example');
    expect((await wrongIss.browser.get(wrongIss.callback.href)).headers.get('location')).toBe('/login?sso_error=state');

    const replay = await toCallback('alice');
    const flowCookie = replay.browser.cookie(api.url, 'airlock_oidc')!;
    expect((await replay.browser.get(replay.callback.href)).headers.get('location')).toMatch(/^\/login\?sso=1/);
    replay.browser.setCookie(api.url, 'airlock_oidc', flowCookie);
    expect((await replay.browser.get(replay.callback.href)).headers.get('location')).toBe('/login?sso_error=state');
  });

  it('refuses an ID token whose nonce is not the one this flow sent', async () => {
    const { browser, callback } = await toCallback('alice', { authUrl: (u) => u.searchParams.set('nonce', 'attacker-nonce') });
    expect((await browser.get(callback.href)).headers.get('location')).toBe('/login?sso_error=state');
    expect(browser.cookie(api.url, 'airlock_refresh')).toBeUndefined();
  });

  it('returns to a same-origin path only', async () => {
    for (const next of ['https://evil.example/', '//evil.example/x', '/\\evil.example']) {
      const { browser, callback } = await toCallback('alice', { next });
      expect((await browser.get(callback.href)).headers.get('location')).toBe('/login?sso=1&next=%2F');
    }
  });

  it('sends an SSO person on to the provider\'s logout', async () => {
    const { browser, callback } = await toCallback('alice');
    await browser.get(callback.href);
    const { body } = await session(browser);
    const out = await api.request('POST', '/api/auth/logout', { token: body.access_token });
    expect(out.status).toBe(200);
    const url = new URL(out.body.end_session_url);
    expect(url.origin).toBe(provider.issuer);
    expect(url.searchParams.get('post_logout_redirect_uri')).toBe(`${api.url}/login?signedout=1`);
    expect(url.searchParams.get('client_id')).toBe(PROVIDER_CLIENT.id);
  });
});

describe('a provider that cannot be reached', () => {
  it('never blocks the start: the login page says single sign-on is unavailable and password login works', async () => {
    const down = await startApi({ OIDC_ISSUER: `http://127.0.0.1:${await freePort()}`, OIDC_ALLOW_HTTP: 'true', OIDC_CLIENT_ID: 'x' });
    try {
      const start = await fetch(`${down.url}/api/auth/oidc/login?next=/`, { redirect: 'manual' });
      expect(start.headers.get('location')).toBe('/login?sso_error=unavailable');
      const providers = await down.request('GET', '/api/auth/providers');
      expect(providers.body.oidc).toMatchObject({ configured: true, available: false });
      expect(providers.body.oidc.reason).toMatch(/^The identity provider at http:\/\/127\.0\.0\.1:\d+ cannot be reached or is misconfigured/);
      expect(await down.login('operator')).toBeTruthy();
    } finally {
      await down.close();
    }
  });
});

describe('PASSWORD_LOGIN=false', () => {
  it('refuses password logins and says so to the login page', async () => {
    const ssoOnly = await startApi({ PASSWORD_LOGIN: 'false' });
    try {
      const res = await ssoOnly.request('POST', '/api/auth/login', { body: { username: 'admin', password: 'demo-password-1' } });
      expect(res.status).toBe(403);
      expect(res.body.error.details).toEqual({ reason: 'password_login_off' });
      expect((await ssoOnly.request('GET', '/api/auth/providers')).body).toEqual({ password: false, oidc: null });
    } finally {
      await ssoOnly.close();
    }
  });
});

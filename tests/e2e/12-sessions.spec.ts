/**
 * Sessions (issue 8): one sign-in per browser. The refresh token is an httpOnly cookie the page
 * cannot read, the access token lives in memory; a new tab signs itself in, signing out signs out
 * every tab, "Your session ended" only after a real session, and an expired access token is
 * renewed without the user noticing.
 */
import type { Page, Response } from '@playwright/test';
import { decodeJwt } from 'jose';
import { EXPIRY_ACCESS_TTL_S } from './support/product.ts';
import { connected, expect, send, shot, test } from './support/fixtures.ts';

async function formSignIn(page: Page, url: string, username: string, password: string): Promise<string> {
  await page.goto(`${url}/login`);
  await page.getByLabel('Username').fill(username);
  await page.getByLabel('Password').fill(password);
  const login = page.waitForResponse((r) => r.url().endsWith('/api/auth/login'));
  await page.getByRole('button', { name: 'Sign in' }).click();
  const body = (await (await login).json()) as { access_token: string };
  await expect(page).toHaveURL(`${url}/`);
  await connected(page);
  return body.access_token;
}

test('a first visit shows the sign-in page without "Your session ended" and asks nothing of the server', async ({ page }) => {
  const refreshes: string[] = [];
  page.on('request', (r) => r.url().includes('/api/auth/refresh') && refreshes.push(r.url()));
  await page.goto('/');
  await expect(page).toHaveURL(/\/login\?next=%2F$/);
  await expect(page.getByRole('button', { name: 'Sign in' })).toBeVisible();
  await expect(page.getByText('Your session ended')).toHaveCount(0);
  await expect(page.getByRole('status')).toHaveCount(0);
  await page.goto('/c/00000000-0000-4000-8000-000000000000');
  await expect(page).toHaveURL(/\/login\?next=/);
  await expect(page.getByText('Your session ended')).toHaveCount(0);
  expect(refreshes).toEqual([]);
});

test('a new tab of the same browser is already signed in; no token is within reach of scripts', async ({ context, page, state }) => {
  const accessToken = await formSignIn(page, state.main.url, 'operator', state.password);
  const cookie = (await context.cookies()).find((c) => c.name === 'airlock_refresh');
  expect(cookie).toMatchObject({ httpOnly: true, sameSite: 'Strict', path: '/api/auth/' });

  const second = await context.newPage();
  await second.goto(`${state.main.url}/`);
  await connected(second);
  await expect(second).toHaveURL(`${state.main.url}/`);
  await expect(second.locator('header')).toContainText('operator');
  await expect(second.getByRole('heading', { name: /Hello, operator/ })).toBeVisible();
  await shot(second, '12-new-tab-signed-in');

  // What a script (or an XSS) on the page can read holds neither token.
  for (const p of [page, second]) {
    const readable = await p.evaluate(() => JSON.stringify({ cookie: document.cookie, local: { ...localStorage }, session: { ...sessionStorage } }));
    expect(readable).not.toContain(cookie!.value);
    expect(readable).not.toContain(accessToken);
    expect(readable).not.toContain('airlock_refresh');
  }
});

test('signing out in one tab signs out the other, and the session is gone on the server', async ({ context, page, state }) => {
  await formSignIn(page, state.main.url, 'viewer', state.password);
  const second = await context.newPage();
  await second.goto(`${state.main.url}/`);
  await connected(second);

  await page.getByRole('button', { name: 'Sign out' }).click();
  await expect(page).toHaveURL(`${state.main.url}/login`);
  await expect(page.getByText('Your session ended')).toHaveCount(0);
  await expect(second).toHaveURL(/\/login\?signedout=1&next=%2F$/);
  await expect(second.getByRole('status')).toHaveText('You signed out in another tab.');
  await expect(second.getByRole('button', { name: 'Sign in' })).toBeVisible();

  // A reload or a third tab stays signed out: the server revoked the cookie session.
  const third = await context.newPage();
  await third.goto(`${state.main.url}/`);
  await expect(third).toHaveURL(/\/login\?next=%2F$/);
  const refresh = await context.request.post(`${state.main.url}/api/auth/refresh`, { headers: { origin: state.main.url } });
  expect(refresh.status()).toBe(401);
});

test('an expired access token is refreshed silently', async ({ page, state }) => {
  const url = state.expiry.url;
  const refreshes: Response[] = [];
  const unauthorized: string[] = [];
  page.on('response', (r) => {
    if (r.url().endsWith('/api/auth/refresh')) refreshes.push(r);
    else if (r.status() === 401) unauthorized.push(r.url());
  });
  // admin and texts no other journey looks for: the expiry deployment shares the database.
  const first = await formSignIn(page, url, 'admin', state.password);
  await send(page, 'Which deployments are running?');
  await expect(page).toHaveURL(/\/c\/[0-9a-f-]+$/);
  await expect(page.getByTestId('answer').last()).toHaveAttribute('data-streaming', 'false', { timeout: 20_000 });

  // Past the access token's lifetime, with the page idle. (The server would still accept it for
  // its 30 s clock-skew leeway; the page must not count on that.)
  await page.waitForTimeout((EXPIRY_ACCESS_TTL_S + 2) * 1000);
  expect(decodeJwt(first).exp! * 1000).toBeLessThan(Date.now());
  const before = refreshes.length;
  await send(page, 'Show the deployments');
  await expect(page.getByTestId('answer')).toHaveCount(2, { timeout: 20_000 });
  await expect(page.getByTestId('answer').last()).toHaveAttribute('data-streaming', 'false', { timeout: 20_000 });
  expect(refreshes.length).toBeGreaterThan(before); // the send renewed the token first
  // The REST side too: the sidebar reloads with the renewed token.
  await page.reload();
  await connected(page);
  await expect(page.getByTestId('answer')).toHaveCount(2);

  await expect(page).not.toHaveURL(/\/login/);
  expect(refreshes.length).toBeGreaterThanOrEqual(2);
  expect(refreshes.every((r) => r.status() === 200)).toBe(true);
  expect(unauthorized).toEqual([]);
});

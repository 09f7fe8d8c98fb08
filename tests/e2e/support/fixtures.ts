/**
 * Fixtures for the journeys: the product's URL behind nginx as baseURL, API sign-in for the demo
 * users (the login journey itself goes through the form), composer helpers and screenshots.
 */
import { mkdirSync } from 'node:fs';
import { expect, test as base, type Page } from '@playwright/test';
import { readState, type E2EState } from './product.ts';

export type DemoUser = 'viewer' | 'operator' | 'admin';

export interface SignedIn {
  token: string;
  user: { id: string; username: string; role: string };
}

/** POST /api/auth/login through nginx. */
export async function apiLogin(url: string, username: DemoUser, password: string): Promise<SignedIn> {
  const response = await fetch(`${url}/api/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ username, password }),
  });
  if (!response.ok) throw new Error(`login ${username}: ${response.status} ${await response.text()}`);
  const body = (await response.json()) as { access_token: string; expires_in: number; user: SignedIn['user'] };
  return { token: body.access_token, user: body.user };
}

/** Calls the REST api as a user. */
export async function apiCall<T>(url: string, token: string, method: string, path: string, body?: unknown): Promise<T> {
  const response = await fetch(`${url}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${await response.text()}`);
  return (response.status === 204 ? undefined : await response.json()) as T;
}

/**
 * Signs the browser in as the login page would (issue 8): a cookie login from the page's own
 * origin stores the httpOnly refresh cookie in the page's context, and the "this browser has a
 * session" flag is set once per tab, so the app signs itself in with a refresh on its first load.
 * Returns a separate bearer login (full lifetime) for the test's own API calls.
 */
export async function signIn(page: Page, url: string, username: DemoUser, password: string): Promise<SignedIn> {
  const session = await apiLogin(url, username, password);
  const response = await page.context().request.post(`${url}/api/auth/login`, {
    data: { username, password, cookie: true },
    headers: { origin: new URL(url).origin },
  });
  if (!response.ok()) throw new Error(`cookie login ${username}: ${response.status()} ${await response.text()}`);
  await page.addInitScript(() => {
    // Once per tab: a later sign-out in this tab must stay signed out across navigations.
    if (sessionStorage.getItem('e2e.flagged')) return;
    sessionStorage.setItem('e2e.flagged', '1');
    localStorage.setItem('airlock.signed-in', '1');
  });
  return session;
}

/** Types into the composer and presses Enter. */
export async function send(page: Page, text: string): Promise<void> {
  const composer = page.getByRole('textbox', { name: 'Message', exact: true });
  await composer.fill(text);
  await composer.press('Enter');
}

/** Waits until the connection dot is green. */
export async function connected(page: Page): Promise<void> {
  await expect(page.locator('.connection[data-status="connected"]')).toBeVisible({ timeout: 15_000 });
}

/** Saves a screenshot of a main state under test-results/screens/. */
export async function shot(page: Page, name: string): Promise<void> {
  mkdirSync('test-results/screens', { recursive: true });
  await page.screenshot({ path: `test-results/screens/${name}.png` });
}

export const test = base.extend<{ state: E2EState }>({
  state: async ({}, use) => use(readState()),
  baseURL: async ({}, use) => use(readState().main.url),
});

export { expect };

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

/** Puts a session into sessionStorage before the app loads, as the login page would. */
export async function signIn(page: Page, url: string, username: DemoUser, password: string): Promise<SignedIn> {
  const session = await apiLogin(url, username, password);
  const saved = JSON.stringify({ token: session.token, user: session.user, expiresAt: Date.now() + 3_600_000 });
  await page.addInitScript((value) => {
    if (!sessionStorage.getItem('airlock.session')) sessionStorage.setItem('airlock.session', value);
  }, saved);
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

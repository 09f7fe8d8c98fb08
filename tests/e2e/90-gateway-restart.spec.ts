/**
 * Runs last (file order): it kills the main deployment's process, as an outage would, and starts
 * it again on the same port behind the same nginx.
 */
import { join } from 'node:path';
import { connected, expect, send, shot, signIn, test } from './support/fixtures.ts';
import { readState, startProduct, stopProduct, writeState } from './support/product.ts';

test('gateway killed -> red dot -> restarted -> green and usable', async ({ page, state }) => {
  test.setTimeout(120_000);
  await signIn(page, state.main.url, 'operator', state.password);
  await page.goto('/');
  await connected(page);
  await send(page, "What's the health of payments-api?");
  await expect(page.getByTestId('answer').last()).toHaveAttribute('data-streaming', 'false', { timeout: 20_000 });

  await stopProduct(state.main.pid, 'SIGKILL');
  const dot = page.locator('.connection');
  // The idle probe notices within its interval; then 5 retries, 5 s apart.
  await expect(dot).toHaveAttribute('data-status', /retrying|offline/, { timeout: 20_000 });
  await expect(dot).toContainText('Gateway unreachable');
  await shot(page, '18-gateway-down');

  const restarted = await startProduct(state.main.port, state.main.env, join(state.logDir, 'main.log'));
  writeState({ ...readState(), main: { ...readState().main, pid: restarted.pid } });
  await expect(dot).toHaveAttribute('data-status', 'connected', { timeout: 30_000 });
  await shot(page, '19-gateway-back');

  await send(page, 'Search dashboards for latency');
  await expect(page.locator('[data-testid=tool-card][data-tool=search_dashboards]').last()).toHaveAttribute('data-status', 'done', { timeout: 20_000 });
  await expect(page.getByTestId('answer').last()).toHaveAttribute('data-streaming', 'false', { timeout: 20_000 });
});

test('after the automatic retries run out, Retry now reconnects', async ({ page, state }) => {
  test.setTimeout(120_000);
  await signIn(page, state.main.url, 'operator', state.password);
  await page.goto('/');
  await connected(page);
  const current = readState().main;
  await stopProduct(current.pid, 'SIGKILL');
  const dot = page.locator('.connection');
  // Probe (≤ 10 s) + 5 retries × 5 s, then it waits for the user.
  await expect(dot).toHaveAttribute('data-status', 'offline', { timeout: 60_000 });
  await expect(dot.getByRole('button', { name: 'Retry now' })).toBeVisible();
  await shot(page, '20-gateway-offline');
  const restarted = await startProduct(current.port, current.env, join(state.logDir, 'main.log'));
  writeState({ ...readState(), main: { ...current, pid: restarted.pid } });
  await dot.getByRole('button', { name: 'Retry now' }).click();
  await expect(dot).toHaveAttribute('data-status', 'connected', { timeout: 15_000 });
  await send(page, 'What can you do?');
  await expect(page.getByTestId('answer').last()).toHaveAttribute('data-streaming', 'false', { timeout: 20_000 });
});

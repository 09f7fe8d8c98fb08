/**
 * Runs last (file order): it kills the main deployment's process, as an outage would, and starts
 * it again on the same port behind the same nginx.
 */
import { join } from 'node:path';
import type { Page } from '@playwright/test';
import { connected, expect, send, shot, signIn, test } from './support/fixtures.ts';
import { answerText, lastStoredAnswer, ledgerEvents, newConversation, plain, runFinished } from './support/ledger.ts';
import { readState, startProduct, stopProduct, writeState, type E2EState } from './support/product.ts';

/** Starts the main deployment again on its port, behind the same nginx. */
async function restartMain(state: E2EState): Promise<void> {
  const current = readState().main;
  const restarted = await startProduct(current.port, current.env, join(state.logDir, 'main.log'));
  writeState({ ...readState(), main: { ...current, pid: restarted.pid } });
}

/** Whether a process we started is still there. */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

// A journey that failed while the gateway was down must not leave it down for the next ones.
test.afterEach(async ({ state }) => {
  if (!alive(readState().main.pid)) await restartMain(state);
});

/** An answer in the middle of streaming, in a conversation of its own; returns the conversation id. */
async function midAnswer(page: Page, state: E2EState): Promise<{ id: string; token: string }> {
  const { token } = await signIn(page, state.main.url, 'operator', state.password);
  const id = await newConversation(state.main.url, token, 'restart mid-answer');
  await page.goto(`/c/${id}`);
  await connected(page);
  await send(page, 'check health of all services');
  const answer = page.getByTestId('answer').last();
  await expect(answer).toHaveAttribute('data-streaming', 'true', { timeout: 20_000 });
  await expect.poll(async () => (await answer.innerText()).length).toBeGreaterThan(20);
  return { id, token };
}

/** While the gateway is down: Send is disabled with a short reason, and typed text stays. */
async function sendDisabledWhileDown(page: Page): Promise<void> {
  await expect(page.locator('.connection')).toHaveAttribute('data-status', /retrying|offline/, { timeout: 20_000 });
  const composer = page.getByRole('textbox', { name: 'Message', exact: true });
  await composer.fill('are you back?');
  const sendButton = page.getByRole('button', { name: 'Send' });
  await expect(sendButton).toBeDisabled();
  await expect(sendButton).toHaveAccessibleDescription(/reconnect/i);
  await composer.press('Enter');
  await expect(composer).toHaveValue('are you back?');
  // Error cards speak to people: no raw transport message and no code outside their details.
  for (const card of await page.getByTestId('error-card').all()) {
    expect(await card.innerText()).not.toMatch(/Connection errored out|[A-Z]{3,}_[A-Z_]+/);
  }
}

test('Ctrl+C mid-answer: the server finishes it; after the restart the tab shows it complete, no stale error, no reload', async ({ page, state }) => {
  test.setTimeout(120_000);
  const { id, token } = await midAnswer(page, state);
  // A second tab of the same browser, following the answer read-only: it must converge too.
  const other = await page.context().newPage();
  await other.goto(page.url());
  await connected(other);
  await stopProduct(readState().main.pid, 'SIGINT');
  await sendDisabledWhileDown(page);
  await shot(page, '21-ctrl-c-down');
  await restartMain(state);
  const restarted = Date.now();
  await expect(page.locator('.connection')).toHaveAttribute('data-status', 'connected', { timeout: 30_000 });

  const events = await ledgerEvents(state.main.url, token, id);
  expect(runFinished(events)).toBe(true);
  const stored = plain(lastStoredAnswer(events));
  expect(stored.length).toBeGreaterThan(100);
  await expect.poll(async () => plain(await answerText(page.getByTestId('answer').last())), { timeout: 15_000 }).toBe(stored);
  await expect(page.getByTestId('error-card')).toHaveCount(0);
  console.log(`Ctrl+C: the tab showed the stored answer ${Date.now() - restarted} ms after the gateway answered again`);
  await expect.poll(async () => plain(await answerText(other.getByTestId('answer').last())), { timeout: 15_000 }).toBe(stored);
  await expect(other.getByTestId('error-card')).toHaveCount(0);
  await expect(other.getByTestId('busy-banner')).toBeHidden();
  await expect(page.getByTestId('answer').last()).toHaveAttribute('data-streaming', 'false');
  // Send is back, with what was typed while the gateway was down.
  await expect(page.getByRole('textbox', { name: 'Message', exact: true })).toHaveValue('are you back?');
  await expect(page.getByRole('button', { name: 'Send' })).toBeEnabled();
  await shot(page, '22-ctrl-c-back');
});

test('kill -9 mid-answer: after the restart the tab shows the stored "stopped while answering", no reload', async ({ page, state }) => {
  test.setTimeout(120_000);
  const { id, token } = await midAnswer(page, state);
  await stopProduct(readState().main.pid, 'SIGKILL');
  await sendDisabledWhileDown(page);
  await restartMain(state);
  const restarted = Date.now();
  await expect(page.locator('.connection')).toHaveAttribute('data-status', 'connected', { timeout: 30_000 });

  // The restarted gateway settles the orphan; the tab converges to it by itself.
  await expect.poll(async () => runFinished(await ledgerEvents(state.main.url, token, id)), { timeout: 30_000 }).toBe(true);
  const error = page.getByTestId('error-card');
  await expect(error).toHaveCount(1, { timeout: 15_000 });
  await expect(error).toContainText('The server stopped while answering');
  console.log(`kill -9: the tab showed the stored error ${Date.now() - restarted} ms after the gateway answered again`);
  await expect(page.getByRole('button', { name: 'Stop' })).toBeHidden();
  await expect(page.getByRole('button', { name: 'Send' })).toBeEnabled();
  await shot(page, '23-kill-9-back');
});

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
  // The page's clock is Playwright's: the outage's waits (probe ≤ 10 s, then 5 retries × 5 s) are
  // skipped forward instead of waited out; each retry still really asks the dead gateway.
  await page.clock.install();
  await signIn(page, state.main.url, 'operator', state.password);
  await page.goto('/');
  await connected(page);
  const current = readState().main;
  await stopProduct(current.pid, 'SIGKILL');
  const dot = page.locator('.connection');
  const said = new Set<string>();
  await expect
    .poll(
      async () => {
        await page.clock.runFor(5_000);
        said.add((await dot.textContent())?.trim() ?? '');
        return dot.getAttribute('data-status');
      },
      { timeout: 60_000, intervals: [250] },
    )
    .toBe('offline');
  // It went through its retries on the way (each counted on the dot), not straight to offline.
  expect([...said].filter((text) => / retry \d of 5 /.test(text)).length).toBeGreaterThanOrEqual(2);
  await expect(dot.getByRole('button', { name: 'Retry now' })).toBeVisible();
  await shot(page, '20-gateway-offline');
  const restarted = await startProduct(current.port, current.env, join(state.logDir, 'main.log'));
  writeState({ ...readState(), main: { ...current, pid: restarted.pid } });
  await dot.getByRole('button', { name: 'Retry now' }).click();
  await expect(dot).toHaveAttribute('data-status', 'connected', { timeout: 15_000 });
  await send(page, 'What can you do?');
  await expect(page.getByTestId('answer').last()).toHaveAttribute('data-streaming', 'false', { timeout: 20_000 });
});

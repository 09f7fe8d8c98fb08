/**
 * Issue 29 items 5, 7 and 8: the keyboard shortcuts and their sheet, role-aware suggestions, and
 * accessibility: axe-core (0 critical, 0 serious) over login, empty, a conversation with a card and
 * an open result, search results with snippets, the approvals inbox and the mobile drawer; one <main> and one h1; the drawer closes on Esc and gives
 * focus back; the toast stays clear of the composer.
 */
import AxeBuilder from '@axe-core/playwright';
import type { Page } from '@playwright/test';
import { apiCall, connected, expect, send, signIn, test } from './support/fixtures.ts';

/** Violations by impact, critical and serious only (the counts asserted). */
async function axeCounts(page: Page): Promise<{ critical: number; serious: number; ids: string[] }> {
  const { violations } = await new AxeBuilder({ page }).analyze();
  const bad = violations.filter((v) => v.impact === 'critical' || v.impact === 'serious');
  return {
    critical: violations.filter((v) => v.impact === 'critical').length,
    serious: violations.filter((v) => v.impact === 'serious').length,
    ids: bad.map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`),
  };
}

async function landmarks(page: Page): Promise<void> {
  await expect(page.locator('main')).toHaveCount(1);
  await expect(page.locator('h1')).toHaveCount(1);
}

test.describe('shortcuts and accessibility', () => {
  test('axe: login, empty, a conversation with a card and an open result', async ({ page, state }) => {
    await page.goto('/login');
    await expect(page.getByRole('button', { name: /sign in/i })).toBeVisible();
    await landmarks(page);
    expect(await axeCounts(page)).toEqual({ critical: 0, serious: 0, ids: [] });

    await signIn(page, state.main.url, 'operator', state.password);
    await page.goto('/');
    await connected(page);
    await landmarks(page);
    expect(await axeCounts(page)).toEqual({ critical: 0, serious: 0, ids: [] });

    await send(page, 'Search dashboards for latency');
    const card = page.getByTestId('tool-card').first();
    await expect(card).toHaveAttribute('data-status', 'done', { timeout: 20_000 });
    await expect(page.getByTestId('answer').last()).toHaveAttribute('data-streaming', 'false', { timeout: 20_000 });
    await card.getByText('Result', { exact: true }).click();
    await expect(card.locator('pre')).toHaveAttribute('tabindex', '0');
    await landmarks(page);
    expect(await axeCounts(page)).toEqual({ critical: 0, serious: 0, ids: [] });
  });

  test('axe: the approvals inbox with a waiting approval; the title after the first answer and a search snippet, live', async ({ page, state }) => {
    await signIn(page, state.main.url, 'admin', state.password);
    await page.goto('/');
    await connected(page);
    const nav = page.getByRole('navigation', { name: 'Conversations' });
    // The first answer's end names the conversation: the sidebar shows the model's title, no reload.
    await send(page, 'Can you check the health of all services please?');
    await expect(page.getByTestId('answer').last()).toHaveAttribute('data-streaming', 'false', { timeout: 20_000 });
    await expect(nav.getByTestId('conversation').first()).toContainText('Health of all services', { timeout: 10_000 });

    // A search result says where the words are, the found word marked.
    await nav.getByRole('searchbox', { name: 'Search conversations' }).fill('health');
    const snippet = nav.getByTestId('search-snippet').first();
    await expect(snippet.locator('mark').first()).toHaveText(/^health$/i);
    expect(await axeCounts(page)).toEqual({ critical: 0, serious: 0, ids: [] });
    await nav.getByRole('searchbox', { name: 'Search conversations' }).fill('');

    await nav.getByRole('button', { name: 'New conversation' }).click();
    await send(page, 'Deploy checkout-api 2.4.1 to staging');
    await expect(page.getByTestId('confirm-card')).toHaveAttribute('data-status', 'pending', { timeout: 20_000 });
    await page.goto('/approvals');
    await expect(page.getByTestId('approval-row').first()).toBeVisible();
    await landmarks(page);
    expect(await axeCounts(page)).toEqual({ critical: 0, serious: 0, ids: [] });
  });

  test('the mobile drawer: axe, Esc closes it and focus goes back to its button', async ({ page, state }) => {
    await page.setViewportSize({ width: 390, height: 800 });
    await signIn(page, state.main.url, 'operator', state.password);
    await page.goto('/');
    await connected(page);
    const menu = page.getByRole('button', { name: 'Conversations' });
    await menu.click();
    await expect(page.getByRole('navigation', { name: 'Conversations' })).toBeVisible();
    expect(await axeCounts(page)).toEqual({ critical: 0, serious: 0, ids: [] });
    await page.getByRole('searchbox', { name: 'Search conversations' }).focus();
    await page.keyboard.press('Escape');
    await expect(page.getByRole('navigation', { name: 'Conversations' })).toBeHidden();
    await expect(menu).toBeFocused();
  });

  test('suggestions fit the role: no Deploy for a viewer or an operator', async ({ browser, state }) => {
    for (const [user, deploy, maintenance] of [['viewer', 0, 0], ['operator', 0, 1], ['admin', 1, 1]] as const) {
      const context = await browser.newContext({ baseURL: state.main.url });
      const page = await context.newPage();
      await signIn(page, state.main.url, user, state.password);
      await page.goto('/');
      await connected(page);
      await expect(page.getByRole('button', { name: 'What can you do?', exact: true })).toBeVisible();
      await expect(page.getByRole('button', { name: /^Deploy / })).toHaveCount(deploy);
      await expect(page.getByRole('button', { name: /^Start maintenance/ })).toHaveCount(maintenance);
      await context.close();
    }
  });

  test('shortcuts: the sheet, new chat, composer, copy last answer, conversations, Alt+N on a card', async ({ page, state, context }) => {
    await context.grantPermissions(['clipboard-read', 'clipboard-write']);
    const session = await signIn(page, state.main.url, 'operator', state.password);
    await page.goto('/');
    await connected(page);
    await page.keyboard.press('Control+/');
    const sheet = page.getByRole('dialog', { name: 'Keyboard shortcuts' });
    await expect(sheet).toBeVisible();
    await expect(sheet).toContainText('Ctrl+Shift+O');
    await page.keyboard.press('Escape');
    await expect(sheet).toBeHidden();

    await send(page, "What's the health of payments-api?");
    await expect(page).toHaveURL(/\/c\/[0-9a-f-]+$/);
    const first = page.url();
    const answer = page.getByTestId('answer').last();
    await expect(answer).toHaveAttribute('data-streaming', 'false', { timeout: 20_000 });
    await page.locator('body').click({ position: { x: 5, y: 300 } });
    await page.keyboard.press('Control+Shift+C');
    await expect(page.getByTestId('toast')).toContainText('Answer copied.');
    expect(await page.evaluate(() => navigator.clipboard.readText())).toContain('payments-api');
    // The toast is clear of the composer.
    const toast = await page.getByTestId('toast').boundingBox();
    const composer = await page.getByRole('textbox', { name: 'Message', exact: true }).boundingBox();
    expect(toast!.y + toast!.height).toBeLessThan(composer!.y);

    await page.keyboard.press('Control+Shift+O');
    await expect(page).toHaveURL(/\/$/);
    await page.keyboard.press('Shift+Escape');
    await expect(page.getByRole('textbox', { name: 'Message', exact: true })).toBeFocused();
    await send(page, 'Start maintenance on db-primary for 30 minutes because of a disk upgrade');
    const card = page.getByTestId('confirm-card');
    await expect(card).toBeFocused({ timeout: 20_000 });
    // With its "Allow for …" buttons shown (they confirm too): Alt+N is the Deny button, by name.
    await expect(card.getByTestId('grant-choices')).toBeVisible();
    await page.keyboard.press('Alt+N');
    await expect(card).toHaveAttribute('data-status', 'denied');
    const { grants } = await apiCall<{ grants: unknown[] }>(state.main.url, session.token, 'GET', '/api/agent/v1/grants');
    expect(grants).toEqual([]);
    await expect(page.getByTestId('answer').last()).toHaveAttribute('data-streaming', 'false', { timeout: 20_000 });
    // Alt+Down from the newest goes to the one before it: the first conversation.
    await page.keyboard.press('Alt+ArrowDown');
    await expect(page).toHaveURL(first);
    await page.keyboard.press('Alt+ArrowUp');
    await expect(page).not.toHaveURL(first);
  });
});

/**
 * Issue 29 item 2 in Chromium: Edit and Regenerate fork a branch, `‹ 1/2 ›` moves between
 * branches, and no branch runs an executed action again (the server's rule; the UI only asks).
 * - Edit a message sent after an executed deploy: its answer comes on branch 2/2, the backend
 *   still has one deployment, and "Previous branch" shows the original message (1/2).
 * - Regenerate the deploy's answer: a new card asks again; still one deployment until confirmed.
 * - Edit or Regenerate while a card waits asks first (issue 17's dialog); Keep waiting changes nothing.
 * - Issue 37 item 1: back to the earlier branch after an Edit of the first message, the tab is free
 *   (no "answering in another tab", Edit and Regenerate offered, no running dot), after a reload too.
 */
import type { Locator, Page } from '@playwright/test';
import { connected, expect, send, shot, signIn, test } from './support/fixtures.ts';
import { ledgerEvents } from './support/ledger.ts';
import { E2E_SERVICE_SECRET } from './support/product.ts';
import { serviceToken } from '../helpers/chat-client.ts';

/** Deployments of `version` the backend has: the tools API as the gateway reads it (list_deployments). */
async function deployments(url: string, user: string, service: string, version: string): Promise<number> {
  const response = await fetch(`${url}/api/tools/deployments?service=${service}&limit=50`, {
    headers: { authorization: `Bearer ${await serviceToken(url, E2E_SERVICE_SECRET)}`, 'x-user-jwt': user },
  });
  expect(response.status).toBe(200);
  return ((await response.json()) as { items: Array<{ version: string }> }).items.filter((d) => d.version === version).length;
}

const answered = (page: Page) => expect(page.getByTestId('answer').last()).toHaveAttribute('data-streaming', 'false', { timeout: 20_000 });
const userRow = (page: Page, text: string) => page.locator('.row.user').filter({ hasText: text });
const switchOf = (row: Locator) => row.getByTestId('branch-switch');

/** Asks a deploy and confirms it: the deploy ran once. */
async function deploy(page: Page, service: string, version: string): Promise<void> {
  await send(page, `Deploy ${service} ${version} to staging`);
  const card = page.getByTestId('confirm-card');
  await expect(card).toHaveAttribute('data-status', 'pending', { timeout: 20_000 });
  await card.getByRole('button', { name: 'Confirm' }).click();
  await expect(card).toHaveAttribute('data-status', 'confirmed', { timeout: 20_000 });
  await expect(page.locator('[data-testid=tool-card][data-tool=deploy_service]')).toHaveAttribute('data-status', 'done', { timeout: 20_000 });
  await answered(page);
}

test.describe('branches', () => {
  let token: string;
  test.beforeEach(async ({ page, state }) => {
    ({ token } = await signIn(page, state.main.url, 'admin', state.password));
    await page.goto('/');
    await connected(page);
  });

  test('Edit after an executed deploy: a new branch (2/2), the deploy not run again; Previous branch shows the original', async ({ page, state }) => {
    await deploy(page, 'payments-api', '8.3.1');
    expect(await deployments(state.main.url, token, 'payments-api', '8.3.1')).toBe(1);
    await send(page, 'Which deployments are running?');
    await answered(page);

    // The message just sent learns its stored id when its run ends: then it can be edited.
    const later = userRow(page, 'Which deployments are running?');
    await later.getByRole('button', { name: 'Edit' }).click();
    const editor = page.getByRole('textbox', { name: 'Edit message' });
    await expect(editor).toBeFocused();
    await expect(editor).toHaveValue('Which deployments are running?');
    await editor.fill("What's the health of payments-api?");
    await shot(page, '78-edit');
    await editor.press('Enter');

    const edited = userRow(page, "What's the health of payments-api?");
    await expect(edited).toBeVisible();
    await answered(page);
    await expect(switchOf(edited)).toContainText('2/2', { timeout: 20_000 });
    await expect(page.locator('.row.user')).toHaveCount(2);
    await expect(userRow(page, 'Which deployments are running?')).toHaveCount(0);
    await expect(page.getByTestId('confirm-card')).toHaveCount(1); // the executed deploy's, kept
    expect(await deployments(state.main.url, token, 'payments-api', '8.3.1')).toBe(1);
    await shot(page, '78-branch-2of2');

    await switchOf(edited).getByRole('button', { name: 'Previous branch' }).click();
    const original = userRow(page, 'Which deployments are running?');
    await expect(switchOf(original)).toContainText('1/2', { timeout: 20_000 });
    await expect(userRow(page, "What's the health of payments-api?")).toHaveCount(0);
    // And it stays the conversation's branch across a reload.
    await page.reload();
    await expect(switchOf(userRow(page, 'Which deployments are running?'))).toContainText('1/2', { timeout: 20_000 });
    expect(await deployments(state.main.url, token, 'payments-api', '8.3.1')).toBe(1);
  });

  test('Regenerate before an executed deploy: a new card asks again, and nothing deploys until it is confirmed', async ({ page, state }) => {
    await deploy(page, 'checkout-api', '7.4.2');
    await page.getByTestId('answer').last().getByRole('button', { name: 'Regenerate' }).click();

    const card = page.locator('[data-testid=confirm-card][data-status=pending]');
    await expect(card).toBeVisible({ timeout: 20_000 });
    await expect(card.getByRole('button', { name: 'Confirm' })).toBeVisible();
    await expect(card.getByRole('button', { name: 'Deny' })).toBeVisible();
    await expect(page.getByTestId('confirm-card')).toHaveCount(1); // the confirmed one stays on branch 1 (1/2)
    await expect(page.getByTestId('branch-switch')).toContainText('2/2', { timeout: 20_000 });
    expect(await deployments(state.main.url, token, 'checkout-api', '7.4.2')).toBe(1);
    await shot(page, '78-regenerate-new-card');

    await card.getByRole('button', { name: 'Confirm' }).click();
    await expect(page.getByTestId('confirm-card')).toHaveAttribute('data-status', 'confirmed', { timeout: 20_000 });
    await answered(page);
    await expect.poll(() => deployments(state.main.url, token, 'checkout-api', '7.4.2')).toBe(2);
  });

  test('Edit or Regenerate while a card waits asks first; Keep waiting changes nothing', async ({ page, state }) => {
    await send(page, "What's the health of all services?");
    await answered(page);
    const health = page.getByTestId('answer').last();
    await send(page, 'Deploy search-api 5.0.3 to staging');
    const card = page.getByTestId('confirm-card');
    await expect(card).toHaveAttribute('data-status', 'pending', { timeout: 20_000 });
    const id = new URL(page.url()).pathname.split('/').pop()!;
    const before = (await ledgerEvents(state.main.url, token, id)).length;
    const dialog = page.getByRole('dialog');

    await health.getByRole('button', { name: 'Regenerate' }).click();
    await expect(dialog).toBeVisible();
    await expect(dialog).toContainText('deny the pending deploy of search-api');
    await dialog.getByRole('button', { name: 'Keep waiting' }).click();
    await expect(dialog).toBeHidden();

    await userRow(page, 'Deploy search-api 5.0.3').getByRole('button', { name: 'Edit' }).click();
    await page.getByRole('textbox', { name: 'Edit message' }).fill('Deploy search-api 5.0.4 to staging');
    await page.getByTestId('edit-message').getByRole('button', { name: 'Send', exact: true }).click();
    await expect(dialog).toBeVisible();
    await shot(page, '78-fork-asks-first');
    await dialog.getByRole('button', { name: 'Keep waiting' }).click();
    await expect(dialog).toBeHidden();
    // The edit stays open with its text (nothing the user typed is lost); Cancel closes it.
    await expect(page.getByRole('textbox', { name: 'Edit message' })).toHaveValue('Deploy search-api 5.0.4 to staging');
    await page.getByTestId('edit-message').getByRole('button', { name: 'Cancel' }).click();

    // Nothing changed: the card waits, the messages are the ones sent, no branch, nothing logged.
    await expect(card).toHaveAttribute('data-status', 'pending');
    await expect(card.getByRole('button', { name: 'Confirm' })).toBeEnabled();
    await expect(page.locator('.user-bubble')).toHaveText(["What's the health of all services?", 'Deploy search-api 5.0.3 to staging']);
    await expect(page.getByTestId('branch-switch')).toHaveCount(0);
    expect((await ledgerEvents(state.main.url, token, id)).length).toBe(before);
    expect(await deployments(state.main.url, token, 'search-api', '5.0.4')).toBe(0);
  });

  test('Previous branch after editing the first message leaves the conversation free, after a reload too (issue 37 item 1)', async ({ page }) => {
    await send(page, "What's the health of payments-api?");
    await answered(page);
    await send(page, 'list recent deployments');
    await answered(page);
    await userRow(page, "What's the health of payments-api?").getByRole('button', { name: 'Edit' }).click();
    await page.getByRole('textbox', { name: 'Edit message' }).fill("What's the health of checkout-api?");
    await page.getByRole('textbox', { name: 'Edit message' }).press('Enter');
    const edited = userRow(page, "What's the health of checkout-api?");
    await answered(page);
    await expect(switchOf(edited)).toContainText('2/2', { timeout: 20_000 });
    await switchOf(edited).getByRole('button', { name: 'Previous branch' }).click();
    await expect(switchOf(userRow(page, "What's the health of payments-api?"))).toContainText('1/2', { timeout: 20_000 });

    const free = async () => {
      await expect(page.locator('.row.user')).toHaveCount(2);
      await expect(page.getByTestId('answer').last()).toHaveAttribute('data-streaming', 'false');
      await expect(page.getByTestId('busy-banner')).toHaveCount(0);
      await expect(page.locator('[data-testid=conversation][data-running]')).toHaveCount(0);
      await expect(userRow(page, 'list recent deployments').getByRole('button', { name: 'Edit' })).toBeEnabled();
      await expect(page.getByTestId('answer').last().getByRole('button', { name: 'Regenerate' })).toBeEnabled();
      await expect(page.getByRole('button', { name: 'Send', exact: true })).toBeVisible();
    };
    await free();
    await shot(page, '78-previous-branch-free');
    await page.reload();
    await connected(page);
    await expect(switchOf(userRow(page, "What's the health of payments-api?"))).toContainText('1/2', { timeout: 20_000 });
    await free();
  });
});

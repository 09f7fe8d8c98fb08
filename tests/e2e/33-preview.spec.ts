/**
 * Issue 27 items 3 and 4 in Chromium: the card shows the risk, the preview above the labelled
 * arguments; a deploy confirmed in another browser between the preview and this confirm makes
 * this confirm not run: the card says the state changed and a new card asks again, for the same
 * call, with a fresh preview naming the other deploy; confirming it deploys.
 */
import { connected, expect, send, shot, signIn, test } from './support/fixtures.ts';

test.describe('previews on the approval card', () => {
  test('production stands out; the preview is above the arguments, which have labels', async ({ page, state }) => {
    await signIn(page, state.main.url, 'admin', state.password);
    await page.goto('/');
    await connected(page);
    await send(page, 'Deploy payments-api 2.15.0 to production');
    const card = page.locator('[data-testid=confirm-card][data-status=pending]');
    await expect(card).toBeVisible({ timeout: 20_000 });
    await expect(card.getByTestId('approval-risk')).toContainText('Production');
    const preview = card.getByTestId('approval-preview');
    await expect(preview).toContainText(/payments-api production: \S+ → 2\.15\.0; last deploy .+ ago by \w+/);
    await expect(card.locator('dt')).toHaveText(['Service', 'Version', 'Environment']);
    const [p, dl] = [await preview.boundingBox(), await card.locator('dl').boundingBox()];
    expect(p!.y).toBeLessThan(dl!.y);
    await shot(page, '33-preview-card');
    await card.getByRole('button', { name: 'Deny' }).click();
    await expect(page.getByTestId('confirm-card').first()).toHaveAttribute('data-status', 'denied', { timeout: 20_000 });
  });

  test('a deploy in between: this confirm does not run, a new card asks again with a fresh preview', async ({ page, browser, state }) => {
    await signIn(page, state.main.url, 'admin', state.password);
    await page.goto('/');
    await connected(page);
    await send(page, 'Deploy inventory-service 3.1.0 to staging');
    const first = page.getByTestId('confirm-card').first();
    await expect(first).toHaveAttribute('data-status', 'pending', { timeout: 20_000 });
    await expect(first.getByTestId('approval-preview')).toContainText('→ 3.1.0');

    // Another browser deploys the same service and environment meanwhile.
    const other = await browser.newContext();
    const page2 = await other.newPage();
    await signIn(page2, state.main.url, 'admin', state.password);
    await page2.goto('/');
    await connected(page2);
    await send(page2, 'Deploy inventory-service 3.0.9 to staging');
    const card2 = page2.getByTestId('confirm-card');
    await expect(card2).toHaveAttribute('data-status', 'pending', { timeout: 20_000 });
    await card2.getByRole('button', { name: 'Confirm' }).click();
    await expect(page2.locator('[data-testid=tool-card][data-tool=deploy_service]')).toHaveAttribute('data-status', 'done', { timeout: 20_000 });
    await other.close();

    await first.getByRole('button', { name: 'Confirm' }).click();
    await expect(first).toHaveAttribute('data-status', 'denied', { timeout: 20_000 });
    await expect(first).toContainText('the state changed');
    const again = page.locator('[data-testid=confirm-card][data-status=pending]');
    await expect(again).toBeVisible({ timeout: 20_000 });
    await expect(again.getByTestId('approval-replaces')).toBeVisible();
    await expect(again.getByTestId('approval-preview')).toContainText(/inventory-service staging: 3\.0\.9 → 3\.1\.0; last deploy just now by admin/);
    await shot(page, '33-asked-again');
    await again.getByRole('button', { name: 'Confirm' }).click();
    await expect(page.locator('[data-testid=tool-card][data-tool=deploy_service]')).toHaveAttribute('data-status', 'done', { timeout: 20_000 });
    await expect(page.getByTestId('answer').last()).toContainText('3.1.0', { timeout: 20_000 });
  });
});

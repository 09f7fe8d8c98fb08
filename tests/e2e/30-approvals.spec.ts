import { connected, expect, send, shot, signIn, test } from './support/fixtures.ts';

const DEPLOY = 'Deploy checkout-api 2.4.1 to staging';

test.describe('approvals', () => {
  test('dangerous action -> confirmation card -> Confirm -> the resumed answer', async ({ page, state }) => {
    await signIn(page, state.main.url, 'admin', state.password);
    await page.goto('/');
    await connected(page);
    await send(page, DEPLOY);
    const card = page.getByTestId('confirm-card');
    await expect(card).toHaveAttribute('data-status', 'pending', { timeout: 20_000 });
    await expect(card).toContainText('deploy_service');
    await expect(card).toContainText('checkout-api');
    await expect(card).toContainText('2.4.1');
    await expect(card).toContainText('staging');
    await expect(card.locator('time')).toHaveText(/^[45]:\d\d$/);
    await expect(card).toBeFocused();
    await expect(page.getByTestId('announcer')).toContainText('Approval needed');
    await shot(page, '06-confirmation');

    await card.getByRole('button', { name: 'Confirm' }).click();
    await expect(card).toHaveAttribute('data-status', 'confirmed', { timeout: 20_000 });
    await expect(card).toContainText('Confirmed');
    const tool = page.locator('[data-testid=tool-card][data-tool=deploy_service]');
    await expect(tool).toHaveAttribute('data-status', 'done', { timeout: 20_000 });
    await expect(page.getByTestId('answer').last()).toHaveAttribute('data-streaming', 'false', { timeout: 20_000 });
    await expect(page.getByTestId('answer').last()).toContainText('2.4.1');
    await shot(page, '07-confirmed');
  });

  test('Deny: the card collapses to denied and nothing runs', async ({ page, state }) => {
    await signIn(page, state.main.url, 'operator', state.password);
    await page.goto('/');
    await connected(page);
    await send(page, 'Start maintenance on db-primary for 30 minutes because of a disk upgrade');
    const card = page.getByTestId('confirm-card');
    await expect(card).toHaveAttribute('data-status', 'pending', { timeout: 20_000 });
    await expect(card).toContainText('start_maintenance');
    await card.getByRole('button', { name: 'Deny' }).click();
    await expect(card).toHaveAttribute('data-status', 'denied', { timeout: 20_000 });
    // The agent is told the user denied it: the tool card reads as not done, with the reason.
    const tool = page.locator('[data-testid=tool-card][data-tool=start_maintenance]');
    await expect(tool).toHaveAttribute('data-status', 'error', { timeout: 20_000 });
    await expect(tool).toContainText('denied');
    await expect(page.getByTestId('answer').last()).toHaveAttribute('data-streaming', 'false', { timeout: 20_000 });
    await shot(page, '08-denied');
  });

  test('a viewer is forbidden to deploy: the refusal shows once, on the tool card, and the model says why', async ({ page, state }) => {
    await signIn(page, state.main.url, 'viewer', state.password);
    await page.goto('/');
    await connected(page);
    await send(page, DEPLOY);
    const card = page.getByTestId('confirm-card');
    // Whether the policy stops it before or after the confirmation, the outcome is a refusal.
    const refused = page.locator('[data-testid=tool-card][data-tool=deploy_service][data-refused=true]');
    await expect(card.or(refused).first()).toBeVisible({ timeout: 20_000 });
    if (await card.isVisible()) await card.getByRole('button', { name: 'Confirm' }).click();
    const answer = page.getByTestId('answer').last();
    await expect(answer).toHaveAttribute('data-streaming', 'false', { timeout: 20_000 });
    // Once: one card says it, no red error card repeats it, and the model's sentence follows the card.
    await expect(page.getByTestId('tool-card').filter({ hasText: 'Not allowed for your role' })).toHaveCount(1);
    await expect(refused).toHaveAttribute('data-status', 'error');
    await expect(page.getByTestId('error-card')).toHaveCount(0);
    await expect(page.getByText('Your role does not allow this action.')).toHaveCount(0);
    await expect(page.locator('div:has(> [data-testid=tool-card][data-refused=true]) ~ div [data-testid=answer]').last()).toHaveText(/\w/);
    await shot(page, '09-forbidden');
    // The stored transcript says it the same way after a reload.
    await page.reload();
    await expect(page.getByTestId('tool-card').filter({ hasText: 'Not allowed for your role' })).toHaveCount(1, { timeout: 20_000 });
    await expect(page.getByTestId('error-card')).toHaveCount(0);
  });

  test('reload during a pending approval, then confirm after the reload', async ({ page, state }) => {
    await signIn(page, state.main.url, 'admin', state.password);
    await page.goto('/');
    await connected(page);
    await send(page, 'Deploy payments-api 3.1.0 to staging');
    await expect(page.getByTestId('confirm-card')).toHaveAttribute('data-status', 'pending', { timeout: 20_000 });
    await expect(page).toHaveURL(/\/c\/[0-9a-f-]+$/);
    await page.reload();
    await connected(page);
    const card = page.getByTestId('confirm-card');
    await expect(card).toHaveAttribute('data-status', 'pending');
    await expect(card).toContainText('payments-api');
    await expect(card.locator('time')).toHaveText(/^[45]:\d\d$/);
    await expect(page.locator('.user-bubble')).toContainText('Deploy payments-api 3.1.0 to staging');
    await card.getByRole('button', { name: 'Confirm' }).click();
    await expect(card).toHaveAttribute('data-status', 'confirmed', { timeout: 20_000 });
    await expect(page.locator('[data-testid=tool-card][data-tool=deploy_service]')).toHaveAttribute('data-status', 'done', { timeout: 20_000 });
    await expect(page.getByTestId('answer').last()).toContainText('3.1.0', { timeout: 20_000 });
    // And after another reload, history renders the same cards as the live run did.
    await page.reload();
    await expect(page.getByTestId('confirm-card')).toHaveAttribute('data-status', 'confirmed');
    await expect(page.locator('[data-testid=tool-card][data-tool=deploy_service]')).toHaveAttribute('data-status', 'done');
  });

  test('keyboard only: type, Enter, Tab to Confirm, Enter', async ({ page, state }) => {
    await signIn(page, state.main.url, 'admin', state.password);
    await page.goto('/');
    await connected(page);
    // The composer has focus on a wide screen: no mouse from here on.
    await expect(page.getByRole('textbox', { name: 'Message', exact: true })).toBeFocused();
    // History pages come late (a loaded server): the one read when the run pauses, which gives the
    // shown items their stored ids, lands after the keyboard has moved on inside the card.
    await page.route('**/api/assistant/history?*', async (route) => {
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      await route.continue();
    });
    await page.keyboard.type('Deploy search-api 1.9.0 to staging');
    await page.keyboard.press('Enter');
    const card = page.getByTestId('confirm-card');
    await expect(card).toBeFocused({ timeout: 20_000 });
    await page.keyboard.press('Tab');
    await expect(card.getByRole('button', { name: 'Confirm' })).toBeFocused();
    // The message learns its stored id once that page arrives (its Edit appears): the card,
    // updated then, keeps the focus where the keyboard took it.
    await expect(page.getByRole('button', { name: 'Edit', exact: true })).toBeVisible({ timeout: 20_000 });
    await expect(card.getByRole('button', { name: 'Confirm' })).toBeFocused();
    await page.unroute('**/api/assistant/history?*');
    await shot(page, '10-keyboard-focus');
    await page.keyboard.press('Enter');
    await expect(card).toHaveAttribute('data-status', 'confirmed', { timeout: 20_000 });
    await expect(page.getByTestId('answer').last()).toHaveAttribute('data-streaming', 'false', { timeout: 20_000 });
    // Focus is back in the composer; Deny works the same way: Tab, Tab, Enter.
    await expect(page.getByRole('textbox', { name: 'Message', exact: true })).toBeFocused();
    await page.keyboard.type('Deploy search-api 1.9.1 to staging');
    await page.keyboard.press('Enter');
    const second = page.getByTestId('confirm-card').last();
    await expect(second).toBeFocused({ timeout: 20_000 });
    await page.keyboard.press('Tab');
    await page.keyboard.press('Tab');
    await expect(second.getByRole('button', { name: 'Deny' })).toBeFocused();
    await expect(page.getByRole('button', { name: 'Edit', exact: true })).toHaveCount(2, { timeout: 20_000 });
    await expect(second.getByRole('button', { name: 'Deny' })).toBeFocused();
    await page.keyboard.press('Enter');
    await expect(second).toHaveAttribute('data-status', 'denied', { timeout: 20_000 });
  });

  test('expiry: past expires_at the card shows expired and the action does not run', async ({ page, state }) => {
    await signIn(page, state.expiry.url, 'admin', state.password);
    await page.goto(`${state.expiry.url}/`);
    await connected(page);
    await send(page, 'Deploy inventory-api 5.0.0 to staging');
    const card = page.getByTestId('confirm-card');
    await expect(card).toHaveAttribute('data-status', 'pending', { timeout: 20_000 });
    await expect(card.locator('time')).toHaveText(/^0:0[0-8]$/);
    await expect(card).toHaveAttribute('data-status', 'expired', { timeout: 15_000 });
    await expect(card).toContainText('Expired');
    // The server expires it on time (issue 11) and tells the model: the tool reads as not done and
    // the answer that follows streams into this tab.
    const expiredTool = page.locator('[data-testid=tool-card][data-tool=deploy_service]');
    await expect(expiredTool).toHaveAttribute('data-status', 'error', { timeout: 20_000 });
    await expect(expiredTool).toContainText('expired');
    await expect(page.getByTestId('answer').last()).toHaveAttribute('data-streaming', 'false', { timeout: 20_000 });
    await shot(page, '11-expired');
    // The composer is free again, and the server agrees: the stored card reads expired after a new message.
    await send(page, 'What can you do?');
    await expect(page.getByTestId('answer').last()).toHaveAttribute('data-streaming', 'false', { timeout: 20_000 });
    await page.reload();
    await expect(page.getByTestId('confirm-card')).toHaveAttribute('data-status', 'expired');
    await expect(page.locator('[data-testid=tool-card][data-tool=deploy_service]')).toHaveAttribute('data-status', 'error');
  });
});

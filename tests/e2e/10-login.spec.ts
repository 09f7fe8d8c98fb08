import { connected, expect, shot, test } from './support/fixtures.ts';

test.describe('login', () => {
  test('signs in with the form and lands on the empty chat', async ({ page, state }) => {
    await page.goto('/');
    await expect(page).toHaveURL(/\/login\?/);
    await shot(page, '01-login');
    await page.getByLabel('Username').fill('operator');
    await page.getByLabel('Password').fill('wrong-password');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expect(page.getByRole('alert')).toHaveText('Wrong username or password.');

    await page.getByLabel('Password').fill(state.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expect(page).toHaveURL(/\/$/);
    await connected(page);
    await expect(page.getByRole('heading', { name: /Hello, operator/ })).toBeVisible();
    await expect(page.getByRole('button', { name: /^Start maintenance on db-primary/ })).toBeVisible();
    await expect(page.getByRole('button', { name: /^Deploy / })).toHaveCount(0); // an operator cannot deploy (issue 29 item 7)
    await expect(page.getByTestId('offline-notice')).toContainText('Offline demo model');
    await expect(page.locator('header')).toContainText('operator');
    await shot(page, '02-empty-state');
  });

  test('UNAUTHORIZED sends the user back to login and then to where they were', async ({ page, state }) => {
    await page.goto('/login');
    await page.getByLabel('Username').fill('viewer');
    await page.getByLabel('Password').fill(state.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await connected(page);
    await page.getByRole('textbox', { name: 'Message', exact: true }).fill('What can you do?');
    await page.keyboard.press('Enter');
    await expect(page).toHaveURL(/\/c\/[0-9a-f-]+$/);
    const here = new URL(page.url()).pathname;
    await expect(page.getByTestId('answer').last()).toHaveAttribute('data-streaming', 'false', { timeout: 20_000 });

    // The session ends (its cookie expired): the reload cannot renew the in-memory token.
    await page.context().clearCookies();
    await page.reload();
    await expect(page).toHaveURL(new RegExp(`/login\\?expired=1&next=${encodeURIComponent(here)}`));
    await expect(page.getByRole('status')).toContainText('Your session ended');
    await page.getByLabel('Username').fill('viewer');
    await page.getByLabel('Password').fill(state.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expect(page).toHaveURL(new RegExp(`${here}$`));
    await expect(page.getByTestId('answer').first()).toBeVisible();
  });
});

import { connected, expect, send, shot, signIn, test } from './support/fixtures.ts';

test('two tabs on one conversation: the second is read-only until the first finishes', async ({ context, state }) => {
  const first = await context.newPage();
  await signIn(first, state.main.url, 'admin', state.password);
  await first.goto('/');
  await connected(first);
  await send(first, 'Deploy orders-api 7.2.0 to staging');
  const card = first.getByTestId('confirm-card');
  await expect(card).toHaveAttribute('data-status', 'pending', { timeout: 20_000 });
  const url = first.url();

  // Same browser: the second tab learns through the BroadcastChannel (and the active endpoint).
  // sessionStorage is per tab, so it signs in too.
  const second = await context.newPage();
  await signIn(second, state.main.url, 'admin', state.password);
  await second.goto(url);
  await connected(second);
  const banner = second.getByTestId('busy-banner');
  await expect(banner).toBeVisible();
  await expect(banner).toContainText('waiting for a confirmation in another tab');
  const composer = second.getByRole('textbox', { name: 'Message', exact: true });
  await expect(composer).toHaveAttribute('readonly', '');
  await expect(second.getByTestId('confirm-card').getByRole('button', { name: 'Confirm' })).toBeDisabled();
  await shot(second, '12-second-tab-read-only');

  await card.getByRole('button', { name: 'Confirm' }).click();
  await expect(first.getByTestId('answer').last()).toHaveAttribute('data-streaming', 'false', { timeout: 20_000 });
  await expect(first.getByTestId('answer').last()).toContainText('7.2.0');

  // The first tab is done: the second becomes writable and shows what happened.
  await expect(banner).toBeHidden({ timeout: 10_000 });
  await expect(composer).not.toHaveAttribute('readonly', '');
  await expect(second.getByTestId('confirm-card')).toHaveAttribute('data-status', 'confirmed');
  await expect(second.locator('[data-testid=tool-card][data-tool=deploy_service]')).toHaveAttribute('data-status', 'done');
  await send(second, "What's the health of orders-api?");
  await expect(second.getByTestId('answer').last()).toHaveAttribute('data-streaming', 'false', { timeout: 20_000 });
});

test('another browser streaming on the conversation makes this one read-only (active endpoint)', async ({ browser, state }) => {
  const a = await browser.newContext();
  const b = await browser.newContext();
  const pageA = await a.newPage();
  const pageB = await b.newPage();
  await signIn(pageA, state.main.url, 'operator', state.password);
  await signIn(pageB, state.main.url, 'operator', state.password);
  await pageA.goto('/');
  await connected(pageA);
  await send(pageA, 'What can you do?');
  await expect(pageA.getByTestId('answer').last()).toHaveAttribute('data-streaming', 'false', { timeout: 20_000 });
  await pageB.goto(pageA.url());
  await connected(pageB);
  await expect(pageB.getByTestId('busy-banner')).toBeHidden();

  await send(pageA, 'Search dashboards for latency');
  await expect(pageB.getByTestId('busy-banner')).toContainText('answering in another tab', { timeout: 10_000 });
  await expect(pageB.getByRole('textbox', { name: 'Message', exact: true })).toHaveAttribute('readonly', '');
  await expect(pageA.getByTestId('answer').last()).toHaveAttribute('data-streaming', 'false', { timeout: 20_000 });
  await expect(pageB.getByTestId('busy-banner')).toBeHidden({ timeout: 10_000 });
  await expect(pageB.locator('[data-testid=tool-card][data-tool=search_dashboards]')).toBeVisible();
  await a.close();
  await b.close();
});

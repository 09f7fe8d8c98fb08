import { connected, expect, send, shot, signIn, test } from './support/fixtures.ts';

test('two tabs on one conversation: a pending approval is answerable in both; answered in one, the other resolves live', async ({ context, state }) => {
  const first = await context.newPage();
  await signIn(first, state.main.url, 'admin', state.password);
  await first.goto('/');
  await connected(first);
  await send(first, 'Deploy orders-api 7.2.0 to staging');
  const card = first.getByTestId('confirm-card');
  await expect(card).toHaveAttribute('data-status', 'pending', { timeout: 20_000 });

  // Same browser: the refresh cookie signs the second tab in.
  const second = await context.newPage();
  await second.goto(first.url());
  await connected(second);
  const secondCard = second.getByTestId('confirm-card');
  await expect(secondCard).toHaveAttribute('data-status', 'pending');
  await expect(second.getByTestId('busy-banner')).toBeHidden();
  await expect(secondCard.getByRole('button', { name: 'Confirm' })).toBeEnabled();
  await shot(second, '12-second-tab-same-approval');

  // Answered in the second tab: the first, which asked, sees it resolve and the answer stream in
  // without a reload, while it is read-only.
  await secondCard.getByRole('button', { name: 'Confirm' }).click();
  await expect(card).toHaveAttribute('data-status', 'confirmed', { timeout: 20_000 });
  await expect(first.locator('[data-testid=tool-card][data-tool=deploy_service]')).toHaveAttribute('data-status', 'done', { timeout: 20_000 });
  await expect(first.getByTestId('answer').last()).toContainText('7.2.0', { timeout: 20_000 });
  await expect(second.getByTestId('answer').last()).toHaveAttribute('data-streaming', 'false', { timeout: 20_000 });
  await expect(second.getByTestId('answer').last()).toContainText('7.2.0');

  // The run is over: both tabs are writable, and one confirmation ran one deployment.
  await expect(first.getByTestId('busy-banner')).toBeHidden({ timeout: 10_000 });
  await expect(first.locator('[data-testid=tool-card][data-tool=deploy_service]')).toHaveCount(1);
  await send(first, "What's the health of orders-api?");
  await expect(first.getByTestId('answer').last()).toHaveAttribute('data-streaming', 'false', { timeout: 20_000 });
});

test('another browser streaming on the conversation: this one says so (active endpoint), and a message sent here queues behind it (issue 24)', async ({ browser, state }) => {
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
  await expect(pageB.getByRole('button', { name: 'Queue' })).toBeVisible();
  await send(pageB, "What's the health of payments-api?");
  // It runs after the other browser's answer, in both browsers.
  await expect(pageB.locator('[data-testid=tool-card][data-tool=check_health]')).toBeVisible({ timeout: 30_000 });
  await expect(pageB.locator('[data-testid=tool-card][data-tool=search_dashboards]')).toBeVisible();
  await expect(pageB.getByTestId('answer').last()).toHaveAttribute('data-streaming', 'false', { timeout: 20_000 });
  await expect(pageB.getByTestId('busy-banner')).toBeHidden({ timeout: 10_000 });
  await expect(pageB.getByTestId('queued-messages')).toHaveCount(0);
  await pageA.reload();
  await connected(pageA);
  const log = await pageA.getByRole('log').innerText();
  expect(log.indexOf('Search dashboards for latency')).toBeGreaterThan(-1);
  expect(log.indexOf('Search dashboards for latency')).toBeLessThan(log.indexOf("What's the health of payments-api?"));
  await a.close();
  await b.close();
});

/**
 * Issue 29 item 3 (in part): the sidebar groups conversations by date (a new one is under Today),
 * and on a touch screen its links and its Rename and Delete buttons are at least 44 px tall.
 */
import { connected, expect, send, signIn, test } from './support/fixtures.ts';

test('date groups, and 44 px tap targets on a touch screen', async ({ browser, state }) => {
  const context = await browser.newContext({ baseURL: state.main.url, viewport: { width: 390, height: 800 }, hasTouch: true, isMobile: true });
  const page = await context.newPage();
  await signIn(page, state.main.url, 'viewer', state.password);
  await page.goto('/');
  await connected(page);
  await send(page, 'Search dashboards for latency');
  await expect(page.getByTestId('answer').last()).toHaveAttribute('data-streaming', 'false', { timeout: 20_000 });
  await page.getByRole('button', { name: 'Conversations' }).click();
  const nav = page.getByRole('navigation', { name: 'Conversations' });
  await expect(nav.getByTestId('date-group').first()).toHaveText('Today');
  const item = nav.getByTestId('conversation').first();
  for (const target of [item.getByRole('link'), item.getByRole('button', { name: /^Rename / }), item.getByRole('button', { name: /^Delete / })]) {
    const box = await target.boundingBox();
    expect(box!.height).toBeGreaterThanOrEqual(44);
  }
  const rename = await item.getByRole('button', { name: /^Rename / }).boundingBox();
  expect(rename!.width).toBeGreaterThanOrEqual(44);
  await context.close();
});

test('a running mark on the conversation whose answer is streaming', async ({ page, state }) => {
  await signIn(page, state.main.url, 'viewer', state.password);
  await page.goto('/');
  await connected(page);
  await send(page, 'What can you do?');
  const answer = page.getByTestId('answer').last();
  await expect(answer).toHaveAttribute('data-streaming', 'true', { timeout: 20_000 });
  const item = page.getByRole('navigation', { name: 'Conversations' }).getByTestId('conversation').first();
  await expect(item).toHaveAttribute('data-running', 'true');
  await expect(item.getByRole('link')).toContainText('answering');
  await expect(answer).toHaveAttribute('data-streaming', 'false', { timeout: 20_000 });
  await expect(item).not.toHaveAttribute('data-running', 'true');
});

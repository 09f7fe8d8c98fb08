/**
 * Issue 23 item 6: sending scrolls to the latest message; a reader who scrolled up is not pulled
 * down by new content, and gets a "Jump to latest" button instead.
 */
import { connected, expect, send, signIn, test } from './support/fixtures.ts';

const TABLE = 'check health of all services'; // a tool card and a table: tall enough to scroll

test('sending while scrolled up shows the new message; new content while scrolled up offers Jump to latest', async ({ page, state }) => {
  test.setTimeout(90_000);
  await page.setViewportSize({ width: 1280, height: 560 });
  await signIn(page, state.main.url, 'operator', state.password);
  await page.goto('/');
  await connected(page);
  const answers = page.getByTestId('answer');
  for (let i = 0; i < 2; i++) {
    await send(page, TABLE);
    await expect(answers.nth(i)).toHaveAttribute('data-streaming', 'false', { timeout: 20_000 });
  }
  const log = page.getByRole('log', { name: 'Conversation' });
  const jump = page.getByRole('button', { name: 'Jump to latest' });
  await expect(jump).toBeHidden();

  // 1. Scrolled up, the reader sends: the view goes to the new message.
  await log.hover();
  await page.mouse.wheel(0, -20_000);
  await expect(page.locator('.user-bubble').first()).toBeInViewport();
  await send(page, 'What can you do?');
  await expect(page.locator('.user-bubble').last()).toHaveText('What can you do?');
  await expect(page.locator('.user-bubble').last()).toBeInViewport();
  await expect(answers.nth(2)).toHaveAttribute('data-streaming', 'false', { timeout: 20_000 });
  await expect(answers.nth(2)).toBeInViewport();

  // 2. Scrolled up while an answer streams: the view stays, and the button offers the way down.
  await send(page, TABLE);
  await expect(answers.nth(3)).toHaveAttribute('data-streaming', 'true', { timeout: 20_000 });
  await log.hover();
  await page.mouse.wheel(0, -20_000);
  await expect(jump).toBeVisible();
  await expect(page.locator('.user-bubble').first()).toBeInViewport();
  await jump.click();
  await expect(jump).toBeHidden();
  await expect(answers.nth(3)).toHaveAttribute('data-streaming', 'false', { timeout: 20_000 });
  await expect(answers.nth(3)).toBeInViewport();
  await expect(page.getByRole('textbox', { name: 'Message', exact: true })).toBeInViewport();
});

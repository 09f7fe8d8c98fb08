/**
 * Queued input in the UI (issue 24 item 4): a message sent while the answer streams is listed
 * under it with "Remove queued message" and runs next; a removed one never reaches the
 * conversation. Real gateway, real offline model (30 ms a token), real nginx.
 */
import { connected, expect, send, signIn, test } from './support/fixtures.ts';

test.describe('queued input', () => {
  test.beforeEach(async ({ page, state }) => {
    await signIn(page, state.main.url, 'operator', state.password);
    await page.goto('/');
    await connected(page);
  });

  test('a message sent while the answer streams is queued under it, then runs as the next turn', async ({ page }) => {
    await send(page, 'What can you do?');
    const answer = page.getByTestId('answer').last();
    await expect(answer).toHaveAttribute('data-streaming', 'true', { timeout: 20_000 });
    await send(page, "What's the health of payments-api?");
    const queued = page.getByTestId('queued-messages');
    await expect(queued).toContainText("What's the health of payments-api?");
    await expect(queued.getByRole('button', { name: 'Remove queued message' })).toBeVisible();
    // The running answer is untouched; then the queued message becomes the next turn.
    await expect(page.getByTestId('tool-card').last()).toContainText('check_health', { timeout: 30_000 });
    await expect(queued).toHaveCount(0);
    await expect(page.getByTestId('answer').last()).toHaveAttribute('data-streaming', 'false', { timeout: 20_000 });
    await expect(page.getByTestId('answer').first()).toContainText('show_capabilities');
    // Stored in order: a reload shows both turns, the queued one second.
    await page.reload();
    await connected(page);
    const log = page.getByRole('log');
    await expect(log).toContainText("What's the health of payments-api?");
    const text = await log.innerText();
    expect(text.indexOf('What can you do?')).toBeLessThan(text.indexOf("What's the health of payments-api?"));
  });

  test('"Remove queued message" drops it before it starts: it never runs', async ({ page }) => {
    await send(page, 'What can you do?');
    await expect(page.getByTestId('answer').last()).toHaveAttribute('data-streaming', 'true', { timeout: 20_000 });
    await send(page, 'Search dashboards for latency');
    await send(page, "What's the health of payments-api?");
    const queued = page.getByTestId('queued-messages');
    const first = queued.getByRole('listitem').filter({ hasText: 'Search dashboards for latency' });
    await expect(first.getByRole('button', { name: 'Remove queued message' })).toBeEnabled();
    await first.getByRole('button', { name: 'Remove queued message' }).click();
    await expect(first).toHaveCount(0);
    await expect(page.getByTestId('tool-card').last()).toContainText('check_health', { timeout: 30_000 });
    await expect(page.getByTestId('answer').last()).toHaveAttribute('data-streaming', 'false', { timeout: 20_000 });
    await page.reload();
    await connected(page);
    await expect(page.getByRole('log')).toContainText("What's the health of payments-api?");
    await expect(page.getByRole('log')).not.toContainText('Search dashboards for latency');
    // No search_dashboards call ran (its card would show its argument).
    await expect(page.getByTestId('tool-card').filter({ hasText: 'query: latency' })).toHaveCount(0);
  });
});

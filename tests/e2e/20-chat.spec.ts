import { connected, expect, send, shot, signIn, test } from './support/fixtures.ts';

test.describe('chat', () => {
  test.beforeEach(async ({ page, state }) => {
    await signIn(page, state.main.url, 'operator', state.password);
    await page.goto('/');
    await connected(page);
  });

  test('asks a question and watches the answer stream in, token by token', async ({ page }) => {
    await send(page, 'What can you do?');
    await expect(page).toHaveURL(/\/c\/[0-9a-f-]+$/);
    const log = page.getByRole('log');
    const answer = page.getByTestId('answer').last();
    // While it streams: the log is busy and the text grows over several frames.
    await expect(log).toHaveAttribute('aria-busy', 'true');
    await expect(answer).toHaveAttribute('data-streaming', 'true');
    const lengths: number[] = [];
    for (let i = 0; i < 20 && (await answer.getAttribute('data-streaming')) === 'true'; i++) {
      lengths.push((await answer.innerText()).length);
      await page.waitForTimeout(60);
    }
    expect(new Set(lengths).size).toBeGreaterThan(2);
    await shot(page, '03-streaming');
    await expect(answer).toHaveAttribute('data-streaming', 'false', { timeout: 20_000 });
    await expect(log).toHaveAttribute('aria-busy', 'false');
    await expect(page.getByTestId('busy-banner')).toHaveCount(0);
    // Completion is announced once, politely; tokens are not.
    await expect(page.getByTestId('announcer')).toHaveText('Answer complete.');
    await expect(answer).toContainText('show_capabilities');
    await expect(page.getByRole('link', { name: 'What can you do?' })).toBeVisible();
    // Our own finished run is never mistaken for another tab's (the gate polls every 3 s).
    await page.waitForTimeout(3_500);
    await expect(page.getByTestId('busy-banner')).toHaveCount(0);
    await expect(page.getByRole('textbox', { name: 'Message', exact: true })).not.toHaveAttribute('readonly', '');
  });

  test('dark mode follows the system setting', async ({ page }) => {
    await page.emulateMedia({ colorScheme: 'dark' });
    await send(page, 'Search dashboards for latency');
    await expect(page.getByTestId('answer').last()).toHaveAttribute('data-streaming', 'false', { timeout: 20_000 });
    const background = await page.evaluate(() => getComputedStyle(document.body).backgroundColor);
    expect(background).toBe('rgb(21, 22, 24)');
    await expect(page.getByTestId('busy-banner')).toHaveCount(0);
    await shot(page, '21-dark');
  });

  test('a safe tool call shows a card: spinner, then check, duration and a collapsible result', async ({ page }) => {
    await send(page, 'Search dashboards for latency');
    const card = page.getByTestId('tool-card').first();
    await expect(card).toContainText('search_dashboards');
    await expect(card).toContainText('query: latency');
    await expect(card).toHaveAttribute('data-status', 'done', { timeout: 20_000 });
    await expect(card).toContainText(/\d+ ms|\d+\.\d s/);
    await card.getByText('Result', { exact: true }).click();
    await expect(card.locator('pre')).toContainText('checkout-latency');
    // The answer renders as markdown: a real table.
    await expect(page.getByTestId('answer').last().locator('table')).toBeVisible({ timeout: 20_000 });
    await expect(page.getByTestId('answer').last()).toHaveAttribute('data-streaming', 'false', { timeout: 20_000 });
    await shot(page, '04-tool-card');
  });

  test('Stop ends the answer mid-way and keeps what arrived, marked stopped', async ({ page }) => {
    await send(page, 'Search dashboards for latency');
    const answer = page.getByTestId('answer').last();
    await expect(answer).toHaveAttribute('data-streaming', 'true', { timeout: 20_000 });
    await page.getByRole('button', { name: 'Stop' }).click();
    await expect(answer).toHaveAttribute('data-streaming', 'false');
    await expect(answer).toContainText('Stopped');
    const partial = await answer.innerText();
    expect(partial).not.toContain('slo-overview');
    await expect(page.getByRole('button', { name: 'Send' })).toBeVisible();
    await expect(page.getByTestId('announcer')).toHaveText('Answer stopped.');
    await shot(page, '05-stopped');
    // The conversation stays usable.
    await send(page, "What's the health of payments-api?");
    await expect(page.getByTestId('tool-card').last()).toContainText('check_health');
    await expect(page.getByTestId('answer').last()).toHaveAttribute('data-streaming', 'false', { timeout: 20_000 });
  });

  test('Esc stops from the keyboard; Shift+Enter makes a new line', async ({ page }) => {
    const composer = page.getByRole('textbox', { name: 'Message', exact: true });
    await composer.fill('Search dashboards');
    await composer.press('Shift+Enter');
    await composer.pressSequentially('for latency');
    await expect(composer).toHaveValue('Search dashboards\nfor latency');
    await composer.press('Enter');
    await expect(page.getByTestId('answer').last()).toHaveAttribute('data-streaming', 'true', { timeout: 20_000 });
    await composer.press('Escape');
    await expect(page.getByTestId('answer').last()).toContainText('Stopped');
  });

  test('model output cannot inject script: raw HTML in a message is shown as text', async ({ page }) => {
    let alerted = false;
    page.on('dialog', async (d) => {
      alerted = true;
      await d.dismiss();
    });
    await send(page, 'Search dashboards for <img src=x onerror="alert(1)"><script>alert(2)</script>');
    await expect(page.getByTestId('answer').last()).toHaveAttribute('data-streaming', 'false', { timeout: 20_000 });
    await expect(page.locator('[role=log] img, [role=log] script')).toHaveCount(0);
    expect(alerted).toBe(false);
  });

  test('attaching a file uploads it through the gateway and shows a chip', async ({ page }) => {
    await page.locator('input[type=file]').setInputFiles({ name: 'incident-notes.txt', mimeType: 'text/plain', buffer: Buffer.from('disk full on db-primary') });
    const chip = page.getByTestId('file-chip');
    await expect(chip).toContainText('incident-notes.txt');
    await expect(chip).toHaveAttribute('data-status', 'ready');
    // Drag and drop onto the composer does the same.
    const dataTransfer = await page.evaluateHandle(() => {
      const dt = new DataTransfer();
      dt.items.add(new File(['df -h output'], 'disk-usage.log', { type: 'text/plain' }));
      return dt;
    });
    await page.dispatchEvent('form[aria-label="Message composer"]', 'dragover', { dataTransfer });
    await page.dispatchEvent('form[aria-label="Message composer"]', 'drop', { dataTransfer });
    await expect(chip).toHaveCount(2);
    await expect(chip.nth(1)).toContainText('disk-usage.log');
    await expect(chip.nth(1)).toHaveAttribute('data-status', 'ready');
    // A chip can be removed before sending.
    await page.getByRole('button', { name: 'Remove disk-usage.log' }).click();
    await expect(chip).toHaveCount(1);
    await send(page, "What's the health of db-primary?");
    await expect(page.locator('.user-bubble').last().getByTestId('file-chip')).toContainText('incident-notes.txt');
    await expect(page.getByTestId('answer').last()).toHaveAttribute('data-streaming', 'false', { timeout: 20_000 });
  });
});

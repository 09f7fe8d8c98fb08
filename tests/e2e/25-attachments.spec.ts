import { connected, expect, send, shot, signIn, test } from './support/fixtures.ts';

const LOG = [
  '2026-12-02 09:00:01 INFO  service starting',
  '2026-12-02 09:00:07 ERROR payment provider timeout after 5000 ms',
  '2026-12-02 09:00:08 INFO  retrying',
  '2026-12-02 09:00:13 WARN  health check failed: 3 consecutive errors',
].join('\n');
const PNG_1PX = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';

test.describe('attachments', () => {
  test.beforeEach(async ({ page, state }) => {
    await signIn(page, state.main.url, 'operator', state.password);
    await page.goto('/');
    await connected(page);
  });

  test('drop a log, ask what went wrong, see the quoted error lines; after a reload the chip shows name and size', async ({ page }) => {
    const dataTransfer = await page.evaluateHandle((text) => {
      const dt = new DataTransfer();
      dt.items.add(new File([text], 'app.log', { type: 'text/plain' }));
      return dt;
    }, LOG);
    await page.dispatchEvent('form[aria-label="Message composer"]', 'dragover', { dataTransfer });
    await page.dispatchEvent('form[aria-label="Message composer"]', 'drop', { dataTransfer });
    await expect(page.getByTestId('file-chip')).toHaveAttribute('data-status', 'ready');
    await send(page, 'What went wrong in the attached log?');
    const answer = page.getByTestId('answer').last();
    await expect(answer).toHaveAttribute('data-streaming', 'false', { timeout: 20_000 });
    await expect(answer).toContainText('ERROR payment provider timeout after 5000 ms');
    await expect(answer).toContainText('WARN  health check failed: 3 consecutive errors');
    await expect(answer).not.toContainText('retrying');
    await shot(page, '25-attachment-answer');

    await page.reload();
    await connected(page);
    const chip = page.locator('.user-bubble').last().getByTestId('file-chip');
    await expect(chip).toContainText('app.log');
    await expect(chip.getByTestId('file-size')).toHaveText(`${LOG.length} B`);
    // The owner downloads it (the name is a button: the file needs the bearer token).
    const download = page.waitForEvent('download');
    await chip.getByRole('button', { name: 'Download app.log' }).click();
    expect((await download).suggestedFilename()).toBe('app.log');
  });

  test('an image the offline model cannot see: the user is told once, under the message', async ({ page }) => {
    await page.locator('input[type=file]').setInputFiles({ name: 'pixel.png', mimeType: 'image/png', buffer: Buffer.from(PNG_1PX, 'base64') });
    await expect(page.getByTestId('file-chip')).toHaveAttribute('data-status', 'ready');
    await send(page, 'What is in this picture?');
    const note = page.locator('.user-bubble').last().getByTestId('file-note');
    await expect(note).toHaveText('pixel.png: The assistant cannot see images with the current model.');
    await expect(page.getByTestId('answer').last()).toHaveAttribute('data-streaming', 'false', { timeout: 20_000 });
    await expect(page.getByTestId('answer').last()).toContainText('cannot see images');
    await page.reload();
    await connected(page);
    await expect(page.locator('.user-bubble').last().getByTestId('file-note')).toHaveCount(1);
  });
});

/**
 * MCP tools in the browser: the main deployment loads the real filesystem MCP server (stdio) on a
 * notes folder. A read runs at once and shows its tool card; a write asks on a confirmation card
 * that names the server and shows the arguments, and writes once confirmed.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { connected, expect, send, shot, signIn, test } from './support/fixtures.ts';

test.describe('MCP tools', () => {
  test('reading a file shows an MCP tool card with its content', async ({ page, state }) => {
    await signIn(page, state.main.url, 'operator', state.password);
    await page.goto('/');
    await connected(page);
    await send(page, `Read the file ${join(state.notesDir, 'readme.txt')}`);
    const tool = page.locator('[data-testid=tool-card][data-tool=filesystem_read_file]');
    await expect(tool).toHaveAttribute('data-status', 'done', { timeout: 20_000 });
    await expect(page.getByTestId('confirm-card')).toHaveCount(0);
    await expect(page.getByTestId('answer').last()).toHaveAttribute('data-streaming', 'false', { timeout: 20_000 });
    await expect(page.getByTestId('answer').last()).toContainText('the door opens inward');
    await shot(page, '36-mcp-tool-card');
  });

  test('writing a file asks first, naming the server; Confirm writes it', async ({ page, state }) => {
    const target = join(state.notesDir, 'from-the-browser.txt');
    await signIn(page, state.main.url, 'operator', state.password);
    await page.goto('/');
    await connected(page);
    await send(page, `Write hello to ${target}`);
    const card = page.getByTestId('confirm-card');
    await expect(card).toHaveAttribute('data-status', 'pending', { timeout: 20_000 });
    await expect(card).toContainText('MCP server "filesystem"');
    await expect(card).toContainText(target);
    await expect(card).toContainText('hello');
    await shot(page, '36-mcp-confirmation');
    expect(() => readFileSync(target)).toThrow();

    await card.getByRole('button', { name: 'Confirm' }).click();
    await expect(card).toHaveAttribute('data-status', 'confirmed', { timeout: 20_000 });
    const tool = page.locator('[data-testid=tool-card][data-tool=filesystem_write_file]');
    await expect(tool).toHaveAttribute('data-status', 'done', { timeout: 20_000 });
    expect(readFileSync(target, 'utf8')).toBe('hello');
  });
});

/**
 * Issue 29 items 1, 6 and 9: Copy on every message (Markdown as text/plain, a table as text/html
 * too), code blocks highlighted on demand with their own Copy, the Theme control (remembered),
 * and the offline model's tables as a demo: rows needing attention first, relative times with
 * the ISO time as tooltip.
 */
import { connected, expect, send, shot, signIn, test } from './support/fixtures.ts';

test.describe('message tools', () => {
  test.beforeEach(async ({ page, state, context }) => {
    await context.grantPermissions(['clipboard-read', 'clipboard-write']);
    await signIn(page, state.main.url, 'operator', state.password);
    await page.goto('/');
    await connected(page);
  });

  const clipboard = (page: import('@playwright/test').Page) => page.evaluate(() => navigator.clipboard.readText());
  /**
   * What a click puts on the clipboard: the write is asynchronous (Markdown and HTML are built,
   * then written), so the clipboard is cleared first and read once the click's text is there.
   */
  const copiedBy = async (page: import('@playwright/test').Page, button: import('@playwright/test').Locator): Promise<string> => {
    await page.evaluate(() => navigator.clipboard.writeText(''));
    await button.click();
    await expect.poll(() => clipboard(page)).not.toBe('');
    return clipboard(page);
  };
  const clipboardHtml = (page: import('@playwright/test').Page) =>
    page.evaluate(async () => {
      const [item] = await navigator.clipboard.read();
      return item.types.includes('text/html') ? await (await item.getType('text/html')).text() : null;
    });

  test('Copy puts a message as Markdown on the clipboard, and a table as HTML too', async ({ page }) => {
    await send(page, "What's the health of all services?");
    const answer = page.getByTestId('answer').last();
    await expect(answer).toHaveAttribute('data-streaming', 'false', { timeout: 20_000 });
    // The user's message: its text.
    expect(await copiedBy(page, page.locator('.row.user').last().getByRole('button', { name: 'Copy', exact: true }))).toBe("What's the health of all services?");
    // The answer: its Markdown, the degraded service first and every service shown.
    const markdown = await copiedBy(page, answer.getByRole('button', { name: 'Copy', exact: true }));
    const lines = markdown.split('\n');
    const head = lines.findIndex((l) => l.startsWith('| service |'));
    expect(head).toBeGreaterThan(0);
    expect(lines[head + 2]).toMatch(/^\| search-api \| .* \| degraded \|/);
    expect(lines.filter((l) => /^\| [a-z-]+ \| .* \| (healthy|degraded|down) \|/.test(l))).toHaveLength(12);
    expect(markdown).not.toContain('more.');
    const html = await clipboardHtml(page);
    expect(html).toMatch(/<table>[\s\S]*<td>search-api<\/td>/);
    // A table's own Copy gives tab-separated values.
    const tsv = (await copiedBy(page, answer.getByRole('button', { name: 'Copy table' }).last())).split('\n');
    expect(tsv[0]).toBe('service\tdisplay_name\tstatus\tin_maintenance\tlatency_p95_ms');
    expect(tsv[1]).toMatch(/^search-api\tSearch API\tdegraded\t/);
  });

  test('a code block is highlighted (its language loaded on demand) and has its own Copy', async ({ page }) => {
    const chunks: string[] = [];
    page.on('request', (r) => chunks.push(r.url()));
    await send(page, 'How do I call the API from a script?');
    const answer = page.getByTestId('answer').last();
    await expect(answer).toHaveAttribute('data-streaming', 'false', { timeout: 20_000 });
    const bash = answer.locator('pre code.language-bash');
    await expect(bash.locator('.hljs-built_in, .hljs-string, .hljs-variable').first()).toBeVisible();
    await expect(answer.locator('pre code.language-json .hljs-attr').first()).toBeVisible();
    expect(await copiedBy(page, answer.locator('pre').first().getByRole('button', { name: 'Copy code' }))).toMatch(/^TOKEN=\$\(curl -s -X POST "\$AIRLOCK\/api\/auth\/login"[\s\S]*Bearer \$TOKEN"\n$/);
    // The code scrolls from the keyboard.
    await expect(answer.locator('pre').first()).toHaveAttribute('tabindex', '0');
    await shot(page, '70-code');
  });

  test('Theme: Dark and Light hold whatever the system says, and are remembered', async ({ page }) => {
    await page.emulateMedia({ colorScheme: 'light' });
    const background = () => page.evaluate(() => getComputedStyle(document.body).backgroundColor);
    expect(await background()).toBe('rgb(247, 247, 245)');
    const theme = page.getByRole('combobox', { name: 'Theme' });
    await theme.selectOption('dark');
    expect(await background()).toBe('rgb(21, 22, 24)');
    await page.reload();
    await connected(page);
    await expect(page.getByRole('combobox', { name: 'Theme' })).toHaveValue('dark');
    expect(await background()).toBe('rgb(21, 22, 24)');
    await page.emulateMedia({ colorScheme: 'dark' });
    await page.getByRole('combobox', { name: 'Theme' }).selectOption('light');
    expect(await background()).toBe('rgb(247, 247, 245)');
    await page.getByRole('combobox', { name: 'Theme' }).selectOption('system');
    expect(await background()).toBe('rgb(21, 22, 24)');
  });
});

import { connected, expect, send, test } from './support/fixtures.ts';

// Issue 9, item 7: pages carry SvelteKit's own hash-mode CSP (not the API's `default-src 'none'`),
// each security header once through nginx, and the whole UI runs under it without a violation.
test.describe('security headers', () => {
  test('the page CSP lets the UI sign in and stream, and reports no violation', async ({ page, state }) => {
    const violations: string[] = [];
    page.on('console', (message) => {
      if (/Content Security Policy|Refused to/i.test(message.text())) violations.push(message.text());
    });
    page.on('pageerror', (error) => violations.push(String(error)));

    const response = await page.goto('/login');
    const headers = response!.headers();
    const csp = headers['content-security-policy'];
    expect(csp).toMatch(/script-src 'self' 'sha256-[A-Za-z0-9+/=]+'/);
    expect(csp).toContain("object-src 'none'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).not.toContain("default-src 'none'");
    expect(headers['x-frame-options']).toBe('DENY');
    expect(headers['x-content-type-options']).toBe('nosniff');
    expect(headers['referrer-policy']).toBe('same-origin');

    await page.getByLabel('Username').fill('viewer');
    await page.getByLabel('Password').fill(state.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await connected(page);
    await send(page, 'What can you do?');
    await expect(page.getByTestId('answer').last()).toHaveAttribute('data-streaming', 'false', { timeout: 20_000 });
    await expect(page.getByTestId('answer').last()).not.toBeEmpty();
    expect(violations).toEqual([]);
  });
});

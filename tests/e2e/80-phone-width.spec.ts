/**
 * Issue 37 item 7: on a phone (360 x 740 and 390 x 844) no page overflows sideways: the document
 * is no wider than the screen (`scrollWidth`), and nothing sticks out past its right edge ("Sign
 * out" was off screen, the Theme select cut, at a 473 px wide document). Every page: sign-in, a new
 * chat, a conversation with a waiting approval card (and its Edit… fields), the approvals inbox,
 * Settings, and a decision link's page (one no longer valid: the page's frame and its words).
 * The main product of the global setup: no product of its own to start.
 */
import type { Browser, Page } from '@playwright/test';
import { connected, expect, send, shot, signIn, test } from './support/fixtures.ts';
import type { E2EState } from './support/product.ts';

/** How far the page reaches past the screen's right edge, and which visible elements do. */
async function sideways(page: Page): Promise<{ width: number; scrollWidth: number; outside: string[] }> {
  return page.evaluate(() => {
    const width = document.documentElement.clientWidth;
    const outside: string[] = [];
    for (const el of Array.from(document.querySelectorAll<HTMLElement>('body *'))) {
      const box = el.getBoundingClientRect();
      if (box.width === 0 || box.height === 0 || box.right <= width + 0.5) continue;
      // Inside a scroller of its own (a wide table, a code block): scrolled there, not the page.
      let scrolled = false;
      for (let p = el.parentElement; p && p !== document.body; p = p.parentElement) {
        const style = getComputedStyle(p);
        if (/(auto|scroll|hidden|clip)/.test(style.overflowX) && p.getBoundingClientRect().right <= width + 0.5) scrolled = true;
      }
      if (!scrolled) outside.push(`${el.tagName.toLowerCase()}${el.className && typeof el.className === 'string' ? '.' + el.className.split(' ')[0] : ''} "${(el.textContent ?? '').trim().slice(0, 30)}" right=${Math.round(box.right)}`);
    }
    return { width, scrollWidth: Math.max(document.documentElement.scrollWidth, document.body.scrollWidth), outside: outside.slice(0, 8) };
  });
}

async function fits(page: Page, where: string): Promise<void> {
  const m = await sideways(page);
  expect({ where, ...m }).toEqual({ where, width: m.width, scrollWidth: m.width, outside: [] });
}

async function phonePage(browser: Browser, state: E2EState, viewport: { width: number; height: number }, user?: 'admin'): Promise<Page> {
  const context = await browser.newContext({ baseURL: state.main.url, viewport, isMobile: true, hasTouch: true });
  const page = await context.newPage();
  if (user) await signIn(page, state.main.url, user, state.password);
  return page;
}

for (const viewport of [{ width: 360, height: 740 }, { width: 390, height: 844 }]) {
  test(`no page overflows sideways at ${viewport.width} x ${viewport.height}`, async ({ browser, state }) => {
    test.setTimeout(120_000);
    const out = await phonePage(browser, state, viewport);
    await out.goto('/login');
    await expect(out.getByRole('button', { name: /sign in/i })).toBeVisible();
    await fits(out, 'login');
    await out.context().close();

    const page = await phonePage(browser, state, viewport, 'admin');
    await page.goto('/');
    await connected(page);
    await fits(page, 'new chat');
    await expect(page.getByRole('button', { name: 'Sign out' })).toBeInViewport({ ratio: 1 });
    await expect(page.getByRole('combobox', { name: 'Theme' })).toBeInViewport({ ratio: 1 });

    await send(page, `Start maintenance on orders-api for 20 minutes because of a phone check ${viewport.width}`);
    const card = page.locator('[data-testid=confirm-card][data-status=pending]');
    await expect(card).toBeVisible({ timeout: 20_000 });
    await fits(page, 'conversation with a waiting card');
    await card.getByRole('button', { name: 'Edit…' }).click();
    await expect(card.getByTestId('arguments-editor')).toBeVisible();
    await fits(page, 'the card\'s Edit… fields');
    await shot(page, `80-phone-${viewport.width}-card`);

    const conversation = page.url();
    await page.goto('/approvals');
    await expect(page.getByRole('heading', { name: 'Approvals' })).toBeVisible({ timeout: 20_000 });
    await expect(page.getByTestId('approval-row').filter({ hasText: `phone check ${viewport.width}` })).toBeVisible({ timeout: 20_000 });
    await fits(page, 'approvals inbox');
    await page.goto('/settings');
    await expect(page.getByRole('heading', { level: 1 }).first()).toBeVisible();
    await fits(page, 'settings');

    await page.goto('/approve/not-a-valid-link-token-0123456789');
    await expect(page.getByTestId('link-problem')).toBeVisible({ timeout: 20_000 });
    await fits(page, 'decision link');
    await shot(page, `80-phone-${viewport.width}-link`);
    // Nothing left waiting in the shared product.
    await page.goto(conversation);
    await page.locator('[data-testid=confirm-card][data-status=pending]').getByRole('button', { name: 'Deny' }).click();
    await expect(page.locator('[data-testid=confirm-card][data-status=denied]')).toBeVisible({ timeout: 20_000 });
    await page.context().close();
  });
}

/**
 * Issue 23 item 5: the approval countdown starts at the true remaining time (the server's
 * expires_at against a clock corrected for skew) and never shows more than the timeout. A
 * recorder keeps every value the card's timer ever showed, the first render included.
 */
import type { Page } from '@playwright/test';
import { connected, expect, send, signIn, test } from './support/fixtures.ts';

const TIMEOUT_S = 300; // the main deployment's APPROVAL_TIMEOUT_S (the default)

/** Every countdown text the page shows, in seconds, from the first render on. */
async function recordCountdowns(page: Page): Promise<void> {
  await page.addInitScript(`(() => {
    const seen = (window.__countdowns = []);
    const snap = () => document.querySelectorAll('[data-testid=confirm-card] time').forEach((t) => {
      const [m, s] = t.textContent.split(':').map(Number);
      if (seen[seen.length - 1] !== m * 60 + s) seen.push(m * 60 + s);
    });
    const start = () => new MutationObserver(snap).observe(document.documentElement, { subtree: true, childList: true, characterData: true });
    if (document.documentElement) start();
    else document.addEventListener('DOMContentLoaded', start);
  })()`);
}

/** This browser's clock runs `ms` ahead of the server's (a laptop whose clock drifted). */
async function skewClock(page: Page, ms: number): Promise<void> {
  await page.addInitScript(`(() => {
    const Real = Date;
    class Skewed extends Real {
      constructor(...args) { if (args.length) super(...args); else super(Real.now() + ${ms}); }
      static now() { return Real.now() + ${ms}; }
    }
    globalThis.Date = Skewed;
  })()`);
}

async function askForDeploy(page: Page, service: string): Promise<number[]> {
  await send(page, `Deploy ${service} 1.0.0 to staging`);
  const card = page.getByTestId('confirm-card');
  await expect(card).toHaveAttribute('data-status', 'pending', { timeout: 20_000 });
  await expect(card.locator('time')).toBeVisible();
  await expect.poll(async () => ((await page.evaluate('window.__countdowns')) as number[]).length).toBeGreaterThanOrEqual(2);
  const seen = (await page.evaluate('window.__countdowns')) as number[];
  await card.getByRole('button', { name: 'Deny' }).click();
  await expect(card).toHaveAttribute('data-status', 'denied', { timeout: 20_000 });
  return seen;
}

test('a card shown long after the page loaded starts at the timeout, not above it', async ({ page, state }) => {
  await signIn(page, state.main.url, 'admin', state.password);
  await recordCountdowns(page);
  await page.goto('/');
  await connected(page);
  await page.waitForTimeout(6_000); // the page idles before the question: its clock must not be stale
  const seen = await askForDeploy(page, 'ledger-api');
  console.log(`countdown after 6 s idle: first shown ${seen[0]} s, highest ${Math.max(...seen)} s (timeout ${TIMEOUT_S} s)`);
  expect(Math.max(...seen)).toBeLessThanOrEqual(TIMEOUT_S);
  expect(seen[0]).toBeGreaterThanOrEqual(TIMEOUT_S - 5);
});

test("a browser clock 90 s ahead of the server's still counts down from the true remaining time", async ({ page, state }) => {
  await signIn(page, state.main.url, 'admin', state.password);
  await skewClock(page, 90_000);
  await recordCountdowns(page);
  await page.goto('/');
  await connected(page);
  const seen = await askForDeploy(page, 'billing-api');
  console.log(`countdown with the browser 90 s ahead: first shown ${seen[0]} s, highest ${Math.max(...seen)} s (timeout ${TIMEOUT_S} s)`);
  expect(Math.max(...seen)).toBeLessThanOrEqual(TIMEOUT_S);
  expect(seen[0]).toBeGreaterThanOrEqual(TIMEOUT_S - 5);
});

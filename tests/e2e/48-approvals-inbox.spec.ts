/**
 * Approvals from anywhere (issue 26, Proof e2e), in two browser contexts against the real product
 * behind the real nginx, with a POLICY_FILE on its own schema (tests/helpers/cluster.ts):
 * - an operator's maintenance request, routed by policy to admins, shows in the admin's /approvals
 *   in another browser context, live; the admin approves it in place and the operator's tab resolves
 *   live; the operator's title shows (1) while it waits;
 * - an admin's production deploy under a two-admin rule: the first other admin's approval shows
 *   "1 of 2" in the inbox and on the requester's card, the second completes it, the requester's tab
 *   resolves live and the deploy ran once;
 * - a decision through a one-use link on a phone-sized screen, signed in: the page shows exactly
 *   what will run, sends Referrer-Policy: no-referrer, and its Confirm decides once;
 * - after the opt-in, a desktop notification (the Notification API) for an approval that arrives
 *   while the tab is hidden, and none while it is shown.
 */
import { TWO_ADMIN_POLICY } from '../helpers/approval-policy.ts';
import { createPool } from '../../server/db/index.ts';
import { mintLinksForApproval } from '../../server/db/approval-links.ts';
import { connected, expect, send, shot, signIn, test } from './support/fixtures.ts';
import { PASSWORD, useApproversProduct } from './support/approvers.ts';

const app = useApproversProduct('inbox', TWO_ADMIN_POLICY);

async function deployments(version: string): Promise<number> {
  return (await app.product.query<{ n: number }>(`SELECT count(*)::int AS n FROM deployments WHERE version = $1`, [version]))[0].n;
}

test("an operator's maintenance, routed to admins, is approved from the admin's inbox; the operator's tab resolves live", async ({ browser }) => {
  const operator = await app.personPage(browser, 'operator');
  await connected(operator);
  const admin = await app.personPage(browser, 'admin', '/approvals');
  await expect(admin.getByRole('heading', { name: 'Approvals' })).toBeVisible();

  await send(operator, 'Start maintenance on payments-api for 30 minutes because of a disk swap');
  const card = operator.getByTestId('confirm-card');
  await expect(card).toHaveAttribute('data-status', 'pending', { timeout: 20_000 });
  // The requester's own pending approval counts in their title.
  await expect(operator).toHaveTitle(/^\(1\) /);
  await expect(operator.getByTestId('pending-mark')).toHaveCount(1);

  // It arrives in the admin's inbox with no reload, with the full arguments.
  const row = admin.getByTestId('approval-row').filter({ hasText: 'start_maintenance' });
  await expect(row).toHaveCount(1, { timeout: 20_000 });
  await expect(row).toContainText('asked by operator');
  await expect(row).toContainText('disk swap');
  await expect(admin).toHaveTitle(/^\(1\) /);
  await shot(admin, '48-inbox-pending');
  await row.getByRole('button', { name: 'Confirm' }).click();
  await expect(row).toHaveCount(0, { timeout: 20_000 });

  await expect(card).toHaveAttribute('data-status', 'confirmed', { timeout: 20_000 });
  await expect(operator.locator('[data-testid=tool-card][data-tool=start_maintenance]')).toHaveAttribute('data-status', 'done', { timeout: 20_000 });
  await expect(operator).not.toHaveTitle(/^\(\d+\) /);
  await operator.context().close();
  await admin.context().close();
});

test('opted in, an approval arriving while the tab is hidden fires one desktop notification; none while it is shown', async ({ browser }) => {
  const context = await browser.newContext({ baseURL: app.cluster.url });
  await context.grantPermissions(['notifications'], { origin: app.cluster.url });
  // Headless Chromium never hides a tab: the test sets document.hidden, and records each
  // Notification the page makes (the real one is still made).
  await context.addInitScript(() => {
    const w = window as unknown as { hidden: boolean; notes: unknown[]; Notification: typeof Notification };
    w.hidden = false;
    w.notes = [];
    Object.defineProperty(Document.prototype, 'hidden', { configurable: true, get: () => w.hidden });
    const Real = w.Notification;
    w.Notification = class extends Real {
      constructor(title: string, options?: NotificationOptions) {
        super(title, options);
        w.notes.push({ title, body: options?.body, tag: options?.tag });
      }
    };
  });
  const admin = await context.newPage();
  await signIn(admin, app.cluster.url, 'admin', PASSWORD);
  await admin.goto(`${app.cluster.url}/approvals`);
  await admin.getByRole('button', { name: 'Notify me on this desktop' }).click();
  await expect(admin.getByRole('button', { name: 'Desktop notifications: on' })).toBeVisible();
  const notes = () => admin.evaluate(() => (window as unknown as { notes: unknown[] }).notes);

  const operator = await app.personPage(browser, 'operator');
  await connected(operator);
  await send(operator, 'Start maintenance on search-api for 10 minutes because of a log rotation');
  const shown = admin.getByTestId('approval-row').filter({ hasText: 'log rotation' });
  await expect(shown).toHaveCount(1, { timeout: 20_000 });
  expect(await notes()).toEqual([]);

  await admin.evaluate(() => { (window as unknown as { hidden: boolean }).hidden = true; });
  await operator.getByRole('button', { name: 'New conversation' }).click();
  await send(operator, 'Start maintenance on search-api for 15 minutes because of a cache flush');
  await expect.poll(notes, { timeout: 20_000 }).toHaveLength(1);
  expect((await notes())[0]).toMatchObject({ title: 'Approval needed', body: expect.stringMatching(/^operator: .*cache flush/), tag: expect.stringMatching(/^approval-/) });

  // Nothing is left waiting for the next tests.
  await admin.evaluate(() => { (window as unknown as { hidden: boolean }).hidden = false; });
  for (const text of ['log rotation', 'cache flush']) {
    const row = admin.getByTestId('approval-row').filter({ hasText: text });
    await row.getByRole('button', { name: 'Deny' }).click();
    await expect(row).toHaveCount(0, { timeout: 20_000 });
  }
  await operator.context().close();
  await context.close();
});

test("an admin's production deploy under a two-admin rule: 1 of 2 everywhere, the second completes it, it ran once", async ({ browser }) => {
  const requester = await app.personPage(browser, 'admin');
  await connected(requester);
  const first = await app.personPage(browser, 'admin2', '/approvals');
  const second = await app.personPage(browser, 'admin3', '/approvals');

  await send(requester, 'Deploy checkout-api 9.4.2 to production');
  const card = requester.getByTestId('confirm-card');
  await expect(card).toHaveAttribute('data-status', 'pending', { timeout: 20_000 });
  await expect(card.getByTestId('approval-progress')).toHaveText('Needs 2 approvals');
  await expect(requester).toHaveTitle(/^\(1\) /);

  const firstRow = first.getByTestId('approval-row').filter({ hasText: '9.4.2' });
  await expect(firstRow).toHaveCount(1, { timeout: 20_000 });
  await firstRow.getByRole('textbox', { name: 'Reason' }).fill('checked the change list');
  await firstRow.getByRole('button', { name: 'Confirm' }).click();
  await expect(firstRow.getByTestId('approval-progress')).toHaveText('1 of 2 approved (by admin2)', { timeout: 20_000 });
  // Issue 37 item 4: who approved reads whom it waits for, and has nothing left to press.
  await expect(firstRow.getByTestId('approval-waiting')).toHaveText(/^You approved\. Waiting for one more from: .*another admin$/);
  await expect(firstRow.getByRole('button', { name: 'Confirm' })).toHaveCount(0);
  await expect(firstRow.getByRole('button', { name: 'Deny' })).toHaveCount(0);
  await expect(firstRow.getByRole('button', { name: 'Edit…' })).toHaveCount(0);

  // "1 of 2" everywhere: the other approver's inbox and the requester's card, live.
  const secondRow = second.getByTestId('approval-row').filter({ hasText: '9.4.2' });
  await expect(secondRow.getByTestId('approval-progress')).toHaveText('1 of 2 approved (by admin2)', { timeout: 20_000 });
  // Not the requester's: no conversation link, the requester's message instead; still theirs to decide.
  await expect(secondRow.getByTestId('request-message')).toContainText('Deploy checkout-api 9.4.2 to production');
  await expect(secondRow.getByRole('link', { name: 'Open the conversation' })).toHaveCount(0);
  await expect(secondRow.getByTestId('approval-waiting')).toHaveCount(0);
  await expect(card.getByTestId('approval-progress')).toHaveText('1 of 2 approved (by admin2)', { timeout: 20_000 });
  await expect(card).toHaveAttribute('data-status', 'pending');
  expect(await deployments('9.4.2')).toBe(0);
  await shot(second, '48-inbox-one-of-two');
  // A reload shows the card as it was live: 1 of 2, by admin2 (the stored history's card).
  await requester.reload();
  await connected(requester);
  await expect(card.getByTestId('approval-progress')).toHaveText('1 of 2 approved (by admin2)', { timeout: 20_000 });
  await expect(card).toHaveAttribute('data-status', 'pending');

  await secondRow.getByRole('button', { name: 'Confirm' }).click();
  await expect(card).toHaveAttribute('data-status', 'confirmed', { timeout: 20_000 });
  await expect(requester.locator('[data-testid=tool-card][data-tool=deploy_service]')).toHaveAttribute('data-status', 'done', { timeout: 20_000 });
  expect(await deployments('9.4.2')).toBe(1);
  for (const p of [requester, first, second]) await p.context().close();
});

test('a decision through a one-use link, on a phone, with a browser session', async ({ browser }) => {
  const operator = await app.personPage(browser, 'operator');
  await connected(operator);
  await send(operator, 'Start maintenance on orders-api for 20 minutes because of a kernel patch');
  const card = operator.getByTestId('confirm-card');
  await expect(card).toHaveAttribute('data-status', 'pending', { timeout: 20_000 });
  const pool = createPool(app.product.databaseUrl, { max: 1 });
  let url: string;
  try {
    const { rows } = await pool.query(`SELECT id FROM approvals WHERE status = 'pending' AND args->>'service' = 'orders-api'`);
    // As a notification would: one link per designated approver (the admins).
    const links = await mintLinksForApproval(pool, rows[0].id);
    url = `${app.cluster.url}/approve/${links.find((l) => l.user === 'admin')!.token}`;
  } finally {
    await pool.end();
  }

  const phone = await browser.newContext({ baseURL: app.cluster.url, viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true });
  const page = await phone.newPage();
  await signIn(page, app.cluster.url, 'admin', PASSWORD);
  const response = await page.goto(url);
  expect(response!.headers()['referrer-policy']).toBe('no-referrer');
  const view = page.getByTestId('approval-link');
  await expect(view).toContainText('orders-api', { timeout: 20_000 });
  await expect(view.getByLabel('Arguments')).toContainText('kernel patch');
  await shot(page, '48-link-phone');
  await view.getByRole('button', { name: 'Confirm' }).click();
  await expect(page.getByTestId('link-outcome')).toHaveText('Done: the action is approved.', { timeout: 20_000 });
  await expect(card).toHaveAttribute('data-status', 'confirmed', { timeout: 20_000 });
  // The link is spent: opening it again says so and offers nothing to press.
  await page.goto(url);
  await expect(page.getByTestId('link-problem')).toHaveText('This link was already used.', { timeout: 20_000 });
  await expect(page.getByRole('button', { name: 'Confirm' })).toHaveCount(0);
  await operator.context().close();
  await phone.close();
});

import { randomBytes } from 'node:crypto';
import { apiCall, connected, expect, shot, signIn, test } from './support/fixtures.ts';

test('conversations: search, load more on scroll, delete with undo, archived view with restore', async ({ page, state }) => {
  const session = await signIn(page, state.main.url, 'viewer', state.password);
  const tag = `runbook${randomBytes(3).toString('hex')}`;
  for (let i = 1; i <= 35; i++) {
    await apiCall(state.main.url, session.token, 'POST', '/api/assistant/conversations', { title: `${tag} step ${i}` });
  }
  await page.goto('/');
  await connected(page);
  const nav = page.getByRole('navigation', { name: 'Conversations' });
  const rows = nav.getByTestId('conversation');

  // Newest first.
  await expect(rows.first()).toContainText(`${tag} step 35`);

  // Search: only this run's conversations, the first page of 30.
  await nav.getByRole('searchbox', { name: 'Search conversations' }).fill(tag);
  // The search applies after a pause in typing (no date groups in results); the unfiltered list
  // shows 30 rows too, so the count alone would not say the search ran.
  await expect(nav.getByTestId('date-group')).toHaveCount(0);
  await expect(rows).toHaveCount(30);
  await expect(rows.first()).toContainText(`${tag} step 35`);

  // Load more when the end of the list scrolls into view.
  await nav.getByRole('button', { name: 'Load more' }).scrollIntoViewIfNeeded();
  await expect(rows).toHaveCount(35);
  await expect(rows.last()).toContainText(`${tag} step 1`);
  await expect(nav.getByRole('button', { name: 'Load more' })).toHaveCount(0);
  await shot(page, '13-sidebar-search');

  // Delete, then Undo from the toast.
  await nav.getByRole('button', { name: `Delete ${tag} step 34` }).click();
  await expect(nav.getByText(`${tag} step 34`, { exact: true })).toHaveCount(0);
  const toast = page.getByTestId('toast');
  await expect(toast).toContainText(`“${tag} step 34” deleted.`);
  await shot(page, '14-undo-toast');
  await toast.getByRole('button', { name: 'Undo' }).click();
  await expect(nav.getByText(`${tag} step 34`, { exact: true })).toBeVisible();
  // The server agrees: it is not archived.
  const live = await apiCall<{ items: { title: string }[] }>(state.main.url, session.token, 'GET', `/api/assistant/conversations?q=${tag}&limit=100`);
  expect(live.items.map((c) => c.title)).toContain(`${tag} step 34`);

  // Delete for good, find it in the archived view, restore it.
  await nav.getByRole('button', { name: `Delete ${tag} step 33` }).click();
  await expect(nav.getByText(`${tag} step 33`, { exact: true })).toHaveCount(0);
  await nav.getByRole('button', { name: 'Archived' }).click();
  await expect(nav.getByRole('button', { name: 'Archived' })).toHaveAttribute('aria-pressed', 'true');
  await expect(nav.getByText(`${tag} step 33`, { exact: true })).toBeVisible();
  await shot(page, '15-archived');
  await nav.getByRole('button', { name: `Restore ${tag} step 33` }).click();
  await expect(nav.getByText(`${tag} step 33`, { exact: true })).toHaveCount(0);
  await nav.getByRole('button', { name: 'Recent' }).click();
  await expect(nav.getByText(`${tag} step 33`, { exact: true })).toBeVisible();

  // Rename inline.
  await nav.getByRole('button', { name: `Rename ${tag} step 35` }).click();
  const title = nav.getByRole('textbox', { name: 'Conversation title' });
  await title.fill(`${tag} renamed`);
  await title.press('Enter');
  await expect(nav.getByText(`${tag} renamed`, { exact: true })).toBeVisible();
  // The list renames at once; the server's PATCH lands a moment later.
  const titles = async () => (await apiCall<{ items: { title: string }[] }>(state.main.url, session.token, 'GET', `/api/assistant/conversations?q=${tag}&limit=100`)).items.map((c) => c.title);
  await expect.poll(titles).toContain(`${tag} renamed`);
});

test('narrow screens: the sidebar collapses behind a menu button', async ({ page, state }) => {
  await page.setViewportSize({ width: 390, height: 800 });
  await signIn(page, state.main.url, 'operator', state.password);
  await page.goto('/');
  await connected(page);
  const nav = page.getByRole('navigation', { name: 'Conversations' });
  await expect(nav).toBeHidden();
  await shot(page, '16-narrow');
  const menu = page.getByRole('button', { name: 'Conversations', exact: true });
  await menu.click();
  await expect(menu).toHaveAttribute('aria-expanded', 'true');
  await expect(nav).toBeVisible();
  await shot(page, '17-narrow-sidebar');
  await nav.getByRole('button', { name: 'New conversation' }).click();
  await expect(page.getByRole('heading', { name: /What needs doing/ })).toBeVisible();
});

/**
 * Issue 27 item 1 in Chromium ("Edit, then approve"), against the real product behind the real
 * nginx, with a POLICY_FILE of issue 20's `when` rules on its own schema:
 * - edit the version on the card and confirm: the tool card and the final answer name the edited
 *   version, and only the edited version was deployed; while editing, the card shows the risk of
 *   what would run and says its preview is of the proposed arguments, and a value the tool's schema
 *   refuses is said by its field;
 * - an operator edits a maintenance into db-primary (admin-only): refused, with the approvers it
 *   needs named; nothing opened;
 * - in the inbox, an admin edits another admin's staging deploy into production (a two-admin rule):
 *   it now needs a second admin, who approves it; production got the deploy once. A value the
 *   schema refuses is said by its field there too;
 * - issue 37 item 2: a number edit (a maintenance of 30 minutes made 45, after values
 *   out of range both ways): each refusal is said by the Duration field, and 45 is what runs;
 * - issue 37 item 3: an edit into an environment that does not exist: the decided card reads
 *   "Approved with changes by admin: environment staging → moon", live and after a reload, and the
 *   tool line says the tool's error, not the note written for the model; while editing, an edit
 *   into production (two approvers) is said before Confirm (the policy's dry run).
 */
import type { Browser } from '@playwright/test';
import { connected, expect, send, shot, test } from './support/fixtures.ts';
import { EDIT_POLICY } from '../helpers/approval-policy.ts';
import { useApproversProduct } from './support/approvers.ts';

const app = useApproversProduct('edit', EDIT_POLICY);

/** `user` asks for `message` and presses Edit… on the card that waits: the page, the card and its editor. */
async function openEditor(browser: Browser, user: string, message: string) {
  const page = await app.personPage(browser, user);
  await connected(page);
  await send(page, message);
  const pending = page.locator('[data-testid=confirm-card][data-status=pending]');
  await expect(pending).toBeVisible({ timeout: 20_000 });
  await pending.getByRole('button', { name: 'Edit…' }).click();
  return { page, pending, editor: pending.getByTestId('arguments-editor') };
}

const deployments = async (version: string, environment: string) =>
  (await app.product.query<{ n: number }>(`SELECT count(*)::int AS n FROM deployments WHERE version = $1 AND environment = $2`, [version, environment]))[0].n;

test('edit the version and confirm: the tool card and the final answer name the edited version', async ({ browser }) => {
  const page = await app.personPage(browser, 'admin');
  await connected(page);
  await send(page, 'Deploy checkout-api 6.1.0 to staging');
  const pending = page.locator('[data-testid=confirm-card][data-status=pending]');
  await expect(pending).toBeVisible({ timeout: 20_000 });
  await pending.getByRole('button', { name: 'Edit…' }).click();
  const editor = pending.getByTestId('arguments-editor');
  // No grant with an edit: the grant buttons go while editing.
  await expect(pending.getByTestId('grant-choices')).toHaveCount(0);
  // The card shows what the edit would run: its risk, and that the preview is of the proposal.
  await expect(pending.getByTestId('approval-preview')).toBeVisible();
  await expect(pending.getByTestId('approval-preview-stale')).toHaveCount(0);
  await expect(pending.getByTestId('approval-risk')).toHaveCount(0);
  await editor.locator('input[name=environment]').fill('production');
  await expect(pending.getByTestId('approval-risk')).toBeVisible();
  await expect(pending.getByTestId('approval-preview-stale')).toBeVisible();
  await editor.locator('input[name=environment]').fill('staging');
  await expect(pending.getByTestId('approval-risk')).toHaveCount(0);
  await expect(pending.getByTestId('approval-preview-stale')).toHaveCount(0);
  // A version the tool's schema refuses: the server's words go by the field, which keeps the edit.
  await editor.locator('input[name=version]').fill('');
  await editor.getByRole('button', { name: 'Confirm with these arguments' }).click();
  const versionError = editor.locator('label', { has: page.locator('input[name=version]') }).getByRole('alert');
  await expect(versionError).toBeVisible({ timeout: 20_000 });
  await expect(editor.locator('input[name=version]')).toHaveAttribute('aria-invalid', 'true');
  await expect(editor.locator('input[name=environment]')).toHaveValue('staging');
  await expect(page.getByTestId('error-card')).toHaveCount(0);
  await expect(pending).toHaveAttribute('data-status', 'pending');
  await editor.locator('input[name=version]').fill('6.1.1');
  await expect(pending.getByTestId('approval-preview-stale')).toBeVisible();
  await shot(page, '35-edit-card');
  await editor.getByRole('button', { name: 'Confirm with these arguments' }).click();

  const tool = page.locator('[data-testid=tool-card][data-tool=deploy_service]');
  await expect(tool).toHaveAttribute('data-status', 'done', { timeout: 20_000 });
  await expect(tool).toContainText('6.1.1');
  const answer = page.getByTestId('answer').last();
  await expect(answer).toHaveAttribute('data-streaming', 'false', { timeout: 20_000 });
  await expect(answer).toContainText('6.1.1');
  await expect(answer).not.toContainText('6.1.0');
  expect(await deployments('6.1.1', 'staging')).toBe(1);
  expect(await deployments('6.1.0', 'staging')).toBe(0);
  await page.context().close();
});

test('a number edit: Duration 45 runs with 45; -5 and 2000 are said by the field (issue 37 item 2)', async ({ browser }) => {
  const { page, pending, editor } = await openEditor(browser, 'admin', 'Start maintenance on orders-api for 30 minutes because of a schema migration');
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(e.message));
  const duration = editor.locator('input[name=duration_minutes]');
  await expect(duration).toHaveValue('30');
  const durationError = editor.locator('label', { has: page.locator('input[name=duration_minutes]') }).getByRole('alert');
  // Out of range both ways (the tool's schema allows 1..1440, as the api does): said by the field.
  for (const [wrong, said] of [['-5', '>=1'], ['2000', '<=1440']]) {
    await duration.fill(wrong);
    await editor.getByRole('button', { name: 'Confirm with these arguments' }).click();
    await expect(durationError).toContainText(said, { timeout: 20_000 });
    await expect(duration).toHaveAttribute('aria-invalid', 'true');
    await expect(duration).toHaveValue(wrong);
    await expect(pending).toHaveAttribute('data-status', 'pending');
  }
  await duration.fill('45');
  await editor.getByRole('button', { name: 'Confirm with these arguments' }).click();
  const tool = page.locator('[data-testid=tool-card][data-tool=start_maintenance]');
  await expect(tool).toHaveAttribute('data-status', 'done', { timeout: 20_000 });
  const windows = await app.product.query<{ minutes: number }>(
    `SELECT (extract(epoch FROM ends_at - starts_at) / 60)::int AS minutes FROM maintenance_events WHERE service = 'orders-api' AND reason LIKE '%schema migration%'`,
  );
  expect(windows).toEqual([{ minutes: 45 }]);
  expect(errors).toEqual([]);
  await page.context().close();
});

test('after an edited approve the card says the changes and who made them; the tool line the tool\'s error (issue 37 item 3)', async ({ browser }) => {
  const { page, pending, editor } = await openEditor(browser, 'admin', 'Deploy checkout-api 2.4.1 to staging');
  // Before Confirm, the editor says when an edit needs more approvers (production: two admins).
  const environment = editor.locator('input[name=environment]');
  await environment.fill('production');
  await expect(pending.getByTestId('edit-approvers')).toHaveText('With these arguments it needs 2 approvals (now 1).', { timeout: 20_000 });
  await environment.fill('moon');
  await expect(pending.getByTestId('edit-approvers')).toHaveCount(0, { timeout: 20_000 });
  await pending.getByRole('button', { name: 'Confirm with these arguments' }).click();

  const decided = page.locator('[data-testid=confirm-card][data-status=confirmed]');
  const tool = page.locator('[data-testid=tool-card][data-tool=deploy_service]');
  const honest = async () => {
    await expect(decided).toContainText('Approved with changes by admin: environment staging → moon', { timeout: 20_000 });
    await expect(decided).not.toContainText('Deploy checkout-api version 2.4.1 to staging');
    await expect(tool).toHaveAttribute('data-status', 'error', { timeout: 20_000 });
    await expect(tool).toContainText('Unknown environment "moon".');
    await expect(tool).not.toContainText('Note:');
    await expect(tool).not.toContainText('{"error"');
  };
  await honest();
  await expect(page.getByTestId('answer').last()).toHaveAttribute('data-streaming', 'false', { timeout: 20_000 });
  await shot(page, '35-edited-history');
  await page.reload();
  await connected(page);
  await honest();
  await page.context().close();
});

test("an operator's edit of a maintenance into admin-only db-primary is refused", async ({ browser }) => {
  const { page, pending, editor } = await openEditor(browser, 'operator', 'Start maintenance on payments-api for 30 minutes because of a fan swap');
  await editor.locator('input[name=service]').fill('db-primary');
  await pending.getByRole('button', { name: 'Confirm with these arguments' }).click();
  await expect(page.getByTestId('error-card').last()).toContainText(/role admin/, { timeout: 20_000 });
  await expect(page.getByTestId('error-card').last()).toHaveAttribute('data-code', 'FORBIDDEN');
  await shot(page, '35-edit-refused');
  const rows = await app.product.query<{ status: string; final_args: unknown }>(`SELECT status, final_args FROM approvals WHERE tool = 'start_maintenance' AND args->>'reason' LIKE '%fan swap%'`);
  expect(rows).toEqual([{ status: 'pending', final_args: null }]);
  expect((await app.product.query<{ n: number }>(`SELECT count(*)::int AS n FROM maintenance_events WHERE service = 'db-primary' AND reason LIKE '%fan swap%'`))[0].n).toBe(0);
  await page.context().close();
});

test('in the inbox, an edit staging -> production needs a second admin, who approves it', async ({ browser }) => {
  const requester = await app.personPage(browser, 'admin');
  await connected(requester);
  await send(requester, 'Deploy payments-api 6.2.0 to staging');
  await expect(requester.locator('[data-testid=confirm-card][data-status=pending]')).toBeVisible({ timeout: 20_000 });

  const admin2 = await app.personPage(browser, 'admin2', '/approvals');
  const row = admin2.getByTestId('approval-row').filter({ hasText: 'deploy_service' });
  await expect(row).toHaveCount(1, { timeout: 20_000 });
  await row.getByRole('button', { name: 'Edit…' }).click();
  const editor = row.getByTestId('arguments-editor');
  // An empty service the tool's schema refuses: said by that field, the edit kept, nothing decided.
  await editor.locator('input[name=service]').fill('');
  await editor.locator('input[name=environment]').fill('production');
  await row.getByRole('button', { name: 'Confirm with these arguments' }).click();
  await expect(editor.locator('label', { has: admin2.locator('input[name=service]') }).getByRole('alert')).toBeVisible({ timeout: 20_000 });
  await expect(editor.locator('input[name=environment]')).toHaveValue('production');
  await expect(row.getByTestId('edited-args')).toHaveCount(0);
  await editor.locator('input[name=service]').fill('payments-api');
  await row.getByRole('button', { name: 'Confirm with these arguments' }).click();
  await expect(row.getByTestId('approval-progress')).toContainText('1 of 2', { timeout: 20_000 });
  await expect(row.getByTestId('edited-args')).toContainText('production');
  await shot(admin2, '35-inbox-edited');
  expect(await deployments('6.2.0', 'production')).toBe(0);

  const admin3 = await app.personPage(browser, 'admin3', '/approvals');
  const row3 = admin3.getByTestId('approval-row').filter({ hasText: 'deploy_service' });
  await expect(row3.getByTestId('edited-args')).toContainText('production', { timeout: 20_000 });
  await row3.getByRole('button', { name: 'Confirm', exact: true }).click();
  await expect(row3).toHaveCount(0, { timeout: 20_000 });

  const tool = requester.locator('[data-testid=tool-card][data-tool=deploy_service]');
  await expect(tool).toHaveAttribute('data-status', 'done', { timeout: 20_000 });
  await expect(tool).toContainText('production');
  expect(await deployments('6.2.0', 'production')).toBe(1);
  expect(await deployments('6.2.0', 'staging')).toBe(0);
  for (const p of [requester, admin2, admin3]) await p.context().close();
});

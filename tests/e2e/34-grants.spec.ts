/**
 * Issue 27 item 2 in Chromium: "Allow for 1 hour" on a staging deploy confirms it and makes a
 * standing grant; the next staging deploy runs with no card and its tool card says which grant
 * allowed it, by whom, until when; a production deploy still asks (and a Deny with a reason tells
 * the model why, item 4); revoked in the Grants tab of /approvals, the next staging deploy asks.
 * Issue 37 item 6: the button says what the grant covers ("Allow deploys of checkout-api to staging
 * for 1 h"), and it covers only that: payments-api to staging still asks; the resolved card says a
 * grant was made (live and after a reload); the Grants tab names the user; a call whose preview
 * says it would do nothing ("no such service") offers no grant.
 */
import { apiCall, apiLogin, connected, expect, send, shot, signIn, test } from './support/fixtures.ts';

test.describe('standing grants', () => {
  // Seven turns and two page loads: more than the default 60 s budget on a loaded machine.
  test.setTimeout(150_000);
  // The e2e gateway is shared by every spec: no grant of this test outlives it.
  test.afterEach(async ({ state }) => {
    const { token } = await apiLogin(state.main.url, 'admin', state.password);
    const { grants } = await apiCall<{ grants: Array<{ id: string; revoked_at: string | null }> }>(state.main.url, token, 'GET', '/api/agent/v1/grants');
    for (const g of grants.filter((g) => g.revoked_at === null)) await apiCall(state.main.url, token, 'DELETE', `/api/agent/v1/grants/${g.id}`);
  });

  test('Allow deploys of checkout-api to staging for 1 h -> the next one runs with no card; payments-api and production still ask; revoked, it asks again', async ({ page, state }) => {
    await signIn(page, state.main.url, 'admin', state.password);
    await page.goto('/');
    await connected(page);
    const pending = page.locator('[data-testid=confirm-card][data-status=pending]');
    const deployCard = (version: string) => page.locator('[data-testid=tool-card][data-tool=deploy_service]').filter({ hasText: version });
    const answered = () => expect(page.getByTestId('answer').last()).toHaveAttribute('data-streaming', 'false', { timeout: 20_000 });

    // Nothing would happen: a grant would stand for calls the approver never saw do anything.
    await send(page, 'Deploy nosuch-api 5.0.0 to staging');
    await expect(pending).toBeVisible({ timeout: 20_000 });
    await expect(pending).toContainText('no such service');
    await expect(pending.getByRole('button', { name: 'Confirm', exact: true })).toBeVisible();
    await expect(pending.getByTestId('grant-choices')).toHaveCount(0);
    await pending.getByRole('button', { name: 'Deny' }).click();
    await expect(pending).toHaveCount(0, { timeout: 20_000 });
    await answered();

    await send(page, 'Deploy checkout-api 5.1.0 to staging');
    await expect(pending).toBeVisible({ timeout: 20_000 });
    const choices = pending.getByTestId('grant-choices');
    // The scope in plain words, on the button itself: this service to this environment.
    await expect(choices.getByRole('button', { name: 'Allow deploys of checkout-api to staging for 8 h' })).toBeVisible();
    await shot(page, '34-grant-choices');
    await choices.getByRole('button', { name: 'Allow deploys of checkout-api to staging for 1 h' }).click();
    const resolved = page.getByTestId('confirm-card').filter({ hasText: '5.1.0' });
    await expect(resolved).toHaveAttribute('data-status', 'confirmed', { timeout: 20_000 });
    await expect(resolved.getByTestId('grant-made')).toContainText('and allowed deploys of checkout-api to staging for 1 h, until');
    await expect(deployCard('5.1.0')).toHaveAttribute('data-status', 'done', { timeout: 20_000 });
    await answered();

    await send(page, 'Deploy checkout-api 5.1.1 to staging');
    await expect(deployCard('5.1.1')).toHaveAttribute('data-status', 'done', { timeout: 20_000 });
    await expect(deployCard('5.1.1').getByTestId('tool-grant')).toContainText(/allowed by grant \w{8}, by admin, until .+/);
    await answered();
    await expect(pending).toHaveCount(0);
    await expect(page.getByTestId('confirm-card')).toHaveCount(2);
    await shot(page, '34-granted-call');

    // The grant is checkout-api's: another service to the same environment still asks.
    await send(page, 'Deploy payments-api 2.15.0 to staging');
    await expect(pending).toBeVisible({ timeout: 20_000 });
    await expect(pending).toContainText('payments-api');
    await pending.getByRole('button', { name: 'Deny' }).click();
    await expect(deployCard('2.15.0')).toHaveAttribute('data-status', 'error', { timeout: 20_000 });
    await answered();

    await send(page, 'Deploy checkout-api 5.1.2 to production');
    await expect(pending).toBeVisible({ timeout: 20_000 });
    await pending.getByRole('textbox', { name: /Reason for denying/ }).fill('not during the freeze');
    await pending.getByRole('button', { name: 'Deny' }).click();
    await expect(deployCard('5.1.2')).toHaveAttribute('data-status', 'error', { timeout: 20_000 });
    await expect(deployCard('5.1.2')).toContainText('not during the freeze');
    await answered();

    // After a reload, the stored card still says a grant was made.
    const chatUrl = page.url();
    await page.reload();
    await connected(page);
    await expect(page.getByTestId('confirm-card').filter({ hasText: '5.1.0' }).getByTestId('grant-made')).toContainText('and allowed deploys of checkout-api to staging for 1 h');

    await page.goto('/approvals');
    await page.getByRole('tab', { name: 'Grants' }).click();
    const row = page.getByTestId('grant-row');
    await expect(row).toHaveCount(1, { timeout: 20_000 });
    await expect(row).toContainText('admin may run deploys of checkout-api to staging without asking');
    await expect(row).toContainText('granted by admin');
    await expect(row).toContainText('used 1×');
    await shot(page, '34-grants-tab');
    await row.getByRole('button', { name: 'Revoke' }).click();
    await expect(row).toHaveCount(0, { timeout: 20_000 });

    await page.goto(chatUrl);
    await connected(page);
    await send(page, 'Deploy checkout-api 5.1.3 to staging');
    await expect(pending).toBeVisible({ timeout: 20_000 });
    await expect(pending).toContainText('5.1.3');
  });
});

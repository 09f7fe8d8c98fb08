/**
 * An organization's own API as tools, in the browser (issue 41): the main deployment's tools file
 * names a billing API by its OpenAPI document (tests/helpers/openapi-backend.ts, which checks both
 * JWTs and its own RBAC). "refund invoice 42" asks on a card naming POST /invoices/{id}/refund;
 * Confirm runs it, and the tool card shows the backend's answer.
 */
import { connected, expect, send, shot, signIn, test } from './support/fixtures.ts';

test.describe('OpenAPI tools', () => {
  test('a refund asks on a card naming the method and path; Confirm shows the backend answer', async ({ page, state }) => {
    await signIn(page, state.main.url, 'operator', state.password);
    await page.goto('/');
    await connected(page);
    await send(page, 'refund invoice 42');
    const card = page.getByTestId('confirm-card');
    await expect(card).toHaveAttribute('data-status', 'pending', { timeout: 20_000 });
    await expect(card).toContainText('POST /invoices/{id}/refund');
    await expect(card).toContainText('billing');
    await shot(page, '36-openapi-confirmation');

    await card.getByRole('button', { name: 'Confirm' }).click();
    await expect(card).toHaveAttribute('data-status', 'confirmed', { timeout: 20_000 });
    const tool = page.locator('[data-testid=tool-card][data-tool=billing_refund_invoice]');
    await expect(tool).toHaveAttribute('data-status', 'done', { timeout: 20_000 });
    await tool.click();
    await expect(tool).toContainText('refunded');
    await expect(tool).toContainText('operator');
  });
});

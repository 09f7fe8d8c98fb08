/**
 * Issue 23 item 3 (the UI's half): a message typed while an approval card waits never decides it
 * silently. The composer asks first; Keep waiting sends nothing and keeps the text; Deny and send
 * sends it, and the card reads "Denied (new message)".
 */
import { connected, expect, send, shot, signIn, test } from './support/fixtures.ts';
import { ledgerEvents } from './support/ledger.ts';

test('a message while a card waits: the dialog says what will happen; Keep waiting, then Deny and send', async ({ page, state }) => {
  const { token } = await signIn(page, state.main.url, 'admin', state.password);
  await page.goto('/');
  await connected(page);
  await send(page, 'Deploy checkout-api 2.4.1 to staging');
  const card = page.getByTestId('confirm-card');
  await expect(card).toHaveAttribute('data-status', 'pending', { timeout: 20_000 });
  const id = new URL(page.url()).pathname.split('/').pop()!;
  const question = 'actually, what is the health of checkout-api first?';
  const composer = page.getByRole('textbox', { name: 'Message', exact: true });

  await send(page, question);
  const dialog = page.getByRole('dialog');
  await expect(dialog).toBeVisible();
  await expect(dialog).toContainText('Sending this will deny the pending deploy of checkout-api');
  await shot(page, '32-supersede-dialog');

  // Keep waiting: nothing is sent, nothing decided, the text stays to be edited.
  await dialog.getByRole('button', { name: 'Keep waiting' }).click();
  await expect(dialog).toBeHidden();
  await expect(composer).toHaveValue(question);
  await expect(card).toHaveAttribute('data-status', 'pending');
  await expect(page.locator('.user-bubble')).toHaveCount(1);
  const userMessages = async () => (await ledgerEvents(state.main.url, token, id)).filter((e) => e.kind === 'user.message').length;
  expect(await userMessages()).toBe(1);

  // Deny and send: the message goes out and the card says why it was denied.
  await page.getByRole('button', { name: 'Send' }).click();
  await expect(dialog).toBeVisible();
  await dialog.getByRole('button', { name: 'Deny and send' }).click();
  await expect(dialog).toBeHidden();
  await expect(card).toHaveAttribute('data-status', 'denied', { timeout: 20_000 });
  await expect(card).toContainText('Denied (new message)');
  await expect(page.locator('.user-bubble').last()).toHaveText(question);
  await expect(composer).toHaveValue('');
  await expect(page.getByTestId('answer').last()).toHaveAttribute('data-streaming', 'false', { timeout: 20_000 });
  expect(await userMessages()).toBe(2);
  await shot(page, '33-denied-new-message');
});

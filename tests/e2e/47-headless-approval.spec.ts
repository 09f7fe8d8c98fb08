import { apiLogin, connected, expect, send, shot, signIn, test } from './support/fixtures.ts';

// Issue 11: an approval decided through the headless API (no browser involved in the decision)
// shows resolved in the tab that shows it, and the resumed answer streams there.
test('an approval decided through /api/agent/v1 resolves the card in an open tab', async ({ page, state }) => {
  await signIn(page, state.main.url, 'admin', state.password);
  await page.goto('/');
  await connected(page);
  await send(page, 'Deploy checkout-api 2.5.0 to staging');
  const card = page.getByTestId('confirm-card');
  await expect(card).toHaveAttribute('data-status', 'pending', { timeout: 20_000 });

  // An operator tool decides it over the API, through nginx, with its own login.
  const { token } = await apiLogin(state.main.url, 'admin', state.password);
  const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
  const list = await fetch(`${state.main.url}/api/agent/v1/approvals?status=pending`, { headers });
  expect(list.status).toBe(200);
  const { approvals } = (await list.json()) as { approvals: Array<{ id: string; tool_args: { version?: string } }> };
  const approval = approvals.find((a) => a.tool_args.version === '2.5.0');
  expect(approval).toBeTruthy();
  const decided = await fetch(`${state.main.url}/api/agent/v1/approvals/${approval!.id}/approve`, { method: 'POST', headers, body: JSON.stringify({ reason: 'approved from the review tool' }) });
  expect(decided.status).toBe(200);

  await expect(card).toHaveAttribute('data-status', 'confirmed', { timeout: 20_000 });
  const tool = page.locator('[data-testid=tool-card][data-tool=deploy_service]');
  await expect(tool).toHaveAttribute('data-status', 'done', { timeout: 20_000 });
  await expect(page.getByTestId('answer').last()).toHaveAttribute('data-streaming', 'false', { timeout: 20_000 });
  await expect(page.getByTestId('answer').last()).toContainText('2.5.0');
  await shot(page, '47-approved-through-api');
});

import { apiCall, connected, expect, signIn, test } from './support/fixtures.ts';

test('history: stored cards render like live ones; older pages load on scroll up', async ({ page, state }) => {
  const session = await signIn(page, state.main.url, 'operator', state.password);
  const conversation = await apiCall<{ id: string }>(state.main.url, session.token, 'POST', '/api/assistant/conversations', { title: 'Long history' });
  const post = (role: 'user' | 'assistant', content: string, metadata: Record<string, unknown> = {}) =>
    apiCall(state.main.url, session.token, 'POST', `/api/assistant/conversations/${conversation.id}/messages`, { role, content, metadata });
  // The stored shapes of CONTRACTS §4: a tool card, a resolved approval, a stopped answer, an error.
  await post('user', 'message 0: check payments-api');
  await post('assistant', '', { type: 'tool', tool: 'check_health', input: { service: 'payments-api' }, tool_call_id: 'stored-1', status: 'done', output: { status: 'healthy' }, duration_ms: 42 });
  await post('assistant', '', { type: 'approval', approval_id: 'stored-ap', tool: 'deploy_service', input: { service: 'payments-api', version: '1.0.0', environment: 'staging' }, prompt: 'Deploy payments-api 1.0.0 to staging?', expires_at: new Date().toISOString(), timeout_s: 300, status: 'denied' });
  await post('assistant', 'Partial answer', { type: 'answer', cancelled: true });
  await post('assistant', '', { type: 'answer', error: { code: 'LLM_UNAVAILABLE', detail: 'model timeout' } });
  for (let i = 1; i <= 70; i++) await post(i % 2 ? 'user' : 'assistant', `message ${i}`, i % 2 ? {} : { type: 'answer' });

  await page.goto(`/c/${conversation.id}`);
  await connected(page);
  const log = page.getByRole('log');
  await expect(log.getByText('message 70', { exact: true })).toBeVisible();
  // Only the latest page at first.
  await expect(log.getByText('message 0: check payments-api')).toHaveCount(0);

  // Scroll to the top: the older page loads above, and what was on screen stays in place.
  const scroller = page.locator('.scroller');
  for (let i = 0; i < 5 && (await log.getByText('message 0: check payments-api').count()) === 0; i++) {
    await scroller.evaluate((el) => el.scrollTo({ top: 0 }));
    await page.waitForTimeout(300);
  }
  await expect(log.getByText('message 0: check payments-api')).toHaveCount(1);
  await expect(page.getByRole('button', { name: 'Load older messages' })).toHaveCount(0);

  const tool = page.locator('[data-testid=tool-card][data-tool=check_health]');
  await expect(tool).toHaveAttribute('data-status', 'done');
  await expect(tool).toContainText('42 ms');
  await expect(page.getByTestId('confirm-card').first()).toHaveAttribute('data-status', 'denied');
  await expect(page.getByTestId('answer').filter({ hasText: 'Partial answer' })).toContainText('Stopped');
  await expect(page.locator('[data-testid=error-card][data-code=LLM_UNAVAILABLE]')).toContainText('language model is unavailable');
});

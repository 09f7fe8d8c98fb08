/**
 * Issue 29 item 4: a conversation exports as Markdown and as JSON, with its tool cards, its
 * approvals (who, when, decision) and attachments by name; the "Export conversation" button
 * downloads the file.
 * Issue 37 item 8: after an Edit, the export writes the branch shown (`?branch=N` another), says
 * which, and the button saves the file under the server's name (the conversation's title).
 */
import { readFileSync } from 'node:fs';
import { apiCall, connected, expect, send, signIn, test } from './support/fixtures.ts';

test('Export conversation: Markdown and JSON with the tool card and who approved it', async ({ page, state }) => {
  const session = await signIn(page, state.main.url, 'operator', state.password);
  await page.goto('/');
  await connected(page);
  await send(page, 'Start maintenance on db-primary for 30 minutes because of a disk upgrade');
  const card = page.getByTestId('confirm-card');
  await card.getByRole('button', { name: 'Confirm' }).click();
  await expect(card).toHaveAttribute('data-status', 'confirmed', { timeout: 20_000 });
  await expect(page.getByTestId('answer').last()).toHaveAttribute('data-streaming', 'false', { timeout: 20_000 });
  const id = new URL(page.url()).pathname.split('/').pop()!;

  const json = await apiCall<{
    conversation: { id: string };
    messages: { role: string; content: string; metadata: { type?: string; tool?: string } }[];
    approvals: { id: string; tool: string; decision: string; decided_by: string; decided_at: string }[];
  }>(state.main.url, session.token, 'GET', `/api/assistant/conversations/${id}/export?format=json`);
  expect(json.conversation.id).toBe(id);
  expect(json.messages[0]).toMatchObject({ role: 'user', content: 'Start maintenance on db-primary for 30 minutes because of a disk upgrade' });
  expect(json.messages.some((m) => m.metadata.type === 'tool' && m.metadata.tool === 'start_maintenance')).toBe(true);
  expect(json.approvals).toHaveLength(1);
  expect(json.approvals[0]).toMatchObject({ tool: 'start_maintenance', decision: 'confirmed', decided_by: 'operator' });
  expect(Date.parse(json.approvals[0].decided_at)).not.toBeNaN();

  // The button: Markdown, downloaded with the user's token.
  await page.getByRole('button', { name: 'Export conversation' }).click();
  const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Markdown' }).click()]);
  const markdown = readFileSync((await download.path())!, 'utf8');
  expect(markdown).toMatch(/^# /);
  expect(markdown).toContain('### User · ');
  expect(markdown).toContain('#### Tool `start_maintenance` (done)');
  expect(markdown).toMatch(/#### Approval `start_maintenance`: confirmed by operator at \d{4}-/);

  // Another user's conversation is not found; an unknown format is refused.
  const viewer = await (await import('./support/fixtures.ts')).apiLogin(state.main.url, 'viewer', state.password);
  await expect(apiCall(state.main.url, viewer.token, 'GET', `/api/assistant/conversations/${id}/export?format=md`)).rejects.toThrow(/404/);
  await expect(apiCall(state.main.url, session.token, 'GET', `/api/assistant/conversations/${id}/export?format=pdf`)).rejects.toThrow(/400/);
});

test('after an Edit, Export writes the branch shown, under the name the server gives (issue 37 item 8)', async ({ page, state }) => {
  const session = await signIn(page, state.main.url, 'operator', state.password);
  await page.goto('/');
  await connected(page);
  const answered = () => expect(page.getByTestId('answer').last()).toHaveAttribute('data-streaming', 'false', { timeout: 20_000 });
  await send(page, "What's the health of payments-api?");
  await answered();
  const row = page.locator('.row.user').filter({ hasText: "What's the health of payments-api?" });
  await row.getByRole('button', { name: 'Edit' }).click();
  await page.getByRole('textbox', { name: 'Edit message' }).fill("What's the health of checkout-api?");
  await page.getByRole('textbox', { name: 'Edit message' }).press('Enter');
  await answered();
  await expect(page.getByTestId('branch-switch')).toContainText('2/2', { timeout: 20_000 });
  const id = new URL(page.url()).pathname.split('/').pop()!;

  const served = await fetch(`${state.main.url}/api/assistant/conversations/${id}/export?format=md`, { headers: { authorization: `Bearer ${session.token}` } });
  const name = /filename="([^"]+)"/.exec(served.headers.get('content-disposition') ?? '')?.[1];
  expect(name).toMatch(/^[a-z0-9-]+\.md$/);
  expect(name).not.toBe('conversation.md');

  await page.getByRole('button', { name: 'Export conversation' }).click();
  const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Markdown' }).click()]);
  expect(download.suggestedFilename()).toBe(name);
  const markdown = readFileSync((await download.path())!, 'utf8');
  expect(markdown).toContain('branch 2 of 2');
  expect(markdown).toContain("What's the health of checkout-api?");
  expect(markdown).not.toContain("What's the health of payments-api?");
  expect(markdown.match(/### User · /g)).toHaveLength(1);

  // The branch before the edit, by number: its message, not the edit's.
  const first = await apiCall<{ branch: number; branches: number; messages: { role: string; content: string }[] }>(state.main.url, session.token, 'GET', `/api/assistant/conversations/${id}/export?format=json&branch=0`);
  expect(first).toMatchObject({ branch: 0, branches: 2 });
  expect(first.messages.filter((m) => m.role === 'user').map((m) => m.content)).toEqual(["What's the health of payments-api?"]);
  await expect(apiCall(state.main.url, session.token, 'GET', `/api/assistant/conversations/${id}/export?format=json&branch=7`)).rejects.toThrow(/404/);
});

import { connected, expect, send, shot, signIn, test } from './support/fixtures.ts';

const LONG = 'tell me about yourself and what you can help me with today in detail';

test('reload mid-answer: the run goes on and the answer continues in place, live, nothing doubled', async ({ page, state }) => {
  await signIn(page, state.main.url, 'operator', state.password);
  await page.goto('/');
  await connected(page);
  await send(page, LONG);
  const answers = page.getByTestId('answer');
  await expect(answers.last()).toHaveAttribute('data-streaming', 'true', { timeout: 20_000 });
  await expect.poll(async () => (await answers.last().innerText()).length).toBeGreaterThan(20);

  // 1. Reload while it streams: a disconnect is not a Stop.
  await page.reload();
  await connected(page);
  // 2. The answer grows in place (one bubble for the segment, fed by the event stream).
  const lengths: number[] = [];
  for (let i = 0; i < 40 && new Set(lengths).size < 3; i++) {
    lengths.push((await answers.last().innerText()).length);
    await page.waitForTimeout(100);
  }
  expect(new Set(lengths).size).toBeGreaterThanOrEqual(3);
  expect(lengths.at(-1)!).toBeGreaterThan(lengths[0]);
  await shot(page, '45-resumed-after-reload');
  // 3. It ends complete (not Stopped), the tab is writable again, and the text is the stored one, once.
  await expect(page.getByTestId('busy-banner')).toBeHidden({ timeout: 30_000 });
  const live = await answers.last().innerText();
  expect(live).not.toContain('Stopped');
  await page.reload();
  await connected(page);
  await expect(answers.last()).toHaveText(live);
  expect(await answers.count()).toBe(1);
});

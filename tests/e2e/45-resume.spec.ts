import { connected, expect, send, shot, signIn, test } from './support/fixtures.ts';
import { answerText, lastStoredAnswer, ledgerEvents, newConversation, plain, recordShown, runFinished, shown } from './support/ledger.ts';

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
  // It is this tab's own answer: Stop, and no "another tab" banner (issue 23).
  await expect(page.getByRole('button', { name: 'Stop' })).toBeVisible();
  await expect(page.getByTestId('busy-banner')).toBeHidden();
  // 2. The answer grows in place (one bubble for the segment, fed by the event stream).
  const lengths: number[] = [];
  for (let i = 0; i < 40 && new Set(lengths).size < 3; i++) {
    lengths.push((await answers.last().innerText()).length);
    await page.waitForTimeout(100);
  }
  expect(new Set(lengths).size).toBeGreaterThanOrEqual(3);
  expect(lengths.at(-1)!).toBeGreaterThan(lengths[0]);
  await shot(page, '45-resumed-after-reload');
  // 3. It ends complete (not Stopped), Send is back, and the text is the stored one, once.
  await expect(page.getByRole('button', { name: 'Stop' })).toBeHidden({ timeout: 30_000 });
  await expect(answers.last()).toHaveAttribute('data-streaming', 'false');
  const live = await answers.last().innerText();
  expect(live).not.toContain('Stopped');
  await page.reload();
  await connected(page);
  await expect(answers.last()).toHaveText(live);
  expect(await answers.count()).toBe(1);
});

/**
 * Issue 23 item 2: reload at 5 moments of one answer (a tool call, then a table streamed word by
 * word): before the first token, during the tool call, mid-answer, near the end. Each time the
 * same tab must show the truth within 1 s (3 s asserted: the poll margin) and end on the stored
 * answer without a second reload; on the way, nothing cut is ever shown as final and no other tab
 * is ever said to hold the conversation.
 */
test('reload at 5 moments of an answer: the same tab converges to the stored answer, live with Stop meanwhile', async ({ page, state }) => {
  test.setTimeout(240_000);
  const { token } = await signIn(page, state.main.url, 'operator', state.password);
  await recordShown(page);
  const converged: number[] = [];
  for (const moment of [300, 800, 1_500, 2_200, 3_000]) {
    const id = await newConversation(state.main.url, token, `reload at ${moment} ms`);
    await page.goto(`/c/${id}`);
    await connected(page);
    await send(page, 'check health of all services');
    await page.waitForTimeout(moment); // the moment of the reload, not an assertion
    await page.reload();

    const answers = page.getByTestId('answer');
    const stop = page.getByRole('button', { name: 'Stop' });
    // The run ends on the server whatever the tab does; then the tab shows its stored answer.
    await expect.poll(async () => runFinished(await ledgerEvents(state.main.url, token, id)), { timeout: 30_000 }).toBe(true);
    const stored = plain(lastStoredAnswer(await ledgerEvents(state.main.url, token, id)));
    expect(stored.length).toBeGreaterThan(100);
    await expect.poll(async () => plain(await answerText(answers.last())), { timeout: 10_000, message: `reload at ${moment} ms` }).toBe(stored);
    await expect(stop).toBeHidden();
    await expect(page.getByRole('button', { name: 'Send' })).toBeVisible();
    await expect(answers).toHaveCount(1);
    await expect(answers.last()).toHaveAttribute('data-streaming', 'false');

    const seen = await shown(page);
    // Never a false lock, never a cut answer shown as final.
    expect(seen.filter((s) => s.banner), `reload at ${moment} ms: "another tab" banner`).toEqual([]);
    const finals = seen.filter((s) => s.text !== null && !s.stop && !s.streaming).map((s) => plain(s.text!));
    expect(finals.filter((text) => text !== stored), `reload at ${moment} ms: an answer shown as final`).toEqual([]);
    // The truth within 1 s of the reload: the run going on with Stop, or the whole stored answer.
    const first = seen.find((s) => (s.stop && (s.text === null || s.streaming)) || (s.text !== null && plain(s.text) === stored));
    expect(first, `reload at ${moment} ms: never converged`).toBeDefined();
    converged.push(first!.t);
    expect(first!.t, `reload at ${moment} ms: converged only after ${first!.t} ms`).toBeLessThanOrEqual(3_000);
  }
  console.log(`reload -> true state (ms since navigation start), at 0.3/0.8/1.5/2.2/3 s: ${converged.join(', ')}`);
});

/**
 * The UI against three gateway replicas behind the real nginx (round-robin, no stickiness), with
 * its own cluster (tests/helpers/cluster.ts) on a fresh schema of the e2e database server
 * (DATABASE_URL's or the embedded one): an answer, Stop and a confirmation with requests spread
 * over replicas, and the replica running an answer SIGKILLed while the browser watches: the tab
 * ends with a clear retryable error within seconds (never a spinner), the run is finished
 * failed / process_exit within the documented bound, a reload shows the answer once with that
 * error, and the conversation goes on.
 */
import type { Cluster } from '../helpers/cluster.ts';
import { connected, expect, send, shot, signIn, test } from './support/fixtures.ts';
import { startSchemaCluster, type SchemaCluster } from './support/product.ts';

const LONG = 'tell me about yourself and what you can help me with today in detail';
const PASSWORD = 'demo-password-1';
let product: SchemaCluster;
let cluster: Cluster;

test.beforeAll(async () => {
  test.setTimeout(120_000);
  // The replicas are real processes that share one PostgreSQL server (a schema of their own).
  product = await startSchemaCluster('replicas', {
    replicas: 3,
    apiRoles: 'api,web',
    env: { OFFLINE_MODEL_DELAY_MS: '40', LEASE_TTL_S: '2', DEMO_PASSWORD: PASSWORD, LOG_LEVEL: 'warn' },
  });
  cluster = product.cluster;
});

test.afterAll(async () => {
  await product?.stop();
});

/** The pid-named replica running the conversation's current run. */
async function runnerOf(conversationId: string): Promise<number> {
  const rows = await product.query<{ owner: string }>("SELECT owner FROM runs WHERE conversation_id = $1 AND status = 'running'", [conversationId]);
  return rows.length ? cluster.indexOfPid(Number(rows[0].owner.split(':').at(-2))) : -1;
}

async function runStatus(conversationId: string): Promise<string | undefined> {
  const rows = await product.query<{ status: string }>('SELECT status FROM runs WHERE conversation_id = $1 ORDER BY started_at DESC LIMIT 1', [conversationId]);
  return rows[0]?.status;
}

test('answer, Stop and Confirm with requests spread over three replicas', async ({ page }) => {
  await signIn(page, cluster.url, 'admin', PASSWORD);
  await page.goto(`${cluster.url}/`);
  await connected(page);
  await send(page, "What's the health of payments-api?");
  const answers = page.getByTestId('answer');
  await expect(answers.last()).toHaveAttribute('data-streaming', 'false', { timeout: 20_000 });
  await expect(answers.last()).toContainText('payments-api');

  await send(page, LONG);
  await expect(answers.last()).toHaveAttribute('data-streaming', 'true', { timeout: 20_000 });
  await page.getByRole('button', { name: 'Stop' }).click();
  await expect(answers.last()).toHaveAttribute('data-streaming', 'false');
  await expect(answers.last()).toContainText('Stopped');

  await send(page, 'Deploy checkout-api 3.3.3 to staging');
  const card = page.getByTestId('confirm-card').last();
  await expect(card).toHaveAttribute('data-status', 'pending', { timeout: 20_000 });
  await card.getByRole('button', { name: 'Confirm' }).click();
  await expect(card).toHaveAttribute('data-status', 'confirmed', { timeout: 20_000 });
  await expect(page.locator('[data-testid=tool-card][data-tool=deploy_service]').last()).toHaveAttribute('data-status', 'done', { timeout: 20_000 });
  await expect(answers.last()).toHaveAttribute('data-streaming', 'false', { timeout: 20_000 });
  await shot(page, '95-replicas-confirmed');
});

test('the replica running the answer is SIGKILLed mid-answer: the tab ends, nothing doubled, the conversation goes on', async ({ page }) => {
  test.setTimeout(90_000);
  await signIn(page, cluster.url, 'operator', PASSWORD);
  await page.goto(`${cluster.url}/`);
  await connected(page);
  await send(page, LONG);
  const answers = page.getByTestId('answer');
  await expect(answers.last()).toHaveAttribute('data-streaming', 'true', { timeout: 20_000 });
  await expect.poll(async () => (await answers.last().innerText()).length).toBeGreaterThan(20);
  await expect(page).toHaveURL(/[0-9a-f-]{36}/); // the conversation has its id in the address
  const conversationId = /([0-9a-f-]{36})/.exec(page.url())![1];
  const killed = await runnerOf(conversationId);
  expect(killed).toBeGreaterThanOrEqual(0);
  cluster.replicas[killed].child.kill('SIGKILL');

  // Never a spinner: the bus ends the event within seconds, and the tab converges to the ledger
  // with no reload (issue 23 item 4): the run's stored end, in words (codes sit in the details).
  await expect(answers.last()).toHaveAttribute('data-streaming', 'false', { timeout: 30_000 });
  await expect(page.getByText('The server stopped while answering')).toBeVisible({ timeout: 30_000 });
  await shot(page, '95-replica-killed');

  // Within the documented bound (2 x LEASE_TTL_S) the run is finished failed / process_exit.
  await expect.poll(() => runStatus(conversationId), { timeout: 15_000, intervals: [200] }).toBe('failed');

  // After a reload: one answer, its text once, ending with the stored process_exit error.
  await page.reload();
  await connected(page);
  await expect(answers).toHaveCount(1, { timeout: 15_000 });
  await expect(page.getByTestId('busy-banner')).toBeHidden();
  const text = await answers.last().innerText();
  const head = text.slice(0, 12);
  expect(text.indexOf(head, 1)).toBe(-1);
  await expect(page.getByText('The server stopped while answering')).toBeVisible();

  // The conversation goes on, through whichever replicas are alive.
  await send(page, "What's the health of payments-api?");
  await expect(answers).toHaveCount(2, { timeout: 20_000 });
  await expect(answers.last()).toHaveAttribute('data-streaming', 'false', { timeout: 30_000 });
  await expect(answers.last()).toContainText('payments-api');
  await cluster.restart(killed);
});

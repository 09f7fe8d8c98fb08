/**
 * Passkey step-up (issue 28 item 3, Proof e2e) in Chromium with its virtual authenticator (CDP
 * WebAuthn: ctap2, internal, resident key, user verification), against the real product behind
 * the real nginx with a policy whose deploys need `step_up: passkey` (its own schema, as
 * 48-approvals-inbox does). WebAuthn refuses IP-address origins, so this spec browses nginx as
 * http://localhost:<port>. The user registers a passkey on /settings, asks for a deploy in the
 * chat, confirms its card "with passkey"; the run goes on, and the approval's receipt carries the
 * passkey's signature over the action hash and verifies (server/audit/receipt.ts, as `./airlock
 * receipt verify` does).
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from '@playwright/test';
import { verifyReceipt } from '../../server/audit/receipt.ts';
import { createPool } from '../../server/db/index.ts';
import { jobSchemaFor } from '../../server/v1/job-queue.ts';
import { startCluster, type Cluster } from '../helpers/cluster.ts';
import { withSearchPath } from '../helpers/database.ts';
import { apiLogin, connected, expect, send, shot, signIn, test } from './support/fixtures.ts';
import { readState } from './support/product.ts';

const PASSWORD = 'demo-password-1';
const POLICY = `tool_rules:
  deploy_service:
    action: require_approval
    step_up: passkey
`;
let cluster: Cluster;
let url: string;
let dir: string;
let dropSchema: () => Promise<void>;

test.beforeAll(async () => {
  test.setTimeout(120_000);
  const base = readState().databaseUrl;
  const schema = `e2e_passkey_${randomBytes(4).toString('hex')}`;
  const admin = createPool(base, { max: 1 });
  await admin.query(`CREATE SCHEMA ${schema}`);
  await admin.end();
  dropSchema = async () => {
    const cleanup = createPool(base, { max: 1 });
    await cleanup.query(`DROP SCHEMA IF EXISTS ${schema}, ${jobSchemaFor(schema)} CASCADE`);
    await cleanup.end();
  };
  dir = await mkdtemp(join(tmpdir(), 'airlock-e2e-passkey-'));
  await writeFile(join(dir, 'policy.yaml'), POLICY);
  cluster = await startCluster({
    replicas: 1,
    databaseUrl: withSearchPath(base, schema),
    apiRoles: 'api,web',
    env: { OFFLINE_MODEL_DELAY_MS: '20', DEMO_PASSWORD: PASSWORD, LOG_LEVEL: 'warn', POLICY_FILE: join(dir, 'policy.yaml') },
  });
  // The same nginx by name: a secure context where WebAuthn runs (no IP-address origin).
  url = cluster.url.replace('127.0.0.1', 'localhost');
});

test.afterAll(async () => {
  await cluster?.stop();
  await dropSchema?.();
  if (dir) await rm(dir, { recursive: true, force: true });
});

/** Chromium's virtual authenticator, as a platform passkey that verifies its user. */
async function virtualAuthenticator(page: Page): Promise<void> {
  const cdp = await page.context().newCDPSession(page);
  await cdp.send('WebAuthn.enable');
  await cdp.send('WebAuthn.addVirtualAuthenticator', {
    options: { protocol: 'ctap2', transport: 'internal', hasResidentKey: true, hasUserVerification: true, isUserVerified: true, automaticPresenceSimulation: true },
  });
}

test('registers a passkey on /settings, confirms a step-up deploy with it; the receipt carries its signature and verifies', async ({ browser }) => {
  test.setTimeout(90_000);
  const context = await browser.newContext({ baseURL: url });
  const page = await context.newPage();
  await virtualAuthenticator(page);
  await signIn(page, url, 'admin', PASSWORD);

  // Before any passkey: the step-up card's Confirm is refused with a way to Settings.
  await page.goto(`${url}/`);
  await connected(page);
  await send(page, 'Deploy checkout-api 7.7.1 to staging');
  const first = page.getByTestId('confirm-card').last();
  await expect(first).toHaveAttribute('data-status', 'pending', { timeout: 20_000 });
  await first.getByRole('button', { name: 'Confirm with passkey' }).click();
  await expect(page.getByRole('alert').filter({ hasText: 'passkey' })).toBeVisible();
  await expect(page.getByRole('link', { name: 'Open Settings' })).toHaveAttribute('href', '/settings');

  // Register one on /settings.
  const conversation = page.url();
  await page.goto(`${url}/settings`);
  await expect(page.getByTestId('no-passkeys')).toBeVisible();
  await page.getByRole('textbox', { name: 'Passkey name' }).fill('virtual');
  await page.getByRole('button', { name: 'Add a passkey' }).click();
  await expect(page.getByTestId('passkey')).toHaveCount(1);
  await expect(page.getByTestId('passkey')).toContainText('virtual');
  await shot(page, '49-settings-passkey');

  // Back to the conversation: its card is confirmed with the passkey, and the deploy runs.
  await page.goto(conversation);
  const card = page.getByTestId('confirm-card').last();
  await expect(card).toHaveAttribute('data-status', 'pending', { timeout: 20_000 });
  await card.getByRole('button', { name: 'Confirm with passkey' }).click();
  await expect(card).toHaveAttribute('data-status', 'confirmed', { timeout: 20_000 });
  await expect(page.locator('[data-testid=tool-card][data-tool=deploy_service]').last()).toHaveAttribute('data-status', 'done', { timeout: 20_000 });

  // The receipt: the approver's passkey signature over the action hash, verified.
  const { token, user } = await apiLogin(url, 'admin', PASSWORD);
  const api = async (path: string) => (await fetch(`${url}${path}`, { headers: { authorization: `Bearer ${token}` } })).json();
  const approved = (await api('/api/agent/v1/approvals?status=approved')).approvals;
  expect(approved).toHaveLength(1);
  expect(approved[0]).toMatchObject({ step_up: 'passkey', decisions: [{ user: 'admin', decision: 'approve', channel: 'inbox' }] });
  const { receipt } = await api(`/api/agent/v1/approvals/${approved[0].id}/receipt`);
  const check = await verifyReceipt(receipt, await api('/api/auth/jwks.json'), { tool: 'deploy_service', args: approved[0].tool_args, user: user.id });
  expect(check.ok).toBe(true);
  const passkey = check.ok ? check.claims.approvers[0].passkey : undefined;
  expect(passkey).toMatchObject({ credential_id: expect.any(String), public_key_jwk: { kty: 'EC', crv: 'P-256' }, signature: expect.any(String) });
  const clientData = JSON.parse(Buffer.from(passkey!.client_data_json, 'base64url').toString());
  expect(clientData).toMatchObject({ type: 'webauthn.get', origin: url });
  await context.close();
});

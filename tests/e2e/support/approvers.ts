/**
 * The product that the approval specs share (issues 26 and 27): its own schema and POLICY_FILE behind
 * the real nginx, admin2 and admin3 beside the demo users, and a signed-in page per person, each in
 * a browser context of its own (another person's browser).
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from '@playwright/test';
import { hashPassword } from '../../../server/auth/index.ts';
import type { Cluster } from '../../helpers/cluster.ts';
import { signIn, test, type DemoUser } from './fixtures.ts';
import { startSchemaCluster, type SchemaCluster } from './product.ts';

export const PASSWORD = 'demo-password-1';

export interface ApproversProduct {
  readonly product: SchemaCluster;
  readonly cluster: Cluster;
  personPage(browser: Browser, user: string, path?: string): Promise<Page>;
}

/** Starts the product before the spec's tests and stops it after them (call at the spec's top level). */
export function useApproversProduct(name: string, policy: string): ApproversProduct {
  let product: SchemaCluster | undefined;
  let dir: string | undefined;
  test.beforeAll(async () => {
    test.setTimeout(120_000);
    dir = await mkdtemp(join(tmpdir(), `airlock-e2e-${name}-`));
    await writeFile(join(dir, 'policy.yaml'), policy);
    product = await startSchemaCluster(name, {
      replicas: 1,
      apiRoles: 'api,web',
      env: { OFFLINE_MODEL_DELAY_MS: '20', DEMO_PASSWORD: PASSWORD, LOG_LEVEL: 'warn', POLICY_FILE: join(dir, 'policy.yaml') },
    });
    const hash = await hashPassword(PASSWORD);
    for (const u of ['admin2', 'admin3']) await product.query(`INSERT INTO users (username, password_hash, role, tenant) VALUES ($1, $2, 'admin', 'demo') ON CONFLICT DO NOTHING`, [u, hash]);
  });
  test.afterAll(async () => {
    await product?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });
  const started = () => {
    if (!product) throw new Error('the approvers product has not started');
    return product;
  };
  return {
    get product() { return started(); },
    get cluster() { return started().cluster; },
    async personPage(browser, user, path = '/') {
      const { url } = started().cluster;
      const context = await browser.newContext({ baseURL: url });
      const page = await context.newPage();
      await signIn(page, url, user as DemoUser, PASSWORD);
      await page.goto(`${url}${path}`);
      return page;
    },
  };
}

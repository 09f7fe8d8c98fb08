/**
 * A schema of its own per test file, migrated, so tests never see each other's rows.
 */
import { randomBytes } from 'node:crypto';
import { inject } from 'vitest';
import { createPool, runMigrations, type Pool } from '../../server/db/index.ts';
import { jobSchemaFor } from '../../server/v1/job-queue.ts';

export interface TestDatabase {
  /** Connection string whose search_path is the test schema. */
  url: string;
  schema: string;
  pool: Pool;
  drop(): Promise<void>;
}

export function withSearchPath(url: string, schema: string): string {
  const u = new URL(url);
  u.searchParams.set('options', `-c search_path=${schema}`);
  return u.toString();
}

export async function createTestDatabase(options: { migrate?: boolean } = {}): Promise<TestDatabase> {
  const baseUrl = inject('databaseUrl');
  const schema = `t_${randomBytes(6).toString('hex')}`;
  const admin = createPool(baseUrl, { max: 1 });
  await admin.query(`CREATE SCHEMA ${schema}`);
  await admin.end();
  const url = withSearchPath(baseUrl, schema);
  const pool = createPool(url);
  if (options.migrate !== false) await runMigrations(pool);
  return {
    url,
    schema,
    pool,
    async drop() {
      await pool.end();
      const cleanup = createPool(baseUrl, { max: 1 });
      await cleanup.query(`DROP SCHEMA IF EXISTS ${schema}, ${jobSchemaFor(schema)} CASCADE`);
      await cleanup.end();
    },
  };
}

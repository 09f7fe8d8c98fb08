/**
 * Shared bench plumbing: a database (DATABASE_URL, else an embedded PostgreSQL) with a fresh
 * migrated schema, and small statistics helpers.
 */
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createPool, runMigrations, startEmbeddedPostgres, type Pool } from '../server/db/index.ts';
import { jobSchemaFor } from '../server/v1/job-queue.ts';

export interface BenchDatabase {
  /** Connection string whose search_path is the bench schema. */
  url: string;
  pool: Pool;
  close(): Promise<void>;
}

export async function openBenchDatabase(): Promise<BenchDatabase> {
  let baseUrl = process.env.DATABASE_URL;
  let stopEmbedded = async () => {};
  if (!baseUrl) {
    const dir = await mkdtemp(join(tmpdir(), 'airlock-bench-'));
    await chmod(dir, 0o777); // as root the binaries run as an unprivileged user that must write here
    const db = await startEmbeddedPostgres(dir, 'bench');
    baseUrl = db.url;
    stopEmbedded = async () => (await db.stop(), await rm(dir, { recursive: true, force: true }));
  }
  const schema = `bench_${Date.now().toString(36)}`;
  const admin = createPool(baseUrl, { max: 1 });
  await admin.query(`CREATE SCHEMA ${schema}`);
  const url = new URL(baseUrl);
  url.searchParams.set('options', `-c search_path=${schema}`);
  const pool = createPool(url.toString(), { max: 20 });
  await runMigrations(pool);
  return {
    url: url.toString(),
    pool,
    async close() {
      await pool.end();
      await admin.query(`DROP SCHEMA IF EXISTS ${schema}, ${jobSchemaFor(schema)} CASCADE`);
      await admin.end();
      await stopEmbedded();
    },
  };
}

export function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

export function median(samples: number[]): number {
  return percentile([...samples].sort((a, b) => a - b), 50);
}

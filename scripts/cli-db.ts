/**
 * The database a command-line check or change works on: DATABASE_URL; else the embedded one under
 * DATA_DIR (default `.data`, as the server's): the running server's cluster when the folder's owner
 * is alive (never started or stopped here), otherwise started for the command (and migrated, for
 * a change) and stopped after it.
 * @module
 */
import { join, resolve } from 'node:path';
import { createPool, runMigrations, runningEmbeddedUrl, startEmbeddedPostgres, type Pool } from '../server/db/index.ts';

export async function openDatabase(options: { migrate: boolean }): Promise<{ pool: Pool; close(): Promise<void> }> {
  if (process.env.DATABASE_URL) {
    const pool = createPool(process.env.DATABASE_URL, { max: 2 });
    if (options.migrate) await runMigrations(pool);
    return { pool, close: () => pool.end() };
  }
  const dir = join(resolve(process.env.DATA_DIR || '.data'), 'postgres');
  const running = await runningEmbeddedUrl(dir);
  if (running) {
    const pool = createPool(running, { max: 2 });
    return { pool, close: () => pool.end() };
  }
  const embedded = await startEmbeddedPostgres(dir);
  const pool = createPool(embedded.url, { max: 2 });
  try {
    if (options.migrate) await runMigrations(pool);
  } catch (error) {
    await pool.end();
    await embedded.stop();
    throw error;
  }
  return {
    pool,
    async close() {
      await pool.end();
      await embedded.stop();
    },
  };
}

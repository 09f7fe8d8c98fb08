/**
 * The LangGraph checkpointer in PostgreSQL, in the schema the pool's search_path selects
 * (`public` in production, a per-file schema in tests).
 * @module
 */
import type { PostgresSaver } from '@langchain/langgraph-checkpoint-postgres';
import pg from 'pg';
import { fastByteaArrayTypes } from '../db/bytea-array.ts';
import { CONNECT_TIMEOUT_MS, withAdvisoryLock, type Pool } from '../db/index.ts';
import { OneStatementPostgresSaver } from './postgres-saver.ts';

/**
 * Opens a saver on its own small pool and runs its setup once: two concurrent `setup()` calls on
 * a fresh schema race (langgraph-notes §3), so it holds an advisory lock.
 */
export async function createCheckpointer(pool: Pool, databaseUrl: string): Promise<PostgresSaver> {
  const { rows } = await pool.query<{ schema: string }>('SELECT current_schema() AS schema');
  const schema = rows[0]?.schema ?? 'public';
  // Its checkpoint reads return nested bytea[] arrays: parsed by the fast parser (bytea-array.ts).
  const saverPool = new pg.Pool({ connectionString: databaseUrl, max: 5, connectionTimeoutMillis: CONNECT_TIMEOUT_MS, types: fastByteaArrayTypes });
  saverPool.on('error', () => {});
  const saver = new OneStatementPostgresSaver(saverPool, { schema });
  await withAdvisoryLock(pool, 'airlock:checkpointer-setup', () => saver.setup());
  return saver;
}

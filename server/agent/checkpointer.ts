/**
 * The LangGraph checkpointer in PostgreSQL, in the schema the pool's search_path selects
 * (`public` in production, a per-file schema in tests).
 * @module
 */
import type { PostgresSaver } from '@langchain/langgraph-checkpoint-postgres';
import { fastByteaArrayTypes } from '../db/bytea-array.ts';
import { createPool, withAdvisoryLock, type Pool } from '../db/index.ts';
import { OneStatementPostgresSaver } from './postgres-saver.ts';

/**
 * Opens a saver on its own small pool and runs its setup once: two concurrent `setup()` calls on
 * a fresh schema race (langgraph-notes §3), so it holds an advisory lock.
 */
export async function createCheckpointer(pool: Pool, databaseUrl: string): Promise<PostgresSaver> {
  const { rows } = await pool.query<{ schema: string }>('SELECT current_schema() AS schema');
  const schema = rows[0]?.schema ?? 'public';
  // Its checkpoint reads return nested bytea[] arrays: parsed by the fast parser (bytea-array.ts).
  // createPool: upstream's setup and deleteThread check clients out; a lost one must not end the process.
  const saverPool = createPool(databaseUrl, { max: 5, types: fastByteaArrayTypes });
  const saver = new OneStatementPostgresSaver(saverPool, { schema });
  await withAdvisoryLock(pool, 'airlock:checkpointer-setup', () => saver.setup());
  return saver;
}

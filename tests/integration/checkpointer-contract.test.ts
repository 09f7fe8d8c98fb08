/**
 * LangGraph's own checkpointer validation suite (@langchain/langgraph-checkpoint-validation), run
 * against upstream's PostgresSaver and against the gateway's OneStatementPostgresSaver (one
 * statement per put and putWrites) on real PostgreSQL, each instance in a schema of its own.
 */
import { validate } from '@langchain/langgraph-checkpoint-validation';
import { PostgresSaver } from '@langchain/langgraph-checkpoint-postgres';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { OneStatementPostgresSaver } from '../../server/agent/postgres-saver.ts';
import { fastByteaArrayTypes } from '../../server/db/bytea-array.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';

// The suite is written for vitest's globals, which this project leaves off.
Object.assign(globalThis, { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it });

const opened = new Map<PostgresSaver, { db: TestDatabase; pool: pg.Pool }>();

function initializer(name: string, make: (pool: pg.Pool, schema: string) => PostgresSaver) {
  return {
    checkpointerName: name,
    async createCheckpointer() {
      const db = await createTestDatabase({ migrate: false });
      const pool = new pg.Pool({ connectionString: db.url, max: 3, types: fastByteaArrayTypes });
      const saver = make(pool, db.schema);
      await saver.setup();
      opened.set(saver, { db, pool });
      return saver;
    },
    async destroyCheckpointer(saver: PostgresSaver) {
      const { db, pool } = opened.get(saver)!;
      opened.delete(saver);
      await pool.end();
      await db.drop();
    },
  };
}

validate(initializer('PostgresSaver (upstream)', (pool, schema) => new PostgresSaver(pool, undefined, { schema })));
validate(initializer('OneStatementPostgresSaver', (pool, schema) => new OneStatementPostgresSaver(pool, { schema })));

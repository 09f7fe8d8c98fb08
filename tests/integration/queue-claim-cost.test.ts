/**
 * Every turn's end asks whether a message waits in its conversation (TurnQueue.startNext ->
 * claimQueuedInput). Almost always nothing does: then it costs one read, not a transaction of
 * three round trips (issue 38); a waiting message is still claimed.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPool } from '../../server/db/index.ts';
import { claimQueuedInput, enqueueInput } from '../../server/db/queued-inputs.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';

let db: TestDatabase;

beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  await db?.drop();
});

/** The statements a new pool's clients send while `fn` runs (clients keep the query they connected with). */
async function statements(fn: (pool: pg.Pool) => Promise<unknown>): Promise<string[]> {
  const sent: string[] = [];
  const original = pg.Client.prototype.query;
  pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
    const config = args[0] as string | { text: string };
    sent.push(typeof config === 'string' ? config : config.text);
    return (original as (...a: unknown[]) => unknown).apply(this, args);
  } as typeof original;
  const pool = createPool(db.url, { max: 1 });
  try {
    await fn(pool);
  } finally {
    pg.Client.prototype.query = original;
    await pool.end();
  }
  return sent;
}

describe('claiming the next queued message', () => {
  it('is one read when nothing waits, and claims what waits', async () => {
    const user = (await db.pool.query(`INSERT INTO users (username, password_hash, role) VALUES ('queue-cost', 'x', 'viewer') RETURNING id`)).rows[0].id;
    const id = (await db.pool.query(`INSERT INTO conversations (id, user_id, title) VALUES (gen_random_uuid(), $1, 't') RETURNING id`, [user])).rows[0].id;
    const claim = (pool = db.pool) => claimQueuedInput(pool, { conversationId: id, owner: 'o', leaseTtlS: 30 });

    let claimed: unknown = 'not run';
    const sent = await statements(async (pool) => (claimed = await claim(pool)));
    expect(claimed).toBeNull();
    expect(sent).toHaveLength(1);

    const runId = '0b6f2c1e-8a6e-4f4e-9d1c-2a3b4c5d6e7f';
    await enqueueInput(db.pool, { runId, conversationId: id, userId: user, requestId: 'q1', requestHash: 'h', input: { text: 'next' }, max: 5 });
    const next = await claim();
    expect(next?.run.id).toBe(runId);
    expect(next?.queued.requestId).toBe('q1');
  });
});

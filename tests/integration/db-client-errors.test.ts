/**
 * Every connection of a pool dies at once (issue 30: what a restart of PostgreSQL or a cut proxy
 * does), with a transaction open, the ledger's LISTEN connection, and a bus replica's LISTEN and
 * publishing connections. The process (this test worker) must see no uncaught exception: before
 * the fix a checked-out client emitted 'error' with no listener, and the bus's publisher handed
 * its client back twice (pg-pool throws on that, inside the listener). The transaction fails as
 * "database unavailable", and no lost connection stays checked out: each would hold one of the
 * pool's few slots for good (the ledger's LISTEN connection was never handed back).
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPool, isDatabaseUnavailable, withTransaction, type Pool } from '../../server/db/index.ts';
import { PgLedger } from '../../server/engine/index.ts';
import { PgSessionBus } from '../../server/gradio/index.ts';
import { eventually } from '../helpers/bus-contract.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';

let db: TestDatabase;
let pool: Pool;
let appName: string;

beforeAll(async () => {
  db = await createTestDatabase();
  // A name of its own, so the test can end exactly this pool's connections.
  appName = `airlock-client-errors-${randomUUID().slice(0, 8)}`;
  const url = new URL(db.url);
  url.searchParams.set('application_name', appName);
  pool = createPool(url.toString());
});
afterAll(async () => {
  await pool?.end();
  await db?.drop();
});

/** Ends every connection of the pool under test, as a restart of the server would. */
async function terminateAll(): Promise<number> {
  const { rows } = await db.pool.query<{ n: number }>(
    'SELECT count(pg_terminate_backend(pid))::int AS n FROM pg_stat_activity WHERE application_name = $1',
    [appName],
  );
  return rows[0].n;
}

/** The server sessions the pool under test has now. */
async function backends(): Promise<number> {
  const { rows } = await db.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = $1', [appName]);
  return rows[0].n;
}

/** Sessions of the pool under test that listen: the ledger's (its last statement LISTEN) and each bus's (its registration). */
async function listening(): Promise<number> {
  const { rows } = await db.pool.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = $1
       AND (query LIKE 'LISTEN "airlock_events:%' OR query LIKE '%INTO gradio_bus_replicas (replica, backend_pid%')`,
    [appName],
  );
  return rows[0].n;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const owner = { owner: 'alice', sessionHash: 'client-session' };

describe('every connection of the pool lost at once', () => {
  it('the open transaction fails as unavailable, nothing is uncaught, and no lost client keeps a pool slot', async () => {
    const ledger = new PgLedger(pool);
    const unsubscribe = ledger.subscribe(randomUUID(), () => {});
    const here = await PgSessionBus.start({ pool, sweepMs: 60_000 });
    const there = await PgSessionBus.start({ pool, sweepMs: 60_000 });
    try {
      await here.addEvent('s', 'e', owner);
      here.publish('s', { eventId: 'e', frame: 'before', terminal: false });
      await here.flush(); // its publishing connection is open now
      await eventually(async () => expect(await listening()).toBe(3));

      for (let round = 1; round <= 3; round++) {
        const transaction = withTransaction(pool, async (tx) => {
          await tx.query('SELECT 1');
          expect(await terminateAll()).toBeGreaterThanOrEqual(4); // this one, 3 LISTEN, the publisher
          await sleep(300); // the FATAL and the close arrive while the client is checked out and idle
          await tx.query('SELECT 1');
        });
        const error = await transaction.then(() => null, (e: unknown) => e);
        expect(isDatabaseUnavailable(error), String(error)).toBe(true);
        // The ledger and both buses listen again, and the pool holds no client whose connection is gone.
        await eventually(async () => expect(await listening()).toBe(3), 10_000);
        await eventually(async () => expect(pool.totalCount).toBe(await backends()), 10_000);
      }

      // Both still work: a frame published now reaches the other replica.
      await here.addEvent('after', 'e2', owner);
      const got: string[] = [];
      await eventually(async () => expect(await there.attach('after', (m) => got.push(m.frame))).not.toBeNull(), 10_000);
      await eventually(async () => {
        here.publish('after', { eventId: 'e2', frame: `x${got.length}`, terminal: false });
        await here.flush();
        expect(got.length).toBeGreaterThan(0);
      }, 10_000);
      expect(await pool.query('SELECT 1 AS ok').then((r) => r.rows[0].ok)).toBe(1);
      await eventually(async () => expect(pool.totalCount).toBe(await backends()), 10_000);
    } finally {
      unsubscribe();
      await here.close();
      await there.close();
      await ledger.close();
    }
  }, 60_000);
});

/**
 * The PostgreSQL ledger: the shared contract, plus what only a database can show (events land in
 * the caller's transaction, two processes' connections see each other's commits).
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPool, withTransaction } from '../../server/db/index.ts';
import { PgLedger } from '../../server/engine/pg-ledger.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';
import { runLedgerContract } from '../helpers/ledger-contract.ts';

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(() => db.drop());

runLedgerContract('postgresql', async () => {
  const ledger = new PgLedger(db.pool);
  return { ledger, close: () => ledger.close() };
});

describe('PgLedger in a transaction', () => {
  it('1. events roll back with the state they describe, and the seq is reused (no gap)', async () => {
    const ledger = new PgLedger(db.pool);
    const conversation = randomUUID(), run = randomUUID();
    await expect(
      withTransaction(db.pool, async (tx) => {
        await ledger.append(conversation, [{ kind: 'assistant.message', payload: { run_id: run, text: 'lost' } }], { tx });
        throw new Error('the state write failed');
      }),
    ).rejects.toThrow('the state write failed');
    const [kept] = await ledger.append(conversation, [{ kind: 'assistant.message', payload: { run_id: run, text: 'kept' } }]);
    expect(kept.seq).toBe(1);
    await ledger.close();
  });

  it('2. a subscriber on another pool (another process) is woken by NOTIFY', async () => {
    const otherPool = createPool(db.url, { max: 2 });
    const reader = new PgLedger(otherPool);
    const writer = new PgLedger(db.pool);
    const conversation = randomUUID(), run = randomUUID();
    const seen: number[] = [];
    reader.subscribe(conversation, (seq) => seen.push(seq));
    await new Promise((r) => setTimeout(r, 200));
    await writer.append(conversation, [{ kind: 'assistant.message', payload: { run_id: run, text: 'hi' } }]);
    await expect.poll(() => seen, { timeout: 5000 }).toEqual([1]);
    await reader.close();
    await otherPool.end();
  });
});

/**
 * Migrations: applied in order, once, and safe when two processes start at the same moment.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPool, loadMigrations, runMigrations, type Pool } from '../../server/db/index.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';

let db: TestDatabase;
let other: Pool;

beforeAll(async () => {
  db = await createTestDatabase({ migrate: false });
  other = createPool(db.url);
});
afterAll(async () => {
  await other?.end();
  await db?.drop();
});

describe('runMigrations', () => {
  it('applies every migration once when two processes race, then nothing more', async () => {
    const all = await loadMigrations();
    expect(all.map((m) => m.version)).toEqual([...all.map((m) => m.version)].sort((a, b) => a - b));
    const [a, b] = await Promise.all([runMigrations(db.pool), runMigrations(other)]);
    expect([...a, ...b].sort()).toEqual(all.map((m) => m.name).sort()); // each applied by exactly one of them
    const { rows } = await db.pool.query('SELECT version, count(*)::int AS n FROM schema_migrations GROUP BY version ORDER BY version');
    expect(rows.map((r) => r.version)).toEqual(all.map((m) => m.version));
    expect(rows.every((r) => r.n === 1)).toBe(true);
    expect(await runMigrations(db.pool)).toEqual([]);
  });
});

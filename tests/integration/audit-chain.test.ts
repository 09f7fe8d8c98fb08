/**
 * The hash-chained audit (issue 28 item 1), on real PostgreSQL with the real CLI: rows written
 * before the chain stay unhashed and the chain starts at `genesis:<last id>`; a row changed,
 * removed or inserted with SQL is named by `./airlock audit verify` (exit 1); two writer processes
 * appending concurrently, each with a pool of its own, leave one valid chain per tenant.
 */
import { execFile, spawn } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { appendAudit, insertAudit, type AuditEntry } from '../../server/db/audit.ts';
import { loadMigrations, runMigrations } from '../../server/db/index.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';

let db: TestDatabase;
let alice: string;
let bob: string;

const entry = (userId: string | null, i: number, requesterId?: string): AuditEntry => ({
  serviceActor: null, userId, username: null, userRole: null, operation: 'tool.call', method: 'POST', path: '/api/tools/x',
  arguments: { i, text: 'déployer "x"', list: [3, 1.25, null] }, outcome: 'success', statusCode: 200, errorCode: null,
  toolCallId: null, conversationId: null, durationMs: 5, requesterId,
});

/** `./airlock audit verify …` against the test's schema: its stdout line and exit code. */
async function verify(...args: string[]): Promise<{ line: string; code: number }> {
  try {
    const { stdout } = await promisify(execFile)('./airlock', ['audit', 'verify', ...args], { env: { ...process.env, DATABASE_URL: db.url } });
    return { line: stdout.trim(), code: 0 };
  } catch (e) {
    const err = e as { stdout: string; code: number };
    return { line: err.stdout.trim(), code: err.code };
  }
}

const ids = async (tenant: string) =>
  (await db.pool.query<{ id: string }>('SELECT id::text FROM audit_log a WHERE tenant = $1 ORDER BY a.id', [tenant])).rows.map((r) => r.id);

/** Runs `fn` (a tampering) and puts the table back as it was afterwards. */
async function tampered(fn: () => Promise<void>): Promise<void> {
  const client = await db.pool.connect();
  try {
    await client.query('CREATE TEMP TABLE saved AS SELECT * FROM audit_log');
    await fn();
  } finally {
    await client.query('DELETE FROM audit_log; INSERT INTO audit_log SELECT * FROM saved; DROP TABLE saved');
    client.release();
  }
}

beforeAll(async () => {
  db = await createTestDatabase({ migrate: false });
  const all = await loadMigrations();
  await runMigrations(db.pool, all.filter((m) => m.version < 170));
  const { rows } = await db.pool.query<{ id: string }>(
    `INSERT INTO users (username, password_hash, role, tenant) VALUES ('alice', 'x', 'viewer', 'acme'), ('bob', 'x', 'admin', 'demo') RETURNING id`,
  );
  [alice, bob] = rows.map((r) => r.id);
  // Three rows written by the version before the chain.
  await db.pool.query(`INSERT INTO audit_log (operation, method, path, outcome, status_code) SELECT 'old', 'GET', '/old', 'success', 200 FROM generate_series(1, 3)`);
  await runMigrations(db.pool, all);
});
afterAll(() => db?.drop());

describe('the audit chain', () => {
  it('starts at the genesis, one chain per tenant, and verifies', async () => {
    for (let i = 0; i < 3; i++) {
      await insertAudit(db.pool, entry(alice, i));
      await insertAudit(db.pool, entry(bob, i));
    }
    await appendAudit(db.pool, [entry(null, 10, alice), entry(null, 11), entry(bob, 12)]);
    const { rows } = await db.pool.query<{ id: string; tenant: string | null; prev_hash: string | null; hash: string | null }>(
      'SELECT id::text, tenant, prev_hash, hash FROM audit_log a ORDER BY a.id',
    );
    expect(rows.slice(0, 3).map((r) => [r.tenant, r.hash])).toEqual([[null, null], [null, null], [null, null]]);
    const chained = rows.slice(3);
    for (const tenant of ['acme', 'demo', '_system']) {
      const chain = chained.filter((r) => r.tenant === tenant);
      expect(chain[0].prev_hash).toBe('genesis:3');
      for (let i = 1; i < chain.length; i++) expect(chain[i].prev_hash).toBe(chain[i - 1].hash);
    }
    expect(chained.filter((r) => r.tenant === 'acme')).toHaveLength(4); // the requester's tenant when no actor
    expect(await verify()).toEqual({ line: 'ok 9 rows', code: 0 });
    const [, second] = await ids('acme');
    expect(await verify('--from', second, '--to', String(Number(second) + 2))).toEqual({ line: 'ok 3 rows', code: 0 });
  });

  it('names a row changed by SQL', async () => {
    const [, target] = await ids('acme');
    await tampered(async () => {
      await db.pool.query(`UPDATE audit_log SET arguments = arguments || '{"i": 99}' WHERE id = $1`, [target]);
      expect(await verify()).toEqual({ line: `tampered: row ${target} (changed: its content does not match its hash)`, code: 1 });
    });
    await tampered(async () => {
      await db.pool.query(`UPDATE audit_log SET at = at + interval '1 ms' WHERE id = $1`, [target]);
      expect((await verify()).line).toBe(`tampered: row ${target} (changed: its content does not match its hash)`);
    });
    expect((await verify()).line).toBe('ok 9 rows');
  });

  it('names the row after one removed, and a removed last row', async () => {
    const [first, second, third, last] = await ids('acme');
    await tampered(async () => {
      await db.pool.query('DELETE FROM audit_log WHERE id = $1', [second]);
      expect(await verify()).toEqual({
        line: `tampered: row ${third} (prev_hash does not link to row ${first}: a row between them was removed, or one of them rewritten)`,
        code: 1,
      });
    });
    await tampered(async () => {
      await db.pool.query('DELETE FROM audit_log WHERE id = $1', [first]);
      expect((await verify()).line).toBe(`tampered: row ${second} (prev_hash is not the chain's genesis: a row before it was removed, or it was inserted)`);
    });
    await tampered(async () => {
      await db.pool.query('DELETE FROM audit_log WHERE id = $1', [last]);
      expect(await verify()).toEqual({ line: `tampered: row ${last} (removed: the chain's head names it, the last row left is ${third})`, code: 1 });
    });
  });

  it('names a row inserted by SQL, hashed or not', async () => {
    await tampered(async () => {
      const { rows } = await db.pool.query<{ id: string }>(
        `INSERT INTO audit_log (operation, method, path, outcome, status_code, tenant) VALUES ('forged', 'POST', '/x', 'success', 200, 'acme') RETURNING id::text`,
      );
      expect(await verify()).toEqual({ line: `tampered: row ${rows[0].id} (inserted: no hash, written after the chain began)`, code: 1 });
    });
    await tampered(async () => {
      // A copy of a row, re-pointed after the head, with a well-formed hash of its own: the head catches it.
      const [, , , last] = await ids('acme');
      const { rows } = await db.pool.query<{ id: string }>(
        `INSERT INTO audit_log (operation, method, path, outcome, status_code, tenant, at, arguments, prev_hash, hash)
         SELECT operation, method, path, outcome, status_code, tenant, at, arguments, hash, repeat('0', 64) FROM audit_log WHERE id = $1
         RETURNING id::text`,
        [last],
      );
      const { line } = await verify();
      expect(line).toBe(`tampered: row ${rows[0].id} (changed: its content does not match its hash)`);
    });
  });

  it('two writer processes appending at once leave one valid chain per tenant', async () => {
    const before = Number((await db.pool.query('SELECT count(*) FROM audit_log WHERE hash IS NOT NULL')).rows[0].count);
    const writer = () =>
      new Promise<void>((resolve, reject) => {
        const child = spawn(process.execPath, ['--import', 'tsx', 'tests/helpers/audit-writer-process.ts'], {
          env: { ...process.env, AUDIT_DATABASE_URL: db.url, AUDIT_ROWS: '60', AUDIT_PARALLEL: '6', AUDIT_USERS: `${alice},${bob},` },
          stdio: ['ignore', 'pipe', 'inherit'],
        });
        let out = '';
        child.stdout.on('data', (d) => (out += d));
        child.on('exit', (code) => (code === 0 && out.includes('done') ? resolve() : reject(new Error(`writer exited ${code}`))));
      });
    await Promise.all([writer(), writer()]);
    const after = Number((await db.pool.query('SELECT count(*) FROM audit_log WHERE hash IS NOT NULL')).rows[0].count);
    expect(after - before).toBe(2 * 90);
    expect(await verify()).toEqual({ line: `ok ${after} rows`, code: 0 });
    const forks = await db.pool.query('SELECT prev_hash FROM audit_log WHERE hash IS NOT NULL GROUP BY tenant, prev_hash HAVING count(*) > 1');
    expect(forks.rows).toEqual([]);
  });
});

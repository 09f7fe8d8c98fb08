/**
 * The PostgreSQL pool and the `Queryable` type every db module takes first.
 * @module
 */
import pg from 'pg';

/** A pool or a checked-out client: anything with `query`. */
export type Queryable = Pick<pg.Pool, 'query'> | pg.PoolClient;

export type Pool = pg.Pool;
export type PoolClient = pg.PoolClient;

/**
 * How long a new connection may take. Without a bound, a database host that stops answering
 * (rather than refusing) would hang every request forever; with it the request fails fast as
 * SERVICE_UNAVAILABLE ("timeout exceeded when trying to connect").
 */
export const CONNECT_TIMEOUT_MS = 5_000;

export function createPool(connectionString: string, options: { max?: number; connectTimeoutMs?: number } = {}): pg.Pool {
  const pool = new pg.Pool({
    connectionString,
    max: options.max ?? 10,
    connectionTimeoutMillis: options.connectTimeoutMs ?? CONNECT_TIMEOUT_MS,
  });
  // An idle client's error (server restart) must not crash the process; the next query reconnects.
  pool.on('error', () => {});
  return pool;
}

/** Runs `fn` in a transaction on one client; rolls back when it throws. */
export async function withTransaction<T>(pool: pg.Pool, fn: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    const result = await fn(client);
    await client.query('COMMIT');
    return result;
  } catch (error) {
    await client.query('ROLLBACK').catch(() => {});
    throw error;
  } finally {
    client.release();
  }
}

/** Runs `fn` in a read-only REPEATABLE READ transaction: every query sees one snapshot. */
export async function withSnapshot<T>(pool: pg.Pool, fn: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
    return await fn(client);
  } finally {
    await client.query('COMMIT').catch(() => {});
    client.release();
  }
}

/** Runs `fn` while holding a session advisory lock, so two processes never run it at once. */
export async function withAdvisoryLock<T>(pool: pg.Pool, key: string, fn: () => Promise<T>): Promise<T> {
  const client = await pool.connect();
  try {
    await client.query('SELECT pg_advisory_lock(hashtext($1))', [key]);
    try {
      return await fn();
    } finally {
      await client.query('SELECT pg_advisory_unlock(hashtext($1))', [key]);
    }
  } finally {
    client.release();
  }
}

/** PostgreSQL's unique_violation. */
export function isUniqueViolation(error: unknown): boolean {
  return typeof error === 'object' && error !== null && (error as { code?: string }).code === '23505';
}

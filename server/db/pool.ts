/**
 * The PostgreSQL pool and the `Queryable` type every db module takes first.
 *
 * No fault of PostgreSQL may end the process (issue 30): every client a pool hands out listens
 * for 'error' for its whole life (`guardClients`), and the helpers below hand a client that failed
 * back with its error, so the pool discards it instead of lending a broken or mid-transaction
 * session to the next caller.
 * @module
 */
import pg from 'pg';
import { startTiming } from '../timing/index.ts';

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

export interface PoolOptions {
  max?: number;
  connectTimeoutMs?: number;
  /** Type parsers (the checkpointer's fast bytea[] parser). */
  types?: pg.CustomTypesConfig;
}

export function createPool(connectionString: string, options: PoolOptions = {}): pg.Pool {
  const pool = new pg.Pool({
    connectionString,
    max: options.max ?? 10,
    connectionTimeoutMillis: options.connectTimeoutMs ?? CONNECT_TIMEOUT_MS,
    ...(options.types ? { types: options.types } : {}),
  });
  return guardClients(pool);
}

/**
 * pg-pool listens for a client's 'error' only while the client is idle (it takes its listener off
 * at checkout). A connection that drops while checked out (a transaction, a LISTEN, a held lock)
 * then emits 'error' with nobody listening, and node ends the process: "Unhandled 'error' event"
 * (EPIPE, or "Connection terminated unexpectedly"). So each client gets a listener of its own as
 * it connects ('connect' fires before the first checkout). It has nothing else to do: the work on
 * that client sees the failure itself (its query rejects, or its next one, "not queryable"), and
 * pg-pool discards a client that is not queryable when it is released.
 */
export function guardClients(pool: pg.Pool): pg.Pool {
  pool.on('connect', (client) => {
    client.on('error', ignore);
    pools.set(client, pool);
    meterQueries(client);
  });
  // An idle client's error (server restart) comes here; the next checkout opens a new connection.
  pool.on('error', ignore);
  return pool;
}

function ignore(): void {}

const pools = new WeakMap<pg.ClientBase, pg.Pool>();

/**
 * The client's queries add their time to the current request's `db` (server/timing), promise or
 * callback form (pool.query uses the callback); a submittable (a cursor) is left alone.
 */
function meterQueries(client: pg.PoolClient): void {
  const query = client.query;
  client.query = function (this: pg.PoolClient, ...args: unknown[]) {
    const stop = startTiming('db');
    if (!stop) return (query as (...a: unknown[]) => unknown).apply(this, args);
    const last = args.length - 1;
    if (typeof args[last] === 'function') {
      const callback = args[last] as (...r: unknown[]) => void;
      args[last] = (...r: unknown[]) => {
        stop();
        callback(...r);
      };
      return (query as (...a: unknown[]) => unknown).apply(this, args);
    }
    const result = (query as (...a: unknown[]) => unknown).apply(this, args);
    if (result && typeof (result as Promise<unknown>).then === 'function') (result as Promise<unknown>).then(stop, stop);
    return result;
  } as typeof client.query;
}

/** The pool a transaction's client came from (pools made by createPool or guardClients). */
export function poolOf(client: Queryable): pg.Pool | undefined {
  return pools.get(client as pg.ClientBase);
}

/**
 * A client's release that acts once; later calls do nothing. A lost connection can emit 'error'
 * twice (the socket's error, then its end) and its work fails too, so several paths may hand the
 * same client back; pg-pool throws on a second release, and thrown inside an event listener that
 * is an uncaught exception. `error` (or `true`) makes the pool discard the client.
 */
export function releaseOnce(client: pg.PoolClient): (error?: Error | boolean) => void {
  let released = false;
  return (error) => {
    if (released) return;
    released = true;
    client.release(error);
  };
}

/** Runs `fn` in a transaction on one client; rolls back when it throws. */
export async function withTransaction<T>(pool: pg.Pool, fn: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  let broken: Error | undefined;
  try {
    await client.query('BEGIN');
    const result = await fn(client);
    await client.query('COMMIT');
    return result;
  } catch (error) {
    // A ROLLBACK that fails leaves the session in an unknown state: it must not go back to the pool.
    await client.query('ROLLBACK').catch((e: Error) => void (broken = e));
    throw error;
  } finally {
    client.release(broken);
  }
}

/** Runs `fn` in a read-only REPEATABLE READ transaction: every query sees one snapshot. */
export async function withSnapshot<T>(pool: pg.Pool, fn: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  let broken: Error | undefined;
  try {
    await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
    return await fn(client);
  } finally {
    await client.query('COMMIT').catch((e: Error) => void (broken = e));
    client.release(broken);
  }
}

/**
 * Runs `fn` while holding a session advisory lock, so two processes never run it at once. A
 * connection lost meanwhile has released the lock with the session: the unlock then fails and
 * `fn`'s outcome stands (what it guards, the checkpointer's setup, is idempotent); the client is
 * discarded, never returned holding a lock.
 */
export async function withAdvisoryLock<T>(pool: pg.Pool, key: string, fn: () => Promise<T>): Promise<T> {
  const client = await pool.connect();
  try {
    await client.query('SELECT pg_advisory_lock(hashtext($1))', [key]);
  } catch (error) {
    client.release(error as Error);
    throw error;
  }
  let broken: Error | undefined;
  try {
    return await fn();
  } finally {
    await client.query('SELECT pg_advisory_unlock(hashtext($1))', [key]).catch((e: Error) => void (broken = e));
    client.release(broken);
  }
}

/** PostgreSQL's unique_violation. */
export function isUniqueViolation(error: unknown): boolean {
  return typeof error === 'object' && error !== null && (error as { code?: string }).code === '23505';
}

/**
 * The database shape auth needs: anything with `query` (a pg Pool or client). auth owns its tables
 * (users, signing_keys, revoked_tokens, login_attempts; migration 001) and keeps their SQL here in
 * auth/, so that it imports nothing of ours but config.
 * @module
 */
import type pg from 'pg';

export type AuthDb = Pick<pg.Pool, 'query'>;
export type AuthPool = pg.Pool;

/**
 * The idempotency_keys table: a side-effecting call's stored result, by (user, key).
 *
 * `claimIdempotencyKey` inserts a placeholder INSIDE the caller's transaction; the effect then
 * runs in that same transaction and `completeIdempotencyKey` stores its result before COMMIT. A
 * concurrent duplicate's insert waits on the unique index until the first commits (then finds the
 * stored result) or rolls back (then it claims the key itself): exactly one effect.
 * @module
 */
import type { Queryable } from './pool.ts';

export interface IdempotencyRecord {
  operation: string;
  requestHash: string;
  statusCode: number;
  response: unknown;
}

/** True when this transaction now owns the key; false when another call already completed it. */
export async function claimIdempotencyKey(
  q: Queryable,
  input: { userId: string; key: string; operation: string; requestHash: string },
): Promise<boolean> {
  const { rowCount } = await q.query(
    `INSERT INTO idempotency_keys (user_id, key, operation, request_hash, status_code, response)
     VALUES ($1, $2, $3, $4, 0, 'null'::jsonb) ON CONFLICT (user_id, key) DO NOTHING`,
    [input.userId, input.key, input.operation, input.requestHash],
  );
  return rowCount === 1;
}

/** Stores the result of the call that claimed the key. */
export async function completeIdempotencyKey(
  q: Queryable,
  input: { userId: string; key: string; statusCode: number; response: unknown },
): Promise<void> {
  await q.query('UPDATE idempotency_keys SET status_code = $3, response = $4::jsonb WHERE user_id = $1 AND key = $2', [
    input.userId,
    input.key,
    input.statusCode,
    JSON.stringify(input.response),
  ]);
}

export async function getIdempotencyRecord(q: Queryable, input: { userId: string; key: string }): Promise<IdempotencyRecord | null> {
  const { rows } = await q.query<{ operation: string; request_hash: string; status_code: number; response: unknown }>(
    'SELECT operation, request_hash, status_code, response FROM idempotency_keys WHERE user_id = $1 AND key = $2',
    [input.userId, input.key],
  );
  const row = rows[0];
  return row ? { operation: row.operation, requestHash: row.request_hash, statusCode: row.status_code, response: row.response } : null;
}

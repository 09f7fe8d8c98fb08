/**
 * The revoked-token deny list (logout): a jti stays listed until the token would have expired.
 * @module
 */
import type { AuthDb } from './db.ts';

/** Lists `jti` as revoked until `expiresAt` (idempotent); prunes rows past their expiry. */
export async function revokeToken(db: AuthDb, input: { jti: string; expiresAt: Date }): Promise<void> {
  await db.query(
    'INSERT INTO revoked_tokens (jti, expires_at) VALUES ($1, $2) ON CONFLICT (jti) DO NOTHING',
    [input.jti, input.expiresAt],
  );
  await db.query("DELETE FROM revoked_tokens WHERE expires_at < now() - interval '1 hour'");
}

/** Is this jti on the deny list? */
export async function isTokenRevoked(db: AuthDb, jti: string): Promise<boolean> {
  const { rowCount } = await db.query('SELECT 1 FROM revoked_tokens WHERE jti = $1', [jti]);
  return (rowCount ?? 0) > 0;
}

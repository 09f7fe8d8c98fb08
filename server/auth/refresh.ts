/**
 * Refresh tokens of browser sessions (issue 8). A token is `<id>.<secret>`; only the secret's
 * SHA-256 is stored. Each refresh spends its token and issues the next one of the same family
 * with the family's original expiry (the session does not grow by being used). Showing a spent
 * token again is a replay (a stolen copy, or the legitimate one after a thief used it): the whole
 * family is revoked, so neither side keeps the session. Browsers serialize their own refreshes
 * (the UI takes a Web Lock), so a legitimate client never replays.
 * @module
 */
import { createHash, randomBytes, randomUUID, timingSafeEqual } from 'node:crypto';
import type { AuthDb } from './db.ts';
import { AuthError } from './errors.ts';
import type { UserRole } from './rbac.ts';

export interface IssuedRefresh {
  token: string;
  expiresAt: Date;
  /** The session: every token rotated from one login shares it (access tokens carry it as `sid`). */
  familyId: string;
}

export interface RefreshedSession extends IssuedRefresh {
  user: { id: string; username: string; role: UserRole };
}

const hash = (secret: string) => createHash('sha256').update(secret).digest('hex');

/** Splits `<uuid>.<secret>`; null when it is not that shape. */
export function parseRefreshToken(token: string | undefined): { id: string; secret: string } | null {
  const match = /^([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\.([A-Za-z0-9_-]{43})$/.exec(token ?? '');
  return match ? { id: match[1]!, secret: match[2]! } : null;
}

function newToken(): { id: string; secret: string; token: string } {
  const id = randomUUID();
  const secret = randomBytes(32).toString('base64url');
  return { id, secret, token: `${id}.${secret}` };
}

/** Starts a session family at login. */
export async function issueRefreshToken(db: AuthDb, input: { userId: string; ttlS: number }): Promise<IssuedRefresh> {
  const t = newToken();
  const { rows } = await db.query<{ expires_at: Date }>(
    `INSERT INTO refresh_tokens (id, family_id, user_id, secret_hash, expires_at)
     VALUES ($1, $1, $2, $3, now() + make_interval(secs => $4)) RETURNING expires_at`,
    [t.id, input.userId, hash(t.secret), input.ttlS],
  );
  return { token: t.token, expiresAt: rows[0]!.expires_at, familyId: t.id };
}

interface Row {
  family_id: string;
  secret_hash: string;
  expires_at: Date;
  used_at: Date | null;
  revoked_at: Date | null;
}

/** The stored row when `token` is genuine (right secret), else null. */
async function genuine(db: AuthDb, token: string | undefined): Promise<Row | null> {
  const parsed = parseRefreshToken(token);
  if (!parsed) return null;
  const { rows } = await db.query<Row>('SELECT family_id, secret_hash, expires_at, used_at, revoked_at FROM refresh_tokens WHERE id = $1', [parsed.id]);
  const row = rows[0];
  if (!row) return null;
  const a = Buffer.from(row.secret_hash, 'hex');
  const b = Buffer.from(hash(parsed.secret), 'hex');
  return a.length === b.length && timingSafeEqual(a, b) ? row : null;
}

async function revokeFamily(db: AuthDb, familyId: string): Promise<void> {
  await db.query('UPDATE refresh_tokens SET revoked_at = now() WHERE family_id = $1 AND revoked_at IS NULL', [familyId]);
}

/**
 * Spends `token` and returns the next one with the user it belongs to. Throws TOKEN_INVALID
 * (unknown, forged, expired) or TOKEN_REVOKED (signed out, or a replay, which revokes the family).
 */
export async function rotateRefreshToken(db: AuthDb, token: string | undefined): Promise<RefreshedSession> {
  const row = await genuine(db, token);
  if (!row) throw new AuthError('TOKEN_INVALID', 'Unknown refresh token.');
  if (row.revoked_at) throw new AuthError('TOKEN_REVOKED', 'The session was signed out.');
  if (row.expires_at.getTime() <= Date.now()) throw new AuthError('TOKEN_INVALID', 'The session expired.');
  const next = newToken();
  // One statement: the spend and its successor commit together, and a concurrent second spend
  // finds used_at set and matches nothing.
  const { rows } = await db.query<{ id: string; username: string; role: UserRole; expires_at: Date }>(
    `WITH spent AS (
       UPDATE refresh_tokens SET used_at = now()
        WHERE id = $1 AND used_at IS NULL AND revoked_at IS NULL AND expires_at > now()
        RETURNING family_id, user_id, expires_at),
     next AS (
       INSERT INTO refresh_tokens (id, family_id, user_id, secret_hash, expires_at)
       SELECT $2, family_id, user_id, $3, expires_at FROM spent RETURNING user_id, expires_at)
     SELECT u.id, u.username, u.role, next.expires_at FROM next JOIN users u ON u.id = next.user_id`,
    [parseRefreshToken(token)!.id, next.id, hash(next.secret)],
  );
  const user = rows[0];
  if (!user) {
    await revokeFamily(db, row.family_id);
    throw new AuthError('TOKEN_REVOKED', 'The refresh token was already used; the session is revoked.');
  }
  return {
    token: next.token,
    expiresAt: user.expires_at,
    familyId: row.family_id,
    user: { id: user.id, username: user.username, role: user.role },
  };
}

/** Sign-out: revokes the session `token` belongs to (no-op for an unknown token). */
export async function revokeRefreshToken(db: AuthDb, token: string | undefined): Promise<void> {
  const row = await genuine(db, token);
  if (row) await revokeFamily(db, row.family_id);
}

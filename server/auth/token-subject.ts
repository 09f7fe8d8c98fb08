/**
 * Who a user token speaks for, right now: the user's current row (deleted users have none) and
 * whether the token was logged out, read together in one round trip on every use. Nothing is
 * cached, so a demotion, a deletion or a logout takes effect on the next request on every
 * replica, at the cost of the one indexed query the revocation check already made. A disabled
 * person (issue 39) is read in the same query: no second round trip per request.
 * @module
 */
import type { AuthDb } from './db.ts';
import type { UserRole } from './rbac.ts';

export interface TokenSubject {
  /** The user's current username and role, or null when no such user exists (any more). */
  user: { username: string; role: UserRole; disabled: boolean } | null;
  revoked: boolean;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The current user row behind `sub` and the revocation of `jti` (or of its browser session `sid`). */
export async function loadTokenSubject(db: AuthDb, input: { userId: string; jti: string; sessionId?: string }): Promise<TokenSubject> {
  // A `sub` that is not a uuid names no user; checked here so PostgreSQL never sees it as one.
  const userId = UUID.test(input.userId) ? input.userId : null;
  const sessionId = input.sessionId && UUID.test(input.sessionId) ? input.sessionId : null;
  const { rows } = await db.query<{ username: string | null; role: UserRole | null; disabled: boolean | null; revoked: boolean }>(
    `SELECT u.username, u.role, u.disabled_at IS NOT NULL AS disabled,
            EXISTS (SELECT 1 FROM revoked_tokens WHERE jti = $2)
            OR ($3::uuid IS NOT NULL AND EXISTS (
                 SELECT 1 FROM refresh_tokens WHERE family_id = $3::uuid AND revoked_at IS NOT NULL)) AS revoked
       FROM (SELECT 1) AS one LEFT JOIN users u ON u.id = $1::uuid`,
    [userId, input.jti, sessionId],
  );
  const row = rows[0];
  return {
    user: row?.username && row.role ? { username: row.username, role: row.role, disabled: row.disabled === true } : null,
    revoked: row?.revoked === true,
  };
}

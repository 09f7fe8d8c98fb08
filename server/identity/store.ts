/**
 * The SQL of user management (issue 39): the users an admin sees, the row a change locks, the
 * enabled admins that must remain, and what a disable revokes. The rules live in accounts.ts.
 * @module
 */
import type { Queryable } from '../db/index.ts';
import type { UserRole } from '../auth/index.ts';

export interface ManagedUser {
  id: string;
  username: string;
  display_name: string | null;
  email: string | null;
  role: UserRole;
  role_from_claims: boolean;
  tenant: string;
  source: 'local' | 'oidc' | 'proxy';
  issuer: string | null;
  subject: string | null;
  last_sign_in_at: Date | null;
  disabled_at: Date | null;
}

const COLUMNS = `id::text, username, display_name, email, role, role_from_claims, tenant, source, issuer, subject, last_sign_in_at, disabled_at`;

export async function listManagedUsers(db: Queryable): Promise<ManagedUser[]> {
  return (await db.query<ManagedUser>(`SELECT ${COLUMNS} FROM users ORDER BY username`)).rows;
}

export async function countUsers(db: Queryable): Promise<number> {
  return Number((await db.query<{ n: string }>('SELECT count(*) AS n FROM users')).rows[0].n);
}

/** The user named by id (a uuid) or username, locked for the change; null when none. */
export async function lockUser(db: Queryable, ref: { id?: string; username?: string }): Promise<ManagedUser | null> {
  const { rows } = ref.id
    ? await db.query<ManagedUser>(`SELECT ${COLUMNS} FROM users WHERE id::text = $1 FOR UPDATE`, [ref.id.toLowerCase()])
    : await db.query<ManagedUser>(`SELECT ${COLUMNS} FROM users WHERE username = $1 FOR UPDATE`, [ref.username?.trim().toLowerCase()]);
  return rows[0] ?? null;
}

/**
 * Enabled admins other than `userId`, all locked: two admins demoting each other at once queue
 * here, so the second sees the first's change and the last admin stays.
 */
export async function otherEnabledAdmins(db: Queryable, userId: string): Promise<number> {
  const { rows } = await db.query<{ id: string }>(
    `SELECT id::text FROM users WHERE role = 'admin' AND disabled_at IS NULL AND id::text <> $1 ORDER BY id FOR UPDATE`,
    [userId],
  );
  return rows.length;
}

export async function insertLocalUser(db: Queryable, u: { username: string; role: UserRole; passwordHash: string; tenant?: string }): Promise<ManagedUser | null> {
  const { rows } = await db.query<ManagedUser>(
    `INSERT INTO users (username, role, password_hash, tenant) VALUES ($1, $2, $3, COALESCE($4, 'demo'))
     ON CONFLICT (username) DO NOTHING RETURNING ${COLUMNS}`,
    [u.username, u.role, u.passwordHash, u.tenant ?? null],
  );
  return rows[0] ?? null;
}

export async function updateUser(db: Queryable, id: string, set: { role?: UserRole; disabled?: boolean; passwordHash?: string }): Promise<ManagedUser> {
  const { rows } = await db.query<ManagedUser>(
    `UPDATE users SET role = COALESCE($2, role),
            disabled_at = CASE WHEN $3::boolean IS NULL THEN disabled_at WHEN $3 THEN COALESCE(disabled_at, now()) ELSE NULL END,
            password_hash = COALESCE($4, password_hash)
      WHERE id::text = $1 RETURNING ${COLUMNS}`,
    [id, set.role ?? null, set.disabled ?? null, set.passwordHash ?? null],
  );
  return rows[0];
}

/**
 * What a disabled person holds, ended in the disable's own transaction: browser sessions (their
 * refresh families), standing grants they made or that are scoped to them, and decision links
 * not yet used (expired now: the link page then says it expired).
 */
export async function revokeHoldings(db: Queryable, userId: string): Promise<{ sessions: number; grants: number; links: number }> {
  const sessions = await db.query('UPDATE refresh_tokens SET revoked_at = now() WHERE user_id::text = $1 AND revoked_at IS NULL', [userId]);
  const grants = await db.query(
    'UPDATE approval_grants SET revoked_at = now() WHERE (created_by::text = $1 OR scope_user::text = $1) AND revoked_at IS NULL',
    [userId],
  );
  const links = await db.query('UPDATE approval_links SET expires_at = now() WHERE user_id = $1 AND used_at IS NULL AND expires_at > now()', [userId]);
  return { sessions: sessions.rowCount ?? 0, grants: grants.rowCount ?? 0, links: links.rowCount ?? 0 };
}

/**
 * The users table (auth owns it): lookups and creation.
 * @module
 */
import type { AuthDb } from './db.ts';
import type { UserRole } from './rbac.ts';

export type UserSource = 'local' | 'oidc' | 'proxy';

export interface User {
  id: string;
  username: string;
  role: UserRole;
  createdAt: Date;
  /** Where the person signs in: a password here, the OpenID provider, or an authenticating proxy. */
  source: UserSource;
  /** Set while an admin has switched the person off. */
  disabledAt: Date | null;
}

interface UserRow {
  id: string;
  username: string;
  role: UserRole;
  password_hash: string | null;
  created_at: Date;
  source: UserSource;
  disabled_at: Date | null;
}

function toUser(row: UserRow): User {
  return { id: row.id, username: row.username, role: row.role, createdAt: row.created_at, source: row.source, disabledAt: row.disabled_at };
}

/**
 * The user and its password hash (null for SSO and proxy users), or null. Usernames are
 * case-insensitive (stored lower case).
 */
export async function findUserWithHash(db: AuthDb, username: string): Promise<(User & { passwordHash: string | null }) | null> {
  const { rows } = await db.query<UserRow>('SELECT * FROM users WHERE username = $1', [username.trim().toLowerCase()]);
  return rows[0] ? { ...toUser(rows[0]), passwordHash: rows[0].password_hash } : null;
}

export async function getUserById(db: AuthDb, id: string): Promise<User | null> {
  if (!/^[0-9a-f-]{36}$/i.test(id)) return null;
  const { rows } = await db.query<UserRow>('SELECT * FROM users WHERE id = $1', [id]);
  return rows[0] ? toUser(rows[0]) : null;
}

/** Creates a user unless the username exists; returns the new user, or null when it existed. */
export async function createUserIfAbsent(
  db: AuthDb,
  input: { username: string; passwordHash: string; role: UserRole },
): Promise<User | null> {
  const { rows } = await db.query<UserRow>(
    `INSERT INTO users (username, password_hash, role) VALUES ($1, $2, $3)
     ON CONFLICT (username) DO NOTHING RETURNING *`,
    [input.username.toLowerCase(), input.passwordHash, input.role],
  );
  return rows[0] ? toUser(rows[0]) : null;
}

export async function setPasswordHash(db: AuthDb, input: { userId: string; passwordHash: string }): Promise<void> {
  await db.query('UPDATE users SET password_hash = $2 WHERE id = $1', [input.userId, input.passwordHash]);
}

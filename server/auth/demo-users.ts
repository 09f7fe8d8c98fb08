/**
 * Demo users viewer / operator / admin. Their password is DEMO_PASSWORD, or one generated at the
 * first start and printed once (only its hash is stored). Idempotent and race-safe: creation runs
 * under an advisory lock, and only the process that created the users prints the password. Only
 * local rows are touched: a demo name held by an SSO or proxy user is skipped with a warning.
 * @module
 */
import { randomBytes } from 'node:crypto';
import type { Config } from '../config.ts';
import type { AuthPool } from './db.ts';
import { hashPassword, verifyPassword } from './password.ts';
import type { UserRole } from './rbac.ts';
import { createUserIfAbsent, findUserWithHash, setPasswordHash } from './users.ts';

export const DEMO_USERS: readonly { username: string; role: UserRole }[] = [
  { username: 'viewer', role: 'viewer' },
  { username: 'operator', role: 'operator' },
  { username: 'admin', role: 'admin' },
];

export interface DemoUsersResult {
  /** Usernames created by this call. */
  created: string[];
  /** The generated password when this call generated one (print it once), else undefined. */
  generatedPassword?: string;
  /** One line per demo name held by a single sign-on or proxy user: that demo user is skipped. */
  skipped: string[];
}

/**
 * Ensures the demo users exist. With `config.demoPassword` set, their password is kept equal to it
 * (an existing user whose hash does not match is updated); without it, a password is generated
 * when the users are first created and returned for printing.
 */
export async function ensureDemoUsers(pool: AuthPool, config: Pick<Config, 'demoPassword'>): Promise<DemoUsersResult> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    await client.query("SELECT pg_advisory_xact_lock(hashtext('airlock:demo-users'))");
    const generated = config.demoPassword ? undefined : randomBytes(12).toString('base64url');
    const password = config.demoPassword ?? generated!;
    const created: string[] = [];
    const skipped: string[] = [];
    for (const demo of DEMO_USERS) {
      const existing = await findUserWithHash(client, demo.username);
      // A demo name a person of the provider already holds is theirs: setting a password on it
      // would hand their account to anyone who knows DEMO_PASSWORD (issue 39, decision 5).
      if (existing && existing.source !== 'local') {
        skipped.push(`Demo user ${demo.username} skipped: that name belongs to a ${existing.source} user`);
        continue;
      }
      if (existing) {
        if (config.demoPassword && !(existing.passwordHash && (await verifyPassword(config.demoPassword, existing.passwordHash)))) {
          await setPasswordHash(client, { userId: existing.id, passwordHash: await hashPassword(config.demoPassword) });
        }
        continue;
      }
      const user = await createUserIfAbsent(client, { ...demo, passwordHash: await hashPassword(password) });
      if (user) created.push(user.username);
    }
    await client.query('COMMIT');
    return { created, skipped, ...(generated && created.length > 0 ? { generatedPassword: generated } : {}) };
  } catch (error) {
    await client.query('ROLLBACK').catch(() => {});
    throw error;
  } finally {
    client.release();
  }
}
